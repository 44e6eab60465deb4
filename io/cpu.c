/* cpu.c - the instruction-set extensions the process may use (see cpu.h). */
#include "cpu.h"

#include <stdatomic.h>
#include <stddef.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* The operating system's XCR0: which register states it saves. */
static unsigned long long cpu_xcr0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

/* The CPU_* bits, read now. */
static unsigned cpu_read(void)
{
    unsigned a, b, c, d, max = __get_cpuid_max(0, NULL), f = 0;
    if (max < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    int pclmul = c >> 1 & 1, sse41 = c >> 19 & 1, fma = c >> 12 & 1, osxsave = c >> 27 & 1,
        avx = c >> 28 & 1;
    unsigned long long xcr0 = osxsave ? cpu_xcr0() : 0;
    int ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    if (pclmul && sse41)
        f |= CPU_PCLMUL;
    if (max < 7)
        return f;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b >> 3 & 1) && (b >> 8 & 1)) /* general-purpose registers only: no state to save */
        f |= CPU_BMI2;
    if (!avx || !ymm)
        return f;
    if ((b >> 5 & 1) && fma)
        f |= CPU_AVX2;
    if ((f & CPU_AVX2) && zmm && (b >> 16 & 1) && (b >> 17 & 1) && (b >> 30 & 1) && (b >> 31 & 1))
        f |= CPU_AVX512;
    if ((f & CPU_AVX2) && (c >> 10 & 1))
        f |= CPU_VPCLMUL;
    return f;
}
#else
/* No x86-64 extensions elsewhere. */
static unsigned cpu_read(void)
{
    return 0;
}
#endif

/* The CPU_* bits, read once (threads that race here read the same). */
unsigned cpu_features(void)
{
    static atomic_uint known; /* the bits with 1u << 31 set once read */
    unsigned f = atomic_load_explicit(&known, memory_order_relaxed);
    if (!f) {
        f = cpu_read() | 1u << 31;
        atomic_store_explicit(&known, f, memory_order_relaxed);
    }
    return f & ~(1u << 31);
}
