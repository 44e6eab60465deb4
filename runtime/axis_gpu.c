/* axis_gpu.c - launches of the kernels of reductions along axes. */
#include "axis_gpu.h"

#include "ptx/axis_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan's module. */
int ax_gpu_modules(const ax_plan *p, char names[1][64])
{
    if (p->unit == AX_UNIT_NONE)
        return 0;
    snprintf(names[0], 64, "axis_%s", rd_dtype_tag(p->dtype));
    return 1;
}

/* Launches kernel `name` of the plan's module on grid blocks of RD_WARPS
 * warps with `shared` bytes of dynamic shared memory each, and adds its
 * name to the chunk's list for messages. */
static int ax_launch_one(engine_chunk *c, const ax_plan *p, const char *name, unsigned grid,
                         unsigned shared, void **params)
{
    char mod[64];
    CUfunction f;
    int rc;
    ax_gpu_modules(p, (char(*)[64])mod);
    if ((rc = gpu_function(c->g, mod, name, &f)) < 0 ||
        (rc = gpu_launch_shared(c->g, f, name, grid, RD_WARPS * 32, shared, c->stream, params)) < 0)
        return rc;
    size_t used = strlen(c->kernels);
    snprintf(c->kernels + used, ENGINE_KERNELS_LEN - used, "%s%s", used ? ", " : "", name);
    return 0;
}

/* Queues the copy of `bytes` at byte `at` of the device result buffer back
 * to the same place of the host's (nothing for 0 bytes). */
static int ax_copy_back(engine_chunk *c, size_t at, size_t bytes)
{
    if (bytes)
        CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + at, c->out + at, bytes, c->stream));
    return 0;
}

/* The kernels axk_FAMILY_{moments,extrema} and axk_VFAMILY_var of the kinds
 * of part that a's arrays ask for, on `grid` blocks of `shared` bytes of
 * dynamic shared memory. */
static int ax_launch_kinds(engine_chunk *c, const ax_plan *p, const char *family,
                           const char *vfamily, unsigned grid, unsigned shared, CUdeviceptr *x,
                           ax_gpu_args *a)
{
    const char *nan = p->skipnan ? "_skipnan" : "";
    char name[64];
    void *params[] = {x, a};
    int rc = 0;
    if (a->sum || a->sq || a->count) {
        snprintf(name, sizeof name, "axk_%s_moments%s%s", family,
                 (p->ops & RD_OP_SUMSQ) ? "_sq" : "", nan);
        rc = ax_launch_one(c, p, name, grid, shared, params);
    }
    if (rc == 0 && a->extrema) {
        snprintf(name, sizeof name, "axk_%s_extrema%s", family, nan);
        rc = ax_launch_one(c, p, name, grid, shared, params);
    }
    if (rc == 0 && a->var) {
        snprintf(name, sizeof name, "axk_%s_var%s", vfamily, nan);
        rc = ax_launch_one(c, p, name, grid, shared, params);
    }
    return rc;
}

/* The kernels of a chunk's tile units into the arrays that a names: the
 * whole runs of ax_rows_bytes a block for short runs (axk_rows_*; the
 * moments and extrema of runs of at most 32 vectors of float32 or float64
 * a thread each, axk_lane_*), else a block a tile (axk_tile_*). */
static int ax_launch_tiles(engine_chunk *c, const ax_plan *p, CUdeviceptr *x, ax_gpu_args *a)
{
    size_t sz = dt_size(p->dtype);
    int rows = p->T <= RD_SUBTILE;
    int lane = (p->dtype == DT_F32 || p->dtype == DT_F64) && p->T <= 32 * RD_VEC(sz);
    uint64_t run = p->T * sz, per = rows ? ax_rows_bytes(run) / run : 1;
    return ax_launch_kinds(c, p, !rows ? "tile" : lane ? "lane" : "rows", rows ? "rows" : "tile",
                           (unsigned)((a->nunits + per - 1) / per),
                           rows ? AX_ROWS_STAGE(run) : 0, x, a);
}

/* Whether the float32 sums of the chunk at x (its element e0 at x[0]) take
 * the kernels of AX_PAIRS_COLS adjacent columns a thread: C a multiple of
 * it and element 0 of the array on a boundary of as many elements. */
static int ax_pairs_fit(const ax_plan *p, CUdeviceptr x, uint64_t e0)
{
    uint64_t pair = AX_PAIRS_COLS * sizeof(float);
    return p->dtype == DT_F32 && !(p->ops & RD_OP_SUMSQ) && p->C % AX_PAIRS_COLS == 0 &&
           (x - e0 * sizeof(float)) % pair == 0;
}

/* The many-column kernels (C > 32) of the kinds of part that a's arrays
 * ask for, each on the grid of its threads per entry (AX_COLS_SPLIT) and
 * given only its own arrays: axk_cols_*, and for float32 sums where they
 * fit (ax_pairs_fit) axk_pairs_moments*. */
static int ax_launch_cols(engine_chunk *c, const ax_plan *p, CUdeviceptr *x, ax_gpu_args *a)
{
    static const char *const kinds[3] = {"moments", "extrema", "var"};
    const uint64_t threads = RD_WARPS * 32;
    int is_float = p->dtype == DT_F32 || p->dtype == DT_F64, rc = 0;
    int sq = (p->ops & RD_OP_SUMSQ) != 0;
    for (int kind = 0; kind < 3 && rc == 0; kind++) {
        ax_gpu_args k = *a;
        if (kind != 0)
            k.sum = k.sq = k.count = 0;
        if (kind != 1)
            k.extrema = 0;
        if (kind != 2)
            k.var = 0;
        if (!(k.sum || k.sq || k.count || k.extrema || k.var))
            continue;
        unsigned s = is_float ? AX_COLS_SPLIT(dt_size(p->dtype), kind, sq) : 1;
        int pairs = kind == 0 && s == 1 && ax_pairs_fit(p, *x, a->e0);
        uint64_t per_entry = pairs ? p->C / AX_PAIRS_COLS : p->C; /* threads of an entry */
        uint64_t grid = s > 1 ? a->nentries * ((p->C + threads / s - 1) / (threads / s))
                              : (a->nentries * per_entry + threads - 1) / threads;
        char name[64];
        void *params[] = {x, &k};
        snprintf(name, sizeof name, "axk_%s_%s%s%s", pairs ? "pairs" : "cols", kinds[kind],
                 kind == 0 && sq ? "_sq" : "", p->skipnan ? "_skipnan" : "");
        rc = ax_launch_one(c, p, name, (unsigned)grid, 0, params);
    }
    return rc;
}

/* The kernels of a chunk's block entries: a warp per entry for few columns
 * (axk_few_*, C <= 32; of 2 to 4 columns, a block a lane where the entry is
 * 16-byte aligned), else ax_launch_cols. */
static int ax_launch_blocks(engine_chunk *c, const ax_plan *p, CUdeviceptr *x, ax_gpu_args *a)
{
    if (p->C > 32)
        return ax_launch_cols(c, p, x, a);
    uint64_t n = a->nentries, per = RD_WARPS;
    return ax_launch_kinds(c, p, "few", "few", (unsigned)((n + per - 1) / per), 0, x, a);
}

/* Rounds up to a multiple of 8 bytes. */
static size_t ax_round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Where a chunk's scratch lies in the raw region of its result buffers (on
 * the host: the entry list before its copy in; on the device: the list,
 * then per tile unit its moments, extrema and variance partial), and
 * whether it fits. */
typedef struct {
    size_t list_at, list_bytes, tiles_at, tile_bytes, end;
    int fits;
} ax_scratch;

/* The scratch of a chunk with header h (list: with an entry list). */
static ax_scratch ax_scratch_of(const ax_plan *p, const ax_layout *l, const ax_chunk_hdr *h,
                                int list)
{
    ax_scratch s;
    size_t units = (size_t)(h->u1 - h->u0);
    s.list_at = l->raw_at + ax_round8((size_t)(h->head + h->tail) * dt_size(p->dtype));
    s.list_bytes = list ? (size_t)h->nentries * sizeof(ax_gpu_entry) : 0;
    s.tiles_at = s.list_at + ax_round8(s.list_bytes);
    s.tile_bytes = p->unit == AX_UNIT_TILE && p->tiles_per_run > 1
                       ? units * (l->sum_size + l->sq_size + sizeof(uint64_t) +
                                  sizeof(rd_extrema) + sizeof(rd_var))
                       : 0;
    s.end = s.tiles_at + s.tile_bytes;
    s.fits = s.end <= l->total;
    return s;
}

/* Writes the chunk's entry list into the host's scratch and queues its
 * copy to the device's. */
static int ax_put_entries(engine_chunk *c, const ax_plan *p, const ax_chunk_hdr *h,
                          const ax_scratch *s)
{
    ax_entry *ent = malloc((size_t)h->nentries * sizeof *ent);
    if (!ent)
        return gpu_fail(c->g, GPU_ERR_OUT_OF_MEMORY, "the entries of a chunk");
    ax_chunk_entries(p, h->u0, h->u1, ent);
    ax_gpu_entry *out = (ax_gpu_entry *)((char *)c->host_out + s->list_at);
    for (size_t i = 0; i < h->nentries; i++) {
        out[i].u = ent[i].u;
        out[i].leaf = ax_unit_leaf(p, ent[i].u);
        out[i].level = ent[i].level;
        out[i].pad = 0;
    }
    free(ent);
    CU_TRY(cu.MemcpyHtoDAsync(c->out + s->list_at, out, s->list_bytes, c->stream));
    return 0;
}

/* The whole result buffer on the host from the chunk's input copied back,
 * for a chunk whose entry list has no room in the raw region (blocks of a
 * few bytes): the CPU's own reference, in order with the stream. */
static int ax_on_host(engine_chunk *c, const ax_plan *p, uint64_t e0)
{
    void *x = malloc(c->bytes ? c->bytes : 1);
    if (!x)
        return gpu_fail(c->g, GPU_ERR_OUT_OF_MEMORY, "a chunk's input on the host");
    CUresult r = cu.MemcpyDtoHAsync(x, c->in, c->bytes, c->stream);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(c->stream);
    if (r == CUDA_SUCCESS)
        ax_cpu_chunk(p, x, e0, e0 + c->bytes / dt_size(p->dtype), c->capacity, c->host_out);
    free(x);
    CU_TRY(r);
    return 0;
}

/* The kernels of a chunk's units and entries (nothing without units), with
 * the chunk's header in *h; *host is set where the CPU made the buffer. */
static int ax_kernels(engine_chunk *c, ax_chunk_hdr *h, int *host)
{
    const ax_job *j = c->op;
    const ax_plan *p = j->plan;
    size_t sz = dt_size(p->dtype);
    uint64_t e0 = j->first + c->offset / sz, e1 = e0 + c->bytes / sz;
    ax_layout l = ax_layout_for(p, c->capacity);
    *h = ax_chunk_of(p, e0, e1);
    *host = 0;
    if (h->u1 <= h->u0)
        return 0;
    int fold = p->unit == AX_UNIT_BLOCK || p->tiles_per_run > 1;
    /* the entries of units of one segment are computed by the kernels (leaf0 on): a list only
       for chunks of several segments */
    uint64_t per = p->unit == AX_UNIT_BLOCK ? p->blocks_per_sweep : p->tiles_per_run;
    int list = fold && h->u0 / per != (h->u1 - 1) / per;
    ax_scratch s = ax_scratch_of(p, &l, h, list);
    if (fold && !s.fits) {
        *host = 1;
        return ax_on_host(c, p, e0);
    }
    ax_gpu_args a = {
        .e0 = e0,
        .u0 = h->u0,
        .nunits = h->u1 - h->u0,
        .T = p->T,
        .tiles_per_run = p->tiles_per_run,
        .L = p->L,
        .C = p->C,
        .blocks_per_sweep = p->blocks_per_sweep,
        .sum = l.use_sum ? c->out + l.sum_at : 0,
        .sq = l.use_sq ? c->out + l.sq_at : 0,
        .count = l.use_cnt ? c->out + l.count_at : 0,
        .extrema = l.use_e ? c->out + l.extrema_at : 0,
        .var = l.use_v ? c->out + l.var_at : 0,
        .entries = list ? c->out + s.list_at : 0,
        .nentries = h->nentries,
        .leaf0 = fold ? ax_unit_leaf(p, h->u0) : 0,
    };
    int rc = list ? ax_put_entries(c, p, h, &s) : 0;
    if (rc < 0)
        return rc;
    CUdeviceptr x = c->in;
    if (p->unit == AX_UNIT_BLOCK)
        return ax_launch_blocks(c, p, &x, &a);
    if (!fold)
        return ax_launch_tiles(c, p, &x, &a);
    /* the tiles' parts into the scratch, then folded into the entries */
    ax_gpu_args t = a;
    size_t units = (size_t)a.nunits;
    CUdeviceptr at = c->out + s.tiles_at;
    t.sum = a.sum ? at : 0;
    at += units * l.sum_size;
    t.sq = a.sq ? at : 0;
    at += units * l.sq_size;
    t.count = a.count ? at : 0;
    at += units * sizeof(uint64_t);
    t.extrema = a.extrema ? at : 0;
    at += units * sizeof(rd_extrema);
    t.var = a.var ? at : 0;
    if ((rc = ax_launch_tiles(c, p, &x, &t)) < 0)
        return rc;
    void *params[] = {&a, &t};
    return ax_launch_one(c, p, "axk_fold_tiles",
                         (unsigned)((a.nentries + RD_WARPS * 32 - 1) / (RD_WARPS * 32)), 0, params);
}

/* Queues only a chunk's kernels (for benchmarks). */
int ax_gpu_kernels(engine_chunk *c)
{
    ax_chunk_hdr h;
    int host;
    return ax_kernels(c, &h, &host);
}

/* Queues a chunk's kernels and copies (see axis_gpu.h). */
int ax_gpu_launch(engine_chunk *c)
{
    const ax_job *j = c->op;
    const ax_plan *p = j->plan;
    size_t sz = dt_size(p->dtype);
    ax_layout l = ax_layout_for(p, c->capacity);
    ax_chunk_hdr h;
    int host, rc = ax_kernels(c, &h, &host);
    if (rc < 0 || host)
        return rc;
    memcpy(c->host_out, &h, sizeof h);
    if (h.head)
        CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + l.raw_at, c->in, h.head * sz, c->stream));
    if (h.tail)
        CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + l.raw_at + h.head * sz,
                                  c->in + c->bytes - h.tail * sz, h.tail * sz, c->stream));
    size_t parts = (size_t)h.nentries * p->width;
    if (rc == 0 && l.use_sum)
        rc = ax_copy_back(c, l.sum_at, parts * l.sum_size);
    if (rc == 0 && l.use_sq)
        rc = ax_copy_back(c, l.sq_at, parts * l.sq_size);
    if (rc == 0 && l.use_cnt)
        rc = ax_copy_back(c, l.count_at, parts * sizeof(uint64_t));
    if (rc == 0 && l.use_e)
        rc = ax_copy_back(c, l.extrema_at, parts * sizeof(rd_extrema));
    if (rc == 0 && l.use_v)
        rc = ax_copy_back(c, l.var_at, parts * sizeof(rd_var));
    return rc;
}
