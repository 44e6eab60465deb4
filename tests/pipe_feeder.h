/* pipe_feeder.h - a pipe that a thread fills with given bytes, in pieces of
 * every size from one byte up (sometimes pausing), for the tests of what
 * reads a pipe, through a spool or by name. Header only, for
 * tests/unit/test_spool.c, tests/unit/test_pinflate.c,
 * tests/unit/test_reader.c, tests/unit/test_gzstream.c,
 * tests/unit/test_run.c, tests/fuzz/fuzz_pinflate.c and
 * tests/fuzz/fuzz_reader.c. */
#ifndef GPUBATCH_TESTS_PIPE_FEEDER_H
#define GPUBATCH_TESTS_PIPE_FEEDER_H

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/spool.h"

typedef struct {
    int fd[2];
    const uint8_t *data;
    size_t len;
    size_t most;   /* the largest piece */
    uint64_t seed; /* the pieces' sizes and pauses */
    pthread_t thread;
} pipe_feeder;

/* Writes the bytes in random pieces, then closes the writing end; stops
 * where the reading end went away. */
static void *pipe_feed(void *arg)
{
    pipe_feeder *f = arg;
    uint64_t x = f->seed | 1;
    for (size_t at = 0; at < f->len;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t piece = 1 + x % (x & 1 ? 100 : f->most);
        if (piece > f->len - at)
            piece = f->len - at;
        ssize_t k = write(f->fd[1], f->data + at, piece);
        if (k <= 0)
            break;
        at += (size_t)k;
        if (x % 64 == 0)
            usleep(100);
    }
    close(f->fd[1]);
    return NULL;
}

/* Starts a feeder of data[0..len) (pieces of up to `most` bytes) and
 * returns its pipe's reading end; exits where the system refuses. */
static inline int pipe_feeder_start(pipe_feeder *f, const uint8_t *data, size_t len,
                                    size_t most, uint64_t seed)
{
    signal(SIGPIPE, SIG_IGN); /* the feeder of a reader that stopped early */
    *f = (pipe_feeder){.data = data, .len = len, .most = most, .seed = seed};
    if (pipe2(f->fd, O_CLOEXEC) < 0 || pthread_create(&f->thread, NULL, pipe_feed, f) != 0) {
        fprintf(stderr, "cannot set up a pipe\n");
        exit(1);
    }
    return f->fd[0];
}

/* A spool over a new feeder's pipe (see pipe_feeder_start). */
static inline spool *pipe_feeder_spool(pipe_feeder *f, const uint8_t *data, size_t len,
                                       size_t most, uint64_t seed)
{
    spool *s = NULL;
    if (spool_create(&s, pipe_feeder_start(f, data, len, most, seed)) < 0) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return s;
}

/* Frees the spool s, if any, closes the reading end and waits for the
 * feeder (which stops there if it has not finished). */
static inline void pipe_feeder_end(pipe_feeder *f, spool *s)
{
    spool_destroy(s);
    close(f->fd[0]);
    pthread_join(f->thread, NULL);
}

#endif
