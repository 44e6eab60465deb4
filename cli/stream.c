/* stream.c - the ordered submit/collect/write loop of chunked commands. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "io/clock.h"

/* Device inflate for gzip files when a GPU may take chunks (see stream.h). */
int stream_device_inflate(backend *be, const io_reader *r, size_t swap, size_t chunk_bytes)
{
    const char *host = getenv("GPUBATCH_HOST_INFLATE");
    return !swap && backend_may_use_gpu(be) && io_reader_compressed(r) &&
           io_reader_file_size(r) >= 0 && chunk_bytes < PL_GZ_MAX_CHUNK &&
           !(host && !strcmp(host, "1"));
}

/* --chunk, or device inflate's default (see stream.h). */
size_t stream_chunk(const cli_common *c, backend *be, const io_reader *r, size_t swap)
{
    if (!c->chunk_given && stream_device_inflate(be, r, swap, CLI_DEVICE_INFLATE_CHUNK))
        return CLI_DEVICE_INFLATE_CHUNK;
    return c->chunk;
}

/* Buffer bytes for chunk_bytes (see stream.h). */
size_t stream_buffer_bytes(backend *be, size_t chunk_bytes)
{
    return backend_may_use_gpu(be) && chunk_bytes < PL_GZ_MAX_CHUNK
               ? pl_gz_buffer_bytes(chunk_bytes)
               : chunk_bytes;
}

/* Slots for nbufs buffers (see stream.h): asked before the first file is
 * open, it does not wait for backend_may_use_gpu()'s answer (more slots
 * than buffers cost the CPU nothing). */
int stream_slots(const backend *be, int nbufs)
{
    int n = 2 * nbufs;
    return (be->kind == BACKEND_CUDA || be->start) && n <= BACKEND_MAX_SLOTS ? n : nbufs;
}

/* pl_open or pl_open_gz (see stream.h). */
int stream_open(pl_ring **out, backend *be, io_reader *r, void *const *bufs, int nbufs,
                int nslots, size_t chunk_bytes, const void *prefix, size_t prefix_len,
                uint64_t limit, size_t swap)
{
    if (stream_device_inflate(be, r, swap, chunk_bytes)) {
        backend_want_module(be, "inflate");
        return pl_open_gz(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, limit);
    }
    return pl_open(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, limit, swap);
}

/* Passes a scheduler's line to -v. */
static void stream_info(const char *line)
{
    msg_info("%s", line);
}

/* Passes a scheduler's warning on. */
static void stream_warn(const char *line)
{
    msg_warn("%s", line);
}

/* Waits for cuda's devices (sched_hooks.ready). */
static int stream_ready(backend *be, int first)
{
    return first ? cli_backend_first(be) : cli_backend_ready(be);
}

/* The hooks of a command's scheduler (see stream.h). */
sched_hooks stream_hooks(int (*write)(void *ctx, engine *e, int slot, const void *out,
                                      size_t bytes),
                         void *ctx)
{
    return (sched_hooks){.ctx = ctx, .ready = stream_ready, .fallback = cli_report_fallback,
                         .info = stream_info, .warn = stream_warn,
                         .progress = progress_update, .write = write,
                         .started = io_seconds() - msg_elapsed()};
}

/* Writes a slot's results to an out_stream (see stream.h). */
int stream_write(void *ctx, engine *e, int slot, const void *out, size_t bytes)
{
    const gz_span *span;
    if (engine_span(e, slot, &span))
        return out_write_span(ctx, span);
    return out_write(ctx, out, bytes);
}

/* Runs the scheduler's loop and reports (see stream.h). */
int stream_run(sched *h, const sched_input *in, uint64_t *bytes_in, const char *name)
{
    int rc = sched_run(h, in, bytes_in);
    if (rc < 0)
        msg_error("%s: %s", name, sched_error(h));
    sched_report(h, name);
    return rc != 0;
}

/* -v: how the input's gzip members were inflated. */
void stream_report_input(const io_reader *r, const char *name)
{
    char line[512];
    io_reader_describe(r, line, sizeof line);
    if (line[0])
        msg_info("%s: %s", name, line);
}
