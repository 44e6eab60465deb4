/* simd.c - the choice of the CPU code's instruction-set variant (see
 * simd.h). */
#include "simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "io/cpu.h"

static const char *const simd_names[SIMD_COUNT] = {"baseline", "avx2", "avx512"};
static atomic_int simd_forced = -1; /* simd_force's variant, or -1 */

/* Whether this CPU runs variant v. */
int simd_runs(int v)
{
#if SIMD_MULTI
    if (v == SIMD_AVX2)
        return (cpu_features() & CPU_AVX2) != 0;
    if (v == SIMD_AVX512)
        return (cpu_features() & CPU_AVX512) != 0;
#endif
    return v == SIMD_BASELINE;
}

/* The widest variant this CPU runs, at most GPUBATCH_CPU_SIMD's, chosen
 * once. */
int simd_variant(void)
{
    static int chosen = -1; /* every thread that races here picks the same */
    int forced = atomic_load_explicit(&simd_forced, memory_order_relaxed);
    if (forced >= 0)
        return forced;
    if (chosen >= 0)
        return chosen;
    int cap = SIMD_MULTI ? SIMD_AVX512 : SIMD_BASELINE;
    const char *env = getenv("GPUBATCH_CPU_SIMD");
    for (int i = 0; env && *env && i < SIMD_COUNT; i++)
        if (!strcmp(env, simd_names[i]))
            cap = i < cap ? i : cap;
    int v = SIMD_BASELINE;
    for (int i = 1; i <= cap; i++)
        if (simd_runs(i))
            v = i;
    chosen = v;
    return v;
}

/* The name of variant v. */
const char *simd_name(int v)
{
    return v >= 0 && v < SIMD_COUNT ? simd_names[v] : "?";
}

/* Whether name is a GPUBATCH_CPU_SIMD value. */
int simd_known(const char *name)
{
    for (int i = 0; i < SIMD_COUNT; i++)
        if (!strcmp(name, simd_names[i]))
            return 1;
    return 0;
}

/* Overrides the choice for timing (see simd.h). */
void simd_force(int v)
{
    atomic_store(&simd_forced, v >= 0 && v < SIMD_COUNT && simd_runs(v) ? v : -1);
}
