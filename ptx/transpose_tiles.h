/* transpose_tiles.h - tile geometry of the odd-shape transpose kernels
 * (tpk_odd_e4, tpk_odd_e8), shared by the kernels (ptx/transpose.cu), the
 * host engine (runtime/transpose.c) and the kernel benchmark. */
#ifndef GPUBATCH_PTX_TRANSPOSE_TILES_H
#define GPUBATCH_PTX_TRANSPOSE_TILES_H

/* Tile rows for E-byte elements: one 16-byte output vector per lane of a warp. */
#define TP_ODD_TR(E) (32 * (16 / (E)))
/* Tile columns. */
#define TP_ODD_TC 64
/* Threads per block. */
#define TP_ODD_NT 512
/* Resident blocks per multiprocessor the kernels are compiled for. */
#define TP_ODD_MINB 2

#endif
