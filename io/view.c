/* view.c - read-only mappings of a file's byte ranges, and the table of
 * live views a SIGBUS handler searches (see view.h). */
#include "view.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VIEW_ALIGN ((uint64_t)2 << 20) /* huge-page size: file offset and address agree modulo it */
#define VIEW_ROWS 1024                 /* live views at once, every ring together */

/* The table of live views: a row is in use while `used` is set, and
 * covers [lo, hi) once hi is nonzero (hi is written last and cleared
 * first, so a handler never sees a half-made row). */
static struct {
    atomic_int used;
    _Atomic(uintptr_t) lo, hi;
    _Atomic(const char *) label;
    atomic_int fd;
    _Atomic(uint64_t) size;
    _Atomic(uint64_t) off; /* the file offset of lo */
} view_rows[VIEW_ROWS];

/* Takes a free row for [lo, lo + len), bytes from `off` on of the file fd
 * of `size` bytes, with label; its index, or -1 when full. */
static int view_register(const void *lo, size_t len, uint64_t off, const char *label, int fd,
                         uint64_t size)
{
    for (int i = 0; i < VIEW_ROWS; i++) {
        int free_row = 0;
        if (!atomic_compare_exchange_strong(&view_rows[i].used, &free_row, 1))
            continue;
        atomic_store(&view_rows[i].label, label);
        atomic_store(&view_rows[i].fd, fd);
        atomic_store(&view_rows[i].size, size);
        atomic_store(&view_rows[i].off, off);
        atomic_store(&view_rows[i].lo, (uintptr_t)lo);
        atomic_store(&view_rows[i].hi, (uintptr_t)lo + len);
        return i;
    }
    return -1;
}

/* Gives a row back. */
static void view_unregister(int i)
{
    if (i < 0)
        return;
    atomic_store(&view_rows[i].hi, 0);
    atomic_store(&view_rows[i].used, 0);
}

/* Whose live view holds addr (see view.h). */
int io_view_owner(const void *addr, io_view_fault *f)
{
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < VIEW_ROWS; i++) {
        uintptr_t hi = atomic_load(&view_rows[i].hi);
        uintptr_t lo = atomic_load(&view_rows[i].lo);
        if (hi && a >= lo && a < hi) {
            f->label = atomic_load(&view_rows[i].label);
            f->fd = atomic_load(&view_rows[i].fd);
            f->size = atomic_load(&view_rows[i].size);
            f->off = atomic_load(&view_rows[i].off) + (a - lo);
            f->left = hi - a;
            return 1;
        }
    }
    return 0;
}

/* Whether the first and last pages of the mapping [base, base + len) are
 * in the page cache. */
static int view_cached(void *base, size_t len)
{
    unsigned char first = 0, last = 0;
    return mincore(base, 4096, &first) == 0 && (first & 1) &&
           mincore((char *)base + len - 4096, 4096, &last) == 0 && (last & 1);
}

/* Maps a byte range of fd (io_view_map, io_view_map_lazy; `ahead`: with
 * the read-ahead advice): the mapping starts at a huge-page boundary of the
 * file, at an address on the same boundary, so that the kernel may map the
 * page cache's large folios whole. */
static int view_map(io_view *v, int fd, uint64_t off, size_t len, const char *label, int ahead)
{
    *v = (io_view){.entry = -1};
    if (len == 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if ((uint64_t)st.st_size < off + len)
        return -EFAULT;
    uint64_t moff = off / VIEW_ALIGN * VIEW_ALIGN;
    size_t mlen = (size_t)((off + len - moff + 4095) / 4096 * 4096);
    /* an aligned address: reserve room for the slack, then map over it */
    char *room = mmap(NULL, mlen + VIEW_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (room == MAP_FAILED)
        return -errno;
    char *at = (char *)(((uintptr_t)room + VIEW_ALIGN - 1) / VIEW_ALIGN * VIEW_ALIGN);
    char *base = mmap(at, mlen, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t)moff);
    if (base == MAP_FAILED) {
        int e = errno;
        munmap(room, mlen + VIEW_ALIGN);
        return -e;
    }
    if (at > room)
        munmap(room, (size_t)(at - room));
    munmap(at + mlen, (size_t)(room + VIEW_ALIGN - at)); /* the slack after it (never empty) */
    /* advice only: the pages not cached read now, in the background (not
     * asked where the range's first and last pages are cached: the kernel
     * would walk every page of it to find the others cached too), and
     * larger read-ahead, into huge folios where the kernel can (later maps
     * of them take one fault each) */
    if (ahead && !view_cached(base, mlen))
        madvise(base, mlen, MADV_WILLNEED);
    madvise(base, mlen, MADV_SEQUENTIAL);
#ifdef MADV_HUGEPAGE
    madvise(base, mlen, MADV_HUGEPAGE);
#endif
    v->base = base;
    v->map_len = mlen;
    v->data = (const uint8_t *)base + (off - moff);
    v->len = len;
    v->entry = view_register(base, mlen, moff, label, fd, (uint64_t)st.st_size);
    if (v->entry < 0) {
        io_view_unmap(v);
        return -ENOSPC;
    }
    return 0;
}

/* Maps a byte range of fd, its uncached pages read ahead (see view.h). */
int io_view_map(io_view *v, int fd, uint64_t off, size_t len, const char *label)
{
    return view_map(v, fd, off, len, label, 1);
}

/* Maps a byte range of fd with no read-ahead advice (see view.h). */
int io_view_map_lazy(io_view *v, int fd, uint64_t off, size_t len, const char *label)
{
    return view_map(v, fd, off, len, label, 0);
}

/* Unmaps a view (see view.h). */
void io_view_unmap(io_view *v)
{
    if (!v->base)
        return;
    view_unregister(v->entry);
    munmap(v->base, v->map_len);
    *v = (io_view){.entry = -1};
}

/* Copies bytes of a view with pread (see view.h). */
int io_view_read(const io_view_fault *at, size_t skip, void *buf, size_t len)
{
    if (skip > at->left || len > at->left - skip)
        return -1;
    for (size_t done = 0; done < len;) {
        ssize_t got =
            pread(at->fd, (char *)buf + done, len - done, (off_t)(at->off + skip + done));
        if (got <= 0 && !(got < 0 && errno == EINTR))
            return -1;
        done += got > 0 ? (size_t)got : 0;
    }
    return 0;
}
