/* test_pipeline_gz.c - chunks of whole BGZF members (pl_open_gz): inflated
 * on the host with the device's decoder (ptx/inflate_math.h), each chunk's
 * data must equal what pl_open hands out for the same input, options and
 * position, and the stream must end with the same error or warning. Inputs:
 * blocks of many sizes, a header already read (the .npy case), limits,
 * chunk sizes from a few blocks to the whole input, and tails that are not
 * BGZF (a plain gzip member, garbage, a cut block, a bad block). And the
 * ring's rule for a consumer with all slots but one out (pl_full), and a
 * member's error read beside the reader that owns the descriptor. */
#include "check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"
#include "tests/pipeline_gz_run.h"

static char tmpdir[] = "/tmp/gb_plgz_XXXXXX";

/* Appends one BGZF block holding data[0..n) compressed at level, the last
 * `cut` bytes of its deflate data left out (its BSIZE agrees). */
static void put_bgzf_block_cut(bytes *b, const unsigned char *data, size_t n, int level,
                               size_t cut)
{
    unsigned char out[70000];
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = sizeof out;
    deflate(&z, Z_FINISH);
    size_t clen = z.total_out - cut;
    deflateEnd(&z);
    size_t total = clen + 26;
    unsigned char h[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0,
                           (unsigned char)((total - 1) & 0xff), (unsigned char)((total - 1) >> 8)};
    put(b, h, sizeof h);
    put(b, out, clen);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n), isz = (uint32_t)n;
    unsigned char t[8];
    for (int k = 0; k < 4; k++) {
        t[k] = (unsigned char)(crc >> (8 * k));
        t[4 + k] = (unsigned char)(isz >> (8 * k));
    }
    put(b, t, 8);
}

/* Appends one BGZF block holding data[0..n) compressed at level. */
static void put_bgzf_block(bytes *b, const unsigned char *data, size_t n, int level)
{
    put_bgzf_block_cut(b, data, n, level, 0);
}

/* Appends data as BGZF blocks of sizes drawn from sizes[] in turn. */
static void put_bgzf(bytes *b, const unsigned char *data, size_t n, const size_t *sizes,
                     int nsizes, int level)
{
    for (size_t off = 0, k = 0; off < n || k == 0; k++) {
        size_t len = sizes[k % (size_t)nsizes];
        if (len > n - off)
            len = n - off;
        put_bgzf_block(b, data + off, len, level);
        off += len;
        if (off == n)
            break;
    }
}

/* Writes b to a file in tmpdir; returns its path (static storage). */
static const char *write_file(const bytes *b)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/in.gz", tmpdir);
    FILE *f = fopen(path, "wb");
    fwrite(b->p, 1, b->n, f);
    fclose(f);
    return path;
}

/* The gz pipeline and the plain one agree on path under these options. */
static void same(const char *what, const char *path, size_t skip, size_t prefix_len,
                 size_t chunk, uint64_t limit, int expect_members)
{
    outcome a, b;
    run(path, 1, skip, prefix_len, chunk, limit, &a);
    run(path, 0, skip, prefix_len, chunk, limit, &b);
    CHECKF(a.data.n == b.data.n && (!a.data.n || !memcmp(a.data.p, b.data.p, a.data.n)),
           "%s: data differ (%zu vs %zu bytes)", what, a.data.n, b.data.n);
    CHECKF(a.rc == b.rc && !strcmp(a.msg, b.msg), "%s: status %d '%s' vs %d '%s'", what, a.rc,
           a.msg, b.rc, b.msg);
    CHECKF(a.garbage == b.garbage, "%s: trailing garbage %d vs %d", what, a.garbage, b.garbage);
    CHECKF(!a.broken && !b.broken, "%s: a chunk broke the pipeline's rules", what);
    if (expect_members && b.rc == 0) /* a chunk that ends in an error is not handed out */
        CHECKF(a.chunks_gz > 0, "%s (skip %zu, limit %lld): no chunk held members", what, skip,
               (long long)limit);
    free(a.data.p);
    free(b.data.p);
}

/* Test data: float-like bytes that compress a little, with runs. */
static unsigned char *make_data(size_t n, unsigned seed)
{
    unsigned char *d = malloc(n + 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (i / 4096) % 5 == 0 ? (unsigned char)(i % 7) : (unsigned char)(x >> 24);
    }
    return d;
}

/* Whole files of BGZF blocks of various sizes through many chunkings. */
static void test_bgzf_chunkings(void)
{
    const size_t n = 1200000;
    unsigned char *d = make_data(n, 1);
    const size_t sizes_std[] = {65280};
    const size_t sizes_odd[] = {65536, 1, 40000, 7, 65535, 12345, 0, 30000};
    const size_t *sets[] = {sizes_std, sizes_odd};
    const int nsets[] = {1, 8};
    for (int s = 0; s < 2; s++) {
        bytes b = {0};
        put_bgzf(&b, d, n, sets[s], nsets[s], 1);
        put(&b, gz_eof_block, GZ_WRITER_EOF_LEN);
        const char *path = write_file(&b);
        const size_t chunks[] = {128 << 10, 256 << 10, 384 << 10, 1 << 20, 2 << 20};
        for (int c = 0; c < 5; c++) {
            char what[128];
            snprintf(what, sizeof what, "set %d chunk %zu", s, chunks[c]);
            same(what, path, 0, 0, chunks[c], UINT64_MAX, 1);
            same(what, path, 0, 0, chunks[c], n, 1);
            same(what, path, 128, 0, chunks[c], n - 128, 1);
            same(what, path, 128, 100, chunks[c], n - 28, 1);
            same(what, path, 3000, 10, chunks[c], UINT64_MAX, 1);
            same(what, path, 0, 0, chunks[c], n - 1, 1);  /* more data than expected */
            same(what, path, 0, 0, chunks[c], n + 1, 1);  /* less */
            same(what, path, 70000, 0, chunks[c], 200000, 1); /* a limit inside */
        }
        free(b.p);
    }
    free(d);
}

/* Inputs whose tail is not whole BGZF blocks, or whose blocks are bad. */
static void test_bgzf_tails(void)
{
    const size_t n = 500000;
    unsigned char *d = make_data(n, 2);
    const size_t sizes[] = {65280};
    for (int kind = 0; kind < 8; kind++) {
        bytes b = {0};
        put_bgzf(&b, d, 300000, sizes, 1, 1);
        switch (kind) {
        case 0: { /* a plain gzip member after the blocks */
            unsigned char out[600000];
            z_stream z;
            memset(&z, 0, sizeof z);
            deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
            z.next_in = d + 300000;
            z.avail_in = (uInt)(n - 300000);
            z.next_out = out;
            z.avail_out = sizeof out;
            deflate(&z, Z_FINISH);
            put(&b, out, z.total_out);
            deflateEnd(&z);
            break;
        }
        case 1: /* trailing garbage */
            put(&b, "garbage!", 8);
            break;
        case 2: /* zero padding */
            put(&b, "\0\0\0\0", 4);
            break;
        case 3: /* a cut block */
            put_bgzf(&b, d + 300000, 60000, sizes, 1, 1);
            b.n -= 100;
            break;
        case 4: /* a block with a bad CRC */
            put_bgzf(&b, d + 300000, 60000, sizes, 1, 1);
            b.p[b.n - 8] ^= 1;
            break;
        case 5: /* a block whose deflate data is damaged */
            put_bgzf(&b, d + 300000, 60000, sizes, 1, 1);
            b.p[b.n - 2000] ^= 0x55;
            break;
        case 7: /* a block whose deflate data is cut short, more blocks after it */
            put_bgzf_block_cut(&b, d + 300000, 60000, 1, 3);
            put_bgzf(&b, d + 360000, 100000, sizes, 1, 1);
            break;
        default: /* the EOF block, then more blocks */
            put(&b, gz_eof_block, GZ_WRITER_EOF_LEN);
            put_bgzf(&b, d + 300000, 200000, sizes, 1, 1);
            break;
        }
        const char *path = write_file(&b);
        for (int c = 0; c < 2; c++) {
            size_t chunk = c ? (2 << 20) : (128 << 10);
            char what[64];
            snprintf(what, sizeof what, "tail %d chunk %zu", kind, chunk);
            outcome a, p;
            run(path, 1, 0, 0, chunk, UINT64_MAX, &a);
            run(path, 0, 0, 0, chunk, UINT64_MAX, &p);
            /* a bad member is reported with the host's message; the data
             * before its chunk is the same */
            int bad = kind == 4 || kind == 5 || kind == 7;
            size_t upto = bad ? a.data.n : p.data.n;
            CHECKF(a.data.n == upto && p.data.n >= upto &&
                       (!upto || !memcmp(a.data.p, p.data.p, upto)),
                   "%s: data differ (%zu vs %zu)", what, a.data.n, p.data.n);
            CHECKF((a.rc != 0) == (p.rc != 0) && !strcmp(a.msg, p.msg), "%s: '%s' vs '%s'", what,
                   a.msg, p.msg);
            if (bad)
                CHECKF(strstr(a.msg, "gzip member at byte ") != NULL, "%s: '%s'", what, a.msg);
            else
                CHECKF(a.garbage == p.garbage, "%s: garbage", what);
            free(a.data.p);
            free(p.data.p);
        }
        free(b.p);
    }
    free(d);
}

#define ISIZE_DATA ((size_t)600000) /* data bytes of isize_file's file */
#define ISIZE_AT ((size_t)200000)   /* the data byte where its second run of blocks starts */

/* BGZF blocks of 65280 bytes holding d[0..ISIZE_DATA), a run of them ending
 * at data byte ISIZE_AT, and the EOF block; *at gets the file offset of the
 * first block after that run, *isize that of the last byte of its ISIZE. */
static void isize_file(bytes *b, const unsigned char *d, size_t *at, size_t *isize)
{
    const size_t sizes[] = {65280};
    put_bgzf(b, d, ISIZE_AT, sizes, 1, 1);
    *at = b->n;
    put_bgzf(b, d + ISIZE_AT, ISIZE_DATA - ISIZE_AT, sizes, 1, 1);
    put(b, gz_eof_block, GZ_WRITER_EOF_LEN);
    *isize = *at + (size_t)(b->p[*at + 16] | b->p[*at + 17] << 8) + 1 - 4;
}

/* A wrong ISIZE moves every later member: with the data's size known, the
 * end of the data is then wrong too, but the bad member is what both
 * pipelines report, whatever the chunk size. */
static void test_bad_isize(void)
{
    const size_t n = ISIZE_DATA;
    unsigned char *d = make_data(n, 4);
    bytes b = {0};
    size_t at, isize;
    isize_file(&b, d, &at, &isize);
    for (int delta = -1; delta <= 1; delta += 2) {
        b.p[isize] = (unsigned char)(b.p[isize] + delta);
        const char *path = write_file(&b);
        for (int c = 0; c < 2; c++) {
            outcome a, p;
            size_t chunk = c ? (2 << 20) : (128 << 10);
            run(path, 1, 0, 0, chunk, n, &a);
            run(path, 0, 0, 0, chunk, n, &p);
            CHECKF(a.rc != 0 && p.rc != 0 && !strcmp(a.msg, p.msg),
                   "isize %+d chunk %zu: '%s' vs '%s'", delta, chunk, a.msg, p.msg);
            CHECKF(strstr(p.msg, "gzip member at byte") != NULL, "isize: '%s'", p.msg);
            free(a.data.p);
            free(p.data.p);
        }
        b.p[isize] = (unsigned char)(b.p[isize] - delta);
    }
    free(b.p);
    free(d);
}

/* io_gzip_member_error reads the file beside the reader that owns the
 * descriptor (the device stage reports a bad member while the ring's reader
 * thread reads on): it must not move the descriptor's offset, and that
 * reader, resumed at a member boundary as pl_open_gz resumes it, must go on
 * reading its own bytes, however the offset moved meanwhile. */
static void test_member_error_beside_reader(void)
{
    unsigned char *d = make_data(ISIZE_DATA, 4);
    bytes b = {0};
    size_t at, isize;
    isize_file(&b, d, &at, &isize);
    b.p[isize]++;
    const char *path = write_file(&b);
    char want[64];
    snprintf(want, sizeof want, "gzip member at byte %zu", at);

    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && lseek(fd, 77, SEEK_SET) == 77);
    io_status st;
    int rc = io_gzip_member_error(fd, at, UINT64_MAX, &st);
    CHECKF(rc < 0 && strstr(st.text, want), "member error %d '%s'", rc, st.text);
    CHECKF(lseek(fd, 0, SEEK_CUR) == 77, "the offset moved to %lld",
           (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);

    io_reader *r;
    CHECK(io_reader_open(&r, path, &st) == 0);
    uint64_t next;
    CHECK(io_reader_member_boundary(r, &fd, &next) && next == 0);
    /* on at the second block, as if the first had been read from the file */
    CHECK(io_reader_resume(r, (uint64_t)(b.p[16] | b.p[17] << 8) + 1, 65280) == 0);
    lseek(fd, 0, SEEK_SET); /* as another reader of fd leaves it */
    rc = io_gzip_member_error(fd, at, UINT64_MAX, &st);
    CHECKF(rc < 0 && strstr(st.text, want), "member error beside a reader %d '%s'", rc, st.text);
    unsigned char got[1000];
    ssize_t k = io_reader_read(r, got, sizeof got);
    CHECKF(k == 1000 && !memcmp(got, d + 65280, sizeof got), "the reader read %zd bytes: %s", k,
           k == 1000 ? "not its own" : io_reader_error(r));
    io_reader_close(r);
    free(b.p);
    free(d);
}

/* Plain (not gzip) input: pl_open_gz hands out what pl_open does. */
static void test_plain_input(void)
{
    bytes b = {0};
    unsigned char *d = make_data(300000, 3);
    put(&b, d, 300000);
    const char *path = write_file(&b);
    same("plain", path, 0, 0, 128 << 10, UINT64_MAX, 0);
    same("plain header", path, 200, 50, 128 << 10, 299850, 0);
    free(b.p);
    free(d);
}

/* pl_full: with nslots - 1 chunks out, a chunk the reader has already read
 * is taken (pl_full turns 0 once the reader has it), with every slot out
 * the consumer gives one back first, and the chunks still come whole and
 * in order. */
static void test_full_takes_read_chunk(void)
{
    enum { CHUNK = 4096, SLOTS = 4, N = 10 };
    unsigned char *d = make_data(N * CHUNK, 5);
    io_reader *r;
    io_status err;
    if (io_reader_open_mem(&r, d, N * CHUNK, &err) < 0) {
        CHECKF(0, "io_reader_open_mem: %s", err.text);
        free(d);
        return;
    }
    void *bufs[SLOTS];
    for (int i = 0; i < SLOTS; i++)
        bufs[i] = malloc(CHUNK);
    pl_ring *pl;
    CHECK(pl_open(&pl, r, bufs, SLOTS, SLOTS, CHUNK, NULL, 0, UINT64_MAX, 0) == 0);
    pl_chunk c;
    size_t next = 0;
    int rc, full = 1;
    for (int i = 0; i < SLOTS - 1; i++, next++)
        CHECK(pl_next(pl, &c) == 1 && c.offset == next * CHUNK);
    for (int t = 0; t < 5000 && (full = pl_full(pl)); t++)
        usleep(1000); /* the reader fills the one free slot */
    CHECKF(!full, "pl_full stays 1 with the next chunk read");
    do {
        rc = pl_next(pl, &c);
        if (rc > 0) {
            CHECKF(c.offset == next * CHUNK && c.bytes == CHUNK &&
                       !memcmp(c.data, d + next * CHUNK, CHUNK),
                   "chunk %zu: offset %llu, %zu bytes", next, (unsigned long long)c.offset,
                   c.bytes);
            next++;
        }
        if (pl_outstanding(pl) == SLOTS)
            CHECKF(pl_full(pl), "every slot out, pl_full 0");
        while (pl_outstanding(pl) > 0 && (pl_full(pl) || rc <= 0))
            pl_release(pl, pl_oldest(pl));
    } while (rc > 0);
    CHECKF(rc == 0 && next == N, "the ring ended with %d after %zu chunks", rc, next);
    pl_close(pl);
    io_reader_close(r);
    for (int i = 0; i < SLOTS; i++)
        free(bufs[i]);
    free(d);
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    RUN(test_bgzf_chunkings);
    RUN(test_bgzf_tails);
    RUN(test_bad_isize);
    RUN(test_member_error_beside_reader);
    RUN(test_plain_input);
    RUN(test_full_takes_read_chunk);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
