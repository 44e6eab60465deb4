/* test_quadratic.c - accuracy and conventions of the quadratic solvers
 * (ptx/quadratic_math.h), measured against an MPFR oracle.
 *
 * The oracle takes the coefficients as the exact binary values they are,
 * forms b^2 and 4ac exactly, the discriminant correctly rounded to 320 bits
 * and the roots with the cancellation-free formulas at that precision, so
 * its relative error (about 2^-315) is far below what is measured.
 *
 * Error of one part, in ulps of the target format (precision P, exponent
 * range [emin, emax], smallest subnormal 2^etiny): |computed - exact| /
 * 2^(max(floor(log2|exact|), emin) - P + 1), the exponent capped at emax; an
 * exact zero has ulp 2^etiny (so the part must be exactly zero to score 0);
 * a computed infinity counts as +-2^(emax+1), one ulp above the largest
 * finite value, and so does an exact value beyond 2^(emax+1) (every such
 * value rounds to infinity); an expected NaN scores 0 when NaN and
 * infinitely many ulps otherwise, as does an unexpected NaN. An equation's
 * error is the largest of its four parts; the histograms count equations.
 *
 * An equation is "representable" when every nonzero exact part has a
 * magnitude in [2^emin, largest finite]. The solver promises at most 3 ulps
 * there; beyond it the same measure (subnormal grid, infinity as 2^(emax+1))
 * is reported separately and checked as well.
 *
 * Besides the error, every result of the accurate solver is checked
 * against the conventions: signs of all parts (exact zeros are +0), x1 <=
 * x2 for real roots, im1 = -im2 > 0 and re1 == re2 for a complex pair,
 * x1 == x2 bit for bit for an exact double root, x1 == -x2 bit for bit when
 * b = 0.
 *
 * Usage: test_quadratic [--long]; --long (or QD_TEST_LONG=1 in the
 * environment) runs ten times as many equations per set (2 million random
 * ones per format instead of 200000). Seeds are fixed, so the tables are
 * reproducible. */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/quadratic_math.h"
#include "runtime/tools/gen.h"
#include "check.h"

#define ORACLE_PREC 320

/* A binary floating-point format under test. */
typedef struct {
    const char *name;
    int p, emin, emax, etiny;
    int is32;
} fmt;

static const fmt F64 = {"float64", 53, -1022, 1023, -1074, 0};
static const fmt F32 = {"float32", 24, -126, 127, -149, 1};

/* The four root parts re1, im1, re2, im2 (float results stored exactly). */
typedef struct {
    double v[4];
} roots;

/* ---- random numbers -------------------------------------------------- */

static uint64_t rng_state;

/* Restarts the test's random stream at seed. */
static void rng_seed(uint64_t seed)
{
    rng_state = seed * 0x2545f4914f6cdd1dull + 0x9e3779b97f4a7c15ull;
}

/* Next 64-bit random word (splitmix64). */
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int rng_int(int lo, int hi)
{
    return lo + (int)(rng() % (uint64_t)(hi - lo + 1));
}

/* Uniform double in [0, 1). */
static double rng_unit(void)
{
    return (double)(rng() >> 11) * 0x1p-53;
}

/* x rounded to the format (exact for float64). */
static double to_fmt(const fmt *f, double x)
{
    return f->is32 ? (double)(float)x : x;
}

/* Random-signed value with a random P-bit significand in [1, 2) and an
 * exponent uniform in [elo, ehi], rounded to the format (subnormal
 * exponents lose low significand bits). */
static double rand_val(const fmt *f, int elo, int ehi)
{
    double m = 1.0 + (double)(rng() >> (65 - f->p)) * ldexp(1.0, 1 - f->p);
    double v = to_fmt(f, ldexp(m, rng_int(elo, ehi)));
    return (rng() & 1) ? -v : v;
}

/* ---- solvers under test ---------------------------------------------- */

/* Runs the accurate (naive = 0) or textbook (naive = 1) solver of format f. */
static roots solve(const fmt *f, int naive, double a, double b, double c)
{
    roots r;
    if (f->is32) {
        float o[4];
        if (naive)
            qd_naive_f32((float)a, (float)b, (float)c, &o[0], &o[1], &o[2], &o[3]);
        else
            qd_solve_f32((float)a, (float)b, (float)c, &o[0], &o[1], &o[2], &o[3]);
        for (int i = 0; i < 4; i++)
            r.v[i] = o[i];
    } else {
        if (naive)
            qd_naive_f64(a, b, c, &r.v[0], &r.v[1], &r.v[2], &r.v[3]);
        else
            qd_solve_f64(a, b, c, &r.v[0], &r.v[1], &r.v[2], &r.v[3]);
    }
    return r;
}

/* ---- oracle ----------------------------------------------------------- */

/* Exact root parts of one equation under the solver's conventions. */
typedef struct {
    int nan[4];     /* the convention puts NaN in this part */
    mpfr_t x[4];    /* the exact part (to ORACLE_PREC bits) otherwise */
    int dbl;        /* discriminant exactly zero, a != 0 */
    int complex;    /* a complex pair */
} oracle;

static oracle orc;
static mpfr_t ma, mb, mc, mt, mu, md, ms, mq, mmax32, mmax64;

/* Initializes the oracle's MPFR variables. */
static void oracle_init(void)
{
    for (int i = 0; i < 4; i++)
        mpfr_init2(orc.x[i], ORACLE_PREC);
    mpfr_inits2(ORACLE_PREC, ma, mb, mc, mt, mu, md, ms, mq, mmax32, mmax64, (mpfr_ptr)0);
    mpfr_set_d(mmax32, FLT_MAX, MPFR_RNDN);
    mpfr_set_d(mmax64, DBL_MAX, MPFR_RNDN);
}

/* Frees the oracle's MPFR variables. */
static void oracle_free(void)
{
    for (int i = 0; i < 4; i++)
        mpfr_clear(orc.x[i]);
    mpfr_clears(ma, mb, mc, mt, mu, md, ms, mq, mmax32, mmax64, (mpfr_ptr)0);
    mpfr_free_cache();
}

/* Fills orc with the exact roots of a x^2 + b x + c (the convention for the
 * degenerate cases, the ascending/complex order for the others). */
static void oracle_solve(double a, double b, double c)
{
    for (int i = 0; i < 4; i++) {
        orc.nan[i] = 0;
        mpfr_set_zero(orc.x[i], 1);
    }
    orc.dbl = 0;
    orc.complex = 0;
    if (!isfinite(a) || !isfinite(b) || !isfinite(c) || (a == 0 && b == 0)) {
        for (int i = 0; i < 4; i++)
            orc.nan[i] = 1;
        return;
    }
    mpfr_set_d(ma, a, MPFR_RNDN);
    mpfr_set_d(mb, b, MPFR_RNDN);
    mpfr_set_d(mc, c, MPFR_RNDN);
    if (a == 0) { /* linear: -c/b */
        mpfr_div(orc.x[0], mc, mb, MPFR_RNDN);
        mpfr_neg(orc.x[0], orc.x[0], MPFR_RNDN);
        orc.nan[2] = orc.nan[3] = 1;
        return;
    }
    if (c == 0) { /* 0 and -b/a */
        mpfr_div(mt, mb, ma, MPFR_RNDN);
        mpfr_neg(mt, mt, MPFR_RNDN);
        mpfr_set(orc.x[mpfr_sgn(mt) < 0 ? 0 : 2], mt, MPFR_RNDN);
        orc.dbl = b == 0;
        return;
    }
    mpfr_sqr(mt, mb, MPFR_RNDN);     /* exact: 106 significant bits */
    mpfr_mul(mu, ma, mc, MPFR_RNDN); /* exact */
    mpfr_mul_2ui(mu, mu, 2, MPFR_RNDN);
    mpfr_sub(md, mt, mu, MPFR_RNDN); /* correctly rounded b^2 - 4ac */
    int sd = mpfr_sgn(md);
    if (sd >= 0) {
        mpfr_sqrt(ms, md, MPFR_RNDN);
        if (mpfr_signbit(mb))
            mpfr_sub(mq, mb, ms, MPFR_RNDN);
        else
            mpfr_add(mq, mb, ms, MPFR_RNDN);
        mpfr_div_2ui(mq, mq, 1, MPFR_RNDN);
        mpfr_neg(mq, mq, MPFR_RNDN); /* q = -(b + sign(b) sqrt(D)) / 2 */
        mpfr_div(mt, mq, ma, MPFR_RNDN);
        mpfr_div(mu, mc, mq, MPFR_RNDN);
        int lo = mpfr_cmp(mt, mu) <= 0;
        mpfr_set(orc.x[0], lo ? mt : mu, MPFR_RNDN);
        mpfr_set(orc.x[2], lo ? mu : mt, MPFR_RNDN);
        orc.dbl = sd == 0;
    } else {
        orc.complex = 1;
        mpfr_mul_2ui(mt, ma, 1, MPFR_RNDN);
        mpfr_div(orc.x[0], mb, mt, MPFR_RNDN);
        mpfr_neg(orc.x[0], orc.x[0], MPFR_RNDN);
        mpfr_set(orc.x[2], orc.x[0], MPFR_RNDN);
        mpfr_neg(md, md, MPFR_RNDN);
        mpfr_sqrt(ms, md, MPFR_RNDN);
        mpfr_abs(mt, mt, MPFR_RNDN);
        mpfr_div(orc.x[1], ms, mt, MPFR_RNDN);
        mpfr_neg(orc.x[3], orc.x[1], MPFR_RNDN);
    }
}

/* Nonzero when part i of the oracle lies in the format's normal range (or
 * is exactly zero or NaN). */
static int oracle_part_representable(const fmt *f, int i)
{
    if (orc.nan[i] || mpfr_zero_p(orc.x[i]))
        return 1;
    if (mpfr_cmpabs(orc.x[i], f->is32 ? mmax32 : mmax64) > 0)
        return 0;
    return mpfr_get_exp(orc.x[i]) - 1 >= f->emin;
}

/* Error in ulps of computed part v against oracle part i (see the top of
 * this file); sets *sign_bad when v's sign differs from the exact value's
 * (exact zeros must be +0). */
static double part_err(const fmt *f, int i, double v, int *sign_bad)
{
    if (orc.nan[i])
        return isnan(v) ? 0.0 : INFINITY;
    if (isnan(v))
        return INFINITY;
    if (mpfr_zero_p(orc.x[i])) {
        if (signbit(v))
            *sign_bad = 1;
        return v == 0 ? 0.0 : ldexp(fabs(v), -f->etiny);
    }
    if ((signbit(v) != 0) != (mpfr_sgn(orc.x[i]) < 0))
        *sign_bad = 1;
    long e = (long)mpfr_get_exp(orc.x[i]) - 1;
    if (e < f->emin)
        e = f->emin;
    if (e > f->emax)
        e = f->emax;
    /* Infinity sits at 2^(emax+1), one ulp above the largest finite value,
     * and so do exact values beyond it (they all round to infinity). */
    mpfr_set_si_2exp(mu, mpfr_sgn(orc.x[i]), f->emax + 1, MPFR_RNDN);
    if (mpfr_cmpabs(orc.x[i], mu) < 0)
        mpfr_set(mu, orc.x[i], MPFR_RNDN);
    if (isinf(v))
        mpfr_set_si_2exp(mt, v > 0 ? 1 : -1, f->emax + 1, MPFR_RNDN);
    else
        mpfr_set_d(mt, v, MPFR_RNDN);
    mpfr_sub(mt, mt, mu, MPFR_RNDN);
    mpfr_abs(mt, mt, MPFR_RNDN);
    mpfr_mul_2si(mt, mt, -(e - f->p + 1), MPFR_RNDN);
    return mpfr_get_d(mt, MPFR_RNDU);
}

/* ---- statistics ------------------------------------------------------- */

#define NBINS 6
static const char *const bin_name[NBINS] = {"0", "<=0.5", "<=1", "<=2", "<=3", ">3"};

/* Error statistics of one solver over one set of equations. */
typedef struct {
    long n, nrep, nan;      /* equations, representable ones, ones with a wrong NaN */
    double max_rep, max_out; /* largest error, representable / not */
    long hist[NBINS];
    long sign_bad, conv_bad; /* sign and convention violations */
    double worst[3];         /* coefficients of the worst representable equation */
    double worst_out[3];     /* and of the worst other one */
} stats;

/* Histogram bin of an error. */
static int bin_of(double e)
{
    if (e == 0)
        return 0;
    if (e <= 0.5)
        return 1;
    if (e <= 1)
        return 2;
    if (e <= 2)
        return 3;
    if (e <= 3)
        return 4;
    return 5;
}

/* Largest of a and b where NaN counts as infinity. */
static double max_err(double a, double b)
{
    if (isnan(a) || isnan(b))
        return INFINITY;
    return a > b ? a : b;
}

/* Checks the structural conventions of an accurate result; returns the
 * number of violations. */
static int conventions_bad(double b, const roots *r)
{
    const double *v = r->v;
    int bad = 0;
    if (orc.nan[0] || orc.nan[2])
        return 0; /* degenerate rows are checked part by part */
    if (orc.complex) {
        bad += !(v[1] > 0 && v[3] == -v[1] && memcmp(&v[0], &v[2], 8) == 0);
        if (b == 0)
            bad += !(v[0] == 0 && !signbit(v[0]));
    } else {
        bad += !(v[0] <= v[2]);
        bad += !(v[1] == 0 && !signbit(v[1]) && v[3] == 0 && !signbit(v[3]));
        if (orc.dbl)
            bad += memcmp(&v[0], &v[2], 8) != 0;
        if (b == 0 && !mpfr_zero_p(orc.x[0]))
            bad += v[0] != -v[2];
    }
    return bad;
}

/* Adds one equation's results to the statistics of both solvers. */
static long fast_n, fast_differ; /* float32 equations on the float-native path */

/* Counts a float32 equation that takes the float-native path, and whether
 * its roots differ in any bit from the general path's (both are held to the
 * same error bound by the oracle; they may round differently). */
static void fast_path_census(float a, float b, float c)
{
    float fast[4], wide[4];
    if (!qd_fast_range_f32(a) || !qd_fast_range_f32(b) || !qd_fast_range_f32(c) ||
        !qd_solve_fast_f32(a, b, c, &fast[0], &fast[1], &fast[2], &fast[3]))
        return;
    qd_solve_wide_f32(a, b, c, &wide[0], &wide[1], &wide[2], &wide[3]);
    fast_n++;
    fast_differ += memcmp(fast, wide, sizeof fast) != 0;
}

static void eval_eq(const fmt *f, double a, double b, double c, stats *acc, stats *nai)
{
    if (f->is32)
        fast_path_census((float)a, (float)b, (float)c);
    oracle_solve(a, b, c);
    int rep = 1;
    for (int i = 0; i < 4; i++)
        rep &= oracle_part_representable(f, i);
    for (int s = 0; s < 2; s++) {
        stats *st = s ? nai : acc;
        roots r = solve(f, s, a, b, c);
        int sign_bad = 0;
        double e = 0;
        int wrong_nan = 0;
        for (int i = 0; i < 4; i++) {
            double pe = part_err(f, i, r.v[i], &sign_bad);
            wrong_nan |= isnan(r.v[i]) != orc.nan[i];
            e = max_err(e, pe);
        }
        st->n++;
        st->nan += wrong_nan;
        st->hist[bin_of(e)]++;
        st->sign_bad += sign_bad;
        if (rep) {
            st->nrep++;
            if (!(e <= st->max_rep)) {
                st->max_rep = e;
                st->worst[0] = a;
                st->worst[1] = b;
                st->worst[2] = c;
            }
        } else if (!(e <= st->max_out)) {
            st->max_out = e;
            st->worst_out[0] = a;
            st->worst_out[1] = b;
            st->worst_out[2] = c;
        }
        if (!s)
            st->conv_bad += conventions_bad(b, &r);
    }
}

/* Formats an error for the tables. */
static const char *fmt_err(char *buf, size_t len, double e, long count)
{
    if (count == 0)
        snprintf(buf, len, "-");
    else if (isinf(e))
        snprintf(buf, len, "inf");
    else if (e < 1e6)
        snprintf(buf, len, "%.4f", e);
    else
        snprintf(buf, len, "%.2e", e);
    return buf;
}

/* Prints the header of a results table. */
static void table_header(const char *title)
{
    printf("\n### %s\n\n", title);
    printf("| set | format | solver | equations | representable | max ulp (repr.) | max ulp "
           "(other) |");
    for (int i = 0; i < NBINS; i++)
        printf(" %s |", bin_name[i]);
    printf(" NaN |\n|---|---|---|--:|--:|--:|--:|");
    for (int i = 0; i < NBINS; i++)
        printf("--:|");
    printf("--:|\n");
}

/* Prints one table row. */
static void table_row(const char *set, const fmt *f, const char *solver, const stats *st)
{
    char b1[32], b2[32];
    printf("| %s | %s | %s | %ld | %ld | %s | %s |", set, f->name, solver, st->n, st->nrep,
           fmt_err(b1, sizeof b1, st->max_rep, st->nrep),
           fmt_err(b2, sizeof b2, st->max_out, st->n - st->nrep));
    for (int i = 0; i < NBINS; i++)
        printf(" %ld |", st->hist[i]);
    printf(" %ld |\n", st->nan);
}

/* Prints both solvers' rows of a set and checks the accurate one. */
static void report(const char *set, const fmt *f, const stats *acc, const stats *nai)
{
    table_row(set, f, "accurate", acc);
    table_row(set, f, "textbook", nai);
    CHECKF(acc->max_rep <= 3.0, "%s %s: max %.3g ulp at a=%a b=%a c=%a", set, f->name,
           acc->max_rep, acc->worst[0], acc->worst[1], acc->worst[2]);
    CHECKF(acc->n == acc->nrep || acc->max_out <= 3.0,
           "%s %s: beyond the normal range %.3g ulp at a=%a b=%a c=%a", set, f->name,
           acc->max_out, acc->worst_out[0], acc->worst_out[1], acc->worst_out[2]);
    CHECKF(acc->nan == 0, "%s %s: %ld wrong NaN", set, f->name, acc->nan);
    CHECKF(acc->sign_bad == 0, "%s %s: %ld sign violations", set, f->name, acc->sign_bad);
    CHECKF(acc->conv_bad == 0, "%s %s: %ld convention violations", set, f->name, acc->conv_bad);
}

/* ---- test sets -------------------------------------------------------- */

static int long_run;
static long total_equations;
static long degenerate_n, degenerate_ok; /* bit-exact convention checks */

/* Set 1: a, b, c with random signs, significands and exponents in [elo,
 * ehi]: the whole normal range (1), and [-40, 40] (1b), which straddles the
 * edges of the float32 solver's float-native range. */
static void set_random(const fmt *f, const char *name, int elo, int ehi, uint64_t seed)
{
    stats acc = {0}, nai = {0};
    long n = long_run ? 2000000 : 200000;
    rng_seed(seed);
    for (long i = 0; i < n; i++) {
        double a = rand_val(f, elo, ehi);
        double b = rand_val(f, elo, ehi);
        double c = rand_val(f, elo, ehi);
        eval_eq(f, a, b, c, &acc, &nai);
    }
    total_equations += acc.n;
    report(name, f, &acc, &nai);
}

/* Rounds the MPFR value m to the format. */
static double mpfr_to_fmt(const fmt *f, mpfr_t m)
{
    return f->is32 ? (double)mpfr_get_flt(m, MPFR_RNDN) : mpfr_get_d(m, MPFR_RNDN);
}

/* Set 2: near-double roots. Real roots r and r (1 + d) or complex roots
 * r +- i |r| d with d = [1, 2) 2^-[10, 2P+6], |r| = m 2^[-emax_r, emax_r]
 * (set 2: 2^[-450, 450], float32 2^[-55, 55]; set 2b: 2^[-10, 10]), a with
 * a random significand or a power of two and an exponent in [-emax_a,
 * emax_a] that keeps b and c normal; b = -a (r1 + r2) and c = a r1 r2 are
 * rounded to the format once (the oracle solves the rounded equation). A quarter are exact double
 * roots: a = +-2^k, r with at most P/2 - 1 significant bits. */
static void set_near_double(const fmt *f, const char *name, int emax_r, int emax_a, uint64_t seed)
{
    stats acc = {0}, nai = {0};
    long n = long_run ? 1000000 : 100000;
    mpfr_t r1, r2, t;
    mpfr_inits2(ORACLE_PREC, r1, r2, t, (mpfr_ptr)0);
    rng_seed(seed);
    for (long i = 0; i < n; i++) {
        int sub = (int)(i & 3);
        /* Exponents: r anywhere in [-emax_r, emax_r], a where a r and a r^2
         * stay in the normal range. */
        int er = rng_int(-emax_r, emax_r);
        int lo = f->emin + 4 - (er < 0 ? 2 * er : er), hi = f->emax - 4 - (er > 0 ? 2 * er : er);
        lo = lo > f->emin + 4 ? lo : f->emin + 4;
        hi = hi < f->emax - 4 ? hi : f->emax - 4;
        int ea = rng_int(lo > -emax_a ? lo : -emax_a, hi < emax_a ? hi : emax_a);
        double a = rand_val(f, ea, ea);
        double r = rand_val(f, er, er);
        double d = (1.0 + rng_unit()) * ldexp(1.0, -rng_int(10, 2 * f->p + 6));
        double b, c;
        if (sub == 2) { /* exact double root */
            int h = f->p / 2 - 1;
            double mr = ldexp((double)((rng() >> (64 - h)) | (1ull << (h - 1))), 1 - h);
            r = ldexp(mr, er) * ((rng() & 1) ? -1 : 1);
            a = ldexp(1.0, ea) * ((rng() & 1) ? -1 : 1);
            b = -2.0 * (a * r);
            c = (a * r) * r;
        } else {
            if (sub == 3)
                a = ldexp(1.0, ea) * ((rng() & 1) ? -1 : 1);
            mpfr_set_d(r1, r, MPFR_RNDN);
            mpfr_set_d(t, d, MPFR_RNDN);
            if (sub == 1) { /* complex r +- i |r| d: b = -2 a r, c = a r^2 (1 + d^2) */
                mpfr_mul_d(t, r1, -2.0 * a, MPFR_RNDN);
                b = mpfr_to_fmt(f, t);
                mpfr_set_d(r2, d, MPFR_RNDN);
                mpfr_sqr(r2, r2, MPFR_RNDN);
                mpfr_add_ui(r2, r2, 1, MPFR_RNDN);
                mpfr_sqr(t, r1, MPFR_RNDN);
                mpfr_mul(t, t, r2, MPFR_RNDN);
                mpfr_mul_d(t, t, a, MPFR_RNDN);
                c = mpfr_to_fmt(f, t);
            } else { /* real r and r (1 + d) */
                mpfr_add_ui(t, t, 1, MPFR_RNDN);
                mpfr_mul(r2, r1, t, MPFR_RNDN);
                mpfr_add(t, r1, r2, MPFR_RNDN);
                mpfr_mul_d(t, t, -a, MPFR_RNDN);
                b = mpfr_to_fmt(f, t);
                mpfr_mul(t, r1, r2, MPFR_RNDN);
                mpfr_mul_d(t, t, a, MPFR_RNDN);
                c = mpfr_to_fmt(f, t);
            }
        }
        eval_eq(f, a, b, c, &acc, &nai);
        if (sub == 2)
            CHECKF(orc.dbl, "exact double root expected: a=%a b=%a c=%a", a, b, c);
    }
    mpfr_clears(r1, r2, t, (mpfr_ptr)0);
    total_equations += acc.n;
    report(name, f, &acc, &nai);
}

/* Set 3: huge |b| against a and c. Four equal parts: (i) a, c = m 2^[-4,4]
 * and |b| / sqrt|ac| = 2^[P/2, P+20] (the textbook formula cancels); (ii)
 * |b| / sqrt|ac| = 2^[60, 140] with a, c = m 2^[-40,40] (around the switch
 * to the b-dominant formulas); (iii) a, c = m 2^[emin, -1], b = m
 * 2^[emax/2, emax] (b^2 overflows); (iv) a, c = m 2^[emin, emin/2], b = m
 * 2^[emax/2, emax] (roots overflow and underflow). */
static void set_huge_b(const fmt *f)
{
    stats acc = {0}, nai = {0};
    long n = long_run ? 1000000 : 100000;
    rng_seed(f->is32 ? 301 : 302);
    for (long i = 0; i < n; i++) {
        double a, b, c;
        int ea, ec;
        switch (i & 3) {
        case 0:
        case 1: {
            int lo = (i & 3) ? 60 : f->p / 2, hi = (i & 3) ? 140 : f->p + 20;
            int r = (i & 3) ? 40 : 4;
            if (f->is32 && (i & 3)) { /* keep b within float range */
                lo = 20;
                hi = 60;
                r = 20;
            }
            ea = rng_int(-r, r);
            ec = rng_int(-r, r);
            a = rand_val(f, ea, ea);
            c = rand_val(f, ec, ec);
            int eb = (ea + ec) / 2 + rng_int(lo, hi);
            b = rand_val(f, eb, eb);
            break;
        }
        case 2:
            a = rand_val(f, f->emin, -1);
            c = rand_val(f, f->emin, -1);
            b = rand_val(f, f->emax / 2, f->emax);
            break;
        default:
            a = rand_val(f, f->emin, f->emin / 2);
            c = rand_val(f, f->emin, f->emin / 2);
            b = rand_val(f, f->emax / 2, f->emax);
            break;
        }
        eval_eq(f, a, b, c, &acc, &nai);
    }
    total_equations += acc.n;
    report("3 huge b", f, &acc, &nai);
}

/* Set 3b: tiny |b| against a and c: |b| / sqrt|ac| = 2^-[10, 140] (float32:
 * 2^-[10, 60]) with a, c = m 2^[-40,40], or b = m 2^[emin, emin/2] with a,
 * c = m 2^[-4,4] (b^2 underflows). */
static void set_tiny_b(const fmt *f)
{
    stats acc = {0}, nai = {0};
    long n = long_run ? 500000 : 50000;
    rng_seed(f->is32 ? 311 : 312);
    for (long i = 0; i < n; i++) {
        double a, b, c;
        if (i & 1) {
            int r = f->is32 ? 20 : 40;
            int ea = rng_int(-r, r), ec = rng_int(-r, r);
            a = rand_val(f, ea, ea);
            c = rand_val(f, ec, ec);
            int eb = (ea + ec) / 2 - rng_int(10, f->is32 ? 60 : 140);
            b = rand_val(f, eb, eb);
        } else {
            a = rand_val(f, -4, 4);
            c = rand_val(f, -4, 4);
            b = rand_val(f, f->emin, f->emin / 2);
        }
        eval_eq(f, a, b, c, &acc, &nai);
    }
    total_equations += acc.n;
    report("3b tiny b", f, &acc, &nai);
}

/* One hand-made equation of set 4. */
typedef struct {
    double a, b, c;
} hard_case;

/* float64 cases. The first is the published one in which the textbook
 * formula merges two distinct roots; the next is Kahan's discriminant
 * example (a x^2 - 2 b' x + c with b'^2 - ac = 1.890625 exactly); the
 * decimal ones are in the style of Forsythe's classic examples (rounded to
 * the format: the oracle solves what the solver sees); the rest are
 * constructed: cancellation, b^2 or 4ac overflowing or underflowing,
 * roots at the ends of the range, near-double complex pairs. */
static const hard_case hard64[] = {
    {1.0, 1.0 + 0x1p-52, 0.25 + 0x1p-53},
    {94906265.625, -189812534.0, 94906268.375},
    {1.0, -(2.0 + 0x1p-51), 1.0 + 0x1p-51},
    {1.0, -2.0, 1.0 + 0x1p-52},
    {3.0, -6.0, 3.0 + 0x1p-50},
    {6.0, 5.0, -4.0},
    {6e30, 5e30, -4e30},
    {6e200, 5e200, -4e200},
    {1e-30, -1e30, 1e30},
    {1.0, -1e5, 1.0},
    {1.0, -4.0, 3.9999999},
    {1.0, 0x1p30, 1.0},
    {1.0, -0x1p600, 1.0},
    {0x1p600, 0.0, -0x1p600},
    {0x1p600, 0x1p600, -0x1p600},
    {0x1p-600, -3 * 0x1p-600, 0x1p-599},
    {0x1p-1000, -0x1p-999, 0x1p-1000},
    {0x1.8p-1022, 0x1p-1000, -0x1p-1022},
    {0x1p-1074, 1.0, 0x1p-1074},
    {0x1p-1074, -0x1p-1074, -0x1p-1074},
    {0x1p1023, 0x1p1023, 0x1p1022},
    {0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023},
    {1.0, 0x1.fffffffffffffp1023, 1.0},
    {0x1p-1022, 0x1p-1022, 0x1p1023},
    {1.0, 1e-200, 1.0},
    {1.0, 1e-170, -1e-300},
    {0x1.0000000000001p0, -0x1.0000000000001p1, 0x1.0000000000001p0},
    {0x1.fffffffffffffp-1, -2.0, 0x1.0000000000001p0},
};

/* float32 cases: the float analog of the published case, a Kahan-style
 * discriminant (b'^2 - ac = 0.140625), and the same kinds of constructed
 * cases as for float64 at float32's range. */
static const hard_case hard32[] = {
    {1.0, 1.0 + 0x1p-23, 0.25 + 0x1p-24},
    {3036.625, -6074.0, 3037.375},
    {1.0, -(2.0 + 0x1p-22), 1.0 + 0x1p-22},
    {1.0, -2.0, 1.0 + 0x1p-23},
    {6.0, 5.0, -4.0},
    {6e30, 5e30, -4e30},
    {1e-30, -1e30, 1e30},
    {1.0, -1e5, 1.0},
    {1.0, -4.0, 3.9999999},
    {1.0, 0x1p14, 1.0},
    {1.0, -0x1p70, 1.0},
    {0x1p70, 0.0, -0x1p70},
    {0x1p-70, -3 * 0x1p-70, 0x1p-69},
    {0x1p-149, 1.0, 0x1p-149},
    {0x1p127, 0x1p127, 0x1p126},
    {0x1.fffffep127, -0x1.fffffep127, -0x1.fffffep127},
    {1.0, 0x1.fffffep127, 1.0},
    {0x1p-126, 0x1p-126, 0x1p127},
    {1.0, 1e-30, 1.0},
    {0x1.000002p0, -0x1.000002p1, 0x1.000002p0},
};

/* Set 4: the hand-made hard cases. */
static void set_hard(const fmt *f)
{
    stats acc = {0}, nai = {0};
    const hard_case *hc = f->is32 ? hard32 : hard64;
    size_t n = f->is32 ? sizeof hard32 / sizeof hard32[0] : sizeof hard64 / sizeof hard64[0];
    for (size_t i = 0; i < n; i++) {
        double a = to_fmt(f, hc[i].a), b = to_fmt(f, hc[i].b), c = to_fmt(f, hc[i].c);
        eval_eq(f, a, b, c, &acc, &nai);
        /* Distinct roots must stay distinct (the first case). */
        if (i == 0) {
            roots r = solve(f, 0, a, b, c);
            CHECKF(r.v[0] < r.v[2], "%s: distinct roots merged", f->name);
        }
    }
    total_equations += acc.n;
    report("4 hard cases", f, &acc, &nai);
}

/* Decodes the little-endian coefficient k of an (N, 3) array. */
static double gen_coef(const fmt *f, const unsigned char *p, size_t k)
{
    if (f->is32) {
        uint32_t u = 0;
        float x;
        for (int i = 3; i >= 0; i--)
            u = u << 8 | p[4 * k + (size_t)i];
        memcpy(&x, &u, 4);
        return x;
    }
    uint64_t u = 0;
    double x;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[8 * k + (size_t)i];
    memcpy(&x, &u, 8);
    return x;
}

/* Set 5: the quadratic mixture of `gpubatch gen` (runtime/tools/gen.h), one row
 * per kind and a total. */
static void set_mixture(const fmt *f)
{
    enum { SEED = 2024 };
    stats acc[GEN_QUAD_KINDS + 1] = {{0}}, nai[GEN_QUAD_KINDS + 1] = {{0}};
    size_t n = long_run ? 2000000 : 200000;
    size_t es = f->is32 ? 4 : 8;
    unsigned char *buf = malloc(n * 3 * es);
    if (!buf) {
        CHECK(buf != NULL);
        return;
    }
    gen_quadratic_fill(SEED, f->is32 ? DT_F32 : DT_F64, 0, n, buf);
    for (size_t r = 0; r < n; r++) {
        int k = (int)gen_quadratic_kind(SEED, r);
        double a = gen_coef(f, buf, 3 * r), b = gen_coef(f, buf, 3 * r + 1),
               c = gen_coef(f, buf, 3 * r + 2);
        eval_eq(f, a, b, c, &acc[k], &nai[k]);
        eval_eq(f, a, b, c, &acc[GEN_QUAD_KINDS], &nai[GEN_QUAD_KINDS]);
    }
    free(buf);
    char name[64];
    for (int k = 0; k <= GEN_QUAD_KINDS; k++) {
        snprintf(name, sizeof name, "5 mixture: %s",
                 k < GEN_QUAD_KINDS ? gen_quadratic_kind_name((gen_quad_kind)k) : "all");
        report(name, f, &acc[k], &nai[k]);
    }
    total_equations += acc[GEN_QUAD_KINDS].n;
}

/* ---- set 6: degenerate cases, exact ------------------------------------ */

/* Expected part: NaN, or a value compared bit for bit (zero signs included). */
#define QNAN NAN

/* Checks one equation's four parts bit for bit (NaN: any positive NaN). */
static int expect_bits(const fmt *f, double a, double b, double c, double e0, double e1,
                       double e2, double e3)
{
    roots r = solve(f, 0, a, b, c);
    double e[4] = {e0, e1, e2, e3};
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        double ei = to_fmt(f, e[i]);
        if (isnan(ei))
            ok &= isnan(r.v[i]) && !signbit(r.v[i]);
        else
            ok &= memcmp(&ei, &r.v[i], 8) == 0;
    }
    CHECKF(ok, "%s a=%a b=%a c=%a: got (%a %a) (%a %a), want (%a %a) (%a %a)", f->name, a, b, c,
           r.v[0], r.v[1], r.v[2], r.v[3], e0, e1, e2, e3);
    return ok;
}

/* Set 6: every degenerate case against the documented convention. The
 * extreme values use the format's range: B = 2^(emax - 3), S = 2^(emin + 3). */
static void set_degenerate(const fmt *f)
{
    double inf = INFINITY, B = ldexp(1.0, f->emax - 3), S = ldexp(1.0, f->emin + 3);
    double tiny = ldexp(1.0, f->etiny);
    long n = 0, ok = 0;
    stats acc = {0}, nai = {0};
#define EXPECT(a, b, c, e0, e1, e2, e3)                                                          \
    do {                                                                                       \
        n++;                                                                                   \
        ok += expect_bits(f, a, b, c, e0, e1, e2, e3);                                         \
        eval_eq(f, a, b, c, &acc, &nai);                                                       \
    } while (0)

    /* a = 0, b != 0: linear, x1 = -c/b correctly rounded, x2 = NaN. */
    EXPECT(0.0, 2.0, -6.0, 3.0, 0.0, QNAN, QNAN);
    EXPECT(-0.0, -4.0, 2.0, 0.5, 0.0, QNAN, QNAN);
    EXPECT(0.0, 3.0, 1.0, to_fmt(f, -1.0 / 3.0), 0.0, QNAN, QNAN);
    EXPECT(0.0, 2.0, 0.0, 0.0, 0.0, QNAN, QNAN);
    EXPECT(0.0, -2.0, 0.0, 0.0, 0.0, QNAN, QNAN);
    EXPECT(-0.0, 2.0, -0.0, 0.0, 0.0, QNAN, QNAN);
    EXPECT(0.0, S, B, -inf, 0.0, QNAN, QNAN);   /* -c/b overflows */
    EXPECT(0.0, -S, B, inf, 0.0, QNAN, QNAN);
    EXPECT(0.0, B, S, -0.0, 0.0, QNAN, QNAN);   /* -c/b underflows to -0 */
    EXPECT(0.0, B, -S, 0.0, 0.0, QNAN, QNAN);
    EXPECT(0.0, 1.0, tiny, -tiny, 0.0, QNAN, QNAN);
    /* a = b = 0: no solution (c != 0) or every x (c = 0): all NaN. */
    EXPECT(0.0, 0.0, 1.0, QNAN, QNAN, QNAN, QNAN);
    EXPECT(-0.0, 0.0, -5.0, QNAN, QNAN, QNAN, QNAN);
    EXPECT(0.0, 0.0, 0.0, QNAN, QNAN, QNAN, QNAN);
    EXPECT(-0.0, -0.0, -0.0, QNAN, QNAN, QNAN, QNAN);
    /* c = 0: roots 0 and -b/a, ascending, the zero +0. */
    EXPECT(1.0, -3.0, 0.0, 0.0, 0.0, 3.0, 0.0);
    EXPECT(1.0, 3.0, -0.0, -3.0, 0.0, 0.0, 0.0);
    EXPECT(-2.0, 3.0, 0.0, 0.0, 0.0, 1.5, 0.0);
    EXPECT(2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    EXPECT(-2.0, -0.0, -0.0, 0.0, 0.0, 0.0, 0.0);
    EXPECT(S, -B, 0.0, 0.0, 0.0, inf, 0.0);     /* -b/a overflows */
    EXPECT(S, B, 0.0, -inf, 0.0, 0.0, 0.0);
    EXPECT(B, S, 0.0, -0.0, 0.0, 0.0, 0.0);     /* -b/a underflows: -0 before +0 */
    EXPECT(B, -S, 0.0, 0.0, 0.0, 0.0, 0.0);
    /* b = 0: +-sqrt(-c/a), exact negatives, or a complex pair with re = +0. */
    EXPECT(1.0, 0.0, -4.0, -2.0, 0.0, 2.0, 0.0);
    EXPECT(1.0, -0.0, -4.0, -2.0, 0.0, 2.0, 0.0);
    EXPECT(-4.0, 0.0, 1.0, -0.5, 0.0, 0.5, 0.0);
    EXPECT(1.0, 0.0, 4.0, 0.0, 2.0, 0.0, -2.0);
    EXPECT(-1.0, -0.0, -9.0, 0.0, 3.0, 0.0, -3.0);
    EXPECT(1.0, 0.0, -2.0, to_fmt(f, -sqrt(2.0)), 0.0, to_fmt(f, sqrt(2.0)), 0.0);
    EXPECT(1.0, 0.0, 2.0, 0.0, to_fmt(f, sqrt(2.0)), 0.0, to_fmt(f, -sqrt(2.0)));
    double rb = ldexp(1.0, (f->emax - 4 - (f->emin + 3)) / 2);
    EXPECT(S, 0.0, -B / 2, -rb, 0.0, rb, 0.0);     /* c/a overflows, the roots do not */
    EXPECT(tiny, 0.0, B, 0.0, inf, 0.0, -inf);     /* the imaginary part overflows */
    int kc = f->etiny + (f->emax - 3 - f->etiny) % 2;
    double rs = ldexp(1.0, (kc - (f->emax - 3)) / 2);
    EXPECT(B, 0.0, -ldexp(1.0, kc), -rs, 0.0, rs, 0.0); /* exact subnormal roots */
    /* Exact double roots: x1 == x2 bit for bit. */
    EXPECT(1.0, -2.0, 1.0, 1.0, 0.0, 1.0, 0.0);
    EXPECT(4.0, 4.0, 1.0, -0.5, 0.0, -0.5, 0.0);
    EXPECT(9.0, -6.0, 1.0, to_fmt(f, 1.0 / 3.0), 0.0, to_fmt(f, 1.0 / 3.0), 0.0);
    /* Roots at the ends of the range: correctly signed infinities and zeros. */
    EXPECT(S, -B, S, ldexp(1.0, f->emin - f->emax + 6), 0.0, inf, 0.0);
    EXPECT(B, -S, -B, -1.0, 0.0, 1.0, 0.0);
    /* NaN or infinite coefficients: all NaN. */
    double vals[] = {QNAN, -QNAN, inf, -inf};
    for (int k = 0; k < 4; k++) {
        EXPECT(vals[k], 1.0, 1.0, QNAN, QNAN, QNAN, QNAN);
        EXPECT(1.0, vals[k], 1.0, QNAN, QNAN, QNAN, QNAN);
        EXPECT(1.0, 1.0, vals[k], QNAN, QNAN, QNAN, QNAN);
        EXPECT(0.0, vals[k], 0.0, QNAN, QNAN, QNAN, QNAN);
        EXPECT(vals[k], 0.0, 0.0, QNAN, QNAN, QNAN, QNAN);
    }
#undef EXPECT
    degenerate_n += n;
    degenerate_ok += ok;
    total_equations += n;
    report("6 degenerate", f, &acc, &nai);
}

/* Checks the double-root and symmetry conventions on random b = 0 and exact
 * double-root equations across the exponent range. */
static void set_structure(const fmt *f)
{
    stats acc = {0}, nai = {0};
    long n = long_run ? 400000 : 40000;
    rng_seed(f->is32 ? 601 : 602);
    for (long i = 0; i < n; i++) {
        double a = rand_val(f, f->emin, f->emax), c = rand_val(f, f->emin, f->emax);
        eval_eq(f, a, (i & 1) ? 0.0 : -0.0, c, &acc, &nai);
    }
    total_equations += acc.n;
    report("6b b = 0, full range", f, &acc, &nai);
}

/* Runs every set for one format. */
static void run_format(const fmt *f)
{
    char title[64];
    snprintf(title, sizeof title, "%s", f->name);
    table_header(title);
    set_random(f, "1 random, full exponent range", f->emin, f->emax, f->is32 ? 101 : 102);
    set_random(f, "1b random, exponents [-40, 40]", -40, 40, f->is32 ? 111 : 112);
    set_near_double(f, "2 near-double roots", f->is32 ? 55 : 450, f->emax, f->is32 ? 201 : 202);
    set_near_double(f, "2b near-double, |r| < 2^11, |a| < 2^9", 10, 8, f->is32 ? 211 : 212);
    set_huge_b(f);
    set_tiny_b(f);
    set_hard(f);
    set_mixture(f);
    set_structure(f);
    set_degenerate(f);
}

/* Runs the accuracy sets of both formats and prints the tables. */
int main(int argc, char **argv)
{
    const char *env = getenv("QD_TEST_LONG");
    long_run = (argc > 1 && strcmp(argv[1], "--long") == 0) || (env && *env && *env != '0');
    oracle_init();
    printf("Quadratic solver accuracy (ulps; per equation the worst of re1, im1, re2, "
           "im2)%s\n", long_run ? ", long run" : "");
    run_format(&F64);
    run_format(&F32);
    printf("\n%ld equations per solver; %ld of %ld degenerate cases bit-exact\n",
           total_equations, degenerate_ok, degenerate_n);
    printf("float32: %ld equations on the float-native path; %ld of them round a part "
           "differently from the general path\n", fast_n, fast_differ);
    CHECKF(fast_n > total_equations / 8, "float-native path taken by %ld equations only", fast_n);
    oracle_free();
    return check_summary();
}
