/* engine.c - the slot lifecycle of streamed operations (see engine.h). */
#include "engine.h"
#include "backend_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "io/par.h"

typedef struct {
    engine_lane l;        /* CUDA: the slot's device, stream, inflate and deflate; its host
                             buffer on every backend */
    CUdeviceptr din;      /* plain input (made on the first plain chunk when compressed) */
    CUdeviceptr dout;     /* the results */
    const pl_gz_chunk *gz; /* the chunk's members, when compressed */
    void *state;          /* the operation's own */
    size_t bytes;         /* the chunk's input bytes */
    uint64_t offset;      /* its stream offset */
    uint64_t out_at;      /* output stream position of its results */
    gz_writer_span span;         /* the collected results, compressed */
    int made;             /* engine_slot_open ran */
    char kernels[ENGINE_KERNELS_LEN];
} engine_slot;

struct engine {
    backend *be;
    const engine_ops *ops;
    void *op;
    int nslots;
    size_t capacity;      /* input bytes of a chunk at most */
    size_t out_bytes;     /* a slot's result buffer */
    int in_planes, out_planes;
    int compressed;       /* chunks come as blocked gzip members */
    void *const *results; /* the caller's host result buffers, or NULL */
    int deflate;          /* results compressed on the device (engine_compress) */
    engine_slot *slots;
    unsigned char *states;
    io_status st; /* the last failure */
};

/* The block counts of an operation's input and results. */
static void engine_planes(const engine_ops *ops, const void *op, int *in, int *out)
{
    *in = *out = 1;
    if (ops->planes)
        ops->planes(op, in, out);
}

/* Bytes of a slot's host result buffer (see engine.h). */
size_t engine_result_bytes(int cuda, const engine_ops *ops, const void *op, size_t capacity)
{
    size_t bytes = ops->out_bytes(op, capacity);
    return cuda && ops->deflate ? block_deflate_host_bytes(bytes) : bytes;
}

/* Result bytes of a chunk of `bytes` input bytes. */
static size_t engine_results_of(const engine *e, size_t bytes)
{
    return e->ops->result_bytes ? e->ops->result_bytes(e->op, bytes) : 0;
}

/* Keeps device g's text of a failure as the engine's (a failed driver
 * call's own, where rc is one). */
static int engine_gpu_error(engine *e, gpu *g, int rc)
{
    rc = gpu_settle(g, rc, "a device call");
    return io_pass_as(&e->st, rc, gpu_status(g));
}

/* Allocates a slot's device buffer for plain input, its slack zeroed (the
 * kernels may read it; zeroing all keeps every byte they read defined). */
static int engine_input_buffer(engine *e, engine_slot *s)
{
    size_t n = e->capacity + e->ops->in_slack;
    int rc = gpu_mem_alloc(s->l.g, &s->din, n, e->ops->in_what);
    if (rc == 0 && e->ops->in_slack) {
        CUresult r = cu.MemsetD8Async(s->din, 0, n, s->l.q.stream);
        if (r != CUDA_SUCCESS)
            return io_fail(&e->st, GPU_ERR_DRIVER, "clearing device memory failed: %s",
                           cu_result_text(r));
    }
    return rc < 0 ? engine_gpu_error(e, s->l.g, rc) : 0;
}

/* Opens a lane's stream and inflate buffers (see engine.h). */
int engine_lane_open(engine_lane *l, gpu *g, size_t inflate_capacity)
{
    l->g = g;
    int rc = gpu_queue_open(g, &l->q);
    if (rc == 0 && inflate_capacity)
        rc = block_inflate_reserve(&l->z, g, inflate_capacity);
    return rc;
}

/* Frees a lane (see engine.h). */
void engine_lane_close(engine_lane *l, backend *be, int own_host)
{
    if (be->kind == BACKEND_CUDA && l->g) {
        gpu_bind(l->g);
        gpu_queue_close(&l->q);
        block_inflate_close(&l->z);
        block_deflate_close(&l->c);
    }
    if (own_host)
        backend_host_free(be, l->host);
    l->host = NULL;
}

/* Makes one slot: with CUDA the operation's state, the input buffers (the
 * inflate's for compressed chunks, else the plain input's), the result
 * buffer and the stream, device memory first (the large part, whose failure
 * deserves the clearest message); then the host result buffer, and the
 * deflate's once it is on. */
static int engine_slot_open(engine *e, engine_slot *s)
{
    backend *be = e->be;
    const engine_ops *ops = e->ops;
    s->made = 1;
    if (be->kind == BACKEND_CUDA) {
        gpu *g = s->l.g;
        int rc;
        if ((ops->slot_open && (rc = ops->slot_open(e->op, g, s->state)) < 0) ||
            (rc = engine_lane_open(&s->l, g, e->compressed ? e->capacity : 0)) < 0)
            return engine_gpu_error(e, g, rc);
        if (!e->compressed && (rc = engine_input_buffer(e, s)) < 0)
            return rc;
        if ((rc = gpu_mem_alloc(g, &s->dout, e->out_bytes, ops->out_what)) < 0)
            return engine_gpu_error(e, g, rc);
    }
    size_t hbytes = engine_result_bytes(be->kind == BACKEND_CUDA, ops, e->op, e->capacity);
    void *given = e->results && be->kind == BACKEND_CUDA ? e->results[s - e->slots] : NULL;
    if (given) /* the caller's, pinned now */
        s->l.host = backend_host_pin(be, given, hbytes) == 0 ? given : NULL;
    else
        s->l.host = backend_host_alloc(be, hbytes);
    if (!s->l.host)
        return io_fail(&e->st, GPU_ERR_OUT_OF_MEMORY, "%s", be->st.text);
    return e->deflate ? block_deflate_open_late(&s->l.c, s->l.g, e->out_bytes, s->l.host, &e->st) : 0;
}

/* Frees one slot (made or not). */
static void engine_slot_close(engine *e, engine_slot *s)
{
    backend *be = e->be;
    gpu *g = s->l.g;
    engine_lane_close(&s->l, be, !(e->results && be->kind == BACKEND_CUDA));
    if (be->kind == BACKEND_CUDA && g) {
        gpu_mem_free(g, s->din);
        gpu_mem_free(g, s->dout);
    }
}

/* Prepares the slots: all of them, or the first one with ops->lazy. */
int engine_open(engine **out, backend *be, const engine_ops *ops, void *op, int nslots,
                size_t capacity, int compressed, void *const *results)
{
    *out = NULL;
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return GPU_ERR_OUT_OF_MEMORY;
    e->be = be;
    e->ops = ops;
    e->op = op;
    e->nslots = nslots;
    e->capacity = capacity;
    e->out_bytes = ops->out_bytes(op, capacity);
    e->compressed = compressed;
    e->results = results;
    engine_planes(ops, op, &e->in_planes, &e->out_planes);
    e->slots = calloc((size_t)nslots, sizeof *e->slots);
    e->states = calloc((size_t)nslots, ops->slot_state ? ops->slot_state : 1);
    int rc = e->slots && e->states ? 0 : GPU_ERR_OUT_OF_MEMORY;
    for (int i = 0; rc == 0 && i < nslots; i++) {
        e->slots[i].l.g = backend_slot_gpu(be, i);
        e->slots[i].state = e->states + (size_t)i * ops->slot_state;
    }
    for (int i = 0; rc == 0 && i < (ops->lazy ? 1 : nslots); i++)
        rc = engine_slot_open(e, &e->slots[i]);
    if (rc < 0) {
        /* the reason outlives the engine in be->st.text */
        backend_fail(be, rc, "%s", e->st.text[0] ? e->st.text : "out of memory");
        engine_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* Frees every slot; accepts NULL. */
void engine_close(engine *e)
{
    if (!e)
        return;
    for (int i = 0; e->slots && i < e->nslots; i++)
        engine_slot_close(e, &e->slots[i]);
    free(e->slots);
    free(e->states);
    free(e);
}

/* The hooks' view of a slot's chunk. */
static engine_chunk engine_chunk_of(engine *e, engine_slot *s, const void *host, CUdeviceptr in)
{
    return (engine_chunk){.op = e->op, .state = s->state, .g = s->l.g, .stream = s->l.q.stream,
                          .in = in, .out = s->dout, .host_in = host, .host_out = s->l.host,
                          .bytes = s->bytes, .capacity = e->capacity, .offset = s->offset,
                          .kernels = s->kernels};
}

/* Queues the copies of `count` blocks of `bytes` each, `pitch` bytes apart
 * on both sides, on the slot's stream; to_device picks the direction. */
static int engine_copy_blocks(engine_slot *s, int to_device, CUdeviceptr dev, const void *host,
                              int count, size_t bytes, size_t pitch)
{
    for (int k = 0; k < count; k++) {
        CUdeviceptr d = dev + k * pitch;
        char *h = (char *)host + k * pitch;
        if (to_device)
            CU_TRY(cu.MemcpyHtoDAsync(d, h, bytes, s->l.q.stream));
        else
            CU_TRY(cu.MemcpyDtoHAsync(h, d, bytes, s->l.q.stream));
    }
    return 0;
}

/* Queues a chunk on its slot's stream: its input staged (inflated on the
 * device, or copied; none when it is on the device already), the
 * operation's kernels, its results compressed on
 * the device or copied back. 0, a negative gpu_error (text in the device)
 * or a failed driver call's code (cu_error's; CU_TRY recorded its line). */
static int engine_gpu_chunk(engine *e, engine_slot *s, const void *host, CUdeviceptr on_device)
{
    gpu *g = s->l.g;
    int rc = gpu_bind(g);
    if (rc < 0)
        return rc;
    CUdeviceptr in = on_device;
    if (on_device) {
        CU_TRY(gpu_queue_mark_copied(&s->l.q)); /* nothing to copy */
    } else if (s->gz) {
        if ((rc = block_inflate_stage(&s->l.z, g, s->l.q.stream, host, s->gz, e->capacity, s->l.q.copied,
                                      &in)) < 0)
            return rc;
    } else {
        if (!s->din && (rc = engine_input_buffer(e, s)) < 0)
            return rc;
        in = s->din;
        if ((rc = engine_copy_blocks(s, 1, s->din, host, e->in_planes, s->bytes,
                                     e->capacity / (size_t)e->in_planes)) < 0)
            return rc;
        CU_TRY(gpu_queue_mark_copied(&s->l.q));
    }
    engine_chunk c = engine_chunk_of(e, s, host, in);
    s->kernels[0] = 0;
    if ((rc = e->ops->launch(&c)) < 0)
        return rc;
    size_t results = engine_results_of(e, s->bytes);
    if (block_deflate_is_open(&s->l.c) && results)
        rc = block_deflate_queue(&s->l.c, s->l.q.stream, s->dout, s->out_at, results);
    else if (results)
        rc = engine_copy_blocks(s, 0, s->dout, s->l.host, e->out_planes,
                                results / (size_t)e->out_planes,
                                e->out_bytes / (size_t)e->out_planes);
    if (rc < 0)
        return rc;
    CU_TRY(gpu_queue_mark(&s->l.q));
    return 0;
}

typedef struct {
    const engine_chunk *c;
    const engine_ops *ops;
    size_t u0, u1;
} engine_cpu_job;

/* Thread body: one contiguous range of units. */
static void *engine_cpu_worker(void *arg)
{
    engine_cpu_job *j = arg;
    j->ops->cpu(j->c, j->u0, j->u1);
    return NULL;
}

/* Runs a chunk's units on up to be->threads threads; each unit writes its
 * own results, so the bytes are the same for any count. */
static void engine_cpu_chunk(engine *e, engine_slot *s, const void *host)
{
    engine_chunk c = engine_chunk_of(e, s, host, 0);
    size_t units = e->ops->units(e->op, s->bytes);
    size_t nt = (size_t)e->be->threads;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    if (nt > units)
        nt = units;
    if (nt < 1)
        return;
    engine_cpu_job jobs[PAR_MAX];
    for (size_t i = 0; i < nt; i++)
        jobs[i] = (engine_cpu_job){&c, e->ops, units * i / nt, units * (i + 1) / nt};
    par_run(engine_cpu_worker, jobs, sizeof jobs[0], nt);
}

/* Starts one chunk from the host or the device. */
static int engine_start(engine *e, int slot, const void *host, const pl_gz_chunk *gz,
                        CUdeviceptr on_device, size_t bytes, uint64_t offset, uint64_t out_at)
{
    engine_slot *s = &e->slots[slot];
    int rc = s->made ? 0 : engine_slot_open(e, s);
    if (rc < 0)
        return rc;
    s->bytes = 0; /* until taken: a refused chunk leaves the slot nothing to collect */
    s->offset = offset;
    s->gz = gz;
    s->out_at = out_at;
    if (bytes == 0)
        return 0;
    if (bytes > e->capacity)
        return io_fail(&e->st, GPU_ERR_INTERNAL, "a chunk of %zu bytes exceeds the engine's buffers",
                       bytes);
    if (e->ops->check && e->ops->check(e->op, bytes, &e->st) < 0)
        return e->st.code;
    s->bytes = bytes;
    if (e->be->kind != BACKEND_CUDA) {
        engine_cpu_chunk(e, s, host);
        return 0;
    }
    e->st.text[0] = 0;
    rc = engine_gpu_chunk(e, s, host, on_device);
    if (rc < 0) {
        /* what was queued before the failure ends, and the slot has nothing to collect (its
           device results, such as a member's check, were never made) */
        (void)cu.StreamSynchronize(s->l.q.stream);
        s->bytes = 0;
        char what[96];
        snprintf(what, sizeof what, "queueing a %s chunk", e->ops->name);
        rc = gpu_settle(s->l.g, rc, what);
    }
    if (rc < 0 && !e->st.text[0])
        engine_gpu_error(e, s->l.g, rc);
    if (rc < 0)
        e->st.code = rc;
    return rc;
}

/* Starts one chunk from host memory. */
int engine_submit(engine *e, int slot, const void *host, const pl_gz_chunk *gz, size_t bytes,
                  uint64_t offset, uint64_t out_at)
{
    return engine_start(e, slot, host, gz, 0, bytes, offset, out_at);
}

/* Starts one chunk already in the slot's device memory. */
int engine_submit_device(engine *e, int slot, CUdeviceptr data, size_t bytes, uint64_t offset,
                         uint64_t out_at)
{
    if (e->be->kind != BACKEND_CUDA)
        return io_fail(&e->st, GPU_ERR_INTERNAL, "device data given to an engine on the CPU");
    return engine_start(e, slot, NULL, NULL, data, bytes, offset, out_at);
}

/* Waits until a CUDA slot's chunk is copied from its host buffer. */
int engine_copied(engine *e, int slot, io_status *st)
{
    engine_slot *s = &e->slots[slot];
    if (e->be->kind != BACKEND_CUDA || s->bytes == 0)
        return 0;
    return gpu_queue_wait_copied(&s->l.q, st);
}

/* Waits for a slot and collects its results. */
int engine_collect(engine *e, int slot, const void **out, size_t *bytes)
{
    engine_slot *s = &e->slots[slot];
    *out = s->l.host;
    *bytes = engine_results_of(e, s->bytes);
    if (s->bytes == 0)
        return 0;
    if (e->be->kind == BACKEND_CUDA) {
        CUresult r = gpu_queue_wait(&s->l.q);
        if (r != CUDA_SUCCESS)
            return io_fail(&e->st, GPU_ERR_LAUNCH, "kernel %s failed: %s", s->kernels,
                           cu_result_text(r));
        if (s->gz && block_inflate_check(&s->l.z, s->gz, &e->st) < 0)
            return IO_ERR_CORRUPT;
        int rc = block_deflate_is_open(&s->l.c) ? block_deflate_collect(&s->l.c, &s->span, &e->st) : 0;
        if (rc < 0)
            return rc;
    }
    if (!e->ops->collect)
        return 0;
    engine_chunk c = engine_chunk_of(e, s, NULL, 0);
    int rc = e->ops->collect(&c, &e->st);
    if (rc < 0)
        e->st.code = rc;
    return rc;
}

/* Slot i's results on their way out: its deflate stage, device and pinned
 * buffer (block_deflate_slot_at). */
static block_deflate_slot *engine_out_buffer(void *ctx, int i, gpu **g, void **host)
{
    engine_slot *s = &((engine *)ctx)->slots[i];
    *g = s->l.g;
    *host = s->l.host;
    return &s->l.c;
}

/* Turns on device deflate of the results where it applies (see engine.h). */
int engine_compress(engine *e, int level)
{
    if (e->be->kind != BACKEND_CUDA || !e->ops->deflate || e->out_planes != 1 ||
        !block_deflate_level(level))
        return 0;
    int rc = block_deflate_open_all(e->nslots, engine_out_buffer, e, e->out_bytes, &e->st);
    if (rc == 1)
        e->deflate = 1;
    return rc;
}

/* The compressed results of a collected slot, when it has them. */
int engine_span(const engine *e, int slot, const gz_writer_span **span)
{
    const engine_slot *s = &e->slots[slot];
    *span = &s->span;
    return s->bytes && block_deflate_is_open(&s->l.c);
}

/* The engine's backend. */
backend *engine_backend(const engine *e)
{
    return e->be;
}

/* The last failure. */
const io_status *engine_status(const engine *e)
{
    return &e->st;
}
