/* test_inflate.c - the blocked-gzip deflate decoder (ptx/inflate_math.h)
 * against zlib under the host reader's rule (raw inflate into exactly ISIZE
 * bytes, Z_STREAM_END, no input left): round trips over data kinds, sizes,
 * levels and strategies; the split CRC-32; hand-built streams for every
 * rejection class, each also checked to be what zlib says it is; and
 * random corruptions of valid streams. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ptx/inflate_math.h"
#include "check.h"
#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

#define GUARD 16      /* bytes after the output that must stay poisoned */
#define POISON 0xa5
#define MAX_OUT 65536u


/* ---------------------------------------------------------------------- */
/* The two decoders                                                         */

/* zlib's verdict on one stream under the host rule. */
typedef struct {
    int accept;
    const char *why; /* zlib's message, or "ok", "trailing", "size", "full", "input ended",
                      * "input ended or full" */
    size_t out;      /* bytes written */
} zverdict;

static uint8_t zout[MAX_OUT + 1];
static uint8_t oout[MAX_OUT + GUARD];
static if_tables tables;

/* Inflates the raw stream in[0..len) with zlib as io/gzip/bgzf.c's bgzf_worker
 * does (CRC aside): Z_FINISH into exactly size bytes (one spare byte when
 * size is 0); accepted when it ends with Z_STREAM_END, no input left and
 * exactly size bytes out. */
static zverdict zlib_inflate(const uint8_t *in, size_t len, uint32_t size)
{
    zverdict v = {0, "inflateInit2", 0};
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK)
        return v;
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = zout;
    zs.avail_out = size ? size : 1;
    int zr = inflate(&zs, Z_FINISH);
    v.out = zs.total_out;
    if (zr == Z_STREAM_END) {
        v.accept = zs.avail_in == 0 && zs.total_out == size;
        v.why = zs.avail_in ? "trailing" : zs.total_out != size ? "size" : "ok";
    } else if (zr == Z_DATA_ERROR) {
        v.why = zs.msg ? zs.msg : "data error";
    } else {
        v.why = zs.avail_out ? "input ended" : zs.avail_in ? "full" : "input ended or full";
    }
    inflateEnd(&zs);
    return v;
}

/* Runs if_inflate on an exact-size copy of the input (so that a sanitizer
 * sees any read past it), with tables full of garbage and the output
 * poisoned; checks that nothing was written past size. Returns the status. */
static int our_inflate(const uint8_t *in, size_t len, uint32_t size)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (len)
        memcpy(copy, in, len);
    memset(&tables, (int)(rnd() & 0xff), sizeof tables);
    memset(oout, POISON, sizeof oout);
    int st = if_inflate(copy, (if_u32)len, oout, size, &tables);
    free(copy);
    int guard_ok = 1;
    for (uint32_t i = size; i < size + GUARD; i++)
        guard_ok &= oout[i] == POISON;
    CHECKF(guard_ok, "if_inflate wrote past its %u-byte buffer", size);
    return st;
}

/* Whether both decoders give the same verdict and, on success, the same
 * bytes; *st gets our status and *zv zlib's verdict. */
static int agree(const uint8_t *in, size_t len, uint32_t size, int *st, zverdict *zv)
{
    *zv = zlib_inflate(in, len, size);
    *st = our_inflate(in, len, size);
    if ((*st == IF_OK) != zv->accept)
        return 0;
    return *st != IF_OK || !memcmp(oout, zout, size);
}

/* ---------------------------------------------------------------------- */
/* A deflate bit writer that also keeps the output the stream stands for    */

typedef struct {
    uint8_t buf[1u << 17];
    size_t nbits;
    uint8_t out[MAX_OUT + 1024]; /* what a decoder must produce */
    size_t nout;
} bitw;

/* One code: canonical codes (RFC 1951 3.2.2) for n code lengths. */
typedef struct {
    uint16_t code[320];
    uint8_t len[320];
} huff;

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10,  11,  13,
                                      15, 17, 19, 23, 27, 31, 35, 43,  51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,
                                       17,   25,   33,   49,   65,   97,    129,   193,
                                       257,  385,  513,  769,  1025, 1537,  2049,  3073,
                                       4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* RFC 1951 3.2.7: the order of the code-length code's lengths. */
static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static bitw W;
static huff fixed_lit, fixed_dist;

/* Empties the writer. */
static void bw_reset(bitw *w)
{
    memset(w->buf, 0, sizeof w->buf);
    w->nbits = 0;
    w->nout = 0;
}

/* Appends the low k bits of v, least significant first. */
static void put_bits(bitw *w, uint32_t v, unsigned k)
{
    for (unsigned i = 0; i < k; i++, w->nbits++)
        if (v >> i & 1u)
            w->buf[w->nbits >> 3] |= (uint8_t)(1u << (w->nbits & 7));
}

/* Appends a Huffman code, most significant bit first. */
static void put_code(bitw *w, uint32_t code, unsigned len)
{
    for (unsigned i = len; i-- > 0;)
        put_bits(w, code >> i & 1u, 1);
}

/* Pads with zero bits to a byte boundary. */
static void put_align(bitw *w)
{
    w->nbits = (w->nbits + 7) & ~(size_t)7;
}

/* The stream's length in bytes. */
static size_t bw_bytes(const bitw *w)
{
    return (w->nbits + 7) / 8;
}

/* Writes a block header: BFINAL and BTYPE. */
static void put_header(bitw *w, int last, unsigned type)
{
    put_bits(w, (uint32_t)last, 1);
    put_bits(w, type, 2);
}

/* Writes a stored block with LEN and NLEN as given (nlen = ~len & 0xffff is
 * the valid one) and len bytes of data. */
static void put_stored_raw(bitw *w, int last, const uint8_t *data, uint32_t len, uint32_t nlen)
{
    put_header(w, last, 0);
    put_align(w);
    put_bits(w, len, 16);
    put_bits(w, nlen, 16);
    for (uint32_t i = 0; i < len; i++) {
        put_bits(w, data[i], 8);
        if (w->nout < sizeof w->out)
            w->out[w->nout++] = data[i];
    }
}

/* Writes a valid stored block. */
static void put_stored(bitw *w, int last, const uint8_t *data, uint32_t len)
{
    put_stored_raw(w, last, data, len, ~len & 0xffffu);
}

/* Assigns canonical codes to n code lengths (garbage codes for a set that
 * is over-subscribed: such streams only need some bits there). */
static void huff_make(huff *h, const uint8_t *lens, unsigned n)
{
    unsigned count[16] = {0}, next[16];
    memset(h, 0, sizeof *h);
    for (unsigned s = 0; s < n; s++)
        count[lens[s]]++;
    count[0] = 0;
    unsigned code = 0;
    for (unsigned l = 1; l < 16; l++) {
        code = (code + count[l - 1]) << 1;
        next[l] = code;
    }
    for (unsigned s = 0; s < n; s++) {
        h->len[s] = lens[s];
        if (lens[s])
            h->code[s] = (uint16_t)next[lens[s]]++;
    }
}

/* Writes symbol sym of code h. */
static void put_sym(bitw *w, const huff *h, unsigned sym)
{
    put_code(w, h->code[sym], h->len[sym]);
}

/* Writes a literal byte. */
static void put_lit(bitw *w, const huff *lit, uint8_t byte)
{
    put_sym(w, lit, byte);
    if (w->nout < sizeof w->out)
        w->out[w->nout++] = byte;
}

/* Writes a match by its codes and extra-bit values (any, to build invalid
 * ones); the expected output follows when the match is a valid one. */
static void put_match_raw(bitw *w, const huff *lit, const huff *dist, unsigned lcode,
                          uint32_t lext, unsigned dcode, uint32_t dext)
{
    put_sym(w, lit, lcode);
    if (lcode >= 257 && lcode <= 285)
        put_bits(w, lext, len_extra[lcode - 257]);
    put_sym(w, dist, dcode);
    if (dcode < 30)
        put_bits(w, dext, dist_extra[dcode]);
    if (lcode < 257 || lcode > 285 || dcode >= 30)
        return;
    size_t len = len_base[lcode - 257] + lext, d = dist_base[dcode] + dext;
    for (size_t i = 0; i < len && d <= w->nout && w->nout < sizeof w->out; i++, w->nout++)
        w->out[w->nout] = w->out[w->nout - d];
}

/* Writes a match of length 3..258 and distance 1..32768 with the shortest
 * codes (code 285 for 258). */
static void put_match(bitw *w, const huff *lit, const huff *dist, unsigned len, unsigned d)
{
    unsigned lc = 28, dc = 29;
    while (len_base[lc] > len)
        lc--;
    while (dist_base[dc] > d)
        dc--;
    put_match_raw(w, lit, dist, 257 + lc, len - len_base[lc], dc, d - dist_base[dc]);
}

/* The fixed codes of RFC 1951 3.2.6. */
static void make_fixed(void)
{
    uint8_t lens[288], dl[32];
    for (unsigned s = 0; s < 288; s++)
        lens[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    memset(dl, 5, sizeof dl);
    huff_make(&fixed_lit, lens, 288);
    huff_make(&fixed_dist, dl, 32);
}

/* Writes a dynamic block header up to the code lengths: HLIT, HDIST and
 * HCLEN from the counts (masked to their fields, to write 287 or 32), then
 * ncode code-length code lengths in the RFC's order from cl (by symbol). */
static void put_dyn_head(bitw *w, int last, unsigned nlen, unsigned ndist, unsigned ncode,
                         const uint8_t *cl)
{
    put_header(w, last, 2);
    put_bits(w, (nlen - 257) & 31u, 5);
    put_bits(w, (ndist - 1) & 31u, 5);
    put_bits(w, ncode - 4, 4);
    for (unsigned i = 0; i < ncode; i++)
        put_bits(w, cl[cl_order[i]], 3);
}

/* A complete code-length code: symbols 0..12 of 4 bits, 13..18 of 5. */
static const uint8_t cl_std[19] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5};

/* Writes one code-length symbol with its repeat count's extra bits. */
static void put_cl(bitw *w, const huff *cl, unsigned sym, unsigned extra)
{
    put_sym(w, cl, sym);
    if (sym >= 16)
        put_bits(w, extra, sym == 16 ? 2 : sym == 17 ? 3 : 7);
}

/* Writes n zero lengths with repeats 18 and 17 where they fit. */
static void put_zeros(bitw *w, const huff *cl, unsigned n)
{
    while (n >= 11) {
        unsigned k = n > 138 ? 138 : n;
        put_cl(w, cl, 18, k - 11);
        n -= k;
    }
    if (n >= 3) {
        put_cl(w, cl, 17, n - 3);
        n = 0;
    }
    while (n--)
        put_cl(w, cl, 0, 0);
}

/* Writes a dynamic block header with the code-length code cl_std and every
 * length written as itself, and makes the literal/length and distance codes
 * (either may be NULL). */
static void put_dynamic(bitw *w, int last, const uint8_t *lit_lens, unsigned nlen,
                        const uint8_t *dist_lens, unsigned ndist, huff *lit, huff *dist)
{
    huff cl;
    huff_make(&cl, cl_std, 19);
    put_dyn_head(w, last, nlen, ndist, 19, cl_std);
    for (unsigned i = 0; i < nlen; i++)
        put_cl(w, &cl, lit_lens[i], 0);
    for (unsigned i = 0; i < ndist; i++)
        put_cl(w, &cl, dist_lens[i], 0);
    if (lit)
        huff_make(lit, lit_lens, nlen);
    if (dist)
        huff_make(dist, dist_lens, ndist);
}

/* Complete codes over all 286 literal/length symbols (0..225 of 8 bits,
 * 226..285 of 9) and all 30 distance symbols (0..1 of 4 bits, the rest 5). */
static uint8_t std_lit[286], std_dist[30];

/* Fills std_lit and std_dist. */
static void make_std(void)
{
    for (unsigned s = 0; s < 286; s++)
        std_lit[s] = s < 226 ? 8 : 9;
    for (unsigned s = 0; s < 30; s++)
        std_dist[s] = s < 2 ? 4 : 5;
}

/* Writes a few literals and matches that use lit and dist (text with
 * repeats, a run). */
static void put_sample(bitw *w, const huff *lit, const huff *dist)
{
    static const char text[] = "deflate: ";
    for (const char *p = text; *p; p++)
        put_lit(w, lit, (uint8_t)*p);
    put_match(w, lit, dist, 9, 9);
    put_match(w, lit, dist, 40, 1);
    put_lit(w, lit, '!');
}

/* Checks one hand-built stream decoded into size bytes: our status is
 * want, zlib's verdict names zwhy, and an accepted stream gives the
 * writer's output. */
static void expect(const char *what, const bitw *w, uint32_t size, int want, const char *zwhy)
{
    int st;
    zverdict zv;
    int same = agree(w->buf, bw_bytes(w), size, &st, &zv);
    CHECKF(same, "%s: ours %d, zlib %s (%s)", what, st, zv.accept ? "accepts" : "rejects",
           zv.why);
    CHECKF(st == want, "%s: status %d, expected %d", what, st, want);
    CHECKF(strstr(zv.why, zwhy) != NULL, "%s: zlib says \"%s\", expected \"%s\"", what, zv.why,
           zwhy);
    if (want == IF_OK)
        CHECKF(size == w->nout && !memcmp(oout, w->out, size), "%s: wrong bytes", what);
}

/* expect for a stream whose output is complete: size is what it wrote. */
static void expect_ok(const char *what, const bitw *w)
{
    expect(what, w, (uint32_t)w->nout, IF_OK, "ok");
}

/* expect for a final dynamic block with these code lengths that holds
 * only its end-of-block code. */
static void expect_codes(const char *what, const uint8_t *ll, unsigned nlen, const uint8_t *dl,
                         unsigned ndist, int want, const char *zwhy)
{
    huff lit;
    bw_reset(&W);
    put_dynamic(&W, 1, ll, nlen, dl, ndist, &lit, NULL);
    put_sym(&W, &lit, 256);
    expect(what, &W, 0, want, zwhy);
}

/* ---------------------------------------------------------------------- */
/* Round trips                                                              */

enum { K_RANDOM, K_ZEROS, K_RUNS, K_PERIOD3, K_FLOAT, K_TEXT, K_COUNT };
static const char *const kind_name[K_COUNT] = {"random", "zeros", "runs", "period-3", "float32",
                                               "text"};

/* Fills buf with n bytes of one kind of data. */
static void fill(uint8_t *buf, size_t n, int kind)
{
    static const char *const words[] = {"the ", "of ", "gpu ", "batch ", "reduce ",
                                        "matrix ", "42 ", "\n", "0.125, ", "and "};
    uint8_t p3[3];
    for (int k = 0; k < 3; k++)
        p3[k] = (uint8_t)rnd();
    size_t i = 0;
    while (i < n) {
        uint64_t r = rnd();
        switch (kind) {
        case K_RANDOM:
            buf[i++] = (uint8_t)r;
            break;
        case K_ZEROS:
            buf[i++] = 0;
            break;
        case K_RUNS:
            for (size_t k = 1 + (r >> 8) % 1000; k-- && i < n;)
                buf[i++] = (uint8_t)r;
            break;
        case K_PERIOD3:
            buf[i] = p3[i % 3];
            i++;
            break;
        case K_FLOAT: {
            /* Box-Muller from two uniform numbers in (0, 1] */
            double u1 = ((double)(r >> 11) + 1.0) / 9007199254740992.0;
            double u2 = (double)(rnd() >> 11) / 9007199254740992.0;
            float f = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
            uint8_t b[4];
            memcpy(b, &f, 4);
            for (int k = 0; k < 4 && i < n; k++)
                buf[i++] = b[k];
            break;
        }
        default:
            for (const char *p = words[r % 10]; *p && i < n; p++)
                buf[i++] = (uint8_t)*p;
            break;
        }
    }
}

/* One way to call deflate: level, strategy, memLevel, and a flush every
 * `flush_every` bytes (Z_SYNC_FLUSH: empty stored blocks), 0 for none. */
typedef struct {
    int level, strategy, mem_level;
    size_t flush_every;
    const char *name;
} zconfig;

static const zconfig configs[] = {
    {0, Z_DEFAULT_STRATEGY, 8, 0, "level 0"},   {1, Z_DEFAULT_STRATEGY, 8, 0, "level 1"},
    {2, Z_DEFAULT_STRATEGY, 8, 0, "level 2"},   {3, Z_DEFAULT_STRATEGY, 8, 0, "level 3"},
    {4, Z_DEFAULT_STRATEGY, 8, 0, "level 4"},   {5, Z_DEFAULT_STRATEGY, 8, 0, "level 5"},
    {6, Z_DEFAULT_STRATEGY, 8, 0, "level 6"},   {7, Z_DEFAULT_STRATEGY, 8, 0, "level 7"},
    {8, Z_DEFAULT_STRATEGY, 8, 0, "level 8"},   {9, Z_DEFAULT_STRATEGY, 8, 0, "level 9"},
    {6, Z_FILTERED, 8, 0, "filtered"},          {6, Z_HUFFMAN_ONLY, 8, 0, "huffman-only"},
    {6, Z_RLE, 8, 0, "rle"},                    {6, Z_FIXED, 8, 0, "fixed"},
    {6, Z_DEFAULT_STRATEGY, 1, 0, "memLevel 1"}, {1, Z_DEFAULT_STRATEGY, 8, 777, "sync flushes"},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* Compresses n bytes into a raw deflate stream; returns its length (the
 * buffer holds deflateBound of MAX_OUT plus the flushes' bytes). */
static size_t compress_raw(const uint8_t *data, size_t n, const zconfig *c, uint8_t *out,
                           size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, c->level, Z_DEFLATED, -15, c->mem_level, c->strategy) != Z_OK)
        return 0;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    size_t pos = 0;
    int zr;
    do {
        size_t k = c->flush_every && n - pos > c->flush_every ? c->flush_every : n - pos;
        zs.next_in = (Bytef *)(uintptr_t)(data + pos);
        zs.avail_in = (uInt)k;
        pos += k;
        zr = deflate(&zs, pos == n ? Z_FINISH : Z_SYNC_FLUSH);
    } while (pos < n && zr == Z_OK);
    size_t len = zr == Z_STREAM_END ? zs.total_out : 0;
    deflateEnd(&zs);
    return len;
}

static const uint32_t sizes[] = {0,     1,     2,     3,     4,     5,     257,  258,
                                 259,   32768, 32769, 65279, 65280, 65535, 65536};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint8_t data[MAX_OUT], packed[2 * MAX_OUT];

/* Every data kind and size through a sample of deflate configurations (all
 * of them for small sizes, a rotating third for large ones): if_inflate
 * gives the bytes back and zlib agrees. */
static void test_round_trips(void)
{
    int runs = 0;
    for (int kind = 0; kind < K_COUNT; kind++) {
        for (size_t si = 0; si < NSIZES; si++) {
            uint32_t n = sizes[si];
            fill(data, n, kind);
            for (size_t ci = 0; ci < NCONFIGS; ci++) {
                if (n > 4096 && (ci + si + (size_t)kind) % 3 != 0)
                    continue;
                size_t len = compress_raw(data, n, &configs[ci], packed, sizeof packed);
                int st;
                zverdict zv;
                int same = len && agree(packed, len, n, &st, &zv);
                CHECKF(same && st == IF_OK && !memcmp(oout, data, n),
                       "%s, %u bytes, %s: status %d, zlib %s", kind_name[kind], n,
                       configs[ci].name, len ? st : -1, len ? zv.why : "deflate failed");
                runs++;
            }
        }
    }
    printf("round trips: %d streams\n", runs);
}

/* ---------------------------------------------------------------------- */
/* CRC-32 in parts                                                          */

static if_u32 crc_table[256];

/* The CRC-32 of data[0..n) from `parts` parts, part k covering
 * [starts[k], starts[k+1]): the xor of the parts' terms, finished. */
static uint32_t crc_of_parts(const uint8_t *d, uint32_t n, const uint32_t *starts, int parts)
{
    uint32_t x = 0;
    for (int k = 0; k < parts; k++)
        x ^= if_crc32_part(crc_table, d, starts[k], starts[k + 1],
                           if_crc32_xpow(n - starts[k + 1]));
    return if_crc32_finish(x, n);
}

/* if_crc32_part over 1..32 even parts (empty ones included for short data),
 * over right-aligned 2048-byte parts and over the GPU's split (lane l of 32
 * takes bytes [2048 l, 2048 l + 2048)), finished, equals zlib's crc32 for
 * every size of the round trips. */
static void test_crc_parts(void)
{
    for (unsigned i = 0; i < 256; i++)
        if_crc32_table(crc_table, i);
    const z_crc_t *zt = get_crc_table();
    int table_same = 1;
    for (unsigned i = 0; i < 256; i++)
        table_same &= crc_table[i] == zt[i];
    CHECK(table_same);
    /* multiplying by x^(8z) appends z zero bytes to the raw register */
    uint8_t buf[100] = {0};
    fill(buf, 60, K_RANDOM);
    uint32_t raw = if_crc32_raw(crc_table, 0, buf, 60);
    CHECK(if_crc32_mul(raw, if_crc32_xpow(40)) == if_crc32_raw(crc_table, 0, buf, 100));
    CHECK(if_crc32_xpow(0) == 0x80000000u);

    uint32_t starts[33];
    for (size_t si = 0; si < NSIZES; si++) {
        uint32_t n = sizes[si];
        fill(data, n, K_RANDOM);
        uint32_t want = (uint32_t)crc32(0L, data, n);
        int bad = 0;
        for (int parts = 1; parts <= 32; parts++) {
            for (int k = 0; k <= parts; k++)
                starts[k] = (uint32_t)((uint64_t)n * k / parts);
            bad += crc_of_parts(data, n, starts, parts) != want;
        }
        CHECKF(bad == 0, "%u bytes: %d of 32 even splits give the wrong CRC", n, bad);
        for (int l = 0; l < 32; l++) {
            int64_t s = (int64_t)n - 2048 * (32 - l);
            starts[l] = s > 0 ? (uint32_t)s : 0;
        }
        starts[32] = n;
        uint32_t got = crc_of_parts(data, n, starts, 32);
        CHECKF(got == want, "%u bytes, right-aligned split: crc %08x, zlib %08x", n, got, want);
        for (int l = 0; l <= 32; l++)
            starts[l] = 2048u * (uint32_t)l < n ? 2048u * (uint32_t)l : n;
        got = crc_of_parts(data, n, starts, 32);
        CHECKF(got == want, "%u bytes, GPU split: crc %08x, zlib %08x", n, got, want);
    }
}

/* A changed byte in a stored block inflates in both decoders: only the
 * CRC-32 (IF_ERR_CRC) tells the member is bad. */
static void test_crc_catches_stored_change(void)
{
    bitw *w = &W;
    fill(data, 5000, K_TEXT);
    uint32_t want = (uint32_t)crc32(0L, data, 5000);
    data[4321] ^= 0x10;
    bw_reset(w);
    put_stored(w, 1, data, 5000);
    expect_ok("stored block with a changed byte", w);
    uint32_t starts[3] = {0, 2000, 5000};
    uint32_t got = crc_of_parts(oout, 5000, starts, 2);
    CHECK(got == (uint32_t)crc32(0L, zout, 5000) && got != want);
}

/* ---------------------------------------------------------------------- */
/* Hand-built streams                                                       */

/* Block types: reserved type 3; stored blocks with bad LEN/NLEN, empty,
 * many empty blocks of every type, padding bits after BFINAL. */
static void test_block_types(void)
{
    bitw *w = &W;
    bw_reset(w);
    put_header(w, 1, 3);
    put_bits(w, 0, 16);
    expect("block type 3", w, 0, IF_ERR_BLOCK_TYPE, "invalid block type");

    bw_reset(w);
    put_stored(w, 0, (const uint8_t *)"ab", 2);
    put_header(w, 1, 3);
    expect("block type 3 after a stored block", w, 2, IF_ERR_BLOCK_TYPE, "invalid block type");

    uint8_t five[5] = {1, 2, 3, 4, 5};
    bw_reset(w);
    put_stored_raw(w, 1, five, 5, (~5u & 0xffffu) ^ 0x100u);
    expect("stored LEN != ~NLEN", w, 5, IF_ERR_STORED_LEN, "invalid stored block lengths");
    bw_reset(w);
    put_stored_raw(w, 1, five, 5, 5);
    expect("stored NLEN == LEN", w, 5, IF_ERR_STORED_LEN, "invalid stored block lengths");

    bw_reset(w);
    put_stored(w, 1, NULL, 0);
    expect_ok("empty stored final block", w);
    CHECK(bw_bytes(w) == 5);

    bw_reset(w);
    put_stored(w, 1, five, 5);
    expect_ok("stored block", w);

    /* many empty blocks of each type before the data */
    huff lit, dist;
    bw_reset(w);
    for (int i = 0; i < 300; i++) {
        put_stored(w, 0, NULL, 0);
        put_header(w, 0, 1);
        put_sym(w, &fixed_lit, 256);
        put_dynamic(w, 0, std_lit, 286, std_dist, 30, &lit, &dist);
        put_sym(w, &lit, 256);
    }
    put_header(w, 1, 1);
    put_sample(w, &fixed_lit, &fixed_dist);
    put_sym(w, &fixed_lit, 256);
    expect_ok("900 empty blocks, then data", w);

    /* the bits after the final block's end, in its last byte, are ignored */
    bw_reset(w);
    put_header(w, 1, 1);
    put_sample(w, &fixed_lit, &fixed_dist);
    put_sym(w, &fixed_lit, 256);
    CHECK(w->nbits % 8 != 0);
    while (w->nbits % 8)
        put_bits(w, 1, 1);
    expect_ok("ones after BFINAL's end-of-block", w);
    /* ... but a whole byte more is trailing data, even a zero */
    size_t n = bw_bytes(w);
    put_bits(w, 0, 8);
    expect("a zero byte after the final block", w, (uint32_t)w->nout, IF_ERR_TRAILING, "trailing");
    CHECK(bw_bytes(w) == n + 1);
    bw_reset(w);
    put_stored(w, 1, five, 5);
    put_bits(w, 0x1f, 8);
    expect("a byte after a stored final block", w, 5, IF_ERR_TRAILING, "trailing");
}

/* Dynamic headers: the counts, the code-length code, the repeats and the
 * end-of-block length. */
static void test_dynamic_headers(void)
{
    bitw *w = &W;
    huff lit, dist, cl;
    huff_make(&cl, cl_std, 19);
    /* HLIT 286 and HDIST 30 are the largest allowed */
    bw_reset(w);
    put_dynamic(w, 1, std_lit, 286, std_dist, 30, &lit, &dist);
    put_sample(w, &lit, &dist);
    put_match(w, &lit, &dist, 258, 50);
    put_sym(w, &lit, 256);
    expect_ok("286 and 30 codes", w);
    static const struct {
        unsigned nlen, ndist;
    } many[] = {{287, 30}, {288, 30}, {286, 31}, {286, 32}};
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "%u length and %u distance codes", many[i].nlen,
                 many[i].ndist);
        uint8_t ll[288], dl[32];
        memset(ll, 8, sizeof ll);
        memset(dl, 5, sizeof dl);
        expect_codes(what, ll, many[i].nlen, dl, many[i].ndist, IF_ERR_TOO_MANY,
                     "too many length or distance symbols");
    }

    /* the code-length code: over-subscribed, incomplete, one code of one
     * bit (allowed for the other codes, not this one), empty */
    static const struct {
        const char *what;
        uint8_t lens[19];
        const char *zwhy;
    } cls[] = {
        {"over-subscribed code-length code", {1, 1, 1}, "invalid code lengths set"},
        {"incomplete code-length code", {2, 2, 2}, "invalid code lengths set"},
        {"one-bit code-length code", {1}, "invalid code lengths set"},
        {"empty code-length code", {0}, "missing end-of-block"},
    };
    for (int i = 0; i < 4; i++) {
        bw_reset(w);
        put_dyn_head(w, 1, 257, 1, 19, cls[i].lens);
        for (int k = 0; k < 400; k++)
            put_bits(w, 0, 1);
        expect(cls[i].what, w, 0, IF_ERR_CODE_SET, cls[i].zwhy);
    }

    /* repeats: 16 first; 16, 17 and 18 right up to the end of the lengths
     * (accepted) and one past it */
    bw_reset(w);
    put_dyn_head(w, 1, 257, 1, 19, cl_std);
    put_cl(w, &cl, 16, 0);
    put_bits(w, 0, 32);
    expect("repeat 16 first", w, 0, IF_ERR_REPEAT, "invalid bit length repeat");
    for (unsigned sym = 16; sym <= 18; sym++) {
        for (unsigned over = 0; over <= 1; over++) {
            /* 's' and end-of-block of one bit (the zeros between them end
             * in two written as themselves); the distance lengths are one
             * written as itself and the rest repeated: 2 2 2 2 by 16,
             * 1 0 0 0 by 17, 1 and eleven 0 by 18 */
            unsigned ndist = sym == 18 ? 12 : 4, first = sym == 16 ? 2 : 1;
            bw_reset(w);
            put_dyn_head(w, 1, 257, ndist, 19, cl_std);
            put_zeros(w, &cl, 's');
            put_cl(w, &cl, 1, 0);
            put_zeros(w, &cl, 255 - 's');
            put_cl(w, &cl, 1, 0);
            put_cl(w, &cl, first, 0);
            put_cl(w, &cl, sym, over); /* repeat the minimum (3 or 11), or one more */
            char what[64];
            snprintf(what, sizeof what, "repeat %u %s", sym,
                     over ? "one past the end" : "to the end");
            if (over) {
                put_bits(w, 0, 32);
                expect(what, w, 0, IF_ERR_REPEAT, "invalid bit length repeat");
            } else {
                put_bits(w, 0, 1); /* 's' */
                put_bits(w, 1, 1); /* end-of-block */
                w->out[0] = 's';
                w->nout = 1;
                expect_ok(what, w);
            }
        }
    }

    /* a repeat may run from the literal/length lengths into the distance
     * lengths: 'r' 1 bit, EOB and length code 257 2 bits, four distances
     * of 2 bits, with EOB's 2 repeated over 257 and distances 0 and 1 (the
     * zeros between 'r' and EOB end in a 17) */
    {
        uint8_t ll[258] = {0}, dl[4] = {2, 2, 2, 2};
        ll['r'] = 1;
        ll[256] = ll[257] = 2;
        bw_reset(w);
        put_dyn_head(w, 1, 258, 4, 19, cl_std);
        put_zeros(w, &cl, 'r');
        put_cl(w, &cl, 1, 0);
        put_zeros(w, &cl, 255 - 'r');
        put_cl(w, &cl, 2, 0);
        put_cl(w, &cl, 16, 0);
        put_cl(w, &cl, 2, 0);
        put_cl(w, &cl, 2, 0);
        huff_make(&lit, ll, 258);
        huff_make(&dist, dl, 4);
        put_lit(w, &lit, 'r');
        put_match(w, &lit, &dist, 3, 1);
        put_match(w, &lit, &dist, 3, 4);
        put_sym(w, &lit, 256);
        expect_ok("repeat across the two codes' lengths", w);
    }

    /* missing end-of-block length */
    uint8_t ll[286];
    memcpy(ll, std_lit, sizeof ll);
    ll[256] = 0;
    bw_reset(w);
    put_dynamic(w, 1, ll, 286, std_dist, 30, &lit, &dist);
    expect("no end-of-block length", w, 0, IF_ERR_NO_EOB, "missing end-of-block");
}

/* The literals, end-of-block and lengths of skewed_codes' literal/length code. */
static const unsigned skewed_syms[17] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i',
                                         'j', 'k', 'l', 'm', 'n', 256, 257, 285};

/* Complete codes with codes of 1 to 15 bits: literal/length, 13 symbols
 * of 1..13 bits and four of 15; distance, 10 of 1..10 bits, four of 13 and
 * sixteen of 15. */
static void skewed_codes(uint8_t ll[286], uint8_t dl[30])
{
    memset(ll, 0, 286);
    for (unsigned i = 0; i < 17; i++)
        ll[skewed_syms[i]] = (uint8_t)(i < 13 ? i + 1 : 15);
    for (unsigned d = 0; d < 30; d++)
        dl[d] = (uint8_t)(d < 10 ? d + 1 : d < 14 ? 13 : 15);
}

/* Literal/length and distance codes: incomplete and over-subscribed sets,
 * the one-code-of-one-bit exception, empty distance codes. */
static void test_codes(void)
{
    bitw *w = &W;
    huff lit, dist;
    uint8_t ll[286] = {0}, dl[30] = {0};

    /* 'a', 'b' and EOB of two bits: incomplete */
    ll['a'] = ll['b'] = ll[256] = 2;
    dl[0] = 1;
    bw_reset(w);
    put_dynamic(w, 1, ll, 257, dl, 1, &lit, &dist);
    put_lit(w, &lit, 'a');
    put_sym(w, &lit, 256);
    expect("incomplete literal/length code", w, 1, IF_ERR_CODE_SET, "invalid literal/lengths set");
    ll['c'] = 1;
    bw_reset(w);
    put_dynamic(w, 1, ll, 257, dl, 1, &lit, &dist);
    put_lit(w, &lit, 'a');
    put_sym(w, &lit, 256);
    expect("over-subscribed literal/length code", w, 1, IF_ERR_CODE_SET,
           "invalid literal/lengths set");
    ll['c'] = 2;
    bw_reset(w);
    put_dynamic(w, 1, ll, 257, dl, 1, &lit, &dist);
    put_lit(w, &lit, 'c');
    put_lit(w, &lit, 'a');
    put_sym(w, &lit, 256);
    expect_ok("complete literal/length code (control)", w);

    /* only the end-of-block code, of one bit: accepted; its undefined
     * code is an error */
    memset(ll, 0, sizeof ll);
    ll[256] = 1;
    bw_reset(w);
    put_dynamic(w, 1, ll, 257, dl, 1, &lit, &dist);
    put_sym(w, &lit, 256);
    expect_ok("literal/length code of end-of-block alone", w);
    bw_reset(w);
    put_dynamic(w, 1, ll, 257, dl, 1, &lit, &dist);
    put_bits(w, 1, 1);
    put_bits(w, 0, 16);
    expect("the undefined one-bit literal/length code", w, 0, IF_ERR_BAD_SYMBOL,
           "invalid literal/length code");
    /* one code of two bits is incomplete, exception or not */
    ll[256] = 2;
    expect_codes("literal/length code of one 2-bit code", ll, 257, dl, 1, IF_ERR_CODE_SET,
                 "invalid literal/lengths set");

    /* the skewed codes of test_long_codes less one 15-bit code */
    uint8_t ld[30];
    skewed_codes(ll, ld);
    ll[285] = 0;
    expect_codes("literal/length code one 15-bit code short", ll, 286, ld, 30, IF_ERR_CODE_SET,
                 "invalid literal/lengths set");
    skewed_codes(ll, ld);
    ld[29] = 0;
    expect_codes("distance code one 15-bit code short", ll, 286, ld, 30, IF_ERR_CODE_SET,
                 "invalid distances set");

    /* distance codes: 'a' 1 bit, EOB and length 3 of 2 bits */
    memset(ll, 0, sizeof ll);
    ll['a'] = 1;
    ll[256] = ll[257] = 2;
    /* empty, or one code of one bit: fine when the block needs no other */
    dl[0] = 0;
    bw_reset(w);
    put_dynamic(w, 1, ll, 258, dl, 1, &lit, &dist);
    put_lit(w, &lit, 'a');
    put_sym(w, &lit, 256);
    expect_ok("empty distance code, no match", w);
    dl[3] = 1;
    bw_reset(w);
    put_dynamic(w, 1, ll, 258, dl, 4, &lit, &dist);
    for (int i = 0; i < 4; i++)
        put_lit(w, &lit, 'a');
    put_match(w, &lit, &dist, 3, 4);
    put_sym(w, &lit, 256);
    expect_ok("one-bit distance code, used", w);
    /* a match with an undefined distance code: any code of an empty
     * distance code, the unused one-bit code of a single one */
    for (unsigned single = 0; single <= 1; single++) {
        dl[3] = (uint8_t)single;
        bw_reset(w);
        put_dynamic(w, 1, ll, 258, dl, single ? 4 : 1, &lit, &dist);
        put_lit(w, &lit, 'a');
        put_sym(w, &lit, 257);
        put_bits(w, 1, 1);
        put_bits(w, 0, 16);
        expect(single ? "one-bit distance code, the undefined one" : "empty distance code, a match",
               w, 4, IF_ERR_BAD_SYMBOL, "invalid distance code");
    }
    /* incomplete and over-subscribed distance codes */
    dl[0] = 2;
    dl[3] = 1;
    expect_codes("incomplete distance code", ll, 258, dl, 4, IF_ERR_CODE_SET,
                 "invalid distances set");
    dl[1] = dl[2] = 2;
    expect_codes("over-subscribed distance code", ll, 258, dl, 4, IF_ERR_CODE_SET,
                 "invalid distances set");
}

/* Fixed-Huffman blocks: symbols 286 and 287, distance symbols 30 and 31. */
static void test_fixed_symbols(void)
{
    bitw *w = &W;
    for (unsigned sym = 286; sym <= 287; sym++) {
        bw_reset(w);
        put_header(w, 1, 1);
        put_lit(w, &fixed_lit, 'x');
        put_sym(w, &fixed_lit, sym);
        put_bits(w, 0, 16);
        char what[48];
        snprintf(what, sizeof what, "fixed symbol %u", sym);
        expect(what, w, 1, IF_ERR_BAD_SYMBOL, "invalid literal/length code");
    }
    for (unsigned ds = 29; ds <= 31; ds++) {
        bw_reset(w);
        put_header(w, 1, 1);
        for (int i = 0; i < 3; i++)
            put_lit(w, &fixed_lit, 'x');
        put_match_raw(w, &fixed_lit, &fixed_dist, 257, 0, ds, 0);
        put_bits(w, 0, 16);
        char what[48];
        snprintf(what, sizeof what, "fixed distance symbol %u", ds);
        expect(what, w, 6, ds == 29 ? IF_ERR_FAR : IF_ERR_BAD_SYMBOL,
               ds == 29 ? "too far back" : "invalid distance code");
    }
}

/* Distances against the output so far, lengths at their limits. */
static void test_distances_lengths(void)
{
    bitw *w = &W;
    /* one past the data so far, and exactly all of it */
    for (unsigned have = 1; have <= 300; have += 299) {
        for (unsigned past = 0; past <= 1; past++) {
            bw_reset(w);
            put_header(w, 1, 1);
            for (unsigned i = 0; i < have; i++)
                put_lit(w, &fixed_lit, (uint8_t)(i * 7));
            put_match(w, &fixed_lit, &fixed_dist, 5, have + past);
            put_sym(w, &fixed_lit, 256);
            char what[64];
            snprintf(what, sizeof what, "distance %u after %u bytes", have + past, have);
            expect(what, w, have + 5, past ? IF_ERR_FAR : IF_OK,
                   past ? "invalid distance too far back" : "ok");
        }
    }
    /* distance 32768 at output position 32768 (a stored block first), and
     * at 32767 */
    fill(data, 32768, K_RANDOM);
    for (unsigned at = 32767; at <= 32768; at++) {
        bw_reset(w);
        put_stored(w, 0, data, at);
        put_header(w, 1, 1);
        put_match(w, &fixed_lit, &fixed_dist, 258, 32768);
        put_sym(w, &fixed_lit, 256);
        char what[64];
        snprintf(what, sizeof what, "distance 32768 at %u", at);
        expect(what, w, at + 258, at == 32768 ? IF_OK : IF_ERR_FAR,
               at == 32768 ? "ok" : "invalid distance too far back");
    }
    /* length 258 from code 284 with 31 extra bits and from code 285, and
     * the other codes' limits */
    bw_reset(w);
    put_header(w, 1, 1);
    put_lit(w, &fixed_lit, 'q');
    put_lit(w, &fixed_lit, 'r');
    put_match_raw(w, &fixed_lit, &fixed_dist, 284, 31, 1, 0);
    put_match_raw(w, &fixed_lit, &fixed_dist, 285, 0, 0, 0);
    for (unsigned c = 257; c <= 284; c++) {
        put_match_raw(w, &fixed_lit, &fixed_dist, c, 0, 4, 1);
        put_match_raw(w, &fixed_lit, &fixed_dist, c, (1u << len_extra[c - 257]) - 1, 4, 0);
    }
    put_sym(w, &fixed_lit, 256);
    CHECK(w->nout > 2 + 258 + 258);
    expect_ok("length 258 by 284 + 31 and by 285; every length code", w);
    /* every distance code with its smallest and largest extra bits */
    bw_reset(w);
    put_stored(w, 0, data, 32768);
    put_header(w, 1, 1);
    for (unsigned d = 0; d < 30; d++) {
        put_match_raw(w, &fixed_lit, &fixed_dist, 260, 0, d, 0);
        put_match_raw(w, &fixed_lit, &fixed_dist, 260, 0, d, (1u << dist_extra[d]) - 1);
    }
    put_sym(w, &fixed_lit, 256);
    expect_ok("every distance code", w);
}

/* A skewed dynamic code with codes of 1 to 15 bits (past the primary
 * tables) for literals, lengths and distances decodes right. */
static void test_long_codes(void)
{
    bitw *w = &W;
    huff lit, dist;
    uint8_t ll[286], dl[30];
    skewed_codes(ll, dl);
    bw_reset(w);
    put_dynamic(w, 1, ll, 286, dl, 30, &lit, &dist);
    CHECK(lit.len['n'] == 15 && lit.len[285] == 15 && dist.len[29] == 15);
    for (unsigned r = 0; r < 40; r++)
        for (unsigned i = 0; i < 14; i++)
            put_lit(w, &lit, skewed_syms[(i + r) % 14]);
    for (unsigned d = 0; d < 30; d++) {
        unsigned dmax = dist_base[d] + (1u << dist_extra[d]) - 1;
        if (dmax > w->nout)
            break;
        put_match_raw(w, &lit, &dist, 257, 0, d, 0);
        put_match_raw(w, &lit, &dist, 285, 0, d, (1u << dist_extra[d]) - 1);
    }
    put_sym(w, &lit, 256);
    CHECK(w->nout > 4000);
    expect_ok("codes of 1..15 bits", w);
}

/* Output sizes: one byte past ISIZE, one short, for stored, fixed and
 * match output; and each valid stream cut at every byte. */
static void test_sizes_and_cuts(void)
{
    bitw *w = &W;
    uint8_t five[5] = {9, 8, 7, 6, 5};
    for (int form = 0; form < 3; form++) {
        bw_reset(w);
        if (form == 0) {
            put_stored(w, 1, five, 5);
        } else {
            put_header(w, 1, 1);
            put_lit(w, &fixed_lit, 'z');
            if (form == 1)
                for (int i = 0; i < 4; i++)
                    put_lit(w, &fixed_lit, 'y');
            else
                put_match(w, &fixed_lit, &fixed_dist, 4, 1);
            put_sym(w, &fixed_lit, 256);
        }
        static const char *const forms[] = {"stored", "literals", "match"};
        char what[64];
        snprintf(what, sizeof what, "%s output one byte past ISIZE", forms[form]);
        expect(what, w, 4, IF_ERR_OVERFLOW, "full");
        snprintf(what, sizeof what, "%s output one byte short", forms[form]);
        expect(what, w, 6, IF_ERR_SIZE, "size");
        expect_ok(forms[form], w);
    }
    /* cut at every byte: stored, fixed, dynamic with long codes, many blocks */
    huff lit, dist;
    for (int form = 0; form < 4; form++) {
        bw_reset(w);
        if (form == 0) {
            put_stored(w, 0, five, 5);
            put_stored(w, 1, five, 3);
        } else if (form == 1) {
            put_header(w, 1, 1);
            put_sample(w, &fixed_lit, &fixed_dist);
            put_sym(w, &fixed_lit, 256);
        } else if (form == 2) {
            put_dynamic(w, 1, std_lit, 286, std_dist, 30, &lit, &dist);
            put_sample(w, &lit, &dist);
            put_sym(w, &lit, 256);
        } else {
            put_stored(w, 0, NULL, 0);
            put_header(w, 0, 1);
            put_sample(w, &fixed_lit, &fixed_dist);
            put_sym(w, &fixed_lit, 256);
            put_dynamic(w, 0, std_lit, 286, std_dist, 30, &lit, &dist);
            put_sample(w, &lit, &dist);
            put_sym(w, &lit, 256);
            put_stored(w, 1, five, 5);
        }
        size_t n = bw_bytes(w);
        int bad = 0;
        for (size_t cut = 0; cut < n; cut++) {
            int st;
            zverdict zv;
            int same = agree(w->buf, cut, (uint32_t)w->nout, &st, &zv);
            bad += !same || st != IF_ERR_TRUNCATED || !strstr(zv.why, "input ended");
        }
        CHECKF(bad == 0, "stream form %d: %d of %zu cuts not seen as truncated", form, bad, n);
        expect_ok("uncut stream", w);
    }
    /* a dynamic header cut at every byte */
    make_std();
    bw_reset(w);
    put_dynamic(w, 1, std_lit, 286, std_dist, 30, &lit, &dist);
    put_sym(w, &lit, 256);
    int bad = 0;
    for (size_t cut = 0; cut + 1 < bw_bytes(w); cut++) {
        int st;
        zverdict zv;
        bad += !agree(w->buf, cut, 0, &st, &zv) || st != IF_ERR_TRUNCATED;
    }
    CHECKF(bad == 0, "dynamic header: %d cuts not seen as truncated", bad);
}

/* ---------------------------------------------------------------------- */
/* Differential corruption                                                  */

/* Valid streams of every kind and configuration, then bit flips, cuts,
 * appended bytes, overwritten bytes and wrong ISIZEs: our verdict and
 * bytes equal zlib's for each. */
static void test_corruptions(int count)
{
    int disagree = 0, accepted = 0, statuses[16] = {0};
    for (int t = 0; t < count; t++) {
        int kind = (int)(rnd() % K_COUNT);
        uint64_t r = rnd();
        uint32_t n = r % 8 == 0 ? (uint32_t)(rnd() % (MAX_OUT + 1))
                     : r % 8 < 3 ? sizes[rnd() % NSIZES]
                                 : (uint32_t)(rnd() % 3000);
        fill(data, n, kind);
        const zconfig *c = &configs[rnd() % NCONFIGS];
        size_t len = compress_raw(data, n, c, packed, sizeof packed - 8);
        uint32_t size = n;
        int how = (int)(rnd() % 6);
        if (how == 0 || how == 5) { /* one to four bit flips */
            for (int k = (int)(rnd() % 4); k >= 0; k--) {
                size_t bit = rnd() % (len * 8);
                packed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
        } else if (how == 1) { /* a cut */
            len = rnd() % len;
        } else if (how == 2) { /* appended bytes */
            for (int k = (int)(rnd() % 3); k >= 0; k--)
                packed[len++] = (uint8_t)rnd();
        } else if (how == 3) { /* an overwritten byte */
            size_t at = rnd() % len;
            packed[at] = (uint8_t)rnd();
        }
        if (how >= 4) { /* a wrong ISIZE */
            uint32_t d = (uint32_t)(rnd() % 3);
            size = rnd() % 2 ? (size + 1 + d > MAX_OUT ? size - 1 - d : size + 1 + d)
                             : (size > d ? size - 1 - d : size + 1);
            if (rnd() % 8 == 0)
                size = (uint32_t)(rnd() % (MAX_OUT + 1));
        }
        int st;
        zverdict zv;
        if (!agree(packed, len, size, &st, &zv)) {
            if (disagree++ < 5)
                fprintf(stderr, "disagreement: %s %u bytes %s, change %d, ISIZE %u: ours %d, "
                        "zlib %s\n", kind_name[kind], n, c->name, how, size, st, zv.why);
        }
        accepted += st == IF_OK;
        statuses[st & 15]++;
    }
    CHECKF(disagree == 0, "%d of %d corrupted streams decoded differently from zlib", disagree,
           count);
    /* the corruptions reach well into the decoder, not just its first check */
    CHECK(accepted > 0 && accepted < count);
    int classes = 0;
    for (int s = 1; s < 16; s++)
        classes += statuses[s] > 0;
    CHECKF(classes >= 9, "only %d rejection classes seen", classes);
    printf("corruptions: %d streams, %d accepted, statuses:", count, accepted);
    for (int s = 0; s <= IF_ERR_SIZE; s++)
        printf(" %d", statuses[s]);
    printf("\n");
}

int main(void)
{
    make_fixed();
    make_std();
    RUN(test_round_trips);
    RUN(test_crc_parts);
    RUN(test_crc_catches_stored_change);
    RUN(test_block_types);
    RUN(test_dynamic_headers);
    RUN(test_codes);
    RUN(test_fixed_symbols);
    RUN(test_distances_lengths);
    RUN(test_long_codes);
    RUN(test_sizes_and_cuts);
    /* the sanitizer runs take a shorter list */
    RUN(test_corruptions, getenv("GPUBATCH_TEST_QUICK") ? 800 : 4000);
    return check_summary();
}
