/* spool.c - a pipe read at offsets (see spool.h).
 *
 * The bytes held are buf[0 .. end - base), offsets base .. end. One thread
 * at a time reads (reading set): it makes room first, then reads into the
 * room past end with the lock dropped. Other threads copy held bytes out
 * with the lock dropped too (counted in copying), so neither a read nor a
 * long copy holds up the others; only the reading thread unmaps, moves or
 * grows the buffer (a mapping of its own), after the copies under way have
 * ended, and no copy starts while it does (moving). A read-ahead thread
 * (spool_ahead) takes the reading part whenever the held bytes past the
 * release point are under its limit, so that the pipe's writer is not held
 * up while the readers are busy or not yet started. */
#include "spool.h"

#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define READ_ROOM ((size_t)1 << 20) /* room made past the held bytes for one read(2) */
#define PIPE_BYTES (1 << 20)        /* the pipe's buffer asked for */
#define DROP_UNIT ((size_t)2 << 20) /* released bytes are unmapped in whole ones (a huge page) */

struct spool {
    pthread_mutex_t lock;
    pthread_cond_t more; /* a read(2), a copy or a move ended */
    int fd;
    uint8_t *buf;
    size_t cap;
    uint64_t base;  /* offset of buf[0] */
    uint64_t end;   /* offset past the last byte read */
    uint64_t keep;  /* bytes before this offset may be dropped */
    int reading;    /* a thread reads (or makes room to), into buf past end */
    int copying;    /* copies out of buf under way, with the lock dropped */
    int moving;     /* the reading thread waits to move or grow buf: no copy starts */
    int eof;        /* the descriptor's end was read */
    int err;        /* errno of a failed read, or 0 */
    uint64_t ahead; /* the read-ahead thread's limit past keep, or 0 without one */
    int stop;       /* the read-ahead thread is to end */
    pthread_t ahead_thread;
};

/* A spool over fd (see spool.h). */
int spool_create(spool **out, int fd)
{
    spool *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return IO_ERR_NOMEM;
    s->fd = fd;
    /* a pipe of 1 MiB rather than 64 KiB: fewer, larger reads here and
       writes at the other end (refused, harmlessly, by what is not a pipe
       and above the system's limit for pipes) */
    fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->more, NULL);
    return 0;
}

/* Frees the spool (see spool.h). */
void spool_destroy(spool *s)
{
    if (!s)
        return;
    if (s->ahead) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_broadcast(&s->more);
        pthread_mutex_unlock(&s->lock);
        pthread_cancel(s->ahead_thread); /* takes effect only in its read(2) */
        pthread_join(s->ahead_thread, NULL);
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->more);
    if (s->cap)
        munmap(s->buf, s->cap);
    free(s);
}

/* Makes READ_ROOM bytes of room past the held bytes (lock held, by the
 * reading thread), once no copy is under way: unmaps the released bytes'
 * whole units at the buffer's start, then grows the mapping where that is
 * not room enough. The mapping's pages are moved, never copied, so bytes
 * read far ahead cost nothing to keep, and it is advised into huge pages,
 * so that it is not faulted in a page every 4 KiB. 0, or -ENOMEM. */
static int make_room(spool *s)
{
    if (s->cap - (size_t)(s->end - s->base) >= READ_ROOM)
        return 0;
    s->moving = 1;
    while (s->copying)
        pthread_cond_wait(&s->more, &s->lock);
    s->moving = 0;
    pthread_cond_broadcast(&s->more);
    uint64_t keep = s->keep < s->end ? s->keep : s->end;
    size_t drop = keep > s->base ? (size_t)(keep - s->base) & ~(DROP_UNIT - 1) : 0;
    if (drop) {
        munmap(s->buf, drop);
        s->buf += drop;
        s->cap -= drop;
        s->base += drop;
    }
    size_t held = (size_t)(s->end - s->base);
    if (s->cap - held >= READ_ROOM)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 4 * READ_ROOM;
    while (cap - held < READ_ROOM)
        cap *= 2;
    void *b = s->cap ? mremap(s->buf, s->cap, cap, MREMAP_MAYMOVE)
                     : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return -ENOMEM;
    madvise(b, cap, MADV_HUGEPAGE);
    s->buf = b;
    s->cap = cap;
    return 0;
}

/* One read(2) into dst by the reading thread (lock held on entry and on
 * return, dropped during the read): the count, 0 at the end, or -errno.
 * The read-ahead thread (ahead) may be cancelled there alone (its
 * cancellation is disabled elsewhere), so that spool_destroy need not wait
 * for a writer. */
static ssize_t read_unlocked(spool *s, void *dst, size_t n, int ahead)
{
    pthread_mutex_unlock(&s->lock);
    ssize_t k;
    do {
        if (ahead)
            pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        k = read(s->fd, dst, n);
        if (ahead)
            pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    } while (k < 0 && errno == EINTR);
    int e = errno;
    pthread_mutex_lock(&s->lock);
    return k < 0 ? -e : k;
}

/* The reading thread is done (lock held): another may read. */
static void reading_done(spool *s)
{
    s->reading = 0;
    pthread_cond_broadcast(&s->more);
}

/* Notes a read's outcome k (read_unlocked) past the held bytes. */
static void note_read(spool *s, ssize_t k)
{
    if (k > 0)
        s->end += (uint64_t)k;
    else if (k == 0)
        s->eof = 1;
    else
        s->err = (int)-k;
}

/* One read(2) past the held bytes by a thread that found no other reading
 * (lock held): it takes the reading part (others wait, even while it makes
 * room), reads and gives the part back; `ahead` as read_unlocked's. */
static void read_once(spool *s, int ahead)
{
    s->reading = 1;
    int rc = make_room(s);
    size_t held = (size_t)(s->end - s->base);
    note_read(s, rc < 0 ? rc : read_unlocked(s, s->buf + held, s->cap - held, ahead));
    reading_done(s);
}

/* Reads until bytes up to offset `want` are held, or the descriptor ends
 * or fails (lock held); another thread's read is waited for instead. */
static void wait_for(spool *s, uint64_t want)
{
    while (s->end < want && !s->eof && !s->err) {
        if (s->reading)
            pthread_cond_wait(&s->more, &s->lock);
        else
            read_once(s, 0);
    }
}

/* The read-ahead thread: reads while the bytes held past the release point
 * are under the limit and no other thread reads, else waits for a release
 * or a read to end; ends at the descriptor's end or error, or when told. */
static void *read_ahead(void *arg)
{
    spool *s = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_mutex_lock(&s->lock);
    while (!s->stop && !s->eof && !s->err) {
        uint64_t from = s->keep > s->base ? s->keep : s->base;
        if (s->reading || s->end >= from + s->ahead)
            pthread_cond_wait(&s->more, &s->lock);
        else
            read_once(s, 1);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Starts reading ahead (see spool.h). */
void spool_ahead(spool *s, uint64_t limit)
{
    pthread_mutex_lock(&s->lock);
    if (!s->ahead && limit) {
        s->ahead = limit;
        if (pthread_create(&s->ahead_thread, NULL, read_ahead, s) != 0)
            s->ahead = 0; /* the readers read on demand, as without it */
    }
    pthread_mutex_unlock(&s->lock);
}

/* Copies held bytes [off, off + n) after waiting for the first `least`
 * of them (lock held). */
static ssize_t copy_out(spool *s, void *buf, size_t n, size_t least, uint64_t off)
{
    wait_for(s, off + least);
    while (s->moving)
        pthread_cond_wait(&s->more, &s->lock);
    if (off < s->base)
        return -EINVAL;
    if (off + n > s->end && s->err)
        return -s->err;
    size_t k = off >= s->end ? 0 : s->end - off < n ? (size_t)(s->end - off) : n;
    const uint8_t *src = s->buf + (off - s->base);
    s->copying++;
    pthread_mutex_unlock(&s->lock);
    memcpy(buf, src, k);
    pthread_mutex_lock(&s->lock);
    if (--s->copying == 0 && s->moving)
        pthread_cond_broadcast(&s->more);
    return (ssize_t)k;
}

/* Copies bytes [off, off + n) (see spool.h). */
ssize_t spool_pread(spool *s, void *buf, size_t n, uint64_t off)
{
    pthread_mutex_lock(&s->lock);
    ssize_t k = copy_out(s, buf, n, n, off);
    pthread_mutex_unlock(&s->lock);
    return k;
}

/* Copies what is held or comes next (see spool.h). */
ssize_t spool_read(spool *s, void *buf, size_t n, uint64_t off)
{
    pthread_mutex_lock(&s->lock);
    ssize_t k = copy_out(s, buf, n, n ? 1 : 0, off);
    pthread_mutex_unlock(&s->lock);
    return k;
}

/* Hands out bytes nobody will ask for again (see spool.h). */
ssize_t spool_take(spool *s, void *buf, size_t n, uint64_t off)
{
    pthread_mutex_lock(&s->lock);
    ssize_t got;
    if (off == s->end && s->keep >= off && !s->reading && !s->copying) {
        /* nothing held is wanted: straight from the descriptor */
        got = 0;
        s->reading = 1;
        while ((size_t)got < n && !s->eof && !s->err) {
            ssize_t k = read_unlocked(s, (uint8_t *)buf + got, n - (size_t)got, 0);
            note_read(s, k);
            if (k > 0)
                got += k;
        }
        s->base = s->keep = s->end;
        reading_done(s);
        if ((size_t)got < n && s->err)
            got = -s->err;
    } else {
        got = copy_out(s, buf, n, n, off);
        if (got > 0 && off + (uint64_t)got > s->keep) {
            s->keep = off + (uint64_t)got;
            if (s->ahead)
                pthread_cond_broadcast(&s->more); /* the read-ahead may go on */
        }
    }
    pthread_mutex_unlock(&s->lock);
    return got;
}

/* Releases the bytes before off (see spool.h). */
void spool_release(spool *s, uint64_t off)
{
    pthread_mutex_lock(&s->lock);
    if (off > s->keep) {
        s->keep = off;
        if (s->ahead)
            pthread_cond_broadcast(&s->more); /* the read-ahead may go on */
    }
    pthread_mutex_unlock(&s->lock);
}

/* The descriptor's size, once known (see spool.h). */
uint64_t spool_size(spool *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t size = s->eof ? s->end : SPOOL_UNKNOWN;
    pthread_mutex_unlock(&s->lock);
    return size;
}

/* The bytes read so far (see spool.h). */
uint64_t spool_received(spool *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t end = s->end;
    pthread_mutex_unlock(&s->lock);
    return end;
}

/* Whether the descriptor has a byte at off (see spool.h). */
int spool_has(spool *s, uint64_t off)
{
    pthread_mutex_lock(&s->lock);
    wait_for(s, off + 1);
    int has = s->end > off;
    pthread_mutex_unlock(&s->lock);
    return has;
}
