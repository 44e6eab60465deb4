/* test_spool.c - a pipe read at offsets (io/spool.c): threads reading
 * ranges of every size, in every order, at or past a point released as they
 * go, get the bytes written into the pipe in pieces of every size; reads
 * stop short at its end only; the size is known once the end is read;
 * released bytes, once dropped, are refused; taking bytes in order gives the
 * data whether or not it bypasses the spool; a failing descriptor's error
 * reaches every read past what it gave. Each runs with and without a
 * read-ahead thread; that thread reads a pipe nobody asks of up to its
 * limit, and a spool whose pipe's writer never writes is freed at once. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "io/spool.h"
#include "tests/pipe_feeder.h"
#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

/* Shared by the reading threads of test_threads. */
typedef struct {
    spool *s;
    const uint8_t *data;
    size_t len;
    pthread_rwlock_t lock; /* held to read (shared) and to move the floor */
    uint64_t floor;        /* the lowest offset still read: released below it */
    atomic_int bad, reads, ids;
    uint64_t seed;
} readers;

/* A reading thread: ranges from a little below the floor to far ahead, of
 * every size, each checked against the data; raises the floor as it goes. */
static void *read_ranges(void *arg)
{
    readers *r = arg;
    uint64_t x = (r->seed + 0x9e3779b97f4a7c15ull * (uint64_t)(atomic_fetch_add(&r->ids, 1) + 1)) | 1;
    uint8_t *buf = malloc(1 << 20);
    for (int i = 0; i < 400; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pthread_rwlock_rdlock(&r->lock);
        uint64_t floor = r->floor;
        uint64_t off = floor + x % (4u << 20);
        size_t n = (size_t)(x >> 20) % (x & 2 ? 64 : (1u << 20));
        ssize_t k = x & 4 ? spool_read(r->s, buf, n, off) : spool_pread(r->s, buf, n, off);
        size_t want = off >= r->len ? 0 : r->len - off < n ? r->len - off : n;
        int ok = x & 4 ? (k > 0 && (size_t)k <= want) || (k == 0 && (want == 0 || n == 0))
                       : k == (ssize_t)want;
        ok = ok && (k <= 0 || memcmp(buf, r->data + off, (size_t)k) == 0);
        if (!ok) {
            fprintf(stderr, "read of %zu at %llu: %zd (%zu left)\n", n, (unsigned long long)off,
                    k, want);
            atomic_fetch_add(&r->bad, 1);
        }
        atomic_fetch_add(&r->reads, 1);
        pthread_rwlock_unlock(&r->lock);
        if (x % 8 == 0) { /* release a little further */
            pthread_rwlock_wrlock(&r->lock);
            if (r->floor + (1u << 20) < r->len)
                r->floor += 1u << 20;
            spool_release(r->s, r->floor);
            pthread_rwlock_unlock(&r->lock);
        }
    }
    free(buf);
    return NULL;
}

/* A spool over a new feeder's pipe, read ahead (spool_ahead) by a limit of
 * 0 to 8 MiB in three of four calls. */
static spool *fed_spool(pipe_feeder *f, const uint8_t *data, size_t len)
{
    spool *s = pipe_feeder_spool(f, data, len, 256 << 10, rnd());
    if (rnd() % 4)
        spool_ahead(s, rnd() % (8u << 20));
    return s;
}

/* Four threads reading at random offsets past a moving release point. */
static void test_threads(void)
{
    for (int round = 0; round < 6; round++) {
        size_t len = round == 0 ? 0 : round == 1 ? 1 : (size_t)(rnd() % (40u << 20));
        uint8_t *data = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            data[i] = (uint8_t)(rnd() >> 32);
        pipe_feeder f;
        readers r = {.s = fed_spool(&f, data, len), .data = data,
                     .len = len, .seed = rnd()};
        pthread_rwlock_init(&r.lock, NULL);
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, read_ranges, &r);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        CHECKF(atomic_load(&r.bad) == 0, "round %d, %zu bytes: %d bad reads of %d", round, len,
               atomic_load(&r.bad), atomic_load(&r.reads));
        /* the end: read, then known */
        CHECK(spool_has(r.s, len) == 0);
        CHECK(len == 0 || spool_has(r.s, len - 1) == 1);
        CHECK(spool_size(r.s) == len);
        pipe_feeder_end(&f, r.s);
        pthread_rwlock_destroy(&r.lock);
        free(data);
    }
}

/* Before the end is read the size is unknown; a read past it is short. */
static void test_end(void)
{
    size_t len = 3u << 20;
    uint8_t *data = malloc(len), *buf = malloc(len + 100);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(rnd() >> 40);
    pipe_feeder f;
    spool *s = fed_spool(&f, data, len);
    CHECK(spool_size(s) == SPOOL_UNKNOWN || spool_size(s) == len);
    CHECK(spool_pread(s, buf, 100, len - 40) == 40 && memcmp(buf, data + len - 40, 40) == 0);
    CHECK(spool_size(s) == len);
    CHECK(spool_pread(s, buf, 100, len + 5) == 0);
    CHECK(spool_read(s, buf, 100, len) == 0);
    /* everything is still held: nothing was released */
    CHECK(spool_pread(s, buf, len, 0) == (ssize_t)len && memcmp(buf, data, len) == 0);
    pipe_feeder_end(&f, s);
    free(data);
    free(buf);
}

/* Released bytes are dropped once room is made, and then refused. */
static void test_released(void)
{
    size_t len = 24u << 20;
    uint8_t *data = malloc(len), *buf = malloc(1 << 20);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(rnd() >> 24);
    pipe_feeder f;
    spool *s = fed_spool(&f, data, len);
    int ok = 1;
    for (uint64_t off = 0; off + (1 << 20) <= len; off += 1 << 20) {
        ok &= spool_pread(s, buf, 1 << 20, off) == 1 << 20 && !memcmp(buf, data + off, 1 << 20);
        spool_release(s, off + (1 << 20));
    }
    CHECK(ok);
    CHECK(spool_pread(s, buf, 16, 0) == -EINVAL);
    CHECK(spool_pread(s, buf, 16, len - 16) == 16 && !memcmp(buf, data + len - 16, 16));
    pipe_feeder_end(&f, s);
    free(data);
    free(buf);
}

/* Taking bytes in order, mixed with reads of bytes not taken yet: the data,
 * whether the spool holds them or they come straight from the pipe. */
static void test_take(void)
{
    size_t len = 9u << 20;
    uint8_t *data = malloc(len), *buf = malloc(len), *peek = malloc(1 << 16);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(rnd() >> 16);
    pipe_feeder f;
    spool *s = fed_spool(&f, data, len);
    size_t at = 0;
    int ok = 1;
    while (at < len) {
        if (rnd() % 4 == 0) { /* look ahead: those bytes are held then */
            uint64_t off = at + rnd() % (1u << 20);
            ssize_t k = spool_pread(s, peek, 1 << 16, off);
            ok &= k >= 0 && (k == 0 || !memcmp(peek, data + off, (size_t)k));
        }
        size_t most = rnd() & 1 ? 100 : 2u << 20;
        size_t n = 1 + rnd() % most;
        ssize_t k = spool_take(s, buf + at, n, at);
        size_t want = len - at < n ? len - at : n;
        ok &= k == (ssize_t)want;
        if (k <= 0)
            break;
        at += (size_t)k;
    }
    CHECK(ok && at == len && memcmp(buf, data, len) == 0);
    CHECK(spool_take(s, buf, 10, len) == 0);
    pipe_feeder_end(&f, s);
    free(data);
    free(buf);
    free(peek);
}

/* A descriptor whose reads fail: every read past what it gave fails too. */
static void test_read_error(void)
{
    int fd = open(".", O_RDONLY | O_DIRECTORY);
    spool *s;
    CHECK(fd >= 0 && spool_create(&s, fd) == 0);
    uint8_t buf[16];
    CHECK(spool_pread(s, buf, 16, 0) == -EISDIR);
    CHECK(spool_read(s, buf, 16, 0) == -EISDIR);
    CHECK(spool_take(s, buf, 16, 0) == -EISDIR);
    CHECK(spool_has(s, 0) == 0);
    CHECK(spool_size(s) == SPOOL_UNKNOWN);
    spool_destroy(s);
    close(fd);
}

/* Writes len bytes of data into fd (non-blocking) as the pipe takes them,
 * giving up after 10 s without progress: the count written. */
static size_t write_while_read(int fd, const uint8_t *data, size_t len)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    size_t at = 0;
    while (at < len) {
        ssize_t k = write(fd, data + at, len - at);
        if (k > 0) {
            at += (size_t)k;
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, 10000) <= 0)
            break;
    }
    return at;
}

/* A read-ahead thread takes what the writer writes while nobody asks, up to
 * its limit past the release point, and reads on as bytes are released;
 * the bytes it holds are the data. */
static void test_ahead(void)
{
    size_t len = 8u << 20, limit = 4u << 20;
    uint8_t *data = malloc(len), *buf = malloc(len);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(rnd() >> 20);
    int fd[2];
    CHECK(pipe2(fd, O_CLOEXEC) == 0);
    spool *s;
    CHECK(spool_create(&s, fd[0]) == 0);
    spool_ahead(s, limit);
    /* beyond the pipe's own buffer, written with no reader asking */
    CHECK(write_while_read(fd[1], data, limit) == limit);
    spool_release(s, limit); /* the limit moves on: the rest is taken too */
    CHECK(write_while_read(fd[1], data + limit, len - limit) == len - limit);
    close(fd[1]);
    CHECK(spool_pread(s, buf, len - limit, limit) == (ssize_t)(len - limit) &&
          memcmp(buf, data + limit, len - limit) == 0);
    CHECK(spool_has(s, len) == 0 && spool_size(s) == len);
    spool_destroy(s);
    close(fd[0]);
    /* a writer that never writes nor closes: the spool is freed at once */
    CHECK(pipe2(fd, O_CLOEXEC) == 0 && spool_create(&s, fd[0]) == 0);
    spool_ahead(s, limit);
    usleep(20000); /* the thread is in its read(2) */
    spool_destroy(s);
    close(fd[0]);
    close(fd[1]);
    free(data);
    free(buf);
}

int main(void)
{
    RUN(test_threads);
    RUN(test_end);
    RUN(test_released);
    RUN(test_take);
    RUN(test_read_error);
    RUN(test_ahead);
    return check_summary();
}
