/* stream.h - the loop every chunked command runs: chunks from the pipeline
 * submitted to an engine slot by slot, their results written to the output
 * in input order, with up to nslots - 1 chunks in flight. */
#ifndef GPUBATCH_CLI_STREAM_H
#define GPUBATCH_CLI_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/pipeline.h"
#include "output.h"

/* An engine seen by the loop: submit starts a chunk on a slot, collect
 * waits for a slot's result bytes, error explains the last failure. */
typedef struct {
    int (*submit)(void *engine, int slot, const void *data, size_t bytes);
    int (*collect)(void *engine, int slot, const void **out, size_t *bytes);
    const char *(*error)(const void *engine);
} stream_engine;

/* Runs the loop until the end of the input or the first error (printed,
 * prefixed with name). *bytes_in gets the input bytes seen. Returns 0 or 1. */
int stream_chunks(pl_ring *pl, int nslots, const stream_engine *ops, void *engine, out_stream *o,
                  uint64_t *bytes_in, const char *name);

#endif
