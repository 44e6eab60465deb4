/* zlib_raw.h - zlib's raw inflate of a whole deflate stream, the reference
 * the host decoders are compared with. Header only, for
 * tests/unit/test_pinflate.c and tests/fuzz/fuzz_pinflate.c. */
#ifndef GPUBATCH_TESTS_ZLIB_RAW_H
#define GPUBATCH_TESTS_ZLIB_RAW_H

#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* Inflates in[0..len) as raw deflate into out (cap bytes): *got gets the
 * bytes zlib gives before it stops; 1 when it reached the stream's end. */
static int zlib_raw_inflate(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *got)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) {
        *got = 0;
        return 0;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int zr = inflate(&zs, Z_FINISH);
    *got = cap - zs.avail_out;
    inflateEnd(&zs);
    return zr == Z_STREAM_END;
}

#endif
