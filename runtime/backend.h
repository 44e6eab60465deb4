/* backend.h - where the ops run: CUDA devices or the CPU.
 *
 * A backend owns the devices (if any) for the whole invocation, so several
 * input files share their contexts, and hands out the host buffers the
 * pipeline streams through (pinned and portable across contexts with CUDA,
 * plain aligned memory on the CPU). With several devices, pipeline slot i
 * runs on device i % ngpu: chunks go round the devices in input order, and
 * their results are collected in that order, so the bits do not depend on
 * the number of devices. */
#ifndef GPUBATCH_RUNTIME_BACKEND_H
#define GPUBATCH_RUNTIME_BACKEND_H

#include <stddef.h>

#include "gpu.h"

typedef enum { BACKEND_AUTO, BACKEND_CUDA, BACKEND_CPU } backend_kind;

#define BACKEND_MAX_GPUS 64
#define BACKEND_MAX_SLOTS 256 /* pipeline slots, all devices together */

/* The devices --device names: one ordinal, a list, or every device. */
typedef struct {
    int all;                       /* every device of the machine */
    int count;                     /* ordinals in list (when !all) */
    int list[BACKEND_MAX_GPUS];
} backend_devices;

typedef struct backend {
    backend_kind kind; /* BACKEND_CUDA or BACKEND_CPU once open */
    gpu *gpu;          /* the first device (single-device work); NULL on the CPU */
    gpu *gpus[BACKEND_MAX_GPUS]; /* every device in use, in --device order */
    int ngpu;          /* 0 on the CPU */
    int threads;       /* worker threads for CPU work (>= 1) */
    char fallback_reason[2048]; /* why auto chose the CPU ("" otherwise) */
    char err[2048];
} backend;

/* Parses "auto", "cuda" (or "gpu") and "cpu"; -1 when unknown. */
int backend_parse(const char *name);

/* Parses a --device value: "N", "N,M,..." (distinct ordinals) or "all".
 * 0, or -1 with a reason in err. */
int backend_parse_devices(const char *s, backend_devices *d, char *err, size_t errlen);

/* Opens a backend. auto tries the CUDA devices and falls back to the CPU,
 * leaving the reason in fallback_reason; cuda fails with a negative
 * gpu_error and a message in be->err. threads < 1 means one per core. */
int backend_open(backend *be, backend_kind kind, const backend_devices *devs, int threads);

/* Pipeline slots for `streams` chunks in flight per device (per backend on
 * the CPU), at most BACKEND_MAX_SLOTS. */
int backend_slots(const backend *be, int streams);

/* The device that runs pipeline slot i (CUDA backend only). */
gpu *backend_slot_gpu(const backend *be, int slot);

/* Releases the device; accepts a zeroed backend. */
void backend_close(backend *be);

/* "cuda" or "cpu". */
const char *backend_name(const backend *be);

/* Host buffer the device can copy from at full speed; NULL on failure. */
void *backend_host_alloc(backend *be, size_t bytes);
void backend_host_free(backend *be, void *p);

/* Number of CPUs this process may run on (its affinity mask; at least 1). */
int backend_cpu_count(void);

#endif
