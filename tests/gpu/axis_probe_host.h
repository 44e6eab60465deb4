// axis_probe_host.h - the host side the probes of the along-axis kernels
// share (bench_axis_*.cu, axis_cols_host.cpp): random elements with NaN,
// infinities, zeros of either sign and subnormals; chunks of block units
// (random ones, a whole sweep) cut into entries as the host cuts them; the
// table of kinds of part and of variants checked. Include after
// ptx/axis.cu.
#ifndef GPUBATCH_TESTS_AXIS_PROBE_HOST_H
#define GPUBATCH_TESTS_AXIS_PROBE_HOST_H

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

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
    case 7: case 8: return (elem_t)(double)(r % 5); // ties of the extrema
    default: return (elem_t)((double)(long long)(r >> 11) * 0x1p-40);
    }
#else
    elem_t e;
    memcpy(&e, &r, sizeof e);
    if (r % 7 == 0)
        e = (elem_t)(r % 3); // ties
    return e;
#endif
}

// The entries of leaves [la, lb) of one segment (the greedy cut into
// maximal aligned subtrees of at most 2^AX_FOLD_LEVELS leaves), appended to
// out with unit index base + leaf.
static void cut_leaves(rd_u64 la, rd_u64 lb, rd_u64 base, std::vector<ax_gpu_entry> &out)
{
    for (rd_u64 at = la; at < lb;) {
        unsigned k = AX_FOLD_LEVELS;
        while (k && ((at & ((1ull << k) - 1)) || at + (1ull << k) > lb))
            k--;
        ax_gpu_entry e;
        e.u = base + at;
        e.leaf = at;
        e.level = k;
        e.pad = 0;
        out.push_back(e);
        at += 1ull << k;
    }
}

// The args of a chunk of one whole sweep of L rows of C columns: its
// entries cut from the sweep's leaves by the kernels (no list), no part
// arrays.
static ax_gpu_args whole_sweep(rd_u64 L, rd_u64 C)
{
    std::vector<ax_gpu_entry> ent;
    const rd_u64 bps = (L + 15) / 16;
    cut_leaves(0, bps, 0, ent);
    ax_gpu_args a;
    memset(&a, 0, sizeof a);
    a.nunits = bps;
    a.T = 1;
    a.L = L;
    a.C = C;
    a.blocks_per_sweep = bps;
    a.nentries = ent.size();
    return a;
}

// A variant of a kernel or body F: F itself, the threads an entry's blocks
// are shared by, its columns a thread, its name.
template <class F> struct probe_variant {
    F k;
    unsigned S, V;
    const char *name;
};

// A kind of part checked: kind (0 moments, 1 extrema, 2 variance),
// skipnan, squares, main's kernel or body F, the variants, the name.
template <class F> struct probe_kind {
    int kind;
    bool skipnan, sq;
    F old;
    const probe_variant<F> *vars;
    const char *name;
};

// The kinds of part the probes check, as KR(kind, skipnan, squares, name)
// items of an initializer list (skipnan only for floats).
#define AX_PROBE_KINDS_ALL(KR)                                                                \
    KR(0, false, false, "moments"), KR(0, false, true, "moments_sq"),                        \
        KR(1, false, false, "extrema"), KR(2, false, false, "var")
#if RD_FLOAT
#define AX_PROBE_KINDS(KR)                                                                    \
    AX_PROBE_KINDS_ALL(KR), KR(0, true, false, "moments_skipnan"),                          \
        KR(0, true, true, "moments_sq_skipnan"), KR(1, true, false, "extrema_skipnan"),     \
        KR(2, true, false, "var_skipnan")
#else
#define AX_PROBE_KINDS(KR) AX_PROBE_KINDS_ALL(KR)
#endif

// The column counts of the probes' random chunks: odd and even, below and
// above a GPU block's threads.
static const unsigned probe_cols[] = {33, 34, 64, 100, 257, 1000, 1001, 4099};

// A random chunk: its args (no part arrays, a.entries 0), its entries,
// whether the kernels need their list, the elements its data is shifted by
// and a description.
struct probe_chunk {
    ax_gpu_args a;
    std::vector<ax_gpu_entry> ent;
    bool listed;
    rd_u64 shift;
    char what[96];
};

// A random chunk of block units of C columns (shape 0-5: 0-2 one sweep of up
// to 4800 rows, the chunk from its start, to its end, or listed entries;
// 3-5 sweeps of 1-70 rows; odd shapes start `head` elements before the
// chunk's first unit; shapes 4-5 read data shifted by one element) over at
// most n elements and max_parts parts, into ch. False where none fits.
static bool random_chunk(unsigned C, int shape, size_t n, size_t max_parts, probe_chunk &ch)
{
    // L rows a sweep, the units [u0, u1) of the chunk, head elements before u0
    const rd_u64 L = shape < 3 ? 16 * (rnd() % 300) + 1 + rnd() % 16 : 1 + rnd() % 70;
    const rd_u64 bps = (L + 15) / 16;
    const rd_u64 sweeps = shape < 3 ? 1 : 1 + (n / C) / L / 2;
    const rd_u64 total = bps * sweeps;
    rd_u64 u0 = shape == 0 ? 0 : rnd() % (total / 2 + 1);
    rd_u64 u1 = shape == 1 ? total : u0 + 1 + rnd() % (total - u0);
    const rd_u64 first = (u0 / bps * L + (u0 % bps) * 16) * C;
    const rd_u64 head = shape % 2 ? rnd() % 5 % (first + 1) : 0;
    ch.shift = (rd_u64)(shape >= 4);
    // elements from the first row of unit u0 to the end of unit u - 1
    auto end_of = [&](rd_u64 u) {
        const rd_u64 r = 16 * (u % bps) + 16;
        return (u / bps * L + (r < L ? r : L)) * C;
    };
    while (u1 > u0 + 1 && end_of(u1 - 1) - first + head + ch.shift > n)
        u1 = u0 + 1 + (u1 - u0 - 1) / 2;
    if (end_of(u1 - 1) - first + head + ch.shift > n)
        return false;
    ch.ent.clear();
    for (rd_u64 s = u0 / bps; s <= (u1 - 1) / bps; s++) {
        const rd_u64 la = s == u0 / bps ? u0 % bps : 0;
        const rd_u64 lb = s == (u1 - 1) / bps ? (u1 - 1) % bps + 1 : bps;
        cut_leaves(la, lb, s * bps, ch.ent);
    }
    if (ch.ent.size() * C > max_parts)
        return false;
    ax_gpu_args &a = ch.a;
    memset(&a, 0, sizeof a);
    a.e0 = first - head;
    a.u0 = u0;
    a.nunits = u1 - u0;
    a.T = 1;
    a.L = L;
    a.C = C;
    a.blocks_per_sweep = bps;
    a.nentries = ch.ent.size();
    ch.listed = !(u0 / bps == (u1 - 1) / bps && shape != 2);
    if (!ch.listed)
        a.leaf0 = u0 % bps;
    snprintf(ch.what, sizeof ch.what, "C %u L %llu units [%llu, %llu) head %llu shift %llu", C,
             (unsigned long long)L, (unsigned long long)u0, (unsigned long long)u1,
             (unsigned long long)head, (unsigned long long)ch.shift);
    return true;
}

#endif
