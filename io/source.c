/* source.c - the reader's byte source (see source.h): the window of input
 * bytes over a file descriptor or the caller's memory, its refills (a
 * regular file on several threads, pread.h; a pipe through its spool), the
 * plain pass-through path, repositioning, and the check that a file did not
 * shrink while read. */
#include "source.h"

#include "status.h"
#include "pread.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEM_WINDOW (1u << 30) /* bytes of memory handed to zlib at a time (uInt) */

/* Records the first error of the handle (sticky) and returns the one in force. */
int source_error(io_reader *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = io_keepv(&r->st, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* The bytes of a regular file after the reader's offset, as it held them
 * when opened (see source.h). */
uint64_t source_file_left(const io_reader *r)
{
    if (r->file_size < 0)
        return UINT64_MAX;
    uint64_t end = r->src_off + (uint64_t)r->file_size;
    return end > r->file_pos ? end - r->file_pos : 0;
}

/* A regular file's n bytes at the reader's offset: the threads share the
 * bytes the file held when it was opened, so that a small file starts none
 * (a pool of a thread per core costs a small input's run more than its
 * work), and one thread reads whatever it has grown by since. The count or
 * -errno. */
static ssize_t source_pread(const io_reader *r, uint8_t *buf, size_t n)
{
    uint64_t left = source_file_left(r);
    size_t held = left < n ? (size_t)left : n;
    ssize_t k = io_pread(r->fd, buf, held, r->file_pos);
    if (k < 0 || (size_t)k < held || held == n)
        return k;
    ssize_t more = io_pread_full(r->fd, buf + held, n - held, r->file_pos + held);
    return more < 0 ? more : k + more;
}

/* Reads up to n bytes at the reader's offset (file_pos) and moves it past
 * them: a regular file with pread(2), on several threads when worth it; a
 * pipe through its spool, either what is held or one read(2) brings (some)
 * or all n, handed over for good. The count (short only at the end of the
 * input) or -errno. */
static ssize_t source_read_at(io_reader *r, uint8_t *buf, size_t n, int some)
{
    ssize_t k = !r->spool ? source_pread(r, buf, n)
                : some    ? spool_read(r->spool, buf, n, r->file_pos)
                          : spool_take(r->spool, buf, n, r->file_pos);
    if (k > 0)
        r->file_pos += (uint64_t)k;
    return k;
}

/* At the end of a regular file: a file now shorter than when it was opened
 * was cut while being read (the data that was there is lost, and what was
 * read may end anywhere), which is an error rather than a short input.
 * Returns 0 or the sticky error. */
int source_check_shrunk(io_reader *r)
{
    struct stat st;
    int64_t was = (int64_t)r->src_off + r->file_size; /* the file's size, past a zip member */
    if (r->fd < 0 || r->file_size < 0 || fstat(r->fd, &st) < 0 || st.st_size >= was)
        return 0;
    return source_error(r, IO_ERR_READ, "the file shrank from %lld to %lld bytes while being read",
                        (long long)was, (long long)st.st_size);
}

/* At most n: no more than the bytes of a zip member's range left after the
 * file offset, which is past the consumed and the buffered input. */
size_t source_room(const io_reader *r, size_t n)
{
    if (r->src_len == UINT64_MAX)
        return n;
    uint64_t at = r->raw_offset + r->in_avail;
    uint64_t left = at < r->src_len ? r->src_len - at : 0;
    return left < n ? (size_t)left : n;
}

/* source_fill, reading no more than `most` bytes into the window (at
 * least need). */
static int source_fill_upto(io_reader *r, size_t need, size_t most);

/* Makes at least `need` unconsumed input bytes available (fewer only at the
 * end of the input); returns 0 or a negative io_error. A regular file fills
 * the window on several threads (blocked gzip mostly finds it filled: each
 * parallel batch of read_bgzf reads the next window). */
int source_fill(io_reader *r, size_t need)
{
    return source_fill_upto(r, need, IN_BLOCK);
}

/* The first bytes of the input (see source.h). */
int source_peek(io_reader *r, size_t need, size_t most)
{
    return source_fill_upto(r, need, most);
}

/* source_fill with a bound on the window (see above). */
static int source_fill_upto(io_reader *r, size_t need, size_t most)
{
    if (r->in_avail >= need || r->in_eof)
        return 0;
    if (!r->inbuf) {
        /* Memory: widen the window up to MEM_WINDOW bytes from in_next. */
        size_t start = (size_t)(r->in_next - r->mem);
        size_t left = r->mem_len - start;
        r->in_avail = left < MEM_WINDOW ? left : MEM_WINDOW;
        r->mem_pos = start + r->in_avail;
        if (r->mem_pos == r->mem_len)
            r->in_eof = 1;
        return 0;
    }
    if (r->in_avail && r->in_next != r->inbuf)
        memmove(r->inbuf, r->in_next, r->in_avail);
    r->in_next = r->inbuf;
    while (r->in_avail < need && !r->in_eof) {
        size_t room = source_room(r, (most > need ? most : need) - r->in_avail);
        ssize_t k = source_read_at(r, r->inbuf + r->in_avail, room, 1);
        if (k < 0)
            return source_error(r, IO_ERR_READ, "%s", strerror((int)-k));
        if (k == 0) {
            r->in_eof = 1;
            int rc = source_check_shrunk(r);
            if (rc < 0)
                return rc;
        }
        r->in_avail += (size_t)k;
    }
    return 0;
}

/* Drops n bytes of unconsumed input (a pipe's spool lets them go). */
void source_consume(io_reader *r, size_t n)
{
    r->in_next += n;
    r->in_avail -= n;
    r->raw_offset += n;
    if (r->spool)
        spool_release(r->spool, r->raw_offset);
}

/* Plain path: hands out buffered input first, then reads straight into buf. */
ssize_t source_read_plain(io_reader *r, uint8_t *buf, size_t n)
{
    size_t got = 0;
    if (r->in_avail) {
        size_t k = n < r->in_avail ? n : r->in_avail;
        memcpy(buf, r->in_next, k);
        source_consume(r, k);
        got = k;
    }
    if (got == n)
        return (ssize_t)got;
    if (!r->inbuf) {
        size_t left = r->mem_len - r->mem_pos;
        size_t k = n - got < left ? n - got : left;
        memcpy(buf + got, r->mem + r->mem_pos, k);
        r->mem_pos += k;
        r->raw_offset += k;
        return (ssize_t)(got + k);
    }
    if (r->in_eof)
        return (ssize_t)got;
    size_t want = source_room(r, n - got);
    ssize_t k = source_read_at(r, buf + got, want, 0);
    if (k < 0)
        return source_error(r, IO_ERR_READ, "%s", strerror((int)-k));
    r->raw_offset += (uint64_t)k;
    if ((size_t)k < n - got) {
        r->in_eof = 1;
        int rc = source_check_shrunk(r);
        if (rc < 0)
            return rc;
    }
    return (ssize_t)(got + (size_t)k);
}

/* Places the reader's input at compressed byte `coff` of the file or
 * memory, dropping what was buffered. */
int source_reposition(io_reader *r, uint64_t coff)
{
    if (!r->inbuf) {
        r->in_next = r->mem + coff;
        r->in_avail = 0;
        r->in_eof = coff >= r->mem_len;
        r->mem_pos = (size_t)coff;
        r->raw_offset = coff;
        return 0;
    }
    if (r->file_size < 0 && !r->spool)
        return source_error(r, IO_ERR_READ, "%s", strerror(ESPIPE));
    r->file_pos = r->src_off + coff;
    r->in_next = r->inbuf;
    r->in_avail = 0;
    r->in_eof = 0;
    r->raw_offset = coff;
    return 0;
}

/* Plain regular file: drops buffered bytes, then moves the offset (never
 * past the end of the file); returns the bytes passed over or a negative
 * io_error. */
int64_t source_skip_plain(io_reader *r, uint64_t n)
{
    size_t k = n < r->in_avail ? (size_t)n : r->in_avail;
    source_consume(r, k);
    if (k == n || r->in_eof)
        return (int64_t)k;
    if (r->file_size < 0)
        return source_error(r, IO_ERR_READ, "%s", strerror(ESPIPE));
    uint64_t end = r->src_off + (uint64_t)r->file_size; /* past a zip member's range */
    uint64_t left = end > r->file_pos ? end - r->file_pos : 0;
    uint64_t step = n - k < left ? n - k : left;
    r->file_pos += step;
    r->raw_offset += step;
    if (k + step < n)
        r->in_eof = 1;
    return (int64_t)(k + step);
}
