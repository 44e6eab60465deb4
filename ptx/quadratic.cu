// quadratic.cu - the batch quadratic solver, compiled once per coefficient
// type (-DGB_DT_f32, -DGB_DT_f64) into ptx/quadratic_TYPE.compute_NN.ptx.
// Every equation is solved by quadratic_math.h's solver (the CPU backend
// runs the same code) on its own, so the roots do not depend on the launch
// shape, only on the coefficients. The host launches blocks of QD_TILE
// threads, and enough of them for QD_TILE_ROWS rows each (qdk_rows) or one
// row per thread (qdk_strided); fewer only cost time.
#include "ptx/quadratic_math.h"

#if defined(GB_DT_f32)
typedef float coef_t;
#define QD_SOLVE qd_solve_f32
#elif defined(GB_DT_f64)
typedef double coef_t;
#define QD_SOLVE qd_solve_f64
#else
#error "compile with -DGB_DT_f32 or -DGB_DT_f64"
#endif

// Threads per block; rows per tile of qdk_rows (QD_RPT rows per thread, so
// that a block has that many 16-byte loads of each thread in flight).
#define QD_TILE 256
#ifndef QD_RPT // a tuning knob, as is QD_ROWS_DIRECT (tests/gpu/bench_quadratic.cu)
#define QD_RPT 2
#endif
#define QD_TILE_ROWS (QD_RPT * QD_TILE)

// Writes one equation's roots as a complex row (re x1, im x1, re x2, im x2)
// with 16-byte stores; row points at 16-byte aligned memory.
__device__ __forceinline__ void qd_store_row(coef_t *row, const coef_t *r)
{
#if defined(GB_DT_f32)
    *reinterpret_cast<float4 *>(row) = make_float4(r[0], r[1], r[2], r[3]);
#else
    reinterpret_cast<double2 *>(row)[0] = make_double2(r[0], r[1]);
    reinterpret_cast<double2 *>(row)[1] = make_double2(r[2], r[3]);
#endif
}

// Rows (a, b, c) in, rows (re x1, im x1, re x2, im x2) out: an (N, 3) array
// to an (N, 2) complex array; in and out 16-byte aligned. A block works on
// tiles of QD_TILE_ROWS rows: a row is 12 (24) bytes, so threads reading
// their own rows would issue three strided scalar loads each; instead the
// block copies the whole tile into shared memory with 16-byte loads (a full
// tile is 3 * QD_TILE_ROWS values, a multiple of 16 bytes at a 16-byte
// aligned offset; the last, partial tile is copied value by value), and each
// thread solves rows t, t + QD_TILE, ... from there. float32 roots (16 bytes
// a row) go straight out as one vector store per row; float64 roots (32
// bytes) are staged in shared memory too, so that each warp store covers
// contiguous memory.
extern "C" __global__ void __launch_bounds__(QD_TILE)
    qdk_rows(const coef_t *__restrict__ in, unsigned long long n, coef_t *__restrict__ out)
{
#if defined(QD_ROWS_DIRECT)
    // Each thread its own rows, read with scalar loads straight from memory.
    for (unsigned long long i = blockIdx.x * (unsigned long long)QD_TILE_ROWS + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * QD_TILE_ROWS)
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++) {
            const unsigned long long j = i + h * QD_TILE;
            if (j < n) {
                coef_t r[4];
                QD_SOLVE(in[3 * j], in[3 * j + 1], in[3 * j + 2], &r[0], &r[1], &r[2], &r[3]);
                qd_store_row(out + 4 * j, r);
            }
        }
    return;
#endif
    __shared__ __align__(16) coef_t tile[4 * QD_TILE_ROWS];
    const unsigned t = threadIdx.x;
    const unsigned long long ntiles = (n + QD_TILE_ROWS - 1) / QD_TILE_ROWS;
    for (unsigned long long k = blockIdx.x; k < ntiles; k += gridDim.x) {
        const unsigned long long row0 = k * QD_TILE_ROWS;
        const unsigned rows = n - row0 < QD_TILE_ROWS ? (unsigned)(n - row0) : QD_TILE_ROWS;
        const coef_t *src = in + 3 * row0;
        if (rows == QD_TILE_ROWS) {
            const uint4 *src4 = reinterpret_cast<const uint4 *>(src);
            uint4 *tile4 = reinterpret_cast<uint4 *>(tile);
#pragma unroll
            for (unsigned j = t; j < 3 * QD_TILE_ROWS * sizeof(coef_t) / 16; j += QD_TILE)
                tile4[j] = src4[j];
        } else {
            for (unsigned j = t; j < 3 * rows; j += QD_TILE)
                tile[j] = src[j];
        }
        __syncthreads();
        coef_t r[QD_RPT][4];
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++) {
            const unsigned i = t + h * QD_TILE;
            if (i < rows)
                QD_SOLVE(tile[3 * i], tile[3 * i + 1], tile[3 * i + 2], &r[h][0], &r[h][1], &r[h][2],
                         &r[h][3]);
        }
#if defined(GB_DT_f32)
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++)
            if (t + h * QD_TILE < rows)
                qd_store_row(out + 4 * (row0 + t + h * QD_TILE), r[h]);
#else
        __syncthreads(); // every thread has its coefficients: the tile takes the roots
#pragma unroll
        for (unsigned h = 0; h < QD_RPT; h++)
            if (t + h * QD_TILE < rows)
                qd_store_row(tile + 4 * (t + h * QD_TILE), r[h]);
        __syncthreads();
        const double2 *tile2 = reinterpret_cast<const double2 *>(tile);
        double2 *dst2 = reinterpret_cast<double2 *>(out + 4 * row0);
        for (unsigned j = t; j < 2 * rows; j += QD_TILE)
            dst2[j] = tile2[j];
#endif
        __syncthreads(); // the tile is free for the next one
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
    qdk_strided(const coef_t *__restrict__ in, unsigned long long n, unsigned long long in_row,
                unsigned long long in_plane, coef_t *__restrict__ out, unsigned long long out_row,
                unsigned long long out_root, unsigned long long out_im)
{
    const bool complex_rows = out_row == 4 && out_root == 2 && out_im == 1;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const coef_t *p = in + i * in_row;
        coef_t r[4];
        QD_SOLVE(p[0], p[in_plane], p[2 * in_plane], &r[0], &r[1], &r[2], &r[3]);
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
