/* test_axis.c - the plan and the chunk contract of reductions along axes
 * (runtime/axis.h): the canonical groups of shapes and axes, the --axis
 * parser, a chunk's head, units, entries and tail covering it exactly, and
 * the folded outputs the same bytes whatever the chunk cuts (the property
 * the GPU's buffers rely on), on random data with NaN and signed zeros. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/par.h"
#include "runtime/axis.h"
#include "runtime/engine.h"
#include "check.h"
#define RND_SEED 0x5eedaa15c0ffee11ull
#include "rnd.h"

/* A plan for shape (up to 4 axes, 0-terminated... n given) and axes. */
static ax_plan plan_of(dt_type t, unsigned ops, int n, const uint64_t *shape, int fortran,
                       unsigned axes)
{
    ax_plan p;
    io_status st;
    CHECK(ax_plan_init(&p, t, ops, 0, n, shape, fortran, axes, 0, &st) == 0);
    return p;
}

/* Canonical groups, run length, runs per output and the unit kind. */
static void test_groups(void)
{
    uint64_t s1[] = {7, 1, 5};
    ax_plan p = plan_of(DT_F32, RD_OP_SUM, 3, s1, 0, 1u << 2);
    CHECK(p.ngroups == 2 && p.glen[0] == 7 && !p.greduced[0] && p.glen[1] == 5);
    CHECK(p.T == 5 && p.J == 1 && p.nout == 7 && p.unit == AX_UNIT_TILE);
    p = plan_of(DT_F32, RD_OP_SUM, 3, s1, 0, 1u << 0);
    CHECK(p.T == 1 && p.J == 7 && p.nout == 5 && p.unit == AX_UNIT_BLOCK && p.C == 5 && p.L == 7);
    uint64_t s2[] = {2, 3, 4, 5};
    p = plan_of(DT_F64, RD_OP_SUM, 4, s2, 0, (1u << 1) | (1u << 2)); /* merged: 12 */
    CHECK(p.ngroups == 3 && p.glen[1] == 12 && p.greduced[1] && p.T == 1 && p.J == 12);
    p = plan_of(DT_F64, RD_OP_SUM, 4, s2, 0, (1u << 0) | (1u << 2)); /* R K R K, L = 4 */
    CHECK(p.ngroups == 4 && p.unit == AX_UNIT_NONE && p.J == 8 && p.nout == 15);
    p = plan_of(DT_F64, RD_OP_SUM, 4, s2, 1, 1u << 3); /* Fortran: axis 3 outermost */
    CHECK(p.T == 1 && p.glen[0] == 5 && p.greduced[0] && p.J == 5 && p.nout == 24);
    p = plan_of(DT_F64, RD_OP_SUM, 4, s2, 1, 1u << 0); /* Fortran: axis 0 contiguous */
    CHECK(p.T == 2 && p.unit == AX_UNIT_TILE && p.J == 1);
    uint64_t s3[] = {4, 0, 3};
    p = plan_of(DT_F32, RD_OP_SUM, 3, s3, 0, 1u << 1);
    CHECK(p.nelem == 0 && p.J == 0 && p.nout == 12 && p.unit == AX_UNIT_NONE);
    uint64_t shape[AX_MAX_DIMS];
    p.keepdims = 1;
    CHECK(ax_result_shape(&p, shape) == 3 && shape[1] == 1 && shape[2] == 3);
}

/* The --axis parser: numpy's meaning, and every malformed list refused. */
static void test_parse(void)
{
    unsigned m;
    io_status st;
    CHECK(ax_parse_axes("0", 2, &m, &st) == 0 && m == 1);
    CHECK(ax_parse_axes("-1,0", 3, &m, &st) == 0 && m == 5);
    CHECK(ax_parse_axes("2", 2, &m, &st) < 0 && strstr(st.text, "out of bounds"));
    CHECK(ax_parse_axes("-3", 2, &m, &st) < 0);
    CHECK(ax_parse_axes("1,-1", 2, &m, &st) < 0 && strstr(st.text, "twice"));
    const char *bad[] = {"", ",", "0,", ",0", "0,,1", "a", "1a", " 1", "+1", "0x1", "-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECKF(ax_parse_axes(bad[i], 4, &m, &st) < 0, "'%s' accepted", bad[i]);
}

/* A chunk's head, entries (aligned, at most 64 units, inside one segment,
 * back to back) and tail cover it exactly. */
static void check_cover(const ax_plan *p, uint64_t e0, uint64_t e1)
{
    ax_chunk_hdr h = ax_chunk_of(p, e0, e1);
    uint64_t at = e0 + h.head;
    ax_entry ent[4096];
    size_t n = h.nentries < 4096 ? ax_chunk_entries(p, h.u0, h.u1, ent) : 0;
    CHECK(n == h.nentries);
    uint64_t u = h.u0, per = p->unit == AX_UNIT_TILE ? p->tiles_per_run : p->blocks_per_sweep;
    for (size_t i = 0; i < n; i++) {
        CHECK(ent[i].u == u && ent[i].n == (uint64_t)1 << ent[i].level);
        CHECK(ent[i].level <= AX_FOLD_LEVELS && ax_unit_leaf(p, u) % ent[i].n == 0);
        CHECK((u + ent[i].n - 1) / per == u / per);
        for (uint64_t k = 0; k < ent[i].n; k++) {
            uint64_t s, len;
            ax_unit_span(p, u + k, &s, &len);
            CHECKF(s == at, "unit %llu at %llu, expected %llu", (unsigned long long)(u + k),
                   (unsigned long long)s, (unsigned long long)at);
            at = s + len;
        }
        u += ent[i].n;
    }
    CHECK(u == h.u1 || h.u0 == h.u1);
    CHECK(at + h.tail == e1 || (h.u0 == h.u1 && h.head == e1 - e0 && h.tail == 0));
}

/* Random chunk cuts of several plans. */
static void test_cover(void)
{
    uint64_t shapes[][3] = {{300, 67, 1}, {3, 40000, 1}, {70000, 3, 1}, {5, 33000, 2}};
    unsigned axes[] = {1, 2, 1, 2};
    for (int k = 0; k < 4; k++) {
        ax_plan p = plan_of(DT_F32, RD_OP_SUM, 3, shapes[k], 0, axes[k]);
        for (int i = 0; i < 200; i++) {
            uint64_t a = rnd() % (p.nelem + 1), b = rnd() % (p.nelem + 1);
            check_cover(&p, a < b ? a : b, a < b ? b : a);
        }
        check_cover(&p, 0, p.nelem);
    }
}

/* The entry count of ax_chunk_of equals the entries listed, on plans whose
 * segments are one unit, many units, and sweeps whose leaves start
 * unaligned (two reduced groups: a sweep's first leaf is r * L / 16). */
static void test_entry_count(void)
{
    uint64_t s1[] = {9, 3, 320, 2}, s2[] = {3, 50000}, s3[] = {100000, 3}, s4[] = {1000, 5};
    ax_plan plans[] = {plan_of(DT_F32, RD_OP_SUM, 4, s1, 0, (1u << 0) | (1u << 2)),
                       plan_of(DT_F32, RD_OP_SUM, 2, s2, 0, 1u << 1),
                       plan_of(DT_F64, RD_OP_SUM, 2, s3, 0, 1u << 0),
                       plan_of(DT_F64, RD_OP_SUM, 2, s4, 0, 1u << 1)};
    CHECK(plans[0].unit == AX_UNIT_BLOCK && plans[0].blocks_per_sweep == 20);
    ax_entry *ent = malloc(200000 * sizeof *ent);
    for (int k = 0; ent && k < 4; k++)
        for (int i = 0; i < 300; i++) {
            const ax_plan *p = &plans[k];
            uint64_t a = rnd() % (p->nelem + 1), b = rnd() % (p->nelem + 1);
            ax_chunk_hdr h = ax_chunk_of(p, a < b ? a : b, a < b ? b : a);
            size_t n = ax_chunk_entries(p, h.u0, h.u1, ent);
            CHECKF(n == h.nentries, "plan %d: %zu entries listed, %llu counted", k, n,
                   (unsigned long long)h.nentries);
        }
    free(ent);
}

/* A chunk's result buffer holds its parts: on random shapes, axes and cuts,
 * a chunk's entries never exceed the layout's bound for chunks of its size
 * (which is far below a part per unit where the units fold). */
static void test_parts_bound(void)
{
    int folded = 0, small = 0;
    for (int i = 0; i < 20000; i++) {
        int n = 1 + (int)(rnd() % 4);
        uint64_t shape[4], nel = 1;
        for (int d = 0; d < n; d++) {
            uint64_t r = rnd() % 8;
            shape[d] = r < 3 ? 1 + rnd() % 4 : r < 6 ? 1 + rnd() % 300 : 1 + rnd() % 20000;
            nel *= shape[d];
        }
        unsigned axes = 1 + (unsigned)(rnd() % ((1u << n) - 1));
        if (nel > ((uint64_t)1 << 26))
            continue;
        ax_plan p = plan_of(DT_F32, RD_OP_SUM | RD_OP_STD, n, shape, 0, axes);
        if (p.unit == AX_UNIT_NONE)
            continue;
        uint64_t a = rnd() % (nel + 1), b = rnd() % (nel + 1), lo = a < b ? a : b;
        uint64_t len = (a < b ? b : a) - lo;
        if (len == 0)
            continue;
        ax_chunk_hdr h = ax_chunk_of(&p, lo, lo + len);
        ax_layout l = ax_layout_for(&p, (size_t)len * 4);
        CHECKF(h.nentries * p.width <= l.max_parts,
               "shape %d dims, axes %u: %llu entries of width %llu, room for %zu parts", n, axes,
               (unsigned long long)h.nentries, (unsigned long long)p.width, l.max_parts);
        /* after raw_at: the head and tail, the GPU's entry list and its tiles' parts */
        uint64_t units = h.u1 - h.u0, part = l.sum_size + l.sq_size + sizeof(uint64_t) +
                                              sizeof(rd_extrema) + sizeof(rd_var);
        uint64_t raw = (h.head + h.tail) * 4 + 8 + h.nentries * sizeof(ax_gpu_entry) + 8 +
                       (p.unit == AX_UNIT_TILE && p.tiles_per_run > 1 ? units * part : 0);
        /* (the room never exceeds the chunk's capacity: more scratch than that, and the
           chunk's parts are made on the host) */
        CHECKF(l.raw_at + raw <= l.total || l.total - l.raw_at >= (size_t)len * 4,
               "shape %d dims, axes %u: %llu bytes after raw_at, room for %zu", n, axes,
               (unsigned long long)raw, l.total - l.raw_at);
        small += l.total - l.raw_at < (size_t)len * 4 / 4;
        folded += h.u1 - h.u0 > 2 * h.nentries;
    }
    CHECKF(folded > 100, "only %d chunks folded", folded);
    CHECKF(small > 100, "only %d chunks with raw room under a quarter of their bytes", small);
}

/* The buffer holds only the moments the ops need: a double sum per part of
 * a float sum (its row's exact sum here), no squares, no counts without
 * skipnan; counts with it; 128-bit sums of integers. */
static void test_lean_parts(void)
{
    uint64_t shape[] = {40, 3};
    ax_plan p = plan_of(DT_F32, RD_OP_SUM, 2, shape, 0, 1u << 1);
    ax_layout l = ax_layout_for(&p, 120 * 4);
    CHECK(l.use_sum && !l.use_sq && !l.use_cnt && !l.use_e && !l.use_v && l.sum_size == 8);
    CHECK(l.sq_at == l.sum_at + ((l.max_parts * 8 + 63) & ~(size_t)63) && l.raw_at == l.sq_at);
    float x[120];
    for (int i = 0; i < 120; i++)
        x[i] = (float)(i % 7) - 2.5f;
    unsigned char *out = calloc(1, l.total);
    ax_cpu_chunk(&p, x, 0, 120, 120 * 4, out);
    ax_chunk_hdr h;
    memcpy(&h, out, sizeof h);
    CHECK(h.nentries == 40);
    for (int r = 0; out && r < 40; r++) {
        double got, want = (double)x[3 * r] + (double)x[3 * r + 1] + (double)x[3 * r + 2];
        memcpy(&got, out + l.sum_at + (size_t)r * 8, 8);
        CHECKF(got == want, "row %d: %g, expected %g", r, got, want);
    }
    free(out);
    p = plan_of(DT_F32, RD_OP_MEAN | RD_OP_SUMSQ, 2, shape, 0, 1u << 0);
    p.skipnan = 1;
    l = ax_layout_for(&p, 120 * 4);
    CHECK(l.use_sum && l.use_sq && l.use_cnt && l.count_at > l.sq_at && l.extrema_at > l.count_at);
    p = plan_of(DT_I16, RD_OP_COUNT, 2, shape, 0, 1u << 0);
    l = ax_layout_for(&p, 120 * 2);
    CHECK(!l.use_sum && !l.use_sq && !l.use_cnt && l.raw_at == l.sum_at);
    p = plan_of(DT_I16, RD_OP_SUM | RD_OP_SUMSQ, 2, shape, 0, 1u << 0);
    l = ax_layout_for(&p, 120 * 2);
    CHECK(l.sum_size == 16 && l.sq_size == 16);
}

/* Folds x cut at the given element boundaries into state s (NULL: none),
 * every chunk's buffer from ax_cpu_chunk. */
static ax_state *fold_into(const ax_plan *p, ax_state *s, const void *x, const uint64_t *cut,
                           int ncut)
{
    size_t sz = dt_size(p->dtype), cap = 0;
    for (int i = 0; i + 1 < ncut; i++)
        if ((cut[i + 1] - cut[i]) * sz > cap)
            cap = (size_t)(cut[i + 1] - cut[i]) * sz;
    cap = cap ? cap : sz;
    void *out = malloc(ax_out_bytes(p, cap));
    for (int i = 0; out && s && i + 1 < ncut; i++) {
        ax_cpu_chunk(p, (const char *)x + cut[i] * sz, cut[i], cut[i + 1], cap, out);
        CHECK(ax_state_add_chunk(s, out, cap) == 0);
    }
    free(out);
    return s;
}

/* Folds x (n elements) cut at the given element boundaries into a new
 * state. */
static ax_state *fold_cut(const ax_plan *p, const void *x, const uint64_t *cut, int ncut)
{
    return fold_into(p, ax_state_new(p), x, cut, ncut);
}

/* Every op's result bytes and flags of two states equal, with ddof for
 * var and std. */
static int same_results_ddof(const ax_plan *p, const ax_state *a, const ax_state *b, int ddof)
{
    int same = 1;
    for (int bit = 0; bit < RD_OP_NUM; bit++) {
        size_t bytes = (size_t)p->nout * dt_size(ax_result_type(p, 1 << bit));
        unsigned char *ra = calloc(1, bytes + 1), *rb = calloc(1, bytes + 1);
        if (!ra || !rb)
            return 0;
        int fa = ax_state_result(a, 1 << bit, ddof, ra);
        int fb = ax_state_result(b, 1 << bit, ddof, rb);
        same &= fa == fb && !memcmp(ra, rb, bytes);
        free(ra);
        free(rb);
    }
    return same;
}

/* Every op's result bytes of two states equal (ddof 1). */
static int same_results(const ax_plan *p, const ax_state *a, const ax_state *b)
{
    return same_results_ddof(p, a, b, 1);
}

/* A state that computes its values as chunks come (every output one run
 * along the last axes, of 1 to RD_TILE elements) gives every op's bytes
 * and flags of a state that keeps the accumulators, wherever the chunks
 * are cut, for every ddof (past the run's length: NaN and the empty flag),
 * with NaNs (also skipped), signed zeros, 64-bit sums beyond range and in
 * Fortran order; it keeps them as
 * ax_state_values; any other plan's state (one reduced along no axis or a leading
 * one) keeps the accumulators. */
static void test_values(void)
{
    /* the last: Fortran order, its axis 0 the one along memory */
    uint64_t shapes[][3] = {{300, 67, 1}, {9, 1, 1}, {3, 16384, 1}, {40, 5, 48}, {1, 1, 3},
                            {300, 67, 1}};
    unsigned axes[] = {2, 2, 2, 5, 4, 1};
    dt_type types[] = {DT_F32, DT_F64, DT_I16, DT_I64, DT_U8};
    for (int k = 0; k < 6; k++)
        for (int d = 0; d < 5; d++) {
            ax_plan p = plan_of(types[d], (1u << RD_OP_NUM) - 1, 3, shapes[k], k == 5, axes[k]);
            p.skipnan = d < 2 && k % 2 == 0; /* some float rows with their NaNs skipped */
            size_t sz = dt_size(types[d]);
            unsigned char *x = malloc(p.nelem * sz);
            for (uint64_t i = 0; i < p.nelem; i++) {
                double v = (double)(int64_t)(rnd() % 2001 - 1000) / 8;
                if (rnd() % 97 == 0)
                    v = rnd() % 2 ? -0.0 : NAN;
                float f = (float)v;
                int16_t h = (int16_t)(rnd() >> 48);
                int64_t w = rnd() % 3 ? (int64_t)(rnd() >> 1) : -(int64_t)(rnd() >> 2);
                uint8_t b = (uint8_t)(rnd() >> 56);
                const void *src = types[d] == DT_F32 ? (const void *)&f
                                  : types[d] == DT_F64 ? (const void *)&v
                                  : types[d] == DT_I16 ? (const void *)&h
                                  : types[d] == DT_I64 ? (const void *)&w
                                                       : (const void *)&b;
                memcpy(x + i * sz, src, sz);
            }
            uint64_t whole[2] = {0, p.nelem}, cut[6] = {0, 0, 0, 0, 0, p.nelem};
            for (int i = 1; i < 5; i++)
                cut[i] = rnd() % (p.nelem + 1);
            for (int i = 1; i < 5; i++) /* sort */
                for (int j = i; j > 1 && cut[j] < cut[j - 1]; j--) {
                    uint64_t tmp = cut[j];
                    cut[j] = cut[j - 1];
                    cut[j - 1] = tmp;
                }
            ax_state *ref = fold_cut(&p, x, whole, 2);
            int whole_runs = k != 1 && k != 3; /* (9, 1, 1): no axis is reduced */
            for (int ddof = 0; ddof < 3; ddof++) {
                int dd = ddof == 2 ? (int)p.T + 1 : ddof;
                ax_state *v = fold_into(&p, ax_state_new_values(&p, dd), x, cut, 6);
                int flags;
                int kept = v && ax_state_values(v, RD_OP_STD, &flags) != NULL;
                CHECKF(ref && v && kept == whole_runs && same_results_ddof(&p, ref, v, dd),
                       "shape %d dtype %d ddof %d: values kept %d, results %s", k, d, dd, kept,
                       ref && v && same_results_ddof(&p, ref, v, dd) ? "equal" : "differ");
                ax_state_free(v);
            }
            ax_state_free(ref);
            free(x);
        }
}

/* The outputs' bytes do not depend on where the chunks are cut. */
static void test_cuts(void)
{
    uint64_t shapes[][3] = {{300, 67, 1}, {3, 40000, 1}, {20, 3, 18}, {40, 5, 48}, {7, 1, 9}};
    unsigned axes[] = {1, 2, 5, 5, 3};
    for (int k = 0; k < 5; k++) {
        for (int d = 0; d < 2; d++) {
            dt_type t = d ? DT_F64 : DT_F32;
            ax_plan p = plan_of(t, ~0u & ((1u << RD_OP_NUM) - 1), 3, shapes[k], k == 4, axes[k]);
            size_t sz = dt_size(t);
            unsigned char *x = malloc(p.nelem * sz);
            for (uint64_t i = 0; i < p.nelem; i++) {
                double v = (double)(int64_t)(rnd() % 2001 - 1000) / 8;
                if (rnd() % 97 == 0)
                    v = rnd() % 2 ? -0.0 : NAN;
                if (d)
                    memcpy(x + i * 8, &v, 8);
                else {
                    float f = (float)v;
                    memcpy(x + i * 4, &f, 4);
                }
            }
            uint64_t whole[2] = {0, p.nelem};
            ax_state *ref = fold_cut(&p, x, whole, 2);
            for (int r = 0; r < 6; r++) {
                uint64_t cut[10];
                int n = 0;
                cut[n++] = 0;
                for (int i = 0; i < 8; i++)
                    cut[n++] = rnd() % (p.nelem + 1);
                cut[n++] = p.nelem;
                for (int i = 1; i < n; i++) /* sort */
                    for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
                        uint64_t tmp = cut[j];
                        cut[j] = cut[j - 1];
                        cut[j - 1] = tmp;
                    }
                ax_state *alt = fold_cut(&p, x, cut, n);
                CHECKF(ref && alt && same_results(&p, ref, alt), "shape %d dtype %d cut %d", k,
                       d, r);
                ax_state_free(alt);
            }
            ax_state_free(ref);
            free(x);
        }
    }
}

/* n random element boundaries of [lo, hi) in order, lo and hi included;
 * returns how many (n + 2). */
static int random_cuts(uint64_t lo, uint64_t hi, int n, uint64_t *cut)
{
    int k = 0;
    cut[k++] = lo;
    for (int i = 0; i < n; i++)
        cut[k++] = lo + rnd() % (hi - lo + 1);
    cut[k++] = hi;
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
            uint64_t tmp = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = tmp;
        }
    return k;
}

/* Saves shard state s of elements [e0, e1) and loads it back; a copy
 * shortened by one byte and one said to end later are refused. */
static ax_state *reload(const ax_plan *p, const ax_state *s, uint64_t e0, uint64_t e1)
{
    size_t n = ax_state_bytes(s);
    unsigned char *buf = malloc(n + 1);
    io_status st;
    if (!buf)
        return NULL;
    ax_state_save(s, buf);
    ax_state *back = ax_state_load(p, e0, e1, buf, n, &st), *bad;
    CHECK((bad = ax_state_load(p, e0, e1, buf, n - 1, &st)) == NULL);
    ax_state_free(bad);
    if (e1 < p->nelem && ax_shard_cut(p, e1 + 1) != e1) {
        CHECK((bad = ax_state_load(p, e0, ax_shard_cut(p, e1 + 1), buf, n, &st)) == NULL);
        ax_state_free(bad);
    }
    free(buf);
    return back;
}

/* Whether two states save to the same bytes. */
static int same_saved(const ax_state *a, const ax_state *b)
{
    size_t n = ax_state_bytes(a);
    unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
    int same = x && y && ax_state_bytes(b) == n;
    if (same) {
        ax_state_save(a, x);
        ax_state_save(b, y);
        same = !memcmp(x, y, n);
    }
    free(x);
    free(y);
    return same;
}

/* Shards cut anywhere (at ax_shard_cut), each folded in chunks of its own,
 * merged in order, give the bytes of one state; a shard folded in other
 * chunks saves the same bytes; a shard merged out of order is refused. */
static void test_shards(void)
{
    uint64_t shapes[][3] = {{300, 67, 1}, {3, 40000, 1}, {300, 4, 30}, {40, 5, 48},
                            {2000, 3, 1}, {1, 1, 9}, {9, 1, 1}, {5, 3, 17000}};
    unsigned axes[] = {1, 2, 5, 5, 1, 4, 1, 5};
    dt_type types[] = {DT_F32, DT_F64, DT_I32};
    for (int k = 0; k < 8; k++) {
        for (int d = 0; d < 3; d++) {
            dt_type t = types[d];
            ax_plan p = plan_of(t, ~0u & ((1u << RD_OP_NUM) - 1), 3, shapes[k], k == 3, axes[k]);
            size_t sz = dt_size(t);
            unsigned char *x = malloc(p.nelem * sz);
            for (uint64_t i = 0; i < p.nelem; i++) {
                double v = (double)(int64_t)(rnd() % 2001 - 1000) / (t == DT_I32 ? 1 : 8);
                if (t != DT_I32 && rnd() % 97 == 0)
                    v = rnd() % 3 == 0 ? -0.0 : rnd() % 2 ? INFINITY : NAN;
                if (t == DT_F64) {
                    memcpy(x + i * 8, &v, 8);
                } else if (t == DT_F32) {
                    float f = (float)v;
                    memcpy(x + i * 4, &f, 4);
                } else {
                    int32_t n = (int32_t)v;
                    memcpy(x + i * 4, &n, 4);
                }
            }
            uint64_t whole[2] = {0, p.nelem};
            ax_state *ref = fold_cut(&p, x, whole, 2);
            for (int r = 0; r < 5; r++) {
                uint64_t sc[12], cc[8];
                int ns = random_cuts(0, p.nelem, r == 0 ? 0 : 1 + (int)(rnd() % 9), sc);
                for (int i = 0; i < ns; i++)
                    sc[i] = ax_shard_cut(&p, sc[i]);
                ax_state *all = ax_state_new(&p);
                int ok = all != NULL;
                for (int i = 0; ok && i + 1 < ns; i++) {
                    ax_state *sh = ax_state_new_shard(&p, sc[i], sc[i + 1]);
                    ax_state *sh2 = ax_state_new_shard(&p, sc[i], sc[i + 1]);
                    int nc = random_cuts(sc[i], sc[i + 1], (int)(rnd() % 4), cc);
                    ok = sh && fold_into(&p, sh, x, cc, nc);
                    nc = random_cuts(sc[i], sc[i + 1], (int)(rnd() % 4), cc);
                    CHECKF(ok && sh2 && fold_into(&p, sh2, x, cc, nc) && same_saved(sh, sh2),
                           "shape %d dtype %d: a shard's saved bytes depend on its chunks", k, d);
                    ax_state_free(sh2);
                    ax_state *back = ok ? reload(&p, sh, sc[i], sc[i + 1]) : NULL;
                    ok = back && ax_state_merge(all, back) == 0;
                    if (ok && sc[i] < sc[i + 1])
                        CHECK(ax_state_merge(all, back) != 0); /* not where all ends */
                    ax_state_free(sh);
                    ax_state_free(back);
                }
                CHECKF(ok && ref && same_results(&p, ref, all), "shape %d dtype %d shards %d",
                       k, d, r);
                ax_state_free(all);
            }
            ax_state_free(ref);
            free(x);
        }
    }
}

/* Folds x cut at the given boundaries into a new state through the
 * engine's CPU hooks (ax_engine_ops: units, cpu, collect), each chunk's
 * pieces split at a random point as two threads would take them, the
 * chunks of the largest one's capacity; *deep: some chunk's entries were
 * larger than the contract's. */
static ax_state *fold_engine(const ax_plan *p, const void *x, const uint64_t *cut, int ncut,
                             int *deep)
{
    size_t sz = dt_size(p->dtype), cap = sz;
    for (int i = 0; i + 1 < ncut; i++)
        if ((cut[i + 1] - cut[i]) * sz > cap)
            cap = (size_t)(cut[i + 1] - cut[i]) * sz;
    ax_state *s = ax_state_new(p);
    ax_job job = {.plan = p, .first = 0, .st = s};
    size_t bytes = ax_engine_ops.out_bytes(&job, cap);
    unsigned char *out = malloc(bytes);
    io_status st;
    for (int i = 0; out && s && i + 1 < ncut; i++) {
        memset(out, 0xa5, bytes); /* the engine's buffers are not cleared between chunks */
        engine_chunk c = {.op = &job, .host_in = (const char *)x + cut[i] * sz,
                          .host_out = out, .bytes = (size_t)(cut[i + 1] - cut[i]) * sz,
                          .capacity = cap, .offset = cut[i] * sz};
        size_t units = ax_engine_ops.units(&job, c.bytes), mid = (size_t)(rnd() % (units + 1));
        ax_engine_ops.cpu(&c, 0, mid);
        ax_engine_ops.cpu(&c, mid, units);
        ax_chunk_hdr h;
        memcpy(&h, out, sizeof h);
        *deep |= h.levels > AX_FOLD_LEVELS;
        CHECK(ax_engine_ops.collect(&c, &st) == 0);
    }
    free(out);
    return s;
}

/* The engine's CPU side cuts large chunks into entries of more than
 * 2^AX_FOLD_LEVELS units, and wide rows into sub-entries of fewer, folded
 * by the threads: the outputs' bytes are
 * those of the contract's buffers (ax_cpu_chunk), for block and tile
 * plans, float, half and integer types, with skipnan, wherever the chunks
 * are cut. */
static void test_engine_levels(void)
{
    uint64_t shapes[][3] = {{40000, 64, 1}, {20000, 3, 1}, {2, 1100000, 1}, {40, 900, 8},
                            {3, 21000, 5}, {600, 1200, 1}};
    unsigned axes[] = {1, 1, 2, 3, 2, 1};
    dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_I32, DT_U8};
    int seen = 0;
    for (int k = 0; k < 6; k++) {
        for (int d = 0; d < 5; d++) {
            dt_type t = types[(k + d) % 5];
            ax_plan p = plan_of(t, ~0u & ((1u << RD_OP_NUM) - 1), 3, shapes[k], 0, axes[k]);
            p.skipnan = d == 4;
            size_t sz = dt_size(t);
            unsigned char *x = malloc(p.nelem * sz);
            for (uint64_t i = 0; x && i < p.nelem; i++) {
                uint64_t r = rnd();
                double v = (double)(int64_t)(r % 2001 - 1000) / 8;
                if (r % 89 == 0 && dt_is_float(t))
                    v = r % 3 == 0 ? -0.0 : r % 2 ? INFINITY : NAN;
                if (t == DT_F64) {
                    memcpy(x + i * 8, &v, 8);
                } else if (t == DT_F32) {
                    float f = (float)v;
                    memcpy(x + i * 4, &f, 4);
                } else if (t == DT_F16) {
                    uint16_t h = (uint16_t)(r >> 20); /* any bits: NaN, Inf, subnormals */
                    memcpy(x + i * 2, &h, 2);
                } else if (t == DT_I32) {
                    int32_t n = (int32_t)(r >> 13);
                    memcpy(x + i * 4, &n, 4);
                } else {
                    x[i] = (unsigned char)(r >> 7);
                }
            }
            uint64_t whole[2] = {0, p.nelem}, cut[6];
            ax_state *ref = fold_cut(&p, x, whole, 2);
            int deep = 0;
            ax_state *all = fold_engine(&p, x, whole, 2, &deep);
            int n = random_cuts(0, p.nelem, 4, cut);
            ax_state *alt = fold_engine(&p, x, cut, n, &deep);
            CHECKF(ref && all && alt && same_results(&p, ref, all) && same_results(&p, ref, alt),
                   "shape %d dtype %d", k, (int)t);
            seen += deep;
            ax_state_free(ref);
            ax_state_free(all);
            ax_state_free(alt);
            free(x);
        }
    }
    CHECKF(seen >= 20, "entries larger than the contract's in %d plans", seen);
}

/* Column c's sum and variance partial of an (N, C) array x along axis 0 in
 * the order docs/numerics.md gives, written out here on its own: blocks of
 * RD_AXIS_BLOCK rows, each added in row order (the sum from -0.0, the
 * variance by the element step), the block results by the pairwise tree
 * over block indices padded to a power of two. */
static void order_ref(const double *x, uint64_t N, uint64_t C, uint64_t c, double *sum, rd_var *var)
{
    uint64_t nb = (N + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK, pad = 1;
    while (pad < nb)
        pad *= 2;
    double *s = malloc(pad * sizeof *s);
    rd_var *v = malloc(pad * sizeof *v);
    for (uint64_t b = 0; s && v && b < pad; b++) {
        rd_var_acc a = rd_var_acc_empty();
        s[b] = -0.0;
        for (uint64_t r = b * RD_AXIS_BLOCK; b < nb && r < N && r < (b + 1) * RD_AXIS_BLOCK; r++) {
            s[b] = rd_add(s[b], x[r * C + c]);
            rd_var_step(&a, x[r * C + c]);
        }
        v[b] = rd_var_of_acc(a);
    }
    for (uint64_t h = 1; s && v && h < pad; h *= 2)
        for (uint64_t b = 0; b < pad; b += 2 * h) {
            s[b] = rd_add(s[b], s[b + h]);
            v[b] = rd_var_merge(v[b], v[b + h]);
        }
    *sum = s ? s[0] : NAN;
    *var = v ? v[0] : rd_var_empty();
    free(s);
    free(v);
}

/* Axis-0 sums, var and std of float32 and float64 (N, C) arrays of
 * full-precision values, far from 0 and near it, through the engine's CPU
 * side cut anywhere: the bits of order_ref, with and without the squares'
 * sums (the unit code's two paths) and with skipnan. Data of few bits
 * would add up exactly in any order; these do not. */
static void test_block_order(void)
{
    static const uint64_t shapes[][2] = {{1000, 64}, {333, 20}, {4200, 17}, {64, 16},
                                         {65, 48}, {70, 3}, {1, 16}};
    for (int k = 0; k < 7; k++)
        for (int d = 0; d < 4; d++) {
            dt_type t = d % 2 ? DT_F64 : DT_F32;
            uint64_t N = shapes[k][0], C = shapes[k][1], shape[3] = {N, C, 1};
            unsigned ops = RD_OP_SUM | RD_OP_VAR | RD_OP_STD | RD_OP_MIN | RD_OP_MAX |
                           (d >= 2 ? RD_OP_SUMSQ : 0);
            ax_plan p = plan_of(t, ops, 2, shape, 0, 1);
            p.skipnan = k % 2;
            size_t sz = dt_size(t);
            unsigned char *x = malloc(N * C * sz);
            double *v = malloc(N * C * sizeof *v);
            double off = k % 3 == 0 ? 1e4 : k % 3 == 1 ? -3.5 : 0.0;
            for (uint64_t i = 0; x && v && i < N * C; i++) {
                double w = off + ((double)(rnd() >> 11) * 0x1p-53 - 0.5) * 7.0;
                float f = (float)w;
                v[i] = t == DT_F32 ? (double)f : w;
                memcpy(x + i * sz, t == DT_F32 ? (const void *)&f : (const void *)&w, sz);
            }
            uint64_t cut[7];
            int n = random_cuts(0, N * C, 5, cut), deep = 0;
            ax_state *s = x && v ? fold_engine(&p, x, cut, n, &deep) : NULL;
            double *sums = malloc(C * sizeof *sums), *var = malloc(C * sizeof *var);
            double *sd = malloc(C * sizeof *sd);
            CHECK(s && sums && var && sd && ax_state_result(s, RD_OP_SUM, 0, sums) >= 0 &&
                  ax_state_result(s, RD_OP_VAR, 0, var) >= 0 &&
                  ax_state_result(s, RD_OP_STD, 0, sd) >= 0);
            int bad = 0;
            for (uint64_t c = 0; s && sums && var && sd && c < C; c++) {
                double rs;
                rd_var rv;
                order_ref(v, N, C, c, &rs, &rv);
                double wv = rd_var_value(rv, 0, 0), ws = rd_var_value(rv, 0, 1);
                bad += memcmp(&rs, &sums[c], 8) != 0 || memcmp(&wv, &var[c], 8) != 0 ||
                       memcmp(&ws, &sd[c], 8) != 0;
            }
            CHECKF(!bad, "(%llu, %llu) dtype %d ops %#x skipnan %d: %d columns differ",
                   (unsigned long long)N, (unsigned long long)C, (int)t, ops, p.skipnan, bad);
            ax_state_free(s);
            free(x);
            free(v);
            free(sums);
            free(var);
            free(sd);
        }
}

/* The chunk of a run: whole multiples of the alignment, kept where the
 * results fit beside the data, halved only while they would not. */
static void test_chunk_for(void)
{
    size_t align = (size_t)128 << 10, big = (size_t)256 << 20;
    uint64_t wide[] = {(uint64_t)1 << 24, 64}, rows[] = {(uint64_t)1 << 26, 3};
    ax_plan cols = plan_of(DT_F32, RD_OP_SUM, 2, wide, 0, 1u << 0);
    CHECK(ax_chunk_for(&cols, big, align) == big);
    unsigned every = RD_OP_SUM | RD_OP_MIN | RD_OP_MAX | RD_OP_VAR;
    ax_plan shorts = plan_of(DT_F32, every, 2, rows, 0, 1u << 1);
    size_t c = ax_chunk_for(&shorts, big, align);
    CHECKF(c % align == 0 && c >= align && c <= big, "%zu", c);
    CHECKF(c == align || ax_out_bytes(&shorts, c) <= 2 * c + ((size_t)64 << 20), "%zu", c);
    CHECKF(c == big || ax_out_bytes(&shorts, 2 * c) > 4 * c + ((size_t)64 << 20), "%zu", c);
    CHECK(ax_chunk_for(&shorts, align, align) == align);
}

int main(void)
{
    par_limit(2); /* the engine's entries are cut for two threads, whatever this machine has */
    RUN(test_groups);
    RUN(test_parse);
    RUN(test_cover);
    RUN(test_entry_count);
    RUN(test_parts_bound);
    RUN(test_lean_parts);
    RUN(test_cuts);
    RUN(test_values);
    RUN(test_shards);
    RUN(test_chunk_for);
    RUN(test_engine_levels);
    RUN(test_block_order);
    return check_summary();
}
