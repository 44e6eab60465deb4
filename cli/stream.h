/* stream.h - the loop every chunked command runs: chunks from the pipeline
 * submitted to an engine slot by slot, their results written to the output
 * in input order, with up to nslots - 1 chunks in flight. */
#ifndef GPUBATCH_CLI_STREAM_H
#define GPUBATCH_CLI_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/pipeline.h"
#include "options.h"
#include "output.h"
#include "runtime/backend.h"

/* Whether chunks of input r go to the device compressed (pl_open_gz): on
 * the CUDA backend, for gzip from a regular file, unless the environment
 * sets GPUBATCH_HOST_INFLATE=1. */
int stream_device_inflate(const backend *be, const io_reader *r, size_t chunk_bytes);

/* The chunk size for input r: --chunk, or without it the larger default of
 * device inflate where stream_device_inflate() applies. */
size_t stream_chunk(const cli_common *c, const backend *be, const io_reader *r);

/* Bytes of each pipeline buffer for chunks of chunk_bytes on backend be
 * (room for compressed chunks on the CUDA backend). */
size_t stream_buffer_bytes(const backend *be, size_t chunk_bytes);

/* Opens the pipeline over r as pl_open does, or as pl_open_gz does when
 * stream_device_inflate(be, r, chunk_bytes) says so. */
int stream_open(pl_ring **out, const backend *be, io_reader *r, void *const *bufs, int nslots,
                size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit);

/* An engine seen by the loop: submit starts a chunk on a slot, collect
 * waits for a slot's result bytes, error explains the last failure; write,
 * when set, writes a collected slot's result to the output in place of
 * out_write of collect's bytes (for results that came back compressed) and
 * returns 0 or 1 after printing an error. */
typedef struct {
    int (*submit)(void *engine, int slot, const void *data, const pl_gz_chunk *gz, size_t bytes);
    int (*collect)(void *engine, int slot, const void **out, size_t *bytes);
    const char *(*error)(const void *engine);
    int (*write)(void *engine, int slot, const void *out, size_t bytes, out_stream *o);
} stream_engine;

/* Runs the loop until the end of the input or the first error (printed,
 * prefixed with name). *bytes_in gets the input bytes seen. Returns 0 or 1. */
int stream_chunks(pl_ring *pl, int nslots, const stream_engine *ops, void *engine, out_stream *o,
                  uint64_t *bytes_in, const char *name);

#endif
