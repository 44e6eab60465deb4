/* gzwrite.h - blocked gzip (BGZF-compatible) output with deterministic bytes.
 *
 * Data is cut into blocks of at most GZW_BLOCK_DATA uncompressed bytes; each
 * becomes one gzip member with the BGZF "BC" extra field, MTIME 0, OS 255
 * and no file name, and the stream ends with the standard 28-byte empty
 * block. The output depends only on the bytes written and the level, never
 * on how the caller splits its writes or on the thread count. Level 0 means
 * no compression: bytes go to the sink unchanged (no gzip framing). */
#ifndef GPUBATCH_IO_GZWRITE_H
#define GPUBATCH_IO_GZWRITE_H

#include <stddef.h>

#include "sink.h"

#define GZW_BLOCK_DATA 0xff00
#define GZW_EOF_LEN 28

/* The empty block that ends every blocked gzip stream. */
extern const unsigned char gz_eof_block[GZW_EOF_LEN];

typedef struct gz_writer gz_writer;

/* Starts a writer on top of sink (not owned). level 0..9; threads >= 1
 * compress blocks in parallel, written in order. */
int gz_writer_open(gz_writer **out, io_sink *sink, int level, int threads);

/* Appends n bytes. Returns 0 or a negative io_error (sticky). */
int gz_writer_write(gz_writer *w, const void *buf, size_t n);

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
