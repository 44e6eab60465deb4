/* block_deflate.h - the device stage of blocked gzip output: a command's
 * result chunk, still in device memory, compressed there by the kernels of
 * ptx/deflate.cu into the BGZF members that the host's writer would make of
 * the same bytes (io/gzip/gz_writer.h), so that only compressed bytes come back.
 *
 * A chunk is cut at the output stream's block boundaries (gz_writer_block_split):
 * its whole blocks are compressed on the device; the bytes before the
 * first boundary and after the last one come back raw, and the writer
 * compresses them with the blocks they complete. The result is a gz_writer_span,
 * whose bytes in the file are those of an all-host run. Level 1 runs on the
 * device (block_deflate_level); other levels are compressed on the host. */
#ifndef GPUBATCH_RUNTIME_GPU_DEFLATE_H
#define GPUBATCH_RUNTIME_GPU_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/gpu.h"
#include "io/gzip/gz_writer.h"

/* One pipeline slot's device and pinned buffers; zero it before first use. */
typedef struct {
    gpu *g;
    size_t max_blocks;   /* whole blocks a chunk may hold */
    unsigned grid;       /* CTAs of dfk_fast, each with a workspace */
    CUdeviceptr ws;      /* their workspaces (dw_work) */
    CUdeviceptr bodies;  /* deflate data, one slot per block */
    CUdeviceptr sizes;   /* deflate bytes per block */
    CUdeviceptr crcs;    /* CRC-32 per block */
    unsigned *sizes_host;    /* pinned copy of sizes */
    unsigned char *host;     /* the caller's pinned buffer: head raw, tail raw, members */
    CUdeviceptr host_dev;    /* host, as the device's kernels address it */
    size_t head, nblocks, tail; /* the queued chunk's split */
} block_deflate_slot;

/* Whether blocked gzip at level is compressed on the device. */
int block_deflate_level(int level);

/* Whether device g can write members straight into host, a buffer pinned
 * by gpu_host_register (the driver mapped it into the device); where it
 * cannot, the output is compressed on the host, with the same bytes. */
int block_deflate_host_mapped(gpu *g, void *host);

/* Bytes of the pinned host buffer of a slot for chunks of max_bytes. */
size_t block_deflate_host_bytes(size_t max_bytes);

/* Allocates the slot's buffers on device g (bound first) for chunks of at most max_bytes;
 * host is the caller's buffer of block_deflate_host_bytes(max_bytes) bytes pinned by
 * gpu_host_register, which the results go to. 0 or a negative gpu_error
 * (text in g). */
int block_deflate_open(block_deflate_slot *z, gpu *g, size_t max_bytes, void *host);

/* The i-th of a command's output buffers: its deflate slot, its device and
 * its pinned host buffer (block_deflate_open_all). */
typedef block_deflate_slot *(*block_deflate_slot_at)(void *ctx, int i, gpu **g, void **host);

/* Opens the deflate slots of n output buffers (at(ctx, i, ...)) for chunks
 * of at most max_bytes, all or none: 0, opening none, when a device cannot
 * write into its buffer (block_deflate_host_mapped; the host compresses then), 1
 * when all are open, or a negative gpu_error filled in *st. A
 * buffer not made yet (host NULL) is left out: block_deflate_open_late opens its
 * slot once it is. */
int block_deflate_open_all(int n, block_deflate_slot_at at, void *ctx, size_t max_bytes,
                           io_status *st);

/* Opens the deflate slot z of an output buffer made after block_deflate_open_all
 * turned device deflate on, where device g can write into host (else z
 * stays closed, block_deflate_is_open says so, and that buffer's chunks are
 * compressed on the host, to the same bytes). 0, or a negative gpu_error
 * filled in *st. */
int block_deflate_open_late(block_deflate_slot *z, gpu *g, size_t max_bytes, void *host,
                            io_status *st);

/* Whether slot z is open: chunks queued through it come back compressed. */
static inline int block_deflate_is_open(const block_deflate_slot *z)
{
    return z->g != NULL;
}

/* Queues on stream s the compression of the bytes bytes at device address
 * data, which start at position offset of the output stream: the raw head
 * and tail copied to the slot's pinned buffer, the whole blocks compressed
 * and laid out as members, written by the last kernel straight into that
 * buffer (no copy to queue behind other streams' work once the chunk is
 * done), and their sizes copied back. 0 or a negative gpu_error (text in
 * the slot's gpu). */
int block_deflate_queue(block_deflate_slot *z, CUstream s, CUdeviceptr data, uint64_t offset,
                        size_t bytes);

/* Once the work queued is done: describes the chunk's output in *span,
 * valid until the slot is queued again. 0, or a negative gpu_error with one
 * line in *st. */
int block_deflate_collect(block_deflate_slot *z, gz_writer_span *span, io_status *st);

/* Frees the slot's buffers; accepts a zeroed slot. */
void block_deflate_close(block_deflate_slot *z);

#endif
