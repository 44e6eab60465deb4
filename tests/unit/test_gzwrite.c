/* test_gzwrite.c - blocked gzip output: format, determinism, round trips. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "io/gzip/gz_writer.h"
#include "io/reader.h"
#include "io/sink.h"
#include "ptx/deflate_math.h"
#include "check.h"
#define RND_SEED 0x243f6a8885a308d3ull
#include "rnd.h"

static char tmpdir[] = "/tmp/gb_gzw_XXXXXX";


/* Fills buf with data that compresses somewhat (a small alphabet with runs)
 * or, when random is set, with incompressible bytes. */
static void fill(uint8_t *buf, size_t n, int random)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        buf[i] = random ? (uint8_t)r : (uint8_t)("abcdeffff\0\0\x01"[r % 12]);
    }
}

/* Reads a whole file into a malloc'd buffer. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

/* Writes data[0..k), which starts at the writer's current position, as a
 * span: its whole blocks compressed here as the device does (df_bgzf_member
 * at the writer's level), the bytes around them raw. */
static int write_span(gz_writer *w, const uint8_t *data, size_t k, int level)
{
    static df_near nr;
    static df_far fr;
    size_t head, nblocks;
    gz_writer_block_split(gz_writer_offset(w), k, &head, &nblocks);
    uint8_t *members = malloc(nblocks * DF_MEMBER_BOUND(GZ_WRITER_BLOCK_DATA) + 1);
    size_t len = 0;
    for (size_t b = 0; b < nblocks; b++) {
        const uint8_t *p = data + head + b * GZ_WRITER_BLOCK_DATA;
        uint32_t crc = (uint32_t)crc32(0L, p, GZ_WRITER_BLOCK_DATA);
        len += df_bgzf_member(&nr, &fr, p, GZ_WRITER_BLOCK_DATA, level, crc, members + len);
    }
    size_t body = head + nblocks * GZ_WRITER_BLOCK_DATA;
    gz_writer_span sp = {data, head, members, len, nblocks, data + body, k - body};
    int rc = gz_writer_write_span(w, &sp);
    free(members);
    return rc;
}

/* Compresses data through a sink into a file and returns the file's bytes;
 * split 0 writes everything at once, otherwise pieces of pseudo-random
 * sizes up to split, and with spans set about half of them as spans. */
static uint8_t *compress_pieces(const uint8_t *data, size_t n, int level, int threads, size_t split,
                                int spans, size_t *out_len)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/out.gz", tmpdir);
    io_sink *s;
    gz_writer *w;
    io_status err;
    *out_len = 0;
    if (io_sink_open(&s, path, 1, NULL, 0, &err) < 0)
        return NULL;
    if (gz_writer_open(&w, s, level, threads) < 0) {
        io_sink_abort(s);
        return NULL;
    }
    size_t pos = 0;
    int rc = 0;
    while (pos < n && rc == 0) {
        size_t k = split ? 1 + (size_t)(rnd() % split) : n;
        if (k > n - pos)
            k = n - pos;
        rc = spans && rnd() % 2 ? write_span(w, data + pos, k, level)
                                : gz_writer_write(w, data + pos, k);
        pos += k;
    }
    if (rc < 0) {
        gz_writer_free(w);
        io_sink_abort(s);
        return NULL;
    }
    if (gz_writer_finish(w) < 0) {
        io_sink_abort(s);
        return NULL;
    }
    if (io_sink_commit(s) < 0)
        return NULL;
    return slurp(path, out_len);
}

/* compress_pieces with every piece raw. */
static uint8_t *write_gz(const uint8_t *data, size_t n, int level, int threads, size_t split,
                         size_t *out_len)
{
    return compress_pieces(data, n, level, threads, split, 0, out_len);
}

/* Decodes gzip bytes with the reader; returns the data or NULL on error. */
static uint8_t *decode(const uint8_t *gz, size_t len, size_t expect, size_t *out_len)
{
    io_reader *r;
    if (io_reader_open_mem(&r, gz, len, NULL) < 0)
        return NULL;
    uint8_t *buf = malloc(expect + 1);
    ssize_t k = io_reader_read(r, buf, expect + 1);
    int garbage = io_reader_trailing_garbage(r);
    io_reader_close(r);
    if (k < 0 || garbage) {
        free(buf);
        return NULL;
    }
    *out_len = (size_t)k;
    return buf;
}

/* Walks the members: each has the BGZF header and BSIZE, at most
 * GZ_WRITER_BLOCK_DATA bytes of data, and the stream ends with the EOF block. */
static int check_structure(const uint8_t *gz, size_t len, size_t data_len)
{
    static const uint8_t eof[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C',
                                    2,    0,    0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t head[16] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0};
    size_t pos = 0, total = 0, members = 0;
    while (pos < len) {
        if (len - pos < 28 || memcmp(gz + pos, head, 16))
            return 0;
        size_t bsize = (size_t)gz[pos + 16] | (size_t)gz[pos + 17] << 8;
        size_t mlen = bsize + 1;
        if (mlen > 65536 || pos + mlen > len)
            return 0;
        const uint8_t *t = gz + pos + mlen - 4;
        size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
        if (isize > GZ_WRITER_BLOCK_DATA)
            return 0;
        total += isize;
        members++;
        pos += mlen;
        if (isize == 0 && pos != len)
            return 0; /* only the last member is empty */
    }
    if (len < 28 || memcmp(gz + len - 28, eof, 28))
        return 0;
    size_t blocks = (data_len + GZ_WRITER_BLOCK_DATA - 1) / GZ_WRITER_BLOCK_DATA;
    return pos == len && total == data_len && members == blocks + 1;
}

/* Runs an external decompressor on gz and compares with data. */
static void check_external(const char *tool, const uint8_t *gz, size_t len, const uint8_t *data,
                           size_t n)
{
    char cmd[1024], in[256], out[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
    if (system(cmd) != 0) {
        fprintf(stderr, "note: %s not installed, check skipped\n", tool);
        return;
    }
    snprintf(in, sizeof(in), "%s/ext.gz", tmpdir);
    snprintf(out, sizeof(out), "%s/ext.out", tmpdir);
    FILE *f = fopen(in, "wb");
    fwrite(gz, 1, len, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s -dc < '%s' > '%s'", tool, in, out);
    CHECKF(system(cmd) == 0, "%s -dc failed", tool);
    size_t got_len;
    uint8_t *got = slurp(out, &got_len);
    CHECKF(got && got_len == n && !memcmp(got, data, n), "%s output differs", tool);
    free(got);
    unlink(in);
    unlink(out);
}

/* Round trips at the block-size edges; bytes identical across thread
 * counts and write splits. */
static void test_round_trips(void)
{
    static const size_t sizes[] = {0,
                                   1,
                                   GZ_WRITER_BLOCK_DATA - 1,
                                   GZ_WRITER_BLOCK_DATA,
                                   GZ_WRITER_BLOCK_DATA + 1,
                                   (1u << 20) + 3};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        uint8_t *data = malloc(n + 1);
        fill(data, n, si % 2);
        for (int level = 1; level <= 9; level += 4) {
            size_t ref_len;
            uint8_t *ref = write_gz(data, n, level, 1, 0, &ref_len);
            CHECKF(ref != NULL, "size %zu level %d", n, level);
            if (!ref)
                continue;
            CHECKF(check_structure(ref, ref_len, n), "structure, size %zu", n);
            size_t dl = 0;
            uint8_t *back = decode(ref, ref_len, n, &dl);
            CHECKF(back && dl == n && !memcmp(back, data, n), "round trip size %zu level %d", n,
                   level);
            free(back);
            static const int threads[] = {1, 2, 4, 7};
            static const size_t splits[] = {0, 1, 4097, 100000};
            for (size_t ti = 0; ti < 4; ti++) {
                for (size_t sp = 0; sp < 4; sp++) {
                    if (ti == 0 && sp == 0)
                        continue;
                    if (splits[sp] == 1 && n > 200000 && threads[ti] != 4)
                        continue;
                    size_t len;
                    uint8_t *gz = write_gz(data, n, level, threads[ti], splits[sp], &len);
                    CHECKF(gz && len == ref_len && !memcmp(gz, ref, len),
                           "size %zu level %d threads %d split %zu differs", n, level,
                           threads[ti], splits[sp]);
                    free(gz);
                }
            }
            if (level == 1) {
                check_external("gzip", ref, ref_len, data, n);
                check_external("pigz", ref, ref_len, data, n);
            }
            free(ref);
        }
        free(data);
    }
}

/* The empty stream is exactly the EOF block; level 0 passes bytes through. */
static void test_empty_and_level0(void)
{
    size_t len;
    uint8_t *gz = write_gz(NULL, 0, 6, 1, 0, &len);
    CHECK(gz && len == 28 && check_structure(gz, len, 0));
    free(gz);
    gz = write_gz(NULL, 0, 6, 3, 0, &len);
    CHECK(gz && len == 28);
    free(gz);
    uint8_t data[5000];
    fill(data, sizeof(data), 1);
    for (int t = 1; t <= 3; t += 2) {
        uint8_t *out = write_gz(data, sizeof(data), 0, t, 333, &len);
        CHECK(out && len == sizeof(data) && !memcmp(out, data, len));
        free(out);
        out = write_gz(NULL, 0, 0, t, 0, &len);
        CHECK(out && len == 0);
        free(out);
    }
    gz_writer *w;
    CHECK(gz_writer_open(&w, NULL, 10, 1) < 0 && w == NULL);
    CHECK(gz_writer_open(&w, NULL, 6, 0) < 0 && w == NULL);
    gz_writer_free(NULL);
}

/* A few whole-megabyte inputs with many threads stay identical, and
 * incompressible blocks still fit in 64 KiB members. */
static void test_many_threads(void)
{
    size_t n = 5u << 20;
    uint8_t *data = malloc(n);
    fill(data, n, 0);
    fill(data + n / 2, n / 4, 1);
    size_t l1, l16;
    uint8_t *a = write_gz(data, n, 6, 1, 0, &l1);
    uint8_t *b = write_gz(data, n, 6, 16, 65536 * 3 + 17, &l16);
    CHECK(a && b && l1 == l16 && !memcmp(a, b, l1));
    CHECK(a && check_structure(a, l1, n));
    free(a);
    free(b);
    free(data);
}

/* Sink errors come back from write or finish, for every thread count,
 * without leaks or hangs. */
static void test_sink_error(void)
{
    size_t n = 4u << 20;
    uint8_t *data = malloc(n);
    fill(data, n, 1);
    for (int t = 1; t <= 8; t *= 2) {
        io_sink *s;
        gz_writer *w;
        io_status err;
        CHECK(io_sink_open(&s, "/dev/full", 0, NULL, 0, &err) == 0);
        CHECK(gz_writer_open(&w, s, 1, t) == 0);
        int rc = 0;
        for (size_t pos = 0; pos < n && rc == 0; pos += 100000)
            rc = gz_writer_write(w, data + pos, n - pos < 100000 ? n - pos : 100000);
        CHECKF(rc == IO_ERR_WRITE, "threads %d: write gave %d", t, rc);
        CHECK(gz_writer_write(w, data, 10) == IO_ERR_WRITE); /* sticky */
        CHECK(gz_writer_finish(w) == IO_ERR_WRITE);
        CHECK(strstr(io_sink_error(s), "No space left") != NULL);
        io_sink_abort(s);
    }
    /* An error seen only at finish. */
    io_sink *s;
    gz_writer *w;
    CHECK(io_sink_open(&s, "/dev/full", 0, NULL, 0, NULL) == 0);
    CHECK(gz_writer_open(&w, s, 6, 4) == 0);
    CHECK(gz_writer_write(w, data, 1000) == 0);
    CHECK(gz_writer_finish(w) == 0); /* still in the sink's buffer */
    CHECK(io_sink_commit(s) == IO_ERR_WRITE);
    /* Freeing mid-stream with jobs in flight. */
    CHECK(io_sink_open(&s, "/dev/null", 0, NULL, 0, NULL) == 0);
    CHECK(gz_writer_open(&w, s, 9, 4) == 0);
    CHECK(gz_writer_write(w, data, n) == 0);
    gz_writer_free(w);
    io_sink_abort(s);
    free(data);
}

/* A part ends without the EOF block and is otherwise the stream
 * gz_writer_finish would write; parts joined in order, the last one
 * finished normally, decode to the joined data. */
static void test_parts(void)
{
    size_t n1 = GZ_WRITER_BLOCK_DATA + 5, n2 = 3000;
    uint8_t *data = malloc(n1 + n2);
    fill(data, n1 + n2, 0);
    size_t full_len, joined_len, out_len;
    uint8_t *full = write_gz(data, n1, 6, 2, 0, &full_len);
    char path[256];
    snprintf(path, sizeof(path), "%s/parts.gz", tmpdir);
    io_sink *s;
    gz_writer *w;
    CHECK(io_sink_open(&s, path, 1, NULL, 0, NULL) == 0);
    CHECK(gz_writer_open(&w, s, 6, 3) == 0);
    CHECK(gz_writer_write(w, data, n1) == 0);
    CHECK(gz_writer_finish_part(w) == 0);
    CHECK(gz_writer_open(&w, s, 6, 1) == 0);
    CHECK(gz_writer_write(w, data + n1, n2) == 0);
    CHECK(gz_writer_finish(w) == 0);
    CHECK(io_sink_commit(s) == 0);
    uint8_t *joined = slurp(path, &joined_len);
    CHECK(full && joined && joined_len > full_len - 28 && !memcmp(joined, full, full_len - 28) &&
          !memcmp(joined + joined_len - 28, full + full_len - 28, 28));
    uint8_t *back = decode(joined, joined_len, n1 + n2, &out_len);
    CHECK(back && out_len == n1 + n2 && !memcmp(back, data, n1 + n2));
    free(back);
    free(joined);
    free(full);
    free(data);
}

/* Raw writes and spans of precompressed whole blocks, mixed at random
 * split points (pieces shorter and longer than a block, so spans with and
 * without blocks, heads and tails), give the bytes of all-raw writes. */
static void test_spans(void)
{
    size_t n = 9 * GZ_WRITER_BLOCK_DATA + 12345;
    uint8_t *data = malloc(n);
    fill(data, n, 0);
    fill(data + 3 * GZ_WRITER_BLOCK_DATA, GZ_WRITER_BLOCK_DATA + 7, 1);
    static const size_t splits[] = {1000, 70000, 3 * GZ_WRITER_BLOCK_DATA + 1, 1};
    static const int levels[] = {1, 6};
    static const int threads[] = {1, 4};
    for (int li = 0; li < 2; li++) {
        size_t ref_len;
        uint8_t *ref = write_gz(data, n, levels[li], 1, 0, &ref_len);
        for (int ti = 0; ti < 2; ti++) {
            for (int sp = 0; sp < 4; sp++) {
                size_t len, m = sp == 3 ? 3 * GZ_WRITER_BLOCK_DATA : n; /* 1: byte by byte */
                size_t want_len = ref_len;
                uint8_t *want = m == n ? ref : write_gz(data, m, levels[li], 1, 0, &want_len);
                uint8_t *gz = compress_pieces(data, m, levels[li], threads[ti], splits[sp], 1, &len);
                CHECKF(gz && len == want_len && !memcmp(gz, want, len),
                       "spans at level %d, %d threads, pieces up to %zu bytes differ from raw writes",
                       levels[li], threads[ti], splits[sp]);
                if (want != ref)
                    free(want);
                free(gz);
            }
        }
        free(ref);
    }
    /* A span whose blocks do not start at a block boundary is refused. */
    char path[256];
    snprintf(path, sizeof(path), "%s/bad.gz", tmpdir);
    io_sink *s;
    gz_writer *w;
    io_status err;
    CHECK(io_sink_open(&s, path, 1, NULL, 0, &err) == 0);
    CHECK(gz_writer_open(&w, s, 1, 2) == 0);
    CHECK(gz_writer_write(w, data, 10) == 0);
    gz_writer_span bad = {NULL, 0, data, 100, 1, NULL, 0};
    CHECK(gz_writer_write_span(w, &bad) == IO_ERR_FORMAT);
    CHECK(gz_writer_offset(w) == 10);
    gz_writer_free(w);
    io_sink_abort(s);
    free(data);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_empty_and_level0);
    RUN(test_round_trips);
    RUN(test_many_threads);
    RUN(test_sink_error);
    RUN(test_parts);
    RUN(test_spans);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
