/* sched.c - chunks to the CPU until the devices are ready, then to them;
 * results in input order (see sched.h). */
#include "sched.h"
#include "backend_state.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "io/clock.h"

#define SCHED_UNTAKEN 255 /* sched.lane of a slot whose chunk no engine took */

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
    io_status st;     /* the first copy that failed (code 0: none) */
} sched_returns;

/* A device's own engine (per_device): opened on a backend of that device
 * alone once the start hands it out. */
typedef struct {
    backend view;     /* the device alone */
    engine *engine;
    unsigned long long chunks;
} sched_device;

/* -v's record of when the chunks were done (written or folded), in seconds
 * after the process started, and of the seconds the loop waited for input
 * and for results, and wrote them. */
typedef struct {
    unsigned long long chunks;
    double first, last;
    double input, results, writing;
} sched_clock;

struct sched {
    backend *be;
    backend cpu_be;      /* auto: the CPU alone, for the CPU engine's own buffers (never pinned) */
    sched_run_spec spec;
    sched_hooks hooks;
    engine *cpu;         /* the engine on the CPU (cpu, auto) */
    engine *gpu;         /* the engine on the devices (cuda, or auto once they are ready); the
                            first device's to open with per_device */
    backend *gpu_be;     /* the devices once ready (a run without engines: spec.ops NULL) */
    int per_device;      /* an engine per device, each taking chunks once open */
    sched_device *dev;   /* per_device: one per device of the list */
    int ndev;            /* per_device: devices listed (0 until known) */
    int turn;            /* per_device: the device whose turn it is */
    int dev_failed;      /* per_device: a device did not open (err says why) */
    int dev_settled;     /* per_device: every device is open, or will not be */
    int gpu_off;         /* auto: the devices will not be used */
    int whole_on_gpu;    /* sched_whole_backend() chose the GPU */
    unsigned char *lane; /* per slot: 0 when the CPU took its chunk, 1 + d for device d (d = 0
                            without per_device) */
    void *span;          /* host decode of compressed chunks the CPU takes */
    unsigned long long chunks[2]; /* taken by the CPU, by the GPU */
    double cpu_seconds;  /* the estimated work of the chunks the CPU took */
    double opened;       /* sched_open's time, seconds on the monotonic clock */
    int uncapped;        /* the start outlasted 3 usual starts */
    long long gate;      /* auto: the devices count as ready only once the CPU has taken this
                            many chunks (GPUBATCH_GPU_READY_AFTER), -1: as soon as they are */
    int level;           /* blocked gzip level of results compressed on the devices (0: none) */
    uint64_t out_next;   /* output stream position of the next chunk's results */
    sched_returns ret;   /* buffers of GPU chunks, given back once copied */
    tp_stage *stage;     /* spec.whole: the matrix staged on one lane (sched_stage_open) */
    gzstream *z;         /* sched_run_member: the device's inflate of a member, kept from one
                            input to the next */
    void *staging[GZSTREAM_SETS]; /* its staging buffers (spec.member, or its first use):
                                     the first pinned by the devices' start, the others
                                     by gzstream */
    void **results;      /* spec.results: the devices' slots' host result buffers */
    sched_clock clock;
    io_status st;        /* the last failure: its code and line (sched_status) */
};

/* Records a failure of the scheduler's own: its code and a copy of its
 * line; returns the code. */
static int sched_fail(sched *h, int code, const char *text)
{
    return io_fail(&h->st, code, "%s", text);
}

/* Records the failure rc of what keeps its own (an engine, the staged
 * matrix, the member's inflate, the returns thread, a backend, a reader, a
 * ring, or the scheduler's own as it stood): rc with that line; returns rc. */
static int sched_take(sched *h, int rc, const io_status *st)
{
    return io_pass_as(&h->st, rc, st);
}

/* Passes one formatted line to a hook (info or warn). */
static void sched_say(void (*hook)(const char *), const char *fmt, ...)
{
    if (!hook)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    hook(line);
}

/* Seconds since the process started. */
static double sched_elapsed(const sched *h)
{
    return io_seconds() - h->hooks.started;
}

/* Opens an engine of the run on backend be, compressing on the device from
 * the next chunk on where the run's output is compressed (a run without
 * engines only notes the backend). 0, or negative with the reason in
 * be->st.text. */
static int sched_engine_open(sched *h, backend *be, engine **out)
{
    const sched_run_spec *s = &h->spec;
    *out = NULL;
    if (!s->ops) {
        if (be->kind == BACKEND_CUDA)
            h->gpu_be = be;
        return 0;
    }
    int rc = engine_open(out, be, s->ops, s->op, s->nslots, s->capacity, s->compressed,
                         be->kind == BACKEND_CUDA ? h->results : NULL);
    if (rc == 0 && h->level > 0 && (rc = engine_compress(*out, h->level)) < 0) {
        backend_fail(be, rc, "%s", engine_status(*out)->text);
        engine_close(*out);
    }
    if (rc < 0)
        *out = NULL;
    return rc < 0 ? rc : 0;
}

/* The CPU goes on without the devices (auto): on every core. */
static void sched_cpu_alone(sched *h)
{
    h->gpu_off = 1;
    h->cpu_be.threads = h->be->threads;
}

/* -v: auto's devices ready ms after their start began, and its parts. */
static void sched_say_ready(const sched *h, double ms, const double part[3])
{
    sched_say(h->hooks.info,
              "backend auto: CUDA ready %.0f ms after the start (driver and contexts %.0f ms, "
              "pinning %.0f ms, modules %.0f ms), after %llu chunks on the CPU",
              ms, part[0], part[1], part[2], h->chunks[0]);
}

/* Opens the engine of each device the start has handed out (per_device).
 * 0; or -1 when a listed device will not be had, or its engine did not open
 * (h->st says why, and no further device is polled). */
static int sched_open_devices(sched *h)
{
    if (h->dev_settled)
        return 0;
    if (!h->ndev)
        h->ndev = backend_devices_known(h->be);
    int open = 0;
    for (int d = 0; d < h->ndev; d++) {
        sched_device *v = &h->dev[d];
        gpu *g = v->engine ? NULL : backend_device(h->be, d);
        if (g) {
            v->view = (backend){.kind = BACKEND_CUDA, .gpu = g, .ngpu = 1,
                                .threads = h->be->threads};
            v->view.gpus[0] = g;
            if (sched_engine_open(h, &v->view, &v->engine) < 0) {
                sched_take(h, v->view.st.code ? v->view.st.code : GPU_ERR_DRIVER, &v->view.st);
                h->dev_settled = 1;
                return -1;
            }
            if (!h->gpu) {
                h->gpu = v->engine;
                if (h->be->kind != BACKEND_CUDA) {
                    double part[3], ms = backend_first_device_ms(h->be, part);
                    sched_say_ready(h, ms, part);
                }
            }
            sched_say(h->hooks.info,
                      "backend cuda: device %d (%s) taking chunks %.3f s after the process "
                      "started, after %llu on other devices",
                      gpu_info(g)->ordinal, gpu_info(g)->name, sched_elapsed(h), h->chunks[1]);
        }
        open += v->engine != NULL;
    }
    const char *why = open == h->ndev ? NULL : backend_device_failure(h->be);
    h->dev_settled = (h->ndev && open == h->ndev) || why;
    if (why) {
        sched_fail(h, GPU_ERR_DRIVER, why);
        return -1;
    }
    return 0;
}

/* cuda's devices (per_device): a device that did not open is an error for
 * the next submit. */
static void sched_poll_devices(sched *h)
{
    if (sched_open_devices(h) < 0)
        h->dev_failed = 1;
}

/* Whether the devices take work now. */
static int sched_gpu_ready(const sched *h)
{
    return h->gpu || h->gpu_be;
}

/* auto's start failed: the CPU goes on alone once its reason is told (here,
 * or before the run). */
static void sched_start_failed(sched *h)
{
    const char *why = backend_fallback(h->be);
    if (why && h->hooks.fallback)
        h->hooks.fallback(h->be, why);
    if (why || backend_start_failed(h->be))
        sched_cpu_alone(h);
}

/* auto with an engine per device: each device takes chunks as soon as it
 * opens; where none opens the CPU goes on alone, and a device that fails
 * while others are open is left with a warning. */
static void sched_poll_auto_devices(sched *h)
{
    if (sched_open_devices(h) == 0) {
        if (!h->gpu && !h->ndev && backend_start_failed(h->be))
            sched_start_failed(h); /* it failed before it knew of any device */
        return;
    }
    if (h->gpu) {
        sched_say(h->hooks.warn, "cannot use every CUDA device: %s; going on with those open",
                  h->st.text);
        backend_fallback(h->be); /* told */
    } else if (backend_start_failed(h->be)) {
        sched_start_failed(h);
    } else { /* the device opened, its engine did not */
        sched_say(h->hooks.warn, "cannot use the GPU: %s; going on with the CPU", h->st.text);
        sched_cpu_alone(h);
    }
    io_clear(&h->st); /* not the run's failure */
}

/* Opens the engines of the devices once they are open (auto: the whole
 * start, or each device with per_device); after a failed start, or an
 * engine that cannot open, the CPU goes on alone. */
static void sched_poll(sched *h)
{
    if (h->per_device && h->be->kind == BACKEND_CUDA) {
        sched_poll_devices(h);
        return;
    }
    if (h->gpu_off || !h->be->start || (h->per_device ? h->dev_settled : sched_gpu_ready(h)))
        return;
    if (h->gate >= 0) {
        if (h->chunks[0] < (unsigned long long)h->gate)
            return;
        backend_gpu_wait(h->be);
        h->gate = -1;
    }
    if (h->per_device) {
        sched_poll_auto_devices(h);
        return;
    }
    backend *g = backend_gpu(h->be);
    if (!g) {
        sched_start_failed(h);
        return;
    }
    if (sched_engine_open(h, g, &h->gpu) < 0) {
        sched_say(h->hooks.warn, "cannot use the GPU: %s; going on with the CPU", g->st.text);
        sched_cpu_alone(h);
        return;
    }
    double part[3], ms = backend_gpu_start_ms(h->be, part);
    sched_say_ready(h, ms, part);
}

/* Makes the devices' slots' host result buffers (spec.results), unpinned;
 * 0, or negative with the reason in h->be->st.text. */
static int sched_results(sched *h)
{
    const sched_run_spec *s = &h->spec;
    size_t bytes = engine_result_bytes(1, s->ops, s->op, s->capacity);
    if (!(h->results = calloc((size_t)s->nslots, sizeof *h->results)))
        return backend_fail(h->be, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < s->nslots; i++)
        if (!(h->results[i] = backend_host_unpinned(h->be, bytes)))
            return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Makes the member's staging buffers, once: the first pinned by the devices'
 * start (pinned now once they are open), the others only faulted in, since
 * pinning them would lengthen the start (gzstream pins them a piece at a
 * time as it first reads into them); without them gzstream makes its own. */
static void sched_member_staging(sched *h)
{
    if (!h->staging[0])
        h->staging[0] = backend_host_alloc(h->be, gzstream_staging_bytes());
    for (int i = 1; i < GZSTREAM_SETS; i++)
        if (!h->staging[i])
            h->staging[i] = backend_host_unpinned(h->be, gzstream_staging_bytes());
}

/* Opens the first lane's engine. */
int sched_open(sched **out, backend *be, const sched_run_spec *spec, const sched_hooks *hooks,
               io_status *st)
{
    sched *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h)
        return io_fail(st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    h->be = be;
    h->spec = *spec;
    h->hooks = *hooks;
    h->opened = io_seconds();
    const char *gate = getenv("GPUBATCH_GPU_READY_AFTER");
    h->gate = gate && *gate ? strtoll(gate, NULL, 10) : -1;
    /* with auto, where the devices start beside the CPU */
    int per_device = h->per_device = spec->per_device && (be->kind == BACKEND_CUDA || be->start);
    int nslots = spec->nslots;
    if (!(h->lane = calloc((size_t)nslots, 1)) ||
        !(h->ret.slot = calloc((size_t)nslots, sizeof *h->ret.slot)) ||
        !(h->ret.ring = calloc((size_t)nslots, sizeof *h->ret.ring)) ||
        !(h->ret.waiting = calloc((size_t)nslots, 1)) ||
        (per_device && !(h->dev = calloc(BACKEND_MAX_GPUS, sizeof *h->dev)))) {
        sched_close(h);
        return io_fail(st, GPU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (spec->member)
        sched_member_staging(h);
    if (spec->results && backend_may_use_gpu(be) && sched_results(h) < 0) {
        io_fail(st, GPU_ERR_OUT_OF_MEMORY, "%s", be->st.text);
        sched_close(h);
        return GPU_ERR_OUT_OF_MEMORY;
    }
    if (hooks->ready && hooks->ready(be, per_device)) {
        sched_close(h);
        return io_fail(st, GPU_ERR_NO_DEVICE, "%s", ""); /* the hook said why */
    }
    int rc = 0;
    if (be->start) {
        h->cpu_be = *be;
        h->cpu_be.start = NULL;
        /* while the devices start, the CPU lane leaves them half the cores: the driver's
           start needs the host's cores too, and took longer beside every core busy
           (BENCHMARKS.md) */
        h->cpu_be.threads = be->threads > 1 ? be->threads / 2 : 1;
    }
    if (per_device && be->kind == BACKEND_CUDA) {
        sched_poll_devices(h);
        if (!h->gpu)
            rc = GPU_ERR_DRIVER;
    } else {
        backend *first = be->start ? &h->cpu_be : be;
        rc = sched_engine_open(h, first, be->kind == BACKEND_CUDA ? &h->gpu : &h->cpu);
        if (rc < 0)
            sched_take(h, rc, &first->st);
    }
    if (rc < 0) {
        io_fail(st, rc, "%s", h->st.text);
        sched_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

/* Sets the CPU's cost per data byte (see sched.h). */
void sched_cpu_cost(sched *h, double ns_per_byte)
{
    h->spec.cpu_ns = ns_per_byte;
}

/* Turns on device deflate of the results (see sched.h). */
int sched_compress(sched *h, int level, uint64_t offset)
{
    h->level = level;
    h->out_next = offset;
    engine *each[BACKEND_MAX_GPUS + 1];
    int n = 0;
    if (h->per_device) {
        for (int d = 0; d < h->ndev; d++)
            if (h->dev[d].engine)
                each[n++] = h->dev[d].engine;
    } else if (h->gpu) {
        each[n++] = h->gpu;
    }
    for (int i = 0; i < n; i++) {
        int rc = engine_compress(each[i], level);
        if (rc < 0)
            return sched_take(h, rc, engine_status(each[i]));
    }
    return 0;
}

/* The device that takes the next GPU chunk (per_device): the open ones in
 * turn, in the order of the list. */
static int sched_next_device(sched *h)
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

/* The threads of the CPU lane now. */
static int sched_cpu_threads(const sched *h)
{
    return h->be->start ? h->cpu_be.threads : h->be->threads;
}

/* Decodes a compressed chunk for the CPU into h->span; gives up
 * (PL_DECODE_STOPPED) once *stop is set, if stop is not NULL. */
static int sched_decode(sched *h, const pl_chunk *c, const atomic_int *stop, const void **data)
{
    size_t bytes = pl_gz_span_bytes(h->spec.capacity);
    if (!h->span && !(h->span = malloc(bytes)))
        return io_fail(&h->st, GPU_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                       bytes);
    return pl_gz_decode(c, h->span, sched_cpu_threads(h), stop, data, &h->st);
}

/* Keeps the engine's message of a failed call. */
static int sched_failed(sched *h, const engine *e, int rc)
{
    return sched_take(h, rc, engine_status(e));
}

/* The estimated CPU seconds of a chunk of `bytes` data bytes. */
static double sched_cpu_share(const sched *h, size_t bytes)
{
    int threads = sched_cpu_threads(h);
    return (double)bytes * h->spec.cpu_ns / (threads > 0 ? threads : 1) / 1e9;
}

/* Whether the CPU's chunks and one more of `bytes` would exceed the CPU's
 * cap, half the devices' usual start, with the devices not ready yet (auto,
 * a CPU cost): the output of the CPU's chunks goes first and must be made
 * before the GPU's first chunk is done. */
static int sched_cpu_spent(const sched *h, size_t bytes)
{
    return !sched_gpu_ready(h) && !h->gpu_off && !h->uncapped && h->gate < 0 && h->be->start &&
           h->spec.cpu_ns > 0 &&
           h->cpu_seconds + sched_cpu_share(h, bytes) > h->spec.start_seconds / 2;
}

/* The device that could inflate a member now (see sched_stream_gpu), or
 * NULL; waits for nothing. */
static gpu *sched_member_gpu(sched *h)
{
    sched_poll(h);
    const backend *b = h->gpu ? engine_backend(h->gpu) : h->gpu_be; /* engines, or a stage's */
    /* one engine over several devices would run the chunks on all of them */
    if (!b || (!h->per_device && b->ngpu != 1))
        return NULL;
    return b->gpu;
}

/* Whether a submit of `bytes` would wait for the devices' start: the loop
 * writes out the CPU's results first, so that their output is made while
 * the start ends. */
static int sched_cpu_waits(sched *h, size_t bytes)
{
    sched_poll(h);
    return sched_cpu_spent(h, bytes);
}

/* Once the CPU's work is spent (sched_cpu_spent), waits for the devices'
 * start (at most 3 usual starts after sched_open, then the CPU goes on
 * uncapped). */
static void sched_cap_cpu(sched *h, size_t bytes)
{
    if (!sched_cpu_spent(h, bytes))
        return;
    const struct timespec tick = {0, 1000000};
    for (;;) {
        sched_poll(h);
        if (sched_gpu_ready(h) || h->gpu_off)
            return;
        if (io_seconds() - h->opened > 3 * h->spec.start_seconds) {
            h->uncapped = 1;
            h->cpu_be.threads = h->be->threads;
            return;
        }
        nanosleep(&tick, NULL);
    }
}

/* The output position of a chunk of `bytes` input bytes taken now: every
 * chunk moves the output on, whichever lane takes it. */
static uint64_t sched_place(sched *h, size_t bytes)
{
    uint64_t at = h->out_next;
    if (h->spec.ops->result_bytes)
        h->out_next += h->spec.ops->result_bytes(h->spec.op, bytes);
    return at;
}

/* Starts a chunk where it runs best now. */
static int sched_submit(sched *h, const pl_chunk *c)
{
    h->lane[c->slot] = SCHED_UNTAKEN; /* until an engine takes it */
    sched_poll(h);
    sched_cap_cpu(h, c->bytes);
    const void *data = c->data;
    const pl_gz_chunk *gz = c->gz;
    if (!h->gpu && gz) {
        /* inflating a chunk takes the CPU tens of milliseconds, the GPU a few:
         * the chunk goes to the GPU if it becomes ready meanwhile */
        int rc = sched_decode(h, c,
                              h->gpu_off || h->gate >= 0 ? NULL : backend_gpu_ready_flag(h->be),
                              &data);
        if (rc == PL_DECODE_STOPPED) {
            sched_poll(h);
            rc = h->gpu ? 0 : sched_decode(h, c, NULL, &data); /* its engine did not open */
        }
        if (rc < 0)
            return rc;
        if (!h->gpu)
            gz = NULL;
    }
    if (h->dev_failed)
        return GPU_ERR_DRIVER; /* h->st.text has why */
    int on_gpu = h->gpu != NULL;
    engine *e = on_gpu ? h->gpu : h->cpu;
    int lane = on_gpu;
    if (on_gpu && h->per_device) {
        int d = sched_next_device(h);
        e = h->dev[d].engine;
        lane = 1 + d;
        h->dev[d].chunks++;
    }
    if (!on_gpu)
        h->cpu_seconds += sched_cpu_share(h, c->bytes);
    h->lane[c->slot] = (unsigned char)lane;
    h->chunks[on_gpu]++;
    int rc = engine_submit(e, c->slot, data, gz, c->bytes, c->offset, sched_place(h, c->bytes));
    return rc < 0 ? sched_failed(h, e, rc) : 0;
}

/* The engine that took a slot's chunk, or NULL. */
static engine *sched_slot_engine(const sched *h, int slot)
{
    int lane = h->lane[slot];
    if (lane == SCHED_UNTAKEN)
        return NULL;
    if (!lane)
        return h->cpu;
    return h->per_device ? h->dev[lane - 1].engine : h->gpu;
}

/* The returns thread: waits for each queued chunk's copies in turn and
 * gives its buffer back (also after a failed copy, which ends the run: the
 * reader must not be left waiting for it). */
static void *sched_returns_main(void *arg)
{
    sched *h = arg;
    sched_returns *t = &h->ret;
    io_status st;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->count && !t->stop)
            pthread_cond_wait(&t->cv, &t->mu);
        if (!t->count)
            break;
        int slot = t->slot[t->head];
        pl_ring *pl = t->ring[t->head];
        pthread_mutex_unlock(&t->mu);
        int rc = engine_copied(sched_slot_engine(h, slot), slot, &st);
        pl_release_buffer(pl, slot);
        pthread_mutex_lock(&t->mu);
        if (rc < 0 && !t->st.code)
            io_fail(&t->st, rc, "%s", st.text);
        t->head = (t->head + 1) % h->spec.nslots;
        t->count--;
        t->waiting[slot] = 0;
        pthread_cond_broadcast(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* A failed copy's error (with the lock held), or 0 when none failed. */
static int sched_returns_failure(sched *h)
{
    sched_returns *t = &h->ret;
    if (!t->st.code)
        return 0;
    return sched_take(h, t->st.code, &t->st);
}

/* Gives the buffer of a submitted chunk back to ring pl once the lane that
 * took it no longer reads it: where a device took it, the returns thread
 * gives it back once its copies are done, without holding up the loop, so
 * that the next chunks go to the devices meanwhile (with several devices,
 * their copies overlap); else (the CPU) the buffer stays with the chunk.
 * 0, or negative: an earlier chunk's copy failed, or no thread. */
static int sched_release_buffer(sched *h, pl_ring *pl, int slot)
{
    sched_returns *t = &h->ret;
    if (!h->lane[slot] || h->lane[slot] == SCHED_UNTAKEN)
        return 0;
    if (!t->started) {
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        if (pthread_create(&t->thread, NULL, sched_returns_main, h) != 0) {
            pthread_cond_destroy(&t->cv);
            pthread_mutex_destroy(&t->mu);
            return sched_fail(h, GPU_ERR_OUT_OF_MEMORY, "cannot start a thread");
        }
        t->started = 1;
    }
    pl_buffer_returning(pl, slot);
    pthread_mutex_lock(&t->mu);
    int rc = sched_returns_failure(h);
    int at = (t->head + t->count) % h->spec.nslots;
    t->slot[at] = slot;
    t->ring[at] = pl;
    t->count++;
    t->waiting[slot] = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Waits until the returns thread has given a slot's buffer back; a failed
 * copy becomes the run's failure (*status, its text in h->st.text) unless an
 * earlier one is. */
static void sched_wait_returned(sched *h, int slot, int *status)
{
    sched_returns *t = &h->ret;
    if (!t->started)
        return;
    pthread_mutex_lock(&t->mu);
    while (t->waiting[slot])
        pthread_cond_wait(&t->cv, &t->mu);
    if (t->st.code && !*status)
        *status = sched_returns_failure(h);
    pthread_mutex_unlock(&t->mu);
}

/* Adds the seconds since `since` to *part; returns the time now. */
static double sched_clock_add(const sched *h, double *part, double since)
{
    double now = sched_elapsed(h);
    *part += now - since;
    return now;
}

/* Notes a chunk done now. */
static void sched_clock_mark(sched *h)
{
    sched_clock *t = &h->clock;
    t->last = sched_elapsed(h);
    if (t->chunks++ == 0)
        t->first = t->last;
}

/* Collects slot's chunk from engine e (NULL: its submit failed first, the
 * run is over) and writes its results unless the run has failed; *status
 * keeps the first failure in input order, h->st.text its text. */
static void sched_finish(sched *h, engine *e, int slot, int *status)
{
    const void *out = NULL;
    size_t bytes = 0;
    double at = sched_elapsed(h);
    int rc = e ? engine_collect(e, slot, &out, &bytes) : 0; /* the slot goes idle either way */
    at = sched_clock_add(h, &h->clock.results, at);
    const gz_writer_span *span;
    if (rc < 0 && !*status)
        *status = sched_failed(h, e, rc);
    else if (rc == 0 && !*status && e && h->hooks.write_out)
        *status = h->hooks.write_out(h->hooks.ctx, engine_span(e, slot, &span) ? span : NULL,
                                     out, bytes) != 0;
    sched_clock_add(h, &h->clock.writing, at);
    sched_clock_mark(h);
}

/* Collects the oldest chunk, writes its results (none after a failure) and
 * gives its slot back to every ring; *status keeps the first failure. */
static void sched_retire(sched *h, const sched_input *in, int *status)
{
    int slot = pl_oldest(in->rings[0]);
    sched_wait_returned(h, slot, status);
    sched_finish(h, sched_slot_engine(h, slot), slot, status);
    for (int k = 0; k < in->nrings; k++)
        pl_release(in->rings[k], slot);
}

/* Takes the next chunk of the input. */
static int sched_next(sched *h, const sched_input *in, pl_chunk *c)
{
    if (in->next) {
        int rc = in->next(in->ctx, c, &h->st);
        return rc < 0 ? (h->st.code = rc) : rc;
    }
    int rc = pl_next(in->rings[0], c);
    return rc < 0 ? sched_take(h, rc, pl_status(in->rings[0])) : rc;
}

/* After the newest chunk failed as it was submitted (rc, its text in
 * h->st.text): the chunks before it are collected and written first, so that
 * their failures come first; returns the run's status. */
static int sched_submit_failed(sched *h, const sched_input *in, int rc)
{
    io_status why = h->st;
    int status = 0;
    while (pl_outstanding(in->rings[0]) > 1)
        sched_retire(h, in, &status);
    return status ? status : sched_take(h, rc, &why);
}

/* The device that inflates a member for sched_run_member: with cuda the
 * first open device; with auto, once its start is over (waited for), its
 * device where it has one; else NULL (the member is read on the host). */
static gpu *sched_stream_gpu(sched *h)
{
    if (!h->spec.ops && !h->spec.whole)
        return NULL;
    if (h->be->kind != BACKEND_CUDA && h->be->start && !h->gpu_off) /* auto: worth waiting for */
        backend_gpu_wait(h->be);
    return sched_member_gpu(h);
}

/* The per-device entry of the engine e, or NULL. */
static sched_device *sched_device_of(sched *h, const engine *e)
{
    for (int d = 0; h->per_device && d < h->ndev; d++)
        if (h->dev[d].engine == e)
            return &h->dev[d];
    return NULL;
}

/* The backend for work of `bytes` bytes that one lane must do whole: the
 * devices' if ready now, or once their start is over for work of
 * COST_WHOLE_GPU_BYTES or more; else the CPU's. */
static backend *sched_whole_backend(sched *h, uint64_t bytes)
{
    if (bytes >= COST_WHOLE_GPU_BYTES && h->be->start && !h->gpu_off)
        backend_gpu_wait(h->be);
    sched_poll(h);
    h->whole_on_gpu = sched_gpu_ready(h);
    h->chunks[h->whole_on_gpu]++;
    if (h->gpu)
        return engine_backend(h->gpu);
    if (h->gpu_be)
        return h->gpu_be;
    h->cpu_be.threads = h->be->threads; /* the CPU does it all */
    return h->be->start ? &h->cpu_be : h->be;
}

/* The data of chunk c for the backend sched_whole_backend() gave: c's own
 * for the GPU or a plain chunk, else c decoded on the host (*gz set to
 * NULL). 0, or a negative code (h->st.text). */
static int sched_whole_data(sched *h, const pl_chunk *c, const void **data,
                            const pl_gz_chunk **gz)
{
    *data = c->data;
    *gz = c->gz;
    if (h->whole_on_gpu || !c->gz)
        return 0;
    *gz = NULL;
    return sched_decode(h, c, NULL, data);
}

/* Closes the staged matrix, unless the process is leaving with it on a
 * device (the driver frees it at exit). */
static void sched_stage_close(sched *h)
{
    if (h->stage && !(h->be->leaving && h->whole_on_gpu))
        tp_stage_close(h->stage);
    h->stage = NULL;
}

/* Opens the input's staged matrix (spec.whole), for chunks of the run's
 * capacity, on the lane that takes it (sched_whole_backend); one input's
 * matrix replaces the last. 0, or a negative code with one line in h->st. */
static int sched_stage_open(sched *h)
{
    sched_stage_close(h);
    backend *be = sched_whole_backend(h, tp_matrix_bytes(h->spec.whole));
    int rc = tp_stage_open(&h->stage, be, h->spec.whole, h->spec.capacity);
    return rc < 0 ? sched_take(h, rc, &be->st) : 0;
}

/* Keeps the staged matrix's message of a failed call. */
static int sched_stage_failed(sched *h, int rc)
{
    return sched_take(h, rc, tp_stage_status(h->stage));
}

/* Gathers chunk c, the stage's source now, which may span two matrices,
 * into the staged matrix, writing each matrix out once whole; 0, 1 (a
 * write failed) or negative. */
static int sched_stage_pieces(sched *h, const pl_chunk *c)
{
    size_t matrix = tp_matrix_bytes(h->spec.whole), from = 0, left = c->bytes;
    uint64_t off = c->offset;
    int rc;
    while (left > 0) {
        uint64_t within = off % matrix;
        size_t take = matrix - within < left ? (size_t)(matrix - within) : left;
        if ((rc = tp_stage_put(h->stage, from, within, take)) < 0)
            return sched_stage_failed(h, rc);
        if (within + take == matrix &&
            (rc = tp_stage_emit(h->stage, h->hooks.write_out, h->hooks.ctx)) != 0)
            return rc < 0 ? sched_stage_failed(h, rc) : 1;
        from += take, off += take, left -= take;
    }
    return 0;
}

/* Gathers chunk c of the rings into the staged matrix (sched_stage_pieces). */
static int sched_stage_chunk(sched *h, const pl_chunk *c)
{
    const void *data;
    const pl_gz_chunk *gz;
    int rc = sched_whole_data(h, c, &data, &gz);
    if (rc < 0)
        return rc;
    if ((rc = tp_stage_chunk(h->stage, data, gz)) < 0)
        return sched_stage_failed(h, rc);
    return sched_stage_pieces(h, c);
}

/* Gathers chunk c of a member inflated on the stage's device, at dev there,
 * into the staged matrix (sched_stage_pieces). */
static int sched_stage_device_chunk(sched *h, const pl_chunk *c, CUdeviceptr dev)
{
    int rc = tp_stage_chunk_device(h->stage, dev);
    return rc < 0 ? sched_stage_failed(h, rc) : sched_stage_pieces(h, c);
}

/* A gzip member inflated on a device as the input: sched_member's fields,
 * and skip going out as what is left of it (the device stopped first). */
typedef struct {
    gzstream *z;
    uint64_t skip;
    uint64_t limit;
    size_t grain;
    void *tail;     /* the bytes after the last whole grain, once the device stopped */
    uint64_t data;  /* in: the data offset of the first byte the device gives; out: after the
                       last one run */
    size_t keep;    /* bytes carried into the next batch (at first: those gzstream_carry_in
                       put before it); at the end, those of tail */
} sched_stream;

/* What the loop does with each chunk: runs it on the lanes (the
 * operation's engines), gathers it into the staged matrix, or writes it as
 * it is (a copy). */
typedef enum { SCHED_LANES, SCHED_STAGE, SCHED_COPY } sched_case;

/* The loop's input and its state: the rings of a sched_input, or a
 * member's batches decoded on a device (z), each batch's chunks run on
 * that device's engine before the next batch is inflated where they read. */
typedef struct {
    sched_case what;
    sched_input *in;       /* the rings (NULL: the member's batches) */
    int told;              /* in->member_gpu_ready decided, or not wanted */
    uint64_t raw_seen;     /* the input bytes that the rings' chunks so far were read from */
    uint64_t data_seen;    /* and the data bytes they hold */
    sched_stream *z;       /* the member's batches: */
    engine *e;             /* the device's engine, */
    sched_device *dev;     /* its per-device entry (NULL: none) */
    CUdeviceptr data;      /* the batch in device memory, its bytes, */
    size_t bytes, at;      /* where its next chunk starts, */
    size_t avail;          /* and its data bytes left to run */
    int batch;             /* a batch is being run */
    int next, busy;        /* the next slot, and the chunks in flight */
} sched_feed;

/* The member's next chunk: whole grains of the batch, at most the run's
 * capacity; once a batch is run, what is left of it is carried into the
 * next, inflated now. 1 with c and *dev filled, 0 at the member's end or
 * the limit, or a negative code (h->st). */
static int sched_stream_next(sched *h, sched_feed *f, pl_chunk *c, CUdeviceptr *dev)
{
    sched_stream *z = f->z;
    size_t grain = z->grain;
    while (f->avail < grain) {
        if (f->batch) {
            f->batch = 0;
            z->keep = f->bytes - f->at;
            if (z->data >= z->limit && z->keep > grain)
                z->keep = grain; /* data past the limit: some of it is enough to tell */
        }
        if (z->data >= z->limit)
            return 0;
        int rc = gzstream_next(z->z, z->keep, &f->data, &f->bytes);
        if (rc <= 0)
            return rc < 0 ? sched_take(h, rc, gzstream_status(z->z)) : 0;
        f->batch = 1;
        f->at = z->skip < f->bytes ? (size_t)z->skip : f->bytes;
        z->skip -= f->at;
        uint64_t want = z->limit - z->data;
        f->avail = f->bytes - f->at < want ? f->bytes - f->at : (size_t)want;
    }
    size_t cap = h->spec.capacity / grain * grain;
    size_t n = f->avail < cap ? f->avail - f->avail % grain : cap;
    *c = (pl_chunk){.bytes = n, .offset = z->data, .slot = f->next};
    *dev = f->data + f->at;
    f->at += n;
    f->avail -= n;
    z->data += n;
    return 1;
}

/* The loop's next chunk, from the rings (with the progress hook) or the
 * member's batches; as sched_next returns. */
static int sched_feed_next(sched *h, sched_feed *f, pl_chunk *c, CUdeviceptr *dev)
{
    double asked = sched_elapsed(h);
    int rc = f->in ? sched_next(h, f->in, c) : sched_stream_next(h, f, c, dev);
    sched_clock_add(h, &h->clock.input, asked);
    if (rc > 0 && f->in) {
        if (h->hooks.progress)
            h->hooks.progress(c->raw_end);
        f->raw_seen = c->raw_end;
        f->data_seen = c->offset + c->bytes;
    }
    return rc;
}

/* Chunks taken and not collected yet. */
static int sched_feed_outstanding(const sched_feed *f)
{
    return f->in ? pl_outstanding(f->in->rings[0]) : f->busy;
}

/* Whether the oldest chunk is collected before the next is taken: every
 * slot is busy, or the member's batch is run (the next one is inflated
 * where its chunks read). */
static int sched_feed_full(const sched *h, const sched_feed *f)
{
    if (f->in)
        return pl_full(f->in->rings[0]);
    return f->busy == h->spec.nslots || f->avail < f->z->grain;
}

/* Collects the oldest chunk and writes its results (none after a failure,
 * which *status keeps). */
static void sched_feed_retire(sched *h, sched_feed *f, int *status)
{
    if (f->in) {
        sched_retire(h, f->in, status);
        return;
    }
    sched_finish(h, f->e, (f->next + h->spec.nslots - f->busy) % h->spec.nslots, status);
    f->busy--;
}

/* Runs chunk c (data at dev for the member's batches) as the loop's case
 * says: on a lane, where the CPU's results go out first while the devices'
 * start ends; into the staged matrix; or written out. Returns the run's
 * status: 0, 1 (a write failed) or a negative code (h->st). */
static int sched_feed_take(sched *h, sched_feed *f, const pl_chunk *c, CUdeviceptr dev)
{
    int status = 0, rc;
    if (!f->in && f->what == SCHED_STAGE) /* a member's batch, on the staged matrix's device */
        return sched_stage_device_chunk(h, c, dev);
    if (!f->in) { /* a member's batch: on its device's engine */
        rc = engine_submit_device(f->e, c->slot, dev, c->bytes, c->offset,
                                  sched_place(h, c->bytes));
        if (rc < 0)
            return sched_failed(h, f->e, rc);
        h->chunks[1]++;
        if (f->dev)
            f->dev->chunks++;
        f->next = (f->next + 1) % h->spec.nslots;
        f->busy++;
        return 0;
    }
    pl_ring *ring = f->in->rings[0];
    switch (f->what) {
    case SCHED_COPY:
        rc = h->hooks.write_out(h->hooks.ctx, NULL, c->data, c->bytes) != 0;
        pl_release(ring, c->slot);
        return rc;
    case SCHED_STAGE:
        rc = sched_stage_chunk(h, c);
        pl_release(ring, c->slot);
        return rc;
    case SCHED_LANES:
        break;
    }
    /* the CPU's results go out while the devices' start ends (c is outstanding too) */
    while (pl_outstanding(ring) > 1 && sched_cpu_waits(h, c->bytes))
        sched_retire(h, f->in, &status);
    if (status)
        return status;
    rc = sched_submit(h, c);
    if (rc == 0 && f->in->nrings == 1)
        rc = sched_release_buffer(h, ring, c->slot);
    return rc < 0 ? sched_submit_failed(h, f->in, rc) : 0;
}

/* The one loop of every run: takes each chunk of the feed, runs it as its
 * case says, and collects the oldest once the slots are full or the input
 * has ended, results in input order; after a failure, only lets every slot
 * go idle. *bytes_in gets the data bytes taken. Returns the run's status. */
static int sched_loop(sched *h, sched_feed *f, uint64_t *bytes_in)
{
    int status = 0, rc;
    pl_chunk c;
    CUdeviceptr dev = 0;
    io_status read_err = {0, ""};
    *bytes_in = 0;
    do {
        if (!f->told && sched_member_gpu(h) && (f->what != SCHED_STAGE || h->whole_on_gpu))
            f->told = f->in->member_gpu_ready(f->in->member_gpu_ctx, f->raw_seen, f->data_seen);
        rc = sched_feed_next(h, f, &c, &dev);
        if (rc < 0)
            read_err = h->st;
        if (rc > 0) {
            *bytes_in += c.bytes;
            status = sched_feed_take(h, f, &c, dev);
        }
        /* chunks before a read error are collected first: their errors come first */
        while (sched_feed_outstanding(f) > 0 && (sched_feed_full(h, f) || rc <= 0 || status))
            sched_feed_retire(h, f, &status);
        if (rc < 0 && !status)
            status = sched_take(h, rc, &read_err);
    } while (rc > 0 && !status);
    return status;
}

/* Runs the input's chunks through the loop (see sched.h): on the lanes,
 * into the staged matrix (opened first), or written as they come. */
int sched_run(sched *h, sched_input *in, uint64_t *bytes_in)
{
    sched_feed f = {.what = h->spec.ops ? SCHED_LANES : h->spec.whole ? SCHED_STAGE : SCHED_COPY,
                    .in = in, .told = !in->member_gpu_ready};
    int rc;
    *bytes_in = 0;
    in->machine = 0;
    if (f.what == SCHED_STAGE && !(in->stage_kept && h->stage)) {
        if ((rc = sched_stage_open(h)) < 0) {
            in->machine = 1;
            return rc;
        }
        if (h->level > 0 && (rc = tp_stage_compress(h->stage, h->level, h->out_next)) < 0)
            return sched_stage_failed(h, rc);
    }
    return sched_loop(h, &f, bytes_in);
}

/* Runs the start of a gzip member on a device (see sched.h): its batches
 * are the loop's feed, on that device's engine. */
int sched_run_member(sched *h, io_reader *r, sched_member *m, const char *name)
{
    gzstream_src src = {.fd = -1};
    uint64_t data_off;
    gpu *g;
    m->ran = 0;
    m->data = 0;
    m->tail_len = 0;
    m->stop = NULL;
    if ((!io_reader_stream_member(r, &src.fd, &data_off, &src.size) &&
         !io_reader_stream_spool(r, &src.spool, &data_off)) ||
        !(g = sched_stream_gpu(h)))
        return 0;
    if (h->spec.whole) { /* the matrix is gathered on the device that inflates */
        int rc = m->stage_kept && h->stage ? 0 : sched_stage_open(h);
        if (rc < 0 || !h->whole_on_gpu)
            return rc; /* the host reads the member (a stage that failed is told there) */
    }
    sched_member_staging(h);
    if (!h->z &&
        gzstream_open(&h->z, g, SCHED_MEMBER_KEEP, h->staging, gzstream_staging_bytes()) < 0) {
        sched_say(h->hooks.info, "%s: the GPU cannot inflate the gzip member (%s): the host does",
                  name, gpu_status(g)->text);
        return 0;
    }
    uint64_t bit, len;
    const uint8_t *window;
    size_t wlen;
    uint32_t crc;
    m->data_start = m->skip;
    if (io_reader_pause_point(r, &bit, &window, &wlen, &crc, &len)) {
        gzstream_begin_at(h->z, &src, bit, window, wlen, crc, len);
        m->data_start = len - m->first - m->head_len;
    } else {
        gzstream_begin(h->z, &src, data_off);
    }
    m->ran = 1;
    if (gzstream_carry_in(h->z, m->head, m->head_len) < 0)
        return sched_take(h, gzstream_status(h->z)->code, gzstream_status(h->z));
    sched_stream in = {.z = h->z, .skip = m->skip, .limit = m->limit, .grain = m->grain,
                       .tail = m->tail, .data = m->first, .keep = m->head_len};
    sched_feed f = {.what = h->spec.ops ? SCHED_LANES : SCHED_STAGE, .told = 1, .z = &in,
                    .e = h->gpu, .dev = sched_device_of(h, h->gpu)};
    uint64_t run;
    int rc = sched_loop(h, &f, &run);
    if (rc == 0 && (rc = gzstream_tail(h->z, in.keep, in.tail)) < 0)
        rc = sched_take(h, rc, gzstream_status(h->z));
    gzstream_end(h->z); /* the host reads a pipe on alone */
    gzstream_counts(h->z, &m->st);
    m->data = in.data - m->first;
    if (rc == 0) {
        m->skip = in.skip;
        m->tail_len = in.keep;
        m->stop = gzstream_where(h->z);
    }
    return rc;
}

/* The last failure's text. */
const char *sched_error(const sched *h)
{
    return h->st.text;
}

/* The last failure as a value. */
const io_status *sched_status(const sched *h)
{
    return &h->st;
}

/* -v: when the chunks were done and where the loop waited, then the chunks
 * per lane. */
void sched_report(const sched *h, const char *name)
{
    const sched_clock *t = &h->clock;
    if (!h->spec.ops && !h->spec.whole)
        return; /* a copy runs on no lane */
    if (t->chunks) {
        sched_say(h->hooks.info,
                  "%s: first chunk done %.3f s, last %.3f s after the process started", name,
                  t->first, t->last);
        sched_say(h->hooks.info,
                  "%s: the main thread waited %.3f s for input and %.3f s for results, and wrote "
                  "for %.3f s",
                  name, t->input, t->results, t->writing);
    }
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
        sched_say(h->hooks.info, "%s: %llu chunks on the CPU, %llu on the GPU%s", name,
                  h->chunks[0], h->chunks[1], each);
}

/* Stops the returns thread and closes every engine. */
void sched_close(sched *h)
{
    if (!h)
        return;
    sched_returns *t = &h->ret;
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
    engine_close(h->cpu);
    sched_stage_close(h);
    if (!h->be->leaving) /* else the driver frees it at exit */
        gzstream_close(h->z);
    for (int i = 0; i < GZSTREAM_SETS; i++)
        backend_host_free(h->be, h->staging[i]);
    if (!h->be->leaving) { /* else the driver frees it all at exit */
        for (int d = 0; h->dev && d < BACKEND_MAX_GPUS; d++)
            engine_close(h->dev[d].engine);
        if (!h->per_device)
            engine_close(h->gpu);
    }
    /* the result buffers were pinned, if at all, on the devices' backend */
    backend *pinned_on = backend_gpu(h->be) ? backend_gpu(h->be) : h->be;
    for (int i = 0; h->results && i < h->spec.nslots; i++)
        backend_host_free(pinned_on, h->results[i]);
    free(h->results);
    free(h->dev);
    free(h->span);
    free(h->lane);
    free(h);
}
