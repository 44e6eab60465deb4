/* axis_gpu.c [bench] - on a machine with a CUDA GPU: the kernels of
 * reductions along axes (ax_gpu_launch) fill every chunk's result buffer
 * with the bytes of the CPU's ax_cpu_chunk (any NaN's payload aside: the
 * GPU's are canonical), for every type, NaN policy and op kind, on random
 * and adversarial data, odd shapes and chunks cut anywhere; and the
 * whole-array variance kernel (rdk_var) gives rd_cpu_var_tiles' partials.
 * With "bench": the kernels' throughput on 1 GiB arrays as a ratio to the
 * device-to-device copy measured in the same run.
 *
 * Build: cc -std=c11 -O2 -ffp-contract=off -I. tests/gpu/axis_gpu.c
 * $(LIB_OBJ) -lz -ldl -lm -lpthread (tests/gpu/test_axis_gpu.sh does). */
#include "runtime/axis.h"
#include "runtime/axis_gpu.h"
#include "runtime/cu.h"
#include "runtime/gpu.h"
#include "runtime/reduce.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static unsigned pairs_chunks; /* chunks whose kernels took column pairs (axk_pairs_*) */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* The next 64 pseudo-random bits (xorshift64). */
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Exits on a failed driver or runtime call (the test cannot go on). */
static void need(int ok, const char *what, gpu *g)
{
    if (!ok) {
        fprintf(stderr, "axis_gpu: %s failed: %s\n", what, g ? gpu_status(g)->text : "");
        exit(2);
    }
}

/* Fills n elements of type t with random bits and, for floats, NaN,
 * infinities, signed zeros, huge values and repeats (ties). */
static void fill(dt_type t, unsigned char *x, size_t n, int plain)
{
    size_t sz = dt_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(), sel = r % 23;
        unsigned char *p = x + i * sz;
        if (sel == 0 && i > 0) {
            memcpy(p, p - sz, sz);
            continue;
        }
        if (t == DT_F32) {
            float f = sel == 1 ? NAN : sel == 2 ? -INFINITY : sel == 3 ? -0.0f : sel == 4 ? 3e38f
                    : (float)((int64_t)(r >> 40) - (1 << 23)) * 0x1p-12f + (plain ? 1e4f : 0.0f);
            if (plain && sel <= 4)
                f = 1e4f + (float)sel;
            memcpy(p, &f, sz);
        } else if (t == DT_F64) {
            double d = sel == 1 ? NAN : sel == 2 ? INFINITY : sel == 3 ? -0.0 : sel == 4 ? -1e300
                     : (double)((int64_t)(r >> 11) - (1ll << 52)) * 0x1p-40 + (plain ? 1e9 : 0.0);
            if (plain && sel <= 4)
                d = 1e9 + (double)sel;
            memcpy(p, &d, sz);
        } else if (t == DT_F16 || t == DT_BF16) {
            uint16_t h = (uint16_t)(r >> 20);
            if (plain)
                h &= 0x3fff; /* no NaN or infinity */
            memcpy(p, &h, sz);
        } else {
            memcpy(p, &r, sz);
        }
    }
}

/* Whether two doubles' bits agree, any NaN matching any NaN. */
static int same_double(const void *a, const void *b)
{
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return (x != x && y != y) || !memcmp(a, b, 8);
}

/* Compares n records of `each` bytes; `dbl` marks the 8-byte words that
 * hold doubles (bit i for word i), compared up to NaN payloads. */
static int same_records(const unsigned char *a, const unsigned char *b, size_t n, size_t each,
                        unsigned dbl, size_t *where)
{
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < each / 8; w++) {
            const unsigned char *x = a + i * each + w * 8, *y = b + i * each + w * 8;
            if ((dbl >> w & 1) ? !same_double(x, y) : memcmp(x, y, 8) != 0) {
                *where = i;
                return 0;
            }
        }
    return 1;
}

typedef struct {
    gpu *g;
    gpu_queue q;
    CUdeviceptr din, dout;
    unsigned char *hout, *cout;
    size_t in_cap, out_cap;
} rig;

/* Makes sure the rig's buffers hold `in` input and `out` result bytes. */
static void rig_size(rig *r, size_t in, size_t out)
{
    if (in > r->in_cap) {
        if (r->in_cap)
            gpu_mem_free(r->g, r->din);
        need(gpu_mem_alloc(r->g, &r->din, in, "input") == 0, "input buffer", r->g);
        r->in_cap = in;
    }
    if (out > r->out_cap) {
        if (r->out_cap) {
            gpu_mem_free(r->g, r->dout);
            gpu_host_free(r->g, r->hout);
            free(r->cout);
        }
        need(gpu_mem_alloc(r->g, &r->dout, out, "results") == 0, "result buffer", r->g);
        r->hout = gpu_host_alloc(r->g, out);
        r->cout = malloc(out);
        need(r->hout && r->cout, "result host buffers", r->g);
        r->out_cap = out;
    }
}

/* One chunk [e0, e1) of x on both sides, compared. */
static void check_chunk(rig *r, const ax_plan *p, const unsigned char *x, uint64_t e0,
                        uint64_t e1, size_t capacity, const char *what)
{
    size_t sz = dt_size(p->dtype);
    ax_layout l = ax_layout_for(p, capacity);
    rig_size(r, capacity, l.total);
    ax_cpu_chunk(p, x + e0 * sz, e0, e1, capacity, r->cout);
    memset(r->hout, 0xa5, l.total);
    need(cu.MemcpyHtoDAsync(r->din, x + e0 * sz, (e1 - e0) * sz, r->q.stream) == CUDA_SUCCESS,
         "copy in", r->g);
    char kernels[ENGINE_KERNELS_LEN] = "";
    ax_job job = {.plan = p, .first = 0, .st = NULL};
    engine_chunk c = {.op = &job, .g = r->g, .stream = r->q.stream, .in = r->din, .out = r->dout,
                      .host_out = r->hout, .bytes = (e1 - e0) * sz, .capacity = capacity,
                      .offset = e0 * sz, .kernels = kernels};
    need(ax_gpu_launch(&c) == 0, "ax_gpu_launch", r->g);
    need(cu.StreamSynchronize(r->q.stream) == CUDA_SUCCESS, "kernels", r->g);
    pairs_chunks += strstr(kernels, "axk_pairs_") != NULL;
    ax_chunk_hdr h;
    memcpy(&h, r->cout, sizeof h);
    size_t parts = (size_t)h.nentries * p->width, at = 0;
    int ok = !memcmp(r->cout, r->hout, sizeof h);
    unsigned fl = dt_is_float(p->dtype) ? 1u : 0u, sqf = l.sq_size == 8 ? 1u : 0u;
    if (ok && l.use_sum)
        ok = same_records(r->cout + l.sum_at, r->hout + l.sum_at, parts, l.sum_size, fl, &at);
    if (ok && l.use_sq)
        ok = same_records(r->cout + l.sq_at, r->hout + l.sq_at, parts, l.sq_size, sqf, &at);
    if (ok && l.use_cnt)
        ok = same_records(r->cout + l.count_at, r->hout + l.count_at, parts, 8, 0, &at);
    if (ok && l.use_e)
        ok = ax_extrema_parts_same(p, (const rd_extrema *)(r->cout + l.extrema_at),
                                   (const rd_extrema *)(r->hout + l.extrema_at), parts);
    if (ok && l.use_v)
        ok = same_records(r->cout + l.var_at, r->hout + l.var_at, parts, sizeof(rd_var), 0x3e,
                          &at);
    if (ok)
        ok = !memcmp(r->cout + l.raw_at, r->hout + l.raw_at, (size_t)(h.head + h.tail) * sz);
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL %s: chunk [%llu, %llu) units [%llu, %llu) part %zu (%s)\n", what,
                (unsigned long long)e0, (unsigned long long)e1, (unsigned long long)h.u0,
                (unsigned long long)h.u1, at, kernels);
    }
}

/* Every chunk of a cut of the array into pieces of about `chunk` elements
 * (odd sizes: heads and tails; where odd, every piece an odd count, so
 * that the chunks start on elements of either parity), for one plan. */
static void check_plan(rig *r, dt_type t, unsigned ops, int skipnan, int ndim,
                       const uint64_t *shape, unsigned axes, const unsigned char *x,
                       uint64_t chunk, int odd)
{
    ax_plan p;
    io_status st;
    memset(&st, 0, sizeof st);
    if (ax_plan_init(&p, t, ops, skipnan, ndim, shape, 0, axes, 0, &st) != 0) {
        fprintf(stderr, "plan refused: %s\n", st.text);
        failed++;
        return;
    }
    char what[160];
    int n = snprintf(what, sizeof what, "%s ops %#x skipnan %d axes %#x shape", dt_name(t), ops,
                     skipnan, axes);
    for (int i = 0; i < ndim && n < 140; i++)
        n += snprintf(what + n, sizeof what - n, "%s%llu", i ? "x" : " ", (unsigned long long)shape[i]);
    size_t capacity = (size_t)(chunk + 7) * dt_size(t);
    for (uint64_t e0 = 0; e0 < p.nelem;) {
        uint64_t len = (chunk - rnd() % (chunk / 3 + 1)) | (uint64_t)(odd != 0);
        uint64_t e1 = p.nelem - e0 < len ? p.nelem : e0 + len;
        check_chunk(r, &p, x, e0, e1, capacity, what);
        e0 = e1;
    }
}

/* The shapes and axes of the comparison, every type and op kind. */
static void check_all(rig *r)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8,  DT_I16, DT_I32,
                                    DT_I64, DT_U8,  DT_U16, DT_U32, DT_U64, DT_BOOL};
    static const unsigned opsets[] = {
        RD_OP_SUM | RD_OP_COUNT, RD_OP_SUMSQ | RD_OP_MEAN, RD_OP_MIN | RD_OP_ARGMAX,
        RD_OP_VAR, RD_OP_SUM | RD_OP_MAX | RD_OP_ARGMIN | RD_OP_STD | RD_OP_SUMSQ, RD_OP_COUNT};
    static const struct {
        int ndim;
        uint64_t shape[3];
        unsigned axes;
        uint64_t chunk;
    } cases[] = {
        {2, {1000, 3}, 1u << 0, 777},        {2, {37, 64}, 1u << 0, 500},
        {2, {20, 1000}, 1u << 0, 3001},      {2, {3, 100000}, 1u << 0, 70001},
        {2, {5000, 1}, 1u << 0, 1234},       {2, {4000, 3}, 1u << 1, 1000},
        {2, {300, 64}, 1u << 1, 999},        {2, {40, 1000}, 1u << 1, 5555},
        {2, {9, 2048}, 1u << 1, 6000},       {2, {7, 2049}, 1u << 1, 6000},
        {2, {5, 16385}, 1u << 1, 30000},     {2, {3, 40000}, 1u << 1, 50000},
        {1, {100003}, 1u << 0, 40000},       {3, {6, 50, 7}, (1u << 0) | (1u << 2), 333},
        {3, {5, 33, 20}, 1u << 1, 400},      {3, {4, 3, 5000}, (1u << 0) | (1u << 2), 9000},
        {3, {17, 2, 9}, (1u << 0) | (1u << 1), 100},
        {2, {3, 70000}, 1u << 1, 90000},     {2, {2, 1100000}, 1u << 1, 400000},
        {3, {50, 3, 2}, 1u << 1, 77},        {2, {3000, 5}, 1u << 0, 15000},
        {3, {4, 32, 6}, (1u << 0) | (1u << 1), 200},
        {2, {50, 129}, 1u << 1, 2000},       {2, {1000, 2}, 1u << 1, 333},
        {2, {100, 512}, 1u << 1, 9000},      {2, {100, 513}, 1u << 1, 9000},
        /* short runs over many stages a block; long entries of few columns (the flat
           kernels: one sweep, several, stages of an entry, a short last block); long
           entries of many columns (shared by several threads) */
        {2, {120000, 3}, 1u << 1, 300000},   {2, {8000, 64}, 1u << 1, 200001},
        {2, {20001, 3}, 1u << 0, 50000},     {2, {5001, 32}, 1u << 0, 70001},
        {3, {2, 3001, 7}, 1u << 1, 30001},   {2, {3000, 17}, 1u << 0, 51001},
        {2, {3000, 40}, 1u << 0, 100000},    {2, {1100, 33}, 1u << 0, 9000},
        /* many columns whose entries several threads share (aligned and unaligned chunk
           starts, even, odd and multiple-of-4 column counts, a part-filled last column tile;
           entries of fewer blocks than threads; several sweeps a chunk) */
        {2, {2000, 130}, 1u << 0, 100003},   {2, {1500, 66}, 1u << 0, 33333},
        {2, {900, 97}, 1u << 0, 20001},      {2, {4100, 48}, 1u << 0, 200000},
        {3, {3, 300, 68}, 1u << 1, 20000},   {3, {50, 40, 36}, 1u << 1, 7000},
        /* runs of a thread each (at most 32 vectors: stages permuted where a run is an
           even number of vectors); few columns whose stages are permuted */
        {2, {3000, 8}, 1u << 1, 7001},       {2, {2000, 16}, 1u << 1, 9999},
        {2, {700, 32}, 1u << 1, 12345},      {2, {500, 48}, 1u << 1, 8191},
        {2, {300, 128}, 1u << 1, 20000},     {2, {400, 33}, 1u << 1, 5003},
        {2, {300, 100}, 1u << 1, 11111},     {2, {3000, 4}, 1u << 0, 7777},
        {2, {2000, 8}, 1u << 0, 16001},      {2, {1500, 14}, 1u << 0, 21000},
        {2, {1500, 12}, 1u << 0, 9001},
        /* few columns by groups of consecutive blocks: 16, 8, 2 and 1 group an entry, stages
           of several blocks a group, entries cut short by a chunk or a sweep's end */
        {2, {40000, 2}, 1u << 0, 100003},    {2, {9000, 9}, 1u << 0, 60001},
        {2, {2100, 31}, 1u << 0, 64999},     {3, {3, 5000, 5}, 1u << 1, 40001},
        {2, {6000, 13}, 1u << 0, 33333},
        /* two to four columns, a block a lane straight from global memory where an entry
           starts 16-byte aligned: entries of 64 blocks, two a lane; short last blocks */
        {2, {50001, 4}, 1u << 0, 200001},    {2, {70000, 3}, 1u << 0, 210000},
        {2, {90007, 2}, 1u << 0, 180000},    {3, {3, 20000, 3}, 1u << 1, 60000},
        /* many columns over axis 0: even and odd counts, chunks that start on elements of
           either parity */
        {2, {3001, 34}, 1u << 0, 40001},     {2, {1200, 258}, 1u << 0, 77777},
        {2, {700, 1001}, 1u << 0, 99999},
    };
    size_t maxel = 2200000;
    unsigned char *x = malloc(maxel * 8);
    need(x != NULL, "data", NULL);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            uint64_t n = 1;
            for (int d = 0; d < cases[ci].ndim; d++)
                n *= cases[ci].shape[d];
            for (int plain = 0; plain <= 1; plain++) {
                fill(types[ti], x, (size_t)n, plain);
                for (size_t oi = 0; oi < sizeof opsets / sizeof opsets[0]; oi++)
                    for (int skipnan = 0; skipnan <= dt_is_float(types[ti]); skipnan++)
                        check_plan(r, types[ti], opsets[oi], skipnan, cases[ci].ndim,
                                   cases[ci].shape, cases[ci].axes, x, cases[ci].chunk, 0);
            }
        }
    free(x);
}

/* n float32 elements, about one in `rare` of them special: NaN, either
 * infinity, either zero, subnormals, the largest finite value. */
static void fill_specials(float *x, size_t n, unsigned rare)
{
    static const float special[] = {NAN,    INFINITY, -INFINITY,  -0.0f,  0.0f,
                                    1e-40f, -3e-42f,  0x1p-149f, 3.4e38f};
    const unsigned ns = sizeof special / sizeof special[0];
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(), sel = r % ((uint64_t)rare * ns);
        x[i] = sel < ns ? special[sel] : (float)((int64_t)(r >> 40) - (1 << 23)) * 0x1p-10f;
    }
}

/* The float32 sums of many columns two a thread (axk_pairs_*) against the
 * CPU on special values (one in 4 elements or one in 1024), with and
 * without skipnan: even column counts (the smallest above 32, a
 * part-filled last block, a chunk of every entry level, several sweeps a
 * chunk, a sweep of two blocks) cut into chunks of odd lengths, so that every other chunk starts on an odd element (not
 * 8-byte aligned: the kernels a thread a column); the kernels must have
 * run where the sums of a case fit them, and nowhere for odd column
 * counts, C = 2 (few columns) or square sums. */
static void check_pairs(rig *r)
{
    static const unsigned opsets[] = {RD_OP_SUM | RD_OP_COUNT, RD_OP_MEAN,
                                      RD_OP_SUM | RD_OP_MAX | RD_OP_ARGMIN | RD_OP_VAR,
                                      RD_OP_SUM | RD_OP_SUMSQ, RD_OP_COUNT};
    static const struct {
        int ndim;
        uint64_t shape[3];
        unsigned axes;
        uint64_t chunk;
        int pairs; /* the column count fits the pairs */
    } cases[] = {
        {2, {3001, 34}, 1u << 0, 40001, 1},    {2, {1200, 258}, 1u << 0, 77777, 1},
        {2, {2000, 64}, 1u << 0, 128001, 1},   {2, {700, 1000}, 1u << 0, 99999, 1},
        {3, {3, 300, 68}, 1u << 1, 20001, 1},  {2, {17, 4098}, 1u << 0, 140001, 1},
        {2, {1001, 33}, 1u << 0, 9999, 0},     {2, {600, 257}, 1u << 0, 20001, 0},
        {2, {5000, 2}, 1u << 0, 3333, 0},
    };
    size_t maxel = 800000;
    float *x = malloc(maxel * sizeof *x);
    need(x != NULL, "data", NULL);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        uint64_t n = 1;
        for (int d = 0; d < cases[ci].ndim; d++)
            n *= cases[ci].shape[d];
        need(n <= maxel, "a case's size", NULL);
        for (int dense = 0; dense <= 1; dense++) {
            fill_specials(x, (size_t)n, dense ? 4 : 1024);
            for (size_t oi = 0; oi < sizeof opsets / sizeof opsets[0]; oi++)
                for (int skipnan = 0; skipnan <= 1; skipnan++) {
                    unsigned ops = opsets[oi], before = pairs_chunks;
                    check_plan(r, DT_F32, ops, skipnan, cases[ci].ndim, cases[ci].shape,
                               cases[ci].axes, (const unsigned char *)x, cases[ci].chunk, 1);
                    int sums = (ops & (RD_OP_SUM | RD_OP_MEAN)) || (skipnan && (ops & RD_OP_COUNT));
                    int want = cases[ci].pairs && sums && !(ops & RD_OP_SUMSQ);
                    if (want == (pairs_chunks > before)) {
                        passed++;
                    } else {
                        failed++;
                        fprintf(stderr, "FAIL pairs case %zu ops %#x skipnan %d: %u chunks took "
                                "axk_pairs_*, expected %s\n", ci, ops, skipnan,
                                pairs_chunks - before, want ? "some" : "none");
                    }
                }
        }
    }
    free(x);
}

/* The whole-array variance kernel against rd_cpu_var_tiles. */
static void check_whole_var(rig *r)
{
    static const dt_type types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8, DT_I64, DT_U16,
                                    DT_BOOL};
    size_t n = 5 * RD_TILE + 1234, nt = (n + RD_TILE - 1) / RD_TILE;
    unsigned char *x = malloc(n * 8);
    rd_var *want = malloc(nt * sizeof *want);
    need(x && want, "data", NULL);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (int skipnan = 0; skipnan <= dt_is_float(types[ti]); skipnan++) {
            dt_type t = types[ti];
            fill(t, x, n, 0);
            rig_size(r, n * 8, nt * sizeof(rd_var));
            rd_cpu_var_tiles(x, n, t, skipnan, 0, nt, want);
            char mod[64], name[32];
            snprintf(mod, sizeof mod, "reduce_%s_var%s", rd_dtype_tag(t), skipnan ? "_skipnan" : "");
            snprintf(name, sizeof name, "rdk_var%s", skipnan ? "_skipnan" : "");
            CUfunction f;
            unsigned long long n64 = n, first = 0;
            void *params[] = {&r->din, &n64, &first, &r->dout};
            need(cu.MemcpyHtoDAsync(r->din, x, n * dt_size(t), r->q.stream) == CUDA_SUCCESS,
                 "copy in", r->g);
            need(gpu_function(r->g, mod, name, &f) == 0 &&
                     gpu_launch(r->g, f, name, (unsigned)nt, RD_WARPS * 32, r->q.stream, params) == 0 &&
                     cu.MemcpyDtoHAsync(r->hout, r->dout, nt * sizeof(rd_var), r->q.stream) ==
                         CUDA_SUCCESS &&
                     cu.StreamSynchronize(r->q.stream) == CUDA_SUCCESS,
                 name, r->g);
            size_t at = 0;
            if (same_records((unsigned char *)want, r->hout, nt, sizeof(rd_var), 0x3e, &at)) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "FAIL whole-array var %s skipnan %d: tile %zu\n", dt_name(t),
                        skipnan, at);
            }
        }
    free(x);
    free(want);
}

/* Milliseconds of `reps` runs of one chunk's kernels on the rig (the
 * whole array one chunk, already on the device). */
static double time_chunk(rig *r, engine_chunk *c, int reps)
{
    CUevent a, b;
    need(cu.EventCreate(&a, 0) == CUDA_SUCCESS && cu.EventCreate(&b, 0) == CUDA_SUCCESS,
         "events", r->g);
    need(ax_gpu_kernels(c) == 0, "warm-up", r->g); /* loads the module */
    cu.EventRecord(a, r->q.stream);
    for (int i = 0; i < reps; i++)
        need(ax_gpu_kernels(c) == 0, "ax_gpu_kernels", r->g);
    cu.EventRecord(b, r->q.stream);
    need(cu.EventSynchronize(b) == CUDA_SUCCESS, "timing", r->g);
    float ms = 0;
    cu.EventElapsedTime(&ms, a, b);
    cu.EventDestroy(a);
    cu.EventDestroy(b);
    return ms / reps;
}

/* The along-axis rows: float32 and float64 (N, C) over axis 0 and (R, N)
 * over axis 1, 1 GiB each, sum only, the kernels alone (ax_gpu_kernels:
 * the parts stay in device memory) as input
 * bytes per second over the copy's (read + write of the same bytes); the
 * parts' own bytes are named beside. */
static void bench(rig *r)
{
    const size_t bytes = (size_t)1 << 30;
    rig_size(r, bytes, 0);
    need(cu.MemsetD8Async(r->din, 0x3c, bytes, r->q.stream) == CUDA_SUCCESS, "fill", r->g);
    CUdeviceptr copy;
    need(gpu_mem_alloc(r->g, &copy, bytes, "copy") == 0, "copy buffer", r->g);
    CUevent a, b;
    cu.EventCreate(&a, 0);
    cu.EventCreate(&b, 0);
    cu.MemcpyDtoDAsync(copy, r->din, bytes, r->q.stream);
    cu.EventRecord(a, r->q.stream);
    for (int i = 0; i < 10; i++)
        cu.MemcpyDtoDAsync(copy, r->din, bytes, r->q.stream);
    cu.EventRecord(b, r->q.stream);
    cu.EventSynchronize(b);
    float cms = 0;
    cu.EventElapsedTime(&cms, a, b);
    double copy_bw = 2.0 * bytes / (cms / 10 * 1e-3); /* read + write */
    printf("device copy: %.0f GB/s (read + write)\n", copy_bw / 1e9);
    printf("%-8s %-6s %10s %10s %10s %8s\n", "dtype", "axis", "rows", "cols", "GB/s", "of copy");
    fflush(stdout);
    static const uint64_t cs[] = {1, 3, 64, 1000, 100000}, ns[] = {3, 64, 1000, 1000000};
    for (int f64 = 0; f64 <= 1; f64++)
        for (int lead = 1; lead >= 0; lead--) {
            const uint64_t *list = lead ? cs : ns;
            for (int k = 0; k < (lead ? 5 : 4); k++) {
                dt_type t = f64 ? DT_F64 : DT_F32;
                uint64_t nel = bytes / dt_size(t), inner = list[k], shape[2];
                shape[0] = nel / inner;
                shape[1] = inner;
                if (!lead && inner == 1000000)
                    shape[0] = nel / inner;
                ax_plan p;
                io_status st;
                memset(&st, 0, sizeof st);
                need(ax_plan_init(&p, t, RD_OP_SUM, 0, 2, shape, 0, lead ? 1u : 2u, 0, &st) == 0,
                     "plan", NULL);
                uint64_t used = shape[0] * shape[1];
                size_t cap = (size_t)used * dt_size(t);
                ax_layout l = ax_layout_for(&p, cap);
                CUdeviceptr out;
                need(gpu_mem_alloc(r->g, &out, l.total, "parts") == 0, "parts", r->g);
                unsigned char *host = gpu_host_alloc(r->g, l.total); /* entry lists, pinned */
                need(host != NULL, "host buffer", r->g);
                char kernels[ENGINE_KERNELS_LEN] = "";
                ax_job job = {.plan = &p, .first = 0, .st = NULL};
                engine_chunk c = {.op = &job, .g = r->g, .stream = r->q.stream, .in = r->din,
                                  .out = out, .host_out = host, .bytes = cap, .capacity = cap,
                                  .offset = 0, .kernels = kernels};
                double ms = time_chunk(r, &c, 5);
                double bw = (double)cap / (ms * 1e-3);
                ax_chunk_hdr h = ax_chunk_of(&p, 0, used);
                printf("%-8s %-6s %10llu %10llu %10.0f %8.2f   parts %.1f MB (%s)\n", dt_name(t),
                       lead ? "0" : "1", (unsigned long long)shape[0],
                       (unsigned long long)shape[1], bw / 1e9, bw / copy_bw,
                       (double)h.nentries * p.width * l.sum_size / 1e6, kernels);
                gpu_mem_free(r->g, out);
                gpu_host_free(r->g, host);
            }
        }
    gpu_mem_free(r->g, copy);
}

int main(int argc, char **argv)
{
    rig r;
    memset(&r, 0, sizeof r);
    int n = gpu_device_count();
    if (n <= 0) {
        printf("axis_gpu: no GPU (%s): skipped\n", gpu_load_message());
        return 0;
    }
    need(gpu_open(&r.g, 0) == 0, "gpu_open", NULL);
    need(gpu_queue_open(r.g, &r.q) == 0, "stream", r.g);
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        bench(&r);
        return 0;
    }
    check_whole_var(&r);
    check_pairs(&r);
    check_all(&r);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
