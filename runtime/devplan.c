/* devplan.c - how many devices `--device all` is worth starting (see
 * devplan.h). */
#include "devplan.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVPLAN_NVIDIA_VENDOR 0x10de
#define DEVPLAN_DISPLAY_CLASS 0x03 /* PCI base class of display controllers (VGA, 3D) */

/* The devices that end the work soonest (see devplan.h). */
int devplan_count(double bytes, double device_rate, double host_rate, double start_each, int most)
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

/* A link's bytes per second (see devplan.h). */
double devplan_link_bytes(const char *speed, int width)
{
    char *end;
    double gt = strtod(speed, &end);
    if (end == speed || gt <= 0 || width < 1 || strncmp(end, " GT/s", 5) != 0)
        return 0;
    /* 2.5 and 5 GT/s carry 8 bits in 10; from 8 GT/s on, 128 in 130 */
    double encoding = gt < 8 ? 8.0 / 10 : 128.0 / 130;
    return gt * 1e9 * width * encoding / 8 * DEVPLAN_LINK_EFFICIENCY;
}

/* The first line of the file dir/name into buf; 0, or -1 when unreadable. */
static int devplan_read(const char *dir, const char *name, char *buf, size_t len)
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
static int devplan_pci_name(const char *name)
{
    unsigned dom, bus, dev, fn;
    char extra;
    return sscanf(name, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &extra) == 4;
}

/* The rate of the links from the PCI device at path (its resolved sysfs
 * directory) up to its root port: the least of their widest, fastest
 * settings (max_link_speed and max_link_width of the device and of each
 * bridge above it; current_link_speed falls while a GPU idles), or 0. */
static double devplan_path_link(char *path)
{
    double least = 0;
    for (;;) {
        char *slash = strrchr(path, '/');
        if (!slash || !devplan_pci_name(slash + 1))
            return least;
        char speed[64], width[32];
        if (!devplan_read(path, "max_link_speed", speed, sizeof speed) &&
            !devplan_read(path, "max_link_width", width, sizeof width)) {
            double rate = devplan_link_bytes(speed, atoi(width));
            if (rate > 0 && (least == 0 || rate < least))
                least = rate;
        }
        *slash = 0;
    }
}

/* The slowest NVIDIA display controller's link (see devplan.h). */
double devplan_slowest_link(const char *root)
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
        if (devplan_read(dev, "vendor", vendor, sizeof vendor) ||
            strtol(vendor, NULL, 16) != DEVPLAN_NVIDIA_VENDOR ||
            devplan_read(dev, "class", cls, sizeof cls) ||
            (strtol(cls, NULL, 16) >> 16) != DEVPLAN_DISPLAY_CLASS || !realpath(dev, real))
            continue;
        double rate = devplan_path_link(real);
        if (rate > 0 && (slowest == 0 || rate < slowest))
            slowest = rate;
    }
    closedir(d);
    return slowest;
}

/* One device's rate, bounded by its link (see devplan.h). */
double devplan_device_rate(double link_rate)
{
    return link_rate > 0 && link_rate < DEVPLAN_DEVICE_BYTES_PER_S ? link_rate
                                                                   : DEVPLAN_DEVICE_BYTES_PER_S;
}
