/* quadratic_math.h - roots of a x^2 + b x + c = 0 for real a, b, c, compiled
 * both as CUDA (the quadratic kernels) and as C (the CPU backend), so both run
 * the same operation sequence and give the same bits.
 *
 * Only IEEE operations that are correctly rounded on both sides are used:
 * + - * /, sqrt, fma, conversions, sign manipulation (fabs, copysign,
 * negation) and exact powers of two built from bits. Builds must keep
 * contraction off (-fmad=false, -ffp-contract=off), IEEE division and square
 * root (-prec-div=true -prec-sqrt=true) and subnormals (-ftz=false, no
 * fast-math); every fma here is written out.
 *
 * API
 *   qd_solve_f64 / qd_solve_f32 (a, b, c, &re1, &im1, &re2, &im2): the
 *   accurate solver; the roots are x1 = re1 + i im1 and x2 = re2 + i im2.
 *   qd_naive_f64 / qd_naive_f32: the textbook formula (-b +- sqrt(b^2 -
 *   4ac)) / 2a in the format's own arithmetic, with the same output order
 *   and no special cases, for comparison only. Their NaN results carry
 *   whatever sign and payload the hardware and compiler give (CPU and GPU
 *   differ there); every other bit matches.
 *
 * Conventions of the accurate solver (NaN below is the default quiet NaN,
 * positive sign, whatever NaN payload came in)
 *   two real roots       x1 <= x2 (ascending; a negative root that underflows
 *                        to -0 comes before +0), im1 = im2 = +0
 *   double root          (discriminant exactly zero) x1 == x2 bit for bit
 *   complex pair         x1 = re + i|im|, x2 = re - i|im|; re is +0 when b = 0
 *   b = 0 (a, c != 0)    real: x1 = -x2 exactly (x1 = -r, x2 = r); complex:
 *                        re = +0, im = +-sqrt(c/a)
 *   c = 0 (a != 0)       roots 0 and -b/a, each correctly rounded, ordered;
 *                        the exact zero is +0; b = c = 0 gives x1 = x2 = +0
 *   a = 0, b != 0        linear: x1 = -c/b correctly rounded (+0 when c = 0),
 *                        im1 = +0; x2 = NaN + i NaN (there is no second root)
 *   a = b = 0            re1 = im1 = re2 = im2 = NaN, both for c != 0 (no
 *                        solution) and c = 0 (every x solves it)
 *   NaN coefficient      all four parts NaN
 *   infinite coefficient all four parts NaN: an infinite coefficient is no
 *                        real number, and the limits depend on how the
 *                        coefficients grow relative to each other
 *   overflow, underflow  a root part beyond the largest finite value is the
 *                        correctly signed infinity; one below the normal
 *                        range is the (correctly signed) subnormal or zero
 *                        it rounds to, never NaN
 * A part whose exact value is zero is +0; a nonzero part that underflows
 * keeps the sign of its exact value.
 *
 * Accuracy
 *   A root part is "representable" when its exact value is zero or its
 *   magnitude lies in [smallest normal, largest finite]. For every equation
 *   with finite coefficients (subnormals included) whose root parts are all
 *   representable, every real and imaginary part is within 3 ulps of the
 *   exact value. The method below is in fact nearly correctly rounded: each
 *   part comes from one final rounding of a value accurate to about 2^-100
 *   relative (float64) or 2^-50 (float32), so the error is 0.5 ulp plus a
 *   tiny excess; tests/unit/test_quadratic.c measures it against an MPFR
 *   oracle (largest error seen: 0.5000 ulp on representable roots). Parts
 *   outside that range get at most one more rounding, into the subnormal
 *   range or to infinity, so they stay within 1 ulp when ulps are counted
 *   on the subnormal grid (spacing 2^-1074 or 2^-149) and infinity counts
 *   as 2^(emax+1), one ulp above the largest finite value.
 *
 * Method, float64 (a, c != 0)
 *   1. Exact scaling: with a = ma 2^ea, b = mb 2^eb, c = mc 2^ec (m in
 *      [1, 2)), substitute x = 2^s y with s = floor((ec - ea) / 2) and divide
 *      by 2^ec: A = ma or ma/2, C = mc, B = mb 2^t with t = eb + s - ec. The
 *      y roots are computed and multiplied back by 2^s with one rounding at
 *      most, so no intermediate overflows or underflows.
 *   2. t > QD_T_F64 (|b| dwarfs sqrt|ac| by 2^100): the roots are -b/a and
 *      -c/b to a relative 2^-190, each one correctly rounded division of the
 *      inputs. t < -QD_T_F64: b shifts the roots by a relative 2^-99 at most
 *      and is dropped from them (real roots then come out as exact
 *      negatives), though not from a complex pair's real part.
 *   3. The discriminant D = (B/2)^2 - AC is summed exactly from the FMA
 *      product errors into a double-word (accurate double-word addition,
 *      Joldes-Muller-Popescu: relative error <= 3u^2), so its sign is exact
 *      and D == 0 exactly for a double root.
 *   4. sqrt(D) as a double-word (one Newton correction with the exact FMA
 *      remainder); Q = B/2 + sign(B) sqrt(D) adds equal signs only; the roots
 *      -Q/A and -C/Q (and sqrt(-D)/|A|) are divisions of double-words with
 *      an FMA residual correction, each rounded once at the end. A complex
 *      pair's real part is -(mb/ma) 2^(eb-ea-1): one division, exactly
 *      scaled.
 *
 * Method, float32
 *   Float-native path, for |a|, |b|, |c| in [2^-32, 2^33) (nearly all data
 *   in practice): the float64 method in float arithmetic without the
 *   scaling, which this range makes unnecessary. h = b/2, h^2 and ac are
 *   exact as double-words through FMA, D = h^2 - ac comes from the accurate
 *   double-word addition (relative error 3u^2, u = 2^-24; its sign exact),
 *   and sqrt(D) and the divisions are double-word steps with FMA
 *   corrections, each root rounded once at the end: within 0.5 ulp plus
 *   about 2^-20 ulp. In this range every product, error term, quotient and
 *   root is a normal float, so no step over- or underflows. A discriminant
 *   below 2^-80 in magnitude (a double root among them) goes to the general
 *   path, which keeps the sqrt remainder exact. The path costs float
 *   operations only: on GPUs with half-rate (H100, H200) or slower double
 *   it keeps the kernel memory-bound.
 *   General path, for every other equation: the work is done in double.
 *   Float coefficients convert exactly, (b/2)^2 and ac are then exact
 *   (48-bit significands, exponents within [-300, 258]), so D = (b/2)^2 -
 *   ac carries one rounding (2^-53 relative), no scaling is needed, and the
 *   double roots (a few 2^-53 relative) round once to float: within 0.5 ulp
 *   plus about 1e-8 ulp. The linear and c = 0 cases divide in float
 *   directly (one correctly rounded division).
 *   Both paths use correctly rounded operations only, and which one runs
 *   depends on the coefficients alone, so CPU and GPU still give the same
 *   bits. */
#ifndef GPUBATCH_PTX_QUADRATIC_MATH_H
#define GPUBATCH_PTX_QUADRATIC_MATH_H

#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#ifndef GB_HD
#define GB_HD __host__ __device__ __forceinline__
#endif
#else
#ifndef GB_HD
#define GB_HD static inline
#endif
#endif

/* |t| bound of the scaled b's exponent handled by the general float64 path;
 * beyond it b is dominant (t > QD_T_F64) or negligible (t < -QD_T_F64). */
#define QD_T_F64 100
/* The float-native float32 path takes |a|, |b|, |c| in [2^-QD_FAST_E32,
 * 2^(QD_FAST_E32 + 1)) and a discriminant of magnitude at least
 * QD_FAST_DMIN_F32 (see "Method, float32"). */
#define QD_FAST_E32 32
#define QD_FAST_DMIN_F32 0x1p-80f
/* Exponent clamp of qd_scale_f64: beyond it every admissible y over- or
 * underflows anyway. */
#define QD_SCALE_CLAMP 1300

/* Bits of a double. */
GB_HD unsigned long long qd_bits_f64(double x)
{
#ifdef __CUDA_ARCH__
    return (unsigned long long)__double_as_longlong(x);
#else
    unsigned long long u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

/* The double with bits u. */
GB_HD double qd_from_bits_f64(unsigned long long u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The default quiet NaN, positive sign, built from bits so that both
 * compilers produce the same pattern. */
GB_HD double qd_nan_f64(void)
{
    return qd_from_bits_f64(0x7ff8000000000000ull);
}

/* The default quiet float NaN (bits 0x7fc00000), built from bits: a
 * conversion from double would give the GPU's canonical NaN instead. */
GB_HD float qd_nan_f32(void)
{
#ifdef __CUDA_ARCH__
    return __int_as_float(0x7fc00000);
#else
    unsigned int u = 0x7fc00000u;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* Nonzero when x is neither infinite nor NaN. */
GB_HD int qd_finite_f64(double x)
{
    return ((qd_bits_f64(x) >> 52) & 0x7ff) != 0x7ff;
}

/* Nonzero when the sign bit of x is set (-0 included). */
GB_HD int qd_signbit_f64(double x)
{
    return (int)(qd_bits_f64(x) >> 63);
}

/* Exact 2^k. Precondition: -1022 <= k <= 1023. */
GB_HD double qd_pow2_f64(int k)
{
    return qd_from_bits_f64((unsigned long long)(k + 1023) << 52);
}

/* y 2^e rounded once. Precondition: 2^-360 <= |y| <= 2^360, so the first
 * factor (|e| / 2 <= 650 after clamping) is exact and only the second
 * rounds. */
GB_HD double qd_scale_f64(double y, int e)
{
    if (e > QD_SCALE_CLAMP)
        e = QD_SCALE_CLAMP;
    if (e < -QD_SCALE_CLAMP)
        e = -QD_SCALE_CLAMP;
    int e1 = e / 2;
    return (y * qd_pow2_f64(e1)) * qd_pow2_f64(e - e1);
}

/* Splits finite nonzero x into m 2^e with |m| in [1, 2) and the sign of x;
 * returns m, stores e. Subnormals are normalized first (exact). */
GB_HD double qd_split_f64(double x, int *e)
{
    unsigned long long u = qd_bits_f64(x);
    int adj = 0;
    if (((u >> 52) & 0x7ff) == 0) {
        u = qd_bits_f64(x * 0x1p64);
        adj = -64;
    }
    *e = (int)((u >> 52) & 0x7ff) - 1023 + adj;
    return qd_from_bits_f64((u & 0x800fffffffffffffull) | (1023ull << 52));
}

/* floor(d / 2) for any int d. */
GB_HD int qd_floor_half(int d)
{
    return d >= 0 ? d / 2 : -((1 - d) / 2);
}

/* Error-free transformations and double-word arithmetic, defined once per
 * precision: QD_DW_OPS(T, S, FMA, SQRT) defines the functions below with
 * the suffix S for the type T, whose correctly rounded fused multiply-add
 * and square root are FMA and SQRT. A double-word is an unevaluated sum
 * xh + xl with |xl| <= ulp(xh) / 2; u below is the unit roundoff of T.
 *   qd_two_sum_S(a, b, &s, &e)      s + e = a + b exactly, s = fl(a + b)
 *                                   (2Sum; no ordering needed)
 *   qd_fast_two_sum_S(a, b, &s, &e) the same when a == 0 or the exponent of
 *                                   a is at least that of b (Fast2Sum)
 *   qd_dw_add_S(xh, xl, yh, yl, &zh, &zl)
 *                                   the sum of two double-words, relative
 *                                   error below 3u^2 even under cancellation
 *                                   (Joldes, Muller and Popescu's accurate
 *                                   double-word addition); an exactly zero
 *                                   sum gives zh == 0
 *   qd_dw_sqrt_S(zh, zl, &rh, &rl)  sqrt(zh + zl) for zh > 0: one Newton
 *                                   step on the correctly rounded sqrt(zh)
 *                                   with its exact FMA remainder (relative
 *                                   error O(u^2))
 *   qd_real_roots_S(h, dh, dl, A, C, &y1, &y2)
 *                                   the real roots -(h + sign(h) sqrt(D)) / A
 *                                   and -C / (h + sign(h) sqrt(D)) of
 *                                   A y^2 + 2 h y + C = 0 for D = dh + dl > 0:
 *                                   equal signs only are added, each root
 *                                   rounded once
 *   qd_div_dw_d_S(nh, nl, v)        (nh + nl) / v and
 *   qd_div_d_dw_S(n, dh, dl)        n / (dh + dl), each rounded once after an
 *                                   FMA residual correction: within 0.5 ulp
 *                                   plus O(u) ulp of the quotient, provided
 *                                   neither the quotient nor the reciprocal
 *                                   of the divisor over- or underflows */
#define QD_DW_OPS(T, S, FMA, SQRT, COPYSIGN)                                               \
    GB_HD void qd_two_sum_##S(T a, T b, T *s, T *e)                                        \
    {                                                                                      \
        T x = a + b;                                                                       \
        T bv = x - a;                                                                      \
        T av = x - bv;                                                                     \
        *e = (a - av) + (b - bv);                                                          \
        *s = x;                                                                            \
    }                                                                                      \
    GB_HD void qd_fast_two_sum_##S(T a, T b, T *s, T *e)                                   \
    {                                                                                      \
        T x = a + b;                                                                       \
        *e = b - (x - a);                                                                  \
        *s = x;                                                                            \
    }                                                                                      \
    GB_HD void qd_dw_add_##S(T xh, T xl, T yh, T yl, T *zh, T *zl)                         \
    {                                                                                      \
        T sh, sl, th, tl, vh, vl;                                                          \
        qd_two_sum_##S(xh, yh, &sh, &sl);                                                  \
        qd_two_sum_##S(xl, yl, &th, &tl);                                                  \
        qd_fast_two_sum_##S(sh, sl + th, &vh, &vl);                                        \
        qd_fast_two_sum_##S(vh, tl + vl, zh, zl);                                          \
    }                                                                                      \
    GB_HD void qd_dw_sqrt_##S(T zh, T zl, T *rh, T *rl)                                    \
    {                                                                                      \
        T s = SQRT(zh);                                                                    \
        T rem = FMA(-s, s, zh) + zl;                                                       \
        *rh = s;                                                                           \
        *rl = rem / (s + s);                                                               \
    }                                                                                      \
    GB_HD T qd_div_dw_d_##S(T nh, T nl, T v)                                               \
    {                                                                                      \
        T rv = (T)1 / v;                                                                   \
        T y = nh * rv;                                                                     \
        T r = FMA(-y, v, nh) + nl;                                                         \
        return FMA(r, rv, y);                                                              \
    }                                                                                      \
    GB_HD T qd_div_d_dw_##S(T n, T dh, T dl)                                               \
    {                                                                                      \
        T rd = (T)1 / dh;                                                                  \
        T y = n * rd;                                                                      \
        T r = FMA(-y, dh, n) - y * dl;                                                     \
        return FMA(r, rd, y);                                                              \
    }                                                                                      \
    GB_HD void qd_real_roots_##S(T h, T dh, T dl, T A, T C, T *y1, T *y2)                  \
    {                                                                                      \
        T sh, sl, qh, ql;                                                                  \
        qd_dw_sqrt_##S(dh, dl, &sh, &sl);                                                  \
        T sg = COPYSIGN((T)1, h);                                                          \
        qd_two_sum_##S(h, sg * sh, &qh, &ql);                                              \
        ql += sg * sl;                                                                     \
        *y1 = -qd_div_dw_d_##S(qh, ql, A);                                                 \
        *y2 = -qd_div_d_dw_##S(C, qh, ql);                                                 \
    }

QD_DW_OPS(double, f64, fma, sqrt, copysign)
QD_DW_OPS(float, f32, fmaf, sqrtf, copysignf)

/* Stores the two real roots x, y in ascending order (-0 before +0), with
 * +0 imaginary parts. */
GB_HD void qd_store_real_f64(double x, double y, double *re1, double *im1, double *re2, double *im2)
{
    int swap = x > y || (x == y && qd_signbit_f64(y) && !qd_signbit_f64(x));
    *re1 = swap ? y : x;
    *re2 = swap ? x : y;
    *im1 = 0.0;
    *im2 = 0.0;
}

/* Stores NaN in all four parts. */
GB_HD void qd_store_nan_f64(double *re1, double *im1, double *re2, double *im2)
{
    double n = qd_nan_f64();
    *re1 = n;
    *im1 = n;
    *re2 = n;
    *im2 = n;
}

/* Roots of a*x^2 + b*x + c = 0. Writes x1 = (re1, im1), x2 = (re2, im2),
 * with the conventions and accuracy stated at the top of this file. */
GB_HD void qd_solve_f64(double a, double b, double c, double *re1, double *im1, double *re2,
                        double *im2)
{
    if (!qd_finite_f64(a) || !qd_finite_f64(b) || !qd_finite_f64(c)) {
        qd_store_nan_f64(re1, im1, re2, im2);
        return;
    }
    if (a == 0.0) {
        if (b == 0.0) {
            qd_store_nan_f64(re1, im1, re2, im2);
            return;
        }
        *re1 = c == 0.0 ? 0.0 : -c / b;
        *im1 = 0.0;
        *re2 = qd_nan_f64();
        *im2 = qd_nan_f64();
        return;
    }
    if (c == 0.0) {
        qd_store_real_f64(0.0, b == 0.0 ? 0.0 : -b / a, re1, im1, re2, im2);
        return;
    }

    int ea, eb = 0, ec;
    double ma = qd_split_f64(a, &ea);
    double mc = qd_split_f64(c, &ec);
    double mb = b == 0.0 ? b : qd_split_f64(b, &eb);
    int s = qd_floor_half(ec - ea);
    double A = (ec - ea - 2 * s) ? ma * 0.5 : ma;
    double C = mc;
    int t = eb + s - ec;

    if (b != 0.0 && t > QD_T_F64) {
        /* b dominates: the terms neglected are below 2^-190 relative. */
        qd_store_real_f64(-b / a, -c / b, re1, im1, re2, im2);
        return;
    }
    /* h = B/2 exactly; a negligible b keeps only its sign. */
    double h = (b == 0.0 || t < -QD_T_F64) ? copysign(0.0, b) : mb * qd_pow2_f64(t - 1);

    double p = h * h;
    double ep = fma(h, h, -p);
    double q = A * C;
    double eq = fma(A, C, -q);
    double dh, dl;
    qd_dw_add_f64(p, ep, -q, -eq, &dh, &dl);

    if (dh > 0.0) {
        double y1, y2;
        qd_real_roots_f64(h, dh, dl, A, C, &y1, &y2);
        if (h == 0.0) { /* roots +-r: make them exact negatives */
            y2 = fabs(y1);
            y1 = -y2;
        }
        qd_store_real_f64(qd_scale_f64(y1, s), qd_scale_f64(y2, s), re1, im1, re2, im2);
    } else if (dh == 0.0) {
        /* Exact double root -h/A: one correctly rounded division. */
        double x = qd_scale_f64(-h / A, s);
        *re1 = x;
        *re2 = x;
        *im1 = 0.0;
        *im2 = 0.0;
    } else {
        double sh, sl;
        qd_dw_sqrt_f64(-dh, -dl, &sh, &sl);
        double im = qd_scale_f64(qd_div_dw_d_f64(sh, sl, fabs(A)), s);
        double re = b == 0.0 ? 0.0 : qd_scale_f64(-(mb / ma), eb - ea - 1);
        *re1 = re;
        *im1 = im;
        *re2 = re;
        *im2 = -im;
    }
}

/* The float32 solver's general path, in double (see "Method, float32"):
 * every float32 a, b, c; writes the roots as qd_solve_f32. */
GB_HD void qd_solve_wide_f32(float a, float b, float c, float *re1, float *im1, float *re2,
                        float *im2)
{
    double A = a, B = b, C = c;
    float nan = qd_nan_f32();
    if (!qd_finite_f64(A) || !qd_finite_f64(B) || !qd_finite_f64(C)) {
        *re1 = nan;
        *im1 = nan;
        *re2 = nan;
        *im2 = nan;
        return;
    }
    *im1 = 0.0f;
    *im2 = 0.0f;
    if (a == 0.0f) {
        if (b == 0.0f) {
            *re1 = nan;
            *im1 = nan;
            *re2 = nan;
            *im2 = nan;
            return;
        }
        *re1 = c == 0.0f ? 0.0f : -c / b;
        *re2 = nan;
        *im2 = nan;
        return;
    }
    if (c == 0.0f) {
        float r = b == 0.0f ? 0.0f : -b / a;
        int neg = qd_signbit_f64((double)r);
        *re1 = neg ? r : 0.0f;
        *re2 = neg ? 0.0f : r;
        return;
    }

    /* Exact: float significands have 24 bits, their products 48. */
    double h = 0.5 * B;
    double p = h * h;
    double q = A * C;
    double d = p - q; /* the only rounding of the discriminant */

    if (d > 0.0) {
        double sq = sqrt(d);
        double Q = -(h + copysign(sq, h));
        double y1 = Q / A;
        double y2 = C / Q;
        if (h == 0.0) { /* roots +-r: make them exact negatives */
            y2 = fabs(y1);
            y1 = -y2;
        } else if (y1 > y2) {
            double tmp = y1;
            y1 = y2;
            y2 = tmp;
        }
        *re1 = (float)y1;
        *re2 = (float)y2;
    } else if (d == 0.0) {
        float x = (float)(-h / A); /* exact double root */
        *re1 = x;
        *re2 = x;
    } else {
        float im = (float)(sqrt(-d) / fabs(A));
        float re = b == 0.0f ? 0.0f : (float)(-h / A);
        *re1 = re;
        *im1 = im;
        *re2 = re;
        *im2 = -im;
    }
}

/* Bits of a float. */
GB_HD unsigned qd_bits_f32(float x)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    unsigned u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

/* Nonzero when 2^-QD_FAST_E32 <= |x| < 2^(QD_FAST_E32 + 1): the range of
 * every coefficient on the float-native path (zero, subnormals, Inf and NaN
 * are outside it). */
GB_HD int qd_fast_range_f32(float x)
{
    unsigned e = (qd_bits_f32(x) >> 23) & 0xffu;
    return e - (127u - QD_FAST_E32) <= 2u * QD_FAST_E32;
}

/* The float32 solver's float-native path (see "Method, float32") for a, b,
 * c that pass qd_fast_range_f32. Writes the roots as qd_solve_f32 and
 * returns 1, or returns 0 and writes nothing when the discriminant is
 * below QD_FAST_DMIN_F32 in magnitude. */
GB_HD int qd_solve_fast_f32(float a, float b, float c, float *re1, float *im1, float *re2,
                            float *im2)
{
    float h = 0.5f * b; /* exact: b is normal and far from the subnormals */
    float p = h * h;
    float ep = fmaf(h, h, -p);
    float q = a * c;
    float eq = fmaf(a, c, -q);
    float dh, dl; /* the discriminant, to a relative 3u^2 */
    qd_dw_add_f32(p, ep, -q, -eq, &dh, &dl);
    if (fabsf(dh) < QD_FAST_DMIN_F32)
        return 0;
    float sh, sl;
    if (dh > 0.0f) {
        float y1, y2;
        qd_real_roots_f32(h, dh, dl, a, c, &y1, &y2);
        *re1 = y1 < y2 ? y1 : y2;
        *re2 = y1 < y2 ? y2 : y1;
        *im1 = 0.0f;
        *im2 = 0.0f;
    } else {
        qd_dw_sqrt_f32(-dh, -dl, &sh, &sl);
        float im = qd_div_dw_d_f32(sh, sl, fabsf(a));
        float re = -h / a;
        *re1 = re;
        *im1 = im;
        *re2 = re;
        *im2 = -im;
    }
    return 1;
}

/* Roots of a*x^2 + b*x + c = 0 for float32 coefficients. Writes x1 = (re1,
 * im1), x2 = (re2, im2), with the conventions and accuracy stated at the top
 * of this file: the float-native path when it applies, else the general
 * path in double. */
GB_HD void qd_solve_f32(float a, float b, float c, float *re1, float *im1, float *re2,
                        float *im2)
{
    if (qd_fast_range_f32(a) && qd_fast_range_f32(b) && qd_fast_range_f32(c) &&
        qd_solve_fast_f32(a, b, c, re1, im1, re2, im2))
        return;
    qd_solve_wide_f32(a, b, c, re1, im1, re2, im2);
}

/* The textbook formula in double: (-b -+ sqrt(b^2 - 4ac)) / 2a, real roots
 * ascending, a complex pair as re +- i|im|; no special cases. */
GB_HD void qd_naive_f64(double a, double b, double c, double *re1, double *im1, double *re2,
                        double *im2)
{
    double d = b * b - 4.0 * a * c;
    if (d >= 0.0) {
        double sq = sqrt(d);
        double x = (-b - sq) / (2.0 * a);
        double y = (-b + sq) / (2.0 * a);
        *re1 = y < x ? y : x;
        *re2 = y < x ? x : y;
        *im1 = 0.0;
        *im2 = 0.0;
    } else {
        double im = fabs(sqrt(-d) / (2.0 * a));
        *re1 = -b / (2.0 * a);
        *re2 = *re1;
        *im1 = im;
        *im2 = -im;
    }
}

/* The textbook formula in float arithmetic, as qd_naive_f64. */
GB_HD void qd_naive_f32(float a, float b, float c, float *re1, float *im1, float *re2,
                        float *im2)
{
    float d = b * b - 4.0f * a * c;
    if (d >= 0.0f) {
        float sq = sqrtf(d);
        float x = (-b - sq) / (2.0f * a);
        float y = (-b + sq) / (2.0f * a);
        *re1 = y < x ? y : x;
        *re2 = y < x ? x : y;
        *im1 = 0.0f;
        *im2 = 0.0f;
    } else {
        float im = fabsf(sqrtf(-d) / (2.0f * a));
        *re1 = -b / (2.0f * a);
        *re2 = *re1;
        *im1 = im;
        *im2 = -im;
    }
}

#endif
