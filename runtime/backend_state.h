/* backend_state.h - the backend's fields, for the runtime's modules alone:
 * the scheduler makes per-device views of a backend, and the hot paths
 * read its kind and devices without a call. Nothing above runtime/
 * includes this header. */
#ifndef GPUBATCH_RUNTIME_BACKEND_STATE_H
#define GPUBATCH_RUNTIME_BACKEND_STATE_H

#include "backend.h"

struct backend {
    backend_kind kind; /* BACKEND_CUDA or BACKEND_CPU once open */
    gpu *gpu;          /* the first device (single-device work); NULL on the CPU */
    gpu *gpus[BACKEND_MAX_GPUS]; /* every device in use, in --device order */
    int ngpu;          /* 0 on the CPU */
    int threads;       /* worker threads for CPU work (>= 1) */
    char fallback_reason[2048]; /* why auto chose the CPU ("" otherwise) */
    int fallback_told;          /* backend_fallback() handed it out */
    int fallback_code;          /* its gpu_error (GPU_ERR_NO_DRIVER: no driver), 0 if none */
    int leaving;                /* backend_leave(): device resources are left to the exit */
    backend_start *start; /* the devices' start beside the CPU (auto) or the set-up (cuda) */
    int may_use_gpu;      /* backend_may_use_gpu()'s answer once asked: 1 or -1; 0 before */
    backend_started started; /* the start's times, once taken (zero without one) */
    int failed;           /* backend_ready() failed: cuda's devices are not to be had */
    io_status st;         /* the last failure: its gpu_error and line (backend_status) */
};

#endif
