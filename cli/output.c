/* output.c - opening, writing and committing a command's output. */
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npzwrite.h"
#include "msg.h"
#include "options.h"
#include "shard.h"

/* Records the output option opt (out_resolve decides from them all). */
int out_option(out_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case 'o':
        o->path = arg;
        return 1;
    case 'c':
        o->to_stdout = 1;
        return 1;
    case 'f':
        o->force = 1;
        return 1;
    case OPT_NO_COMPRESS:
        o->compress |= OUT_PLAIN;
        return 1;
    case OPT_COMPRESS:
        o->compress |= OUT_COMPRESS;
        return 1;
    default:
        if (opt >= '1' && opt <= '9') {
            o->level_given = opt - '0';
            return 1;
        }
        return 0;
    }
}

/* Whether path ends in ".gz" (and is more than that). */
int out_name_is_gz(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 3 && !strcmp(path + n - 3, ".gz");
}

/* Whether path ends in suffix (and is more than that). */
static int out_name_ends(const char *path, const char *suffix)
{
    size_t n = path ? strlen(path) : 0, k = strlen(suffix);
    return n > k && !strcmp(path + n - k, suffix);
}

/* Checks the output options together and sets the level (see output.h). */
int out_resolve(out_opts *o)
{
    int to_file = o->path && strcmp(o->path, "-");
    if (o->to_stdout && to_file)
        return cli_usage_error("", "-c (standard output) and -o %s do not go together", o->path);
    o->npz = to_file && out_name_ends(o->path, ".npz");
    if (to_file && out_name_ends(o->path, ".npz.gz"))
        return cli_usage_error("", "'%s': an .npz archive is not gzip-compressed: name it "
                               "%.*s.npz or %.*s.npy.gz", o->path, (int)strlen(o->path) - 7,
                               o->path, (int)strlen(o->path) - 7, o->path);
    if (o->npz && (o->level_given || (o->compress & OUT_COMPRESS))) {
        char what[16];
        snprintf(what, sizeof what, o->level_given ? "-%d" : "--compress", o->level_given);
        return cli_usage_error("", "%s asks for blocked gzip, but '%s' is an .npz archive of one "
                               "stored member (as np.savez writes): drop %s, or name it %.*s.npy.gz",
                               what, o->path, what, (int)strlen(o->path) - 4, o->path);
    }
    if (o->to_stdout)
        o->path = "-";
    if (o->compress == (OUT_COMPRESS | OUT_PLAIN))
        return cli_usage_error("", "--compress and --no-compress do not go together");
    if ((o->compress & OUT_PLAIN) && o->level_given)
        return cli_usage_error("", "-%d and --no-compress do not go together", o->level_given);
    if (to_file && o->level_given && !o->compress && !out_name_is_gz(o->path))
        return cli_usage_error("", "-%d asks for blocked gzip, but '%s' does not end in .gz: "
                               "name it %s.gz, or add --compress to compress it anyway",
                               o->level_given, o->path, o->path);
    int compressed = o->compress ? o->compress == OUT_COMPRESS
                                 : o->level_given || (to_file && out_name_is_gz(o->path));
    o->level = !compressed ? 0 : o->level_given ? o->level_given : CLI_DEFAULT_LEVEL;
    return 0;
}

/* The usage errors of an .npz archive with --raw or --shard (see output.h). */
int out_npz_check(const out_opts *o, int raw, int shard)
{
    if (o->npz && raw)
        return cli_usage_error("", "--raw writes no .npy header, and the member of the .npz "
                               "archive '%s' is an .npy array: drop --raw, or name the output "
                               "otherwise", o->path);
    if (o->npz && shard)
        return cli_usage_error("", "--shard writes a part file, not an .npz archive: name '%s' "
                               "otherwise (merge -o FILE.npz joins the parts into one)", o->path);
    return 0;
}

/* The input's file identity, standard input's when it has no name. */
int out_input_id(const io_reader *r, io_file_id *id)
{
    struct stat st;
    if (io_reader_identity(r, &id->dev, &id->ino) == 0)
        return 1;
    if (fstat(STDIN_FILENO, &st) < 0)
        return 0;
    *id = (io_file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
    return 1;
}

/* Refuses to write an array (blocked gzip when compressed) to a terminal
 * unless forced, as gzip does: 0, or 1 after an error (and the output
 * dropped). */
static int out_refuse_terminal(out_stream *o, const out_opts *opt)
{
    if (opt->force || !io_sink_is_tty(o->sink))
        return 0;
    msg_error("refusing to write %s data to a terminal (use -o FILE or a pipe, or -f to write "
              "it anyway)", opt->level > 0 ? "compressed" : "binary");
    out_abort(o);
    return 1;
}

/* Reports a failed write's rc (nothing for a closed pipe); 0 or 1. */
static int out_written(out_stream *o, int rc)
{
    if (rc == 0)
        return 0;
    if (rc == IO_ERR_FORMAT)
        msg_error("%s: compressed blocks out of place in the output stream", o->name);
    else if (rc != IO_ERR_PIPE)
        msg_error("%s: %s", o->name, io_sink_error(o->sink));
    return 1;
}

/* Opens the sink and the gzip writer. */
int out_open(out_stream *o, const out_opts *opt, const io_file_id *inputs, size_t ninputs)
{
    io_status st;
    memset(o, 0, sizeof *o);
    const char *path = opt->path ? opt->path : "-";
    o->name = strcmp(path, "-") ? path : "(stdout)";
    if (io_sink_open(&o->sink, path, opt->force, inputs, ninputs, &st) < 0)
        return msg_status(o->name, &st);
    if (out_refuse_terminal(o, opt))
        return 1;
    if (gz_writer_open(&o->gz, o->sink, opt->level, opt->threads) < 0) {
        msg_error("%s: cannot start the compressor", o->name);
        out_abort(o);
        return 1;
    }
    if (opt->npz) {
        unsigned char head[NPZW_HEAD_MAX];
        o->npz = 1;
        if (out_written(o, io_sink_write(o->sink, head, npzw_head(head)))) {
            out_abort(o);
            return 1;
        }
        io_sink_crc_start(o->sink);
    }
    return 0;
}

/* Ends an .npz archive after its member's bytes: the member must be an
 * .npy array; 0, or 1 after an error. */
static int out_npz_end(out_stream *o)
{
    unsigned char tail[NPZW_TAIL_MAX];
    if (o->magic_len < sizeof o->magic || memcmp(o->magic, "\x93NUMPY", sizeof o->magic)) {
        msg_error("%s: the data has no .npy header (raw input), and an .npz archive's member "
                  "must be an .npy array: name the output otherwise", o->name);
        return 1;
    }
    size_t n = npzw_tail(tail, io_sink_crc(o->sink), io_sink_crc_len(o->sink));
    return out_written(o, io_sink_write(o->sink, tail, n));
}

/* Writes a part's header and starts its data's CRC. */
int out_begin_part(out_stream *o, const char *head)
{
    if (io_sink_write(o->sink, head, strlen(head)) < 0) {
        msg_error("%s: %s", o->name, io_sink_error(o->sink));
        return 1;
    }
    io_sink_crc_start(o->sink);
    o->part = 1;
    return 0;
}

/* Writes through the compressor. */
int out_write(out_stream *o, const void *buf, size_t n)
{
    size_t k = sizeof o->magic - o->magic_len;
    if (o->npz && k) {
        memcpy(o->magic + o->magic_len, buf, k < n ? k : n);
        o->magic_len += k < n ? k : n;
    }
    return out_written(o, gz_writer_write(o->gz, buf, n));
}

/* Writes a span through the compressor. */
int out_write_span(out_stream *o, const gz_writer_span *s)
{
    return out_written(o, gz_writer_write_span(o->gz, s));
}

/* Renames the file into place (the compressor already finished). */
static int out_commit(out_stream *o)
{
    int rc = io_sink_commit(o->sink);
    o->sink = NULL;
    if (rc < 0) {
        if (rc != IO_ERR_PIPE)
            msg_error("%s: %s", o->name, io_sink_commit_error());
        return 1;
    }
    return 0;
}

/* Flushes the compressor, ends a part with its CRC line and renames the
 * file into place. */
int out_close(out_stream *o)
{
    char end[SHARD_PART_END_LEN + 1];
    int rc = gz_writer_finish(o->gz);
    o->gz = NULL;
    if (rc == 0 && o->npz && out_npz_end(o)) {
        out_abort(o);
        return 1;
    }
    if (rc == 0 && o->part) {
        shard_part_end(end, io_sink_crc(o->sink));
        rc = io_sink_write(o->sink, end, SHARD_PART_END_LEN);
    }
    if (rc < 0) {
        if (rc != IO_ERR_PIPE)
            msg_error("%s: %s", o->name, io_sink_error(o->sink));
        out_abort(o);
        return 1;
    }
    return out_commit(o);
}

/* Drops everything written so far. */
void out_abort(out_stream *o)
{
    gz_writer_free(o->gz);
    o->gz = NULL;
    io_sink_abort(o->sink);
    o->sink = NULL;
}

/* Opens the output and, for every part after the first, a spool with its
 * own compressor. */
int out_parts_open(out_parts *p, int nparts, const out_opts *opt, const io_file_id *inputs,
                   size_t ninputs)
{
    io_status st;
    memset(p, 0, sizeof *p);
    p->nparts = nparts;
    if (out_open(&p->main, opt, inputs, ninputs))
        return 1;
    for (int k = 1; k < nparts; k++) {
        if (io_sink_open_spool(&p->spool[k], p->main.sink, &st) < 0) {
            msg_status(NULL, &st);
            out_parts_abort(p);
            return 1;
        }
        if (gz_writer_open(&p->gz[k], p->spool[k], opt->level, opt->threads) < 0) {
            msg_error("%s: cannot start the compressor", p->main.name);
            out_parts_abort(p);
            return 1;
        }
    }
    return 0;
}

/* Appends bytes to one part. */
int out_parts_write(out_parts *p, int part, const void *buf, size_t n)
{
    if (part == 0)
        return out_write(&p->main, buf, n);
    int rc = gz_writer_write(p->gz[part], buf, n);
    if (rc < 0)
        msg_error("%s", io_sink_error(p->spool[part]));
    return rc < 0;
}

/* Ends every part (only the last with the end-of-file block), appends the
 * spools to the output in order and commits it. */
int out_parts_close(out_parts *p)
{
    if (p->nparts <= 1)
        return out_close(&p->main);
    const char *what = NULL, *name = NULL; /* name: NULL for a spool (its text names it) */
    int rc = 0;
    for (int k = 1; k < p->nparts && rc == 0; k++) {
        rc = k + 1 < p->nparts ? gz_writer_finish_part(p->gz[k]) : gz_writer_finish(p->gz[k]);
        p->gz[k] = NULL;
        what = io_sink_error(p->spool[k]);
    }
    if (rc == 0) {
        rc = gz_writer_finish_part(p->main.gz);
        p->main.gz = NULL;
        what = io_sink_error(p->main.sink);
        name = p->main.name;
    }
    for (int k = 1; k < p->nparts && rc == 0; k++) {
        rc = io_sink_spool_copy(p->spool[k], p->main.sink);
        name = *io_sink_error(p->spool[k]) ? NULL : p->main.name;
        what = name ? io_sink_error(p->main.sink) : io_sink_error(p->spool[k]);
    }
    if (rc < 0) {
        if (rc != IO_ERR_PIPE && name)
            msg_error("%s: %s", name, what);
        else if (rc != IO_ERR_PIPE)
            msg_error("%s", what);
        out_parts_abort(p);
        return 1;
    }
    for (int k = 1; k < p->nparts; k++) {
        io_sink_abort(p->spool[k]);
        p->spool[k] = NULL;
    }
    if (p->main.npz && out_npz_end(&p->main)) {
        out_abort(&p->main);
        return 1;
    }
    return out_commit(&p->main);
}

/* Drops the output and every spool. */
void out_parts_abort(out_parts *p)
{
    for (int k = 1; k < p->nparts; k++) {
        gz_writer_free(p->gz[k]);
        p->gz[k] = NULL;
        io_sink_abort(p->spool[k]);
        p->spool[k] = NULL;
    }
    out_abort(&p->main);
}
