/* quadratic.h - the host side of `quadratic`: chunks of coefficient rows
 * (a, b, c) solved on the GPU or the CPU into rows of roots (re x1, im x1,
 * re x2, im x2), with ptx/quadratic_math.h's solver on both, so the output
 * bytes do not depend on the backend or the chunk size. */
#ifndef GPUBATCH_RUNTIME_QUADRATIC_H
#define GPUBATCH_RUNTIME_QUADRATIC_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"

struct backend;
typedef struct qd_engine qd_engine;

/* Prepares nslots slots for chunks of at most max_rows rows of dtype
 * (DT_F32 or DT_F64). Returns 0 or a negative gpu_error with the reason in
 * be->err. */
int qd_engine_open(qd_engine **out, struct backend *be, int nslots, size_t max_rows, dt_type dtype);
void qd_engine_close(qd_engine *e);

/* Starts solving `rows` rows at host (a buffer from backend_host_alloc, left
 * untouched until qd_engine_collect returns); asynchronous on the GPU. */
int qd_engine_submit(qd_engine *e, int slot, const void *host, size_t rows);

/* Waits for slot's chunk; *roots points at its rows of roots (4 values per
 * row), valid until the slot is submitted again. */
int qd_engine_collect(qd_engine *e, int slot, const void **roots, size_t *rows);

/* One line explaining the last error. */
const char *qd_engine_error(const qd_engine *e);

/* Solves rows on the CPU: the reference the GPU must match bit for bit. */
void qd_cpu_rows(const void *in, size_t rows, dt_type dtype, void *out);

#endif
