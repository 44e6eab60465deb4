// bench_axis_rows.cu - the short-run kernels of reductions along axes
// (ptx/axis.cu) against main's body, rows_units (a group of P lanes a run,
// xor shuffles), for runs of at most 32 vectors: rows_lane (a thread a run,
// its sub-tile order in registers). First the bits of the moments (with
// squares and skipnan) and the extrema on random data with NaN, infinities,
// zeros of either sign and subnormals, for T = 2 .. 200 at three
// alignments; then (float32 and float64 only) GB/s of input on 1 GiB
// arrays, the ratio to the device copy (read + write), and whether the
// sums have main's bits: the kernels (rows_lane unrolled 32 times, 6
// resident blocks), the loop unrolled 1 and 4 times; the extrema's time.
//
// Build: nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -DGB_DT_f32
// tests/gpu/bench_axis_rows.cu (any -DGB_DT_<type>; timing for f32, f64).
#if !defined(GB_DT_f32) && !defined(GB_DT_f64) && !defined(GB_DT_u8) && \
    !defined(GB_DT_i64) && !defined(GB_DT_f16) && !defined(GB_DT_i32)
#define GB_DT_f32
#endif
#include "ptx/axis.cu"

#include "bench_common.h"

#include <cstring>

// The two short-run bodies, per kind.
template <int K, bool N, bool Q, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) rows_old(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    __shared__ __align__(128) unsigned char sm[AX_ROWS_STAGE];
    rows_units<K, N, Q>(x, a, sm);
}
template <int K, bool N, bool Q, int minb, unsigned U = 32>
__global__ void __launch_bounds__(AX_THREADS, minb) rows_new(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    __shared__ __align__(128) unsigned char sm[AX_ROWS_STAGE];
    rows_lane<K, N, Q, U>(x, a, sm);
}

typedef void (*kernel)(const elem_t *, ax_gpu_args);

// The kernel kinds checked: kind, skipnan, squares, main's body and the kernel.
struct kind_row {
    int kind;
    bool skipnan, sq;
    kernel rows_a, rows_b;
    const char *name;
};
#define KR(k, n, q, kernel) {k, n, q, rows_old<k, n, q, 1>, kernel, #kernel}
static const kind_row kinds[] = {
    KR(0, false, false, axk_rows_moments), KR(0, false, true, axk_rows_moments_sq),
    KR(1, false, false, axk_rows_extrema),
#if RD_FLOAT
    KR(0, true, false, axk_rows_moments_skipnan), KR(0, true, true, axk_rows_moments_sq_skipnan),
    KR(1, true, false, axk_rows_extrema_skipnan),
#endif
};

static unsigned long long rs = 0x9e3779b97f4a7c15ull;
// The next 64 pseudo-random bits.
static unsigned long long rnd()
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

// A random element: mostly moderate values, now and then a special one.
static elem_t rnd_elem()
{
    unsigned long long r = rnd();
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    switch (r % 97) {
    case 0: return (elem_t)NAN;
    case 1: return (elem_t)INFINITY;
    case 2: return (elem_t)-INFINITY;
    case 3: return (elem_t)-0.0;
    case 4: return (elem_t)0.0;
    case 5: return sizeof(elem_t) == 4 ? (elem_t)1e-40 : (elem_t)4e-320;
    case 6: return (elem_t)((double)(long long)(r >> 20) * 0x1p+60);
    default: return (elem_t)((double)(long long)(r >> 11) * 0x1p-40);
    }
#else
    elem_t e;
    memcpy(&e, &r, sizeof e);
    return e;
#endif
}

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
    // The arrays kind k writes into args a, their first m parts zeroed.
    void set(ax_gpu_args &a, const kind_row &k, size_t m) const
    {
        a.sum = a.sq = a.count = a.extrema = a.var = 0;
        if (k.kind == 0) {
            a.sum = (rd_u64)sum;
            a.sq = k.sq ? (rd_u64)sq : 0;
            a.count = k.skipnan ? (rd_u64)count : 0;
        } else if (k.kind == 1) {
            a.extrema = (rd_u64)ext;
        } else {
            a.var = (rd_u64)var;
        }
        BENCH_CHECK(cudaMemset(sum, 0, m * 16));
        BENCH_CHECK(cudaMemset(sq, 0, m * 16));
        BENCH_CHECK(cudaMemset(count, 0, m * 8));
        BENCH_CHECK(cudaMemset(ext, 0, m * sizeof(rd_extrema)));
        BENCH_CHECK(cudaMemset(var, 0, m * sizeof(rd_var)));
    }
};

static int checks, fails;
static unsigned *bad;

// Runs kernels ka and kb on grid g with args a (arrays from oa, ob) and
// compares their m parts of every array.
static void compare(const char *what, unsigned p1, unsigned p2, const kind_row &k, kernel ka,
                    kernel kb, unsigned g, ax_gpu_args a, const elem_t *x, outs &oa, outs &ob,
                    size_t m)
{
    ax_gpu_args b = a;
    oa.set(a, k, m);
    ob.set(b, k, m);
    BENCH_CHECK(cudaMemset(bad, 0, 4));
    ka<<<g, AX_THREADS>>>(x, a);
    kb<<<g, AX_THREADS>>>(x, b);
    diff_words<<<256, 256>>>((const double *)oa.sum, (const double *)ob.sum, m * 2, bad);
    diff_words<<<256, 256>>>((const double *)oa.sq, (const double *)ob.sq, m * 2, bad);
    diff_words<<<256, 256>>>((const double *)oa.count, (const double *)ob.count, m, bad);
    diff_words<<<256, 256>>>((const double *)oa.ext, (const double *)ob.ext, m * 4, bad);
    diff_words<<<256, 256>>>((const double *)oa.var, (const double *)ob.var, m * 6, bad);
    unsigned nb = 0;
    BENCH_CHECK(cudaMemcpy(&nb, bad, 4, cudaMemcpyDeviceToHost));
    checks++;
    if (nb && fails++ < 20)
        printf("DIFFER %s %u shift %u %s: %u words\n", what, p1, p2, k.name, nb);
}

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
            const unsigned rb = (unsigned)(AX_ROWS_BYTES / (T * sizeof(elem_t)));
            const unsigned g = (unsigned)((a.nunits + rb - 1) / rb);
            for (const kind_row &k : kinds)
                compare("rows T", T, shift, k, k.rows_a, k.rows_b, g, a, x + shift, oa, ob,
                        (size_t)a.nunits);
        }
    }
    printf("bits: %d checks, %d differ\n", checks, fails);
    fflush(stdout);
    cudaFree(x);
}

// Times launch() (writing n doubles at got) and prints its row: GB/s of
// `in` bytes, the ratio to the copy, and whether got equals want's n doubles.
template <class F>
static void row(const char *shape, const char *name, double in, double copy_bw, F launch,
                const double *want, double *got, size_t n)
{
    BENCH_CHECK(cudaMemset(got, 0, n * 8));
    float t = bench_median_ms(launch, 7);
    BENCH_CHECK(cudaDeviceSynchronize());
    std::vector<double> hw(n), hg(n);
    BENCH_CHECK(cudaMemcpy(hw.data(), want, n * 8, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(hg.data(), got, n * 8, cudaMemcpyDeviceToHost));
    printf("%-18s %-22s %8.0f %8.2f %s\n", shape, name, in / (t * 1e-3) / 1e9,
           in / (t * 1e-3) / copy_bw, memcmp(hw.data(), hg.data(), n * 8) ? "NO" : "yes");
    fflush(stdout);
}

int main()
{
    check_bits();
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    const size_t bytes = (size_t)1 << 30;
    elem_t *x;
    double *want, *got;
    char *copy;
    BENCH_CHECK(cudaMalloc(&x, bytes));
    BENCH_CHECK(cudaMalloc(&copy, bytes));
    const size_t out_bytes = bytes / sizeof(elem_t) / 3 * sizeof(rd_extrema); // the most parts
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
    printf("%s, device copy %.0f GB/s (read + write)\n", sizeof(elem_t) == 4 ? "float32" : "float64",
           copy_bw / 1e9);
    printf("%-18s %-22s %8s %8s %s\n", "shape", "kernel", "GB/s", "of copy", "same bits");
    static const unsigned Ts[] = {3, 8, 16, 32, 48, 64, 100, 128};
    for (unsigned T : Ts) {
        if (T > 32 * RD_V)
            continue;
        ax_gpu_args a;
        memset(&a, 0, sizeof a);
        a.nunits = bytes / sizeof(elem_t) / T;
        a.T = T;
        a.tiles_per_run = 1;
        const unsigned rb = (unsigned)(AX_ROWS_BYTES / (T * sizeof(elem_t)));
        const unsigned g = (unsigned)((a.nunits + rb - 1) / rb);
        const double in = (double)a.nunits * T * sizeof(elem_t);
        char shape[32];
        snprintf(shape, sizeof shape, "T %u ax1", T);
        ax_gpu_args b = a;
        a.sum = (rd_u64)want;
        b.sum = (rd_u64)got;
        const size_t n = (size_t)a.nunits;
        row(shape, "rows_units (main's)", in, copy_bw,
            [&] { rows_old<0, false, false, 1><<<g, AX_THREADS>>>(x, a); }, want, want, n);
        row(shape, "axk_rows_moments", in, copy_bw,
            [&] { axk_rows_moments<<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane unroll 1", in, copy_bw,
            [&] { rows_new<0, false, false, 6, 1><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        row(shape, "lane unroll 4", in, copy_bw,
            [&] { rows_new<0, false, false, 6, 4><<<g, AX_THREADS>>>(x, b); }, want, got, n);
        ax_gpu_args e = a;
        e.sum = 0;
        e.extrema = (rd_u64)want;
        const float me = bench_median_ms([&] { rows_old<1, false, false, 1><<<g, AX_THREADS>>>(x, e); }, 7),
                    ne = bench_median_ms([&] { axk_rows_extrema<<<g, AX_THREADS>>>(x, e); }, 7);
        printf("%-18s %-22s %8.2f %8.2f (of copy: main's, the kernel's)\n", shape, "extrema",
               in / (me * 1e-3) / copy_bw, in / (ne * 1e-3) / copy_bw);
    }
#endif
    return 0;
}
