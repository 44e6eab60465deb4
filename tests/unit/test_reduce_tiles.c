/* test_reduce_tiles.c - the CPU tile code (rd_cpu_tiles, the widest
 * variant this CPU has) against a reference written element by element
 * from the definitions in ptx/reduce_math.h: float32 and float64 moments
 * (each element into its lane accumulator in index order, then the fixed
 * trees) and
 * extrema (order keys, NaN as the least and the greatest or skipped, ties
 * to the lower index), on random data with NaN, infinities, signed zeros,
 * subnormals, ties and extremes placed at block and tile edges; integer
 * moments (exact 128-bit sums of values and squares) and extrema of every
 * integer type and bool, in every variant this CPU runs, on random values,
 * the type's extremes and runs of them; float16 and bfloat16 extrema, NaN
 * and infinities among them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/reduce.h"
#include "runtime/simd.h"
#include "check.h"
#define RND_SEED 0x7e57ca5e7e57ca5eull
#include "rnd.h"

/* float32 of bits b. */
static float f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* The reference moments of one tile of n elements (their values in x),
 * v of them to a 16-byte vector. */
static void ref_moments(const double *x, size_t n, unsigned v, int skipnan, rd_moments *m)
{
    static double ls[RD_WARPS * RD_LANES * 8], lq[RD_WARPS * RD_LANES * 8]; /* v <= 8 */
    uint64_t cnt = 0;
    for (size_t l = 0; l < sizeof ls / sizeof ls[0]; l++)
        ls[l] = lq[l] = -0.0;
    for (size_t o = 0; o < n; o++) {
        if (skipnan && isnan(x[o]))
            continue;
        size_t w = o / RD_SUBTILE, in = o % RD_SUBTILE;
        size_t l = (w * RD_LANES + (in / v) % RD_LANES) * v + in % v;
        double d = x[o];
        ls[l] = rd_add(ls[l], d);
        lq[l] = rd_add(lq[l], d * d);
        cnt++;
    }
    double val[2];
    double *accs[2] = {ls, lq};
    for (int k = 0; k < 2; k++) {
        double lanes[RD_LANES], sub[RD_WARPS];
        for (unsigned w = 0; w < RD_WARPS; w++) {
            for (unsigned l = 0; l < RD_LANES; l++) {
                double *a = accs[k] + (w * RD_LANES + l) * v;
                rd_lane_tree(a, v);
                lanes[l] = a[0];
            }
            rd_subtile_tree(lanes);
            sub[w] = lanes[0];
        }
        rd_warps_tree(sub);
        val[k] = sub[0];
    }
    memcpy(&m->sum_lo, &val[0], 8);
    memcpy(&m->sq_lo, &val[1], 8);
    m->count = cnt;
}

/* The reference extrema of n float32 (size 4: bits in b32) or float64
 * (size 8: b64) elements from global index g. */
static void ref_extrema(const uint32_t *b32, const uint64_t *b64, size_t size, size_t n,
                        uint64_t g, int skipnan, rd_extrema *e)
{
    *e = rd_extrema_empty();
    for (size_t o = 0; o < n; o++) {
        float f;
        double d;
        if (size == 4)
            memcpy(&f, &b32[o], 4);
        else
            memcpy(&d, &b64[o], 8);
        if (size == 4 ? isnan(f) : isnan(d)) {
            if (!skipnan) {
                rd_min_update(&e->min_key, &e->min_idx, RD_NAN_MIN_KEY, g + o);
                rd_max_update(&e->max_key, &e->max_idx, RD_NAN_MAX_KEY, g + o);
            }
            continue;
        }
        rd_u64 k = size == 4 ? rd_key_f32(b32[o]) : rd_key_f64(b64[o]);
        rd_min_update(&e->min_key, &e->min_idx, k, g + o);
        rd_max_update(&e->max_key, &e->max_idx, k, g + o);
    }
}

/* Whether two sums (double bits) are the same: the same bits, or both NaN
 * (whose payload the compilers may take from either operand of an add:
 * it is never printed). */
static int same_sum(uint64_t a, uint64_t b)
{
    double x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    return a == b || (isnan(x) && isnan(y));
}

/* One random float32 of kind k. */
static float draw(int k)
{
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000,
                                       0x7fc00000, 0xffc00000, 0x7f800001, 0x00000001,
                                       0x807fffff, 0x7f7fffff, 0xff7fffff, 0x3f800000};
    switch (k) {
    case 0: return (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1);
    case 1: return f32_of((uint32_t)rnd());
    case 2: return (float)((int)(rnd() % 5) - 2);
    case 3: return f32_of((uint32_t)(rnd() & 0x807fffff)); /* subnormals and zeros */
    default: return f32_of(special[rnd() % (sizeof special / sizeof special[0])]);
    }
}

/* One random float64 of kind k (the kinds of draw). */
static double draw64(int k)
{
    static const uint64_t special[] = {0, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                       0xfff0000000000000ull, 0x7ff8000000000000ull,
                                       0xfff8000000000001ull, 0x7ff0000000000001ull, 1,
                                       0x800fffffffffffffull, 0x7fefffffffffffffull,
                                       0xffefffffffffffffull, 0x3ff0000000000000ull};
    uint64_t b;
    double d;
    switch (k) {
    case 0: return (double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1;
    case 1: b = rnd(); break;
    case 2: return (double)((int)(rnd() % 5) - 2);
    case 3: b = rnd() & 0x800fffffffffffffull; break;
    default: b = special[rnd() % (sizeof special / sizeof special[0])]; break;
    }
    memcpy(&d, &b, 8);
    return d;
}

/* Element i of a float32 (size 4) or float64 (size 8) array: set to v,
 * and read as a double. */
static void put(unsigned char *buf, size_t size, size_t i, double v)
{
    float f = (float)v;
    if (size == 4)
        memcpy(buf + 4 * i, &f, 4);
    else
        memcpy(buf + 8 * i, &v, 8);
}

/* Element i as a double (see put). */
static double get(const unsigned char *buf, size_t size, size_t i)
{
    float f;
    double d;
    if (size == 4)
        return memcpy(&f, buf + 4 * i, 4), (double)f;
    memcpy(&d, buf + 8 * i, 8);
    return d;
}

/* The kind of a random element of round `round` (of draw, draw64,
 * draw_int or draw_h16): mostly one kind, sprinkled with others. */
static int kind_of(int round)
{
    int base = round % 5, mix = round / 5;
    return mix && rnd() % (8u << mix) == 0 ? (int)(rnd() % 5) : base;
}

/* Makes SIMD variant v the one in use where this CPU runs it: 1, else 0. */
static int use_variant(int v)
{
    if (!simd_runs(v))
        return 0;
    simd_force(v);
    return 1;
}

/* Float arrays of dtype dt (float32 or float64) of many shapes: the tile
 * code's partials equal the reference's. */
static void test_tiles(dt_type dt)
{
    static const size_t sizes[] = {1, 3, 16, 17, 255, 256, 257, 2047, 2048, 2049, 4100,
                                   RD_TILE - 1, RD_TILE, RD_TILE + 1, 3 * RD_TILE + 300};
    size_t size = dt_size(dt);
    unsigned char *x = malloc(size * 4 * RD_TILE);
    double *xd = malloc(sizeof(double) * RD_TILE);
    rd_moments *m = calloc(4, sizeof *m), rm;
    rd_extrema *e = calloc(4, sizeof *e), re;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int round = 0; round < 40; round++) {
            size_t n = sizes[si];
            for (size_t i = 0; i < n; i++) {
                int kind = kind_of(round);
                float f = size == 4 ? draw(kind) : 0; /* stored as drawn: NaN payloads too */
                if (size == 4)
                    memcpy(x + 4 * i, &f, 4);
                else
                    put(x, 8, i, draw64(kind));
            }
            if (round % 7 == 3) { /* an extreme at a block edge, a duplicate after it */
                put(x, size, (rnd() % n) / 256 * 256, -INFINITY);
                put(x, size, n - 1, -INFINITY);
            }
            if (round % 11 == 5)
                put(x, size, rnd() % n, NAN);
            for (int skipnan = 0; skipnan < 2; skipnan++) {
                size_t nt = (n + RD_TILE - 1) / RD_TILE;
                uint64_t g = rnd() % 1000;
                rd_cpu_tiles(x, n, g, dt, skipnan, 1, 0, nt, m, e);
                for (size_t t = 0; t < nt; t++) {
                    size_t k = n - t * RD_TILE < RD_TILE ? n - t * RD_TILE : RD_TILE;
                    const void *tile = x + t * RD_TILE * size;
                    for (size_t i = 0; i < k; i++)
                        xd[i] = get(tile, size, i);
                    ref_moments(xd, k, (unsigned)(16 / size), skipnan, &rm);
                    ref_extrema(tile, tile, size, k, g + t * RD_TILE, skipnan, &re);
                    CHECKF(same_sum(m[t].sum_lo, rm.sum_lo) && same_sum(m[t].sq_lo, rm.sq_lo) &&
                               m[t].count == rm.count,
                           "%s moments n=%zu round %d skipnan %d tile %zu", dt_name(dt), n,
                           round, skipnan, t);
                    CHECKF(!memcmp(&e[t], &re, sizeof re),
                           "%s extrema n=%zu round %d skipnan %d tile %zu: %llx@%llu %llx@%llu, "
                           "want %llx@%llu %llx@%llu",
                           dt_name(dt), n, round, skipnan, t, (unsigned long long)e[t].min_key,
                           (unsigned long long)e[t].min_idx, (unsigned long long)e[t].max_key,
                           (unsigned long long)e[t].max_idx, (unsigned long long)re.min_key,
                           (unsigned long long)re.min_idx, (unsigned long long)re.max_key,
                           (unsigned long long)re.max_idx);
                }
            }
        }
    free(x);
    free(xd);
    free(m);
    free(e);
}

/* Bits of one random integer element of `size` bytes of kind k: any
 * bits, the type's least or greatest (signed or unsigned), small values,
 * or zero. */
static uint64_t draw_int(size_t size, int k)
{
    uint64_t mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1, top = 1ull << (8 * size - 1);
    static const int8_t small[] = {-2, -1, 0, 1, 2};
    switch (k) {
    case 0: return rnd() & mask;
    case 1: return (rnd() & 1 ? top : top - 1) & mask; /* the signed extremes */
    case 2: return rnd() & 1 ? mask : 0;               /* the unsigned ones, and -1 */
    case 3: return (uint64_t)(int64_t)small[rnd() % 5] & mask;
    default: return 0;
    }
}

/* The reference moments and extrema of n integer elements of dtype dt
 * (bits at x) from global index g: element by element, in 128 bits. */
static void ref_int(dt_type dt, const unsigned char *x, size_t n, uint64_t g, rd_moments *m,
                    rd_extrema *e)
{
    size_t size = dt_size(dt);
    int is_signed = dt == DT_I8 || dt == DT_I16 || dt == DT_I32 || dt == DT_I64;
    rd_u128 s = 0, q = 0;
    *e = rd_extrema_empty();
    for (size_t o = 0; o < n; o++) {
        uint64_t b = 0;
        memcpy(&b, x + o * size, size);
        __int128 v;
        if (dt == DT_BOOL)
            v = b != 0;
        else if (is_signed && size < 8 && (b >> (8 * size - 1)))
            v = (__int128)b - ((__int128)1 << (8 * size));
        else
            v = is_signed ? (__int128)(int64_t)b : (__int128)b;
        s += (rd_u128)v;
        q += (rd_u128)v * (rd_u128)v; /* wraps past 128 bits: 64-bit squares are not compared */
        rd_u64 k = dt == DT_BOOL ? (rd_u64)(b != 0) : is_signed ? rd_key_signed((rd_i64)v) : b;
        rd_min_update(&e->min_key, &e->min_idx, k, g + o);
        rd_max_update(&e->max_key, &e->max_idx, k, g + o);
    }
    m->sum_lo = (uint64_t)s;
    m->sum_hi = (uint64_t)(s >> 64);
    m->sq_lo = (uint64_t)q;
    m->sq_hi = (uint64_t)(q >> 64);
    m->count = n;
}

/* Integer and bool arrays of dtype dt of many shapes, in every variant:
 * the tile code's exact sums (of squares too, but for 64-bit types, whose
 * squares go into doubles) and extrema equal the reference's. */
static void test_int_tiles(dt_type dt)
{
    static const size_t sizes[] = {0, 1, 3, 255, 256, 257, 4100, RD_TILE - 1, RD_TILE,
                                   2 * RD_TILE + 300};
    size_t size = dt_size(dt);
    unsigned char *x = malloc(size * 3 * RD_TILE);
    rd_moments *m = calloc(3, sizeof *m), rm;
    rd_extrema *e = calloc(3, sizeof *e), re;
    for (int v = 0; v < SIMD_COUNT; v++) {
        if (!use_variant(v))
            continue;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int round = 0; round < 12; round++) {
                size_t n = sizes[si];
                for (size_t i = 0; i < n; i++) {
                    uint64_t b = draw_int(size, kind_of(round));
                    memcpy(x + i * size, &b, size);
                }
                if (n && round % 4 == 1) { /* a run of one extreme ending at a block edge */
                    uint64_t b = draw_int(size, 1 + (int)(rnd() % 2));
                    size_t end = (rnd() % n) / 256 * 256;
                    for (size_t i = end > 40 ? end - 40 : 0; i < end; i++)
                        memcpy(x + i * size, &b, size);
                }
                size_t nt = (n + RD_TILE - 1) / RD_TILE;
                uint64_t g = rnd() % 1000;
                memset(m, 0xa5, 3 * sizeof *m);
                memset(e, 0xa5, 3 * sizeof *e);
                rd_cpu_tiles(x, n, g, dt, 0, 1, 0, nt, m, e);
                for (size_t t = 0; t < nt; t++) {
                    size_t k = n - t * RD_TILE < RD_TILE ? n - t * RD_TILE : RD_TILE;
                    ref_int(dt, x + t * RD_TILE * size, k, g + t * RD_TILE, &rm, &re);
                    int wide = size == 8 && dt != DT_BOOL;
                    CHECKF(m[t].sum_lo == rm.sum_lo && m[t].sum_hi == rm.sum_hi &&
                               (wide || (m[t].sq_lo == rm.sq_lo && m[t].sq_hi == rm.sq_hi)) &&
                               m[t].count == rm.count,
                           "%s %s moments n=%zu round %d tile %zu", simd_name(v), dt_name(dt), n,
                           round, t);
                    CHECKF(!memcmp(&e[t], &re, sizeof re),
                           "%s %s extrema n=%zu round %d tile %zu: %llx@%llu %llx@%llu, want "
                           "%llx@%llu %llx@%llu",
                           simd_name(v), dt_name(dt), n, round, t,
                           (unsigned long long)e[t].min_key, (unsigned long long)e[t].min_idx,
                           (unsigned long long)e[t].max_key, (unsigned long long)e[t].max_idx,
                           (unsigned long long)re.min_key, (unsigned long long)re.min_idx,
                           (unsigned long long)re.max_key, (unsigned long long)re.max_idx);
                }
            }
    }
    simd_force(-1);
    free(x);
    free(m);
    free(e);
}

/* One random 16-bit float's bits of kind k (float16 when f16, else
 * bfloat16): any bits, an infinity, a NaN, a signed zero, or a number near
 * one. */
static uint16_t draw_h16(int f16, int k)
{
    uint16_t inf = f16 ? 0x7c00 : 0x7f80, sign = (uint16_t)(rnd() & 1 ? 0x8000 : 0);
    switch (k) {
    case 0: return (uint16_t)rnd();
    case 1: return (uint16_t)(inf | sign);
    case 2: return (uint16_t)(inf | sign | (1 + rnd() % 0x7f)); /* a NaN */
    case 3: return sign;
    default: return (uint16_t)((f16 ? 0x3c00 : 0x3f80) + rnd() % 8) | sign;
    }
}

/* float16 (f16) or bfloat16 tiles of many shapes, in every variant: the
 * moments equal the reference's over hf_f16_to_f32's or hf_bf16_to_f32's
 * values (subnormals, NaN and infinities among them), and the extrema an
 * element-by-element reference's (order keys, NaN as the least and the
 * greatest or skipped, ties to the lower index). */
static void test_half_tiles(int f16)
{
    static const size_t sizes[] = {1, 3, 256, 257, 4100, RD_TILE, 2 * RD_TILE + 300};
    dt_type dt = f16 ? DT_F16 : DT_BF16;
    uint16_t *x = malloc(sizeof *x * 3 * RD_TILE);
    double *xd = malloc(sizeof(double) * RD_TILE);
    rd_moments *m = calloc(3, sizeof *m), rm;
    rd_extrema *e = calloc(3, sizeof *e), re;
    for (int v = 0; v < SIMD_COUNT; v++) {
        if (!use_variant(v))
            continue;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int round = 0; round < 15; round++) {
                size_t n = sizes[si];
                for (size_t i = 0; i < n; i++)
                    x[i] = draw_h16(f16, kind_of(round));
                if (round == 9) /* numbers and the NaN nearest an infinity: the order's edge */
                    x[rnd() % n] = (uint16_t)((f16 ? 0x7c01 : 0x7f81) | (rnd() & 1 ? 0x8000 : 0));
                for (int skipnan = 0; skipnan < 2; skipnan++) {
                    size_t nt = (n + RD_TILE - 1) / RD_TILE;
                    uint64_t g = rnd() % 1000;
                    memset(m, 0xa5, 3 * sizeof *m);
                    memset(e, 0xa5, 3 * sizeof *e);
                    rd_cpu_tiles(x, n, g, dt, skipnan, 1, 0, nt, m, e);
                    for (size_t t = 0; t < nt; t++) {
                        size_t k = n - t * RD_TILE < RD_TILE ? n - t * RD_TILE : RD_TILE;
                        for (size_t o = 0; o < k; o++) {
                            uint16_t b = x[t * RD_TILE + o];
                            xd[o] = f16 ? hf_f16_to_f32(b) : hf_bf16_to_f32(b);
                        }
                        ref_moments(xd, k, 8, skipnan, &rm);
                        CHECKF(same_sum(m[t].sum_lo, rm.sum_lo) && same_sum(m[t].sq_lo, rm.sq_lo) &&
                                   m[t].count == rm.count,
                               "%s %s moments n=%zu round %d skipnan %d tile %zu", simd_name(v),
                               dt_name(dt), n, round, skipnan, t);
                        re = rd_extrema_empty();
                        for (size_t o = 0; o < k; o++) {
                            uint16_t b = x[t * RD_TILE + o];
                            uint64_t i = g + t * RD_TILE + o;
                            if ((b & 0x7fff) > (f16 ? 0x7c00 : 0x7f80)) {
                                if (!skipnan) {
                                    rd_min_update(&re.min_key, &re.min_idx, RD_NAN_MIN_KEY, i);
                                    rd_max_update(&re.max_key, &re.max_idx, RD_NAN_MAX_KEY, i);
                                }
                                continue;
                            }
                            rd_min_update(&re.min_key, &re.min_idx, rd_key_h16(b), i);
                            rd_max_update(&re.max_key, &re.max_idx, rd_key_h16(b), i);
                        }
                        CHECKF(!memcmp(&e[t], &re, sizeof re),
                               "%s %s extrema n=%zu round %d skipnan %d tile %zu", simd_name(v),
                               dt_name(dt), n, round, skipnan, t);
                    }
                }
            }
    }
    simd_force(-1);
    free(x);
    free(xd);
    free(m);
    free(e);
}

int main(void)
{
    printf("CPU tile code: %s\n", simd_name(simd_variant()));
    RUN(test_tiles, DT_F32);
    RUN(test_tiles, DT_F64);
    static const dt_type ints[] = {DT_I8, DT_I16, DT_I32, DT_I64, DT_U8,
                                   DT_U16, DT_U32, DT_U64, DT_BOOL};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        RUN(test_int_tiles, ints[i]);
    RUN(test_half_tiles, 1);
    RUN(test_half_tiles, 0);
    return check_summary();
}
