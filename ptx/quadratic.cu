// quadratic.cu - the batch quadratic solver, compiled once per coefficient
// type (-DGB_DT_f32, -DGB_DT_f64, -DGB_DT_f16, -DGB_DT_bf16) into
// ptx/quadratic_TYPE.compute_NN.ptx. Every equation is solved by
// quadratic_math.h's solver (the CPU backend runs the same code) on its
// own, so the roots do not depend on the launch shape, only on the
// coefficients. float16 and bfloat16 coefficients are converted exactly to
// float32 (half_math.h) as they are loaded, and solved as float32. The host
// launches blocks of QD_TILE threads, and enough of them for QD_TILE_ROWS
// rows each (qdk_rows) or one row per thread (qdk_strided); fewer only cost
// time.
#include "half_math.h"
#include "quadratic_math.h"
#include "quadratic_tiles.h"

// in_t: a coefficient as stored; coef_t: as solved, and the roots' type.
#if defined(GB_DT_f32)
typedef float in_t;
typedef float coef_t;
#define QD_SOLVE qd_solve_f32
#define QD_LOAD(x) (x)
#elif defined(GB_DT_f64)
typedef double in_t;
typedef double coef_t;
#define QD_SOLVE qd_solve_f64
#define QD_LOAD(x) (x)
#elif defined(GB_DT_f16)
typedef unsigned short in_t;
typedef float coef_t;
#define QD_SOLVE qd_solve_f32
#define QD_LOAD(x) hf_f16_to_f32(x)
#elif defined(GB_DT_bf16)
typedef unsigned short in_t;
typedef float coef_t;
#define QD_SOLVE qd_solve_f32
#define QD_LOAD(x) hf_bf16_to_f32(x)
#else
#error "compile with -DGB_DT_f32, -DGB_DT_f64, -DGB_DT_f16 or -DGB_DT_bf16"
#endif

// Writes one equation's roots as a complex row (re x1, im x1, re x2, im x2)
// with 16-byte stores; row points at 16-byte aligned memory.
__device__ __forceinline__ void qd_store_row(coef_t *row, const coef_t *r)
{
#if !defined(GB_DT_f64)
    *reinterpret_cast<float4 *>(row) = make_float4(r[0], r[1], r[2], r[3]);
#else
    reinterpret_cast<double2 *>(row)[0] = make_double2(r[0], r[1]);
    reinterpret_cast<double2 *>(row)[1] = make_double2(r[2], r[3]);
#endif
}

// Rows (a, b, c) in, rows (re x1, im x1, re x2, im x2) out: an (N, 3) array
// to an (N, 2) complex array; out 16-byte aligned. Each thread loads its
// QD_RPT rows of a pass (QD_TILE rows apart) before it solves any, so that
// their loads are in flight together and the solver's arithmetic overlaps
// them; it reads with scalar loads (a warp's loads cover contiguous memory,
// which the caches merge) and writes each row's roots with 16-byte stores.
// Staging the rows through shared memory with vector loads measured
// slower: the block-wide barriers keep loads and the long solver from
// overlapping.
extern "C" __global__ void __launch_bounds__(QD_TILE)
    qdk_rows(const in_t *__restrict__ in, unsigned long long n, coef_t *__restrict__ out)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)QD_TILE_ROWS + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * QD_TILE_ROWS) {
        coef_t a[QD_RPT], b[QD_RPT], c[QD_RPT];
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++) {
            const unsigned long long j = i + h * QD_TILE;
            if (j < n) {
                a[h] = QD_LOAD(in[3 * j]);
                b[h] = QD_LOAD(in[3 * j + 1]);
                c[h] = QD_LOAD(in[3 * j + 2]);
            }
        }
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++) {
            const unsigned long long j = i + h * QD_TILE;
            if (j < n) {
                coef_t r[4];
                QD_SOLVE(a[h], b[h], c[h], &r[0], &r[1], &r[2], &r[3]);
                qd_store_row(out + 4 * j, r);
            }
        }
    }
}

// Any other layout: the coefficients of equation i at in[i * in_row +
// {0, 1, 2} * in_plane] and its roots to out[i * out_row + r * out_root
// (+ out_im for the imaginary part)] for root r = 0, 1, strides in values:
// planes in (in_row 1, in_plane = the plane length), a structure-of-arrays
// out (out_row 1). Planes are read with one coalesced load per thread and
// plane; complex rows out (out_row 4, out_root 2, out_im 1, 16-byte aligned)
// are written with vector stores.
extern "C" __global__ void __launch_bounds__(QD_TILE)
    qdk_strided(const in_t *__restrict__ in, unsigned long long n, unsigned long long in_row,
                unsigned long long in_plane, coef_t *__restrict__ out, unsigned long long out_row,
                unsigned long long out_root, unsigned long long out_im)
{
    const bool complex_rows = out_row == 4 && out_root == 2 && out_im == 1;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const in_t *p = in + i * in_row;
        coef_t r[4];
        QD_SOLVE(QD_LOAD(p[0]), QD_LOAD(p[in_plane]), QD_LOAD(p[2 * in_plane]), &r[0], &r[1],
                 &r[2], &r[3]);
        coef_t *q = out + i * out_row;
        if (complex_rows) {
            qd_store_row(q, r);
        } else {
            q[0] = r[0];
            q[out_im] = r[1];
            q[out_root] = r[2];
            q[out_root + out_im] = r[3];
        }
    }
}
