// reduce.cu - per-tile reduction kernels, compiled once per element type and
// kernel (-DGB_DT_f32 -DRD_KERNEL_extrema, ...) into
// ptx/reduce_TYPE_KERNEL.compute_NN.ptx: small modules, so that a run
// JIT-compiles only the kernels it launches.
//
// One block of RD_LANES threads reduces one tile of RD_TILE elements and
// writes one rd_moments or rd_extrema record; the host (or rdk_fold_sums)
// combines the records. The arithmetic order is the one reduce_math.h
// defines, so results do not depend on the grid and equal the CPU backend's.
#include "ptx/reduce_math.h"

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
#define RD_NV (RD_TILE / (RD_LANES * RD_V)) // vectors per lane per tile
#define RD_BATCH (RD_NV < 16 ? RD_NV : 16)  // vectors loaded before use
#define RD_FULL_MASK 0xffffffffu

// Lane-local moments accumulator.
struct lane_moments {
    double fsum, fsq; // float types (fsq also for 64-bit integers)
    rd_u128 isum, isq;
    unsigned int count;
};

// True for a NaN element (never for integers).
__device__ __forceinline__ bool elem_isnan(elem_t x)
{
#if RD_FLOAT
    return x != x;
#else
    return false;
#endif
}

// Order key of one element.
__device__ __forceinline__ rd_u64 elem_key(elem_t x)
{
#if defined(GB_DT_f32)
    return rd_key_f32(__float_as_uint(x));
#elif defined(GB_DT_f64)
    return rd_key_f64((rd_u64)__double_as_longlong(x));
#elif RD_SIGNED
    return rd_key_signed((rd_i64)x);
#else
    return (rd_u64)x;
#endif
}

// Adds one element to a lane's moments, in index order.
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void lane_add(lane_moments &m, elem_t x)
{
#if RD_FLOAT
    if (SKIPNAN && elem_isnan(x))
        return;
    double d = (double)x;
    m.fsum = rd_add(m.fsum, d);
    if (SUMSQ)
        m.fsq = rd_add(m.fsq, d * d);
    m.count++;
#else
#if RD_SIGNED
    m.isum += (rd_u128)(__int128)(rd_i64)x;
#else
    m.isum += (rd_u128)(rd_u64)x;
#endif
    if (SUMSQ) {
#if RD_WIDE_INT
        double d = (double)x;
        m.fsq = rd_add(m.fsq, d * d);
#elif RD_SIGNED
        m.isq += (rd_u128)(rd_u64)((rd_i64)x * (rd_i64)x);
#else
        m.isq += (rd_u128)((rd_u64)x * (rd_u64)x);
#endif
    }
    m.count++;
#endif
}

// The tree of rd_tile_tree() over the warp's lane values, with xor shuffles;
// every lane ends with the root.
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

// Calls visit(element, index in tile) for every element of this warp's
// tile in the lane's order: vectors lane, lane+32, ..., elements in order.
// A full tile is read with 16-byte streaming loads, RD_BATCH vectors in
// flight per lane; the last, partial tile element by element.
template <class Visit>
__device__ __forceinline__ void tile_visit(const elem_t *__restrict__ x, rd_u64 base,
                                           rd_u64 avail, unsigned lane, Visit visit)
{
    if (avail >= RD_TILE) {
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);
#pragma unroll
        for (unsigned b = 0; b < RD_NV; b += RD_BATCH) {
            elem_vec buf[RD_BATCH];
#pragma unroll
            for (unsigned j = 0; j < RD_BATCH; j++)
                buf[j].raw = __ldcs(xv + lane + RD_LANES * (b + j));
#pragma unroll
            for (unsigned j = 0; j < RD_BATCH; j++)
#pragma unroll
                for (unsigned k = 0; k < RD_V; k++)
                    visit(buf[j].e[k], (lane + RD_LANES * (b + j)) * RD_V + k);
        }
    } else {
        for (unsigned j = 0; j < RD_NV; j++)
            for (unsigned k = 0; k < RD_V; k++) {
                unsigned i = (lane + RD_LANES * j) * RD_V + k;
                if (i < avail)
                    visit(x[base + i], i);
            }
    }
}

// Moments of this warp's tile of x[0..n) into out[tile].
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void moments_tile(const elem_t *__restrict__ x, rd_u64 n,
                                             rd_moments *__restrict__ out)
{
    const unsigned lane = threadIdx.x & 31;
    const rd_u64 tile = (rd_u64)blockIdx.x * RD_WARPS_PER_BLOCK + (threadIdx.x >> 5);
    const rd_u64 base = tile * RD_TILE;
    if (base >= n)
        return; // the whole warp leaves together
    const rd_u64 avail = n - base;
    lane_moments m;
    m.fsum = -0.0;
    m.fsq = -0.0;
    m.isum = 0;
    m.isq = 0;
    m.count = 0;
    tile_visit(x, base, avail, lane, [&](elem_t v, unsigned) { lane_add<SKIPNAN, SUMSQ>(m, v); });

    rd_moments r;
    r.sum_hi = r.sq_hi = 0;
    const rd_u64 full = avail < RD_TILE ? avail : RD_TILE;
#if RD_FLOAT
    double s = warp_tree(m.fsum);
    double q = SUMSQ ? warp_tree(m.fsq) : -0.0;
    unsigned int c = SKIPNAN ? warp_count(m.count) : 0;
    r.sum_lo = (rd_u64)__double_as_longlong(s);
    r.sq_lo = (rd_u64)__double_as_longlong(q);
    r.count = SKIPNAN ? c : full;
#else
    rd_u128 s = warp_sum_u128(m.isum);
    r.sum_lo = (rd_u64)s;
    r.sum_hi = (rd_u64)(s >> 64);
#if RD_WIDE_INT
    double q = SUMSQ ? warp_tree(m.fsq) : -0.0;
    r.sq_lo = (rd_u64)__double_as_longlong(q);
#else
    rd_u128 q = SUMSQ ? warp_sum_u128(m.isq) : 0;
    r.sq_lo = (rd_u64)q;
    r.sq_hi = (rd_u64)(q >> 64);
#endif
    r.count = full;
#endif
    if (lane == 0)
        out[tile] = r;
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

// Extrema of this warp's tile of x[0..n) into out[tile]; indices are global
// (first is the global index of x[0]).
template <bool SKIPNAN>
__device__ __forceinline__ void extrema_tile(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                                             rd_extrema *__restrict__ out)
{
    const unsigned lane = threadIdx.x & 31;
    const rd_u64 tile = (rd_u64)blockIdx.x * RD_WARPS_PER_BLOCK + (threadIdx.x >> 5);
    const rd_u64 base = tile * RD_TILE;
    if (base >= n)
        return;
    const rd_u64 g = first + base;
    rd_extrema e = rd_extrema_empty();
    tile_visit(x, base, n - base, lane,
               [&](elem_t v, unsigned i) { lane_extrema<SKIPNAN>(e, v, g + i); });
#pragma unroll
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2) {
        rd_extrema o;
        o.min_key = __shfl_xor_sync(RD_FULL_MASK, e.min_key, h);
        o.min_idx = __shfl_xor_sync(RD_FULL_MASK, e.min_idx, h);
        o.max_key = __shfl_xor_sync(RD_FULL_MASK, e.max_key, h);
        o.max_idx = __shfl_xor_sync(RD_FULL_MASK, e.max_idx, h);
        rd_extrema_merge(&e, &o);
    }
    if (lane == 0)
        out[tile] = e;
}

#define RD_MOMENTS_KERNEL(name, skipnan, sumsq)                                              \
    extern "C" __global__ void __launch_bounds__(RD_WARPS_PER_BLOCK * 32)                    \
        name(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_moments *__restrict__ out) \
    {                                                                                        \
        moments_tile<skipnan, sumsq>(x, n, out);                                             \
    }

#if defined(RD_KERNEL_moments)
RD_MOMENTS_KERNEL(rdk_moments, false, false)
#elif defined(RD_KERNEL_moments_sq)
RD_MOMENTS_KERNEL(rdk_moments_sq, false, true)
#elif defined(RD_KERNEL_moments_skipnan) && RD_FLOAT
RD_MOMENTS_KERNEL(rdk_moments_skipnan, true, false)
#elif defined(RD_KERNEL_moments_sq_skipnan) && RD_FLOAT
RD_MOMENTS_KERNEL(rdk_moments_sq_skipnan, true, true)
#elif defined(RD_KERNEL_extrema)
extern "C" __global__ void __launch_bounds__(RD_WARPS_PER_BLOCK * 32)
    rdk_extrema(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_extrema *__restrict__ out)
{
    extrema_tile<false>(x, n, first, out);
}
#elif defined(RD_KERNEL_extrema_skipnan) && RD_FLOAT
extern "C" __global__ void __launch_bounds__(RD_WARPS_PER_BLOCK * 32)
    rdk_extrema_skipnan(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                       rd_extrema *__restrict__ out)
{
    extrema_tile<true>(x, n, first, out);
}
#else
#error "compile with -DRD_KERNEL_<name> (a skipnan kernel only for float types)"
#endif

#if RD_FLOAT && defined(RD_KERNEL_moments)
#define RD_FOLD_SEG 4096u
// Folds the doubles at in + i*stride (i < n), in aligned segments of
// RD_FOLD_SEG padded with -0.0, into out[blockIdx.x]: one level of the
// pairwise tree over tile sums that rd_tree computes on the host. Launched
// with 1024 threads per block, repeatedly, until one value is left; used
// when a whole array is reduced on the device.
extern "C" __global__ void __launch_bounds__(1024)
    rdk_fold_sums(const char *__restrict__ in, rd_u64 n, rd_u64 stride, double *__restrict__ out)
{
    __shared__ double s[RD_FOLD_SEG];
    const unsigned t = threadIdx.x;
    const rd_u64 base = (rd_u64)blockIdx.x * RD_FOLD_SEG;
    for (unsigned k = t; k < RD_FOLD_SEG; k += 1024) {
        rd_u64 i = base + k;
        s[k] = i < n ? *reinterpret_cast<const double *>(in + i * stride) : -0.0;
    }
    __syncthreads();
    for (unsigned h = 1; h < RD_FOLD_SEG; h *= 2) {
        for (unsigned i = t * 2 * h; i < RD_FOLD_SEG; i += 1024 * 2 * h)
            s[i] = rd_add(s[i], s[i + h]);
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
#endif
