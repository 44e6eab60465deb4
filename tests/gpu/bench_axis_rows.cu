// bench_axis_rows.cu - the short-run kernels of reductions along axes
// (ptx/axis.cu) against main's body, rows_units (a group of P lanes a run,
// xor shuffles), for runs of at most 32 vectors: rows_lane (a thread a run,
// its sub-tile order in registers, a kernel of its own: axk_lane_*). First
// the bits of the moments (with squares and skipnan) and the extrema on
// random data with NaN, infinities, zeros of either sign and subnormals,
// for T = 2 .. 200 at three alignments; then (float32 and float64 only)
// GB/s of input on 1 GiB arrays, the ratio to the device copy (read +
// write), and whether the sums have main's bits: rows_lane's kernel and its
// code at 4 to 8 resident blocks (unrolled 32 times, and 8 times at 6), the
// extrema's time; rows_units at 1 to 6 resident blocks for longer runs.
//
// Build: nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -DGB_DT_f32
// tests/gpu/bench_axis_rows.cu (any -DGB_DT_<type>; timing for f32, f64).
#if !defined(GB_DT_f32) && !defined(GB_DT_f64) && !defined(GB_DT_u8) && \
    !defined(GB_DT_i64) && !defined(GB_DT_f16) && !defined(GB_DT_i32)
#define GB_DT_f32
#endif
#include "ptx/axis.cu"

#include "bench_common.h"
#include "bench_axis_util.h"

#include <cstring>

// The two short-run bodies, per kind.
template <int K, bool N, bool Q, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) rows_old(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    __shared__ __align__(128) unsigned char sm[AX_ROWS_WIDE_BYTES + 128];
    rows_units<K, N, Q>(x, a, sm);
}
template <int K, bool N, bool Q, int minb, unsigned U = 32>
__global__ void __launch_bounds__(AX_THREADS, minb) rows_new(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    __shared__ __align__(128) unsigned char sm[AX_ROWS_WIDE_BYTES + 128];
    rows_lane<K, N, Q, U>(x, a, sm);
}

// The kernel kinds checked: kind, skipnan, squares, main's body and the
// kernel (runs of at most 32 vectors: axk_lane_* where the type has them).
struct kind_row {
    int kind;
    bool skipnan, sq;
    kernel rows_a, rows_b;
    const char *name;
};
#define KR(k, n, q, kernel) {k, n, q, rows_old<k, n, q, 1>, kernel, #kernel}
static const kind_row kinds[] = {
#if AX_LANE_TYPE
    KR(0, false, false, axk_lane_moments), KR(0, false, true, axk_lane_moments_sq),
    KR(1, false, false, axk_lane_extrema),
    KR(0, true, false, axk_lane_moments_skipnan), KR(0, true, true, axk_lane_moments_sq_skipnan),
    KR(1, true, false, axk_lane_extrema_skipnan),
#else
    KR(0, false, false, axk_rows_moments), KR(0, false, true, axk_rows_moments_sq),
    KR(1, false, false, axk_rows_extrema),
#if RD_FLOAT
    KR(0, true, false, axk_rows_moments_skipnan), KR(0, true, true, axk_rows_moments_sq_skipnan),
    KR(1, true, false, axk_rows_extrema_skipnan),
#endif
#endif
};

// The bits of the variants against the kernels on n random elements.
static void check_bits()
{
    const size_t n = 1u << 17;
    std::vector<elem_t> h(n + 8);
    for (auto &e : h)
        e = rnd_elem();
    elem_t *x;
    BENCH_CHECK(cudaMalloc(&x, (n + 8) * sizeof(elem_t)));
    BENCH_CHECK(cudaMemcpy(x, h.data(), (n + 8) * sizeof(elem_t), cudaMemcpyHostToDevice));
    outs oa, ob;
    BENCH_CHECK(cudaMalloc(&bad, 4));
    oa.alloc(n);
    ob.alloc(n);
    const unsigned tmax = 32 * RD_V < 200 ? 32 * RD_V : 200;
    for (unsigned sh = 0; sh < 3; sh++) {
        const unsigned shift = sh == 0 ? 0 : sh == 1 ? 1 : 3;
        for (unsigned T = 2; T <= tmax; T++) {
            ax_gpu_args a;
            memset(&a, 0, sizeof a);
            a.T = T;
            a.tiles_per_run = 1;
            a.nunits = (n - 8) / T - (T & 1); // not always a whole last block
            const unsigned rowb = T * (unsigned)sizeof(elem_t), rb = ax_rows_bytes(rowb) / rowb;
            const unsigned g = (unsigned)((a.nunits + rb - 1) / rb);
            for (const kind_row &k : kinds)
                compare("rows T", T, shift, k.kind, k.sq, k.skipnan, k.name, k.rows_a, k.rows_b,
                        g, a, x + shift, oa, ob, (size_t)a.nunits, AX_ROWS_STAGE(rowb));
        }
    }
    printf("bits: %d checks, %d differ\n", checks, fails);
    fflush(stdout);
    cudaFree(x);
}

int main()
{
    check_bits();
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    // the most parts: an extrema record per 3 elements
    bench_input in0 = bench_setup(((size_t)1 << 30) / sizeof(elem_t) / 3 * sizeof(rd_extrema));
    const size_t bytes = in0.bytes;
    const elem_t *x = in0.x;
    double *want = in0.want, *got = in0.got;
    const double copy_bw = in0.copy_bw;
    static const unsigned Ts[] = {3, 8, 16, 32, 48, 64, 100, 128, 256, 1000, 2048};
    for (unsigned T : Ts) {
        ax_gpu_args a;
        memset(&a, 0, sizeof a);
        a.nunits = bytes / sizeof(elem_t) / T;
        a.T = T;
        a.tiles_per_run = 1;
        const unsigned rowb = T * (unsigned)sizeof(elem_t), rb = ax_rows_bytes(rowb) / rowb;
        const unsigned g = (unsigned)((a.nunits + rb - 1) / rb);
        const double in = (double)a.nunits * T * sizeof(elem_t);
        char shape[32];
        snprintf(shape, sizeof shape, "T %u ax1", T);
        ax_gpu_args b = a;
        a.sum = (rd_u64)want;
        b.sum = (rd_u64)got;
        const size_t n = (size_t)a.nunits;
        row(shape, "rows_units minb 1", in, copy_bw,
            [&] { rows_old<0, false, false, 1><<<g, AX_THREADS>>>(x, a); }, want, want, n);
        if (T > 32 * RD_V) { // rows_units alone: its bounds
            row(shape, "units minb 2", in, copy_bw,
                [&] { rows_old<0, false, false, 2><<<g, AX_THREADS>>>(x, b); }, want, got, n);
            row(shape, "units minb 3", in, copy_bw,
                [&] { rows_old<0, false, false, 3><<<g, AX_THREADS>>>(x, b); }, want, got, n);
            row(shape, "units minb 4", in, copy_bw,
                [&] { rows_old<0, false, false, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
            row(shape, "units minb 6 (main's)", in, copy_bw,
                [&] { rows_old<0, false, false, 6><<<g, AX_THREADS>>>(x, b); }, want, got, n);
            continue;
        }
        row(shape, "axk_lane_moments", in, copy_bw,
            [&] { axk_lane_moments<<<g, AX_THREADS, AX_ROWS_STAGE(rowb)>>>(x, b); }, want, got, n);
        row(shape, "lane minb 4", in, copy_bw,
            [&] { rows_new<0, false, false, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane minb 5", in, copy_bw,
            [&] { rows_new<0, false, false, 5><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane minb 7", in, copy_bw,
            [&] { rows_new<0, false, false, 7><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane minb 8", in, copy_bw,
            [&] { rows_new<0, false, false, 8><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane minb 6 unroll 8", in, copy_bw,
            [&] { rows_new<0, false, false, 6, 8><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        ax_gpu_args e = a;
        e.sum = 0;
        e.extrema = (rd_u64)want;
        const float me = bench_median_ms([&] { rows_old<1, false, false, 1><<<g, AX_THREADS>>>(x, e); }, 7),
                    ne = bench_median_ms([&] { axk_lane_extrema<<<g, AX_THREADS, AX_ROWS_STAGE(rowb)>>>(x, e); }, 7);
        printf("%-18s %-22s %8.2f %8.2f (of copy: rows_units, axk_lane_extrema)\n", shape,
               "extrema", in / (me * 1e-3) / copy_bw, in / (ne * 1e-3) / copy_bw);
    }
#endif
    return 0;
}
