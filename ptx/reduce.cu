// reduce.cu - per-tile reduction kernels, compiled once per element type and
// kernel (-DGB_DT_f32 -DRD_KERNEL_extrema, ...) into
// ptx/reduce_TYPE_KERNEL.compute_NN.ptx: small modules, so that a run
// JIT-compiles only the kernels it launches.
//
// One block of RD_LANES threads reduces one tile of RD_TILE elements and
// writes one rd_moments, rd_extrema or rd_var record; the host (or rdk_fold_sums)
// combines the records. The arithmetic order is the one reduce_math.h
// defines, so results do not depend on the grid and equal the CPU backend's.
#include "reduce_tile.h"

#if RD_FLOAT
// The pairwise tree over the doubles get(0..RD_FOLD_SEG) (indices past
// count are -0.0), by one block of RD_WARPS warps: 16 adjacent values per
// thread in registers, then down shuffles, then the warp sums. Thread 0
// gets the root.
template <class Get>
__device__ __forceinline__ double block_fold_seg(unsigned count, Get get, double *smem)
{
    constexpr unsigned per = RD_FOLD_SEG / (RD_WARPS * 32);
    const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
    double v[per];
#pragma unroll
    for (unsigned k = 0; k < per; k++)
        v[k] = t * per + k < count ? get(t * per + k) : -0.0;
#pragma unroll
    for (unsigned h = 1; h < per; h *= 2)
#pragma unroll
        for (unsigned k = 0; k < per; k += 2 * h)
            v[k] = rd_add(v[k], v[k + h]);
    double r = v[0];
#pragma unroll
    for (unsigned h = 1; h < 32; h *= 2)
        r = rd_add(r, __shfl_down_sync(RD_FULL_MASK, r, h));
    if (lane == 0)
        smem[warp] = r;
    __syncthreads();
    r = warp == 0 ? warps_tree(smem, lane) : 0.0;
    __syncthreads();
    return r;
}

// After this block wrote its tile record: if it is the last of its segment
// to finish, fold the segment; if that segment is the last, fold them all.
__device__ void tile_fold(const rd_moments *out, rd_u64 ntiles, rd_fold_ctl fold)
{
    __shared__ double smem[RD_WARPS];
    __shared__ bool last;
    const unsigned seg = blockIdx.x / RD_FOLD_SEG;
    const rd_u64 nseg = (ntiles + RD_FOLD_SEG - 1) / RD_FOLD_SEG;
    const rd_u64 seg_base = (rd_u64)seg * RD_FOLD_SEG;
    const unsigned in_seg = (unsigned)(ntiles - seg_base < RD_FOLD_SEG ? ntiles - seg_base : RD_FOLD_SEG);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(&fold.seg_count[seg], 1u) == in_seg - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    double s = block_fold_seg(
        in_seg,
        [&](unsigned i) { return __longlong_as_double((long long)__ldcg(&out[seg_base + i].sum_lo)); },
        smem);
    if (nseg == 1) { // the segment is the whole array
        if (threadIdx.x == 0) {
            *fold.result = s;
            fold.seg_count[seg] = 0;
        }
        return;
    }
    if (threadIdx.x == 0) {
        fold.seg_sum[seg] = s;
        fold.seg_count[seg] = 0;
        __threadfence();
        last = atomicAdd(fold.top_count, 1u) == nseg - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    double r = block_fold_seg((unsigned)nseg, [&](unsigned i) { return __ldcg(&fold.seg_sum[i]); }, smem);
    if (threadIdx.x == 0) {
        *fold.result = r;
        *fold.top_count = 0;
    }
}
#endif

// Moments of tile blockIdx.x of x[0..n) into out[blockIdx.x].
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void moments_tile(const elem_t *__restrict__ x, rd_u64 n,
                                             rd_moments *__restrict__ out, rd_fold_ctl fold)
{
    __shared__ double fs[RD_WARPS], fq[RD_WARPS];
    __shared__ rd_u128 is[RD_WARPS], iq[RD_WARPS];
    __shared__ unsigned int cs[RD_WARPS];
    (void)fs, (void)fq, (void)is, (void)iq, (void)cs; // each type uses some
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    rd_u64 base;
    const rd_u64 avail = subtile_avail(n, &base);
    lane_moments m = lane_moments_empty();
    if (avail)
        tile_visit(x, base, avail, lane,
                   [&](elem_t v, unsigned, unsigned k) { lane_add<SKIPNAN, SUMSQ>(m, v, k); });
#if RD_FLOAT || RD_WIDE_INT
    double q = SUMSQ ? warp_tree(rd_lane_fold<RD_FACC>(m.fsq)) : -0.0;
#endif
#if RD_FLOAT
    double sum = warp_tree(rd_lane_fold<RD_FACC>(m.fsum));
    unsigned int c = SKIPNAN ? warp_count(m.count) : 0;
#else
    rd_u128 sum = warp_sum_u128(m.isum);
#if !RD_WIDE_INT
    rd_u128 q = SUMSQ ? warp_sum_u128(m.isq) : 0;
#endif
#endif
    if (lane == 0) {
#if RD_FLOAT
        fs[warp] = sum;
        cs[warp] = c;
#else
        is[warp] = sum;
#endif
#if RD_FLOAT || RD_WIDE_INT
        fq[warp] = q;
#else
        iq[warp] = q;
#endif
    }
    __syncthreads();
    rd_moments r;
    r.sum_hi = r.sq_hi = 0;
    const rd_u64 tile_avail = n - (rd_u64)blockIdx.x * RD_TILE;
    r.count = tile_avail < RD_TILE ? tile_avail : RD_TILE;
#if RD_FLOAT
    r.sum_lo = (rd_u64)__double_as_longlong(warps_tree(fs, lane));
    if (SKIPNAN) {
        unsigned int total = 0;
        for (unsigned w = 0; w < RD_WARPS; w++)
            total += cs[w];
        r.count = total;
    }
#else
    rd_u128 total = 0;
    for (unsigned w = 0; w < RD_WARPS; w++)
        total += is[w];
    r.sum_lo = (rd_u64)total;
    r.sum_hi = (rd_u64)(total >> 64);
#endif
#if RD_FLOAT || RD_WIDE_INT
    r.sq_lo = (rd_u64)__double_as_longlong(SUMSQ ? warps_tree(fq, lane) : -0.0);
#else
    rd_u128 qt = 0;
    for (unsigned w = 0; w < RD_WARPS; w++)
        qt += iq[w];
    r.sq_lo = (rd_u64)qt;
    r.sq_hi = (rd_u64)(qt >> 64);
#endif
    if (threadIdx.x == 0)
        out[blockIdx.x] = r;
#if RD_FLOAT
    if (fold.result) { // uniform over the block: a kernel argument
        __syncthreads();
        tile_fold(out, gridDim.x, fold);
    }
#endif
}

// Extrema of tile blockIdx.x of x[0..n) into out[blockIdx.x]; indices are
// global (first is the global index of x[0]).
template <bool SKIPNAN>
__device__ __forceinline__ void extrema_tile(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                                             rd_extrema *__restrict__ out)
{
    __shared__ rd_extrema es[RD_WARPS];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    rd_u64 base;
    const rd_u64 avail = subtile_avail(n, &base);
    const rd_u64 g = first + base;
    rd_extrema e = warp_extrema<SKIPNAN>(x, base, avail, lane, g);
    if (lane == 0)
        es[warp] = e;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (unsigned w = 1; w < RD_WARPS; w++)
            rd_extrema_merge(&e, &es[w]);
        out[blockIdx.x] = e;
    }
}


// The variance partial of tile blockIdx.x of x[0..n) into out[blockIdx.x]:
// the lanes' RD_V accumulators, rd_var_lane_tree, the warp tree, then
// rd_var_warps_tree over the sub-tiles by thread 0.
template <bool SKIPNAN>
__device__ __forceinline__ void var_tile(const elem_t *__restrict__ x, rd_u64 n,
                                         rd_var *__restrict__ out)
{
    __shared__ rd_var vs[RD_WARPS];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    rd_u64 base;
    const rd_u64 avail = subtile_avail(n, &base);
    rd_var v = warp_variance<SKIPNAN>(x, base, avail, lane);
    if (lane == 0)
        vs[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        rd_var_warps_tree(vs);
        out[blockIdx.x] = vs[0];
    }
}

#define RD_MOMENTS_KERNEL(name, skipnan, sumsq)                                              \
    extern "C" __global__ void RD_BOUNDS                    \
        name(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_moments *__restrict__ out, \
             rd_fold_ctl fold)                                                               \
    {                                                                                        \
        moments_tile<skipnan, sumsq>(x, n, out, fold);                                       \
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
extern "C" __global__ void RD_BOUNDS
    rdk_extrema(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_extrema *__restrict__ out)
{
    extrema_tile<false>(x, n, first, out);
}
#elif defined(RD_KERNEL_extrema_skipnan) && RD_FLOAT
extern "C" __global__ void RD_BOUNDS
    rdk_extrema_skipnan(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                       rd_extrema *__restrict__ out)
{
    extrema_tile<true>(x, n, first, out);
}
#elif defined(RD_KERNEL_var)
extern "C" __global__ void RD_BOUNDS
    rdk_var(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first, rd_var *__restrict__ out)
{
    var_tile<false>(x, n, out);
}
#elif defined(RD_KERNEL_var_skipnan) && RD_FLOAT
extern "C" __global__ void RD_BOUNDS
    rdk_var_skipnan(const elem_t *__restrict__ x, rd_u64 n, rd_u64 first,
                    rd_var *__restrict__ out)
{
    var_tile<true>(x, n, out);
}
#else
#error "compile with -DRD_KERNEL_<name> (a skipnan kernel only for float types)"
#endif

