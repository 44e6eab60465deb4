/* cmd_transpose.c - `gpubatch transpose`: the transpose of a matrix, or of
 * every matrix of a batch (the last two axes), streamed through the GPU or
 * the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "io/frame.h"
#include "input.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "runtime/transpose.h"
#include "shard.h"

static const char transpose_usage[] =
    "Usage: gpubatch transpose [OPTIONS] [FILE] [-o OUT]\n"
    "Transpose an (R, C) array into (C, R), or every matrix of a batch (B, R, C)\n"
    "into (B, C, R) (any leading axes are batch axes). Input: .npy or raw (with\n"
    "--dtype and --shape), gzip or not, '-' or none for stdin, FILE.npz:KEY (an\n"
    "array of an archive, or FILE.npz holding one); elements of 1, 2,\n"
    "4, 8 or 16 bytes, complex64 and complex128 included. .npy in gives .npy out.\n"
    "A Fortran-order .npy is transposed by rewriting its header when that is\n"
    "enough. A matrix larger than --chunk is staged whole: on the GPU it needs\n"
    "twice its size of device memory.\n"
    "\n"
    "  --raw              write the result without an .npy header\n"
    "  --shard I/N        transpose only the I-th of N parts of the batch (I from 0)\n"
    "                     and write a part file (-o PART); 'gpubatch merge' joins the\n"
    "                     N parts into the output one run would write\n";

enum { OPT_RAW_OUT = OPT_FIRST_COMMAND_OPTION, OPT_SHARD };

typedef struct {
    cli_common common;
    out_opts out;
    int raw_out;
    shard_spec shard; /* count 0: every matrix */
} transpose_opts;

/* What to do with the data: nmat matrices of rows x cols elements, or a
 * plain copy when the transposed bytes equal the input's. */
typedef struct {
    uint64_t nmat, rows, cols;
    int copy;
    int out_ndim;
    uint64_t out_shape[NPY_MAX_DIMS];
} transpose_job;

/* Parses transpose's options; -1 to go on, else an exit status. */
static int transpose_parse(transpose_opts *t, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"raw", no_argument, 0, OPT_RAW_OUT},
        {"shard", required_argument, 0, OPT_SHARD},
        CLI_OUTPUT_LONGOPTS,
        CLI_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    memset(t, 0, sizeof *t);
    cli_common_init(&t->common);
    int opt;
    static const char shortopts[] = CLI_COMMON_SHORTOPTS CLI_OUTPUT_SHORTOPTS;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int handled = cli_common_option(&t->common, opt, optarg);
        if (handled < 0)
            return 2;
        if (handled || out_option(&t->out, opt, optarg))
            continue;
        switch (opt) {
        case OPT_RAW_OUT:
            t->raw_out = 1;
            break;
        case OPT_SHARD:
            if (shard_parse(optarg, &t->shard) < 0)
                return cli_usage_error("transpose", "bad --shard '%s' (I/N with 0 <= I < N)",
                                       optarg);
            break;
        case 'h':
        case OPT_HELP:
            fputs(transpose_usage, stdout);
            fputs(CLI_COMMON_HELP, stdout);
            fputs(CLI_OUTPUT_HELP, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (cli_common_finish(&t->common))
        return 2;
    if (argc - optind > 1)
        return cli_usage_error("transpose", "one input file at a time");
    if (out_resolve(&t->out) || out_npz_check(&t->out, t->raw_out, t->shard.count))
        return 2;
    if (t->shard.count && (!t->out.path || !strcmp(t->out.path, "-") || argc - optind != 1))
        return cli_usage_error("transpose", "--shard needs one FILE and -o PART");
    t->out.threads = t->common.threads > 0 ? t->common.threads : backend_cpu_count();
    return -1;
}

/* Works out the job for the input's shape and order; IO_ERR_FORMAT with its
 * line in *st when it has no last two axes to swap. */
static int transpose_plan(const frame_info *fi, transpose_job *j, io_status *st)
{
    memset(j, 0, sizeof *j);
    int n = fi->ndim;
    if (n < 0)
        return io_fail(st, IO_ERR_FORMAT,
                       "raw input needs --shape RxC (or BxRxC) to be transposed");
    if (n < 2) {
        return io_fail(st, IO_ERR_FORMAT,
                       "a %d-D array has no two axes to transpose: give (R, C) or (B, R, C)", n);
    }
    const uint64_t *s = fi->shape;
    uint64_t batch = 1;
    int batch_axes = 0;
    for (int d = 0; d < n - 2; d++) {
        batch *= s[d];
        batch_axes += s[d] > 1;
    }
    j->out_ndim = n;
    memcpy(j->out_shape, s, (size_t)(n - 2) * sizeof *s);
    j->out_shape[n - 2] = s[n - 1];
    j->out_shape[n - 1] = s[n - 2];
    if (fi->fortran_order && frame_is_multidim(fi)) {
        /* The bytes are C order for the reversed shape (C, R, batch...). */
        if (n == 2) {
            j->copy = 1; /* (C, R) in C order: the very same bytes */
            j->nmat = 1, j->rows = s[1], j->cols = s[0];
            return 0;
        }
        if (batch_axes > 1)
            return io_fail(st, IO_ERR_FORMAT,
                           "a Fortran-order array with more than one batch axis is not "
                           "supported: write it in C order");
        j->nmat = 1, j->rows = s[n - 1] * s[n - 2], j->cols = batch;
    } else {
        j->nmat = batch, j->rows = s[n - 2], j->cols = s[n - 1];
    }
    j->copy = j->rows <= 1 || j->cols <= 1 || j->nmat == 0;
    return 0;
}

/* The .npy header of the result in head; its length or a negative io_error. */
static int transpose_header(unsigned char *head, size_t len, dt_type dtype, const transpose_job *j)
{
    return npy_write_header(head, len, dtype, j->out_ndim, j->out_shape, 0);
}

/* What a shard needs: the options, the input's frame and the job. */
typedef struct {
    const transpose_opts *t;
    const frame_info *fi;
    const transpose_job *j;
} transpose_shard_ctx;

/* Length of the output's header (shard_part_open's callback): the .npy
 * header, or 0 for raw output. */
static uint64_t transpose_shard_header(void *ctx, uint64_t matrices)
{
    const transpose_shard_ctx *c = ctx;
    unsigned char head[4096];
    int n = c->fi->is_npy && !c->t->raw_out ? transpose_header(head, sizeof head, c->fi->dtype, c->j) : 0;
    return n > 0 ? (uint64_t)n : 0;
}

/* Positions r at the matrices of the shard and fills the part's header;
 * the batch is cut between matrices. 0, or 1 after an error. */
static int transpose_shard_open(const transpose_opts *t, const char *name, io_reader *r,
                                const frame_info *fi, const transpose_job *j, char *part_head,
                                size_t part_len, uint64_t *limit)
{
    if (fi->ndim < 3 || j->nmat == 1 || (fi->fortran_order && frame_is_multidim(fi))) {
        msg_error("%s: --shard splits a batch (B, R, C) in C order between matrices; a single "
                  "matrix is transposed whole",
                  name);
        return 1;
    }
    size_t matrix = (size_t)(j->rows * j->cols * dt_size(fi->dtype));
    if (matrix == 0) {
        msg_error("%s: --shard needs matrices with elements", name);
        return 1;
    }
    transpose_shard_ctx ctx = {t, fi, j};
    uint64_t matrices;
    return shard_part_open(r, fi, &t->shard, name, matrix, matrix, transpose_shard_header, &ctx,
                           t->out.level, part_head, part_len, &matrices, limit);
}

/* Writes results to the output: the span the device compressed, or the
 * bytes (run_sink.write). */
static int transpose_write(void *ctx, const gz_writer_span *span, const void *out, size_t bytes)
{
    return span ? out_write_span(ctx, span) : out_write(ctx, out, bytes);
}

/* A staged matrix's output, written only once all of its input is read:
 * its first piece turns the progress line from the input to the output. */
typedef struct {
    out_stream *o;
    uint64_t total;   /* the output's data bytes */
    uint64_t start;   /* the writer's offset before the first piece */
    int writing;      /* the line follows the output */
} transpose_staged_out;

/* Writes a staged matrix's piece (a run_sink.write) and draws the
 * progress of the output written so far. */
static int transpose_staged_write(void *ctx, const gz_writer_span *span, const void *buf,
                                  size_t n)
{
    transpose_staged_out *s = ctx;
    if (!s->writing) {
        s->writing = 1;
        s->start = gz_writer_offset(s->o->gz);
        progress_begin(s->o->name, (int64_t)s->total);
    }
    int rc = transpose_write(s->o, span, buf, n);
    progress_update(gz_writer_offset(s->o->gz) - s->start);
    return rc;
}

/* Plans the run of the data through the engine, the staged matrix or a
 * copy (its transpose has the same bytes) into the output, and runs it;
 * 0, or 1 after an error. */
static int transpose_run(const transpose_opts *t, run *rn, io_reader *r, const frame_info *fi,
                         const transpose_job *j, const void *prefix, size_t prefix_len,
                         uint64_t data_bytes, out_stream *o, const char *name)
{
    size_t elem = dt_size(fi->dtype);
    int staged = 0;
    tp_job matrix = {elem, j->rows, j->cols};
    size_t chunk = j->copy ? t->common.chunk : run_chunk(rn, r, fi->swap);
    if (!j->copy) {
        run_want_module(rn, "transpose");
        /* the engine's chunk (whole matrices, or the staged piece) for either side */
        chunk = tp_chunk_for(&matrix, chunk, &staged);
    }
    if (data_bytes < chunk) /* buffers and result buffers sized by the data, not --chunk */
        chunk = data_bytes ? (size_t)data_bytes : elem;
    run_source src = {.name = name, .r = r, .fi = fi, .chunk = chunk, .limit = data_bytes,
                      .prefix = prefix, .prefix_len = prefix_len};
    /* a copy has neither a kernel nor a staged matrix (its chunks decoded on the host), but
       cuda still needs its devices; a buffer a chunk in flight. A gzip member's data may be
       inflated on a device, in whole elements into the staged matrix, in whole matrices on
       the engines. */
    run_op op = {.ops = j->copy || staged ? NULL : &tp_engine_ops,
                 .whole = staged ? &matrix : NULL, .ctx = &matrix,
                 .grain = j->copy ? 0 : staged ? elem : tp_matrix_bytes(&matrix),
                 .cpu_ns = cost_transpose_ns(0, t->out.level), .slot_per_buffer = 1};
    transpose_staged_out staged_out = {.o = o, .total = data_bytes};
    run_sink sink = staged ? cli_sink(transpose_staged_write, &staged_out) : cli_sink(transpose_write, o);
    sink.level = t->out.level;
    sink.gz = o->gz;
    uint64_t bytes_in;
    return run_input(rn, &src, &op, &sink, &bytes_in);
}

/* Entry point of `gpubatch transpose`. */
int cmd_transpose(int argc, char **argv)
{
    transpose_opts t;
    cli_set_command("transpose");
    int rc = transpose_parse(&t, argc, argv);
    if (rc >= 0)
        return rc;
    char *input_arg = optind < argc ? argv[optind] : "-";
    cli_narrow_devices(&t.common, &input_arg, 1); /* before any thread */
    input_list inputs;
    input_item item;
    io_reader *r = NULL;
    if (input_one(&inputs, input_arg, &item, &r))
        return 1;
    if (!t.shard.count && input_check(&item)) {
        io_reader_close(r);
        input_end(&inputs);
        return 1;
    }
    const char *name = item.name;
    io_status st;
    int status = 1;
    cli_run jb;
    memset(&jb, 0, sizeof jb);
    out_stream o = {0};
    frame_info fi;
    transpose_job j;
    if (cli_frame(r, &t.common, &fi, name))
        goto out_close;
    if (transpose_plan(&fi, &j, &st) < 0) {
        msg_status(name, &st);
        goto out_close;
    }
    uint64_t data_bytes = fi.data_bytes;
    if (data_bytes > SIZE_MAX / 2 || (!j.copy && j.rows * j.cols > SIZE_MAX / 2 / dt_size(fi.dtype))) {
        msg_error("%s: the array is too large for this machine's address space", name);
        goto out_close;
    }
    char part_head[8192];
    const void *prefix = fi.prefix;
    size_t prefix_len = fi.prefix_len;
    if (t.shard.count) {
        if (transpose_shard_open(&t, name, r, &fi, &j, part_head, sizeof part_head, &data_bytes))
            goto out_close;
        prefix = NULL, prefix_len = 0;
    }
    int member_fd;
    uint64_t member_at, member_end;
    int one_member = io_reader_stream_member(r, &member_fd, &member_at, &member_end);
    double cpu_s = cli_reader_cpu_seconds(&t.common, r, cost_transpose_ns(0, t.out.level),
                                          cost_transpose_ns(one_member ? 2 : 1, t.out.level));
    if (cli_run_open(&jb, &t.common, cpu_s))
        goto out_close;
    io_file_id in_id;
    int have_id = out_input_id(r, &in_id);
    if (out_open(&o, &t.out, have_id ? &in_id : NULL, have_id ? 1 : 0))
        goto out_close;
    if (t.shard.count && out_begin_part(&o, part_head))
        goto out_abort;
    unsigned char head[4096];
    int head_len = transpose_header(head, sizeof head, fi.dtype, &j);
    if (!t.raw_out && (fi.is_npy || t.out.npz) && t.shard.index == 0 &&
        (head_len < 0 || out_write(&o, head, (size_t)head_len)))
        goto out_abort;
    if (transpose_run(&t, jb.run, r, &fi, &j, prefix, prefix_len, data_bytes, &o, name))
        goto out_abort;
    status = out_close(&o);
    goto out_close;
out_abort:
    out_abort(&o);
out_close:
    cli_run_close(&jb);
    io_reader_close(r);
    input_end(&inputs);
    return status;
}
