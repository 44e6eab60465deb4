// bench_axis_util.h - what the probes of the along-axis kernels
// (bench_axis_rows.cu, bench_axis_few.cu, bench_axis_cols.cu) share on the
// device: the part arrays of a launch, a kernel that counts the words where
// two outputs differ, timed rows and the timing's input (random elements and
// chunks: axis_probe_host.h). Include after ptx/axis.cu and bench_common.h.
#ifndef GPUBATCH_TESTS_BENCH_AXIS_UTIL_H
#define GPUBATCH_TESTS_BENCH_AXIS_UTIL_H

#include "axis_probe_host.h"

#include <cmath>
#include <cstring>
#include <vector>

// Counts into *bad the 8-byte words of a and b (n of them) that differ, two
// NaNs alike (the GPU's NaNs are canonical either way).
__global__ void diff_words(const double *a, const double *b, size_t n, unsigned *bad)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const double x = a[i], y = b[i];
        if (__double_as_longlong(x) != __double_as_longlong(y) && !(x != x && y != y))
            atomicAdd(bad, 1u);
    }
}

// The output arrays of one launch (n parts).
struct outs {
    unsigned char *sum, *sq, *count, *ext, *var;
    void alloc(size_t n)
    {
        BENCH_CHECK(cudaMalloc(&sum, n * 16));
        BENCH_CHECK(cudaMalloc(&sq, n * 16));
        BENCH_CHECK(cudaMalloc(&count, n * 8));
        BENCH_CHECK(cudaMalloc(&ext, n * sizeof(rd_extrema)));
        BENCH_CHECK(cudaMalloc(&var, n * sizeof(rd_var)));
    }
    // The arrays a kernel of kind `kind` (0 moments, 1 extrema, 2 variance;
    // squares where want_sq, counts where skipnan) writes into args a, their first
    // m parts set to byte fill.
    void set(ax_gpu_args &a, int kind, bool want_sq, bool skipnan, size_t m, int fill = 0) const
    {
        a.sum = a.sq = a.count = a.extrema = a.var = 0;
        if (kind == 0) {
            a.sum = (rd_u64)sum;
            a.sq = want_sq ? (rd_u64)sq : 0;
            a.count = skipnan ? (rd_u64)count : 0;
        } else if (kind == 1) {
            a.extrema = (rd_u64)ext;
        } else {
            a.var = (rd_u64)var;
        }
        BENCH_CHECK(cudaMemset(sum, fill, m * 16));
        BENCH_CHECK(cudaMemset(sq, fill, m * 16));
        BENCH_CHECK(cudaMemset(count, fill, m * 8));
        BENCH_CHECK(cudaMemset(ext, fill, m * sizeof(rd_extrema)));
        BENCH_CHECK(cudaMemset(var, fill, m * sizeof(rd_var)));
    }
};


static int checks, fails;
static unsigned *bad;

typedef void (*kernel)(const elem_t *, ax_gpu_args);

// The 8-byte words where the m parts of every array of oa and ob differ
// (the kernels that wrote them queued before).
static unsigned words_differing(const outs &oa, const outs &ob, size_t m)
{
    diff_words<<<256, 256>>>((const double *)oa.sum, (const double *)ob.sum, m * 2, bad);
    diff_words<<<256, 256>>>((const double *)oa.sq, (const double *)ob.sq, m * 2, bad);
    diff_words<<<256, 256>>>((const double *)oa.count, (const double *)ob.count, m, bad);
    diff_words<<<256, 256>>>((const double *)oa.ext, (const double *)ob.ext, m * 4, bad);
    diff_words<<<256, 256>>>((const double *)oa.var, (const double *)ob.var, m * 6, bad);
    unsigned nb = 0;
    BENCH_CHECK(cudaMemcpy(&nb, bad, 4, cudaMemcpyDeviceToHost));
    return nb;
}

// Runs kernels ka and kb (of kind `kind`, squares where sq, counts where
// skipnan) on grid g with args a (arrays from oa, ob; kb with shared_b bytes
// of dynamic shared memory) and compares their m parts of every array; the
// first differences are printed with what, p1, p2 and name.
static void compare(const char *what, unsigned p1, unsigned p2, int kind, bool sq, bool skipnan,
                    const char *name, kernel ka, kernel kb, unsigned g, ax_gpu_args a,
                    const elem_t *x, outs &oa, outs &ob, size_t m, unsigned shared_b = 0)
{
    ax_gpu_args b = a;
    oa.set(a, kind, sq, skipnan, m);
    ob.set(b, kind, sq, skipnan, m);
    BENCH_CHECK(cudaMemset(bad, 0, 4));
    ka<<<g, AX_THREADS>>>(x, a);
    kb<<<g, AX_THREADS, shared_b>>>(x, b);
    BENCH_CHECK(cudaGetLastError());
    unsigned nb = words_differing(oa, ob, m);
    checks++;
    if (nb && fails++ < 20)
        printf("DIFFER %s %u shift %u %s: %u words\n", what, p1, p2, name, nb);
}

// Times launch() (writing n doubles at got) and prints its row: GB/s of
// `in` bytes, the ratio to the copy (returned), and whether got equals
// want's n doubles.
template <class F>
static double row(const char *shape, const char *name, double in, double copy_bw, F launch,
                  const double *want, double *got, size_t n)
{
    BENCH_CHECK(cudaMemset(got, 0, n * 8));
    float t = bench_median_ms(launch, 7);
    BENCH_CHECK(cudaDeviceSynchronize());
    std::vector<double> hw(n), hg(n);
    BENCH_CHECK(cudaMemcpy(hw.data(), want, n * 8, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(hg.data(), got, n * 8, cudaMemcpyDeviceToHost));
    const double r = in / (t * 1e-3) / copy_bw;
    printf("%-18s %-24s %8.0f %8.3f %s\n", shape, name, in / (t * 1e-3) / 1e9, r,
           memcmp(hw.data(), hg.data(), n * 8) ? "NO" : "yes");
    fflush(stdout);
    return r;
}

// The timing's input: 1 GiB of random finite elements on the device (so
// that the order of the sums shows in their bits), two part arrays of
// out_bytes each, and the device copy's bandwidth (read + write), printed
// with the table's header.
struct bench_input {
    size_t bytes;
    elem_t *x;
    double *want, *got;
    double copy_bw;
};

// Makes the timing's input (see bench_input).
static bench_input bench_setup(size_t out_bytes)
{
    bench_input b;
    b.bytes = (size_t)1 << 30;
    char *copy;
    BENCH_CHECK(cudaMalloc(&b.x, b.bytes));
    BENCH_CHECK(cudaMalloc(&copy, b.bytes));
    BENCH_CHECK(cudaMalloc(&b.want, out_bytes));
    BENCH_CHECK(cudaMalloc(&b.got, out_bytes));
    const size_t n = b.bytes / sizeof(elem_t);
    std::vector<elem_t> h(n);
    unsigned long long s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        h[i] = (elem_t)((double)(long long)(s >> 20) * 0x1p-30);
    }
    BENCH_CHECK(cudaMemcpy(b.x, h.data(), b.bytes, cudaMemcpyHostToDevice));
    const float cms = bench_median_ms(
        [&] { cudaMemcpyAsync(copy, b.x, b.bytes, cudaMemcpyDeviceToDevice); }, 5);
    BENCH_CHECK(cudaFree(copy));
    b.copy_bw = 2.0 * b.bytes / (cms * 1e-3);
    printf("%s, device copy %.0f GB/s (read + write)\n",
           sizeof(elem_t) == 4 ? "float32" : "float64", b.copy_bw / 1e9);
    printf("%-18s %-24s %8s %8s %s\n", "shape", "kernel", "GB/s", "of copy", "same bits");
    return b;
}

#endif
