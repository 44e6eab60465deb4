/* fakecuda.c - a stand-in for libcuda.so.1 that lets the command-line tests
 * reach the GPU error paths on a machine without a GPU.
 *
 * It behaves like small devices whose memory is ordinary memory and whose
 * kernels do nothing (or what a test program's hook does:
 * fakecuda_set_launch_hook). Like the real driver it keeps a current context per
 * thread, and every object (memory, stream, event, module, function)
 * belongs to the device whose context was current when it was made: a
 * copy, launch or record that mixes devices, or runs with another device's
 * context current, fails with CUDA_ERROR_INVALID_CONTEXT.
 *
 * It exports its entry points as a driver does: every one under the symbol
 * name cuda.h maps it to (cuMemAlloc_v2, ...), the version-1 names beside
 * them (calling one aborts with a message: a 32-bit cuMemAlloc is a bug),
 * cuGetProcAddress from CUDA 11.3 and cuGetProcAddress_v2 from 12.0 on; on
 * an older reported version those two symbols resolve to NULL (GNU ifunc),
 * so dlsym does not find them, as with an old driver. Variables:
 *   FAKECUDA_DRIVER_VERSION  what cuDriverGetVersion reports, 1000*major +
 *                         10*minor (default 13000); module loads refuse PTX
 *                         whose .version that driver does not know, with
 *                         CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)
 *   FAKECUDA_NEWEST_PTX_ISA  the newest PTX ISA it loads instead ("6.5")
 *   FAKECUDA_CC           every device's compute capability, "8.6" (default
 *                         9.0). A cubin (an ELF image) loads as on a real
 *                         driver only on a device of its sm major version and
 *                         a minor version at least its own, else
 *                         CUDA_ERROR_NO_BINARY_FOR_GPU (209); a cubin of ELF
 *                         ABI version 8 (ptxas 13) only from CUDA 13.0 on,
 *                         else CUDA_ERROR_INVALID_IMAGE (200): the rule
 *                         gpubatch assumes, not one seen on an old driver
 *   FAKECUDA_CUBIN_ERROR  a CUresult every cubin load returns instead, as
 *                         from a driver that refuses the embedded native code
 *   FAKECUDA_DEVICES      number of devices (default 1). As a real driver
 *                         does at cuInit, it reads CUDA_VISIBLE_DEVICES:
 *                         a list of device indices that picks and orders
 *                         the devices the ordinals count (index k is
 *                         ordinal k), its first entry that is not a
 *                         decimal index below FAKECUDA_DEVICES ending the
 *                         list (here a repeated index too); cuInit
 *                         fails with CUDA_ERROR_NO_DEVICE when it leaves
 *                         none. The variables below that name a device,
 *                         and FAKECUDA_REPORT, number the devices by index
 *                         (as without CUDA_VISIBLE_DEVICES)
 *   FAKECUDA_MEM_BYTES    memory size of each device; a cuMemAlloc beyond
 *                         what is left fails with CUDA_ERROR_OUT_OF_MEMORY
 *   FAKECUDA_LAUNCH_ERROR a CUresult every cuLaunchKernel returns
 *   FAKECUDA_COPY_ERROR   a CUresult every cuMemcpyHtoDAsync returns
 *   FAKECUDA_REPORT       a file that holds one line "device D launches N"
 *                         per device, rewritten at each launch
 *   FAKECUDA_INIT_DELAY_MS  milliseconds cuInit takes (a slow driver start)
 *   FAKECUDA_CTX_DELAY_MS milliseconds each device's primary context takes
 *                         to make: "A,B,..." by device, the last value for
 *                         the devices after it
 *   FAKECUDA_CTX_ERROR_DEVICE  a device whose context cannot be made
 *                         (CUDA_ERROR_UNKNOWN)
 *   FAKECUDA_NO_MAPPED    when 1, the devices cannot map pinned host memory:
 *                         cuMemHostRegister refuses CU_MEMHOSTREGISTER_DEVICEMAP
 *                         (CUDA_ERROR_NOT_SUPPORTED) and cuMemHostGetDevicePointer
 *                         fails
 *   FAKECUDA_ENV_REPORT   a file cuInit writes the lines
 *                         "CUDA_DEVICE_MAX_CONNECTIONS=VALUE",
 *                         "CUDA_MODULE_LOADING=VALUE" and
 *                         "CUDA_VISIBLE_DEVICES=VALUE" to (VALUE "unset"
 *                         when it is not set): settings a real driver
 *                         reads as it starts
 *   FAKECUDA_PIN_REPORT   a file that holds one line "pinned N": the host
 *                         buffers cuMemHostRegister pinned so far,
 *                         rewritten at each one
 *   FAKECUDA_COPY_MS      milliseconds each copy from host memory takes
 *                         (default 0: none): it is done at once but ends,
 *                         for its stream's events and synchronizations,
 *                         that long after both its stream's earlier copies
 *                         and its device's link are free, as on a device
 *                         with one copy link
 *   FAKECUDA_COPY_REPORT  a file that holds one line "copying N": the most
 *                         devices seen copying from host memory at once
 * Built as build/tests/libfakecuda.so and named by GPUBATCH_LIBCUDA. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptx/cubin.h"
#include "runtime/cu.h"

#define FAKE_DEFAULT_MEM ((size_t)16 << 30)
#define FAKE_MAX_DEVICES 64
#define FAKE_INVALID_CONTEXT ((CUresult)201)
#define FAKE_NOT_SUPPORTED ((CUresult)801) /* CUDA_ERROR_NOT_SUPPORTED */

static size_t fake_used[FAKE_MAX_DEVICES];
static unsigned long fake_launches[FAKE_MAX_DEVICES];
static char fake_contexts[FAKE_MAX_DEVICES]; /* context d is &fake_contexts[d] */
static __thread int fake_current = -1;       /* device of the current context */

/* A stream, event, module or function: the device it belongs to; for a
 * stream, when its copies end, for an event those recorded (FAKECUDA_COPY_MS;
 * seconds on the monotonic clock). */
typedef struct {
    int dev;
    double ready;
} fake_object;

static pthread_mutex_t fake_copy_mu = PTHREAD_MUTEX_INITIALIZER;
static double fake_link_free[FAKE_MAX_DEVICES]; /* when each device's copies end */
static int fake_copying_max;                    /* FAKECUDA_COPY_REPORT's count */

static int fake_visible[FAKE_MAX_DEVICES]; /* the index of each ordinal, from cuInit on */
static int fake_nvisible = -1;             /* ordinals; -1 before cuInit */

/* Number of devices from FAKECUDA_DEVICES, or 1. */
static int fake_device_total(void)
{
    const char *s = getenv("FAKECUDA_DEVICES");
    int n = s && *s ? atoi(s) : 1;
    return n < 1 ? 1 : n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : n;
}

/* Reads CUDA_VISIBLE_DEVICES into fake_visible as a driver does (see
 * above); the number of ordinals. */
static int fake_read_visible(void)
{
    int total = fake_device_total(), n = 0;
    const char *s = getenv("CUDA_VISIBLE_DEVICES");
    if (!s) {
        for (n = 0; n < total; n++)
            fake_visible[n] = n;
        return n;
    }
    while (n < total) {
        char *end;
        long v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
        if (v < 0 || v >= total || (*end && *end != ','))
            break;
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= fake_visible[i] == v;
        if (seen)
            break;
        fake_visible[n++] = (int)v;
        if (!*end)
            break;
        s = end + 1;
    }
    return n;
}

/* The device an object handle belongs to. */
static int fake_dev(const void *h)
{
    return ((const fake_object *)h)->dev;
}

/* A block of device memory: [start, start + bytes) on device dev. */
typedef struct fake_block {
    uintptr_t start;
    size_t bytes;
    int dev;
    struct fake_block *next;
} fake_block;

static fake_block *fake_blocks;
static pthread_mutex_t fake_blocks_mu = PTHREAD_MUTEX_INITIALIZER;

/* The block holding device address p (its end included, for empty
 * ranges), or NULL. */
static fake_block *fake_block_of(uintptr_t p)
{
    pthread_mutex_lock(&fake_blocks_mu);
    fake_block *b = fake_blocks;
    while (b && !(p >= b->start && p <= b->start + b->bytes))
        b = b->next;
    pthread_mutex_unlock(&fake_blocks_mu);
    return b;
}

/* The device a device pointer belongs to, or -1 for an unknown address. */
static int fake_ptr_dev(CUdeviceptr p)
{
    fake_block *b = fake_block_of((uintptr_t)p);
    return b ? b->dev : -1;
}

/* A new object of the current context's device. */
static CUresult fake_object_new(void **h)
{
    if (fake_current < 0)
        return FAKE_INVALID_CONTEXT;
    fake_object *o = malloc(sizeof *o);
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    o->dev = fake_current;
    o->ready = 0;
    *h = o;
    return CUDA_SUCCESS;
}

/* Destroys an object. */
static CUresult fake_object_free(void *h)
{
    free(h);
    return CUDA_SUCCESS;
}

/* Success when the stream and the memory belong to the current device. */
static CUresult fake_same_device(CUstream s, CUdeviceptr p)
{
    return fake_current >= 0 && fake_dev(s) == fake_current &&
                   (!p || fake_ptr_dev(p) == fake_current)
               ? CUDA_SUCCESS
               : FAKE_INVALID_CONTEXT;
}

/* Writes the launch counts so far to FAKECUDA_REPORT (after each launch:
 * a process may end with _exit, which runs no destructor). */
static void fake_report(void)
{
    const char *path = getenv("FAKECUDA_REPORT");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (!f)
        return;
    for (int d = 0; d < fake_device_total(); d++)
        fprintf(f, "device %d launches %lu\n", d, fake_launches[d]);
    fclose(f);
}

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
    const char *env_report = getenv("FAKECUDA_ENV_REPORT");
    FILE *f = env_report && *env_report ? fopen(env_report, "w") : NULL;
    if (f) {
        const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        const char *loading = getenv("CUDA_MODULE_LOADING");
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        fprintf(f, "CUDA_DEVICE_MAX_CONNECTIONS=%s\nCUDA_MODULE_LOADING=%s\nCUDA_VISIBLE_DEVICES=%s\n",
                conn ? conn : "unset", loading ? loading : "unset", visible ? visible : "unset");
        fclose(f);
    }
    const char *s = getenv("FAKECUDA_INIT_DELAY_MS");
    if (s && *s) {
        struct timespec ts = {atol(s) / 1000, atol(s) % 1000 * 1000000L};
        nanosleep(&ts, NULL);
    }
    fake_nvisible = fake_read_visible();
    return fake_nvisible ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

/* The CUDA version this stand-in is: FAKECUDA_DRIVER_VERSION, or 13.0. */
static int fake_version(void)
{
    const char *s = getenv("FAKECUDA_DRIVER_VERSION");
    return s && *s ? atoi(s) : 13000;
}

/* cuDriverGetVersion. */
static CUresult fake_driver_version(int *v)
{
    *v = fake_version();
    return CUDA_SUCCESS;
}

/* The newest PTX ISA (10*major + minor) a driver of CUDA version v loads,
 * as NVIDIA's PTX release history pairs them, or FAKECUDA_NEWEST_PTX_ISA. */
static int fake_newest_isa(int v)
{
    const char *s = getenv("FAKECUDA_NEWEST_PTX_ISA");
    if (s && *s)
        return (int)(atof(s) * 10 + 0.5);
    int major = v / 1000, minor = v % 1000 / 10;
    if (major <= 10)
        return 63 + minor; /* CUDA 10.0 loads ISA 6.3, 10.2 loads 6.5 */
    if (major == 11)
        return 70 + minor;
    if (major == 12)
        return minor <= 5 ? 80 + minor : minor == 6 ? 85 : 79 + minor; /* 12.8 loads 8.7 */
    return 90 + minor;
}

static const struct {
    CUresult code;
    const char *name, *text;
} fake_errors[] = {
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {FAKE_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
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

/* The devices CUDA_VISIBLE_DEVICES leaves of FAKECUDA_DEVICES. */
static CUresult fake_device_count(int *n)
{
    *n = fake_nvisible < 0 ? 0 : fake_nvisible;
    return fake_nvisible < 0 ? CUDA_ERROR_NOT_INITIALIZED : CUDA_SUCCESS;
}

/* Device `ordinal` (its index), if there is one. */
static CUresult fake_device_get(CUdevice *d, int ordinal)
{
    if (fake_nvisible < 0)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= fake_nvisible)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = fake_visible[ordinal];
    return CUDA_SUCCESS;
}

/* The device's name. */
static CUresult fake_device_name(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Fake GPU");
    return CUDA_SUCCESS;
}

/* The compute capability from FAKECUDA_CC ("8.6"), or 9.0, as 10*major+minor. */
static int fake_cc(void)
{
    const char *s = getenv("FAKECUDA_CC");
    int major = 9, minor = 0;
    if (s && *s && sscanf(s, "%d.%d", &major, &minor) != 2)
        major = 9, minor = 0;
    return major * 10 + minor;
}

/* Compute capability FAKECUDA_CC, 132 multiprocessors, 50 MiB of L2. */
static CUresult fake_device_attribute(int *v, int attrib, CUdevice d)
{
    (void)d;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = fake_cc() / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = fake_cc() % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 228 << 10; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1 << 10; break;
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

/* Free and total memory of the current device. */
static CUresult fake_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (fake_current < 0)
        return FAKE_INVALID_CONTEXT;
    *total_bytes = fake_mem_total();
    *free_bytes = *total_bytes - fake_used[fake_current];
    return CUDA_SUCCESS;
}

/* Primary context retain: one context per device. */
static CUresult fake_ctx_retain(CUcontext *c, CUdevice d)
{
    const char *s = getenv("FAKECUDA_CTX_DELAY_MS");
    long ms = 0;
    for (int i = 0; s && *s && i <= d; i++) {
        char *end;
        ms = strtol(s, &end, 10);
        s = *end == ',' ? end + 1 : NULL;
    }
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    if (ms > 0)
        nanosleep(&ts, NULL);
    const char *bad = getenv("FAKECUDA_CTX_ERROR_DEVICE");
    if (bad && *bad && atoi(bad) == d)
        return (CUresult)999; /* CUDA_ERROR_UNKNOWN */
    *c = (CUcontext)&fake_contexts[d];
    return CUDA_SUCCESS;
}

/* Makes a device's context current on this thread. */
static CUresult fake_ctx_set_current(CUcontext c)
{
    fake_current = c ? (int)((char *)c - fake_contexts) : -1;
    return CUDA_SUCCESS;
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

/* A cubin's load: FAKECUDA_CUBIN_ERROR when set; a cubin that is no 64-bit
 * CUDA ELF is invalid; one for another sm major version, or a higher minor
 * one, than the device's has no code for it; ELF ABI version 8 (the sm
 * number in bits 8-15 of e_flags) needs CUDA 13.0. */
static CUresult fake_cubin_check(const unsigned char *elf)
{
    const char *e = getenv("FAKECUDA_CUBIN_ERROR");
    if (e && *e)
        return (CUresult)atoi(e);
    int sm = cubin_sm(elf, 64), cc = fake_cc();
    if (sm < 0 || (cubin_abi(elf) >= 8 && fake_version() < 13000))
        return CUDA_ERROR_INVALID_IMAGE;
    return sm / 10 == cc / 10 && sm % 10 <= cc % 10 ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
}

/* Module load: a cubin as fake_cubin_check says; PTX whose .version this
 * driver does not know is refused; otherwise nothing to compile, and the
 * module belongs to the current device. */
static CUresult fake_module_load(CUmodule *m, const void *image, unsigned int n, int *o, void **v)
{
    (void)n, (void)o, (void)v;
    if (!memcmp(image, "\177ELF", 4)) {
        CUresult r = fake_cubin_check(image);
        return r == CUDA_SUCCESS ? fake_object_new((void **)m) : r;
    }
    const char *line = strstr((const char *)image, "\n.version ");
    int major = 0, minor = 0;
    if (!line || sscanf(line, "\n.version %d.%d", &major, &minor) != 2)
        return CUDA_ERROR_INVALID_PTX;
    if (major * 10 + minor > fake_newest_isa(fake_version()))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    return fake_object_new((void **)m);
}

/* A kernel: its device and name. */
typedef struct {
    fake_object o;
    char name[64];
} fake_function;

/* Every function made, one per device and name, in static memory (the real
 * driver frees them with their module; here they stay, unseen by a leak
 * checker). */
#define FAKE_MAX_FUNCTIONS 4096
static fake_function fake_functions[FAKE_MAX_FUNCTIONS];
static int fake_function_count;
static pthread_mutex_t fake_functions_mu = PTHREAD_MUTEX_INITIALIZER;

/* Any kernel name resolves, on the module's device. */
static CUresult fake_get_function(CUfunction *f, CUmodule m, const char *name)
{
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fake_functions_mu);
    int i = 0;
    while (i < fake_function_count &&
           (fake_functions[i].o.dev != fake_dev(m) || strncmp(fake_functions[i].name, name, 63)))
        i++;
    if (i < FAKE_MAX_FUNCTIONS) {
        if (i == fake_function_count++) {
            fake_functions[i].o.dev = fake_dev(m);
            snprintf(fake_functions[i].name, sizeof fake_functions[i].name, "%s", name);
        }
        *f = (CUfunction)&fake_functions[i];
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fake_functions_mu);
    return rc;
}

/* A test program's stand-in for kernels (fakecuda_set_launch_hook): called
 * with each launch's kernel name and parameters, the device's memory being
 * the host's. */
static void (*fake_launch_hook)(const char *name, void **params);

/* Sets the launch hook: a test that dlopens this library first (the same
 * copy gpubatch's driver loader then finds) gives kernels a body. */
void fakecuda_set_launch_hook(void (*hook)(const char *name, void **params));
void fakecuda_set_launch_hook(void (*hook)(const char *name, void **params))
{
    fake_launch_hook = hook;
}

/* A function attribute of a function of the current device: only the
 * shared memory carve-out, a percentage (anything else is the caller's
 * mistake, which stops the process). */
static CUresult fake_func_attribute(CUfunction f, int attrib, int value)
{
    if (fake_current < 0 || fake_dev(f) != fake_current)
        return FAKE_INVALID_CONTEXT;
    if (attrib != CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT || value < 0 || value > 100) {
        fprintf(stderr, "fakecuda: cuFuncSetAttribute(%d, %d) is not a carve-out\n", attrib, value);
        abort();
    }
    return CUDA_SUCCESS;
}

/* Device memory is host memory of the current device; fails beyond
 * FAKECUDA_MEM_BYTES. */
static CUresult fake_mem_alloc(CUdeviceptr *p, size_t bytes)
{
    if (fake_current < 0)
        return FAKE_INVALID_CONTEXT;
    if (bytes > fake_mem_total() - fake_used[fake_current])
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_block *b = malloc(sizeof *b);
    void *mem = calloc(1, bytes ? bytes : 1); /* zeroed: the kernels write nothing */
    if (!b || !mem) {
        free(b);
        free(mem);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *b = (fake_block){(uintptr_t)mem, bytes, fake_current, NULL};
    pthread_mutex_lock(&fake_blocks_mu);
    b->next = fake_blocks;
    fake_blocks = b;
    pthread_mutex_unlock(&fake_blocks_mu);
    fake_used[fake_current] += bytes;
    *p = (CUdeviceptr)(uintptr_t)mem;
    return CUDA_SUCCESS;
}

/* Frees device memory, with its device's context current. */
static CUresult fake_mem_free(CUdeviceptr p)
{
    pthread_mutex_lock(&fake_blocks_mu);
    fake_block **link = &fake_blocks;
    while (*link && (*link)->start != (uintptr_t)p)
        link = &(*link)->next;
    fake_block *b = *link;
    if (b && b->dev == fake_current)
        *link = b->next;
    pthread_mutex_unlock(&fake_blocks_mu);
    if (!b || b->dev != fake_current)
        return b ? FAKE_INVALID_CONTEXT : CUDA_ERROR_INVALID_VALUE;
    fake_used[b->dev] -= b->bytes;
    free((void *)b->start);
    free(b);
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
/* Whether FAKECUDA_NO_MAPPED=1: pinned host memory cannot be mapped. */
static int fake_no_mapped(void)
{
    const char *s = getenv("FAKECUDA_NO_MAPPED");
    return s && !strcmp(s, "1");
}

/* Pins nothing but counts the buffers (FAKECUDA_PIN_REPORT); refuses the
 * mapping under FAKECUDA_NO_MAPPED=1. */
static CUresult fake_host_register(void *p, size_t bytes, unsigned int flags)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static unsigned long pinned;
    (void)p, (void)bytes;
    if ((flags & CU_MEMHOSTREGISTER_DEVICEMAP) && fake_no_mapped())
        return FAKE_NOT_SUPPORTED;
    const char *path = getenv("FAKECUDA_PIN_REPORT");
    pthread_mutex_lock(&mu);
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    pinned++;
    if (f) {
        fprintf(f, "pinned %lu\n", pinned);
        fclose(f);
    }
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

/* Pinned host memory is addressed by the (fake) device at its host address. */
static CUresult fake_host_device_pointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    if (flags != 0 || fake_no_mapped())
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* Seconds on the monotonic clock. */
static double fake_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Sleeps until the monotonic clock reaches `at`. */
static void fake_sleep_until(double at)
{
    double left = at - fake_now();
    if (left > 0) {
        struct timespec t = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&t, NULL);
    }
}

/* Gives a copy from host memory on stream s its FAKECUDA_COPY_MS, after
 * the stream's copies and its device's link, and counts the devices
 * copying at once (FAKECUDA_COPY_REPORT). */
static void fake_copy_in(CUstream s)
{
    const char *ms = getenv("FAKECUDA_COPY_MS");
    double secs = ms && *ms ? atof(ms) / 1e3 : 0;
    if (secs <= 0)
        return;
    fake_object *o = (fake_object *)s;
    pthread_mutex_lock(&fake_copy_mu);
    double now = fake_now(), start = now;
    int copying = 1;
    for (int d = 0; d < FAKE_MAX_DEVICES; d++)
        copying += d != o->dev && fake_link_free[d] > now;
    if (fake_link_free[o->dev] > start)
        start = fake_link_free[o->dev];
    if (o->ready > start)
        start = o->ready;
    o->ready = fake_link_free[o->dev] = start + secs;
    const char *path = getenv("FAKECUDA_COPY_REPORT");
    if (copying > fake_copying_max && path && *path) {
        fake_copying_max = copying;
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "copying %d\n", copying);
            fclose(f);
        }
    }
    pthread_mutex_unlock(&fake_copy_mu);
}

/* Copies host to device, at once (ending later for FAKECUDA_COPY_MS). */
static CUresult fake_htod(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    const char *e = getenv("FAKECUDA_COPY_ERROR");
    if (e && *e)
        return (CUresult)atoi(e);
    if (fake_same_device(s, dst) != CUDA_SUCCESS)
        return FAKE_INVALID_CONTEXT;
    memcpy((void *)(uintptr_t)dst, src, n);
    fake_copy_in(s);
    return CUDA_SUCCESS;
}

/* Copies device to host, at once. */
static CUresult fake_dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    if (fake_same_device(s, src) != CUDA_SUCCESS)
        return FAKE_INVALID_CONTEXT;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* Copies device to device, at once. */
static CUresult fake_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    if (fake_same_device(s, dst) != CUDA_SUCCESS || fake_same_device(s, src) != CUDA_SUCCESS)
        return FAKE_INVALID_CONTEXT;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* Sets device bytes, at once. */
static CUresult fake_memset(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    if (fake_same_device(s, dst) != CUDA_SUCCESS)
        return FAKE_INVALID_CONTEXT;
    memset((void *)(uintptr_t)dst, v, n);
    return CUDA_SUCCESS;
}

/* Stream or event creation, on the current device. */
static CUresult fake_create(void **h, unsigned int flags)
{
    (void)flags;
    return fake_object_new(h);
}

/* Recording an event on a stream of its device: everything is already
 * done but the copies of FAKECUDA_COPY_MS. */
static CUresult fake_event_record(CUevent e, CUstream s)
{
    if (fake_dev(e) != fake_dev(s))
        return FAKE_INVALID_CONTEXT;
    pthread_mutex_lock(&fake_copy_mu);
    ((fake_object *)e)->ready = ((fake_object *)s)->ready;
    pthread_mutex_unlock(&fake_copy_mu);
    return CUDA_SUCCESS;
}

/* Waits for an event's or a stream's copies (FAKECUDA_COPY_MS). */
static CUresult fake_synchronize(void *h)
{
    pthread_mutex_lock(&fake_copy_mu);
    double at = ((fake_object *)h)->ready;
    pthread_mutex_unlock(&fake_copy_mu);
    fake_sleep_until(at);
    return CUDA_SUCCESS;
}

/* Stream waits for an event (of any device, as the real driver allows). */
static CUresult fake_wait_event(CUstream s, CUevent e, unsigned int flags)
{
    (void)flags;
    pthread_mutex_lock(&fake_copy_mu);
    fake_object *so = (fake_object *)s, *eo = (fake_object *)e;
    if (eo->ready > so->ready)
        so->ready = eo->ready;
    pthread_mutex_unlock(&fake_copy_mu);
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
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)params,
        (void)extra;
    if (fake_same_device(s, 0) != CUDA_SUCCESS || fake_dev(f) != fake_current)
        return FAKE_INVALID_CONTEXT;
    const char *e = getenv("FAKECUDA_LAUNCH_ERROR");
    if (e && *e)
        return (CUresult)atoi(e);
    fake_launches[fake_current]++;
    fake_report();
    if (fake_launch_hook)
        fake_launch_hook(((const fake_function *)f)->name, params);
    return CUDA_SUCCESS;
}

/* Every entry point gpubatch uses: PLAIN(name, fn) for one the driver
 * exports under its own name, V2(name, fn) for one cuda.h maps to name_v2. */
#define FAKE_ENTRY_POINTS(PLAIN, V2)                                      \
    PLAIN(cuInit, fake_init)                                              \
    PLAIN(cuDriverGetVersion, fake_driver_version)                        \
    PLAIN(cuGetErrorName, fake_error_name)                                \
    PLAIN(cuGetErrorString, fake_error_string)                            \
    PLAIN(cuDeviceGetCount, fake_device_count)                            \
    PLAIN(cuDeviceGet, fake_device_get)                                   \
    PLAIN(cuDeviceGetName, fake_device_name)                              \
    PLAIN(cuDeviceGetAttribute, fake_device_attribute)                    \
    V2(cuDeviceTotalMem, fake_total_mem)                                  \
    PLAIN(cuDevicePrimaryCtxRetain, fake_ctx_retain)                      \
    V2(cuDevicePrimaryCtxRelease, fake_ctx_release)                       \
    PLAIN(cuCtxSetCurrent, fake_ctx_set_current)                          \
    PLAIN(cuCtxSynchronize, fake_ok0)                                     \
    V2(cuMemGetInfo, fake_mem_info)                                       \
    PLAIN(cuModuleLoadDataEx, fake_module_load)                           \
    PLAIN(cuModuleUnload, fake_object_free)                               \
    PLAIN(cuModuleGetFunction, fake_get_function)                         \
    PLAIN(cuFuncSetAttribute, fake_func_attribute)                        \
    V2(cuMemAlloc, fake_mem_alloc)                                        \
    V2(cuMemFree, fake_mem_free)                                          \
    PLAIN(cuMemHostAlloc, fake_host_alloc)                                \
    PLAIN(cuMemFreeHost, fake_host_free)                                  \
    V2(cuMemHostRegister, fake_host_register)                             \
    PLAIN(cuMemHostUnregister, fake_ok1)                                  \
    V2(cuMemHostGetDevicePointer, fake_host_device_pointer)               \
    V2(cuMemcpyHtoDAsync, fake_htod)                                      \
    V2(cuMemcpyDtoHAsync, fake_dtoh)                                      \
    V2(cuMemcpyDtoDAsync, fake_dtod)                                      \
    PLAIN(cuMemsetD8Async, fake_memset)                                   \
    PLAIN(cuStreamCreate, fake_create)                                    \
    V2(cuStreamDestroy, fake_object_free)                                 \
    PLAIN(cuStreamSynchronize, fake_synchronize)                          \
    PLAIN(cuStreamWaitEvent, fake_wait_event)                             \
    PLAIN(cuEventCreate, fake_create)                                     \
    PLAIN(cuEventRecord, fake_event_record)                               \
    PLAIN(cuEventSynchronize, fake_synchronize)                           \
    PLAIN(cuEventElapsedTime, fake_elapsed)                               \
    V2(cuEventDestroy, fake_object_free)                                  \
    PLAIN(cuLaunchKernel, fake_launch)

/* A version-1 entry point was called: the caller resolved a bare name that
 * cuda.h maps to _v2 (cuMemAlloc instead of cuMemAlloc_v2). */
static void fake_v1_called(const char *name)
{
    fprintf(stderr, "fakecuda: version-1 entry point %s called (its _v2 was meant)\n", name);
    abort();
}

/* The exported symbols: each entry point under the name the driver gives
 * it, and for a _v2 one also the version-1 name, which aborts. */
#define FAKE_EXPORT_PLAIN(name, fn) extern __typeof__(fn) name __attribute__((alias(#fn)));
#define FAKE_EXPORT_V2(name, fn)                                         \
    extern __typeof__(fn) name##_v2 __attribute__((alias(#fn)));         \
    CUresult name(void);                                                 \
    CUresult name(void)                                                  \
    {                                                                    \
        fake_v1_called(#name);                                           \
        return FAKE_INVALID_CONTEXT;                                     \
    }
FAKE_ENTRY_POINTS(FAKE_EXPORT_PLAIN, FAKE_EXPORT_V2)

/* What cuGetProcAddress finds: each base name and its function. */
static const struct {
    const char *name;
    void *fn;
} fake_table[] = {
#define FAKE_TABLE_ROW(name, fn) {#name, (void *)fn},
    FAKE_ENTRY_POINTS(FAKE_TABLE_ROW, FAKE_TABLE_ROW)
#undef FAKE_TABLE_ROW
};

/* The resolver: every entry point above at the ABI of any CUDA version the
 * driver knows; asking for a newer one is CUDA_ERROR_INVALID_VALUE. */
static CUresult fake_get_proc_v2(const char *name, void **fn, int version,
                                 unsigned long long flags, int *status)
{
    (void)flags;
    *fn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (version > fake_version())
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof fake_table / sizeof fake_table[0]; i++)
        if (!strcmp(name, fake_table[i].name)) {
            *fn = fake_table[i].fn;
            if (status)
                *status = 0;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* cuGetProcAddress of CUDA 11.3 to 11.8: the same without the status. */
static CUresult fake_get_proc_v1(const char *name, void **fn, int version,
                                 unsigned long long flags)
{
    return fake_get_proc_v2(name, fn, version, flags, NULL);
}

typedef CUresult (*fake_get_proc_v2_fn)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*fake_get_proc_v1_fn)(const char *, void **, int, unsigned long long);

/* The ifunc resolvers of the two cuGetProcAddress symbols: each exists only
 * from the CUDA version that introduced it; below it dlsym gets NULL. This
 * one: cuGetProcAddress_v2, from CUDA 12.0. */
static fake_get_proc_v2_fn fake_pick_get_proc_v2(void)
{
    return fake_version() >= 12000 ? fake_get_proc_v2 : NULL;
}

/* cuGetProcAddress, from CUDA 11.3. */
static fake_get_proc_v1_fn fake_pick_get_proc_v1(void)
{
    return fake_version() >= 11030 ? fake_get_proc_v1 : NULL;
}

CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags,
                             int *status) __attribute__((ifunc("fake_pick_get_proc_v2")));
CUresult cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags)
    __attribute__((ifunc("fake_pick_get_proc_v1")));
