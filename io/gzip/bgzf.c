/* bgzf.c - blocked gzip (BGZF, see bgzf.h): finding blocks by their
 * headers, inflating whole blocks on all cores (each straight to its place
 * in the caller's buffer, the ISIZE trailers giving the offsets, while one
 * thread reads the next input window), checking that blocks inflate as
 * whole blocks, and walking a file by the block headers to size, digest,
 * position or check it without inflating. */
#include "bgzf.h"

#include "io/crc.h"
#include "io/status.h"
#include "inflate.h"
#include "io/par.h"
#include "io/pread.h"
#include "io/source.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BGZF_HEADER_MAX (12 + 65535)   /* a gzip header with the longest extra field */
#define BGZF_MAX_ISIZE 65536           /* data bytes of a BGZF block at most */
#define BGZF_CHECK_JOBS 64             /* blocks checked in one parallel batch */
#define BGZF_CHECK_WINDOW ((size_t)4 << 20) /* file bytes read at a time to check them */
#define BGZF_MAX_JOBS 1024            /* blocks inflated in one parallel batch */

/* Whether p starts with the gzip magic (see bgzf.h). */
int gzip_header_magic(const void *p, size_t n)
{
    const uint8_t *b = p;
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* The length of a plain gzip member header at p (see bgzf.h). */
size_t gzip_header_plain(const uint8_t *p, size_t n)
{
    if (n < 10 || p[2] != 8 || (p[3] & 0xe2) || bgzf_block_size(p, n))
        return 0;
    size_t len = 10;
    if (p[3] & 4) { /* FEXTRA */
        if (n < len + 2)
            return 0;
        len += 2 + (size_t)(p[len] | p[len + 1] << 8);
    }
    for (int flag = 8; flag <= 16; flag += 8) { /* FNAME, FCOMMENT: zero-terminated */
        if (!(p[3] & flag))
            continue;
        const uint8_t *z = len < n ? memchr(p + len, 0, n - len) : NULL;
        if (!z)
            return 0;
        len = (size_t)(z - p) + 1;
    }
    return len < n ? len : 0;
}

/* Total size of the BGZF block that starts at p (n bytes available), or 0
 * when p does not start one: a gzip header with FEXTRA alone whose extra
 * field is made of subfields exactly, one of them BC with its 2-byte BSIZE
 * (other subfields may stand beside it). */
size_t bgzf_block_size(const uint8_t *p, size_t n)
{
    if (n < 12 || !gzip_header_magic(p, n) || p[2] != 8 || p[3] != 4)
        return 0;
    size_t xend = 12 + (size_t)(p[10] | p[11] << 8), total = 0, i = 12;
    if (n < xend)
        return 0;
    while (i + 4 <= xend) {
        size_t slen = (size_t)(p[i + 2] | p[i + 3] << 8);
        if (i + 4 + slen > xend)
            return 0;
        if (p[i] == 'B' && p[i + 1] == 'C' && slen == 2)
            total = (size_t)(p[i + 4] | p[i + 5] << 8) + 1;
        i += 4 + slen;
    }
    return i == xend && total >= xend + 2 + 8 ? total : 0;
}

/* Bytes of the gzip header of the BGZF block at p: where its deflate data
 * starts (bgzf_block_size(p) must be nonzero). */
size_t bgzf_header_size(const uint8_t *p)
{
    return 12 + (size_t)(p[10] | p[11] << 8);
}

/* One BGZF block to inflate, and how it went. */
typedef struct {
    const uint8_t *in; /* raw deflate data */
    size_t in_len;
    uint8_t *out;      /* isize bytes */
    uint32_t isize, crc;
    int err;           /* 0, IO_ERR_CORRUPT or IO_ERR_CRC */
} bgzf_job;

/* One parallel batch of blocks: every thread takes the next block until
 * none is left. With dst set, the thread of item 0 first builds the next
 * input window there: the keep bytes at src (the window's unparsed tail),
 * then up to want bytes read at file offset off. */
typedef struct {
    bgzf_job *jobs;
    size_t njobs;
    atomic_size_t next; /* next block to take */
    uint8_t *dst;
    const uint8_t *src;
    size_t keep, want;
    int fd;
    off_t off;
    ssize_t got; /* bytes read, or -errno */
} bgzf_batch;

/* A thread's part in a batch: whether it builds the next window first. */
typedef struct {
    bgzf_batch *b;
    int prefetch;
} bgzf_share;

/* Builds the batch's next input window (see bgzf_batch) with pread(2). */
static void bgzf_prefetch(bgzf_batch *b)
{
    memcpy(b->dst, b->src, b->keep);
    b->got = io_pread_full(b->fd, b->dst + b->keep, b->want, (uint64_t)b->off);
}

/* Thread body: inflates blocks of the batch and checks each block's
 * length and CRC-32. A block must decode to exactly its ISIZE and end in
 * its last byte, as zlib's raw inflate with Z_FINISH requires. */
static void *bgzf_worker(void *arg)
{
    bgzf_share *sh = arg;
    bgzf_batch *b = sh->b;
    if (sh->prefetch)
        bgzf_prefetch(b);
    for (;;) {
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->njobs)
            break;
        bgzf_job *j = &b->jobs[i];
        inflate_job d = {.in = j->in, .in_len = j->in_len, .stop_bit = UINT64_MAX,
                     .out_limit = SIZE_MAX, .out = j->out, .out_cap = j->isize};
        int r = inflate_decode_bytes(&d);
        if (r == INFLATE_NEED_OUTPUT)
            j->err = IO_ERR_CRC; /* more data than the ISIZE trailer says */
        else if (r != INFLATE_END || (d.bit + 7) / 8 != j->in_len)
            j->err = IO_ERR_CORRUPT;
        else if (d.out_len != j->isize)
            j->err = IO_ERR_CRC; /* the ISIZE trailer disagrees */
        else if (crc_update(0, j->out, j->isize) != j->crc)
            j->err = IO_ERR_CRC;
    }
    return NULL;
}

/* Sets up the batch's read of the next window when the input is a regular
 * file with more to read: into inbuf2 (allocated here), starting with the
 * window's bytes from pos on. Returns whether it will be read. */
static int bgzf_plan_prefetch(io_reader *r, size_t pos, bgzf_batch *b)
{
    if (!r->inbuf || r->file_size < 0 || r->in_eof)
        return 0;
    if (!r->inbuf2 && !(r->inbuf2 = malloc(IN_BLOCK)))
        return 0;
    b->dst = r->inbuf2;
    b->src = r->in_next + pos;
    b->keep = r->in_avail - pos;
    b->want = IN_BLOCK - b->keep;
    b->fd = r->fd;
    b->off = (off_t)r->file_pos;
    return 1;
}

/* After a batch whose blocks all inflated: makes the window it read the
 * current one (the reader's file offset moves past those bytes). */
static int bgzf_take_prefetch(io_reader *r, size_t pos, const bgzf_batch *b)
{
    uint8_t *t = r->inbuf;
    r->inbuf = r->inbuf2;
    r->inbuf2 = t;
    r->raw_offset += pos;
    r->in_next = r->inbuf;
    r->in_avail = b->keep + (size_t)b->got;
    r->file_pos = (uint64_t)b->off + (uint64_t)b->got;
    if ((size_t)b->got < b->want) {
        r->in_eof = 1;
        return source_check_shrunk(r);
    }
    return 0;
}

/* Blocked gzip (BGZF) at a member boundary: inflates the whole blocks that
 * are in the input window and fit in buf in parallel, each straight to its
 * place in buf (the ISIZE trailers give the offsets). Returns the bytes
 * written, 0 when the next member is not a complete BGZF block that fits or
 * does not inflate as one (the caller then inflates it as a stream), or a
 * negative io_error. */
ssize_t bgzf_read(io_reader *r, uint8_t *buf, size_t n)
{
    int rc = source_fill(r, IN_BLOCK);
    if (rc < 0)
        return rc;
    static _Thread_local bgzf_job jobs[BGZF_MAX_JOBS];
    size_t njobs = 0, pos = 0, off = 0;
    while (njobs < BGZF_MAX_JOBS) {
        const uint8_t *p = r->in_next + pos;
        size_t avail = r->in_avail - pos;
        size_t total = bgzf_block_size(p, avail);
        if (total == 0 || total > avail)
            break;
        uint32_t isize = source_le32(p + total - 4);
        if (isize > n - off)
            break;
        size_t head = bgzf_header_size(p);
        jobs[njobs++] = (bgzf_job){p + head, total - head - 8, buf + off, isize,
                                   source_le32(p + total - 8), 0};
        pos += total;
        off += isize;
    }
    if (njobs < 2) /* one block is no faster in parallel */
        return 0;
    size_t nt = (size_t)par_cpus();
    if (nt > njobs)
        nt = njobs;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    bgzf_batch batch = {.jobs = jobs, .njobs = njobs};
    atomic_init(&batch.next, 0);
    int prefetch = bgzf_plan_prefetch(r, pos, &batch);
    bgzf_share shares[PAR_MAX];
    for (size_t t = 0; t < nt; t++)
        shares[t] = (bgzf_share){&batch, prefetch && t == 0};
    par_run(bgzf_worker, shares, sizeof shares[0], nt);
    /* The blocks before the first failing one are good and kept; that one
     * goes through the sequential inflater instead, which reads it as
     * `gzip -d` does (a wrong BGZF length field does not bound the member
     * there), so the data, or the error and the bytes before it, never
     * depend on how the input was cut into reads. The window read meanwhile
     * is then dropped: the fd's offset never moved. */
    for (size_t i = 0; i < njobs; i++) {
        if (jobs[i].err) {
            pos = i ? (size_t)(jobs[i - 1].in + jobs[i - 1].in_len + 8 - r->in_next) : 0;
            off = (size_t)(jobs[i].out - buf);
            prefetch = 0;
            break;
        }
    }
    r->n_bgzf += njobs;
    if (prefetch && batch.got >= 0) {
        int rc2 = bgzf_take_prefetch(r, pos, &batch);
        return rc2 < 0 ? rc2 : (ssize_t)off;
    }
    source_consume(r, pos);
    return (ssize_t)off;
}

/* The message for a BGZF block at file_off of fd that does not inflate as
 * one: the sequential reader's, or, where that reads it (its deflate data
 * runs past or stops short of the block's BSIZE), that it is not whole. */
int bgzf_member_error(int fd, uint64_t file_off, io_status *st)
{
    int rc = fd >= 0 ? io_gzip_member_error(fd, file_off, UINT64_MAX, st) : 0;
    if (rc == 0)
        rc = io_fail(st, IO_ERR_CORRUPT,
                     "gzip member at byte %llu: its deflate data does not end where its BGZF "
                     "block does",
                     (unsigned long long)file_off);
    return rc;
}

/* Checks the whole BGZF blocks at the start of p (see bgzf.h). */
int bgzf_check(int fd, const uint8_t *p, size_t len, uint64_t file_off, size_t *used,
                  io_status *st)
{
    static _Thread_local bgzf_job jobs[BGZF_CHECK_JOBS];
    uint8_t *scratch = NULL;
    size_t pos = 0;
    int rc = 0;
    *used = 0;
    while (rc == 0) {
        size_t njobs = 0, start = pos;
        for (size_t total; njobs < BGZF_CHECK_JOBS &&
                           (total = bgzf_block_size(p + pos, len - pos)) && total <= len - pos;
             pos += total) {
            size_t head = bgzf_header_size(p + pos);
            jobs[njobs++] = (bgzf_job){p + pos + head, total - head - 8, NULL,
                                       source_le32(p + pos + total - 4),
                                       source_le32(p + pos + total - 8), 0};
        }
        if (njobs == 0)
            break;
        if (!scratch && !(scratch = malloc((size_t)BGZF_CHECK_JOBS * BGZF_MAX_ISIZE))) {
            rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
            break;
        }
        bgzf_batch batch = {.jobs = jobs, .njobs = njobs};
        atomic_init(&batch.next, 0);
        for (size_t i = 0; i < njobs; i++) {
            jobs[i].out = scratch + i * BGZF_MAX_ISIZE;
            if (jobs[i].isize > BGZF_MAX_ISIZE) /* no BGZF block holds more */
                jobs[i] = (bgzf_job){jobs[i].in, jobs[i].in_len, NULL, 0, 0, IO_ERR_CORRUPT};
        }
        size_t nt = (size_t)par_cpus();
        nt = nt > njobs ? njobs : nt > PAR_MAX ? PAR_MAX : nt;
        bgzf_share shares[PAR_MAX];
        for (size_t t = 0; t < nt; t++)
            shares[t] = (bgzf_share){&batch, 0};
        par_run(bgzf_worker, shares, sizeof shares[0], nt);
        for (size_t i = 0, at = start; i < njobs && rc == 0; i++) {
            if (jobs[i].err == IO_ERR_NOMEM) {
                rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
            } else if (jobs[i].err) {
                rc = bgzf_member_error(fd, file_off + at, st);
            } else {
                at = (size_t)(jobs[i].in + jobs[i].in_len + 8 - p);
                *used = at;
            }
        }
    }
    free(scratch);
    return rc;
}

/* Checks the BGZF blocks in bytes [start, end) of fd, which must be whole
 * blocks end to end; 0, or a negative io_error and a reason. */
int bgzf_check_file(int fd, uint64_t start, uint64_t end, io_status *st)
{
    uint8_t *buf = NULL;
    int rc = 0;
    while (rc == 0 && start < end) {
        size_t want = end - start < BGZF_CHECK_WINDOW ? (size_t)(end - start) : BGZF_CHECK_WINDOW;
        if (!buf && !(buf = malloc(BGZF_CHECK_WINDOW))) {
            rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
            break;
        }
        ssize_t k = io_pread_full(fd, buf, want, start);
        size_t used = 0;
        if (k < 0) {
            rc = io_fail(st, IO_ERR_READ, "%s", strerror((int)-k));
        } else if ((rc = bgzf_check(fd, buf, (size_t)k, start, &used, st)) == 0 && used == 0) {
            rc = io_fail(st, (size_t)k < want ? IO_ERR_TRUNCATED : IO_ERR_CORRUPT,
                         "gzip member at byte %llu: %s", (unsigned long long)start,
                         (size_t)k < want ? "unexpected end of compressed data"
                                          : "not a BGZF block");
        }
        start += used;
    }
    free(buf);
    return rc;
}

/* Walks the BGZF blocks in bytes [start, end) of fd by their headers alone,
 * up to the block whose data holds decoded byte `target` (UINT64_MAX: to the
 * end); *coff and *uoff get that block's file offset and decoded offset (or
 * the end's). Trailing bytes that are not gzip end the data, as they do for
 * a sequential read; a gzip member that is not a BGZF block is an error. */
int bgzf_walk(int fd, uint64_t start, uint64_t end, uint64_t target, uint64_t *coff, uint64_t *uoff,
              uint64_t *digest, io_status *st)
{
    uint64_t c = start, u = 0;
    static _Thread_local uint8_t h[BGZF_HEADER_MAX];
    while (c < end) {
        uint8_t t[8];
        size_t want = end - c < BGZF_HEADER_LEN ? (size_t)(end - c) : BGZF_HEADER_LEN;
        ssize_t k = io_pread_full(fd, h, want, c);
        size_t head = k >= 12 ? bgzf_header_size(h) : 0;
        if (k == BGZF_HEADER_LEN && head > BGZF_HEADER_LEN) /* an extra field beside BC */
            k = io_pread_full(fd, h, end - c < head ? (size_t)(end - c) : head, c);
        if (k < 0)
            return io_fail(st, IO_ERR_READ, "%s", strerror((int)-k));
        size_t total = bgzf_block_size(h, (size_t)k);
        if (total == 0) {
            if (gzip_header_magic(h, (size_t)k))
                return io_fail(
                    st, IO_ERR_SEEK, "%s",
                    "gzip data that is not blocked (BGZF) cannot be read from an offset: "
                    "recompress it with `gpubatch` output or bgzip, or decompress it");
            break;
        }
        if (total > end - c)
            return io_fail(st, IO_ERR_TRUNCATED, "%s", "unexpected end of compressed data");
        k = io_pread_full(fd, t, sizeof t, c + total - 8);
        if (k != (ssize_t)sizeof t)
            return io_fail(st, IO_ERR_READ, "%s", k < 0 ? strerror((int)-k) : "read error");
        uint32_t isize = source_le32(t + 4);
        for (size_t i = 0; digest && i < sizeof t; i++) /* FNV-1a over the trailers */
            *digest = (*digest ^ t[i]) * 0x100000001b3ull;
        if (target != UINT64_MAX && target < u + isize)
            break;
        c += total;
        u += isize;
    }
    *coff = c;
    *uoff = u;
    return 0;
}

/* Decoded size of the BGZF blocks in [start, end) of fd. */
int bgzf_data_size(int fd, uint64_t start, uint64_t end, uint64_t *size, io_status *st)
{
    uint64_t coff;
    io_clear(st);
    return bgzf_walk(fd, start, end, UINT64_MAX, &coff, size, NULL, st);
}

/* Passes over the whole BGZF blocks at the head of the input whose data
 * lies within the next n decoded bytes, by their headers, checking that
 * each inflates as one whole block (what the skip assumes; nothing else
 * reads them); returns the decoded bytes passed over or a negative
 * io_error. */
int64_t bgzf_skip(io_reader *r, uint64_t n)
{
    uint64_t skipped = 0;
    for (;;) {
        int rc = source_fill(r, IN_BLOCK);
        if (rc < 0)
            return rc;
        size_t span = 0, total, used;
        uint64_t data = 0;
        for (; (total = bgzf_block_size(r->in_next + span, r->in_avail - span)) &&
               total <= r->in_avail - span;
             span += total) {
            uint32_t isize = source_le32(r->in_next + span + total - 4);
            if (isize > n - skipped - data)
                break;
            data += isize;
        }
        if (span == 0)
            break;
        io_status why;
        rc = bgzf_check(r->inbuf ? r->fd : -1, r->in_next, span, r->raw_offset, &used, &why);
        if (rc < 0)
            return source_error(r, rc, "%s", why.text);
        source_consume(r, span);
        skipped += data;
    }
    return (int64_t)skipped;
}
