/* output.c - opening, writing and committing a command's output. */
#include "output.h"

#include <string.h>

#include "msg.h"

/* Sets the out_opts field an output option names. */
int out_option(out_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case 'o':
        o->path = arg;
        return 1;
    case 'c':
        o->path = "-";
        return 1;
    case 'f':
        o->force = 1;
        return 1;
    case OPT_NO_COMPRESS:
        o->level = 0;
        return 1;
    default:
        if (opt >= '1' && opt <= '9') {
            o->level = opt - '0';
            return 1;
        }
        return 0;
    }
}

/* Opens the sink and the gzip writer. */
int out_open(out_stream *o, const out_opts *opt, const io_file_id *inputs, size_t ninputs)
{
    char err[512];
    memset(o, 0, sizeof *o);
    const char *path = opt->path ? opt->path : "-";
    o->name = strcmp(path, "-") ? path : "(stdout)";
    if (io_sink_open(&o->sink, path, opt->force, inputs, ninputs, err, sizeof err) < 0) {
        msg_error("%s: %s", o->name, err);
        return 1;
    }
    if (opt->level > 0 && io_sink_is_tty(o->sink)) {
        msg_error("refusing to write compressed data to a terminal (use -o FILE, a pipe, or "
                  "--no-compress)");
        out_abort(o);
        return 1;
    }
    if (gz_writer_open(&o->gz, o->sink, opt->level, opt->threads) < 0) {
        msg_error("%s: cannot start the compressor", o->name);
        out_abort(o);
        return 1;
    }
    return 0;
}

/* Writes through the compressor. */
int out_write(out_stream *o, const void *buf, size_t n)
{
    int rc = gz_writer_write(o->gz, buf, n);
    if (rc == 0)
        return 0;
    if (rc != IO_ERR_PIPE)
        msg_error("%s: %s", o->name, io_sink_error(o->sink));
    return 1;
}

/* Flushes the compressor and renames the file into place. */
int out_close(out_stream *o)
{
    int rc = gz_writer_finish(o->gz);
    o->gz = NULL;
    if (rc < 0) {
        if (rc != IO_ERR_PIPE)
            msg_error("%s: %s", o->name, io_sink_error(o->sink));
        out_abort(o);
        return 1;
    }
    rc = io_sink_commit(o->sink);
    o->sink = NULL;
    if (rc < 0) {
        if (rc != IO_ERR_PIPE)
            msg_error("%s: %s", o->name, io_sink_commit_error());
        return 1;
    }
    return 0;
}

/* Drops everything written so far. */
void out_abort(out_stream *o)
{
    gz_writer_free(o->gz);
    o->gz = NULL;
    io_sink_abort(o->sink);
    o->sink = NULL;
}
