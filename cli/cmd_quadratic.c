/* cmd_quadratic.c - `gpubatch quadratic`: both roots of every row (a, b, c)
 * of a coefficient array, accurately, streamed through the GPU or the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io/frame.h"
#include "io/pipeline.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "runtime/quadratic.h"

static const char quadratic_usage[] =
    "Usage: gpubatch quadratic [OPTIONS] [FILE] [-o OUT]\n"
    "Solve a*x^2 + b*x + c = 0 for every row (a, b, c) of an (N, 3) float32 or\n"
    "float64 array (.npy or raw, gzip or not; '-' or none for stdin) and write an\n"
    "(N, 2) complex64 / complex128 .npy of the roots (x1, x2) per row: real roots\n"
    "ascending, a complex pair as x1 = re + i|im|, x2 = re - i|im|; a = 0 gives the\n"
    "linear root in x1 and NaN in x2; see the manual for every degenerate case.\n"
    "\n"
    "  --layout rows      coefficients as (N, 3) rows (the only layout streamed)\n"
    "  --raw              write the roots without an .npy header\n";

enum { OPT_LAYOUT = OPT_FIRST_COMMAND_OPTION, OPT_RAW_OUT };

typedef struct {
    cli_common common;
    out_opts out;
    int raw_out;
} quad_opts;

/* Parses quadratic's options; -1 to go on, else an exit status. */
static int quadratic_parse(quad_opts *q, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"layout", required_argument, 0, OPT_LAYOUT},
        {"raw", no_argument, 0, OPT_RAW_OUT},
        CLI_OUTPUT_LONGOPTS,
        CLI_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    memset(q, 0, sizeof *q);
    cli_common_init(&q->common);
    q->out.level = CLI_DEFAULT_LEVEL;
    int opt;
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS CLI_OUTPUT_SHORTOPTS, longopts, NULL)) !=
           -1) {
        int handled = cli_common_option(&q->common, opt, optarg);
        if (handled < 0)
            return 2;
        if (handled || out_option(&q->out, opt, optarg))
            continue;
        switch (opt) {
        case OPT_LAYOUT:
            if (strcmp(optarg, "rows"))
                return cli_usage_error("quadratic", "--layout %s is not supported (rows)", optarg);
            break;
        case OPT_RAW_OUT:
            q->raw_out = 1;
            break;
        case 'h':
        case OPT_HELP:
            fputs(quadratic_usage, stdout);
            fputs(CLI_COMMON_HELP, stdout);
            fputs(CLI_OUTPUT_HELP, stdout);
            return 0;
        default:
            return cli_usage_error("quadratic", "unknown option");
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("quadratic", "one input file at a time");
    q->out.threads = q->common.threads > 0 ? q->common.threads : backend_cpu_count();
    return -1;
}

/* Number of rows of the input, or UINT64_MAX when it cannot be known before
 * the end; 0 and a message when the shape is not (N, 3). */
static int quadratic_rows(const frame_info *fi, const io_reader *r, uint64_t *rows, char *err,
                          size_t errlen)
{
    size_t row_bytes = 3 * dt_size(fi->dtype);
    *rows = UINT64_MAX;
    if (fi->ndim == 2 && fi->shape[1] == 3 && !(fi->fortran_order && fi->shape[0] > 1)) {
        *rows = fi->shape[0];
        return 0;
    }
    if (fi->ndim == 1 && fi->shape[0] % 3 == 0 && !fi->is_npy) {
        *rows = fi->shape[0] / 3;
        return 0;
    }
    if (fi->ndim < 0) { /* raw without --shape: from the file size when there is one */
        int64_t size = io_reader_compressed(r) ? -1 : io_reader_file_size(r);
        if (size >= 0) {
            if ((uint64_t)size % row_bytes) {
                snprintf(err, errlen, "size %lld bytes is not a whole number of %zu-byte rows",
                         (long long)size, row_bytes);
                return -1;
            }
            *rows = (uint64_t)size / row_bytes;
        }
        return 0;
    }
    if (fi->ndim == 2 && fi->shape[0] == 3)
        snprintf(err, errlen, "a (3, N) array of coefficient planes is not supported: give (N, 3) rows");
    else if (fi->fortran_order)
        snprintf(err, errlen, "a Fortran-order (N, 3) array holds coefficient planes, which are not supported");
    else
        snprintf(err, errlen, "expected an (N, 3) array of rows (a, b, c)");
    return -1;
}

/* Writes the .npy header of the (rows, 2) complex result. */
static int quadratic_header(out_stream *o, dt_type coef, uint64_t rows)
{
    unsigned char head[256];
    uint64_t shape[2] = {rows, 2};
    int hl = npy_write_header(head, sizeof head, coef == DT_F32 ? DT_C64 : DT_C128, 2, shape, 0);
    return hl < 0 ? 1 : out_write(o, head, (size_t)hl);
}

/* Streams the rows through the engine and the roots to the output; 0 or 1. */
static int quadratic_stream(qd_engine *eng, pl_ring *pl, int nslots, size_t row_bytes,
                            size_t root_bytes, out_stream *o, uint64_t *bytes_in,
                            const char *name)
{
    int failed = 0, rc;
    pl_chunk c;
    *bytes_in = 0;
    do {
        rc = pl_next(pl, &c);
        if (rc > 0) {
            *bytes_in += c.bytes;
            progress_update(c.raw_end);
            if (qd_engine_submit(eng, c.slot, c.data, c.bytes / row_bytes) < 0) {
                msg_error("%s: %s", name, qd_engine_error(eng));
                failed = 1;
            }
        } else if (rc < 0) {
            msg_error("%s: %s", name, pl_error(pl));
            failed = 1;
        }
        /* Write the oldest chunk once the ring is busy, or at the end; after
         * an error, only let every slot go idle. */
        while (pl_outstanding(pl) > 0 && (pl_outstanding(pl) == nslots - 1 || rc <= 0 || failed)) {
            int slot = pl_oldest(pl);
            const void *roots;
            size_t rows;
            if (qd_engine_collect(eng, slot, &roots, &rows) < 0) {
                if (!failed)
                    msg_error("%s: %s", name, qd_engine_error(eng));
                failed = 1;
            } else if (!failed && out_write(o, roots, rows * root_bytes)) {
                failed = 1;
            }
            pl_release(pl, slot);
        }
    } while (rc > 0 && !failed);
    return failed;
}

/* Entry point of `gpubatch quadratic`. */
int cmd_quadratic(int argc, char **argv)
{
    quad_opts q;
    cli_set_command("quadratic");
    int rc = quadratic_parse(&q, argc, argv);
    if (rc >= 0)
        return rc;
    const char *path = optind < argc ? argv[optind] : "-";
    const char *name = path;
    char err[1024];
    int status = 1;
    io_reader *r = NULL;
    backend be;
    memset(&be, 0, sizeof be);
    qd_engine *eng = NULL;
    void *bufs[64] = {0};
    pl_ring *pl = NULL;
    out_stream o = {0};
    frame_info fi;
    uint64_t rows;
    if (io_reader_open(&r, path, err, sizeof err) < 0) {
        msg_error("%s: %s", name, err);
        return 1;
    }
    if (frame_open(r, q.common.dtype, q.common.shape, q.common.ndim, &fi, err, sizeof err) < 0 ||
        (fi.dtype != DT_F32 && fi.dtype != DT_F64 &&
         snprintf(err, sizeof err, "coefficients must be float32 or float64, not %s",
                  dt_name(fi.dtype)) > 0) ||
        quadratic_rows(&fi, r, &rows, err, sizeof err) < 0) {
        msg_error("%s: %s", name, err);
        goto out_close_reader;
    }
    if (rows == UINT64_MAX && !q.raw_out) {
        msg_error("%s: the number of rows of raw input on a stream is unknown: give --shape Nx3, "
                  "or --raw to write raw roots",
                  name);
        goto out_close_reader;
    }
    size_t sz = dt_size(fi.dtype), row_bytes = 3 * sz;
    size_t max_rows = q.common.chunk / row_bytes;
    if (rows != UINT64_MAX && rows < max_rows)
        max_rows = rows ? (size_t)rows : 1;
    if (cli_open_backend(&q.common, &be))
        goto out_close_reader;
    int nslots = q.common.streams;
    if (qd_engine_open(&eng, &be, nslots, max_rows, fi.dtype) < 0) {
        msg_error("%s", be.err);
        goto out_close_backend;
    }
    for (int i = 0; i < nslots; i++)
        if (!(bufs[i] = backend_host_alloc(&be, max_rows * row_bytes))) {
            msg_error("%s", be.err);
            goto out_free_buffers;
        }
    io_file_id in_id;
    int have_id = io_reader_identity(r, &in_id.dev, &in_id.ino) == 0;
    if (out_open(&o, &q.out, have_id ? &in_id : NULL, have_id ? 1 : 0))
        goto out_free_buffers;
    if (!q.raw_out && quadratic_header(&o, fi.dtype, rows))
        goto out_abort;
    if (pl_open(&pl, r, bufs, nslots, max_rows * row_bytes, fi.prefix, fi.prefix_len,
                rows == UINT64_MAX ? UINT64_MAX : rows * row_bytes) < 0) {
        msg_error("%s: cannot start the reader thread", name);
        goto out_abort;
    }
    uint64_t bytes_in;
    progress_begin(name, io_reader_file_size(r));
    int stream_failed = quadratic_stream(eng, pl, nslots, row_bytes, 4 * sz, &o, &bytes_in, name);
    progress_end();
    if (stream_failed)
        goto out_abort;
    if (bytes_in % row_bytes) {
        msg_error("%s: size %llu bytes is not a whole number of %zu-byte rows", name,
                  (unsigned long long)bytes_in, row_bytes);
        goto out_abort;
    }
    if (io_reader_trailing_garbage(r))
        msg_warn("%s: trailing garbage after the compressed data ignored", name);
    pl_close(pl);
    pl = NULL;
    status = out_close(&o);
    goto out_free_buffers;
out_abort:
    pl_close(pl);
    pl = NULL;
    out_abort(&o);
out_free_buffers:
    pl_close(pl);
    for (int i = 0; i < nslots; i++)
        backend_host_free(&be, bufs[i]);
    qd_engine_close(eng);
out_close_backend:
    backend_close(&be);
out_close_reader:
    io_reader_close(r);
    return status;
}
