/* sched.h - which lane runs each chunk of a streamed run, and the loop that
 * feeds the lanes and hands their results back in input order.
 *
 * Lanes: the CPU, and each CUDA device, each with an engine of the run's
 * operation (runtime/engine.h). With --backend cpu every chunk goes to the
 * CPU; with cuda each device's engine opens as soon as that device is
 * handed out (backend_device) and the devices take chunks in turn. With
 * auto the chunks run on the CPU while the devices start beside it
 * (runtime/backend.h), and on the devices from the first chunk after they
 * are ready (with per_device, each device from the first chunk after it
 * opens, as with cuda); a compressed chunk (pl_gz_chunk) that the CPU takes is decoded
 * on the host first. Results come back in input order and every engine
 * gives the same bits, so nothing depends on which lane took a chunk.
 *
 * The scheduler prints nothing: it reports through the hooks its caller
 * hands it, and a failure comes back as a negative code (io/status.h) with
 * one line in sched_error(), both in sched_status().
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
#include "runtime/gzip/gzstream.h"
#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "transpose.h"

/* What the caller does for the scheduler: wait for the devices, report,
 * and write results. */
typedef struct {
    void *ctx; /* passed to write_out */
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
    /* Writes results as a span compressed on the device or plain bytes, with ctx: a slot's,
       a copy's chunks, a staged matrix's pieces; 0, or nonzero once the caller has reported
       the failure. NULL: results are not written (a reduction folds them as it collects). */
    gz_writer_piece_write write_out;
    double started; /* io_seconds() when the process started, for -v's times */
} sched_hooks;

/* A run: its operation and buffers, and the CPU's estimated cost. A run
 * without ops stages one matrix whole (whole) or, with neither, copies its
 * chunks to hooks->write_out unchanged. */
typedef struct {
    const engine_ops *ops;
    const tp_job *whole;       /* without ops: the matrix transposed whole on one lane
                                  (sched_run) */
    void *op;                  /* the operation's context, shared by every engine */
    int nslots;                /* chunks in flight */
    size_t capacity;           /* a chunk's data bytes at most */
    int compressed;            /* chunks come as blocked gzip members (device inflate) */
    int results;               /* where the devices may take chunks, their slots' host result
                                  buffers (engine_open's results) are made now, their pages
                                  touched while the devices start (each slot pins its own when
                                  its first chunk comes) */
    double cpu_ns;             /* one core's nanoseconds per data byte on the CPU (0: none):
                                  with auto the CPU then takes chunks only while their
                                  estimated work fits in half the devices' usual start, the
                                  next waiting for the start (up to 3 of those) */
    double start_seconds;      /* the devices' usual start */
    int per_device;            /* an engine per device (on a backend of that device alone), each
                                  taking chunks as soon as its device is open (cuda, and auto
                                  where its devices start beside the CPU); else one engine over
                                  every device, opened once all are */
    int member;                /* a gzip member may run on a device first (sched_run_member):
                                  its pinned staging buffer is made now, while the devices
                                  start */
} sched_run_spec;

typedef struct sched sched;

/* Opens the engine of the first lane (the CPU with auto; with cuda the
 * first device's, once hooks->ready says it is open). With auto and
 * GPUBATCH_GPU_READY_AFTER=N in the environment, the first N chunks go to
 * the CPU and the next waits for the devices' start (a gate for tests:
 * chunks on both lanes whatever the timing). 0, or a negative code in
 * *st with its line (empty: hooks->ready has reported it) and *out NULL. */
int sched_open(sched **out, backend *be, const sched_run_spec *spec, const sched_hooks *hooks,
               io_status *st);

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
    /* The next chunk (1), the end (0) or a failure (a negative code, filled in *st with its
       line), as pl_next does (NULL: pl_next of ring 0). */
    int (*next)(void *ctx, pl_chunk *c, io_status *st);
    void *ctx;
    /* Called as soon as a device could inflate a gzip member
       (sched_run_member), while the chunks run, with the input bytes that the
       chunks taken so far were read from and the data bytes they hold, and
       again after each chunk while it returns 0 (not decided yet) rather
       than 1 (NULL: not needed). */
    int (*member_gpu_ready)(void *ctx, uint64_t raw_seen, uint64_t data_seen);
    void *member_gpu_ctx;
    int stage_kept; /* spec.whole: the staged matrix that this input's last call left open
                       goes on (the rest of a member after the device), not a new one */
    int machine;  /* out: the failure was not the input's but the machine's (the staged
                     matrix could not be opened) */
} sched_input;

/* Runs the input's chunks through the scheduler's one loop until the
 * input's end or the first failure. The loop's case is the run's: with
 * ops, each chunk goes to the lane that takes it (its buffer given back as
 * soon as that lane has copied it, with one ring) and the results are
 * passed to hooks->write_out in input order; with spec.whole, the input's
 * staged matrix is opened first on one lane (the devices' if ready now, or
 * once their start is over for a matrix of COST_WHOLE_GPU_BYTES
 * (runtime/cost.h) or more; else the CPU's), the chunks are gathered into
 * it and each matrix is written out once whole; with neither, the chunks
 * are written as they come (a copy). *bytes_in gets the data bytes seen.
 * 0; 1 when a write hook failed; or a negative code with one line in
 * sched_error() (the chunks before a failure are written first), in->machine
 * set where the staged matrix could not be opened. */
int sched_run(sched *h, sched_input *in, uint64_t *bytes_in);

/* A plain gzip member of a regular file or a pipe whose data run on a device
 * (sched_run_member): from its start, or from where its reader paused
 * (io_reader_pause), the host having run the data before; its decoded bytes
 * after `skip` (a header), at most `limit` of them (UINT64_MAX: to its end),
 * cut into chunks of whole `grain` bytes (at most SCHED_MEMBER_KEEP). */
typedef struct {
    uint64_t skip;   /* in; out: what is left of it (the device stopped first) */
    uint64_t limit;
    size_t grain;
    uint64_t first;  /* data bytes the host ran before the pause (a multiple of grain) */
    const void *head; /* the data bytes after those that the host decoded (fewer than grain) */
    size_t head_len;
    void *tail;      /* host memory for the bytes after the last whole grain (grain bytes; past
                        the limit, the first of those after it) */
    int stage_kept;  /* spec.whole: the host's part of the member opened the staged matrix */
    int ran;         /* out: the device ran the member's start */
    uint64_t data;   /* out: the data bytes run (after first) */
    size_t tail_len; /* out: the bytes in tail */
    uint64_t data_start; /* out: the decoded offset of the data's first byte */
    const gzstream_point *stop; /* out, after a run that succeeded: where the device stopped,
                                   where the host goes on (after `skip` more bytes) */
    gzstream_stats st; /* out: what the device's batches took, for -v */
} sched_member;

/* The most bytes sched_run_member carries from one batch to the next: a
 * partial grain (a row, or a reduction's tile of 16384 elements of up to
 * 8 bytes, whose sums must not depend on where batches end). */
#define SCHED_MEMBER_KEEP ((size_t)128 << 10)

/* Where input r is a plain gzip member of a regular file or a pipe and a device
 * takes chunks (with cuda the first open device; with auto its device once
 * its start is over, waited for), inflates it there, from its start or from
 * where r paused (then m->head first), batch after batch
 * (runtime/gzip/gzstream.h), the batches the feed of the same loop as
 * sched_run's, its chunks on that device's engine, each batch's before the
 * next is inflated, until the device stops (at the member's end, where the
 * host must go on, or at the limit); then m->tail holds the decoded bytes
 * after the last whole grain and m->stop where the host goes on.
 * m->ran says whether it ran (0: no device to be had, said through
 * hooks->info prefixed with name; r is as it was). 0; 1 when a write hook
 * failed; or a negative code with one line in sched_error(). */
int sched_run_member(sched *h, io_reader *r, sched_member *m, const char *name);

/* One line explaining the last failure. */
const char *sched_error(const sched *h);

/* The last failure as a value: the code a call returned and its line (valid
 * until the next call on h). */
const io_status *sched_status(const sched *h);

/* -v through hooks->info: how many chunks each lane took, and when the
 * first and the last chunk were done and what the loop waited for. */
void sched_report(const sched *h, const char *name);

/* Closes every engine; accepts NULL. Every slot must be idle. */
void sched_close(sched *h);

#endif
