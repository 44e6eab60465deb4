/* test_pinflate.c - the host deflate decoder (io/gzip/inflate.c) and the
 * parallel decoder of one stream (io/gzip/pinflate.c) against zlib: streams of
 * every zlib level and strategy, window size, flush pattern and kind of
 * data, decoded whole, block by block with stops, speculatively with
 * markers, and in parallel with chunks down to a few KiB on 1 to 4
 * threads, from memory and from a pipe fed in pieces of every size; then
 * damaged streams, where both must hand out exactly the bytes
 * zlib gives before its error and never accept what zlib refuses; a
 * false start that ends in a final block, passed over; starts past empty
 * fixed blocks (pigz), not decoded again; the memory held
 * ahead of a reader that does not read; and the host decoder's
 * instruction-set variants, each against zlib and against each other. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "io/gzip/bgzf.h"
#include "io/gzip/inflate.h"
#include "io/gzip/pinflate.h"
#include "ptx/inflate_stream.h"
#include "tests/pipe_feeder.h"
#include "tests/zlib_raw.h"
#include "check.h"
#define RND_SEED 0x2545f4914f6cdd1dull
#include "rnd.h"


enum { K_RANDOM, K_TEXT, K_FLOATS, K_RUNS, K_MIXED, K_KINDS };

/* Fills buf with data of one kind: incompressible, word-like, float32
 * normals' bytes, long runs, or a mix that changes every few KiB. */
static void fill(uint8_t *buf, size_t n, int kind)
{
    static const char *words[] = {"gpubatch ", "reduce ", "transpose ", "quadratic ", "gzip ",
                                  "the ",      "of ",     "deflate ",   "\n",          "0.125 "};
    size_t i = 0;
    int k = kind;
    while (i < n) {
        if (kind == K_MIXED && i % 4096 == 0)
            k = (int)(rnd() % K_MIXED);
        switch (k) {
        case K_RANDOM:
            buf[i++] = (uint8_t)rnd();
            break;
        case K_TEXT: {
            const char *w = words[rnd() % 10];
            while (*w && i < n)
                buf[i++] = (uint8_t)*w++;
            break;
        }
        case K_FLOATS: {
            /* a rough normal: the sum of four uniforms */
            double s = 0;
            for (int j = 0; j < 4; j++)
                s += (double)(rnd() >> 11) / 9007199254740992.0 - 0.5;
            float f = (float)s;
            uint8_t b[4];
            memcpy(b, &f, 4);
            for (int j = 0; j < 4 && i < n; j++)
                buf[i++] = b[j];
            break;
        }
        default: {
            uint8_t v = (uint8_t)(rnd() % 3);
            size_t run = 1 + rnd() % 300;
            while (run-- && i < n)
                buf[i++] = v;
            break;
        }
        }
    }
}

/* Raw deflate of data[0..n) by zlib with the given settings; a flush every
 * `flush_every` bytes when nonzero (Z_SYNC_FLUSH, or Z_FULL_FLUSH when
 * `full`). Returns a malloc'd stream and its length. */
static uint8_t *deflate_raw(const uint8_t *data, size_t n, int level, int strategy, int wbits,
                            size_t flush_every, int full, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, -wbits, 8, strategy) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&zs, (uLong)n) + 64 + (flush_every ? 16 * (n / flush_every + 1) : 0);
    uint8_t *out = malloc(cap);
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    size_t pos = 0;
    for (;;) {
        size_t step = flush_every ? flush_every : n;
        if (step > n - pos)
            step = n - pos;
        zs.next_in = (Bytef *)(uintptr_t)(data + pos);
        zs.avail_in = (uInt)step;
        pos += step;
        int last = pos == n;
        deflate(&zs, last ? Z_FINISH : full ? Z_FULL_FLUSH : Z_SYNC_FLUSH);
        if (last)
            break;
    }
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* Decodes the whole stream with inflate_decode_bytes, stopping at every block
 * boundary past each `step` bits when step is nonzero. Returns the result
 * (INFLATE_END on success), the bytes in out and the end bit. */
static int host_inflate(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *out_len,
                        uint64_t step, uint64_t *end_bit)
{
    inflate_job j = {.in = in, .in_len = len, .stop_bit = step ? step : UINT64_MAX,
                 .out_limit = SIZE_MAX, .out = out, .out_cap = cap};
    int r;
    while ((r = inflate_decode_bytes(&j)) == INFLATE_STOP)
        j.stop_bit = j.bit + step;
    *out_len = j.out_len;
    *end_bit = j.bit;
    return r;
}

/* Decodes in parallel (chunk bytes per chunk, `threads` threads), from
 * memory or (pipe) through a pipe's spool. Returns 0 after the final block,
 * 1 when it stopped early (the stop point in *stop_bit), -1 on a failure of
 * its own; the bytes handed out in out. */
static int par_inflate(pinflate *p, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
                       size_t *out_len, uint64_t *end_or_stop, uint32_t *crc, int pipe)
{
    pipe_feeder f;
    spool *sp = NULL;
    if (pipe)
        pinflate_begin_spool(p, sp = pipe_feeder_spool(&f, in, len, 200000, rnd()), 0);
    else
        pinflate_begin(p, -1, in, len, 0);
    size_t got = 0;
    int rc = -1;
    for (;;) {
        size_t want = 1 + rnd() % 100000; /* reads of every size */
        if (want > cap - got)
            want = cap - got;
        ssize_t k = pinflate_read(p, out + got, want);
        if (k > 0) {
            got += (size_t)k;
            if (got == cap) { /* more than zlib gave: wrong */
                rc = -1;
                break;
            }
            continue;
        }
        if (k == 0) {
            uint64_t end, n;
            pinflate_result(p, &end, crc, &n);
            *end_or_stop = end;
            rc = n == got ? 0 : -1;
        } else if (k == PINFLATE_STOPPED) {
            const uint8_t *w;
            size_t wlen;
            uint64_t n;
            pinflate_stop_point(p, end_or_stop, &w, &wlen, crc, &n);
            /* the window is the last bytes handed out */
            rc = n == got && wlen == (got < INFLATE_WINDOW ? got : INFLATE_WINDOW) &&
                         memcmp(w, out + got - wlen, wlen) == 0
                     ? 1
                     : -1;
        }
        break;
    }
    pinflate_end(p);
    if (pipe) /* the feeder stops at the closed end, if it has not finished */
        pipe_feeder_end(&f, sp);
    *out_len = got;
    return rc;
}

/* zlib's strategies, one of which each stream of the round trips takes. */
static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};

/* Round trips over kinds, sizes, levels, strategies and flushes: the
 * decoder and the parallel decoder give zlib's bytes, CRC-32 and end. */
static void test_round_trips(void)
{
    static const size_t sizes[] = {0, 1, 100, 40000, 300000, 1500000};
    pinflate *par[4];
    static const uint64_t chunks[4] = {4096, 16384, 3000, 65536};
    for (int t = 0; t < 4; t++)
        CHECK(pinflate_create(&par[t], t + 1, chunks[t]) == 0);
    int cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int kind = 0; kind < K_KINDS; kind++) {
            size_t n = sizes[si];
            uint8_t *data = malloc(n + 1);
            fill(data, n, kind);
            for (int variant = 0; variant < 6; variant++) {
                int level = (int)(rnd() % 10);
                int strategy = strategies[rnd() % 5];
                int wbits = variant == 5 ? 9 + (int)(rnd() % 7) : 15;
                size_t flush = variant == 4 ? 1000 + rnd() % 50000 : 0;
                size_t clen;
                uint8_t *c = deflate_raw(data, n, level, strategy, wbits, flush, (int)(rnd() & 1), &clen);
                /* the decoders may read a few bytes past the stream: give
                 * them the trailer a gzip member has */
                c = realloc(c, clen + 8);
                memset(c + clen, 0x5a, 8);
                size_t cap = n + 1024;
                uint8_t *out = malloc(cap);
                size_t got;
                uint64_t end;
                /* exactly the room the data needs: nothing past it is written */
                memset(out, 0xa5, cap);
                int r = host_inflate(c, clen + 8, out, n, &got, 0, &end);
                int guard = 1;
                for (size_t i = n; i < cap; i++)
                    guard &= out[i] == 0xa5;
                CHECKF(r == INFLATE_END && got == n && memcmp(out, data, n) == 0 && guard &&
                           (end + 7) / 8 == clen,
                       "whole: n %zu kind %d level %d strategy %d wbits %d flush %zu: r %d got %zu",
                       n, kind, level, strategy, wbits, flush, r, got);
                memset(out, 0xa5, cap);
                r = host_inflate(c, clen + 8, out, cap, &got, 1 + rnd() % 20000, &end);
                CHECKF(r == INFLATE_END && got == n && memcmp(out, data, n) == 0,
                       "stepped: n %zu kind %d level %d", n, kind, level);
                pinflate *p = par[rnd() % 4];
                memset(out, 0xa5, cap);
                uint32_t crc;
                int pipe = variant & 1;
                r = par_inflate(p, c, clen + 8, out, cap, &got, &end, &crc, pipe);
                CHECKF(r == 0 && got == n && memcmp(out, data, n) == 0 && end == clen &&
                           crc == (uint32_t)crc32(0, data, (uInt)n),
                       "parallel%s: n %zu kind %d level %d strategy %d flush %zu: r %d got %zu",
                       pipe ? " from a pipe" : "", n, kind, level, strategy, flush, r, got);
                cases++;
                free(out);
                free(c);
            }
            free(data);
        }
    }
    for (int t = 0; t < 4; t++)
        pinflate_destroy(par[t]);
    CHECK(cases == 6 * K_KINDS * 6);
}

/* A deflate writer for test_copies: bits LSB first, codes MSB first (RFC
 * 1951 3.1.1), and the bytes the stream stands for; the fixed Huffman
 * codes, or the dynamic ones set by fw_dynamic. */
typedef struct {
    uint8_t *buf;
    uint64_t nbits;
    uint8_t *out;
    size_t nout;
    int dynamic;
    uint8_t llen[286], dlen[30];
    uint16_t lcode[286], dcode[30];
} fixw;

/* Appends the low n bits of v, LSB first. */
static void fw_bits(fixw *w, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, w->nbits++)
        if (v >> i & 1)
            w->buf[w->nbits / 8] |= (uint8_t)(1u << (w->nbits % 8));
}

/* Appends the n-bit Huffman code c, its first bit first. */
static void fw_code(fixw *w, uint32_t c, unsigned n)
{
    for (unsigned i = n; i-- > 0;)
        fw_bits(w, c >> i & 1, 1);
}

/* Appends literal/length symbol s (fixed, or the dynamic code). */
static void fw_sym(fixw *w, unsigned s)
{
    if (w->dynamic)
        fw_code(w, w->lcode[s], w->llen[s]);
    else if (s < 144)
        fw_code(w, 0x30 + s, 8);
    else if (s < 256)
        fw_code(w, 0x190 + s - 144, 9);
    else if (s < 280)
        fw_code(w, s - 256, 7);
    else
        fw_code(w, 0xc0 + s - 280, 8);
}

/* Appends literal byte b. */
static void fw_lit(fixw *w, uint8_t b)
{
    fw_sym(w, b);
    w->out[w->nout++] = b;
}

/* Appends a match of len (3..258) at distance dist (1..32768), with its
 * bytes copied one at a time as the format defines an overlapping copy. */
static void fw_match(fixw *w, unsigned len, unsigned dist)
{
    static const uint16_t lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint16_t dbase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    unsigned l = 28, d = 29;
    while (lbase[l] > len)
        l--;
    while (dbase[d] > dist)
        d--;
    unsigned lx = l < 8 || l == 28 ? 0 : (l - 4) / 4, dx = d < 4 ? 0 : (d - 2) / 2;
    fw_sym(w, 257 + l);
    fw_bits(w, len - lbase[l], lx);
    if (w->dynamic)
        fw_code(w, w->dcode[d], w->dlen[d]);
    else
        fw_code(w, d, 5);
    fw_bits(w, dist - dbase[d], dx);
    for (unsigned i = 0; i < len; i++, w->nout++)
        w->out[w->nout] = w->out[w->nout - dist];
}

/* The canonical codes of lens[0..n) (RFC 1951 3.2.2) into code. */
static void fw_canonical(const uint8_t *lens, unsigned n, uint16_t *code)
{
    unsigned next = 0;
    for (unsigned len = 1; len <= 15; len++, next <<= 1)
        for (unsigned s = 0; s < n; s++)
            if (lens[s] == len)
                code[s] = (uint16_t)next++;
}

/* Starts a dynamic block (final or not) whose literal/length code gives
 * the 16 literals 'a'..'p' 5 bits and end-of-block and every length 6, so
 * that a literal and a length, or two literals, fit in one lookup of the
 * decoder; 16 other literals take 12 bits and the rest 13 (past its
 * primary table). Distances take 4 or 5 bits. The code lengths are sent
 * one by one with a code-length code of 4 and 5 bits. */
static void fw_dynamic(fixw *w, int final)
{
    for (unsigned s = 0; s < 256; s++)
        w->llen[s] = s >= 'a' && s <= 'p' ? 5 : s < 16 ? 12 : 13;
    for (unsigned s = 256; s < 286; s++)
        w->llen[s] = 6;
    for (unsigned d = 0; d < 30; d++)
        w->dlen[d] = d < 2 ? 4 : 5;
    fw_canonical(w->llen, 286, w->lcode);
    fw_canonical(w->dlen, 30, w->dcode);
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    uint8_t clen[19];
    uint16_t ccode[19];
    for (unsigned s = 0; s < 19; s++)
        clen[s] = s < 13 ? 4 : 5; /* 13/16 + 6/32: complete */
    fw_canonical(clen, 19, ccode);
    fw_bits(w, (uint32_t)final, 1);
    fw_bits(w, 2, 2);
    fw_bits(w, 286 - 257, 5);
    fw_bits(w, 30 - 1, 5);
    fw_bits(w, 19 - 4, 4);
    for (unsigned i = 0; i < 19; i++)
        fw_bits(w, clen[order[i]], 3);
    for (unsigned s = 0; s < 286; s++)
        fw_code(w, ccode[w->llen[s]], clen[w->llen[s]]);
    for (unsigned d = 0; d < 30; d++)
        fw_code(w, ccode[w->dlen[d]], clen[w->dlen[d]]);
    w->dynamic = 1;
}

/* Overlapping and short-distance copies: matches at every distance 1..300
 * and 32700..32768, each at lengths around the copies' word steps (3..10,
 * 15..17, 23..25, 31..33) and the longest, after a block of 32 KiB of
 * random literals; the matches in a fixed block, and in a dynamic one
 * (fw_dynamic) where each follows one or two literals of short codes, whose
 * lookups take a literal and the length, or a literal of a long code.
 * Decoded whole into exactly its room (nothing written past it), block by
 * block, as symbols from the second block with the window unknown then
 * resolved, and in parallel: every way gives the bytes. */
static void test_copies(void)
{
    static const unsigned lens[] = {3,  4,  5,  6,  7,  8,  9,  10, 15, 16, 17,
                                    23, 24, 25, 31, 32, 33, 64, 100, 257, 258};
    size_t ncase = 0;
    for (int dyn = 0; dyn < 2; dyn++) {
        fixw w = {.buf = calloc(1, 4u << 20), .out = malloc(8u << 20)};
        fw_bits(&w, 0, 1); /* a non-final fixed block of literals */
        fw_bits(&w, 1, 2);
        for (unsigned i = 0; i < INFLATE_WINDOW; i++)
            fw_lit(&w, (uint8_t)rnd());
        fw_sym(&w, 256);
        uint64_t second = w.nbits;
        if (dyn) {
            fw_dynamic(&w, 1); /* the final block of matches */
        } else {
            fw_bits(&w, 1, 1); /* the final fixed block of matches */
            fw_bits(&w, 1, 2);
        }
        for (unsigned dist = 1; dist <= 32768; dist = dist == 300 ? 32700 : dist + 1) {
            for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++, ncase++) {
                unsigned pick = (unsigned)rnd() % 4;
                if (dyn && pick == 0)
                    fw_lit(&w, (uint8_t)rnd()); /* a long code, or a short one */
                else if (dyn)
                    for (unsigned i = 0; i < 1 + (pick == 1); i++)
                        fw_lit(&w, (uint8_t)('a' + rnd() % 16));
                else
                    fw_lit(&w, (uint8_t)rnd());
                fw_match(&w, lens[k], dist);
            }
        }
        fw_sym(&w, 256);
        size_t clen = (size_t)((w.nbits + 7) / 8) + 8, n = w.nout;
        uint8_t *out = malloc(n + 64);
        size_t got;
        uint64_t end;
        memset(out, 0xa5, n + 64);
        int r = host_inflate(w.buf, clen, out, n, &got, 0, &end);
        int guard = 1;
        for (size_t i = n; i < n + 64; i++)
            guard &= out[i] == 0xa5;
        CHECKF(r == INFLATE_END && got == n && memcmp(out, w.out, n) == 0 && guard,
               "copies %d, whole: r %d got %zu of %zu, guard %d", dyn, r, got, n, guard);
        r = host_inflate(w.buf, clen, out, n, &got, 1, &end);
        CHECKF(r == INFLATE_END && got == n && memcmp(out, w.out, n) == 0,
               "copies %d, stepped: r %d", dyn, r);
        /* two at once (the stream beside itself): each gives the bytes */
        uint8_t *out2 = malloc(n + 64);
        inflate_job pa = {.in = w.buf, .in_len = clen, .stop_bit = UINT64_MAX,
                          .out_limit = SIZE_MAX, .out = out, .out_cap = n};
        inflate_job pb = pa;
        pb.out = out2;
        int rb, ra = inflate_decode_bytes_pair(&pa, &pb, &rb);
        CHECKF(ra == INFLATE_END && rb == INFLATE_END && pa.out_len == n && pb.out_len == n &&
                   memcmp(out, w.out, n) == 0 && memcmp(out2, w.out, n) == 0,
               "copies %d, paired: %d %d", dyn, ra, rb);
        free(out2);
        /* zlib agrees that the stream is what the writer says */
        CHECKF(zlib_raw_inflate(w.buf, clen, out, n, &got) == 1 && got == n &&
                   memcmp(out, w.out, n) == 0,
               "copies %d: zlib", dyn);
        /* the second block alone: its copies from the first are markers */
        uint16_t *sym = malloc((n + 64) * 2);
        inflate_job s = {.in = w.buf, .in_len = clen, .bit = second, .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = sym, .out_cap = n - INFLATE_WINDOW};
        r = inflate_decode_symbols(&s);
        int rr = r == INFLATE_CLEAN || r == INFLATE_END
                     ? inflate_resolve(out, sym, s.out_len, w.out, INFLATE_WINDOW)
                     : -1;
        CHECKF(rr == 0 && memcmp(out, w.out + INFLATE_WINDOW, s.out_len) == 0 && s.out_len > 0,
               "copies %d, as symbols: r %d, %zu symbols", dyn, r, s.out_len);
        for (int threads = 1; threads <= 3; threads++) {
            pinflate *p;
            CHECK(pinflate_create(&p, threads, 3000 * (size_t)threads) == 0);
            uint32_t crc;
            memset(out, 0xa5, n + 64);
            r = par_inflate(p, w.buf, clen, out, n + 64, &got, &end, &crc, threads == 2);
            CHECKF(r == 0 && got == n && memcmp(out, w.out, n) == 0,
                   "copies %d, %d threads: r %d", dyn, threads, r);
            pinflate_destroy(p);
        }
        free(sym);
        free(out);
        free(w.buf);
        free(w.out);
    }
    CHECK(ncase == 2 * 369 * 21);
}

/* data[0..n) deflated at level 6 (*clen bytes), followed by the 8 bytes
 * of a gzip trailer's place that the decoders may read past the end. */
static uint8_t *level6_padded(const uint8_t *data, size_t n, size_t *clen)
{
    uint8_t *c = deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 15, 0, 0, clen);
    c = realloc(c, *clen + 8);
    memset(c + *clen, 0x5a, 8);
    return c;
}

/* Decodes the level6_padded stream c of data[0..n) with p into out (n + 64
 * bytes) and takes p's counts: accepted chunks, redone, speculated. Whether
 * the bytes and CRC-32 are zlib's. */
static int run_counted(pinflate *p, const uint8_t *c, size_t clen, const uint8_t *data, size_t n,
                       uint8_t *out, uint64_t counts[3])
{
    size_t got;
    uint64_t end;
    uint32_t crc;
    int r = par_inflate(p, c, clen + 8, out, n + 64, &got, &end, &crc, 0);
    pinflate_counts(p, &counts[0], &counts[1]);
    counts[2] = pinflate_speculated(p);
    return r == 0 && got == n && memcmp(out, data, n) == 0 && crc == (uint32_t)crc32(0, data, (uInt)n);
}

/* The plan: on text, whose back-references into the unknown window go on
 * being copied (most symbols stay markers), AUTO on 2 threads measures one
 * speculative chunk (one per thread but the one in order) and then decodes
 * in order, probing once every 64 chunks. ORDER never speculates. Every
 * plan gives the bytes, on text and on floats. */
static void test_plan(void)
{
    size_t n = 6u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    static const enum pinflate_plan plans[3] = {PINFLATE_AUTO, PINFLATE_ORDER, PINFLATE_PARALLEL};
    for (int kind = K_TEXT; kind <= K_FLOATS; kind++) {
        fill(data, n, kind);
        size_t clen;
        uint8_t *c = level6_padded(data, n, &clen);
        for (int k = 0; k < 3; k++) {
            pinflate *p;
            CHECK(pinflate_create(&p, 2, clen / 60) == 0);
            pinflate_plan(p, plans[k]);
            uint64_t counts[3];
            CHECKF(run_counted(p, c, clen, data, n, out, counts), "plan %d, kind %d", k, kind);
            uint64_t chunks = counts[0], spec = counts[2];
            /* how many are speculative depends on the threads' timing
               but for these bounds */
            int want = plans[k] == PINFLATE_ORDER                        ? spec == 0
                       : plans[k] == PINFLATE_AUTO && kind == K_TEXT ? spec <= 1 + chunks / 64
                                                                         : spec <= chunks;
            CHECKF(want, "plan %d, kind %d: %llu of %llu chunks speculative", k, kind,
                   (unsigned long long)spec, (unsigned long long)chunks);
            pinflate_destroy(p);
        }
        free(c);
    }
    free(out);
    free(data);
}

/* The ratio hint: at runs' ratio (over 20 to 1) even a speculative chunk
 * of bytes alone costs more than 2 or 3 threads can pay, mixing included,
 * so AUTO with the hint starts in order: no chunk speculative (the probe
 * every 64 chunks comes later than these streams end), stream after stream.
 * Without it the first chunks probe: whether an idle thread comes while
 * the first chunk is decoded depends on the scheduler (on a busy machine
 * it often does not), so up to twelve streams are tried. Text's ratio here (about 8) leaves mixing to the probe,
 * floats' (about 1.1) speculation: their hints are ignored. A hint holds
 * for the one stream begun next. The bytes are the data's. */
static void test_plan_hint(void)
{
    size_t most = 32u << 20;
    uint8_t *data = malloc(most), *out = malloc(most + 64);
    static const int kinds[3] = {K_TEXT, K_FLOATS, K_RUNS};
    for (int k = 0; k < 3; k++) {
        int kind = kinds[k];
        size_t n = kind == K_RUNS ? most : 6u << 20; /* runs: more than the first chunk */
        fill(data, n, kind);
        size_t clen;
        uint8_t *c = level6_padded(data, n, &clen);
        double ratio = (double)n / (double)clen;
        CHECKF(kind == K_RUNS ? ratio > 20 : ratio < 10, "kind %d: ratio %.1f", kind, ratio);
        pinflate *p;
        CHECK(pinflate_create(&p, 3, 0) == 0);
        uint64_t was = 0, hinted = 0, plain = 0;
        for (int round = 0; round < 15 && !(round >= 3 && plain); round++) {
            int hint = round < 3; /* three streams with the hint, then up to twelve without */
            if (hint)
                pinflate_ratio_hint(p, ratio);
            uint64_t counts[3];
            CHECKF(run_counted(p, c, clen, data, n, out, counts), "kind %d, round %d", kind,
                   round);
            *(hint ? &hinted : &plain) += counts[2] - was;
            was = counts[2];
        }
        CHECKF(kind == K_RUNS ? hinted == 0 : hinted >= 1,
               "kind %d, ratio %.1f: %llu speculative with the hint", kind, ratio,
               (unsigned long long)hinted);
        CHECKF(plain >= 1, "kind %d: none speculative without the hint", kind);
        pinflate_destroy(p);
        free(c);
    }
    free(out);
    free(data);
}

/* Chunk sizes follow the plan: under AUTO on 2 threads, a stream that
 * speculates on every chunk it cannot decode in order (floats, near noise)
 * aims at the largest chunks, whose own work (the start's search, the
 * first window as symbols) is then a small share; one decoded in order
 * (text) keeps the small ones, a few per thread. Which plan a stream takes
 * depends on the threads' timing, so the sizes are checked against the
 * share of chunks decoded speculatively. The bytes are the data's. */
static void test_spec_chunks(void)
{
    size_t n = 24u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    for (int kind = K_TEXT; kind <= K_FLOATS; kind++) {
        fill(data, n, kind);
        size_t clen;
        uint8_t *c = level6_padded(data, n, &clen);
        pinflate *p;
        CHECK(pinflate_create(&p, 2, 0) == 0);
        uint64_t counts[3];
        CHECKF(run_counted(p, c, clen, data, n, out, counts), "kind %d", kind);
        uint64_t chunks = counts[0], spec = counts[2], half = n / (2u << 20);
        /* speculating: chunks of up to 4 MiB after the first measure; in order: of 1 MiB */
        CHECKF(2 * spec >= chunks ? chunks <= half : chunks >= half,
               "kind %d: %llu chunks, %llu speculative", kind, (unsigned long long)chunks,
               (unsigned long long)spec);
        pinflate_destroy(p);
        free(c);
    }
    free(out);
    free(data);
}

/* Decoding in order on 2 threads, the idle one faults the first chunks'
 * output buffers in ahead (at most one per chunk that may be in flight,
 * 5); a second stream on the same decoder takes the first one's spares,
 * warm, and makes at most what they fall short of that (none, unless the
 * first stream's idle thread got too little of a busy machine's cores to
 * make them all); a pipe's stream, of unknown length, none. The bytes are
 * the data's every time. */
static void test_prefault(void)
{
    size_t n = 12u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    fill(data, n, K_TEXT);
    size_t clen;
    uint8_t *c = level6_padded(data, n, &clen);
    pinflate *p = NULL;
    uint64_t was = 0, first = 0;
    int tries = 0;
    for (int k = 0; k < 3; k++) { /* a file's stream twice, then a pipe's on a new decoder */
        if (k != 1) {
            pinflate_destroy(p);
            CHECK(pinflate_create(&p, 2, 0) == 0);
            pinflate_plan(p, PINFLATE_ORDER);
            was = 0;
        }
        size_t got;
        uint64_t end;
        uint32_t crc;
        int r = par_inflate(p, c, clen + 8, out, n + 64, &got, &end, &crc, k == 2);
        CHECKF(r == 0 && got == n && memcmp(out, data, n) == 0 &&
                   crc == (uint32_t)crc32(0, data, (uInt)n),
               "stream %d: r %d", k, r);
        uint64_t made = pinflate_prefaulted(p) - was;
        was = pinflate_prefaulted(p);
        if (k == 0 && made == 0 && ++tries < 5) { /* the idle thread got no core in time */
            k--;
            continue;
        }
        if (k == 0)
            first = made;
        CHECKF(k == 0 ? made >= 1 && made <= 5 : k == 1 ? first + made <= 5 : made == 0,
               "stream %d: %llu prefaulted (the first %llu)", k, (unsigned long long)made,
               (unsigned long long)first);
    }
    pinflate_destroy(p);
    free(c);
    free(out);
    free(data);
}

/* The plan on int32s uniform in 0..299 (deflated about 2.5 to 1, their
 * back-references into the unknown window copied all through, as text's):
 * at that ratio a chunk of symbols costs about two in-order ones, not
 * text's six, so AUTO on 2 threads, once its probe is measured, decodes
 * chunks speculatively ahead of the order on the other thread (how many
 * depends on the threads' timing: more than the probes). The bytes are
 * the data's. */
static void test_plan_ints(void)
{
    size_t n = 24u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = (uint32_t)(rnd() % 300);
        memcpy(data + i, &v, 4);
    }
    size_t clen;
    uint8_t *c = level6_padded(data, n, &clen);
    pinflate *p;
    CHECK(pinflate_create(&p, 2, 0) == 0);
    uint64_t counts[3];
    CHECK(run_counted(p, c, clen, data, n, out, counts));
    uint64_t chunks = counts[0], spec = counts[2];
    CHECKF(n / clen >= 2 && spec > 1 + chunks / 64, "ratio %zu: %llu of %llu chunks speculative",
           n / clen, (unsigned long long)spec, (unsigned long long)chunks);
    pinflate_destroy(p);
    free(c);
    free(out);
    free(data);
}

/* Boundaries between the chunks handed out: their source bits and lengths. */
typedef struct {
    uint64_t len[4096];
    size_t n;
} bounds;

/* pinflate_on_boundary's hook: records the length before the boundary. */
static void bound_seen(void *ctx, uint64_t bit, uint64_t len)
{
    bounds *b = ctx;
    (void)bit;
    if (b->n < 4096)
        b->len[b->n++] = len;
}

/* Chunk sizes on data that compresses 50 to 1: no chunk, the first (sized
 * before the ratio is known) included, decodes to more than its limit
 * (1.5 MiB on 2 threads, or the blocks' mean output) and a block, so the
 * chunks in flight hold little memory. */
static void test_chunk_bounds(void)
{
    size_t n = 32u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    fill(data, n, K_RUNS);
    size_t clen;
    uint8_t *c = level6_padded(data, n, &clen);
    /* the longest block's output, from a decode stopped at every boundary */
    inflate_job j = {.in = c, .in_len = clen, .stop_bit = 1, .out_limit = SIZE_MAX, .out = out,
                     .out_cap = n};
    size_t block_max = 0, last = 0;
    while (inflate_decode_bytes(&j) == INFLATE_STOP) {
        block_max = j.out_len - last > block_max ? j.out_len - last : block_max;
        last = j.out_len;
        j.stop_bit = j.bit + 1;
    }
    block_max = n - last > block_max ? n - last : block_max;
    for (int plan = 0; plan < 3; plan++) {
        pinflate *p;
        CHECK(pinflate_create(&p, 2, 0) == 0);
        pinflate_plan(p, (enum pinflate_plan)plan);
        bounds b = {.n = 0};
        pinflate_on_boundary(p, bound_seen, &b);
        size_t got;
        uint64_t end;
        uint32_t crc;
        int r = par_inflate(p, c, clen + 8, out, n + 64, &got, &end, &crc, 0);
        CHECKF(r == 0 && got == n && memcmp(out, data, n) == 0, "plan %d: r %d", plan, r);
        uint64_t most = 0;
        for (size_t i = 0; i < b.n; i++)
            if (b.len[i] - (i ? b.len[i - 1] : 0) > most)
                most = b.len[i] - (i ? b.len[i - 1] : 0);
        CHECKF(b.n > 8 && most <= (3u << 19) + 2 * block_max,
               "plan %d: %zu chunks, the largest %llu bytes (blocks up to %zu)", plan, b.n,
               (unsigned long long)most, block_max);
        pinflate_destroy(p);
    }
    free(c);
    free(out);
    free(data);
}

/* The order taking over: on text, AUTO on 3 threads decodes in order with
 * a speculative chunk ahead on each other thread, whose speculation costs
 * about three in-order chunks. With the threads on one CPU a speculative
 * chunk is often not done when the order reaches it, and the order decodes
 * that range itself, dropping the speculation (how often depends on the
 * scheduler): the bytes are the data's, over several streams. */
static void test_plan_late(void)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        return;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    size_t n = 12u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    fill(data, n, K_TEXT);
    size_t clen;
    uint8_t *c = level6_padded(data, n, &clen);
    for (int k = 0; k < 4; k++) {
        pinflate *p;
        CHECK(pinflate_create(&p, 3, clen / 100) == 0);
        pinflate_plan(p, PINFLATE_AUTO);
        size_t got;
        uint64_t end;
        uint32_t crc;
        memset(out, 0xa5, n + 64);
        int r = par_inflate(p, c, clen + 8, out, n + 64, &got, &end, &crc, k & 1);
        CHECKF(r == 0 && got == n && memcmp(out, data, n) == 0 &&
                   crc == (uint32_t)crc32(0, data, (uInt)n),
               "late %d: r %d", k, r);
        pinflate_destroy(p);
    }
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
    free(c);
    free(out);
    free(data);
}

/* Markers: a stream decoded from a block start in its middle with the
 * window unknown gives, once the markers are replaced by the real window,
 * the bytes zlib gives from there. */
static void test_markers(void)
{
    size_t n = 3000000;
    uint8_t *data = malloc(n);
    fill(data, n, K_TEXT);
    size_t clen;
    uint8_t *c = deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 15, 0, 0, &clen);
    /* block boundaries: where a stepped decode stops */
    uint8_t *out = malloc(n);
    inflate_job j = {
        .in = c, .in_len = clen, .stop_bit = 1, .out_limit = SIZE_MAX, .out = out, .out_cap = n};
    int found = 0;
    while (inflate_decode_bytes(&j) == INFLATE_STOP) {
        if (j.out_len >= INFLATE_WINDOW && found < 4) {
            uint16_t *sym = malloc((n) * 2);
            inflate_job s = {.in = c, .in_len = clen, .bit = j.bit, .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = sym, .out_cap = n};
            int r = inflate_decode_symbols(&s);
            int markers = 0;
            for (size_t i = 0; i < s.out_len; i++)
                markers += sym[i] >= INFLATE_MARKER;
            uint8_t *res = malloc(s.out_len + 1);
            int rr = inflate_resolve(res, sym, s.out_len, out + j.out_len - INFLATE_WINDOW,
                                     INFLATE_WINDOW);
            CHECKF((r == INFLATE_END || r == INFLATE_CLEAN) && markers > 0 && rr == 0 &&
                       memcmp(res, data + j.out_len, s.out_len) == 0,
                   "markers from bit %llu: r %d markers %d", (unsigned long long)j.bit, r, markers);
            /* a window shorter than the markers need is refused */
            CHECK(inflate_resolve(res, sym, s.out_len, out + j.out_len - INFLATE_WINDOW, 0) == -1);
            /* in place, over the symbols' own memory: the same bytes */
            CHECK(inflate_resolve((uint8_t *)sym, sym, s.out_len, out + j.out_len - INFLATE_WINDOW,
                                  INFLATE_WINDOW) == 0 &&
                  memcmp(sym, data + j.out_len, s.out_len) == 0);
            free(res);
            free(sym);
            found++;
        }
        j.stop_bit = j.bit + 1;
    }
    CHECKF(found == 4, "%d block starts past the first window", found);
    free(out);
    free(c);
    free(data);
}

/* The block finder finds every boundary a decode stops at that starts a
 * block it looks for (non-final dynamic or stored), at exactly that bit. */
static void test_finder(void)
{
    size_t n = 400000;
    uint8_t *data = malloc(n);
    /* every kind at four levels, then data repeating at one distance p
     * with a byte changed every m (matches up to m long from p back): the
     * codes' counts HLIT and HDIST take many values */
    static const size_t periods[] = {5, 40, 100, 150, 220, 700, 3000, 20000};
    int cases = K_KINDS * 4 + 24;
    for (int case_ = 0; case_ < cases; case_++) {
        int kind = case_ / 4, level = 3 * (case_ % 4);
        if (kind < K_KINDS) {
            fill(data, n, kind);
        } else {
            size_t p = periods[case_ % 8], m = 4 + rnd() % 200;
            level = 6;
            for (size_t i = 0; i < n; i++)
                data[i] = (uint8_t)(i < p || i % m == 0 ? rnd() : data[i - p]);
        }
        size_t clen;
        uint8_t *c = deflate_raw(data, n, level, Z_DEFAULT_STRATEGY, 15, 7000, 0, &clen);
        uint8_t *out = malloc(n);
        inflate_job j = {.in = c, .in_len = clen, .stop_bit = 1, .out_limit = SIZE_MAX, .out = out,
                         .out_cap = n};
        int missed = 0, looked = 0;
        while (inflate_decode_bytes(&j) == INFLATE_STOP) {
            unsigned head = (unsigned)((c[j.bit / 8] | (j.bit / 8 + 1 < clen ? c[j.bit / 8 + 1] : 0) << 8) >>
                                       (j.bit % 8)) & 7;
            if (head == 4 || head == 0) { /* dynamic or stored, not final */
                looked++;
                missed += inflate_find_block(c, clen, j.bit, j.bit + 1) != j.bit;
            }
            j.stop_bit = j.bit + 1;
        }
        CHECKF(missed == 0 && looked > 10, "finder case %d level %d: %d of %d missed", case_, level,
               missed, looked);
        free(out);
        free(c);
    }
    /* a stored block's header at every bit of a byte and every byte of the
     * finder's 8-byte groups, LEN/NLEN one or two bytes on, between bytes
     * of ones (type 3 everywhere, no other candidate): found exactly there,
     * from any start before it; with NLEN wrong, not found */
    int wrong = 0;
    for (size_t at = 16; at < 16 + 24; at++) {
        for (unsigned k = 0; k < 8; k++) {
            for (int good = 0; good <= 1; good++) {
                memset(data, 0xff, 64);
                uint64_t bit = at * 8 + k;
                for (unsigned q = 0; q < 3; q++)
                    data[(bit + q) / 8] &= (uint8_t) ~(1u << ((bit + q) % 8));
                size_t lb = (size_t)((bit + 3 + 7) / 8);
                uint16_t len = (uint16_t)rnd();
                data[lb] = (uint8_t)len;
                data[lb + 1] = (uint8_t)(len >> 8);
                data[lb + 2] = (uint8_t)~len;
                data[lb + 3] = (uint8_t)(~len >> 8) ^ (good ? 0 : 1u << (rnd() % 8));
                uint64_t from = rnd() % (bit + 1);
                uint64_t found = inflate_find_block(data, 64, from, 64 * 8);
                wrong += found != (good ? bit : UINT64_MAX);
            }
        }
    }
    CHECKF(wrong == 0, "stored headers planted at each offset: %d found wrongly", wrong);
    free(data);
}

/* Damaged streams: flipped bits, cut ends and random bytes. Whatever zlib
 * refuses both decoders refuse, and what they hand out before is exactly
 * zlib's; what zlib accepts they decode the same. */
static void test_damage(void)
{
    pinflate *p3, *p1;
    CHECK(pinflate_create(&p3, 3, 2048) == 0);
    CHECK(pinflate_create(&p1, 1, 5000) == 0);
    int agree = 0, total = 0, refused = 0;
    for (int round = 0; round < 300; round++) {
        size_t n = 1000 + rnd() % 200000;
        uint8_t *data = malloc(n);
        fill(data, n, (int)(rnd() % K_KINDS));
        size_t clen;
        uint8_t *c = deflate_raw(data, n, (int)(rnd() % 10), Z_DEFAULT_STRATEGY, 15,
                                 rnd() % 3 ? 0 : 3000, 0, &clen);
        int how = (int)(rnd() % 4);
        if (how == 0) {
            clen = rnd() % clen; /* cut */
        } else if (how == 1) {
            for (int f = 0; f < 1 + (int)(rnd() % 3); f++) {
                size_t at = rnd() % clen;
                c[at] ^= (uint8_t)(1u << (rnd() % 8));
            }
        } else if (how == 2) {
            size_t at = rnd() % clen, len = 1 + rnd() % 64;
            for (size_t i = at; i < at + len && i < clen; i++)
                c[i] = (uint8_t)rnd();
        } else {
            c[clen / 2] ^= 0x10;
            clen = clen * 3 / 4;
        }
        size_t cap = n * 4 + 100000;
        uint8_t *zout = malloc(cap), *hout = malloc(cap), *pout = malloc(cap);
        size_t zgot, hgot, pgot;
        uint64_t end;
        uint32_t crc;
        int zok = zlib_raw_inflate(c, clen, zout, cap, &zgot);
        int hr = host_inflate(c, clen, hout, cap, &hgot, 0, &end);
        int pr = par_inflate(round & 1 ? p3 : p1, c, clen, pout, cap, &pgot, &end, &crc,
                             round % 3 == 2);
        int ok;
        if (zok)
            ok = hr == INFLATE_END && hgot == zgot && memcmp(hout, zout, zgot) == 0 && pr == 0 &&
                 pgot == zgot && memcmp(pout, zout, zgot) == 0;
        else
            ok = hr != INFLATE_END && hgot <= zgot && memcmp(hout, zout, hgot) == 0 && pr == 1 &&
                 pgot <= zgot && memcmp(pout, zout, pgot) == 0;
        CHECKF(ok, "round %d how %d: zlib %d (%zu bytes), host %d (%zu), parallel %d (%zu)", round,
               how, zok, zgot, hr, hgot, pr, pgot);
        agree += ok;
        refused += !zok;
        total++;
        free(zout);
        free(hout);
        free(pout);
        free(c);
        free(data);
    }
    pinflate_destroy(p3);
    pinflate_destroy(p1);
    CHECK(agree == total && refused > 100);
}

/* A stream taken up at a block boundary in its middle (where a device
 * stops), with the window, CRC-32 and length before it: the rest and the
 * whole stream's CRC-32 and length are zlib's; damaged after the point,
 * the decoder stops at a block boundary at or past it with zlib's bytes
 * before it, for zlib to go on from there. */
static void test_begin_at(void)
{
    pinflate *p;
    CHECK(pinflate_create(&p, 3, 4096) == 0);
    int whole = 0, refused = 0;
    for (int round = 0; round < 60; round++) {
        size_t n = 100000 + rnd() % 500000, clen, zgot;
        uint8_t *data = malloc(n);
        fill(data, n, (int)(rnd() % K_KINDS));
        uint8_t *c = deflate_raw(data, n, 1 + (int)(rnd() % 9), Z_DEFAULT_STRATEGY, 15,
                                 rnd() % 2 ? 0 : 20000, 0, &clen);
        size_t cap = n + 100000;
        uint8_t *out = malloc(cap), *zout = malloc(cap);
        /* the first block boundary past a random bit of the first half */
        inflate_job j = {.in = c, .in_len = clen, .stop_bit = rnd() % (clen * 4 + 1),
                         .out_limit = SIZE_MAX, .out = out, .out_cap = cap};
        if (inflate_decode_bytes(&j) != INFLATE_STOP) { /* one block: nothing in its middle */
            free(c), free(data), free(out), free(zout);
            continue;
        }
        size_t wlen = j.out_len < INFLATE_WINDOW ? j.out_len : INFLATE_WINDOW;
        pinflate_point at = {.bit = j.bit, .window = data + j.out_len - wlen, .wlen = wlen,
                             .crc = (uint32_t)crc32(0, data, (uInt)j.out_len), .len = j.out_len};
        int damaged = round % 2;
        if (damaged) { /* a run of bytes replaced after the point, or the stream cut there */
            size_t from = j.bit / 8 + 1 + rnd() % (clen - j.bit / 8 - 1);
            for (size_t i = from; round % 4 == 1 && i < from + 64 && i < clen; i++)
                c[i] = (uint8_t)rnd();
            if (round % 4 == 3)
                clen = from;
        }
        int zok = zlib_raw_inflate(c, clen, zout, cap, &zgot);
        pinflate_begin_at(p, -1, c, clen, &at);
        size_t got = 0;
        ssize_t k;
        while ((k = pinflate_read(p, out + got, cap - got < 70000 ? cap - got : 70000)) > 0)
            got += (size_t)k;
        uint64_t end, len;
        uint32_t crc;
        if (k == 0)
            pinflate_result(p, &end, &crc, &len);
        else if (k == PINFLATE_STOPPED) {
            const uint8_t *w;
            size_t wl;
            pinflate_stop_point(p, &end, &w, &wl, &crc, &len);
        }
        /* what zlib decoded after the point, and no more */
        size_t after = zgot > at.len ? zgot - at.len : 0;
        if (zok) /* valid (a damaged one may still be: raw deflate has no check) */
            CHECKF(k == 0 && got == zgot - at.len && !memcmp(out, zout + at.len, got) &&
                       len == zgot && crc == (uint32_t)crc32(0, zout, (uInt)zgot) &&
                       (damaged || (zgot == n && !memcmp(zout, data, n) && end == clen)),
                   "round %d from bit %llu: rc %zd, %zu of %zu bytes", round,
                   (unsigned long long)at.bit, k, got, zgot - at.len);
        whole += zok && !damaged;
        refused += !zok;
        if (!zok)
            CHECKF(k == PINFLATE_STOPPED && end >= at.bit && got <= after &&
                       !memcmp(out, zout + at.len, got) && len == at.len + got &&
                       crc == (uint32_t)crc32(0, zout, (uInt)len),
                   "round %d (damaged) from bit %llu: rc %zd, stop at %llu, %zu bytes", round,
                   (unsigned long long)at.bit, k, (unsigned long long)end, got);
        pinflate_end(p);
        free(c), free(data), free(out), free(zout);
    }
    pinflate_destroy(p);
    CHECKF(whole > 15 && refused > 10, "%d whole, %d refused", whole, refused);
}

/* A chunk whose search meets, before the true block boundary, bits that
 * decode as complete codes until a "block" of them is final (far from the
 * stream's end) passes over them: no chunk is decoded again in order. The
 * first such start in level-1 floats that a search from a byte boundary
 * meets first is made chunk 1's (chunks of that many bytes). */
static void test_false_final(void)
{
    rng_state = RND_SEED; /* its own data, whatever ran before: such a start is in it */
    size_t n = 4u << 20, clen;
    uint8_t *data = malloc(n), *out = malloc(n + 1024);
    for (size_t i = 0; i < n; i += 4) { /* float32 of 6 decimals in [-1, 1] */
        float f = (float)((double)(rnd() % 2000001) / 1000000.0 - 1.0);
        memcpy(data + i, &f, 4);
    }
    uint8_t *c = deflate_raw(data, n, 1, Z_DEFAULT_STRATEGY, 15, 0, 0, &clen);
    c = realloc(c, clen + 8);
    memset(c + clen, 0x5a, 8); /* a gzip member's trailer */
    if_u32 cap = 1u << 20;
    uint16_t *syms = malloc((size_t)cap * sizeof *syms);
    static if_tables t;
    uint64_t chunk = 0;
    for (uint64_t from = clen * 8 / 1000; !chunk;) {
        uint64_t at = inflate_find_block(c, clen, from, (uint64_t)clen * 8), end;
        if_u32 nout;
        if (at == UINT64_MAX)
            break;
        int st = ifs_decode(c, (if_u32)clen, at, at + (1u << 20), syms, cap, &t, &end, &nout);
        if (st == IFS_FINAL && !ifs_final_trusted(c, clen, end) &&
            inflate_find_block(c, clen, at / 8 * 8, (uint64_t)clen * 8) == at)
            chunk = at / 8;
        from = at + 1;
    }
    CHECKF(chunk != 0, "no start in %zu bytes of level-1 floats ends in a final block", clen);
    if (chunk) {
        pinflate *p;
        CHECK(pinflate_create(&p, 4, chunk) == 0);
        size_t got;
        uint64_t end, chunks, redone;
        uint32_t crc;
        int r = par_inflate(p, c, clen + 8, out, n + 1024, &got, &end, &crc, 0);
        pinflate_counts(p, &chunks, &redone);
        CHECKF(r == 0 && got == n && memcmp(out, data, n) == 0 && redone == 0,
               "chunks of %llu bytes: r %d, %zu bytes, %llu of %llu chunks decoded again",
               (unsigned long long)chunk, r, got, (unsigned long long)redone,
               (unsigned long long)chunks);
        pinflate_destroy(p);
    }
    free(data);
    free(out);
    free(c);
    free(syms);
}

/* Appends to *buf (at *len) one gzip member of data[0..n): a 10-byte
 * header, or one with a file name (FNAME), raw deflate, CRC-32 and ISIZE. */
static void append_member(uint8_t **buf, size_t *len, const uint8_t *data, size_t n, int level,
                          int named)
{
    size_t clen;
    uint8_t *c = deflate_raw(data, n, level, Z_DEFAULT_STRATEGY, 15, 0, 0, &clen);
    *buf = realloc(*buf, *len + 16 + clen + 8);
    uint8_t *o = *buf + *len;
    static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(o, head, 10);
    size_t at = 10;
    if (named) {
        o[3] = 8;
        memcpy(o + at, "x.npy", 6);
        at += 6;
    }
    memcpy(o + at, c, clen);
    at += clen;
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n), size = (uint32_t)n;
    for (int k = 0; k < 4; k++) {
        o[at + k] = (uint8_t)(crc >> (8 * k));
        o[at + 4 + k] = (uint8_t)(size >> (8 * k));
    }
    *len += at + 8;
    free(c);
}

/* Gzip members one after another, of every size from empty to a few
 * chunks, read from memory and from a pipe with the decoder going on
 * across them: each member's bytes, CRC-32, length and end; the decoder
 * goes on at each next member's first block, and only there. */
static void test_members(void)
{
    pinflate *p;
    CHECK(pinflate_create(&p, 3, 20000) == 0);
    for (int round = 0; round < 24; round++) {
        int nm = 1 + (int)(rnd() % 40);
        size_t *sizes = malloc(nm * sizeof *sizes), total = 0, glen = 0;
        for (int m = 0; m < nm; m++) {
            uint64_t x = rnd() % 8;
            sizes[m] = x == 0 ? 0 : x < 4 ? rnd() % 3000 : rnd() % 200000;
            total += sizes[m];
        }
        uint8_t *data = malloc(total + 1), *g = NULL, *out = malloc(total + 1);
        fill(data, total, (int)(rnd() % K_KINDS));
        size_t *starts = malloc(nm * sizeof *starts), off = 0;
        for (int m = 0; m < nm; m++) {
            starts[m] = glen;
            append_member(&g, &glen, data + off, sizes[m], (int)(rnd() % 10), (int)(rnd() & 1));
            off += sizes[m];
        }
        int pipe = round & 1, ok = 1, went_on = 0;
        pipe_feeder f;
        spool *sp = NULL;
        pinflate_members(p, 1);
        size_t hlen = pinflate_header(g, glen);
        if (pipe)
            pinflate_begin_spool(p, sp = pipe_feeder_spool(&f, g, glen, 50000, rnd()), hlen);
        else
            pinflate_begin(p, -1, g, glen, hlen);
        off = 0;
        for (int m = 0; m < nm && ok; m++) {
            if (m > 0) { /* where the member before ended: its trailer, then this header */
                size_t start = starts[m] + pinflate_header(g + starts[m], glen - starts[m]);
                CHECK(pinflate_continue(p, start + 1) == 0);
                if (pinflate_continue(p, start))
                    went_on++;
                else if (pipe)
                    pinflate_begin_spool(p, sp, start); /* the spool still holds it */
                else
                    pinflate_begin(p, -1, g, glen, start);
            }
            size_t got = 0;
            ssize_t k;
            while ((k = pinflate_read(p, out + got, 1 + rnd() % 70000)) > 0)
                got += (size_t)k;
            uint64_t end, len;
            uint32_t crc;
            pinflate_result(p, &end, &crc, &len);
            ok = k == 0 && got == sizes[m] && memcmp(out, data + off, got) == 0 && len == got &&
                 crc == (uint32_t)crc32(0, data + off, (uInt)got) &&
                 end + 8 == (m + 1 < nm ? starts[m + 1] : glen) &&
                 (m + 1 < nm || !pinflate_member_end(p)); /* the last one ends the data */
            CHECKF(ok, "round %d%s: member %d of %d (%zu bytes): read %zd, %zu bytes, end %llu",
                   round, pipe ? " from a pipe" : "", m, nm, sizes[m], k, got,
                   (unsigned long long)end);
            off += sizes[m];
        }
        pinflate_end(p);
        if (pipe)
            pipe_feeder_end(&f, sp);
        CHECKF(nm < 4 || went_on > 0, "round %d: %d members, never went on", round, nm);
        free(sizes);
        free(starts);
        free(data);
        free(g);
        free(out);
    }
    pinflate_members(p, 0);
    pinflate_destroy(p);
}

/* A member followed by what would be a gzip header but for its magic
 * (1f 7d): no member the decoder takes, so it ends the stream at the
 * member's end (the reader then calls those bytes trailing garbage). */
static void test_member_magic(void)
{
    size_t n = 200000, glen = 0;
    uint8_t *data = malloc(2 * n), *g = NULL, *out = malloc(2 * n);
    fill(data, 2 * n, K_TEXT);
    append_member(&g, &glen, data, n, 6, 0);
    size_t second = glen;
    append_member(&g, &glen, data + n, n, 6, 0);
    CHECK(pinflate_header(g + second, glen - second) > 0);
    g[second + 1] = 0x7d;
    CHECK(pinflate_header(g + second, glen - second) == 0);
    pinflate *p;
    CHECK(pinflate_create(&p, 2, 20000) == 0);
    pinflate_members(p, 1);
    pinflate_begin(p, -1, g, glen, pinflate_header(g, glen));
    size_t got = 0;
    ssize_t k;
    while ((k = pinflate_read(p, out + got, 65536)) > 0)
        got += (size_t)k;
    uint64_t end, len;
    uint32_t crc;
    pinflate_result(p, &end, &crc, &len);
    CHECKF(k == 0 && got == n && memcmp(out, data, n) == 0 && end + 8 == second &&
               !pinflate_member_end(p),
           "read %zd, %zu bytes, end %llu of %zu, member end %d", k, got,
           (unsigned long long)end, second - 8, pinflate_member_end(p));
    pinflate_end(p);
    pinflate_members(p, 0);
    pinflate_destroy(p);
    free(data);
    free(out);
    free(g);
}

/* Log-like lines (a time stamp and one of four messages): about 20 to 1
 * under zlib -6, in blocks of over a megabyte each. */
static void fill_log(uint8_t *buf, size_t n)
{
    static const char *msgs[] = {"INFO [net] request served", "INFO [disk] flushed pages",
                                 "DEBUG [cache] cache hit", "WARN [sched] queue long"};
    size_t i = 0;
    unsigned t = 0;
    while (i < n) {
        char line[96];
        int k = snprintf(line, sizeof line, "%u.%03u %s\n", 1700000000u + t / 1000, t % 1000,
                         msgs[rnd() % 4]);
        t += (unsigned)(rnd() % 3);
        for (int j = 0; j < k && i < n; j++)
            buf[i++] = (uint8_t)line[j];
    }
}

/* inflate_resolve against a plain reference on random symbols (literals,
 * markers, runs of either), of every length around the size from which it
 * maps them through a table, with windows valid in full, in part and not
 * at all, into other memory and in place: the same bytes, and -1 exactly
 * where a marker points before the valid bytes. */
static void test_resolve(void)
{
    static const size_t lens[] = {1, 15, 4095, 4096, 4097, 40000, 70001};
    static const size_t valids[] = {INFLATE_WINDOW, INFLATE_WINDOW - 1, 1000, 0};
    uint8_t *window = malloc(INFLATE_WINDOW), *got = malloc(70001), *want = malloc(70001);
    uint16_t *sym = malloc(70001 * 2), *copy = malloc(70001 * 2);
    for (size_t i = 0; i < INFLATE_WINDOW; i++)
        window[i] = (uint8_t)rnd();
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (size_t v = 0; v < sizeof valids / sizeof valids[0]; v++)
            for (int mode = 0; mode < 3; mode++) { /* markers: mixed, valid only, none */
                size_t n = lens[l], first = INFLATE_WINDOW - valids[v];
                int want_bad = 0;
                for (size_t i = 0; i < n; i++) {
                    int marker = mode == 2 ? 0 : rnd() % 3 == 0;
                    unsigned w = (unsigned)(rnd() % INFLATE_WINDOW);
                    if (mode == 1 && w < first)
                        w = (unsigned)(first + w % (INFLATE_WINDOW - first + (first == INFLATE_WINDOW)));
                    sym[i] = marker ? (uint16_t)(INFLATE_MARKER + (w & (INFLATE_WINDOW - 1)))
                                    : (uint16_t)(rnd() & 255);
                    want[i] = marker ? window[sym[i] - INFLATE_MARKER] : (uint8_t)sym[i];
                    want_bad |= marker && (unsigned)(sym[i] - INFLATE_MARKER) < first;
                }
                memcpy(copy, sym, n * 2);
                int r = inflate_resolve(got, sym, n, window, valids[v]);
                int r2 = inflate_resolve((uint8_t *)copy, copy, n, window, valids[v]);
                CHECKF(r == (want_bad ? -1 : 0) && r2 == r && memcmp(got, want, n) == 0 &&
                           memcmp(copy, want, n) == 0,
                       "resolve of %zu symbols, %zu valid, mode %d: %d %d, want %d", n, valids[v],
                       mode, r, r2, want_bad ? -1 : 0);
            }
    free(window);
    free(got);
    free(want);
    free(sym);
    free(copy);
}

/* Raw deflate of data[0..n) at level 6 as pigz writes it: every `every`
 * bytes the block ends (Z_BLOCK) and one to three empty fixed-Huffman blocks
 * follow. Returns a malloc'd stream and its length. */
static uint8_t *deflate_empty_blocks(const uint8_t *data, size_t n, size_t every, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&zs, (uLong)n) + 64 * (n / every + 2);
    uint8_t *out = malloc(cap);
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    for (size_t pos = 0; pos < n;) {
        size_t step = every < n - pos ? every : n - pos;
        zs.next_in = (Bytef *)(uintptr_t)(data + pos);
        zs.avail_in = (uInt)step;
        pos += step;
        if (pos == n) {
            deflate(&zs, Z_FINISH);
            break;
        }
        deflate(&zs, Z_BLOCK);
        for (unsigned k = 1 + (unsigned)(rnd() % 3); k; k--)
            deflatePrime(&zs, 10, 2); /* BFINAL 0, BTYPE 01, the end code */
    }
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* Block boundaries a decode reports, in stream order, with the output
 * before each; where `first` is set, only the first of those with the same
 * output (none after an empty block), as the seek index takes them. */
typedef struct {
    struct {
        uint64_t bit, out;
    } *at;
    size_t n, cap;
    int first;
} boundary_list;

/* Appends the boundary at `bit` with `out` bytes before it to l. */
static void boundary_append(boundary_list *l, uint64_t bit, uint64_t out)
{
    if (l->first && l->n && l->at[l->n - 1].out == out)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->at = realloc(l->at, l->cap * sizeof *l->at);
    }
    l->at[l->n].bit = bit;
    l->at[l->n++].out = out;
}

/* inflate_job.on_block: boundary_append. */
static void boundary_add(void *ctx, uint64_t bit, size_t out_len)
{
    boundary_append(ctx, bit, out_len);
}

/* pinflate_on_boundary's hook: boundary_append. */
static void boundary_reported(void *ctx, uint64_t bit, uint64_t len)
{
    boundary_append(ctx, bit, len);
}

/* Starts the block finder takes in c[0..clen) that no block begins at:
 * the real boundaries come from one decode of the whole stream. A
 * speculative chunk whose first start is one of them is rightly decoded
 * again. */
static size_t false_starts(const uint8_t *c, size_t clen, uint8_t *out, size_t cap)
{
    boundary_list l = {0};
    inflate_job j = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX,
                     .out = out, .out_cap = cap, .on_block = boundary_add, .block_ctx = &l};
    CHECK(inflate_decode_bytes(&j) == INFLATE_END);
    size_t nfalse = 0, k = 0;
    for (uint64_t from = 1;; ) {
        uint64_t bit = inflate_find_block(c, clen, from, (uint64_t)clen * 8);
        if (bit == UINT64_MAX)
            break;
        while (k < l.n && l.at[k].bit < bit)
            k++;
        nfalse += k == l.n || l.at[k].bit != bit;
        from = bit + 1;
    }
    free(l.at);
    return nfalse;
}

/* The boundaries the decoder reports (pinflate_on_boundary), the first of
 * each output length, are those of one whole decode wherever chunks end: on
 * streams flushed every 3000 bytes, whose empty stored blocks a chunk may
 * end just after, with chunks of many sizes on 2 threads. */
static void test_boundaries_reported(void)
{
    size_t n = 2u << 20, clen;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    fill(data, n, K_TEXT);
    uint8_t *c = deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 15, 3000, 0, &clen);
    c = realloc(c, clen + 8);
    memset(c + clen, 0x5a, 8);
    boundary_list want = {.first = 1};
    inflate_job j = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX,
                     .out = out, .out_cap = n + 64, .on_block = boundary_add, .block_ctx = &want};
    CHECK(inflate_decode_bytes(&j) == INFLATE_END && j.out_len == n);
    CHECK(want.n > 500);
    for (int k = 0; k < 24; k++) {
        uint64_t chunk = 1500 + 37 * (uint64_t)k, end;
        pinflate *p;
        CHECK(pinflate_create(&p, 2, chunk) == 0);
        boundary_list got = {.first = 1};
        pinflate_on_boundary(p, boundary_reported, &got);
        size_t len;
        uint32_t crc;
        CHECK(par_inflate(p, c, clen + 8, out, n + 64, &len, &end, &crc, 0) == 0 && len == n);
        size_t same = 0;
        while (same < got.n && same < want.n && got.at[same].bit == want.at[same].bit &&
               got.at[same].out == want.at[same].out)
            same++;
        CHECKF(got.n == want.n && same == want.n && !pinflate_boundaries_lost(p),
               "chunks of %llu bytes: %zu boundaries reported, %zu in a whole decode, the first %zu the same",
               (unsigned long long)chunk, got.n, want.n, same);
        free(got.at);
        pinflate_destroy(p);
    }
    free(want.at);
    free(c);
    free(out);
    free(data);
}

/* Where a symbol decode from a boundary of the stream stops as clean
 * (INFLATE_CLEAN): at the first block boundary where the last
 * INFLATE_WINDOW symbols hold no marker, at least that far into the output,
 * the same in one call and in calls cut short by out_limit. The data are
 * text, whose copies carry the unknown window's markers on, between runs
 * of noise long enough to end them. */
static void test_clean_point(void)
{
    size_t n = 3u << 20, clen, runs[] = {150000, 40000, 260000, 33000, 90000, 70000};
    uint8_t *data = malloc(n), *out = malloc(n);
    for (size_t i = 0, r = 0; i < n; r++) {
        size_t len = runs[r % 6] < n - i ? runs[r % 6] : n - i;
        fill(data + i, len, r % 2 ? K_RANDOM : K_TEXT);
        i += len;
    }
    /* blocks of about 100 bytes: a stop a few symbols early or late shows */
    uint8_t *c = deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 15, 97, 0, &clen);
    boundary_list all = {.first = 1};
    inflate_job j = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX,
                     .out = out, .out_cap = n, .on_block = boundary_add, .block_ctx = &all};
    CHECK(inflate_decode_bytes(&j) == INFLATE_END && j.out_len == n);
    uint16_t *sym = malloc(n * sizeof *sym);
    int cleans = 0;
    for (size_t k = 0; k < all.n; k += 1 + all.n / 150) {
        if (all.at[k].out < INFLATE_WINDOW)
            continue;
        boundary_list seen = {0};
        inflate_job s = {.in = c, .in_len = clen, .bit = all.at[k].bit, .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = sym, .out_cap = n, .on_block = boundary_add,
                         .block_ctx = &seen};
        int r = inflate_decode_symbols(&s);
        cleans += r == INFLATE_CLEAN;
        /* the reference: the last marker before each boundary, by a plain scan */
        int first_clean = 1;
        size_t b = 0, last = 0;
        for (size_t i = 0; i < seen.n && seen.at[i].out < s.out_len; i++) {
            for (; b < seen.at[i].out; b++)
                if (sym[b] >= INFLATE_MARKER)
                    last = b + 1;
            first_clean &= seen.at[i].out - last < INFLATE_WINDOW;
        }
        for (; b < s.out_len; b++)
            if (sym[b] >= INFLATE_MARKER)
                last = b + 1;
        int clean_now = s.out_len - last >= INFLATE_WINDOW;
        uint8_t *res = malloc(s.out_len + 1);
        int rr = inflate_resolve(res, sym, s.out_len, data + all.at[k].out - INFLATE_WINDOW,
                                 INFLATE_WINDOW);
        CHECKF(rr == 0 && memcmp(res, data + all.at[k].out, s.out_len) == 0 &&
                   (r == INFLATE_CLEAN ? clean_now && first_clean : r == INFLATE_END),
               "from output %llu: r %d at %zu, clean there %d, none before %d",
               (unsigned long long)all.at[k].out, r, s.out_len, clean_now, first_clean);
        /* cut short by out_limit every few KiB: the same stop */
        inflate_job t = {.in = c, .in_len = clen, .bit = all.at[k].bit, .stop_bit = UINT64_MAX,
                         .out = sym, .out_cap = n};
        int rt;
        do {
            t.out_limit = t.out_len + 1 + (t.out_len * 7919 + k) % 9000;
            rt = inflate_decode_symbols(&t);
        } while (rt == INFLATE_STOP);
        CHECKF(rt == r && t.out_len == s.out_len, "from output %llu, cut: r %d at %zu, whole %d at %zu",
               (unsigned long long)all.at[k].out, rt, t.out_len, r, s.out_len);
        free(res);
        free(seen.at);
    }
    CHECKF(cleans >= 40, "%d decodes stopped clean", cleans);
    free(sym);
    free(all.at);
    free(c);
    free(out);
    free(data);
}

/* One bytes decode of c[0..clen) from bit `bit` (history: the `hist`
 * bytes of data before it) into out (cap bytes) with the given limits, its
 * boundaries into *seen. */
static int halves_decode(const uint8_t *c, size_t clen, uint64_t bit, const uint8_t *data,
                         size_t hist, uint8_t *out, size_t cap, uint64_t stop_bit,
                         size_t out_limit, boundary_list *seen, inflate_job *j)
{
    memcpy(out, data - hist, hist);
    *j = (inflate_job){.in = c, .in_len = clen, .bit = bit, .stop_bit = stop_bit,
                       .out_limit = out_limit, .out = out + hist, .out_cap = cap - hist,
                       .history = hist, .on_block = boundary_add, .block_ctx = seen,
                       .halves = 1};
    return inflate_decode_bytes(j);
}

/* A long bytes decode of data that are mostly literals is cut in two
 * halves decoded at once (inflate_halves counts them): its bytes, result,
 * stop, blocks and reported boundaries are those of a decode in small
 * steps, which never cuts; with stops and output limits anywhere, too
 * little room, a cut input, damage in the second half, a known history,
 * and float, random and mixed data. */
static void test_halves(void)
{
    size_t n = 6u << 20;
    /* room for the output, the history before it and a cap past it */
    size_t room = n + 4096 + INFLATE_WINDOW + 128;
    uint8_t *data = malloc(n), *out = malloc(room), *ref = malloc(room);
    uint64_t before = inflate_halves();
    int cases = 0;
    for (int kind = 0; kind < 3; kind++) {
        fill(data, n, kind == 0 ? K_FLOATS : kind == 1 ? K_RANDOM : K_MIXED);
        size_t clen;
        uint8_t *c = deflate_raw(data, n, kind == 2 ? 1 : 6, Z_DEFAULT_STRATEGY, 15, 0, 0, &clen);
        c = realloc(c, clen + 16);
        memset(c + clen, 0, 16);
        /* the reference: steps of 64 KiB of input, never cut */
        boundary_list want = {0};
        inflate_job r = {.in = c, .in_len = clen, .stop_bit = 1, .out_limit = SIZE_MAX,
                         .out = ref, .out_cap = n + 4096, .on_block = boundary_add,
                         .block_ctx = &want};
        int rr;
        do {
            r.stop_bit = r.bit + (64u << 13);
            rr = inflate_decode_bytes(&r);
        } while (rr == INFLATE_STOP);
        CHECKF(rr == INFLATE_END && r.out_len == n && memcmp(ref, data, n) == 0,
               "kind %d: stepped decode %d, %zu bytes", kind, rr, r.out_len);
        for (int t = 0; t < 14; t++, cases++) {
            /* a start: the stream's, or a boundary with its history */
            size_t at = t % 3 == 0 || want.n < 8 ? 0 : 1 + rnd() % (want.n / 4);
            uint64_t bit = at ? want.at[at - 1].bit : 0;
            size_t hist = at ? want.at[at - 1].out : 0;
            hist = hist > INFLATE_WINDOW ? INFLATE_WINDOW + rnd() % 100 : hist;
            size_t first = at ? want.at[at - 1].out : 0;
            uint64_t stop_bit = t % 4 == 1 ? bit + rnd() % (clen * 8 - bit) : UINT64_MAX;
            size_t limit = t % 4 == 2 ? rnd() % n : SIZE_MAX;
            size_t cap = t % 5 == 3 ? (n - first) / 2 + rnd() % (n / 4) : n + 4096;
            size_t in_len = t % 7 == 4 ? clen / 2 + rnd() % (clen / 2) : clen;
            uint8_t *cc = c;
            if (t % 6 == 5) { /* damage in the second half */
                cc = malloc(clen + 16);
                memcpy(cc, c, clen + 16);
                for (int k = 0; k < 8; k++)
                    cc[clen / 2 + rnd() % (clen / 2)] ^= (uint8_t)(1 + rnd() % 255);
            }
            boundary_list got = {0}, step = {0};
            inflate_job g, s;
            int rg = halves_decode(cc, in_len, bit, data + first, hist, out, cap + hist, stop_bit,
                                   limit, &got, &g);
            /* the same job in steps of at most 64 KiB of input, never cut */
            int rs;
            memcpy(ref, data + first - hist, hist);
            s = (inflate_job){.in = cc, .in_len = in_len, .bit = bit, .stop_bit = 1,
                              .out_limit = limit, .out = ref + hist, .out_cap = cap,
                              .history = hist, .on_block = boundary_add, .block_ctx = &step};
            int blocks = 0;
            do {
                uint64_t to = s.bit + (64u << 13);
                s.stop_bit = to < stop_bit ? to : stop_bit;
                rs = inflate_decode_bytes(&s);
                blocks += s.blocks;
            } while (rs == INFLATE_STOP && s.stop_bit < stop_bit && s.out_len < limit);
            int same_marks = got.n == step.n;
            for (size_t i = 0; same_marks && i < got.n; i++)
                same_marks = got.at[i].bit == step.at[i].bit && got.at[i].out == step.at[i].out;
            CHECKF(rg == rs && g.out_len == s.out_len && g.bit == s.bit && g.blocks == blocks &&
                       memcmp(out + hist, ref + hist, g.out_len) == 0 && same_marks,
                   "kind %d case %d: cut %d at %zu bit %llu blocks %d, steps %d at %zu bit %llu blocks %d, marks %zu/%zu",
                   kind, t, rg, g.out_len, (unsigned long long)g.bit, g.blocks, rs, s.out_len,
                   (unsigned long long)s.bit, blocks, got.n, step.n);
            if (cc != c)
                free(cc);
            free(got.at);
            free(step.at);
        }
        free(want.at);
        free(c);
    }
    /* floats and random bytes are cut (the mixed data may not be) */
    CHECKF(inflate_halves() - before >= 10, "%llu of %d decodes cut in two",
           (unsigned long long)(inflate_halves() - before), cases);
    free(data);
    free(out);
    free(ref);
}

/* One job of test_pair_decode: a start (a boundary of the stream, with
 * its history), stops, limits, room and input length picked at random
 * (case t), or damage in its second half; the job in *j, its boundaries
 * into *seen, its output after the history in out. */
typedef struct {
    uint8_t *c;   /* the stream, damaged or not */
    size_t clen;  /* its input length (cut or whole) */
    uint64_t bit; /* the start */
    size_t hist, first; /* the history before it, the data's offset there */
    uint64_t stop_bit;
    size_t limit, cap;
} pair_case;

/* Picks pair_case number t for stream c (clen bytes, data[0..n), the
 * boundaries `want`). */
static pair_case pair_pick(uint8_t *c, size_t clen, size_t n, const boundary_list *want, int t)
{
    pair_case k = {.c = c, .clen = clen};
    size_t at = t % 3 == 0 || want->n < 8 ? 0 : 1 + rnd() % (want->n / 4);
    k.bit = at ? want->at[at - 1].bit : 0;
    k.first = at ? want->at[at - 1].out : 0;
    size_t extra = rnd() % 100; /* a history longer than the window, where there is one */
    k.hist = k.first > INFLATE_WINDOW + extra ? INFLATE_WINDOW + extra : k.first;
    k.stop_bit = t % 4 == 1 ? k.bit + rnd() % (clen * 8 - k.bit) : UINT64_MAX;
    k.limit = t % 4 == 2 ? rnd() % n : SIZE_MAX;
    k.cap = t % 5 == 3 ? (n - k.first) / 2 + rnd() % (n / 4) : n + 4096;
    k.clen = t % 7 == 4 ? clen / 2 + rnd() % (clen / 2) : clen;
    if (t % 6 == 5) { /* damage in the second half */
        k.c = malloc(clen + 16);
        memcpy(k.c, c, clen + 16);
        for (int i = 0; i < 8; i++)
            k.c[clen / 2 + rnd() % (clen / 2)] ^= (uint8_t)(1 + rnd() % 255);
    }
    return k;
}

/* Sets job j up for case k over data, out holding the history then the
 * output, its boundaries into *seen. */
static void pair_job(inflate_job *j, const pair_case *k, const uint8_t *data, uint8_t *out,
                     boundary_list *seen)
{
    memcpy(out, data + k->first - k->hist, k->hist);
    *j = (inflate_job){.in = k->c, .in_len = k->clen, .bit = k->bit, .stop_bit = k->stop_bit,
                       .out_limit = k->limit, .out = out + k->hist, .out_cap = k->cap,
                       .history = k->hist, .on_block = boundary_add, .block_ctx = seen};
}

/* Two decodes at once (inflate_decode_bytes_pair) give each job what its
 * decode alone gives: result, stop, blocks, boundaries and bytes, with
 * stops and output limits anywhere, too little room, a cut input, damage,
 * a known history, and streams of floats (level 1 and 6), random bytes
 * and mixed data paired with each other, and with itself. */
static void test_pair_decode(void)
{
    enum { STREAMS = 4 };
    size_t n = 2u << 20;
    size_t room = n + 4096 + INFLATE_WINDOW + 128;
    uint8_t *data[STREAMS], *c[STREAMS], *out[2], *ref[2];
    size_t clen[STREAMS];
    boundary_list want[STREAMS];
    static const int kinds[STREAMS] = {K_FLOATS, K_FLOATS, K_RANDOM, K_MIXED};
    static const int levels[STREAMS] = {1, 6, 6, 1};
    for (int i = 0; i < STREAMS; i++) {
        data[i] = malloc(n);
        fill(data[i], n, kinds[i]);
        c[i] = deflate_raw(data[i], n, levels[i], Z_DEFAULT_STRATEGY, 15, 0, 0, &clen[i]);
        c[i] = realloc(c[i], clen[i] + 16);
        memset(c[i] + clen[i], 0, 16);
        want[i] = (boundary_list){0};
        inflate_job r = {.in = c[i], .in_len = clen[i], .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = malloc(n + 4096), .out_cap = n + 4096,
                         .on_block = boundary_add, .block_ctx = &want[i]};
        int rr = inflate_decode_bytes(&r);
        CHECKF(rr == INFLATE_END && r.out_len == n && memcmp(r.out, data[i], n) == 0,
               "stream %d: decode %d, %zu bytes", i, rr, r.out_len);
        free(r.out);
    }
    for (int i = 0; i < 2; i++) {
        out[i] = malloc(room);
        ref[i] = malloc(room);
    }
    for (int t = 0; t < 48; t++) {
        int sa = t % STREAMS, sb = (t / STREAMS) % STREAMS;
        pair_case k[2] = {pair_pick(c[sa], clen[sa], n, &want[sa], t),
                          pair_pick(c[sb], clen[sb], n, &want[sb], t / 2 + 3 * (t & 1))};
        const uint8_t *d[2] = {data[sa], data[sb]};
        inflate_job pj[2], one[2];
        boundary_list got[2] = {{0}, {0}}, alone[2] = {{0}, {0}};
        int r1[2], rp[2];
        for (int i = 0; i < 2; i++) {
            pair_job(&one[i], &k[i], d[i], ref[i], &alone[i]);
            r1[i] = inflate_decode_bytes(&one[i]);
            memset(out[i], 0x5a, room);
            pair_job(&pj[i], &k[i], d[i], out[i], &got[i]);
        }
        rp[0] = inflate_decode_bytes_pair(&pj[0], &pj[1], &rp[1]);
        for (int i = 0; i < 2; i++) {
            int same_marks = got[i].n == alone[i].n;
            for (size_t m = 0; same_marks && m < got[i].n; m++)
                same_marks = got[i].at[m].bit == alone[i].at[m].bit &&
                             got[i].at[m].out == alone[i].at[m].out;
            CHECKF(rp[i] == r1[i] && pj[i].out_len == one[i].out_len && pj[i].bit == one[i].bit &&
                       pj[i].blocks == one[i].blocks && same_marks &&
                       memcmp(out[i] + k[i].hist, ref[i] + k[i].hist, one[i].out_len) == 0,
                   "case %d, job %d (stream %d): paired %d at %zu bit %llu blocks %d, alone %d at %zu bit %llu blocks %d",
                   t, i, i ? sb : sa, rp[i], pj[i].out_len, (unsigned long long)pj[i].bit,
                   pj[i].blocks, r1[i], one[i].out_len, (unsigned long long)one[i].bit,
                   one[i].blocks);
            if (k[i].c != c[i ? sb : sa])
                free(k[i].c);
            free(got[i].at);
            free(alone[i].at);
        }
    }
    /* A match from before the output's start, met inside the pairs' loop:
     * refused as alone, the other job unaffected. A fixed block: 100
     * literals, a match of 3 at distance 200, 100 literals. */
    fixw w = {.buf = calloc(1, 4096), .out = malloc(4096)};
    fw_bits(&w, 1, 1);
    fw_bits(&w, 1, 2);
    for (int i = 0; i < 200; i++) {
        if (i == 100) {
            fw_sym(&w, 257);     /* length 3 */
            fw_code(&w, 15, 5);  /* distance 193 + 6 extra bits */
            fw_bits(&w, 200 - 193, 6);
        }
        fw_lit(&w, (uint8_t)rnd());
    }
    fw_sym(&w, 256);
    inflate_job bad = {.in = w.buf, .in_len = (size_t)(w.nbits + 7) / 8 + 16,
                       .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX, .out = out[0],
                       .out_cap = 4096};
    inflate_job good = {.in = c[0], .in_len = clen[0], .stop_bit = UINT64_MAX,
                        .out_limit = SIZE_MAX, .out = out[1], .out_cap = n + 4096};
    int rgood, rbad = inflate_decode_bytes_pair(&bad, &good, &rgood);
    CHECKF(rbad == INFLATE_ERROR && rgood == INFLATE_END && good.out_len == n &&
               memcmp(out[1], data[0], n) == 0,
           "too far back: %d, the other %d at %zu", rbad, rgood, good.out_len);
    free(w.buf);
    free(w.out);
    for (int i = 0; i < STREAMS; i++) {
        free(want[i].at);
        free(c[i]);
        free(data[i]);
    }
    for (int i = 0; i < 2; i++) {
        free(out[i]);
        free(ref[i]);
    }
}

/* Streams of mostly literals (floats, gzip -1 and -6) have their
 * speculative chunks decoded two at once on a thread (pinflate_paired
 * counts them) on more threads than take halves, while the other threads
 * are busy: bytes, CRC-32 and length are zlib's, on 5 to 7 threads, with
 * chunks of every size, from memory and from a pipe. Chunks of 128-512 KiB
 * are paired within a few tries (the threads are not busy all the time
 * where the reader falls behind, and a few chunks sized by the ratio, one
 * a thread, may not be); a stream of text, whose matches would break pairs
 * up, takes none, nor floats on 4 threads. */
static void test_paired_chunks(void)
{
    size_t n = 8u << 20;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    for (int round = 0; round < 7; round++) {
        int text = round == 5, few = round == 6;
        fill(data, n, text ? K_TEXT : K_FLOATS);
        size_t clen;
        uint8_t *c = deflate_raw(data, n, round % 2 ? 6 : 1, Z_DEFAULT_STRATEGY, 15, 0, 0, &clen);
        int threads = few ? 4 : 5 + round % 3;
        pinflate *p;
        CHECK(pinflate_create(&p, threads, round < 2 ? 0 : (128u << 10) << (round % 3)) == 0);
        pinflate_plan(p, PINFLATE_PARALLEL);
        int tries = round >= 2 && round <= 4 ? 4 : 1;
        for (int t = 0; t < tries && (t == 0 || pinflate_paired(p) == 0); t++) {
            memset(out, 0x5a, n + 64);
            size_t got;
            uint64_t end;
            uint32_t crc;
            int rc = par_inflate(p, c, clen, out, n + 64, &got, &end, &crc, round == 3);
            CHECKF(rc == 0 && got == n && memcmp(out, data, n) == 0 &&
                       crc == (uint32_t)crc32(0, data, (uInt)n),
                   "round %d, try %d: %d, %zu bytes", round, t, rc, got);
        }
        CHECKF(round < 2 || (text || few ? pinflate_paired(p) == 0 : pinflate_paired(p) > 0),
               "round %d (%s, %d threads): %llu chunks paired", round, text ? "text" : "floats",
               threads, (unsigned long long)pinflate_paired(p));
        pinflate_destroy(p);
        free(c);
    }
    free(data);
    free(out);
}

/* Empty fixed-Huffman blocks between blocks (pigz's, zlib's partial flush):
 * the finder passes over them, and a speculative start just past a run of
 * them is the same start as the boundary before it, not a false one decoded
 * again; a final empty block, or a start past other bits, is not. Every
 * chunk speculates: the only ones decoded again are those whose first start
 * is one of the finder's rare false ones, or that hold no start but the
 * final block's (which it does not look for). */
static void test_empty_blocks(void)
{
    uint8_t b[8] = {0};
    uint64_t v = 2u << 3 | 2u << 13; /* two empty blocks from bit 3, bit 23 next */
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> 8 * i);
    CHECK(inflate_same_start(b, 8, 3, 13) && inflate_same_start(b, 8, 3, 23));
    CHECK(!inflate_same_start(b, 8, 3, 33) && !inflate_same_start(b, 8, 4, 23));
    b[0] |= 1u << 3; /* the first is final: the stream ends there */
    CHECK(!inflate_same_start(b, 8, 3, 23));
    size_t n = 8u << 20, clen = 0;
    uint8_t *data = malloc(n), *out = malloc(n + 64);
    fill_log(data, n);
    uint8_t *c = deflate_empty_blocks(data, n, 48u << 10, &clen);
    c = realloc(c, clen + 8);
    memset(c + clen, 0x5a, 8);
    size_t nfalse = false_starts(c, clen + 8, out, n + 64);
    pinflate *p;
    CHECK(pinflate_create(&p, 4, clen / 100) == 0);
    pinflate_plan(p, PINFLATE_PARALLEL);
    /* how many chunks the order reaches first depends on the threads'
       timing (a loaded machine reaches most in order): read again until
       36 were speculative; before empty blocks were told apart, nearly all
       of them were decoded again */
    uint64_t spec = 0, redone = 0; /* the decoder's counts, over every stream */
    for (int run = 0; run < 60 && spec < 36; run++) {
        uint64_t counts[3];
        CHECK(run_counted(p, c, clen, data, n, out, counts));
        CHECKF(counts[1] - redone <= nfalse + 1, "%llu decoded again, %zu false starts in the stream",
               (unsigned long long)(counts[1] - redone), nfalse);
        spec = counts[2];
        redone = counts[1];
    }
    CHECKF(spec >= 12 && 4 * redone <= spec + 4, "%llu speculative, %llu decoded again",
           (unsigned long long)spec, (unsigned long long)redone);
    pinflate_destroy(p);
    free(c);
    free(out);
    free(data);
}

/* n bytes that fill() writes into *data (malloc'd, with *out of n + 64
 * bytes beside it), deflated at level 6 and padded as level6_padded does:
 * the stream, or NULL (nothing allocated, a failed check) out of memory. */
static uint8_t *text_stream(size_t n, void (*fill_text)(uint8_t *, size_t), uint8_t **data,
                            uint8_t **out, size_t *clen)
{
    *data = malloc(n);
    *out = malloc(n + 64);
    if (!*data || !*out) {
        CHECK(0);
        free(*data);
        free(*out);
        return NULL;
    }
    fill_text(*data, n);
    return level6_padded(*data, n, clen);
}

/* AUTO on 2 threads measures text of long blocks with a probe that stops
 * after PROBE_SYMS symbols still copying markers, not a whole block of
 * them: every speculative chunk is decoded again in order, and the bytes,
 * CRC-32 and length are zlib's. */
static void test_probe_cut(void)
{
    size_t n = 24u << 20, clen;
    uint8_t *data, *out, *c = text_stream(n, fill_log, &data, &out, &clen);
    if (!c)
        return;
    pinflate *p;
    CHECK(pinflate_create(&p, 2, 0) == 0);
    uint64_t counts[3];
    CHECK(run_counted(p, c, clen, data, n, out, counts));
    uint64_t chunks = counts[0], redone = counts[1], spec = counts[2];
    CHECKF(spec == redone && spec <= 1 + chunks / 64, "%llu speculative, %llu redone, %llu chunks",
           (unsigned long long)spec, (unsigned long long)redone, (unsigned long long)chunks);
    pinflate_destroy(p);
    free(c);
    free(out);
    free(data);
}

/* Log lines that repeat more than fill_log's (a time stamp that moves every
 * 64th line or so, one of five messages; tests/bench/gzip_files.sh's
 * sequence): zlib's level 6 makes blocks of 1.2 MB of them, about a chunk's
 * output limit, as GNU gzip's of that file's lines are. */
static void fill_lines(uint8_t *buf, size_t n)
{
    static const char *msgs[] = {"INFO [net] request served", "INFO [net] request served",
                                 "INFO [disk] flushed pages", "DEBUG [cache] cache hit",
                                 "INFO [net] connection opened", "WARN [sched] queue long"};
    size_t i = 0;
    uint32_t s = 12345; /* the linear congruential sequence of gzip_files.sh */
    unsigned t = 0, u = 0;
    while (i < n) {
        s = s * 69069u + 1;
        unsigned r = s >> 16;
        u += r % 64 == 0;
        if (u == 1000) {
            u = 0;
            t++;
        }
        char line[96];
        int k = snprintf(line, sizeof line, "%u.%03u %s\n", 1700000000u + t, u, msgs[r / 8 % 6]);
        for (int j = 0; j < k && i < n; j++)
            buf[i++] = (uint8_t)line[j];
    }
}

/* Text of long blocks (about a chunk's output limit each) decoded in order
 * on one thread and on two: a chunk stops at the boundary past which a
 * block of about the mean no longer fits its room, not inside that block,
 * whose decode was dropped and done again by the next chunk (every second
 * chunk or so, before). Only the first chunk, sized before any block is
 * known, and the rare block well above the mean may be cut. */
static void test_cut_blocks(void)
{
    size_t n = 48u << 20, clen;
    uint8_t *data, *out, *c = text_stream(n, fill_lines, &data, &out, &clen);
    if (!c)
        return;
    for (int threads = 1; threads <= 2; threads++) {
        pinflate *p;
        CHECK(pinflate_create(&p, threads, 0) == 0);
        uint64_t counts[3];
        CHECK(run_counted(p, c, clen, data, n, out, counts));
        uint64_t chunks = counts[0], cut = pinflate_cut_blocks(p);
        CHECKF(chunks >= 16 && cut <= 1 + chunks / 16, "%d threads: %llu of %llu chunks cut a block",
               threads, (unsigned long long)cut, (unsigned long long)chunks);
        pinflate_destroy(p);
    }
    free(c);
    free(out);
    free(data);
}

/* Memory stays bounded while nothing is read: on long runs, whose blocks
 * decode to more than a chunk's output limit (so every chunk stops short of
 * its range, the rest following in order), the decoder stops a few chunks
 * ahead of the reader, not at the stream's end with all of it held. Counted
 * in chunks the decoder accepted, not in the process's resident bytes, which
 * transparent huge pages and malloc's arenas round up by megabytes. */
static void test_bounded_ahead(void)
{
    size_t n = 64u << 20;
    uint8_t *data = malloc(n);
    if (!data) {
        CHECK(0);
        return;
    }
    fill(data, n, K_RUNS);
    uint32_t want_crc = (uint32_t)crc32(0, data, (uInt)n);
    size_t clen;
    uint8_t *c = level6_padded(data, n, &clen);
    free(data);
    pinflate *p;
    CHECK(pinflate_create(&p, 1, 0) == 0); /* at most 4 chunks of at most 4 MiB held */
    pinflate_plan(p, PINFLATE_ORDER);
    uint8_t *buf = malloc(1 << 20);
    memset(buf, 0, 1 << 20);
    pinflate_begin(p, -1, c, clen + 8, 0);
    ssize_t k = pinflate_read(p, buf, 4096);
    CHECK(k == 4096);
    size_t total = k > 0 ? (size_t)k : 0;
    uint32_t crc = (uint32_t)crc32(0, buf, (uInt)total);
    struct timespec nap = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 10; i++) /* the time a whole decode takes, and more */
        nanosleep(&nap, NULL);
    uint64_t ahead, all, redone;
    pinflate_counts(p, &ahead, &redone); /* the decoder waits for room: no writer */
    while ((k = pinflate_read(p, buf, 1 << 20)) > 0) {
        crc = (uint32_t)crc32(crc, buf, (uInt)k);
        total += (size_t)k;
    }
    uint64_t end, len;
    uint32_t pcrc;
    pinflate_result(p, &end, &pcrc, &len);
    CHECKF(k == 0 && total == n && crc == want_crc && pcrc == want_crc && len == n,
           "k %zd, %zu bytes", k, total);
    pinflate_counts(p, &all, &redone);
    CHECKF(ahead <= 4 && all >= 4 * ahead, "%llu of the stream's %llu chunks decoded ahead of the reader",
           (unsigned long long)ahead, (unsigned long long)all);
    pinflate_destroy(p);
    free(buf);
    free(c);
}

/* Long reads of a text stream decoded ahead on 4 threads (its chunks begin
 * with markers, so their bytes are not checksummed as they are copied out)
 * are copied out in pieces shared with the idle threads: the bytes, CRC-32
 * and length are zlib's, with reads of every size up to 6 MiB. */
static void test_shared_copy(void)
{
    size_t n = 24u << 20, clen;
    uint8_t *data, *out, *c = text_stream(n, fill_log, &data, &out, &clen);
    if (!c)
        return;
    pinflate *p;
    CHECK(pinflate_create(&p, 4, 0) == 0);
    pinflate_plan(p, PINFLATE_PARALLEL);
    for (int round = 0; round < 3; round++) {
        memset(out, 0x5a, n + 64);
        uint64_t shared = pinflate_shared_copies(p);
        pinflate_begin(p, -1, c, clen + 8, 0);
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL); /* the threads decode ahead, then wait for room */
        size_t got = 0;
        ssize_t k;
        for (;;) {
            size_t want = 1 + rnd() % (6u << 20), room = n + 64 - got; /* never past out */
            if ((k = pinflate_read(p, out + got, want < room ? want : room)) <= 0 ||
                got + (size_t)k > n)
                break;
            got += (size_t)k;
        }
        uint64_t end, len;
        uint32_t crc;
        pinflate_result(p, &end, &crc, &len);
        pinflate_end(p);
        CHECKF(k == 0 && got == n && len == n && memcmp(out, data, n) == 0 &&
                   crc == (uint32_t)crc32(0, data, (uInt)n),
               "round %d: k %zd, %zu bytes", round, k, got);
        CHECKF(pinflate_shared_copies(p) > shared, "round %d: no copy was shared", round);
    }
    pinflate_destroy(p);
    free(c);
    free(out);
    free(data);
}

/* Folds into fingerprint h a decode's result, its job's state after it and
 * its output from element `from` on (elements of `elem` bytes). */
static uint32_t fold_decode(uint32_t h, int r, const inflate_job *j, size_t elem, size_t from)
{
    uint64_t v[6] = {(uint64_t)(int64_t)r, j->bit,          j->out_len,
                     (uint64_t)j->blocks,  j->marker_free, j->scanned};
    h = (uint32_t)crc32(h, (const Bytef *)v, sizeof v);
    return (uint32_t)crc32(h, (const Bytef *)j->out + from * elem,
                           (uInt)((j->out_len - from) * elem));
}

/* What the variant in use makes of c[0..clen), as a fingerprint of every
 * result, stop position, element and block count and output of: a whole
 * decode into bytes (also returned: its result, out[0..*got), end bit),
 * one stopped at every block boundary past each `step` bits, one into a
 * third of the room, and ones into symbols from its first three stops. */
static uint32_t variant_decode(const uint8_t *c, size_t clen, size_t cap, uint64_t step,
                               uint8_t *out, size_t *got, uint64_t *end, int *result)
{
    inflate_job j = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX,
                     .out = out, .out_cap = cap};
    *result = inflate_decode_bytes(&j);
    *got = j.out_len;
    *end = j.bit;
    uint32_t h = fold_decode(0, *result, &j, 1, 0);
    uint8_t *tmp = malloc(cap + 1);
    uint16_t *sym = malloc(2 * cap + 2);
    uint64_t starts[3];
    int nstarts = 0, r;
    inflate_job s = {.in = c, .in_len = clen, .stop_bit = step, .out_limit = SIZE_MAX,
                     .out = tmp, .out_cap = cap};
    for (size_t from = 0; (r = inflate_decode_bytes(&s)) == INFLATE_STOP; from = s.out_len) {
        h = fold_decode(h, r, &s, 1, from);
        if (nstarts < 3)
            starts[nstarts++] = s.bit;
        s.stop_bit = s.bit + step;
    }
    h = fold_decode(h, r, &s, 1, 0);
    inflate_job t = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX,
                     .out = tmp, .out_cap = cap / 3};
    r = inflate_decode_bytes(&t);
    h = fold_decode(h, r, &t, 1, 0);
    for (int i = 0; i < nstarts; i++) {
        inflate_job y = {.in = c, .in_len = clen, .bit = starts[i], .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = sym, .out_cap = cap};
        r = inflate_decode_symbols(&y);
        h = fold_decode(h, r, &y, 2, 0);
    }
    free(sym);
    free(tmp);
    return h;
}

/* The host decoder's variants (the baseline and, where this CPU runs it,
 * BMI2) decode the same streams, of every kind, level and strategy, half of
 * them damaged, to the same results, stops and outputs: zlib's bytes and
 * end where zlib decodes the stream (a damaged one may end early), a prefix
 * of zlib's bytes where it refuses it. GPUBATCH_CPU_SIMD=baseline picks the baseline by default. */
static void test_variants(void)
{
    int widest = inflate_force_variant(INFLATE_BMI2);
    CHECK(widest == INFLATE_BASELINE || widest == INFLATE_BMI2);
    int agree = 0, refused = 0, rounds = 160;
    for (int round = 0; round < rounds; round++) {
        size_t n = rnd() % 300000;
        uint8_t *data = malloc(n + 1);
        fill(data, n, (int)(rnd() % K_KINDS));
        size_t clen;
        uint8_t *c = deflate_raw(data, n, (int)(rnd() % 10), strategies[rnd() % 5], 15,
                                 rnd() % 3 ? 0 : 1000 + rnd() % 30000, (int)(rnd() & 1), &clen);
        int how = round & 1 ? (int)(rnd() % 3) : -1;
        if (how == 0 && clen) {
            clen = rnd() % clen;
        } else if (how == 1 && clen) {
            for (int f = 0; f < 1 + (int)(rnd() % 3); f++)
                c[rnd() % clen] ^= (uint8_t)(1u << (rnd() % 8));
        } else if (how == 2 && clen) {
            size_t at = rnd() % clen;
            for (size_t i = at; i < at + 1 + rnd() % 64 && i < clen; i++)
                c[i] = (uint8_t)rnd();
        }
        size_t cap = n * 2 + 65536, zgot, got[2];
        uint8_t *zout = malloc(cap), *out[2] = {malloc(cap), malloc(cap)};
        int zok = zlib_raw_inflate(c, clen, zout, cap, &zgot), r[2];
        uint64_t end[2], step = 1 + rnd() % 40000;
        uint32_t fp[2];
        for (int v = 0; v < 2; v++) {
            inflate_force_variant(v ? widest : INFLATE_BASELINE);
            fp[v] = variant_decode(c, clen, cap, step, out[v], &got[v], &end[v], &r[v]);
        }
        int ok = fp[0] == fp[1] && r[0] == r[1] && got[0] == got[1] && end[0] == end[1] &&
                 memcmp(out[0], out[1], got[0]) == 0;
        if (zok)
            ok &= r[0] == INFLATE_END && got[0] == zgot && memcmp(out[0], zout, zgot) == 0 &&
                  (how < 0 ? (end[0] + 7) / 8 == clen : (end[0] + 7) / 8 <= clen);
        else
            ok &= r[0] != INFLATE_END && got[0] <= zgot && memcmp(out[0], zout, got[0]) == 0;
        CHECKF(ok, "round %d (n %zu, damage %d): zlib %d (%zu bytes); baseline %d (%zu, bit %llu), "
                   "variant %d: %d (%zu, bit %llu)",
               round, n, how, zok, zgot, r[0], got[0], (unsigned long long)end[0], widest, r[1],
               got[1], (unsigned long long)end[1]);
        agree += ok;
        refused += !zok;
        free(out[0]);
        free(out[1]);
        free(zout);
        free(c);
        free(data);
    }
    CHECK(agree == rounds && refused > 20);
    /* the environment's cap, read again by a forced default */
    const char *env = getenv("GPUBATCH_CPU_SIMD");
    char *saved = env ? strdup(env) : NULL;
    setenv("GPUBATCH_CPU_SIMD", "baseline", 1);
    CHECK(inflate_force_variant(-1) == INFLATE_BASELINE);
    unsetenv("GPUBATCH_CPU_SIMD");
    CHECK(inflate_force_variant(-1) == widest);
    if (saved)
        setenv("GPUBATCH_CPU_SIMD", saved, 1);
    free(saved);
    inflate_force_variant(-1);
}

/* Literal codes of every shape pair right: bytes drawn from skewed
 * distributions (a few values of 1 to 4 bits beside many long ones, as
 * float32's exponents beside its mantissas, over any subset of the 256),
 * some with repeats for length codes to follow literals, deflated
 * Huffman-only or by default at any level, each block's code its own;
 * every variant's bytes are the data's. */
static void test_skewed_codes(void)
{
    int widest = inflate_force_variant(INFLATE_BMI2), good = 0, rounds = 240;
    for (int round = 0; round < rounds; round++) {
        uint8_t vals[256];
        for (int i = 0; i < 256; i++)
            vals[i] = (uint8_t)i;
        for (int i = 255; i > 0; i--) { /* a random order of the byte values */
            int j = (int)(rnd() % (uint64_t)(i + 1));
            uint8_t t = vals[i];
            vals[i] = vals[j];
            vals[j] = t;
        }
        /* value i drawn with a weight falling geometrically by `fall`: a
         * steep fall gives codes of 1 or 2 bits, a gentle one long codes */
        unsigned nvals = 2 + (unsigned)(rnd() % 255);
        double fall = 0.25 + 0.74 * (double)(rnd() % 1000) / 1000, cum[256], sum = 0, w = 1;
        for (unsigned i = 0; i < nvals; i++, w *= fall)
            cum[i] = sum += w;
        size_t n = 2000 + rnd() % 60000;
        uint8_t *data = malloc(n);
        int repeats = (int)(rnd() % 3); /* none, a few, many */
        for (size_t i = 0; i < n;) {
            if (repeats && i > 64 && rnd() % (repeats == 1 ? 40 : 6) == 0) {
                size_t len = 3 + rnd() % 30, from = i - 1 - rnd() % (i - 1 < 30000 ? i - 1 : 30000);
                for (size_t k = 0; k < len && i < n; k++)
                    data[i++] = data[from + k];
                continue;
            }
            double u = sum * (double)(rnd() >> 11) / 9007199254740992.0;
            unsigned v = 0;
            while (v + 1 < nvals && cum[v] <= u)
                v++;
            data[i++] = vals[v];
        }
        int level = 1 + (int)(rnd() % 9), strategy = rnd() % 2 ? Z_HUFFMAN_ONLY : Z_DEFAULT_STRATEGY;
        size_t clen, cap = n + 64, got;
        uint8_t *c = deflate_raw(data, n, level, strategy, 15, rnd() % 2 ? 0 : 4000 + rnd() % 9000,
                                 0, &clen);
        uint8_t *out = malloc(cap);
        int ok = c != NULL;
        for (int v = 0; ok && v < 2; v++) {
            inflate_force_variant(v ? widest : INFLATE_BASELINE);
            inflate_job j = {.in = c, .in_len = clen, .stop_bit = UINT64_MAX,
                             .out_limit = SIZE_MAX, .out = out, .out_cap = cap};
            int r = inflate_decode_bytes(&j);
            got = j.out_len;
            ok = r == INFLATE_END && got == n && memcmp(out, data, n) == 0;
        }
        CHECKF(ok, "round %d: %u values, fall %.2f, level %d, strategy %d, %zu bytes", round,
               nvals, fall, level, strategy, n);
        good += ok;
        free(out);
        free(c);
        free(data);
    }
    CHECK(good == rounds);
    inflate_force_variant(-1);
}

/* Streams made of matches decode right, where a match's length and
 * distance codes are read with one lookup: data copied from a few favoured
 * distances (spread inside their codes' extra bits) at a few favoured
 * lengths, so that length codes of 1 to 4 bits meet distance codes of every
 * size, with and without extra bits, between rare literals; deflated at any
 * level, default or fixed codes; every variant's bytes, in order, and in
 * parallel from small chunks (the matches then also reach into the unknown
 * window as markers), are the data's. */
static void test_match_codes(void)
{
    int widest = inflate_force_variant(INFLATE_BMI2), good = 0, rounds = 160;
    pinflate *par;
    CHECK(pinflate_create(&par, 2, 2048 + rnd() % 6000) == 0);
    for (int round = 0; round < rounds; round++) {
        /* a few favoured lengths and distances, each drawn with a weight
           falling by half, and how often a literal comes instead */
        unsigned nlens = 1 + (unsigned)(rnd() % 4), ndists = 1 + (unsigned)(rnd() % 12);
        unsigned lens[4], dists[12], lit_every = 2 + (unsigned)(rnd() % 40);
        for (unsigned k = 0; k < nlens; k++)
            lens[k] = 3 + (unsigned)(rnd() % (rnd() % 4 ? 12 : 256));
        for (unsigned k = 0; k < ndists; k++)
            dists[k] = 1u + (unsigned)(rnd() % (1u << (1 + rnd() % 15)));
        size_t n = 3000 + rnd() % 120000;
        uint8_t *data = malloc(n);
        size_t i = 0;
        while (i < 64 && i < n)
            data[i++] = (uint8_t)rnd();
        while (i < n) {
            if (rnd() % lit_every == 0) {
                data[i++] = (uint8_t)rnd();
                continue;
            }
            unsigned li = 0, di = 0;
            while (li + 1 < nlens && rnd() % 2)
                li++;
            while (di + 1 < ndists && rnd() % 2)
                di++;
            size_t d = dists[di] + (rnd() % 4 == 0 ? rnd() % (dists[di] / 8 + 1) : 0);
            if (d > i)
                d = 1 + rnd() % i;
            for (unsigned k = 0; k < lens[li] && i < n; k++, i++)
                data[i] = data[i - d];
        }
        int level = 1 + (int)(rnd() % 9), strategy = rnd() % 4 ? Z_DEFAULT_STRATEGY : Z_FIXED;
        size_t clen, cap = n + 64, got;
        uint8_t *c = deflate_raw(data, n, level, strategy, 15, 0, 0, &clen);
        uint8_t *out = malloc(cap);
        int ok = c != NULL;
        if (ok) { /* the trailer's bytes after the stream, as a member has */
            c = realloc(c, clen + 8);
            memset(c + clen, 0x5a, 8);
        }
        for (int v = 0; ok && v < 2; v++) {
            inflate_force_variant(v ? widest : INFLATE_BASELINE);
            memset(out, 0xa5, cap);
            inflate_job j = {.in = c, .in_len = clen + 8, .stop_bit = UINT64_MAX,
                             .out_limit = SIZE_MAX, .out = out, .out_cap = cap};
            int r = inflate_decode_bytes(&j);
            got = j.out_len;
            ok = r == INFLATE_END && got == n && memcmp(out, data, n) == 0;
            uint64_t end;
            uint32_t crc;
            memset(out, 0xa5, cap);
            ok = ok && par_inflate(par, c, clen + 8, out, cap, &got, &end, &crc, 0) == 0 &&
                 got == n && memcmp(out, data, n) == 0 && end == clen;
        }
        CHECKF(ok, "round %d: %u lengths, %u distances (first %u, %u), a literal in %u, level %d, "
                   "strategy %d, %zu bytes", round, nlens, ndists, lens[0], dists[0], lit_every,
               level, strategy, n);
        good += ok;
        free(out);
        free(c);
        free(data);
    }
    CHECK(good == rounds);
    pinflate_destroy(par);
    inflate_force_variant(-1);
}

int main(void)
{
    RUN(test_round_trips);
    RUN(test_match_codes);
    RUN(test_markers);
    RUN(test_resolve);
    RUN(test_skewed_codes);
    RUN(test_copies);
    RUN(test_plan);
    RUN(test_plan_hint);
    RUN(test_spec_chunks);
    RUN(test_prefault);
    RUN(test_plan_ints);
    RUN(test_plan_late);
    RUN(test_chunk_bounds);
    RUN(test_finder);
    RUN(test_empty_blocks);
    RUN(test_boundaries_reported);
    RUN(test_clean_point);
    RUN(test_halves);
    RUN(test_pair_decode);
    RUN(test_paired_chunks);
    RUN(test_damage);
    RUN(test_begin_at);
    RUN(test_false_final);
    RUN(test_members);
    RUN(test_member_magic);
    RUN(test_bounded_ahead);
    RUN(test_shared_copy);
    RUN(test_probe_cut);
    RUN(test_cut_blocks);
    /* the host decoder's own cases again on each other variant this CPU runs */
    int chosen = inflate_force_variant(-1);
    for (int v = INFLATE_BASELINE; v <= INFLATE_BMI2; v++)
        if (v != chosen && inflate_force_variant(v) == v) {
            RUN(test_round_trips);
            RUN(test_copies);
            RUN(test_markers);
            RUN(test_damage);
            RUN(test_clean_point);
            RUN(test_halves);
            RUN(test_pair_decode);
        }
    inflate_force_variant(-1);
    RUN(test_variants);
    return check_summary();
}
