// bench_transpose.cu - times the embedded transpose kernels (the committed
// PTX, JIT-compiled by the driver as gpubatch does) on matrices already in
// device memory against a device-to-device copy of the same bytes, in one
// run, and checks every result against a plain one-element-per-thread
// transpose. Bandwidth counts bytes read + bytes written.
#include <cuda.h>
#include <cuda_runtime.h>

#include "bench_common.h"
#include "ptx/transpose_tiles.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));  \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// The reference: one thread per element, any element size (bytes).
__global__ void ref_transpose(const unsigned char *in, unsigned char *out, unsigned long long b,
                              unsigned long long r, unsigned long long c, unsigned e)
{
    unsigned long long n = b * r * c;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long m = i / (r * c), k = i % (r * c), row = k / c, col = k % c;
        unsigned long long o = m * r * c + col * r + row;
        for (unsigned j = 0; j < e; j++)
            out[o * e + j] = in[i * e + j];
    }
}

// Fills bytes from a hash of the index.
__global__ void fill(unsigned *p, unsigned long long words)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < words;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long h = (i + 1) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 31;
        p[i] = (unsigned)(h * 0xbf58476d1ce4e5b9ull >> 32);
    }
}

static CUmodule mod;
static bool force_any; // time the any-shape kernels instead of the vector and odd-shape ones

// Times one shape; prints a line. Returns 0 when the output is right.
static int run(unsigned e, unsigned long long b, unsigned long long r, unsigned long long c, int reps)
{
    unsigned long long bytes = b * r * c * e;
    unsigned k = 16 / e;
    bool vec = r % k == 0 && c % k == 0 && !(force_any && e < 16);
    char name[32];
    snprintf(name, sizeof name, "tpk_%s_e%u", vec ? "vec" : (e == 4 || e == 8) && !force_any ? "odd" : "any", e);
    bool odd = name[4] == 'o';
    unsigned tr = vec ? TP_VEC_TR(e) : odd ? TP_ODD_TR(e) : TP_ANY_TS;
    unsigned tc = vec ? TP_VEC_TC(e) : odd ? TP_ODD_TC : TP_ANY_TS;
    unsigned threads = vec ? TP_VEC_NT(e) : odd ? TP_ODD_NT : TP_ANY_NT;
    CUfunction f;
    if (cuModuleGetFunction(&f, mod, name) != CUDA_SUCCESS) {
        fprintf(stderr, "no kernel %s\n", name);
        return 1;
    }
    unsigned char *in, *out, *ref;
    CK(cudaMalloc(&in, bytes + 16)); // the odd-shape kernel reads up to the next vector
    CK(cudaMemset(in, 0, bytes + 16));
    CK(cudaMalloc(&out, bytes));
    CK(cudaMalloc(&ref, bytes));
    fill<<<4096, 256>>>((unsigned *)in, bytes / 4);
    ref_transpose<<<8192, 256>>>(in, ref, b, r, c, e);
    CK(cudaMemset(out, 0xa5, bytes)); // poison
    unsigned long long tiles = b * ((r + tr - 1) / tr) * ((c + tc - 1) / tc), tile0 = 0;
    void *params[] = {&in, &out, &r, &c, &tile0};
    auto launch = [&] { cuLaunchKernel(f, (unsigned)tiles, 1, 1, threads, 1, 1, 0, 0, params, NULL); };
    launch();
    CK(cudaDeviceSynchronize());
    unsigned char *h1 = (unsigned char *)malloc(bytes), *h2 = (unsigned char *)malloc(bytes);
    CK(cudaMemcpy(h1, out, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2, ref, bytes, cudaMemcpyDeviceToHost));
    int bad = memcmp(h1, h2, bytes) != 0;
    free(h1);
    free(h2);
    float t_copy = bench_median_ms([&] { cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); }, reps);
    float t_ours = bench_median_ms(launch, reps);
    CK(cudaGetLastError());
    double copy_gbs = 2.0 * bytes / t_copy / 1e6, ours_gbs = 2.0 * bytes / t_ours / 1e6;
    char shape[64];
    if (b > 1)
        snprintf(shape, sizeof shape, "(%llu,%llu,%llu)", b, r, c);
    else
        snprintf(shape, sizeof shape, "%llux%llu", r, c);
    printf("transpose %-16s e=%-2u %-12s %8.3f ms %7.1f GB/s  copy %7.1f GB/s  = %.3f of copy%s\n", shape,
           e, name, t_ours, ours_gbs, copy_gbs, ours_gbs / copy_gbs, bad ? "  WRONG OUTPUT" : "");
    cudaFree(in);
    cudaFree(out);
    cudaFree(ref);
    return bad;
}

int main(int argc, char **argv)
{
    const char *ptx_path = argc > 1 ? argv[1] : "build/ptx/transpose.compute_75.ptx";
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    force_any = argc > 3 && !strcmp(argv[3], "any");
    CK(cudaFree(0));
    char *ptx = bench_read_file(ptx_path);
    if (cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS) {
        fprintf(stderr, "cannot load %s\n", ptx_path);
        return 1;
    }
    int bad = 0;
    bad |= run(4, 1, 8192, 8192, reps);
    bad |= run(4, 1, 16384, 16384, reps);
    bad |= run(4, 1, 8191, 8193, reps);
    bad |= run(4, 1, 1ull << 20, 64, reps);
    bad |= run(4, 4096, 64, 64, reps);
    bad |= run(1, 1, 16384, 16384, reps);
    bad |= run(2, 1, 16384, 8192, reps);
    bad |= run(8, 1, 8192, 4096, reps);
    bad |= run(16, 1, 4096, 4096, reps);
    bad |= run(1, 1, 16383, 16385, reps);
    bad |= run(8, 1, 8191, 4097, reps);
    return bad;
}
