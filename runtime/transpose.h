/* transpose.h - the host side of `transpose`: out[b][c][r] = in[b][r][c] for
 * a batch of rows x cols matrices of elements of 1, 2, 4, 8 or 16 bytes, on
 * the GPU (ptx/transpose.cu) or the CPU. Elements are moved as bytes, so the
 * two backends give the same output by construction.
 *
 * Two modes, chosen by tp_engine_open from the matrix size:
 * - batch: a matrix fits in a chunk; every chunk holds whole matrices and is
 *   transposed on its own slot (copy in, kernel, copy out), in flight
 *   together like the other commands' chunks;
 * - staged: a matrix is larger than a chunk; it is gathered whole (on the
 *   device: 2x its size of device memory; on the CPU: its size of host
 *   memory, transposed as it arrives), then streamed out in output order.
 * Errors are negative gpu_error codes with one line in tp_engine_error(). */
#ifndef GPUBATCH_RUNTIME_TRANSPOSE_H
#define GPUBATCH_RUNTIME_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "io/gzwrite.h"
#include "io/pipeline.h"

#include "gpu.h"

struct backend;
typedef struct tp_engine tp_engine;

/* Prepares the engine for matrices of rows x cols elements of elem bytes
 * (rows, cols >= 1), chunks of about chunk_bytes and nslots chunks in flight;
 * compressed: batches come as blocked gzip members. In batch mode the
 * first slot's buffers are made now, each other slot's when its first
 * chunk comes (the first chunks run meanwhile). */
int tp_engine_open(tp_engine **out, struct backend *be, int nslots, size_t chunk_bytes, size_t elem,
                   uint64_t rows, uint64_t cols, int compressed);
void tp_engine_close(tp_engine *e);

/* Nonzero in staged mode. */
int tp_engine_staged(const tp_engine *e);

/* The chunk size the input should be cut into: a whole number of matrices
 * in batch mode (and of elements always). */
size_t tp_engine_chunk(const tp_engine *e);

/* Batch mode: starts transposing the whole matrices in bytes of host (a
 * backend_host_alloc buffer left untouched until the collect); with gz
 * (CUDA only), host holds those bytes as compressed members, inflated on
 * the device (runtime/gpu_inflate.h). */
int tp_batch_submit(tp_engine *e, int slot, const void *host, const pl_gz_chunk *gz,
                    size_t bytes);

/* Batch mode: waits for slot's chunk; *out holds its transposed matrices,
 * valid until the slot is submitted again. */
int tp_batch_collect(tp_engine *e, int slot, const void **out, size_t *bytes);

/* Compresses the results on the device from now on, for blocked gzip at
 * level whose data start at output stream position offset: on the CUDA
 * backend, at the levels the device does (gzc_device_level) and where it
 * writes into the pinned host buffers (gzc_host_mapped); collected batch
 * slots then give a gz_span (tp_batch_span), and tp_stage_emit passes
 * spans. Returns 1 when on, 0 when it does not apply, or a negative
 * gpu_error. Call it before the first submit or staged chunk. */
int tp_engine_compress(tp_engine *e, int level, uint64_t offset);

/* After tp_batch_collect: 1 with the slot's result as a span of blocked gzip
 * (valid until the slot is submitted again), or 0 when it is plain. */
int tp_batch_span(const tp_engine *e, int slot, const gz_span **span);

/* Staged mode: makes the chunk in host (compressed members when gz is not
 * NULL, inflated on the device now) the source of tp_stage_put; host must
 * stay untouched until the next chunk. */
int tp_stage_chunk(tp_engine *e, const void *host, const pl_gz_chunk *gz);

/* Staged mode: adds bytes [from, from + bytes) of the current chunk's data
 * to the matrix at byte offset. */
int tp_stage_put(tp_engine *e, size_t from, uint64_t offset, size_t bytes);

/* Staged mode: once the matrix is complete, passes its transpose in order,
 * in pieces, to write(), or compressed on the device (tp_engine_compress)
 * to write_span(); a nonzero return of either stops and is returned. */
int tp_stage_emit(tp_engine *e, int (*write)(void *ctx, const void *buf, size_t n),
                  int (*write_span)(void *ctx, const gz_span *span), void *ctx);

/* One line explaining the last error. */
const char *tp_engine_error(const tp_engine *e);

/* Input device buffers must be readable this many bytes past the data (the
 * odd-shape kernel reads whole 16-byte vectors); zero them once. */
#define TP_READ_SLACK 16

/* The GPU kernel for one matrix shape and its launch geometry. */
typedef struct {
    CUfunction f;
    char name[32];
    unsigned threads, tile_rows, tile_cols;
    uint64_t rows, cols;
} tp_kernel;

/* Loads the kernel that suits rows x cols matrices of elem bytes on g. */
int tp_kernel_open(tp_kernel *k, gpu *g, size_t elem, uint64_t rows, uint64_t cols);

/* Queues the transposes of nmat consecutive matrices in -> out on stream s;
 * 0 or a negative gpu_error (text in g). */
int tp_kernel_launch(const tp_kernel *k, gpu *g, CUdeviceptr in, CUdeviceptr out, uint64_t nmat,
                     CUstream s);

/* Transposes rows [r0, r1) and columns [c0, c1) of the rows x cols matrix
 * in into the cols x rows matrix out, on the calling thread. */
void tp_cpu_block(const void *in, void *out, uint64_t rows, uint64_t cols, size_t elem, uint64_t r0,
                  uint64_t r1, uint64_t c0, uint64_t c1);

#endif
