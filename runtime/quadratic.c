/* quadratic.c - running the quadratic solver over chunks on either backend. */
#include "quadratic.h"

/* The solver's functions inlined whole into each instruction-set variant
 * of the row loop, so that each is compiled for its instructions. */
#define GB_HD static inline __attribute__((always_inline))

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/half_math.h"
#include "ptx/quadratic_math.h"
#include "simd.h"


/* Strides of each layout pair; planes are pitch values apart. */
qd_strides qd_strides_for(qd_layout in, qd_layout out, size_t pitch)
{
    qd_strides st;
    st.in_row = in == QD_PLANES ? 1 : 3;
    st.in_plane = in == QD_PLANES ? pitch : 1;
    st.out_row = out == QD_PLANES ? 1 : 4;
    st.out_root = out == QD_PLANES ? pitch : 2;
    st.out_im = out == QD_PLANES ? 2 * pitch : 1;
    return st;
}

/* Coefficient types of the solver. */
int qd_coef_type(dt_type coef)
{
    return dt_is_float(coef);
}

/* Roots of float16 and bfloat16 equations are float32. */
dt_type qd_root_type(dt_type coef)
{
    return coef == DT_F16 || coef == DT_BF16 ? DT_F32 : coef;
}

/* Module name per coefficient type. */
const char *qd_module(dt_type coef)
{
    switch (coef) {
    case DT_F16: return "quadratic_f16";
    case DT_BF16: return "quadratic_bf16";
    case DT_F32: return "quadratic_f32";
    default: return "quadratic_f64";
    }
}

/* Solves rows [0, rows) of in into out on the calling thread: the body of
 * every instruction-set variant of qd_cpu_solve (the solver's formulas,
 * ptx/quadratic_math.h, inlined into each; fma() is one rounding in any of
 * them, and contraction stays off, so the bits are the same). */
static inline __attribute__((always_inline)) void
qd_cpu_rows(const void *in, void *out, size_t rows, dt_type dtype, const qd_strides *st)
{
    size_t ir = st->in_row, ip = st->in_plane, orow = st->out_row, ort = st->out_root,
           oim = st->out_im;
    if (dtype == DT_F16 || dtype == DT_BF16) {
        const uint16_t *c = in;
        float *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow) {
            float a, b, cc;
            if (dtype == DT_F16)
                a = hf_f16_to_f32(c[0]), b = hf_f16_to_f32(c[ip]), cc = hf_f16_to_f32(c[2 * ip]);
            else
                a = hf_bf16_to_f32(c[0]), b = hf_bf16_to_f32(c[ip]), cc = hf_bf16_to_f32(c[2 * ip]);
            qd_solve_f32(a, b, cc, &r[0], &r[oim], &r[ort], &r[ort + oim]);
        }
    } else if (dtype == DT_F32) {
        const float *c = in;
        float *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow)
            qd_solve_f32(c[0], c[ip], c[2 * ip], &r[0], &r[oim], &r[ort], &r[ort + oim]);
    } else {
        const double *c = in;
        double *r = out;
        for (size_t i = 0; i < rows; i++, c += ir, r += orow)
            qd_solve_f64(c[0], c[ip], c[2 * ip], &r[0], &r[oim], &r[ort], &r[ort + oim]);
    }
}

typedef void (*qd_rows_fn)(const void *, void *, size_t, dt_type, const qd_strides *);

/* Defines variant NAME of the row loop, compiled with ATTRS. */
#define QD_CPU_VARIANT(NAME, ATTRS)                                                        \
    ATTRS static void NAME(const void *in, void *out, size_t rows, dt_type dtype,          \
                           const qd_strides *st)                                           \
    {                                                                                      \
        qd_cpu_rows(in, out, rows, dtype, st);                                             \
    }

QD_CPU_VARIANT(qd_cpu_rows_baseline, )
#if SIMD_MULTI
QD_CPU_VARIANT(qd_cpu_rows_avx2, SIMD_ATTR_AVX2)
QD_CPU_VARIANT(qd_cpu_rows_avx512, SIMD_ATTR_AVX512)
#endif

/* Solves rows [0, rows) of in into out on the calling thread, with the
 * instruction-set variant in use (runtime/simd.h). */
void qd_cpu_solve(const void *in, void *out, size_t rows, dt_type dtype, const qd_strides *st)
{
    static const qd_rows_fn variants[] = {
        qd_cpu_rows_baseline,
#if SIMD_MULTI
        qd_cpu_rows_avx2, qd_cpu_rows_avx512,
#endif
    };
    variants[simd_variant()](in, out, rows, dtype, st);
}

/* Rows of a chunk: the plane pitch, from the chunk capacity. */
static size_t qd_max_rows(const qd_job *j, size_t capacity)
{
    return capacity / (3 * dt_size(j->dtype));
}

/* Bytes of one equation in a chunk of input: a row of three coefficients,
 * or one coefficient of each plane. */
static size_t qd_row_bytes(const qd_job *j)
{
    return (j->in == QD_PLANES ? 1 : 3) * dt_size(j->dtype);
}

/* The layouts' strides for chunks of capacity bytes. */
static qd_strides qd_strides_of(const qd_job *j, size_t capacity)
{
    return qd_strides_for(j->in, j->out, qd_max_rows(j, capacity));
}

/* The kernel: rows in and out, or the strided one for planes. */
static const char *qd_kernel_name(const qd_job *j)
{
    return j->in == QD_ROWS && j->out == QD_ROWS ? "qdk_rows" : "qdk_strided";
}

/* Roots buffer bytes: four roots values per row (engine_ops.out_bytes). */
static size_t qd_out_bytes(const void *op, size_t capacity)
{
    const qd_job *j = op;
    size_t rows = qd_max_rows(j, capacity);
    return (rows ? rows : 1) * 4 * dt_size(qd_root_type(j->dtype));
}

/* Roots bytes of a chunk (engine_ops.result_bytes). */
static size_t qd_result_bytes(const void *op, size_t bytes)
{
    const qd_job *j = op;
    return bytes / qd_row_bytes(j) * 4 * dt_size(qd_root_type(j->dtype));
}

/* Units of CPU work: rows (engine_ops.units). */
static size_t qd_units(const void *op, size_t bytes)
{
    return bytes / qd_row_bytes(op);
}

/* Three coefficient planes in, four root planes out (engine_ops.planes). */
static void qd_planes(const void *op, int *in, int *out)
{
    const qd_job *j = op;
    *in = j->in == QD_PLANES ? 3 : 1;
    *out = j->out == QD_PLANES ? 4 : 1;
}

/* Loads a slot's kernel (engine_ops.slot_open). */
static int qd_slot_open(void *op, gpu *g, void *state)
{
    const qd_job *j = op;
    return gpu_function(g, qd_module(j->dtype), qd_kernel_name(j), state);
}

/* Queues the solver over a chunk (engine_ops.launch). */
static int qd_launch(engine_chunk *c)
{
    const qd_job *j = c->op;
    qd_strides st = qd_strides_of(j, c->capacity);
    const char *name = qd_kernel_name(j);
    size_t rows = qd_units(j, c->bytes);
    CUdeviceptr in = c->in, out = c->out;
    unsigned long long n = rows, in_row = st.in_row, in_plane = st.in_plane,
                       out_row = st.out_row, out_root = st.out_root, out_im = st.out_im;
    int rows_kernel = j->in == QD_ROWS && j->out == QD_ROWS;
    size_t per_block = rows_kernel ? QD_TILE_ROWS : QD_TILE;
    size_t blocks = (rows + per_block - 1) / per_block;
    unsigned grid = (unsigned)(blocks < 0x7fffffffu ? blocks : 0x7fffffffu);
    void *rows_params[] = {&in, &n, &out};
    void *strided_params[] = {&in, &n, &in_row, &in_plane, &out, &out_row, &out_root, &out_im};
    snprintf(c->kernels, ENGINE_KERNELS_LEN, "%s", name);
    return gpu_launch(c->g, *(CUfunction *)c->state, name, grid, QD_TILE, c->stream,
                      rows_kernel ? rows_params : strided_params);
}

/* Solves rows [r0, r1) of a chunk on the calling thread (engine_ops.cpu). */
static void qd_cpu(const engine_chunk *c, size_t r0, size_t r1)
{
    const qd_job *j = c->op;
    qd_strides st = qd_strides_of(j, c->capacity);
    size_t sz = dt_size(j->dtype), root_sz = dt_size(qd_root_type(j->dtype));
    qd_cpu_solve((const char *)c->host_in + r0 * st.in_row * sz,
                 (char *)c->host_out + r0 * st.out_row * root_sz, r1 - r0, j->dtype, &st);
}

const engine_ops qd_engine_ops = {
    .name = "quadratic",
    .in_what = "a coefficient chunk (--chunk)",
    .out_what = "a roots chunk",
    .lazy = 1,
    .deflate = 1,
    .slot_state = sizeof(CUfunction),
    .out_bytes = qd_out_bytes,
    .planes = qd_planes,
    .result_bytes = qd_result_bytes,
    .slot_open = qd_slot_open,
    .launch = qd_launch,
    .units = qd_units,
    .cpu = qd_cpu,
};
