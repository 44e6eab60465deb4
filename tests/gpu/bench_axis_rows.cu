// bench_axis_rows.cu - the short-run kernels of reductions along axes
// (axk_rows_moments of ptx/axis.cu: runs staged in shared memory) beside a
// variant that reads each run straight from global memory in the same
// order (rows_visit on the run itself, U groups of runs a warp in flight),
// on 1 GiB (R, T) arrays reduced over axis 1; and the block-entry kernels
// (axk_few_moments, axk_cols_moments) of (N, C) arrays over axis 0 beside
// the same code compiled for more resident blocks per SM. Sum only: GB/s of
// input, the ratio to the device copy (read + write), and whether each
// variant's sums have the bits of the kernel's.
//
// Build: nvcc -O3 -std=c++17 -fmad=false -I. -DGB_DT_f32 tests/gpu/bench_axis_rows.cu
// (or -DGB_DT_f64; float32 when neither is given).
#if !defined(GB_DT_f32) && !defined(GB_DT_f64)
#define GB_DT_f32
#endif
#include "ptx/axis.cu"

#include "bench_common.h"

#include <cstring>

// The sums of the runs of units [u0, u0 + nunits), each read from global
// memory by a group of P lanes as rows_units reads it from shared memory;
// the warps stride over groups of U * (32 / P) runs, U runs a lane in
// flight before the first is added.
template <unsigned U>
__global__ void __launch_bounds__(AX_THREADS) rows_direct(const elem_t *__restrict__ x,
                                                          ax_gpu_args a)
{
    const unsigned T = (unsigned)a.T, nvec = (T + RD_V - 1) / RD_V;
    unsigned P = 1;
    while (P < nvec && P < 32)
        P *= 2;
    const unsigned lane = threadIdx.x & 31, G = 32 / P, l = lane & (P - 1);
    const rd_u64 gw = ((rd_u64)blockIdx.x * AX_THREADS + threadIdx.x) / 32;
    const rd_u64 nw = (rd_u64)gridDim.x * RD_WARPS;
    for (rd_u64 base = gw * G * U; base < a.nunits; base += nw * G * U) {
        lane_moments m[U];
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const rd_u64 r = base + u * G + lane / P;
            const bool valid = r < a.nunits;
            m[u] = lane_moments_empty();
            rows_visit(x + ((a.u0 + (valid ? r : 0)) * a.T - a.e0), T, P, l, valid,
                       [&](elem_t v, unsigned, unsigned k) { lane_add<false, false>(m[u], v, k); });
        }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            const rd_u64 r = base + u * G + lane / P;
            double fs = rd_lane_fold<RD_FACC>(m[u].fsum);
            for (unsigned h = P / 2; h >= 1; h /= 2)
                fs = rd_add(fs, __shfl_xor_sync(RD_FULL_MASK, fs, h));
            if (r < a.nunits && l == 0)
                ((double *)a.sum)[r] = fs;
        }
    }
}

// The kernels' code compiled for minb resident blocks per SM.
template <int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) rows_minb(const elem_t *__restrict__ x,
                                                              ax_gpu_args a)
{
    rows_units<0, false, false>(x, a);
}
template <int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) few_minb(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    block_few<0, false, false>(x, a);
}
template <int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) cols_minb(const elem_t *__restrict__ x,
                                                              ax_gpu_args a)
{
    block_cols<0, false, false>(x, a);
}

// Times launch() (writing n doubles at got) and prints its row: GB/s of
// `in` bytes, the ratio to the copy, and whether got equals want's n doubles.
template <class F>
static void row(const char *shape, const char *name, double in, double copy_bw, F launch,
                const double *want, double *got, size_t n)
{
    BENCH_CHECK(cudaMemset(got, 0, n * 8));
    float t = bench_median_ms(launch, 5);
    BENCH_CHECK(cudaDeviceSynchronize());
    std::vector<double> hw(n), hg(n);
    BENCH_CHECK(cudaMemcpy(hw.data(), want, n * 8, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(hg.data(), got, n * 8, cudaMemcpyDeviceToHost));
    printf("%-16s %-24s %8.0f %8.2f %s\n", shape, name, in / (t * 1e-3) / 1e9,
           in / (t * 1e-3) / copy_bw, memcmp(hw.data(), hg.data(), n * 8) ? "NO" : "yes");
    fflush(stdout);
}

// The block-entry rows: (N, C) over axis 0, one chunk of one sweep.
static void block_rows(const elem_t *x, size_t bytes, double copy_bw, double *want, double *got)
{
    static const unsigned Cs[] = {3, 8, 64, 1000};
    for (unsigned C : Cs) {
        ax_gpu_args a;
        memset(&a, 0, sizeof a);
        const rd_u64 N = bytes / sizeof(elem_t) / C;
        a.T = 1;
        a.L = N;
        a.C = C;
        a.nunits = a.blocks_per_sweep = (N + RD_AXIS_BLOCK - 1) / RD_AXIS_BLOCK;
        a.nentries = (a.nunits >> AX_FOLD_LEVELS) +
                     __builtin_popcountll(a.nunits & ((1u << AX_FOLD_LEVELS) - 1));
        const size_t n = (size_t)(a.nentries * C);
        double in = (double)N * C * sizeof(elem_t);
        char shape[32];
        snprintf(shape, sizeof shape, "(%llu, %u) ax0", (unsigned long long)N, C);
        ax_gpu_args b = a;
        b.sum = (rd_u64)got;
        a.sum = (rd_u64)want;
        // the kernel (its sums in want), then its code at other resident blocks per SM
        typedef void (*kernel)(const elem_t *, ax_gpu_args);
        const bool few = C <= 32;
        const kernel ks[3] = {few ? axk_few_moments : axk_cols_moments,
                              few ? few_minb<3> : cols_minb<4>, few ? few_minb<4> : cols_minb<2>};
        const char *names[3] = {few ? "axk_few_moments" : "axk_cols_moments",
                                few ? "few minb 3" : "cols minb 4",
                                few ? "few minb 4" : "cols minb 2"};
        const unsigned g = few ? (unsigned)((a.nentries + RD_WARPS - 1) / RD_WARPS)
                               : (unsigned)((a.nentries * C + AX_THREADS - 1) / AX_THREADS);
        for (int k = 0; k < 3; k++)
            row(shape, names[k], in, copy_bw,
                [&] { ks[k]<<<g, AX_THREADS>>>(x, k ? b : a); }, want, k ? got : want, n);
    }
}

int main()
{
    const size_t bytes = (size_t)1 << 30;
    elem_t *x;
    double *want, *got;
    char *copy;
    BENCH_CHECK(cudaMalloc(&x, bytes));
    BENCH_CHECK(cudaMalloc(&copy, bytes));
    // the sums of the most runs (T = 3): want (the kernel's) and got (the variant's)
    const size_t out_bytes = bytes / sizeof(elem_t) / 3 * sizeof(double);
    BENCH_CHECK(cudaMalloc(&want, out_bytes));
    BENCH_CHECK(cudaMalloc(&got, out_bytes));
    {   // random finite elements, so that the order of the sums shows in their bits
        size_t n = bytes / sizeof(elem_t);
        std::vector<elem_t> h(n);
        unsigned long long s = 0x9e3779b97f4a7c15ull;
        for (size_t i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            h[i] = (elem_t)((double)(long long)(s >> 20) * 0x1p-30);
        }
        BENCH_CHECK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
    }
    float cms = bench_median_ms([&] { cudaMemcpyAsync(copy, x, bytes, cudaMemcpyDeviceToDevice); }, 5);
    double copy_bw = 2.0 * bytes / (cms * 1e-3);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    printf("%s, device copy %.0f GB/s (read + write), %d SMs\n", sizeof(elem_t) == 4 ? "float32" : "float64",
           copy_bw / 1e9, sms);
    printf("%-16s %-24s %8s %8s %s\n", "shape", "kernel", "GB/s", "of copy", "same bits");
    static const unsigned Ts[] = {3, 8, 64, 100, 1000};
    for (unsigned T : Ts) {
        ax_gpu_args a;
        memset(&a, 0, sizeof a);
        a.nunits = bytes / sizeof(elem_t) / T;
        a.T = T;
        a.tiles_per_run = 1;
        a.sum = (rd_u64)want;
        unsigned rb = (unsigned)(AX_ROWS_BYTES / (T * sizeof(elem_t)));
        unsigned grid = (unsigned)((a.nunits + rb - 1) / rb);
        double in = (double)a.nunits * T * sizeof(elem_t);
        BENCH_CHECK(cudaMemset(want, 0, out_bytes));
        float ms = bench_median_ms([&] { axk_rows_moments<<<grid, AX_THREADS>>>(x, a); }, 5);
        BENCH_CHECK(cudaDeviceSynchronize());
        printf("T %-14u %-24s %8.0f %8.2f\n", T, "axk_rows_moments", in / (ms * 1e-3) / 1e9,
               in / (ms * 1e-3) / copy_bw);
        for (int v = 0; v < 4; v++) {
            const unsigned per_sm[] = {4, 8, 16, 8};
            const unsigned U = v == 3 ? 8 : 4;
            ax_gpu_args b = a;
            b.sum = (rd_u64)got;
            unsigned g = (unsigned)sms * per_sm[v];
            char name[32], shape[32];
            snprintf(name, sizeof name, "direct U=%u %u/SM", U, per_sm[v]);
            snprintf(shape, sizeof shape, "T %u ax1", T);
            row(shape, name, in, copy_bw, [&] {
                if (U == 8)
                    rows_direct<8><<<g, AX_THREADS>>>(x, b);
                else
                    rows_direct<4><<<g, AX_THREADS>>>(x, b);
            }, want, got, (size_t)a.nunits);
        }
        ax_gpu_args b = a;
        b.sum = (rd_u64)got;
        row("", "rows minb 6", in, copy_bw, [&] { rows_minb<6><<<grid, AX_THREADS>>>(x, b); },
            want, got, (size_t)a.nunits);
        row("", "rows minb 8", in, copy_bw, [&] { rows_minb<8><<<grid, AX_THREADS>>>(x, b); },
            want, got, (size_t)a.nunits);
    }
    block_rows(x, bytes, copy_bw, want, got);
    return 0;
}
