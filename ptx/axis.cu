// axis.cu - the kernels of reductions along axes, compiled once per element
// type (-DGB_DT_f32, ...) into the module axis_TYPE; they write the parts of
// a chunk's units (runtime/axis.h) with the bits of the CPU's ax_cpu_units.
//
// Tile units (a run of T > 1 consecutive elements, cut into tiles of
// RD_TILE from the run's start) reduce each tile in the whole-array order
// of reduce_math.h: a run of at most RD_SUBTILE elements is one sub-tile
// (the tile's other sub-tiles are empty, which the trees pass through
// unchanged), staged in shared memory and reduced by one thread where it is
// at most 32 vectors of float32 or float64 (rows_lane: moments, extrema),
// else by a group of lanes (rows_units); a longer tile takes a block of
// RD_WARPS warps, one sub-tile each. Loads are 16-byte vectors where a
// sub-tile is full and aligned, else element by element, in the same order
// either way. One kernel per kind of part (moments, extrema, variance), so
// that each holds only its accumulators, and writes only the arrays the ops
// need.
//
// Block units (T == 1: RD_AXIS_BLOCK rows of C kept columns) take one
// thread per column of an entry (up to 2^6 consecutive blocks of a sweep):
// neighbouring threads read neighbouring columns of a row (coalesced), each
// adds its column's rows in row order and folds the entry's blocks by the
// pairwise tree (float32 sums: two adjacent columns a thread, one 8-byte
// load a row, where the column count and the data's alignment allow; the
// same order). Tile units of runs longer than a tile are folded into their
// entries by a second kernel.
#include "reduce_tile.h"
#include "axis_args.h"

#define AX_THREADS (RD_WARPS * 32)
#define AX_FOLD_MAX (AX_FOLD_LEVELS + 1) // levels of an entry's tree, plus one

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

// Tile units of runs longer than RD_SUBTILE, of the kind KIND (0 moments,
// 1 extrema, 2 variance): a block per unit whose warps take a sub-tile each
// and whose thread 0 combines them with the tile's trees (shorter runs take
// the short-run kernels).
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void tile_units(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    __shared__ double fs_w[RD_WARPS], fq_w[RD_WARPS];
    __shared__ rd_u128 is_w[RD_WARPS], iq_w[RD_WARPS];
    __shared__ unsigned cnt_w[RD_WARPS];
    __shared__ rd_extrema ext_w[RD_WARPS];
    __shared__ rd_var var_w[RD_WARPS];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const rd_u64 i = blockIdx.x;
    if (i >= a.nunits)
        return;
    rd_u64 n, off;
    const elem_t *p = x + tile_unit(a, i, &n, &off);
    const rd_u64 sub = (rd_u64)warp * RD_SUBTILE;
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
    {
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
    }
    if (KIND == 0)
        store_moments(a, i, fs, fq, is, iq, cnt);
    else if (KIND == 1)
        ((rd_extrema *)a.extrema)[i] = e;
    else
        ((rd_var *)a.var)[i] = v;
}

// Short runs (a run of T <= RD_SUBTILE elements is one tile, and one
// sub-tile of it): a block stages the contiguous bytes of
// ax_rows_bytes(T * size) / (T * size) whole runs in shared memory with
// 16-byte loads, then (in rows_units; rows_lane below, the kernels
// axk_lane_*, for runs of at most 32 vectors of float32 and float64) a
// group of P lanes reduces each run (P the power of two >= its vectors, at
// most 32; several runs per warp): lane l of the group owns the run's
// vectors l, l + 32, ... as in the sub-tile order, and the group's xor
// shuffles are the sub-tile tree's levels below P (the levels above add
// the empty lanes' -0.0, empty partials and extrema, which change
// nothing).

// Runs a block of the short-run kernels takes (the host sizes the grid alike).
__device__ __forceinline__ unsigned rows_per_block(rd_u64 T)
{
    const rd_u64 rowb = T * sizeof(elem_t);
    return (unsigned)(ax_rows_bytes(rowb) / rowb);
}

// Byte b of a staged buffer as it lies in shared memory: its 16-byte vector
// moved inside its 128-byte group by the XOR of bits sh.. of b where msk is
// 0x70 (sh > 4, so the map is one to one), unmoved where msk is 0.
__device__ __forceinline__ unsigned stage_swz(unsigned b, unsigned sh, unsigned msk)
{
    return b ^ (((b >> sh) << 4) & msk);
}

// Copies elements [0, n) at x into the shared buffer sm at the same offset
// from a 16-byte boundary (returned, in bytes; byte b of the copy lies at
// stage_swz(b, sh, msk)), by threads t of nt: whole aligned 16-byte vectors
// by 16-byte loads, BATCH in flight per thread, the partial ones at either
// end element by element (nothing outside [x, x + n) is read). The caller
// waits for the copy (a barrier).
template <unsigned BATCH>
__device__ __forceinline__ unsigned stage_elems(const elem_t *__restrict__ x, rd_u64 n,
                                                unsigned char *sm, unsigned t, unsigned nt,
                                                unsigned sh = 5, unsigned msk = 0)
{
    const unsigned long long a = (unsigned long long)x, b = a + n * sizeof(elem_t);
    const unsigned long long a0 = a & ~15ull;
    const unsigned nv = (unsigned)((b - a0 + 15) >> 4);
    const uint4 *src = reinterpret_cast<const uint4 *>(a0);
    for (unsigned v0 = t; v0 < nv; v0 += nt * BATCH) {
        uint4 buf[BATCH];
#pragma unroll
        for (unsigned j = 0; j < BATCH; j++) {
            const unsigned v = v0 + j * nt;
            const unsigned long long va = a0 + 16ull * v;
            if (v < nv && va >= a && va + 16 <= b)
                buf[j] = __ldg(src + v);
        }
#pragma unroll
        for (unsigned j = 0; j < BATCH; j++) {
            const unsigned v = v0 + j * nt;
            const unsigned long long va = a0 + 16ull * v;
            if (v >= nv)
                break;
            if (va >= a && va + 16 <= b) {
                *reinterpret_cast<uint4 *>(sm + stage_swz(16 * v, sh, msk)) = buf[j];
            } else {
                for (unsigned k = 0; k < RD_V; k++) {
                    const unsigned long long ea = va + k * sizeof(elem_t);
                    if (ea >= a && ea < b)
                        *reinterpret_cast<elem_t *>(
                            sm + stage_swz(16 * v + k * (unsigned)sizeof(elem_t), sh, msk)) =
                            __ldg(reinterpret_cast<const elem_t *>(ea));
                }
            }
        }
    }
    return (unsigned)(a - a0);
}

// Calls visit(element, index in the run, position in its vector) for the
// elements of vector j of the T-element run whose byte 0 is byte b0 of the
// stage at sm (see stage_swz for sh, msk; ALIGNED: sm is 16-byte aligned,
// so that b0 alone tells a vector's alignment): one 16-byte read where the
// vector is whole and aligned, else element by element, in order either
// way.
template <bool ALIGNED = false, class Visit>
__device__ __forceinline__ void vec_visit(const unsigned char *sm, unsigned b0, unsigned T,
                                          unsigned j, unsigned sh, unsigned msk, Visit visit)
{
    const unsigned e0 = j * RD_V;
    if (e0 >= T)
        return;
    const unsigned b = b0 + e0 * (unsigned)sizeof(elem_t);
    if (e0 + RD_V <= T &&
        (ALIGNED ? b & 15 : (unsigned)((unsigned long long)(sm + b) & 15)) == 0) {
        elem_vec w;
        w.raw = *reinterpret_cast<const uint4 *>(sm + stage_swz(b, sh, msk));
#pragma unroll
        for (unsigned k = 0; k < RD_V; k++)
            visit(w.e[k], e0 + k, k);
    } else {
#pragma unroll
        for (unsigned k = 0; k < RD_V; k++)
            if (e0 + k < T)
                visit(*reinterpret_cast<const elem_t *>(
                          sm + stage_swz(b + k * (unsigned)sizeof(elem_t), sh, msk)),
                      e0 + k, k);
    }
}

// Calls visit(element, index in the run, position in its vector) for the
// elements lane l of a P-lane group owns of the T-element run at s (shared
// memory), in the sub-tile order: vectors l, l + 32, ..., each in order.
template <class Visit>
__device__ __forceinline__ void rows_visit(const elem_t *s, unsigned T, unsigned P, unsigned l,
                                           bool valid, Visit visit)
{
    if (!valid)
        return;
    for (unsigned j = l; j * RD_V < T; j += P)
        vec_visit(reinterpret_cast<const unsigned char *>(s), 0, T, j, 5, 0, visit);
}

// Stages the runs of this block of a short-run kernel in sm: false where
// the block has none, else their first unit index in *i0 and their count in
// *nr, the offset of the first run's byte 0 in *off, and stage_elems's
// swizzle in *sh, *msk (where swz and a run is an even number of vectors:
// the XOR by the vector index's bits above the run length's lowest set bit,
// so that threads reading neighbouring runs hit distinct banks; else none).
__device__ __forceinline__ bool rows_stage(const elem_t *__restrict__ x, const ax_gpu_args &a,
                                           unsigned char *sm, bool swz, rd_u64 *i0,
                                           unsigned *nr, unsigned *off, unsigned *sh,
                                           unsigned *msk)
{
    const unsigned T = (unsigned)a.T, rb = rows_per_block(a.T);
    *i0 = (rd_u64)blockIdx.x * rb;
    if (*i0 >= a.nunits)
        return false;
    *nr = (unsigned)(a.nunits - *i0 < rb ? a.nunits - *i0 : rb);
    const unsigned rowb = T * (unsigned)sizeof(elem_t);
    const bool even = swz && rowb % 32 == 0;
    *sh = even ? 4 + (__ffs(rowb >> 4) - 1) : 5;
    *msk = even ? 0x70 : 0;
    *off = stage_elems<4>(x + ((a.u0 + *i0) * a.T - a.e0), (rd_u64)*nr * T, sm, threadIdx.x,
                          AX_THREADS, *sh, *msk);
    __syncthreads();
    return true;
}

// The short-run kernels' body: KIND 0 moments, 1 extrema, 2 variance
// partials of the block's runs, written at their unit indices.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void rows_units(const elem_t *__restrict__ x, const ax_gpu_args &a,
                                           unsigned char *sm)
{
    const unsigned T = (unsigned)a.T;
    rd_u64 i0;
    unsigned nr, off, sh, msk;
    if (!rows_stage(x, a, sm, false, &i0, &nr, &off, &sh, &msk))
        return;
    const elem_t *rows = reinterpret_cast<const elem_t *>(sm + off);
    const unsigned nvec = (T + RD_V - 1) / RD_V;
    unsigned P = 1;
    while (P < nvec && P < 32)
        P *= 2;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, G = 32 / P;
    const unsigned l = lane & (P - 1);
    for (unsigned base = warp * G; base < nr; base += RD_WARPS * G) {
        const unsigned r = base + lane / P;
        const bool valid = r < nr;
        const elem_t *s = rows + (rd_u64)(valid ? r : 0) * T;
        const rd_u64 out = i0 + r;
        if (KIND == 0) {
            lane_moments m = lane_moments_empty();
            rows_visit(s, T, P, l, valid,
                       [&](elem_t v, unsigned, unsigned k) { lane_add<SKIPNAN, SUMSQ>(m, v, k); });
            double fs = -0.0, fq = -0.0;
            rd_u128 is = 0, iq = 0;
            unsigned cnt = m.count;
#if RD_FLOAT || RD_WIDE_INT
            if (SUMSQ)
                fq = rd_lane_fold<RD_FACC>(m.fsq);
#endif
#if RD_FLOAT
            fs = rd_lane_fold<RD_FACC>(m.fsum);
#else
            is = m.isum;
#if !RD_WIDE_INT
            iq = m.isq;
#endif
#endif
            for (unsigned h = P / 2; h >= 1; h /= 2) {
                fs = rd_add(fs, __shfl_xor_sync(RD_FULL_MASK, fs, h));
                if (SUMSQ)
                    fq = rd_add(fq, __shfl_xor_sync(RD_FULL_MASK, fq, h));
#if !RD_FLOAT
                is += ((rd_u128)__shfl_xor_sync(RD_FULL_MASK, (rd_u64)(is >> 64), h) << 64) |
                      __shfl_xor_sync(RD_FULL_MASK, (rd_u64)is, h);
                if (SUMSQ)
                    iq += ((rd_u128)__shfl_xor_sync(RD_FULL_MASK, (rd_u64)(iq >> 64), h) << 64) |
                          __shfl_xor_sync(RD_FULL_MASK, (rd_u64)iq, h);
#endif
                cnt += __shfl_xor_sync(RD_FULL_MASK, cnt, h);
            }
            if (valid && l == 0)
                store_moments(a, out, fs, fq, is, iq, cnt);
        } else if (KIND == 1) {
            rd_extrema e = rd_extrema_empty();
            rows_visit(s, T, P, l, valid,
                       [&](elem_t v, unsigned i, unsigned) { lane_extrema<SKIPNAN>(e, v, i); });
            for (unsigned h = P / 2; h >= 1; h /= 2) {
                rd_extrema o;
                o.min_key = __shfl_xor_sync(RD_FULL_MASK, e.min_key, h);
                o.min_idx = __shfl_xor_sync(RD_FULL_MASK, e.min_idx, h);
                o.max_key = __shfl_xor_sync(RD_FULL_MASK, e.max_key, h);
                o.max_idx = __shfl_xor_sync(RD_FULL_MASK, e.max_idx, h);
                rd_extrema_merge(&e, &o);
            }
            if (valid && l == 0)
                ((rd_extrema *)a.extrema)[out] = e;
        } else {
            rd_var_acc acc[RD_V];
#pragma unroll
            for (unsigned k = 0; k < RD_V; k++)
                acc[k] = rd_var_acc_empty();
            rows_visit(s, T, P, l, valid,
                       [&](elem_t v, unsigned, unsigned k) { lane_var<SKIPNAN>(acc, v, k); });
            rd_var p[RD_V];
#pragma unroll
            for (unsigned k = 0; k < RD_V; k++)
                p[k] = rd_var_of_acc(acc[k]);
#pragma unroll
            for (unsigned h = 1; h < RD_V; h *= 2)
#pragma unroll
                for (unsigned k = 0; k < RD_V; k += 2 * h)
                    p[k] = rd_var_merge(p[k], p[k + h]);
            rd_var v = p[0];
            for (unsigned h = P / 2; h >= 1; h /= 2)
                v = rd_var_merge(v, shfl_var(v, h));
            if (valid && l == 0)
                ((rd_var *)a.var)[out] = v;
        }
    }
}

// Runs of at most 32 vectors (T <= 32 * RD_V) take a thread each: the
// thread computes the whole sub-tile order of its run in registers. Lane l
// of the order holds the run's vector l (or nothing past the run's end, the
// identity of every tree), so the halving tree over the lanes below P (the
// power of two >= the run's vectors; the levels above add identities) is the
// pairwise tree over the vectors taken in the bit-reversed order of their
// log2(P)-bit indices, which a binary counter folds with no shuffle.

// The part of kind KIND (0 moments, 1 extrema) of one run of T <= 32 * RD_V
// elements staged at byte b0 of sm, computed by one thread and written as
// unit `out`; the loop over the vectors unrolled U times.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned U>
__device__ __forceinline__ void lane_run(const unsigned char *sm, unsigned b0, unsigned T,
                                         unsigned sh, unsigned msk, const ax_gpu_args &a,
                                         rd_u64 out)
{
    static_assert(KIND == 0 || KIND == 1, "moments or extrema");
    const unsigned nvec = (T + RD_V - 1) / RD_V;
    if (KIND == 1) { // extrema are associative: the elements in index order
        rd_extrema e = rd_extrema_empty();
        for (unsigned j = 0; j < nvec; j++)
            vec_visit<true>(sm, b0, T, j, sh, msk, [&](elem_t v, unsigned i, unsigned) {
                lane_extrema<SKIPNAN>(e, v, i);
            });
        ((rd_extrema *)a.extrema)[out] = e;
        return;
    }
    const unsigned lg = nvec > 1 ? 32 - __clz(nvec - 1) : 0; // P = 2^lg
    lane_moments m = lane_moments_empty(); // the order-free sums and the count
    double sfs[5], sfq[5], fs = -0.0, fq = -0.0;
#pragma unroll(U)
    for (unsigned i = 0; i < 32; i++) { // leaf i: the lane of vector j, bits reversed
        if (i >> lg)
            break;
        const unsigned j = lg ? __brev(i) >> (32 - lg) : 0;
#pragma unroll
        for (unsigned k = 0; k < RD_FACC; k++)
            m.fsum[k] = m.fsq[k] = -0.0;
        vec_visit<true>(sm, b0, T, j, sh, msk, [&](elem_t x, unsigned, unsigned k) {
            lane_add<SKIPNAN, SUMSQ>(m, x, k);
        });
        double lfs = -0.0, lfq = -0.0;
#if RD_FLOAT
        lfs = rd_lane_fold<RD_FACC>(m.fsum);
#endif
#if RD_FLOAT || RD_WIDE_INT
        if (SUMSQ)
            lfq = rd_lane_fold<RD_FACC>(m.fsq);
#endif
        // the binary counter: slot l holds the pending subtree of 2^l leaves (no
        // early exit: an unrolled loop keeps the slots in registers)
        bool done = false;
#pragma unroll
        for (unsigned l = 0; l < 5; l++) {
            const bool right = (i >> l) & 1;
            if (!done && !right) {
                sfs[l] = lfs;
                sfq[l] = lfq;
            } else if (!done) {
                lfs = rd_add(sfs[l], lfs);
                if (SUMSQ)
                    lfq = rd_add(sfq[l], lfq);
            }
            done = done || !right;
        }
        fs = lfs;
        fq = lfq;
    }
#if RD_FLOAT
    store_moments(a, out, fs, fq, 0, 0, m.count);
#elif RD_WIDE_INT
    store_moments(a, out, fs, fq, m.isum, 0, m.count);
#else
    store_moments(a, out, fs, fq, m.isum, m.isq, m.count);
#endif
}

// The moments or extrema of runs of at most 32 vectors: the block stages
// ax_rows_bytes(T * size) / (T * size) whole runs as rows_units does, permuted
// (rows_stage), then thread r reduces run r (lane_run, its loop unrolled U
// times).
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned U = 32>
__device__ __forceinline__ void rows_lane(const elem_t *__restrict__ x, const ax_gpu_args &a,
                                          unsigned char *sm)
{
    const unsigned T = (unsigned)a.T, rowb = T * (unsigned)sizeof(elem_t);
    rd_u64 i0;
    unsigned nr, off, sh, msk;
    if (!rows_stage(x, a, sm, true, &i0, &nr, &off, &sh, &msk))
        return;
    for (unsigned r = threadIdx.x; r < nr; r += AX_THREADS)
        lane_run<KIND, SKIPNAN, SUMSQ, U>(sm, off + r * rowb, T, sh, msk, a, i0 + r);
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
    bool done = false; // no early exit: the loop unrolls whole, the slots stay registers
#pragma unroll
    for (unsigned l = 0; l < AX_FOLD_MAX; l++) {
        const bool right = (k >> l) & 1;
        if (!done && !right) {
            f.fs[l] = fs;
            f.fq[l] = fq;
            if (v)
                f.v[l] = pv;
        } else if (!done) {
            fs = rd_add(f.fs[l], fs);
            fq = rd_add(f.fq[l], fq);
            if (v)
                pv = rd_var_merge(f.v[l], pv);
        }
        done = done || !right;
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

// One block's part of one column (the fields of kind KIND: 0 moments, 1
// extrema, 2 variance partial).
struct blk_part {
    double fs, fq;
    rd_u128 is, iq;
    rd_u64 cnt;
    rd_extrema e;
    rd_var v;
};

// Loads the rows elements of one column of one block at p, stride apart
// (global memory where GLOBAL, else shared), every load in flight before
// the first is used.
template <bool GLOBAL>
__device__ __forceinline__ void block_load(const elem_t *p, rd_u64 stride, unsigned rows,
                                           elem_t (&buf)[RD_AXIS_BLOCK])
{
#pragma unroll
    for (unsigned r = 0; r < RD_AXIS_BLOCK; r++)
        buf[r] = r < rows ? (GLOBAL ? ax_load(p + r * stride) : p[r * stride]) : elem_t(0);
}

// The part of one column of one block, built element by element in row
// order: sums and squares added from -0.0, the variance by the element
// step from the empty partial, extrema indexed by each element's stage-2
// index.
template <int KIND, bool SKIPNAN, bool SUMSQ>
struct blk_acc {
    blk_part b;
    rd_var_acc acc;

    __device__ __forceinline__ blk_acc() : acc(rd_var_acc_empty())
    {
        b.fs = b.fq = -0.0;
        b.is = b.iq = 0;
        b.cnt = 0;
        b.e = rd_extrema_empty();
    }

    // Adds element v, of stage-2 index j, after those added before.
    __device__ __forceinline__ void step(const elem_t v, rd_u64 j)
    {
        if (KIND == 1) {
            lane_extrema<SKIPNAN>(b.e, v, j);
            return;
        }
        if (SKIPNAN && elem_isnan(v))
            return;
#if RD_FLOAT
        const double d = elem_double(v);
        if (KIND == 0) {
            b.fs = rd_add(b.fs, d);
            if (SUMSQ)
                b.fq = rd_add(b.fq, d * d);
        }
#else
        const elem_t w = elem_int(v);
        const double d = (double)w;
        if (KIND == 0) {
#if RD_SIGNED
            b.is += (rd_u128)(__int128)(rd_i64)w;
#else
            b.is += (rd_u128)(rd_u64)w;
#endif
            if (SUMSQ) {
#if RD_WIDE_INT
                b.fq = rd_add(b.fq, d * d);
#elif RD_SIGNED
                b.iq += (rd_u128)(rd_u64)((rd_i64)w * (rd_i64)w);
#else
                b.iq += (rd_u128)((rd_u64)w * (rd_u64)w);
#endif
            }
        }
#endif
        b.cnt++;
        if (KIND == 2)
            rd_var_step(&acc, d);
    }

    // The part of the elements added.
    __device__ __forceinline__ blk_part part()
    {
        b.v = rd_var_of_acc(acc);
        return b;
    }
};

// The part of one column of one block from its rows elements in buf, in
// row order from j0 (the stage-2 index of the first row; blk_acc).
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ blk_part block_sum(const elem_t (&buf)[RD_AXIS_BLOCK], unsigned rows,
                                              rd_u64 j0)
{
    blk_acc<KIND, SKIPNAN, SUMSQ> s;
#pragma unroll
    for (unsigned r = 0; r < RD_AXIS_BLOCK; r++) {
        if (r >= rows)
            break;
        s.step(buf[r], j0 + r);
    }
    return s.part();
}

// The part of one column of one block: its rows elements at p, stride apart
// (block_load, then block_sum).
template <int KIND, bool SKIPNAN, bool SUMSQ, bool GLOBAL>
__device__ __forceinline__ blk_part block_part(const elem_t *p, rd_u64 stride, unsigned rows,
                                               rd_u64 j0)
{
    elem_t buf[RD_AXIS_BLOCK];
    block_load<GLOBAL>(p, stride, rows, buf);
    return block_sum<KIND, SKIPNAN, SUMSQ>(buf, rows, j0);
}

// Writes part b (the fields of kind KIND) as part o of a's arrays.
template <int KIND>
__device__ __forceinline__ void store_part(const ax_gpu_args &a, rd_u64 o, const blk_part &b)
{
    if (KIND == 0)
        store_moments(a, o, b.fs, b.fq, b.is, b.iq, b.cnt);
    else if (KIND == 1)
        ((rd_extrema *)a.extrema)[o] = b.e;
    else
        ((rd_var *)a.var)[o] = b.v;
}

// An entry's fold of its blocks' parts, block k after block k - 1: float
// sums and variance partials by a binary counter (slot l: the pending
// subtree of 2^l blocks; the pairwise tree over the 2^level blocks),
// counts and exact sums added, extrema merged; SLOTS levels held (a fold
// of at most 2^(SLOTS - 1) blocks). Every slot index is a constant of an
// unrolled loop, so the slots stay in registers.
template <int KIND, bool SUMSQ, unsigned SLOTS = AX_FOLD_MAX>
struct blk_fold {
    double fs[SLOTS], fq[SLOTS];
    rd_var v[SLOTS];
    rd_u128 is, iq;
    rd_u64 cnt;
    rd_extrema e;

    __device__ __forceinline__ blk_fold() : is(0), iq(0), cnt(0), e(rd_extrema_empty()) {}

    // Adds the part of blocks [k, k + 2^lev) (a subtree: k a multiple of
    // 2^lev; lev 0: block k's part).
    __device__ __forceinline__ void push(rd_u64 k, const blk_part &b, unsigned lev = 0)
    {
        if (KIND == 1) {
            rd_extrema_merge(&e, &b.e);
            return;
        }
        if (KIND == 0) {
            is += b.is;
            iq += b.iq;
            cnt += b.cnt;
        }
        double s = b.fs, q = b.fq;
        rd_var pv = b.v;
        bool done = false; // no early exit: the loop unrolls whole, the slots stay registers
#pragma unroll
        for (unsigned l = 0; l < SLOTS; l++) {
            if (l < lev)
                continue; // k's bits below lev are 0: no slots of smaller subtrees
            const bool right = (k >> l) & 1;
            if (!done && !right) {
                if (KIND == 0) {
                    fs[l] = s;
                    if (SUMSQ)
                        fq[l] = q;
                } else {
                    v[l] = pv;
                }
            } else if (!done) {
                if (KIND == 0) {
                    s = rd_add(fs[l], s);
                    if (SUMSQ)
                        q = rd_add(fq[l], q);
                } else {
                    pv = rd_var_merge(v[l], pv);
                }
            }
            done = done || !right;
        }
    }

    // The root of the fold of 2^level blocks as a part (the fields of KIND).
    __device__ __forceinline__ blk_part root(unsigned level) const
    {
        blk_part b;
        b.fs = b.fq = -0.0;
        b.is = is;
        b.iq = iq;
        b.cnt = cnt;
        b.e = e;
        b.v = rd_var_empty();
#pragma unroll
        for (unsigned l = 0; l < SLOTS; l++)
            if (l == level) {
                if (KIND == 0) {
                    b.fs = fs[l];
                    if (SUMSQ)
                        b.fq = fq[l];
                } else if (KIND == 2) {
                    b.v = v[l];
                }
            }
        return b;
    }

    // Writes the root of the fold of 2^level blocks as part o of a's arrays.
    __device__ __forceinline__ void store(const ax_gpu_args &a, rd_u64 o, unsigned level) const
    {
        store_part<KIND>(a, o, root(level));
    }
};

// The part of blocks l's followed by r's (a node of the pairwise tree).
template <int KIND, bool SUMSQ>
__device__ __forceinline__ blk_part blk_combine(const blk_part &l, const blk_part &r)
{
    blk_part o = l;
    if (KIND == 0) {
        o.fs = rd_add(l.fs, r.fs);
        if (SUMSQ)
            o.fq = rd_add(l.fq, r.fq);
        o.is = l.is + r.is;
        o.iq = l.iq + r.iq;
        o.cnt = l.cnt + r.cnt;
    } else if (KIND == 1) {
        rd_extrema_merge(&o.e, &r.e);
    } else {
        o.v = rd_var_merge(l.v, r.v);
    }
    return o;
}

// The first leaf and the level of piece i of the cut of leaves [la, lb)
// into maximal aligned subtrees of at most 2^AX_FOLD_LEVELS leaves (the
// host's ax_chunk_entries in one segment): the rising pieces up to a
// multiple of 2^AX_FOLD_LEVELS (the set bits of the distance, lowest
// first), the whole ones, the falling ones (highest bit first).
__device__ __forceinline__ rd_u64 piece_of(rd_u64 i, rd_u64 la, rd_u64 lb, unsigned *level)
{
    const rd_u64 cap = 1ull << AX_FOLD_LEVELS;
    const rd_u64 A = (la + cap - 1) & ~(cap - 1), B = lb & ~(cap - 1);
    if (A > B) { // inside one window: the greedy cut, at most 2 * AX_FOLD_LEVELS pieces
        rd_u64 at = la;
        for (;;) {
            unsigned k = AX_FOLD_LEVELS;
            while (k && ((at & ((1ull << k) - 1)) || at + (1ull << k) > lb))
                k--;
            if (i-- == 0) {
                *level = k;
                return at;
            }
            at += 1ull << k;
        }
    }
    const rd_u64 d = A - la;
    const unsigned nh = (unsigned)__popcll(d);
    if (i < nh) {
        rd_u64 m = d;
        for (rd_u64 t = 0; t < i; t++)
            m &= m - 1; // the i lowest set bits dropped
        *level = (unsigned)(__ffsll((long long)m) - 1);
        return la + (d - m);
    }
    i -= nh;
    if (i < (B - A) / cap) {
        *level = AX_FOLD_LEVELS;
        return A + i * cap;
    }
    i -= (B - A) / cap;
    rd_u64 m = lb - B, at = B;
    for (rd_u64 t = 0; t < i; t++) {
        const rd_u64 hb = 1ull << (63 - __clzll((long long)m));
        at += hb;
        m -= hb;
    }
    *level = (unsigned)(63 - __clzll((long long)m));
    return at;
}

// Entry i of the chunk: from the list, or cut from one segment's leaves.
__device__ __forceinline__ ax_gpu_entry entry_at(const ax_gpu_args &a, rd_u64 i)
{
    if (a.entries)
        return ((const ax_gpu_entry *)a.entries)[i];
    ax_gpu_entry e;
    e.leaf = piece_of(i, a.leaf0, a.leaf0 + a.nunits, &e.level);
    e.u = a.u0 + (e.leaf - a.leaf0);
    e.pad = 0;
    return e;
}

// Where block unit u starts (element offset in the chunk) and the rows
// from its first to its sweep's end.
__device__ __forceinline__ rd_u64 block_start(const ax_gpu_args &a, rd_u64 u, rd_u64 *left)
{
    const rd_u64 sweep = u / a.blocks_per_sweep;
    const rd_u64 row0 = (u - sweep * a.blocks_per_sweep) * RD_AXIS_BLOCK;
    *left = a.L - row0;
    return (sweep * a.L + row0) * a.C - a.e0;
}

// Where block unit u starts (element offset in the chunk) and its rows.
__device__ __forceinline__ rd_u64 block_unit(const ax_gpu_args &a, rd_u64 u, unsigned *rows)
{
    rd_u64 left;
    const rd_u64 at = block_start(a, u, &left);
    *rows = (unsigned)(left < RD_AXIS_BLOCK ? left : RD_AXIS_BLOCK);
    return at;
}

// Blocks whose loads a thread of the many-column kernels has in flight.
#define AX_COLS_PAIR (sizeof(elem_t) < 8 ? 2 : 1)

// Block entries of many columns (C > 32): thread (i, c) adds column c of
// the 2^level blocks of entry i, neighbouring threads reading neighbouring
// columns of a row (coalesced).
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void block_cols(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    const rd_u64 g = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    if (g >= a.nentries * a.C)
        return;
    const rd_u64 i = g / a.C, c = g - i * a.C;
    const ax_gpu_entry en = entry_at(a, i);
    blk_fold<KIND, SUMSQ> f;
    const rd_u64 n = (rd_u64)1 << en.level;
    for (rd_u64 k = 0; k < n; k += AX_COLS_PAIR) {
        // two blocks' loads in flight for elements under 8 bytes, then their parts in order
        elem_t b0[RD_AXIS_BLOCK], b1[RD_AXIS_BLOCK];
        unsigned r0, r1 = 0;
        const bool two = AX_COLS_PAIR == 2 && k + 1 < n;
        const rd_u64 at0 = block_unit(a, en.u + k, &r0); // sets r0 before the load reads it
        block_load<true>(x + at0 + c, a.C, r0, b0);
        if (two) {
            const rd_u64 at1 = block_unit(a, en.u + k + 1, &r1);
            block_load<true>(x + at1 + c, a.C, r1, b1);
        }
        f.push(k, block_sum<KIND, SKIPNAN, SUMSQ>(b0, r0, (en.leaf + k) * RD_AXIS_BLOCK));
        if (two)
            f.push(k + 1,
                   block_sum<KIND, SKIPNAN, SUMSQ>(b1, r1, (en.leaf + k + 1) * RD_AXIS_BLOCK));
    }
    f.store(a, i * a.C + c, en.level);
}

// V adjacent elements of one row.
template <unsigned V> struct row_elems {
    elem_t e[V];
};

// The V adjacent elements of a row at p: one load of them all where `whole`
// (p aligned to V elements, V = 2 of 4- or 8-byte elements), else element
// by element.
template <unsigned V>
__device__ __forceinline__ row_elems<V> row_load(const elem_t *p, bool whole)
{
    row_elems<V> t;
    if constexpr (V == 2 && sizeof(elem_t) == 4) {
        if (whole) {
            const uint2 u = __ldg(reinterpret_cast<const uint2 *>(p));
            memcpy(&t.e[0], &u.x, 4);
            memcpy(&t.e[1], &u.y, 4);
            return t;
        }
    } else if constexpr (V == 2 && sizeof(elem_t) == 8) {
        if (whole) {
            const ulonglong2 u = __ldg(reinterpret_cast<const ulonglong2 *>(p));
            memcpy(&t.e[0], &u.x, 8);
            memcpy(&t.e[1], &u.y, 8);
            return t;
        }
    }
#pragma unroll
    for (unsigned v = 0; v < V; v++)
        t.e[v] = ax_load(p + v);
    return t;
}

// Block entries of many columns (C > 32), V adjacent columns a thread:
// thread (i, q) adds columns V q .. V q + V - 1 (those below C) of the
// 2^level blocks of entry i, every column's rows and blocks in block_cols's
// order. The entry's blocks are consecutive rows of one sweep: its first
// row is found once and the others are steps of C. B blocks' loads are in
// flight a step; with PIPE the next step's loads are issued before this
// step's sums (two buffers). A row's V elements are one load where C is a
// multiple of V and element 0 of the array lies on a boundary of V
// elements, else element by element. The float32 sums take V 2, B 1, PIPE
// (axk_pairs_*); tests/gpu/bench_axis_cols.cu measures the others.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned V, unsigned B, bool PIPE>
__device__ __forceinline__ void block_cols_vec(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    const rd_u64 g = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    const rd_u64 groups = (a.C + V - 1) / V; // threads an entry
    if (g >= a.nentries * groups)
        return;
    const rd_u64 i = g / groups, c = (g - i * groups) * V, C = a.C;
    const ax_gpu_entry en = entry_at(a, i);
    rd_u64 left; // rows from the entry's first to its sweep's end
    const elem_t *p = x + block_start(a, en.u, &left) + c;
    const bool whole =
        V > 1 && C % V == 0 && ((size_t)x - a.e0 * sizeof(elem_t)) % (V * sizeof(elem_t)) == 0;
    const unsigned ncols = C - c < V ? (unsigned)(C - c) : V; // this thread's columns
    const unsigned n = 1u << en.level, steps = (n + B - 1) / B;
    blk_fold<KIND, SUMSQ> f[V];
    elem_t buf[PIPE ? 2 : 1][B][V][RD_AXIS_BLOCK];
    // fn(h, k, rest) for block k = s B + h of step s (rest: the rows from its
    // first to the sweep's end), with no early exit, so that it unrolls whole
    auto each_block = [&](unsigned s, auto fn) {
#pragma unroll
        for (unsigned h = 0; h < B; h++) {
            const unsigned k = s * B + h;
            if (B == 1 || k < n)
                fn(h, k, left - (rd_u64)k * RD_AXIS_BLOCK);
        }
    };
    // the loads of step s into d (zeros past a block's rows or the columns)
    auto load_step = [&](unsigned s, elem_t (&d)[B][V][RD_AXIS_BLOCK]) {
        each_block(s, [&](unsigned h, unsigned k, rd_u64 rest) {
            const unsigned rows = rest < RD_AXIS_BLOCK ? (unsigned)rest : RD_AXIS_BLOCK;
            const elem_t *q = p + (rd_u64)k * RD_AXIS_BLOCK * C;
#pragma unroll
            for (unsigned r = 0; r < RD_AXIS_BLOCK; r++) {
                row_elems<V> t;
                if (r < rows && (V == 1 || whole || ncols == V)) {
                    t = row_load<V>(q, whole);
                } else {
#pragma unroll
                    for (unsigned v = 0; v < V; v++)
                        t.e[v] = r < rows && v < ncols ? ax_load(q + v) : elem_t(0);
                }
#pragma unroll
                for (unsigned v = 0; v < V; v++)
                    d[h][v][r] = t.e[v];
                q += C;
            }
        });
    };
    // the parts of step s's blocks from d, pushed in block order (a whole
    // block's sum apart, its row count a constant)
    auto sum_step = [&](unsigned s, elem_t (&d)[B][V][RD_AXIS_BLOCK]) {
        each_block(s, [&](unsigned h, unsigned k, rd_u64 rest) {
            const rd_u64 j0 = (en.leaf + k) * RD_AXIS_BLOCK;
#pragma unroll
            for (unsigned v = 0; v < V; v++) {
                if (rest >= RD_AXIS_BLOCK)
                    f[v].push(k, block_sum<KIND, SKIPNAN, SUMSQ>(d[h][v], RD_AXIS_BLOCK, j0));
                else
                    f[v].push(k, block_sum<KIND, SKIPNAN, SUMSQ>(d[h][v], (unsigned)rest, j0));
            }
        });
    };
    if constexpr (PIPE) { // steps in pairs: buffer 0 for even steps, 1 for odd ones
        load_step(0, buf[0]);
        for (unsigned s = 0; s < steps; s += 2) {
            if (s + 1 < steps)
                load_step(s + 1, buf[1]);
            sum_step(s, buf[0]);
            if (s + 1 < steps) {
                if (s + 2 < steps)
                    load_step(s + 2, buf[0]);
                sum_step(s + 1, buf[1]);
            }
        }
    } else {
        for (unsigned s = 0; s < steps; s++) {
            load_step(s, buf[0]);
            sum_step(s, buf[0]);
        }
    }
#pragma unroll
    for (unsigned v = 0; v < V; v++)
        if (v < ncols)
            f[v].store(a, i * C + c + v, en.level);
}

// Block entries of many columns (C > 32), an entry's blocks shared by S
// threads: a GPU block takes entry blockIdx.x / tiles and AX_THREADS / S of
// its columns; thread (t, q) adds column q of the tile over the t-th of S
// aligned runs of the entry's blocks (a subtree of the entry's tree; PAIR
// blocks' loads in flight at a time), and thread (0, q) combines the S
// subtrees by the pairwise tree through shared memory.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned S, unsigned PAIR>
__device__ __forceinline__ void block_cols_split(const elem_t *__restrict__ x,
                                                 const ax_gpu_args &a)
{
    constexpr unsigned W = AX_THREADS / S, LS = S >= 16 ? 4 : S >= 8 ? 3 : S >= 4 ? 2 : 1;
    static_assert(S >= 2 && S <= 16 && (S & (S - 1)) == 0, "S: 2, 4, 8 or 16");
    __shared__ blk_part sp[AX_THREADS];
    const rd_u64 tiles = (a.C + W - 1) / W;
    const rd_u64 i = blockIdx.x / tiles;
    const unsigned t = threadIdx.x / W, q = threadIdx.x - t * W;
    const rd_u64 c = (blockIdx.x - i * tiles) * W + q;
    const ax_gpu_entry en = entry_at(a, i);
    const unsigned ls = en.level > LS ? LS : en.level, lt = en.level - ls;
    const bool mine = t < (1u << ls) && c < a.C;
    blk_part part;
    if (mine) {
        const rd_u64 n = (rd_u64)1 << lt, k0 = (rd_u64)t << lt;
        // an entry's blocks are consecutive rows of one sweep: 16 rows of C apart
        unsigned rows0;
        const elem_t *p = x + block_unit(a, en.u + k0, &rows0) + c;
        const rd_u64 row0 = (en.leaf + k0) * RD_AXIS_BLOCK, step = RD_AXIS_BLOCK * a.C;
        blk_fold<KIND, SUMSQ, AX_FOLD_MAX - LS> f;
#pragma unroll 1
        for (rd_u64 k = 0; k < n; k += PAIR) {
            elem_t b[PAIR][RD_AXIS_BLOCK];
            unsigned rows[PAIR];
#pragma unroll
            for (unsigned h = 0; h < PAIR; h++) {
                const rd_u64 r = row0 + (k + h) * RD_AXIS_BLOCK;
                rows[h] = r < a.L ? (a.L - r < RD_AXIS_BLOCK ? (unsigned)(a.L - r) : RD_AXIS_BLOCK)
                                  : 0;
                if (h == 0 || k + h < n)
                    block_load<true>(p + (k + h) * step, a.C, rows[h], b[h]);
            }
#pragma unroll
            for (unsigned h = 0; h < PAIR; h++)
                if (h == 0 || k + h < n)
                    f.push(k + h, block_sum<KIND, SKIPNAN, SUMSQ>(b[h], rows[h],
                                                                  row0 + (k + h) * RD_AXIS_BLOCK));
        }
        part = f.root(lt);
        sp[threadIdx.x] = part;
    }
    __syncthreads();
    if (t != 0 || !mine)
        return;
    for (unsigned h = 1; h < (1u << ls); h *= 2) // the subtrees' pairwise tree, in place
        for (unsigned u = 0; u + h < (1u << ls); u += 2 * h)
            sp[u * W + q] = blk_combine<KIND, SUMSQ>(sp[u * W + q], sp[(u + h) * W + q]);
    store_part<KIND>(a, i * a.C + c, sp[q]);
}

// Block entries of many columns (C > 32): a thread per entry and column
// (block_cols) or S = AX_COLS_SPLIT threads an entry (block_cols_split),
// as axis_args.h picks for the type and kind.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void block_cols_any(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    constexpr unsigned S = AX_COLS_SPLIT(sizeof(elem_t), KIND, SUMSQ);
#else
    constexpr unsigned S = 1;
#endif
    if constexpr (S > 1)
        block_cols_split<KIND, SKIPNAN, SUMSQ, S, KIND == 2 ? 1 : AX_COLS_PAIR>(x, a);
    else
        block_cols<KIND, SKIPNAN, SUMSQ>(x, a);
}

// A block part from lane src of the warp (the fields of kind KIND).
template <int KIND, bool SUMSQ>
__device__ __forceinline__ blk_part shfl_part(const blk_part &b, unsigned src)
{
    blk_part o = b;
    if (KIND == 0) {
#if RD_FLOAT
        o.fs = __shfl_sync(RD_FULL_MASK, b.fs, src);
#else
        o.is = ((rd_u128)__shfl_sync(RD_FULL_MASK, (rd_u64)(b.is >> 64), src) << 64) |
               __shfl_sync(RD_FULL_MASK, (rd_u64)b.is, src);
#endif
        if (SUMSQ) {
#if RD_FLOAT || RD_WIDE_INT
            o.fq = __shfl_sync(RD_FULL_MASK, b.fq, src);
#else
            o.iq = ((rd_u128)__shfl_sync(RD_FULL_MASK, (rd_u64)(b.iq >> 64), src) << 64) |
                   __shfl_sync(RD_FULL_MASK, (rd_u64)b.iq, src);
#endif
        }
        o.cnt = __shfl_sync(RD_FULL_MASK, b.cnt, src);
    } else if (KIND == 1) {
        o.e.min_key = __shfl_sync(RD_FULL_MASK, b.e.min_key, src);
        o.e.min_idx = __shfl_sync(RD_FULL_MASK, b.e.min_idx, src);
        o.e.max_key = __shfl_sync(RD_FULL_MASK, b.e.max_key, src);
        o.e.max_idx = __shfl_sync(RD_FULL_MASK, b.e.max_idx, src);
    } else {
        o.v.n = __shfl_sync(RD_FULL_MASK, b.v.n, src);
        o.v.k = __shfl_sync(RD_FULL_MASK, b.v.k, src);
        o.v.s1.hi = __shfl_sync(RD_FULL_MASK, b.v.s1.hi, src);
        o.v.s1.lo = __shfl_sync(RD_FULL_MASK, b.v.s1.lo, src);
        o.v.s2.hi = __shfl_sync(RD_FULL_MASK, b.v.s2.hi, src);
        o.v.s2.lo = __shfl_sync(RD_FULL_MASK, b.v.s2.lo, src);
    }
    return o;
}

// Bytes of an entry's rows a warp of the few-column kernels stages at a
// time (32 column-blocks at the most: a block of 16 rows of 32 float64 is
// 4 KiB).
#define AX_COLS_STAGE 4096u

// Vectors a lane of block_narrow stages a round, at most, and the bytes of
// a warp's stage in the few-column kernels: the larger of block_few's
// (AX_COLS_STAGE and 32 of slack) and 32 lanes' rounds of AX_NARROW_VECS
// vectors (a block of 8 warps then holds 48 KiB, the most a kernel's own
// shared memory may be).
#define AX_NARROW_VECS 12u
#define AX_FEW_STAGE (32u * AX_NARROW_VECS * 16u > AX_COLS_STAGE + 32u ? 32u * AX_NARROW_VECS * 16u \
                                                                       : AX_COLS_STAGE + 32u)

// Where vector j of lane q's round of VR vectors lies in block_narrow's
// stage: q * VR + (j ^ narrow_swz<VR>(q)). The XOR keeps j below VR and
// puts the vectors that 8 lanes (a quarter-warp's 16-byte accesses) read
// at the same j, or write at consecutive places, on 8 distinct 16-byte
// bank groups, so that neither the stores nor the reads conflict.
template <unsigned VR> __device__ __forceinline__ unsigned narrow_swz(unsigned q)
{
    return VR % 2 ? 0u : VR % 4 == 2 ? (q >> 2) & 1u : VR % 8 == 4 ? (q >> 1) & 3u : q & 7u;
}

// Rows of a block that a round of block_narrow stages for each lane: the
// most of 16, 8, 4, 2 whose bytes are whole vectors, at most
// AX_NARROW_VECS of them.
template <unsigned CC> __host__ __device__ constexpr unsigned narrow_rows()
{
    return RD_AXIS_BLOCK * CC * sizeof(elem_t) <= AX_NARROW_VECS * 16 ? RD_AXIS_BLOCK
           : 8 * CC * sizeof(elem_t) <= AX_NARROW_VECS * 16         ? 8u
           : 4 * CC * sizeof(elem_t) <= AX_NARROW_VECS * 16         ? 4u
                                                                      : 2u;
}

// The 16-byte vector j of row rb onwards of an entry's block k (CC
// columns), counted from the entry's first: 32 bits hold it (at most 64
// blocks of 64 vectors).
template <unsigned CC>
__device__ __forceinline__ unsigned narrow_vec(unsigned k, unsigned rb, unsigned j)
{
    return k * (RD_AXIS_BLOCK * CC * (unsigned)sizeof(elem_t) / 16) +
           rb * CC * (unsigned)sizeof(elem_t) / 16 + j;
}

// Loads round (g, rb) of block_narrow into v: the warp's vector t * 32 +
// lane is vector j of the round's rows of lane q (its block q * G + g),
// loaded where that block is whole (of the entry's first `whole`) and q is
// one of the nl lanes with blocks, else zeros.
template <unsigned CC, unsigned VR>
__device__ __forceinline__ void narrow_round(uint4 *v, const uint4 *__restrict__ src,
                                             unsigned lane, unsigned G, unsigned nl,
                                             unsigned whole, unsigned g, unsigned rb)
{
#pragma unroll
    for (unsigned t = 0; t < VR; t++) {
        const unsigned m = t * 32 + lane, q = m / VR, j = m - q * VR, k = q * G + g;
        if (q < nl && k < whole)
            v[t] = __ldg(src + narrow_vec<CC>(k, rb, j));
        else
            v[t] = make_uint4(0u, 0u, 0u, 0u);
    }
}

// Block entry i of CC columns (en, its first block at element at, nrows
// rows to its sweep's end) whose first byte is 16-byte aligned: lane l
// adds its G = 2^level / 32 consecutive blocks (one, and only the first
// 2^level lanes, for smaller entries), every column in row order; a lane's
// blocks meet by the pairwise tree, then the lanes' by the tree over
// shuffles, and lane 0 writes the entry's part of each column. Whole blocks
// come in rounds of RB rows. For sums and variance the warp loads the 32
// lanes' rows of a round with 16-byte loads of consecutive vectors (whole
// sectors an instruction), stores them in its stage (narrow_swz: no bank
// conflicts) and loads the next round while its lanes add this one: float32
// (N, 3) runs at 1.00 of the device copy where a lane's own 16-byte loads,
// each on a line of its own, left the L1 the bound at 0.77. Extrema, bound
// by their instructions, and sums of squares of 12-vector rounds of
// elements narrower than 8 bytes read straight from global memory: their
// registers hold no round in flight without spilling (float32 (N, 3)
// squares 0.59 staged against 0.72). A short last block is read element by
// element by its lane.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned CC>
__device__ __forceinline__ void block_narrow(const elem_t *__restrict__ x, const ax_gpu_args &a,
                                             const ax_gpu_entry &en, rd_u64 i, rd_u64 at,
                                             unsigned nrows, uint4 *stage)
{
    constexpr unsigned RB = narrow_rows<CC>(), VR = RB * CC * sizeof(elem_t) / 16;
    constexpr bool STAGED = KIND != 1 && !(SUMSQ && sizeof(elem_t) < 8 && VR > 8);
    static_assert(RB * CC * sizeof(elem_t) % 16 == 0, "a round's rows are whole vectors");
    static_assert(32 * VR * 16 <= AX_FEW_STAGE, "a round fits the warp's stage");
    static_assert(AX_FOLD_LEVELS <= 6, "a lane's blocks are at most two, which meet once");
    const unsigned lane = threadIdx.x & 31, n = 1u << en.level;
    const unsigned G = n > 32 ? n / 32 : 1, nl = n > 32 ? 32u : n;
    const unsigned whole = nrows / RD_AXIS_BLOCK; // blocks with all their rows
    const uint4 *src = reinterpret_cast<const uint4 *>(x + at);
    uint4 v[VR];
    if (STAGED)
        narrow_round<CC, VR>(v, src, lane, G, nl, whole, 0, 0);
    blk_part b[CC];
    for (unsigned g = 0; g < G; g++) {
        const unsigned k = lane * G + g, r0 = k * RD_AXIS_BLOCK;
        const unsigned rk = lane < nl && r0 < nrows
                                ? (nrows - r0 < RD_AXIS_BLOCK ? nrows - r0 : RD_AXIS_BLOCK)
                                : 0;
        const rd_u64 j0 = (en.leaf + k) * RD_AXIS_BLOCK;
        blk_acc<KIND, SKIPNAN, SUMSQ> s[CC];
#pragma unroll
        for (unsigned rb = 0; rb < RD_AXIS_BLOCK; rb += RB) {
            elem_vec w[VR];
            if (STAGED) {
                __syncwarp();
#pragma unroll
                for (unsigned t = 0; t < VR; t++) {
                    const unsigned m = t * 32 + lane, q = m / VR;
                    stage[q * VR + ((m - q * VR) ^ narrow_swz<VR>(q))] = v[t];
                }
                __syncwarp();
                if (rb + RB < RD_AXIS_BLOCK)
                    narrow_round<CC, VR>(v, src, lane, G, nl, whole, g, rb + RB);
                else if (g + 1 < G)
                    narrow_round<CC, VR>(v, src, lane, G, nl, whole, g + 1, 0);
            }
            if (rk == RD_AXIS_BLOCK) {
#pragma unroll
                for (unsigned t = 0; t < VR; t++)
                    w[t].raw = STAGED ? stage[lane * VR + (t ^ narrow_swz<VR>(lane))]
                                      : __ldg(src + narrow_vec<CC>(k, rb, t));
#pragma unroll
                for (unsigned r = 0; r < RB; r++)
#pragma unroll
                    for (unsigned c = 0; c < CC; c++)
                        s[c].step(w[(r * CC + c) / RD_V].e[(r * CC + c) % RD_V], j0 + rb + r);
            }
        }
        if (rk && rk < RD_AXIS_BLOCK) {
            const elem_t *p = x + at + (rd_u64)r0 * CC;
#pragma unroll 1
            for (unsigned r = 0; r < rk; r++)
#pragma unroll
                for (unsigned c = 0; c < CC; c++)
                    s[c].step(ax_load(p + r * CC + c), j0 + r);
        }
#pragma unroll
        for (unsigned c = 0; c < CC; c++)
            b[c] = g == 0 ? s[c].part() : blk_combine<KIND, SUMSQ>(b[c], s[c].part());
    }
    for (unsigned h = 1; h < nl; h *= 2)
#pragma unroll
        for (unsigned c = 0; c < CC; c++) {
            const blk_part o = shfl_part<KIND, SUMSQ>(b[c], (lane + h) & 31);
            if (lane % (2 * h) == 0)
                b[c] = blk_combine<KIND, SUMSQ>(b[c], o);
        }
    if (lane == 0)
#pragma unroll
        for (unsigned c = 0; c < CC; c++)
            store_part<KIND>(a, i * CC + c, b[c]);
}

// Block entries of few columns (C <= 32; 2 to 4 columns by block_narrow
// where the entry starts 16-byte aligned): a warp per entry stages the rows
// of as many of its blocks as AX_COLS_STAGE bytes hold in shared memory
// (their bytes are contiguous: 16-byte loads, 8 in flight per lane), then
// in rounds of pb blocks (the largest power of two <= 32 / C, aligned) lane
// q adds column q % C of block q / C, the round's blocks of a column are
// combined by the pairwise tree over shuffles, and lane c pushes the
// round's subtree into its column's fold.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void block_few(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    __shared__ __align__(16) unsigned char sm[RD_WARPS][AX_FEW_STAGE];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const rd_u64 i = (rd_u64)blockIdx.x * RD_WARPS + warp;
    if (i >= a.nentries)
        return; // the whole warp
    const ax_gpu_entry en = entry_at(a, i);
    const unsigned C = (unsigned)a.C, n = 1u << en.level;
    unsigned pb = 1; // blocks a round adds: the largest power of two <= 32 / C
    while (2 * pb * C <= 32)
        pb *= 2;
    unsigned rows0; // the first block's rows (nrows below counts the entry's)
    const rd_u64 at = block_unit(a, en.u, &rows0);
    (void)rows0;
    const rd_u64 row_first = (en.u % a.blocks_per_sweep) * RD_AXIS_BLOCK;
    const rd_u64 row_end = row_first + (rd_u64)n * RD_AXIS_BLOCK < a.L
                               ? row_first + (rd_u64)n * RD_AXIS_BLOCK : a.L;
    const unsigned nrows = (unsigned)(row_end - row_first);
    if (((unsigned long long)(x + at) & 15) == 0) {
        switch (C) {
        case 2:
            block_narrow<KIND, SKIPNAN, SUMSQ, 2>(x, a, en, i, at, nrows,
                                                    reinterpret_cast<uint4 *>(sm[warp]));
            return;
        case 3:
            block_narrow<KIND, SKIPNAN, SUMSQ, 3>(x, a, en, i, at, nrows,
                                                    reinterpret_cast<uint4 *>(sm[warp]));
            return;
        case 4:
            block_narrow<KIND, SKIPNAN, SUMSQ, 4>(x, a, en, i, at, nrows,
                                                    reinterpret_cast<uint4 *>(sm[warp]));
            return;
        }
    }
    blk_fold<KIND, SUMSQ> f;
    // a stage holds whole rounds of pb blocks, as many as AX_COLS_STAGE bytes take
    const unsigned sb = AX_COLS_STAGE / (RD_AXIS_BLOCK * C * (unsigned)sizeof(elem_t)) / pb * pb;
    const unsigned kb = lane / C, c = lane - kb * C;
    for (unsigned s0 = 0; s0 < n; s0 += sb) {
        const unsigned ns = n - s0 < sb ? n - s0 : sb;
        const unsigned r0 = s0 * RD_AXIS_BLOCK;
        const unsigned rr = nrows - r0 < ns * RD_AXIS_BLOCK ? nrows - r0 : ns * RD_AXIS_BLOCK;
        __syncwarp();
        const unsigned off =
            stage_elems<8>(x + at + (rd_u64)r0 * C, (rd_u64)rr * C, sm[warp], lane, 32);
        __syncwarp();
        const elem_t *s = reinterpret_cast<const elem_t *>(sm[warp] + off);
        for (unsigned k0 = 0; k0 < ns; k0 += pb) { // a round: lane q adds block k0 + q / C
            const unsigned nb = ns - k0 < pb ? ns - k0 : pb; // a power of two
            blk_part b;
            if (kb < nb) {
                const unsigned rk = rr - (k0 + kb) * RD_AXIS_BLOCK;
                b = block_part<KIND, SKIPNAN, SUMSQ, false>(
                    s + (rd_u64)(k0 + kb) * RD_AXIS_BLOCK * C + c, C,
                    rk < RD_AXIS_BLOCK ? rk : RD_AXIS_BLOCK,
                    (en.leaf + s0 + k0 + kb) * RD_AXIS_BLOCK);
            } else {
                b = block_part<KIND, SKIPNAN, SUMSQ, false>(s, C, 0, 0);
            }
            // the round's pairwise tree: block kb takes the subtree from kb + h
            unsigned lev = 0;
            for (unsigned h = 1; h < nb; h *= 2, lev++) {
                const blk_part o = shfl_part<KIND, SUMSQ>(b, (lane + h * C) & 31);
                if (kb % (2 * h) == 0)
                    b = blk_combine<KIND, SUMSQ>(b, o);
            }
            if (lane < C)
                f.push(s0 + k0, b, lev);
        }
    }
    if (lane < C)
        f.store(a, i * C + lane, en.level);
}

// Tile entries of runs longer than a tile: thread i folds the 2^level tile
// parts of entry i (written by the tile kernels into t's arrays, one per
// unit from u0) by the pairwise tree into entry i's part in a's arrays.
__device__ __forceinline__ void fold_tile_entries(const ax_gpu_args &a, const ax_gpu_args &t)
{
    const rd_u64 i = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    if (i >= a.nentries)
        return;
    const ax_gpu_entry en = entry_at(a, i);
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

// Whether this element type has the kernels of runs of at most 32 vectors
// a thread each (rows_lane: float32 and float64; the other types' registers
// would not hold its accumulators at the bound), and the launch bounds of
// the short-run kernels of float32 and float64: 6 resident blocks of
// AX_THREADS an SM for both bodies (measured on an H200 against 4, 5, 7
// and 8 for rows_lane, 1 to 4 for rows_units: 6 the fastest of each; on a
// GPU of 1024 threads an SM ptxas ignores the 6, warning); the other types
// are bound by the block's threads alone.
#if defined(GB_DT_f32) || defined(GB_DT_f64)
#define AX_LANE_TYPE 1
#define AX_ROWS_BOUNDS __launch_bounds__(AX_THREADS, 6)
#else
#define AX_LANE_TYPE 0
#define AX_ROWS_BOUNDS __launch_bounds__(AX_THREADS)
#endif

// Declares the block's dynamic shared memory as the byte array `name`
// (the host build of tests/gpu/axis_host_shim.h makes it a static one).
#ifndef AX_DYNAMIC_SHARED
#define AX_DYNAMIC_SHARED(name) extern __shared__ __align__(128) unsigned char name[]
#endif

// A short-run kernel: runs staged a block at a time in its dynamic shared
// memory (AX_ROWS_STAGE of the run's bytes), reduced by body (rows_units or
// rows_lane) under the launch bounds `bounds`.
#define AX_ROWS_KERNEL(name, body, kind, skipnan, sumsq, bounds)                           \
    extern "C" __global__ void bounds name(const elem_t *__restrict__ x, ax_gpu_args a)    \
    {                                                                                       \
        AX_DYNAMIC_SHARED(sm);                                                              \
        body<kind, skipnan, sumsq>(x, a, sm);                                               \
    }

AX_ROWS_KERNEL(axk_rows_moments, rows_units, 0, false, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_moments_sq, rows_units, 0, false, true, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_extrema, rows_units, 1, false, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_var, rows_units, 2, false, false, __launch_bounds__(AX_THREADS))
#if AX_LANE_TYPE
AX_ROWS_KERNEL(axk_lane_moments, rows_lane, 0, false, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_lane_moments_sq, rows_lane, 0, false, true, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_lane_extrema, rows_lane, 1, false, false, AX_ROWS_BOUNDS)
#endif
AX_TILE_KERNEL(axk_tile_moments, 0, false, false)
AX_TILE_KERNEL(axk_tile_moments_sq, 0, false, true)
AX_TILE_KERNEL(axk_tile_extrema, 1, false, false)
AX_TILE_KERNEL(axk_tile_var, 2, false, false)

// The block-entry kernels of one kind; minb: resident blocks per SM wanted
// (a bound on the registers: the variance's slots need more of them; the
// few-column kernels at most 2, for their 8 staged vectors per lane).
#define AX_FEW_MINB(minb) ((minb) < 2 ? (minb) : 2)
#define AX_BLOCK_KERNELS(suffix, kind, skipnan, sumsq, minb)                               \
    extern "C" __global__ void __launch_bounds__(AX_THREADS, minb)                          \
        axk_cols_##suffix(const elem_t *__restrict__ x, ax_gpu_args a)                      \
    {                                                                                       \
        block_cols_any<kind, skipnan, sumsq>(x, a);                                         \
    }                                                                                       \
    extern "C" __global__ void __launch_bounds__(AX_THREADS, AX_FEW_MINB(minb))             \
        axk_few_##suffix(const elem_t *__restrict__ x, ax_gpu_args a)                       \
    {                                                                                       \
        block_few<kind, skipnan, sumsq>(x, a);                                              \
    }

AX_BLOCK_KERNELS(moments, 0, false, false, 3)
AX_BLOCK_KERNELS(moments_sq, 0, false, true, 3)
AX_BLOCK_KERNELS(extrema, 1, false, false, 3)
AX_BLOCK_KERNELS(var, 2, false, false, 1)

#if defined(GB_DT_f32)
// The float32 sums of many columns (no squares), AX_PAIRS_COLS adjacent
// columns a thread (block_cols_vec: one 8-byte load a row, the next block's
// loads in flight during a block's sums, 2 resident blocks an SM for its
// registers: the fastest of the bodies measured on an H200), launched where
// the columns and the data's alignment allow (axis_args.h).
#define AX_PAIRS_KERNEL(name, skipnan)                                                     \
    extern "C" __global__ void __launch_bounds__(AX_THREADS, 2)                             \
        name(const elem_t *__restrict__ x, ax_gpu_args a)                                   \
    {                                                                                       \
        block_cols_vec<0, skipnan, false, AX_PAIRS_COLS, 1, true>(x, a);                    \
    }
AX_PAIRS_KERNEL(axk_pairs_moments, false)
AX_PAIRS_KERNEL(axk_pairs_moments_skipnan, true)
#endif

// Tile entries folded from the tile parts in t's arrays (see
// fold_tile_entries).
extern "C" __global__ void __launch_bounds__(AX_THREADS)
    axk_fold_tiles(ax_gpu_args a, ax_gpu_args t)
{
    fold_tile_entries(a, t);
}

#if RD_FLOAT
AX_ROWS_KERNEL(axk_rows_moments_skipnan, rows_units, 0, true, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_moments_sq_skipnan, rows_units, 0, true, true, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_extrema_skipnan, rows_units, 1, true, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_rows_var_skipnan, rows_units, 2, true, false, __launch_bounds__(AX_THREADS))
#if AX_LANE_TYPE
AX_ROWS_KERNEL(axk_lane_moments_skipnan, rows_lane, 0, true, false, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_lane_moments_sq_skipnan, rows_lane, 0, true, true, AX_ROWS_BOUNDS)
AX_ROWS_KERNEL(axk_lane_extrema_skipnan, rows_lane, 1, true, false, AX_ROWS_BOUNDS)
#endif
AX_TILE_KERNEL(axk_tile_moments_skipnan, 0, true, false)
AX_TILE_KERNEL(axk_tile_moments_sq_skipnan, 0, true, true)
AX_TILE_KERNEL(axk_tile_extrema_skipnan, 1, true, false)
AX_TILE_KERNEL(axk_tile_var_skipnan, 2, true, false)

AX_BLOCK_KERNELS(moments_skipnan, 0, true, false, 3)
AX_BLOCK_KERNELS(moments_sq_skipnan, 0, true, true, 3)
AX_BLOCK_KERNELS(extrema_skipnan, 1, true, false, 3)
AX_BLOCK_KERNELS(var_skipnan, 2, true, false, 1)
#endif
