/* hybrid.h - which side runs each chunk of a streamed command: the CPU or
 * the GPU.
 *
 * With --backend cuda or cpu every chunk goes to that backend's engine. With
 * auto the chunks run on the CPU (on every core, one at a time) while the
 * CUDA devices start beside it (runtime/backend.h), and on the GPU from the
 * first chunk after they are ready; a compressed chunk (pl_gz_chunk) that
 * the CPU takes is decoded on the host first. Results are collected in input
 * order by the caller and every engine gives the same bits, so nothing
 * depends on which side took a chunk.
 *
 * Threading: hy owns one thread, started by the first hy_release_buffer(),
 * which waits for GPU chunks' copies in turn and gives their buffers back.
 * Failure policy: a failed copy's buffer goes back all the same (the reader
 * never waits for it), and the next hy_release_buffer() or hy_collect()
 * returns its error. */
#ifndef GPUBATCH_CLI_HYBRID_H
#define GPUBATCH_CLI_HYBRID_H

#include <stddef.h>
#include <stdint.h>

#include "io/pipeline.h"
#include "output.h"
#include "runtime/backend.h"

/* A command's engine as the dispatcher drives it, each call with the
 * command's ctx. open makes one of nslots slots on backend be (0, or
 * negative with the reason in be->err); submit starts a chunk (`bytes`
 * data bytes from stream offset `offset` on) on a slot;
 * collect waits for a slot's result bytes (none for a reduction); error
 * explains the last failure; write (NULL: out_write) writes a result;
 * copied (NULL: not supported) waits until a GPU slot's chunk is copied to
 * the device, so that its host buffer may be reused before the collect; it
 * runs on a thread of its own, between the slot's submit and its collect,
 * and puts the reason of a failure in err. */
typedef struct {
    int (*open)(void *ctx, backend *be, int nslots, void **engine);
    void (*close)(void *engine);
    int (*submit)(void *ctx, void *engine, int slot, const void *data, const pl_gz_chunk *gz,
                  size_t bytes, uint64_t offset);
    int (*collect)(void *ctx, void *engine, int slot, const void **out, size_t *bytes);
    const char *(*error)(const void *engine);
    int (*write)(void *ctx, void *engine, int slot, const void *out, size_t bytes,
                 out_stream *o);
    int (*copied)(void *ctx, void *engine, int slot, char *err, size_t errlen);
    int per_device; /* with cuda, open an engine per device (on a backend of that device
                       alone), each taking chunks as soon as its device is open: the
                       engine runs every slot on its one device */
} hy_ops;

typedef struct hy hy;

/* Opens the engine of the backend's first side (the CPU with auto) for
 * chunks of at most chunk_bytes data bytes; ctx is passed to ops->open.
 * With cuda it first waits for the devices (cli_backend_ready()). With auto
 * and GPUBATCH_GPU_READY_AFTER=N in the environment, the first N chunks go
 * to the CPU and the next waits for the devices' start (a gate for tests:
 * chunks on both sides whatever the timing). 0, or 1 after printing an
 * error. */
int hy_open(hy **out, backend *be, const hy_ops *ops, void *ctx, int nslots, size_t chunk_bytes);

/* Sets one core's nanoseconds per data byte of a chunk on the CPU (the
 * estimate that cli_cpu_seconds() takes; 0, the default: none). With auto,
 * the CPU then takes chunks only while their estimated work fits in half
 * the devices' usual start (CLI_GPU_START_SECONDS); the next chunk waits for
 * the start, up to a bound, and goes to the GPU. Where a chunk costs the CPU
 * many times what it costs the GPU (output compressed on the device), a CPU
 * chunk that ends after the GPU could have ended it holds back every chunk
 * after it, since results are written in order. */
void hy_set_cpu_cost(hy *h, double ns_per_byte);

/* Whether hy_submit() of a chunk of `bytes` data bytes would wait for the
 * devices' start (hy_set_cpu_cost): the caller writes out the CPU's results
 * first, so that their output is made while the start ends. */
int hy_cpu_waits(hy *h, size_t bytes);

/* Starts chunk c on the side that takes it. 0, or negative (hy_error()). */
int hy_submit(hy *h, const pl_chunk *c);

/* Gives the buffer of a submitted chunk back to ring pl once the side that
 * took it no longer reads it: where the GPU took it and its engine copies
 * its input (hy_ops.copied), a thread of hy's own gives it back when the
 * copies are done, without holding up the caller, so that the next chunks
 * go to the devices meanwhile (with several devices, their copies overlap);
 * else (the CPU) the buffer stays with the chunk. 0, or negative
 * (hy_error(): an earlier chunk's copy failed, or no thread). */
int hy_release_buffer(hy *h, pl_ring *pl, int slot);

/* Waits for a slot's chunk on the side that took it (and for its buffer to
 * have gone back, hy_release_buffer). 0, or negative. */
int hy_collect(hy *h, int slot, const void **out, size_t *bytes);

/* Writes a collected slot's result to o (ops->write, or out_write); 0 or
 * 1 after printing an error. */
int hy_write(hy *h, int slot, const void *out, size_t bytes, out_stream *o);

/* The engine that took slot's chunk. */
void *hy_slot_engine(const hy *h, int slot);

/* The engine hy_open opened, for what both sides' engines share (the
 * chunk size, the mode). */
void *hy_first_engine(const hy *h);

/* Work of at least this many bytes that one side must do whole waits for
 * the GPU's start: on the GPU nodes measured, a matrix of 1 GiB took 0.5 s
 * with the start included, and 0.7-0.9 s on 16 cores. */
#define HY_WHOLE_GPU_BYTES ((uint64_t)512 << 20)

/* The engine for work of `bytes` bytes that one side must do whole (a
 * single matrix staged on one device): the GPU's if it is ready now, or
 * once the start is over for work of HY_WHOLE_GPU_BYTES or more; else the
 * CPU's. */
void *hy_whole_engine(hy *h, uint64_t bytes);

/* The data of chunk c for the engine hy_whole_engine() gave: c's own for
 * the GPU or a plain chunk, else c decoded on the host (*gz set to NULL).
 * 0, or negative (hy_error()). */
int hy_whole_data(hy *h, const pl_chunk *c, const void **data, const pl_gz_chunk **gz);

/* One line explaining the last failure. */
const char *hy_error(const hy *h);

/* Reports on stderr (-v) how many chunks each side took. */
void hy_report(const hy *h, const char *name);

/* Closes both engines; accepts NULL. Every slot must be idle. */
void hy_close(hy *h);

#endif
