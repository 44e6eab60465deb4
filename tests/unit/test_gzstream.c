/* test_gzstream.c - a gzip member inflated in batches by runtime/gzip/gzstream.c
 * (the batches' reads, copies and reads ahead, the sets of buffers in turn,
 * the first batch, the stop where the device cannot go on), over the
 * stand-in driver (tests/cli/fakecuda.c, whose device memory is host
 * memory) and a stand-in for the device's kernels (the gzs_ layer of
 * runtime/gzip/stream_inflate.h, below): the same plan (io/gzip/stream_plan.c)
 * and segment decoder (ptx/inflate_stream.h) on the host, as
 * tests/inflate_stream_host.h runs them. Every member's bytes, CRC-32 and
 * length must be zlib's, from its start and from a block boundary in its
 * middle, with bytes carried from batch to batch; a member cut short or
 * damaged must stop the device at a block boundary before the damage, with
 * every byte before it right. Each case runs on a regular file and again
 * on a pipe read through its spool (tests/pipe_feeder.h), whose size is
 * known only at its end: the same bytes and stops, and the spool still
 * holding every byte from where the host goes on. */
#include "check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../gzs_standin.h"
#include "../pipe_feeder.h"
#include "io/crc.h"
#include "runtime/cu.h"
#include "runtime/gpu.h"
#include "runtime/gzip/stream_inflate.h"
#include "runtime/gzip/gzstream.h"

#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

/* ---- members ---- */

/* Data of n bytes, compressible in every way deflate has: runs, repeats
 * near and far, text-like bytes and noise. */
static uint8_t *member_data(size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (!d)
        abort();
    size_t i = 0;
    while (i < n) {
        size_t run = 1 + rnd() % 3000;
        if (run > n - i)
            run = n - i;
        switch (rnd() % 4) {
        case 0: /* noise */
            for (size_t k = 0; k < run; k++)
                d[i + k] = (uint8_t)rnd();
            break;
        case 1: /* a repeat of earlier bytes */
            for (size_t k = 0; k < run; k++) {
                size_t back = 1 + rnd() % 40000;
                d[i + k] = i + k >= back ? d[i + k - back] : 'x';
            }
            break;
        case 2: /* text-like */
            for (size_t k = 0; k < run; k++)
                d[i + k] = (uint8_t)("etaoin shrdlu"[rnd() % 13]);
            break;
        default: /* a short run (long ones make more bytes than a segment has room for) */
            run = run > 200 ? 200 : run;
            memset(d + i, (int)(rnd() % 256), run);
        }
        i += run;
    }
    return d;
}

/* A gzip member of data[0..n) at `level` with `strategy`, its blocks cut
 * every `flush_every` input bytes (0: zlib's own) as pigz does; *out_len
 * its length, *data_off the deflate data's offset. */
static uint8_t *member_make(const uint8_t *data, size_t n, int level, int strategy,
                            size_t flush_every, size_t *out_len, size_t *data_off)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, strategy) != Z_OK)
        abort();
    size_t cap = deflateBound(&zs, n) + n / 16 + 4096;
    uint8_t *out = malloc(cap);
    if (!out)
        abort();
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    size_t at = 0;
    int rc;
    do {
        size_t piece = flush_every && n - at > flush_every ? flush_every : n - at;
        zs.next_in = (Bytef *)(uintptr_t)(data + at);
        zs.avail_in = (uInt)piece;
        at += piece;
        rc = deflate(&zs, at == n ? Z_FINISH : Z_FULL_FLUSH);
    } while (at < n && rc == Z_OK);
    if (rc != Z_STREAM_END)
        abort();
    *out_len = zs.total_out;
    deflateEnd(&zs);
    *data_off = 10; /* no name, no extra field */
    return out;
}

/* A file holding bytes[0..n): its descriptor (the file is unlinked). */
static int member_file(const uint8_t *bytes, size_t n)
{
    char path[] = "/tmp/gpubatch-test-gzstream-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    unlink(path);
    if (write(fd, bytes, n) != (ssize_t)n)
        abort();
    return fd;
}

/* A member: its data, its gzip bytes and, once saved, a file of them. */
typedef struct {
    uint8_t *data, *gz;
    size_t n, glen, off; /* data bytes; gzip bytes, and where its deflate data begin */
    int fd;
} member;

/* A member of base to base + spread - 1 bytes of member_data, written at
 * `level` with `strategy`, flushed every `flush` bytes (0: never). */
static void member_new(member *m, size_t base, size_t spread, int level, int strategy,
                       size_t flush)
{
    m->n = base + (size_t)(rnd() % spread);
    m->data = member_data(m->n);
    m->gz = member_make(m->data, m->n, level, strategy, flush, &m->glen, &m->off);
    m->fd = -1;
}

/* Writes the member's first `len` gzip bytes to its file. */
static void member_save(member *m, size_t len)
{
    m->fd = member_file(m->gz, len);
}

/* Frees the member and closes its file. */
static void member_free(member *m)
{
    if (m->fd >= 0)
        close(m->fd);
    free(m->gz);
    free(m->data);
}

/* ---- runs ---- */

/* A gzstream over staging buffers of its own. */
typedef struct {
    gzstream *z;
    void *staging[GZSTREAM_SETS];
} rig;

/* Opens r on g with staging buffers of `bytes` bytes each: 0, or -1. */
static int rig_open(rig *r, gpu *g, size_t bytes)
{
    for (int i = 0; i < GZSTREAM_SETS; i++)
        if (!(r->staging[i] = malloc(bytes)))
            abort();
    return gzstream_open(&r->z, g, 8192, r->staging, bytes) == 0 ? 0 : -1;
}

/* Closes r. */
static void rig_close(rig *r)
{
    gzstream_close(r->z);
    for (int i = 0; i < GZSTREAM_SETS; i++)
        free(r->staging[i]);
}

/* What a run of gzstream over a member gave. */
typedef struct {
    uint8_t *out;      /* the bytes the batches gave, in order */
    size_t len;
    int batches;
    const gzstream_point *pt;
} run_result;

/* Whether run_member reads the member's file through a pipe, and the
 * pipes it read. */
static int via_pipe;
static int pipes_run;

/* The file_size bytes of fd, read back for a pipe's feeder. */
static uint8_t *file_bytes(int fd, size_t file_size)
{
    uint8_t *b = malloc(file_size ? file_size : 1);
    if (!b || pread(fd, b, file_size, 0) != (ssize_t)file_size)
        abort();
    return b;
}

/* After a run over a pipe (bytes[0..size) fed through sp): the spool
 * still holds every byte from where the host goes on (past the final
 * block: its trailer), and its end is found. */
static int spool_keeps(spool *sp, const uint8_t *bytes, size_t size, const gzstream_point *pt)
{
    uint64_t from = pt->final ? (pt->bit + 7) / 8 : pt->bit / 8;
    if (from > size)
        return 0;
    uint8_t *rest = malloc(size - from + 1);
    ssize_t k = spool_pread(sp, rest, size - from + 1, from);
    int ok = k == (ssize_t)(size - from) && !memcmp(rest, bytes + from, size - from) &&
             spool_size(sp) == size;
    free(rest);
    return ok;
}

/* Runs z over the member in fd from its data offset (or from the point
 * `at` with its window, CRC-32 and length) to where the device stops,
 * carrying `keep` bytes from each batch to the next and checking that
 * they come first in the next; the bytes go to rr. With via_pipe the
 * file's bytes come through a pipe's spool instead (spool_keeps checked).
 * 0, or -1 after an error. */
static int run_member(gzstream *z, int fd, size_t data_off, size_t file_size, size_t keep,
                      const gzstream_point *at, run_result *rr, size_t cap)
{
    rr->out = malloc(cap ? cap : 1);
    rr->len = 0;
    rr->batches = 0;
    if (!rr->out)
        abort();
    gzstream_src src = {.fd = fd, .size = file_size};
    pipe_feeder f;
    uint8_t *bytes = NULL;
    if (via_pipe) {
        bytes = file_bytes(fd, file_size);
        src.spool = pipe_feeder_spool(&f, bytes, file_size, 200000, rnd());
    }
    int rc = 0;
    if (at)
        gzstream_begin_at(z, &src, at->bit, at->window + IFS_WINDOW - at->wlen, at->wlen,
                          at->crc, at->len);
    else
        gzstream_begin(z, &src, data_off);
    size_t carried = 0;
    for (;;) {
        CUdeviceptr data;
        size_t n;
        int got_batch = gzstream_next(z, carried, &data, &n);
        if (got_batch < 0)
            rc = -1;
        if (got_batch <= 0)
            break;
        const uint8_t *got = (const uint8_t *)(uintptr_t)data;
        CHECKF(n >= carried && (carried == 0 || !memcmp(got, rr->out + rr->len - carried, carried)),
               "batch %d: the %zu bytes carried over do not come first", rr->batches, carried);
        if (rr->len + n - carried > cap) {
            rc = -1;
            break;
        }
        memcpy(rr->out + rr->len, got + carried, n - carried);
        rr->len += n - carried;
        rr->batches++;
        carried = keep < n ? keep : n;
    }
    rr->pt = gzstream_where(z);
    gzstream_end(z);
    if (via_pipe) {
        CHECKF(rc < 0 || spool_keeps(src.spool, bytes, file_size, rr->pt),
               "a pipe of %zu bytes: the bytes from the stop at bit %llu are not all held",
               file_size, (unsigned long long)rr->pt->bit);
        pipe_feeder_end(&f, src.spool);
        free(bytes);
        pipes_run++;
    }
    return rc;
}

/* The bytes, CRC-32 and length zlib reads from gz[0..n) up to bit offset
 * `bit` of its deflate data (from data_off): whether out[0..len) are them
 * and pt's CRC-32 and length theirs. */
static int prefix_is_zlibs(const uint8_t *data, size_t data_len, const uint8_t *out, size_t len,
                           const gzstream_point *pt)
{
    return len <= data_len && !memcmp(out, data, len) && pt->len == len &&
           pt->crc == (uint32_t)crc32(0, data, (uInt)len);
}

/* Members at every level and strategy, cut into batches of several sizes
 * (from a fraction of a block to many blocks), with bytes carried over:
 * the whole member, its CRC-32 and length, and a final stop. */
static void test_members(gpu *g)
{
    static const struct {
        int level, strategy;
        size_t flush;
    } kinds[] = {{1, Z_DEFAULT_STRATEGY, 0},    {6, Z_DEFAULT_STRATEGY, 0},
                 {9, Z_DEFAULT_STRATEGY, 0},    {9, Z_DEFAULT_STRATEGY, 131072},
                 {6, Z_FIXED, 0},               {6, Z_HUFFMAN_ONLY, 0},
                 {6, Z_RLE, 0},                 {0, Z_DEFAULT_STRATEGY, 0},
                 {4, Z_DEFAULT_STRATEGY, 4096}, {9, Z_DEFAULT_STRATEGY, 6000}};
    /* a batch must hold a whole block (zlib's hold up to 16384 symbols, or
       64 KiB stored): 24 KiB only for the small blocks of frequent flushes */
    static const size_t stagings[] = {24 << 10, 100 << 10, 200 << 10, 1 << 20};
    static const size_t keeps[] = {0, 1, 4096};
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        member m;
        member_new(&m, 300000, 900000, kinds[ki].level, kinds[ki].strategy, kinds[ki].flush);
        member_save(&m, m.glen);
        for (size_t si = 0; si < sizeof stagings / sizeof stagings[0]; si++) {
            size_t bytes = stagings[si];
            if (bytes < (64 << 10) && !(kinds[ki].flush && kinds[ki].flush <= 8192))
                continue;
            rig r;
            CHECK(rig_open(&r, g, bytes) == 0);
            size_t keep = keeps[(ki + si) % 3];
            run_result rr;
            int rc = run_member(r.z, m.fd, m.off, m.glen, keep, NULL, &rr, m.n + 1);
            gzstream_stats st;
            gzstream_counts(r.z, &st);
            CHECKF(rc == 0 && rr.pt->final && rr.len == m.n &&
                       prefix_is_zlibs(m.data, m.n, rr.out, rr.len, rr.pt),
                   "level %d strategy %d, %zu-byte batches: rc %d, final %d, %zu of %zu bytes",
                   kinds[ki].level, kinds[ki].strategy, bytes, rc, rr.pt ? rr.pt->final : -1,
                   rr.len, m.n);
            /* the member's final block ends where its trailer begins */
            CHECK(rc != 0 || (rr.pt->bit + 7) / 8 == m.glen - 8);
            /* the batches after the first are read ahead, each where the plan
               of the one before it stops, unless a block runs past that
               (stored blocks of 64 KiB past a quarter of a 100 KiB batch) */
            if (kinds[ki].level > 0 && st.batches >= 4)
                CHECKF(st.read_ahead * 2 >= st.batches, "level %d, %zu-byte batches: %llu of %llu "
                       "batches read ahead", kinds[ki].level, bytes, st.read_ahead, st.batches);
            free(rr.out);
            rig_close(&r);
        }
        member_free(&m);
    }
}

/* Log lines as text logs have them: a clock and a few messages, about
 * twenty bytes out per compressed byte at level 6. */
static uint8_t *text_data(size_t n)
{
    static const char *const msgs[] = {"INFO [net] request served", "INFO [disk] flushed pages",
                                       "DEBUG [cache] cache hit", "WARN [sched] queue long"};
    uint8_t *d = malloc(n + 64);
    if (!d)
        abort();
    size_t at = 0;
    unsigned long t = 1700000000, u = 0;
    while (at < n) {
        u += rnd() % 8 == 0;
        at += (size_t)sprintf((char *)d + at, "%lu.%03lu %s\n", t + u / 1000, u % 1000,
                              msgs[rnd() % 4]);
    }
    return d;
}

/* Text, many bytes to a compressed one, in batches whose segments' room
 * (a few symbols per compressed byte, as the pool is made for) would
 * overflow: the device keeps the member to its final block, the room
 * sized from the trailer's length, or (the trailer's length wrong, as past
 * 4 GiB) from a first batch tried again with more room, then measured. */
static void test_text(gpu *g)
{
    static const size_t stagings[] = {256 << 10, 1 << 20};
    for (int round = 0; round < 4; round++) {
        member m;
        m.n = 4000000 + (size_t)(rnd() % 2000000);
        m.data = text_data(m.n);
        /* blocks of 8 KiB of text: several to the stand-in's 2 KiB segments, as a device's
           128 KiB segments hold several blocks of level 6 */
        m.gz = member_make(m.data, m.n, 6, Z_DEFAULT_STRATEGY, 8192, &m.glen, &m.off);
        if (round % 2)
            memset(m.gz + m.glen - 4, 0, 4); /* ISIZE 0: no hint */
        member_save(&m, m.glen);
        rig r;
        CHECK(rig_open(&r, g, stagings[round / 2]) == 0);
        run_result rr;
        int rc = run_member(r.z, m.fd, m.off, m.glen, 4096, NULL, &rr, m.n + 1);
        gzstream_stats st;
        gzstream_counts(r.z, &st);
        CHECKF(rc == 0 && rr.pt->final && rr.len == m.n &&
                   prefix_is_zlibs(m.data, m.n, rr.out, rr.len, rr.pt),
               "text of %zu bytes (ratio %.1f), %zu-byte batches%s: rc %d, final %d, %zu bytes",
               m.n, (double)m.n / (double)m.glen, stagings[round / 2],
               round % 2 ? ", no hint" : "", rc, rc == 0 ? rr.pt->final : -1, rr.len);
        /* sized from the hint, a batch takes its first round and one for the segments
           that began wrong, rarely one more */
        if (round % 2 == 0 && !via_pipe) /* a pipe's trailer is not read first: no hint */
            CHECKF(st.rounds <= 3 * st.batches, "text with a hint: %llu rounds for %llu batches",
                   st.rounds, st.batches);
        free(rr.out);
        rig_close(&r);
        member_free(&m);
    }
}

/* Inflates the raw deflate data gz[off..upto) with zlib, a block at a time:
 * the bytes it decodes from them. With pt it stops instead at the first
 * block end (not the final block's) at or past byte `from` of the data and
 * puts the bit offset, window, CRC-32 and length there in pt (*found 1;
 * else 0). */
static size_t zlib_walk(const uint8_t *gz, size_t off, size_t upto, size_t from,
                        gzstream_point *pt, int *found)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK)
        abort();
    size_t cap = 64 << 20;
    uint8_t *out = malloc(cap);
    if (!out)
        abort();
    zs.next_in = (Bytef *)(uintptr_t)(gz + off);
    zs.avail_in = (uInt)(upto - off);
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (found)
        *found = 0;
    while (inflate(&zs, Z_BLOCK) == Z_OK) {
        if (pt && (zs.data_type & 128) && !(zs.data_type & 64) && zs.total_in >= from) {
            size_t len = zs.total_out;
            pt->bit = (uint64_t)(off + zs.total_in) * 8 - (uint64_t)(zs.data_type & 7);
            pt->len = len;
            pt->crc = (uint32_t)crc32(0, out, (uInt)len);
            pt->wlen = len < IFS_WINDOW ? (uint32_t)len : IFS_WINDOW;
            memcpy(pt->window + IFS_WINDOW - pt->wlen, out + len - pt->wlen, pt->wlen);
            *found = 1;
            break;
        }
    }
    size_t n = zs.total_out;
    inflateEnd(&zs);
    free(out);
    return n;
}

/* The member taken up at a block boundary in its middle (where the host's
 * decoder pauses for the device): the rest, and the CRC-32 and length of
 * the whole member. */
static void test_begin_at(gpu *g)
{
    for (int round = 0; round < 6; round++) {
        member m;
        member_new(&m, 400000, 600000, 1 + round % 9, Z_DEFAULT_STRATEGY, round % 2 ? 0 : 65536);
        member_save(&m, m.glen);
        gzstream_point at;
        size_t third = (m.glen - m.off) / 3;
        int found;
        rig r;
        zlib_walk(m.gz, m.off, m.glen, third + (size_t)(rnd() % third), &at, &found);
        if (!found ||
            rig_open(&r, g, (100 << 10) + (size_t)(rnd() % (200 << 10))) < 0) {
            CHECKF(0, "round %d: no block boundary found, or no gzstream", round);
            member_free(&m);
            continue;
        }
        run_result rr;
        int rc = run_member(r.z, m.fd, m.off, m.glen, 100, &at, &rr, m.n + 1);
        CHECKF(rc == 0 && rr.pt->final && at.len + rr.len == m.n &&
                   !memcmp(rr.out, m.data + at.len, rr.len) && rr.pt->len == m.n &&
                   rr.pt->crc == (uint32_t)crc32(0, m.data, (uInt)m.n),
               "round %d: from bit %llu: rc %d, %zu + %zu of %zu bytes", round,
               (unsigned long long)at.bit, rc, (size_t)at.len, rr.len, m.n);
        free(rr.out);
        rig_close(&r);
        member_free(&m);
    }
}

/* A member cut short, or with bytes changed in its middle: the device
 * stops at a block boundary (no final block), every byte before it the
 * member's, its CRC-32 and length theirs, and the stop before the damage
 * (where the host reads on and says what is wrong). */
static void test_damage(gpu *g)
{
    for (int round = 0; round < 24; round++) {
        member m;
        member_new(&m, 300000, 700000, 1 + round % 9, Z_DEFAULT_STRATEGY, round % 3 ? 0 : 32768);
        size_t where = m.off + (m.glen - m.off) / 4 + (size_t)(rnd() % ((m.glen - m.off) / 2));
        size_t sound = zlib_walk(m.gz, m.off, where, 0, NULL, NULL); /* bytes before the damage */
        size_t flen = m.glen;
        const char *how;
        if (round % 2) {
            flen = where; /* cut short there */
            how = "cut";
        } else {
            for (int k = 0; k < 4; k++) /* a few bytes changed */
                m.gz[where + (size_t)k * 7] ^= (uint8_t)(1 + rnd() % 255);
            how = "changed";
        }
        member_save(&m, flen);
        rig r;
        CHECK(rig_open(&r, g, (100 << 10) + (size_t)(rnd() % (120 << 10))) == 0);
        run_result rr;
        int rc = run_member(r.z, m.fd, m.off, flen, 0, NULL, &rr, 2 * m.n + (64 << 20));
        /* its own account of what it gave, and the member's bytes before
           the damage (a change may leave valid data that decodes to other
           bytes, which the trailer's check then refuses) */
        size_t right = rc == 0 ? (rr.len < sound ? rr.len : sound) : 0;
        CHECKF(rc == 0 && rr.pt->len == rr.len &&
                   rr.pt->crc == (uint32_t)crc32(0, rr.out, (uInt)rr.len) &&
                   !memcmp(rr.out, m.data, right),
               "round %d (%s at byte %zu of %zu): rc %d, %zu bytes, the first %zu of them right",
               round, how, where, m.glen, rc, rc == 0 ? rr.len : 0, right);
        /* cut short: no final block, a stop before the cut, every byte right */
        if (round % 2)
            CHECKF(rc == 0 && !rr.pt->final && rr.pt->bit <= (uint64_t)flen * 8 &&
                       prefix_is_zlibs(m.data, m.n, rr.out, rr.len, rr.pt),
                   "round %d (cut at byte %zu of %zu): final %d, stop at bit %llu, %zu bytes",
                   round, where, m.glen, rc == 0 ? rr.pt->final : -1,
                   rc == 0 ? (unsigned long long)rr.pt->bit : 0ull, rr.len);
        free(rr.out);
        rig_close(&r);
        member_free(&m);
    }
}

/* Small members (no data, a few bytes, less than a batch), whole in one
 * batch, and a stream of no bytes at all, which stops at once where it
 * begins: the host then says what is missing. */
static void test_small(gpu *g)
{
    static const size_t sizes[] = {0, 1, 100, 5000, 70000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        member m;
        member_new(&m, sizes[i], 1, 6, Z_DEFAULT_STRATEGY, 0);
        member_save(&m, m.glen);
        rig r;
        CHECK(rig_open(&r, g, 1 << 20) == 0);
        run_result rr;
        int rc = run_member(r.z, m.fd, m.off, m.glen, 4096, NULL, &rr, m.n + 1);
        CHECKF(rc == 0 && rr.pt->final && rr.len == m.n &&
                   prefix_is_zlibs(m.data, m.n, rr.out, rr.len, rr.pt),
               "a member of %zu bytes: rc %d, %zu bytes", m.n, rc, rr.len);
        free(rr.out);
        rig_close(&r);
        member_free(&m);
    }
    rig r;
    CHECK(rig_open(&r, g, 1 << 20) == 0);
    int fd = member_file(NULL, 0);
    run_result rr;
    int rc = run_member(r.z, fd, 0, 0, 0, NULL, &rr, 1);
    CHECKF(rc == 0 && !rr.pt->final && rr.pt->bit == 0 && rr.len == 0 && rr.batches == 0,
           "no bytes: rc %d, final %d, bit %llu, %zu bytes", rc, rc == 0 ? rr.pt->final : -1,
           rc == 0 ? (unsigned long long)rr.pt->bit : 0ull, rr.len);
    free(rr.out);
    close(fd);
    rig_close(&r);
}

int main(void)
{
    char lib[4096];
    const char *build = getenv("BUILD");
    snprintf(lib, sizeof lib, "%s/tests/libfakecuda.so", build && *build ? build : "build");
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "test_gzstream: %s not found (make tests)\n", lib);
        return 1;
    }
    setenv("GPUBATCH_LIBCUDA", lib, 1);
    gpu *g = NULL;
    if (gpu_open(&g, 0) < 0) {
        fprintf(stderr, "test_gzstream: cannot open the stand-in driver's device\n");
        return 1;
    }
    for (via_pipe = 0; via_pipe < 2; via_pipe++) {
        RUN(test_members, g);
        RUN(test_begin_at, g);
        RUN(test_text, g);
        RUN(test_damage, g);
        RUN(test_small, g);
    }
    CHECKF(pipes_run > 0, "%d runs through a pipe", pipes_run);
    gpu_close(g);
    return check_summary();
}
