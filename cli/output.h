/* output.h - the compressed or plain output of a command: an io_sink
 * (atomic file or stdout) with a blocked-gzip writer on top.
 *
 * Options shared by every command that writes an array: -o FILE, -c
 * (stdout), -f, -1..-9, --no-compress. Compressed output to a terminal is
 * refused. */
#ifndef GPUBATCH_CLI_OUTPUT_H
#define GPUBATCH_CLI_OUTPUT_H

#include <stddef.h>

#include "io/gzwrite.h"
#include "io/reader.h"
#include "io/sink.h"

#define CLI_DEFAULT_LEVEL 1 /* fast: deflate is the bottleneck; -9 for smaller files */

typedef struct {
    const char *path; /* NULL or "-": stdout */
    int level;        /* 0 = --no-compress */
    int force;
    int threads;      /* compression threads (>= 1) */
} out_opts;

typedef struct {
    io_sink *sink;
    gz_writer *gz;
    const char *name; /* for messages */
    int part;         /* a shard's part file: out_close ends it with its CRC line */
} out_stream;

/* Help text for the output options. */
#define CLI_OUTPUT_HELP                                                                  \
    "Output:\n"                                                                          \
    "  -o, --output FILE  write FILE (atomically: a temporary file renamed at the end)\n" \
    "  -c, --stdout       write to standard output (the default without -o)\n"          \
    "  -f, --force        overwrite an existing FILE\n"                                 \
    "  -1 .. -9           gzip level (default 1); output is blocked gzip (BGZF)\n"      \
    "  --no-compress      write the array uncompressed\n"

/* Long option id of --no-compress (above every command's own ids). */
#define OPT_NO_COMPRESS 1200

/* The output options for a getopt_long table, and their short letters. */
#define CLI_OUTPUT_LONGOPTS                                                  \
    {"output", required_argument, 0, 'o'}, {"stdout", no_argument, 0, 'c'}, \
        {"force", no_argument, 0, 'f'}, {"no-compress", no_argument, 0, OPT_NO_COMPRESS}
#define CLI_OUTPUT_SHORTOPTS "o:cf123456789"

/* Handles an output option; returns 1 when handled, 0 when opt is not one. */
int out_option(out_opts *o, int opt, const char *arg);

/* The identity of the file an input reader reads, for out_open's inputs:
 * the named file, or whatever standard input is (a command's reader
 * without a name reads it). Returns 1 with *id set, 0 when unknown. */
int out_input_id(const io_reader *r, io_file_id *id);

/* Opens the output; inputs (may be NULL) must not be overwritten. Returns 0
 * or 1 after printing an error. */
int out_open(out_stream *o, const out_opts *opt, const io_file_id *inputs, size_t ninputs);

/* Makes the output a shard's part file (see shard.h): writes its header
 * text, then counts the CRC-32 of what follows for the line out_close
 * ends it with. 0 or 1 after printing an error. */
int out_begin_part(out_stream *o, const char *head);

/* Appends bytes; 0 or 1 after printing an error. */
int out_write(out_stream *o, const void *buf, size_t n);

/* Appends a span of blocks compressed elsewhere (gz_writer_write_span);
 * 0 or 1 after printing an error. */
int out_write_span(out_stream *o, const gz_span *s);

/* Finishes compression and commits the file; 0 or 1 after an error. */
int out_close(out_stream *o);

/* Removes a partial output (after an error elsewhere); accepts a closed one. */
void out_abort(out_stream *o);

#define OUT_MAX_PARTS 4

/* An output written as nparts parts side by side and joined in order at the
 * end, for arrays produced a slice of every part at a time (planes): part 0
 * goes straight to the output, every other part through its own compressor
 * into an unnamed temporary file in the output's directory (or $TMPDIR
 * when writing to stdout), appended when the output closes. The blocked
 * gzip members of the parts concatenate into one valid stream, and each
 * part's bytes depend on its data alone. One part is a plain out_stream. */
typedef struct {
    out_stream main;
    io_sink *spool[OUT_MAX_PARTS];
    gz_writer *gz[OUT_MAX_PARTS];
    int nparts;
} out_parts;

/* Opens the output with nparts (1..OUT_MAX_PARTS) parts; 0 or 1 after an error. */
int out_parts_open(out_parts *p, int nparts, const out_opts *opt, const io_file_id *inputs,
                   size_t ninputs);

/* Appends bytes to part; 0 or 1 after printing an error. */
int out_parts_write(out_parts *p, int part, const void *buf, size_t n);

/* Joins the parts and commits the output; 0 or 1 after an error. */
int out_parts_close(out_parts *p);

/* Removes a partial output and the spools; accepts a closed one. */
void out_parts_abort(out_parts *p);

#endif
