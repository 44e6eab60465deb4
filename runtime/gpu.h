/* gpu.h - one CUDA device in use: its primary context, the embedded kernel
 * modules (native code or PTX) loaded on demand, pinned host memory and
 * streams.
 *
 * Errors are negative gpu_error codes; the handle keeps the last one with
 * its line, which names the failing driver call, or holds the JIT log of a
 * module that failed to load (gpu_status). Nothing here exits or prints. */
#ifndef GPUBATCH_RUNTIME_GPU_H
#define GPUBATCH_RUNTIME_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "cu.h"
#include "io/status.h"


typedef struct gpu gpu;

typedef struct {
    char name[256];
    int ordinal; /* its number as --device gives it (cu_device_ordinal maps it to the driver's) */
    int cc_major, cc_minor;
    int sm_count;
    size_t total_mem;
    int l2_bytes;
    int smem_per_sm;     /* shared memory bytes per multiprocessor, 0: not told */
    int smem_reserved;   /* of which the driver keeps per CTA */
} gpu_device_info;

/* Loads the driver and returns the number of devices it sees (after
 * cu_narrow_devices(), those of the narrowed list up to the first that does
 * not exist), or a negative
 * gpu_error (GPU_ERR_NO_DRIVER, GPU_ERR_DRIVER_TOO_OLD, GPU_ERR_NO_DEVICE)
 * with the reason from gpu_load_message(). */
int gpu_device_count(void);

/* Why gpu_device_count() failed. */
const char *gpu_load_message(void);

/* Fills info for device number `device` (as --device numbers it: the
 * driver's ordinal unless cu_narrow_devices() narrowed the devices); 0 or a
 * negative gpu_error (GPU_ERR_BAD_DEVICE when the driver has no such device). */
int gpu_device_query(int device, gpu_device_info *info);

/* Opens device number `device`, numbered as gpu_device_query() numbers it
 * (retains its primary context). */
int gpu_open(gpu **out, int device);

/* Releases everything the handle owns; accepts NULL. */
void gpu_close(gpu *g);

/* The device's facts. */
const gpu_device_info *gpu_info(const gpu *g);

/* Makes the device's context current on the calling thread. */
int gpu_bind(gpu *g);

/* Loads the embedded module (e.g. "reduce_f32") once: its native code
 * (cubin) of the device's major version and the highest minor version at or
 * below the device's, when there is one that the driver's version loads;
 * otherwise, or when the driver refuses that cubin (except for lack of
 * memory), the PTX of the highest virtual architecture the device runs,
 * which the driver JIT-compiles. Later calls return the loaded one.
 * *ms_out (may be NULL) gets the load time (0 for a module already loaded). */
int gpu_module(gpu *g, const char *module, CUmodule *out, double *ms_out);

/* The function name in a module loaded by gpu_module(). */
int gpu_function(gpu *g, const char *module, const char *name, CUfunction *out);

/* How gpu_module() loaded a module on one device. */
typedef struct {
    int loaded;              /* 1 once gpu_module() has loaded it */
    int native;              /* sm architecture of the native code loaded (90: sm_90), or
                                before loading, of the cubin gpu_module() tries first;
                                0: none, the driver JIT-compiles the PTX */
    int ptx;                 /* virtual architecture of the PTX: the one loaded when native
                                is 0, else the fallback; 0: none runs here */
    int refused;             /* sm architecture of a cubin the driver refused before the PTX
                                was loaded, or 0 */
    CUresult refused_result; /* the driver's result for that cubin */
    double ms;               /* load time: inflating, the driver's load and JIT (a refused
                                cubin included) */
} gpu_module_stats;

/* Fills *out for module on g: what gpu_module() loaded, or before it has
 * (out->loaded 0), what it would try. Reads only g's own state. 0. */
int gpu_module_get_stats(const gpu *g, const char *module, gpu_module_stats *out);

/* Pinned host memory; NULL on failure (GPU_ERR_OUT_OF_MEMORY recorded in
 * g). */
void *gpu_host_alloc(gpu *g, size_t bytes);
void gpu_host_free(gpu *g, void *p);

/* Pins (and unpins) host memory allocated elsewhere, portable across
 * contexts and mapped into the devices' address space (where the driver
 * refuses the mapping, pinned only); 0 or GPU_ERR_OUT_OF_MEMORY (text in
 * g). */
int gpu_host_register(gpu *g, void *p, size_t bytes);
void gpu_host_unregister(gpu *g, void *p);

/* The address at which g's kernels read and write host memory p pinned by
 * gpu_host_register (the host's own address where the device can use it);
 * 0, or GPU_ERR_DRIVER (text in g) where p is not mapped. */
int gpu_host_device_pointer(gpu *g, void *p, CUdeviceptr *out);

/* Device memory; 0 or GPU_ERR_OUT_OF_MEMORY naming the size. */
int gpu_mem_alloc(gpu *g, CUdeviceptr *out, size_t bytes, const char *what);
void gpu_mem_free(gpu *g, CUdeviceptr p);

/* A stream and the events that mark the end of a chunk's copies in and
 * of all its work queued on it: one per chunk in flight. */
typedef struct {
    CUstream stream;
    CUevent done;
    CUevent copied;
} gpu_queue;

/* Creates the stream and event; 0 or a negative gpu_error (text in g). */
int gpu_queue_open(gpu *g, gpu_queue *q);

/* Waits for queued work and destroys both; accepts a zeroed queue. */
void gpu_queue_close(gpu_queue *q);

/* Marks the end of the work queued so far. */
CUresult gpu_queue_mark(gpu_queue *q);

/* Blocks until the marked work is done; CUDA_SUCCESS or the driver's error
 * (a failed kernel shows up here). */
CUresult gpu_queue_wait(gpu_queue *q);

/* Marks the end of the chunk's copies from host memory queued so far. */
CUresult gpu_queue_mark_copied(gpu_queue *q);

/* Blocks until the marked copies are done: the host buffers they read may
 * be reused. 0, or GPU_ERR_LAUNCH filled in *st. */
int gpu_queue_wait_copied(gpu_queue *q, io_status *st);

/* Launches f (1-D grid) on stream s; a failure names the kernel. */
int gpu_launch(gpu *g, CUfunction f, const char *kname, unsigned grid, unsigned block,
               CUstream s, void **params);

/* gpu_launch with `shared` bytes of dynamic shared memory a block. */
int gpu_launch_shared(gpu *g, CUfunction f, const char *kname, unsigned grid, unsigned block,
                      unsigned shared, CUstream s, void **params);

/* Launches f on a gx x gy grid of bx x by blocks on stream s; a failure
 * names the kernel. */
int gpu_launch_2d(gpu *g, CUfunction f, const char *kname, unsigned gx, unsigned gy, unsigned bx,
                  unsigned by, CUstream s, void **params);

/* Records a failed CU_TRY's code (cu_error's) in g, its line the recorded
 * call's text after context, and forgets the recorded call; returns code. */
int gpu_fail(gpu *g, int code, const char *context);

/* rc as a failure with its line in g: where a driver call failed on this
 * thread (CU_TRY recorded it, cu_last_result), gpu_fail's with context;
 * otherwise (0, or a failure whose line is already kept) rc as it is. For
 * callers that get either kind from one call. */
int gpu_settle(gpu *g, int rc, const char *context);

/* The last failure on g: its gpu_error and line (code 0: none yet). Each
 * failing call above replaces it. */
const io_status *gpu_status(const gpu *g);

/* Text for a gpu_error code when no handle is at hand. */
const char *gpu_strerror(int code);

#endif
