// bench_quadratic.cu - times the embedded quadratic kernels on coefficients
// already in device memory against a device-to-device copy and a naive fused
// kernel (the textbook formula), in one run: qdk_rows (rows in, complex rows
// out) and qdk_strided for planes in and/or root planes out. Effective
// bandwidth counts the 12 (24) bytes read and 16 (32) bytes written per
// float32 (float64) equation. It also checks that every layout gives the
// same bits as qdk_rows (exit status 1 otherwise).
#include <cuda.h>
#include <cuda_runtime.h>

#include "bench_common.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>

#include "ptx/quadratic_math.h"
#include "ptx/quadratic_tiles.h"

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

// Copies (N, 3) rows into (3, N) planes.
template <class T> __global__ void to_planes(const T *rows, unsigned long long n, T *planes)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        for (int k = 0; k < 3; k++)
            planes[k * n + i] = rows[3 * i + k];
}

// Counts the equations whose roots in got (strides out_row, out_root,
// out_im) differ in any bit from the complex rows in want.
template <class T>
__global__ void count_diff(const T *want, const T *got, unsigned long long n, unsigned long long out_row,
                           unsigned long long out_root, unsigned long long out_im,
                           unsigned long long *diff)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const T *w = want + 4 * i, *g = got + i * out_row;
        T v[4] = {g[0], g[out_im], g[out_root], g[out_root + out_im]};
        bool same = true;
        for (int k = 0; k < 4; k++) {
            unsigned long long wb = 0, gb = 0;
            memcpy(&wb, &w[k], sizeof(T));
            memcpy(&gb, &v[k], sizeof(T));
            same = same && wb == gb;
        }
        if (!same)
            atomicAdd(diff, 1ull);
    }
}

static unsigned long long tile_rows = QD_TILE_ROWS; // rows per block of qdk_rows

template <class T> static void run(const char *ptx_path, unsigned long long n, int reps, int *bad)
{
    CUmodule mod;
    CUfunction k_rows, k_strided;
    char *ptx = bench_read_file(ptx_path);
    if (cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&k_rows, mod, "qdk_rows") != CUDA_SUCCESS ||
        cuModuleGetFunction(&k_strided, mod, "qdk_strided") != CUDA_SUCCESS) {
        fprintf(stderr, "cannot load %s\n", ptx_path);
        exit(1);
    }
    T *in, *planes, *out, *out2;
    unsigned long long *diff;
    CK(cudaMalloc(&in, n * 3 * sizeof(T)));
    CK(cudaMalloc(&planes, n * 3 * sizeof(T)));
    CK(cudaMalloc(&out, n * 4 * sizeof(T)));
    CK(cudaMalloc(&out2, n * 4 * sizeof(T)));
    CK(cudaMalloc(&diff, sizeof *diff));
    fill<<<4096, 256>>>(in, n);
    to_planes<<<4096, 256>>>(in, n, planes);
    CK(cudaDeviceSynchronize());
    const char *type = sizeof(T) == 4 ? "float32" : "float64";
    double bytes = (double)n * 7 * sizeof(T);
    size_t copy_bytes = n * 3 * sizeof(T);
    float t_copy = bench_median_ms([&] { cudaMemcpyAsync(out, in, copy_bytes, cudaMemcpyDeviceToDevice); }, reps);
    double copy_gbs = 2.0 * copy_bytes / t_copy / 1e6;
    unsigned grid = (unsigned)std::min<unsigned long long>((n + 255) / 256, 0x7fffffffull);
    printf("%s n=%llu: copy %.1f GB/s\n", type, n, copy_gbs);
    auto report = [&](const char *what, float ms) {
        printf("  %-26s %8.3f ms %7.1f GB/s = %.3f of copy\n", what, ms, bytes / ms / 1e6,
               bytes / ms / 1e6 / copy_gbs);
    };
    unsigned grid_rows = (unsigned)std::min<unsigned long long>((n + tile_rows - 1) / tile_rows, 0x7fffffffull);
    void *params[] = {&in, &n, &out};
    report("qdk_rows rows->complex", bench_median_ms([&] { cuLaunchKernel(k_rows, grid_rows, 1, 1, 256, 1, 1, 0, 0, params, NULL); }, reps));
    // qdk_strided in the three other layouts, each checked against qdk_rows.
    struct { const char *what; int planes_in, planes_out; } cases[] = {
        {"qdk_strided planes->complex", 1, 0}, {"qdk_strided rows->planes", 0, 1}, {"qdk_strided planes->planes", 1, 1}};
    for (auto &c : cases) {
        T *src = c.planes_in ? planes : in;
        unsigned long long in_row = c.planes_in ? 1 : 3, in_plane = c.planes_in ? n : 1;
        unsigned long long out_row = c.planes_out ? 1 : 4, out_root = c.planes_out ? n : 2,
                           out_im = c.planes_out ? 2 * n : 1;
        void *sp[] = {&src, &n, &in_row, &in_plane, &out2, &out_row, &out_root, &out_im};
        report(c.what, bench_median_ms([&] { cuLaunchKernel(k_strided, grid, 1, 1, 256, 1, 1, 0, 0, sp, NULL); }, reps));
        unsigned long long nd = 0;
        CK(cudaMemset(diff, 0, sizeof *diff));
        count_diff<<<4096, 256>>>(out, out2, n, out_row, out_root, out_im, diff);
        CK(cudaMemcpy(&nd, diff, sizeof nd, cudaMemcpyDeviceToHost));
        if (nd) {
            printf("  MISMATCH: %s differs from qdk_rows in %llu equations\n", c.what, nd);
            *bad = 1;
        }
    }
    report("naive rows->complex", bench_median_ms([&] { naive_rows<T><<<grid, 256>>>(in, n, out); }, reps));
    CK(cudaGetLastError());
    cudaFree(diff);
    cudaFree(out2);
    cudaFree(out);
    cudaFree(planes);
    cudaFree(in);
    cuModuleUnload(mod);
}

int main(int argc, char **argv)
{
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 250000000ull;
    int bad = 0;
    CK(cudaFree(0));
    // Other builds of the kernels (tuning): argv[2], argv[3] name their PTX,
    // argv[4] their QD_TILE_ROWS.
    if (argc > 4)
        tile_rows = strtoull(argv[4], NULL, 10);
    run<float>(argc > 3 ? argv[2] : "build/ptx/quadratic_f32.compute_75.ptx", n, 20, &bad);
    run<double>(argc > 3 ? argv[3] : "build/ptx/quadratic_f64.compute_75.ptx", n, 10, &bad);
    return bad;
}
