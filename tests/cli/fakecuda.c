/* fakecuda.c - a stand-in for libcuda.so.1 that lets the command-line tests
 * reach the GPU error paths on a machine without a GPU.
 *
 * It resolves every entry point gpubatch asks cuGetProcAddress_v2 for and
 * behaves like one small device whose memory is ordinary memory and whose
 * kernels do nothing. Two variables inject the failures under test:
 *   FAKECUDA_MEM_BYTES    device memory size; a cuMemAlloc beyond what is
 *                         left fails with CUDA_ERROR_OUT_OF_MEMORY
 *   FAKECUDA_LAUNCH_ERROR a CUresult every cuLaunchKernel returns
 * Built as build/tests/libfakecuda.so and named by GPUBATCH_LIBCUDA. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cu.h"

#define FAKE_DEFAULT_MEM ((size_t)16 << 30)

static size_t fake_used;

/* Device memory size from FAKECUDA_MEM_BYTES, or 16 GiB. */
static size_t fake_mem_total(void)
{
    const char *s = getenv("FAKECUDA_MEM_BYTES");
    return s && *s ? (size_t)strtoull(s, NULL, 10) : FAKE_DEFAULT_MEM;
}

/* Initialises the fake driver. */
static CUresult fake_init(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

/* Reports CUDA 13.0. */
static CUresult fake_driver_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static const struct {
    CUresult code;
    const char *name, *text;
} fake_errors[] = {
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
};

/* The name (want_name) or description of a result code the tests provoke. */
static CUresult fake_error_lookup(CUresult e, const char **s, int want_name)
{
    for (size_t i = 0; i < sizeof fake_errors / sizeof fake_errors[0]; i++)
        if (fake_errors[i].code == e) {
            *s = want_name ? fake_errors[i].name : fake_errors[i].text;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* cuGetErrorName. */
static CUresult fake_error_name(CUresult e, const char **s)
{
    return fake_error_lookup(e, s, 1);
}

/* cuGetErrorString. */
static CUresult fake_error_string(CUresult e, const char **s)
{
    return fake_error_lookup(e, s, 0);
}

/* One device. */
static CUresult fake_device_count(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

/* Device 0 only. */
static CUresult fake_device_get(CUdevice *d, int ordinal)
{
    *d = 0;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* The device's name. */
static CUresult fake_device_name(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Fake GPU");
    return CUDA_SUCCESS;
}

/* Compute capability 9.0, 132 multiprocessors, 50 MiB of L2. */
static CUresult fake_device_attribute(int *v, int attrib, CUdevice d)
{
    (void)d;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

/* The memory size. */
static CUresult fake_total_mem(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = fake_mem_total();
    return CUDA_SUCCESS;
}

/* Free and total memory. */
static CUresult fake_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    *total_bytes = fake_mem_total();
    *free_bytes = *total_bytes - fake_used;
    return CUDA_SUCCESS;
}

/* A context, module, function, stream or event handle: never dereferenced. */
static CUresult fake_handle(void **h)
{
    static char token;
    *h = &token;
    return CUDA_SUCCESS;
}

/* Primary context retain. */
static CUresult fake_ctx_retain(CUcontext *c, CUdevice d)
{
    (void)d;
    return fake_handle((void **)c);
}

/* Primary context release. */
static CUresult fake_ctx_release(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

/* Success for calls with one pointer argument that need nothing done. */
static CUresult fake_ok1(void *a)
{
    (void)a;
    return CUDA_SUCCESS;
}

/* Success with no argument. */
static CUresult fake_ok0(void)
{
    return CUDA_SUCCESS;
}

/* Module load: nothing to compile. */
static CUresult fake_module_load(CUmodule *m, const void *image, unsigned int n, int *o, void **v)
{
    (void)image, (void)n, (void)o, (void)v;
    return fake_handle((void **)m);
}

/* Any kernel name resolves. */
static CUresult fake_get_function(CUfunction *f, CUmodule m, const char *name)
{
    (void)m, (void)name;
    return fake_handle((void **)f);
}

/* Device memory is host memory; fails beyond FAKECUDA_MEM_BYTES. The block
 * starts with its size so that cuMemFree can give it back. */
static CUresult fake_mem_alloc(CUdeviceptr *p, size_t bytes)
{
    if (bytes > fake_mem_total() - fake_used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t *block = malloc(bytes + sizeof(size_t) * 2);
    if (!block)
        return CUDA_ERROR_OUT_OF_MEMORY;
    block[0] = bytes;
    fake_used += bytes;
    *p = (CUdeviceptr)(uintptr_t)(block + 2);
    return CUDA_SUCCESS;
}

/* Frees device memory. */
static CUresult fake_mem_free(CUdeviceptr p)
{
    size_t *block = (size_t *)(uintptr_t)p - 2;
    fake_used -= block[0];
    free(block);
    return CUDA_SUCCESS;
}

/* Pinned memory is ordinary memory. */
static CUresult fake_host_alloc(void **p, size_t bytes, unsigned int flags)
{
    (void)flags;
    *p = malloc(bytes);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Frees pinned memory. */
static CUresult fake_host_free(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

/* Registering host memory does nothing. */
static CUresult fake_host_register(void *p, size_t bytes, unsigned int flags)
{
    (void)p, (void)bytes, (void)flags;
    return CUDA_SUCCESS;
}

/* Copies host to device, at once. */
static CUresult fake_htod(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    (void)s;
    memcpy((void *)(uintptr_t)dst, src, n);
    return CUDA_SUCCESS;
}

/* Copies device to host, at once. */
static CUresult fake_dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* Copies device to device, at once. */
static CUresult fake_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* Sets device bytes, at once. */
static CUresult fake_memset(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    memset((void *)(uintptr_t)dst, v, n);
    return CUDA_SUCCESS;
}

/* Stream or event creation. */
static CUresult fake_create(void **h, unsigned int flags)
{
    (void)flags;
    return fake_handle(h);
}

/* Waiting on or recording an event: everything is already done. */
static CUresult fake_ok2(void *a, void *b)
{
    (void)a, (void)b;
    return CUDA_SUCCESS;
}

/* Stream waits for an event. */
static CUresult fake_wait_event(CUstream s, CUevent e, unsigned int flags)
{
    (void)s, (void)e, (void)flags;
    return CUDA_SUCCESS;
}

/* Elapsed time: zero. */
static CUresult fake_elapsed(float *ms, CUevent a, CUevent b)
{
    (void)a, (void)b;
    *ms = 0;
    return CUDA_SUCCESS;
}

/* Launch: returns FAKECUDA_LAUNCH_ERROR when set; the kernel does nothing. */
static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                            void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s,
        (void)params, (void)extra;
    const char *e = getenv("FAKECUDA_LAUNCH_ERROR");
    return e && *e ? (CUresult)atoi(e) : CUDA_SUCCESS;
}

static const struct {
    const char *name;
    void *fn;
} fake_table[] = {
    {"cuInit", (void *)fake_init},
    {"cuDriverGetVersion", (void *)fake_driver_version},
    {"cuGetErrorName", (void *)fake_error_name},
    {"cuGetErrorString", (void *)fake_error_string},
    {"cuDeviceGetCount", (void *)fake_device_count},
    {"cuDeviceGet", (void *)fake_device_get},
    {"cuDeviceGetName", (void *)fake_device_name},
    {"cuDeviceGetAttribute", (void *)fake_device_attribute},
    {"cuDeviceTotalMem", (void *)fake_total_mem},
    {"cuDevicePrimaryCtxRetain", (void *)fake_ctx_retain},
    {"cuDevicePrimaryCtxRelease", (void *)fake_ctx_release},
    {"cuCtxSetCurrent", (void *)fake_ok1},
    {"cuCtxSynchronize", (void *)fake_ok0},
    {"cuMemGetInfo", (void *)fake_mem_info},
    {"cuModuleLoadDataEx", (void *)fake_module_load},
    {"cuModuleUnload", (void *)fake_ok1},
    {"cuModuleGetFunction", (void *)fake_get_function},
    {"cuMemAlloc", (void *)fake_mem_alloc},
    {"cuMemFree", (void *)fake_mem_free},
    {"cuMemHostAlloc", (void *)fake_host_alloc},
    {"cuMemFreeHost", (void *)fake_host_free},
    {"cuMemHostRegister", (void *)fake_host_register},
    {"cuMemHostUnregister", (void *)fake_ok1},
    {"cuMemcpyHtoDAsync", (void *)fake_htod},
    {"cuMemcpyDtoHAsync", (void *)fake_dtoh},
    {"cuMemcpyDtoDAsync", (void *)fake_dtod},
    {"cuMemsetD8Async", (void *)fake_memset},
    {"cuStreamCreate", (void *)fake_create},
    {"cuStreamDestroy", (void *)fake_ok1},
    {"cuStreamSynchronize", (void *)fake_ok1},
    {"cuStreamWaitEvent", (void *)fake_wait_event},
    {"cuEventCreate", (void *)fake_create},
    {"cuEventRecord", (void *)fake_ok2},
    {"cuEventSynchronize", (void *)fake_ok1},
    {"cuEventElapsedTime", (void *)fake_elapsed},
    {"cuEventDestroy", (void *)fake_ok1},
    {"cuLaunchKernel", (void *)fake_launch},
};

/* The driver's resolver: every entry point above, at any version. */
CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags,
                             int *status)
{
    (void)version, (void)flags;
    for (size_t i = 0; i < sizeof fake_table / sizeof fake_table[0]; i++)
        if (!strcmp(name, fake_table[i].name)) {
            *fn = fake_table[i].fn;
            if (status)
                *status = 0;
            return CUDA_SUCCESS;
        }
    *fn = NULL;
    if (status)
        *status = 0;
    return CUDA_ERROR_NOT_FOUND;
}
