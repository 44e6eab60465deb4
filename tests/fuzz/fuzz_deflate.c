/* fuzz_deflate.c - fuzz harness for the deflate encoder (ptx/deflate_math.h).
 *
 * Input layout: byte 0 picks the level (1 + byte % 9), the rest (at most
 * DF_BLOCK_MAX bytes) is the block. The block is compressed twice, with
 * workspaces poisoned differently (the second one also used on the input
 * reversed first); both outputs must be the same bytes, no longer than
 * the stored form, and zlib's inflate must give the block back exactly,
 * ending at the last byte. At level 1 the GPU's block encoder of
 * ptx/deflate_warp.h (its lanes run in turn) must give the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ptx/deflate_math.h"
#include "ptx/deflate_warp.h"

static df_near near_a, near_b;
static df_far far_a, far_b;
static uint8_t out_a[DF_OUT_BOUND(DF_BLOCK_MAX)], out_b[DF_OUT_BOUND(DF_BLOCK_MAX)];
static uint8_t scratch[DF_BLOCK_MAX], back[DF_BLOCK_MAX + 1];
static dw_shared warp_sh;
static dw_work warp_wk;
static df_u32 warp_out[DW_OUT_SLOT(DF_BLOCK_MAX) / 4];

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Inflates a raw deflate stream; returns the byte count, or -1 when zlib
 * refuses it or it does not end at its last byte. */
static long inflate_raw(const uint8_t *in, size_t len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    require(inflateInit2(&zs, -15) == Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = back;
    zs.avail_out = sizeof(back);
    int rc = inflate(&zs, Z_FINISH);
    long n = (rc == Z_STREAM_END && zs.avail_in == 0) ? (long)zs.total_out : -1;
    inflateEnd(&zs);
    return n;
}

/* Compresses the block twice and checks the round trip. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int level = 1 + data[0] % 9;
    const uint8_t *block = data + 1;
    size_t n = size - 1 < DF_BLOCK_MAX ? size - 1 : DF_BLOCK_MAX;
    memset(&near_a, 0xA5, sizeof(near_a));
    memset(&far_a, 0xA5, sizeof(far_a));
    memset(&near_b, data[0], sizeof(near_b));
    memset(&far_b, ~data[0], sizeof(far_b));
    for (size_t i = 0; i < n; i++)
        scratch[i] = block[n - 1 - i];
    df_compress(&near_b, &far_b, scratch, (df_u32)n, 10 - level, out_b);
    size_t la = df_compress(&near_a, &far_a, block, (df_u32)n, level, out_a);
    size_t lb = df_compress(&near_b, &far_b, block, (df_u32)n, level, out_b);
    require(la == lb && memcmp(out_a, out_b, la) == 0);
    require(la <= DF_OUT_BOUND(n));
    require(inflate_raw(out_a, la) == (long)n && memcmp(back, block, n) == 0);
    if (level == 1) {
        memset(&warp_sh, data[0], sizeof(warp_sh));
        memset(&warp_wk, ~data[0], sizeof(warp_wk));
        size_t lw = dw_compress_fast(&warp_sh, &warp_wk, block, (df_u32)n, (df_u8 *)warp_out);
        require(lw == la && memcmp(warp_out, out_a, la) == 0);
    }
    return 0;
}
