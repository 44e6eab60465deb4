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
#define AX_FOLD_MAX 7 // levels of an entry's tree, plus one (runtime/axis.h: AX_FOLD_LEVELS 6)

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

// Writes a part's moments at index o of the arrays a names (runtime/axis.h):
// the sum (a double, or 128 exact bits), the square sum, the count.
__device__ __forceinline__ void store_moments(const ax_gpu_args &a, rd_u64 o, double fs,
                                              double fq, rd_u128 is, rd_u128 iq, rd_u64 count)
{
#if RD_FLOAT
    if (a.sum)
        ((double *)a.sum)[o] = fs;
    (void)is;
#else
    if (a.sum) {
        ((rd_u64 *)a.sum)[2 * o] = (rd_u64)is;
        ((rd_u64 *)a.sum)[2 * o + 1] = (rd_u64)(is >> 64);
    }
    (void)fs;
#endif
#if RD_FLOAT || RD_WIDE_INT
    if (a.sq)
        ((double *)a.sq)[o] = fq;
    (void)iq;
#else
    if (a.sq) {
        ((rd_u64 *)a.sq)[2 * o] = (rd_u64)iq;
        ((rd_u64 *)a.sq)[2 * o + 1] = (rd_u64)(iq >> 64);
    }
    (void)fq;
#endif
    if (a.count)
        ((rd_u64 *)a.count)[o] = count;
}

// A part's moments at index o of the arrays a names (-0.0 and 0 where not
// held): the inverse of store_moments.
__device__ __forceinline__ void load_moments(const ax_gpu_args &a, rd_u64 o, double &fs,
                                             double &fq, rd_u128 &is, rd_u128 &iq, rd_u64 &count)
{
    fs = fq = -0.0;
    is = iq = 0;
#if RD_FLOAT
    if (a.sum)
        fs = ((const double *)a.sum)[o];
#else
    if (a.sum)
        is = ((rd_u128)((const rd_u64 *)a.sum)[2 * o + 1] << 64) | ((const rd_u64 *)a.sum)[2 * o];
#endif
#if RD_FLOAT || RD_WIDE_INT
    if (a.sq)
        fq = ((const double *)a.sq)[o];
#else
    if (a.sq)
        iq = ((rd_u128)((const rd_u64 *)a.sq)[2 * o + 1] << 64) | ((const rd_u64 *)a.sq)[2 * o];
#endif
    count = a.count ? ((const rd_u64 *)a.count)[o] : 0;
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

// Tile units of the kind KIND (0 moments, 1 extrema, 2 variance): a warp
// per unit when T <= RD_SUBTILE, else a block per unit whose warps take a
// sub-tile each and whose thread 0 combines them with the tile's trees.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void tile_units(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    __shared__ double fs_w[RD_WARPS], fq_w[RD_WARPS];
    __shared__ rd_u128 is_w[RD_WARPS], iq_w[RD_WARPS];
    __shared__ unsigned cnt_w[RD_WARPS];
    __shared__ rd_extrema ext_w[RD_WARPS];
    __shared__ rd_var var_w[RD_WARPS];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
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
        store_moments(a, i, fs, fq, is, iq, cnt);
    else if (KIND == 1)
        ((rd_extrema *)a.extrema)[i] = e;
    else
        ((rd_var *)a.var)[i] = v;
}

// The float sums and variance partials of a fold: a binary counter over an
// entry's units, the pairwise tree (left, right) over its 2^level leaves.
// Slot l holds the pending subtree of 2^l leaves; every index is a constant
// of an unrolled loop, so the slots stay in registers.
struct fold_sums {
    double fs[AX_FOLD_MAX], fq[AX_FOLD_MAX];
    rd_var v[AX_FOLD_MAX];
};

// Pushes leaf k's sums (and partial, where v) into the fold.
__device__ __forceinline__ void fold_push(fold_sums &f, rd_u64 k, double fs, double fq,
                                          const rd_var *v)
{
    rd_var pv = v ? *v : rd_var_empty();
#pragma unroll
    for (unsigned l = 0; l < AX_FOLD_MAX; l++) {
        if (!((k >> l) & 1)) {
            f.fs[l] = fs;
            f.fq[l] = fq;
            if (v)
                f.v[l] = pv;
            break;
        }
        fs = rd_add(f.fs[l], fs);
        fq = rd_add(f.fq[l], fq);
        if (v)
            pv = rd_var_merge(f.v[l], pv);
    }
}

// The root of a fold of 2^level leaves: slot `level`.
__device__ __forceinline__ void fold_root(const fold_sums &f, unsigned level, double &fs,
                                          double &fq, rd_var &v)
{
#pragma unroll
    for (unsigned l = 0; l < AX_FOLD_MAX; l++)
        if (l == level) {
            fs = f.fs[l];
            fq = f.fq[l];
            v = f.v[l];
        }
}

// Writes an entry's parts at index o of the arrays a asks for: the fold's
// root, the order-free sums, count and extrema.
__device__ __forceinline__ void store_entry(const ax_gpu_args &a, rd_u64 o, const fold_sums &f,
                                            unsigned level, rd_u128 is, rd_u128 iq, rd_u64 cnt,
                                            const rd_extrema &e)
{
    double fs, fq;
    rd_var rv;
    fold_root(f, level, fs, fq, rv);
    store_moments(a, o, fs, fq, is, iq, cnt);
    if (a.extrema)
        ((rd_extrema *)a.extrema)[o] = e;
    if (a.var)
        ((rd_var *)a.var)[o] = rv;
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
        elem_t buf[RD_AXIS_BLOCK]; // every load of the block in flight before the first add
#pragma unroll
        for (unsigned r = 0; r < RD_AXIS_BLOCK; r++)
            buf[r] = r < rows ? ax_load(p + r * a.C) : elem_t(0);
#pragma unroll
        for (unsigned r = 0; r < RD_AXIS_BLOCK; r++) {
            if (r >= rows)
                break;
            const elem_t v = buf[r];
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
    store_entry(a, i * a.C + c, f, en.level, is, iq, cnt, e);
}

// Tile entries of runs longer than a tile: thread i folds the 2^level tile
// parts of entry i (written by the tile kernels into t's arrays, one per
// unit from u0) by the pairwise tree into entry i's part in a's arrays.
__device__ __forceinline__ void fold_tile_entries(const ax_gpu_args &a, const ax_gpu_args &t)
{
    const rd_u64 i = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    if (i >= a.nentries)
        return;
    const ax_gpu_entry en = ((const ax_gpu_entry *)a.entries)[i];
    fold_sums f;
    rd_u128 is = 0, iq = 0;
    rd_u64 cnt = 0;
    rd_extrema e = rd_extrema_empty();
    for (rd_u64 k = 0; k < ((rd_u64)1 << en.level); k++) {
        const rd_u64 u = en.u + k - a.u0;
        double fs, fq;
        rd_u128 ts, tq;
        rd_u64 tc;
        load_moments(t, u, fs, fq, ts, tq, tc);
        is += ts;
        iq += tq;
        cnt += tc;
        if (a.extrema)
            rd_extrema_merge(&e, &((const rd_extrema *)t.extrema)[u]);
        fold_push(f, k, fs, fq, a.var ? &((const rd_var *)t.var)[u] : nullptr);
    }
    store_entry(a, i, f, en.level, is, iq, cnt, e);
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

// Tile entries folded from the tile parts in t's arrays (see
// fold_tile_entries).
extern "C" __global__ void __launch_bounds__(AX_THREADS)
    axk_fold_tiles(ax_gpu_args a, ax_gpu_args t)
{
    fold_tile_entries(a, t);
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
