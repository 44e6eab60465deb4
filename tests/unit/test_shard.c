/* test_shard.c - the pieces behind --shard: rd_tree over shards merged in
 * order gives the bits of one tree over every leaf, a shard's stack is its
 * maximal aligned subtrees, and the reader reads any decoded byte range of
 * an uncompressed or blocked-gzip file. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "io/gzip/gz_writer.h"
#include "io/reader.h"
#include "io/sink.h"
#include "runtime/reduce.h"

static char tmpdir[] = "/tmp/gb_shard_XXXXXX";
static uint64_t rng = 0x243f6a8885a308d3ull;

/* xorshift64*: a fixed sequence, so failures reproduce. */
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* A double from a hard mix: wide exponents, cancelling pairs, zeros of both
 * signs, subnormals, and (when special) NaN and infinities. */
static double leaf(int special)
{
    uint64_t r = rnd();
    double v;
    switch (r % 16) {
    case 0: return special ? NAN : 0.0;
    case 1: return special ? (r & 64 ? INFINITY : -INFINITY) : -0.0;
    case 2: return -0.0;
    case 3: return ldexp((double)(r >> 40), -1074); /* subnormal */
    case 4: return ldexp(1.0, (int)(r >> 54) % 2000 - 1000) * (r & 32 ? -1 : 1);
    default:
        v = (double)(int64_t)(rnd() >> 11) / (double)(1ull << 40);
        return ldexp(v, (int)((r >> 8) % 120) - 60);
    }
}

/* Bits of a double, so NaN payloads and zero signs compare too. */
static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* Every subtree on a shard's stack lies in [t0, t1), is aligned, and its
 * parent does not fit in the range (maximal); together they cover it. */
static int stack_is_maximal(const rd_tree *t, uint64_t t0, uint64_t t1)
{
    uint64_t end = t->next;
    if (t->depth == 0)
        return t0 == t1 && end == t1;
    for (int i = t->depth - 1; i >= 0; i--) {
        uint64_t size = (uint64_t)1 << t->level[i], start = end - size;
        uint64_t pstart = start & ~(2 * size - 1);
        if (start % size || start < t0 || (pstart >= t0 && pstart + 2 * size <= t1))
            return 0;
        end = start;
    }
    return end == t0 && t->next == t1;
}

/* Trees of many sizes cut into random shards (empty ones too), merged in
 * order through rd_state_merge, equal one tree over every leaf. */
static void test_tree_shards(void)
{
    static const uint64_t fixed[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000};
    for (int round = 0; round < 3000; round++) {
        uint64_t n = round < 16 ? fixed[round] : rnd() % 700;
        int special = round % 3 == 0;
        double *v = malloc((n + 1) * sizeof *v);
        rd_tree one;
        rd_tree_init(&one);
        for (uint64_t i = 0; i < n; i++) {
            v[i] = leaf(special);
            rd_tree_push(&one, v[i]);
        }
        int shards = 1 + (int)(rnd() % 12);
        uint64_t cut[14];
        cut[0] = 0;
        cut[shards] = n;
        for (int s = 1; s < shards; s++)
            cut[s] = n ? rnd() % (n + 1) : 0;
        for (int a = 1; a < shards; a++) /* sort the inner cuts */
            for (int b = a + 1; b < shards; b++)
                if (cut[b] < cut[a]) {
                    uint64_t x = cut[a];
                    cut[a] = cut[b];
                    cut[b] = x;
                }
        rd_state all, part;
        rd_state_init(&all, DT_F64, RD_OP_SUM, 0);
        int maximal = 1;
        for (int s = 0; s < shards; s++) {
            rd_state_init(&part, DT_F64, RD_OP_SUM, 0);
            rd_state_start_at(&part, cut[s]);
            for (uint64_t i = cut[s]; i < cut[s + 1]; i++)
                rd_tree_push(&part.sum_tree, v[i]);
            maximal &= stack_is_maximal(&part.sum_tree, cut[s], cut[s + 1]);
            rd_state_merge(&all, &part);
        }
        CHECKF(maximal, "n=%llu shards=%d: a shard's stack is not maximal", (unsigned long long)n,
               shards);
        CHECKF(bits(rd_tree_finish(&all.sum_tree)) == bits(rd_tree_finish(&one)),
               "n=%llu shards=%d: merged %a, one tree %a", (unsigned long long)n, shards,
               rd_tree_finish(&all.sum_tree), rd_tree_finish(&one));
        CHECK(all.sum_tree.depth == one.depth && all.sum_tree.next == n);
        free(v);
    }
}

/* Writes n bytes to a file in tmpdir, compressed as BGZF when level > 0. */
static const char *put(const char *name, const uint8_t *data, size_t n, int level)
{
    static char path[256];
    io_status err;
    io_sink *s;
    gz_writer *w;
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (io_sink_open(&s, path, 1, NULL, 0, &err) < 0 || gz_writer_open(&w, s, level, 2) < 0 ||
        gz_writer_write(w, data, n) < 0 || gz_writer_finish(w) < 0 || io_sink_commit(s) < 0)
        fprintf(stderr, "cannot write %s\n", path);
    return path;
}

/* Reads what the reader gives after io_reader_seek into out. */
static ssize_t read_rest(io_reader *r, uint8_t *out, size_t cap)
{
    size_t got = 0;
    for (;;) {
        ssize_t k = io_reader_read(r, out + got, cap - got < 7777 ? cap - got : 7777);
        if (k <= 0)
            return k < 0 ? k : (ssize_t)got;
        got += (size_t)k;
    }
}

/* Any offset and length of plain and blocked-gzip files reads the same
 * bytes as the data; the decoded size is known without inflating. */
static void test_seek(void)
{
    size_t n = 5 * GZ_WRITER_BLOCK_DATA + 1234;
    uint8_t *data = malloc(n), *out = malloc(n + 16);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(rnd() % 7 ? i * 31 : rnd());
    for (int level = 0; level <= 6; level += 6) {
        const char *path = put(level ? "d.gz" : "d.raw", data, n, level);
        uint64_t offs[] = {0,
                           1,
                           GZ_WRITER_BLOCK_DATA - 1,
                           GZ_WRITER_BLOCK_DATA,
                           GZ_WRITER_BLOCK_DATA + 1,
                           3 * GZ_WRITER_BLOCK_DATA + 17,
                           n - 1,
                           n,
                           n + 5};
        for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
            for (int lim = 0; lim < 3; lim++) {
                uint64_t len = lim == 0 ? UINT64_MAX : lim == 1 ? 0 : GZ_WRITER_BLOCK_DATA + 3;
                io_reader *r;
                uint64_t size = 0;
                io_status err;
                CHECK(io_reader_open(&r, path, &err) == 0);
                CHECK(io_reader_data_size(r, &size) == 0 && size == n);
                CHECK(io_reader_seek(r, offs[i], len) == 0);
                ssize_t got = read_rest(r, out, n + 16);
                uint64_t from = offs[i] < n ? offs[i] : n;
                uint64_t want = n - from < len ? n - from : len;
                CHECKF(got == (ssize_t)want && !memcmp(out, data + from, want),
                       "level %d offset %llu length %llu: got %zd bytes", level,
                       (unsigned long long)offs[i], (unsigned long long)len, got);
                CHECK(io_reader_tell(r) == from + (uint64_t)(got > 0 ? got : 0) ||
                      offs[i] > n);
                io_reader_close(r);
            }
        }
    }
    free(out);
    free(data);
}

/* Inputs that cannot be positioned say so: gzip that is not blocked, a
 * truncated BGZF file, memory (as stdin would be). */
static void test_seek_errors(void)
{
    uint8_t data[1000], comp[2000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = data;
    zs.avail_in = sizeof data;
    zs.next_out = comp;
    zs.avail_out = sizeof comp;
    deflate(&zs, Z_FINISH);
    size_t clen = sizeof comp - zs.avail_out;
    deflateEnd(&zs);
    char path[256];
    io_status err;
    snprintf(path, sizeof path, "%s/single.gz", tmpdir);
    FILE *f = fopen(path, "wb");
    fwrite(comp, 1, clen, f);
    fclose(f);
    io_reader *r;
    uint64_t size;
    CHECK(io_reader_open(&r, path, &err) == 0);
    CHECK(io_reader_seek(r, 10, 5) == IO_ERR_SEEK);
    CHECK(strstr(io_reader_error(r), "not blocked") != NULL);
    io_reader_close(r);

    const char *bg = put("cut.gz", data, sizeof data, 1);
    CHECK(truncate(bg, 20) == 0);
    CHECK(io_reader_open(&r, bg, &err) == 0);
    CHECK(io_reader_data_size(r, &size) == IO_ERR_TRUNCATED);
    io_reader_close(r);

    CHECK(io_reader_open_mem(&r, data, sizeof data, &err) == 0);
    CHECK(io_reader_seek(r, 0, 1) == IO_ERR_SEEK);
    CHECK(strstr(io_reader_error(r), "regular file") != NULL);
    io_reader_close(r);
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    RUN(test_tree_shards);
    RUN(test_seek);
    RUN(test_seek_errors);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        return 1;
    return check_summary();
}
