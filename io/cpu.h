/* cpu.h - the instruction-set extensions this CPU and its operating system
 * let the process use, read once with a few cpuid instructions. Not
 * libgcc's __builtin_cpu_supports: linking it runs a constructor of some
 * twenty cpuid instructions at every start, and on a virtual machine each
 * is a trap to the hypervisor (4 µs on the development machine), a few
 * percent of a small input's whole run. */
#ifndef GPUBATCH_IO_CPU_H
#define GPUBATCH_IO_CPU_H

enum {
    CPU_PCLMUL = 1 << 0,  /* PCLMULQDQ with SSE4.1 */
    CPU_AVX2 = 1 << 1,    /* AVX2 and FMA, the YMM state saved by the system */
    CPU_AVX512 = 1 << 2,  /* AVX-512 F, BW, DQ and VL, the ZMM state saved too */
    CPU_VPCLMUL = 1 << 3, /* VPCLMULQDQ on YMM registers (with CPU_AVX2) */
    CPU_BMI2 = 1 << 4,    /* BMI1 and BMI2: bit-field and flagless shift instructions */
};

/* The CPU_* bits this process may use (0 off x86-64). */
unsigned cpu_features(void);

#endif
