// bench_common.h - what the GPU benchmark programs share: the median of
// event-timed runs after warm-up, and reading a PTX file.
#ifndef GPUBATCH_TESTS_BENCH_COMMON_H
#define GPUBATCH_TESTS_BENCH_COMMON_H

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Evaluates a CUDA runtime call; on failure prints call, place and error and
// exits.
#define BENCH_CHECK(x)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// Median time in ms of reps runs of fn on the default stream, after two
// warm-up runs; exits on a CUDA error.
template <class F> static float bench_median_ms(F fn, int reps)
{
    cudaEvent_t a, b;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
        exit(1);
    fn();
    fn();
    std::vector<float> t;
    for (int i = 0; i < reps; i++) {
        cudaEventRecord(a);
        fn();
        cudaEventRecord(b);
        if (cudaEventSynchronize(b) != cudaSuccess) {
            fprintf(stderr, "benchmark run failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            exit(1);
        }
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

// The whole file as a NUL-terminated string (PTX text); exits on failure.
static char *bench_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)malloc(n + 1);
    if (!buf || fread(buf, 1, n, f) != (size_t)n)
        exit(1);
    buf[n] = 0;
    fclose(f);
    return buf;
}

#endif
