/* test_gen.c - unit tests of the synthetic-data generator (runtime/tools/gen.h).
 *
 * Run with no argument for the checks; `--bench` prints fill speeds
 * instead (build without sanitizers for meaningful numbers). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/tools/gen.h"
#include "check.h"


static const dt_type all_types[] = {DT_F32, DT_F64, DT_I8,  DT_I16, DT_I32, DT_I64,
                                    DT_U8,  DT_U16, DT_U32, DT_U64, DT_C64, DT_C128};
#define NTYPES (sizeof all_types / sizeof all_types[0])

/* Test-side pseudo-random numbers (independent of the library's stream). */
static uint64_t trng_state = 0x0123456789abcdefu;

/* Next test-side random word. */
static uint64_t trng(void)
{
    uint64_t z = (trng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 31)) * 0x7fb5d329728ea185u;
    z = (z ^ (z >> 27)) * 0x81dadef4bc2dd44du;
    return z ^ (z >> 33);
}

/* Test-side uniform double in [0, 1). */
static double trng_unit(void)
{
    return (double)(trng() >> 11) * 0x1p-53;
}

/* Bit pattern of a double. */
static uint64_t bits64(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* Bit pattern of a float. */
static uint32_t bits32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Makes a spec with explicit parameters. */
static gen_spec spec(gen_dist dist, dt_type t, double p1, double p2, uint64_t seed)
{
    gen_spec s;
    s.dist = dist;
    s.dtype = t;
    s.p1 = p1;
    s.p2 = p2;
    s.seed = seed;
    return s;
}

/* Allocates n elements of spec s and fills [first, first+n). */
static void *fill_new(const gen_spec *s, uint64_t first, size_t n)
{
    void *p = malloc(n * dt_size(s->dtype) + 1);
    gen_fill(s, first, n, p);
    return p;
}

/* Checks that one call equals many odd-sized pieces and an offset window. */
static void check_chunks(const gen_spec *s, const char *what)
{
    enum { N = 3001 };
    static const size_t pieces[] = {1, 2, 3, 5, 7, 13, 31, 64, 255, 1, 100, 17};
    size_t es = dt_size(s->dtype);
    unsigned char *whole = fill_new(s, 0, N);
    unsigned char *parts = calloc(N, es);
    size_t at = 0, pi = 0;

    while (at < N) {
        size_t m = pieces[pi++ % (sizeof pieces / sizeof pieces[0])];
        if (m > N - at)
            m = N - at;
        gen_fill(s, at, m, parts + at * es);
        at += m;
    }
    CHECKF(memcmp(whole, parts, N * es) == 0, "%s: pieces differ from one call", what);

    /* A window starting at an odd offset equals the same slice of the whole. */
    unsigned char *win = fill_new(s, 777, 1001);
    CHECKF(memcmp(win, whole + 777 * es, 1001 * es) == 0, "%s: window differs", what);

    /* Far indices work and are chunk-independent too. */
    uint64_t far = (UINT64_C(1) << 40) + 3;
    unsigned char *f1 = fill_new(s, far, 64);
    unsigned char *f2 = malloc(64 * es);
    gen_fill(s, far, 9, f2);
    gen_fill(s, far + 9, 55, f2 + 9 * es);
    CHECKF(memcmp(f1, f2, 64 * es) == 0, "%s: far pieces differ", what);

    /* A zero-length fill writes nothing. */
    unsigned char guard[16];
    memset(guard, 0xa5, sizeof guard);
    gen_fill(s, 5, 0, guard);
    int untouched = 1;
    for (size_t i = 0; i < sizeof guard; i++)
        untouched &= guard[i] == 0xa5;
    CHECKF(untouched, "%s: empty fill wrote", what);

    free(whole);
    free(parts);
    free(win);
    free(f1);
    free(f2);
}

/* Chunk independence for every type and distribution, defaults and more. */
static void test_chunks(void)
{
    char what[96];
    for (size_t t = 0; t < NTYPES; t++) {
        for (int d = 0; d < 2; d++) {
            gen_spec s;
            gen_spec_defaults(&s, d ? GEN_NORMAL : GEN_UNIFORM, all_types[t], 12345);
            snprintf(what, sizeof what, "%s %s", dt_name(all_types[t]), d ? "normal" : "uniform");
            check_chunks(&s, what);
        }
    }
    gen_spec s = spec(GEN_UNIFORM, DT_U64, 0, 0x1p63, 99); /* about half the words rejected */
    check_chunks(&s, "uint64 [0, 2^63]");
    s = spec(GEN_UNIFORM, DT_I64, -0x1p63, 0, 99);
    check_chunks(&s, "int64 [-2^63, 0]");
    s = spec(GEN_UNIFORM, DT_I16, -3, 3, 5);
    check_chunks(&s, "int16 [-3, 3]");
    s = spec(GEN_UNIFORM, DT_F64, -DBL_MAX, DBL_MAX, 5);
    check_chunks(&s, "float64 full range");
    s = spec(GEN_NORMAL, DT_I8, 0.5, 3, 5);
    check_chunks(&s, "int8 normal");
}

/* Defaults are valid and documented; bad specifications are refused. */
static void test_spec(void)
{
    io_status err;
    gen_spec s;

    for (size_t t = 0; t < NTYPES; t++) {
        for (int d = 0; d < 2; d++) {
            gen_spec_defaults(&s, d ? GEN_NORMAL : GEN_UNIFORM, all_types[t], 1);
            err.text[0] = 0;
            CHECKF(gen_spec_check(&s, &err) == 0, "defaults of %s: %s", dt_name(all_types[t]),
                   err.text);
        }
    }
    gen_spec_defaults(&s, GEN_UNIFORM, DT_F32, 3);
    CHECK(s.p1 == 0.0 && s.p2 == 1.0 && s.seed == 3 && s.dtype == DT_F32);
    gen_spec_defaults(&s, GEN_NORMAL, DT_C128, 3);
    CHECK(s.p1 == 0.0 && s.p2 == 1.0 && s.dist == GEN_NORMAL);
    gen_spec_defaults(&s, GEN_UNIFORM, DT_I64, 3);
    CHECK(s.p1 == -0x1p63 && s.p2 == 0x1p63);
    gen_spec_defaults(&s, GEN_UNIFORM, DT_U64, 3);
    CHECK(s.p1 == 0 && s.p2 == 0x1p64);
    gen_spec_defaults(&s, GEN_UNIFORM, DT_I8, 3);
    CHECK(s.p1 == -128 && s.p2 == 127);
    gen_spec_defaults(&s, GEN_NORMAL, DT_U8, 3);
    CHECK(s.p1 == 128 && s.p2 == 32);
    gen_spec_defaults(&s, GEN_NORMAL, DT_I32, 3);
    CHECK(s.p1 == 0 && s.p2 == 0x1p29);

    struct {
        gen_spec s;
        int ok;
    } cases[] = {
        {spec(GEN_UNIFORM, DT_F64, 1, 1, 0), 0},
        {spec(GEN_UNIFORM, DT_F64, 2, 1, 0), 0},
        {spec(GEN_UNIFORM, DT_F64, NAN, 1, 0), 0},
        {spec(GEN_UNIFORM, DT_F64, 0, INFINITY, 0), 0},
        {spec(GEN_UNIFORM, DT_F64, -DBL_MAX, DBL_MAX, 0), 1},
        {spec(GEN_UNIFORM, DT_F32, 0, 1e39, 0), 0},
        {spec(GEN_UNIFORM, DT_F32, 1, 1 + 0x1p-30, 0), 0}, /* empty once rounded */
        {spec(GEN_UNIFORM, DT_F32, -FLT_MAX, FLT_MAX, 0), 1},
        {spec(GEN_UNIFORM, DT_C64, 1, 2, 0), 1},
        {spec(GEN_UNIFORM, DT_U8, 0, 255, 0), 1},
        {spec(GEN_UNIFORM, DT_U8, 0, 256, 0), 0},
        {spec(GEN_UNIFORM, DT_U8, -1, 5, 0), 0},
        {spec(GEN_UNIFORM, DT_I8, -129, 0, 0), 0},
        {spec(GEN_UNIFORM, DT_I8, 5, 5, 0), 1},
        {spec(GEN_UNIFORM, DT_I8, 6, 5, 0), 0},
        {spec(GEN_UNIFORM, DT_I32, 0.5, 5, 0), 0},
        {spec(GEN_UNIFORM, DT_I64, -0x1p63, 0x1p63, 0), 1},
        {spec(GEN_UNIFORM, DT_I64, -0x1p63, 0x1p64, 0), 0},
        {spec(GEN_UNIFORM, DT_U64, 0x1p64, 0x1p64, 0), 1},
        {spec(GEN_UNIFORM, DT_U64, 0, 0x1p65, 0), 0},
        {spec(GEN_NORMAL, DT_F64, 0, -1, 0), 0},
        {spec(GEN_NORMAL, DT_F64, 0, 0, 0), 1},
        {spec(GEN_NORMAL, DT_F64, 0, INFINITY, 0), 0},
        {spec(GEN_NORMAL, DT_F64, 1e300, 1e299, 0), 1},
        {spec(GEN_NORMAL, DT_F64, 0, 1e308, 0), 0},
        {spec(GEN_NORMAL, DT_F32, 3e38, 1e37, 0), 0},
        {spec(GEN_NORMAL, DT_F32, 1e30, 1e29, 0), 1},
        {spec(GEN_NORMAL, DT_U8, 300, 1, 0), 0},
        {spec(GEN_NORMAL, DT_U8, 10, 1e300, 0), 1},
        {spec(GEN_NORMAL, DT_I16, -0.5, 2, 0), 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err.text[0] = 0;
        int rc = gen_spec_check(&cases[i].s, &err);
        CHECKF((rc == 0) == cases[i].ok, "case %zu: rc %d (%s)", i, rc, err.text);
        if (rc != 0)
            CHECKF(rc == IO_ERR_FORMAT && err.code == rc && err.text[0] != 0 &&
                       strchr(err.text, '\n') == NULL,
                   "case %zu: reason '%s'", i, err.text);
    }
    s = spec(GEN_UNIFORM, DT_F64, 2, 1, 0);
    CHECK(gen_spec_check(&s, NULL) == IO_ERR_FORMAT);
    s.dtype = DT_NONE;
    CHECK(gen_spec_check(&s, &err) == IO_ERR_FORMAT && strstr(err.text, "data type"));
    s = spec((gen_dist)7, DT_F64, 0, 1, 0);
    CHECK(gen_spec_check(&s, &err) == IO_ERR_FORMAT && strstr(err.text, "distribution"));
}

/* Different seeds give unrelated streams. */
static void test_seeds(void)
{
    enum { N = 4096, M = 65536 };
    static const uint64_t seeds[][2] = {
        {0, 1}, {1, 2}, {42, 43}, {0, UINT64_C(0x9e3779b97f4a7c15)}, {7, UINT64_C(1) << 63}};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        for (size_t t = 0; t < NTYPES; t++) {
            gen_spec a, b;
            gen_spec_defaults(&a, GEN_UNIFORM, all_types[t], seeds[k][0]);
            gen_spec_defaults(&b, GEN_UNIFORM, all_types[t], seeds[k][1]);
            size_t es = dt_size(all_types[t]);
            unsigned char *x = fill_new(&a, 0, N), *y = fill_new(&b, 0, N);
            size_t same = 0;
            for (size_t i = 0; i < N; i++)
                same += memcmp(x + i * es, y + i * es, es) == 0;
            /* One-byte types agree by chance 1/256 of the time. */
            CHECKF(same < (es == 1 ? N / 64 : 2), "%s seeds %llu/%llu: %zu equal",
                   dt_name(all_types[t]), (unsigned long long)seeds[k][0],
                   (unsigned long long)seeds[k][1], same);
            free(x);
            free(y);
        }
        /* No stream is a shifted copy of another: none of the first N words of
         * seed a occurs among the first M of seed b. */
        gen_spec a = spec(GEN_UNIFORM, DT_U64, 0, 0x1p64, seeds[k][0]);
        gen_spec b = spec(GEN_UNIFORM, DT_U64, 0, 0x1p64, seeds[k][1]);
        uint64_t *x = fill_new(&a, 0, N), *y = fill_new(&b, 0, M);
        size_t hits = 0;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < M; j++)
                hits += x[i] == y[j];
        CHECKF(hits == 0, "seeds %llu/%llu share %zu words", (unsigned long long)seeds[k][0],
               (unsigned long long)seeds[k][1], hits);
        free(x);
        free(y);
    }
    /* The normal and uniform streams of one seed differ from another seed's. */
    gen_spec a = spec(GEN_NORMAL, DT_F64, 0, 1, 5), b = spec(GEN_NORMAL, DT_F64, 0, 1, 6);
    double *x = fill_new(&a, 0, 100), *y = fill_new(&b, 0, 100);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += x[i] == y[i];
    CHECK(same == 0);
    free(x);
    free(y);
}

/* Mean, variance, min and max of n doubles. */
struct stats {
    double mean, var, min, max;
};

/* Computes stats of v[0..n) in two passes. */
static struct stats stats_of(const double *v, size_t n)
{
    struct stats s = {0, 0, v[0], v[0]};
    for (size_t i = 0; i < n; i++) {
        s.mean += v[i];
        s.min = v[i] < s.min ? v[i] : s.min;
        s.max = v[i] > s.max ? v[i] : s.max;
    }
    s.mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        s.var += (v[i] - s.mean) * (v[i] - s.mean);
    s.var /= (double)(n - 1);
    return s;
}

/* Uniform floats: moments and bounds. */
static void test_uniform_floats(void)
{
    enum { N = 1000000 };
    double *d = malloc(N * sizeof *d);
    float *f = malloc(N * sizeof *f);

    gen_spec s = spec(GEN_UNIFORM, DT_F64, 0, 1, 2024);
    gen_fill(&s, 0, N, d);
    struct stats st = stats_of(d, N);
    CHECKF(fabs(st.mean - 0.5) < 2e-3, "mean %g", st.mean);
    CHECKF(fabs(st.var - 1.0 / 12) < 1e-3, "var %g", st.var);
    CHECKF(st.min >= 0 && st.min < 1e-5 && st.max < 1 && st.max > 1 - 1e-5, "min %g max %g",
           st.min, st.max);
    double c = 0; /* lag-1 correlation */
    for (int i = 0; i + 1 < N; i++)
        c += (d[i] - 0.5) * (d[i + 1] - 0.5);
    CHECKF(fabs(c / (N - 1) * 12) < 5e-3, "lag-1 correlation %g", c / (N - 1) * 12);

    s = spec(GEN_UNIFORM, DT_F64, -3, 5, 2024);
    gen_fill(&s, 0, N, d);
    st = stats_of(d, N);
    CHECKF(fabs(st.mean - 1) < 8 * 2e-3, "mean %g", st.mean);
    CHECKF(fabs(st.var - 64.0 / 12) < 64 * 1e-3, "var %g", st.var);
    CHECKF(st.min >= -3 && st.min < -3 + 1e-4 && st.max < 5 && st.max > 5 - 1e-4,
           "min %g max %g", st.min, st.max);

    s = spec(GEN_UNIFORM, DT_F32, 0, 1, 2024);
    gen_fill(&s, 0, N, f);
    int inside = 1;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        inside &= f[i] >= 0.0f && f[i] < 1.0f;
        sum += f[i];
    }
    CHECK(inside);
    CHECKF(fabs(sum / N - 0.5) < 2e-3, "f32 mean %g", sum / N);
    /* float32 is the rounding of the float64 stream (same seed, same words). */
    gen_spec s64 = spec(GEN_UNIFORM, DT_F64, 0, 1, 2024);
    gen_fill(&s64, 0, 1000, d);
    int rounded = 1;
    for (int i = 0; i < 1000; i++)
        rounded &= f[i] == (float)d[i] || (f[i] < 1.0f && (float)d[i] == 1.0f);
    CHECK(rounded);

    /* A range two floats wide: doubles in [1, 1 + 2^-22) round to 1 (a quarter),
     * to 1 + 2^-23 (half) or up to the bound, which is pulled back below it. */
    s = spec(GEN_UNIFORM, DT_F32, 1, 1 + 0x1p-22, 2);
    gen_fill(&s, 0, 100000, f);
    int lo = 0, hi = 0, other = 0;
    for (int i = 0; i < 100000; i++) {
        if (f[i] == 1.0f)
            lo++;
        else if (f[i] == 1.0f + 0x1p-23f)
            hi++;
        else
            other++;
    }
    CHECKF(other == 0 && abs(lo - 25000) < 1000 && abs(hi - 75000) < 1000, "lo %d hi %d other %d", lo,
           hi, other);

    /* A one-double range gives its lower bound. */
    s = spec(GEN_UNIFORM, DT_F64, 1, nextafter(1.0, 2.0), 2);
    gen_fill(&s, 0, 1000, d);
    int ones = 1;
    for (int i = 0; i < 1000; i++)
        ones &= d[i] == 1.0;
    CHECK(ones);

    /* The whole double range: finite, both signs, centred. */
    s = spec(GEN_UNIFORM, DT_F64, -DBL_MAX, DBL_MAX, 2);
    gen_fill(&s, 0, 100000, d);
    int finite = 1, neg = 0;
    double m = 0;
    for (int i = 0; i < 100000; i++) {
        finite &= isfinite(d[i]);
        neg += d[i] < 0;
        m += d[i] / DBL_MAX;
    }
    CHECK(finite);
    CHECKF(abs(neg - 50000) < 1000 && fabs(m / 100000) < 0.01, "neg %d mean %g", neg, m / 1e5);

    /* Complex: both parts in range, uncorrelated. */
    s = spec(GEN_UNIFORM, DT_C128, -1, 1, 77);
    gen_fill(&s, 0, N / 2, d);
    double cr = 0, mr = 0, mi = 0;
    int in = 1;
    for (int i = 0; i < N / 2; i++) {
        in &= d[2 * i] >= -1 && d[2 * i] < 1 && d[2 * i + 1] >= -1 && d[2 * i + 1] < 1;
        mr += d[2 * i];
        mi += d[2 * i + 1];
        cr += d[2 * i] * d[2 * i + 1];
    }
    CHECK(in);
    CHECKF(fabs(mr / (N / 2)) < 5e-3 && fabs(mi / (N / 2)) < 5e-3, "means %g %g", mr, mi);
    CHECKF(fabs(cr / (N / 2) * 3) < 1e-2, "re/im correlation %g", cr / (N / 2) * 3);
    /* complex128 element i is the float64 scalars 2i and 2i+1. */
    gen_spec sc = spec(GEN_UNIFORM, DT_F64, -1, 1, 77);
    double *d2 = fill_new(&sc, 0, 64);
    CHECK(memcmp(d2, d, 64 * sizeof *d) == 0);
    free(d2);

    free(d);
    free(f);
}

/* Normal floats: moments, tails, and the +-1/2/3 sd fractions. */
static void check_normal(const double *v, size_t n, double mean, double sd, const char *what)
{
    double m = 0, m2 = 0, m3 = 0, m4 = 0, zmax = 0;
    size_t w1 = 0, w2 = 0, w3 = 0;
    for (size_t i = 0; i < n; i++) {
        double z = (v[i] - mean) / sd;
        m += z;
        m2 += z * z;
        m3 += z * z * z;
        m4 += z * z * z * z;
        w1 += fabs(z) < 1;
        w2 += fabs(z) < 2;
        w3 += fabs(z) < 3;
        zmax = fabs(z) > zmax ? fabs(z) : zmax;
    }
    double dn = (double)n;
    m /= dn;
    double sdz = sqrt(m2 / dn - m * m);
    CHECKF(fabs(m) < 6 / sqrt(dn), "%s: mean %g sd", what, m);
    CHECKF(fabs(sdz - 1) < 6 / sqrt(2 * dn), "%s: sd ratio %g", what, sdz);
    CHECKF(fabs(m3 / dn) < 20 / sqrt(dn), "%s: skew %g", what, m3 / dn);
    CHECKF(fabs(m4 / dn - 3) < 60 / sqrt(dn), "%s: kurtosis %g", what, m4 / dn);
    CHECKF(fabs(w1 / dn - 0.682689) < 6 * 0.466 / sqrt(dn), "%s: within 1 sd %g", what, w1 / dn);
    CHECKF(fabs(w2 / dn - 0.954500) < 6 * 0.209 / sqrt(dn), "%s: within 2 sd %g", what, w2 / dn);
    CHECKF(fabs(w3 / dn - 0.997300) < 6 * 0.052 / sqrt(dn), "%s: within 3 sd %g", what, w3 / dn);
    CHECKF(zmax > 4 && zmax < 8.58, "%s: max |z| %g", what, zmax);
}

/* Normal deviates in every float layout. */
static void test_normal_floats(void)
{
    enum { N = 1000000 };
    double *d = malloc(N * sizeof *d);
    float *f = malloc(N * sizeof *f);

    gen_spec s = spec(GEN_NORMAL, DT_F64, 0, 1, 31337);
    gen_fill(&s, 0, N, d);
    check_normal(d, N, 0, 1, "float64 N(0,1)");
    double c = 0; /* the two halves of a Box-Muller pair are uncorrelated */
    for (int i = 0; i < N; i += 2)
        c += d[i] * d[i + 1];
    CHECKF(fabs(c / (N / 2)) < 6 / sqrt(N / 2.0), "pair correlation %g", c / (N / 2));

    s = spec(GEN_NORMAL, DT_F32, 10, 3, 31337);
    gen_fill(&s, 0, N, f);
    for (int i = 0; i < N; i++)
        d[i] = f[i];
    check_normal(d, N, 10, 3, "float32 N(10,3)");

    s = spec(GEN_NORMAL, DT_C64, -2, 0.5, 8);
    gen_fill(&s, 0, N / 2, f);
    double *re = malloc(N / 2 * sizeof *re), *im = malloc(N / 2 * sizeof *im);
    double cr = 0;
    for (int i = 0; i < N / 2; i++) {
        re[i] = f[2 * i];
        im[i] = f[2 * i + 1];
        cr += (re[i] + 2) * (im[i] + 2) / 0.25;
    }
    check_normal(re, N / 2, -2, 0.5, "complex64 real");
    check_normal(im, N / 2, -2, 0.5, "complex64 imag");
    CHECKF(fabs(cr / (N / 2)) < 6 / sqrt(N / 2.0), "re/im correlation %g", cr / (N / 2));
    free(re);
    free(im);

    /* sd 0 gives the mean exactly. */
    s = spec(GEN_NORMAL, DT_F64, 3.25, 0, 8);
    gen_fill(&s, 0, 1000, d);
    int exact = 1;
    for (int i = 0; i < 1000; i++)
        exact &= d[i] == 3.25;
    CHECK(exact);
    free(d);
    free(f);
}

/* Reads element i of an integer array as int64 (signed) or uint64. */
static int64_t get_i(const void *p, dt_type t, size_t i)
{
    switch (t) {
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_I16: return ((const int16_t *)p)[i];
    case DT_I32: return ((const int32_t *)p)[i];
    case DT_I64: return ((const int64_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    case DT_U16: return ((const uint16_t *)p)[i];
    case DT_U32: return ((const uint32_t *)p)[i];
    default: return (int64_t)((const uint64_t *)p)[i];
    }
}

/* Chi-square statistic of n draws from [lo, lo + k) against uniform. */
static double chi_square(const void *p, dt_type t, size_t n, int64_t lo, size_t k)
{
    size_t *cnt = calloc(k, sizeof *cnt);
    size_t outside = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = get_i(p, t, i) - lo;
        if (v < 0 || (uint64_t)v >= k)
            outside++;
        else
            cnt[v]++;
    }
    double e = (double)n / (double)k, x = outside ? 1e300 : 0;
    for (size_t i = 0; i < k; i++)
        x += (cnt[i] - e) * (cnt[i] - e) / e;
    free(cnt);
    return x;
}

/* Uniform integers: full ranges, tiny ranges, rejection-heavy ranges. */
static void test_uniform_ints(void)
{
    enum { N = 1000000 };
    void *buf = malloc(N * 8);
    gen_spec s;
    double x;

    static const dt_type small[] = {DT_I8, DT_U8, DT_I16, DT_U16};
    for (size_t t = 0; t < 4; t++) {
        gen_spec_defaults(&s, GEN_UNIFORM, small[t], 4);
        gen_fill(&s, 0, N, buf);
        size_t k = small[t] == DT_I8 || small[t] == DT_U8 ? 256 : 65536;
        x = chi_square(buf, small[t], N, (int64_t)s.p1, k);
        CHECKF(x < (double)k + 6 * sqrt(2.0 * (double)k), "%s full range chi2 %g (dof %zu)",
               dt_name(small[t]), x, k - 1);
    }

    s = spec(GEN_UNIFORM, DT_I32, 5, 5, 4);
    gen_fill(&s, 0, 1000, buf);
    int fives = 1;
    for (int i = 0; i < 1000; i++)
        fives &= ((int32_t *)buf)[i] == 5;
    CHECK(fives);

    s = spec(GEN_UNIFORM, DT_I8, -1, 0, 4);
    gen_fill(&s, 0, N, buf);
    x = chi_square(buf, DT_I8, N, -1, 2);
    CHECKF(x < 2 + 6 * 2, "int8 [-1,0] chi2 %g", x);

    s = spec(GEN_UNIFORM, DT_U8, 0, 2, 4);
    gen_fill(&s, 0, N, buf);
    x = chi_square(buf, DT_U8, N, 0, 3);
    CHECKF(x < 3 + 6 * 2.5, "uint8 [0,2] chi2 %g", x);

    s = spec(GEN_UNIFORM, DT_I64, -3, 3, 4);
    gen_fill(&s, 0, N, buf);
    x = chi_square(buf, DT_I64, N, -3, 7);
    CHECKF(x < 7 + 6 * 4, "int64 [-3,3] chi2 %g", x);

    s = spec(GEN_UNIFORM, DT_U64, 0x1p64, 0x1p64, 4);
    gen_fill(&s, 0, 100, buf);
    int maxed = 1;
    for (int i = 0; i < 100; i++)
        maxed &= ((uint64_t *)buf)[i] == UINT64_MAX;
    CHECK(maxed);

    /* Full 64-bit ranges: extremes reached, top bit and every byte uniform. */
    for (int sgn = 0; sgn < 2; sgn++) {
        dt_type t = sgn ? DT_I64 : DT_U64;
        gen_spec_defaults(&s, GEN_UNIFORM, t, 4);
        gen_fill(&s, 0, N, buf);
        const uint64_t *u = buf;
        size_t top = 0, near_lo = 0, near_hi = 0, bytecnt[8][256] = {{0}};
        for (int i = 0; i < N; i++) {
            uint64_t v = sgn ? u[i] ^ (UINT64_C(1) << 63) : u[i]; /* offset from the minimum */
            top += v >> 63;
            near_lo += v < (UINT64_C(1) << 58);
            near_hi += v >= UINT64_MAX - (UINT64_C(1) << 58);
            for (int b = 0; b < 8; b++)
                bytecnt[b][(v >> (8 * b)) & 255]++;
        }
        CHECKF(fabs(top / (double)N - 0.5) < 3e-3, "%s top bit %g", dt_name(t), top / (double)N);
        CHECKF(near_lo > N / 64 * 0.9 && near_hi > N / 64 * 0.9, "%s extremes %zu %zu",
               dt_name(t), near_lo, near_hi);
        double worst = 0;
        for (int b = 0; b < 8; b++) {
            double xb = 0, e = N / 256.0;
            for (int v = 0; v < 256; v++)
                xb += (bytecnt[b][v] - e) * (bytecnt[b][v] - e) / e;
            worst = xb > worst ? xb : worst;
        }
        CHECKF(worst < 256 + 7 * sqrt(512.0), "%s byte chi2 %g", dt_name(t), worst);
    }

    /* [0, 2^63]: 2^63 + 1 values, nearly half of the candidates rejected. */
    s = spec(GEN_UNIFORM, DT_U64, 0, 0x1p63, 4);
    gen_fill(&s, 0, N, buf);
    const uint64_t *u = buf;
    int inr = 1;
    double mean = 0;
    size_t upper = 0;
    for (int i = 0; i < N; i++) {
        inr &= u[i] <= (UINT64_C(1) << 63);
        mean += (double)u[i];
        upper += u[i] >= (UINT64_C(1) << 62);
    }
    CHECK(inr);
    CHECKF(fabs(mean / N / 0x1p62 - 1) < 5e-3, "mean/2^62 %g", mean / N / 0x1p62);
    CHECKF(fabs(upper / (double)N - 0.5) < 3e-3, "upper half %g", upper / (double)N);

    /* [-2^63, 0] in int64, and [0, 3 * 2^62] split in thirds. */
    s = spec(GEN_UNIFORM, DT_I64, -0x1p63, 0, 4);
    gen_fill(&s, 0, N, buf);
    int nonpos = 1;
    for (int i = 0; i < N; i++)
        nonpos &= ((int64_t *)buf)[i] <= 0;
    CHECK(nonpos);
    s = spec(GEN_UNIFORM, DT_U64, 0, 0x3p62, 4);
    gen_fill(&s, 0, N, buf);
    size_t third[3] = {0, 0, 0};
    for (int i = 0; i < N; i++)
        third[u[i] >> 62 < 3 ? u[i] >> 62 : 2]++;
    CHECKF(u[0] <= 0x3p62 && fabs(third[0] / (double)N - 1 / 3.0) < 3e-3 &&
               fabs(third[1] / (double)N - 1 / 3.0) < 3e-3,
           "thirds %zu %zu %zu", third[0], third[1], third[2]);
    free(buf);
}

/* Normal integers: rounding halves away from zero and clamping. */
static void test_normal_ints(void)
{
    enum { N = 1000000 };
    void *buf = malloc(N * 8);
    double *d = malloc(N * sizeof *d);

    gen_spec s = spec(GEN_NORMAL, DT_I16, 100, 15, 9);
    gen_fill(&s, 0, N, buf);
    for (int i = 0; i < N; i++)
        d[i] = ((int16_t *)buf)[i];
    struct stats st = stats_of(d, N);
    CHECKF(fabs(st.mean - 100) < 0.1, "mean %g", st.mean);
    CHECKF(fabs(sqrt(st.var) - sqrt(225 + 1 / 12.0)) < 0.1, "sd %g", sqrt(st.var));

    s = spec(GEN_NORMAL, DT_U8, 0, 10, 9);
    gen_fill(&s, 0, N, buf);
    size_t zeros = 0;
    for (int i = 0; i < N; i++)
        zeros += ((uint8_t *)buf)[i] == 0;
    CHECKF(fabs(zeros / (double)N - 0.519939) < 3e-3, "zeros %g", zeros / (double)N);

    static const struct {
        dt_type t;
        double mean;
        int64_t want;
    } rnd[] = {
        {DT_I8, 0.5, 1},      {DT_I8, -0.5, -1},  {DT_I8, 2.5, 3},   {DT_I8, -2.5, -3},
        {DT_I8, 2.4999, 2},   {DT_I8, -127.5, -128}, {DT_I8, 127, 127}, {DT_U8, 0.5, 1},
        {DT_U8, 254.5, 255},  {DT_I32, -7.5, -8}, {DT_I64, 1e18, 1000000000000000000},
        {DT_U64, 0x1p63, INT64_MIN},
    };
    for (size_t k = 0; k < sizeof rnd / sizeof rnd[0]; k++) {
        s = spec(GEN_NORMAL, rnd[k].t, rnd[k].mean, 0, 9);
        gen_fill(&s, 0, 10, buf);
        int ok = 1;
        for (int i = 0; i < 10; i++)
            ok &= get_i(buf, rnd[k].t, (size_t)i) == rnd[k].want;
        CHECKF(ok, "%s mean %g gives %lld", dt_name(rnd[k].t), rnd[k].mean,
               (long long)get_i(buf, rnd[k].t, 0));
    }

    /* Huge sd clamps to the limits, both reached about half the time. */
    s = spec(GEN_NORMAL, DT_I64, 0, 1e30, 9);
    gen_fill(&s, 0, 100000, buf);
    size_t lo = 0, hi = 0;
    for (int i = 0; i < 100000; i++) {
        lo += ((int64_t *)buf)[i] == INT64_MIN;
        hi += ((int64_t *)buf)[i] == INT64_MAX;
    }
    CHECKF(lo + hi == 100000 && lo > 49000 && hi > 49000, "int64 clamps %zu %zu", lo, hi);
    s = spec(GEN_NORMAL, DT_U64, 0x1p63, 0x1p70, 9);
    gen_fill(&s, 0, 100000, buf);
    lo = hi = 0;
    for (int i = 0; i < 100000; i++) {
        lo += ((uint64_t *)buf)[i] == 0;
        hi += ((uint64_t *)buf)[i] == UINT64_MAX;
    }
    CHECKF(lo > 49000 && hi > 49000, "uint64 clamps %zu %zu", lo, hi);

    /* Defaults for int8 fill the type with few clamps. */
    gen_spec_defaults(&s, GEN_NORMAL, DT_I8, 9);
    gen_fill(&s, 0, N, buf);
    for (int i = 0; i < N; i++)
        d[i] = ((int8_t *)buf)[i];
    st = stats_of(d, N);
    CHECKF(fabs(st.mean) < 0.2 && fabs(sqrt(st.var) - 32) < 0.3 && st.min == -128 && st.max == 127,
           "int8 default mean %g sd %g", st.mean, sqrt(st.var));
    free(buf);
    free(d);
}

/* gen_log and gen_sincos_turn against libm. */
static void test_math(void)
{
    enum { N = 1000000 };
    double worst = 0;
    int bad = 0;

    for (int i = 0; i < N; i++) {
        double x;
        switch (i % 4) {
        case 0: /* anywhere in the positive doubles, subnormals included */
            x = ldexp(1 + trng_unit(), (int)(trng() % 2098) - 1074);
            break;
        case 1: /* near 1 */
            x = 1 + (trng_unit() - 0.5) * ldexp(1, -(int)(trng() % 50));
            break;
        case 2: /* the Box-Muller range */
            x = (double)((trng() >> 11) + 1) * 0x1p-53;
            break;
        default: /* near sqrt(2) and sqrt(1/2), the reduction's edges */
            x = ldexp(M_SQRT2 * (1 + (trng_unit() - 0.5) * 1e-6), (int)(trng() % 20) - 10);
            break;
        }
        if (!(x > 0) || !isfinite(x))
            continue;
        double g = gen_log(x), l = log(x);
        double err = l == 0 ? fabs(g) : fabs(g - l) / fabs(l);
        worst = err > worst ? err : worst;
        bad += !(err <= 1e-14);
    }
    CHECKF(bad == 0, "gen_log: %d points off, worst relative %g", bad, worst);
    printf("gen_log: worst relative error %.3g over %d points\n", worst, N);
    CHECK(gen_log(1.0) == 0.0);
    CHECK(fabs(gen_log(2.0) - M_LN2) <= 1e-16);
    CHECK(fabs(gen_log(0x1p-1074) / -744.44007192138126 - 1) < 1e-15);
    CHECK(fabs(gen_log(DBL_MAX) / 709.78271289338397 - 1) < 1e-15);
    CHECK(gen_log(0.0) == -INFINITY && gen_log(-0.0) == -INFINITY);
    CHECK(isnan(gen_log(-1.0)) && isnan(gen_log(NAN)));
    CHECK(gen_log(INFINITY) == INFINITY);

    double ws = 0, wz = 0;
    bad = 0;
    for (int i = 0; i < N; i++) {
        double u = trng_unit(), s, c;
        if (i % 8 == 0) /* tiny angles */
            u = ldexp(trng_unit(), -(int)(trng() % 60));
        gen_sincos_turn(u, &s, &c);
        double ls = sin(2 * M_PI * u), lc = cos(2 * M_PI * u);
        /* libm's argument 2*M_PI*u carries an absolute error up to ~1e-15. */
        double es = fabs(s - ls), ec = fabs(c - lc);
        bad += !(es <= 1e-14 * fabs(ls) + 2e-15) + !(ec <= 1e-14 * fabs(lc) + 2e-15);
        ws = es > ws ? es : ws;
        ws = ec > ws ? ec : ws;
        double one = s * s + c * c - 1;
        wz = fabs(one) > wz ? fabs(one) : wz;
        /* Near a zero of cos the reduction stays relatively accurate: cos(2 pi (1/4 + t))
         * = -sin(2 pi t), where libm's argument is exact enough. */
        double t = ldexp(trng_unit(), -(int)(trng() % 40) - 4);
        gen_sincos_turn(0.25 + t, &s, &c);
        double want = -sin(2 * M_PI * (0.25 + t - 0.25));
        bad += !(fabs(c - want) <= 1e-14 * fabs(want));
    }
    CHECKF(bad == 0, "gen_sincos_turn: %d points off, worst absolute %g", bad, ws);
    CHECKF(wz < 1e-15, "sin^2 + cos^2 - 1 up to %g", wz);
    printf("gen_sincos_turn: worst absolute error %.3g, |sin^2+cos^2-1| <= %.3g\n", ws, wz);

    static const struct {
        double u, s, c;
    } quarter[] = {{0, 0, 1}, {0.25, 1, 0}, {0.5, 0, -1}, {0.75, -1, 0}};
    for (int i = 0; i < 4; i++) {
        double s, c;
        gen_sincos_turn(quarter[i].u, &s, &c);
        CHECKF(s == quarter[i].s && c == quarter[i].c, "u %g: %g %g", quarter[i].u, s, c);
    }
    double s, c;
    gen_sincos_turn(0.125, &s, &c);
    CHECK(fabs(s - M_SQRT1_2) <= 2e-16 && fabs(c - M_SQRT1_2) <= 2e-16);
}

/* FNV-1a hash of n bytes. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h;
}

/* Golden outputs. These pin the format: the bytes of users' generated data
 * depend on them, so a change here breaks the reproducibility of every array
 * generated before it. Never update them to make a change pass. */
static void test_golden(void)
{
    static const uint64_t u64_f64[] = {
        0x3fce0658d0dd3c04u, 0x3fe6aa4efdf4a2b0u, 0x3fda920a46133e5au, 0x3fe888f6c800689cu
    };
    static const uint32_t u32_f32[] = {
        0xbf07e69du, 0x3ed549e0u, 0xbe2dbeb7u, 0x3f088f6du
    };
    static const uint64_t n_f64[] = {
        0x3fcf78aa0c893709u, 0xbfefac165365f45eu, 0xc004066723fe62d8u, 0x40048067c02491afu
    };
    static const uint32_t n_c64[] = {
        0x3fbef154u, 0xbf7ac165u, 0xc0803339u, 0x40c4033eu
    };
    static const int32_t i32[] = {
        -531, 417, -170, 534, 36, 624, 67, -147
    };
    static const uint64_t u64[] = {
        0x3c0cb1a1ba780cadu, 0xb55277efa51587deu, 0x6a4829184cf96e09u, 0xc447b6400344e6f9u
    };
    static const uint64_t u64r[] = {
        0x1e0658d0dd3c0656u, 0x5aa93bf7d28ac3efu, 0x3524148c267cb704u, 0x1025af69acfaf2eeu,
        0x3482726247752ac0u, 0x67ecd691c688a526u, 0x3757c9b362e8c7c8u, 0x369a716efaf161aeu
    };
    static const int16_t i16n[] = {
        -1552, -5785, 890, -8438, 3753, -9156, -9061, 4504
    };
    static const uint64_t far[] = {
        0x3fe803116895f1efu, 0x3facaa7143d1a870u
    };
    static const uint64_t q64[] = {
        0xbf70914be9f470c2u, 0x8000000000000000u, 0x3f77bb90429cd7fcu, 0x3feec219143d7e27u,
        0xc1ca74fe4c882f7cu, 0xbfdad2f751b67a39u, 0x3fd98013dc652cf3u, 0x401e59ffa76e7fbdu,
        0x403d2423eae0e181u, 0x3db6f829e7b72443u, 0xedf8df4189ad9219u, 0x324113a2c2765c2bu,
        0x35e490dac1fedf9fu, 0xf27c079fec06ccd3u, 0x65565a12dba4024du, 0x3d1b2eb18a188e0eu,
        0xe7d369fb4d06ab53u, 0xb95752e0c35d85e5u, 0x4000c80fbb723676u, 0x4299ae5630794435u,
        0x3fe19b213caabde7u, 0x3fc139529356594fu, 0x4215566bf73b5c81u, 0xc030b45c022951bbu
    };
    static const uint32_t q32[] = {
        0xbb848a5fu, 0x80000000u, 0x3bbddc82u, 0x3f7610c8u, 0xc6d3a7f2u, 0xbed697bau,
        0x3ecc009eu, 0x40f2cffcu, 0x41e9211eu, 0x3d37c14fu, 0xedc6fa0cu, 0x32889d16u
    };
    double d[24];
    float f[12];
    int32_t i[8];
    uint64_t u[8];
    int16_t h[8];
    gen_spec s;

    s = spec(GEN_UNIFORM, DT_F64, 0, 1, 42);
    gen_fill(&s, 0, 4, d);
    for (int k = 0; k < 4; k++)
        CHECKF(bits64(d[k]) == u64_f64[k], "f64 uniform %d: 0x%016llx", k,
               (unsigned long long)bits64(d[k]));
    gen_fill(&s, (UINT64_C(1) << 40) + 3, 2, d);
    for (int k = 0; k < 2; k++)
        CHECKF(bits64(d[k]) == far[k], "f64 far %d: 0x%016llx", k,
               (unsigned long long)bits64(d[k]));
    s = spec(GEN_UNIFORM, DT_F32, -1, 1, 42);
    gen_fill(&s, 0, 4, f);
    for (int k = 0; k < 4; k++)
        CHECKF(bits32(f[k]) == u32_f32[k], "f32 uniform %d: 0x%08lx", k,
               (unsigned long)bits32(f[k]));
    s = spec(GEN_NORMAL, DT_F64, 0, 1, 7);
    gen_fill(&s, 0, 4, d);
    for (int k = 0; k < 4; k++)
        CHECKF(bits64(d[k]) == n_f64[k], "f64 normal %d: 0x%016llx", k,
               (unsigned long long)bits64(d[k]));
    s = spec(GEN_NORMAL, DT_C64, 1, 2, 7);
    gen_fill(&s, 0, 2, f);
    for (int k = 0; k < 4; k++)
        CHECKF(bits32(f[k]) == n_c64[k], "c64 normal %d: 0x%08lx", k,
               (unsigned long)bits32(f[k]));
    s = spec(GEN_UNIFORM, DT_I32, -1000, 1000, 42);
    gen_fill(&s, 0, 8, i);
    for (int k = 0; k < 8; k++)
        CHECKF(i[k] == i32[k], "i32 %d: %ld", k, (long)i[k]);
    gen_spec_defaults(&s, GEN_UNIFORM, DT_U64, 42);
    gen_fill(&s, 0, 4, u);
    for (int k = 0; k < 4; k++)
        CHECKF(u[k] == u64[k], "u64 %d: 0x%016llx", k, (unsigned long long)u[k]);
    s = spec(GEN_UNIFORM, DT_U64, 0, 0x1p63, 42);
    gen_fill(&s, 0, 8, u);
    for (int k = 0; k < 8; k++)
        CHECKF(u[k] == u64r[k], "u64 half %d: 0x%016llx", k, (unsigned long long)u[k]);
    gen_spec_defaults(&s, GEN_NORMAL, DT_I16, 42);
    gen_fill(&s, 0, 8, h);
    for (int k = 0; k < 8; k++)
        CHECKF(h[k] == i16n[k], "i16 normal %d: %d", k, h[k]);
    gen_quadratic_fill(1, DT_F64, 0, 8, d);
    for (int k = 0; k < 24; k++)
        CHECKF(bits64(d[k]) == q64[k], "quad f64 %d: 0x%016llx", k,
               (unsigned long long)bits64(d[k]));
    gen_quadratic_fill(1, DT_F32, 0, 4, f);
    for (int k = 0; k < 12; k++)
        CHECKF(bits32(f[k]) == q32[k], "quad f32 %d: 0x%08lx", k, (unsigned long)bits32(f[k]));

    /* FNV-1a of elements [1, 4100) of every type and distribution (defaults,
     * seed 2026), then of quadratic rows [1, 4100) in float32 and float64. */
    static const uint64_t hashes[26] = {
        0x0181190e5693625au, 0x133fb9ce49a02cb4u, 0x7569237be0ecf7f8u, 0x21b13dc8db989741u,
        0xd4f2a40eb26d54d9u, 0x2365412e5e0bcb69u, 0x03ba2463d1bee355u, 0xce4f71fdddac6398u,
        0x4197bfe001779661u, 0x5a6a5ef3c007ab3cu, 0x8795c95284017c60u, 0x747eb00077b79e64u,
        0xb334aba0a5fe0159u, 0x58ce8940c29688e9u, 0x258a69ab7fcdced5u, 0x1cd63f82338b5118u,
        0x4ca4b412b55e97e1u, 0xa885b21d5999a6bcu, 0x7bc3e7396e5ce7e0u, 0x17f288230b888ba1u,
        0x2c373683931e3e92u, 0xfe25498c62e071c0u, 0x20b943b0f665234du, 0x61bb7ee69c88eaa5u,
        0x30517d65443bb686u, 0xc93da83e387ff77cu
    };
    unsigned char *buf = malloc(4099 * 24);
    int hk = 0;
    for (size_t t = 0; t < NTYPES; t++) {
        for (int dd = 0; dd < 2; dd++, hk++) {
            gen_spec_defaults(&s, dd ? GEN_NORMAL : GEN_UNIFORM, all_types[t], 2026);
            gen_fill(&s, 1, 4099, buf);
            uint64_t hv = fnv1a(buf, 4099 * dt_size(all_types[t]));
            CHECKF(hv == hashes[hk], "%s %s: hash 0x%016llx", dt_name(all_types[t]),
                   dd ? "normal" : "uniform", (unsigned long long)hv);
        }
    }
    gen_quadratic_fill(2026, DT_F32, 1, 4099, buf);
    CHECK(fnv1a(buf, 4099 * 12) == hashes[24]);
    gen_quadratic_fill(2026, DT_F64, 1, 4099, buf);
    CHECK(fnv1a(buf, 4099 * 24) == hashes[25]);
    free(buf);
}

/* b^2 - 4ac with one rounding at the end (products split by fma). */
static double disc_of(double a, double b, double c)
{
    double p = b * b, dp = fma(b, b, -p);
    double q = 4 * a * c, dq = fma(4 * a, c, -q);
    return (p - q) + (dp - dq);
}

/* Properties of each kind of quadratic row, for one output type. */
static void check_quadratic(dt_type t)
{
    enum { N = 1 << 18 };
    const int is32 = t == DT_F32;
    const int P = is32 ? 24 : 53, EMAX = is32 ? 127 : 1023;
    const double big = is32 ? FLT_MAX : DBL_MAX, tiny = is32 ? FLT_MIN : DBL_MIN;
    const char *tn = dt_name(t);
    void *buf = malloc((size_t)N * 3 * dt_size(t));
    size_t cnt[GEN_QUAD_KINDS] = {0}, bad[GEN_QUAD_KINDS] = {0};
    size_t nonfinite = 0, kind_mismatch = 0, exact0 = 0, neg_disc = 0, ovf = 0, zeros = 0;
    size_t negzeros = 0, subnormal = 0, wide_pos_exp = 0, wide_vals = 0;
    int wide_emin = 99999, wide_emax = -99999;

    gen_quadratic_fill(2718, t, 0, N, buf);
    for (size_t r = 0; r < N; r++) {
        double a, b, c;
        if (is32) {
            const float *f = buf;
            a = f[3 * r];
            b = f[3 * r + 1];
            c = f[3 * r + 2];
        } else {
            const double *f = buf;
            a = f[3 * r];
            b = f[3 * r + 1];
            c = f[3 * r + 2];
        }
        gen_quad_kind k = gen_quadratic_kind(2718, r);
        cnt[k]++;
        if (!isfinite(a) || !isfinite(b) || !isfinite(c))
            nonfinite++;
        double v3[3] = {a, b, c};
        for (int i = 0; i < 3; i++) {
            if (v3[i] == 0) {
                zeros++;
                negzeros += signbit(v3[i]) != 0;
            }
        }
        int ok = 1;
        switch (k) {
        case GEN_QUAD_ORDINARY: {
            double dd = disc_of(a, b, c);
            double scale = fmax(b * b, fabs(4 * a * c));
            ok = a != 0 && dd > 1e-4 * scale;
            break;
        }
        case GEN_QUAD_WIDE:
            ok = a != 0 && b != 0 && c != 0;
            for (int i = 0; i < 3; i++) {
                int e;
                frexp(v3[i], &e);
                e -= 1; /* exponent of the leading bit */
                wide_emin = e < wide_emin ? e : wide_emin;
                wide_emax = e > wide_emax ? e : wide_emax;
                wide_pos_exp += e >= 0;
                wide_vals++;
                subnormal += fabs(v3[i]) < tiny;
            }
            break;
        case GEN_QUAD_NEAR_DOUBLE: {
            double dd = disc_of(a, b, c);
            ok = a != 0 && b != 0 && c != 0 && fabs(dd) <= 0x1p-20 * b * b;
            exact0 += dd == 0;
            neg_disc += dd < 0;
            break;
        }
        case GEN_QUAD_HUGE_B: {
            double ratio = fabs(b) / (2 * sqrt(fabs(a)) * sqrt(fabs(c)));
            ok = a != 0 && c != 0 && ratio >= ldexp(1, P / 2 - 4);
            if (fabs(b) >= ldexp(1, EMAX / 2 + 1)) {
                ovf++;
                ok &= fabs(a) < 1 && fabs(c) < 1 && b * b > big; /* b^2 overflows the type */
                ok &= fabs(b / a) < big / 2 && fabs(c / b) >= tiny;
            }
            break;
        }
        case GEN_QUAD_COMPLEX: {
            double dd = disc_of(a, b, c);
            ok = a != 0 && dd < 0 && -dd >= fabs(4 * a * c) / 100;
            break;
        }
        case GEN_QUAD_A_ZERO: ok = a == 0 && b != 0 && c != 0; break;
        case GEN_QUAD_AB_ZERO: ok = a == 0 && b == 0 && c != 0; break;
        case GEN_QUAD_C_ZERO: ok = a != 0 && b != 0 && c == 0; break;
        case GEN_QUAD_B_ZERO: ok = a != 0 && b == 0 && c != 0; break;
        case GEN_QUAD_ALL_ZERO: ok = a == 0 && b == 0 && c == 0; break;
        default: kind_mismatch++; break;
        }
        bad[k] += !ok;
    }
    CHECKF(nonfinite == 0, "%s: %zu rows not finite", tn, nonfinite);
    CHECK(kind_mismatch == 0);
    unsigned total = 0;
    for (int k = 0; k < GEN_QUAD_KINDS; k++) {
        double p = gen_quadratic_share((gen_quad_kind)k) / 64.0;
        double got = cnt[k] / (double)N;
        total += gen_quadratic_share((gen_quad_kind)k);
        CHECKF(fabs(got - p) < 6 * sqrt(p * (1 - p) / N), "%s %s: share %g, want %g", tn,
               gen_quadratic_kind_name((gen_quad_kind)k), got, p);
        CHECKF(bad[k] == 0, "%s %s: %zu of %zu rows lack the kind's property", tn,
               gen_quadratic_kind_name((gen_quad_kind)k), bad[k], cnt[k]);
    }
    CHECK(total == 64);
    /* Near-double rows: 1/4 exact double roots, about 1/4 complex. */
    size_t nd = cnt[GEN_QUAD_NEAR_DOUBLE];
    CHECKF(exact0 > nd / 5 && neg_disc > nd / 5, "%s near-double: %zu exact, %zu negative of %zu",
           tn, exact0, neg_disc, nd);
    CHECKF(fabs(ovf / (double)cnt[GEN_QUAD_HUGE_B] - 0.5) < 0.02, "%s huge-b overflow share %g", tn,
           ovf / (double)cnt[GEN_QUAD_HUGE_B]);
    /* Wide rows span the whole exponent range, subnormals included. */
    int etiny = is32 ? -149 : -1074;
    CHECKF(wide_emin <= etiny + 2 && wide_emax >= EMAX - 1, "%s wide exponents [%d, %d]", tn,
           wide_emin, wide_emax);
    double want_pos = (EMAX + 1.0) / (EMAX - etiny + 1.0);
    CHECKF(fabs(wide_pos_exp / (double)wide_vals - want_pos) < 0.01 && subnormal > 0,
           "%s wide: %g with exponent >= 0, %zu subnormal", tn, wide_pos_exp / (double)wide_vals,
           subnormal);
    CHECKF(negzeros > zeros / 3 && negzeros < zeros * 2 / 3, "%s: %zu of %zu zeros negative", tn,
           negzeros, zeros);

    /* Chunk independence and agreement of the kind with the rows. */
    void *part = malloc(1000 * 3 * dt_size(t));
    size_t at = 0, m = 1;
    while (at < 1000) {
        size_t n = m < 1000 - at ? m : 1000 - at;
        gen_quadratic_fill(2718, t, at, n, (char *)part + at * 3 * dt_size(t));
        at += n;
        m = m * 3 % 37 + 1;
    }
    CHECKF(memcmp(part, buf, 1000 * 3 * dt_size(t)) == 0, "%s quadratic pieces differ", tn);
    gen_quadratic_fill(2718, t, 5000, 1000, part);
    CHECKF(memcmp(part, (char *)buf + 5000 * 3 * dt_size(t), 1000 * 3 * dt_size(t)) == 0,
           "%s quadratic window differs", tn);
    free(part);
    free(buf);
}

/* The quadratic mixture in both types, plus its small API. */
static void test_quadratic(void)
{
    check_quadratic(DT_F64);
    check_quadratic(DT_F32);

    unsigned char guard[64];
    memset(guard, 0x5a, sizeof guard);
    gen_quadratic_fill(1, DT_I32, 0, 4, guard);
    int untouched = 1;
    for (size_t i = 0; i < sizeof guard; i++)
        untouched &= guard[i] == 0x5a;
    CHECK(untouched);
    CHECK(gen_quadratic_share(GEN_QUAD_KINDS) == 0);
    CHECK(strcmp(gen_quadratic_kind_name(GEN_QUAD_NEAR_DOUBLE), "near-double") == 0);
    CHECK(strcmp(gen_quadratic_kind_name(GEN_QUAD_KINDS), "?") == 0);
    /* Different seeds pick different kinds. */
    int diff = 0;
    for (uint64_t r = 0; r < 1000; r++)
        diff += gen_quadratic_kind(1, r) != gen_quadratic_kind(2, r);
    CHECK(diff > 400);
}

/* Seconds on the monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints the fill speed of a spec in millions of elements per second. */
static void bench_one(const char *what, const gen_spec *s)
{
    enum { CH = 1 << 16, REPS = 1 << 9 };
    void *buf = malloc((size_t)CH * dt_size(s->dtype));
    double best = 1e30;
    for (int trial = 0; trial < 3; trial++) {
        double t0 = now();
        for (int r = 0; r < REPS; r++)
            gen_fill(s, (uint64_t)r * CH, CH, buf);
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    printf("%-28s %8.1f M elements/s\n", what, (double)CH * REPS / best / 1e6);
    free(buf);
}

/* Speed report of the common fills. */
static void bench(void)
{
    gen_spec s = spec(GEN_UNIFORM, DT_F32, 0, 1, 1);
    bench_one("float32 uniform", &s);
    s = spec(GEN_UNIFORM, DT_F64, 0, 1, 1);
    bench_one("float64 uniform", &s);
    s = spec(GEN_UNIFORM, DT_I32, -1000, 1000, 1);
    bench_one("int32 uniform [-1000,1000]", &s);
    s = spec(GEN_UNIFORM, DT_U64, 0, 0x1p63, 1);
    bench_one("uint64 uniform [0,2^63]", &s);
    s = spec(GEN_NORMAL, DT_F32, 0, 1, 1);
    bench_one("float32 normal", &s);
    s = spec(GEN_NORMAL, DT_F64, 0, 1, 1);
    bench_one("float64 normal", &s);

    enum { ROWS = 1 << 22 };
    double *q = malloc((size_t)ROWS * 3 * sizeof *q);
    double t0 = now();
    gen_quadratic_fill(1, DT_F64, 0, ROWS, q);
    printf("%-28s %8.1f M rows/s\n", "quadratic float64", ROWS / (now() - t0) / 1e6);
    free(q);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    RUN(test_spec);
    RUN(test_chunks);
    RUN(test_seeds);
    RUN(test_uniform_floats);
    RUN(test_normal_floats);
    RUN(test_uniform_ints);
    RUN(test_normal_ints);
    RUN(test_math);
    RUN(test_golden);
    RUN(test_quadratic);
    return check_summary();
}
