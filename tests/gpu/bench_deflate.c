/* bench_deflate.c - one-thread speed and size of the blocked-gzip deflate
 * encoder (ptx/deflate_math.h) against zlib's deflate with the settings a
 * BGZF writer uses (raw, 15-bit window, memLevel 8, default strategy), on
 * the same 65280-byte blocks of each file given.
 *
 * For each file and each level in LEVELS (default "1 6") it prints our
 * compressed bytes over zlib's and our MB/s (of input) over zlib's. Each
 * rate is the best of REPS passes (default 3), ours and zlib's alternating,
 * so that drift in the core's speed hits both alike. Every block of ours is
 * checked by inflating it with zlib.
 *
 * Build and run: sh tests/gpu/bench_deflate.sh (makes the data sets). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "ptx/deflate_math.h"

static df_near near_ws;
static df_far far_ws;
static uint8_t out[DF_OUT_BOUND(DF_BLOCK_MAX) + 64];
static uint8_t back[DF_BLOCK_MAX];

/* Monotonic time in seconds. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads a whole file; NULL on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n > 0 ? malloc((size_t)n) : NULL;
    *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return buf;
}

/* Compresses every block with our encoder; returns the total bytes, or 0
 * when verify is set and a block does not inflate back. */
static size_t run_ours(const uint8_t *d, size_t n, int level, int verify)
{
    size_t total = 0;
    for (size_t p = 0; p < n; p += DF_BLOCK_MAX) {
        df_u32 k = (df_u32)(n - p < DF_BLOCK_MAX ? n - p : DF_BLOCK_MAX);
        df_u32 m = df_compress(&near_ws, &far_ws, d + p, k, level, out);
        total += m;
        if (verify) {
            uLongf got = sizeof(back);
            z_stream zs;
            memset(&zs, 0, sizeof(zs));
            inflateInit2(&zs, -15);
            zs.next_in = out, zs.avail_in = m, zs.next_out = back, zs.avail_out = k;
            int rc = inflate(&zs, Z_FINISH);
            got = zs.total_out;
            inflateEnd(&zs);
            if (rc != Z_STREAM_END || got != k || memcmp(back, d + p, k))
                return 0;
        }
    }
    return total;
}

/* Compresses every block with zlib's deflate; returns the total bytes. */
static size_t run_zlib(z_stream *zs, const uint8_t *d, size_t n)
{
    size_t total = 0;
    for (size_t p = 0; p < n; p += DF_BLOCK_MAX) {
        uInt k = (uInt)(n - p < DF_BLOCK_MAX ? n - p : DF_BLOCK_MAX);
        deflateReset(zs);
        zs->next_in = (Bytef *)(uintptr_t)(d + p);
        zs->avail_in = k;
        zs->next_out = out;
        zs->avail_out = sizeof(out);
        deflate(zs, Z_FINISH);
        total += sizeof(out) - zs->avail_out;
    }
    return total;
}

int main(int argc, char **argv)
{
    const char *levels = getenv("LEVELS") ? getenv("LEVELS") : "1 6";
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    printf("%-22s %5s %12s %12s %8s %9s %9s %8s\n", "data", "level", "ours B", "zlib B", "size",
           "ours MB/s", "zlib MB/s", "speed");
    for (int a = 1; a < argc; a++) {
        size_t n;
        uint8_t *d = slurp(argv[a], &n);
        if (!d) {
            fprintf(stderr, "bench_deflate: cannot read %s\n", argv[a]);
            return 1;
        }
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        for (const char *lv = levels; *lv; lv++) {
            if (*lv < '1' || *lv > '9')
                continue;
            int level = *lv - '0';
            z_stream zs;
            memset(&zs, 0, sizeof(zs));
            deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
            size_t ours = run_ours(d, n, level, 1), theirs = 0;
            if (!ours) {
                fprintf(stderr, "bench_deflate: %s level %d: round trip FAILED\n", name, level);
                return 1;
            }
            double t_ours = 1e30, t_zlib = 1e30;
            for (int r = 0; r < reps; r++) {
                double t0 = now();
                run_ours(d, n, level, 0);
                double t1 = now();
                theirs = run_zlib(&zs, d, n);
                double t2 = now();
                t_ours = t1 - t0 < t_ours ? t1 - t0 : t_ours;
                t_zlib = t2 - t1 < t_zlib ? t2 - t1 : t_zlib;
            }
            deflateEnd(&zs);
            printf("%-22s %5d %12zu %12zu %8.4f %9.1f %9.1f %8.2f\n", name, level, ours, theirs,
                   (double)ours / (double)theirs, (double)n / t_ours / 1e6,
                   (double)n / t_zlib / 1e6, t_zlib / t_ours);
        }
        free(d);
    }
    return 0;
}
