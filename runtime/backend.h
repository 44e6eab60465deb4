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
 * process must then end with _exit (backend_start_abandoned()).
 *
 * cuda may start the same way (backend_open_beside): the caller opens its
 * input, makes its host buffers and reads into them while the driver
 * starts, then waits for the devices (backend_ready) before its first
 * device work; the buffers made meanwhile are pinned by then.
 *
 * A start hands each device out as soon as it is open (backend_device):
 * its context made (one thread per device), the modules asked for by then
 * loaded, and the host buffers made so far pinned by the first device to
 * open. A caller that drives each device on its own may start on the first
 * while the others open (the driver makes contexts one after another, about
 * 0.1 s each); the start never touches a device again once handed out. */
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

typedef struct backend_start backend_start; /* the CUDA devices opening on a thread */

/* When a start beside ended (io_seconds()), its milliseconds from
 * backend_open, and those of its parts: the driver and contexts, pinning
 * the host buffers, loading the modules. */
typedef struct {
    double at, ms, part_ms[3];
} backend_started;

/* A backend: what it is stays inside the runtime (runtime/backend_state.h);
 * callers above it hold a pointer from backend_new and ask through the
 * functions below. */
typedef struct backend backend;

/* A zeroed backend to open (backend_open, backend_open_beside), or NULL
 * when out of memory. */
backend *backend_new(void);

/* Frees a backend from backend_new once backend_close closed it (or it
 * never opened); accepts NULL. */
void backend_free(backend *be);

/* Records a failure on be: its code and its line (printf-style; the
 * arguments must not point into be->st.text); returns the code. Modules that
 * fail on be's behalf (an engine, a staged matrix that cannot open) leave
 * their reason here too, since it outlives them. */
int backend_fail(backend *be, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The last failure: its code and line. */
const io_status *backend_status(const backend *be);

/* Parses "auto", "cuda" (or "gpu") and "cpu"; -1 when unknown. */
int backend_parse(const char *name);

/* Parses a --device value: "N", "N,M,..." (distinct ordinals) or "all".
 * 0, or IO_ERR_FORMAT with its line in *st. */
int backend_parse_devices(const char *s, backend_devices *d, io_status *st);

/* Makes the devices devs names the only ones the driver starts (see
 * cu_narrow_devices), unless kind is the CPU or devs is `all`; messages
 * still number the devices as devs does. Call once, after the options and
 * before any other thread starts (it sets CUDA_VISIBLE_DEVICES). 1 when
 * narrowed, else 0. */
int backend_narrow_devices(backend_kind kind, const backend_devices *devs);

/* Opens a backend. auto is the CPU backend with the CUDA devices starting
 * beside it (see above); cuda fails with a negative
 * gpu_error and a message in be->st.text. threads < 1 means one per core. */
int backend_open(backend *be, backend_kind kind, const backend_devices *devs, int threads);

/* Opens the cuda backend with its devices starting on a thread beside the
 * caller (see above); with --device all, backend_slots() waits for the
 * driver's device count (its start, before the contexts). Until
 * backend_ready(), only backend_host_alloc/free, backend_want_module,
 * backend_slots, backend_may_use_gpu and backend_close may be used. 0, or
 * a negative gpu_error with a message in be->st.text. */
int backend_open_beside(backend *be, const backend_devices *devs, int threads);

/* Waits for the devices of backend_open_beside and pins the host buffers
 * made meanwhile that the start has not pinned; be is then the open CUDA
 * backend. Returns at once for any other backend. 0, or a negative
 * gpu_error with the reason in be->st.text and be->failed set (be is then on
 * the CPU when the devices did not open); a command stops there. */
int backend_ready(backend *be);

/* The CUDA backend to use now: be itself with cuda (NULL until
 * backend_ready() when it started beside); with auto, its
 * devices once their start has finished (NULL before, and for good when it
 * failed: backend_fallback() then has the reason). Never waits. */
struct backend *backend_gpu(struct backend *be);

/* Device i of the --device list once it can take work (see above), or
 * NULL: while it opens, for good when the start failed, and beyond the
 * list. With the devices open (cuda after backend_ready, or auto's start
 * settled), be->gpus[i]. Never waits. */
gpu *backend_device(struct backend *be, int i);

/* The number of devices the --device list names, once known (with `all`,
 * the driver's count, known when its start is over), else 0; 0 on the
 * CPU. Never waits. */
int backend_devices_known(struct backend *be);

/* cuda started beside (backend_open_beside): waits until the start has
 * handed out a device (backend_device), and returns 0 then, the start
 * still opening the others; when it fails first, does what
 * backend_ready() does on failure and returns its error. 0 at once for any
 * other backend. */
int backend_wait_first(struct backend *be);

/* Once a start that handed devices out has failed to open another: why
 * (one line naming the device); else NULL. */
const char *backend_device_failure(struct backend *be);

/* Milliseconds from the start's beginning to its first device handed out,
 * with the parts as backend_gpu_start_ms gives them (the driver and the
 * first context, pinning, modules); without a start, backend_gpu_start_ms. */
double backend_first_device_ms(const struct backend *be, double parts[3]);

/* Whether a command's chunks may go to CUDA devices: with cuda, and with
 * auto unless its start had already failed when first asked (no driver:
 * the command is then sized as on the CPU backend). The first answer holds
 * for the run, so that the choices made from it agree. */
int backend_may_use_gpu(backend *be);

/* auto: a flag that becomes non-zero when backend_gpu() would hand the
 * devices out (for work on the CPU that is worth giving up then); NULL
 * for cuda and cpu. */
const atomic_int *backend_gpu_ready_flag(const backend *be);

/* Like backend_gpu(), but waits for a start to be over (backend_ready()
 * for cuda). */
struct backend *backend_gpu_wait(struct backend *be);

/* auto: the reason its start failed, once (NULL when it has not, or was
 * already taken); the caller warns. */
const char *backend_fallback(struct backend *be);

/* auto: whether its start has failed, whoever took the reason; never
 * waits. 0 for cuda and cpu. */
int backend_start_failed(struct backend *be);

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

/* Milliseconds from backend_open to the devices' being ready (a start
 * beside, once over), or 0; parts gets those of the driver and contexts,
 * of pinning the host buffers, and of loading the modules. */
double backend_gpu_start_ms(const struct backend *be, double parts[3]);

/* Waits for auto's start to finish: be becomes the CUDA backend when it
 * succeeded, else stays on the CPU with the reason in fallback_reason
 * (backend_fallback() hands it out). No host buffer may be allocated.
 * A cuda start beside is backend_ready()'s, its failure left in be->st.text. */
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

/* What a backend is, for callers above the runtime, which read none of its
 * fields: whether it runs on CUDA devices now, whether a start is under way
 * beside the caller (auto's devices, or cuda's set-up), its CPU threads,
 * its open devices (count and each, in --device order), why auto chose the
 * CPU ("" otherwise) and that failure's gpu_error (0 if none), and when a
 * start beside ended (io_seconds(); 0 without one). */
int backend_is_cuda(const backend *be);
int backend_beside(const backend *be);
int backend_threads(const backend *be);
int backend_gpu_count(const backend *be);
gpu *backend_gpu_at(const backend *be, int i);
const char *backend_fallback_reason(const backend *be);
int backend_fallback_code(const backend *be);
double backend_started_at(const backend *be);

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

/* Host buffer as backend_host_alloc makes it, its pages faulted in now on
 * every core (on every backend), but left unpinned: backend_host_pin pins it when it is first needed
 * (the time of pinning moves from the devices' start to then).
 * backend_host_free frees it, pinned or not. NULL on failure. */
void *backend_host_unpinned(backend *be, size_t bytes);

/* Pins a buffer from backend_host_unpinned, on the CUDA backend once its
 * devices are open (elsewhere there is nothing to do). 0, or a negative
 * gpu_error with the reason in be->st.text. */
int backend_host_pin(backend *be, void *p, size_t bytes);

/* Number of CPUs this process may run on (its affinity mask; at least 1). */
int backend_cpu_count(void);

#endif
