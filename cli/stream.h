/* stream.h - the loop every chunked command runs: chunks from the pipeline
 * submitted slot by slot to the CPU or the GPU (hybrid.h), their results
 * written to the output in input order, with up to nslots - 1 chunks in
 * flight (pl_full). */
#ifndef GPUBATCH_CLI_STREAM_H
#define GPUBATCH_CLI_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/pipeline.h"
#include "hybrid.h"
#include "options.h"
#include "output.h"
#include "runtime/backend.h"

/* Whether chunks of input r go to the device compressed (pl_open_gz): where
 * a GPU may take chunks (backend_may_use_gpu: cuda, or auto, whose CPU side
 * then decodes the chunks it takes), for gzip from a regular file, unless
 * the environment sets GPUBATCH_HOST_INFLATE=1 or the data is big-endian
 * (swap, frame_info.swap, nonzero: the host swaps it as it reads). */
int stream_device_inflate(backend *be, const io_reader *r, size_t swap, size_t chunk_bytes);

/* The chunk size for input r (swap as for stream_device_inflate): --chunk,
 * or without it the larger default of device inflate where
 * stream_device_inflate() applies. */
size_t stream_chunk(const cli_common *c, backend *be, const io_reader *r, size_t swap);

/* Bytes of each pipeline buffer for chunks of chunk_bytes on backend be
 * (room for compressed chunks where a GPU may take them). */
size_t stream_buffer_bytes(backend *be, size_t chunk_bytes);

/* Chunks in flight for nbufs host buffers, where the engine gives a GPU
 * chunk's buffer back once it is copied (hy_ops.copied): twice as many
 * where a GPU may take chunks, so that the device works on more chunks at
 * once than the host holds (blocked gzip inflated there needs many members
 * at once); nbufs elsewhere. */
int stream_slots(const backend *be, int nbufs);

/* -v's record of when a run's chunks were done (written to the output or
 * folded into the results), in seconds after the process started, and of
 * the seconds the loop's thread spent waiting for input, waiting for the
 * engines' results and writing them. Zero it before use. */
typedef struct {
    unsigned long long chunks;
    double first, last;
    double input, results, writing;
} stream_clock;

/* Notes a chunk done now. */
void stream_clock_mark(stream_clock *t);

/* Adds the seconds since `since` (a msg_elapsed() time) to *part; returns
 * the time now. */
double stream_clock_add(double *part, double since);

/* -v: "NAME: first chunk done ..., last ... after the process started" and
 * the loop's waits and writing. */
void stream_clock_report(const stream_clock *t, const char *name);

/* Opens the pipeline over r (nbufs buffers, nslots slots) as pl_open does
 * (swapping big-endian data, swap as for pl_open), or as pl_open_gz does
 * when stream_device_inflate(be, r, swap, chunk_bytes) says so (and then
 * asks auto's GPU start for the inflate module). */
int stream_open(pl_ring **out, backend *be, io_reader *r, void *const *bufs, int nbufs,
                int nslots, size_t chunk_bytes, const void *prefix, size_t prefix_len,
                uint64_t limit, size_t swap);

/* Runs the loop until the end of the input or the first error (printed,
 * prefixed with name): each chunk to the side h gives it (its buffer given
 * back as soon as that side has copied it, hy_release_buffer), the results
 * written to o (none when o is NULL: a reduction folds them as it collects)
 * in input order. *bytes_in gets the input bytes seen. Returns 0 or 1. */
int stream_chunks(pl_ring *pl, hy *h, out_stream *o, uint64_t *bytes_in, const char *name);

/* -v: how the input's gzip members were inflated (io_reader_describe). */
void stream_report_input(const io_reader *r, const char *name);

#endif
