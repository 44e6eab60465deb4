// bench_axis_few.cu [ncu|time] - the few-column block-entry kernels of
// reductions along axes (ptx/axis.cu; (N, C <= 32) over axis 0): main's
// body, block_few (a warp an entry, stages of 4 KiB, rounds of the blocks
// of 32 / C columns; 2 to 4 columns where an entry starts 16-byte aligned,
// block_narrow: a block a lane, its rows staged by coalesced rounds for
// sums and variance, read straight from global memory for extrema), also
// under bounds of 3 and 4 resident blocks, against a variant defined here,
// block_few_groups (a warp an entry, lane (g, c) adds column c of a group
// of consecutive blocks and folds them itself, the next stage's loads in
// flight while it adds; measured slower than block_few's staged body on an
// H200 for C >= 3: 0.23-0.48 of the copy for float32 against 0.39-0.64, so
// not in the kernels; both bound by the instructions they issue, not by
// memory). First the bits of every kind (moments with squares and skipnan,
// extrema, variance) on random data with NaN, infinities, zeros of either
// sign and subnormals, for C = 1 .. 32, entries cut anywhere in a sweep,
// chunks at several alignments; then (float32 and float64 only) GB/s of
// input on 1 GiB arrays, the ratio to the device copy (read + write), and
// whether the sums have main's bits, with main's extrema, variance and
// sums with squares beside them. With "ncu": one launch of each kernel at
// C = 3, for a profiler; with "time": the timing alone. block_few_lean,
// main's body with a leaner block (32-bit stage offsets, whole blocks
// unchecked), is checked and timed beside them.
//
// Build: nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -DGB_DT_f32
// tests/gpu/bench_axis_few.cu (any -DGB_DT_<type>; timing for f32, f64).
#if !defined(GB_DT_f32) && !defined(GB_DT_f64) && !defined(GB_DT_u8) && \
    !defined(GB_DT_i64) && !defined(GB_DT_f16) && !defined(GB_DT_i32)
#define GB_DT_f32
#endif
#include "ptx/axis.cu"

#include "bench_common.h"
#include "bench_axis_util.h"

#include <cstring>

// The 16 bytes at address va, of which only those in [lo, hi) are read: one
// 16-byte load where va is 16-byte aligned and the vector lies inside, else
// element by element (zeros for the elements outside).
__device__ __forceinline__ uint4 vec_in(unsigned long long va, unsigned long long lo,
                                        unsigned long long hi)
{
    if ((va & 15) == 0 && va >= lo && va + 16 <= hi)
        return __ldg(reinterpret_cast<const uint4 *>(va));
    elem_vec w;
#pragma unroll
    for (unsigned k = 0; k < RD_V; k++) {
        const unsigned long long ea = va + k * sizeof(elem_t);
        w.e[k] = ea >= lo && ea < hi ? __ldg(reinterpret_cast<const elem_t *>(ea)) : elem_t(0);
    }
    return w.raw;
}

// The part of a fold's 2^level blocks (the root of its tree) as one part.
template <int KIND, bool SUMSQ>
__device__ __forceinline__ blk_part fold_part(const blk_fold<KIND, SUMSQ> &f, unsigned level)
{
    blk_part b;
    b.fs = b.fq = -0.0;
    b.is = f.is;
    b.iq = f.iq;
    b.cnt = f.cnt;
    b.e = f.e;
    b.v = rd_var_empty();
#pragma unroll
    for (unsigned l = 0; l < AX_FOLD_MAX; l++)
        if (l == level) {
            if (KIND == 0) {
                b.fs = f.fs[l];
                if (SUMSQ)
                    b.fq = f.fq[l];
            } else if (KIND == 2) {
                b.v = f.v[l];
            }
        }
    return b;
}

// The part of one column of one block staged in shared memory: its rows
// elements at p, stride bytes apart (block_sum's).
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ blk_part staged_block(const unsigned char *p, unsigned stride,
                                                 unsigned rows, rd_u64 j0)
{
    elem_t buf[RD_AXIS_BLOCK];
#pragma unroll
    for (unsigned q = 0; q < RD_AXIS_BLOCK; q++)
        buf[q] = q < rows ? *reinterpret_cast<const elem_t *>(p + q * stride) : elem_t(0);
    return block_sum<KIND, SKIPNAN, SUMSQ>(buf, rows, j0);
}

// Bytes of shared memory a warp of the grouped few-column kernels stages in.
#define AX_GRP_STAGE 5120u

// Block entries of few columns (C <= 32), a warp per entry, the entry's
// 2^level blocks cut into G groups of m consecutive blocks (G the largest
// power of two <= 32 / C, at most 2^level): lane (g, c) = g * C + c adds
// column c of group g's blocks one after the other, each block's rows in
// row order, and folds them by its own binary counter (the pairwise tree
// over the group's m blocks); the groups' subtrees are then combined by the
// pairwise tree over shuffles, once per entry. The blocks come through
// shared memory in stages of KB consecutive blocks of every group: each
// lane loads NV 16-byte vectors of the next stage into registers while it
// adds the current one; a stage's groups lie apart by their bytes padded so
// that the stride is the columns' bytes (in whole vectors) modulo 128, and
// the lanes' reads of a row hit distinct banks.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned NV>
__device__ __forceinline__ void block_few_groups(const elem_t *__restrict__ x,
                                                 const ax_gpu_args &a)
{
    __shared__ __align__(16) unsigned char sm[RD_WARPS][AX_GRP_STAGE];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const rd_u64 i = (rd_u64)blockIdx.x * RD_WARPS + warp;
    if (i >= a.nentries)
        return; // the whole warp
    const ax_gpu_entry en = entry_at(a, i);
    const unsigned C = (unsigned)a.C, n = 1u << en.level, esz = (unsigned)sizeof(elem_t);
    unsigned G = 1; // groups: the largest power of two <= 32 / C, at most n
    while (2 * G * C <= 32 && 2 * G <= n)
        G *= 2;
    const unsigned m = n / G, lgm = __ffs(m) - 1;
    unsigned rows0;
    const elem_t *base = x + block_unit(a, en.u, &rows0);
    (void)rows0;
    const rd_u64 row_first = (en.u % a.blocks_per_sweep) * RD_AXIS_BLOCK;
    const rd_u64 row_end = row_first + (rd_u64)n * RD_AXIS_BLOCK < a.L
                               ? row_first + (rd_u64)n * RD_AXIS_BLOCK : a.L;
    const unsigned nrows = (unsigned)(row_end - row_first);
    const unsigned blkb = RD_AXIS_BLOCK * C * esz, vpb = blkb / 16;
    const unsigned dv = (C + RD_V - 1) / RD_V * RD_V * esz; // the columns' bytes, whole vectors
    unsigned KB = 1; // blocks of a group a stage holds: a power of two, at most m
    while (2 * KB <= m && 2 * KB * G * blkb <= NV * 512 &&
           G * (2 * KB * blkb + 127) <= AX_GRP_STAGE)
        KB *= 2;
    const unsigned ns = m / KB, gv = KB * vpb, nvs = G * gv; // stages, vectors a group, a stage
    // a stage's groups lie gstride bytes apart in shared memory (KB blocks, padded)
    const unsigned gstride = KB * blkb + ((dv - KB * blkb % 128 + 128) % 128);
    const unsigned long long lo = (unsigned long long)base,
                             hi = lo + (unsigned long long)nrows * C * esz;
    // v / gv = __umulhi(v, inv) for v < 2^16 (gv > 1)
    const unsigned inv = gv > 1 ? 0xffffffffu / gv + 1 : 0;
    uint4 r[NV];
    // the lane's vectors v = lane + 32 j of stage t: group v / gv, its bytes in order
    auto load = [&](unsigned t) {
#pragma unroll
        for (unsigned j = 0; j < NV; j++) {
            const unsigned v = lane + 32 * j, gg = gv > 1 ? __umulhi(v, inv) : v;
            if (v < nvs)
                r[j] = vec_in(lo + 16 * v + gg * (m - KB) * blkb + t * KB * blkb, lo, hi);
        }
    };
    const unsigned g = lane / C, c = lane - g * C;
    const bool active = g < G;
    blk_fold<KIND, SUMSQ> f;
    load(0);
    for (unsigned t = 0; t < ns; t++) {
        __syncwarp();
#pragma unroll
        for (unsigned j = 0; j < NV; j++) {
            const unsigned v = lane + 32 * j, gg = gv > 1 ? __umulhi(v, inv) : v;
            if (v < nvs)
                *reinterpret_cast<uint4 *>(sm[warp] + 16 * v + gg * (gstride - gv * 16)) = r[j];
        }
        for (unsigned v = 32 * NV + lane; v < nvs; v += 32) { // beyond the registers' vectors
            const unsigned gg = gv > 1 ? __umulhi(v, inv) : v;
            *reinterpret_cast<uint4 *>(sm[warp] + 16 * v + gg * (gstride - gv * 16)) =
                vec_in(lo + 16 * v + gg * (m - KB) * blkb + t * KB * blkb, lo, hi);
        }
        __syncwarp();
        if (t + 1 < ns)
            load(t + 1);
        if (!active)
            continue;
        for (unsigned k = 0; k < KB; k++) {
            const unsigned kl = t * KB + k, b = g * m + kl; // the lane's block: local, entry's
            const unsigned rk = nrows - b * RD_AXIS_BLOCK;
            const unsigned rows = rk < RD_AXIS_BLOCK ? rk : RD_AXIS_BLOCK;
            const unsigned char *p = sm[warp] + g * gstride + k * blkb + c * esz;
            const rd_u64 j0 = (en.leaf + b) * RD_AXIS_BLOCK;
            if (rows == RD_AXIS_BLOCK) // whole blocks without the checks of a short one
                f.push(kl, staged_block<KIND, SKIPNAN, SUMSQ>(p, C * esz, RD_AXIS_BLOCK, j0));
            else
                f.push(kl, staged_block<KIND, SKIPNAN, SUMSQ>(p, C * esz, rows, j0));
        }
    }
    blk_part b = fold_part(f, lgm);
    // the groups' pairwise tree: group g takes the subtree from g + h
    for (unsigned h = 1; h < G; h *= 2) {
        const blk_part o = shfl_part<KIND, SUMSQ>(b, (lane + h * C) & 31);
        if (g % (2 * h) == 0)
            b = blk_combine<KIND, SUMSQ>(b, o);
    }
    if (lane < C)
        store_part<KIND>(a, i * C + lane, b);
}

// block_few with a leaner block: 32-bit offsets into the stage and a whole
// block's rows without the checks of a short one (staged_block); the same
// stages, rounds, trees and fold.
template <int KIND, bool SKIPNAN, bool SUMSQ>
__device__ __forceinline__ void block_few_lean(const elem_t *__restrict__ x, const ax_gpu_args &a)
{
    __shared__ __align__(16) unsigned char sm[RD_WARPS][AX_COLS_STAGE + 32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const rd_u64 i = (rd_u64)blockIdx.x * RD_WARPS + warp;
    if (i >= a.nentries)
        return;
    const ax_gpu_entry en = entry_at(a, i);
    const unsigned C = (unsigned)a.C, n = 1u << en.level, esz = (unsigned)sizeof(elem_t);
    unsigned pb = 1;
    while (2 * pb * C <= 32)
        pb *= 2;
    unsigned rows0;
    const rd_u64 at = block_unit(a, en.u, &rows0);
    (void)rows0;
    const rd_u64 row_first = (en.u % a.blocks_per_sweep) * RD_AXIS_BLOCK;
    const rd_u64 row_end = row_first + (rd_u64)n * RD_AXIS_BLOCK < a.L
                               ? row_first + (rd_u64)n * RD_AXIS_BLOCK : a.L;
    const unsigned nrows = (unsigned)(row_end - row_first);
    blk_fold<KIND, SUMSQ> f;
    const unsigned sb = AX_COLS_STAGE / (RD_AXIS_BLOCK * C * esz) / pb * pb;
    const unsigned kb = lane / C, c = lane - kb * C, blkb = RD_AXIS_BLOCK * C * esz;
    for (unsigned s0 = 0; s0 < n; s0 += sb) {
        const unsigned ns = n - s0 < sb ? n - s0 : sb;
        const unsigned r0 = s0 * RD_AXIS_BLOCK;
        const unsigned rr = nrows - r0 < ns * RD_AXIS_BLOCK ? nrows - r0 : ns * RD_AXIS_BLOCK;
        __syncwarp();
        const unsigned off =
            stage_elems<8>(x + at + (rd_u64)r0 * C, (rd_u64)rr * C, sm[warp], lane, 32);
        __syncwarp();
        for (unsigned k0 = 0; k0 < ns; k0 += pb) {
            const unsigned nb = ns - k0 < pb ? ns - k0 : pb;
            const unsigned blk = k0 + kb;
            const unsigned rk = kb < nb ? rr - blk * RD_AXIS_BLOCK : 0;
            const unsigned rows = rk < RD_AXIS_BLOCK ? rk : RD_AXIS_BLOCK;
            const unsigned char *p = sm[warp] + off + (kb < nb ? blk * blkb + c * esz : 0);
            const rd_u64 j0 = kb < nb ? (en.leaf + s0 + blk) * RD_AXIS_BLOCK : 0;
            blk_part b = rows == RD_AXIS_BLOCK
                             ? staged_block<KIND, SKIPNAN, SUMSQ>(p, C * esz, RD_AXIS_BLOCK, j0)
                             : staged_block<KIND, SKIPNAN, SUMSQ>(p, C * esz, rows, j0);
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

template <int K, bool N, bool Q, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) few_lean(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    block_few_lean<K, N, Q>(x, a);
}

// main's body and the grouped one (NV vectors a lane in flight), per kind.
template <int K, bool N, bool Q, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) few_old(const elem_t *__restrict__ x,
                                                            ax_gpu_args a)
{
    block_few<K, N, Q>(x, a);
}
template <int K, bool N, bool Q, int minb, unsigned NV>
__global__ void __launch_bounds__(AX_THREADS, minb) few_new(const elem_t *__restrict__ x,
                                                            ax_gpu_args a)
{
    block_few_groups<K, N, Q, NV>(x, a);
}

// The kinds checked: kind, skipnan, squares, main's kernel and the new one.
struct kind_row {
    int kind;
    bool skipnan, sq;
    kernel old_k, new_k, lean_k;
    const char *name;
};
#define FR(k, n, q, minb, name)                                                             \
    {k, n, q, few_old<k, n, q, minb>, few_new<k, n, q, minb, 8>, few_lean<k, n, q, minb>, name}
static const kind_row kinds[] = {
    FR(0, false, false, 2, "moments"), FR(0, false, true, 2, "moments_sq"),
    FR(1, false, false, 2, "extrema"), FR(2, false, false, 1, "var"),
#if RD_FLOAT
    FR(0, true, false, 2, "moments_skipnan"), FR(0, true, true, 2, "moments_sq_skipnan"),
    FR(1, true, false, 2, "extrema_skipnan"), FR(2, true, false, 1, "var_skipnan"),
#endif
};

// The pieces of leaves [la, lb) (maximal aligned subtrees of at most
// 2^AX_FOLD_LEVELS leaves, as piece_of cuts them).
static unsigned long long pieces(unsigned long long la, unsigned long long lb)
{
    unsigned long long n = 0;
    for (unsigned long long at = la; at < lb; n++) {
        unsigned k = AX_FOLD_LEVELS;
        while (k && ((at & ((1ull << k) - 1)) || at + (1ull << k) > lb))
            k--;
        at += 1ull << k;
    }
    return n;
}

// Args of the block units [u0, u0 + nunits) of one sweep of L rows of C
// columns, the chunk's x[0] being element e0.
static ax_gpu_args block_args(unsigned long long L, unsigned C, unsigned long long u0,
                              unsigned long long nunits, unsigned long long e0)
{
    ax_gpu_args a;
    memset(&a, 0, sizeof a);
    a.e0 = e0;
    a.u0 = u0;
    a.nunits = nunits;
    a.T = 1;
    a.L = L;
    a.C = C;
    a.blocks_per_sweep = (L + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
    a.leaf0 = u0 % a.blocks_per_sweep;
    a.nentries = pieces(a.leaf0, a.leaf0 + nunits);
    return a;
}

// The bits of the new kernels against main's on random elements.
static void check_bits()
{
    const size_t n = 1u << 20;
    std::vector<elem_t> h(n + 16);
    for (auto &e : h)
        e = rnd_elem();
    elem_t *x;
    BENCH_CHECK(cudaMalloc(&x, (n + 16) * sizeof(elem_t)));
    BENCH_CHECK(cudaMemcpy(x, h.data(), (n + 16) * sizeof(elem_t), cudaMemcpyHostToDevice));
    outs oa, ob;
    BENCH_CHECK(cudaMalloc(&bad, 4));
    oa.alloc(n);
    ob.alloc(n);
    for (unsigned C = 1; C <= 32; C++) {
        for (unsigned trial = 0; trial < 4; trial++) {
            // a sweep of L rows (not always whole blocks), units from u0 to its end or short of it
            const unsigned long long L = n / C / (1 + trial) - rnd() % 40;
            const unsigned long long bps = (L + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
            const unsigned long long u0 = trial == 0 ? 0 : rnd() % (bps / 2);
            const unsigned long long nun = trial < 2 ? bps - u0 : 1 + rnd() % (bps - u0);
            const unsigned shift = trial == 3 ? 1 + (unsigned)(rnd() % 3) : 0; // elements
            const unsigned long long head = trial == 2 ? rnd() % 7 : 0;
            const unsigned long long e0 = u0 * RD_AXIS_BLOCK * C - head;
            if (u0 * RD_AXIS_BLOCK * C < head)
                continue;
            ax_gpu_args a = block_args(L, C, u0, nun, e0);
            const unsigned g = (unsigned)((a.nentries + RD_WARPS - 1) / RD_WARPS);
            for (const kind_row &k : kinds) {
                compare("few C", C, shift, k.kind, k.sq, k.skipnan, k.name, k.old_k, k.new_k, g,
                        a, x + shift, oa, ob, (size_t)a.nentries * C);
                compare("lean C", C, shift, k.kind, k.sq, k.skipnan, k.name, k.old_k, k.lean_k,
                        g, a, x + shift, oa, ob, (size_t)a.nentries * C);
            }
        }
    }
    printf("bits: %d checks, %d differ\n", checks, fails);
    fflush(stdout);
    cudaFree(x);
}

int main(int argc, char **argv)
{
    const bool prof = argc > 1 && !strcmp(argv[1], "ncu");
    if (!prof && !(argc > 1 && !strcmp(argv[1], "time")))
        check_bits();
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    // the most parts: a variance partial per block
    bench_input in0 = bench_setup(((size_t)1 << 30) / sizeof(elem_t) / 16 * sizeof(rd_var));
    const size_t bytes = in0.bytes;
    const elem_t *x = in0.x;
    double *want = in0.want, *got = in0.got;
    const double copy_bw = in0.copy_bw;
    if (prof) { // one launch of each at C = 3
        ax_gpu_args a = block_args(bytes / sizeof(elem_t) / 3, 3, 0,
                                   (bytes / sizeof(elem_t) / 3 + 15) / 16, 0);
        a.sum = (rd_u64)want;
        const unsigned g = (unsigned)((a.nentries + RD_WARPS - 1) / RD_WARPS);
        few_old<0, false, false, 2><<<g, AX_THREADS>>>(x, a);
        few_new<0, false, false, 2, 8><<<g, AX_THREADS>>>(x, a);
        BENCH_CHECK(cudaDeviceSynchronize());
        return 0;
    }
    static const unsigned Cs[] = {2, 3, 4, 5, 8, 16, 17, 32};
    for (unsigned C : Cs) {
        const unsigned long long L = bytes / sizeof(elem_t) / C;
        ax_gpu_args a = block_args(L, C, 0, (L + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK, 0);
        const unsigned g = (unsigned)((a.nentries + RD_WARPS - 1) / RD_WARPS);
        const double in = (double)L * C * sizeof(elem_t);
        char shape[32];
        snprintf(shape, sizeof shape, "(%llu, %u) ax0", L, C);
        ax_gpu_args b = a;
        a.sum = (rd_u64)want;
        b.sum = (rd_u64)got;
        const size_t n = (size_t)a.nentries * C;
        row(shape, "block_few (main's)", in, copy_bw,
            [&] { few_old<0, false, false, 2><<<g, AX_THREADS>>>(x, a); }, want, want, n);
        row(shape, "block_few minb 3", in, copy_bw,
            [&] { few_old<0, false, false, 3><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "block_few minb 4", in, copy_bw,
            [&] { few_old<0, false, false, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lean minb 2", in, copy_bw,
            [&] { few_lean<0, false, false, 2><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lean minb 3", in, copy_bw,
            [&] { few_lean<0, false, false, 3><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "groups NV 8 minb 2", in, copy_bw,
            [&] { few_new<0, false, false, 2, 8><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "groups NV 4 minb 2", in, copy_bw,
            [&] { few_new<0, false, false, 2, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "groups NV 4 minb 3", in, copy_bw,
            [&] { few_new<0, false, false, 3, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "groups NV 2 minb 3", in, copy_bw,
            [&] { few_new<0, false, false, 3, 2><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "groups NV 2 minb 4", in, copy_bw,
            [&] { few_new<0, false, false, 4, 2><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        ax_gpu_args e = a, f = b;
        e.sum = f.sum = 0;
        e.extrema = (rd_u64)want;
        f.extrema = (rd_u64)got;
        const float me = bench_median_ms(
                        [&] { few_old<1, false, false, 2><<<g, AX_THREADS>>>(x, e); }, 5),
                    ne = bench_median_ms(
                        [&] { few_new<1, false, false, 2, 8><<<g, AX_THREADS>>>(x, f); }, 5);
        printf("%-18s %-24s %8.2f %8.2f (of copy: main's, NV 8 minb 2)\n", shape, "extrema",
               in / (me * 1e-3) / copy_bw, in / (ne * 1e-3) / copy_bw);
        ax_gpu_args v = e, q = a;
        v.extrema = 0;
        v.var = (rd_u64)want;
        q.sq = (rd_u64)got;
        const float mv = bench_median_ms(
                        [&] { few_old<2, false, false, 1><<<g, AX_THREADS>>>(x, v); }, 5),
                    mq = bench_median_ms(
                        [&] { few_old<0, false, true, 2><<<g, AX_THREADS>>>(x, q); }, 5);
        printf("%-18s %-24s %8.2f %8.2f (of copy: main's variance, sums and squares)\n", shape,
               "variance, squares", in / (mv * 1e-3) / copy_bw, in / (mq * 1e-3) / copy_bw);
    }
#endif
    return 0;
}
