/* run.c - the run as one object: buffers, rings, the device-inflate
 * decision, the scheduler and the gzip member hand-over (see run.h). */
#include "run.h"
#include "backend_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "io/clock.h"
#include "io/pipeline.h"
#include "runtime/gzip/gzstream.h"
#include "sched.h"

struct run {
    backend *be;
    run_plan plan;
    int gpu_slots;    /* a GPU may take chunks as the run opened: twice the chunks in flight */
    sched *h;         /* the scheduler of the buffers' chunk, once open */
    void **bufs;      /* nbufs host buffers of the chunk (and its planes) */
    int nbufs;        /* host buffers: --streams per device as the run opened, until sized */
    int nslots;       /* chunks in flight: more than nbufs where the GPU copies them (0: the
                         first input has not sized them yet) */
    size_t chunk;     /* the buffers' chunk bytes, all planes together (0: none yet) */
    void *plane_bufs[3][BACKEND_MAX_SLOTS]; /* each plane's part of the buffers */
};

/* One input's run as run_input decided it: the caller's parts and the
 * choices made from them. */
typedef struct {
    const run_source *src;
    const run_op *op;
    const run_sink *sink;
    const run_msgs *m;
    int host;            /* chunks decoded on the host always (a copy) */
    int member;          /* a gzip member whose data run on a device first */
    sched_run_spec spec; /* the scheduler's run */
    sched_hooks hooks;
} run_job;

/* Passes a formatted -v line to the info hook. */
static void run_info(const run_job *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_info(const run_job *in, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    in->m->info(line);
}

/* Reports st through the error hook (name NULL: not an input's failure);
 * returns 1. */
static int run_error(const run_job *in, const char *name, const io_status *st)
{
    in->m->error(name, st);
    return 1;
}

/* Reports that the input's reader thread did not start; returns 1. */
static int run_no_reader(const run_job *in)
{
    io_status st;
    io_fail(&st, IO_ERR_NOMEM, "cannot start the reader thread");
    return run_error(in, in->src->name, &st);
}

/* Seconds since the process started, as -v reports them. */
static double run_elapsed(const run_job *in)
{
    return io_seconds() - in->m->started;
}

/* Where the environment says gzip is inflated: 1 on the host, 0 on the
 * device (GPUBATCH_HOST_INFLATE=1 or 0), -1 where it says nothing. */
static int run_host_inflate(void)
{
    const char *host = getenv("GPUBATCH_HOST_INFLATE");
    return host && (!strcmp(host, "1") || !strcmp(host, "0")) ? host[0] == '1' : -1;
}

/* Whether chunks of input r go to the device compressed (pl_open_gz):
 * where a GPU may take chunks (cuda, or auto, whose CPU side then decodes
 * the chunks it takes), for gzip from a regular file, unless
 * GPUBATCH_HOST_INFLATE=1 or the data is big-endian (swap nonzero). */
static int run_device_inflate(backend *be, const io_reader *r, size_t swap, size_t chunk_bytes)
{
    return !swap && backend_may_use_gpu(be) && io_reader_compressed(r) &&
           io_reader_file_size(r) >= 0 && chunk_bytes < PL_GZ_MAX_CHUNK && run_host_inflate() != 1;
}

/* --chunk, or device inflate's default (see run.h). */
size_t run_chunk(run *rn, const io_reader *r, size_t swap)
{
    if (!rn->plan.chunk_given && run_device_inflate(rn->be, r, swap, RUN_DEVICE_INFLATE_CHUNK))
        return RUN_DEVICE_INFLATE_CHUNK;
    return rn->plan.chunk;
}

/* Whether only the host's cores inflate input r: gzip where no GPU may take
 * chunks (see run.h). */
static int run_host_stream(backend *be, const io_reader *r)
{
    return io_reader_deflated(r) && !backend_may_use_gpu(be);
}

/* The host-only cap of run_stream_chunk for backend be (see run.h). */
static size_t run_host_chunk(const backend *be)
{
    int threads = backend_threads(be);
    return RUN_HOST_CHUNK * (size_t)(threads > 2 ? threads : 2);
}

static int run_view(backend *be, const io_reader *r, size_t swap, size_t prefix_len);

/* run_chunk, by default view_chunk where the CPU reads r in place and at
 * most run_host_chunk where no GPU may take chunks, and at most the
 * input's data (see run.h). */
size_t run_stream_chunk(run *rn, const io_reader *r, size_t swap, size_t prefix_len,
                        uint64_t data_bytes, size_t view_chunk)
{
    size_t chunk = run_chunk(rn, r, swap), cap = run_host_chunk(rn->be);
    if (!rn->plan.chunk_given && !backend_may_use_gpu(rn->be) && chunk > cap)
        chunk = cap;
    if (!rn->plan.chunk_given && view_chunk && run_view(rn->be, r, swap, prefix_len))
        chunk = view_chunk;
    int64_t file = io_reader_file_size(r);
    if (data_bytes == UINT64_MAX && file >= 0 && !io_reader_compressed(r))
        data_bytes = (uint64_t)file;
    else if (data_bytes == UINT64_MAX && file >= 0 && file < (int64_t)1 << 50)
        data_bytes = (uint64_t)file * (uint64_t)GZSTREAM_RATIO_MAX;
    if (data_bytes != UINT64_MAX && data_bytes < chunk)
        chunk = (size_t)((data_bytes + RUN_CHUNK_ALIGN - 1) / RUN_CHUNK_ALIGN * RUN_CHUNK_ALIGN);
    return chunk ? chunk : RUN_CHUNK_ALIGN;
}

/* Bytes of each host buffer for chunks of chunk_bytes (room for compressed
 * chunks where a GPU may take them). */
static size_t run_buffer_bytes(backend *be, size_t chunk_bytes)
{
    return backend_may_use_gpu(be) && chunk_bytes < PL_GZ_MAX_CHUNK
               ? pl_gz_buffer_bytes(chunk_bytes)
               : chunk_bytes;
}

/* Whether the CPU reads input r in place (pl_open_view) rather than
 * through the buffers: plain little-endian data of a regular file whose
 * data, prefix_len bytes before r's position, start RUN_VIEW_ALIGN-aligned
 * in the file, where no GPU may take chunks (a device copies from pinned
 * buffers), unless GPUBATCH_MAP=0. */
static int run_view(backend *be, const io_reader *r, size_t swap, size_t prefix_len)
{
    const char *env = getenv("GPUBATCH_MAP");
    if (swap || (env && !strcmp(env, "0")) || backend_may_use_gpu(be))
        return 0;
    int64_t at = io_reader_view_offset(r, prefix_len);
    return at >= 0 && at % RUN_VIEW_ALIGN == 0;
}

/* Whether input r has its data inflated on a device first: a plain gzip
 * member of a regular file or a pipe, where a GPU may take chunks, and
 * little-endian data (GPUBATCH_HOST_INFLATE=1: never). */
static int run_device_member(backend *be, const io_reader *r, const frame_info *fi)
{
    int fd;
    uint64_t data_off, file_size;
    spool *sp;
    return run_host_inflate() != 1 && !fi->swap && backend_may_use_gpu(be) &&
           (io_reader_stream_member(r, &fd, &data_off, &file_size) ||
            io_reader_stream_spool(r, &sp, &data_off));
}

/* The data bytes a member of `size` compressed bytes holds, as a gzip
 * file's trailer suggests (gzstream_ratio_hint; as many where it says less
 * or nothing, or for a zip member, which has no trailer). */
static uint64_t run_member_data_hint(const io_reader *r, uint64_t size)
{
    int fd;
    uint64_t data_off, file_size;
    double ratio = io_reader_compressed(r) && io_reader_stream_member(r, &fd, &data_off, &file_size)
                       ? gzstream_ratio_hint(fd, data_off, file_size)
                       : 0;
    return ratio > 1 ? (uint64_t)((double)size * ratio) : size;
}

/* Whether a device, once open, pays for the `left` bytes (of data where
 * known, else compressed) of a member that the host's threads are decoding
 * (cost_member_rest_pays); always with GPUBATCH_HOST_INFLATE=0. */
static int run_member_rest_pays(const backend *be, uint64_t left)
{
    return run_host_inflate() == 0 || cost_member_rest_pays(be->threads, left);
}

/* Whether the host decodes and runs the start of such a member while the
 * devices start, a device going on from where it paused: while device 0
 * cannot take work yet, unless GPUBATCH_HOST_INFLATE=0 (the device from
 * the member's start, as tests of its inflate want). */
static int run_member_host_start(backend *be)
{
    return run_host_inflate() != 0 && !backend_device(be, 0);
}

/* Opens a run (see run.h): sized before the first input as the backend
 * stands now. */
int run_open(run **out, backend *be, const run_plan *plan)
{
    run *rn = calloc(1, sizeof *rn);
    *out = rn;
    if (!rn)
        return IO_ERR_NOMEM;
    rn->be = be;
    rn->plan = *plan;
    rn->gpu_slots = be->kind == BACKEND_CUDA || be->start != NULL;
    rn->nbufs = backend_slots(be, plan->streams);
    return 0;
}

/* Loads a module before the first chunk (see run.h). */
void run_want_module(run *rn, const char *module)
{
    backend_want_module(rn->be, module);
}

/* The host buffers as sized for the first input (see run.h). */
int run_buffers(const run *rn)
{
    return rn->nslots ? rn->nbufs : 0;
}

/* Whether cuda's devices are not to be had (see run.h). */
int run_failed(const run *rn)
{
    return rn->be->failed;
}

/* Refuses a ring of `slots` buffers of the plan's chunk larger than the
 * physical memory, which would fail late (or wake the OOM killer) instead
 * of early and clearly: 0, or IO_ERR_NOMEM with its line in *st. */
static int run_ring_fits(const run_plan *plan, int slots, io_status *st)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    unsigned long long ram = (unsigned long long)pages * (unsigned long long)page;
    unsigned long long ring = (unsigned long long)plan->chunk * (unsigned long long)slots;
    if (ring <= ram)
        return 0;
    return io_fail(st, IO_ERR_NOMEM,
                   "--chunk %llu MiB times %d buffers (--streams %d%s) needs %llu MiB of "
                   "buffers, more than this machine's %llu MiB of memory: lower --chunk or "
                   "--streams",
                   (unsigned long long)plan->chunk >> 20, slots, plan->streams,
                   slots != plan->streams ? " per device" : "", ring >> 20, ram >> 20);
}

/* Whether the plan's --streams buffers fit in memory (see run.h). */
int run_plan_check(const run_plan *plan, io_status *st)
{
    return run_ring_fits(plan, plan->streams, st);
}

/* Sizes the buffers and slots for the first input's operation: --streams
 * per device (in all where they share the buffers; the operation's own
 * count where its chunks are inflated on a device and --streams was not
 * given; RUN_HOST_INFLATE_STREAMS where only the host inflates a single
 * stream and neither --streams nor --chunk was given), and twice as many
 * chunks in flight where a GPU may take them,
 * but one a buffer for planes and where the operation asks so. Refuses,
 * through the error hook, --streams buffers per device as the run opened
 * (in all where they are shared) that the memory cannot hold. 0, or 1. */
static int run_size(run *rn, const run_job *in)
{
    const run_op *op = in->op;
    io_status st;
    if (run_ring_fits(&rn->plan, op->shared_buffers ? rn->plan.streams : rn->nbufs, &st))
        return run_error(in, NULL, &st);
    int streams = rn->plan.streams;
    if (op->inflate_streams && in->spec.compressed && !rn->plan.streams_given)
        streams = op->inflate_streams;
    else if (!rn->plan.streams_given && !rn->plan.chunk_given &&
             run_host_stream(rn->be, in->src->r) && streams > RUN_HOST_INFLATE_STREAMS)
        streams = RUN_HOST_INFLATE_STREAMS;
    if (op->shared_buffers)
        rn->nbufs = streams;
    else if (streams != rn->plan.streams)
        rn->nbufs = backend_slots(rn->be, streams);
    int n = 2 * rn->nbufs;
    rn->nslots = rn->gpu_slots && n <= BACKEND_MAX_SLOTS ? n : rn->nbufs;
    if (op->slot_per_buffer || in->src->planes)
        rn->nslots = rn->nbufs;
    return 0;
}

/* Frees the buffers and closes the scheduler made for them. */
static void run_release(run *rn)
{
    for (int i = 0; rn->bufs && i < rn->nbufs; i++)
        backend_host_free(rn->be, rn->bufs[i]);
    free(rn->bufs);
    rn->bufs = NULL;
    sched_close(rn->h);
    rn->h = NULL;
    rn->chunk = 0;
}

/* Makes sure the scheduler takes chunks of `want` bytes, closing one made
 * for smaller ones, and, where the input is read through buffers (bufs; not
 * where the CPU reads it in place), that the buffers hold them: sized to
 * the input (never above --chunk), so a small file does not pay for pinning
 * a large ring. 0, or 1 after an error. */
static int run_reserve(run *rn, const run_job *in, size_t want, int bufs)
{
    if (rn->chunk >= want && (rn->bufs || !bufs))
        return 0;
    run_release(rn);
    rn->chunk = want;
    if (!bufs)
        return 0;
    if (!(rn->bufs = calloc((size_t)rn->nbufs, sizeof *rn->bufs))) {
        io_status st;
        io_fail(&st, IO_ERR_NOMEM, "out of memory");
        return run_error(in, NULL, &st);
    }
    for (int i = 0; i < rn->nbufs; i++)
        if (!(rn->bufs[i] = backend_host_alloc(rn->be, run_buffer_bytes(rn->be, want)))) {
            run_release(rn);
            return run_error(in, NULL, backend_status(rn->be));
        }
    return 0;
}

/* Opens the ring over the whole input: a view where the CPU reads it in
 * place, blocked gzip for the devices to inflate, or decoded on the host. */
static int run_open_ring(run *rn, pl_ring **out, const run_job *in)
{
    const run_source *s = in->src;
    size_t swap = s->fi->swap;
    if (in->host)
        return pl_open(out, s->r, rn->bufs, rn->nbufs, rn->nslots, rn->chunk, s->prefix,
                       s->prefix_len, s->limit, swap);
    if (run_view(rn->be, s->r, swap, s->prefix_len))
        return pl_open_view(out, s->r, rn->nslots, rn->chunk, s->prefix_len, s->limit);
    if (run_device_inflate(rn->be, s->r, swap, rn->chunk)) {
        backend_want_module(rn->be, "inflate");
        return pl_open_gz(out, s->r, rn->bufs, rn->nbufs, rn->nslots, rn->chunk, s->prefix,
                          s->prefix_len, s->limit);
    }
    return pl_open(out, s->r, rn->bufs, rn->nbufs, rn->nslots, rn->chunk, s->prefix,
                   s->prefix_len, s->limit, swap);
}

/* Opens the input's rings over the buffers: one per plane, or one over the
 * input, after the tail of what a device ran first (ran: its on_device
 * data bytes) or as run_open_ring does. 0, or 1 after an error. */
static int run_rings(run *rn, const run_job *in, pl_ring **pl, int ran, const void *tail,
                     size_t tail_len, uint64_t on_device)
{
    const run_source *s = in->src;
    size_t swap = s->fi->swap;
    if (s->planes) {
        size_t chunk = rn->chunk / 3;
        for (int k = 0; k < 3; k++) {
            void **bufs = rn->plane_bufs[k]; /* kept by the ring */
            for (int i = 0; i < rn->nbufs; i++)
                bufs[i] = (char *)rn->bufs[i] + k * chunk;
            if (pl_open(&pl[k], s->planes[k], bufs, rn->nbufs, rn->nslots, chunk, NULL, 0,
                        s->limit, swap) < 0)
                return run_no_reader(in);
        }
        return 0;
    }
    int rc = ran ? pl_open_at(&pl[0], s->r, rn->bufs, rn->nbufs, rn->nslots, rn->chunk, tail,
                              tail_len, on_device, s->limit, swap)
                 : run_open_ring(rn, &pl[0], in);
    return rc < 0 ? run_no_reader(in) : 0;
}

/* Opens the scheduler, unless one over these buffers is open (it then
 * takes the input's CPU cost), and turns on the devices' deflate. 0, or 1
 * after an error. */
static int run_sched(run *rn, const run_job *in)
{
    if (rn->h) {
        sched_cpu_cost(rn->h, in->spec.cpu_ns);
    } else {
        sched_run_spec spec = in->spec;
        spec.nslots = rn->nslots;
        spec.capacity = rn->chunk;
        io_status st;
        if (sched_open(&rn->h, rn->be, &spec, &in->hooks, &st) < 0)
            return st.text[0] ? run_error(in, NULL, &st) : 1;
    }
    const run_sink *k = in->sink;
    if (k->level > 0 && sched_compress(rn->h, k->level, gz_writer_offset(k->gz)) < 0)
        return run_error(in, in->src->name, sched_status(rn->h));
    return 0;
}

/* Reports a scheduler's failure for the input; returns 1. */
static int run_sched_error(run *rn, const run_job *in)
{
    return run_error(in, in->src->name, sched_status(rn->h));
}

/* The gzip member hand-over between the host and a device, one state at a
 * time: the host runs the member's start while the devices start (HOST),
 * a device goes on from the member's start or from where the host paused
 * (DEVICE), and the host reads on from where the device stopped, or from
 * the pause where the device could not take it over (REST). */
typedef enum { MEMBER_HOST, MEMBER_DEVICE, MEMBER_REST, MEMBER_DONE } member_state;

/* The hand-over's state: the data bytes each side ran, and the bytes the
 * host reads first when it goes on (tail). */
typedef struct {
    member_state state;
    uint64_t first;      /* data bytes the host ran before it paused */
    const void *head;    /* the bytes it decoded after them (NULL: it did not pause) */
    size_t head_len;
    int ran;             /* the host reads on after a device's or the pause's data */
    int staged;          /* a staged matrix is open for the member (goes on in REST) */
    uint64_t on_device;  /* data bytes the device ran */
    unsigned char tail[SCHED_MEMBER_KEEP];
    size_t tail_len;
} run_member;

/* The member being run on the host while the devices start, since `since`
 * (io_seconds). */
typedef struct {
    io_reader *r;
    backend *be;
    double since;
} run_paused;

/* Whether the host's threads are behind the pipe whose member reader r
 * decodes (cost_pipe_behind), having taken chunks from raw_seen input
 * bytes since `since`: 0 before the first chunk (no rate yet), 1 where r
 * reads no pipe. */
static int run_pipe_behind(const io_reader *r, uint64_t raw_seen, double since)
{
    int64_t got = io_reader_pipe_received(r);
    if (got < 0)
        return 1;
    if (raw_seen == 0)
        return 0;
    uint64_t behind = (uint64_t)got > raw_seen ? (uint64_t)got - raw_seen : 0;
    return cost_pipe_behind(behind, raw_seen, io_seconds() - since);
}

/* A device can take the member over (sched_input.member_gpu_ready): asks
 * its reader to pause, where the device pays for the data left: the
 * compressed bytes left times the ratio of the data decoded so far to the
 * bytes they came from (the trailer's where that is not known or more than
 * deflate gives; 1 at least), as both sides' rates are of decoded bytes:
 * text, many bytes to a compressed one, pays from few of them. A pipe
 * whose end has not been read yet pays once the host's threads fall behind
 * it (run_pipe_behind): what is left is not known; until then it is asked
 * again after each chunk (0). 1 once decided. */
static int run_pause(void *ctx, uint64_t raw_seen, uint64_t data_seen)
{
    const run_paused *p = ctx;
    int64_t size = io_reader_input_size(p->r);
    if (size < 0) {
        if (!run_pipe_behind(p->r, raw_seen, p->since))
            return 0;
        io_reader_pause(p->r);
        return 1;
    }
    if (size <= 0 || (uint64_t)size <= raw_seen)
        return 1;
    uint64_t left = (uint64_t)size - raw_seen;
    double ratio = raw_seen ? (double)data_seen / (double)raw_seen : 0;
    if (ratio > 1 && ratio <= GZSTREAM_RATIO_MAX)
        left = (uint64_t)((double)left * ratio);
    else if (ratio <= 0 || ratio > GZSTREAM_RATIO_MAX) /* none yet, or the input's count lags */
        left = run_member_data_hint(p->r, left);
    if (run_member_rest_pays(p->be, left))
        io_reader_pause(p->r);
    return 1;
}

/* HOST: runs the start of the member on the host while the devices start,
 * its ring pausing once a device could go on (run_pause); the member's end
 * reached first ends the hand-over. 0, or 1 after an error. */
static int run_member_host(run *rn, const run_job *in, pl_ring **pl, run_member *m)
{
    const run_source *s = in->src;
    double since = io_seconds();
    if (pl_open_pausable(&pl[0], s->r, rn->bufs, rn->nbufs, rn->nslots, rn->chunk, s->prefix,
                         s->prefix_len, s->limit, s->fi->swap, in->op->grain) < 0)
        return run_no_reader(in);
    if (run_sched(rn, in))
        return 1;
    /* the ring's chunks come inflated by the host's threads, which inflate the member's
       start whichever lane takes them: the CPU's lane adds only the operation's work */
    if (in->op->cpu_ns_inflated > 0)
        sched_cpu_cost(rn->h, in->op->cpu_ns_inflated);
    run_paused pause = {s->r, rn->be, since};
    sched_input input = {.rings = pl, .nrings = 1, .member_gpu_ready = run_pause,
                         .member_gpu_ctx = &pause};
    int rc = sched_run(rn->h, &input, &m->first);
    sched_cpu_cost(rn->h, in->spec.cpu_ns);
    m->staged = 1;
    if (rc != 0)
        return rc < 0 ? run_sched_error(rn, in) : 1;
    if (!pl_paused(pl[0], &m->head, &m->head_len))
        m->head = NULL;
    m->state = m->head ? MEMBER_DEVICE : MEMBER_DONE;
    return 0;
}

/* Where the host reads a member on from after the device: a deflate block
 * boundary, with the window and the member's CRC-32 and length so far. */
typedef struct {
    uint64_t bit;
    int final;            /* past the member's final block: its trailer is checked */
    const uint8_t *window;
    size_t wlen;
    uint32_t crc;
    uint64_t len;         /* decoded bytes so far, and where the host's read goes on */
    uint64_t skip;        /* decoded bytes then skipped (a header the device did not reach) */
    const char *why;      /* what -v says of it */
} run_resume;

/* Leaves the member's reader going on from p, in order on the host; a
 * failure there is told, where data_start is not UINT64_MAX, in the words
 * of a host read in order from that decoded offset (which may meet the
 * data's end first), so that the first line is the same on every backend.
 * 0, or 1 after the error hook told it. */
static int run_member_resume(const run_job *in, const run_resume *p, uint64_t data_start)
{
    const run_source *s = in->src;
    int rc = io_reader_continue_member(s->r, p->bit, p->final, p->window, p->wlen, p->crc, p->len,
                                       p->len, p->why);
    if (rc == 0 && p->skip && io_reader_skip(s->r, p->skip) != (int64_t)p->skip)
        rc = IO_ERR_TRUNCATED;
    if (rc == 0)
        return 0;
    io_status in_order;
    if (data_start != UINT64_MAX &&
        io_reader_member_verdict(s->r, data_start, s->limit, &in_order) < 0)
        return run_error(in, s->name, &in_order);
    return run_error(in, s->name, io_reader_status(s->r));
}

/* DEVICE: runs the member's data on the scheduler's device
 * (sched_run_member), from its start or after the host's pause, and hands
 * the member back to the host (run_member_resume) where the device
 * stopped; where the device could not take a paused member over, the host
 * reads on from the pause, its head as the tail. 0, or 1 after an error. */
static int run_member_device(run *rn, const run_job *in, run_member *m)
{
    const run_source *s = in->src;
    int paused = m->head != NULL;
    sched_member sm = {.skip = paused ? 0 : s->fi->data_offset, .limit = s->limit,
                       .grain = in->op->grain, .first = m->first, .head = m->head,
                       .head_len = m->head_len, .tail = m->tail, .stage_kept = m->staged};
    double at = run_elapsed(in);
    int rc = sched_run_member(rn->h, s->r, &sm, s->name);
    m->ran = sm.ran || paused;
    m->staged |= sm.ran;
    m->on_device = sm.data;
    m->tail_len = sm.tail_len;
    m->state = MEMBER_REST;
    if (!sm.ran && paused) { /* the host reads on from the pause */
        run_resume p = {.why = "the GPU could not go on where the host paused: read on in order "
                               "from there"};
        io_reader_pause_point(s->r, &p.bit, &p.window, &p.wlen, &p.crc, &p.len);
        memcpy(m->tail, m->head, m->head_len);
        m->tail_len = m->head_len;
        return run_member_resume(in, &p, UINT64_MAX);
    }
    if (!sm.ran)
        return 0;
    if (rc < 0)
        run_sched_error(rn, in);
    if (paused)
        run_info(in,
                 "%s: %llu bytes of data inflated on the host's threads while the GPU started; "
                 "the GPU went on from there %.3f s after the process started",
                 s->name, (unsigned long long)(m->first + m->head_len), at);
    run_info(in,
             "%s: %llu bytes of data inflated on the GPU in %llu batches, %llu rounds; %llu "
             "batches read while the one before was inflated (waited %.3f s for them)",
             s->name, (unsigned long long)sm.data, sm.st.batches, sm.st.rounds, sm.st.read_ahead,
             sm.st.ahead_wait);
    if (rc != 0)
        return 1;
    const gzstream_point *pt = sm.stop; /* the host reads on */
    run_resume p = {.bit = pt->bit, .final = pt->final,
                    .window = pt->window + IFS_WINDOW - pt->wlen, .wlen = pt->wlen,
                    .crc = pt->crc, .len = pt->len, .skip = sm.skip,
                    .why = "the GPU stopped at invalid, cut or unusual data: read on in order "
                           "from there"};
    return run_member_resume(in, &p, sm.data_start);
}

/* Takes the next chunk of every plane's ring (the sched_input ctx; they
 * advance in step, so the chunks share a slot index and a length).
 * Returns 1 with ring 0's chunk in *c, 0 at the end, or -1 with the
 * error's message in st, this round's chunks already given back
 * (sched_input.next). */
static int run_next_planes(void *ctx, pl_chunk *c, io_status *st)
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

/* Runs the rings through the scheduler (a staged matrix opened first,
 * unless one is open for the input's start: stage_kept); 0, or 1 after an
 * error. */
static int run_stream(run *rn, const run_job *in, pl_ring **pl, int stage_kept, uint64_t *bytes)
{
    sched_input input = {.rings = pl, .nrings = in->src->planes ? 3 : 1, .stage_kept = stage_kept};
    if (in->src->planes) {
        input.next = run_next_planes;
        input.ctx = &input;
    }
    int rc = sched_run(rn->h, &input, bytes);
    if (rc < 0) /* the staged matrix not opened is the machine's failure */
        return run_error(in, input.machine ? NULL : in->src->name, sched_status(rn->h));
    return rc != 0;
}

/* Runs the input through its rings, opened before the scheduler so that
 * they fill the buffers while cuda's devices start; 0, or 1 after an
 * error. */
static int run_rings_through(run *rn, const run_job *in, pl_ring **pl, uint64_t *bytes)
{
    if (run_rings(rn, in, pl, 0, NULL, 0, 0) || run_sched(rn, in))
        return 1;
    return run_stream(rn, in, pl, 0, bytes);
}

/* Runs a gzip member whose data may run on a device through the hand-over's
 * states: HOST where the devices are not ready yet and a pause can fall
 * between whole grains, DEVICE from there (or from the member's start),
 * REST on the host for what the device leaves; with the devices open
 * already, a member too small to pay for the device's set-up is read on
 * the host alone. *bytes gets the data bytes run. 0, or 1 after an error. */
static int run_member_through(run *rn, const run_job *in, pl_ring **pl, uint64_t *bytes)
{
    const run_source *s = in->src;
    run_member m = {.state = MEMBER_DEVICE};
    *bytes = 0;
    int64_t size = io_reader_input_size(s->r);
    if (rn->chunk % in->op->grain == 0 && run_member_host_start(rn->be))
        m.state = MEMBER_HOST;
    else if (size >= 0 && !run_member_rest_pays(rn->be, run_member_data_hint(s->r, (uint64_t)size)))
        return run_rings_through(rn, in, pl, bytes); /* the devices are open: too small */
    else if (run_sched(rn, in))
        return 1;
    for (;;) {
        switch (m.state) {
        case MEMBER_HOST:
            if (run_member_host(rn, in, pl, &m))
                return 1;
            break;
        case MEMBER_DEVICE:
            if (run_member_device(rn, in, &m))
                return 1;
            pl_close(pl[0]); /* the paused ring, whose bytes head were */
            pl[0] = NULL;
            break;
        case MEMBER_REST: {
            if (run_rings(rn, in, pl, m.ran, m.tail, m.tail_len, m.first + m.on_device))
                return 1;
            int failed = run_stream(rn, in, pl, m.staged, bytes);
            *bytes += m.first + m.on_device;
            return failed;
        }
        case MEMBER_DONE: /* the host's ring read the member to its end */
            *bytes = m.first;
            return 0;
        }
    }
}

/* Decides how one input runs: a copy decoded on the host, chunks inflated
 * on a device, a member handed to a device; the scheduler's run and hooks. */
static void run_plan_input(run *rn, run_job *in)
{
    const run_source *s = in->src;
    const run_op *op = in->op;
    const run_sink *k = in->sink;
    backend *be = rn->be;
    in->m = k->msgs;
    in->host = !op->ops && !op->whole;
    in->member = op->grain && op->grain <= SCHED_MEMBER_KEEP && !s->planes && !s->part &&
                 run_device_member(be, s->r, s->fi);
    in->spec = (sched_run_spec){
        .ops = op->ops, .whole = op->whole, .op = op->ctx,
        .compressed = !in->host && !s->planes && run_device_inflate(be, s->r, s->fi->swap, s->chunk),
        .results = op->results, .cpu_ns = op->cpu_ns, .start_seconds = COST_GPU_START_SECONDS,
        .per_device = op->per_device, .member = in->member};
    in->hooks = (sched_hooks){.ctx = k->ctx, .ready = in->m->ready, .fallback = in->m->fallback,
                              .info = in->m->info, .warn = in->m->warn,
                              .progress = in->m->progress, .write_out = k->write,
                              .started = in->m->started};
}

/* Runs one input (see run.h). */
int run_input(run *rn, const run_source *src, const run_op *op, const run_sink *sink,
              uint64_t *bytes)
{
    run_job in = {.src = src, .op = op, .sink = sink};
    pl_ring *pl[3] = {NULL, NULL, NULL};
    int failed = 1;
    *bytes = 0;
    run_plan_input(rn, &in);
    if (!rn->nslots && run_size(rn, &in))
        return 1;
    /* the CPU reads a plain file in place where run_open_ring would */
    int view = !src->planes && !in.member && !in.host &&
               run_view(rn->be, src->r, src->fi->swap, src->prefix_len);
    if (run_reserve(rn, &in, src->chunk * (src->planes ? 3 : 1), !view))
        return 1;
    in.m->progress_begin(src->name, io_reader_file_size(src->r));
    failed = in.member ? run_member_through(rn, &in, pl, bytes)
                       : run_rings_through(rn, &in, pl, bytes);
    in.m->progress_end();
    if (rn->h)
        sched_report(rn->h, src->name);
    char line[512]; /* -v: how the input's gzip members were inflated */
    io_reader_describe(src->r, line, sizeof line);
    if (line[0])
        run_info(&in, "%s: %s", src->name, line);
    if (!failed && op->check)
        failed = op->check(op->check_ctx, *bytes);
    if (!failed && io_reader_trailing_garbage(src->planes ? src->planes[2] : src->r)) {
        char warn[8192];
        snprintf(warn, sizeof warn, "%s: trailing garbage after the compressed data ignored",
                 src->name);
        in.m->warn(warn);
    }
    for (int k = 0; k < 3; k++)
        pl_close(pl[k]);
    return failed;
}

/* Frees the buffers and the scheduler (see run.h). */
void run_close(run *rn)
{
    if (!rn)
        return;
    run_release(rn);
    free(rn);
}
