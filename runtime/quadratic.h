/* quadratic.h - the host side of `quadratic`: chunks of coefficients
 * (a, b, c) solved on the GPU or the CPU into roots (re x1, im x1, re x2,
 * im x2), as rows or planes, with ptx/quadratic_math.h's solver on both, so
 * the output bytes do not depend on the backend or the chunk size. */
#ifndef GPUBATCH_RUNTIME_QUADRATIC_H
#define GPUBATCH_RUNTIME_QUADRATIC_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"
#include "engine.h"
#include "ptx/quadratic_tiles.h" /* launch geometry: QD_TILE, QD_TILE_ROWS */


/* How a chunk's values lie in memory. QD_ROWS: one record per equation,
 * (a, b, c) in and (re x1, im x1, re x2, im x2) out. QD_PLANES: one plane
 * per value, each as long as the chunk capacity (max_rows values): a, b, c
 * in; re x1, re x2, im x1, im x2 out. */
typedef enum { QD_ROWS = 0, QD_PLANES = 1 } qd_layout;

/* Where the values of equation i lie, in values: coefficient k at
 * in[i * in_row + k * in_plane], root r's real part at out[i * out_row +
 * r * out_root] and its imaginary part out_im further. */
typedef struct {
    size_t in_row, in_plane;
    size_t out_row, out_root, out_im;
} qd_strides;

/* The strides of a chunk in the given layouts with planes of pitch values. */
qd_strides qd_strides_for(qd_layout in, qd_layout out, size_t pitch);

/* Nonzero for the coefficient types the solver takes: float16, bfloat16,
 * float32, float64. */
int qd_coef_type(dt_type coef);

/* The type of the roots of coef coefficients: float32 for float16 and
 * bfloat16 (converted exactly and solved as float32), else coef itself. */
dt_type qd_root_type(dt_type coef);

/* The embedded module of the kernels for coef coefficients
 * ("quadratic_f32"). */
const char *qd_module(dt_type coef);

/* Solving chunks of equations as the engine runs it (runtime/engine.h):
 * coefficients of dtype (qd_coef_type) in layout in, roots (of
 * qd_root_type) in layout out; a chunk of capacity bytes holds
 * capacity / (3 * dt_size(dtype)) rows, the plane pitch of QD_PLANES. */
typedef struct {
    dt_type dtype;
    qd_layout in, out;
} qd_job;

/* The solver's engine operation; its context is a qd_job. */
extern const engine_ops qd_engine_ops;

/* Solves rows [0, rows) of in (dtype coefficients) into out (roots of
 * qd_root_type) on the calling thread: the reference the GPU must match bit
 * for bit. */
void qd_cpu_solve(const void *in, void *out, size_t rows, dt_type dtype, const qd_strides *st);

#endif
