/* gzindex.h - seek indexes of a single-member gzip file, in gztool's index
 * format ("gzipindx", the format rapidgzip imports and exports with
 * --index-format gztool), and the reads they allow.
 *
 * An index lists access points of the member's deflate stream: the bit
 * offset of a block boundary, the decoded bytes before it, and the 32 KiB
 * window before it (zlib-compressed). From any point a decoder goes on
 * with no search and no markers, so the chunks between points decode on
 * every core at once (gzindex_stream), and a part of the file (--shard)
 * decodes from the point before its first byte.
 *
 * gpubatch's own indexes (gzindex_build) carry a check record after the
 * gztool fields, which gztool and rapidgzip pass over: the gzip file's
 * length, the CRC-32 of its first 64 KiB, its trailer, and the CRC-32 of
 * every chunk's decoded bytes, so that a stale index is refused before
 * anything is read and a damaged window is caught in the chunk it spoils.
 * Indexes of other tools have no record: they are checked against the
 * file's trailer (ISIZE) and length, their chunks must end exactly at the
 * next point, and a whole read checks the member's CRC-32.
 *
 * Errors come back as io_status lines without the gzip file's name (the
 * caller prefixes it); the lines name the index file. */
#ifndef GPUBATCH_IO_GZINDEX_H
#define GPUBATCH_IO_GZINDEX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/status.h"

#define GZINDEX_SUFFIX ".gzidx" /* FILE.gz's index found beside it: FILE.gz.gzidx */
#define GZINDEX_HEAD_BYTES 65536u /* bytes of the gzip file the check record's CRC-32 covers */

/* One access point. */
typedef struct {
    uint64_t bit;        /* bit offset in the gzip file of a deflate block boundary */
    uint64_t out;        /* decoded bytes of the member before it */
    const uint8_t *zwin; /* the window before it, zlib-compressed: zlen bytes (0: none) */
    uint32_t zlen;
    uint32_t crc;        /* with the check record: CRC-32 of the bytes up to the next point */
} gzindex_point;

/* A parsed index; its points' windows point into its own copy of the file. */
typedef struct {
    char *path;          /* the index file, for messages */
    uint8_t *data;       /* the index file's bytes */
    size_t len;
    gzindex_point *pt;   /* n points, bit and out increasing, pt[0].out == 0 */
    size_t n;
    uint64_t usize;      /* the member's decoded size */
    int checked;         /* the check record was present and whole */
    uint64_t file_len;   /* with checked: the gzip file's length, */
    uint32_t head_crc;   /* the CRC-32 of its first GZINDEX_HEAD_BYTES bytes */
    uint8_t trailer[8];  /* and its last 8 bytes (the member's CRC-32 and ISIZE) */
} gzindex;

/* Parses the len bytes at data (copied) as an index named path. 0, or
 * IO_ERR_FORMAT with a line naming path in *st. */
int gzindex_parse(gzindex **out, const char *path, const void *data, size_t len, io_status *st);

/* Reads and parses the index file at path. 0, or a negative io_error with
 * a line naming path in *st. */
int gzindex_load(gzindex **out, const char *path, io_status *st);

/* Checks that x is an index of the gzip file open as fd (file_len bytes):
 * a single member that is not blocked gzip, the trailer's ISIZE, every
 * point inside the file, and with the check record its length, first
 * bytes and trailer. 0, or IO_ERR_FORMAT with a line naming the index. */
int gzindex_check(const gzindex *x, int fd, uint64_t file_len, io_status *st);

/* Inflates point i's window into win (INFLATE_WINDOW bytes of room); its
 * length in *wlen. 0, or IO_ERR_FORMAT with a line naming the index. */
int gzindex_window(const gzindex *x, size_t i, uint8_t *win, size_t *wlen, io_status *st);

/* Frees x; accepts NULL. */
void gzindex_free(gzindex *x);

/* Where gzindex_build puts points: chunk_bytes, the parallel decoder's
 * compressed bytes per chunk (0: a few MiB of output each, as it sizes
 * them; the points do not depend on it); a point at the first deflate
 * block boundary at least min_out bytes of output after the last where the
 * compressed bytes since the last are at least ratio times the new point's
 * size (fixed fields, CRC-32 and compressed window). */
typedef struct {
    uint64_t chunk_bytes;
    uint64_t min_out;
    uint64_t ratio;
} gzindex_spacing;

/* Builds the index of the single-member gzip file open as fd (file_len
 * bytes) in one pass of the parallel decoder: a point at the member's
 * first block, then as sp says (NULL: the usual spacing, 1 MiB of output
 * and 100 times a point's size of input, so that the index stays under 1%
 * of the file). *out (malloc'd, *len bytes) holds the gztool fields and
 * the check record, *points the points' count. 0, or a negative io_error
 * with a line in *st: for damaged data, member_error's (io_gzip_member_error,
 * reader.h: the reader's words for the member at a file offset). */
int gzindex_build(int fd, uint64_t file_len, const gzindex_spacing *sp,
                  int (*member_error)(int, uint64_t, uint64_t, io_status *), uint8_t **out,
                  size_t *len, size_t *points, io_status *st);

/* Reads the decoded bytes of the member from an index's points: workers
 * decode the chunks between them in turn into a ring of two slots per
 * worker (three where a worker takes two chunks of mostly literals at once,
 * on more than INFLATE_HALVES_THREADS workers), and the reading thread hands
 * them out in order, each slot going to the chunk a ring later once its
 * chunk is handed out. */
typedef struct gzindex_stream gzindex_stream;

/* Opens a read of the member in the gzip file open as fd (file_len bytes,
 * not moved) through x (borrowed), positioned at its start, with `workers`
 * decoding threads (0: one per core, par_cpus()). With mem (the whole file
 * mapped, kept until the stream is closed) each chunk decodes its bytes
 * where they lie, else they are read into a buffer of its own. 0 or
 * IO_ERR_NOMEM. */
int gzindex_stream_open(gzindex_stream **out, const gzindex *x, int fd, const uint8_t *mem,
                        uint64_t file_len, int workers);

/* Positions the read at decoded byte `from`: it decodes from the point at
 * or before it, and no chunk that starts at or past `upto` (UINT64_MAX:
 * to the member's end). */
void gzindex_stream_seek(gzindex_stream *s, uint64_t from, uint64_t upto);

/* Copies the next decoded bytes into buf: the count (at most n; 0 past the
 * last chunk asked for) or a negative io_error with its line in *st. */
ssize_t gzindex_stream_read(gzindex_stream *s, uint8_t *buf, size_t n, io_status *st);

/* After a read that reached the member's final block: 1, with the bit just
 * past it, and (whole, when the read began at the member's start) the
 * member's CRC-32 and length; else 0. */
int gzindex_stream_end(const gzindex_stream *s, uint64_t *end_bit, int *whole, uint32_t *crc,
                       uint64_t *len);

/* Makes a read that began at the member's start stop at the next
 * boundary between chunks once *flag (set on any thread) is nonzero:
 * gzindex_stream_read then returns 0 there and gzindex_stream_paused says
 * where, for a device to go on from that point. NULL: never. */
void gzindex_stream_pause_on(gzindex_stream *s, const atomic_int *flag);

/* After a read stopped as pinflate_stream_pause_on asked: 1, with the bit
 * offset of the point where it stopped, its window inflated into win
 * (INFLATE_WINDOW bytes of room, *wlen of them), and the CRC-32 and length
 * of the member before it; else 0 (or a negative io_error with its line in
 * *st where the window does not inflate). */
int gzindex_stream_paused(const gzindex_stream *s, uint64_t *bit, uint8_t *win, size_t *wlen,
                          uint32_t *crc, uint64_t *len, io_status *st);

/* The file byte up to which the bytes handed out so far were compressed
 * (to the start of the chunk being handed out). */
uint64_t gzindex_stream_input_pos(const gzindex_stream *s);

/* Chunks decoded so far. */
uint64_t gzindex_stream_chunks(const gzindex_stream *s);

/* Of those, the pairs decoded two at once on a thread (a member of mostly
 * literals on more than INFLATE_HALVES_THREADS threads). */
uint64_t gzindex_stream_pairs(const gzindex_stream *s);

/* The long reads whose copy out the waiting workers shared (see
 * copy_share.h). */
uint64_t gzindex_stream_shared_copies(const gzindex_stream *s);

/* Frees s; accepts NULL. */
void gzindex_stream_close(gzindex_stream *s);

#endif
