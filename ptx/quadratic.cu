// quadratic.cu - the batch quadratic solver, compiled once per coefficient
// type (-DGB_DT_f32, -DGB_DT_f64) into ptx/quadratic_TYPE.compute_NN.ptx.
// Every equation is solved by quadratic_math.h's solver (the CPU backend
// runs the same code) on its own, so the roots do not depend on the launch
// shape, only on the coefficients. The host launches blocks of QD_TILE
// threads.
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

// Threads per block, and rows per tile of qdk_rows.
#define QD_TILE 256

// Writes one equation's roots as a complex row (re x1, im x1, re x2, im x2)
// with 16-byte stores; row points at 16-byte aligned memory.
__device__ __forceinline__ void qd_store_row(coef_t *row, coef_t re1, coef_t im1, coef_t re2,
                                             coef_t im2)
{
#if defined(GB_DT_f32)
    *reinterpret_cast<float4 *>(row) = make_float4(re1, im1, re2, im2);
#else
    reinterpret_cast<double2 *>(row)[0] = make_double2(re1, im1);
    reinterpret_cast<double2 *>(row)[1] = make_double2(re2, im2);
#endif
}

// Rows (a, b, c) in, rows (re x1, im x1, re x2, im x2) out: an (N, 3) array
// to an (N, 2) complex array; in and out 16-byte aligned. A block works on
// tiles of QD_TILE rows: a row is 12 (24) bytes, so threads reading their
// own rows would issue three strided scalar loads each; instead the block
// copies the whole tile into shared memory with 16-byte loads (a full
// tile is 3 * QD_TILE values, a multiple of 16 bytes at a 16-byte aligned
// offset; the last, partial tile is copied value by value), and each thread
// solves its row from there. float32 roots (16 bytes a row) go straight out
// as one vector store per thread; float64 roots (32 bytes) are staged in
// shared memory too, so that each warp store covers contiguous memory.
extern "C" __global__ void __launch_bounds__(QD_TILE)
    qdk_rows(const coef_t *__restrict__ in, unsigned long long n, coef_t *__restrict__ out)
{
    __shared__ __align__(16) coef_t tile[4 * QD_TILE];
    const unsigned t = threadIdx.x;
    const unsigned long long ntiles = (n + QD_TILE - 1) / QD_TILE;
    for (unsigned long long k = blockIdx.x; k < ntiles; k += gridDim.x) {
        const unsigned long long row0 = k * QD_TILE;
        const unsigned rows = n - row0 < QD_TILE ? (unsigned)(n - row0) : QD_TILE;
        const coef_t *src = in + 3 * row0;
        if (rows == QD_TILE) {
            const uint4 *src4 = reinterpret_cast<const uint4 *>(src);
            uint4 *tile4 = reinterpret_cast<uint4 *>(tile);
            for (unsigned j = t; j < 3 * QD_TILE * sizeof(coef_t) / 16; j += QD_TILE)
                tile4[j] = src4[j];
        } else {
            for (unsigned j = t; j < 3 * rows; j += QD_TILE)
                tile[j] = src[j];
        }
        __syncthreads();
        coef_t re1 = 0, im1 = 0, re2 = 0, im2 = 0;
        if (t < rows)
            QD_SOLVE(tile[3 * t], tile[3 * t + 1], tile[3 * t + 2], &re1, &im1, &re2, &im2);
#if defined(GB_DT_f32)
        if (t < rows)
            qd_store_row(out + 4 * (row0 + t), re1, im1, re2, im2);
#else
        __syncthreads(); // every thread has its coefficients: the tile takes the roots
        if (t < rows)
            qd_store_row(tile + 4 * t, re1, im1, re2, im2);
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
        coef_t re1, im1, re2, im2;
        QD_SOLVE(p[0], p[in_plane], p[2 * in_plane], &re1, &im1, &re2, &im2);
        coef_t *q = out + i * out_row;
        if (complex_rows) {
            qd_store_row(q, re1, im1, re2, im2);
        } else {
            q[0] = re1;
            q[out_im] = im1;
            q[out_root] = re2;
            q[out_root + out_im] = im2;
        }
    }
}
