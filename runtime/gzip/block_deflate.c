/* block_deflate.c - blocked gzip members compressed on the device. */
#include "block_deflate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/deflate_warp.h"

#define BLOCK_DEFLATE_MODULE "deflate"
#define BLOCK_DEFLATE_GATHER_THREADS 256 /* DF_GATHER_THREADS of ptx/deflate.cu */

/* Level 1 only, unless GPUBATCH_HOST_DEFLATE=1 keeps every level on the
 * host: the warp encoder (ptx/deflate_warp.h) is level 1's parse; the hash
 * chains of levels 2..9 walk one position after another, which one GPU
 * thread per block (dfk_serial) does slower than the host's cores. */
int block_deflate_level(int level)
{
    const char *host = getenv("GPUBATCH_HOST_DEFLATE");
    return level == 1 && !(host && !strcmp(host, "1"));
}

/* dfk_fast's CTAs resident per multiprocessor: DW_CTAS_PER_SM, or as many
 * of its shared workspaces (and the driver's reserve for each) as a smaller
 * multiprocessor's shared memory holds. */
static size_t block_deflate_ctas_per_sm(const gpu_device_info *info)
{
    if (info->smem_per_sm <= 0)
        return DW_CTAS_PER_SM;
    size_t n = (size_t)info->smem_per_sm / (sizeof(dw_shared) + (size_t)info->smem_reserved);
    return n < 1 ? 1 : n > DW_CTAS_PER_SM ? DW_CTAS_PER_SM : n;
}

/* Whole blocks a chunk of max_bytes may hold, wherever it starts. */
static size_t block_deflate_max_blocks(size_t max_bytes)
{
    return max_bytes / GZ_WRITER_BLOCK_DATA + 1;
}

/* Whether g reaches host (see block_deflate.h). */
int block_deflate_host_mapped(gpu *g, void *host)
{
    CUdeviceptr d;
    return gpu_host_device_pointer(g, host, &d) == 0;
}

/* Opens the deflate slots of the output buffers made so far, or none (see
 * block_deflate.h). */
int block_deflate_open_all(int n, block_deflate_slot_at at, void *ctx, size_t max_bytes,
                           io_status *st)
{
    gpu *g;
    void *host;
    for (int i = 0; i < n; i++) {
        at(ctx, i, &g, &host);
        if (host && !block_deflate_host_mapped(g, host))
            return 0;
    }
    for (int i = 0; i < n; i++) {
        block_deflate_slot *z = at(ctx, i, &g, &host);
        int rc = host ? block_deflate_open_late(z, g, max_bytes, host, st) : 0;
        if (rc < 0)
            return rc;
    }
    return 1;
}

/* Opens the deflate slot of an output buffer made after block_deflate_open_all (see
 * block_deflate.h). */
int block_deflate_open_late(block_deflate_slot *z, gpu *g, size_t max_bytes, void *host,
                            io_status *st)
{
    if (!block_deflate_host_mapped(g, host))
        return 0;
    int rc =
        gpu_settle(g, block_deflate_open(z, g, max_bytes, host), "preparing the device's deflate");
    return rc < 0 ? io_pass_as(st, rc, gpu_status(g)) : rc;
}

/* Head, tail and members at most (see block_deflate.h). */
size_t block_deflate_host_bytes(size_t max_bytes)
{
    return 2 * GZ_WRITER_BLOCK_DATA +
           block_deflate_max_blocks(max_bytes) * DF_MEMBER_BOUND(GZ_WRITER_BLOCK_DATA);
}

/* Allocates the slot (see block_deflate.h). */
int block_deflate_open(block_deflate_slot *z, gpu *g, size_t max_bytes, void *host)
{
    int rc = gpu_bind(g);
    memset(z, 0, sizeof *z);
    if (rc < 0)
        return rc;
    z->g = g;
    z->max_blocks = block_deflate_max_blocks(max_bytes);
    z->host = host;
    size_t sms = (size_t)gpu_info(g)->sm_count;
    size_t grid = block_deflate_ctas_per_sm(gpu_info(g)) * (sms ? sms : 1);
    z->grid = (unsigned)(grid < z->max_blocks ? grid : z->max_blocks);
    /* the shared memory those CTAs need, the rest left to the L1 cache (a
     * hint: a driver that does not take it runs the kernel all the same) */
    CUfunction ff;
    if (gpu_function(g, BLOCK_DEFLATE_MODULE, "dfk_fast", &ff) == 0 && gpu_info(g)->smem_per_sm > 0)
        (void)cu.FuncSetAttribute(ff, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                  (int)dw_carveout(gpu_info(g)->smem_per_sm,
                                                   gpu_info(g)->smem_reserved));
    if ((rc = gpu_host_device_pointer(g, host, &z->host_dev)) < 0 ||
        (rc = gpu_mem_alloc(g, &z->ws, z->grid * sizeof(dw_work), "deflate workspaces")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->bodies, z->max_blocks * DW_SLOT_PITCH, "deflate output")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->sizes, z->max_blocks * sizeof(unsigned), "deflate sizes")) < 0 ||
        (rc = gpu_mem_alloc(g, &z->crcs, z->max_blocks * sizeof(unsigned), "deflate CRCs")) < 0)
        goto out_close;
    if (!(z->sizes_host = gpu_host_alloc(g, z->max_blocks * sizeof(unsigned)))) {
        rc = GPU_ERR_OUT_OF_MEMORY;
        goto out_close;
    }
    return 0;
out_close:
    block_deflate_close(z);
    return rc;
}

/* Frees the slot. */
void block_deflate_close(block_deflate_slot *z)
{
    if (!z->g)
        return;
    gpu_mem_free(z->g, z->ws);
    gpu_mem_free(z->g, z->bodies);
    gpu_mem_free(z->g, z->sizes);
    gpu_mem_free(z->g, z->crcs);
    gpu_host_free(z->g, z->sizes_host);
    memset(z, 0, sizeof *z);
}

/* Queues the raw copies and the kernels of one chunk (see block_deflate.h). */
int block_deflate_queue(block_deflate_slot *z, CUstream s, CUdeviceptr data, uint64_t offset,
                        size_t bytes)
{
    int rc;
    gz_writer_block_split(offset, bytes, &z->head, &z->nblocks);
    if (z->nblocks > z->max_blocks)
        return GPU_ERR_INTERNAL;
    size_t body = z->head + z->nblocks * GZ_WRITER_BLOCK_DATA;
    z->tail = bytes - body;
    if (z->head)
        CU_TRY(cu.MemcpyDtoHAsync(z->host, data, z->head, s));
    if (z->tail)
        CU_TRY(cu.MemcpyDtoHAsync(z->host + z->head, data + body, z->tail, s));
    if (z->nblocks == 0)
        return 0;
    CUfunction fc, ff, fg;
    if ((rc = gpu_function(z->g, BLOCK_DEFLATE_MODULE, "dfk_crc", &fc)) < 0 ||
        (rc = gpu_function(z->g, BLOCK_DEFLATE_MODULE, "dfk_fast", &ff)) < 0 ||
        (rc = gpu_function(z->g, BLOCK_DEFLATE_MODULE, "dfk_gather", &fg)) < 0)
        return rc;
    CUdeviceptr in = data + z->head, members = z->host_dev + z->head + z->tail;
    unsigned long long n = (unsigned long long)z->nblocks * GZ_WRITER_BLOCK_DATA;
    unsigned nb = (unsigned)z->nblocks, grid = nb < z->grid ? nb : z->grid;
    void *pc[] = {&in, &n, &nb, &z->crcs};
    void *pf[] = {&in, &n, &nb, &z->bodies, &z->sizes, &z->ws};
    void *pg[] = {&z->bodies, &z->sizes, &z->crcs, &n, &nb, &members};
    if ((rc = gpu_launch(z->g, fc, "dfk_crc", nb, 32, s, pc)) < 0 ||
        (rc = gpu_launch(z->g, ff, "dfk_fast", grid, DW_T, s, pf)) < 0 ||
        (rc = gpu_launch(z->g, fg, "dfk_gather", nb, BLOCK_DEFLATE_GATHER_THREADS, s, pg)) < 0)
        return rc;
    CU_TRY(cu.MemcpyDtoHAsync(z->sizes_host, z->sizes, z->nblocks * sizeof(unsigned), s));
    return 0;
}

/* Describes the chunk whose work is done (see block_deflate.h). */
int block_deflate_collect(block_deflate_slot *z, gz_writer_span *span, io_status *st)
{
    size_t members = 0;
    for (size_t b = 0; b < z->nblocks; b++) {
        if (z->sizes_host[b] > DF_OUT_BOUND(GZ_WRITER_BLOCK_DATA)) {
            /* never from dfk_fast: it stores what would not shrink */
            return io_fail(st, GPU_ERR_LAUNCH, "device deflate gave block %zu a size of %u bytes",
                           b, z->sizes_host[b]);
        }
        members += z->sizes_host[b] + DF_MEMBER_HEADER + DF_MEMBER_TRAILER;
    }
    span->head = z->host;
    span->head_len = z->head;
    span->members = z->host + z->head + z->tail;
    span->members_len = members;
    span->nblocks = z->nblocks;
    span->tail = z->host + z->head;
    span->tail_len = z->tail;
    return 0;
}
