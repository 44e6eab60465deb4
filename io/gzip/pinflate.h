/* pinflate.h - one deflate stream inflated on several threads.
 *
 * The stream's compressed bytes are cut into chunks. The first chunk is
 * decoded from the stream's start; each later one from the first place in
 * it where a block could start (inflate_find_block), with the 32 KiB window
 * before it unknown (markers, see inflate.h), while the chunks before it are
 * still being decoded. In stream order, a chunk is accepted when it began
 * exactly where the one before ended; otherwise (a false start, or a block
 * the finder does not look for) it is decoded again from there with the
 * window known. Accepted chunks get their markers replaced from the window
 * passed along and their CRC-32 computed on any thread, and are handed out
 * in order. Memory is bounded: a few chunks per thread are in flight.
 *
 * The decoder only takes what it can vouch for: where the stream is invalid
 * or ends early, it hands out everything before the last block boundary it
 * reached and says where it stopped, with the window and the CRC-32 so far,
 * so that a sequential decoder can take over there and report the problem in
 * its own words.
 *
 * The source is a regular file, memory, or a pipe read through a spool.
 *
 * Threads: pinflate_create starts them; they serve one stream at a time
 * (pinflate_begin .. pinflate_end); pinflate_read is called from one thread. */
#ifndef GPUBATCH_IO_PINFLATE_H
#define GPUBATCH_IO_PINFLATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/spool.h"

/* pinflate_read: go on sequentially from pinflate_stop_point */
#define PINFLATE_STOPPED (-100)
/* pinflate_read: paused as asked (pinflate_pause_on), at pinflate_pause_point */
#define PINFLATE_PAUSED (-101)

typedef struct pinflate pinflate;

/* Starts `threads` decoding threads (at least one). chunk_bytes: the
 * compressed bytes per chunk, or 0 to size chunks by the compression ratio
 * seen (a few MiB of output each). 0, or IO_ERR_NOMEM. */
int pinflate_create(pinflate **out, int threads, uint64_t chunk_bytes);

/* How chunks after the first are decoded (pinflate_plan). */
enum pinflate_plan {
    PINFLATE_AUTO,     /* by the cost of speculation seen so far (the default) */
    PINFLATE_PARALLEL, /* every chunk not yet reachable in order, speculatively */
    PINFLATE_ORDER,    /* in order, the other threads replacing markers and checksumming */
};

/* Sets the plan for the streams begun from now on. AUTO speculates on the
 * stream's first chunks and measures what that costs against decoding in
 * order: a speculative chunk whose output is held as 16-bit symbols (the
 * back-references into the unknown window go on being copied) costs about
 * two in-order ones where the data compress 2.5 to 1, six where they
 * compress 20 to 1. Each speculative chunk is measured in its thread's
 * time per byte, decode and resolve, against the in-order chunks' CPU time
 * per byte, where both were decoded with no fresh pages faulted in: CPU
 * time where every thread speculates, wall time where it took a core the
 * order leaves idle (a chunk whose thread waited for a core shared with
 * the reader or with other processes adds that much less); else (a stream's first chunks; on two or
 * three threads, a measure that stops after 256 Ki symbols whose last
 * 32 KiB still hold markers) it is estimated from its symbols and the
 * compression ratio, times its wall time per CPU second. It speculates
 * while the threads' number pays for that, else decodes in order on one
 * thread while each other one decodes a chunk speculatively as many
 * chunks ahead as that costs, while that adds a third of a thread at
 * least, and probes once every 64 chunks. The bytes are the same whatever
 * the plan and its timing. With chunk_bytes set (pinflate_create), the
 * plan starts as PARALLEL. */
void pinflate_plan(pinflate *p, enum pinflate_plan plan);

/* The data's bytes per compressed byte that the stream begun next is
 * expected to hold (a gzip trailer's size over the member's compressed
 * bytes), or 0 where unknown; each begin takes the hint given since the one
 * before. Under AUTO, a stream at a ratio r where even a chunk held as
 * bytes alone would cost more speculatively (1 + r / 10 in-order chunks,
 * the estimate's least) than these threads can pay, with or without
 * mixing, starts in order: no first probe, its symbols' memory nor its
 * core's time at the start; the probes every 64 chunks still measure it,
 * the first one's cost replacing the hint's. */
void pinflate_ratio_hint(pinflate *p, double ratio);

/* Stops the threads and frees everything; accepts NULL. */
void pinflate_destroy(pinflate *p);

/* Starts the deflate stream at byte `start` of a source of src_len bytes:
 * the regular file open as fd (read with pread; the fd's offset is not
 * used) or, with fd < 0, the memory mem. Ends the stream before, if any. */
void pinflate_begin(pinflate *p, int fd, const uint8_t *mem, uint64_t src_len, uint64_t start);

/* A block boundary inside a deflate stream where another decoder stopped:
 * its source bit, the window before it (the last wlen bytes decoded; at
 * most 32 KiB of them are used), and the CRC-32 and length of the bytes
 * before it. */
typedef struct {
    uint64_t bit;
    const uint8_t *window;
    size_t wlen;
    uint32_t crc;
    uint64_t len;
} pinflate_point;

/* pinflate_begin from the point `at` (a device's stop) rather than a
 * stream's start: the CRC-32 and length go on from at's. */
void pinflate_begin_at(pinflate *p, int fd, const uint8_t *mem, uint64_t src_len,
                       const pinflate_point *at);

/* pinflate_begin for a pipe read through spool s, whose size is known only
 * once its end is read; the bytes that neither a chunk nor the caller (a
 * handed-out member's trailer) reads again are released as it goes. */
void pinflate_begin_spool(pinflate *p, spool *s, uint64_t start);

/* pinflate_begin_at for a pipe read through spool s (pinflate_begin_spool). */
void pinflate_begin_spool_at(pinflate *p, spool *s, const pinflate_point *at);

/* Length of the gzip member header at p (n bytes there) when it is one
 * this decoder takes: the magic, then gzip_header_size's
 * (io/gzip/gzip_header.h), and not a BGZF block (read in parallel by whole
 * blocks instead). 0 otherwise: zlib then parses it and says what is
 * wrong, or the reader takes the bytes for trailing garbage. */
size_t pinflate_header(const uint8_t *p, size_t n);

/* Whether the streams begun from now on (pinflate_begin, pinflate_begin_spool) are
 * gzip members that go on across the members that follow them: where a
 * final block is followed by the member's 8-byte trailer and a gzip header
 * it takes (pinflate_header), the next member is decoded too, in the
 * same chunks. pinflate_read then stops at each member's end (pinflate_finished,
 * pinflate_result: that member's), for the caller to check its trailer and
 * header and go on with pinflate_continue. Not with pinflate_pause_on. */
void pinflate_members(pinflate *p, int on);

/* After pinflate_read stopped at a member's end: goes on with the next member
 * when its first block starts at byte `start` of the source as the decoder
 * found (then 1: pinflate_read hands out its bytes, with their own CRC-32 and
 * length); else 0, and the caller begins a new stream. */
int pinflate_continue(pinflate *p, uint64_t start);

/* Whether pinflate_read stopped at a member's end with more decoded after it
 * (pinflate_continue takes it from there; pinflate_begin and pinflate_end drop it). */
int pinflate_member_end(pinflate *p);

/* Makes the current stream pause once *flag (set on any thread) is nonzero:
 * pinflate_read hands out no bytes past the next block boundary between two of
 * its chunks, and returns PINFLATE_PAUSED from then on, unless the stream has
 * ended first. For a caller that hands the rest of the stream to another
 * decoder (a device) while this one is busy. Call it before the first
 * pinflate_read of the stream. */
void pinflate_pause_on(pinflate *p, const atomic_int *flag);

/* Has pinflate_read call fn(ctx, bit, len) at every deflate block boundary
 * of the stream but the final block's end, once the bytes before it are
 * handed out, in stream order: bit is the source bit offset of that
 * boundary, len the stream's bytes handed out before it (the access points
 * of a seek index). Every boundary after a block that decodes to bytes is
 * reported, however the stream is cut into chunks; one after an empty
 * block may not be (a chunk may start past empty fixed blocks). The bytes
 * before it are in the caller's buffers when fn runs; fn must not call
 * back into p. NULL: none. Not with pinflate_members. */
void pinflate_on_boundary(pinflate *p, void (*fn)(void *ctx, uint64_t bit, uint64_t len), void *ctx);

/* Whether a boundary that pinflate_on_boundary's fn should have had was left
 * out for want of memory (the caller then fails as out of memory). */
int pinflate_boundaries_lost(pinflate *p);

/* Copies the next decoded bytes, in order, into buf: the count (at most n),
 * 0 after the final block, PINFLATE_STOPPED where the stream cannot be decoded
 * further here, PINFLATE_PAUSED (pinflate_pause_on), or IO_ERR_NOMEM. */
ssize_t pinflate_read(pinflate *p, uint8_t *buf, size_t n);

/* Whether every byte of the stream has been handed out, its final block
 * included: pinflate_result then holds. */
int pinflate_finished(pinflate *p);

/* After pinflate_read returned 0 or pinflate_finished: the byte just past the final block, and the
 * CRC-32 and length of the whole stream. */
void pinflate_result(const pinflate *p, uint64_t *end_byte, uint32_t *crc, uint64_t *len);

/* After PINFLATE_STOPPED: the bit offset (in the source) of the block boundary
 * where a sequential decoder must go on, the stream's last *wlen (at most
 * 32 KiB) bytes before it, and the CRC-32 and length of all before it. */
void pinflate_stop_point(const pinflate *p, uint64_t *bit, const uint8_t **window, size_t *wlen,
                         uint32_t *crc, uint64_t *len);

/* After PINFLATE_PAUSED: the bit offset (in the source) of the block boundary
 * where the stream was paused, its last *wlen (at most 32 KiB) bytes
 * before it, and the CRC-32 and length of all before it. */
void pinflate_pause_point(const pinflate *p, uint64_t *bit, const uint8_t **window, size_t *wlen,
                          uint32_t *crc, uint64_t *len);

/* The source byte up to which the data handed out so far was compressed. */
uint64_t pinflate_input_pos(const pinflate *p);

/* Chunks accepted so far over every stream, and how many of them were
 * decoded again in order (a false or missed block start). */
void pinflate_counts(const pinflate *p, uint64_t *chunks, uint64_t *redone);

/* Of the chunks counted by pinflate_counts, how many were decoded
 * speculatively (accepted or redone). */
uint64_t pinflate_speculated(const pinflate *p);

/* How many of pinflate_read's copies out, over every stream, were shared in
 * pieces with threads that had no chunk to decode (long reads only). */
uint64_t pinflate_shared_copies(const pinflate *p);

/* How many speculative chunks, over every stream, were decoded two at once
 * on a thread (data of mostly literals: their lookups overlap). */
uint64_t pinflate_paired(const pinflate *p);

/* Output buffers that idle threads faulted in ahead of the decoding ones,
 * over every stream: where the stream is decoded in order, the first
 * chunks' (see prefault_spare in pinflate.c); none for a pipe. */
uint64_t pinflate_prefaulted(const pinflate *p);

/* Blocks a chunk's decode began and dropped because they did not fit its
 * room (the next chunk decodes them again), over every stream: a decode
 * stops before a block of about the stream's mean size no longer fits, so
 * these are rare once a few blocks are known. */
uint64_t pinflate_cut_blocks(const pinflate *p);

/* Ends the current stream: the threads drop what they were doing for it;
 * returns once none of them reads its source any more. */
void pinflate_end(pinflate *p);

/* Ends the current stream as pinflate_end does, without waiting: threads in
 * the middle of a chunk finish it and drop it (the source must stay
 * readable until the next pinflate_begin or pinflate_destroy, which wait). */
void pinflate_abandon(pinflate *p);

#endif
