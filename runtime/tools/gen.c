/* gen.c - counter-based synthetic data: uniform and normal arrays, and a
 * mixture of quadratic-equation coefficients.
 *
 * Reproducibility rests on three rules kept throughout this file: every
 * value is a pure function of (seed, index); the only floating-point
 * operations are IEEE + - * / sqrt and conversions, each correctly rounded
 * to nearest; and all constants are written as exact hexadecimal literals.
 * Changing any mixing constant, key derivation, word assignment or
 * operation order changes users' data: the unit test pins the bytes. */
#include "gen.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "gen.c needs IEEE double evaluation (FLT_EVAL_METHOD 0) for reproducible output"
#endif

#if defined(__FAST_MATH__)
#error "gen.c must not be compiled with fast-math: its output would depend on the compiler"
#endif

/* No fused multiply-add: contraction would change results between machines. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&                              \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GEN_HOST_LE 1
#else
#define GEN_HOST_LE 0
#endif

#define GEN_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* Stream tags: each purpose draws from its own key. */
enum { TAG_SCALAR = 1, TAG_QUADRATIC = 2, TAG_RETRY = 3 };

/* Quadratic row r uses counters 16r .. 16r+7 (16r+8 .. 16r+15 are spare). */
#define QUAD_WORDS 16

typedef struct {
    uint64_t a, b;
} gen_key;

/* ---- mixing ---------------------------------------------------------- */

/* First 64-bit finalizer (the splitmix64 output function). */
static inline uint64_t mix1(uint64_t z)
{
    z ^= z >> 30;
    z *= UINT64_C(0xbf58476d1ce4e5b9);
    z ^= z >> 27;
    z *= UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    return z;
}

/* Second 64-bit finalizer with different shifts and multipliers, so that two
 * keys never give shifted copies of one sequence. */
static inline uint64_t mix2(uint64_t z)
{
    z ^= z >> 27;
    z *= UINT64_C(0x3c79ac492ba7b653);
    z ^= z >> 33;
    z *= UINT64_C(0x1c69b3f74ac4ae35);
    z ^= z >> 27;
    return z;
}

/* Derives the key of stream `tag` for a seed. */
static gen_key key_make(uint64_t seed, uint64_t tag)
{
    gen_key k;
    uint64_t t = mix2(tag * UINT64_C(0xd1b54a32d192ed03) + UINT64_C(0x8bb84b93962eacc9));
    k.a = mix1(seed + t);
    k.b = mix2(mix1(seed ^ t ^ UINT64_C(0x4f1bbcdcbfa53e0b)) + k.a);
    return k;
}

/* Word i of the stream with key k. */
static inline uint64_t word(gen_key k, uint64_t i)
{
    return mix2(mix1(k.a + i * GEN_GOLDEN) ^ k.b);
}

/* Uniform double in [0, 1) from the top 53 bits of w. */
static inline double unit(uint64_t w)
{
    return (double)(w >> 11) * 0x1p-53;
}

/* ---- little-endian stores -------------------------------------------- */

/* Stores the low `size` bytes of v at p, least significant first. */
static inline void st_uint(unsigned char *p, uint64_t v, unsigned size)
{
#if GEN_HOST_LE
    switch (size) {
    case 1: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default:
        memcpy(p, &v, 8);
        break;
    }
#else
    for (unsigned i = 0; i < size; i++)
        p[i] = (unsigned char)(v >> (8 * i));
#endif
}

/* Stores a float32 little-endian. */
static inline void st_f32(unsigned char *p, float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    st_uint(p, x, 4);
}

/* Stores a float64 little-endian. */
static inline void st_f64(unsigned char *p, double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    st_uint(p, x, 8);
}

/* ---- deterministic elementary functions ------------------------------ */

/* ln 2 split so that e * LN2_HI is exact for |e| < 2^21. */
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define PIO2 0x1.921fb54442d18p+0

/* ln(x 2^e0) for a positive, finite, normal x: x 2^e0 = m 2^e with m in
 * [sqrt(1/2), sqrt(2)], then ln m = 2 atanh(s), s = (m - 1) / (m + 1),
 * |s| <= 0.172, by its series to s^23 (truncation below 1e-18). Branch-free
 * so that the Box-Muller loop does not stall on random data. */
static inline double log_normal(double x, int e0)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    uint64_t frac = b & UINT64_C(0x000fffffffffffff);
    uint64_t big = frac > UINT64_C(0x6a09e667f3bcd); /* m > sqrt(2): use m / 2 */
    int e = (int)(b >> 52) - 1023 + (int)big + e0;
    b = frac | ((UINT64_C(1023) - big) << 52);
    double m;
    memcpy(&m, &b, 8);
    double f = m - 1.0; /* exact (Sterbenz) */
    double s = f / (m + 1.0);
    double z = s * s;
    double p = 0x1.642c8590b2164p-4; /* 2/23 */
    p = 0x1.8618618618618p-4 + z * p; /* 2/21 */
    p = 0x1.af286bca1af28p-4 + z * p; /* 2/19 */
    p = 0x1.e1e1e1e1e1e1ep-4 + z * p; /* 2/17 */
    p = 0x1.1111111111111p-3 + z * p; /* 2/15 */
    p = 0x1.3b13b13b13b14p-3 + z * p; /* 2/13 */
    p = 0x1.745d1745d1746p-3 + z * p; /* 2/11 */
    p = 0x1.c71c71c71c71cp-3 + z * p; /* 2/9 */
    p = 0x1.2492492492492p-2 + z * p; /* 2/7 */
    p = 0x1.999999999999ap-2 + z * p; /* 2/5 */
    p = 0x1.5555555555555p-1 + z * p; /* 2/3 */
    double lnm = 2.0 * s + s * (z * p);
    double de = (double)e;
    return de * LN2_HI + (de * LN2_LO + lnm);
}

/* Natural logarithm for any double: special cases, subnormals scaled up. */
double gen_log(double x)
{
    if (!(x > 0.0))
        return x == 0.0 ? -HUGE_VAL : NAN;
    if (x == HUGE_VAL)
        return x;
    if (x < 0x1p-1022) /* subnormal: 2^54 x is normal and exact */
        return log_normal(x * 0x1p54, -54);
    return log_normal(x, 0);
}

/* x with its sign flipped when flip is nonzero (exact, branch-free). */
static inline double negate_if(double x, uint64_t flip)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    b ^= (uint64_t)(flip != 0) << 63;
    memcpy(&x, &b, 8);
    return x;
}

/* sin and cos of 2 pi u: v = 4u is exact, q = nearest integer to v, and the
 * remainder x = (v - q) pi/2 lies in [-pi/4, pi/4] where Taylor series to
 * x^17 (sin) and x^16 (cos) are accurate to below 1e-17; the quadrant then
 * swaps and negates them without branches. */
static inline void sincos_turn(double u, double *s, double *c)
{
    double v = u * 4.0;
    int q = (int)(v + 0.5);
    double x = (v - (double)q) * PIO2;
    double z = x * x;

    double ps = 0x1.952c77030ad4ap-49;         /* 1/17! */
    ps = -0x1.ae7f3e733b81fp-41 + z * ps;      /* -1/15! */
    ps = 0x1.6124613a86d09p-33 + z * ps;       /* 1/13! */
    ps = -0x1.ae64567f544e4p-26 + z * ps;      /* -1/11! */
    ps = 0x1.71de3a556c734p-19 + z * ps;       /* 1/9! */
    ps = -0x1.a01a01a01a01ap-13 + z * ps;      /* -1/7! */
    ps = 0x1.1111111111111p-7 + z * ps;        /* 1/5! */
    ps = -0x1.5555555555555p-3 + z * ps;       /* -1/3! */
    double sx = x + x * (z * ps);

    double pc = 0x1.ae7f3e733b81fp-45;         /* 1/16! */
    pc = -0x1.93974a8c07c9dp-37 + z * pc;      /* -1/14! */
    pc = 0x1.1eed8eff8d898p-29 + z * pc;       /* 1/12! */
    pc = -0x1.27e4fb7789f5cp-22 + z * pc;      /* -1/10! */
    pc = 0x1.a01a01a01a01ap-16 + z * pc;       /* 1/8! */
    pc = -0x1.6c16c16c16c17p-10 + z * pc;      /* -1/6! */
    pc = 0x1.5555555555555p-5 + z * pc;        /* 1/4! */
    double cx = (1.0 - 0.5 * z) + (z * z) * pc;

    /* Quadrant q: (sin, cos) = (sx, cx), (cx, -sx), (-sx, -cx), (-cx, sx). */
    uint64_t uq = (uint64_t)q;
    double s0 = (uq & 1) ? cx : sx;
    double c0 = (uq & 1) ? sx : cx;
    *s = negate_if(s0, uq & 2);
    *c = negate_if(c0, (uq + 1) & 2);
}

/* sin and cos of 2 pi u. */
void gen_sincos_turn(double u, double *s, double *c)
{
    sincos_turn(u, s, c);
}

/* ---- type information ------------------------------------------------ */

/* Limits of an integer type, exact and as doubles (64-bit maxima round up
 * to 2^63 and 2^64). */
struct ilim {
    unsigned size;
    int is_signed;
    double dlo, dhi;
    uint64_t lo, hi; /* two's complement bit patterns of the limits */
};

/* Fills *l for an integer dtype; returns 0, or -1 for other types. */
static int ilim_of(dt_type t, struct ilim *l)
{
    unsigned bits;
    switch (t) {
    case DT_I8: case DT_U8: bits = 8; break;
    case DT_I16: case DT_U16: bits = 16; break;
    case DT_I32: case DT_U32: bits = 32; break;
    case DT_I64: case DT_U64: bits = 64; break;
    default: return -1;
    }
    l->size = bits / 8;
    l->is_signed = dt_is_signed_int(t);
    if (l->is_signed) {
        int64_t mx = (int64_t)(UINT64_MAX >> (65 - bits));
        l->lo = (uint64_t)(-mx - 1);
        l->hi = (uint64_t)mx;
        l->dlo = (double)(-mx - 1);
        l->dhi = (double)mx;
    } else {
        l->lo = 0;
        l->hi = UINT64_MAX >> (64 - bits);
        l->dlo = 0.0;
        l->dhi = (double)l->hi;
    }
    return 0;
}

/* Nonzero when the finite double p is a whole number. */
static int is_whole(double p)
{
    if (p >= 0x1p52 || p <= -0x1p52)
        return 1;
    return (double)(int64_t)p == p;
}

/* Converts a whole double within l's limits to the type's bit pattern
 * (saturating 2^63 and 2^64 to the maxima). */
static uint64_t ilim_bits(const struct ilim *l, double p)
{
    if (p >= l->dhi)
        return l->hi;
    if (l->is_signed)
        return (uint64_t)(int64_t)p;
    return (uint64_t)p;
}

/* Rounds v to the nearest integer (halves away from zero), clamped to l's
 * range, as a bit pattern. */
static inline uint64_t round_clamp(const struct ilim *l, double v)
{
    if (!(v > l->dlo))
        return l->lo;
    if (v >= l->dhi)
        return l->hi;
    if (l->is_signed) {
        int64_t t = (int64_t)v;
        double f = v - (double)t; /* exact fractional part */
        if (f >= 0.5)
            t++;
        else if (f <= -0.5)
            t--;
        return (uint64_t)t;
    }
    uint64_t t = (uint64_t)v;
    if (v - (double)t >= 0.5)
        t++;
    return t;
}

/* Nonzero for the complex types. */
static int is_complex(dt_type t)
{
    return t == DT_C64 || t == DT_C128;
}

/* Largest finite value of a float or complex type's parts, 0 for others. */
static double float_max(dt_type t)
{
    if (t == DT_F32 || t == DT_C64)
        return FLT_MAX;
    if (t == DT_F64 || t == DT_C128)
        return DBL_MAX;
    return 0.0;
}

/* ---- specification --------------------------------------------------- */

/* Sets the documented defaults. */
void gen_spec_defaults(gen_spec *s, gen_dist dist, dt_type dtype, uint64_t seed)
{
    struct ilim l;

    s->dist = dist;
    s->dtype = dtype;
    s->seed = seed;
    s->p1 = 0.0;
    s->p2 = 1.0;
    if (ilim_of(dtype, &l) != 0)
        return;
    if (dist == GEN_UNIFORM) {
        s->p1 = l.dlo;
        s->p2 = l.dhi;
    } else {
        double range = 1.0;
        for (unsigned i = 0; i < l.size * 8; i++)
            range *= 2.0; /* 2^bits, exact */
        s->p1 = l.is_signed ? 0.0 : range * 0.5;
        s->p2 = range * 0.125;
    }
}

/* Absolute value by comparison (exact). */
static double absd(double x)
{
    return x < 0.0 ? -x : x;
}

/* Checks a specification. */
int gen_spec_check(const gen_spec *s, io_status *st)
{
    struct ilim l;
    const char *ty = dt_name(s->dtype);
    double p1 = s->p1, p2 = s->p2;

    if (s->dist != GEN_UNIFORM && s->dist != GEN_NORMAL)
        return io_fail(st, IO_ERR_FORMAT, "unknown distribution");
    if (dt_size(s->dtype) == 0)
        return io_fail(st, IO_ERR_FORMAT, "unknown data type");
    if (p1 - p1 != 0.0 || p2 - p2 != 0.0) /* NaN or infinite */
        return io_fail(st, IO_ERR_FORMAT, "parameters must be finite (got %g and %g)", p1, p2);

    int is_int = ilim_of(s->dtype, &l) == 0;
    double fmax = float_max(s->dtype);

    if (s->dist == GEN_UNIFORM) {
        if (is_int) {
            if (!is_whole(p1) || !is_whole(p2))
                return io_fail(st, IO_ERR_FORMAT,
                               "bounds %.17g and %.17g must be whole numbers for %s", p1, p2, ty);
            if (p1 < l.dlo || p2 > l.dhi)
                return io_fail(st, IO_ERR_FORMAT, "range [%.17g, %.17g] does not fit in %s", p1, p2,
                               ty);
            if (!(p1 <= p2))
                return io_fail(st, IO_ERR_FORMAT, "range [%.17g, %.17g] is empty (low > high)", p1,
                               p2);
            return 0;
        }
        if (p1 < -fmax || p1 > fmax || p2 < -fmax || p2 > fmax)
            return io_fail(st, IO_ERR_FORMAT, "range [%g, %g) exceeds the %s range", p1, p2, ty);
        if (fmax == FLT_MAX) {
            if (!((float)p1 < (float)p2))
                return io_fail(st, IO_ERR_FORMAT, "range [%.9g, %.9g) is empty in %s", p1, p2, ty);
        } else if (!(p1 < p2)) {
            return io_fail(st, IO_ERR_FORMAT, "range [%.17g, %.17g) is empty (needs low < high)",
                           p1, p2);
        }
        return 0;
    }

    if (!(p2 >= 0.0))
        return io_fail(st, IO_ERR_FORMAT, "standard deviation %g must be >= 0", p2);
    if (is_int) {
        if (p1 < l.dlo || p1 > l.dhi)
            return io_fail(st, IO_ERR_FORMAT, "mean %.17g is outside the %s range", p1, ty);
        return 0;
    }
    if (!(absd(p1) + 9.0 * p2 <= fmax))
        return io_fail(st, IO_ERR_FORMAT, "mean %g +- 9 sd (sd %g) exceeds the %s range", p1, p2,
                       ty);
    return 0;
}

/* ---- uniform --------------------------------------------------------- */

/* An affine map [0,1) -> [lo, hi) that cannot overflow: the result is
 * (base + width * u) * scale, with halves when hi - lo overflows. */
struct span {
    double base, width, scale;
};

/* Builds the map for lo < hi, both finite. */
static struct span span_make(double lo, double hi)
{
    struct span sp = {lo, hi - lo, 1.0};
    if (sp.width - sp.width != 0.0) { /* hi - lo overflowed: both are huge, halving is exact */
        sp.base = lo * 0.5;
        sp.width = hi * 0.5 - lo * 0.5;
        sp.scale = 2.0;
    }
    return sp;
}

/* Largest double below x (x > -DBL_MAX). */
static double pred_f64(double x)
{
    uint64_t b;
    if (x == 0.0)
        return -0x1p-1074;
    memcpy(&b, &x, 8);
    b = x > 0.0 ? b - 1 : b + 1;
    memcpy(&x, &b, 8);
    return x;
}

/* Largest float below x (x > -FLT_MAX). */
static float pred_f32(float x)
{
    uint32_t b;
    if (x == 0.0f)
        return -0x1p-149f;
    memcpy(&b, &x, 4);
    b = x > 0.0f ? b - 1 : b + 1;
    memcpy(&x, &b, 4);
    return x;
}

/* Uniform float32 scalars j .. j+n-1 in [fl(p1), fl(p2)). */
static void fill_uniform_f32(gen_key k, double p1, double p2, uint64_t j, size_t n,
                             unsigned char *o)
{
    float top = (float)p2;
    float below = pred_f32(top);
    struct span sp = span_make((double)(float)p1, (double)top);

    for (size_t t = 0; t < n; t++) {
        double u = unit(word(k, j + t));
        float f = (float)((sp.base + sp.width * u) * sp.scale);
        st_f32(o + 4 * t, f < top ? f : below);
    }
}

/* Uniform float64 scalars j .. j+n-1 in [p1, p2). */
static void fill_uniform_f64(gen_key k, double p1, double p2, uint64_t j, size_t n,
                             unsigned char *o)
{
    double below = pred_f64(p2);
    struct span sp = span_make(p1, p2);

    for (size_t t = 0; t < n; t++) {
        double u = unit(word(k, j + t));
        double v = (sp.base + sp.width * u) * sp.scale;
        st_f64(o + 8 * t, v < p2 ? v : below);
    }
}

/* High and low 64-bit halves of the product a * b. */
static inline void mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#if defined(__SIZEOF_INT128__)
    __extension__ unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    *lo = (mid << 32) | (ll & 0xffffffffu);
#endif
}

/* Retry keys computed once per fill; later attempts (rarer than 2^-4)
 * derive theirs on the spot. */
#define RETRY_KEYS 4

/* Key of rejection attempt a >= 1 for a seed. */
static gen_key retry_key(uint64_t seed, uint64_t a)
{
    return key_make(seed, ((uint64_t)TAG_RETRY << 32) + a);
}

/* Offset in [0, n) for element i after attempt 0 was rejected: attempt a
 * uses word i of its own retry stream, so the result depends only on
 * (seed, i). */
static uint64_t retry_offset(uint64_t seed, const gen_key *rk, uint64_t i, uint64_t n,
                             uint64_t thresh)
{
    for (uint64_t a = 1;; a++) {
        uint64_t hi, lo;
        gen_key k = a <= RETRY_KEYS ? rk[a - 1] : retry_key(seed, a);
        mul128(word(k, i), n, &hi, &lo);
        if (lo >= thresh)
            return hi;
    }
}

/* Uniform integers on [p1, p2] (multiply-high with exact rejection). */
static void fill_uniform_int(gen_key k, uint64_t seed, const struct ilim *l, double p1,
                             double p2, uint64_t j, size_t n, unsigned char *o)
{
    uint64_t lo = ilim_bits(l, p1);
    uint64_t span = ilim_bits(l, p2) - lo + 1; /* 0 means 2^64 */
    uint64_t thresh = span ? (0 - span) % span : 0;
    unsigned size = l->size;
    gen_key rk[RETRY_KEYS];

    if (thresh)
        for (uint64_t a = 1; a <= RETRY_KEYS; a++)
            rk[a - 1] = retry_key(seed, a);
    for (size_t t = 0; t < n; t++) {
        uint64_t w = word(k, j + t), off = w;
        if (span) {
            uint64_t low;
            mul128(w, span, &off, &low);
            if (low < thresh)
                off = retry_offset(seed, rk, j + t, span, thresh);
        }
        st_uint(o + (size_t)size * t, lo + off, size);
    }
}

/* ---- normal ---------------------------------------------------------- */

#define NORMAL_PAIRS 128

/* Box-Muller pairs p0 .. p0+np-1 (np <= NORMAL_PAIRS): standard normal
 * scalars 2p0 .. 2(p0+np)-1 into z. Each stage is its own loop over
 * independent pairs so that the long polynomial chains overlap. */
static void normal_pairs(gen_key k, uint64_t p0, size_t np, double *z)
{
    double r[NORMAL_PAIRS], t[NORMAL_PAIRS];

    for (size_t i = 0; i < np; i++) {
        uint64_t w0 = word(k, 2 * (p0 + i)), w1 = word(k, 2 * (p0 + i) + 1);
        r[i] = (double)((UINT64_C(1) << 53) - (w0 >> 11)) * 0x1p-53; /* 1 - U, in (0, 1] */
        t[i] = unit(w1);
    }
    for (size_t i = 0; i < np; i++)
        r[i] = sqrt(-2.0 * log_normal(r[i], 0));
    for (size_t i = 0; i < np; i++) {
        double s, c;
        sincos_turn(t[i], &s, &c);
        z[2 * i] = r[i] * c;
        z[2 * i + 1] = r[i] * s;
    }
}

/* Normal scalars j .. j+n-1 with mean and sd, written as scalar type st. */
static void fill_normal(gen_key k, dt_type st, double mean, double sd, uint64_t j, size_t n,
                        unsigned char *o)
{
    double z[2 * NORMAL_PAIRS];
    struct ilim l;
    int is_int = ilim_of(st, &l) == 0;
    size_t size = dt_size(st);

    while (n > 0) {
        /* Whole pairs covering j .. j+m-1; skip = 1 when j is odd. */
        size_t skip = (size_t)(j & 1);
        size_t m = n < 2 * NORMAL_PAIRS - skip ? n : 2 * NORMAL_PAIRS - skip;
        normal_pairs(k, j >> 1, (skip + m + 1) / 2, z);
        const double *zz = z + skip;
        if (st == DT_F32) {
            for (size_t t = 0; t < m; t++)
                st_f32(o + 4 * t, (float)(mean + sd * zz[t]));
        } else if (st == DT_F64) {
            for (size_t t = 0; t < m; t++)
                st_f64(o + 8 * t, mean + sd * zz[t]);
        } else if (is_int) {
            for (size_t t = 0; t < m; t++)
                st_uint(o + size * t, round_clamp(&l, mean + sd * zz[t]), l.size);
        }
        o += m * size;
        j += m;
        n -= m;
    }
}

/* Fills elements [first, first+count): complex element i is scalars 2i, 2i+1. */
void gen_fill(const gen_spec *s, uint64_t first, size_t count, void *out)
{
    unsigned char *o = out;
    gen_key k = key_make(s->seed, TAG_SCALAR);
    dt_type st = s->dtype == DT_C64 ? DT_F32 : s->dtype == DT_C128 ? DT_F64 : s->dtype;
    uint64_t j = is_complex(s->dtype) ? 2 * first : first;
    size_t n = is_complex(s->dtype) ? 2 * count : count;
    struct ilim l;

    if (s->dist == GEN_NORMAL) {
        fill_normal(k, st, s->p1, s->p2, j, n, o);
    } else if (st == DT_F32) {
        fill_uniform_f32(k, s->p1, s->p2, j, n, o);
    } else if (st == DT_F64) {
        fill_uniform_f64(k, s->p1, s->p2, j, n, o);
    } else if (ilim_of(st, &l) == 0) {
        fill_uniform_int(k, s->seed, &l, s->p1, s->p2, j, n, o);
    }
}

/* ---- quadratic mixture ----------------------------------------------- */

/* Share of each kind, in 64ths; the row's 6 low bits of word 0 pick a slot. */
static const unsigned char quad_share[GEN_QUAD_KINDS] = {24, 12, 8, 8, 7, 1, 1, 1, 1, 1};

/* Names of the kinds, as messages and summaries print them. */
static const char *const quad_name[GEN_QUAD_KINDS] = {
    "ordinary", "wide", "near-double", "huge-b", "complex",
    "a-zero",   "ab-zero", "c-zero",   "b-zero", "all-zero",
};

/* Floating-point format the row is built for. */
struct qfmt {
    int p;     /* significand bits */
    int emax;  /* largest exponent */
    int etiny; /* exponent of the smallest subnormal */
};

/* Kind of a row from its slot in [0, 64). */
static gen_quad_kind kind_of_slot(unsigned slot)
{
    unsigned acc = 0;
    for (int kd = 0; kd < GEN_QUAD_KINDS; kd++) {
        acc += quad_share[kd];
        if (slot < acc)
            return (gen_quad_kind)kd;
    }
    return GEN_QUAD_ALL_ZERO;
}

/* Exact 2^e for e in [-1074, 1023]. */
static double pow2(int e)
{
    uint64_t b = e >= -1022 ? (uint64_t)(e + 1023) << 52 : UINT64_C(1) << (e + 1074);
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* m * 2^e with a single rounding, for m in [1, 2) and e in [-1074, 1023]. */
static double scale2(double m, int e)
{
    if (e >= -1022)
        return m * pow2(e);
    return (m * pow2(-1022)) * pow2(e + 1022);
}

/* Integer in [lo, hi] from the top 32 bits of w (bias below 2^-20). */
static int int_in(uint64_t w, int lo, int hi)
{
    return lo + (int)(((w >> 32) * (uint64_t)(hi - lo + 1)) >> 32);
}

/* +-m 2^e: sign from bit 0 of wm, a p-bit significand m in [1, 2) from its
 * top bits, and e uniform in [elo, ehi] from we. */
static double qval(uint64_t wm, uint64_t we, int p, int elo, int ehi)
{
    double m = 1.0 + (double)(wm >> (65 - p)) * pow2(1 - p);
    double v = scale2(m, int_in(we, elo, ehi));
    return (wm & 1) ? -v : v;
}

/* Signed zero chosen by bit `bit` of w. */
static double zero_of(uint64_t w, int bit)
{
    return (w >> bit) & 1 ? -0.0 : 0.0;
}

/* Builds row `row` for format f into c[0..2]; returns its kind. */
static gen_quad_kind quad_row(gen_key k, uint64_t row, const struct qfmt *f, double c[3])
{
    uint64_t w[8];
    for (int i = 0; i < 8; i++)
        w[i] = word(k, row * QUAD_WORDS + (uint64_t)i);
    gen_quad_kind kd = kind_of_slot((unsigned)(w[0] & 63));
    int p = f->p;
    double a, b, cc;

    switch (kd) {
    case GEN_QUAD_ORDINARY: {
        double r1 = -10.0 + 20.0 * unit(w[1]);
        double d = 0.5 + 9.5 * unit(w[2]);
        double r2 = (w[0] >> 6) & 1 ? r1 - d : r1 + d;
        a = qval(w[3], w[4], p, -4, 4);
        b = -(a * (r1 + r2));
        cc = (a * r1) * r2;
        break;
    }
    case GEN_QUAD_WIDE:
        a = qval(w[1], w[4], p, f->etiny, f->emax);
        b = qval(w[2], w[5], p, f->etiny, f->emax);
        cc = qval(w[3], w[6], p, f->etiny, f->emax);
        break;
    case GEN_QUAD_NEAR_DOUBLE: {
        unsigned sub = (unsigned)(w[0] >> 6) & 3;
        if (sub == 0) { /* exact double root: a = +-2^ea, r with h bits */
            int h = p / 2 - 1;
            double mr = pow2(h - 1) + (double)(w[1] >> (65 - h));
            double r = mr * pow2(int_in(w[5], -10, 10) - (h - 1));
            if (w[1] & 1)
                r = -r;
            a = pow2(int_in(w[4], -8, 8));
            if (w[3] & 1)
                a = -a;
            b = -2.0 * (a * r);
            cc = (a * r) * r;
        } else {
            double r = qval(w[1], w[5], p, -10, 10);
            double d = (1.0 + unit(w[2])) * pow2(-int_in(w[6], 12, p + 2));
            a = qval(w[3], w[4], p, -8, 8);
            if (sub < 3) { /* real roots r and r (1 +- d) */
                double r2 = (w[0] >> 8) & 1 ? r * (1.0 - d) : r * (1.0 + d);
                b = -(a * (r + r2));
                cc = (a * r) * r2;
            } else { /* complex roots r +- i |r| d */
                double q = (r < 0.0 ? -r : r) * d;
                b = -2.0 * (a * r);
                cc = a * (r * r + q * q);
            }
        }
        break;
    }
    case GEN_QUAD_HUGE_B:
        if ((w[0] >> 6) & 1) { /* b^2 overflows the type; roots stay normal */
            a = qval(w[1], w[4], p, 2 - f->emax / 4, -1);
            b = qval(w[2], w[5], p, f->emax / 2 + 1, (3 * f->emax) / 4);
            cc = qval(w[3], w[6], p, 2 - f->emax / 4, -1);
        } else { /* -b + sqrt(disc) cancels completely */
            a = qval(w[1], w[4], p, -4, 4);
            b = qval(w[2], w[5], p, p / 2 + 2, p + 8);
            cc = qval(w[3], w[6], p, -4, 4);
        }
        break;
    case GEN_QUAD_COMPLEX: {
        double re = -10.0 + 20.0 * unit(w[1]);
        double im = (0.125 + 2.0 * unit(w[2])) * ((re < 0.0 ? -re : re) + 1.0);
        a = qval(w[3], w[4], p, -8, 8);
        b = -2.0 * (a * re);
        cc = a * (re * re + im * im);
        break;
    }
    case GEN_QUAD_A_ZERO:
        a = zero_of(w[0], 6);
        b = qval(w[2], w[5], p, -8, 8);
        cc = qval(w[3], w[6], p, -8, 8);
        break;
    case GEN_QUAD_AB_ZERO:
        a = zero_of(w[0], 6);
        b = zero_of(w[0], 7);
        cc = qval(w[3], w[6], p, -8, 8);
        break;
    case GEN_QUAD_C_ZERO:
        a = qval(w[1], w[4], p, -8, 8);
        b = qval(w[2], w[5], p, -8, 8);
        cc = zero_of(w[0], 8);
        break;
    case GEN_QUAD_B_ZERO:
        a = qval(w[1], w[4], p, -8, 8);
        b = zero_of(w[0], 7);
        cc = qval(w[3], w[6], p, -8, 8);
        break;
    default:
        a = zero_of(w[0], 6);
        b = zero_of(w[0], 7);
        cc = zero_of(w[0], 8);
        break;
    }
    c[0] = a;
    c[1] = b;
    c[2] = cc;
    return kd;
}

/* Writes quadratic rows [first_row, first_row + rows). */
void gen_quadratic_fill(uint64_t seed, dt_type dtype, uint64_t first_row, size_t rows, void *out)
{
    static const struct qfmt f32 = {24, 127, -149}, f64 = {53, 1023, -1074};
    unsigned char *o = out;
    gen_key k = key_make(seed, TAG_QUADRATIC);
    double c[3];

    if (dtype != DT_F32 && dtype != DT_F64)
        return;
    for (size_t r = 0; r < rows; r++) {
        quad_row(k, first_row + r, dtype == DT_F32 ? &f32 : &f64, c);
        for (int i = 0; i < 3; i++) {
            if (dtype == DT_F32)
                st_f32(o + 4 * (3 * r + (size_t)i), (float)c[i]);
            else
                st_f64(o + 8 * (3 * r + (size_t)i), c[i]);
        }
    }
}

/* Kind of a row: the slot in word 0 of the row. */
gen_quad_kind gen_quadratic_kind(uint64_t seed, uint64_t row)
{
    gen_key k = key_make(seed, TAG_QUADRATIC);
    return kind_of_slot((unsigned)(word(k, row * QUAD_WORDS) & 63));
}

/* Share of kind kd in 64ths. */
unsigned gen_quadratic_share(gen_quad_kind kd)
{
    return (unsigned)kd < GEN_QUAD_KINDS ? quad_share[kd] : 0;
}

/* Name of kind kd. */
const char *gen_quadratic_kind_name(gen_quad_kind kd)
{
    return (unsigned)kd < GEN_QUAD_KINDS ? quad_name[kd] : "?";
}
