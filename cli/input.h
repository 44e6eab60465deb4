/* input.h - the inputs a FILE argument names: a file, standard input ("-"),
 * or arrays in a zip archive (.npz, as np.savez and np.savez_compressed
 * write it): FILE.npz names every member in archive order, each reported as
 * FILE.npz:KEY (KEY: the member's name without ".npy", as np.load shows
 * it), and FILE.npz:KEY (or FILE.npz:KEY.npy) names that member alone. An
 * archive is told by its first bytes (a zip local header or end record) or
 * an .npz name; an argument that names an existing file is always that
 * file, colons and all. */
#ifndef GPUBATCH_CLI_INPUT_H
#define GPUBATCH_CLI_INPUT_H

#include <stddef.h>

#include "io/npz.h"
#include "io/reader.h"

/* One input. */
typedef struct {
    const char *name;              /* for messages and results: FILE or FILE.npz:KEY */
    const char *path;              /* the file to open ("-": stdin) */
    const io_zip_member *member;   /* the archive member, or NULL: the whole file */
} input_item;

/* The inputs of one argument, handed out in order by input_next(). */
typedef struct {
    const char *arg;
    char *path;        /* the file (the archive's path for members) */
    npz_archive *npz;  /* NULL: the argument is one plain input */
    size_t next, end;  /* members still to hand out: [next, end) */
    char *name;        /* the name of the member handed out last */
    int done;          /* the plain input has been handed out */
} input_list;

/* Resolves arg. 0, or 1 after printing an error naming the file (a damaged
 * archive, "no member KEY", an archive with no arrays). */
int input_begin(input_list *l, const char *arg);

/* Number of inputs the argument names. */
size_t input_count(const input_list *l);

/* The next input: 1 and *it filled (valid until the next call or
 * input_end), or 0 when none is left. */
int input_next(input_list *l, input_item *it);

/* Frees what input_begin made; accepts a list it failed on. */
void input_end(input_list *l);

/* For a command that reads one input: resolves arg, which must name
 * exactly one (an archive of several arrays is refused, asking for
 * FILE.npz:KEY), fills *it and, when r is not NULL, opens its reader there.
 * 0, or 1 after printing an error (l is then ended: nothing to free). */
int input_one(input_list *l, const char *arg, input_item *it, io_reader **r);

/* Sets the seek index (io/gzip/gzindex.h) that input_open reads the next
 * gzip files through: the file at path (--index), or with path NULL the
 * file FILE.gzidx found beside a gzip FILE, unless off (--no-index). */
void input_set_index(const char *path, int off);

/* Opens the reader of an input: the file as io_reader_open does, through
 * its seek index where input_set_index finds one, or the archive member.
 * 0, or a negative io_error with the reason in *st (a stale or foreign
 * index is one, its line naming the index). */
int input_open(const input_item *it, io_reader **r, io_status *st);

/* For a command that reads the whole of an input: checks a stored archive
 * member's CRC-32 (a deflated one is checked as it is inflated, a plain
 * file has none) before anything is written. 0, or 1 after an error line
 * naming the input (a part of an input, --shard, cannot be checked so). */
int input_check(const input_item *it);

/* The file that arg names (an archive member's archive) in buf, or arg
 * itself when that is the file; for size estimates before opening. */
const char *input_file(const char *arg, char *buf, size_t len);

/* For a command that prints to standard output: refuses (1, after an error
 * line) where standard output is a regular file or disk that one of the n
 * args names, as a named output is refused; else 0. */
int input_stdout_guard(const char *const *args, int n);

#endif
