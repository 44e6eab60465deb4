/* test_axis_cpu.c - the CPU units of reductions along axes
 * (runtime/axis.h): the lane-wise code of every instruction-set variant
 * gives the bytes of the scalar reference (ax_cpu_chunk_scalar), for block
 * units (a kept last axis) and tile units (a reduced last axis), on random
 * and adversarial data: NaN of both signs, signed zeros, infinities, ties,
 * all-NaN columns with and without skipnan, integers at their limits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/axis.h"
#include "runtime/simd.h"
#include "check.h"
#define RND_SEED 0xa1c9b0d5e7f30217ull
#include "rnd.h"

/* Writes element i of type t: from a few values (ties), the type's
 * limits, NaN, signed zeros and infinities, or random bits; column nan_col
 * of every row NaN (C columns a row); with clean, the even rows finite
 * floats of full mantissas only (so that a run's sums show their order). */
static void put(dt_type t, unsigned char *x, uint64_t i, uint64_t C, uint64_t nan_col, int clean)
{
    size_t sz = dt_size(t);
    uint64_t r = rnd(), bits = rnd(), kind = r % 16;
    if (clean && i / C % 2 == 0 && dt_is_float(t))
        kind = 14;
    int nan = dt_is_float(t) && kind != 14 && (i % C == nan_col || kind == 0);
    double v = (double)(int64_t)(r >> 40) / 4 - 1000000.0;
    if (kind < 5)
        v = (double)(int)(r >> 60) - 3; /* ties */
    if (dt_is_float(t)) {
        static const double special[] = {INFINITY, -INFINITY, 0.0, -0.0};
        if (kind >= 5 && kind < 9)
            v = special[kind - 5];
        if (kind >= 13) /* a full mantissa, so that the order of the sums shows */
            v = ldexp((double)(bits >> 11), (int)(r % 61) - 83) * (r & 2 ? -1 : 1);
        if (nan)
            v = r & 1 ? NAN : -NAN;
        if (t == DT_F32) {
            float f = (float)v;
            memcpy(x + i * 4, &f, 4);
        } else if (t == DT_F64) {
            memcpy(x + i * 8, &v, 8);
        } else { /* a half's bits: its value's or random ones */
            uint16_t h = (uint16_t)(kind == 15 ? bits : (uint64_t)(int)v * 0x111u);
            if (nan)
                h = r & 1 ? 0x7e01 : 0xffc1;
            if (kind >= 5 && kind < 9)
                h = (uint16_t)(kind == 5 ? (t == DT_F16 ? 0x7c00 : 0x7f80)
                               : kind == 6 ? (t == DT_F16 ? 0xfc00 : 0xff80) : kind == 7 ? 0 : 0x8000);
            memcpy(x + i * 2, &h, 2);
        }
        return;
    }
    uint64_t u = kind == 15 ? bits : (uint64_t)(int64_t)v;
    if (kind >= 9 && kind < 13) { /* the limits: 0, all ones, the sign bit alone and below */
        uint64_t sign = 1ull << (8 * sz - 1), lim[] = {0, ~0ull, sign, sign - 1};
        u = lim[kind - 9];
    }
    if (t == DT_BOOL)
        u = kind < 8 ? 0 : (uint8_t)bits;
    memcpy(x + i * sz, &u, sz); /* little-endian: the low bytes */
}

/* Two doubles' bits equal, or both NaN (a NaN's sign and payload are not
 * part of the contract: the sums' own variants differ in them). */
static int same_double(const void *a, const void *b)
{
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return !memcmp(a, b, 8) || (isnan(x) && isnan(y));
}

/* Parts buffers a and b (layout l, n parts) agree: counts and exact sums
 * to the bit, extrema as ax_extrema_parts_same sees them, float sums and
 * variance sums but for NaN bits. */
static int same_parts(const ax_plan *p, const ax_layout *l, const unsigned char *a,
                      const unsigned char *b, size_t n)
{
    int fl = dt_is_float(p->dtype), sqf = fl || dt_size(p->dtype) == 8, same = 1;
    for (size_t i = 0; l->use_sum && i < n; i++) {
        const unsigned char *x = a + l->sum_at + i * l->sum_size;
        const unsigned char *y = b + l->sum_at + i * l->sum_size;
        same &= fl ? same_double(x, y) : !memcmp(x, y, l->sum_size);
    }
    for (size_t i = 0; l->use_sq && i < n; i++) {
        const unsigned char *x = a + l->sq_at + i * l->sq_size;
        const unsigned char *y = b + l->sq_at + i * l->sq_size;
        same &= sqf ? same_double(x, y) : !memcmp(x, y, l->sq_size);
    }
    if (l->use_cnt)
        same &= !memcmp(a + l->count_at, b + l->count_at, n * sizeof(uint64_t));
    for (size_t i = 0; l->use_v && i < n; i++) {
        const rd_var *x = (const rd_var *)(a + l->var_at) + i;
        const rd_var *y = (const rd_var *)(b + l->var_at) + i;
        same &= x->n == y->n && same_double(&x->k, &y->k) && same_double(&x->s1.hi, &y->s1.hi) &&
                same_double(&x->s1.lo, &y->s1.lo) && same_double(&x->s2.hi, &y->s2.hi) &&
                same_double(&x->s2.lo, &y->s2.lo);
    }
    if (l->use_e)
        same &= ax_extrema_parts_same(p, (const rd_extrema *)(a + l->extrema_at),
                                      (const rd_extrema *)(b + l->extrema_at), n);
    return same;
}

/* The buffers of both codes for elements [e0, e1) of x agree: header and
 * raw ends to the byte, the parts by same_parts. */
static int same_chunk(const ax_plan *p, const unsigned char *x, uint64_t e0, uint64_t e1)
{
    size_t sz = dt_size(p->dtype), cap = (size_t)(e1 - e0) * sz + sz;
    size_t bytes = ax_out_bytes(p, cap);
    ax_layout l = ax_layout_for(p, cap);
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    int same = a && b;
    if (same) {
        ax_cpu_chunk(p, x + e0 * sz, e0, e1, cap, a);
        ax_cpu_chunk_scalar(p, x + e0 * sz, e0, e1, cap, b);
        ax_chunk_hdr h;
        memcpy(&h, a, sizeof h);
        same = !memcmp(a, b, l.sum_at) && !memcmp(a + l.raw_at, b + l.raw_at, bytes - l.raw_at) &&
               same_parts(p, &l, a, b, (size_t)h.nentries * p->width);
    }
    free(a);
    free(b);
    return same;
}

/* Every dtype of types (ntypes), op set of opsets (nops), skipnan and
 * variant, on plans of (R, C) reduced over `axes`: the whole array and
 * random chunks. */
static void check_shapes_of(const uint64_t (*shapes)[2], int nshapes, unsigned axes, int clean,
                            const dt_type *types, size_t ntypes, const unsigned *opsets,
                            size_t nops)
{
    for (size_t ti = 0; ti < ntypes; ti++)
        for (int k = 0; k < nshapes; k++)
            for (int sk = 0; sk < 2; sk++)
                for (size_t oi = 0; oi < nops; oi++) {
                    dt_type t = types[ti];
                    ax_plan p;
                    io_status st;
                    if (sk && !dt_is_float(t))
                        continue;
                    if (ax_plan_init(&p, t, opsets[oi], sk, 2, shapes[k], 0, axes, 0, &st)) {
                        CHECKF(0, "plan: %s", st.text);
                        continue;
                    }
                    size_t sz = dt_size(t);
                    unsigned char *x = malloc(p.nelem * sz + 1);
                    for (uint64_t i = 0; i < p.nelem; i++)
                        put(t, x, i, shapes[k][1], shapes[k][1] / 2, clean);
                    for (int v = 0; v < SIMD_COUNT; v++) {
                        if (!simd_runs(v))
                            continue;
                        simd_force(v);
                        CHECKF(same_chunk(&p, x, 0, p.nelem), "%s dtype %d shape %d ops %zu skipnan %d",
                               simd_name(v), (int)t, k, oi, sk);
                        for (int r = 0; r < 3; r++) {
                            uint64_t a = rnd() % (p.nelem + 1), b = rnd() % (p.nelem + 1);
                            CHECKF(same_chunk(&p, x, a < b ? a : b, a < b ? b : a),
                                   "%s dtype %d shape %d ops %zu skipnan %d cut %d",
                                   simd_name(v), (int)t, k, oi, sk, r);
                        }
                    }
                    simd_force(-1);
                    free(x);
                }
}

/* check_shapes_of with every dtype and the op sets sum, min with argmax,
 * and all of them. */
static void check_shapes(const uint64_t (*shapes)[2], int nshapes, unsigned axes, int clean)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8, DT_I16, DT_I32,
                                    DT_I64, DT_U8, DT_U16, DT_U32, DT_U64, DT_BOOL};
    static const unsigned opsets[] = {RD_OP_SUM, RD_OP_MIN | RD_OP_ARGMAX,
                                      (1u << RD_OP_NUM) - 1};
    check_shapes_of(shapes, nshapes, axes, clean, types, sizeof types / sizeof *types, opsets,
                    sizeof opsets / sizeof *opsets);
}

/* The float block code's lanes: columns 1 to 33, 63, 64, 65 and 1000 (every
 * lane count of a last group of columns, one and several groups), rows not
 * a multiple of a block and enough of them for entries of several levels,
 * with op sets that need each combination of moments, extrema and
 * variance. */
static void test_block_lanes(void)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    static const unsigned opsets[] = {
        RD_OP_VAR, RD_OP_MEAN | RD_OP_STD, RD_OP_MIN | RD_OP_VAR, RD_OP_ARGMAX,
        RD_OP_MEAN | RD_OP_STD | RD_OP_MIN | RD_OP_MAX, RD_OP_SUMSQ | RD_OP_COUNT | RD_OP_ARGMIN};
    uint64_t shapes[37][2];
    int n = 0;
    for (uint64_t c = 1; c <= 33; c++)
        shapes[n][1] = c, n++;
    shapes[n++][1] = 63;
    shapes[n++][1] = 64;
    shapes[n++][1] = 65;
    shapes[n++][1] = 1000;
    for (int k = 0; k < n; k++) { /* rows: 16 * 70 + 5 down to 16 * 3 + 7 as columns grow */
        uint64_t c = shapes[k][1], rows = 6000 / c;
        rows = rows > 16 * 70 + 5 ? 16 * 70 + 5 : rows < 16 * 3 + 7 ? 16 * 3 + 7 : rows;
        shapes[k][0] = rows % 16 ? rows : rows + 9;
    }
    check_shapes_of((const uint64_t(*)[2])shapes, n, 1u << 0, 0, types,
                    sizeof types / sizeof *types, opsets, sizeof opsets / sizeof *opsets);
}

/* Block units: the columns of (R, C) over axis 0, C below, at and above
 * the columns the code adds at a time, R not a multiple of a block. */
static void test_blocks(void)
{
    static const uint64_t shapes[][2] = {{37, 1}, {50, 5}, {33, 16}, {70, 17}, {40, 64}, {19, 100}};
    check_shapes(shapes, 6, 1u << 0, 0);
}

/* Tile units: runs of (R, T) over axis 1, short runs (their variance
 * VL_W runs at a time up to 256 elements, a last group of fewer), longer
 * ones, runs of a whole sub-tile and one more, and one beyond a tile. */
static void test_tiles(void)
{
    static const uint64_t shapes[][2] = {{40, 2},    {30, 7},    {20, 64},   {9, 129},
                                         {19, 256},  {10, 257},  {5, 700},   {17, 2048},
                                         {11, 2049}, {3, 17000}};
    check_shapes(shapes, 10, 1u << 1, 1);
}

/* Every float16 and bfloat16 value as the lane code converts it: a (2, 65536)
 * array whose first row holds every bit pattern (its sum over axis 0 adds a
 * zero to each, its variance shift is each), with and without skipnan. */
static void test_half_values(void)
{
    static const dt_type types[] = {DT_F16, DT_BF16};
    uint64_t shape[2] = {2, 65536};
    unsigned char *x = calloc(2 * 65536, 2);
    for (unsigned i = 0; x && i < 65536; i++) {
        x[2 * i] = (unsigned char)i;
        x[2 * i + 1] = (unsigned char)(i >> 8);
    }
    for (size_t ti = 0; x && ti < 2; ti++)
        for (int sk = 0; sk < 2; sk++) {
            ax_plan p;
            io_status st;
            if (ax_plan_init(&p, types[ti], RD_OP_SUM | RD_OP_VAR | RD_OP_MIN, sk, 2, shape, 0,
                             1u << 0, 0, &st)) {
                CHECKF(0, "plan: %s", st.text);
                continue;
            }
            for (int v = 0; v < SIMD_COUNT; v++) {
                if (!simd_runs(v))
                    continue;
                simd_force(v);
                CHECKF(same_chunk(&p, x, 0, p.nelem), "%s dtype %d skipnan %d", simd_name(v),
                       (int)types[ti], sk);
            }
            simd_force(-1);
        }
    free(x);
}

/* Value of row r of column c of the extrema pattern (R rows): the extremum
 * again in a later unit and later in its own (col 0), at a unit's last row
 * and the next unit's first (1), a new extremum in every unit (2, 3), all
 * equal (4), NaN in two units (5), all NaN (6), -0.0 beside +0.0 (7), the
 * minimum in the last, partial unit (8). */
static double ext_value(uint64_t r, uint64_t c, uint64_t R)
{
    switch (c) {
    case 0: return r == 37 || r == 40 || r == 70 ? -1.0 : r == 9 || r == 60 ? 5.0 : 1.0;
    case 1: return r == 15 || r == 16 ? -2.0 : r == 31 || r == 32 ? 3.0 : 0.5;
    case 2: return (double)R - (double)r;
    case 3: return (double)r;
    case 4: return 2.0;
    case 5: return r == 20 || r == 50 ? NAN : (double)(r % 7);
    case 6: return NAN;
    case 7: return r % 3 == 0 ? -0.0 : 0.0;
    default: return r == R - 1 ? -4.0 : (double)(r % 5);
    }
}

/* Writes v, a NaN, a signed zero or a small integer (exact in every float
 * type), as element i of type t. */
static void ext_put(dt_type t, unsigned char *x, uint64_t i, double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h = (uint16_t)(u >> 16); /* bfloat16: the high half */
    if (t == DT_F16) { /* sign, exponent + 15, the 10 bits after the leading one */
        int e = 0;
        double m = frexp(fabs(v), &e);
        h = isnan(v) ? 0x7e00
            : v == 0 ? (uint16_t)(signbit(v) ? 0x8000 : 0)
                     : (uint16_t)((v < 0 ? 0x8000u : 0) | (unsigned)(e + 14) << 10 |
                                  (unsigned)((m * 2 - 1) * 1024));
    }
    if (t == DT_F32)
        memcpy(x + i * 4, &f, 4);
    else if (t == DT_F64)
        memcpy(x + i * 8, &v, 8);
    else
        memcpy(x + i * 2, &h, 2);
}

/* The row numpy's argmin (want_max 0) or argmax gives column c of the
 * pattern: the first NaN (without skipnan), else the first extremum by the
 * total order of keys (-0.0 below +0.0); -1 when nothing is left. */
static int64_t ext_oracle(uint64_t c, uint64_t R, int want_max, int skip)
{
    int64_t best = -1;
    for (uint64_t r = 0; r < R; r++) {
        double v = ext_value(r, c, R);
        if (isnan(v)) {
            if (!skip)
                return (int64_t)r;
            continue;
        }
        double b = best < 0 ? 0 : ext_value((uint64_t)best, c, R);
        int beyond = want_max ? v > b || (v == b && signbit(b) && !signbit(v))
                              : v < b || (v == b && signbit(v) && !signbit(b));
        if (best < 0 || beyond)
            best = (int64_t)r;
    }
    return best;
}

/* The lane code's extrema keep no row per element: each unit's extremum
 * notes its unit, and its lowest row is found after the entry. argmin and
 * argmax of patterns that reach an extremum again in a later unit, at unit
 * edges, in every unit, in NaN and in signed zeros agree with the scalar
 * reference and with the rows counted here, for every variant, float type
 * and skipnan, whole and cut into chunks at every unit edge. */
static void test_block_extrema_rows(void)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    const uint64_t R = 16 * 5 + 3, C = 9;
    for (size_t ti = 0; ti < 4; ti++)
        for (int sk = 0; sk < 2; sk++) {
            dt_type t = types[ti];
            uint64_t shape[2] = {R, C};
            ax_plan p;
            io_status st;
            if (ax_plan_init(&p, t, RD_OP_ARGMIN | RD_OP_ARGMAX | RD_OP_MIN, sk, 2, shape, 0,
                             1u << 0, 0, &st)) {
                CHECKF(0, "plan: %s", st.text);
                continue;
            }
            size_t sz = dt_size(t), cap = (size_t)(R * C) * sz + sz;
            unsigned char *x = malloc(R * C * sz), *buf = malloc(ax_out_bytes(&p, cap));
            for (uint64_t i = 0; x && i < R * C; i++)
                ext_put(t, x, i, ext_value(i / C, i % C, R));
            for (int v = 0; x && buf && v < SIMD_COUNT; v++) {
                if (!simd_runs(v))
                    continue;
                simd_force(v);
                for (uint64_t cut = 0; cut <= R; cut += 16) {
                    uint64_t e = cut * C > R * C ? R * C : cut * C;
                    CHECKF(same_chunk(&p, x, 0, e) && same_chunk(&p, x, e, R * C),
                           "%s dtype %d skipnan %d cut %llu", simd_name(v), (int)t, sk,
                           (unsigned long long)cut);
                }
                ax_state *s = ax_state_new(&p);
                int64_t amin[9], amax[9];
                ax_cpu_chunk(&p, x, 0, R * C, cap, buf);
                int ok = s && ax_state_add_chunk(s, buf, cap) == 0;
                if (ok) {
                    ax_state_result(s, RD_OP_ARGMIN, 0, amin);
                    ax_state_result(s, RD_OP_ARGMAX, 0, amax);
                }
                CHECKF(ok, "%s dtype %d: state", simd_name(v), (int)t);
                for (uint64_t c = 0; ok && c < C; c++) {
                    int64_t wmin = ext_oracle(c, R, 0, sk), wmax = ext_oracle(c, R, 1, sk);
                    CHECKF((wmin < 0 || amin[c] == wmin) && (wmax < 0 || amax[c] == wmax),
                           "%s dtype %d skipnan %d column %llu: %lld, %lld (want %lld, %lld)",
                           simd_name(v), (int)t, sk, (unsigned long long)c, (long long)amin[c],
                           (long long)amax[c], (long long)wmin, (long long)wmax);
                }
                ax_state_free(s);
            }
            simd_force(-1);
            free(x);
            free(buf);
        }
}

/* Whether element i of x (float type t) is a NaN. */
static int nan_at(dt_type t, const unsigned char *x, uint64_t i)
{
    if (t == DT_F32) {
        float f;
        memcpy(&f, x + i * 4, 4);
        return isnan(f);
    }
    if (t == DT_F64) {
        double d;
        memcpy(&d, x + i * 8, 8);
        return isnan(d);
    }
    uint16_t h;
    memcpy(&h, x + i * 2, 2);
    return t == DT_F16 ? hf_f16_isnan(h) : hf_bf16_isnan(h);
}

/* The bytes of a shard state of all of x, from the lane code's buffer or
 * the reference code's (scalar), into *len; NULL if it could not be made. */
static unsigned char *saved_state(const ax_plan *p, const unsigned char *x, int scalar,
                                  size_t *len)
{
    size_t cap = (size_t)p->nelem * dt_size(p->dtype) + 8;
    unsigned char *buf = malloc(ax_out_bytes(p, cap)), *bytes = NULL;
    ax_state *s = ax_state_new_shard(p, 0, p->nelem);
    if (buf && s) {
        (scalar ? ax_cpu_chunk_scalar : ax_cpu_chunk)(p, x, 0, p->nelem, cap, buf);
        if (ax_state_add_chunk(s, buf, cap) == 0 && (bytes = malloc(ax_state_bytes(s))))
            ax_state_save(s, bytes), *len = ax_state_bytes(s);
    }
    ax_state_free(s);
    free(buf);
    return bytes;
}

/* Without argmin and argmax the lane code notes only an extremum's unit of
 * rows: a saved shard state has the bytes of one from the reference code,
 * which notes the row (as the GPU does), and so do the results. */
static void test_states_by_unit(void)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    static const unsigned opsets[] = {RD_OP_MIN | RD_OP_MAX, RD_OP_MEAN | RD_OP_STD | RD_OP_MAX,
                                      RD_OP_MIN | RD_OP_ARGMAX};
    static const uint64_t shapes[][2] = {{16 * 40 + 5, 64}, {16 * 9, 20}, {77, 3}};
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t k = 0; k < 3; k++)
            for (size_t oi = 0; oi < 3; oi++) {
                ax_plan p;
                io_status st;
                if (ax_plan_init(&p, types[ti], opsets[oi], 0, 2, shapes[k], 0, 1u << 0, 0,
                                 &st)) {
                    CHECKF(0, "plan: %s", st.text);
                    continue;
                }
                CHECK(ax_extrema_by_unit(&p) == (oi < 2));
                size_t sz = dt_size(p.dtype), na = 0, nb = 0;
                unsigned char *x = malloc(p.nelem * sz);
                for (uint64_t i = 0; x && i < p.nelem; i++) /* no NaN: its bits are free */
                    do
                        put(p.dtype, x, i, shapes[k][1], shapes[k][1], 0);
                    while (nan_at(p.dtype, x, i));
                unsigned char *a = x ? saved_state(&p, x, 0, &na) : NULL;
                unsigned char *b = x ? saved_state(&p, x, 1, &nb) : NULL;
                CHECKF(a && b && na == nb && !memcmp(a, b, na), "dtype %d shape %zu ops %zu",
                       (int)types[ti], k, oi);
                free(a);
                free(b);
                free(x);
            }
}

int main(void)
{
    RUN(test_blocks);
    RUN(test_block_lanes);
    RUN(test_tiles);
    RUN(test_half_values);
    RUN(test_block_extrema_rows);
    RUN(test_states_by_unit);
    return check_summary();
}
