/* inflate_speed.c - times the host decoder alone on one gzip file held in
 * memory: inflate_decode_bytes over the whole member into one buffer, best of
 * N runs, and checks the result's CRC-32 against the trailer.
 * Usage: inflate_speed FILE.gz [RUNS] (GPUBATCH_CPU_SIMD=baseline: the
 * decoder's baseline variant); built by
 *   cc -std=c11 -D_GNU_SOURCE -O2 -I. -o inflate_speed tests/bench/inflate_speed.c \
 *      io/gzip/inflate.c io/gzip/gzip_header.c io/cpu.c -lz -lpthread */
#include "io/gzip/gzip_header.h"
#include "io/gzip/inflate.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

/* The thread's CPU seconds: steadier than wall time on a shared machine. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
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
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        inflate_job j = {.in = in + h, .in_len = (size_t)n - h, .stop_bit = UINT64_MAX,
                         .out_limit = SIZE_MAX, .out = out, .out_cap = cap};
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
    printf("%s: %.4f s, %.0f MB/s\n", argv[1], best, isize / best / 1e6);
    return 0;
}
