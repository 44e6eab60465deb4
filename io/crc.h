/* crc.h - CRC-32 of gzip (the reflected polynomial 0xedb88320, zlib's
 * crc32() convention: start from 0, feed pieces in order), computed with
 * carry-less multiplication where the CPU has it (x86-64 PCLMULQDQ, or
 * VPCLMULQDQ on 256-bit registers, chosen at run time) and with zlib's
 * crc32() elsewhere; all give the same value. */
#ifndef GPUBATCH_IO_CRC_H
#define GPUBATCH_IO_CRC_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32 of the bytes p[0..n) following those whose CRC-32 is crc. */
uint32_t crc_update(uint32_t crc, const void *p, size_t n);

/* How crc_update folds: with zlib's crc32() only, 128 bits at a time
 * (PCLMULQDQ), or two 128-bit lanes at a time (AVX2 with VPCLMULQDQ). */
enum { CRC_ZLIB, CRC_FOLD_128, CRC_FOLD_256 };

/* The folding crc_update uses: the widest this CPU runs, chosen once, at
 * most the 128-bit one where GPUBATCH_CPU_SIMD names the baseline. */
int crc_folding(void);

/* Makes crc_update use folding v (the widest this CPU runs where v is
 * wider, or v < 0) and returns the one now in use: for tests and timing,
 * never while another thread computes a CRC-32. */
int crc_force(int v);

/* Copies src[0..n) to dst (not overlapping) and returns crc_update(crc,
 * src, n): piece by piece, each checksummed from the copy while it is
 * still in the nearest cache, not in a second pass over the whole. */
uint32_t crc_copy(uint32_t crc, void *dst, const void *src, size_t n);

#endif
