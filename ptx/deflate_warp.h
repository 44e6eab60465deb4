/* deflate_warp.h - level 1 of the deflate encoder (ptx/deflate_math.h) for
 * DW_WARPS warps (DW_T lanes) per block, giving df_compress's bytes exactly.
 *
 * Level 1's match candidate at each position depends on the input alone
 * (deflate_math.h), so the lanes find every candidate in parallel, in
 * rounds of 32 positions per warp against the shared hash heads (which the
 * warps read and update in position order), and count every byte. Each
 * candidate's full match length follows from its neighbour's (one more
 * byte than a candidate at the next position with the same distance), so
 * the lanes find them all from the last position down. The greedy parse is
 * then cut into DW_T segments of whole mask words, one per lane: each lane
 * walks its segment from its first position, then again from where the
 * parse of the segment before it actually enters until the two walks meet,
 * round after round until no entry moves (the walks of typical data meet
 * within a few matches). The match starts are kept in a bit mask in shared
 * memory where the hash heads were; the bytes inside matches are
 * uncounted; the lanes build the codes (lane 0 merges the tree's two
 * queues and writes the block header), with deflate_math.h's own
 * functions; and the lanes write the symbols in parallel: each lane's bit
 * offset is a prefix sum over its round (on a GPU two rounds per warp at a
 * time, then over the warps), and its bits are ORed into a ring of staging
 * words in shared memory that is stored once each word is full. Once the walk is done, the code scratch
 * and then the ring take the candidate mask's place, which leaves a block
 * about 39 KB of shared memory.
 *
 * The code is written as phases between CTA barriers. Inside DW_LANES(l)
 * one lane's share of a phase runs: on a GPU every lane runs it once with
 * l = its thread index; compiled as C the DW_T lanes run one after another,
 * so the host's tests run the same code that the kernel does. A phase's
 * lanes only share state through memory, and what they write in one phase
 * is read only after its barrier, so the two orders give the same result.
 * Code outside DW_LANES runs on every lane (GPU) or once (C) and reads only
 * values that are the same for every lane. The candidate rounds and the
 * symbols have a GPU form (warp votes and shuffles) and a C form (rounds of
 * 32 lanes one after another) of the same result. */
#ifndef GPUBATCH_PTX_DEFLATE_WARP_H
#define GPUBATCH_PTX_DEFLATE_WARP_H

#include "deflate_math.h"

/* Warps that share one block (DW_T lanes in all): eight, with
 * DW_CTAS_PER_SM blocks, fill a multiprocessor's registers (the kernel is
 * bound by latency, so more warps help; 16 would need a larger ring). */
#ifndef DW_WARPS
#define DW_WARPS 8u
#endif
#define DW_T (32u * DW_WARPS)

#ifdef __CUDACC__
#define DW_FN __device__ __forceinline__
#define DW_LANES(l) for (df_u32 l = threadIdx.x, dw_once_ = 0; dw_once_ < 1; dw_once_++)
#define DW_SYNC() __syncthreads()
#define DW_ADD(p, v) atomicAdd((p), (v))
#define DW_OR(p, v) atomicOr((p), (v))
#define DW_UNROLL _Pragma("unroll")
#define DW_UNROLL8 _Pragma("unroll 8")
#else
#define DW_FN static inline
#define DW_LANES(l) for (df_u32 l = 0; l < DW_T; l++)
#define DW_SYNC() ((void)0)
#define DW_ADD(p, v) (*(p) += (v))
#define DW_OR(p, v) (*(p) |= (v))
#define DW_UNROLL
#define DW_UNROLL8
#endif

#define DW_WORDS ((DF_BLOCK_MAX + 31u) / 32u) /* bit-mask words of a block */
/* CTAs per multiprocessor on a GPU: the shared memory they leave is the L1
 * cache that the candidates' scattered loads hit, so fewer CTAs with a
 * larger L1 beat more of them (the counts measured: BENCHMARKS.md). */
#define DW_CTAS_PER_SM 4u
/* Staging words: a pair of rounds per warp adds at most 96 per warp, plus
 * the partial one and 2 (a power of two). */
#define DW_RING (128u * DW_WARPS)
#define DW_BATCH 4u  /* candidate rounds whose loads a warp issues together */
#define DW_SYMS ((DF_LITLEN_SYMS + DW_T - 1u) / DW_T) /* symbols per lane when building codes */
/* Bytes an output slot needs: DF_OUT_BOUND rounded up to whole words. */
#define DW_OUT_SLOT(n) ((DF_OUT_BOUND(n) + 3u) & ~3u)
/* Distance between the output slots of consecutive blocks on a GPU. */
#define DW_SLOT_PITCH ((DW_OUT_SLOT(DF_BLOCK_MAX) + 15u) & ~15u)

/* A block's global-memory workspace. */
typedef struct {
    df_u16 dist[DF_BLOCK_MAX]; /* candidate distance at each position, 0: none */
    df_u8 len[DF_BLOCK_MAX];   /* at a candidate: the bytes known equal (4..8, exact
                                * under 8), then (dw_lengths) its match length - 3 */
    df_u32 cand[DW_WORDS];     /* bit p: position p has a candidate */
    df_u32 chain[DW_WORDS];    /* bit p: 8 bytes known equal at p, and p + 1 in the same
                                * word has a candidate of the same distance */
} dw_work;

/* A block's shared-memory workspace. Once the candidates are found, the
 * hash heads' space holds four bit masks of DW_WORDS words (dw_mask): the
 * candidates, the positions inside matches (starts included), the match
 * starts and the chained candidates (dw_work's chain); once the walk is
 * done, the candidates' words hold the code scratch (df_near's cw), and
 * once the header is written, the staging ring of the symbols. */
typedef struct {
    df_near nr;
    df_plan plan;
    df_u64 val[32]; /* a round's symbol bits, per lane (C only) */
    df_u32 nb[32];  /* their counts; in the candidate rounds (C only), 1 for a
                     * candidate; in the codes, the leaves of each depth, then
                     * the symbols of each code length */
    df_u32 hs[32];  /* a round's hashes (C only); in the codes, the first key of
                     * each length, then the first code of each length */
    df_u32 seg_in[DW_T];   /* the walk's entry into each lane's segment; in the
                            * code description, each lane's code-length symbols */
    df_u32 seg_out[DW_T];  /* and its exit: the first position after the segment */
    df_u32 seg_next[DW_T]; /* an entry that moved, DW_NONE: none (and in the
                            * Huffman depths, whether a lane's nodes moved) */
    df_u32 warp_bits[DW_WARPS]; /* a step's symbol bits of each warp (GPU) */
    df_u64 dyn_bits, fixed_bits; /* the data's bits in a dynamic and a fixed block */
    df_u32 hdr_pos; /* header bytes stored (a multiple of 4) */
    df_u32 hdr_cnt; /* header bits not yet stored */
    df_u32 hdr_buf; /* those bits */
} dw_shared;

/* With DW_PROFILE (benchmarks only), lane 0 of each block adds the clock
 * cycles of each phase of dw_compress_fast to dw_prof: clearing, candidates,
 * masks and match lengths, walk, uncounting, codes and header, symbols. */
#if defined(__CUDACC__) && defined(DW_PROFILE)
__device__ unsigned long long dw_prof[8];
#endif
#if defined(__CUDA_ARCH__) && defined(DW_PROFILE)
#define DW_PROF_START long long dw_t0_ = clock64()
#define DW_MARK(k)                                                                \
    do {                                                                          \
        if (threadIdx.x == 0) {                                                   \
            long long t_ = clock64();                                             \
            atomicAdd(&dw_prof[k], (unsigned long long)(t_ - dw_t0_));            \
            dw_t0_ = t_;                                                          \
        }                                                                         \
    } while (0)
#else
#define DW_PROF_START ((void)0)
#define DW_MARK(k) ((void)0)
#endif

#define DW_NONE 0xffffffffu
#define DW_CAND 0u
#define DW_COVER 1u
#define DW_START 2u
#define DW_CHAIN 3u

/* The four masks fit in the hash heads' space; the code scratch, which
 * shares its start (df_near), only the candidate mask's words: that mask
 * is done with once the walk is, and the cover and start masks are read
 * until the symbols are written. */
typedef char dw_masks_fit[4u * DW_WORDS * sizeof(df_u32) <= sizeof(((df_near *)0)->head) ? 1 : -1];
typedef char
    dw_code_work_fits[DW_CAND == 0u && sizeof(df_code_work) <= DW_WORDS * sizeof(df_u32) ? 1 : -1];
/* The ring holds a step's words, is a power of two and fits the candidate mask's words. */
typedef char dw_ring_fits[DW_RING >= 96u * DW_WARPS + 3u && (DW_RING & (DW_RING - 1u)) == 0u &&
                                  DW_RING <= DW_WORDS ? 1 : -1];

/* The shared memory carve-out (percent of smem_per_sm, a multiprocessor's
 * most) that holds DW_CTAS_PER_SM workspaces with the driver's reserve of
 * each, the rest staying L1 cache (host code; the driver rounds it up to a
 * size the GPU has). */
static inline unsigned dw_carveout(int smem_per_sm, int reserved)
{
    unsigned long need = DW_CTAS_PER_SM * (unsigned long)(sizeof(dw_shared) + (unsigned)reserved);
    unsigned long most = smem_per_sm > 0 ? (unsigned long)smem_per_sm : need;
    unsigned long pct = (100u * need + most - 1u) / most;
    return pct < 100u ? (unsigned)pct : 100u;
}

/* Bit mask k (DW_CAND, DW_COVER, DW_START, DW_CHAIN) in the hash heads' space. */
DW_FN df_u32 *dw_mask(dw_shared *sh, df_u32 k)
{
    return (df_u32 *)(void *)sh->nr.head + k * DW_WORDS;
}

/* Nodes of a Huffman tree at most (2 * 286 - 1, rounded up). */
#define DW_NODES (2u * DF_LITLEN_SYMS)
typedef char dw_up_fits[2u * DW_NODES <= DW_WORDS ? 1 : -1];

/* Buffer k (0 or 1) of the Huffman nodes' known ancestors (dw_huff_lengths)
 * in the chain mask's words, which are done with once the match lengths
 * are found. */
DW_FN df_u32 *dw_huff_up(dw_shared *sh, df_u32 k)
{
    return dw_mask(sh, DW_CHAIN) + k * DW_NODES;
}

/* Index of the lowest set bit of x != 0. */
DW_FN df_u32 dw_ctz(df_u32 x)
{
#ifdef __CUDA_ARCH__
    return (df_u32)__ffs((int)x) - 1u;
#else
    return (df_u32)__builtin_ctz(x);
#endif
}

/* Whether bit p of a mask is set. */
DW_FN df_u32 dw_bit(const df_u32 *mask, df_u32 p)
{
    return mask[p >> 5] >> (p & 31u) & 1u;
}

/* Finds every position's candidate (deflate_math.h, level 1) into wk->dist
 * and wk->cand, 32 positions a round: a lane takes the latest earlier lane
 * of its round with the same hash, else the hash head, and the last lane of
 * each hash updates the head. Counts every byte hashed in lit_freq. */
DW_FN void dw_candidates(dw_shared *sh, dw_work *wk, const df_u8 *in, df_u32 n)
{
    df_u16 *head = sh->nr.head;
    df_u32 last = n - 4u, rounds = (last + 32u) / 32u;
#ifdef __CUDA_ARCH__
    /* The same rounds with warp votes in place of the scans of hs: each
     * warp takes DW_BATCH rounds of each step of DW_WARPS * DW_BATCH. Only
     * the hash heads go in order: the warps read and update them for their
     * rounds one after another, between CTA barriers; their loads, hashes
     * and votes overlap. The candidates' bytes of a warp's rounds are
     * loaded at once. A match's bytes 4..7 are compared here too:
     * wk->len[p] gets the bytes known equal (exact when under 8), which
     * spares the walk a load of its own. */
    df_u32 l = threadIdx.x & 31u, wp = threadIdx.x >> 5, step = DW_WARPS * DW_BATCH;
    for (df_u32 s0 = 0; s0 < rounds; s0 += step) {
        df_u32 r0 = s0 + wp * DW_BATCH;
        df_u32 x[DW_BATCH], cand[DW_BATCH], y[DW_BATCH], d[DW_BATCH], a[DW_BATCH], b[DW_BATCH];
        df_u32 h[DW_BATCH], same[DW_BATCH];
#pragma unroll
        for (df_u32 k = 0; k < DW_BATCH; k++) {
            df_u32 p = 32u * (r0 + k) + l;
            x[k] = p <= last ? df_load32(in + p) : 0u;
        }
#pragma unroll
        for (df_u32 k = 0; k < DW_BATCH; k++) {
            df_u32 p = 32u * (r0 + k) + l;
            h[k] = 0xffffffffu;
            if (p <= last) {
                h[k] = df_hash(x[k]);
                atomicAdd(&sh->nr.lit_freq[x[k] & 255u], 1u);
            }
            same[k] = __match_any_sync(0xffffffffu, h[k]);
        }
        for (df_u32 w = 0; w < DW_WARPS; w++) {
            if (w == wp) {
#pragma unroll
                for (df_u32 k = 0; k < DW_BATCH; k++) {
                    df_u32 base = 32u * (r0 + k), p = base + l;
                    df_u32 before = same[k] & ((1u << l) - 1u);
                    df_u32 after = same[k] & ~((2u << l) - 1u);
                    cand[k] = 0;
                    if (p <= last)
                        cand[k] = before ? base + (31u - (df_u32)__clz((int)before)) + 1u
                                         : head[h[k]];
                    __syncwarp();
                    if (p <= last && !after)
                        head[h[k]] = (df_u16)(p + 1u);
                    __syncwarp();
                }
            }
            if (DW_WARPS > 1u)
                __syncthreads();
        }
#pragma unroll
        for (df_u32 k = 0; k < DW_BATCH; k++) {
            df_u32 p = 32u * (r0 + k) + l, c = cand[k];
            int ok = c && p - (c - 1u) <= DF_MAX_DIST;
            y[k] = ok ? df_load32(in + c - 1u) : ~x[k];
            if (!ok)
                cand[k] = 0;
        }
#pragma unroll
        for (df_u32 k = 0; k < DW_BATCH; k++) {
            df_u32 p = 32u * (r0 + k) + l, c = cand[k];
            d[k] = c && y[k] == x[k] ? p - (c - 1u) : 0u;
            a[k] = b[k] = 0;
            for (df_u32 j = 0; d[k] && j < 4u && p + 4u + j < n; j++) {
                a[k] |= (df_u32)in[c + 3u + j] << (8u * j);
                b[k] |= (df_u32)in[p + 4u + j] << (8u * j);
            }
        }
#pragma unroll
        for (df_u32 k = 0; k < DW_BATCH; k++) {
            df_u32 p = 32u * (r0 + k) + l, diff = a[k] ^ b[k];
            df_u32 next_d = __shfl_down_sync(0xffffffffu, d[k], 1);
            if (p <= last)
                wk->dist[p] = (df_u16)d[k];
            if (d[k]) {
                if (n - p < 8u)
                    diff |= 0xffffffffu << (8u * (n - p - 4u));
                wk->len[p] = (df_u8)(diff ? 4u + dw_ctz(diff) / 8u : 8u);
            }
            df_u32 word = __ballot_sync(0xffffffffu, d[k] != 0);
            df_u32 chained = __ballot_sync(0xffffffffu, d[k] && !diff && l < 31u && next_d == d[k]);
            if (l == 0 && r0 + k < rounds)
                wk->cand[r0 + k] = word, wk->chain[r0 + k] = chained;
        }
    }
#else
    /* One round after another, its lanes one after another. */
    for (df_u32 r = 0; r < rounds; r++) {
        df_u32 base = 32u * r, word = 0, chained = 0;
        for (df_u32 l = 0; l < 32u; l++) {
            df_u32 p = base + l;
            sh->hs[l] = p <= last ? df_hash(df_load32(in + p)) : 0xffffffffu;
            if (p <= last)
                sh->nr.lit_freq[in[p]]++;
        }
        for (df_u32 l = 0; l < 32u; l++) {
            df_u32 p = base + l, d = 0;
            if (p <= last) {
                df_u32 h = sh->hs[l], cand = 0;
                for (df_u32 j = l; j-- > 0;)
                    if (sh->hs[j] == h) {
                        cand = base + j + 1u;
                        break;
                    }
                if (!cand)
                    cand = head[h];
                if (cand && p - (cand - 1u) <= DF_MAX_DIST &&
                    df_load32(in + cand - 1u) == df_load32(in + p))
                    d = p - (cand - 1u);
                df_u32 known = 4u; /* bytes 4..7 compared, as the GPU does */
                while (d && known < 8u && p + known < n && in[p - d + known] == in[p + known])
                    known++;
                wk->dist[p] = (df_u16)d;
                if (d)
                    wk->len[p] = (df_u8)known;
            }
            sh->nb[l] = d != 0;
        }
        for (df_u32 l = 0; l < 32u; l++) {
            df_u32 p = base + l;
            if (p <= last) {
                df_u32 h = sh->hs[l], later = 0;
                for (df_u32 j = l + 1u; j < 32u; j++)
                    later |= sh->hs[j] == h;
                if (!later)
                    head[h] = (df_u16)(p + 1u);
            }
            word |= sh->nb[l] << l;
            if (l < 31u && sh->nb[l] && sh->nb[l + 1u] && wk->len[p] == 8u &&
                wk->dist[p + 1u] == wk->dist[p])
                chained |= 1u << l;
        }
        wk->cand[r] = word;
        wk->chain[r] = chained;
    }
#endif
}

/* Clears bits [from, to) of a bit mask. */
DW_FN void dw_clear_bits(df_u32 *mask, df_u32 from, df_u32 to)
{
    while (from < to) {
        df_u32 b = from & 31u, k = 32u - b < to - from ? 32u - b : to - from;
        mask[from >> 5] &= ~((k == 32u ? 0xffffffffu : ((1u << k) - 1u)) << b);
        from += k;
    }
}

/* Sets bits [from, to) of a bit mask that other lanes set bits of too. */
DW_FN void dw_or_bits(df_u32 *mask, df_u32 from, df_u32 to)
{
    while (from < to) {
        df_u32 b = from & 31u, k = 32u - b < to - from ? 32u - b : to - from;
        DW_OR(&mask[from >> 5], (k == 32u ? 0xffffffffu : ((1u << k) - 1u)) << b);
        from += k;
    }
}

/* First position of lane l's segment of the parse (lane l + 1's is its end):
 * whole words of the candidate mask, nwords of them in all. */
DW_FN df_u32 dw_seg_start(df_u32 nwords, df_u32 l)
{
    return 32u * (nwords * l / DW_T);
}

/* Turns each candidate's known length (wk->len) into its match length - 3,
 * lane l taking its segment from the last position down: a candidate whose
 * next position has a candidate of the same distance matches one byte more
 * than that one (up to DF_MAX_MATCH), which the chain mask tells within a
 * word without a load; the others compare the bytes after those known
 * equal. */
DW_FN void dw_lengths(dw_shared *sh, dw_work *wk, const df_u8 *in, df_u32 n)
{
    const df_u32 *cand = dw_mask(sh, DW_CAND), *chain = dw_mask(sh, DW_CHAIN);
    df_u32 nwords = (n - 4u + 32u) / 32u;
    DW_LANES(l)
    {
        df_u32 w0 = dw_seg_start(nwords, l) / 32u, w = dw_seg_start(nwords, l + 1u) / 32u;
        df_u32 next = DW_NONE, next_dist = 0, next_len = 0; /* the candidate after p */
        while (w-- > w0) {
            df_u32 bits = cand[w], chained = chain[w];
            while (bits) {
                df_u32 b = df_log2(bits), p = 32u * w + b, len;
                df_u32 max = n - p < DF_MAX_MATCH ? n - p : DF_MAX_MATCH;
                bits &= ~(1u << b);
                if (chained >> b & 1u) { /* next is p + 1, at next_dist */
                    len = next_len + 1u < max ? next_len + 1u : max;
                } else {
                    df_u32 dist = wk->dist[p];
                    len = wk->len[p];
                    if (len == 8u) {
                        if (next == p + 1u && next_dist == dist)
                            len = next_len + 1u < max ? next_len + 1u : max;
                        else
                            len = 8u + df_match_len(in + p - dist + 8u, in + p + 8u, max - 8u);
                    }
                    next_dist = dist;
                }
                wk->len[p] = (df_u8)(len - 3u);
                next = p, next_len = len;
            }
        }
    }
    DW_SYNC();
}

/* Walks the greedy parse through segment [g, e) from entry g, a position
 * the parse reaches: marks the match it starts at each candidate it reaches
 * in the start mask. Walked again (the mask holds the parse from an earlier
 * entry), it clears the starts it passes over, and a start already marked
 * is the parse from there on, so the walk stops there with that walk's
 * exit, old_exit.
 * Returns the exit: the first position at or after e the parse reaches. */
DW_FN df_u32 dw_walk_segment(df_u32 *start, const df_u32 *cand, const dw_work *wk, df_u32 g,
                             df_u32 e, int again, df_u32 old_exit)
{
    df_u32 p = g, ew = e >> 5;
    while (p < e) {
        df_u32 w = p >> 5, bits = cand[w] & (0xffffffffu << (p & 31u));
        while (!bits && ++w < ew)
            bits = cand[w];
        if (!bits)
            return e; /* literals to the end of the segment */
        df_u32 q = 32u * w + dw_ctz(bits);
        if (again && dw_bit(start, q))
            return old_exit;
        start[q >> 5] |= 1u << (q & 31u);
        p = q + wk->len[q] + 3u;
        if (again)
            dw_clear_bits(start, q + 1u, p < e ? p : e);
    }
    return p;
}

/* Whether any lane's entry moved (sh->seg_next). */
DW_FN int dw_any_moved(const dw_shared *sh)
{
#ifdef __CUDA_ARCH__
    return __syncthreads_or(sh->seg_next[threadIdx.x] != DW_NONE);
#else
    for (df_u32 j = 0; j < DW_T; j++)
        if (sh->seg_next[j] != DW_NONE)
            return 1;
    return 0;
#endif
}

/* The greedy walk: from each position, the next one with a candidate starts
 * a match; everything between is literal. The lanes walk their segments
 * from their first positions, then in rounds each lane whose entry (the
 * exit of the segment before it) moved walks again from there until it
 * meets its earlier walk; once no entry moves, the start mask holds the
 * parse from position 0. Then each match's bytes are set in the cover mask
 * and its length and distance symbols counted. */
DW_FN void dw_walk(dw_shared *sh, dw_work *wk, df_u32 n)
{
    const df_u32 *cand = dw_mask(sh, DW_CAND);
    df_u32 *start = dw_mask(sh, DW_START), nwords = (n - 4u + 32u) / 32u;
    DW_LANES(l)
    {
        df_u32 s = dw_seg_start(nwords, l), e = dw_seg_start(nwords, l + 1u);
        sh->seg_in[l] = s;
        sh->seg_out[l] = dw_walk_segment(start, cand, wk, s, e, 0, 0);
    }
    DW_SYNC();
    for (;;) {
        DW_LANES(l)
        {
            df_u32 g = l ? sh->seg_out[l - 1u] : 0u;
            sh->seg_next[l] = g != sh->seg_in[l] ? g : DW_NONE;
        }
        DW_SYNC();
        if (!dw_any_moved(sh))
            break;
        DW_LANES(l)
        {
            df_u32 g = sh->seg_next[l];
            if (g != DW_NONE) {
                df_u32 s = dw_seg_start(nwords, l), e = dw_seg_start(nwords, l + 1u);
                dw_clear_bits(start, s, g < e ? g : e); /* inside the match before */
                sh->seg_in[l] = g;
                sh->seg_out[l] = g < e ? dw_walk_segment(start, cand, wk, g, e, 1, sh->seg_out[l]) : g;
            }
        }
        DW_SYNC();
    }
    DW_LANES(l)
    {
        df_u32 w0 = dw_seg_start(nwords, l) / 32u, w1 = dw_seg_start(nwords, l + 1u) / 32u;
        for (df_u32 w = w0; w < w1; w++) {
            df_u32 bits = start[w];
            while (bits) {
                df_u32 q = 32u * w + dw_ctz(bits), len = wk->len[q] + 3u, eb, ev;
                bits &= bits - 1u;
                dw_or_bits(dw_mask(sh, DW_COVER), q, q + len);
                DW_ADD(&sh->nr.lit_freq[df_len_sym(len, &eb, &ev)], 1u);
                DW_ADD(&sh->nr.dist_freq[df_dist_sym(wk->dist[q], &eb, &ev)], 1u);
            }
        }
    }
    DW_SYNC();
}

/* The bits of the symbol at position p whose byte is c, *nb of them (0
 * inside a match); where a match starts (is_start), len3 and dist are its
 * wk->len[p] and wk->dist[p]. */
DW_FN df_u64 dw_symbol(dw_shared *sh, df_u32 c, df_u32 p, df_u32 is_start, df_u32 len3,
                       df_u32 dist, df_u32 *nb)
{
    const df_near *nr = &sh->nr;
    if (is_start) {
        df_u32 eb, ev, deb, dev;
        df_u32 ls = df_len_sym(len3 + 3u, &eb, &ev), ds = df_dist_sym(dist, &deb, &dev);
        df_u32 n1 = nr->lit_len[ls] + eb;
        *nb = n1 + nr->dist_len[ds] + deb;
        return ((df_u64)nr->lit_code[ls] | (df_u64)ev << nr->lit_len[ls]) |
               ((df_u64)nr->dist_code[ds] | (df_u64)dev << nr->dist_len[ds]) << n1;
    }
    if (dw_bit(dw_mask(sh, DW_COVER), p)) {
        *nb = 0;
        return 0;
    }
    *nb = nr->lit_len[c];
    return nr->lit_code[c];
}

/* ORs nb <= 48 bits v at bit offset `at` of the staging ring. */
DW_FN void dw_ring_put(df_u32 *ring, df_u64 at, df_u64 v)
{
    df_u32 w = (df_u32)(at >> 5), s = (df_u32)(at & 31u);
    df_u64 lo = (df_u64)(df_u32)v << s, hi = (df_u64)(df_u32)(v >> 32) << s;
    if ((df_u32)lo)
        DW_OR(&ring[w % DW_RING], (df_u32)lo);
    if ((df_u32)(lo >> 32) | (df_u32)hi)
        DW_OR(&ring[(w + 1u) % DW_RING], (df_u32)(lo >> 32) | (df_u32)hi);
    if ((df_u32)(hi >> 32))
        DW_OR(&ring[(w + 2u) % DW_RING], (df_u32)(hi >> 32));
}

/* Stores ring words [from, to) to out (little-endian) and clears them. */
DW_FN void dw_ring_store(df_u32 *ring, df_u8 *out, df_u32 from, df_u32 to)
{
    DW_LANES(l)
    {
        for (df_u32 w = from + l; w < to; w += DW_T) {
            df_u32 x = ring[w % DW_RING];
#ifdef __CUDA_ARCH__
            *(df_u32 *)(void *)(out + 4u * w) = x; /* out is word-aligned, the GPU little-endian */
#else
            df_put_le(out + 4u * w, x, 4);
#endif
            ring[w % DW_RING] = 0;
        }
    }
    DW_SYNC();
}

/* Writes the symbols of the planned block after its header, the lanes in
 * parallel, through the staging ring in the candidate mask's words (the
 * code scratch is done with once the header is); returns the block's
 * length in bytes. */
DW_FN df_u32 dw_write(dw_shared *sh, const dw_work *wk, const df_u8 *in, df_u32 n, df_u8 *out)
{
    const df_near *nr = &sh->nr;
    df_u32 *ring = dw_mask(sh, DW_CAND), w0 = sh->hdr_pos / 4u, done = w0;
    df_u64 at = 32u * (df_u64)w0 + sh->hdr_cnt; /* absolute bit offset */
    DW_LANES(l)
    {
        for (df_u32 i = l; i < DW_RING; i += DW_T)
            ring[i] = i == w0 % DW_RING ? sh->hdr_buf : 0u;
    }
    DW_SYNC();
#ifdef __CUDA_ARCH__
    /* Steps of 64 positions per warp, two rounds each: a warp's offsets by
     * two interleaved shuffle scans (rather than from sh->nb), the warps'
     * totals through sh->warp_bits; the next step's bytes, match lengths
     * and distances loaded a step ahead. A step adds at most 96 ring words
     * per warp. */
    const df_u32 *start = dw_mask(sh, DW_START);
    df_u32 lane = threadIdx.x & 31u, wp = threadIdx.x >> 5, span = 64u * DW_WARPS;
    df_u32 c[2], s[2], len3[2] = {0, 0}, dist[2] = {0, 0};
    DW_UNROLL
    for (df_u32 k = 0; k < 2u; k++) {
        df_u32 p = 64u * wp + 32u * k + lane;
        c[k] = p < n ? in[p] : 0u;
        s[k] = p < n ? start[p >> 5] >> lane & 1u : 0u;
        if (s[k])
            len3[k] = wk->len[p], dist[k] = wk->dist[p];
    }
    for (df_u32 base = 0; base < n; base += span) {
        df_u64 v[2];
        df_u32 nb[2], incl[2], total[2], mine = base + 64u * wp;
        DW_UNROLL
        for (df_u32 k = 0; k < 2u; k++) {
            df_u32 p = mine + 32u * k + lane;
            nb[k] = 0;
            v[k] = p < n ? dw_symbol(sh, c[k], p, s[k], len3[k], dist[k], &nb[k]) : 0;
            incl[k] = nb[k];
        }
        DW_UNROLL
        for (df_u32 k = 0; k < 2u; k++) {
            df_u32 p = mine + span + 32u * k + lane;
            c[k] = p < n ? in[p] : 0u;
            s[k] = p < n ? start[p >> 5] >> lane & 1u : 0u;
            if (s[k])
                len3[k] = wk->len[p], dist[k] = wk->dist[p];
        }
        for (df_u32 o = 1; o < 32u; o <<= 1) {
            df_u32 t0 = __shfl_up_sync(0xffffffffu, incl[0], o);
            df_u32 t1 = __shfl_up_sync(0xffffffffu, incl[1], o);
            if (lane >= o)
                incl[0] += t0, incl[1] += t1;
        }
        total[0] = __shfl_sync(0xffffffffu, incl[0], 31);
        total[1] = __shfl_sync(0xffffffffu, incl[1], 31);
        if (lane == 0)
            sh->warp_bits[wp] = total[0] + total[1];
        DW_SYNC();
        df_u64 mine_at = at;
        df_u32 all = 0;
        DW_UNROLL
        for (df_u32 j = 0; j < DW_WARPS; j++) {
            df_u32 t = sh->warp_bits[j];
            mine_at += j < wp ? t : 0u;
            all += t;
        }
        if (nb[0])
            dw_ring_put(ring, mine_at + incl[0] - nb[0], v[0]);
        if (nb[1])
            dw_ring_put(ring, mine_at + total[0] + incl[1] - nb[1], v[1]);
        DW_SYNC();
        at += all;
        dw_ring_store(ring, out, done, (df_u32)(at >> 5));
        done = (df_u32)(at >> 5);
    }
#else
    /* Rounds of 32 positions, their offsets summed from sh->nb. */
    for (df_u32 base = 0; base < n; base += 32u) {
        df_u64 total = 0;
        for (df_u32 l = 0; l < 32u; l++) {
            df_u32 nb = 0, p = base + l;
            df_u32 s = p < n ? dw_bit(dw_mask(sh, DW_START), p) : 0u;
            sh->val[l] = p < n ? dw_symbol(sh, in[p], p, s, s ? wk->len[p] : 0u,
                                           s ? wk->dist[p] : 0u, &nb)
                               : 0;
            sh->nb[l] = nb;
        }
        for (df_u32 l = 0; l < 32u; l++) {
            if (sh->nb[l])
                dw_ring_put(ring, at + total, sh->val[l]);
            total += sh->nb[l];
        }
        at += total;
        dw_ring_store(ring, out, done, (df_u32)(at >> 5));
        done = (df_u32)(at >> 5);
    }
#endif
    DW_LANES(l)
    {
        if (l == 0)
            dw_ring_put(ring, at, nr->lit_code[DF_END_BLOCK]);
    }
    DW_SYNC();
    at += nr->lit_len[DF_END_BLOCK];
    dw_ring_store(ring, out, done, (df_u32)((at + 31u) >> 5));
    return (df_u32)((at + 7u) >> 3);
}

/* Reverses the low l bits of v, 1 <= l <= 15 (codes go out most
 * significant bit first into a stream written from its least). */
DW_FN df_u32 dw_reverse(df_u32 v, df_u32 l)
{
#ifdef __CUDA_ARCH__
    return __brev(v) >> (32u - l);
#else
    df_u32 r = 0;
    for (df_u32 b = 0; b < l; b++)
        r |= ((v >> b) & 1u) << (l - 1u - b);
    return r;
#endif
}

/* Code lengths as df_huff_lengths gives them from the m >= 2 keys in the
 * code scratch, sorted: lane 0 builds the tree (df_huff_merge); the lanes
 * find every node's depth by pointer jumping, each round replacing a
 * node's known ancestor by that ancestor's own (the distances capped at
 * maxlen + 1, as df_huff_lengths caps the depths), and count the leaves of
 * each depth; lane 0 limits the lengths (df_huff_limit) and finds where
 * each length's keys start; then the lanes give each key its length. */
DW_FN void dw_huff_lengths(dw_shared *sh, df_u32 m, df_u32 maxlen, df_u8 *len)
{
    df_huff_scratch *s = &sh->nr.cw.hs;
    df_u32 root = 2u * m - 2u, cap = maxlen + 1u, k = 0;
    DW_LANES(l)
    {
        if (l == 0)
            df_huff_merge(s, m);
        if (l <= cap)
            sh->nb[l] = 0; /* leaves of each depth */
    }
    DW_SYNC();
    DW_LANES(l)
    {
        for (df_u32 x = l; x <= root; x += DW_T) /* ancestor << 16 | distance */
            dw_huff_up(sh, 0)[x] = x == root ? root << 16 : (df_u32)s->parent[x] << 16 | 1u;
    }
    DW_SYNC();
    for (;;) {
        const df_u32 *from = dw_huff_up(sh, k);
        df_u32 *to = dw_huff_up(sh, k ^ 1u);
        DW_LANES(l)
        {
            df_u32 moved = DW_NONE;
            for (df_u32 x = l; x <= root; x += DW_T) {
                df_u32 v = from[x], a = v >> 16, d = v & 0xffffu;
                if (a != root && d < cap) {
                    df_u32 u = from[a], sum = d + (u & 0xffffu);
                    v = (u >> 16) << 16 | (sum < cap ? sum : cap);
                    moved = 1;
                }
                to[x] = v;
            }
            sh->seg_next[l] = moved;
        }
        DW_SYNC();
        k ^= 1u;
        if (!dw_any_moved(sh))
            break;
    }
    DW_LANES(l)
    {
        for (df_u32 x = l; x < m; x += DW_T) {
            df_u32 d = dw_huff_up(sh, k)[x] & 0xffffu;
            DW_ADD(&sh->nb[d > maxlen ? maxlen : d], 1u);
        }
    }
    DW_SYNC();
    DW_LANES(l)
    {
        if (l == 0) {
            df_huff_limit(sh->nb, maxlen);
            df_u32 first = 0; /* the rarest keys get the longest codes */
            for (df_u32 b = maxlen; b > 0; b--) {
                sh->hs[b] = first;
                first += sh->nb[b];
            }
        }
    }
    DW_SYNC();
    DW_LANES(l)
    {
        for (df_u32 i = l; i < m; i += DW_T) {
            df_u32 b = maxlen;
            while (i >= sh->hs[b] + sh->nb[b])
                b--;
            len[s->key[i] & 511u] = (df_u8)b;
        }
    }
    DW_SYNC();
}

/* Code lengths as df_build_lengths gives them: the lanes sort the keys,
 * each ranking its own symbols' among all the used ones (keys are
 * distinct; when fewer than two symbols are used, lane 0 makes the keys),
 * then build the lengths from them (dw_huff_lengths). */
DW_FN void dw_build_lengths(dw_shared *sh, const df_u32 *freq, df_u32 n, df_u32 maxlen,
                            df_u8 *len)
{
    df_huff_scratch *s = &sh->nr.cw.hs;
    df_u32 m = 0; /* the symbols used, the same on every lane */
    DW_LANES(l)
    {
        df_u32 key[DW_SYMS], rank[DW_SYMS];
        DW_UNROLL
        for (df_u32 k = 0; k < DW_SYMS; k++) {
            df_u32 i = l + DW_T * k, f = i < n ? freq[i] : 0u;
            key[k] = f ? f << 9 | i : 0u;
            rank[k] = 0;
        }
        m = 0;
        DW_UNROLL8
        for (df_u32 j = 0; j < n; j++) {
            df_u32 f = freq[j], kj = f << 9 | j;
            m += f != 0u;
            DW_UNROLL
            for (df_u32 k = 0; k < DW_SYMS; k++)
                rank[k] += f != 0u && kj < key[k];
        }
        DW_UNROLL
        for (df_u32 k = 0; k < DW_SYMS; k++) {
            if (l + DW_T * k < n)
                len[l + DW_T * k] = 0;
            if (key[k])
                s->key[rank[k]] = key[k];
        }
    }
    DW_SYNC();
    if (m < 2) { /* df_huff_keys adds unused symbols up to two */
        DW_LANES(l)
        {
            if (l == 0)
                df_sort(s->key, df_huff_keys(freq, n, len, s));
        }
        DW_SYNC();
        m = 2;
    }
    dw_huff_lengths(sh, m, maxlen, len);
}

/* Canonical codes as df_build_codes gives them: lane b counts the symbols
 * of length b, and each lane, for each of its symbols, the symbols before
 * it of the same length; then lane b finds the first code of length b, and
 * each symbol's code is that plus its count. */
DW_FN void dw_build_codes(dw_shared *sh, const df_u8 *len, df_u32 n, df_u16 *code)
{
    DW_LANES(l)
    {
        df_u32 mine[DW_SYMS], before[DW_SYMS], count = 0;
        DW_UNROLL
        for (df_u32 k = 0; k < DW_SYMS; k++) {
            mine[k] = l + DW_T * k < n ? len[l + DW_T * k] : 0u;
            before[k] = 0;
        }
        DF_ROLLED
        for (df_u32 j = 0; j < n; j++) {
            df_u32 lj = len[j];
            count += lj == l;
            DW_UNROLL
            for (df_u32 k = 0; k < DW_SYMS; k++)
                before[k] += j < l + DW_T * k && lj == mine[k];
        }
        if (l < 32u)
            sh->nb[l] = count;
        DW_UNROLL
        for (df_u32 k = 0; k < DW_SYMS; k++)
            if (l + DW_T * k < n)
                code[l + DW_T * k] = (df_u16)before[k];
    }
    DW_SYNC();
    DW_LANES(l)
    {
        df_u32 c = 0;
        for (df_u32 b = 2; b <= l && l <= DF_MAX_BITS; b++)
            c = (c + sh->nb[b - 1u]) << 1;
        if (l < 32u)
            sh->hs[l] = c;
    }
    DW_SYNC();
    DW_LANES(l)
    {
        DW_UNROLL
        for (df_u32 k = 0; k < DW_SYMS; k++) {
            df_u32 i = l + DW_T * k;
            if (i < n) {
                df_u32 li = len[i];
                code[i] = (df_u16)(li ? dw_reverse(sh->hs[li] + code[i], li) : 0u);
            }
        }
    }
    DW_SYNC();
}

/* The code description as df_plan_header makes it, the lanes sharing the
 * copy of the lengths sent and their run-length coding (each lane codes
 * the runs that start in its share of them, after the symbols of the
 * lanes before it) and the code-length code; adds the description's bits
 * to sh->dyn_bits. */
DW_FN void dw_plan_header(dw_shared *sh)
{
    df_near *nr = &sh->nr;
    df_plan *pl = &sh->plan;
    DW_LANES(l)
    {
        if (l == 0)
            df_plan_sizes(nr, pl);
        if (l < DF_CLEN_SYMS)
            nr->clen_freq[l] = 0;
    }
    DW_SYNC();
    df_u32 total = pl->hlit + pl->hdist, per = (total + DW_T - 1u) / DW_T;
    DW_LANES(l)
    {
        for (df_u32 i = l; i < total; i += DW_T)
            nr->cw.all_len[i] = df_sent_len(nr, pl, i);
    }
    DW_SYNC();
    DW_LANES(l)
    {
        df_u32 count = 0;
        for (df_u32 i = per * l; i < per * (l + 1u) && i < total; i++)
            if (i == 0 || nr->cw.all_len[i] != nr->cw.all_len[i - 1u])
                count += df_run_tokens(nr->cw.all_len[i], df_run_length(nr, i, total), 0, 0);
        sh->seg_in[l] = count;
    }
    DW_SYNC();
    DW_LANES(l)
    {
        df_u32 k = 0;
        for (df_u32 j = 0; j < l; j++)
            k += sh->seg_in[j];
        for (df_u32 i = per * l; i < per * (l + 1u) && i < total; i++) {
            if (i == 0 || nr->cw.all_len[i] != nr->cw.all_len[i - 1u]) {
                df_u32 t = df_run_tokens(nr->cw.all_len[i], df_run_length(nr, i, total),
                                         nr->cw.clen_sym + k, nr->cw.clen_extra + k);
                for (df_u32 q = 0; q < t; q++)
                    DW_ADD(&nr->clen_freq[nr->cw.clen_sym[k + q]], 1u);
                k += t;
            }
        }
        if (l == DW_T - 1u)
            pl->ntok = k;
    }
    DW_SYNC();
    dw_build_lengths(sh, nr->clen_freq, DF_CLEN_SYMS, DF_MAX_CLEN_BITS, nr->clen_len);
    DW_LANES(l)
    {
        if (l == 0)
            sh->dyn_bits += df_plan_header_bits(nr, pl);
    }
    DW_SYNC();
}

/* Plans the block as df_plan_block does: the lanes share the sorts, the
 * code description, the data's bit counts (df_symbol_bits) and the codes;
 * lane 0 chooses the type. */
DW_FN void dw_plan_block(dw_shared *sh, df_u32 n)
{
    df_near *nr = &sh->nr;
    dw_build_lengths(sh, nr->lit_freq, 286, DF_MAX_BITS, nr->lit_len);
    dw_build_lengths(sh, nr->dist_freq, DF_DIST_SYMS, DF_MAX_BITS, nr->dist_len);
    DW_LANES(l)
    {
        df_u64 dyn = 0, fixed = 0;
        for (df_u32 s = l; s < DF_DATA_SYMS; s += DW_T)
            df_symbol_bits(nr, s, &dyn, &fixed);
        DW_ADD(&sh->dyn_bits, dyn);
        DW_ADD(&sh->fixed_bits, fixed);
    }
    DW_SYNC();
    dw_plan_header(sh);
    DW_LANES(l)
    {
        if (l == 0)
            df_plan_type(nr, n, &sh->plan, sh->dyn_bits, 3u + sh->fixed_bits);
    }
    DW_SYNC();
    if (sh->plan.type == 2)
        dw_build_codes(sh, nr->clen_len, DF_CLEN_SYMS, nr->clen_code);
    if (sh->plan.type) {
        dw_build_codes(sh, nr->lit_len, sh->plan.type == 2 ? 286u : DF_LITLEN_SYMS, nr->lit_code);
        dw_build_codes(sh, nr->dist_len, DF_DIST_SYMS, nr->dist_code);
    }
}

/* Compresses in[0..n), n <= DF_BLOCK_MAX, at level 1 into out (aligned to
 * 4 bytes, DW_OUT_SLOT(n) bytes) exactly as df_compress does; every lane of
 * the warp calls it and gets the length in bytes. */
DW_FN df_u32 dw_compress_fast(dw_shared *sh, dw_work *wk, const df_u8 *in, df_u32 n, df_u8 *out)
{
    df_near *nr = &sh->nr;
    df_u32 nwords = (n + 31u) / 32u, hashed = n >= 4u ? n - 3u : 0u;
    DW_PROF_START;
    DW_LANES(l)
    {
        for (df_u32 i = l; i < DF_HASH_SIZE; i += DW_T)
            nr->head[i] = 0;
        for (df_u32 i = l; i < DF_LITLEN_SYMS; i += DW_T)
            nr->lit_freq[i] = 0;
        for (df_u32 i = l; i < DF_DIST_SYMS; i += DW_T)
            nr->dist_freq[i] = 0;
        if (l == 0)
            sh->dyn_bits = sh->fixed_bits = 0;
    }
    DW_SYNC();
    DW_MARK(0);
    if (hashed)
        dw_candidates(sh, wk, in, n);
    DW_SYNC(); /* the other warps' candidates in wk, their reads of the heads done */
    DW_MARK(1);
    /* The hash heads are done with: their space becomes the bit masks. */
    DW_LANES(l)
    {
        for (df_u32 w = l; w < nwords; w += DW_T) {
            dw_mask(sh, DW_CAND)[w] = 32u * w < hashed ? wk->cand[w] : 0u;
            dw_mask(sh, DW_CHAIN)[w] = 32u * w < hashed ? wk->chain[w] : 0u;
            dw_mask(sh, DW_COVER)[w] = dw_mask(sh, DW_START)[w] = 0;
        }
    }
    DW_SYNC();
    if (hashed)
        dw_lengths(sh, wk, in, n);
    DW_MARK(2);
    if (hashed)
        dw_walk(sh, wk, n);
    DW_MARK(3);
    /* Every byte was counted as a literal when hashed: count the last three
     * (never hashed) too and uncount the bytes inside matches. */
    DW_LANES(l)
    {
        for (df_u32 w = l; w < nwords; w += DW_T) {
            df_u32 c = dw_mask(sh, DW_COVER)[w];
            while (c) {
                df_u32 b = dw_ctz(c);
                c &= c - 1u;
                DW_ADD(&nr->lit_freq[in[32u * w + b]], 0xffffffffu);
            }
        }
        if (l == 0) {
            for (df_u32 p = hashed; p < n; p++)
                DW_ADD(&nr->lit_freq[in[p]], 1u);
            nr->lit_freq[DF_END_BLOCK] = 1; /* no byte's symbol: no other lane adds to it */
        }
    }
    DW_SYNC();
    DW_MARK(4);
    dw_plan_block(sh, n);
    DW_LANES(l)
    {
        if (l == 0 && sh->plan.type) {
            df_bits bw;
            bw.out = out, bw.pos = 0, bw.buf = 0, bw.cnt = 0;
            df_write_header(&bw, nr, &sh->plan);
            sh->hdr_pos = bw.pos, sh->hdr_cnt = bw.cnt, sh->hdr_buf = (df_u32)bw.buf;
        }
    }
    DW_SYNC();
    DW_MARK(5);
    if (sh->plan.type) {
        df_u32 len = dw_write(sh, wk, in, n, out);
        DW_MARK(6);
        return len;
    }
    DW_LANES(l)
    {
        if (l == 0)
            df_stored_header(out, n);
        for (df_u32 i = l; i < n; i += DW_T)
            out[5u + i] = in[i];
    }
    DW_SYNC();
    return DF_OUT_BOUND(n);
}

#endif
