/* block_inflate.c - blocked gzip members inflated on the device. */
#include "block_inflate.h"

#include <stdio.h>
#include <string.h>

#include "io/reader.h"

#define BLOCK_INFLATE_MODULE "inflate"
#define BLOCK_INFLATE_ALIGN 256 /* a chunk's decoded data: the kernels' vector loads */

/* Allocates the slot's device buffers for chunks of chunk_bytes. */
static int block_inflate_alloc(block_inflate_slot *z, gpu *g, size_t chunk_bytes)
{
    int rc;
    z->g = g;
    z->chunk_bytes = chunk_bytes;
    if ((rc = gpu_mem_alloc(g, &z->comp, pl_gz_buffer_bytes(chunk_bytes) + IF_IN_PAD,
                            "a compressed chunk buffer (--chunk)")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->dec, pl_gz_span_bytes(chunk_bytes) + BLOCK_INFLATE_ALIGN,
                            "a decoded chunk buffer (--chunk)")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->bad, sizeof(unsigned), "inflate status")) < 0)
        return rc;
    if (!(z->bad_host = gpu_host_alloc(g, sizeof(unsigned))))
        return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Allocates the slot's buffers ahead of its first chunk (see block_inflate.h). */
int block_inflate_reserve(block_inflate_slot *z, gpu *g, size_t chunk_bytes)
{
    if (z->g == g && z->chunk_bytes >= chunk_bytes)
        return 0;
    block_inflate_close(z);
    int rc = block_inflate_alloc(z, g, chunk_bytes);
    if (rc < 0)
        block_inflate_close(z);
    return rc;
}

/* Frees the slot's buffers. */
void block_inflate_close(block_inflate_slot *z)
{
    if (!z->g)
        return;
    gpu_mem_free(z->g, z->comp);
    gpu_mem_free(z->g, z->dec);
    gpu_mem_free(z->g, z->bad);
    gpu_host_free(z->g, z->bad_host);
    memset(z, 0, sizeof *z);
}

/* Queues a chunk's copies and kernels (see block_inflate.h). */
int block_inflate_stage(block_inflate_slot *z, gpu *g, CUstream s, const void *host,
                        const pl_gz_chunk *c, size_t chunk_bytes, CUevent copied, CUdeviceptr *data)
{
    int rc = block_inflate_reserve(z, g, chunk_bytes);
    if (rc < 0)
        return rc;
    const unsigned char *h = host;
    size_t tab_off = (size_t)((const unsigned char *)c->members - h);
    unsigned n = (unsigned)c->nmembers;
    CU_TRY(cu.MemcpyHtoDAsync(z->comp, h, c->in_bytes, s));
    /* the span starts where the chunk's data comes out BLOCK_INFLATE_ALIGN-aligned */
    CUdeviceptr span =
        z->dec + (BLOCK_INFLATE_ALIGN - c->skip % BLOCK_INFLATE_ALIGN) % BLOCK_INFLATE_ALIGN;
    for (int i = 0; i < c->nruns; i++)
        CU_TRY(cu.MemcpyHtoDAsync(span + c->runs[i].out_off, h + c->runs[i].in_off,
                                  c->runs[i].len, s));
    CUdeviceptr tab = z->comp + tab_off;
    if (n)
        CU_TRY(cu.MemcpyHtoDAsync(tab, c->members, n * sizeof(if_member), s));
    if (copied)
        CU_TRY(cu.EventRecord(copied, s));
    *data = z->data = span + c->skip;
    *z->bad_host = IF_NO_MEMBER;
    if (n == 0)
        return 0;
    CU_TRY(cu.MemsetD8Async(z->bad, 0xff, sizeof(unsigned), s));
    CUfunction fi, fc;
    if ((rc = gpu_function(g, BLOCK_INFLATE_MODULE, "gzk_inflate", &fi)) < 0 ||
        (rc = gpu_function(g, BLOCK_INFLATE_MODULE, "gzk_crc", &fc)) < 0)
        return rc;
    void *pi[] = {&z->comp, &tab, &n, &span, &z->bad};
    if ((rc = gpu_launch(g, fi, "gzk_inflate", (n + IF_GPU_THREADS - 1) / IF_GPU_THREADS,
                         IF_GPU_THREADS, s, pi)) < 0)
        return rc;
    void *pc[] = {&tab, &n, &span, &z->bad};
    if ((rc = gpu_launch(g, fc, "gzk_crc", n, 32, s, pc)) < 0)
        return rc;
    CU_TRY(cu.MemcpyDtoHAsync(z->bad_host, z->bad, sizeof(unsigned), s));
    return 0;
}

/* Explains a member the device refused (see block_inflate.h). */
int block_inflate_check(const block_inflate_slot *z, const pl_gz_chunk *c, io_status *st)
{
    unsigned i = z->g ? *z->bad_host : IF_NO_MEMBER;
    if (i == IF_NO_MEMBER || (int)i >= c->nmembers)
        return 0;
    pl_gz_member_error(c, (int)i, st);
    return st->code = IO_ERR_CORRUPT;
}
