/* axis_gpu.h - the GPU side of reductions along axes: the launch of a
 * chunk's kernels (ptx/axis.cu), which fill the chunk's result buffer with
 * the bytes ax_cpu_chunk writes (runtime/axis.h's contract). */
#ifndef GPUBATCH_RUNTIME_AXIS_GPU_H
#define GPUBATCH_RUNTIME_AXIS_GPU_H

#include "axis.h"
#include "engine.h"

/* The embedded module a plan's kernels are in (into names[0]); returns 1,
 * or 0 when the plan has no units (the host does everything). */
int ax_gpu_modules(const ax_plan *p, char names[1][64]);

/* Queues a chunk's work on c->stream (engine_ops.launch; c->op is an
 * ax_job): the header is written into c->host_out at once, the units'
 * parts are computed into c->out at the layout's offsets, and the parts and
 * the raw head and tail are copied back into c->host_out. 0 or a negative
 * gpu_error with the text in c->g. */
int ax_gpu_launch(engine_chunk *c);

/* Queues only the kernels of ax_gpu_launch, no copies (benchmarks). */
int ax_gpu_kernels(engine_chunk *c);

#endif
