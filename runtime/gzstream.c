/* gzstream.c - a gzip member inflated on one device in batches (see
 * gzstream.h). */
#include "gzstream.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/clock.h"
#include "io/pread.h"

#define GZSTREAM_BATCH_MAX ((size_t)384 << 20) /* compressed bytes per batch at most */
#define GZSTREAM_BATCH_MIN ((size_t)4 << 20)   /* a batch declined this small goes to the host */
/* A member's first batch at most: read and copied in a few milliseconds, so
 * that the device starts decoding soon, while the next batch is read. */
#define GZSTREAM_FIRST ((size_t)96 << 20)
#define GZSTREAM_SEG ((size_t)128 << 10)       /* compressed bytes per segment */
#define GZSTREAM_ROOM 3 /* symbols of room per compressed byte of a segment, to start with */
/* A batch that is not the stream's last ends at the first block boundary
 * at or past this many bytes before the end of its input, where the next
 * batch's search for its first block begins: that boundary lies within
 * this distance in any stream seen (a deflate block's compressed size);
 * where it does not, the next batch is read again from where this one
 * ended. */
#define GZSTREAM_MARGIN ((size_t)4 << 20)

struct gzstream {
    gpu *g;
    gpu_queue q[2];       /* q[k]: the copy and first round of dev.set[k] (dev.cur: the batch
                             being inflated; the other, the next, queued while it is finished) */
    gpu_queue fin;        /* the rest of a batch's work, and the copies of decoded bytes */
    gzs_dev dev;
    int fd;
    uint64_t file_size;
    uint64_t pos;         /* file byte where the next batch begins */
    unsigned bit;         /* bits of it already decoded */
    size_t cap;           /* compressed bytes the buffers hold */
    size_t batch;         /* compressed bytes per batch now */
    size_t first;         /* the member's first batch at most (0: batch) */
    uint8_t *host[2];     /* pinned: dev.set[k]'s compressed bytes, then zeroed padding */
    int own_host[2];      /* host[i] is gzstream's own (else the caller's) */
    int pin_host1;        /* host[1] is the caller's, to be pinned by gzstream */
    int pinned_host1;     /* gzstream pinned it */
    /* the next batch, read, copied to the device's spare set and its first
       round queued on a thread of its own while one is inflated */
    pthread_t ahead_thread;
    int ahead_running;    /* ahead_thread is to be joined */
    int ahead_ok;         /* after the join: its first round is queued in the spare set */
    uint64_t ahead_pos;   /* the file offset of its first byte */
    size_t ahead_len;
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
    z->cap = z->batch = cap;
    if ((rc = gzs_open(&z->dev, z->g, cap, GZSTREAM_SEG,
                       (uint32_t)(GZSTREAM_ROOM * GZSTREAM_SEG), 2)) < 0)
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

/* Waits for the read ahead, if one runs; nonzero when it succeeded. */
static int gzstream_ahead_join(gzstream *z)
{
    if (z->ahead_running) {
        double t = io_seconds();
        pthread_join(z->ahead_thread, NULL);
        z->ahead_wait += io_seconds() - t;
        z->ahead_running = 0;
    }
    return z->ahead_ok;
}

/* Frees the buffers gzstream_buffers made. */
static void gzstream_free_buffers(gzstream *z)
{
    gzstream_ahead_join(z);
    z->ahead_ok = 0;
    gzs_close(&z->dev);
    for (int i = 0; i < 2; i++) {
        gpu_mem_free(z->g, z->out[i]);
        z->out[i] = 0;
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
int gzstream_open(gzstream **out, gpu *g, size_t keep_max, void *const staging[2],
                  size_t staging_bytes)
{
    *out = NULL;
    gzstream *z = calloc(1, sizeof *z);
    if (!z)
        return GPU_ERR_OUT_OF_MEMORY;
    z->g = g;
    z->keep_max = keep_max;
    for (int i = 0; i < 2; i++) {
        z->host[i] = staging[i];
        z->own_host[i] = staging[i] == NULL; /* host[1]: made by the first read ahead */
    }
    z->pin_host1 = staging[1] != NULL;
    int rc = gpu_bind(g);
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = gpu_queue_open(g, &z->q[i]);
    if (rc == 0)
        rc = gpu_queue_open(g, &z->fin);
    size_t cap = GZSTREAM_BATCH_MAX;
    if ((staging[0] || staging[1]) && staging_bytes - IF_IN_PAD < cap)
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

/* Starts a member (see gzstream.h). */
void gzstream_begin(gzstream *z, int fd, uint64_t data_off, uint64_t file_size)
{
    gzstream_ahead_join(z);
    z->ahead_ok = 0;
    z->fd = fd;
    z->file_size = file_size;
    z->pos = data_off;
    z->bit = 0;
    z->batch = z->cap;
    z->first = GZSTREAM_FIRST;
    z->last_bytes = 0;
    z->stopped = 0;
    z->batches = z->rounds = z->ahead_used = 0;
    z->ahead_wait = 0;
    memset(&z->pt, 0, offsetof(gzstream_point, window));
    z->pt.crc = (uint32_t)crc32(0, Z_NULL, 0);
}

/* Starts where another decoder paused (see gzstream.h). */
void gzstream_begin_at(gzstream *z, int fd, uint64_t file_size, uint64_t bit,
                       const uint8_t *window, size_t wlen, uint32_t crc, uint64_t len)
{
    gzstream_begin(z, fd, bit / 8, file_size);
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
        return io_fail(&z->st, GPU_ERR_DRIVER, "%zu bytes to carry over exceed the batch's room",
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
static void gzstream_account(gzstream *z, const gzs_result *r)
{
    z->pt.crc = (uint32_t)crc32_combine(z->pt.crc, r->crc, (z_off_t)r->nout);
    z->pt.len += r->nout;
    z->pt.wlen = z->pt.len < IFS_WINDOW ? (uint32_t)z->pt.len : IFS_WINDOW;
    memcpy(z->pt.window, z->win, IFS_WINDOW);
}

/* Where the plan of the batch of len bytes at file offset base stops. */
static uint64_t gzstream_batch_stop(const gzstream *z, uint64_t base, size_t len)
{
    return sp_batch_stop(base, len, z->file_size, GZSTREAM_MARGIN);
}

/* The read ahead's thread: the bytes into the spare set's host buffer
 * (made pinned the first time), then onto the device's spare set, and its
 * first round queued (its first block searched for from its first byte).
 * A failure only leaves ahead_ok 0: the batch is then read as the first
 * one was, and a lasting error is reported there. */
static void *gzstream_ahead_main(void *arg)
{
    gzstream *z = arg;
    int to = z->dev.cur ^ 1;
    CUstream s = z->q[to].stream;
    /* the driver directly: a failure here must not replace the text of one
       on the inflating thread; a batch read ahead and not taken may still
       be decoding into the spare set */
    if (gpu_bind(z->g) < 0 || cu.StreamSynchronize(s) != CUDA_SUCCESS)
        return NULL;
    if (!z->host[to] && cu.MemHostAlloc((void **)&z->host[to], z->cap + IF_IN_PAD,
                                        CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
        z->host[to] = NULL;
        return NULL;
    }
    if (z->pin_host1 && !z->pinned_host1) {
        if (cu.MemHostRegister(z->host[1], z->cap + IF_IN_PAD, CU_MEMHOSTREGISTER_PORTABLE) !=
            CUDA_SUCCESS)
            return NULL;
        z->pinned_host1 = 1;
    }
    if (io_pread(z->fd, z->host[to], z->ahead_len, z->ahead_pos) != (ssize_t)z->ahead_len)
        return NULL;
    memset(z->host[to] + z->ahead_len, 0, IF_IN_PAD);
    if (gzs_upload_spare(&z->dev, s, z->host[to], z->ahead_len) == 0 &&
        gzs_batch_begin(&z->dev, s, 1, z->ahead_len, 0, 0,
                        gzstream_batch_stop(z, z->ahead_pos, z->ahead_len)) == 0)
        z->ahead_ok = 1;
    return NULL;
}

/* Starts reading the batch whose search begins at file offset `from`
 * while the one before it is inflated. */
static void gzstream_ahead_start(gzstream *z, uint64_t from)
{
    z->ahead_pos = from;
    uint64_t left = z->file_size - z->ahead_pos;
    z->ahead_len = left < z->cap ? (size_t)left : z->cap;
    z->ahead_ok = 0;
    z->ahead_running = pthread_create(&z->ahead_thread, NULL, gzstream_ahead_main, z) == 0;
}

/* Takes the bytes read ahead as the next batch's where they hold its start
 * (then *base and *len say where they lie in the file); else 0. */
static int gzstream_ahead_take(gzstream *z, uint64_t *base, size_t *len)
{
    if (!gzstream_ahead_join(z))
        return 0;
    z->ahead_ok = 0;
    if (z->batch != z->cap || z->ahead_pos > z->pos || z->pos >= z->ahead_pos + z->ahead_len)
        return 0;
    gzs_swap(&z->dev);
    z->ahead_used++;
    *base = z->ahead_pos;
    *len = z->ahead_len;
    return 1;
}

/* Waits for the work queued on s: 0, or a failed CU_TRY's result. */
static int gzstream_wait(CUstream s)
{
    CU_TRY(cu.StreamSynchronize(s));
    return 0;
}

/* Inflates the next batch (see gzstream.h). */
int gzstream_next(gzstream *z, size_t keep, CUdeviceptr *data, size_t *bytes)
{
    if (z->stopped)
        return 0;
    if (keep > z->keep_max || keep > z->last_bytes) {
        return io_fail(&z->st, GPU_ERR_DRIVER, "%zu bytes to carry over exceed the batch's room",
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
        int ahead = gzstream_ahead_take(z, &base, &len);
        uint8_t *in = z->host[z->dev.cur];
        CUstream s = z->q[z->dev.cur].stream;
        if (!ahead) {
            uint64_t left = z->file_size > z->pos ? z->file_size - z->pos : 0;
            len = left < z->batch ? (size_t)left : z->batch;
            if (z->first && len > z->first)
                len = z->first;
            if (len == 0)
                return gzstream_stop(z); /* cut short: the host says so in its words */
            ssize_t got = io_pread(z->fd, in, len, z->pos);
            if (got != (ssize_t)len)
                return gzstream_stop(z); /* a read error or a file cut short: likewise */
            memset(in + len, 0, IF_IN_PAD);
        }
        int last = base + len == z->file_size;
        uint64_t start = (z->pos - base) * 8 + z->bit, stop = gzstream_batch_stop(z, base, len);
        gzs_result r;
        rc = 0;
        if (!ahead && (rc = gzs_upload(&z->dev, s, in, len)) == 0)
            rc = gzs_batch_begin(&z->dev, s, 0, len, start, 1, stop);
        if (rc == 0) {
            /* after the first round is queued: the first read ahead pins
               its buffer, which holds the driver's other calls up */
            if (stop != IFS_NONE)
                gzstream_ahead_start(z, base + stop / 8);
            /* the first round on the set's queue, the rest on fin; a batch
               read ahead searched for its first block: it must begin where
               this stream is */
            rc = gzstream_wait(s);
            if (rc == 0)
                rc = gzs_batch_end(&z->dev, z->fin.stream, in, len, last,
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
            /* declined, or no whole block in it: a smaller batch first (less output than the
               room), then a larger one (a block longer than the batch), then the host */
            if (rc == 1 && len > GZSTREAM_BATCH_MIN) {
                z->batch = len / 2;
                continue;
            }
            if (rc == 0 && z->batch < z->cap && !last) {
                z->batch = z->batch * 2 < z->cap ? z->batch * 2 : z->cap;
                continue;
            }
            return gzstream_stop(z);
        }
        gzstream_account(z, &r);
        z->batches++;
        z->pos = end / 8;
        z->bit = (unsigned)(end % 8);
        if (r.final) {
            z->pt.bit = end;
            z->pt.final = 1;
            z->stopped = 1;
        }
        z->batch = z->cap;
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
        return io_fail(&z->st, GPU_ERR_DRIVER, "%zu bytes to carry over exceed the batch", keep);
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
    gzstream_ahead_join(z);
    if (z->pinned_host1)
        cu.MemHostUnregister(z->host[1]);
    for (int i = 0; i < 2; i++)
        gpu_queue_close(&z->q[i]);
    gpu_queue_close(&z->fin);
    gzstream_free_buffers(z);
    free(z);
}
