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
 * kernels stages in shared memory: AX_ROWS_BYTES / (T * size) runs. */
#define AX_ROWS_BYTES 16384u

/* One entry of a chunk's parts (runtime/axis.h): units [u, u + 2^level) of
 * one segment, the first a leaf `leaf` of the segment's tree. */
typedef struct {
    rd_u64 u, leaf;
    unsigned level, pad;
} ax_gpu_entry;

#endif
