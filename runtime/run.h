/* run.h - the run as one object: a command hands it each framed input with
 * its operation and its sink, and the run does the rest.
 *
 * Inside: the host buffers (grown, never shrunk, kept from one input to the
 * next), the rings over the input (io/pipeline.h), the decision whether
 * gzip is inflated on a device, the scheduler (runtime/sched.h) and the
 * hand-over of a gzip member between the host and a device. The run prints
 * nothing: it reports through the sink's message hooks, and a failure
 * comes back as a nonzero return after the hooks have told it.
 *
 * Sizing: a run keeps --streams host buffers per device (in all where the
 * operation's devices share them), and twice as many chunks in flight
 * where a GPU may take chunks (the engine gives a GPU chunk's buffer back
 * once it is copied), the operation's properties deciding otherwise. */
#ifndef GPUBATCH_RUNTIME_RUN_H
#define GPUBATCH_RUNTIME_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "engine.h"
#include "io/frame.h"
#include "io/gzip/gz_writer.h"
#include "io/reader.h"
#include "io/status.h"
#include "transpose.h"

/* The default chunk when blocked gzip is inflated on the GPU: a chunk's
 * members are inflated one per GPU thread, so a larger chunk keeps more of
 * the GPU busy, while the read of the first chunk and the work on the
 * last, which nothing overlaps, grow with it (sizes raced in BENCHMARKS.md). */
#define RUN_DEVICE_INFLATE_CHUNK ((size_t)128 << 20)

/* The largest default chunk where only the host's cores run the input (no
 * GPU takes chunks), per thread (at least two threads' worth): on a few
 * cores the ring's buffers are then few pages, reused, instead of fresh
 * memory (each page zeroed on first touch) for every byte of a large
 * input; on many, chunks as large as usual keep every thread busy. A
 * chunk's bits do not depend on its size. */
#define RUN_HOST_CHUNK ((size_t)2 << 20)

/* The host buffers, without --streams or --chunk, where only the host's
 * cores inflate a single deflate stream: its decoder holds a few chunks of
 * its own ahead of the ring, so two buffers (one read into while the other
 * is worked on) keep the threads as busy as more, and each buffer more is
 * fresh memory faulted in at the start (a huge page's fault may stall for
 * milliseconds on a fragmented VM). */
#define RUN_HOST_INFLATE_STREAMS 2

/* The default chunk of a reduction where the CPU reads a plain file in
 * place (no buffer holds a chunk): each chunk costs every thread a start
 * and a wait, and the host a fold of its parts (sizes raced in
 * BENCHMARKS.md). */
#define RUN_VIEW_CHUNK ((size_t)256 << 20)

/* A view's data must start at a multiple of this many bytes of the file
 * (the alignment the operations' CPU code may assume of a buffer). */
#define RUN_VIEW_ALIGN 64

/* Chunks are whole multiples of this: a whole number of tiles of any type. */
#define RUN_CHUNK_ALIGN ((size_t)128 << 10)

/* How a command wants its runs sized (its options). */
typedef struct {
    size_t chunk;       /* --chunk: a chunk's bytes */
    int chunk_given;    /* --chunk was given (else device inflate's default applies) */
    int streams;        /* --streams: host buffers per device */
    int streams_given;  /* --streams was given (else the operation's default may apply) */
} run_plan;

/* What a command does for the run: wait for the devices, and report. One
 * table for the process. */
typedef struct {
    /* Waits for cuda's devices: for one at least (first) or all of them; 0, or 1 once the
       hook has reported why they are not to be had. */
    int (*ready)(backend *be, int first);
    /* auto: reports why the devices will not be used (its start failed). */
    void (*fallback)(const backend *be, const char *why);
    /* A line for -v, a warning, and an error: "NAME: TEXT", or the text alone where name
       is NULL (a failure of the machine, not of an input). */
    void (*info)(const char *line);
    void (*warn)(const char *line);
    void (*error)(const char *name, const io_status *st);
    /* The progress display of one input: its start (total: its size, or negative), the
       input's raw position after each chunk, its end. */
    void (*progress_begin)(const char *name, int64_t total);
    void (*progress)(uint64_t raw_offset);
    void (*progress_end)(void);
    double started; /* io_seconds() when the process started, for -v's times */
} run_msgs;

/* Where an input's results go. */
typedef struct {
    gz_writer_piece_write write;  /* results in input order (NULL: the operation folds them) */
    void *ctx;             /* write's */
    int level;             /* results compressed on the devices at level (0: not) ... */
    const gz_writer *gz;   /* ... from this writer's position */
    const run_msgs *msgs;
} run_sink;

/* The operation an input runs through, and what it asks of the run. An
 * operation without ops transposes one matrix whole (whole) or, with
 * neither, copies its chunks to the sink unchanged (decoded on the host). */
typedef struct {
    const engine_ops *ops;
    const tp_job *whole;
    void *ctx;              /* the operation's context, shared by every engine */
    size_t grain;           /* a gzip member's data may run on a device first, in whole
                               grains (a row, a tile); 0: never */
    double cpu_ns;          /* one core's nanoseconds per data byte on the CPU (0: none) */
    double cpu_ns_inflated; /* the same for data the host's threads have inflated already (a
                               gzip member's chunks while the devices start); 0: cpu_ns */
    int per_device;         /* an engine per device, each taking chunks once it opens */
    int results;            /* the devices' result buffers are made while they start */
    int shared_buffers;     /* every device works on the same --streams buffers */
    int inflate_streams;    /* host buffers per device when chunks are inflated on a device and
                               --streams was not given (0: --streams) */
    int slot_per_buffer;    /* one chunk in flight per host buffer */
    /* After a run that read `bytes` data bytes: 0, or nonzero once it has reported why
       they are wrong (optional). */
    int (*check)(void *ctx, uint64_t bytes);
    void *check_ctx;
} run_op;

/* One framed input. */
typedef struct {
    const char *name;         /* in messages */
    io_reader *r;
    io_reader *const *planes; /* NULL, or three readers of planes read at once, each into
                                 its third of every buffer, their chunks taken in step */
    const frame_info *fi;
    size_t chunk;             /* a chunk's bytes (of each plane) */
    uint64_t limit;           /* the data bytes to read (of each plane) */
    const void *prefix;       /* bytes before the input's rest (frame_info's), or NULL */
    size_t prefix_len;
    int part;                 /* r was positioned inside the data (a shard): read from there,
                                 never handed to a device as a whole member */
} run_source;

typedef struct run run;

/* Refuses a plan whose --streams buffers of a chunk the physical memory
 * cannot hold, before anything starts: 0, or IO_ERR_NOMEM with its line in
 * *st. run_input refuses likewise the buffers per device its first input
 * asks for. */
int run_plan_check(const run_plan *plan, io_status *st);

/* Opens a run over the open backend be (which it borrows: the caller
 * closes it after run_close) as plan sizes it. 0, or IO_ERR_NOMEM. */
int run_open(run **out, backend *be, const run_plan *plan);

/* The chunk size for input r (swap as frame_info.swap): --chunk, or
 * without it the larger default of device inflate where that applies. */
size_t run_chunk(run *rn, const io_reader *r, size_t swap);

/* run_chunk for an operation whose results do not depend on the chunk
 * size (reduce, quadratic): without --chunk, view_chunk (0: none) where the
 * CPU reads r in place (its data prefix_len bytes before r's position), at
 * most RUN_HOST_CHUNK per thread (at least two threads' worth)
 * where no GPU may take chunks (fewer fresh pages: on a 2-core VM, a
 * quadratic from a gzip member ran in a median 0.34 s with 4 MiB chunks
 * against 0.56 s with 32 MiB);
 * never more than the input's data_bytes (UINT64_MAX: unknown; a plain
 * file's size then bounds it, a gzip file's GZSTREAM_RATIO_MAX times its
 * size, deflate's largest expansion) rounded up to RUN_CHUNK_ALIGN: a small input's buffers stay small
 * (a huge page faulted in for a few bytes costs more than the run's work). */
size_t run_stream_chunk(run *rn, const io_reader *r, size_t swap, size_t prefix_len,
                        uint64_t data_bytes, size_t view_chunk);

/* Loads an embedded module on every device before the first chunk
 * (backend_want_module). */
void run_want_module(run *rn, const char *module);

/* The host buffers the run's chunks go through, as sized for its first
 * input (run_input), or 0 before it. */
int run_buffers(const run *rn);

/* Whether cuda's devices turned out not to be had: a command stops. */
int run_failed(const run *rn);

/* Runs one input through op into sink: buffers for its chunk (a larger
 * one closes the scheduler), its rings, the scheduler (opened once, with
 * cuda once the devices are ready; the rings fill meanwhile), a gzip
 * member's data on a device first where that pays, the run with progress
 * and -v reports, then op's check and the trailing-garbage warning.
 * *bytes gets the data bytes seen. 0, or 1 after the hooks reported the
 * error. */
int run_input(run *rn, const run_source *src, const run_op *op, const run_sink *sink,
              uint64_t *bytes);

/* Frees the buffers and the scheduler; accepts NULL. Call backend_leave
 * first where the process is about to exit. */
void run_close(run *rn);

#endif
