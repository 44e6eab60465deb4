/* reduce_math.h - the reduction's arithmetic, compiled both as CUDA (the
 * kernels in reduce.cu) and as C (the CPU backend), so both run the same
 * operation sequence and give the same bits.
 *
 * The order of every floating-point addition is fixed by the global element
 * index, never by the launch shape:
 *  - the array is cut into tiles of RD_TILE elements at multiples of RD_TILE,
 *    and each tile into RD_WARPS sub-tiles of RD_SUBTILE elements; one GPU
 *    block reduces one tile, one warp of it one sub-tile;
 *  - inside a sub-tile, lane t (0..31) owns the 16-byte vectors t, t+32,
 *    t+64, ... of RD_VEC(size) elements each; element k of each vector is
 *    added, vector after vector, into the lane's accumulator k, a double that
 *    starts at -0.0 (the exact identity of IEEE addition: x + -0.0 == x for
 *    every x, zeros included); rd_lane_tree() folds the accumulators
 *    pairwise into the lane's value;
 *  - rd_tile_tree() folds the 32 lane sums of each sub-tile with
 *    v[l] += v[l+h] for h = 16, 8, 4, 2, 1 (the GPU uses xor shuffles, whose
 *    results are the same because IEEE addition is commutative), then the 8
 *    sub-tile sums pairwise: (s0+s1), (s2+s3), ..., then pairs of those;
 *  - tile sums are combined by a pairwise tree over tile indices, padded
 *    with -0.0 to a power of two (rd_tree_push/rd_tree_finish on the host).
 * Integer sums are exact (128-bit), minima and maxima are associative with
 * ties broken by the lower index: neither depends on order at all.
 *
 * float16 and bfloat16 elements are converted exactly to double
 * (half_math.h) and summed like float32 ones; their 16-byte vectors hold 8
 * elements. A bool element counts as the integer 0 or 1 (any nonzero byte
 * is true, as numpy reads it). */
#ifndef GPUBATCH_PTX_REDUCE_MATH_H
#define GPUBATCH_PTX_REDUCE_MATH_H

#ifdef __CUDACC__
#define GB_HD __host__ __device__ __forceinline__
typedef unsigned long long rd_u64;
typedef long long rd_i64;
#else
#include <stdint.h>
#define GB_HD static inline
typedef uint64_t rd_u64;
typedef int64_t rd_i64;
#endif

typedef unsigned __int128 rd_u128;

#include "half_math.h"

#define RD_SUBTILE 2048u  /* elements per sub-tile (one warp) */
#define RD_WARPS 8u       /* sub-tiles per tile (warps per GPU block) */
#define RD_TILE (RD_SUBTILE * RD_WARPS) /* elements per tile */
#define RD_LANES 32u      /* lanes (the threads of one warp) per sub-tile */
#define RD_VEC(size) (16u / (size)) /* elements per 16-byte vector */
#define RD_NO_INDEX (~(rd_u64)0)

/* Per-tile moments: sum, sum of squares and element count. A float sum is
 * stored as the bits of a double in *_lo; an exact integer sum as a
 * two's-complement 128-bit value in lo/hi. */
typedef struct {
    rd_u64 sum_lo, sum_hi;
    rd_u64 sq_lo, sq_hi;
    rd_u64 count; /* elements that took part (NaN excluded with skipnan) */
} rd_moments;

/* Per-tile extrema as order keys (see rd_key_*) and global indices;
 * index RD_NO_INDEX means "no element". */
typedef struct {
    rd_u64 min_key, min_idx;
    rd_u64 max_key, max_idx;
} rd_extrema;

/* Optional in-kernel fold of tile sums, for arrays reduced entirely on the
 * device: the last block to finish each segment of RD_FOLD_SEG tiles folds
 * that segment's sums, and the last segment to finish folds the segment
 * sums into *result, with the same pairwise tree as rd_tree. Counters start
 * at zero and are left at zero. result == NULL disables it (the streaming
 * path folds on the host). */
#define RD_FOLD_SEG 4096u
typedef struct {
    unsigned int *seg_count; /* ceil(tiles / RD_FOLD_SEG) counters */
    double *seg_sum;         /* one per segment */
    unsigned int *top_count; /* one counter */
    double *result;
} rd_fold_ctl;

/* Keys whose unsigned order is the numeric order (-0 before +0). For float
 * types a NaN never gets a key from these: the kernels give it
 * RD_NAN_MIN_KEY / RD_NAN_MAX_KEY so that NaN wins when it propagates. */
#define RD_NAN_MIN_KEY ((rd_u64)0)
#define RD_NAN_MAX_KEY (~(rd_u64)0)

/* Order key of a float32 given its bits. */
GB_HD rd_u64 rd_key_f32(unsigned int u)
{
    return (u & 0x80000000u) ? (rd_u64)(~u & 0xffffffffu) : (rd_u64)(u | 0x80000000u);
}

/* Bits of the float32 whose key is k. */
GB_HD unsigned int rd_unkey_f32(rd_u64 k)
{
    unsigned int u = (unsigned int)k;
    return (u & 0x80000000u) ? (u ^ 0x80000000u) : ~u;
}

/* Order key of a float64 given its bits. */
GB_HD rd_u64 rd_key_f64(rd_u64 u)
{
    return (u >> 63) ? ~u : (u | ((rd_u64)1 << 63));
}

/* Bits of the float64 whose key is k. */
GB_HD rd_u64 rd_unkey_f64(rd_u64 k)
{
    return (k >> 63) ? (k ^ ((rd_u64)1 << 63)) : ~k;
}

/* Order key of a 16-bit float (float16 or bfloat16) given its bits: both
 * formats are sign and magnitude like float32. */
GB_HD rd_u64 rd_key_h16(unsigned h)
{
    return (h & 0x8000u) ? (rd_u64)(~h & 0xffffu) : (rd_u64)((h & 0xffffu) | 0x8000u);
}

/* Bits of the 16-bit float whose key is k. */
GB_HD unsigned rd_unkey_h16(rd_u64 k)
{
    unsigned u = (unsigned)k & 0xffffu;
    return (u & 0x8000u) ? (u ^ 0x8000u) : (~u & 0xffffu);
}

/* Order key of a signed integer. */
GB_HD rd_u64 rd_key_signed(rd_i64 v)
{
    return (rd_u64)v ^ ((rd_u64)1 << 63);
}

/* Keeps (k, i) in the running minimum when it is smaller, or equal with a
 * lower index; associative and commutative. */
GB_HD void rd_min_update(rd_u64 *mk, rd_u64 *mi, rd_u64 k, rd_u64 i)
{
    if (i == RD_NO_INDEX)
        return;
    if (*mi == RD_NO_INDEX || k < *mk || (k == *mk && i < *mi)) {
        *mk = k;
        *mi = i;
    }
}

/* Keeps (k, i) in the running maximum when it is larger, or equal with a
 * lower index; associative and commutative. */
GB_HD void rd_max_update(rd_u64 *mk, rd_u64 *mi, rd_u64 k, rd_u64 i)
{
    if (i == RD_NO_INDEX)
        return;
    if (*mi == RD_NO_INDEX || k > *mk || (k == *mk && i < *mi)) {
        *mk = k;
        *mi = i;
    }
}

/* Merges extrema b into a. */
GB_HD void rd_extrema_merge(rd_extrema *a, const rd_extrema *b)
{
    rd_min_update(&a->min_key, &a->min_idx, b->min_key, b->min_idx);
    rd_max_update(&a->max_key, &a->max_idx, b->max_key, b->max_idx);
}

/* The empty extrema (identity of rd_extrema_merge). */
GB_HD rd_extrema rd_extrema_empty(void)
{
    rd_extrema e;
    e.min_key = 0;
    e.min_idx = RD_NO_INDEX;
    e.max_key = 0;
    e.max_idx = RD_NO_INDEX;
    return e;
}

/* Float addition as the reduction defines it (a separate function so that
 * both compilers see one rounded add, never a contraction). */
GB_HD double rd_add(double a, double b)
{
    return a + b;
}

/* The pairwise tree over a lane's n accumulators (n a power of two), in
 * place; the result is acc[0]. */
GB_HD void rd_lane_tree(double *acc, unsigned n)
{
    for (unsigned h = 1; h < n; h *= 2)
        for (unsigned k = 0; k < n; k += 2 * h)
            acc[k] = rd_add(acc[k], acc[k + h]);
}

/* The tree over one sub-tile's RD_LANES lane sums, in place; the result is
 * v[0]. The GPU computes the same tree with xor shuffles (lanes l and l^h
 * both get v[l] + v[l^h], equal by commutativity). */
GB_HD void rd_subtile_tree(double *v)
{
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        for (unsigned l = 0; l < h; l++)
            v[l] = rd_add(v[l], v[l + h]);
}

/* The pairwise tree over a tile's RD_WARPS sub-tile sums, in place; the
 * result is s[0]. */
GB_HD void rd_warps_tree(double *s)
{
    for (unsigned h = 1; h < RD_WARPS; h *= 2)
        for (unsigned l = 0; l < RD_WARPS; l += 2 * h)
            s[l] = rd_add(s[l], s[l + h]);
}

#endif
