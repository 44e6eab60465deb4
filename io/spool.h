/* spool.h - a pipe read at offsets, as if it were a file.
 *
 * A descriptor that cannot seek (a pipe, a socket, a terminal) is read in
 * order, and the bytes read are kept from the oldest one still wanted
 * (spool_release) to the furthest one asked for, so that several threads
 * can read any range at or past that point, in any order: the parallel
 * decoder of one deflate stream reads a pipe's member this way while the
 * reader goes on past the member's end afterwards. The thread that needs
 * bytes not read yet reads the descriptor, one read(2) at a time; other
 * threads copy the bytes already held meanwhile. Offsets count the bytes
 * read from the descriptor through the spool, from 0. Thread-safe. */
#ifndef GPUBATCH_IO_SPOOL_H
#define GPUBATCH_IO_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SPOOL_UNKNOWN (UINT64_MAX >> 4) /* spool_size before the end was read */

typedef struct spool spool;

/* A spool over fd (left open by spool_destroy). 0, or IO_ERR_NOMEM. */
int spool_create(spool **out, int fd);

/* Frees the spool; accepts NULL. */
void spool_destroy(spool *s);

/* Copies bytes [off, off + n) into buf, reading the descriptor as far as
 * needed: the count (short only at the descriptor's end), -EINVAL for
 * bytes released and dropped, or -errno of a failed read (for every later
 * request past the bytes read before it). */
ssize_t spool_pread(spool *s, void *buf, size_t n, uint64_t off);

/* Copies up to n bytes from offset off into buf, those held or else those
 * one read(2) brings: the count (0 only at the descriptor's end), or as
 * spool_pread. */
ssize_t spool_read(spool *s, void *buf, size_t n, uint64_t off);

/* Hands out bytes [off, off + n) that nobody will ask for again, releasing
 * them: as spool_pread, but read straight into buf, not kept, when the
 * spool holds nothing at or past off. */
ssize_t spool_take(spool *s, void *buf, size_t n, uint64_t off);

/* Starts a thread that reads the descriptor ahead of the readers, up to
 * `limit` bytes past the release point, so that the writer is not held up
 * while they are busy (a device starting, threads decoding); once only,
 * and ended by spool_destroy. Without it (or where the thread cannot
 * start) the readers read as they need. */
void spool_ahead(spool *s, uint64_t limit);

/* Bytes before off will not be asked for again: they may be dropped. */
void spool_release(spool *s, uint64_t off);

/* The descriptor's size once its end has been read, else SPOOL_UNKNOWN. */
uint64_t spool_size(spool *s);

/* The bytes read from the descriptor so far (by the readers or the
 * read-ahead thread). */
uint64_t spool_received(spool *s);

/* Whether the descriptor has a byte at offset off, reading as far as it
 * (a failed read counts as the end). */
int spool_has(spool *s, uint64_t off);

#endif
