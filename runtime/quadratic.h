/* quadratic.h - the host side of `quadratic`: chunks of coefficients
 * (a, b, c) solved on the GPU or the CPU into roots (re x1, im x1, re x2,
 * im x2), as rows or planes, with ptx/quadratic_math.h's solver on both, so
 * the output bytes do not depend on the backend or the chunk size. */
#ifndef GPUBATCH_RUNTIME_QUADRATIC_H
#define GPUBATCH_RUNTIME_QUADRATIC_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/gzwrite.h"
#include "io/pipeline.h"
#include "ptx/quadratic_tiles.h" /* launch geometry: QD_TILE, QD_TILE_ROWS */

struct backend;
typedef struct qd_engine qd_engine;

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

/* Bytes of a slot's roots buffer for chunks of at most max_rows rows of
 * coef coefficients on be (with CUDA, room for the roots compressed too). */
size_t qd_result_bytes(const struct backend *be, size_t max_rows, dt_type coef);

/* Prepares nslots slots for chunks of at most max_rows rows of dtype
 * coefficients (qd_coef_type), coefficients in layout in and roots (of
 * qd_root_type) in layout out;
 * compressed: the chunks come as blocked gzip members. The first slot's
 * buffers are made now, each other slot's when its first chunk comes (the
 * first chunks run meanwhile). results: NULL, or nslots roots buffers of
 * qd_result_bytes() from backend_host_unpinned(be), made while the devices
 * started, which the slots pin and use instead of making their own (the
 * caller frees them after qd_engine_close). Returns 0 or a negative
 * gpu_error with the reason in be->err. */
int qd_engine_open(qd_engine **out, struct backend *be, int nslots, size_t max_rows, dt_type dtype,
                   qd_layout in, qd_layout out_layout, int compressed, void *const *results);
void qd_engine_close(qd_engine *e);

/* Rows per chunk the engine holds (the plane pitch of QD_PLANES). */
size_t qd_engine_max_rows(const qd_engine *e);

/* Starts solving `rows` rows at host (a buffer from backend_host_alloc of
 * 3 * max_rows values, left untouched until qd_engine_copied or
 * qd_engine_collect returns);
 * asynchronous on the GPU. With gz (CUDA, rows layout), host holds those
 * rows as compressed members, inflated on the device
 * (runtime/gpu_inflate.h). */
int qd_engine_submit(qd_engine *e, int slot, const void *host, const pl_gz_chunk *gz,
                     size_t rows);

/* Waits for slot's chunk; *roots points at its roots (4 * max_rows values
 * in the output layout), valid until the slot is submitted again. */
int qd_engine_collect(qd_engine *e, int slot, const void **roots, size_t *rows);

/* Waits until slot's chunk no longer needs its host buffer: on CUDA, until
 * its copies to the device are done; on the CPU at once (the work is done
 * in qd_engine_submit). It may be called on another thread than the
 * engine's others, between the slot's submit and its collect. 0, or a
 * negative error with one line in err. */
int qd_engine_copied(qd_engine *e, int slot, char *err, size_t errlen);

/* Compresses the complex roots on the device from now on, for blocked gzip
 * at level whose roots start at output stream position offset (after the
 * header): on the CUDA backend, for QD_ROWS output, at the levels the device
 * does (gzc_device_level) and where it writes into the pinned host buffers
 * (gzc_host_mapped); collected slots then give a gz_span
 * (qd_engine_span). Returns 1 when on, 0 when it does not apply, or a
 * negative gpu_error. Call it before the first submit. */
int qd_engine_compress(qd_engine *e, int level, uint64_t offset);

/* After qd_engine_collect: 1 with the slot's roots as a span of blocked gzip
 * (valid until the slot is submitted again), or 0 when they are plain. */
int qd_engine_span(const qd_engine *e, int slot, const gz_span **span);

/* One line explaining the last error. */
const char *qd_engine_error(const qd_engine *e);

/* Solves rows [0, rows) of in (dtype coefficients) into out (roots of
 * qd_root_type) on the calling thread: the reference the GPU must match bit
 * for bit. */
void qd_cpu_solve(const void *in, void *out, size_t rows, dt_type dtype, const qd_strides *st);

#endif
