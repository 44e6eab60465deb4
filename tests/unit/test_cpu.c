/* test_cpu.c - io/cpu.h's reading of the instruction-set extensions agrees
 * with libgcc's __builtin_cpu_supports (the reference here; the program
 * itself does not link it), and the variants' choice follows from it. */
#include "io/cpu.h"
#include "runtime/simd.h"
#include "check.h"

/* Every bit against the reference, read twice (the second from the cache). */
static void test_cpu_bits(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    unsigned want = 0;
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
        want |= CPU_PCLMUL;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want |= CPU_AVX2;
    if ((want & CPU_AVX2) && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        want |= CPU_AVX512;
    if ((want & CPU_AVX2) && __builtin_cpu_supports("vpclmulqdq"))
        want |= CPU_VPCLMUL;
    if (__builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
        want |= CPU_BMI2;
    CHECKF(cpu_features() == want, "cpu_features %#x, libgcc %#x", cpu_features(), want);
#endif
    CHECK(cpu_features() == cpu_features());
}

/* The widest variant that runs is the one the bits allow. */
static void test_cpu_variant(void)
{
    unsigned f = cpu_features();
    CHECK(simd_runs(SIMD_BASELINE));
#if SIMD_MULTI
    CHECK(simd_runs(SIMD_AVX2) == !!(f & CPU_AVX2));
    CHECK(simd_runs(SIMD_AVX512) == !!(f & CPU_AVX512));
#endif
    (void)f;
}

int main(void)
{
    RUN(test_cpu_bits);
    RUN(test_cpu_variant);
    return check_summary();
}
