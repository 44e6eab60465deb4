/* cost.h - the cost model, in one place: what a byte of input costs on
 * the CPU for each operation, what the devices' start costs and when work
 * pays for it, when a gzip member is worth handing to a device, and how
 * many devices `--device all` is worth starting. Every number here was
 * measured on the GPU nodes of BENCHMARKS.md.
 *
 * Devices: every device the driver can see lengthens its start: cuInit and
 * each context take about 0.12 s more per device, and contexts made on
 * threads of their own do not overlap. A further device shortens a run only
 * where one device takes the input slower than the host reads it into the
 * pinned buffers; then the run's work must outweigh the further start. The
 * estimate is made before the driver starts, from the input's size and the
 * devices' PCIe links as the kernel reports them (BENCHMARKS.md, "Several
 * GPUs of one node"). */
#ifndef GPUBATCH_RUNTIME_COST_H
#define GPUBATCH_RUNTIME_COST_H

#include <stddef.h>
#include <stdint.h>

/* auto does not start the GPU for less CPU work than this, about the
 * driver's start on the GPU nodes measured: a process cannot exit while the
 * driver is starting without waiting for it, and work that the CPU ends
 * sooner would only be slowed down by it. The scheduler's CPU lane takes
 * chunks meanwhile only while their work fits in half of it. */
#define COST_GPU_START_SECONDS 0.3

/* Work of at least this many bytes that one lane must do whole waits for
 * the GPU's start, once auto has started it for the CPU work the input
 * holds: a matrix of twice this size from one gzip member ended sooner on
 * the GPU, its start included, than on every core of the GPU nodes measured
 * (16384x16384 float32 from `pigz -1`: 0.44 s against 0.48 s). */
#define COST_WHOLE_GPU_BYTES ((uint64_t)512 << 20)

/* One thread's nanoseconds per byte of a whole-array reduction with a
 * thread on every core of a GPU node (16 cores of an H200 node, whole
 * process, `reduce --op count` or `sum,min,max`): a plain .npy from the
 * page cache (2 GiB of float32 in 0.054-0.066 s: 0.40-0.49 ns; one thread
 * alone 0.22: the cores share the memory's bandwidth), and gzip, blocked
 * gzip by its bytes and a single member by the bytes it decodes to (2 GiB
 * members, 2026-12-01: float32 `gzip -1`, the slowest kind measured, 5.0
 * ns; float32 pigz -6 4.9, int32 in 0..199 4.3, text lines 2.4; blocked
 * float32 4.3-4.7). */
#define COST_REDUCE_NS_PLAIN 0.45
#define COST_REDUCE_NS_GZIP 5.0

/* A single deflate stream's cost falls with its ratio: the more decoded
 * bytes each compressed one holds, the more of them long copies write.
 * One thread's nanoseconds per decoded byte of its whole-array reduction,
 * COST_STREAM_NS_OUT a decoded byte plus COST_STREAM_NS_IN a compressed
 * one, at most COST_REDUCE_NS_GZIP: through two 2 GiB members as pigz -6
 * writes them, text lines (ratio 21.4, 1.97 ns) and int32 in 0..199 (ratio
 * 2.71, 4.36 ns), on the node above (2026-12-02, 0.265 s and 0.585 s whole);
 * at the cap from a ratio of 2.2 down. */
#define COST_STREAM_NS_OUT 1.6
#define COST_STREAM_NS_IN 7.4

/* The nanoseconds above for a stream of `ratio` decoded bytes to a
 * compressed one (not above 0: COST_REDUCE_NS_GZIP). */
double cost_stream_ns(double ratio);

/* The base of an axis run's cost, which auto weighs against the GPU's
 * start: the cost of the whole-array reduce of a plain .npy. */
#define COST_AXIS_NS_PLAIN COST_REDUCE_NS_PLAIN

/* One thread's nanoseconds per file byte of a reduction along axes
 * (`reduce --axis`) of ops (rd_op bits) over elements of elem bytes: runs of
 * T elements reduced (T > 1), or with T == 1 rows of C columns reduced row
 * by row; deflated for gzip input. It is COST_AXIS_NS_PLAIN (plain) or
 * COST_REDUCE_NS_GZIP (gzip) plus COST_AXIS_NS_PLAIN times the axis run's
 * excess over the whole-array reduce on the same CPU: its units (a fixed
 * cost per run or per 16-row block of a column, on top of every element's)
 * measured on one core of a development machine with the vectorised units,
 * float32 of 8 to 512 MiB, against that core's whole-array reduce of the
 * same files. Short runs with var or std cost a thousand times the whole
 * array's per byte. */
double cost_axis_ns(unsigned ops, uint64_t T, uint64_t C, size_t elem, int deflated);

/* The least of cost_axis_ns over every shape of float32 data (rows of many
 * columns), for an estimate made before the inputs' headers are read. */
double cost_axis_least_ns(unsigned ops, int deflated);

/* One core's nanoseconds per input byte of the quadratic solver (plain or
 * blocked gzip input, gzip_in), plus the output's deflate where level is
 * nonzero. */
double cost_quadratic_ns(int gzip_in, int level);

/* The same for the transpose, gzip_in 1 for blocked gzip (or several
 * members) and 2 for one plain gzip member, which the host's threads
 * inflate more slowly. */
double cost_transpose_ns(int gzip_in, int level);

/* Decoded GB/s of one host thread, and of a device, inflating one deflate
 * stream end to end, and a device's set-up for one. */
#define COST_HOST_GBPS 0.15
#define COST_DEVICE_GBPS 4.0
#define COST_DEVICE_SETUP_SECONDS 0.05

/* Whether a device, once open, pays for the `left` compressed bytes of a
 * gzip member that `threads` host threads are decoding: its set-up and
 * COST_DEVICE_GBPS against COST_HOST_GBPS a thread. */
int cost_member_rest_pays(int threads, uint64_t left);

/* A pipe's gzip member goes to a device once the host's threads fall this
 * far behind the pipe: the bytes read from it and not yet decoded would take
 * them this long at the rate they have decoded so far. While they keep up,
 * the pipe's writer bounds the run, and a device, which would wait for the
 * same bytes, cannot end it sooner (a cached 498 MB float32 `gzip -1` member
 * through `cat` on a 16-core GPU node: the host 0.33-0.36 s, handed to the
 * device 0.40-0.44 s). */
#define COST_PIPE_BEHIND_SECONDS 0.15

/* And at least this many bytes behind: the parallel decoder's chunks in
 * flight and the ring's buffers not yet taken count as not decoded. */
#define COST_PIPE_BEHIND_BYTES ((uint64_t)32 << 20)

/* Whether the host's threads are behind a pipe (see above): `behind` bytes
 * read from it that they have not decoded, after decoding `done` compressed
 * bytes (at least one) in `seconds`. */
int cost_pipe_behind(uint64_t behind, uint64_t done, double seconds);

/* The file a FILE argument reads (an .npz member's archive), its text in
 * buf or arg itself (cli's input_file). */
typedef const char *(*cost_file_of)(const char *arg, char *buf, size_t len);

/* Estimated seconds of CPU work for the n FILE arguments in args (file
 * names each), on `threads` threads (< 1: one per core): ns_plain
 * (ns_gzip) nanoseconds of one core per byte of an uncompressed file (of
 * blocked gzip, or per decoded byte of a single deflate stream: a one-member
 * gzip file by its trailer, a deflated .npz member by its directory, less
 * what its ratio saves, COST_REDUCE_NS_GZIP - cost_stream_ns). -1 when an
 * input is standard input or not a regular file (its size is unknown).
 * Each file's head is read to tell its kind. */
double cost_cpu_seconds(char *const *args, int n, cost_file_of file, int threads,
                        double ns_plain, double ns_gzip);

/* The same for an input of `size` bytes (negative: unknown), deflated or
 * not (then `size` is best its decoded bytes). */
double cost_input_seconds(int64_t size, int deflated, int threads, double ns_plain,
                          double ns_gzip);

/* The decoded bytes of a one-member gzip file of `size` bytes whose
 * trailer's ISIZE (the length modulo 2^32) is isize: the least such length
 * not below the file's size (a member of several, the last's, stays an
 * estimate). */
double cost_stream_decoded(uint32_t isize, double size);

/* Input bytes of the n FILE arguments that several devices can share:
 * plain data and blocked gzip (a deflate stream is inflated on one
 * device). -1 when a size is not known (standard input, a pipe). */
double cost_shared_bytes(char *const *args, int n, cost_file_of file);

/* Seconds each further device adds to the driver's start. */
#define COST_START_EACH_SECONDS 0.25
/* Input bytes per second the host reads and hands to the devices at most. */
#define COST_HOST_BYTES_PER_S 30e9
/* Input bytes per second one device takes where its link does not hold it
 * back (blocked-gzip inflate and the reductions on an H100 or H200). */
#define COST_DEVICE_BYTES_PER_S 40e9
/* The share of a PCIe link's signalling rate that host-to-device copies reach. */
#define COST_LINK_EFFICIENCY 0.8

/* The number of devices, from 1 to most, that ends work of `bytes` input
 * bytes soonest when each device takes device_rate bytes per second, the
 * host hands over host_rate at most, and each device after the first adds
 * start_each seconds; the fewest where several tie. */
int cost_count(double bytes, double device_rate, double host_rate, double start_each, int most);

/* Bytes per second of a PCIe link from sysfs's max_link_speed text
 * ("16.0 GT/s PCIe") and width, after line encoding and
 * COST_LINK_EFFICIENCY; 0 when the text is not a speed. */
double cost_link_bytes(const char *speed, int width);

/* The slowest link of the NVIDIA display controllers under
 * root/bus/pci/devices (root: normally "/sys"), each the least of the
 * links from the device up to its root port at their widest and fastest
 * (max_link_speed, max_link_width), in bytes per second; 0 when none is
 * found. */
double cost_slowest_link(const char *root);

/* Bytes per second one device takes: COST_DEVICE_BYTES_PER_S, or its
 * link's rate where that is lower (link_rate 0: unknown). */
double cost_device_rate(double link_rate);

#endif
