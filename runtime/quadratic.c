/* quadratic.c - running the quadratic solver over chunks on either backend. */
#include "quadratic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "io/par.h"
#include "ptx/quadratic_math.h"

typedef struct {
    void *hout;       /* roots on the host (pinned with CUDA) */
    size_t rows;
    CUdeviceptr din, dout;
    gpu_queue q;
} qd_slot;

struct qd_engine {
    backend *be;
    dt_type dtype;
    int nslots;
    size_t max_rows;
    CUfunction kernel;
    qd_slot *slots;
    char err[2048];
};

/* Solves rows [0, rows) of in into out on the calling thread. */
void qd_cpu_rows(const void *in, size_t rows, dt_type dtype, void *out)
{
    if (dtype == DT_F32) {
        const float *c = in;
        float *r = out;
        for (size_t i = 0; i < rows; i++)
            qd_solve_f32(c[3 * i], c[3 * i + 1], c[3 * i + 2], &r[4 * i], &r[4 * i + 1],
                         &r[4 * i + 2], &r[4 * i + 3]);
    } else {
        const double *c = in;
        double *r = out;
        for (size_t i = 0; i < rows; i++)
            qd_solve_f64(c[3 * i], c[3 * i + 1], c[3 * i + 2], &r[4 * i], &r[4 * i + 1],
                         &r[4 * i + 2], &r[4 * i + 3]);
    }
}

typedef struct {
    const char *in;
    char *out;
    size_t rows;
    dt_type dtype;
} qd_cpu_job;

/* Thread body: one contiguous range of rows. */
static void *qd_cpu_worker(void *arg)
{
    qd_cpu_job *j = arg;
    qd_cpu_rows(j->in, j->rows, j->dtype, j->out);
    return NULL;
}

/* Frees one slot. */
static void qd_slot_close(qd_engine *e, qd_slot *s)
{
    backend *be = e->be;
    if (be->kind == BACKEND_CUDA) {
        gpu_queue_close(&s->q);
        gpu_mem_free(be->gpu, s->din);
        gpu_mem_free(be->gpu, s->dout);
    }
    backend_host_free(be, s->hout);
}

/* Allocates one slot: device buffers and stream with CUDA, host roots always. */
static int qd_slot_open(qd_engine *e, qd_slot *s)
{
    backend *be = e->be;
    size_t sz = dt_size(e->dtype);
    if (be->kind == BACKEND_CUDA) {
        gpu *g = be->gpu;
        int rc;
        if ((rc = gpu_mem_alloc(g, &s->din, e->max_rows * 3 * sz, "a coefficient chunk (--chunk)")) < 0 ||
            (rc = gpu_mem_alloc(g, &s->dout, e->max_rows * 4 * sz, "a roots chunk")) < 0 ||
            (rc = gpu_queue_open(g, &s->q)) < 0) {
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
            return rc;
        }
    }
    if (!(s->hout = backend_host_alloc(be, e->max_rows * 4 * sz))) {
        snprintf(e->err, sizeof e->err, "%s", be->err);
        return GPU_ERR_OUT_OF_MEMORY;
    }
    return 0;
}

/* Prepares the slots and, with CUDA, loads the kernel. */
int qd_engine_open(qd_engine **out, backend *be, int nslots, size_t max_rows, dt_type dtype)
{
    *out = NULL;
    qd_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GPU_ERR_OUT_OF_MEMORY;
    e->be = be;
    e->dtype = dtype;
    e->nslots = nslots;
    e->max_rows = max_rows ? max_rows : 1;
    e->slots = calloc((size_t)nslots, sizeof *e->slots);
    int rc = e->slots ? 0 : GPU_ERR_OUT_OF_MEMORY;
    if (rc == 0 && be->kind == BACKEND_CUDA) {
        gpu_bind(be->gpu);
        rc = gpu_function(be->gpu, dtype == DT_F32 ? "quadratic_f32" : "quadratic_f64", "qdk_rows",
                          &e->kernel);
        if (rc < 0)
            snprintf(e->err, sizeof e->err, "%s", gpu_error_text(be->gpu));
    }
    for (int i = 0; rc == 0 && i < nslots; i++)
        rc = qd_slot_open(e, &e->slots[i]);
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

/* Queues copy-in, the kernel and copy-out of one chunk on the slot's stream. */
static int qd_gpu_chunk(qd_engine *e, qd_slot *s, const void *host)
{
    gpu *g = e->be->gpu;
    size_t sz = dt_size(e->dtype);
    CU_TRY(cu.MemcpyHtoDAsync(s->din, host, s->rows * 3 * sz, s->q.stream));
    unsigned long long n = s->rows;
    size_t blocks = (s->rows + 255) / 256;
    unsigned grid = (unsigned)(blocks < 0x7fffffffu ? blocks : 0x7fffffffu);
    void *params[] = {&s->din, &n, &s->dout};
    int rc = gpu_launch(g, e->kernel, "qdk_rows", grid, 256, s->q.stream, params);
    if (rc < 0) {
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(g));
        return rc;
    }
    CU_TRY(cu.MemcpyDtoHAsync(s->hout, s->dout, s->rows * 4 * sz, s->q.stream));
    CU_TRY(gpu_queue_mark(&s->q));
    return 0;
}

/* Starts one chunk. */
int qd_engine_submit(qd_engine *e, int slot, const void *host, size_t rows)
{
    qd_slot *s = &e->slots[slot];
    s->rows = rows;
    if (rows == 0)
        return 0;
    if (rows > e->max_rows) {
        snprintf(e->err, sizeof e->err, "chunk of %zu rows exceeds the engine's buffers", rows);
        return GPU_ERR_DRIVER;
    }
    if (e->be->kind != BACKEND_CUDA) {
        size_t sz = dt_size(e->dtype), nt = (size_t)e->be->threads;
        if (nt > PAR_MAX)
            nt = PAR_MAX;
        if (nt > rows)
            nt = rows;
        qd_cpu_job jobs[PAR_MAX];
        for (size_t i = 0; i < nt; i++) {
            size_t r0 = rows * i / nt, r1 = rows * (i + 1) / nt;
            jobs[i] = (qd_cpu_job){(const char *)host + r0 * 3 * sz, (char *)s->hout + r0 * 4 * sz,
                                   r1 - r0, e->dtype};
        }
        par_run(qd_cpu_worker, jobs, sizeof jobs[0], nt);
        return 0;
    }
    e->err[0] = 0;
    int rc = qd_gpu_chunk(e, s, host);
    if (rc < 0 && !e->err[0]) {
        rc = gpu_fail(e->be->gpu, rc, "queueing a quadratic chunk");
        snprintf(e->err, sizeof e->err, "%s", gpu_error_text(e->be->gpu));
    }
    return rc;
}

/* Waits for a slot's roots. */
int qd_engine_collect(qd_engine *e, int slot, const void **roots, size_t *rows)
{
    qd_slot *s = &e->slots[slot];
    if (s->rows && e->be->kind == BACKEND_CUDA) {
        CUresult r = gpu_queue_wait(&s->q);
        if (r != CUDA_SUCCESS) {
            snprintf(e->err, sizeof e->err, "kernel qdk_rows failed: %s", cu_result_text(r));
            return GPU_ERR_LAUNCH;
        }
    }
    *roots = s->hout;
    *rows = s->rows;
    return 0;
}

/* The last error's text. */
const char *qd_engine_error(const qd_engine *e)
{
    return e->err;
}
