/* cu.h - the subset of the CUDA driver API gpubatch uses, declared here so
 * that the build needs no CUDA headers, and loaded at run time.
 *
 * cu_load() opens libcuda.so.1 with dlopen, asks the driver its version and
 * resolves every entry point at the ABI of CU_ABI_VERSION (CUDA 11.0, the
 * oldest driver supported) into the table `cu` (cu.MemAlloc,
 * cu.LaunchKernel, ...): through cuGetProcAddress_v2 on drivers of CUDA 12.0
 * and newer, cuGetProcAddress on CUDA 11.3 to 11.8, and by the versioned
 * symbol names of CUDA 11.0's cuda.h (cuMemAlloc_v2, ...) on older drivers
 * that have no cuGetProcAddress. Types and enum values are the driver's
 * documented ABI. CU_TRY() wraps every call: it records the call, file and
 * line of the first failure (cu_last_failure) and returns the project's
 * code for it (cu_error); it never exits. */
#ifndef GPUBATCH_RUNTIME_CU_H
#define GPUBATCH_RUNTIME_CU_H

#include <stddef.h>
#include <stdint.h>

#include "io/status.h"

#define CU_ABI_VERSION 11000 /* entry-point ABI we use: CUDA 11.0, driver R450 */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_FAILED = 719,
};

enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
};

enum {
    CU_JIT_WALL_TIME = 2,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_LOG_VERBOSE = 12,
};

enum { CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9 };
enum { CU_STREAM_NON_BLOCKING = 1 };
enum { CU_EVENT_BLOCKING_SYNC = 1, CU_EVENT_DISABLE_TIMING = 2 };
enum { CU_MEMHOSTALLOC_PORTABLE = 1 };
enum { CU_MEMHOSTREGISTER_PORTABLE = 1, CU_MEMHOSTREGISTER_DEVICEMAP = 2, CU_MEMHOSTREGISTER_READ_ONLY = 8 };
enum { CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2 };

/* The resolved entry points; names drop the "cu" prefix. */
typedef struct {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*GetErrorName)(CUresult err, const char **str);
    CUresult (*GetErrorString)(CUresult err, const char **str);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*ModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned int nopt,
                                 int *options, void **values);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction fn, int attrib, int value);
    CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr ptr);
    CUresult (*MemHostAlloc)(void **ptr, size_t bytes, unsigned int flags);
    CUresult (*MemFreeHost)(void *ptr);
    CUresult (*MemHostRegister)(void *ptr, size_t bytes, unsigned int flags);
    CUresult (*MemHostUnregister)(void *ptr);
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *dptr, void *ptr, unsigned int flags);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t n, CUstream s);
    CUresult (*StreamCreate)(CUstream *s, unsigned int flags);
    CUresult (*StreamDestroy)(CUstream s);
    CUresult (*StreamSynchronize)(CUstream s);
    CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned int flags);
    CUresult (*EventCreate)(CUevent *e, unsigned int flags);
    CUresult (*EventRecord)(CUevent e, CUstream s);
    CUresult (*EventSynchronize)(CUevent e);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*EventDestroy)(CUevent e);
    CUresult (*LaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shared_bytes, CUstream s, void **params, void **extra);
} cu_api;

extern cu_api cu;

/* The driver reads the environment as it starts (cuInit, on whichever
 * thread calls cu_load first): cu_set_defaults() and cu_narrow_devices()
 * set it from the main thread before any other thread starts, since
 * setenv is not safe beside another thread's getenv. */

/* Hardware work queues per context that gpubatch asks the driver for
 * (CUDA_DEVICE_MAX_CONNECTIONS, default 8): every queue lengthens the
 * context's creation, and with 4 the streams that run at once are as many
 * as with 8 (the counts raced in BENCHMARKS.md). */
#define CU_MAX_CONNECTIONS "4"

/* How the driver loads the kernels of a module (CUDA_MODULE_LOADING): all
 * at the module's load. With the driver's default (LAZY, since CUDA 12.2)
 * a kernel loads when first looked up, and a kernel loaded while a chunk's
 * work runs made the next chunk's work on another stream wait for it. */
#define CU_MODULE_LOADING "EAGER"

/* Sets CUDA_DEVICE_MAX_CONNECTIONS to CU_MAX_CONNECTIONS and
 * CUDA_MODULE_LOADING to CU_MODULE_LOADING, each unless the user set it;
 * call before any other thread starts (it changes the environment). */
void cu_set_defaults(void);

/* The most devices cu_narrow_devices() narrows to. */
#define CU_MAX_NARROWED 64

/* Makes the `count` devices numbered in `devices` (distinct, as --device
 * numbers them: among those CUDA_VISIBLE_DEVICES leaves visible, in the
 * order CUDA_DEVICE_ORDER gives) the only ones the driver starts, in that
 * order: sets CUDA_VISIBLE_DEVICES to their indices, or, when it is set, to
 * its entries at those places (integers, GPU-... or MIG-... UUIDs, copied
 * as written), since the driver's start grows with every device it sees.
 * The driver's ordinal of devices[i] is then i (cu_device_ordinal).
 * CUDA_DEVICE_ORDER is left as it is: the driver reads the indices in its
 * order. Leaves everything as it is, returning 0, when
 * GPUBATCH_NARROW_DEVICES is 0, when count is not 1..CU_MAX_NARROWED, or
 * when CUDA_VISIBLE_DEVICES is set but has no entry at a place asked for or
 * one before it that is not an index or a UUID (the driver then decides, as
 * without narrowing); 1 when narrowed. Call before cu_load and before any
 * other thread starts (it changes the environment), at most once. */
int cu_narrow_devices(const int *devices, int count);

/* Whether cu_narrow_devices() narrowed the devices. */
int cu_devices_narrowed(void);

/* The driver's ordinal of device number `device` (as --device numbers
 * it): the number itself unless cu_narrow_devices() narrowed, else its
 * place among the devices narrowed to, or -1 when it is not one of them. */
int cu_device_ordinal(int device);

/* The value cu_narrow_devices() gave CUDA_VISIBLE_DEVICES ("" when it did
 * not narrow). */
const char *cu_narrowed_value(void);

/* Opens the driver and resolves the table once; later calls return the
 * first result. Returns 0 or a negative gpu_error (GPU_ERR_NO_DRIVER,
 * GPU_ERR_DRIVER_TOO_OLD, GPU_ERR_NO_DEVICE, or GPU_ERR_DRIVER when cuInit
 * failed); cu_load_message() explains. */
int cu_load(void);

/* Whether an NVIDIA driver may be present at all, without loading it: the
 * library GPUBATCH_LIBCUDA names, or the kernel driver's control device
 * (/dev/nvidiactl; /dev/dxg under WSL). Where it says no, cu_load fails;
 * auto then need not prepare anything for devices while it does. */
int cu_driver_may_exist(void);

/* One line describing the outcome of cu_load() ("" when it succeeded). */
const char *cu_load_message(void);

/* The driver's version as 1000*major + 10*minor (0 before cu_load, or when
 * there is no driver). */
int cu_driver_version(void);

/* How cu_load() found the entry points: "cuGetProcAddress_v2",
 * "cuGetProcAddress" or "versioned symbols" ("" before it did). */
const char *cu_entry_point_source(void);

/* The first CUDA version, from CU_ABI_VERSION on, whose driver loads PTX of
 * ISA version isa (10*major + minor: 70 for 7.0 loads on CUDA 11.0 = 11000);
 * 0 for a version the table does not know (newer than it). */
int cu_ptx_isa_driver(int isa);

/* The first CUDA version, from CU_ABI_VERSION on, whose driver loads a
 * cubin of ELF ABI version abi (its e_ident[8]): ptxas 13 writes version 8,
 * which drivers before CUDA 13.0 predate; 0 for a version the table does
 * not know. */
int cu_cubin_abi_driver(int abi);

/* "CUDA 11.0 (driver R450)": a CUDA version and the first Linux driver
 * branch that has it (just "CUDA 10.2" for a version with no PTX ISA of its
 * own in the table), into buf; returns buf. */
const char *cu_driver_text(int cuda_version, char *buf, size_t len);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result code. */
const char *cu_result_text(CUresult r);

/* Records a failed call (first failure wins until cu_clear_failure). */
void cu_record_failure(CUresult r, const char *call, const char *file, int line);

/* "cuMemAlloc(...) at runtime/gpu.c:123: CUDA_ERROR_OUT_OF_MEMORY (out of memory)". */
const char *cu_last_failure(void);

/* The driver result of the recorded failure (CUDA_SUCCESS when none). */
CUresult cu_last_result(void);

/* Forgets the recorded failure. */
void cu_clear_failure(void);

/* A failed driver result as the project's code (io/status.h): GPU_ERR_OUT_OF_MEMORY
 * for CUDA_ERROR_OUT_OF_MEMORY, GPU_ERR_DRIVER for any other (0 for
 * CUDA_SUCCESS); the number and name stay in the recorded line. */
int cu_error(CUresult r);

/* Evaluates a driver call; on failure records it and returns cu_error(result)
 * from the enclosing function (which must return int). */
#define CU_TRY(call)                                                     \
    do {                                                                 \
        CUresult cu_try_r_ = (call);                                     \
        if (cu_try_r_ != CUDA_SUCCESS) {                                 \
            cu_record_failure(cu_try_r_, #call, __FILE__, __LINE__);     \
            return cu_error(cu_try_r_);                                      \
        }                                                                \
    } while (0)

/* Like CU_TRY but jumps to label with err set, for goto cleanup. */
#define CU_TRY_GOTO(call, err, label)                                    \
    do {                                                                 \
        CUresult cu_try_r_ = (call);                                     \
        if (cu_try_r_ != CUDA_SUCCESS) {                                 \
            cu_record_failure(cu_try_r_, #call, __FILE__, __LINE__);     \
            (err) = cu_error(cu_try_r_);                                     \
            goto label;                                                  \
        }                                                                \
    } while (0)

#endif
