/* devplan.h - how many devices `--device all` is worth starting.
 *
 * Every device the driver can see lengthens its start: cuInit and each
 * context take about 0.12 s more per device, and contexts made on threads
 * of their own do not overlap. A further device shortens a run only where
 * one device takes the input slower than the host reads it into the pinned
 * buffers; then the run's work must outweigh the further start. The
 * estimate is made before the driver starts, from the input's size and
 * the devices' PCIe links as the kernel reports them (BENCHMARKS.md,
 * "Several GPUs of one node"). */
#ifndef GPUBATCH_RUNTIME_DEVPLAN_H
#define GPUBATCH_RUNTIME_DEVPLAN_H

/* Seconds each further device adds to the driver's start. */
#define DEVPLAN_START_EACH_SECONDS 0.25
/* Input bytes per second the host reads and hands to the devices at most. */
#define DEVPLAN_HOST_BYTES_PER_S 30e9
/* Input bytes per second one device takes where its link does not hold it
 * back (blocked-gzip inflate and the reductions on an H100 or H200). */
#define DEVPLAN_DEVICE_BYTES_PER_S 40e9
/* The share of a PCIe link's signalling rate that host-to-device copies reach. */
#define DEVPLAN_LINK_EFFICIENCY 0.8

/* The number of devices, from 1 to most, that ends work of `bytes` input
 * bytes soonest when each device takes device_rate bytes per second, the
 * host hands over host_rate at most, and each device after the first adds
 * start_each seconds; the fewest where several tie. */
int devplan_count(double bytes, double device_rate, double host_rate, double start_each, int most);

/* Bytes per second of a PCIe link from sysfs's max_link_speed text
 * ("16.0 GT/s PCIe") and width, after line encoding and
 * DEVPLAN_LINK_EFFICIENCY; 0 when the text is not a speed. */
double devplan_link_bytes(const char *speed, int width);

/* The slowest link of the NVIDIA display controllers under
 * root/bus/pci/devices (root: normally "/sys"), each the least of the
 * links from the device up to its root port at their widest and fastest
 * (max_link_speed, max_link_width), in bytes per second; 0 when none is
 * found. */
double devplan_slowest_link(const char *root);

/* Bytes per second one device takes: DEVPLAN_DEVICE_BYTES_PER_S, or its
 * link's rate where that is lower (link_rate 0: unknown). */
double devplan_device_rate(double link_rate);

#endif
