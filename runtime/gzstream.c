/* gzstream.c - a gzip member inflated on one device in batches (see
 * gzstream.h). */
#include "gzstream.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/pread.h"

#define GZSTREAM_BATCH_MAX ((size_t)384 << 20) /* compressed bytes per batch at most */
#define GZSTREAM_BATCH_MIN ((size_t)4 << 20)   /* a batch declined this small goes to the host */
#define GZSTREAM_SEG ((size_t)128 << 10)       /* compressed bytes per segment */
#define GZSTREAM_ROOM 3 /* symbols of room per compressed byte of a segment, to start with */

struct gzstream {
    gpu *g;
    gpu_queue q;
    gzs_dev dev;
    int fd;
    uint64_t file_size;
    uint64_t pos;         /* file byte where the next batch begins */
    unsigned bit;         /* bits of it already decoded */
    size_t cap;           /* compressed bytes the buffers hold */
    size_t batch;         /* compressed bytes per batch now */
    uint8_t *host;        /* pinned: a batch's compressed bytes, then zeroed padding */
    int own_host;         /* host is gzstream's own (else the caller's) */
    uint8_t *win;         /* pinned: the window after a batch */
    CUdeviceptr out[2];   /* decoded bytes: the last batch's, and the next one's */
    size_t out_cap, keep_max;
    int cur;              /* out[cur] holds the last batch */
    size_t last_bytes;    /* bytes of it */
    int stopped;          /* the device goes no further: pt says where */
    gzstream_point pt;
    unsigned long long batches, rounds;
    char err[512];
};

/* Makes the buffers for batches of cap compressed bytes (the host's
 * unless the caller gave them); 0 or negative. */
static int gzstream_buffers(gzstream *z, size_t cap)
{
    int rc;
    z->cap = z->batch = cap;
    if ((rc = gzs_open(&z->dev, z->g, cap, GZSTREAM_SEG,
                       (uint32_t)(GZSTREAM_ROOM * GZSTREAM_SEG))) < 0)
        return rc;
    /* every symbol is one decoded byte: the pool bounds a batch's output */
    z->out_cap = (size_t)z->dev.sym_cap;
    for (int i = 0; i < 2; i++)
        if ((rc = gpu_mem_alloc(z->g, &z->out[i], z->out_cap + z->keep_max,
                                "a batch's decoded bytes")) < 0)
            return rc;
    if ((z->own_host && !(z->host = gpu_host_alloc(z->g, cap + IF_IN_PAD))) ||
        !(z->win = gpu_host_alloc(z->g, IFS_WINDOW)))
        return GPU_ERR_OUT_OF_MEMORY;
    return 0;
}

/* Frees the buffers gzstream_buffers made. */
static void gzstream_free_buffers(gzstream *z)
{
    gzs_close(&z->dev);
    for (int i = 0; i < 2; i++) {
        gpu_mem_free(z->g, z->out[i]);
        z->out[i] = 0;
    }
    if (z->own_host) {
        gpu_host_free(z->g, z->host);
        z->host = NULL;
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
int gzstream_open(gzstream **out, gpu *g, size_t keep_max, void *staging, size_t staging_bytes)
{
    *out = NULL;
    gzstream *z = calloc(1, sizeof *z);
    if (!z)
        return GPU_ERR_OUT_OF_MEMORY;
    z->g = g;
    z->keep_max = keep_max;
    z->host = staging;
    z->own_host = staging == NULL;
    int rc = gpu_bind(g);
    if (rc == 0)
        rc = gpu_queue_open(g, &z->q);
    size_t cap = GZSTREAM_BATCH_MAX;
    if (staging && staging_bytes - IF_IN_PAD < cap)
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
    z->fd = fd;
    z->file_size = file_size;
    z->pos = data_off;
    z->bit = 0;
    z->batch = z->cap;
    z->last_bytes = 0;
    z->stopped = 0;
    z->batches = z->rounds = 0;
    memset(&z->pt, 0, offsetof(gzstream_point, window));
    z->pt.crc = (uint32_t)crc32(0, Z_NULL, 0);
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

/* Inflates the next batch (see gzstream.h). */
int gzstream_next(gzstream *z, size_t keep, CUdeviceptr *data, size_t *bytes)
{
    if (z->stopped)
        return 0;
    if (keep > z->keep_max || keep > z->last_bytes) {
        snprintf(z->err, sizeof z->err, "%zu bytes to carry over exceed the batch's room", keep);
        return GPU_ERR_DRIVER;
    }
    int rc = gpu_bind(z->g);
    if (rc < 0)
        return rc;
    int nxt = z->cur ^ 1;
    CUstream s = z->q.stream;
    if (keep) {
        CUresult r = cu.MemcpyDtoDAsync(z->out[nxt], z->out[z->cur] + (z->last_bytes - keep), keep,
                                        s);
        if (r != CUDA_SUCCESS) {
            snprintf(z->err, sizeof z->err, "copying decoded bytes on the device failed: %s",
                     cu_result_text(r));
            return GPU_ERR_DRIVER;
        }
    }
    for (;;) {
        uint64_t left = z->file_size > z->pos ? z->file_size - z->pos : 0;
        size_t len = left < z->batch ? (size_t)left : z->batch;
        if (len == 0)
            return gzstream_stop(z); /* cut short: the host says so in its words */
        ssize_t got = io_pread(z->fd, z->host, len, z->pos);
        if (got != (ssize_t)len)
            return gzstream_stop(z); /* a read error or a file cut short: likewise */
        memset(z->host + len, 0, IF_IN_PAD);
        int last = z->pos + len == z->file_size;
        gzs_result r;
        if ((rc = gzs_upload(&z->dev, s, z->host, len)) == 0)
            rc = gzs_batch(&z->dev, s, z->host, len, z->bit, last, z->pt.window, z->pt.wlen,
                           z->out[nxt] + keep, z->out_cap, z->win, &r);
        if (rc < 0) {
            snprintf(z->err, sizeof z->err, "%s", gpu_error_text(z->g));
            return rc;
        }
        z->rounds += (unsigned long long)z->dev.rounds;
        uint64_t end = rc == 0 ? z->pos * 8 + r.end : 0;
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
        snprintf(z->err, sizeof z->err, "%zu bytes to carry over exceed the batch", keep);
        return GPU_ERR_DRIVER;
    }
    if (!keep)
        return 0;
    gpu_bind(z->g);
    CUresult r = cu.MemcpyDtoHAsync(host, z->out[z->cur] + (z->last_bytes - keep), keep,
                                    z->q.stream);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(z->q.stream);
    if (r != CUDA_SUCCESS) {
        snprintf(z->err, sizeof z->err, "copying decoded bytes from the device failed: %s",
                 cu_result_text(r));
        return GPU_ERR_DRIVER;
    }
    return 0;
}

/* Where the member goes on. */
const gzstream_point *gzstream_where(gzstream *z)
{
    if (!z->stopped) /* after the last batch */
        gzstream_stop(z);
    return &z->pt;
}

/* Batches and rounds so far. */
void gzstream_counts(const gzstream *z, unsigned long long *batches, unsigned long long *rounds)
{
    *batches = z->batches;
    *rounds = z->rounds;
}

/* The last failure's text. */
const char *gzstream_error(const gzstream *z)
{
    return z->err;
}

/* Frees everything. */
void gzstream_close(gzstream *z)
{
    if (!z)
        return;
    gpu_bind(z->g);
    gpu_queue_close(&z->q);
    gzstream_free_buffers(z);
    free(z);
}
