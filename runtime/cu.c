/* cu.c - loading the CUDA driver by hand: dlopen + cuGetProcAddress. */
#include "cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cu_api cu;

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, unsigned long long);

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static int cu_status = CU_LOAD_NO_DRIVER;
static int cu_version;
static char cu_message[512];

static _Thread_local char cu_failure_text[512];
static _Thread_local CUresult cu_failure_result;

/* Where each table slot's entry point comes from. */
static const struct {
    const char *name;
    size_t offset;
} cu_entries[] = {
#define CU_ENTRY(field) {"cu" #field, offsetof(cu_api, field)}
    CU_ENTRY(Init),
    CU_ENTRY(DriverGetVersion),
    CU_ENTRY(GetErrorName),
    CU_ENTRY(GetErrorString),
    CU_ENTRY(DeviceGetCount),
    CU_ENTRY(DeviceGet),
    CU_ENTRY(DeviceGetName),
    CU_ENTRY(DeviceGetAttribute),
    CU_ENTRY(DeviceTotalMem),
    CU_ENTRY(DevicePrimaryCtxRetain),
    CU_ENTRY(DevicePrimaryCtxRelease),
    CU_ENTRY(CtxSetCurrent),
    CU_ENTRY(CtxSynchronize),
    CU_ENTRY(MemGetInfo),
    CU_ENTRY(ModuleLoadDataEx),
    CU_ENTRY(ModuleUnload),
    CU_ENTRY(ModuleGetFunction),
    CU_ENTRY(MemAlloc),
    CU_ENTRY(MemFree),
    CU_ENTRY(MemHostAlloc),
    CU_ENTRY(MemFreeHost),
    CU_ENTRY(MemHostRegister),
    CU_ENTRY(MemHostUnregister),
    CU_ENTRY(MemcpyHtoDAsync),
    CU_ENTRY(MemcpyDtoHAsync),
    CU_ENTRY(MemcpyDtoDAsync),
    CU_ENTRY(MemsetD8Async),
    CU_ENTRY(StreamCreate),
    CU_ENTRY(StreamDestroy),
    CU_ENTRY(StreamSynchronize),
    CU_ENTRY(StreamWaitEvent),
    CU_ENTRY(EventCreate),
    CU_ENTRY(EventRecord),
    CU_ENTRY(EventSynchronize),
    CU_ENTRY(EventElapsedTime),
    CU_ENTRY(EventDestroy),
    CU_ENTRY(LaunchKernel),
#undef CU_ENTRY
};

/* Resolves one symbol at CU_ABI_VERSION through whichever resolver the
 * driver has; returns 0, or -1 with cu_message explaining. */
static int cu_resolve(void *lib, get_proc_v2_fn gp2, get_proc_v1_fn gp1, const char *name,
                      void **fn)
{
    int status = 0;
    CUresult r;
    (void)lib;
    if (gp2)
        r = gp2(name, fn, CU_ABI_VERSION, 0, &status);
    else
        r = gp1(name, fn, CU_ABI_VERSION, 0);
    if (r == CUDA_SUCCESS && *fn)
        return 0;
    snprintf(cu_message, sizeof cu_message,
             "the NVIDIA driver is too old: entry point %s (CUDA %d.%d semantics) %s", name,
             CU_ABI_VERSION / 1000, CU_ABI_VERSION % 1000 / 10,
             status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "is not supported"
                                                                   : "was not found");
    return -1;
}

/* Opens libcuda, resolves the table and initialises the driver. */
static void cu_load_once(void)
{
    /* GPUBATCH_LIBCUDA names the only library to try (tests use a missing one). */
    const char *override = getenv("GPUBATCH_LIBCUDA");
    if (override && !*override)
        override = NULL;
    const char *names[] = {override, override ? NULL : "libcuda.so.1", override ? NULL : "libcuda.so"};
    void *lib = NULL;
    char first_error[256] = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
        if (!names[i] || !*names[i])
            continue;
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && !first_error[0])
            snprintf(first_error, sizeof first_error, "%s", dlerror());
    }
    if (!lib) {
        cu_status = CU_LOAD_NO_DRIVER;
        snprintf(cu_message, sizeof cu_message, "no NVIDIA driver (%s)", first_error);
        return;
    }
    get_proc_v2_fn gp2 = (get_proc_v2_fn)dlsym(lib, "cuGetProcAddress_v2");
    get_proc_v1_fn gp1 = gp2 ? NULL : (get_proc_v1_fn)dlsym(lib, "cuGetProcAddress");
    if (!gp2 && !gp1) {
        cu_status = CU_LOAD_TOO_OLD;
        snprintf(cu_message, sizeof cu_message,
                 "the NVIDIA driver is too old: it has no cuGetProcAddress (CUDA 11.3 or "
                 "newer needed; the embedded kernels need a CUDA 13.0 driver, R580+)");
        return;
    }
    for (size_t i = 0; i < sizeof cu_entries / sizeof cu_entries[0]; i++) {
        void **slot = (void **)((char *)&cu + cu_entries[i].offset);
        if (cu_resolve(lib, gp2, gp1, cu_entries[i].name, slot) != 0) {
            cu_status = CU_LOAD_TOO_OLD;
            return;
        }
    }
    CUresult r = cu.Init(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        cu_status = CU_LOAD_NO_DEVICE;
        snprintf(cu_message, sizeof cu_message, "no CUDA device: the driver found no GPU");
        return;
    }
    if (r != CUDA_SUCCESS) {
        cu_status = CU_LOAD_INIT_FAILED;
        snprintf(cu_message, sizeof cu_message, "the NVIDIA driver failed to initialise: %s",
                 cu_result_text(r));
        return;
    }
    cu.DriverGetVersion(&cu_version);
    int count = 0;
    if (cu.DeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        cu_status = CU_LOAD_NO_DEVICE;
        snprintf(cu_message, sizeof cu_message, "no CUDA device: the driver found no GPU");
        return;
    }
    cu_status = CU_LOAD_OK;
    cu_message[0] = 0;
}

/* Loads the driver once per process. */
int cu_load(void)
{
    pthread_once(&cu_once, cu_load_once);
    return cu_status;
}

/* Explains cu_load()'s result. */
const char *cu_load_message(void)
{
    return cu_message;
}

/* Driver version after a successful load. */
int cu_driver_version(void)
{
    return cu_version;
}

/* Name and description of a result code, from the driver when loaded. */
const char *cu_result_text(CUresult r)
{
    static _Thread_local char buf[256];
    const char *name = NULL, *desc = NULL;
    if (cu.GetErrorName)
        cu.GetErrorName(r, &name);
    if (cu.GetErrorString)
        cu.GetErrorString(r, &desc);
    if (name && desc)
        snprintf(buf, sizeof buf, "%s (%s)", name, desc);
    else
        snprintf(buf, sizeof buf, "CUDA error %d", (int)r);
    return buf;
}

/* Keeps the first failure's call, place and result. */
void cu_record_failure(CUresult r, const char *call, const char *file, int line)
{
    if (cu_failure_result != CUDA_SUCCESS)
        return;
    cu_failure_result = r;
    const char *paren = strchr(call, '(');
    int name_len = paren ? (int)(paren - call) : (int)strlen(call);
    if (name_len > 3 && !strncmp(call, "cu.", 3)) {
        call += 3;
        name_len -= 3;
        snprintf(cu_failure_text, sizeof cu_failure_text, "cu%.*s at %s:%d: %s", name_len, call,
                 file, line, cu_result_text(r));
    } else {
        snprintf(cu_failure_text, sizeof cu_failure_text, "%.*s at %s:%d: %s", name_len, call,
                 file, line, cu_result_text(r));
    }
}

/* Text of the recorded failure. */
const char *cu_last_failure(void)
{
    return cu_failure_text;
}

/* Result code of the recorded failure. */
CUresult cu_last_result(void)
{
    return cu_failure_result;
}

/* Clears the recorded failure. */
void cu_clear_failure(void)
{
    cu_failure_result = CUDA_SUCCESS;
    cu_failure_text[0] = 0;
}
