/* reduce_math.h - the reduction's arithmetic, compiled both as CUDA (the
 * kernels in reduce.cu) and as C (the CPU backend), so both run the same
 * operation sequence and give the same bits.
 *
 * The order of every floating-point addition is fixed by the global element
 * index, never by the launch shape:
 *  - the array is cut into tiles of RD_TILE elements at multiples of RD_TILE,
 *    and each tile into RD_WARPS sub-tiles of RD_SUBTILE elements; one GPU
 *    block reduces one tile, one warp of it one sub-tile;
 *  - inside a sub-tile, lane t (0..31) owns the 16-byte vectors t, t+32,
 *    t+64, ... of RD_VEC(size) elements each; element k of each vector is
 *    added, vector after vector, into the lane's accumulator k, a double that
 *    starts at -0.0 (the exact identity of IEEE addition: x + -0.0 == x for
 *    every x, zeros included); rd_lane_tree() folds the accumulators
 *    pairwise into the lane's value;
 *  - rd_tile_tree() folds the 32 lane sums of each sub-tile with
 *    v[l] += v[l+h] for h = 16, 8, 4, 2, 1 (the GPU uses xor shuffles, whose
 *    results are the same because IEEE addition is commutative), then the 8
 *    sub-tile sums pairwise: (s0+s1), (s2+s3), ..., then pairs of those;
 *  - tile sums are combined by a pairwise tree over tile indices, padded
 *    with -0.0 to a power of two (rd_tree_push/rd_tree_finish on the host).
 * Integer sums are exact (128-bit), minima and maxima are associative with
 * ties broken by the lower index: neither depends on order at all.
 *
 * float16 and bfloat16 elements are converted exactly to double
 * (half_math.h) and summed like float32 ones; their 16-byte vectors hold 8
 * elements. A bool element counts as the integer 0 or 1 (any nonzero byte
 * is true, as numpy reads it). */
#ifndef GPUBATCH_PTX_REDUCE_MATH_H
#define GPUBATCH_PTX_REDUCE_MATH_H

#ifdef __CUDACC__
#define GB_HD __host__ __device__ __forceinline__
typedef unsigned long long rd_u64;
typedef long long rd_i64;
#else
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#define GB_HD static inline
typedef uint64_t rd_u64;
typedef int64_t rd_i64;
#endif

typedef unsigned __int128 rd_u128;

#include "half_math.h"

#define RD_SUBTILE 2048u  /* elements per sub-tile (one warp) */
#define RD_WARPS 8u       /* sub-tiles per tile (warps per GPU block) */
#define RD_TILE (RD_SUBTILE * RD_WARPS) /* elements per tile */
#define RD_LANES 32u      /* lanes (the threads of one warp) per sub-tile */
#define RD_VEC(size) (16u / (size)) /* elements per 16-byte vector */
#define RD_NO_INDEX (~(rd_u64)0)

/* Per-tile moments: sum, sum of squares and element count. A float sum is
 * stored as the bits of a double in *_lo; an exact integer sum as a
 * two's-complement 128-bit value in lo/hi. */
typedef struct {
    rd_u64 sum_lo, sum_hi;
    rd_u64 sq_lo, sq_hi;
    rd_u64 count; /* elements that took part (NaN excluded with skipnan) */
} rd_moments;

/* Per-tile extrema as order keys (see rd_key_*) and global indices;
 * index RD_NO_INDEX means "no element". */
typedef struct {
    rd_u64 min_key, min_idx;
    rd_u64 max_key, max_idx;
} rd_extrema;

/* Optional in-kernel fold of tile sums, for arrays reduced entirely on the
 * device: the last block to finish each segment of RD_FOLD_SEG tiles folds
 * that segment's sums, and the last segment to finish folds the segment
 * sums into *result, with the same pairwise tree as rd_tree. Counters start
 * at zero and are left at zero. result == NULL disables it (the streaming
 * path folds on the host). */
#define RD_FOLD_SEG 4096u
typedef struct {
    unsigned int *seg_count; /* ceil(tiles / RD_FOLD_SEG) counters */
    double *seg_sum;         /* one per segment */
    unsigned int *top_count; /* one counter */
    double *result;
} rd_fold_ctl;

/* Keys whose unsigned order is the numeric order (-0 before +0). For float
 * types a NaN never gets a key from these: the kernels give it
 * RD_NAN_MIN_KEY / RD_NAN_MAX_KEY so that NaN wins when it propagates. */
#define RD_NAN_MIN_KEY ((rd_u64)0)
#define RD_NAN_MAX_KEY (~(rd_u64)0)

/* Order key of a float32 given its bits. */
GB_HD rd_u64 rd_key_f32(unsigned int u)
{
    return (u & 0x80000000u) ? (rd_u64)(~u & 0xffffffffu) : (rd_u64)(u | 0x80000000u);
}

/* Bits of the float32 whose key is k. */
GB_HD unsigned int rd_unkey_f32(rd_u64 k)
{
    unsigned int u = (unsigned int)k;
    return (u & 0x80000000u) ? (u ^ 0x80000000u) : ~u;
}

/* Order key of a float64 given its bits. */
GB_HD rd_u64 rd_key_f64(rd_u64 u)
{
    return (u >> 63) ? ~u : (u | ((rd_u64)1 << 63));
}

/* Bits of the float64 whose key is k. */
GB_HD rd_u64 rd_unkey_f64(rd_u64 k)
{
    return (k >> 63) ? (k ^ ((rd_u64)1 << 63)) : ~k;
}

/* Order key of a 16-bit float (float16 or bfloat16) given its bits: both
 * formats are sign and magnitude like float32. */
GB_HD rd_u64 rd_key_h16(unsigned h)
{
    return (h & 0x8000u) ? (rd_u64)(~h & 0xffffu) : (rd_u64)((h & 0xffffu) | 0x8000u);
}

/* Bits of the 16-bit float whose key is k. */
GB_HD unsigned rd_unkey_h16(rd_u64 k)
{
    unsigned u = (unsigned)k & 0xffffu;
    return (u & 0x8000u) ? (u ^ 0x8000u) : (~u & 0xffffu);
}

/* Order key of a signed integer. */
GB_HD rd_u64 rd_key_signed(rd_i64 v)
{
    return (rd_u64)v ^ ((rd_u64)1 << 63);
}

/* Keeps (k, i) in the running minimum when it is smaller, or equal with a
 * lower index; associative and commutative. */
GB_HD void rd_min_update(rd_u64 *mk, rd_u64 *mi, rd_u64 k, rd_u64 i)
{
    if (i == RD_NO_INDEX)
        return;
    if (*mi == RD_NO_INDEX || k < *mk || (k == *mk && i < *mi)) {
        *mk = k;
        *mi = i;
    }
}

/* Keeps (k, i) in the running maximum when it is larger, or equal with a
 * lower index; associative and commutative. */
GB_HD void rd_max_update(rd_u64 *mk, rd_u64 *mi, rd_u64 k, rd_u64 i)
{
    if (i == RD_NO_INDEX)
        return;
    if (*mi == RD_NO_INDEX || k > *mk || (k == *mk && i < *mi)) {
        *mk = k;
        *mi = i;
    }
}

/* Merges extrema b into a. */
GB_HD void rd_extrema_merge(rd_extrema *a, const rd_extrema *b)
{
    rd_min_update(&a->min_key, &a->min_idx, b->min_key, b->min_idx);
    rd_max_update(&a->max_key, &a->max_idx, b->max_key, b->max_idx);
}

/* The empty extrema (identity of rd_extrema_merge). */
GB_HD rd_extrema rd_extrema_empty(void)
{
    rd_extrema e;
    e.min_key = 0;
    e.min_idx = RD_NO_INDEX;
    e.max_key = 0;
    e.max_idx = RD_NO_INDEX;
    return e;
}

/* Float addition as the reduction defines it (a separate function so that
 * both compilers see one rounded add, never a contraction). */
GB_HD double rd_add(double a, double b)
{
    return a + b;
}

/* The pairwise tree over a lane's n accumulators (n a power of two), in
 * place; the result is acc[0]. */
GB_HD void rd_lane_tree(double *acc, unsigned n)
{
    for (unsigned h = 1; h < n; h *= 2)
        for (unsigned k = 0; k < n; k += 2 * h)
            acc[k] = rd_add(acc[k], acc[k + h]);
}

/* The tree over one sub-tile's RD_LANES lane sums, in place; the result is
 * v[0]. The GPU computes the same tree with xor shuffles (lanes l and l^h
 * both get v[l] + v[l^h], equal by commutativity). */
GB_HD void rd_subtile_tree(double *v)
{
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        for (unsigned l = 0; l < h; l++)
            v[l] = rd_add(v[l], v[l + h]);
}

/* The pairwise tree over a tile's RD_WARPS sub-tile sums, in place; the
 * result is s[0]. */
GB_HD void rd_warps_tree(double *s)
{
    for (unsigned h = 1; h < RD_WARPS; h *= 2)
        for (unsigned l = 0; l < RD_WARPS; l += 2 * h)
            s[l] = rd_add(s[l], s[l + h]);
}

/* ---- Variance (var, std): one partial type, the same arithmetic on every
 * backend and at every level of every tree.
 *
 * A partial is (n, K, S1, S2): n elements, K the shift (the first element
 * of the partial's first accumulator), S1 = sum(x - K) and
 * S2 = sum((x - K)^2) as double-doubles (hi + lo with hi = fl(hi + lo)).
 * Inside an accumulator (a lane's accumulator k of a sub-tile, a block of
 * RD_AXIS_BLOCK elements along a kept last axis) the sums are plain
 * doubles (rd_var_step); every combination above it is rd_var_merge, in
 * the positions and order of the sums' additions: in plain doubles while
 * the two partials hold at most RD_VAR_PLAIN elements together (so that a
 * partial of that many or fewer has low words 0), in double-double above,
 * which keeps long sums accurate at a cost of about 130 operations a
 * merge. Elements are converted
 * to double first, exactly as for the sums. A non-finite element makes
 * the sums NaN, so var and std are NaN, as numpy's. */

#define RD_AXIS_BLOCK 16u /* partials a stage-2 block adds in sequence */
#define RD_VAR_PLAIN 64u  /* variance partials of at most this many elements
                             together merge in plain doubles */

/* A double-double: the unevaluated sum hi + lo, |lo| <= ulp(hi) / 2. */
typedef struct {
    double hi, lo;
} rd_dd;

/* A variance partial (48 bytes; the layout of kernel outputs too). */
typedef struct {
    rd_u64 n;     /* elements */
    double k;     /* the shift: the first element */
    rd_dd s1, s2; /* sum(x - k) and sum((x - k)^2) */
} rd_var;

/* An accumulator of plain doubles, before it becomes a partial. */
typedef struct {
    rd_u64 n;
    double k, s1, s2;
} rd_var_acc;

/* a + b exactly (Knuth's TwoSum). */
GB_HD rd_dd rd_two_sum(double a, double b)
{
    rd_dd r;
    double s = a + b, bb = s - a;
    r.hi = s;
    r.lo = (a - (s - bb)) + (b - bb);
    return r;
}

/* a + b exactly where |a| >= |b| or a == 0 (Dekker's FastTwoSum). */
GB_HD rd_dd rd_fast_two_sum(double a, double b)
{
    rd_dd r;
    double s = a + b;
    r.hi = s;
    r.lo = b - (s - a);
    return r;
}

/* a * b exactly, the error by an explicit fma (never a contraction). */
GB_HD rd_dd rd_two_prod(double a, double b)
{
    rd_dd r;
    double p = a * b;
    r.hi = p;
    r.lo = fma(a, b, -p);
    return r;
}

/* x + y in double-double (the accurate sum: both parts' errors kept). */
GB_HD rd_dd rd_dd_add(rd_dd x, rd_dd y)
{
    rd_dd s = rd_two_sum(x.hi, y.hi), t = rd_two_sum(x.lo, y.lo);
    s = rd_fast_two_sum(s.hi, s.lo + t.hi);
    return rd_fast_two_sum(s.hi, s.lo + t.lo);
}

/* x * y in double-double. */
GB_HD rd_dd rd_dd_mul(rd_dd x, rd_dd y)
{
    rd_dd p = rd_two_prod(x.hi, y.hi);
    return rd_fast_two_sum(p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi));
}

/* x * y in double-double, y a double. */
GB_HD rd_dd rd_dd_mul_d(rd_dd x, double y)
{
    rd_dd p = rd_two_prod(x.hi, y);
    return rd_fast_two_sum(p.hi, p.lo + x.lo * y);
}

/* x / y in double-double, y a double: a quotient and one correction from
 * the exact remainder. */
GB_HD rd_dd rd_dd_div_d(rd_dd x, double y)
{
    double q1 = x.hi / y;
    rd_dd p = rd_two_prod(q1, y);
    rd_dd r = rd_two_sum(x.hi, -p.hi);
    double q2 = (r.hi + ((r.lo - p.lo) + x.lo)) / y;
    return rd_fast_two_sum(q1, q2);
}

/* The empty accumulator. */
GB_HD rd_var_acc rd_var_acc_empty(void)
{
    rd_var_acc a;
    a.n = 0;
    a.k = 0.0;
    a.s1 = 0.0;
    a.s2 = 0.0;
    return a;
}

/* Adds element x to an accumulator: the first sets the shift. */
GB_HD void rd_var_step(rd_var_acc *a, double x)
{
    if (a->n == 0)
        a->k = x;
    double d = x - a->k;
    a->s1 = rd_add(a->s1, d);
    a->s2 = rd_add(a->s2, d * d);
    a->n++;
}

/* The partial an accumulator ends as. */
GB_HD rd_var rd_var_of_acc(rd_var_acc a)
{
    rd_var v;
    v.n = a.n;
    v.k = a.k;
    v.s1.hi = a.s1;
    v.s1.lo = 0.0;
    v.s2.hi = a.s2;
    v.s2.lo = 0.0;
    return v;
}

/* The empty partial (an identity of rd_var_merge on either side). */
GB_HD rd_var rd_var_empty(void)
{
    return rd_var_of_acc(rd_var_acc_empty());
}

/* rd_var_merge of two partials of RD_VAR_PLAIN elements or fewer together,
 * neither empty: in plain doubles, as one accumulator would hold them
 * (their low words are 0), D = K_b - K_a rounded once:
 * S1 = S1_a + fma(n_b, D, S1_b), S2 = S2_a + fma(D, fma(n_b, D, 2*S1_b), S2_b). */
GB_HD rd_var rd_var_merge_plain(rd_var a, rd_var b)
{
    double d = b.k - a.k, nb = (double)b.n;
    rd_var r;
    r.n = a.n + b.n;
    r.k = a.k;
    r.s1.hi = a.s1.hi + fma(nb, d, b.s1.hi);
    r.s1.lo = 0.0;
    r.s2.hi = a.s2.hi + fma(d, fma(nb, d, 2.0 * b.s1.hi), b.s2.hi);
    r.s2.lo = 0.0;
    return r;
}

/* The partial of a's elements followed by b's: it keeps a's shift. Where
 * they hold more than RD_VAR_PLAIN elements together it moves b's sums to
 * it in double-double with D = K_b - K_a held exactly:
 * S1 = S1_a + (S1_b + n_b*D), S2 = S2_a + ((S2_b + 2*D*S1_b) + (n_b*D)*D);
 * else rd_var_merge_plain. */
GB_HD rd_var rd_var_merge(rd_var a, rd_var b)
{
    if (b.n == 0)
        return a;
    if (a.n == 0)
        return b;
    if (a.n + b.n <= RD_VAR_PLAIN)
        return rd_var_merge_plain(a, b);
    rd_dd d = rd_two_sum(b.k, -a.k);
    rd_dd nd = rd_dd_mul_d(d, (double)b.n);
    rd_dd t = rd_dd_mul(d, b.s1);
    t.hi *= 2.0;
    t.lo *= 2.0;
    rd_var r;
    r.n = a.n + b.n;
    r.k = a.k;
    r.s1 = rd_dd_add(a.s1, rd_dd_add(b.s1, nd));
    r.s2 = rd_dd_add(a.s2, rd_dd_add(rd_dd_add(b.s2, t), rd_dd_mul(nd, d)));
    return r;
}

/* var (want_std 0) or std (1) of a final partial with ddof: the numerator
 * S2 - S1*S1/n in double-double (+0 where rounding makes it negative),
 * divided by n - ddof and rounded once; std is the square root of that
 * double-double with one Newton correction (the correctly rounded root of
 * the double-double but in rare near-ties). NaN where n - ddof <= 0,
 * n == 0, or a sum is NaN (a NaN or infinite element). */
GB_HD double rd_var_value(rd_var p, double ddof, int want_std)
{
    double n = (double)p.n, den = n - ddof;
    if (p.n == 0 || !(den > 0.0) || p.s1.hi != p.s1.hi || p.s2.hi != p.s2.hi)
        return 0.0 * (1.0 / 0.0); /* NaN */
    rd_dd q = rd_dd_div_d(rd_dd_mul(p.s1, p.s1), n);
    q.hi = -q.hi;
    q.lo = -q.lo;
    rd_dd num = rd_dd_add(p.s2, q);
    if (num.hi != num.hi)
        return num.hi;
    if (!(num.hi > 0.0))
        return 0.0;
    rd_dd v = rd_dd_div_d(num, den);
    if (!want_std || v.hi == 1.0 / 0.0)
        return v.hi;
    double s = sqrt(v.hi);
    double r = fma(-s, s, v.hi) + v.lo;
    return s + r / (2.0 * s);
}

/* The pairwise tree over a lane's n variance partials (n a power of two),
 * in place, as rd_lane_tree; the result is acc[0]. */
GB_HD void rd_var_lane_tree(rd_var *acc, unsigned n)
{
    for (unsigned h = 1; h < n; h *= 2)
        for (unsigned k = 0; k < n; k += 2 * h)
            acc[k] = rd_var_merge(acc[k], acc[k + h]);
}

/* The tree over one sub-tile's RD_LANES lane partials, in place, as
 * rd_subtile_tree (the GPU's shuffles merge (own, partner), which for the
 * lanes that reach lane 0 is (v[l], v[l + h])); the result is v[0]. */
GB_HD void rd_var_subtile_tree(rd_var *v)
{
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2)
        for (unsigned l = 0; l < h; l++)
            v[l] = rd_var_merge(v[l], v[l + h]);
}

/* The pairwise tree over a tile's RD_WARPS sub-tile partials, in place, as
 * rd_warps_tree; the result is s[0]. */
GB_HD void rd_var_warps_tree(rd_var *s)
{
    for (unsigned h = 1; h < RD_WARPS; h *= 2)
        for (unsigned l = 0; l < RD_WARPS; l += 2 * h)
            s[l] = rd_var_merge(s[l], s[l + h]);
}

#ifndef __CUDACC__
/* The variance partial of one tile of n <= RD_TILE elements, their values
 * (converted to double) in x, v of them to a 16-byte vector, element by
 * element in the kernels' order: the reference that the kernels and the
 * vectorized CPU code must match bit for bit. */
static inline rd_var rd_var_tile(const double *x, size_t n, unsigned v, int skipnan)
{
    rd_var sub[RD_WARPS];
    for (unsigned w = 0; w < RD_WARPS; w++) {
        rd_var lanes[RD_LANES];
        for (unsigned l = 0; l < RD_LANES; l++) {
            rd_var acc[16];
            for (unsigned k = 0; k < v; k++) {
                rd_var_acc a = rd_var_acc_empty();
                size_t end = (size_t)(w + 1) * RD_SUBTILE < n ? (size_t)(w + 1) * RD_SUBTILE : n;
                for (size_t o = (size_t)w * RD_SUBTILE + (size_t)l * v + k; o < end;
                     o += (size_t)RD_LANES * v)
                    if (!(skipnan && x[o] != x[o]))
                        rd_var_step(&a, x[o]);
                acc[k] = rd_var_of_acc(a);
            }
            rd_var_lane_tree(acc, v);
            lanes[l] = acc[0];
        }
        rd_var_subtile_tree(lanes);
        sub[w] = lanes[0];
    }
    rd_var_warps_tree(sub);
    return sub[0];
}
#endif

#endif
