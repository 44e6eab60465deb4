/* bench.h - `gpubatch bench`: the ladders of the three classic articles our
 * kernels descend from (reduction, transpose, quadratic equations), timed
 * beside the production kernels on the GPU in use, or the CPU code of the
 * same operations on the CPU backend; and the inflate of blocked gzip input,
 * on the GPU's kernels beside zlib on every host thread.
 *
 * Every row is the median of repeated runs after warm-up (device events on
 * the GPU, a monotonic clock on the host), with its effective bandwidth
 * (bytes read + bytes written of the data arrays, divided by the time), the
 * ratio to the copy bandwidth measured in the same run (device-to-device
 * copy for GPU rows, a host memcpy for host rows, same byte convention), the
 * speed-up over the article's baseline and a check of its output: a variant
 * whose output is wrong is reported as such and not timed.
 *
 * Inputs are deterministic (runtime/tools/gen.h, from a seed). The reduction's
 * inputs are multiples of 2^-10 whose absolute values sum to less than 2^14,
 * so every partial sum in any order is exact in float32: a correct kernel
 * returns exactly the sum, whatever its order. Transposes must match
 * exactly; the textbook quadratic variants must give the bits of the same
 * formula on the CPU, the production solver the bits of the CPU backend
 * (NaN matches any NaN).
 *
 * The inflate input is n normal float32 compressed as blocked gzip at level
 * 1 by the project's writer (io/gzip/gz_writer.h); its rows count only the decoded
 * bytes (4n, what a copy of the data moves each way), must reproduce the
 * input exactly and report no member failing its inflate or CRC-32.
 *
 * The axis rows (GPU only) sum float32 and float64 arrays of `size` bytes
 * along an axis with reduce --axis's kernels (runtime/axis_gpu.h): (N, C)
 * over axis 0 and (R, N) over axis 1, one chunk of the whole array; their
 * bytes are the input's plus the parts written. Elements are k 2^-10 with
 * |k| <= 1000, so every sum in any order is exact in float64: the parts,
 * folded on the host into the outputs, must give sampled outputs' exact
 * sums. */
#ifndef GPUBATCH_RUNTIME_TOOLS_BENCH_H
#define GPUBATCH_RUNTIME_TOOLS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/backend.h"

typedef enum {
    BENCH_COPY,
    BENCH_REDUCE,
    BENCH_TRANSPOSE,
    BENCH_QUADRATIC,
    BENCH_INFLATE,
    BENCH_AXIS,
    BENCH_NOPS
} bench_op;

/* Every op but copy (which always runs): `gpubatch bench all`. */
#define BENCH_ALL_OPS (((1u << BENCH_NOPS) - 1) & ~(1u << BENCH_COPY))

enum { BENCH_OK = 0, BENCH_WRONG = 1, BENCH_SKIPPED = 2 };

#define BENCH_MAX_SIZES 8

typedef struct {
    unsigned ops;                                 /* bit (1u << op) per op to run */
    uint64_t sizes[BENCH_NOPS][BENCH_MAX_SIZES];  /* per op: elements, N (N x N), equations,
                                                     decoded float32 */
    int nsizes[BENCH_NOPS];
    int reps;                                     /* timed runs per row */
    uint64_t seed;
} bench_config;

/* One measured (or failed, or skipped) variant at one size. */
typedef struct {
    bench_op op;
    const char *variant;  /* "tree", "production", "cpu", "host", "device copy" */
    const char *idea;     /* one line */
    const char *article;  /* the figure the article reported ("46 us"), "" if none */
    int on_gpu;           /* 1: device kernel, 0: host code */
    int threads;          /* host threads of a host row, 0 for GPU rows */
    uint64_t size;
    int bx, by;           /* block shape of a transpose sweep row (else 0) */
    int sweep;            /* a row of the naive transpose block-shape sweep */
    int baseline;         /* the row speed-ups are relative to */
    int status;           /* BENCH_OK, BENCH_WRONG, BENCH_SKIPPED */
    int reps;             /* runs timed (fewer than asked for runs over 200 ms) */
    double ms;            /* median time */
    double bytes;         /* bytes read + bytes written (inflate: decoded bytes) */
    double gbps;          /* bytes / time, 1e9 bytes per second */
    double of_copy;       /* gbps / the copy's gbps (0 when unknown) */
    double speedup;       /* baseline ms / ms (0 when no baseline was timed) */
    char note[192];       /* what was checked, or why it failed or was skipped */
} bench_row;

typedef void (*bench_emit_fn)(void *ctx, const bench_row *row);

/* Fills the default configuration: every op, the articles' sizes, and on
 * the GPU also sizes several times the largest L2 of today's GPUs. */
void bench_config_defaults(bench_config *c, int on_gpu);

/* Runs the configured ops on the open backend, calling emit for every row
 * in order (the copy rows first). Returns 0, or a negative gpu_error filled
 * in *st with its line (a driver failure, or memory for the largest size). */
int bench_run(backend *be, const bench_config *cfg, bench_emit_fn emit, void *ctx, io_status *st);

/* "copy", "reduce", "transpose", "quadratic", "inflate". */
const char *bench_op_name(bench_op op);

/* Op of a name other than copy, or -1. */
int bench_op_parse(const char *name);

/* Largest size bench accepts for op (sizes start at 1). */
uint64_t bench_size_limit(bench_op op);

/* Bytes read + written by one run of op at size (inflate: bytes decoded). */
double bench_op_bytes(bench_op op, uint64_t size);

/* One line saying what a size of op means ("n float32", "N x N float32"). */
const char *bench_op_unit(bench_op op);

#endif
