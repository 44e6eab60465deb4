/* test_engine.c - the slot lifecycle (runtime/engine.c) and the chunk
 * scheduler (runtime/sched.c) on the CPU backend, over a fake operation.
 *
 * The fake operation's results record, for each unit of a chunk, the unit's
 * stream position (from engine_chunk.offset) and a checksum of its bytes in
 * every input block, once per result block: a chunk misplaced, repeated,
 * lost or split wrongly into units gives other records. The engine runs
 * chunks of every size up to its capacity on 1, 2, 3 and 7 threads, over
 * poisoned result buffers, with several input and result blocks, with and
 * without result bytes, and with its hooks refusing or failing; the
 * scheduler runs in-memory inputs of many chunks through rings of several
 * slots and buffers, one ring or three in step, and must write the results
 * in input order, stop at a failing write, chunk or read with the chunks
 * before it written and none after, and report only its clock. */
#include "check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/clock.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "runtime/backend.h"
#include "runtime/backend_state.h"
#include "runtime/engine.h"
#include "runtime/sched.h"

#define RND_SEED 0x2545f4914f6cdd1dull
#include "rnd.h"

#define FAKE_MAX_UNITS 4096 /* units of one chunk whose runs are counted */
#define FAKE_LOG 8192       /* collect calls recorded */
#define POISON 0xa5

/* One result record: the stream offset of its unit's first byte and a
 * checksum of the unit's bytes in every input block, salted by that offset
 * and the result block. */
typedef struct {
    uint64_t pos;
    uint64_t sum;
} fake_rec;

/* What the hooks saw: their calls, in order where it matters. */
typedef struct {
    int checks;                      /* check calls */
    int collects;                    /* collect calls */
    uint64_t collected[FAKE_LOG];    /* each collect's chunk offset */
    void *states[FAKE_LOG];          /* each collect's slot state */
    int unfinished;                  /* collects that found a record not written */
    atomic_uint hits[FAKE_MAX_UNITS]; /* per unit of a chunk: times the CPU function did it */
    atomic_int cpu_calls;
    atomic_int bad; /* CPU calls that saw a range or chunk field out of bounds */
} fake_tally;

/* The fake operation's context. */
typedef struct {
    size_t unit;          /* input bytes of a unit in each block; a chunk's last may be shorter */
    int in_planes, out_planes;
    int refuse_at;        /* the check call (from 0) that refuses its chunk, or -1 */
    int fail_collect_at;  /* the collect call (from 0) that fails, or -1 */
    int fail_collect_on;  /* every collect after that one fails too */
    fake_tally *t;
} fake_op;

/* Units of a chunk of `bytes` bytes per block (engine_ops.units). */
static size_t fake_units(const void *op, size_t bytes)
{
    const fake_op *f = op;
    return (bytes + f->unit - 1) / f->unit;
}

/* Result bytes of chunks of `capacity` bytes, all blocks together (engine_ops.out_bytes). */
static size_t fake_out_bytes(const void *op, size_t capacity)
{
    const fake_op *f = op;
    return fake_units(f, capacity / (size_t)f->in_planes) * sizeof(fake_rec) *
           (size_t)f->out_planes;
}

/* Result bytes of a chunk, all blocks together (engine_ops.result_bytes). */
static size_t fake_result_bytes(const void *op, size_t bytes)
{
    const fake_op *f = op;
    return fake_units(f, bytes) * sizeof(fake_rec) * (size_t)f->out_planes;
}

/* The op's input and result block counts (engine_ops.planes). */
static void fake_planes(const void *op, int *in, int *out)
{
    const fake_op *f = op;
    *in = f->in_planes;
    *out = f->out_planes;
}

/* The record of unit u for result block q, of a chunk of `bytes` bytes per
 * block at stream offset `offset` whose blocks are `pitch` bytes apart in
 * `in`: FNV-1a over the unit's bytes of every block. */
static fake_rec fake_unit(const fake_op *f, const unsigned char *in, size_t pitch, size_t bytes,
                          uint64_t offset, size_t u, int q)
{
    size_t at = u * f->unit, len = bytes - at < f->unit ? bytes - at : f->unit;
    fake_rec r = {offset + at, 0xcbf29ce484222325ull ^ (offset + at) * 0x9e3779b97f4a7c15ull};
    r.sum ^= (uint64_t)q << 60 ^ (uint64_t)len << 48;
    for (int p = 0; p < f->in_planes; p++)
        for (size_t i = 0; i < len; i++)
            r.sum = (r.sum ^ in[(size_t)p * pitch + at + i] ^ (uint64_t)p << 8) *
                    0x100000001b3ull;
    return r;
}

/* Does units [u0, u1) of a chunk: each unit's record in every result block
 * (engine_ops.cpu). */
static void fake_cpu(const engine_chunk *c, size_t u0, size_t u1)
{
    fake_op *f = c->op;
    size_t pitch = c->capacity / (size_t)f->in_planes;
    size_t out_pitch = fake_out_bytes(f, c->capacity) / (size_t)f->out_planes;
    if (u0 > u1 || u1 > fake_units(f, c->bytes) || c->bytes > pitch || !c->host_in ||
        !c->host_out || !c->state) {
        atomic_fetch_add(&f->t->bad, 1);
        return;
    }
    atomic_fetch_add(&f->t->cpu_calls, 1);
    for (size_t u = u0; u < u1; u++) {
        if (u < FAKE_MAX_UNITS)
            atomic_fetch_add(&f->t->hits[u], 1);
        for (int q = 0; q < f->out_planes; q++) {
            fake_rec r = fake_unit(f, c->host_in, pitch, c->bytes, c->offset, u, q);
            memcpy((char *)c->host_out + (size_t)q * out_pitch + u * sizeof r, &r, sizeof r);
        }
    }
}

/* Refuses the chunk of check call refuse_at (engine_ops.check). */
static int fake_check(const void *op, size_t bytes, io_status *st)
{
    const fake_op *f = op;
    int n = f->t->checks++;
    if (n != f->refuse_at)
        return 0;
    return io_fail(st, IO_ERR_FORMAT, "fake: refusing chunk %d of %zu bytes", n, bytes);
}

/* Logs the collect, counts it in the slot's state, requires every record's
 * position written, and fails at call fail_collect_at (engine_ops.collect). */
static int fake_collect(const engine_chunk *c, io_status *st)
{
    fake_op *f = c->op;
    fake_tally *t = f->t;
    int n = t->collects++;
    if (n < FAKE_LOG) {
        t->collected[n] = c->offset;
        t->states[n] = c->state;
    }
    ++*(unsigned *)c->state;
    size_t out_pitch = fake_out_bytes(f, c->capacity) / (size_t)f->out_planes;
    for (size_t u = 0; u < fake_units(f, c->bytes); u++)
        for (int q = 0; q < f->out_planes; q++) {
            fake_rec r;
            memcpy(&r, (const char *)c->host_out + (size_t)q * out_pitch + u * sizeof r,
                   sizeof r);
            t->unfinished += r.pos != c->offset + u * f->unit;
        }
    if (n != f->fail_collect_at && !(f->fail_collect_on && n > f->fail_collect_at))
        return 0;
    return io_fail(st, IO_ERR_CORRUPT, "fake: collect %d failed", n);
}

static const engine_ops fake_ops = {
    .name = "fake",
    .in_what = "a fake chunk",
    .out_what = "fake results",
    .slot_state = sizeof(unsigned),
    .out_bytes = fake_out_bytes,
    .planes = fake_planes,
    .result_bytes = fake_result_bytes,
    .units = fake_units,
    .cpu = fake_cpu,
    .check = fake_check,
    .collect = fake_collect,
};

/* A fake operation of `unit`-byte units and these block counts, hooks
 * failing nowhere, its calls counted in t (zeroed). */
static fake_op fake_make(fake_tally *t, size_t unit, int in_planes, int out_planes)
{
    memset(t, 0, sizeof *t);
    return (fake_op){.unit = unit, .in_planes = in_planes, .out_planes = out_planes,
                     .refuse_at = -1, .fail_collect_at = -1, .t = t};
}

/* The results of a chunk of `bytes` bytes per block (blocks `pitch` apart in
 * in) at stream offset `offset`, its result blocks one after another, as
 * result_bytes counts them; returns their bytes. */
static size_t fake_expect(const fake_op *f, const unsigned char *in, size_t pitch, size_t bytes,
                          uint64_t offset, unsigned char *out)
{
    size_t units = fake_units(f, bytes), at = 0;
    for (int q = 0; q < f->out_planes; q++)
        for (size_t u = 0; u < units; u++, at += sizeof(fake_rec)) {
            fake_rec r = fake_unit(f, in, pitch, bytes, offset, u, q);
            memcpy(out + at, &r, sizeof r);
        }
    return at;
}

/* Fills n bytes with the test's random bytes. */
static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rnd() >> 24);
}

/* Whether p[0..n) all hold byte b. */
static int all_bytes(const unsigned char *p, size_t n, unsigned char b)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != b)
            return 0;
    return 1;
}

/* ---- the engine ---------------------------------------------------------- */

/* Folds n bytes into an FNV-1a digest. */
static uint64_t digest_add(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

#define MAX_SLOTS 8

/* An engine run by hand: per slot its input buffer, its result buffer as the
 * first collect showed it, and the results its chunk must have. */
typedef struct {
    engine *e;
    backend *be;
    fake_op *f;
    const engine_ops *ops;
    int nslots;
    size_t capacity, out_bytes;
    unsigned char *host[MAX_SLOTS];
    const unsigned char *out[MAX_SLOTS];
    unsigned char *want[MAX_SLOTS];
    size_t want_bytes[MAX_SLOTS]; /* data bytes of the slot's chunk */
    uint64_t want_offset[MAX_SLOTS];
    int busy[MAX_SLOTS];
    uint64_t digest;   /* FNV-1a of every collected chunk's results, in order */
    uint64_t offsets[FAKE_LOG]; /* offsets of the non-empty chunks submitted */
    int nonempty;
    backend backend;  /* be and f point here */
    fake_op op;
    fake_tally tally;
} drive;

/* Opens a CPU backend of `threads` threads and an engine of ops with
 * nslots slots over a fake operation of `unit`-byte units and these block
 * counts, and learns each slot's result buffer from an empty chunk, which
 * must give no results. 0, or -1 with nothing left open. */
static int drive_open(drive *d, const engine_ops *ops, int threads, size_t unit, int in_planes,
                      int out_planes, int nslots, size_t capacity)
{
    memset(d, 0, sizeof *d);
    backend *be = d->be = &d->backend;
    CHECK(backend_open(be, BACKEND_CPU, NULL, threads) == 0);
    CHECK(be->kind == BACKEND_CPU && be->threads == threads);
    d->op = fake_make(&d->tally, unit, in_planes, out_planes);
    fake_op *f = d->f = &d->op;
    d->ops = ops;
    d->nslots = nslots;
    d->capacity = capacity;
    d->out_bytes = engine_result_bytes(0, ops, f, capacity);
    CHECK(d->out_bytes == fake_out_bytes(f, capacity));
    int rc = engine_open(&d->e, be, ops, f, nslots, capacity, 0, NULL);
    CHECKF(rc == 0, "engine_open: %d %s", rc, be->st.text);
    if (rc < 0) {
        backend_close(be);
        return -1;
    }
    CHECK(engine_backend(d->e) == be);
    for (int s = 0; s < nslots; s++) {
        d->host[s] = backend_host_alloc(be, capacity);
        d->want[s] = malloc(d->out_bytes + 1);
        const void *out;
        size_t bytes = 1;
        CHECK(engine_submit(d->e, s, d->host[s], NULL, 0, 0, 0) == 0);
        CHECK(engine_collect(d->e, s, &out, &bytes) == 0);
        CHECK(out != NULL && bytes == 0);
        d->out[s] = out;
    }
    CHECK(f->t->collects == 0 && f->t->cpu_calls == 0);
    return 0;
}

/* Collects slot s's chunk and checks its results: the records it must have
 * in each result block, the poison after them untouched. */
static void drive_finish(drive *d, int s)
{
    if (!d->busy[s])
        return;
    d->busy[s] = 0;
    const void *out;
    size_t bytes;
    int rc = engine_collect(d->e, s, &out, &bytes);
    CHECKF(rc == 0, "collect: %d %s", rc, engine_status(d->e)->text);
    size_t results = fake_result_bytes(d->f, d->want_bytes[s]);
    size_t want = d->ops->result_bytes ? results : 0;
    CHECKF(out == d->out[s] && bytes == want, "slot %d: %zu result bytes, want %zu", s, bytes,
           want);
    const fake_op *f = d->f;
    size_t block = results / (size_t)f->out_planes;
    size_t pitch = d->out_bytes / (size_t)f->out_planes;
    for (int q = 0; q < f->out_planes; q++) {
        const unsigned char *o = d->out[s] + (size_t)q * pitch;
        CHECKF(!memcmp(o, d->want[s] + (size_t)q * block, block),
               "slot %d block %d: results of a chunk of %zu bytes at %llu differ", s, q,
               d->want_bytes[s], (unsigned long long)d->want_offset[s]);
        CHECKF(all_bytes(o + block, pitch - block, POISON),
               "slot %d block %d: written past the chunk's %zu result bytes", s, q, block);
        d->digest = digest_add(d->digest, o, block);
    }
}

/* Submits a chunk of `bytes` bytes per block at `offset` to slot s (after
 * collecting its last one): new random input, the result buffer poisoned,
 * then every unit must have been done exactly once. */
static void drive_submit(drive *d, int s, size_t bytes, uint64_t offset)
{
    drive_finish(d, s);
    fake_op *f = d->f;
    fill_random(d->host[s], d->capacity);
    memset((void *)d->out[s], POISON, d->out_bytes);
    for (size_t u = 0; u < FAKE_MAX_UNITS; u++)
        atomic_store(&f->t->hits[u], 0);
    int rc = engine_submit(d->e, s, d->host[s], NULL, bytes, offset, 0);
    CHECKF(rc == 0, "submit of %zu bytes: %d %s", bytes, rc, engine_status(d->e)->text);
    size_t units = fake_units(f, bytes), once = 0;
    for (size_t u = 0; u < FAKE_MAX_UNITS; u++)
        once += atomic_load(&f->t->hits[u]) == (u < units);
    CHECKF(once == FAKE_MAX_UNITS, "chunk of %zu bytes: units not done exactly once", bytes);
    CHECK(atomic_load(&f->t->bad) == 0);
    fake_expect(f, d->host[s], d->capacity / (size_t)f->in_planes, bytes, offset, d->want[s]);
    d->want_bytes[s] = bytes;
    d->want_offset[s] = offset;
    d->busy[s] = 1;
    if (bytes && d->nonempty < FAKE_LOG)
        d->offsets[d->nonempty++] = offset;
}

/* Runs chunks of sizes[0..n) through the slots in turn, the oldest collected
 * before its slot takes the next, at consecutive offsets from base; then
 * the collects must have come once per non-empty chunk, in submit order,
 * each slot's in its own state. */
static void drive_sizes(drive *d, const size_t *sizes, int n, uint64_t base)
{
    uint64_t offset = base;
    for (int i = 0; i < n; i++) {
        drive_submit(d, i % d->nslots, sizes[i], offset);
        offset += sizes[i];
    }
    for (int i = n; i < n + d->nslots; i++)
        drive_finish(d, i % d->nslots);
    fake_tally *t = d->f->t;
    CHECKF(t->collects == d->nonempty, "%d collects for %d non-empty chunks", t->collects,
           d->nonempty);
    int in_order = 1;
    for (int k = 0; k < t->collects && k < d->nonempty; k++)
        in_order &= t->collected[k] == d->offsets[k];
    CHECK(in_order);
    CHECK(t->unfinished == 0);
    /* each slot's collects saw one state of its own, counting them */
    void *state[MAX_SLOTS] = {0};
    unsigned count[MAX_SLOTS] = {0};
    int k = 0, same = 1;
    for (int i = 0; i < n; i++) {
        if (!sizes[i])
            continue;
        int s = i % d->nslots;
        if (!state[s])
            state[s] = t->states[k];
        same &= state[s] == t->states[k++];
        count[s]++;
    }
    CHECK(same);
    for (int s = 0; s < d->nslots; s++) {
        for (int r = 0; r < s; r++)
            CHECK(!state[s] || state[s] != state[r]);
        CHECK(!state[s] || *(unsigned *)state[s] == count[s]);
    }
}

/* Closes the engine and the backend, and frees the drive's buffers. */
static void drive_close(drive *d)
{
    engine_close(d->e);
    for (int s = 0; s < d->nslots; s++) {
        backend_host_free(d->be, d->host[s]);
        free(d->want[s]);
    }
    backend_close(d->be);
}

/* Every chunk size from 0 to the capacity (odd capacity and unit), then
 * random ones, on 1, 2, 3 and 7 threads: each chunk's records exact and the
 * same bytes on every thread count. */
static void test_engine_sizes(void)
{
    const int threads[] = {1, 2, 3, 7};
    const size_t capacity = 7 * 29 + 4; /* a short unit at the end of a full chunk */
    size_t sizes[2 * (7 * 29 + 4) + 2];
    int n = 0;
    for (size_t b = 0; b <= capacity; b++)
        sizes[n++] = b;
    for (size_t k = 0; k <= capacity; k++)
        sizes[n++] = (size_t)(rnd() % (capacity + 1));
    uint64_t first = 0;
    for (int ti = 0; ti < 4; ti++) {
        static drive d;
        rng_state = RND_SEED; /* the same input on every thread count */
        if (drive_open(&d, &fake_ops, threads[ti], 7, 1, 1, 3, capacity) == 0) {
            drive_sizes(&d, sizes, n, ((uint64_t)1 << 32) + 11); /* offsets beyond 32 bits */
            CHECK(atomic_load(&d.tally.cpu_calls) > 0);
            if (ti == 0)
                first = d.digest;
            else
                CHECKF(d.digest == first, "%d threads: results differ from one thread's",
                       threads[ti]);
            drive_close(&d);
        }
    }
}

/* Runs chunks of every size from 0 to `most` bytes per block, each beside
 * its complement, through an engine of ops with nslots slots and the given
 * capacity on a CPU backend of `threads` threads, over a fake operation of
 * `unit`-byte units and these block counts. */
static void engine_every_size(const engine_ops *ops, int threads, size_t unit, int in_planes,
                              int out_planes, int nslots, size_t most, size_t capacity)
{
    size_t *sizes = malloc(2 * (most + 1) * sizeof *sizes);
    int n = 0;
    for (size_t b = 0; b <= most; b++)
        sizes[n++] = b, sizes[n++] = most - b;
    static drive d;
    if (drive_open(&d, ops, threads, unit, in_planes, out_planes, nslots, capacity) == 0) {
        drive_sizes(&d, sizes, n, 1000);
        drive_close(&d);
    }
    free(sizes);
}

/* One-byte units (a unit per byte, more units than threads by far) and units
 * larger than the capacity (one unit per chunk). */
static void test_engine_unit_extremes(void)
{
    engine_every_size(&fake_ops, 3, 1, 1, 1, 2, 61, 61);
    engine_every_size(&fake_ops, 3, 100, 1, 1, 2, 61, 61);
}

/* Several input and result blocks: the CPU function reads each input block
 * at capacity / in apart and writes each result block at out_bytes / out
 * apart, and the records cover every block. */
static void test_engine_planes(void)
{
    const int layouts[][2] = {{3, 4}, {3, 1}, {1, 2}, {2, 3}};
    const size_t plane = 3 * 17 + 2;
    for (int k = 0; k < 4; k++)
        engine_every_size(&fake_ops, 2 + k, 3, layouts[k][0], layouts[k][1], 4, plane,
                          plane * (size_t)layouts[k][0] + (size_t)k);
}

/* Without result_bytes a chunk's collect hands back no bytes, while the CPU
 * work and the op's collect (which finds the records written) still run. */
static void test_engine_no_result_bytes(void)
{
    engine_ops ops = fake_ops;
    ops.result_bytes = NULL;
    engine_every_size(&ops, 2, 4, 1, 1, 2, 40, 40);
}

/* The CPU engine's other calls: no device deflate, plain results, nothing
 * to wait for before the host buffer is reused. */
static void test_engine_cpu_calls(void)
{
    static drive d;
    if (drive_open(&d, &fake_ops, 2, 4, 1, 1, 2, 64) == 0) {
        CHECK(engine_compress(d.e, 6) == 0);
        CHECK(engine_compress(d.e, 1) == 0);
        drive_submit(&d, 0, 33, 0);
        io_status st = {0, ""};
        CHECK(engine_copied(d.e, 0, &st) == 0 && !st.code && !st.text[0]);
        drive_finish(&d, 0);
        const gz_writer_span *span;
        CHECK(engine_span(d.e, 0, &span) == 0);
        drive_close(&d);
    }
}

/* The check hook refusing a chunk: its own code and text in
 * engine_status(), no work done, and the slot takes the next chunk as
 * before. A chunk beyond the capacity, and device data handed to an engine
 * on the CPU, are refused likewise as the caller's defects
 * (GPU_ERR_INTERNAL), not a driver's failure. */
static void test_engine_check_refuses(void)
{
    static drive d;
    if (drive_open(&d, &fake_ops, 3, 4, 1, 1, 2, 64) == 0) {
        fake_op *f = d.f;
        fake_tally *t = f->t;
        drive_submit(&d, 0, 20, 0);
        drive_submit(&d, 1, 21, 20);
        drive_finish(&d, 0);
        f->refuse_at = t->checks;
        memset((void *)d.out[0], POISON, d.out_bytes);
        int calls = atomic_load(&t->cpu_calls);
        int rc = engine_submit(d.e, 0, d.host[0], NULL, 17, 41, 0);
        char want[96];
        snprintf(want, sizeof want, "fake: refusing chunk %d of 17 bytes", f->refuse_at);
        CHECKF(rc == IO_ERR_FORMAT && engine_status(d.e)->code == IO_ERR_FORMAT &&
                   !strcmp(engine_status(d.e)->text, want),
               "refused: %d '%s'", rc, engine_status(d.e)->text);
        CHECK(atomic_load(&t->cpu_calls) == calls);
        CHECK(all_bytes(d.out[0], d.out_bytes, POISON));
        drive_finish(&d, 1);
        rc = engine_submit(d.e, 1, d.host[1], NULL, 65, 41, 0);
        CHECKF(rc == GPU_ERR_INTERNAL && strstr(engine_status(d.e)->text, "65 bytes"),
               "beyond the capacity: %d '%s'", rc, engine_status(d.e)->text);
        rc = engine_submit_device(d.e, 1, 0, 16, 41, 0);
        CHECKF(rc == GPU_ERR_INTERNAL && strstr(engine_status(d.e)->text, "on the CPU"),
               "device data on the CPU: %d '%s'", rc, engine_status(d.e)->text);
        /* a refused chunk was not taken: collecting its slot gives nothing and
           does not collect it */
        int collects = t->collects;
        for (int s = 0; s < 2; s++) {
            const void *out;
            size_t bytes = 1;
            CHECK(engine_collect(d.e, s, &out, &bytes) == 0 && bytes == 0);
        }
        CHECKF(t->collects == collects, "refused chunks collected: %d", t->collects - collects);
        f->refuse_at = -1;
        drive_submit(&d, 0, 64, 41); /* the refused slots work on */
        drive_submit(&d, 1, 1, 105);
        drive_finish(&d, 0);
        drive_finish(&d, 1);
        CHECK(t->unfinished == 0);
        drive_close(&d);
    }
}

/* ---- the scheduler ------------------------------------------------------- */

#define SCHED_MAX_RINGS 3

/* One scheduled run: the input and how it is taken, and the failures
 * planted (chunk or call numbers from 0, -1 for none). */
typedef struct {
    int threads, nslots, nbufs, nrings;
    size_t unit;        /* the op's unit */
    size_t chunk;       /* a chunk's data bytes per ring */
    size_t len;         /* the input's bytes per ring */
    uint64_t limit;     /* pl_open's limit (UINT64_MAX: to the end) */
    int use_next;       /* chunks through a next callback (always with several rings) */
    int fail_read_at, fail_write_at, refuse_at, fail_collect_at;
    int fail_collect_on; /* every collect after fail_collect_at fails too */
    int no_results;     /* the op has no result_bytes */
    int cpu_calls;      /* sched_cpu_cost and sched_compress before the run */
} sched_case;

/* A case of one ring read to the end, failing nowhere. */
static sched_case sched_plain(int threads, int nslots, int nbufs, size_t chunk, size_t len)
{
    return (sched_case){threads, nslots, nbufs, 1, 5, chunk, len, UINT64_MAX, 0, -1, -1, -1, -1,
                        0, 0, 0};
}

/* The results a run must write: each chunk's result blocks one after
 * another, and where each chunk's end. */
typedef struct {
    unsigned char *p;
    size_t ends[FAKE_LOG];
    int chunks;
} sched_want;

/* The write hook's state: what it must be handed, and what it was. */
typedef struct {
    backend *be;
    const fake_op *f;
    int nslots;
    size_t out_pitch;   /* bytes between result blocks */
    const sched_want *want;
    int fail_at;        /* the call (from 0) that fails, or -1 */
    int failed;
    int writes, late;   /* calls; calls after the failing one */
    size_t at;          /* result bytes written */
    int wrong;          /* calls whose results were not the next chunk's */
    int bad;            /* calls with compressed results, or not whole result blocks */
} sched_sink;

/* The next callback's state: one chunk of each ring, in step. */
typedef struct {
    pl_ring **rings;
    int nrings;
    size_t pitch; /* bytes between a buffer's rings */
    int fail_at;
    int taken;
    int bad;
} sched_feed;

/* What the hooks without a context saw; hook_bad counts report lines not of
 * report_name's and progress positions that did not grow. */
static int info_lines, lane_lines, warn_lines, hook_bad, fallbacks, ready_calls, ready_answer;
static int progress_calls;
static uint64_t progress_last;
static const char *report_name;

/* Counts -v lines: the lanes' line apart, and lines not of the report's name. */
static void hook_info(const char *line)
{
    info_lines++;
    lane_lines += strstr(line, "chunks on the CPU") != NULL;
    if (report_name &&
        (strncmp(line, report_name, strlen(report_name)) || line[strlen(report_name)] != ':'))
        hook_bad++;
}

/* Counts warnings (the CPU backend has none to give). */
static void hook_warn(const char *line)
{
    warn_lines++;
}

/* Counts fallbacks (none without a start). */
static void hook_fallback(const backend *be, const char *why)
{
    fallbacks++;
}

/* Counts the calls; answers ready_answer. */
static int hook_ready(backend *be, int first)
{
    ready_calls++;
    return ready_answer;
}

/* Records the raw positions, which must grow. */
static void hook_progress(uint64_t raw)
{
    hook_bad += progress_calls && raw <= progress_last;
    progress_calls++;
    progress_last = raw;
}

/* Requires a chunk's results, each result block after the last, to be the
 * next chunk's; fails at call fail_at. */
static int hook_write(void *ctx, const gz_writer_span *span, const void *out, size_t bytes)
{
    sched_sink *s = ctx;
    if (s->failed) {
        s->late++;
        return 1;
    }
    s->bad += span != NULL || bytes % (size_t)s->f->out_planes;
    const sched_want *w = s->want;
    int n = s->writes;
    size_t block = bytes / (size_t)s->f->out_planes;
    for (int q = 0; q < s->f->out_planes; q++) {
        const char *o = (const char *)out + (size_t)q * s->out_pitch;
        s->wrong += n >= w->chunks || s->at + block > w->ends[n] || memcmp(o, w->p + s->at, block);
        s->at += block;
    }
    s->wrong += n >= w->chunks || s->at != w->ends[n];
    if (s->writes++ == s->fail_at) {
        s->failed = 1;
        return 1;
    }
    return 0;
}

/* Takes one chunk of every ring, which must agree with ring 0's (slot,
 * offset, bytes, and the data at its place in the slot's buffer); fails
 * before chunk fail_at (sched_input.next). */
static int feed_next(void *ctx, pl_chunk *c, io_status *st)
{
    sched_feed *f = ctx;
    if (f->taken == f->fail_at) {
        return io_fail(st, -1, "fake: no chunk %d", f->taken);
    }
    int rc = pl_next(f->rings[0], c);
    if (rc < 0)
        return io_pass_as(st, -1, pl_status(f->rings[0]));
    for (int k = 1; k < f->nrings; k++) {
        pl_chunk ck;
        int rk = pl_next(f->rings[k], &ck);
        if (rk != rc || (rk > 0 && (ck.slot != c->slot || ck.offset != c->offset ||
                                    ck.bytes != c->bytes ||
                                    ck.data != (char *)c->data + (size_t)k * f->pitch))) {
            f->bad++;
            io_fail(st, -1, "ring %d out of step", k);
            for (int j = 0; rc > 0 && j < k; j++)
                pl_release(f->rings[j], c->slot);
            if (rk > 0)
                pl_release(f->rings[k], ck.slot);
            return -1;
        }
    }
    f->taken += rc;
    return rc;
}

/* What a run gave. */
typedef struct {
    int status;
    uint64_t bytes_in;
    sched_sink sink;
    char err[IO_STATUS_TEXT];
    io_status pl;      /* ring 0's failure after the run */
    int report_lines;  /* sched_report's lines after the run */
    int run_lines;     /* info and warn lines before it */
    int feed_bad;
    fake_tally t;
} sched_outcome;

/* One plane of the input: len random bytes, not starting like gzip. */
static unsigned char *sched_input_bytes(const sched_case *k)
{
    unsigned char *p = malloc(k->len + 1);
    fill_random(p, k->len);
    if (k->len && p[0] == 0x1f)
        p[0] = 0;
    return p;
}

/* Runs case k over planes in[0..nrings) through sched_open, sched_run and
 * sched_report on a CPU backend, the writes checked against want. */
static void sched_go(const sched_case *k, unsigned char *const *in, const sched_want *want,
                     sched_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->status = 99;
    backend be;
    CHECK(backend_open(&be, BACKEND_CPU, NULL, k->threads) == 0);
    engine_ops ops = fake_ops;
    if (k->no_results)
        ops.result_bytes = NULL;
    fake_op f = fake_make(&o->t, k->unit, k->nrings, k->nrings > 1 ? 2 : 1);
    f.refuse_at = k->refuse_at;
    f.fail_collect_at = k->fail_collect_at;
    f.fail_collect_on = k->fail_collect_on;
    size_t capacity = k->chunk * (size_t)k->nrings;
    void *bufs[MAX_SLOTS];
    void *ring_bufs[SCHED_MAX_RINGS][MAX_SLOTS];
    io_reader *r[SCHED_MAX_RINGS] = {0};
    pl_ring *pl[SCHED_MAX_RINGS] = {0};
    for (int i = 0; i < k->nbufs; i++) {
        bufs[i] = backend_host_alloc(&be, capacity);
        for (int j = 0; j < k->nrings; j++)
            ring_bufs[j][i] = (char *)bufs[i] + (size_t)j * k->chunk;
    }
    for (int j = 0; j < k->nrings; j++) {
        CHECK(io_reader_open_mem(&r[j], in[j], k->len, NULL) == 0);
        CHECK(pl_open(&pl[j], r[j], ring_bufs[j], k->nbufs, k->nslots, k->chunk, NULL, 0,
                      k->limit, 0) == 0);
    }
    o->sink = (sched_sink){.be = &be, .f = &f, .nslots = k->nslots,
                           .out_pitch = fake_out_bytes(&f, capacity) / (size_t)f.out_planes,
                           .want = want, .fail_at = k->fail_write_at};
    sched_hooks hooks = {.ctx = &o->sink, .ready = hook_ready, .fallback = hook_fallback,
                         .info = hook_info, .warn = hook_warn, .progress = hook_progress,
                         .write_out = hook_write, .started = io_seconds()};
    sched_run_spec spec = {.ops = &ops, .op = &f, .nslots = k->nslots, .capacity = capacity,
                           .cpu_ns = 2.0, .start_seconds = 0.25};
    info_lines = lane_lines = warn_lines = hook_bad = fallbacks = ready_calls = 0;
    ready_answer = 0;
    progress_calls = 0;
    report_name = NULL;
    sched *h;
    io_status st;
    int rc = sched_open(&h, &be, &spec, &hooks, &st);
    CHECKF(rc == 0, "sched_open: %d %s", rc, st.text);
    if (rc < 0)
        snprintf(o->err, sizeof o->err, "%s", st.text);
    if (rc == 0) {
        CHECK(ready_calls <= 1);
        if (k->cpu_calls) {
            sched_cpu_cost(h, 7.5);
            CHECK(sched_compress(h, 6, 0) == 0);
            CHECK(sched_compress(h, 1, 12345) == 0);
        }
        sched_feed feed = {pl, k->nrings, k->chunk, k->fail_read_at, 0, 0};
        sched_input input = {.rings = pl, .nrings = k->nrings};
        if (k->use_next || k->nrings > 1) {
            input.next = feed_next;
            input.ctx = &feed;
        }
        o->status = sched_run(h, &input, &o->bytes_in);
        snprintf(o->err, sizeof o->err, "%s", sched_error(h));
        io_pass(&o->pl, pl_status(pl[0]));
        o->feed_bad = feed.bad;
        o->run_lines = info_lines + warn_lines + fallbacks;
        info_lines = 0;
        report_name = "fake";
        sched_report(h, "fake");
        report_name = NULL;
        o->report_lines = info_lines;
        CHECK(lane_lines == 0 && hook_bad == 0);
        sched_close(h);
    }
    for (int j = 0; j < k->nrings; j++) {
        pl_close(pl[j]);
        io_reader_close(r[j]);
    }
    for (int i = 0; i < k->nbufs; i++)
        backend_host_free(&be, bufs[i]);
    backend_close(&be);
}

/* The results of the first len bytes of the input's planes, in chunks of
 * the case's size (up to FAKE_LOG chunks). */
static sched_want *sched_expect(const sched_case *k, unsigned char *const *in, size_t len)
{
    fake_tally t;
    fake_op f = fake_make(&t, k->unit, k->nrings, k->nrings > 1 ? 2 : 1);
    size_t capacity = k->chunk * (size_t)k->nrings, at = 0;
    sched_want *w = calloc(1, sizeof *w);
    w->p = malloc((len / k->chunk + 1) * fake_out_bytes(&f, capacity));
    unsigned char *chunk = malloc(capacity);
    for (size_t off = 0; off < len && w->chunks < FAKE_LOG; off += k->chunk) {
        size_t b = len - off < k->chunk ? len - off : k->chunk;
        for (int j = 0; j < k->nrings; j++)
            memcpy(chunk + (size_t)j * k->chunk, in[j] + off, b);
        size_t bytes = fake_expect(&f, chunk, k->chunk, b, off, w->p + at);
        at += k->no_results ? 0 : bytes;
        w->ends[w->chunks++] = at;
    }
    free(chunk);
    return w;
}

/* Frees an expectation. */
static void sched_want_free(sched_want *w)
{
    free(w->p);
    free(w);
}

/* Runs case k and checks what it must give: `written` chunks written in
 * order with their exact results (-1: every chunk), the status (0, 1, or
 * negative: below 0) with err the failure's text where given, and the
 * hooks' lines; returns the outcome (valid until the next call). */
static const sched_outcome *sched_check(const char *what, const sched_case *k, int written, int status,
                        const char *err)
{
    unsigned char *in[SCHED_MAX_RINGS];
    for (int j = 0; j < k->nrings; j++)
        in[j] = sched_input_bytes(k);
    size_t len = k->limit < k->len ? (size_t)k->limit : k->len;
    sched_want *want = sched_expect(k, in, len);
    int chunks = want->chunks;
    if (written < 0)
        written = chunks;
    static sched_outcome o;
    sched_go(k, in, want, &o);
    CHECKF(status < 0 ? o.status < 0 : o.status == status, "%s: status %d, want %d (%s)", what,
           o.status, status, o.err);
    if (err)
        CHECKF(!strcmp(o.err, err), "%s: error '%s', want '%s'", what, o.err, err);
    CHECKF(o.sink.writes == written && o.sink.late == 0, "%s: %d writes (%d late), want %d",
           what, o.sink.writes, o.sink.late, written);
    CHECKF(!o.sink.wrong, "%s: %d writes were not the next chunk's results", what,
           o.sink.wrong);
    CHECKF(!o.sink.bad && !o.feed_bad, "%s: a hook saw a wrong engine, slot or ring", what);
    if (status == 0) {
        CHECKF(o.bytes_in == k->len, "%s: bytes_in %llu of %zu", what,
               (unsigned long long)o.bytes_in, k->len);
        CHECKF(progress_calls == chunks && (!chunks || progress_last == k->len),
               "%s: progress %d calls to %llu", what, progress_calls,
               (unsigned long long)progress_last);
    }
    /* every collect came in input order, each after its chunk was done */
    int in_order = o.t.unfinished == 0;
    for (int c = 0; c < o.t.collects && c < FAKE_LOG; c++)
        in_order &= o.t.collected[c] == (uint64_t)c * k->chunk;
    CHECKF(in_order, "%s: collects out of order or unfinished", what);
    CHECKF(o.run_lines == 0, "%s: %d lines from the hooks during the run", what, o.run_lines);
    CHECKF(o.report_lines == (progress_calls ? 2 : 0), "%s: sched_report gave %d lines", what,
           o.report_lines);
    CHECK(atomic_load(&o.t.bad) == 0);
    sched_want_free(want);
    for (int j = 0; j < k->nrings; j++)
        free(in[j]);
    return &o;
}

/* Whole runs: ring shapes, chunk sizes around the unit, inputs from empty to
 * many chunks, chunks from pl_next or a callback: results in input order. */
static void test_sched_orders(void)
{
    const int shapes[][2] = {{2, 2}, {4, 4}, {5, 2}, {7, 3}, {8, 8}};
    const size_t chunks[] = {5 * 7, 5 * 7 + 2, 1, 5};
    for (int s = 0; s < 5; s++)
        for (int c = 0; c < 4; c++) {
            size_t ch = chunks[c];
            const size_t lens[] = {0, 1, ch - 1, ch, ch + 1, 40 * ch + 3, 211 * ch};
            for (int l = 0; l < 7; l++) {
                if (!lens[l] && l)
                    continue;
                sched_case k = sched_plain(1 + (s + l) % 3, shapes[s][0], shapes[s][1], ch,
                                           lens[l]);
                k.use_next = (c + l) % 2;
                k.cpu_calls = l % 3 == 1;
                char what[128];
                snprintf(what, sizeof what, "slots %d bufs %d chunk %zu len %zu", k.nslots,
                         k.nbufs, ch, k.len);
                sched_check(what, &k, -1, 0, NULL);
            }
        }
}

/* Without result bytes every chunk is still written, as no bytes. */
static void test_sched_no_results(void)
{
    sched_case k = sched_plain(2, 4, 3, 35, 1000);
    k.no_results = 1;
    sched_check("no result bytes", &k, -1, 0, NULL);
}

/* The write hook failing at chunk n: status 1, nothing written after. */
static void test_sched_write_fails(void)
{
    const int at[] = {0, 1, 2, 3, 4, 10, 28};
    for (int i = 0; i < 7; i++) {
        sched_case k = sched_plain(2, 4, 4, 35, 29 * 35);
        k.fail_write_at = at[i];
        char what[64];
        snprintf(what, sizeof what, "write fails at %d", at[i]);
        sched_check(what, &k, at[i] + 1, 1, NULL);
    }
}

/* The check hook refusing chunk n: the op's text, the chunks before it
 * written (those still in flight too), none after. */
static void test_sched_refused(void)
{
    const int at[] = {0, 1, 2, 3, 5, 12, 28};
    for (int i = 0; i < 7; i++)
        for (int rings = 1; rings <= 3; rings += 2) {
            sched_case k = sched_plain(2, 4, 4, 35, 29 * 35);
            k.nrings = rings;
            k.refuse_at = at[i];
            char what[64], err[64];
            snprintf(what, sizeof what, "%d rings: chunk %d refused", rings, at[i]);
            snprintf(err, sizeof err, "fake: refusing chunk %d of 35 bytes", at[i]);
            const sched_outcome *o = sched_check(what, &k, at[i], -1, err);
            CHECKF(o->t.collects == at[i], "%s: %d collects", what, o->t.collects);
        }
    /* an earlier chunk's failure, still in flight when a later one is refused, comes first */
    sched_case k = sched_plain(2, 4, 4, 35, 29 * 35);
    k.fail_collect_at = 3;
    k.refuse_at = 5;
    sched_check("collect fails at 3, chunk 5 refused", &k, 3, -1, "fake: collect 3 failed");
}

/* The op's collect failing at chunk n: its text, the chunks before it
 * written, none after. */
static void test_sched_collect_fails(void)
{
    const int at[] = {0, 1, 3, 9, 28};
    for (int i = 0; i < 5; i++) {
        sched_case k = sched_plain(3, 5, 3, 35, 29 * 35 - 1);
        k.fail_collect_at = at[i];
        char what[64], err[64];
        snprintf(what, sizeof what, "collect fails at %d", at[i]);
        snprintf(err, sizeof err, "fake: collect %d failed", at[i]);
        sched_check(what, &k, at[i], -1, err);
    }
    /* the chunks in flight behind a failed one fail too: the first one's text is the run's */
    sched_case k = sched_plain(3, 5, 3, 35, 29 * 35 - 1);
    k.fail_collect_at = 4;
    k.fail_collect_on = 1;
    sched_check("collects fail from 4 on", &k, 4, -1, "fake: collect 4 failed");
}

/* A read error from the input's next callback before chunk n: its text,
 * the chunks before it written, none after; with one ring and three. */
static void test_sched_read_fails(void)
{
    const int at[] = {0, 1, 2, 3, 7, 29};
    for (int rings = 1; rings <= 3; rings += 2)
        for (int i = 0; i < 6; i++) {
            sched_case k = sched_plain(2, 4, 4, 35, 30 * 35 - 3);
            k.nrings = rings;
            k.use_next = 1;
            k.fail_read_at = at[i];
            char what[64], err[64];
            snprintf(what, sizeof what, "%d rings: read fails at %d", rings, at[i]);
            snprintf(err, sizeof err, "fake: no chunk %d", at[i]);
            sched_check(what, &k, at[i], -1, err);
        }
}

/* The ring's own errors (pl_next, no callback): a truncated input and one
 * with more data than its limit; every chunk the ring handed out is
 * written first (not the one that met the error), the ring's text is the
 * run's. */
static void test_sched_ring_errors(void)
{
    for (int c = 0; c < 2; c++) {
        size_t ch = c ? 35 : 33;
        sched_case k = sched_plain(2, 4, 3, ch, 20 * 35 + 4);
        k.limit = k.len + 9;
        char what[64];
        snprintf(what, sizeof what, "truncated, chunk %zu", ch);
        const sched_outcome *o = sched_check(what, &k, (int)(k.len / ch), -1, NULL);
        CHECKF(strstr(o->err, "truncated") && !strcmp(o->err, o->pl.text) &&
                   o->pl.code == IO_ERR_FORMAT,
               "%s: '%s'", what, o->err);
        k.limit = k.len - 9;
        snprintf(what, sizeof what, "longer than its limit, chunk %zu", ch);
        o = sched_check(what, &k, (int)((k.limit + ch - 1) / ch - 1), -1, NULL);
        CHECKF(strstr(o->err, "more than") && !strcmp(o->err, o->pl.text) &&
                   o->pl.code == IO_ERR_FORMAT,
               "%s: '%s'", what, o->err);
    }
}

/* Three rings of planes read in step through a next callback, each chunk's
 * three planes one input of the op, two result blocks out. */
static void test_sched_rings(void)
{
    const size_t lens[] = {0, 1, 34, 35, 36, 1000, 35 * 31};
    for (int l = 0; l < 7; l++)
        for (int slots = 2; slots <= 6; slots += 4) {
            sched_case k = sched_plain(3, slots, slots, 35, lens[l]);
            k.nrings = 3;
            k.cpu_calls = l % 2;
            char what[64];
            snprintf(what, sizeof what, "3 rings, %d slots, len %zu", slots, lens[l]);
            sched_check(what, &k, -1, 0, NULL);
        }
}

/* sched_open when the ready hook says the devices are not to be had: no
 * scheduler, no text of its own. */
static void test_sched_not_ready(void)
{
    backend be;
    CHECK(backend_open(&be, BACKEND_CPU, NULL, 1) == 0);
    fake_tally t;
    fake_op f = fake_make(&t, 5, 1, 1);
    sched_hooks hooks = {.ready = hook_ready, .info = hook_info, .warn = hook_warn};
    sched_run_spec spec = {.ops = &fake_ops, .op = &f, .nslots = 2, .capacity = 35};
    ready_calls = 0;
    ready_answer = 1;
    sched *h = (sched *)&be;
    io_status st = {0, "x"};
    CHECK(sched_open(&h, &be, &spec, &hooks, &st) < 0 && !h && !st.text[0] &&
          st.code == GPU_ERR_NO_DEVICE);
    CHECK(ready_calls == 1);
    ready_answer = 0;
    backend_close(&be);
}

int main(void)
{
    RUN(test_engine_sizes);
    RUN(test_engine_unit_extremes);
    RUN(test_engine_planes);
    RUN(test_engine_no_result_bytes);
    RUN(test_engine_cpu_calls);
    RUN(test_engine_check_refuses);
    RUN(test_sched_orders);
    RUN(test_sched_no_results);
    RUN(test_sched_write_fails);
    RUN(test_sched_refused);
    RUN(test_sched_collect_fails);
    RUN(test_sched_read_fails);
    RUN(test_sched_ring_errors);
    RUN(test_sched_rings);
    RUN(test_sched_not_ready);
    return check_summary();
}
