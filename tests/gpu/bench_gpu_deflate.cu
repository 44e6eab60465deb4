// bench_gpu_deflate.cu [-m MIB] [-r REPS] [-s 0] [FILE...] - the device deflate
// kernels (ptx/deflate.cu) against the host encoder and zlib.
//
// Identity: on adversarial data (random bytes, zeros, runs, period 3, float32
// normal, each FILE given, e.g. quadratic roots) of odd total sizes (one
// 1-byte block, one 65280-byte block, partial last blocks), every member the
// device lays out (dfk_crc, dfk_fast or dfk_serial, dfk_gather) is compared
// byte for byte with df_bgzf_member on the host: level 1 through dfk_fast
// (the input also 1..3 bytes off a word's alignment), levels 1..9 through
// dfk_serial.
// Rate: input bytes per second of dfk_fast alone and of the whole member
// pipeline at level 1, dfk_serial at level 1 and 6, over MIB MiB of each
// kind (default 512), beside the device-to-device copy (read + write) in the
// same run, and zlib level 1 and our host encoder on every host core.
// -s 0 leaves dfk_serial out (for the sanitizers). Built with -DDW_PROFILE,
// it also prints the share of dfk_fast's cycles in each phase.
// Build: nvcc -O3 -std=c++17 -fmad=false -I. tests/gpu/bench_gpu_deflate.cu -lz -lpthread
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <zlib.h>

#include "ptx/deflate.cu"
#include "bench_common.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

// xorshift64.
static uint64_t rnd()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

// n bytes of a kind: random, zeros, runs, period3, float.
static std::vector<unsigned char> make(const std::string &kind, size_t n)
{
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n;) {
        uint64_t r = rnd();
        if (kind == "random") {
            v[i++] = (unsigned char)r;
        } else if (kind == "zeros") {
            v[i++] = 0;
        } else if (kind == "runs") {
            for (size_t k = 1 + (r >> 8) % 1000; k > 0 && i < n; k--)
                v[i++] = (unsigned char)r;
        } else if (kind == "period3") {
            v[i] = "xyz"[i % 3];
            i++;
        } else {
            double u = ((r >> 11) + 0.5) * 0x1p-53, w = ((rnd() >> 11) + 0.5) * 0x1p-53;
            float f = (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * w));
            for (int b = 0; b < 4 && i < n; b++)
                v[i++] = (unsigned char)(*(uint32_t *)&f >> (8 * b));
        }
    }
    return v;
}

// The device's buffers for nbytes of input.
struct dev {
    unsigned char *base, *in, *bodies, *members; // in: base + an offset of 0..3
    unsigned *sizes, *crcs;
    dw_work *ws;
    df_far *far_ws;
    unsigned nblocks, grid;
    size_t nbytes;
};

static void dev_open(dev &d, size_t cap)
{
    unsigned nb = (unsigned)((cap + DF_BLOCK_MAX - 1) / DF_BLOCK_MAX) + 1;
    int sms;
    BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int per_sm, smem, reserved;
    BENCH_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    BENCH_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
    // dfk_fast's CTAs and shared memory carve-out, as runtime/gzip/block_deflate.c sets them
    BENCH_CHECK(cudaFuncSetAttribute(dfk_fast, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     (int)dw_carveout(smem, reserved)));
    BENCH_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dfk_fast, DW_T, 0));
    d.grid = std::min(per_sm, (int)DW_CTAS_PER_SM) * sms;
    printf("dfk_fast: %d CTAs of %u threads fit a multiprocessor (carve-out %u%%), %u launched\n",
           per_sm, DW_T, dw_carveout(smem, reserved), d.grid);
    BENCH_CHECK(cudaMalloc(&d.base, cap + 4));
    d.in = d.base;
    BENCH_CHECK(cudaMalloc(&d.bodies, (size_t)nb * DW_SLOT_PITCH));
    BENCH_CHECK(cudaMalloc(&d.members, (size_t)nb * DF_MEMBER_BOUND(DF_BLOCK_MAX)));
    BENCH_CHECK(cudaMalloc(&d.sizes, nb * 4));
    BENCH_CHECK(cudaMalloc(&d.crcs, nb * 4));
    BENCH_CHECK(cudaMalloc(&d.ws, (size_t)d.grid * sizeof(dw_work)));
    BENCH_CHECK(cudaMalloc(&d.far_ws, (size_t)d.grid * sizeof(df_far)));
}

// Queues the kernels that make the members of d.nbytes input bytes.
static void dev_members(dev &d, int level, bool fast)
{
    unsigned g = d.nblocks < d.grid ? d.nblocks : d.grid;
    dfk_crc<<<d.nblocks, 32>>>(d.in, d.nbytes, d.nblocks, d.crcs);
    if (fast)
        dfk_fast<<<g, DW_T>>>(d.in, d.nbytes, d.nblocks, d.bodies, d.sizes, d.ws);
    else
        dfk_serial<<<g, 1>>>(d.in, d.nbytes, d.nblocks, level, d.bodies, d.sizes, d.far_ws);
    dfk_gather<<<d.nblocks, DF_GATHER_THREADS>>>(d.bodies, d.sizes, d.crcs, d.nbytes, d.nblocks,
                                                 d.members);
}

// The host writer's members of data at level, end to end.
static std::vector<unsigned char> host_members(const std::vector<unsigned char> &data, int level)
{
    static df_near nr;
    static df_far fr;
    std::vector<unsigned char> out, m(DF_MEMBER_BOUND(DF_BLOCK_MAX));
    for (size_t off = 0; off < data.size(); off += DF_BLOCK_MAX) {
        unsigned n = (unsigned)std::min((size_t)DF_BLOCK_MAX, data.size() - off);
        unsigned crc = (unsigned)crc32(0L, data.data() + off, n);
        unsigned len = df_bgzf_member(&nr, &fr, data.data() + off, n, level, crc, m.data());
        out.insert(out.end(), m.begin(), m.begin() + len);
    }
    return out;
}

// Whether the device gives the host's members for data at level, the data
// misaligned by `shift` bytes in device memory.
static bool same_members(dev &d, const std::vector<unsigned char> &data, int level, bool fast,
                         unsigned shift = 0)
{
    d.in = d.base + shift;
    d.nbytes = data.size();
    d.nblocks = (unsigned)((data.size() + DF_BLOCK_MAX - 1) / DF_BLOCK_MAX);
    BENCH_CHECK(cudaMemcpy(d.in, data.data(), data.size(), cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemset(d.bodies, 0xA5, (size_t)d.nblocks * DW_SLOT_PITCH));
    dev_members(d, level, fast);
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> sizes(d.nblocks);
    BENCH_CHECK(cudaMemcpy(sizes.data(), d.sizes, d.nblocks * 4, cudaMemcpyDeviceToHost));
    size_t total = 0;
    for (unsigned s : sizes)
        total += s + DF_MEMBER_HEADER + DF_MEMBER_TRAILER;
    std::vector<unsigned char> got(total);
    BENCH_CHECK(cudaMemcpy(got.data(), d.members, total, cudaMemcpyDeviceToHost));
    d.in = d.base;
    return got == host_members(data, level);
}

// Input bytes per second of fn over threads host threads, each compressing
// its share of the blocks of data.
template <class F> static double host_rate(const std::vector<unsigned char> &data, F fn)
{
    unsigned nt = std::thread::hardware_concurrency();
    size_t nb = (data.size() + DF_BLOCK_MAX - 1) / DF_BLOCK_MAX;
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&, t] {
            for (size_t b = t; b < nb; b += nt) {
                size_t off = b * DF_BLOCK_MAX;
                fn(data.data() + off, (unsigned)std::min((size_t)DF_BLOCK_MAX, data.size() - off));
            }
        });
    for (auto &x : th)
        x.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return data.size() / s / 1e9;
}

// zlib's raw deflate of one block at level 1 (window 15, memLevel 8).
static void zlib1(const unsigned char *p, unsigned n)
{
    thread_local std::vector<unsigned char> out(compressBound(DF_BLOCK_MAX) + 64);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)p, z.avail_in = n;
    z.next_out = out.data(), z.avail_out = (uInt)out.size();
    deflate(&z, Z_FINISH);
    deflateEnd(&z);
}

// Our encoder's member of one block at level 1 on the host.
static void ours1(const unsigned char *p, unsigned n)
{
    struct ws {
        df_near nr;
        df_far fr;
        unsigned char out[DF_MEMBER_BOUND(DF_BLOCK_MAX)];
    };
    thread_local ws *w = new ws;
    df_bgzf_member(&w->nr, &w->fr, p, n, 1, (unsigned)crc32(0L, p, n), w->out);
}

static std::vector<unsigned char> read_file(const char *path)
{
    std::vector<unsigned char> v;
    FILE *f = fopen(path, "rb");
    if (!f)
        return perror(path), exit(1), v;
    unsigned char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        v.insert(v.end(), buf, buf + k);
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    size_t mib = 512;
    int reps = 10, a = 1, fails = 0, serial = 1;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "-m"))
            mib = strtoul(argv[a + 1], 0, 10);
        else if (!strcmp(argv[a], "-r"))
            reps = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-s"))
            serial = atoi(argv[a + 1]);
    }
    std::vector<std::pair<std::string, std::vector<unsigned char>>> kinds;
    for (const char *k : {"random", "zeros", "runs", "period3", "float"})
        kinds.push_back({k, make(k, mib << 20)});
    for (; a < argc; a++) {
        std::vector<unsigned char> v = read_file(argv[a]);
        std::string name = argv[a];
        kinds.push_back({name.substr(name.rfind('/') + 1), v});
    }
    size_t cap = 0;
    for (auto &k : kinds)
        cap = std::max(cap, k.second.size());
    dev d;
    dev_open(d, cap);
    // identity on odd sizes, the serial kernel at every level
    const size_t sizes[] = {1, 65280, 65281, 1000003, 3 * 65280 + 77};
    for (auto &k : kinds) {
        for (size_t n : sizes) {
            if (n > k.second.size())
                continue;
            std::vector<unsigned char> part(k.second.begin(), k.second.begin() + n);
            bool ok = same_members(d, part, 1, true);
            printf("identity %-10s %8zu bytes level 1 dfk_fast: %s\n", k.first.c_str(), n,
                   ok ? "same" : "DIFFER");
            fails += !ok;
            for (unsigned shift = 1; shift < 4 && n > 1; shift++) {
                ok = same_members(d, part, 1, true, shift);
                printf("identity %-10s %8zu bytes level 1 dfk_fast, %u bytes off alignment: %s\n",
                       k.first.c_str(), n, shift, ok ? "same" : "DIFFER");
                fails += !ok;
            }
            for (int level = 1; serial && level <= 9 && n <= 200000; level++) {
                ok = same_members(d, part, level, false);
                printf("identity %-10s %8zu bytes level %d dfk_serial: %s\n", k.first.c_str(), n,
                       level, ok ? "same" : "DIFFER");
                fails += !ok;
            }
        }
        size_t n = std::min(k.second.size(), (size_t)64 << 20);
        std::vector<unsigned char> part(k.second.begin(), k.second.begin() + n);
        bool ok = same_members(d, part, 1, true);
        printf("identity %-10s %8zu bytes level 1 dfk_fast: %s\n", k.first.c_str(), n,
               ok ? "same" : "DIFFER");
        fails += !ok;
    }
    // rates
    unsigned char *copy;
    BENCH_CHECK(cudaMalloc(&copy, cap + 1));
    printf("%-10s %9s %9s %9s %9s %9s %9s %9s %7s\n", "data", "fast", "members", "serial1",
           "serial6", "copy", "zlib1-all", "ours1-all", "ratio1");
    for (auto &k : kinds) {
        d.nbytes = k.second.size();
        d.nblocks = (unsigned)((d.nbytes + DF_BLOCK_MAX - 1) / DF_BLOCK_MAX);
        BENCH_CHECK(cudaMemcpy(d.in, k.second.data(), d.nbytes, cudaMemcpyHostToDevice));
        double gb = d.nbytes / 1e9;
        unsigned g = d.nblocks < d.grid ? d.nblocks : d.grid;
        float t_fast = bench_median_ms([&] {
            dfk_fast<<<g, DW_T>>>(d.in, d.nbytes, d.nblocks, d.bodies, d.sizes, d.ws);
        }, reps);
#ifdef DW_PROFILE
        unsigned long long prof[8] = {0};
        BENCH_CHECK(cudaMemcpyToSymbol(dw_prof, prof, sizeof prof));
        dfk_fast<<<g, DW_T>>>(d.in, d.nbytes, d.nblocks, d.bodies, d.sizes, d.ws);
        BENCH_CHECK(cudaMemcpyFromSymbol(prof, dw_prof, sizeof prof));
        double all = 0;
        for (int i = 0; i < 7; i++)
            all += prof[i];
        printf("profile %s:", k.first.c_str());
        const char *phase[7] = {"clear", "candidates", "masks+lengths", "walk", "uncount", "codes", "symbols"};
        for (int i = 0; i < 7; i++)
            printf(" %s %.1f%%", phase[i], 100.0 * prof[i] / all);
        printf(" (%.0f cycles per block)\n", all / d.nblocks);
#endif
        float t_all = bench_median_ms([&] { dev_members(d, 1, true); }, reps);
        std::vector<unsigned> sz(d.nblocks);
        BENCH_CHECK(cudaMemcpy(sz.data(), d.sizes, d.nblocks * 4, cudaMemcpyDeviceToHost));
        double comp = 0;
        for (unsigned s : sz)
            comp += s;
        float t_s1 = serial ? bench_median_ms([&] { dev_members(d, 1, false); }, 1) : 0;
        float t_s6 = serial ? bench_median_ms([&] { dev_members(d, 6, false); }, 1) : 0;
        float t_copy = bench_median_ms([&] {
            cudaMemcpy(copy, d.in, d.nbytes, cudaMemcpyDeviceToDevice);
        }, reps);
        double z1 = host_rate(k.second, zlib1), o1 = host_rate(k.second, ours1);
        printf("%-10s %9.2f %9.2f %9.2f %9.2f %9.1f %9.2f %9.2f %7.4f\n", k.first.c_str(),
               gb / (t_fast / 1e3), gb / (t_all / 1e3), gb / (t_s1 / 1e3), gb / (t_s6 / 1e3),
               2 * gb / (t_copy / 1e3), z1, o1, comp / d.nbytes);
    }
    printf("(GB/s of input; copy: device-to-device read+write; ratio1: level-1 output over "
           "input)\n");
    printf("identity failures: %d\n", fails);
    return fails ? 1 : 0;
}
