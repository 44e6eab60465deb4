/* options.h - option values shared by the commands, and their parsers.
 *
 * Every command that streams an array takes the same input and backend
 * options; CLI_COMMON_LONGOPTS lists them for getopt_long and
 * cli_common_option() handles one of them. */
#ifndef GPUBATCH_CLI_OPTIONS_H
#define GPUBATCH_CLI_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "io/dtype.h"
#include "io/npy.h"
#include "io/reader.h"
#include "runtime/backend.h"
#include "runtime/cost.h"
#include "runtime/run.h"

#define CLI_DEFAULT_CHUNK ((size_t)32 << 20)
#define CLI_DEFAULT_STREAMS 4
#define CLI_CHUNK_ALIGN RUN_CHUNK_ALIGN /* --chunk is rounded up to whole chunks */
#define CLI_MAX_CHUNK ((size_t)1 << 40)     /* --chunk above 1 TiB is a usage error */

typedef struct {
    backend_kind backend;
    backend_devices devices; /* --device: one ordinal (default 0), a list, or all */
    int threads;        /* 0: one per core */
    size_t chunk;       /* bytes per pipeline buffer */
    int chunk_given;    /* --chunk was on the command line */
    int streams;        /* buffers (and CUDA streams) in flight, per device */
    int streams_given;  /* --streams was on the command line */
    dt_type dtype;      /* raw input */
    int dtype_big_endian; /* raw input is big-endian (--dtype '>f4') */
    int ndim;           /* raw --shape, -1 when absent */
    uint64_t shape[NPY_MAX_DIMS];
    int force;
    int backend_given;  /* --backend was on the command line */
    int verbosity_given; /* 'q' or 'v' when -q or -v was given (they exclude each other) */
    const char *index;  /* --index IDX, or NULL */
    int no_index;       /* --no-index */
} cli_common;

enum {
    OPT_BACKEND = 1000,
    OPT_DEVICE,
    OPT_CHUNK,
    OPT_STREAMS,
    OPT_DTYPE,
    OPT_SHAPE,
    OPT_HELP,
    OPT_VERSION,
    OPT_INDEX,
    OPT_NO_INDEX,
    OPT_FIRST_COMMAND_OPTION = 1100,
};

#define CLI_COMMON_LONGOPTS                                             \
    {"backend", required_argument, 0, OPT_BACKEND},                     \
        {"device", required_argument, 0, OPT_DEVICE},                   \
        {"threads", required_argument, 0, 'p'},                         \
        {"chunk", required_argument, 0, OPT_CHUNK},                     \
        {"streams", required_argument, 0, OPT_STREAMS},                 \
        {"dtype", required_argument, 0, OPT_DTYPE},                     \
        {"shape", required_argument, 0, OPT_SHAPE},                     \
        {"index", required_argument, 0, OPT_INDEX},                     \
        {"no-index", no_argument, 0, OPT_NO_INDEX},                     \
        {"quiet", no_argument, 0, 'q'}, {"verbose", no_argument, 0, 'v'}, \
        {"help", no_argument, 0, OPT_HELP}, {"version", no_argument, 0, OPT_VERSION}

/* Short options every streaming command accepts; the leading ':' has
 * getopt_long tell a missing argument (':') from an unknown option ('?'). */
#define CLI_COMMON_SHORTOPTS ":p:qvh"

/* Help text for the common options. */
#define CLI_COMMON_HELP                                                                  \
    "Input:\n"                                                                           \
    "  --dtype TYPE       element type of raw input: float32 float64 int8 int16 int32\n"  \
    "                     int64 uint8 uint16 uint32 uint64 float16 bfloat16 bool, or\n"  \
    "                     an .npy code: '>f4' is big-endian (.npy input is detected)\n"  \
    "  --shape DIMS       shape of raw input, e.g. 1000x3 (default: 1-D)\n"              \
    "  --index IDX        read one gzip FILE from the seek index IDX (gpubatch index);\n" \
    "                     without it FILE.gzidx beside a gzip FILE is used\n"          \
    "  --no-index         use no seek index found beside a FILE\n"                      \
    "Execution:\n"                                                                       \
    "  --backend KIND     auto (default: CUDA if usable, else CPU), cuda (alias gpu),\n" \
    "                     cpu; default $GPUBATCH_BACKEND, else auto\n"                   \
    "  --device LIST      CUDA device ordinal (default 0), a list like 0,2, or all:\n"  \
    "                     chunks go round the devices, with the same results\n"          \
    "  -p, --threads N    CPU threads (default: one per core)\n"                         \
    "  --chunk SIZE       bytes per pipeline buffer, e.g. 64M (default 32M)\n"           \
    "  --streams N        buffers in flight per device, each with its CUDA stream\n"     \
    "                     (default 4; reduce's devices share them)\n"                    \
    "  -q, --quiet        no warnings, no progress line\n"                               \
    "  -v, --verbose      report backend, timings and rates on stderr\n"                 \
    "  -h, --help         this help\n"

/* Sets the defaults. */
void cli_common_init(cli_common *c);

/* Handles a common option; returns 1 when handled, 0 when opt is not a
 * common one, -1 after printing a usage error. */
int cli_common_option(cli_common *c, int opt, const char *arg);

/* After the options: takes the backend from GPUBATCH_BACKEND unless
 * --backend was given. Returns 0, or 2 after printing a usage error (a
 * value the variable may not have). */
int cli_common_finish(cli_common *c);

/* Handles -q and -v (for commands without the other common options); 1
 * when handled, 0 when opt is neither, -1 after printing a usage error
 * (both given). */
int cli_verbosity_option(cli_common *c, int opt);

/* Prints the usage error for what getopt_long returned as opt ('?': an
 * unknown, ambiguous or misused option; ':': a missing argument), in one
 * line naming the option, with the nearest long option for an unknown
 * one when it is close; argv, shortopts and longopts are the parse's.
 * Returns 2. */
int cli_option_error(int opt, char *const *argv, const char *shortopts,
                     const struct option *longopts);

/* Prints the version and license, as `gpubatch --version`; returns the
 * exit status. */
int cli_version(void);

/* Parses an unsigned integer of 64 bits in base (as strtoull: 0 also takes
 * 0x hexadecimal and 0 octal); -1 when s is not one or does not fit. */
int cli_parse_u64(const char *s, int base, uint64_t *out);

/* Parses "64M", "1G", "4096", "512k" (binary units); -1 on error. */
int cli_parse_size(const char *s, size_t *out);

/* Parses a non-negative integer that fits in an int; -1 on error. */
int cli_parse_int(const char *s, int *out);

/* Parses "3x4", "3,4" or "5" into dims; returns ndim or -1. */
int cli_parse_shape(const char *s, uint64_t *dims, int maxdims);

/* Estimated seconds the CPU backend takes for the files in paths (with
 * auto; -1 for other backends), on the option's thread count: ns_plain
 * (ns_gzip) nanoseconds of one core per byte of an uncompressed (gzip)
 * file (an upper bound, with the larger cost, when that is already under
 * COST_GPU_START_SECONDS); -1 when an input is standard input or not a
 * regular file (its size is unknown). */
double cli_cpu_seconds(const cli_common *c, char *const *paths, int n, double ns_plain,
                       double ns_gzip);

/* The same for an input already open. */
double cli_reader_cpu_seconds(const cli_common *c, const io_reader *r, double ns_plain,
                              double ns_gzip);

/* Makes the devices the options name the only ones the driver starts
 * (backend_narrow_devices), saying so with -v; with --device all, the
 * first of them that the n input files named in paths pay for
 * (runtime/cost.h; one where a size is not known), c->devices then
 * listing device 0 alone where that is one. Call once the options are
 * parsed, before any thread starts. */
void cli_narrow_devices(cli_common *c, char *const *paths, int n);

/* Opens the backend the options ask for; reports the CPU fallback of
 * auto (cli_report_fallback). auto starts the GPU only for an estimated cpu_seconds (< 0:
 * unknown) of COST_GPU_START_SECONDS or more, unless GPUBATCH_GPU_START is
 * "always" or "wait"; cuda starts its devices beside the caller
 * (cli_backend_ready()). Returns 0, or 1 after printing an error. */
int cli_open_backend(const cli_common *c, backend *be, double cpu_seconds);

/* With cuda, whose devices start beside the input's set-up
 * (backend_open_beside): waits for them, then reports them (-v). Call it
 * before the first device work, after making the host buffers and
 * starting the reads that can go on meanwhile. 0, or 1 after printing the
 * error that kept the devices from opening. */
int cli_backend_ready(backend *be);

/* Like cli_backend_ready(), for a caller that drives each device on its
 * own (backend_device): waits only for the first device to open, and
 * reports the devices open by then (-v). 0, or 1 after printing the error
 * that kept every device from opening. */
int cli_backend_first(backend *be);

/* Reports why (backend_fallback()'s answer; nothing when NULL): only with
 * -v where no NVIDIA driver is installed, which is normal on a CPU node;
 * as a warning for any other failure of the GPU. */
void cli_report_fallback(const backend *be, const char *why);

/* Reports a failed start that no chunk noticed (auto), then closes be. */
void cli_close_backend(backend *be);

/* A command's run: its backend and the run over it (runtime/run.h).
 * Zero it before cli_run_open. */
typedef struct {
    backend *be; /* backend_new's */
    run *run;
    int opened; /* cli_run_open ran: cli_run_close closes the backend */
} cli_run;

/* Opens the backend (cli_open_backend) and the run over it, sized by the
 * options, once the runtime found their buffers fit in memory
 * (run_plan_check). 0, or 1 after printing an error. */
int cli_run_open(cli_run *cr, const cli_common *c, double cpu_seconds);

/* Leaves the devices to the exit, closes the run and then the backend
 * (cli_close_backend); accepts a zeroed cli_run. */
void cli_run_close(cli_run *cr);

/* Opens input r's frame (frame_open with --dtype and --shape) into fi; 0,
 * or 1 after printing an error prefixed with name. */
int cli_frame(io_reader *r, const cli_common *c, frame_info *fi, const char *name);

/* The sink of a run whose results write takes with ctx (NULL: none), its
 * messages through msg and the progress line, the devices awaited as
 * cli_backend_ready()/cli_backend_first() do. */
run_sink cli_sink(gz_writer_piece_write write, void *ctx);

/* Names the running command ("reduce") for usage errors. */
void cli_set_command(const char *name);

/* Prints a usage error with a pointer to --help; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
