/* test_transpose_cpu.c - the CPU's block transpose (tp_cpu_block) in every
 * instruction-set variant this CPU runs, against an element-by-element
 * reference: every element size, shapes around the cache blocks' and the
 * cache lines' sizes, output rows on and off cache lines (output buffers
 * shifted by whole elements, odd row counts), random sub-blocks with the
 * poisoned elements outside them left alone, and whole matrices moved in
 * bands of rows and of columns by separate calls, as the threads do. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/simd.h"
#include "runtime/transpose.h"
#include "check.h"
#define RND_SEED 0x7a57e5ed0b10c6ull
#include "rnd.h"

#define POISON 0xa5
#define GUARD 64 /* bytes checked untouched before and after the output */

static const size_t elems[] = {1, 2, 4, 8, 16};

/* Sides that sit around the block, square and line sizes. */
static const uint64_t sides[] = {1,  2,  3,  7,  8,  9,  15,  16,  17,  31,  32,  33,
                                 47, 63, 64, 65, 96, 127, 128, 129, 130, 191, 257, 300};

/* A buffer of n bytes and its guards, poisoned, whose matrix starts `shift`
 * bytes past a 64-byte boundary. */
typedef struct {
    unsigned char *mem, *at;
    size_t n;
} tp_buf;

/* Allocates b for n bytes at shift. */
static void buf_open(tp_buf *b, size_t n, size_t shift)
{
    b->n = n;
    b->mem = aligned_alloc(64, (GUARD + 64 + n + GUARD + 63) / 64 * 64);
    b->at = b->mem + GUARD + shift;
    memset(b->mem, POISON, (GUARD + 64 + n + GUARD + 63) / 64 * 64);
}

/* Whether the guards on both sides of b's matrix still hold the poison. */
static int guards_hold(const tp_buf *b)
{
    for (size_t i = 0; i < GUARD; i++)
        if (b->at[-1 - (ptrdiff_t)i] != POISON || b->at[b->n + i] != POISON)
            return 0;
    return 1;
}

/* The number of elements of out (cols x rows) that differ from the
 * transpose of in inside rows [r0, r1) and columns [c0, c1) of in, or from
 * the poison outside them. */
static uint64_t mismatches(const unsigned char *in, const unsigned char *out, uint64_t rows,
                           uint64_t cols, size_t elem, uint64_t r0, uint64_t r1, uint64_t c0,
                           uint64_t c1)
{
    static const unsigned char poison[16] = {POISON, POISON, POISON, POISON, POISON, POISON,
                                             POISON, POISON, POISON, POISON, POISON, POISON,
                                             POISON, POISON, POISON, POISON};
    uint64_t bad = 0;
    for (uint64_t c = 0; c < cols; c++)
        for (uint64_t r = 0; r < rows; r++) {
            const unsigned char *o = out + (c * rows + r) * elem;
            int inside = r >= r0 && r < r1 && c >= c0 && c < c1;
            bad += memcmp(o, inside ? in + (r * cols + c) * elem : poison, elem) != 0;
        }
    return bad;
}

/* Fills n bytes with random bytes that are never all the poison. */
static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char)rnd();
        if (p[i] == POISON)
            p[i] ^= 1;
    }
}

/* A random place in [0, n): the ends and the middle alike. */
static uint64_t pick_in(uint64_t n)
{
    switch (rnd() % 4) {
    case 0: return 0;
    case 1: return n - 1;
    default: return rnd() % n;
    }
}

/* Random shapes, element sizes, output shifts and sub-blocks: inside the
 * sub-block the transpose, outside it the poison, the guards untouched. */
static void test_sub_blocks(int v)
{
    for (int round = 0; round < 600; round++) {
        size_t elem = elems[rnd() % 5];
        uint64_t rows = sides[rnd() % (sizeof sides / sizeof sides[0])];
        uint64_t cols = sides[rnd() % (sizeof sides / sizeof sides[0])];
        size_t shift = rnd() % (64 / elem) * elem;
        size_t n = (size_t)(rows * cols * elem);
        unsigned char *in = malloc(n);
        fill_random(in, n);
        tp_buf out;
        buf_open(&out, n, shift);
        uint64_t r0 = 0, r1 = rows, c0 = 0, c1 = cols;
        if (rnd() % 3) {
            uint64_t a = pick_in(rows), b = pick_in(rows);
            r0 = a < b ? a : b, r1 = (a < b ? b : a) + 1;
            a = pick_in(cols), b = pick_in(cols);
            c0 = a < b ? a : b, c1 = (a < b ? b : a) + 1;
        }
        tp_cpu_block(in, out.at, rows, cols, elem, r0, r1, c0, c1);
        uint64_t bad = mismatches(in, out.at, rows, cols, elem, r0, r1, c0, c1);
        CHECKF(bad == 0 && guards_hold(&out),
               "%s: %llux%llu of %zu bytes, output +%zu, rows [%llu, %llu) cols [%llu, %llu): "
               "%llu elements wrong, guards %s",
               simd_name(v), (unsigned long long)rows, (unsigned long long)cols, elem, shift,
               (unsigned long long)r0, (unsigned long long)r1, (unsigned long long)c0,
               (unsigned long long)c1, (unsigned long long)bad,
               guards_hold(&out) ? "hold" : "written");
        free(in);
        free(out.mem);
    }
}

/* Cuts [0, n) at up to `cuts` random places (sorted, distinct, with 0 and
 * n) into at; returns the number of pieces. */
static int cut(uint64_t n, int cuts, uint64_t *at)
{
    int k = 0;
    at[k++] = 0;
    for (int i = 0; i < cuts; i++) {
        uint64_t p = 1 + rnd() % n;
        if (p < n && p > at[k - 1])
            at[k++] = p;
    }
    at[k] = n;
    return k;
}

/* Whole matrices, large ones among them, moved by separate calls on bands
 * of rows and of columns (pieces of output rows cut anywhere, by whole
 * blocks or not): the whole transpose, the guards untouched. */
static void test_bands(int v)
{
    static const struct {
        uint64_t rows, cols;
    } shapes[] = {{8191, 8193}, {8192, 1024}, {1000, 1031}, {513, 4097}, {4096, 67}, {33, 5000}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t e = 0; e < 5; e++) {
            size_t elem = elems[e];
            uint64_t rows = shapes[s].rows, cols = shapes[s].cols;
            size_t n = (size_t)(rows * cols * elem);
            if (n > ((size_t)64 << 20) || (elem > 4 && rows * cols > 9000000))
                continue; /* the largest shapes in the small element sizes only */
            unsigned char *in = malloc(n);
            fill_random(in, n);
            size_t shift = rnd() % (64 / elem) * elem;
            tp_buf out;
            buf_open(&out, n, shift);
            uint64_t rcut[10], ccut[10];
            int nr = cut(rows, 8, rcut), nc = cut(cols, 8, ccut);
            for (int i = 0; i < nr; i++)
                for (int j = 0; j < nc; j++)
                    tp_cpu_block(in, out.at, rows, cols, elem, rcut[i], rcut[i + 1], ccut[j],
                                 ccut[j + 1]);
            uint64_t bad = mismatches(in, out.at, rows, cols, elem, 0, rows, 0, cols);
            CHECKF(bad == 0 && guards_hold(&out),
                   "%s: %llux%llu of %zu bytes, output +%zu, %d x %d bands: %llu elements "
                   "wrong, guards %s",
                   simd_name(v), (unsigned long long)rows, (unsigned long long)cols, elem, shift,
                   nr, nc, (unsigned long long)bad, guards_hold(&out) ? "hold" : "written");
            free(in);
            free(out.mem);
        }
}

int main(void)
{
    for (int v = 0; v < SIMD_COUNT; v++) {
        if (!simd_runs(v)) {
            printf("note: this CPU does not run the %s variant\n", simd_name(v));
            continue;
        }
        simd_force(v);
        RUN(test_sub_blocks, v);
        RUN(test_bands, v);
    }
    simd_force(-1);
    return check_summary();
}
