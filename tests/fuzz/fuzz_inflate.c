/* fuzz_inflate.c - differential fuzz harness for the blocked-gzip deflate
 * decoder (ptx/inflate_math.h) against zlib.
 *
 * The first three bytes give ISIZE (their low 17 bits, little-endian,
 * capped at 65536); the rest is a raw deflate stream. The decoder must
 * accept exactly what zlib accepts under the host reader's rule (raw
 * inflate with Z_FINISH into exactly ISIZE bytes, Z_STREAM_END, no input
 * left) and then give the same bytes; it must not write past ISIZE (the
 * output buffer is exactly that long), and its verdict must not depend on
 * what its tables held before. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ptx/inflate_math.h"

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* zlib's verdict under the host rule; the bytes go to out (size bytes,
 * or one spare byte when size is 0). */
static int zlib_accepts(const uint8_t *in, size_t len, uint8_t *out, uint32_t size)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    require(inflateInit2(&zs, -15) == Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = size ? size : 1;
    int zr = inflate(&zs, Z_FINISH);
    int ok = zr == Z_STREAM_END && zs.avail_in == 0 && zs.total_out == size;
    inflateEnd(&zs);
    return ok;
}

/* Decodes with both decoders (ours twice, from zeroed and from all-ones
 * tables) and aborts on any difference. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    uint32_t isize = ((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16) &
                     0x1ffffu;
    if (isize > IF_MAX_OUT)
        isize = IF_MAX_OUT;
    const uint8_t *in = data + 3;
    size_t len = size - 3;
    uint8_t *want = malloc(isize ? isize : 1), *got = malloc(isize ? isize : 1);
    if_tables *t = malloc(sizeof *t);
    require(want && got && t);
    int zok = zlib_accepts(in, len, want, isize);
    memset(t, 0, sizeof *t);
    int st = if_inflate(in, (if_u32)len, got, isize, t);
    require(st >= IF_OK && st <= IF_ERR_SIZE);
    require((st == IF_OK) == zok);
    if (zok)
        require(memcmp(got, want, isize) == 0);
    memset(t, 0xff, sizeof *t);
    require(if_inflate(in, (if_u32)len, got, isize, t) == st);
    free(t);
    free(got);
    free(want);
    return 0;
}
