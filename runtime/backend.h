/* backend.h - where the ops run: CUDA devices or the CPU.
 *
 * A backend owns the devices (if any) for the whole invocation, so several
 * input files share their contexts, and hands out the host buffers the
 * pipeline streams through (pinned and portable across contexts with CUDA,
 * plain aligned memory on the CPU). With several devices, pipeline slot i
 * runs on device i % ngpu: chunks go round the devices in input order, and
 * their results are collected in that order, so the bits do not depend on
 * the number of devices.
 *
 * auto starts on the CPU at once and opens the CUDA devices on a thread of
 * its own beside it (driver, contexts, pinning of the host buffers made so
 * far, the modules the run asked for); backend_gpu() hands the devices out
 * once they are ready, without ever waiting. A run that ends first does
 * not wait for them: backend_close() leaves the start behind, and the
 * process must then end with _exit (backend_start_abandoned()). */
#ifndef GPUBATCH_RUNTIME_BACKEND_H
#define GPUBATCH_RUNTIME_BACKEND_H

#include <stdatomic.h>
#include <stddef.h>

#include "gpu.h"

typedef enum { BACKEND_AUTO, BACKEND_CUDA, BACKEND_CPU } backend_kind;

#define BACKEND_MAX_GPUS 64
#define BACKEND_MAX_SLOTS 256 /* pipeline slots, all devices together */

/* The devices --device names: one ordinal, a list, or every device. */
typedef struct {
    int all;                       /* every device of the machine */
    int count;                     /* ordinals in list (when !all) */
    int list[BACKEND_MAX_GPUS];
} backend_devices;

typedef struct backend_start backend_start; /* auto: the CUDA devices opening */

typedef struct backend {
    backend_kind kind; /* BACKEND_CUDA or BACKEND_CPU once open */
    gpu *gpu;          /* the first device (single-device work); NULL on the CPU */
    gpu *gpus[BACKEND_MAX_GPUS]; /* every device in use, in --device order */
    int ngpu;          /* 0 on the CPU */
    int threads;       /* worker threads for CPU work (>= 1) */
    char fallback_reason[2048]; /* why auto chose the CPU ("" otherwise) */
    int fallback_told;          /* backend_fallback() handed it out */
    int leaving;                /* backend_leave(): device resources are left to the exit */
    backend_start *start; /* auto: the devices' start beside the CPU; else NULL */
    int may_use_gpu;      /* backend_may_use_gpu()'s answer once asked: 1 or -1; 0 before */
    char err[2048];
} backend;

/* Parses "auto", "cuda" (or "gpu") and "cpu"; -1 when unknown. */
int backend_parse(const char *name);

/* Parses a --device value: "N", "N,M,..." (distinct ordinals) or "all".
 * 0, or -1 with a reason in err. */
int backend_parse_devices(const char *s, backend_devices *d, char *err, size_t errlen);

/* Opens a backend. auto is the CPU backend with the CUDA devices starting
 * beside it (see above); cuda fails with a negative
 * gpu_error and a message in be->err. threads < 1 means one per core. */
int backend_open(backend *be, backend_kind kind, const backend_devices *devs, int threads);

/* The CUDA backend to use now: be itself with cuda; with auto, its
 * devices once their start has finished (NULL before, and for good when it
 * failed: backend_fallback() then has the reason). Never waits. */
struct backend *backend_gpu(struct backend *be);

/* Whether a command's chunks may go to CUDA devices: with cuda, and with
 * auto unless its start had already failed when first asked (no driver:
 * the command is then sized as on the CPU backend). The first answer holds
 * for the run, so that the choices made from it agree. */
int backend_may_use_gpu(backend *be);

/* auto: a flag that becomes non-zero when backend_gpu() would hand the
 * devices out (for work on the CPU that is worth giving up then); NULL
 * for cuda and cpu. */
const atomic_int *backend_gpu_ready_flag(const backend *be);

/* Like backend_gpu(), but with auto waits for the start to be over. */
struct backend *backend_gpu_wait(struct backend *be);

/* auto: the reason its start failed, once (NULL when it has not, or was
 * already taken); the caller warns. */
const char *backend_fallback(struct backend *be);

/* Says that the process's work is done and it is about to exit: host
 * buffers that are pinned and everything on the devices are then not
 * released (the driver does it at exit, and unpinning costs time), and
 * backend_close() leaves the devices open; the process must then end with
 * _exit (backend_start_abandoned()). Call it before freeing what the run
 * used. */
void backend_leave(struct backend *be);

/* Loads an embedded module on every device before the first chunk: with
 * CUDA at once (a module loaded while kernels run waits for them all to
 * end); with auto, the start loads it before it hands the devices out
 * (later requests load on first use). */
void backend_want_module(struct backend *be, const char *module);

/* Milliseconds from backend_open to the devices' being ready (auto), or
 * 0; parts gets those of the driver and contexts, of pinning the host
 * buffers, and of loading the modules. */
double backend_gpu_start_ms(const struct backend *be, double parts[3]);

/* Waits for auto's start to finish: be becomes the CUDA backend when it
 * succeeded, else stays on the CPU with the reason in fallback_reason
 * (backend_fallback() hands it out). No host buffer may be allocated. */
void backend_settle(struct backend *be);

/* Whether a backend_close() left an auto start running, or devices open
 * after backend_leave(): the process must end with _exit (after flushing
 * its streams), not exit. */
int backend_start_abandoned(void);

/* Whether a backend_close() left an auto start running (inside the
 * driver, which may still be loading). */
int backend_start_left_running(void);

/* Pipeline slots for `streams` chunks in flight per device (per backend on
 * the CPU), at most BACKEND_MAX_SLOTS. */
int backend_slots(const backend *be, int streams);

/* The device that runs pipeline slot i (CUDA backend only). */
gpu *backend_slot_gpu(const backend *be, int slot);

/* Releases the devices; accepts a zeroed backend. An auto start still
 * running is left behind. */
void backend_close(backend *be);

/* "cuda" or "cpu". */
const char *backend_name(const backend *be);

/* Host buffer the device can copy from at full speed (with auto: plain
 * memory, pinned by the start or at once when the devices are ready);
 * NULL on failure. */
void *backend_host_alloc(backend *be, size_t bytes);
void backend_host_free(backend *be, void *p);

/* Number of CPUs this process may run on (its affinity mask; at least 1). */
int backend_cpu_count(void);

#endif
