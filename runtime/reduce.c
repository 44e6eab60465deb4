/* reduce.c - combining tile partials, the CPU tile code, and the engine that
 * runs chunks on either backend. */
#include "reduce.h"

#include "backend.h"
#include "engine.h"
#include "half_lanes.h"
#include "simd.h"
#include "var_lanes.h"
#include "io/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rd_op_names[RD_OP_NUM] = {"sum",    "mean",   "min",   "max",
                                                   "argmin", "argmax", "sumsq", "count",
                                                   "var",    "std"};

/* Name of op bit i. */
const char *rd_op_name(int bit)
{
    return bit >= 0 && bit < RD_OP_NUM ? rd_op_names[bit] : "?";
}

/* Parses a comma-separated op list. */
unsigned rd_parse_ops(const char *list, io_status *st)
{
    unsigned mask = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < RD_OP_NUM; i++)
            if (strlen(rd_op_names[i]) == len && !strncmp(p, rd_op_names[i], len))
                found = i;
        if (found < 0) {
            io_fail(st, IO_ERR_FORMAT,
                    "unknown operation '%.*s' (expected sum, mean, min, max, argmin, argmax, "
                    "sumsq, count, var, std)",
                    (int)len, p);
            return 0;
        }
        if (mask & (1u << found)) {
            io_fail(st, IO_ERR_FORMAT, "operation '%s' given twice", rd_op_names[found]);
            return 0;
        }
        mask |= 1u << found;
        p += len;
        if (*p == ',' && !*++p) {
            io_fail(st, IO_ERR_FORMAT, "a comma ends the list: no operation after it");
            return 0;
        }
    }
    if (!mask)
        io_fail(st, IO_ERR_FORMAT, "no operation given");
    return mask;
}

/* Empties the tree. */
void rd_tree_init(rd_tree *t)
{
    rd_tree_init_at(t, 0);
}

/* Empties the tree and sets its first leaf's index. */
void rd_tree_init_at(rd_tree *t, uint64_t first)
{
    t->depth = 0;
    t->next = first;
}

/* Adds the next value. */
void rd_tree_push(rd_tree *t, double v)
{
    rd_tree_push_level(t, v, 0);
}

/* How many entries on top of a tree's stack (levels lv[0..depth)) a new
 * subtree of 2^level leaves at leaf `next` merges with: while it is a right
 * child whose left sibling tops the stack, the two merge (a binary counter
 * when the tree starts at leaf 0). */
static int rd_tree_merges(const unsigned char *lv, int depth, uint64_t next, unsigned level)
{
    int m = 0;
    for (uint64_t idx = next >> level; depth - m > 0 && lv[depth - m - 1] == level && (idx & 1);
         idx >>= 1, level++)
        m++;
    return m;
}

/* Adds the next complete subtree, merging it with its completed left
 * siblings. */
void rd_tree_push_level(rd_tree *t, double v, unsigned level)
{
    int m = rd_tree_merges(t->level, t->depth, t->next, level);
    t->next += (uint64_t)1 << level;
    for (; m > 0; m--, level++)
        v = rd_add(t->value[--t->depth], v);
    t->value[t->depth] = v;
    t->level[t->depth] = (unsigned char)level;
    t->depth++;
}

/* One quiet NaN for any NaN (see reduce.h). */
double rd_canon(double x)
{
    return x != x ? (double)NAN : x;
}

/* A variance partial with canonical NaNs (see reduce.h). */
rd_var rd_canon_var(rd_var v)
{
    rd_var c = {v.n, rd_canon(v.k), {rd_canon(v.s1.hi), rd_canon(v.s1.lo)},
                {rd_canon(v.s2.hi), rd_canon(v.s2.lo)}};
    return c;
}

/* Folds the pending subtrees, smallest first: the padded tree's root. */
double rd_tree_finish(const rd_tree *t)
{
    if (t->depth == 0)
        return -0.0;
    double acc = t->value[t->depth - 1];
    for (int i = t->depth - 2; i >= 0; i--)
        acc = rd_add(t->value[i], acc);
    return acc;
}

/* Empties the variance tree and sets its first leaf's index. */
void rd_vtree_init_at(rd_vtree *t, uint64_t first)
{
    t->depth = 0;
    t->next = first;
}

/* Adds the next partial. */
void rd_vtree_push(rd_vtree *t, rd_var v)
{
    rd_vtree_push_level(t, v, 0);
}

/* Adds the next complete subtree, as rd_tree_push_level. */
void rd_vtree_push_level(rd_vtree *t, rd_var v, unsigned level)
{
    int m = rd_tree_merges(t->level, t->depth, t->next, level);
    t->next += (uint64_t)1 << level;
    for (; m > 0; m--, level++)
        v = rd_var_merge(t->value[--t->depth], v);
    t->value[t->depth] = v;
    t->level[t->depth] = (unsigned char)level;
    t->depth++;
}

/* Folds the pending subtrees, smallest first, as rd_tree_finish. */
rd_var rd_vtree_finish(const rd_vtree *t)
{
    if (t->depth == 0)
        return rd_var_empty();
    rd_var acc = t->value[t->depth - 1];
    for (int i = t->depth - 2; i >= 0; i--)
        acc = rd_var_merge(t->value[i], acc);
    return acc;
}

/* Starts an empty reduction. */
void rd_state_init(rd_state *s, dt_type dtype, unsigned ops, int skipnan)
{
    memset(s, 0, sizeof *s);
    s->dtype = dtype;
    s->ops = ops;
    s->skipnan = skipnan && dt_is_float(dtype);
    rd_tree_init(&s->sum_tree);
    rd_tree_init(&s->sq_tree);
    rd_vtree_init_at(&s->var_tree, 0);
    s->ext = rd_extrema_empty();
}

/* Starts the state's trees at a tile other than 0. */
void rd_state_start_at(rd_state *s, uint64_t first_tile)
{
    rd_tree_init_at(&s->sum_tree, first_tile);
    rd_tree_init_at(&s->sq_tree, first_tile);
    rd_vtree_init_at(&s->var_tree, first_tile);
}

/* Pushes every pending subtree of b into a, in index order. */
static void rd_tree_append(rd_tree *a, const rd_tree *b)
{
    for (int i = 0; i < b->depth; i++)
        rd_tree_push_level(a, b->value[i], b->level[i]);
}

/* Appends the following shard's state. */
void rd_state_merge(rd_state *s, const rd_state *b)
{
    rd_tree_append(&s->sum_tree, &b->sum_tree);
    rd_tree_append(&s->sq_tree, &b->sq_tree);
    for (int i = 0; i < b->var_tree.depth; i++)
        rd_vtree_push_level(&s->var_tree, b->var_tree.value[i], b->var_tree.level[i]);
    s->isum += b->isum;
    s->isq += b->isq;
    s->count += b->count;
    s->nelem += b->nelem;
    rd_extrema_merge(&s->ext, &b->ext);
}

/* True when sums of squares of this type are doubles. */
static int rd_sq_is_float(dt_type t)
{
    return dt_is_float(t) || dt_size(t) == 8;
}

/* Adds consecutive tiles' partials in index order. */
void rd_state_add(rd_state *s, const rd_moments *m, const rd_extrema *e, const rd_var *var,
                  size_t ntiles, uint64_t nelem)
{
    int fl = dt_is_float(s->dtype), sqf = rd_sq_is_float(s->dtype);
    for (size_t i = 0; m && i < ntiles; i++) {
        if (fl) {
            double v;
            memcpy(&v, &m[i].sum_lo, sizeof v);
            rd_tree_push(&s->sum_tree, v);
        } else {
            s->isum += ((rd_u128)m[i].sum_hi << 64) | m[i].sum_lo;
        }
        if (s->ops & RD_OP_SUMSQ) {
            if (sqf) {
                double q;
                memcpy(&q, &m[i].sq_lo, sizeof q);
                rd_tree_push(&s->sq_tree, q);
            } else {
                s->isq += ((rd_u128)m[i].sq_hi << 64) | m[i].sq_lo;
            }
        }
        s->count += m[i].count;
    }
    if (!m)
        s->count += nelem;
    for (size_t i = 0; e && i < ntiles; i++)
        rd_extrema_merge(&s->ext, &e[i]);
    for (size_t i = 0; var && i < ntiles; i++)
        rd_vtree_push(&s->var_tree, var[i]);
    s->nelem += nelem;
}

/* Converts an order key back to a value of the state's type. */
static void rd_unkey(const rd_state *s, rd_u64 key, double *f, int64_t *i, uint64_t *u)
{
    switch (s->dtype) {
    case DT_F32: {
        unsigned int b = rd_unkey_f32(key);
        float x;
        memcpy(&x, &b, sizeof x);
        *f = (key == RD_NAN_MIN_KEY || key == RD_NAN_MAX_KEY) ? (double)NAN : x;
        break;
    }
    case DT_F64: {
        rd_u64 b = rd_unkey_f64(key);
        memcpy(f, &b, sizeof *f);
        if (key == RD_NAN_MIN_KEY || key == RD_NAN_MAX_KEY)
            *f = NAN;
        break;
    }
    case DT_F16:
    case DT_BF16: {
        unsigned b = rd_unkey_h16(key);
        *f = (key == RD_NAN_MIN_KEY || key == RD_NAN_MAX_KEY) ? (double)NAN
             : s->dtype == DT_F16                             ? (double)hf_f16_to_f32(b)
                                                              : (double)hf_bf16_to_f32(b);
        break;
    }
    default:
        if (dt_is_signed_int(s->dtype))
            *i = (int64_t)(key ^ ((rd_u64)1 << 63));
        else
            *u = key;
    }
}

/* Mean of an exact integer sum: quotient plus the remainder's fraction. */
static double rd_int_mean(__int128 sum, uint64_t count)
{
    __int128 q = sum / (__int128)count, r = sum % (__int128)count;
    return (double)q + (double)r / (double)count;
}

/* Final values of a finished reduction. */
void rd_state_result(const rd_state *s, rd_result *r)
{
    memset(r, 0, sizeof *r);
    r->count = s->count;
    r->is_float = dt_is_float(s->dtype);
    r->sumsq_is_float = rd_sq_is_float(s->dtype);
    if (r->is_float) {
        r->sum = s->nelem ? rd_tree_finish(&s->sum_tree) : 0.0;
        if (s->count == 0)
            r->sum = 0.0; /* the sum of nothing (all NaN skipped) */
        r->mean = r->sum / (double)s->count;
    } else {
        r->isum = (__int128)s->isum;
        r->mean = s->count ? rd_int_mean(r->isum, s->count) : NAN;
    }
    if (r->sumsq_is_float)
        r->sumsq = s->count ? rd_tree_finish(&s->sq_tree) : 0.0;
    else
        r->isumsq = s->isq;
    rd_var v = rd_vtree_finish(&s->var_tree);
    r->var = rd_var_value(v, s->ddof, 0);
    r->std = rd_var_value(v, s->ddof, 1);
    r->have_extrema = s->ext.min_idx != RD_NO_INDEX;
    if (r->have_extrema) {
        rd_unkey(s, s->ext.min_key, &r->fmin, &r->imin, &r->umin);
        rd_unkey(s, s->ext.max_key, &r->fmax, &r->imax, &r->umax);
        r->argmin = s->ext.min_idx;
        r->argmax = s->ext.max_idx;
    }
}

/* ---- CPU tile code: the kernels' operation order, in plain C ---- */

/* The tile code is inlined into each instruction-set variant of
 * rd_cpu_tiles, so that each one's loops vectorize for its registers. */
#define RD_CPU_INLINE static inline __attribute__((always_inline))

/* Accumulators per tile: RD_WARPS sub-tiles x RD_LANES lanes x up to 16
 * element positions per vector. */
#define RD_CPU_ACC (RD_WARPS * RD_LANES * 16)

/* Accumulator ((warp * RD_LANES + lane) * V + k) that element o of a tile
 * goes to, for V = RD_VEC(size) positions per vector. */
static inline size_t rd_cpu_lane(size_t o, size_t size)
{
    size_t v = RD_VEC(size), w = o / RD_SUBTILE, in_sub = o % RD_SUBTILE;
    return (w * RD_LANES + (in_sub / v) % RD_LANES) * v + in_sub % v;
}

/* The tile's value from its accumulators (destroys them): inlined where
 * size is a constant, so that the trees' loops unroll and the lane trees of
 * a sub-tile run as vector adds across its lanes (each lane's adds in the
 * tree's order). */
RD_CPU_INLINE double rd_cpu_tile_fold(double *acc, size_t size)
{
    const unsigned v = RD_VEC(size);
    double lanes[RD_LANES], sub[RD_WARPS];
    for (unsigned w = 0; w < RD_WARPS; w++) {
        double *a = acc + w * RD_LANES * v;
        for (unsigned h = 1; h < v; h *= 2)
            for (unsigned k = 0; k < v; k += 2 * h)
                for (unsigned l = 0; l < RD_LANES; l++)
                    a[l * v + k] = rd_add(a[l * v + k], a[l * v + k + h]);
        for (unsigned l = 0; l < RD_LANES; l++)
            lanes[l] = a[l * v];
        rd_subtile_tree(lanes);
        sub[w] = lanes[0];
    }
    rd_warps_tree(sub);
    return sub[0];
}

/* Elements of a column block: the accumulators of 64 bytes of a row,
 * which a sub-tile's rows add into held in registers. */
#define RD_CPU_COLS(size) (64u / (size))

/* Float tile: lane sums over 16-byte vectors, then the fixed tree. T is the
 * element as stored, TO_DOUBLE its exact value, ISNAN its NaN test. A row
 * of a sub-tile (RD_LANES vectors) adds element j into accumulator j of the
 * sub-tile's, each accumulator taking its elements in the same order as
 * one at a time; a skipped NaN adds -0.0 to both sums, which leaves any
 * value as it is. A whole sub-tile goes column block by column block, each
 * block's accumulators kept in registers down the sub-tile's rows (loops
 * the compiler vectorizes; the next sub-tile's lines are fetched ahead,
 * since the column order hides the stream from the hardware's prefetcher);
 * the rows of a partial sub-tile go one after the other, and the rest of
 * the tile one element at a time. */
#define RD_CPU_FLOAT_TILE(NAME, T, TO_DOUBLE, ISNAN)                                      \
    RD_CPU_INLINE void NAME##_rows(const T *p, size_t nrows, int skipnan, int want_sq,    \
                                   double *a, double *q, uint64_t *cnt)                    \
    {                                                                                     \
        const size_t row = RD_LANES * RD_VEC(sizeof(T)), cols = RD_CPU_COLS(sizeof(T));   \
        for (size_t c0 = 0; c0 < row; c0 += cols) {                                       \
            for (size_t r = 0; r < nrows; r++)                                            \
                __builtin_prefetch((const char *)(p + (nrows + r) * row + c0));           \
            double sa[RD_CPU_COLS(sizeof(T))], sq[RD_CPU_COLS(sizeof(T))];                \
            uint64_t kept = 0;                                                            \
            for (size_t j = 0; j < cols; j++) {                                           \
                sa[j] = a[c0 + j];                                                        \
                sq[j] = q[c0 + j];                                                        \
            }                                                                             \
            const T *e = p + c0;                                                          \
            if (!skipnan && !want_sq)                                                     \
                for (size_t r = 0; r < nrows; r++, e += row)                              \
                    for (size_t j = 0; j < cols; j++)                                     \
                        sa[j] = rd_add(sa[j], TO_DOUBLE(e[j]));                           \
            else if (!skipnan)                                                            \
                for (size_t r = 0; r < nrows; r++, e += row)                              \
                    for (size_t j = 0; j < cols; j++) {                                   \
                        double d = TO_DOUBLE(e[j]);                                       \
                        sa[j] = rd_add(sa[j], d);                                         \
                        sq[j] = rd_add(sq[j], d * d);                                     \
                    }                                                                     \
            else                                                                          \
                for (size_t r = 0; r < nrows; r++, e += row)                              \
                    for (size_t j = 0; j < cols; j++) {                                   \
                        int keep = !ISNAN(e[j]);                                          \
                        double d = TO_DOUBLE(e[j]);                                       \
                        sa[j] = rd_add(sa[j], keep ? d : -0.0);                           \
                        sq[j] = rd_add(sq[j], keep ? d * d : -0.0);                       \
                        kept += (uint64_t)keep;                                           \
                    }                                                                     \
            for (size_t j = 0; j < cols; j++) {                                           \
                a[c0 + j] = sa[j];                                                        \
                q[c0 + j] = sq[j];                                                        \
            }                                                                             \
            *cnt += kept;                                                                 \
        }                                                                                 \
        if (!skipnan)                                                                     \
            *cnt += nrows * row;                                                          \
    }                                                                                     \
    RD_CPU_INLINE void NAME(const T *x, size_t n, int skipnan, int want_sq, rd_moments *m) \
    {                                                                                     \
        double ls[RD_CPU_ACC], lq[RD_CPU_ACC];                                            \
        uint64_t cnt = 0;                                                                 \
        for (unsigned l = 0; l < RD_CPU_ACC; l++)                                         \
            ls[l] = lq[l] = -0.0;                                                         \
        const size_t row = RD_LANES * RD_VEC(sizeof(T)), rows_end = n - n % row;         \
        const size_t sub_rows = RD_SUBTILE / row;                                         \
        for (size_t o = 0; o < rows_end;) {                                               \
            size_t acc = o / RD_SUBTILE * row;                                            \
            size_t nrows = rows_end - o >= RD_SUBTILE ? sub_rows : 1;                     \
            if (nrows == 1)                                                               \
                NAME##_rows(x + o, 1, skipnan, want_sq, ls + acc, lq + acc, &cnt);        \
            else                                                                          \
                NAME##_rows(x + o, sub_rows, skipnan, want_sq, ls + acc, lq + acc, &cnt); \
            o += nrows * row;                                                             \
        }                                                                                 \
        for (size_t o = rows_end; o < n; o++) {                                           \
            T val = x[o];                                                                 \
            if (skipnan && ISNAN(val))                                                    \
                continue;                                                                 \
            double d = TO_DOUBLE(val);                                                    \
            size_t l = rd_cpu_lane(o, sizeof(T));                                         \
            ls[l] = rd_add(ls[l], d);                                                     \
            if (want_sq)                                                                  \
                lq[l] = rd_add(lq[l], d * d);                                             \
            cnt++;                                                                        \
        }                                                                                 \
        double sum = rd_cpu_tile_fold(ls, sizeof(T));                                     \
        double sq = want_sq ? rd_cpu_tile_fold(lq, sizeof(T)) : -0.0;                     \
        memcpy(&m->sum_lo, &sum, sizeof sum);                                             \
        memcpy(&m->sq_lo, &sq, sizeof sq);                                                \
        m->sum_hi = m->sq_hi = 0;                                                         \
        m->count = cnt;                                                                   \
    }

/* Element helpers for the tile and extrema macros: values, NaN tests and
 * order keys of each stored type. */
#define RD_DOUBLE(v) ((double)(v))
#define RD_F16_DOUBLE(v) ((double)hl_f16_to_f32(v))
#define RD_BF16_DOUBLE(v) ((double)hf_bf16_to_f32(v))
#define RD_ISNAN_F(v) ((v) != (v))
#define RD_ISNAN_NO(v) 0
#define RD_SAME(v) (v)
#define RD_BOOL(v) ((uint8_t)((v) != 0))

RD_CPU_FLOAT_TILE(rd_cpu_tile_f32, float, RD_DOUBLE, RD_ISNAN_F)
RD_CPU_FLOAT_TILE(rd_cpu_tile_f64, double, RD_DOUBLE, RD_ISNAN_F)
RD_CPU_FLOAT_TILE(rd_cpu_tile_f16, uint16_t, RD_F16_DOUBLE, hf_f16_isnan)
RD_CPU_FLOAT_TILE(rd_cpu_tile_bf16, uint16_t, RD_BF16_DOUBLE, hf_bf16_isnan)

/* Integer tile of 64-bit elements: exact 128-bit sums; the squares go into
 * doubles in lane order. */
#define RD_CPU_WIDE_TILE(NAME, T)                                                         \
    RD_CPU_INLINE void NAME(const T *x, size_t n, int want_sq, rd_moments *m)             \
    {                                                                                     \
        rd_u128 s = 0;                                                                    \
        double lq[RD_CPU_ACC];                                                            \
        if (want_sq)                                                                      \
            for (unsigned l = 0; l < RD_CPU_ACC; l++)                                     \
                lq[l] = -0.0;                                                             \
        for (size_t o = 0; o < n; o++) {                                                  \
            s += (rd_u128)(__int128)x[o];                                                 \
            if (want_sq) {                                                                \
                double d = (double)x[o];                                                  \
                size_t l = rd_cpu_lane(o, sizeof(T));                                     \
                lq[l] = rd_add(lq[l], d * d);                                             \
            }                                                                             \
        }                                                                                 \
        double z = want_sq ? rd_cpu_tile_fold(lq, sizeof(T)) : -0.0;                      \
        m->sum_lo = (uint64_t)s;                                                          \
        m->sum_hi = (uint64_t)(s >> 64);                                                  \
        memcpy(&m->sq_lo, &z, sizeof z);                                                  \
        m->sq_hi = 0;                                                                     \
        m->count = n;                                                                     \
    }

RD_CPU_WIDE_TILE(rd_cpu_tile_i64, int64_t)
RD_CPU_WIDE_TILE(rd_cpu_tile_u64, uint64_t)

#define RD_INT_BLOCK 256 /* elements per block of the integer sums: a fixed trip count */

/* Integer tile of elements of at most 32 bits: exact sums, in blocks of
 * RD_INT_BLOCK elements whose loops the compiler vectorizes. A tile's sum
 * fits ACC (int64_t or uint64_t: 2^14 elements of 2^32 at most). A square
 * of 16 bits or less fits 32 bits, and 2^14 of them 64; a 32-bit |v| is cut
 * into 16-bit halves h and l, v^2 = h^2 2^32 + 2 h l 2^16 + l^2, whose three
 * sums of 32-bit products each fit 64 bits. VALUE is the element's integer
 * value (a bool's is 0 or 1), MAG its magnitude as uint32_t. Exact integer
 * sums are the same in any order: the kernels' bits. A block's sum of 8- and
 * 16-bit elements fits BLOCK_ACC of 32 bits (2^8 of 2^16 at most), whose
 * vectors hold twice as many as ACC's. */
#define RD_CPU_INT_TILE(NAME, T, ACC, BLOCK_ACC, VALUE, MAG)                              \
    RD_CPU_INLINE void NAME##_block(const T *x, size_t k, ACC *s, uint64_t *hh, uint64_t *hl, \
                                    uint64_t *ll, int want_sq)                            \
    {                                                                                     \
        BLOCK_ACC bs = 0;                                                                 \
        uint64_t bhh = 0, bhl = 0, bll = 0;                                               \
        for (size_t j = 0; j < k; j++)                                                    \
            bs += (BLOCK_ACC)VALUE(x[j]);                                             \
        if (want_sq && sizeof(T) <= 2) {                                                  \
            for (size_t j = 0; j < k; j++) {                                              \
                uint32_t a = MAG(x[j]);                                                   \
                bll += (uint64_t)(a * a);                                                 \
            }                                                                             \
        } else if (want_sq) {                                                             \
            for (size_t j = 0; j < k; j++) {                                              \
                uint32_t a = MAG(x[j]), h = a >> 16, l = a & 0xffffu;                     \
                bhh += (uint64_t)(h * h);                                                 \
                bhl += (uint64_t)(h * l);                                                 \
                bll += (uint64_t)(l * l);                                                 \
            }                                                                             \
        }                                                                                 \
        *s += bs;                                                                         \
        *hh += bhh;                                                                       \
        *hl += bhl;                                                                       \
        *ll += bll;                                                                       \
    }                                                                                     \
    RD_CPU_INLINE void NAME(const T *x, size_t n, int want_sq, rd_moments *m)             \
    {                                                                                     \
        ACC s = 0;                                                                        \
        uint64_t hh = 0, hl = 0, ll = 0;                                                  \
        size_t o = 0;                                                                     \
        for (; o + RD_INT_BLOCK <= n; o += RD_INT_BLOCK)                                  \
            NAME##_block(x + o, RD_INT_BLOCK, &s, &hh, &hl, &ll, want_sq);                \
        NAME##_block(x + o, n - o, &s, &hh, &hl, &ll, want_sq);                           \
        rd_u128 sum = (rd_u128)(__int128)s;                                               \
        rd_u128 q = ((rd_u128)hh << 32) + ((rd_u128)hl << 17) + ll;                       \
        m->sum_lo = (uint64_t)sum;                                                        \
        m->sum_hi = (uint64_t)(sum >> 64);                                                \
        m->sq_lo = (uint64_t)q;                                                           \
        m->sq_hi = (uint64_t)(q >> 64);                                                   \
        m->count = n;                                                                     \
    }

#define RD_MAG_S(v) ((v) < 0 ? 0u - (uint32_t)(v) : (uint32_t)(v))
#define RD_MAG_U(v) ((uint32_t)(v))
#define RD_MAG_BOOL(v) ((uint32_t)((v) != 0))

RD_CPU_INT_TILE(rd_cpu_tile_i8, int8_t, int64_t, int32_t, RD_SAME, RD_MAG_S)
RD_CPU_INT_TILE(rd_cpu_tile_i16, int16_t, int64_t, int32_t, RD_SAME, RD_MAG_S)
RD_CPU_INT_TILE(rd_cpu_tile_i32, int32_t, int64_t, int64_t, RD_SAME, RD_MAG_S)
RD_CPU_INT_TILE(rd_cpu_tile_u8, uint8_t, uint64_t, uint32_t, RD_SAME, RD_MAG_U)
RD_CPU_INT_TILE(rd_cpu_tile_u16, uint16_t, uint64_t, uint32_t, RD_SAME, RD_MAG_U)
RD_CPU_INT_TILE(rd_cpu_tile_u32, uint32_t, uint64_t, uint64_t, RD_SAME, RD_MAG_U)
RD_CPU_INT_TILE(rd_cpu_tile_bool, uint8_t, uint64_t, uint32_t, RD_BOOL, RD_MAG_BOOL)

/* Extrema of n elements whose first has global index g. */
#define RD_CPU_EXTREMA(NAME, T, KEY, ISNAN)                                               \
    RD_CPU_INLINE void NAME(const T *x, size_t n, uint64_t g, int skipnan, rd_extrema *e)        \
    {                                                                                     \
        rd_extrema r = rd_extrema_empty();                                                \
        for (size_t o = 0; o < n; o++) {                                                  \
            T val = x[o];                                                                 \
            if (ISNAN(val)) {                                                             \
                if (!skipnan) {                                                           \
                    rd_min_update(&r.min_key, &r.min_idx, RD_NAN_MIN_KEY, g + o);         \
                    rd_max_update(&r.max_key, &r.max_idx, RD_NAN_MAX_KEY, g + o);         \
                }                                                                         \
                continue;                                                                 \
            }                                                                             \
            rd_u64 k = KEY(val);                                                          \
            rd_min_update(&r.min_key, &r.min_idx, k, g + o);                              \
            rd_max_update(&r.max_key, &r.max_idx, k, g + o);                              \
        }                                                                                 \
        *e = r;                                                                           \
    }

/* Key helpers for the extrema macro. */
static inline rd_u64 rd_cpu_key_f64(double v)
{
    rd_u64 b;
    memcpy(&b, &v, sizeof b);
    return rd_key_f64(b);
}
#define RD_KEY_BOOL(v) ((rd_u64)((v) != 0))

/* The 32-bit order keys of float32 bits b for the least (*kl) and the
 * greatest (*kh): rd_key_f32's, or for a NaN nan_lo and nan_hi. */
static inline void rd_f32_keys(uint32_t b, uint32_t nan_lo, uint32_t nan_hi, uint32_t *kl,
                               uint32_t *kh)
{
    uint32_t k = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    int isnan = (b & 0x7fffffffu) > 0x7f800000u;
    *kl = isnan ? nan_lo : k;
    *kh = isnan ? nan_hi : k;
}

#define RD_EXT_BLOCK 256 /* elements per block: a fixed trip count, which -O2 vectorizes */

/* Folds the least and greatest keys of p[0..m) into *lo and *hi. Its loop
 * vectorizes where m is the constant RD_EXT_BLOCK (inlined). */
static inline __attribute__((always_inline)) void
rd_f32_block(const uint32_t *p, size_t m, uint32_t nan_lo, uint32_t nan_hi, uint32_t *lo,
             uint32_t *hi)
{
    uint32_t blo = *lo, bhi = *hi, kl, kh;
    for (size_t j = 0; j < m; j++) {
        rd_f32_keys(p[j], nan_lo, nan_hi, &kl, &kh);
        blo = kl < blo ? kl : blo;
        bhi = kh > bhi ? kh : bhi;
    }
    *lo = blo;
    *hi = bhi;
}

/* Whether the least (want_hi 0) or greatest (1) key of float32 bits b is k. */
static inline int rd_f32_is(uint32_t b, uint32_t nan_lo, uint32_t nan_hi, uint32_t k, int want_hi)
{
    uint32_t kl, kh;
    rd_f32_keys(b, nan_lo, nan_hi, &kl, &kh);
    return (want_hi ? kh : kl) == k;
}

#define RD_FIND_GROUP 16 /* elements a vectorized test of a search looks at */

/* The first of p[0..m) whose least (want_hi 0) or greatest (1) key is k:
 * groups of RD_FIND_GROUP tested at once (a loop the compiler vectorizes),
 * then the group that holds it element by element. */
static inline __attribute__((always_inline)) size_t
rd_f32_find(const uint32_t *p, size_t m, uint32_t nan_lo, uint32_t nan_hi, uint32_t k, int want_hi)
{
    size_t g = 0;
    for (; g + RD_FIND_GROUP <= m; g += RD_FIND_GROUP) {
        unsigned any = 0;
        for (size_t j = 0; j < RD_FIND_GROUP; j++)
            any |= (unsigned)rd_f32_is(p[g + j], nan_lo, nan_hi, k, want_hi);
        if (any)
            break;
    }
    while (g < m && !rd_f32_is(p[g], nan_lo, nan_hi, k, want_hi))
        g++;
    return g;
}

#define RD_EXT_BLOCKS (RD_TILE / RD_EXT_BLOCK) /* blocks per tile */

/* float32 extrema of a tile by 32-bit order keys, in one pass over its
 * elements, in blocks of RD_EXT_BLOCK elements whose loops the compiler
 * vectorizes: each block's least and greatest key (a NaN as the least and
 * the greatest, or skipped: keys that no number has), then from those the
 * tile's, the first block holding each, and the first element with it
 * there; the same keys and indices as the element-wise updates of
 * RD_CPU_EXTREMA. */
RD_CPU_INLINE void
rd_cpu_ext_f32_keys(const float *x, size_t n, uint64_t g, int skipnan, rd_extrema *e)
{
    const uint32_t *u = (const uint32_t *)(const void *)x;
    const uint32_t nan_lo = skipnan ? UINT32_MAX : 0, nan_hi = skipnan ? 0 : UINT32_MAX;
    uint32_t blo[RD_EXT_BLOCKS], bhi[RD_EXT_BLOCKS], lo = UINT32_MAX, hi = 0;
    size_t nb = 0;
    for (size_t o = 0; o < n; o += RD_EXT_BLOCK, nb++) {
        blo[nb] = UINT32_MAX;
        bhi[nb] = 0;
        if (n - o >= RD_EXT_BLOCK)
            rd_f32_block(u + o, RD_EXT_BLOCK, nan_lo, nan_hi, &blo[nb], &bhi[nb]);
        else
            rd_f32_block(u + o, n - o, nan_lo, nan_hi, &blo[nb], &bhi[nb]);
        lo = blo[nb] < lo ? blo[nb] : lo;
        hi = bhi[nb] > hi ? bhi[nb] : hi;
    }
    *e = rd_extrema_empty();
    if (n == 0 || (skipnan && lo == UINT32_MAX))
        return; /* nothing but skipped NaNs */
    size_t bl = 0, bh = 0;
    while (blo[bl] != lo)
        bl++;
    while (bhi[bh] != hi)
        bh++;
    size_t ol = bl * RD_EXT_BLOCK, oh = bh * RD_EXT_BLOCK;
    size_t ml = n - ol < RD_EXT_BLOCK ? n - ol : RD_EXT_BLOCK;
    size_t mh = n - oh < RD_EXT_BLOCK ? n - oh : RD_EXT_BLOCK;
    e->min_key = lo == 0 ? RD_NAN_MIN_KEY : (rd_u64)lo;
    e->min_idx = g + ol + rd_f32_find(u + ol, ml, nan_lo, nan_hi, lo, 0);
    e->max_key = hi == UINT32_MAX ? RD_NAN_MAX_KEY : (rd_u64)hi;
    e->max_idx = g + oh + rd_f32_find(u + oh, mh, nan_lo, nan_hi, hi, 1);
}

/* The signed order of float32 bits b: the order of the values, -0.0 below
 * +0.0, a NaN with its sign bit clear above +inf and one with it set below
 * -inf (rd_key_f32's key with its top bit flipped); its own inverse. */
static inline int32_t rd_f32_order(uint32_t b)
{
    int32_t s = (int32_t)b;
    return s ^ (int32_t)((uint32_t)(s >> 31) >> 1);
}

/* The same for float64 bits (rd_key_f64's key with its top bit flipped). */
static inline int64_t rd_f64_order(uint64_t b)
{
    int64_t s = (int64_t)b;
    return s ^ (int64_t)((uint64_t)(s >> 63) >> 1);
}

#define RD_F32_ORDER_INF ((int32_t)0x7f800000)            /* rd_f32_order of +inf */
#define RD_F32_ORDER_NEG_INF ((int32_t)0x807fffff)        /* rd_f32_order of -inf */
#define RD_F64_ORDER_INF ((int64_t)0x7ff0000000000000)    /* rd_f64_order of +inf */
#define RD_F64_ORDER_NEG_INF ((int64_t)0x800fffffffffffff) /* rd_f64_order of -inf */

/* Defines NAME, the extrema of a tile whose elements are bits of type U, by
 * their signed order S (ORDER, its own inverse on the bits): where the
 * tile's least and greatest orders are numbers (IN_RANGE: a float tile
 * without NaN; any integer tile), each block's least and greatest order in
 * one pass (a loop of a few vector instructions per vector, inlined with
 * the constant RD_EXT_BLOCK), then the first block holding the tile's and
 * the first element with those very bits there (an order is one bit
 * pattern); KEY(lo, top) is the order's key. A tile with a NaN goes by
 * KEYS, whose NaN policy it needs. The same keys and indices either way. */
#define RD_CPU_EXT_ORDER(NAME, T, U, S, ORDER, IN_RANGE, KEY, KEYS)                        \
    RD_CPU_INLINE void NAME##_block(const U *p, size_t m, S *lo, S *hi)                    \
    {                                                                                      \
        S blo = *lo, bhi = *hi;                                                            \
        for (size_t j = 0; j < m; j++) {                                                   \
            S k = (S)ORDER(p[j]);                                                          \
            blo = k < blo ? k : blo;                                                       \
            bhi = k > bhi ? k : bhi;                                                       \
        }                                                                                  \
        *lo = blo;                                                                         \
        *hi = bhi;                                                                         \
    }                                                                                      \
    RD_CPU_INLINE size_t NAME##_find(const U *p, size_t m, U b)                            \
    {                                                                                      \
        size_t g = 0;                                                                      \
        for (; g + RD_FIND_GROUP <= m; g += RD_FIND_GROUP) {                               \
            unsigned any = 0;                                                              \
            for (size_t j = 0; j < RD_FIND_GROUP; j++)                                     \
                any |= (unsigned)(p[g + j] == b);                                          \
            if (any)                                                                       \
                break;                                                                     \
        }                                                                                  \
        while (g < m && p[g] != b)                                                         \
            g++;                                                                           \
        return g;                                                                          \
    }                                                                                      \
    RD_CPU_INLINE void NAME(const T *x, size_t n, uint64_t g, int skipnan, rd_extrema *e)  \
    {                                                                                      \
        const U *u = (const U *)(const void *)x;                                           \
        const S top = (S)((U)1 << (8 * sizeof(U) - 1)); /* the sign bit, as S */          \
        S blo[RD_EXT_BLOCKS], bhi[RD_EXT_BLOCKS], lo = (S) ~top, hi = top;                  \
        size_t nb = 0;                                                                     \
        for (size_t o = 0; o < n; o += RD_EXT_BLOCK, nb++) {                               \
            blo[nb] = (S) ~top;                                                            \
            bhi[nb] = top;                                                                 \
            if (n - o >= RD_EXT_BLOCK)                                                     \
                NAME##_block(u + o, RD_EXT_BLOCK, &blo[nb], &bhi[nb]);                     \
            else                                                                           \
                NAME##_block(u + o, n - o, &blo[nb], &bhi[nb]);                            \
            lo = blo[nb] < lo ? blo[nb] : lo;                                              \
            hi = bhi[nb] > hi ? bhi[nb] : hi;                                              \
        }                                                                                  \
        if (n == 0 || !IN_RANGE(lo, hi)) {                                                 \
            KEYS(x, n, g, skipnan, e);                                                     \
            return;                                                                        \
        }                                                                                  \
        size_t bl = 0, bh = 0;                                                             \
        while (blo[bl] != lo)                                                              \
            bl++;                                                                          \
        while (bhi[bh] != hi)                                                              \
            bh++;                                                                          \
        size_t ol = bl * RD_EXT_BLOCK, oh = bh * RD_EXT_BLOCK;                             \
        size_t ml = n - ol < RD_EXT_BLOCK ? n - ol : RD_EXT_BLOCK;                         \
        size_t mh = n - oh < RD_EXT_BLOCK ? n - oh : RD_EXT_BLOCK;                         \
        *e = rd_extrema_empty();                                                           \
        e->min_key = KEY(U, lo, top);                                                      \
        e->min_idx = g + ol + NAME##_find(u + ol, ml, (U)ORDER((U)lo));                    \
        e->max_key = KEY(U, hi, top);                                                      \
        e->max_idx = g + oh + NAME##_find(u + oh, mh, (U)ORDER((U)hi));                    \
    }

/* Orders and keys for RD_CPU_EXT_ORDER: a signed integer is its own order
 * and keys as rd_key_signed; an unsigned one is ordered with its top bit
 * flipped, and a float as rd_f32_order or rd_f64_order, both keyed by the
 * order with its top bit flipped back (the unsigned value; rd_key_f32's
 * or rd_key_f64's key). */
#define RD_ORDER_SAME(b) (b)
#define RD_ORDER_FLIP(b) ((b) ^ (__typeof__(b))((__typeof__(b))1 << (8 * sizeof(b) - 1)))
#define RD_KEY_FLIP(U, o, top) ((rd_u64)((U)(o) ^ (U)(top)))
#define RD_KEY_SIGNED(U, o, top) rd_key_signed((rd_i64)(o))
#define RD_ANY_RANGE(lo, hi) 1
#define RD_F32_RANGE(lo, hi) ((lo) >= RD_F32_ORDER_NEG_INF && (hi) <= RD_F32_ORDER_INF)
#define RD_F64_RANGE(lo, hi) ((lo) >= RD_F64_ORDER_NEG_INF && (hi) <= RD_F64_ORDER_INF)

RD_CPU_EXT_ORDER(rd_cpu_ext_f32, float, uint32_t, int32_t, rd_f32_order, RD_F32_RANGE, RD_KEY_FLIP,
                 rd_cpu_ext_f32_keys)

RD_CPU_EXTREMA(rd_cpu_ext_f64_keys, double, rd_cpu_key_f64, RD_ISNAN_F)
RD_CPU_EXT_ORDER(rd_cpu_ext_f64, double, uint64_t, int64_t, rd_f64_order, RD_F64_RANGE, RD_KEY_FLIP,
                 rd_cpu_ext_f64_keys)

/* The extrema of an empty integer tile, the only one RD_CPU_EXT_ORDER
 * does not take by blocks (an integer has no NaN). */
RD_CPU_INLINE void rd_cpu_ext_none(const void *x, size_t n, uint64_t g, int skipnan, rd_extrema *e)
{
    *e = rd_extrema_empty();
}

/* Integer extrema: every tile by blocks, with no range to check. */
#define RD_CPU_EXT_INT(NAME, T, U, S, ORDER, KEY)                                          \
    RD_CPU_EXT_ORDER(NAME, T, U, S, ORDER, RD_ANY_RANGE, KEY, rd_cpu_ext_none)

RD_CPU_EXT_INT(rd_cpu_ext_i8, int8_t, uint8_t, int8_t, RD_ORDER_SAME, RD_KEY_SIGNED)
RD_CPU_EXT_INT(rd_cpu_ext_i16, int16_t, uint16_t, int16_t, RD_ORDER_SAME, RD_KEY_SIGNED)
RD_CPU_EXT_INT(rd_cpu_ext_i32, int32_t, uint32_t, int32_t, RD_ORDER_SAME, RD_KEY_SIGNED)
RD_CPU_EXT_INT(rd_cpu_ext_i64, int64_t, uint64_t, int64_t, RD_ORDER_SAME, RD_KEY_SIGNED)
RD_CPU_EXT_INT(rd_cpu_ext_u8, uint8_t, uint8_t, int8_t, RD_ORDER_FLIP, RD_KEY_FLIP)
RD_CPU_EXT_INT(rd_cpu_ext_u16, uint16_t, uint16_t, int16_t, RD_ORDER_FLIP, RD_KEY_FLIP)
RD_CPU_EXT_INT(rd_cpu_ext_u32, uint32_t, uint32_t, int32_t, RD_ORDER_FLIP, RD_KEY_FLIP)
RD_CPU_EXT_INT(rd_cpu_ext_u64, uint64_t, uint64_t, int64_t, RD_ORDER_FLIP, RD_KEY_FLIP)

/* The signed order of 16-bit float bits b (float16 or bfloat16), as
 * rd_f32_order's; its own inverse. */
static inline int16_t rd_h16_order(uint16_t b)
{
    int16_t s = (int16_t)b;
    return (int16_t)(s ^ (int16_t)((uint16_t)(s >> 15) >> 1));
}

#define RD_F16_RANGE(lo, hi) ((lo) >= (int16_t)0x83ff && (hi) <= 0x7c00) /* -inf, +inf */
#define RD_BF16_RANGE(lo, hi) ((lo) >= (int16_t)0x807f && (hi) <= 0x7f80)

RD_CPU_EXTREMA(rd_cpu_ext_f16_keys, uint16_t, rd_key_h16, hf_f16_isnan)
RD_CPU_EXT_ORDER(rd_cpu_ext_f16, uint16_t, uint16_t, int16_t, rd_h16_order, RD_F16_RANGE,
                 RD_KEY_FLIP, rd_cpu_ext_f16_keys)
RD_CPU_EXTREMA(rd_cpu_ext_bf16_keys, uint16_t, rd_key_h16, hf_bf16_isnan)
RD_CPU_EXT_ORDER(rd_cpu_ext_bf16, uint16_t, uint16_t, int16_t, rd_h16_order, RD_BF16_RANGE,
                 RD_KEY_FLIP, rd_cpu_ext_bf16_keys)
RD_CPU_EXTREMA(rd_cpu_ext_bool, uint8_t, RD_KEY_BOOL, RD_ISNAN_NO)

/* Partials of tiles [t0, t1) of a chunk, with the kernels' operation order
 * (every variant of rd_cpu_tiles inlines it). */
RD_CPU_INLINE void rd_cpu_tiles_all(const void *x, size_t nelem, uint64_t first, dt_type dtype,
                                    int skipnan, int want_sq, size_t t0, size_t t1,
                                    rd_moments *m, rd_extrema *e)
{
    size_t sz = dt_size(dtype);
    for (size_t t = t0; t < t1; t++) {
        size_t base = t * RD_TILE;
        size_t n = nelem - base < RD_TILE ? nelem - base : RD_TILE;
        const void *p = (const char *)x + base * sz;
        uint64_t g = first + base;
        if (m) {
            rd_moments *mt = &m[t];
            switch (dtype) {
            case DT_F32: rd_cpu_tile_f32(p, n, skipnan, want_sq, mt); break;
            case DT_F64: rd_cpu_tile_f64(p, n, skipnan, want_sq, mt); break;
            case DT_I8: rd_cpu_tile_i8(p, n, want_sq, mt); break;
            case DT_I16: rd_cpu_tile_i16(p, n, want_sq, mt); break;
            case DT_I32: rd_cpu_tile_i32(p, n, want_sq, mt); break;
            case DT_I64: rd_cpu_tile_i64(p, n, want_sq, mt); break;
            case DT_U8: rd_cpu_tile_u8(p, n, want_sq, mt); break;
            case DT_U16: rd_cpu_tile_u16(p, n, want_sq, mt); break;
            case DT_U32: rd_cpu_tile_u32(p, n, want_sq, mt); break;
            case DT_U64: rd_cpu_tile_u64(p, n, want_sq, mt); break;
            case DT_F16: rd_cpu_tile_f16(p, n, skipnan, want_sq, mt); break;
            case DT_BF16: rd_cpu_tile_bf16(p, n, skipnan, want_sq, mt); break;
            case DT_BOOL: rd_cpu_tile_bool(p, n, want_sq, mt); break;
            default: break;
            }
        }
        if (e) {
            rd_extrema *et = &e[t];
            switch (dtype) {
            case DT_F32: rd_cpu_ext_f32(p, n, g, skipnan, et); break;
            case DT_F64: rd_cpu_ext_f64(p, n, g, skipnan, et); break;
            case DT_I8: rd_cpu_ext_i8(p, n, g, 0, et); break;
            case DT_I16: rd_cpu_ext_i16(p, n, g, 0, et); break;
            case DT_I32: rd_cpu_ext_i32(p, n, g, 0, et); break;
            case DT_I64: rd_cpu_ext_i64(p, n, g, 0, et); break;
            case DT_U8: rd_cpu_ext_u8(p, n, g, 0, et); break;
            case DT_U16: rd_cpu_ext_u16(p, n, g, 0, et); break;
            case DT_U32: rd_cpu_ext_u32(p, n, g, 0, et); break;
            case DT_U64: rd_cpu_ext_u64(p, n, g, 0, et); break;
            case DT_F16: rd_cpu_ext_f16(p, n, g, skipnan, et); break;
            case DT_BF16: rd_cpu_ext_bf16(p, n, g, skipnan, et); break;
            case DT_BOOL: rd_cpu_ext_bool(p, n, g, 0, et); break;
            default: break;
            }
        }
    }
}

typedef void (*rd_tiles_fn)(const void *, size_t, uint64_t, dt_type, int, int, size_t, size_t,
                            rd_moments *, rd_extrema *);

/* Defines variant NAME of the tile code, compiled with ATTRS. */
#define RD_CPU_VARIANT(NAME, ATTRS)                                                        \
    ATTRS static void NAME(const void *x, size_t nelem, uint64_t first, dt_type dtype,     \
                           int skipnan, int want_sq, size_t t0, size_t t1, rd_moments *m,  \
                           rd_extrema *e)                                                   \
    {                                                                                      \
        rd_cpu_tiles_all(x, nelem, first, dtype, skipnan, want_sq, t0, t1, m, e);          \
    }

RD_CPU_VARIANT(rd_cpu_tiles_baseline, )
#if SIMD_MULTI
RD_CPU_VARIANT(rd_cpu_tiles_avx2, SIMD_ATTR_AVX2)
RD_CPU_VARIANT(rd_cpu_tiles_avx512, SIMD_ATTR_AVX512)
#endif

/* Partials of tiles [t0, t1) of a chunk on this CPU's variant. */
void rd_cpu_tiles(const void *x, size_t nelem, uint64_t first, dt_type dtype, int skipnan,
                  int want_sq, size_t t0, size_t t1, rd_moments *m, rd_extrema *e)
{
    static const rd_tiles_fn variants[] = {
        rd_cpu_tiles_baseline,
#if SIMD_MULTI
        rd_cpu_tiles_avx2, rd_cpu_tiles_avx512,
#endif
    };
    variants[simd_variant()](x, nelem, first, dtype, skipnan, want_sq, t0, t1, m, e);
}

/* ---- CPU variance tiles: rd_var_tile's order, vectorized ---- */

/* The partial of a sub-tile from its RD_LANES * v accumulators (accumulator
 * l * v + q: lane l, position q), as rd_var_lane_tree over each lane's and
 * rd_var_subtile_tree over the lanes' give it: the partials laid out
 * position by position, so that every level of both trees merges
 * neighbouring runs of lanes at once (vl_merge). */
RD_CPU_INLINE rd_var rd_cpu_var_fold(const uint64_t *cnt, const double *k, const double *s1,
                                     const double *s2, unsigned v)
{
    enum { MAX = RD_LANES * 16 };
    _Static_assert(RD_LANES == 32, "the sub-tile tree below has five levels");
    uint64_t n[MAX];
    double pk[MAX], p1h[MAX], p1l[MAX], p2h[MAX], p2l[MAX];
    vl_ref r = {n, pk, p1h, p1l, p2h, p2l};
    for (unsigned q = 0; q < v; q++)
        for (unsigned l = 0; l < RD_LANES; l++) {
            size_t i = q * RD_LANES + l, j = l * v + q;
            n[i] = cnt[j], pk[i] = k[j], p1h[i] = s1[j], p2h[i] = s2[j];
            p1l[i] = p2l[i] = 0.0;
        }
    for (unsigned h = 1; h < v; h *= 2)
        for (unsigned q = 0; q < v; q += 2 * h)
            vl_merge(r, q * RD_LANES, r, (q + h) * RD_LANES, RD_LANES);
    vl_merge(r, 0, r, 16, 16);
    vl_merge(r, 0, r, 8, 8);
    vl_merge(r, 0, r, 4, 4);
    vl_merge(r, 0, r, 2, 2);
    vl_merge(r, 0, r, 1, 1);
    return vl_get(r, 0);
}

/* rd_var_warps_tree over a tile's RD_WARPS sub-tile partials, each merge
 * by the lane code (whose fma is an instruction in every variant but the
 * baseline); the result is the tile's partial. */
RD_CPU_INLINE rd_var rd_cpu_var_warps(vl_ref s)
{
    _Static_assert(RD_WARPS == 8, "the warps tree below has three levels");
    for (unsigned h = 1; h < RD_WARPS; h *= 2)
        for (unsigned l = 0; l < RD_WARPS; l += 2 * h)
            vl_merge(s, l, s, l + h, 1);
    return vl_get(s, 0);
}

/* Defines NAME, the variance partial of a tile of n elements of type T
 * (TO_DOUBLE the exact value, ISNAN the NaN test), sub-tile by sub-tile: a
 * sub-tile's row of RD_LANES vectors puts element j into accumulator j
 * (lane j / V, position j % V), so its accumulators are columns. A full
 * sub-tile without skipnan takes its first row as the shifts and then adds
 * every row (d = x - k, from the first row on, as rd_var_step does), 64
 * bytes of columns at a time with their sums in registers; with
 * skipnan each element is selected without branches (a skipped one adds
 * +0.0, which leaves the +0.0-started sums as they are); the rest of a
 * partial sub-tile goes element by element. Then the lanes' trees, the
 * sub-tile tree and the warps tree of reduce_math.h. */
#define RD_CPU_VAR_TILE(NAME, T, TO_DOUBLE, ISNAN)                                          \
    RD_CPU_INLINE rd_var NAME##_sub(const T *p, size_t m, int skipnan)                     \
    {                                                                                       \
        enum { V = RD_VEC(sizeof(T)), ROW = RD_LANES * RD_VEC(sizeof(T)) };                \
        enum { COLS = RD_CPU_COLS(sizeof(T)) };                                             \
        double k[ROW], s1[ROW], s2[ROW];                                                    \
        uint64_t cnt[ROW];                                                                  \
        size_t rows = m / ROW, o = 0;                                                       \
        if (!rows || skipnan)                                                               \
            for (size_t j = 0; j < ROW; j++) {                                              \
                k[j] = s1[j] = s2[j] = 0.0;                                                 \
                cnt[j] = 0;                                                                 \
            }                                                                               \
        if (rows && !skipnan) {                                                             \
            for (size_t c0 = 0; c0 < ROW; c0 += COLS) {                                     \
                double kc[COLS], a1[COLS], a2[COLS];                                        \
                for (size_t j = 0; j < COLS; j++) {                                         \
                    kc[j] = TO_DOUBLE(p[c0 + j]);                                           \
                    a1[j] = a2[j] = 0.0;                                                    \
                }                                                                           \
                for (size_t r = 0; r < rows; r++)                                           \
                    for (size_t j = 0; j < COLS; j++) {                                     \
                        double d = TO_DOUBLE(p[r * ROW + c0 + j]) - kc[j];                  \
                        a1[j] = rd_add(a1[j], d);                                           \
                        a2[j] = rd_add(a2[j], d * d);                                       \
                    }                                                                       \
                for (size_t j = 0; j < COLS; j++) {                                         \
                    k[c0 + j] = kc[j];                                                      \
                    s1[c0 + j] = a1[j];                                                     \
                    s2[c0 + j] = a2[j];                                                     \
                    cnt[c0 + j] = rows;                                                     \
                }                                                                           \
            }                                                                               \
            o = rows * ROW;                                                                 \
        } else if (rows) {                                                                  \
            for (size_t r = 0; r < rows; r++)                                               \
                for (size_t j = 0; j < ROW; j++) {                                          \
                    T e = p[r * ROW + j];                                                   \
                    double x = TO_DOUBLE(e);                                                \
                    int keep = !ISNAN(e);                                                   \
                    k[j] = keep && cnt[j] == 0 ? x : k[j];                                  \
                    double d = keep ? x - k[j] : 0.0;                                       \
                    s1[j] = rd_add(s1[j], d);                                               \
                    s2[j] = rd_add(s2[j], d * d);                                           \
                    cnt[j] += (uint64_t)keep;                                               \
                }                                                                           \
            o = rows * ROW;                                                                 \
        }                                                                                   \
        for (; o < m; o++) {                                                                \
            if (skipnan && ISNAN(p[o]))                                                     \
                continue;                                                                   \
            size_t j = o % ROW;                                                             \
            rd_var_acc a = {cnt[j], k[j], s1[j], s2[j]};                                    \
            rd_var_step(&a, TO_DOUBLE(p[o]));                                               \
            cnt[j] = a.n, k[j] = a.k, s1[j] = a.s1, s2[j] = a.s2;                           \
        }                                                                                   \
        return rd_cpu_var_fold(cnt, k, s1, s2, V);                                          \
    }                                                                                       \
    RD_CPU_INLINE rd_var NAME(const T *x, size_t n, int skipnan)                            \
    {                                                                                       \
        uint64_t sn[RD_WARPS];                                                              \
        double sk[RD_WARPS], s1h[RD_WARPS], s1l[RD_WARPS], s2h[RD_WARPS], s2l[RD_WARPS];    \
        vl_ref sub = {sn, sk, s1h, s1l, s2h, s2l};                                          \
        for (unsigned w = 0; w < RD_WARPS; w++) {                                           \
            size_t b = (size_t)w * RD_SUBTILE;                                              \
            vl_put(sub, w, b < n ? NAME##_sub(x + b, n - b < RD_SUBTILE ? n - b : RD_SUBTILE, \
                                              skipnan)                                      \
                                 : rd_var_empty());                                         \
        }                                                                                   \
        return rd_cpu_var_warps(sub);                                                       \
    }

#define RD_INT_DOUBLE(v) ((double)(v))
#define RD_BOOL_DOUBLE(v) ((double)((v) != 0))

RD_CPU_VAR_TILE(rd_cpu_var_f32, float, RD_DOUBLE, RD_ISNAN_F)
RD_CPU_VAR_TILE(rd_cpu_var_f64, double, RD_DOUBLE, RD_ISNAN_F)
RD_CPU_VAR_TILE(rd_cpu_var_f16, uint16_t, RD_F16_DOUBLE, hf_f16_isnan)
RD_CPU_VAR_TILE(rd_cpu_var_bf16, uint16_t, RD_BF16_DOUBLE, hf_bf16_isnan)
RD_CPU_VAR_TILE(rd_cpu_var_i8, int8_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_i16, int16_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_i32, int32_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_i64, int64_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_u8, uint8_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_u16, uint16_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_u32, uint32_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_u64, uint64_t, RD_INT_DOUBLE, RD_ISNAN_NO)
RD_CPU_VAR_TILE(rd_cpu_var_bool, uint8_t, RD_BOOL_DOUBLE, RD_ISNAN_NO)

/* Variance partials of tiles [t0, t1) (every variant inlines it). */
RD_CPU_INLINE void rd_cpu_var_all(const void *x, size_t nelem, dt_type dtype, int skipnan,
                                  size_t t0, size_t t1, rd_var *v)
{
    size_t sz = dt_size(dtype);
    skipnan = skipnan && dt_is_float(dtype);
    for (size_t t = t0; t < t1; t++) {
        size_t base = t * RD_TILE, n = nelem - base < RD_TILE ? nelem - base : RD_TILE;
        const void *p = (const char *)x + base * sz;
        switch (dtype) {
        case DT_F32: v[t] = rd_cpu_var_f32(p, n, skipnan); break;
        case DT_F64: v[t] = rd_cpu_var_f64(p, n, skipnan); break;
        case DT_F16: v[t] = rd_cpu_var_f16(p, n, skipnan); break;
        case DT_BF16: v[t] = rd_cpu_var_bf16(p, n, skipnan); break;
        case DT_I8: v[t] = rd_cpu_var_i8(p, n, 0); break;
        case DT_I16: v[t] = rd_cpu_var_i16(p, n, 0); break;
        case DT_I32: v[t] = rd_cpu_var_i32(p, n, 0); break;
        case DT_I64: v[t] = rd_cpu_var_i64(p, n, 0); break;
        case DT_U8: v[t] = rd_cpu_var_u8(p, n, 0); break;
        case DT_U16: v[t] = rd_cpu_var_u16(p, n, 0); break;
        case DT_U32: v[t] = rd_cpu_var_u32(p, n, 0); break;
        case DT_U64: v[t] = rd_cpu_var_u64(p, n, 0); break;
        case DT_BOOL: v[t] = rd_cpu_var_bool(p, n, 0); break;
        default: v[t] = rd_var_empty(); break;
        }
    }
}

typedef void (*rd_var_fn)(const void *, size_t, dt_type, int, size_t, size_t, rd_var *);

/* Defines variant NAME of the variance tile code, compiled with ATTRS. */
#define RD_CPU_VAR_VARIANT(NAME, ATTRS)                                                    \
    ATTRS static void NAME(const void *x, size_t nelem, dt_type dtype, int skipnan,        \
                           size_t t0, size_t t1, rd_var *v)                                \
    {                                                                                      \
        rd_cpu_var_all(x, nelem, dtype, skipnan, t0, t1, v);                               \
    }

RD_CPU_VAR_VARIANT(rd_cpu_var_baseline, )
#if SIMD_MULTI
RD_CPU_VAR_VARIANT(rd_cpu_var_avx2, SIMD_ATTR_AVX2)
RD_CPU_VAR_VARIANT(rd_cpu_var_avx512, SIMD_ATTR_AVX512)
#endif

/* Variance partials of tiles [t0, t1) on this CPU's variant. */
void rd_cpu_var_tiles(const void *x, size_t nelem, dt_type dtype, int skipnan, size_t t0,
                      size_t t1, rd_var *v)
{
    static const rd_var_fn variants[] = {
        rd_cpu_var_baseline,
#if SIMD_MULTI
        rd_cpu_var_avx2, rd_cpu_var_avx512,
#endif
    };
    variants[simd_variant()](x, nelem, dtype, skipnan, t0, t1, v);
}

/* ---- the operation on the engine ---- */

/* The short name of a type in module names ("f32", "bf16", ...). */
const char *rd_dtype_tag(dt_type t)
{
    static const char *const tags[DT_COUNT] = {
        [DT_F32] = "f32", [DT_F64] = "f64", [DT_I8] = "i8",   [DT_I16] = "i16",
        [DT_I32] = "i32", [DT_I64] = "i64", [DT_U8] = "u8",   [DT_U16] = "u16",
        [DT_U32] = "u32", [DT_U64] = "u64", [DT_F16] = "f16", [DT_BF16] = "bf16",
        [DT_BOOL] = "bool",
    };
    return (unsigned)t < DT_COUNT && tags[t] ? tags[t] : "none";
}

/* Name of the embedded module holding one kernel group for one type, e.g.
 * "reduce_f32_extrema": modules are small so a run JIT-compiles only what it
 * launches. */
static void rd_module_name(char *buf, size_t len, dt_type t, const char *group)
{
    snprintf(buf, len, "reduce_%s_%s", rd_dtype_tag(t), group);
}

/* Whether ops need the moments kernel (sums, counts without NaN), the
 * extrema kernel and the variance kernel. */
static void rd_kernels_for(unsigned ops, int skipnan, int *use_m, int *use_e, int *use_v)
{
    *use_m = (ops & (RD_OP_SUM | RD_OP_MEAN | RD_OP_SUMSQ)) || (skipnan && (ops & RD_OP_COUNT));
    *use_e = (ops & RD_OP_EXTREMA) != 0;
    *use_v = (ops & (RD_OP_VAR | RD_OP_STD)) != 0;
}

/* Kernel names: "rdk_moments[_sq][_skipnan]", "rdk_extrema[_skipnan]" and
 * "rdk_var[_skipnan]". */
static void rd_kernel_names(int want_sq, int skipnan, char *moments, char *extrema, char *var,
                            size_t len)
{
    snprintf(moments, len, "rdk_moments%s%s", want_sq ? "_sq" : "", skipnan ? "_skipnan" : "");
    snprintf(extrema, len, "rdk_extrema%s", skipnan ? "_skipnan" : "");
    snprintf(var, len, "rdk_var%s", skipnan ? "_skipnan" : "");
}

/* The embedded modules a reduction launches. */
int rd_modules(dt_type dtype, unsigned ops, int skipnan, char names[RD_MAX_MODULES][64])
{
    int use_m, use_e, use_v, n = 0;
    char m[32], e[32], v[32];
    skipnan = skipnan && dt_is_float(dtype);
    rd_kernels_for(ops, skipnan, &use_m, &use_e, &use_v);
    rd_kernel_names((ops & RD_OP_SUMSQ) != 0, skipnan, m, e, v, sizeof m);
    if (use_m)
        rd_module_name(names[n++], 64, dtype, m + 4);
    if (use_e)
        rd_module_name(names[n++], 64, dtype, e + 4);
    if (use_v)
        rd_module_name(names[n++], 64, dtype, v + 4);
    return n;
}

/* What one chunk of a reduction is: its elements, their first global
 * index, the kernels it needs, and where its partials lie in the slot's
 * result buffer (moments first, then extrema, then variance partials). */
typedef struct {
    size_t nelem, ntiles;
    uint64_t first;
    int skipnan, want_sq, use_m, use_e, use_v;
    size_t extrema_at; /* byte offset of the extrema in the result buffer */
    size_t var_at;     /* byte offset of the variance partials */
} rd_chunk;

/* Tiles a chunk of `capacity` bytes may hold, at most. */
static size_t rd_max_tiles(size_t capacity)
{
    return capacity / RD_TILE + 1;
}

/* The reduction work of an engine chunk. */
static rd_chunk rd_chunk_of(const engine_chunk *c)
{
    const rd_job *j = c->op;
    size_t sz = dt_size(j->dtype);
    rd_chunk k;
    k.nelem = c->bytes / sz;
    k.ntiles = (k.nelem + RD_TILE - 1) / RD_TILE;
    k.first = j->first + c->offset / sz;
    k.skipnan = j->skipnan && dt_is_float(j->dtype);
    k.want_sq = (j->ops & RD_OP_SUMSQ) != 0;
    rd_kernels_for(j->ops, k.skipnan, &k.use_m, &k.use_e, &k.use_v);
    k.extrema_at = rd_max_tiles(c->capacity) * sizeof(rd_moments);
    k.var_at = k.extrema_at + rd_max_tiles(c->capacity) * sizeof(rd_extrema);
    return k;
}

/* Result buffer bytes: every tile's moments, extrema and, where var or std
 * is wanted, variance partial (engine_ops.out_bytes). */
static size_t rd_out_bytes(const void *op, size_t capacity)
{
    const rd_job *j = op;
    size_t each = sizeof(rd_moments) + sizeof(rd_extrema);
    if (j->ops & (RD_OP_VAR | RD_OP_STD))
        each += sizeof(rd_var);
    return rd_max_tiles(capacity) * each;
}

/* Units of CPU work: tiles (engine_ops.units). */
static size_t rd_units(const void *op, size_t bytes)
{
    const rd_job *j = op;
    return (bytes / dt_size(j->dtype) + RD_TILE - 1) / RD_TILE;
}

/* Launches one kernel of a chunk and queues the copy of its partials
 * (`each` bytes per tile, at byte `at` of the result buffers) back. */
static int rd_launch_one(engine_chunk *c, dt_type dtype, const char *name, void **params,
                         size_t ntiles, size_t each, size_t at)
{
    char mod[96];
    CUfunction f;
    int rc;
    rd_module_name(mod, sizeof mod, dtype, name + 4);
    if ((rc = gpu_function(c->g, mod, name, &f)) < 0 ||
        (rc = gpu_launch(c->g, f, name, (unsigned)ntiles, RD_WARPS * 32, c->stream, params)) < 0)
        return rc;
    size_t used = strlen(c->kernels);
    snprintf(c->kernels + used, ENGINE_KERNELS_LEN - used, "%s%s", used ? ", " : "", name);
    CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + at, c->out + at, ntiles * each, c->stream));
    return 0;
}

/* Queues a chunk's tile kernels and the copies of their partials
 * (engine_ops.launch). */
static int rd_launch(engine_chunk *c)
{
    const rd_job *j = c->op;
    rd_chunk k = rd_chunk_of(c);
    unsigned long long n64 = k.nelem, first64 = k.first;
    CUdeviceptr x = c->in, dm = c->out, de = c->out + k.extrema_at, dv = c->out + k.var_at;
    char name[64], ext_name[64], var_name[64];
    rd_kernel_names(k.want_sq, k.skipnan, name, ext_name, var_name, sizeof name);
    int rc = 0;
    if (k.use_m) {
        rd_fold_ctl no_fold = {0, 0, 0, 0}; /* partials are folded on the host */
        void *params[] = {&x, &n64, &first64, &dm, &no_fold};
        rc = rd_launch_one(c, j->dtype, name, params, k.ntiles, sizeof(rd_moments), 0);
    }
    if (rc == 0 && k.use_e) {
        void *params[] = {&x, &n64, &first64, &de};
        rc = rd_launch_one(c, j->dtype, ext_name, params, k.ntiles, sizeof(rd_extrema),
                           k.extrema_at);
    }
    if (rc == 0 && k.use_v) {
        void *params[] = {&x, &n64, &first64, &dv};
        rc = rd_launch_one(c, j->dtype, var_name, params, k.ntiles, sizeof(rd_var), k.var_at);
    }
    return rc;
}

/* Bytes of a chunk that is a view of a plain file that rd_cpu reads at a
 * time (whole tiles), into a buffer of its thread's. */
#define RD_CPU_PIECE ((size_t)256 << 10)

/* The partials of tiles [t0, t1) on the calling thread (engine_ops.cpu).
 * A chunk that is a view of a plain file is read in pieces with pread
 * (io_view_read): the view's pages are never mapped, and each piece is
 * summed from the cache; a piece that cannot be read so is read from the
 * view. */
static void rd_cpu(const engine_chunk *c, size_t t0, size_t t1)
{
    const rd_job *j = c->op;
    rd_chunk k = rd_chunk_of(c);
    char *out = c->host_out;
    rd_moments *m = k.use_m ? (rd_moments *)out : NULL;
    rd_extrema *e = k.use_e ? (rd_extrema *)(out + k.extrema_at) : NULL;
    rd_var *v = k.use_v ? (rd_var *)(out + k.var_at) : NULL;
    size_t sz = dt_size(j->dtype), tile_bytes = RD_TILE * sz;
    io_view_fault f;
    unsigned char *piece = NULL;
    if (t0 >= t1 || tile_bytes > RD_CPU_PIECE || !io_view_owner(c->host_in, &f) ||
        !(piece = aligned_alloc(64, RD_CPU_PIECE))) {
        rd_cpu_tiles(c->host_in, k.nelem, k.first, j->dtype, k.skipnan, k.want_sq, t0, t1, m, e);
        if (v)
            rd_cpu_var_tiles(c->host_in, k.nelem, j->dtype, k.skipnan, t0, t1, v);
        return;
    }
    size_t per = RD_CPU_PIECE / tile_bytes;
    for (size_t a = t0; a < t1; a += per) {
        size_t b = a + per < t1 ? a + per : t1, first = a * RD_TILE;
        size_t last = b * RD_TILE < k.nelem ? b * RD_TILE : k.nelem;
        const void *src = (const char *)c->host_in + first * sz;
        if (io_view_read(&f, first * sz, piece, (last - first) * sz) == 0)
            src = piece;
        rd_cpu_tiles(src, k.nelem - first, k.first + first, j->dtype, k.skipnan, k.want_sq, 0,
                     b - a, m ? m + a : NULL, e ? e + a : NULL);
        if (v)
            rd_cpu_var_tiles(src, k.nelem - first, j->dtype, k.skipnan, 0, b - a, v + a);
    }
    free(piece);
}

/* Folds a chunk's partials into the array's state, in order
 * (engine_ops.collect). */
static int rd_collect(const engine_chunk *c, io_status *st)
{
    const rd_job *j = c->op;
    rd_chunk k = rd_chunk_of(c);
    const char *out = c->host_out;
    rd_state_add(j->st, k.use_m ? (const rd_moments *)out : NULL,
                 k.use_e ? (const rd_extrema *)(out + k.extrema_at) : NULL,
                 k.use_v ? (const rd_var *)(out + k.var_at) : NULL, k.ntiles, k.nelem);
    return 0;
}

const engine_ops rd_engine_ops = {
    .name = "reduction",
    .in_what = "a chunk buffer (--chunk)",
    .out_what = "tile partials",
    .out_bytes = rd_out_bytes,
    .launch = rd_launch,
    .units = rd_units,
    .cpu = rd_cpu,
    .collect = rd_collect,
};
