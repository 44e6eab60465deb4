/* cost.c - the cost model: the CPU's work, the devices' start, a gzip
 * member's hand-over, and how many devices `--device all` is worth
 * starting (see cost.h). */
#include "cost.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "io/gzip/bgzf.h"
#include "io/gzip/gzip_header.h"
#include "io/npz.h"
#include "reduce.h"

#define COST_NVIDIA_VENDOR 0x10de
#define COST_DISPLAY_CLASS 0x03 /* PCI base class of display controllers (VGA, 3D) */

/* The devices that end the work soonest (see cost.h). */
int cost_count(double bytes, double device_rate, double host_rate, double start_each, int most)
{
    if (most < 1 || bytes <= 0 || device_rate <= 0 || host_rate <= 0)
        return 1;
    int best = 1;
    double best_s = bytes / (device_rate < host_rate ? device_rate : host_rate);
    for (int k = 2; k <= most; k++) {
        double rate = k * device_rate < host_rate ? k * device_rate : host_rate;
        double s = (k - 1) * start_each + bytes / rate;
        if (s < best_s)
            best = k, best_s = s;
        if (k * device_rate >= host_rate)
            break; /* the host is the limit: more devices only add start */
    }
    return best;
}

/* A link's bytes per second (see cost.h). */
double cost_link_bytes(const char *speed, int width)
{
    char *end;
    double gt = strtod(speed, &end);
    if (end == speed || gt <= 0 || width < 1 || strncmp(end, " GT/s", 5) != 0)
        return 0;
    /* 2.5 and 5 GT/s carry 8 bits in 10; from 8 GT/s on, 128 in 130 */
    double encoding = gt < 8 ? 8.0 / 10 : 128.0 / 130;
    return gt * 1e9 * width * encoding / 8 * COST_LINK_EFFICIENCY;
}

/* The first line of the file dir/name into buf; 0, or -1 when unreadable. */
static int cost_read(const char *dir, const char *name, char *buf, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* Whether name is a PCI address, dddd:bb:dd.f. */
static int cost_pci_name(const char *name)
{
    unsigned dom, bus, dev, fn;
    char extra;
    return sscanf(name, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &extra) == 4;
}

/* The rate of the links from the PCI device at path (its resolved sysfs
 * directory) up to its root port: the least of their widest, fastest
 * settings (max_link_speed and max_link_width of the device and of each
 * bridge above it; current_link_speed falls while a GPU idles), or 0. */
static double cost_path_link(char *path)
{
    double least = 0;
    for (;;) {
        char *slash = strrchr(path, '/');
        if (!slash || !cost_pci_name(slash + 1))
            return least;
        char speed[64], width[32];
        if (!cost_read(path, "max_link_speed", speed, sizeof speed) &&
            !cost_read(path, "max_link_width", width, sizeof width)) {
            double rate = cost_link_bytes(speed, atoi(width));
            if (rate > 0 && (least == 0 || rate < least))
                least = rate;
        }
        *slash = 0;
    }
}

/* The slowest NVIDIA display controller's link (see cost.h). */
double cost_slowest_link(const char *root)
{
    char bus[512];
    snprintf(bus, sizeof bus, "%s/bus/pci/devices", root);
    DIR *d = opendir(bus);
    if (!d)
        return 0;
    double slowest = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dev[1024], vendor[32], cls[32], real[PATH_MAX];
        snprintf(dev, sizeof dev, "%s/%s", bus, e->d_name);
        if (cost_read(dev, "vendor", vendor, sizeof vendor) ||
            strtol(vendor, NULL, 16) != COST_NVIDIA_VENDOR ||
            cost_read(dev, "class", cls, sizeof cls) ||
            (strtol(cls, NULL, 16) >> 16) != COST_DISPLAY_CLASS || !realpath(dev, real))
            continue;
        double rate = cost_path_link(real);
        if (rate > 0 && (slowest == 0 || rate < slowest))
            slowest = rate;
    }
    closedir(d);
    return slowest;
}

/* One device's rate, bounded by its link (see cost.h). */
double cost_device_rate(double link_rate)
{
    return link_rate > 0 && link_rate < COST_DEVICE_BYTES_PER_S ? link_rate
                                                                   : COST_DEVICE_BYTES_PER_S;
}

/* The measurements behind cost_axis_ns: one core's nanoseconds per element
 * of the whole-array reduce (sum, min, max of float32 from the page cache),
 * and of an axis run: a base per element and a fixed cost per run (T > 1,
 * per tile of runs longer than a tile) or per 16-row block of a column
 * (T == 1, spread over C columns), for sums and counts, plus what extrema
 * and variance partials add to each (rows: float blocks in one pass, an
 * entry's extrema running over all its units, the variance merges of 64
 * columns overlapping, a thread's entries folded on it; (N, 64) float32
 * over axis 0 on one core: sum 0.76, std 1.11, mean,std,min,max 1.24 times
 * the whole array's CPU time; runs: a short tile's empty lanes not
 * merged). */
#define COST_AXIS_WHOLE_NS_PER_BYTE 0.37
static const struct {
    double elem, fixed;
} cost_axis_runs[3] = {{3.0, 420}, {0.3, 100}, {0.5, 3000}},
  cost_axis_rows[3] = {{1.06, 4.3}, {0.17, 1.1}, {0.46, 3.7}};

/* One core's nanoseconds per byte of a reduction along axes (see cost.h). */
double cost_axis_ns(unsigned ops, uint64_t T, uint64_t C, size_t elem, int deflated)
{
    int need[3] = {1, !!(ops & (RD_OP_MIN | RD_OP_MAX | RD_OP_ARGMIN | RD_OP_ARGMAX)),
                   !!(ops & (RD_OP_VAR | RD_OP_STD))};
    double per = (double)(T > 1 ? (T < RD_TILE ? T : RD_TILE) : C ? C : 1), ns = 0;
    for (int k = 0; k < 3; k++)
        if (need[k])
            ns += T > 1 ? cost_axis_runs[k].elem + cost_axis_runs[k].fixed / per
                        : cost_axis_rows[k].elem + cost_axis_rows[k].fixed / per;
    double whole = COST_AXIS_WHOLE_NS_PER_BYTE * (double)(elem ? elem : 1);
    double excess = ns > whole ? ns / whole - 1 : 0;
    return (deflated ? COST_REDUCE_NS_GZIP : COST_AXIS_NS_PLAIN) + COST_AXIS_NS_PLAIN * excess;
}

/* The least axis cost over the shapes of float32 data (see cost.h). */
double cost_axis_least_ns(unsigned ops, int deflated)
{
    return cost_axis_ns(ops, 1, UINT64_MAX, 4, deflated);
}

/* The quadratic solver's CPU cost (see cost.h). */
double cost_quadratic_ns(int gzip_in, int level)
{
    return (gzip_in ? 13.0 : 4.0) + 29.0 * !!level;
}

/* The transpose's CPU cost (see cost.h), per input byte: a 16384x16384
 * float32 matrix on the 16 cores of an H200 node, whole process, 0.120 s
 * from the .npy (1.8 ns a byte a core), 0.255 s from BGZF (4.2, taken as
 * 4.5) and 0.385-0.419 s from one `pigz -1` member (6.4-6.9, taken as 6.4).
 * So auto keeps 1 GiB of BGZF on the CPU, which beats the GPU's start, and
 * starts the GPU for 1 GiB of one member, which it inflates faster. */
double cost_transpose_ns(int gzip_in, int level)
{
    return (gzip_in == 2 ? 6.4 : gzip_in ? 4.5 : 1.8) + 22.0 * !!level;
}

/* Whether a device pays for the rest of a member (see cost.h). */
int cost_member_rest_pays(int threads, uint64_t left)
{
    double host = (threads > 0 ? threads : 1) * COST_HOST_GBPS * 1e9;
    return COST_DEVICE_SETUP_SECONDS + left / (COST_DEVICE_GBPS * 1e9) < left / host;
}

/* Whether the host is behind a pipe (see cost.h). */
int cost_pipe_behind(uint64_t behind, uint64_t done, double seconds)
{
    if (seconds <= 0)
        return 1;
    double most = (double)done / seconds * COST_PIPE_BEHIND_SECONDS;
    return behind > COST_PIPE_BEHIND_BYTES && (double)behind > most;
}

/* One core's nanoseconds spread over `threads` threads (< 1: one per
 * core), in seconds. */
static double cost_cpu_share(int threads, double ns)
{
    return ns / (threads >= 1 ? threads : backend_cpu_count()) / 1e9;
}

/* Reads up to n bytes from the start of the file at path into head; the
 * bytes read (0 when it cannot be read). */
static size_t cost_file_head(const char *path, uint8_t *head, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(head, 1, n, f);
    fclose(f);
    return got;
}

/* A file's bytes by how they are read: as they lie (plain data, stored
 * .npz members), as blocked gzip, or as single deflate streams (other gzip,
 * deflated .npz members). A deflate stream counts its decoded bytes, which
 * its decoding costs by: text can hold twenty of them in a file byte; and
 * the nanoseconds of one core its ratio saves (stream_saved_ns). */
typedef struct {
    double plain, blocked, stream, stream_saved_ns;
} cost_file_bytes;

/* A stream's nanoseconds per decoded byte by its ratio (see cost.h). */
double cost_stream_ns(double ratio)
{
    if (!(ratio > 0))
        return COST_REDUCE_NS_GZIP;
    double ns = COST_STREAM_NS_OUT + COST_STREAM_NS_IN / ratio;
    return ns < COST_REDUCE_NS_GZIP ? ns : COST_REDUCE_NS_GZIP;
}

/* Adds a deflate stream of `decoded` bytes from `compressed` ones to b. */
static void cost_add_stream(cost_file_bytes *b, double decoded, double compressed)
{
    b->stream += decoded;
    b->stream_saved_ns += decoded * (COST_REDUCE_NS_GZIP - cost_stream_ns(decoded / compressed));
}

/* Decoded bytes of a one-member gzip file (see cost.h). */
double cost_stream_decoded(uint32_t isize, double size)
{
    double decoded = isize;
    while (decoded < size)
        decoded += 4294967296.0; /* ISIZE is the length modulo 2^32 */
    return decoded;
}

/* The last four bytes of the file at path, little-endian (a gzip member's
 * ISIZE); 0 when they cannot be read. */
static uint32_t cost_file_isize(const char *path)
{
    uint8_t t[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    if (fseek(f, -4, SEEK_END) != 0 || fread(t, 1, 4, f) != 4)
        t[0] = t[1] = t[2] = t[3] = 0;
    fclose(f);
    return (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
}

/* The cost_file_bytes of the regular file at path (size bytes); an .npz
 * whose directory cannot be read counts as plain. */
static cost_file_bytes cost_file_kinds(const char *path, double size)
{
    cost_file_bytes b = {size, 0, 0, 0};
    uint8_t head[64];
    size_t got = cost_file_head(path, head, sizeof head);
    npz_archive *z;
    io_status st;
    if (gzip_header_magic(head, got)) {
        b.plain = 0;
        if (bgzf_block_size(head, got))
            b.blocked = size;
        else
            cost_add_stream(&b, cost_stream_decoded(cost_file_isize(path), size), size);
    } else if (npz_is_magic(head, got) && npz_open(&z, path, &st) == 0) {
        for (size_t i = 0; i < npz_count(z); i++) {
            const io_zip_member *m = &npz_member_at(z, i)->data;
            if (m->method == IO_ZIP_DEFLATED) {
                cost_add_stream(&b, (double)(m->size > m->comp_size ? m->size : m->comp_size),
                                (double)m->comp_size);
                b.plain -= (double)m->comp_size;
            }
        }
        npz_close(z);
    }
    return b;
}

/* The size of the regular file a FILE argument reads, its name in *name
 * (held in buf); -1 for standard input or anything else. */
static double cost_file_size(const char *arg, cost_file_of file, char *buf, size_t len,
                             const char **name)
{
    struct stat st;
    *name = file(arg, buf, len); /* an .npz member's archive */
    if (!strcmp(*name, "-") || stat(*name, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return (double)st.st_size;
}

/* The files' bytes weighed by how they are read (plain, blocked gzip, a
 * deflate stream's decoded bytes, less what their ratios save where
 * by_ratio); -1 when a size is not known. */
static double cost_weighed(char *const *args, int n, cost_file_of file, double plain,
                           double blocked, double stream, int by_ratio)
{
    double sum = 0;
    char buf[4096];
    const char *name;
    for (int i = 0; i < n; i++) {
        double size = cost_file_size(args[i], file, buf, sizeof buf, &name);
        if (size < 0)
            return -1;
        cost_file_bytes k = cost_file_kinds(name, size);
        sum += k.plain * plain + k.blocked * blocked + k.stream * stream -
               (by_ratio ? k.stream_saved_ns : 0);
    }
    return sum;
}

/* Estimated seconds of CPU work for the files named (see cost.h). */
double cost_cpu_seconds(char *const *args, int n, cost_file_of file, int threads,
                        double ns_plain, double ns_gzip)
{
    double ns = cost_weighed(args, n, file, ns_plain, ns_gzip, ns_gzip, 1);
    return ns < 0 ? -1 : cost_cpu_share(threads, ns);
}

/* Estimated seconds of CPU work for an open input (see cost.h). */
double cost_input_seconds(int64_t size, int deflated, int threads, double ns_plain,
                          double ns_gzip)
{
    if (size < 0)
        return -1;
    return cost_cpu_share(threads, (double)size * (deflated ? ns_gzip : ns_plain));
}

/* Input bytes that several devices can share (see cost.h). */
double cost_shared_bytes(char *const *args, int n, cost_file_of file)
{
    return cost_weighed(args, n, file, 1, 1, 0, 0);
}
