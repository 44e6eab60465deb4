/* pread.c - reads of a regular file at an offset (see pread.h): on the
 * calling thread, or cut into pieces that the threads of par.h read at once
 * with pread(2), which leaves the descriptor's offset alone. */
#include "pread.h"

#include "par.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#define PREAD_PART ((size_t)2 << 20) /* a parallel plain read gives each thread >= this */
#define PREAD_THREADS 32              /* most threads one plain read uses */
#define PREAD_PIECES 1024             /* most pieces one parallel read is cut into */

/* Reads exactly n bytes at off unless the file ends; the count or -errno. */
ssize_t io_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* A parallel plain read: n bytes at pos cut into pieces of `piece` bytes
 * (the last shorter), which the threads take in turn. */
typedef struct {
    int fd;
    uint8_t *buf;
    size_t n, piece, npieces;
    uint64_t pos;
    atomic_size_t next;         /* the next piece nobody has taken */
    ssize_t got[PREAD_PIECES];  /* per piece: bytes read, or -errno */
} pread_job;

/* The bytes of piece i of job j. */
static size_t pread_piece_len(const pread_job *j, size_t i)
{
    size_t start = i * j->piece;
    return j->n - start < j->piece ? j->n - start : j->piece;
}

/* Thread body: reads pieces with pread(2) until none is left (a thread
 * held up on one piece leaves the rest to the others). */
static void *pread_job_main(void *arg)
{
    pread_job *j = *(pread_job **)arg;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->npieces;)
        j->got[i] = io_pread_full(j->fd, j->buf + i * j->piece, pread_piece_len(j, i),
                                  j->pos + i * j->piece);
    return NULL;
}

/* Reads n bytes at file offset pos with several threads (copying from the
 * page cache is the bottleneck of one thread). Returns the count (short
 * only at the end of the file) or -errno; -ENOTSUP when n is too small to
 * share. */
static ssize_t pread_parallel(int fd, uint8_t *buf, size_t n, uint64_t pos)
{
    size_t cpus = (size_t)par_cpus();
    size_t nt = n / PREAD_PART;
    if (nt > PREAD_THREADS)
        nt = PREAD_THREADS;
    if (nt > cpus)
        nt = cpus;
    if (nt < 2)
        return -ENOTSUP;
    pread_job job, *j = &job;
    /* two pieces a thread at least, 64 KiB-aligned, so that none waits on a straggler long */
    size_t piece = (n / (2 * nt) + 65535) / 65536 * 65536;
    if (piece < (n + PREAD_PIECES - 1) / PREAD_PIECES)
        piece = (n + PREAD_PIECES - 1) / PREAD_PIECES;
    *j = (pread_job){.fd = fd, .buf = buf, .n = n, .piece = piece,
                     .npieces = (n + piece - 1) / piece, .pos = pos};
    atomic_init(&j->next, 0);
    pread_job *items[PREAD_THREADS];
    for (size_t i = 0; i < nt; i++)
        items[i] = j;
    par_run(pread_job_main, items, sizeof items[0], nt);
    /* The data ends at the first short piece (a file that shrank mid-read). */
    ssize_t total = 0;
    for (size_t i = 0; i < j->npieces; i++) {
        if (j->got[i] < 0) {
            total = j->got[i];
            break;
        }
        total += j->got[i];
        if ((size_t)j->got[i] < pread_piece_len(j, i))
            break;
    }
    return total;
}

/* Reads n bytes at offset off of a regular file, on several threads when
 * n is large (see pread.h). */
ssize_t io_pread(int fd, void *buf, size_t n, uint64_t off)
{
    ssize_t k = pread_parallel(fd, buf, n, off);
    return k == -ENOTSUP ? io_pread_full(fd, buf, n, off) : k;
}
