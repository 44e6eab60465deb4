/* options.c - the options every streaming command shares. */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "runtime/cost.h"
#include "runtime/simd.h"
#include "io/clock.h"
#include "io/npz.h"
#include "io/par.h"
#include "format.h"
#include "msg.h"

/* Sets the defaults. */
void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->backend = BACKEND_AUTO;
    c->devices.count = 1; /* device 0 */
    c->chunk = CLI_DEFAULT_CHUNK;
    c->streams = CLI_DEFAULT_STREAMS;
    c->dtype = DT_NONE;
    c->ndim = -1;
}

static const char *cli_command = "";

/* Names the running command for usage errors. */
void cli_set_command(const char *name)
{
    cli_command = name;
}

/* Prints "gpubatch CMD: ..." and the --help hint; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    if (!cmd || !*cmd)
        cmd = cli_command;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char head[128], tail[128];
    snprintf(head, sizeof head, "gpubatch %s: ", cmd);
    snprintf(tail, sizeof tail, "\nTry 'gpubatch %s --help' for more information.\n", cmd);
    fmt_escaped_line(stderr, head, line, tail);
    return 2;
}

/* Parses a size with an optional binary unit. */
int cli_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end == 'i' && end[1] == 'B')
        end += 2;
    else if (*end == 'B')
        end++;
    if (*end || (shift && v > (~0ull >> shift)))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* Parses an unsigned 64-bit integer, refusing values that do not fit
 * (strtoull would saturate them). */
int cli_parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Parses a non-negative int. */
int cli_parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses dims separated by 'x' or ','. */
int cli_parse_shape(const char *s, uint64_t *dims, int maxdims)
{
    int n = 0;
    const char *p = s;
    if (!*p)
        return -1;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9' || n == maxdims)
            return -1;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno)
            return -1;
        dims[n++] = v;
        p = end;
        if (*p == 'x' || *p == ',') {
            p++;
            if (!*p)
                return -1;
        } else if (*p) {
            return -1;
        }
    }
    return n;
}

/* Handles one of the shared options. */
int cli_common_option(cli_common *c, int opt, const char *arg)
{
    int b;
    switch (opt) {
    case OPT_BACKEND:
        if ((b = backend_parse(arg)) < 0)
            return cli_usage_error("", "unknown backend '%s' (auto, cuda, cpu)", arg), -1;
        c->backend = (backend_kind)b;
        c->backend_given = 1;
        return 1;
    case OPT_DEVICE: {
        io_status st;
        if (backend_parse_devices(arg, &c->devices, &st) < 0)
            return cli_usage_error("", "%s", st.text), -1;
        return 1;
    }
    case 'p':
        if (cli_parse_int(arg, &c->threads) < 0 || c->threads < 1)
            return cli_usage_error("", "bad --threads '%s'", arg), -1;
        par_limit(c->threads); /* every thread of the run, the parallel readers' too */
        return 1;
    case OPT_CHUNK:
        if (cli_parse_size(arg, &c->chunk) < 0 || c->chunk == 0 || c->chunk > CLI_MAX_CHUNK)
            return cli_usage_error("", "bad --chunk '%s' (e.g. 64M; at most 1024G)", arg), -1;
        c->chunk = (c->chunk + CLI_CHUNK_ALIGN - 1) / CLI_CHUNK_ALIGN * CLI_CHUNK_ALIGN;
        c->chunk_given = 1;
        return 1;
    case OPT_STREAMS:
        if (cli_parse_int(arg, &c->streams) < 0 || c->streams < 2 || c->streams > 64)
            return cli_usage_error("", "bad --streams '%s' (2 to 64)", arg), -1;
        c->streams_given = 1;
        return 1;
    case OPT_DTYPE:
        if ((c->dtype = dt_parse(arg, &c->dtype_big_endian)) == DT_NONE)
            return cli_usage_error("", "unknown dtype '%s'", arg), -1;
        return 1;
    case OPT_SHAPE:
        if ((c->ndim = cli_parse_shape(arg, c->shape, NPY_MAX_DIMS)) < 0)
            return cli_usage_error("", "bad --shape '%s' (e.g. 1000x3)", arg), -1;
        return 1;
    case OPT_INDEX:
        c->index = arg;
        input_set_index(c->index, c->no_index);
        return 1;
    case OPT_NO_INDEX:
        c->no_index = 1;
        input_set_index(c->index, c->no_index);
        return 1;
    case 'q':
    case 'v':
        return cli_verbosity_option(c, opt);
    default:
        return 0;
    }
}

/* Sets the verbosity of -q or -v; the two together are a usage error. */
int cli_verbosity_option(cli_common *c, int opt)
{
    if (opt != 'q' && opt != 'v')
        return 0;
    if (c->verbosity_given && c->verbosity_given != opt)
        return cli_usage_error("", "-q (--quiet) and -v (--verbose) do not go together"), -1;
    c->verbosity_given = opt;
    msg_set_level(opt == 'q' ? MSG_QUIET : MSG_VERBOSE);
    return 1;
}

/* Takes the backend from GPUBATCH_BACKEND where --backend did not set it,
 * and checks GPUBATCH_CPU_SIMD. */
int cli_common_finish(cli_common *c)
{
    const char *simd = getenv("GPUBATCH_CPU_SIMD");
    if (simd && *simd && !simd_known(simd))
        return cli_usage_error("",
                               "unknown instruction set '%s' in GPUBATCH_CPU_SIMD (baseline, avx2, "
                               "avx512)",
                               simd);
    const char *env = getenv("GPUBATCH_BACKEND");
    int b;
    if (c->backend_given || !env || !*env)
        return 0;
    if ((b = backend_parse(env)) < 0)
        return cli_usage_error("", "unknown backend '%s' in GPUBATCH_BACKEND (auto, cuda, cpu)",
                               env);
    c->backend = (backend_kind)b;
    return 0;
}

/* Edit distance between a and b (insertions, deletions, substitutions and
 * swaps of neighbours, each 1), for suggesting an option; names are short. */
static size_t cli_distance(const char *a, size_t la, const char *b, size_t lb)
{
    enum { MAX = 64 };
    size_t d[MAX + 1][MAX + 1];
    if (la > MAX || lb > MAX)
        return (size_t)-1;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* The long option nearest to name (len bytes), or NULL when none is close:
 * one edit for names up to 4 letters, two for longer ones. */
static const char *cli_nearest_option(const char *name, size_t len, const struct option *longopts)
{
    const char *best = NULL;
    size_t best_d = (len <= 4 ? 1 : 2) + 1; /* only a closer one is taken */
    for (const struct option *o = longopts; o->name; o++) {
        size_t d = cli_distance(name, len, o->name, strlen(o->name));
        if (d < best_d) {
            best = o->name;
            best_d = d;
        }
    }
    return best;
}

/* Whether c is one of the short options of shortopts (getopt's letters). */
static int cli_is_short_option(int c, const char *shortopts)
{
    return c > 0 && c < 256 && c != ':' && strchr(shortopts, c) != NULL;
}

/* One usage line for an option getopt_long refused (see options.h). */
int cli_option_error(int opt, char *const *argv, const char *shortopts,
                     const struct option *longopts)
{
    const char *text = optind > 0 ? argv[optind - 1] : "";
    /* '?' with a short option's letter or a long option's id in optopt: a
     * long option given an argument it does not take (a short option is
     * never refused so); with any other letter, an unknown short option. */
    int is_long = opt == ':' ? !strncmp(text, "--", 2)
                             : optopt == 0 || optopt >= 256 || cli_is_short_option(optopt, shortopts);
    if (!is_long)
        return opt == ':' ? cli_usage_error("", "option '-%c' needs an argument", optopt)
                          : cli_usage_error("", "unknown option '-%c'", optopt);
    const char *name = strncmp(text, "--", 2) ? text : text + 2, *full = NULL;
    int len = (int)strcspn(name, "="), matches = 0;
    char list[512] = "";
    size_t used = 0;
    for (const struct option *o = longopts; o->name; o++)
        if (!strncmp(o->name, name, (size_t)len)) {
            if (!o->name[len]) { /* the whole name: no other is meant */
                full = o->name;
                matches = 1;
                break;
            }
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
                                         matches ? ", " : "", o->name);
            full = o->name;
            matches++;
        }
    if (matches == 1 && opt == ':')
        return cli_usage_error("", "option '--%s' needs an argument", full);
    if (matches == 1 && optopt != 0)
        return cli_usage_error("", "option '--%s' takes no argument", full);
    if (matches > 1)
        return cli_usage_error("", "option '--%.*s' is ambiguous: %s", len, name, list);
    const char *near = cli_nearest_option(name, (size_t)len, longopts);
    if (near)
        return cli_usage_error("", "unknown option '--%.*s' (did you mean '--%s'?)", len, name,
                               near);
    return cli_usage_error("", "unknown option '--%.*s'", len, name);
}

/* Prints the version and license. */
int cli_version(void)
{
    fputs("gpubatch " GPUBATCH_VERSION "\n"
          "Copyright (c) 2026 the gpubatch authors. MIT License: see LICENSE.\n"
          "This is free software: you are free to change and redistribute it.\n"
          "There is NO WARRANTY, to the extent permitted by law.\n",
          stdout);
    return msg_flush_stdout();
}

/* GPUBATCH_GPU_START: "always", "wait", or the estimate (anything else). */
static int cli_gpu_start_mode(const char *want)
{
    const char *s = getenv("GPUBATCH_GPU_START");
    return s && !strcmp(s, want);
}

/* Estimated seconds of CPU work for the files named (see options.h). */
double cli_cpu_seconds(const cli_common *c, char *const *paths, int n, double ns_plain,
                       double ns_gzip)
{
    if (c->backend != BACKEND_AUTO)
        return -1;
    return cost_cpu_seconds(paths, n, input_file, c->threads, ns_plain, ns_gzip);
}

/* Estimated seconds of CPU work for an open input (see options.h). */
double cli_reader_cpu_seconds(const cli_common *c, const io_reader *r, double ns_plain,
                              double ns_gzip)
{
    return cost_input_seconds(io_reader_file_size(r), io_reader_deflated(r), c->threads,
                              ns_plain, ns_gzip);
}

/* With --device all, narrows the devices the driver starts to those the
 * input's size pays for (cost_count): the first ones the driver would
 * number. Where that is one, the run is on device 0 as if listed (its
 * set-up then need not wait for the driver's count of devices). 1 when
 * narrowed, else 0. */
static int cli_plan_all(cli_common *c, char *const *paths, int n)
{
    if (c->backend == BACKEND_CPU || !c->devices.all)
        return 0;
    const char *sysfs = getenv("GPUBATCH_SYSFS");
    double bytes = cost_shared_bytes(paths, n, input_file);
    double link = cost_slowest_link(sysfs && *sysfs ? sysfs : "/sys");
    double rate = cost_device_rate(link);
    int k = cost_count(bytes, rate, COST_HOST_BYTES_PER_S, COST_START_EACH_SECONDS,
                          BACKEND_MAX_GPUS);
    int first[BACKEND_MAX_GPUS];
    for (int i = 0; i < k; i++)
        first[i] = i;
    if (k == BACKEND_MAX_GPUS || !cu_narrow_devices(first, k)) /* GPUBATCH_NARROW_DEVICES=0 */
        return 0;
    if (k == 1)
        c->devices = (backend_devices){.all = 0, .count = 1, .list = {0}};
    char link_text[64] = "not known";
    if (link > 0)
        snprintf(link_text, sizeof link_text, "%.3g GB/s", link / 1e9);
    if (bytes < 0)
        msg_info("driver: --device all starts at most 1 device (CUDA_VISIBLE_DEVICES=%s): the "
                 "input's size is not known", cu_narrowed_value());
    else
        msg_info("driver: --device all starts at most %d device%s (CUDA_VISIBLE_DEVICES=%s): "
                 "%.2f GB of input that devices can share, each further device's start about %.2f s, "
                 "a device taking "
                 "%.3g GB/s (PCIe link %s), the host handing over %.3g GB/s",
                 k, k > 1 ? "s" : "", cu_narrowed_value(), bytes / 1e9,
                 COST_START_EACH_SECONDS, rate / 1e9, link_text, COST_HOST_BYTES_PER_S / 1e9);
    return 1;
}

/* Narrows the devices the driver starts to those of the options, or with
 * --device all to those the input pays for (see options.h). */
void cli_narrow_devices(cli_common *c, char *const *paths, int n)
{
    if (cli_plan_all(c, paths, n))
        return;
    if (backend_narrow_devices(c->backend, &c->devices))
        msg_info("driver: starting only the devices of --device (CUDA_VISIBLE_DEVICES=%s)",
                 cu_narrowed_value());
}

/* -v: the open devices, and when they opened (seconds after the process
 * started). */
static void cli_report_devices(const backend *be, double open_at)
{
    for (int i = 0; i < backend_gpu_count(be); i++) {
        const gpu_device_info *di = gpu_info(backend_gpu_at(be, i));
        msg_info("backend cuda: device %d, %s", di->ordinal, di->name);
    }
    msg_info("backend cuda: devices open %.3f s after the process started", open_at);
}

/* Waits for cuda's first device (see options.h). */
int cli_backend_first(backend *be)
{
    if (!backend_is_cuda(be) || !backend_beside(be))
        return cli_backend_ready(be);
    double waited = msg_elapsed();
    if (backend_wait_first(be) < 0)
        return msg_status(NULL, backend_status(be));
    int open = 0, total = backend_devices_known(be);
    for (int i = 0; i < total; i++)
        open += backend_device(be, i) != NULL;
    msg_info("backend cuda: %d of %d devices open %.3f s after the process started", open, total,
             msg_elapsed());
    double part[3], ms = backend_first_device_ms(be, part);
    msg_info("backend cuda: first device open %.0f ms after the start (driver and context %.0f "
             "ms, pinning %.0f ms, modules %.0f ms); the set-up waited for it from %.3f s on",
             ms, part[0], part[1], part[2], waited);
    return 0;
}

/* Waits for cuda's devices starting beside (see options.h). */
int cli_backend_ready(backend *be)
{
    if (!backend_is_cuda(be) || !backend_beside(be))
        return 0;
    double waited = msg_elapsed();
    if (backend_ready(be) < 0)
        return msg_status(NULL, backend_status(be));
    double part[3], ms = backend_gpu_start_ms(be, part);
    cli_report_devices(be, msg_elapsed() - (io_seconds() - backend_started_at(be)));
    msg_info("backend cuda: ready %.0f ms after the start (driver and contexts %.0f ms, pinning "
             "%.0f ms, modules %.0f ms); the set-up waited for it from %.3f s on",
             ms, part[0], part[1], part[2], waited);
    return 0;
}

/* Opens the backend and reports the choice. */
int cli_open_backend(const cli_common *c, backend *be, double cpu_seconds)
{
    backend_kind kind = c->backend;
    int start_anyway = cli_gpu_start_mode("always") || cli_gpu_start_mode("wait");
    int no_start = kind == BACKEND_AUTO && !start_anyway && cpu_seconds >= 0 &&
                   cpu_seconds < COST_GPU_START_SECONDS;
    int rc = kind == BACKEND_CUDA
                 ? backend_open_beside(be, &c->devices, c->threads)
                 : backend_open(be, no_start ? BACKEND_CPU : kind, &c->devices, c->threads);
    if (rc < 0)
        return msg_status(NULL, backend_status(be));
    cli_report_fallback(be, backend_fallback(be));
    if (backend_is_cuda(be) && !backend_beside(be))
        cli_report_devices(be, msg_elapsed());
    if (backend_is_cuda(be) && backend_beside(be))
        msg_info("backend cuda: the CUDA devices starting beside the input's set-up (%.3f s "
                 "after the process started)",
                 msg_elapsed());
    else if (backend_beside(be))
        msg_info("backend auto: %d CPU threads now, the CUDA devices starting beside them "
                 "(%.3f s after the process started)",
                 backend_threads(be), msg_elapsed());
    else if (no_start)
        msg_info("backend auto: %d CPU threads; about %.3f s of work for them, too little to "
                 "start the GPU",
                 backend_threads(be), cpu_seconds);
    else if (!backend_is_cuda(be))
        msg_info("backend cpu: %d threads, %s", backend_threads(be), simd_name(simd_variant()));
    return 0;
}

/* Reports auto's fall back to the CPU: where no NVIDIA driver is installed
 * (a CPU node) only with -v, any other failure of the GPU as a warning. */
void cli_report_fallback(const backend *be, const char *why)
{
    if (!why)
        return;
    if (backend_fallback_code(be) == GPU_ERR_NO_DRIVER)
        msg_info("%s; using the CPU backend", why);
    else
        msg_warn("%s; using the CPU backend", why);
}

/* Warns of a failed start that no chunk noticed, then closes; waits for
 * the start first when GPUBATCH_GPU_START=wait (so that the warning does
 * not depend on timing). */
void cli_close_backend(backend *be)
{
    if (cli_gpu_start_mode("wait"))
        backend_settle(be);
    cli_report_fallback(be, backend_fallback(be));
    backend_close(be);
}

/* Opens the backend and the run (see options.h). */
int cli_run_open(cli_run *cr, const cli_common *c, double cpu_seconds)
{
    run_plan plan = {.chunk = c->chunk, .chunk_given = c->chunk_given, .streams = c->streams,
                     .streams_given = c->streams_given};
    io_status st;
    if (run_plan_check(&plan, &st))
        return msg_status(NULL, &st);
    cr->opened = 1;
    if (!(cr->be = backend_new()))
        return msg_error("out of memory"), 1;
    if (cli_open_backend(c, cr->be, cpu_seconds))
        return 1;
    if (run_open(&cr->run, cr->be, &plan) < 0)
        return msg_error("out of memory"), 1;
    return 0;
}

/* The one cleanup path of a command's run (see options.h). */
void cli_run_close(cli_run *cr)
{
    if (!cr->opened)
        return;
    if (!cr->be)
        return;
    backend_leave(cr->be); /* nothing runs on the devices after this */
    run_close(cr->run);
    cr->run = NULL;
    cli_close_backend(cr->be);
    backend_free(cr->be);
    cr->be = NULL;
}

/* Opens the input's frame (see options.h). */
int cli_frame(io_reader *r, const cli_common *c, frame_info *fi, const char *name)
{
    io_status st;
    if (frame_open(r, c->dtype, c->dtype_big_endian, c->shape, c->ndim, fi, &st) == 0)
        return 0;
    return msg_status(name, &st);
}

/* Waits for cuda's devices (run_msgs.ready). */
static int cli_sink_ready(backend *be, int first)
{
    return first ? cli_backend_first(be) : cli_backend_ready(be);
}

/* Passes a run's -v line on (run_msgs.info). */
static void cli_sink_info(const char *line)
{
    msg_info("%s", line);
}

/* Passes a run's warning on (run_msgs.warn). */
static void cli_sink_warn(const char *line)
{
    msg_warn("%s", line);
}

/* Passes a run's error on (run_msgs.error). */
static void cli_sink_error(const char *name, const io_status *st)
{
    msg_status(name, st);
}

/* A run's sink (see options.h). */
run_sink cli_sink(gz_writer_piece_write write, void *ctx)
{
    static run_msgs msgs = {.ready = cli_sink_ready, .fallback = cli_report_fallback,
                            .info = cli_sink_info, .warn = cli_sink_warn,
                            .error = cli_sink_error, .progress_begin = progress_begin,
                            .progress = progress_update, .progress_end = progress_end};
    msgs.started = io_seconds() - msg_elapsed();
    return (run_sink){.write = write, .ctx = ctx, .msgs = &msgs};
}
