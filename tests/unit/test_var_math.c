/* test_var_math.c - the variance arithmetic of ptx/reduce_math.h (the
 * element step, rd_var_merge over the kernels' trees, rd_var_value)
 * against exact values: data on a lattice K + a*2^e with small integers a,
 * whose variance is the rational (n*sum(a^2) - sum(a)^2) / (n*(n - ddof))
 * times 2^(2e), rounded here correctly with integer arithmetic. Hard cases:
 * large offsets with tiny spreads, an outlier first element, constant
 * arrays (exactly 0), float32/float16-valued data, about 10^9 elements,
 * NaN and infinities, n - ddof <= 0. Then the CPU tile code
 * (rd_cpu_var_tiles) against rd_var_tile bit for bit for every type, the
 * lane merges of runtime/var_lanes.h against rd_var_merge in every
 * instruction-set variant, and the state's tree of tile partials over
 * chunks and shards. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/reduce_math.h"
#include "runtime/reduce.h"
#include "runtime/simd.h"
#include "runtime/var_lanes.h"
#include "check.h"
#define RND_SEED 0x5eed0f7a2ull
#include "rnd.h"

typedef unsigned __int128 u128;

/* p / q (q > 0) correctly rounded to double (round half to even). */
static double ratio_round(u128 p, u128 q)
{
    if (p == 0)
        return 0.0;
    u128 m = p / q, r = p % q;
    int e = 0, sticky;
    while (m < ((u128)1 << 55)) {
        r <<= 1;
        m <<= 1;
        if (r >= q) {
            m |= 1;
            r -= q;
        }
        e--;
    }
    sticky = r != 0;
    while (m >= ((u128)1 << 55)) {
        sticky |= (int)(m & 1);
        m >>= 1;
        e++;
    }
    unsigned low = (unsigned)(m & 3);
    m >>= 2;
    e += 2;
    if (low > 2 || (low == 2 && (sticky || (m & 1))))
        m++;
    return ldexp((double)(uint64_t)m, e);
}

/* The exact variance of k + a[i]*2^e (i < n) with ddof, correctly rounded. */
static double exact_var(const int64_t *a, size_t n, int64_t ddof, int e)
{
    __int128 s = 0, q = 0;
    for (size_t i = 0; i < n; i++) {
        s += a[i];
        q += (__int128)a[i] * a[i];
    }
    __int128 num = (__int128)n * q - s * s;
    return ldexp(ratio_round((u128)num, (u128)((__int128)n * ((__int128)n - ddof))), 2 * e);
}

/* Distance in units in the last place of want between two doubles. */
static double ulps(double got, double want)
{
    if (got == want)
        return 0;
    double u = want == 0 ? 0x1p-1074 : nextafter(fabs(want), INFINITY) - fabs(want);
    return fabs(got - want) / u;
}

/* The partial of n values as the whole-array reduction makes it: one
 * rd_var_tile per tile of RD_TILE, tiles merged by the pairwise tree over
 * tile indices (empty partials pad it, which merge leaves unchanged). */
static rd_var var_of(const double *x, size_t n, unsigned v, int skipnan)
{
    size_t nt = (n + RD_TILE - 1) / RD_TILE, cap = 1;
    while (cap < nt)
        cap *= 2;
    rd_var *t = malloc(cap * sizeof *t);
    for (size_t i = 0; i < cap; i++)
        t[i] = i < nt ? rd_var_tile(x + i * RD_TILE, n - i * RD_TILE < RD_TILE ? n - i * RD_TILE
                                                                                : RD_TILE,
                                    v, skipnan)
                      : rd_var_empty();
    for (size_t h = 1; h < cap; h *= 2)
        for (size_t i = 0; i < cap; i += 2 * h)
            t[i] = rd_var_merge(t[i], t[i + h]);
    rd_var r = t[0];
    free(t);
    return r;
}

static double worst_var, worst_std;

/* Checks var and std (ddof 0 and 1) of k + a*2^e against the exact values:
 * var within tol ulp, std within tol/2 + 1 (of the root of the rounded var);
 * n - ddof <= 0 must give NaN. */
static void check_lattice(const char *what, const int64_t *a, size_t n, double k, int e,
                          unsigned v, double tol)
{
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[i] = k + ldexp((double)a[i], e);
        if (x[i] - k != ldexp((double)a[i], e)) {
            fprintf(stderr, "%s: element %zu is not on the lattice\n", what, i);
            abort();
        }
    }
    rd_var p = var_of(x, n, v, 0);
    CHECK(p.n == n);
    for (int ddof = 0; ddof <= 1; ddof++) {
        if ((int64_t)n - ddof <= 0) {
            CHECK(isnan(rd_var_value(p, ddof, 0)) && isnan(rd_var_value(p, ddof, 1)));
            continue;
        }
        double want = exact_var(a, n, ddof, e), got = rd_var_value(p, ddof, 0);
        double sd = rd_var_value(p, ddof, 1), uv = ulps(got, want), us = ulps(sd, sqrt(want));
        worst_var = uv > worst_var ? uv : worst_var;
        worst_std = us > worst_std ? us : worst_std;
        CHECKF(uv <= tol, "%s ddof %d: var %.17g, exact %.17g (%.1f ulp)", what, ddof, got, want,
               uv);
        CHECKF(us <= tol / 2 + 1, "%s ddof %d: std %.17g, exact root %.17g (%.1f ulp)", what, ddof, sd,
               sqrt(want), us);
    }
    free(x);
}

/* Random integers in [-r, r]. */
static void fill(int64_t *a, size_t n, int64_t r)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (int64_t)(rnd() % (uint64_t)(2 * r + 1)) - r;
}

/* Large offsets with tiny spreads, for every vector width and odd sizes. */
static void test_offsets(void)
{
    static const size_t sizes[] = {1, 2, 3, 31, 2049, RD_TILE, RD_TILE + 1, 3 * RD_TILE + 777};
    static int64_t a[3 * RD_TILE + 777];
    for (unsigned v = 2; v <= 16; v *= 2)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            fill(a, n, 1000);
            check_lattice("2^30 + a*2^-20", a, n, 0x1p30, -20, v, 1.0);
            fill(a, n, 1 << 20);
            check_lattice("1e8 + a*2^-26", a, n, 1e8, -26, v, 1.0);
            fill(a, n, 3);
            check_lattice("-2^40 + a*2^-12", a, n, -0x1p40, -12, v, 1.0);
        }
}

/* An element far from the rest: inside an accumulator, and as the shift
 * of one (a poor center). */
static void test_outlier_first(void)
{
    static int64_t a[2 * RD_TILE + 5];
    size_t n = sizeof a / sizeof a[0];
    fill(a, n, 10);
    /* An element 10^5 standard deviations from the others, inside the
     * first RD_VAR_PLAIN elements of an accumulator or as a partial's shift
     * (its first element): those elements' sums, plain doubles, hold a
     * square 10^10 times the variance, so the result is within about
     * RD_VAR_PLAIN * eps * (x - K)^2 / var (1 to 19 ulp measured). */
    a[192] = (int64_t)1 << 30; /* lane 0, accumulator 0, its fourth element */
    check_lattice("outlier inside an accumulator", a, n, 1e6, -20, 2, 32.0);
    a[192] = 0;
    a[0] = (int64_t)1 << 30;
    check_lattice("outlier first", a, n, 1e6, -20, 2, 32.0);
    a[0] = -((int64_t)1 << 30);
    a[n - 1] = (int64_t)1 << 31;
    check_lattice("outliers at both ends", a, n, 0.0, -30, 4, 32.0);
}

/* float32- and float16-valued data (exact in their types). */
static void test_narrow_types(void)
{
    static int64_t a[RD_TILE + 999];
    size_t n = sizeof a / sizeof a[0];
    fill(a, n, 1000);
    check_lattice("float32 1024 + a*2^-13", a, n, 1024.0, -13, 4, 1.0); /* float32 ulp at 1024 */
    fill(a, n, 500);
    check_lattice("float16 1500 + a*0.5", a, n, 1500.0, -1, 8, 1.0); /* float16 ulp at 1024 */
    fill(a, n, 60);
    check_lattice("bfloat16 2^20 + a*2^13", a, n, 0x1p20, 13, 8, 1.0);
}

/* Constant arrays: var and std exactly +0.0, whatever the value. */
static void test_constant(void)
{
    static double x[3 * RD_TILE + 3];
    static const double values[] = {0.1, -3e300, 1e-310, 0.0, -0.0, 7.0};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (size_t j = 0; j < sizeof x / sizeof x[0]; j++)
            x[j] = values[i];
        rd_var p = var_of(x, sizeof x / sizeof x[0], 2, 0);
        for (int ddof = 0; ddof <= 1; ddof++) {
            double v = rd_var_value(p, ddof, 0), s = rd_var_value(p, ddof, 1);
            CHECKF(v == 0 && !signbit(v), "constant %g: var %g", values[i], v);
            CHECKF(s == 0 && !signbit(s), "constant %g: std %g", values[i], s);
        }
    }
}

/* About 10^9 elements: one tile's pattern repeated, its partial merged
 * over 61036 tiles by the pairwise tree, against the pattern's exact var. */
static void test_billion(void)
{
    static int64_t a[RD_TILE];
    static double x[RD_TILE];
    fill(a, RD_TILE, 100);
    for (size_t i = 0; i < RD_TILE; i++)
        x[i] = 1e6 + ldexp((double)a[i], -10);
    rd_var t = rd_var_tile(x, RD_TILE, 2, 0);
    const size_t tiles = 61036;
    rd_var stack[64];
    unsigned level[64];
    int depth = 0;
    for (size_t i = 0; i < tiles; i++) { /* binary counter: the pairwise tree */
        rd_var v = t;
        unsigned l = 0;
        size_t idx = i;
        while (depth > 0 && level[depth - 1] == l && (idx & 1)) {
            v = rd_var_merge(stack[--depth], v);
            l++;
            idx >>= 1;
        }
        stack[depth] = v;
        level[depth++] = l;
    }
    rd_var p = stack[depth - 1];
    for (int i = depth - 2; i >= 0; i--)
        p = rd_var_merge(stack[i], p);
    CHECK(p.n == (rd_u64)tiles * RD_TILE);
    double want = exact_var(a, RD_TILE, 0, -10), got = rd_var_value(p, 0, 0);
    CHECKF(ulps(got, want) <= 2.0, "1e9 elements: var %.17g, exact %.17g (%.1f ulp)", got, want,
           ulps(got, want));
    worst_var = ulps(got, want) > worst_var ? ulps(got, want) : worst_var;
}

/* NaN skipped or propagated, infinities, and n - ddof <= 0. */
static void test_special(void)
{
    static double x[RD_TILE + 100];
    static int64_t a[RD_TILE + 100];
    size_t n = sizeof x / sizeof x[0], kept = 0;
    fill(a, n, 1000);
    for (size_t i = 0; i < n; i++)
        x[i] = i % 97 == 5 ? NAN : 1e5 + ldexp((double)a[i], -20);
    for (size_t i = 0; i < n; i++)
        if (i % 97 != 5)
            a[kept++] = a[i];
    rd_var p = var_of(x, n, 2, 1);
    CHECK(p.n == kept);
    double want = exact_var(a, kept, 0, -20), got = rd_var_value(p, 0, 0);
    CHECKF(ulps(got, want) <= 1.0, "skipnan: var %.17g, exact %.17g", got, want);
    CHECK(isnan(rd_var_value(var_of(x, n, 2, 0), 0, 0)));
    x[0] = NAN; /* a NaN first element: the shift itself */
    CHECK(isnan(rd_var_value(var_of(x, n, 2, 0), 0, 1)));
    for (size_t i = 0; i < n; i++)
        x[i] = 1.0;
    x[n / 2] = INFINITY;
    CHECK(isnan(rd_var_value(var_of(x, n, 2, 0), 0, 0)));
    x[0] = -INFINITY;
    CHECK(isnan(rd_var_value(var_of(x, n, 2, 0), 0, 0)));
    rd_var one = var_of(x + 1, 1, 2, 0);
    CHECK(rd_var_value(one, 0, 0) == 0.0);
    CHECK(isnan(rd_var_value(one, 1, 0)));
    CHECK(isnan(rd_var_value(rd_var_empty(), 0, 0)));
    CHECK(isnan(rd_var_value(var_of(x + 1, 3, 2, 0), 3, 1)));
    CHECK(isnan(rd_var_value(var_of(x + 1, 3, 2, 0), 4, 0)));
}

/* The empty partial is an identity on both sides, bit for bit. */
static void test_identity(void)
{
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (double)(rnd() >> 11) * 0x1p-40 - 3.0;
    rd_var p = var_of(x, 100, 4, 0), e = rd_var_empty();
    rd_var l = rd_var_merge(e, p), r = rd_var_merge(p, e);
    CHECK(!memcmp(&l, &p, sizeof p));
    CHECK(!memcmp(&r, &p, sizeof p));
}

/* Random bits of one element of a dtype, with specials mixed in: NaN,
 * infinities, signed zeros, extremes, and runs of one value. */
static void random_elem(dt_type t, unsigned char *p, size_t i)
{
    uint64_t r = rnd(), sel = r % 16;
    size_t sz = dt_size(t);
    if (sel == 0 && i > 0) { /* a repeat of the previous element */
        memcpy(p, p - sz, sz);
        return;
    }
    if (t == DT_F32) {
        float f = sel == 1 ? NAN : sel == 2 ? INFINITY : sel == 3 ? -0.0f
                : sel == 4 ? 3e38f : (float)((int64_t)(r >> 40) - (1 << 23)) * 0x1p-10f + 1e4f;
        memcpy(p, &f, sz);
    } else if (t == DT_F64) {
        double d = sel == 1 ? NAN : sel == 2 ? -INFINITY : sel == 3 ? -0.0
                 : sel == 4 ? 1e300 : (double)((int64_t)(r >> 11) - (1ll << 52)) * 0x1p-40 - 1e9;
        memcpy(p, &d, sz);
    } else if (t == DT_F16 || t == DT_BF16) {
        uint16_t h = (uint16_t)(r >> 20);
        if (sel == 1)
            h = t == DT_F16 ? 0x7e01 : 0x7fc1;
        memcpy(p, &h, sz);
    } else {
        memcpy(p, &r, sz); /* any bits (a bool's byte too) */
    }
}

/* An element's value as the tile code converts it. */
static double elem_value(dt_type t, const unsigned char *p)
{
    union {
        float f;
        double d;
        uint16_t h;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } u;
    memcpy(&u, p, dt_size(t));
    switch (t) {
    case DT_F32: return u.f;
    case DT_F64: return u.d;
    case DT_F16: return hf_f16_to_f32(u.h);
    case DT_BF16: return hf_bf16_to_f32(u.h);
    case DT_I8: return u.i8;
    case DT_I16: return u.i16;
    case DT_I32: return u.i32;
    case DT_I64: return (double)u.i64;
    case DT_U8: return u.u8;
    case DT_U16: return u.u16;
    case DT_U32: return u.u32;
    case DT_U64: return (double)u.u64;
    case DT_BOOL: return u.u8 != 0;
    default: return 0;
    }
}

/* Whether two doubles have the same bits, any NaN matching any NaN (the
 * payload a NaN gets is the hardware's and the compiler's choice). */
static int same_double(double a, double b)
{
    return (a != a && b != b) || !memcmp(&a, &b, sizeof a);
}

/* Whether two partials are the same bit for bit, up to NaN payloads. */
static int same_var(const rd_var *a, const rd_var *b)
{
    return a->n == b->n && same_double(a->k, b->k) && same_double(a->s1.hi, b->s1.hi) &&
           same_double(a->s1.lo, b->s1.lo) && same_double(a->s2.hi, b->s2.hi) &&
           same_double(a->s2.lo, b->s2.lo);
}

#define LANES 16 /* partials merged side by side by one call of a lane loop */

/* Defines NAME: a[i] = merge(a[i], b[i]) for LANES lanes, FULL: by
 * vl_merge_full, else vl_merge_lane, compiled with ATTRS (the lane loop
 * vectorized as the CPU code's is in that variant). */
#define LANE_MERGES(NAME, ATTRS, FULL)                                                       \
    ATTRS static void NAME(uint64_t *an, double *ak, double *a1h, double *a1l, double *a2h,   \
                           double *a2l, const uint64_t *bn, const double *bk,                \
                           const double *b1h, const double *b1l, const double *b2h,          \
                           const double *b2l)                                                \
    {                                                                                       \
        for (size_t i = 0; i < LANES; i++)                                                  \
            (FULL ? vl_merge_full : vl_merge_lane)(&an[i], &ak[i], &a1h[i], &a1l[i],        \
                                                   &a2h[i], &a2l[i], bn[i], bk[i], b1h[i],  \
                                                   b1l[i], b2h[i], b2l[i]);                 \
    }

LANE_MERGES(lanes_base, , 0)
LANE_MERGES(lanes_base_full, , 1)
#if SIMD_MULTI
LANE_MERGES(lanes_avx2, SIMD_ATTR_AVX2, 0)
LANE_MERGES(lanes_avx2_full, SIMD_ATTR_AVX2, 1)
LANE_MERGES(lanes_avx512, SIMD_ATTR_AVX512, 0)
LANE_MERGES(lanes_avx512_full, SIMD_ATTR_AVX512, 1)
#endif

typedef void (*lane_merges_fn)(uint64_t *, double *, double *, double *, double *, double *,
                               const uint64_t *, const double *, const double *,
                               const double *, const double *, const double *);

/* A partial of 0 to 40 random elements of full precision (or, one time in
 * four, up to 100: partials past RD_VAR_PLAIN, whose sums have low words):
 * plain values, a huge offset, or now and then an infinity or a NaN among
 * them. */
static rd_var random_partial(void)
{
    double x[100];
    size_t n = (size_t)(rnd() % 4 ? rnd() % 41 : rnd() % 101);
    uint64_t kind = rnd() % 8;
    double off = kind == 1 ? 0x1p40 : kind == 2 ? -3e7 : 0.0;
    for (size_t i = 0; i < n; i++) {
        x[i] = off + ((double)(rnd() >> 11) * 0x1p-53 - 0.5) * 1000.0;
        if (kind == 3 && rnd() % 8 == 0)
            x[i] = rnd() % 2 ? INFINITY : NAN;
    }
    return var_of(x, n, 4, 0);
}

/* vl_merge_lane equals rd_var_merge bit for bit (up to NaN payloads),
 * empty sides included, and vl_merge_full equals it where neither side is
 * empty, lane by lane in every variant this CPU runs. */
static void test_lane_merges(void)
{
    static const struct {
        int v;
        lane_merges_fn lane, full;
    } fns[] = {
        {SIMD_BASELINE, lanes_base, lanes_base_full},
#if SIMD_MULTI
        {SIMD_AVX2, lanes_avx2, lanes_avx2_full},
        {SIMD_AVX512, lanes_avx512, lanes_avx512_full},
#endif
    };
    for (int round = 0; round < 400; round++) {
        rd_var a[LANES], b[LANES], want[LANES];
        for (size_t i = 0; i < LANES; i++) {
            a[i] = random_partial();
            b[i] = random_partial();
            want[i] = rd_var_merge(a[i], b[i]);
        }
        for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
            if (!simd_runs(fns[f].v))
                continue;
            for (int full = 0; full < 2; full++) {
                uint64_t an[LANES], bn[LANES];
                double ak[LANES], a1h[LANES], a1l[LANES], a2h[LANES], a2l[LANES];
                double bk[LANES], b1h[LANES], b1l[LANES], b2h[LANES], b2l[LANES];
                vl_ref ra = {an, ak, a1h, a1l, a2h, a2l}, rb = {bn, bk, b1h, b1l, b2h, b2l};
                for (size_t i = 0; i < LANES; i++) {
                    vl_put(ra, i, a[i]);
                    vl_put(rb, i, b[i]);
                }
                (full ? fns[f].full : fns[f].lane)(an, ak, a1h, a1l, a2h, a2l, bn, bk, b1h, b1l,
                                                   b2h, b2l);
                for (size_t i = 0; i < LANES; i++) {
                    if (full && (a[i].n == 0 || b[i].n == 0))
                        continue;
                    rd_var got = vl_get(ra, i);
                    CHECKF(same_var(&got, &want[i]),
                           "%s %s round %d lane %zu: n %llu + %llu", simd_name(fns[f].v),
                           full ? "vl_merge_full" : "vl_merge_lane", round, i,
                           (unsigned long long)a[i].n, (unsigned long long)b[i].n);
                }
            }
        }
    }
}

/* rd_cpu_var_tiles of n elements x (values d) of type t on variant v
 * against rd_var_tile, tile by tile, bit for bit (up to NaN payloads). */
static void check_cpu_tiles(int v, dt_type t, const unsigned char *x, const double *d, size_t n,
                            int skipnan, int mode)
{
    size_t sz = dt_size(t), nt = (n + RD_TILE - 1) / RD_TILE;
    rd_var got[3];
    simd_force(v);
    rd_cpu_var_tiles(x, n, t, skipnan, 0, nt, got);
    simd_force(-1);
    for (size_t k = 0; k < nt; k++) {
        size_t m = n - k * RD_TILE < RD_TILE ? n - k * RD_TILE : RD_TILE;
        rd_var want = rd_var_tile(d + k * RD_TILE, m, RD_VEC(sz), skipnan && dt_is_float(t));
        CHECKF(same_var(&want, &got[k]),
               "%s %s n %zu skipnan %d mode %d tile %zu: n %llu/%llu var %.17g/%.17g",
               simd_name(v), dt_name(t), n, skipnan, mode, k, (unsigned long long)got[k].n,
               (unsigned long long)want.n, rd_var_value(got[k], 0, 0),
               rd_var_value(want, 0, 0));
    }
}

/* rd_cpu_var_tiles on every instruction-set variant this CPU runs, for
 * every type, odd lengths (partial sub-tiles and tiles), skipnan on and
 * off, and data with and without specials. */
static void test_cpu_tiles(void)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8,  DT_I16, DT_I32,
                                    DT_I64, DT_U8,  DT_U16, DT_U32, DT_U64, DT_BOOL};
    static const size_t sizes[] = {1, 7, 128, 129, 2048, 2049, 5000, RD_TILE, 2 * RD_TILE + 333};
    static unsigned char x[(2 * RD_TILE + 333) * 8];
    static double d[2 * RD_TILE + 333];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int mode = 0; mode < 4; mode++) {
                dt_type t = types[ti];
                size_t n = sizes[si], sz = dt_size(t);
                int skipnan = mode & 1, plain = mode & 2;
                for (size_t i = 0; i < n; i++) {
                    random_elem(t, x + i * sz, i);
                    if (plain && dt_is_float(t) && elem_value(t, x + i * sz) !=
                                                       elem_value(t, x + i * sz))
                        memset(x + i * sz, 0, sz); /* no NaN this time */
                    d[i] = elem_value(t, x + i * sz);
                }
                for (int v = 0; v < SIMD_COUNT; v++)
                    if (simd_runs(v))
                        check_cpu_tiles(v, t, x, d, n, skipnan, mode);
            }
}

/* The state's variance over chunks, and over shards merged in order, has
 * the bits of one state over every tile; var and std land in rd_result
 * with the state's ddof. */
static void test_state_shards(void)
{
    enum { NT = 37 };
    static double x[NT * RD_TILE];
    static int64_t a[NT * RD_TILE];
    fill(a, NT * RD_TILE, 5000);
    for (size_t i = 0; i < NT * RD_TILE; i++)
        x[i] = 3e5 + ldexp((double)a[i], -16);
    static rd_var parts[NT];
    rd_cpu_var_tiles(x, NT * RD_TILE, DT_F64, 0, 0, NT, parts);
    rd_state one;
    rd_state_init(&one, DT_F64, RD_OP_VAR | RD_OP_STD, 0);
    one.ddof = 1;
    rd_state_add(&one, NULL, NULL, parts, NT, (uint64_t)NT * RD_TILE);
    rd_result r1;
    rd_state_result(&one, &r1);
    double want = exact_var(a, NT * RD_TILE, 1, -16);
    CHECKF(ulps(r1.var, want) <= 1.0, "state var %.17g, exact %.17g", r1.var, want);
    CHECKF(ulps(r1.std, sqrt(want)) <= 1.5, "state std %.17g, exact root %.17g", r1.std,
           sqrt(want));
    static const size_t cuts[][3] = {{1, 2, 3}, {5, 16, 17}, {8, 9, 32}, {0, 36, 36}};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        size_t b[5] = {0, cuts[c][0], cuts[c][1], cuts[c][2], NT};
        rd_state all;
        rd_state_init(&all, DT_F64, RD_OP_VAR | RD_OP_STD, 0);
        all.ddof = 1;
        for (int s = 0; s < 4; s++) {
            rd_state part;
            rd_state_init(&part, DT_F64, RD_OP_VAR | RD_OP_STD, 0);
            rd_state_start_at(&part, b[s]);
            rd_state_add(&part, NULL, NULL, parts + b[s], b[s + 1] - b[s],
                         (uint64_t)(b[s + 1] - b[s]) * RD_TILE);
            rd_state_merge(&all, &part);
        }
        rd_result r;
        rd_state_result(&all, &r);
        CHECKF(!memcmp(&r.var, &r1.var, sizeof r.var) && !memcmp(&r.std, &r1.std, sizeof r.std),
               "shards %zu: var %.17g, one state %.17g", c, r.var, r1.var);
        rd_var p = rd_vtree_finish(&all.var_tree), q = rd_vtree_finish(&one.var_tree);
        CHECK(!memcmp(&p, &q, sizeof p));
    }
    rd_state empty;
    rd_state_init(&empty, DT_F32, RD_OP_VAR, 0);
    rd_result re;
    rd_state_result(&empty, &re);
    CHECK(isnan(re.var) && isnan(re.std));
}

int main(void)
{
    RUN(test_offsets);
    RUN(test_outlier_first);
    RUN(test_narrow_types);
    RUN(test_constant);
    RUN(test_billion);
    RUN(test_special);
    RUN(test_identity);
    RUN(test_cpu_tiles);
    RUN(test_lane_merges);
    RUN(test_state_shards);
    printf("largest error: var %.2f ulp, std %.2f ulp\n", worst_var, worst_std);
    return check_summary();
}
