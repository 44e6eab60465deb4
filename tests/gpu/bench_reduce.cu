// bench_reduce.cu [PTX [REPS [DTYPE]]] - times a sum kernel (PTX, by
// default the embedded float32 one) on data already in device memory
// against CUB DeviceReduce::Sum of float32 data of the same bytes and a
// device-to-device copy, in one run, and checks that the GPU sum has the
// CPU backend's bits. DTYPE (float32, float16 or bfloat16) is the PTX's
// element type: the 16-bit types get the float32 data's values rounded
// toward zero (normal numbers of the same exponents).
//
// Build (needs the CUDA toolkit; gpubatch itself does not):
//   gcc -std=c11 -O2 -ffp-contract=off -I. -c runtime/reduce.c io/dtype.c ...
//   nvcc -O2 -I. tests/gpu/bench_reduce.cu reduce.o dtype.o backend.o ... -lcuda
// tests/gpu/run.sh does this.
#include <cub/cub.cuh>
#include <cuda.h>
#include <cuda_runtime.h>

#include "bench_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "runtime/reduce.h"
}

#define CHECK_RT(x) BENCH_CHECK(x)
#define CHECK_DRV(x)                                                                     \
    do {                                                                                 \
        CUresult r_ = (x);                                                               \
        if (r_ != CUDA_SUCCESS) {                                                        \
            const char *s_ = "";                                                         \
            cuGetErrorString(r_, &s_);                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);              \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    const char *ptx_path = argc > 1 ? argv[1] : "build/ptx/reduce_f32_moments.compute_75.ptx";
    int reps = argc > 2 ? atoi(argv[2]) : 30;
    const char *dtype_name = argc > 3 ? argv[3] : "float32";
    dt_type dtype = !strcmp(dtype_name, "float16") ? DT_F16 : !strcmp(dtype_name, "bfloat16") ? DT_BF16 : DT_F32;
    if (dtype == DT_F32 && strcmp(dtype_name, "float32")) {
        fprintf(stderr, "bench_reduce: unknown dtype %s (float32, float16, bfloat16)\n", dtype_name);
        return 2;
    }
    const size_t esize = dtype == DT_F32 ? 4 : 2;
    CHECK_RT(cudaFree(0));
    CUmodule mod;
    char *ptx = bench_read_file(ptx_path);
    CHECK_DRV(cuModuleLoadData(&mod, ptx));
    CUfunction kmom;
    CHECK_DRV(cuModuleGetFunction(&kmom, mod, "rdk_moments"));

    const size_t nmax = (size_t)1 << 30;
    std::vector<float> host(nmax);
    unsigned long long s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < nmax; i++) { // uniform (-1, 1) with varied exponents
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        host[i] = (float)((double)(s >> 11) * 0x1p-52 - 1.0);
    }
    float *dx, *dcopy, *dcub;
    double *dscratch, *dout;
    rd_moments *dpart;
    size_t maxtiles = nmax * 4 / esize / RD_TILE + 1;
    CHECK_RT(cudaMalloc(&dx, nmax * 4));
    CHECK_RT(cudaMalloc(&dcopy, nmax * 4));
    CHECK_RT(cudaMalloc(&dcub, 4));
    CHECK_RT(cudaMalloc(&dpart, maxtiles * sizeof(rd_moments)));
    CHECK_RT(cudaMalloc(&dscratch, (maxtiles / RD_FOLD_SEG + 2) * 8));
    CHECK_RT(cudaMalloc(&dout, 8));
    unsigned *dcounters;
    size_t ncounters = maxtiles / RD_FOLD_SEG + 3;
    CHECK_RT(cudaMalloc(&dcounters, ncounters * sizeof(unsigned)));
    CHECK_RT(cudaMemset(dcounters, 0, ncounters * sizeof(unsigned)));
    // The in-kernel fold: segment counters, segment sums, top counter, result.
    rd_fold_ctl fold = {dcounters + 1, dscratch, dcounters, dout};
    // The elements the kernel reads: the float32 values, or their 16-bit
    // forms truncated (zero and subnormal float16 forms are rare here).
    std::vector<unsigned short> half(dtype == DT_F32 ? 0 : nmax * 2);
    for (size_t i = 0; i < half.size(); i++) {
        unsigned u;
        memcpy(&u, &host[i / 2], 4);
        u ^= (unsigned)(i & 1) << 31; // the pair's second: the opposite sign
        int e = (int)(u >> 23 & 0xff) - 127;
        half[i] = dtype == DT_BF16 ? (unsigned short)(u >> 16)
                  : e < -14        ? (unsigned short)(u >> 16 & 0x8000u)
                                   : (unsigned short)((u >> 16 & 0x8000u) | (unsigned)(e + 15) << 10 |
                                                      (u >> 13 & 0x3ffu));
    }
    const void *elems = dtype == DT_F32 ? (const void *)host.data() : (const void *)half.data();
    CHECK_RT(cudaMemcpy(dx, elems, nmax * 4, cudaMemcpyHostToDevice));

    float copy_ms = bench_median_ms([&] { cudaMemcpyAsync(dcopy, dx, nmax * 4, cudaMemcpyDeviceToDevice); }, reps);
    double copy_gbs = 2.0 * nmax * 4 / copy_ms / 1e6;
    printf("device copy (read+write) of %zu MiB: %.3f ms, %.1f GB/s\n", nmax * 4 >> 20, copy_ms, copy_gbs);
    {
        void *pinned;
        size_t hb = (size_t)1 << 30;
        CHECK_RT(cudaMallocHost(&pinned, hb));
        memset(pinned, 1, hb);
        float h2d_ms = bench_median_ms([&] { cudaMemcpyAsync(dcopy, pinned, hb, cudaMemcpyHostToDevice); }, 10);
        printf("pinned H2D of %zu MiB: %.3f ms, %.1f GB/s\n", hb >> 20, h2d_ms, hb / h2d_ms / 1e6);
        cudaFreeHost(pinned);
    }
    printf("%-10s %10s %10s %10s %10s %8s %8s  %s\n", "n", "ours ms", "ours GB/s", "cub ms", "cub GB/s",
           "ours/cub", "of copy", "bits");
    int failures = 0;
    for (size_t bytes4 = (size_t)1 << 22; bytes4 <= nmax; bytes4 <<= 2) {
        size_t n = bytes4 * 4 / esize; // the kernel's elements; CUB sums bytes4 float32s
        unsigned long long n64 = n, first = 0;
        unsigned ntiles = (unsigned)((n + RD_TILE - 1) / RD_TILE);
        unsigned blocks = ntiles;
        void *pm[] = {&dx, &n64, &first, &dpart, &fold};
        auto ours = [&] { cuLaunchKernel(kmom, blocks, 1, 1, RD_WARPS * 32, 1, 1, 0, 0, pm, NULL); };
        size_t temp_bytes = 0;
        cub::DeviceReduce::Sum(NULL, temp_bytes, dx, dcub, (int)bytes4);
        void *dtemp;
        CHECK_RT(cudaMalloc(&dtemp, temp_bytes));
        auto theirs = [&] { cub::DeviceReduce::Sum(dtemp, temp_bytes, dx, dcub, (int)bytes4); };
        CHECK_RT(cudaMemset(dout, 0xff, 8)); // poison: the kernel must write it
        float t_ours = bench_median_ms(ours, reps);
        float t_cub = bench_median_ms(theirs, reps);
        CHECK_RT(cudaGetLastError());
        CHECK_RT(cudaDeviceSynchronize());
        double gpu_sum;
        CHECK_RT(cudaMemcpy(&gpu_sum, dout, 8, cudaMemcpyDeviceToHost));
        // The CPU backend's value for the same data.
        std::vector<rd_moments> parts(ntiles);
        rd_cpu_tiles(elems, n, 0, dtype, 0, 0, 0, ntiles, parts.data(), NULL);
        rd_state st;
        rd_state_init(&st, dtype, RD_OP_SUM, 0);
        rd_state_add(&st, parts.data(), NULL, NULL, ntiles, n);
        rd_result r;
        rd_state_result(&st, &r);
        int same = memcmp(&gpu_sum, &r.sum, 8) == 0;
        failures += !same;
        double bytes = n * (double)esize;
        printf("%-10zu %10.4f %10.1f %10.4f %10.1f %8.3f %8.3f  %s\n", n, t_ours, bytes / t_ours / 1e6,
               t_cub, bytes / t_cub / 1e6, t_cub / t_ours, (bytes / t_ours / 1e6) / copy_gbs,
               same ? "gpu==cpu" : "MISMATCH");
        if (!same)
            printf("  gpu %.17g cpu %.17g\n", gpu_sum, r.sum);
        cudaFree(dtemp);
    }
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
