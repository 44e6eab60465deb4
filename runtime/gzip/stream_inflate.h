/* stream_inflate.h - one deflate stream (a gzip member that is not
 * BGZF) inflated on the GPU in batches of compressed bytes: each batch is
 * cut into segments that the kernels of ptx/inflate.cu decode at once
 * (ptx/inflate_stream.h), in rounds that io/gzip/stream_plan.c plans; then the
 * windows are passed along, the markers replaced and the CRC-32 computed on
 * the device, so that only compressed bytes cross the link.
 *
 * The device never judges invalid data: where the plan gives up (invalid,
 * cut or unusual data, or a block too large for the room) the batch is
 * declined and the caller inflates it on the host, whose messages are
 * zlib's. */
#ifndef GPUBATCH_RUNTIME_GPU_INFLATE_STREAM_H
#define GPUBATCH_RUNTIME_GPU_INFLATE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/gpu.h"
#include "io/gzip/stream_plan.h"
#include "ptx/inflate_stream.h"

/* One batch's buffers on the device, and its plan. */
typedef struct {
    CUdeviceptr comp;    /* the compressed bytes, then zeroed padding */
    CUdeviceptr syms, segs, todo;
    ifs_seg *hsegs;      /* pinned: the plan's segments */
    int *htodo;          /* pinned: the segments of a round */
    uint32_t room;       /* symbols of room per compressed byte of the next batch's
                            segments (stream_plan_room), or 0: the device's seg_cap */
    stream_plan plan;
} stream_inflate_set;

#define STREAM_INFLATE_SETS_MAX 3 /* sets of batch buffers on one device at most */

/* One device's buffers for batches of at most comp_cap compressed bytes:
 * one set, or several so that the next batches' first rounds run while one
 * is finished (the current set, then the others in the order they are
 * taken: set[(cur + 1) % nsets] next). */
typedef struct {
    gpu *g;
    size_t comp_cap;     /* compressed bytes per batch */
    uint64_t sym_cap;    /* symbols in each set's pool */
    int max_segs;        /* segments per batch, splits included */
    int max_groups;      /* groups of segments whose windows are passed along at once */
    uint64_t step;       /* nominal segment length in bits */
    uint32_t seg_cap;    /* symbols of room per segment */
    CUfunction decode, group_maps, group_windows, windows, replace, crc; /* the gzs_ kernels */
    stream_inflate_set set[STREAM_INFLATE_SETS_MAX];
    int nsets, cur;      /* set[cur] holds the batch being inflated */
    CUdeviceptr wins, maps, flags;
    unsigned *hflags;    /* pinned: bad, CRC terms */
    int rounds, segments; /* the last batch's rounds and segments (-v, bench) */
} stream_inflate_dev;

/* What one batch decoded to. */
typedef struct {
    uint64_t nout;   /* bytes written */
    uint64_t end;    /* bit after the last block decoded, from the batch's first byte */
    int final;       /* the stream's final block was in the batch */
    uint32_t crc;    /* CRC-32 of the bytes written */
} stream_inflate_result;

/* Allocates the buffers on g for batches of comp_cap bytes cut into
 * segments of seg_bytes compressed bytes, each with room for seg_cap
 * symbols to start with; `sets` (1 to STREAM_INFLATE_SETS_MAX) sets of them. 0 or a negative
 * gpu_error (text in g). */
int stream_inflate_open(stream_inflate_dev *z, gpu *g, size_t comp_cap, size_t seg_bytes,
                        uint32_t seg_cap, int sets);

/* Queues on stream s the copy of in[off..off+n) (host memory, pinned for
 * speed, that holds a batch's compressed bytes from in[0]) to the same
 * place in set k's buffer: 0, 1 when beyond what the buffers were made
 * for (or no set k), or a negative gpu_error. A batch may be copied in
 * parts, each from its own pinned range, as its bytes are read. */
int stream_inflate_upload_part(stream_inflate_dev *z, int k, CUstream s, const uint8_t *in,
                               size_t off, size_t n);

/* Queues the zeroed padding after set k's len compressed bytes, which the
 * decoder may read past a batch's end: as stream_inflate_upload_part. */
int stream_inflate_upload_end(stream_inflate_dev *z, int k, CUstream s, size_t len);

/* stream_inflate_upload_part of in[0..len), then stream_inflate_upload_end. */
static inline int stream_inflate_upload(stream_inflate_dev *z, int k, CUstream s, const uint8_t *in,
                                        size_t len)
{
    int rc = stream_inflate_upload_part(z, k, s, in, 0, len);
    return rc ? rc : stream_inflate_upload_end(z, k, s, len);
}

/* Room for each segment of set k's next batch: its room per byte times a
 * segment's bytes, an eighth of the pool at most (a batch of few
 * segments then has them cut shorter by stream_plan_init). */
static inline uint32_t stream_inflate_seg_cap(const stream_inflate_dev *z, int k)
{
    uint64_t cap = z->set[k].room ? (uint64_t)z->set[k].room * (z->step / 8) : z->seg_cap;
    uint64_t most = z->sym_cap / 8 < UINT32_MAX ? z->sym_cap / 8 : UINT32_MAX;
    return (uint32_t)(cap < most ? cap : most > z->seg_cap ? most : z->seg_cap);
}

/* Makes the next set (cur + 1, modulo nsets) the current one. */
static inline void stream_inflate_advance(stream_inflate_dev *z)
{
    z->cur = (z->cur + 1) % z->nsets;
}

/* stream_inflate_batch (below) in two halves, so that the caller can do other work while the
 * first round runs. stream_inflate_batch_begin cuts the batch of set k (the current
 * one, or a later one) into segments (stream_plan_init: from `start`, a block
 * boundary when exact, to `stop`) and queues its first round on s (0, 1
 * when the batch is longer than the buffers, or a negative result of a
 * failed driver call, which CU_TRY recorded on the calling thread). It
 * touches nothing of g's nor the other sets', and reads not which set is
 * current, so it may run on another thread than the rest.
 * stream_inflate_batch_end waits for the current set's rounds on s and goes on as
 * stream_inflate_batch does; `begin` is where a batch whose start was not exact must
 * begin (stream_plan_begin_at), else IFS_NONE. */
int stream_inflate_batch_begin(stream_inflate_dev *z, CUstream s, int k, size_t len, uint64_t start,
                               int exact, uint64_t stop);
int stream_inflate_batch_end(stream_inflate_dev *z, CUstream s, const uint8_t *in, size_t len,
                             int last, uint64_t begin, const uint8_t *window, uint32_t valid,
                             CUdeviceptr out, size_t out_cap, uint8_t *win_out,
                             stream_inflate_result *r);

/* Inflates the batch stream_inflate_upload copied into the current set on stream s:
 * in[0..len) (the same bytes, which the plan reads; the batch begins where
 * `start`, a bit offset in it, is a block boundary), with window (the
 * IFS_WINDOW bytes before it, the last `valid` of them real; NULL when
 * valid is 0) into out (device memory, room for out_cap bytes). last: the
 * stream's data ends with the batch. On return win_out (host, IFS_WINDOW
 * bytes, may be NULL) holds the window after the batch. Returns 0, 1 when
 * the batch is declined (see the top of this file), or a negative
 * gpu_error. */
static inline int stream_inflate_batch(stream_inflate_dev *z, CUstream s, const uint8_t *in,
                                       size_t len, uint64_t start, int last, const uint8_t *window,
                                       uint32_t valid, CUdeviceptr out, size_t out_cap,
                                       uint8_t *win_out, stream_inflate_result *r)
{
    int rc = stream_inflate_batch_begin(z, s, z->cur, len, start, 1, IFS_NONE);
    return rc ? rc
              : stream_inflate_batch_end(z, s, in, len, last, IFS_NONE, window, valid, out, out_cap,
                                         win_out, r);
}

/* Frees the buffers; accepts a zeroed one. */
void stream_inflate_close(stream_inflate_dev *z);

#endif
