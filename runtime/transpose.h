/* transpose.h - the host side of `transpose`: out[b][c][r] = in[b][r][c] for
 * a batch of rows x cols matrices of elements of 1, 2, 4, 8 or 16 bytes, on
 * the GPU (ptx/transpose.cu) or the CPU. Elements are moved as bytes, so the
 * two backends give the same output by construction.
 *
 * Two modes, chosen by tp_chunk_for from the matrix size:
 * - batch: a matrix fits in a chunk; every chunk holds whole matrices and is
 *   transposed on its own slot (copy in, kernel, copy out), in flight
 *   together like the other commands' chunks;
 * - staged: a matrix is larger than a chunk; it is gathered whole (on the
 *   device: 2x its size of device memory; on the CPU: its size of host
 *   memory, transposed as it arrives), then streamed out in output order.
 * Errors are negative gpu_error codes, kept with their line in
 * engine_status() or tp_stage_status(). */
#ifndef GPUBATCH_RUNTIME_TRANSPOSE_H
#define GPUBATCH_RUNTIME_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"

#include "engine.h"
#include "gpu.h"

struct backend;

/* A transpose as the engines run it: rows x cols matrices (rows, cols >= 1)
 * of elem bytes. */
typedef struct {
    size_t elem;
    uint64_t rows, cols;
} tp_job;

/* Bytes of one matrix (the caller checks that it fits). */
size_t tp_matrix_bytes(const tp_job *j);

/* The chunk size the input should be cut into for chunks of about
 * chunk_bytes, a whole number of elements always: whole matrices (batch
 * mode), or, where a matrix is larger (*staged set), pieces of it. */
size_t tp_chunk_for(const tp_job *j, size_t chunk_bytes, int *staged);

/* Batch mode's engine operation (runtime/engine.h), its context a tp_job:
 * every chunk holds whole matrices and is transposed on its own slot. */
extern const engine_ops tp_engine_ops;

/* Staged mode: one matrix gathered whole, then streamed out in order. */
typedef struct tp_stage tp_stage;

/* Prepares the staged mode on be's first device (2x the matrix of device
 * memory) or the CPU (the matrix in host memory, transposed as it arrives)
 * for chunks of chunk bytes (tp_chunk_for). 0, or a negative gpu_error with
 * the reason in be->st.text. */
int tp_stage_open(tp_stage **out, struct backend *be, const tp_job *j, size_t chunk);
void tp_stage_close(tp_stage *t);

/* Makes the chunk in host (compressed members when gz is not NULL,
 * inflated on the device now) the source of tp_stage_put; host must stay
 * untouched until the next chunk. */
int tp_stage_chunk(tp_stage *t, const void *host, const pl_gz_chunk *gz);

/* Makes the chunk at data in the device memory of the stage's device (a
 * gzip member's data inflated there) the source of tp_stage_put; CUDA only,
 * data must stay until the next chunk. 0, or GPU_ERR_INTERNAL. */
int tp_stage_chunk_device(tp_stage *t, CUdeviceptr data);

/* Adds bytes [from, from + bytes) of the current chunk's data to the matrix
 * at byte offset. */
int tp_stage_put(tp_stage *t, size_t from, uint64_t offset, size_t bytes);

/* Compresses the pieces on the device from now on, for blocked gzip at
 * level whose data start at output stream position offset: on CUDA, at the
 * levels the device does (block_deflate_level) and where it writes into the
 * pinned host buffers (block_deflate_host_mapped); tp_stage_emit then passes spans.
 * 1 when on, 0 when it does not apply, or a negative gpu_error. */
int tp_stage_compress(tp_stage *t, int level, uint64_t offset);

/* Once the matrix is complete, passes its transpose in order, in pieces, to
 * write(), as plain bytes or compressed on the device (tp_stage_compress);
 * a nonzero return of write stops and is returned. */
int tp_stage_emit(tp_stage *t, gz_writer_piece_write write, void *ctx);

/* The last failure: the code a call returned and its line. */
const io_status *tp_stage_status(const tp_stage *t);

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
