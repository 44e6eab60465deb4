/* source.h - inside the reader (io/reader.c, io/source.c): the reader's
 * handle, and the functions of its byte source (source.c) that the reader's
 * plain, gzip and BGZF paths use.
 *
 * The byte source is a window of input bytes (in_next, in_avail): read from
 * a file descriptor into inbuf (IN_BLOCK bytes, on several threads for a
 * regular file), or laid onto the caller's memory, and bounded by a zip
 * member's range of the file when there is one (src_off, src_len). A
 * regular file is read with pread(2) at the reader's own offset (file_pos),
 * never at the descriptor's, which every dup of it shares: a reader of the
 * same descriptor on another thread (io_gzip_member_error's) must not move
 * it. A pipe is read through a spool (spool.h) at file_pos too, so that the
 * parallel decoder can read a member's bytes at offsets as it reads a
 * file's, and the reader go on past the member's end afterwards. Its
 * functions keep raw_offset (input bytes consumed) and record failures in
 * the handle's sticky error. Not for use outside these two files. */
#ifndef GPUBATCH_IO_SOURCE_H
#define GPUBATCH_IO_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#include <stdatomic.h>

#include "spool.h"
#include "status.h"
#include "view.h"
#include "zip_member.h"
#include "io/gzip/bgzf.h"
#include "io/gzip/gzindex.h"
#include "io/gzip/pinflate.h"

typedef struct io_reader io_reader; /* the handle of reader.h, defined here */

#define IN_BLOCK (16u << 20)  /* compressed bytes read from the fd at a time */

/* Where the reader is in its input, which decides how the next read decodes. */
enum rd_state {
    RD_PLAIN,   /* pass-through */
    RD_MEMBER,  /* inside a gzip member, inflated by zlib */
    RD_PARALLEL, /* inside a gzip member, inflated by the parallel decoder */
    RD_BETWEEN, /* a member just ended; look at what follows */
    RD_END,     /* no more data */
    RD_ZIP_DEFLATE, /* inside a deflated zip member (read_zip_deflate) */
    RD_PAUSED,  /* the parallel decoder paused in the first member (io_reader_pause) */
    RD_INDEXED, /* inside the first gzip member, decoded from a seek index's points */
    RD_WHOLE,   /* a gzip member decoded whole into whole_buf (whole_begin) */
};

/* The reader's handle: the byte source (fd, memory, the input window, a zip
 * member's range), the state of the gzip and zip paths, counts for -v,
 * and the sticky error. */
struct io_reader {
    int fd;          /* -1 for memory */
    char *path;      /* the file's path (the label of its views), NULL for stdin and memory */
    int close_fd;    /* we opened it */
    int is_stdin;    /* it is standard input ("-") */
    const uint8_t *mem;
    size_t mem_len;
    size_t mem_pos;  /* memory bytes handed out (plain) or moved into the window */
    uint8_t *inbuf;  /* IN_BLOCK bytes for fd input; NULL for memory */
    uint8_t *inbuf2; /* the next window, read during a blocked-gzip batch */
    const uint8_t *in_next; /* unconsumed input */
    size_t in_avail;
    int in_eof;      /* the fd (or memory) has no more bytes */
    uint64_t file_pos; /* a regular file or a spooled pipe: the offset its next read starts at */
    spool *spool;    /* a descriptor that cannot seek: read through it, at offsets */
    int gzip;
    int zinit;
    int garbage;
    enum rd_state state;
    z_stream zs;
    uint64_t raw_offset;
    uint64_t member_off; /* where the member being inflated starts (for messages) */
    uint64_t member_data; /* RD_PARALLEL: the file offset of its first deflate byte */
    pinflate *par;           /* the parallel decoder, started by the first member it takes */
    io_view par_view;        /* the file mapped for it (parallel_source), or none */
    uint64_t n_bgzf, n_par, n_seq; /* BGZF blocks, parallel and sequential members read */
    uint64_t n_whole;    /* members decoded whole by whole_begin */
    bgzf_job *bgzf_jobs; /* read_bgzf's batch, allocated at its first use */
    uint64_t n_device;   /* members (or their starts) inflated on a device (io_reader_continue_member) */
    atomic_int pause_req; /* io_reader_pause: the parallel decoder pauses the first member */
    uint64_t n_paused;   /* members whose start the host decoded before a device took over */
    uint64_t pause_bit;  /* RD_PAUSED: where, and the window, CRC-32 and length before it */
    uint8_t *pause_win;
    size_t pause_wlen;
    uint32_t pause_crc;
    uint64_t pause_len;
    const char *seq_why; /* why the last sequential member was not read in parallel */
    int raw_tail;        /* zlib inflates raw deflate, taken over from the host's decoder */
    /* CRC-32 and length of the member's data so far, where this reader
     * checks them rather than zlib: raw_tail, a deflated zip member */
    uint32_t tail_crc;
    uint64_t tail_len;
    int stop_at_member_end; /* read_gzip returns at the end of the member */
    uint8_t *whole_buf;  /* RD_WHOLE: the member's data (whole_cap bytes of room), */
    size_t whole_cap;
    size_t whole_len;    /* whole_len bytes of it, */
    size_t whole_pos;    /* handed out up to whole_pos */
    uint64_t pos;    /* decoded bytes handed out (from the start of the data) */
    uint64_t left;   /* decoded bytes still allowed (io_reader_seek), or UINT64_MAX */
    int64_t file_size;
    int has_id;
    int64_t mtime_s;  /* the file's modification time when opened (with has_id) */
    uint32_t mtime_ns;
    uint64_t dev, ino;
    /* A zip member (io_reader_open_zip_member) is the byte source: its
     * range of the file, read as a file of its own, and for a deflated one
     * the CRC-32 and length its end is checked against. */
    uint64_t src_off;  /* file offset of the source's first byte (0: a whole file) */
    uint64_t src_len;  /* bytes of the source, or UINT64_MAX: to the end of the file */
    int zip_deflate;   /* a deflated member: inflated in order, never positioned */
    io_zip_member zip;
    gzindex *index;        /* io_reader_set_index: the first member's seek index (owned) */
    gzindex_stream *ixs;   /* its read */
    int index_done;        /* the indexed member has ended: no member may follow */
    int index_seek;        /* io_reader_seek positioned the indexed read */
    int index_paused;      /* RD_PAUSED: the indexed read paused (not the parallel decoder) */
    io_status st; /* the first failure (sticky) */
};

/* Records the first error of the handle (sticky) and returns the one in force. */
int source_error(io_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* At the end of a regular file: a file now shorter than when it was opened
 * is an error (IO_ERR_READ, sticky), not a short input. 0 or the error. */
int source_check_shrunk(io_reader *r);

/* At most n: no more than the bytes of a zip member's range left after the
 * input buffered so far. */
size_t source_room(const io_reader *r, size_t n);

/* The bytes of a regular file (a zip member's whole file) after the
 * reader's offset as the file held them when opened, which bound what its
 * input buffers will hold; UINT64_MAX for a pipe. */
uint64_t source_file_left(const io_reader *r);

/* Makes at least `need` unconsumed input bytes available (fewer only at the
 * end of the input); returns 0 or a negative io_error. */
int source_fill(io_reader *r, size_t need);

/* source_fill for the first bytes of the input: at least `need`, reading
 * no more than `most` into the window (plain data is then read straight
 * into the caller's buffers, or mapped, not copied through the window); 0
 * or a negative io_error. */
int source_peek(io_reader *r, size_t need, size_t most);

/* Drops n bytes of unconsumed input. */
void source_consume(io_reader *r, size_t n);

/* Plain path: hands out up to n bytes of the source as they are; the count
 * (short only at the end) or a negative io_error. */
ssize_t source_read_plain(io_reader *r, uint8_t *buf, size_t n);

/* Places the input at compressed byte `coff` of the source, dropping what
 * was buffered; 0 or a negative io_error. */
int source_reposition(io_reader *r, uint64_t coff);

/* Passes over up to n bytes of a plain regular file without reading them;
 * the bytes passed over or a negative io_error. */
int64_t source_skip_plain(io_reader *r, uint64_t n);

/* Little-endian 32-bit value at p (the fields of gzip trailers). */
static inline uint32_t source_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
