// bench_axis_cols.cu - the many-column block-entry kernels of reductions
// along axes (ptx/axis.cu, C > 32): main's body (block_cols: a thread per
// entry and column) against block_cols_vec (V adjacent columns a thread, B
// blocks' loads a step, PIPE) under several register bounds,
// block_cols_split (an entry's blocks shared by S threads) and the kernels
// as built (axk_cols_*, and float32's axk_pairs_moments). First the bits
// of every kind of part (moments, squares, extrema, variance, with and
// without skipnan) on the random chunks and elements of axis_probe_host.h;
// then (float32 and float64) main's body and two block_cols_vec variants
// on (N, 64) grids of 1 to 2.5 waves of resident blocks, and GB/s of input
// on 1 GiB arrays of (N, 64), (N, 1000) and (N, 100000) over axis 0, the
// ratio to the device copy (read + write), whether the sums have main's
// bits, and each kernel's registers, spills, resident blocks and waves.
// With "ncu": one launch each of main's body and of two block_cols_vec
// variants on (N, 64), for a profiler.
//
// Build: nvcc -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -DGB_DT_f32
// tests/gpu/bench_axis_cols.cu (any -DGB_DT_<type>; timing for f32, f64).
#if !defined(GB_DT_f32) && !defined(GB_DT_f64) && !defined(GB_DT_u8) && \
    !defined(GB_DT_i64) && !defined(GB_DT_f16) && !defined(GB_DT_i32)
#define GB_DT_f32
#endif
#include "ptx/axis.cu"

#include "bench_common.h"
#include "bench_axis_util.h"

#include <cstring>

// main's many-column kernel (its bounds: 3 resident blocks, the variance 1).
template <int K, bool N, bool Q>
__global__ void __launch_bounds__(AX_THREADS, K == 2 ? 1 : 3) cols_old(const elem_t *__restrict__ x,
                                                                       ax_gpu_args a)
{
    block_cols<K, N, Q>(x, a);
}

// A variant of the many-column kernel.
template <int K, bool N, bool Q, unsigned S, unsigned P, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) cols_new(const elem_t *__restrict__ x,
                                                             ax_gpu_args a)
{
    block_cols_split<K, N, Q, S, P>(x, a);
}

typedef void (*kernel)(const elem_t *, ax_gpu_args);

// A variant of main's body: V columns a thread, B blocks' loads a step, PIPE.
template <int K, bool N, bool Q, unsigned V, unsigned B, bool P, int minb>
__global__ void __launch_bounds__(AX_THREADS, minb) cols_vec(const elem_t *__restrict__ x,
                                                              ax_gpu_args a)
{
    block_cols_vec<K, N, Q, V, B, P>(x, a);
}

typedef probe_variant<kernel> variant;

// The kernel ptx/axis.cu builds for a kind, and its threads per entry.
#if defined(GB_DT_f32) || defined(GB_DT_f64)
#define BUILT_S(K, Q) AX_COLS_SPLIT(sizeof(elem_t), K, Q)
#else
#define BUILT_S(K, Q) 1u
#endif
template <int K, bool N, bool Q> constexpr kernel axk_cols_of()
{
#if RD_FLOAT
    if (N)
        return K == 0 ? (Q ? axk_cols_moments_sq_skipnan : axk_cols_moments_skipnan)
               : K == 1 ? axk_cols_extrema_skipnan : axk_cols_var_skipnan;
#endif
    return K == 0 ? (Q ? axk_cols_moments_sq : axk_cols_moments)
           : K == 1 ? axk_cols_extrema : axk_cols_var;
}

// The variants of one kind whose bits are checked (the first: the kernel
// as built).
template <int K, bool N, bool Q> struct variants_of {
    static constexpr variant list[] = {
        {axk_cols_of<K, N, Q>(), BUILT_S(K, Q), 1, "axk_cols"},
        {cols_vec<K, N, Q, 1, AX_COLS_PAIR, false, 3>, 1, 1, "V1 B2 minb3"},
        {cols_vec<K, N, Q, 1, AX_COLS_PAIR, false, 4>, 1, 1, "V1 B2 minb4"},
        {cols_vec<K, N, Q, 1, 1, true, 4>, 1, 1, "V1 B1 pipe minb4"},
        {cols_vec<K, N, Q, 2, 1, false, 3>, 1, 2, "V2 B1 minb3"},
        {cols_vec<K, N, Q, 2, 1, false, 4>, 1, 2, "V2 B1 minb4"},
        {cols_vec<K, N, Q, 2, 1, true, 2>, 1, 2, "V2 B1 pipe minb2"},
        {cols_vec<K, N, Q, 1, 1, false, 4>, 1, 1, "V1 B1 minb4"},
    };
};

// The kinds checked: main's kernel and the variants of each.
typedef probe_kind<kernel> kind_row;
#define KR(k, n, q, name) {k, n, q, cols_old<k, n, q>, variants_of<k, n, q>::list, name}
#define NVARS 8
static const kind_row kinds[] = {AX_PROBE_KINDS(KR)};

// The grid of a kernel of S threads an entry (1: a thread per entry and V
// columns).
static unsigned grid_of(const ax_gpu_args &a, unsigned S, unsigned V = 1)
{
    const rd_u64 w = AX_THREADS / S, cv = (a.C + V - 1) / V;
    return S > 1 ? (unsigned)(a.nentries * ((a.C + w - 1) / w))
                 : (unsigned)((a.nentries * cv + AX_THREADS - 1) / AX_THREADS);
}

// main's kernel and every variant of kind k on args a (x its data), their
// m parts of every array compared.
static void compare(const char *what, const kind_row &k, ax_gpu_args a, const elem_t *x,
                    outs &oa, outs &ob)
{
    const size_t m = (size_t)(a.nentries * a.C);
    ax_gpu_args ma = a;
    oa.set(ma, k.kind, k.sq, k.skipnan, m, 0x5a);
    k.old<<<(unsigned)((m + AX_THREADS - 1) / AX_THREADS), AX_THREADS>>>(x, ma);
    for (int v = 0; v < NVARS; v++) {
        ax_gpu_args b = a;
        ob.set(b, k.kind, k.sq, k.skipnan, m, 0x5a);
        BENCH_CHECK(cudaMemset(bad, 0, 4));
        k.vars[v].k<<<grid_of(a, k.vars[v].S, k.vars[v].V), AX_THREADS>>>(x, b);
        BENCH_CHECK(cudaGetLastError());
        unsigned nb = words_differing(oa, ob, m);
        checks++;
        if (nb && fails++ < 30)
            printf("DIFFER %s %s %s: %u words\n", what, k.name, k.vars[v].name, nb);
    }
}

// The bits of the variants against main's kernels on random elements.
static void check_bits()
{
    const size_t n = 3u << 20;
    std::vector<elem_t> h(n + 16);
    for (auto &e : h)
        e = rnd_elem();
    elem_t *buf;
    BENCH_CHECK(cudaMalloc(&buf, (n + 16) * sizeof(elem_t)));
    BENCH_CHECK(cudaMemcpy(buf, h.data(), (n + 16) * sizeof(elem_t), cudaMemcpyHostToDevice));
    outs oa, ob;
    BENCH_CHECK(cudaMalloc(&bad, 4));
    oa.alloc(1u << 18);
    ob.alloc(1u << 18);
    ax_gpu_entry *dent;
    BENCH_CHECK(cudaMalloc(&dent, 1 << 20));
    for (unsigned C : probe_cols)
        for (int shape = 0; shape < 6; shape++) {
            probe_chunk ch;
            if (!random_chunk(C, shape, n, 1u << 18, ch))
                continue;
            if (ch.listed) {
                BENCH_CHECK(cudaMemcpy(dent, ch.ent.data(), ch.ent.size() * sizeof ch.ent[0],
                                       cudaMemcpyHostToDevice));
                ch.a.entries = (rd_u64)dent;
            }
            for (const kind_row &k : kinds)
                compare(ch.what, k, ch.a, buf + ch.shift, oa, ob);
        }
    printf("bits: %d checks, %d differ\n", checks, fails);
    fflush(stdout);
    cudaFree(buf);
    cudaFree(dent);
}

// Fills n elements at x with finite pseudo-random values (the sums' order
// shows in their bits).
__global__ void fill_random(elem_t *x, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long s = (i + 1) * 0x9e3779b97f4a7c15ull;
        s ^= s >> 29;
        s *= 0xbf58476d1ce4e5b9ull;
        s ^= s >> 32;
        x[i] = (elem_t)((double)(long long)(s >> 20) * 0x1p-30);
    }
}

#if defined(GB_DT_f32) || defined(GB_DT_f64)
// Prints kernel k's registers, local bytes (spills), resident GPU blocks
// an SM and the waves of grid g on this device.
static void info(const char *shape, const char *name, kernel k, unsigned g)
{
    cudaFuncAttributes at;
    int per = 0, sms = 0;
    BENCH_CHECK(cudaFuncGetAttributes(&at, k));
    BENCH_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, AX_THREADS, 0));
    BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    printf("%-18s %-24s regs %3d local %4zu blocks/SM %d grid %u waves %.2f\n", shape, name,
           at.numRegs, at.localSizeBytes, per, g, per ? (double)g / ((double)per * sms) : 0.0);
}

// Time of kernel k on grid g with args a, as a ratio of `in` bytes to the copy.
static double ratio(kernel k, unsigned g, const ax_gpu_args &a, const elem_t *x, double in,
                    double copy_bw)
{
    const float ms = bench_median_ms([&] { k<<<g, AX_THREADS>>>(x, a); }, 7);
    return in / (ms * 1e-3) / copy_bw;
}

// main's body and two block_cols_vec variants on (N, 64) with N such that
// the grid fills 1, 1.5, 2 or 2.5 waves of main's resident blocks (whole
// entries of 64 blocks), against the 1 GiB shape's 2.59: whether a part-filled last wave
// is what holds the kernel below the copy.
static void waves(const elem_t *x, double *out, double copy_bw)
{
    int per = 0, sms = 0;
    BENCH_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, cols_old<0, false, false>,
                                                              AX_THREADS, 0));
    BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    static const double ws[] = {1.0, 1.5, 2.0, 2.5};
    for (double wv : ws) {
        const rd_u64 C = 64, blocks = (rd_u64)(wv * per * sms);
        const rd_u64 L = blocks * AX_THREADS / C * 64 * 16; // entries of 64 blocks
        if (L * C * sizeof(elem_t) > ((size_t)1 << 30))
            continue; // beyond the 1 GiB input
        ax_gpu_args a = whole_sweep(L, C);
        a.sum = (rd_u64)out;
        const double in = (double)L * C * sizeof(elem_t);
        printf("waves %.2f (%llu, 64): main %.3f, V1 B2 minb4 %.3f, V2 B1 minb4 %.3f (of copy)\n",
               wv, (unsigned long long)L, ratio(cols_old<0, false, false>, grid_of(a, 1), a, x, in, copy_bw),
               ratio(cols_vec<0, false, false, 1, AX_COLS_PAIR, false, 4>, grid_of(a, 1), a, x, in,
                     copy_bw),
               ratio(cols_vec<0, false, false, 2, 1, false, 4>, grid_of(a, 1, 2), a, x, in, copy_bw));
    }
    fflush(stdout);
}
#endif

int main(int argc, char **argv)
{
    // "ncu": one launch each of main's kernel and two variants on (N, 64) (for a profiler)
    const bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    if (!ncu)
        check_bits();
#if defined(GB_DT_f32) || defined(GB_DT_f64)
    const size_t bytes = (size_t)1 << 30;
    elem_t *x;
    double *want, *got;
    char *copy;
    BENCH_CHECK(cudaMalloc(&x, bytes));
    BENCH_CHECK(cudaMalloc(&copy, bytes));
    const size_t out_bytes = 64u << 20;
    BENCH_CHECK(cudaMalloc(&want, out_bytes));
    BENCH_CHECK(cudaMalloc(&got, out_bytes));
    fill_random<<<1024, 256>>>(x, bytes / sizeof(elem_t));
    BENCH_CHECK(cudaDeviceSynchronize());
    float cms = bench_median_ms([&] { cudaMemcpyAsync(copy, x, bytes, cudaMemcpyDeviceToDevice); }, 5);
    double copy_bw = 2.0 * bytes / (cms * 1e-3);
    printf("%s, device copy %.0f GB/s (read + write)\n", sizeof(elem_t) == 4 ? "float32" : "float64",
           copy_bw / 1e9);
    printf("%-16s %-26s %8s %8s %s\n", "shape", "kernel", "GB/s", "of copy", "same bits");
    static const variant vars[] = {
        {cols_new<0, false, false, 4, AX_COLS_PAIR, 3>, 4, 1, "S4"},
        {cols_vec<0, false, false, 1, AX_COLS_PAIR, false, 3>, 1, 1, "V1 B2 minb3"},
        {cols_vec<0, false, false, 1, AX_COLS_PAIR, false, 4>, 1, 1, "V1 B2 minb4"},
        {cols_vec<0, false, false, 1, 1, false, 4>, 1, 1, "V1 B1 minb4"},
        {cols_vec<0, false, false, 1, 1, true, 4>, 1, 1, "V1 B1 pipe minb4"},
        {cols_vec<0, false, false, 1, 1, true, 3>, 1, 1, "V1 B1 pipe minb3"},
        {cols_vec<0, false, false, 2, 1, false, 3>, 1, 2, "V2 B1 minb3"},
        {cols_vec<0, false, false, 2, 1, false, 4>, 1, 2, "V2 B1 minb4"},
        {cols_vec<0, false, false, 2, 1, true, 2>, 1, 2, "V2 B1 pipe minb2"},
        {cols_vec<0, false, false, 2, 1, true, 3>, 1, 2, "V2 B1 pipe minb3"},
        {cols_vec<0, false, false, 2, 2, false, 2>, 1, 2, "V2 B2 minb2"},
        {cols_vec<0, true, false, 2, 1, false, 4>, 1, 2, "V2 B1 minb4 skipnan"},
        {cols_vec<0, true, false, 1, AX_COLS_PAIR, false, 4>, 1, 1, "V1 B2 minb4 skipnan"},
    };
    if (!ncu)
        waves(x, want, copy_bw);
    static const unsigned Cs[] = {64, 1000, 100000};
    for (unsigned C : Cs) {
        const rd_u64 L = bytes / sizeof(elem_t) / C;
        ax_gpu_args a = whole_sweep(L, C);
        const double in = (double)L * C * sizeof(elem_t);
        const size_t m = (size_t)(a.nentries * C);
        char shape[32];
        snprintf(shape, sizeof shape, "(%llu, %u)", (unsigned long long)L, C);
        ax_gpu_args b = a;
        a.sum = (rd_u64)want;
        b.sum = (rd_u64)got;
        const unsigned g = grid_of(a, 1);
        if (ncu) {
            cols_old<0, false, false><<<g, AX_THREADS>>>(x, a);
            cols_vec<0, false, false, 1, AX_COLS_PAIR, false, 4><<<g, AX_THREADS>>>(x, b);
            cols_vec<0, false, false, 2, 1, false, 4><<<grid_of(b, 1, 2), AX_THREADS>>>(x, b);
            BENCH_CHECK(cudaDeviceSynchronize());
            break;
        }
        row(shape, "main's body", in, copy_bw,
            [&] { cols_old<0, false, false><<<g, AX_THREADS>>>(x, a); }, want, want, m);
        row(shape, "axk_cols_moments", in, copy_bw,
            [&] { axk_cols_moments<<<grid_of(b, BUILT_S(0, false)), AX_THREADS>>>(x, b); },
            want, got, m);
#if defined(GB_DT_f32)
        row(shape, "axk_pairs_moments", in, copy_bw,
            [&] { axk_pairs_moments<<<grid_of(b, 1, AX_PAIRS_COLS), AX_THREADS>>>(x, b); }, want,
            got, m);
        row(shape, "axk_pairs_moments_skipnan", in, copy_bw,
            [&] {
                axk_pairs_moments_skipnan<<<grid_of(b, 1, AX_PAIRS_COLS), AX_THREADS>>>(x, b);
            },
            want, got, m);
#endif
        for (const variant &v : vars)
            row(shape, v.name, in, copy_bw,
                [&] { v.k<<<grid_of(b, v.S, v.V), AX_THREADS>>>(x, b); }, want, got, m);
        info(shape, "main's body", cols_old<0, false, false>, g);
#if defined(GB_DT_f32)
        info(shape, "axk_pairs_moments", axk_pairs_moments, grid_of(b, 1, AX_PAIRS_COLS));
#endif
        for (const variant &v : vars)
            info(shape, v.name, v.k, grid_of(b, v.S, v.V));
        // the other kinds: main's body, the kernel as built, S4
        ax_gpu_args q = a, e = a, w = a;
        q.sq = (rd_u64)got;
        e.sum = w.sum = 0;
        e.extrema = w.var = (rd_u64)want;
        printf("%-16s sum+sq main %.3f built %.3f S4 %.3f V2 %.3f; extrema main %.3f built %.3f "
               "S4 %.3f V2 %.3f V1m4 %.3f; var main %.3f built %.3f S8 %.3f (of copy)\n", shape,
               ratio(cols_old<0, false, true>, g, q, x, in, copy_bw),
               ratio(axk_cols_moments_sq, grid_of(q, BUILT_S(0, true)), q, x, in, copy_bw),
               ratio(cols_new<0, false, true, 4, AX_COLS_PAIR, 3>, grid_of(q, 4), q, x, in, copy_bw),
               ratio(cols_vec<0, false, true, 2, 1, false, 3>, grid_of(q, 1, 2), q, x, in, copy_bw),
               ratio(cols_old<1, false, false>, g, e, x, in, copy_bw),
               ratio(axk_cols_extrema, grid_of(e, BUILT_S(1, false)), e, x, in, copy_bw),
               ratio(cols_new<1, false, false, 4, AX_COLS_PAIR, 3>, grid_of(e, 4), e, x, in, copy_bw),
               ratio(cols_vec<1, false, false, 2, 1, false, 3>, grid_of(e, 1, 2), e, x, in, copy_bw),
               ratio(cols_vec<1, false, false, 1, AX_COLS_PAIR, false, 4>, grid_of(e, 1), e, x, in, copy_bw),
               ratio(cols_old<2, false, false>, g, w, x, in, copy_bw),
               ratio(axk_cols_var, grid_of(w, BUILT_S(2, false)), w, x, in, copy_bw),
               ratio(cols_new<2, false, false, 8, 1, 1>, grid_of(w, 8), w, x, in, copy_bw));
        fflush(stdout);
    }
#endif
    return 0;
}
