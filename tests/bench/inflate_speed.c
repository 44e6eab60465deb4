/* inflate_speed.c - times the host decoder alone on one gzip file held in
 * memory: inflate_decode_bytes over the whole member into one buffer, best of
 * N runs, and checks the result's CRC-32 against the trailer.
 * With "symbols" after RUNS it times inflate_decode_symbols instead, as a
 * speculative chunk is decoded: from the first block boundary half way into
 * the member, window unknown, until the symbols hold no marker or 64 Mi are
 * out; the symbols are checked against the bytes.
 * Usage: inflate_speed FILE.gz [RUNS [symbols]] (GPUBATCH_CPU_SIMD=baseline:
 * the decoder's baseline variant); built by
 *   cc -std=c11 -D_GNU_SOURCE -O2 -I. -o inflate_speed tests/bench/inflate_speed.c \
 *      io/gzip/inflate.c io/gzip/gzip_header.c io/cpu.c -lz -lpthread */
#include "io/gzip/gzip_header.h"
#include "io/gzip/inflate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* The thread's CPU seconds: steadier than wall time on a shared machine. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t symbols_bit;          /* where the symbols' decode starts */
static size_t symbols_at = (size_t)-1; /* its output offset in the member */

/* Takes the first block boundary at or past symbols_bit as the symbols'
 * start, with its output offset. */
static void note_block(void *ctx, uint64_t bit, size_t out_len)
{
    (void)ctx;
    if (symbols_at == (size_t)-1 && bit >= symbols_bit) {
        symbols_bit = bit;
        symbols_at = out_len;
    }
}

/* Times inflate_decode_symbols from symbols_bit (best of runs) and checks
 * the symbols, resolved with the member's bytes before them (out), against
 * its bytes. */
static int time_symbols(const char *name, const uint8_t *in, size_t len, const uint8_t *out,
                        int runs)
{
    size_t cap = (size_t)64 << 20;
    uint16_t *sym = malloc(cap * 2);
    uint8_t *bytes = malloc(cap);
    if (!sym || !bytes) {
        fprintf(stderr, "%s: out of memory\n", name);
        return 1;
    }
    double best = 1e9;
    inflate_job j;
    for (int r = 0; r < runs; r++) {
        j = (inflate_job){.in = in, .in_len = len, .bit = symbols_bit, .stop_bit = UINT64_MAX,
                          .out_limit = cap - 65536, .out = sym, .out_cap = cap};
        double t0 = now();
        int rc = inflate_decode_symbols(&j);
        double t = now() - t0;
        if (rc != INFLATE_CLEAN && rc != INFLATE_STOP && rc != INFLATE_END) {
            fprintf(stderr, "%s: symbols' decode failed: %d\n", name, rc);
            return 1;
        }
        if (t < best)
            best = t;
    }
    if (symbols_at < INFLATE_WINDOW || symbols_at == (size_t)-1 ||
        inflate_resolve(bytes, sym, j.out_len, out + symbols_at - INFLATE_WINDOW,
                        INFLATE_WINDOW) < 0 ||
        memcmp(bytes, out + symbols_at, j.out_len)) {
        fprintf(stderr, "%s: no block half way in, or symbols differ from the bytes\n", name);
        return 1;
    }
    printf("%s: symbols %.4f s for %zu, %.0f MB/s\n", name, best, j.out_len,
           j.out_len / best / 1e6);
    free(sym);
    free(bytes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *in = malloc((size_t)n);
    if (fread(in, 1, (size_t)n, f) != (size_t)n)
        return 1;
    fclose(f);
    size_t h = gzip_header_size(in, (size_t)n);
    uint32_t isize = in[n - 4] | in[n - 3] << 8 | in[n - 2] << 16 | (uint32_t)in[n - 1] << 24;
    uint32_t want = in[n - 8] | in[n - 7] << 8 | in[n - 6] << 16 | (uint32_t)in[n - 5] << 24;
    size_t cap = (size_t)isize + 4096;
    uint8_t *out = malloc(cap);
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int symbols = argc > 3 && !strcmp(argv[3], "symbols");
    if (symbols) {
        symbols_bit = ((uint64_t)n - h) * 4; /* half way, in bits */
        runs = 1; /* the bytes' decode: the symbols' reference */
    }
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        inflate_job j = {.in = in + h, .in_len = (size_t)n - h, .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = out, .out_cap = cap,
                         .on_block = symbols ? note_block : NULL};
        double t0 = now();
        int rc = inflate_decode_bytes(&j);
        double t = now() - t0;
        if (rc != INFLATE_END || j.out_len != isize) {
            fprintf(stderr, "decode failed: %d, %zu bytes\n", rc, j.out_len);
            return 1;
        }
        if (t < best)
            best = t;
    }
    if ((uint32_t)crc32(0, out, isize) != want) {
        fprintf(stderr, "CRC mismatch\n");
        return 1;
    }
    if (symbols)
        return time_symbols(argv[1], in + h, (size_t)n - h, out, atoi(argv[2]));
    printf("%s: %.4f s, %.0f MB/s\n", argv[1], best, isize / best / 1e6);
    return 0;
}
