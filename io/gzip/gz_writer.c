/* gz_writer.c - blocked gzip output, compressed by a pool of threads.
 *
 * This file owns the output threading. The calling thread fills fixed-size
 * blocks in a ring of jobs; worker threads (each with its own encoder
 * workspace, ptx/deflate_math.h) turn queued jobs into complete BGZF
 * members; the calling thread alone writes finished members to the sink,
 * strictly in job order, and reuses their slots. The ring bounds memory to
 * 4 * threads + 2 blocks of input and output: room for every worker to
 * have a block in hand, one queued, and two finished while the calling
 * thread is busy elsewhere (producing its next data), so that a short
 * pause of the caller does not idle the workers.
 *
 * Failure policy: workers cannot fail once started (each block has an
 * output buffer large enough for its stored form, and workspaces are
 * allocated before the workers start). A sink error is sticky and surfaces
 * on the calling thread at the next gz_writer_write() or at
 * gz_writer_finish().
 * gz_writer_finish() and gz_writer_free() always stop and join every
 * worker before freeing; queued jobs are abandoned on free. If a worker
 * cannot be started the writer runs with the ones it has (the output is
 * the same), and with none compresses on the calling thread. */
#include "gz_writer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/crc.h"
#include "ptx/deflate_math.h"
#include "io/reader.h"

_Static_assert(DF_MEMBER_BOUND(GZ_WRITER_BLOCK_DATA) <= BGZF_BLOCK_MAX,
               "a block's member fits 64 KiB");
_Static_assert(GZ_WRITER_BLOCK_DATA <= DF_BLOCK_MAX, "a block fits the encoder");

const unsigned char gz_eof_block[GZ_WRITER_EOF_LEN] = {BGZF_EOF_BYTES};

enum job_state { JOB_FREE, JOB_QUEUED, JOB_BUSY, JOB_DONE };

struct gz_job {
    uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_len;
    enum job_state state;
};

/* One encoder's workspace (see ptx/deflate_math.h). */
struct gz_codec {
    df_near near;
    df_far far;
};

struct gz_worker {
    struct gz_writer *w;
    struct gz_codec *codec;
    pthread_t tid;
    int started;
};

struct gz_writer {
    io_sink *sink;
    int level;
    int err;
    uint64_t offset; /* raw bytes written */
    /* Calling-thread compression (threads == 1, or no worker started). */
    struct gz_codec *codec;
    uint8_t *in, *out;
    size_t in_len;
    /* The pool; all fields below are guarded by mu. */
    int nworkers;  /* threads running */
    int nentries;  /* worker entries allocated */
    struct gz_worker *workers;
    struct gz_job *jobs;
    size_t njobs;
    uint64_t fill_seq;  /* job the caller is filling */
    uint64_t next_seq;  /* next job a worker takes */
    uint64_t write_seq; /* next job to write to the sink */
    int shutdown;
    int sync_init;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
};

/* Compresses one block (at most GZ_WRITER_BLOCK_DATA bytes) into a complete BGZF
 * member in out (BGZF_BLOCK_MAX bytes); returns the member's size. The encoder
 * stores data that would not shrink, so this cannot fail. */
static size_t compress_block(struct gz_codec *c, int level, const uint8_t *in, size_t len,
                             uint8_t *out)
{
    uint32_t crc = crc_update(0, in, len);
    return df_bgzf_member(&c->near, &c->far, in, (df_u32)len, level, crc, out);
}

/* Worker thread: compresses queued jobs in sequence order until shutdown. */
static void *worker_main(void *arg)
{
    struct gz_worker *me = arg;
    struct gz_writer *w = me->w;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->shutdown && w->next_seq == w->fill_seq)
            pthread_cond_wait(&w->work_cv, &w->mu);
        if (w->shutdown)
            break;
        struct gz_job *j = &w->jobs[w->next_seq % w->njobs];
        w->next_seq++;
        j->state = JOB_BUSY;
        pthread_mutex_unlock(&w->mu);
        j->out_len = compress_block(me->codec, w->level, j->in, j->in_len, j->out);
        pthread_mutex_lock(&w->mu);
        j->state = JOB_DONE;
        pthread_cond_broadcast(&w->done_cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Writes bytes to the sink, recording a failure as the writer's error. */
static int sink_out(gz_writer *w, const void *p, size_t n)
{
    int rc = io_sink_write(w->sink, p, n);
    if (rc < 0 && !w->err)
        w->err = rc;
    return rc;
}

/* Writes finished jobs at the head of the ring in order; with wait_for
 * set, waits until fewer than wait_for jobs are outstanding. Called with mu
 * held; drops it around sink writes. */
static int drain(gz_writer *w, uint64_t wait_for)
{
    while (w->write_seq < w->fill_seq) {
        struct gz_job *j = &w->jobs[w->write_seq % w->njobs];
        if (j->state != JOB_DONE) {
            if (w->fill_seq - w->write_seq < wait_for)
                return 0;
            pthread_cond_wait(&w->done_cv, &w->mu);
            continue;
        }
        pthread_mutex_unlock(&w->mu);
        int rc = w->err ? w->err : sink_out(w, j->out, j->out_len);
        pthread_mutex_lock(&w->mu);
        j->state = JOB_FREE;
        w->write_seq++;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Hands the filled block to the pool (or compresses it here) and writes
 * whatever is ready. */
static int submit(gz_writer *w)
{
    if (!w->nworkers) {
        size_t n = compress_block(w->codec, w->level, w->in, w->in_len, w->out);
        w->in_len = 0;
        return sink_out(w, w->out, n);
    }
    pthread_mutex_lock(&w->mu);
    struct gz_job *j = &w->jobs[w->fill_seq % w->njobs];
    j->in_len = w->in_len;
    j->state = JOB_QUEUED;
    w->fill_seq++;
    pthread_cond_signal(&w->work_cv);
    /* The next slot must be free before the caller fills it. */
    int rc = drain(w, w->njobs);
    w->in = w->jobs[w->fill_seq % w->njobs].in;
    w->in_len = 0;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Stops and joins the workers and frees everything but the sink. */
static void writer_destroy(gz_writer *w)
{
    if (w->nworkers) {
        pthread_mutex_lock(&w->mu);
        w->shutdown = 1;
        pthread_cond_broadcast(&w->work_cv);
        pthread_mutex_unlock(&w->mu);
    }
    if (w->workers) {
        for (int i = 0; i < w->nworkers; i++)
            pthread_join(w->workers[i].tid, NULL);
        for (int i = 0; i < w->nentries; i++)
            free(w->workers[i].codec);
        free(w->workers);
    }
    if (w->jobs) {
        for (size_t i = 0; i < w->njobs; i++) {
            free(w->jobs[i].in);
            free(w->jobs[i].out);
        }
        free(w->jobs);
    }
    if (w->sync_init) {
        pthread_cond_destroy(&w->done_cv);
        pthread_cond_destroy(&w->work_cv);
        pthread_mutex_destroy(&w->mu);
    }
    if (w->codec) {
        free(w->codec);
        free(w->in);
        free(w->out);
    }
    free(w);
}

/* Sets up the calling-thread compressor. */
static int setup_sync(gz_writer *w)
{
    w->in = malloc(GZ_WRITER_BLOCK_DATA);
    w->out = malloc(BGZF_BLOCK_MAX);
    w->codec = malloc(sizeof(*w->codec));
    if (!w->in || !w->out || !w->codec) {
        free(w->in);
        free(w->out);
        free(w->codec);
        w->in = w->out = NULL;
        w->codec = NULL;
        return IO_ERR_NOMEM;
    }
    return 0;
}

/* Sets up the ring, the worker workspaces and the threads. */
static int setup_pool(gz_writer *w, int threads)
{
    if (pthread_mutex_init(&w->mu, NULL))
        return IO_ERR_NOMEM;
    if (pthread_cond_init(&w->work_cv, NULL)) {
        pthread_mutex_destroy(&w->mu);
        return IO_ERR_NOMEM;
    }
    if (pthread_cond_init(&w->done_cv, NULL)) {
        pthread_cond_destroy(&w->work_cv);
        pthread_mutex_destroy(&w->mu);
        return IO_ERR_NOMEM;
    }
    w->sync_init = 1;
    w->njobs = 4 * (size_t)threads + 2;
    w->jobs = calloc(w->njobs, sizeof(*w->jobs));
    w->workers = calloc((size_t)threads, sizeof(*w->workers));
    if (w->workers)
        w->nentries = threads;
    if (!w->jobs || !w->workers)
        return IO_ERR_NOMEM;
    for (size_t i = 0; i < w->njobs; i++) {
        w->jobs[i].in = malloc(GZ_WRITER_BLOCK_DATA);
        w->jobs[i].out = malloc(BGZF_BLOCK_MAX);
        if (!w->jobs[i].in || !w->jobs[i].out)
            return IO_ERR_NOMEM;
    }
    for (int i = 0; i < threads; i++) {
        w->workers[i].codec = malloc(sizeof(*w->workers[i].codec));
        if (!w->workers[i].codec)
            return IO_ERR_NOMEM;
        w->workers[i].w = w;
    }
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&w->workers[i].tid, NULL, worker_main, &w->workers[i]))
            break;
        w->nworkers++;
    }
    w->in = w->jobs[0].in;
    return 0;
}

/* Creates a writer on sink. */
int gz_writer_open(gz_writer **out, io_sink *sink, int level, int threads)
{
    *out = NULL;
    if (level < 0 || level > 9 || threads < 1)
        return IO_ERR_FORMAT;
    gz_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return IO_ERR_NOMEM;
    w->sink = sink;
    w->level = level;
    int rc = 0;
    if (level > 0) {
        if (threads > 1) {
            if (threads > 1024)
                threads = 1024;
            rc = setup_pool(w, threads);
            if (rc == 0 && w->nworkers == 0) {
                /* No thread could start: compress on the calling thread. */
                rc = setup_sync(w);
            }
        } else {
            rc = setup_sync(w);
        }
    }
    if (rc < 0) {
        writer_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* Appends n bytes, cutting them into blocks. */
int gz_writer_write(gz_writer *w, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    if (w->err)
        return w->err;
    w->offset += n;
    if (w->level == 0)
        return sink_out(w, buf, n);
    while (n) {
        size_t room = GZ_WRITER_BLOCK_DATA - w->in_len;
        size_t k = n < room ? n : room;
        if (!w->nworkers && w->in_len == 0 && k == GZ_WRITER_BLOCK_DATA) {
            /* A whole block straight from the caller's bytes. */
            size_t m = compress_block(w->codec, w->level, p, k, w->out);
            int rc = sink_out(w, w->out, m);
            if (rc < 0)
                return rc;
        } else {
            memcpy(w->in + w->in_len, p, k);
            w->in_len += k;
            if (w->in_len == GZ_WRITER_BLOCK_DATA) {
                int rc = submit(w);
                if (rc < 0)
                    return rc;
            }
        }
        p += k;
        n -= k;
    }
    return 0;
}

/* Raw bytes written so far. */
uint64_t gz_writer_offset(const gz_writer *w)
{
    return w->offset;
}

/* Cuts data at stream position offset at block boundaries (see gz_writer.h). */
void gz_writer_block_split(uint64_t offset, size_t bytes, size_t *head, size_t *nblocks)
{
    size_t to_boundary =
        (size_t)((GZ_WRITER_BLOCK_DATA - offset % GZ_WRITER_BLOCK_DATA) % GZ_WRITER_BLOCK_DATA);
    *head = to_boundary < bytes ? to_boundary : bytes;
    *nblocks = (bytes - *head) / GZ_WRITER_BLOCK_DATA;
}

/* Writes a span's head, its members after every block before them, then
 * its tail. */
int gz_writer_write_span(gz_writer *w, const gz_writer_span *s)
{
    int rc = gz_writer_write(w, s->head, s->head_len);
    if (rc < 0 || s->nblocks == 0)
        return rc < 0 ? rc : gz_writer_write(w, s->tail, s->tail_len);
    if (w->level == 0 || w->in_len != 0)
        return IO_ERR_FORMAT;
    if (w->nworkers) {
        pthread_mutex_lock(&w->mu);
        rc = drain(w, 0);
        pthread_mutex_unlock(&w->mu);
        if (rc < 0)
            return rc;
    }
    if ((rc = sink_out(w, s->members, s->members_len)) < 0)
        return rc;
    w->offset += (uint64_t)s->nblocks * GZ_WRITER_BLOCK_DATA;
    return gz_writer_write(w, s->tail, s->tail_len);
}

/* Flushes the last block, waits for every job, writes the EOF block when
 * asked and frees the writer. */
static int finish_writer(gz_writer *w, int eof)
{
    int rc = w->err;
    if (w->level > 0 && rc == 0) {
        if (w->in_len)
            rc = submit(w);
        if (rc == 0 && w->nworkers) {
            pthread_mutex_lock(&w->mu);
            rc = drain(w, 0);
            pthread_mutex_unlock(&w->mu);
        }
        if (rc == 0 && eof)
            rc = sink_out(w, gz_eof_block, sizeof(gz_eof_block));
    }
    if (rc == 0)
        rc = w->err;
    writer_destroy(w);
    return rc;
}

/* Finishes the stream with the EOF block and frees the writer. */
int gz_writer_finish(gz_writer *w)
{
    return finish_writer(w, 1);
}

/* Finishes a part of a stream: every block, no EOF block. */
int gz_writer_finish_part(gz_writer *w)
{
    return finish_writer(w, 0);
}

/* Frees without finishing; accepts NULL. */
void gz_writer_free(gz_writer *w)
{
    if (w)
        writer_destroy(w);
}
