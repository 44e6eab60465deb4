/* hybrid.c - chunks to the CPU until the GPU is ready, then to the GPU. */
#include "hybrid.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/clock.h"
#include "msg.h"
#include "options.h"

/* The estimated CPU work a capped CPU takes on (hy_set_cpu_cost): half the
 * devices' usual start, since the output of the CPU's chunks goes first and
 * must be made before the GPU's first chunk is done. */
#define HY_CPU_CAP_SECONDS (CLI_GPU_START_SECONDS / 2)

/* How long after hy_open a capped CPU waits for the devices' start at most;
 * a slower start leaves the CPU to go on uncapped. */
#define HY_GPU_WAIT_SECONDS (3 * CLI_GPU_START_SECONDS)

#define HY_UNTAKEN 255 /* hy.side of a slot whose chunk no engine took */

/* GPU chunks whose copies to the device are awaited, in the order they were
 * submitted, and the thread that waits for each copy and gives the chunk's
 * buffer back to its ring. */
typedef struct {
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *slot;        /* the queue: a circle of nslots entries */
    pl_ring **ring;   /* each entry's ring */
    int head, count;
    unsigned char *waiting; /* per slot: queued, its buffer not given back yet */
    int stop;
    int failed;       /* a copy failed: err has why */
    char err[1024];
} hy_returns;

/* A device's own engine (hy_ops.per_device): opened on a backend of that
 * device alone once the start hands it out. */
typedef struct {
    backend view;        /* the device alone */
    void *engine;
    unsigned long long chunks;
} hy_device;

struct hy {
    backend *be;
    backend cpu_be;      /* auto: the CPU alone, for the CPU engine's own buffers (never pinned) */
    const hy_ops *ops;
    void *ctx;
    int nslots;
    size_t chunk_bytes;
    void *cpu;           /* the engine on the CPU (cpu, auto) */
    void *gpu;           /* the engine on the devices (cuda, or auto once they are ready); the
                            first device's to open with per_device */
    int per_device;      /* an engine per device, each taking chunks once open */
    hy_device *dev;      /* per_device: one per device of the list */
    int ndev;            /* per_device: devices listed (0 until known) */
    int turn;            /* per_device: the device whose turn it is */
    int dev_failed;      /* per_device: a device did not open (err says why) */
    int dev_settled;     /* per_device: every device is open, or will not be */
    int gpu_off;         /* auto: the devices will not be used */
    int whole_on_gpu;    /* hy_whole_engine() chose the GPU */
    unsigned char *side; /* per slot: 0 when the CPU took its chunk, 1 + d for device d (d = 0
                            without per_device) */
    void *span;          /* host decode of compressed chunks the CPU takes */
    unsigned long long chunks[2]; /* taken by the CPU, by the GPU */
    double cpu_ns;       /* one core's nanoseconds per data byte on the CPU, 0: no cap */
    double cpu_seconds;  /* the estimated work of the chunks the CPU took */
    double opened;       /* hy_open's time, seconds on the monotonic clock */
    int uncapped;        /* the start outlasted HY_GPU_WAIT_SECONDS */
    long long gate;      /* auto: the devices count as ready only once the CPU has taken this
                            many chunks (GPUBATCH_GPU_READY_AFTER), -1: as soon as they are */
    hy_returns ret;      /* buffers of GPU chunks, given back once copied */
    char err[2048];
};

/* Opens the engine of each device the start has handed out (per_device,
 * cuda); a device that did not open is an error for the next submit. */
static void hy_poll_devices(hy *h)
{
    if (h->dev_settled)
        return;
    if (!h->ndev)
        h->ndev = backend_devices_known(h->be);
    int open = 0;
    for (int d = 0; d < h->ndev; d++) {
        hy_device *v = &h->dev[d];
        gpu *g = v->engine ? NULL : backend_device(h->be, d);
        if (g) {
            v->view = (backend){.kind = BACKEND_CUDA, .gpu = g, .ngpu = 1,
                                .threads = h->be->threads};
            v->view.gpus[0] = g;
            if (h->ops->open(h->ctx, &v->view, h->nslots, &v->engine) < 0) {
                v->engine = NULL;
                snprintf(h->err, sizeof h->err, "%s", v->view.err);
                h->dev_failed = h->dev_settled = 1;
                return;
            }
            if (!h->gpu)
                h->gpu = v->engine;
            msg_info("backend cuda: device %d (%s) taking chunks %.3f s after the process "
                     "started, after %llu on other devices",
                     gpu_info(g)->ordinal, gpu_info(g)->name, msg_elapsed(), h->chunks[1]);
        }
        open += v->engine != NULL;
    }
    const char *why = open == h->ndev ? NULL : backend_device_failure(h->be);
    h->dev_settled = (h->ndev && open == h->ndev) || why;
    if (why) {
        snprintf(h->err, sizeof h->err, "%s", why);
        h->dev_failed = 1;
    }
}

/* Opens the engine of the devices once their start is done (auto); after
 * a failed start, or an engine that cannot open, the CPU goes on alone. */
static void hy_poll(hy *h)
{
    if (h->per_device) {
        hy_poll_devices(h);
        return;
    }
    if (h->gpu || h->gpu_off || !h->be->start)
        return;
    if (h->gate >= 0) {
        if (h->chunks[0] < (unsigned long long)h->gate)
            return;
        backend_gpu_wait(h->be);
        h->gate = -1;
    }
    backend *g = backend_gpu(h->be);
    if (!g) {
        const char *why = backend_fallback(h->be);
        if (why) {
            cli_report_fallback(h->be, why);
            h->gpu_off = 1;
        }
        return;
    }
    if (h->ops->open(h->ctx, g, h->nslots, &h->gpu) < 0) {
        msg_warn("cannot use the GPU: %s; going on with the CPU", g->err);
        h->gpu = NULL;
        h->gpu_off = 1;
        return;
    }
    double part[3], ms = backend_gpu_start_ms(h->be, part);
    msg_info("backend auto: CUDA ready %.0f ms after the start (driver and contexts %.0f ms, "
             "pinning %.0f ms, modules %.0f ms), after %llu chunks on the CPU",
             ms, part[0], part[1], part[2], h->chunks[0]);
}

/* Opens the first side's engine. */
int hy_open(hy **out, backend *be, const hy_ops *ops, void *ctx, int nslots, size_t chunk_bytes)
{
    hy *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h) {
        msg_error("out of memory");
        return 1;
    }
    h->be = be;
    h->ops = ops;
    h->ctx = ctx;
    h->nslots = nslots;
    h->chunk_bytes = chunk_bytes;
    h->opened = io_seconds();
    const char *gate = getenv("GPUBATCH_GPU_READY_AFTER");
    h->gate = gate && *gate ? strtoll(gate, NULL, 10) : -1;
    /* auto keeps one engine over every device, opened once all are open */
    int per_device = h->per_device = ops->per_device && be->kind == BACKEND_CUDA;
    if (!(h->side = calloc((size_t)nslots, 1)) ||
        !(h->ret.slot = calloc((size_t)nslots, sizeof *h->ret.slot)) ||
        !(h->ret.ring = calloc((size_t)nslots, sizeof *h->ret.ring)) ||
        !(h->ret.waiting = calloc((size_t)nslots, 1)) ||
        (per_device && !(h->dev = calloc(BACKEND_MAX_GPUS, sizeof *h->dev)))) {
        hy_close(h);
        msg_error("out of memory");
        return 1;
    }
    if (per_device ? cli_backend_first(be) : cli_backend_ready(be)) {
        hy_close(h);
        return 1;
    }
    if (per_device) {
        hy_poll_devices(h);
        if (!h->gpu) {
            msg_error("%s", h->err);
            hy_close(h);
            return 1;
        }
        *out = h;
        return 0;
    }
    backend *first = be;
    if (be->start) {
        h->cpu_be = *be;
        h->cpu_be.start = NULL;
        first = &h->cpu_be;
    }
    if (ops->open(ctx, first, nslots, be->kind == BACKEND_CUDA ? &h->gpu : &h->cpu) < 0) {
        msg_error("%s", first->err);
        hy_close(h);
        return 1;
    }
    *out = h;
    return 0;
}

/* The device that takes the next GPU chunk (per_device): the open ones in
 * turn, in the order of the list. */
static int hy_next_device(hy *h)
{
    for (int k = 0; k < h->ndev; k++) {
        int d = (h->turn + k) % h->ndev;
        if (h->dev[d].engine) {
            h->turn = (d + 1) % h->ndev;
            return d;
        }
    }
    return 0;
}

/* Decodes a compressed chunk for the CPU into h->span; gives up
 * (PL_DECODE_STOPPED) once *stop is set, if stop is not NULL. */
static int hy_decode(hy *h, const pl_chunk *c, const atomic_int *stop, const void **data)
{
    if (!h->span && !(h->span = malloc(pl_gz_span_bytes(h->chunk_bytes)))) {
        snprintf(h->err, sizeof h->err, "cannot allocate %zu bytes of host memory",
                 pl_gz_span_bytes(h->chunk_bytes));
        return GPU_ERR_OUT_OF_MEMORY;
    }
    return pl_gz_decode(c, h->span, h->be->threads, stop, data, h->err, sizeof h->err);
}

/* Keeps the engine's message of a failed call. */
static int hy_failed(hy *h, const void *engine, int rc)
{
    snprintf(h->err, sizeof h->err, "%s", h->ops->error(engine));
    return rc;
}

/* Sets the CPU's cost per data byte (see hybrid.h). */
void hy_set_cpu_cost(hy *h, double ns_per_byte)
{
    h->cpu_ns = ns_per_byte;
}

/* The estimated CPU seconds of a chunk of `bytes` data bytes. */
static double hy_cpu_share(const hy *h, size_t bytes)
{
    return (double)bytes * h->cpu_ns / (h->be->threads > 0 ? h->be->threads : 1) / 1e9;
}

/* Whether the CPU's chunks and one more of `bytes` would exceed the CPU's
 * cap, with the devices not ready yet (auto, a CPU cost). */
static int hy_cpu_spent(const hy *h, size_t bytes)
{
    return !h->gpu && !h->gpu_off && !h->uncapped && h->gate < 0 && h->be->start && h->cpu_ns > 0 &&
           h->cpu_seconds + hy_cpu_share(h, bytes) > HY_CPU_CAP_SECONDS;
}

/* Whether hy_submit() would wait for the devices' start (see hybrid.h). */
int hy_cpu_waits(hy *h, size_t bytes)
{
    hy_poll(h);
    return hy_cpu_spent(h, bytes);
}

/* Once the CPU's work is spent (hy_cpu_spent), waits for the devices' start
 * (at most until HY_GPU_WAIT_SECONDS after hy_open, then the CPU goes on
 * uncapped). */
static void hy_cap_cpu(hy *h, size_t bytes)
{
    if (!hy_cpu_spent(h, bytes))
        return;
    const struct timespec tick = {0, 1000000};
    for (;;) {
        hy_poll(h);
        if (h->gpu || h->gpu_off)
            return;
        if (io_seconds() - h->opened > HY_GPU_WAIT_SECONDS) {
            h->uncapped = 1;
            return;
        }
        nanosleep(&tick, NULL);
    }
}

/* Starts a chunk where it runs best now. */
int hy_submit(hy *h, const pl_chunk *c)
{
    h->side[c->slot] = HY_UNTAKEN; /* until an engine takes it */
    hy_poll(h);
    hy_cap_cpu(h, c->bytes);
    const void *data = c->data;
    const pl_gz_chunk *gz = c->gz;
    if (!h->gpu && gz) {
        /* inflating a chunk takes the CPU tens of milliseconds, the GPU a few:
         * the chunk goes to the GPU if it becomes ready meanwhile */
        int rc = hy_decode(h, c, h->gpu_off || h->gate >= 0 ? NULL : backend_gpu_ready_flag(h->be),
                           &data);
        if (rc == PL_DECODE_STOPPED) {
            hy_poll(h);
            rc = h->gpu ? 0 : hy_decode(h, c, NULL, &data); /* its engine did not open */
        }
        if (rc < 0)
            return rc;
        if (!h->gpu)
            gz = NULL;
    }
    if (h->dev_failed)
        return GPU_ERR_DRIVER; /* h->err has why */
    int on_gpu = h->gpu != NULL;
    void *engine = on_gpu ? h->gpu : h->cpu;
    int side = on_gpu;
    if (on_gpu && h->per_device) {
        int d = hy_next_device(h);
        engine = h->dev[d].engine;
        side = 1 + d;
        h->dev[d].chunks++;
    }
    if (!on_gpu)
        h->cpu_seconds += hy_cpu_share(h, c->bytes);
    h->side[c->slot] = (unsigned char)side;
    h->chunks[on_gpu]++;
    int rc = h->ops->submit(h->ctx, engine, c->slot, data, gz, c->bytes, c->offset);
    return rc < 0 ? hy_failed(h, engine, rc) : 0;
}

/* The returns thread: waits for each queued chunk's copies in turn and
 * gives its buffer back (also after a failed copy, which ends the run: the
 * reader must not be left waiting for it). */
static void *hy_returns_main(void *arg)
{
    hy *h = arg;
    hy_returns *t = &h->ret;
    char err[sizeof t->err];
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->count && !t->stop)
            pthread_cond_wait(&t->cv, &t->mu);
        if (!t->count)
            break;
        int slot = t->slot[t->head];
        pl_ring *pl = t->ring[t->head];
        pthread_mutex_unlock(&t->mu);
        int rc = h->ops->copied(h->ctx, hy_slot_engine(h, slot), slot, err, sizeof err);
        pl_release_buffer(pl, slot);
        pthread_mutex_lock(&t->mu);
        if (rc < 0 && !t->failed) {
            t->failed = rc;
            snprintf(t->err, sizeof t->err, "%s", err);
        }
        t->head = (t->head + 1) % h->nslots;
        t->count--;
        t->waiting[slot] = 0;
        pthread_cond_broadcast(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* A failed copy's error (with the lock held), or 0 when none failed. */
static int hy_returns_failure(hy *h)
{
    hy_returns *t = &h->ret;
    if (!t->failed)
        return 0;
    snprintf(h->err, sizeof h->err, "%s", t->err);
    return t->failed;
}

/* Hands a GPU chunk's buffer to the returns thread (see hybrid.h). */
int hy_release_buffer(hy *h, pl_ring *pl, int slot)
{
    hy_returns *t = &h->ret;
    if (!h->side[slot] || h->side[slot] == HY_UNTAKEN || !h->ops->copied)
        return 0;
    if (!t->started) {
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        if (pthread_create(&t->thread, NULL, hy_returns_main, h) != 0) {
            pthread_cond_destroy(&t->cv);
            pthread_mutex_destroy(&t->mu);
            snprintf(h->err, sizeof h->err, "cannot start a thread");
            return GPU_ERR_OUT_OF_MEMORY;
        }
        t->started = 1;
    }
    pl_buffer_returning(pl, slot);
    pthread_mutex_lock(&t->mu);
    int rc = hy_returns_failure(h);
    int at = (t->head + t->count) % h->nslots;
    t->slot[at] = slot;
    t->ring[at] = pl;
    t->count++;
    t->waiting[slot] = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Waits until the returns thread has given a slot's buffer back; 0, or a
 * failed copy's error. */
static int hy_wait_returned(hy *h, int slot)
{
    hy_returns *t = &h->ret;
    if (!t->started)
        return 0;
    pthread_mutex_lock(&t->mu);
    while (t->waiting[slot])
        pthread_cond_wait(&t->cv, &t->mu);
    int rc = hy_returns_failure(h);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Waits for a slot on its side. */
int hy_collect(hy *h, int slot, const void **out, size_t *bytes)
{
    int failed = hy_wait_returned(h, slot);
    if (failed < 0)
        return failed;
    if (h->side[slot] == HY_UNTAKEN) { /* its submit failed first: the run is over */
        *out = NULL;
        *bytes = 0;
        return 0;
    }
    void *engine = hy_slot_engine(h, slot);
    int rc = h->ops->collect(h->ctx, engine, slot, out, bytes);
    return rc < 0 ? hy_failed(h, engine, rc) : 0;
}

/* Writes a slot's result. */
int hy_write(hy *h, int slot, const void *out, size_t bytes, out_stream *o)
{
    if (h->ops->write)
        return h->ops->write(h->ctx, hy_slot_engine(h, slot), slot, out, bytes, o);
    return out_write(o, out, bytes);
}

/* The engine of a slot's side. */
void *hy_slot_engine(const hy *h, int slot)
{
    int side = h->side[slot];
    if (side == HY_UNTAKEN)
        return NULL;
    if (!side)
        return h->cpu;
    return h->per_device ? h->dev[side - 1].engine : h->gpu;
}

/* The engine opened first. */
void *hy_first_engine(const hy *h)
{
    return h->cpu ? h->cpu : h->gpu;
}

/* One side for work done whole. */
void *hy_whole_engine(hy *h, uint64_t bytes)
{
    if (bytes >= HY_WHOLE_GPU_BYTES && h->be->start && !h->gpu_off)
        backend_gpu_wait(h->be);
    hy_poll(h);
    h->whole_on_gpu = h->gpu != NULL;
    h->chunks[h->whole_on_gpu]++;
    return h->whole_on_gpu ? h->gpu : h->cpu;
}

/* A chunk's data for that side. */
int hy_whole_data(hy *h, const pl_chunk *c, const void **data, const pl_gz_chunk **gz)
{
    *data = c->data;
    *gz = c->gz;
    if (h->whole_on_gpu || !c->gz)
        return 0;
    *gz = NULL;
    return hy_decode(h, c, NULL, data);
}

/* The last failure's text. */
const char *hy_error(const hy *h)
{
    return h->err;
}

/* -v: chunks per side. */
void hy_report(const hy *h, const char *name)
{
    char each[1024] = ""; /* with several devices: how many each took */
    size_t at = 0;
    for (int d = 0; h->per_device && h->ndev > 1 && d < h->ndev; d++)
        if (h->dev[d].engine && at < sizeof each - 64) /* one entry is under 64 bytes */
            at += (size_t)snprintf(each + at, sizeof each - at, "%s%llu on device %d",
                                   at ? ", " : " (", h->dev[d].chunks,
                                   gpu_info(h->dev[d].view.gpu)->ordinal);
    if (at)
        strcat(each, ")");
    if (h->be->start || each[0])
        msg_info("%s: %llu chunks on the CPU, %llu on the GPU%s", name, h->chunks[0],
                 h->chunks[1], each);
}

/* Stops the returns thread and closes every engine. */
void hy_close(hy *h)
{
    if (!h)
        return;
    hy_returns *t = &h->ret;
    if (t->started) {
        pthread_mutex_lock(&t->mu);
        t->stop = 1;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        pthread_join(t->thread, NULL);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
    }
    free(t->slot);
    free(t->ring);
    free(t->waiting);
    if (h->cpu)
        h->ops->close(h->cpu);
    if (!h->be->leaving) { /* else the driver frees it all at exit */
        for (int d = 0; h->dev && d < BACKEND_MAX_GPUS; d++)
            if (h->dev[d].engine)
                h->ops->close(h->dev[d].engine);
        if (h->gpu && !h->per_device)
            h->ops->close(h->gpu);
    }
    free(h->dev);
    free(h->span);
    free(h->side);
    free(h);
}
