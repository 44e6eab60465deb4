/* bench_feed.cu FILE - how fast the host can feed compressed chunks to one,
 * two or four GPUs, each rate counting the file's bytes: pread from the page
 * cache into 8 pinned buffers of 128 MiB on 8 to 64 threads (as many as the host has cores), a chunk at a
 * time (all threads on one chunk, then the next: each thread one fixed part,
 * or pieces of the chunk taken in turn as gpubatch's reader does) and with
 * no wait between chunks; host memcpy; the copies to the devices
 * alone, to one, two and four; pread a chunk at a time with each chunk then
 * copied to the devices in turn (the whole feed); and pinning the file's
 * own mapping (cuMemHostRegister, read-only) and copying from it. Build on
 * a GPU node:
 *   nvcc -O2 -std=c++17 -o bench_feed tests/gpu/bench_feed.cu
 * Read FILE once first (cat FILE >/dev/null) so it is in the page cache. */
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_) {                                                                                  \
            printf("%s failed: %s\n", #x, cudaGetErrorString(e_));                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const size_t CHUNK = (size_t)128 << 20;
static const int NBUF = 8;
static int fd;
static size_t fsize;
static std::vector<char *> bufs;

/* Seconds on a monotonic clock. */
static double now()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* pread of n bytes at off, retrying short reads. */
static void read_part(char *dst, size_t n, size_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, dst + got, n - got, (off_t)(off + got));
        if (k <= 0)
            break;
        got += (size_t)k;
    }
}

/* Reads n bytes at off into dst on `threads` threads: one fixed part each,
 * or (pieces) two pieces a thread at least, taken in turn. */
static void read_chunk(char *dst, size_t n, size_t off, int threads, int pieces)
{
    size_t step = pieces ? (n / (2 * threads) + 65535) / 65536 * 65536
                         : (n / threads + 4095) / 4096 * 4096;
    std::atomic<size_t> next{0};
    auto worker = [&](int i) {
        if (!pieces) {
            size_t s = i * step < n ? i * step : n, e = s + step < n ? s + step : n;
            read_part(dst + s, e - s, off + s);
            return;
        }
        for (size_t s; (s = next.fetch_add(step)) < n;)
            read_part(dst + s, s + step < n ? step : n - s, off + s);
    };
    std::vector<std::thread> th;
    for (int i = 1; i < threads; i++)
        th.emplace_back(worker, i);
    worker(0);
    for (auto &t : th)
        t.join();
}

/* The file a chunk at a time, each chunk read by `threads` threads into the
 * next buffer (read_chunk); with gpus > 0 each chunk is then copied to the
 * devices in turn, a buffer reused once its copy is done. GB/s of the
 * file. */
static double feed(int threads, int gpus, int pieces)
{
    std::vector<cudaStream_t> st(NBUF);
    std::vector<cudaEvent_t> ev(NBUF);
    std::vector<void *> dev(NBUF, nullptr);
    std::vector<int> busy(NBUF, 0);
    for (int b = 0; b < NBUF && gpus; b++) {
        CK(cudaSetDevice(b % gpus));
        CK(cudaStreamCreateWithFlags(&st[b], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
        CK(cudaMalloc(&dev[b], CHUNK));
    }
    double t0 = now();
    for (size_t c = 0; c * CHUNK < fsize; c++) {
        int b = (int)(c % NBUF);
        if (busy[b])
            CK(cudaEventSynchronize(ev[b]));
        size_t off = c * CHUNK, n = fsize - off < CHUNK ? fsize - off : CHUNK;
        read_chunk(bufs[b], n, off, threads, pieces);
        if (gpus) {
            CK(cudaSetDevice(b % gpus));
            CK(cudaMemcpyAsync(dev[b], bufs[b], n, cudaMemcpyHostToDevice, st[b]));
            CK(cudaEventRecord(ev[b], st[b]));
            busy[b] = 1;
        }
    }
    for (int b = 0; b < NBUF; b++)
        if (busy[b])
            CK(cudaEventSynchronize(ev[b]));
    double rate = fsize / (now() - t0) / 1e9;
    for (int b = 0; b < NBUF && gpus; b++) {
        CK(cudaSetDevice(b % gpus));
        CK(cudaFree(dev[b]));
        CK(cudaStreamDestroy(st[b]));
        CK(cudaEventDestroy(ev[b]));
    }
    return rate;
}

/* The file read by `threads` threads taking 8 MiB pieces in turn into the
 * buffers, with no wait between chunks. GB/s. */
static double stream_read(int threads)
{
    const size_t piece = (size_t)8 << 20, ring = (size_t)NBUF * CHUNK;
    std::atomic<size_t> next{0};
    double t0 = now();
    std::vector<std::thread> th;
    for (int i = 0; i < threads; i++)
        th.emplace_back([&] {
            for (size_t off; (off = next.fetch_add(piece)) < fsize;) {
                size_t n = fsize - off < piece ? fsize - off : piece, r = off % ring;
                read_part(bufs[r / CHUNK] + r % CHUNK, n, off);
            }
        });
    for (auto &t : th)
        t.join();
    return fsize / (now() - t0) / 1e9;
}

/* The pinned buffers' bytes copied into plain memory by `threads`
 * threads, best of 3. GB/s copied. */
static double host_copy(int threads)
{
    size_t n = (size_t)NBUF * CHUNK;
    char *dst = (char *)malloc(n);
    memset(dst, 1, n);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        std::vector<std::thread> th;
        for (int i = 0; i < threads; i++)
            th.emplace_back([&, i] {
                size_t s = n / threads * i, e = i == threads - 1 ? n : n / threads * (i + 1);
                for (size_t o = s; o < e;) {
                    size_t k = CHUNK - o % CHUNK < e - o ? CHUNK - o % CHUNK : e - o;
                    memcpy(dst + o, bufs[o / CHUNK] + o % CHUNK, k);
                    o += k;
                }
            });
        for (auto &t : th)
            t.join();
        double r = n / (now() - t0) / 1e9;
        best = r > best ? r : best;
    }
    free(dst);
    return best;
}

/* The buffers copied to the devices in turn, as many bytes as the file,
 * with nothing read meanwhile. GB/s. */
static double copies_only(int gpus)
{
    std::vector<cudaStream_t> st(NBUF);
    std::vector<void *> dev(NBUF);
    for (int b = 0; b < NBUF; b++) {
        CK(cudaSetDevice(b % gpus));
        CK(cudaStreamCreateWithFlags(&st[b], cudaStreamNonBlocking));
        CK(cudaMalloc(&dev[b], CHUNK));
    }
    size_t nchunks = fsize / CHUNK;
    double t0 = now();
    for (size_t c = 0; c < nchunks; c++) {
        int b = (int)(c % NBUF);
        CK(cudaSetDevice(b % gpus));
        CK(cudaMemcpyAsync(dev[b], bufs[b], CHUNK, cudaMemcpyHostToDevice, st[b]));
    }
    for (int b = 0; b < NBUF; b++)
        CK(cudaStreamSynchronize(st[b]));
    double rate = nchunks * CHUNK / (now() - t0) / 1e9;
    for (int b = 0; b < NBUF; b++) {
        CK(cudaSetDevice(b % gpus));
        CK(cudaFree(dev[b]));
        CK(cudaStreamDestroy(st[b]));
    }
    return rate;
}

/* Pins (at most) 2 GiB of the file's mapping, read-only, and copies it to
 * device 0 from there. */
static void pin_mapping()
{
    size_t n = fsize < ((size_t)2 << 30) ? fsize : ((size_t)2 << 30);
    void *m = mmap(NULL, fsize, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) {
        printf("mmap of the file failed\n");
        return;
    }
    CK(cudaSetDevice(0));
    double t0 = now();
    cudaError_t e = cudaHostRegister(m, n, cudaHostRegisterReadOnly | cudaHostRegisterPortable);
    double dt = now() - t0;
    printf("pin %zu MiB of the file's mapping (read-only): %s, %.1f ms (%.1f GB/s)\n", n >> 20,
           cudaGetErrorString(e), dt * 1e3, n / dt / 1e9);
    if (e == cudaSuccess) {
        void *d;
        cudaStream_t s;
        CK(cudaMalloc(&d, CHUNK));
        CK(cudaStreamCreate(&s));
        t0 = now();
        for (size_t o = 0; o + CHUNK <= n; o += CHUNK)
            CK(cudaMemcpyAsync(d, (char *)m + o, CHUNK, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        printf("  copies to device 0 from the pinned mapping: %.1f GB/s\n", n / (now() - t0) / 1e9);
        CK(cudaHostUnregister(m));
        CK(cudaFree(d));
        CK(cudaStreamDestroy(s));
    }
    cudaGetLastError();
    munmap(m, fsize);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_feed FILE\n");
        return 2;
    }
    struct stat sb;
    if ((fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &sb) < 0) {
        perror(argv[1]);
        return 1;
    }
    fsize = (size_t)sb.st_size;
    int ngpu;
    CK(cudaGetDeviceCount(&ngpu));
    for (int g = 0; g < ngpu && g < 4; g++) {
        CK(cudaSetDevice(g));
        CK(cudaFree(0));
    }
    CK(cudaSetDevice(0));
    bufs.resize(NBUF);
    for (int b = 0; b < NBUF; b++) {
        CK(cudaHostAlloc((void **)&bufs[b], CHUNK, cudaHostAllocPortable));
        memset(bufs[b], 0, CHUNK);
    }
    int cores = (int)std::thread::hardware_concurrency();
    printf("file %.2f GB, %d GPUs, %d cores, %d pinned buffers of 128 MiB\n", fsize / 1e9, ngpu,
           cores, NBUF);
    for (int pieces = 0; pieces < 2; pieces++)
        for (int t : {8, 16, 24, 32, 48, 64})
            if (t <= cores)
                printf("pread a chunk at a time, %2d threads, %s: %.1f GB/s\n", t,
                   pieces ? "pieces in turn" : "fixed parts", feed(t, 0, pieces));
    for (int t : {8, 16, 24, 32, 48, 64})
        if (t <= cores)
            printf("pread with no wait between chunks, %2d threads: %.1f GB/s\n", t, stream_read(t));
    printf("host memcpy, 16 threads: %.1f GB/s; 32 threads: %.1f GB/s\n", host_copy(16),
           host_copy(32));
    for (int g = 1; g <= ngpu && g <= 4; g *= 2)
        printf("copies to %d device(s) alone: %.1f GB/s\n", g, copies_only(g));
    for (int g = 1; g <= ngpu && g <= 4; g *= 2)
        for (int t : {16, 32, 64})
            for (int pieces = 0; pieces < 2 && t <= cores; pieces++)
                printf("pread a chunk at a time on %2d threads (%s), then copied to %d device(s): "
                       "%.1f GB/s\n",
                       t, pieces ? "pieces in turn" : "fixed parts", g, feed(t, g, pieces));
    pin_mapping();
    return 0;
}
