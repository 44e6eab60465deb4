/* stream.c - the ordered submit/collect/write loop of chunked commands. */
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

/* Whether the device is expected to end a member of `bytes` compressed
 * bytes sooner than the host's threads: the host starts at once, at
 * STREAM_HOST_GBPS a thread; the device after its start, at
 * STREAM_DEVICE_GBPS (decoded bytes, about as many as compressed ones for
 * the arrays measured: BENCHMARKS.md). */
static int stream_device_pays(const backend *be, uint64_t bytes)
{
    double host = (be->threads > 0 ? be->threads : 1) * STREAM_HOST_GBPS * 1e9;
    double device = STREAM_DEVICE_GBPS * 1e9;
    return CLI_GPU_START_SECONDS + bytes / device < bytes / host;
}

/* stream_device_member, with where the member lies (io_reader_stream_member). */
static int stream_member_on_device(backend *be, const io_reader *r, const frame_info *fi,
                                   int *fd, uint64_t *data_off, uint64_t *file_size)
{
    int env = stream_host_inflate();
    if (env == 1 || fi->swap || !backend_may_use_gpu(be) ||
        !io_reader_stream_member(r, fd, data_off, file_size))
        return 0;
    return env == 0 || stream_device_pays(be, *file_size - *data_off);
}

/* Whether input r may be inflated on a device (see stream.h). */
int stream_device_member(backend *be, const io_reader *r, const frame_info *fi)
{
    int fd;
    uint64_t data_off, file_size;
    return stream_member_on_device(be, r, fi, &fd, &data_off, &file_size);
}

/* Runs the start of a gzip member on a device (see stream.h). */
int stream_on_device(sched *h, backend *be, stream_device *dev, io_reader *r,
                     const frame_info *fi, uint64_t limit, size_t grain, int *ran,
                     uint64_t *done, void *tail, size_t *tail_len, const char *name)
{
    int fd;
    uint64_t data_off, file_size;
    gpu *g;
    *ran = 0;
    *done = 0;
    *tail_len = 0;
    if (!stream_member_on_device(be, r, fi, &fd, &data_off, &file_size) ||
        !(g = sched_stream_gpu(h)))
        return 0;
    if (!dev->z && gzstream_open(&dev->z, g, STREAM_DEVICE_KEEP, dev->staging,
                                 dev->staging ? gzstream_staging_bytes() : 0) < 0) {
        msg_info("%s: the GPU cannot inflate the gzip member (%s): the host does", name,
                 gpu_error_text(g));
        return 0;
    }
    gzstream *z = dev->z;
    gzstream_begin(z, fd, data_off, file_size);
    *ran = 1;
    sched_stream in = {.z = z, .skip = fi->data_offset, .limit = limit, .grain = grain,
                       .tail = tail};
    int rc = sched_run_stream(h, &in);
    if (rc < 0)
        msg_error("%s: %s", name, sched_error(h));
    unsigned long long batches, rounds;
    gzstream_counts(z, &batches, &rounds);
    msg_info("%s: %llu bytes of data inflated on the GPU in %llu batches, %llu rounds", name,
             (unsigned long long)in.data, batches, rounds);
    const gzstream_point *pt = gzstream_where(z);
    if (rc == 0) { /* the host reads on where the device stopped */
        int ic = io_reader_continue_member(
            r, pt->bit, pt->final, pt->window + IFS_WINDOW - pt->wlen, pt->wlen, pt->crc,
            pt->len, pt->len,
            "the GPU stopped at invalid, cut or unusual data: read on in order from there");
        if (ic == 0 && in.skip && io_reader_skip(r, in.skip) != (int64_t)in.skip)
            ic = -1;
        if (ic < 0) {
            msg_error("%s: %s", name, io_reader_error(r));
            rc = 1;
        }
    }
    *done = in.data;
    *tail_len = in.tail_len;
    return rc != 0;
}

/* Makes the staging buffer while the devices start (see stream.h). */
void stream_device_prepare(stream_device *dev, backend *be)
{
    if (!dev->staging)
        dev->staging = backend_host_alloc(be, gzstream_staging_bytes());
}

/* Frees what stream_on_device made (see stream.h). */
void stream_device_release(stream_device *dev, backend *be)
{
    if (!be->leaving) /* else the driver frees it at exit */
        gzstream_close(dev->z);
    backend_host_free(be, dev->staging);
    dev->z = NULL;
    dev->staging = NULL;
}

/* -v: how the input's gzip members were inflated. */
void stream_report_input(const io_reader *r, const char *name)
{
    char line[512];
    io_reader_describe(r, line, sizeof line);
    if (line[0])
        msg_info("%s: %s", name, line);
}
