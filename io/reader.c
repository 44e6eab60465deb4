/* reader.c - byte sources: plain pass-through or multi-member gzip inflate.
 *
 * The input is the byte source of source.c: one input block (IN_BLOCK
 * bytes read from the file descriptor, or a window onto the caller's
 * memory), passed through as it is on the plain path (source_read_plain).
 * Blocked gzip at a member boundary goes to read_bgzf first, which inflates
 * whole blocks on all cores (bgzf_inflate, gzip/bgzf.h). Any other member
 * goes to the parallel decoder of one stream (gzip/pinflate.h), which reads
 * the file (or a pipe's spool, spool.h) itself; its header is parsed here
 * (pinflate_header) and its trailer checked here (check_trailer), in zlib's
 * words. zlib inflates what is left: small members, headers with a CRC, and
 * the rest of a member from the block boundary where the parallel decoder
 * met invalid or cut data (take_over_from_parallel), so that errors are
 * zlib's. Between
 * members we look at the next bytes the way `gzip -d` does: another gzip
 * magic starts a new member, zero bytes are ignored, anything else ends the
 * data and is remembered as trailing garbage.
 *
 * A zip archive member (io_reader_open_zip_member) is a byte source of its
 * own: reads stop at the end of its range of the file (source_room), a
 * stored one takes the plain path, and a deflated one is inflated as raw
 * deflate by read_zip_deflate (through the parallel decoder from PAR_MIN
 * bytes on), apart from the gzip path, and checked at its end by
 * zip_deflate_end.
 *
 * On a seekable input, io_reader_seek, io_reader_data_size and
 * io_reader_fingerprint walk blocked gzip by its block headers (bgzf_walk),
 * inflating no block but the one that holds the offset sought, and
 * io_reader_check_blocks checks a range of blocks (bgzf_check_file). */
#include "reader.h"

#include "crc.h"
#include "hugemem.h"
#include "par.h"
#include "pread.h"
#include "source.h"
#include "status.h"
#include "view.h"
#include "io/gzip/bgzf.h"
#include "io/gzip/gzip_header.h"
#include "io/gzip/inflate.h"
#include "io/gzip/pinflate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_STEP (1u << 30)   /* largest avail_out given to zlib in one call */
#define SKIP_SCRATCH ((size_t)1 << 20) /* bytes inflated at a time to discard them */
#define PAR_MIN ((uint64_t)64 << 10)  /* compressed bytes from which a member goes parallel */
#define WHOLE_MAX ((size_t)64 << 20)  /* the most data a member below that is decoded whole */

#define DETECT_BYTES ((size_t)64 << 10) /* first read of an input, to tell gzip from plain data */
#define BGZF_MAX_JOBS 1024 /* BGZF blocks inflated in one parallel batch */
#define PIPE_AHEAD ((uint64_t)512 << 20) /* a pipe's member read ahead of its decoders */

/* Whether the n bytes at p may start a BGZF block (bgzf_block_size's first
 * test; too few bytes to tell: yes). */
static int maybe_bgzf(const uint8_t *p, size_t n)
{
    return n < 4 || (gzip_header_magic(p, n) && p[2] == 8 && p[3] == 4);
}

/* Reads the first bytes and picks the plain or the gzip path. Blocked gzip
 * gets the whole first window for its first batch; other gzip keeps the
 * first read: the parallel decoder reads the file itself, and a 16 MiB
 * window read for nothing costs its fresh pages. */
static int detect(io_reader *r, io_status *st)
{
    int rc = source_peek(r, 2, DETECT_BYTES);
    if (rc == 0 && gzip_header_magic(r->in_next, r->in_avail) &&
        maybe_bgzf(r->in_next, r->in_avail))
        rc = source_fill(r, IN_BLOCK); /* the whole first window, as the batch expects */
    if (rc < 0)
        return io_fail(st, rc, "%s", r->st.text);
    if (gzip_header_magic(r->in_next, r->in_avail)) {
        memset(&r->zs, 0, sizeof(r->zs));
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
            return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        r->zinit = 1;
        r->gzip = 1;
        r->state = RD_BETWEEN; /* next_member() starts the first member */
    } else {
        r->state = RD_PLAIN;
    }
    return 0;
}

/* Allocates a reader with every field in its neutral state, for one of the
 * open calls: *out is NULL and *st empty until it succeeds, and *st says
 * "out of memory" when the allocation fails. */
static io_reader *reader_new(io_reader **out, io_status *st)
{
    *out = NULL;
    io_clear(st);
    io_reader *r = calloc(1, sizeof(*r));
    if (!r) {
        io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        return NULL;
    }
    r->fd = -1;
    r->file_size = -1;
    r->left = UINT64_MAX;
    r->src_len = UINT64_MAX;
    return r;
}

/* Opens path ("-" is stdin) into r: the descriptor, its size and identity,
 * and the input block. 0, or a negative io_error with the reason. */
static int open_file(io_reader *r, const char *path, io_status *st)
{
    struct stat sb;
    if (!strcmp(path, "-")) {
        r->fd = STDIN_FILENO;
        r->is_stdin = 1;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (r->fd < 0)
            return io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
        r->close_fd = 1;
        if (!(r->path = strdup(path)))
            return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    }
    if (fstat(r->fd, &sb) < 0)
        return io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return io_fail(st, IO_ERR_OPEN, "%s", strerror(EISDIR));
    if (S_ISREG(sb.st_mode)) {
        r->file_size = (int64_t)sb.st_size;
        off_t at = lseek(r->fd, 0, SEEK_CUR); /* stdin may be a file read partly already */
        r->file_pos = at > 0 ? (uint64_t)at : 0;
    } else if (spool_create(&r->spool, r->fd) < 0) {
        return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    }
    if (r->close_fd) {
        r->has_id = 1;
        r->dev = (uint64_t)sb.st_dev;
        r->ino = (uint64_t)sb.st_ino;
        r->mtime_s = (int64_t)sb.st_mtim.tv_sec;
        r->mtime_ns = (uint32_t)sb.st_mtim.tv_nsec;
    }
    r->inbuf = hugemem_alloc_upto(IN_BLOCK, source_file_left(r));
    if (!r->inbuf)
        return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    r->in_next = r->inbuf;
    return 0;
}

/* Opens a file or stdin and sniffs for gzip. */
int io_reader_open(io_reader **out, const char *path, io_status *st)
{
    io_reader *r = reader_new(out, st);
    if (!r)
        return IO_ERR_NOMEM;
    int rc = open_file(r, path, st);
    if (rc == 0)
        rc = detect(r, st);
    if (rc < 0) {
        io_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Opens an in-memory byte string; no copy is made. */
int io_reader_open_mem(io_reader **out, const void *data, size_t len, io_status *st)
{
    io_reader *r = reader_new(out, st);
    if (!r)
        return IO_ERR_NOMEM;
    static const uint8_t empty[1];
    r->mem = len ? data : empty;
    r->mem_len = len;
    r->in_next = r->mem;
    r->file_size = (int64_t)len;
    int rc = detect(r, st);
    if (rc < 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Where the parallel decoder's source offsets start in the reader's: a zip
 * member's data in a file (the decoder reads the file), else 0. */
static uint64_t parallel_base(const io_reader *r)
{
    return r->inbuf ? r->src_off : 0;
}

/* What the stream being read is called in messages, and where it starts. */
static const char *member_kind(const io_reader *r)
{
    return r->zip_deflate ? "deflated data" : "gzip member";
}

/* The file offset that messages name for the stream being read. */
static uint64_t member_at(const io_reader *r)
{
    return r->zip_deflate ? r->zip.data_off : r->member_off;
}

/* What the parallel decoder reads a stream of src_len bytes from: the
 * reader's memory; a file (not a pipe) mapped whole and read-only
 * (r->par_view, made on first use and kept until the reader closes, after
 * the decoder's threads are gone: an abandoned stream's may still read
 * it), so that each chunk decodes its span in place in the page cache
 * rather than reading it into a buffer of its own first (a file cut
 * meanwhile faults as any view does); else NULL, and the file is read
 * with pread through *fd (no mapping). */
static const uint8_t *parallel_source(io_reader *r, uint64_t src_len, int *fd)
{
    *fd = -1;
    if (!r->inbuf)
        return r->mem;
    if (!r->par_view.base && r->path && !r->spool && src_len <= SIZE_MAX &&
        io_view_map_lazy(&r->par_view, r->fd, 0, (size_t)src_len, r->path) < 0)
        r->par_view = (io_view){.entry = -1};
    if (r->par_view.base && src_len <= r->par_view.len)
        return r->par_view.data;
    *fd = r->fd;
    return NULL;
}

/* Hands the deflate stream in bytes [start, end) of the input to the
 * parallel decoder (started on first use), with the trailer's ratio as a
 * hint for a gzip member of a file. Returns 1, or an error. */
static int parallel_begin(io_reader *r, uint64_t start, uint64_t end)
{
    if (!r->par && pinflate_create(&r->par, par_cpus(), 0) < 0)
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    uint64_t base = parallel_base(r);
    /* the first member of a file or a pipe may pause for a device
       (io_reader_stream_member's, io_reader_stream_spool's); the others go on across the
       members after them */
    int may_pause = r->zip_deflate || (!r->src_off && r->member_off == 0);
    pinflate_members(r->par, !r->zip_deflate && !may_pause);
    if (r->inbuf && !r->spool && !r->zip_deflate)
        pinflate_ratio_hint(r->par, gzip_trailer_ratio(r->fd, base + start, base + end));
    if (r->spool) {
        /* the pipe is read on while the threads decode and while a device
           starts to take the member over, not only as they ask */
        spool_ahead(r->spool, PIPE_AHEAD);
        pinflate_begin_spool(r->par, r->spool, start);
    } else {
        int fd;
        const uint8_t *mem = parallel_source(r, base + end, &fd);
        pinflate_begin(r->par, fd, mem, base + end, base + start);
    }
    if (may_pause)
        pinflate_pause_on(r->par, &r->pause_req);
    r->state = RD_PARALLEL;
    r->n_par++;
    return 1;
}

static int check_trailer(io_reader *r, uint32_t crc, uint64_t len);

/* zlib goes on with the member from the input's current byte, of which
 * `bits` are already decoded, as raw deflate with the window (wlen bytes)
 * before it, the member's CRC-32 and length so far carried on; `why` is
 * what -v says. Returns 0 or an error. */
static int zlib_resume(io_reader *r, const uint8_t *window, size_t wlen, unsigned bits,
                       uint32_t crc, uint64_t len, const char *why)
{
    if (inflateReset2(&r->zs, -15) != Z_OK ||
        (wlen && inflateSetDictionary(&r->zs, window, (uInt)wlen) != Z_OK))
        return source_error(r, IO_ERR_CORRUPT, "%s", "inflate reset failed");
    if (bits) {
        int rc = source_fill(r, 1);
        if (rc < 0)
            return rc;
        if (r->in_avail == 0)
            return source_error(r, IO_ERR_TRUNCATED, "%s at byte %llu: %s", member_kind(r),
                                (unsigned long long)member_at(r),
                                "unexpected end of compressed data");
        inflatePrime(&r->zs, (int)(8 - bits), r->in_next[0] >> bits);
        source_consume(r, 1);
    }
    r->tail_crc = crc;
    r->tail_len = len;
    r->raw_tail = !r->zip_deflate;
    r->state = r->zip_deflate ? RD_ZIP_DEFLATE : RD_MEMBER;
    r->n_seq++;
    r->seq_why = why;
    return 0;
}

static int zip_deflate_end(io_reader *r);

/* Whether at least PAR_MIN input bytes follow byte `start`: a file's size
 * says, a pipe is read that far into the window. 1, 0, or an error. */
static int enough_follows(io_reader *r, uint64_t start)
{
    if (!r->spool)
        return (uint64_t)r->file_size >= start + PAR_MIN;
    int rc = source_fill(r, (size_t)(start - r->raw_offset + PAR_MIN));
    if (rc < 0)
        return rc;
    return r->raw_offset + r->in_avail >= start + PAR_MIN;
}

/* At the start of the first member of a file with a seek index: its read
 * goes through the index's points. Returns 1, or an error. */
static int index_begin(io_reader *r)
{
    int rc = source_fill(r, 4096);
    if (rc < 0)
        return rc;
    r->member_off = 0;
    r->member_data = pinflate_header(r->in_next, r->in_avail);
    gzindex_stream_pause_on(r->ixs, &r->pause_req);
    r->state = RD_INDEXED;
    return 1;
}

/* Decodes the deflate data of the member at the input (its header hlen
 * bytes) into whole_buf, grown as it needs up to WHOLE_MAX bytes; the
 * trailer's length (modulo 2^32) is its first guess where the input ends
 * after the member. Returns the decoder's result: whole_len bytes decoded
 * to the bit *end of the input window. */
static int whole_decode(io_reader *r, size_t hlen, uint64_t *end)
{
    const uint8_t *in = r->in_next + hlen;
    size_t in_len = r->in_avail - hlen;
    size_t want = in_len >= 8 ? (size_t)source_le32(in + in_len - 4) : 0;
    want = want < ((size_t)64 << 10) ? (size_t)64 << 10 : want < WHOLE_MAX ? want : WHOLE_MAX;
    inflate_job j = {.in = in, .in_len = in_len, .stop_bit = UINT64_MAX, .out_limit = SIZE_MAX};
    int res;
    for (;;) {
        if (r->whole_cap < want) {
            want = (want + HUGEMEM_PAGE - 1) / HUGEMEM_PAGE * HUGEMEM_PAGE;
            uint8_t *b = hugemem_alloc(want);
            if (!b)
                return INFLATE_NEED_OUTPUT;
            if (j.out_len)
                memcpy(b, r->whole_buf, j.out_len);
            free(r->whole_buf);
            r->whole_buf = b;
            r->whole_cap = want;
        }
        j.out = r->whole_buf;
        j.out_cap = r->whole_cap;
        res = inflate_decode_bytes(&j);
        if (res != INFLATE_NEED_OUTPUT || j.out_cap >= WHOLE_MAX)
            break;
        want = j.out_cap * 2 < WHOLE_MAX ? j.out_cap * 2 : WHOLE_MAX;
    }
    r->whole_len = j.out_len;
    *end = j.bit;
    return res;
}

/* A member too small for the parallel decoder (less than PAR_MIN bytes to
 * the input's end, its header hlen bytes), so buffered whole: decoded on
 * this thread by the host's decoder (whole_decode) and its trailer checked,
 * it is handed out from memory (RD_WHOLE). Where the decoder stops short of
 * a valid end (invalid or cut data, a wrong trailer, more data than
 * WHOLE_MAX), zlib reads the member from its start as it was set to, so
 * that the data and the error are zlib's. Returns 0 or an error. */
static int whole_begin(io_reader *r, size_t hlen)
{
    int rc = source_fill(r, hlen + PAR_MIN);
    if (rc < 0)
        return rc;
    uint64_t end;
    if (whole_decode(r, hlen, &end) != INFLATE_END)
        return 0;
    size_t trailer = hlen + (size_t)((end + 7) / 8);
    if (trailer + 8 > r->in_avail ||
        source_le32(r->in_next + trailer) != crc_update(0, r->whole_buf, r->whole_len) ||
        source_le32(r->in_next + trailer + 4) != (uint32_t)r->whole_len)
        return 0;
    source_consume(r, trailer + 8);
    r->whole_pos = 0;
    r->state = RD_WHOLE;
    r->n_seq--;
    r->n_whole++;
    return 0;
}

/* At the start of a member, with its first bytes buffered: hands it to the
 * parallel decoder when it takes it and enough follows, else decodes it
 * whole when it can (whole_begin). Returns 1 when the parallel decoder took
 * it, 0 when it was decoded whole or zlib inflates it, or an error. */
static int start_parallel(io_reader *r)
{
    if (r->index && r->member_off == 0) /* decoded from the seek index's points */
        return index_begin(r);
    if (r->index_done)
        return source_error(r, IO_ERR_FORMAT,
                            "another gzip member follows the one the seek index %s covers",
                            r->index->path);
    r->n_seq++;
    r->seq_why = "gzip inside a stored zip member";
    if (r->src_off) /* the decoder reads whole files, not a zip member's */
        return 0;
    int rc = source_fill(r, 4096);
    if (rc < 0)
        return rc;
    size_t hlen = pinflate_header(r->in_next, r->in_avail);
    uint64_t start = r->member_data = r->raw_offset + hlen;
    r->seq_why = "a BGZF block alone, or a header with a CRC, unknown flags or long fields";
    if (!hlen)
        return 0;
    if (r->par && pinflate_continue(r->par, parallel_base(r) + start)) {
        /* the decoder went on into this member from the one before */
        r->n_seq--;
        r->state = RD_PARALLEL;
        r->n_par++;
        return 1;
    }
    r->seq_why = "less than 64 KiB of compressed data";
    if ((rc = enough_follows(r, start)) < 0)
        return rc;
    if (rc == 0)
        return whole_begin(r, hlen);
    r->n_seq--;
    return parallel_begin(r, start, (uint64_t)r->file_size);
}

/* Checks the 8-byte gzip trailer at the input against the member's CRC-32
 * and length, with zlib's words, and moves past it. */
static int check_trailer(io_reader *r, uint32_t crc, uint64_t len)
{
    int rc = source_fill(r, 8);
    if (rc < 0)
        return rc;
    if (r->in_avail < 8)
        return source_error(r, IO_ERR_TRUNCATED, "gzip member at byte %llu: %s",
                            (unsigned long long)r->member_off, "unexpected end of compressed data");
    if (source_le32(r->in_next) != crc)
        return source_error(r, IO_ERR_CRC, "gzip member at byte %llu: %s",
                            (unsigned long long)r->member_off, "incorrect data check");
    if (source_le32(r->in_next + 4) != (uint32_t)len)
        return source_error(r, IO_ERR_CRC, "gzip member at byte %llu: %s",
                            (unsigned long long)r->member_off, "incorrect length check");
    source_consume(r, 8);
    return 0;
}

/* Where the parallel decoder stopped inside a member (invalid or truncated
 * data): zlib goes on from that block boundary as raw deflate, with the
 * window before it, so the data and the error are exactly a sequential
 * read's. */
static int take_over_from_parallel(io_reader *r)
{
    uint64_t bit, len;
    uint32_t crc;
    const uint8_t *window;
    size_t wlen;
    pinflate_stop_point(r->par, &bit, &window, &wlen, &crc, &len);
    int rc = source_reposition(r, bit / 8 - parallel_base(r));
    if (rc == 0)
        rc = zlib_resume(r, window, wlen, (unsigned)(bit % 8), crc, len,
                         "the parallel decoder stopped at invalid, cut or oversized data: read "
                         "on in order from there");
    pinflate_end(r->par); /* the window was the decoder's */
    return rc;
}

/* Where the parallel decoder paused as asked (io_reader_pause): keeps the
 * point, stops the decoder's threads and ends the data for now. Returns 0
 * or an error. */
static ssize_t pause_parallel(io_reader *r)
{
    const uint8_t *window;
    if (!r->pause_win && !(r->pause_win = malloc(INFLATE_WINDOW)))
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    pinflate_pause_point(r->par, &r->pause_bit, &window, &r->pause_wlen, &r->pause_crc,
                         &r->pause_len);
    memcpy(r->pause_win, window, r->pause_wlen);
    r->raw_offset = r->pause_bit / 8 - parallel_base(r);
    /* the window is copied; the threads' last chunks are not waited for */
    pinflate_abandon(r->par);
    r->state = RD_PAUSED;
    return 0;
}

/* Reads from the parallel decoder into buf; at the member's end checks its
 * trailer and moves past it. Returns the bytes read (0 at the member's end,
 * state then RD_BETWEEN) or a negative io_error. */
static ssize_t read_parallel_member(io_reader *r, uint8_t *buf, size_t n)
{
    ssize_t k = pinflate_read(r->par, buf, n);
    if (k == PINFLATE_STOPPED) {
        int rc = take_over_from_parallel(r);
        return rc < 0 ? rc : 0;
    }
    if (k == PINFLATE_PAUSED)
        return pause_parallel(r);
    if (k < 0)
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    if (k > 0)
        r->raw_offset = pinflate_input_pos(r->par) - parallel_base(r);
    /* The stream's end is checked in the read that hands out its last byte,
     * as zlib checks it in the call that writes that byte. */
    if (k > 0 && !pinflate_finished(r->par))
        return k;
    uint64_t end, len;
    uint32_t crc;
    pinflate_result(r->par, &end, &crc, &len);
    if (!pinflate_member_end(r->par)) /* else it goes on with the next member */
        pinflate_end(r->par);
    int rc = source_reposition(r, end - parallel_base(r));
    if (rc == 0 && r->zip_deflate) {
        r->tail_crc = crc;
        r->tail_len = len;
        rc = zip_deflate_end(r);
        return rc < 0 ? rc : k;
    }
    if (rc == 0)
        rc = check_trailer(r, crc, len);
    if (rc < 0)
        return rc;
    r->state = RD_BETWEEN;
    return k;
}

/* Reads the first member through its seek index into buf; at its end checks
 * its trailer (its CRC-32 where the read began at its start) and moves past
 * it. Returns the bytes read (0 at the member's end, state then RD_BETWEEN)
 * or a negative io_error. */
static ssize_t read_indexed(io_reader *r, uint8_t *buf, size_t n)
{
    io_status why;
    ssize_t k = gzindex_stream_read(r->ixs, buf, n, &why);
    if (k < 0)
        return source_error(r, (int)k, "%s", why.text);
    if (k == 0 && !r->pause_win && !(r->pause_win = malloc(INFLATE_WINDOW)))
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    int paused = k == 0 ? gzindex_stream_paused(r->ixs, &r->pause_bit, r->pause_win,
                                                &r->pause_wlen, &r->pause_crc, &r->pause_len, &why)
                        : 0;
    if (paused < 0)
        return source_error(r, paused, "%s", why.text);
    if (k > 0)
        r->raw_offset = gzindex_stream_input_pos(r->ixs);
    if (paused) { /* io_reader_pause: a device goes on from this point */
        r->raw_offset = r->pause_bit / 8;
        r->index_paused = 1;
        r->state = RD_PAUSED;
        return 0;
    }
    uint64_t end_bit, len;
    uint32_t crc;
    int whole;
    if (!gzindex_stream_end(r->ixs, &end_bit, &whole, &crc, &len)) {
        if (k == 0) /* past the last chunk a part asked for */
            r->state = RD_END;
        return k;
    }
    int rc = source_reposition(r, (end_bit + 7) / 8);
    if (rc == 0 && !whole) { /* a part's chunks were checked one by one */
        rc = source_fill(r, 8);
        if (rc == 0 && r->in_avail < 8)
            rc = source_error(r, IO_ERR_TRUNCATED, "%s", "gzip member at byte 0: unexpected end "
                                                         "of compressed data");
        if (rc == 0)
            source_consume(r, 8);
    } else if (rc == 0 && (rc = check_trailer(r, crc, len)) < 0 && rc == IO_ERR_CRC &&
               !r->index->checked) {
        char line[IO_STATUS_TEXT];
        snprintf(line, sizeof line, "%.1000s (decoded from the access points of the seek index %.800s, "
                 "whose windows have no CRC-32: read without the index to tell)", r->st.text,
                 r->index->path);
        snprintf(r->st.text, sizeof r->st.text, "%s", line);
    }
    if (rc < 0)
        return rc;
    r->index_done = 1;
    r->state = RD_BETWEEN;
    return k;
}

/* After a member: starts the next one, or ends the data on zero bytes,
 * garbage or the end of the input. */
static int next_member(io_reader *r)
{
    int rc = source_fill(r, 2);
    if (rc < 0)
        return rc;
    if (r->in_avail == 0) {
        r->state = RD_END;
        return 0;
    }
    if (gzip_header_magic(r->in_next, r->in_avail)) {
        if (inflateReset2(&r->zs, 15 + 16) != Z_OK)
            return source_error(r, IO_ERR_CORRUPT, "%s", "inflate reset failed");
        r->raw_tail = 0;
        r->state = RD_MEMBER;
        r->member_off = r->raw_offset;
        rc = start_parallel(r);
        return rc < 0 ? rc : 0;
    }
    /* Not a member: zero padding is ignored silently, anything else is
     * trailing garbage; either way the data ends here. */
    for (;;) {
        for (size_t i = 0; i < r->in_avail; i++) {
            if (r->in_next[i]) {
                r->garbage = 1;
                r->state = RD_END;
                return 0;
            }
        }
        source_consume(r, r->in_avail);
        if (r->in_eof)
            break;
        rc = source_fill(r, 1);
        if (rc < 0)
            return rc;
    }
    r->state = RD_END;
    return 0;
}

/* One zlib inflate call into out (up to n bytes, *made of them written)
 * over the buffered input, refilled first when empty; zlib's result in *zr.
 * Returns 0, or a negative io_error when the refill fails. */
static int zlib_step(io_reader *r, uint8_t *out, size_t n, size_t *made, int *zr)
{
    *made = 0;
    if (r->in_avail == 0) {
        int rc = source_fill(r, 1);
        if (rc < 0)
            return rc;
    }
    size_t want = n < OUT_STEP ? n : OUT_STEP;
    size_t give = r->in_avail < UINT_MAX ? r->in_avail : UINT_MAX;
    r->zs.next_in = (Bytef *)(uintptr_t)r->in_next;
    r->zs.avail_in = (uInt)give;
    r->zs.next_out = out;
    r->zs.avail_out = (uInt)want;
    *zr = inflate(&r->zs, Z_NO_FLUSH);
    source_consume(r, give - r->zs.avail_in);
    *made = want - r->zs.avail_out;
    return 0;
}

/* Sets up the read of the next window while a batch of BGZF blocks
 * inflates, when the input is a regular file with more to read: into
 * inbuf2 (allocated here), starting with the window's bytes from pos on.
 * Returns whether it will be read. */
static int bgzf_plan_prefetch(io_reader *r, size_t pos, bgzf_window *w)
{
    if (!r->inbuf || r->file_size < 0 || r->in_eof)
        return 0;
    if (!r->inbuf2 && !(r->inbuf2 = hugemem_alloc_upto(IN_BLOCK, source_file_left(r))))
        return 0;
    *w = (bgzf_window){.dst = r->inbuf2, .src = r->in_next + pos, .keep = r->in_avail - pos,
                       .want = IN_BLOCK - (r->in_avail - pos), .fd = r->fd,
                       .off = (off_t)r->file_pos};
    return 1;
}

/* After a batch whose blocks all inflated: makes the window it read the
 * current one (the reader's file offset moves past those bytes). */
static int bgzf_take_prefetch(io_reader *r, size_t pos, const bgzf_window *w)
{
    uint8_t *t = r->inbuf;
    r->inbuf = r->inbuf2;
    r->inbuf2 = t;
    r->raw_offset += pos;
    r->in_next = r->inbuf;
    r->in_avail = w->keep + (size_t)w->got;
    r->file_pos = (uint64_t)w->off + (uint64_t)w->got;
    if ((size_t)w->got < w->want) {
        r->in_eof = 1;
        return source_check_shrunk(r);
    }
    return 0;
}

/* Blocked gzip (BGZF) at a member boundary: inflates the whole blocks that
 * are in the input window and fit in buf in parallel, each straight to its
 * place in buf (the ISIZE trailers give the offsets), while one thread reads
 * the next window. Returns the bytes written, 0 when the next member is not
 * a complete BGZF block that fits or does not inflate as one (the caller
 * then inflates it as a stream), or a negative io_error. */
static ssize_t read_bgzf(io_reader *r, uint8_t *buf, size_t n)
{
    if (!maybe_bgzf(r->in_next, r->in_avail)) /* no window to read for it */
        return 0;
    int rc = source_fill(r, IN_BLOCK);
    if (rc < 0)
        return rc;
    /* on the heap, not thread-local: every thread the process starts would
       fault in and zero its 40 KiB */
    if (!r->bgzf_jobs && !(r->bgzf_jobs = malloc(BGZF_MAX_JOBS * sizeof *r->bgzf_jobs)))
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    bgzf_job *jobs = r->bgzf_jobs;
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
    bgzf_window next;
    int prefetch = bgzf_plan_prefetch(r, pos, &next);
    bgzf_inflate(jobs, njobs, prefetch ? &next : NULL);
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
    if (prefetch && next.got >= 0) {
        int rc2 = bgzf_take_prefetch(r, pos, &next);
        return rc2 < 0 ? rc2 : (ssize_t)off;
    }
    source_consume(r, pos);
    return (ssize_t)off;
}

/* Passes over the whole BGZF blocks at the head of the input whose data
 * lies within the next n decoded bytes, by their headers, checking that
 * each inflates as one whole block (what the skip assumes; nothing else
 * reads them); returns the decoded bytes passed over or a negative
 * io_error. */
static int64_t skip_bgzf(io_reader *r, uint64_t n)
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
        rc = bgzf_check(r->inbuf ? r->fd : -1, io_gzip_member_error, r->in_next, span,
                        r->raw_offset, &used, &why);
        if (rc < 0)
            return source_error(r, rc, "%s", why.text);
        source_consume(r, span);
        skipped += data;
    }
    return (int64_t)skipped;
}

/* Gzip path: inflates straight into buf until it is full or the data ends. */
static ssize_t read_gzip(io_reader *r, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (r->state == RD_END || r->state == RD_PAUSED ||
            (r->state == RD_BETWEEN && r->stop_at_member_end))
            break;
        if (r->state == RD_BETWEEN) {
            ssize_t k = read_bgzf(r, buf + got, n - got);
            if (k < 0)
                return k;
            if (k > 0) {
                got += (size_t)k;
                continue;
            }
            int rc = next_member(r);
            if (rc < 0)
                return rc;
            continue;
        }
        if (r->state == RD_PARALLEL || r->state == RD_INDEXED) {
            ssize_t k = r->state == RD_INDEXED ? read_indexed(r, buf + got, n - got)
                                               : read_parallel_member(r, buf + got, n - got);
            if (k < 0)
                return k;
            got += (size_t)k;
            if (r->state == RD_BETWEEN && r->stop_at_member_end)
                return (ssize_t)got;
            continue;
        }
        if (r->state == RD_WHOLE) {
            size_t k = r->whole_len - r->whole_pos < n - got ? r->whole_len - r->whole_pos
                                                              : n - got;
            memcpy(buf + got, r->whole_buf + r->whole_pos, k);
            r->whole_pos += k;
            got += k;
            if (r->whole_pos == r->whole_len)
                r->state = RD_BETWEEN;
            continue;
        }
        size_t made;
        int zr, rc = zlib_step(r, buf + got, n - got, &made, &zr);
        if (rc < 0)
            return rc;
        if (r->raw_tail) {
            r->tail_crc = crc_update(r->tail_crc, buf + got, made);
            r->tail_len += made;
        }
        got += made;
        switch (zr) {
        case Z_OK:
            break;
        case Z_STREAM_END:
            if (r->raw_tail && (rc = check_trailer(r, r->tail_crc, r->tail_len)) < 0)
                return rc;
            r->state = RD_BETWEEN;
            if (r->stop_at_member_end)
                return (ssize_t)got;
            break;
        case Z_BUF_ERROR:
            /* No progress possible: out of input. */
            if (r->in_avail == 0 && r->in_eof)
                return source_error(r, IO_ERR_TRUNCATED, "gzip member at byte %llu: %s",
                                    (unsigned long long)r->member_off,
                                    "unexpected end of compressed data");
            if (r->in_avail != 0)
                return source_error(r, IO_ERR_CORRUPT, "gzip member at byte %llu: %s",
                                    (unsigned long long)r->member_off, "inflate made no progress");
            break;
        case Z_DATA_ERROR: {
            const char *m = r->zs.msg ? r->zs.msg : "invalid compressed data";
            if (!strcmp(m, "incorrect data check") || !strcmp(m, "incorrect length check"))
                return source_error(r, IO_ERR_CRC, "gzip member at byte %llu: %s",
                                    (unsigned long long)r->member_off, m);
            return source_error(r, IO_ERR_CORRUPT,
                                "gzip member at byte %llu: invalid compressed data: %s",
                                (unsigned long long)r->member_off, m);
        }
        case Z_MEM_ERROR:
            return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
        default:
            return source_error(r, IO_ERR_CORRUPT,
                                "gzip member at byte %llu: invalid compressed data: %s",
                                (unsigned long long)r->member_off,
                                r->zs.msg ? r->zs.msg : "inflate failed");
        }
    }
    return (ssize_t)got;
}

/* A deflated zip member's reader error at its data's file offset. */
#define ZIP_AT(r) (unsigned long long)(r)->zip.data_off

/* At the end of a deflated member's stream: it must have used all of the
 * member's compressed bytes, and its bytes must have the central
 * directory's CRC-32 and length (checked in that order, as gzip's trailer). */
static int zip_deflate_end(io_reader *r)
{
    r->state = RD_END;
    if (r->tail_crc != r->zip.crc)
        return source_error(r, IO_ERR_CRC, "deflated data at byte %llu: %s", ZIP_AT(r),
                            "incorrect data check");
    if (r->tail_len != r->zip.size)
        return source_error(r, IO_ERR_CRC, "deflated data at byte %llu: %s", ZIP_AT(r),
                            "incorrect length check");
    if (r->raw_offset != r->zip.comp_size)
        return source_error(r, IO_ERR_CORRUPT,
                            "deflated data at byte %llu: the stream ends %llu bytes before the "
                            "member's data",
                            ZIP_AT(r), (unsigned long long)(r->zip.comp_size - r->raw_offset));
    return 0;
}

/* Deflated zip member: inflates its raw deflate stream straight into buf
 * until buf is full or the stream ends, keeping the CRC-32 and length of
 * what it wrote for zip_deflate_end. */
static ssize_t read_zip_deflate(io_reader *r, uint8_t *buf, size_t n)
{
    size_t got = 0;
    if (r->state == RD_ZIP_DEFLATE && r->tail_len == 0 && r->raw_offset == 0 &&
        r->zip.comp_size >= PAR_MIN) {
        int rc = parallel_begin(r, 0, r->zip.comp_size);
        if (rc < 0)
            return rc;
    }
    while (got < n && r->state == RD_PARALLEL) {
        ssize_t k = read_parallel_member(r, buf + got, n - got);
        if (k < 0)
            return k;
        if (r->state == RD_PARALLEL)
            r->tail_len += (uint64_t)k;
        if (r->tail_len > r->zip.size)
            return source_error(r, IO_ERR_CRC, "deflated data at byte %llu: %s", ZIP_AT(r),
                                "incorrect length check");
        got += (size_t)k;
    }
    while (got < n && r->state == RD_ZIP_DEFLATE) {
        size_t out;
        int zr, rc = zlib_step(r, buf + got, n - got, &out, &zr);
        if (rc < 0)
            return rc;
        r->tail_crc = crc_update(r->tail_crc, buf + got, out);
        r->tail_len += out;
        got += out;
        if (zr == Z_STREAM_END) {
            if ((rc = zip_deflate_end(r)) < 0)
                return rc;
        } else if (r->tail_len > r->zip.size) {
            return source_error(r, IO_ERR_CRC, "deflated data at byte %llu: %s", ZIP_AT(r),
                                "incorrect length check");
        } else if (zr == Z_BUF_ERROR && r->in_avail == 0 && r->in_eof) {
            return source_error(r, IO_ERR_TRUNCATED, "deflated data at byte %llu: %s", ZIP_AT(r),
                                "unexpected end of compressed data");
        } else if (zr == Z_BUF_ERROR && r->in_avail != 0) {
            return source_error(r, IO_ERR_CORRUPT, "deflated data at byte %llu: %s", ZIP_AT(r),
                                "inflate made no progress");
        } else if (zr == Z_MEM_ERROR) {
            return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            return source_error(r, IO_ERR_CORRUPT,
                                "deflated data at byte %llu: invalid compressed data: %s",
                                ZIP_AT(r), r->zs.msg ? r->zs.msg : "inflate failed");
        }
    }
    return (ssize_t)got;
}

/* Makes r read zip member m, whose data must lie within the `total` bytes
 * of the file: stored ones on the plain path, deflated ones through
 * read_zip_deflate. The byte source (a descriptor at the data, or memory)
 * is set by the caller. */
static int zip_member_start(io_reader *r, const io_zip_member *m, uint64_t total, io_status *st)
{
    if (m->data_off > total || m->comp_size > total - m->data_off || m->comp_size > INT64_MAX)
        return io_fail(st, IO_ERR_FORMAT,
                       "the member's data (%llu bytes at byte %llu) lies outside the file",
                       (unsigned long long)m->comp_size, (unsigned long long)m->data_off);
    if (m->method == IO_ZIP_STORED && m->comp_size != m->size)
        return io_fail(st, IO_ERR_FORMAT, "a stored member's compressed size is not its size");
    if (m->method != IO_ZIP_STORED && m->method != IO_ZIP_DEFLATED)
        return io_fail(st, IO_ERR_FORMAT, "compression method %d is not supported", m->method);
    r->zip = *m;
    r->file_size = (int64_t)m->comp_size;
    r->state = RD_PLAIN;
    if (m->method == IO_ZIP_DEFLATED) {
        memset(&r->zs, 0, sizeof r->zs);
        if (inflateInit2(&r->zs, -15) != Z_OK)
            return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        r->zinit = 1;
        r->zip_deflate = 1;
        r->tail_crc = (uint32_t)crc32(0, Z_NULL, 0);
        r->state = RD_ZIP_DEFLATE;
    }
    return 0;
}

/* Opens member m of the zip archive at path (see reader.h). */
int io_reader_open_zip_member(io_reader **out, const char *path, const io_zip_member *m,
                              io_status *st)
{
    io_reader *r = reader_new(out, st);
    if (!r)
        return IO_ERR_NOMEM;
    int rc = open_file(r, path, st);
    if (rc == 0 && (r->file_size < 0 || !r->close_fd))
        rc = io_fail(st, IO_ERR_OPEN, "%s", "a zip archive is read from a regular file only");
    if (rc == 0)
        rc = zip_member_start(r, m, (uint64_t)r->file_size, st);
    if (rc < 0) {
        io_reader_close(r);
        return rc;
    }
    r->src_off = m->data_off;
    r->src_len = m->comp_size;
    r->file_pos = m->data_off;
    *out = r;
    return 0;
}

/* Opens member m of a zip archive in memory (see reader.h). */
int io_reader_open_zip_member_mem(io_reader **out, const void *data, size_t len,
                                  const io_zip_member *m, io_status *st)
{
    io_reader *r = reader_new(out, st);
    if (!r)
        return IO_ERR_NOMEM;
    int rc = zip_member_start(r, m, len, st);
    if (rc < 0) {
        io_reader_close(r);
        return rc;
    }
    static const uint8_t empty[1];
    r->mem = len ? (const uint8_t *)data + m->data_off : empty;
    r->mem_len = (size_t)m->comp_size;
    r->in_next = r->mem;
    *out = r;
    return 0;
}

/* Reads decoded bytes the way the reader's source asks: plain, a deflated
 * zip member, or gzip. */
static ssize_t read_some(io_reader *r, uint8_t *buf, size_t n)
{
    if (r->state == RD_PLAIN)
        return source_read_plain(r, buf, n);
    if (r->zip_deflate)
        return read_zip_deflate(r, buf, n);
    return read_gzip(r, buf, n);
}

/* Reads up to n bytes; fewer only at the end of the data. */
ssize_t io_reader_read(io_reader *r, void *buf, size_t n)
{
    if (r->st.code)
        return r->st.code;
    if (n > SSIZE_MAX)
        n = SSIZE_MAX;
    if (n > r->left)
        n = (size_t)r->left;
    if (n == 0)
        return 0;
    ssize_t got = read_some(r, buf, n);
    if (got > 0) {
        r->pos += (uint64_t)got;
        if (r->left != UINT64_MAX)
            r->left -= (uint64_t)got;
    }
    return got;
}

/* Reads up to the end of the gzip member being inflated (see reader.h). */
ssize_t io_reader_read_member_rest(io_reader *r, void *buf, size_t n)
{
    if (r->st.code)
        return r->st.code;
    if (!r->gzip || (r->state != RD_MEMBER && r->state != RD_PARALLEL && r->state != RD_WHOLE))
        return 0;
    r->stop_at_member_end = 1;
    ssize_t got = io_reader_read(r, buf, n);
    r->stop_at_member_end = 0;
    return got;
}

/* The fd and file offset of the next member, at a member boundary of gzip
 * in a regular file (see reader.h). */
int io_reader_member_boundary(const io_reader *r, int *fd, uint64_t *file_off)
{
    if (r->st.code || !r->gzip || !r->inbuf || r->file_size < 0 || r->state != RD_BETWEEN)
        return 0;
    *fd = r->fd;
    *file_off = r->raw_offset;
    return 1;
}

/* Continues at a member boundary that the caller reached by reading the
 * file itself (see reader.h). */
int io_reader_resume(io_reader *r, uint64_t file_off, uint64_t pos)
{
    r->st.code = 0;
    r->st.text[0] = 0;
    int rc = source_reposition(r, file_off);
    if (rc < 0)
        return rc;
    r->state = RD_BETWEEN;
    r->garbage = 0;
    if (r->left != UINT64_MAX)
        r->left -= pos - r->pos;
    r->pos = pos;
    return 0;
}

/* The deflate data of the member being read, for a device (see reader.h). */
int io_reader_stream_member(const io_reader *r, int *fd, uint64_t *data_off, uint64_t *file_size)
{
    /* the first member only: its decoded bytes are the data's from position 0 */
    if ((r->state != RD_PARALLEL && r->state != RD_PAUSED &&
         !(r->state == RD_INDEXED && !r->index_seek)) ||
        !r->inbuf || (r->src_off && !r->zip_deflate) || r->file_size < 0 || r->member_off)
        return 0;
    *fd = r->fd;
    *data_off = parallel_base(r) + r->member_data;
    *file_size = parallel_base(r) + (uint64_t)r->file_size;
    return 1;
}

/* The deflate data of a pipe's first member, for a device (see reader.h). */
int io_reader_stream_spool(const io_reader *r, spool **s, uint64_t *data_off)
{
    if ((r->state != RD_PARALLEL && r->state != RD_PAUSED) || !r->spool || r->zip_deflate ||
        r->src_off || r->member_off ||
        (r->state == RD_PARALLEL && pinflate_input_pos(r->par) > r->member_data))
        return 0;
    *s = r->spool;
    *data_off = r->member_data;
    return 1;
}

/* The bytes read from r's pipe so far (see reader.h). */
int64_t io_reader_pipe_received(const io_reader *r)
{
    return r->spool ? (int64_t)spool_received(r->spool) : -1;
}

/* Asks the parallel decoder to pause the first member (see reader.h). */
void io_reader_pause(io_reader *r)
{
    atomic_store(&r->pause_req, 1);
}

/* Where the first member paused (see reader.h). */
int io_reader_pause_point(const io_reader *r, uint64_t *bit, const uint8_t **window, size_t *wlen,
                          uint32_t *crc, uint64_t *len)
{
    if (r->state != RD_PAUSED)
        return 0;
    *bit = r->pause_bit;
    *window = r->pause_win;
    *wlen = r->pause_wlen;
    *crc = r->pause_crc;
    *len = r->pause_len;
    return 1;
}

/* The parallel decoder goes on with the member from file bit `bit`, a
 * block boundary, with the window before it and the CRC-32 and length so
 * far, where it would read the member from its start: a file's or a
 * pipe's (not a gzip member inside a stored zip member), with at least
 * PAR_MIN bytes after the point. Returns 1 when it did, 0 when zlib goes on,
 * or an error. */
static int parallel_resume(io_reader *r, uint64_t bit, const uint8_t *window, size_t wlen,
                           uint32_t crc, uint64_t len)
{
    if (r->src_off && !r->zip_deflate)
        return 0;
    int rc = enough_follows(r, bit / 8 - parallel_base(r));
    if (rc <= 0)
        return rc;
    if (!r->par && pinflate_create(&r->par, par_cpus(), 0) < 0)
        return source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
    pinflate_members(r->par, 0); /* the reader checks the trailer and what follows */
    pinflate_point at = {.bit = bit, .window = window, .wlen = wlen, .crc = crc, .len = len};
    uint64_t src_len = parallel_base(r) + (uint64_t)r->file_size;
    int fd;
    const uint8_t *mem = r->spool ? NULL : parallel_source(r, src_len, &fd);
    if (r->spool)
        pinflate_begin_spool_at(r->par, r->spool, &at);
    else
        pinflate_begin_at(r->par, fd, mem, src_len, &at);
    r->state = RD_PARALLEL;
    r->n_par++;
    return 1;
}

/* Reads on where a device stopped inflating the member, in parallel where
 * enough follows, else in order (see reader.h). */
int io_reader_continue_member(io_reader *r, uint64_t bit, int final, const uint8_t *window,
                              size_t wlen, uint32_t crc, uint64_t len, uint64_t pos,
                              const char *why)
{
    if (r->index) /* the device took the indexed member over */
        r->index_done = 1;
    if (r->state == RD_PARALLEL) { /* its decoder's work so far is the device's */
        pinflate_end(r->par);
        r->n_par--;
    } else if (r->state == RD_PAUSED) { /* the decoder ran the start: said apart */
        r->n_par -= !r->index_paused;
        r->n_paused++;
    }
    r->st.code = 0;
    r->st.text[0] = 0;
    r->n_device += len > 0;
    if (r->left != UINT64_MAX)
        r->left -= pos - r->pos;
    r->pos = pos;
    int rc = source_reposition(r, (final ? (bit + 7) / 8 : bit / 8) - parallel_base(r));
    if (rc < 0)
        return rc;
    if (!final && (rc = parallel_resume(r, bit, window, wlen, crc, len)) != 0)
        return rc < 0 ? rc : 0;
    if (!final)
        return zlib_resume(r, window, wlen, (unsigned)(bit % 8), crc, len, why);
    if (r->zip_deflate) { /* the central directory's CRC-32 and length, and its end */
        r->tail_crc = crc;
        r->tail_len = len;
        return zip_deflate_end(r);
    }
    r->state = RD_BETWEEN;
    return check_trailer(r, crc, len);
}

/* The line of data past what the header promises (see reader.h). */
int io_fail_more_data(io_status *st, uint64_t limit)
{
    return io_fail(st, IO_ERR_FORMAT, "the input holds more than the expected %llu bytes of data",
                   (unsigned long long)limit);
}

/* What a read of r's input in order says of its member (see reader.h): a
 * reader of its own, from the start, up to the byte after the data. */
int io_reader_member_verdict(const io_reader *r, uint64_t data_start, uint64_t limit,
                             io_status *st)
{
    io_reader *v;
    io_clear(st);
    if (!r->path || r->spool) /* a pipe cannot be read again */
        return 0;
    int rc = r->zip_deflate ? io_reader_open_zip_member(&v, r->path, &r->zip, st)
                            : io_reader_open(&v, r->path, st);
    if (rc < 0)
        return rc;
    uint64_t end = limit == UINT64_MAX || data_start > UINT64_MAX - limit - 1
                       ? UINT64_MAX : data_start + limit + 1, got = 0;
    size_t room = 1 << 20;
    uint8_t *buf = malloc(room);
    ssize_t k = buf ? 1 : io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    while (k > 0 && got < end) {
        size_t want = end - got < room ? (size_t)(end - got) : room;
        if ((k = io_reader_read(v, buf, want)) > 0)
            got += (uint64_t)k;
    }
    if (k < 0 && buf)
        io_pass(st, io_reader_status(v));
    else if (got == end && end != UINT64_MAX)
        io_fail_more_data(st, limit);
    free(buf);
    io_reader_close(v);
    return st->code;
}

/* The reader's message for the gzip member at file_off of the regular file
 * open as fd, read from there on as a whole-file read would, up to `upto`
 * decoded bytes (see reader.h). It reads at offsets of its own, so that
 * another reader of fd (a ring's, on another thread) goes on undisturbed. */
int io_gzip_member_error(int fd, uint64_t file_off, uint64_t upto, io_status *st)
{
    io_reader *unused, *r = reader_new(&unused, NULL);
    int rc = IO_ERR_NOMEM;
    if (!r) {
        io_fail(st, rc, "%s", "out of memory");
        goto out_close;
    }
    r->fd = fd; /* not closed with r */
    struct stat sb;
    if (fstat(r->fd, &sb) < 0) {
        rc = io_fail(st, IO_ERR_READ, "%s", strerror(errno));
        goto out_close;
    }
    r->file_size = (int64_t)sb.st_size;
    r->file_pos = file_off;
    if (!(r->inbuf = hugemem_alloc_upto(IN_BLOCK, source_file_left(r)))) {
        io_fail(st, rc, "%s", "out of memory");
        goto out_close;
    }
    r->raw_offset = file_off;
    r->in_next = r->inbuf;
    if ((rc = detect(r, st)) < 0)
        goto out_close;
    /* the first member alone, read on past its BGZF length as a whole-file
     * read would */
    rc = r->gzip ? next_member(r) : 0;
    r->stop_at_member_end = 1;
    uint8_t scratch[1 << 16];
    ssize_t k = 0;
    while (rc >= 0 &&
           (r->state == RD_MEMBER || r->state == RD_PARALLEL || r->state == RD_WHOLE) &&
           upto > 0 &&
           (k = io_reader_read(r, scratch, upto < sizeof scratch ? (size_t)upto : sizeof scratch)) > 0)
        upto -= (uint64_t)k;
    if (rc >= 0 && k < 0)
        rc = (int)k;
    if (rc < 0)
        io_fail(st, rc, "%s", r->st.text);
out_close:
    io_reader_close(r);
    return rc < 0 ? rc : 0;
}

/* Decoded bytes handed out so far. */
uint64_t io_reader_tell(const io_reader *r)
{
    return r->pos;
}

/* Reads the first gzip member through a seek index (see reader.h). */
int io_reader_set_index(io_reader *r, gzindex *x, io_status *st)
{
    int rc = 0;
    if (!r->gzip || !r->inbuf || r->file_size < 0 || !r->close_fd || r->src_off || r->spool)
        rc = io_fail(st, IO_ERR_FORMAT, "the seek index %s is for a gzip file, and this is %s",
                     x->path, r->gzip ? "standard input or a pipe" : "not gzip");
    else if (r->state != RD_BETWEEN || r->raw_offset != 0)
        rc = io_fail(st, IO_ERR_FORMAT, "%s", "a seek index is set before the first read");
    else if ((rc = gzindex_check(x, r->fd, (uint64_t)r->file_size, st)) == 0) {
        int fd; /* the chunks decode in place from the file mapped, as the parallel decoder's */
        const uint8_t *mem = parallel_source(r, (uint64_t)r->file_size, &fd);
        if (gzindex_stream_open(&r->ixs, x, r->fd, mem, (uint64_t)r->file_size, 0) < 0)
            rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    }
    if (rc < 0) {
        gzindex_free(x);
        return rc;
    }
    r->index = x;
    return 0;
}

/* Refuses inputs that cannot be positioned: 0, or IO_ERR_SEEK (sticky). */
static int seekable(io_reader *r)
{
    if (r->st.code)
        return r->st.code;
    if (!r->inbuf || r->file_size < 0)
        return source_error(r, IO_ERR_SEEK, "%s",
                            "only a regular file can be read from an offset (not stdin or a pipe)");
    if (r->zip_deflate)
        return source_error(r, IO_ERR_SEEK, "%s",
                            "a deflated zip member cannot be read from an offset: write the "
                            "archive with np.savez (stored members), not np.savez_compressed");
    return 0;
}

/* Decoded size of a seekable input. */
int io_reader_data_size(io_reader *r, uint64_t *size)
{
    int rc = seekable(r);
    if (rc < 0)
        return rc;
    if (!r->gzip || r->index) {
        *size = r->index ? r->index->usize : (uint64_t)r->file_size;
        return 0;
    }
    io_status why;
    uint64_t coff;
    rc = bgzf_walk(r->fd, 0, (uint64_t)r->file_size, UINT64_MAX, &coff, size, NULL, &why);
    return rc < 0 ? source_error(r, rc, "%s", why.text) : 0;
}

/* A digest of a seekable input (see reader.h): FNV-1a 64 over its size and
 * every BGZF block's CRC-32 and ISIZE, or over its size and FINGERPRINT_SAMPLES
 * pieces of a plain file spread evenly over it. */
int io_reader_fingerprint(io_reader *r, uint64_t *digest)
{
    enum { FINGERPRINT_SAMPLES = 64, FINGERPRINT_PIECE = 4096 };
    int rc = seekable(r);
    if (rc < 0)
        return rc;
    uint64_t d = 0xcbf29ce484222325ull, size = (uint64_t)r->file_size, coff, u;
    for (int i = 0; i < 8; i++)
        d = (d ^ (uint8_t)(size >> (8 * i))) * 0x100000001b3ull;
    if (r->gzip && !r->index) { /* indexed gzip is sampled as a plain file is */
        io_status why;
        rc = bgzf_walk(r->fd, 0, size, UINT64_MAX, &coff, &u, &d, &why);
        if (rc < 0)
            return source_error(r, rc, "%s", why.text);
    } else {
        uint8_t piece[FINGERPRINT_PIECE];
        for (uint64_t i = 0; i < FINGERPRINT_SAMPLES && size; i++) {
            uint64_t at = size > sizeof piece ? (size - sizeof piece) / (FINGERPRINT_SAMPLES - 1) * i
                                              : 0;
            ssize_t k = io_pread_full(r->fd, piece, sizeof piece, at);
            if (k < 0)
                return source_error(r, IO_ERR_READ, "%s", strerror((int)-k));
            for (ssize_t j = 0; j < k; j++)
                d = (d ^ piece[j]) * 0x100000001b3ull;
        }
    }
    *digest = d;
    return 0;
}

/* Moves to decoded byte `offset` and limits what is read after it. */
int io_reader_seek(io_reader *r, uint64_t offset, uint64_t length)
{
    int rc = seekable(r);
    if (rc < 0)
        return rc;
    uint64_t coff = offset, uoff = offset;
    if (r->index && !r->index->checked && (offset || length != UINT64_MAX))
        return source_error(r, IO_ERR_SEEK,
                            "the seek index %s has no CRC-32 of its chunks (gpubatch index "
                            "writes them), and a part of the file read from it could not be "
                            "checked: make one with `gpubatch index`", r->index->path);
    if (r->index) { /* from the access point before offset, no further than the range */
        gzindex_stream_seek(r->ixs, offset, length == UINT64_MAX || length > UINT64_MAX - offset
                                                ? UINT64_MAX : offset + length);
        r->index_seek = 1; /* a part: read on the host (no device takes it over) */
        r->state = RD_INDEXED;
        r->garbage = 0;
        r->pos = offset;
        r->left = length;
        return 0;
    }
    if (r->gzip) {
        io_status why;
        rc = bgzf_walk(r->fd, 0, (uint64_t)r->file_size, offset, &coff, &uoff, NULL, &why);
        if (rc < 0)
            return source_error(r, rc, "%s", why.text);
        r->state = RD_BETWEEN;
        r->garbage = 0;
    }
    if ((rc = source_reposition(r, coff)) < 0)
        return rc;
    r->left = UINT64_MAX;
    r->pos = uoff;
    while (r->pos < offset) { /* the start of the block that holds offset */
        uint8_t skip[4096];
        uint64_t want = offset - r->pos < sizeof skip ? offset - r->pos : sizeof skip;
        ssize_t k = io_reader_read(r, skip, (size_t)want);
        if (k < 0)
            return (int)k;
        if (k == 0)
            break; /* past the end: reads give nothing */
    }
    r->pos = offset;
    r->left = length;
    return 0;
}

/* Checks the BGZF blocks that hold decoded bytes [from, to) (see reader.h). */
int io_reader_check_blocks(io_reader *r, uint64_t from, uint64_t to)
{
    int rc = seekable(r);
    if (rc < 0 || !r->gzip || r->index) /* indexed chunks are checked as they are read */
        return rc;
    io_status why;
    uint64_t c0 = 0, c1, u = 0;
    if ((from &&
         (rc = bgzf_walk(r->fd, 0, (uint64_t)r->file_size, from, &c0, &u, NULL, &why)) < 0) ||
        (rc = bgzf_walk(r->fd, c0, (uint64_t)r->file_size, to == UINT64_MAX ? to : to - u, &c1, &u,
                        NULL, &why)) < 0 ||
        (rc = bgzf_check_file(r->fd, io_gzip_member_error, c0, c1, &why)) < 0)
        return source_error(r, rc, "%s", why.text);
    return 0;
}

/* Discards the next n decoded bytes (see reader.h). */
int64_t io_reader_skip(io_reader *r, uint64_t n)
{
    if (r->st.code)
        return r->st.code;
    if (n > r->left)
        n = r->left;
    int64_t rc = 0;
    uint64_t done = 0;
    uint8_t *scratch = NULL;
    if (r->index && r->index->checked && !r->index_done &&
        (r->state == RD_INDEXED || (r->state == RD_BETWEEN && r->raw_offset == 0))) {
        /* from the access point before the target; its chunks are checked one by one */
        if (r->state == RD_BETWEEN && (rc = index_begin(r)) < 0)
            return rc;
        uint64_t to = r->index->usize - r->pos < n ? r->index->usize : r->pos + n;
        gzindex_stream_seek(r->ixs, to, UINT64_MAX);
        r->index_seek = 1;
        done = to - r->pos;
        n = done;
    }
    if (r->state == RD_PLAIN && r->inbuf && r->file_size >= 0) {
        rc = source_skip_plain(r, n);
        done = rc > 0 ? (uint64_t)rc : 0;
        n = rc < 0 || r->in_eof ? done : n;
    }
    while (rc >= 0 && done < n) {
        if (r->state == RD_BETWEEN) {
            rc = skip_bgzf(r, n - done);
            if (rc < 0)
                break;
            done += (uint64_t)rc;
            if (done == n)
                break;
        }
        if (!scratch && !(scratch = malloc(SKIP_SCRATCH))) {
            rc = source_error(r, IO_ERR_NOMEM, "%s", "out of memory");
            break;
        }
        size_t want = n - done < SKIP_SCRATCH ? (size_t)(n - done) : SKIP_SCRATCH;
        rc = read_some(r, scratch, want);
        if (rc <= 0)
            break;
        done += (uint64_t)rc;
    }
    free(scratch);
    if (rc < 0)
        return rc;
    r->pos += done;
    if (r->left != UINT64_MAX)
        r->left -= done;
    return (int64_t)done;
}

/* Ends the data n decoded bytes from here. */
void io_reader_limit(io_reader *r, uint64_t n)
{
    r->left = n;
}

/* Whether r's next bytes lie as they are in a regular file: plain data of
 * a file (not stdin) or of a stored zip member, no error so far. */
static int viewable(const io_reader *r)
{
    return !r->st.code && r->path && r->inbuf && r->file_size >= 0 && r->state == RD_PLAIN &&
           !r->zip_deflate;
}

/* The file offset of the byte `back` before r's position where views may
 * be taken (see reader.h): a one-page mapping tried there says whether the
 * file's system maps files at all. */
int64_t io_reader_view_offset(const io_reader *r, size_t back)
{
    if (!viewable(r) || back > r->raw_offset)
        return -1;
    uint64_t at = r->src_off + r->raw_offset - back;
    void *probe = mmap(NULL, 4096, PROT_READ, MAP_SHARED, r->fd, (off_t)(at / 4096 * 4096));
    if (probe == MAP_FAILED)
        return -1;
    munmap(probe, 4096);
    return (int64_t)at;
}

/* Steps back over the last n bytes read (see reader.h). */
int io_reader_unread(io_reader *r, size_t n)
{
    if (!viewable(r) || n > r->raw_offset || n > r->pos)
        return source_error(r, IO_ERR_SEEK, "%s", "the input cannot be read again");
    int rc = source_reposition(r, r->raw_offset - n);
    if (rc < 0)
        return rc;
    r->pos -= n;
    if (r->left != UINT64_MAX)
        r->left += n;
    return 0;
}

/* Maps the next bytes instead of reading them (see reader.h). */
ssize_t io_reader_view(io_reader *r, size_t n, io_view *v)
{
    *v = (io_view){.entry = -1};
    if (r->st.code)
        return r->st.code;
    if (!viewable(r))
        return source_error(r, IO_ERR_SEEK, "%s", "the input cannot be mapped");
    uint64_t size = (uint64_t)r->file_size, at = r->raw_offset;
    uint64_t have = at < size ? size - at : 0;
    if (n > r->left)
        n = (size_t)r->left;
    if (n > have)
        n = (size_t)have;
    if (n == 0) {
        r->in_eof = 1;
        int rc = source_check_shrunk(r);
        return rc < 0 ? rc : 0;
    }
    int rc = io_view_map(v, r->fd, r->src_off + at, n, r->path);
    if (rc == -EFAULT) {
        rc = source_check_shrunk(r);
        return rc < 0 ? rc : source_error(r, IO_ERR_READ, "%s", "the file shrank while being read");
    }
    if (rc < 0)
        return source_error(r, IO_ERR_READ, "cannot map the file: %s", strerror(-rc));
    int64_t k = io_reader_skip(r, n);
    if (k != (int64_t)n) {
        io_view_unmap(v);
        return k < 0 ? k : source_error(r, IO_ERR_READ, "%s", "the file shrank while being read");
    }
    return (ssize_t)n;
}

/* How the members were inflated (see reader.h). */
void io_reader_describe(const io_reader *r, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    if (r->n_bgzf)
        at += (size_t)snprintf(buf + at, len - at, "BGZF blocks: %llu on %d threads; ",
                               (unsigned long long)r->n_bgzf, par_cpus());
    if (r->n_par && at < len) {
        uint64_t chunks, redone;
        pinflate_counts(r->par, &chunks, &redone);
        at += (size_t)snprintf(buf + at, len - at,
                               "single deflate streams: %llu, each on %d threads in parallel (%llu "
                               "chunks, %llu of them speculatively, %llu of those two at once on "
                               "a thread, %llu decoded again in order); ",
                               (unsigned long long)r->n_par, par_cpus(), (unsigned long long)chunks,
                               (unsigned long long)pinflate_speculated(r->par),
                               (unsigned long long)pinflate_paired(r->par),
                               (unsigned long long)redone);
    }
    if (r->ixs && at < len)
        at += (size_t)snprintf(buf + at, len - at,
                               "a gzip member from the access points of the seek index %s: %llu "
                               "chunks on %d threads (%llu pairs of them two at once on a "
                               "thread); ", r->index->path,
                               (unsigned long long)gzindex_stream_chunks(r->ixs), par_cpus(),
                               (unsigned long long)gzindex_stream_pairs(r->ixs));
    if (r->n_device && at < len)
        at += (size_t)snprintf(buf + at, len - at,
                               "single deflate streams inflated on the GPU: %llu; ",
                               (unsigned long long)r->n_device);
    if (r->n_paused && at < len)
        at += (size_t)snprintf(buf + at, len - at,
                               "of them begun on %d host threads while the GPU started: %llu; ",
                               par_cpus(), (unsigned long long)r->n_paused);
    if (r->n_whole && at < len)
        at += (size_t)snprintf(buf + at, len - at,
                               "gzip members of less than 64 KiB decoded whole on the reading "
                               "thread: %llu; ", (unsigned long long)r->n_whole);
    if (r->n_seq && at < len)
        at += (size_t)snprintf(buf + at, len - at, "%s inflated in order: %llu (%s); ",
                               r->zip_deflate ? "deflated zip members" : "gzip members",
                               (unsigned long long)r->n_seq, r->seq_why);
    if (at >= 2 && at < len)
        buf[at - 2] = 0;
}

/* Nonzero on the gzip path. */
int io_reader_compressed(const io_reader *r)
{
    return r->gzip;
}

/* Nonzero for gzip or a deflated zip member (see reader.h). */
int io_reader_deflated(const io_reader *r)
{
    return r->gzip || r->zip_deflate;
}

/* Nonzero when bytes other than zeros followed the last gzip member. */
int io_reader_trailing_garbage(const io_reader *r)
{
    return r->garbage;
}

/* Size of the regular file (or the memory) in bytes, else -1. */
int64_t io_reader_file_size(const io_reader *r)
{
    return r->file_size;
}

/* The size of a file, or of a pipe once read to its end (see reader.h). */
int64_t io_reader_input_size(const io_reader *r)
{
    if (r->file_size >= 0 || !r->spool)
        return r->file_size;
    uint64_t size = spool_size(r->spool);
    return size == SPOOL_UNKNOWN ? -1 : (int64_t)size;
}

/* Input bytes consumed so far. */
uint64_t io_reader_raw_offset(const io_reader *r)
{
    return r->raw_offset;
}

/* Device and inode of an opened file; zeros and -1 for stdin or memory. */
int io_reader_identity(const io_reader *r, uint64_t *dev, uint64_t *ino)
{
    if (!r->has_id) {
        *dev = 0;
        *ino = 0;
        return -1;
    }
    *dev = r->dev;
    *ino = r->ino;
    return 0;
}

/* The file's modification time when it was opened (see reader.h). */
int io_reader_mtime(const io_reader *r, int64_t *sec, uint32_t *nsec)
{
    if (!r->has_id)
        return -1;
    *sec = r->mtime_s;
    *nsec = r->mtime_ns;
    return 0;
}

/* The sticky error's text, or "". */
const char *io_reader_error(const io_reader *r)
{
    return r->st.code ? r->st.text : "";
}

/* The sticky error as a value. */
const io_status *io_reader_status(const io_reader *r)
{
    return &r->st;
}

/* Releases the zlib state, the buffer and the descriptor. */
void io_reader_close(io_reader *r)
{
    if (!r)
        return;
    if (r->zinit)
        inflateEnd(&r->zs);
    pinflate_destroy(r->par);
    gzindex_stream_close(r->ixs);
    io_view_unmap(&r->par_view); /* no decoder thread reads it any more */
    gzindex_free(r->index);
    spool_destroy(r->spool);
    free(r->pause_win);
    free(r->whole_buf);
    free(r->bgzf_jobs);
    if (r->close_fd)
        close(r->fd);
    else if (r->is_stdin && r->file_size >= 0) /* a regular file: left past what was read, as
                                                   read(2) leaves it */
        lseek(r->fd, (off_t)r->file_pos, SEEK_SET);
    free(r->inbuf);
    free(r->inbuf2);
    free(r->path);
    free(r);
}

/* Generic text for each io_error code. */
const char *io_strerror(int code)
{
    switch (code) {
    case IO_OK:
        return "success";
    case IO_ERR_OPEN:
        return "cannot open";
    case IO_ERR_READ:
        return "read error";
    case IO_ERR_TRUNCATED:
        return "unexpected end of compressed data";
    case IO_ERR_CORRUPT:
        return "invalid compressed data";
    case IO_ERR_CRC:
        return "compressed data check failed (CRC or length)";
    case IO_ERR_NOMEM:
        return "out of memory";
    case IO_ERR_WRITE:
        return "write error";
    case IO_ERR_EXISTS:
        return "already exists (use -f to overwrite)";
    case IO_ERR_SAME:
        return "would overwrite an input";
    case IO_ERR_FORMAT:
        return "invalid file format";
    case IO_ERR_PIPE:
        return "broken pipe";
    case IO_ERR_SEEK:
        return "cannot be read from an offset";
    default:
        return "unknown error";
    }
}
