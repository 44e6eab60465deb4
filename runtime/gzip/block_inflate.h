/* block_inflate.h - the device stage of blocked gzip input: a chunk of whole
 * BGZF members (io/pipeline.h, pl_gz_chunk) copied to the GPU as it lies in
 * the pinned buffer, inflated there by the kernels of ptx/inflate.cu into a
 * decoded buffer, and checked (CRC-32, ISIZE) there too; the command's own
 * kernel then reads the decoded data in device memory.
 *
 * A member the device refuses is reported with the message the host's
 * reader gives for it (the file offset of the member and zlib's reason). */
#ifndef GPUBATCH_RUNTIME_GPU_INFLATE_H
#define GPUBATCH_RUNTIME_GPU_INFLATE_H

#include <stddef.h>

#include "runtime/gpu.h"
#include "io/pipeline.h"

/* One pipeline slot's device buffers; zero it before first use. */
typedef struct {
    gpu *g;
    size_t chunk_bytes;
    CUdeviceptr comp;   /* the buffer's bytes: members, runs, member table */
    CUdeviceptr dec;    /* the decoded span (placed so that the data is aligned) */
    CUdeviceptr data;   /* the last staged chunk's data in it */
    CUdeviceptr bad;    /* lowest failing member index, or IF_NO_MEMBER */
    unsigned *bad_host; /* pinned copy of bad */
} block_inflate_slot;

/* Queues the copies and kernels that decode chunk c (its pinned buffer at
 * host, chunks of at most chunk_bytes data bytes) on stream s of device g,
 * allocating the slot's buffers on first use; records event `copied` (if
 * not NULL) after the copies from host, before the kernels; *data gets the
 * device address of the chunk's data. 0 or a negative gpu_error (text in
 * g). */
int block_inflate_stage(block_inflate_slot *z, gpu *g, CUstream s, const void *host,
                        const pl_gz_chunk *c, size_t chunk_bytes, CUevent copied,
                        CUdeviceptr *data);

/* Allocates the slot's buffers on device g for chunks of at most
 * chunk_bytes data bytes, unless it has them: done by block_inflate_stage otherwise,
 * this lets an engine find out at its start whether they fit. 0 or a
 * negative gpu_error (text in g). */
int block_inflate_reserve(block_inflate_slot *z, gpu *g, size_t chunk_bytes);

/* After the stream's work is done: 0, or IO_ERR_CORRUPT with the first bad member's
 * message in *st, as the host's reader gives it when it reads the member's
 * file from that member on (c as given to block_inflate_stage). */
int block_inflate_check(const block_inflate_slot *z, const pl_gz_chunk *c, io_status *st);

/* Frees the slot's buffers; accepts a zeroed slot. */
void block_inflate_close(block_inflate_slot *z);

#endif
