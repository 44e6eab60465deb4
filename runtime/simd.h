/* simd.h - the instruction-set variants of the CPU code (the reduction's
 * tiles, the transpose's blocks, the quadratic solver): each is compiled
 * for the baseline, AVX2 (with FMA) and AVX-512, and one variant is chosen
 * once per process: the widest this CPU runs, at most the one the
 * environment's GPUBATCH_CPU_SIMD names (baseline, avx2, avx512). Every
 * variant gives the same bytes; the choice is only speed. Off x86-64 only
 * the baseline is built (on aarch64, vectorized for Advanced SIMD, which
 * every such processor has). */
#ifndef GPUBATCH_RUNTIME_SIMD_H
#define GPUBATCH_RUNTIME_SIMD_H

enum { SIMD_BASELINE, SIMD_AVX2, SIMD_AVX512, SIMD_COUNT };

#if defined(__x86_64__) && defined(__GNUC__)
#define SIMD_MULTI 1 /* the AVX2 and AVX-512 variants are built */
#define SIMD_ATTR_AVX2 __attribute__((target("avx2,fma")))
#define SIMD_ATTR_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#else
#define SIMD_MULTI 0
#endif

/* The variant in use (SIMD_BASELINE, SIMD_AVX2 or SIMD_AVX512). */
int simd_variant(void);

/* The name of variant v ("baseline", "avx2", "avx512"). */
const char *simd_name(int v);

/* Whether name is a GPUBATCH_CPU_SIMD value. */
int simd_known(const char *name);

/* Whether this CPU runs variant v (whatever GPUBATCH_CPU_SIMD says). */
int simd_runs(int v);

/* Makes v (one this CPU runs) the variant in use until the next call, on
 * every thread; v < 0: the chosen one again. For timing each variant
 * (`gpubatch bench`), between runs of the CPU code, never during one. */
void simd_force(int v);

#endif
