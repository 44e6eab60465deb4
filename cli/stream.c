/* stream.c - what a chunked command plans: chunk size, buffers, slots,
 * where gzip is inflated, the pipeline's opening and the scheduler's hooks. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "io/clock.h"

/* Where the environment says gzip is inflated: 1 on the host, 0 on the
 * device (GPUBATCH_HOST_INFLATE=1 or 0), -1 where it says nothing. */
static int stream_host_inflate(void)
{
    const char *host = getenv("GPUBATCH_HOST_INFLATE");
    return host && (!strcmp(host, "1") || !strcmp(host, "0")) ? host[0] == '1' : -1;
}

/* Device inflate for gzip files when a GPU may take chunks (see stream.h). */
int stream_device_inflate(backend *be, const io_reader *r, size_t swap, size_t chunk_bytes)
{
    return !swap && backend_may_use_gpu(be) && io_reader_compressed(r) &&
           io_reader_file_size(r) >= 0 && chunk_bytes < PL_GZ_MAX_CHUNK && stream_host_inflate() != 1;
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

/* Whether the CPU reads input r in place (see stream.h). */
int stream_view(backend *be, const io_reader *r, size_t swap, size_t prefix_len)
{
    const char *env = getenv("GPUBATCH_MAP");
    if (swap || (env && !strcmp(env, "0")) || backend_may_use_gpu(be))
        return 0;
    int64_t at = io_reader_view_offset(r, prefix_len);
    return at >= 0 && at % STREAM_VIEW_ALIGN == 0;
}

/* pl_open_view, pl_open or pl_open_gz (see stream.h). */
int stream_open(pl_ring **out, backend *be, io_reader *r, void *const *bufs, int nbufs,
                int nslots, size_t chunk_bytes, const void *prefix, size_t prefix_len,
                uint64_t limit, size_t swap)
{
    if (stream_view(be, r, swap, prefix_len))
        return pl_open_view(out, r, nslots, chunk_bytes, prefix_len, limit);
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
sched_hooks stream_hooks(gz_piece_write write, void *ctx)
{
    return (sched_hooks){.ctx = ctx, .ready = stream_ready, .fallback = cli_report_fallback,
                         .info = stream_info, .warn = stream_warn,
                         .progress = progress_update, .write_out = write,
                         .started = io_seconds() - msg_elapsed()};
}

/* Writes results to an out_stream (see stream.h). */
int stream_write(void *ctx, const gz_span *span, const void *out, size_t bytes)
{
    return span ? out_write_span(ctx, span) : out_write(ctx, out, bytes);
}

/* Whether input r may be inflated on a device (see stream.h). */
int stream_device_member(backend *be, const io_reader *r, const frame_info *fi)
{
    int fd;
    uint64_t data_off, file_size;
    return stream_host_inflate() != 1 && !fi->swap && backend_may_use_gpu(be) &&
           io_reader_stream_member(r, &fd, &data_off, &file_size);
}

/* Whether a device pays for the rest of a member (see stream.h). */
int stream_member_rest_pays(const backend *be, uint64_t left)
{
    if (stream_host_inflate() == 0)
        return 1;
    double host = (be->threads > 0 ? be->threads : 1) * STREAM_HOST_GBPS * 1e9;
    return STREAM_DEVICE_SETUP_SECONDS + left / (STREAM_DEVICE_GBPS * 1e9) < left / host;
}

/* Whether the host runs a member's start while the devices start (see
 * stream.h). */
int stream_member_host_start(backend *be)
{
    return stream_host_inflate() != 0 && !backend_device(be, 0);
}
