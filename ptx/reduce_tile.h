// reduce_tile.h - the element types and the lane and warp machinery of the
// tile kernels (reduce.cu, axis.cu), CUDA only: compiled once per element
// type (-DGB_DT_f32, ...), so that every kernel that reduces a tile of
// elements visits and combines them in reduce_math.h's order.
#ifndef GPUBATCH_PTX_REDUCE_TILE_H
#define GPUBATCH_PTX_REDUCE_TILE_H

#include "reduce_math.h"

#if defined(GB_DT_f32)
typedef float elem_t;
#define RD_FLOAT 1
#elif defined(GB_DT_f64)
typedef double elem_t;
#define RD_FLOAT 1
#elif defined(GB_DT_i8)
typedef signed char elem_t;
#define RD_SIGNED 1
#elif defined(GB_DT_i16)
typedef short elem_t;
#define RD_SIGNED 1
#elif defined(GB_DT_i32)
typedef int elem_t;
#define RD_SIGNED 1
#elif defined(GB_DT_i64)
typedef long long elem_t;
#define RD_SIGNED 1
#define RD_WIDE_INT 1
#elif defined(GB_DT_u8)
typedef unsigned char elem_t;
#elif defined(GB_DT_u16)
typedef unsigned short elem_t;
#elif defined(GB_DT_u32)
typedef unsigned int elem_t;
#elif defined(GB_DT_u64)
typedef unsigned long long elem_t;
#define RD_WIDE_INT 1
#elif defined(GB_DT_f16) || defined(GB_DT_bf16)
typedef unsigned short elem_t; // the bits; elem_double converts them
#define RD_FLOAT 1
#elif defined(GB_DT_bool)
typedef unsigned char elem_t; // any nonzero byte is true: elem_int gives 0 or 1
#else
#error "compile with -DGB_DT_<type>"
#endif

#ifndef RD_FLOAT
#define RD_FLOAT 0
#endif
#ifndef RD_SIGNED
#define RD_SIGNED 0
#endif

// 64-bit integers square into a double (exact 128-bit squares would overflow).
#ifndef RD_WIDE_INT
#define RD_WIDE_INT 0
#endif

#define RD_V RD_VEC(sizeof(elem_t))
#define RD_NV (RD_SUBTILE / (RD_LANES * RD_V)) // vectors per lane per sub-tile
#define RD_BATCH (RD_NV < 16 ? RD_NV : 16)  // vectors loaded before use
// Tuning knobs, fixed for the committed PTX (tests/gpu/variants.sh sweeps them).
#ifndef RD_LOAD
#define RD_LOAD __ldg // read-only path: at small sizes faster than streaming loads
#endif
// Resident blocks per multiprocessor to compile for. The float moments
// kernels take 3: that leaves each lane the registers to issue all RD_BATCH
// loads of its sub-tile before the first add (at the default 5 blocks it
// issues about half), so more loads are in flight at large sizes (the
// block counts measured: BENCHMARKS.md).
#if !defined(RD_MIN_BLOCKS) && RD_FLOAT && !defined(RD_KERNEL_extrema) && !defined(RD_KERNEL_extrema_skipnan)
#define RD_MIN_BLOCKS 3
#endif
#if defined(RD_MIN_BLOCKS) && RD_MIN_BLOCKS > 0 // 0: no bound
#define RD_BOUNDS __launch_bounds__(RD_WARPS * 32, RD_MIN_BLOCKS)
#else
#define RD_BOUNDS __launch_bounds__(RD_WARPS * 32)
#endif
#define RD_FULL_MASK 0xffffffffu

// Float accumulators per lane: one per element position in a 16-byte vector
// (rd_lane_fold combines them); integer sums need only one.
#define RD_FACC ((RD_FLOAT || RD_WIDE_INT) ? RD_V : 1)

// Lane-local moments accumulator.
struct lane_moments {
    double fsum[RD_FACC], fsq[RD_FACC]; // float types (fsq also for 64-bit integers)
    rd_u128 isum, isq;
    unsigned int count;
};

// A lane's moments before its first element.
__device__ __forceinline__ lane_moments lane_moments_empty()
{
    lane_moments m;
#pragma unroll
    for (unsigned k = 0; k < RD_FACC; k++)
        m.fsum[k] = m.fsq[k] = -0.0;
    m.isum = 0;
    m.isq = 0;
    m.count = 0;
    return m;
}

// True for a NaN element (never for integers).
__device__ __forceinline__ bool elem_isnan(elem_t x)
{
#if defined(GB_DT_f16)
    return hf_f16_isnan(x);
#elif defined(GB_DT_bf16)
    return hf_bf16_isnan(x);
#elif RD_FLOAT
    return x != x;
#else
    return false;
#endif
}

// A float element's exact value as a double.
__device__ __forceinline__ double elem_double(elem_t x)
{
#if defined(GB_DT_f16)
    return hf_f16_to_f64(x);
#elif defined(GB_DT_bf16)
    return (double)hf_bf16_to_f32(x);
#else
    return (double)x;
#endif
}

// An integer element's value (a bool's is 0 or 1).
__device__ __forceinline__ elem_t elem_int(elem_t x)
{
#if defined(GB_DT_bool)
    return x != 0;
#else
    return x;
#endif
}

// Order key of one element.
__device__ __forceinline__ rd_u64 elem_key(elem_t x)
{
#if defined(GB_DT_f32)
    return rd_key_f32(__float_as_uint(x));
#elif defined(GB_DT_f64)
    return rd_key_f64((rd_u64)__double_as_longlong(x));
#elif defined(GB_DT_f16) || defined(GB_DT_bf16)
    return rd_key_h16(x);
#elif RD_SIGNED
    return rd_key_signed((rd_i64)x);
#else
    return (rd_u64)elem_int(x);
#endif
}

// Adds one element, at position k of its vector, to a lane's moments.
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void lane_add(lane_moments &m, elem_t x, unsigned k)
{
#if RD_FLOAT
    if (SKIPNAN && elem_isnan(x))
        return;
    double d = elem_double(x);
    m.fsum[k] = rd_add(m.fsum[k], d);
    if (SUMSQ)
        m.fsq[k] = rd_add(m.fsq[k], d * d);
    m.count++;
#else
    x = elem_int(x);
#if RD_SIGNED
    m.isum += (rd_u128)(__int128)(rd_i64)x;
#else
    m.isum += (rd_u128)(rd_u64)x;
#endif
    if (SUMSQ) {
#if RD_WIDE_INT
        double d = (double)x;
        m.fsq[k] = rd_add(m.fsq[k], d * d);
#elif RD_SIGNED
        m.isq += (rd_u128)(rd_u64)((rd_i64)x * (rd_i64)x);
#else
        m.isq += (rd_u128)((rd_u64)x * (rd_u64)x);
#endif
    }
    m.count++;
#endif
}

// A lane's value from its accumulators: rd_lane_tree(), unrolled.
template <unsigned N>
__device__ __forceinline__ double rd_lane_fold(double *acc)
{
#pragma unroll
    for (unsigned h = 1; h < N; h *= 2)
#pragma unroll
        for (unsigned k = 0; k < N; k += 2 * h)
            acc[k] = rd_add(acc[k], acc[k + h]);
    return acc[0];
}

// The tree of rd_subtile_tree() over the warp's lane values, with xor
// shuffles; every lane ends with the root.
__device__ __forceinline__ double warp_tree(double v)
{
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        v = rd_add(v, __shfl_xor_sync(RD_FULL_MASK, v, h));
    return v;
}

// Exact sum of a 128-bit value over the warp.
__device__ __forceinline__ rd_u128 warp_sum_u128(rd_u128 v)
{
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2) {
        rd_u64 lo = __shfl_xor_sync(RD_FULL_MASK, (rd_u64)v, h);
        rd_u64 hi = __shfl_xor_sync(RD_FULL_MASK, (rd_u64)(v >> 64), h);
        v += ((rd_u128)hi << 64) | lo;
    }
    return v;
}

// Sum of a small count over the warp.
__device__ __forceinline__ unsigned int warp_count(unsigned int c)
{
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        c += __shfl_xor_sync(RD_FULL_MASK, c, h);
    return c;
}

// One element vector as loaded.
union elem_vec {
    uint4 raw;
    elem_t e[RD_V];
};

// Calls visit(element, index in sub-tile, position in its vector) for every
// element of this warp's
// sub-tile in the lane's order: vectors lane, lane+32, ..., elements in order.
// A full sub-tile at a 16-byte aligned address (aligned) is read with
// 16-byte loads, RD_BATCH vectors in flight per lane; a partial or
// unaligned sub-tile element by element.
template <class Visit>
__device__ __forceinline__ void tile_visit(const elem_t *__restrict__ x, rd_u64 base,
                                           rd_u64 avail, unsigned lane, Visit visit,
                                           bool aligned = true)
{
    if (avail >= RD_SUBTILE && aligned) {
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);
#pragma unroll
        for (unsigned b = 0; b < RD_NV; b += RD_BATCH) {
            elem_vec buf[RD_BATCH];
#pragma unroll
            for (unsigned j = 0; j < RD_BATCH; j++)
                buf[j].raw = RD_LOAD(xv + lane + RD_LANES * (b + j));
#pragma unroll
            for (unsigned j = 0; j < RD_BATCH; j++)
#pragma unroll
                for (unsigned k = 0; k < RD_V; k++)
                    visit(buf[j].e[k], (lane + RD_LANES * (b + j)) * RD_V + k, k);
        }
    } else {
        for (unsigned j = 0; j < RD_NV; j++)
#pragma unroll
            for (unsigned k = 0; k < RD_V; k++) {
                unsigned i = (lane + RD_LANES * j) * RD_V + k;
                if (i < avail)
                    visit(x[base + i], i, k);
            }
    }
}

// rd_warps_tree() over the warps' values in smem[0..RD_WARPS), computed by
// lanes 0..RD_WARPS-1 of warp 0 with down shuffles; lane 0 gets the root.
__device__ __forceinline__ double warps_tree(const double *smem, unsigned lane)
{
    double v = lane < RD_WARPS ? smem[lane] : -0.0;
#pragma unroll
    for (unsigned h = 1; h < RD_WARPS; h *= 2)
        v = rd_add(v, __shfl_down_sync(RD_FULL_MASK, v, h));
    return v;
}

// Where this warp's sub-tile starts, and how many elements it has (0 past n).
__device__ __forceinline__ rd_u64 subtile_avail(rd_u64 n, rd_u64 *base)
{
    *base = (rd_u64)blockIdx.x * RD_TILE + (threadIdx.x >> 5) * RD_SUBTILE;
    return *base < n ? n - *base : 0;
}

// Adds one element, at position k of its vector, to a lane's variance
// accumulators (NaN skipped with SKIPNAN).
template <bool SKIPNAN>
__device__ __forceinline__ void lane_var(rd_var_acc *acc, elem_t x, unsigned k)
{
    if (SKIPNAN && elem_isnan(x))
        return;
#if RD_FLOAT
    rd_var_step(&acc[k], elem_double(x));
#else
    rd_var_step(&acc[k], (double)elem_int(x));
#endif
}

// A variance partial from lane l + h of the warp (xor shuffle of every field).
__device__ __forceinline__ rd_var shfl_var(const rd_var &v, unsigned h)
{
    rd_var o;
    o.n = __shfl_xor_sync(RD_FULL_MASK, v.n, h);
    o.k = __shfl_xor_sync(RD_FULL_MASK, v.k, h);
    o.s1.hi = __shfl_xor_sync(RD_FULL_MASK, v.s1.hi, h);
    o.s1.lo = __shfl_xor_sync(RD_FULL_MASK, v.s1.lo, h);
    o.s2.hi = __shfl_xor_sync(RD_FULL_MASK, v.s2.hi, h);
    o.s2.lo = __shfl_xor_sync(RD_FULL_MASK, v.s2.lo, h);
    return o;
}

// rd_var_subtile_tree() over the warp's lane partials with xor shuffles:
// each lane merges (own, partner), which for the lanes that reach lane 0 is
// (v[l], v[l + h]); lane 0 gets the root.
__device__ __forceinline__ rd_var warp_var_tree(rd_var v)
{
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        v = rd_var_merge(v, shfl_var(v, h));
    return v;
}

// Adds one element to a lane's extrema.
template <bool SKIPNAN>
__device__ __forceinline__ void lane_extrema(rd_extrema &e, elem_t x, rd_u64 idx)
{
    if (elem_isnan(x)) {
        if (!SKIPNAN) {
            rd_min_update(&e.min_key, &e.min_idx, RD_NAN_MIN_KEY, idx);
            rd_max_update(&e.max_key, &e.max_idx, RD_NAN_MAX_KEY, idx);
        }
        return;
    }
    rd_u64 k = elem_key(x);
    rd_min_update(&e.min_key, &e.min_idx, k, idx);
    rd_max_update(&e.max_key, &e.max_idx, k, idx);
}

// The extrema of one warp's sub-tile at x + base (indices from g), in
// every lane.
template <bool SKIPNAN>
__device__ __forceinline__ rd_extrema warp_extrema(const elem_t *__restrict__ x, rd_u64 base,
                                                   rd_u64 avail, unsigned lane, rd_u64 g,
                                                   bool aligned = true)
{
    rd_extrema e = rd_extrema_empty();
    if (avail)
        tile_visit(x, base, avail, lane,
                   [&](elem_t v, unsigned i, unsigned) { lane_extrema<SKIPNAN>(e, v, g + i); },
                   aligned);
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2) {
        rd_extrema o;
        o.min_key = __shfl_xor_sync(RD_FULL_MASK, e.min_key, h);
        o.min_idx = __shfl_xor_sync(RD_FULL_MASK, e.min_idx, h);
        o.max_key = __shfl_xor_sync(RD_FULL_MASK, e.max_key, h);
        o.max_idx = __shfl_xor_sync(RD_FULL_MASK, e.max_idx, h);
        rd_extrema_merge(&e, &o);
    }
    return e;
}

// The variance partial of one warp's sub-tile at x + base, in lane 0.
template <bool SKIPNAN>
__device__ __forceinline__ rd_var warp_variance(const elem_t *__restrict__ x, rd_u64 base,
                                                rd_u64 avail, unsigned lane, bool aligned = true)
{
    rd_var_acc acc[RD_V];
#pragma unroll
    for (unsigned k = 0; k < RD_V; k++)
        acc[k] = rd_var_acc_empty();
    if (avail)
        tile_visit(x, base, avail, lane,
                   [&](elem_t v, unsigned, unsigned k) { lane_var<SKIPNAN>(acc, v, k); },
                   aligned);
    rd_var p[RD_V];
#pragma unroll
    for (unsigned k = 0; k < RD_V; k++)
        p[k] = rd_var_of_acc(acc[k]);
#pragma unroll
    for (unsigned h = 1; h < RD_V; h *= 2)
#pragma unroll
        for (unsigned k = 0; k < RD_V; k += 2 * h)
            p[k] = rd_var_merge(p[k], p[k + h]);
    return warp_var_tree(p[0]);
}

#endif
