/* gpu.c - device, context, embedded modules, memory and launches. */
#include "gpu.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/clock.h"
#include "ptx_blobs.h"

#define GPU_MAX_MODULES 256 /* above the number of embedded modules (info loads them all) */

struct gpu {
    gpu_device_info info;
    CUdevice dev;
    CUcontext ctx;
    struct {
        const char *name;
        CUmodule mod;
        gpu_module_stats stats;
    } modules[GPU_MAX_MODULES];
    int nmodules;
    io_status st; /* the last failure (gpu_status) */
};

static char gpu_driver_message[512]; /* why the driver runs none of the modules */

/* The CUDA version whose driver first loads embedded blob i (0: unknown):
 * for PTX, by its PTX ISA version; for a cubin, by its ELF ABI version. */
static int gpu_blob_driver(int i)
{
    return ptx_blobs[i].kind == PTX_BLOB_PTX ? cu_ptx_isa_driver(ptx_blobs[i].isa)
                                             : cu_cubin_abi_driver(ptx_blobs[i].abi);
}

/* Whether this driver's version is enough for blob i (a version the table
 * does not know is left to the driver to judge). */
static int gpu_driver_loads(int i)
{
    int need = gpu_blob_driver(i);
    return need == 0 || cu_driver_version() >= need;
}

/* Index of the PTX blob that needs the oldest driver among those of module
 * (NULL: of any module) that run on compute capability cc (10*major+minor),
 * or -1 when there is none. Only PTX counts: it is what every module falls
 * back to when the driver refuses its native code. */
static int gpu_oldest_driver_blob(const char *module, int cc)
{
    int oldest = -1;
    for (int i = 0; ptx_blobs[i].module; i++)
        if (ptx_blobs[i].kind == PTX_BLOB_PTX && (!module || !strcmp(ptx_blobs[i].module, module)) &&
            ptx_blobs[i].arch <= cc &&
            (oldest < 0 || gpu_blob_driver(i) < gpu_blob_driver(oldest)))
            oldest = i;
    return oldest;
}

/* 0 when the driver's version loads at least one embedded module, or
 * GPU_ERR_DRIVER_TOO_OLD with gpu_driver_message naming the version needed. */
static int gpu_check_driver_version(void)
{
    int i = gpu_oldest_driver_blob(NULL, INT_MAX);
    if (i < 0 || gpu_driver_loads(i))
        return 0;
    char need[64];
    int v = cu_driver_version();
    snprintf(gpu_driver_message, sizeof gpu_driver_message,
             "the NVIDIA driver (CUDA %d.%d) is too old for the embedded kernels: they need %s "
             "or newer; install a newer driver, or use --backend cpu",
             v / 1000, v % 1000 / 10, cu_driver_text(gpu_blob_driver(i), need, sizeof need));
    return GPU_ERR_DRIVER_TOO_OLD;
}

/* Loads the driver (cu_load's gpu_error on failure), then checks its
 * version against what the embedded modules need. */
int gpu_device_count(void)
{
    int rc = cu_load();
    if (rc < 0)
        return rc;
    rc = gpu_check_driver_version();
    if (rc < 0)
        return rc;
    int n = 0;
    if (cu.DeviceGetCount(&n) != CUDA_SUCCESS || n <= 0)
        return GPU_ERR_NO_DEVICE;
    return n;
}

/* Reason the driver could not be used. */
const char *gpu_load_message(void)
{
    return gpu_driver_message[0] ? gpu_driver_message : cu_load_message();
}

/* Reads the attributes gpubatch reports and uses. */
int gpu_device_query(int device, gpu_device_info *info)
{
    int n = gpu_device_count();
    if (n < 0)
        return n;
    int ordinal = cu_device_ordinal(device);
    if (ordinal < 0 || ordinal >= n)
        return GPU_ERR_BAD_DEVICE;
    CUdevice dev;
    memset(info, 0, sizeof *info);
    info->ordinal = device;
    if (cu.DeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
        cu.DeviceGetName(info->name, (int)sizeof info->name - 1, dev) != CUDA_SUCCESS ||
        cu.DeviceGetAttribute(&info->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              dev) != CUDA_SUCCESS ||
        cu.DeviceGetAttribute(&info->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              dev) != CUDA_SUCCESS ||
        cu.DeviceGetAttribute(&info->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) !=
            CUDA_SUCCESS ||
        cu.DeviceGetAttribute(&info->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) !=
            CUDA_SUCCESS ||
        cu.DeviceTotalMem(&info->total_mem, dev) != CUDA_SUCCESS)
        return GPU_ERR_DRIVER;
    /* told by every driver of CUDA 11 and later; where not, the users guess */
    if (cu.DeviceGetAttribute(&info->smem_per_sm,
                              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                              dev) != CUDA_SUCCESS ||
        cu.DeviceGetAttribute(&info->smem_reserved,
                              CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
                              dev) != CUDA_SUCCESS)
        info->smem_per_sm = info->smem_reserved = 0;
    return 0;
}

/* Retains the primary context of the device and makes it current. */
int gpu_open(gpu **out, int device)
{
    *out = NULL;
    gpu *g = calloc(1, sizeof *g);
    if (!g)
        return GPU_ERR_OUT_OF_MEMORY;
    int rc = gpu_device_query(device, &g->info);
    if (rc < 0)
        goto out_free;
    int r = (int)cu.DeviceGet(&g->dev, cu_device_ordinal(device));
    if (r == CUDA_SUCCESS)
        r = (int)cu.DevicePrimaryCtxRetain(&g->ctx, g->dev);
    if (r != CUDA_SUCCESS) {
        rc = cu_error(r);
        goto out_free;
    }
    if (cu.CtxSetCurrent(g->ctx) != CUDA_SUCCESS) {
        rc = GPU_ERR_DRIVER;
        goto out_release;
    }
    *out = g;
    return 0;
out_release:
    cu.DevicePrimaryCtxRelease(g->dev);
out_free:
    free(g);
    return rc;
}

/* Unloads modules and releases the primary context. */
void gpu_close(gpu *g)
{
    if (!g)
        return;
    cu.CtxSetCurrent(g->ctx);
    for (int i = 0; i < g->nmodules; i++)
        cu.ModuleUnload(g->modules[i].mod);
    cu.DevicePrimaryCtxRelease(g->dev);
    free(g);
}

/* The device's facts. */
const gpu_device_info *gpu_info(const gpu *g)
{
    return &g->info;
}

/* Makes the context current on this thread. */
int gpu_bind(gpu *g)
{
    CU_TRY(cu.CtxSetCurrent(g->ctx));
    return 0;
}

/* Whether blob b runs on this device: PTX of a virtual architecture at or
 * below its compute capability; native code of the same major version and a
 * minor version at or below its own (cubins are binary-compatible only
 * within a major version). */
static int gpu_blob_runs(const gpu *g, const ptx_blob *b)
{
    if (b->kind == PTX_BLOB_PTX)
        return b->arch <= g->info.cc_major * 10 + g->info.cc_minor;
    return b->arch / 10 == g->info.cc_major && b->arch % 10 <= g->info.cc_minor;
}

/* Index of the best embedded blob of module and kind (PTX_BLOB_PTX or
 * PTX_BLOB_SASS) that runs on this device and that this driver loads (the
 * highest architecture), or -1. */
static int gpu_pick_blob(const gpu *g, const char *module, int kind)
{
    int best = -1;
    for (int i = 0; ptx_blobs[i].module; i++) {
        if (ptx_blobs[i].kind != kind || strcmp(ptx_blobs[i].module, module) ||
            !gpu_blob_runs(g, &ptx_blobs[i]) || !gpu_driver_loads(i))
            continue;
        if (best < 0 || ptx_blobs[i].arch > ptx_blobs[best].arch)
            best = i;
    }
    return best;
}

/* The loaded module's slot in g, or -1. */
static int gpu_find_module(const gpu *g, const char *module)
{
    for (int i = 0; i < g->nmodules; i++)
        if (!strcmp(g->modules[i].name, module))
            return i;
    return -1;
}

/* What gpu_module() loaded for module, or before it has, what it would try. */
int gpu_module_get_stats(const gpu *g, const char *module, gpu_module_stats *out)
{
    int i = gpu_find_module(g, module);
    if (i >= 0) {
        *out = g->modules[i].stats;
        return 0;
    }
    int s = gpu_pick_blob(g, module, PTX_BLOB_SASS), p = gpu_pick_blob(g, module, PTX_BLOB_PTX);
    *out = (gpu_module_stats){.native = s < 0 ? 0 : ptx_blobs[s].arch,
                              .ptx = p < 0 ? 0 : ptx_blobs[p].arch};
    return 0;
}

/* GPU_ERR_PTX_TOO_NEW with a message naming the module, the PTX ISA version
 * of its blob b, the driver that loads it and what the driver said (why, or
 * NULL when it was not asked). */
static int gpu_driver_too_old(gpu *g, const char *module, int b, const char *why)
{
    char need[64] = "a newer driver";
    int v = cu_driver_version(), isa = ptx_blobs[b].isa;
    if (gpu_blob_driver(b))
        cu_driver_text(gpu_blob_driver(b), need, sizeof need);
    return io_fail(&g->st, GPU_ERR_PTX_TOO_NEW,
                   "the NVIDIA driver (CUDA %d.%d) cannot load module %s: its PTX ISA %d.%d needs "
                   "%s or newer%s%s; install a newer driver, or use --backend cpu",
                   v / 1000, v % 1000 / 10, module, isa / 10, isa % 10, need,
                   why ? ", and the driver says " : "", why ? why : "");
}

/* Explains why no embedded blob of module fits: the driver is too old for
 * every one that runs on this device, or none runs on this device. */
static int gpu_no_blob(gpu *g, const char *module)
{
    int b = gpu_oldest_driver_blob(module, g->info.cc_major * 10 + g->info.cc_minor);
    if (b >= 0)
        return gpu_driver_too_old(g, module, b, NULL);
    return io_fail(&g->st, GPU_ERR_MODULE,
                   "no embedded PTX or native code of module %s runs on compute capability %d.%d",
                   module, g->info.cc_major, g->info.cc_minor);
}

/* Inflates blob b and hands it to the driver, its error log into log;
 * the driver's result (CUDA_ERROR_OUT_OF_MEMORY when inflating runs out of
 * memory, CUDA_ERROR_INVALID_IMAGE for a damaged stream). */
static CUresult gpu_load_blob(int b, CUmodule *mod, char *log, size_t log_len)
{
    char *image, info_log[2048] = "";
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                  CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)log_len, info_log,
                    (void *)(uintptr_t)sizeof info_log};
    log[0] = 0;
    int rc = ptx_blob_unpack(&ptx_blobs[b], &image);
    if (rc < 0)
        return rc == -1 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_IMAGE;
    CUresult r = cu.ModuleLoadDataEx(mod, image, 4, opts, vals);
    free(image);
    return r;
}

/* Records why blob b of module failed to load (the driver's result r and
 * error log) and returns the gpu_error for it. */
static int gpu_load_failed(gpu *g, const char *module, int b, CUresult r, char *log)
{
    int ptx = ptx_blobs[b].kind == PTX_BLOB_PTX;
    if (ptx && r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        return gpu_driver_too_old(g, module, b, cu_result_text(r));
    for (char *p = log; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return io_fail(&g->st, r == CUDA_ERROR_OUT_OF_MEMORY ? GPU_ERR_OUT_OF_MEMORY : GPU_ERR_MODULE,
                   "loading module %s (%s_%d) failed: %s; %s log: %s", module,
                   ptx ? "compute" : "sm", ptx_blobs[b].arch, cu_result_text(r),
                   ptx ? "JIT" : "driver", log[0] ? log : "(empty)");
}

/* Loads (once) module: its native code for this device when there is some
 * and the driver takes it, else (the driver refused the cubin, as one older
 * than the cubin's format does) its PTX, which the driver JIT-compiles;
 * keeps the driver's log on failure. */
int gpu_module(gpu *g, const char *module, CUmodule *out, double *ms_out)
{
    int slot = gpu_find_module(g, module);
    if (slot >= 0) {
        *out = g->modules[slot].mod;
        if (ms_out)
            *ms_out = 0;
        return 0;
    }
    int s = gpu_pick_blob(g, module, PTX_BLOB_SASS), p = gpu_pick_blob(g, module, PTX_BLOB_PTX);
    if (s < 0 && p < 0)
        return gpu_no_blob(g, module);
    if (g->nmodules == GPU_MAX_MODULES)
        return io_fail(&g->st, GPU_ERR_MODULE, "too many modules loaded");
    int rc = gpu_bind(g);
    if (rc < 0)
        return gpu_fail(g, rc, "loading a module");
    gpu_module_stats st = {.loaded = 1, .ptx = p < 0 ? 0 : ptx_blobs[p].arch};
    char log[8192];
    CUmodule mod = NULL;
    double t0 = 1e3 * io_seconds();
    if (s >= 0) {
        CUresult r = gpu_load_blob(s, &mod, log, sizeof log);
        if (r == CUDA_SUCCESS) {
            st.native = ptx_blobs[s].arch;
        } else if (r == CUDA_ERROR_OUT_OF_MEMORY || p < 0) {
            return gpu_load_failed(g, module, s, r, log);
        } else {
            st.refused = ptx_blobs[s].arch;
            st.refused_result = r;
        }
    }
    if (!st.native) {
        CUresult r = gpu_load_blob(p, &mod, log, sizeof log);
        if (r != CUDA_SUCCESS)
            return gpu_load_failed(g, module, p, r, log);
    }
    st.ms = 1e3 * io_seconds() - t0;
    g->modules[g->nmodules].name = ptx_blobs[st.native ? s : p].module;
    g->modules[g->nmodules].mod = mod;
    g->modules[g->nmodules].stats = st;
    g->nmodules++;
    *out = mod;
    if (ms_out)
        *ms_out = st.ms;
    return 0;
}

/* Looks a kernel up in a module, loading the module if needed. */
int gpu_function(gpu *g, const char *module, const char *name, CUfunction *out)
{
    CUmodule mod;
    int rc = gpu_module(g, module, &mod, NULL);
    if (rc < 0)
        return rc;
    CUresult r = cu.ModuleGetFunction(out, mod, name);
    if (r != CUDA_SUCCESS)
        return io_fail(&g->st, GPU_ERR_MODULE, "kernel %s not found in module %s: %s", name,
                       module, cu_result_text(r));
    return 0;
}

/* Pinned host memory, portable across contexts. */
void *gpu_host_alloc(gpu *g, size_t bytes)
{
    void *p = NULL;
    cu.CtxSetCurrent(g->ctx);
    CUresult r = cu.MemHostAlloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        io_fail(&g->st, GPU_ERR_OUT_OF_MEMORY,
                "cannot allocate %zu bytes of pinned host memory: %s", bytes, cu_result_text(r));
        return NULL;
    }
    return p;
}

/* Frees pinned memory; accepts NULL. */
void gpu_host_free(gpu *g, void *p)
{
    if (!p)
        return;
    cu.CtxSetCurrent(g->ctx);
    cu.MemFreeHost(p);
}

/* Pins host memory the caller allocated, portable across contexts and
 * mapped into the devices' address space where they can map it. */
int gpu_host_register(gpu *g, void *p, size_t bytes)
{
    cu.CtxSetCurrent(g->ctx);
    size_t n = bytes ? bytes : 1;
    CUresult r = cu.MemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY)
        r = cu.MemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE); /* pinned, not mapped */
    if (r != CUDA_SUCCESS)
        return io_fail(&g->st, GPU_ERR_OUT_OF_MEMORY, "cannot pin %zu bytes of host memory: %s",
                       bytes, cu_result_text(r));
    return 0;
}

/* The address through which g's kernels reach pinned host memory. */
int gpu_host_device_pointer(gpu *g, void *p, CUdeviceptr *out)
{
    CUresult r = cu.CtxSetCurrent(g->ctx);
    if (r == CUDA_SUCCESS)
        r = cu.MemHostGetDevicePointer(out, p, 0);
    if (r == CUDA_SUCCESS)
        return 0;
    return io_fail(&g->st, GPU_ERR_DRIVER, "cannot map pinned host memory into the device: %s",
                   cu_result_text(r));
}

/* Unpins what gpu_host_register pinned. */
void gpu_host_unregister(gpu *g, void *p)
{
    cu.CtxSetCurrent(g->ctx);
    cu.MemHostUnregister(p);
}

/* Device memory with an error naming what it was for. */
int gpu_mem_alloc(gpu *g, CUdeviceptr *out, size_t bytes, const char *what)
{
    CUresult r = cu.CtxSetCurrent(g->ctx);
    if (r == CUDA_SUCCESS)
        r = cu.MemAlloc(out, bytes ? bytes : 1);
    if (r == CUDA_SUCCESS)
        return 0;
    size_t free_b = 0, total_b = 0;
    cu.MemGetInfo(&free_b, &total_b);
    *out = 0;
    return io_fail(&g->st, cu_error(r),
                   "out of device memory: %s needs %zu bytes, %zu of %zu free on device %d (%s)",
                   what, bytes, free_b, total_b, g->info.ordinal, cu_result_text(r));
}

/* Frees device memory; accepts 0. */
void gpu_mem_free(gpu *g, CUdeviceptr p)
{
    if (!p)
        return;
    cu.CtxSetCurrent(g->ctx);
    cu.MemFree(p);
}

/* A non-blocking stream and a blocking-sync event without timing. */
int gpu_queue_open(gpu *g, gpu_queue *q)
{
    CUresult r = cu.CtxSetCurrent(g->ctx);
    if (r == CUDA_SUCCESS)
        r = cu.StreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS)
        r = cu.EventCreate(&q->done, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC);
    if (r == CUDA_SUCCESS)
        r = cu.EventCreate(&q->copied, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC);
    if (r == CUDA_SUCCESS)
        return 0;
    gpu_queue_close(q);
    return io_fail(&g->st, cu_error(r),
                   "cannot create a CUDA stream: %s", cu_result_text(r));
}

/* Drains and destroys a queue. */
void gpu_queue_close(gpu_queue *q)
{
    if (q->stream)
        cu.StreamSynchronize(q->stream);
    if (q->done)
        cu.EventDestroy(q->done);
    if (q->copied)
        cu.EventDestroy(q->copied);
    if (q->stream)
        cu.StreamDestroy(q->stream);
    q->stream = NULL;
    q->done = NULL;
    q->copied = NULL;
}

/* Records the queue's event. */
CUresult gpu_queue_mark(gpu_queue *q)
{
    return cu.EventRecord(q->done, q->stream);
}

/* Waits for the queue's event. */
CUresult gpu_queue_wait(gpu_queue *q)
{
    return cu.EventSynchronize(q->done);
}

/* Records the event of the copies in. */
CUresult gpu_queue_mark_copied(gpu_queue *q)
{
    return cu.EventRecord(q->copied, q->stream);
}

/* Waits for the copies in (see gpu.h). */
int gpu_queue_wait_copied(gpu_queue *q, io_status *st)
{
    CUresult r = cu.EventSynchronize(q->copied);
    if (r == CUDA_SUCCESS)
        return 0;
    return io_fail(st, GPU_ERR_LAUNCH, "copying a chunk to the device failed: %s",
                   cu_result_text(r));
}

/* Launches a 1-D grid; failures name the kernel. */
int gpu_launch(gpu *g, CUfunction f, const char *kname, unsigned grid, unsigned block,
               CUstream s, void **params)
{
    return gpu_launch_shared(g, f, kname, grid, block, 0, s, params);
}

/* Launches a 1-D grid with shared bytes of dynamic shared memory a block;
 * failures name the kernel. */
int gpu_launch_shared(gpu *g, CUfunction f, const char *kname, unsigned grid, unsigned block,
                      unsigned shared, CUstream s, void **params)
{
    if (grid == 0)
        return 0;
    CUresult r = cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, shared, s, params, NULL);
    if (r != CUDA_SUCCESS)
        return io_fail(&g->st, GPU_ERR_LAUNCH, "launching kernel %s (%u blocks of %u) failed: %s",
                       kname, grid, block, cu_result_text(r));
    return 0;
}

/* Launches a 2-D grid of 2-D blocks; failures name the kernel and shape. */
int gpu_launch_2d(gpu *g, CUfunction f, const char *kname, unsigned gx, unsigned gy, unsigned bx,
                  unsigned by, CUstream s, void **params)
{
    if (gx == 0 || gy == 0)
        return 0;
    CUresult r = cu.LaunchKernel(f, gx, gy, 1, bx, by, 1, 0, s, params, NULL);
    if (r != CUDA_SUCCESS)
        return io_fail(&g->st, GPU_ERR_LAUNCH,
                       "launching kernel %s (%ux%u blocks of %ux%u) failed: %s", kname, gx, gy,
                       bx, by, cu_result_text(r));
    return 0;
}

/* Keeps a failed CU_TRY's code with the recorded call's text. */
int gpu_fail(gpu *g, int code, const char *context)
{
    io_fail(&g->st, code, "%s: %s", context, cu_last_failure());
    cu_clear_failure();
    return code;
}

/* Gives a driver failure recorded on this thread its line in g; any other
 * failure already has its line. */
int gpu_settle(gpu *g, int rc, const char *context)
{
    return rc < 0 && cu_last_result() != CUDA_SUCCESS ? gpu_fail(g, rc, context) : rc;
}

/* The last failure as a value. */
const io_status *gpu_status(const gpu *g)
{
    return &g->st;
}

/* Generic text of a gpu_error code. */
const char *gpu_strerror(int code)
{
    switch (code) {
    case GPU_ERR_NO_DRIVER:
        return "no NVIDIA driver";
    case GPU_ERR_DRIVER_TOO_OLD:
        return "NVIDIA driver too old";
    case GPU_ERR_NO_DEVICE:
        return "no CUDA device";
    case GPU_ERR_BAD_DEVICE:
        return "no such CUDA device";
    case GPU_ERR_MODULE:
        return "kernel module failed to load";
    case GPU_ERR_PTX_TOO_NEW:
        return "NVIDIA driver too old for the embedded PTX";
    case GPU_ERR_OUT_OF_MEMORY:
        return "out of device memory";
    case GPU_ERR_LAUNCH:
        return "kernel launch failed";
    case GPU_ERR_INTERNAL:
        return "internal error";
    default:
        return "CUDA driver call failed";
    }
}
