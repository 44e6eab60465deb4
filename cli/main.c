/* main.c - command dispatch, --version and the top-level help. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "io/sink.h"
#include "msg.h"
#include "options.h"
#include "runtime/backend.h"
#include "runtime/cu.h"
#include "runtime/detach.h"

static const char main_usage[] =
    "Usage: gpubatch COMMAND [OPTIONS] [FILE...]\n"
    "GPU batch processing of binary arrays (.npy, .npz or raw, gzip or not).\n"
    "\n"
    "Commands:\n"
    "  reduce     sum, mean, min, max, argmin, argmax, sumsq, count of arrays\n"
    "  quadratic  accurate roots of every row (a, b, c) of a coefficient array\n"
    "  transpose  transpose a matrix, or every matrix of a batch\n"
    "  gen        deterministic synthetic arrays and quadratic coefficients\n"
    "  info       driver, devices, embedded kernels and the CPU backend\n"
    "  bench      the articles' kernel ladders beside ours, timed and checked\n"
    "  merge      combine the outputs of --shard runs into the whole result\n"
    "  index      write a seek index of a gzip file, for --index and --shard\n"
    "\n"
    "Run 'gpubatch COMMAND --help' for a command's options.\n"
    "Options: -h/--help, --version\n";

/* Runs the command named by argv[1]. */
int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {
        {"reduce", cmd_reduce},
        {"quadratic", cmd_quadratic},
        {"transpose", cmd_transpose},
        {"gen", cmd_gen},
        {"info", cmd_info},
        {"bench", cmd_bench},
        {"merge", cmd_merge},
        {"index", cmd_index},
    };
    msg_start_clock();
    cu_set_defaults(); /* before any thread */
    /* Buffers of a few MiB are made and freed at every chunk of a gzip
       stream: freed memory is kept for the next ones rather than given back
       to the kernel, whose fresh pages would be faulted in and zeroed again
       (a tenth of a one-thread inflate's time). 32 MiB is the most glibc
       takes; larger buffers are mapped as before. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    if (argc < 2) {
        fputs(main_usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(main_usage, stdout);
        return msg_flush_stdout();
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
        return cli_version();
    opterr = 0; /* cli_option_error() says what went wrong, in one line */
    io_sink_install_signal_cleanup();
    msg_guard_views();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            int status = commands[i].run(argc - 1, argv + 1);
            if (msg_flush_stdout() && status == 0)
                status = 1;
            if (status == 0)
                msg_info("done %.3f s after the process started", msg_elapsed());
            const char *detach = getenv("GPUBATCH_DETACH");
            if (!backend_start_left_running() && cu_driver_version() != 0 &&
                getenv("CUDA_INJECTION64_PATH") == NULL && !(detach && !strcmp(detach, "0"))) {
                /* the devices' release need not hold up whoever waits for us
                 * (a run that never opened the driver has nothing to leave);
                 * a CUDA tool injected (compute-sanitizer) reports at exit */
                if (fflush(NULL) != 0 && status == 0)
                    status = 1;
                detach_exit(status, DETACH_DRIVER_FILES); /* returns where it cannot */
            }
            if (backend_start_abandoned()) {
                /* devices left open (no helper took them), or the GPU's start
                 * still inside the driver: exit's clean-up (the driver's own
                 * among it) must not race them */
                if (fflush(NULL) != 0 && status == 0)
                    status = 1;
                _exit(status);
            }
            return status;
        }
    fprintf(stderr, "gpubatch: unknown command '%s'\n%s", cmd, main_usage);
    return 2;
}
