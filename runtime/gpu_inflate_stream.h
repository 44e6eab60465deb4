/* gpu_inflate_stream.h - one deflate stream (a gzip member that is not
 * BGZF) inflated on the GPU in batches of compressed bytes: each batch is
 * cut into segments that the kernels of ptx/inflate.cu decode at once
 * (ptx/inflate_stream.h), in rounds that io/stream_plan.c plans; then the
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

#include "gpu.h"
#include "io/stream_plan.h"
#include "ptx/inflate_stream.h"

/* One batch's buffers on the device, and its plan. */
typedef struct {
    CUdeviceptr comp;    /* the compressed bytes, then zeroed padding */
    CUdeviceptr syms, segs, todo;
    ifs_seg *hsegs;      /* pinned: the plan's segments */
    int *htodo;          /* pinned: the segments of a round */
    sp_plan plan;
} gzs_set;

/* One device's buffers for batches of at most comp_cap compressed bytes:
 * one set, or two so that the next batch's first round runs while one is
 * finished (the current set and the spare). */
typedef struct {
    gpu *g;
    size_t comp_cap;     /* compressed bytes per batch */
    uint64_t sym_cap;    /* symbols in each set's pool */
    int max_segs;        /* segments per batch, splits included */
    int max_groups;      /* groups of segments whose windows are passed along at once */
    uint64_t step;       /* nominal segment length in bits */
    uint32_t seg_cap;    /* symbols of room per segment */
    CUfunction decode, group_maps, group_windows, windows, replace, crc; /* the gzs_ kernels */
    gzs_set set[2];
    int nsets, cur;      /* set[cur] holds the batch being inflated */
    CUdeviceptr wins, maps, flags;
    unsigned *hflags;    /* pinned: bad, CRC terms */
    int rounds, segments; /* the last batch's rounds and segments (-v, bench) */
} gzs_dev;

/* What one batch decoded to. */
typedef struct {
    uint64_t nout;   /* bytes written */
    uint64_t end;    /* bit after the last block decoded, from the batch's first byte */
    int final;       /* the stream's final block was in the batch */
    uint32_t crc;    /* CRC-32 of the bytes written */
} gzs_result;

/* Allocates the buffers on g for batches of comp_cap bytes cut into
 * segments of seg_bytes compressed bytes, each with room for seg_cap
 * symbols to start with; `sets` (1 or 2) sets of them. 0 or a negative
 * gpu_error (text in g). */
int gzs_open(gzs_dev *z, gpu *g, size_t comp_cap, size_t seg_bytes, uint32_t seg_cap, int sets);

/* Queues the copy of a batch's compressed bytes in[0..len) (host memory,
 * pinned for speed) to the current set on stream s: 0, 1 when more than
 * the buffers were made for, or a negative gpu_error. */
int gzs_upload(gzs_dev *z, CUstream s, const uint8_t *in, size_t len);

/* gzs_upload into the spare set: the batch after the one being inflated,
 * on a stream of its own. */
int gzs_upload_spare(gzs_dev *z, CUstream s, const uint8_t *in, size_t len);

/* Makes the spare set the current one, and the other the spare. */
void gzs_swap(gzs_dev *z);

/* Inflates the batch gzs_upload copied on stream s: in[0..len) (the same
 * bytes, which the plan reads; the batch begins where `start`, a bit offset
 * in it, is a block boundary), with window (the IFS_WINDOW bytes before it, the last `valid`
 * of them real; NULL when valid is 0) into out (device memory, room for
 * out_cap bytes). last: the stream's data ends with the batch. On return
 * win_out (host, IFS_WINDOW bytes, may be NULL) holds the window after the
 * batch. Returns 0, 1 when the batch is declined (see above), or a negative
 * gpu_error. */
int gzs_batch(gzs_dev *z, CUstream s, const uint8_t *in, size_t len, uint64_t start, int last,
              const uint8_t *window, uint32_t valid, CUdeviceptr out, size_t out_cap,
              uint8_t *win_out, gzs_result *r);

/* gzs_batch in two halves, so that the caller can do other work while the
 * first round runs. gzs_batch_begin cuts the batch of the current set (the
 * spare with `spare`) into segments (sp_init: from `start`, a block
 * boundary when exact, to `stop`) and queues its first round on s (0, 1
 * when the batch is longer than the buffers, or a negative result of a
 * failed driver call, which CU_TRY recorded on the calling thread). It
 * touches nothing of g's, so it may run on another thread than the rest.
 * gzs_batch_end waits for the current set's rounds on s and goes on as
 * gzs_batch does; `begin` is where a batch whose start was not exact must
 * begin (sp_begin_at), else IFS_NONE. */
int gzs_batch_begin(gzs_dev *z, CUstream s, int spare, size_t len, uint64_t start, int exact,
                    uint64_t stop);
int gzs_batch_end(gzs_dev *z, CUstream s, const uint8_t *in, size_t len, int last,
                  uint64_t begin, const uint8_t *window, uint32_t valid, CUdeviceptr out,
                  size_t out_cap, uint8_t *win_out, gzs_result *r);

/* Frees the buffers; accepts a zeroed one. */
void gzs_close(gzs_dev *z);

#endif
