/* fuzz_inflate_stream.c - differential fuzz harness for one deflate stream
 * decoded the GPU's way (the plan of io/gzip/stream_plan.c over the decoder of
 * ptx/inflate_stream.h, compiled for the host: tests/inflate_stream_host.h)
 * against zlib.
 *
 * The first byte picks the segment length (8 bytes up to 2 KiB of
 * compressed data, so that every input crosses many segment boundaries),
 * the room per segment, the batch size and whether each batch is searched
 * for from a margin before the end of the one before; the rest is a raw deflate
 * stream. The plan may give up on any input (the caller then inflates on
 * the host); where it does not, zlib must decode the stream to its end and
 * give the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/inflate_stream_host.h"
#include "tests/zlib_raw.h"

#define CAP ((size_t)1 << 20) /* streams that decode to more are given up */

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t ours[CAP], theirs[CAP];
    if (size < 1)
        return 0;
    unsigned pick = data[0];
    size_t batch = pick & 0x40u ? 64u + (size_t)(pick & 0x38u) * 16u : 0;
    ish_opts o = {(uint64_t)(8u << (pick & 7u)) * 8u, 64u << ((pick >> 3) & 7u), batch, 0,
                  pick & 0x80u ? batch / 4 : 0};
    long got = ish_decode(data + 1, size - 1, ours, CAP, &o);
    if (got < 0)
        return 0;
    size_t zgot;
    int end = zlib_raw_inflate(data + 1, size - 1, theirs, CAP, &zgot);
    require(end && zgot == (size_t)got && memcmp(ours, theirs, zgot) == 0);
    return 0;
}
