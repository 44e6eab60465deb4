/* gen.h - deterministic synthetic arrays for `gpubatch gen`.
 *
 * Every output is a pure function of the seed and the element (or row)
 * index, computed with 64-bit integer mixing and IEEE basic operations only
 * (+ - * / and sqrt; no libm transcendental functions, no long double).
 * The same seed therefore gives the same bytes on every IEEE machine,
 * compiler, libc, thread count and chunking: a caller may fill any ranges,
 * in any order, in parallel, and concatenate them.
 *
 * Precondition for that promise: gen.c is compiled with strict IEEE double
 * evaluation (FLT_EVAL_METHOD 0, as on x86-64 and arm64), without fast-math
 * and with floating-point contraction off (-ffp-contract=off).
 *
 * The stream
 *   Word i of a stream is W(i) = mix2(mix1(ka + i * 0x9e3779b97f4a7c15) ^ kb)
 *   with two 64-bit finalizers and a key (ka, kb) derived from the seed.
 *   A uniform double is U(i) = (W(i) >> 11) * 2^-53, in [0, 1).
 *   Scalar j of a normal stream comes from the Box-Muller pair built on
 *   words 2p and 2p+1, p = j / 2: r = sqrt(-2 ln(1 - U(2p))),
 *   t = 2 pi U(2p+1); scalar 2p is r cos t, scalar 2p+1 is r sin t, so every
 *   normal deviate lies within about +-8.58.
 *   Element i of a complex array takes scalars 2i (real) and 2i+1
 *   (imaginary), each an independent deviate with the same parameters.
 *   Indices stay below 2^62 elements.
 *
 * Quadratic rows (gen_quadratic_fill) come from their own stream: row r
 * uses words 16r .. 16r+7; word 16r picks the row's kind (its low 6 bits
 * index the 64 shares below), so the kind does not depend on the dtype.
 * Rows are computed in double and rounded once more for float32.
 *
 * Distributions and defaults (gen_spec_defaults)
 *   float32/float64/complex: uniform [0, 1); normal mean 0, sd 1.
 *   Uniform floats are p1 + (p2 - p1) U(i) in double (halved first if
 *   p2 - p1 overflows), moved to the next value below p2 where rounding
 *   reaches p2. For float32 and complex64 the bounds are first rounded to
 *   float32 and the double result is rounded to float32, so results stay in
 *   [fl(p1), fl(p2)) and equal the float64 stream of those bounds, rounded;
 *   in ranges only a few floats wide the two end values get half and one
 *   and a half the weight of the others.
 *   Integers, uniform: every integer in [p1, p2] (inclusive) equally likely:
 *   with n values, the high word of W(i) * n unless the low word falls below
 *   2^64 mod n, in which case attempt a = 1, 2, ... draws word i of the
 *   seed's a-th retry stream. The default is the type's full range. The bounds
 *   must be whole numbers within the type's limits compared as doubles, so
 *   2^63 and 2^64 (what 9223372036854775807 and 18446744073709551615 round
 *   to) stand for INT64_MAX and UINT64_MAX.
 *   Integers, normal: mean + sd * z rounded to nearest (halves away from
 *   zero) and clamped to the type's range; the default mean is the middle of
 *   the range (0 for signed, 2^(b-1) for unsigned b-bit types) and the
 *   default sd 2^(b-3), so mean +- 4 sd spans the type.
 *
 * Output is little-endian regardless of the host. */
#ifndef GPUBATCH_RUNTIME_TOOLS_GEN_H
#define GPUBATCH_RUNTIME_TOOLS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/status.h"

typedef enum { GEN_UNIFORM, GEN_NORMAL } gen_dist;

typedef struct {
    gen_dist dist;
    double p1, p2; /* uniform: [p1, p2) ([p1, p2] for integers); normal: mean p1, sd p2 */
    uint64_t seed;
    dt_type dtype;
} gen_spec;

/* Fills *s with the documented default parameters of dist for dtype. */
void gen_spec_defaults(gen_spec *s, gen_dist dist, dt_type dtype, uint64_t seed);

/* Checks *s (known dist and dtype; finite parameters; uniform: p1 < p2, or
 * p1 <= p2 whole numbers within the type's range for integers; normal:
 * 0 <= sd, and for float types mean +- 9 sd finite in the type; for integers
 * the mean within the type's range). Returns 0, or IO_ERR_FORMAT with a
 * one-line reason in *st (when st is not NULL). */
int gen_spec_check(const gen_spec *s, io_status *st);

/* Writes elements [first, first + count) of the stream *s to out as
 * little-endian dtype values. Preconditions: gen_spec_check(s) == 0; out
 * holds count * dt_size(s->dtype) bytes (any alignment). */
void gen_fill(const gen_spec *s, uint64_t first, size_t count, void *out);

/* Kinds of rows in the quadratic mixture, with their shares out of 64.
 * P is the type's significand width (24 or 53), emax its largest exponent
 * (127 or 1023); "m 2^[x,y]" is a random-signed value with a P-bit
 * significand m in [1, 2) and an exponent drawn from [x, y]. */
typedef enum {
    GEN_QUAD_ORDINARY,    /* 24/64: roots r1 in [-10, 10), r2 = r1 +- [0.5, 10),
                           * a = m 2^[-4,4], b = -a (r1 + r2), c = a r1 r2 */
    GEN_QUAD_WIDE,        /* 12/64: a, b, c = m 2^[etiny,emax] each: the whole exponent
                           * range, subnormals included */
    GEN_QUAD_NEAR_DOUBLE, /*  8/64: a = m 2^[-8,8], r = m 2^[-10,10], d = [1,2) 2^-[12,P+2]:
                           * real roots r and r (1 +- d) (1/2), complex roots
                           * r +- i |r| d (1/4), or an exact double root with
                           * b^2 - 4ac == 0 exactly (1/4) */
    GEN_QUAD_HUGE_B,      /*  8/64: b = m 2^[P/2+2,P+8] with a, c = m 2^[-4,4], where
                           * -b + sqrt(disc) cancels (1/2); or b = m 2^[emax/2+1,3emax/4]
                           * with a, c = m 2^[2-emax/4,-1], where b^2 overflows the type
                           * while both roots stay finite and normal (1/2) */
    GEN_QUAD_COMPLEX,     /*  7/64: roots p +- iq, p in [-10, 10), q in (|p| + 1) [1/8,
                           * 17/8), a = m 2^[-8,8], b = -2ap, c = a (p^2 + q^2) */
    GEN_QUAD_A_ZERO,      /*  1/64: a = +-0; b, c = m 2^[-8,8] */
    GEN_QUAD_AB_ZERO,     /*  1/64: a = b = +-0; c = m 2^[-8,8] */
    GEN_QUAD_C_ZERO,      /*  1/64: c = +-0; a, b = m 2^[-8,8] */
    GEN_QUAD_B_ZERO,      /*  1/64: b = +-0; a, c = m 2^[-8,8] */
    GEN_QUAD_ALL_ZERO,    /*  1/64: a = b = c = +-0 */
    GEN_QUAD_KINDS
} gen_quad_kind;

/* Writes rows [first_row, first_row + rows) of an (N, 3) array of quadratic
 * coefficients (a, b, c per row) as little-endian float32 or float64. Every
 * value is finite; zeros carry a random sign. Preconditions: dtype is DT_F32
 * or DT_F64 (anything else writes nothing); out holds rows * 3 *
 * dt_size(dtype) bytes; first_row + rows <= 2^60. */
void gen_quadratic_fill(uint64_t seed, dt_type dtype, uint64_t first_row, size_t rows, void *out);

/* Kind of row `row` of the quadratic mixture for seed (a pure function of both). */
gen_quad_kind gen_quadratic_kind(uint64_t seed, uint64_t row);

/* Share of kind k in the mixture, in 64ths (0 for an unknown kind). */
unsigned gen_quadratic_share(gen_quad_kind k);

/* Short lower-case name of kind k ("near-double"), "?" when unknown. */
const char *gen_quadratic_kind_name(gen_quad_kind k);

/* Natural logarithm with basic operations only (about 2 ulp). Returns -inf
 * for +-0, NaN for negative or NaN arguments, +inf for +inf. */
double gen_log(double x);

/* Sets *s = sin(2 pi u) and *c = cos(2 pi u), reducing u exactly to the
 * nearest quarter turn (about 2 ulp; exact 0 and +-1 at quarter turns).
 * Precondition: 0 <= u < 1. */
void gen_sincos_turn(double u, double *s, double *c);

#endif
