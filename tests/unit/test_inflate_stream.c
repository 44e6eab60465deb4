/* test_inflate_stream.c - one deflate stream decoded in segments
 * (ptx/inflate_stream.h, compiled for the host) under the plan of
 * io/gzip/stream_plan.c, as the GPU runs it, against zlib: data kinds, levels
 * and strategies, sync-flushed pieces, stored and fixed blocks, segments
 * down to a few hundred bytes, batches that end inside the stream, rooms
 * too small (split segments), the block finder against the host's, false
 * final blocks passed over, a final block that other bytes or another
 * gzip member follow, and
 * random corruptions (the plan gives up or the bytes are zlib's). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/gzip/inflate.h"
#include "tests/inflate_stream_host.h"
#include "check.h"
#define RND_SEED 0x2545f4914f6cdd1dull
#include "rnd.h"


/* Fills buf with data of kind k: float32 normal-like bytes, text, runs,
 * random bytes, or a mix. */
static void fill(uint8_t *buf, size_t n, int k)
{
    static const char words[][8] = {"the ", "gpu ", "batch ", "array ", "sum ", "of ", "and "};
    for (size_t i = 0; i < n;) {
        switch (k) {
        case 0: { /* float32 around 1: exponent bytes repeat, mantissas do not */
            float f = (float)((double)(rnd() % 2000001) / 1000000.0 - 1.0);
            for (size_t b = 0; b < 4 && i < n; b++)
                buf[i++] = ((uint8_t *)&f)[b];
            break;
        }
        case 1: {
            const char *w = words[rnd() % 7];
            for (size_t b = 0; w[b] && i < n; b++)
                buf[i++] = (uint8_t)w[b];
            break;
        }
        case 2: {
            size_t run = 1 + rnd() % 300;
            uint8_t v = (uint8_t)rnd();
            for (size_t b = 0; b < run && i < n; b++)
                buf[i++] = v;
            break;
        }
        case 3:
            buf[i++] = (uint8_t)rnd();
            break;
        default:
            fill(buf + i, n - i < 4096 ? n - i : 4096, (int)(rnd() % 4));
            i += 4096;
            break;
        }
    }
}

/* Raw deflate of src at level/strategy, with a sync flush every `flush`
 * bytes (0: none; n: all of it, then an empty final block); returns the
 * length written to *out (malloc'd). */
static size_t deflate_raw(const uint8_t *src, size_t n, int level, int strategy, size_t flush,
                          uint8_t **out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, level, Z_DEFLATED, -15, 8, strategy);
    size_t cap = deflateBound(&zs, (uLong)n) + 64 + (flush ? n / flush * 8 : 0);
    *out = malloc(cap);
    zs.next_out = *out;
    zs.avail_out = (uInt)cap;
    size_t done = 0;
    do {
        size_t k = flush && n - done > flush ? flush : n - done;
        zs.next_in = (Bytef *)(uintptr_t)(src + done);
        zs.avail_in = (uInt)k;
        done += k;
        deflate(&zs, done == n && flush != n ? Z_FINISH : Z_SYNC_FLUSH);
    } while (done < n);
    if (flush == n) /* everything sync-flushed: an empty final block */
        deflate(&zs, Z_FINISH);
    size_t len = zs.total_out;
    deflateEnd(&zs);
    return len;
}

/* One round trip: data kind, writer settings and plan options. */
static void round_trip(size_t n, int kind, int level, int strategy, size_t flush, uint64_t step,
                       uint32_t cap, size_t batch, size_t margin)
{
    uint8_t *src = malloc(n + 1), *comp;
    fill(src, n, kind);
    size_t clen = deflate_raw(src, n, level, strategy, flush, &comp);
    uint8_t *out = malloc(n + 64);
    memset(out, 0xa5, n + 64);
    ish_opts o = {step, cap, batch, 0, margin};
    long got = ish_decode(comp, clen, out, n + 64, &o);
    CHECKF(got == (long)n && memcmp(out, src, n) == 0,
           "n %zu kind %d level %d strategy %d flush %zu step %llu cap %u batch %zu margin %zu: "
           "got %ld",
           n, kind, level, strategy, flush, (unsigned long long)step, cap, batch, margin, got);
    free(src);
    free(comp);
    free(out);
}

/* ifs_find finds what the host's inflate_find_block finds. */
static void test_finder(void)
{
    for (int kind = 0; kind < 5; kind++) {
        size_t n = 300000;
        uint8_t *src = malloc(n), *comp;
        fill(src, n, kind);
        size_t clen = deflate_raw(src, n, 1 + kind % 9, Z_DEFAULT_STRATEGY, kind == 4 ? 20000 : 0,
                                  &comp);
        static if_tables t;
        for (int k = 0; k < 40; k++) {
            uint64_t from = rnd() % (clen * 8), to = from + rnd() % 200000;
            uint64_t a = ifs_find(comp, (if_u32)clen, from, to, &t);
            uint64_t b = inflate_find_block(comp, clen, from, to);
            CHECKF(a == (b == UINT64_MAX ? IFS_NONE : b), "kind %d from %llu: %llu vs %llu",
                   kind, (unsigned long long)from, (unsigned long long)a, (unsigned long long)b);
        }
        free(src);
        free(comp);
    }
}

/* A segment whose search meets, before the true block boundary, bits that
 * decode as complete codes until a "block" of them is final (far from the
 * input's end, so not the stream's true final block) passes over them and
 * begins at the boundary that the decode from the stream's start reaches:
 * for the first such start in level-1 floats. */
static void test_false_final(void)
{
    size_t n = 4u << 20;
    uint8_t *src = malloc(n), *comp;
    if_u32 cap = 1u << 20;
    uint16_t *syms = malloc((size_t)cap * sizeof *syms);
    fill(src, n, 0);
    size_t clen = deflate_raw(src, n, 1, Z_DEFAULT_STRATEGY, 0, &comp);
    static if_tables t;
    uint64_t at = IFS_NONE, step = 65536 * 8, end;
    if_u32 nout;
    for (uint64_t from = 0;;) {
        uint64_t c = ifs_find(comp, (if_u32)clen, from, (uint64_t)clen * 8, &t);
        if (c == IFS_NONE)
            break;
        int st = ifs_decode(comp, (if_u32)clen, c, c + step, syms, cap, &t, &end, &nout);
        if (st == IFS_FINAL && end + IFS_TAIL_BYTES * 8 < (uint64_t)clen * 8) {
            at = c;
            break;
        }
        from = c + 1;
    }
    CHECKF(at != IFS_NONE, "no start in %zu bytes of level-1 floats ends in a final block", clen);
    if (at != IFS_NONE) {
        /* the true boundary: the first findable one at or past `at` */
        uint64_t truth = IFS_NONE;
        for (uint64_t from = 0; truth == IFS_NONE || truth < at; from = truth) {
            int st = ifs_decode(comp, (if_u32)clen, from, at, syms, cap, &t, &truth, &nout);
            if (st != IFS_STOP && st != IFS_FULL)
                break;
        }
        ifs_seg sg = {.start = at, .search_end = at + step, .stop = at + step, .cap = cap};
        ifs_segment(comp, (if_u32)clen, &sg, syms, &t);
        CHECKF(sg.start == truth && sg.status == IFS_STOP,
               "false final start at bit %llu: the segment began at %llu (status %u), the "
               "stream's boundary is %llu", (unsigned long long)at,
               (unsigned long long)sg.start, sg.status, (unsigned long long)truth);
    }
    free(src);
    free(comp);
    free(syms);
}

/* ifs_final_trusted: a final block at the input's end (a trailer after
 * it), or whose trailer another member's magic follows; not one that other
 * bytes follow. */
static void test_final_trusted(void)
{
    uint8_t in[200];
    memset(in, 0x5a, sizeof in);
    CHECK(ifs_final_trusted(in, sizeof in, (sizeof in - 8) * 8 - 3));  /* then its trailer */
    CHECK(ifs_final_trusted(in, sizeof in, (sizeof in - 64) * 8));     /* 64 bytes of slack */
    CHECK(!ifs_final_trusted(in, sizeof in, (sizeof in - 65) * 8));
    in[51 + 8] = 0x1f;
    in[51 + 9] = 0x8b;
    CHECK(ifs_final_trusted(in, sizeof in, 50 * 8 + 3));  /* ends in byte 50: member at 59 */
    CHECK(!ifs_final_trusted(in, sizeof in, 51 * 8 + 3)); /* the magic one byte off */
    in[51 + 9] = 0x8c;
    CHECK(!ifs_final_trusted(in, sizeof in, 50 * 8 + 3));
}

/* A stream whose final block lies far from the input's end, followed by
 * random bytes (the segment that holds it passes over it, finds no later
 * start and takes it after all), or by its trailer and another gzip member
 * after an empty final block (ifs_final_trusted takes it at once): the
 * stream's bytes either way, in segments of 8 to 40 KiB. */
static void test_final_then_more(void)
{
    for (int next_member = 0; next_member < 2; next_member++) {
        for (int kind = 0; kind < 5; kind++) {
            size_t n = 300000, more = 100000;
            uint8_t *src = malloc(n), *comp, *out = malloc(n + 64), *text = malloc(more), *m2;
            fill(src, n, kind);
            /* before another member, an empty final block after a sync flush: the
               segment that decodes into it can also reach the next member */
            size_t clen = next_member ? deflate_raw(src, n, 6, Z_DEFAULT_STRATEGY, n, &comp)
                                      : deflate_raw(src, n, 6, Z_DEFAULT_STRATEGY, 0, &comp),
                   len = clen;
            if (next_member) { /* a trailer, then a gzip header and member 2's deflate data */
                fill(text, more, 1);
                size_t m2len = deflate_raw(text, more, 6, Z_DEFAULT_STRATEGY, 0, &m2);
                static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
                comp = realloc(comp, clen + 8 + sizeof head + m2len);
                memset(comp + clen, 0, 8);
                memcpy(comp + clen + 8, head, sizeof head);
                memcpy(comp + clen + 8 + sizeof head, m2, m2len);
                len = clen + 8 + sizeof head + m2len;
                free(m2);
            } else {
                comp = realloc(comp, clen + more);
                fill(comp + clen, more, 3);
                len = clen + more;
            }
            for (uint64_t step = 8192 * 8; step <= 40960 * 8; step += 16384 * 8) {
                ish_opts o = {step, (uint32_t)(step * 8), 0, 0, 0};
                long got = ish_decode(comp, len, out, n + 64, &o);
                CHECKF(got == (long)n && memcmp(out, src, n) == 0,
                       "kind %d, step %llu, final block then %s: got %ld", kind,
                       (unsigned long long)step, next_member ? "a gzip member" : "random bytes", got);
            }
            free(src);
            free(comp);
            free(out);
            free(text);
        }
    }
}

/* Batches whose first block is searched for from where the batch before
 * stops (as the GPU decodes the next batch while one is finished): every
 * kind of data and writer, margins longer and shorter than a block; those
 * that cannot go on from where the batch before ended (a fixed-Huffman
 * block, a block longer than the margin) are decoded again from there. */
static void test_batches_searched(void)
{
    int ahead = ish_ahead, missed = ish_ahead_missed;
    for (int kind = 0; kind < 5; kind++)
        for (int level = 1; level <= 9; level += 4)
            for (size_t margin = 4096; margin <= 65536; margin *= 4)
                round_trip(900000 + rnd() % 100000, kind, level, Z_DEFAULT_STRATEGY, 0, 32768,
                           60000, 3 * margin + rnd() % 100000, margin);
    round_trip(600000, 4, 6, Z_FIXED, 0, 32768, 100000, 40000, 8000);
    round_trip(600000, 3, 0, Z_DEFAULT_STRATEGY, 0, 32768, 100000, 200000, 8000);
    round_trip(900000, 0, 9, Z_DEFAULT_STRATEGY, 50000, 65536, 100000, 70000, 9000);
    round_trip(900000, 2, 9, Z_DEFAULT_STRATEGY, 0, 65536, 3000, 70000, 9000);
    round_trip(900000, 1, 6, Z_DEFAULT_STRATEGY, 0, 16384, 60000, 40000, 3000);
    CHECKF(ish_ahead - ahead > 50 && ish_ahead_missed - missed > 0,
           "%d batches searched for, %d of them decoded again", ish_ahead - ahead,
           ish_ahead_missed - missed);
}

/* Corrupted streams: the plan gives up, or the output is zlib's. */
static void test_corrupt(void)
{
    size_t n = 200000;
    uint8_t *src = malloc(n), *comp, *out = malloc(4 * n), *zout = malloc(4 * n);
    fill(src, n, 4);
    size_t clen = deflate_raw(src, n, 6, Z_DEFAULT_STRATEGY, 0, &comp);
    for (int t = 0; t < 60; t++) {
        uint8_t *bad = malloc(clen);
        memcpy(bad, comp, clen);
        for (int k = 0; k < 1 + t % 3; k++) {
            size_t at = rnd() % clen;
            bad[at] ^= (uint8_t)(1u << (rnd() % 8));
        }
        size_t blen = t % 5 == 0 ? clen - 1 - rnd() % 100 : clen;
        /* the whole stream as one batch, or batches searched for */
        ish_opts o = {4096 + rnd() % 60000, 20000, t % 2 ? 20000 + rnd() % 20000 : 0, 0,
                      t % 2 ? 2000 + rnd() % 6000 : 0};
        long got = ish_decode(bad, blen, out, 4 * n, &o);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        inflateInit2(&zs, -15);
        zs.next_in = bad;
        zs.avail_in = (uInt)blen;
        zs.next_out = zout;
        zs.avail_out = (uInt)(4 * n);
        int zr = inflate(&zs, Z_FINISH);
        long zlen = (long)zs.total_out;
        inflateEnd(&zs);
        if (got >= 0)
            CHECKF(zr == Z_STREAM_END && got == zlen && memcmp(out, zout, (size_t)got) == 0,
                   "corruption %d: decoded %ld bytes, zlib %d with %ld", t, got, zr, zlen);
        else
            CHECK(o.gave_up == 1);
        free(bad);
    }
    free(src);
    free(comp);
    free(out);
    free(zout);
}

/* Compressible data (int32 in 0..199) whose every segment fills its room:
 * the remainders of all the full segments are decoded in the same round,
 * so the batch takes a few rounds, not one per segment. */
static void test_full_segments(void)
{
    size_t n = (size_t)12 << 20;
    uint8_t *src = malloc(n), *comp, *out = malloc(n + 64);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = (uint32_t)(rnd() % 200);
        memcpy(src + i, &v, 4);
    }
    size_t clen = deflate_raw(src, n, 6, Z_DEFAULT_STRATEGY, 0, &comp);
    uint64_t step = (uint64_t)64 << 13; /* 64 KiB of compressed bytes a segment */
    ish_opts o = {step, (uint32_t)(step / 8 * 2), 0, 0, 0}; /* room for a ratio of 2 */
    ish_max_rounds = 0;
    memset(out, 0xa5, n + 64);
    long got = ish_decode(comp, clen, out, n + 64, &o);
    CHECKF(got == (long)n && memcmp(out, src, n) == 0, "ratio %.2f: got %ld", (double)n / clen,
           got);
    CHECKF(ish_max_rounds >= 2 && ish_max_rounds <= 4, "%d rounds for %zu segments",
           ish_max_rounds, clen * 8 / step);
    free(src);
    free(comp);
    free(out);
}

int main(void)
{
    test_finder();
    /* kinds x levels, segments of 2 KiB to 64 KiB of compressed data */
    for (int kind = 0; kind < 5; kind++)
        for (int level = 1; level <= 9; level += 4)
            for (uint64_t step = 16384; step <= 524288; step *= 4)
                round_trip(400000 + rnd() % 100000, kind, level, Z_DEFAULT_STRATEGY, 0, step,
                           (uint32_t)(step / 8 * 6), 0, 0);
    /* fixed Huffman only, runs, Huffman only, stored, sync-flushed pieces */
    round_trip(300000, 4, 6, Z_FIXED, 0, 32768, 100000, 0, 0);
    round_trip(300000, 2, 6, Z_RLE, 0, 32768, 100000, 0, 0);
    round_trip(300000, 0, 6, Z_HUFFMAN_ONLY, 0, 16384, 100000, 0, 0);
    round_trip(300000, 3, 0, Z_DEFAULT_STRATEGY, 0, 65536, 100000, 0, 0);
    round_trip(600000, 0, 9, Z_DEFAULT_STRATEGY, 50000, 65536, 100000, 0, 0);
    round_trip(600000, 4, 1, Z_DEFAULT_STRATEGY, 1000, 8192, 100000, 0, 0);
    /* small rooms: segments split again and again */
    round_trip(300000, 2, 9, Z_DEFAULT_STRATEGY, 0, 65536, 3000, 0, 0);
    round_trip(300000, 1, 9, Z_DEFAULT_STRATEGY, 0, 32768, 5000, 0, 0);
    /* batches that end inside the stream */
    round_trip(800000, 4, 6, Z_DEFAULT_STRATEGY, 0, 32768, 60000, 50000, 0);
    round_trip(800000, 0, 1, Z_DEFAULT_STRATEGY, 0, 65536, 60000, 120000, 0);
    /* tiny streams, one segment */
    round_trip(1, 3, 6, Z_DEFAULT_STRATEGY, 0, 4096, 1000, 0, 0);
    round_trip(100, 1, 6, Z_DEFAULT_STRATEGY, 0, 4096, 1000, 0, 0);
    /* the round trips went through redone segments, pieces of them and extra room */
    CHECKF(ish_redone > 0 && ish_roomier > 0 && ish_pieced > 0,
           "%d of %d batches redone, %d with more room, %d segments redone in pieces", ish_redone,
           ish_batches, ish_roomier, ish_pieced);
    test_batches_searched();
    test_false_final();
    test_final_trusted();
    test_final_then_more();
    test_corrupt();
    test_full_segments();
    return check_summary();
}
