/* test_dtype.c - the element types: the dtype table and its parsers, the
 * exact float16/bfloat16 conversions of ptx/half_math.h and their order
 * keys against independent references, the shortest text of a float16 and
 * a bfloat16, and the reader's byte swap of big-endian data. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/format.h"
#include "io/dtype.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "ptx/half_math.h"
#include "ptx/reduce_math.h"

/* The float16 with bits h, from its definition (sign, 5-bit exponent
 * biased by 15, 10-bit fraction; subnormals frac * 2^-24). */
static double ref_f16(unsigned h)
{
    int e = (h >> 10) & 31, f = h & 1023;
    double v = e == 31 ? (f ? NAN : INFINITY) : e == 0 ? ldexp(f, -24) : ldexp(1024 + f, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The bfloat16 with bits h, from its definition (8-bit exponent biased by
 * 127, 7-bit fraction; subnormals frac * 2^-133). */
static double ref_bf16(unsigned h)
{
    int e = (h >> 7) & 255, f = h & 127;
    double v = e == 255 ? (f ? NAN : INFINITY) : e == 0 ? ldexp(f, -133) : ldexp(128 + f, e - 134);
    return (h & 0x8000) ? -v : v;
}

/* Bits of a float. */
static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* The table: sizes, names, descriptors, and the names and descriptors the
 * parsers take, with the byte order they say. */
static void test_table(void)
{
    CHECK(dt_size(DT_F16) == 2 && dt_size(DT_BF16) == 2 && dt_size(DT_BOOL) == 1);
    CHECK(!strcmp(dt_npy_descr(DT_F16), "<f2") && !strcmp(dt_npy_descr(DT_BF16), "<V2") &&
          !strcmp(dt_npy_descr(DT_BOOL), "|b1"));
    CHECK(dt_is_float(DT_F16) && dt_is_float(DT_BF16) && !dt_is_float(DT_BOOL) &&
          !dt_is_float(DT_C64) && !dt_is_signed_int(DT_BOOL));
    static const struct {
        const char *name;
        dt_type t;
        int big;
    } names[] = {
        {"float16", DT_F16, 0},  {"f16", DT_F16, 0},     {"f2", DT_F16, 0},
        {"<f2", DT_F16, 0},      {">f2", DT_F16, 1},     {"bfloat16", DT_BF16, 0},
        {"bf16", DT_BF16, 0},    {"<V2", DT_BF16, 0},    {"|V2", DT_BF16, 0},
        {"V2", DT_BF16, 0},      {">V2", DT_BF16, 1},    {"bool", DT_BOOL, 0},
        {"|b1", DT_BOOL, 0},     {"b1", DT_BOOL, 0},     {">b1", DT_BOOL, 0},
        {">f4", DT_F32, 1},      {"!f8", DT_F64, 1},     {">i8", DT_I64, 1},
        {">u2", DT_U16, 1},      {">i1", DT_I8, 0},      {">c8", DT_C64, 1},
        {"=f4", DT_F32, 0},      {"float32", DT_F32, 0}, {">float32", DT_NONE, 0},
        {">f3", DT_NONE, 0},     {"half", DT_NONE, 0},   {"", DT_NONE, 0},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int big = -1;
        dt_type t = dt_parse(names[i].name, &big);
        CHECKF(t == names[i].t && big == names[i].big, "'%s': %s big %d", names[i].name,
               dt_name(t), big);
        /* dt_from_name takes every name but the big-endian ones */
        if (names[i].name[0] != '>' && names[i].name[0] != '!')
            CHECKF(dt_from_name(names[i].name) == names[i].t, "'%s'", names[i].name);
        else
            CHECK(dt_from_name(names[i].name) == DT_NONE);
    }
    /* units of the byte swap: the element, a complex's part, none for bytes */
    CHECK(dt_swap_unit(DT_F16) == 2 && dt_swap_unit(DT_F64) == 8 && dt_swap_unit(DT_C64) == 4 &&
          dt_swap_unit(DT_C128) == 8 && dt_swap_unit(DT_BOOL) == 0 && dt_swap_unit(DT_U8) == 0);
    for (int t = DT_NONE + 1; t < DT_COUNT; t++)
        CHECK(dt_from_name(dt_name((dt_type)t)) == (dt_type)t &&
              dt_from_name(dt_npy_descr((dt_type)t)) == (dt_type)t);
}

/* Every float16 and bfloat16 bit pattern converts to the float32 of its
 * value; NaNs keep their sign and payload. */
static void test_conversions(void)
{
    int bad16 = 0, badbf = 0;
    for (unsigned h = 0; h < 0x10000u; h++) {
        float f = hf_f16_to_f32(h), g = hf_bf16_to_f32(h);
        double r = ref_f16(h), q = ref_bf16(h);
        if (isnan(r))
            bad16 += !isnan(f) || bits_of(f) >> 31 != h >> 15 || ((bits_of(f) >> 13) & 0x3ff) != (h & 0x3ff) ||
                     !hf_f16_isnan(h);
        else
            bad16 += (double)f != r || !signbit(f) != !signbit(r) || hf_f16_isnan(h);
        if (isnan(q))
            badbf += !isnan(g) || bits_of(g) != (uint32_t)h << 16 || !hf_bf16_isnan(h);
        else
            badbf += (double)g != q || !signbit(g) != !signbit(q) || hf_bf16_isnan(h);
    }
    CHECKF(bad16 == 0, "%d float16 patterns convert wrongly", bad16);
    CHECKF(badbf == 0, "%d bfloat16 patterns convert wrongly", badbf);
    CHECK(hf_f16_to_f32(0x0001) == 0x1p-24f && hf_f16_to_f32(0x03ff) == 0x3ffp-24f &&
          hf_f16_to_f32(0x7bff) == 65504.0f && hf_f16_to_f32(0xfc00) == -INFINITY);
    CHECK(hf_bf16_to_f32(0x0001) == 0x1p-133f && hf_bf16_to_f32(0x3f80) == 1.0f);
}

/* The 16-bit order keys sort every non-NaN value as its float value does,
 * -0 before +0, and give back the bits. */
static void test_keys(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 0x10000u; h++) {
        bad += rd_unkey_h16(rd_key_h16(h)) != h;
        if (hf_f16_isnan(h))
            continue;
        rd_u64 k = rd_key_h16(h);
        bad += k == RD_NAN_MIN_KEY || k == RD_NAN_MAX_KEY;
        /* against a few partners spread over the range */
        for (unsigned o = 1; o < 0x10000u; o += 997) {
            unsigned g = (h + o) & 0xffffu;
            if (hf_f16_isnan(g))
                continue;
            double a = ref_f16(h), b = ref_f16(g);
            int less = a < b || (a == b && signbit(a) && !signbit(b));
            bad += less != (k < rd_key_h16(g));
        }
    }
    CHECKF(bad == 0, "%d key disagreements", bad);
}

/* Nonzero when x rounds (to nearest, ties to even) to the nonzero float16
 * or bfloat16 with bits h, judged from the reference values (ref) of h and
 * its neighbours; maxfin is the largest finite magnitude's bits. */
static int rounds_to(double x, unsigned h, double (*ref)(unsigned), unsigned maxfin)
{
    unsigned mag = h & 0x7fffu;
    double av = fabs(ref(h)), down = fabs(ref(mag - 1));
    double up = mag < maxfin ? fabs(ref(mag + 1)) : 2 * av - down; /* 2^(emax+1) */
    double ax = fabs(x), hi = (av + up) / 2, lo = (av + down) / 2; /* exact */
    if (x == 0 || !signbit(x) != !(h & 0x8000u))
        return 0;
    return (ax < hi && ax > lo) || ((ax == hi || ax == lo) && !(h & 1));
}

/* The text of every finite float16 and bfloat16 is the shortest "%.*g"
 * that reads back to it (a zero: its sign too); spot values. */
static void test_shortest(void)
{
    char buf[64], want[64];
    int bad = 0;
    for (int is_bf = 0; is_bf < 2; is_bf++) {
        double (*ref)(unsigned) = is_bf ? ref_bf16 : ref_f16;
        unsigned maxfin = is_bf ? 0x7f7fu : 0x7bffu;
        for (unsigned h = 0; h < 0x10000u; h++) {
            double v = ref(h);
            if (!isfinite(v))
                continue;
            if (is_bf)
                fmt_bfloat16(buf, sizeof buf, (float)v);
            else
                fmt_float16(buf, sizeof buf, (float)v);
            for (int prec = 1; prec <= 9; prec++) {
                snprintf(want, sizeof want, "%.*g", prec, v);
                double back = strtod(want, NULL);
                if (v == 0 ? back == 0 && !signbit(back) == !signbit(v)
                           : rounds_to(back, h, ref, maxfin))
                    break;
            }
            if (strcmp(buf, want) && bad++ < 5)
                fprintf(stderr, "%s %04x: '%s', want '%s'\n", is_bf ? "bfloat16" : "float16", h,
                        buf, want);
        }
    }
    CHECKF(bad == 0, "%d values without their shortest text", bad);
    fmt_float16(buf, sizeof buf, hf_f16_to_f32(0x2e66)); /* float16(0.1) */
    CHECK(!strcmp(buf, "0.1"));
    fmt_float16(buf, sizeof buf, 65504.0f);
    CHECK(strtod(buf, NULL) == 65500.0);
    fmt_float16(buf, sizeof buf, 0x1p-24f);
    CHECK(!strcmp(buf, "6e-08"));
    fmt_float16(buf, sizeof buf, -0.0f);
    CHECK(!strcmp(buf, "-0"));
    fmt_bfloat16(buf, sizeof buf, hf_bf16_to_f32(0x3dcd)); /* bfloat16(0.1) */
    CHECK(!strcmp(buf, "0.1"));
    fmt_bfloat16(buf, sizeof buf, hf_bf16_to_f32(0x7f80));
    CHECK(!strcmp(buf, "inf"));
}

/* Streams data (with the first `pre` bytes as the prefix) through a ring of
 * chunk-byte buffers that swaps units of `unit` bytes; checks each unit is
 * reversed and a trailing partial unit left as it is. */
static void swap_case(size_t n, size_t pre, size_t chunk, size_t unit)
{
    unsigned char *data = malloc(n + 1), *bufs_mem = malloc(3 * chunk), *got = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)(i * 7 + 1);
    io_reader *r;
    io_status err;
    CHECK(io_reader_open_mem(&r, data + pre, n - pre, &err) == 0);
    void *bufs[3] = {bufs_mem, bufs_mem + chunk, bufs_mem + 2 * chunk};
    pl_ring *pl;
    CHECK(pl_open(&pl, r, bufs, 3, 3, chunk, data, pre, UINT64_MAX, unit) == 0);
    pl_chunk c;
    size_t total = 0;
    while (pl_next(pl, &c) > 0) {
        CHECK(c.offset == total && c.bytes <= chunk);
        memcpy(got + total, c.data, c.bytes);
        total += c.bytes;
        pl_release(pl, c.slot);
    }
    pl_close(pl);
    io_reader_close(r);
    CHECK(total == n);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t u = i / unit * unit, want = u + unit <= n ? u + (unit - 1 - (i - u)) : i;
        bad += got[i] != data[want];
    }
    CHECKF(bad == 0, "n %zu prefix %zu chunk %zu unit %zu: %d bytes wrong", n, pre, chunk, unit,
           bad);
    free(data);
    free(bufs_mem);
    free(got);
}

/* The reader swaps big-endian units across chunks and the prefix, and
 * refuses a swap it cannot do. */
static void test_swap(void)
{
    static const size_t units[] = {2, 4, 8};
    for (size_t u = 0; u < 3; u++) {
        swap_case(1000, 16, 64, units[u]);
        swap_case(1003, 5, 64, units[u]); /* a partial unit at the end */
        swap_case(8, 8, 8, units[u]);
        swap_case(0, 0, 8, units[u]);
        swap_case(4096, 40, 4096, units[u]);
    }
    io_reader *r;
    io_status err;
    static unsigned char bytes[64], mem[3][24];
    void *bufs[3] = {mem[0], mem[1], mem[2]};
    pl_ring *pl = NULL;
    CHECK(io_reader_open_mem(&r, bytes, sizeof bytes, &err) == 0);
    CHECK(pl_open(&pl, r, bufs, 3, 3, 20, NULL, 0, UINT64_MAX, 8) < 0 && !pl); /* 20 % 8 */
    CHECK(pl_open(&pl, r, bufs, 3, 3, 24, NULL, 0, UINT64_MAX, 3) < 0 && !pl);
    io_reader_close(r);
}

int main(void)
{
    test_table();
    test_conversions();
    test_keys();
    test_shortest();
    test_swap();
    return check_summary();
}
