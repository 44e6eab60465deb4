/* gzstream.c - a gzip member inflated on one device in batches (see
 * gzstream.h). */
#include "gzstream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/clock.h"
#include "io/gzip/gzip_header.h"
#include "io/pread.h"

#define GZSTREAM_BATCH_MAX ((size_t)384 << 20) /* compressed bytes per batch at most */
#define GZSTREAM_BATCH_MIN ((size_t)4 << 20) /* a batch declined this small goes to the host */
/* A member's first batch is at most 1/GZSTREAM_FIRST of a batch (96 MiB):
 * read and copied in a few milliseconds, so that the device starts decoding
 * soon, while the next batch is read. */
#define GZSTREAM_FIRST 4
#define GZSTREAM_SEG ((size_t)128 << 10)       /* compressed bytes per segment */
#define GZSTREAM_ROOM STREAM_PLAN_ROOM_MIN /* symbols of room per compressed byte the pool is
                                              made for (a batch of GZSTREAM_BATCH_MAX) */
/* A batch that is not the stream's last ends at the first block boundary
 * at or past this many bytes (at most a quarter of the batch) before the
 * end of its input, where the next batch's search for its first block
 * begins: that boundary lies within this distance in any stream seen (a
 * deflate block's compressed size); where it does not, the next batch is
 * read again from where this one ended. */
#define GZSTREAM_MARGIN ((size_t)4 << 20)
/* A batch is read (and, the first time, pinned) in this many pieces (32 MiB
 * each), each piece's copy to the device queued once it is read, so that
 * the copies run while the rest is read. */
#define GZSTREAM_PIECES 12

_Static_assert(GZSTREAM_SETS >= 2 && GZSTREAM_SETS <= STREAM_INFLATE_SETS_MAX,
               "sets of batch buffers");

/* A batch read into one set of buffers, copied to the device and its first
 * round queued, on a thread of its own, while the batches before it are
 * inflated. */
typedef struct {
    gzstream *z;
    int set;          /* the set of buffers it fills (z->dev.set[set], z->host[set]) */
    pthread_t thread;
    int running;      /* thread is to be joined */
    int pending;      /* started, and not taken nor dropped since */
    int ok;           /* after the join: its first round is queued */
    uint64_t pos;     /* the file offset of its first byte */
    size_t len;
    uint64_t stop;    /* its plan's stop (gzstream_batch_stop when it was started) */
    uint64_t next;    /* where the batch after it begins (its plan's stop), or UINT64_MAX */
    uint32_t room;    /* its segments' room per compressed byte */
} gzstream_ahead;

struct gzstream {
    gpu *g;
    gpu_queue q[GZSTREAM_SETS]; /* q[k]: the copy and first round of dev.set[k] (dev.cur: the
                                   batch being inflated; the next ones queued meanwhile) */
    gpu_queue fin;        /* the rest of a batch's work, and the copies of decoded bytes */
    stream_inflate_dev dev;
    int fd;
    spool *spool;         /* a pipe's, read instead of fd, or NULL */
    uint64_t file_size;   /* a spool's: SPOOL_UNKNOWN until a read came short at its end */
    atomic_int cancel;    /* the reads ahead of a spool stop at their next piece */
    uint64_t pos;         /* file byte where the next batch begins */
    unsigned bit;         /* bits of it already decoded */
    size_t cap;           /* compressed bytes the buffers hold */
    size_t piece;         /* bytes of a piece (GZSTREAM_PIECES): reads and pins */
    size_t batch;         /* compressed bytes per batch now */
    size_t first;         /* the member's first batch at most (0: batch) */
    /* decoded bytes per compressed byte: the trailer's hint, then the last batch's; the room
       per byte of the segments that follows from it, and the batch's bytes that leave room
       for them in the pool (a shorter batch where the data are more compressed) */
    double ratio;
    uint32_t room;
    size_t span;
    size_t least;         /* the shortest batch: GZSTREAM_BATCH_MIN, or a 64th of cap */
    int retry;            /* the batch is tried again, shorter and roomier, or longer */
    size_t ceiling;       /* a retry is no longer than this (shorter ones having failed) */
    /* host[k]: dev.set[k]'s compressed bytes, then zeroed padding: pinned
       by the caller (host[0]), the caller's and pinned by gzstream a piece
       at a time as batches first read them, or gzstream's own, pinned when
       made */
    uint8_t *host[GZSTREAM_SETS];
    int own_host[GZSTREAM_SETS];
    int pin_host[GZSTREAM_SETS];     /* host[k] is still to be pinned */
    size_t pinned[GZSTREAM_SETS];    /* pieces of host[k] gzstream pinned */
    /* ahead[k]: the batch read into set k while those before it are
       inflated, each where the one before it will stop */
    gzstream_ahead ahead[GZSTREAM_SETS];
    uint8_t *win;         /* pinned: the window after a batch */
    CUdeviceptr out[2];   /* decoded bytes: the last batch's, and the next one's */
    size_t out_cap, keep_max;
    int cur;              /* out[cur] holds the last batch */
    size_t last_bytes;    /* bytes of it */
    int stopped;          /* the device goes no further: pt says where */
    gzstream_point pt;
    unsigned long long batches, rounds, ahead_used;
    double ahead_wait;    /* seconds the inflating thread waited for reads ahead */
    io_status st; /* the last failure */
};

/* Makes the buffers for batches of cap compressed bytes (the host's
 * unless the caller gave them); 0 or negative. */
static int gzstream_buffers(gzstream *z, size_t cap)
{
    int rc;
    z->cap = z->batch = z->span = cap;
    z->least = cap / 64 < GZSTREAM_BATCH_MIN ? cap / 64 : GZSTREAM_BATCH_MIN;
    z->piece = (cap + GZSTREAM_PIECES - 1) / GZSTREAM_PIECES; /* in whole pages */
    z->piece = (z->piece + 4095) / 4096 * 4096;
    if ((rc = stream_inflate_open(&z->dev, z->g, cap, GZSTREAM_SEG,
                                  (uint32_t)(GZSTREAM_ROOM * GZSTREAM_SEG), GZSTREAM_SETS)) < 0)
        return rc;
    /* every symbol is one decoded byte: the pool bounds a batch's output */
    z->out_cap = (size_t)z->dev.sym_cap;
    for (int i = 0; i < 2; i++)
        if ((rc = gpu_mem_alloc(z->g, &z->out[i], z->out_cap + z->keep_max,
                                "a batch's decoded bytes")) < 0)
            return rc;
    if ((z->own_host[0] && !(z->host[0] = gpu_host_alloc(z->g, cap + IF_IN_PAD))) ||
        !(z->win = gpu_host_alloc(z->g, IFS_WINDOW)))
        return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Waits for a read ahead's thread, if it runs; nonzero when it succeeded. */
static int gzstream_ahead_join(gzstream_ahead *a)
{
    if (a->running) {
        pthread_join(a->thread, NULL);
        a->running = 0;
    }
    return a->ok;
}

/* Waits for the reads ahead and forgets them (a set is free once its
 * queue is synchronized). */
static void gzstream_ahead_drop(gzstream *z)
{
    atomic_store(&z->cancel, 1);
    for (int k = 0; k < GZSTREAM_SETS; k++) {
        gzstream_ahead_join(&z->ahead[k]);
        z->ahead[k].ok = z->ahead[k].pending = 0;
    }
    atomic_store(&z->cancel, 0);
}

/* Frees the buffers gzstream_buffers made. */
static void gzstream_free_buffers(gzstream *z)
{
    gzstream_ahead_drop(z);
    stream_inflate_close(&z->dev);
    for (int i = 0; i < 2; i++) {
        gpu_mem_free(z->g, z->out[i]);
        z->out[i] = 0;
    }
    for (int i = 0; i < GZSTREAM_SETS; i++) {
        if (z->own_host[i]) {
            gpu_host_free(z->g, z->host[i]);
            z->host[i] = NULL;
        }
    }
    gpu_host_free(z->g, z->win);
    z->win = NULL;
}

/* Bytes of a staging buffer for gzstream_open. */
size_t gzstream_staging_bytes(void)
{
    return GZSTREAM_BATCH_MAX + IF_IN_PAD;
}

/* Prepares the device (see gzstream.h): the largest batch that fits, from
 * GZSTREAM_BATCH_MAX (or the staging buffer's size) down. */
int gzstream_open(gzstream **out, gpu *g, size_t keep_max,
                  void *const staging[GZSTREAM_SETS], size_t staging_bytes)
{
    *out = NULL;
    gzstream *z = calloc(1, sizeof *z);
    if (!z)
        return GPU_ERR_OUT_OF_MEMORY;
    z->g = g;
    z->keep_max = keep_max;
    int given = 0;
    for (int i = 0; i < GZSTREAM_SETS; i++) {
        z->ahead[i] = (gzstream_ahead){.z = z, .set = i};
        z->host[i] = staging[i];
        /* host[k > 0] of gzstream's own: made by the first read ahead into set k */
        z->own_host[i] = staging[i] == NULL;
        z->pin_host[i] = i > 0 && staging[i] != NULL;
        given |= staging[i] != NULL;
    }
    int rc = gpu_bind(g);
    for (int i = 0; rc == 0 && i < GZSTREAM_SETS; i++)
        rc = gpu_queue_open(g, &z->q[i]);
    if (rc == 0)
        rc = gpu_queue_open(g, &z->fin);
    size_t cap = GZSTREAM_BATCH_MAX;
    if (given && staging_bytes - IF_IN_PAD < cap)
        cap = staging_bytes - IF_IN_PAD;
    while (rc == 0 && (rc = gzstream_buffers(z, cap)) == GPU_ERR_OUT_OF_MEMORY &&
           cap > GZSTREAM_BATCH_MIN) {
        gzstream_free_buffers(z);
        cap /= 2;
        rc = 0;
    }
    if (rc < 0) {
        gzstream_close(z);
        return rc;
    }
    *out = z;
    return 0;
}

/* Takes `ratio` decoded bytes per compressed byte as the next batches'
 * (stream_plan_room, stream_plan_span): the memory stays the pool made at
 * open, a more compressed stream gets shorter batches. */
static void gzstream_ratio(gzstream *z, double ratio)
{
    z->ratio = ratio;
    z->room = stream_plan_room(ratio);
    z->span = stream_plan_span(z->dev.sym_cap, z->room, z->least, z->cap);
}

/* The ratio the trailer suggests (see gzstream.h). */
double gzstream_ratio_hint(int fd, uint64_t data_off, uint64_t file_size)
{
    double ratio = gzip_trailer_ratio(fd, data_off, file_size);
    return ratio <= GZSTREAM_RATIO_MAX ? ratio : 0;
}

/* Starts a member (see gzstream.h); a pipe's trailer is not read yet: no
 * ratio hint. */
void gzstream_begin(gzstream *z, const gzstream_src *src, uint64_t data_off)
{
    gzstream_ahead_drop(z);
    z->fd = src->spool ? -1 : src->fd;
    z->spool = src->spool;
    z->file_size = src->spool ? SPOOL_UNKNOWN : src->size;
    z->pos = data_off;
    z->bit = 0;
    gzstream_ratio(z, src->spool ? 0 : gzstream_ratio_hint(src->fd, data_off, src->size));
    z->batch = z->span;
    z->retry = 0;
    z->ceiling = z->cap;
    z->first = z->cap / GZSTREAM_FIRST;
    z->last_bytes = 0;
    z->stopped = 0;
    z->batches = z->rounds = z->ahead_used = 0;
    z->ahead_wait = 0;
    memset(&z->pt, 0, offsetof(gzstream_point, window));
    z->pt.crc = (uint32_t)crc32(0, Z_NULL, 0);
}

/* Starts where another decoder paused (see gzstream.h). */
void gzstream_begin_at(gzstream *z, const gzstream_src *src, uint64_t bit, const uint8_t *window,
                       size_t wlen, uint32_t crc, uint64_t len)
{
    gzstream_begin(z, src, bit / 8);
    z->bit = (unsigned)(bit % 8);
    z->pt.crc = crc;
    z->pt.len = len;
    z->pt.wlen = (uint32_t)(wlen < IFS_WINDOW ? wlen : IFS_WINDOW);
    memcpy(z->pt.window + IFS_WINDOW - z->pt.wlen, window + wlen - z->pt.wlen, z->pt.wlen);
}

/* Puts decoded bytes where the next batch carries them over from (see
 * gzstream.h). */
int gzstream_carry_in(gzstream *z, const void *host, size_t n)
{
    if (n > z->keep_max)
        return io_fail(&z->st, GPU_ERR_INTERNAL, "%zu bytes to carry over exceed the batch's room",
                       n);
    int rc = gpu_bind(z->g);
    if (rc < 0)
        return io_pass_as(&z->st, rc, gpu_status(z->g));
    CUstream s = z->fin.stream;
    CUresult r = n ? cu.MemcpyHtoDAsync(z->out[z->cur], host, n, s) : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(s); /* the host's bytes may go once this returns */
    if (r != CUDA_SUCCESS)
        return io_fail(&z->st, GPU_ERR_DRIVER, "copying decoded bytes to the device failed: %s",
                       cu_result_text(r));
    z->last_bytes = n;
    return 0;
}

/* Where the host goes on when the device stops before the final block. */
static int gzstream_stop(gzstream *z)
{
    z->pt.bit = z->pos * 8 + z->bit;
    z->pt.final = 0;
    z->stopped = 1;
    return 0;
}

/* Records the window, CRC-32 and length after a batch of nout bytes. */
static void gzstream_account(gzstream *z, const stream_inflate_result *r)
{
    z->pt.crc = (uint32_t)crc32_combine(z->pt.crc, r->crc, (z_off_t)r->nout);
    z->pt.len += r->nout;
    z->pt.wlen = z->pt.len < IFS_WINDOW ? (uint32_t)z->pt.len : IFS_WINDOW;
    memcpy(z->pt.window, z->win, IFS_WINDOW);
}

/* Where the plan of the batch of len bytes at file offset base stops. */
static uint64_t gzstream_batch_stop(const gzstream *z, uint64_t base, size_t len)
{
    size_t margin = z->cap / 4 < GZSTREAM_MARGIN ? z->cap / 4 : GZSTREAM_MARGIN;
    return stream_plan_batch_stop(base, len, z->file_size, margin);
}

/* Pins host[k] up to piece i where gzstream is to pin it (a batch reads
 * pieces in order, and the first batches in a set pin them as they go,
 * off the start of the run); a failure leaves the rest unpinned, which
 * only slows their copies. */
static void gzstream_pin_piece(gzstream *z, int k, size_t i)
{
    size_t whole = z->cap + IF_IN_PAD;
    while (z->pin_host[k] && z->pinned[k] <= i && z->pinned[k] * z->piece < whole) {
        size_t at = z->pinned[k] * z->piece;
        size_t n = whole - at < z->piece ? whole - at : z->piece;
        if (cu.MemHostRegister(z->host[k] + at, n, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS)
            z->pin_host[k] = 0;
        else
            z->pinned[k]++;
    }
}

/* Reads the len bytes at file offset pos into set k's host buffer and
 * queues their copy to the device's set k on s, a piece at a time, so that
 * the copies run while the rest is read: 0, 1 when the read failed or came
 * short (the host then reads on and says why; a pipe's read ahead also
 * when it is dropped), or a negative gpu_error. */
static int gzstream_load(gzstream *z, int k, CUstream s, uint64_t pos, size_t len)
{
    uint8_t *in = z->host[k];
    for (size_t off = 0; off < len; off += z->piece) {
        size_t n = len - off < z->piece ? len - off : z->piece;
        gzstream_pin_piece(z, k, off / z->piece);
        if (z->spool && atomic_load(&z->cancel))
            return 1;
        ssize_t got = z->spool ? spool_pread(z->spool, in + off, n, pos + off)
                               : io_pread(z->fd, in + off, n, pos + off);
        if (got != (ssize_t)n)
            return 1;
        int rc = stream_inflate_upload_part(&z->dev, k, s, in, off, n);
        if (rc)
            return rc;
    }
    memset(in + len, 0, IF_IN_PAD);
    return stream_inflate_upload_end(&z->dev, k, s, len);
}

/* gzstream_load of a read ahead's batch into set k; where a pipe's read
 * comes short at its end, the batch is cut there and read again, the
 * stream's last (its plan stops nowhere before that end). */
static int gzstream_ahead_load(gzstream *z, gzstream_ahead *a, int k, CUstream s)
{
    int rc = gzstream_load(z, k, s, a->pos, a->len);
    uint64_t size = rc == 1 && z->spool && !atomic_load(&z->cancel) ? spool_size(z->spool)
                                                                     : SPOOL_UNKNOWN;
    if (size == SPOOL_UNKNOWN || size <= a->pos || size >= a->pos + a->len)
        return rc;
    a->len = (size_t)(size - a->pos);
    a->stop = IFS_NONE;
    return gzstream_load(z, k, s, a->pos, a->len);
}

/* A read ahead's thread: its batch into its set's host buffer (made
 * pinned the first time), onto the device, and its first round queued
 * (its first block searched for from its first byte). A failure only
 * leaves ok 0: the batch is then read as the first one was, and a lasting
 * error is reported there. */
static void *gzstream_ahead_main(void *arg)
{
    gzstream_ahead *a = arg;
    gzstream *z = a->z;
    int k = a->set;
    CUstream s = z->q[k].stream;
    /* the driver directly: a failure here must not replace the text of one
       on the inflating thread; a batch read ahead and not taken may still
       be decoding into the set */
    if (gpu_bind(z->g) < 0 || cu.StreamSynchronize(s) != CUDA_SUCCESS)
        return NULL;
    if (!z->host[k] && cu.MemHostAlloc((void **)&z->host[k], z->cap + IF_IN_PAD,
                                       CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
        z->host[k] = NULL;
        return NULL;
    }
    z->dev.set[k].room = a->room;
    if (gzstream_ahead_load(z, a, k, s) == 0 &&
        stream_inflate_batch_begin(&z->dev, s, k, a->len, 0, 0, a->stop) == 0)
        a->ok = 1;
    return NULL;
}

/* Starts reading into set k the batch whose search begins at file offset
 * `from`, while the batches before it are inflated. */
static void gzstream_ahead_start(gzstream *z, int k, uint64_t from)
{
    gzstream_ahead *a = &z->ahead[k];
    if (from >= z->file_size)
        return;
    uint64_t left = z->file_size - from;
    a->pos = from;
    a->len = left < z->span ? (size_t)left : z->span;
    a->room = z->room;
    a->stop = gzstream_batch_stop(z, a->pos, a->len);
    a->next = a->stop == IFS_NONE ? UINT64_MAX : a->pos + a->stop / 8;
    a->ok = 0;
    a->pending = 1;
    a->running = pthread_create(&a->thread, NULL, gzstream_ahead_main, a) == 0;
}

/* Keeps the sets after set k (in the order their batches are taken), and
 * set k too where `with_k` (its batch done), filled with the batches that
 * follow set k's, each beginning where the plan of the one before it stops
 * (set k's: at file offset `from`), up to the file's last batch. */
static void gzstream_ahead_fill(gzstream *z, int k, uint64_t from, int with_k)
{
    int n = z->dev.nsets;
    for (int j = 1; j < n + with_k && from != UINT64_MAX; j++) {
        int set = (k + j) % n;
        gzstream_ahead *a = &z->ahead[set];
        if (!a->pending)
            gzstream_ahead_start(z, set, from);
        if (!a->pending || a->pos != from)
            return;
        from = a->next;
    }
}

/* Waits for the work queued on s: 0, or a failed CU_TRY's result. */
static int gzstream_wait(CUstream s)
{
    CU_TRY(cu.StreamSynchronize(s));
    return 0;
}

/* Takes the batch read ahead into the next set as the next one where it
 * holds the next one's start (then *base and *len say where it lies in the
 * file, *stop where its plan stops, and that set is the current one); else
 * 0. */
static int gzstream_ahead_take(gzstream *z, uint64_t *base, size_t *len, uint64_t *stop)
{
    gzstream_ahead *a = &z->ahead[(z->dev.cur + 1) % z->dev.nsets];
    if (!a->pending)
        return 0;
    double t = io_seconds();
    int ok = gzstream_ahead_join(a);
    z->ahead_wait += io_seconds() - t;
    a->pending = 0;
    if (z->spool && z->file_size == SPOOL_UNKNOWN) /* the read may have found the pipe's end */
        z->file_size = spool_size(z->spool);
    if (!ok || z->retry || a->pos > z->pos || z->pos >= a->pos + a->len)
        return 0;
    stream_inflate_advance(&z->dev);
    z->ahead_used++;
    *base = a->pos;
    *len = a->len;
    *stop = a->stop;
    return 1;
}

/* Reads the next batch, at z->pos, into set k for gzstream_next (s: its
 * queue), its length in *len (the member's first batch cut to z->first:
 * *cut_first); where a pipe's read comes short at its end, the end is
 * known from then on and the batch is read again up to it. 0, 1 when it
 * cannot be read (none left, a read error or a file cut short: the host
 * reads on and says so in its words), or a negative gpu_error. */
static int gzstream_read_batch(gzstream *z, int k, CUstream s, size_t *len, int *cut_first)
{
    for (;;) {
        uint64_t left = z->file_size > z->pos ? z->file_size - z->pos : 0;
        *len = left < z->batch ? (size_t)left : z->batch;
        *cut_first = 0;
        if (z->first && *len > z->first) {
            *len = z->first;
            *cut_first = 1;
        }
        if (*len == 0)
            return 1;
        int rc = gzstream_wait(s);
        if (rc == 0)
            rc = gzstream_load(z, k, s, z->pos, *len);
        if (rc != 1 || !z->spool || z->file_size != SPOOL_UNKNOWN ||
            (z->file_size = spool_size(z->spool)) == SPOOL_UNKNOWN)
            return rc;
    }
}

/* Lets a pipe's spool drop the bytes before the next batch's and before
 * those of the batches read ahead (which may begin a block before it): the
 * host goes on at or past z->pos. */
static void gzstream_release(gzstream *z)
{
    if (!z->spool)
        return;
    uint64_t keep = z->pos;
    for (int k = 0; k < GZSTREAM_SETS; k++)
        if (z->ahead[k].pending && z->ahead[k].pos < keep)
            keep = z->ahead[k].pos;
    spool_release(z->spool, keep);
}

/* Inflates the next batch (see gzstream.h). */
int gzstream_next(gzstream *z, size_t keep, CUdeviceptr *data, size_t *bytes)
{
    if (z->stopped)
        return 0;
    if (keep > z->keep_max || keep > z->last_bytes) {
        return io_fail(&z->st, GPU_ERR_INTERNAL, "%zu bytes to carry over exceed the batch's room",
                       keep);
    }
    int rc = gpu_bind(z->g);
    if (rc < 0)
        return rc;
    int nxt = z->cur ^ 1;
    if (keep) {
        CUstream s = z->fin.stream;
        CUresult r = cu.MemcpyDtoDAsync(z->out[nxt], z->out[z->cur] + (z->last_bytes - keep), keep,
                                        s);
        if (r == CUDA_SUCCESS)
            r = cu.StreamSynchronize(s);
        if (r != CUDA_SUCCESS)
            return io_fail(&z->st, GPU_ERR_DRIVER, "copying decoded bytes on the device failed: %s",
                           cu_result_text(r));
    }
    for (;;) {
        uint64_t base = z->pos; /* the file offset of the batch's first byte */
        size_t len;
        uint64_t stop;
        int ahead = gzstream_ahead_take(z, &base, &len, &stop);
        int k = z->dev.cur;
        uint8_t *in = z->host[k];
        CUstream s = z->q[k].stream;
        int cut_first = 0; /* the member's first batch, cut shorter than a batch */
        rc = 0;
        if (!ahead) {
            /* the batches read ahead do not follow this one: dropped, and
               their copies from this set's host buffer waited for */
            gzstream_ahead_drop(z);
            if ((rc = gzstream_read_batch(z, k, s, &len, &cut_first)) == 1)
                return gzstream_stop(z);
            stop = gzstream_batch_stop(z, base, len);
        }
        /* a batch ending at a pipe's end found later was planned as one before it */
        int last = stop == IFS_NONE && base + len == z->file_size;
        uint64_t start = (z->pos - base) * 8 + z->bit;
        stream_inflate_result r;
        if (!ahead && rc == 0) {
            z->dev.set[k].room = z->room;
            rc = stream_inflate_batch_begin(&z->dev, s, k, len, start, 1, stop);
        }
        if (rc == 0) {
            /* after the first round is queued (the first batches read
               into a set pin its buffer, which holds the driver's other
               calls up): the batches after it, unless read already */
            if (stop != IFS_NONE)
                gzstream_ahead_fill(z, k, base + stop / 8, 0);
            /* the first round on the set's queue, the rest on fin; a batch
               read ahead searched for its first block: it must begin where
               this stream is */
            rc = gzstream_wait(s);
            if (rc == 0)
                rc = stream_inflate_batch_end(&z->dev, z->fin.stream, in, len, last,
                                              ahead ? start : IFS_NONE, z->pt.window, z->pt.wlen,
                                              z->out[nxt] + keep, z->out_cap, z->win, &r);
        }
        z->first = 0;
        if (rc < 0) {
            rc = gpu_settle(z->g, rc, "inflating a gzip stream on the device");
            return io_pass_as(&z->st, rc, gpu_status(z->g));
        }
        z->rounds += (unsigned long long)z->dev.rounds;
        uint64_t end = rc == 0 ? base * 8 + r.end : 0;
        int moved = rc == 0 && (r.final || end > z->pos * 8 + z->bit);
        if (!moved) {
            /* declined, or no whole block in it: more output than the room gets a shorter
               batch with twice the room per byte, other declines a shorter batch (the
               data before damage), down to the shortest; a block longer than the batch
               a whole or a longer one; then the host */
            int why = rc == 1 ? z->dev.set[k].plan.why : STREAM_PLAN_LONG_BLOCK;
            if (why != STREAM_PLAN_LONG_BLOCK && len > z->least) {
                if (why == STREAM_PLAN_NO_ROOM)
                    gzstream_ratio(z, (z->ratio > GZSTREAM_ROOM ? z->ratio : GZSTREAM_ROOM) * 2);
                z->batch = len / 2 < z->span ? len / 2 : z->span;
                z->ceiling = z->batch;
                z->retry = 1;
                continue;
            }
            if (cut_first)
                continue; /* a whole batch next */
            if (why == STREAM_PLAN_LONG_BLOCK && z->batch < z->ceiling && !last) {
                z->batch = z->batch * 2 < z->ceiling ? z->batch * 2 : z->ceiling;
                z->retry = 1;
                continue;
            }
            return gzstream_stop(z);
        }
        gzstream_account(z, &r);
        z->batches++;
        /* the ratio measured over the batch sizes the next ones */
        uint64_t from = z->pos * 8 + z->bit;
        gzstream_ratio(z, (double)r.nout * 8 / (double)(end > from + 8 ? end - from : 8));
        z->retry = 0;
        z->ceiling = z->cap;
        z->pos = end / 8;
        z->bit = (unsigned)(end % 8);
        if (r.final) {
            z->pt.bit = end;
            z->pt.final = 1;
            z->stopped = 1;
        }
        z->batch = z->span;
        /* this batch's set is free: the batches after it fill the sets */
        if (!r.final && stop != IFS_NONE)
            gzstream_ahead_fill(z, k, base + stop / 8, 1);
        gzstream_release(z);
        z->cur = nxt;
        z->last_bytes = keep + r.nout;
        *data = z->out[nxt];
        *bytes = z->last_bytes;
        return 1;
    }
}

/* Copies the last keep bytes of the last batch to host (see gzstream.h). */
int gzstream_tail(gzstream *z, size_t keep, void *host)
{
    if (keep > z->last_bytes) {
        return io_fail(&z->st, GPU_ERR_INTERNAL, "%zu bytes to carry over exceed the batch", keep);
    }
    if (!keep)
        return 0;
    gpu_bind(z->g);
    CUstream s = z->fin.stream;
    CUresult r = cu.MemcpyDtoHAsync(host, z->out[z->cur] + (z->last_bytes - keep), keep, s);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(s);
    if (r != CUDA_SUCCESS)
        return io_fail(&z->st, GPU_ERR_DRIVER, "copying decoded bytes from the device failed: %s",
                       cu_result_text(r));
    return 0;
}

/* Where the member goes on. */
const gzstream_point *gzstream_where(gzstream *z)
{
    if (!z->stopped) /* after the last batch */
        gzstream_stop(z);
    return &z->pt;
}

/* Ends a pipe's reads ahead (see gzstream.h). */
void gzstream_end(gzstream *z)
{
    if (z->spool)
        gzstream_ahead_drop(z);
}

/* What the member's batches took (see gzstream.h). */
void gzstream_counts(const gzstream *z, gzstream_stats *st)
{
    st->batches = z->batches;
    st->rounds = z->rounds;
    st->read_ahead = z->ahead_used;
    st->ahead_wait = z->ahead_wait;
}

/* The last failure. */
const io_status *gzstream_status(const gzstream *z)
{
    return &z->st;
}

/* Frees everything. */
void gzstream_close(gzstream *z)
{
    if (!z)
        return;
    gpu_bind(z->g);
    gzstream_ahead_drop(z);
    for (int k = 0; k < GZSTREAM_SETS; k++) {
        for (size_t i = 0; i < z->pinned[k]; i++)
            cu.MemHostUnregister(z->host[k] + i * z->piece);
        gpu_queue_close(&z->q[k]);
    }
    gpu_queue_close(&z->fin);
    gzstream_free_buffers(z);
    free(z);
}
