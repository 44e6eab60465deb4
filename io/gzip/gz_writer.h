/* gz_writer.h - blocked gzip (BGZF-compatible) output with deterministic bytes.
 *
 * Data is cut into blocks of at most GZ_WRITER_BLOCK_DATA uncompressed bytes; each
 * becomes one gzip member with the BGZF "BC" extra field, MTIME 0, OS 255
 * and no file name, and the stream ends with the standard 28-byte empty
 * block. The output depends only on the bytes written and the level, never
 * on how the caller splits its writes or on the thread count. Level 0 means
 * no compression: bytes go to the sink unchanged (no gzip framing). */
#ifndef GPUBATCH_IO_GZWRITE_H
#define GPUBATCH_IO_GZWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "bgzf.h"
#include "io/sink.h"

#define GZ_WRITER_BLOCK_DATA 0xff00
#define GZ_WRITER_EOF_LEN BGZF_EOF_LEN

/* The empty block that ends every blocked gzip stream (BGZF_EOF_BYTES). */
extern const unsigned char gz_eof_block[GZ_WRITER_EOF_LEN];

typedef struct gz_writer gz_writer;

/* Starts a writer on top of sink (not owned). level 0..9; threads >= 1
 * compress blocks in parallel, written in order. */
int gz_writer_open(gz_writer **out, io_sink *sink, int level, int threads);

/* Appends n bytes. Returns 0 or a negative io_error (sticky). */
int gz_writer_write(gz_writer *w, const void *buf, size_t n);

/* Raw bytes written so far (the position in the uncompressed stream). */
uint64_t gz_writer_offset(const gz_writer *w);

/* Splits bytes of data that start at stream position offset at the block
 * boundaries of the stream: *head bytes complete the block in progress (or
 * are all of the data when no boundary follows), then *nblocks whole
 * blocks of GZ_WRITER_BLOCK_DATA bytes; the rest starts the next block. */
void gz_writer_block_split(uint64_t offset, size_t bytes, size_t *head, size_t *nblocks);

/* A piece of the stream whose whole blocks were compressed elsewhere by the
 * same encoder (ptx/deflate_math.h) at the writer's level: head raw bytes
 * completing the block in progress, nblocks BGZF members of GZ_WRITER_BLOCK_DATA
 * bytes each (members_len bytes end to end, as df_bgzf_member lays them
 * out), then tail raw bytes (gz_writer_block_split's geometry). */
typedef struct {
    const void *head;
    size_t head_len;
    const void *members;
    size_t members_len;
    size_t nblocks;
    const void *tail;
    size_t tail_len;
} gz_writer_span;

/* Appends a span: the bytes written are those that writing its raw data
 * with gz_writer_write would give. The head must end at a block boundary
 * when nblocks > 0, and the level must not be 0; else IO_ERR_FORMAT. */
int gz_writer_write_span(gz_writer *w, const gz_writer_span *s);

/* Where a producer hands its output: a span compressed elsewhere (span not
 * NULL), or n plain bytes at buf; 0, or nonzero once the failure has been
 * reported (it stops the producer, which returns it). */
typedef int (*gz_writer_piece_write)(void *ctx, const gz_writer_span *span, const void *buf,
                                     size_t n);

/* Compresses what is buffered, writes the end-of-file block and frees the
 * writer (not the sink). Returns 0 or a negative io_error. */
int gz_writer_finish(gz_writer *w);

/* Like gz_writer_finish without the end-of-file block: for a part that
 * other parts follow (gzip members concatenate, so the parts' bytes joined
 * in order and ended by the last part's EOF block form one valid stream). */
int gz_writer_finish_part(gz_writer *w);

/* Frees without finishing (after an error); accepts NULL. */
void gz_writer_free(gz_writer *w);

#endif
