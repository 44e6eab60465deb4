/* quadratic.c - running the quadratic solver over chunks on either backend. */
#include "quadratic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gpu_deflate.h"
#include "gpu_inflate.h"
#include "io/par.h"
#include "ptx/half_math.h"
#include "ptx/quadratic_math.h"


typedef struct {
    void *hout;       /* roots on the host (pinned with CUDA) */
    size_t rows;
    gpu *g;           /* CUDA: the slot's device and its kernel there */
    CUfunction kernel;
    CUdeviceptr din, dout;
    gpu_queue q;
    gzd_slot z;       /* device inflate of compressed chunks */
    const pl_gz_chunk *gz; /* its members, when compressed */
    gzc_slot c;       /* device deflate of the roots (qd_engine_compress) */
    uint64_t out_at;  /* output stream position of the chunk's roots */
    gz_span span;     /* the collected roots, compressed */
    int made;         /* qd_slot_open ran: its buffers are made */
} qd_slot;

struct qd_engine {
    backend *be;
    dt_type dtype;
    int nslots;
    size_t max_rows;
    int compressed;      /* chunks come as blocked gzip members */
    void *const *results; /* the caller's roots buffers, or NULL */
    qd_layout in, out;
    qd_strides st;
    const char *kernel_name;
    int deflate;         /* roots compressed on the device (qd_engine_compress) */
    uint64_t out_offset; /* output stream position of the next chunk's roots */
    qd_slot *slots;
    char err[2048];
};

/* Strides of each layout pair; planes are pitch values apart. */
qd_strides qd_strides_for(qd_layout in, qd_layout out, size_t pitch)
{
    qd_strides st;
    st.in_row = in == QD_PLANES ? 1 : 3;
    st.in_plane = in == QD_PLANES ? pitch : 1;
    st.out_row = out == QD_PLANES ? 1 : 4;
    st.out_root = out == QD_PLANES ? pitch : 2;
    st.out_im = out == QD_PLANES ? 2 * pitch : 1;
    return st;
}

/* Coefficient types of the solver. */
int qd_coef_type(dt_type coef)
{
    return dt_is_float(coef);
}

/* Roots of float16 and bfloat16 equations are float32. */
dt_type qd_root_type(dt_type coef)
{
    return coef == DT_F16 || coef == DT_BF16 ? DT_F32 : coef;
}

/* Module name per coefficient type. */
const char *qd_module(dt_type coef)
{
    switch (coef) {
    case DT_F16: return "quadratic_f16";
    case DT_BF16: return "quadratic_bf16";
    case DT_F32: return "quadratic_f32";
    default: return "quadratic_f64";
    }
}

/* Solves rows [0, rows) of in into out on the calling thread. */
void qd_cpu_solve(const void *in, void *out, size_t rows, dt_type dtype, const qd_strides *st)
{
    size_t ir = st->in_row, ip = st->in_plane, orow = st->out_row, ort = st->out_root,
           oim = st->out_im;
    if (dtype == DT_F16 || dtype == DT_BF16) {
        const uint16_t *c = in;
        float *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow) {
            float a, b, cc;
            if (dtype == DT_F16)
                a = hf_f16_to_f32(c[0]), b = hf_f16_to_f32(c[ip]), cc = hf_f16_to_f32(c[2 * ip]);
            else
                a = hf_bf16_to_f32(c[0]), b = hf_bf16_to_f32(c[ip]), cc = hf_bf16_to_f32(c[2 * ip]);
            qd_solve_f32(a, b, cc, &r[0], &r[oim], &r[ort], &r[ort + oim]);
        }
    } else if (dtype == DT_F32) {
        const float *c = in;
        float *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow)
            qd_solve_f32(c[0], c[ip], c[2 * ip], &r[0], &r[oim], &r[ort], &r[ort + oim]);
    } else {
        const double *c = in;
        double *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow)
            qd_solve_f64(c[0], c[ip], c[2 * ip], &r[0], &r[oim], &r[ort], &r[ort + oim]);
    }
}

typedef struct {
    const char *in;
    char *out;
    size_t rows;
    dt_type dtype;
    const qd_strides *st;
} qd_cpu_job;

/* Thread body: one contiguous range of rows. */
static void *qd_cpu_worker(void *arg)
{
    qd_cpu_job *j = arg;
    qd_cpu_solve(j->in, j->out, j->rows, j->dtype, j->st);
    return NULL;
}

/* Bytes of a slot's roots buffer (see quadratic.h). */
size_t qd_result_bytes(const backend *be, size_t max_rows, dt_type coef)
{
    size_t bytes = (max_rows ? max_rows : 1) * 4 * dt_size(qd_root_type(coef));
    return be->kind == BACKEND_CUDA ? gzc_host_bytes(bytes) : bytes;
}

/* Frees one slot. */
static void qd_slot_close(qd_engine *e, qd_slot *s)
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
    if (!e->results)
        backend_host_free(be, s->hout);
}

/* The device buffer of a chunk of plain coefficients. */
static int qd_coef_buffer(qd_engine *e, qd_slot *s)
{
    return gpu_mem_alloc(s->g, &s->din, e->max_rows * 3 * dt_size(e->dtype),
                         "a coefficient chunk (--chunk)");
}

/* Allocates one slot: device buffers and stream with CUDA (the inflate's
 * for compressed chunks, else the coefficients'; the deflate's once it is
 * on), host roots always. */
static int qd_slot_open(qd_engine *e, qd_slot *s)
{
    backend *be = e->be;
    size_t sz = dt_size(e->dtype), root_sz = dt_size(qd_root_type(e->dtype));
    int compressed = e->compressed;
    s->made = 1;
    if (be->kind == BACKEND_CUDA) {
        gpu *g = s->g;
        int rc;
        if ((rc = gpu_function(g, qd_module(e->dtype), e->kernel_name, &s->kernel)) < 0 ||
            (rc = compressed ? gzd_reserve(&s->z, g, e->max_rows * 3 * sz) : qd_coef_buffer(e, s)) < 0 ||
            (rc = gpu_mem_alloc(g, &s->dout, e->max_rows * 4 * root_sz, "a roots chunk")) < 0 ||
            (rc = gpu_queue_open(g, &s->q)) < 0) {
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
            return rc;
        }
    }
    size_t out_bytes = e->max_rows * 4 * root_sz;
    size_t hbytes = qd_result_bytes(be, e->max_rows, e->dtype);
    if (e->results) /* the caller's, pinned now */
        s->hout = backend_host_pin(be, e->results[s - e->slots], hbytes) == 0
                      ? e->results[s - e->slots]
                      : NULL;
    else
        s->hout = backend_host_alloc(be, hbytes);
    if (!s->hout) {
        snprintf(e->err, sizeof e->err, "%s", be->err);
        return GPU_ERR_OUT_OF_MEMORY;
    }
    return e->deflate ? gzc_open_late(&s->c, s->g, out_bytes, s->hout, e->err, sizeof e->err) : 0;
}

/* Prepares the slots: the first one now, with CUDA its kernel loaded. */
int qd_engine_open(qd_engine **out, backend *be, int nslots, size_t max_rows, dt_type dtype,
                   qd_layout in, qd_layout out_layout, int compressed, void *const *results)
{
    *out = NULL;
    qd_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GPU_ERR_OUT_OF_MEMORY;
    e->be = be;
    e->dtype = dtype;
    e->nslots = nslots;
    e->max_rows = max_rows ? max_rows : 1;
    e->compressed = compressed;
    e->results = results;
    e->in = in;
    e->out = out_layout;
    e->st = qd_strides_for(in, out_layout, e->max_rows);
    e->kernel_name = in == QD_ROWS && out_layout == QD_ROWS ? "qdk_rows" : "qdk_strided";
    e->slots = calloc((size_t)nslots, sizeof *e->slots);
    int rc = e->slots ? 0 : GPU_ERR_OUT_OF_MEMORY;
    for (int i = 0; rc == 0 && i < nslots; i++)
        e->slots[i].g = backend_slot_gpu(be, i);
    if (rc == 0)
        rc = qd_slot_open(e, &e->slots[0]);
    if (rc < 0) {
        snprintf(be->err, sizeof be->err, "%s", e->err[0] ? e->err : cu_last_failure());
        qd_engine_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* Frees every slot; accepts NULL. */
void qd_engine_close(qd_engine *e)
{
    if (!e)
        return;
    for (int i = 0; e->slots && i < e->nslots; i++)
        qd_slot_close(e, &e->slots[i]);
    free(e->slots);
    free(e);
}

/* Queues the copies of `count` blocks of `bytes` each, `pitch` bytes apart
 * on both sides, on the slot's stream; to_device picks the direction. */
static int qd_copy_blocks(qd_slot *s, int to_device, CUdeviceptr dev, const void *host, int count,
                          size_t bytes, size_t pitch)
{
    for (int k = 0; k < count; k++) {
        CUdeviceptr d = dev + k * pitch;
        char *h = (char *)host + k * pitch;
        if (to_device)
            CU_TRY(cu.MemcpyHtoDAsync(d, h, bytes, s->q.stream));
        else
            CU_TRY(cu.MemcpyDtoHAsync(h, d, bytes, s->q.stream));
    }
    return 0;
}

/* Queues copy-in, the kernel and copy-out of one chunk on the slot's stream:
 * one copy of the rows, or one per plane. */
static int qd_gpu_chunk(qd_engine *e, qd_slot *s, const void *host)
{
    gpu *g = s->g;
    size_t sz = dt_size(e->dtype), pitch = e->max_rows * sz;
    size_t root_sz = dt_size(qd_root_type(e->dtype)), root_pitch = e->max_rows * root_sz;
    int planes_in = e->in == QD_PLANES, planes_out = e->out == QD_PLANES;
    int rc = gpu_bind(g);
    if (rc < 0)
        return rc;
    if (!s->gz && !s->din && (rc = qd_coef_buffer(e, s)) < 0) {
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
        return rc;
    }
    CUdeviceptr in = s->din;
    if (s->gz)
        rc = gzd_stage(&s->z, g, s->q.stream, host, s->gz, e->max_rows * 3 * sz, s->q.copied,
                       &in);
    else if ((rc = qd_copy_blocks(s, 1, s->din, host, planes_in ? 3 : 1,
                                  s->rows * sz * (planes_in ? 1 : 3), pitch)) == 0)
        CU_TRY(gpu_queue_mark_copied(&s->q));
    if (rc < 0) {
        if (rc <= GPU_ERR_NO_DRIVER)
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
        return rc;
    }
    unsigned long long n = s->rows, in_row = e->st.in_row, in_plane = e->st.in_plane,
                       out_row = e->st.out_row, out_root = e->st.out_root, out_im = e->st.out_im;
    int rows_kernel = e->in == QD_ROWS && e->out == QD_ROWS;
    size_t per_block = rows_kernel ? QD_TILE_ROWS : QD_TILE;
    size_t blocks = (s->rows + per_block - 1) / per_block;
    unsigned grid = (unsigned)(blocks < 0x7fffffffu ? blocks : 0x7fffffffu);
    void *rows_params[] = {&in, &n, &s->dout};
    void *strided_params[] = {&in,      &n,       &in_row,   &in_plane,
                              &s->dout, &out_row, &out_root, &out_im};
    rc = gpu_launch(g, s->kernel, e->kernel_name, grid, QD_TILE, s->q.stream,
                    rows_kernel ? rows_params : strided_params);
    if (rc < 0) {
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
        return rc;
    }
    if (gzc_is_open(&s->c)) {
        rc = gzc_queue(&s->c, s->q.stream, s->dout, s->out_at, s->rows * 4 * root_sz);
    } else {
        rc = qd_copy_blocks(s, 0, s->dout, s->hout, planes_out ? 4 : 1,
                            s->rows * root_sz * (planes_out ? 1 : 4), root_pitch);
    }
    if (rc < 0)
        return rc;
    CU_TRY(gpu_queue_mark(&s->q));
    return 0;
}

/* Starts one chunk. */
int qd_engine_submit(qd_engine *e, int slot, const void *host, const pl_gz_chunk *gz,
                     size_t rows)
{
    qd_slot *s = &e->slots[slot];
    /* a slot's buffers are made when its first chunk comes: the first
     * chunks start while the later slots' host memory is pinned */
    int rc = s->made ? 0 : qd_slot_open(e, s);
    if (rc < 0)
        return rc;
    s->rows = rows;
    s->gz = gz;
    /* every chunk moves the stream on, whichever backend solves it */
    s->out_at = e->out_offset;
    e->out_offset += rows * 4 * dt_size(qd_root_type(e->dtype));
    if (rows == 0)
        return 0;
    if (rows > e->max_rows) {
        snprintf(e->err, sizeof e->err, "chunk of %zu rows exceeds the engine's buffers", rows);
        return GPU_ERR_DRIVER;
    }
    if (e->be->kind != BACKEND_CUDA) {
        size_t sz = dt_size(e->dtype), root_sz = dt_size(qd_root_type(e->dtype));
        size_t nt = (size_t)e->be->threads;
        if (nt > PAR_MAX)
            nt = PAR_MAX;
        if (nt > rows)
            nt = rows;
        qd_cpu_job jobs[PAR_MAX];
        for (size_t i = 0; i < nt; i++) {
            size_t r0 = rows * i / nt, r1 = rows * (i + 1) / nt;
            jobs[i] = (qd_cpu_job){(const char *)host + r0 * e->st.in_row * sz,
                                   (char *)s->hout + r0 * e->st.out_row * root_sz, r1 - r0,
                                   e->dtype, &e->st};
        }
        par_run(qd_cpu_worker, jobs, sizeof jobs[0], nt);
        return 0;
    }
    e->err[0] = 0;
    rc = qd_gpu_chunk(e, s, host);
    if (rc < 0 && !e->err[0]) {
        rc = gpu_fail(s->g, rc, "queueing a quadratic chunk");
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(s->g));
    }
    return rc;
}

/* Waits until a CUDA slot's chunk is copied from its host buffer. */
int qd_engine_copied(qd_engine *e, int slot, char *err, size_t errlen)
{
    qd_slot *s = &e->slots[slot];
    if (e->be->kind != BACKEND_CUDA || s->rows == 0)
        return 0;
    return gpu_queue_wait_copied(&s->q, err, errlen);
}

/* Waits for a slot's roots. */
int qd_engine_collect(qd_engine *e, int slot, const void **roots, size_t *rows)
{
    qd_slot *s = &e->slots[slot];
    if (s->rows && e->be->kind == BACKEND_CUDA) {
        CUresult r = gpu_queue_wait(&s->q);
        if (r != CUDA_SUCCESS) {
            snprintf(e->err, sizeof e->err, "kernel %s failed: %s", e->kernel_name,
                     cu_result_text(r));
            return GPU_ERR_LAUNCH;
        }
        if (s->gz && gzd_check(&s->z, s->gz, e->err, sizeof e->err) < 0)
            return IO_ERR_CORRUPT;
        int rc = gzc_is_open(&s->c) ? gzc_collect(&s->c, &s->span, e->err, sizeof e->err) : 0;
        if (rc < 0)
            return rc;
    }
    *roots = s->hout;
    *rows = s->rows;
    return 0;
}

/* Slot i's roots on their way out: its deflate stage, device and pinned
 * buffer (gzc_slot_at). */
static gzc_slot *qd_out_buffer(void *ctx, int i, gpu **g, void **host)
{
    qd_slot *s = &((qd_engine *)ctx)->slots[i];
    *g = s->g;
    *host = s->hout;
    return &s->c;
}

/* Turns on device deflate of complex roots where it applies (see quadratic.h). */
int qd_engine_compress(qd_engine *e, int level, uint64_t offset)
{
    if (e->be->kind != BACKEND_CUDA || e->out != QD_ROWS || !gzc_device_level(level))
        return 0;
    int rc = gzc_open_all(e->nslots, qd_out_buffer, e,
                          e->max_rows * 4 * dt_size(qd_root_type(e->dtype)),
                          e->err, sizeof e->err);
    if (rc == 1) {
        e->deflate = 1;
        e->out_offset = offset;
    }
    return rc;
}

/* The compressed roots of a collected slot, when it has them. */
int qd_engine_span(const qd_engine *e, int slot, const gz_span **span)
{
    const qd_slot *s = &e->slots[slot];
    *span = &s->span;
    return s->rows && gzc_is_open(&s->c);
}

/* Rows per chunk (the plane pitch). */
size_t qd_engine_max_rows(const qd_engine *e)
{
    return e->max_rows;
}

/* The last error's text. */
const char *qd_engine_error(const qd_engine *e)
{
    return e->err;
}
