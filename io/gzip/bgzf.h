/* bgzf.h - blocked gzip (BGZF): the one owner of the format on the host.
 *
 * A BGZF file is gzip members of at most 64 KiB each, every one carrying its
 * own size in the BC extra subfield (the bytes we write: ptx/bgzf_format.h,
 * shared with the device's encoder), so that blocks can be found by their
 * headers alone, inflated on all cores, and passed over without inflating.
 * This module finds and checks blocks, walks a file by their headers, and
 * gives the reader (reader.c) its parallel BGZF path. A block that does not
 * inflate as one whole block is reported in the words of the sequential
 * reader (io_gzip_member_error, reader.h), so that a message never depends
 * on which path met the damage. */
#ifndef GPUBATCH_IO_BGZF_H
#define GPUBATCH_IO_BGZF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptx/bgzf_format.h"
#include "io/reader.h"

/* Nonzero when the n bytes at p start with the gzip magic (1f 8b), as every
 * gzip member and every BGZF block does. */
int gzip_header_magic(const void *p, size_t n);

/* Length of the gzip member header at p (n bytes there) when it is one
 * the parallel decoder takes: deflate, no reserved flags, no header CRC,
 * whole within the n bytes, and not a BGZF block (read in parallel by whole
 * blocks instead). 0 otherwise: zlib then parses it and says what is wrong. */
size_t gzip_header_plain(const uint8_t *p, size_t n);

/* Total size of the BGZF block that starts at p (n bytes available, the
 * whole gzip header among them), or 0 when p does not start a BGZF block:
 * FEXTRA alone, an extra field made of subfields exactly, the BC subfield
 * among them. */
size_t bgzf_block_size(const uint8_t *p, size_t n);

/* Bytes of the gzip header of the BGZF block at p, where its deflate data
 * starts (12 + XLEN; 18 with the BC subfield alone). */
size_t bgzf_header_size(const uint8_t *p);

/* Checks the whole BGZF blocks at the start of p (len bytes, found at file
 * offset file_off of fd): each must inflate to exactly its BSIZE + 1 bytes,
 * to its ISIZE (at most 64 KiB) with its CRC-32, as a walk by the headers
 * assumes (a sequential read takes a member's deflate data where it ends,
 * whatever BSIZE says). Blocks are inflated on all cores. *used gets the
 * bytes of the whole blocks checked (stopping before bytes that are not a
 * whole block). 0, or a negative io_error with the reason (naming the
 * member's file offset; fd, when not -1, gives the sequential reader's
 * message for it). */
int bgzf_check(int fd, const uint8_t *p, size_t len, uint64_t file_off, size_t *used,
                  io_status *st);

/* The message (and negative io_error) for the BGZF block at file offset
 * file_off of fd (-1: none to read) that does not inflate as one block: the
 * sequential reader's where it refuses the member too, else that its
 * deflate data does not end where the block does. */
int bgzf_member_error(int fd, uint64_t file_off, io_status *st);

/* Decoded size of the BGZF blocks in bytes [start, end) of fd, from their
 * headers and ISIZE trailers; 0, or a negative io_error and a reason. */
int bgzf_data_size(int fd, uint64_t start, uint64_t end, uint64_t *size, io_status *st);

/* For the reader (reader.c; its handle is in source.h). */

/* At a member boundary: inflates the whole BGZF blocks at the input that
 * fit in buf, in parallel, straight into buf. The bytes written, 0 when the
 * next member is not a complete BGZF block that fits or does not inflate as
 * one (the caller then inflates it as a stream), or a negative io_error. */
ssize_t bgzf_read(io_reader *r, uint8_t *buf, size_t n);

/* At a member boundary: passes over the whole BGZF blocks at the input
 * whose data lies within the next n decoded bytes, each checked as
 * bgzf_check does; the decoded bytes passed over or a negative io_error. */
int64_t bgzf_skip(io_reader *r, uint64_t n);

/* Walks the BGZF blocks in bytes [start, end) of fd by their headers, up to
 * the block whose data holds decoded byte `target` (UINT64_MAX: to the end):
 * *coff and *uoff get its file and decoded offsets; digest, when not NULL,
 * takes in every block's CRC-32 and ISIZE (FNV-1a). 0, or a negative
 * io_error and a reason. */
int bgzf_walk(int fd, uint64_t start, uint64_t end, uint64_t target, uint64_t *coff, uint64_t *uoff,
              uint64_t *digest, io_status *st);

/* Checks the BGZF blocks in bytes [start, end) of fd, which must be whole
 * blocks end to end, as bgzf_check does; 0, or a negative io_error and
 * a reason. */
int bgzf_check_file(int fd, uint64_t start, uint64_t end, io_status *st);

#endif
