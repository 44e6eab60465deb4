/* inflate.h - the host's deflate decoder (RFC 1951), table-driven, for
 * whole blocks held in memory.
 *
 * One call decodes blocks from a bit position of an input span until a stop
 * condition is met at a block boundary, so a caller can cut one deflate
 * stream into pieces and decode them on several threads:
 *  - into bytes (inflate_decode_bytes), where the history the stream refers back
 *    to is known and lies in memory just before the output;
 *  - into 16-bit symbols (inflate_decode_symbols) where that history is not
 *    known: a byte the stream copies from the 32 KiB before the output is
 *    written as a marker (INFLATE_MARKER + its index in that window) to be
 *    replaced once the window is known (inflate_resolve).
 * inflate_find_block finds the next bit offset where a deflate block could
 * start. Both decoders refuse everything zlib's inflate refuses, and only
 * that; they stop, not fail, where the input span or the output buffer ends
 * inside a block, with the state of the last block boundary, so the caller
 * can supply more and go on. */
#ifndef GPUBATCH_IO_INFLATE_H
#define GPUBATCH_IO_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#define INFLATE_WINDOW 32768u     /* the farthest a deflate stream refers back */
#define INFLATE_MARKER 0x8000u    /* symbol INFLATE_MARKER + i: byte i of the unknown window */

/* Why a decode stopped. Every state but INFLATE_ERROR is at a block boundary. */
enum inflate_result {
    INFLATE_ERROR = -1,      /* invalid deflate data */
    INFLATE_STOP = 0,        /* at a block boundary at or past stop_bit or out_limit */
    INFLATE_END = 1,         /* after the final block (bit: just past it) */
    INFLATE_NEED_INPUT = 2,  /* the input span ends inside the next block */
    INFLATE_NEED_OUTPUT = 3, /* the next block does not fit in out_cap */
    INFLATE_CLEAN = 4,       /* symbols only: the last INFLATE_WINDOW symbols hold no marker */
};

/* Where a gzip member ended inside a decode that went on with the next
 * member (inflate_job.member_header). */
typedef struct {
    uint64_t end_bit;  /* just past the member's final block */
    uint64_t next_bit; /* the next member's first block, past its trailer and header */
    size_t out;        /* elements written before the next member's */
} inflate_member_end;

/* One decode: the caller fills the fields marked "in", the decoder updates
 * those marked "in/out". */
typedef struct {
    const uint8_t *in;   /* in: the input span */
    size_t in_len;       /* in: its bytes; in_final: the span ends where the input does */
    uint64_t bit;        /* in/out: bit offset in `in` of a block start */
    uint64_t stop_bit;   /* in: stop at the first block boundary at or past this bit */
    size_t out_limit;    /* in: stop at the first block boundary with out_len >= this */
    void *out;           /* in: uint8_t (bytes) or uint16_t (symbols) */
    size_t out_len;      /* in/out: elements written */
    size_t out_cap;      /* in: room in out; nothing past it is ever written */
    size_t history;      /* in, bytes only: valid bytes before out[0] that the stream may copy */
    uint64_t marker_free; /* in/out, symbols only: out[marker_free..out_len) holds no marker */
    uint64_t scanned;    /* in/out, symbols only: out[0..scanned) already checked for markers */
    int blocks;          /* out: blocks decoded by this call */
    /* in: where a final block is followed by an 8-byte gzip trailer and a
     * header that member_header accepts (its length, else 0), all in the
     * span, the decode goes on with the next member, whose back-references
     * may not reach before its start, and records the member's end in
     * ends[nends++] while ends_cap allows; NULL: it ends at a final block */
    size_t (*member_header)(const uint8_t *p, size_t n);
    inflate_member_end *ends; /* in: room for ends_cap member ends */
    size_t ends_cap;
    size_t nends;         /* in/out: member ends recorded */
    /* in: called at each block boundary the decode reaches after a block that
     * is not final, with its bit offset in `in` and the elements written
     * before it (NULL: none) */
    void (*on_block)(void *ctx, uint64_t bit, size_t out_len);
    void *block_ctx;
    /* in, bytes only: the decode may take a long span of mostly literals
     * as two halves at once (see inflate_decode_bytes) */
    int halves;
} inflate_job;

/* Decodes blocks into bytes (see inflate_job): out[-history..0) is the stream's
 * known history. With j->halves, where most of the data are literals
 * (float noise) and the span is long, the rest after the first 64 KiB is
 * cut in two at a block start and both halves are decoded at once on this
 * thread (their table lookups overlap), the second's bytes then moved
 * after the first's: the results, stops and callbacks are those of one
 * pass. */
int inflate_decode_bytes(inflate_job *j);

/* The most threads on which a chunk's bytes are decoded as two halves of
 * itself (inflate_job.halves); on more, the parallel readers decode two
 * chunks at once on a thread (inflate_decode_bytes_pair) where the stream
 * took INFLATE_PAIR_BITS compressed bits a decoded byte or more (data of
 * mostly literals, whose lookups then overlap). BENCHMARKS.md and
 * docs/codec.md give the measurements behind both numbers. */
#define INFLATE_HALVES_THREADS 4
#define INFLATE_PAIR_BITS 7

/* inflate_decode_bytes of two independent jobs at once on this thread, for
 * data of mostly literals: their table lookups overlap where each alone
 * waits for the one before. Each job's results, stops and callbacks are
 * those of its own inflate_decode_bytes without halves. Returns a's
 * result; b's goes to *rb. */
int inflate_decode_bytes_pair(inflate_job *a, inflate_job *b, int *rb);

/* How many decodes so far took their second half that way (for tests). */
uint64_t inflate_halves(void);

/* Decodes blocks into symbols (see inflate_job) with the window unknown; stops
 * also (INFLATE_CLEAN) at the first boundary where the last INFLATE_WINDOW symbols
 * are all bytes, at least INFLATE_WINDOW symbols into the output. */
int inflate_decode_symbols(inflate_job *j);

/* Writes n symbols as bytes: markers take their byte from window (the
 * INFLATE_WINDOW bytes before the symbols' start, of which only the last
 * `valid` exist). dst may be the symbols' own memory ((uint8_t *)sym): each
 * byte is written after its symbol is read. Returns 0, or -1 when a marker
 * points before them. */
int inflate_resolve(uint8_t *dst, const uint16_t *sym, size_t n, const uint8_t *window,
                    size_t valid);

/* The first bit offset in [from, to) of in[0..len) where a non-final
 * dynamic-Huffman block with valid, complete codes or a non-final stored
 * block with matching LEN/NLEN starts; UINT64_MAX if none. */
uint64_t inflate_find_block(const uint8_t *in, size_t len, uint64_t from, uint64_t to);

/* Whether a decode that ends at bit `end` continues exactly as one started
 * at `start`: the same offset, or the same stored block whose 3 header bits
 * were placed differently before its byte-aligned length, either after any
 * run of empty non-final fixed-Huffman blocks from `end` (no output). */
int inflate_same_start(const uint8_t *in, size_t len, uint64_t end, uint64_t start);

/* The decoder's instruction-set variants, which give the same results:
 * the plain code, and on x86-64 the one for CPUs with BMI1 and BMI2. */
enum { INFLATE_BASELINE = 0, INFLATE_BMI2 = 1 };

/* Makes v the variant every later decode uses, at most the widest this CPU
 * runs, whatever GPUBATCH_CPU_SIMD says; v < 0: the one chosen by default
 * (the widest, the baseline where GPUBATCH_CPU_SIMD names it). Returns the
 * variant now in use. For tests and timing, never during a decode. */
int inflate_force_variant(int v);

#endif
