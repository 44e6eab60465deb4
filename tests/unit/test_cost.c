/* test_cost.c - how many devices `--device all` starts: the count that
 * ends the work soonest against a search over every count, the PCIe link
 * rates read from sysfs text, and the slowest link found in a sysfs tree
 * (GPUs behind bridges, other vendors' and other classes' devices); when a
 * pipe's member is worth a device; auto's estimate of the CPU's work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#define RND_SEED 38
#include "rnd.h"
#include "runtime/cost.h"
#include "runtime/reduce.h"

/* A uniform double in [0, 1). */
static double unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* The count a search over every count 1..most gives, the fewest of ties. */
static int count_by_search(double bytes, double device, double host, double each, int most)
{
    int best = 1;
    double best_s = INFINITY;
    for (int k = 1; k <= most; k++) {
        double rate = fmin(k * device, host);
        double s = (k - 1) * each + bytes / rate;
        if (s < best_s)
            best = k, best_s = s;
    }
    return best;
}

/* Fixed cases, then random ones against the search. */
static void test_count(void)
{
    /* a device as fast as the host: one, however much work */
    CHECK(cost_count(1e15, 40e9, 30e9, 0.25, 64) == 1);
    CHECK(cost_count(1e15, 30e9, 30e9, 0.25, 64) == 1);
    /* a device at 20 GB/s, the host at 30: two once the work is long */
    CHECK(cost_count(10e9, 20e9, 30e9, 0.25, 64) == 1);
    CHECK(cost_count(100e9, 20e9, 30e9, 0.25, 64) == 2);
    /* 5 GB/s devices: six reach the host's 30 */
    CHECK(cost_count(100e9, 5e9, 30e9, 0.25, 64) == 6);
    CHECK(cost_count(100e9, 5e9, 30e9, 0.25, 3) == 3);
    /* no work, or no size, or nothing known: one */
    CHECK(cost_count(0, 5e9, 30e9, 0.25, 64) == 1);
    CHECK(cost_count(-1, 5e9, 30e9, 0.25, 64) == 1);
    CHECK(cost_count(1e12, 0, 30e9, 0.25, 64) == 1);
    CHECK(cost_count(1e12, 5e9, 30e9, 0.25, 0) == 1);
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        double bytes = exp2(20 + 30 * unit());
        double device = exp2(27 + 10 * unit());
        double host = exp2(30 + 6 * unit());
        double each = 0.01 + unit();
        int most = 1 + (int)(rnd() % 64);
        int got = cost_count(bytes, device, host, each, most);
        int want = count_by_search(bytes, device, host, each, most);
        if (got != want && bad++ < 5)
            fprintf(stderr, "bytes %g device %g host %g each %g most %d: %d, search %d\n", bytes,
                    device, host, each, most, got, want);
    }
    CHECKF(bad == 0, "%d of 20000 random cases differ from the search", bad);
}

/* An axis run's cost: never below its base, the least over shapes
 * below every shape's, falling with longer runs and wider rows, higher
 * with var than without, and gzip's extra added, not multiplied. */
static void test_axis_ns(void)
{
    unsigned sets[] = {RD_OP_SUM, RD_OP_MIN | RD_OP_MAX, RD_OP_MEAN | RD_OP_STD,
                       RD_OP_MEAN | RD_OP_STD | RD_OP_MIN | RD_OP_MAX};
    uint64_t lens[] = {2, 3, 64, 1000, 16384, 1 << 20};
    for (int k = 0; k < 4; k++) {
        for (int d = 0; d < 2; d++) {
            double least = cost_axis_least_ns(sets[k], d);
            double whole = d ? COST_REDUCE_NS_GZIP : COST_AXIS_NS_PLAIN;
            CHECKF(least >= whole, "ops %x: least %g", sets[k], least);
            for (int i = 0; i < 6; i++) {
                double run = cost_axis_ns(sets[k], lens[i], 1, 4, d);
                double rows = cost_axis_ns(sets[k], 1, lens[i], 4, d);
                CHECKF(run >= least && rows >= least, "ops %x len %llu", sets[k],
                       (unsigned long long)lens[i]);
                if (i)
                    CHECK(run <= cost_axis_ns(sets[k], lens[i - 1], 1, 4, d) &&
                          rows <= cost_axis_ns(sets[k], 1, lens[i - 1], 4, d));
                CHECK(fabs(cost_axis_ns(sets[k], lens[i], 1, 4, 1) - cost_axis_ns(sets[k], lens[i], 1, 4, 0) -
                           (COST_REDUCE_NS_GZIP - COST_AXIS_NS_PLAIN)) < 1e-9);
            }
        }
    }
    /* short rows with var cost the CPU about a thousand whole-array bytes each */
    CHECK(cost_axis_ns(RD_OP_STD, 3, 1, 4, 0) > 500 * COST_AXIS_NS_PLAIN);
    /* (N, 64) float32 over axis 0 with mean, std, min, max: 2 GiB on the 16 threads of a GPU
       node under the GPU's start (measured there: 0.095 s on the CPU, 0.27 on the GPU) */
    unsigned all = RD_OP_MEAN | RD_OP_STD | RD_OP_MIN | RD_OP_MAX;
    CHECK(cost_axis_ns(all, 1, 64, 4, 0) * 2147483648.0 / 16 / 1e9 < COST_GPU_START_SECONDS);
    CHECK(cost_axis_ns(RD_OP_STD, 3, 1, 4, 0) > cost_axis_ns(RD_OP_SUM, 3, 1, 4, 0));
}

/* A one-member gzip file's decoded bytes from its trailer's ISIZE: the
 * least length congruent to it modulo 2^32 not below the file's size. */
static void test_stream_decoded(void)
{
    const double wrap = 4294967296.0;
    CHECK(cost_stream_decoded(2147483648u, 100e6) == 2147483648.0); /* text, ratio 21 */
    CHECK(cost_stream_decoded(1000, 900) == 1000);
    CHECK(cost_stream_decoded(0, 0) == 0);
    CHECK(cost_stream_decoded(0, 20) == wrap); /* an empty trailer under a file: wrapped */
    CHECK(cost_stream_decoded(5, 5e9) == 2 * wrap + 5);
    CHECK(cost_stream_decoded(4294967295u, 10) == 4294967295.0);
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        double len = floor(exp2(10 + 28 * unit()) * (1 + 1000 * unit()));
        double size = floor(len / (1 + 30 * unit()));
        uint32_t isize = (uint32_t)fmod(len, wrap);
        double got = cost_stream_decoded(isize, size);
        /* the least length >= size with the same ISIZE: len itself unless len - 2^32 fits */
        double want = len;
        while (want - wrap >= size)
            want -= wrap;
        bad += got != want;
    }
    CHECKF(bad == 0, "%d of 20000 random lengths", bad);
}

/* A single deflate stream's cost by its ratio: the cap where literals
 * dominate, the fit's points, never rising with the ratio nor under the
 * cost of a decoded byte alone. */
static void test_stream_ns(void)
{
    CHECK(cost_stream_ns(1.08) == COST_REDUCE_NS_GZIP); /* float32 noise */
    CHECK(cost_stream_ns(1.0) == COST_REDUCE_NS_GZIP);
    CHECK(cost_stream_ns(0) == COST_REDUCE_NS_GZIP);
    CHECK(cost_stream_ns(-3) == COST_REDUCE_NS_GZIP);
    CHECK(cost_stream_ns(NAN) == COST_REDUCE_NS_GZIP);
    CHECKF(fabs(cost_stream_ns(2.71) - 4.36) < 0.05, "int32 %g", cost_stream_ns(2.71));
    CHECKF(fabs(cost_stream_ns(21.4) - 1.97) < 0.05, "text %g", cost_stream_ns(21.4));
    CHECK(cost_stream_ns(2.1) == COST_REDUCE_NS_GZIP);
    CHECK(cost_stream_ns(5) < COST_REDUCE_NS_GZIP - 1);
    int bad = 0;
    double last = COST_REDUCE_NS_GZIP;
    for (double r = 0.5; r < 1e6; r *= 1.01) {
        double ns = cost_stream_ns(r);
        bad += ns > last || ns <= COST_STREAM_NS_OUT;
        last = ns;
    }
    CHECKF(bad == 0, "%d ratios", bad);
}

/* Writes `size` bytes to path: a gzip member's head (BGZF's where bgzf),
 * zeros, and the trailer's ISIZE `isize`; without magic, zeros alone. */
static void fake_gzip(const char *path, size_t size, uint32_t isize, int magic, int bgzf)
{
    uint8_t *b = calloc(1, size);
    CHECK(b != NULL && size >= 24);
    if (magic) {
        static const uint8_t gz[12] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0};
        static const uint8_t bg[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0xff, 0};
        memcpy(b, bgzf ? bg : gz, bgzf ? sizeof bg : sizeof gz);
        for (int i = 0; i < 4; i++)
            b[size - 4 + i] = (uint8_t)(isize >> 8 * i);
    }
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, size, f) == size);
    if (f)
        fclose(f);
    free(b);
}

/* A FILE argument names its own file. */
static const char *same_file(const char *arg, char *buf, size_t len)
{
    (void)buf, (void)len;
    return arg;
}

/* auto's estimate over files: a one-member gzip file by its decoded bytes
 * at its ratio's cost; plain and blocked gzip by their file bytes. */
static void test_cpu_seconds(void)
{
    char dir[] = "/tmp/cost-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char text[1100], flt[1100], plain[1100], bgzf[1100];
    snprintf(text, sizeof text, "%s/text.gz", dir);
    snprintf(flt, sizeof flt, "%s/float.gz", dir);
    snprintf(plain, sizeof plain, "%s/plain", dir);
    snprintf(bgzf, sizeof bgzf, "%s/blocked.gz", dir);
    fake_gzip(text, 1000000, 20000000, 1, 0);
    fake_gzip(flt, 1000000, 1080000, 1, 0);
    fake_gzip(plain, 1000000, 0, 0, 0);
    fake_gzip(bgzf, 1000000, 7, 1, 1);
    double gz = 7.0, pl = 0.5;
    char *one[1] = {text};
    double got = cost_cpu_seconds(one, 1, same_file, 4, pl, gz);
    double want = 20e6 * (gz - COST_REDUCE_NS_GZIP + cost_stream_ns(20)) / 4 / 1e9;
    CHECKF(fabs(got - want) < 1e-12, "text %g want %g", got, want);
    one[0] = flt;
    got = cost_cpu_seconds(one, 1, same_file, 4, pl, gz);
    CHECKF(fabs(got - 1.08e6 * gz / 4 / 1e9) < 1e-12, "float %g", got);
    char *mixed[3] = {plain, bgzf, text};
    got = cost_cpu_seconds(mixed, 3, same_file, 1, pl, gz);
    CHECKF(fabs(got - (1e6 * pl + 1e6 * gz) / 1e9 - 4 * want) < 1e-12, "mixed %g", got);
    /* several devices share plain and blocked bytes, not a stream's */
    CHECK(cost_shared_bytes(mixed, 3, same_file) == 2e6);
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/none", dir);
    char *gone[2] = {text, missing};
    CHECK(cost_cpu_seconds(gone, 2, same_file, 1, pl, gz) == -1);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The transpose's rates: plain below blocked gzip below one plain member
 * (the slowest for the host to inflate), the output's deflate on top. */
static void test_transpose_ns(void)
{
    CHECK(cost_transpose_ns(0, 0) < cost_transpose_ns(1, 0));
    CHECK(cost_transpose_ns(1, 0) < cost_transpose_ns(2, 0));
    for (int g = 0; g < 3; g++)
        CHECKF(cost_transpose_ns(g, 6) > cost_transpose_ns(g, 0), "gzip_in %d", g);
}

/* sysfs's link speed text to bytes per second. */
static void test_link_bytes(void)
{
    double eff = COST_LINK_EFFICIENCY;
    CHECK(fabs(cost_link_bytes("32.0 GT/s PCIe", 16) - 32e9 * 16 * 128 / 130 / 8 * eff) < 1);
    CHECK(fabs(cost_link_bytes("16.0 GT/s PCIe", 8) - 16e9 * 8 * 128 / 130 / 8 * eff) < 1);
    CHECK(fabs(cost_link_bytes("8.0 GT/s PCIe", 16) - 8e9 * 16 * 128 / 130 / 8 * eff) < 1);
    CHECK(fabs(cost_link_bytes("5.0 GT/s PCIe", 4) - 5e9 * 4 * 0.8 / 8 * eff) < 1);
    CHECK(fabs(cost_link_bytes("2.5 GT/s PCIe", 1) - 2.5e9 * 0.8 / 8 * eff) < 1);
    CHECK(fabs(cost_link_bytes("2.5 GT/s", 1) - 2.5e9 * 0.8 / 8 * eff) < 1);
    CHECK(cost_link_bytes("Unknown", 16) == 0);
    CHECK(cost_link_bytes("", 16) == 0);
    CHECK(cost_link_bytes("16.0 GT/s PCIe", 0) == 0);
    CHECK(cost_link_bytes("16.0", 16) == 0);
    CHECK(cost_link_bytes("-8.0 GT/s PCIe", 16) == 0);
    /* a device is held back by its link only where the link is slower */
    CHECK(cost_device_rate(0) == COST_DEVICE_BYTES_PER_S);
    CHECK(cost_device_rate(1e9) == 1e9);
    CHECK(cost_device_rate(1e12) == COST_DEVICE_BYTES_PER_S);
}

/* Writes text to the file dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Makes the PCI device `dev` at root/devices/<path> with its vendor,
 * class and link (speed NULL: no link files), listed in
 * root/bus/pci/devices. */
static void pci_device(const char *root, const char *path, const char *vendor, const char *cls,
                       const char *speed, const char *width)
{
    char dir[1024], cmd[2048], link[1024];
    snprintf(dir, sizeof dir, "%s/devices/%s", root, path);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/bus/pci/devices'", dir, root);
    CHECK(system(cmd) == 0);
    put(dir, "vendor", vendor);
    put(dir, "class", cls);
    if (speed) {
        put(dir, "max_link_speed", speed);
        put(dir, "max_link_width", width);
    }
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(link, sizeof link, "%s/bus/pci/devices/%s", root, name);
    symlink(dir, link);
}

/* Bridge at root/devices/<path> with a link (not a listed device's files). */
static void pci_bridge(const char *root, const char *path, const char *speed, const char *width)
{
    pci_device(root, path, "0x8086", "0x060400", speed, width);
}

/* The slowest NVIDIA display controller's link in fake sysfs trees. */
static void test_slowest_link(void)
{
    char root[] = "/tmp/cost-XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    CHECK(cost_slowest_link(root) == 0); /* no bus */
    double gen5x16 = cost_link_bytes("32.0 GT/s PCIe", 16);
    double gen4x8 = cost_link_bytes("16.0 GT/s PCIe", 8);
    /* a GPU on a Gen5 x16 root port */
    pci_bridge(root, "pci0000:00/0000:00:01.0", "32.0 GT/s PCIe", "16");
    pci_device(root, "pci0000:00/0000:00:01.0/0000:01:00.0", "0x10de", "0x030200",
               "32.0 GT/s PCIe", "16");
    CHECK(fabs(cost_slowest_link(root) - gen5x16) < 1);
    /* other vendors' devices and NVIDIA's other classes (audio, a switch) do not count */
    pci_device(root, "pci0000:00/0000:00:02.0", "0x15b3", "0x020000", "2.5 GT/s PCIe", "1");
    pci_device(root, "pci0000:00/0000:00:01.0/0000:01:00.1", "0x10de", "0x040300",
               "2.5 GT/s PCIe", "1");
    pci_device(root, "pci0000:00/0000:00:03.0", "0x10de", "0x068000", "2.5 GT/s PCIe", "1");
    CHECK(fabs(cost_slowest_link(root) - gen5x16) < 1);
    /* a second GPU behind a switch whose upstream link is Gen4 x8: the slowest */
    pci_bridge(root, "pci0000:80/0000:80:01.0", "16.0 GT/s PCIe", "8");
    pci_bridge(root, "pci0000:80/0000:80:01.0/0000:81:00.0", "32.0 GT/s PCIe", "16");
    pci_device(root, "pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0", "0x10de", "0x030000",
               "32.0 GT/s PCIe", "16");
    CHECK(fabs(cost_slowest_link(root) - gen4x8) < 1);
    /* a GPU with no link files (not PCIe) is passed over */
    pci_device(root, "pci0000:90/0000:90:00.0", "0x10de", "0x030200", NULL, NULL);
    CHECK(fabs(cost_slowest_link(root) - gen4x8) < 1);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

/* A pipe's member goes to a device only once the bytes read from the pipe
 * and not yet decoded would take the host's threads longer than
 * COST_PIPE_BEHIND_SECONDS at the rate they have decoded so far, and are
 * more than COST_PIPE_BEHIND_BYTES. */
static void test_pipe_behind(void)
{
    /* 1 GB decoded in 1 s: 0.15 s of it is 150 MB */
    CHECK(!cost_pipe_behind(0, 1000000000, 1.0));
    CHECK(!cost_pipe_behind(149000000, 1000000000, 1.0));
    CHECK(cost_pipe_behind(151000000, 1000000000, 1.0));
    /* the same backlog is behind a slower host */
    CHECK(cost_pipe_behind(149000000, 500000000, 1.0));
    CHECK(!cost_pipe_behind(149000000, 2000000000, 1.0));
    /* a slow pipe: behind only past the floor */
    CHECK(!cost_pipe_behind(COST_PIPE_BEHIND_BYTES, 1000000, 1.0));
    CHECK(cost_pipe_behind(COST_PIPE_BEHIND_BYTES + 1, 1000000, 1.0));
    /* no time measured yet: behind, as the device was always given a pipe */
    CHECK(cost_pipe_behind(0, 1000, 0.0));
    int bad = 0;
    for (int i = 0; i < 10000; i++) {
        double secs = 0.001 + unit() * 3, rate = 1e6 + unit() * 1e10;
        uint64_t done = (uint64_t)(rate * secs) + 1;
        uint64_t at = (uint64_t)((double)done / secs * COST_PIPE_BEHIND_SECONDS);
        if (at < COST_PIPE_BEHIND_BYTES)
            at = COST_PIPE_BEHIND_BYTES;
        bad += cost_pipe_behind(at / 2, done, secs) || !cost_pipe_behind(at * 2 + 2, done, secs);
    }
    CHECKF(bad == 0, "%d of 10000 random rates misjudged", bad);
}

int main(void)
{
    RUN(test_count);
    RUN(test_link_bytes);
    RUN(test_axis_ns);
    RUN(test_stream_decoded);
    RUN(test_stream_ns);
    RUN(test_cpu_seconds);
    RUN(test_transpose_ns);
    RUN(test_slowest_link);
    RUN(test_pipe_behind);
    return check_summary();
}
