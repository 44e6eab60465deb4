/* test_deflate.c - the deflate encoder of ptx/deflate_math.h: round trips
 * through zlib's inflate on adversarial data at every level and at the
 * block-size edges, determinism whatever the workspace held before, the
 * stored fallback, the block-type choice and the length-limited codes; the
 * warp encoder of ptx/deflate_warp.h (its 32 lanes run in turn, as the
 * header's phases allow) against df_compress at level 1, byte for byte;
 * df_copy_out, which lays the members out, against memcpy. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ptx/deflate_math.h"
#include "ptx/deflate_warp.h"
#include "check.h"
#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

static df_near near_a, near_b;
static df_far far_a, far_b;
static uint8_t out_a[DF_OUT_BOUND(DF_BLOCK_MAX)], out_b[DF_OUT_BOUND(DF_BLOCK_MAX)];
static uint8_t back[DF_BLOCK_MAX + 1];


enum kind { K_RANDOM, K_ZEROS, K_RUNS, K_PERIOD3, K_FLOAT, K_TEXT, K_MIXED, K_COUNT };
static const char *const kind_name[K_COUNT] = {"random", "zeros",  "runs", "period-3",
                                               "float",  "text", "mixed"};

/* Fills buf with n bytes of the given kind. */
static void fill(uint8_t *buf, size_t n, enum kind k)
{
    static const char *const words[] = {"the ", "deflate ", "block ", "of ", "gzip ",
                                        "data\n", "a ", "matches ", "literal ", ", "};
    size_t i = 0;
    while (i < n) {
        uint64_t r = rnd();
        switch (k) {
        case K_RANDOM:
            buf[i++] = (uint8_t)r;
            break;
        case K_ZEROS:
            buf[i++] = 0;
            break;
        case K_RUNS: /* runs of 1..1000 equal bytes */
            for (size_t run = 1 + (r >> 8) % 1000; run > 0 && i < n; run--)
                buf[i++] = (uint8_t)r;
            break;
        case K_PERIOD3:
            buf[i] = (uint8_t)("xyz"[i % 3]);
            i++;
            break;
        case K_FLOAT: { /* float32 of a normal-like spread, little-endian */
            double u = ((r >> 11) + 0.5) * 0x1p-53, v = ((rnd() >> 11) + 0.5) * 0x1p-53;
            float f = (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
            uint32_t bits;
            memcpy(&bits, &f, 4);
            for (int b = 0; b < 4 && i < n; b++)
                buf[i++] = (uint8_t)(bits >> (8 * b));
            break;
        }
        case K_TEXT:
            for (const char *w = words[r % 10]; *w && i < n; w++)
                buf[i++] = (uint8_t)*w;
            break;
        default: /* stretches of the other kinds, each up to 5000 bytes */
        {
            size_t len = 1 + (r >> 16) % 5000;
            if (len > n - i)
                len = n - i;
            fill(buf + i, len, (enum kind)((r >> 8) % K_MIXED));
            i += len;
        }
        }
    }
}

/* Inflates a raw deflate stream with zlib; returns the byte count, or -1
 * when zlib refuses it or it does not end exactly at the last byte. */
static long inflate_raw(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -15) != Z_OK)
        return -1;
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int rc = inflate(&zs, Z_FINISH);
    long n = (rc == Z_STREAM_END && zs.avail_in == 0) ? (long)zs.total_out : -1;
    inflateEnd(&zs);
    return n;
}

/* Compresses data at level with workspace A (poisoned with 0xA5) and again
 * with B (poisoned with 0x5A, then used on other data), checks both give
 * the same bytes, within the bound, that inflate back to data; returns the
 * compressed length (0 on failure). */
static size_t check_block(const uint8_t *data, size_t n, int level, const char *what)
{
    memset(&near_a, 0xA5, sizeof(near_a));
    memset(&far_a, 0xA5, sizeof(far_a));
    memset(&near_b, 0x5A, sizeof(near_b));
    memset(&far_b, 0x5A, sizeof(far_b));
    uint8_t junk[3000];
    fill(junk, sizeof(junk), K_TEXT);
    df_compress(&near_b, &far_b, junk, sizeof(junk), 9, out_b);
    size_t la = df_compress(&near_a, &far_a, data, (df_u32)n, level, out_a);
    size_t lb = df_compress(&near_b, &far_b, data, (df_u32)n, level, out_b);
    int ok = la == lb && !memcmp(out_a, out_b, la);
    CHECKF(ok, "%s, %zu bytes, level %d: output depends on the workspace", what, n, level);
    CHECKF(la <= DF_OUT_BOUND(n), "%s, %zu bytes, level %d: %zu bytes out", what, n, level, la);
    long got = inflate_raw(out_a, la, back, sizeof(back));
    int same = got == (long)n && !memcmp(back, data, n);
    CHECKF(same, "%s, %zu bytes, level %d: round trip gave %ld bytes", what, n, level, got);
    return ok && same ? la : 0;
}

/* Every kind of data at the block-size edges and every level. */
static void test_round_trips(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 258, 259, 262, 32768, 32769, 65279, 65280};
    uint8_t *data = malloc(DF_BLOCK_MAX);
    for (int k = 0; k < K_COUNT; k++) {
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
            fill(data, sizes[si], (enum kind)k);
            for (int level = 1; level <= 9; level++)
                check_block(data, sizes[si], level, kind_name[k]);
        }
    }
    free(data);
}

/* Matches at the window's far edge and across it: a random stretch repeated
 * at distances 32766..32769 (only up to DF_MAX_DIST may be used). */
static void test_far_matches(void)
{
    uint8_t *data = malloc(DF_BLOCK_MAX);
    for (size_t gap = 32766; gap <= 32769; gap++) {
        fill(data, DF_BLOCK_MAX, K_RANDOM);
        memcpy(data + gap, data, DF_BLOCK_MAX - gap);
        for (int level = 1; level <= 9; level += 4) {
            size_t len = check_block(data, DF_BLOCK_MAX, level, "far repeat");
            if (gap <= DF_MAX_DIST)
                CHECKF(len && len < DF_BLOCK_MAX - gap / 2, "gap %zu level %d: %zu bytes", gap,
                       level, len);
        }
    }
    free(data);
}

/* Incompressible data is stored (BTYPE 00, exactly n + 5 bytes); empty and
 * tiny blocks use the fixed code; repetitive data the dynamic one. */
static void test_block_types(void)
{
    uint8_t *data = malloc(DF_BLOCK_MAX);
    static const size_t sizes[] = {100, 4096, 65280};
    for (size_t si = 0; si < 3; si++) {
        fill(data, sizes[si], K_RANDOM);
        for (int level = 1; level <= 9; level += 8) {
            size_t len = check_block(data, sizes[si], level, "random");
            CHECKF(len == sizes[si] + 5 && out_a[0] == 1, "random %zu: %zu bytes, type %d",
                   sizes[si], len, (out_a[0] >> 1) & 3);
        }
    }
    CHECK(check_block(data, 0, 1, "empty") == 2 && (out_a[0] & 7) == 3);
    memcpy(data, "hello", 5);
    CHECK(check_block(data, 5, 6, "hello") && (out_a[0] & 7) == 3);
    fill(data, DF_BLOCK_MAX, K_TEXT);
    size_t text1 = check_block(data, DF_BLOCK_MAX, 1, "text");
    CHECK(text1 && (out_a[0] & 7) == 5);
    /* More effort, smaller output on text. */
    size_t text6 = check_block(data, DF_BLOCK_MAX, 6, "text");
    size_t text9 = check_block(data, DF_BLOCK_MAX, 9, "text");
    CHECKF(text9 <= text6 && text6 < text1, "text sizes %zu %zu %zu", text1, text6, text9);
    fill(data, DF_BLOCK_MAX, K_ZEROS);
    CHECK(check_block(data, DF_BLOCK_MAX, 1, "zeros") < 200);
    free(data);
}

/* Checks lengths from df_build_lengths: none over maxlen, every used symbol
 * coded, and the code complete (Kraft sum exactly 1). */
static void check_lengths(const df_u32 *freq, df_u32 n, df_u32 maxlen, const char *what)
{
    static df_huff_scratch hs;
    df_u8 len[DF_LITLEN_SYMS];
    memset(&hs, 0xee, sizeof(hs));
    df_build_lengths(freq, n, maxlen, len, &hs);
    uint64_t kraft = 0;
    int ok = 1, coded = 0;
    for (df_u32 i = 0; i < n; i++) {
        ok &= len[i] <= maxlen && (!freq[i] || len[i]);
        coded += len[i] != 0;
        if (len[i])
            kraft += 1ull << (maxlen - len[i]);
    }
    CHECKF(ok && coded >= 2 && kraft == 1ull << maxlen, "%s: lengths invalid (kraft %llu/%llu)",
           what, (unsigned long long)kraft, 1ull << maxlen);
}

/* Length limiting on Fibonacci frequencies (the deepest Huffman trees),
 * single and absent symbols, and random frequencies. */
static void test_code_lengths(void)
{
    df_u32 freq[DF_LITLEN_SYMS];
    memset(freq, 0, sizeof(freq));
    df_u32 a = 1, b = 1;
    for (int i = 0; i < 24; i++) {
        freq[i * 11] = a;
        df_u32 c = a + b;
        a = b, b = c;
    }
    check_lengths(freq, 286, DF_MAX_BITS, "fibonacci 24");
    check_lengths(freq, DF_CLEN_SYMS, DF_MAX_CLEN_BITS, "fibonacci in 19");
    memset(freq, 0, sizeof(freq));
    check_lengths(freq, DF_DIST_SYMS, DF_MAX_BITS, "no symbol");
    freq[7] = 1000;
    check_lengths(freq, DF_DIST_SYMS, DF_MAX_BITS, "one symbol");
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 286; i++)
            if (rnd() % 4) {
                unsigned bits = (unsigned)(rnd() % 17);
                freq[i] = (df_u32)(rnd() % (1u << bits));
            } else {
                freq[i] = 0;
            }
        check_lengths(freq, 286, DF_MAX_BITS, "random");
        check_lengths(freq, DF_CLEN_SYMS, DF_MAX_CLEN_BITS, "random clen");
    }
}

/* The length and distance symbols against RFC 1951's tables of bases. */
static void test_symbols(void)
{
    static const unsigned len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10,  11,  13,
                                          15, 17, 19, 23, 27, 31, 35, 43,  51,  59,
                                          67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const unsigned dist_base[30] = {1,    2,    3,    4,    5,    7,     9,    13,
                                           17,   25,   33,   49,   65,   97,    129,  193,
                                           257,  385,  513,  769,  1025, 1537,  2049, 3073,
                                           4097, 6145, 8193, 12289, 16385, 24577};
    int bad = 0;
    for (unsigned len = 3; len <= 258; len++) {
        df_u32 eb, ev, s = df_len_sym(len, &eb, &ev);
        bad += s < 257 || s > 285 || len_base[s - 257] + ev != len || eb != df_len_sym_extra(s) ||
               ev >> eb;
    }
    for (unsigned d = 1; d <= 32768; d++) {
        df_u32 eb, ev, s = df_dist_sym(d, &eb, &ev);
        bad += s > 29 || dist_base[s] + ev != d || eb != df_dist_sym_extra(s) || ev >> eb;
    }
    CHECKF(bad == 0, "%d symbols differ from RFC 1951", bad);
}

/* df_match_len (8 bytes at a time on the host, bytewise on a GPU) against a
 * plain byte loop, for every mismatch position and limit around the word
 * edges. */
static void test_match_len(void)
{
    uint8_t a[300], b[300];
    int bad = 0;
    for (int round = 0; round < 2000; round++) {
        fill(a, sizeof(a), K_RANDOM);
        memcpy(b, a, sizeof(b));
        size_t diff = rnd() % sizeof(b);
        b[diff] ^= (uint8_t)(1 + rnd() % 255);
        df_u32 max = (df_u32)(rnd() % 259);
        df_u32 want = 0;
        while (want < max && a[want] == b[want])
            want++;
        bad += df_match_len(a, b, max) != want;
    }
    CHECKF(bad == 0, "%d match lengths wrong", bad);
}

/* Level 1's parse, computed the way a GPU may: first every position's
 * candidate from the input alone (the latest earlier position with the
 * same hash, all positions hashed), then the greedy walk over those
 * candidates. Its matches must be exactly df_parse_fast's. */
static void test_fast_parse_input_defined(void)
{
    static df_u32 cand[DF_BLOCK_MAX];
    static df_u32 head[DF_HASH_SIZE];
    static const size_t sizes[] = {3, 4, 5, 300, 32769, 65280};
    uint8_t *data = malloc(DF_BLOCK_MAX);
    int bad = 0, runs = 0;
    for (int k = 0; k < K_COUNT; k++) {
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
            df_u32 n = (df_u32)sizes[si];
            fill(data, n, (enum kind)k);
            for (df_u32 h = 0; h < DF_HASH_SIZE; h++)
                head[h] = 0;
            for (df_u32 p = 0; p + 4 <= n; p++) {
                df_u32 h = df_hash(df_load32(data + p));
                cand[p] = head[h];
                head[h] = p + 1;
            }
            memset(&near_a, 0xA5, sizeof(near_a));
            memset(&far_a, 0xA5, sizeof(far_a));
            memset(near_a.head, 0, sizeof(near_a.head));
            df_parse ps = {&near_a, &far_a, data, 0, 0};
            df_parse_fast(&ps, n);
            df_u32 p = 0, seq = 0, lits = 0;
            while (p + 4 <= n) {
                df_u32 c = cand[p];
                if (c && p - (c - 1) <= DF_MAX_DIST && !memcmp(data + c - 1, data + p, 4)) {
                    df_u32 max = n - p < DF_MAX_MATCH ? n - p : DF_MAX_MATCH, len = 0;
                    while (len < max && data[c - 1 + len] == data[p + len])
                        len++;
                    bad += seq >= ps.nseq || far_a.seq_lits[seq] != lits ||
                           far_a.seq_len[seq] + 3u != len || far_a.seq_dist[seq] != p - (c - 1);
                    seq++;
                    p += len;
                    lits = 0;
                } else {
                    p++;
                    lits++;
                }
            }
            bad += seq != ps.nseq;
            runs++;
        }
    }
    CHECKF(bad == 0, "%d differences in %d level-1 parses", bad, runs);
    free(data);
}

/* df_bgzf_member: a gzip member that zlib's gzip decoder accepts (header,
 * CRC and size checked), whose BC field holds its size - 1; a wrong CRC is
 * refused, so the caller's CRC is where gzip reads it. */
static void test_member(void)
{
    static uint8_t member[DF_MEMBER_BOUND(DF_BLOCK_MAX)];
    static const size_t sizes[] = {0, 1, 1000, 65280};
    uint8_t *data = malloc(DF_BLOCK_MAX);
    for (size_t si = 0; si < 4; si++) {
        for (int k = K_RANDOM; k <= K_TEXT; k += K_TEXT - K_RANDOM) {
            size_t n = sizes[si];
            fill(data, n, (enum kind)k);
            df_u32 crc = (df_u32)crc32(0L, data, (uInt)n);
            for (int wrong = 0; wrong <= 1; wrong++) {
                df_u32 len = df_bgzf_member(&near_a, &far_a, data, (df_u32)n, 1, crc ^ wrong, member);
                z_stream zs;
                memset(&zs, 0, sizeof(zs));
                inflateInit2(&zs, 31);
                zs.next_in = member, zs.avail_in = len;
                zs.next_out = back, zs.avail_out = sizeof(back);
                int rc = inflate(&zs, Z_FINISH);
                int good = rc == Z_STREAM_END && zs.avail_in == 0 && zs.total_out == n &&
                           !memcmp(back, data, n);
                inflateEnd(&zs);
                CHECKF(wrong ? rc == Z_DATA_ERROR : good, "%s member of %zu bytes, crc %s: rc %d",
                       kind_name[k], n, wrong ? "wrong" : "right", rc);
                CHECK(len <= DF_MEMBER_BOUND(n) && member[16] + 256u * member[17] == len - 1 &&
                      member[12] == 'B' && member[13] == 'C');
            }
        }
    }
    free(data);
}

/* The block encoder's bytes against df_compress at level 1 on every kind of
 * data and size (the block edges, the 32-position rounds' edges, blocks
 * too short for every lane to have a segment of the walk, random sizes),
 * its workspaces poisoned first with a different byte each time. */
static void test_block_encoder(void)
{
    static dw_shared sh;
    static dw_work wk;
    static df_u32 slot[DW_OUT_SLOT(DF_BLOCK_MAX) / 4];
    static const size_t sizes[] = {0,    1,    3,    4,     5,     31,    32,    33,    36,
                                   63,   64,   65,   258,   259,   1000,  1027,  1028,  1029,
                                   2051, 4096, 32767, 32768, 32769, 65247, 65248, 65279, 65280};
    const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    uint8_t *data = malloc(DF_BLOCK_MAX);
    int bad = 0, runs = 0;
    for (int k = 0; k < K_COUNT; k++) {
        for (size_t si = 0; si < nsizes + 4; si++) {
            size_t n = si < nsizes ? sizes[si] : 1 + rnd() % DF_BLOCK_MAX;
            fill(data, n, (enum kind)k);
            memset(&sh, (int)(si * 37 + 1), sizeof(sh));
            memset(&wk, (int)(si * 53 + 7), sizeof(wk));
            memset(slot, 0xC3, sizeof(slot));
            size_t want = df_compress(&near_a, &far_a, data, (df_u32)n, 1, out_a);
            size_t got = dw_compress_fast(&sh, &wk, data, (df_u32)n, (df_u8 *)slot);
            int same = got == want && !memcmp(slot, out_a, want);
            CHECKF(same, "%s, %zu bytes: block encoder gave %zu bytes, df_compress %zu",
                   kind_name[k], n, got, want);
            bad += !same;
            runs++;
        }
    }
    printf("block encoder (%u lanes): %d of %d blocks byte-identical to df_compress level 1\n",
           DW_T, runs - bad, runs);
    free(data);
}

/* df_copy_out, as dfk_gather runs it (every thread of a block in turn; and
 * with 1 and 7 threads): each destination alignment 0..15 and lengths
 * around the 16-byte stores and the 4-byte source words, against memcpy,
 * with guard bytes on both sides left as they were. */
static void test_copy_out(void)
{
    static const df_u32 lens[] = {0,  1,  2,  3,  4,  5,  15,  16,  17,   18,   19,   20,   31,
                                  32, 33, 35, 47, 48, 49, 63, 64, 65, 255, 1000, 4097, 65285};
    static const df_u32 threads[] = {256, 1, 7};
    const size_t guard = 32, most = 65285;
    df_u32 *src_words = malloc(most + 16); /* 4-byte aligned, a word past the end */
    df_u8 *src = (df_u8 *)src_words, *dst_mem = malloc(most + 2 * guard + 16);
    fill(src, most + 16, K_RANDOM);
    int bad = 0, runs = 0;
    for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (size_t mis = 0; mis < 16; mis++) {
                df_u32 n = lens[li];
                /* dst at mis bytes past a 16-byte boundary, guard bytes before it */
                df_u8 *base = (df_u8 *)(((uintptr_t)dst_mem + guard + 15) & ~(uintptr_t)15);
                df_u8 *dst = base + mis;
                memset(dst_mem, 0xA5, most + 2 * guard + 16);
                for (df_u32 t = 0; t < threads[ti]; t++)
                    df_copy_out(dst, src, n, t, threads[ti]);
                int ok = !memcmp(dst, src, n);
                for (df_u8 *g = dst_mem; g < dst; g++)
                    ok &= *g == 0xA5;
                for (df_u8 *g = dst + n; g < dst_mem + most + 2 * guard + 16; g++)
                    ok &= *g == 0xA5;
                CHECKF(ok, "df_copy_out of %u bytes to alignment %zu with %u threads", n, mis,
                       threads[ti]);
                bad += !ok;
                runs++;
            }
    printf("df_copy_out: %d of %d copies exact, nothing written around them\n", runs - bad, runs);
    free(src_words);
    free(dst_mem);
}

/* The shared memory carve-out asked for dfk_fast: the least percentage that
 * holds DW_CTAS_PER_SM workspaces and the driver's reserve of each, and all
 * of a multiprocessor too small for them or that does not tell its size. */
static void test_carveout(void)
{
    const size_t most = 228u << 10, reserve = 1024;
    size_t need = DW_CTAS_PER_SM * (sizeof(dw_shared) + reserve);
    unsigned pct = dw_carveout((int)most, (int)reserve);
    CHECKF(pct * most >= 100 * need && (pct - 1) * most < 100 * need,
           "carve-out %u%% of %zu bytes for %zu", pct, most, need);
    CHECK(dw_carveout(100 << 10, (int)reserve) == 100);
    CHECK(dw_carveout(0, (int)reserve) == 100);
}

int main(void)
{
    RUN(test_member);
    RUN(test_fast_parse_input_defined);
    RUN(test_symbols);
    RUN(test_match_len);
    RUN(test_code_lengths);
    RUN(test_block_types);
    RUN(test_far_matches);
    RUN(test_round_trips);
    RUN(test_block_encoder);
    RUN(test_carveout);
    RUN(test_copy_out);
    printf("workspace: %zu bytes near, %zu bytes far\n", DF_NEAR_BYTES, DF_FAR_BYTES);
    return check_summary();
}
