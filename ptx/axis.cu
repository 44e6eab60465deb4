// axis.cu - the kernels of reductions along axes, compiled once per element
// type (-DGB_DT_f32, ...) into the module axis_TYPE; they write the parts of
// a chunk's units (runtime/axis.h) with the bits of the CPU's ax_cpu_units.
//
// Tile units (a run of T > 1 consecutive elements, cut into tiles of
// RD_TILE from the run's start) reduce each tile in the whole-array order
// of reduce_math.h: a run of at most RD_SUBTILE elements is one warp's
// sub-tile (the tile's other sub-tiles are empty, which the trees pass
// through unchanged), so a warp reduces a whole unit; a longer tile takes a
// block of RD_WARPS warps, one sub-tile each. Loads are 16-byte vectors
// where a sub-tile is full and aligned, else element by element, in the same
// order either way. One kernel per kind of part (moments, extrema,
// variance), so that each holds only its accumulators.
//
// Block units (T == 1: RD_AXIS_BLOCK rows of C kept columns) take one
// thread per column of an entry (up to 2^6 consecutive blocks of a sweep):
// neighbouring threads read neighbouring columns of a row (coalesced), each
// adds its column's rows in row order and folds the entry's blocks by the
// pairwise tree. Tile units of runs longer than a tile are folded into
// their entries by a second kernel.
#include "reduce_tile.h"
#include "axis_args.h"

#define AX_THREADS (RD_WARPS * 32)
#define AX_FOLD_MAX 8 // levels of an entry's tree, plus one (runtime/axis.h: AX_FOLD_LEVELS 6)

// Reads one element through the read-only path.
__device__ __forceinline__ elem_t ax_load(const elem_t *p)
{
    return __ldg(p);
}

// The sums of one warp's sub-tile of avail elements at x: every lane ends
// with the warp's float sum and square sum (or exact integer ones) and the
// count of the elements added.
template <bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void warp_moments(const elem_t *__restrict__ x, rd_u64 avail,
                                             bool aligned, unsigned lane, double &fs, double &fq,
                                             rd_u128 &is, rd_u128 &iq, unsigned &count)
{
    lane_moments m = lane_moments_empty();
    if (avail)
        tile_visit(x, 0, avail, lane,
                   [&](elem_t v, unsigned, unsigned k) { lane_add<SKIPNAN, SUMSQ>(m, v, k); },
                   aligned);
    fs = fq = -0.0;
    is = iq = 0;
#if RD_FLOAT || RD_WIDE_INT
    fq = SUMSQ ? warp_tree(rd_lane_fold<RD_FACC>(m.fsq)) : -0.0;
#endif
#if RD_FLOAT
    fs = warp_tree(rd_lane_fold<RD_FACC>(m.fsum));
#else
    is = warp_sum_u128(m.isum);
#if !RD_WIDE_INT
    iq = SUMSQ ? warp_sum_u128(m.isq) : 0;
#endif
#endif
    count = warp_count(m.count);
}

// The moments record of a tile as the axis contract has it: the sums'
// bits, squares only where wanted (else zero), the count.
template <bool SUMSQ>
__device__ __forceinline__ rd_moments moments_record(double fs, double fq, rd_u128 is,
                                                     rd_u128 iq, rd_u64 count)
{
    rd_moments r;
    r.sum_hi = r.sq_hi = r.sq_lo = 0;
#if RD_FLOAT
    r.sum_lo = (rd_u64)__double_as_longlong(fs);
    (void)is;
#else
    r.sum_lo = (rd_u64)is;
    r.sum_hi = (rd_u64)(is >> 64);
    (void)fs;
#endif
    if (SUMSQ) {
#if RD_FLOAT || RD_WIDE_INT
        r.sq_lo = (rd_u64)__double_as_longlong(fq);
        (void)iq;
#else
        r.sq_lo = (rd_u64)iq;
        r.sq_hi = (rd_u64)(iq >> 64);
        (void)fq;
#endif
    }
    r.count = count;
    return r;
}

// Where tile unit u0 + i starts in the chunk (x[0] is element e0), its
// length and its offset in its run.
__device__ __forceinline__ rd_u64 tile_unit(const ax_gpu_args &a, rd_u64 i, rd_u64 *n,
                                            rd_u64 *off)
{
    const rd_u64 u = a.u0 + i, run = u / a.tiles_per_run, tile = u - run * a.tiles_per_run;
    *off = tile * RD_TILE;
    *n = a.T - *off < RD_TILE ? a.T - *off : RD_TILE;
    return run * a.T + *off - a.e0;
}

// Whether x is 16-byte aligned (vector loads allowed).
__device__ __forceinline__ bool ax_aligned(const elem_t *x)
{
    return ((unsigned long long)x & 15u) == 0;
}

// A short run (T <= RD_LANES * RD_V: one row of one sub-tile, every element
// alone in its lane's accumulator) by one thread, with the tile's bits:
// accumulator k of lane l is -0.0 + x[l*V + k] (that element itself) or
// -0.0, the lanes' pairwise folds and the halving tree over the lanes run as
// in a tile, and every -0.0 or empty partial they meet leaves the other
// operand unchanged, so only the lanes that hold elements are visited.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void short_run(const elem_t *__restrict__ p, unsigned T,
                                          const ax_gpu_args &a, rd_u64 i)
{
    const unsigned nl = (T + RD_V - 1) / RD_V;
    if (KIND == 1) {
        rd_extrema e = rd_extrema_empty();
        for (unsigned o = 0; o < T; o++)
            lane_extrema<SKIPNAN>(e, ax_load(p + o), o);
        ((rd_extrema *)a.extrema)[i] = e;
        return;
    }
    double fs[RD_LANES], fq[RD_LANES];
    rd_var pv[KIND == 2 ? RD_LANES : 1];
    rd_u128 is = 0, iq = 0;
    unsigned cnt = 0;
    for (unsigned l = 0; l < nl; l++) {
        double s[RD_V], q[RD_V];
        rd_var v[KIND == 2 ? RD_V : 1];
#pragma unroll
        for (unsigned k = 0; k < RD_V; k++) {
            const unsigned o = l * RD_V + k;
            bool have = o < T;
            const elem_t e = have ? ax_load(p + o) : elem_t(0);
            if (SKIPNAN && have && elem_isnan(e))
                have = false;
            double d = 0.0;
            if (have) {
#if RD_FLOAT
                d = elem_double(e);
#else
                const elem_t w = elem_int(e);
                d = (double)w;
#if RD_SIGNED
                is += (rd_u128)(__int128)(rd_i64)w;
#if !RD_WIDE_INT
                iq += (rd_u128)(rd_u64)((rd_i64)w * (rd_i64)w);
#endif
#else
                is += (rd_u128)(rd_u64)w;
#if !RD_WIDE_INT
                iq += (rd_u128)((rd_u64)w * (rd_u64)w);
#endif
#endif
#endif
            }
            s[k] = have ? rd_add(-0.0, d) : -0.0;
            q[k] = have ? rd_add(-0.0, d * d) : -0.0;
            cnt += have;
            if (KIND == 2) {
                rd_var_acc acc = rd_var_acc_empty();
                if (have)
                    rd_var_step(&acc, d);
                v[KIND == 2 ? k : 0] = rd_var_of_acc(acc);
            }
        }
        if (KIND == 0) {
            fs[l] = rd_lane_fold<RD_V>(s);
            fq[l] = rd_lane_fold<RD_V>(q);
        } else {
            rd_var_lane_tree(v, RD_V);
            pv[l] = v[0];
        }
    }
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        for (unsigned l = 0; l < h && l + h < nl; l++) {
            if (KIND == 0) {
                fs[l] = rd_add(fs[l], fs[l + h]);
                fq[l] = rd_add(fq[l], fq[l + h]);
            } else {
                pv[l] = rd_var_merge(pv[l], pv[l + h]);
            }
        }
    if (KIND == 0)
        ((rd_moments *)a.moments)[i] = moments_record<SUMSQ>(fs[0], fq[0], is, iq, cnt);
    else
        ((rd_var *)a.var)[i] = pv[0];
}

// Tile units of the kind KIND (0 moments, 1 extrema, 2 variance): a thread
// per unit when T <= RD_LANES * RD_V, a warp per unit when T <= RD_SUBTILE,
// else a block per unit whose warps take a sub-tile each and whose thread 0
// combines them with the tile's trees.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void tile_units(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    __shared__ double fs_w[RD_WARPS], fq_w[RD_WARPS];
    __shared__ rd_u128 is_w[RD_WARPS], iq_w[RD_WARPS];
    __shared__ unsigned cnt_w[RD_WARPS];
    __shared__ rd_extrema ext_w[RD_WARPS];
    __shared__ rd_var var_w[RD_WARPS];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (a.T <= RD_LANES * RD_V) { // a thread per run (a run is one tile: tiles_per_run 1)
        const rd_u64 t = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
        if (t < a.nunits)
            short_run<KIND, SKIPNAN, SUMSQ>(x + ((a.u0 + t) * a.T - a.e0), (unsigned)a.T, a, t);
        return;
    }
    const bool per_warp = a.T <= RD_SUBTILE;
    const rd_u64 i = per_warp ? (rd_u64)blockIdx.x * RD_WARPS + warp : blockIdx.x;
    if (i >= a.nunits)
        return; // per_warp: the whole warp; else the whole block
    rd_u64 n, off;
    const elem_t *p = x + tile_unit(a, i, &n, &off);
    const rd_u64 sub = per_warp ? 0 : (rd_u64)warp * RD_SUBTILE;
    const rd_u64 avail = sub < n ? (n - sub < RD_SUBTILE ? n - sub : RD_SUBTILE) : 0;
    const bool aligned = ax_aligned(p + sub);
    double fs, fq;
    rd_u128 is, iq;
    unsigned cnt;
    rd_extrema e;
    rd_var v;
    if (KIND == 0)
        warp_moments<SKIPNAN, SUMSQ>(p + sub, avail, aligned, lane, fs, fq, is, iq, cnt);
    else if (KIND == 1)
        e = warp_extrema<SKIPNAN>(p + sub, 0, avail, lane, off + sub, aligned);
    else
        v = warp_variance<SKIPNAN>(p + sub, 0, avail, lane, aligned);
    if (!per_warp) {
        if (lane == 0) {
            if (KIND == 0) {
                fs_w[warp] = fs;
                fq_w[warp] = fq;
                is_w[warp] = is;
                iq_w[warp] = iq;
                cnt_w[warp] = cnt;
            } else if (KIND == 1) {
                ext_w[warp] = e;
            } else {
                var_w[warp] = v;
            }
        }
        __syncthreads();
        if (threadIdx.x != 0)
            return;
        if (KIND == 0) {
            rd_warps_tree(fs_w);
            rd_warps_tree(fq_w);
            is = iq = 0;
            cnt = 0;
            for (unsigned w = 0; w < RD_WARPS; w++) {
                is += is_w[w];
                iq += iq_w[w];
                cnt += cnt_w[w];
            }
            fs = fs_w[0];
            fq = fq_w[0];
        } else if (KIND == 1) {
            e = ext_w[0];
            for (unsigned w = 1; w < RD_WARPS; w++)
                rd_extrema_merge(&e, &ext_w[w]);
        } else {
            rd_var_warps_tree(var_w);
            v = var_w[0];
        }
    } else if (lane != 0) {
        return;
    }
    if (KIND == 0)
        ((rd_moments *)a.moments)[i] = moments_record<SUMSQ>(fs, fq, is, iq, cnt);
    else if (KIND == 1)
        ((rd_extrema *)a.extrema)[i] = e;
    else
        ((rd_var *)a.var)[i] = v;
}

// The float sums of a fold: a binary counter over an entry's units, the
// pairwise tree of rd_add (left, right) over its 2^level leaves.
struct fold_sums {
    double fs[AX_FOLD_MAX], fq[AX_FOLD_MAX];
    rd_var v[AX_FOLD_MAX];
    int top;
};

// Pushes leaf k's sums (and partial) into the fold, merging completed pairs.
__device__ __forceinline__ void fold_push(fold_sums &f, rd_u64 k, double fs, double fq,
                                          const rd_var *v)
{
    rd_var pv = v ? *v : rd_var_empty();
    for (rd_u64 c = k; c & 1; c >>= 1) {
        f.top--;
        fs = rd_add(f.fs[f.top], fs);
        fq = rd_add(f.fq[f.top], fq);
        if (v)
            pv = rd_var_merge(f.v[f.top], pv);
    }
    f.fs[f.top] = fs;
    f.fq[f.top] = fq;
    if (v)
        f.v[f.top] = pv;
    f.top++;
}

// Block entries: thread (i, c) adds column c of the 2^level block units of
// entry i, each block's rows in row order from -0.0 (variance by the
// element step from the empty partial), and folds the blocks' sums and
// partials by the pairwise tree; counts, exact sums and extrema (indices:
// the stage-2 index j of the row) are order-free.
template <bool SKIPNAN>
__device__ __forceinline__ void block_entries(const elem_t *__restrict__ x, const ax_gpu_args &a,
                                              bool want_sq)
{
    const rd_u64 g = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    if (g >= a.nentries * a.C)
        return;
    const rd_u64 i = g / a.C, c = g - i * a.C;
    const ax_gpu_entry en = ((const ax_gpu_entry *)a.entries)[i];
    fold_sums f;
    f.top = 0;
    rd_u128 is = 0, iq = 0;
    rd_u64 cnt = 0;
    rd_extrema e = rd_extrema_empty();
    for (rd_u64 k = 0; k < ((rd_u64)1 << en.level); k++) {
        const rd_u64 u = en.u + k, sweep = u / a.blocks_per_sweep;
        const rd_u64 row0 = (u - sweep * a.blocks_per_sweep) * RD_AXIS_BLOCK;
        const unsigned rows = (unsigned)(a.L - row0 < RD_AXIS_BLOCK ? a.L - row0 : RD_AXIS_BLOCK);
        const elem_t *p = x + ((sweep * a.L + row0) * a.C + c - a.e0);
        const rd_u64 j0 = (en.leaf + k) * RD_AXIS_BLOCK;
        double fs = -0.0, fq = -0.0;
        rd_var_acc acc = rd_var_acc_empty();
        for (unsigned r = 0; r < rows; r++) {
            const elem_t v = ax_load(p + r * a.C);
            if (a.extrema)
                lane_extrema<SKIPNAN>(e, v, j0 + r);
            if (SKIPNAN && elem_isnan(v))
                continue;
#if RD_FLOAT
            const double d = elem_double(v);
            fs = rd_add(fs, d);
            if (want_sq)
                fq = rd_add(fq, d * d);
#else
            const elem_t w = elem_int(v);
            const double d = (double)w;
#if RD_SIGNED
            is += (rd_u128)(__int128)(rd_i64)w;
#else
            is += (rd_u128)(rd_u64)w;
#endif
            if (want_sq) {
#if RD_WIDE_INT
                fq = rd_add(fq, d * d);
#elif RD_SIGNED
                iq += (rd_u128)(rd_u64)((rd_i64)w * (rd_i64)w);
#else
                iq += (rd_u128)((rd_u64)w * (rd_u64)w);
#endif
            }
#endif
            cnt++;
            if (a.var)
                rd_var_step(&acc, d);
        }
        const rd_var pv = rd_var_of_acc(acc);
        fold_push(f, k, fs, fq, a.var ? &pv : nullptr);
    }
    const rd_u64 o = i * a.C + c;
    if (a.moments)
        ((rd_moments *)a.moments)[o] = want_sq ? moments_record<true>(f.fs[0], f.fq[0], is, iq, cnt)
                                               : moments_record<false>(f.fs[0], f.fq[0], is, iq, cnt);
    if (a.extrema)
        ((rd_extrema *)a.extrema)[o] = e;
    if (a.var)
        ((rd_var *)a.var)[o] = f.v[0];
}

// Tile entries of runs longer than a tile: thread i folds the 2^level tile
// parts of entry i (written by the tile kernels into src, one per unit from
// u0) by the pairwise tree into entry i's part in a's arrays.
__device__ __forceinline__ void fold_tile_entries(const ax_gpu_args &a, const rd_moments *sm,
                                                  const rd_extrema *se, const rd_var *sv,
                                                  bool want_sq)
{
    const rd_u64 i = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    if (i >= a.nentries)
        return;
    const ax_gpu_entry en = ((const ax_gpu_entry *)a.entries)[i];
    fold_sums f;
    f.top = 0;
    rd_u128 is = 0, iq = 0;
    rd_u64 cnt = 0;
    rd_extrema e = rd_extrema_empty();
    for (rd_u64 k = 0; k < ((rd_u64)1 << en.level); k++) {
        const rd_u64 t = en.u + k - a.u0;
        double fs = -0.0, fq = -0.0;
        if (a.moments) {
            const rd_moments m = sm[t];
            fs = __longlong_as_double((long long)m.sum_lo);
            fq = __longlong_as_double((long long)m.sq_lo);
            is += ((rd_u128)m.sum_hi << 64) | m.sum_lo;
            iq += ((rd_u128)m.sq_hi << 64) | m.sq_lo;
            cnt += m.count;
        }
        if (a.extrema)
            rd_extrema_merge(&e, &se[t]);
        fold_push(f, k, fs, fq, a.var ? &sv[t] : nullptr);
    }
    if (a.moments)
        ((rd_moments *)a.moments)[i] = want_sq ? moments_record<true>(f.fs[0], f.fq[0], is, iq, cnt)
                                               : moments_record<false>(f.fs[0], f.fq[0], is, iq, cnt);
    if (a.extrema)
        ((rd_extrema *)a.extrema)[i] = e;
    if (a.var)
        ((rd_var *)a.var)[i] = f.v[0];
}

#define AX_TILE_KERNEL(name, kind, skipnan, sumsq)                                         \
    extern "C" __global__ void RD_BOUNDS name(const elem_t *__restrict__ x, ax_gpu_args a)   \
    {                                                                                       \
        tile_units<kind, skipnan, sumsq>(x, a);                                             \
    }

AX_TILE_KERNEL(axk_tile_moments, 0, false, false)
AX_TILE_KERNEL(axk_tile_moments_sq, 0, false, true)
AX_TILE_KERNEL(axk_tile_extrema, 1, false, false)
AX_TILE_KERNEL(axk_tile_var, 2, false, false)

// Block entries; want_sq asks for the squares.
extern "C" __global__ void __launch_bounds__(AX_THREADS)
    axk_block(const elem_t *__restrict__ x, ax_gpu_args a, int want_sq)
{
    block_entries<false>(x, a, want_sq != 0);
}

// Tile entries folded from the tile parts at sm, se, sv (see
// fold_tile_entries); want_sq asks for the squares.
extern "C" __global__ void __launch_bounds__(AX_THREADS)
    axk_fold_tiles(ax_gpu_args a, const rd_moments *sm, const rd_extrema *se, const rd_var *sv,
                   int want_sq)
{
    fold_tile_entries(a, sm, se, sv, want_sq != 0);
}

#if RD_FLOAT
AX_TILE_KERNEL(axk_tile_moments_skipnan, 0, true, false)
AX_TILE_KERNEL(axk_tile_moments_sq_skipnan, 0, true, true)
AX_TILE_KERNEL(axk_tile_extrema_skipnan, 1, true, false)
AX_TILE_KERNEL(axk_tile_var_skipnan, 2, true, false)

// Block entries with NaN skipped.
extern "C" __global__ void __launch_bounds__(AX_THREADS)
    axk_block_skipnan(const elem_t *__restrict__ x, ax_gpu_args a, int want_sq)
{
    block_entries<true>(x, a, want_sq != 0);
}
#endif
