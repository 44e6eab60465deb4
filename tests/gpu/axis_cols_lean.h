// axis_cols_lean.h - a variant of the many-column block-entry body of the
// reductions along axes (block_cols of ptx/axis.cu, C > 32) with main's
// order of every sum: V adjacent columns a thread, B blocks' loads a step,
// the next step's loads issued first with PIPE. Measured by
// bench_axis_cols.cu on a GPU, checked on the host by axis_cols_host.cpp.
// Include after ptx/axis.cu.
#ifndef GPUBATCH_TESTS_AXIS_COLS_LEAN_H
#define GPUBATCH_TESTS_AXIS_COLS_LEAN_H

// V adjacent elements of one row.
template <unsigned V> struct ax_vec {
    elem_t v[V];
};

// The V adjacent elements of a row at p, read at once where `wide` (p
// aligned to V elements), else one by one.
template <unsigned V>
__device__ __forceinline__ ax_vec<V> ax_load_vec(const elem_t *p, bool wide)
{
    ax_vec<V> t;
    if (V == 2 && wide && sizeof(elem_t) == 4) {
        const uint2 u = __ldg((const uint2 *)p);
        memcpy(&t.v[0], &u.x, 4);
        memcpy(&t.v[1], &u.y, 4);
    } else if (V == 2 && wide && sizeof(elem_t) == 8) {
        const ulonglong2 u = __ldg((const ulonglong2 *)p);
        memcpy(&t.v[0], &u.x, 8);
        memcpy(&t.v[1], &u.y, 8);
    } else {
#pragma unroll
        for (unsigned v = 0; v < V; v++)
            t.v[v] = ax_load(p + v);
    }
    return t;
}

// Block entries of many columns (C > 32), V adjacent columns a thread:
// thread (i, q) adds columns V q .. V q + V - 1 (those below C) of the
// 2^level blocks of entry i, each column's blocks and rows in main's order
// (block_cols); the entry's blocks are consecutive in one sweep, so the
// rows are found by one division and pointer steps of C. B blocks' loads
// are in flight at a step; with PIPE the next step's loads are issued
// before the step's sums. A row's V elements are one load where C is a
// multiple of V and the chunk's data aligned to V elements.
template <int KIND, bool SKIPNAN, bool SUMSQ, unsigned V, unsigned B, bool PIPE>
__device__ __forceinline__ void block_cols_lean(const elem_t *__restrict__ x,
                                                const ax_gpu_args &a)
{
    const rd_u64 g = (rd_u64)blockIdx.x * AX_THREADS + threadIdx.x;
    const rd_u64 w = (a.C + V - 1) / V;
    if (g >= a.nentries * w)
        return;
    const rd_u64 i = g / w, c = (g - i * w) * V;
    const ax_gpu_entry en = entry_at(a, i);
    const rd_u64 sweep = en.u / a.blocks_per_sweep;
    const rd_u64 row0 = (en.u - sweep * a.blocks_per_sweep) * RD_AXIS_BLOCK;
    const rd_u64 left = a.L - row0; // rows from the entry's first to its sweep's end
    const elem_t *p = x + ((sweep * a.L + row0) * a.C - a.e0) + c;
    const bool wide =
        V > 1 && a.C % V == 0 && ((size_t)x - a.e0 * sizeof(elem_t)) % (V * sizeof(elem_t)) == 0;
    const unsigned nv = a.C - c < V ? (unsigned)(a.C - c) : V; // columns of this thread
    const unsigned n = 1u << en.level, steps = (n + B - 1) / B;
    const rd_u64 C = a.C;
    blk_fold<KIND, SUMSQ> f[V];
    elem_t buf[PIPE ? 2 : 1][B][V][RD_AXIS_BLOCK];
    // fn(h, k, rem) for each block k = s B + h of step s (rem: the rows from
    // its first to the sweep's end); no early exit, so the loop unrolls whole
    auto each_block = [&](unsigned s, auto fn) {
#pragma unroll
        for (unsigned h = 0; h < B; h++) {
            const unsigned k = s * B + h;
            if (B == 1 || k < n)
                fn(h, k, left - (rd_u64)k * RD_AXIS_BLOCK);
        }
    };
    // the loads of step s into d
    auto load_step = [&](unsigned s, elem_t (&d)[B][V][RD_AXIS_BLOCK]) {
        each_block(s, [&](unsigned h, unsigned k, rd_u64 rem) {
            const unsigned rows = rem < RD_AXIS_BLOCK ? (unsigned)rem : RD_AXIS_BLOCK;
            const elem_t *q = p + (rd_u64)k * RD_AXIS_BLOCK * C;
#pragma unroll
            for (unsigned r = 0; r < RD_AXIS_BLOCK; r++) {
                ax_vec<V> t;
                if (r < rows && (V == 1 || wide || nv == V)) {
                    t = ax_load_vec<V>(q, wide);
                } else {
#pragma unroll
                    for (unsigned v = 0; v < V; v++)
                        t.v[v] = r < rows && v < nv ? ax_load(q + v) : elem_t(0);
                }
#pragma unroll
                for (unsigned v = 0; v < V; v++)
                    d[h][v][r] = t.v[v];
                q += C;
            }
        });
    };
    // the sums of step s from d, pushed in block order
    auto sum_step = [&](unsigned s, elem_t (&d)[B][V][RD_AXIS_BLOCK]) {
        each_block(s, [&](unsigned h, unsigned k, rd_u64 rem) {
            const rd_u64 j0 = (en.leaf + k) * RD_AXIS_BLOCK;
#pragma unroll
            for (unsigned v = 0; v < V; v++) {
                if (rem >= RD_AXIS_BLOCK)
                    f[v].push(k, block_sum<KIND, SKIPNAN, SUMSQ>(d[h][v], RD_AXIS_BLOCK, j0));
                else
                    f[v].push(k, block_sum<KIND, SKIPNAN, SUMSQ>(d[h][v], (unsigned)rem, j0));
            }
        });
    };
    if (PIPE) {
        load_step(0, buf[0]);
        for (unsigned s = 0; s < steps; s += 2) {
            if (s + 1 < steps)
                load_step(s + 1, buf[PIPE ? 1 : 0]);
            sum_step(s, buf[0]);
            if (s + 1 < steps) {
                if (s + 2 < steps)
                    load_step(s + 2, buf[0]);
                sum_step(s + 1, buf[PIPE ? 1 : 0]);
            }
        }
    } else {
        for (unsigned s = 0; s < steps; s++) {
            load_step(s, buf[0]);
            sum_step(s, buf[0]);
        }
    }
#pragma unroll
    for (unsigned v = 0; v < V; v++)
        if (v < nv)
            f[v].store(a, i * a.C + c + v, en.level);
}

#endif
