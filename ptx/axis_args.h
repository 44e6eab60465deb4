/* axis_args.h - the argument block of the kernels of reductions along axes
 * (axis.cu), one layout for the host's C (runtime/axis_gpu.c) and CUDA.
 * Device pointers are 64-bit integers on both sides. */
#ifndef GPUBATCH_PTX_AXIS_ARGS_H
#define GPUBATCH_PTX_AXIS_ARGS_H

#include "reduce_math.h"

/* One chunk's units: [u0, u0 + nunits) of a plan (runtime/axis.h), whose
 * elements start at element e0 of the array (the chunk's x[0]). */
typedef struct {
    rd_u64 e0;
    rd_u64 u0, nunits;
    rd_u64 T, tiles_per_run;      /* tile units: run length and tiles per run */
    rd_u64 L, C, blocks_per_sweep; /* block units: rows, columns, blocks per sweep */
    rd_u64 sum, sq, count;         /* the moments' part arrays (runtime/axis.h: a double
                                      or 128 exact bits each; counts uint64) */
    rd_u64 extrema, var;           /* the other part arrays (0: not wanted); the part of
                                      entry (or unit) k, column c, is at k * width + c */
    rd_u64 entries, nentries;      /* the chunk's entry list (ax_gpu_entry), where the
                                      kernel folds units into entries; entries 0: the
                                      units are of one segment, their leaves from leaf0
                                      on, and the kernels cut them as the host does */
    rd_u64 leaf0;
} ax_gpu_args;

/* An entry of a chunk's parts folds at most 2^AX_FOLD_LEVELS units
 * (runtime/axis.h). */
#define AX_FOLD_LEVELS 6

/* Bytes of whole short runs (T <= RD_SUBTILE) one block of the short-run
 * kernels stages in shared memory, by the bytes of a run: AX_ROWS_BYTES
 * under AX_ROWS_WIDE_RUN, else AX_ROWS_WIDE_BYTES (ax_rows_bytes; a block
 * takes that over T * size runs). Measured on an H200 (sums of 1 GiB of
 * float32 and float64, the kernels of each stage size side by side): from
 * runs of 256 bytes on, 32 KiB stages keep more of a block's threads busy,
 * float32 runs of 64 to 2048 elements reading 0.71-0.98 of the device copy
 * against 0.58-0.90 with 16 KiB (float64 of 32 elements alone lost: 0.92
 * against 0.96); shorter runs already fill a block's threads and read
 * 7-14% slower with 32 KiB. */
#define AX_ROWS_BYTES 16384u
#define AX_ROWS_WIDE_BYTES 32768u
#define AX_ROWS_WIDE_RUN 256u

/* The bytes a short-run block stages for runs of run_bytes each. */
GB_HD unsigned ax_rows_bytes(rd_u64 run_bytes)
{
    return run_bytes >= AX_ROWS_WIDE_RUN ? AX_ROWS_WIDE_BYTES : AX_ROWS_BYTES;
}

/* The shared memory of a short-run block for runs of run_bytes (the host
 * launches it as dynamic shared memory, so that short runs' blocks hold
 * only the smaller stage): ax_rows_bytes, the 16 before the first run's
 * byte 0, and the rest of the last 128-byte group (axis.cu: stage_swz). */
#define AX_ROWS_STAGE(run_bytes) (ax_rows_bytes(run_bytes) + 128u)

/* Threads an entry's blocks are shared by in the many-column block-entry
 * kernels (axk_cols_*, C > 32) of float32 (size 4) and float64 (size 8)
 * elements, by kind of part (0 moments, sq: with squares; 1 extrema; 2
 * variance), as measured on an H200 (tests/gpu/bench_axis_cols.cu): 4 for
 * the variance, the square sums and float64's sums, else 1 (a thread per
 * entry and column, as for the other types). A GPU block has RD_WARPS * 32
 * threads: with S > 1 it takes one entry and RD_WARPS * 32 / S of its
 * columns, else RD_WARPS * 32 consecutive (entry, column) pairs. */
#define AX_COLS_SPLIT(size, kind, sq) \
    ((kind) == 2 || ((kind) == 0 && ((sq) || (size) == 8)) ? 4u : 1u)

/* Adjacent columns a thread of the many-column kernels of float32 sums
 * without squares (axk_pairs_moments[_skipnan], C > 32), which the host
 * launches where C is a multiple of it and element 0 of the array (the
 * chunk's x[0] less e0 elements) lies on a boundary of as many elements:
 * one 8-byte load a row. Measured on an H200 (tests/gpu/bench_axis_cols.cu),
 * 0.95 to 0.98 of the device copy on (N, 64), (N, 1000) and (N, 100000)
 * against 0.80 to 0.85 for a thread an entry and column; elsewhere the
 * latter's kernel (axk_cols_*). A GPU block takes RD_WARPS * 32 consecutive
 * (entry, column pair) pairs. */
#define AX_PAIRS_COLS 2u

/* One entry of a chunk's parts (runtime/axis.h): units [u, u + 2^level) of
 * one segment, the first a leaf `leaf` of the segment's tree. */
typedef struct {
    rd_u64 u, leaf;
    unsigned level, pad;
} ax_gpu_entry;

#endif
