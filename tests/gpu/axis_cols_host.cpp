// axis_cols_host.cpp [rounds] - on the host, no GPU: the many-column
// block-entry body of ptx/axis.cu (block_cols) and the variants of
// block_cols_vec (V adjacent columns a thread, B blocks a step, PIPE; the
// float32 sums' kernels take V 2, B 1, PIPE) run one thread at a time over
// the whole grid (the device language by axis_host_shim.h), every kind of part (moments,
// squares, extrema, variance, with and without skipnan) compared word for
// word (NaNs alike) on the random chunks and elements of the GPU probe
// (axis_probe_host.h: NaN, infinities, zeros of either sign, subnormals;
// odd and even column counts, chunks that start anywhere, listed entries
// over several sweeps, data shifted off the vector alignment). Prints the
// count of checks and of those that differ; exit 1 where any differ.
//
// Build (any -DGB_DT_<type>): clang++ -std=c++17 -O2 -ffp-contract=off
// -Wno-pass-failed -I. -DGB_DT_f32 -x c++ tests/gpu/axis_cols_host.cpp.
// Any C++17 compiler: g++ evaluates a call's arguments in another order
// than nvcc and clang, so a body that read a value in the argument list
// that sets it would differ here.
#if !defined(GB_DT_f32) && !defined(GB_DT_f64) && !defined(GB_DT_u8) && \
    !defined(GB_DT_i64) && !defined(GB_DT_f16) && !defined(GB_DT_i32)
#define GB_DT_f32
#endif
#include "axis_host_shim.h"

#include "ptx/axis.cu"

#include "axis_probe_host.h"

#include <cstdlib>

// The part arrays of one run (n parts each, of every kind), filled with a
// byte no part writes.
struct host_outs {
    std::vector<unsigned char> sum, sq, count, ext, var;

    // Sizes and fills the arrays for m parts and points the arrays of kind
    // `kind` (squares where want_sq, counts where skipnan) of a at them.
    void set(ax_gpu_args &a, int kind, bool want_sq, bool skipnan, size_t m)
    {
        sum.assign(m * 16, 0x5a);
        sq.assign(m * 16, 0x5a);
        count.assign(m * 8, 0x5a);
        ext.assign(m * sizeof(rd_extrema), 0x5a);
        var.assign(m * sizeof(rd_var), 0x5a);
        a.sum = a.sq = a.count = a.extrema = a.var = 0;
        if (kind == 0) {
            a.sum = (rd_u64)sum.data();
            a.sq = want_sq ? (rd_u64)sq.data() : 0;
            a.count = skipnan ? (rd_u64)count.data() : 0;
        } else if (kind == 1) {
            a.extrema = (rd_u64)ext.data();
        } else {
            a.var = (rd_u64)var.data();
        }
    }
};

// The 8-byte words where a and b differ, two NaNs alike.
static size_t words_apart(const std::vector<unsigned char> &a, const std::vector<unsigned char> &b)
{
    size_t n = 0;
    for (size_t i = 0; i + 8 <= a.size(); i += 8) {
        double x, y;
        memcpy(&x, &a[i], 8);
        memcpy(&y, &b[i], 8);
        if (memcmp(&x, &y, 8) && !(x != x && y != y))
            n++;
    }
    return n;
}

// The words where any array of oa and ob differs.
static size_t outs_apart(const host_outs &oa, const host_outs &ob)
{
    return words_apart(oa.sum, ob.sum) + words_apart(oa.sq, ob.sq) +
           words_apart(oa.count, ob.count) + words_apart(oa.ext, ob.ext) +
           words_apart(oa.var, ob.var);
}

typedef void (*body)(const elem_t *, const ax_gpu_args &);

// Runs body f as every thread of a grid of g blocks, one after another.
static void grid_run(body f, unsigned g, const elem_t *x, const ax_gpu_args &a)
{
    for (unsigned b = 0; b < g; b++)
        for (unsigned t = 0; t < AX_THREADS; t++) {
            blockIdx.x = b;
            threadIdx.x = t;
            f(x, a);
        }
}

// main's body and a variant's, as bodies of one signature.
template <int K, bool N, bool Q> void old_body(const elem_t *x, const ax_gpu_args &a)
{
    block_cols<K, N, Q>(x, a);
}
template <int K, bool N, bool Q, unsigned V, unsigned B, bool P>
void vec_body(const elem_t *x, const ax_gpu_args &a)
{
    block_cols_vec<K, N, Q, V, B, P>(x, a);
}

typedef probe_variant<body> host_variant;
#define NVARIANTS 6
template <int K, bool N, bool Q> struct host_variants {
    static constexpr host_variant list[NVARIANTS] = {
        {vec_body<K, N, Q, 1, AX_COLS_PAIR, false>, 1, 1, "V1 B2"},
        {vec_body<K, N, Q, 1, 1, false>, 1, 1, "V1 B1"},
        {vec_body<K, N, Q, 1, 1, true>, 1, 1, "V1 B1 pipe"},
        {vec_body<K, N, Q, 2, 1, false>, 1, 2, "V2 B1"},
        {vec_body<K, N, Q, 2, 1, true>, 1, 2, "V2 B1 pipe"},
        {vec_body<K, N, Q, 2, 2, false>, 1, 2, "V2 B2"},
    };
};

// The kinds checked: main's body and the variants of each.
#define HK(k, n, q, name) {k, n, q, old_body<k, n, q>, host_variants<k, n, q>::list, name}
static const probe_kind<body> host_kinds[] = {AX_PROBE_KINDS(HK)};

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 1;
    int checks = 0, fails = 0;
    const size_t n = 1u << 19;
    std::vector<elem_t> h(n + 16);
    for (auto &e : h)
        e = rnd_elem();
    for (int round = 0; round < rounds; round++)
        for (unsigned C : probe_cols)
            for (int shape = 0; shape < 6; shape++) {
                probe_chunk ch;
                if (!random_chunk(C, shape, n, 1u << 18, ch))
                    continue;
                if (ch.listed)
                    ch.a.entries = (rd_u64)ch.ent.data();
                const ax_gpu_args &a = ch.a;
                const elem_t *x = h.data() + ch.shift;
                const size_t m = ch.ent.size() * C;
                for (const probe_kind<body> &k : host_kinds) {
                    host_outs oa, ob;
                    ax_gpu_args ma = a;
                    oa.set(ma, k.kind, k.sq, k.skipnan, m);
                    grid_run(k.old, (unsigned)((m + AX_THREADS - 1) / AX_THREADS), x, ma);
                    for (int v = 0; v < NVARIANTS; v++) {
                        ax_gpu_args b = a;
                        ob.set(b, k.kind, k.sq, k.skipnan, m);
                        const rd_u64 w = (C + k.vars[v].V - 1) / k.vars[v].V;
                        grid_run(k.vars[v].k,
                                 (unsigned)((a.nentries * w + AX_THREADS - 1) / AX_THREADS), x, b);
                        const size_t d = outs_apart(oa, ob);
                        checks++;
                        if (d && fails++ < 20)
                            printf("DIFFER %s %s %s: %zu words\n", ch.what, k.name,
                                   k.vars[v].name, d);
                    }
                }
            }
    printf("host bits: %d checks, %d differ\n", checks, fails);
    return fails != 0;
}
