/* transpose_tiles.h - tile geometry of the transpose kernels, shared by
 * the kernels (ptx/transpose.cu), the host engine (runtime/transpose.c) and
 * the kernel benchmark. E is the element size in bytes; a 16-byte vector
 * holds 16 / E elements. */
#ifndef GPUBATCH_PTX_TRANSPOSE_TILES_H
#define GPUBATCH_PTX_TRANSPOSE_TILES_H

/* Vector kernel (tpk_vec_eE): W output vectors per tile row, V input
 * vectors per tile row, NT threads; a tile is W * 16 / E rows by
 * V * 16 / E columns. */
#define TP_VEC_W(E) ((E) <= 2 ? 8 : (E) == 16 ? 32 : 16)
#define TP_VEC_V(E) ((E) <= 4 ? 16 : 32)
#define TP_VEC_NT(E) ((E) <= 2 ? 128 : 256)
#define TP_VEC_TR(E) (TP_VEC_W(E) * (16 / (E)))
#define TP_VEC_TC(E) (TP_VEC_V(E) * (16 / (E)))

/* Any-shape kernel (tpk_any_eE): square tiles of TP_ANY_TS elements a side,
 * TP_ANY_NT threads (its loops are written for these two values). */
#define TP_ANY_TS 64
#define TP_ANY_NT 256

/* Odd-shape kernels (tpk_odd_e4, tpk_odd_e8): */

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
