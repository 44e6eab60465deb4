/* reader.h - byte sources: a file or stdin, gzip-compressed or not.
 *
 * io_reader_open() looks at the first bytes: a gzip magic (1f 8b) selects
 * the inflating path, which reads every member of a multi-member file (BGZF
 * included) the way `gzip -d` does; anything else is passed through.
 * io_reader_open_zip_member() reads one member of a zip archive (.npz).
 * io_reader_read() writes into the caller's buffer (usually a pinned host
 * buffer): plain data, BGZF blocks and zlib's output straight, a single
 * gzip stream read in parallel from the parallel decoder's chunks.
 *
 * Errors are sticky: after the first failure every call returns the same
 * negative code and io_reader_error() gives one line naming the problem
 * (not the file: the caller prefixes the name).
 *
 * What blocked gzip alone has (finding, checking and sizing BGZF blocks) is
 * in gzip/bgzf.h; reads of a file at an offset are in pread.h. */
#ifndef GPUBATCH_IO_READER_H
#define GPUBATCH_IO_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "status.h"
#include "view.h"
#include "io/gzip/gzindex.h"
#include "zip_member.h"

typedef struct io_reader io_reader;

/* Opens path ("-" is stdin). On failure returns a negative io_error and,
 * when st is not NULL, fills *st with it and a one-line reason. *out is
 * NULL on failure. */
int io_reader_open(io_reader **out, const char *path, io_status *st);

/* Opens an in-memory byte string (not copied; must outlive the reader),
 * decoded exactly as a file would be. For tests and fuzzing. */
int io_reader_open_mem(io_reader **out, const void *data, size_t len, io_status *st);

/* Opens the member m of the zip archive at path: the reader's data is the
 * member's decoded bytes and nothing past them. A stored member reads like
 * a plain file of comp_size bytes (io_reader_seek and io_reader_data_size
 * work on it; its CRC-32 is checked apart, by npz_check_stored). A
 * deflated member is inflated in order and checked at its end like a gzip
 * trailer (IO_ERR_CRC: "incorrect data check" or "incorrect length
 * check"; IO_ERR_CORRUPT; IO_ERR_TRUNCATED), and cannot be positioned
 * (IO_ERR_SEEK). io_reader_file_size() and io_reader_raw_offset() count the
 * member's comp_size bytes; io_reader_compressed() is 0 (no gzip).
 * Returns 0 or a negative io_error with a one-line reason. */
int io_reader_open_zip_member(io_reader **out, const char *path, const io_zip_member *m,
                              io_status *st);

/* The same for an archive in memory (not copied; must outlive the reader).
 * For tests and fuzzing. */
int io_reader_open_zip_member_mem(io_reader **out, const void *data, size_t len,
                                  const io_zip_member *m, io_status *st);

/* Reads the first gzip member of r (a regular file, not blocked gzip,
 * before its first read) through the seek index x (gzip/gzindex.h, taken
 * over: freed with r, or here on failure), after checking that x is the
 * file's (gzindex_check): its chunks decode on every core from their access
 * points, and io_reader_seek, io_reader_data_size, io_reader_fingerprint
 * (the file sampled as a plain one) and io_reader_check_blocks (nothing:
 * the chunks are checked as read) work as on blocked gzip. A member after
 * it is an error. 0, or a negative io_error with a line naming the index
 * in *st. */
int io_reader_set_index(io_reader *r, gzindex *x, io_status *st);

/* Reads up to n bytes into buf; returns fewer than n only at the end of the
 * data. Returns the count (0 at the end) or a negative io_error. */
ssize_t io_reader_read(io_reader *r, void *buf, size_t n);

/* Discards the next n decoded bytes: a seek on a plain regular file; on
 * blocked gzip (BGZF) whole blocks are passed over by their headers, each
 * checked to inflate as one whole block (as bgzf_check), since their
 * decoded size is taken from them; anything else is read and dropped. Returns
 * the bytes discarded (fewer than n only at the end of the data) or a
 * negative io_error. */
int64_t io_reader_skip(io_reader *r, uint64_t n);

/* Ends the data n decoded bytes from the current position: later reads
 * return 0 there, as at the end of the input. */
void io_reader_limit(io_reader *r, uint64_t n);

/* Where r's data can be read in place (io_reader_view): plain bytes of a
 * regular file (not stdin, not gzip) or of a stored zip member, on a file
 * system that maps files. Returns the file offset of the byte `back` bytes
 * before the current position (bytes already read), or -1 where views
 * cannot be taken. */
int64_t io_reader_view_offset(const io_reader *r, size_t back);

/* Steps back over the last n bytes handed out, so that they are read (or
 * viewed) again: only where io_reader_view_offset(r, n) is not -1. 0 or a
 * negative io_error. */
int io_reader_unread(io_reader *r, size_t n);

/* Hands out up to n next bytes as a view of the file (io/view.h: mapped,
 * pages faulted in, labelled with the file's path) instead of copying
 * them, moving on as io_reader_read does; the caller unmaps it
 * (io_view_unmap) before closing r. The count (fewer than n only at the
 * end; 0 and no mapping there) or a negative io_error: IO_ERR_READ where
 * the file is now shorter than when it was opened, IO_ERR_SEEK where r
 * cannot be viewed (io_reader_view_offset). */
ssize_t io_reader_view(io_reader *r, size_t n, io_view *v);

/* One line (into buf) saying how the gzip members read so far were
 * inflated: BGZF blocks in parallel, single streams in parallel (chunks,
 * and those decoded again in order), or in order by zlib and why; empty
 * for plain input. */
void io_reader_describe(const io_reader *r, char *buf, size_t len);

/* Nonzero when the input is deflate data of any kind: gzip, or a deflated
 * zip member (whose decoded size its compressed size does not bound). */
int io_reader_deflated(const io_reader *r);

/* Nonzero when the input is gzip-compressed. */
int io_reader_compressed(const io_reader *r);

/* Nonzero when bytes other than zero padding followed the last gzip member
 * (ignored, like `gzip -d` does; the caller may warn). */
int io_reader_trailing_garbage(const io_reader *r);

/* Size of the underlying file in bytes when it is a regular file, else -1
 * (for progress reports). */
int64_t io_reader_file_size(const io_reader *r);

/* io_reader_file_size, or for a pipe its size once its end has been read
 * (-1 before); from any thread. */
int64_t io_reader_input_size(const io_reader *r);

/* Compressed bytes consumed so far (equals the decoded count when plain). */
uint64_t io_reader_raw_offset(const io_reader *r);

/* Device and inode of the file (to refuse writing over an input); 0 when stdin. */
int io_reader_identity(const io_reader *r, uint64_t *dev, uint64_t *ino);

/* The file's modification time when it was opened, to the nanosecond (a
 * rewrite's evidence for shards); -1 when stdin. */
int io_reader_mtime(const io_reader *r, int64_t *sec, uint32_t *nsec);

/* Decoded bytes handed out so far (by io_reader_read, counted from the
 * start of the data even after io_reader_seek). */
uint64_t io_reader_tell(const io_reader *r);

/* Size in bytes of the decoded data of a seekable input, found without
 * decoding it: the file size, or for blocked gzip (BGZF) the sum of the
 * blocks' ISIZE trailers. IO_ERR_SEEK (and the reason in io_reader_error)
 * for stdin, pipes, memory, and gzip that is not blocked. */
int io_reader_data_size(io_reader *r, uint64_t *size);

/* A 64-bit digest that tells a seekable input from another one without
 * reading all of it, the same from every process that reads the same file:
 * of blocked gzip, its size and every block's CRC-32 and ISIZE (read with
 * the block headers, as io_reader_data_size walks them); of a plain file,
 * its size and 64 pieces of 4 KiB spread evenly over it. Same errors as
 * io_reader_data_size(). */
int io_reader_fingerprint(io_reader *r, uint64_t *digest);

/* Positions the reader at byte `offset` of the decoded data; later reads end
 * after `length` bytes (UINT64_MAX: at the end of the data). An uncompressed
 * file seeks; blocked gzip walks the block headers without inflating and
 * inflates only the block holding `offset`. Same errors as
 * io_reader_data_size(). */
int io_reader_seek(io_reader *r, uint64_t offset, uint64_t length);

/* Checks the BGZF blocks that hold decoded bytes [from, to) of a seekable
 * input, as bgzf_check does: from the first block when from is 0, up to
 * the end of the blocks when to is UINT64_MAX; the blocks are found by
 * their headers as io_reader_seek finds them, so that ranges that meet
 * check every block once. Nothing to check for an uncompressed file. 0, or
 * a negative io_error (sticky, with its reason in io_reader_error). */
int io_reader_check_blocks(io_reader *r, uint64_t from, uint64_t to);

/* Reads decoded bytes like io_reader_read, but only up to the end of the
 * gzip member being inflated: fewer than n bytes when it ends first, 0 at a
 * member boundary or for input that is not gzip. */
ssize_t io_reader_read_member_rest(io_reader *r, void *buf, size_t n);

/* At a member boundary of gzip read from a regular file: 1, with the file
 * descriptor and the file offset of the next member, so that a caller can
 * read whole members itself (then io_reader_resume()); else 0. */
int io_reader_member_boundary(const io_reader *r, int *fd, uint64_t *file_off);

/* Continues reading at file offset file_off, a member boundary the caller
 * reached by reading whole members itself, where the decoded data is at
 * byte pos (counted like io_reader_tell). Buffered input is dropped, and so
 * is a sticky error (one met later in the file, when the caller goes back
 * to read earlier members again). */
int io_reader_resume(io_reader *r, uint64_t file_off, uint64_t pos);

/* Whether a device may inflate the member being read instead: 1 for a
 * plain (not BGZF) gzip member of a regular file, the file's first, or a
 * deflated zip member, that the parallel decoder has begun, with the
 * file's descriptor (not moved), the file offset of the member's first
 * deflate byte and the file offset where its compressed bytes end (the
 * file's size for gzip); else 0. */
int io_reader_stream_member(const io_reader *r, int *fd, uint64_t *data_off, uint64_t *file_size);

/* io_reader_stream_member for a pipe (stdin or a named one), read through
 * its spool: 1 for its first member, a plain gzip member that the parallel
 * decoder has begun, with the spool and the member's first deflate byte's
 * offset in it (the offsets io_reader_pause_point and
 * io_reader_continue_member then count); else 0, also where the decoder,
 * not paused, has handed out a whole chunk (the spool may have let the
 * member's first bytes go). */
struct spool;
int io_reader_stream_spool(const io_reader *r, struct spool **s, uint64_t *data_off);

/* The bytes read so far from the pipe that r reads through a spool, or -1
 * where r reads no pipe. */
int64_t io_reader_pipe_received(const io_reader *r);

/* Asks, from any thread, that the parallel decoder of the member
 * io_reader_stream_member or io_reader_stream_spool names pause at the
 * next block boundary between its chunks: reads then end there (0 bytes)
 * and io_reader_pause_point says where, so that a device can go on from
 * that point while the host has decoded the start. A member that ends
 * first ends as it would have. */
void io_reader_pause(io_reader *r);

/* After a read ended by io_reader_pause: 1, with the file bit offset of the
 * block boundary where the member paused, the window (the wlen bytes decoded
 * before it, valid until the reader goes on), and the member's CRC-32 and
 * length so far; else 0. io_reader_continue_member goes on from a point
 * after it. */
int io_reader_pause_point(const io_reader *r, uint64_t *bit, const uint8_t **window, size_t *wlen,
                          uint32_t *crc, uint64_t *len);

/* Goes on reading the member io_reader_stream_member (or
 * io_reader_stream_spool) named where a device stopped inflating it, the
 * decoded position becoming pos: from file bit offset `bit`, a deflate
 * block boundary with the window (the wlen bytes decoded before it), the
 * member's CRC-32 and length so far carried on, inflated by the parallel
 * decoder where a file's or a pipe's member has at least 64 KiB after it,
 * else in order by zlib (why: what -v says then), data and errors a
 * sequential read's either way (the parallel decoder hands invalid data to
 * zlib at the block boundary before it); or with final, past the member's
 * final block, whose trailer (a zip member's: the central directory's
 * CRC-32 and length, and the end of its compressed bytes) is checked
 * against crc and len. 0 or a negative io_error with the reader's message. */
int io_reader_continue_member(io_reader *r, uint64_t bit, int final, const uint8_t *window,
                              size_t wlen, uint32_t crc, uint64_t len, uint64_t pos,
                              const char *why);

/* Reads the gzip member at file offset file_off of the regular file open
 * as fd (not moved) the way io_reader_read would in a read of the whole
 * file (on into the bytes after it if its deflate data runs past its BGZF
 * length), but no more than `upto` decoded bytes (UINT64_MAX: to the
 * member's end, its CRC and length checked). 0 when that much decodes, else
 * its negative io_error with the reader's one-line message (naming
 * file_off) in *st. */
int io_gzip_member_error(int fd, uint64_t file_off, uint64_t upto, io_status *st);

/* Fills *st with "the input holds more than the expected LIMIT bytes of
 * data", the one line for data past what a header promises; returns its
 * code (IO_ERR_FORMAT). */
int io_fail_more_data(io_status *st, uint64_t limit);

/* The verdict of a host read in order on the input of r (its file, or its
 * zip member, from the start, on a reader of its own), as a whole-file read
 * with data of `limit` bytes at decoded offset data_start would give it:
 * the first failure in the data or the byte after it (the member's own
 * checks included), else "more than the expected" when a byte follows the
 * data. 0 when the read finds nothing wrong (or r has no file to read
 * again: memory, a pipe), else the negative code with its line in *st. A
 * device that inflated the member and met a failure takes this line instead of its
 * own, so that every backend says the same. */
int io_reader_member_verdict(const io_reader *r, uint64_t data_start, uint64_t limit,
                             io_status *st);

/* The one-line reason of the sticky error, or "" when none. */
const char *io_reader_error(const io_reader *r);

/* The sticky error as a value: its io_error (0: none) and its line. */
const io_status *io_reader_status(const io_reader *r);

/* Closes and frees; accepts NULL. */
void io_reader_close(io_reader *r);

/* One-line text for an io_error code. */
const char *io_strerror(int code);

#endif
