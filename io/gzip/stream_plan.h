/* stream_plan.h - the host's side of decoding one deflate stream in
 * segments at once (ptx/inflate_stream.h): where the segments start, which
 * of them must be decoded again after a round, and when the stream or the
 * batch is done.
 *
 * A batch is a span of compressed bytes that starts at a known block
 * boundary, or whose first block is searched for like any segment's while
 * the batch before it is still being decoded (its true start, the end of
 * that batch, is given later with stream_plan_begin_at). It ends at the last
 * boundary its bytes hold, or at the first one at or past a given stop
 * (where the next batch's search begins). stream_plan_init cuts it into segments
 * every `step` bits; a round
 * decodes the segments stream_plan_check lists (on the GPU, or with the same decoder
 * on the host); stream_plan_check then walks the chain in order: a segment is good
 * when the one before it is good and ended exactly where it began
 * (inflate_same_start). One that did not begin there is decoded again from that
 * end, in pieces that the next round decodes at once; one that filled its
 * room gets a new segment after it for the rest; and the walk stops at the
 * final block or, where the batch is not the stream's last, at the last
 * boundary the batch's bytes hold. The plan never decides what invalid
 * data means: it gives up (STREAM_PLAN_GIVE_UP) and the caller decodes the batch on
 * the host, whose messages are zlib's. */
#ifndef GPUBATCH_IO_STREAM_PLAN_H
#define GPUBATCH_IO_STREAM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ptx/inflate_stream.h"

enum stream_plan_result {
    STREAM_PLAN_ROUND = 0,   /* decode the listed segments, then call stream_plan_check again */
    STREAM_PLAN_DONE = 1,    /* every segment is good: the batch is decoded */
    STREAM_PLAN_GIVE_UP = 2, /* invalid, cut or unusual data: decode the batch on the host */
};

/* Why a plan gave up (stream_plan.why): a shorter batch with more room per
 * byte, or a longer one, may go on where the data are sound. */
enum stream_plan_why {
    STREAM_PLAN_NO_ROOM = 1,   /* its symbols outgrew the pool (or the output's room) */
    STREAM_PLAN_LONG_BLOCK,    /* its first block runs past the end of a batch not the last */
    STREAM_PLAN_UNSOUND,       /* anything else: invalid or unusual data */
};

typedef struct {
    ifs_seg *segs;   /* the segments in stream order (room for max) */
    int n, max;
    int good;        /* segs[0..good) are known good */
    int final;       /* STREAM_PLAN_DONE: the stream's final block is in the batch */
    int rounds;      /* rounds so far */
    int *todo;       /* the segments the next round decodes (room for max) */
    int ntodo;
    uint64_t sym_used, sym_cap; /* symbol buffer elements handed out, and its size */
    uint64_t end;    /* STREAM_PLAN_DONE: the bit where the batch's decoding ended */
    uint64_t stop;   /* the batch ends at the first boundary at or past this bit, or IFS_NONE */
    uint64_t begin;  /* where the first segment must begin, or IFS_NONE (not known yet) */
    uint64_t nout;   /* STREAM_PLAN_DONE: bytes the batch decodes to */
    uint64_t piece;  /* bits of a piece of a segment decoded again, at the least */
    int pieced;      /* segments decoded again in pieces so far */
    int why;         /* STREAM_PLAN_GIVE_UP: a stream_plan_why */
} stream_plan;

/* Cuts in[0..len) from bit `start` (a block boundary when exact, else
 * where the search for the first block begins) to `stop` (IFS_NONE: the
 * bytes' end) into segments of `step` bits (at most max of them), each with
 * room for `cap` symbols in a buffer of sym_cap symbols, and lists them all
 * for the first round. */
void stream_plan_init(stream_plan *p, ifs_seg *segs, int *todo, int max, size_t len, uint64_t start,
                      int exact, uint64_t stop, uint64_t step, uint32_t cap, uint64_t sym_cap);

/* For a plan whose start was not exact: the bit where the batch must begin
 * (where the batch before it ended), before the first stream_plan_check. A first
 * segment that began elsewhere is decoded again from there. */
void stream_plan_begin_at(stream_plan *p, uint64_t bit);

/* Symbols of room per compressed byte for the segments of a batch whose
 * stream decodes to `ratio` bytes per compressed byte (measured so far, or
 * a hint): a tenth more than the ratio, STREAM_PLAN_ROOM_MIN at least
 * (compressible numbers fit it in one round), STREAM_PLAN_ROOM_MAX at
 * most (deflate's own bound, 258 bytes from one 1-bit code, with room to
 * spare). */
#define STREAM_PLAN_ROOM_MIN 3u
#define STREAM_PLAN_ROOM_MAX 2100u
uint32_t stream_plan_room(double ratio);

/* Compressed bytes of a batch whose segments get `room` symbols per byte
 * from a pool of sym_cap symbols: as many as leave a quarter of the pool
 * for segments that fill their room (stream_plan_init's reserve), within
 * [least, most]. */
size_t stream_plan_span(uint64_t sym_cap, uint32_t room, size_t least, size_t most);

/* Where the plan of a batch of len bytes at byte `base` of a stream whose
 * compressed bytes end at byte `end` stops (stream_plan_init's stop, from the
 * batch's first byte): `margin` bytes before the batch's end, where the
 * next batch's search for its first block begins, so that the two can be
 * decoded at once; IFS_NONE where the stream's end is in the batch or the
 * batch is shorter than two margins (the next batch then starts where this
 * one ended). */
uint64_t stream_plan_batch_stop(uint64_t base, size_t len, uint64_t end, size_t margin);

/* After a round: checks the chain (see above) over in[0..len); returns an
 * stream_plan_result. On STREAM_PLAN_DONE each good segment's out_pos is set (its bytes'
 * place in the batch's output), n is the number of good segments. */
int stream_plan_check(stream_plan *p, const uint8_t *in, size_t len, int last);

#endif
