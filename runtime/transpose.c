/* transpose.c - running matrix transposes on either backend, in batch or
 * staged mode (see transpose.h). */
#include "transpose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gpu_deflate.h"
#include "gpu_inflate.h"
#include "io/par.h"
#include "ptx/transpose_tiles.h"

#define TP_CPU_BLOCK 32 /* square cache block of the CPU loops, in elements */
#define TP_MAX_GRID (1u << 30)

typedef struct {
    void *hout;      /* transposed chunk on the host (pinned with CUDA) */
    size_t bytes;
    gpu *g;          /* CUDA: the slot's device and its kernel */
    tp_kernel kernel;
    CUdeviceptr din, dout;
    gpu_queue q;
    gzd_slot z;      /* device inflate of compressed chunks */
    const pl_gz_chunk *gz;   /* its members, when compressed */
    gzc_slot c;      /* device deflate of the result (tp_engine_compress) */
    uint64_t out_at; /* output stream position of the chunk's result */
    gz_span span;    /* the collected result, compressed */
    int made;        /* tp_slot_open ran: its buffers are made */
} tp_slot;

struct tp_engine {
    backend *be;
    size_t elem;
    uint64_t rows, cols;
    size_t matrix_bytes;     /* rows * cols * elem (fits: checked at open) */
    size_t chunk;            /* pipeline chunk size */
    int staged;
    int nslots;
    int compressed;          /* chunks come as blocked gzip members */
    int deflate;             /* results compressed on the device (tp_engine_compress) */
    uint64_t out_offset;     /* output stream position of the next chunk's result */
    tp_slot *slots;          /* batch mode */
    /* Staged mode: the whole matrix, on the backend's first device. */
    tp_kernel kernel;        /* CUDA */
    CUdeviceptr din, dout;   /* CUDA */
    gzd_slot stage_z;        /* staged mode: device inflate of compressed chunks */
    const void *stage_host;  /* staged mode: the current chunk's buffer */
    const pl_gz_chunk *stage_gz; /* its members (inflated into stage_z), or NULL */
    void *hout[2];           /* CUDA: pinned pieces going out */
    gpu_queue q[2];
    gzc_slot stage_c[2];     /* CUDA: device deflate of the pieces (tp_engine_compress) */
    char *cpu_out;           /* CPU: the transposed matrix */
    char err[2048];
};

/* Copies the elements of a block of type T: out[c][r] = in[r][c]. */
#define TP_CPU_LOOP(T)                                                                    \
    do {                                                                                  \
        const T *src = in;                                                                \
        T *dst = out;                                                                     \
        for (uint64_t rb = r0; rb < r1; rb += TP_CPU_BLOCK)                               \
            for (uint64_t cb = c0; cb < c1; cb += TP_CPU_BLOCK) {                         \
                uint64_t re = rb + TP_CPU_BLOCK < r1 ? rb + TP_CPU_BLOCK : r1;            \
                uint64_t ce = cb + TP_CPU_BLOCK < c1 ? cb + TP_CPU_BLOCK : c1;            \
                for (uint64_t c = cb; c < ce; c++)                                        \
                    for (uint64_t r = rb; r < re; r++)                                    \
                        dst[c * rows + r] = src[r * cols + c];                            \
            }                                                                             \
    } while (0)

typedef struct {
    uint64_t lo, hi;
} tp_u128_elem;

/* Transposes one block of the matrix on the calling thread. */
void tp_cpu_block(const void *in, void *out, uint64_t rows, uint64_t cols, size_t elem, uint64_t r0,
                  uint64_t r1, uint64_t c0, uint64_t c1)
{
    switch (elem) {
    case 1: TP_CPU_LOOP(uint8_t); break;
    case 2: TP_CPU_LOOP(uint16_t); break;
    case 4: TP_CPU_LOOP(uint32_t); break;
    case 8: TP_CPU_LOOP(uint64_t); break;
    default: TP_CPU_LOOP(tp_u128_elem); break;
    }
}

typedef struct {
    const char *in;
    char *out;
    const tp_engine *e;
    uint64_t u0, u1; /* rows of the batch (matrix * rows + row) */
    uint64_t c0, c1; /* columns (staged mode: of one row range) */
} tp_cpu_job;

/* Thread body: the rows [u0, u1) counted across the matrices of a chunk. */
static void *tp_cpu_worker(void *arg)
{
    tp_cpu_job *j = arg;
    const tp_engine *e = j->e;
    for (uint64_t u = j->u0; u < j->u1;) {
        uint64_t b = u / e->rows, r = u - b * e->rows;
        uint64_t rend = e->rows < r + (j->u1 - u) ? e->rows : r + (j->u1 - u);
        tp_cpu_block(j->in + b * e->matrix_bytes, j->out + b * e->matrix_bytes, e->rows, e->cols,
                     e->elem, r, rend, j->c0, j->c1);
        u += rend - r;
    }
    return NULL;
}

/* Transposes batch rows [u0, u1), columns [c0, c1), over the backend's
 * threads. */
static void tp_cpu_rows(const tp_engine *e, const void *in, void *out, uint64_t u0, uint64_t u1,
                        uint64_t c0, uint64_t c1)
{
    size_t nt = (size_t)e->be->threads;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    if (nt > u1 - u0)
        nt = (size_t)(u1 - u0);
    if (nt == 0)
        return;
    tp_cpu_job jobs[PAR_MAX];
    for (size_t i = 0; i < nt; i++)
        jobs[i] = (tp_cpu_job){in, out, e, u0 + (u1 - u0) * i / nt, u0 + (u1 - u0) * (i + 1) / nt,
                               c0, c1};
    par_run(tp_cpu_worker, jobs, sizeof jobs[0], nt);
}

/* Picks the kernel and its tile for the matrix shape and loads it: vector
 * tiles when rows and cols are multiples of 16 / elem, else the odd-shape
 * (4- and 8-byte elements) or any-shape tiles. */
int tp_kernel_open(tp_kernel *k, gpu *g, size_t elem, uint64_t rows, uint64_t cols)
{
    uint64_t kv = 16 / elem;
    k->rows = rows;
    k->cols = cols;
    if (rows % kv == 0 && cols % kv == 0) {
        snprintf(k->name, sizeof k->name, "tpk_vec_e%zu", elem);
        k->threads = TP_VEC_NT(elem);
        k->tile_rows = TP_VEC_TR(elem);
        k->tile_cols = TP_VEC_TC(elem);
    } else if (elem == 4 || elem == 8) {
        snprintf(k->name, sizeof k->name, "tpk_odd_e%zu", elem);
        k->threads = TP_ODD_NT;
        k->tile_rows = TP_ODD_TR(elem);
        k->tile_cols = TP_ODD_TC;
    } else {
        snprintf(k->name, sizeof k->name, "tpk_any_e%zu", elem);
        k->threads = TP_ANY_NT;
        k->tile_rows = k->tile_cols = TP_ANY_TS;
    }
    gpu_bind(g);
    return gpu_function(g, "transpose", k->name, &k->f);
}

/* Queues the transpose of nmat matrices, in grids of at most TP_MAX_GRID tiles. */
int tp_kernel_launch(const tp_kernel *k, gpu *g, CUdeviceptr in, CUdeviceptr out, uint64_t nmat,
                     CUstream s)
{
    uint64_t tiles = nmat * ((k->rows + k->tile_rows - 1) / k->tile_rows) *
                     ((k->cols + k->tile_cols - 1) / k->tile_cols);
    for (uint64_t t0 = 0; t0 < tiles; t0 += TP_MAX_GRID) {
        unsigned grid = (unsigned)(tiles - t0 < TP_MAX_GRID ? tiles - t0 : TP_MAX_GRID);
        unsigned long long rows = k->rows, cols = k->cols, tile0 = t0;
        void *params[] = {&in, &out, &rows, &cols, &tile0};
        int rc = gpu_launch(g, k->f, k->name, grid, k->threads, s, params);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Queues kernel k over nmat matrices din -> dout on stream s of device g. */
static int tp_gpu_launch(tp_engine *e, gpu *g, const tp_kernel *k, CUdeviceptr din,
                         CUdeviceptr dout, uint64_t nmat, CUstream s)
{
    int rc = tp_kernel_launch(k, g, din, dout, nmat, s);
    if (rc < 0)
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
    return rc;
}

/* Records a failed driver call on device g as the engine's error. */
static int tp_gpu_fail(tp_engine *e, gpu *g, int rc, const char *what)
{
    if (!e->err[0]) {
        rc = gpu_fail(g, rc, what);
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
    }
    return rc;
}

/* Zeroes device bytes on stream s (ahead of everything queued there later):
 * the slack the odd-shape kernel may read past the data. */
static int tp_clear(tp_engine *e, CUdeviceptr p, size_t n, CUstream s)
{
    CUresult r = cu.MemsetD8Async(p, 0, n, s);
    if (r != CUDA_SUCCESS) {
        snprintf(e->err, sizeof e->err, "clearing device memory failed: %s", cu_result_text(r));
        return GPU_ERR_DRIVER;
    }
    return 0;
}

/* Allocates one batch slot's buffers (the inflate's too for compressed
 * batches, the deflate's once it is on). */
static int tp_slot_open(tp_engine *e, tp_slot *s)
{
    backend *be = e->be;
    s->made = 1;
    if (be->kind == BACKEND_CUDA) {
        int rc;
        if ((rc = tp_kernel_open(&s->kernel, s->g, e->elem, e->rows, e->cols)) < 0 ||
            (e->compressed && (rc = gzd_reserve(&s->z, s->g, e->chunk)) < 0) ||
            (rc = gpu_mem_alloc(s->g, &s->din, e->chunk + TP_READ_SLACK, "a chunk of matrices (--chunk)")) < 0 ||
            (rc = gpu_mem_alloc(s->g, &s->dout, e->chunk, "a chunk of transposed matrices")) < 0 ||
            (rc = gpu_queue_open(s->g, &s->q)) < 0) {
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(s->g));
            return rc;
        }
        if ((rc = tp_clear(e, s->din, e->chunk + TP_READ_SLACK, s->q.stream)) < 0)
            return rc;
    }
    /* with CUDA, room for the result compressed too (tp_engine_compress) */
    if (!(s->hout = backend_host_alloc(be, be->kind == BACKEND_CUDA ? gzc_host_bytes(e->chunk)
                                                                   : e->chunk))) {
        snprintf(e->err, sizeof e->err, "%s", be->err);
        return GPU_ERR_OUT_OF_MEMORY;
    }
    return e->deflate ? gzc_open_late(&s->c, s->g, e->chunk, s->hout, e->err, sizeof e->err) : 0;
}

/* Frees one batch slot. */
static void tp_slot_close(tp_engine *e, tp_slot *s)
{
    backend *be = e->be;
    if (be->kind == BACKEND_CUDA && s->g) {
        gpu_bind(s->g);
        gpu_queue_close(&s->q);
        gzd_close(&s->z);
        gzc_close(&s->c);
        gpu_mem_free(s->g, s->din);
        gpu_mem_free(s->g, s->dout);
    }
    backend_host_free(be, s->hout);
}

/* Allocates the staged mode's whole-matrix buffers. */
static int tp_stage_open(tp_engine *e)
{
    backend *be = e->be;
    if (be->kind != BACKEND_CUDA) {
        if (!(e->cpu_out = malloc(e->matrix_bytes))) {
            snprintf(e->err, sizeof e->err,
                     "out of memory: a %zu-byte matrix is transposed whole in host memory",
                     e->matrix_bytes);
            return GPU_ERR_OUT_OF_MEMORY;
        }
        return 0;
    }
    int rc;
    const char *what = "a matrix (staged whole on the device, twice: input and transpose)";
    if ((rc = gpu_mem_alloc(be->gpu, &e->din, e->matrix_bytes + TP_READ_SLACK, what)) < 0 ||
        (rc = gpu_mem_alloc(be->gpu, &e->dout, e->matrix_bytes, what)) < 0) {
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(be->gpu));
        return rc;
    }
    for (int i = 0; i < 2; i++) {
        if ((rc = gpu_queue_open(be->gpu, &e->q[i])) < 0) {
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(be->gpu));
            return rc;
        }
        if (!(e->hout[i] = backend_host_alloc(be, gzc_host_bytes(e->chunk)))) {
            snprintf(e->err, sizeof e->err, "%s", be->err);
            return GPU_ERR_OUT_OF_MEMORY;
        }
    }
    return tp_clear(e, e->din + e->matrix_bytes, TP_READ_SLACK, e->q[0].stream);
}

/* Prepares the engine: mode, chunk size, kernel and buffers. */
int tp_engine_open(tp_engine **out, backend *be, int nslots, size_t chunk_bytes, size_t elem,
                   uint64_t rows, uint64_t cols, int compressed)
{
    *out = NULL;
    tp_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GPU_ERR_OUT_OF_MEMORY;
    e->be = be;
    e->elem = elem;
    e->rows = rows;
    e->cols = cols;
    e->nslots = nslots;
    e->compressed = compressed;
    e->matrix_bytes = (size_t)(rows * cols * elem);
    chunk_bytes -= chunk_bytes % elem;
    if (chunk_bytes < elem)
        chunk_bytes = elem;
    e->staged = e->matrix_bytes > chunk_bytes;
    e->chunk = e->staged ? chunk_bytes : chunk_bytes - chunk_bytes % e->matrix_bytes;
    int rc = 0;
    if (e->staged && be->kind == BACKEND_CUDA &&
        (rc = tp_kernel_open(&e->kernel, be->gpu, elem, rows, cols)) < 0)
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(be->gpu));
    if (rc == 0 && e->staged)
        rc = tp_stage_open(e);
    if (rc == 0 && !e->staged) {
        if (!(e->slots = calloc((size_t)nslots, sizeof *e->slots)))
            rc = GPU_ERR_OUT_OF_MEMORY;
        for (int i = 0; rc == 0 && i < nslots; i++)
            e->slots[i].g = backend_slot_gpu(be, i);
        if (rc == 0) /* the others when their first chunk comes (tp_batch_submit) */
            rc = tp_slot_open(e, &e->slots[0]);
    }
    if (rc < 0) {
        snprintf(be->err, sizeof be->err, "%s", e->err[0] ? e->err : "out of memory");
        tp_engine_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* Frees everything; accepts NULL. */
void tp_engine_close(tp_engine *e)
{
    if (!e)
        return;
    for (int i = 0; e->slots && i < e->nslots; i++)
        tp_slot_close(e, &e->slots[i]);
    free(e->slots);
    if (e->be->kind == BACKEND_CUDA) {
        gpu_bind(e->be->gpu);
        for (int i = 0; i < 2; i++) {
            gpu_queue_close(&e->q[i]);
            gzc_close(&e->stage_c[i]);
            backend_host_free(e->be, e->hout[i]);
        }
        gzd_close(&e->stage_z);
        gpu_mem_free(e->be->gpu, e->din);
        gpu_mem_free(e->be->gpu, e->dout);
    }
    free(e->cpu_out);
    free(e);
}

/* Staged or batch mode. */
int tp_engine_staged(const tp_engine *e)
{
    return e->staged;
}

/* The chunk size to read. */
size_t tp_engine_chunk(const tp_engine *e)
{
    return e->chunk;
}

/* Queues copy-in, the kernel and copy-out of a chunk on its slot's stream. */
static int tp_gpu_chunk(tp_engine *e, tp_slot *s, const void *host, uint64_t nmat)
{
    int rc = gpu_bind(s->g);
    if (rc < 0)
        return rc;
    CUdeviceptr in = s->din;
    if (s->gz) {
        if ((rc = gzd_stage(&s->z, s->g, s->q.stream, host, s->gz, e->chunk, NULL, &in)) < 0)
            return rc;
    } else {
        CU_TRY(cu.MemcpyHtoDAsync(s->din, host, s->bytes, s->q.stream));
    }
    rc = tp_gpu_launch(e, s->g, &s->kernel, in, s->dout, nmat, s->q.stream);
    if (rc < 0)
        return rc;
    if (gzc_is_open(&s->c)) {
        rc = gzc_queue(&s->c, s->q.stream, s->dout, s->out_at, s->bytes);
        if (rc < 0)
            return rc;
    } else {
        CU_TRY(cu.MemcpyDtoHAsync(s->hout, s->dout, s->bytes, s->q.stream));
    }
    CU_TRY(gpu_queue_mark(&s->q));
    return 0;
}

/* Starts one chunk of whole matrices. */
int tp_batch_submit(tp_engine *e, int slot, const void *host, const pl_gz_chunk *gz,
                    size_t bytes)
{
    tp_slot *s = &e->slots[slot];
    /* a slot's buffers are made when its first chunk comes: the first
     * chunks start while the later slots' host memory is pinned */
    int rc = s->made ? 0 : tp_slot_open(e, s);
    if (rc < 0)
        return rc;
    s->bytes = bytes;
    s->gz = gz;
    /* every chunk moves the stream on, whichever backend transposes it */
    s->out_at = e->out_offset;
    e->out_offset += bytes;
    if (bytes == 0)
        return 0;
    if (bytes > e->chunk || bytes % e->matrix_bytes) {
        snprintf(e->err, sizeof e->err, "a chunk of %zu bytes is not whole %zu-byte matrices", bytes,
                 e->matrix_bytes);
        return GPU_ERR_DRIVER;
    }
    uint64_t nmat = bytes / e->matrix_bytes;
    if (e->be->kind != BACKEND_CUDA) {
        tp_cpu_rows(e, host, s->hout, 0, nmat * e->rows, 0, e->cols);
        return 0;
    }
    e->err[0] = 0;
    rc = tp_gpu_chunk(e, s, host, nmat);
    return rc < 0 ? tp_gpu_fail(e, s->g, rc, "queueing a transpose chunk") : 0;
}

/* Waits for a slot's transposed matrices. */
int tp_batch_collect(tp_engine *e, int slot, const void **out, size_t *bytes)
{
    tp_slot *s = &e->slots[slot];
    if (s->bytes && e->be->kind == BACKEND_CUDA) {
        CUresult r = gpu_queue_wait(&s->q);
        if (r != CUDA_SUCCESS) {
            snprintf(e->err, sizeof e->err, "kernel %s failed: %s", s->kernel.name, cu_result_text(r));
            return GPU_ERR_LAUNCH;
        }
        if (s->gz && gzd_check(&s->z, s->gz, e->err, sizeof e->err) < 0)
            return IO_ERR_CORRUPT;
        int rc = gzc_is_open(&s->c) ? gzc_collect(&s->c, &s->span, e->err, sizeof e->err) : 0;
        if (rc < 0)
            return rc;
    }
    *out = s->hout;
    *bytes = s->bytes;
    return 0;
}

/* The i-th buffer results go out through (a batch slot's, or one of the
 * staged mode's two pieces'): its deflate stage, device and pinned buffer. */
static gzc_slot *tp_out_buffer(void *ctx, int i, gpu **g, void **host)
{
    tp_engine *e = ctx;
    *g = e->staged ? e->be->gpu : e->slots[i].g;
    *host = e->staged ? e->hout[i] : e->slots[i].hout;
    return e->staged ? &e->stage_c[i] : &e->slots[i].c;
}

/* Turns on device deflate of the results where it applies (see transpose.h). */
int tp_engine_compress(tp_engine *e, int level, uint64_t offset)
{
    if (e->be->kind != BACKEND_CUDA || !gzc_device_level(level))
        return 0;
    int rc = gzc_open_all(e->staged ? 2 : e->nslots, tp_out_buffer, e, e->chunk, e->err,
                          sizeof e->err);
    if (rc == 1) {
        e->deflate = 1;
        e->out_offset = offset;
    }
    return rc;
}

/* The compressed result of a collected batch slot, when it has one. */
int tp_batch_span(const tp_engine *e, int slot, const gz_span **span)
{
    const tp_slot *s = &e->slots[slot];
    *span = &s->span;
    return s->bytes && gzc_is_open(&s->c);
}

/* Staged mode on the CPU: transposes the elements [e0, e1) of the matrix
 * (row-major numbering) into place: the partial first and last rows here,
 * the whole rows between on every thread. */
static void tp_stage_cpu(tp_engine *e, const char *host, uint64_t e0, uint64_t e1)
{
    const char *base = host - e0 * e->elem; /* as if host held the whole matrix */
    uint64_t r = e0 / e->cols, c = e0 % e->cols;
    if (c) {
        uint64_t cend = e1 - r * e->cols < e->cols ? e1 - r * e->cols : e->cols;
        tp_cpu_block(base, e->cpu_out, e->rows, e->cols, e->elem, r, r + 1, c, cend);
        r++;
    }
    uint64_t rfull = e1 / e->cols;
    if (rfull > r)
        tp_cpu_rows(e, base, e->cpu_out, r, rfull, 0, e->cols);
    if (rfull >= r && e1 % e->cols)
        tp_cpu_block(base, e->cpu_out, e->rows, e->cols, e->elem, rfull, rfull + 1, 0, e1 % e->cols);
}

/* Adds a piece of the current matrix. */
int tp_stage_chunk(tp_engine *e, const void *host, const pl_gz_chunk *gz)
{
    e->stage_host = host;
    e->stage_gz = gz;
    if (!gz)
        return 0;
    e->err[0] = 0;
    gpu_bind(e->be->gpu);
    CUstream st = e->q[0].stream;
    CUdeviceptr data;
    int rc = gzd_stage(&e->stage_z, e->be->gpu, st, host, gz, e->chunk, NULL, &data);
    CUresult r = rc < 0 ? CUDA_SUCCESS : cu.StreamSynchronize(st);
    if (rc < 0 || r != CUDA_SUCCESS) {
        snprintf(e->err, sizeof e->err, "inflating a chunk on the device failed: %s",
                 rc <= GPU_ERR_NO_DRIVER ? gpu_error_text(e->be->gpu)
                 : rc < 0             ? cu_last_failure()
                                      : cu_result_text(r));
        return GPU_ERR_DRIVER;
    }
    return gzd_check(&e->stage_z, gz, e->err, sizeof e->err) < 0 ? IO_ERR_CORRUPT : 0;
}

/* Staged mode: one piece of the current chunk into the matrix. */
int tp_stage_put(tp_engine *e, size_t from, uint64_t offset, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (offset + bytes > e->matrix_bytes || offset % e->elem || bytes % e->elem) {
        snprintf(e->err, sizeof e->err, "piece [%llu, +%zu) outside the %zu-byte matrix",
                 (unsigned long long)offset, bytes, e->matrix_bytes);
        return GPU_ERR_DRIVER;
    }
    const char *host = (const char *)e->stage_host + from;
    if (e->be->kind != BACKEND_CUDA) {
        tp_stage_cpu(e, host, offset / e->elem, (offset + bytes) / e->elem);
        return 0;
    }
    e->err[0] = 0;
    gpu_bind(e->be->gpu);
    CUstream st = e->q[0].stream;
    CUresult r = e->stage_gz ? cu.MemcpyDtoDAsync(e->din + offset,
                                                  e->stage_z.data + from,
                                                  bytes, st)
                             : cu.MemcpyHtoDAsync(e->din + offset, host, bytes, st);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(st);
    if (r != CUDA_SUCCESS) {
        snprintf(e->err, sizeof e->err, "copying a matrix piece to the device failed: %s",
                 cu_result_text(r));
        return GPU_ERR_DRIVER;
    }
    return 0;
}

/* Transposes the staged matrix on the device and streams it out through two
 * pinned buffers: piece k+1 is copied back (or compressed into its buffer,
 * tp_engine_compress) while piece k is written. */
static int tp_stage_emit_gpu(tp_engine *e, int (*write)(void *, const void *, size_t),
                             int (*write_span)(void *, const gz_span *), void *ctx)
{
    e->err[0] = 0;
    gpu_bind(e->be->gpu);
    int rc = tp_gpu_launch(e, e->be->gpu, &e->kernel, e->din, e->dout, 1, e->q[0].stream);
    if (rc < 0)
        return rc;
    CUresult r = cu.StreamSynchronize(e->q[0].stream);
    if (r != CUDA_SUCCESS) {
        snprintf(e->err, sizeof e->err, "kernel %s failed: %s", e->kernel.name, cu_result_text(r));
        return GPU_ERR_LAUNCH;
    }
    size_t n = e->matrix_bytes, piece = e->chunk;
    size_t npieces = (n + piece - 1) / piece;
    for (size_t k = 0; k <= npieces; k++) {
        if (k < npieces) { /* queue piece k: compressed on the device, or copied back */
            size_t off = k * piece, len = n - off < piece ? n - off : piece;
            gpu_queue *q = &e->q[k & 1];
            if (e->deflate) {
                if ((rc = gzc_queue(&e->stage_c[k & 1], q->stream, e->dout + off, e->out_offset,
                                    len)) < 0) {
                    snprintf(e->err, sizeof e->err, "%s", gpu_error_text(e->be->gpu));
                    if (k > 0)
                        gpu_queue_wait(&e->q[(k - 1) & 1]);
                    return rc;
                }
                e->out_offset += len;
            } else {
                r = cu.MemcpyDtoHAsync(e->hout[k & 1], e->dout + off, len, q->stream);
            }
            if (r == CUDA_SUCCESS)
                r = gpu_queue_mark(q);
        }
        if (r == CUDA_SUCCESS && k > 0) /* write piece k - 1 */
            r = gpu_queue_wait(&e->q[(k - 1) & 1]);
        if (r != CUDA_SUCCESS) {
            snprintf(e->err, sizeof e->err, "copying the transposed matrix from the device failed: %s",
                     cu_result_text(r));
            gpu_queue_wait(&e->q[k & 1]);
            return GPU_ERR_DRIVER;
        }
        if (k > 0) {
            size_t off = (k - 1) * piece, len = n - off < piece ? n - off : piece;
            gz_span span;
            if (e->deflate) {
                rc = gzc_collect(&e->stage_c[(k - 1) & 1], &span, e->err, sizeof e->err);
                if (rc == 0)
                    rc = write_span(ctx, &span);
            } else {
                rc = write(ctx, e->hout[(k - 1) & 1], len);
            }
            if (rc != 0) {
                gpu_queue_wait(&e->q[k & 1]);
                return rc;
            }
        }
    }
    return 0;
}

/* Streams the transposed matrix out in pieces. */
int tp_stage_emit(tp_engine *e, int (*write)(void *ctx, const void *buf, size_t n),
                  int (*write_span)(void *ctx, const gz_span *span), void *ctx)
{
    if (e->be->kind == BACKEND_CUDA)
        return tp_stage_emit_gpu(e, write, write_span, ctx);
    for (size_t off = 0; off < e->matrix_bytes; off += e->chunk) {
        size_t len = e->matrix_bytes - off < e->chunk ? e->matrix_bytes - off : e->chunk;
        int rc = write(ctx, e->cpu_out + off, len);
        if (rc)
            return rc;
    }
    return 0;
}

/* The last error's text. */
const char *tp_engine_error(const tp_engine *e)
{
    return e->err;
}
