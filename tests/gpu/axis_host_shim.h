// axis_host_shim.h - just enough of CUDA's device language for a C++
// compiler to build ptx/axis.cu for the host, so that a kernel body can be
// run one thread at a time on the CPU (axis_cols_host.cpp): qualifiers
// vanish, shared memory is static, blockIdx and threadIdx are globals the
// caller sets, loads are plain reads, and warp exchanges return the
// caller's own value (a body that exchanges across lanes gives no
// meaningful result here).
#ifndef GPUBATCH_TESTS_AXIS_HOST_SHIM_H
#define GPUBATCH_TESTS_AXIS_HOST_SHIM_H

#include <cmath>
#include <cstdint>
#include <cstring>

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// A kernel's dynamic shared memory: as much as any launch of ptx/axis.cu
// asks for (the short-run kernels' widest stage).
#define AX_DYNAMIC_SHARED(name)                                                             \
    static __attribute__((aligned(128))) unsigned char name[AX_ROWS_WIDE_BYTES + 128]

// The thread's place in the grid (the caller sets blockIdx.x and threadIdx.x).
struct shim_dim3 {
    unsigned x, y, z;
};
static shim_dim3 blockIdx, threadIdx, blockDim = {256, 1, 1}, gridDim;

// The vector types the kernels load and stage.
struct uint2 {
    unsigned x, y;
};
struct uint4 {
    unsigned x, y, z, w;
};
struct ulonglong2 {
    unsigned long long x, y;
};

// A uint4 from its four words.
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w)
{
    return uint4{x, y, z, w};
}

// A read through the read-only path: a plain read.
template <class T> T __ldg(const T *p)
{
    return *p;
}

// A warp exchange: the caller's own value (one thread at a time).
template <class T> T __shfl_sync(unsigned, T v, int, int = 32)
{
    return v;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int, int = 32)
{
    return v;
}
template <class T> T __shfl_down_sync(unsigned, T v, int, int = 32)
{
    return v;
}
template <class T> T __shfl_up_sync(unsigned, T v, int, int = 32)
{
    return v;
}

// A barrier: nothing to wait for (one thread at a time).
static inline void __syncthreads() {}
static inline void __syncwarp(unsigned = 0) {}

// The bit intrinsics, by the compiler's builtins (0 in, the width out).
#define __popcll __builtin_popcountll
#define __popc __builtin_popcount
#define __ffsll __builtin_ffsll
#define __ffs __builtin_ffs
static inline int __clzll(long long x)
{
    return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __clz(int x)
{
    return x ? __builtin_clz((unsigned)x) : 32;
}

// The 32 bits of x in reverse order.
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

// The reinterpretations of a value's bits.
static inline long long __double_as_longlong(double d)
{
    long long r;
    memcpy(&r, &d, 8);
    return r;
}
static inline double __longlong_as_double(long long d)
{
    double r;
    memcpy(&r, &d, 8);
    return r;
}
static inline unsigned __float_as_uint(float d)
{
    unsigned r;
    memcpy(&r, &d, 4);
    return r;
}
static inline float __uint_as_float(unsigned d)
{
    float r;
    memcpy(&r, &d, 4);
    return r;
}

#endif
