/* transpose.c - running matrix transposes on either backend, in batch or
 * staged mode (see transpose.h). */
#include "transpose.h"
#include "backend_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "runtime/gzip/block_deflate.h"
#include "engine.h"
#include "runtime/gzip/block_inflate.h"
#include "io/hugemem.h"
#include "io/par.h"
#include "simd.h"
#include "ptx/transpose_tiles.h"

#define TP_CPU_BLOCK 32 /* least side of the CPU's cache blocks, in elements */
#define TP_CPU_LINE 64  /* the cache line, in bytes */
/* Bytes of a cache block's tile, the most of any element size (tp_cpu_side):
 * side * (side + TP_CPU_LINE / elem) * elem, largest for 1-byte elements. */
#define TP_CPU_TILE (128 * (128 + TP_CPU_LINE))
#define TP_MAX_GRID (1u << 30)

/* The staged mode: one matrix gathered whole on the backend's first device
 * (or in host memory on the CPU), then streamed out in pieces. */
struct tp_stage {
    backend *be;
    size_t elem;
    uint64_t rows, cols;
    size_t matrix_bytes;     /* rows * cols * elem */
    size_t chunk;            /* the pieces read and written */
    int deflate;             /* pieces compressed on the device (tp_stage_compress) */
    uint64_t out_offset;     /* output stream position of the next piece */
    tp_kernel kernel;        /* CUDA */
    CUdeviceptr din, dout;   /* CUDA */
    const void *host;        /* the current chunk's buffer */
    const pl_gz_chunk *gz;   /* its members (inflated by lane 0), or NULL */
    CUdeviceptr dsrc;        /* CUDA: the current chunk in device memory (tp_stage_chunk_device),
                                or 0 */
    engine_lane lane[2];     /* CUDA: the pieces going out, through two pinned buffers (and
                                device deflate, tp_stage_compress); lane 0 also inflates the
                                compressed pieces coming in */
    char *cpu_out;           /* CPU: the transposed matrix */
    io_status st; /* the last failure */
};

/* Side of the CPU's square cache blocks for elem-byte elements: a block's
 * piece of an output row is at least two cache lines. */
static inline size_t tp_cpu_side(size_t elem)
{
    return elem >= 4 ? TP_CPU_BLOCK : 128 / elem;
}

/* Copies rows [a0, a1) and columns [c0, c1) of the input, elements of type
 * T, into a tile whose row c - x0 holds column c, input row r at place
 * r - t0 (TP_CPU_TILED's tile), one element at a time. */
#define TP_TILE_LOOP(T)                                                                   \
    do {                                                                                  \
        const T *src = in;                                                                \
        T *dst = tile;                                                                    \
        for (uint64_t r = a0; r < a1; r++)                                                \
            for (uint64_t c = c0; c < c1; c++)                                            \
                dst[(c - x0) * pitch + (r - t0)] = src[r * cols + c];                     \
    } while (0)

typedef struct {
    uint64_t lo, hi;
} tp_u128_elem;

/* Fills part of a tile element by element (TP_TILE_LOOP's names). */
static inline __attribute__((always_inline)) void
tp_tile_scalar(const void *in, uint64_t cols, size_t elem, void *tile, size_t pitch, uint64_t t0,
               uint64_t x0, uint64_t a0, uint64_t a1, uint64_t c0, uint64_t c1)
{
    switch (elem) {
    case 1: TP_TILE_LOOP(uint8_t); break;
    case 2: TP_TILE_LOOP(uint16_t); break;
    case 4: TP_TILE_LOOP(uint32_t); break;
    case 8: TP_TILE_LOOP(uint64_t); break;
    default: TP_TILE_LOOP(tp_u128_elem); break;
    }
}

/* Defines NAME (compiled with ATTRS), which transposes a block
 * (tp_cpu_block's arguments) through one small contiguous tile per cache
 * block: squares of N x N elements that SQUARE(in, in's row pitch, out,
 * out's row pitch, in elements) moves in registers fill it from bands of N
 * input rows (the leftovers element by element), then each tile row goes
 * out as one piece of an output row, whole cache lines written by
 * STREAM(dst, src, bytes) with stores that bypass the cache. Writing the
 * squares straight to the output would instead touch the block's output rows,
 * a row pitch apart, in pieces smaller than a line; on power-of-two shapes
 * those all fall in the same cache sets and leave before their lines are
 * complete, and every line is read before it is written. Where the output
 * rows do not start on a line, each row's pieces are shifted back to its
 * own lines, so the tile also holds the line's worth of input rows before
 * the block. Pieces cut by [r0, r1) are copied with plain stores. */
#define TP_CPU_TILED(NAME, ATTRS, N, SQUARE, STREAM)                                       \
    ATTRS static inline __attribute__((always_inline)) void NAME(                          \
        const void *in, void *out, uint64_t rows, uint64_t cols, size_t elem, uint64_t r0,  \
        uint64_t r1, uint64_t c0, uint64_t c1)                                              \
    {                                                                                       \
        _Alignas(TP_CPU_LINE) char tile[TP_CPU_TILE];                                       \
        const char *src = in;                                                               \
        char *dst = out;                                                                    \
        size_t side = tp_cpu_side(elem), line = TP_CPU_LINE / elem;                         \
        size_t back = ((uintptr_t)out | (rows * elem)) % TP_CPU_LINE ? line : 0;            \
        size_t pitch = side + line;                                                         \
        for (uint64_t g = r0 / side * side; g < r1 + (back ? back - 1 : 0); g += side) {    \
            uint64_t t0 = g - back; /* the tile's first row; wraps below row 0 */           \
            uint64_t a0 = g < r0 + back ? r0 : t0, a1 = g + side < r1 ? g + side : r1;      \
            if (a0 >= a1)                                                                   \
                continue;                                                                   \
            uint64_t an = N > 1 ? a0 + (a1 - a0) / N * N : a0; /* squares' rows end */     \
            for (uint64_t cb = c0; cb < c1; cb += side) {                                   \
                uint64_t ce = cb + side < c1 ? cb + side : c1;                              \
                uint64_t cn = N > 1 ? cb + (ce - cb) / N * N : cb; /* squares' columns end */ \
                for (uint64_t r = a0; r < an; r += N)                                       \
                    for (uint64_t c = cb; c < cn; c += N)                                   \
                        SQUARE(src + (r * cols + c) * elem, (size_t)cols,                   \
                               tile + ((c - cb) * pitch + (r - t0)) * elem, pitch);         \
                tp_tile_scalar(in, cols, elem, tile, pitch, t0, cb, a0, an, cn, ce);        \
                tp_tile_scalar(in, cols, elem, tile, pitch, t0, cb, an, a1, cb, ce);        \
                for (uint64_t c = cb; c < ce; c++) {                                        \
                    char *row = dst + c * rows * elem;                                      \
                    uint64_t shift = back ? (uintptr_t)(row + g * elem) % TP_CPU_LINE / elem \
                                          : 0;                                              \
                    uint64_t s0 = g < r0 + shift ? r0 : g - shift;                          \
                    uint64_t s1 = g - shift + side < r1 ? g - shift + side : r1;            \
                    if (s0 >= s1)                                                           \
                        continue;                                                           \
                    char *d = row + s0 * elem;                                              \
                    const char *t = tile + ((c - cb) * pitch + (s0 - t0)) * elem;           \
                    if (s1 - s0 == side && (uintptr_t)d % TP_CPU_LINE == 0)                 \
                        STREAM(d, t, side * elem);                                          \
                    else                                                                    \
                        memcpy(d, t, (size_t)(s1 - s0) * elem);                             \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

#if defined(__x86_64__)
#include <immintrin.h>

/* 4 x 4 elements of 4 bytes (SSE2, the baseline's): moves only, any bits. */
static inline __attribute__((always_inline)) void
tp_square4_sse(const void *in, size_t ip, void *out, size_t op)
{
    const float *s = in;
    float *d = out;
    __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + ip), r2 = _mm_loadu_ps(s + 2 * ip),
           r3 = _mm_loadu_ps(s + 3 * ip);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(d, r0);
    _mm_storeu_ps(d + op, r1);
    _mm_storeu_ps(d + 2 * op, r2);
    _mm_storeu_ps(d + 3 * op, r3);
}

/* One round of the byte and 16-bit squares below: row i of `to` is
 * interleaved from rows i / 2 and i / 2 + n / 2 of `from` (n rows), low
 * halves (LO, the element size's _mm_unpacklo_*) to the even rows, high
 * halves (HI) to the odd ones. Each round moves one bit of the row index
 * into the column index: log2(n) rounds transpose. */
#define TP_SSE_ROUND(to, from, n, LO, HI)                                                 \
    do {                                                                                  \
        for (int i_ = 0; i_ < (n) / 2; i_++) {                                            \
            to[2 * i_] = LO(from[i_], from[i_ + (n) / 2]);                                \
            to[2 * i_ + 1] = HI(from[i_], from[i_ + (n) / 2]);                            \
        }                                                                                 \
    } while (0)

/* 16 x 16 elements of 1 byte (SSE2): four rounds. */
static inline __attribute__((always_inline)) void
tp_square1_sse(const void *in, size_t ip, void *out, size_t op)
{
    __m128i x[16], y[16];
    for (int i = 0; i < 16; i++)
        x[i] = _mm_loadu_si128((const __m128i *)((const char *)in + i * ip));
    TP_SSE_ROUND(y, x, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    TP_SSE_ROUND(x, y, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    TP_SSE_ROUND(y, x, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    TP_SSE_ROUND(x, y, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    for (int i = 0; i < 16; i++)
        _mm_storeu_si128((__m128i *)((char *)out + i * op), x[i]);
}

/* 8 x 8 elements of 2 bytes (SSE2): three rounds. */
static inline __attribute__((always_inline)) void
tp_square2_sse(const void *in, size_t ip, void *out, size_t op)
{
    __m128i x[8], y[8];
    for (int i = 0; i < 8; i++)
        x[i] = _mm_loadu_si128((const __m128i *)((const char *)in + 2 * i * ip));
    TP_SSE_ROUND(y, x, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    TP_SSE_ROUND(x, y, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    TP_SSE_ROUND(y, x, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    for (int i = 0; i < 8; i++)
        _mm_storeu_si128((__m128i *)((char *)out + 2 * i * op), y[i]);
}

/* 2 x 2 elements of 8 bytes (SSE2). */
static inline __attribute__((always_inline)) void
tp_square8_sse(const void *in, size_t ip, void *out, size_t op)
{
    const double *s = in;
    double *d = out;
    __m128d r0 = _mm_loadu_pd(s), r1 = _mm_loadu_pd(s + ip);
    _mm_storeu_pd(d, _mm_unpacklo_pd(r0, r1));
    _mm_storeu_pd(d + op, _mm_unpackhi_pd(r0, r1));
}

#if SIMD_MULTI
/* 8 x 8 elements of 4 bytes (AVX): unpacks, shuffles and lane swaps. */
SIMD_ATTR_AVX2 static inline __attribute__((always_inline)) void
tp_square4_avx(const void *in, size_t ip, void *out, size_t op)
{
    const float *s = in;
    float *d = out;
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(s + i * ip);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(d + i * op, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(d + (i + 4) * op, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
}

/* 4 x 4 elements of 8 bytes (AVX). */
SIMD_ATTR_AVX2 static inline __attribute__((always_inline)) void
tp_square8_avx(const void *in, size_t ip, void *out, size_t op)
{
    const double *s = in;
    double *d = out;
    __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ip),
            r2 = _mm256_loadu_pd(s + 2 * ip), r3 = _mm256_loadu_pd(s + 3 * ip);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
            t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(d + op, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(d + 2 * op, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(d + 3 * op, _mm256_permute2f128_pd(t1, t3, 0x31));
}
#endif
#endif

/* No squares: the tile is filled element by element. */
static inline __attribute__((always_inline)) void tp_square_none(const void *in, size_t ip,
                                                                  void *out, size_t op)
{
    (void)in, (void)ip, (void)out, (void)op;
}

/* Writes whole cache lines with plain stores (no streaming stores). */
static inline __attribute__((always_inline)) void tp_stream_plain(void *dst, const void *src,
                                                                   size_t n)
{
    memcpy(dst, src, n);
}

#if defined(__x86_64__)
/* Writes whole cache lines at dst (line-aligned) past the caches (SSE2). */
static inline __attribute__((always_inline)) void tp_stream_sse(void *dst, const void *src,
                                                                 size_t n)
{
    for (size_t k = 0; k < n; k += 16)
        _mm_stream_si128((__m128i *)((char *)dst + k),
                         _mm_loadu_si128((const __m128i *)((const char *)src + k)));
}

#if SIMD_MULTI
/* Writes whole cache lines at dst (line-aligned) past the caches (AVX). */
SIMD_ATTR_AVX2 static inline __attribute__((always_inline)) void
tp_stream_avx(void *dst, const void *src, size_t n)
{
    for (size_t k = 0; k < n; k += 32)
        _mm256_stream_si256((__m256i *)((char *)dst + k),
                            _mm256_loadu_si256((const __m256i *)((const char *)src + k)));
}
#endif
#endif

/* Defines variant NAME of the block transpose, compiled with ATTRS, moving
 * 1-, 2-, 4- and 8-byte elements by the tiled functions TILE1 .. TILE8 and
 * 16-byte ones by TILE_ANY (TP_CPU_TILED functions); streaming stores are
 * ordered before the function returns (FENCE). */
#define TP_CPU_VARIANT(NAME, ATTRS, TILE1, TILE2, TILE4, TILE8, TILE_ANY, FENCE)            \
    ATTRS static void NAME(const void *in, void *out, uint64_t rows, uint64_t cols,       \
                           size_t elem, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) \
    {                                                                                     \
        switch (elem) {                                                                   \
        case 1: TILE1(in, out, rows, cols, elem, r0, r1, c0, c1); break;                  \
        case 2: TILE2(in, out, rows, cols, elem, r0, r1, c0, c1); break;                  \
        case 4: TILE4(in, out, rows, cols, elem, r0, r1, c0, c1); break;                  \
        case 8: TILE8(in, out, rows, cols, elem, r0, r1, c0, c1); break;                  \
        default: TILE_ANY(in, out, rows, cols, elem, r0, r1, c0, c1); break;              \
        }                                                                                 \
        FENCE;                                                                            \
    }

#if defined(__x86_64__)
TP_CPU_TILED(tp_cpu_sse1, , 16, tp_square1_sse, tp_stream_sse)
TP_CPU_TILED(tp_cpu_sse2, , 8, tp_square2_sse, tp_stream_sse)
TP_CPU_TILED(tp_cpu_sse4, , 4, tp_square4_sse, tp_stream_sse)
TP_CPU_TILED(tp_cpu_sse8, , 2, tp_square8_sse, tp_stream_sse)
TP_CPU_TILED(tp_cpu_sse_any, , 1, tp_square_none, tp_stream_sse)
TP_CPU_VARIANT(tp_cpu_block_baseline, , tp_cpu_sse1, tp_cpu_sse2, tp_cpu_sse4, tp_cpu_sse8,
               tp_cpu_sse_any, _mm_sfence())
#else
TP_CPU_TILED(tp_cpu_plain, , 1, tp_square_none, tp_stream_plain)
TP_CPU_VARIANT(tp_cpu_block_baseline, , tp_cpu_plain, tp_cpu_plain, tp_cpu_plain, tp_cpu_plain,
               tp_cpu_plain, (void)0)
#endif
#if SIMD_MULTI
/* The AVX variants move 1- and 2-byte elements by the SSE2 squares (their
 * AVX forms would need lane crossings in every round). */
TP_CPU_TILED(tp_cpu_avx1, SIMD_ATTR_AVX2, 16, tp_square1_sse, tp_stream_avx)
TP_CPU_TILED(tp_cpu_avx2, SIMD_ATTR_AVX2, 8, tp_square2_sse, tp_stream_avx)
TP_CPU_TILED(tp_cpu_avx4, SIMD_ATTR_AVX2, 8, tp_square4_avx, tp_stream_avx)
TP_CPU_TILED(tp_cpu_avx8, SIMD_ATTR_AVX2, 4, tp_square8_avx, tp_stream_avx)
TP_CPU_TILED(tp_cpu_avx_any, SIMD_ATTR_AVX2, 1, tp_square_none, tp_stream_avx)
TP_CPU_VARIANT(tp_cpu_block_avx2, SIMD_ATTR_AVX2, tp_cpu_avx1, tp_cpu_avx2, tp_cpu_avx4,
               tp_cpu_avx8, tp_cpu_avx_any, _mm_sfence())
TP_CPU_VARIANT(tp_cpu_block_avx512, SIMD_ATTR_AVX512, tp_cpu_avx1, tp_cpu_avx2, tp_cpu_avx4,
               tp_cpu_avx8, tp_cpu_avx_any, _mm_sfence())
#endif

/* Transposes one block of the matrix on the calling thread, with the
 * instruction-set variant in use (runtime/simd.h). */
void tp_cpu_block(const void *in, void *out, uint64_t rows, uint64_t cols, size_t elem, uint64_t r0,
                  uint64_t r1, uint64_t c0, uint64_t c1)
{
    static void (*const variants[])(const void *, void *, uint64_t, uint64_t, size_t, uint64_t,
                                    uint64_t, uint64_t, uint64_t) = {
        tp_cpu_block_baseline,
#if SIMD_MULTI
        tp_cpu_block_avx2, tp_cpu_block_avx512,
#endif
    };
    variants[simd_variant()](in, out, rows, cols, elem, r0, r1, c0, c1);
}

/* Transposes rows [u0, u1) counted across consecutive rows x cols
 * matrices (matrix * rows + row), whole, from in to out, on the calling
 * thread. */
static void tp_cpu_range(const char *in, char *out, size_t elem, uint64_t rows, uint64_t cols,
                         uint64_t u0, uint64_t u1)
{
    size_t matrix = (size_t)(rows * cols * elem);
    for (uint64_t u = u0; u < u1;) {
        uint64_t b = u / rows, r = u - b * rows;
        uint64_t rend = rows < r + (u1 - u) ? rows : r + (u1 - u);
        tp_cpu_block(in + b * matrix, out + b * matrix, rows, cols, elem, r, rend, 0, cols);
        u += rend - r;
    }
}

typedef struct {
    const tp_stage *t;
    const char *in;
    char *out;
    uint64_t r0, r1, c0, c1;
} tp_stage_job;

/* Thread body: rows [r0, r1) of columns [c0, c1) of the staged matrix. */
static void *tp_stage_worker(void *arg)
{
    tp_stage_job *j = arg;
    const tp_stage *t = j->t;
    tp_cpu_block(j->in, j->out, t->rows, t->cols, t->elem, j->r0, j->r1, j->c0, j->c1);
    return NULL;
}

/* Transposes whole rows [r0, r1) of the staged matrix over the backend's
 * threads, each its own columns (cache blocks whole where the columns allow),
 * so that each thread writes whole pieces of its own output rows. */
static void tp_stage_rows(const tp_stage *t, const char *in, char *out, uint64_t r0, uint64_t r1)
{
    size_t nt = (size_t)t->be->threads;
    if (nt > PAR_MAX)
        nt = PAR_MAX;
    uint64_t side = tp_cpu_side(t->elem), unit = t->cols >= nt * side ? side : 1;
    uint64_t units = (t->cols + unit - 1) / unit;
    if (nt > units)
        nt = (size_t)units;
    tp_stage_job jobs[PAR_MAX];
    for (size_t i = 0; i < nt; i++) {
        uint64_t c0 = units * i / nt * unit, c1 = units * (i + 1) / nt * unit;
        jobs[i] = (tp_stage_job){t, in, out, r0, r1, c0, c1 < t->cols ? c1 : t->cols};
    }
    par_run(tp_stage_worker, jobs, sizeof jobs[0], nt);
}

/* Picks the kernel and its tile for the matrix shape and loads it: vector
 * tiles when rows and cols are multiples of 16 / elem, else the odd-shape
 * (4- and 8-byte elements) or any-shape tiles. */
int tp_kernel_open(tp_kernel *k, gpu *g, size_t elem, uint64_t rows, uint64_t cols)
{
    uint64_t kv = 16 / elem;
    k->rows = rows;
    k->cols = cols;
    if (rows % kv == 0 && cols % kv == 0) {
        snprintf(k->name, sizeof k->name, "tpk_vec_e%zu", elem);
        k->threads = TP_VEC_NT(elem);
        k->tile_rows = TP_VEC_TR(elem);
        k->tile_cols = TP_VEC_TC(elem);
    } else if (elem == 4 || elem == 8) {
        snprintf(k->name, sizeof k->name, "tpk_odd_e%zu", elem);
        k->threads = TP_ODD_NT;
        k->tile_rows = TP_ODD_TR(elem);
        k->tile_cols = TP_ODD_TC;
    } else {
        snprintf(k->name, sizeof k->name, "tpk_any_e%zu", elem);
        k->threads = TP_ANY_NT;
        k->tile_rows = k->tile_cols = TP_ANY_TS;
    }
    gpu_bind(g);
    return gpu_function(g, "transpose", k->name, &k->f);
}

/* Queues the transpose of nmat matrices, in grids of at most TP_MAX_GRID tiles. */
int tp_kernel_launch(const tp_kernel *k, gpu *g, CUdeviceptr in, CUdeviceptr out, uint64_t nmat,
                     CUstream s)
{
    uint64_t tiles = nmat * ((k->rows + k->tile_rows - 1) / k->tile_rows) *
                     ((k->cols + k->tile_cols - 1) / k->tile_cols);
    for (uint64_t t0 = 0; t0 < tiles; t0 += TP_MAX_GRID) {
        unsigned grid = (unsigned)(tiles - t0 < TP_MAX_GRID ? tiles - t0 : TP_MAX_GRID);
        unsigned long long rows = k->rows, cols = k->cols, tile0 = t0;
        void *params[] = {&in, &out, &rows, &cols, &tile0};
        int rc = gpu_launch(g, k->f, k->name, grid, k->threads, s, params);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- batch mode: whole matrices per chunk, on the engine ---- */

/* Result bytes: the transposes have the input's size (engine_ops.out_bytes
 * and engine_ops.result_bytes). */
static size_t tp_same_bytes(const void *op, size_t bytes)
{
    return bytes;
}

/* Units of CPU work: rows across the chunk's matrices (engine_ops.units). */
static size_t tp_units(const void *op, size_t bytes)
{
    const tp_job *j = op;
    return bytes / tp_matrix_bytes(j) * j->rows;
}

/* Refuses a chunk that is not whole matrices (engine_ops.check). */
static int tp_check(const void *op, size_t bytes, io_status *st)
{
    size_t matrix = tp_matrix_bytes(op);
    if (bytes % matrix == 0)
        return 0;
    return io_fail(st, GPU_ERR_INTERNAL, "a chunk of %zu bytes is not whole %zu-byte matrices",
                   bytes, matrix);
}

/* Loads the kernel for the shape on a slot's device (engine_ops.slot_open). */
static int tp_slot_open(void *op, gpu *g, void *state)
{
    const tp_job *j = op;
    return tp_kernel_open(state, g, j->elem, j->rows, j->cols);
}

/* Queues the transposes of a chunk's matrices (engine_ops.launch). */
static int tp_launch(engine_chunk *c)
{
    const tp_kernel *k = c->state;
    snprintf(c->kernels, ENGINE_KERNELS_LEN, "%s", k->name);
    return tp_kernel_launch(k, c->g, c->in, c->out, c->bytes / tp_matrix_bytes(c->op),
                            c->stream);
}

/* Transposes rows [u0, u1) of a chunk's matrices on the calling thread
 * (engine_ops.cpu). */
static void tp_cpu(const engine_chunk *c, size_t u0, size_t u1)
{
    const tp_job *j = c->op;
    tp_cpu_range(c->host_in, c->host_out, j->elem, j->rows, j->cols, u0, u1);
}

const engine_ops tp_engine_ops = {
    .name = "transpose",
    .in_what = "a chunk of matrices (--chunk)",
    .out_what = "a chunk of transposed matrices",
    .in_slack = TP_READ_SLACK,
    .lazy = 1,
    .deflate = 1,
    .slot_state = sizeof(tp_kernel),
    .out_bytes = tp_same_bytes,
    .result_bytes = tp_same_bytes,
    .slot_open = tp_slot_open,
    .launch = tp_launch,
    .units = tp_units,
    .cpu = tp_cpu,
    .check = tp_check,
};

/* Bytes of one matrix. */
size_t tp_matrix_bytes(const tp_job *j)
{
    return (size_t)(j->rows * j->cols * j->elem);
}

/* The chunk size and mode for chunks of about chunk_bytes (see transpose.h). */
size_t tp_chunk_for(const tp_job *j, size_t chunk_bytes, int *staged)
{
    size_t matrix = tp_matrix_bytes(j);
    chunk_bytes -= chunk_bytes % j->elem;
    if (chunk_bytes < j->elem)
        chunk_bytes = j->elem;
    *staged = matrix > chunk_bytes;
    return *staged ? chunk_bytes : chunk_bytes - chunk_bytes % matrix;
}

/* ---- staged mode: one matrix gathered whole ---- */

/* Records device g's text of a failure as the stage's error. */
static int tp_stage_gpu_error(tp_stage *e, int rc)
{
    rc = gpu_settle(e->be->gpu, rc, "staging a matrix on the device");
    return io_pass_as(&e->st, rc, gpu_status(e->be->gpu));
}

/* Allocates the whole-matrix buffers: host memory on the CPU (in huge
 * pages: the transpose writes a strip of every output row per chunk, and
 * small pages made that a page fault and a TLB miss per strip); on the
 * device its kernel, the matrix twice (input and transpose), two streams
 * and two pinned pieces going out. */
static int tp_stage_buffers(tp_stage *e)
{
    backend *be = e->be;
    if (be->kind != BACKEND_CUDA) {
        if (!(e->cpu_out = hugemem_alloc(e->matrix_bytes)))
            return io_fail(&e->st, GPU_ERR_OUT_OF_MEMORY,
                           "out of memory: a %zu-byte matrix is transposed whole in host memory",
                           e->matrix_bytes);
        return 0;
    }
    int rc;
    const char *what = "a matrix (staged whole on the device, twice: input and transpose)";
    if ((rc = tp_kernel_open(&e->kernel, be->gpu, e->elem, e->rows, e->cols)) < 0 ||
        (rc = gpu_mem_alloc(be->gpu, &e->din, e->matrix_bytes + TP_READ_SLACK, what)) < 0 ||
        (rc = gpu_mem_alloc(be->gpu, &e->dout, e->matrix_bytes, what)) < 0)
        return tp_stage_gpu_error(e, rc);
    for (int i = 0; i < 2; i++) {
        if ((rc = engine_lane_open(&e->lane[i], be->gpu, 0)) < 0)
            return tp_stage_gpu_error(e, rc);
        if (!(e->lane[i].host = backend_host_alloc(be, block_deflate_host_bytes(e->chunk))))
            return io_fail(&e->st, GPU_ERR_OUT_OF_MEMORY, "%s", be->st.text);
    }
    CUresult r = cu.MemsetD8Async(e->din + e->matrix_bytes, 0, TP_READ_SLACK, e->lane[0].q.stream);
    if (r != CUDA_SUCCESS)
        return io_fail(&e->st, GPU_ERR_DRIVER, "clearing device memory failed: %s",
                       cu_result_text(r));
    return 0;
}

/* Prepares the staged mode (see transpose.h). */
int tp_stage_open(tp_stage **out, backend *be, const tp_job *j, size_t chunk)
{
    *out = NULL;
    tp_stage *e = calloc(1, sizeof *e);
    if (!e)
        return GPU_ERR_OUT_OF_MEMORY;
    e->be = be;
    e->elem = j->elem;
    e->rows = j->rows;
    e->cols = j->cols;
    e->matrix_bytes = tp_matrix_bytes(j);
    e->chunk = chunk;
    int rc = tp_stage_buffers(e);
    if (rc < 0) {
        backend_fail(be, rc, "%s", e->st.text[0] ? e->st.text : "out of memory");
        tp_stage_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* Frees everything; accepts NULL. */
void tp_stage_close(tp_stage *e)
{
    if (!e)
        return;
    for (int i = 0; i < 2; i++)
        engine_lane_close(&e->lane[i], e->be, 1);
    if (e->be->kind == BACKEND_CUDA) {
        gpu_mem_free(e->be->gpu, e->din);
        gpu_mem_free(e->be->gpu, e->dout);
    }
    free(e->cpu_out);
    free(e);
}

/* One of the two pieces going out: its deflate stage, device and pinned
 * buffer (block_deflate_slot_at). */
static block_deflate_slot *tp_stage_out_buffer(void *ctx, int i, gpu **g, void **host)
{
    tp_stage *e = ctx;
    *g = e->be->gpu;
    *host = e->lane[i].host;
    return &e->lane[i].c;
}

/* Turns on device deflate of the pieces where it applies (see transpose.h). */
int tp_stage_compress(tp_stage *e, int level, uint64_t offset)
{
    if (e->be->kind != BACKEND_CUDA || !block_deflate_level(level))
        return 0;
    int rc = block_deflate_open_all(2, tp_stage_out_buffer, e, e->chunk, &e->st);
    if (rc == 1) {
        e->deflate = 1;
        e->out_offset = offset;
    }
    return rc;
}

/* Staged mode on the CPU: transposes the elements [e0, e1) of the matrix
 * (row-major numbering) into place: the partial first and last rows here,
 * the whole rows between on every thread. */
static void tp_stage_cpu(tp_stage *e, const char *host, uint64_t e0, uint64_t e1)
{
    const char *base = host - e0 * e->elem; /* as if host held the whole matrix */
    uint64_t r = e0 / e->cols, c = e0 % e->cols;
    if (c) {
        uint64_t cend = e1 - r * e->cols < e->cols ? e1 - r * e->cols : e->cols;
        tp_cpu_block(base, e->cpu_out, e->rows, e->cols, e->elem, r, r + 1, c, cend);
        r++;
    }
    uint64_t rfull = e1 / e->cols;
    if (rfull > r)
        tp_stage_rows(e, base, e->cpu_out, r, rfull);
    if (rfull >= r && e1 % e->cols)
        tp_cpu_block(base, e->cpu_out, e->rows, e->cols, e->elem, rfull, rfull + 1, 0, e1 % e->cols);
}

/* Adds a piece of the current matrix. */
int tp_stage_chunk(tp_stage *e, const void *host, const pl_gz_chunk *gz)
{
    e->host = host;
    e->gz = gz;
    e->dsrc = 0;
    if (!gz)
        return 0;
    e->st.text[0] = 0;
    gpu_bind(e->be->gpu);
    CUstream st = e->lane[0].q.stream;
    CUdeviceptr data;
    int rc = block_inflate_stage(&e->lane[0].z, e->be->gpu, st, host, gz, e->chunk, NULL, &data);
    CUresult r = rc < 0 ? CUDA_SUCCESS : cu.StreamSynchronize(st);
    if (rc < 0 || r != CUDA_SUCCESS) {
        /* a driver call that failed inside the stage recorded its line; other failures left
           theirs in the device's status */
        int driver = rc < 0 && cu_last_result() != CUDA_SUCCESS;
        io_fail(&e->st, rc < 0 ? rc : cu_error(r), "inflating a chunk on the device failed: %s",
                driver   ? cu_last_failure()
                : rc < 0 ? gpu_status(e->be->gpu)->text
                         : cu_result_text(r));
        cu_clear_failure();
        return e->st.code;
    }
    return block_inflate_check(&e->lane[0].z, gz, &e->st);
}

/* Adds a piece of the current matrix that is in device memory already. */
int tp_stage_chunk_device(tp_stage *e, CUdeviceptr data)
{
    if (e->be->kind != BACKEND_CUDA || !data)
        return io_fail(&e->st, GPU_ERR_INTERNAL, "device data given to a matrix staged on the CPU");
    e->host = NULL;
    e->gz = NULL;
    e->dsrc = data;
    return 0;
}

/* Staged mode: one piece of the current chunk into the matrix. */
int tp_stage_put(tp_stage *e, size_t from, uint64_t offset, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (offset + bytes > e->matrix_bytes || offset % e->elem || bytes % e->elem)
        return io_fail(&e->st, GPU_ERR_INTERNAL, "piece [%llu, +%zu) outside the %zu-byte matrix",
                       (unsigned long long)offset, bytes, e->matrix_bytes);
    const char *host = (const char *)e->host + from;
    if (e->be->kind != BACKEND_CUDA) {
        tp_stage_cpu(e, host, offset / e->elem, (offset + bytes) / e->elem);
        return 0;
    }
    e->st.text[0] = 0;
    gpu_bind(e->be->gpu);
    CUstream st = e->lane[0].q.stream;
    CUresult r = e->dsrc ? cu.MemcpyDtoDAsync(e->din + offset, e->dsrc + from, bytes, st)
                 : e->gz ? cu.MemcpyDtoDAsync(e->din + offset, e->lane[0].z.data + from, bytes, st)
                         : cu.MemcpyHtoDAsync(e->din + offset, host, bytes, st);
    if (r == CUDA_SUCCESS)
        r = cu.StreamSynchronize(st);
    if (r != CUDA_SUCCESS)
        return io_fail(&e->st, GPU_ERR_DRIVER, "copying a matrix piece to the device failed: %s",
                       cu_result_text(r));
    return 0;
}

/* Transposes the staged matrix on the device and streams it out through two
 * pinned buffers: piece k+1 is copied back (or compressed into its buffer,
 * tp_stage_compress) while piece k is written. */
static int tp_stage_emit_gpu(tp_stage *e, gz_writer_piece_write write, void *ctx)
{
    e->st.text[0] = 0;
    gpu_bind(e->be->gpu);
    int rc = tp_kernel_launch(&e->kernel, e->be->gpu, e->din, e->dout, 1, e->lane[0].q.stream);
    if (rc < 0)
        return tp_stage_gpu_error(e, rc);
    CUresult r = cu.StreamSynchronize(e->lane[0].q.stream);
    if (r != CUDA_SUCCESS)
        return io_fail(&e->st, GPU_ERR_LAUNCH, "kernel %s failed: %s", e->kernel.name,
                       cu_result_text(r));
    size_t n = e->matrix_bytes, piece = e->chunk;
    size_t npieces = (n + piece - 1) / piece;
    for (size_t k = 0; k <= npieces; k++) {
        if (k < npieces) { /* queue piece k: compressed on the device, or copied back */
            size_t off = k * piece, len = n - off < piece ? n - off : piece;
            gpu_queue *q = &e->lane[k & 1].q;
            if (e->deflate) {
                if ((rc = block_deflate_queue(&e->lane[k & 1].c, q->stream, e->dout + off, e->out_offset,
                                              len)) < 0) {
                    tp_stage_gpu_error(e, rc);
                    if (k > 0)
                        gpu_queue_wait(&e->lane[(k - 1) & 1].q);
                    return rc;
                }
                e->out_offset += len;
            } else {
                r = cu.MemcpyDtoHAsync(e->lane[k & 1].host, e->dout + off, len, q->stream);
            }
            if (r == CUDA_SUCCESS)
                r = gpu_queue_mark(q);
        }
        if (r == CUDA_SUCCESS && k > 0) /* write piece k - 1 */
            r = gpu_queue_wait(&e->lane[(k - 1) & 1].q);
        if (r != CUDA_SUCCESS) {
            io_fail(&e->st, GPU_ERR_DRIVER,
                    "copying the transposed matrix from the device failed: %s", cu_result_text(r));
            gpu_queue_wait(&e->lane[k & 1].q);
            return GPU_ERR_DRIVER;
        }
        if (k > 0) {
            size_t off = (k - 1) * piece, len = n - off < piece ? n - off : piece;
            gz_writer_span span;
            if (e->deflate) {
                rc = block_deflate_collect(&e->lane[(k - 1) & 1].c, &span, &e->st);
                if (rc == 0)
                    rc = write(ctx, &span, NULL, 0);
            } else {
                rc = write(ctx, NULL, e->lane[(k - 1) & 1].host, len);
            }
            if (rc != 0) {
                gpu_queue_wait(&e->lane[k & 1].q);
                return rc;
            }
        }
    }
    return 0;
}

/* Streams the transposed matrix out in pieces. */
int tp_stage_emit(tp_stage *e, gz_writer_piece_write write, void *ctx)
{
    if (e->be->kind == BACKEND_CUDA)
        return tp_stage_emit_gpu(e, write, ctx);
    for (size_t off = 0; off < e->matrix_bytes; off += e->chunk) {
        size_t len = e->matrix_bytes - off < e->chunk ? e->matrix_bytes - off : e->chunk;
        int rc = write(ctx, NULL, e->cpu_out + off, len);
        if (rc)
            return rc;
    }
    return 0;
}

/* The last failure. */
const io_status *tp_stage_status(const tp_stage *e)
{
    return &e->st;
}
