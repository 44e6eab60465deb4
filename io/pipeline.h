/* pipeline.h - the ring of host buffers that input flows through.
 *
 * A reader thread decodes the input (io_reader: plain or gzip) straight
 * into a free buffer of a fixed set and hands the chunks to the consumer in
 * order, each in a slot of a ring; the consumer gives each slot back with
 * pl_release() when the device (or CPU) is done with it. There may be more
 * slots than buffers: a consumer that has copied a chunk elsewhere (to a
 * device) gives its buffer back at once with pl_release_buffer(), and the
 * slot stays out until its results are in. Memory is bounded by the
 * buffers: nbufs * chunk_bytes, whatever the input size. Backpressure: the
 * reader waits while its next slot is out or every buffer is in use.
 *
 * Threading: this file owns its one reader thread. Failure policy: a read
 * error stops the reader, pl_next() returns it once every chunk read before
 * it has been handed out, and pl_close() always joins the thread. */
#ifndef GPUBATCH_IO_PIPELINE_H
#define GPUBATCH_IO_PIPELINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ptx/inflate_math.h"
#include "reader.h"

typedef struct pl_ring pl_ring;

/* A run of decoded bytes that the host read itself (outside whole members). */
typedef struct {
    uint32_t in_off;  /* where they are in the chunk's buffer */
    uint32_t len;
    uint32_t out_off; /* where they go in the decoded span */
} pl_run;

#define PL_GZ_RUNS 2
#define PL_GZ_MAX_CHUNK ((size_t)1 << 30) /* member offsets in a chunk are 32-bit */
#define PL_DECODE_STOPPED 1               /* pl_gz_decode() was told to stop */

/* A chunk as compressed members (pl_open_gz): the decoded span is the
 * members' output (if_member: deflate data in the buffer, output offsets
 * in the span) and at most PL_GZ_RUNS runs of decoded bytes, contiguous
 * from the first member's start; the chunk's data is `bytes` bytes from
 * `skip` on (a member that straddles a chunk boundary is in both chunks). */
typedef struct {
    const if_member *members; /* in the chunk's buffer, after in_bytes */
    int nmembers;
    int nruns;
    pl_run runs[PL_GZ_RUNS];
    size_t in_bytes;  /* bytes at the start of the buffer: members' data and runs */
    uint32_t skip;    /* decoded bytes before the chunk's data */
    uint32_t span;    /* decoded bytes of the members and runs */
    int fd;           /* the file the members come from (for io_gzip_member_error) */
} pl_gz_chunk;

typedef struct {
    int slot;        /* slot index, for pl_release and per-slot device state */
    void *data;      /* the buffer it holds: one of bufs, or a view (read-only) */
    size_t bytes;    /* bytes in this chunk (chunk_bytes except the last) */
    uint64_t offset; /* byte offset of data[0] in the data stream */
    uint64_t raw_end; /* input bytes (compressed ones for gzip) consumed through this chunk */
    const pl_gz_chunk *gz; /* NULL: data holds the decoded bytes; else as pl_gz_chunk says */
} pl_chunk;

/* Starts the reader thread over r (not owned). bufs: nbufs >= 2 buffers of
 * chunk_bytes each, for nslots (at least nbufs) slots. prefix (copied, may
 * be NULL) holds bytes already read from r that belong to the data. limit:
 * data bytes to read, or UINT64_MAX to read to the end; with a limit, fewer
 * bytes is a truncation error and more bytes an error too. swap: 0, or 2,
 * 4 or 8 for big-endian data: the reader reverses the bytes of each unit
 * of that size (frame_info.swap) before it hands a chunk out, so that
 * chunks hold little-endian data; chunk_bytes must then be a multiple of
 * swap (else IO_ERR_FORMAT). */
int pl_open(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
            size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit,
            size_t swap);

/* pl_open whose data end, for now, where the reader pauses (io_reader_pause:
 * a device goes on from there): the last chunk then stops at a multiple of
 * grain bytes of data (chunk_bytes must be one), and the bytes after it are
 * held for the caller (pl_paused). */
int pl_open_pausable(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
                     size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit,
                     size_t swap, size_t grain);

/* After pl_next returned 0: 1 when a pl_open_pausable ring ended where its
 * reader paused, with *held and *held_len the data bytes after its last
 * whole grain (valid until pl_close); else 0. */
int pl_paused(pl_ring *p, const void **held, size_t *held_len);

/* pl_open for data whose first `first` bytes were read elsewhere (a
 * device inflated them): the chunks' offsets, and limit, count from the
 * data's start; the reader goes on at data byte `first` (prefix: the bytes
 * from there on that were read already). */
int pl_open_at(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
               size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t first,
               uint64_t limit, size_t swap);

/* pl_open for plain data that lies as it is in a regular file
 * (io_reader_view_offset(r, prefix_len) is not -1), read in place: each
 * chunk is a view of the file (io_reader_view: mapped read-only, its pages
 * faulted in by the reader thread ahead of the consumer) instead of a copy
 * in a buffer, unmapped when its slot is released; at most nslots (>= 2)
 * chunks are mapped at once, and no buffers are needed. prefix_len: the
 * data bytes already read from r (frame_open's prefix), which the reader
 * steps back over and maps with the rest. A chunk's data must not be
 * written. Data that needs swapping is not for this ring. */
int pl_open_view(pl_ring **out, io_reader *r, int nslots, size_t chunk_bytes, size_t prefix_len,
                 uint64_t limit);

/* Like pl_open, for a consumer that inflates blocked gzip itself (on the
 * GPU): where the input is BGZF in a regular file, chunks hold whole
 * compressed members read straight from the file (pl_chunk.gz); elsewhere,
 * and for any bytes that are not whole BGZF blocks, the reader decodes as
 * pl_open's does. Each buffer holds pl_gz_buffer_bytes(chunk_bytes) bytes;
 * chunk_bytes must be below PL_GZ_MAX_CHUNK. */
int pl_open_gz(pl_ring **out, io_reader *r, void *const *bufs, int nbufs, int nslots,
               size_t chunk_bytes, const void *prefix, size_t prefix_len, uint64_t limit);

/* Buffer bytes pl_open_gz needs for chunks of chunk_bytes decoded bytes. */
size_t pl_gz_buffer_bytes(size_t chunk_bytes);

/* Largest decoded span of a pl_open_gz chunk (pl_gz_chunk.span). */
size_t pl_gz_span_bytes(size_t chunk_bytes);

/* The message for member i of chunk c, which the device or the host
 * refused: the host reader's, from the member's file offset on. */
void pl_gz_member_error(const pl_gz_chunk *c, int i, io_status *st);

/* Decodes a pl_open_gz chunk on the host, with its decoder (io/gzip/inflate.h) on up to `threads`
 * threads (accepting exactly what the device's decoder does), into span (at least
 * pl_gz_span_bytes(chunk_bytes) bytes); *data gets the chunk's data in it
 * (c->bytes bytes). 0, or IO_ERR_CORRUPT with the message the device stage
 * gives for the first member that does not decode or check (the host
 * reader's, naming the member's offset) in *st. Once *stop (if stop is not
 * NULL) is set, the threads take no more members and the call returns
 * PL_DECODE_STOPPED, the chunk undecoded. */
int pl_gz_decode(const pl_chunk *c, void *span, int threads, const atomic_int *stop,
                 const void **data, io_status *st);

/* The next chunk in order: 1 and *c filled, 0 at the end of the data, or a
 * negative io_error (then pl_status() holds it with its line). */
int pl_next(pl_ring *p, pl_chunk *c);

/* Gives a chunk's slot back to the reader, and its buffer if it holds it. */
void pl_release(pl_ring *p, int slot);

/* Gives a chunk's buffer back to the reader while the slot stays out, where
 * the ring has more slots than buffers (else does nothing): the chunk's data
 * is gone, while its offsets and member table (pl_gz_chunk) stay valid
 * until pl_release(). */
void pl_release_buffer(pl_ring *p, int slot);

/* Says that an out chunk's buffer will come back by pl_release_buffer()
 * (called on any thread) without waiting for the consumer: pl_full() no
 * longer counts it among the buffers the consumer holds. */
void pl_buffer_returning(pl_ring *p, int slot);

/* Chunks handed out by pl_next() and not yet released. */
int pl_outstanding(const pl_ring *p);

/* Whether the consumer must release a chunk before pl_next(), so that the
 * reader keeps a slot and a buffer to read ahead into: nslots - 1 chunks
 * out, or nbufs - 1 of them holding their buffers (not counting those
 * returning, pl_buffer_returning), and the next chunk not read yet. A chunk the reader has read already is taken: the reader goes
 * on once a chunk is released either way, and the chunk starts sooner. */
int pl_full(pl_ring *p);

/* The oldest of them (only when pl_outstanding() > 0): chunks are handed out
 * in input order, so this is the next one whose results go out. */
int pl_oldest(const pl_ring *p);

/* Data bytes handed out so far. */
uint64_t pl_bytes(const pl_ring *p);

/* The failure pl_next returned: its code and line. */
const io_status *pl_status(const pl_ring *p);

/* Stops the reader (if still running) and frees; accepts NULL. */
void pl_close(pl_ring *p);

#endif
