/* pipeline.c - reader thread and buffer ring. */
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#include "io/gzip/bgzf.h"
#include "crc.h"
#include "io/gzip/inflate.h"
#include "par.h"
#include "pread.h"

enum { SLOT_FREE, SLOT_FILLED, SLOT_OUT };

/* How a pl_open_gz ring reads: the rest of a member the reader is inside
 * (decoded by the host), whole BGZF members read from the file, or, once
 * the input holds something other than whole BGZF blocks, decoded by the
 * host to the end. */
enum { GZ_HEAD, GZ_MEMBERS, GZ_PLAIN };

#define GZ_SLACK ((size_t)256 << 10) /* buffer bytes beyond chunk_bytes */
#define GZ_MEMBER_AVG 4096           /* table room: one member per this many data bytes */
#define GZ_MIN_READ ((size_t)256 << 10) /* smallest read of member bytes */

struct pl_ring {
    io_reader *r;
    void *const *bufs; /* NULL: chunks are views of the file (pl_open_view) */
    io_view *views;    /* pl_open_view: per buffer, the view it holds */
    int nbufs;        /* buffers, shared by the slots */
    int nslots;       /* chunks that may be out at once (at least nbufs) */
    size_t chunk_bytes;
    uint64_t limit;
    size_t swap;      /* bytes per unit to reverse in every chunk (big-endian data), or 0 */
    unsigned char *prefix;
    size_t prefix_len;

    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *state;       /* SLOT_* per slot */
    int *slot_buf;    /* the buffer each slot holds, or -1 */
    char *buf_busy;   /* per buffer: held by a slot */
    int held;         /* buffers held by chunks out with the consumer */
    char *returning;  /* per slot: its buffer comes back by itself (pl_buffer_returning) */
    int nreturning;   /* buffers held that are returning */
    size_t *fill;     /* bytes in each filled slot */
    uint64_t *offset; /* stream offset of each filled slot */
    uint64_t *raw_end; /* input bytes consumed through each filled slot */
    int next_fill;    /* slot the reader fills next (ring order) */
    int next_out;     /* slot the consumer takes next */
    int oldest;       /* oldest slot handed out and not released */
    int outstanding;  /* slots handed out and not released */
    int done;         /* reader finished: no more chunks after the filled ones */
    int stop;         /* consumer asked the reader to stop */
    int err;          /* reader error, reported after the filled chunks */
    io_status why;    /* the reader's failure as it happened (pl_status) */
    uint64_t handed;
    size_t pause_grain;   /* pl_open_pausable: the data after the last whole grain are held */
    unsigned char *tail_held; /* those bytes when the reader paused (pause_grain bytes of room) */
    size_t tail_len;
    int paused;           /* the reader paused: the data end there for now */

    /* pl_open_gz only */
    int gz;               /* chunks of whole members where possible */
    int gz_mode;          /* GZ_HEAD, GZ_MEMBERS or GZ_PLAIN */
    pl_gz_chunk *gzc;     /* per slot */
    size_t max_members;   /* member table entries per buffer */
    if_member *tab_copy;  /* per slot, max_members each: the table once the buffer is given back */
    uint64_t data_base;   /* reader position (io_reader_tell) of data byte 0 */
    uint64_t first;       /* data offset of the first byte read (pl_open_at) */
    int fd;               /* the file, in GZ_MEMBERS */
    uint64_t next_file;   /* file offset of the first member not wholly used yet */
    uint64_t next_data;   /* its decoded position (data bytes) */
    uint64_t raw_seen, data_seen; /* member bytes and their output so far (the ratio) */
};

/* Reads exactly n bytes unless the data ends; returns count or negative error. */
static long long pl_read_full(pl_ring *p, unsigned char *dst, size_t n)
{
    ssize_t got = io_reader_read(p->r, dst, n);
    if (got < 0)
        io_fail(&p->why, (int)got, "%s", io_reader_error(p->r));
    return got;
}

/* Moves up to want bytes of the prefix (bytes read before the ring
 * started) to dst; returns how many. */
static size_t pl_take_prefix(pl_ring *p, unsigned char *dst, size_t want)
{
    size_t n = p->prefix_len < want ? p->prefix_len : want;
    if (n == 0)
        return 0; /* there may be no prefix buffer at all */
    memcpy(dst, p->prefix, n);
    memmove(p->prefix, p->prefix + n, p->prefix_len - n);
    p->prefix_len -= n;
    return n;
}

/* Fills dst with up to want decoded bytes: the prefix first, then the
 * reader's. Returns the count or a negative io_error. */
static long long pl_fill_plain(pl_ring *p, unsigned char *dst, size_t want)
{
    size_t have = pl_take_prefix(p, dst, want);
    long long got = want > have ? pl_read_full(p, dst + have, want - have) : 0;
    return got < 0 ? got : (long long)have + got;
}

/* Maps the next chunk of up to want bytes into the view of buffer b;
 * returns the count or a negative io_error. */
static long long pl_fill_view(pl_ring *p, int b, size_t want)
{
    ssize_t got = io_reader_view(p->r, want, &p->views[b]);
    if (got < 0)
        io_fail(&p->why, (int)got, "%s", io_reader_error(p->r));
    return got;
}

/* Reverses the bytes of each whole unit of `unit` bytes (2, 4 or 8) in
 * buf[0..n): big-endian elements to the little-endian ones every consumer
 * reads. A partial unit at the end (data that ends mid-element, an error
 * the consumer reports) is left as it is. */
static void pl_swap_units(unsigned char *buf, size_t n, size_t unit)
{
    size_t whole = n - n % unit;
    for (size_t i = 0; i < whole; i += unit) {
        if (unit == 2) {
            uint16_t v;
            memcpy(&v, buf + i, 2);
            v = __builtin_bswap16(v);
            memcpy(buf + i, &v, 2);
        } else if (unit == 4) {
            uint32_t v;
            memcpy(&v, buf + i, 4);
            v = __builtin_bswap32(v);
            memcpy(buf + i, &v, 4);
        } else {
            uint64_t v;
            memcpy(&v, buf + i, 8);
            v = __builtin_bswap64(v);
            memcpy(buf + i, &v, 8);
        }
    }
}

/* Little-endian 32-bit value at q. */
static uint32_t pl_le32(const unsigned char *q)
{
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

/* The member table of a pl_open_gz buffer: its last entries. */
static if_member *pl_gz_table(const pl_ring *p, unsigned char *buf)
{
    return (if_member *)(buf + pl_gz_buffer_bytes(p->chunk_bytes) -
                         p->max_members * sizeof(if_member));
}

/* Adds a run of host-decoded bytes to a chunk. */
static void pl_gz_add_run(pl_gz_chunk *g, size_t in_off, size_t len, uint64_t out_off)
{
    if (len)
        g->runs[g->nruns++] = (pl_run){(uint32_t)in_off, (uint32_t)len, (uint32_t)out_off};
}

/* The whole BGZF members (read from the file from p->next_file on) that
 * cover data bytes [offset, offset + want) from decoded position `base` on,
 * into dst[ppos..] and the table; *dpos gets the end of the last member
 * taken, *ppos the buffer bytes used. Stops early, with *end_of_members
 * set, where the file holds no more whole BGZF blocks that fit (the end of
 * the file, another kind of data, or a full buffer or table). */
static int pl_gz_members(pl_ring *p, unsigned char *dst, size_t front, pl_gz_chunk *g,
                         if_member *tab, uint64_t base, uint64_t offset, size_t want,
                         size_t *ppos, uint64_t *dpos, int *end_of_members)
{
    uint64_t file = p->next_file, goal = offset + want;
    size_t start = *ppos, end = start;
    *dpos = p->next_data;
    *end_of_members = 0;
    while (*dpos < goal) {
        size_t total = bgzf_block_size(dst + *ppos, end - *ppos);
        if (total && total <= end - *ppos) {
            uint32_t isize = pl_le32(dst + *ppos + total - 4);
            uint64_t used_to = *dpos + isize < goal ? *dpos + isize : goal;
            /* a later run of host-decoded bytes must still fit after the members */
            if ((size_t)g->nmembers == p->max_members || isize > IF_MAX_OUT ||
                *ppos + total + (goal - used_to) > front)
                break;
            size_t head = bgzf_header_size(dst + *ppos);
            tab[g->nmembers++] = (if_member){file + (*ppos - start), (uint32_t)(*ppos + head),
                                             (uint32_t)(total - head - 8), (uint32_t)(*dpos - base),
                                             isize, pl_le32(dst + *ppos + total - 8), 0};
            *ppos += total;
            *dpos += isize;
            continue;
        }
        if (!total && end - *ppos >= 18)
            break; /* not a BGZF block */
        /* read on, about as much as the rest needs at the ratio seen so far */
        double ratio = p->data_seen ? (double)p->raw_seen / (double)p->data_seen : 1.0;
        size_t step = (size_t)((double)(goal - *dpos) * ratio * 1.02) + (64u << 10);
        if (step < GZ_MIN_READ)
            step = GZ_MIN_READ;
        if (step > front - end)
            step = front - end;
        if (step == 0)
            break;
        ssize_t k = io_pread(p->fd, dst + end, step, file + (end - start));
        if (k < 0)
            return io_fail(&p->why, IO_ERR_READ, "%s", strerror((int)-k));
        if (k == 0)
            break;
        end += (size_t)k;
    }
    *end_of_members = *dpos < goal;
    p->raw_seen += *ppos - start;
    p->data_seen += *dpos - p->next_data;
    /* the next chunk starts with the member that reaches past this one */
    int last = g->nmembers - 1;
    if (!*end_of_members && last >= 0 && *dpos > goal) {
        p->next_file = tab[last].file_off;
        p->next_data = *dpos - tab[last].isize;
    } else {
        p->next_file = file + (*ppos - start);
        p->next_data = *dpos;
    }
    return 0;
}

/* Fills a pl_open_gz buffer with the next chunk of want data bytes at
 * `offset`: host-decoded runs and whole members (pl_gz_chunk). Returns the
 * data bytes the chunk holds (fewer than want only at the end) or a
 * negative io_error. */
static long long pl_fill_gz(pl_ring *p, int slot, uint64_t offset, size_t want)
{
    unsigned char *dst = p->bufs[p->slot_buf[slot]];
    pl_gz_chunk *g = &p->gzc[slot];
    if_member *tab = pl_gz_table(p, dst);
    size_t front = (size_t)((unsigned char *)tab - dst), pos = 0;
    uint64_t base = offset, cover = offset;
    *g = (pl_gz_chunk){.members = tab, .fd = -1};
    if (p->gz_mode == GZ_HEAD) {
        /* the prefix and the rest of the member the reader is in */
        long long have = (long long)pl_take_prefix(p, dst, want);
        if ((size_t)have < want) {
            ssize_t k = io_reader_read_member_rest(p->r, dst + have, want - (size_t)have);
            if (k < 0)
                return io_fail(&p->why, (int)k, "%s", io_reader_error(p->r));
            have += k;
        }
        pl_gz_add_run(g, 0, (size_t)have, 0);
        pos = ((size_t)have + 15) & ~(size_t)15;
        cover = offset + (uint64_t)have;
        if ((size_t)have < want && !p->prefix_len) {
            if (io_reader_member_boundary(p->r, &p->fd, &p->next_file)) {
                p->gz_mode = GZ_MEMBERS;
                p->next_data = cover;
            } else {
                p->gz_mode = GZ_PLAIN;
            }
        }
    }
    if (p->gz_mode == GZ_MEMBERS && cover < offset + want) {
        if (!g->nruns)
            base = p->next_data; /* a member that began in the last chunk */
        g->skip = (uint32_t)(offset - base);
        g->fd = p->fd;
        uint64_t dpos;
        int ended;
        int rc = pl_gz_members(p, dst, front, g, tab, base, offset, want, &pos, &dpos, &ended);
        if (rc < 0)
            return rc;
        cover = dpos;
        if (ended) {
            /* the rest of the input through the host's reader */
            rc = io_reader_resume(p->r, p->next_file, p->data_base + dpos);
            if (rc < 0)
                return io_fail(&p->why, rc, "%s", io_reader_error(p->r));
            p->gz_mode = GZ_PLAIN;
        }
    }
    if (p->gz_mode == GZ_PLAIN && cover < offset + want) {
        long long k = pl_fill_plain(p, dst + pos, (size_t)(offset + want - cover));
        if (k < 0)
            return k;
        pl_gz_add_run(g, pos, (size_t)k, cover - base);
        pos += (size_t)k;
        cover += (uint64_t)k;
    }
    g->in_bytes = pos;
    g->skip = (uint32_t)(offset - base);
    g->span = (uint32_t)(cover - base);
    return (long long)((cover < offset + want ? cover : offset + want) - offset);
}

/* Before an error that ends a pl_open_gz chunk at data byte err_at (or
 * UINT64_MAX: after all its members), or at the end of the data when the
 * chunk's members hold no data to hand out: reads the members the chunk
 * holds through the host's reader, from the file, each as far as pl_open's
 * reader would have read it before meeting that error (through data byte
 * err_at), so that a bad member is the error reported, as pl_open reports
 * it. offset: the chunk's first data byte. Returns that error or 0. */
static int pl_gz_verify(pl_ring *p, int slot, uint64_t offset, uint64_t err_at)
{
    if (!p->gz)
        return 0;
    const pl_gz_chunk *g = &p->gzc[slot];
    uint64_t base = offset - g->skip;
    for (int i = 0; i < g->nmembers; i++) {
        uint64_t start = base + g->members[i].out_off;
        if (err_at != UINT64_MAX && start > err_at)
            break;
        int rc =
            io_gzip_member_error(g->fd, g->members[i].file_off,
                                 err_at == UINT64_MAX ? UINT64_MAX : err_at + 1 - start, &p->why);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* At the end of the data in GZ_MEMBERS: puts the reader where the members
 * end (the member holding the last data byte), so that it can check what
 * follows as it would have. */
static int pl_gz_rejoin(pl_ring *p, uint64_t end)
{
    if (!p->gz || p->gz_mode != GZ_MEMBERS)
        return 0;
    p->gz_mode = GZ_PLAIN;
    int rc = io_reader_resume(p->r, p->next_file, p->data_base + p->next_data);
    if (rc >= 0 && end > p->next_data) {
        int64_t k = io_reader_skip(p->r, end - p->next_data);
        rc = k < 0 ? (int)k : 0;
    }
    if (rc < 0)
        io_fail(&p->why, rc, "%s", io_reader_error(p->r));
    return rc;
}

/* A buffer no slot holds for slot, or -1 (with the lock held): buffer
 * slot % nbufs when it is free, so that with as many slots as buffers each
 * slot always fills its own. */
static int pl_find_buffer(const pl_ring *p, int slot)
{
    if (!p->buf_busy[slot % p->nbufs])
        return slot % p->nbufs;
    for (int b = 0; b < p->nbufs; b++)
        if (!p->buf_busy[b])
            return b;
    return -1;
}

/* Reader thread: fills slots in ring order, each in a free buffer, until
 * the data ends. */
/* Where the reader paused (io_reader_pause) after a short read of *have
 * bytes into dst at data offset `offset`: keeps the bytes after the last
 * whole grain in p->held and drops them from the chunk. 1 when paused. */
static int pl_hold_paused(pl_ring *p, const unsigned char *dst, size_t *have, uint64_t offset)
{
    uint64_t bit, len;
    const uint8_t *window;
    size_t wlen;
    uint32_t crc;
    if (!io_reader_pause_point(p->r, &bit, &window, &wlen, &crc, &len))
        return 0;
    size_t hold = (size_t)((offset + *have) % p->pause_grain);
    /* chunks are whole grains, so the partial one lies in this chunk */
    memcpy(p->tail_held, dst + *have - hold, hold);
    p->tail_len = hold;
    *have -= hold;
    p->paused = 1;
    return 1;
}

static void *pl_reader_main(void *arg)
{
    pl_ring *p = arg;
    uint64_t offset = p->first, err_at = UINT64_MAX; /* the data byte where err arose */
    int err = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int slot = p->next_fill, buf = -1;
        while (!p->stop && (p->state[slot] != SLOT_FREE || (buf = pl_find_buffer(p, slot)) < 0))
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        if (!stop) {
            p->buf_busy[buf] = 1;
            p->slot_buf[slot] = buf;
        }
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;

        unsigned char *dst = p->bufs ? p->bufs[buf] : NULL;
        size_t want = p->chunk_bytes;
        if (p->limit != UINT64_MAX && p->limit - offset < want)
            want = (size_t)(p->limit - offset);
        long long got = p->views ? pl_fill_view(p, buf, want)
                        : p->gz  ? pl_fill_gz(p, slot, offset, want)
                                 : pl_fill_plain(p, dst, want);
        if (got < 0) {
            err = (int)got;
            break;
        }
        size_t have = (size_t)got;
        if (p->swap)
            pl_swap_units(dst, have, p->swap);
        /* paused: the data end here for now, not cut short */
        int paused = p->pause_grain && have < want && pl_hold_paused(p, dst, &have, offset);
        if (have == 0 && (err = pl_gz_verify(p, slot, offset, UINT64_MAX)) < 0)
            break; /* members with no data (ISIZE 0) are not handed out */
        int end = paused || have < want || (p->limit != UINT64_MAX && offset + have == p->limit);
        if (p->limit != UINT64_MAX && have < want && !paused) {
            err = io_fail(&p->why, IO_ERR_FORMAT,
                          "truncated: expected %llu bytes of data, the input has %llu",
                          (unsigned long long)p->limit, (unsigned long long)(offset + have));
            break;
        }
        if (end && !paused && p->limit != UINT64_MAX) {
            unsigned char extra;
            long long more = pl_gz_rejoin(p, p->limit);
            if (more >= 0)
                more = pl_read_full(p, &extra, 1);
            err_at = p->limit; /* the host read through the byte past the data */
            if (more < 0) {
                err = (int)more;
                break;
            }
            if (more > 0) {
                err = io_fail_more_data(&p->why, p->limit);
                break;
            }
        }
        if (have > 0) {
            pthread_mutex_lock(&p->mu);
            p->fill[slot] = have;
            p->offset[slot] = offset;
            p->raw_end[slot] = p->gz && p->gz_mode == GZ_MEMBERS ? p->next_file
                                                                 : io_reader_raw_offset(p->r);
            p->state[slot] = SLOT_FILLED;
            p->next_fill = (slot + 1) % p->nslots;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
            offset += have;
        }
        if (end)
            break;
    }
    if (err) {
        /* a bad member of the chunk that met the error comes first */
        io_status why = p->why;
        int first = pl_gz_verify(p, p->next_fill, offset, err_at);
        if (first < 0)
            err = first;
        else
            p->why = why;
    }
    pthread_mutex_lock(&p->mu);
    p->err = err;
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Buffer bytes of a pl_open_gz ring: the chunk, room for a member on each
 * side and the reads' slack, and the member table. */
size_t pl_gz_buffer_bytes(size_t chunk_bytes)
{
    size_t front = (chunk_bytes + 63) / 64 * 64 + GZ_SLACK; /* the table stays aligned */
    return front + (chunk_bytes / GZ_MEMBER_AVG + 64) * sizeof(if_member);
}

/* A chunk's decoded span: its data and a member on each side. */
size_t pl_gz_span_bytes(size_t chunk_bytes)
{
    return chunk_bytes + 2 * (size_t)IF_MAX_OUT;
}

/* Frees a ring's arrays (the reader joined or never started). */
static void pl_free(pl_ring *p)
{
    for (int b = 0; p->views && b < p->nbufs; b++)
        io_view_unmap(&p->views[b]);
    free(p->views);
    free(p->tab_copy);
    free(p->tail_held);
    free(p->gzc);
    free(p->prefix);
    free(p->raw_end);
    free(p->offset);
    free(p->fill);
    free(p->buf_busy);
    free(p->returning);
    free(p->slot_buf);
    free(p->state);
    free(p);
}

/* Sets up the ring and starts the reader. */
static int pl_start(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
                    size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t first,
                    uint64_t limit, int gz, size_t swap, size_t pause_grain)
{
    *out = NULL;
    if (swap && (gz || (swap != 2 && swap != 4 && swap != 8) || chunk_bytes % swap))
        return IO_ERR_FORMAT; /* chunks must hold whole units, decoded on the host */
    if (pause_grain && (gz || !bufs || first || chunk_bytes % pause_grain))
        return IO_ERR_FORMAT; /* a paused chunk must end in its last grain */
    pl_ring *p = calloc(1, sizeof *p);
    if (!p)
        return IO_ERR_NOMEM;
    p->r = r;
    p->bufs = bufs;
    p->nbufs = nbufs;
    p->nslots = nslots < nbufs ? nbufs : nslots;
    p->chunk_bytes = chunk_bytes;
    p->first = first;
    p->limit = limit;
    p->swap = swap;
    p->pause_grain = pause_grain;
    if (pause_grain && !(p->tail_held = malloc(pause_grain)))
        goto out_free;
    if (gz) {
        p->gz = 1;
        p->gz_mode = GZ_HEAD;
        p->max_members = chunk_bytes / GZ_MEMBER_AVG + 64;
        p->data_base = io_reader_tell(r) - prefix_len;
        p->gzc = calloc((size_t)p->nslots, sizeof *p->gzc);
        /* a table copy per slot, for chunks whose buffer goes back early */
        p->tab_copy = p->nslots > nbufs
                          ? calloc((size_t)p->nslots * p->max_members, sizeof *p->tab_copy)
                          : NULL;
        if (!p->gzc || (p->nslots > nbufs && !p->tab_copy))
            goto out_free;
    }
    p->state = calloc((size_t)p->nslots, sizeof *p->state);
    p->slot_buf = malloc((size_t)p->nslots * sizeof *p->slot_buf);
    p->buf_busy = calloc((size_t)nbufs, sizeof *p->buf_busy);
    p->returning = calloc((size_t)p->nslots, sizeof *p->returning);
    p->fill = calloc((size_t)p->nslots, sizeof *p->fill);
    p->offset = calloc((size_t)p->nslots, sizeof *p->offset);
    p->raw_end = calloc((size_t)p->nslots, sizeof *p->raw_end);
    p->prefix = prefix_len ? malloc(prefix_len) : NULL;
    p->views = bufs ? NULL : calloc((size_t)nbufs, sizeof *p->views);
    if (!p->state || !p->slot_buf || !p->buf_busy || !p->returning || !p->fill || !p->offset ||
        !p->raw_end || (prefix_len && !p->prefix) || (!bufs && !p->views))
        goto out_free;
    for (int i = 0; i < p->nslots; i++)
        p->slot_buf[i] = -1;
    if (prefix_len)
        memcpy(p->prefix, prefix, prefix_len);
    p->prefix_len = prefix_len;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, pl_reader_main, p) != 0)
        goto out_destroy;
    p->started = 1;
    *out = p;
    return 0;
out_destroy:
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
out_free:
    pl_free(p);
    return IO_ERR_NOMEM;
}

/* Sets up the ring and starts the reader. */
int pl_open(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
            size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit,
            size_t swap)
{
    return pl_start(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, 0, limit, 0,
                    swap, 0);
}

/* pl_open that ends where the reader pauses (see pipeline.h). */
int pl_open_pausable(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
                     size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit,
                     size_t swap, size_t grain)
{
    return pl_start(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, 0, limit, 0,
                    swap, grain);
}

/* Whether the ring ended where its reader paused (see pipeline.h). */
int pl_paused(pl_ring *p, const void **held, size_t *held_len)
{
    pthread_mutex_lock(&p->mu);
    int paused = p->done && p->paused;
    pthread_mutex_unlock(&p->mu);
    *held = p->tail_held;
    *held_len = paused ? p->tail_len : 0;
    return paused;
}

/* pl_open for data that went on elsewhere up to offset `first`. */
int pl_open_at(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
               size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t first,
               uint64_t limit, size_t swap)
{
    return pl_start(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, first, limit, 0,
                    swap, 0);
}

/* pl_open with chunks that are views of the file (see pipeline.h). */
int pl_open_view(pl_ring **out, io_reader *r, int nslots, size_t chunk_bytes, size_t prefix_len,
                 uint64_t limit)
{
    *out = NULL;
    if (nslots < 2)
        return IO_ERR_FORMAT;
    int rc = io_reader_unread(r, prefix_len);
    if (rc < 0)
        return rc;
    return pl_start(out, r, NULL, nslots, nslots, chunk_bytes, NULL, 0, 0, limit, 0, 0, 0);
}

/* The same, for a consumer that inflates whole BGZF members itself. */
int pl_open_gz(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
               size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit)
{
    return pl_start(out, r, bufs, nbufs, nslots, chunk_bytes, prefix, prefix_len, 0, limit, 1, 0,
                    0);
}

/* Hands out the next filled buffer in ring order. */
int pl_next(pl_ring *p, pl_chunk *c)
{
    pthread_mutex_lock(&p->mu);
    int slot = p->next_out;
    while (p->state[slot] != SLOT_FILLED && !p->done)
        pthread_cond_wait(&p->cv, &p->mu);
    int rc;
    if (p->state[slot] == SLOT_FILLED) {
        p->state[slot] = SLOT_OUT;
        c->slot = slot;
        c->data = p->views ? (void *)p->views[p->slot_buf[slot]].data : p->bufs[p->slot_buf[slot]];
        c->bytes = p->fill[slot];
        c->offset = p->offset[slot];
        c->raw_end = p->raw_end[slot];
        c->gz = p->gz ? &p->gzc[slot] : NULL;
        p->next_out = (slot + 1) % p->nslots;
        if (p->outstanding++ == 0)
            p->oldest = slot;
        p->held++;
        p->handed += c->bytes;
        rc = 1;
    } else {
        rc = p->err;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Frees the buffer an out slot holds, if any (with the lock held). */
static void pl_drop_buffer(pl_ring *p, int slot)
{
    int b = p->slot_buf[slot];
    if (b < 0)
        return;
    if (p->views)
        io_view_unmap(&p->views[b]);
    p->buf_busy[b] = 0;
    p->slot_buf[slot] = -1;
    p->held--;
    if (p->returning[slot]) {
        p->returning[slot] = 0;
        p->nreturning--;
    }
}

/* Gives a chunk's buffer back before the chunk (see pipeline.h). */
void pl_release_buffer(pl_ring *p, int slot)
{
    pthread_mutex_lock(&p->mu);
    if (p->nslots > p->nbufs && p->slot_buf[slot] >= 0) {
        if (p->tab_copy) { /* the member table lives in the buffer */
            pl_gz_chunk *g = &p->gzc[slot];
            if_member *copy = p->tab_copy + (size_t)slot * p->max_members;
            memcpy(copy, g->members, (size_t)g->nmembers * sizeof *copy);
            g->members = copy;
        }
        pl_drop_buffer(p, slot);
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
}

/* Marks an out slot's buffer as coming back by itself (see pipeline.h). */
void pl_buffer_returning(pl_ring *p, int slot)
{
    pthread_mutex_lock(&p->mu);
    if (p->slot_buf[slot] >= 0 && !p->returning[slot]) {
        p->returning[slot] = 1;
        p->nreturning++;
    }
    pthread_mutex_unlock(&p->mu);
}

/* Returns a slot (and its buffer, if still held) to the reader. */
void pl_release(pl_ring *p, int slot)
{
    pthread_mutex_lock(&p->mu);
    pl_drop_buffer(p, slot);
    p->state[slot] = SLOT_FREE;
    p->outstanding--;
    for (int i = 0; p->outstanding > 0 && p->state[p->oldest] != SLOT_OUT && i < p->nslots; i++)
        p->oldest = (p->oldest + 1) % p->nslots;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Chunks out with the consumer (only the consumer changes this count). */
int pl_outstanding(const pl_ring *p)
{
    return p->outstanding;
}

/* Whether the consumer must give a chunk back before taking the next (see
 * pipeline.h); under the lock, since buffers also come back from other
 * threads (pl_release_buffer) and the reader changes the states. */
int pl_full(pl_ring *p)
{
    pthread_mutex_lock(&p->mu);
    int full = p->outstanding > 0 &&
               (p->outstanding >= p->nslots - 1 || p->held - p->nreturning >= p->nbufs - 1) &&
               p->state[p->next_out] != SLOT_FILLED;
    pthread_mutex_unlock(&p->mu);
    return full;
}

/* The oldest chunk out with the consumer. */
int pl_oldest(const pl_ring *p)
{
    return p->oldest;
}

/* Bytes handed out so far. */
uint64_t pl_bytes(const pl_ring *p)
{
    return p->handed;
}

/* The reader's failure as a value. */
const io_status *pl_status(const pl_ring *p)
{
    return &p->why;
}

/* Stops and joins the reader, then frees. */
void pl_close(pl_ring *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    pl_free(p);
}

/* The host reader's message for a refused member (see pipeline.h). */
void pl_gz_member_error(const pl_gz_chunk *c, int i, io_status *st)
{
    bgzf_member_error(c->fd, io_gzip_member_error, c->members[i].file_off, st);
}

/* One thread's share of a host decode: members [m0, m1). */
typedef struct {
    const pl_gz_chunk *g;
    const unsigned char *in;
    unsigned char *span;
    const atomic_int *stop; /* NULL, or set when the decode is to be given up */
    int m0, m1;
    int bad;     /* lowest member that failed, or -1 */
    int stopped; /* gave up before m1 */
} pl_decode_job;

/* Inflates member m into out with the host's decoder: exactly its deflate
 * data in, exactly isize bytes out, and its CRC-32 (what zlib and the
 * device's decoder accept). 0 or -1. */
static int pl_inflate_member(const unsigned char *in, const if_member *m, unsigned char *out)
{
    inflate_job d = {.in = in + m->in_off, .in_len = m->in_len, .stop_bit = UINT64_MAX,
                 .out_limit = SIZE_MAX, .out = out, .out_cap = m->isize};
    if (inflate_decode_bytes(&d) != INFLATE_END || (d.bit + 7) / 8 != m->in_len ||
        d.out_len != m->isize)
        return -1;
    return crc_update(0, out, m->isize) == m->crc ? 0 : -1;
}

/* Inflates and checks a range of members, stopping at the first bad one. */
static void *pl_decode_worker(void *arg)
{
    pl_decode_job *j = arg;
    j->bad = -1;
    for (int i = j->m0; i < j->m1 && j->bad < 0; i++) {
        if (j->stop && atomic_load_explicit(j->stop, memory_order_relaxed)) {
            j->stopped = 1;
            break;
        }
        if (pl_inflate_member(j->in, &j->g->members[i], j->span + j->g->members[i].out_off))
            j->bad = i;
    }
    return NULL;
}

/* Host decode of a compressed chunk (see pipeline.h). */
int pl_gz_decode(const pl_chunk *c, void *span, int threads, const atomic_int *stop,
                 const void **data, io_status *st)
{
    const pl_gz_chunk *g = c->gz;
    unsigned char *sp = span;
    for (int i = 0; i < g->nruns; i++)
        memcpy(sp + g->runs[i].out_off, (const char *)c->data + g->runs[i].in_off,
               g->runs[i].len);
    size_t nt = threads < 1 ? 1 : (size_t)threads;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    if (nt > (size_t)g->nmembers)
        nt = (size_t)g->nmembers;
    pl_decode_job jobs[PAR_MAX];
    for (size_t k = 0; k < nt; k++)
        jobs[k] = (pl_decode_job){g, c->data, sp, stop, (int)(g->nmembers * k / nt),
                                  (int)(g->nmembers * (k + 1) / nt), -1, 0};
    if (nt)
        par_run(pl_decode_worker, jobs, sizeof jobs[0], nt);
    for (size_t k = 0; k < nt; k++)
        if (jobs[k].stopped) /* a member before a bad one may be bad too: no verdict */
            return PL_DECODE_STOPPED;
    for (size_t k = 0; k < nt; k++)
        if (jobs[k].bad >= 0) { /* ranges are in member order: the first bad is the lowest */
            pl_gz_member_error(g, jobs[k].bad, st);
            return st->code = IO_ERR_CORRUPT;
        }
    *data = sp + g->skip;
    return 0;
}
