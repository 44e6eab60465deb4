// compare.cu - library equivalents of the ops `gpubatch bench` times, on the
// same sizes, in one run: CUB DeviceReduce::Sum over float32, cuBLAS sgeam
// (the library transpose) of an N x N float32 matrix, and CUB DeviceFor::Bulk
// running the textbook formula over separate arrays and the accurate solver
// (ptx/quadratic_math.h) over (N, 3) rows, plus the device copy. Prints one
// line "OP SIZE IMPL MS" per measurement (median of REPS event-timed runs
// after two warm-ups, bench_common.h). tests/gpu/compare.sh builds and runs it.
//
// Usage: compare REDUCE_SIZES TRANSPOSE_SIZES QUADRATIC_SIZES [REPS]
// (comma-separated lists; "-" for none).
#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_common.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ptx/quadratic_math.h"

#define CK(x) BENCH_CHECK(x)

// Deterministic floats in [-1, 1) from a hash of the index.
__global__ void fill(float *x, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long h = (i + 1) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
        x[i] = (float)((double)(h >> 11) * 0x1p-52 - 1.0);
    }
}

// The sizes of a comma-separated list ("-" or empty: none).
static std::vector<unsigned long long> parse_list(const char *s)
{
    std::vector<unsigned long long> v;
    while (s && *s && strcmp(s, "-")) {
        char *end;
        unsigned long long n = strtoull(s, &end, 10);
        if (end == s)
            break;
        v.push_back(n);
        s = *end == ',' ? end + 1 : end;
    }
    return v;
}

// Device buffer of n floats filled by fill().
static float *device_floats(unsigned long long n)
{
    float *p;
    CK(cudaMalloc(&p, (n ? n : 1) * sizeof(float)));
    fill<<<4096, 256>>>(p, n);
    CK(cudaDeviceSynchronize());
    return p;
}

// CUB's sum of n float32, and the device copy of the same bytes.
static void reduce_rows(unsigned long long n, int reps)
{
    float *x = device_floats(n), *sum, *dst;
    CK(cudaMalloc(&sum, sizeof(float)));
    CK(cudaMalloc(&dst, n * sizeof(float)));
    size_t temp_bytes = 0;
    CK(cub::DeviceReduce::Sum(NULL, temp_bytes, x, sum, (long long)n));
    void *temp;
    CK(cudaMalloc(&temp, temp_bytes));
    float ms = bench_median_ms([&] { cub::DeviceReduce::Sum(temp, temp_bytes, x, sum, (long long)n); }, reps);
    printf("reduce %llu cub-DeviceReduce::Sum %.6f\n", n, ms);
    ms = bench_median_ms([&] { cudaMemcpyAsync(dst, x, n * sizeof(float), cudaMemcpyDeviceToDevice); }, reps);
    printf("reduce %llu device-copy %.6f\n", n, ms);
    CK(cudaGetLastError());
    cudaFree(temp);
    cudaFree(sum);
    cudaFree(dst);
    cudaFree(x);
}

// cuBLAS's transpose of an N x N float32 matrix: C = 1 * A^T + 0 * B.
static void transpose_rows(unsigned long long n, int reps)
{
    float *a = device_floats(n * n), *b;
    CK(cudaMalloc(&b, n * n * sizeof(float)));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        exit(1);
    }
    const float one = 1.0f, zero = 0.0f;
    int ni = (int)n;
    float ms = bench_median_ms([&] {
        cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, ni, ni, &one, a, ni, &zero, b, ni, b, ni);
    }, reps);
    CK(cudaDeviceSynchronize());
    // The library must have transposed: spot-check a few elements.
    std::vector<float> ha(n * n), hb(n * n);
    CK(cudaMemcpy(ha.data(), a, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), b, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    for (unsigned long long k = 0; k < 1000; k++) {
        unsigned long long i = (k * 7919) % n, j = (k * 104729) % n;
        if (memcmp(&hb[j * n + i], &ha[i * n + j], sizeof(float))) {
            fprintf(stderr, "cublasSgeam did not transpose (%llu, %llu)\n", i, j);
            exit(1);
        }
    }
    printf("transpose %llu cublas-sgeam %.6f\n", n, ms);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
}

// The textbook formula over separate arrays, one equation per index.
struct textbook_soa {
    const float *a, *b, *c;
    float *re1, *re2, *im1, *im2;
    __device__ void operator()(long long i) const
    {
        qd_naive_f32(a[i], b[i], c[i], &re1[i], &im1[i], &re2[i], &im2[i]);
    }
};

// The accurate solver over (N, 3) rows into (N, 4) roots.
struct accurate_rows {
    const float *in;
    float *out;
    __device__ void operator()(long long i) const
    {
        const float *r = in + 3 * i;
        float *o = out + 4 * i;
        qd_solve_f32(r[0], r[1], r[2], &o[0], &o[1], &o[2], &o[3]);
    }
};

// CUB DeviceFor::Bulk running both solvers over n float32 equations.
static void quadratic_rows(unsigned long long n, int reps)
{
    float *in = device_floats(3 * n), *out;
    CK(cudaMalloc(&out, 4 * n * sizeof(float)));
    textbook_soa t = {in, in + n, in + 2 * n, out, out + n, out + 2 * n, out + 3 * n};
    float ms = bench_median_ms([&] { cub::DeviceFor::Bulk((long long)n, t); }, reps);
    printf("quadratic %llu cub-Bulk-textbook-soa %.6f\n", n, ms);
    accurate_rows r = {in, out};
    ms = bench_median_ms([&] { cub::DeviceFor::Bulk((long long)n, r); }, reps);
    printf("quadratic %llu cub-Bulk-accurate-rows %.6f\n", n, ms);
    CK(cudaGetLastError());
    cudaFree(in);
    cudaFree(out);
}

// Times every library equivalent at the sizes given.
int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: compare REDUCE_SIZES TRANSPOSE_SIZES QUADRATIC_SIZES [REPS]\n");
        return 2;
    }
    int reps = argc > 4 ? atoi(argv[4]) : 20;
    CK(cudaFree(0));
    for (unsigned long long n : parse_list(argv[1]))
        reduce_rows(n, reps);
    for (unsigned long long n : parse_list(argv[2]))
        transpose_rows(n, reps);
    for (unsigned long long n : parse_list(argv[3]))
        quadratic_rows(n, reps);
    return 0;
}
