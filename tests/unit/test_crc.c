/* test_crc.c - crc_update against a bit-at-a-time CRC-32 written here and
 * against zlib's crc32(): every length up to 600 at every alignment, long
 * random pieces, pieces fed in any split, and the standard check value;
 * crc_copy's copy and value; each with every folding the CPU runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"
#include "io/crc.h"

/* The reflected CRC-32 one bit at a time, zlib's convention (pre- and
 * post-inverted register). */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1u ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

/* Short pieces: every length and alignment, several starting registers
 * (past the 256-bit folding's two steps and its 16-byte pieces after). */
static void test_short(const uint8_t *buf)
{
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= 600; n++) {
            uint32_t seed = (uint32_t)rnd();
            uint32_t want = crc_bitwise(seed, buf + off, n);
            CHECKF(crc_update(seed, buf + off, n) == want, "off %zu n %zu", off, n);
        }
}

/* Long pieces against zlib, and the same bytes fed in random splits. */
static void test_long(const uint8_t *buf, size_t size)
{
    for (int t = 0; t < 200; t++) {
        size_t off = rnd() % 64, n = rnd() % (size - 64);
        uint32_t whole = (uint32_t)crc32(0, buf + off, (uInt)n);
        CHECKF(crc_update(0, buf + off, n) == whole, "off %zu n %zu", off, n);
        uint32_t c = 0;
        for (size_t done = 0; done < n;) {
            size_t k = rnd() % 5000;
            if (k > n - done)
                k = n - done;
            c = crc_update(c, buf + off + done, k);
            done += k;
        }
        CHECKF(c == whole, "split: off %zu n %zu", off, n);
    }
}

/* crc_copy: the copy is exact, nothing past it is written, and the value is
 * crc_update's, for lengths around its pieces' size at odd alignments. */
static void test_copy(const uint8_t *buf, size_t size)
{
    uint8_t *dst = malloc(size + 2);
    if (!dst) {
        CHECK(0);
        return;
    }
    size_t lens[] = {0, 1, 63, 64, 4095, 16383, 16384, 16385, 65537, 300001};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (size_t off = 0; off < 3; off++) {
            size_t n = lens[i];
            uint32_t seed = (uint32_t)rnd();
            memset(dst, 0xa5, size + 2);
            uint32_t got = crc_copy(seed, dst + off, buf + 7 + off, n);
            CHECKF(got == (uint32_t)crc32(seed, buf + 7 + off, (uInt)n), "n %zu off %zu", n, off);
            CHECKF(memcmp(dst + off, buf + 7 + off, n) == 0, "copy: n %zu off %zu", n, off);
            CHECKF(dst[off + n] == 0xa5 && (off == 0 || dst[off - 1] == 0xa5), "bounds: n %zu", n);
        }
    free(dst);
}

int main(void)
{
    CHECK(crc_update(0, "123456789", 9) == 0xcbf43926u);
    CHECK(crc_update(0, NULL, 0) == 0);
    CHECK(crc_update(0x12345678u, NULL, 0) == 0x12345678u);
    size_t size = 1u << 20;
    uint8_t *buf = malloc(size);
    if (!buf)
        return 1;
    int widest = crc_force(CRC_FOLD_256);
    printf("note: widest CRC-32 folding here: %s\n", widest == CRC_FOLD_256   ? "256-bit"
                                                    : widest == CRC_FOLD_128 ? "128-bit"
                                                                             : "none (zlib)");
    for (int v = CRC_ZLIB; v <= widest; v++) {
        CHECK(crc_force(v) == v && crc_folding() == v);
        for (size_t i = 0; i < size; i++)
            buf[i] = (uint8_t)rnd();
        test_short(buf);
        test_long(buf, size);
        test_copy(buf, size);
        memset(buf, 0xff, size);
        CHECKF(crc_update(0, buf, size) == (uint32_t)crc32(0, buf, (uInt)size), "folding %d", v);
    }
    free(buf);
    return check_summary();
}
