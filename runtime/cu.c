/* cu.c - loading the CUDA driver by hand: dlopen, then cuGetProcAddress or
 * the versioned symbol names, at the ABI of CUDA 11.0. */
#include "cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cu_api cu;

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, unsigned long long);
typedef CUresult (*driver_get_version_fn)(int *);

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static int cu_status = GPU_ERR_NO_DRIVER;
static int cu_version;
static const char *cu_source = "";
static char cu_message[512];

static _Thread_local char cu_failure_text[512];
static _Thread_local CUresult cu_failure_result;

/* Where each table slot's entry point comes from: its base name for
 * cuGetProcAddress and the symbol that cuda.h of CUDA 11.0 maps that name to,
 * for drivers without cuGetProcAddress (never a bare "cuMemAlloc": that is
 * the 32-bit version 1). */
static const struct {
    const char *name;
    const char *symbol;
    size_t offset;
} cu_entries[] = {
#define CU_ENTRY(field) {"cu" #field, "cu" #field, offsetof(cu_api, field)}
#define CU_ENTRY_V2(field) {"cu" #field, "cu" #field "_v2", offsetof(cu_api, field)}
    CU_ENTRY(Init),
    CU_ENTRY(DriverGetVersion),
    CU_ENTRY(GetErrorName),
    CU_ENTRY(GetErrorString),
    CU_ENTRY(DeviceGetCount),
    CU_ENTRY(DeviceGet),
    CU_ENTRY(DeviceGetName),
    CU_ENTRY(DeviceGetAttribute),
    CU_ENTRY_V2(DeviceTotalMem),
    CU_ENTRY(DevicePrimaryCtxRetain),
    CU_ENTRY_V2(DevicePrimaryCtxRelease),
    CU_ENTRY(CtxSetCurrent),
    CU_ENTRY(CtxSynchronize),
    CU_ENTRY_V2(MemGetInfo),
    CU_ENTRY(ModuleLoadDataEx),
    CU_ENTRY(ModuleUnload),
    CU_ENTRY(ModuleGetFunction),
    CU_ENTRY(FuncSetAttribute),
    CU_ENTRY_V2(MemAlloc),
    CU_ENTRY_V2(MemFree),
    CU_ENTRY(MemHostAlloc),
    CU_ENTRY(MemFreeHost),
    CU_ENTRY_V2(MemHostRegister),
    CU_ENTRY(MemHostUnregister),
    CU_ENTRY_V2(MemHostGetDevicePointer),
    CU_ENTRY_V2(MemcpyHtoDAsync),
    CU_ENTRY_V2(MemcpyDtoHAsync),
    CU_ENTRY_V2(MemcpyDtoDAsync),
    CU_ENTRY(MemsetD8Async),
    CU_ENTRY(StreamCreate),
    CU_ENTRY_V2(StreamDestroy),
    CU_ENTRY(StreamSynchronize),
    CU_ENTRY(StreamWaitEvent),
    CU_ENTRY(EventCreate),
    CU_ENTRY(EventRecord),
    CU_ENTRY(EventSynchronize),
    CU_ENTRY(EventElapsedTime),
    CU_ENTRY_V2(EventDestroy),
    CU_ENTRY(LaunchKernel),
#undef CU_ENTRY
#undef CU_ENTRY_V2
};

/* PTX ISA versions, the CUDA release that first loads each (NVIDIA's PTX ISA
 * release history) and the first Linux driver branch of that release. */
static const struct {
    int isa;
    int cuda;
    int branch;
} cu_releases[] = {
    {70, 11000, 450}, {71, 11010, 455}, {72, 11020, 460}, {73, 11030, 465},
    {74, 11040, 470}, {75, 11050, 495}, {76, 11060, 510}, {77, 11070, 515},
    {78, 11080, 520}, {80, 12000, 525}, {81, 12010, 530}, {82, 12020, 535},
    {83, 12030, 545}, {84, 12040, 550}, {85, 12050, 555},
    {86, 12070, 570}, /* no CUDA 12.7 driver was released: 12.8's R570 is the first */
    {87, 12080, 570}, {88, 12090, 575}, {90, 13000, 580}, {91, 13010, 590},
};

/* First CUDA version (11.0 at least) that loads PTX ISA isa, or 0 when unknown. */
int cu_ptx_isa_driver(int isa)
{
    if (isa <= cu_releases[0].isa)
        return cu_releases[0].cuda;
    for (size_t i = 0; i < sizeof cu_releases / sizeof cu_releases[0]; i++)
        if (cu_releases[i].isa >= isa)
            return cu_releases[i].isa == isa ? cu_releases[i].cuda : 0;
    return 0;
}

/* First CUDA version that loads cubins of ELF ABI version abi, or 0: version
 * 7 is older than CUDA 11.0; version 8 came with CUDA 13.0 (ptxas 13, ELF
 * OS/ABI 0x41, the sm number moved to bits 8-15 of e_flags). */
int cu_cubin_abi_driver(int abi)
{
    return abi == 7 ? CU_ABI_VERSION : abi == 8 ? 13000 : 0;
}

/* "CUDA 12.2 (driver R535)", or without the branch for a version the
 * table does not list. */
const char *cu_driver_text(int cuda_version, char *buf, size_t len)
{
    int branch = 0;
    for (size_t i = 0; i < sizeof cu_releases / sizeof cu_releases[0] && !branch; i++)
        if (cu_releases[i].cuda == cuda_version)
            branch = cu_releases[i].branch;
    if (branch)
        snprintf(buf, len, "CUDA %d.%d (driver R%d)", cuda_version / 1000,
                 cuda_version % 1000 / 10, branch);
    else
        snprintf(buf, len, "CUDA %d.%d", cuda_version / 1000, cuda_version % 1000 / 10);
    return buf;
}

/* Resolves one table entry through whichever way the driver offers; returns
 * 0, or -1 with cu_message explaining. */
static int cu_resolve(void *lib, get_proc_v2_fn gp2, get_proc_v1_fn gp1, size_t entry)
{
    const char *name = cu_entries[entry].name;
    void **fn = (void **)((char *)&cu + cu_entries[entry].offset);
    int status = 0;
    CUresult r = CUDA_SUCCESS;
    *fn = NULL;
    if (gp2) {
        r = gp2(name, fn, CU_ABI_VERSION, 0, &status);
    } else if (gp1) {
        r = gp1(name, fn, CU_ABI_VERSION, 0);
    } else {
        name = cu_entries[entry].symbol;
        *fn = dlsym(lib, name);
    }
    if (r == CUDA_SUCCESS && *fn)
        return 0;
    snprintf(cu_message, sizeof cu_message,
             "the NVIDIA driver is too old: entry point %s (CUDA %d.%d semantics) %s", name,
             CU_ABI_VERSION / 1000, CU_ABI_VERSION % 1000 / 10,
             status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "is not supported"
                                                                   : "was not found");
    return -1;
}

/* Whether an NVIDIA driver may be present (see cu.h); asked afresh each
 * time, since tests set GPUBATCH_LIBCUDA within one process. */
int cu_driver_may_exist(void)
{
    const char *override = getenv("GPUBATCH_LIBCUDA");
    return (override && *override) || access("/dev/nvidiactl", F_OK) == 0 ||
           access("/dev/dxg", F_OK) == 0;
}

/* Opens libcuda (GPUBATCH_LIBCUDA when set, which tests point at a missing
 * or stand-in library), or explains in cu_message why none opened. */
static void *cu_open_library(void)
{
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
    if (!lib)
        snprintf(cu_message, sizeof cu_message, "no NVIDIA driver (%s)", first_error);
    return lib;
}

/* Asks the driver its version (a call every driver has, and that needs no
 * cuInit); returns 0, or a negative gpu_error with cu_message explaining. */
static int cu_query_version(void *lib)
{
    driver_get_version_fn get_version = (driver_get_version_fn)dlsym(lib, "cuDriverGetVersion");
    if (!get_version || get_version(&cu_version) != CUDA_SUCCESS) {
        cu_version = 0;
        snprintf(cu_message, sizeof cu_message,
                 "the NVIDIA driver library does not report its version (no cuDriverGetVersion)");
        return GPU_ERR_DRIVER_TOO_OLD;
    }
    if (cu_version < CU_ABI_VERSION) {
        char need[64];
        snprintf(cu_message, sizeof cu_message,
                 "the NVIDIA driver (CUDA %d.%d) is too old: gpubatch needs %s or newer; "
                 "install a newer driver, or use --backend cpu",
                 cu_version / 1000, cu_version % 1000 / 10,
                 cu_driver_text(CU_ABI_VERSION, need, sizeof need));
        return GPU_ERR_DRIVER_TOO_OLD;
    }
    return GPU_OK;
}

/* Opens libcuda, resolves the table and initialises the driver. */
static void cu_load_once(void)
{
    void *lib = cu_open_library();
    if (!lib) {
        cu_status = GPU_ERR_NO_DRIVER;
        return;
    }
    cu_status = cu_query_version(lib);
    if (cu_status != GPU_OK)
        return;
    /* A resolver is used only from the version that introduced it. */
    get_proc_v2_fn gp2 = cu_version >= 12000 ? (get_proc_v2_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    get_proc_v1_fn gp1 = !gp2 && cu_version >= 11030 ? (get_proc_v1_fn)dlsym(lib, "cuGetProcAddress") : NULL;
    cu_source = gp2 ? "cuGetProcAddress_v2" : gp1 ? "cuGetProcAddress" : "versioned symbols";
    for (size_t i = 0; i < sizeof cu_entries / sizeof cu_entries[0]; i++) {
        if (cu_resolve(lib, gp2, gp1, i) != 0) {
            cu_status = GPU_ERR_DRIVER_TOO_OLD;
            return;
        }
    }
    CUresult r = cu.Init(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        cu_status = GPU_ERR_NO_DEVICE;
        snprintf(cu_message, sizeof cu_message, "no CUDA device: the driver found no GPU");
        return;
    }
    if (r != CUDA_SUCCESS) {
        cu_status = GPU_ERR_DRIVER;
        snprintf(cu_message, sizeof cu_message, "the NVIDIA driver failed to initialise: %s",
                 cu_result_text(r));
        return;
    }
    int count = 0;
    if (cu.DeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        cu_status = GPU_ERR_NO_DEVICE;
        snprintf(cu_message, sizeof cu_message, "no CUDA device: the driver found no GPU");
        return;
    }
    cu_status = GPU_OK;
    cu_message[0] = 0;
}

/* The driver's settings gpubatch chooses where the user did not (see cu.h). */
void cu_set_defaults(void)
{
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", CU_MAX_CONNECTIONS, 0);
    setenv("CUDA_MODULE_LOADING", CU_MODULE_LOADING, 0);
}

#define CU_VISIBLE_ENTRY_MAX 128 /* longer than any index or UUID the driver takes */

static int cu_narrowed[CU_MAX_NARROWED]; /* device numbers, by the driver's ordinal */
static int cu_nnarrowed;                 /* 0: not narrowed */
static char cu_narrowed_to[CU_MAX_NARROWED * CU_VISIBLE_ENTRY_MAX];

/* Whether the n bytes at s are a CUDA_VISIBLE_DEVICES entry the driver
 * takes as a device: an index, or a GPU or MIG instance UUID (the driver
 * stops its list at the first entry that names no device). */
static int cu_visible_entry_ok(const char *s, size_t n)
{
    if (n == 0 || n >= CU_VISIBLE_ENTRY_MAX)
        return 0;
    if (n > 4 && (!strncmp(s, "GPU-", 4) || !strncmp(s, "MIG-", 4)))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* Finds entry k of the CUDA_VISIBLE_DEVICES list `list` (*at, *len); 0, or
 * -1 when the list has no entry k or one of entries 0..k is not an index or
 * a UUID. (An index before entry k beyond the machine's devices is not
 * seen here: the driver would end the list there, while entry k alone is
 * still started.) */
static int cu_visible_entry(const char *list, int k, const char **at, size_t *len)
{
    const char *p = list;
    for (int i = 0;; i++) {
        size_t n = strcspn(p, ",");
        if (!cu_visible_entry_ok(p, n))
            return -1;
        if (i == k) {
            *at = p;
            *len = n;
            return 0;
        }
        if (!p[n])
            return -1;
        p += n + 1;
    }
}

/* Narrows the devices the driver starts to those a run uses (see cu.h). */
int cu_narrow_devices(const int *devices, int count)
{
    const char *off = getenv("GPUBATCH_NARROW_DEVICES");
    if ((off && !strcmp(off, "0")) || count < 1 || count > CU_MAX_NARROWED || cu_nnarrowed)
        return 0;
    const char *user = getenv("CUDA_VISIBLE_DEVICES");
    char value[sizeof cu_narrowed_to];
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        char index[16];
        const char *entry = index;
        size_t len;
        if (devices[i] < 0)
            return 0;
        if (user) {
            if (cu_visible_entry(user, devices[i], &entry, &len) < 0)
                return 0;
        } else {
            len = (size_t)snprintf(index, sizeof index, "%d", devices[i]);
        }
        for (int j = 0; j < i && user; j++) { /* two places with one entry: the driver decides */
            const char *other;
            size_t other_len;
            cu_visible_entry(user, devices[j], &other, &other_len);
            if (other_len == len && !memcmp(other, entry, len))
                return 0;
        }
        if (i)
            value[used++] = ',';
        memcpy(value + used, entry, len);
        used += len;
    }
    value[used] = 0;
    if (setenv("CUDA_VISIBLE_DEVICES", value, 1) != 0)
        return 0;
    memcpy(cu_narrowed, devices, (size_t)count * sizeof *devices);
    cu_nnarrowed = count;
    memcpy(cu_narrowed_to, value, used + 1);
    return 1;
}

/* Whether the devices were narrowed. */
int cu_devices_narrowed(void)
{
    return cu_nnarrowed > 0;
}

/* The driver's ordinal of a device number (see cu.h). */
int cu_device_ordinal(int device)
{
    if (!cu_nnarrowed)
        return device;
    for (int i = 0; i < cu_nnarrowed; i++)
        if (cu_narrowed[i] == device)
            return i;
    return -1;
}

/* CUDA_VISIBLE_DEVICES as narrowed, or "". */
const char *cu_narrowed_value(void)
{
    return cu_narrowed_to;
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

/* Driver version, once cu_load() has asked for it. */
int cu_driver_version(void)
{
    return cu_version;
}

/* The way the entry points were resolved. */
const char *cu_entry_point_source(void)
{
    return cu_source;
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

/* The project's code for a driver result (see cu.h). */
int cu_error(CUresult r)
{
    if (r == CUDA_SUCCESS)
        return 0;
    return r == CUDA_ERROR_OUT_OF_MEMORY ? GPU_ERR_OUT_OF_MEMORY : GPU_ERR_DRIVER;
}
