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
    "that loads it) and which variant each device loads (with its load/JIT time),\n"
    "and the CPU backend.\n"
    "  --no-jit    list the variants without loading them\n"
    "  -h, --help  this help\n";

enum { OPT_NO_JIT = OPT_FIRST_COMMAND_OPTION };

/* Lists the embedded PTX blobs with the ISA version each declares. */
static void info_blobs(void)
{
    printf("embedded PTX:\n");
    for (int i = 0; ptx_blobs[i].module; i++) {
        int isa = ptx_blobs[i].isa, need = cu_ptx_isa_driver(isa);
        char need_text[64] = "a driver newer than gpubatch knows";
        if (need)
            cu_driver_text(need, need_text, sizeof need_text);
        printf("  %-12s compute_%d  PTX ISA %d.%d: %s or newer  %zu bytes\n",
               ptx_blobs[i].module, ptx_blobs[i].arch, isa / 10, isa % 10, need_text,
               (size_t)(ptx_blob_ends[i] - ptx_blobs[i].data - 1));
    }
}

/* Loads each module on one device and reports variant and time. */
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
        int arch = gpu_module_arch(g, m);
        CUmodule mod;
        double ms = 0;
        if (!arch) {
            /* Nothing to load: gpu_module only says why (device or driver). */
            gpu_module(g, m, &mod, NULL);
            printf("    %-12s no variant runs here: %s\n", m, gpu_error_text(g));
            continue;
        }
        if (!jit) {
            printf("    %-12s \n", m);
            continue;
        }
        rc = gpu_module(g, m, &mod, &ms);
        if (rc < 0) {
            printf("    %-12s compute_%d FAILED: %s\n", m, arch, gpu_error_text(g));
            status = 1;
        } else {
            printf("    %-12s compute_%d loaded in %.1f ms\n", m, arch, ms);
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
        {0, 0, 0, 0},
    };
    int only = -1, jit = 1, opt;
    cli_set_command("info");
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        default:
            return cli_usage_error("info", "unknown option");
        }
    }
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
