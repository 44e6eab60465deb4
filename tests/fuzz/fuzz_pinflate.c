/* fuzz_pinflate.c - differential fuzz harness for the host deflate decoder
 * (io/inflate.c) and the parallel decoder of one stream (io/pinflate.c)
 * against zlib.
 *
 * The first byte picks the parallel decoder's threads (1 to 4) and chunk
 * size (tens of bytes up to a few KiB, so that every input crosses many
 * chunk boundaries) and the host decoder's stop step, whose low bit also
 * has the parallel decoder read the stream through a pipe's spool, written
 * in pieces of every size; the rest is a raw deflate stream. Where zlib decodes the stream to its end, both must give
 * its bytes; where zlib refuses it, both must refuse it and hand out only a
 * prefix of what zlib gave before its error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/inflate.h"
#include "io/pinflate.h"
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
static int parallel_decode(pinf *p, const uint8_t *in, size_t len, int pipe, uint8_t *out,
                           size_t *got)
{
    pipe_feeder f;
    spool *sp = NULL;
    if (pipe)
        pinf_begin_spool(p, sp = pipe_feeder_spool(&f, in, len, 1 + len / 4, len), 0);
    else
        pinf_begin(p, -1, in, len, 0);
    size_t n = 0;
    ssize_t k;
    while (n < CAP && (k = pinf_read(p, out + n, CAP - n > 7777 ? 7777 : CAP - n)) > 0)
        n += (size_t)k;
    require(n == CAP || k == 0 || k == PINF_STOPPED);
    pinf_end(p);
    if (pipe)
        pipe_feeder_end(&f, sp);
    *got = n;
    return n < CAP && k == 0;
}

/* Decodes with zlib, the host decoder and the parallel decoder, and aborts
 * on any disagreement. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pinf *par[4][4];
    static const uint64_t chunk[4] = {37, 300, 2048, 9000};
    if (size < 1)
        return 0;
    unsigned cfg = data[0];
    pinf **p = &par[cfg & 3][(cfg >> 2) & 3];
    if (!*p)
        require(pinf_create(p, (int)(cfg & 3) + 1, chunk[(cfg >> 2) & 3]) == 0);
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    uint8_t *want = malloc(CAP), *host = malloc(CAP), *par_out = malloc(CAP);
    require(want && host && par_out);
    size_t zgot, hgot, pgot;
    int zok = zlib_raw_inflate(in, len, want, CAP, &zgot);
    inf_job j = {.in = in, .in_len = len, .stop_bit = (cfg >> 4) ? 1 : UINT64_MAX,
                 .out_limit = SIZE_MAX, .out = host, .out_cap = CAP};
    int r;
    while ((r = inf_decode_bytes(&j)) == INF_STOP)
        j.stop_bit = j.bit + (cfg >> 4) * 97;
    hgot = j.out_len;
    int pok = parallel_decode(*p, in, len, (cfg >> 4) & 1, par_out, &pgot);
    if (zgot < CAP) {
        require((r == INF_END) == zok && (pok == zok));
        require(hgot <= zgot && memcmp(host, want, hgot) == 0);
        require(pgot <= zgot && memcmp(par_out, want, pgot) == 0);
        if (zok)
            require(hgot == zgot && pgot == zgot);
    }
    free(want);
    free(host);
    free(par_out);
    return 0;
}
