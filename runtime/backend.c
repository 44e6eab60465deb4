/* backend.c - choosing and holding the CUDA device or the CPU. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Online CPU count. */
int backend_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

/* Opens the CUDA device, or explains why not in be->err. */
static int backend_open_cuda(backend *be, int device)
{
    int n = gpu_device_count();
    if (n < 0) {
        snprintf(be->err, sizeof be->err, "%s", gpu_load_message());
        return n;
    }
    if (device < 0 || device >= n) {
        snprintf(be->err, sizeof be->err, "no CUDA device %d (this machine has %d)", device, n);
        return GPU_ERR_BAD_DEVICE;
    }
    int rc = gpu_open(&be->gpu, device);
    if (rc < 0) {
        snprintf(be->err, sizeof be->err, "cannot open CUDA device %d: %s", device,
                 cu_last_failure()[0] ? cu_last_failure() : gpu_strerror(rc));
        return rc;
    }
    return 0;
}

/* Opens the requested backend, falling back to the CPU for auto. */
int backend_open(backend *be, backend_kind kind, int device, int threads)
{
    memset(be, 0, sizeof *be);
    be->threads = threads >= 1 ? threads : backend_cpu_count();
    if (kind != BACKEND_CPU) {
        int rc = backend_open_cuda(be, device);
        if (rc == 0) {
            be->kind = BACKEND_CUDA;
            return 0;
        }
        if (kind == BACKEND_CUDA)
            return rc;
        snprintf(be->fallback_reason, sizeof be->fallback_reason, "%s", be->err);
        be->err[0] = 0;
    }
    be->kind = BACKEND_CPU;
    return 0;
}

/* Closes the device if one is open. */
void backend_close(backend *be)
{
    if (!be)
        return;
    gpu_close(be->gpu);
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
