/* axis.c - reductions along axes: the plan of an array's groups, the CPU
 * units of a chunk's work, and the streaming state of the outputs (see
 * axis.h for the order and the chunk contract). */
#include "axis.h"

#include "engine.h"
#include "half_lanes.h"
#include "simd.h"
#include "var_lanes.h"
#include "io/par.h"
#include "io/view.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan ---- */

/* Parses an --axis list into a mask of the user's axes. */
int ax_parse_axes(const char *list, int ndim, unsigned *mask, io_status *st)
{
    unsigned m = 0;
    const char *p = list;
    if (!*p)
        return io_fail(st, IO_ERR_FORMAT, "empty --axis list");
    for (;;) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || *p == ' ' || *p == '+')
            return io_fail(st, IO_ERR_FORMAT, "bad --axis '%s' (comma-separated integers)", list);
        if (a < -(long)ndim || a >= ndim)
            return io_fail(st, IO_ERR_FORMAT, "axis %ld is out of bounds for an array of %d "
                           "dimension%s", a, ndim, ndim == 1 ? "" : "s");
        int ax = (int)(a < 0 ? a + ndim : a);
        if (m & (1u << ax))
            return io_fail(st, IO_ERR_FORMAT, "axis %d given twice in --axis '%s'", ax, list);
        m |= 1u << ax;
        if (!*end)
            break;
        p = end + 1;
    }
    *mask = m;
    return 0;
}

/* The ops whose values need the moments, the extrema, the variance. */
static void ax_needs(unsigned ops, int *use_m, int *use_e, int *use_v)
{
    *use_m = (ops & (RD_OP_SUM | RD_OP_MEAN | RD_OP_SUMSQ | RD_OP_COUNT)) != 0;
    *use_e = (ops & RD_OP_EXTREMA) != 0;
    *use_v = (ops & (RD_OP_VAR | RD_OP_STD)) != 0;
}

/* Builds the canonical groups and the geometry of the units. */
int ax_plan_init(ax_plan *p, dt_type dtype, unsigned ops, int skipnan, int ndim,
                 const uint64_t *shape, int fortran, unsigned axes, int keepdims,
                 io_status *st)
{
    memset(p, 0, sizeof *p);
    if (ndim > AX_MAX_DIMS)
        return io_fail(st, IO_ERR_FORMAT, "too many dimensions (%d)", ndim);
    p->dtype = dtype;
    p->ops = ops;
    p->skipnan = skipnan && dt_is_float(dtype);
    p->ndim = ndim;
    p->axes = axes;
    p->fortran = fortran && ndim > 1;
    p->keepdims = keepdims;
    p->nelem = 1;
    p->J = 1;
    p->nout = 1;
    for (int a = 0; a < ndim; a++) {
        p->shape[a] = shape[a];
        p->nelem *= shape[a];
        if (axes & (1u << a))
            p->J *= shape[a];
        else
            p->nout *= shape[a];
    }
    for (int i = 0; i < ndim; i++) {
        int a = p->fortran ? ndim - 1 - i : i;
        int red = (axes >> a) & 1;
        if (shape[a] == 1)
            continue;
        if (p->ngroups && p->greduced[p->ngroups - 1] == red) {
            p->glen[p->ngroups - 1] *= shape[a];
        } else {
            p->glen[p->ngroups] = shape[a];
            p->greduced[p->ngroups] = red;
            p->ngroups++;
        }
    }
    p->T = 1;
    if (p->nelem && p->ngroups && p->greduced[p->ngroups - 1])
        p->T = p->glen[p->ngroups - 1];
    p->nruns = p->nelem / p->T;
    p->J /= p->T; /* the runs along the reduced axes: elements reduced / T */
    p->nblocks = (p->J + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
    p->width = 1;
    if (!p->nelem) {
        p->unit = AX_UNIT_NONE;
    } else if (p->T > 1) {
        p->unit = AX_UNIT_TILE;
        p->tiles_per_run = (p->T + RD_TILE - 1) / RD_TILE;
    } else if (p->ngroups >= 2) {
        /* the last group kept (C), the one before reduced (L); its 16-row blocks are the
           stage-2 blocks when it is the only reduced group or whole blocks fill it */
        p->C = p->glen[p->ngroups - 1];
        p->L = p->glen[p->ngroups - 2];
        int only = p->ngroups < 4;
        if (only || p->L % RD_AXIS_BLOCK == 0) {
            p->unit = AX_UNIT_BLOCK;
            p->blocks_per_sweep = (p->L + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
            p->width = (size_t)p->C;
        }
    }
    return 0;
}

/* The user's result shape. */
int ax_result_shape(const ax_plan *p, uint64_t *shape)
{
    int n = 0;
    for (int a = 0; a < p->ndim; a++)
        if (!(p->axes & (1u << a)))
            shape[n++] = p->shape[a];
        else if (p->keepdims)
            shape[n++] = 1;
    return n;
}

/* ---- the chunk contract ---- */

/* The output element and stage-2 index of run r, and how many runs from r
 * on share j with consecutive outputs (the rest of the innermost kept
 * group). */
static void ax_locate(const ax_plan *p, uint64_t r, uint64_t *o, uint64_t *j, uint64_t *span)
{
    uint64_t oo = 0, jj = 0, so = 1, sj = 1;
    int nrem = p->ngroups - (p->T > 1);
    *span = 1;
    for (int g = nrem - 1; g >= 0; g--) {
        uint64_t len = p->glen[g], d = r % len;
        r /= len;
        if (g == nrem - 1 && !p->greduced[g])
            *span = len - d;
        if (p->greduced[g]) {
            jj += d * sj;
            sj *= len;
        } else {
            oo += d * so;
            so *= len;
        }
    }
    *o = oo;
    *j = jj;
}

/* First element and length of unit u. */
void ax_unit_span(const ax_plan *p, uint64_t u, uint64_t *start, uint64_t *n)
{
    if (p->unit == AX_UNIT_TILE) {
        uint64_t run = u / p->tiles_per_run, tile = u % p->tiles_per_run;
        uint64_t off = tile * RD_TILE;
        *start = run * p->T + off;
        *n = p->T - off < RD_TILE ? p->T - off : RD_TILE;
    } else {
        uint64_t sweep = u / p->blocks_per_sweep, blk = u % p->blocks_per_sweep;
        uint64_t row = blk * RD_AXIS_BLOCK;
        uint64_t rows = p->L - row < RD_AXIS_BLOCK ? p->L - row : RD_AXIS_BLOCK;
        *start = (sweep * p->L + row) * p->C;
        *n = rows * p->C;
    }
}

/* The unit that element e lies in (a plan with units). */
static uint64_t ax_unit_at(const ax_plan *p, uint64_t e)
{
    if (p->unit == AX_UNIT_TILE)
        return e / p->T * p->tiles_per_run + e % p->T / RD_TILE;
    uint64_t row = e / p->C;
    return row / p->L * p->blocks_per_sweep + row % p->L / RD_AXIS_BLOCK;
}

/* The complete units of elements [e0, e1) and the raw ends. */
ax_chunk_hdr ax_chunk_of(const ax_plan *p, uint64_t e0, uint64_t e1)
{
    ax_chunk_hdr h = {0, 0, e1 - e0, 0, 0, AX_FOLD_LEVELS};
    if (p->unit == AX_UNIT_NONE || e1 <= e0)
        return h;
    uint64_t u = ax_unit_at(p, e0), s, n;
    ax_unit_span(p, u, &s, &n);
    if (s < e0)
        ax_unit_span(p, ++u, &s, &n);
    uint64_t v = ax_unit_at(p, e1 - 1), vs, vn;
    ax_unit_span(p, v, &vs, &vn);
    uint64_t end = vs + vn <= e1 ? v + 1 : v;
    if (s >= e1 || end <= u)
        return h;
    ax_unit_span(p, end - 1, &vs, &vn);
    h.u0 = u;
    h.u1 = end;
    h.head = s - e0;
    h.tail = e1 - (vs + vn);
    h.nentries = ax_chunk_entries(p, u, end, NULL);
    return h;
}

/* The leaf index of unit u in its segment's tree. */
uint64_t ax_unit_leaf(const ax_plan *p, uint64_t u)
{
    if (p->unit == AX_UNIT_TILE)
        return u % p->tiles_per_run;
    uint64_t start, n, o, j, span;
    ax_unit_span(p, u, &start, &n);
    ax_locate(p, start, &o, &j, &span);
    return j / RD_AXIS_BLOCK;
}

/* The entry that starts at unit u of complete units up to u1: the largest
 * aligned subtree of its segment's tree, of at most 2^levels leaves, that
 * u starts. */
static ax_entry ax_entry_cap(const ax_plan *p, uint64_t u, uint64_t u1, unsigned levels)
{
    uint64_t per = p->unit == AX_UNIT_TILE ? p->tiles_per_run : p->blocks_per_sweep;
    if (per == 1) /* a segment of one unit (short runs): no division, no walk */
        return (ax_entry){u, 1, 0};
    uint64_t end = (u / per + 1) * per, leaf = ax_unit_leaf(p, u);
    if (end > u1)
        end = u1;
    unsigned k = levels;
    while (k && ((leaf & (((uint64_t)1 << k) - 1)) || u + ((uint64_t)1 << k) > end))
        k--;
    return (ax_entry){u, (uint64_t)1 << k, k};
}

/* ax_entry_cap of the contract's AX_FOLD_LEVELS. */
static ax_entry ax_entry_at(const ax_plan *p, uint64_t u, uint64_t u1)
{
    return ax_entry_cap(p, u, u1, AX_FOLD_LEVELS);
}

/* The number of maximal aligned pieces of at most 2^levels leaves that
 * leaves [a, b) are cut into (ax_entry_cap's, counted without a walk). */
static uint64_t ax_pieces_of(uint64_t a, uint64_t b, unsigned levels)
{
    const uint64_t cap = (uint64_t)1 << levels;
    uint64_t A = (a + cap - 1) & ~(cap - 1), B = b & ~(cap - 1), n = 0;
    if (A <= B) /* the rising head, the whole subtrees, the falling tail */
        return (uint64_t)__builtin_popcountll(A - a) + (B - A) / cap +
               (uint64_t)__builtin_popcountll(b - B);
    while (a < b) {
        unsigned k = levels;
        while (k && ((a & (((uint64_t)1 << k) - 1)) || a + ((uint64_t)1 << k) > b))
            k--;
        a += (uint64_t)1 << k;
        n++;
    }
    return n;
}

/* The number of entries of at most 2^levels units of complete units
 * [u0, u1): one per unit where a segment is one unit, else each segment's
 * pieces of its leaves. */
static size_t ax_count_entries(const ax_plan *p, uint64_t u0, uint64_t u1, unsigned levels)
{
    uint64_t per = p->unit == AX_UNIT_TILE ? p->tiles_per_run : p->blocks_per_sweep, n = 0;
    if (per == 1)
        return (size_t)(u1 - u0);
    for (uint64_t u = u0; u < u1;) {
        uint64_t end = (u / per + 1) * per, leaf = ax_unit_leaf(p, u);
        if (end > u1)
            end = u1;
        n += ax_pieces_of(leaf, leaf + (end - u), levels);
        u = end;
    }
    return (size_t)n;
}

/* The entries of complete units [u0, u1), one after the other. */
size_t ax_chunk_entries(const ax_plan *p, uint64_t u0, uint64_t u1, ax_entry *out)
{
    size_t n = 0;
    if (!out)
        return ax_count_entries(p, u0, u1, AX_FOLD_LEVELS);
    for (uint64_t u = u0; u < u1; n++) {
        ax_entry e = ax_entry_at(p, u, u1);
        out[n] = e;
        u += e.n;
    }
    return n;
}

/* True when sums of squares of this type are doubles. */
static int ax_sq_is_float(dt_type t)
{
    return dt_is_float(t) || dt_size(t) == 8;
}

/* Rounds up to a multiple of 64 bytes. */
static size_t ax_align(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The buffer layout for chunks of at most capacity bytes. */
/* Bytes after raw_at for chunks of at most capacity bytes: the head and
 * the tail (units tile the elements, so they are each shorter than a unit,
 * and a chunk with no complete unit is shorter than two), then the GPU's
 * scratch: an entry list and, for runs of several tiles, the tiles' parts
 * (at most all_units);
 * the whole capacity where that is less, or where there are no units. */
static size_t ax_raw_room(const ax_plan *p, const ax_layout *l, size_t capacity,
                          uint64_t all_units)
{
    size_t sz = dt_size(p->dtype), whole = ax_align(capacity);
    if (p->unit == AX_UNIT_NONE)
        return whole;
    uint64_t span = p->unit == AX_UNIT_TILE ? (p->T < RD_TILE ? p->T : RD_TILE)
                                            : (uint64_t)RD_AXIS_BLOCK * p->C;
    uint64_t part = (uint64_t)(l->sum_size + l->sq_size + sizeof(uint64_t) +
                               sizeof(rd_extrema) + sizeof(rd_var));
    uint64_t nel = capacity / sz, tiles = 0;
    if (p->unit == AX_UNIT_TILE && p->tiles_per_run > 1) {
        /* whole tiles, and at most one short last tile per run the chunk touches */
        tiles = nel / RD_TILE + nel / p->T + 2;
        tiles = tiles < all_units ? tiles : all_units;
    }
    double room = (double)ax_align((size_t)(2 * span * sz + 8)) +
                  (double)ax_align(l->max_parts / (p->width ? p->width : 1) *
                                   sizeof(ax_gpu_entry) + 8) +
                  (double)tiles * part + 64;
    return room < (double)whole ? ax_align((size_t)room) : whole;
}

static void ax_layout_arrays(const ax_plan *p, ax_layout *l);

ax_layout ax_layout_for(const ax_plan *p, size_t capacity)
{
    ax_layout l;
    memset(&l, 0, sizeof l);
    ax_needs(p->ops, &l.use_m, &l.use_e, &l.use_v);
    uint64_t nel = capacity / dt_size(p->dtype), units = 0;
    if (p->unit == AX_UNIT_TILE)
        units = (nel / p->T + 2) * p->tiles_per_run;
    else if (p->unit == AX_UNIT_BLOCK)
        units = (nel / (p->L * p->C) + 2) * p->blocks_per_sweep;
    if (units > nel + 1)
        units = nel + 1;
    uint64_t all_units = units;
    if (p->unit != AX_UNIT_NONE) {
        /* parts are per entry: each segment (run or sweep) a chunk touches is cut into at most
           2 * AX_FOLD_LEVELS + 1 aligned pieces besides its whole subtrees of
           2^AX_FOLD_LEVELS units */
        uint64_t seg = p->unit == AX_UNIT_TILE ? p->T : p->L * p->C;
        uint64_t unit = p->unit == AX_UNIT_TILE ? RD_TILE : (uint64_t)RD_AXIS_BLOCK * p->C;
        uint64_t segs = nel / seg + 2, whole = nel / unit + 2 * segs;
        uint64_t entries = segs * (2 * AX_FOLD_LEVELS + 1) + (whole >> AX_FOLD_LEVELS);
        if (entries < units)
            units = entries;
    }
    l.max_parts = (size_t)units * p->width;
    if (p->unit == AX_UNIT_BLOCK && l.max_parts > nel / p->C * p->C + 2 * p->C)
        l.max_parts = (size_t)(nel / p->C * p->C + 2 * p->C);
    ax_layout_arrays(p, &l);
    l.total = l.raw_at + ax_raw_room(p, &l, capacity, all_units);
    return l;
}

/* The arrays of a layout of l->max_parts parts for the ops of p, each
 * array's offset from the header on (raw_at: the end of the last). */
static void ax_layout_arrays(const ax_plan *p, ax_layout *l)
{
    ax_needs(p->ops, &l->use_m, &l->use_e, &l->use_v);
    l->use_sum = (p->ops & (RD_OP_SUM | RD_OP_MEAN)) != 0;
    l->use_sq = (p->ops & RD_OP_SUMSQ) != 0;
    l->use_cnt = l->use_m && p->skipnan;
    l->sum_size = dt_is_float(p->dtype) ? 8 : 16;
    l->sq_size = ax_sq_is_float(p->dtype) ? 8 : 16;
    size_t at = ax_align(sizeof(ax_chunk_hdr));
    l->sum_at = at;
    at += l->use_sum ? ax_align(l->max_parts * l->sum_size) : 0;
    l->sq_at = at;
    at += l->use_sq ? ax_align(l->max_parts * l->sq_size) : 0;
    l->count_at = at;
    at += l->use_cnt ? ax_align(l->max_parts * sizeof(uint64_t)) : 0;
    l->extrema_at = at;
    at += l->use_e ? ax_align(l->max_parts * sizeof(rd_extrema)) : 0;
    l->var_at = at;
    at += l->use_v ? ax_align(l->max_parts * sizeof(rd_var)) : 0;
    l->raw_at = at;
}

/* Bytes of a chunk's result buffer. */
size_t ax_out_bytes(const ax_plan *p, size_t capacity)
{
    return ax_layout_for(p, capacity).total;
}

/* The chunk for a run of p (see axis.h). */
size_t ax_chunk_for(const ax_plan *p, size_t chunk, size_t align)
{
    while (chunk > align && ax_out_bytes(p, chunk) > 2 * chunk + ((size_t)64 << 20))
        chunk = (chunk / 2 + align - 1) / align * align;
    return chunk;
}

/* ---- elements ---- */

/* Element i of x as a double (integers and halves exactly, 64-bit integers
 * rounded). */
static double ax_value(dt_type t, const void *x, size_t i)
{
    switch (t) {
    case DT_F32: return ((const float *)x)[i];
    case DT_F64: return ((const double *)x)[i];
    case DT_F16: return hf_f16_to_f32(((const uint16_t *)x)[i]);
    case DT_BF16: return hf_bf16_to_f32(((const uint16_t *)x)[i]);
    case DT_I8: return ((const int8_t *)x)[i];
    case DT_I16: return ((const int16_t *)x)[i];
    case DT_I32: return ((const int32_t *)x)[i];
    case DT_I64: return (double)((const int64_t *)x)[i];
    case DT_U8: return ((const uint8_t *)x)[i];
    case DT_U16: return ((const uint16_t *)x)[i];
    case DT_U32: return ((const uint32_t *)x)[i];
    case DT_U64: return (double)((const uint64_t *)x)[i];
    case DT_BOOL: return ((const uint8_t *)x)[i] != 0;
    default: return 0;
    }
}

/* Element i of an integer array, exactly. */
static __int128 ax_int(dt_type t, const void *x, size_t i)
{
    switch (t) {
    case DT_I8: return ((const int8_t *)x)[i];
    case DT_I16: return ((const int16_t *)x)[i];
    case DT_I32: return ((const int32_t *)x)[i];
    case DT_I64: return ((const int64_t *)x)[i];
    case DT_U8: return ((const uint8_t *)x)[i];
    case DT_U16: return ((const uint16_t *)x)[i];
    case DT_U32: return ((const uint32_t *)x)[i];
    case DT_U64: return ((const uint64_t *)x)[i];
    case DT_BOOL: return ((const uint8_t *)x)[i] != 0;
    default: return 0;
    }
}

/* Whether element i is a NaN. */
static int ax_isnan(dt_type t, const void *x, size_t i)
{
    switch (t) {
    case DT_F32: return isnan(((const float *)x)[i]);
    case DT_F64: return isnan(((const double *)x)[i]);
    case DT_F16: return hf_f16_isnan(((const uint16_t *)x)[i]);
    case DT_BF16: return hf_bf16_isnan(((const uint16_t *)x)[i]);
    default: return 0;
    }
}

/* Order key of a non-NaN element i (rd_key_*). */
static rd_u64 ax_key(dt_type t, const void *x, size_t i)
{
    switch (t) {
    case DT_F32: {
        uint32_t u;
        memcpy(&u, (const char *)x + 4 * i, 4);
        return rd_key_f32(u);
    }
    case DT_F64: {
        uint64_t u;
        memcpy(&u, (const char *)x + 8 * i, 8);
        return rd_key_f64(u);
    }
    case DT_F16:
    case DT_BF16: return rd_key_h16(((const uint16_t *)x)[i]);
    case DT_I8:
    case DT_I16:
    case DT_I32:
    case DT_I64: return rd_key_signed((rd_i64)ax_int(t, x, i));
    default: return (rd_u64)ax_int(t, x, i);
    }
}

/* ---- the CPU units ---- */

/* The CPU unit code is inlined into each instruction-set variant of
 * ax_cpu_entries, so that its loops vectorize for that variant's registers. */
#define AX_INLINE static inline __attribute__((always_inline))

/* Columns a block unit adds at a time, their accumulators in registers. */
#define AX_COLS 16

/* Float block: the sums of nc columns over the rows, each from -0.0 in row
 * order, down the rows with the columns' accumulators in registers (with
 * nc = AX_COLS a loop of a constant trip count, which the compiler
 * vectorizes). */
#define AX_FLOAT_BLOCK(NAME, T, TO_DOUBLE, ISNAN)                                           \
    AX_INLINE void NAME##_cols(const T *x, size_t rows, size_t C, size_t nc, int skipnan,    \
                               int want_sq, rd_moments *m)                                  \
    {                                                                                       \
        double sa[AX_COLS], sq[AX_COLS];                                                    \
        uint64_t k[AX_COLS];                                                                \
        for (size_t c = 0; c < nc; c++) {                                                   \
            sa[c] = sq[c] = -0.0;                                                           \
            k[c] = 0;                                                                       \
        }                                                                                   \
        const T *e = x;                                                                     \
        if (!skipnan && !want_sq)                                                           \
            for (size_t r = 0; r < rows; r++, e += C)                                       \
                for (size_t c = 0; c < nc; c++)                                             \
                    sa[c] = rd_add(sa[c], TO_DOUBLE(e[c]));                                 \
        else if (!skipnan)                                                                  \
            for (size_t r = 0; r < rows; r++, e += C)                                       \
                for (size_t c = 0; c < nc; c++) {                                           \
                    double d = TO_DOUBLE(e[c]);                                             \
                    sa[c] = rd_add(sa[c], d);                                               \
                    sq[c] = rd_add(sq[c], d * d);                                           \
                }                                                                           \
        else                                                                                \
            for (size_t r = 0; r < rows; r++, e += C)                                       \
                for (size_t c = 0; c < nc; c++) {                                           \
                    int keep = !ISNAN(e[c]);                                                \
                    double d = TO_DOUBLE(e[c]);                                             \
                    sa[c] = rd_add(sa[c], keep ? d : -0.0);                                 \
                    sq[c] = rd_add(sq[c], keep ? d * d : -0.0);                             \
                    k[c] += (uint64_t)keep;                                                 \
                }                                                                           \
        for (size_t c = 0; c < nc; c++) {                                                   \
            memcpy(&m[c].sum_lo, &sa[c], sizeof sa[c]);                                     \
            m[c].sum_hi = 0;                                                                \
            if (want_sq)                                                                    \
                memcpy(&m[c].sq_lo, &sq[c], sizeof sq[c]);                                  \
            else                                                                            \
                m[c].sq_lo = 0;                                                             \
            m[c].sq_hi = 0;                                                                 \
            m[c].count = skipnan ? k[c] : rows;                                             \
        }                                                                                   \
    }

#define AX_DOUBLE(v) ((double)(v))
#define AX_F16_DOUBLE(v) ((double)hl_f16_to_f32(v))
#define AX_BF16_DOUBLE(v) ((double)hf_bf16_to_f32(v))
#define AX_ISNAN_F(v) ((v) != (v))

AX_FLOAT_BLOCK(ax_block_f32, float, AX_DOUBLE, AX_ISNAN_F)
AX_FLOAT_BLOCK(ax_block_f64, double, AX_DOUBLE, AX_ISNAN_F)
AX_FLOAT_BLOCK(ax_block_f16, uint16_t, AX_F16_DOUBLE, hf_f16_isnan)
AX_FLOAT_BLOCK(ax_block_bf16, uint16_t, AX_BF16_DOUBLE, hf_bf16_isnan)

/* Integer block: exact sums (and exact squares up to 32 bits; 64-bit
 * squares as doubles from -0.0 in row order). */
AX_INLINE void ax_block_int(const ax_plan *p, const void *x, size_t rows, size_t nc,
                            int want_sq, rd_moments *m)
{
    size_t C = (size_t)p->C;
    int wide = dt_size(p->dtype) == 8;
    for (size_t c = 0; c < nc; c++) {
        rd_u128 s = 0, q = 0;
        double dq = -0.0;
        for (size_t r = 0; r < rows; r++) {
            __int128 v = ax_int(p->dtype, x, r * C + c);
            s += (rd_u128)v;
            if (want_sq && wide) {
                double d = (double)v;
                dq = rd_add(dq, d * d);
            } else if (want_sq) {
                q += (rd_u128)(v * v);
            }
        }
        rd_moments *o = &m[c];
        memset(o, 0, sizeof *o);
        o->sum_lo = (rd_u64)s;
        o->sum_hi = (rd_u64)(s >> 64);
        if (want_sq && wide) {
            memcpy(&o->sq_lo, &dq, sizeof dq);
        } else if (want_sq) {
            o->sq_lo = (rd_u64)q;
            o->sq_hi = (rd_u64)(q >> 64);
        }
        o->count = rows;
    }
}

/* Extrema of n elements of x (stride apart) whose first has index g. */
static rd_extrema ax_extrema(const ax_plan *p, const void *x, size_t n, size_t stride,
                             uint64_t g)
{
    rd_extrema r = rd_extrema_empty();
    for (size_t o = 0; o < n; o++) {
        size_t i = o * stride;
        if (ax_isnan(p->dtype, x, i)) {
            if (!p->skipnan) {
                rd_min_update(&r.min_key, &r.min_idx, RD_NAN_MIN_KEY, g + o);
                rd_max_update(&r.max_key, &r.max_idx, RD_NAN_MAX_KEY, g + o);
            }
            continue;
        }
        rd_u64 k = ax_key(p->dtype, x, i);
        rd_min_update(&r.min_key, &r.min_idx, k, g + o);
        rd_max_update(&r.max_key, &r.max_idx, k, g + o);
    }
    return r;
}

/* The variance partial of n elements of x (stride apart) by the element
 * step, from the empty partial. */
static rd_var ax_var_elems(const ax_plan *p, const void *x, size_t n, size_t stride)
{
    rd_var_acc a = rd_var_acc_empty();
    for (size_t o = 0; o < n; o++) {
        size_t i = o * stride;
        if (p->skipnan && ax_isnan(p->dtype, x, i))
            continue;
        rd_var_step(&a, ax_value(p->dtype, x, i));
    }
    return rd_var_of_acc(a);
}

/* ---- block units, the columns as SIMD lanes ---- */

/* Order of a sign-and-magnitude float's bits among its type's values
 * (rd_key_f32 and rd_key_h16 in 32 bits; SIGN its sign bit). */
#define AX_FKEY32(u, SIGN) (((u) & (SIGN)) ? ~(uint32_t)(u) & ((SIGN) | ((SIGN) - 1)) : (uint32_t)(u) | (SIGN))

#define AX_KEY_F32(v) AX_FKEY32(ax_bits32(v), 0x80000000u)
#define AX_KEY_H16(v) AX_FKEY32((uint32_t)(v), 0x8000u)
#define AX_KEY_S32(v) ((uint32_t)(int32_t)(v) ^ 0x80000000u)
#define AX_KEY_U32(v) ((uint32_t)(v))
#define AX_KEY_BOOL(v) ((uint32_t)((v) != 0))
#define AX_KEY_F64(v) rd_key_f64(ax_bits64(v))
#define AX_KEY_S64(v) rd_key_signed((rd_i64)(v))
#define AX_KEY_U64(v) ((rd_u64)(v))
#define AX_NONAN(v) 0
#define AX_BOOL_DOUBLE(v) ((double)((v) != 0))

/* The bits of a float32. */
AX_INLINE uint32_t ax_bits32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The bits of a float64. */
AX_INLINE uint64_t ax_bits64(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}

/* Block extrema of types whose order fits 32 bits: per column the minimum
 * of (key << 32 | row) and the maximum of (key << 32 | ~row), so that ties
 * go to the lowest row; a NaN has the smallest key for the minimum and the
 * largest for the maximum, and with skipnan none (~0 and 0, which no
 * element's pair equals). */
#define AX_EXT32_BLOCK(NAME, T, KEY, KEY64, ISNAN)                                           \
    AX_INLINE void NAME##_ext(const T *x, const ax_plan *p, size_t rows, size_t C, size_t nc, \
                              int skipnan, uint64_t j0, rd_extrema *out)                    \
    {                                                                                       \
        uint64_t lo[AX_COLS], hi[AX_COLS];                                                  \
        for (size_t c = 0; c < nc; c++) {                                                   \
            lo[c] = ~(uint64_t)0;                                                           \
            hi[c] = 0;                                                                      \
        }                                                                                   \
        const T *e = x;                                                                     \
        for (uint64_t r = 0; r < rows; r++, e += C)                                         \
            for (size_t c = 0; c < nc; c++) {                                               \
                int nan = ISNAN(e[c]);                                                      \
                uint64_t k = KEY(e[c]);                                                     \
                uint64_t a = ((nan ? 0 : k) << 32) | r;                                     \
                uint64_t b = ((nan ? 0xffffffffu : k) << 32) | (r ^ 0xffffffffu);           \
                a = nan && skipnan ? ~(uint64_t)0 : a;                                      \
                b = nan && skipnan ? 0 : b;                                                 \
                lo[c] = a < lo[c] ? a : lo[c];                                              \
                hi[c] = b > hi[c] ? b : hi[c];                                              \
            }                                                                               \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_extrema o = rd_extrema_empty();                                              \
            if (lo[c] != ~(uint64_t)0) {                                                    \
                T v = x[(lo[c] & 0xffffffffu) * C + c];                                     \
                o.min_key = ISNAN(v) ? RD_NAN_MIN_KEY : KEY64(v);                           \
                o.min_idx = j0 + (lo[c] & 0xffffffffu);                                     \
            }                                                                               \
            if (hi[c] != 0) {                                                               \
                T v = x[(~hi[c] & 0xffffffffu) * C + c];                                    \
                o.max_key = ISNAN(v) ? RD_NAN_MAX_KEY : KEY64(v);                           \
                o.max_idx = j0 + (~hi[c] & 0xffffffffu);                                    \
            }                                                                               \
            out[c] = o;                                                                     \
        }                                                                                   \
    }

/* Block extrema of 64-bit types: per column the running key and row of the
 * minimum and the maximum, replaced only by a strictly better key (the rows
 * come in order, so ties keep the lowest). */
#define AX_EXT64_BLOCK(NAME, T, KEY, ISNAN)                                                  \
    AX_INLINE void NAME##_ext(const T *x, const ax_plan *p, size_t rows, size_t C, size_t nc, \
                              int skipnan, uint64_t j0, rd_extrema *out)                    \
    {                                                                                       \
        uint64_t kl[AX_COLS], kh[AX_COLS], rl[AX_COLS], rh[AX_COLS];                        \
        for (size_t c = 0; c < nc; c++) {                                                   \
            kl[c] = kh[c] = 0;                                                              \
            rl[c] = rh[c] = RD_NO_INDEX;                                                    \
        }                                                                                   \
        const T *e = x;                                                                     \
        for (uint64_t r = 0; r < rows; r++, e += C)                                         \
            for (size_t c = 0; c < nc; c++) {                                               \
                int nan = ISNAN(e[c]), ok = !(nan && skipnan);                              \
                uint64_t k = KEY(e[c]);                                                     \
                uint64_t a = nan ? RD_NAN_MIN_KEY : k, b = nan ? RD_NAN_MAX_KEY : k;        \
                int tl = ok && (rl[c] == RD_NO_INDEX || a < kl[c]);                         \
                int th = ok && (rh[c] == RD_NO_INDEX || b > kh[c]);                         \
                kl[c] = tl ? a : kl[c];                                                     \
                rl[c] = tl ? r : rl[c];                                                     \
                kh[c] = th ? b : kh[c];                                                     \
                rh[c] = th ? r : rh[c];                                                     \
            }                                                                               \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_extrema o = {kl[c], rl[c] == RD_NO_INDEX ? RD_NO_INDEX : j0 + rl[c], kh[c],    \
                            rh[c] == RD_NO_INDEX ? RD_NO_INDEX : j0 + rh[c]};               \
            out[c] = o;                                                                     \
        }                                                                                   \
    }

/* Block variance partials: per column the element step (rd_var_step) from
 * the empty accumulator, lane by lane; with skipnan a NaN leaves its
 * column's accumulator as it is. */
#define AX_VAR_BLOCK(NAME, T, TO_DOUBLE, ISNAN)                                              \
    AX_INLINE void NAME##_var_rows(const T *x, size_t rows, size_t C, size_t nc, int skip,   \
                                   rd_var *out)                                             \
    {                                                                                       \
        double k[AX_COLS], s1[AX_COLS], s2[AX_COLS];                                        \
        uint64_t n[AX_COLS];                                                                \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_var_acc a = rd_var_acc_empty();                                              \
            n[c] = a.n;                                                                     \
            k[c] = a.k;                                                                     \
            s1[c] = a.s1;                                                                   \
            s2[c] = a.s2;                                                                   \
        }                                                                                   \
        const T *e = x;                                                                     \
        for (size_t r = 0; r < rows; r++, e += C)                                           \
            for (size_t c = 0; c < nc; c++) {                                               \
                double v = TO_DOUBLE(e[c]);                                                 \
                int ok = !(skip && ISNAN(e[c]));                                            \
                k[c] = ok && n[c] == 0 ? v : k[c];                                          \
                double d = v - k[c];                                                        \
                double t1 = rd_add(s1[c], d), t2 = rd_add(s2[c], d * d);                    \
                s1[c] = ok ? t1 : s1[c];                                                    \
                s2[c] = ok ? t2 : s2[c];                                                    \
                n[c] += (uint64_t)ok;                                                       \
            }                                                                               \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_var_acc a = {n[c], k[c], s1[c], s2[c]};                                      \
            out[c] = rd_var_of_acc(a);                                                      \
        }                                                                                   \
    }                                                                                       \
    AX_INLINE void NAME##_var(const T *x, size_t rows, size_t C, size_t nc, int skipnan,     \
                              rd_var *out)                                                  \
    {                                                                                       \
        if (skipnan)                                                                        \
            NAME##_var_rows(x, rows, C, nc, 1, out);                                        \
        else                                                                                \
            NAME##_var_rows(x, rows, C, nc, 0, out);                                        \
    }

AX_EXT32_BLOCK(ax_block_f32, float, AX_KEY_F32, AX_KEY_F32, AX_ISNAN_F)
AX_EXT32_BLOCK(ax_block_f16, uint16_t, AX_KEY_H16, AX_KEY_H16, hf_f16_isnan)
AX_EXT32_BLOCK(ax_block_bf16, uint16_t, AX_KEY_H16, AX_KEY_H16, hf_bf16_isnan)
AX_EXT32_BLOCK(ax_block_i8, int8_t, AX_KEY_S32, AX_KEY_S64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_i16, int16_t, AX_KEY_S32, AX_KEY_S64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_i32, int32_t, AX_KEY_S32, AX_KEY_S64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_u8, uint8_t, AX_KEY_U32, AX_KEY_U64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_u16, uint16_t, AX_KEY_U32, AX_KEY_U64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_u32, uint32_t, AX_KEY_U32, AX_KEY_U64, AX_NONAN)
AX_EXT32_BLOCK(ax_block_bool, uint8_t, AX_KEY_BOOL, AX_KEY_BOOL, AX_NONAN)
AX_EXT64_BLOCK(ax_block_f64, double, AX_KEY_F64, AX_ISNAN_F)
AX_EXT64_BLOCK(ax_block_i64, int64_t, AX_KEY_S64, AX_NONAN)
AX_EXT64_BLOCK(ax_block_u64, uint64_t, AX_KEY_U64, AX_NONAN)

AX_VAR_BLOCK(ax_block_i8, int8_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_i16, int16_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_i32, int32_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_i64, int64_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_u8, uint8_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_u16, uint16_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_u32, uint32_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_u64, uint64_t, AX_DOUBLE, AX_NONAN)
AX_VAR_BLOCK(ax_block_bool, uint8_t, AX_BOOL_DOUBLE, AX_NONAN)

/* Exact block sums of integers of at most 32 bits: per column a 64-bit sum
 * (16 rows cannot overflow it) and squares in two 64-bit words with a
 * carry, both sign-extended to 128 bits at the end. */
#define AX_INT32_BLOCK(NAME, T, WIDE)                                                        \
    AX_INLINE void NAME##_isum(const T *x, size_t rows, size_t C, size_t nc, int want_sq,    \
                               rd_moments *m)                                               \
    {                                                                                       \
        int64_t s[AX_COLS];                                                                 \
        uint64_t ql[AX_COLS], qh[AX_COLS];                                                  \
        for (size_t c = 0; c < nc; c++)                                                     \
            s[c] = 0, ql[c] = qh[c] = 0;                                                    \
        const T *e = x;                                                                     \
        for (size_t r = 0; r < rows; r++, e += C)                                           \
            for (size_t c = 0; c < nc; c++) {                                               \
                int64_t v = (int64_t)WIDE(e[c]);                                            \
                uint64_t q = (uint64_t)v * (uint64_t)v;                                     \
                s[c] += v;                                                                  \
                ql[c] += q;                                                                 \
                qh[c] += ql[c] < q;                                                         \
            }                                                                               \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_moments *o = &m[c];                                                          \
            memset(o, 0, sizeof *o);                                                        \
            o->sum_lo = (rd_u64)s[c];                                                       \
            o->sum_hi = s[c] < 0 ? ~(rd_u64)0 : 0;                                          \
            if (want_sq) {                                                                  \
                o->sq_lo = ql[c];                                                           \
                o->sq_hi = qh[c];                                                           \
            }                                                                               \
            o->count = rows;                                                                \
        }                                                                                   \
    }

#define AX_WIDE(v) (v)
#define AX_WIDE_BOOL(v) ((v) != 0)

AX_INT32_BLOCK(ax_block_i8, int8_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_i16, int16_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_i32, int32_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_u8, uint8_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_u16, uint16_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_u32, uint32_t, AX_WIDE)
AX_INT32_BLOCK(ax_block_bool, uint8_t, AX_WIDE_BOOL)

/* Exact block sums of 64-bit integers: per column a 128-bit sum in two
 * words with a carry (SIGNED: the high word takes the sign extension), the
 * squares as doubles from -0.0 in row order. */
#define AX_INT64_BLOCK(NAME, T, SIGNED)                                                      \
    AX_INLINE void NAME##_isum(const T *x, size_t rows, size_t C, size_t nc, int want_sq,    \
                               rd_moments *m)                                               \
    {                                                                                       \
        uint64_t sl[AX_COLS], sh[AX_COLS];                                                  \
        double dq[AX_COLS];                                                                 \
        for (size_t c = 0; c < nc; c++)                                                     \
            sl[c] = sh[c] = 0, dq[c] = -0.0;                                                \
        const T *e = x;                                                                     \
        for (size_t r = 0; r < rows; r++, e += C)                                           \
            for (size_t c = 0; c < nc; c++) {                                               \
                uint64_t v = (uint64_t)e[c];                                                \
                sl[c] += v;                                                                 \
                sh[c] += (SIGNED ? (uint64_t)((int64_t)v >> 63) : 0) + (sl[c] < v);         \
                if (want_sq) {                                                              \
                    double d = (double)e[c];                                                \
                    dq[c] = rd_add(dq[c], d * d);                                           \
                }                                                                           \
            }                                                                               \
        for (size_t c = 0; c < nc; c++) {                                                   \
            rd_moments *o = &m[c];                                                          \
            memset(o, 0, sizeof *o);                                                        \
            o->sum_lo = sl[c];                                                              \
            o->sum_hi = sh[c];                                                              \
            if (want_sq)                                                                    \
                memcpy(&o->sq_lo, &dq[c], sizeof dq[c]);                                    \
            o->count = rows;                                                                \
        }                                                                                   \
    }

AX_INT64_BLOCK(ax_block_i64, int64_t, 1)
AX_INT64_BLOCK(ax_block_u64, uint64_t, 0)

/* Calls NAME_FN(xc as the element type, ARGS...) of integer dtype D's
 * block code; DONE is 0 where D has none (the scalar code then runs). */
#define AX_BY_INT(D, FN, DONE, ...)                                                         \
    switch (D) {                                                                            \
    case DT_I8: ax_block_i8_##FN((const int8_t *)xc, __VA_ARGS__); break;                   \
    case DT_I16: ax_block_i16_##FN((const int16_t *)xc, __VA_ARGS__); break;                \
    case DT_I32: ax_block_i32_##FN((const int32_t *)xc, __VA_ARGS__); break;                \
    case DT_I64: ax_block_i64_##FN((const int64_t *)xc, __VA_ARGS__); break;                \
    case DT_U8: ax_block_u8_##FN((const uint8_t *)xc, __VA_ARGS__); break;                  \
    case DT_U16: ax_block_u16_##FN((const uint16_t *)xc, __VA_ARGS__); break;               \
    case DT_U32: ax_block_u32_##FN((const uint32_t *)xc, __VA_ARGS__); break;               \
    case DT_U64: ax_block_u64_##FN((const uint64_t *)xc, __VA_ARGS__); break;               \
    case DT_BOOL: ax_block_bool_##FN((const uint8_t *)xc, __VA_ARGS__); break;              \
    default: DONE = 0; break;                                                               \
    }

/* The parts of columns [c0, c0 + nc) of one block unit of `rows` rows at
 * x (row stride C), extrema indices from j0: lane-wise over the columns, or
 * one element at a time (scalar, the reference). */
AX_INLINE void ax_cpu_block(const ax_plan *p, const void *x, size_t rows, size_t c0, size_t nc,
                            uint64_t j0, int scalar, rd_moments *m, rd_extrema *e, rd_var *v)
{
    size_t C = (size_t)p->C, sz = dt_size(p->dtype);
    int want_sq = (p->ops & RD_OP_SUMSQ) != 0, sk = p->skipnan, done = 1;
    const char *xc = (const char *)x + c0 * sz;
    if (m) {
        switch (p->dtype) {
        case DT_F32: ax_block_f32_cols((const float *)xc, rows, C, nc, sk, want_sq, m); break;
        case DT_F64: ax_block_f64_cols((const double *)xc, rows, C, nc, sk, want_sq, m); break;
        case DT_F16: ax_block_f16_cols((const uint16_t *)xc, rows, C, nc, sk, want_sq, m); break;
        case DT_BF16: ax_block_bf16_cols((const uint16_t *)xc, rows, C, nc, sk, want_sq, m); break;
        default:
            if (scalar)
                ax_block_int(p, xc, rows, nc, want_sq, m);
            else
                AX_BY_INT(p->dtype, isum, done, rows, C, nc, want_sq, m)
            break;
        }
    }
    done = 1;
    if (e && !scalar)
        AX_BY_INT(p->dtype, ext, done, p, rows, C, nc, sk, j0, e)
    for (size_t c = 0; e && (scalar || !done) && c < nc; c++)
        e[c] = ax_extrema(p, xc + c * sz, rows, C, j0);
    done = 1;
    if (v && !scalar)
        AX_BY_INT(p->dtype, var, done, rows, C, nc, sk, v)
    for (size_t c = 0; v && (scalar || !done) && c < nc; c++)
        v[c] = ax_var_elems(p, xc + c * sz, rows, C);
}

/* The sum of one sub-tile's accumulators (RD_LANES lanes of v) with the
 * tile's other sub-tiles empty, where only acc[0 .. n) (n > 0) were reached
 * by an element: rd_cpu_tiles' fold for a tile of at most RD_SUBTILE
 * elements. The accumulators past n hold -0.0 up to the end of their lane,
 * and are not read beyond it: every addition the full trees would make with
 * a lane or sub-tile that no element reached adds -0.0, the exact identity,
 * so the lanes past those reached are skipped and the sub-tile's sum is the
 * tile's. */
AX_INLINE double ax_short_fold(double *acc, unsigned v, size_t n)
{
    double lanes[RD_LANES];
    unsigned used = (unsigned)((n + v - 1) / v); /* lanes reached */
    for (unsigned l = 0; l < used; l++) {
        rd_lane_tree(acc + l * v, v);
        lanes[l] = acc[l * v];
    }
    for (unsigned h = RD_LANES / 2; h >= 1; h /= 2) { /* rd_subtile_tree, lanes [0, used) */
        for (unsigned l = 0; l < h && l + h < used; l++)
            lanes[l] = rd_add(lanes[l], lanes[l + h]);
        used = used < h ? used : h;
    }
    return lanes[0];
}

/* Float tile of at most RD_SUBTILE elements: sums and squares as
 * rd_cpu_tiles gives them (element o into accumulator o % (RD_LANES * V)
 * from -0.0 in order, then ax_short_fold), without its whole-tile set-up;
 * extrema by the block code over one column (a tile's extrema do not depend
 * on the order). NAME_short_vars: the variance partials of nr <= VL_W whole
 * runs of n <= RD_SUBTILE elements each, run r at x + r * n, side by side
 * as the lanes of vl_merge, in rd_var_tile's order for a tile that is one
 * sub-tile (the warps tree passes the empty others over): element o into
 * accumulator o % ROW by the element step, each lane's V accumulators by
 * its lane tree, the lanes by the sub-tile tree; accumulators that no
 * element reaches are left out of both (every run has the same n). */
#define AX_SHORT_TILE(NAME, T, TO_DOUBLE, ISNAN)                                             \
    AX_INLINE void NAME##_short(const ax_plan *p, const T *x, size_t n, uint64_t off,       \
                                rd_moments *m, rd_extrema *e)                               \
    {                                                                                       \
        enum { V = RD_VEC(sizeof(T)), ROW = RD_LANES * RD_VEC(sizeof(T)) };                \
        int want_sq = (p->ops & RD_OP_SUMSQ) != 0, sk = p->skipnan;                         \
        if (m) {                                                                            \
            double sa[ROW], sq[ROW];                                                        \
            uint64_t cnt = 0;                                                               \
            size_t na = n < ROW ? n : ROW, nl = (na + V - 1) / V * V; /* reached, lanes */  \
            for (size_t j = 0; j < nl; j++)                                                 \
                sa[j] = sq[j] = -0.0;                                                       \
            for (size_t o = 0; o < n; o++) {                                                \
                int keep = !(sk && ISNAN(x[o]));                                            \
                double d = TO_DOUBLE(x[o]);                                                 \
                sa[o % ROW] = rd_add(sa[o % ROW], keep ? d : -0.0);                         \
                sq[o % ROW] = rd_add(sq[o % ROW], keep ? d * d : -0.0);                     \
                cnt += (uint64_t)keep;                                                      \
            }                                                                               \
            double sum = na ? ax_short_fold(sa, V, na) : -0.0;                              \
            double q = want_sq ? (na ? ax_short_fold(sq, V, na) : -0.0) : 0.0;              \
            rd_moments r = {0}; /* built, then stored at once */                            \
            memcpy(&r.sum_lo, &sum, sizeof sum);                                            \
            if (want_sq)                                                                    \
                memcpy(&r.sq_lo, &q, sizeof q);                                             \
            r.count = cnt;                                                                  \
            *m = r;                                                                         \
        }                                                                                   \
        if (e)                                                                              \
            NAME##_ext(x, p, n, 1, 1, sk, off, e);                                          \
    }                                                                                       \
    AX_INLINE void NAME##_short_vars(const T *x, size_t n, size_t nr, int skip, rd_var *out) \
    {                                                                                       \
        enum { V = RD_VEC(sizeof(T)), ROW = RD_LANES * RD_VEC(sizeof(T)), L = VL_W };      \
        size_t na = n < ROW ? n : ROW;                                                      \
        uint64_t cn[ROW * L];                                                               \
        double k[ROW * L], s1[ROW * L], s1l[ROW * L], s2[ROW * L], s2l[ROW * L];            \
        for (size_t i = 0; i < na * L; i++) {                                               \
            cn[i] = 0;                                                                      \
            k[i] = s1[i] = s1l[i] = s2[i] = s2l[i] = 0.0;                                   \
        }                                                                                   \
        for (size_t o = 0; o < n; o++) {                                                    \
            size_t j = o % ROW * L;                                                         \
            for (size_t r = 0; r < L; r++) {                                                \
                T v = x[(r < nr ? r : 0) * n + o];                                          \
                double d = TO_DOUBLE(v);                                                    \
                int keep = !(skip && ISNAN(v));                                             \
                k[j + r] = keep && cn[j + r] == 0 ? d : k[j + r];                           \
                double dv = d - k[j + r];                                                   \
                double t1 = rd_add(s1[j + r], dv), t2 = rd_add(s2[j + r], dv * dv);         \
                s1[j + r] = keep ? t1 : s1[j + r];                                          \
                s2[j + r] = keep ? t2 : s2[j + r];                                          \
                cn[j + r] += (uint64_t)keep;                                                \
            }                                                                               \
        }                                                                                   \
        vl_ref a = {cn, k, s1, s1l, s2, s2l};                                               \
        for (size_t h = 1; h < V; h *= 2)                                                   \
            for (size_t j = 0; j + h < na; j += 2 * h)                                      \
                vl_merge(a, j * L, a, (j + h) * L, L);                                      \
        for (size_t h = RD_LANES / 2; h >= 1; h /= 2)                                       \
            for (size_t ln = 0; ln < h && (ln + h) * V < na; ln++)                          \
                vl_merge(a, ln * V * L, a, (ln + h) * V * L, L);                            \
        for (size_t r = 0; r < nr; r++)                                                     \
            out[r] = vl_get(a, r);                                                          \
    }

AX_SHORT_TILE(ax_block_f32, float, AX_DOUBLE, AX_ISNAN_F)
AX_SHORT_TILE(ax_block_f64, double, AX_DOUBLE, AX_ISNAN_F)
AX_SHORT_TILE(ax_block_f16, uint16_t, AX_F16_DOUBLE, hf_f16_isnan)
AX_SHORT_TILE(ax_block_bf16, uint16_t, AX_BF16_DOUBLE, hf_bf16_isnan)

/* The part of a tile unit of n <= RD_SUBTILE float elements: moments and
 * extrema by the short-tile code, the variance by the tile code's; 0 where
 * it does not apply. */
AX_INLINE int ax_cpu_short_tile(const ax_plan *p, const void *x, size_t n, uint64_t off,
                                rd_moments *m, rd_extrema *e, rd_var *v)
{
    if (n > RD_SUBTILE)
        return 0;
    switch (p->dtype) {
    case DT_F32: ax_block_f32_short(p, x, n, off, m, e); break;
    case DT_F64: ax_block_f64_short(p, x, n, off, m, e); break;
    case DT_F16: ax_block_f16_short(p, x, n, off, m, e); break;
    case DT_BF16: ax_block_bf16_short(p, x, n, off, m, e); break;
    default: return 0;
    }
    if (v)
        rd_cpu_var_tiles(x, n, p->dtype, p->skipnan, 0, 1, v);
    return 1;
}

/* Calls NAME_short_vars over entries ent[0 .. n) (whole runs of T elements,
 * one after the other from element `first` of x, of type TY) VL_W at a
 * time into the variance parts from part `at` on, skipnan SK a constant. */
#define AX_SHORT_VARS(NAME, TY, SK)                                                          \
    for (size_t i = 0; i < n; i += VL_W)                                                    \
        NAME##_short_vars((const TY *)x + first + i * p->T, (size_t)p->T,                   \
                          n - i < VL_W ? n - i : VL_W, SK, ov + at + i)

/* Runs up to this long have their variance VL_W runs at a time: below it
 * the tile code's set-up and merges per run cost more than the runs' lanes;
 * above it its full rows (contiguous, where the lanes load elements a run
 * apart) win (float32 runs of 512: 3.5 against 4.3 ns an element). */
#define AX_SHORT_VAR_RUN 256u

/* The variance parts of entries ent[0 .. n) of a float plan whose runs are
 * at most AX_SHORT_VAR_RUN long, VL_W runs at a time; 0 where the plan is
 * not one (the entries' code then gives them). */
AX_INLINE int ax_cpu_short_vars(const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0,
                                const ax_entry *ent, size_t n, size_t at, void *out)
{
    if (p->unit != AX_UNIT_TILE || p->T > AX_SHORT_VAR_RUN || !l->use_v || !n)
        return 0;
    rd_var *ov = (rd_var *)((char *)out + l->var_at);
    uint64_t us, un;
    ax_unit_span(p, ent[0].u, &us, &un);
    size_t first = (size_t)(us - e0);
    switch (p->dtype | (p->skipnan ? 0x100 : 0)) {
    case DT_F32: AX_SHORT_VARS(ax_block_f32, float, 0); return 1;
    case DT_F64: AX_SHORT_VARS(ax_block_f64, double, 0); return 1;
    case DT_F16: AX_SHORT_VARS(ax_block_f16, uint16_t, 0); return 1;
    case DT_BF16: AX_SHORT_VARS(ax_block_bf16, uint16_t, 0); return 1;
    case DT_F32 | 0x100: AX_SHORT_VARS(ax_block_f32, float, 1); return 1;
    case DT_F64 | 0x100: AX_SHORT_VARS(ax_block_f64, double, 1); return 1;
    case DT_F16 | 0x100: AX_SHORT_VARS(ax_block_f16, uint16_t, 1); return 1;
    case DT_BF16 | 0x100: AX_SHORT_VARS(ax_block_bf16, uint16_t, 1); return 1;
    default: return 0;
    }
}

/* The part of one tile unit: n elements at x, the first at offset off of
 * its run. */
static void ax_cpu_tile(const ax_plan *p, const void *x, size_t n, uint64_t off,
                        rd_moments *m, rd_extrema *e, rd_var *v)
{
    int want_sq = (p->ops & RD_OP_SUMSQ) != 0;
    if (m || e) {
        rd_moments mm;
        rd_extrema ee;
        rd_cpu_tiles(x, n, off, p->dtype, p->skipnan, want_sq, 0, 1, m ? &mm : NULL,
                     e ? &ee : NULL);
        if (m) {
            if (!want_sq)
                mm.sq_lo = mm.sq_hi = 0;
            *m = mm;
        }
        if (e)
            *e = ee;
    }
    if (v)
        rd_cpu_var_tiles(x, n, p->dtype, p->skipnan, 0, 1, v);
}

/* Pointers to part i of a buffer's extrema and variance arrays (NULL where
 * not needed). */
static void ax_parts_at(const ax_layout *l, void *out, size_t i, rd_extrema **e, rd_var **v)
{
    char *b = out;
    *e = l->use_e ? (rd_extrema *)(b + l->extrema_at) + i : NULL;
    *v = l->use_v ? (rd_var *)(b + l->var_at) + i : NULL;
}

/* Stores n moments records as parts i .. i + n of the buffer's sum, square
 * and count arrays (only the fields the layout holds). */
static void ax_put_moments(const ax_layout *l, void *out, size_t i, const rd_moments *m,
                           size_t n)
{
    char *b = out;
    for (size_t k = 0; k < n; k++) {
        if (l->use_sum) /* sum_lo then sum_hi: a double's bits, or 128 bits low word first */
            memcpy(b + l->sum_at + (i + k) * l->sum_size, &m[k].sum_lo, l->sum_size);
        if (l->use_sq)
            memcpy(b + l->sq_at + (i + k) * l->sq_size, &m[k].sq_lo, l->sq_size);
        if (l->use_cnt)
            memcpy(b + l->count_at + (i + k) * sizeof(uint64_t), &m[k].count, sizeof(uint64_t));
    }
}

/* The 8 or 16 bytes at p (a sum or square part) as one or two words. */
static inline void ax_get_words(rd_u64 *w, const char *p, size_t bytes)
{
    memcpy(&w[0], p, 8);
    if (bytes > 8)
        memcpy(&w[1], p + 8, 8);
}

/* Part i's moments from the buffer's arrays (zero where not held); its
 * count is cnt where the buffer holds none. */
static rd_moments ax_get_moments(const ax_layout *l, const void *out, size_t i, uint64_t cnt)
{
    const char *b = out;
    rd_u64 w[4] = {0, 0, 0, 0}; /* sum_lo, sum_hi, sq_lo, sq_hi: 8-byte words, in registers */
    if (l->use_sum)
        ax_get_words(w, b + l->sum_at + i * l->sum_size, l->sum_size);
    if (l->use_sq)
        ax_get_words(w + 2, b + l->sq_at + i * l->sq_size, l->sq_size);
    if (l->use_cnt)
        memcpy(&cnt, b + l->count_at + i * sizeof(uint64_t), sizeof(uint64_t));
    return (rd_moments){w[0], w[1], w[2], w[3], cnt};
}

/* The elements of entry en (per column for blocks). */
static uint64_t ax_entry_elems(const ax_plan *p, const ax_entry *en)
{
    if (p->unit == AX_UNIT_TILE) {
        uint64_t first = en->u % p->tiles_per_run * RD_TILE, end = first + en->n * RD_TILE;
        return (end < p->T ? end : p->T) - first;
    }
    uint64_t first = en->u % p->blocks_per_sweep * RD_AXIS_BLOCK;
    uint64_t end = first + en->n * RD_AXIS_BLOCK;
    return (end < p->L ? end : p->L) - first;
}

/* Adds a sum (left) to the one after it (right), in place: a double's bits
 * in lo (dbl) by rd_add(left, right), else an exact 128-bit integer. */
AX_INLINE void ax_merge_sum(int dbl, const rd_u64 *llo, const rd_u64 *lhi, rd_u64 *rlo,
                            rd_u64 *rhi)
{
    if (dbl) {
        double a, b;
        memcpy(&a, llo, 8);
        memcpy(&b, rlo, 8);
        b = rd_add(a, b);
        memcpy(rlo, &b, 8);
    } else {
        rd_u128 v = (((rd_u128)*lhi << 64) | *llo) + (((rd_u128)*rhi << 64) | *rlo);
        *rlo = (rd_u64)v;
        *rhi = (rd_u64)(v >> 64);
    }
}

/* rd_var_merge(a, b) without branches, by vl_merge_lane (a part counts
 * far fewer than 2^52 elements), so that a loop over columns vectorizes. */
AX_INLINE rd_var ax_var_merge_lane(rd_var a, rd_var b)
{
    vl_merge_lane(&a.n, &a.k, &a.s1.hi, &a.s1.lo, &a.s2.hi, &a.s2.lo, b.n, b.k, b.s1.hi,
                  b.s1.lo, b.s2.hi, b.s2.lo);
    return a;
}

/* Merges n <= AX_COLS variance partials l into r (r = rd_var_merge(l, r))
 * lane-wise: the parts copied into one array per field, merged by
 * ax_var_merge_lane over all AX_COLS lanes, the n results copied back. */
AX_INLINE void ax_var_merge_cols(const rd_var *l, rd_var *r, size_t n)
{
    rd_var a[AX_COLS], b[AX_COLS];
    uint64_t an[AX_COLS], bn[AX_COLS];
    double f[10][AX_COLS];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    memcpy(a, l, n * sizeof *l);
    memcpy(b, r, n * sizeof *r);
    for (size_t c = 0; c < AX_COLS; c++) {
        an[c] = a[c].n, bn[c] = b[c].n;
        f[0][c] = a[c].k, f[1][c] = a[c].s1.hi, f[2][c] = a[c].s1.lo, f[3][c] = a[c].s2.hi;
        f[4][c] = a[c].s2.lo, f[5][c] = b[c].k, f[6][c] = b[c].s1.hi, f[7][c] = b[c].s1.lo;
        f[8][c] = b[c].s2.hi, f[9][c] = b[c].s2.lo;
    }
    for (size_t c = 0; c < AX_COLS; c++) {
        rd_var x = {an[c], f[0][c], {f[1][c], f[2][c]}, {f[3][c], f[4][c]}};
        rd_var y = {bn[c], f[5][c], {f[6][c], f[7][c]}, {f[8][c], f[9][c]}};
        rd_var z = ax_var_merge_lane(x, y);
        an[c] = z.n, f[0][c] = z.k, f[1][c] = z.s1.hi, f[2][c] = z.s1.lo;
        f[3][c] = z.s2.hi, f[4][c] = z.s2.lo;
    }
    for (size_t c = 0; c < n; c++) {
        r[c].n = an[c], r[c].k = f[0][c], r[c].s1.hi = f[1][c], r[c].s1.lo = f[2][c];
        r[c].s2.hi = f[3][c], r[c].s2.lo = f[4][c];
    }
}

/* rd_min_update (want_max 0) or rd_max_update (1) of (*mk, *mi) by (k, i)
 * without branches. */
AX_INLINE void ax_ext_update_lane(rd_u64 *mk, rd_u64 *mi, rd_u64 k, rd_u64 i, int want_max)
{
    int better = want_max ? k > *mk : k < *mk;
    int take = i != RD_NO_INDEX && (*mi == RD_NO_INDEX || better || (k == *mk && i < *mi));
    *mk = take ? k : *mk;
    *mi = take ? i : *mi;
}

/* Merges n <= AX_COLS extrema l into r (rd_extrema_merge(r, l)) lane-wise,
 * through one array per field as ax_var_merge_cols. */
AX_INLINE void ax_ext_merge_cols(const rd_extrema *l, rd_extrema *r, size_t n)
{
    rd_u64 f[8][AX_COLS];
    memset(f, 0, sizeof f);
    for (size_t c = 0; c < n; c++) {
        f[0][c] = r[c].min_key, f[1][c] = r[c].min_idx, f[2][c] = r[c].max_key;
        f[3][c] = r[c].max_idx, f[4][c] = l[c].min_key, f[5][c] = l[c].min_idx;
        f[6][c] = l[c].max_key, f[7][c] = l[c].max_idx;
    }
    for (size_t c = 0; c < AX_COLS; c++) {
        ax_ext_update_lane(&f[0][c], &f[1][c], f[4][c], f[5][c], 0);
        ax_ext_update_lane(&f[2][c], &f[3][c], f[6][c], f[7][c], 1);
    }
    for (size_t c = 0; c < n; c++) {
        r[c].min_key = f[0][c], r[c].min_idx = f[1][c];
        r[c].max_key = f[2][c], r[c].max_idx = f[3][c];
    }
}

/* Merges n parts (right) with the parts before them (left), into the
 * right ones: sums rd_add(left, right), counts and exact sums added,
 * extrema merged, variance partials rd_var_merge(left, right) (lane-wise
 * but for the scalar reference). */
AX_INLINE void ax_merge_parts(const ax_plan *p, size_t n, int scalar, const rd_moments *ml,
                              const rd_extrema *el, const rd_var *vl, rd_moments *mr,
                              rd_extrema *er, rd_var *vr)
{
    int fl = dt_is_float(p->dtype), sqf = ax_sq_is_float(p->dtype);
    for (size_t i = 0; mr && i < n; i++) {
        ax_merge_sum(fl, &ml[i].sum_lo, &ml[i].sum_hi, &mr[i].sum_lo, &mr[i].sum_hi);
        ax_merge_sum(sqf, &ml[i].sq_lo, &ml[i].sq_hi, &mr[i].sq_lo, &mr[i].sq_hi);
        mr[i].count += ml[i].count;
    }
    if (!scalar && n <= AX_COLS) {
        if (er)
            ax_ext_merge_cols(el, er, n);
        if (vr)
            ax_var_merge_cols(vl, vr, n);
        return;
    }
    for (size_t i = 0; er && i < n; i++)
        rd_extrema_merge(&er[i], &el[i]);
    for (size_t i = 0; vr && i < n; i++)
        vr[i] = rd_var_merge(vl[i], vr[i]);
}

/* ---- float block entries: one pass down each unit, merges in place ---- */

/* One level of a block entry's binary counter for AX_COLS columns (lanes):
 * the unit tree's sums, squares and variance partials (vl_ref's fields). */
typedef struct {
    double sum[AX_COLS], sq[AX_COLS];
    uint64_t vn[AX_COLS];
    double vk[AX_COLS], v1h[AX_COLS], v1l[AX_COLS], v2h[AX_COLS], v2l[AX_COLS];
} ax_level;

/* An entry's extrema and counts are order-free: one running value per
 * lane over all its rows, rows counted from its first; AX_ROW_NONE: no
 * element counted. */
#define AX_ROW_NONE 0xffffffffu

/* Merges level b (right) into a (left) lane by lane, as ax_merge_parts:
 * sums a = rd_add(a, b) (WS: sums, WQ: squares), variance partials
 * rd_var_merge(a, b) (WV; FULL: no partial of either is empty, which
 * spares the choice of the empty sides; where every lane's merge is plain,
 * that arithmetic alone). */
AX_INLINE void ax_level_merge(ax_level *restrict a, const ax_level *restrict b, int ws, int wq,
                               int wv, int full)
{
    for (size_t c = 0; ws && c < AX_COLS; c++)
        a->sum[c] = rd_add(a->sum[c], b->sum[c]);
    for (size_t c = 0; wq && c < AX_COLS; c++)
        a->sq[c] = rd_add(a->sq[c], b->sq[c]);
    if (wv && vl_all_plain(a->vn, b->vn, AX_COLS)) {
        for (size_t c = 0; c < AX_COLS; c++)
            vl_merge_plain(&a->vn[c], &a->vk[c], &a->v1h[c], &a->v1l[c], &a->v2h[c], &a->v2l[c],
                           b->vn[c], b->vk[c], b->v1h[c], b->v2h[c]);
        return;
    }
    for (size_t c = 0; wv && full && c < AX_COLS; c++)
        vl_merge_full(&a->vn[c], &a->vk[c], &a->v1h[c], &a->v1l[c], &a->v2h[c], &a->v2l[c],
                      b->vn[c], b->vk[c], b->v1h[c], b->v1l[c], b->v2h[c], b->v2l[c]);
    for (size_t c = 0; wv && !full && c < AX_COLS; c++)
        vl_merge_lane(&a->vn[c], &a->vk[c], &a->v1h[c], &a->v1l[c], &a->v2h[c], &a->v2l[c],
                      b->vn[c], b->vk[c], b->v1h[c], b->v1l[c], b->v2h[c], b->v2l[c]);
}

/* Defines NAME_unit: one pass down one block unit's `rows` rows at x (row
 * stride C, AX_COLS lanes) of a float type T with every accumulator in
 * registers: with WS the sums from -0.0 in row order into o->sum (a skipped
 * NaN adds -0.0) and, with skipnan, the kept elements counted into cnt;
 * with WV the variance partial by the element step from the empty
 * accumulator (without skipnan the first row sets the shifts); with WE the
 * unit's extrema of keys KT (a NaN's key 0 for the minimum and all ones for
 * the maximum, none with skipnan, which no other element's reaches) into
 * the entry's running ones where strictly beyond them, the row noted the
 * unit's first (row0), which NAME_first_row narrows to the element's once
 * the entry's units are all seen, where argmin or argmax is wanted: the
 * loop keeps no row per element, and the earliest unit that reaches the
 * extremum holds the lowest row.
 * NAME_rows is that loop down the rows, into the caller's accumulators;
 * NAME_note takes a pass's extrema lo, hi into the entry's running ones.
 * NAME_group: four whole units from x without skipnan, their sums and
 * variance partials merged in registers by the unit tree's two lowest
 * levels (NAME_sub: one unit's accumulators; NAME_pair: a merge, which
 * partials of at most RD_VAR_PLAIN elements make plain), stored as the
 * level-2 part of the counter: the same bits as four NAME_unit passes and
 * their merges (extrema noted unit by unit), without their stores and loads.
 * NAME_first_row: the first row from r0 whose key is `key`. NAME_unit_sq:
 * the squares' sums likewise; NAME_unit_count: the kept elements alone.
 * WS, WE, WV, SKIP are constants where they are inlined. */
#define AX_UNIT_PASSES(NAME, T, TO_DOUBLE, ISNAN, KEY, KT)                                   \
    static uint32_t NAME##_first_row(const T *x, size_t C, uint32_t r0, uint32_t r1, KT key, \
                                     int want_max, int skip)                                \
    {                                                                                       \
        KT nan_key = (KT)(want_max == skip ? 0 : ~(KT)0);                                   \
        uint32_t r = r0;                                                                    \
        while (r + 1 < r1 && (ISNAN(x[r * C]) ? nan_key : (KT)KEY(x[r * C])) != key)        \
            r++;                                                                            \
        return r;                                                                           \
    }                                                                                       \
    AX_INLINE void NAME##_rows(const T *x, size_t rows, size_t C, size_t nl, int ws, int we, \
                               int wv, int skip, double *restrict sa, uint64_t *restrict kept, \
                               double *restrict vk, double *restrict s1, double *restrict s2, \
                               uint64_t *restrict vn, KT *restrict lo, KT *restrict hi)     \
    {                                                                                       \
        const T *e = x;                                                                     \
        for (uint32_t r = 0; r < rows; r++, e += C)                                         \
            for (size_t c = 0; c < nl; c++) {                                               \
                T v = e[c];                                                                 \
                double d = TO_DOUBLE(v);                                                    \
                int nan = ISNAN(v), keep = !(skip && nan);                                  \
                if (ws) {                                                                   \
                    sa[c] = rd_add(sa[c], keep ? d : -0.0);                                 \
                    if (skip)                                                               \
                        kept[c] += (uint64_t)keep;                                          \
                }                                                                           \
                if (wv && !skip) {                                                          \
                    double dv = d - vk[c];                                                  \
                    s1[c] = rd_add(s1[c], dv);                                              \
                    s2[c] = rd_add(s2[c], dv * dv);                                         \
                } else if (wv) {                                                            \
                    vk[c] = keep && vn[c] == 0 ? d : vk[c];                                 \
                    double dv = d - vk[c];                                                  \
                    double t1 = rd_add(s1[c], dv), t2 = rd_add(s2[c], dv * dv);             \
                    s1[c] = keep ? t1 : s1[c];                                              \
                    s2[c] = keep ? t2 : s2[c];                                              \
                    vn[c] += (uint64_t)keep;                                                \
                }                                                                           \
                if (we) {                                                                   \
                    KT k = KEY(v);                                                          \
                    KT a = nan ? (skip ? ~(KT)0 : 0) : k, b = nan ? (skip ? 0 : ~(KT)0) : k; \
                    lo[c] = a < lo[c] ? a : lo[c];                                          \
                    hi[c] = b > hi[c] ? b : hi[c];                                          \
                }                                                                           \
            }                                                                               \
    }                                                                                       \
    AX_INLINE void NAME##_note(size_t nl, uint32_t row0, const KT *lo, const KT *hi,        \
                               KT *restrict mn, uint32_t *restrict rn, KT *restrict mx,     \
                               uint32_t *restrict rx)                                       \
    {                                                                                       \
        for (size_t c = 0; c < nl; c++) { /* masks, not branches: it vectorizes */          \
            rn[c] ^= (rn[c] ^ row0) & -(uint32_t)(lo[c] < mn[c]);                           \
            rx[c] ^= (rx[c] ^ row0) & -(uint32_t)(hi[c] > mx[c]);                           \
            mn[c] = lo[c], mx[c] = hi[c];                                                   \
        }                                                                                   \
    }                                                                                       \
    AX_INLINE void NAME##_unit(const T *x, size_t rows, size_t C, size_t nl, int ws,        \
                               int we, int wv, int skip, uint32_t row0, ax_level *o,        \
                               size_t h, uint64_t *restrict cnt, KT *restrict mn,           \
                               uint32_t *restrict rn, KT *restrict mx, uint32_t *restrict rx) \
    {                                                                                       \
        double sa[AX_COLS], vk[AX_COLS], s1[AX_COLS], s2[AX_COLS];                          \
        uint64_t kept[AX_COLS], vn[AX_COLS];                                                \
        KT lo[AX_COLS], hi[AX_COLS];                                                        \
        for (size_t c = 0; c < nl; c++) {                                                   \
            sa[c] = -0.0;                                                                   \
            vk[c] = s1[c] = s2[c] = 0.0;                                                    \
            kept[c] = vn[c] = 0;                                                            \
            lo[c] = mn[c], hi[c] = mx[c];                                                   \
        }                                                                                   \
        if (wv && !skip && rows)                                                            \
            for (size_t c = 0; c < nl; c++)                                                 \
                vk[c] = TO_DOUBLE(x[c]);                                                    \
        NAME##_rows(x, rows, C, nl, ws, we, wv, skip, sa, kept, vk, s1, s2, vn, lo, hi);    \
        for (size_t c = 0; ws && c < nl; c++) {                                             \
            o->sum[h + c] = sa[c];                                                          \
            if (skip)                                                                       \
                cnt[c] += kept[c];                                                          \
        }                                                                                   \
        for (size_t c = 0; wv && c < nl; c++) {                                             \
            o->vn[h + c] = skip ? vn[c] : rows;                                             \
            o->vk[h + c] = vk[c];                                                           \
            o->v1h[h + c] = s1[c];                                                          \
            o->v2h[h + c] = s2[c];                                                          \
            o->v1l[h + c] = o->v2l[h + c] = 0.0;                                            \
        }                                                                                   \
        if (we)                                                                             \
            NAME##_note(nl, row0, lo, hi, mn, rn, mx, rx);                                  \
    }                                                                                       \
    AX_INLINE void NAME##_sub(const T *x, size_t C, size_t nl, int we, double *restrict sa,   \
                              double *restrict vk, double *restrict s1, double *restrict s2, \
                              KT *restrict lo, KT *restrict hi)                             \
    {                                                                                       \
        for (size_t c = 0; c < nl; c++) {                                                   \
            sa[c] = -0.0;                                                                   \
            s1[c] = s2[c] = 0.0;                                                            \
            vk[c] = TO_DOUBLE(x[c]);                                                        \
        }                                                                                   \
        NAME##_rows(x, RD_AXIS_BLOCK, C, nl, 1, we, 1, 0, sa, NULL, vk, s1, s2, NULL, lo, hi); \
    }                                                                                       \
    AX_INLINE void NAME##_pair(size_t nl, uint64_t nb, double *restrict sa, double *restrict vk, \
                               double *restrict s1, double *restrict s2, const double *sb,  \
                               const double *kb, const double *b1, const double *b2)        \
    {                                                                                       \
        for (size_t c = 0; c < nl; c++) {                                                   \
            uint64_t n = nb;                                                                \
            double l1, l2;                                                                  \
            sa[c] = rd_add(sa[c], sb[c]);                                                   \
            vl_merge_plain(&n, &vk[c], &s1[c], &l1, &s2[c], &l2, nb, kb[c], b1[c], b2[c]);  \
        }                                                                                   \
    }                                                                                       \
    AX_INLINE void NAME##_group(const T *x, size_t C, size_t nl, int we, uint32_t row0,      \
                                ax_level *o, size_t h, KT *restrict mn, uint32_t *restrict rn, \
                                KT *restrict mx, uint32_t *restrict rx)                     \
    {                                                                                       \
        double as[AX_COLS], ak[AX_COLS], a1[AX_COLS], a2[AX_COLS];                          \
        double bs[AX_COLS], bk[AX_COLS], b1[AX_COLS], b2[AX_COLS];                          \
        double cs[AX_COLS], ck[AX_COLS], c1[AX_COLS], c2[AX_COLS];                          \
        KT lo[AX_COLS], hi[AX_COLS];                                                        \
        const size_t q = (size_t)RD_AXIS_BLOCK * C;                                         \
        for (size_t c = 0; c < nl; c++)                                                     \
            lo[c] = mn[c], hi[c] = mx[c];                                                   \
        NAME##_sub(x, C, nl, we, as, ak, a1, a2, lo, hi);                                   \
        if (we)                                                                             \
            NAME##_note(nl, row0, lo, hi, mn, rn, mx, rx);                                  \
        NAME##_sub(x + q, C, nl, we, bs, bk, b1, b2, lo, hi);                               \
        if (we)                                                                             \
            NAME##_note(nl, row0 + RD_AXIS_BLOCK, lo, hi, mn, rn, mx, rx);                  \
        NAME##_pair(nl, RD_AXIS_BLOCK, as, ak, a1, a2, bs, bk, b1, b2);                     \
        NAME##_sub(x + 2 * q, C, nl, we, bs, bk, b1, b2, lo, hi);                           \
        if (we)                                                                             \
            NAME##_note(nl, row0 + 2 * RD_AXIS_BLOCK, lo, hi, mn, rn, mx, rx);              \
        NAME##_sub(x + 3 * q, C, nl, we, cs, ck, c1, c2, lo, hi);                           \
        if (we)                                                                             \
            NAME##_note(nl, row0 + 3 * RD_AXIS_BLOCK, lo, hi, mn, rn, mx, rx);              \
        NAME##_pair(nl, RD_AXIS_BLOCK, bs, bk, b1, b2, cs, ck, c1, c2);                     \
        NAME##_pair(nl, 2 * RD_AXIS_BLOCK, as, ak, a1, a2, bs, bk, b1, b2);                 \
        for (size_t c = 0; c < nl; c++) {                                                   \
            o->sum[h + c] = as[c];                                                          \
            o->vn[h + c] = 4 * RD_AXIS_BLOCK;                                               \
            o->vk[h + c] = ak[c];                                                           \
            o->v1h[h + c] = a1[c];                                                          \
            o->v2h[h + c] = a2[c];                                                          \
            o->v1l[h + c] = o->v2l[h + c] = 0.0;                                            \
        }                                                                                   \
    }                                                                                       \
    AX_INLINE void NAME##_unit_sq(const T *x, size_t rows, size_t C, int skip, double *out)  \
    {                                                                                       \
        double s[AX_COLS];                                                                  \
        for (size_t c = 0; c < AX_COLS; c++)                                                \
            s[c] = -0.0;                                                                    \
        const T *e = x;                                                                     \
        for (size_t r = 0; r < rows; r++, e += C)                                           \
            for (size_t c = 0; c < AX_COLS; c++) {                                          \
                double d = TO_DOUBLE(e[c]);                                                 \
                s[c] = rd_add(s[c], skip && ISNAN(e[c]) ? -0.0 : d * d);                    \
            }                                                                               \
        for (size_t c = 0; c < AX_COLS; c++)                                                \
            out[c] = s[c];                                                                  \
    }                                                                                       \
    AX_INLINE void NAME##_unit_count(const T *x, size_t rows, size_t C, uint64_t *cnt)      \
    {                                                                                       \
        const T *e = x;                                                                     \
        for (size_t r = 0; r < rows; r++, e += C)                                           \
            for (size_t c = 0; c < AX_COLS; c++)                                            \
                cnt[c] += (uint64_t)!ISNAN(e[c]);                                           \
    }

#define AX_KEY32_F32(v) AX_FKEY32(ax_bits32(v), 0x80000000u)
#define AX_KEY64_F64(v) rd_key_f64(ax_bits64(v))

AX_UNIT_PASSES(ax_block_f32, float, AX_DOUBLE, AX_ISNAN_F, AX_KEY32_F32, uint32_t)
AX_UNIT_PASSES(ax_block_f16, uint16_t, AX_F16_DOUBLE, hf_f16_isnan, AX_KEY_H16, uint32_t)
AX_UNIT_PASSES(ax_block_bf16, uint16_t, AX_BF16_DOUBLE, hf_bf16_isnan, AX_KEY_H16, uint32_t)
AX_UNIT_PASSES(ax_block_f64, double, AX_DOUBLE, AX_ISNAN_F, AX_KEY64_F64, uint64_t)

/* Stores an entry's parts of lanes [0, nc) as parts i .. i + nc of the
 * buffer's arrays (those the layout holds; float sums are doubles, their
 * high words 0): sums and variance from level a, counts cnt, extrema keys
 * and rows (AX_ROW_NONE: no index; keymax, a key of all ones, is a NaN's
 * maximum) with stage-2 indices from j0. */
static void ax_entry_store(const ax_layout *l, void *out, size_t i, const ax_level *a,
                           const uint64_t *cnt, const uint64_t *mn, const uint32_t *rn,
                           const uint64_t *mx, const uint32_t *rx, uint64_t keymax, uint64_t j0,
                           size_t nc)
{
    char *b = out;
    rd_extrema *oe;
    rd_var *ov;
    ax_parts_at(l, out, i, &oe, &ov);
    for (size_t c = 0; c < nc; c++) {
        if (l->use_sum)
            memcpy(b + l->sum_at + (i + c) * 8, &a->sum[c], 8);
        if (l->use_sq)
            memcpy(b + l->sq_at + (i + c) * 8, &a->sq[c], 8);
        if (l->use_cnt)
            memcpy(b + l->count_at + (i + c) * 8, &cnt[c], 8);
        if (oe) {
            rd_extrema x = rd_extrema_empty();
            if (rn[c] != AX_ROW_NONE)
                x.min_key = mn[c], x.min_idx = j0 + rn[c];
            if (rx[c] != AX_ROW_NONE) {
                x.max_key = mx[c] == keymax ? RD_NAN_MAX_KEY : mx[c];
                x.max_idx = j0 + rx[c];
            }
            oe[c] = x;
        }
        if (ov) {
            rd_var v = {a->vn[c], a->vk[c], {a->v1h[c], a->v1l[c]}, {a->v2h[c], a->v2l[c]}};
            ov[c] = v;
        }
    }
}

/* Column groups of AX_COLS that a float block entry's units go through
 * together, so that the merges of their counters' levels (long chains of
 * dependent double-double steps) are independent of each other and
 * overlap. */
#define AX_BAND 4

/* Defines NAME_entries: the parts of block entries ent[0 .. n) of a float
 * type T (the chunk's entries at .. at + n), AX_COLS columns at a time (the
 * last group of a width that is no multiple of AX_COLS is the last AX_COLS
 * columns, the ones it shares with the group before computed twice alike;
 * a width below AX_COLS goes through a copy of each unit's rows padded to
 * AX_COLS lanes), AX_BAND groups unit by unit together: each unit's passes
 * that the ops need, its sums and variance into the binary counter's next
 * level and merged down it (the pairwise tree over the entry's units), its
 * extrema and counts into the entry's running ones; four whole units at a
 * time (NAME_group) where the variance is wanted without skipnan or
 * squares, from a multiple of four on. SKIP is a constant
 * where it is inlined. */
#define AX_FLOAT_ENTRIES(NAME, T, KT)                                                        \
    AX_INLINE void NAME##_entries(const ax_plan *p, const ax_layout *l, const T *x,         \
                                  uint64_t e0, const ax_entry *ent, size_t n, size_t at,    \
                                  size_t nl, int ws, int we, int wv, int skip, void *out)   \
    {                                                                                       \
        size_t W = p->width, C = (size_t)p->C;                                              \
        size_t ng = W < AX_COLS ? 1 : (W + AX_COLS - 1) / AX_COLS;                          \
        int wq = l->use_sq, wc = l->use_cnt;                                                \
        int wa = !ax_extrema_by_unit(p);                                                    \
        ax_level st[AX_FOLD_LEVELS + 1][AX_BAND];                                           \
        T pad[RD_AXIS_BLOCK * AX_COLS];                                                     \
        uint64_t cnt[AX_BAND][AX_COLS], mn[AX_COLS], mx[AX_COLS];                           \
        KT kmn[AX_BAND][AX_COLS], kmx[AX_BAND][AX_COLS];                                    \
        uint32_t rn[AX_BAND][AX_COLS], rx[AX_BAND][AX_COLS];                                \
        size_t c0[AX_BAND];                                                                 \
        for (size_t i = 0; i < n; i++) {                                                    \
            const ax_entry *en = &ent[i];                                                   \
            uint64_t first, un;                                                             \
            ax_unit_span(p, en->u, &first, &un);                                            \
            size_t rows = (size_t)ax_entry_elems(p, en);                                    \
            uint64_t j0 = ax_unit_leaf(p, en->u) * RD_AXIS_BLOCK;                           \
            size_t nc = W < AX_COLS ? W : AX_COLS;                                          \
            for (size_t g0 = 0; g0 < ng; g0 += AX_BAND) {                                   \
                size_t nb = ng - g0 < AX_BAND ? ng - g0 : AX_BAND;                          \
                for (size_t b = 0; b < nb; b++) {                                           \
                    size_t g = (g0 + b) * AX_COLS;                                          \
                    c0[b] = W < AX_COLS ? 0 : g + AX_COLS <= W ? g : W - AX_COLS;           \
                    for (size_t c = 0; c < AX_COLS; c++) {                                  \
                        cnt[b][c] = 0;                                                      \
                        kmn[b][c] = ~(KT)0, kmx[b][c] = 0;                                  \
                        rn[b][c] = rx[b][c] = AX_ROW_NONE;                                  \
                    }                                                                       \
                }                                                                           \
                int top = 0;                                                                \
                for (size_t k = 0, r0 = 0, lev; r0 < rows;                                  \
                     k += (size_t)1 << lev, r0 += (size_t)RD_AXIS_BLOCK << lev) {           \
                    size_t nr = rows - r0 < RD_AXIS_BLOCK ? rows - r0 : RD_AXIS_BLOCK;      \
                    lev = wv && !skip && !wq && W >= AX_COLS && k % 4 == 0 &&               \
                                  rows - r0 >= 4 * RD_AXIS_BLOCK                            \
                              ? 2                                                           \
                              : 0;                                                          \
                    for (size_t b = 0; b < nb; b++) {                                       \
                        const T *px = x + (first - e0) + r0 * C + c0[b];                    \
                        if (lev) {                                                          \
                            for (size_t h = 0; h < AX_COLS; h += nl)                        \
                                NAME##_group(px + h, C, nl, we, (uint32_t)r0, &st[top][b], h, \
                                             kmn[b] + h, rn[b] + h, kmx[b] + h, rx[b] + h); \
                            continue;                                                       \
                        }                                                                   \
                        size_t stride = C;                                                  \
                        if (W < AX_COLS) {                                                  \
                            memset(pad, 0, sizeof pad);                                     \
                            for (size_t r = 0; r < nr; r++)                                 \
                                memcpy(pad + r * AX_COLS, px + r * C, W * sizeof(T));       \
                            px = pad;                                                       \
                            stride = AX_COLS;                                               \
                        }                                                                   \
                        ax_level *o = &st[top][b];                                          \
                        for (size_t h = 0; h < AX_COLS; h += nl)                            \
                            NAME##_unit(px + h, nr, stride, nl, ws, we, wv, skip,           \
                                        (uint32_t)r0, o, h, cnt[b] + h, kmn[b] + h,         \
                                        rn[b] + h, kmx[b] + h, rx[b] + h);                  \
                        if (!ws && wc && skip)                                              \
                            NAME##_unit_count(px, nr, stride, cnt[b]);                      \
                        if (wq)                                                             \
                            NAME##_unit_sq(px, nr, stride, skip, o->sq);                    \
                    }                                                                       \
                    for (size_t c = k >> lev; c & 1; c >>= 1) {                             \
                        top--;                                                              \
                        for (size_t b = 0; b < nb; b++)                                     \
                            ax_level_merge(&st[top][b], &st[top + 1][b], l->use_sum, wq, wv, \
                                           !skip);\
                    }                                                                       \
                    top++;                                                                  \
                }                                                                           \
                for (size_t b = 0; b < nb; b++) {                                           \
                    const T *col = x + (first - e0) + c0[b];                                \
                    for (size_t c = 0; we && wa && c < nc; c++) {                           \
                        uint32_t end = (uint32_t)rows;                                      \
                        if (rn[b][c] != AX_ROW_NONE)                                        \
                            rn[b][c] = NAME##_first_row(col + c, C, rn[b][c], end, kmn[b][c], 0, \
                                                        skip);                              \
                        if (rx[b][c] != AX_ROW_NONE)                                        \
                            rx[b][c] = NAME##_first_row(col + c, C, rx[b][c], end, kmx[b][c], 1, \
                                                        skip);                              \
                    }                                                                       \
                    for (size_t c = 0; c < AX_COLS; c++)                                    \
                        mn[c] = kmn[b][c], mx[c] = kmx[b][c];                               \
                    ax_entry_store(l, out, (at + i) * W + c0[b], &st[0][b], cnt[b], mn, rn[b], \
                                   mx, rx[b], (uint64_t)(KT)~(KT)0, j0, nc);                \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

AX_FLOAT_ENTRIES(ax_block_f32, float, uint32_t)
AX_FLOAT_ENTRIES(ax_block_f16, uint16_t, uint32_t)
AX_FLOAT_ENTRIES(ax_block_bf16, uint16_t, uint32_t)
AX_FLOAT_ENTRIES(ax_block_f64, double, uint64_t)

/* Calls FN with the flags ws, we, wv, skip as constants, each combination
 * its own copy of the loops: the sums go along with the variance (a small
 * share of its pass) and are left out only where the extrema alone are
 * wanted. */
#define AX_WITH_FLAGS(FN, l, skip, ...)                                                      \
    do {                                                                                    \
        int we_ = (l)->use_e, wv_ = (l)->use_v, ws_ = !(we_ && !wv_ && !(l)->use_sum);       \
        switch (ws_ | we_ << 1 | wv_ << 2 | (skip) << 3) {                                 \
        case 1: FN(__VA_ARGS__, 1, 0, 0, 0, out); break;                                    \
        case 2: FN(__VA_ARGS__, 0, 1, 0, 0, out); break;                                    \
        case 3: FN(__VA_ARGS__, 1, 1, 0, 0, out); break;                                    \
        case 5: FN(__VA_ARGS__, 1, 0, 1, 0, out); break;                                    \
        case 7: FN(__VA_ARGS__, 1, 1, 1, 0, out); break;                                    \
        case 9: FN(__VA_ARGS__, 1, 0, 0, 1, out); break;                                    \
        case 10: FN(__VA_ARGS__, 0, 1, 0, 1, out); break;                                   \
        case 11: FN(__VA_ARGS__, 1, 1, 0, 1, out); break;                                   \
        case 13: FN(__VA_ARGS__, 1, 0, 1, 1, out); break;                                   \
        default: FN(__VA_ARGS__, 1, 1, 1, 1, out); break;                                   \
        }                                                                                   \
    } while (0)

/* The block entries of a float plan by the lane code; 0 where the plan is
 * not one (other types, tile units). */
AX_INLINE int ax_float_entries(const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0,
                               const ax_entry *ent, size_t n, size_t at, size_t nl,
                               void *out)
{
    if (p->unit != AX_UNIT_BLOCK)
        return 0;
    int sk = p->skipnan;
    switch (p->dtype) {
    case DT_F32: AX_WITH_FLAGS(ax_block_f32_entries, l, sk, p, l, x, e0, ent, n, at, nl); break;
    case DT_F64: AX_WITH_FLAGS(ax_block_f64_entries, l, sk, p, l, x, e0, ent, n, at, nl); break;
    case DT_F16: AX_WITH_FLAGS(ax_block_f16_entries, l, sk, p, l, x, e0, ent, n, at, nl); break;
    case DT_BF16: AX_WITH_FLAGS(ax_block_bf16_entries, l, sk, p, l, x, e0, ent, n, at, nl); break;
    default: return 0;
    }
    return 1;
}

/* The parts of entries ent[0 .. n) of a chunk, the chunk's entries at .. at
 * + n (every variant inlines it): each entry's units, AX_COLS columns at a
 * time, folded by a binary counter (the pairwise tree over its 2^level
 * units). */
AX_INLINE void ax_cpu_entries_all(const ax_plan *p, const ax_layout *l, const void *x,
                                  uint64_t e0, const ax_entry *ent, size_t n, size_t at,
                                  int scalar, void *out)
{
    size_t sz = dt_size(p->dtype), W = p->width;
    size_t cols = p->unit == AX_UNIT_TILE ? 1 : AX_COLS;
    rd_moments sm[AX_FOLD_LEVELS + 1][AX_COLS], tm[AX_COLS];
    rd_extrema se[AX_FOLD_LEVELS + 1][AX_COLS], te[AX_COLS];
    rd_var sv[AX_FOLD_LEVELS + 1][AX_COLS], tv[AX_COLS];
    rd_moments *m = l->use_m ? tm : NULL;
    rd_extrema *e = l->use_e ? te : NULL;
    int vb = !scalar && ax_cpu_short_vars(p, l, x, e0, ent, n, at, out);
    rd_var *v = l->use_v && !vb ? tv : NULL;
    for (size_t i = 0; i < n; i++) {
        const ax_entry *en = &ent[i];
        uint64_t leaf0 = p->unit == AX_UNIT_BLOCK ? ax_unit_leaf(p, en->u) : 0;
        for (size_t c0 = 0; c0 < W; c0 += cols) {
            size_t nc = W - c0 < cols ? W - c0 : cols;
            int top = 0;
            for (uint64_t k = 0; k < en->n; k++) {
                uint64_t us, un;
                ax_unit_span(p, en->u + k, &us, &un);
                const char *px = (const char *)x + (us - e0) * sz;
                if (p->unit == AX_UNIT_TILE) {
                    if (scalar || !ax_cpu_short_tile(p, px, (size_t)un, us % p->T, m, e, v))
                        ax_cpu_tile(p, px, (size_t)un, us % p->T, m, e, v);
                }
                else if (nc == AX_COLS)
                    ax_cpu_block(p, px, (size_t)(un / p->C), c0, AX_COLS,
                                 (leaf0 + k) * RD_AXIS_BLOCK, scalar, m, e, v);
                else
                    ax_cpu_block(p, px, (size_t)(un / p->C), c0, nc, (leaf0 + k) * RD_AXIS_BLOCK,
                                 scalar, m, e, v);
                for (uint64_t c = k; c & 1; c >>= 1) {
                    top--;
                    if (nc == AX_COLS)
                        ax_merge_parts(p, AX_COLS, scalar, sm[top], se[top], sv[top], m, e, v);
                    else
                        ax_merge_parts(p, nc, scalar, sm[top], se[top], sv[top], m, e, v);
                }
                if (en->n == 1)
                    break; /* one unit: its parts are the entry's, taken from m, e, v */
                if (m)
                    memcpy(sm[top], m, nc * sizeof *m);
                if (e)
                    memcpy(se[top], e, nc * sizeof *e);
                if (v)
                    memcpy(sv[top], v, nc * sizeof *v);
                top++;
            }
            rd_extrema *oe;
            rd_var *ov;
            ax_parts_at(l, out, (at + i) * W + c0, &oe, &ov);
            int one = en->n == 1;
            if (m)
                ax_put_moments(l, out, (at + i) * W + c0, one ? m : sm[0], nc);
            if (oe)
                memcpy(oe, one ? e : se[0], nc * sizeof *oe);
            if (v)
                memcpy(ov, one ? v : sv[0], nc * sizeof *ov);
        }
    }
}

typedef void (*ax_entries_fn)(const ax_plan *, const ax_layout *, const void *, uint64_t,
                              const ax_entry *, size_t, size_t, void *);

/* Defines variant NAME of the entry code, compiled with ATTRS: the float
 * blocks' code a function of its own (NAME_float), so that each is
 * optimized as it was alone, its unit passes LANES columns at a time (a
 * divisor of AX_COLS: as many as the variant's registers hold the
 * accumulators of, which keeps them out of memory). */
#define AX_VARIANT(NAME, ATTRS, LANES)                                                      \
    ATTRS __attribute__((noinline)) static int NAME##_float(                                \
        const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0,                  \
        const ax_entry *ent, size_t n, size_t at, void *out)                               \
    {                                                                                       \
        return ax_float_entries(p, l, x, e0, ent, n, at, LANES, out);                       \
    }                                                                                       \
    ATTRS static void NAME(const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0, \
                           const ax_entry *ent, size_t n, size_t at, void *out)             \
    {                                                                                       \
        if (!NAME##_float(p, l, x, e0, ent, n, at, out))                                    \
            ax_cpu_entries_all(p, l, x, e0, ent, n, at, 0, out);                            \
    }

AX_VARIANT(ax_cpu_entries_baseline, , AX_COLS)
#if SIMD_MULTI
AX_VARIANT(ax_cpu_entries_avx2, SIMD_ATTR_AVX2, AX_COLS / 2)
AX_VARIANT(ax_cpu_entries_avx512, SIMD_ATTR_AVX512, AX_COLS)
#endif

/* The parts of entries ent[0 .. n), the chunk's at .. at + n, on this CPU's
 * variant. */
void ax_cpu_entries(const ax_plan *p, const ax_layout *l, const void *x, uint64_t e0,
                    const ax_entry *ent, size_t n, size_t at, void *out)
{
    static const ax_entries_fn variants[] = {
        ax_cpu_entries_baseline,
#if SIMD_MULTI
        ax_cpu_entries_avx2, ax_cpu_entries_avx512,
#endif
    };
    variants[simd_variant()](p, l, x, e0, ent, n, at, out);
}

/* Writes a chunk's header and raw ends (the part of its buffer that is not
 * units). */
static void ax_chunk_ends(const ax_plan *p, const ax_layout *l, const ax_chunk_hdr *hp,
                          const void *x, uint64_t e0, uint64_t e1, void *out)
{
    ax_chunk_hdr h = *hp;
    size_t sz = dt_size(p->dtype);
    char *b = out;
    memcpy(b, &h, sizeof h);
    memcpy(b + l->raw_at, x, (size_t)h.head * sz);
    memcpy(b + l->raw_at + h.head * sz, (const char *)x + (e1 - e0 - h.tail) * sz,
           (size_t)h.tail * sz);
}

/* The entry code one element at a time: the reference of the lane-wise
 * code. */
static void ax_cpu_entries_scalar(const ax_plan *p, const ax_layout *l, const void *x,
                                  uint64_t e0, const ax_entry *ent, size_t n, size_t at,
                                  void *out)
{
    ax_cpu_entries_all(p, l, x, e0, ent, n, at, 1, out);
}

/* The whole result buffer of a chunk on the CPU, its entries' parts by fn. */
static void ax_cpu_chunk_by(const ax_plan *p, const void *x, uint64_t e0, uint64_t e1,
                            size_t capacity, void *out, ax_entries_fn fn)
{
    ax_layout l = ax_layout_for(p, capacity);
    ax_chunk_hdr h = ax_chunk_of(p, e0, e1);
    memset(out, 0, l.total);
    ax_chunk_ends(p, &l, &h, x, e0, e1, out);
    ax_entry *ent = malloc((h.nentries ? h.nentries : 1) * sizeof *ent);
    if (!ent)
        return;
    ax_chunk_entries(p, h.u0, h.u1, ent);
    fn(p, &l, x, e0, ent, (size_t)h.nentries, 0, out);
    free(ent);
}

/* Whether extrema parts note units, not rows (see axis.h). */
int ax_extrema_by_unit(const ax_plan *p)
{
    return p->unit == AX_UNIT_BLOCK && dt_is_float(p->dtype) &&
           !(p->ops & (RD_OP_ARGMIN | RD_OP_ARGMAX));
}

/* Index i's unit where parts note units, else i itself. */
static uint64_t ax_index_seen(int by_unit, uint64_t i)
{
    return by_unit && i != RD_NO_INDEX ? i / RD_AXIS_BLOCK : i;
}

/* Whether extrema parts agree as results and states see them (see axis.h). */
int ax_extrema_parts_same(const ax_plan *p, const rd_extrema *a, const rd_extrema *b, size_t n)
{
    int u = ax_extrema_by_unit(p);
    for (size_t i = 0; i < n; i++)
        if (a[i].min_key != b[i].min_key || a[i].max_key != b[i].max_key ||
            ax_index_seen(u, a[i].min_idx) != ax_index_seen(u, b[i].min_idx) ||
            ax_index_seen(u, a[i].max_idx) != ax_index_seen(u, b[i].max_idx))
            return 0;
    return 1;
}

/* The whole result buffer of a chunk on the CPU. */
void ax_cpu_chunk(const ax_plan *p, const void *x, uint64_t e0, uint64_t e1, size_t capacity,
                  void *out)
{
    ax_cpu_chunk_by(p, x, e0, e1, capacity, out, ax_cpu_entries);
}

/* The same buffer from the scalar reference code. */
void ax_cpu_chunk_scalar(const ax_plan *p, const void *x, uint64_t e0, uint64_t e1,
                         size_t capacity, void *out)
{
    ax_cpu_chunk_by(p, x, e0, e1, capacity, out, ax_cpu_entries_scalar);
}

/* ---- the streaming state ---- */

/* One partial as the state folds it: a tile, a run or an element's. */
typedef struct {
    double sum, sq;     /* float sums (and 64-bit integer squares) */
    rd_u128 isum, isq;  /* exact integer sums */
    uint64_t count;
    rd_extrema ext;     /* indices relative to the partial's first element */
    rd_var var;
} ax_item;

struct ax_state {
    const ax_plan *p;
    int use_m, use_e, use_v, fl, sqf;
    uint64_t pos;                       /* elements folded so far */
    /* per output element */
    int D;                              /* block-tree stack entries */
    double *bsum, *bsq, *tsum, *tsq;
    rd_var *bvar, *tvar;
    rd_var_acc *bvacc;                  /* T == 1: a block's accumulator of elements */
    uint64_t *nb;                       /* blocks pushed */
    rd_u128 *isum, *isq;
    uint64_t *count;
    rd_extrema *ext;
    /* stage 1: the run in progress and a cut tile's carry */
    rd_tree rsum, rsq;
    rd_vtree rvar;
    ax_item run;
    unsigned char *carry;
    struct ax_shard *sh;                /* a shard's state: what it holds of cut runs, blocks */
    /* values mode (ax_state_new_values): each op's values, computed as its
       outputs' whole runs come, in place of the per-output arrays above */
    int values, ddof;
    void *vals[RD_OP_NUM];              /* by op bit: nout values of ax_result_type */
    int vflags[RD_OP_NUM];              /* AX_RESULT_* found so far, by op bit */
};

/* The per-output arrays a state's ops need (ax_state_new allocates them,
 * values mode gives each output its own for a moment). */
enum {
    AX_HAS_SUM = 1, AX_HAS_SQ = 2, AX_HAS_VAR = 4, AX_HAS_ISUM = 8, AX_HAS_ISQ = 16,
    AX_HAS_COUNT = 32, AX_HAS_EXT = 64
};

struct ax_shard;
static void ax_shard_free(struct ax_shard *h);
static int ax_shard_lead(ax_state *s, uint64_t o, uint64_t j, const ax_item *it, int elem,
                         double x);
static void ax_shard_push(ax_state *s, uint64_t o, double sum, double sq, const rd_var *v,
                          unsigned level);
static void ax_shard_block(ax_state *s, uint64_t o, uint64_t j, const ax_entry *en, double sum,
                           double sq, const rd_var *v);
static int ax_shard_run_end(ax_state *s, uint64_t run);

/* Frees the state; accepts NULL. */
void ax_state_free(ax_state *s)
{
    if (!s)
        return;
    free(s->bsum);
    free(s->bsq);
    free(s->tsum);
    free(s->tsq);
    free(s->bvar);
    free(s->bvacc);
    free(s->tvar);
    free(s->nb);
    free(s->isum);
    free(s->isq);
    free(s->count);
    free(s->ext);
    free(s->carry);
    for (int k = 0; k < RD_OP_NUM; k++)
        free(s->vals[k]);
    ax_shard_free(s->sh);
    free(s);
}

/* calloc of n elements of size bytes, or NULL when not wanted. */
static void *ax_calloc(int want, uint64_t n, size_t size, int *fail)
{
    if (!want)
        return NULL;
    void *q = calloc(n ? (size_t)n : 1, size);
    if (!q)
        *fail = 1;
    return q;
}

/* The AX_HAS_* arrays the ops of s's plan need. */
static unsigned ax_has(const ax_state *s)
{
    int m = s->use_m;
    return (m && s->fl ? AX_HAS_SUM : 0) |
           (m && (s->p->ops & RD_OP_SUMSQ) && s->sqf ? AX_HAS_SQ : 0) |
           (s->use_v ? AX_HAS_VAR : 0) | (m && !s->fl ? AX_HAS_ISUM : 0) |
           (m && !s->sqf ? AX_HAS_ISQ : 0) | (m ? AX_HAS_COUNT : 0) | (s->use_e ? AX_HAS_EXT : 0);
}

/* A state with its plan's kinds of data set, and no arrays. */
static ax_state *ax_state_bare(const ax_plan *p)
{
    ax_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = p;
    ax_needs(p->ops, &s->use_m, &s->use_e, &s->use_v);
    s->fl = dt_is_float(p->dtype);
    s->sqf = ax_sq_is_float(p->dtype);
    return s;
}

/* A new state for plan p. */
ax_state *ax_state_new(const ax_plan *p)
{
    ax_state *s = ax_state_bare(p);
    if (!s)
        return NULL;
    s->D = 1;
    while (((uint64_t)1 << s->D) <= p->nblocks && s->D < 64)
        s->D++;
    uint64_t n = p->nout, nd = p->nout * (uint64_t)s->D;
    unsigned h = ax_has(s);
    int fail = 0;
    s->bsum = ax_calloc(h & AX_HAS_SUM, n, sizeof(double), &fail);
    s->tsum = ax_calloc(h & AX_HAS_SUM, nd, sizeof(double), &fail);
    s->bsq = ax_calloc(h & AX_HAS_SQ, n, sizeof(double), &fail);
    s->tsq = ax_calloc(h & AX_HAS_SQ, nd, sizeof(double), &fail);
    s->bvar = ax_calloc(h & AX_HAS_VAR, n, sizeof(rd_var), &fail);
    s->tvar = ax_calloc(h & AX_HAS_VAR, nd, sizeof(rd_var), &fail);
    s->bvacc = ax_calloc((h & AX_HAS_VAR) && p->T == 1, n, sizeof(rd_var_acc), &fail);
    s->nb = ax_calloc(1, n, sizeof(uint64_t), &fail);
    s->isum = ax_calloc(h & AX_HAS_ISUM, n, sizeof(rd_u128), &fail);
    s->isq = ax_calloc(h & AX_HAS_ISQ, n, sizeof(rd_u128), &fail);
    s->count = ax_calloc(h & AX_HAS_COUNT, n, sizeof(uint64_t), &fail);
    s->ext = ax_calloc(h & AX_HAS_EXT, n, sizeof(rd_extrema), &fail);
    s->carry = ax_calloc(p->unit == AX_UNIT_TILE, RD_TILE, dt_size(p->dtype), &fail);
    if (fail) {
        ax_state_free(s);
        return NULL;
    }
    for (uint64_t o = 0; s->ext && o < n; o++)
        s->ext[o] = rd_extrema_empty();
    return s;
}

/* Pushes a complete block (sum, square sum, variance) into output o's tree (its
 * stack entry d of every output lies at d * nout + o). */
static void ax_push_block(ax_state *s, uint64_t o, double sum, double sq, const rd_var *v)
{
    if (s->sh) {
        ax_shard_push(s, o, sum, sq, v, 0);
        return;
    }
    uint64_t idx = s->nb[o]++, nout = s->p->nout;
    int depth = __builtin_popcountll(idx);
    for (; idx & 1; idx >>= 1) {
        depth--;
        size_t at = (size_t)(depth * nout + o);
        if (s->tsum)
            sum = rd_add(s->tsum[at], sum);
        if (s->tsq)
            sq = rd_add(s->tsq[at], sq);
        if (s->tvar) {
            s->tvar[at] = rd_var_merge(s->tvar[at], *v);
            v = &s->tvar[at];
        }
    }
    size_t at = (size_t)(depth * nout + o);
    if (s->tsum)
        s->tsum[at] = sum;
    if (s->tsq)
        s->tsq[at] = sq;
    if (s->tvar)
        s->tvar[at] = *v;
}

/* Adds the order-free parts of an item (exact sums, counts, extrema whose
 * indices start at flat index g of the reduced axes) to output o. */
static void ax_add_free(ax_state *s, uint64_t o, const ax_item *it, uint64_t g)
{
    if (s->isum)
        s->isum[o] += it->isum;
    if (s->isq)
        s->isq[o] += it->isq;
    if (s->count)
        s->count[o] += it->count;
    if (s->ext) {
        rd_extrema e = it->ext;
        if (e.min_idx != RD_NO_INDEX)
            e.min_idx += g;
        if (e.max_idx != RD_NO_INDEX)
            e.max_idx += g;
        rd_extrema_merge(&s->ext[o], &e);
    }
}

/* Folds one stage-2 partial (a run's, or an element's with elem set) at
 * index j of output o. */
static void ax_fold(ax_state *s, uint64_t o, uint64_t j, const ax_item *it, int elem,
                    double x)
{
    const ax_plan *p = s->p;
    if (s->sh && ax_shard_lead(s, o, j, it, elem, x))
        return;
    uint64_t b = j % RD_AXIS_BLOCK;
    if (s->bsum)
        s->bsum[o] = rd_add(b ? s->bsum[o] : -0.0, it->sum);
    if (s->bsq)
        s->bsq[o] = rd_add(b ? s->bsq[o] : -0.0, it->sq);
    if (s->bvacc) {
        if (!b)
            s->bvacc[o] = rd_var_acc_empty();
        if (elem)
            rd_var_step(&s->bvacc[o], x);
        s->bvar[o] = rd_var_of_acc(s->bvacc[o]);
    } else if (s->bvar) {
        s->bvar[o] = rd_var_merge(b ? s->bvar[o] : rd_var_empty(), it->var);
    }
    ax_add_free(s, o, it, j * p->T);
    if (b == RD_AXIS_BLOCK - 1 || j == p->J - 1)
        ax_push_block(s, o, s->bsum ? s->bsum[o] : 0, s->bsq ? s->bsq[o] : 0,
                      s->bvar ? &s->bvar[o] : NULL);
}

/* Folds n raw elements at x, the first at stream index e, straight into
 * stage 2 (plans with T == 1). */
static void ax_fold_raw(ax_state *s, const void *x, uint64_t e, uint64_t n)
{
    const ax_plan *p = s->p;
    uint64_t i = 0;
    while (i < n) {
        uint64_t o, j, span;
        ax_locate(s->p, e + i, &o, &j, &span);
        for (uint64_t k = 0; k < span && i < n; k++, i++, o++) {
            ax_item it;
            memset(&it, 0, sizeof it);
            it.ext = rd_extrema_empty();
            int nan = ax_isnan(p->dtype, x, (size_t)i);
            int skip = nan && p->skipnan;
            double d = ax_value(p->dtype, x, (size_t)i);
            it.sum = skip ? -0.0 : d;
            it.sq = skip ? -0.0 : d * d;
            if (!s->fl) {
                __int128 v = ax_int(p->dtype, x, (size_t)i);
                it.isum = (rd_u128)v;
                it.isq = (rd_u128)(v * v);
            }
            it.count = !skip;
            if (s->ext && !skip) {
                rd_u64 kmin = nan ? RD_NAN_MIN_KEY : ax_key(p->dtype, x, (size_t)i);
                rd_u64 kmax = nan ? RD_NAN_MAX_KEY : kmin;
                rd_min_update(&it.ext.min_key, &it.ext.min_idx, kmin, 0);
                rd_max_update(&it.ext.max_key, &it.ext.max_idx, kmax, 0);
            }
            if (skip)
                it.var = rd_var_empty();
            ax_fold(s, o, j, &it, !skip, d);
        }
    }
}

/* Reads a tile unit's part i of a buffer into an item. */
static ax_item ax_item_of(const ax_state *s, const rd_moments *m, const rd_extrema *e,
                          const rd_var *v)
{
    ax_item it; /* every field set below: no memset, whose set-up costs more than a run */
    it.sum = it.sq = 0;
    it.isum = it.isq = 0;
    it.count = 0;
    it.ext = e ? *e : rd_extrema_empty();
    it.var = v ? *v : rd_var_empty();
    if (m) {
        if (s->fl)
            memcpy(&it.sum, &m->sum_lo, sizeof it.sum);
        else
            it.isum = ((rd_u128)m->sum_hi << 64) | m->sum_lo;
        if (s->sqf)
            memcpy(&it.sq, &m->sq_lo, sizeof it.sq);
        else
            it.isq = ((rd_u128)m->sq_hi << 64) | m->sq_lo;
        it.count = m->count;
    }
    return it;
}

/* Whether every output element of plan p is one run of at most a tile,
 * its part the whole of it (J == 1). */
static int ax_plan_whole_runs(const ax_plan *p)
{
    return p->unit == AX_UNIT_TILE && p->tiles_per_run == 1 && p->J == 1 && p->T > 0;
}

/* ax_plan_whole_runs of s's plan, s no shard: ax_store_whole stores an
 * output's part, or ax_value_whole its values. */
static int ax_whole_runs(const ax_state *s)
{
    return ax_plan_whole_runs(s->p) && !s->sh;
}

/* Stores output o's only partial, as ax_fold of it as stage-2 index 0 and
 * its block's push leave an output with nothing folded before (the same
 * bits), without the block's arrays: only output o's slots are written, so
 * that threads may store distinct outputs at once. */
static void ax_store_whole(ax_state *s, uint64_t o, const ax_item *it)
{
    if (s->tsum)
        s->tsum[o] = rd_add(-0.0, it->sum);
    if (s->tsq)
        s->tsq[o] = rd_add(-0.0, it->sq);
    if (s->tvar)
        s->tvar[o] = rd_var_merge(rd_var_empty(), it->var);
    s->nb[o]++;
    ax_add_free(s, o, it, 0);
}

static int ax_result_range(const ax_state *s, int op, int ddof, void *out, uint64_t o0,
                           uint64_t o1);

/* One output's accumulators, and a copy of a values-mode state whose
 * per-output arrays are these (made once per thread: the state is large). */
typedef struct {
    ax_state st;
    double tsum, tsq;
    rd_var tvar;
    uint64_t nb, count;
    rd_u128 isum, isq;
    rd_extrema ext;
    int nops, op[RD_OP_NUM]; /* the op bits computed */
    size_t rsz[RD_OP_NUM];   /* their values' sizes */
} ax_one;

/* Points w's copy of values-mode state s at w's own accumulators. */
static void ax_one_init(ax_one *w, const ax_state *s)
{
    unsigned h = ax_has(s);
    w->st = *s;
    w->st.tsum = h & AX_HAS_SUM ? &w->tsum : NULL;
    w->st.tsq = h & AX_HAS_SQ ? &w->tsq : NULL;
    w->st.tvar = h & AX_HAS_VAR ? &w->tvar : NULL;
    w->st.isum = h & AX_HAS_ISUM ? &w->isum : NULL;
    w->st.isq = h & AX_HAS_ISQ ? &w->isq : NULL;
    w->st.count = h & AX_HAS_COUNT ? &w->count : NULL;
    w->st.ext = h & AX_HAS_EXT ? &w->ext : NULL;
    w->st.nb = &w->nb;
    w->nops = 0;
    for (int k = 0; k < RD_OP_NUM; k++)
        if (s->vals[k]) {
            w->op[w->nops] = k;
            w->rsz[w->nops++] = dt_size(ax_result_type(s->p, 1 << k));
        }
}

/* Output o's values of every op from its only partial, into the values
 * arrays of s: ax_store_whole into w's accumulators of that one output
 * (ax_one_init), then ax_result_range of them, so that they are the bits
 * ax_state_result gives a state that stored it. Its AX_RESULT_* flags go
 * into flags[op bit]. */
static void ax_value_whole(const ax_state *s, ax_one *w, uint64_t o, const ax_item *it,
                           int *flags)
{
    w->tsum = w->tsq = 0;
    w->tvar = rd_var_empty();
    w->nb = w->count = 0;
    w->isum = w->isq = 0;
    w->ext = rd_extrema_empty();
    ax_store_whole(&w->st, 0, it);
    for (int i = 0; i < w->nops; i++) {
        int k = w->op[i];
        char *at = (char *)s->vals[k] + o * w->rsz[i];
        flags[k] |= ax_result_range(&w->st, 1 << k, s->ddof, at, 0, 1);
    }
}

/* Folds an item of n = 2^level tiles of a run from tile u on into the run
 * in progress; at the run's last tile the run's partial goes to stage 2. */
static void ax_fold_tile(ax_state *s, uint64_t u, uint64_t n, unsigned level, const ax_item *it)
{
    const ax_plan *p = s->p;
    uint64_t run = u / p->tiles_per_run, tile = u % p->tiles_per_run, o, j, span;
    if (ax_whole_runs(s)) {
        if (s->values) {
            ax_one w;
            ax_one_init(&w, s);
            ax_value_whole(s, &w, run, it, s->vflags);
        } else {
            ax_store_whole(s, run, it);
        }
        return;
    }
    if (p->tiles_per_run == 1 && !s->sh) { /* the item is its run's partial */
        ax_locate(p, run, &o, &j, &span);
        ax_fold(s, o, j, it, 0, 0);
        return;
    }
    if (tile == 0) {
        rd_tree_init(&s->rsum);
        rd_tree_init(&s->rsq);
        rd_vtree_init_at(&s->rvar, 0);
        memset(&s->run, 0, sizeof s->run);
        s->run.ext = rd_extrema_empty();
    }
    rd_tree_push_level(&s->rsum, it->sum, level);
    rd_tree_push_level(&s->rsq, it->sq, level);
    if (s->use_v)
        rd_vtree_push_level(&s->rvar, it->var, level);
    s->run.isum += it->isum;
    s->run.isq += it->isq;
    s->run.count += it->count;
    rd_extrema_merge(&s->run.ext, &it->ext);
    if (tile + n < p->tiles_per_run || (s->sh && ax_shard_run_end(s, run)))
        return;
    s->run.sum = rd_tree_finish(&s->rsum);
    s->run.sq = rd_tree_finish(&s->rsq);
    if (s->use_v)
        s->run.var = rd_vtree_finish(&s->rvar);
    ax_locate(p, run, &o, &j, &span);
    ax_fold(s, o, j, &s->run, 0, 0);
}

/* Adds a block entry's order-free part of output o (exact sums, count,
 * extrema indexed by j); m or e NULL when not wanted. */
static void ax_block_free(ax_state *s, uint64_t o, const rd_moments *m, const rd_extrema *e)
{
    if (m) {
        if (s->isum)
            s->isum[o] += ((rd_u128)m->sum_hi << 64) | m->sum_lo;
        if (s->isq)
            s->isq[o] += ((rd_u128)m->sq_hi << 64) | m->sq_lo;
        s->count[o] += m->count;
    }
    if (e)
        rd_extrema_merge(&s->ext[o], e);
}

static void ax_fold_vars(rd_var *tv, size_t nout, size_t o, int depth, int top, const rd_var *v,
                         size_t C);

/* Folds a block entry's C parts (subtrees of 2^level whole stage-2 blocks,
 * extrema indexed by j) into their outputs: every column has pushed as many
 * blocks, so they merge alike. The moments are parts i0 .. i0 + C of the
 * buffer out (cnt elements each where it holds no counts). */
static void ax_fold_block(ax_state *s, const ax_entry *en, const ax_layout *l, const void *out,
                          size_t i0, uint64_t cnt, const rd_extrema *e, const rd_var *v)
{
    const ax_plan *p = s->p;
    uint64_t start, n, o, j, span, nout = p->nout, C = p->C;
    ax_unit_span(p, en->u, &start, &n);
    ax_locate(p, start, &o, &j, &span);
    uint64_t idx = s->nb[o];
    int depth = __builtin_popcountll(idx), merges = 0;
    for (uint64_t i = idx >> en->level; i & 1; i >>= 1)
        merges++;
    int top = depth - merges; /* the stack entry the merged subtree lands in */
    /* the lane code's counts must stay below 2^52 (vl_count): an output's
       elements bound them */
    int lanes = !s->sh && p->nelem / (p->nout ? p->nout : 1) < ((uint64_t)1 << 52);
    for (uint64_t c = 0; c < C; c++) {
        rd_moments mc;
        const rd_moments *m = NULL;
        if (s->use_m) {
            mc = ax_get_moments(l, out, i0 + (size_t)c, cnt);
            m = &mc;
        }
        if (s->sh) {
            double x = 0, y = 0;
            if (m && s->tsum)
                memcpy(&x, &m->sum_lo, sizeof x);
            if (m && s->tsq)
                memcpy(&y, &m->sq_lo, sizeof y);
            ax_shard_block(s, o + c, j, en, x, y, v ? &v[c] : NULL);
            ax_block_free(s, o + c, m, e ? &e[c] : NULL);
            continue;
        }
        s->nb[o + c] += en->n;
        if (m && s->tsum) {
            double x;
            memcpy(&x, &m->sum_lo, sizeof x);
            for (int d = depth - 1; d >= top; d--)
                x = rd_add(s->tsum[d * nout + o + c], x);
            s->tsum[top * nout + o + c] = x;
        }
        if (m && s->tsq) {
            double x;
            memcpy(&x, &m->sq_lo, sizeof x);
            for (int d = depth - 1; d >= top; d--)
                x = rd_add(s->tsq[d * nout + o + c], x);
            s->tsq[top * nout + o + c] = x;
        }
        if (v && !lanes) {
            rd_var x = v[c];
            for (int d = depth - 1; d >= top; d--)
                x = rd_var_merge(s->tvar[d * nout + o + c], x);
            s->tvar[top * nout + o + c] = x;
        }
        ax_block_free(s, o + c, m, e ? &e[c] : NULL);
    }
    if (v && lanes)
        ax_fold_vars(s->tvar, (size_t)nout, (size_t)o, depth, top, v, (size_t)C);
}

/* The variance parts v[0 .. C) of a block entry folded into the block trees
 * of outputs o .. o + C (output o + c's partial at depth d is
 * tv[d * nout + o + c]): per column x = v[c], x = rd_var_merge(tv[d], x)
 * for d from depth - 1 down to top, x stored at top; VL_W columns at a time
 * (the trees of all columns have one shape), every variant inlining it. */
AX_INLINE void ax_fold_vars_all(rd_var *tv, size_t nout, size_t o, int depth, int top,
                                const rd_var *v, size_t C)
{
    for (size_t c0 = 0; c0 < C; c0 += VL_W) {
        size_t w = C - c0 < VL_W ? C - c0 : VL_W;
        uint64_t xn[VL_W], an[VL_W];
        double xk[VL_W], x1h[VL_W], x1l[VL_W], x2h[VL_W], x2l[VL_W];
        double ak[VL_W], a1h[VL_W], a1l[VL_W], a2h[VL_W], a2l[VL_W];
        vl_ref x = {xn, xk, x1h, x1l, x2h, x2l}, a = {an, ak, a1h, a1l, a2h, a2l};
        for (size_t i = 0; i < VL_W; i++)
            vl_put(x, i, v[c0 + (i < w ? i : 0)]);
        for (int d = depth - 1; d >= top; d--) {
            const rd_var *t = tv + (size_t)d * nout + o + c0;
            for (size_t i = 0; i < VL_W; i++)
                vl_put(a, i, t[i < w ? i : 0]);
            vl_merge(a, 0, x, 0, VL_W);
            for (size_t i = 0; i < VL_W; i++)
                vl_put(x, i, vl_get(a, i));
        }
        for (size_t i = 0; i < w; i++)
            tv[(size_t)top * nout + o + c0 + i] = vl_get(x, i);
    }
}

typedef void (*ax_fold_vars_fn)(rd_var *, size_t, size_t, int, int, const rd_var *, size_t);

/* Defines variant NAME of ax_fold_vars_all, compiled with ATTRS. */
#define AX_FOLD_VARIANT(NAME, ATTRS)                                                        \
    ATTRS static void NAME(rd_var *tv, size_t nout, size_t o, int depth, int top,           \
                           const rd_var *v, size_t C)                                       \
    {                                                                                       \
        ax_fold_vars_all(tv, nout, o, depth, top, v, C);                                    \
    }

AX_FOLD_VARIANT(ax_fold_vars_baseline, )
#if SIMD_MULTI
AX_FOLD_VARIANT(ax_fold_vars_avx2, SIMD_ATTR_AVX2)
AX_FOLD_VARIANT(ax_fold_vars_avx512, SIMD_ATTR_AVX512)
#endif

/* ax_fold_vars_all on this CPU's variant. */
static void ax_fold_vars(rd_var *tv, size_t nout, size_t o, int depth, int top, const rd_var *v,
                         size_t C)
{
    static const ax_fold_vars_fn variants[] = {
        ax_fold_vars_baseline,
#if SIMD_MULTI
        ax_fold_vars_avx2, ax_fold_vars_avx512,
#endif
    };
    variants[simd_variant()](tv, nout, o, depth, top, v, C);
}

/* Folds raw elements of a tile plan through the carry of the cut tile. */
static void ax_fold_carry(ax_state *s, const unsigned char *x, uint64_t n)
{
    const ax_plan *p = s->p;
    size_t sz = dt_size(p->dtype);
    while (n > 0) {
        uint64_t u = ax_unit_at(p, s->pos), us, un;
        ax_unit_span(p, u, &us, &un);
        uint64_t have = s->pos - us, take = un - have < n ? un - have : n;
        memcpy(s->carry + have * sz, x, (size_t)(take * sz));
        x += take * sz;
        n -= take;
        s->pos += take;
        if (have + take == un) {
            rd_moments m;
            rd_extrema e;
            rd_var v;
            ax_cpu_tile(p, s->carry, (size_t)un, us % p->T, s->use_m ? &m : NULL,
                        s->use_e ? &e : NULL, s->use_v ? &v : NULL);
            ax_item it = ax_item_of(s, s->use_m ? &m : NULL, s->use_e ? &e : NULL,
                                    s->use_v ? &v : NULL);
            ax_fold_tile(s, u, 1, 0, &it);
        }
    }
}

/* Folds n raw elements that follow what the state has seen. */
static void ax_fold_elems(ax_state *s, const unsigned char *x, uint64_t n)
{
    if (s->p->unit == AX_UNIT_TILE) {
        ax_fold_carry(s, x, n);
    } else {
        ax_fold_raw(s, x, s->pos, n);
        s->pos += n;
    }
}

/* Outputs a thread takes at least where their work is spread over the
 * threads (ax_whole_entries, ax_state_result). */
#define AX_SLICE_OUTPUTS 65536u
#define AX_SLICE_VALUES 2048u /* values mode: each output's values are computed there */

/* The threads n outputs' work is spread over: one a `per` outputs, at
 * most par_cpus() and PAR_MAX. */
static size_t ax_slices(uint64_t n, uint64_t per)
{
    uint64_t k = n / per + 1, cpus = (uint64_t)par_cpus();
    if (k > cpus)
        k = cpus;
    return (size_t)(k < PAR_MAX ? k : PAR_MAX);
}

/* A thread's slice of a chunk's outputs of whole runs: entries [i0, i1),
 * entry i the part of output u0 + i. */
typedef struct {
    ax_state *s;
    const ax_layout *l;
    const void *out;
    uint64_t u0, i0, i1;
    int flags[RD_OP_NUM]; /* values mode: the slice's AX_RESULT_* by op bit */
} ax_whole_slice;

/* Stores a slice's outputs of whole runs from the chunk's parts
 * (ax_store_whole), or in values mode their values (ax_value_whole). */
static void *ax_whole_slice_run(void *arg)
{
    ax_whole_slice *w = arg;
    ax_state *s = w->s;
    ax_one one;
    if (s->values)
        ax_one_init(&one, s);
    for (uint64_t i = w->i0; i < w->i1; i++) {
        rd_extrema *e;
        rd_var *v;
        ax_parts_at(w->l, (void *)w->out, (size_t)i, &e, &v);
        rd_moments m = ax_get_moments(w->l, w->out, (size_t)i, s->p->T);
        ax_item it = ax_item_of(s, s->use_m ? &m : NULL, e, v);
        if (s->values)
            ax_value_whole(s, &one, w->u0 + i, &it, w->flags);
        else
            ax_store_whole(s, w->u0 + i, &it);
    }
    return NULL;
}

/* Stores n entries' outputs of whole runs, the first output u0's, on the
 * threads: each output is its own, so the order does not matter. */
static void ax_whole_entries(ax_state *s, const ax_layout *l, const void *out, uint64_t u0,
                             uint64_t n)
{
    ax_whole_slice w[PAR_MAX];
    size_t k = ax_slices(n, s->values ? AX_SLICE_VALUES : AX_SLICE_OUTPUTS);
    for (size_t t = 0; t < k; t++)
        w[t] = (ax_whole_slice){s, l, out, u0, n * t / k, n * (t + 1) / k, {0}};
    par_run(ax_whole_slice_run, w, sizeof w[0], k);
    for (size_t t = 0; t < k; t++)
        for (int b = 0; b < RD_OP_NUM; b++)
            s->vflags[b] |= w[t].flags[b];
}

/* Folds a chunk's result buffer. */
int ax_state_add_chunk(ax_state *s, const void *out, size_t capacity)
{
    const ax_plan *p = s->p;
    ax_layout l = ax_layout_for(p, capacity);
    ax_chunk_hdr h;
    memcpy(&h, out, sizeof h);
    const unsigned char *raw = (const unsigned char *)out + l.raw_at;
    size_t sz = dt_size(p->dtype);
    ax_fold_elems(s, raw, h.head);
    unsigned levels = h.levels < 64 ? (unsigned)h.levels : 63; /* this module's header */
    uint64_t u = h.u0, i = 0;
    if (ax_whole_runs(s)) { /* an entry a run and an output: all stored at once */
        ax_whole_entries(s, &l, out, u, h.nentries);
        i = h.nentries;
    }
    for (; i < h.nentries; i++) {
        ax_entry en = ax_entry_cap(p, u, h.u1, levels);
        rd_extrema *e;
        rd_var *v;
        size_t at = (size_t)i * p->width;
        uint64_t cnt = ax_entry_elems(p, &en);
        ax_parts_at(&l, (void *)out, at, &e, &v);
        if (p->unit == AX_UNIT_TILE) {
            rd_moments m = ax_get_moments(&l, out, at, cnt);
            ax_item it = ax_item_of(s, s->use_m ? &m : NULL, e, v);
            ax_fold_tile(s, en.u, en.n, en.level, &it);
        } else {
            ax_fold_block(s, &en, &l, out, at, cnt, e, v);
        }
        u += en.n;
    }
    if (h.u1 > h.u0) {
        uint64_t ls, ln;
        ax_unit_span(p, h.u1 - 1, &ls, &ln);
        s->pos = ls + ln;
    }
    ax_fold_elems(s, raw + h.head * sz, h.tail);
    return 0;
}

/* ---- results ---- */

/* The element type of op's result. */
dt_type ax_result_type(const ax_plan *p, int op)
{
    switch (op) {
    case RD_OP_SUM:
        if (dt_is_float(p->dtype))
            return DT_F64;
        return dt_is_signed_int(p->dtype) || p->dtype == DT_BOOL ? DT_I64 : DT_U64;
    case RD_OP_SUMSQ: return ax_sq_is_float(p->dtype) ? DT_F64 : DT_U64;
    case RD_OP_COUNT:
    case RD_OP_ARGMIN:
    case RD_OP_ARGMAX: return DT_I64;
    case RD_OP_MIN:
    case RD_OP_MAX: return p->dtype;
    default: return DT_F64;
    }
}

/* Root of output o's block tree of doubles t (-0.0 when empty). */
static double ax_tree_root(const ax_state *s, const double *t, uint64_t o)
{
    int depth = __builtin_popcountll(s->nb[o]);
    uint64_t n = s->p->nout;
    if (!depth)
        return -0.0;
    double acc = t[(depth - 1) * n + o];
    for (int i = depth - 2; i >= 0; i--)
        acc = rd_add(t[i * n + o], acc);
    return acc;
}

/* Root of output o's tree of variance partials. */
static rd_var ax_var_root(const ax_state *s, uint64_t o)
{
    int depth = __builtin_popcountll(s->nb[o]);
    uint64_t n = s->p->nout;
    if (!depth)
        return rd_var_empty();
    rd_var acc = s->tvar[(depth - 1) * n + o];
    for (int i = depth - 2; i >= 0; i--)
        acc = rd_var_merge(s->tvar[i * n + o], acc);
    return acc;
}

/* A flat index over the reduced axes in memory order, as the user's C-order
 * flat index over them (they differ for a Fortran-order array). */
static uint64_t ax_user_index(const ax_plan *p, uint64_t idx)
{
    if (!p->fortran)
        return idx;
    uint64_t digit[AX_MAX_DIMS];
    for (int a = 0; a < p->ndim; a++) /* memory order is the reversed axes: a = 0 fastest */
        if (p->axes & (1u << a)) {
            digit[a] = idx % p->shape[a];
            idx /= p->shape[a];
        }
    uint64_t u = 0;
    for (int a = 0; a < p->ndim; a++)
        if (p->axes & (1u << a))
            u = u * p->shape[a] + digit[a];
    return u;
}

/* Writes the value of key in the input's type at out. */
static void ax_unkey(dt_type t, rd_u64 key, void *out)
{
    int nan = key == RD_NAN_MIN_KEY || key == RD_NAN_MAX_KEY;
    switch (t) {
    case DT_F32: {
        uint32_t b = nan ? 0x7fc00000u : rd_unkey_f32(key);
        memcpy(out, &b, 4);
        break;
    }
    case DT_F64: {
        uint64_t b = nan ? 0x7ff8000000000000ull : rd_unkey_f64(key);
        memcpy(out, &b, 8);
        break;
    }
    case DT_F16:
    case DT_BF16: {
        uint16_t b = (uint16_t)(nan ? (t == DT_F16 ? 0x7e00u : 0x7fc0u) : rd_unkey_h16(key));
        memcpy(out, &b, 2);
        break;
    }
    default: {
        uint64_t v = dt_is_signed_int(t) ? key ^ ((rd_u64)1 << 63) : key;
        memcpy(out, &v, dt_size(t)); /* little-endian: the low bytes */
        break;
    }
    }
}

/* Mean of an exact integer sum: quotient plus the remainder's fraction. */
static double ax_int_mean(__int128 sum, uint64_t count)
{
    __int128 q = sum / (__int128)count, r = sum % (__int128)count;
    return (double)q + (double)r / (double)count;
}

/* Stores a double result; every NaN as the one quiet NaN, so that files
 * from every backend compare equal (a NaN's sign and payload are not kept). */
static void ax_put_double(void *dst, double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    if (d != d)
        b = 0x7ff8000000000000ull;
    memcpy(dst, &b, 8);
}

/* The final values of one op for outputs [o0, o1): their AX_RESULT_*
 * flags. */
static int ax_result_range(const ax_state *s, int op, int ddof, void *out, uint64_t o0,
                           uint64_t o1)
{
    const ax_plan *p = s->p;
    dt_type rt = ax_result_type(p, op);
    size_t rsz = dt_size(rt);
    int flags = 0;
    for (uint64_t o = o0; o < o1; o++) {
        char *dst = (char *)out + o * rsz;
        uint64_t cnt = s->count ? s->count[o] : 0;
        double d = 0;
        switch (op) {
        case RD_OP_SUM:
        case RD_OP_SUMSQ:
        case RD_OP_MEAN: {
            int sq = op == RD_OP_SUMSQ;
            if (sq ? s->sqf : s->fl) {
                d = cnt ? ax_tree_root(s, sq ? s->tsq : s->tsum, o) : 0.0;
                if (op == RD_OP_MEAN)
                    d = d / (double)cnt;
            } else if (op == RD_OP_MEAN) {
                d = cnt ? ax_int_mean((__int128)s->isum[o], cnt) : NAN;
            } else {
                rd_u128 v = sq ? s->isq[o] : s->isum[o];
                int64_t i64 = (int64_t)(uint64_t)v;
                if (rt == DT_I64 && (__int128)v != (__int128)i64)
                    flags |= AX_RESULT_RANGE;
                if (rt == DT_U64 && (v >> 64))
                    flags |= AX_RESULT_RANGE;
                uint64_t lo = (uint64_t)v;
                memcpy(dst, &lo, 8);
                break;
            }
            if (op == RD_OP_MEAN && !cnt)
                flags |= AX_RESULT_EMPTY;
            ax_put_double(dst, d);
            break;
        }
        case RD_OP_COUNT: {
            int64_t c = (int64_t)cnt;
            memcpy(dst, &c, 8);
            break;
        }
        case RD_OP_VAR:
        case RD_OP_STD: {
            rd_var v = ax_var_root(s, o);
            d = rd_var_value(v, (double)ddof, op == RD_OP_STD);
            if ((double)v.n - ddof <= 0)
                flags |= AX_RESULT_EMPTY;
            ax_put_double(dst, d);
            break;
        }
        default: { /* extrema */
            const rd_extrema *e = &s->ext[o];
            int mx = op == RD_OP_MAX || op == RD_OP_ARGMAX;
            rd_u64 idx = mx ? e->max_idx : e->min_idx, key = mx ? e->max_key : e->min_key;
            if (idx == RD_NO_INDEX) {
                flags |= AX_RESULT_EMPTY;
                memset(dst, 0, rsz);
            } else if (op == RD_OP_MIN || op == RD_OP_MAX) {
                ax_unkey(p->dtype, key, dst);
            } else {
                int64_t i = (int64_t)ax_user_index(p, idx);
                memcpy(dst, &i, 8);
            }
        }
        }
    }
    return flags;
}

/* A thread's outputs [o0, o1) of ax_state_result, and their flags. */
typedef struct {
    const ax_state *s;
    int op, ddof;
    void *out;
    uint64_t o0, o1;
    int flags;
} ax_result_slice;

/* Computes a slice of ax_state_result. */
static void *ax_result_slice_run(void *arg)
{
    ax_result_slice *w = arg;
    w->flags = ax_result_range(w->s, w->op, w->ddof, w->out, w->o0, w->o1);
    return NULL;
}

/* The final values of one op, on the threads where the outputs are many
 * (each output's value is its own). */
int ax_state_result(const ax_state *s, int op, int ddof, void *out)
{
    int flags = 0;
    if (s->values) { /* computed as chunks came, with the state's ddof */
        const void *v = ax_state_values(s, op, &flags);
        size_t bytes = (size_t)s->p->nout * dt_size(ax_result_type(s->p, op));
        v ? memcpy(out, v, bytes) : memset(out, 0, bytes); /* an op not asked for: zeros */
        return flags;
    }
    ax_result_slice w[PAR_MAX];
    uint64_t n = s->p->nout;
    size_t k = ax_slices(n, AX_SLICE_OUTPUTS);
    for (size_t t = 0; t < k; t++)
        w[t] = (ax_result_slice){s, op, ddof, out, n * t / k, n * (t + 1) / k, 0};
    par_run(ax_result_slice_run, w, sizeof w[0], k);
    flags = 0;
    for (size_t t = 0; t < k; t++)
        flags |= w[t].flags;
    return flags;
}

/* A state that computes each op's values as chunks come (see axis.h), or
 * one as ax_state_new's where the plan's outputs are not whole runs. */
ax_state *ax_state_new_values(const ax_plan *p, int ddof)
{
    if (!ax_plan_whole_runs(p))
        return ax_state_new(p);
    ax_state *s = ax_state_bare(p);
    if (!s)
        return NULL;
    s->values = 1;
    s->ddof = ddof;
    s->D = 1;
    int fail = 0;
    for (int k = 0; k < RD_OP_NUM; k++)
        s->vals[k] = ax_calloc((p->ops >> k) & 1, p->nout, dt_size(ax_result_type(p, 1 << k)),
                               &fail);
    s->carry = ax_calloc(1, RD_TILE, dt_size(p->dtype), &fail);
    if (fail) {
        ax_state_free(s);
        return NULL;
    }
    return s;
}

/* The values of op computed as chunks came (see axis.h). */
const void *ax_state_values(const ax_state *s, int op, int *flags)
{
    int k = __builtin_ctz((unsigned)op);
    if (!s->values)
        return NULL;
    *flags = s->vflags[k];
    return s->vals[k];
}

/* ---- the operation on the engine ---- */

/* Bytes of a chunk's input a CPU unit of work covers (a piece of its units). */
#define AX_PIECE ((size_t)256 << 10)

/* The most bytes a thread reads into its own buffer at a time. */
#define AX_PIECE_MAX ((size_t)1 << 20)

/* Elements of a unit of plan p (a whole tile, or 16 rows). */
static uint64_t ax_unit_elems(const ax_plan *p)
{
    return p->unit == AX_UNIT_TILE ? (p->T < RD_TILE ? p->T : RD_TILE)
                                   : (uint64_t)RD_AXIS_BLOCK * p->C;
}

/* The level of the entries the CPU reads and computes at a time (its
 * sub-entries): the contract's AX_FOLD_LEVELS, less where 2^that units are
 * more than AX_PIECE_MAX bytes, so that they are read with pread. */
static unsigned ax_sub_levels(const ax_plan *p)
{
    uint64_t bytes = ax_unit_elems(p) * dt_size(p->dtype);
    unsigned k = AX_FOLD_LEVELS;
    while (k && p->unit != AX_UNIT_NONE && (bytes << k) > AX_PIECE_MAX)
        k--;
    return k;
}

/* The bytes of a thread's read buffer for plan p: a piece, or the largest
 * sub-entry where that is longer and at most AX_PIECE_MAX, so that entries
 * are read with pread, not faulted in from the view page by page. */
static size_t ax_read_bytes(const ax_plan *p)
{
    uint64_t per = p->unit == AX_UNIT_TILE ? p->tiles_per_run : p->blocks_per_sweep;
    uint64_t unit = ax_unit_elems(p), sub = (uint64_t)1 << ax_sub_levels(p);
    uint64_t n = per < sub ? per : sub;
    uint64_t max = AX_PIECE_MAX / dt_size(p->dtype);
    if (p->unit == AX_UNIT_NONE || unit > max / (n ? n : 1))
        return AX_PIECE;
    size_t bytes = (size_t)(unit * n) * dt_size(p->dtype);
    return bytes > AX_PIECE ? bytes : AX_PIECE;
}

/* Result buffer bytes (engine_ops.out_bytes). */
static size_t ax_op_out_bytes(const void *op, size_t capacity)
{
    const ax_job *j = op;
    return ax_out_bytes(j->plan, capacity);
}

/* The most levels of the entries the CPU engine cuts a chunk into. */
#define AX_CPU_LEVELS 40

/* Bytes a thread's fold of one entry (ax_op_fold) holds at most. */
#define AX_FOLD_SCRATCH ((size_t)2 << 20)

/* Whole units of plan p in `bytes` bytes of input (about). */
static uint64_t ax_units_in(const ax_plan *p, size_t bytes)
{
    return bytes / dt_size(p->dtype) / ax_unit_elems(p);
}

/* The layout of a thread's fold of an entry of 2^levels units from
 * sub-entries of 2^sub: a slot of width parts for each level of its
 * counter and `batch` for sub-entries read at once; returns its bytes. */
static size_t ax_fold_layout(const ax_plan *p, unsigned levels, unsigned sub, size_t batch,
                             ax_layout *ls)
{
    memset(ls, 0, sizeof *ls);
    ls->max_parts = (levels - sub + 1 + batch) * p->width;
    ax_layout_arrays(p, ls);
    return ls->raw_at;
}

/* Whether a thread folds an entry of 2^levels units from its sub-entries
 * (ax_op_fold): they are smaller, and its counter fits AX_FOLD_SCRATCH. */
static int ax_folds(const ax_plan *p, unsigned levels)
{
    ax_layout ls;
    unsigned sub = ax_sub_levels(p);
    return levels > sub && ax_fold_layout(p, levels, sub, 1, &ls) <= AX_FOLD_SCRATCH;
}

/* The levels of the CPU engine's entries for a chunk of `bytes` bytes: the
 * contract's AX_FOLD_LEVELS, or where the chunk holds more units per thread
 * (par_cpus), the most that leaves every thread an entry, so that a
 * thread folds its units whole and the host (one thread) folds a few parts
 * a chunk. The bits are the same for any levels. */
static unsigned ax_op_levels(const ax_plan *p, size_t bytes)
{
    unsigned k = AX_FOLD_LEVELS;
    if (p->unit == AX_UNIT_NONE)
        return k;
    uint64_t per = ax_units_in(p, bytes) / (uint64_t)par_cpus();
    while (k < AX_CPU_LEVELS && ((uint64_t)2 << k) <= per && ax_folds(p, k + 1))
        k++;
    return k;
}

/* Units of CPU work (engine_ops.units): pieces of the chunk, or with the
 * levels of ax_op_levels above the contract's, about one a whole entry. */
static size_t ax_op_units(const void *op, size_t bytes)
{
    const ax_job *j = op;
    unsigned k = ax_op_levels(j->plan, bytes);
    if (k > AX_FOLD_LEVELS)
        return (size_t)(ax_units_in(j->plan, bytes) >> k);
    return bytes / AX_PIECE + 1;
}

static pthread_key_t ax_buffer_key;
static int ax_buffer_keyed;
static pthread_once_t ax_buffer_once = PTHREAD_ONCE_INIT;

/* Creates the key whose destructor frees a thread's buffer when it exits. */
static void ax_buffer_key_create(void)
{
    ax_buffer_keyed = pthread_key_create(&ax_buffer_key, free) == 0;
}

/* This thread's buffer of at least `bytes` bytes, kept for its next
 * chunks (fresh pages cost a fault each) and freed when the thread
 * exits, or NULL. */
static unsigned char *ax_thread_buffer(size_t bytes)
{
    static _Thread_local unsigned char *buf;
    static _Thread_local size_t have;
    if (have < bytes) {
        pthread_once(&ax_buffer_once, ax_buffer_key_create);
        free(buf);
        buf = aligned_alloc(64, bytes);
        have = buf ? bytes : 0;
        if (ax_buffer_keyed)
            pthread_setspecific(ax_buffer_key, buf);
    }
    return buf;
}

/* A thread's reading of a chunk's entries: its own buffer of room bytes
 * filled by pread from the chunk's view (io_view_read), or the chunk's
 * data where it is no view. */
typedef struct {
    const ax_plan *p;
    const engine_chunk *c;
    uint64_t e0;             /* the chunk's first element */
    io_view_fault f;
    unsigned char *piece;    /* NULL: the entries are read in place */
    size_t room;
    unsigned char *scratch;  /* AX_FOLD_SCRATCH bytes for ax_op_fold */
} ax_reader;

/* Computes entries ent[0 .. n) (of at most 2^AX_FOLD_LEVELS units, in
 * stream order) as parts at .. at + n of buffer out (layout l), a run of
 * them at a time that the reader's buffer holds (one, when an entry is
 * larger than it or the data is read in place); a piece that cannot be
 * read so is read in place. */
static void ax_read_entries(ax_reader *r, const ax_entry *ent, size_t n, const ax_layout *l,
                            size_t at, void *out)
{
    const ax_plan *p = r->p;
    size_t sz = dt_size(p->dtype);
    for (size_t i = 0; i < n;) {
        uint64_t s0, s1, n0, n1;
        ax_unit_span(p, ent[i].u, &s0, &n0);
        size_t k = 1;
        while (r->piece && i + k < n) {
            ax_unit_span(p, ent[i + k].u + ent[i + k].n - 1, &s1, &n1);
            if ((s1 + n1 - s0) * sz > r->room)
                break;
            k++;
        }
        ax_unit_span(p, ent[i + k - 1].u + ent[i + k - 1].n - 1, &s1, &n1);
        size_t len = (size_t)(s1 + n1 - s0) * sz, skip = (size_t)(s0 - r->e0) * sz;
        if (r->piece && len <= r->room && io_view_read(&r->f, skip, r->piece, len) == 0)
            ax_cpu_entries(p, l, r->piece, s0, ent + i, k, at + i, out);
        else
            ax_cpu_entries(p, l, r->c->host_in, r->e0, ent + i, k, at + i, out);
        i += k;
    }
}

/* Copies n parts from part `from` of src (layout ls) to part `to` of dst
 * (layout ld), the arrays the ops need. */
static void ax_copy_parts(const ax_layout *ld, void *dst, size_t to, const ax_layout *ls,
                          const void *src, size_t from, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (ld->use_sum)
        memcpy(d + ld->sum_at + to * ld->sum_size, s + ls->sum_at + from * ls->sum_size,
               n * ld->sum_size);
    if (ld->use_sq)
        memcpy(d + ld->sq_at + to * ld->sq_size, s + ls->sq_at + from * ls->sq_size,
               n * ld->sq_size);
    if (ld->use_cnt)
        memcpy(d + ld->count_at + to * 8, s + ls->count_at + from * 8, n * 8);
    if (ld->use_e)
        memcpy(d + ld->extrema_at + to * sizeof(rd_extrema),
               s + ls->extrema_at + from * sizeof(rd_extrema), n * sizeof(rd_extrema));
    if (ld->use_v)
        memcpy(d + ld->var_at + to * sizeof(rd_var), s + ls->var_at + from * sizeof(rd_var),
               n * sizeof(rd_var));
}

/* Sums li .. li + n of an array of sums of `size` bytes at a become their
 * merge with sums ri .. ri + n, the units after them: doubles by
 * rd_add(left, right) (size 8), exact 128-bit sums added. */
static void ax_merge_sums(unsigned char *a, size_t size, size_t li, size_t ri, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rd_u64 *l = (rd_u64 *)(a + (li + i) * size), *r = (rd_u64 *)(a + (ri + i) * size);
        ax_merge_sum(size == 8, l, l + (size == 16), r, r + (size == 16));
        memcpy(l, r, size);
    }
}

/* Parts li .. li + n of buffer b (layout l) become their merge with parts
 * ri .. ri + n, the units after them, as the host's fold merges them. */
static void ax_merge_at(const ax_layout *l, void *b, size_t li, size_t ri, size_t n)
{
    unsigned char *x = b;
    if (l->use_sum)
        ax_merge_sums(x + l->sum_at, l->sum_size, li, ri, n);
    if (l->use_sq)
        ax_merge_sums(x + l->sq_at, l->sq_size, li, ri, n);
    uint64_t *cnt = (uint64_t *)(x + l->count_at);
    for (size_t i = 0; l->use_cnt && i < n; i++)
        cnt[li + i] += cnt[ri + i];
    rd_extrema *e;
    rd_var *v;
    ax_parts_at(l, b, 0, &e, &v);
    for (size_t i = 0; e && i < n; i++)
        rd_extrema_merge(&e[li + i], &e[ri + i]);
    if (v) /* v[li + c] = rd_var_merge(v[li + c], v[ri + c]): a tree of one level */
        ax_fold_vars(v + li, 0, 0, 1, 0, v + ri, n);
}

/* Entry en (ax_folds) as part i of buffer out (layout l) on the calling
 * thread: its sub-entries (ax_sub_levels), runs of them that the reader's
 * buffer holds at a time, folded in order by a binary counter (the
 * pairwise tree over them) in the reader's scratch. */
static void ax_op_fold(ax_reader *r, const ax_entry *en, const ax_layout *l, size_t i, void *out)
{
    const ax_plan *p = r->p;
    unsigned S = ax_sub_levels(p);
    const uint64_t sub = (uint64_t)1 << S;
    uint64_t s0, s1, n1;
    ax_unit_span(p, en->u, &s0, &n1);
    ax_unit_span(p, en->u + sub - 1, &s1, &n1);
    size_t W = p->width, D = en->level - S + 1, batch = 1;
    size_t span = (size_t)(s1 + n1 - s0) * dt_size(p->dtype);
    ax_layout ls;
    while (batch < 64 && r->piece && (batch + 1) * span <= r->room &&
           ax_fold_layout(p, en->level, S, batch + 1, &ls) <= AX_FOLD_SCRATCH)
        batch++;
    ax_fold_layout(p, en->level, S, batch, &ls);
    ax_entry run[64];
    size_t top = 0;
    for (uint64_t k = 0; k < en->n >> S;) {
        size_t m = 0;
        for (; m < batch && k + m < en->n >> S; m++)
            run[m] = (ax_entry){en->u + (k + m) * sub, sub, S};
        ax_read_entries(r, run, m, &ls, D, r->scratch);
        for (size_t q = 0; q < m; q++, k++) {
            size_t at = (D + q) * W;
            for (uint64_t c = k; c & 1; c >>= 1, at = top * W)
                ax_merge_at(&ls, r->scratch, --top * W, at, W);
            if (at != top * W)
                ax_copy_parts(&ls, r->scratch, top * W, &ls, r->scratch, at, W);
            top++;
        }
    }
    ax_copy_parts(l, out, i * W, &ls, r->scratch, 0, W);
}

/* Pieces [a, b) of a chunk on the calling thread: their share of the
 * chunk's entries (ax_op_levels' for the chunk); piece 0 writes the header
 * and the raw ends too (engine_ops.cpu). A chunk that is a view of a plain
 * file has its entries read in pieces with pread (io_view_read) into a
 * buffer of this thread's (ax_read_bytes), as the whole-array reduction
 * reads, so that the view's pages are never mapped; an entry larger than
 * the buffer, or a piece that cannot be read so, is read from the view. */
static void ax_op_cpu(const engine_chunk *c, size_t a, size_t b)
{
    const ax_job *j = c->op;
    const ax_plan *p = j->plan;
    size_t sz = dt_size(p->dtype), pieces = ax_op_units(j, c->bytes);
    uint64_t e0 = j->first + c->offset / sz, e1 = e0 + c->bytes / sz;
    unsigned levels = ax_op_levels(p, c->bytes);
    ax_layout l = ax_layout_for(p, c->capacity);
    ax_chunk_hdr h = ax_chunk_of(p, e0, e1);
    h.levels = levels;
    h.nentries = ax_count_entries(p, h.u0, h.u1, levels);
    if (a == 0)
        ax_chunk_ends(p, &l, &h, c->host_in, e0, e1, c->host_out);
    size_t ne = (size_t)h.nentries, ea = ne * a / pieces, eb = ne * b / pieces;
    ax_reader r = {.p = p, .c = c, .e0 = e0, .room = ax_read_bytes(p)};
    unsigned char *buf = ea < eb ? ax_thread_buffer(ax_align(r.room) + AX_FOLD_SCRATCH) : NULL;
    if (buf && io_view_owner(c->host_in, &r.f))
        r.piece = buf;
    r.scratch = buf ? buf + ax_align(r.room) : NULL;
    unsigned sub = ax_sub_levels(p), fold = sub; /* entries of sub < level <= fold are folded */
    while (buf && fold < levels && ax_folds(p, fold + 1))
        fold++;
    ax_entry run[64];
    uint64_t u = h.u0;
    for (size_t i = 0; i < eb;) {
        size_t n = 0, at = i;
        while (i < eb && n < 64) {
            ax_entry e = ax_entry_cap(p, u, h.u1, levels);
            u += e.n;
            if (i++ < ea)
                continue;
            if (n == 0)
                at = i - 1;
            if (e.level > sub && e.level <= fold) {
                ax_read_entries(&r, run, n, &l, at, c->host_out);
                n = 0;
                ax_op_fold(&r, &e, &l, i - 1, c->host_out);
                continue;
            }
            run[n++] = e;
        }
        ax_read_entries(&r, run, n, &l, at, c->host_out);
    }
}

/* Folds a chunk's results into the state, in order (engine_ops.collect). */
static int ax_op_collect(const engine_chunk *c, io_status *st)
{
    const ax_job *j = c->op;
    (void)st;
    return ax_state_add_chunk(j->st, c->host_out, c->capacity);
}

const engine_ops ax_engine_ops = {
    .name = "reduction along axes",
    .in_what = "a chunk buffer (--chunk)",
    .out_what = "partials along axes",
    .out_bytes = ax_op_out_bytes,
    .units = ax_op_units,
    .cpu = ax_op_cpu,
    .collect = ax_op_collect,
};

/* ---- shards: a state of one part of the stream, merged in order ---- */

#define AX_NONE UINT64_MAX

/* What a shard's state holds beyond a whole-stream state's: the run it
 * starts inside (its tiles' trees from the shard's first tile), and per
 * output element its first and end stage-2 index and the partials of the
 * stage-2 block it starts inside, which only the shards before can open. */
struct ax_shard {
    uint64_t e0, e1;          /* the shard's elements */
    uint64_t lead_run;        /* the run it starts inside (not at its first tile), or AX_NONE */
    uint64_t lead_tile;       /* that run's first tile in this shard */
    uint64_t lead_done;       /* that run ended in the shard: its partial is below */
    rd_tree lsum, lsq;
    rd_vtree lvar;
    ax_item lrun;
    uint64_t *j0, *jend;      /* per output element: stage-2 indices [j0, jend), j0 AX_NONE: none */
    double *ls, *lq, *lx;     /* the lead block's sums, squares, element values */
    rd_var *lv;               /* its variance partials */
    unsigned char *le;        /* an element counted (T == 1) */
};

/* Frees a shard's part of a state; accepts NULL. */
static void ax_shard_free(struct ax_shard *h)
{
    if (!h)
        return;
    free(h->j0);
    free(h->jend);
    free(h->ls);
    free(h->lq);
    free(h->lx);
    free(h->lv);
    free(h->le);
    free(h);
}

/* The start of the unit that holds element e (e itself without tiles): a
 * shard boundary, so that no tile is cut. */
uint64_t ax_shard_cut(const ax_plan *p, uint64_t e)
{
    if (p->unit != AX_UNIT_TILE || e >= p->nelem)
        return e < p->nelem ? e : p->nelem;
    uint64_t start, n;
    ax_unit_span(p, ax_unit_at(p, e), &start, &n);
    return start;
}

/* The levels of the maximal aligned subtrees of leaves [a, b) into lv
 * (rd_tree's stack after pushing them); returns how many. */
static int ax_span_levels(uint64_t a, uint64_t b, unsigned char *lv)
{
    int d = 0;
    while (a < b) {
        unsigned k = a ? (unsigned)__builtin_ctzll(a) : 63;
        while (k && b - a < ((uint64_t)1 << k))
            k--;
        lv[d++] = (unsigned char)k;
        a += (uint64_t)1 << k;
    }
    return d;
}

/* The first block leaf of output o's own tree in the shard. */
static uint64_t ax_shard_b0(const struct ax_shard *h, uint64_t o)
{
    return (h->j0[o] + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
}

/* The end of output o's lead block in the shard (j0 when it starts on a block). */
static uint64_t ax_shard_lead_end(const ax_plan *p, const struct ax_shard *h, uint64_t o)
{
    uint64_t end = ax_shard_b0(h, o) * RD_AXIS_BLOCK;
    return end < p->J ? end : p->J;
}

/* Notes that stage-2 index j of output o is folded (its first: the tree
 * starts at the next block boundary). */
static void ax_shard_seen(ax_state *s, uint64_t o, uint64_t j, uint64_t end)
{
    struct ax_shard *h = s->sh;
    if (h->j0[o] == AX_NONE) {
        h->j0[o] = j;
        s->nb[o] = ax_shard_b0(h, o);
    }
    h->jend[o] = end;
}

/* Keeps a stage-2 partial of the block that output o's part starts inside
 * (its order-free parts counted at once); 1 when it was one. */
static int ax_shard_lead(ax_state *s, uint64_t o, uint64_t j, const ax_item *it, int elem,
                         double x)
{
    struct ax_shard *h = s->sh;
    ax_shard_seen(s, o, j, j + 1);
    if (j >= ax_shard_lead_end(s->p, h, o))
        return 0;
    size_t at = (size_t)(o * RD_AXIS_BLOCK + j % RD_AXIS_BLOCK);
    if (h->ls)
        h->ls[at] = it->sum;
    if (h->lq)
        h->lq[at] = it->sq;
    if (h->lv)
        h->lv[at] = it->var;
    if (h->lx) {
        h->lx[at] = x;
        h->le[at] = (unsigned char)elem;
    }
    ax_add_free(s, o, it, j * s->p->T);
    return 1;
}

/* Pushes a subtree of 2^level blocks onto output o's stack, which holds the
 * maximal aligned subtrees of the blocks since its first (rd_tree's order),
 * entry d at d * nout + o. */
static void ax_push_level(ax_state *s, uint64_t o, uint64_t first, double sum, double sq,
                          const rd_var *v, unsigned level)
{
    unsigned char lv[130];
    uint64_t nout = s->p->nout, idx = s->nb[o];
    int depth = ax_span_levels(first, idx, lv), m = 0;
    for (uint64_t i = idx >> level; depth - m > 0 && lv[depth - m - 1] == level + m && (i & 1);
         i >>= 1)
        m++;
    s->nb[o] += (uint64_t)1 << level;
    rd_var w = v ? *v : rd_var_empty();
    for (; m > 0; m--) {
        size_t at = (size_t)(--depth * nout + o);
        if (s->tsum)
            sum = rd_add(s->tsum[at], sum);
        if (s->tsq)
            sq = rd_add(s->tsq[at], sq);
        if (s->tvar)
            w = rd_var_merge(s->tvar[at], w);
    }
    size_t at = (size_t)(depth * nout + o);
    if (s->tsum)
        s->tsum[at] = sum;
    if (s->tsq)
        s->tsq[at] = sq;
    if (s->tvar)
        s->tvar[at] = w;
}

/* A shard's block push: its stack starts at its first block leaf. */
static void ax_shard_push(ax_state *s, uint64_t o, double sum, double sq, const rd_var *v,
                          unsigned level)
{
    ax_push_level(s, o, ax_shard_b0(s->sh, o), sum, sq, v, level);
}

/* A chunk's block entry (2^level whole blocks from index j) for output o. */
static void ax_shard_block(ax_state *s, uint64_t o, uint64_t j, const ax_entry *en, double sum,
                           double sq, const rd_var *v)
{
    uint64_t end = j + en->n * RD_AXIS_BLOCK;
    ax_shard_seen(s, o, j, end < s->p->J ? end : s->p->J);
    ax_shard_push(s, o, sum, sq, v, en->level);
}

/* At the end of the run the shard starts inside: keeps its partial (the
 * tiles' trees from the shard's first tile) for the merge; 1 when it was it. */
static int ax_shard_run_end(ax_state *s, uint64_t run)
{
    struct ax_shard *h = s->sh;
    if (run != h->lead_run || h->lead_done)
        return 0;
    h->lsum = s->rsum;
    h->lsq = s->rsq;
    h->lvar = s->rvar;
    h->lrun = s->run;
    h->lead_done = 1;
    return 1;
}

/* A new state for the elements [e0, e1) of plan p's stream (e0 and e1 from
 * ax_shard_cut); NULL when out of memory. */
ax_state *ax_state_new_shard(const ax_plan *p, uint64_t e0, uint64_t e1)
{
    ax_state *s = ax_state_new(p);
    if (!s)
        return NULL;
    struct ax_shard *h = calloc(1, sizeof *h);
    s->sh = h;
    if (!h)
        goto out_free;
    /* a stack from any leaf holds up to twice a binary counter's entries */
    uint64_t nd = p->nout * (uint64_t)s->D * 2, n = p->nout, nl = n * RD_AXIS_BLOCK;
    int fail = 0;
    double **trees[2] = {&s->tsum, &s->tsq};
    for (int i = 0; i < 2; i++)
        if (*trees[i]) {
            free(*trees[i]);
            *trees[i] = ax_calloc(1, nd, sizeof(double), &fail);
        }
    if (s->tvar) {
        free(s->tvar);
        s->tvar = ax_calloc(1, nd, sizeof(rd_var), &fail);
    }
    s->D *= 2;
    h->j0 = ax_calloc(1, n, sizeof(uint64_t), &fail);
    h->jend = ax_calloc(1, n, sizeof(uint64_t), &fail);
    h->ls = ax_calloc(s->bsum != NULL, nl, sizeof(double), &fail);
    h->lq = ax_calloc(s->bsq != NULL, nl, sizeof(double), &fail);
    h->lv = ax_calloc(s->bvar && !s->bvacc, nl, sizeof(rd_var), &fail);
    h->lx = ax_calloc(s->bvacc != NULL, nl, sizeof(double), &fail);
    h->le = ax_calloc(s->bvacc != NULL, nl, 1, &fail);
    if (fail)
        goto out_free;
    for (uint64_t o = 0; o < n; o++)
        h->j0[o] = AX_NONE;
    h->e0 = e0;
    h->e1 = e1;
    h->lead_run = AX_NONE;
    s->pos = e0;
    if (p->unit == AX_UNIT_TILE && e0 < e1 && (e0 % p->T) != 0) {
        uint64_t u = ax_unit_at(p, e0);
        h->lead_run = u / p->tiles_per_run;
        h->lead_tile = u % p->tiles_per_run;
        rd_tree_init_at(&s->rsum, h->lead_tile);
        rd_tree_init_at(&s->rsq, h->lead_tile);
        rd_vtree_init_at(&s->rvar, h->lead_tile);
        memset(&s->run, 0, sizeof s->run);
        s->run.ext = rd_extrema_empty();
    }
    return s;
out_free:
    ax_state_free(s);
    return NULL;
}

/* Appends the run partial r (trees from the shard's first tile) to a's run
 * in progress. */
static void ax_run_append(ax_state *a, const rd_tree *ts, const rd_tree *tq, const rd_vtree *tv,
                          const ax_item *r)
{
    for (int i = 0; i < ts->depth; i++)
        rd_tree_push_level(&a->rsum, ts->value[i], ts->level[i]);
    for (int i = 0; i < tq->depth; i++)
        rd_tree_push_level(&a->rsq, tq->value[i], tq->level[i]);
    for (int i = 0; a->use_v && i < tv->depth; i++)
        rd_vtree_push_level(&a->rvar, tv->value[i], tv->level[i]);
    a->run.isum += r->isum;
    a->run.isq += r->isq;
    a->run.count += r->count;
    rd_extrema_merge(&a->run.ext, &r->ext);
}

/* Stage 1 of a merge: the run b starts inside goes on a's, and a takes b's
 * run in progress. */
static void ax_merge_runs(ax_state *a, const ax_state *b)
{
    const ax_plan *p = a->p;
    const struct ax_shard *h = b->sh;
    if (p->unit != AX_UNIT_TILE)
        return;
    if (h->lead_run != AX_NONE) {
        int done = h->lead_done != 0;
        ax_run_append(a, done ? &h->lsum : &b->rsum, done ? &h->lsq : &b->rsq,
                      done ? &h->lvar : &b->rvar, done ? &h->lrun : &b->run);
        if (!done)
            return;
        a->run.sum = rd_tree_finish(&a->rsum);
        a->run.sq = rd_tree_finish(&a->rsq);
        if (a->use_v)
            a->run.var = rd_vtree_finish(&a->rvar);
        uint64_t o, j, span;
        ax_locate(p, h->lead_run, &o, &j, &span);
        ax_fold(a, o, j, &a->run, 0, 0);
    }
    a->rsum = b->rsum;
    a->rsq = b->rsq;
    a->rvar = b->rvar;
    a->run = b->run;
}

/* Stage 2 of a merge for output o: b's lead block's partials, its subtrees
 * of blocks, its open block and its order-free parts go on a's. */
static void ax_merge_output(ax_state *a, const ax_state *b, uint64_t o)
{
    const ax_plan *p = a->p;
    const struct ax_shard *h = b->sh;
    uint64_t j0 = h->j0[o], lend = ax_shard_lead_end(p, h, o), nout = p->nout;
    for (uint64_t j = j0; j < lend && j < h->jend[o]; j++) {
        size_t at = (size_t)(o * RD_AXIS_BLOCK + j % RD_AXIS_BLOCK);
        ax_item it;
        memset(&it, 0, sizeof it);
        it.ext = rd_extrema_empty();
        it.sum = h->ls ? h->ls[at] : 0;
        it.sq = h->lq ? h->lq[at] : 0;
        it.var = h->lv ? h->lv[at] : rd_var_empty();
        ax_fold(a, o, j, &it, h->le ? h->le[at] : 0, h->lx ? h->lx[at] : 0);
    }
    unsigned char lv[130];
    int depth = ax_span_levels(ax_shard_b0(h, o), b->nb[o], lv);
    for (int d = 0; d < depth; d++) {
        size_t at = (size_t)(d * nout + o);
        ax_push_level(a, o, 0, b->tsum ? b->tsum[at] : 0, b->tsq ? b->tsq[at] : 0,
                      b->tvar ? &b->tvar[at] : NULL, lv[d]);
    }
    if (h->jend[o] > lend) {
        if (a->bsum)
            a->bsum[o] = b->bsum[o];
        if (a->bsq)
            a->bsq[o] = b->bsq[o];
        if (a->bvar)
            a->bvar[o] = b->bvar[o];
        if (a->bvacc)
            a->bvacc[o] = b->bvacc[o];
    }
    if (a->isum)
        a->isum[o] += b->isum[o];
    if (a->isq)
        a->isq[o] += b->isq[o];
    if (a->count)
        a->count[o] += b->count[o];
    if (a->ext)
        rd_extrema_merge(&a->ext[o], &b->ext[o]);
}

/* Appends shard state b to a, the state of every element before b's. */
int ax_state_merge(ax_state *a, const ax_state *b)
{
    const struct ax_shard *h = b->sh;
    if (!h || a->sh || a->values || h->e0 != a->pos)
        return IO_ERR_FORMAT;
    if (h->e0 == h->e1)
        return 0;
    ax_merge_runs(a, b);
    for (uint64_t o = 0; o < a->p->nout; o++)
        if (h->j0[o] != AX_NONE)
            ax_merge_output(a, b, o);
    a->pos = h->e1;
    return 0;
}

/* ---- a shard state's bytes ---- */

/* The number of stage-2 indices j of output o whose run lies before run R:
 * the first j of o at or after R in the stream (J when none). */
static uint64_t ax_runs_before(const ax_plan *p, uint64_t o, uint64_t R)
{
    int nrem = p->ngroups - (p->T > 1);
    uint64_t rd[AX_MAX_DIMS], od[AX_MAX_DIMS], P = 0, rest = p->J;
    if (R >= p->nruns)
        return p->J;
    for (int g = nrem - 1; g >= 0; g--) {
        rd[g] = R % p->glen[g];
        R /= p->glen[g];
        if (!p->greduced[g]) {
            od[g] = o % p->glen[g];
            o /= p->glen[g];
        }
    }
    for (int g = 0; g < nrem; g++) {
        if (p->greduced[g]) {
            rest /= p->glen[g];
            P = P * p->glen[g] + rd[g];
        } else if (od[g] != rd[g]) {
            return (od[g] > rd[g] ? P : P + 1) * rest;
        }
    }
    return P;
}

/* One piece of a state's bytes. */
typedef struct {
    void *at;
    size_t bytes;
} ax_piece;

/* The pieces of shard state s in their order; returns how many. */
static int ax_pieces(ax_state *s, ax_piece *pc)
{
    struct ax_shard *h = s->sh;
    uint64_t n = s->p->nout, nd = n * (uint64_t)s->D, nl = n * RD_AXIS_BLOCK;
    int k = 0;
#define AX_PIECE_OF(ptr, count)                                                          \
    do {                                                                                 \
        if (ptr)                                                                         \
            pc[k++] = (ax_piece){(ptr), (size_t)(count) * sizeof *(ptr)};               \
    } while (0)
    AX_PIECE_OF(&h->lead_run, 1);
    AX_PIECE_OF(&h->lead_tile, 1);
    AX_PIECE_OF(&h->lead_done, 1);
    AX_PIECE_OF(&h->lsum, 1);
    AX_PIECE_OF(&h->lsq, 1);
    AX_PIECE_OF(&h->lvar, 1);
    AX_PIECE_OF(&h->lrun, 1);
    AX_PIECE_OF(&s->rsum, 1);
    AX_PIECE_OF(&s->rsq, 1);
    AX_PIECE_OF(&s->rvar, 1);
    AX_PIECE_OF(&s->run, 1);
    AX_PIECE_OF(h->j0, n);
    AX_PIECE_OF(h->jend, n);
    AX_PIECE_OF(s->nb, n);
    AX_PIECE_OF(s->bsum, n);
    AX_PIECE_OF(s->bsq, n);
    AX_PIECE_OF(s->bvar, n);
    AX_PIECE_OF(s->bvacc, n);
    AX_PIECE_OF(s->tsum, nd);
    AX_PIECE_OF(s->tsq, nd);
    AX_PIECE_OF(s->tvar, nd);
    AX_PIECE_OF(s->isum, n);
    AX_PIECE_OF(s->isq, n);
    AX_PIECE_OF(s->count, n);
    AX_PIECE_OF(s->ext, n);
    AX_PIECE_OF(h->ls, nl);
    AX_PIECE_OF(h->lq, nl);
    AX_PIECE_OF(h->lv, nl);
    AX_PIECE_OF(h->lx, nl);
    AX_PIECE_OF(h->le, nl);
#undef AX_PIECE_OF
    return k;
}

/* Bytes of shard state s as ax_state_save writes them. */
size_t ax_state_bytes(const ax_state *s)
{
    ax_piece pc[32];
    size_t total = 0;
    for (int i = 0, n = ax_pieces((ax_state *)s, pc); i < n; i++)
        total += pc[i].bytes;
    return total;
}

/* Defines NAME: a tree of type TREE (rd_tree's stack and fields) as saved,
 * its stack's entries made canonical by CANON and zeros past its depth. */
#define AX_SAVE_STACK(NAME, TREE, CANON)                                                     \
    static void NAME(const TREE *t, unsigned char *buf)                                     \
    {                                                                                       \
        TREE c;                                                                             \
        memset(&c, 0, sizeof c);                                                            \
        for (int d = 0; d < t->depth && d < 128; d++)                                       \
            c.value[d] = CANON(t->value[d]), c.level[d] = t->level[d];                      \
        c.depth = t->depth;                                                                 \
        c.next = t->next;                                                                   \
        memcpy(buf, &c, sizeof c);                                                          \
    }

AX_SAVE_STACK(ax_save_tree, rd_tree, rd_canon)
AX_SAVE_STACK(ax_save_vtree, rd_vtree, rd_canon_var)

/* Extrema as saved: without argmin and argmax (no_idx), indices 0 but for
 * an empty side's RD_NO_INDEX (see ax_save_piece). */
static rd_extrema ax_canon_ext(rd_extrema e, int no_idx)
{
    if (no_idx) {
        e.min_idx = e.min_idx == RD_NO_INDEX ? RD_NO_INDEX : 0;
        e.max_idx = e.max_idx == RD_NO_INDEX ? RD_NO_INDEX : 0;
    }
    return e;
}

/* A partial as saved: NaNs as one, extrema by ax_canon_ext. */
static void ax_save_item(const ax_item *it, int no_idx, unsigned char *buf)
{
    ax_item c;
    memset(&c, 0, sizeof c);
    c.sum = rd_canon(it->sum);
    c.sq = rd_canon(it->sq);
    c.isum = it->isum;
    c.isq = it->isq;
    c.count = it->count;
    c.ext = ax_canon_ext(it->ext, no_idx);
    c.var = rd_canon_var(it->var);
    memcpy(buf, &c, sizeof c);
}

/* Whether output o of state s has a stage-2 block in progress (bsum,
 * bsq, bvar, bvacc): in a shard, one past its lead block that its last
 * index leaves open; a whole-stream state is not saved, so always. */
static int ax_block_open(const ax_state *s, uint64_t o)
{
    const struct ax_shard *h = s->sh;
    if (!h)
        return 1;
    uint64_t end = h->jend[o];
    return h->j0[o] != AX_NONE && end > ax_shard_lead_end(s->p, h, o) &&
           end % RD_AXIS_BLOCK != 0 && end < s->p->J;
}

/* Whether record i (of output i % nout) of piece at of state s is in use:
 * block-tree stack entries within their output's depth, blocks in progress. */
static int ax_record_used(const ax_state *s, const void *at, uint64_t i)
{
    uint64_t n = s->p->nout, o = i % n;
    if (at == s->bsum || at == s->bsq || at == s->bvar || at == s->bvacc)
        return ax_block_open(s, o);
    if (at != s->tsum && at != s->tsq && at != s->tvar)
        return 1;
    unsigned char lv[130];
    uint64_t first = s->sh ? ax_shard_b0(s->sh, o) : 0;
    return i / n < (uint64_t)ax_span_levels(first, s->nb[o], lv);
}

/* Writes piece pc of state s into buf with the bytes no result depends on
 * made canonical, so that a saved state does not show the backend, chunks
 * or threads that made it: NaNs as one (rd_canon); stack entries past a
 * tree's depth and blocks not in progress as zeros; without argmin and
 * argmax, the extrema's indices as 0 (RD_NO_INDEX kept: an empty side),
 * since the CPU notes an extremum's block of rows and the GPU its row. */
static void ax_save_piece(const ax_state *s, const ax_piece *pc, unsigned char *buf)
{
    const struct ax_shard *h = s->sh;
    const void *at = pc->at;
    int no_idx = !(s->p->ops & (RD_OP_ARGMIN | RD_OP_ARGMAX));
    if (at == &s->rsum || at == &s->rsq || at == &h->lsum || at == &h->lsq) {
        ax_save_tree(at, buf);
        return;
    }
    if (at == &s->rvar || at == &h->lvar) {
        ax_save_vtree(at, buf);
        return;
    }
    if (at == &s->run || at == &h->lrun) {
        ax_save_item(at, no_idx, buf);
        return;
    }
    memcpy(buf, at, pc->bytes);
    int dbl = at == s->bsum || at == s->bsq || at == s->tsum || at == s->tsq || at == h->ls ||
              at == h->lq || at == h->lx;
    int var = at == s->bvar || at == s->tvar || at == h->lv;
    size_t each = dbl ? sizeof(double) : var ? sizeof(rd_var)
                : at == s->bvacc ? sizeof(rd_var_acc) : at == s->ext ? sizeof(rd_extrema) : 0;
    for (uint64_t i = 0; each && i < pc->bytes / each; i++) {
        unsigned char *r = buf + i * each;
        if (!ax_record_used(s, at, i)) {
            memset(r, 0, each);
        } else if (dbl) {
            double x;
            memcpy(&x, r, sizeof x);
            x = rd_canon(x);
            memcpy(r, &x, sizeof x);
        } else if (var) {
            rd_var v;
            memcpy(&v, r, sizeof v);
            v = rd_canon_var(v);
            memcpy(r, &v, sizeof v);
        } else if (at == s->bvacc) {
            rd_var_acc v;
            memcpy(&v, r, sizeof v);
            v.k = rd_canon(v.k), v.s1 = rd_canon(v.s1), v.s2 = rd_canon(v.s2);
            memcpy(r, &v, sizeof v);
        } else {
            rd_extrema e;
            memcpy(&e, r, sizeof e);
            e = ax_canon_ext(e, no_idx);
            memcpy(r, &e, sizeof e);
        }
    }
}

/* Writes shard state s's bytes into buf (ax_state_bytes long). */
void ax_state_save(const ax_state *s, unsigned char *buf)
{
    ax_piece pc[32];
    for (int i = 0, n = ax_pieces((ax_state *)s, pc); i < n; i++) {
        ax_save_piece(s, &pc[i], buf);
        buf += pc[i].bytes;
    }
}

/* Whether a tree's stack is that of leaves [first, next) with next <= end. */
static int ax_tree_ok(const unsigned char *level, int depth, uint64_t next, uint64_t first,
                      uint64_t end)
{
    unsigned char lv[130];
    if (depth < 0 || depth > 128 || next < first || next > end)
        return 0;
    return ax_span_levels(first, next, lv) == depth && !memcmp(lv, level, (size_t)depth);
}

/* The run trees of a loaded state against its shard's geometry. */
static int ax_runs_ok(const ax_state *s)
{
    const ax_plan *p = s->p;
    const struct ax_shard *h = s->sh;
    uint64_t tpr = p->tiles_per_run, lt = h->lead_tile;
    if (p->unit != AX_UNIT_TILE)
        return 1;
    /* the trees in progress are the lead run's unless a run starts after it */
    int lead = h->lead_run != AX_NONE && (h->e0 / p->T + 1) * p->T >= h->e1;
    uint64_t first = lead ? lt : 0, end = h->e1 % p->T ? h->e1 % p->T / RD_TILE : tpr;
    if (h->e0 < h->e1 && (s->rsum.next != end || s->rsq.next != end ||
                          (s->use_v && s->rvar.next != end)))
        return 0;
    if (!ax_tree_ok(s->rsum.level, s->rsum.depth, s->rsum.next, first, tpr) ||
        !ax_tree_ok(s->rsq.level, s->rsq.depth, s->rsq.next, first, tpr) ||
        (s->use_v && !ax_tree_ok(s->rvar.level, s->rvar.depth, s->rvar.next, first, tpr)))
        return 0;
    if (!h->lead_done)
        return 1;
    return ax_tree_ok(h->lsum.level, h->lsum.depth, h->lsum.next, lt, tpr) &&
           h->lsum.next == tpr &&
           ax_tree_ok(h->lsq.level, h->lsq.depth, h->lsq.next, lt, tpr) && h->lsq.next == tpr &&
           (!s->use_v || (ax_tree_ok(h->lvar.level, h->lvar.depth, h->lvar.next, lt, tpr) &&
                          h->lvar.next == tpr));
}

/* Output o's stage-2 range and block count of a loaded state against its
 * shard's runs [r0, r1). */
static int ax_output_ok(const ax_state *s, uint64_t o, uint64_t r0, uint64_t r1)
{
    const ax_plan *p = s->p;
    const struct ax_shard *h = s->sh;
    uint64_t j0 = ax_runs_before(p, o, r0), j1 = ax_runs_before(p, o, r1);
    if (j0 == j1)
        return h->j0[o] == AX_NONE && h->jend[o] == 0 && s->nb[o] == 0;
    if (h->j0[o] != j0 || h->jend[o] != j1)
        return 0;
    uint64_t b0 = ax_shard_b0(h, o), nb = j1 == p->J ? p->nblocks : j1 / RD_AXIS_BLOCK;
    return s->nb[o] == (nb > b0 ? nb : b0);
}

/* A shard state of elements [e0, e1) of plan p from ax_state_save's len
 * bytes at buf, checked against the geometry; NULL with the reason in *st. */
ax_state *ax_state_load(const ax_plan *p, uint64_t e0, uint64_t e1, const unsigned char *buf,
                        size_t len, io_status *st)
{
    if (e0 > e1 || e1 > p->nelem || ax_shard_cut(p, e0) != e0 || ax_shard_cut(p, e1) != e1) {
        io_fail(st, IO_ERR_FORMAT, "elements %llu..%llu are not a shard's",
                (unsigned long long)e0, (unsigned long long)e1);
        return NULL;
    }
    ax_state *s = ax_state_new_shard(p, e0, e1);
    if (!s) {
        io_fail(st, IO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    struct ax_shard *h = s->sh;
    uint64_t lead_run = h->lead_run, lead_tile = h->lead_tile;
    if (len != ax_state_bytes(s)) {
        io_fail(st, IO_ERR_FORMAT, "%zu bytes of state where the geometry has %zu", len,
                ax_state_bytes(s));
        goto out_free;
    }
    ax_piece pc[32];
    for (int i = 0, n = ax_pieces(s, pc); i < n; i++) {
        memcpy(pc[i].at, buf, pc[i].bytes);
        buf += pc[i].bytes;
    }
    if (h->lead_run != lead_run || h->lead_tile != lead_tile || h->lead_done > 1 ||
        (h->lead_done && lead_run == AX_NONE) || !ax_runs_ok(s)) {
        io_fail(st, IO_ERR_FORMAT, "the cut runs do not match the shard's elements");
        goto out_free;
    }
    /* the runs that start and end in the shard */
    uint64_t r0 = (e0 + p->T - 1) / p->T, r1 = e1 / p->T;
    for (uint64_t o = 0; o < p->nout; o++)
        if (!ax_output_ok(s, o, r0, r1 > r0 ? r1 : r0)) {
            io_fail(st, IO_ERR_FORMAT, "output element %llu's blocks do not match the "
                    "shard's elements", (unsigned long long)o);
            goto out_free;
        }
    return s;
out_free:
    ax_state_free(s);
    return NULL;
}
