/* crc.c - CRC-32 by folding with carry-less multiplication (see crc.h).
 *
 * The message is folded 64 bytes at a time into four 128-bit remainders:
 * each is multiplied by x^(512+32) and x^(512-32) modulo the polynomial (the
 * constants below, bit-reflected and shifted left by one as carry-less
 * multiplication of reflected operands needs) for its two halves and added
 * to the data 64 bytes further on. The four are then folded into one (by 128
 * bits), 16-byte pieces follow, and the 128-bit remainder is reduced to 64
 * bits, then to the 32-bit CRC by Barrett reduction (mu = x^64 / P). The
 * constants are those of Intel's white paper "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction" (2009) for this
 * polynomial. Where the CPU multiplies two 128-bit lanes at once (AVX2 with
 * VPCLMULQDQ), the same folding runs on eight 256-bit remainders, 256 bytes
 * a step (by x^(2048+32) and x^(2048-32)), and the 64 bytes they fold into
 * go on as a message's first 64 bytes would (the remainder of a folded
 * prefix stands for that prefix). Pieces under 64 bytes, and CPUs without
 * the instruction, go to zlib. */
#include "crc.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cpu.h"

#define CRC_COPY_PIECE ((size_t)16 << 10) /* well inside a core's L1 data cache */

/* Copies and checksums piece by piece (see crc.h). */
uint32_t crc_copy(uint32_t crc, void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n) {
        size_t k = n < CRC_COPY_PIECE ? n : CRC_COPY_PIECE;
        memcpy(d, s, k);
        crc = crc_update(crc, d, k);
        d += k;
        s += k;
        n -= k;
    }
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define CRC_FOLD_ATTR __attribute__((target("pclmul,sse4.1")))

/* x^(512+32), x^(512-32); x^(128+32), x^(128-32); x^64; mu and P', reflected. */
static const uint64_t k_fold4[2] = {0x0154442bd4ull, 0x01c6e41596ull};
static const uint64_t k_fold1[2] = {0x01751997d0ull, 0x00ccaa009eull};
static const uint64_t k_fold64[2] = {0x0163cd6124ull, 0};
static const uint64_t k_barrett[2] = {0x01db710641ull, 0x01f7011641ull};

/* r folded forward over 128 or 512 bits by the constant pair k, plus d. */
CRC_FOLD_ATTR static inline __m128i fold(__m128i r, __m128i k, __m128i d)
{
    __m128i lo = _mm_clmulepi64_si128(r, k, 0x00), hi = _mm_clmulepi64_si128(r, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

/* The raw register (no inversions) after n bytes, n >= 64 and a multiple of
 * 16, from register value crc. */
CRC_FOLD_ATTR static uint32_t crc_fold(uint32_t crc, const uint8_t *p, size_t n)
{
    const __m128i *v = (const __m128i *)p;
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128(v), _mm_cvtsi32_si128((int)crc));
    __m128i x1 = _mm_loadu_si128(v + 1), x2 = _mm_loadu_si128(v + 2), x3 = _mm_loadu_si128(v + 3);
    size_t i = 4, blocks = n / 16;
    __m128i k = _mm_loadu_si128((const __m128i *)k_fold4);
    for (; i + 4 <= blocks; i += 4) {
        x0 = fold(x0, k, _mm_loadu_si128(v + i));
        x1 = fold(x1, k, _mm_loadu_si128(v + i + 1));
        x2 = fold(x2, k, _mm_loadu_si128(v + i + 2));
        x3 = fold(x3, k, _mm_loadu_si128(v + i + 3));
    }
    k = _mm_loadu_si128((const __m128i *)k_fold1);
    x0 = fold(x0, k, x1);
    x0 = fold(x0, k, x2);
    x0 = fold(x0, k, x3);
    for (; i < blocks; i++)
        x0 = fold(x0, k, _mm_loadu_si128(v + i));
    /* 128 bits to 64, then 64 to 32 (Barrett) */
    const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
    __m128i t = _mm_clmulepi64_si128(x0, k, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    t = _mm_srli_si128(x0, 4);
    x0 = _mm_and_si128(x0, low32);
    x0 = _mm_clmulepi64_si128(x0, _mm_loadu_si128((const __m128i *)k_fold64), 0x00);
    x0 = _mm_xor_si128(x0, t);
    const __m128i kb = _mm_loadu_si128((const __m128i *)k_barrett);
    t = _mm_and_si128(x0, low32);
    t = _mm_clmulepi64_si128(t, kb, 0x10);
    t = _mm_and_si128(t, low32);
    t = _mm_clmulepi64_si128(t, kb, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}

#define CRC_WIDE_ATTR __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1")))
#define WIDE_STEP 256 /* bytes folded a step by the eight 256-bit remainders */

/* x^(2048+32), x^(2048-32), reflected (as above). */
static const uint64_t k_fold16[2] = {0x011542778aull, 0x01322d1430ull};

/* Both 128-bit lanes of r folded forward by the constant pair k, plus d. */
CRC_WIDE_ATTR static inline __m256i fold2(__m256i r, __m256i k, __m256i d)
{
    __m256i lo = _mm256_clmulepi64_epi128(r, k, 0x00), hi = _mm256_clmulepi64_epi128(r, k, 0x11);
    return _mm256_xor_si256(_mm256_xor_si256(lo, hi), d);
}

/* As crc_fold, n >= WIDE_STEP and a multiple of 16, 256 bytes a step. */
CRC_WIDE_ATTR static uint32_t crc_fold_wide(uint32_t crc, const uint8_t *p, size_t n)
{
    __m256i y[8];
    for (int j = 0; j < 8; j++)
        y[j] = _mm256_loadu_si256((const __m256i *)(p + 32 * j));
    y[0] = _mm256_xor_si256(y[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)crc)));
    __m256i k = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)k_fold16));
    size_t i = WIDE_STEP;
    for (; i + WIDE_STEP <= n; i += WIDE_STEP)
        for (int j = 0; j < 8; j++)
            y[j] = fold2(y[j], k, _mm256_loadu_si256((const __m256i *)(p + i + 32 * j)));
    /* the eight into the last two (64 bytes), 512 bits at a time */
    k = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)k_fold4));
    for (int j = 2; j < 8; j++)
        y[j] = fold2(y[j - 2], k, y[j]);
    uint8_t rest[64 + WIDE_STEP];
    _mm256_storeu_si256((__m256i *)rest, y[6]);
    _mm256_storeu_si256((__m256i *)(rest + 32), y[7]);
    memcpy(rest + 64, p + i, n - i);
    return crc_fold(0, rest, 64 + (n - i));
}

/* The widest folding this CPU runs, at most the 128-bit one where
 * GPUBATCH_CPU_SIMD names the baseline (see simd.h). */
static int crc_best(void)
{
    unsigned f = cpu_features();
    if (!(f & CPU_PCLMUL))
        return CRC_ZLIB;
    const char *env = getenv("GPUBATCH_CPU_SIMD");
    int capped = env && !strcmp(env, "baseline");
    return !capped && (f & CPU_VPCLMUL) ? CRC_FOLD_256 : CRC_FOLD_128;
}

static int crc_level = -1; /* the folding in use; -1: not chosen yet */

/* The folding in use (see crc.h). */
int crc_folding(void)
{
    int v = __atomic_load_n(&crc_level, __ATOMIC_ACQUIRE);
    if (v < 0) {
        v = crc_best();
        __atomic_store_n(&crc_level, v, __ATOMIC_RELEASE);
    }
    return v;
}

/* Uses folding v, at most the widest this CPU runs (see crc.h). */
int crc_force(int v)
{
    int best = crc_best();
    if (v < 0 || v > best)
        v = best;
    __atomic_store_n(&crc_level, v, __ATOMIC_RELEASE);
    return v;
}

/* The CRC-32 of p[0..n) after crc (see crc.h). */
uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    int v = n >= 64 ? crc_folding() : CRC_ZLIB;
    if (v != CRC_ZLIB) {
        size_t m = n & ~(size_t)15;
        crc = ~(v == CRC_FOLD_256 && m >= WIDE_STEP ? crc_fold_wide : crc_fold)(~crc, b, m);
        b += m;
        n -= m;
    }
    return n ? (uint32_t)crc32(crc, b, (uInt)n) : crc;
}
#else
/* Only zlib's (see crc.h). */
int crc_folding(void)
{
    return CRC_ZLIB;
}

/* Only zlib's (see crc.h). */
int crc_force(int v)
{
    (void)v;
    return CRC_ZLIB;
}

/* The CRC-32 of p[0..n) after crc (see crc.h). */
uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        crc = (uint32_t)crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}
#endif
