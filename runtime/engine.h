/* engine.h - the one lifecycle every streamed operation runs its chunks
 * through, on the CPU or on CUDA devices.
 *
 * An engine has nslots slots, one per chunk in flight. On CUDA a slot owns a
 * stream on its device (backend_slot_gpu), a device input buffer (or, for
 * compressed chunks, the device inflate's buffers: runtime/gzip/block_inflate.h), a
 * device result buffer, a pinned host result buffer and, once
 * engine_compress() turns it on, the device deflate of its results
 * (runtime/gzip/block_deflate.h). A chunk goes: its input staged on the device
 * (copied, or inflated there) -> the operation's kernels -> its results
 * compressed on the device or copied back -> collected, in input order, by
 * the caller. On the CPU the operation's function runs over the chunk's
 * units of work on every core (io/par.h), within engine_submit.
 *
 * An operation supplies only what is its own, in an engine_ops table: its
 * buffer sizes, its kernels' launch, its CPU function and, where collecting
 * means more than handing back the result bytes, its collect (reduce folds
 * partials into its state). Errors are negative gpu_error codes, kept with
 * their line in engine_status(). */
#ifndef GPUBATCH_RUNTIME_ENGINE_H
#define GPUBATCH_RUNTIME_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"
#include "runtime/gzip/block_deflate.h"
#include "runtime/gzip/block_inflate.h"

struct backend;
typedef struct engine engine;

/* A lane of a CUDA device: a stream, the device inflate of the compressed
 * input it stages, the device deflate of the results it sends out, and the
 * pinned host buffer those results land in. An engine slot runs on one; a
 * matrix staged whole (runtime/transpose.c) streams its pieces out through
 * two. */
typedef struct {
    gpu *g;
    gpu_queue q;
    block_inflate_slot z; /* device inflate of compressed input */
    block_deflate_slot c; /* device deflate of the results (engine_compress) */
    void *host;           /* the results on the host (pinned with CUDA) */
} engine_lane;

/* Opens lane l on device g (kept in l->g): its stream and, for
 * inflate_capacity > 0, the device inflate's buffers for chunks of that
 * many bytes. 0, or a negative gpu_error with its text in g. */
int engine_lane_open(engine_lane *l, gpu *g, size_t inflate_capacity);

/* Frees what a lane of be holds (opened or not; its host buffer only with
 * own_host). */
void engine_lane_close(engine_lane *l, struct backend *be, int own_host);

/* One chunk as the operation's hooks see it. */
typedef struct {
    void *op;             /* the operation's context (engine_open's op) */
    void *state;          /* the slot's own state (engine_ops.slot_state bytes) */
    gpu *g;               /* CUDA: the slot's device, current on this thread */
    CUstream stream;      /* CUDA: the slot's stream */
    CUdeviceptr in;       /* CUDA: the chunk's input on the device */
    CUdeviceptr out;      /* CUDA: the slot's device result buffer */
    const void *host_in;  /* CPU: the chunk's input */
    void *host_out;       /* the slot's host result buffer */
    size_t bytes;         /* the chunk's input data bytes */
    size_t capacity;      /* a chunk's input bytes at most (engine_open) */
    uint64_t offset;      /* stream offset of its first data byte */
    char *kernels;        /* CUDA: the launch writes the names of the kernels it queued here
                             (ENGINE_KERNELS_LEN bytes), for messages */
} engine_chunk;

#define ENGINE_KERNELS_LEN 96

/* What an operation supplies; hooks marked optional may be NULL. */
typedef struct engine_ops {
    const char *name;       /* in "queueing a NAME chunk" */
    const char *in_what;    /* the device input buffer, in out-of-memory messages */
    const char *out_what;   /* the device result buffer, likewise */
    size_t in_slack;        /* the kernels may read this far past the input: the device input
                               buffer is that much longer, zeroed once */
    int lazy;               /* slots after the first are made when their first chunk comes (the
                               first chunks run meanwhile) */
    int deflate;            /* the results may be compressed on the device (engine_compress),
                               where they are one block */
    size_t slot_state;      /* bytes of the operation's own state per slot (zeroed) */
    /* Bytes of a slot's result buffer for chunks of `capacity` input bytes. */
    size_t (*out_bytes)(const void *op, size_t capacity);
    /* How many blocks a plain chunk's input is (each of `bytes`, capacity / *in apart) and
       its results (each of result_bytes / *out, out_bytes / *out apart) (optional: one of
       each). */
    void (*planes)(const void *op, int *in, int *out);
    /* Result bytes of a chunk of `bytes` input bytes, moved by the engine; 0 where the launch
       queues its own copies back (optional: 0). */
    size_t (*result_bytes)(const void *op, size_t bytes);
    /* CUDA: prepares a slot's state on device g (loads its kernels); 0 or a negative gpu_error
       with the text in g (optional). */
    int (*slot_open)(void *op, gpu *g, void *state);
    /* CUDA: queues the chunk's kernels on c->stream; 0 or a negative gpu_error with the text
       in c->g. */
    int (*launch)(engine_chunk *c);
    /* The units of CPU work (rows, tiles) in a chunk of `bytes` input bytes. */
    size_t (*units)(const void *op, size_t bytes);
    /* CPU: does units [u0, u1) of the chunk on the calling thread, each unit's results
       written only by it. */
    void (*cpu)(const engine_chunk *c, size_t u0, size_t u1);
    /* Refuses a chunk the operation cannot take (0, or negative with its line in *st)
       (optional). */
    int (*check)(const void *op, size_t bytes, io_status *st);
    /* After the chunk's work is done: what collecting it means beyond handing back its
       result (reduce folds its partials); 0 or a negative error, filled in *st (optional). */
    int (*collect)(const engine_chunk *c, io_status *st);
} engine_ops;

/* Prepares nslots slots on be for chunks of at most capacity input bytes of
 * the operation ops with context op (kept by pointer, shared by every
 * engine of a run). compressed: chunks come as blocked gzip members
 * (their device buffers made now; a plain chunk's when it first comes).
 * results: NULL, or nslots host result buffers of engine_result_bytes()
 * from backend_host_unpinned(be), whose pages were touched while the
 * devices started: the slots pin and use them (the caller frees them after
 * engine_close). With ops->lazy, slots after the first are made when their
 * first chunk comes. 0, or a negative gpu_error with the reason in be->st.text. */
int engine_open(engine **out, struct backend *be, const engine_ops *ops, void *op, int nslots,
                size_t capacity, int compressed, void *const *results);

/* Frees every slot; accepts NULL. Every slot must be idle. */
void engine_close(engine *e);

/* Bytes of one slot's host result buffer for chunks of capacity input
 * bytes, on a CUDA device (cuda: room for them compressed too where the
 * operation deflates) or the CPU. */
size_t engine_result_bytes(int cuda, const engine_ops *ops, const void *op, size_t capacity);

/* Starts a chunk of `bytes` data bytes at stream offset `offset` on a slot,
 * its results at output stream position out_at (where they are compressed
 * on the device, engine_compress; else unused):
 * host (a buffer from backend_host_alloc, untouched until engine_copied or
 * engine_collect returns) holds the data, or with gz (CUDA only) the
 * chunk's compressed members, inflated on the device (gz must stay valid
 * until the collect). Asynchronous on CUDA; on the CPU the work is done
 * when it returns. 0, or a negative gpu_error; a chunk refused (beyond the
 * capacity, or by ops->check) leaves the slot no chunk to collect. */
int engine_submit(engine *e, int slot, const void *host, const pl_gz_chunk *gz, size_t bytes,
                  uint64_t offset, uint64_t out_at);

/* Like engine_submit, for a chunk whose data lies in device memory of the
 * slot's device already (decoded there, runtime/gzip/gzstream.h), left untouched
 * until engine_collect returns. CUDA only. */
int engine_submit_device(engine *e, int slot, CUdeviceptr data, size_t bytes, uint64_t offset,
                         uint64_t out_at);

/* Waits until a slot's chunk no longer needs its host buffer: on CUDA,
 * until its copies to the device are done; on the CPU at once. It may run
 * on another thread than the engine's other calls, between the slot's
 * submit and its collect. 0, or a negative error filled in *st. */
int engine_copied(engine *e, int slot, io_status *st);

/* Waits for a slot's chunk and collects it (engine_ops.collect); *out and
 * *bytes get its results on the host (those of result_bytes), valid until
 * the slot is submitted again. 0, or a negative error. */
int engine_collect(engine *e, int slot, const void **out, size_t *bytes);

/* Compresses the results on the device from the next chunk on, as blocked
 * gzip at level (each chunk's at the output position engine_submit gives):
 * on CUDA, for an operation that deflates, at the levels the device
 * does (block_deflate_level) and where the devices write into the pinned host
 * buffers (block_deflate_host_mapped). 1 when on, 0 when it does not apply, or a
 * negative gpu_error. */
int engine_compress(engine *e, int level);

/* After engine_collect: 1 with the slot's results as a span of blocked gzip
 * (valid until the slot is submitted again), 0 when they are plain. */
int engine_span(const engine *e, int slot, const gz_writer_span **span);

/* The backend the engine runs on. */
struct backend *engine_backend(const engine *e);

/* The last failure: the code a call returned and its line. */
const io_status *engine_status(const engine *e);

#endif
