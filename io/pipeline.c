/* pipeline.c - reader thread and buffer ring. */
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_FREE, SLOT_FILLED, SLOT_OUT };

struct pl_ring {
    io_reader *r;
    void *const *bufs;
    int nslots;
    size_t chunk_bytes;
    uint64_t limit;
    unsigned char *prefix;
    size_t prefix_len;

    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *state;       /* SLOT_* per buffer */
    size_t *fill;     /* bytes in each filled buffer */
    uint64_t *offset; /* stream offset of each filled buffer */
    uint64_t *raw_end; /* input bytes consumed through each filled buffer */
    int next_fill;    /* slot the reader fills next (ring order) */
    int next_out;     /* slot the consumer takes next */
    int oldest;       /* oldest slot handed out and not released */
    int outstanding;  /* slots handed out and not released */
    int done;         /* reader finished: no more chunks after the filled ones */
    int stop;         /* consumer asked the reader to stop */
    int err;          /* reader error, reported after the filled chunks */
    char errmsg[512];
    uint64_t handed;
};

/* Reads exactly n bytes unless the data ends; returns count or negative error. */
static long long pl_read_full(pl_ring *p, unsigned char *dst, size_t n)
{
    ssize_t got = io_reader_read(p->r, dst, n);
    if (got < 0) {
        snprintf(p->errmsg, sizeof p->errmsg, "%s", io_reader_error(p->r));
        return got;
    }
    return got;
}

/* Reader thread: fills buffers in ring order until the data ends. */
static void *pl_reader_main(void *arg)
{
    pl_ring *p = arg;
    uint64_t offset = 0;
    int err = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int slot = p->next_fill;
        while (!p->stop && p->state[slot] != SLOT_FREE)
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;

        unsigned char *dst = p->bufs[slot];
        size_t want = p->chunk_bytes, have = 0;
        if (p->limit != UINT64_MAX && p->limit - offset < want)
            want = (size_t)(p->limit - offset);
        if (p->prefix_len) {
            size_t n = p->prefix_len < want ? p->prefix_len : want;
            memcpy(dst, p->prefix, n);
            memmove(p->prefix, p->prefix + n, p->prefix_len - n);
            p->prefix_len -= n;
            have = n;
        }
        long long got = want > have ? pl_read_full(p, dst + have, want - have) : 0;
        if (got < 0) {
            err = (int)got;
            break;
        }
        have += (size_t)got;
        int end = have < want || (p->limit != UINT64_MAX && offset + have == p->limit);
        if (p->limit != UINT64_MAX && have < want) {
            err = IO_ERR_FORMAT;
            snprintf(p->errmsg, sizeof p->errmsg,
                     "truncated: expected %llu bytes of data, the input has %llu",
                     (unsigned long long)p->limit, (unsigned long long)(offset + have));
            break;
        }
        if (end && p->limit != UINT64_MAX) {
            unsigned char extra;
            long long more = pl_read_full(p, &extra, 1);
            if (more < 0) {
                err = (int)more;
                break;
            }
            if (more > 0) {
                err = IO_ERR_FORMAT;
                snprintf(p->errmsg, sizeof p->errmsg,
                         "the input holds more than the expected %llu bytes of data",
                         (unsigned long long)p->limit);
                break;
            }
        }
        if (have > 0) {
            pthread_mutex_lock(&p->mu);
            p->fill[slot] = have;
            p->offset[slot] = offset;
            p->raw_end[slot] = io_reader_raw_offset(p->r);
            p->state[slot] = SLOT_FILLED;
            p->next_fill = (slot + 1) % p->nslots;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
            offset += have;
        }
        if (end)
            break;
    }
    pthread_mutex_lock(&p->mu);
    p->err = err;
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Sets up the ring and starts the reader. */
int pl_open(pl_ring **out, io_reader *r, void *const *bufs, int nslots, size_t chunk_bytes,
            const void *prefix, size_t prefix_len, uint64_t limit)
{
    *out = NULL;
    pl_ring *p = calloc(1, sizeof *p);
    if (!p)
        return IO_ERR_NOMEM;
    p->r = r;
    p->bufs = bufs;
    p->nslots = nslots;
    p->chunk_bytes = chunk_bytes;
    p->limit = limit;
    p->state = calloc((size_t)nslots, sizeof *p->state);
    p->fill = calloc((size_t)nslots, sizeof *p->fill);
    p->offset = calloc((size_t)nslots, sizeof *p->offset);
    p->raw_end = calloc((size_t)nslots, sizeof *p->raw_end);
    p->prefix = prefix_len ? malloc(prefix_len) : NULL;
    if (!p->state || !p->fill || !p->offset || !p->raw_end || (prefix_len && !p->prefix))
        goto out_free;
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
    free(p->prefix);
    free(p->raw_end);
    free(p->offset);
    free(p->fill);
    free(p->state);
    free(p);
    return IO_ERR_NOMEM;
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
        c->data = p->bufs[slot];
        c->bytes = p->fill[slot];
        c->offset = p->offset[slot];
        c->raw_end = p->raw_end[slot];
        p->next_out = (slot + 1) % p->nslots;
        if (p->outstanding++ == 0)
            p->oldest = slot;
        p->handed += c->bytes;
        rc = 1;
    } else {
        rc = p->err;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Returns a buffer to the reader. */
void pl_release(pl_ring *p, int slot)
{
    pthread_mutex_lock(&p->mu);
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

/* The reader's error text. */
const char *pl_error(const pl_ring *p)
{
    return p->errmsg;
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
    free(p->prefix);
    free(p->raw_end);
    free(p->offset);
    free(p->fill);
    free(p->state);
    free(p);
}
