/* gzs_standin.h - a stand-in for the device's kernels of one deflate
 * stream (the stream_inflate_ functions of runtime/gzip/stream_inflate.h): the same plan
 * (io/gzip/stream_plan.c) and segment decoder (ptx/inflate_stream.h) on the
 * host, as tests/inflate_stream_host.h runs them, over the stand-in
 * driver's device memory (tests/cli/fakecuda.c: host memory). A test
 * program that includes it is linked without runtime/gzip/stream_inflate.o
 * (the Makefile's TEST_OBJ); rounds_run counts the rounds it decoded. */
#ifndef GPUBATCH_TESTS_GZS_STANDIN_H
#define GPUBATCH_TESTS_GZS_STANDIN_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "inflate_stream_host.h"
#include "runtime/cu.h"
#include "runtime/gpu.h"
#include "runtime/gzip/stream_inflate.h"

#define STEP_BYTES 2048 /* compressed bytes per segment: many segments in a small batch */
#define SEG_ROOM 4      /* symbols of room per compressed byte of a segment */

static atomic_int rounds_run; /* rounds decoded, on any thread */

/* Allocates a set's buffers (device memory is host memory here). */
int stream_inflate_open(stream_inflate_dev *z, gpu *g, size_t comp_cap, size_t seg_bytes,
                        uint32_t seg_cap, int sets)
{
    (void)seg_bytes, (void)seg_cap;
    memset(z, 0, sizeof *z);
    z->g = g;
    z->comp_cap = comp_cap;
    z->step = (uint64_t)STEP_BYTES * 8;
    z->seg_cap = SEG_ROOM * STEP_BYTES;
    z->nsets = sets < 1 ? 1 : sets > STREAM_INFLATE_SETS_MAX ? STREAM_INFLATE_SETS_MAX : sets;
    uint64_t planned = (comp_cap + STEP_BYTES - 1) / STEP_BYTES + 1;
    z->max_segs = (int)(planned * 2);
    z->sym_cap = planned * z->seg_cap * 2;
    for (int k = 0; k < z->nsets; k++) {
        stream_inflate_set *t = &z->set[k];
        int rc;
        if ((rc = gpu_mem_alloc(g, &t->comp, comp_cap + IF_IN_PAD, "comp")) < 0 ||
            (rc = gpu_mem_alloc(g, &t->syms, z->sym_cap * sizeof(uint16_t), "syms")) < 0)
            return rc;
        if (!(t->hsegs = malloc((size_t)z->max_segs * sizeof *t->hsegs)) ||
            !(t->htodo = malloc((size_t)z->max_segs * sizeof *t->htodo)))
            return GPU_ERR_OUT_OF_MEMORY;
    }
    return 0;
}

/* Frees the buffers. */
void stream_inflate_close(stream_inflate_dev *z)
{
    for (int k = 0; k < STREAM_INFLATE_SETS_MAX; k++) {
        gpu_mem_free(z->g, z->set[k].comp);
        gpu_mem_free(z->g, z->set[k].syms);
        free(z->set[k].hsegs);
        free(z->set[k].htodo);
    }
    memset(z, 0, sizeof *z);
}

/* Copies part of a batch to set k through the driver. */
int stream_inflate_upload_part(stream_inflate_dev *z, int k, CUstream s, const uint8_t *in,
                               size_t off, size_t n)
{
    if (k >= z->nsets || off > z->comp_cap || n > z->comp_cap - off)
        return 1;
    return cu.MemcpyHtoDAsync(z->set[k].comp + off, in + off, n, s) == CUDA_SUCCESS ? 0 : -1;
}

/* Zeroes set k's padding through the driver. */
int stream_inflate_upload_end(stream_inflate_dev *z, int k, CUstream s, size_t len)
{
    if (k >= z->nsets || len > z->comp_cap)
        return 1;
    return cu.MemsetD8Async(z->set[k].comp + len, 0, IF_IN_PAD, s) == CUDA_SUCCESS ? 0 : -1;
}

/* Decodes the segments a round lists, from the set's copy of the batch. */
static void stream_inflate_host_round(stream_inflate_dev *z, stream_inflate_set *t, size_t len)
{
    if_tables *tables = malloc(sizeof *tables);
    if (!tables)
        abort();
    const uint8_t *comp = (const uint8_t *)(uintptr_t)t->comp;
    uint16_t *syms = (uint16_t *)(uintptr_t)t->syms;
    for (int i = 0; i < t->plan.ntodo; i++)
        ifs_segment(comp, (if_u32)len, &t->plan.segs[t->plan.todo[i]], syms, tables);
    free(tables);
    (void)z;
    atomic_fetch_add(&rounds_run, 1);
}

/* Cuts set k's batch into segments and decodes its first round. */
int stream_inflate_batch_begin(stream_inflate_dev *z, CUstream s, int k, size_t len, uint64_t start,
                               int exact, uint64_t stop)
{
    (void)s;
    if (len > z->comp_cap || k >= z->nsets)
        return 1;
    stream_inflate_set *t = &z->set[k];
    stream_plan_init(&t->plan, t->hsegs, t->htodo, z->max_segs, len, start, exact, stop, z->step,
                     stream_inflate_seg_cap(z, k), z->sym_cap);
    stream_inflate_host_round(z, t, len);
    return 0;
}

/* Finishes the current set's batch: further rounds, the windows and markers
 * (ish_replace), the CRC-32. */
int stream_inflate_batch_end(stream_inflate_dev *z, CUstream s, const uint8_t *in, size_t len,
                             int last, uint64_t begin, const uint8_t *window, uint32_t valid,
                             CUdeviceptr out, size_t out_cap, uint8_t *win_out,
                             stream_inflate_result *r)
{
    (void)s;
    stream_inflate_set *t = &z->set[z->cur];
    stream_plan *p = &t->plan;
    if (begin != IFS_NONE)
        stream_plan_begin_at(p, begin);
    int res;
    while ((res = stream_plan_check(p, in, len, last)) == STREAM_PLAN_ROUND)
        stream_inflate_host_round(z, t, len);
    z->rounds = p->rounds;
    z->segments = p->n;
    if (res != STREAM_PLAN_GIVE_UP && p->nout > out_cap)
        p->why = STREAM_PLAN_NO_ROOM; /* a shorter batch fits */
    if (res == STREAM_PLAN_GIVE_UP || p->nout > out_cap)
        return 1;
    uint8_t win[IFS_WINDOW];
    if (window)
        memcpy(win, window, IFS_WINDOW);
    else
        memset(win, 0, sizeof win);
    uint8_t *dst = (uint8_t *)(uintptr_t)out;
    if (ish_replace(p, (const uint16_t *)(uintptr_t)t->syms, win, &valid, dst))
        return 1;
    if (win_out)
        memcpy(win_out, win, IFS_WINDOW);
    r->nout = p->nout;
    r->end = p->end;
    r->final = p->final;
    r->crc = (uint32_t)crc32(0, dst, (uInt)p->nout);
    return 0;
}

#endif
