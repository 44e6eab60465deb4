/* stream.c - the ordered submit/collect/write loop of chunked commands. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "msg.h"

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

/* Notes a chunk done now (see stream.h). */
void stream_clock_mark(stream_clock *t)
{
    t->last = msg_elapsed();
    if (t->chunks++ == 0)
        t->first = t->last;
}

/* Adds the time since `since` to a part (see stream.h). */
double stream_clock_add(double *part, double since)
{
    double now = msg_elapsed();
    *part += now - since;
    return now;
}

/* -v: when the first and the last chunk were done, and where the loop's
 * thread waited (see stream.h). */
void stream_clock_report(const stream_clock *t, const char *name)
{
    if (!t->chunks)
        return;
    msg_info("%s: first chunk done %.3f s, last %.3f s after the process started", name,
             t->first, t->last);
    msg_info("%s: the main thread waited %.3f s for input and %.3f s for results, and wrote for "
             "%.3f s",
             name, t->input, t->results, t->writing);
}

/* Collects the oldest chunk and writes its result (none after a failure). */
static void stream_retire(pl_ring *pl, hy *h, out_stream *o, const char *name, int *failed,
                          stream_clock *done)
{
    int slot = pl_oldest(pl);
    const void *out;
    size_t bytes;
    double t = msg_elapsed();
    int rc = hy_collect(h, slot, &out, &bytes);
    t = stream_clock_add(&done->results, t);
    if (rc < 0) {
        if (!*failed)
            msg_error("%s: %s", name, hy_error(h));
        *failed = 1;
    } else if (!*failed && o && hy_write(h, slot, out, bytes, o)) {
        *failed = 1;
    }
    stream_clock_add(&done->writing, t);
    pl_release(pl, slot);
    stream_clock_mark(done);
}

/* Submits every chunk, and writes the oldest result once the ring is busy
 * or the input has ended; after an error, only lets every slot go idle.
 * -v: when the first and the last chunk were done, and the loop's waits. */
int stream_chunks(pl_ring *pl, hy *h, out_stream *o, uint64_t *bytes_in, const char *name)
{
    int failed = 0, rc;
    pl_chunk c;
    stream_clock done = {0};
    *bytes_in = 0;
    do {
        double asked = msg_elapsed();
        rc = pl_next(pl, &c);
        stream_clock_add(&done.input, asked);
        if (rc > 0) {
            progress_update(c.raw_end);
            *bytes_in += c.bytes;
            /* the CPU's results go out while the devices' start ends (c is outstanding too) */
            while (pl_outstanding(pl) > 1 && hy_cpu_waits(h, c.bytes))
                stream_retire(pl, h, o, name, &failed, &done);
            if (!failed && (hy_submit(h, &c) < 0 || hy_release_buffer(h, pl, c.slot) < 0)) {
                msg_error("%s: %s", name, hy_error(h));
                failed = 1;
            }
        }
        /* chunks before a read error are collected first: their errors come first */
        while (pl_outstanding(pl) > 0 && (pl_full(pl) || rc <= 0 || failed))
            stream_retire(pl, h, o, name, &failed, &done);
        if (rc < 0 && !failed) {
            msg_error("%s: %s", name, pl_error(pl));
            failed = 1;
        }
    } while (rc > 0 && !failed);
    stream_clock_report(&done, name);
    return failed;
}

/* -v: how the input's gzip members were inflated. */
void stream_report_input(const io_reader *r, const char *name)
{
    char line[512];
    io_reader_describe(r, line, sizeof line);
    if (line[0])
        msg_info("%s: %s", name, line);
}
