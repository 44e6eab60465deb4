// ladder_quadratic.cu - the classic batch quadratic solver ladder for
// `gpubatch bench`, with the textbook formula of the article (qd_naive_f32
// in quadratic_math.h through ladder_math.h, the code the CPU runs), in
// float32; compiled into ptx/ladder_quadratic.compute_NN.ptx. The accurate
// production solver is quadratic.cu.
//
// Array of structs: one record {a, b, c, re x1, re x2, im x1, im x2} per
// equation, roots written into the record. Structure of arrays: a[], b[],
// c[] in, re1[], re2[], im1[], im2[] out. Threads index equations with the
// global index (the published naive kernel used the thread index) and the
// discriminant has one sign throughout (the published code inverted it
// between branches).
#include "ladder_math.h"

#define LQ_BLOCK 256 // threads (and equations) per block

// One thread per record, straight from global memory: a warp's accesses
// stride by 28 bytes.
extern "C" __global__ void __launch_bounds__(LQ_BLOCK)
    lq_aos(float *__restrict__ rec, unsigned long long n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lq_solve_record(rec + LQ_FIELDS * i);
}

// The block's records are copied to shared memory with consecutive threads
// on consecutive words (coalesced), solved there, and copied back.
extern "C" __global__ void __launch_bounds__(LQ_BLOCK)
    lq_aos_shared(float *__restrict__ rec, unsigned long long n)
{
    __shared__ float sh[LQ_BLOCK * LQ_FIELDS];
    const unsigned long long first = (unsigned long long)blockIdx.x * LQ_BLOCK;
    const unsigned long long left = n - first;
    const unsigned count = left < LQ_BLOCK ? (unsigned)left : LQ_BLOCK;
    float *g = rec + LQ_FIELDS * first;
    for (unsigned k = threadIdx.x; k < count * LQ_FIELDS; k += LQ_BLOCK)
        sh[k] = g[k];
    __syncthreads();
    if (threadIdx.x < count)
        lq_solve_record(sh + LQ_FIELDS * threadIdx.x);
    __syncthreads();
    for (unsigned k = threadIdx.x; k < count * LQ_FIELDS; k += LQ_BLOCK)
        g[k] = sh[k];
}

// Separate arrays: every access of a warp is one contiguous segment.
extern "C" __global__ void __launch_bounds__(LQ_BLOCK)
    lq_soa(const float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c,
           float *__restrict__ re1, float *__restrict__ re2, float *__restrict__ im1,
           float *__restrict__ im2, unsigned long long n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float r1, i1, r2, i2;
        qd_naive_f32(a[i], b[i], c[i], &r1, &i1, &r2, &i2);
        re1[i] = r1;
        re2[i] = r2;
        im1[i] = i1;
        im2[i] = i2;
    }
}
