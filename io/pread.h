/* pread.h - reads of a regular file at an offset, on several threads when
 * the read is large (copying from the page cache is the bottleneck of one
 * thread), for every reader of io/ that knows where its bytes lie.
 *
 * Every call returns the bytes read (fewer than asked only at the end of the
 * file) or -errno; none keeps state between calls. */
#ifndef GPUBATCH_IO_PREAD_H
#define GPUBATCH_IO_PREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads n bytes at offset off of a regular file (on several threads when
 * n is large); the count (short only at the end of the file) or -errno. */
ssize_t io_pread(int fd, void *buf, size_t n, uint64_t off);

/* Reads n bytes at offset off on the calling thread alone, retrying on
 * EINTR and short reads; the count (short only at the end of the file) or
 * -errno. */
ssize_t io_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off);

#endif
