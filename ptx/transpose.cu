// transpose.cu - matrix transpose kernels: out[b][c][r] = in[b][r][c] for a
// batch of R x C matrices, one kernel per element size (1, 2, 4, 8, 16
// bytes; the bytes of an element are moved, never interpreted).
//
// Every block moves one tile of one matrix; the grid is 1-D over all tiles
// (tile0 + blockIdx.x), the row tiles of a column band numbered first, so
// consecutive blocks fill consecutive stretches of the same output rows.
//
// tpk_vec_eE: R and C multiples of K = 16 / E (every row starts 16-byte
//   aligned). Each thread loads K rows x 16 bytes (a K x K block of
//   elements), transposes it in registers and stores the K resulting
//   16-byte vectors into shared memory in output order, XOR-swizzled so
//   that neither the stores nor the later row reads conflict on banks; the
//   block then writes whole 16-byte vectors along the output rows.
// tpk_odd_eE (E = 4, 8): rows off 16-byte alignment; input row segments
//   read as the aligned vectors covering them, output row segments written
//   as the vectors inside them plus single elements at the ends, gathered
//   from shared memory with a few integer operations per element.
// tpk_any_eE: any shape; a 64 x 64 tile of single elements through padded
//   shared memory (1- and 2-byte elements off alignment).
#include <stdint.h>

#include "transpose_tiles.h"

typedef unsigned long long tp_u64;

// Load of the any-shape kernel (a tuning knob; the committed PTX uses the default).
#ifndef TP_ANY_LOAD
#define TP_ANY_LOAD __ldg
#endif

// Tile geometry of the vector kernel for element size E: K elements per
// 16-byte vector, W output vectors per tile row (TR = W * K input rows), V
// input vectors per tile row (TC = V * K input columns), NT threads.
template <int E> struct tp_vec_cfg {
    enum { K = 16 / E, W = TP_VEC_W(E), V = TP_VEC_V(E), NT = TP_VEC_NT(E) };
};

// Transposes a K x K block of E-byte elements held as K row vectors v into
// K column vectors o (o[m] holds column m, top to bottom).
template <int E> __device__ __forceinline__ void tp_block_transpose(const uint4 *v, uint4 *o);

template <> __device__ __forceinline__ void tp_block_transpose<16>(const uint4 *v, uint4 *o)
{
    o[0] = v[0];
}

template <> __device__ __forceinline__ void tp_block_transpose<8>(const uint4 *v, uint4 *o)
{
    o[0] = make_uint4(v[0].x, v[0].y, v[1].x, v[1].y);
    o[1] = make_uint4(v[0].z, v[0].w, v[1].z, v[1].w);
}

template <> __device__ __forceinline__ void tp_block_transpose<4>(const uint4 *v, uint4 *o)
{
    o[0] = make_uint4(v[0].x, v[1].x, v[2].x, v[3].x);
    o[1] = make_uint4(v[0].y, v[1].y, v[2].y, v[3].y);
    o[2] = make_uint4(v[0].z, v[1].z, v[2].z, v[3].z);
    o[3] = make_uint4(v[0].w, v[1].w, v[2].w, v[3].w);
}

// Word i (0..3) of a 16-byte vector.
__device__ __forceinline__ unsigned tp_word(const uint4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

template <> __device__ __forceinline__ void tp_block_transpose<2>(const uint4 *v, uint4 *o)
{
    // Output vector m, word w: half m of rows 2w and 2w+1.
#pragma unroll
    for (int m = 0; m < 8; m++) {
        unsigned sel = (m & 1) ? 0x7632u : 0x5410u;
        unsigned w[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = __byte_perm(tp_word(v[2 * k], m >> 1), tp_word(v[2 * k + 1], m >> 1), sel);
        o[m] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

template <> __device__ __forceinline__ void tp_block_transpose<1>(const uint4 *v, uint4 *o)
{
    // Output vector m, word w: byte m of rows 4w .. 4w+3.
#pragma unroll
    for (int m = 0; m < 16; m++) {
        unsigned sel = (unsigned)(m & 3) | (unsigned)(4 + (m & 3)) << 4;
        unsigned w[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned lo = __byte_perm(tp_word(v[4 * k], m >> 2), tp_word(v[4 * k + 1], m >> 2), sel);
            unsigned hi = __byte_perm(tp_word(v[4 * k + 2], m >> 2), tp_word(v[4 * k + 3], m >> 2), sel);
            w[k] = __byte_perm(lo, hi, 0x5410u);
        }
        o[m] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

// Splits a linear tile number into matrix b and the tile's first row r0
// and column c0, row tiles of a column band first.
__device__ __forceinline__ void tp_tile_origin(tp_u64 tile, tp_u64 rows, tp_u64 cols, tp_u64 tr_rows,
                                               tp_u64 tc_cols, tp_u64 *b, tp_u64 *r0, tp_u64 *c0)
{
    tp_u64 tiles_r = (rows + tr_rows - 1) / tr_rows, tiles_c = (cols + tc_cols - 1) / tc_cols;
    tp_u64 per_matrix = tiles_r * tiles_c;
    *b = tile / per_matrix;
    tp_u64 t = tile - *b * per_matrix;
    tp_u64 tc = t / tiles_r;
    *r0 = (t - tc * tiles_r) * tr_rows;
    *c0 = tc * tc_cols;
}

// The vector kernel's body for element size E.
template <int E> __device__ __forceinline__ void tp_vec(const uint4 *__restrict__ in,
                                                        uint4 *__restrict__ out, tp_u64 rows,
                                                        tp_u64 cols, tp_u64 tile0)
{
    typedef tp_vec_cfg<E> cfg;
    enum { K = cfg::K, W = cfg::W, V = cfg::V, NT = cfg::NT, TR = W * K, TC = V * K };
    enum { NB = W * V / NT, NS = TC * W / NT };
    __shared__ uint4 smem[TC * W];
    tp_u64 b, r0, c0;
    tp_tile_origin(tile0 + blockIdx.x, rows, cols, TR, TC, &b, &r0, &c0);
    const tp_u64 in_pitch = cols / K, out_pitch = rows / K; // in vectors
    const uint4 *src = in + b * rows * in_pitch;
    uint4 *dst = out + b * cols * out_pitch;
    const int t = threadIdx.x;

    // All loads of the thread first, so they are in flight together.
    uint4 v[NB][K];
#pragma unroll
    for (int i = 0; i < NB; i++) {
        int q = t + i * NT, bi = q / V, bj = q % V;
        tp_u64 r = r0 + (tp_u64)bi * K, c = c0 + (tp_u64)bj * K;
        if (r < rows && c < cols) {
            const uint4 *p = src + r * in_pitch + c / K;
#pragma unroll
            for (int k = 0; k < K; k++)
                v[i][k] = __ldg(p + k * in_pitch);
        } else {
#pragma unroll
            for (int k = 0; k < K; k++)
                v[i][k] = make_uint4(0, 0, 0, 0); // never written out
        }
    }
#pragma unroll
    for (int i = 0; i < NB; i++) {
        int q = t + i * NT, bi = q / V, bj = q % V;
        uint4 o[K];
        tp_block_transpose<E>(v[i], o);
#pragma unroll
        for (int m = 0; m < K; m++)
            smem[(bj * K + m) * W + (bi ^ (bj & 7))] = o[m];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < NS; i++) {
        int u = t + i * NT, oc = u / W, ov = u % W;
        tp_u64 c = c0 + (tp_u64)oc, r = r0 + (tp_u64)ov * K;
        if (c < cols && r < rows)
            dst[c * out_pitch + r / K] = smem[oc * W + (ov ^ ((oc / K) & 7))];
    }
}

// Shared-memory row pitch (in elements) of the any-shape kernel, chosen so
// that a warp reading down a column touches 32 distinct banks.
template <int E> struct tp_any_cfg { enum { P = E == 1 ? 68 : E == 2 ? 66 : 65 }; };

// The any-shape kernel's body: a 64 x 64 tile of elements of type T.
template <class T> __device__ __forceinline__ void tp_any(const T *__restrict__ in, T *__restrict__ out,
                                                          tp_u64 rows, tp_u64 cols, tp_u64 tile0)
{
    enum { TS = TP_ANY_TS, P = tp_any_cfg<sizeof(T)>::P };
    __shared__ T smem[TS * P];
    tp_u64 b, r0, c0;
    tp_tile_origin(tile0 + blockIdx.x, rows, cols, TS, TS, &b, &r0, &c0);
    const T *src = in + b * rows * cols;
    T *dst = out + b * rows * cols;
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    T v[16];
#pragma unroll
    for (int i = 0; i < 16; i++) {
        tp_u64 r = r0 + ty + (i >> 1) * 8, c = c0 + tx + (i & 1) * 32;
        v[i] = r < rows && c < cols ? TP_ANY_LOAD(src + r * cols + c) : T(0);
    }
#pragma unroll
    for (int i = 0; i < 16; i++)
        smem[(ty + (i >> 1) * 8) * P + tx + (i & 1) * 32] = v[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 16; i++) {
        tp_u64 c = c0 + ty + (i >> 1) * 8, r = r0 + tx + (i & 1) * 32;
        if (c < cols && r < rows)
            dst[c * rows + r] = smem[(tx + (i & 1) * 32) * P + ty + (i >> 1) * 8];
    }
}

// K elements of 4 or 8 bytes as one 16-byte vector.
__device__ __forceinline__ uint4 tp_pack(const unsigned *e)
{
    return make_uint4(e[0], e[1], e[2], e[3]);
}

__device__ __forceinline__ uint4 tp_pack(const unsigned long long *e)
{
    return make_uint4((unsigned)e[0], (unsigned)(e[0] >> 32), (unsigned)e[1], (unsigned)(e[1] >> 32));
}

// Shared-memory vector slot of the odd-shape kernel for vector v of tile
// row i: vectors 0..NVI-2 of the rows at pitch NVI - 1, their index XORed
// with (i / K^2) & 7; the rows' last vectors after them, in row order with
// the low 3 bits of the row XORed the same way.
template <int K, int TR, int NVI> __device__ __forceinline__ unsigned tp_odd_slot(unsigned i, unsigned v)
{
    unsigned x = (i / (K * K)) & 7;
    return v < NVI - 1 ? i * (NVI - 1) + (v ^ x) : TR * (NVI - 1) + ((i & ~7u) | ((i ^ x) & 7));
}

// The odd-shape kernel's body for 4- and 8-byte elements, when rows are not
// 16-byte aligned (K = 16 / E elements per vector). A tile is TR = 32 K
// rows x TC = TP_ODD_TC columns, moved by TP_ODD_NT threads (NW warps).
// In: a warp reads each tile row i as the NVI = TC / K + 1 aligned 16-byte
// vectors that cover it, in one go (the end vectors overlap the neighbours'
// elements, which stay unused), and stores them whole into shared memory
// (tp_odd_slot); the element of tile column j is element (j + sh(i)) % K of
// the row's vector (j + sh(i)) / K, sh(i) being the place of the row's
// first element in its vector.
// Out: a warp's output segments all start at the same place d in a 16-byte
// vector (NW is a multiple of K), so lane l gathers the elements of rows
// K l + d .. K l + d + K - 1 of a tile column, modulo TR (the slot swizzle
// spreads the 32 lanes over 8 bank groups), and writes them as one aligned
// vector when they all lie in the tile; otherwise, at the two ends, as
// single elements: few partial 32-byte sectors. The per-element work is a
// few integer operations fixed per thread, so the kernel stays memory-bound.
template <class T> __device__ __forceinline__ void tp_odd(const T *__restrict__ in, T *__restrict__ out,
                                                          tp_u64 rows, tp_u64 cols, tp_u64 tile0)
{
    enum { E = sizeof(T), K = 16 / E, TR = 32 * K, TC = TP_ODD_TC, NVI = TC / K + 1 };
    enum { NW = TP_ODD_NT / 32, ITI = TR / NW, ITO = TC / NW, PI = (NVI + 31) / 32 };
    __shared__ uint4 smem[TR * NVI];
    const T *se = (const T *)smem;
    tp_u64 b, r0, c0;
    tp_tile_origin(tile0 + blockIdx.x, rows, cols, TR, TC, &b, &r0, &c0);
    const tp_u64 mbase = b * rows * cols;
    const uint4 *vin = (const uint4 *)in;
    const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const unsigned s0 = (unsigned)((mbase + r0 * cols + c0) % K), cm = (unsigned)(cols % K);
    const unsigned clen = (unsigned)(cols - c0 < TC ? cols - c0 : TC);
    const unsigned rlen = (unsigned)(rows - r0 < TR ? rows - r0 : TR);

    uint4 vv[ITI][PI];
    tp_u64 g0 = mbase + (r0 + warp) * cols + c0; // first element of row warp + it NW
#pragma unroll
    for (int it = 0; it < ITI; it++, g0 += NW * cols) {
        const unsigned ti = it * NW + warp;
        const tp_u64 vs = g0 / K;
        const unsigned nv = (unsigned)((g0 + clen + K - 1) / K - vs);
#pragma unroll
        for (int p = 0; p < PI; p++)
            vv[it][p] = ti < rlen && lane + 32 * p < nv ? __ldg(vin + vs + lane + 32 * p) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int it = 0; it < ITI; it++) {
        const unsigned ti = it * NW + warp;
#pragma unroll
        for (int p = 0; p < PI; p++) {
            unsigned v = lane + 32 * p;
            if (v < NVI)
                smem[tp_odd_slot<K, TR, NVI>(ti, v)] = vv[it][p];
        }
    }
    __syncthreads();

    static_assert((int)NW % (int)K == 0, "a warp's output columns must share their vector alignment");
    tp_u64 h0 = mbase + (c0 + warp) * rows + r0; // output position of column warp + it NW, row 0
    const unsigned d = (unsigned)((K - h0 % K) % K); // rows before the first aligned vector
    // This lane's rows (K lane + d + t) % TR, their slot rows and the place
    // of each row's first element in its vector.
    unsigned ri[K], sh[K];
#pragma unroll
    for (int t = 0; t < K; t++) {
        ri[t] = (K * lane + d + t) % TR;
        sh[t] = (s0 + ri[t] * cm) % K;
    }
    const bool whole = K * lane + d + K <= rlen;
#pragma unroll
    for (int it = 0; it < ITO; it++, h0 += NW * rows) {
        const unsigned oc = it * NW + warp;
        if (oc >= clen) // the same for the whole warp
            break;
        T e[K];
#pragma unroll
        for (int t = 0; t < K; t++) {
            const unsigned pos = oc + sh[t];
            e[t] = se[tp_odd_slot<K, TR, NVI>(ri[t], pos / K) * K + pos % K];
        }
        if (whole) {
            reinterpret_cast<uint4 *>(out)[(h0 + d) / K + lane] = tp_pack(e);
        } else {
#pragma unroll
            for (int t = 0; t < K; t++)
                if (ri[t] < rlen)
                    out[h0 + ri[t]] = e[t];
        }
    }
}

#define TP_VEC_KERNEL(E)                                                                   \
    extern "C" __global__ void __launch_bounds__(tp_vec_cfg<E>::NT)                       \
        tpk_vec_e##E(const uint4 *in, uint4 *out, tp_u64 rows, tp_u64 cols, tp_u64 tile0) \
    {                                                                                      \
        tp_vec<E>(in, out, rows, cols, tile0);                                            \
    }
TP_VEC_KERNEL(1)
TP_VEC_KERNEL(2)
TP_VEC_KERNEL(4)
TP_VEC_KERNEL(8)
TP_VEC_KERNEL(16)

#define TP_ANY_KERNEL(E, T)                                                             \
    extern "C" __global__ void __launch_bounds__(TP_ANY_NT)                            \
        tpk_any_e##E(const T *in, T *out, tp_u64 rows, tp_u64 cols, tp_u64 tile0)      \
    {                                                                                   \
        tp_any<T>(in, out, rows, cols, tile0);                                         \
    }
TP_ANY_KERNEL(1, unsigned char)
TP_ANY_KERNEL(2, unsigned short)
TP_ANY_KERNEL(4, unsigned int)
TP_ANY_KERNEL(8, unsigned long long)

#define TP_ODD_KERNEL(E, T)                                                             \
    extern "C" __global__ void __launch_bounds__(TP_ODD_NT, TP_ODD_MINB)               \
        tpk_odd_e##E(const T *in, T *out, tp_u64 rows, tp_u64 cols, tp_u64 tile0)      \
    {                                                                                   \
        tp_odd<T>(in, out, rows, cols, tile0);                                         \
    }
TP_ODD_KERNEL(4, unsigned int)
TP_ODD_KERNEL(8, unsigned long long)
