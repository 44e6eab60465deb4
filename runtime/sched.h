/* sched.h - which lane runs each chunk of a streamed run, and the loop that
 * feeds the lanes and hands their results back in input order.
 *
 * Lanes: the CPU, and each CUDA device, each with an engine of the run's
 * operation (runtime/engine.h). With --backend cpu every chunk goes to the
 * CPU; with cuda each device's engine opens as soon as that device is
 * handed out (backend_device) and the devices take chunks in turn. With
 * auto the chunks run on the CPU while the devices start beside it
 * (runtime/backend.h), and on the devices from the first chunk after they
 * are ready; a compressed chunk (pl_gz_chunk) that the CPU takes is decoded
 * on the host first. Results come back in input order and every engine
 * gives the same bits, so nothing depends on which lane took a chunk.
 *
 * The scheduler prints nothing: it reports through the hooks its caller
 * hands it, and a failure comes back as a negative code with one line in
 * sched_error().
 *
 * Threading: one thread of its own, started by the first GPU chunk, waits
 * for GPU chunks' copies in turn and gives their buffers back to the
 * reader. A failed copy's buffer goes back all the same (the reader never
 * waits for it), and the next call returns its error. */
#ifndef GPUBATCH_RUNTIME_SCHED_H
#define GPUBATCH_RUNTIME_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "engine.h"
#include "gzstream.h"
#include "io/pipeline.h"

/* What the caller does for the scheduler: wait for the devices, report,
 * and write results. */
typedef struct {
    void *ctx; /* passed to write */
    /* Waits for cuda's devices: for one at least (first) or all of them; 0, or 1 once the
       caller has reported why they are not to be had. */
    int (*ready)(backend *be, int first);
    /* auto: reports why the devices will not be used (its start failed). */
    void (*fallback)(const backend *be, const char *why);
    /* A line for -v, and a warning. */
    void (*info)(const char *line);
    void (*warn)(const char *line);
    /* The input's raw position after a chunk, for a progress display (optional). */
    void (*progress)(uint64_t raw_offset);
    /* Writes a collected slot's results (engine_span tells whether they are compressed);
       0, or nonzero once the caller has reported the failure. NULL: results are not
       written (a reduction folds them as it collects). */
    int (*write)(void *ctx, engine *e, int slot, const void *out, size_t bytes);
    double started; /* io_seconds() when the process started, for -v's times */
} sched_hooks;

/* A run: its operation and buffers, and the CPU's estimated cost. */
typedef struct {
    const engine_ops *ops;
    void *op;                  /* the operation's context, shared by every engine */
    int nslots;                /* chunks in flight */
    size_t capacity;           /* a chunk's data bytes at most */
    int compressed;            /* chunks come as blocked gzip members (device inflate) */
    void *const *results;      /* CUDA engines' host result buffers (engine_open), or NULL */
    double cpu_ns;             /* one core's nanoseconds per data byte on the CPU (0: none):
                                  with auto the CPU then takes chunks only while their
                                  estimated work fits in half the devices' usual start, the
                                  next waiting for the start (up to 3 of those) */
    double start_seconds;      /* the devices' usual start */
    int per_device;            /* with cuda, an engine per device (on a backend of that device
                                  alone), each taking chunks as soon as its device is open;
                                  else one engine over every device, opened once all are */
} sched_run_spec;

typedef struct sched sched;

/* Opens the engine of the first lane (the CPU with auto; with cuda the
 * first device's, once hooks->ready says it is open). With auto and
 * GPUBATCH_GPU_READY_AFTER=N in the environment, the first N chunks go to
 * the CPU and the next waits for the devices' start (a gate for tests:
 * chunks on both lanes whatever the timing). 0, or a negative code with
 * the reason in *err (NULL: hooks->ready has reported it) and *out NULL. */
int sched_open(sched **out, backend *be, const sched_run_spec *spec, const sched_hooks *hooks,
               char *err, size_t errlen);

/* Sets the CPU's estimated cost from the next chunk on (sched_run_spec.cpu_ns),
 * for a run whose inputs differ. */
void sched_cpu_cost(sched *h, double ns_per_byte);

/* Compresses results on the devices from the next chunk on (engine_compress)
 * as blocked gzip at level, the first result byte at output stream position
 * offset; engines opened later follow. 0, or a negative code (sched_error). */
int sched_compress(sched *h, int level, uint64_t offset);

/* The input of sched_run: ring 0 gives the chunks; with several rings
 * (planes of one input read at once) the others' chunks share its slots and
 * next takes one chunk of each. */
typedef struct {
    pl_ring *const *rings;
    int nrings;
    /* The next chunk (1), the end (0) or a failure (-1 with one line in err), as pl_next
       does (NULL: pl_next of ring 0). */
    int (*next)(void *ctx, pl_chunk *c, char *err, size_t errlen);
    void *ctx;
} sched_input;

/* Runs the input's chunks through the lanes until its end or the first
 * failure: each chunk to the lane that takes it (its buffer given back as
 * soon as that lane has copied it, with one ring), the results passed to
 * hooks->write in input order. *bytes_in gets the data bytes seen. 0; 1
 * when hooks->write failed; or a negative code with one line in
 * sched_error() (the chunks before a failure are written first). */
int sched_run(sched *h, const sched_input *in, uint64_t *bytes_in);

/* A gzip member inflated on a device (runtime/gzstream.h) as the input:
 * its decoded bytes after `skip` (a header), at most `limit` of them
 * (UINT64_MAX: to its end), cut into chunks of whole `grain` bytes. */
typedef struct {
    gzstream *z;
    uint64_t skip;   /* in; out: what is left of it (the device stopped first) */
    uint64_t limit;
    size_t grain;
    void *tail;      /* host memory for the bytes after the last whole grain (grain bytes; past
                        the limit, the first of those after it) */
    size_t tail_len; /* out: their count */
    uint64_t data;   /* out: the data bytes run */
} sched_stream;

/* The device that inflates a member for sched_run_stream: with cuda the
 * first open device; with auto, once its start is over (waited for), its
 * device where it has one; else NULL (the member is read on the host). */
gpu *sched_stream_gpu(sched *h);

/* Runs the chunks of in->z's member on the engine of sched_stream_gpu's
 * device, in order, each batch's before the next is inflated, until gzstream
 * stops (at the member's end, where the host must go on, or at the limit):
 * then in->tail holds the decoded bytes after the last whole grain, which
 * the host's reading goes on after. 0; 1 when hooks->write failed; or a
 * negative code with one line in sched_error(). */
int sched_run_stream(sched *h, sched_stream *in);

/* Work of at least this many bytes that one lane must do whole waits for
 * the GPU's start: a matrix of twice this size ended sooner on the GPU,
 * its start included, than on every core of the GPU nodes measured (the
 * 16384x16384 float32 transposes in BENCHMARKS.md). */
#define SCHED_WHOLE_GPU_BYTES ((uint64_t)512 << 20)

/* The backend for work of `bytes` bytes that one lane must do whole (a
 * single matrix staged on one device): the devices' if ready now, or once
 * their start is over for work of SCHED_WHOLE_GPU_BYTES or more; else the
 * CPU's. */
backend *sched_whole_backend(sched *h, uint64_t bytes);

/* The data of chunk c for the backend sched_whole_backend() gave: c's own
 * for the GPU or a plain chunk, else c decoded on the host (*gz set to
 * NULL). 0, or a negative code (sched_error). */
int sched_whole_data(sched *h, const pl_chunk *c, const void **data, const pl_gz_chunk **gz);

/* One line explaining the last failure. */
const char *sched_error(const sched *h);

/* -v through hooks->info: how many chunks each lane took, and when the
 * first and the last chunk were done and what the loop waited for. */
void sched_report(const sched *h, const char *name);

/* Closes every engine; accepts NULL. Every slot must be idle. */
void sched_close(sched *h);

#endif
