/* cmd_info.c - `gpubatch info`: what this machine offers gpubatch. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "options.h"
#include "runtime/backend.h"
#include "runtime/gpu.h"
#include "runtime/ptx_blobs.h"

static const char info_usage[] =
    "Usage: gpubatch info [--device N] [--no-jit]\n"
    "Print the NVIDIA driver version (and how its entry points were found), each\n"
    "CUDA device (name, compute capability, memory, multiprocessors), the embedded\n"
    "PTX modules (each with the PTX ISA version it declares and the oldest driver\n"
    "that loads it) and native code (the GPUs each module has a cubin for), which\n"
    "variant each device loads (native code for sm_XX, or the PTX for compute_XX\n"
    "through the JIT) with its load time, and the CPU backend.\n"
    "  --no-jit    list the variants without loading them\n"
    "  -h, --help  this help\n";

enum { OPT_NO_JIT = OPT_FIRST_COMMAND_OPTION };

/* "CUDA 11.0 (driver R450)" for a CUDA version the driver needs (0: unknown). */
static const char *info_need(int need, char *buf, size_t len)
{
    if (!need) {
        snprintf(buf, len, "a driver newer than gpubatch knows");
        return buf;
    }
    return cu_driver_text(need, buf, len);
}

/* Lists the embedded PTX with the ISA version each declares, then for each
 * module the GPUs its native code is for and the driver that loads all of it. */
static void info_blobs(void)
{
    char need[64];
    printf("embedded PTX:\n");
    for (int i = 0; ptx_blobs[i].module; i++) {
        int isa = ptx_blobs[i].isa;
        if (ptx_blobs[i].kind != PTX_BLOB_PTX)
            continue;
        printf("  %-12s compute_%d  PTX ISA %d.%d: %s or newer  %zu bytes\n",
               ptx_blobs[i].module, ptx_blobs[i].arch, isa / 10, isa % 10,
               info_need(cu_ptx_isa_driver(isa), need, sizeof need), ptx_blobs[i].size);
    }
    printf("embedded native code:\n");
    for (int i = 0, j; ptx_blobs[i].module; i = j) {
        char archs[256] = "";
        size_t bytes = 0, used = 0;
        int newest = 0, unknown = 0;
        for (j = i; ptx_blobs[j].module && !strcmp(ptx_blobs[j].module, ptx_blobs[i].module); j++) {
            if (ptx_blobs[j].kind != PTX_BLOB_SASS)
                continue;
            int n = cu_cubin_abi_driver(ptx_blobs[j].abi);
            unknown |= !n;
            newest = n > newest ? n : newest;
            bytes += ptx_blobs[j].size;
            if (used < sizeof archs)
                used += (size_t)snprintf(archs + used, sizeof archs - used, " sm_%d",
                                         ptx_blobs[j].arch);
        }
        if (bytes)
            printf("  %-12s%s: %s or newer  %zu bytes\n", ptx_blobs[i].module, archs,
                   info_need(unknown ? 0 : newest, need, sizeof need), bytes);
    }
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

/* Loads each module on one device and reports the variant and its time. */
static int info_modules(int ordinal, int jit)
{
    gpu *g;
    int rc = gpu_open(&g, ordinal);
    if (rc < 0) {
        printf("    cannot open: %s\n", cu_last_failure()[0] ? cu_last_failure() : gpu_strerror(rc));
        return 1;
    }
    int status = 0;
    for (int i = 0; ptx_blobs[i].module; i++) {
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
            printf("    %-12s no variant runs here: %s\n", m, gpu_error_text(g));
            continue;
        }
        if (!jit) {
            printf("    %-12s %s\n", m, info_variant(&st, variant, sizeof variant));
            continue;
        }
        rc = gpu_module(g, m, &mod, &ms);
        if (rc < 0) {
            printf("    %-12s %s FAILED: %s\n", m, info_variant(&st, variant, sizeof variant),
                   gpu_error_text(g));
            status = 1;
        } else {
            gpu_module_get_stats(g, m, &st);
            printf("    %-12s %s loaded in %.1f ms\n", m, info_variant(&st, variant, sizeof variant),
                   ms);
        }
    }
    gpu_close(g);
    return status;
}

/* Entry point of `gpubatch info`. */
int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, 0, OPT_DEVICE},
        {"no-jit", no_argument, 0, OPT_NO_JIT},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    static const char shortopts[] = ":h";
    int only = -1, jit = 1, opt;
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
    printf("gpubatch %s\n", GPUBATCH_VERSION);
    int status = 0;
    int n = gpu_device_count();
    if (n < 0) {
        printf("driver: not usable: %s\n", gpu_load_message());
    } else {
        int v = cu_driver_version();
        printf("driver: CUDA %d.%d (entry points: %s), %d device%s\n", v / 1000, v % 1000 / 10,
               cu_entry_point_source(), n, n == 1 ? "" : "s");
        for (int d = 0; d < n; d++) {
            if (only >= 0 && d != only)
                continue;
            gpu_device_info di;
            if (gpu_device_query(d, &di) < 0) {
                printf("device %d: query failed\n", d);
                status = 1;
                continue;
            }
            printf("device %d: %s, compute capability %d.%d, %.1f GiB, %d SMs, L2 %d KiB\n", d,
                   di.name, di.cc_major, di.cc_minor, di.total_mem / 1073741824.0, di.sm_count,
                   di.l2_bytes >> 10);
            status |= info_modules(d, jit);
        }
        if (only >= n) {
            msg_error("no CUDA device %d (this machine has %d)", only, n);
            status = 1;
        }
    }
    info_blobs();
    printf("cpu backend: available, %d cores\n", backend_cpu_count());
    return status;
}
