/* axis_gpu.c - launches of the kernels of reductions along axes. */
#include "axis_gpu.h"

#include "ptx/axis_args.h"

#include <stdio.h>
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
 * warps, and adds its name to the chunk's list for messages. */
static int ax_launch_one(engine_chunk *c, const ax_plan *p, const char *name, unsigned grid,
                         void **params)
{
    char mod[64];
    CUfunction f;
    int rc;
    ax_gpu_modules(p, (char(*)[64])mod);
    if ((rc = gpu_function(c->g, mod, name, &f)) < 0 ||
        (rc = gpu_launch(c->g, f, name, grid, RD_WARPS * 32, c->stream, params)) < 0)
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

/* The kernels of a chunk's tile units: one per kind of part wanted. */
static int ax_launch_tiles(engine_chunk *c, const ax_plan *p, const ax_layout *l,
                           CUdeviceptr *x, ax_gpu_args *a)
{
    const char *nan = p->skipnan ? "_skipnan" : "";
    unsigned grid = (unsigned)(p->T <= RD_SUBTILE ? (a->nunits + RD_WARPS - 1) / RD_WARPS
                                                  : a->nunits);
    char name[64];
    void *params[] = {x, a};
    int rc = 0;
    if (l->use_m) {
        snprintf(name, sizeof name, "axk_tile_moments%s%s", (p->ops & RD_OP_SUMSQ) ? "_sq" : "",
                 nan);
        rc = ax_launch_one(c, p, name, grid, params);
    }
    if (rc == 0 && l->use_e) {
        snprintf(name, sizeof name, "axk_tile_extrema%s", nan);
        rc = ax_launch_one(c, p, name, grid, params);
    }
    if (rc == 0 && l->use_v) {
        snprintf(name, sizeof name, "axk_tile_var%s", nan);
        rc = ax_launch_one(c, p, name, grid, params);
    }
    return rc;
}

/* The kernels of a chunk's units (nothing without units), with the
 * chunk's header in *h. */
static int ax_kernels(engine_chunk *c, ax_chunk_hdr *h)
{
    const ax_job *j = c->op;
    const ax_plan *p = j->plan;
    size_t sz = dt_size(p->dtype);
    uint64_t e0 = j->first + c->offset / sz, e1 = e0 + c->bytes / sz;
    ax_layout l = ax_layout_for(p, c->capacity);
    *h = ax_chunk_of(p, e0, e1);
    if (h->u1 <= h->u0)
        return 0;
    ax_gpu_args a = {
        .e0 = e0,
        .u0 = h->u0,
        .nunits = h->u1 - h->u0,
        .T = p->T,
        .tiles_per_run = p->tiles_per_run,
        .L = p->L,
        .C = p->C,
        .blocks_per_sweep = p->blocks_per_sweep,
        .moments = l.use_m ? c->out + l.moments_at : 0,
        .extrema = l.use_e ? c->out + l.extrema_at : 0,
        .var = l.use_v ? c->out + l.var_at : 0,
    };
    CUdeviceptr x = c->in;
    if (p->unit == AX_UNIT_TILE)
        return ax_launch_tiles(c, p, &l, &x, &a);
    int want_sq = (p->ops & RD_OP_SUMSQ) != 0;
    void *params[] = {&x, &a, &want_sq};
    uint64_t threads = a.nunits * p->C;
    return ax_launch_one(c, p, p->skipnan ? "axk_block_skipnan" : "axk_block",
                         (unsigned)((threads + RD_WARPS * 32 - 1) / (RD_WARPS * 32)), params);
}

/* Queues only a chunk's kernels (for benchmarks). */
int ax_gpu_kernels(engine_chunk *c)
{
    ax_chunk_hdr h;
    return ax_kernels(c, &h);
}

/* Queues a chunk's kernels and copies (see axis_gpu.h). */
int ax_gpu_launch(engine_chunk *c)
{
    const ax_job *j = c->op;
    const ax_plan *p = j->plan;
    size_t sz = dt_size(p->dtype);
    ax_layout l = ax_layout_for(p, c->capacity);
    ax_chunk_hdr h;
    int rc = ax_kernels(c, &h);
    if (rc < 0)
        return rc;
    memcpy(c->host_out, &h, sizeof h);
    if (h.head)
        CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + l.raw_at, c->in, h.head * sz, c->stream));
    if (h.tail)
        CU_TRY(cu.MemcpyDtoHAsync((char *)c->host_out + l.raw_at + h.head * sz,
                                  c->in + c->bytes - h.tail * sz, h.tail * sz, c->stream));
    size_t parts = (size_t)(h.u1 - h.u0) * p->width;
    if (rc == 0 && l.use_m)
        rc = ax_copy_back(c, l.moments_at, parts * sizeof(rd_moments));
    if (rc == 0 && l.use_e)
        rc = ax_copy_back(c, l.extrema_at, parts * sizeof(rd_extrema));
    if (rc == 0 && l.use_v)
        rc = ax_copy_back(c, l.var_at, parts * sizeof(rd_var));
    return rc;
}
