/* job.h - the one way a streamed command runs: its backend, then for each
 * input the host buffers, the rings over the input (io/pipeline.h), the
 * scheduler (runtime/sched.h) and the checks at its end, and one cleanup
 * path. A command only plans (job_input) and prints its results. */
#ifndef GPUBATCH_CLI_JOB_H
#define GPUBATCH_CLI_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "io/frame.h"
#include "io/gzwrite.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "options.h"
#include "runtime/backend.h"
#include "runtime/sched.h"

/* What a run keeps from one input to the next: the backend, the host
 * buffers (grown, never shrunk) and the scheduler over them. Zero it
 * before job_open. */
typedef struct {
    backend be;
    int opened;       /* job_open ran: job_close closes the backend */
    sched *h;         /* the scheduler of the buffers' chunk, once open */
    void **bufs;      /* nbufs host buffers of the chunk (and its planes) */
    int nbufs;        /* host buffers */
    int nslots;       /* chunks in flight: more than nbufs where the GPU copies them */
    size_t chunk;     /* the buffers' chunk bytes, all planes together (0: none yet) */
    void *plane_bufs[3][BACKEND_MAX_SLOTS]; /* job_input.planes: each plane's part of them */
} job;

/* One input's run as its command planned it. */
typedef struct {
    const char *name;            /* the input, in messages */
    io_reader *r;                /* the input (its reports, a member run on a device first) */
    io_reader *const *planes;    /* NULL, or the readers of three planes (a, b, c: a
                                    quadratic's coefficients) read at once, each into its third
                                    of every buffer, their chunks taken in step */
    const frame_info *fi;
    size_t chunk;                /* a chunk's bytes (of each plane) */
    uint64_t limit;              /* the data bytes to read (of each plane) */
    const void *prefix;          /* bytes before the input's rest (frame_info's), or NULL */
    size_t prefix_len;
    int host;                    /* chunks decoded on the host always (pl_open) */
    int member;                  /* a gzip member whose data run on a device first
                                    (stream_device_member): whole grain bytes at a time */
    size_t grain;
    sched_run_spec spec;         /* the scheduler's run (capacity 0: the buffers' chunk;
                                    nslots and member are the job's; a reused scheduler takes
                                    only cpu_ns) */
    sched_hooks hooks;           /* stream_hooks() */
    int level;                   /* results compressed on the devices at level (0: not) ... */
    const gz_writer *gz;         /* ... from this writer's position */
    int (*check)(void *ctx, uint64_t bytes); /* after a run that read `bytes` data bytes: 0, or
                                    1 after printing why they are wrong (optional) */
    void *ctx;                   /* check's */
} job_input;

/* Opens the job's backend (cli_open_backend) and sizes its buffers as
 * cli_slots and stream_slots give them (a command may set nbufs and nslots
 * otherwise before its first job_run). 0, or 1 after printing an error. */
int job_open(job *j, const cli_common *c, double cpu_seconds);

/* Opens input r's frame (frame_open with --dtype and --shape) into fi; 0,
 * or 1 after printing an error prefixed with name. */
int job_frame(io_reader *r, const cli_common *c, frame_info *fi, const char *name);

/* Runs one input: buffers for its chunk (a larger one closes the
 * scheduler), its rings, the scheduler (opened once, with cuda once the
 * devices are ready; the rings fill meanwhile), a gzip member's data on a
 * device first, the run with progress and -v reports, then the check and
 * the trailing-garbage warning. *bytes gets the data bytes seen. 0, or 1
 * after printing an error. */
int job_run(job *j, const job_input *in, uint64_t *bytes);

/* Leaves the devices to the exit, frees the buffers and the scheduler and
 * closes the backend; accepts a zeroed job. */
void job_close(job *j);

#endif
