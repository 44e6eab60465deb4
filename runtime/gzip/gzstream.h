/* gzstream.h - a plain gzip member of a regular file or a pipe (one
 * deflate stream, as gzip, pigz and Python write them) inflated on one
 * CUDA device in batches of compressed bytes
 * (runtime/gzip/stream_inflate.h), its decoded
 * bytes handed out in device memory for an engine's kernels: only the
 * compressed bytes cross the link. While one batch is inflated, threads
 * of gzstream's own read the next ones and copy them to the device.
 *
 * The device never judges invalid data: where a batch is declined even at
 * the smallest size (invalid, cut or unusual data), or once the member's
 * final block is decoded, gzstream stops and gives the point where the
 * host's reader goes on (io_reader_continue_member): from that block
 * boundary with the window, CRC-32 and length so far, so that the data and
 * the messages are those of a sequential read. */
#ifndef GPUBATCH_RUNTIME_GZSTREAM_H
#define GPUBATCH_RUNTIME_GZSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/spool.h"
#include "runtime/gpu.h"
#include "stream_inflate.h"

/* The ratio of decoded to compressed bytes a plain gzip member's trailer
 * suggests: ISIZE (the length modulo 2^32) over the compressed bytes from
 * data_off to file_size; 0 where it cannot be read or is more than
 * deflate can give (GZSTREAM_RATIO_MAX). Only a hint: past 4 GiB it is too
 * low, and an archive's member ends with no trailer. */
#define GZSTREAM_RATIO_MAX 1032.0
double gzstream_ratio_hint(int fd, uint64_t data_off, uint64_t file_size);

/* Where the device stopped in the member. */
typedef struct {
    uint64_t bit;      /* file bit offset: a block boundary, or the final block's end */
    int final;         /* the member's final block ended at bit */
    uint32_t crc;      /* CRC-32 of the member's bytes decoded so far */
    uint64_t len;      /* their count */
    uint32_t wlen;     /* the window: the last wlen of them (at most IFS_WINDOW) */
    uint8_t window[IFS_WINDOW];
} gzstream_point;

typedef struct gzstream gzstream;

/* Sets of batch buffers, each with its staging buffer: while one batch is
 * finished, the next one's first round runs, and once it is done the one
 * after the next is read into its set. Not three: with a third batch's
 * round queued too, a batch's finish waits for multiprocessors that two
 * batches' decodes hold. */
#define GZSTREAM_SETS 2

/* Bytes of a staging buffer for gzstream_open: host memory made by the
 * caller while the devices start, so that making it is not on the run's
 * path. */
size_t gzstream_staging_bytes(void);

/* Prepares device g for members inflated in batches as large as the
 * device's memory allows, with room to carry keep_max bytes from one batch
 * to the next; the batches' compressed bytes are read into the staging
 * buffers in turn, each of staging_bytes: staging[0] pinned, the others
 * faulted in and not pinned (gzstream pins each piece as a batch first
 * reads it, off the start of the run, and unpins them when closed); into
 * buffers of gzstream's own where they are NULL. 0, or a negative
 * gpu_error (text in g). */
int gzstream_open(gzstream **out, gpu *g, size_t keep_max, void *const staging[GZSTREAM_SETS],
                  size_t staging_bytes);

/* Where a member's compressed bytes are read: a regular file (fd, whose
 * offset is not used, and its size), or a pipe read through its spool
 * (spool set; fd and size not used): its batches are read at the spool's
 * offsets, the size known once a read comes short at the pipe's end, and
 * the bytes before the device's position released as it goes, those from
 * where the host goes on (gzstream_where) kept. */
typedef struct {
    int fd;
    uint64_t size;
    spool *spool;
} gzstream_src;

/* Starts the member whose deflate data begin at offset data_off of src. */
void gzstream_begin(gzstream *z, const gzstream_src *src, uint64_t data_off);

/* Starts the member of gzstream_begin where another decoder paused: at
 * bit offset `bit` of src, a block boundary, with the window before it (the
 * wlen bytes decoded last) and the CRC-32 and length of the bytes before it. */
void gzstream_begin_at(gzstream *z, const gzstream_src *src, uint64_t bit, const uint8_t *window,
                       size_t wlen, uint32_t crc, uint64_t len);

/* Puts n decoded bytes (host memory, at most the keep_max of
 * gzstream_open) where the next gzstream_next may carry them over from, as
 * if a batch had ended with them. 0, or a negative error (gzstream_status). */
int gzstream_carry_in(gzstream *z, const void *host, size_t n);

/* Inflates the next batch after `keep` bytes carried over from the end of
 * the last one (0 at first): *data gets the device address of those bytes
 * followed by the batch's, *bytes their count, valid until the next call.
 * 1 with a batch; 0 when the device stopped (gzstream_where: at the final
 * block's end, or where the host must go on), nothing more decoded; or a
 * negative error (its line in gzstream_status: a read error, or the device's). */
int gzstream_next(gzstream *z, size_t keep, CUdeviceptr *data, size_t *bytes);

/* Copies the last keep bytes that the last batch gzstream_next gave
 * ended with to host memory (the caller's to hand on). 0 or negative. */
int gzstream_tail(gzstream *z, size_t keep, void *host);

/* Where the member goes on: where the device stopped, or after the last
 * batch (the device then goes no further). */
const gzstream_point *gzstream_where(gzstream *z);

/* Ends the member's reads ahead of a pipe, so that its spool, the
 * reader's, is read by the host alone from here on and may be freed with
 * it; nothing for a regular file (they are dropped at the next begin). */
void gzstream_end(gzstream *z);

/* -v: what the member's batches took on the device. */
typedef struct {
    unsigned long long batches, rounds; /* batches inflated, and their rounds */
    unsigned long long read_ahead;      /* batches read while the one before was inflated */
    double ahead_wait;                  /* seconds spent waiting for those reads */
} gzstream_stats;
void gzstream_counts(const gzstream *z, gzstream_stats *st);

/* The last failure: its code and line. */
const io_status *gzstream_status(const gzstream *z);

/* Frees everything; accepts NULL. */
void gzstream_close(gzstream *z);

#endif
