/* cmd_reduce.c - `gpubatch reduce`: sums, means, extrema and counts of
 * arrays, bit-identical on every backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "commands.h"
#include "io/clock.h"
#include "io/frame.h"
#include "io/npy.h"
#include "msg.h"
#include "output.h"
#include "input.h"
#include "options.h"
#include "result.h"
#include "runtime/axis.h"
#include "runtime/axis_gpu.h"
#include "runtime/reduce.h"
#include "shard.h"

static const char reduce_usage[] =
    "Usage: gpubatch reduce [OPTIONS] [FILE...]\n"
    "Reduce each array FILE (.npy or raw, optionally gzip-compressed; '-' or none\n"
    "for stdin; FILE.npz: each array of the archive, FILE.npz:KEY one of them) and\n"
    "print one line per operation: OP VALUE  FILE (FILE.npz:KEY for an archive's).\n"
    "\n"
    "Operations:\n"
    "  --op LIST          comma-separated: sum mean min max argmin argmax sumsq count\n"
    "                     var std (default sum)\n"
    "  --skipnan          ignore NaN elements (like numpy's nan* functions)\n"
    "  --ddof N           var and std divide by count - N (default 0, as numpy)\n"
    "  --json             one JSON object per file instead of text lines\n"
    "Along axes:\n"
    "  --axis LIST        reduce along these axes only (comma-separated, negative\n"
    "                     from the end, as numpy's axis=): each op gives an array\n"
    "  --keepdims         keep the reduced axes as length 1\n"
    "  -o, --output FILE  write the result: one op to FILE.npy (FILE.npy.gz: BGZF),\n"
    "                     several to FILE.npz, a member per op (sum.npy, ...); without\n"
    "                     -o, small results print as nested lists\n"
    "Many nodes:\n"
    "  --shard I/N        reduce only the I-th of N parts of FILE (I from 0) and write\n"
    "                     its partial state to -o STATE (with --axis too); 'gpubatch\n"
    "                     merge' gives the result of the whole array from the N states\n"
    "  -o, --output STATE the state file to write (with --shard)\n"
    "  -f, --force        overwrite an existing STATE\n";

enum {
    OPT_OP = OPT_FIRST_COMMAND_OPTION,
    OPT_SKIPNAN,
    OPT_JSON,
    OPT_SHARD,
    OPT_AXIS,
    OPT_KEEPDIMS,
    OPT_DDOF
};

typedef struct {
    cli_common common;
    unsigned ops;
    int skipnan;
    int json;
    shard_spec shard; /* count 0: the whole input */
    const char *state_path; /* -o: the state (--shard) or the result (--axis) */
    int force;
    const char *axis;       /* --axis LIST, or NULL */
    int keepdims;
    int ddof;
} reduce_opts;

/* Shared state for all files of one invocation, and the file in progress. */
typedef struct {
    cli_run j;  /* the backend and the run every file shares */
    rd_job job; /* the file's reduction, as the engines run it */
} reduce_ctx;

/* Prints the help text. */
static void reduce_help(void)
{
    fputs(reduce_usage, stdout);
    fputs(CLI_COMMON_HELP, stdout);
}

/* What the check at a file's end needs: its frame and name, and whether
 * a shard (its end checked as it was opened) was read. */
typedef struct {
    const frame_info *fi;
    const char *name;
    int shard;
} reduce_end;

/* Checks the data's length against the frame (run_op.check). */
static int reduce_check(void *ctx, uint64_t bytes)
{
    const reduce_end *e = ctx;
    io_status st;
    if (e->shard || frame_check_end(e->fi, bytes, &st) == 0)
        return 0;
    return msg_status(e->name, &st);
}

/* Positions r at the tiles of the shard that o names (a reduction along
 * axes: moved back to the start of plan's units that hold their ends);
 * *first and *end get the shard's elements, *limit its data bytes. 0, or 1
 * after an error. */
static int reduce_shard_open(const reduce_opts *o, const char *name, io_reader *r,
                             const frame_info *fi, const ax_plan *plan, shard_meta *part,
                             uint64_t *first, uint64_t *end, uint64_t *limit)
{
    io_status why;
    shard_input in;
    size_t sz = dt_size(fi->dtype);
    uint64_t t0, t1;
    if (shard_input_open(r, fi, &in, &why) < 0)
        return msg_status(name, &why);
    shard_meta_input(part, name, fi, &in, &o->shard);
    shard_tiles(&o->shard, part->nelem, &t0, &t1);
    uint64_t e0 = t0 * RD_TILE, e1 = t1 * RD_TILE < part->nelem ? t1 * RD_TILE : part->nelem;
    if (plan) {
        e0 = ax_shard_cut(plan, e0);
        e1 = ax_shard_cut(plan, e1);
    }
    if (shard_input_seek(r, &in, e0 * sz, (e1 - e0) * sz, e1 >= part->nelem, &why) < 0)
        return msg_status(name, &why);
    part->first = plan ? e0 : t0;
    part->end = plan ? e1 : t1;
    *first = e0;
    *end = e1;
    *limit = (e1 - e0) * sz;
    return 0;
}

/* One core's nanoseconds per file byte of plan's reduction (cost_axis_ns). */
static double reduce_axis_ns(const ax_plan *p, int deflated)
{
    return cost_axis_ns(p->ops, p->T, p->unit == AX_UNIT_BLOCK ? p->C : 1, dt_size(p->dtype),
                        deflated);
}

/* Writes the state file of a shard of a reduction along axes; 0, or 1
 * after an error. */
static int reduce_axis_state(const reduce_opts *o, const ax_plan *plan, const ax_state *st,
                             shard_meta *part, const io_file_id *input)
{
    rd_state opts; /* the ops and options the file records */
    rd_state_init(&opts, plan->dtype, o->ops, o->skipnan);
    opts.ddof = o->ddof;
    part->axis = 1;
    part->axes = plan->axes;
    part->keepdims = o->keepdims;
    size_t len = ax_state_bytes(st);
    unsigned char *blob = malloc(len ? len : 1);
    if (!blob)
        return msg_error("out of memory for a state of %zu bytes", len), 1;
    ax_state_save(st, blob);
    int status = shard_write_axis_state(o->state_path, o->force, input, part, &opts, blob, len);
    free(blob);
    return status;
}

/* Reduces one framed input along the axes o asks for and prints or writes
 * the result; returns 0 or 1 (error printed). */
static int reduce_along(reduce_ctx *ctx, const reduce_opts *o, const char *name, io_reader *r,
                        const frame_info *fi, double t0)
{
    io_status why;
    uint64_t shape[NPY_MAX_DIMS];
    int ndim = fi->ndim;
    memcpy(shape, fi->shape, sizeof shape);
    if (ndim < 0) {
        if (fi->data_bytes == UINT64_MAX && io_reader_file_size(r) < 0) {
            msg_error("%s: --axis needs the array's length: give --shape for raw input whose size "
                      "is unknown", name);
            return 1;
        }
        uint64_t bytes = fi->data_bytes != UINT64_MAX ? fi->data_bytes
                                                       : (uint64_t)io_reader_file_size(r);
        ndim = 1;
        shape[0] = bytes / dt_size(fi->dtype);
    }
    unsigned axes;
    if (ax_parse_axes(o->axis, ndim, &axes, &why) < 0)
        return msg_status(name, &why);
    ax_plan plan;
    if (ax_plan_init(&plan, fi->dtype, o->ops, o->skipnan, ndim, shape, fi->fortran_order, axes,
                     o->keepdims, &why) < 0)
        return msg_status(name, &why);
    shard_meta part;
    uint64_t e0 = 0, e1 = plan.nelem, limit = fi->data_bytes;
    if (o->shard.count && reduce_shard_open(o, name, r, fi, &plan, &part, &e0, &e1, &limit))
        return 1;
    ax_state *st = o->shard.count ? ax_state_new_shard(&plan, e0, e1)
                                  : ax_state_new_values(&plan, o->ddof);
    if (!st) {
        msg_error("%s: out of memory for the state of %llu outputs", name,
                  (unsigned long long)plan.nout);
        return 1;
    }
    run *rn = ctx->j.run;
    char module[1][64];
    if (ax_gpu_modules(&plan, module))
        run_want_module(rn, module[0]);
    /* the larger chunk of a file read in place where its results stay small */
    size_t prefix_len = o->shard.count ? 0 : fi->prefix_len;
    size_t view = ax_out_bytes(&plan, RUN_VIEW_CHUNK) <= RUN_VIEW_CHUNK / 8 ? RUN_VIEW_CHUNK : 0;
    size_t chunk = ax_chunk_for(
        &plan, run_stream_chunk(rn, r, fi->swap, prefix_len, fi->data_bytes, view), RUN_CHUNK_ALIGN);
    ax_job job = {.plan = &plan, .first = e0, .st = st};
    reduce_end end = {fi, name, o->shard.count != 0};
    run_source src = {.name = name, .r = r, .fi = fi, .chunk = chunk, .limit = limit,
                      .prefix = o->shard.count ? NULL : fi->prefix, .prefix_len = prefix_len,
                      .part = o->shard.count != 0};
    engine_ops ops = ax_engine_ops; /* the CPU's side, with the GPU's launch */
    ops.launch = ax_gpu_launch;
    /* a chunk may end at any element (its head and tail go to the host raw), so a gzip
       member's data may be inflated on a device and run there in batches of whole elements */
    run_op op = {.ops = &ops, .ctx = &job, .grain = dt_size(fi->dtype),
                 .cpu_ns = reduce_axis_ns(&plan, io_reader_deflated(r)),
                 .cpu_ns_inflated = reduce_axis_ns(&plan, 0),
                 .per_device = 1, .shared_buffers = 1, .check = reduce_check, .check_ctx = &end};
    run_sink sink = cli_sink(NULL, NULL);
    uint64_t bytes;
    int status = 1;
    if (run_input(rn, &src, &op, &sink, &bytes) == 0) {
        double dt = io_seconds() - t0;
        msg_info("%s: %llu bytes in %.3f s (%.2f GB/s of data)", name, (unsigned long long)bytes,
                 dt, dt > 0 ? bytes / dt / 1e9 : 0.0);
        io_file_id in_id;
        int have_id = out_input_id(r, &in_id);
        if (o->shard.count) {
            status = reduce_axis_state(o, &plan, st, &part, have_id ? &in_id : NULL);
            goto out_free_state;
        }
        out_opts out;
        memset(&out, 0, sizeof out);
        out.path = o->state_path;
        out.force = o->force;
        out.threads = 1;
        out.npz = o->state_path && strlen(o->state_path) >= 4 &&
                  !strcmp(o->state_path + strlen(o->state_path) - 4, ".npz");
        if (o->state_path && out_name_is_gz(o->state_path))
            out.level = CLI_DEFAULT_LEVEL;
        status = result_axis(name, &plan, st, o->ddof, &out, have_id ? &in_id : NULL, o->json);
    }
out_free_state:
    ax_state_free(st);
    return status;
}

/* Streams one input through the engine; returns 0 or 1 (error printed). */
static int reduce_file(reduce_ctx *ctx, const reduce_opts *o, const input_item *in)
{
    const char *name = in->name;
    io_status why;
    io_reader *r = NULL;
    int status = 1;
    double t0 = io_seconds();
    if (input_open(in, &r, &why) < 0)
        return msg_status(name, &why);
    if (!o->shard.count && input_check(in)) {
        io_reader_close(r);
        return 1;
    }
    frame_info fi;
    if (cli_frame(r, &o->common, &fi, name))
        goto out_close_reader;
    if (fi.dtype == DT_C64 || fi.dtype == DT_C128) {
        msg_error("%s: reduce does not support %s data", name, dt_name(fi.dtype));
        goto out_close_reader;
    }
    if (o->axis) {
        status = reduce_along(ctx, o, name, r, &fi, t0);
        goto out_close_reader;
    }
    unsigned ops = o->ops, refused = 0;
    if (fi.fortran_order && frame_is_multidim(&fi) && (ops & (RD_OP_ARGMIN | RD_OP_ARGMAX))) {
        /* every other op is independent of the memory order; flat indices are
         * not: the others are run and printed, these reported after them */
        refused = ops & (RD_OP_ARGMIN | RD_OP_ARGMAX);
        ops &= ~refused;
        if (!ops || o->shard.count) {
            msg_error("%s: argmin/argmax of a Fortran-order array are not supported", name);
            goto out_close_reader;
        }
    }
    rd_state st;
    rd_state_init(&st, fi.dtype, ops, o->skipnan);
    st.ddof = o->ddof;
    shard_meta part;
    uint64_t first = 0, limit = fi.data_bytes; /* elements before the data read; its bytes */
    uint64_t shard_end;
    if (o->shard.count &&
        reduce_shard_open(o, name, r, &fi, NULL, &part, &first, &shard_end, &limit))
        goto out_close_reader;
    if (o->shard.count)
        rd_state_start_at(&st, part.first);
    run *rn = ctx->j.run;
    char modules[RD_MAX_MODULES][64];
    for (int i = rd_modules(fi.dtype, ops, o->skipnan, modules); i-- > 0;)
        run_want_module(rn, modules[i]);
    size_t prefix_len = o->shard.count ? 0 : fi.prefix_len;
    size_t chunk = run_stream_chunk(rn, r, fi.swap, prefix_len, fi.data_bytes, RUN_VIEW_CHUNK);
    ctx->job = (rd_job){.dtype = fi.dtype, .ops = ops, .skipnan = o->skipnan, .first = first,
                        .st = &st};
    reduce_end end = {&fi, name, o->shard.count != 0};
    run_source src = {.name = name, .r = r, .fi = &fi, .chunk = chunk, .limit = limit,
                      .prefix = o->shard.count ? NULL : fi.prefix, .prefix_len = prefix_len,
                      .part = o->shard.count != 0};
    /* whole tiles, as the host's chunks are: a sum's bits do not depend on where a device's
       batches of a gzip member end; one engine per device, every one on the same buffers */
    run_op op = {.ops = &rd_engine_ops, .ctx = &ctx->job,
                 .grain = (size_t)RD_TILE * dt_size(fi.dtype),
                 .cpu_ns = io_reader_deflated(r) ? COST_REDUCE_NS_GZIP : COST_REDUCE_NS_PLAIN,
                 .cpu_ns_inflated = COST_REDUCE_NS_PLAIN,
                 .per_device = 1, .shared_buffers = 1, .check = reduce_check, .check_ctx = &end};
    run_sink sink = cli_sink(NULL, NULL);
    uint64_t bytes;
    if (run_input(rn, &src, &op, &sink, &bytes))
        goto out_close_reader;
    double dt = io_seconds() - t0;
    msg_info("%s: %llu bytes in %.3f s (%.2f GB/s of data)", name, (unsigned long long)bytes, dt,
             dt > 0 ? bytes / dt / 1e9 : 0.0);
    if (o->shard.count) {
        io_file_id in_id;
        int have_id = out_input_id(r, &in_id);
        status = shard_write_state(o->state_path, o->force, have_id ? &in_id : NULL, &part, &st);
    } else {
        status = result_print(name, &fi, &st, refused, "not supported for a Fortran-order array",
                              o->json);
    }
out_close_reader:
    io_reader_close(r);
    return status;
}

/* Reduces each input that one FILE argument names (every array of an
 * archive); returns 0 or 1 (errors printed). A shard's argument must name
 * one array. */
static int reduce_arg(reduce_ctx *ctx, const reduce_opts *o, const char *arg)
{
    input_list l;
    input_item in;
    int status = 0;
    if (o->shard.count)
        status = input_one(&l, arg, &in, NULL) || reduce_file(ctx, o, &in);
    else if (input_begin(&l, arg))
        status = 1;
    else
        while (!run_failed(ctx->j.run) && input_next(&l, &in)) /* no devices: no more arrays */
            status |= reduce_file(ctx, o, &in);
    input_end(&l);
    return status;
}

/* Parses reduce's options; returns -1 to go on, else an exit status. */
static int reduce_parse(reduce_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"op", required_argument, 0, OPT_OP},
        {"skipnan", no_argument, 0, OPT_SKIPNAN},
        {"json", no_argument, 0, OPT_JSON},
        {"shard", required_argument, 0, OPT_SHARD},
        {"output", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'f'},
        {"axis", required_argument, 0, OPT_AXIS},
        {"keepdims", no_argument, 0, OPT_KEEPDIMS},
        {"ddof", required_argument, 0, OPT_DDOF},
        CLI_COMMON_LONGOPTS,
        {0, 0, 0, 0},
    };
    io_status st;
    cli_common_init(&o->common);
    o->ops = RD_OP_SUM;
    int opt;
    static const char shortopts[] = CLI_COMMON_SHORTOPTS "o:f";
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int handled = cli_common_option(&o->common, opt, optarg);
        if (handled < 0)
            return 2;
        if (handled)
            continue;
        switch (opt) {
        case OPT_OP:
            if (!(o->ops = rd_parse_ops(optarg, &st)))
                return cli_usage_error("reduce", "%s", st.text);
            break;
        case OPT_SKIPNAN:
            o->skipnan = 1;
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_SHARD:
            if (shard_parse(optarg, &o->shard) < 0)
                return cli_usage_error("reduce", "bad --shard '%s' (I/N with 0 <= I < N)", optarg);
            break;
        case 'o':
            o->state_path = optarg;
            break;
        case 'f':
            o->force = 1;
            break;
        case OPT_AXIS:
            if (ax_parse_axes(optarg, AX_MAX_DIMS, &(unsigned){0}, &st) < 0)
                return cli_usage_error("reduce", "%s", st.text);
            o->axis = optarg;
            break;
        case OPT_KEEPDIMS:
            o->keepdims = 1;
            break;
        case OPT_DDOF: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 1000000000L)
                return cli_usage_error("reduce", "bad --ddof '%s' (an integer >= 0)", optarg);
            o->ddof = (int)v;
            break;
        }
        case 'h':
        case OPT_HELP:
            reduce_help();
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (cli_common_finish(&o->common))
        return 2;
    if (o->shard.count && (!o->state_path || argc - optind != 1))
        return cli_usage_error("reduce", "--shard needs one FILE and -o STATE");
    if (o->common.index && argc - optind != 1)
        return cli_usage_error("reduce", "--index IDX goes with one FILE (several find theirs "
                               "beside them, as FILE%s)", GZINDEX_SUFFIX);
    if (o->keepdims && !o->axis)
        return cli_usage_error("reduce", "--keepdims goes with --axis");
    if (!o->shard.count && o->state_path && !o->axis)
        return cli_usage_error("reduce", "-o goes with --shard (the state) or --axis (the result)");
    if (o->state_path && o->axis && argc - optind > 1)
        return cli_usage_error("reduce", "-o FILE takes the result of one FILE: give one input");
    if (o->state_path && o->axis && !o->shard.count && __builtin_popcount(o->ops) > 1 &&
        !(strlen(o->state_path) >= 4 && !strcmp(o->state_path + strlen(o->state_path) - 4, ".npz")))
        return cli_usage_error("reduce", "several operations go to an .npz archive, a member each: "
                               "name the output FILE.npz");
    return -1;
}

/* The .npy header of the regular file at path, plain or gzip (the start
 * of its first member inflated here), and whether it is gzip: read without
 * a reader (no thread, no scan of the file's blocks); 0, or -1 where the
 * file does not start with one. */
static int reduce_peek_npy(const char *path, npy_header *h, int *deflated)
{
    unsigned char raw[16384], plain[8192];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    const unsigned char *head = raw;
    *deflated = n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    if (*deflated) {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
            return -1;
        z.next_in = raw;
        z.avail_in = (uInt)n;
        z.next_out = plain;
        z.avail_out = sizeof plain;
        int rc = inflate(&z, Z_SYNC_FLUSH);
        n = sizeof plain - z.avail_out;
        inflateEnd(&z);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return -1;
        head = plain;
    }
    return npy_parse(head, n, h, NULL) == 0 ? 0 : -1;
}

/* The CPU's seconds of a reduction along axes of the n FILE arguments, on
 * the cost of each one's shape (cost_axis_ns) from its .npy header, read
 * quietly (errors are the run's to report); the least cost of the ops
 * where there is none to read so (raw data, standard input, an archive, a
 * bad file). -1 where a size is not known. */
static double reduce_axis_seconds(const reduce_opts *o, char *const *args, int n)
{
    double total = 0;
    for (int i = 0; i < n; i++) {
        char *const one[1] = {args[i]};
        double s = cli_cpu_seconds(&o->common, one, 1, cost_axis_least_ns(o->ops, 0),
                                   cost_axis_least_ns(o->ops, 1));
        struct stat sb;
        npy_header h;
        int deflated;
        unsigned axes;
        ax_plan p;
        io_status st;
        if (s >= 0 && o->common.dtype == DT_NONE && stat(args[i], &sb) == 0 &&
            S_ISREG(sb.st_mode) && reduce_peek_npy(args[i], &h, &deflated) == 0 &&
            ax_parse_axes(o->axis, h.ndim, &axes, &st) == 0 &&
            ax_plan_init(&p, h.dtype, o->ops, o->skipnan, h.ndim, h.shape, h.fortran_order, axes,
                         o->keepdims, &st) == 0)
            s = cost_input_seconds(deflated && h.data_bytes > (uint64_t)sb.st_size
                                       ? (int64_t)h.data_bytes
                                       : (int64_t)sb.st_size,
                                   deflated, o->common.threads,
                                   reduce_axis_ns(&p, 0), reduce_axis_ns(&p, 1));
        if (s < 0)
            return -1;
        total += s;
    }
    return total;
}

/* Entry point of `gpubatch reduce`. */
int cmd_reduce(int argc, char **argv)
{
    reduce_opts o;
    memset(&o, 0, sizeof o);
    cli_set_command("reduce");
    int rc = reduce_parse(&o, argc, argv);
    if (rc >= 0)
        return rc;
    static char *const stdin_only[] = {"-"};
    int nfiles = argc - optind;
    char *const *inputs = nfiles ? argv + optind : stdin_only;
    int ninputs = nfiles ? nfiles : 1;
    if (!o.shard.count && input_stdout_guard((const char *const *)inputs, ninputs))
        return 1;
    cli_narrow_devices(&o.common, inputs, ninputs); /* before any thread */
    reduce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    double cpu_s = o.axis ? reduce_axis_seconds(&o, inputs, ninputs)
                          : cli_cpu_seconds(&o.common, inputs, ninputs, COST_REDUCE_NS_PLAIN,
                                            COST_REDUCE_NS_GZIP);
    int status = cli_run_open(&ctx.j, &o.common, cpu_s);
    if (status == 0) {
        if (optind >= argc)
            status |= reduce_arg(&ctx, &o, "-");
        for (int i = optind; i < argc && !run_failed(ctx.j.run); i++) /* no devices: no more files */
            status |= reduce_arg(&ctx, &o, argv[i]);
    }
    cli_run_close(&ctx.j);
    return status;
}
