/* job.c - a streamed command's run: buffers, rings, scheduler, checks, and
 * one cleanup path (see job.h). */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "stream.h"

/* Opens the backend and sizes the buffers (see job.h). */
int job_open(job *j, const cli_common *c, double cpu_seconds)
{
    j->opened = 1;
    if (cli_open_backend(c, &j->be, cpu_seconds))
        return 1;
    j->nbufs = cli_slots(c, &j->be);
    j->nslots = stream_slots(&j->be, j->nbufs);
    return 0;
}

/* Opens the input's frame (see job.h). */
int job_frame(io_reader *r, const cli_common *c, frame_info *fi, const char *name)
{
    io_status st;
    if (frame_open(r, c->dtype, c->dtype_big_endian, c->shape, c->ndim, fi, &st) == 0)
        return 0;
    return msg_status(name, &st);
}

/* Frees the buffers and closes the scheduler made for them. */
static void job_release(job *j)
{
    for (int i = 0; j->bufs && i < j->nbufs; i++)
        backend_host_free(&j->be, j->bufs[i]);
    free(j->bufs);
    j->bufs = NULL;
    sched_close(j->h);
    j->h = NULL;
    j->chunk = 0;
}

/* Makes sure the scheduler takes chunks of `want` bytes, closing one made
 * for smaller ones, and, where the input is read through buffers (bufs; not
 * where the CPU reads it in place), that the buffers hold them: sized to
 * the input (never above --chunk), so a small file does not pay for pinning
 * a large ring. 0, or 1 after an error. */
static int job_reserve(job *j, size_t want, int bufs)
{
    if (j->chunk >= want && (j->bufs || !bufs))
        return 0;
    job_release(j);
    j->chunk = want;
    if (!bufs)
        return 0;
    if (!(j->bufs = calloc((size_t)j->nbufs, sizeof *j->bufs)))
        return msg_error("out of memory"), 1;
    for (int i = 0; i < j->nbufs; i++)
        if (!(j->bufs[i] = backend_host_alloc(&j->be, stream_buffer_bytes(&j->be, want)))) {
            job_release(j);
            return msg_status(NULL, backend_status(&j->be));
        }
    return 0;
}

/* Opens the input's rings over the buffers: one per plane, or one over the
 * input, after the tail of what a device ran first (ran: its *on_device
 * data bytes) or decoded as stream_open does. 0, or 1 after an error. */
static int job_rings(job *j, const job_input *in, pl_ring **pl, int ran, const void *tail,
                     size_t tail_len, uint64_t on_device)
{
    size_t swap = in->fi->swap;
    if (in->planes) {
        size_t chunk = j->chunk / 3;
        for (int k = 0; k < 3; k++) {
            void **bufs = j->plane_bufs[k]; /* kept by the ring */
            for (int i = 0; i < j->nbufs; i++)
                bufs[i] = (char *)j->bufs[i] + k * chunk;
            if (pl_open(&pl[k], in->planes[k], bufs, j->nbufs, j->nslots, chunk, NULL, 0,
                        in->limit, swap) < 0)
                goto fail;
        }
        return 0;
    }
    int rc = ran ? pl_open_at(&pl[0], in->r, j->bufs, j->nbufs, j->nslots, j->chunk, tail,
                              tail_len, on_device, in->limit, swap)
             : in->host ? pl_open(&pl[0], in->r, j->bufs, j->nbufs, j->nslots, j->chunk,
                                  in->prefix, in->prefix_len, in->limit, swap)
                        : stream_open(&pl[0], &j->be, in->r, j->bufs, j->nbufs, j->nslots,
                                      j->chunk, in->prefix, in->prefix_len, in->limit, swap);
    if (rc == 0)
        return 0;
fail:
    msg_error("%s: cannot start the reader thread", in->name);
    return 1;
}

/* Opens the scheduler, unless one over these buffers is open (it then
 * takes the input's CPU cost), and turns on the devices' deflate. 0, or 1
 * after an error. */
static int job_sched(job *j, const job_input *in)
{
    if (j->h) {
        sched_cpu_cost(j->h, in->spec.cpu_ns);
    } else {
        sched_run_spec spec = in->spec;
        spec.nslots = j->nslots;
        spec.member = in->member;
        if (!spec.capacity)
            spec.capacity = j->chunk;
        io_status st;
        if (sched_open(&j->h, &j->be, &spec, &in->hooks, &st) < 0)
            return st.text[0] ? msg_status(NULL, &st) : 1;
    }
    if (in->level > 0 && sched_compress(j->h, in->level, gz_writer_offset(in->gz)) < 0)
        return msg_status(in->name, sched_status(j->h));
    return 0;
}

/* Runs a gzip member's data on the scheduler's device (sched_run_member):
 * from its start, or after the `first` data bytes the host ran before the
 * reader paused (head: the head_len bytes it decoded after them), then
 * leaves the input reading on after it. *ran, *done and the tail as
 * job_rings takes them: where the device could not take a paused member
 * over, the host reads on from the pause, head as the tail. 0, or 1 after
 * an error. */
static int job_member(job *j, const job_input *in, int *ran, uint64_t *done, void *tail,
                      size_t *tail_len, uint64_t first, const void *head, size_t head_len)
{
    int paused = head != NULL;
    sched_member m = {.skip = paused ? 0 : in->fi->data_offset, .limit = in->limit,
                      .grain = in->grain, .first = first, .head = head, .head_len = head_len,
                      .tail = tail};
    double at = msg_elapsed();
    int rc = sched_run_member(j->h, in->r, &m, in->name);
    *ran = m.ran || paused;
    *done = m.data;
    *tail_len = m.tail_len;
    if (!m.ran && paused) { /* the host reads on from the pause */
        uint64_t bit, len;
        const uint8_t *window;
        size_t wlen;
        uint32_t crc;
        io_reader_pause_point(in->r, &bit, &window, &wlen, &crc, &len);
        memcpy(tail, head, head_len);
        *tail_len = head_len;
        rc = io_reader_continue_member(in->r, bit, 0, window, wlen, crc, len, len,
                                       "the GPU could not go on where the host paused: read on "
                                       "in order from there");
        return rc < 0 ? msg_status(in->name, io_reader_status(in->r)) : 0;
    }
    if (!m.ran)
        return 0;
    if (rc < 0)
        msg_status(in->name, sched_status(j->h));
    if (paused)
        msg_info("%s: %llu bytes of data inflated on the host's threads while the GPU started; "
                 "the GPU went on from there %.3f s after the process started",
                 in->name, (unsigned long long)(first + head_len), at);
    msg_info("%s: %llu bytes of data inflated on the GPU in %llu batches, %llu rounds; %llu "
             "batches read while the one before was inflated (waited %.3f s for them)",
             in->name, (unsigned long long)m.data, m.st.batches, m.st.rounds, m.st.read_ahead,
             m.st.ahead_wait);
    if (rc == 0 && sched_member_continue(j->h, in->r, &m) < 0) /* the host reads on */
        rc = msg_status(in->name, sched_status(j->h));
    return rc != 0;
}

/* The member being run on the host while the devices start. */
typedef struct {
    io_reader *r;
    backend *be;
} job_paused;

/* A device can take the member over (sched_input.member_gpu_ready): asks
 * its reader to pause, where the device pays for the compressed bytes left. */
static void job_pause(void *ctx, uint64_t raw_seen)
{
    const job_paused *m = ctx;
    int64_t size = io_reader_file_size(m->r);
    if (size > 0 && (uint64_t)size > raw_seen &&
        stream_member_rest_pays(m->be, (uint64_t)size - raw_seen))
        io_reader_pause(m->r);
}

/* Runs the start of a gzip member on the host while the devices start:
 * its ring pauses once a device could go on (job_pause). *first gets the
 * data bytes run, and *head (NULL where the ring read to the end instead)
 * and *head_len the bytes decoded after them, for the device. 0, or 1
 * after an error. */
static int job_member_start(job *j, const job_input *in, pl_ring **pl, uint64_t *first,
                            const void **head, size_t *head_len)
{
    *head = NULL;
    *head_len = 0;
    if (pl_open_pausable(&pl[0], in->r, j->bufs, j->nbufs, j->nslots, j->chunk, in->prefix,
                         in->prefix_len, in->limit, in->fi->swap, in->grain) < 0)
        return msg_error("%s: cannot start the reader thread", in->name), 1;
    if (job_sched(j, in))
        return 1;
    job_paused pause = {in->r, &j->be};
    sched_input input = {.rings = pl, .nrings = 1, .member_gpu_ready = job_pause,
                         .member_gpu_ctx = &pause};
    int rc = sched_run(j->h, &input, first);
    if (rc < 0)
        msg_status(in->name, sched_status(j->h));
    if (rc == 0 && !pl_paused(pl[0], head, head_len))
        *head = NULL;
    return rc != 0;
}

/* Takes the next chunk of every plane's ring (the sched_input ctx; they
 * advance in step, so the chunks share a slot index and a length).
 * Returns 1 with ring 0's chunk in *c, 0 at the end, or -1 with the
 * error's message in msg, this round's chunks already given back
 * (sched_input.next). */
static int job_next_planes(void *ctx, pl_chunk *c, io_status *st)
{
    const sched_input *in = ctx;
    pl_ring *const *pl = in->rings;
    int rc = 0, taken = 0;
    for (int k = 0; k < in->nrings; k++) {
        pl_chunk ck;
        int rk = pl_next(pl[k], &ck);
        if (rk < 0) {
            rc = io_fail(st, rk, "plane %c: %s", "abc"[k], pl_status(pl[k])->text);
            break;
        }
        if (k == 0) {
            rc = rk;
            *c = ck;
        } else if (rk != rc || (rk > 0 && (ck.slot != c->slot || ck.bytes != c->bytes))) {
            rc = io_fail(st, IO_ERR_FORMAT, "the coefficient planes differ in length");
            if (rk > 0)
                pl_release(pl[k], ck.slot);
            break;
        }
        taken += rk > 0;
    }
    for (int k = 0; rc < 0 && k < taken; k++)
        pl_release(pl[k], c->slot);
    return rc;
}

/* Runs the rings through the scheduler (a staged matrix opened first); 0,
 * or 1 after an error. */
static int job_stream(job *j, const job_input *in, pl_ring **pl, uint64_t *bytes)
{
    sched_input input = {.rings = pl, .nrings = in->planes ? 3 : 1};
    if (in->planes) {
        input.next = job_next_planes;
        input.ctx = &input;
    }
    int rc = 1;
    if (in->spec.whole && sched_stage_open(j->h, j->chunk) < 0)
        msg_status(NULL, sched_status(j->h));
    else if ((rc = sched_run(j->h, &input, bytes)) < 0)
        msg_status(in->name, sched_status(j->h));
    return rc != 0;
}

/* Runs the input through its rings, opened before the scheduler so that
 * they fill the buffers while cuda's devices start; 0, or 1 after an
 * error. */
static int job_run_rings(job *j, const job_input *in, pl_ring **pl, uint64_t *bytes)
{
    if (job_rings(j, in, pl, 0, NULL, 0, 0) || job_sched(j, in))
        return 1;
    return job_stream(j, in, pl, bytes);
}

/* Runs a gzip member whose data run on a device (see job.h): its start on
 * the host while the devices start (where they are not ready yet and a
 * pause can fall between whole grains), the device from there, then the
 * host what the device leaves; with the devices open already, a member too
 * small to pay for the device's set-up is read on the host. *bytes gets the data bytes run. 0, or 1
 * after an error. */
static int job_run_member(job *j, const job_input *in, pl_ring **pl, uint64_t *bytes)
{
    unsigned char tail[SCHED_MEMBER_KEEP];
    size_t tail_len = 0, head_len = 0;
    uint64_t on_device = 0, first = 0;
    const void *head = NULL;
    int ran = 0;
    *bytes = 0;
    int64_t size = io_reader_file_size(in->r);
    if (!in->planes && j->chunk % in->grain == 0 && stream_member_host_start(&j->be)) {
        if (job_member_start(j, in, pl, &first, &head, &head_len))
            return 1;
        if (!head) { /* the ring read the member to its end */
            *bytes = first;
            return 0;
        }
    } else if (size >= 0 && !stream_member_rest_pays(&j->be, (uint64_t)size)) {
        return job_run_rings(j, in, pl, bytes); /* the devices are open: too small for them */
    } else if (job_sched(j, in)) {
        return 1;
    }
    if (job_member(j, in, &ran, &on_device, tail, &tail_len, first, head, head_len))
        return 1;
    pl_close(pl[0]); /* the paused ring, whose bytes head were */
    pl[0] = NULL;
    if (job_rings(j, in, pl, ran, tail, tail_len, first + on_device))
        return 1;
    int failed = job_stream(j, in, pl, bytes);
    *bytes += first + on_device;
    return failed;
}

/* Runs one input (see job.h). */
int job_run(job *j, const job_input *in, uint64_t *bytes)
{
    pl_ring *pl[3] = {NULL, NULL, NULL};
    int failed = 1;
    *bytes = 0;
    /* stream_open's choice: the CPU reads a plain file in place */
    int view = !in->planes && !in->member && !in->host &&
               stream_view(&j->be, in->r, in->fi->swap, in->prefix_len);
    if (job_reserve(j, in->chunk * (in->planes ? 3 : 1), !view))
        return 1;
    progress_begin(in->name, io_reader_file_size(in->r));
    failed = in->member ? job_run_member(j, in, pl, bytes) : job_run_rings(j, in, pl, bytes);
    progress_end();
    if (j->h)
        sched_report(j->h, in->name);
    char line[512]; /* -v: how the input's gzip members were inflated */
    io_reader_describe(in->r, line, sizeof line);
    if (line[0])
        msg_info("%s: %s", in->name, line);
    if (!failed && in->check)
        failed = in->check(in->ctx, *bytes);
    if (!failed && io_reader_trailing_garbage(in->planes ? in->planes[2] : in->r))
        msg_warn("%s: trailing garbage after the compressed data ignored", in->name);
    for (int k = 0; k < 3; k++)
        pl_close(pl[k]);
    return failed;
}

/* The one cleanup path (see job.h). */
void job_close(job *j)
{
    if (!j->opened)
        return;
    backend_leave(&j->be); /* nothing runs on the devices after this */
    job_release(j);
    cli_close_backend(&j->be);
}
