/* cmd_info.c - `gpubatch info`: what this machine offers gpubatch. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "format.h"
#include "msg.h"
#include "options.h"
#include "runtime/backend.h"
#include "runtime/gpu.h"
#include "runtime/ptx_blobs.h"

static const char info_usage[] =
    "Usage: gpubatch info [--device N] [--no-jit] [-v] [--json]\n"
    "Print the NVIDIA driver version (and how its entry points were found), each\n"
    "CUDA device (name, compute capability, memory, multiprocessors) with the\n"
    "variant of the kernels it loads (native code for sm_XX, or the PTX for\n"
    "compute_XX through the JIT) and their load time, one line on the embedded\n"
    "kernels (PTX and native code, and the oldest drivers that load them), and\n"
    "the CPU backend.\n"
    "  --no-jit        name the variants without loading them\n"
    "  -v, --verbose   every kernel module: the embedded PTX (with the PTX ISA\n"
    "                  version each declares and the oldest driver that loads it),\n"
    "                  the native code (the GPUs each module has a cubin for), and\n"
    "                  each device's variant and load time of each\n"
    "  --json          everything -v lists, as one JSON object, for scripts\n"
    "  -h, --help      this help\n";

enum { OPT_NO_JIT = OPT_FIRST_COMMAND_OPTION, OPT_JSON };

/* "CUDA 11.0 (driver R450)" for a CUDA version the driver needs (0: unknown). */
static const char *info_need(int need, char *buf, size_t len)
{
    if (!need) {
        snprintf(buf, len, "a driver newer than gpubatch knows");
        return buf;
    }
    return cu_driver_text(need, buf, len);
}

/* One module's embedded native code: the GPUs it is for (" sm_75 sm_80 ..."),
 * its bytes and the CUDA version that loads all of it (0: unknown). */
typedef struct {
    char archs[256];
    size_t bytes;
    int need;
} info_native;

/* Sums up the cubins of the module whose first entry is ptx_blobs[i];
 * returns the index past its entries. */
static int info_native_of(int i, info_native *n)
{
    int j, unknown = 0;
    size_t used = 0;
    memset(n, 0, sizeof *n);
    for (j = i; ptx_blobs[j].module && !strcmp(ptx_blobs[j].module, ptx_blobs[i].module); j++) {
        if (ptx_blobs[j].kind != PTX_BLOB_SASS)
            continue;
        int need = cu_cubin_abi_driver(ptx_blobs[j].abi);
        unknown |= !need;
        n->need = need > n->need ? need : n->need;
        n->bytes += ptx_blobs[j].size;
        if (used < sizeof n->archs)
            used += (size_t)snprintf(n->archs + used, sizeof n->archs - used, " sm_%d",
                                     ptx_blobs[j].arch);
    }
    if (unknown)
        n->need = 0;
    return j;
}

/* Widths of the columns of info's tables: module names, the drivers that
 * PTX and native code need, their byte counts and the native GPU lists. */
typedef struct {
    int module, ptx_need, ptx_bytes, native_archs, native_need, native_bytes;
} info_widths;

/* Measures every column over the embedded modules. */
static void info_measure(info_widths *w)
{
    char need[64], num[32];
    memset(w, 0, sizeof *w);
    for (int i = 0; ptx_blobs[i].module; i++) {
        int n = (int)strlen(ptx_blobs[i].module);
        w->module = n > w->module ? n : w->module;
        if (ptx_blobs[i].kind != PTX_BLOB_PTX)
            continue;
        n = (int)strlen(info_need(cu_ptx_isa_driver(ptx_blobs[i].isa), need, sizeof need));
        w->ptx_need = n > w->ptx_need ? n : w->ptx_need;
        n = snprintf(num, sizeof num, "%zu", ptx_blobs[i].size);
        w->ptx_bytes = n > w->ptx_bytes ? n : w->ptx_bytes;
    }
    for (int i = 0; ptx_blobs[i].module;) {
        info_native nat;
        i = info_native_of(i, &nat);
        if (!nat.bytes)
            continue;
        int n = (int)strlen(nat.archs);
        w->native_archs = n > w->native_archs ? n : w->native_archs;
        n = (int)strlen(info_need(nat.need, need, sizeof need));
        w->native_need = n > w->native_need ? n : w->native_need;
        n = snprintf(num, sizeof num, "%zu", nat.bytes);
        w->native_bytes = n > w->native_bytes ? n : w->native_bytes;
    }
}

/* Writes a CUDA version as a JSON number, or null when it is unknown (0). */
static void info_json_version(int v)
{
    if (v)
        printf("%d", v);
    else
        fputs("null", stdout);
}

/* Lists the embedded PTX with the ISA version each declares, then for each
 * module the GPUs its native code is for and the driver that loads all of
 * it: aligned columns, or JSON arrays "ptx" and "native". */
static void info_blobs(const info_widths *w, int json)
{
    char need[64];
    printf(json ? ", \"ptx\": [" : "embedded PTX:\n");
    for (int i = 0, first = 1; ptx_blobs[i].module; i++) {
        int isa = ptx_blobs[i].isa, n = cu_ptx_isa_driver(isa);
        if (ptx_blobs[i].kind != PTX_BLOB_PTX)
            continue;
        info_need(n, need, sizeof need);
        if (json) {
            printf("%s{\"module\": \"%s\", \"arch\": \"compute_%d\", \"isa\": \"%d.%d\", "
                   "\"needs\": \"%s\", \"needs_cuda_version\": ",
                   first ? "" : ", ", ptx_blobs[i].module, ptx_blobs[i].arch, isa / 10, isa % 10,
                   need);
            info_json_version(n);
            printf(", \"bytes\": %zu}", ptx_blobs[i].size);
            first = 0;
        } else {
            printf("  %-*s  compute_%d  PTX ISA %d.%d: %-*s or newer  %*zu bytes\n", w->module,
                   ptx_blobs[i].module, ptx_blobs[i].arch, isa / 10, isa % 10, w->ptx_need, need,
                   w->ptx_bytes, ptx_blobs[i].size);
        }
    }
    printf(json ? "], \"native\": [" : "embedded native code:\n");
    for (int i = 0, first = 1; ptx_blobs[i].module;) {
        const char *m = ptx_blobs[i].module;
        info_native nat;
        i = info_native_of(i, &nat);
        if (!nat.bytes)
            continue;
        info_need(nat.need, need, sizeof need);
        if (json) {
            printf("%s{\"module\": \"%s\", \"archs\": [", first ? "" : ", ", m);
            for (const char *a = strstr(nat.archs, "sm_"); a; a = strstr(a + 1, "sm_"))
                printf("%s\"%.*s\"", a == strstr(nat.archs, "sm_") ? "" : ", ",
                       (int)strcspn(a, " "), a);
            printf("], \"needs\": \"%s\", \"needs_cuda_version\": ", need);
            info_json_version(nat.need);
            printf(", \"bytes\": %zu}", nat.bytes);
            first = 0;
        } else {
            char archs[sizeof nat.archs + 1];
            snprintf(archs, sizeof archs, "%s:", nat.archs);
            printf("  %-*s %-*s %-*s or newer  %*zu bytes\n", w->module, m, w->native_archs + 1,
                   archs, w->native_need, need, w->native_bytes, nat.bytes);
        }
    }
    if (json)
        putchar(']');
}

/* The embedded kernels in one line: how many modules, the PTX's virtual
 * architectures and the native code's GPUs, each with the oldest driver
 * that loads all of it. */
static void info_blobs_summary(void)
{
    char ptx[128] = "", sass[256] = "", need[64];
    int modules = 0, ptx_need = 0, sass_need = 0, ptx_unknown = 0, sass_unknown = 0;
    for (int i = 0; ptx_blobs[i].module; i++) {
        char arch[24];
        modules += i == 0 || strcmp(ptx_blobs[i].module, ptx_blobs[i - 1].module);
        int pt = ptx_blobs[i].kind == PTX_BLOB_PTX;
        int n = pt ? cu_ptx_isa_driver(ptx_blobs[i].isa) : cu_cubin_abi_driver(ptx_blobs[i].abi);
        char *list = pt ? ptx : sass;
        size_t len = pt ? sizeof ptx : sizeof sass;
        snprintf(arch, sizeof arch, " %s_%d", pt ? "compute" : "sm", ptx_blobs[i].arch);
        if (!strstr(list, arch) || strstr(list, arch)[strlen(arch)] > ' ')
            snprintf(list + strlen(list), len - strlen(list), "%s", arch);
        *(pt ? &ptx_unknown : &sass_unknown) |= !n;
        int *most = pt ? &ptx_need : &sass_need;
        *most = n > *most ? n : *most;
    }
    printf("kernels: %d modules embedded: PTX for%s (%s or newer)", modules, ptx,
           info_need(ptx_unknown ? 0 : ptx_need, need, sizeof need));
    if (sass[0])
        printf(", native code for%s (%s or newer)", sass,
               info_need(sass_unknown ? 0 : sass_need, need, sizeof need));
    printf("; info -v lists them\n");
}

/* How a module loads or loaded: "sm_90 native code", "compute_75 PTX (JIT)",
 * with the cubin the driver refused, or before loading what is tried first. */
static const char *info_variant(const gpu_module_stats *st, char *buf, size_t len)
{
    if (st->native && (st->loaded || !st->ptx))
        snprintf(buf, len, "sm_%d native code", st->native);
    else if (st->native)
        snprintf(buf, len, "sm_%d native code (else compute_%d PTX, JIT)", st->native, st->ptx);
    else if (st->refused)
        snprintf(buf, len, "compute_%d PTX (JIT; the driver refused sm_%d: %s)", st->ptx,
                 st->refused, cu_result_text(st->refused_result));
    else
        snprintf(buf, len, "compute_%d PTX (JIT)", st->ptx);
    return buf;
}

/* Writes s as a JSON string, or null for NULL. */
static void info_json_text(const char *s)
{
    if (s)
        fmt_json_string(stdout, s);
    else
        fputs("null", stdout);
}

/* A device's modules in one line (info without -v): how many load as each
 * variant, and the first failure. */
typedef struct {
    char variant[2][256]; /* the first two variants met */
    int count[2];
    int other;            /* modules of any further variant */
    int failed, none;     /* modules that failed to load, or have no variant here */
    int loaded;
    double ms;            /* their load times, summed */
    char first_error[512];
} info_summary;

/* Adds one module's outcome to a device's summary. */
static void info_summary_add(info_summary *s, const char *m, const char *variant,
                             const char *state, double ms, const char *error)
{
    if (error && !s->first_error[0])
        snprintf(s->first_error, sizeof s->first_error, "%s: %s", m, error);
    if (!variant) {
        s->none++;
        return;
    }
    if (error) {
        s->failed++;
        return;
    }
    if (!strcmp(state, "loaded")) {
        s->loaded++;
        s->ms += ms;
    }
    for (int k = 0; k < 2; k++) {
        if (!s->count[k])
            snprintf(s->variant[k], sizeof s->variant[k], "%s", variant);
        if (!strcmp(s->variant[k], variant)) {
            s->count[k]++;
            return;
        }
    }
    s->other++;
}

/* Ends a device's line with its summary: "; kernels: 62 sm_90 native code,
 * loaded in 12.3 ms", the counts of failures and the first one's text. */
static void info_summary_print(const info_summary *s)
{
    fputs("; kernels:", stdout);
    const char *sep = " ";
    for (int k = 0; k < 2 && s->count[k]; k++, sep = ", ")
        printf("%s%d %s", sep, s->count[k], s->variant[k]);
    if (s->other)
        printf("%s%d of other variants", sep, s->other), sep = ", ";
    if (s->loaded)
        printf(", loaded in %.1f ms", s->ms);
    else if (s->count[0] && !s->failed && !s->none)
        fputs(", not loaded", stdout);
    if (s->failed)
        printf("%s%d FAILED", sep, s->failed), sep = ", ";
    if (s->none)
        printf("%s%d with no variant that runs here", sep, s->none);
    if (s->first_error[0])
        printf(" (first: %s)", s->first_error);
    putchar('\n');
}

/* Reports one module of a device: a text line, a JSON object, or (sum not
 * NULL) its part of the device's summary. */
static void info_module_line(const info_widths *w, int json, int first, const char *m,
                             const char *variant, const char *state, double ms,
                             const char *error, info_summary *sum)
{
    if (sum) {
        info_summary_add(sum, m, variant, state, ms, error);
    } else if (json) {
        printf("%s{\"module\": \"%s\", \"variant\": ", first ? "" : ", ", m);
        info_json_text(variant);
        printf(", \"state\": \"%s\"", state);
        if (!strcmp(state, "loaded"))
            printf(", \"load_ms\": %.3f", ms);
        fputs(", \"error\": ", stdout);
        info_json_text(error);
        putchar('}');
    } else if (!variant) {
        printf("    %-*s  no variant runs here: %s\n", w->module, m, error);
    } else if (error) {
        printf("    %-*s  %s FAILED: %s\n", w->module, m, variant, error);
    } else if (!strcmp(state, "loaded")) {
        printf("    %-*s  %s loaded in %.1f ms\n", w->module, m, variant, ms);
    } else {
        printf("    %-*s  %s\n", w->module, m, variant);
    }
}

/* Loads each module on one device and reports the variant and its time
 * (state "loaded", "failed", "none": no variant runs here, or "not loaded"
 * with --no-jit): a line each with -v, else the end of the device's line. */
static int info_modules(const info_widths *w, int ordinal, int jit, int json, int verbose)
{
    gpu *g;
    info_summary summary, *sum = json || verbose ? NULL : &summary;
    int rc = gpu_open(&g, ordinal);
    if (rc < 0) {
        const char *why = cu_last_failure()[0] ? cu_last_failure() : gpu_strerror(rc);
        if (json) {
            fputs("\"modules\": [], \"error\": ", stdout);
            info_json_text(why);
        } else {
            printf(sum ? "; cannot open: %s\n" : "    cannot open: %s\n", why);
        }
        return 1;
    }
    memset(&summary, 0, sizeof summary);
    int status = 0;
    if (json)
        fputs("\"modules\": [", stdout);
    for (int i = 0, first = 1; ptx_blobs[i].module; i++) {
        if (i > 0 && !strcmp(ptx_blobs[i].module, ptx_blobs[i - 1].module))
            continue;
        const char *m = ptx_blobs[i].module;
        gpu_module_stats st;
        char variant[256];
        CUmodule mod;
        double ms = 0;
        gpu_module_get_stats(g, m, &st);
        if (!st.native && !st.ptx) {
            /* Nothing to load: gpu_module only says why (device or driver). */
            gpu_module(g, m, &mod, NULL);
            info_module_line(w, json, first, m, NULL, "none", 0, gpu_status(g)->text, sum);
        } else if (!jit) {
            info_module_line(w, json, first, m, info_variant(&st, variant, sizeof variant),
                             "not loaded", 0, NULL, sum);
        } else if (gpu_module(g, m, &mod, &ms) < 0) {
            info_module_line(w, json, first, m, info_variant(&st, variant, sizeof variant),
                             "failed", 0, gpu_status(g)->text, sum);
            status = 1;
        } else {
            gpu_module_get_stats(g, m, &st);
            info_module_line(w, json, first, m, info_variant(&st, variant, sizeof variant),
                             "loaded", ms, NULL, sum);
        }
        first = 0;
    }
    if (json)
        putchar(']');
    if (sum)
        info_summary_print(sum);
    gpu_close(g);
    return status;
}

/* Reports the driver and each device (or device `only`): text lines, or the
 * JSON members "driver" and "devices". Returns the exit status so far. */
static int info_devices(const info_widths *w, int only, int jit, int json, int verbose)
{
    int status = 0;
    int n = gpu_device_count();
    if (n < 0) {
        if (json) {
            fputs(", \"driver\": {\"usable\": false, \"error\": ", stdout);
            info_json_text(gpu_load_message());
            fputs("}, \"devices\": []", stdout);
        } else {
            printf("driver: not usable: %s\n", gpu_load_message());
        }
        return 0;
    }
    int v = cu_driver_version();
    if (json)
        printf(", \"driver\": {\"usable\": true, \"cuda\": \"%d.%d\", \"cuda_version\": %d, "
               "\"entry_points\": \"%s\", \"device_count\": %d}, \"devices\": [",
               v / 1000, v % 1000 / 10, v, cu_entry_point_source(), n);
    else
        printf("driver: CUDA %d.%d (entry points: %s), %d device%s\n", v / 1000, v % 1000 / 10,
               cu_entry_point_source(), n, n == 1 ? "" : "s");
    for (int d = 0, first = 1; d < n; d++) {
        if (only >= 0 && d != only)
            continue;
        gpu_device_info di;
        if (gpu_device_query(d, &di) < 0) {
            if (json)
                printf("%s{\"ordinal\": %d, \"error\": \"query failed\"}", first ? "" : ", ", d);
            else
                printf("device %d: query failed\n", d);
            status = 1;
            first = 0;
            continue;
        }
        if (json) {
            printf("%s{\"ordinal\": %d, \"name\": ", first ? "" : ", ", d);
            info_json_text(di.name);
            printf(", \"compute_capability\": \"%d.%d\", \"memory_bytes\": %zu, "
                   "\"multiprocessors\": %d, \"l2_bytes\": %d, ",
                   di.cc_major, di.cc_minor, di.total_mem, di.sm_count, di.l2_bytes);
        } else {
            printf("device %d: %s, compute capability %d.%d, %.1f GiB, %d SMs, L2 %d KiB%s", d,
                   di.name, di.cc_major, di.cc_minor, di.total_mem / 1073741824.0, di.sm_count,
                   di.l2_bytes >> 10, verbose ? "\n" : "");
        }
        status |= info_modules(w, d, jit, json, verbose);
        if (json)
            putchar('}');
        first = 0;
    }
    if (json)
        putchar(']');
    if (only >= n) {
        msg_error("no CUDA device %d (this machine has %d)", only, n);
        status = 1;
    }
    return status;
}

/* Entry point of `gpubatch info`. */
int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, 0, OPT_DEVICE},
        {"no-jit", no_argument, 0, OPT_NO_JIT},
        {"json", no_argument, 0, OPT_JSON},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    static const char shortopts[] = ":hv";
    int only = -1, jit = 1, json = 0, verbose = 0, opt;
    cli_set_command("info");
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_DEVICE:
            if (cli_parse_int(optarg, &only) < 0)
                return cli_usage_error("info", "bad --device '%s'", optarg);
            break;
        case OPT_NO_JIT:
            jit = 0;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case 'v':
            verbose = 1;
            break;
        case 'h':
        case OPT_HELP:
            fputs(info_usage, stdout);
            return 0;
        case OPT_VERSION:
            return cli_version();
        default:
            return cli_option_error(opt, argv, shortopts, longopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("info", "unexpected argument '%s' (info takes no FILE)",
                               argv[optind]);
    info_widths w;
    info_measure(&w);
    if (json)
        printf("{\"version\": \"%s\"", GPUBATCH_VERSION);
    else
        printf("gpubatch %s\n", GPUBATCH_VERSION);
    int status = info_devices(&w, only, jit, json, verbose);
    if (json || verbose)
        info_blobs(&w, json);
    else
        info_blobs_summary();
    if (json)
        printf(", \"cpu\": {\"available\": true, \"cores\": %d}}\n", backend_cpu_count());
    else
        printf("cpu backend: available, %d cores\n", backend_cpu_count());
    return msg_flush_stdout() | status;
}
