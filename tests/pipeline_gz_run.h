/* pipeline_gz_run.h - runs a pl_open_gz pipeline the way the device stage
 * would (its members inflated and CRC-checked on the host with the device's
 * decoder, ptx/inflate_math.h; a bad member reported with the host reader's
 * message for it) and a pl_open pipeline over the same file and options, so
 * that tests and the fuzz harness can compare what each hands out; each
 * chunk is also decoded by pl_gz_decode, which must agree. Both rings have
 * more slots than buffers and are consumed as the device stage consumes
 * them: chunks are decoded only once the ring is full, and every other one
 * is copied and its buffer given back first (pl_release_buffer), so its
 * member table must outlive its buffer, and a buffer still held must not
 * be filled again. Header only, for tests/unit/test_pipeline_gz.c and
 * tests/fuzz/fuzz_pipeline_gz.c. */
#ifndef GPUBATCH_TESTS_PIPELINE_GZ_RUN_H
#define GPUBATCH_TESTS_PIPELINE_GZ_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/pipeline.h"

#define PLGZ_BUFS 3
#define PLGZ_SLOTS 5

/* A growing byte string. */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} bytes;

/* Appends n bytes. */
static inline void put(bytes *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 1024;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* What a pipeline hands out: the data and the final status and message. */
typedef struct {
    bytes data;
    int rc;
    char msg[IO_STATUS_TEXT];
    int garbage;
    int chunks_gz; /* chunks that held members */
    int broken;    /* a chunk broke the pipeline's own rules (offsets, bounds) */
} outcome;

/* Decodes one pl_open_gz chunk on the host the way the device does,
 * appending its data; 0, or -1 with the host reader's message for the first
 * member that does not decode (as the device path reports it). */
static inline int host_inflate(const pl_chunk *c, bytes *out, char *msg, size_t msglen, int *broken)
{
    const pl_gz_chunk *g = c->gz;
    unsigned char *span = malloc(g->span + 1);
    static if_tables t;
    if_u32 table[256];
    for (int i = 0; i < 256; i++)
        if_crc32_table(table, (if_u32)i);
    memset(span, 0x5a, g->span + 1);
    for (int i = 0; i < g->nruns; i++) {
        *broken |= g->runs[i].out_off + g->runs[i].len > g->span ||
                   g->runs[i].in_off + g->runs[i].len > g->in_bytes;
        if (*broken)
            break;
        memcpy(span + g->runs[i].out_off, (const char *)c->data + g->runs[i].in_off,
               g->runs[i].len);
    }
    int bad = -1;
    for (int i = 0; i < g->nmembers && bad < 0; i++) {
        const if_member *m = &g->members[i];
        *broken |= m->out_off + m->isize > g->span || m->in_off + m->in_len > g->in_bytes ||
                   m->in_off < 18;
        if (*broken)
            return -1;
        const unsigned char *in = (const unsigned char *)c->data + m->in_off;
        if (if_inflate(in, m->in_len, span + m->out_off, m->isize, &t)) {
            bad = i;
            break;
        }
        if_u32 crc = if_crc32_finish(if_crc32_part(table, span + m->out_off, 0, m->isize, 0x80000000u),
                                     m->isize);
        if (crc != m->crc)
            bad = i;
    }
    if (bad >= 0) {
        const if_member *m = &g->members[bad];
        io_status st;
        int rc = io_gzip_member_error(g->fd, m->file_off, UINT64_MAX, &st);
        *broken |= rc >= 0;
        if (rc < 0)
            snprintf(msg, msglen, "%s", st.text);
    } else if (g->skip + c->bytes > g->span) {
        *broken = 1;
    } else {
        put(out, span + g->skip, c->bytes);
    }
    free(span);
    return bad >= 0 ? -1 : 0;
}

/* Checks that pl_gz_decode (the host decode of `auto`'s CPU side, with
 * zlib) gives what host_inflate gave for chunk c: the same status, and the
 * same data (at data) or message; and that told to stop before it starts
 * it gives up on any chunk that holds members. Sets *broken when not. */
static inline void check_host_decode(const pl_chunk *c, size_t chunk, int rc, const void *data,
                                     const char *msg, int *broken)
{
    if (*broken)
        return; /* the chunk broke the pipeline's rules: no decode may trust it */
    void *span = malloc(pl_gz_span_bytes(chunk));
    io_status msg2;
    const void *d = NULL;
    int rc2 = pl_gz_decode(c, span, 3, NULL, &d, &msg2);
    if ((rc2 < 0) != (rc < 0) || (rc < 0 && strcmp(msg, msg2.text)) ||
        (rc == 0 && c->bytes && memcmp(d, data, c->bytes)))
        *broken = 1;
    atomic_int stop = 1;
    rc2 = pl_gz_decode(c, span, 3, &stop, &d, &msg2);
    if (c->gz->nmembers && rc2 != PL_DECODE_STOPPED)
        *broken = 1;
    free(span);
}

/* Takes one chunk's data into o as the device stage would (see above). */
static inline void decode_chunk(const pl_chunk *c, size_t chunk, outcome *o)
{
    if (c->gz) {
        o->chunks_gz += c->gz->nmembers > 0;
        if (!o->rc) {
            size_t before = o->data.n;
            int hrc = host_inflate(c, &o->data, o->msg, sizeof o->msg, &o->broken);
            check_host_decode(c, chunk, hrc, o->data.p ? o->data.p + before : NULL, o->msg,
                              &o->broken);
            if (hrc < 0)
                o->rc = IO_ERR_CORRUPT;
        }
    } else if (!o->rc) {
        put(&o->data, c->data, c->bytes);
    }
}

/* Runs a pipeline (gz or plain) over path: skip decoded bytes are read
 * first (prefix_len of them handed back as the prefix), then chunks of
 * chunk bytes up to limit. */
static inline void run(const char *path, int gz, size_t skip, size_t prefix_len, size_t chunk,
                uint64_t limit, outcome *o)
{
    memset(o, 0, sizeof *o);
    io_reader *r;
    io_status err;
    if (io_reader_open(&r, path, &err) < 0) {
        o->rc = -1;
        snprintf(o->msg, sizeof o->msg, "%s", err.text);
        return;
    }
    static unsigned char head[1 << 17];
    ssize_t k = skip ? io_reader_read(r, head, skip) : 0;
    if (k != (ssize_t)skip) { /* the header alone fails: both pipelines see the same */
        o->rc = -2;
        snprintf(o->msg, sizeof o->msg, "%s", io_reader_error(r));
        io_reader_close(r);
        return;
    }
    size_t bufbytes = pl_gz_buffer_bytes(chunk);
    void *bufs[PLGZ_BUFS], *copies[PLGZ_SLOTS];
    for (int i = 0; i < PLGZ_BUFS; i++)
        bufs[i] = malloc(bufbytes);
    for (int i = 0; i < PLGZ_SLOTS; i++)
        copies[i] = malloc(bufbytes);
    pl_ring *pl;
    const void *prefix = head + skip - prefix_len;
    int rc = gz ? pl_open_gz(&pl, r, bufs, PLGZ_BUFS, PLGZ_SLOTS, chunk, prefix, prefix_len, limit)
                : pl_open(&pl, r, bufs, PLGZ_BUFS, PLGZ_SLOTS, chunk, prefix, prefix_len, limit, 0);
    o->broken |= rc != 0;
    pl_chunk c, out[PLGZ_SLOTS];
    uint64_t expect_off = 0;
    int taken = 0;
    do {
        rc = pl_next(pl, &c);
        if (rc > 0) {
            o->broken |= c.offset != expect_off || c.slot < 0 || c.slot >= PLGZ_SLOTS;
            if (o->broken)
                break;
            expect_off += c.bytes;
            out[c.slot] = c;
            if (taken++ % 2 == 0) { /* copied away, as to a device */
                memcpy(copies[c.slot], c.data, c.gz ? c.gz->in_bytes : c.bytes);
                out[c.slot].data = copies[c.slot];
                pl_release_buffer(pl, c.slot);
            }
        }
        while (pl_outstanding(pl) > 0 && (pl_full(pl) || rc <= 0)) {
            c = out[pl_oldest(pl)];
            decode_chunk(&c, chunk, o);
            pl_release(pl, c.slot);
        }
    } while (rc > 0);
    if (rc < 0 && !o->rc) {
        o->rc = rc;
        snprintf(o->msg, sizeof o->msg, "%s", pl_status(pl)->text);
    }
    o->garbage = io_reader_trailing_garbage(r);
    pl_close(pl);
    for (int i = 0; i < PLGZ_BUFS; i++)
        free(bufs[i]);
    for (int i = 0; i < PLGZ_SLOTS; i++)
        free(copies[i]);
    io_reader_close(r);
}

#endif
