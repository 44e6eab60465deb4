// bench_quadratic.cu - times the embedded quadratic kernel on coefficients
// already in device memory against a device-to-device copy and a naive fused
// kernel (the textbook formula), in one run. Effective bandwidth counts the
// 12 (24) bytes read and 16 (32) bytes written per float32 (float64) row.
#include <cuda.h>
#include <cuda_runtime.h>

#include "tests/gpu/bench_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ptx/quadratic_math.h"

#define CK(x) BENCH_CHECK(x)

// The textbook formula in one fused pass, for contrast.
template <class T> __global__ void naive_rows(const T *in, unsigned long long n, T *out)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        T r[4];
        if (sizeof(T) == 4)
            qd_naive_f32(in[3 * i], in[3 * i + 1], in[3 * i + 2], (float *)&r[0], (float *)&r[1],
                         (float *)&r[2], (float *)&r[3]);
        else
            qd_naive_f64(in[3 * i], in[3 * i + 1], in[3 * i + 2], (double *)&r[0], (double *)&r[1],
                         (double *)&r[2], (double *)&r[3]);
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = r[k];
    }
}

// Fills coefficients on the device from a hash of the index: varied
// magnitudes and signs, a quarter with complex roots.
template <class T> __global__ void fill(T *in, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < 3 * n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long h = i * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 32;
        double u = (double)(h >> 11) * 0x1p-53;
        in[i] = (T)((u - 0.25) * (double)(1ull << (h & 15)));
    }
}

template <class T> static void run(const char *ptx_path, unsigned long long n, int reps)
{
    CUmodule mod;
    CUfunction k;
    char *ptx = bench_read_file(ptx_path);
    if (cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&k, mod, "qdk_rows") != CUDA_SUCCESS) {
        fprintf(stderr, "cannot load %s\n", ptx_path);
        exit(1);
    }
    T *in, *out;
    CK(cudaMalloc(&in, n * 3 * sizeof(T)));
    CK(cudaMalloc(&out, n * 4 * sizeof(T)));
    fill<<<4096, 256>>>(in, n);
    CK(cudaDeviceSynchronize());
    double bytes = (double)n * 7 * sizeof(T);
    size_t copy_bytes = n * 3 * sizeof(T);
    float t_copy = bench_median_ms([&] { cudaMemcpyAsync(out, in, copy_bytes, cudaMemcpyDeviceToDevice); }, reps);
    double copy_gbs = 2.0 * copy_bytes / t_copy / 1e6;
    unsigned grid = (unsigned)std::min<unsigned long long>((n + 255) / 256, 0x7fffffffull);
    void *params[] = {&in, &n, &out};
    float t_ours = bench_median_ms([&] { cuLaunchKernel(k, grid, 1, 1, 256, 1, 1, 0, 0, params, NULL); }, reps);
    float t_naive = bench_median_ms([&] { naive_rows<T><<<grid, 256>>>(in, n, out); }, reps);
    CK(cudaGetLastError());
    printf("%s n=%llu: copy %.1f GB/s; accurate %.3f ms %.1f GB/s = %.3f of copy; naive %.3f ms %.1f GB/s = %.3f of copy\n",
           sizeof(T) == 4 ? "float32" : "float64", n, copy_gbs, t_ours, bytes / t_ours / 1e6,
           bytes / t_ours / 1e6 / copy_gbs, t_naive, bytes / t_naive / 1e6, bytes / t_naive / 1e6 / copy_gbs);
    cudaFree(in);
    cudaFree(out);
}

int main(int argc, char **argv)
{
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 250000000ull;
    CK(cudaFree(0));
    run<float>("ptx/quadratic_f32.compute_75.ptx", n, 20);
    run<double>("ptx/quadratic_f64.compute_75.ptx", n, 10);
    return 0;
}
