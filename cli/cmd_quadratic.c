/* cmd_quadratic.c - `gpubatch quadratic`: both roots of every row (a, b, c)
 * of a coefficient array, accurately, streamed through the GPU or the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io/frame.h"
#include "io/pipeline.h"
#include "input.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "runtime/quadratic.h"
#include "shard.h"

static const char quadratic_usage[] =
    "Usage: gpubatch quadratic [OPTIONS] [FILE] [-o OUT]\n"
    "Solve a*x^2 + b*x + c = 0 for every equation of a float32 or float64 array of\n"
    "coefficients, (N, 3) rows (a, b, c) or (3, N) planes a, b, c (.npy or raw,\n"
    "gzip or not; '-' or none for stdin, rows only; FILE.npz:KEY, an array of an\n"
    "archive, or FILE.npz holding one), and write an (N, 2) complex64 /\n"
    "complex128 .npy of the roots (x1, x2) per equation (float16 and bfloat16\n"
    "coefficients are solved as float32, into complex64): real roots ascending, a\n"
    "complex pair as x1 = re + i|im|, x2 = re - i|im|; a = 0 gives the linear root\n"
    "in x1 and NaN in x2; see the manual for every degenerate case.\n"
    "\n"
    "  --layout L         rows: (N, 3) rows; planes: (3, N) planes a, b, c. Sets raw\n"
    "                     input's layout (default rows); an .npy's shape sets its own,\n"
    "                     and a (3, 3) one is rows unless --layout planes\n"
    "  --out-layout L     complex: the (N, 2) complex roots (default); planes: a\n"
    "                     (4, N) real array of the planes re x1, re x2, im x1, im x2\n"
    "  --raw              write the roots without an .npy header\n"
    "  --shard I/N        solve only the I-th of N parts of the rows (I from 0) and\n"
    "                     write a part file (-o PART); 'gpubatch merge' joins the N\n"
    "                     parts into the output one run would write\n";

enum { OPT_LAYOUT = OPT_FIRST_COMMAND_OPTION, OPT_RAW_OUT, OPT_OUT_LAYOUT, OPT_SHARD };

enum { LAYOUT_UNSET = -1 };

typedef struct {
    cli_common common;
    out_opts out;
    int raw_out;
    int layout;           /* LAYOUT_UNSET or a qd_layout */
    qd_layout out_layout;
    shard_spec shard; /* count 0: every row */
} quad_opts;

/* The qd_layout named by arg, or -1. */
static int quadratic_layout_arg(const char *arg, const char *rows_name)
{
    if (!strcmp(arg, rows_name))
        return QD_ROWS;
    if (!strcmp(arg, "planes"))
        return QD_PLANES;
    return -1;
}

/* Parses quadratic's options; -1 to go on, else an exit status. */
static int quadratic_parse(quad_opts *q, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"layout", required_argument, 0, OPT_LAYOUT},
        {"out-layout", required_argument, 0, OPT_OUT_LAYOUT},
        {"raw", no_argument, 0, OPT_RAW_OUT},
        {"shard", required_argument, 0, OPT_SHARD},
        CLI_OUTPUT_LONGOPTS,
        CLI_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    memset(q, 0, sizeof *q);
    cli_common_init(&q->common);
    q->layout = LAYOUT_UNSET;
    int opt, v;
    static const char shortopts[] = CLI_COMMON_SHORTOPTS CLI_OUTPUT_SHORTOPTS;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int handled = cli_common_option(&q->common, opt, optarg);
        if (handled < 0)
            return 2;
        if (handled || out_option(&q->out, opt, optarg))
            continue;
        switch (opt) {
        case OPT_LAYOUT:
            if ((v = quadratic_layout_arg(optarg, "rows")) < 0)
                return cli_usage_error("quadratic", "bad --layout '%s' (rows or planes)", optarg);
            q->layout = v;
            break;
        case OPT_OUT_LAYOUT:
            if ((v = quadratic_layout_arg(optarg, "complex")) < 0)
                return cli_usage_error("quadratic", "bad --out-layout '%s' (complex or planes)",
                                       optarg);
            q->out_layout = (qd_layout)v;
            break;
        case OPT_RAW_OUT:
            q->raw_out = 1;
            break;
        case OPT_SHARD:
            if (shard_parse(optarg, &q->shard) < 0)
                return cli_usage_error("quadratic", "bad --shard '%s' (I/N with 0 <= I < N)",
                                       optarg);
            break;
        case 'h':
        case OPT_HELP:
            fputs(quadratic_usage, stdout);
            fputs(CLI_COMMON_HELP, stdout);
            fputs(CLI_OUTPUT_HELP, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (cli_common_finish(&q->common))
        return 2;
    if (argc - optind > 1)
        return cli_usage_error("quadratic", "one input file at a time");
    if (out_resolve(&q->out) || out_npz_check(&q->out, q->raw_out, q->shard.count))
        return 2;
    if (q->shard.count && (!q->out.path || !strcmp(q->out.path, "-") || argc - optind != 1))
        return cli_usage_error("quadratic", "--shard needs one FILE and -o PART");
    if (q->shard.count && q->out_layout == QD_PLANES)
        return cli_usage_error("quadratic", "--shard writes complex roots, not --out-layout planes");
    q->out.threads = q->common.threads > 0 ? q->common.threads : backend_cpu_count();
    return -1;
}

/* What the input holds: N equations (UINT64_MAX when it cannot be known
 * before the end), and whether its bytes are planes (all a, then all b,
 * then all c) rather than rows. */
typedef struct {
    uint64_t rows;
    int planes_in_memory;
} quad_input;

/* Reads the layout of a 2-D shape (d0, d1) against --layout: (N, 3) is rows,
 * (3, N) planes, (3, 3) rows unless --layout planes; sets *n and
 * *logical_planes, or returns IO_ERR_FORMAT with its line in *st. */
static int quadratic_shape2(uint64_t d0, uint64_t d1, int layout, uint64_t *n, int *logical_planes,
                            io_status *st)
{
    int rows_ok = d1 == 3, planes_ok = d0 == 3;
    if (rows_ok && planes_ok)
        rows_ok = layout != QD_PLANES;
    if (!rows_ok && !planes_ok)
        return io_fail(st, IO_ERR_FORMAT,
                       "expected an (N, 3) array of rows (a, b, c) or a (3, N) array of "
                       "planes, not (%llu, %llu)",
                       (unsigned long long)d0, (unsigned long long)d1);
    if (layout != LAYOUT_UNSET && layout != (rows_ok ? QD_ROWS : QD_PLANES)) {
        return io_fail(st, IO_ERR_FORMAT, "--layout %s contradicts the shape (%llu, %llu)",
                       layout == QD_PLANES ? "planes" : "rows", (unsigned long long)d0,
                       (unsigned long long)d1);
    }
    *logical_planes = !rows_ok;
    *n = rows_ok ? d0 : d1;
    return 0;
}

/* Works out the number of equations and the byte layout of the input, or
 * returns IO_ERR_FORMAT with its line in *st. */
static int quadratic_input(const frame_info *fi, const io_reader *r, int layout, quad_input *in,
                           io_status *st)
{
    size_t row_bytes = 3 * dt_size(fi->dtype);
    int logical_planes = layout == QD_PLANES;
    in->rows = UINT64_MAX;
    if (fi->ndim == 2) {
        int rc = quadratic_shape2(fi->shape[0], fi->shape[1], layout, &in->rows, &logical_planes, st);
        if (rc < 0)
            return rc;
        /* Fortran order swaps the meaning of the bytes of a 2-D array. */
        in->planes_in_memory = logical_planes ^ (fi->fortran_order && frame_is_multidim(fi));
    } else if (fi->ndim == 1 && !fi->is_npy) {
        if (fi->shape[0] % 3)
            return io_fail(st, IO_ERR_FORMAT, "--shape %llu is not a multiple of 3 coefficients",
                           (unsigned long long)fi->shape[0]);
        in->rows = fi->shape[0] / 3;
        in->planes_in_memory = logical_planes;
    } else if (fi->ndim < 0) { /* raw without --shape: from the file size when there is one */
        int64_t size = io_reader_compressed(r) ? -1 : io_reader_file_size(r);
        if (size >= 0) {
            if ((uint64_t)size % row_bytes)
                return io_fail(st, IO_ERR_FORMAT,
                               "size %lld bytes is not a whole number of %zu-byte equations",
                               (long long)size, row_bytes);
            in->rows = (uint64_t)size / row_bytes;
        } else if (logical_planes) {
            return io_fail(st, IO_ERR_FORMAT, "raw planes of unknown size: give --shape 3xN");
        }
        in->planes_in_memory = logical_planes;
    } else {
        return io_fail(st, IO_ERR_FORMAT,
                       "expected an (N, 3) array of rows (a, b, c) or a (3, N) array of planes");
    }
    /* One equation's coefficients are contiguous either way. */
    if (in->rows <= 1)
        in->planes_in_memory = 0;
    return 0;
}

/* The .npy header of the result in head: (rows, 2) complex, or (4, rows)
 * real planes; its length, or a negative io_error. */
static int quadratic_header(unsigned char *head, size_t len, dt_type coef, uint64_t rows,
                            qd_layout out_layout)
{
    uint64_t complex_shape[2] = {rows, 2}, planes_shape[2] = {4, rows};
    int planes = out_layout == QD_PLANES;
    dt_type root = qd_root_type(coef);
    dt_type dt = planes ? root : root == DT_F32 ? DT_C64 : DT_C128;
    return npy_write_header(head, len, dt, 2, planes ? planes_shape : complex_shape, 0);
}

/* Length of the complex output's .npy header for rows rows, 0 for --raw
 * (shard_part_open's callback; ctx: the options and the frame). */
static uint64_t quadratic_shard_header(void *ctx, uint64_t rows)
{
    const void *const *qf = ctx;
    const quad_opts *q = qf[0];
    const frame_info *fi = qf[1];
    unsigned char head[256];
    int n = q->raw_out ? 0 : quadratic_header(head, sizeof head, fi->dtype, rows, QD_ROWS);
    return n > 0 ? (uint64_t)n : 0;
}

/* The coefficient planes' names, in file order, for messages. */
static const char plane_names[] = "abc";

/* Writes one chunk's roots: complex rows to part 0, or each root plane to
 * its own part. */
static int quadratic_write_roots(out_parts *o, qd_layout out_layout, const void *roots,
                                 size_t rows, size_t pitch, size_t sz)
{
    if (out_layout == QD_ROWS)
        return out_parts_write(o, 0, roots, rows * 4 * sz);
    for (int k = 0; k < 4; k++)
        if (out_parts_write(o, k, (const char *)roots + k * pitch * sz, rows * sz))
            return 1;
    return 0;
}

/* Host buffers per device where (N, 3) rows are inflated on the GPU and
 * --streams is not given: its engine keeps twice as many chunks on each
 * device as there are host buffers, so 3 make 6 chunks in flight. A
 * chunk's inflate (one thread per member) takes as long however few chunks
 * run, and with blocked gzip output the device is the bound: more chunks
 * keep it busy meanwhile, and a fourth buffer gained nothing more (2, 3
 * and 4 raced in BENCHMARKS.md). A slot's buffers are made when its first
 * chunk comes, so the extra slots cost the start nothing. */
#define QUADRATIC_INFLATE_STREAMS 3

/* Where a run's roots go: the output parts and the roots' layout. */
typedef struct {
    out_parts *o;
    qd_layout layout;
    size_t pitch;   /* rows per chunk: the root planes' pitch */
    size_t root_sz; /* bytes of one root value */
} quadratic_sink;

/* Writes one collected slot's roots: as the span the device compressed, or
 * as quadratic_write_roots does (run_sink.write). */
static int quadratic_write_slot(void *ctx, const gz_writer_span *span, const void *roots,
                                size_t bytes)
{
    const quadratic_sink *k = ctx;
    if (span)
        return out_write_span(&k->o->main, span);
    return quadratic_write_roots(k->o, k->layout, roots, bytes / (4 * k->root_sz), k->pitch,
                                 k->root_sz);
}

/* Opens one reader per coefficient plane of the input (a file or an
 * archive member), each at its plane's first byte and (but the last)
 * ending at its plane's last; 0, or -1 after printing an error. */
static int quadratic_open_planes(io_reader **pr, const input_item *item, const io_reader *r,
                                 const frame_info *fi, uint64_t plane_bytes)
{
    const char *name = item->name;
    io_status st;
    uint64_t dev, ino, dev_k, ino_k;
    if (io_reader_file_size(r) < 0 || io_reader_identity(r, &dev, &ino) < 0) {
        msg_error("%s: coefficient planes are read at three places at once, which a pipe or "
                  "standard input cannot do: give the file's name, or (N, 3) rows",
                  name);
        return -1;
    }
    for (int k = 0; k < 3; k++) {
        if (input_open(item, &pr[k], &st) < 0) {
            msg_status(name, &st);
            return -1;
        }
        if (io_reader_identity(pr[k], &dev_k, &ino_k) < 0 || dev_k != dev || ino_k != ino) {
            msg_error("%s: the file changed while being opened", name);
            return -1;
        }
        uint64_t skip = fi->data_offset + k * plane_bytes;
        int64_t got = io_reader_skip(pr[k], skip);
        if (got < 0) {
            msg_status(name, io_reader_status(pr[k]));
            return -1;
        }
        if ((uint64_t)got < skip) {
            msg_error("%s: truncated: the input ends before plane %c (%llu bytes of data expected)",
                      name, plane_names[k], (unsigned long long)(3 * plane_bytes));
            return -1;
        }
        if (k < 2)
            io_reader_limit(pr[k], plane_bytes);
    }
    return 0;
}

/* What the check at the input's end needs: its name and the bytes of a
 * row as the input holds it, and as messages name it. */
typedef struct {
    const char *name;
    size_t chunk_row_bytes, row_bytes;
} quadratic_end;

/* Checks that the data are whole rows (run_op.check). */
static int quadratic_check(void *ctx, uint64_t bytes)
{
    const quadratic_end *e = ctx;
    if (bytes % e->chunk_row_bytes == 0)
        return 0;
    msg_error("%s: size %llu bytes is not a whole number of %zu-byte rows", e->name,
              (unsigned long long)bytes, e->row_bytes);
    return 1;
}

/* Entry point of `gpubatch quadratic`. */
int cmd_quadratic(int argc, char **argv)
{
    quad_opts q;
    cli_set_command("quadratic");
    int rc = quadratic_parse(&q, argc, argv);
    if (rc >= 0)
        return rc;
    char *input_arg = optind < argc ? argv[optind] : "-";
    cli_narrow_devices(&q.common, &input_arg, 1); /* before any thread */
    input_list inputs;
    input_item item;
    io_reader *r = NULL;
    if (input_one(&inputs, input_arg, &item, &r))
        return 1;
    if (!q.shard.count && input_check(&item)) {
        io_reader_close(r);
        input_end(&inputs);
        return 1;
    }
    const char *name = item.name;
    io_status st;
    int status = 1;
    io_reader *pr[3] = {NULL, NULL, NULL};
    cli_run jb;
    memset(&jb, 0, sizeof jb);
    out_parts o;
    memset(&o, 0, sizeof o);
    frame_info fi;
    quad_input in;
    if (cli_frame(r, &q.common, &fi, name))
        goto out_close;
    if ((!qd_coef_type(fi.dtype) &&
         io_fail(&st, IO_ERR_FORMAT,
                 "coefficients must be float16, bfloat16, float32 or float64, not %s",
                 dt_name(fi.dtype)) < 0) ||
        quadratic_input(&fi, r, q.layout, &in, &st) < 0) {
        msg_status(name, &st);
        goto out_close;
    }
    char part_head[8192];
    uint64_t limit = UINT64_MAX; /* a shard's data bytes */
    if (q.shard.count && in.planes_in_memory) {
        msg_error("%s: --shard reads (N, 3) rows, not coefficient planes", name);
        goto out_close;
    }
    const void *shard_ctx[2] = {&q, &fi};
    size_t coef = dt_size(fi.dtype), root = dt_size(qd_root_type(fi.dtype));
    if (q.shard.count &&
        shard_part_open(r, &fi, &q.shard, name, 3 * coef, 4 * root, quadratic_shard_header,
                        (void *)shard_ctx, q.out.level, part_head, sizeof part_head, &in.rows,
                        &limit))
        goto out_close;
    if (in.rows == UINT64_MAX && !q.raw_out) {
        msg_error("%s: the number of rows of raw input on a stream is unknown: give --shape Nx3, "
                  "or --raw to write raw roots",
                  name);
        goto out_close;
    }
    size_t sz = dt_size(fi.dtype), row_bytes = 3 * sz;
    if (in.planes_in_memory && quadratic_open_planes(pr, &item, r, &fi, in.rows * sz) < 0)
        goto out_close;
    double cpu_s = cli_reader_cpu_seconds(&q.common, r, cost_quadratic_ns(0, q.out.level),
                                          cost_quadratic_ns(1, q.out.level));
    if (cli_run_open(&jb, &q.common, cpu_s))
        goto out_close;
    uint64_t data_bytes = in.rows == UINT64_MAX ? UINT64_MAX : in.rows * row_bytes;
    size_t max_rows = run_stream_chunk(jb.run, r, fi.swap, fi.prefix_len, data_bytes, 0) / row_bytes;
    if (in.rows != UINT64_MAX && in.rows < max_rows)
        max_rows = in.rows ? (size_t)in.rows : 1;
    qd_job solve = {fi.dtype, in.planes_in_memory ? QD_PLANES : QD_ROWS, q.out_layout};
    run_want_module(jb.run, qd_module(fi.dtype));
    io_file_id in_id;
    int have_id = out_input_id(r, &in_id);
    if (out_parts_open(&o, q.out_layout == QD_PLANES ? 4 : 1, &q.out, have_id ? &in_id : NULL,
                       have_id ? 1 : 0))
        goto out_close;
    if (q.shard.count && out_begin_part(&o.main, part_head))
        goto out_abort;
    unsigned char head[256];
    int head_len = quadratic_header(head, sizeof head, fi.dtype, in.rows, q.out_layout);
    if (!q.raw_out && q.shard.index == 0 &&
        (head_len < 0 || out_parts_write(&o, 0, head, (size_t)head_len)))
        goto out_abort;
    if (!q.shard.count)
        limit = data_bytes;
    quadratic_sink sink = {&o, q.out_layout, max_rows, root};
    quadratic_end end = {name, in.planes_in_memory ? sz : row_bytes, row_bytes};
    run_source src = {
        .name = name, .r = r, .planes = in.planes_in_memory ? pr : NULL, .fi = &fi,
        .chunk = in.planes_in_memory ? max_rows * sz : max_rows * row_bytes,
        .limit = in.planes_in_memory ? in.rows * sz : limit,
        .prefix = q.shard.count ? NULL : fi.prefix, .prefix_len = q.shard.count ? 0 : fi.prefix_len,
        .part = q.shard.count != 0};
    /* rows of a gzip member the devices can inflate run on a device first, in whole rows */
    run_op op = {.ops = &qd_engine_ops, .ctx = &solve, .grain = row_bytes,
                 .cpu_ns = cost_quadratic_ns(0, q.out.level), .results = 1,
                 .inflate_streams = QUADRATIC_INFLATE_STREAMS, .check = quadratic_check,
                 .check_ctx = &end};
    run_sink out = cli_sink(quadratic_write_slot, &sink);
    out.level = q.out.level;
    out.gz = o.main.gz;
    uint64_t bytes_in;
    if (run_input(jb.run, &src, &op, &out, &bytes_in))
        goto out_abort;
    status = out_parts_close(&o);
    goto out_close;
out_abort:
    out_parts_abort(&o);
out_close:
    cli_run_close(&jb);
    for (int k = 0; k < 3; k++)
        io_reader_close(pr[k]);
    io_reader_close(r);
    input_end(&inputs);
    return status;
}
