/* fuzz_pinflate.c - differential fuzz harness for the host deflate decoder
 * (io/gzip/inflate.c, each of its instruction-set variants this CPU runs,
 * which must agree exactly) and the parallel decoder of one stream
 * (io/gzip/pinflate.c) against zlib.
 *
 * The first byte picks the parallel decoder's threads (1, 2, 3 or 6: on 6,
 * speculative chunks of mostly literals are decoded two at once) and chunk
 * size (tens of bytes up to a few KiB, so that every input crosses many
 * chunk boundaries) and the host decoder's stop step, whose low bit also
 * has the parallel decoder read the stream through a pipe's spool, written
 * in pieces of every size, and its bits 5 and 6 the plan (bit 5: AUTO,
 * speculating or in order with speculative chunks ahead, by the measured
 * cost, the order taking over those not done when it reaches them; else
 * bit 6: ORDER; else PARALLEL); the rest is a raw deflate stream. Where zlib
 * decodes the stream to its end, both must give its bytes; where zlib
 * refuses it, both must refuse it and hand out only a prefix of what zlib
 * gave before its error. Where the rest starts with a plain gzip header, it
 * is also read as gzip members with the parallel decoder going on across
 * them (pinflate_members): member by member, zlib's bytes, ends and CRC-32s.
 * The stream is also taken up from a block boundary in its middle, with the
 * window, CRC-32 and length before it (pinflate_begin_at), and decoded
 * beside itself cut short (inflate_decode_bytes_pair): each as alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/gzip/bgzf.h"
#include "io/gzip/inflate.h"
#include "io/gzip/pinflate.h"
#include "tests/pipe_feeder.h"
#include "tests/zlib_raw.h"

#define CAP ((size_t)1 << 20) /* output beyond this is not compared */

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* The parallel decoder's bytes, from memory or through a pipe: 1 at the
 * stream's end, 0 when it stopped. */
static int parallel_decode(pinflate *p, const uint8_t *in, size_t len, int pipe, uint8_t *out,
                           size_t *got)
{
    pipe_feeder f;
    spool *sp = NULL;
    if (pipe)
        pinflate_begin_spool(p, sp = pipe_feeder_spool(&f, in, len, 1 + len / 4, len), 0);
    else
        pinflate_begin(p, -1, in, len, 0);
    size_t n = 0;
    ssize_t k;
    while (n < CAP && (k = pinflate_read(p, out + n, CAP - n > 7777 ? 7777 : CAP - n)) > 0)
        n += (size_t)k;
    require(n == CAP || k == 0 || k == PINFLATE_STOPPED);
    pinflate_end(p);
    if (pipe)
        pipe_feeder_end(&f, sp);
    *got = n;
    return n < CAP && k == 0;
}

/* zlib's inflate of the gzip member at in[0..len) into out (CAP bytes):
 * *got its bytes, *used the input it took; zlib's result, and in *checks
 * whether a refusal was only the trailer's CRC-32 or length. */
static int zlib_member(const uint8_t *in, size_t len, uint8_t *out, size_t *got, size_t *used,
                       int *checks)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    require(inflateInit2(&zs, 31) == Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)CAP;
    int zr = inflate(&zs, Z_FINISH);
    *got = CAP - zs.avail_out;
    *used = len - zs.avail_in;
    *checks = zr == Z_DATA_ERROR && zs.msg &&
              (!strcmp(zs.msg, "incorrect data check") || !strcmp(zs.msg, "incorrect length check"));
    inflateEnd(&zs);
    return zr;
}

/* Whether zlib takes every member from `at` on, while plain gzip headers
 * follow: the decoder, which goes on across them, then never stops in them
 * (0 where one's trailer is wrong, or one is too long to compare). */
static int members_decode(const uint8_t *in, size_t len, size_t at, uint8_t *scratch)
{
    for (int m = 0; m < 64 && at < len; m++) {
        size_t zgot, used;
        int checks, zr = zlib_member(in + at, len - at, scratch, &zgot, &used, &checks);
        if (zgot >= CAP || zr != Z_STREAM_END) /* refused, or too long to tell */
            return 0;
        at += used;
        if (!pinflate_header(in + at, len - at))
            return 1;
    }
    return 1;
}

/* The input as gzip members, read by the parallel decoder going on across
 * them, against zlib member by member: a prefix of zlib's bytes, and all of
 * them, the member's end and CRC-32 where it takes the member to its end,
 * which it does where zlib decodes every member from there on. */
static void members_check(pinflate *p, const uint8_t *in, size_t len, uint8_t *want, uint8_t *got)
{
    size_t h = pinflate_header(in, len);
    if (!h)
        return;
    pinflate_members(p, 1);
    pinflate_begin(p, -1, in, len, h);
    for (size_t at = 0, m = 0; m < 64; m++) {
        int clean = members_decode(in, len, at, got);
        size_t zgot, used, n = 0;
        int checks, zr = zlib_member(in + at, len - at, want, &zgot, &used, &checks);
        ssize_t k;
        while (n < CAP && (k = pinflate_read(p, got + n, CAP - n > 7777 ? 7777 : CAP - n)) > 0)
            n += (size_t)k;
        if (n >= CAP || zgot >= CAP)
            break;
        require(n <= zgot && memcmp(got, want, n) == 0);
        require(k == 0 || k == PINFLATE_STOPPED);
        require(k == 0 || !clean);
        if (k == PINFLATE_STOPPED)
            break;
        uint64_t end, total;
        uint32_t crc;
        require((zr == Z_STREAM_END || checks) && n == zgot);
        pinflate_result(p, &end, &crc, &total);
        require(total == n && crc == (uint32_t)crc32(0, want, (uInt)n));
        if (zr != Z_STREAM_END)
            break;
        require(end + 8 == at + used);
        if ((at += used) >= len)
            break;
        size_t next = pinflate_header(in + at, len - at);
        if (!next)
            break;
        if (!pinflate_continue(p, at + next))
            pinflate_begin(p, -1, in, len, at + next);
    }
    pinflate_end(p);
    pinflate_members(p, 0);
}

/* The stream taken up by the parallel decoder at the first block boundary
 * past bit `from` (where a device stops), with the window, CRC-32 and
 * length of zlib's bytes before it: zlib's bytes after the point, its
 * whole CRC-32 and length where zlib takes the stream to its end; where
 * zlib refuses it, a stop at a block boundary at or past the point with
 * only a prefix of zlib's bytes, counted in the CRC-32 and length. */
static void begin_at_check(pinflate *p, const uint8_t *in, size_t len, uint64_t from,
                           const uint8_t *want, size_t zgot, int zok, uint8_t *got)
{
    inflate_job j = {.in = in, .in_len = len, .stop_bit = from, .out_limit = SIZE_MAX,
                     .out = got, .out_cap = CAP};
    if (zgot >= CAP || inflate_decode_bytes(&j) != INFLATE_STOP || j.out_len > zgot)
        return;
    size_t wlen = j.out_len < INFLATE_WINDOW ? j.out_len : INFLATE_WINDOW;
    pinflate_point at = {.bit = j.bit, .window = want + j.out_len - wlen, .wlen = wlen,
                         .crc = (uint32_t)crc32(0, want, (uInt)j.out_len), .len = j.out_len};
    pinflate_begin_at(p, -1, in, len, &at);
    size_t n = 0, room = CAP - j.out_len;
    ssize_t k = 0;
    while (n < room && (k = pinflate_read(p, got + n, room - n > 7777 ? 7777 : room - n)) > 0)
        n += (size_t)k;
    require(n <= zgot - j.out_len && memcmp(got, want + j.out_len, n) == 0);
    uint64_t end = 0, total = 0;
    uint32_t crc = 0;
    const uint8_t *w;
    size_t wl;
    if (k == 0)
        pinflate_result(p, &end, &crc, &total);
    else if (k == PINFLATE_STOPPED)
        pinflate_stop_point(p, &end, &w, &wl, &crc, &total);
    if (zok)
        require(k == 0 && n == zgot - j.out_len && total == zgot);
    else
        require(k == PINFLATE_STOPPED && end >= j.bit && total == j.out_len + n);
    require(crc == (uint32_t)crc32(0, want, (uInt)total));
    pinflate_end(p);
}

/* The host decoder's bytes into out (CAP), stopped at every block boundary
 * past each `step` bits where step is nonzero: its last result, and the
 * job's state in *j. */
static int host_decode(const uint8_t *in, size_t len, uint64_t step, uint8_t *out, inflate_job *j)
{
    *j = (inflate_job){.in = in, .in_len = len, .stop_bit = step ? 1 : UINT64_MAX,
                       .out_limit = SIZE_MAX, .out = out, .out_cap = CAP};
    int r;
    while ((r = inflate_decode_bytes(j)) == INFLATE_STOP)
        j->stop_bit = j->bit + step;
    return r;
}

/* One job over in[0..len) into out (CAP bytes), stopped at the first
 * boundary past stop_bit. */
static inflate_job pair_job(const uint8_t *in, size_t len, uint64_t stop_bit, uint8_t *out)
{
    return (inflate_job){.in = in, .in_len = len, .stop_bit = stop_bit, .out_limit = SIZE_MAX,
                         .out = out, .out_cap = CAP};
}

/* The input decoded twice at once (inflate_decode_bytes_pair): whole, and
 * cut at a point with a stop at another; each job's result, stop, blocks
 * and bytes must be its decode's alone. */
static void pair_check(const uint8_t *in, size_t len, unsigned cfg)
{
    static uint8_t *out[4];
    for (int i = 0; i < 4; i++)
        if (!out[i])
            require((out[i] = malloc(CAP)) != NULL);
    size_t cut = len - len * (cfg & 7) / 16;
    uint64_t stop = (uint64_t)len * 8 * ((cfg >> 3) + 1) / 33;
    inflate_job a = pair_job(in, len, UINT64_MAX, out[0]), b = pair_job(in, cut, stop, out[1]);
    inflate_job a1 = pair_job(in, len, UINT64_MAX, out[2]), b1 = pair_job(in, cut, stop, out[3]);
    int rb, ra = inflate_decode_bytes_pair(&a, &b, &rb);
    int ra1 = inflate_decode_bytes(&a1), rb1 = inflate_decode_bytes(&b1);
    require(ra == ra1 && a.out_len == a1.out_len && a.bit == a1.bit && a.blocks == a1.blocks &&
            memcmp(out[0], out[2], a.out_len) == 0);
    require(rb == rb1 && b.out_len == b1.out_len && b.bit == b1.bit && b.blocks == b1.blocks &&
            memcmp(out[1], out[3], b.out_len) == 0);
}

/* Decodes with zlib, the host decoder (each of its variants this CPU runs)
 * and the parallel decoder, and aborts on any disagreement. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pinflate *par[4][4];
    static const int threads[4] = {1, 2, 3, 6};
    static const uint64_t chunk[4] = {37, 300, 2048, 9000};
    if (size < 1)
        return 0;
    unsigned cfg = data[0];
    pinflate **p = &par[cfg & 3][(cfg >> 2) & 3];
    if (!*p)
        require(pinflate_create(p, threads[cfg & 3], chunk[(cfg >> 2) & 3]) == 0);
    pinflate_plan(*p, cfg & 0x20   ? PINFLATE_AUTO
                      : cfg & 0x40 ? PINFLATE_ORDER
                                   : PINFLATE_PARALLEL);
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    uint8_t *want = malloc(CAP), *host = malloc(CAP), *par_out = malloc(CAP);
    require(want && host && par_out);
    size_t zgot, hgot, pgot;
    int zok = zlib_raw_inflate(in, len, want, CAP, &zgot);
    inflate_job j, k;
    int r = host_decode(in, len, (cfg >> 4) * 97, host, &j);
    hgot = j.out_len;
    int chosen = inflate_force_variant(-1);
    for (int v = INFLATE_BASELINE; v <= INFLATE_BMI2; v++)
        if (v != chosen && inflate_force_variant(v) == v)
            require(host_decode(in, len, (cfg >> 4) * 97, par_out, &k) == r && k.bit == j.bit &&
                    k.out_len == hgot && k.blocks == j.blocks && memcmp(par_out, host, hgot) == 0);
    inflate_force_variant(-1);
    int pok = parallel_decode(*p, in, len, (cfg >> 4) & 1, par_out, &pgot);
    if (zgot < CAP) {
        require((r == INFLATE_END) == zok && (pok == zok));
        require(hgot <= zgot && memcmp(host, want, hgot) == 0);
        require(pgot <= zgot && memcmp(par_out, want, pgot) == 0);
        if (zok)
            require(hgot == zgot && pgot == zgot);
    }
    begin_at_check(*p, in, len, (uint64_t)len * 8 * ((cfg >> 4) + 1) / 17, want, zgot, zok,
                   par_out);
    members_check(*p, in, len, want, par_out);
    pair_check(in, len, cfg);
    free(want);
    free(host);
    free(par_out);
    return 0;
}
