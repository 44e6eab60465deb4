/* transpose_tiles.h - tile geometry of the odd-shape transpose kernels
 * (tpk_odd_e4, tpk_odd_e8), shared by the kernels (ptx/transpose.cu), the
 * host engine (runtime/transpose.c) and the kernel benchmark. */
#ifndef GPUBATCH_PTX_TRANSPOSE_TILES_H
#define GPUBATCH_PTX_TRANSPOSE_TILES_H

/* Tile rows for E-byte elements: one 16-byte output vector per lane of a warp. */
#define TP_ODD_TR(E) (32 * (16 / (E)))
/* Tile columns. */
#define TP_ODD_TC 64
/* Threads per block, and resident blocks per multiprocessor the kernels
 * are compiled for (tuning knobs: the kernel benchmark times builds with
 * others). */
#ifndef TP_ODD_NT
#define TP_ODD_NT 512
#endif
#ifndef TP_ODD_MINB
#define TP_ODD_MINB 3
#endif

#endif
