/* bench.c - the article ladders and the production kernels, timed and
 * checked on the GPU or the CPU (see bench.h). */
#include "bench.h"
#include "runtime/backend_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gen.h"
#include "io/gzip/bgzf.h"
#include "io/crc.h"
#include "io/clock.h"
#include "io/gzip/gz_writer.h"
#include "io/par.h"
#include "io/reader.h"
#include "ptx/inflate_math.h"
#include "ptx/ladder_math.h"
#include "runtime/gzip/stream_inflate.h"
#include "runtime/quadratic.h"
#include "runtime/reduce.h"
#include "runtime/simd.h"
#include "runtime/transpose.h"
#include "runtime/axis.h"
#include "runtime/axis_gpu.h"

#define BENCH_SLOW_MS 200.0 /* a first run this long: 3 timed runs at most */
#define BENCH_SLOW_REPS 3
#define LR_GRID 1024u       /* blocks and threads of the reduction ladder */
#define LR_BLOCK 1024u
#define LT_TILE 32u         /* tile side of the tiled transposes */
#define LQ_BLOCK 256u       /* threads per block of the quadratic ladder */
#define BENCH_UNIT 0x1p-10  /* reduction inputs are multiples of this */
#define BENCH_SUM_BUDGET ((1u << 24) - 1) /* sum of |x| / BENCH_UNIT stays below */
#define BENCH_SWEEP_MAX 256 /* naive transpose sweep: block sides 1 .. 256 */
#define BENCH_GZ_LEVEL 1    /* compression level of the inflate input */
#define BENCH_GZ_PIECE (128u << 10) /* input bytes per piece of the single-stream input */
#define BENCH_GZS_SEG (128u << 10)  /* compressed bytes per segment of the stream kernels */

/* Where a variant runs. */
enum {
    ON_GPU = 1,         /* a kernel, with the CUDA backend */
    ON_HOST = 2,        /* host code, with either backend (the articles' CPU baselines) */
    ON_CPU_BACKEND = 4, /* host code, with the CPU backend only */
};

/* What a variant reads and writes, for preparing and checking it. */
enum {
    L_FLOAT_SUM,  /* reduce: a float32 sum */
    L_DOUBLE_SUM, /* reduce: a float64 sum */
    L_MATRIX,     /* transpose: N x N out */
    L_AOS,        /* quadratic: records in place */
    L_SOA,        /* quadratic: planes */
    L_ROWS,       /* quadratic: (N, 3) rows in, (N, 4) roots out (production) */
    L_BYTES,      /* inflate: blocked gzip in, the decoded bytes out */
    L_STREAM,     /* inflate: one deflate stream in, the decoded bytes out */
    L_COPY,
    L_AXIS,       /* axis: parts of sums along an axis */
};

typedef struct bench_ctx bench_ctx;

/* One deflated piece of the single-stream input (bench_piece_range). */
typedef struct {
    unsigned char *out;
    size_t len;
} bench_piece;
typedef struct bench_variant bench_variant;

/* Runs a variant once: queues it on c->s (GPU) or runs it (host). */
typedef int (*bench_run_fn)(bench_ctx *c, const bench_variant *v);

struct bench_variant {
    bench_op op;
    const char *name;
    const char *idea;
    const char *article; /* the reported figure */
    int where;
    int threads;         /* host code: 1 for one core, 0 for every thread */
    const char *module;  /* GPU: embedded module and kernel */
    const char *kernel;
    bench_run_fn run;
    int layout;
    int baseline;
    int sweep;           /* the naive transpose: its block-shape sweep first */
    int simd;            /* CPU code: 1 + the instruction-set variant it runs
                          * (runtime/simd.h); 0: the process's */
};

/* One row of the axis op: float64 or float32, the reduced axis (0: (N, C),
 * 1: (R, N)), the length of the last axis (C or N). */
typedef struct {
    const char *name, *idea;
    int f64, axis;
    uint64_t inner;
} bench_ax_shape;

struct bench_ctx {
    backend *be;
    gpu *g;
    const bench_config *cfg;
    CUstream s;
    CUevent ev0, ev1;
    uint64_t n;          /* size of the op being measured */
    int threads;         /* host threads of the variant being run */
    unsigned bx, by;     /* block shape of the naive transpose */
    CUfunction f;        /* the variant's kernel */
    /* host arrays */
    float *x;            /* input: n; n x n; 3n coefficient rows */
    float *y;            /* output: n x n; the 7n-float record image */
    float *soa;          /* quadratic planes a, b, c, re1, re2, im1, im2 */
    float *roots;        /* production roots, 4n */
    float *ref_naive;    /* textbook roots (re1, im1, re2, im2 per equation) */
    float *ref_acc;      /* the CPU backend's accurate roots */
    char *copy_src, *copy_dst;
    size_t copy_bytes;
    double exact;        /* reduce: the exact sum */
    double result;       /* reduce: a host variant's sum */
    uint64_t bad_row;    /* transpose check: a wrong row, UINT64_MAX when none */
    engine *rd;          /* reduce production on the CPU backend */
    rd_job rd_job;       /* its operation */
    rd_state rd_st;      /* and the state it folds into */
    tp_kernel tpk;       /* transpose production: the kernel for an N x N matrix */
    uint64_t tpk_n;      /* N that tpk was chosen for (0: none) */
    unsigned char *gz;   /* inflate: the blocked gzip stream of x (malloc) */
    size_t gz_bytes;
    if_member *members;  /* inflate: its members, output into y (malloc) */
    unsigned nmembers;
    unsigned bad_member; /* inflate: lowest member that failed, or IF_NO_MEMBER */
    CUfunction f_crc;    /* inflate: the CRC kernel run after c->f */
    unsigned char *gzs;  /* inflate: x as one deflate stream, pigz's way (malloc) */
    size_t gzs_bytes;
    uint32_t x_crc;      /* inflate: CRC-32 of x's bytes */
    bench_piece *pieces; /* inflate: the pieces of the stream being built */
    stream_inflate_dev gzd;         /* inflate: the stream kernels' buffers */
    int gzs_status;      /* inflate: 0, or why the stream variant's last run failed */
    /* device arrays */
    CUdeviceptr dx, dy, dz, dpart, dcount, dseg, dres;
    /* the axis rows: the input of each type on the device (dx float32, dy float64), the
       variant's plan, job, result buffers and chunk */
    const bench_ax_shape *ax_shape;
    ax_plan ax;
    ax_job ax_job;
    ax_layout axl;
    CUdeviceptr dax;
    unsigned char *ax_host;
    engine_chunk ax_chunk;
    char ax_kernels[ENGINE_KERNELS_LEN];
    io_status st;        /* the failure in hand, recorded once it has a line (a device's
                            may have none where a bare driver call failed: that call's is
                            taken then) */
};

/* ---- helpers ---- */

/* Ascending order of doubles, for qsort. */
static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Records the driver failure a CU_TRY returned, with what was being done. */
static int bench_cu_error(bench_ctx *c, int rc, const char *what)
{
    io_fail(&c->st, rc < 0 ? rc : GPU_ERR_DRIVER, "%s: %s", what, cu_last_failure());
    cu_clear_failure();
    return c->st.code;
}

/* Takes the device's line of the failure rc. */
static int bench_gpu_error(bench_ctx *c, int rc)
{
    return io_pass_as(&c->st, rc, gpu_status(c->g));
}

typedef struct {
    bench_ctx *c;
    uint64_t lo, hi;
    void (*fn)(bench_ctx *c, uint64_t lo, uint64_t hi);
} bench_job;

/* Thread body: one range of a bench_par() split. */
static void *bench_job_run(void *arg)
{
    bench_job *j = arg;
    j->fn(j->c, j->lo, j->hi);
    return NULL;
}

/* Runs fn over [0, count) split into `threads` contiguous ranges. */
static void bench_par(bench_ctx *c, int threads, uint64_t count,
                      void (*fn)(bench_ctx *c, uint64_t lo, uint64_t hi))
{
    size_t nt = threads < 1 ? 1 : (size_t)threads;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    if (nt > count)
        nt = count ? (size_t)count : 1;
    bench_job jobs[PAR_MAX];
    for (size_t i = 0; i < nt; i++)
        jobs[i] = (bench_job){c, count * i / nt, count * (i + 1) / nt, fn};
    par_run(bench_job_run, jobs, sizeof jobs[0], nt);
}

/* Host memory, or NULL with the reason in c->st. */
static void *bench_alloc(bench_ctx *c, size_t bytes)
{
    void *p = backend_host_alloc(c->be, bytes);
    if (!p)
        io_pass_as(&c->st, GPU_ERR_OUT_OF_MEMORY, backend_status(c->be));
    return p;
}

/* Device memory of the CUDA backend; 0 on the CPU backend. */
static int bench_dev_alloc(bench_ctx *c, CUdeviceptr *p, size_t bytes, const char *what)
{
    if (!c->g)
        return 0;
    int rc = gpu_mem_alloc(c->g, p, bytes, what);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* Fills device bytes with 0xff (a NaN pattern no input holds). */
static int bench_poison(bench_ctx *c, CUdeviceptr p, size_t bytes)
{
    CU_TRY(cu.MemsetD8Async(p, 0xff, bytes, c->s));
    return 0;
}

/* Copies host to device and waits. */
static int bench_upload(bench_ctx *c, CUdeviceptr dst, const void *src, size_t bytes)
{
    CU_TRY(cu.MemcpyHtoDAsync(dst, src, bytes, c->s));
    CU_TRY(cu.StreamSynchronize(c->s));
    return 0;
}
/* Copies device to host and waits. */
static int bench_download(bench_ctx *c, void *dst, CUdeviceptr src, size_t bytes)
{
    CU_TRY(cu.MemcpyDtoHAsync(dst, src, bytes, c->s));
    CU_TRY(cu.StreamSynchronize(c->s));
    return 0;
}

/* Same float32 bits, or both NaN (NaN sign and payload differ between
 * hardware and compilers). */
static int bench_same_f32(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* ---- GPU runners ---- */

/* The one-thread serial sum. */
static int run_lr_serial(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    void *p[] = {&c->dx, &n, &c->dres};
    int rc = gpu_launch(c->g, c->f, v->kernel, 1, 1, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* Pass 1 over LR_GRID blocks into partials, pass 2 in one block. */
static int run_lr_two_pass(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n, m = LR_GRID;
    void *p1[] = {&c->dx, &n, &c->dpart};
    void *p2[] = {&c->dpart, &m, &c->dres};
    int rc = gpu_launch(c->g, c->f, v->kernel, LR_GRID, LR_BLOCK, c->s, p1);
    if (rc == 0)
        rc = gpu_launch(c->g, c->f, v->kernel, 1, LR_BLOCK, c->s, p2);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* One launch; the last block to finish sums the partials. */
static int run_lr_last_block(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    void *p[] = {&c->dx, &n, &c->dpart, &c->dcount, &c->dres};
    int rc = gpu_launch(c->g, c->f, v->kernel, LR_GRID, LR_BLOCK, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* Zeroes the sum, then every thread adds its partial atomically. */
static int run_lr_atomic(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    void *p[] = {&c->dx, &n, &c->dres};
    CU_TRY(cu.MemsetD8Async(c->dres, 0, sizeof(float), c->s));
    int rc = gpu_launch(c->g, c->f, v->kernel, LR_GRID, LR_BLOCK, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The production moments kernel with its in-kernel fold: one double sum. */
static int run_rd_production(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n, first = 0;
    uint64_t ntiles = (c->n + RD_TILE - 1) / RD_TILE;
    rd_fold_ctl fold = {(unsigned int *)(uintptr_t)(c->dcount + sizeof(unsigned)),
                        (double *)(uintptr_t)c->dseg, (unsigned int *)(uintptr_t)c->dcount,
                        (double *)(uintptr_t)c->dres};
    void *p[] = {&c->dx, &n, &first, &c->dpart, &fold};
    int rc = gpu_launch(c->g, c->f, v->kernel, (unsigned)ntiles, RD_WARPS * 32, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The naive transpose with the block shape c->bx x c->by. */
static int run_lt_naive(bench_ctx *c, const bench_variant *v)
{
    unsigned n = (unsigned)c->n;
    void *p[] = {&c->dx, &c->dy, &n};
    int rc = gpu_launch_2d(c->g, c->f, v->kernel, (n + c->bx - 1) / c->bx, (n + c->by - 1) / c->by,
                           c->bx, c->by, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* A tiled transpose: one TILE x TILE block per tile. */
static int run_lt_tiled(bench_ctx *c, const bench_variant *v)
{
    unsigned n = (unsigned)c->n, t = (n + LT_TILE - 1) / LT_TILE;
    void *p[] = {&c->dx, &c->dy, &n};
    int rc = gpu_launch_2d(c->g, c->f, v->kernel, t, t, LT_TILE, LT_TILE, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* transpose's production kernel (the one it picks for an N x N float32
 * matrix: aligned vector tiles, or the odd-shape kernel). */
static int run_tp_production(bench_ctx *c, const bench_variant *v)
{
    int rc = 0;
    if (c->tpk_n != c->n) {
        if ((rc = tp_kernel_open(&c->tpk, c->g, sizeof(float), c->n, c->n)) < 0)
            return bench_gpu_error(c, rc);
        c->tpk_n = c->n;
    }
    rc = tp_kernel_launch(&c->tpk, c->g, c->dx, c->dy, 1, c->s);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The device inflate: every member at once (a thread each), then the CRC-32
 * of every member's output (a warp each); a failure lowers c->dres. */
static int run_gz_production(bench_ctx *c, const bench_variant *v)
{
    unsigned n = c->nmembers;
    void *pi[] = {&c->dx, &c->dz, &n, &c->dy, &c->dres};
    void *pc[] = {&c->dz, &n, &c->dy, &c->dres};
    int rc = gpu_launch(c->g, c->f, v->kernel, (n + IF_GPU_THREADS - 1) / IF_GPU_THREADS,
                        IF_GPU_THREADS, c->s, pi);
    if (rc == 0)
        rc = gpu_launch(c->g, c->f_crc, "gzk_crc", n, 32, c->s, pc);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The stream kernels over the whole single-stream input, as one batch:
 * rounds of gzs_decode, then the windows, the markers and the CRC-32. */
static int run_gz_stream(bench_ctx *c, const bench_variant *v)
{
    (void)v;
    stream_inflate_result r;
    size_t bytes = c->n * sizeof(float);
    int rc = stream_inflate_batch(&c->gzd, c->s, c->gzs, c->gzs_bytes, 0, 1, NULL, 0, c->dy, bytes,
                                  NULL, &r);
    if (rc < 0)
        return bench_gpu_error(c, rc);
    c->gzs_status = rc ? 1 : r.nout != bytes || !r.final ? 2 : r.crc != c->x_crc ? 3 : 0;
    return 0;
}

/* An array-of-structs quadratic kernel on the records in place. */
static int run_lq_aos(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    void *p[] = {&c->dx, &n};
    int rc = gpu_launch(c->g, c->f, v->kernel, (unsigned)((n + LQ_BLOCK - 1) / LQ_BLOCK), LQ_BLOCK,
                        c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The structure-of-arrays quadratic kernel: planes a, b, c in dy, the four
 * root planes in dz. */
static int run_lq_soa(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    CUdeviceptr in[3], out[4];
    for (int k = 0; k < 3; k++)
        in[k] = c->dy + (CUdeviceptr)k * n * sizeof(float);
    for (int k = 0; k < 4; k++)
        out[k] = c->dz + (CUdeviceptr)k * n * sizeof(float);
    void *p[] = {&in[0], &in[1], &in[2], &out[0], &out[1], &out[2], &out[3], &n};
    int rc = gpu_launch(c->g, c->f, v->kernel, (unsigned)((n + LQ_BLOCK - 1) / LQ_BLOCK), LQ_BLOCK,
                        c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The production quadratic kernel: (N, 3) rows in dy, (N, 4) roots in dz,
 * launched as qd_engine launches it. */
static int run_qd_production(bench_ctx *c, const bench_variant *v)
{
    unsigned long long n = c->n;
    uint64_t blocks = (n + QD_TILE_ROWS - 1) / QD_TILE_ROWS;
    void *p[] = {&c->dy, &n, &c->dz};
    int rc = gpu_launch(c->g, c->f, v->kernel, (unsigned)(blocks < 0x7fffffffu ? blocks : 0x7fffffffu),
                        QD_TILE, c->s, p);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* The device-to-device copy the kernels are compared with. */
static int run_dev_copy(bench_ctx *c, const bench_variant *v)
{
    CU_TRY(cu.MemcpyDtoDAsync(c->dy, c->dx, c->copy_bytes, c->s));
    return 0;
}

/* The along-axis kernels of the variant's plan over the whole array, one
 * chunk (ax_gpu_kernels: the parts stay on the device). */
static int run_ax_production(bench_ctx *c, const bench_variant *v)
{
    (void)v;
    c->ax_kernels[0] = 0;
    int rc = ax_gpu_kernels(&c->ax_chunk);
    return rc < 0 ? bench_gpu_error(c, rc) : 0;
}

/* ---- host runners ---- */

/* One range of the host copy. */
static void host_copy_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    memcpy(c->copy_dst + lo, c->copy_src + lo, hi - lo);
}

/* memcpy of the copy buffer on every thread. */
static int run_host_copy(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, c->copy_bytes, host_copy_range);
    return 0;
}

/* The float sum in index order on one core. */
static int run_host_sum(bench_ctx *c, const bench_variant *v)
{
    float s = 0.0f;
    for (uint64_t i = 0; i < c->n; i++)
        s += c->x[i];
    c->result = s;
    return 0;
}

/* The reduce engine's CPU path (the production reduction on the CPU). */
static int run_host_rd_production(bench_ctx *c, const bench_variant *v)
{
    rd_result r;
    const void *out;
    size_t bytes;
    rd_state_init(&c->rd_st, DT_F32, RD_OP_SUM, 0);
    if (engine_submit(c->rd, 0, c->x, NULL, c->n * sizeof(float), 0, 0) < 0 ||
        engine_collect(c->rd, 0, &out, &bytes) < 0)
        return io_pass_as(&c->st, GPU_ERR_DRIVER, engine_status(c->rd));
    rd_state_result(&c->rd_st, &r);
    c->result = r.sum;
    return 0;
}

/* The two nested loops b[j][i] = a[i][j] on one core. */
static int run_host_transpose(bench_ctx *c, const bench_variant *v)
{
    uint64_t n = c->n;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            c->y[j * n + i] = c->x[i * n + j];
    return 0;
}

/* Tile rows [lo, hi) of the tiled host transpose. */
static void host_transpose_tiles(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    uint64_t n = c->n;
    for (uint64_t ib = lo * LT_TILE; ib < hi * LT_TILE && ib < n; ib += LT_TILE)
        for (uint64_t jb = 0; jb < n; jb += LT_TILE)
            for (uint64_t i = ib; i < ib + LT_TILE && i < n; i++)
                for (uint64_t j = jb; j < jb + LT_TILE && j < n; j++)
                    c->y[j * n + i] = c->x[i * n + j];
}

/* The transpose by 32 x 32 tiles, tile rows split over the threads. */
static int run_host_transpose_tiled(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, (c->n + LT_TILE - 1) / LT_TILE, host_transpose_tiles);
    return 0;
}

/* Rows [lo, hi) of the matrix by the transpose's CPU code. */
static void host_tp_production_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    tp_cpu_block(c->x, c->y, c->n, c->n, sizeof(float), lo, hi, 0, c->n);
}

/* The transpose's CPU code (cache blocks moved by registers), rows split
 * over the threads. */
static int run_host_tp_production(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, c->n, host_tp_production_range);
    return 0;
}

/* Records [lo, hi) solved in place with the textbook formula. */
static void host_aos_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi; i++)
        lq_solve_record(c->y + LQ_FIELDS * i);
}

/* The article's CPU code: array of structs, on c->threads threads. */
static int run_host_aos(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, c->n, host_aos_range);
    return 0;
}

/* The textbook formula over separate arrays on one core. */
static int run_host_soa(bench_ctx *c, const bench_variant *v)
{
    uint64_t n = c->n;
    const float *a = c->soa, *b = a + n, *cc = b + n;
    float *re1 = c->soa + 3 * n, *re2 = re1 + n, *im1 = re2 + n, *im2 = im1 + n;
    for (uint64_t i = 0; i < n; i++)
        qd_naive_f32(a[i], b[i], cc[i], &re1[i], &im1[i], &re2[i], &im2[i]);
    return 0;
}

/* Rows [lo, hi) with the accurate solver of the CPU backend. */
static void host_rows_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    qd_strides st = qd_strides_for(QD_ROWS, QD_ROWS, 0);
    qd_cpu_solve(c->x + 3 * lo, c->roots + 4 * lo, hi - lo, DT_F32, &st);
}

/* The production solver's CPU path, on c->threads threads. */
static int run_host_qd_production(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, c->n, host_rows_range);
    return 0;
}

/* Members [lo, hi) inflated by zlib into their places in c->y and their
 * CRC-32 checked, as the CPU backend's reader does; a failure lowers
 * c->bad_member. */
static void host_inflate_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    int init = inflateInit2(&z, -15) == Z_OK;
    for (uint64_t i = lo; i < hi; i++) {
        const if_member *m = &c->members[i];
        unsigned char *out = (unsigned char *)c->y + m->out_off;
        int ok = init && inflateReset(&z) == Z_OK;
        if (ok) {
            z.next_in = c->gz + m->in_off;
            z.avail_in = m->in_len;
            z.next_out = out;
            z.avail_out = m->isize;
            ok = inflate(&z, Z_FINISH) == Z_STREAM_END && z.avail_in == 0 && z.avail_out == 0 &&
                 crc32(0L, out, m->isize) == m->crc;
        }
        if (!ok) {
            /* the range's first failure; keep the lowest over the ranges */
            unsigned cur = __atomic_load_n(&c->bad_member, __ATOMIC_RELAXED);
            while (i < cur && !__atomic_compare_exchange_n(&c->bad_member, &cur, (unsigned)i, 1,
                                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
            break;
        }
    }
    if (init)
        inflateEnd(&z);
}

/* zlib over every member, the members split over c->threads threads. */
static int run_host_inflate(bench_ctx *c, const bench_variant *v)
{
    bench_par(c, c->threads, c->nmembers, host_inflate_range);
    return 0;
}

/* ---- the variants, in the order they are run and printed ---- */

/* The copy rows: what the kernels' bandwidth is compared with. */
static const bench_variant bench_copies[] = {
    {BENCH_COPY, "device copy", "cuMemcpyDtoDAsync of the largest working set", "", ON_GPU, 0,
     NULL, NULL, run_dev_copy, L_COPY, 0, 0, 0},
    {BENCH_COPY, "host copy", "memcpy of the largest working set on every thread", "",
     ON_HOST, 0, NULL, NULL, run_host_copy, L_COPY, 0, 0, 0},
};

static const bench_variant bench_variants[] = {
    /* reduction: sum of n float32 */
    {BENCH_REDUCE, "serial", "one GPU thread loops over all n", "100307 us", ON_GPU, 0,
     "ladder_reduce", "lr_serial", run_lr_serial, L_FLOAT_SUM, 1, 0, 0},
    {BENCH_REDUCE, "contiguous", "two passes; contiguous ranges; thread 0 adds shared memory",
     "92 us", ON_GPU, 0, "ladder_reduce", "lr_contiguous", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "interleaved", "two passes; thread i reads i, i+T, ... (coalesced)", "78 us",
     ON_GPU, 0, "ladder_reduce", "lr_interleaved", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "tree", "in-block halving tree over shared memory", "46 us", ON_GPU, 0,
     "ladder_reduce", "lr_tree", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "last-warp", "last 64 values by one warp, no barriers (__syncwarp)",
     "40 us", ON_GPU, 0, "ladder_reduce", "lr_last_warp", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "unrolled", "block size a compile-time constant, tree unrolled", "38 us",
     ON_GPU, 0, "ladder_reduce", "lr_unrolled", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "last-block", "one pass; the last block (atomic ticket) adds partials",
     "39 us", ON_GPU, 0, "ladder_reduce", "lr_last_block", run_lr_last_block, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "atomic", "one pass; every thread atomically adds its partial", "2553 us",
     ON_GPU, 0, "ladder_reduce", "lr_atomic", run_lr_atomic, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "shuffle", "two passes; the last warp reduces with shuffle-xor", "38 us",
     ON_GPU, 0, "ladder_reduce", "lr_shuffle", run_lr_two_pass, L_FLOAT_SUM, 0, 0, 0},
    {BENCH_REDUCE, "production", "reduce's reproducible moments kernel, fold on the device", "",
     ON_GPU, 0, "reduce_f32_moments", "rdk_moments", run_rd_production, L_DOUBLE_SUM, 0, 0, 0},
    {BENCH_REDUCE, "cpu loop", "float sum in index order, one core", "", ON_CPU_BACKEND, 1, NULL,
     NULL, run_host_sum, L_FLOAT_SUM, 1, 0, 0},
    {BENCH_REDUCE, "production", "reduce's CPU backend (reproducible tiles)", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_rd_production, L_DOUBLE_SUM, 0, 0, 0},
    {BENCH_REDUCE, "cpu baseline", "reduce's CPU backend, its baseline code (SSE2)", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_rd_production, L_DOUBLE_SUM, 0, 0, 1 + SIMD_BASELINE},
    {BENCH_REDUCE, "cpu avx2", "reduce's CPU backend, its AVX2 code", "", ON_CPU_BACKEND, 0, NULL,
     NULL, run_host_rd_production, L_DOUBLE_SUM, 0, 0, 1 + SIMD_AVX2},
    {BENCH_REDUCE, "cpu avx512", "reduce's CPU backend, its AVX-512 code", "", ON_CPU_BACKEND, 0,
     NULL, NULL, run_host_rd_production, L_DOUBLE_SUM, 0, 0, 1 + SIMD_AVX512},
    /* transpose: N x N float32 */
    {BENCH_TRANSPOSE, "cpu", "two nested loops, one core", "Core i7", ON_HOST, 1, NULL, NULL,
     run_host_transpose, L_MATRIX, 1, 0, 0},
    {BENCH_TRANSPOSE, "naive", "one thread per element; writes strided", "1.36 / 0.45 ms",
     ON_GPU, 0, "ladder_transpose", "lt_naive", run_lt_naive, L_MATRIX, 0, 1, 0},
    {BENCH_TRANSPOSE, "shared", "32x32 tile through shared memory", "0.44 / 0.28 ms", ON_GPU, 0,
     "ladder_transpose", "lt_shared", run_lt_tiled, L_MATRIX, 0, 0, 0},
    {BENCH_TRANSPOSE, "padded", "the tile's rows padded to 33 words", "0.43 / 0.26 ms", ON_GPU,
     0, "ladder_transpose", "lt_padded", run_lt_tiled, L_MATRIX, 0, 0, 0},
    {BENCH_TRANSPOSE, "production", "transpose's kernel: 16-byte vectors, swizzled tiles", "",
     ON_GPU, 0, "transpose", NULL, run_tp_production, L_MATRIX, 0, 0, 0},
    {BENCH_TRANSPOSE, "cpu tiled", "32x32 tiles, every thread", "", ON_CPU_BACKEND, 0, NULL,
     NULL, run_host_transpose_tiled, L_MATRIX, 0, 0, 0},
    {BENCH_TRANSPOSE, "cpu baseline", "transpose's CPU code, baseline (SSE2 4x4 squares)", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_tp_production, L_MATRIX, 0, 0, 1 + SIMD_BASELINE},
    {BENCH_TRANSPOSE, "cpu avx2", "transpose's CPU code, AVX2 (8x8 squares)", "", ON_CPU_BACKEND,
     0, NULL, NULL, run_host_tp_production, L_MATRIX, 0, 0, 1 + SIMD_AVX2},
    {BENCH_TRANSPOSE, "cpu avx512", "transpose's CPU code, AVX-512 (8x8 squares)", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_tp_production, L_MATRIX, 0, 0, 1 + SIMD_AVX512},
    /* quadratic: n float32 equations, textbook formula except production */
    {BENCH_QUADRATIC, "cpu aos", "array of structs, one core", "1038 ms", ON_HOST, 1, NULL,
     NULL, run_host_aos, L_AOS, 1, 0, 0},
    {BENCH_QUADRATIC, "cpu aos", "array of structs, every thread", "", ON_HOST, 0, NULL, NULL,
     run_host_aos, L_AOS, 0, 0, 0},
    {BENCH_QUADRATIC, "cpu soa", "structure of arrays, one core", "", ON_CPU_BACKEND, 1, NULL,
     NULL, run_host_soa, L_SOA, 0, 0, 0},
    {BENCH_QUADRATIC, "naive", "one thread per equation, array of structs", "118 ms", ON_GPU, 0,
     "ladder_quadratic", "lq_aos", run_lq_aos, L_AOS, 0, 0, 0},
    {BENCH_QUADRATIC, "shared", "records staged through shared memory", "37 ms", ON_GPU, 0,
     "ladder_quadratic", "lq_aos_shared", run_lq_aos, L_AOS, 0, 0, 0},
    {BENCH_QUADRATIC, "soa", "structure of arrays: coalesced", "9 ms", ON_GPU, 0,
     "ladder_quadratic", "lq_soa", run_lq_soa, L_SOA, 0, 0, 0},
    {BENCH_QUADRATIC, "production", "quadratic's accurate solver, (N, 3) rows", "", ON_GPU, 0,
     "quadratic_f32", "qdk_rows", run_qd_production, L_ROWS, 0, 0, 0},
    {BENCH_QUADRATIC, "production", "quadratic's accurate solver on the CPU, one core", "",
     ON_CPU_BACKEND, 1, NULL, NULL, run_host_qd_production, L_ROWS, 0, 0, 0},
    {BENCH_QUADRATIC, "production", "quadratic's accurate solver on the CPU, every thread", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_qd_production, L_ROWS, 0, 0, 0},
    {BENCH_QUADRATIC, "cpu baseline", "the accurate solver on the CPU, baseline, every thread",
     "", ON_CPU_BACKEND, 0, NULL, NULL, run_host_qd_production, L_ROWS, 0, 0, 1 + SIMD_BASELINE},
    {BENCH_QUADRATIC, "cpu avx2", "the accurate solver on the CPU, AVX2 + FMA, every thread", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_qd_production, L_ROWS, 0, 0, 1 + SIMD_AVX2},
    {BENCH_QUADRATIC, "cpu avx512", "the accurate solver on the CPU, AVX-512, every thread", "",
     ON_CPU_BACKEND, 0, NULL, NULL, run_host_qd_production, L_ROWS, 0, 0, 1 + SIMD_AVX512},
    /* inflate: n float32 in blocked gzip, decoded and CRC-checked */
    {BENCH_INFLATE, "host", "zlib, members split over every thread, CRC-32 checked", "",
     ON_HOST, 0, NULL, NULL, run_host_inflate, L_BYTES, 1, 0, 0},
    {BENCH_INFLATE, "production", "gzk_inflate (a thread per member) + gzk_crc (a warp per member)",
     "", ON_GPU, 0, "inflate", "gzk_inflate", run_gz_production, L_BYTES, 0, 0, 0},
    {BENCH_INFLATE, "stream", "one deflate stream (pigz's kind) in segments: gzs_decode (a thread "
     "per segment), windows, markers, CRC-32", "", ON_GPU, 0, "inflate", "gzs_decode",
     run_gz_stream, L_STREAM, 0, 0, 0},
    /* axis: sums along an axis of size bytes, one row per bench_ax_shapes entry */
    {BENCH_AXIS, "axis", "", "", ON_GPU, 0, NULL, NULL, run_ax_production, L_AXIS, 0, 0, 0},
};

#define AX_SHAPE(name, f64, axis, inner)                                                        \
    {name, axis ? "reduce --axis 1 --op sum of (R, N), N = " #inner                              \
                : "reduce --axis 0 --op sum of (N, C), C = " #inner, f64, axis, inner}
static const bench_ax_shape bench_ax_shapes[] = {
    AX_SHAPE("f32 C=1", 0, 0, 1), AX_SHAPE("f32 C=3", 0, 0, 3), AX_SHAPE("f32 C=64", 0, 0, 64),
    AX_SHAPE("f32 C=1000", 0, 0, 1000), AX_SHAPE("f32 C=1e5", 0, 0, 100000),
    AX_SHAPE("f32 N=3", 0, 1, 3), AX_SHAPE("f32 N=64", 0, 1, 64),
    AX_SHAPE("f32 N=1000", 0, 1, 1000), AX_SHAPE("f32 N=1e6", 0, 1, 1000000),
    AX_SHAPE("f64 C=1", 1, 0, 1), AX_SHAPE("f64 C=3", 1, 0, 3), AX_SHAPE("f64 C=64", 1, 0, 64),
    AX_SHAPE("f64 C=1000", 1, 0, 1000), AX_SHAPE("f64 C=1e5", 1, 0, 100000),
    AX_SHAPE("f64 N=3", 1, 1, 3), AX_SHAPE("f64 N=64", 1, 1, 64),
    AX_SHAPE("f64 N=1000", 1, 1, 1000), AX_SHAPE("f64 N=1e6", 1, 1, 1000000),
};
#undef AX_SHAPE

/* ---- public helpers ---- */

static const char *const bench_op_names[BENCH_NOPS] = {"copy", "reduce", "transpose", "quadratic",
                                                       "inflate", "axis"};

/* Name of an op. */
const char *bench_op_name(bench_op op)
{
    return op < BENCH_NOPS ? bench_op_names[op] : "?";
}

/* Op of a name (copy excluded). */
int bench_op_parse(const char *name)
{
    for (int i = BENCH_REDUCE; i < BENCH_NOPS; i++)
        if (!strcmp(name, bench_op_names[i]))
            return i;
    return -1;
}

/* Size limits: 32-bit element counts, grid limits of the naive transpose
 * (N / 1 blocks in y), the 32-bit grid of the quadratic kernels, and the
 * 32-bit offsets of the inflate member table (2 GiB decoded, its blocked
 * gzip at most a little larger). */
uint64_t bench_size_limit(bench_op op)
{
    switch (op) {
    case BENCH_REDUCE: return (uint64_t)1 << 32;
    case BENCH_TRANSPOSE: return 32768;
    case BENCH_QUADRATIC: return (uint64_t)1 << 31;
    case BENCH_INFLATE: return (uint64_t)1 << 29;
    case BENCH_AXIS: return (uint64_t)1 << 34;
    default: return 0;
    }
}

/* Bytes read + written: n floats; two N x N matrices; 12 + 16 per equation;
 * inflate counts the n floats decoded. */
double bench_op_bytes(bench_op op, uint64_t size)
{
    switch (op) {
    case BENCH_REDUCE:
    case BENCH_INFLATE: return 4.0 * (double)size;
    case BENCH_TRANSPOSE: return 8.0 * (double)size * (double)size;
    case BENCH_QUADRATIC: return 28.0 * (double)size;
    default: return (double)size; /* copy, axis: the input's bytes (axis rows add their parts) */
    }
}

/* What a size means. */
const char *bench_op_unit(bench_op op)
{
    switch (op) {
    case BENCH_REDUCE: return "sum of n float32";
    case BENCH_TRANSPOSE: return "N x N float32 matrix";
    case BENCH_QUADRATIC: return "n float32 equations";
    case BENCH_INFLATE: return "n normal float32 in blocked gzip, level 1";
    case BENCH_AXIS: return "sums along an axis of an array of n bytes; bytes: in + parts out";
    default: return "bytes";
    }
}

/* The articles' sizes; on the GPU also sizes far beyond any L2 (1 GiB of
 * input or more, 20x the 50 MiB L2 of an H100). */
void bench_config_defaults(bench_config *c, int on_gpu)
{
    memset(c, 0, sizeof *c);
    c->ops = BENCH_ALL_OPS;
    c->reps = 20;
    c->seed = 1;
    /* inflate: 16 MiB decoded (257 members); 1 GiB (16449 members) on the GPU */
    /* axis (GPU only): a 1 GiB array */
    static const uint64_t article[BENCH_NOPS] = {0, (uint64_t)4 << 20, 1024, 10000000,
                                                 (uint64_t)4 << 20, 0};
    static const uint64_t large[BENCH_NOPS] = {0, (uint64_t)1 << 28, 16384, (uint64_t)1 << 26,
                                               (uint64_t)1 << 28, (uint64_t)1 << 30};
    for (int op = BENCH_REDUCE; op < BENCH_NOPS; op++) {
        if (article[op])
            c->sizes[op][c->nsizes[op]++] = article[op];
        if (on_gpu || !article[op])
            c->sizes[op][c->nsizes[op]++] = large[op];
    }
}

/* ---- inputs and references ---- */

/* Random words of the reduction input (as uint32 in c->x). */
static void gen_words_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    gen_spec s;
    gen_spec_defaults(&s, GEN_UNIFORM, DT_U32, c->cfg->seed);
    gen_fill(&s, lo, hi - lo, (uint32_t *)(void *)c->x + lo);
}

/* Turns random words into integer multipliers k (as int32 in place): dense
 * |k| <= 2^22 / n when n <= 2^22, else +-1 with probability 2^22 / n, so the
 * expected sum of |k| stays near 2^21..2^22. */
static void reduce_ints_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    uint32_t *w = (uint32_t *)(void *)c->x;
    int32_t *k = (int32_t *)(void *)c->x;
    uint64_t n = c->n, span = ((uint64_t)1 << 22) / n;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t u = w[i];
        if (span)
            k[i] = (int32_t)(u % (2 * span + 1)) - (int32_t)span;
        else
            k[i] = (uint64_t)(u >> 1) * n < ((uint64_t)1 << 53) ? (u & 1 ? 1 : -1) : 0;
    }
}

/* The reduction input: x = k 2^-10 with sum |k| < 2^24 enforced in index
 * order, so every partial sum in any order is exact in float32; c->exact
 * is the sum. */
static void bench_reduce_input(bench_ctx *c)
{
    bench_par(c, c->be->threads, c->n, gen_words_range);
    bench_par(c, c->be->threads, c->n, reduce_ints_range);
    int32_t *k = (int32_t *)(void *)c->x;
    uint64_t budget = BENCH_SUM_BUDGET;
    int64_t sum = 0;
    for (uint64_t i = 0; i < c->n; i++) {
        int32_t v = k[i];
        uint64_t mag = (uint64_t)(v < 0 ? -(int64_t)v : v);
        if (mag > budget) {
            v = 0;
            mag = 0;
        }
        budget -= mag;
        sum += v;
        c->x[i] = (float)v * (float)BENCH_UNIT;
    }
    c->exact = (double)sum * BENCH_UNIT;
}

/* Uniform float32 matrix elements [lo, hi). */
static void gen_matrix_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    gen_spec s;
    gen_spec_defaults(&s, GEN_UNIFORM, DT_F32, c->cfg->seed);
    gen_fill(&s, lo, hi - lo, c->x + lo);
}

/* Normal float32 elements [lo, hi) (mean 0, sd 1): the inflate input. */
static void gen_normal_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    gen_spec s;
    gen_spec_defaults(&s, GEN_NORMAL, DT_F32, c->cfg->seed);
    gen_fill(&s, lo, hi - lo, c->x + lo);
}

/* Coefficient rows [lo, hi) of the quadratic mixture, and both references. */
static void gen_quadratic_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    gen_quadratic_fill(c->cfg->seed, DT_F32, lo, hi - lo, c->x + 3 * lo);
    for (uint64_t i = lo; i < hi; i++) {
        const float *r = c->x + 3 * i;
        float *o = c->ref_naive + 4 * i;
        qd_naive_f32(r[0], r[1], r[2], &o[0], &o[1], &o[2], &o[3]);
    }
    qd_strides st = qd_strides_for(QD_ROWS, QD_ROWS, 0);
    qd_cpu_solve(c->x + 3 * lo, c->ref_acc + 4 * lo, hi - lo, DT_F32, &st);
}

/* The multiplier k of element i of the axis input: |k| <= 1000 (splitmix64
 * of the seed and i). */
static int64_t bench_ax_k(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (int64_t)(z % 2001) - 1000;
}

/* Axis input elements [lo, hi) as float32 into c->x. */
static void gen_ax_f32_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi; i++)
        c->x[i] = (float)bench_ax_k(c->cfg->seed, i) * (float)BENCH_UNIT;
}

/* Axis input elements [lo, hi) as float64 into c->x. */
static void gen_ax_f64_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    double *d = (double *)(void *)c->x;
    for (uint64_t i = lo; i < hi; i++)
        d[i] = (double)bench_ax_k(c->cfg->seed, i) * BENCH_UNIT;
}

/* ---- per-op buffers ---- */

/* Frees the op's buffers; safe on a partly set up context. */
static void bench_op_close(bench_ctx *c)
{
    backend *be = c->be;
    backend_host_free(be, c->x);
    backend_host_free(be, c->y);
    backend_host_free(be, c->soa);
    backend_host_free(be, c->roots);
    backend_host_free(be, c->ref_naive);
    backend_host_free(be, c->ref_acc);
    engine_close(c->rd);
    free(c->gz);
    free(c->members);
    if (c->g) {
        gpu_mem_free(c->g, c->dx);
        gpu_mem_free(c->g, c->dy);
        gpu_mem_free(c->g, c->dz);
        gpu_mem_free(c->g, c->dpart);
        gpu_mem_free(c->g, c->dcount);
        gpu_mem_free(c->g, c->dseg);
        gpu_mem_free(c->g, c->dres);
    }
    c->x = c->y = c->soa = c->roots = c->ref_naive = c->ref_acc = NULL;
    c->rd = NULL;
    free(c->gzs);
    stream_inflate_close(&c->gzd);
    c->gz = c->gzs = NULL;
    c->gzs_bytes = 0;
    c->members = NULL;
    c->gz_bytes = 0;
    c->nmembers = 0;
    c->dx = c->dy = c->dz = c->dpart = c->dcount = c->dseg = c->dres = 0;
    if (c->g)
        gpu_mem_free(c->g, c->dax);
    free(c->ax_host);
    c->dax = 0;
    c->ax_host = NULL;
}

/* The axis rows' inputs of c->n bytes on the device: float32 in dx,
 * float64 in dy (nothing without a GPU: the rows are the GPU's). */
static int bench_axis_open(bench_ctx *c)
{
    size_t bytes = (size_t)c->n;
    int rc;
    if (!c->g)
        return 0;
    if (!(c->x = bench_alloc(c, bytes)))
        return GPU_ERR_OUT_OF_MEMORY;
    if ((rc = bench_dev_alloc(c, &c->dx, bytes, "the float32 input")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dy, bytes, "the float64 input")) < 0)
        return rc;
    bench_par(c, c->be->threads, bytes / 4, gen_ax_f32_range);
    if ((rc = bench_upload(c, c->dx, c->x, bytes / 4 * 4)) < 0)
        return rc;
    bench_par(c, c->be->threads, bytes / 8, gen_ax_f64_range);
    return bench_upload(c, c->dy, c->x, bytes / 8 * 8);
}

/* The plan, result buffers and chunk of the axis row c->ax_shape: the whole array of
 * c->n bytes as one chunk, its parts region poisoned. */
static int bench_axis_prepare(bench_ctx *c)
{
    const bench_ax_shape *v = c->ax_shape;
    dt_type t = v->f64 ? DT_F64 : DT_F32;
    size_t sz = dt_size(t);
    uint64_t nel = c->n / sz, inner = v->inner < nel ? v->inner : nel;
    uint64_t shape[2] = {nel / (inner ? inner : 1), inner};
    int rc;
    if (!nel)
        return io_fail(&c->st, GPU_ERR_INTERNAL, "axis size %llu is below one element",
                       (unsigned long long)c->n);
    if ((rc = ax_plan_init(&c->ax, t, RD_OP_SUM, 0, 2, shape, 0, v->axis ? 2u : 1u, 0,
                           &c->st)) < 0)
        return rc;
    size_t cap = (size_t)(shape[0] * shape[1]) * sz;
    c->axl = ax_layout_for(&c->ax, cap);
    gpu_mem_free(c->g, c->dax);
    free(c->ax_host);
    c->dax = 0;
    if (!(c->ax_host = malloc(c->axl.total)))
        return io_fail(&c->st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    if ((rc = bench_dev_alloc(c, &c->dax, c->axl.total, "the parts along an axis")) < 0 ||
        (rc = bench_poison(c, c->dax, c->axl.raw_at)) < 0)
        return rc;
    c->ax_job = (ax_job){.plan = &c->ax, .first = 0, .st = NULL};
    c->ax_chunk = (engine_chunk){.op = &c->ax_job, .g = c->g, .stream = c->s,
                                 .in = v->f64 ? c->dy : c->dx, .out = c->dax,
                                 .host_out = c->ax_host, .bytes = cap, .capacity = cap,
                                 .kernels = c->ax_kernels};
    return 0;
}

/* The axis row's check: the parts copied back and folded into the outputs
 * on the host (ax_state_add_chunk), 64 outputs spread over them against
 * their exact sums. */
static int bench_axis_check(bench_ctx *c, int *ok, char *note, size_t len)
{
    const ax_plan *p = &c->ax;
    const ax_layout *l = &c->axl;
    size_t cap = c->ax_chunk.capacity;
    ax_chunk_hdr h = ax_chunk_of(p, 0, p->nelem);
    memcpy(c->ax_host, &h, sizeof h);
    int rc = bench_download(c, c->ax_host + l->sum_at, c->dax + l->sum_at,
                            (size_t)h.nentries * p->width * l->sum_size);
    if (rc < 0)
        return bench_cu_error(c, rc, "the parts along an axis");
    ax_state *st = ax_state_new(p);
    double *out = malloc((size_t)p->nout * sizeof *out);
    if (!st || !out) {
        ax_state_free(st);
        free(out);
        return io_fail(&c->st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *ok = ax_state_add_chunk(st, c->ax_host, cap) == 0;
    ax_state_result(st, RD_OP_SUM, 0, out);
    uint64_t rows = p->nout == p->shape[0] ? p->shape[1] : p->shape[0], bad = UINT64_MAX;
    for (uint64_t s = 0; *ok && s < 64; s++) {
        uint64_t o = p->nout * s / 64 + (s == 63 ? p->nout - 1 - p->nout * 63 / 64 : 0);
        int64_t k = 0;
        for (uint64_t r = 0; r < rows; r++)
            k += bench_ax_k(c->cfg->seed, p->nout == p->shape[0] ? o * rows + r
                                                                : r * p->nout + o);
        if (out[o] != (double)k * BENCH_UNIT) {
            *ok = 0;
            bad = o;
        }
    }
    ax_state_free(st);
    free(out);
    if (*ok)
        snprintf(note, len, "sums exact; parts %.1f MB (%s)",
                 (double)h.nentries * p->width * l->sum_size / 1e6, c->ax_kernels);
    else
        snprintf(note, len, "output %llu: sum differs from the exact one",
                 (unsigned long long)bad);
    return 0;
}

/* Allocates and fills the reduction's arrays for c->n elements. */
static int bench_reduce_open(bench_ctx *c)
{
    size_t n = c->n, ntiles = (n + RD_TILE - 1) / RD_TILE, nseg = ntiles / RD_FOLD_SEG + 1;
    size_t part = ntiles * sizeof(rd_moments) > LR_GRID * sizeof(float)
                      ? ntiles * sizeof(rd_moments) : LR_GRID * sizeof(float);
    int rc;
    if (!(c->x = bench_alloc(c, n * sizeof(float))))
        return GPU_ERR_OUT_OF_MEMORY;
    bench_reduce_input(c);
    if (!c->g) {
        c->rd_job = (rd_job){.dtype = DT_F32, .ops = RD_OP_SUM, .st = &c->rd_st};
        rc = engine_open(&c->rd, c->be, &rd_engine_ops, &c->rd_job, 1,
                         (n * sizeof(float) + RD_TILE - 1) / RD_TILE * RD_TILE, 0, NULL);
        return rc < 0 ? io_pass_as(&c->st, rc, backend_status(c->be)) : rc;
    }
    if ((rc = bench_dev_alloc(c, &c->dx, n * sizeof(float), "the reduction input")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dpart, part, "partial sums")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dcount, (nseg + 1) * sizeof(unsigned), "counters")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dseg, nseg * sizeof(double), "segment sums")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dres, sizeof(double), "the sum")) < 0)
        return rc;
    /* Counters start at zero; the kernels leave them at zero. */
    CU_TRY(cu.MemsetD8Async(c->dcount, 0, (nseg + 1) * sizeof(unsigned), c->s));
    return bench_upload(c, c->dx, c->x, n * sizeof(float));
}

/* Allocates and fills the transpose's matrices for N = c->n. */
static int bench_transpose_open(bench_ctx *c)
{
    size_t bytes = c->n * c->n * sizeof(float);
    int rc;
    if (!(c->x = bench_alloc(c, bytes)) || !(c->y = bench_alloc(c, bytes)))
        return GPU_ERR_OUT_OF_MEMORY;
    bench_par(c, c->be->threads, c->n * c->n, gen_matrix_range);
    if ((rc = bench_dev_alloc(c, &c->dx, bytes + TP_READ_SLACK, "the matrix")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dy, bytes, "the transposed matrix")) < 0)
        return rc;
    if (c->g) {
        CUresult r = cu.MemsetD8Async(c->dx + bytes, 0, TP_READ_SLACK, c->s);
        if (r != CUDA_SUCCESS)
            return bench_gpu_error(c, gpu_fail(c->g, -(int)r, "clearing the matrix's slack"));
    }
    return c->g ? bench_upload(c, c->dx, c->x, bytes) : 0;
}

/* Allocates the quadratic's layouts for c->n equations and computes both
 * references. */
static int bench_quadratic_open(bench_ctx *c)
{
    size_t n = c->n, f = sizeof(float);
    int rc;
    if (!(c->x = bench_alloc(c, 3 * n * f)) || !(c->y = bench_alloc(c, LQ_FIELDS * n * f)) ||
        !(c->soa = bench_alloc(c, LQ_FIELDS * n * f)) || !(c->roots = bench_alloc(c, 4 * n * f)) ||
        !(c->ref_naive = bench_alloc(c, 4 * n * f)) || !(c->ref_acc = bench_alloc(c, 4 * n * f)))
        return GPU_ERR_OUT_OF_MEMORY;
    bench_par(c, c->be->threads, n, gen_quadratic_range);
    if ((rc = bench_dev_alloc(c, &c->dx, LQ_FIELDS * n * f, "the equation records")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dy, 3 * n * f, "the coefficients")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dz, 4 * n * f, "the roots")) < 0)
        return rc;
    return 0;
}

/* A 32-bit little-endian field of a gzip trailer. */
static uint32_t bench_le32(const unsigned char *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Compresses c->x (c->n float32) into c->gz as blocked gzip with the
 * project's writer, on every thread. In memory the writer can only run out
 * of it. */
static int bench_gzip_input(bench_ctx *c)
{
    io_sink *sink;
    gz_writer *w;
    void *gz = NULL;
    int rc = io_sink_open_mem(&sink), finished;
    if (rc < 0)
        goto out_report;
    if ((rc = gz_writer_open(&w, sink, BENCH_GZ_LEVEL, c->be->threads)) < 0)
        goto out_abort_sink;
    rc = gz_writer_write(w, c->x, c->n * sizeof(float));
    finished = gz_writer_finish(w); /* frees the writer, failed or not */
    if ((rc = rc < 0 ? rc : finished) < 0)
        goto out_abort_sink;
    if ((rc = io_sink_mem_take(sink, &gz, &c->gz_bytes)) < 0) /* frees the sink */
        goto out_report;
    c->gz = gz;
    return 0;
out_abort_sink:
    io_sink_abort(sink);
out_report:
    return io_fail(&c->st, GPU_ERR_OUT_OF_MEMORY, "compressing the inflate input: %s",
                   io_strerror(rc));
}

/* Deflates pieces [lo, hi) of c->x: each piece's input bytes with the
 * 32 KiB before them as dictionary, ending in a sync flush (the last piece:
 * the final block), as pigz writes them. */
static void bench_piece_range(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    const unsigned char *x = (const unsigned char *)c->x;
    size_t bytes = c->n * sizeof(float);
    for (uint64_t k = lo; k < hi; k++) {
        size_t from = (size_t)k * BENCH_GZ_PIECE;
        size_t len = bytes - from < BENCH_GZ_PIECE ? bytes - from : BENCH_GZ_PIECE;
        z_stream z;
        memset(&z, 0, sizeof z);
        c->pieces[k].out = NULL;
        if (deflateInit2(&z, BENCH_GZ_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            continue;
        size_t cap = deflateBound(&z, (uLong)len) + 16;
        if (from)
            deflateSetDictionary(&z, x + from - 32768, 32768);
        if ((c->pieces[k].out = malloc(cap))) {
            z.next_in = (Bytef *)(uintptr_t)(x + from);
            z.avail_in = (uInt)len;
            z.next_out = c->pieces[k].out;
            z.avail_out = (uInt)cap;
            deflate(&z, from + len == bytes ? Z_FINISH : Z_SYNC_FLUSH);
            c->pieces[k].len = z.total_out;
        }
        deflateEnd(&z);
    }
}

/* Writes c->x as one raw deflate stream into c->gzs, in pieces on every
 * thread as pigz does, and its CRC-32 into c->x_crc. */
static int bench_stream_input(bench_ctx *c)
{
    size_t bytes = c->n * sizeof(float), npieces = (bytes + BENCH_GZ_PIECE - 1) / BENCH_GZ_PIECE;
    int rc = 0;
    if (!(c->pieces = calloc(npieces, sizeof *c->pieces)))
        return GPU_ERR_OUT_OF_MEMORY;
    bench_par(c, c->be->threads, npieces, bench_piece_range);
    size_t total = 0;
    for (size_t k = 0; k < npieces; k++)
        total += c->pieces[k].len;
    if (!(c->gzs = malloc(total)))
        rc = GPU_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < npieces; k++) {
        if (!c->pieces[k].out)
            rc = GPU_ERR_OUT_OF_MEMORY;
        else if (c->gzs)
            memcpy(c->gzs + c->gzs_bytes, c->pieces[k].out, c->pieces[k].len);
        c->gzs_bytes += c->pieces[k].len;
        free(c->pieces[k].out);
    }
    free(c->pieces);
    c->pieces = NULL;
    c->x_crc = crc_update(0, c->x, bytes);
    return rc < 0 ? io_fail(&c->st, rc, "compressing the single-stream input: out of memory") : 0;
}

/* Lists the members of c->gz into tab (when not NULL), their outputs laid
 * end to end; returns their count, or -1 when the stream is not whole BGZF
 * blocks decoding to c->n float32 at 32-bit offsets. */
static int64_t bench_gz_members(const bench_ctx *c, if_member *tab)
{
    size_t off = 0;
    uint64_t out = 0;
    int64_t k = 0;
    while (off < c->gz_bytes) {
        size_t total = bgzf_block_size(c->gz + off, c->gz_bytes - off);
        if (!total || total > c->gz_bytes - off || off + total > UINT32_MAX || out > UINT32_MAX)
            return -1;
        const unsigned char *trailer = c->gz + off + total - 8;
        if (tab)
            tab[k] = (if_member){off,
                                 (uint32_t)(off + bgzf_header_size(c->gz + off)),
                                 (uint32_t)(total - bgzf_header_size(c->gz + off) - 8),
                                 (uint32_t)out,
                                 bench_le32(trailer + 4),
                                 bench_le32(trailer),
                                 0};
        out += bench_le32(trailer + 4);
        off += total;
        k++;
    }
    return out == c->n * sizeof(float) ? k : -1;
}

/* Generates and compresses the inflate input, lists its members and, on the
 * GPU, uploads the stream (with the kernels' read padding) and the table. */
static int bench_inflate_open(bench_ctx *c)
{
    size_t bytes = c->n * sizeof(float);
    int rc;
    if (!(c->x = bench_alloc(c, bytes)) || !(c->y = bench_alloc(c, bytes)))
        return GPU_ERR_OUT_OF_MEMORY;
    bench_par(c, c->be->threads, c->n, gen_normal_range);
    if ((rc = bench_gzip_input(c)) < 0)
        return rc;
    int64_t n = bench_gz_members(c, NULL);
    if (n <= 0 || !(c->members = malloc((size_t)n * sizeof *c->members)))
        return io_fail(&c->st, GPU_ERR_OUT_OF_MEMORY, "%s",
                       n <= 0 ? "the inflate input is not blocked gzip" : "out of memory");
    c->nmembers = (unsigned)bench_gz_members(c, c->members);
    if (!c->g)
        return 0;
    if ((rc = bench_dev_alloc(c, &c->dx, c->gz_bytes + IF_IN_PAD, "the blocked gzip")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dy, bytes, "the decoded data")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dz, (size_t)n * sizeof *c->members, "the member table")) < 0 ||
        (rc = bench_dev_alloc(c, &c->dres, sizeof(unsigned), "the inflate status")) < 0)
        return rc;
    if ((rc = gpu_function(c->g, "inflate", "gzk_crc", &c->f_crc)) < 0)
        return bench_gpu_error(c, rc);
    CU_TRY(cu.MemsetD8Async(c->dx + c->gz_bytes, 0, IF_IN_PAD, c->s));
    if ((rc = bench_upload(c, c->dz, c->members, (size_t)n * sizeof *c->members)) < 0)
        return rc;
    if ((rc = bench_stream_input(c)) < 0)
        return rc;
    if ((rc = stream_inflate_open(&c->gzd, c->g, c->gzs_bytes, BENCH_GZS_SEG, 4 * BENCH_GZS_SEG,
                                  0)) < 0 ||
        (rc = stream_inflate_upload(&c->gzd, c->gzd.cur, c->s, c->gzs, c->gzs_bytes)) < 0)
        return bench_gpu_error(c, rc);
    return bench_upload(c, c->dx, c->gz, c->gz_bytes);
}

/* ---- preparing and checking one variant ---- */

/* Puts the variant's input in place and poisons its output. */
static int bench_prepare(bench_ctx *c, const bench_variant *v)
{
    uint64_t n = c->n;
    size_t f = sizeof(float);
    int gpu_side = v->where == ON_GPU, rc;
    switch (v->layout) {
    case L_FLOAT_SUM:
    case L_DOUBLE_SUM:
        c->result = NAN;
        return gpu_side ? bench_poison(c, c->dres, sizeof(double)) : 0;
    case L_MATRIX:
        if (gpu_side)
            return bench_poison(c, c->dy, n * n * f);
        memset(c->y, 0xff, n * n * f);
        return 0;
    case L_AOS:
        for (uint64_t i = 0; i < n; i++) {
            memcpy(c->y + LQ_FIELDS * i, c->x + 3 * i, 3 * f);
            memset(c->y + LQ_FIELDS * i + 3, 0xff, 4 * f);
        }
        return gpu_side ? bench_upload(c, c->dx, c->y, LQ_FIELDS * n * f) : 0;
    case L_SOA:
        for (uint64_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                c->soa[k * n + i] = c->x[3 * i + k];
        memset(c->soa + 3 * n, 0xff, 4 * n * f);
        if (!gpu_side)
            return 0;
        if ((rc = bench_poison(c, c->dz, 4 * n * f)) < 0)
            return rc;
        return bench_upload(c, c->dy, c->soa, 3 * n * f);
    case L_ROWS:
        memset(c->roots, 0xff, 4 * n * f);
        if (!gpu_side)
            return 0;
        if ((rc = bench_poison(c, c->dz, 4 * n * f)) < 0)
            return rc;
        return bench_upload(c, c->dy, c->x, 3 * n * f);
    case L_AXIS:
        return bench_axis_prepare(c);
    case L_STREAM:
        c->gzs_status = -1;
        memset(c->y, 0xff, n * f);
        return gpu_side ? bench_poison(c, c->dy, n * f) : 0;
    case L_BYTES:
        /* the kernels only lower the status, so it holds every run's failures */
        c->bad_member = IF_NO_MEMBER;
        memset(c->y, 0xff, n * f);
        if (!gpu_side)
            return 0;
        if ((rc = bench_poison(c, c->dres, sizeof(unsigned))) < 0)
            return rc;
        return bench_poison(c, c->dy, n * f);
    default:
        return 0;
    }
}

/* Checks tile rows [lo, hi) (LT_TILE input rows each) against the output's
 * columns, tile by tile so both stay in cache; a wrong row's index goes to
 * c->bad_row (any one will do). */
static void check_matrix_tiles(bench_ctx *c, uint64_t lo, uint64_t hi)
{
    uint64_t n = c->n;
    for (uint64_t ib = lo * LT_TILE; ib < hi * LT_TILE && ib < n; ib += LT_TILE)
        for (uint64_t jb = 0; jb < n; jb += LT_TILE)
            for (uint64_t i = ib; i < ib + LT_TILE && i < n; i++)
                for (uint64_t j = jb; j < jb + LT_TILE && j < n; j++)
                    if (memcmp(&c->y[j * n + i], &c->x[i * n + j], sizeof(float))) {
                        __atomic_store_n(&c->bad_row, i, __ATOMIC_RELAXED);
                        return;
                    }
}

/* Checks the stream variant's last run: its status, then every byte. */
static int bench_check_stream(bench_ctx *c, int *ok, char *note, size_t len)
{
    static const char *const why[] = {"", "the device declined the stream",
                                      "the stream decoded to a wrong length",
                                      "the CRC-32 of the output is wrong"};
    size_t bytes = c->n * sizeof(float);
    int rc = bench_download(c, c->y, c->dy, bytes);
    if (rc < 0)
        return rc;
    if (c->gzs_status) {
        *ok = 0;
        snprintf(note, len, "%s", c->gzs_status > 0 ? why[c->gzs_status] : "it did not run");
        return 0;
    }
    *ok = memcmp(c->y, c->x, bytes) == 0;
    if (*ok)
        snprintf(note, len, "decoded bytes equal the input (%zu bytes compressed, %.1f%%; %d "
                 "segments, %d rounds)", c->gzs_bytes, 100.0 * (double)c->gzs_bytes / (double)bytes,
                 c->gzd.segments, c->gzd.rounds);
    else
        snprintf(note, len, "the decoded bytes differ from the input");
    return 0;
}

/* Compares n sets of four roots got[k * stride_k + i * stride_i] with
 * want[4 i + order[k]]; returns the first wrong equation or -1. */
static int64_t bench_check_roots(const float *got, size_t stride_i, size_t stride_k,
                                 const int order[4], const float *want, uint64_t n, int *part)
{
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            if (!bench_same_f32(got[k * stride_k + i * stride_i], want[4 * i + order[k]])) {
                *part = k;
                return (int64_t)i;
            }
    return -1;
}

/* Checks an inflate: no member failed and the decoded bytes (read back from
 * the device when gpu_side) are the input's. Returns 0 or a driver error. */
static int bench_check_inflate(bench_ctx *c, int gpu_side, int *ok, char *note, size_t len)
{
    size_t bytes = c->n * sizeof(float);
    int rc;
    if (gpu_side && ((rc = bench_download(c, c->y, c->dy, bytes)) < 0 ||
                     (rc = bench_download(c, &c->bad_member, c->dres, sizeof(unsigned))) < 0))
        return rc;
    if (c->bad_member != IF_NO_MEMBER) {
        *ok = 0;
        snprintf(note, len, "member %u of %u failed its inflate or CRC-32", c->bad_member,
                 c->nmembers);
        return 0;
    }
    const unsigned char *got = (const unsigned char *)c->y, *want = (const unsigned char *)c->x;
    *ok = memcmp(got, want, bytes) == 0;
    if (*ok) {
        snprintf(note, len, "decoded bytes equal the input (%u members, %zu bytes compressed, %.1f%%)",
                 c->nmembers, c->gz_bytes, 100.0 * (double)c->gz_bytes / (double)bytes);
        return 0;
    }
    size_t at = 0;
    while (got[at] == want[at])
        at++;
    snprintf(note, len, "decoded byte %zu differs from the input", at);
    return 0;
}

/* Checks the variant's output; sets *ok and a note. Returns 0 or a driver
 * error (reading the output back failed). */
static int bench_check(bench_ctx *c, const bench_variant *v, int *ok, char *note, size_t len)
{
    uint64_t n = c->n;
    size_t f = sizeof(float);
    int gpu_side = v->where == ON_GPU, rc = 0, part = 0;
    static const int rec_order[4] = {0, 2, 1, 3}; /* record/plane order re1 re2 im1 im2 */
    static const int row_order[4] = {0, 1, 2, 3};
    static const char *const part_names[4] = {"1st", "2nd", "3rd", "4th"};
    int64_t bad = -1;
    *ok = 1;
    switch (v->layout) {
    case L_FLOAT_SUM:
    case L_DOUBLE_SUM: {
        double got = c->result;
        if (gpu_side) {
            float fs;
            double ds;
            rc = v->layout == L_FLOAT_SUM ? bench_download(c, &fs, c->dres, sizeof fs)
                                          : bench_download(c, &ds, c->dres, sizeof ds);
            if (rc < 0)
                return rc;
            got = v->layout == L_FLOAT_SUM ? (double)fs : ds;
        }
        *ok = got == c->exact;
        snprintf(note, len, *ok ? "sum exact (%.17g)" : "sum %.17g, exact %.17g", got, c->exact);
        return 0;
    }
    case L_MATRIX:
        if (gpu_side && (rc = bench_download(c, c->y, c->dy, n * n * f)) < 0)
            return rc;
        c->bad_row = UINT64_MAX;
        bench_par(c, c->be->threads, (n + LT_TILE - 1) / LT_TILE, check_matrix_tiles);
        *ok = c->bad_row == UINT64_MAX;
        if (*ok)
            snprintf(note, len, "transpose exact");
        else
            snprintf(note, len, "wrong element in column %llu of the output",
                     (unsigned long long)c->bad_row);
        return 0;
    case L_AOS:
        if (gpu_side && (rc = bench_download(c, c->y, c->dx, LQ_FIELDS * n * f)) < 0)
            return rc;
        bad = bench_check_roots(c->y + 3, LQ_FIELDS, 1, rec_order, c->ref_naive, n, &part);
        break;
    case L_SOA:
        if (gpu_side && (rc = bench_download(c, c->soa + 3 * n, c->dz, 4 * n * f)) < 0)
            return rc;
        bad = bench_check_roots(c->soa + 3 * n, 1, n, rec_order, c->ref_naive, n, &part);
        break;
    case L_ROWS:
        if (gpu_side && (rc = bench_download(c, c->roots, c->dz, 4 * n * f)) < 0)
            return rc;
        bad = bench_check_roots(c->roots, 4, 1, row_order, c->ref_acc, n, &part);
        break;
    case L_BYTES:
        return bench_check_inflate(c, gpu_side, ok, note, len);
    case L_STREAM:
        return bench_check_stream(c, ok, note, len);
    case L_AXIS:
        return bench_axis_check(c, ok, note, len);
    default:
        snprintf(note, len, "%s", v->idea);
        return 0;
    }
    *ok = bad < 0;
    if (*ok)
        snprintf(note, len, "roots bit-identical to the CPU %s", v->layout == L_ROWS ? "backend" : "textbook formula");
    else
        snprintf(note, len, "equation %lld: %s root part differs from the CPU",
                 (long long)bad, part_names[part]);
    return 0;
}

/* ---- timing ---- */

/* Runs v once and measures it: device events around the queued work, or
 * the clock around host code. */
static int bench_once(bench_ctx *c, const bench_variant *v, double *ms)
{
    int rc;
    if (v->where != ON_GPU) {
        double t0 = 1e3 * io_seconds();
        rc = v->run(c, v);
        *ms = 1e3 * io_seconds() - t0;
        return rc;
    }
    float t;
    CUresult r;
    if ((r = cu.EventRecord(c->ev0, c->s)) != CUDA_SUCCESS)
        goto out_driver;
    if ((rc = v->run(c, v)) < 0)
        return c->st.text[0] ? rc : bench_cu_error(c, rc, v->kernel);
    if ((r = cu.EventRecord(c->ev1, c->s)) != CUDA_SUCCESS)
        goto out_driver;
    if ((r = cu.EventSynchronize(c->ev1)) != CUDA_SUCCESS)
        return io_fail(&c->st, GPU_ERR_LAUNCH, "kernel %s (%s %s) failed: %s",
                       v->kernel ? v->kernel : v->name, bench_op_name(v->op), v->name,
                       cu_result_text(r));
    if ((r = cu.EventElapsedTime(&t, c->ev0, c->ev1)) != CUDA_SUCCESS)
        goto out_driver;
    *ms = t;
    return 0;
out_driver:
    return io_fail(&c->st, GPU_ERR_DRIVER, "timing %s %s: %s", bench_op_name(v->op), v->name,
                   cu_result_text(r));
}

/* Prepares, runs once and checks v; if right, times it (one more warm-up
 * unless slow, then the runs) and checks the output again. Fills row. */
static int bench_measure_as(bench_ctx *c, const bench_variant *v, bench_row *row)
{
    int ok = 1, rc, reps = c->cfg->reps;
    double first;
    io_clear(&c->st);
    c->threads = v->threads ? v->threads : c->be->threads;
    if (v->where == ON_GPU && v->kernel && (rc = gpu_function(c->g, v->module, v->kernel, &c->f)) < 0)
        return bench_gpu_error(c, rc);
    if ((rc = bench_prepare(c, v)) < 0 || (rc = bench_once(c, v, &first)) < 0 ||
        (rc = bench_check(c, v, &ok, row->note, sizeof row->note)) < 0)
        goto out_fail;
    if (!ok) {
        row->status = BENCH_WRONG;
        return 0;
    }
    if (first > BENCH_SLOW_MS)
        reps = reps < BENCH_SLOW_REPS ? reps : BENCH_SLOW_REPS;
    else if ((rc = bench_once(c, v, &first)) < 0)
        goto out_fail;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t)
        return io_fail(&c->st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < reps && rc == 0; i++)
        rc = bench_once(c, v, &t[i]);
    if (rc == 0) {
        qsort(t, (size_t)reps, sizeof *t, bench_cmp_double);
        row->ms = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
        row->reps = reps;
    }
    free(t);
    if (rc < 0 || (rc = bench_check(c, v, &ok, row->note, sizeof row->note)) < 0)
        goto out_fail;
    if (!ok) {
        row->status = BENCH_WRONG;
        row->ms = 0;
        snprintf(row->note + strlen(row->note), sizeof row->note - strlen(row->note),
                 " (after %d runs)", reps + 2);
        return 0;
    }
    row->status = BENCH_OK;
    row->gbps = row->ms > 0 ? row->bytes / row->ms / 1e6 : 0;
    return 0;
out_fail:
    if (!c->st.text[0])
        bench_cu_error(c, rc, v->name);
    return rc;
}

/* bench_measure_as with v's instruction-set variant in use (runtime/simd.h). */
static int bench_measure(bench_ctx *c, const bench_variant *v, bench_row *row)
{
    simd_force(v->simd - 1);
    int rc = bench_measure_as(c, v, row);
    simd_force(-1);
    return rc;
}

/* ---- the run ---- */

/* A row describing v at size n, before measuring. */
static void bench_row_init(bench_row *row, const bench_ctx *c, const bench_variant *v, uint64_t n)
{
    memset(row, 0, sizeof *row);
    row->op = v->op;
    row->variant = v->name;
    row->idea = v->idea;
    row->article = v->article;
    row->on_gpu = v->where == ON_GPU;
    row->threads = row->on_gpu ? 0 : v->threads ? v->threads : c->be->threads;
    row->size = n;
    row->baseline = v->baseline;
    row->bytes = v->op == BENCH_COPY ? 2.0 * (double)n : bench_op_bytes(v->op, n);
}

/* Whether v runs on this backend. */
static int bench_runs_here(const bench_ctx *c, const bench_variant *v)
{
    if (v->where == ON_GPU)
        return c->g != NULL;
    if (v->where == ON_CPU_BACKEND)
        return c->g == NULL && (!v->simd || simd_runs(v->simd - 1));
    return 1;
}

typedef struct {
    double copy_gbps[2];  /* host, GPU */
    double baseline_ms;
    bench_emit_fn emit;
    void *ctx;
} bench_out;

/* Fills the ratios of a measured row and emits it. */
static void bench_emit(bench_out *o, bench_row *row)
{
    if (row->status == BENCH_OK) {
        double copy = o->copy_gbps[row->on_gpu];
        row->of_copy = copy > 0 ? row->gbps / copy : 0;
        if (row->baseline && row->op != BENCH_COPY)
            o->baseline_ms = row->ms;
        row->speedup = o->baseline_ms > 0 && row->ms > 0 ? o->baseline_ms / row->ms : 0;
    }
    o->emit(o->ctx, row);
}

/* Times the copies of the largest working set (bytes) on the device and the
 * host; records their bandwidths. */
static int bench_copies_run(bench_ctx *c, bench_out *o, size_t bytes)
{
    int rc = 0;
    c->copy_bytes = bytes;
    for (size_t i = 0; i < sizeof bench_copies / sizeof bench_copies[0] && rc == 0; i++) {
        const bench_variant *v = &bench_copies[i];
        if (!bench_runs_here(c, v))
            continue;
        bench_row row;
        bench_row_init(&row, c, v, bytes);
        if (v->where == ON_GPU) {
            if ((rc = bench_dev_alloc(c, &c->dx, bytes, "the copy source")) == 0 &&
                (rc = bench_dev_alloc(c, &c->dy, bytes, "the copy destination")) == 0 &&
                (rc = bench_poison(c, c->dx, bytes)) == 0)
                rc = bench_measure(c, v, &row);
        } else {
            c->copy_src = bench_alloc(c, bytes);
            c->copy_dst = c->copy_src ? bench_alloc(c, bytes) : NULL;
            if (!c->copy_dst) {
                rc = GPU_ERR_OUT_OF_MEMORY;
            } else {
                memset(c->copy_src, 1, bytes);
                memset(c->copy_dst, 0, bytes);
                rc = bench_measure(c, v, &row);
            }
            backend_host_free(c->be, c->copy_src);
            backend_host_free(c->be, c->copy_dst);
            c->copy_src = c->copy_dst = NULL;
        }
        bench_op_close(c);
        if (rc == 0) {
            o->copy_gbps[row.on_gpu] = row.gbps;
            bench_emit(o, &row);
        }
    }
    return rc;
}

/* The naive transpose over every block shape bx x by (powers of two up to
 * BENCH_SWEEP_MAX, at most 1024 threads), then its ladder row: the fastest
 * shape. */
static int bench_sweep(bench_ctx *c, const bench_variant *v, bench_out *o)
{
    bench_row best;
    int have_best = 0;
    for (unsigned by = 1; by <= BENCH_SWEEP_MAX; by *= 2)
        for (unsigned bx = 1; bx <= BENCH_SWEEP_MAX && bx * by <= 1024; bx *= 2) {
            bench_row row;
            bench_row_init(&row, c, v, c->n);
            row.sweep = 1;
            row.bx = (int)bx;
            row.by = (int)by;
            c->bx = bx;
            c->by = by;
            int rc = bench_measure(c, v, &row);
            if (rc < 0)
                return rc;
            bench_emit(o, &row);
            if (row.status == BENCH_OK && (!have_best || row.ms < best.ms)) {
                best = row;
                have_best = 1;
            }
        }
    if (!have_best) {
        bench_row row;
        bench_row_init(&row, c, v, c->n);
        row.status = BENCH_WRONG;
        snprintf(row.note, sizeof row.note, "wrong for every block shape");
        bench_emit(o, &row);
        return 0;
    }
    best.sweep = 0;
    char note[sizeof best.note];
    snprintf(note, sizeof note, "block %dx%d, the fastest of the sweep; %.120s", best.bx, best.by,
             best.note);
    memcpy(best.note, note, sizeof note);
    bench_emit(o, &best);
    return 0;
}

/* The axis op's rows, one per shape of bench_ax_shapes, from its variant
 * v; a row's bytes are the input read (the whole shape) and the parts
 * written. */
static int bench_axis_rows(bench_ctx *c, const bench_variant *v, bench_out *o)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof bench_ax_shapes / sizeof bench_ax_shapes[0] && rc == 0; i++) {
        bench_variant row_v = *v;
        bench_row row;
        c->ax_shape = &bench_ax_shapes[i];
        row_v.name = c->ax_shape->name;
        row_v.idea = c->ax_shape->idea;
        bench_row_init(&row, c, &row_v, c->n);
        if ((rc = bench_measure(c, &row_v, &row)) < 0)
            break;
        if (row.status == BENCH_OK) {
            ax_chunk_hdr h = ax_chunk_of(&c->ax, 0, c->ax.nelem);
            row.bytes = (double)c->ax_chunk.capacity +
                        (double)h.nentries * c->ax.width * c->axl.sum_size;
            row.gbps = row.bytes / row.ms / 1e6;
        }
        bench_emit(o, &row);
    }
    return rc;
}

/* Every variant of op at size n. */
static int bench_op_size(bench_ctx *c, bench_op op, uint64_t n, bench_out *o)
{
    int rc;
    c->n = n;
    o->baseline_ms = 0;
    switch (op) {
    case BENCH_REDUCE: rc = bench_reduce_open(c); break;
    case BENCH_TRANSPOSE: rc = bench_transpose_open(c); break;
    case BENCH_INFLATE: rc = bench_inflate_open(c); break;
    case BENCH_AXIS: rc = bench_axis_open(c); break;
    default: rc = bench_quadratic_open(c); break;
    }
    for (size_t i = 0; i < sizeof bench_variants / sizeof bench_variants[0] && rc == 0; i++) {
        const bench_variant *v = &bench_variants[i];
        if (v->op != op || !bench_runs_here(c, v))
            continue;
        if (v->sweep) {
            rc = bench_sweep(c, v, o);
            continue;
        }
        if (v->op == BENCH_AXIS) {
            rc = bench_axis_rows(c, v, o);
            continue;
        }
        bench_row row;
        bench_row_init(&row, c, v, n);
        if ((rc = bench_measure(c, v, &row)) == 0)
            bench_emit(o, &row);
    }
    bench_op_close(c);
    return rc;
}

/* Whether some variant of op runs on this backend. */
static int bench_op_here(const bench_ctx *c, bench_op op)
{
    for (size_t i = 0; i < sizeof bench_variants / sizeof bench_variants[0]; i++)
        if (bench_variants[i].op == op && bench_runs_here(c, &bench_variants[i]))
            return 1;
    return 0;
}

/* Opens the stream and timing events of the CUDA backend. */
static int bench_gpu_open(bench_ctx *c)
{
    int rc;
    if ((rc = gpu_bind(c->g)) < 0)
        return bench_cu_error(c, rc, "binding the device");
    CU_TRY(cu.StreamCreate(&c->s, CU_STREAM_NON_BLOCKING));
    CU_TRY(cu.EventCreate(&c->ev0, 0));
    CU_TRY(cu.EventCreate(&c->ev1, 0));
    return 0;
}

/* Destroys what bench_gpu_open made. */
static void bench_gpu_close(bench_ctx *c)
{
    if (c->s)
        cu.StreamSynchronize(c->s);
    if (c->ev0)
        cu.EventDestroy(c->ev0);
    if (c->ev1)
        cu.EventDestroy(c->ev1);
    if (c->s)
        cu.StreamDestroy(c->s);
}

/* Runs the copies, then every configured op and size. */
int bench_run(backend *be, const bench_config *cfg, bench_emit_fn emit, void *ctx, io_status *st)
{
    bench_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return io_fail(st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    c->be = be;
    c->cfg = cfg;
    c->g = be->kind == BACKEND_CUDA ? be->gpu : NULL;
    bench_out o = {{0, 0}, 0, emit, ctx};
    int rc = 0;
    if (c->g && (rc = bench_gpu_open(c)) < 0 && !c->st.text[0])
        bench_cu_error(c, rc, "creating a stream");
    double largest = 0;
    unsigned ops = 0; /* the ops asked for that have rows here */
    for (int op = BENCH_REDUCE; op < BENCH_NOPS; op++)
        if ((cfg->ops >> op & 1) && bench_op_here(c, (bench_op)op))
            ops |= 1u << op;
    for (int op = BENCH_REDUCE; op < BENCH_NOPS; op++)
        for (int i = 0; (ops >> op & 1) && i < cfg->nsizes[op]; i++)
            if (bench_op_bytes(op, cfg->sizes[op][i]) > largest)
                largest = bench_op_bytes(op, cfg->sizes[op][i]);
    if (rc == 0 && ops)
        rc = bench_copies_run(c, &o, (size_t)largest);
    for (int op = BENCH_REDUCE; op < BENCH_NOPS && rc == 0; op++)
        for (int i = 0; (ops >> op & 1) && i < cfg->nsizes[op] && rc == 0; i++)
            rc = bench_op_size(c, (bench_op)op, cfg->sizes[op][i], &o);
    if (rc < 0 && c->st.text[0])
        io_pass_as(st, rc, &c->st);
    else if (rc < 0)
        io_fail(st, rc, "%s", gpu_strerror(rc));
    bench_op_close(c);
    if (c->g)
        bench_gpu_close(c);
    free(c);
    return rc;
}
