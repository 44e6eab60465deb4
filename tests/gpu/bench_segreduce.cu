// bench_segreduce.cu - CUB's segmented sum on the shapes of the along-axis
// rows of tests/gpu/axis_gpu.c (bench): float32 and float64, 1 GiB, (R, N)
// over axis 1 (segments of N contiguous elements) and (N, C) over axis 0
// (segments of a column, read through a strided iterator), with the
// device-to-device copy measured in the same run; GB/s of input and the
// ratio to the copy (read + write).
//
// Build: nvcc -O2 -std=c++17 -I. tests/gpu/bench_segreduce.cu (test_axis_gpu.sh).
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "bench_common.h"

// Element k of the column-major view of an (N, C) row-major array.
template <class T> struct column_at {
    const T *x;
    unsigned long long n, c;
    __host__ __device__ T operator()(unsigned long long k) const
    {
        return x[(k % n) * c + k / n];
    }
};

// Segment s starts at s * len.
struct seg_start {
    unsigned long long len;
    __host__ __device__ unsigned long long operator()(unsigned long long s) const
    {
        return s * len;
    }
};

// Times one segmented sum of nseg segments of len elements from `in`.
template <class T, class It>
static float time_segments(It in, unsigned long long nseg, unsigned long long len, T *out)
{
    auto offs = thrust::make_transform_iterator(thrust::make_counting_iterator(0ull), seg_start{len});
    size_t tmp_bytes = 0;
    BENCH_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, tmp_bytes, in, out, (int)nseg, offs, offs + 1));
    void *tmp = nullptr;
    BENCH_CHECK(cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1));
    float ms = bench_median_ms(
        [&] { cub::DeviceSegmentedReduce::Sum(tmp, tmp_bytes, in, out, (int)nseg, offs, offs + 1); },
        5);
    cudaFree(tmp);
    return ms;
}

// The rows of one element type.
template <class T> static void rows(const char *name, void *data, size_t bytes, double copy_bw)
{
    static const unsigned long long cs[] = {1, 3, 64, 1000, 100000}, ns[] = {3, 64, 1000, 1000000};
    const unsigned long long nel = bytes / sizeof(T);
    T *out;
    BENCH_CHECK(cudaMalloc(&out, nel / 3 * sizeof(T) + sizeof(T)));
    for (int k = 0; k < 5; k++) {
        unsigned long long c = cs[k], n = nel / c;
        auto in = thrust::make_transform_iterator(thrust::make_counting_iterator(0ull),
                                                  column_at<T>{(const T *)data, n, c});
        float ms = time_segments<T>(in, c, n, out);
        double bw = (double)(n * c * sizeof(T)) / (ms * 1e-3);
        printf("cub %-8s axis 0 %10llu %10llu %10.0f %8.2f\n", name, n, c, bw / 1e9, bw / copy_bw);
    }
    for (int k = 0; k < 4; k++) {
        unsigned long long len = ns[k], r = nel / len;
        float ms = time_segments<T>((const T *)data, r, len, out);
        double bw = (double)(r * len * sizeof(T)) / (ms * 1e-3);
        printf("cub %-8s axis 1 %10llu %10llu %10.0f %8.2f\n", name, r, len, bw / 1e9, bw / copy_bw);
    }
    cudaFree(out);
}

int main()
{
    const size_t bytes = (size_t)1 << 30;
    void *data, *copy;
    BENCH_CHECK(cudaMalloc(&data, bytes));
    BENCH_CHECK(cudaMalloc(&copy, bytes));
    BENCH_CHECK(cudaMemset(data, 0x3c, bytes));
    float cms = bench_median_ms([&] { cudaMemcpy(copy, data, bytes, cudaMemcpyDeviceToDevice); }, 10);
    double copy_bw = 2.0 * bytes / (cms * 1e-3);
    printf("device copy: %.0f GB/s (read + write)\n", copy_bw / 1e9);
    rows<float>("float32", data, bytes, copy_bw);
    rows<double>("float64", data, bytes, copy_bw);
    return 0;
}
