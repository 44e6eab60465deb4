/* test_gzindex.c - seek indexes (io/gzip/gzindex.c) against the data zlib
 * deflated: indexes built over gzip members of every zlib level and
 * strategy and three kinds of data, read whole and from random seek points
 * (io_reader_seek) against the original bytes; the gztool fields written
 * as the format says; the same points whatever chunks the decoder cuts;
 * the usual spacing under 1% of the file; stale
 * indexes (another file, a cut, changed or longer file) refused on
 * attaching; damaged indexes (bit flips, truncations, a window changed)
 * refused or read right, never wrong bytes; an index without the check
 * record read whole and checked by the member's CRC-32, its parts refused. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "io/gzip/gzindex.h"
#include "io/gzip/inflate.h"
#include "io/reader.h"
#include "tests/gzindex_fixture.h"
#include "check.h"
#define RND_SEED 0x6a09e667f3bcc909ull
#include "rnd.h"

#define DATA_LEN ((size_t)600 << 10)

/* One gzip file under test: its data, its bytes' file and its index. */
typedef struct {
    uint8_t *data;
    size_t n;
    char path[64];
    uint8_t *idx;
    size_t idx_len;
    size_t gzlen;
} fixture;

/* Makes a fixture of kind, level and strategy with points every
 * chunk_bytes of input. 0 or -1. */
static int fixture_make(fixture *f, int kind, int level, int strategy, uint64_t chunk_bytes)
{
    uint8_t *gz;
    memset(f, 0, sizeof *f);
    f->n = DATA_LEN;
    f->data = malloc(f->n);
    fixture_data(f->data, f->n, kind, (uint64_t)(kind * 31 + level * 7 + strategy));
    if (fixture_gzip(f->data, f->n, level, strategy, &gz, &f->gzlen) < 0)
        return -1;
    int rc = fixture_file(gz, f->gzlen, f->path);
    free(gz);
    if (rc < 0 || fixture_index(f->path, chunk_bytes, &f->idx, &f->idx_len) < 0)
        return -1;
    return 0;
}

/* Frees a fixture and removes its file. */
static void fixture_drop(fixture *f)
{
    unlink(f->path);
    free(f->data);
    free(f->idx);
}

/* The number of points in an index's bytes (its count field). */
static uint64_t points_of(const uint8_t *idx)
{
    uint64_t n = 0;
    for (int i = 16; i < 24; i++)
        n = n << 8 | idx[i];
    return n;
}

/* Reads [from, from + count) of f through idx and says whether it is f's
 * data (1), refused (0), or wrong bytes (-1). */
static int read_verdict(const fixture *f, const uint8_t *idx, size_t len, uint64_t from,
                        uint64_t count, uint8_t *out)
{
    size_t got;
    uint64_t want = count == UINT64_MAX ? f->n - from : count;
    int rc = fixture_read(f->path, idx, len, from, count, out, f->n + 1, &got);
    if (rc < 0)
        return 0;
    return got == want && !memcmp(out, f->data + from, got) ? 1 : -1;
}

/* Every level and strategy, every kind: the whole read and random parts
 * through an index with many points give zlib's input bytes. */
static void test_round_trips(void)
{
    static const int levels[] = {0, 1, 6, 9};
    static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE};
    uint8_t *out = malloc(DATA_LEN + 1);
    for (int kind = 0; kind < 3; kind++)
        for (size_t l = 0; l < 4; l++)
            for (size_t s = 0; s < 4; s++) {
                fixture f;
                if (levels[l] == 0 && s)
                    continue;
                CHECK(fixture_make(&f, kind, levels[l], strategies[s], 8192) == 0);
                CHECKF(points_of(f.idx) > 3, "kind %d level %d strategy %zu: %llu points", kind,
                       levels[l], s, (unsigned long long)points_of(f.idx));
                CHECKF(read_verdict(&f, f.idx, f.idx_len, 0, UINT64_MAX, out) == 1,
                       "kind %d level %d strategy %zu: whole read", kind, levels[l], s);
                for (int i = 0; i < 12; i++) {
                    uint64_t from = rnd() % f.n, count = rnd() % (f.n - from + 1);
                    if (i == 0)
                        count = f.n - from;
                    CHECKF(read_verdict(&f, f.idx, f.idx_len, from, count, out) == 1,
                           "kind %d level %d strategy %zu: [%llu, +%llu)", kind, levels[l], s,
                           (unsigned long long)from, (unsigned long long)count);
                }
                fixture_drop(&f);
            }
    free(out);
}

/* The gztool fields as the format says: zeros and magic, the count twice,
 * point 0 at the first deflate byte with no window, every other point's
 * window inflating to 32 KiB; and the usual spacing keeps the index under
 * 1% of a file of float-like data. */
static void test_format(void)
{
    fixture f;
    CHECK(fixture_make(&f, 0, 6, Z_DEFAULT_STRATEGY, 8192) == 0);
    static const uint8_t magic[16] = {0, 0, 0, 0, 0, 0, 0, 0, 'g', 'z', 'i', 'p', 'i', 'n', 'd', 'x'};
    CHECK(!memcmp(f.idx, magic, 16));
    CHECK(!memcmp(f.idx + 16, f.idx + 24, 8));
    gzindex *x;
    io_status st;
    CHECK(gzindex_parse(&x, "f", f.idx, f.idx_len, &st) == 0);
    CHECK(x->checked && x->pt[0].out == 0 && x->pt[0].bit == 10 * 8 && x->pt[0].zlen == 0);
    CHECK(x->usize == f.n && x->file_len == f.gzlen);
    uint8_t win[INFLATE_WINDOW];
    size_t wlen = 0;
    for (size_t i = 1; i < x->n; i++)
        CHECK(gzindex_window(x, i, win, &wlen, &st) == 0 &&
              wlen == (x->pt[i].out < INFLATE_WINDOW ? x->pt[i].out : INFLATE_WINDOW) &&
              !memcmp(win, f.data + x->pt[i].out - wlen, wlen));
    gzindex_free(x);
    fixture_drop(&f);

    /* 24 MiB of float-like data with the usual spacing */
    size_t n = (size_t)24 << 20;
    uint8_t *data = malloc(n), *gz, *idx;
    size_t gzlen, idx_len, points;
    char path[64];
    fixture_data(data, n, 0, 99);
    CHECK(fixture_gzip(data, n, 6, Z_DEFAULT_STRATEGY, &gz, &gzlen) == 0);
    CHECK(fixture_file(gz, gzlen, path) == 0);
    FILE *fp = fopen(path, "rb");
    CHECK(gzindex_build(fileno(fp), gzlen, NULL, io_gzip_member_error, &idx, &idx_len, &points,
                        &st) == 0);
    fclose(fp);
    CHECKF(points >= 4 && idx_len * 100 <= gzlen, "%zu points, %zu bytes of %zu", points, idx_len,
           gzlen);
    free(idx);
    free(gz);
    free(data);
    unlink(path);
}

/* Replaces the file at path by n bytes. */
static void rewrite(const char *path, const uint8_t *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    CHECK(fp && fwrite(bytes, 1, n, fp) == n);
    fclose(fp);
}

/* Attaching an index to a file it is not of fails with a line naming the
 * index and the reason. */
static void check_stale(const char *path, const uint8_t *idx, size_t len, const char *why)
{
    gzindex *x;
    io_reader *r;
    io_status st;
    CHECK(gzindex_parse(&x, "stale.gzidx", idx, len, &st) == 0);
    CHECK(io_reader_open(&r, path, &st) == 0);
    int rc = io_reader_set_index(r, x, &st);
    CHECKF(rc == IO_ERR_FORMAT && strstr(st.text, "stale.gzidx") && strstr(st.text, why),
           "expected [%s] got [%s]", why, rc ? st.text : "accepted");
    io_reader_close(r);
}

/* Another file, a file cut, one byte changed at the start, a longer file,
 * and blocked gzip: refused when the index is attached. */
static void test_stale(void)
{
    fixture a, b;
    CHECK(fixture_make(&a, 1, 6, Z_DEFAULT_STRATEGY, 8192) == 0);
    CHECK(fixture_make(&b, 2, 6, Z_DEFAULT_STRATEGY, 8192) == 0);
    check_stale(b.path, a.idx, a.idx_len, "length differs");
    uint8_t *gz = malloc(a.gzlen + 100);
    FILE *fp = fopen(a.path, "rb");
    CHECK(fread(gz, 1, a.gzlen, fp) == a.gzlen);
    fclose(fp);
    rewrite(a.path, gz, a.gzlen - 1);
    check_stale(a.path, a.idx, a.idx_len, "length differs");
    gz[4] ^= 1; /* MTIME */
    rewrite(a.path, gz, a.gzlen);
    check_stale(a.path, a.idx, a.idx_len, "first bytes differ");
    gz[4] ^= 1;
    memcpy(gz + a.gzlen, gz, 10);
    rewrite(a.path, gz, a.gzlen + 10);
    check_stale(a.path, a.idx, a.idx_len, "length differs");
    static const uint8_t bgzf[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C',
                                     2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rewrite(a.path, bgzf, sizeof bgzf);
    check_stale(a.path, a.idx, a.idx_len, "BGZF");
    free(gz);
    fixture_drop(&a);
    fixture_drop(&b);
}

/* The index without its check record (as other tools write it). */
static size_t strip_record(const fixture *f)
{
    gzindex *x;
    io_status st;
    CHECK(gzindex_parse(&x, "f", f->idx, f->idx_len, &st) == 0);
    size_t keep = f->idx_len - (32 + 4 * x->n + 4);
    gzindex_free(x);
    return keep;
}

/* Bit flips and truncations anywhere in an index, with and without the
 * check record, and a window replaced: every read is refused or gives the
 * file's bytes; parts through an index without the record are refused. */
static void test_damage(void)
{
    fixture f;
    CHECK(fixture_make(&f, 2, 6, Z_DEFAULT_STRATEGY, 8192) == 0);
    uint8_t *out = malloc(f.n + 1), *bad = malloc(f.idx_len);
    size_t bare = strip_record(&f);
    int refused = 0, right = 0, wrong = 0;
    for (int i = 0; i < 400; i++) {
        size_t len = i % 2 ? bare : f.idx_len;
        memcpy(bad, f.idx, len);
        if (i % 5 == 4)
            len = (size_t)(rnd() % len);
        else
            bad[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        uint64_t from = i % 3 ? 0 : rnd() % f.n;
        int v = read_verdict(&f, bad, len, from, UINT64_MAX, out);
        refused += v == 0;
        right += v == 1;
        wrong += v == -1;
    }
    CHECKF(wrong == 0 && refused > 100, "%d refused, %d read right, %d wrong", refused, right,
           wrong);

    /* a window changed: the record's CRC-32 refuses it; without the
       record, the member's CRC-32 does, and parts are refused */
    gzindex *x;
    io_status st;
    CHECK(gzindex_parse(&x, "f", f.idx, f.idx_len, &st) == 0);
    size_t at = (size_t)(x->pt[2].zwin - x->data), zlen = x->pt[2].zlen;
    uint8_t win[INFLATE_WINDOW];
    size_t wlen;
    CHECK(gzindex_window(x, 2, win, &wlen, &st) == 0 && wlen > 64);
    gzindex_free(x);
    for (size_t j = wlen - 64; j < wlen; j++)
        win[j] ^= 0x20;
    uLongf zl = compressBound(INFLATE_WINDOW);
    uint8_t *z = malloc(zl), *changed = malloc(f.idx_len + zl);
    CHECK(compress2(z, &zl, win, wlen, 9) == Z_OK);
    memcpy(changed, f.idx, at);
    for (int b = 0; b < 4; b++) /* the window's length field before it */
        changed[at - 4 + b] = (uint8_t)(zl >> (24 - 8 * b));
    memcpy(changed + at, z, zl);
    memcpy(changed + at + zl, f.idx + at + zlen, f.idx_len - at - zlen);
    size_t clen = f.idx_len - zlen + zl, cbare = bare - zlen + zl;
    CHECK(read_verdict(&f, changed, clen, 0, UINT64_MAX, out) == 0);
    CHECK(read_verdict(&f, changed, cbare, 0, UINT64_MAX, out) == 0);
    CHECK(read_verdict(&f, changed, cbare, 1000, 5000, out) == 0);
    free(changed);
    CHECK(read_verdict(&f, f.idx, bare, 0, UINT64_MAX, out) == 1);
    CHECK(read_verdict(&f, f.idx, bare, 1000, 5000, out) == 0);
    free(z);
    free(out);
    free(bad);
    fixture_drop(&f);
}

/* gzindex_build refuses what it cannot index: plain data, two members,
 * a damaged member (in the reader's words). */
static void test_build_refusals(void)
{
    uint8_t data[70000], *gz;
    size_t gzlen, idx_len, points;
    char path[64];
    io_status st;
    uint8_t *idx;
    fixture_data(data, sizeof data, 2, 5);
    CHECK(fixture_gzip(data, sizeof data, 6, Z_DEFAULT_STRATEGY, &gz, &gzlen) == 0);
    uint8_t *two = malloc(2 * gzlen);
    memcpy(two, gz, gzlen);
    memcpy(two + gzlen, gz, gzlen);
    struct {
        const uint8_t *bytes;
        size_t n;
        const char *why;
    } cases[] = {
        {data, sizeof data, "not gzip"},
        {two, 2 * gzlen, "more follows the first gzip member"},
        {gz, gzlen - 3, "unexpected end"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(fixture_file(cases[i].bytes, cases[i].n, path) == 0);
        FILE *fp = fopen(path, "rb");
        int rc = gzindex_build(fileno(fp), cases[i].n, NULL, io_gzip_member_error, &idx,
                               &idx_len, &points, &st);
        fclose(fp);
        unlink(path);
        CHECKF(rc < 0 && strstr(st.text, cases[i].why), "case %zu: %s", i, rc ? st.text : "built");
    }
    free(two);
    free(gz);
}

/* The index of f's file, built with the parallel decoder cutting chunks of
 * 4 KiB to 1 MiB of compressed bytes, or of its own sizes: the same bytes
 * every time, several points, and the data read back through it. */
static void check_same_points(fixture *f, const char *what, uint8_t *out)
{
    static const uint64_t chunks[] = {0, 4096, 16384, 65536, (uint64_t)1 << 20};
    uint8_t *first = NULL;
    size_t first_len = 0;
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        gzindex_spacing sp = {chunks[c], (uint64_t)16 << 10, 1};
        uint8_t *idx;
        size_t len;
        CHECK(fixture_index_spaced(f->path, &sp, &idx, &len) == 0);
        if (!first) {
            first = idx;
            first_len = len;
            CHECKF(points_of(idx) > 3, "%s: %llu points", what, (unsigned long long)points_of(idx));
            CHECKF(read_verdict(f, idx, len, 0, UINT64_MAX, out) == 1, "%s: whole read", what);
            continue;
        }
        CHECKF(len == first_len && !memcmp(idx, first, len), "%s: chunks of %llu bytes give other points",
               what, (unsigned long long)chunks[c]);
        free(idx);
    }
    free(first);
}

/* The points depend on the file and the spacing alone (check_same_points),
 * for every kind of data at levels 1 and 6, at a spacing that leaves
 * boundaries out, and for streams with empty blocks after their blocks
 * (partial and sync flushes, as pigz and zlib write them), which a
 * speculative chunk's start may step over. */
static void test_same_points(void)
{
    static const int levels[] = {1, 6};
    static const int flushes[] = {Z_PARTIAL_FLUSH, Z_SYNC_FLUSH};
    uint8_t *out = malloc(DATA_LEN + 1);
    char what[64];
    for (int kind = 0; kind < 3; kind++)
        for (size_t l = 0; l < 2; l++) {
            fixture f;
            CHECK(fixture_make(&f, kind, levels[l], Z_DEFAULT_STRATEGY, 0) == 0);
            snprintf(what, sizeof what, "kind %d level %d", kind, levels[l]);
            check_same_points(&f, what, out);
            fixture_drop(&f);
        }
    for (int kind = 0; kind < 3; kind++)
        for (size_t fl = 0; fl < 2; fl++) {
            fixture f;
            uint8_t *gz;
            memset(&f, 0, sizeof f);
            f.n = DATA_LEN;
            f.data = malloc(f.n);
            fixture_data(f.data, f.n, kind, (uint64_t)(kind + 100));
            CHECK(fixture_gzip_flushed(f.data, f.n, 6, Z_DEFAULT_STRATEGY, flushes[fl], 3000, &gz,
                                       &f.gzlen) == 0);
            CHECK(fixture_file(gz, f.gzlen, f.path) == 0);
            free(gz);
            snprintf(what, sizeof what, "kind %d, %s flush every 3000 bytes", kind,
                     fl ? "sync" : "partial");
            check_same_points(&f, what, out);
            fixture_drop(&f);
        }
    free(out);
}

/* Reads [from, upto) of the file at path through x with `workers` threads
 * into out (cap bytes), the file mapped for an odd count of workers, read
 * with pread for an even one: the bytes read in *got, the pairs decoded at
 * once in *pairs; 0, or the error (its line in *st). */
static int stream_read(const char *path, const gzindex *x, int workers, uint64_t from,
                       uint64_t upto, uint8_t *out, size_t cap, size_t *got, uint64_t *pairs,
                       io_status *st)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    gzindex_stream *s;
    *got = 0;
    void *mem = NULL;
    if (fd < 0 || fstat(fd, &sb) < 0 ||
        (workers % 2 &&
         (mem = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) ||
        gzindex_stream_open(&s, x, fd, mem, (uint64_t)sb.st_size, workers) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (from || upto != UINT64_MAX)
        gzindex_stream_seek(s, from, upto);
    ssize_t k = 0;
    while (*got < cap && (k = gzindex_stream_read(s, out + *got, cap - *got, st)) > 0)
        *got += (size_t)k;
    *pairs = gzindex_stream_pairs(s);
    gzindex_stream_close(s);
    if (mem)
        munmap(mem, (size_t)sb.st_size);
    close(fd);
    return *got < cap && k < 0 ? (int)k : 0;
}

/* f's data (f->data[0..f->n), filled) as one gzip -6 member in f's file,
 * with a seek index of a point every MiB of output: the index parsed
 * under `name`, or NULL. */
static gzindex *mib_fixture(fixture *f, const char *name)
{
    uint8_t *gz;
    CHECK(fixture_gzip(f->data, f->n, 6, Z_DEFAULT_STRATEGY, &gz, &f->gzlen) == 0);
    CHECK(fixture_file(gz, f->gzlen, f->path) == 0);
    free(gz);
    gzindex_spacing mib = {0, (uint64_t)1 << 20, 0};
    CHECK(fixture_index_spaced(f->path, &mib, &f->idx, &f->idx_len) == 0);
    gzindex *x = NULL;
    io_status st;
    CHECK(gzindex_parse(&x, name, f->idx, f->idx_len, &st) == 0);
    return x;
}

/* A member of mostly literals (random bytes) read through its index on
 * more than INFLATE_HALVES_THREADS workers: chunks are decoded two at once
 * on a thread, and the bytes (whole, and from seek points on) are zlib's
 * input; on that many workers or fewer, never two at once, and long chunks
 * as two halves of themselves. Damaged data inside a pair fails with the
 * error line of a read on two workers. */
static void test_pairs(void)
{
    uint8_t *out = malloc(DATA_LEN + 1);
    for (int level = 1; level <= 6; level += 5) {
        fixture f;
        uint8_t *gz;
        memset(&f, 0, sizeof f);
        f.n = DATA_LEN;
        f.data = malloc(f.n);
        for (size_t i = 0; i < f.n; i++)
            f.data[i] = (uint8_t)rnd();
        CHECK(fixture_gzip(f.data, f.n, level, Z_DEFAULT_STRATEGY, &gz, &f.gzlen) == 0);
        CHECK(fixture_file(gz, f.gzlen, f.path) == 0);
        CHECK(fixture_index(f.path, 8192, &f.idx, &f.idx_len) == 0);
        gzindex *x;
        io_status st;
        CHECK(gzindex_parse(&x, "pairs.gzidx", f.idx, f.idx_len, &st) == 0);
        for (int workers = 3; workers <= 7; workers++) {
            size_t got;
            uint64_t pairs;
            int rc = stream_read(f.path, x, workers, 0, UINT64_MAX, out, f.n + 1, &got, &pairs,
                                 &st);
            CHECKF(rc == 0 && got == f.n && !memcmp(out, f.data, f.n),
                   "level %d, %d workers: rc %d, %zu of %zu bytes", level, workers, rc, got, f.n);
            CHECKF(workers > INFLATE_HALVES_THREADS ? pairs > 0 : pairs == 0,
                   "level %d, %d workers: %llu pairs", level, workers, (unsigned long long)pairs);
            for (int i = 0; i < 4; i++) {
                uint64_t from = rnd() % f.n;
                rc = stream_read(f.path, x, workers, from, UINT64_MAX, out, f.n + 1, &got,
                                 &pairs, &st);
                CHECKF(rc == 0 && got == f.n - from && !memcmp(out, f.data + from, got),
                       "level %d, %d workers, from %llu: rc %d, %zu bytes", level, workers,
                       (unsigned long long)from, rc, got);
            }
        }
        /* a byte changed in the middle: the error of a read on two workers */
        uint8_t *bad = malloc(f.gzlen);
        memcpy(bad, gz, f.gzlen);
        bad[f.gzlen / 2] ^= 0x5a;
        free(gz);
        unlink(f.path);
        CHECK(fixture_file(bad, f.gzlen, f.path) == 0);
        free(bad);
        size_t got;
        uint64_t pairs;
        io_status want;
        int want_rc = stream_read(f.path, x, 2, 0, UINT64_MAX, out, f.n + 1, &got, &pairs, &want);
        int rc = stream_read(f.path, x, 7, 0, UINT64_MAX, out, f.n + 1, &got, &pairs, &st);
        CHECKF(want_rc < 0 && rc == want_rc && !strcmp(st.text, want.text) && pairs > 0,
               "level %d, damaged: rc %d (%d), [%s] against [%s], %llu pairs", level, rc, want_rc,
               st.text, want.text, (unsigned long long)pairs);
        gzindex_free(x);
        fixture_drop(&f);
    }
    free(out);
    /* on up to INFLATE_HALVES_THREADS workers, chunks of 1 MiB or more decode as two halves
       of themselves */
    fixture f;
    memset(&f, 0, sizeof f);
    f.n = (size_t)3 << 20;
    f.data = malloc(f.n);
    out = malloc(f.n + 1);
    for (size_t i = 0; i < f.n; i++) /* about 7.7 bits a byte in Huffman blocks, not stored */
        f.data[i] = (uint8_t)(rnd() % 200);
    gzindex *x = mib_fixture(&f, "halves.gzidx");
    io_status st;
    CHECKF(points_of(f.idx) == 3, "halves: %llu points", (unsigned long long)points_of(f.idx));
    for (int workers = 1; workers <= 2; workers++) {
        size_t got;
        uint64_t pairs, before = inflate_halves();
        int rc = stream_read(f.path, x, workers, 0, UINT64_MAX, out, f.n + 1, &got, &pairs, &st);
        CHECKF(rc == 0 && got == f.n && !memcmp(out, f.data, f.n) && pairs == 0,
               "halves, %d workers: rc %d, %zu of %zu bytes, %llu pairs", workers, rc, got, f.n,
               (unsigned long long)pairs);
        CHECKF(inflate_halves() > before, "halves, %d workers: no chunk decoded as two halves",
               workers);
    }
    gzindex_free(x);
    fixture_drop(&f);
    free(out);
}

/* Long reads through an index of a text member on 3 workers that decoded
 * ahead and wait for room: their copy out is shared with the workers, and
 * the bytes (and from the start the CRC-32 and length) are the data's,
 * with reads of every size up to 6 MiB, from the start and from a seek
 * point. */
static void test_shared_copy(void)
{
    static const char *const words[] = {"alpha ", "beta ", "gamma ", "delta ", "epsilon\n",
                                        "zeta ", "eta ", "theta\n"};
    fixture f;
    memset(&f, 0, sizeof f);
    f.n = (size_t)12 << 20;
    f.data = malloc(f.n);
    uint8_t *out = malloc(f.n + 64);
    for (size_t i = 0; i < f.n;) {
        const char *w = words[rnd() % 8];
        for (size_t k = 0; w[k] && i < f.n; k++)
            f.data[i++] = (uint8_t)w[k];
    }
    gzindex *x = mib_fixture(&f, "shared.gzidx");
    io_status st;
    int fd = open(f.path, O_RDONLY);
    for (int round = 0; round < 3; round++) {
        uint64_t from = round == 2 ? rnd() % f.n : 0;
        gzindex_stream *s;
        CHECK(gzindex_stream_open(&s, x, fd, NULL, f.gzlen, 3) == 0);
        if (from)
            gzindex_stream_seek(s, from, UINT64_MAX);
        memset(out, 0x5a, f.n + 64);
        size_t got = 0, want = f.n - (size_t)from;
        ssize_t k = 0;
        for (int first = 1;; first = 0) {
            if (first) { /* the workers decode ahead, then wait for room */
                struct timespec nap = {0, 50 * 1000 * 1000};
                nanosleep(&nap, NULL);
            }
            size_t ask = 1 + rnd() % (6u << 20), room = f.n + 64 - got; /* never past out */
            if ((k = gzindex_stream_read(s, out + got, ask < room ? ask : room, &st)) <= 0 ||
                got + (size_t)k > want)
                break;
            got += (size_t)k;
        }
        uint64_t end_bit, len;
        uint32_t crc = 0;
        int whole = 0, ended = gzindex_stream_end(s, &end_bit, &whole, &crc, &len);
        CHECKF(k == 0 && got == want && !memcmp(out, f.data + from, want) && ended &&
                   (from || (len == want && crc == (uint32_t)crc32(0, f.data, (uInt)f.n))),
               "round %d, from %llu: k %zd, %zu of %zu bytes, ended %d", round,
               (unsigned long long)from, k, got, want, ended);
        CHECKF(gzindex_stream_shared_copies(s) > 0, "round %d: no copy was shared", round);
        gzindex_stream_close(s);
    }
    close(fd);
    gzindex_free(x);
    fixture_drop(&f);
    free(out);
}

int main(void)
{
    RUN(test_round_trips);
    RUN(test_same_points);
    RUN(test_format);
    RUN(test_stale);
    RUN(test_damage);
    RUN(test_build_refusals);
    RUN(test_pairs);
    RUN(test_shared_copy);
    return check_summary();
}
