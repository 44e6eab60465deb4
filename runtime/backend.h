/* backend.h - where the ops run: the CUDA device or the CPU.
 *
 * A backend owns the device (if any) for the whole invocation, so several
 * input files share one context, and hands out the host buffers the
 * pipeline streams through (pinned with CUDA, plain aligned memory on the
 * CPU). */
#ifndef GPUBATCH_RUNTIME_BACKEND_H
#define GPUBATCH_RUNTIME_BACKEND_H

#include <stddef.h>

#include "gpu.h"

typedef enum { BACKEND_AUTO, BACKEND_CUDA, BACKEND_CPU } backend_kind;

typedef struct backend {
    backend_kind kind; /* BACKEND_CUDA or BACKEND_CPU once open */
    gpu *gpu;          /* NULL for the CPU backend */
    int threads;       /* worker threads for CPU work (>= 1) */
    char fallback_reason[2048]; /* why auto chose the CPU ("" otherwise) */
    char err[2048];
} backend;

/* Parses "auto", "cuda" (or "gpu") and "cpu"; -1 when unknown. */
int backend_parse(const char *name);

/* Opens a backend. auto tries CUDA device `device` and falls back to the
 * CPU, leaving the reason in fallback_reason; cuda fails with a negative
 * gpu_error and a message in be->err. threads < 1 means one per core. */
int backend_open(backend *be, backend_kind kind, int device, int threads);

/* Releases the device; accepts a zeroed backend. */
void backend_close(backend *be);

/* "cuda" or "cpu". */
const char *backend_name(const backend *be);

/* Host buffer the device can copy from at full speed; NULL on failure. */
void *backend_host_alloc(backend *be, size_t bytes);
void backend_host_free(backend *be, void *p);

/* Number of online CPUs (at least 1). */
int backend_cpu_count(void);

#endif
