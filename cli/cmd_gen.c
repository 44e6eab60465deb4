/* cmd_gen.c - `gpubatch gen`: deterministic synthetic arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "commands.h"
#include "io/npy.h"
#include "io/par.h"
#include "msg.h"
#include "options.h"
#include "output.h"
#include "runtime/tools/gen.h"

static const char gen_usage[] =
    "Usage: gpubatch gen [OPTIONS] --shape DIMS [-o FILE]\n"
    "       gpubatch gen [OPTIONS] --quadratic N [-o FILE]\n"
    "Write a deterministic synthetic array as .npy or raw (blocked gzip for a FILE\n"
    "named *.gz); the same options give the same bytes on every machine.\n"
    "\n"
    "Contents:\n"
    "  --shape DIMS       array shape, e.g. 1000000 or 4096x64x64\n"
    "  --dtype TYPE       float32 (default), float64, int8..int64, uint8..uint64,\n"
    "                     complex64, complex128\n"
    "  --dist KIND        uniform (default) or normal\n"
    "  --low A --high B   uniform range: [A, B) for floats, [A, B] for integers\n"
    "                     (default [0, 1) for floats, the full range for integers)\n"
    "  --mean M --std S   normal parameters (default 0 and 1 for floats)\n"
    "  --seed N           stream seed (default 0)\n"
    "  --quadratic N      N rows (a, b, c) of quadratic-equation coefficients, a\n"
    "                     mixture of ordinary, extreme-exponent, near-double-root,\n"
    "                     huge-b, complex-root and degenerate rows (float32/float64)\n"
    "  --raw              raw little-endian elements, no .npy header\n"
    "  -p, --threads N    compression threads (default: one per core)\n"
    "  -q, --quiet        no warnings, no progress line\n"
    "  -v, --verbose      report the array written on stderr\n"
    "  -h, --help         this help\n";

enum {
    OPT_DIST = OPT_FIRST_COMMAND_OPTION,
    OPT_LOW,
    OPT_HIGH,
    OPT_MEAN,
    OPT_STD,
    OPT_SEED,
    OPT_QUAD,
    OPT_RAW,
};

/* Options that only go with some others, as gen_conflict checks them. */
enum {
    GEN_GAVE_SHAPE = 1,
    GEN_GAVE_QUAD = 2,
    GEN_GAVE_DIST = 4,
    GEN_GAVE_UNIFORM = 8, /* --low or --high */
    GEN_GAVE_NORMAL = 16, /* --mean or --std */
};

typedef struct {
    dt_type dtype;
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    gen_dist dist;
    int have_p1, have_p2;
    double p1, p2;
    unsigned given; /* GEN_GAVE_* of the options on the command line */
    uint64_t seed;
    int quadratic;
    int raw;
    out_opts out;
} gen_opts;

/* Parses a double option value. */
static int gen_parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return (*s && !*end) ? 0 : -1;
}

/* Names the first pair of options given together that contradict each
 * other (each would set what the other sets), or NULL. */
static const char *gen_conflict(const gen_opts *g)
{
    unsigned o = g->given;
    if ((o & GEN_GAVE_QUAD) && (o & GEN_GAVE_SHAPE))
        return "--quadratic N sets the shape (N rows of 3): not with --shape";
    if ((o & GEN_GAVE_QUAD) && (o & (GEN_GAVE_DIST | GEN_GAVE_UNIFORM | GEN_GAVE_NORMAL)))
        return "--quadratic writes its own mixture: not with --dist, --low, --high, --mean "
               "or --std";
    if ((o & GEN_GAVE_UNIFORM) && (o & GEN_GAVE_NORMAL))
        return "--low/--high (uniform) and --mean/--std (normal) do not go together";
    if ((o & GEN_GAVE_UNIFORM) && g->dist == GEN_NORMAL)
        return "--low/--high go with --dist uniform, not normal";
    if ((o & GEN_GAVE_NORMAL) && g->dist != GEN_NORMAL)
        return "--mean/--std go with --dist normal";
    return NULL;
}

/* Parses gen's options; -1 to go on, else an exit status. */
static int gen_parse(gen_opts *g, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"shape", required_argument, 0, OPT_SHAPE},
        {"dtype", required_argument, 0, OPT_DTYPE},
        {"dist", required_argument, 0, OPT_DIST},
        {"low", required_argument, 0, OPT_LOW},
        {"high", required_argument, 0, OPT_HIGH},
        {"mean", required_argument, 0, OPT_MEAN},
        {"std", required_argument, 0, OPT_STD},
        {"seed", required_argument, 0, OPT_SEED},
        {"quadratic", required_argument, 0, OPT_QUAD},
        {"raw", no_argument, 0, OPT_RAW},
        CLI_OUTPUT_LONGOPTS,
        {"threads", required_argument, 0, 'p'},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    static const char shortopts[] = ":p:qvh" CLI_OUTPUT_SHORTOPTS;
    cli_common verbosity; /* for -q and -v alone */
    cli_common_init(&verbosity);
    memset(g, 0, sizeof *g);
    g->dtype = DT_F32;
    g->ndim = -1;
    g->out.threads = backend_cpu_count();
    int opt, handled;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        double v;
        if ((handled = cli_verbosity_option(&verbosity, opt)) < 0)
            return 2;
        if (handled || out_option(&g->out, opt, optarg))
            continue;
        switch (opt) {
        case OPT_SHAPE:
            if ((g->ndim = cli_parse_shape(optarg, g->shape, NPY_MAX_DIMS)) < 0)
                return cli_usage_error("gen", "bad --shape '%s' (e.g. 1000x3)", optarg);
            g->given |= GEN_GAVE_SHAPE;
            break;
        case OPT_DTYPE:
            if ((g->dtype = dt_from_name(optarg)) == DT_NONE)
                return cli_usage_error("gen", "unknown dtype '%s'", optarg);
            break;
        case OPT_DIST:
            if (!strcmp(optarg, "uniform"))
                g->dist = GEN_UNIFORM;
            else if (!strcmp(optarg, "normal"))
                g->dist = GEN_NORMAL;
            else
                return cli_usage_error("gen", "unknown --dist '%s' (uniform, normal)", optarg);
            g->given |= GEN_GAVE_DIST;
            break;
        case OPT_LOW:
        case OPT_MEAN:
            if (gen_parse_double(optarg, &v) < 0)
                return cli_usage_error("gen", "bad number '%s'", optarg);
            g->p1 = v;
            g->have_p1 = 1;
            g->given |= opt == OPT_LOW ? GEN_GAVE_UNIFORM : GEN_GAVE_NORMAL;
            break;
        case OPT_HIGH:
        case OPT_STD:
            if (gen_parse_double(optarg, &v) < 0)
                return cli_usage_error("gen", "bad number '%s'", optarg);
            g->p2 = v;
            g->have_p2 = 1;
            g->given |= opt == OPT_HIGH ? GEN_GAVE_UNIFORM : GEN_GAVE_NORMAL;
            break;
        case OPT_SEED:
            if (cli_parse_u64(optarg, 0, &g->seed) < 0)
                return cli_usage_error("gen", "bad --seed '%s' (0 to 18446744073709551615)",
                                       optarg);
            break;
        case OPT_QUAD:
            g->quadratic = 1;
            g->ndim = 2;
            g->shape[1] = 3;
            if (cli_parse_u64(optarg, 10, &g->shape[0]) < 0)
                return cli_usage_error("gen", "bad --quadratic '%s'", optarg);
            g->given |= GEN_GAVE_QUAD;
            break;
        case OPT_RAW:
            g->raw = 1;
            break;
        case 'p':
            if (cli_parse_int(optarg, &g->out.threads) < 0 || g->out.threads < 1)
                return cli_usage_error("gen", "bad --threads '%s'", optarg);
            par_limit(g->out.threads);
            break;
        case 'h':
        case OPT_HELP:
            fputs(gen_usage, stdout);
            fputs(CLI_OUTPUT_HELP, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("gen", "unexpected argument '%s'", argv[optind]);
    if (out_resolve(&g->out) || out_npz_check(&g->out, g->raw, 0))
        return 2;
    const char *conflict = gen_conflict(g);
    if (conflict)
        return cli_usage_error("gen", "%s", conflict);
    if (g->ndim < 0)
        return cli_usage_error("gen", "--shape or --quadratic is required");
    if (g->dtype == DT_F16 || g->dtype == DT_BF16 || g->dtype == DT_BOOL)
        return cli_usage_error("gen", "gen does not write %s data", dt_name(g->dtype));
    if (g->quadratic && g->dtype != DT_F32 && g->dtype != DT_F64)
        return cli_usage_error("gen", "--quadratic needs --dtype float32 or float64");
    return -1;
}

/* Generates the array in blocks and streams it to the output. */
static int gen_write(const gen_opts *g, const gen_spec *spec, uint64_t nelem, out_stream *o)
{
    /* Elements per fill: small enough that the compressor threads get
     * new blocks while the next fill is generated. */
    enum { BLOCK = 1 << 16 };
    size_t sz = dt_size(g->dtype);
    size_t per_block = g->quadratic ? BLOCK / 3 : BLOCK;
    unsigned char *buf = malloc(BLOCK * sz);
    if (!buf) {
        msg_error("out of memory");
        return 1;
    }
    if (!g->raw) {
        unsigned char head[4096];
        int hl = npy_write_header(head, sizeof head, g->dtype, g->ndim, g->shape, 0);
        if (hl < 0 || out_write(o, head, (size_t)hl)) {
            free(buf);
            return 1;
        }
    }
    uint64_t units = g->quadratic ? g->shape[0] : nelem;
    size_t unit_bytes = sz * (g->quadratic ? 3 : 1);
    progress_begin(o->name, (int64_t)(units * unit_bytes));
    for (uint64_t i = 0; i < units; i += per_block) {
        progress_update(i * unit_bytes);
        size_t n = units - i < per_block ? (size_t)(units - i) : per_block;
        if (g->quadratic)
            gen_quadratic_fill(g->seed, g->dtype, i, n, buf);
        else
            gen_fill(spec, i, n, buf);
        if (out_write(o, buf, n * unit_bytes)) {
            progress_end();
            free(buf);
            return 1;
        }
    }
    progress_end();
    free(buf);
    return 0;
}

/* The output's size: exact when plain; when compressed, estimated from a
 * sample of the first elements compressed at the level, halved, as the
 * sample may compress worse than the rest. 0, or 1 when out of memory. */
static int gen_estimate(const gen_opts *g, const gen_spec *spec, uint64_t bytes, int level,
                        uint64_t *estimate)
{
    enum { SAMPLE = 1 << 16 };
    *estimate = bytes;
    if (level <= 0 || bytes == 0)
        return 0;
    size_t sz = dt_size(g->dtype), unit = sz * (g->quadratic ? 3 : 1);
    uint64_t units = bytes / unit;
    size_t n = units < SAMPLE / 3 ? (size_t)units : SAMPLE / 3;
    uLongf room = compressBound((uLong)(n * unit));
    unsigned char *raw = malloc(n * unit), *packed = malloc(room);
    if (!raw || !packed) {
        free(raw);
        free(packed);
        return 1;
    }
    if (g->quadratic)
        gen_quadratic_fill(g->seed, g->dtype, 0, n, raw);
    else
        gen_fill(spec, 0, n, raw);
    if (compress2(packed, &room, raw, (uLong)(n * unit), level) == Z_OK)
        *estimate = (uint64_t)((double)bytes * ((double)room / (double)(n * unit)) / 2);
    free(raw);
    free(packed);
    return 0;
}

/* Refuses an output that cannot fit the room left on its file system, before
 * anything is written: 0, or 1 after the error (the output dropped). */
static int gen_check_room(const gen_opts *g, const gen_spec *spec, uint64_t bytes, out_stream *o)
{
    uint64_t room, need;
    if (io_sink_free_space(o->sink, &room) < 0)
        return 0;
    if (gen_estimate(g, spec, bytes, g->out.level, &need)) {
        msg_error("out of memory");
        out_abort(o);
        return 1;
    }
    if (need <= room)
        return 0;
    msg_error("%s: the output needs %s%llu bytes and its file system has %llu bytes free",
              o->name, g->out.level > 0 ? "about " : "", (unsigned long long)need,
              (unsigned long long)room);
    out_abort(o);
    return 1;
}

/* Entry point of `gpubatch gen`. */
int cmd_gen(int argc, char **argv)
{
    gen_opts g;
    cli_set_command("gen");
    int rc = gen_parse(&g, argc, argv);
    if (rc >= 0)
        return rc;
    gen_spec spec;
    gen_spec_defaults(&spec, g.dist, g.dtype, g.seed);
    if (g.have_p1)
        spec.p1 = g.p1;
    if (g.have_p2)
        spec.p2 = g.p2;
    io_status st;
    if (!g.quadratic && gen_spec_check(&spec, &st) < 0)
        return cli_usage_error("gen", "%s", st.text);
    uint64_t nelem = 1, bytes;
    for (int d = 0; d < g.ndim; d++)
        if (__builtin_mul_overflow(nelem, g.shape[d], &nelem))
            return cli_usage_error("gen", "shape too large");
    if (__builtin_mul_overflow(nelem, (uint64_t)dt_size(g.dtype), &bytes) || nelem >> 60)
        return cli_usage_error("gen", "shape too large");
    out_stream o;
    if (out_open(&o, &g.out, NULL, 0))
        return 1;
    if (gen_check_room(&g, &spec, bytes, &o))
        return 1;
    if (gen_write(&g, &spec, nelem, &o)) {
        out_abort(&o);
        return 1;
    }
    const char *name = o.name;
    if (out_close(&o))
        return 1;
    msg_info("%s: %llu %s elements (%llu bytes of data)", name, (unsigned long long)nelem,
             dt_name(g.dtype), (unsigned long long)bytes);
    return 0;
}
