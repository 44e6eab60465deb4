// bench_inflate.cu FILE.gz [REPS] - the device inflate kernels
// (ptx/inflate.cu) on every member of a blocked gzip file at once: decoded
// bytes per second of gzk_inflate alone and with gzk_crc, beside the
// device's copy bandwidth (bytes read plus written) measured in the same
// run, and a check of every output byte against zlib on the host.
// Build: nvcc -O3 -std=c++17 -fmad=false -I. tests/gpu/bench_inflate.cu -lz
// (-DIF_GPU_THREADS=N, -DIF_LIT_BITS=N try other shapes).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <zlib.h>

#include "ptx/inflate.cu"
#include "bench_common.h"


static unsigned le32(const unsigned char *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (unsigned)p[3] << 24;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_inflate FILE.gz [REPS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return perror(argv[1]), 1;
    std::vector<unsigned char> file;
    unsigned char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        file.insert(file.end(), buf, buf + k);
    fclose(f);
    std::vector<if_member> mem;
    size_t off = 0, out = 0;
    while (off + 18 <= file.size() && file[off] == 0x1f && file[off + 1] == 0x8b &&
           file[off + 12] == 'B' && file[off + 13] == 'C') {
        size_t total = (file[off + 16] | file[off + 17] << 8) + 1;
        if_member m = {off, (unsigned)(off + 18), (unsigned)(total - 26), (unsigned)out,
                       le32(&file[off + total - 4]), le32(&file[off + total - 8]), 0};
        mem.push_back(m);
        out += m.isize;
        off += total;
    }
    unsigned n = (unsigned)mem.size();
    printf("%s: %u members, %zu compressed bytes, %zu decoded\n", argv[1], n, off, out);
    unsigned char *dcomp, *ddec, *dcopy;
    if_member *dtab;
    unsigned *dbad;
    BENCH_CHECK(cudaMalloc(&dcomp, file.size() + IF_IN_PAD));
    BENCH_CHECK(cudaMalloc(&ddec, out + 1));
    BENCH_CHECK(cudaMalloc(&dcopy, out + 1));
    BENCH_CHECK(cudaMalloc(&dtab, n * sizeof(if_member)));
    BENCH_CHECK(cudaMalloc(&dbad, 4));
    BENCH_CHECK(cudaMemcpy(dcomp, file.data(), file.size(), cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(dtab, mem.data(), n * sizeof(if_member), cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    unsigned grid = (n + IF_GPU_THREADS - 1) / IF_GPU_THREADS;
    float best_inf = 1e30f, best_all = 1e30f, best_copy = 1e30f, ms;
    for (int r = 0; r < reps + 1; r++) {
        BENCH_CHECK(cudaMemset(dbad, 0xff, 4));
        cudaEventRecord(a);
        gzk_inflate<<<grid, IF_GPU_THREADS>>>(dcomp, dtab, n, ddec, dbad);
        cudaEventRecord(b);
        BENCH_CHECK(cudaEventSynchronize(b));
        cudaEventElapsedTime(&ms, a, b);
        if (r)
            best_inf = ms < best_inf ? ms : best_inf;
        cudaEventRecord(a);
        gzk_inflate<<<grid, IF_GPU_THREADS>>>(dcomp, dtab, n, ddec, dbad);
        gzk_crc<<<n, 32>>>(dtab, n, ddec, dbad);
        cudaEventRecord(b);
        BENCH_CHECK(cudaEventSynchronize(b));
        cudaEventElapsedTime(&ms, a, b);
        if (r)
            best_all = ms < best_all ? ms : best_all;
        cudaEventRecord(a);
        BENCH_CHECK(cudaMemcpy(dcopy, ddec, out, cudaMemcpyDeviceToDevice));
        cudaEventRecord(b);
        BENCH_CHECK(cudaEventSynchronize(b));
        cudaEventElapsedTime(&ms, a, b);
        if (r)
            best_copy = ms < best_copy ? ms : best_copy;
    }
    BENCH_CHECK(cudaGetLastError());
    unsigned bad;
    BENCH_CHECK(cudaMemcpy(&bad, dbad, 4, cudaMemcpyDeviceToHost));
    std::vector<unsigned char> got(out + 1), want(out + 1);
    BENCH_CHECK(cudaMemcpy(got.data(), ddec, out, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; i++) {
        z_stream z;
        memset(&z, 0, sizeof z);
        inflateInit2(&z, -15);
        z.next_in = &file[mem[i].in_off];
        z.avail_in = mem[i].in_len;
        z.next_out = &want[mem[i].out_off];
        z.avail_out = mem[i].isize;
        inflate(&z, Z_FINISH);
        inflateEnd(&z);
    }
    int same = memcmp(got.data(), want.data(), out) == 0;
    double gb = out / 1e9;
    printf("inflate %.3f ms %.2f GB/s | inflate+crc %.3f ms %.2f GB/s | device copy %.2f GB/s "
           "(read+write) | ratio %.4f of copy | bad %s | bytes %s\n",
           best_inf, gb / (best_inf / 1e3), best_all, gb / (best_all / 1e3),
           2 * gb / (best_copy / 1e3), (gb / (best_all / 1e3)) / (2 * gb / (best_copy / 1e3)),
           bad == IF_NO_MEMBER ? "none" : "SOME", same ? "equal zlib" : "DIFFER");
    printf("threads/block %d lit bits %d\n", IF_GPU_THREADS, IF_LIT_BITS);
    return bad == IF_NO_MEMBER && same ? 0 : 1;
}
