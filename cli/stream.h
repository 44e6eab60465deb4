/* stream.h - what every chunked command plans before its run: the chunk
 * size, buffers and slots, where gzip is inflated, the pipeline over its
 * input, and the hooks through which the scheduler (runtime/sched.h)
 * reports and writes. */
#ifndef GPUBATCH_CLI_STREAM_H
#define GPUBATCH_CLI_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/frame.h"
#include "io/pipeline.h"
#include "options.h"
#include "output.h"
#include "runtime/backend.h"
#include "runtime/sched.h"

/* Whether chunks of input r go to the device compressed (pl_open_gz): where
 * a GPU may take chunks (backend_may_use_gpu: cuda, or auto, whose CPU side
 * then decodes the chunks it takes), for gzip from a regular file, unless
 * the environment sets GPUBATCH_HOST_INFLATE=1 or the data is big-endian
 * (swap, frame_info.swap, nonzero: the host swaps it as it reads). */
int stream_device_inflate(backend *be, const io_reader *r, size_t swap, size_t chunk_bytes);

/* The chunk size for input r (swap as for stream_device_inflate): --chunk,
 * or without it the larger default of device inflate where
 * stream_device_inflate() applies. */
size_t stream_chunk(const cli_common *c, backend *be, const io_reader *r, size_t swap);

/* Bytes of each pipeline buffer for chunks of chunk_bytes on backend be
 * (room for compressed chunks where a GPU may take them). */
size_t stream_buffer_bytes(backend *be, size_t chunk_bytes);

/* Chunks in flight for nbufs host buffers, where the engine gives a GPU
 * chunk's buffer back once it is copied (engine_copied): twice as many
 * where a GPU may take chunks, so that the device works on more chunks at
 * once than the host holds (blocked gzip inflated there needs many members
 * at once); nbufs elsewhere. */
int stream_slots(const backend *be, int nbufs);

/* A view's data must start at a multiple of this many bytes of the file
 * (the alignment the operations' CPU code may assume of a buffer). */
#define STREAM_VIEW_ALIGN 64

/* Whether the CPU reads input r in place (pl_open_view) rather than
 * through the buffers: plain data of a regular file (or a stored .npz
 * member) whose data, prefix_len bytes before r's position, starts
 * STREAM_VIEW_ALIGN-aligned in the file, little-endian (swap 0), where no
 * GPU may take chunks (a device copies from pinned buffers), unless the
 * environment sets GPUBATCH_MAP=0. */
int stream_view(backend *be, const io_reader *r, size_t swap, size_t prefix_len);

/* Opens the pipeline over r (nbufs buffers, nslots slots) as pl_open_view
 * does where stream_view(be, r, swap, prefix_len) says so (bufs unused; a
 * prefix is then the bytes just read from r), as pl_open does (swapping
 * big-endian data, swap as for pl_open), or as pl_open_gz does when
 * stream_device_inflate(be, r, swap, chunk_bytes) says so (and then asks
 * auto's GPU start for the inflate module). */
int stream_open(pl_ring **out, backend *be, io_reader *r, void *const *bufs, int nbufs,
                int nslots, size_t chunk_bytes, const void *prefix, size_t prefix_len,
                uint64_t limit, size_t swap);

/* The scheduler's hooks for a command (runtime/sched.h): the devices
 * awaited as cli_backend_ready()/cli_backend_first() do, reports through
 * msg and progress, and results written by write (NULL: none) with ctx. */
sched_hooks stream_hooks(gz_piece_write write, void *ctx);

/* Writes results to the out_stream ctx: the span the device compressed, or
 * the bytes (a sched_hooks.write_out). */
int stream_write(void *ctx, const gz_span *span, const void *out, size_t bytes);

/* Decoded GB/s of one host thread, and of a device, inflating one deflate
 * stream end to end (measured on an H100 node: BENCHMARKS.md). */
#define STREAM_HOST_GBPS 0.15
#define STREAM_DEVICE_GBPS 4.0
#define STREAM_DEVICE_SETUP_SECONDS 0.05

/* Whether input r (after frame_open gave fi) has its data inflated on a
 * device (job_input.member, sched_run_member): a plain gzip member of a
 * regular file, where a GPU may take chunks (cuda, or auto's start), and
 * little-endian data (GPUBATCH_HOST_INFLATE=1: never). The host's threads
 * run its start while the devices start (stream_member_host_start), and a
 * device goes on only where that pays (stream_member_rest_pays). */
int stream_device_member(backend *be, const io_reader *r, const frame_info *fi);

/* Whether a device, once open, pays for the `left` compressed bytes of a
 * member that the host's threads are decoding: its set-up
 * (STREAM_DEVICE_SETUP_SECONDS) and STREAM_DEVICE_GBPS against
 * STREAM_HOST_GBPS a thread; always with GPUBATCH_HOST_INFLATE=0. */
int stream_member_rest_pays(const backend *be, uint64_t left);

/* Whether the host decodes and runs the start of such a member while the
 * devices start, a device going on from where it paused: while device 0
 * cannot take work yet, unless GPUBATCH_HOST_INFLATE=0 (the device from
 * the member's start, as tests of its inflate want). */
int stream_member_host_start(backend *be);

#endif
