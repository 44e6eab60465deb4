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
#define RD_NV (RD_TILE / (RD_LANES * RD_V))

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

// Folds a double over the block with the tree of rd_tile_tree(); the result
// is valid in thread 0.
__device__ __forceinline__ double block_tree(double v, double *smem)
{
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (unsigned h = 16; h >= 1; h /= 2)
        v = rd_add(v, __shfl_xor_sync(0xffffffffu, v, h));
    if (lane == 0)
        smem[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < RD_WARPS ? smem[lane] : -0.0;
#pragma unroll
        for (unsigned h = RD_WARPS / 2; h >= 1; h /= 2)
            v = rd_add(v, __shfl_xor_sync(0xffffffffu, v, h));
    }
    __syncthreads();
    return v;
}

// Exact sum of a 128-bit value over the block; valid in thread 0.
__device__ __forceinline__ rd_u128 block_sum_u128(rd_u128 v, rd_u64 *smem)
{
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (unsigned h = 16; h >= 1; h /= 2) {
        rd_u64 lo = __shfl_xor_sync(0xffffffffu, (rd_u64)v, h);
        rd_u64 hi = __shfl_xor_sync(0xffffffffu, (rd_u64)(v >> 64), h);
        v += ((rd_u128)hi << 64) | lo;
    }
    if (lane == 0) {
        smem[2 * warp] = (rd_u64)v;
        smem[2 * warp + 1] = (rd_u64)(v >> 64);
    }
    __syncthreads();
    rd_u128 total = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < RD_WARPS; w++)
            total += ((rd_u128)smem[2 * w + 1] << 64) | smem[2 * w];
    __syncthreads();
    return total;
}

// Sum of a small count over the block; valid in thread 0.
__device__ __forceinline__ unsigned int block_count(unsigned int c, unsigned int *smem)
{
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (unsigned h = 16; h >= 1; h /= 2)
        c += __shfl_xor_sync(0xffffffffu, c, h);
    if (lane == 0)
        smem[warp] = c;
    __syncthreads();
    unsigned int total = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < RD_WARPS; w++)
            total += smem[w];
    __syncthreads();
    return total;
}

// One element vector as loaded.
union elem_vec {
    uint4 raw;
    elem_t e[RD_V];
};

// Moments of tile blockIdx.x of x[0..n) into out[blockIdx.x].
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void moments_tile(const elem_t *__restrict__ x, rd_u64 n,
                                             rd_moments *__restrict__ out)
{
    // One scratch area for every block-wide fold; each fold ends with a barrier.
    __shared__ rd_u64 smem[2 * RD_WARPS];
    double *fsmem = reinterpret_cast<double *>(smem);
    unsigned int *csmem = reinterpret_cast<unsigned int *>(smem);
    rd_u64 *ismem = smem;
    (void)ismem;
    const unsigned t = threadIdx.x;
    const rd_u64 tile = blockIdx.x;
    const rd_u64 base = tile * RD_TILE;
    const rd_u64 avail = n - base;
    lane_moments m;
    m.fsum = -0.0;
    m.fsq = -0.0;
    m.isum = 0;
    m.isq = 0;
    m.count = 0;

    if (avail >= RD_TILE) {
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);
        elem_vec buf[RD_NV];
#pragma unroll
        for (unsigned j = 0; j < RD_NV; j++)
            buf[j].raw = __ldcs(xv + t + RD_LANES * j);
#pragma unroll
        for (unsigned j = 0; j < RD_NV; j++)
#pragma unroll
            for (unsigned k = 0; k < RD_V; k++)
                lane_add<SKIPNAN, SUMSQ>(m, buf[j].e[k]);
    } else {
        for (unsigned j = 0; j < RD_NV; j++)
            for (unsigned k = 0; k < RD_V; k++) {
                rd_u64 i = (rd_u64)(t + RD_LANES * j) * RD_V + k;
                if (i < avail)
                    lane_add<SKIPNAN, SUMSQ>(m, x[base + i]);
            }
    }

    rd_moments r;
    r.sum_hi = r.sq_hi = 0;
#if RD_FLOAT
    double s = block_tree(m.fsum, fsmem);
    double q = SUMSQ ? block_tree(m.fsq, fsmem) : -0.0;
    unsigned int c = SKIPNAN ? block_count(m.count, csmem) : 0;
    if (t == 0) {
        r.sum_lo = (rd_u64)__double_as_longlong(s);
        r.sq_lo = (rd_u64)__double_as_longlong(q);
        r.count = SKIPNAN ? c : (avail < RD_TILE ? avail : RD_TILE);
        out[tile] = r;
    }
#else
    rd_u128 s = block_sum_u128(m.isum, ismem);
#if RD_WIDE_INT
    double q = SUMSQ ? block_tree(m.fsq, fsmem) : -0.0;
#else
    rd_u128 q = SUMSQ ? block_sum_u128(m.isq, ismem) : 0;
#endif
    (void)csmem;
    (void)fsmem;
    if (t == 0) {
        r.sum_lo = (rd_u64)s;
        r.sum_hi = (rd_u64)(s >> 64);
#if RD_WIDE_INT
        r.sq_lo = (rd_u64)__double_as_longlong(q);
#else
        r.sq_lo = (rd_u64)q;
        r.sq_hi = (rd_u64)(q >> 64);
#endif
        r.count = avail < RD_TILE ? avail : RD_TILE;
        out[tile] = r;
    }
#endif
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

// Extrema of tile blockIdx.x of x[0..n) into out[blockIdx.x]; indices are
// global (first is the global index of x[0]).
template <bool SKIPNAN>
__device__ __forceinline__ void extrema_tile(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                                             rd_extrema *__restrict__ out)
{
    __shared__ rd_extrema esmem[RD_WARPS];
    const unsigned t = threadIdx.x;
    const rd_u64 tile = blockIdx.x;
    const rd_u64 base = tile * RD_TILE;
    const rd_u64 avail = n - base;
    rd_extrema e = rd_extrema_empty();

    if (avail >= RD_TILE) {
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);
        elem_vec buf[RD_NV];
#pragma unroll
        for (unsigned j = 0; j < RD_NV; j++)
            buf[j].raw = __ldcs(xv + t + RD_LANES * j);
#pragma unroll
        for (unsigned j = 0; j < RD_NV; j++)
#pragma unroll
            for (unsigned k = 0; k < RD_V; k++)
                lane_extrema<SKIPNAN>(e, buf[j].e[k],
                                      first + base + (rd_u64)(t + RD_LANES * j) * RD_V + k);
    } else {
        for (unsigned j = 0; j < RD_NV; j++)
            for (unsigned k = 0; k < RD_V; k++) {
                rd_u64 i = (rd_u64)(t + RD_LANES * j) * RD_V + k;
                if (i < avail)
                    lane_extrema<SKIPNAN>(e, x[base + i], first + base + i);
            }
    }

    unsigned lane = t & 31, warp = t >> 5;
#pragma unroll
    for (unsigned h = 16; h >= 1; h /= 2) {
        rd_extrema o;
        o.min_key = __shfl_xor_sync(0xffffffffu, e.min_key, h);
        o.min_idx = __shfl_xor_sync(0xffffffffu, e.min_idx, h);
        o.max_key = __shfl_xor_sync(0xffffffffu, e.max_key, h);
        o.max_idx = __shfl_xor_sync(0xffffffffu, e.max_idx, h);
        rd_extrema_merge(&e, &o);
    }
    if (lane == 0)
        esmem[warp] = e;
    __syncthreads();
    if (t == 0) {
        for (unsigned w = 1; w < RD_WARPS; w++)
            rd_extrema_merge(&e, &esmem[w]);
        out[tile] = e;
    }
}

#define RD_MOMENTS_KERNEL(name, skipnan, sumsq)                                              \
    extern "C" __global__ void __launch_bounds__(RD_LANES)                                   \
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
extern "C" __global__ void __launch_bounds__(RD_LANES)
    rdk_extrema(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_extrema *__restrict__ out)
{
    extrema_tile<false>(x, n, first, out);
}
#elif defined(RD_KERNEL_extrema_skipnan) && RD_FLOAT
extern "C" __global__ void __launch_bounds__(RD_LANES)
    rdk_extrema_skipnan(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                       rd_extrema *__restrict__ out)
{
    extrema_tile<true>(x, n, first, out);
}
#else
#error "compile with -DRD_KERNEL_<name> (a skipnan kernel only for float types)"
#endif

#if RD_FLOAT && defined(RD_KERNEL_moments)

#define RD_FOLD_SEG 2048u
// Folds the float sums of n tile records into out->sum_lo with the pairwise
// tree over tile indices (padded with -0.0), the same value the host's
// rd_tree gives; scratch holds ceil(n / RD_FOLD_SEG) doubles. One block of
// 1024 threads. Used when a whole array is reduced on the device.
extern "C" __global__ void __launch_bounds__(1024)
    rdk_fold_sums(const rd_moments *__restrict__ in, rd_u64 n, double *scratch, double *out)
{
    __shared__ double s[RD_FOLD_SEG];
    const unsigned t = threadIdx.x;
    bool first_level = true;
    rd_u64 len = n;
    do {
        rd_u64 nseg = (len + RD_FOLD_SEG - 1) / RD_FOLD_SEG;
        for (rd_u64 seg = 0; seg < nseg; seg++) {
            for (unsigned k = t; k < RD_FOLD_SEG; k += 1024) {
                rd_u64 i = seg * RD_FOLD_SEG + k;
                double v = -0.0;
                if (i < len)
                    v = first_level ? __longlong_as_double((long long)in[i].sum_lo) : scratch[i];
                s[k] = v;
            }
            __syncthreads();
            for (unsigned h = 1; h < RD_FOLD_SEG; h *= 2) {
                unsigned i = t * 2 * h;
                if (i < RD_FOLD_SEG)
                    s[i] = rd_add(s[i], s[i + h]);
                __syncthreads();
            }
            if (t == 0)
                scratch[seg] = s[0];
            __syncthreads();
        }
        first_level = false;
        len = nseg;
    } while (len > 1);
    if (t == 0)
        *out = n ? scratch[0] : -0.0;
}
#endif
