/* quadratic_tiles.h - launch geometry of the quadratic kernels, shared by
 * the kernels (ptx/quadratic.cu), the host engine (runtime/quadratic.c,
 * runtime/tools/bench.c) and the kernel benchmark. */
#ifndef GPUBATCH_PTX_QUADRATIC_TILES_H
#define GPUBATCH_PTX_QUADRATIC_TILES_H

/* Threads per block. */
#define QD_TILE 256
/* Rows per thread and pass of qdk_rows, loaded before any is solved (a
 * tuning knob: tests/gpu/bench_quadratic.cu times builds with others). */
#ifndef QD_RPT
#define QD_RPT 4
#endif
/* Rows per block and pass of qdk_rows. */
#define QD_TILE_ROWS (QD_RPT * QD_TILE)

#endif
