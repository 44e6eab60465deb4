/* bgzf.c - blocked gzip (BGZF, see bgzf.h): finding blocks by their
 * headers, inflating whole blocks on all cores (each straight to its place
 * in the caller's buffer, the ISIZE trailers giving the offsets, while one
 * thread reads the next input window), checking that blocks inflate as
 * whole blocks, and walking a file by the block headers to size, digest,
 * position or check it without inflating. */
#include "bgzf.h"

#include "gzip_header.h"
#include "inflate.h"
#include "io/crc.h"
#include "io/par.h"
#include "io/pread.h"
#include "io/status.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BGZF_HEADER_MAX (12 + 65535)   /* a gzip header with the longest extra field */
#define BGZF_MAX_ISIZE 65536           /* data bytes of a BGZF block at most */
#define BGZF_CHECK_JOBS 64             /* blocks checked in one parallel batch */
#define BGZF_CHECK_WINDOW ((size_t)4 << 20) /* file bytes read at a time to check them */

/* The little-endian 32-bit value at p (a trailer's CRC-32 or ISIZE). */
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
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

/* One parallel batch of blocks: every thread takes the next block until
 * none is left; with window set, the thread of share 0 first builds it. */
typedef struct {
    bgzf_job *jobs;
    size_t njobs;
    atomic_size_t next; /* next block to take */
    bgzf_window *window;
} bgzf_batch;

/* A thread's part in a batch: whether it builds the next window first. */
typedef struct {
    bgzf_batch *b;
    int prefetch;
} bgzf_share;

/* Builds the next input window (see bgzf_window) with pread(2). */
static void bgzf_prefetch(bgzf_window *w)
{
    memcpy(w->dst, w->src, w->keep);
    w->got = io_pread_full(w->fd, w->dst + w->keep, w->want, (uint64_t)w->off);
}

/* Thread body: inflates blocks of the batch and checks each block's
 * length and CRC-32. A block must decode to exactly its ISIZE and end in
 * its last byte, as zlib's raw inflate with Z_FINISH requires. */
static void *bgzf_worker(void *arg)
{
    bgzf_share *sh = arg;
    bgzf_batch *b = sh->b;
    if (sh->prefetch)
        bgzf_prefetch(b->window);
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

/* Inflates a batch of blocks on all cores (see bgzf.h). */
void bgzf_inflate(bgzf_job *jobs, size_t njobs, bgzf_window *next)
{
    size_t nt = (size_t)par_cpus();
    nt = nt > njobs ? njobs : nt > PAR_MAX ? PAR_MAX : nt;
    bgzf_batch batch = {.jobs = jobs, .njobs = njobs, .window = next};
    atomic_init(&batch.next, 0);
    bgzf_share shares[PAR_MAX];
    for (size_t t = 0; t < nt; t++)
        shares[t] = (bgzf_share){&batch, next && t == 0};
    par_run(bgzf_worker, shares, sizeof shares[0], nt);
}

/* The message for a BGZF block at file_off of fd that does not inflate as
 * one: the sequential reader's, or, where that reads it (its deflate data
 * runs past or stops short of the block's BSIZE), that it is not whole. */
int bgzf_member_error(int fd, bgzf_member_msg msg, uint64_t file_off, io_status *st)
{
    int rc = fd >= 0 && msg ? msg(fd, file_off, UINT64_MAX, st) : 0;
    if (rc == 0)
        rc = io_fail(st, IO_ERR_CORRUPT,
                     "gzip member at byte %llu: its deflate data does not end where its BGZF "
                     "block does",
                     (unsigned long long)file_off);
    return rc;
}

/* Checks the whole BGZF blocks at the start of p (see bgzf.h). */
int bgzf_check(int fd, bgzf_member_msg msg, const uint8_t *p, size_t len, uint64_t file_off,
               size_t *used, io_status *st)
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
                                       le32(p + pos + total - 4),
                                       le32(p + pos + total - 8), 0};
        }
        if (njobs == 0)
            break;
        if (!scratch && !(scratch = malloc((size_t)BGZF_CHECK_JOBS * BGZF_MAX_ISIZE))) {
            rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
            break;
        }
        for (size_t i = 0; i < njobs; i++) {
            jobs[i].out = scratch + i * BGZF_MAX_ISIZE;
            if (jobs[i].isize > BGZF_MAX_ISIZE) /* no BGZF block holds more */
                jobs[i] = (bgzf_job){jobs[i].in, jobs[i].in_len, NULL, 0, 0, IO_ERR_CORRUPT};
        }
        bgzf_inflate(jobs, njobs, NULL);
        for (size_t i = 0, at = start; i < njobs && rc == 0; i++) {
            if (jobs[i].err == IO_ERR_NOMEM) {
                rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
            } else if (jobs[i].err) {
                rc = bgzf_member_error(fd, msg, file_off + at, st);
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
int bgzf_check_file(int fd, bgzf_member_msg msg, uint64_t start, uint64_t end, io_status *st)
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
        } else if ((rc = bgzf_check(fd, msg, buf, (size_t)k, start, &used, st)) == 0 && used == 0) {
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
    /* on the heap, not thread-local: every thread the process starts would
       fault in and zero its 64 KiB */
    uint8_t *h = malloc(BGZF_HEADER_MAX);
    int rc = h ? 0 : io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    while (rc == 0 && c < end) {
        uint8_t t[8];
        size_t want = end - c < BGZF_HEADER_LEN ? (size_t)(end - c) : BGZF_HEADER_LEN;
        ssize_t k = io_pread_full(fd, h, want, c);
        size_t head = k >= 12 ? bgzf_header_size(h) : 0;
        if (k == BGZF_HEADER_LEN && head > BGZF_HEADER_LEN) /* an extra field beside BC */
            k = io_pread_full(fd, h, end - c < head ? (size_t)(end - c) : head, c);
        if (k < 0) {
            rc = io_fail(st, IO_ERR_READ, "%s", strerror((int)-k));
            break;
        }
        size_t total = bgzf_block_size(h, (size_t)k);
        if (total == 0) {
            if (gzip_header_magic(h, (size_t)k))
                rc = io_fail(
                    st, IO_ERR_SEEK, "%s",
                    "gzip data that is not blocked (BGZF) cannot be read from an offset: "
                    "make a seek index with `gpubatch index FILE`, recompress it with "
                    "`gpubatch` output or bgzip, or decompress it");
            break;
        }
        if (total > end - c) {
            rc = io_fail(st, IO_ERR_TRUNCATED, "%s", "unexpected end of compressed data");
            break;
        }
        k = io_pread_full(fd, t, sizeof t, c + total - 8);
        if (k != (ssize_t)sizeof t) {
            rc = io_fail(st, IO_ERR_READ, "%s", k < 0 ? strerror((int)-k) : "read error");
            break;
        }
        uint32_t isize = le32(t + 4);
        for (size_t i = 0; digest && i < sizeof t; i++) /* FNV-1a over the trailers */
            *digest = (*digest ^ t[i]) * 0x100000001b3ull;
        if (target != UINT64_MAX && target < u + isize)
            break;
        c += total;
        u += isize;
    }
    free(h);
    if (rc == 0) {
        *coff = c;
        *uoff = u;
    }
    return rc;
}

/* Decoded size of the BGZF blocks in [start, end) of fd. */
int bgzf_data_size(int fd, uint64_t start, uint64_t end, uint64_t *size, io_status *st)
{
    uint64_t coff;
    io_clear(st);
    return bgzf_walk(fd, start, end, UINT64_MAX, &coff, size, NULL, st);
}
