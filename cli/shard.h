/* shard.h - one of N parts of an input (`--shard I/N`), and the small files
 * that shards write for `gpubatch merge`.
 *
 * Reductions cut the array on tile boundaries (RD_TILE elements): shard I
 * of N takes tiles [T*I/N, T*(I+1)/N) of the T tiles, so shards may be
 * empty when N > T. Its state file holds the exact partial state: integer
 * sums, counts, extrema with their global indices, and for float sums the
 * maximal aligned subtrees of its tile range (see rd_tree), so that merging
 * the shards in index order gives the bits of one run.
 *
 * Array outputs (quadratic roots) cut rows so that every part but the
 * last ends on a blocked-gzip block boundary of the final output stream;
 * shard 0's part starts with the .npy header. A part file is a text header
 * ending in a line "data", the part's bytes (blocked gzip with its
 * end-of-file block, or plain), so merging is concatenation, and a line
 * "part-end CRC" (SHARD_PART_END_LEN bytes) with the CRC-32 of those bytes.
 *
 * Both kinds of file name their input and carry its size, dtype, shape,
 * io_reader_fingerprint ("input-check") and, from format 3 on, its
 * modification time to the nanosecond ("input-time"), which merge compares
 * (a rewrite in place between shard runs keeps the size and may keep the
 * sampled pieces, not the time), and a line
 * "check CRC" with the CRC-32 of the text before it: merge treats them as
 * hostile input, checking every field it can against the others. */
#ifndef GPUBATCH_CLI_SHARD_H
#define GPUBATCH_CLI_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "io/frame.h"
#include "io/reader.h"
#include "io/sink.h"
#include "runtime/reduce.h"

#define SHARD_MAX_COUNT 1000000

typedef struct {
    uint64_t index, count; /* count 0: the whole input */
} shard_spec;

/* Where a sharded input's data lies in its decoded bytes. */
typedef struct {
    uint64_t data_start; /* decoded offset of the first data byte */
    uint64_t data_bytes; /* data bytes of the whole array */
    int64_t source_bytes; /* size of the file as stored (its identity, with the shape) */
    uint64_t check;       /* io_reader_fingerprint of the file: the same for every shard */
    int has_time;         /* the file's modification time is known: */
    int64_t time_s;       /* seconds and nanoseconds, a rewrite's evidence */
    uint32_t time_ns;
} shard_input;

/* What a state file or a part file says about itself and its input. */
typedef struct {
    int kind;            /* SHARD_KIND_* */
    shard_spec spec;
    char input[4096];    /* the input's name as the shard was given it */
    int64_t source_bytes;
    dt_type dtype;
    int ndim;            /* -1: raw input without --shape */
    uint64_t shape[NPY_MAX_DIMS];
    int fortran_order;
    uint64_t nelem;      /* elements of the whole array */
    uint64_t input_check; /* shard_input.check */
    int has_time;        /* input-time given (format 3; format 2 has none) */
    int64_t time_s;      /* shard_input's modification time */
    uint32_t time_ns;
    uint64_t first, end; /* reduce: tile range; parts: output byte range */
    uint64_t total;      /* parts: output bytes of the whole array */
    int level;           /* parts: gzip level, 0 for plain */
    uint64_t data_offset; /* parts: file offset of the data */
    /* a reduction along axes (state format 5): first and end are elements */
    int axis;            /* 1: the state is of reduce --axis */
    unsigned axes;       /* the reduced axes (bit a: axis a) */
    int keepdims;
    unsigned char *blob; /* the accumulators (ax_state_save's bytes); free() it */
    size_t blob_len;
} shard_meta;

enum { SHARD_KIND_STATE = 1, SHARD_KIND_PART = 2 };

#define SHARD_PART_END_LEN 18 /* "part-end XXXXXXXX\n" */

/* Writes a part's last line for the CRC-32 of its data into buf
 * (SHARD_PART_END_LEN + 1 bytes). */
void shard_part_end(char *buf, uint32_t crc);

/* Reads a part's last line: 0 with *crc, or -1 when it is not one. */
int shard_part_end_parse(const char *buf, uint32_t *crc);

/* Parses "I/N" (0 <= I < N); -1 on a bad value. */
int shard_parse(const char *arg, shard_spec *s);

/* Tiles [*t0, *t1) of shard s of an array of nelem elements. */
void shard_tiles(const shard_spec *s, uint64_t nelem, uint64_t *t0, uint64_t *t1);

/* Rows [*r0, *r1) of shard s of `rows` rows whose output has header_bytes
 * of header then row_bytes per row: boundaries are moved up to the next
 * row whose output offset is a multiple of block (when one exists), so the
 * compressed parts concatenate into the bytes of one run. */
void shard_rows(const shard_spec *s, uint64_t rows, uint64_t header_bytes, uint64_t row_bytes,
                uint64_t block, uint64_t *r0, uint64_t *r1);

/* After frame_open: finds where the data lies and how long it is (without
 * reading it), checks that it is a whole number of elements. 0, or a
 * negative io_error and a reason. */
int shard_input_open(io_reader *r, const frame_info *fi, shard_input *in, io_status *st);

/* Positions r at data bytes [start, start + len); the last shard reads on to
 * the end so that data beyond what the header promises is still an error.
 * Blocked gzip: first checks that every block this shard answers for (from
 * the file's first block for the shard at 0, to the last block for the last
 * shard; shards that meet share no block) inflates as one whole block, as
 * the walk by the headers that positions every shard assumes, so that a
 * block that lies about its size fails the shard that holds it. */
int shard_input_seek(io_reader *r, const shard_input *in, uint64_t start, uint64_t len, int last,
                     io_status *st);

/* Fills the input fields of m from the frame and r. */
void shard_meta_input(shard_meta *m, const char *name, const frame_info *fi,
                      const shard_input *in, const shard_spec *s);

/* Writes a reduce shard's state file atomically. input: the input file's
 * identity (may be NULL). Returns 0, or 1 after printing an error. */
int shard_write_state(const char *path, int force, const io_file_id *input, const shard_meta *m,
                      const rd_state *st);

/* Writes a reduce --axis shard's state file (format 5) atomically: m's
 * axes, keepdims, first and end (the shard's elements), st's ops, skipnan
 * and ddof, and the accumulators' len bytes at blob. Returns 0, or 1 after
 * printing an error. */
int shard_write_axis_state(const char *path, int force, const io_file_id *input,
                           const shard_meta *m, const rd_state *st, const unsigned char *blob,
                           size_t len);

/* Text of a part file's header (ending in the "data" line) into buf;
 * returns its length, or -1 when it does not fit. */
int shard_part_header(char *buf, size_t len, const shard_meta *m);

/* For array outputs: positions r at the records of shard s of an input made
 * of whole records (record_in bytes each, record_out bytes of output each,
 * after an output header of header_len(ctx, records) bytes; 0 for raw
 * output), cut so that the parts' blocked gzip concatenates into the bytes
 * of one run (level: the gzip level, 0 plain). Fills the part file's header
 * text, the records of the whole input and the shard's data bytes. Returns
 * 0, or 1 after printing an error naming name. */
int shard_part_open(io_reader *r, const frame_info *fi, const shard_spec *s, const char *name,
                    size_t record_in, size_t record_out, uint64_t (*header_len)(void *, uint64_t),
                    void *ctx, int level, char *part_head, size_t part_len, uint64_t *records,
                    uint64_t *limit);

/* Reads the header of a state or part file (and for a state, the state;
 * for an axis state, ops, skipnan and ddof in st, the accumulators in
 * m->blob). Returns 0, or -1 with a one-line reason. */
int shard_read(const char *path, shard_meta *m, rd_state *st, io_status *why);

#endif
