/* stream_inflate.c - one deflate stream inflated on the device in
 * segments (see stream_inflate.h). */
#include "stream_inflate.h"

#include <string.h>

#define STREAM_INFLATE_MODULE "inflate"
#define GZS_TILE 4096u   /* symbols per block of gzs_replace (ptx/inflate.cu) */
#define GZS_PIECE 65536u /* bytes per warp of gzs_crc */
#define GZS_WINDOW_THREADS 1024 /* threads of the window kernels */

/* Allocates set k's buffers; 0 or a negative gpu_error. */
static int stream_inflate_set_open(stream_inflate_dev *z, int k)
{
    stream_inflate_set *t = &z->set[k];
    gpu *g = z->g;
    int rc;
    if ((rc = gpu_mem_alloc(g, &t->comp, z->comp_cap + IF_IN_PAD, "a compressed batch")) < 0 ||
        (rc = gpu_mem_alloc(g, &t->syms, z->sym_cap * sizeof(uint16_t), "the batch's symbols")) <
            0 ||
        (rc = gpu_mem_alloc(g, &t->segs, (size_t)z->max_segs * sizeof(ifs_seg), "segments")) < 0 ||
        (rc = gpu_mem_alloc(g, &t->todo, (size_t)z->max_segs * sizeof(int), "segments")) < 0)
        return rc;
    if (!(t->hsegs = gpu_host_alloc(g, (size_t)z->max_segs * sizeof(ifs_seg))) ||
        !(t->htodo = gpu_host_alloc(g, (size_t)z->max_segs * sizeof(int))))
        return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Allocates the buffers (see stream_inflate.h). */
int stream_inflate_open(stream_inflate_dev *z, gpu *g, size_t comp_cap, size_t seg_bytes,
                        uint32_t seg_cap, int sets)
{
    memset(z, 0, sizeof *z);
    z->g = g;
    z->comp_cap = comp_cap;
    z->step = (uint64_t)seg_bytes * 8;
    z->seg_cap = seg_cap;
    z->nsets = sets < 1 ? 1 : sets > STREAM_INFLATE_SETS_MAX ? STREAM_INFLATE_SETS_MAX : sets;
    /* half the segments for the plan, half for splits; the symbol pool
     * holds every planned segment's room and half as much again */
    uint64_t planned = (comp_cap + seg_bytes - 1) / seg_bytes + 1;
    z->max_segs = (int)(planned * 2);
    z->sym_cap = planned * seg_cap + planned * seg_cap / 2;
    /* groups of ifs_group_size(n) segments number at most sqrt(2 n) + 1 */
    z->max_groups = 2 * (int)ifs_group_size((if_u32)z->max_segs) + 2;
    int rc;
    if ((rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_decode", &z->decode)) < 0 ||
        (rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_group_maps", &z->group_maps)) < 0 ||
        (rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_group_windows", &z->group_windows)) < 0 ||
        (rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_windows", &z->windows)) < 0 ||
        (rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_replace", &z->replace)) < 0 ||
        (rc = gpu_function(g, STREAM_INFLATE_MODULE, "gzs_crc", &z->crc)) < 0)
        return rc;
    for (int k = 0; rc == 0 && k < z->nsets; k++)
        rc = stream_inflate_set_open(z, k);
    if (rc < 0 ||
        (rc = gpu_mem_alloc(g, &z->wins, ((size_t)z->max_segs + 1) * IFS_WINDOW, "windows")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->maps, (size_t)z->max_groups * IFS_WINDOW * sizeof(uint16_t),
                            "windows")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->flags, 2 * sizeof(unsigned), "inflate status")) < 0)
        return rc;
    if (!(z->hflags = gpu_host_alloc(g, 2 * sizeof(unsigned))))
        return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Frees the buffers. */
void stream_inflate_close(stream_inflate_dev *z)
{
    if (!z->g)
        return;
    for (int k = 0; k < STREAM_INFLATE_SETS_MAX; k++) {
        stream_inflate_set *t = &z->set[k];
        gpu_mem_free(z->g, t->comp);
        gpu_mem_free(z->g, t->syms);
        gpu_mem_free(z->g, t->segs);
        gpu_mem_free(z->g, t->todo);
        gpu_host_free(z->g, t->hsegs);
        gpu_host_free(z->g, t->htodo);
    }
    gpu_mem_free(z->g, z->wins);
    gpu_mem_free(z->g, z->maps);
    gpu_mem_free(z->g, z->flags);
    gpu_host_free(z->g, z->hflags);
    memset(z, 0, sizeof *z);
}

/* Queues one round of set t's plan: the listed segments decoded, the
 * plan's copy brought back (in t->hsegs once s is synchronized). Driver
 * calls only, so that any thread may queue it. */
static int stream_inflate_round(stream_inflate_dev *z, stream_inflate_set *t, CUstream s,
                                size_t len)
{
    const stream_plan *p = &t->plan;
    size_t segs_bytes = (size_t)p->n * sizeof(ifs_seg);
    CU_TRY(cu.MemcpyHtoDAsync(t->segs, t->hsegs, segs_bytes, s));
    CU_TRY(cu.MemcpyHtoDAsync(t->todo, t->htodo, (size_t)p->ntodo * sizeof(int), s));
    unsigned ulen = (unsigned)len, ntodo = (unsigned)p->ntodo;
    void *ad[] = {&t->comp, &ulen, &t->segs, &t->todo, &ntodo, &t->syms};
    if (ntodo)
        CU_TRY(cu.LaunchKernel(z->decode, ntodo, 1, 1, 32, 1, 1, 0, s, ad, NULL));
    CU_TRY(cu.MemcpyDtoHAsync(t->hsegs, t->segs, segs_bytes, s));
    return 0;
}

/* Passes the windows along, replaces the markers and checksums the output
 * of a finished plan; 0, 1 for a marker into bytes that do not exist, or a
 * negative gpu_error. */
static int stream_inflate_finish(stream_inflate_dev *z, CUstream s, stream_inflate_set *t,
                                 const uint8_t *window, uint32_t valid, CUdeviceptr out,
                                 uint8_t *win_out, stream_inflate_result *r)
{
    const stream_plan *p = &t->plan;
    int rc;
    CU_TRY(cu.MemcpyHtoDAsync(t->segs, t->hsegs, (size_t)p->n * sizeof(ifs_seg), s));
    /* the window before the batch; at the stream's start, zeros that no
     * valid stream refers to but that the window kernels pass along */
    if (valid)
        CU_TRY(cu.MemcpyHtoDAsync(z->wins, window, IFS_WINDOW, s));
    else
        CU_TRY(cu.MemsetD8Async(z->wins, 0, IFS_WINDOW, s));
    CU_TRY(cu.MemsetD8Async(z->flags, 0, 2 * sizeof(unsigned), s));
    unsigned n = (unsigned)p->n, group = ifs_group_size(n), ngroups = (n + group - 1) / group;
    CUdeviceptr bad = z->flags, acc = z->flags + sizeof(unsigned);
    void *am[] = {&t->segs, &n, &group, &t->syms, &z->maps};
    void *ag[] = {&z->maps, &ngroups, &group, &z->wins};
    void *aw[] = {&t->segs, &n, &group, &t->syms, &z->wins};
    if (ngroups > (unsigned)z->max_groups)
        return 1;
    if (ngroups > 1 &&
        ((rc = gpu_launch(z->g, z->group_maps, "gzs_group_maps", ngroups - 1,
                          GZS_WINDOW_THREADS, s, am)) < 0 ||
         (rc = gpu_launch(z->g, z->group_windows, "gzs_group_windows", 1, GZS_WINDOW_THREADS, s,
                          ag)) < 0))
        return rc;
    rc = gpu_launch(z->g, z->windows, "gzs_windows", ngroups, GZS_WINDOW_THREADS, s, aw);
    if (rc < 0)
        return rc;
    uint32_t most = 0;
    for (int i = 0; i < p->n; i++)
        most = p->segs[i].nout > most ? p->segs[i].nout : most;
    if (most) {
        void *ar[] = {&t->segs, &t->syms, &z->wins, &valid, &out, &bad};
        if ((rc = gpu_launch_2d(z->g, z->replace, "gzs_replace", (most + GZS_TILE - 1) / GZS_TILE,
                                n, 256, 1, s, ar)) < 0)
            return rc;
    }
    unsigned long long total = p->nout;
    if (total) {
        void *ac[] = {&out, &total, &acc};
        unsigned pieces = (unsigned)((total + GZS_PIECE - 1) / GZS_PIECE);
        if ((rc = gpu_launch(z->g, z->crc, "gzs_crc", pieces, 32, s, ac)) < 0)
            return rc;
    }
    CU_TRY(cu.MemcpyDtoHAsync(z->hflags, z->flags, 2 * sizeof(unsigned), s));
    if (win_out)
        CU_TRY(cu.MemcpyDtoHAsync(win_out, z->wins + (CUdeviceptr)p->n * IFS_WINDOW, IFS_WINDOW,
                                  s));
    CU_TRY(cu.StreamSynchronize(s));
    if (z->hflags[0])
        return 1;
    r->nout = p->nout;
    r->end = p->end;
    r->final = p->final;
    r->crc = total ? if_crc32_finish(z->hflags[1], (if_u32)total) : 0;
    return 0;
}

/* Queues the copy of in[off..off+n) into set k's compressed bytes (see
 * stream_inflate.h). */
int stream_inflate_upload_part(stream_inflate_dev *z, int k, CUstream s, const uint8_t *in,
                               size_t off, size_t n)
{
    if (k >= z->nsets || off > z->comp_cap || n > z->comp_cap - off)
        return 1;
    CU_TRY(cu.MemcpyHtoDAsync(z->set[k].comp + off, in + off, n, s));
    return 0;
}

/* Queues the zeros after set k's len compressed bytes (see
 * stream_inflate.h). */
int stream_inflate_upload_end(stream_inflate_dev *z, int k, CUstream s, size_t len)
{
    if (k >= z->nsets || len > z->comp_cap)
        return 1;
    CU_TRY(cu.MemsetD8Async(z->set[k].comp + len, 0, IF_IN_PAD, s));
    return 0;
}

/* Cuts a batch into segments and queues its first round (see
 * stream_inflate.h). */
int stream_inflate_batch_begin(stream_inflate_dev *z, CUstream s, int k, size_t len, uint64_t start,
                               int exact, uint64_t stop)
{
    if (len > z->comp_cap || len > UINT32_MAX - IF_IN_PAD || k >= z->nsets)
        return 1;
    stream_inflate_set *t = &z->set[k];
    stream_plan_init(&t->plan, t->hsegs, t->htodo, z->max_segs, len, start, exact, stop, z->step,
                     stream_inflate_seg_cap(z, k), z->sym_cap);
    return stream_inflate_round(z, t, s, len);
}

/* Finishes the batch stream_inflate_batch_begin queued (see stream_inflate.h). */
int stream_inflate_batch_end(stream_inflate_dev *z, CUstream s, const uint8_t *in, size_t len,
                             int last, uint64_t begin, const uint8_t *window, uint32_t valid,
                             CUdeviceptr out, size_t out_cap, uint8_t *win_out,
                             stream_inflate_result *r)
{
    stream_inflate_set *t = &z->set[z->cur];
    stream_plan *p = &t->plan;
    int rc, res;
    if (begin != IFS_NONE)
        stream_plan_begin_at(p, begin);
    for (;;) {
        CU_TRY(cu.StreamSynchronize(s));
        if ((res = stream_plan_check(p, in, len, last)) != STREAM_PLAN_ROUND)
            break;
        if ((rc = stream_inflate_round(z, t, s, len)) < 0)
            return rc;
    }
    z->rounds = p->rounds;
    z->segments = p->n;
    /* the CRC kernel counts bytes in 32 bits */
    if (res != STREAM_PLAN_GIVE_UP && (p->nout > out_cap || p->nout > UINT32_MAX))
        p->why = STREAM_PLAN_NO_ROOM; /* a shorter batch fits */
    if (res == STREAM_PLAN_GIVE_UP || p->nout > out_cap || p->nout > UINT32_MAX)
        return 1;
    return stream_inflate_finish(z, s, t, window, valid, out, win_out, r);
}
