/* backend.c - choosing and holding the CUDA device or the CPU. */
#include "backend.h"

#include "io/par.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a --backend value. */
int backend_parse(const char *name)
{
    if (!strcmp(name, "auto"))
        return BACKEND_AUTO;
    if (!strcmp(name, "cuda") || !strcmp(name, "gpu"))
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
int backend_parse_devices(const char *s, backend_devices *d, char *err, size_t errlen)
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
            snprintf(err, errlen, "bad --device '%s' (N, a list like 0,2, or all)", s);
            return -1;
        }
        for (int i = 0; i < d->count; i++)
            if (d->list[i] == (int)v) {
                snprintf(err, errlen, "bad --device '%s': device %ld given twice", s, v);
                return -1;
            }
        if (d->count == BACKEND_MAX_GPUS) {
            snprintf(err, errlen, "bad --device '%s': more than %d devices", s, BACKEND_MAX_GPUS);
            return -1;
        }
        d->list[d->count++] = (int)v;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* Opens the CUDA devices devs names, or explains why not in be->err. */
static int backend_open_cuda(backend *be, const backend_devices *devs)
{
    int n = gpu_device_count();
    if (n < 0) {
        snprintf(be->err, sizeof be->err, "%s", gpu_load_message());
        return n;
    }
    int count = devs->all ? (n < BACKEND_MAX_GPUS ? n : BACKEND_MAX_GPUS) : devs->count;
    for (int i = 0; i < count; i++) {
        int device = devs->all ? i : devs->list[i];
        if (device < 0 || device >= n) {
            snprintf(be->err, sizeof be->err, "no CUDA device %d (this machine has %d)", device,
                     n);
            return GPU_ERR_BAD_DEVICE;
        }
        int rc = gpu_open(&be->gpus[i], device);
        if (rc < 0) {
            snprintf(be->err, sizeof be->err, "cannot open CUDA device %d: %s", device,
                     cu_last_failure()[0] ? cu_last_failure() : gpu_strerror(rc));
            return rc;
        }
        be->ngpu = i + 1;
    }
    be->gpu = be->gpus[0];
    if (gpu_bind(be->gpu) < 0) {
        snprintf(be->err, sizeof be->err, "cannot use CUDA device %d: %s",
                 gpu_info(be->gpu)->ordinal, cu_last_failure());
        return GPU_ERR_DRIVER;
    }
    return 0;
}

/* Opens the requested backend, falling back to the CPU for auto. */
int backend_open(backend *be, backend_kind kind, const backend_devices *devs, int threads)
{
    static const backend_devices first = {0, 1, {0}};
    memset(be, 0, sizeof *be);
    be->threads = threads >= 1 ? threads : backend_cpu_count();
    if (kind != BACKEND_CPU) {
        int rc = backend_open_cuda(be, devs ? devs : &first);
        if (rc == 0) {
            be->kind = BACKEND_CUDA;
            return 0;
        }
        backend_close(be);
        if (kind == BACKEND_CUDA)
            return rc;
        snprintf(be->fallback_reason, sizeof be->fallback_reason, "%s", be->err);
        be->err[0] = 0;
    }
    be->kind = BACKEND_CPU;
    return 0;
}

/* Slots: `streams` per device. */
int backend_slots(const backend *be, int streams)
{
    if (be->kind != BACKEND_CUDA || be->ngpu <= 1)
        return streams;
    int n = streams * be->ngpu;
    return n <= BACKEND_MAX_SLOTS ? n : BACKEND_MAX_SLOTS / be->ngpu * be->ngpu;
}

/* Slot i runs on device i % ngpu. */
gpu *backend_slot_gpu(const backend *be, int slot)
{
    return be->ngpu ? be->gpus[slot % be->ngpu] : NULL;
}

/* Closes the devices that are open. */
void backend_close(backend *be)
{
    if (!be)
        return;
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

/* Pinned memory with CUDA, 4 KiB-aligned memory on the CPU. */
void *backend_host_alloc(backend *be, size_t bytes)
{
    if (be->kind == BACKEND_CUDA) {
        void *p = gpu_host_alloc(be->gpu, bytes);
        if (!p)
            snprintf(be->err, sizeof be->err, "%s", gpu_error_text(be->gpu));
        return p;
    }
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0) {
        snprintf(be->err, sizeof be->err, "cannot allocate %zu bytes of host memory", bytes);
        return NULL;
    }
    return p;
}

/* Frees what backend_host_alloc gave; accepts NULL. */
void backend_host_free(backend *be, void *p)
{
    if (!p)
        return;
    if (be->kind == BACKEND_CUDA)
        gpu_host_free(be->gpu, p);
    else
        free(p);
}
