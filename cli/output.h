/* output.h - the compressed or plain output of a command: an io_sink
 * (atomic file or stdout) with a blocked-gzip writer on top.
 *
 * Options shared by every command that writes an array: -o FILE, -c
 * (stdout), -f, -1..-9, --compress, --no-compress. The output's name says
 * what it holds: a name ending in .gz gets blocked gzip, one ending in .npz
 * an archive of one stored member (np.savez's), any other name (and
 * standard output) plain bytes, unless --compress or a level, or
 * --no-compress, says so outright. Output to a terminal is refused unless
 * forced (-f). */
#ifndef GPUBATCH_CLI_OUTPUT_H
#define GPUBATCH_CLI_OUTPUT_H

#include <stddef.h>

#include "io/gzip/gz_writer.h"
#include "io/reader.h"
#include "io/sink.h"

#define CLI_DEFAULT_LEVEL 1 /* fast: deflate is the bottleneck; -9 for smaller files */

/* Bits of what --compress and --no-compress said (OUT_BY_NAME: neither). */
enum { OUT_BY_NAME = 0, OUT_COMPRESS = 1, OUT_PLAIN = 2 };

typedef struct {
    const char *path; /* NULL or "-": stdout */
    int level;        /* set by out_resolve: 0 plain, 1..9 blocked gzip */
    int force;
    int threads;      /* compression threads (>= 1) */
    int level_given;  /* -1..-9 on the command line; 0 when none */
    int compress;     /* OUT_BY_NAME, or the OUT_COMPRESS / OUT_PLAIN bits given */
    int to_stdout;    /* -c was given */
    int npz;          /* set by out_resolve: the name ends in .npz (see io/npzwrite.h) */
} out_opts;

typedef struct {
    io_sink *sink;
    gz_writer *gz;
    const char *name; /* for messages */
    int part;         /* a shard's part file: out_close ends it with its CRC line */
    int npz;          /* an .npz archive: the bytes written are its member's */
    unsigned char magic[6]; /* the member's first bytes, which must be .npy's */
    size_t magic_len;
} out_stream;

/* Help text for the output options. */
#define CLI_OUTPUT_HELP                                                                  \
    "Output:\n"                                                                          \
    "  -o, --output FILE  write FILE (atomically: a temporary file renamed at the end)\n" \
    "  -c, --stdout       write to standard output (the default without -o)\n"          \
    "  -f, --force        overwrite an existing FILE (or write to a terminal)\n"        \
    "  A FILE named *.gz is blocked gzip (BGZF), *.npz an archive of one stored\n"     \
    "  .npy member, arr_0.npy (as np.savez writes), any other name and standard\n"    \
    "  output plain, unless one of these says otherwise:\n"                             \
    "  --compress         write blocked gzip (level 1) whatever the name\n"            \
    "  -1 .. -9           write blocked gzip at this level (a FILE must end in .gz,\n"  \
    "                     or add --compress)\n"                                         \
    "  --no-compress      write the array uncompressed whatever the name\n"

/* Long option ids of --no-compress and --compress (above every command's own ids). */
#define OPT_NO_COMPRESS 1200
#define OPT_COMPRESS 1201

/* The output options for a getopt_long table, and their short letters. */
#define CLI_OUTPUT_LONGOPTS                                                  \
    {"output", required_argument, 0, 'o'}, {"stdout", no_argument, 0, 'c'}, \
        {"force", no_argument, 0, 'f'}, {"no-compress", no_argument, 0, OPT_NO_COMPRESS}, \
        {"compress", no_argument, 0, OPT_COMPRESS}
#define CLI_OUTPUT_SHORTOPTS "o:cf123456789"

/* Handles an output option; returns 1 when handled, 0 when opt is not one
 * (out_resolve checks the options together). */
int out_option(out_opts *o, int opt, const char *arg);

/* After the options: checks that they go together and with the output's
 * name, and sets o->level (blocked gzip at the level given, or
 * CLI_DEFAULT_LEVEL, where the name or an option asks for it; else 0).
 * Returns 0, or 2 after printing a usage error. */
int out_resolve(out_opts *o);

/* Nonzero when path names a file that the name alone makes compressed (it
 * ends in .gz). */
int out_name_is_gz(const char *path);

/* After out_resolve: a usage error (2) when the output is an .npz archive
 * and raw (--raw: its member needs the .npy header) or shard (--shard: a
 * part file) is set; else 0. */
int out_npz_check(const out_opts *o, int raw, int shard);

/* The identity of the file an input reader reads, for out_open's inputs:
 * the named file, or whatever standard input is (a command's reader
 * without a name reads it). Returns 1 with *id set, 0 when unknown. */
int out_input_id(const io_reader *r, io_file_id *id);

/* Opens the output; inputs (may be NULL) must not be overwritten, and a
 * terminal is refused unless opt->force. Returns 0 or 1 after printing an
 * error. */
int out_open(out_stream *o, const out_opts *opt, const io_file_id *inputs, size_t ninputs);

/* Makes the output a shard's part file (see shard.h): writes its header
 * text, then counts the CRC-32 of what follows for the line out_close
 * ends it with. 0 or 1 after printing an error. */
int out_begin_part(out_stream *o, const char *head);

/* Appends bytes; 0 or 1 after printing an error. */
int out_write(out_stream *o, const void *buf, size_t n);

/* Appends a span of blocks compressed elsewhere (gz_writer_write_span);
 * 0 or 1 after printing an error. */
int out_write_span(out_stream *o, const gz_writer_span *s);

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
