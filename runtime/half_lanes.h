/* half_lanes.h - float16 to float32 for the CPU code's loops: the value of
 * ptx/half_math.h's hf_f16_to_f32 (every float16 is a float32, so both are
 * exact and give the same bits), without its branch, so that a loop of it
 * vectorizes in each instruction-set variant that inlines it. */
#ifndef GPUBATCH_RUNTIME_HALF_LANES_H
#define GPUBATCH_RUNTIME_HALF_LANES_H

#include <stdint.h>
#include <string.h>

/* The float16 with bits h as a float32: the magnitude's bits moved into a
 * float32's (exponent 15 below its bias) and scaled by 2^112, exact for
 * numbers and zeros (a subnormal half is a subnormal float32 scaled into
 * range); infinities and NaNs with the exponent all ones and the payload
 * kept; the sign put back last. */
static inline __attribute__((always_inline)) float hl_f16_to_f32(uint16_t h)
{
    uint32_t m = (uint32_t)(h & 0x7fffu) << 13, s = (uint32_t)(h & 0x8000u) << 16, u;
    float f;
    memcpy(&f, &m, 4);
    f *= 0x1p112f;
    memcpy(&u, &f, 4);
    u = (h & 0x7c00u) == 0x7c00u ? m | 0x7f800000u : u;
    u |= s;
    memcpy(&f, &u, 4);
    return f;
}

#endif
