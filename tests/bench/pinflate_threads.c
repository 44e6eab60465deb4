/* pinflate_threads.c - runs the parallel decoder over one single-member gzip
 * file with any number of threads (more than the machine's cores too, to
 * see what many threads cost where only a few exist), reading its bytes as
 * the reduce's reader does (pieces of BUF bytes into one buffer), and prints
 * the process's CPU seconds, page faults, chunks (and how many were decoded
 * two at once on a thread, how many decodes took two halves at once) and
 * wall time: on a shared or oversubscribed machine
 * compare the CPU seconds and faults, not the wall.
 * Checks the CRC-32 and length against the trailer.
 * PLAN (auto, order or parallel; default auto) sets pinflate_plan, to see what
 * the automatic plan's choice costs against each fixed one.
 * Usage: pinflate_threads FILE.gz THREADS [RUNS] [BUF_MIB] [PLAN]; built after make by
 *   cc -O2 -I. -pthread -o pinflate_threads tests/bench/pinflate_threads.c \
 *      build/io/*.o build/io/gzip/*.o -lz */
#include "io/gzip/gzip_header.h"
#include "io/gzip/inflate.h"
#include "io/gzip/pinflate.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Seconds of the given clock. */
static double secs(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The process's CPU seconds and minor page faults so far. */
static double cpu_faults(long *faults)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    *faults = u.ru_minflt;
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return 1;
    int threads = atoi(argv[2]), runs = argc > 3 ? atoi(argv[3]) : 3;
    size_t bufsz = (size_t)(argc > 4 ? atoi(argv[4]) : 2) << 20;
    uint8_t head[512], tail[8];
    if (pread(fd, head, sizeof head, 0) < 18 || pread(fd, tail, 8, st.st_size - 8) != 8)
        return 1;
    size_t h = gzip_header_size(head, sizeof head);
    uint32_t want = tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24;
    uint32_t isize = tail[4] | tail[5] << 8 | tail[6] << 16 | (uint32_t)tail[7] << 24;
    uint8_t *buf = malloc(bufsz);
    pinflate *p;
    if (!h || !buf || pinflate_create(&p, threads, 0) < 0)
        return 1;
    const char *plan = argc > 5 ? argv[5] : "auto";
    pinflate_plan(p, !strcmp(plan, "order")      ? PINFLATE_ORDER
                     : !strcmp(plan, "parallel") ? PINFLATE_PARALLEL
                                                 : PINFLATE_AUTO);
    for (int r = 0; r < runs; r++) {
        long f0, f1;
        double c0 = cpu_faults(&f0), w0 = secs(CLOCK_MONOTONIC);
        pinflate_begin(p, fd, NULL, (uint64_t)st.st_size, h);
        ssize_t k;
        while ((k = pinflate_read(p, buf, bufsz)) > 0 && !pinflate_finished(p))
            ;
        if (k < 0) {
            fprintf(stderr, "%s: decode stopped (%zd)\n", argv[1], k);
            return 1;
        }
        uint64_t end, len, chunks, redone;
        uint32_t crc;
        pinflate_result(p, &end, &crc, &len);
        pinflate_end(p);
        double w = secs(CLOCK_MONOTONIC) - w0, c = cpu_faults(&f1) - c0;
        if (crc != want || (uint32_t)len != isize) {
            fprintf(stderr, "%s: CRC-32 or length mismatch\n", argv[1]);
            return 1;
        }
        pinflate_counts(p, &chunks, &redone);
        printf("%s: %d threads, plan %s: cpu %.3f s, wall %.3f s, %ld faults, %llu chunks so far "
               "(%llu again, %llu speculative, %llu decoded in pairs, %llu decodes in halves)\n",
               argv[1], threads, plan, c, w, f1 - f0, (unsigned long long)chunks,
               (unsigned long long)redone, (unsigned long long)pinflate_speculated(p),
               (unsigned long long)pinflate_paired(p), (unsigned long long)inflate_halves());
    }
    pinflate_destroy(p);
    return 0;
}
