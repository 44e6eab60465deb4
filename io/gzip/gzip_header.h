/* gzip_header.h - the gzip member header (RFC 1952), as the readers of
 * gzip and of BGZF both look at it: its magic, and the length of a header
 * simple enough to be passed over without zlib. */
#ifndef GPUBATCH_IO_GZIP_HEADER_H
#define GPUBATCH_IO_GZIP_HEADER_H

#include <stddef.h>
#include <stdint.h>

/* Nonzero when the n bytes at p start with the gzip magic (1f 8b), as every
 * gzip member and every BGZF block does. */
int gzip_header_magic(const void *p, size_t n);

/* Length of the gzip member header at p (n bytes there, the magic first)
 * when it is deflate, with no reserved flags and no header CRC, whole
 * within the n bytes with at least one byte after it; 0 otherwise (zlib then
 * parses it and says what is wrong). */
size_t gzip_header_size(const uint8_t *p, size_t n);

/* The ratio a gzip file's trailer suggests for the member whose deflate
 * data start at byte data_off of the regular file fd of file_size bytes:
 * the size in the file's last 4 bytes (the last member's, modulo 2^32)
 * over the compressed bytes from data_off on; 0 where the file is too
 * short or the read fails. A hint for planning a decode, never for the
 * bytes. */
double gzip_trailer_ratio(int fd, uint64_t data_off, uint64_t file_size);

#endif
