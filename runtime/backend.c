/* backend.c - choosing and holding the CUDA device or the CPU. */
#include "backend.h"
#include "backend_state.h"

#include "io/clock.h"
#include "io/par.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define START_MAX_PINNED 1024 /* host buffers one start keeps track of */
#define START_MAX_MODULES 64

enum { START_RUNNING, START_READY, START_FAILED };

/* auto's devices opening beside the CPU. The thread owns `cuda` until the
 * state leaves START_RUNNING; the lists are shared under mu. */
struct backend_start {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t done;     /* signalled when state leaves START_RUNNING or ndevices is set */
    int state;               /* START_* (under mu) */
    atomic_int ready;        /* state is START_READY (read without the lock) */
    atomic_int some_ready;   /* a device is handed out (dev[]; read without the lock) */
    gpu *dev[BACKEND_MAX_GPUS]; /* each device of the list once it can take work (under mu) */
    gpu *pinner;             /* the device whose context pinned the buffers (under mu) */
    double first_at;         /* when the first device was handed out (io_seconds()) */
    int reported;            /* the failure was handed to backend_fallback */
    int code;                /* the failure's gpu_error once it failed (under mu) */
    backend cuda;            /* the devices, once ready */
    backend_devices devs;
    int ndevices;            /* the driver's device count once known, or its error (under mu) */
    double t0;
    backend_started done_at; /* its times, once over */
    struct {
        void *p;
        size_t bytes;
        int pinned;
    } bufs[START_MAX_PINNED];
    int nbufs;
    char modules[START_MAX_MODULES][64];
    int nmodules;
};

static int backend_abandoned;    /* devices left open, or a start left running */
static int backend_left_running; /* a start left running */

/* Parses a --backend value. */
int backend_parse(const char *name)
{
    if (!strcmp(name, "auto"))
        return BACKEND_AUTO;
    if (!strcmp(name, "cuda") || !strcmp(name, "gpu")) /* gpu: an alias */
        return BACKEND_CUDA;
    if (!strcmp(name, "cpu"))
        return BACKEND_CPU;
    return -1;
}

/* CPUs this process may run on. */
int backend_cpu_count(void)
{
    return par_cpus();
}

/* Parses "all", "N" or a comma-separated list of distinct ordinals. */
int backend_parse_devices(const char *s, backend_devices *d, io_status *st)
{
    memset(d, 0, sizeof *d);
    if (!strcmp(s, "all")) {
        d->all = 1;
        return 0;
    }
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > 0x7fffffff || (*end && *end != ',')) {
            return io_fail(st, IO_ERR_FORMAT, "bad --device '%s' (N, a list like 0,2, or all)", s);
        }
        for (int i = 0; i < d->count; i++)
            if (d->list[i] == (int)v) {
                return io_fail(st, IO_ERR_FORMAT, "bad --device '%s': device %ld given twice", s,
                               v);
            }
        if (d->count == BACKEND_MAX_GPUS)
            return io_fail(st, IO_ERR_FORMAT, "bad --device '%s': more than %d devices", s,
                           BACKEND_MAX_GPUS);
        d->list[d->count++] = (int)v;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* Lets the driver start only the devices a run of `kind` on devs uses
 * (cu_narrow_devices): none for the CPU backend, every one for `all`. */
int backend_narrow_devices(backend_kind kind, const backend_devices *devs)
{
    if (kind == BACKEND_CPU || devs->all)
        return 0;
    return cu_narrow_devices(devs->list, devs->count);
}

/* One device's context being made (backend_open_cuda). */
typedef struct {
    int device;
    int index;          /* its place in the list */
    backend_start *st;  /* the start that hands it out once open, or NULL */
    gpu *g;
    int rc;
    char why[512]; /* the failure, in the words of the thread that met it */
} device_open;

static void start_hand_out(backend_start *st, int i, gpu *g);

/* Thread body: opens one device, and hands it out where a start waits. */
static void *device_open_main(void *arg)
{
    device_open *d = arg;
    d->rc = gpu_open(&d->g, d->device);
    if (d->rc < 0)
        snprintf(d->why, sizeof d->why, "%s",
                 cu_last_failure()[0] ? cu_last_failure() : gpu_strerror(d->rc));
    else if (d->st)
        start_hand_out(d->st, d->index, d->g);
    return NULL;
}

/* Opens the CUDA devices devs names among the driver's n (gpu_device_count()'s
 * answer), or explains why not in be->st.text. The contexts are made at once,
 * one thread per device after the first (each takes about 0.1 s in the
 * driver, which makes much of them one after another, and a context made
 * while another device works holds that device's calls up); with a start,
 * each device is handed out as soon as it is open (start_hand_out). */
static int backend_open_cuda(backend *be, const backend_devices *devs, int n, backend_start *st)
{
    int narrowed = !devs->all && cu_devices_narrowed();
    if (n == GPU_ERR_NO_DEVICE && narrowed && devs->list[0] != 0)
        n = 0; /* the driver sees none of the list: its first device is missing */
    if (n < 0)
        return backend_fail(be, n, "%s", gpu_load_message());
    int count = devs->all ? (n < BACKEND_MAX_GPUS ? n : BACKEND_MAX_GPUS) : devs->count;
    device_open open[BACKEND_MAX_GPUS];
    pthread_t thread[BACKEND_MAX_GPUS];
    int started[BACKEND_MAX_GPUS] = {0};
    for (int i = 0; i < count; i++) {
        int device = devs->all ? i : devs->list[i];
        int ordinal = devs->all ? i : cu_device_ordinal(device);
        if (ordinal < 0 || ordinal >= n) {
            /* narrowed, the driver counts only the devices listed before the
             * first that does not exist */
            if (narrowed)
                return backend_fail(be, GPU_ERR_BAD_DEVICE,
                                    "no CUDA device %d (this machine has fewer than %lld)",
                                    device, (long long)device + 1);
            return backend_fail(be, GPU_ERR_BAD_DEVICE, "no CUDA device %d (this machine has %d)",
                                device, n);
        }
        open[i] = (device_open){.device = device, .index = i, .st = st};
    }
    for (int i = 1; i < count; i++)
        started[i] = pthread_create(&thread[i], NULL, device_open_main, &open[i]) == 0;
    for (int i = 0; i < count; i++) {
        if (i == 0 || !started[i])
            device_open_main(&open[i]);
        else
            pthread_join(thread[i], NULL);
    }
    int rc = 0;
    for (int i = 0; i < count; i++) { /* devices stay in --device order */
        if (open[i].rc < 0 && rc == 0)
            rc = backend_fail(be, open[i].rc, "cannot open CUDA device %d: %s", open[i].device,
                              open[i].why);
        if (open[i].rc == 0)
            be->gpus[be->ngpu++] = open[i].g;
    }
    if (rc < 0)
        return rc;
    be->gpu = be->gpus[0];
    if (gpu_bind(be->gpu) < 0)
        return backend_fail(be, GPU_ERR_DRIVER, "cannot use CUDA device %d: %s",
                            gpu_info(be->gpu)->ordinal, cu_last_failure());
    return 0;
}

/* Pins the start's buffers that are not pinned yet with device g's
 * context (portable: every context sees them pinned); under st->mu. */
static void start_pin_all(backend_start *st, gpu *g)
{
    double t = io_seconds();
    for (int i = 0; i < st->nbufs; i++)
        if (!st->bufs[i].pinned)
            st->bufs[i].pinned = gpu_host_register(g, st->bufs[i].p, st->bufs[i].bytes) == 0;
    st->done_at.part_ms[1] += (io_seconds() - t) * 1e3;
}

/* Readies device i of the list, just opened as g, on its own thread: the
 * first device to open pins the host buffers made so far; each loads the
 * modules asked for (the list finished under the lock, so that nothing
 * added meanwhile is missed), then is handed out (backend_device). The
 * start touches it no more after that: its user owns it. */
static void start_hand_out(backend_start *st, int i, gpu *g)
{
    pthread_mutex_lock(&st->mu);
    if (!st->pinner) {
        st->pinner = g;
        st->done_at.part_ms[0] = (io_seconds() - st->t0) * 1e3;
        start_pin_all(st, g);
    }
    for (int m = 0; m < st->nmodules; m++) {
        char name[64];
        memcpy(name, st->modules[m], sizeof name);
        pthread_mutex_unlock(&st->mu); /* a JIT may take a while */
        double t = io_seconds();
        CUmodule mod;
        gpu_module(g, name, &mod, NULL); /* failures recur on use */
        pthread_mutex_lock(&st->mu);
        if (st->pinner == g)
            st->done_at.part_ms[2] += (io_seconds() - t) * 1e3;
    }
    if (st->pinner == g)
        start_pin_all(st, g);
    if (!st->first_at) /* another device may be handed out before the pinner */
        st->first_at = io_seconds();
    st->dev[i] = g;
    atomic_store(&st->some_ready, 1);
    pthread_cond_broadcast(&st->done);
    pthread_mutex_unlock(&st->mu);
}

/* The start's thread: the driver, then the devices, each handed out as it
 * opens (start_hand_out); the start is ready once all are. */
static void *start_thread(void *arg)
{
    backend_start *st = arg;
    int n = gpu_device_count(); /* the driver's start, before any context */
    pthread_mutex_lock(&st->mu);
    st->ndevices = n; /* a count, or an error: never 0 */
    pthread_cond_broadcast(&st->done);
    pthread_mutex_unlock(&st->mu);
    int rc = backend_open_cuda(&st->cuda, &st->devs, n, st);
    pthread_mutex_lock(&st->mu);
    if (!st->pinner)
        st->done_at.part_ms[0] = (io_seconds() - st->t0) * 1e3;
    if (rc == 0)
        st->cuda.kind = BACKEND_CUDA;
    st->code = rc;
    st->done_at.at = io_seconds();
    st->done_at.ms = (st->done_at.at - st->t0) * 1e3;
    st->state = rc == 0 ? START_READY : START_FAILED;
    atomic_store(&st->ready, rc == 0);
    pthread_cond_broadcast(&st->done);
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* The start's state (START_*), read under its lock. */
static int start_state(backend_start *st)
{
    pthread_mutex_lock(&st->mu);
    int state = st->state;
    pthread_mutex_unlock(&st->mu);
    return state;
}

/* Starts opening devs beside the CPU (auto). */
static void backend_start_gpu(backend *be, const backend_devices *devs)
{
    backend_start *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(be->fallback_reason, sizeof be->fallback_reason,
                 "cannot start the CUDA devices: out of memory");
        return;
    }
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->done, NULL);
    st->devs = *devs;
    st->cuda.threads = be->threads;
    st->t0 = io_seconds();
    if (pthread_create(&st->thread, NULL, start_thread, st) != 0) {
        snprintf(be->fallback_reason, sizeof be->fallback_reason,
                 "cannot start the CUDA devices: no thread");
        pthread_cond_destroy(&st->done);
        pthread_mutex_destroy(&st->mu);
        free(st);
        return;
    }
    be->start = st;
}

/* Opens the requested backend; auto starts the devices beside the CPU. */
int backend_open(backend *be, backend_kind kind, const backend_devices *devs, int threads)
{
    static const backend_devices first = {0, 1, {0}};
    memset(be, 0, sizeof *be);
    be->threads = threads >= 1 ? threads : backend_cpu_count();
    be->kind = BACKEND_CPU;
    if (kind == BACKEND_AUTO) {
        backend_start_gpu(be, devs ? devs : &first);
    } else if (kind == BACKEND_CUDA) {
        int rc = backend_open_cuda(be, devs ? devs : &first, gpu_device_count(), NULL);
        if (rc < 0) {
            backend_close(be);
            return rc;
        }
        be->kind = BACKEND_CUDA;
    }
    return 0;
}

/* Opens the CUDA backend with its devices starting beside the caller (see
 * backend.h). */
int backend_open_beside(backend *be, const backend_devices *devs, int threads)
{
    static const backend_devices first = {0, 1, {0}};
    memset(be, 0, sizeof *be);
    be->threads = threads >= 1 ? threads : backend_cpu_count();
    be->kind = BACKEND_CUDA;
    backend_start_gpu(be, devs ? devs : &first);
    if (be->start)
        return 0;
    return backend_open(be, BACKEND_CUDA, devs, threads); /* no thread: here, then */
}

/* Whether be is the CUDA backend with its devices still starting. */
static int backend_starting(const backend *be)
{
    return be->kind == BACKEND_CUDA && be->start;
}

/* Takes the ended start's devices into be (which keeps its own choices),
 * or its failure into be->st.text and fallback_reason; frees the start. The
 * host buffers the start pinned stay pinned when keep_pinned is set (be's
 * owner frees them), else they are unpinned. 0, or -1 when it failed. */
static int backend_take_start(backend *be, int keep_pinned)
{
    backend_start *st = be->start;
    be->start = NULL;
    for (int i = 0; i < st->nbufs && !keep_pinned; i++)
        if (st->bufs[i].pinned)
            gpu_host_unregister(st->pinner, st->bufs[i].p);
    int rc = st->state == START_READY ? 0 : -1;
    if (rc == 0) {
        backend mine = *be;
        *be = st->cuda;
        memcpy(be->fallback_reason, mine.fallback_reason, sizeof be->fallback_reason);
        be->fallback_told = mine.fallback_told;
        be->may_use_gpu = mine.may_use_gpu;
        be->leaving = mine.leaving;
        be->started = st->done_at;
    } else {
        snprintf(be->fallback_reason, sizeof be->fallback_reason, "%s", st->cuda.st.text);
        backend_fail(be, st->code, "%s", st->cuda.st.text);
        be->fallback_told = st->reported;
        be->fallback_code = st->code;
        backend_close(&st->cuda);
    }
    pthread_cond_destroy(&st->done);
    pthread_mutex_destroy(&st->mu);
    free(st);
    return rc;
}

/* Waits for the devices of backend_open_beside (see backend.h). */
int backend_ready(backend *be)
{
    if (!backend_starting(be))
        return 0;
    backend_start *st = be->start;
    pthread_join(st->thread, NULL);
    for (int i = 0; i < st->nbufs && st->state == START_READY; i++) {
        if (st->bufs[i].pinned)
            continue;
        if (gpu_host_register(st->cuda.gpu, st->bufs[i].p, st->bufs[i].bytes) < 0) {
            io_status why; /* the device goes with the start */
            io_pass(&why, gpu_status(st->cuda.gpu));
            backend_take_start(be, 1);
            be->failed = 1;
            return io_pass(&be->st, &why);
        }
        st->bufs[i].pinned = 1;
    }
    if (backend_take_start(be, 1) == 0)
        return 0;
    be->kind = BACKEND_CPU; /* the buffers are plain memory (pins went with the devices) */
    be->fallback_told = 1;  /* an error for cuda, not a fallback */
    be->failed = 1;
    return GPU_ERR_DRIVER;
}

/* Device i of the list once it can take work (see backend.h). */
gpu *backend_device(backend *be, int i)
{
    if (i < 0 || i >= BACKEND_MAX_GPUS)
        return NULL;
    backend_start *st = be->start;
    if (!st)
        return be->kind == BACKEND_CUDA && i < be->ngpu ? be->gpus[i] : NULL;
    if (!atomic_load(&st->some_ready))
        return NULL;
    pthread_mutex_lock(&st->mu);
    gpu *g = st->dev[i];
    pthread_mutex_unlock(&st->mu);
    return g;
}

/* The devices listed, once known (see backend.h). */
int backend_devices_known(backend *be)
{
    backend_start *st = be->start;
    if (!st)
        return be->kind == BACKEND_CUDA ? be->ngpu : 0;
    if (!st->devs.all)
        return st->devs.count;
    pthread_mutex_lock(&st->mu);
    int n = st->ndevices;
    pthread_mutex_unlock(&st->mu);
    return n < 0 ? 0 : n < BACKEND_MAX_GPUS ? n : BACKEND_MAX_GPUS;
}

/* Waits for cuda's first device (see backend.h). */
int backend_wait_first(backend *be)
{
    if (!backend_starting(be))
        return 0;
    backend_start *st = be->start;
    pthread_mutex_lock(&st->mu);
    while (!atomic_load(&st->some_ready) && st->state == START_RUNNING)
        pthread_cond_wait(&st->done, &st->mu);
    int some = atomic_load(&st->some_ready);
    pthread_mutex_unlock(&st->mu);
    return some ? 0 : backend_ready(be); /* it failed (or had nothing to hand out) */
}

/* Why a device of the list could not be opened, once the start is over
 * (see backend.h). */
const char *backend_device_failure(backend *be)
{
    backend_start *st = be->start;
    if (!st || start_state(st) != START_FAILED)
        return NULL;
    return st->cuda.st.text;
}

/* When the first device was handed out, in ms from the start's beginning,
 * and the parts (see backend.h). */
double backend_first_device_ms(const backend *be, double parts[3])
{
    backend_start *st = be->start;
    if (!st)
        return backend_gpu_start_ms(be, parts);
    pthread_mutex_lock(&st->mu);
    for (int i = 0; i < 3; i++)
        parts[i] = st->done_at.part_ms[i];
    double ms = (st->first_at - st->t0) * 1e3;
    pthread_mutex_unlock(&st->mu);
    return ms;
}

/* The devices to use now, if any (see backend.h). */
backend *backend_gpu(backend *be)
{
    if (be->kind == BACKEND_CUDA)
        return be->start ? NULL : be;
    backend_start *st = be->start;
    return st && start_state(st) == START_READY ? &st->cuda : NULL;
}

/* Whether auto's start has failed (see backend.h). */
int backend_start_failed(backend *be)
{
    return be->start && start_state(be->start) == START_FAILED;
}

/* Whether be has devices, or a start that has not failed (yet) on a
 * machine where a driver may exist: on one with no NVIDIA driver at all,
 * auto allocates and faults in nothing for devices while the start finds
 * that out. */
static int backend_gpu_possible(backend *be)
{
    return be->kind == BACKEND_CUDA ||
           (be->start && start_state(be->start) != START_FAILED && cu_driver_may_exist());
}

/* Whether chunks may go to the devices, the first answer kept (see backend.h). */
int backend_may_use_gpu(backend *be)
{
    if (!be->may_use_gpu)
        be->may_use_gpu = backend_gpu_possible(be) ? 1 : -1;
    return be->may_use_gpu > 0;
}

/* auto: the flag its start sets once the devices are ready (see backend.h). */
const atomic_int *backend_gpu_ready_flag(const backend *be)
{
    return be->start ? &be->start->ready : NULL;
}

/* The devices once the start is over, waiting for it. */
backend *backend_gpu_wait(backend *be)
{
    if (backend_starting(be))
        return backend_ready(be) == 0 ? be : NULL;
    backend_start *st = be->start;
    if (!st)
        return be->kind == BACKEND_CUDA ? be : NULL;
    pthread_mutex_lock(&st->mu);
    while (st->state == START_RUNNING)
        pthread_cond_wait(&st->done, &st->mu);
    pthread_mutex_unlock(&st->mu);
    return backend_gpu(be);
}

/* The start's failure, once. */
const char *backend_fallback(backend *be)
{
    backend_start *st = be->start;
    if (be->kind == BACKEND_CUDA)
        return NULL; /* cuda has no fallback: its failures are errors */
    if (!st) {
        int fresh = be->fallback_reason[0] && !be->fallback_told;
        be->fallback_told = 1;
        return fresh ? be->fallback_reason : NULL;
    }
    pthread_mutex_lock(&st->mu);
    int failed = st->state == START_FAILED && !st->reported;
    st->reported |= failed;
    be->fallback_code = st->code;
    pthread_mutex_unlock(&st->mu);
    if (!failed)
        return NULL;
    snprintf(be->fallback_reason, sizeof be->fallback_reason, "%s", st->cuda.st.text);
    return be->fallback_reason;
}

/* Marks the end of the process's work: what the devices hold is left to
 * the driver's clean-up at exit. */
void backend_leave(backend *be)
{
    be->leaving = 1;
    if (be->start) {
        pthread_mutex_lock(&be->start->mu);
        be->start->cuda.leaving = 1;
        pthread_mutex_unlock(&be->start->mu);
    }
}

/* Loads a module now (CUDA), or queues it for the start to load (auto). */
void backend_want_module(backend *be, const char *module)
{
    backend_start *st = be->start;
    if (!st) {
        for (int i = 0; be->kind == BACKEND_CUDA && i < be->ngpu; i++) {
            CUmodule mod;
            gpu_module(be->gpus[i], module, &mod, NULL); /* failures recur on use */
        }
        return;
    }
    pthread_mutex_lock(&st->mu);
    int known = 0;
    for (int i = 0; i < st->nmodules; i++)
        known |= !strcmp(st->modules[i], module);
    if (!known && st->state == START_RUNNING && st->nmodules < START_MAX_MODULES &&
        strlen(module) < sizeof st->modules[0])
        strcpy(st->modules[st->nmodules++], module);
    for (int i = 0; !known && i < BACKEND_MAX_GPUS; i++) { /* handed out: loaded here */
        CUmodule mod;
        if (st->dev[i])
            gpu_module(st->dev[i], module, &mod, NULL);
    }
    pthread_mutex_unlock(&st->mu);
}

/* Time the start took, and its parts, once ready. */
double backend_gpu_start_ms(const backend *be, double parts[3])
{
    const backend_started *done = be->start ? &be->start->done_at : &be->started;
    for (int i = 0; i < 3; i++)
        parts[i] = done->part_ms[i];
    return done->ms;
}

/* Waits for the start and takes its devices, or its failure. */
void backend_settle(backend *be)
{
    if (backend_starting(be)) {
        backend_ready(be); /* a failure stays in be->st.text */
        return;
    }
    if (!be->start)
        return;
    pthread_join(be->start->thread, NULL);
    backend_take_start(be, 0); /* no buffer is left while nothing streams */
}

/* Whether a start was left running or devices open. */
int backend_start_abandoned(void)
{
    return backend_abandoned;
}

/* Whether a start was left running. */
int backend_start_left_running(void)
{
    return backend_left_running;
}

/* The number of devices a cuda start opens: its list's, or with `all` the
 * driver's count (waited for: cuInit, before the contexts), at most
 * BACKEND_MAX_GPUS; 1 when the driver failed (the start fails too). */
static int start_device_count(backend_start *st)
{
    if (!st->devs.all)
        return st->devs.count;
    pthread_mutex_lock(&st->mu);
    while (st->ndevices == 0 && st->state == START_RUNNING)
        pthread_cond_wait(&st->done, &st->mu);
    int n = st->ndevices;
    pthread_mutex_unlock(&st->mu);
    return n < 1 ? 1 : n < BACKEND_MAX_GPUS ? n : BACKEND_MAX_GPUS;
}

/* Slots: `streams` per device. */
int backend_slots(const backend *be, int streams)
{
    int ngpu = backend_starting(be) ? start_device_count(be->start) : be->ngpu;
    if (be->kind != BACKEND_CUDA || ngpu <= 1)
        return streams;
    int n = streams * ngpu;
    return n <= BACKEND_MAX_SLOTS ? n : BACKEND_MAX_SLOTS / ngpu * ngpu;
}

/* Slot i runs on device i % ngpu. */
gpu *backend_slot_gpu(const backend *be, int slot)
{
    return be->ngpu ? be->gpus[slot % be->ngpu] : NULL;
}

/* Closes the devices that are open; joins or leaves auto's start. */
void backend_close(backend *be)
{
    if (!be)
        return;
    backend_start *st = be->start;
    if (st) {
        int state = start_state(st);
        if (state == START_RUNNING || (state == START_READY && be->leaving)) {
            if (state == START_READY)
                pthread_join(st->thread, NULL); /* over: only its devices are left behind */
            backend_abandoned = 1; /* it still owns its devices and the lock's memory */
            backend_left_running |= state == START_RUNNING;
        } else {
            pthread_join(st->thread, NULL);
            backend_close(&st->cuda);
            pthread_cond_destroy(&st->done);
            pthread_mutex_destroy(&st->mu);
            free(st);
        }
        be->start = NULL;
    }
    if (be->ngpu && be->leaving) {
        backend_abandoned = 1;
        return;
    }
    for (int i = be->ngpu - 1; i >= 0; i--) {
        gpu_close(be->gpus[i]);
        be->gpus[i] = NULL;
    }
    be->ngpu = 0;
    be->gpu = NULL;
}

/* Name for messages and JSON. */
const char *backend_name(const backend *be)
{
    return be->kind == BACKEND_CUDA ? "cuda" : "cpu";
}

#define HOST_PAGES_ALIGN ((size_t)2 << 20) /* the size of a huge page on x86-64 and arm64 */
#define HOST_TOUCH_PART ((size_t)8 << 20)  /* one thread touches at least this much */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* One part of a buffer whose pages are faulted in. */
typedef struct {
    unsigned char *p;
    size_t len;
} host_touch;

/* Thread body: faults the part's pages in writable, as the kernel gives
 * them (zero), without writing them again; where the kernel lacks
 * MADV_POPULATE_WRITE, by writing zeros (the buffer is new: nothing in it
 * yet). */
static void *host_touch_main(void *arg)
{
    host_touch *t = arg;
    int rc;
    while ((rc = madvise(t->p, t->len, MADV_POPULATE_WRITE)) < 0 && (errno == EINTR || errno == EAGAIN))
        ;
    if (rc < 0)
        memset(t->p, 0, t->len);
    return NULL;
}

/* Faults a new buffer's pages in on up to `threads` threads at once (the
 * pool's), in parts of at least HOST_TOUCH_PART, so that its first use
 * pays no page faults and the kernel zeroes it on every core. */
static void host_fault_in(void *p, size_t n, int threads)
{
    size_t parts = n / HOST_TOUCH_PART;
    if (parts > (size_t)(threads > 1 ? threads : 1))
        parts = (size_t)(threads > 1 ? threads : 1);
    if (parts > PAR_MAX)
        parts = PAR_MAX;
    if (parts < 1)
        parts = 1;
    host_touch t[PAR_MAX];
    size_t step = (n / parts + 4095) / 4096 * 4096;
    for (size_t i = 0; i < parts; i++) /* parts of >= 8 MiB: every start is below n */
        t[i] = (host_touch){(unsigned char *)p + i * step, i + 1 == parts ? n - i * step : step};
    par_run(host_touch_main, t, sizeof t[0], parts);
}

/* Buffer memory, 2 MiB-aligned with transparent huge pages where the
 * system allows; with `fault` (and always where the memory may be pinned:
 * cuda, and auto unless its start has failed, since pinning faults pages
 * in on one thread, tens of milliseconds for 64 MiB) its pages are faulted
 * in now on every core. Freed with free(). */
static void *backend_host_pages(backend *be, size_t bytes, int fault)
{
    void *p = NULL;
    size_t n = bytes ? bytes : 1;
    if (posix_memalign(&p, n >= HOST_PAGES_ALIGN ? HOST_PAGES_ALIGN : 4096, n) != 0) {
        backend_fail(be, GPU_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (n >= HOST_PAGES_ALIGN)
        madvise(p, n, MADV_HUGEPAGE); /* advice only: any failure leaves small pages */
#endif
    if (fault || backend_gpu_possible(be))
        host_fault_in(p, n, be->threads);
    return p;
}

/* Pinned memory with CUDA, aligned memory on the CPU; with auto, aligned
 * memory that the start (or, once it is done, this call) pins. Pinning
 * memory made by backend_host_pages() takes a fraction of what
 * cuMemHostAlloc() of the same size does (it zeroes and maps each page on
 * one thread). */
void *backend_host_alloc(backend *be, size_t bytes)
{
    void *p = backend_host_pages(be, bytes, 0);
    if (!p)
        return NULL;
    if (be->kind == BACKEND_CUDA && !be->start) {
        if (gpu_host_register(be->gpu, p, bytes) < 0) {
            io_pass(&be->st, gpu_status(be->gpu));
            free(p);
            return NULL;
        }
        return p;
    }
    backend_start *st = be->start;
    if (st) {
        pthread_mutex_lock(&st->mu);
        if (st->nbufs < START_MAX_PINNED) {
            int i = st->nbufs++;
            st->bufs[i].p = p;
            st->bufs[i].bytes = bytes;
            st->bufs[i].pinned = 0;
            if (st->pinner)
                st->bufs[i].pinned = gpu_host_register(st->pinner, p, bytes) == 0;
        }
        pthread_mutex_unlock(&st->mu);
    }
    return p;
}

/* Faulted in, not pinned (see backend.h). */
void *backend_host_unpinned(backend *be, size_t bytes)
{
    return backend_host_pages(be, bytes, 1);
}

/* Pins a backend_host_unpinned buffer (see backend.h). */
int backend_host_pin(backend *be, void *p, size_t bytes)
{
    if (be->kind != BACKEND_CUDA || be->start)
        return 0;
    if (gpu_host_register(be->gpu, p, bytes) < 0)
        return io_pass(&be->st, gpu_status(be->gpu));
    return 0;
}

/* Records a failure's code and line (see backend.h). */
int backend_fail(backend *be, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    io_failv(&be->st, code, fmt, ap);
    va_end(ap);
    return code;
}

/* The last failure as a value. */
const io_status *backend_status(const backend *be)
{
    return &be->st;
}

/* Frees what backend_host_alloc or backend_host_unpinned gave (unpinning
 * it first); accepts NULL. */
void backend_host_free(backend *be, void *p)
{
    if (!p)
        return;
    if (be->kind == BACKEND_CUDA && !be->start) {
        if (!be->leaving) { /* else the driver unpins it at exit */
            gpu_host_unregister(be->gpu, p);
            free(p);
        }
        return;
    }
    backend_start *st = be->start;
    int pinned = 0;
    if (st) {
        pthread_mutex_lock(&st->mu);
        for (int i = 0; i < st->nbufs; i++)
            if (st->bufs[i].p == p) {
                pinned = st->bufs[i].pinned;
                if (pinned && !be->leaving) /* the devices are open: pinning needs them */
                    gpu_host_unregister(st->pinner, p);
                st->bufs[i] = st->bufs[--st->nbufs];
                break;
            }
        pthread_mutex_unlock(&st->mu);
    }
    if (!(pinned && be->leaving))
        free(p);
}

/* Whether it runs on CUDA devices now (see backend.h). */
int backend_is_cuda(const backend *be)
{
    return be->kind == BACKEND_CUDA;
}

/* Whether a start is under way beside the caller (see backend.h). */
int backend_beside(const backend *be)
{
    return be->start != NULL;
}

/* Its CPU threads (see backend.h). */
int backend_threads(const backend *be)
{
    return be->threads;
}

/* Its open devices (see backend.h). */
int backend_gpu_count(const backend *be)
{
    return be->ngpu;
}

/* Open device i in --device order (see backend.h). */
gpu *backend_gpu_at(const backend *be, int i)
{
    return i >= 0 && i < be->ngpu ? be->gpus[i] : NULL;
}

/* Why auto chose the CPU (see backend.h). */
const char *backend_fallback_reason(const backend *be)
{
    return be->fallback_reason;
}

/* That failure's gpu_error (see backend.h). */
int backend_fallback_code(const backend *be)
{
    return be->fallback_code;
}

/* When a start beside ended (see backend.h). */
double backend_started_at(const backend *be)
{
    return be->started.at;
}

/* A zeroed backend (see backend.h). */
backend *backend_new(void)
{
    return calloc(1, sizeof(backend));
}

/* Frees a closed backend (see backend.h). */
void backend_free(backend *be)
{
    free(be);
}
