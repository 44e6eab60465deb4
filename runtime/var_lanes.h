/* var_lanes.h - the variance merge of ptx/reduce_math.h (rd_var_merge) on
 * many partials at once, for the CPU code's folds (a tile's lanes and
 * sub-tiles, the parts of reduce --axis): the partials held one array per
 * field (vl_ref), merged VL_W lanes at a time by loops of a constant trip
 * count without branches, so that each instruction-set variant that
 * inlines them (runtime/simd.h) runs them as vector instructions, fma() as
 * one. A CPU-only copy of the arithmetic, bit-equal to rd_var_merge lane by
 * lane (the kernels' images keep theirs). */
#ifndef GPUBATCH_RUNTIME_VAR_LANES_H
#define GPUBATCH_RUNTIME_VAR_LANES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptx/reduce_math.h"

#define VL_INLINE static inline __attribute__((always_inline))
#define VL_W 8 /* lanes merged by one pass of vl_merge's loops */

/* Variance partials held one array per field: partial i is (n[i], k[i],
 * (s1h[i], s1l[i]), (s2h[i], s2l[i])). */
typedef struct {
    uint64_t *n;
    double *k, *s1h, *s1l, *s2h, *s2l;
} vl_ref;

/* n as a double, exact for n < 2^52 (a chunk's partials count far fewer
 * elements): the bits of 2^52 + n less 2^52, which vectorizes where a
 * conversion of 64-bit integers has no instruction. */
VL_INLINE double vl_count(uint64_t n)
{
    uint64_t u = n | 0x4330000000000000ull;
    double d;
    memcpy(&d, &u, sizeof d);
    return d - 4503599627370496.0;
}

/* The double-double steps of reduce_math.h (rd_two_sum, rd_fast_two_sum,
 * rd_two_prod, rd_dd_add, rd_dd_mul, rd_dd_mul_d), the same operations in
 * the same order, always inlined so that the lane loops vectorize whole. */
VL_INLINE rd_dd vl_two_sum(double a, double b)
{
    rd_dd r;
    double s = a + b, bb = s - a;
    r.hi = s;
    r.lo = (a - (s - bb)) + (b - bb);
    return r;
}

/* Dekker's FastTwoSum, as rd_fast_two_sum. */
VL_INLINE rd_dd vl_fast_two_sum(double a, double b)
{
    rd_dd r;
    double s = a + b;
    r.hi = s;
    r.lo = b - (s - a);
    return r;
}

/* a * b exactly, as rd_two_prod (fma: correctly rounded, an instruction in
 * the variants that have one). */
VL_INLINE rd_dd vl_two_prod(double a, double b)
{
    rd_dd r;
    double p = a * b;
    r.hi = p;
    r.lo = fma(a, b, -p);
    return r;
}

/* x + y in double-double, as rd_dd_add. */
VL_INLINE rd_dd vl_dd_add(rd_dd x, rd_dd y)
{
    rd_dd s = vl_two_sum(x.hi, y.hi), t = vl_two_sum(x.lo, y.lo);
    s = vl_fast_two_sum(s.hi, s.lo + t.hi);
    return vl_fast_two_sum(s.hi, s.lo + t.lo);
}

/* x * y in double-double, as rd_dd_mul. */
VL_INLINE rd_dd vl_dd_mul(rd_dd x, rd_dd y)
{
    rd_dd p = vl_two_prod(x.hi, y.hi);
    return vl_fast_two_sum(p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi));
}

/* x * y in double-double, y a double, as rd_dd_mul_d. */
VL_INLINE rd_dd vl_dd_mul_d(rd_dd x, double y)
{
    rd_dd p = vl_two_prod(x.hi, y);
    return vl_fast_two_sum(p.hi, p.lo + x.lo * y);
}

/* a where mask is all ones, b where it is 0, by the bits: a select that
 * the compiler cannot turn into a branch around b's arithmetic (which
 * keeps the lane loops of the variants without masked vector operations,
 * AVX2's, from vectorizing where floating-point traps are honoured). */
VL_INLINE double vl_pick(uint64_t mask, double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & mask) | (y & ~mask);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* rd_var_merge_plain(a, b) of one lane (neither side empty, n_a + n_b <=
 * RD_VAR_PLAIN): the sums' arithmetic alone, the shift kept. */
VL_INLINE void vl_merge_plain(uint64_t *an, double *ak, double *as1h, double *as1l,
                              double *as2h, double *as2l, uint64_t bn, double bk, double bs1h,
                              double bs2h)
{
    double d = bk - *ak, nb = vl_count(bn);
    *as1h = *as1h + fma(nb, d, bs1h);
    *as1l = 0.0;
    *as2h = *as2h + fma(d, fma(nb, d, 2.0 * bs1h), bs2h);
    *as2l = 0.0;
    *an += bn;
}

/* Whether the merges of w lanes whose partials count an[i] and bn[i]
 * elements are all rd_var_merge_plain: neither side empty, RD_VAR_PLAIN
 * elements or fewer together. */
VL_INLINE int vl_all_plain(const uint64_t *an, const uint64_t *bn, size_t w)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < w; i++)
        bad |= (uint64_t)(an[i] == 0) | (uint64_t)(bn[i] == 0) |
               (uint64_t)(an[i] + bn[i] > RD_VAR_PLAIN);
    return !bad;
}

/* rd_var_merge(a, b) of one lane where neither side is empty (0 < n_a,
 * n_b < 2^52): the sums' arithmetic alone, the shift kept; the
 * double-double arithmetic and the plain one both done and the one that
 * the counts ask for chosen after (no branch). */
VL_INLINE void vl_merge_full(uint64_t *an, double *ak, double *as1h, double *as1l, double *as2h,
                             double *as2l, uint64_t bn, double bk, double bs1h, double bs1l,
                             double bs2h, double bs2l)
{
    uint64_t pn = *an, plain = -(uint64_t)(*an + bn <= RD_VAR_PLAIN);
    double p1h = *as1h, p1l = *as1l, p2h = *as2h, p2l = *as2l;
    vl_merge_plain(&pn, ak, &p1h, &p1l, &p2h, &p2l, bn, bk, bs1h, bs2h);
    rd_dd d = vl_two_sum(bk, -*ak);
    rd_dd nd = vl_dd_mul_d(d, vl_count(bn));
    rd_dd b1 = {bs1h, bs1l}, b2 = {bs2h, bs2l}, a1 = {*as1h, *as1l}, a2 = {*as2h, *as2l};
    rd_dd t = vl_dd_mul(d, b1);
    t.hi *= 2.0;
    t.lo *= 2.0;
    rd_dd s1 = vl_dd_add(a1, vl_dd_add(b1, nd));
    rd_dd s2 = vl_dd_add(a2, vl_dd_add(vl_dd_add(b2, t), vl_dd_mul(nd, d)));
    *as1h = vl_pick(plain, p1h, s1.hi);
    *as1l = vl_pick(plain, p1l, s1.lo);
    *as2h = vl_pick(plain, p2h, s2.hi);
    *as2l = vl_pick(plain, p2l, s2.lo);
    *an += bn;
}

/* rd_var_merge(a, b) of one lane, vl_merge_full's arithmetic done always
 * and the empty sides chosen after (no branch); n_a, n_b < 2^52. */
VL_INLINE void vl_merge_lane(uint64_t *an, double *ak, double *as1h, double *as1l, double *as2h,
                             double *as2l, uint64_t bn, double bk, double bs1h, double bs1l,
                             double bs2h, double bs2l)
{
    uint64_t n = *an;
    double h1 = *as1h, l1 = *as1l, h2 = *as2h, l2 = *as2l;
    vl_merge_full(&n, ak, &h1, &l1, &h2, &l2, bn, bk, bs1h, bs1l, bs2h, bs2l);
    uint64_t only_a = -(uint64_t)(bn == 0), only_b = ~only_a & -(uint64_t)(*an == 0);
    *ak = vl_pick(only_b, bk, *ak);
    *as1h = vl_pick(only_a, *as1h, vl_pick(only_b, bs1h, h1));
    *as1l = vl_pick(only_a, *as1l, vl_pick(only_b, bs1l, l1));
    *as2h = vl_pick(only_a, *as2h, vl_pick(only_b, bs2h, h2));
    *as2l = vl_pick(only_a, *as2l, vl_pick(only_b, bs2l, l2));
    *an = n;
}

/* a[ia + i] = rd_var_merge(a[ia + i], b[ib + i]) for i < m (m a constant
 * where it is inlined; the two ranges disjoint or the same arrays apart):
 * VL_W lanes at a time through local copies, so that the loops have a
 * constant trip count and no stores alias their loads; lanes whose b
 * partials are all empty are left as they are, and lanes whose merges are
 * all plain skip the double-double arithmetic. */
VL_INLINE void vl_merge(vl_ref a, size_t ia, vl_ref b, size_t ib, size_t m)
{
    for (size_t o = 0; o < m; o += VL_W) {
        size_t w = m - o < VL_W ? m - o : VL_W;
        uint64_t any = 0; /* b's partials all empty: a stays, as rd_var_merge returns it */
        for (size_t i = 0; i < w; i++)
            any |= b.n[ib + o + i];
        if (!any)
            continue;
        uint64_t an[VL_W], bn[VL_W];
        double ak[VL_W], a1h[VL_W], a1l[VL_W], a2h[VL_W], a2l[VL_W];
        double bk[VL_W], b1h[VL_W], b1l[VL_W], b2h[VL_W], b2l[VL_W];
        for (size_t i = 0; i < VL_W; i++) {
            size_t x = ia + o + (i < w ? i : 0), y = ib + o + (i < w ? i : 0);
            an[i] = a.n[x], ak[i] = a.k[x], a1h[i] = a.s1h[x], a1l[i] = a.s1l[x];
            a2h[i] = a.s2h[x], a2l[i] = a.s2l[x];
            bn[i] = b.n[y], bk[i] = b.k[y], b1h[i] = b.s1h[y], b1l[i] = b.s1l[y];
            b2h[i] = b.s2h[y], b2l[i] = b.s2l[y];
        }
        if (vl_all_plain(an, bn, VL_W))
            for (size_t i = 0; i < VL_W; i++)
                vl_merge_plain(&an[i], &ak[i], &a1h[i], &a1l[i], &a2h[i], &a2l[i], bn[i], bk[i],
                               b1h[i], b2h[i]);
        else
            for (size_t i = 0; i < VL_W; i++)
                vl_merge_lane(&an[i], &ak[i], &a1h[i], &a1l[i], &a2h[i], &a2l[i], bn[i], bk[i],
                              b1h[i], b1l[i], b2h[i], b2l[i]);
        for (size_t i = 0; i < w; i++) {
            size_t x = ia + o + i;
            a.n[x] = an[i], a.k[x] = ak[i], a.s1h[x] = a1h[i], a.s1l[x] = a1l[i];
            a.s2h[x] = a2h[i], a.s2l[x] = a2l[i];
        }
    }
}

/* Partial i of r as an rd_var. */
VL_INLINE rd_var vl_get(vl_ref r, size_t i)
{
    rd_var v;
    v.n = r.n[i];
    v.k = r.k[i];
    v.s1.hi = r.s1h[i];
    v.s1.lo = r.s1l[i];
    v.s2.hi = r.s2h[i];
    v.s2.lo = r.s2l[i];
    return v;
}

/* Stores v as partial i of r. */
VL_INLINE void vl_put(vl_ref r, size_t i, rd_var v)
{
    r.n[i] = v.n;
    r.k[i] = v.k;
    r.s1h[i] = v.s1.hi;
    r.s1l[i] = v.s1.lo;
    r.s2h[i] = v.s2.hi;
    r.s2l[i] = v.s2.lo;
}

#endif
