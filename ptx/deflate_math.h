/* deflate_math.h - the deflate encoder (RFC 1951) of the blocked gzip output,
 * written to compile both as CUDA (for a kernel that compresses one block
 * per thread) and as C (the host writer), so both produce the same bytes.
 *
 * The output is a pure function of the block's bytes and the level: one
 * final deflate block (dynamic Huffman, fixed Huffman or stored, whichever
 * is smallest by exact bit count; stored whenever compression would not
 * shrink the block). Nothing depends on the workspace's prior contents:
 * every table is cleared or written before it is read.
 *
 * The parse (which strings become matches), per level:
 *  - level 1: greedy. Every position p with 4 bytes left is hashed (4 bytes,
 *    14-bit multiplicative hash), and its one candidate is the latest
 *    earlier position with the same hash; positions inside matches are
 *    hashed too, so the candidate of p depends on the input alone, not on
 *    the parse before p (a GPU can find all candidates in parallel). The
 *    match at p is the common prefix with the candidate (at most 258 bytes,
 *    distance at most 32767); it is taken when at least 4 bytes long.
 *  - levels 2..9: hash chains over 3-byte hashes, every position inserted;
 *    levels 2-3 greedy, 4-9 lazy (a match is deferred when the next position
 *    has a longer one). Each level walks at most `chain` candidates and
 *    stops at a match of `nice` bytes (table in df_level_params). A 3-byte
 *    match farther than 4096 bytes is not taken: it would cost more bits
 *    than its three literals.
 * Huffman codes: the two-queue Huffman construction over symbols sorted by
 * (frequency, symbol), then the code-length histogram limited to 15 bits
 * (7 for the code-length code) by moving leaves down one level at a time,
 * then canonical codes with longer codes given to rarer symbols (ties by
 * symbol order). Each code gets at least two symbols, as every inflater
 * accepts.
 *
 * Workspace: df_near (hash heads, Huffman tables; DF_NEAR_BYTES = 35128
 * bytes, under 48 KiB: shared memory on a GPU) and df_far (hash chains,
 * used from level 2, and the parsed matches; DF_FAR_BYTES = 174336 bytes:
 * global memory on a GPU). The caller owns both; nothing else is allocated,
 * nothing recurses, and the CUDA path calls no library function. */
#ifndef GPUBATCH_PTX_DEFLATE_MATH_H
#define GPUBATCH_PTX_DEFLATE_MATH_H

#include "bgzf_format.h"

#ifdef __CUDACC__
#ifndef GB_HD
#define GB_HD __host__ __device__ __forceinline__
#endif
typedef unsigned char df_u8;
typedef unsigned short df_u16;
typedef unsigned int df_u32;
typedef unsigned long long df_u64;
/* Keeps a table loop rolled: unrolled, the table loops make the PTX large and
 * need a newer PTX ISA (partial vector loads) than the drivers we support. */
#define DF_ROLLED _Pragma("unroll 1")
#define DF_RESTRICT __restrict__
#else
#include <stdint.h>
#ifndef GB_HD
#define GB_HD static inline
#endif
typedef uint8_t df_u8;
typedef uint16_t df_u16;
typedef uint32_t df_u32;
typedef uint64_t df_u64;
#define DF_ROLLED
#define DF_RESTRICT restrict
#endif

#define DF_BLOCK_MAX 65280u   /* input bytes per call (a BGZF block's data) */
#define DF_OUT_BOUND(n) ((n) + 5u) /* output bytes at most: the stored form */
#define DF_MIN_MATCH 3u
#define DF_MAX_MATCH 258u
#define DF_MAX_DIST 32767u
#define DF_WINDOW 32768u      /* chain slots: positions modulo the window */
#define DF_FAR3 4096u         /* farthest distance of a 3-byte match */
#define DF_HASH_BITS 14
#define DF_HASH_SIZE (1u << DF_HASH_BITS)
#define DF_SEQ_MAX (DF_BLOCK_MAX / DF_MIN_MATCH) /* matches per block at most */
#define DF_LITLEN_SYMS 288u   /* 286 used, 288 in the fixed code */
#define DF_DIST_SYMS 30u
#define DF_CLEN_SYMS 19u
#define DF_MAX_BITS 15u
#define DF_MAX_CLEN_BITS 7u
#define DF_END_BLOCK 256u

/* Scratch of one Huffman construction (at most DF_LITLEN_SYMS symbols). */
typedef struct {
    df_u32 key[DF_LITLEN_SYMS];          /* frequency << 9 | symbol, sorted */
    df_u32 weight[DF_LITLEN_SYMS];       /* weights of the internal nodes */
    df_u16 parent[2 * DF_LITLEN_SYMS];   /* leaves first, then internal nodes */
    df_u8 depth[2 * DF_LITLEN_SYMS];
} df_huff_scratch;

/* Scratch of planning a block's codes (after the parse). */
typedef struct {
    df_huff_scratch hs;
    df_u8 all_len[DF_LITLEN_SYMS + DF_DIST_SYMS]; /* the lengths sent, in order */
    df_u8 clen_sym[DF_LITLEN_SYMS + DF_DIST_SYMS]; /* run-length coded lengths */
    df_u8 clen_extra[DF_LITLEN_SYMS + DF_DIST_SYMS];
} df_code_work;

/* The small, hot part of the workspace. The hash heads serve the parse
 * alone and the code scratch only what follows it, so they share their
 * space (at its start, the scratch). */
typedef struct {
    union {
        df_u16 head[DF_HASH_SIZE]; /* latest position + 1 per hash, 0: none */
        df_code_work cw;
    };
    df_u32 lit_freq[DF_LITLEN_SYMS];
    df_u32 dist_freq[DF_DIST_SYMS];
    df_u32 clen_freq[DF_CLEN_SYMS];
    df_u16 lit_code[DF_LITLEN_SYMS];
    df_u16 dist_code[DF_DIST_SYMS];
    df_u16 clen_code[DF_CLEN_SYMS];
    df_u8 lit_len[DF_LITLEN_SYMS];
    df_u8 dist_len[DF_DIST_SYMS];
    df_u8 clen_len[DF_CLEN_SYMS];
} df_near;

/* The large part of the workspace. */
typedef struct {
    df_u16 prev[DF_WINDOW];       /* hash chains (levels 2..9) */
    df_u16 seq_lits[DF_SEQ_MAX];  /* literals before each match */
    df_u16 seq_dist[DF_SEQ_MAX];
    df_u8 seq_len[DF_SEQ_MAX];    /* match length - 3 */
} df_far;

#define DF_NEAR_BYTES sizeof(df_near)
#define DF_FAR_BYTES sizeof(df_far)

/* What one level does (see the file comment). */
typedef struct {
    df_u32 chain; /* candidates examined per position; 1 = the hash head only */
    df_u32 nice;  /* stop searching at a match this long */
    df_u32 lazy;  /* defer matches shorter than this (0: greedy) */
    df_u32 good;  /* look at chain/4 candidates after a match this long */
} df_level;

/* Fills the parameters of level 1..9 (level 1 uses only its own parse). */
GB_HD void df_level_params(int level, df_level *lp)
{
    df_u32 chain, nice, lazy, good;
    switch (level) {
    case 1: chain = 1, nice = 258, lazy = 0, good = 258; break;
    case 2: chain = 4, nice = 16, lazy = 0, good = 258; break;
    case 3: chain = 8, nice = 32, lazy = 0, good = 258; break;
    case 4: chain = 16, nice = 32, lazy = 8, good = 8; break;
    case 5: chain = 32, nice = 64, lazy = 16, good = 8; break;
    case 6: chain = 128, nice = 128, lazy = 16, good = 8; break;
    case 7: chain = 256, nice = 128, lazy = 32, good = 16; break;
    case 8: chain = 1024, nice = 258, lazy = 128, good = 32; break;
    default: chain = 4096, nice = 258, lazy = 258, good = 32; break;
    }
    lp->chain = chain, lp->nice = nice, lp->lazy = lazy, lp->good = good;
}

/* Loads 4 bytes little-endian (the hash and match-check unit). */
GB_HD df_u32 df_load32(const df_u8 *p)
{
    return (df_u32)p[0] | (df_u32)p[1] << 8 | (df_u32)p[2] << 16 | (df_u32)p[3] << 24;
}

/* Loads 8 bytes little-endian. */
GB_HD df_u64 df_load64(const df_u8 *p)
{
    return (df_u64)df_load32(p) | (df_u64)df_load32(p + 4) << 32;
}

/* Index of the highest set bit of x > 0. */
GB_HD df_u32 df_log2(df_u32 x)
{
#ifdef __CUDA_ARCH__
    return 31u - (df_u32)__clz(x);
#else
    return 31u - (df_u32)__builtin_clz(x);
#endif
}

/* Hash of the 3 or 4 bytes in x (the low ones: the caller masks). */
GB_HD df_u32 df_hash(df_u32 x)
{
    return (x * 2654435761u) >> (32 - DF_HASH_BITS);
}

/* Length of the common prefix of a and b, at most max bytes. */
GB_HD df_u32 df_match_len(const df_u8 *a, const df_u8 *b, df_u32 max)
{
    df_u32 l = 0;
#ifndef __CUDA_ARCH__
    while (l + 8 <= max) {
        df_u64 x = df_load64(a + l) ^ df_load64(b + l);
        if (x)
            return l + (df_u32)__builtin_ctzll(x) / 8;
        l += 8;
    }
#endif
    while (l < max && a[l] == b[l])
        l++;
    return l;
}

/* Length symbol (257..285) of a match length 3..258; *extra_bits and
 * *extra get its extra bits. */
GB_HD df_u32 df_len_sym(df_u32 len, df_u32 *extra_bits, df_u32 *extra)
{
    df_u32 l = len - 3;
    if (len == DF_MAX_MATCH) {
        *extra_bits = 0, *extra = 0;
        return 285;
    }
    if (l < 8) {
        *extra_bits = 0, *extra = 0;
        return 257 + l;
    }
    df_u32 e = df_log2(l) - 2;
    df_u32 top = (l >> e) & 3;
    *extra_bits = e;
    *extra = l - ((4 + top) << e);
    return 257 + 4 * (e + 1) + top;
}

/* Distance symbol (0..29) of a distance 1..32768, with its extra bits. */
GB_HD df_u32 df_dist_sym(df_u32 dist, df_u32 *extra_bits, df_u32 *extra)
{
    df_u32 x = dist - 1;
    if (x < 4) {
        *extra_bits = 0, *extra = 0;
        return x;
    }
    df_u32 b = df_log2(x);
    df_u32 e = b - 1;
    *extra_bits = e;
    *extra = x & ((1u << e) - 1);
    return 2 * b + ((x >> e) & 1);
}

/* Number of extra bits of length symbol 257..285. */
GB_HD df_u32 df_len_sym_extra(df_u32 sym)
{
    return (sym < 265 || sym == 285) ? 0 : (sym - 261) / 4;
}

/* Number of extra bits of distance symbol 0..29. */
GB_HD df_u32 df_dist_sym_extra(df_u32 sym)
{
    return sym < 4 ? 0 : sym / 2 - 1;
}

/* Sorts keys ascending (Shell sort: no recursion, no extra memory). */
GB_HD void df_sort(df_u32 *key, df_u32 n)
{
    const df_u32 gaps[6] = {132, 57, 23, 10, 4, 1};
    for (int g = 0; g < 6; g++) {
        df_u32 gap = gaps[g];
        for (df_u32 i = gap; i < n; i++) {
            df_u32 v = key[i], j = i;
            while (j >= gap && key[j - gap] > v) {
                key[j] = key[j - gap];
                j -= gap;
            }
            key[j] = v;
        }
    }
}

/* The sort keys (frequency << 9 | symbol) of a Huffman code's leaves for
 * freq[0..n), unsorted, into s->key, and len[0..n) cleared; returns their
 * number. At least two symbols get a code (the lowest unused ones are
 * added, with weight 0, when fewer are used), so the code is complete. */
GB_HD df_u32 df_huff_keys(const df_u32 *freq, df_u32 n, df_u8 *len, df_huff_scratch *s)
{
    df_u32 m = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < n; i++) {
        len[i] = 0;
        if (freq[i])
            s->key[m++] = freq[i] << 9 | i;
    }
    DF_ROLLED
    for (df_u32 i = 0; m < 2 && i < n; i++) {
        if (!freq[i])
            s->key[m++] = i; /* weight 0: sorts first, costs nothing */
    }
    return m;
}

/* The Huffman tree of the m >= 2 leaves whose keys s->key holds in
 * ascending order: s->parent of every node but the root (2m - 2), leaves
 * 0..m-1 in key order, then the internal nodes in the order made. Two
 * queues, the leaves and the internal nodes (whose weights never
 * decrease); ties take the leaf. The weights at the heads of both queues,
 * and the ones after them, are kept in registers, so that a pick waits for
 * no load. The next weights are loaded at clamped indices, never under a
 * condition: forms that loaded them as `i < n ? s->key[i] : 0` gave other
 * trees on the GPU with s in shared memory (ptxas 13.0 at -O1 and above;
 * right at -O0 and on the host). */
GB_HD void df_huff_merge(df_huff_scratch *s, df_u32 m)
{
    df_u32 leaf = 0, inner = 0, made = 0;
    df_u32 lw = s->key[0] >> 9, lw1 = s->key[1] >> 9; /* leaves leaf and leaf + 1 */
    df_u32 iw = 0, iw1 = 0; /* internal nodes inner and inner + 1, once made */
    DF_ROLLED
    for (df_u32 k = 0; k + 1 < m; k++) {
        df_u32 w = 0;
        DF_ROLLED
        for (int pick = 0; pick < 2; pick++) {
            if (leaf < m && (inner == made || lw <= iw)) {
                w += lw;
                s->parent[leaf++] = (df_u16)(m + made);
                lw = lw1;
                lw1 = s->key[leaf + 1 < m ? leaf + 1 : m - 1] >> 9;
            } else {
                w += iw;
                s->parent[m + inner++] = (df_u16)(m + made);
                iw = iw1;
                iw1 = s->weight[inner + 1 < made ? inner + 1 : 0];
            }
        }
        s->weight[made] = w;
        if (made == inner)
            iw = w; /* the queue was empty: the new node heads it */
        else if (made == inner + 1)
            iw1 = w;
        made++;
    }
}

/* Limits code lengths to maxlen: count[b] holds the leaves of depth b, the
 * deeper ones counted at maxlen, so the Kraft sum (in units of 2^-maxlen)
 * may exceed 1. Each step removes a leaf at maxlen and splits the deepest
 * shorter leaf into two: the sum drops by one unit. */
GB_HD void df_huff_limit(df_u32 *count, df_u32 maxlen)
{
    df_u32 total = 0;
    DF_ROLLED
    for (df_u32 b = 1; b <= maxlen; b++)
        total += count[b] << (maxlen - b);
    while (total > (1u << maxlen)) {
        count[maxlen]--;
        DF_ROLLED
        for (df_u32 b = maxlen - 1; b > 0; b--) {
            if (count[b]) {
                count[b]--;
                count[b + 1] += 2;
                break;
            }
        }
        total--;
    }
}

/* Code lengths, at most maxlen bits, from the m >= 2 leaves whose keys
 * s->key holds in ascending order, into len (its other entries left as
 * they are). */
GB_HD void df_huff_lengths(df_huff_scratch *s, df_u32 m, df_u32 maxlen, df_u8 *len)
{
    df_huff_merge(s, m);
    /* Depths from the root down (a parent's index exceeds its child's),
     * capped at maxlen + 1: deeper leaves are all over the limit anyway. */
    df_u32 root = 2 * m - 2;
    df_u32 count[DF_MAX_BITS + 2];
    DF_ROLLED
    for (df_u32 b = 0; b <= maxlen + 1; b++)
        count[b] = 0;
    s->depth[root] = 0;
    DF_ROLLED
    for (df_u32 x = root; x-- > 0;) {
        df_u32 d = s->depth[s->parent[x]] + 1u;
        s->depth[x] = (df_u8)(d > maxlen + 1 ? maxlen + 1 : d);
        if (x < m)
            count[d > maxlen ? maxlen : d]++;
    }
    df_huff_limit(count, maxlen);
    /* Rarest symbols (first in key order) get the longest codes. */
    df_u32 i = 0;
    DF_ROLLED
    for (df_u32 b = maxlen; b > 0; b--) {
        DF_ROLLED
        for (df_u32 c = count[b]; c > 0; c--)
            len[s->key[i++] & 511] = (df_u8)b;
    }
}

/* Code lengths, at most maxlen bits, of a Huffman code for freq[0..n);
 * unused symbols get 0 (see df_huff_keys). */
GB_HD void df_build_lengths(const df_u32 *freq, df_u32 n, df_u32 maxlen, df_u8 *len,
                            df_huff_scratch *s)
{
    df_u32 m = df_huff_keys(freq, n, len, s);
    df_sort(s->key, m);
    df_huff_lengths(s, m, maxlen, len);
}

/* Canonical codes (RFC 1951 3.2.2) for len[0..n), bit-reversed for
 * LSB-first output. */
GB_HD void df_build_codes(const df_u8 *len, df_u32 n, df_u16 *code)
{
    df_u32 count[DF_MAX_BITS + 1], next[DF_MAX_BITS + 1];
    DF_ROLLED
    for (df_u32 b = 0; b <= DF_MAX_BITS; b++)
        count[b] = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < n; i++)
        count[len[i]]++;
    count[0] = 0;
    df_u32 c = 0;
    DF_ROLLED
    for (df_u32 b = 1; b <= DF_MAX_BITS; b++) {
        c = (c + count[b - 1]) << 1;
        next[b] = c;
    }
    DF_ROLLED
    for (df_u32 i = 0; i < n; i++) {
        df_u32 l = len[i], v = l ? next[l]++ : 0, r = 0;
        DF_ROLLED
        for (df_u32 b = 0; b < l; b++)
            r |= ((v >> b) & 1u) << (l - 1 - b);
        code[i] = (df_u16)r;
    }
}

/* LSB-first bit writer over a buffer known to be large enough. */
typedef struct {
    df_u8 *out;
    df_u32 pos;
    df_u64 buf;
    df_u32 cnt;
} df_bits;

/* Appends the low nb (<= 32) bits of v. */
GB_HD void df_put(df_bits *bw, df_u32 v, df_u32 nb)
{
    bw->buf |= (df_u64)v << bw->cnt;
    bw->cnt += nb;
    if (bw->cnt >= 32) {
        bw->out[bw->pos] = (df_u8)bw->buf;
        bw->out[bw->pos + 1] = (df_u8)(bw->buf >> 8);
        bw->out[bw->pos + 2] = (df_u8)(bw->buf >> 16);
        bw->out[bw->pos + 3] = (df_u8)(bw->buf >> 24);
        bw->pos += 4;
        bw->buf >>= 32;
        bw->cnt -= 32;
    }
}

/* Writes the last partial bytes; returns the total byte count. */
GB_HD df_u32 df_flush(df_bits *bw)
{
    while (bw->cnt > 0) {
        bw->out[bw->pos++] = (df_u8)bw->buf;
        bw->buf >>= 8;
        bw->cnt = bw->cnt > 8 ? bw->cnt - 8 : 0;
    }
    return bw->pos;
}

/* Parse state: the sequences found so far and the literal run open. */
typedef struct {
    df_near *nr;
    df_far *fr;
    const df_u8 *in;
    df_u32 nseq;
    df_u32 lit_start; /* first position of the open literal run */
} df_parse;

/* Records a match of len bytes at distance dist starting at pos. */
GB_HD void df_emit_match(df_parse *ps, df_u32 pos, df_u32 len, df_u32 dist)
{
    df_u32 eb, ev;
    df_far *fr = ps->fr;
    fr->seq_lits[ps->nseq] = (df_u16)(pos - ps->lit_start);
    fr->seq_len[ps->nseq] = (df_u8)(len - 3);
    fr->seq_dist[ps->nseq] = (df_u16)dist;
    ps->nseq++;
    ps->nr->lit_freq[df_len_sym(len, &eb, &ev)]++;
    ps->nr->dist_freq[df_dist_sym(dist, &eb, &ev)]++;
    ps->lit_start = pos + len;
}

/* Whether a match of len bytes at distance dist is worth its bits. */
GB_HD int df_worth(df_u32 len, df_u32 dist)
{
    return len > DF_MIN_MATCH || (len == DF_MIN_MATCH && dist <= DF_FAR3);
}

/* Level 1: greedy parse, one candidate per position (the latest one with
 * the same 4-byte hash), every position hashed. */
GB_HD void df_parse_fast(df_parse *ps, df_u32 n)
{
    const df_u8 *in = ps->in;
    df_u16 *head = ps->nr->head;
    df_u32 *lit_freq = ps->nr->lit_freq;
    df_u32 p = 0;
    if (n >= 4) {
        df_u32 last = n - 4; /* last position with 4 bytes to hash */
        while (p <= last) {
            df_u32 x = df_load32(in + p);
            df_u32 h = df_hash(x);
            df_u32 cand = head[h];
            head[h] = (df_u16)(p + 1);
            if (cand && p - (cand - 1) <= DF_MAX_DIST && df_load32(in + cand - 1) == x) {
                df_u32 c = cand - 1;
                df_u32 max = n - p < DF_MAX_MATCH ? n - p : DF_MAX_MATCH;
                df_u32 len = 4 + df_match_len(in + c + 4, in + p + 4, max - 4);
                df_emit_match(ps, p, len, p - c);
                df_u32 end = p + len;
                for (p++; p < end && p <= last; p++)
                    head[df_hash(df_load32(in + p))] = (df_u16)(p + 1);
                p = end;
                continue;
            }
            lit_freq[in[p]]++;
            p++;
        }
    }
    for (; p < n; p++)
        lit_freq[in[p]]++;
}

/* Inserts position p (3 bytes hashed) into the chains; returns the previous
 * head (position + 1, 0 for none). */
GB_HD df_u32 df_insert(df_parse *ps, df_u32 p)
{
    const df_u8 *in = ps->in;
    df_u32 h = df_hash((df_u32)in[p] | (df_u32)in[p + 1] << 8 | (df_u32)in[p + 2] << 16);
    df_u32 cand = ps->nr->head[h];
    ps->fr->prev[p & (DF_WINDOW - 1)] = (df_u16)cand;
    ps->nr->head[h] = (df_u16)(p + 1);
    return cand;
}

/* Walks the chain from cand (position + 1) for a match at p longer than
 * best, examining at most chain candidates; returns the best length found
 * (best itself when none is longer) and its distance in *dist. */
GB_HD df_u32 df_search(const df_parse *ps, df_u32 p, df_u32 n, df_u32 cand, df_u32 chain,
                       df_u32 nice, df_u32 best, df_u32 *dist)
{
    const df_u8 *in = ps->in;
    df_u32 max = n - p < DF_MAX_MATCH ? n - p : DF_MAX_MATCH;
    if (nice > max)
        nice = max;
    while (cand && chain-- > 0 && best < max) {
        df_u32 c = cand - 1;
        if (p - c > DF_MAX_DIST)
            break;
        if (in[c + best] == in[p + best] && in[c] == in[p] && in[c + 1] == in[p + 1]) {
            df_u32 len = df_match_len(in + c, in + p, max);
            if (len > best) {
                best = len;
                *dist = p - c;
                if (len >= nice)
                    break;
            }
        }
        cand = ps->fr->prev[c & (DF_WINDOW - 1)];
    }
    return best;
}

/* Inserts the positions from..to-1 that have 3 bytes to hash. */
GB_HD void df_insert_range(df_parse *ps, df_u32 from, df_u32 to, df_u32 n)
{
    if (n < DF_MIN_MATCH)
        return;
    if (to > n - 2)
        to = n - 2;
    for (df_u32 q = from; q < to; q++)
        df_insert(ps, q);
}

/* Levels 2..9: hash-chain parse, greedy or lazy by lp->lazy. */
GB_HD void df_parse_chain(df_parse *ps, df_u32 n, const df_level *lp)
{
    const df_u8 *in = ps->in;
    df_u32 *lit_freq = ps->nr->lit_freq;
    df_u32 held_len = 0, held_dist = 0; /* a match deferred from p - 1 */
    df_u32 p = 0;
    while (p < n) {
        df_u32 len = 0, dist = 0;
        if (p + DF_MIN_MATCH <= n) {
            df_u32 cand = df_insert(ps, p);
            df_u32 chain = held_len >= lp->good ? lp->chain / 4 : lp->chain;
            df_u32 floor = held_len ? held_len : DF_MIN_MATCH - 1;
            len = df_search(ps, p, n, cand, chain, lp->nice, floor, &dist);
            if (len <= floor || !df_worth(len, dist))
                len = 0;
        }
        if (held_len) {
            if (len) {
                /* A longer match one byte on: p - 1 becomes a literal. */
                lit_freq[in[p - 1]]++;
                held_len = len, held_dist = dist;
                if (held_len >= lp->lazy) {
                    df_emit_match(ps, p, held_len, held_dist);
                    df_insert_range(ps, p + 1, p + held_len, n);
                    p += held_len;
                    held_len = 0;
                } else {
                    p++;
                }
            } else {
                df_emit_match(ps, p - 1, held_len, held_dist);
                df_insert_range(ps, p + 1, p - 1 + held_len, n);
                p += held_len - 1;
                held_len = 0;
            }
        } else if (len && len >= lp->lazy) {
            df_emit_match(ps, p, len, dist);
            df_insert_range(ps, p + 1, p + len, n);
            p += len;
        } else if (len) {
            held_len = len, held_dist = dist;
            p++;
        } else {
            lit_freq[in[p]]++;
            p++;
        }
    }
}

/* Puts code-length symbol t with extra bits' value e at k of sym[] and
 * extra[] when sym is not NULL; returns k + 1. */
GB_HD df_u32 df_put_token(df_u8 *sym, df_u8 *extra, df_u32 k, df_u32 t, df_u32 e)
{
    if (sym)
        sym[k] = (df_u8)t, extra[k] = (df_u8)e;
    return k + 1;
}

/* The code-length symbols of a run of `run` equal code lengths v (16, 17
 * and 18 for repeats): returns their number and, when sym is not NULL,
 * writes them to sym[] and their extra bits' values to extra[]. */
GB_HD df_u32 df_run_tokens(df_u32 v, df_u32 run, df_u8 *sym, df_u8 *extra)
{
    df_u32 k = 0;
    if (v == 0) {
        while (run >= 11) {
            df_u32 r = run < 138 ? run : 138;
            k = df_put_token(sym, extra, k, 18, r - 11);
            run -= r;
        }
        if (run >= 3) {
            k = df_put_token(sym, extra, k, 17, run - 3);
            run = 0;
        }
    } else {
        k = df_put_token(sym, extra, k, v, 0);
        run--;
        while (run >= 3) {
            df_u32 r = run < 6 ? run : 6;
            k = df_put_token(sym, extra, k, 16, r - 3);
            run -= r;
        }
    }
    DF_ROLLED
    for (; run > 0; run--)
        k = df_put_token(sym, extra, k, v, 0);
    return k;
}

/* The length of the run of equal code lengths that starts at i of
 * nr->cw.all_len[0..total). */
GB_HD df_u32 df_run_length(const df_near *nr, df_u32 i, df_u32 total)
{
    df_u32 run = 1;
    while (i + run < total && nr->cw.all_len[i + run] == nr->cw.all_len[i])
        run++;
    return run;
}

/* Run-length codes the code lengths of the lit/len and distance codes
 * (nr->cw.all_len[0..total)) into nr->cw.clen_sym/extra; returns the
 * number of symbols and counts them in nr->clen_freq. */
GB_HD df_u32 df_code_lengths(df_near *nr, df_u32 total)
{
    df_u32 k = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < DF_CLEN_SYMS; i++)
        nr->clen_freq[i] = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < total;) {
        df_u32 run = df_run_length(nr, i, total);
        k += df_run_tokens(nr->cw.all_len[i], run, nr->cw.clen_sym + k, nr->cw.clen_extra + k);
        i += run;
    }
    DF_ROLLED
    for (df_u32 i = 0; i < k; i++)
        nr->clen_freq[nr->cw.clen_sym[i]]++;
    return k;
}

/* Extra bits of code-length symbol 16, 17 or 18 (0 for the others). */
GB_HD df_u32 df_clen_extra_bits(df_u32 sym)
{
    return sym == 16 ? 2 : sym == 17 ? 3 : sym == 18 ? 7 : 0;
}

/* Fixed-code length of lit/len symbol s (RFC 1951 3.2.6). */
GB_HD df_u32 df_fixed_lit_len(df_u32 s)
{
    return s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
}

/* Order in which the code-length code's lengths are sent. */
GB_HD df_u32 df_clen_order(df_u32 i)
{
    const df_u8 order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    return order[i];
}

/* Writes the parsed symbols with the given codes, then end-of-block. */
GB_HD void df_write_symbols(df_bits *bw, const df_parse *ps, df_u32 n, const df_u16 *lc,
                            const df_u8 *ll, const df_u16 *dc, const df_u8 *dl)
{
    const df_u8 *in = ps->in;
    const df_far *fr = ps->fr;
    df_u32 p = 0;
    for (df_u32 s = 0; s < ps->nseq; s++) {
        for (df_u32 end = p + fr->seq_lits[s]; p < end; p++)
            df_put(bw, lc[in[p]], ll[in[p]]);
        df_u32 len = fr->seq_len[s] + 3u, dist = fr->seq_dist[s], eb, ev;
        df_u32 sym = df_len_sym(len, &eb, &ev);
        df_put(bw, lc[sym] | ev << ll[sym], ll[sym] + eb);
        sym = df_dist_sym(dist, &eb, &ev);
        df_put(bw, dc[sym] | ev << dl[sym], dl[sym] + eb);
        p += len;
    }
    for (; p < n; p++)
        df_put(bw, lc[in[p]], ll[in[p]]);
    df_put(bw, lc[DF_END_BLOCK], ll[DF_END_BLOCK]);
}

#define DF_DATA_SYMS (286u + DF_DIST_SYMS) /* lit/len symbols, then distance symbols */

/* Adds the bits of data symbol s (lit/len s < 286, else distance s - 286)
 * in the parsed data, extra bits included, under the dynamic lengths
 * (nr->lit_len, nr->dist_len) to *dyn and under the fixed code to *fixed. */
GB_HD void df_symbol_bits(const df_near *nr, df_u32 s, df_u64 *dyn, df_u64 *fixed)
{
    if (s < 286) {
        df_u32 e = s > DF_END_BLOCK ? df_len_sym_extra(s) : 0;
        *dyn += (df_u64)nr->lit_freq[s] * (nr->lit_len[s] + e);
        *fixed += (df_u64)nr->lit_freq[s] * (df_fixed_lit_len(s) + e);
    } else {
        df_u32 d = s - 286, e = df_dist_sym_extra(d);
        *dyn += (df_u64)nr->dist_freq[d] * (nr->dist_len[d] + e);
        *fixed += (df_u64)nr->dist_freq[d] * (5u + e);
    }
}

/* How a parsed block is sent: the block type chosen by exact bit count and,
 * for a dynamic block, the sizes of its header. */
typedef struct {
    df_u32 type; /* 0 stored, 1 fixed Huffman, 2 dynamic Huffman */
    df_u32 hlit, hdist, hclen, ntok;
} df_plan;

/* The lit/len and distance codes' lengths a dynamic block sends: pl->hlit
 * and pl->hdist, the unused codes at their ends left out. */
GB_HD void df_plan_sizes(const df_near *nr, df_plan *pl)
{
    df_u32 hlit = 286, hdist = DF_DIST_SYMS;
    while (hlit > 257 && !nr->lit_len[hlit - 1])
        hlit--;
    while (hdist > 1 && !nr->dist_len[hdist - 1])
        hdist--;
    pl->hlit = hlit, pl->hdist = hdist;
}

/* The i-th code length sent (the lit/len codes', then the distance codes'). */
GB_HD df_u8 df_sent_len(const df_near *nr, const df_plan *pl, df_u32 i)
{
    return i < pl->hlit ? nr->lit_len[i] : nr->dist_len[i - pl->hlit];
}

/* Once the code-length code is built: pl->hclen, and the bits of the code
 * description. */
GB_HD df_u64 df_plan_header_bits(const df_near *nr, df_plan *pl)
{
    df_u32 hclen = DF_CLEN_SYMS;
    while (hclen > 4 && !nr->clen_len[df_clen_order(hclen - 1)])
        hclen--;
    df_u64 bits = 3 + 5 + 5 + 4 + 3 * (df_u64)hclen;
    DF_ROLLED
    for (df_u32 s = 0; s < DF_CLEN_SYMS; s++)
        bits += (df_u64)nr->clen_freq[s] * (nr->clen_len[s] + df_clen_extra_bits(s));
    pl->hclen = hclen;
    return bits;
}

/* The code description of a dynamic block whose lit/len and distance code
 * lengths are built: the sizes and run-length coded lengths in pl and nr,
 * the code-length code's lengths; returns the header's bits. */
GB_HD df_u64 df_plan_header(df_near *nr, df_plan *pl)
{
    df_plan_sizes(nr, pl);
    DF_ROLLED
    for (df_u32 i = 0; i < pl->hlit + pl->hdist; i++)
        nr->cw.all_len[i] = df_sent_len(nr, pl, i);
    pl->ntok = df_code_lengths(nr, pl->hlit + pl->hdist);
    df_build_lengths(nr->clen_freq, DF_CLEN_SYMS, DF_MAX_CLEN_BITS, nr->clen_len, &nr->cw.hs);
    return df_plan_header_bits(nr, pl);
}

/* Picks the type of a block of n bytes from its bits sent dynamic (header
 * and data) and fixed (data): stored when neither would shrink it below
 * DF_OUT_BOUND(n) bytes, else the smaller (dynamic on a tie); for a fixed
 * block, puts the fixed code's lengths in nr->lit_len and nr->dist_len. */
GB_HD void df_plan_type(df_near *nr, df_u32 n, df_plan *pl, df_u64 dyn_bits, df_u64 fixed_bits)
{
    df_u64 best_bits = dyn_bits <= fixed_bits ? dyn_bits : fixed_bits;
    if ((best_bits + 7) / 8 >= DF_OUT_BOUND(n)) {
        pl->type = 0;
    } else if (dyn_bits <= fixed_bits) {
        pl->type = 2;
    } else {
        pl->type = 1;
        DF_ROLLED
        for (df_u32 s = 0; s < DF_LITLEN_SYMS; s++)
            nr->lit_len[s] = (df_u8)df_fixed_lit_len(s);
        DF_ROLLED
        for (df_u32 s = 0; s < DF_DIST_SYMS; s++)
            nr->dist_len[s] = 5;
    }
}

/* Builds the codes of a parsed block (nr->lit_freq with end-of-block
 * counted, nr->dist_freq) and picks its type (df_plan_type). On return
 * nr->lit_len/lit_code and nr->dist_len/dist_code hold the chosen code
 * (unset when stored). */
GB_HD void df_plan_block(df_near *nr, df_u32 n, df_plan *pl)
{
    df_build_lengths(nr->lit_freq, 286, DF_MAX_BITS, nr->lit_len, &nr->cw.hs);
    df_build_lengths(nr->dist_freq, DF_DIST_SYMS, DF_MAX_BITS, nr->dist_len, &nr->cw.hs);
    df_u64 dyn_bits = df_plan_header(nr, pl), fixed_bits = 3;
    DF_ROLLED
    for (df_u32 s = 0; s < DF_DATA_SYMS; s++)
        df_symbol_bits(nr, s, &dyn_bits, &fixed_bits);
    df_plan_type(nr, n, pl, dyn_bits, fixed_bits);
    if (pl->type == 2)
        df_build_codes(nr->clen_len, DF_CLEN_SYMS, nr->clen_code);
    if (pl->type) {
        df_build_codes(nr->lit_len, pl->type == 2 ? 286 : DF_LITLEN_SYMS, nr->lit_code);
        df_build_codes(nr->dist_len, DF_DIST_SYMS, nr->dist_code);
    }
}

/* Writes the block header of a fixed or dynamic plan (BFINAL, BTYPE and,
 * when dynamic, the code description). */
GB_HD void df_write_header(df_bits *bw, const df_near *nr, const df_plan *pl)
{
    if (pl->type == 1) {
        df_put(bw, 1 | 1 << 1, 3);
        return;
    }
    df_put(bw, 1 | 2 << 1, 3);
    df_put(bw, (pl->hlit - 257) | (pl->hdist - 1) << 5 | (pl->hclen - 4) << 10, 14);
    DF_ROLLED
    for (df_u32 i = 0; i < pl->hclen; i++)
        df_put(bw, nr->clen_len[df_clen_order(i)], 3);
    DF_ROLLED
    for (df_u32 i = 0; i < pl->ntok; i++) {
        df_u32 s = nr->cw.clen_sym[i];
        df_put(bw, nr->clen_code[s] | (df_u32)nr->cw.clen_extra[i] << nr->clen_len[s],
               nr->clen_len[s] + df_clen_extra_bits(s));
    }
}

/* Writes the 5-byte header of a stored block of n bytes (BFINAL=1,
 * BTYPE=00, LEN, NLEN); the n bytes follow it. */
GB_HD void df_stored_header(df_u8 *out, df_u32 n)
{
    out[0] = 1;
    out[1] = (df_u8)n, out[2] = (df_u8)(n >> 8);
    out[3] = (df_u8)~n, out[4] = (df_u8)(~n >> 8);
}

/* Compresses in[0..n), n <= DF_BLOCK_MAX, at level 1..9 (other values
 * read as the nearest) into out, which holds DF_OUT_BOUND(n) bytes, as a
 * raw deflate stream of one final block; returns its length in bytes. */
GB_HD df_u32 df_compress(df_near *nr, df_far *fr, const df_u8 *in, df_u32 n, int level,
                         df_u8 *out)
{
    df_parse ps;
    ps.nr = nr, ps.fr = fr, ps.in = in, ps.nseq = 0, ps.lit_start = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < DF_HASH_SIZE; i++)
        nr->head[i] = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < DF_LITLEN_SYMS; i++)
        nr->lit_freq[i] = 0;
    DF_ROLLED
    for (df_u32 i = 0; i < DF_DIST_SYMS; i++)
        nr->dist_freq[i] = 0;
    if (level <= 1) {
        df_parse_fast(&ps, n);
    } else {
        df_level lp;
        df_level_params(level, &lp);
        df_parse_chain(&ps, n, &lp);
    }
    nr->lit_freq[DF_END_BLOCK] = 1;

    df_plan pl;
    df_plan_block(nr, n, &pl);
    if (pl.type == 0) {
        df_stored_header(out, n);
        DF_ROLLED
        for (df_u32 i = 0; i < n; i++)
            out[5 + i] = in[i];
        return DF_OUT_BOUND(n);
    }
    df_bits bw;
    bw.out = out, bw.pos = 0, bw.buf = 0, bw.cnt = 0;
    df_write_header(&bw, nr, &pl);
    df_write_symbols(&bw, &ps, n, nr->lit_code, nr->lit_len, nr->dist_code, nr->dist_len);
    return df_flush(&bw);
}

#define DF_MEMBER_HEADER BGZF_HEADER_LEN /* gzip header with the 6-byte BC extra field */
#define DF_MEMBER_TRAILER BGZF_TRAILER_LEN /* CRC-32 and ISIZE */
#define DF_MEMBER_BOUND(n) (DF_MEMBER_HEADER + DF_OUT_BOUND(n) + DF_MEMBER_TRAILER)

/* Stores v little-endian in nbytes bytes. */
GB_HD void df_put_le(df_u8 *p, df_u32 v, df_u32 nbytes)
{
    for (df_u32 i = 0; i < nbytes; i++)
        p[i] = (df_u8)(v >> (8 * i));
}

/* The 32 bits that start shift bits (0, 8, 16 or 24) into the 64 bits
 * hi:lo. */
GB_HD df_u32 df_funnel(df_u32 lo, df_u32 hi, df_u32 shift)
{
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, shift);
#else
    return shift ? lo >> shift | hi << (32u - shift) : lo;
#endif
}

/* Copies n bytes from src (4-byte aligned, readable up to the word holding
 * its last byte) to dst (any alignment) as thread t of nthreads: 16-byte
 * stores wherever dst allows, since dst may be pinned host memory that
 * each store reaches as one transaction over the bus. */
GB_HD void df_copy_out(df_u8 *DF_RESTRICT dst, const df_u8 *DF_RESTRICT src, df_u32 n, df_u32 t,
                       df_u32 nthreads)
{
    df_u32 lead = (df_u32)(-(df_u64)dst & 15u); /* bytes before dst is aligned */
    if (lead > n)
        lead = n;
    df_u32 wide = (n - lead) / 16u, shift = 8u * (lead & 3u);
    for (df_u32 i = t; i < lead; i += nthreads)
        dst[i] = src[i];
    const df_u32 *w = (const df_u32 *)(src + (lead & ~3u));
#ifdef __CUDACC__
    uint4 *out = (uint4 *)(dst + lead);
#else
    df_u32 *out = (df_u32 *)(dst + lead);
#endif
    for (df_u32 k = t; k < wide; k += nthreads) {
        const df_u32 *p = w + 4u * k;
        df_u32 w0 = p[0], w1 = p[1], w2 = p[2], w3 = p[3], w4 = shift ? p[4] : 0u;
#ifdef __CUDACC__
        out[k] = make_uint4(df_funnel(w0, w1, shift), df_funnel(w1, w2, shift),
                            df_funnel(w2, w3, shift), df_funnel(w3, w4, shift));
#else
        out[4u * k] = df_funnel(w0, w1, shift);
        out[4u * k + 1u] = df_funnel(w1, w2, shift);
        out[4u * k + 2u] = df_funnel(w2, w3, shift);
        out[4u * k + 3u] = df_funnel(w3, w4, shift);
#endif
    }
    for (df_u32 i = lead + 16u * wide + t; i < n; i += nthreads)
        dst[i] = src[i];
}

/* Writes in[0..n), n <= DF_BLOCK_MAX, as one complete BGZF member into out
 * (DF_MEMBER_BOUND(n) bytes): the gzip header (FEXTRA, MTIME 0, XFL 0, OS
 * 255, the BC subfield holding the member's size - 1), the deflate data at
 * level, crc (the CRC-32 of the data, computed by the caller) and n;
 * returns the member's size. */
GB_HD df_u32 df_bgzf_member(df_near *nr, df_far *fr, const df_u8 *in, df_u32 n, int level,
                            df_u32 crc, df_u8 *out)
{
    const df_u8 header[BGZF_BSIZE_AT] = {BGZF_HEADER_BYTES};
    for (df_u32 i = 0; i < BGZF_BSIZE_AT; i++)
        out[i] = header[i];
    df_u32 body = df_compress(nr, fr, in, n, level, out + DF_MEMBER_HEADER);
    df_u32 total = DF_MEMBER_HEADER + body + DF_MEMBER_TRAILER;
    df_put_le(out + BGZF_BSIZE_AT, total - 1, 2);
    df_put_le(out + DF_MEMBER_HEADER + body, crc, 4);
    df_put_le(out + DF_MEMBER_HEADER + body + 4, n, 4);
    return total;
}

#endif
