/* bench_h2d.cu FILE CHUNK_MIB - how an uncompressed file in the page cache
 * can reach the GPU, each rate counting the file's bytes: the pinned copy
 * alone (the ceiling), pread on 8 and 16 threads into pinned buffers then a
 * copy, registering the mapped file with cuMemHostRegister chunk by chunk
 * or whole, and a pageable copy from the mapping. Build on a GPU node:
 *   nvcc -O2 -o bench_h2d tests/gpu/bench_h2d.cu -lcuda
 * Read FILE once first (cat FILE >/dev/null) so it is in the page cache. */
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define CK(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_) {                                                                                  \
            const char *s;                                                                         \
            cuGetErrorName(r_, &s);                                                                \
            printf("%s failed: %s\n", #x, s);                                                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
/* Seconds on a monotonic clock. */
static double now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
/* One thread's share of a parallel read. */
struct part {
    int fd;
    char *buf;
    size_t len;
    off_t off;
};
/* Thread body: reads its share with pread. */
static void *rd(void *a) {
    part *p = (part *)a;
    size_t d = 0;
    while (d < p->len) {
        ssize_t k = pread(p->fd, p->buf + d, p->len - d, p->off + d);
        if (k <= 0)
            break;
        d += k;
    }
    return 0;
}
/* Reads n bytes at off into buf on nt threads. */
static void pread_par(int fd, char *buf, size_t n, off_t off, int nt) {
    pthread_t t[64];
    part p[64];
    size_t step = n / nt;
    for (int i = 0; i < nt; i++) {
        p[i] = {fd, buf + i * step, i == nt - 1 ? n - i * step : step, off + (off_t)(i * step)};
        pthread_create(&t[i], 0, rd, &p[i]);
    }
    for (int i = 0; i < nt; i++)
        pthread_join(t[i], 0);
}
/* Times each way over the whole file. */
int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_h2d FILE CHUNK_MIB\n");
        return 2;
    }
    const char *path = argv[1];
    size_t chunk = (size_t)atoi(argv[2]) << 20;
    CK(cuInit(0));
    CUdevice d;
    CK(cuDeviceGet(&d, 0));
    CUcontext c;
    CK(cuDevicePrimaryCtxRetain(&c, d));
    CK(cuCtxSetCurrent(c));
    int fd = open(path, O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    size_t size = st.st_size / chunk * chunk;
    CUdeviceptr dbuf;
    CK(cuMemAlloc(&dbuf, chunk * 4));
    CUstream s[4];
    for (int i = 0; i < 4; i++)
        CK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
    void *pin[4];
    for (int i = 0; i < 4; i++)
        CK(cuMemHostAlloc(&pin[i], chunk, CU_MEMHOSTALLOC_PORTABLE));
    // 1. pinned H2D alone
    double t0 = now();
    for (size_t o = 0, k = 0; o < size; o += chunk, k++)
        CK(cuMemcpyHtoDAsync(dbuf + (k % 4) * chunk, pin[k % 4], chunk, s[k % 4]));
    CK(cuCtxSynchronize());
    double t1 = now();
    printf("pinned H2D alone:                 %6.2f GB/s\n", size / (t1 - t0) / 1e9);
    for (int nt : {8, 16}) {
        t0 = now();
        for (size_t o = 0, k = 0; o < size; o += chunk, k++) {
            CK(cuStreamSynchronize(s[k % 4]));
            pread_par(fd, (char *)pin[k % 4], chunk, o, nt);
            CK(cuMemcpyHtoDAsync(dbuf + (k % 4) * chunk, pin[k % 4], chunk, s[k % 4]));
        }
        CK(cuCtxSynchronize());
        t1 = now();
        printf("pread x%-2d into pinned + H2D:     %6.2f GB/s (serial read then copy)\n", nt,
               size / (t1 - t0) / 1e9);
    }
    char *map = (char *)mmap(0, size, PROT_READ, MAP_SHARED, fd, 0);
    // 3. register per chunk, H2D, unregister (pipelined: register k+1 while k copies)
    double treg = 0, tunreg = 0;
    t0 = now();
    for (size_t o = 0, k = 0; o < size; o += chunk, k++) {
        double a = now();
        CK(cuMemHostRegister(map + o, chunk, CU_MEMHOSTREGISTER_READ_ONLY));
        treg += now() - a;
        CK(cuMemcpyHtoDAsync(dbuf + (k % 4) * chunk, map + o, chunk, s[k % 4]));
        if (k >= 2) {
            size_t po = o - 2 * chunk;
            CK(cuStreamSynchronize(s[(k - 2) % 4]));
            a = now();
            CK(cuMemHostUnregister(map + po));
            tunreg += now() - a;
        }
    }
    CK(cuCtxSynchronize());
    for (size_t o = size - 2 * chunk; o < size; o += chunk) {
        double a = now();
        CK(cuMemHostUnregister(map + o));
        tunreg += now() - a;
    }
    t1 = now();
    printf("register per chunk + H2D:         %6.2f GB/s (register alone %6.2f GB/s, unregister "
           "%6.2f GB/s)\n",
           size / (t1 - t0) / 1e9, size / treg / 1e9, size / tunreg / 1e9);
    // 4. whole file registered once
    t0 = now();
    CK(cuMemHostRegister(map, size, CU_MEMHOSTREGISTER_READ_ONLY));
    double tr = now() - t0;
    for (size_t o = 0, k = 0; o < size; o += chunk, k++)
        CK(cuMemcpyHtoDAsync(dbuf + (k % 4) * chunk, map + o, chunk, s[k % 4]));
    CK(cuCtxSynchronize());
    t1 = now();
    double tu0 = now();
    CK(cuMemHostUnregister(map));
    double tu = now() - tu0;
    printf("whole file registered once + H2D: %6.2f GB/s (register %6.3f s, copies %6.3f s, "
           "unregister %6.3f s)\n",
           size / (t1 - t0 + tu) / 1e9, tr, t1 - t0 - tr, tu);
    // 5. pageable H2D straight from the mapping
    t0 = now();
    for (size_t o = 0; o < size; o += chunk)
        CK(cuMemcpyHtoD(dbuf, map + o, chunk));
    t1 = now();
    printf("pageable H2D from the mapping:    %6.2f GB/s\n", size / (t1 - t0) / 1e9);
    return 0;
}
