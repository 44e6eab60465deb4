/* bgzf.h - blocked gzip (BGZF): the one owner of the format on the host.
 *
 * A BGZF file is gzip members of at most 64 KiB each, every one carrying its
 * own size in the BC extra subfield (the bytes we write: ptx/bgzf_format.h,
 * shared with the device's encoder), so that blocks can be found by their
 * headers alone, inflated on all cores, and passed over without inflating.
 * This module finds and checks blocks, walks a file by their headers, and
 * inflates batches of whole blocks on all cores (the reader's parallel BGZF
 * path, io/reader.c). A block that does not inflate as one whole block is
 * reported in the words of the sequential reader, which its caller passes
 * in (a bgzf_member_msg: the reader sits above this module), so that a
 * message never depends on which path met the damage. */
#ifndef GPUBATCH_IO_BGZF_H
#define GPUBATCH_IO_BGZF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptx/bgzf_format.h"
#include "io/status.h"

/* Total size of the BGZF block that starts at p (n bytes available, the
 * whole gzip header among them), or 0 when p does not start a BGZF block:
 * FEXTRA alone, an extra field made of subfields exactly, the BC subfield
 * among them. */
size_t bgzf_block_size(const uint8_t *p, size_t n);

/* Bytes of the gzip header of the BGZF block at p, where its deflate data
 * starts (12 + XLEN; 18 with the BC subfield alone). */
size_t bgzf_header_size(const uint8_t *p);

/* The sequential reader's message (and negative io_error) for the gzip
 * member at file offset file_off of fd, read up to `upto` decoded bytes:
 * io_gzip_member_error of io/reader.h; 0 where that reader takes it. */
typedef int (*bgzf_member_msg)(int fd, uint64_t file_off, uint64_t upto, io_status *st);

/* Checks the whole BGZF blocks at the start of p (len bytes, found at file
 * offset file_off of fd): each must inflate to exactly its BSIZE + 1 bytes,
 * to its ISIZE (at most 64 KiB) with its CRC-32, as a walk by the headers
 * assumes (a sequential read takes a member's deflate data where it ends,
 * whatever BSIZE says). Blocks are inflated on all cores. *used gets the
 * bytes of the whole blocks checked (stopping before bytes that are not a
 * whole block). 0, or a negative io_error with the reason (naming the
 * member's file offset; fd, when not -1, and msg, when not NULL, give the
 * sequential reader's message for it). */
int bgzf_check(int fd, bgzf_member_msg msg, const uint8_t *p, size_t len, uint64_t file_off,
               size_t *used, io_status *st);

/* The message (and negative io_error) for the BGZF block at file offset
 * file_off of fd (-1: none to read) that does not inflate as one block: the
 * sequential reader's (msg, when not NULL) where it refuses the member too,
 * else that its deflate data does not end where the block does. */
int bgzf_member_error(int fd, bgzf_member_msg msg, uint64_t file_off, io_status *st);

/* Decoded size of the BGZF blocks in bytes [start, end) of fd, from their
 * headers and ISIZE trailers; 0, or a negative io_error and a reason. */
int bgzf_data_size(int fd, uint64_t start, uint64_t end, uint64_t *size, io_status *st);

/* One BGZF block to inflate, and how it went. */
typedef struct {
    const uint8_t *in; /* raw deflate data */
    size_t in_len;
    uint8_t *out;      /* isize bytes */
    uint32_t isize, crc;
    int err;           /* 0, IO_ERR_CORRUPT or IO_ERR_CRC */
} bgzf_job;

/* The next input window, built while a batch inflates: the keep bytes at
 * src (the window's unparsed tail), then up to want bytes read at file
 * offset off of fd, into dst; got gets the bytes read, or -errno. */
typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    size_t keep, want;
    int fd;
    off_t off;
    ssize_t got;
} bgzf_window;

/* Inflates the njobs blocks of jobs on all cores, each straight to its out,
 * checking its length and CRC-32 (err); with next not NULL, one thread
 * first builds that window. */
void bgzf_inflate(bgzf_job *jobs, size_t njobs, bgzf_window *next);

/* Walks the BGZF blocks in bytes [start, end) of fd by their headers, up to
 * the block whose data holds decoded byte `target` (UINT64_MAX: to the end):
 * *coff and *uoff get its file and decoded offsets; digest, when not NULL,
 * takes in every block's CRC-32 and ISIZE (FNV-1a). 0, or a negative
 * io_error and a reason. */
int bgzf_walk(int fd, uint64_t start, uint64_t end, uint64_t target, uint64_t *coff, uint64_t *uoff,
              uint64_t *digest, io_status *st);

/* Checks the BGZF blocks in bytes [start, end) of fd, which must be whole
 * blocks end to end, as bgzf_check does (msg as there); 0, or a negative
 * io_error and a reason. */
int bgzf_check_file(int fd, bgzf_member_msg msg, uint64_t start, uint64_t end, io_status *st);

#endif
