/* cmd_bench.c - `gpubatch bench`: the article ladders, the production
 * kernels and the inflate of blocked gzip timed on this machine's GPU (or
 * the CPU backend), as a table or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "format.h"
#include "msg.h"
#include "options.h"
#include "runtime/tools/bench.h"

static const char bench_usage[] =
    "Usage: gpubatch bench [OPTIONS] [reduce|transpose|quadratic|inflate|axis|all]...\n"
    "Time every step of the reduction, transpose and quadratic-equation ladders of\n"
    "the classic teaching articles (corrected) beside the production kernels, on\n"
    "the GPU: median of repeated runs after warm-up (device events), GB/s (bytes\n"
    "read + bytes written), the ratio to the device copy bandwidth measured in the\n"
    "same run, the speed-up over the article's baseline, and a check of every\n"
    "output (a wrong variant prints FAIL, not a time). The naive transpose is also\n"
    "timed over block shapes, printed as the article's table. inflate decodes\n"
    "normal float32 compressed as blocked gzip (level 1) with the GPU's kernels\n"
    "and with zlib on every host thread (GB/s of decoded bytes; the host row is\n"
    "its baseline). axis (GPU only) sums float32 and float64 (N, C) over axis 0 and\n"
    "(R, N) over axis 1 (C in 1, 3, 64, 1000, 1e5; N in 3, 64, 1000, 1e6) with\n"
    "reduce's kernels along an axis, one 1 GiB array by default. Default sizes: the\n"
    "articles' and, on the GPU, sizes far beyond the L2 cache. Without a GPU,\n"
    "--backend cpu times the CPU backend.\n"
    "\n"
    "  --sizes LIST       sizes to run, comma-separated, each SIZE or OP:SIZE\n"
    "                     (reduce: elements, transpose: N of N x N, quadratic:\n"
    "                     equations, inflate: decoded float32, axis: bytes of\n"
    "                     the array; k, M, G are binary units), e.g.\n"
    "                     reduce:4M,reduce:256M,inflate:256M,axis:2G\n"
    "  --reps N           timed runs per row (default 20; 3 for runs over 200 ms)\n"
    "  --seed N           seed of the generated inputs (default 1)\n"
    "  --json             one JSON document instead of the table\n"
    "  --backend KIND     auto (default: the GPU; fails without one), cuda, cpu\n"
    "  --device N         CUDA device ordinal (default 0)\n"
    "  -p, --threads N    CPU threads for host rows (default: one per core)\n"
    "  -q, --quiet        no warnings\n"
    "  -v, --verbose      report each row on stderr as it is measured\n"
    "  -h, --help         this help\n";

enum { OPT_SIZES = OPT_FIRST_COMMAND_OPTION, OPT_REPS, OPT_SEED, OPT_JSON };

typedef struct {
    bench_row *rows;
    size_t n, cap;
    int failed; /* a row could not be grown */
} bench_rows;

/* Keeps a copy of each row as it comes, and reports it at -v. */
static void bench_collect(void *ctx, const bench_row *row)
{
    bench_rows *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        bench_row *p = realloc(r->rows, cap * sizeof *p);
        if (!p) {
            r->failed = 1;
            return;
        }
        r->rows = p;
        r->cap = cap;
    }
    r->rows[r->n++] = *row;
    if (row->status == BENCH_OK)
        msg_info("%s %s size %llu: %.4f ms", bench_op_name(row->op), row->variant,
                 (unsigned long long)row->size, row->ms);
    else
        msg_info("%s %s size %llu: %s", bench_op_name(row->op), row->variant,
                 (unsigned long long)row->size, row->note);
}

/* Parses one --sizes list into cfg, replacing the defaults of each op named
 * (an unprefixed size names every op in `ops`); 2 after a usage error. */
static int bench_parse_sizes(bench_config *cfg, const char *list, unsigned ops)
{
    int given[BENCH_NOPS] = {0};
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return cli_usage_error("bench", "out of memory");
    int status = 0;
    for (char *item = strtok_r(copy, ",", &save); item && !status; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        unsigned which = ops;
        if (colon) {
            *colon = 0;
            int op = bench_op_parse(item);
            if (op < 0) {
                status = cli_usage_error("bench", "unknown op '%s' in --sizes", item);
                break;
            }
            which = 1u << op;
            item = colon + 1;
        }
        size_t size;
        if (cli_parse_size(item, &size) < 0 || size == 0) {
            status = cli_usage_error("bench", "bad size '%s' in --sizes", item);
            break;
        }
        for (int op = BENCH_REDUCE; op < BENCH_NOPS && !status; op++) {
            if (!(which >> op & 1))
                continue;
            if (size > bench_size_limit(op))
                status = cli_usage_error("bench", "%s size %zu is over the limit %llu", bench_op_name(op),
                                         size, (unsigned long long)bench_size_limit(op));
            else if (given[op] == BENCH_MAX_SIZES)
                status = cli_usage_error("bench", "more than %d sizes for %s", BENCH_MAX_SIZES,
                                         bench_op_name(op));
            else
                cfg->sizes[op][given[op]++] = size;
        }
    }
    free(copy);
    for (int op = BENCH_REDUCE; op < BENCH_NOPS && !status; op++)
        if (given[op])
            cfg->nsizes[op] = given[op];
    return status;
}

/* "gpu", or "cpu" and its thread count. */
static void bench_where(char *buf, size_t len, const bench_row *r)
{
    if (r->on_gpu)
        snprintf(buf, len, "gpu");
    else
        snprintf(buf, len, "cpu x%d", r->threads);
}

/* The size of a group heading: "n = 4194304", "N = 1024". */
static void bench_size_text(char *buf, size_t len, bench_op op, uint64_t size)
{
    if (op == BENCH_COPY)
        snprintf(buf, len, "%.1f MiB", (double)size / 1048576.0);
    else
        snprintf(buf, len, "%s = %llu", op == BENCH_TRANSPOSE ? "N" : "n", (unsigned long long)size);
    if (op == BENCH_INFLATE)
        snprintf(buf + strlen(buf), len - strlen(buf), " (%.1f MiB decoded)",
                 4.0 * (double)size / 1048576.0);
}

/* One ladder row of the table. */
static void bench_print_row(const bench_row *r)
{
    char where[32];
    bench_where(where, sizeof where, r);
    printf("  %-12s %-7s ", r->variant, where);
    if (r->status == BENCH_OK) {
        printf("%11.4f %9.1f", r->ms, r->gbps);
        if (r->op == BENCH_COPY)
            printf("  %s\n", r->idea);
        else if (r->speedup > 0)
            printf(" %8.3f %9.1fx  %-15s %s\n", r->of_copy, r->speedup, r->article, r->note);
        else
            printf(" %8.3f %10s  %-15s %s\n", r->of_copy, "-", r->article, r->note);
    } else {
        printf("%11s %9s %8s %10s  %-15s %s\n", r->status == BENCH_WRONG ? "FAIL" : "skipped", "-",
               "-", "-", r->article, r->note);
    }
}

/* The naive transpose's sweep rows [from, to) as the article's table:
 * block height down, block width across, median ms in the cells. */
static void bench_print_sweep(const bench_row *rows, size_t from, size_t to)
{
    printf("  naive transpose by block shape, median ms (rows: blockDim.y, columns: blockDim.x)\n");
    printf("  %5s", "y\\x");
    for (int bx = 1; bx <= 256; bx *= 2)
        printf(" %8d", bx);
    printf("\n");
    for (int by = 1; by <= 256; by *= 2) {
        printf("  %5d", by);
        for (int bx = 1; bx <= 256; bx *= 2) {
            const bench_row *cell = NULL;
            for (size_t i = from; i < to; i++)
                if (rows[i].sweep && rows[i].bx == bx && rows[i].by == by)
                    cell = &rows[i];
            if (!cell)
                printf(" %8s", "");
            else if (cell->status != BENCH_OK)
                printf(" %8s", "FAIL");
            else
                printf(" %8.4f", cell->ms);
        }
        printf("\n");
    }
}

/* The whole table, one group per op and size. */
static void bench_print_table(const backend *be, const bench_config *cfg, const bench_rows *r)
{
    if (backend_is_cuda(be)) {
        const gpu_device_info *di = gpu_info(backend_gpu_at(be, 0));
        int v = cu_driver_version();
        printf("gpubatch bench: %s, compute capability %d.%d, %d SMs, L2 %d KiB, %.1f GiB; driver "
               "CUDA %d.%d\n",
               di->name, di->cc_major, di->cc_minor, di->sm_count, di->l2_bytes >> 10,
               di->total_mem / 1073741824.0, v / 1000, v % 1000 / 10);
    } else {
        printf("gpubatch bench: CPU backend, %d threads\n", backend_threads(be));
    }
    printf("median of %d runs after warm-up (3 runs when one takes over 200 ms); bytes = bytes "
           "read + bytes written\n(inflate: bytes decoded); GB/s = 1e9 bytes/s; 'of copy' = GB/s "
           "over the copy's GB/s (device copy for\ngpu rows, host copy for cpu rows); speed-up "
           "over the article's baseline at the same size (inflate:\nover the host row); article "
           "= the figure it reported at its size\n",
           cfg->reps);
    size_t i = 0;
    while (i < r->n) {
        size_t j = i;
        while (j < r->n && r->rows[j].op == r->rows[i].op && r->rows[j].size == r->rows[i].size)
            j++;
        char size[64];
        bench_size_text(size, sizeof size, r->rows[i].op, r->rows[i].size);
        if (r->rows[i].op == BENCH_COPY)
            printf("\ncopy of the largest working set, %s\n", size);
        else
            printf("\n%s (%s), %s\n", bench_op_name(r->rows[i].op), bench_op_unit(r->rows[i].op),
                   size);
        printf("  %-12s %-7s %11s %9s %8s %10s  %-15s %s\n", "variant", "where", "ms", "GB/s",
               "of copy", "speed-up", "article", "check");
        int sweep = 0;
        for (size_t k = i; k < j; k++) {
            if (r->rows[k].sweep)
                sweep = 1;
            else
                bench_print_row(&r->rows[k]);
        }
        if (sweep)
            bench_print_sweep(r->rows, i, j);
        i = j;
    }
}

/* A JSON number (shortest exact text), or null when absent. */
static void bench_json_num(const char *key, double v, int present)
{
    char text[64];
    printf(", \"%s\": ", key);
    fmt_double(text, sizeof text, v);
    fputs(present ? text : "null", stdout);
}

/* A "key": "string" member. */
static void bench_json_str(const char *key, const char *s)
{
    printf(", \"%s\": ", key);
    fmt_json_string(stdout, s);
}

/* The whole result as one JSON document. */
static void bench_print_json(const backend *be, const bench_config *cfg, const bench_rows *r)
{
    printf("{\"backend\": \"%s\"", backend_name(be));
    if (backend_is_cuda(be)) {
        const gpu_device_info *di = gpu_info(backend_gpu_at(be, 0));
        int v = cu_driver_version();
        printf(", \"device\": {\"name\": ");
        fmt_json_string(stdout, di->name);
        printf(", \"compute_capability\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, "
               "\"memory_bytes\": %zu, \"driver_cuda\": \"%d.%d\"}",
               di->cc_major, di->cc_minor, di->sm_count, di->l2_bytes, di->total_mem, v / 1000,
               v % 1000 / 10);
    } else {
        printf(", \"device\": null");
    }
    printf(", \"cpu_threads\": %d, \"reps\": %d, \"seed\": %llu", backend_threads(be), cfg->reps,
           (unsigned long long)cfg->seed);
    bench_json_str("bytes", "bytes read + bytes written of the data arrays (inflate: bytes decoded)");
    printf(",\n \"rows\": [");
    for (size_t i = 0; i < r->n; i++) {
        const bench_row *w = &r->rows[i];
        int ok = w->status == BENCH_OK;
        printf("%s\n  {\"op\": \"%s\"", i ? "," : "", bench_op_name(w->op));
        bench_json_str("variant", w->variant);
        printf(", \"where\": \"%s\", \"threads\": %d, \"size\": %llu", w->on_gpu ? "gpu" : "cpu",
               w->threads, (unsigned long long)w->size);
        if (w->bx)
            printf(", \"block\": [%d, %d]", w->bx, w->by);
        else
            printf(", \"block\": null");
        printf(", \"sweep\": %s, \"baseline\": %s, \"status\": \"%s\"", w->sweep ? "true" : "false",
               w->baseline ? "true" : "false",
               ok ? "ok" : w->status == BENCH_WRONG ? "wrong" : "skipped");
        bench_json_num("ms", w->ms, ok);
        printf(", \"reps\": %d", w->reps);
        bench_json_num("bytes", w->bytes, 1);
        bench_json_num("gbps", w->gbps, ok);
        bench_json_num("of_copy", w->of_copy, ok && w->of_copy > 0);
        bench_json_num("speedup", w->speedup, ok && w->speedup > 0);
        bench_json_str("article", w->article);
        bench_json_str("idea", w->idea);
        bench_json_str("check", w->note);
        printf("}");
    }
    printf("\n ]}\n");
}

/* Entry point of `gpubatch bench`. */
int cmd_bench(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"sizes", required_argument, 0, OPT_SIZES},
        {"reps", required_argument, 0, OPT_REPS},
        {"seed", required_argument, 0, OPT_SEED},
        {"json", no_argument, 0, OPT_JSON},
        {"backend", required_argument, 0, OPT_BACKEND},
        {"device", required_argument, 0, OPT_DEVICE},
        {"threads", required_argument, 0, 'p'},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    static const char shortopts[] = ":p:qvh";
    cli_common common;
    cli_common_init(&common);
    cli_set_command("bench");
    const char *sizes = NULL;
    int reps = -1, json = 0, opt;
    uint64_t seed = 1;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int handled = cli_common_option(&common, opt, optarg);
        if (handled < 0)
            return 2;
        if (handled)
            continue;
        switch (opt) {
        case OPT_SIZES:
            sizes = optarg;
            break;
        case OPT_REPS:
            if (cli_parse_int(optarg, &reps) < 0 || reps < 1 || reps > 1000)
                return cli_usage_error("bench", "bad --reps '%s' (1 to 1000)", optarg);
            break;
        case OPT_SEED:
            if (cli_parse_u64(optarg, 10, &seed) < 0)
                return cli_usage_error("bench", "bad --seed '%s' (0 to 18446744073709551615)",
                                       optarg);
            break;
        case OPT_JSON:
            json = 1;
            break;
        case 'h':
        case OPT_HELP:
            fputs(bench_usage, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (cli_common_finish(&common))
        return 2;
    unsigned ops = 0;
    for (int i = optind; i < argc; i++) {
        int op = bench_op_parse(argv[i]);
        if (!strcmp(argv[i], "all"))
            ops |= BENCH_ALL_OPS;
        else if (op < 0)
            return cli_usage_error("bench",
                                   "unknown benchmark '%s' (reduce, transpose, quadratic, inflate, all)",
                                   argv[i]);
        else
            ops |= 1u << op;
    }
    bench_config cfg;
    bench_config_defaults(&cfg, 1);
    if (ops)
        cfg.ops = ops;
    int rc;
    if (sizes && (rc = bench_parse_sizes(&cfg, sizes, cfg.ops)) != 0) /* usage first */
        return rc;
    if (common.devices.all || common.devices.count != 1)
        return cli_usage_error("bench", "bench times one device: give --device N");
    cli_narrow_devices(&common, NULL, 0); /* before any thread */
    backend *be = backend_new();
    if (!be)
        return msg_error("bench: out of memory"), 1;
    rc = backend_open(be, common.backend, &common.devices, common.threads);
    if (rc < 0) {
        msg_status("bench", backend_status(be));
        backend_free(be);
        return 1;
    }
    backend_settle(be); /* bench times one side: auto's, once it is known */
    if (backend_fallback_reason(be)[0]) {
        msg_error("bench: no usable GPU (%s); 'gpubatch bench --backend cpu' times the CPU backend",
                  backend_fallback_reason(be));
        backend_close(be);
        backend_free(be);
        return 1;
    }
    bench_config_defaults(&cfg, backend_is_cuda(be));
    if (ops)
        cfg.ops = ops;
    if (reps > 0)
        cfg.reps = reps;
    cfg.seed = seed;
    if (sizes)
        bench_parse_sizes(&cfg, sizes, cfg.ops); /* checked above */
    bench_rows rows = {0};
    io_status st;
    rc = bench_run(be, &cfg, bench_collect, &rows, &st);
    int status = 0;
    if (rc < 0) {
        status = msg_status("bench", &st);
    } else if (rows.failed) {
        msg_error("bench: out of memory");
        status = 1;
    } else if (json) {
        bench_print_json(be, &cfg, &rows);
    } else {
        bench_print_table(be, &cfg, &rows);
    }
    free(rows.rows);
    backend_close(be);
    backend_free(be);
    if (status == 0)
        status = msg_flush_stdout();
    return status;
}
