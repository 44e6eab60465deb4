/* view.h - read-only mappings of byte ranges of a regular file ("views"),
 * for consumers that read plain input where it lies in the page cache
 * instead of copying it into buffers of their own; and the lookup a SIGBUS
 * handler needs to tell a fault in a view (the file was cut under it) from
 * any other.
 *
 * A view's pages are mapped by its consumer's first reads (each fault maps
 * the cached pages around it: faster than faulting them in ahead, with
 * MADV_POPULATE_READ or a read of each page on other threads, on a 2 GiB
 * file in the page cache; BENCHMARKS.md), or never, where the consumer
 * copies the bytes with io_view_read. A file already shorter than the
 * view is an error of io_view_map() (-EFAULT: the size is checked before
 * the mapping), not a fault later. A file cut while a view is
 * mapped makes a later read of the cut pages raise SIGBUS: io_view_owner()
 * says whose view the address is in. Live views are kept in a fixed table
 * that a signal handler can search without locks or allocation. */
#ifndef GPUBATCH_IO_VIEW_H
#define GPUBATCH_IO_VIEW_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *data; /* the range's first byte */
    size_t len;          /* bytes of the range */
    void *base;          /* the mapping (NULL: none) */
    size_t map_len;      /* its bytes */
    int entry;           /* its row in the table of live views, or -1 */
} io_view;

/* Maps bytes [off, off + len) of the regular file open as fd read-only and
 * faults its pages in; label (which must outlive the view) is what
 * io_view_owner() gives for an address in it. len 0 maps nothing. 0, or
 * -errno: -EFAULT where the file holds fewer bytes than the range. */
int io_view_map(io_view *v, int fd, uint64_t off, size_t len, const char *label);

/* io_view_map without asking the kernel to read the range's uncached pages
 * ahead (MADV_WILLNEED): for a view of a whole file that its consumer reads
 * from start to end over the run, where that advice could read gigabytes
 * ahead of it at once. */
int io_view_map_lazy(io_view *v, int fd, uint64_t off, size_t len, const char *label);

/* Unmaps a view (a zeroed view or one already unmapped: nothing). */
void io_view_unmap(io_view *v);

/* What a fault in a view is about: the view's label, its file's
 * descriptor and the file's size when it was mapped; and where the address
 * is: its file offset, and the mapping's bytes from it on (to the end of
 * the view's last page). */
typedef struct {
    const char *label;
    int fd;
    uint64_t size;
    uint64_t off;
    size_t left;
} io_view_fault;

/* Whether addr is in a live view, and if so *f says whose;
 * async-signal-safe. */
int io_view_owner(const void *addr, io_view_fault *f);

/* Copies len bytes of the view that io_view_owner() found `at`, from skip
 * bytes after that address on, into buf with pread from its file, not
 * through the mapping: for a consumer that reads each byte once, a copy
 * from the page cache into a buffer that stays in its cache costs less
 * than mapping the pages (their faults, and their unmapping), and the
 * mapping's pages stay unmapped. 0, or -1 where the bytes lie past the
 * view or the file no longer holds them (the caller then reads the view,
 * and a cut file faults as it would). */
int io_view_read(const io_view_fault *at, size_t skip, void *buf, size_t len);

#endif
