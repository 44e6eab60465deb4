/* half_math.h - the 16-bit float formats, read exactly: IEEE binary16
 * (numpy's float16: 1 sign, 5 exponent, 10 fraction bits) and bfloat16 (1
 * sign, 8 exponent, 7 fraction bits: the top half of a float32). Compiled
 * both as CUDA (the kernels) and as C (the CPU backend): the CPU converts
 * from the bits with integer operations and exact float32 ones, the GPU a
 * float16 number by its conversion instruction; every conversion is exact,
 * so both produce the same bits, and no compiler-specific half type
 * (_Float16, __half) is needed.
 *
 * Every float16 and bfloat16 value is a float32 value (subnormals, signed
 * zeros and infinities included), so the conversions are exact; a NaN keeps
 * its sign and its payload in the top fraction bits (a signaling NaN stays
 * signaling). Elements are passed as their bits, in an unsigned int. */
#ifndef GPUBATCH_PTX_HALF_MATH_H
#define GPUBATCH_PTX_HALF_MATH_H

#include <string.h>

#ifdef __CUDACC__
#ifndef GB_HD
#define GB_HD __host__ __device__ __forceinline__
#endif
#else
#ifndef GB_HD
#define GB_HD static inline
#endif
#endif

/* The float32 with bits u. */
GB_HD float hf_f32_from_bits(unsigned u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The float16 with bits h (low 16 bits), as a float32. On the GPU a
 * number or an infinity goes through the hardware's conversion, which is
 * exact and several times faster than the fields moved one by one. A
 * normal number, an infinity or a NaN moves its fields over (exponent rebiased from 15 to
 * 127, fraction and NaN payload shifted up); a subnormal or zero, frac *
 * 2^-24, is computed as such: the integer frac < 2^10 converts exactly and
 * the product is a normal float32, so both steps are exact on any IEEE
 * machine, with or without flush-to-zero. */
GB_HD float hf_f16_to_f32(unsigned h)
{
#ifdef __CUDA_ARCH__
    /* the GPU's conversion instruction is exact too (subnormals included);
     * NaNs keep the path below, which keeps their payload */
    if ((h & 0x7fffu) <= 0x7c00u) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
        return f;
    }
#endif
    unsigned sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)frac * 0x1p-24f;
        return sign ? -v : v;
    }
    unsigned e32 = exp == 0x1fu ? 0xffu : exp + 112u;
    return hf_f32_from_bits(sign | e32 << 23 | frac << 13);
}

/* The float16 with bits h (low 16 bits), as a double: on the GPU one
 * conversion instruction for a number or an infinity (exact), which the
 * reduction's per-element work is bound by; hf_f16_to_f32's value anywhere
 * else. */
GB_HD double hf_f16_to_f64(unsigned h)
{
#ifdef __CUDA_ARCH__
    if ((h & 0x7fffu) <= 0x7c00u) {
        double d;
        asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"((unsigned short)h));
        return d;
    }
#endif
    return (double)hf_f16_to_f32(h);
}

/* The bfloat16 with bits h (low 16 bits), as a float32: its top half. */
GB_HD float hf_bf16_to_f32(unsigned h)
{
    return hf_f32_from_bits((h & 0xffffu) << 16);
}

/* Nonzero when the float16 with bits h is a NaN. */
GB_HD int hf_f16_isnan(unsigned h)
{
    return (h & 0x7fffu) > 0x7c00u;
}

/* Nonzero when the bfloat16 with bits h is a NaN. */
GB_HD int hf_bf16_isnan(unsigned h)
{
    return (h & 0x7fffu) > 0x7f80u;
}

#endif
