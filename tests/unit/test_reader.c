/* test_reader.c - byte sources: plain, gzip, multi-member, BGZF, damage. */
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "io/gzip/gz_writer.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "io/sink.h"
#include "check.h"
#define RND_SEED 0x9e3779b97f4a7c15ull
#include "rnd.h"

static char tmpdir[] = "/tmp/gb_rd_XXXXXX";

#include "bytes.h"
#include "../pipe_feeder.h"


/* Fills buf with somewhat compressible pseudo-random bytes. */
static void fill(uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        buf[i] = (r & 3) ? (uint8_t)("gpubatch"[(r >> 8) % 8]) : (uint8_t)(r >> 16);
    }
}

/* Appends data deflated by zlib at level with window bits wbits (-15: raw
 * deflate; 31: a gzip member, with header h where not NULL). */
static void deflate_append(struct bytes *b, const uint8_t *data, size_t n, int level, int wbits,
                           gz_header *h)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    deflateInit2(&zs, level, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY);
    if (h)
        deflateSetHeader(&zs, h);
    size_t cap = deflateBound(&zs, (uLong)n) + 256;
    uint8_t *out = malloc(cap);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH);
    CHECK(rc == Z_STREAM_END);
    append(b, out, cap - zs.avail_out);
    deflateEnd(&zs);
    free(out);
}

/* Appends one gzip member of data made by zlib, with optional header
 * fields (name, comment, extra, header CRC). */
static void gzip_member(struct bytes *b, const uint8_t *data, size_t n, int level, int fields)
{
    gz_header h;
    static unsigned char extra[] = {'X', 'Y', 3, 0, 1, 2, 3};
    if (fields) {
        memset(&h, 0, sizeof(h));
        h.name = (Bytef *)"data.bin";
        h.comment = (Bytef *)"a comment";
        h.extra = extra;
        h.extra_len = sizeof(extra);
        h.hcrc = 1;
        h.time = 1234567;
        h.os = 3;
    }
    deflate_append(b, data, n, level, 15 + 16, fields ? &h : NULL);
}

/* Blocked gzip of data through gz_writer into a file; returns its bytes. */
static void bgzf(struct bytes *b, const uint8_t *data, size_t n, int threads)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/bgzf.gz", tmpdir);
    io_sink *s;
    gz_writer *w;
    CHECK(io_sink_open(&s, path, 1, NULL, 0, NULL) == 0);
    CHECK(gz_writer_open(&w, s, 6, threads) == 0);
    CHECK(gz_writer_write(w, data, n) == 0);
    CHECK(gz_writer_finish(w) == 0);
    CHECK(io_sink_commit(s) == 0);
    FILE *f = fopen(path, "rb");
    uint8_t buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
        append(b, buf, k);
    fclose(f);
    unlink(path);
}

/* Reads everything with pieces of size step; returns the status and the
 * bytes in *out (malloc'd, up to cap). */
static int read_all(io_reader *r, size_t step, struct bytes *out, size_t cap)
{
    uint8_t *buf = malloc(step);
    int status = 0;
    for (;;) {
        ssize_t k = io_reader_read(r, buf, step);
        if (k < 0) {
            status = (int)k;
            break;
        }
        append(out, buf, (size_t)k);
        if ((size_t)k < step) {
            /* A short read means the end: the next one must give 0. */
            ssize_t again = io_reader_read(r, buf, step);
            CHECK(again == 0);
            break;
        }
        if (out->len > cap) {
            status = 1;
            break;
        }
    }
    free(buf);
    return status;
}

/* Decodes mem with the reader in pieces of step bytes. */
static int decode_mem(const uint8_t *mem, size_t len, size_t step, struct bytes *out,
                      int *garbage)
{
    io_reader *r;
    out->len = 0;
    int rc = io_reader_open_mem(&r, mem, len, NULL);
    if (rc < 0)
        return rc;
    rc = read_all(r, step, out, (size_t)1 << 28);
    if (garbage)
        *garbage = io_reader_trailing_garbage(r);
    if (rc < 0) {
        /* Errors are sticky and explained. */
        uint8_t x;
        CHECK(io_reader_read(r, &x, 1) == rc);
        CHECK(io_reader_error(r)[0] != '\0');
    } else {
        CHECK(io_reader_error(r)[0] == '\0');
    }
    io_reader_close(r);
    return rc;
}

/* Plain input passes through unchanged, from memory, a file and stdin. */
static void test_plain(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 4097, (1u << 20) + 5, (3u << 20) + 1};
    static const size_t steps[] = {1, 3, 4097, 1u << 20, 5u << 20};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        uint8_t *data = malloc(n + 1);
        fill(data, n);
        if (n)
            data[0] = 0x1f; /* half a magic is still plain */
        const char *path = put_file("plain.bin", data, n);
        for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
            if (steps[st] == 1 && n > 100000)
                continue;
            struct bytes out = {0};
            CHECK(decode_mem(data, n, steps[st], &out, NULL) == 0);
            CHECKF(out.len == n && (!n || !memcmp(out.p, data, n)), "mem size %zu step %zu", n,
                   steps[st]);
            io_reader *r;
            io_status err;
            out.len = 0;
            CHECK(io_reader_open(&r, path, &err) == 0);
            CHECK(!io_reader_compressed(r));
            CHECK(io_reader_file_size(r) == (int64_t)n);
            CHECK(read_all(r, steps[st], &out, n + 10) == 0);
            CHECKF(out.len == n && (!n || !memcmp(out.p, data, n)), "file size %zu step %zu", n,
                   steps[st]);
            CHECK(io_reader_raw_offset(r) == n);
            struct stat sb;
            uint64_t dev, ino;
            CHECK(stat(path, &sb) == 0);
            CHECK(io_reader_identity(r, &dev, &ino) == 0 && dev == (uint64_t)sb.st_dev &&
                  ino == (uint64_t)sb.st_ino);
            io_reader_close(r);
            free(out.p);
        }
        /* stdin, redirected from the file. */
        int saved = dup(0);
        int fd = open(path, O_RDONLY);
        dup2(fd, 0);
        close(fd);
        io_reader *r;
        struct bytes out = {0};
        CHECK(io_reader_open(&r, "-", NULL) == 0);
        CHECK(read_all(r, 4097, &out, n + 10) == 0 && out.len == n &&
              (!n || !memcmp(out.p, data, n)));
        uint64_t dev = 1, ino = 1;
        CHECK(io_reader_identity(r, &dev, &ino) == -1 && dev == 0 && ino == 0);
        io_reader_close(r);
        dup2(saved, 0);
        close(saved);
        free(out.p);
        free(data);
    }
    io_reader *r;
    CHECK(io_reader_open_mem(&r, "", 0, NULL) == 0);
    uint64_t dev = 1, ino = 1;
    CHECK(io_reader_identity(r, &dev, &ino) == -1 && dev == 0 && ino == 0);
    uint8_t x;
    CHECK(io_reader_read(r, &x, 1) == 0 && io_reader_read(r, &x, 0) == 0);
    io_reader_close(r);
    io_reader_close(NULL);
}

/* Open failures: missing file, directory, unreadable file. */
static void test_open_errors(void)
{
    io_reader *r = (io_reader *)1;
    io_status err;
    char path[300];
    snprintf(path, sizeof(path), "%s/missing", tmpdir);
    CHECK(io_reader_open(&r, path, &err) == IO_ERR_OPEN && r == NULL);
    CHECK(strstr(err.text, "No such file") != NULL);
    CHECK(io_reader_open(&r, tmpdir, &err) == IO_ERR_OPEN);
    CHECKF(strstr(err.text, "s a directory") != NULL, "%s", err.text);
    const char *p = put_file("secret", "x", 1);
    chmod(p, 0);
    if (geteuid() != 0) {
        CHECK(io_reader_open(&r, p, &err) == IO_ERR_OPEN);
        CHECK(strstr(err.text, "Permission denied") != NULL);
    } else {
        fprintf(stderr, "note: running as root, permission check skipped\n");
    }
    CHECK(io_strerror(IO_ERR_TRUNCATED)[0] != '\0' && io_strerror(12345)[0] != '\0');
}

/* Single gzip members, with and without optional header fields. */
static void test_single_member(void)
{
    static const size_t sizes[] = {0, 1, 1000, 300000, (2u << 20) + 7};
    static const size_t steps[] = {1, 3, 4097, 1u << 20};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        uint8_t *data = malloc(n + 1);
        fill(data, n);
        for (int fields = 0; fields < 2; fields++) {
            struct bytes gz = {0};
            gzip_member(&gz, data, n, fields ? 9 : 1, fields);
            for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
                if (steps[st] == 1 && n > 400000)
                    continue;
                struct bytes out = {0};
                int garbage = -1;
                CHECK(decode_mem(gz.p, gz.len, steps[st], &out, &garbage) == 0);
                CHECKF(out.len == n && (!n || !memcmp(out.p, data, n)), "size %zu step %zu", n,
                       steps[st]);
                CHECK(garbage == 0);
                free(out.p);
            }
            /* Through a file, reading in pieces larger than the input block. */
            const char *path = put_file("one.gz", gz.p, gz.len);
            io_reader *r;
            CHECK(io_reader_open(&r, path, NULL) == 0);
            CHECK(io_reader_compressed(r));
            CHECK(io_reader_file_size(r) == (int64_t)gz.len);
            struct bytes out = {0};
            CHECK(read_all(r, 3u << 20, &out, n + 10) == 0 && out.len == n &&
                  (!n || !memcmp(out.p, data, n)));
            CHECK(io_reader_raw_offset(r) == gz.len);
            io_reader_close(r);
            free(out.p);
            free(gz.p);
        }
        free(data);
    }
}

/* Whether /proc/self/maps lists a mapping of the file at path (-1 where
 * the system has no such list). */
static int file_mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[4096];
    size_t n = strlen(path);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        size_t k = strcspn(line, "\n");
        found = k >= n && !memcmp(line + k - n, path, n);
    }
    fclose(f);
    return found;
}

/* A member of a file that the parallel decoder takes is read from the
 * file mapped whole, in place, while the reader is open (not through
 * pread into buffers of the decoder's), and unmapped when it closes; the
 * bytes are the data's. */
static void test_parallel_mapped(void)
{
    size_t n = 8u << 20;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 1, 0);
    const char *path = put_file("mapped.gz", gz.p, gz.len);
    if (file_mapped(path) < 0) {
        free(gz.p);
        free(data);
        return;
    }
    io_reader *r;
    CHECK(io_reader_open(&r, path, NULL) == 0);
    CHECK(file_mapped(path) == 0);
    struct bytes out = {0};
    CHECK(read_all(r, 1u << 20, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
    CHECK(file_mapped(path) == 1);
    char how[512];
    io_reader_describe(r, how, sizeof how);
    CHECKF(strstr(how, "in parallel") != NULL, "%s", how);
    io_reader_close(r);
    CHECK(file_mapped(path) == 0);
    free(out.p);
    free(gz.p);
    free(data);
}

/* The verdict of a read in order on a damaged member, for data of 300,000
 * bytes after a 16-byte header, is a whole-file read's: data past the end
 * is told before a CRC-32 or length lie that follows it (unless the
 * trailer comes with the byte after the data), a lie at the end of data of
 * the right length by the trailer, and nothing for an intact member. */
static void test_member_verdict(void)
{
    enum { HEAD = 16, N = 300000 };
    static const struct {
        size_t n;    /* decoded bytes of the member */
        int trailer; /* 0: right; 1: CRC-32 lie; 2: ISIZE lie */
        const char *want; /* NULL: no failure */
    } cases[] = {
        {HEAD + N, 0, NULL},
        {HEAD + N + 1000, 0, "the input holds more than the expected 300000 bytes of data"},
        {HEAD + N + 1000, 1, "the input holds more than the expected 300000 bytes of data"},
        {HEAD + N + 1000, 2, "the input holds more than the expected 300000 bytes of data"},
        {HEAD + N + 1, 1, "incorrect data check"}, /* the trailer read with the extra byte */
        {HEAD + N, 1, "incorrect data check"},
        {HEAD + N, 2, "incorrect length check"},
        {HEAD + N - 5, 1, "incorrect data check"},
    };
    uint8_t *data = malloc(HEAD + N + 1000);
    fill(data, HEAD + N + 1000);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct bytes gz = {0};
        gzip_member(&gz, data, cases[i].n, 6, 0);
        if (cases[i].trailer)
            gz.p[gz.len - (cases[i].trailer == 1 ? 8 : 4)] ^= 1;
        io_reader *r;
        io_status st;
        CHECK(io_reader_open(&r, put_file("verdict.gz", gz.p, gz.len), NULL) == 0);
        int rc = io_reader_member_verdict(r, HEAD, N, &st);
        if (!cases[i].want)
            CHECKF(rc == 0, "case %zu: %s", i, st.text);
        else
            CHECKF(rc < 0 && strstr(st.text, cases[i].want), "case %zu: [%s]", i, st.text);
        io_reader_close(r);
        free(gz.p);
    }
    free(data);
}

/* Concatenated members, empty ones included, read as one stream. */
static void test_multi_member(void)
{
    size_t n = 500000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, 100000, 6, 0);
    gzip_member(&gz, data + 100000, 0, 6, 1);
    gzip_member(&gz, data + 100000, 1, 1, 0);
    gzip_member(&gz, data + 100001, 399999, 9, 1);
    static const size_t steps[] = {1, 3, 4097, 100000, 1u << 20};
    for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
        struct bytes out = {0};
        CHECK(decode_mem(gz.p, gz.len, steps[st], &out, NULL) == 0);
        CHECKF(out.len == n && !memcmp(out.p, data, n), "step %zu", steps[st]);
        free(out.p);
    }
    /* Many small members through a file: members straddle input blocks. */
    struct bytes many = {0};
    for (size_t pos = 0; pos < n; pos += 777)
        gzip_member(&many, data + pos, n - pos < 777 ? n - pos : 777, 1, (pos / 777) % 2);
    const char *path = put_file("many.gz", many.p, many.len);
    io_reader *r;
    CHECK(io_reader_open(&r, path, NULL) == 0);
    struct bytes out = {0};
    CHECK(read_all(r, 4097, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
    CHECK(io_reader_raw_offset(r) == many.len);
    io_reader_close(r);
    free(out.p);
    free(many.p);
    free(gz.p);
    free(data);
}

/* A device may take over the first member of a file or a pipe (through its
 * spool) only, and the reader goes on where it is told: here from the
 * member's start again. */
static void test_stream_member(void)
{
    size_t n = 300000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 1, 0);
    const char *path = put_file("stream.gz", gz.p, gz.len);
    io_reader *r;
    int fd;
    uint64_t off, size;
    uint8_t head[100];
    CHECK(io_reader_open(&r, path, NULL) == 0);
    CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
    CHECK(io_reader_stream_member(r, &fd, &off, &size) == 1 && off == 10 && size == gz.len);
    CHECK(io_reader_continue_member(r, off * 8, 0, NULL, 0, (uint32_t)crc32(0, Z_NULL, 0), 0, 0,
                                    "test") == 0);
    struct bytes out = {0};
    CHECK(read_all(r, 4097, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
    io_reader_close(r);
    free(out.p);
    /* the same member from a pipe opened by name: its spool and offsets, its size once read */
    pipe_feeder f;
    char name[32];
    snprintf(name, sizeof name, "/dev/fd/%d", pipe_feeder_start(&f, gz.p, gz.len, 50000, 7));
    spool *sp = NULL;
    CHECK(io_reader_open(&r, name, NULL) == 0);
    CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
    CHECK(io_reader_stream_member(r, &fd, &off, &size) == 0);
    CHECK(io_reader_stream_spool(r, &sp, &off) == 1 && sp != NULL && off == 10);
    CHECK(io_reader_continue_member(r, off * 8, 0, NULL, 0, (uint32_t)crc32(0, Z_NULL, 0), 0, 0,
                                    "test") == 0);
    out = (struct bytes){0};
    CHECK(read_all(r, 4097, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
    CHECK(io_reader_input_size(r) == (int64_t)gz.len && io_reader_file_size(r) == -1);
    CHECK(io_reader_stream_spool(r, &sp, &off) == 0); /* read to its end */
    io_reader_close(r);
    pipe_feeder_end(&f, NULL);
    free(out.p);
    /* the data's start in a member before it: the member being read is not the first */
    struct bytes two = {0};
    gzip_member(&two, data, 50, 6, 0);
    gzip_member(&two, data + 50, n - 50, 1, 0);
    path = put_file("two.gz", two.p, two.len);
    CHECK(io_reader_open(&r, path, NULL) == 0);
    CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
    CHECK(io_reader_stream_member(r, &fd, &off, &size) == 0);
    io_reader_close(r);
    free(two.p);
    free(gz.p);
    free(data);
}

/* BGZF streams from gz_writer read fully, in any piece size. */
static void test_bgzf(void)
{
    static const size_t sizes[] = {0,
                                   1,
                                   GZ_WRITER_BLOCK_DATA - 1,
                                   GZ_WRITER_BLOCK_DATA,
                                   GZ_WRITER_BLOCK_DATA + 1,
                                   (1u << 20) + 3};
    static const size_t steps[] = {1, 3, 4097, 1u << 20};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        uint8_t *data = malloc(n + 1);
        fill(data, n);
        struct bytes g1 = {0}, g4 = {0};
        bgzf(&g1, data, n, 1);
        bgzf(&g4, data, n, 4);
        CHECK(g1.len == g4.len && !memcmp(g1.p, g4.p, g1.len));
        for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
            if (steps[st] == 1 && n > 100000)
                continue;
            struct bytes out = {0};
            int garbage = -1;
            CHECK(decode_mem(g1.p, g1.len, steps[st], &out, &garbage) == 0);
            CHECKF(out.len == n && (!n || !memcmp(out.p, data, n)), "size %zu step %zu", n,
                   steps[st]);
            CHECK(garbage == 0);
            free(out.p);
        }
        free(g1.p);
        free(g4.p);
        free(data);
    }
}

/* Bytes this process has read from files so far (/proc/self/io's rchar),
 * or -1 where the kernel does not say. */
static long long bytes_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long v = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* Opening a file of one gzip member reads its first 64 KiB only (and the
 * counter's own /proc read), not the 16 MiB window that blocked gzip gets
 * (the parallel decoder reads the file itself); either is then read whole. */
static void test_open_window(void)
{
    size_t n = 3u << 20;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(rnd() >> 24);
    for (int blocked = 0; blocked < 2; blocked++) {
        struct bytes gz = {0};
        if (blocked)
            bgzf(&gz, data, n, 2);
        else
            gzip_member(&gz, data, n, 1, 0);
        const char *path = put_file("window.gz", gz.p, gz.len);
        io_reader *r;
        long long before = bytes_read();
        CHECK(io_reader_open(&r, path, NULL) == 0);
        long long took = bytes_read() - before;
        if (before >= 0)
            CHECKF(blocked ? took >= (long long)gz.len : took <= (64 << 10) + 4096,
                   "blocked %d: %lld of %zu bytes read at open", blocked, took, gz.len);
        struct bytes out = {0};
        CHECK(read_all(r, 1u << 20, &out, n + 10) == 0 && out.len == n &&
              !memcmp(out.p, data, n));
        io_reader_close(r);
        free(out.p);
        free(gz.p);
    }
    free(data);
}

/* Member start offsets of a multi-member stream (parsed from BSIZE). */
static size_t bgzf_members(const uint8_t *p, size_t len, size_t *starts, size_t max)
{
    size_t pos = 0, k = 0;
    while (pos + 18 <= len && k < max) {
        starts[k++] = pos;
        pos += ((size_t)p[pos + 16] | (size_t)p[pos + 17] << 8) + 1;
    }
    return k;
}

/* n random bytes (returned, malloc'd) as blocked gzip in *g, with the
 * offsets of its members in starts (at most 16); returns their count in
 * *nm. */
static uint8_t *bgzf_random(size_t n, int threads, struct bytes *g, size_t *starts, size_t *nm)
{
    uint8_t *data = malloc(n);
    fill(data, n);
    bgzf(g, data, n, threads);
    *nm = bgzf_members(g->p, g->len, starts, 16);
    return data;
}

/* Bad blocks in the middle of blocked gzip: the parallel and the sequential
 * inflater give the same status and the same bytes, whatever the read
 * sizes. One block has a wrong CRC-32; another's BSIZE also counts four
 * zero bytes after its trailer, which the sequential reader takes for
 * padding followed by trailing garbage (the next block's magic). */
static void test_bgzf_bad_block(void)
{
    static const size_t steps[] = {3, 4097, 1u << 20, 1u << 24};
    size_t n = 10 * GZ_WRITER_BLOCK_DATA, starts[16], nm;
    struct bytes g = {0};
    uint8_t *data = bgzf_random(n, 1, &g, starts, &nm);
    CHECK(nm == 11);
    uint8_t *bad = malloc(g.len);
    memcpy(bad, g.p, g.len);
    bad[starts[6] - 8] ^= 0x55;
    struct bytes padded = {0};
    append(&padded, g.p, starts[4]);
    static const uint8_t zeros[4];
    append(&padded, zeros, sizeof zeros);
    append(&padded, g.p + starts[4], g.len - starts[4]);
    size_t bsize = ((size_t)padded.p[starts[3] + 16] | (size_t)padded.p[starts[3] + 17] << 8) + 4;
    padded.p[starts[3] + 16] = (uint8_t)bsize;
    padded.p[starts[3] + 17] = (uint8_t)(bsize >> 8);
    for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
        struct bytes out = {0};
        CHECKF(decode_mem(bad, g.len, steps[st], &out, NULL) == IO_ERR_CRC, "step %zu", steps[st]);
        CHECKF(out.len <= 6 * GZ_WRITER_BLOCK_DATA && (!out.len || !memcmp(out.p, data, out.len)),
               "step %zu", steps[st]);
        int garbage = 0;
        out.len = 0;
        CHECKF(decode_mem(padded.p, padded.len, steps[st], &out, &garbage) == 0,
               "padded block, step %zu", steps[st]);
        CHECKF(out.len == 4 * GZ_WRITER_BLOCK_DATA && !memcmp(out.p, data, out.len) && garbage == 1,
               "padded block, step %zu: %zu bytes", steps[st], out.len);
        free(out.p);
    }
    free(padded.p);
    free(bad);
    free(g.p);
    free(data);
}

/* Reads a blocked-gzip file of several 16 MiB input windows (blocked gzip
 * from a file is inflated in batches while the next window is read) with
 * pieces of size step; returns the status, the bytes in *out and the
 * trailing-garbage flag in *garbage. */
static int decode_file(const char *path, size_t step, struct bytes *out, int *garbage)
{
    io_reader *r;
    out->len = 0;
    CHECK(io_reader_open(&r, path, NULL) == 0);
    int rc = read_all(r, step, out, (size_t)1 << 28);
    *garbage = io_reader_trailing_garbage(r);
    if (rc == 0)
        CHECK(io_reader_raw_offset(r) == (uint64_t)io_reader_file_size(r) || *garbage);
    io_reader_close(r);
    return rc;
}

/* Blocked gzip over several input windows: whole, with a bad block in the
 * second or the third window, cut short, and with trailing garbage; the
 * same bytes and status as the whole stream dictates, for reads smaller
 * and larger than a window. */
static void test_bgzf_windows(void)
{
    size_t n = (size_t)40 << 20;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rnd();
        memcpy(data + i, &v, 8); /* random bytes: the compressed file is as large */
    }
    struct bytes g = {0};
    bgzf(&g, data, n, 2);
    static size_t starts[1024];
    size_t nm = bgzf_members(g.p, g.len, starts, 1024);
    CHECK(g.len > ((size_t)36 << 20) && nm > 600);
    static const size_t steps[] = {(size_t)1 << 20, (size_t)32 << 20};
    for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++) {
        struct bytes out = {0};
        int garbage;
        const char *path = put_file("win.gz", g.p, g.len);
        CHECKF(decode_file(path, steps[st], &out, &garbage) == 0 && out.len == n &&
                   !memcmp(out.p, data, n) && !garbage,
               "whole, step %zu", steps[st]);
        /* A wrong CRC-32 in the block at about 20 or 35 MiB. */
        static const size_t at_mib[] = {20, 35};
        for (size_t b = 0; b < 2; b++) {
            size_t k = 0;
            while (k + 1 < nm && starts[k + 1] < (at_mib[b] << 20))
                k++;
            g.p[starts[k + 1] - 8] ^= 0x55; /* the CRC of block k */
            path = put_file("win.gz", g.p, g.len);
            g.p[starts[k + 1] - 8] ^= 0x55;
            CHECKF(decode_file(path, steps[st], &out, &garbage) == IO_ERR_CRC,
                   "bad block %zu, step %zu", k, steps[st]);
            CHECKF(out.len <= k * GZ_WRITER_BLOCK_DATA + GZ_WRITER_BLOCK_DATA &&
                       out.len + steps[st] >= k * GZ_WRITER_BLOCK_DATA &&
                       !memcmp(out.p, data, out.len),
                   "bad block %zu, step %zu: %zu bytes", k, steps[st], out.len);
        }
        /* Cut inside a block at about 30 MiB. */
        path = put_file("win.gz", g.p, ((size_t)30 << 20) + 12345);
        CHECKF(decode_file(path, steps[st], &out, &garbage) == IO_ERR_TRUNCATED &&
                   !memcmp(out.p, data, out.len),
               "cut, step %zu", steps[st]);
        /* Garbage after the end-of-file block. */
        struct bytes tail = {0};
        append(&tail, g.p, g.len);
        append(&tail, "garbage!", 8);
        path = put_file("win.gz", tail.p, tail.len);
        CHECKF(decode_file(path, steps[st], &out, &garbage) == 0 && out.len == n &&
                   !memcmp(out.p, data, n) && garbage,
               "garbage, step %zu", steps[st]);
        free(tail.p);
        free(out.p);
    }
    free(g.p);
    free(data);
}

/* Cut streams fail as truncated or corrupt, or, at a member boundary,
 * give a prefix of the data; never other bytes, never a crash. */
static void test_truncated(void)
{
    size_t n = 20000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 6, 1);
    int bad = 0;
    for (size_t cut = 1; cut < gz.len; cut++) {
        struct bytes out = {0};
        int rc = decode_mem(gz.p, cut, (cut % 3) ? 4097 : 7, &out, NULL);
        /* A lone 0x1f is plain data; any longer cut is a truncated member. */
        if (cut == 1 ? !(rc == 0 && out.len == 1) : rc != IO_ERR_TRUNCATED)
            bad++;
        free(out.p);
    }
    CHECKF(bad == 0, "%d bad cut results", bad);

    /* BGZF: cuts everywhere in a 3-block stream. */
    size_t m = 3 * GZ_WRITER_BLOCK_DATA, starts[16], nm;
    struct bytes bg = {0};
    uint8_t *big = bgzf_random(m, 2, &bg, starts, &nm);
    CHECK(nm == 4);
    bad = 0;
    int errors = 0;
    for (size_t cut = 2; cut < bg.len; cut += 1 + rnd() % 97) {
        size_t off = cut;
        for (size_t i = 0; i < nm; i++)
            if (starts[i] <= cut)
                off = cut - starts[i];
        struct bytes out = {0};
        int garbage = 0;
        int rc = decode_mem(bg.p, cut, 65536, &out, &garbage);
        if (rc == 0) {
            /* Success only at a boundary (or a boundary plus a lone 0x1f),
             * and then with a prefix of the data. */
            if (!(off == 0 || (off == 1 && garbage)) || out.len > m ||
                memcmp(out.p, big, out.len)) {
                fprintf(stderr, "cut %zu off %zu garbage %d len %zu\n", cut, off, garbage,
                        out.len);
                bad++;
            }
        } else if (rc != IO_ERR_TRUNCATED && rc != IO_ERR_CORRUPT) {
            fprintf(stderr, "cut %zu off %zu rc %d\n", cut, off, rc);
            bad++;
        } else {
            errors++;
        }
        free(out.p);
    }
    CHECKF(bad == 0, "%d bad BGZF cut results", bad);
    CHECK(errors > 100);
    for (size_t i = 1; i < nm; i++) {
        struct bytes out = {0};
        CHECK(decode_mem(bg.p, starts[i], 4097, &out, NULL) == 0);
        CHECK(out.len == i * GZ_WRITER_BLOCK_DATA && !memcmp(out.p, big, out.len));
        free(out.p);
    }
    free(bg.p);
    free(big);
    free(gz.p);
    free(data);
}

/* Damaged bytes: deflate data, CRC, ISIZE, header fields. */
static void test_flipped(void)
{
    size_t n = 30000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 6, 0);
    size_t hdr = 10, trailer = gz.len - 8;
    int wrong = 0, errors = 0, same = 0;
    for (size_t pos = hdr; pos < trailer; pos += 1 + rnd() % 13) {
        uint8_t orig = gz.p[pos];
        gz.p[pos] ^= (uint8_t)(1u << (rnd() % 8));
        struct bytes out = {0};
        int rc = decode_mem(gz.p, gz.len, 8192, &out, NULL);
        if (rc == 0 && !(out.len == n && !memcmp(out.p, data, n)))
            wrong++;
        else if (rc == 0)
            same++; /* padding bits after the final block */
        else if (rc == IO_ERR_CORRUPT || rc == IO_ERR_CRC || rc == IO_ERR_TRUNCATED)
            errors++;
        else
            wrong++;
        gz.p[pos] = orig;
        free(out.p);
    }
    CHECKF(wrong == 0, "%d flips gave wrong data", wrong);
    CHECK(errors > 100 && same <= 2);
    for (size_t pos = trailer; pos < gz.len; pos++) {
        gz.p[pos] ^= 0x10;
        struct bytes out = {0};
        int rc = decode_mem(gz.p, gz.len, 8192, &out, NULL);
        CHECKF(rc == IO_ERR_CRC, "trailer byte %zu: rc %d", pos - trailer, rc);
        gz.p[pos] ^= 0x10;
        free(out.p);
    }
    io_reader *r;
    gz.p[trailer] ^= 1;
    CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
    uint8_t *buf = malloc(n + 1);
    CHECK(io_reader_read(r, buf, n + 1) == IO_ERR_CRC);
    CHECK(strstr(io_reader_error(r), "incorrect data check") != NULL);
    io_reader_close(r);
    gz.p[trailer] ^= 1;
    gz.p[gz.len - 1] ^= 1;
    CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
    CHECK(io_reader_read(r, buf, n + 1) == IO_ERR_CRC);
    CHECK(strstr(io_reader_error(r), "incorrect length check") != NULL);
    io_reader_close(r);
    gz.p[gz.len - 1] ^= 1;
    /* Header: a bad method and reserved flag bits are corrupt data. */
    gz.p[2] = 7;
    CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
    CHECK(io_reader_read(r, buf, n + 1) == IO_ERR_CORRUPT);
    CHECK(strstr(io_reader_error(r), "unknown compression method") != NULL);
    io_reader_close(r);
    gz.p[2] = 8;
    gz.p[3] = 0xe0;
    CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
    CHECK(io_reader_read(r, buf, n + 1) == IO_ERR_CORRUPT);
    io_reader_close(r);
    gz.p[3] = 0;
    /* Any header byte flipped: an error or the right data. */
    wrong = 0;
    for (size_t pos = 0; pos < hdr; pos++) {
        for (int bit = 0; bit < 8; bit++) {
            gz.p[pos] ^= (uint8_t)(1u << bit);
            struct bytes out = {0};
            int rc = decode_mem(gz.p, gz.len, 8192, &out, NULL);
            if (rc == 0 && pos >= 2 && !(out.len == n && !memcmp(out.p, data, n)))
                wrong++;
            gz.p[pos] ^= (uint8_t)(1u << bit);
            free(out.p);
        }
    }
    CHECK(wrong == 0);
    /* A second member with a broken header is an error, not garbage. */
    struct bytes two = {0};
    append(&two, gz.p, gz.len);
    append(&two, gz.p, gz.len);
    two.p[gz.len + 2] = 9;
    struct bytes out = {0};
    CHECK(decode_mem(two.p, two.len, 4096, &out, NULL) == IO_ERR_CORRUPT);
    free(out.p);
    free(two.p);
    free(buf);
    free(gz.p);
    free(data);
}

/* Zero padding after the last member is ignored silently; other bytes are
 * ignored but reported. */
static void test_trailing(void)
{
    size_t n = 5000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 6, 0);
    size_t base = gz.len;
    static const uint8_t zeros[1000];
    struct {
        const char *what;
        const void *tail;
        size_t len;
        int garbage;
    } cases[] = {
        {"zeros", zeros, sizeof(zeros), 0},
        {"one zero", zeros, 1, 0},
        {"text", "garbage!", 8, 1},
        {"lone 1f", "\x1f", 1, 1},
        {"1f 00", "\x1f\x00", 2, 1},
        {"zeros then text", "\0\0\0\0x", 5, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gz.len = base;
        append(&gz, cases[i].tail, cases[i].len);
        for (size_t step = 1; step <= 5001; step += 2500) {
            struct bytes out = {0};
            int garbage = -1;
            CHECKF(decode_mem(gz.p, gz.len, step, &out, &garbage) == 0, "%s", cases[i].what);
            CHECKF(out.len == n && !memcmp(out.p, data, n), "%s", cases[i].what);
            CHECKF(garbage == cases[i].garbage, "%s: garbage %d", cases[i].what, garbage);
            free(out.p);
        }
    }
    /* A truncated magic at the end ("1f 8b" only) is a cut member. */
    gz.len = base;
    append(&gz, "\x1f\x8b", 2);
    struct bytes out = {0};
    CHECK(decode_mem(gz.p, gz.len, 4096, &out, NULL) == IO_ERR_TRUNCATED);
    free(out.p);
    out = (struct bytes){0};
    /* Megabytes of zeros after the data, through a file (several blocks). */
    gz.len = base;
    uint8_t *z = calloc(1, 3u << 20);
    append(&gz, z, 3u << 20);
    free(z);
    const char *path = put_file("zeros.gz", gz.p, gz.len);
    io_reader *r;
    CHECK(io_reader_open(&r, path, NULL) == 0);
    out.len = 0;
    CHECK(read_all(r, 4097, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
    CHECK(!io_reader_trailing_garbage(r));
    CHECK(io_reader_raw_offset(r) == gz.len);
    io_reader_close(r);
    /* Garbage after zeros that span input blocks. */
    append(&gz, "!", 1);
    path = put_file("zeros2.gz", gz.p, gz.len);
    CHECK(io_reader_open(&r, path, NULL) == 0);
    out.len = 0;
    CHECK(read_all(r, 1u << 20, &out, n + 10) == 0 && out.len == n);
    CHECK(io_reader_trailing_garbage(r));
    io_reader_close(r);
    free(out.p);
    free(gz.p);
    free(data);
}

/* Files made by the system's gzip and pigz read back. */
static void test_external(void)
{
    size_t n = 700000;
    uint8_t *data = malloc(n);
    fill(data, n);
    const char *path = put_file("ext.bin", data, n);
    char src[256];
    snprintf(src, sizeof(src), "%s", path);
    static const char *const tools[] = {"gzip", "pigz"};
    for (int t = 0; t < 2; t++) {
        char cmd[1024], gzpath[300];
        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tools[t]);
        if (system(cmd) != 0) {
            fprintf(stderr, "note: %s not installed, check skipped\n", tools[t]);
            continue;
        }
        snprintf(gzpath, sizeof(gzpath), "%s/ext.%s.gz", tmpdir, tools[t]);
        snprintf(cmd, sizeof(cmd), "%s -c < '%s' > '%s'", tools[t], src, gzpath);
        CHECK(system(cmd) == 0);
        io_reader *r;
        CHECK(io_reader_open(&r, gzpath, NULL) == 0);
        struct bytes out = {0};
        CHECK(read_all(r, 65536, &out, n + 10) == 0 && out.len == n && !memcmp(out.p, data, n));
        io_reader_close(r);
        free(out.p);
    }
    free(data);
}

/* Skips off bytes of encoded (in memory, or in a file when path is not
 * NULL), ends the data limit bytes later, and checks what is read. */
static void check_skip(const uint8_t *enc, size_t len, const char *path, const uint8_t *data,
                       size_t n, size_t off, size_t limit)
{
    io_reader *r;
    CHECK((path ? io_reader_open(&r, path, NULL) : io_reader_open_mem(&r, enc, len, NULL)) == 0);
    size_t start = off < n ? off : n;
    int64_t got = io_reader_skip(r, off);
    CHECKF(got == (int64_t)start, "skip %zu of %zu gave %lld (%s)", off, n, (long long)got,
           path ? "file" : "memory");
    size_t want = n - start < limit ? n - start : limit;
    if (limit != SIZE_MAX)
        io_reader_limit(r, limit);
    struct bytes out = {0};
    CHECK(read_all(r, 4093, &out, n + 10) == 0);
    CHECKF(out.len == want && (!want || !memcmp(out.p, data + start, want)),
           "skip %zu limit %zu: %zu bytes", off, limit, out.len);
    free(out.p);
    io_reader_close(r);
}

/* io_reader_skip and io_reader_limit on plain, gzip, multi-member and
 * blocked gzip input, at and around block boundaries and past the end; and
 * skipping whole BGZF blocks does not inflate them. */
static void test_skip(void)
{
    size_t n = 3 * GZ_WRITER_BLOCK_DATA + 12345;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes enc[4] = {{0}};
    append(&enc[0], data, n);
    gzip_member(&enc[1], data, n, 6, 0);
    gzip_member(&enc[2], data, 70000, 1, 1);
    gzip_member(&enc[2], data + 70000, n - 70000, 9, 0);
    bgzf(&enc[3], data, n, 2);
    static const size_t offs[] = {0,
                                  1,
                                  GZ_WRITER_BLOCK_DATA - 1,
                                  GZ_WRITER_BLOCK_DATA,
                                  GZ_WRITER_BLOCK_DATA + 1,
                                  70000,
                                  2 * GZ_WRITER_BLOCK_DATA + 7,
                                  3 * GZ_WRITER_BLOCK_DATA + 12344,
                                  3 * GZ_WRITER_BLOCK_DATA + 12345,
                                  3 * GZ_WRITER_BLOCK_DATA + 20000};
    static const size_t limits[] = {SIZE_MAX, 0, 1, GZ_WRITER_BLOCK_DATA + 3};
    for (int e = 0; e < 4; e++) {
        const char *path = put_file("skip.bin", enc[e].p, enc[e].len);
        for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
            for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
                check_skip(enc[e].p, enc[e].len, NULL, data, n, offs[i], limits[l]);
                check_skip(enc[e].p, enc[e].len, path, data, n, offs[i], limits[l]);
            }
    }
    /* Damage the deflate data of the first BGZF block only: passing over it
     * whole fails (a skipped block is checked, since its sizes are what the
     * skip trusts), and so does stopping inside it. */
    enc[3].p[18 + 40] ^= 0x55;
    io_reader *r;
    CHECK(io_reader_open_mem(&r, enc[3].p, enc[3].len, NULL) == 0);
    CHECK(io_reader_skip(r, GZ_WRITER_BLOCK_DATA) < 0 &&
          strstr(io_reader_error(r), "gzip member at byte 0"));
    io_reader_close(r);
    CHECK(io_reader_open_mem(&r, enc[3].p, enc[3].len, NULL) == 0);
    CHECK(io_reader_skip(r, GZ_WRITER_BLOCK_DATA - 1) < 0 && io_reader_error(r)[0]);
    io_reader_close(r);
    for (int e = 0; e < 4; e++)
        free(enc[e].p);
    free(data);
}

/* A deflated zip member's bytes as they lie in an archive: `before` bytes
 * (a local header's place), data deflated raw, `after` bytes (a central
 * directory's place) into *zip; returns the compressed size. */
static uint64_t zip_bytes(struct bytes *zip, const uint8_t *data, size_t n, size_t before,
                          size_t after)
{
    uint8_t pad[256];
    memset(pad, 'Z', sizeof pad);
    append(zip, pad, before);
    deflate_append(zip, data, n, 6, -15, NULL);
    uint64_t comp = zip->len - before;
    append(zip, pad, after);
    return comp;
}

/* The inputs of test_pause: a gzip member, or a deflated zip member with
 * bytes before and after it (a local header, a central directory), good or
 * with a wrong CRC-32. */
typedef struct {
    const char *path;
    io_zip_member zm; /* method IO_ZIP_DEFLATED: a zip member */
} pause_input;

/* Opens a test_pause input. */
static int pause_open(io_reader **r, const pause_input *in)
{
    return in->zm.method == IO_ZIP_DEFLATED ? io_reader_open_zip_member(r, in->path, &in->zm, NULL)
                                            : io_reader_open(r, in->path, NULL);
}

/* The first member paused between the parallel decoder's chunks
 * (io_reader_pause) through a ring that holds the bytes after its last
 * whole grain (pl_open_pausable), then read on from the pause point (in
 * parallel where enough follows, else in order), as a device hands back: the data are the member's, in every
 * position the pause may fall, and a member whose CRC-32 is wrong still
 * fails at its end with zlib's words; for a gzip member and a deflated
 * zip member alike, whose deflate data io_reader_stream_member names. */
static void test_pause(void)
{
    const size_t n = (6u << 20) + 123, chunk = 64u << 10, grain = 4096;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes gz = {0};
    gzip_member(&gz, data, n, 6, 0);
    pause_input in[4];
    memset(in, 0, sizeof in);
    in[0].path = strdup(put_file("pause.gz", gz.p, gz.len));
    gz.p[gz.len - 8] ^= 1; /* the CRC-32 */
    in[1].path = strdup(put_file("pause-crc.gz", gz.p, gz.len));
    struct bytes zip = {0};
    uint64_t comp = zip_bytes(&zip, data, n, 100, 50);
    in[2].path = strdup(put_file("pause.zip", zip.p, zip.len));
    in[2].zm = (io_zip_member){.data_off = 100, .comp_size = comp, .size = n,
                               .crc = (uint32_t)crc32(0, data, (uInt)n), .method = IO_ZIP_DEFLATED};
    in[3] = in[2]; /* the same file, the central directory's CRC-32 wrong */
    in[3].zm.crc ^= 1;
    io_reader *r;
    CHECK(pause_open(&r, &in[2]) == 0);
    uint8_t head[16];
    int fd;
    uint64_t off, end;
    CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
    CHECKF(io_reader_stream_member(r, &fd, &off, &end) && off == 100 && end == 100 + comp,
           "zip member's deflate data: %llu to %llu", (unsigned long long)off,
           (unsigned long long)end);
    io_reader_close(r);
    enum { NBUF = 3 };
    void *bufs[NBUF];
    for (int i = 0; i < NBUF; i++)
        bufs[i] = malloc(chunk);
    static const int pause_after[] = {0, 1, 5, 40, 1000};
    int paused_seen = 0;
    for (int f = 0; f < 4; f++) {
        int bad = f % 2;
        for (size_t pi = 0; pi < sizeof pause_after / sizeof pause_after[0]; pi++) {
            CHECK(pause_open(&r, &in[f]) == 0);
            uint8_t *got = malloc(n + chunk);
            size_t have = 0;
            pl_ring *pl;
            CHECK(pl_open_pausable(&pl, r, bufs, NBUF, NBUF, chunk, NULL, 0, UINT64_MAX, 0,
                                   grain) == 0);
            pl_chunk c;
            int k = 0, rc;
            while ((rc = pl_next(pl, &c)) > 0) {
                CHECK(c.offset == have);
                memcpy(got + have, c.data, c.bytes);
                have += c.bytes;
                pl_release(pl, c.slot);
                if (++k == pause_after[pi] || pause_after[pi] == 0)
                    io_reader_pause(r);
            }
            const void *held;
            size_t held_len;
            int paused = pl_paused(pl, &held, &held_len);
            if (!paused) { /* the member ended first: the ring read it whole */
                CHECKF(rc == (bad ? IO_ERR_CRC : 0) && (bad || (have == n && !memcmp(got, data, n))),
                       "%s, pause after %d chunks: rc %d, %zu bytes", in[f].path, pause_after[pi],
                       rc, have);
                pl_close(pl);
                io_reader_close(r);
                free(got);
                continue;
            }
            paused_seen++;
            CHECKF(rc == 0 && have % grain == 0 && held_len < grain, "rc %d have %zu held %zu", rc,
                   have, held_len);
            memcpy(got + have, held, held_len);
            uint64_t bit, len;
            const uint8_t *window;
            size_t wlen;
            uint32_t crc;
            CHECK(io_reader_pause_point(r, &bit, &window, &wlen, &crc, &len));
            CHECKF(len == have + held_len && wlen == (len < 32768 ? len : 32768) &&
                       !memcmp(window, data + len - wlen, wlen) &&
                       crc == (uint32_t)crc32(0, data, (uInt)len),
                   "point after %d chunks: len %llu", pause_after[pi], (unsigned long long)len);
            size_t total = have;
            pl_ring *rest;
            CHECK(io_reader_continue_member(r, bit, 0, window, wlen, crc, len, len, "test") == 0);
            CHECK(pl_open_at(&rest, r, bufs, NBUF, NBUF, chunk, held, held_len, have, UINT64_MAX,
                             0) == 0);
            pl_close(pl); /* held was the paused ring's */
            while ((rc = pl_next(rest, &c)) > 0) {
                CHECK(c.offset == total);
                memcpy(got + total, c.data, c.bytes);
                total += c.bytes;
                pl_release(rest, c.slot);
            }
            /* on in parallel where 64 KiB of compressed bytes follow, else in order */
            char how[512];
            io_reader_describe(r, how, sizeof how);
            uint64_t follow = (f < 2 ? gz.len : 100 + comp) - bit / 8;
            CHECKF(follow >= (64u << 10)
                       ? strstr(how, "single deflate streams: 1, each on") != NULL && !strstr(how, "in order: 1")
                       : strstr(how, f < 2 ? "gzip members inflated in order: 1 (test)"
                                           : "deflated zip members inflated in order: 1 (test)") != NULL,
                   "-v, %llu bytes after the pause: %s", (unsigned long long)follow, how);
            if (bad)
                CHECKF(rc == IO_ERR_CRC && strstr(pl_status(rest)->text, "incorrect data check"),
                       "rc %d: %s", rc, pl_status(rest)->text);
            else
                CHECKF(rc == 0 && total == n && !memcmp(got, data, n),
                       "%s, pause after %d chunks: %zu bytes", in[f].path, pause_after[pi], total);
            pl_close(rest);
            io_reader_close(r);
            free(got);
        }
    }
    CHECK(paused_seen >= 12); /* the pauses fell inside the members */
    for (int i = 0; i < NBUF; i++)
        free(bufs[i]);
    for (int f = 0; f < 3; f++) /* in[3] is in[2]'s file */
        free((char *)in[f].path);
    free(gz.p);
    free(zip.p);
    free(data);
}

/* A device that ends a deflated zip member's final block hands it back
 * past it (io_reader_continue_member with final): the reader checks the
 * central directory's CRC-32 and length, and that the stream ends where the
 * member's compressed bytes do, with the words of a read in order. */
static void test_zip_member_final(void)
{
    const size_t n = 300000;
    uint8_t *data = malloc(n);
    fill(data, n);
    struct bytes zip = {0};
    const size_t around = 64;
    uint64_t comp = zip_bytes(&zip, data, n, around, around);
    const char *path = put_file("final.zip", zip.p, zip.len);
    io_zip_member good = {.data_off = around, .comp_size = comp, .size = n,
                          .crc = (uint32_t)crc32(0, data, (uInt)n), .method = IO_ZIP_DEFLATED};
    /* the stream's end: where zlib stops, as a bit offset of the file */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    inflateInit2(&zs, -15);
    uint8_t *out = malloc(n);
    zs.next_in = zip.p + around;
    zs.avail_in = (uInt)comp;
    zs.next_out = out;
    zs.avail_out = (uInt)n;
    CHECK(inflate(&zs, Z_FINISH) == Z_STREAM_END);
    uint64_t end_bit = (around + comp - zs.avail_in) * 8 - (uint64_t)(zs.data_type & 7);
    inflateEnd(&zs);
    struct {
        io_zip_member m;
        uint32_t crc;
        uint64_t len;
        int rc;
        const char *words;
    } cases[] = {
        {good, good.crc, n, 0, NULL},
        {good, good.crc ^ 1, n, IO_ERR_CRC, "incorrect data check"},
        {good, good.crc, n - 1, IO_ERR_CRC, "incorrect length check"},
        {good, good.crc, n, IO_ERR_CORRUPT, "ends 1 bytes before the member's data"},
    };
    cases[3].m.comp_size = comp + 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        io_reader *r;
        CHECK(io_reader_open_zip_member(&r, path, &cases[i].m, NULL) == 0);
        uint8_t head[16];
        CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
        int rc = io_reader_continue_member(r, end_bit, 1, out + n - 32768, 32768, cases[i].crc,
                                           cases[i].len, n, "test");
        uint8_t more[8];
        if (rc == 0)
            CHECK(io_reader_read(r, more, sizeof more) == 0);
        CHECKF(rc == cases[i].rc &&
                   (!cases[i].words || strstr(io_reader_status(r)->text, cases[i].words)),
               "case %zu: rc %d: %s", i, rc, io_reader_status(r)->text);
        io_reader_close(r);
    }
    free(out);
    free(zip.p);
    free(data);
}

/* dl_iterate_phdr callback: the program's own thread-local segment size. */
static int tls_size_of_program(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            *(size_t *)data = info->dlpi_phdr[i].p_memsz;
    return 1; /* the program comes first: stop there */
}

/* The threads of this process (entries of /proc/self/task); -1 where it
 * cannot be read. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A small file is read without the reading threads' pool (in a child,
 * whose pool nothing has started yet): starting a thread per core costs
 * a small input's run more than its work. A file that grew after it was
 * opened is read whole, its growth included. */
static void test_small_reads(void)
{
    uint8_t data[5000];
    fill(data, sizeof data);
    const char *path = put_file("small.bin", data, sizeof data);
    pid_t pid = fork();
    if (pid == 0) {
        io_reader *r;
        io_status err;
        struct bytes out = {0};
        int ok = io_reader_open(&r, path, &err) == 0 && read_all(r, 16u << 20, &out, 6000) == 0 &&
                 out.len == sizeof data && !memcmp(out.p, data, sizeof data);
        io_reader_close(r);
        _exit(!ok ? 100 : thread_count() < 0 ? 0 : thread_count());
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    CHECKF(WEXITSTATUS(status) <= 1, "child: %d (100: bad bytes; else its threads)",
           WEXITSTATUS(status));
    io_reader *r;
    io_status err;
    CHECK(io_reader_open(&r, path, &err) == 0);
    FILE *f = fopen(path, "ab");
    CHECK(f && fwrite(data, 1, 1000, f) == 1000);
    if (f)
        fclose(f);
    struct bytes out = {0};
    CHECK(read_all(r, 1u << 20, &out, 7000) == 0);
    CHECKF(out.len == sizeof data + 1000 && !memcmp(out.p, data, sizeof data) &&
               !memcmp(out.p + sizeof data, data, 1000),
           "%zu bytes", out.len);
    io_reader_close(r);
    free(out.p);
}

/* Fills buf with text lines of small random numbers (compresses about 5:1). */
static void fill_lines(uint8_t *buf, size_t n)
{
    size_t at = 0;
    while (at < n) {
        char line[32];
        int k = snprintf(line, sizeof line, "row %u value %u\n", (unsigned)(rnd() % 1000),
                         (unsigned)(rnd() % 50));
        size_t take = (size_t)k < n - at ? (size_t)k : n - at;
        memcpy(buf + at, line, take);
        at += take;
    }
}

/* Decodes the gzip members in mem with zlib alone (gzip -d's view of a
 * first member: its bytes, or zlib's message for its failure) into *out;
 * returns NULL on success. */
static const char *zlib_first_member(const uint8_t *mem, size_t len, struct bytes *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CHECK(inflateInit2(&zs, 15 + 16) == Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)mem;
    zs.avail_in = (uInt)len;
    static char msg[128];
    const char *why = NULL;
    uint8_t buf[65536];
    for (;;) {
        zs.next_out = buf;
        zs.avail_out = sizeof buf;
        int rc = inflate(&zs, Z_NO_FLUSH);
        append(out, buf, sizeof buf - zs.avail_out);
        if (rc == Z_STREAM_END)
            break;
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
            why = "unexpected end of compressed data";
            break;
        }
        if (rc != Z_OK) {
            snprintf(msg, sizeof msg, "%s", zs.msg ? zs.msg : "?");
            why = msg;
            break;
        }
    }
    inflateEnd(&zs);
    return why;
}

/* Whether the reader's description says that `whole` members were decoded
 * whole on the reading thread (0: none). */
static int decoded_whole(io_reader *r, int whole)
{
    char how[512], want[96];
    io_reader_describe(r, how, sizeof how);
    snprintf(want, sizeof want, "decoded whole on the reading thread: %d;", whole);
    strcat(how, ";");
    return whole ? strstr(how, want) != NULL : strstr(how, "decoded whole") == NULL;
}

/* A member of less than 64 KiB of compressed data is decoded whole on the
 * reading thread: every read size gives its bytes; a trailer's length
 * that is another member's (the first guess of its size) only makes the
 * buffer grow; and damaged data gives zlib's verdict and message, zlib
 * having read the member, as without this path. */
static void test_whole_member(void)
{
    static const size_t sizes[] = {0, 1, 100, 20000, 200000};
    static const size_t steps[] = {1, 16, 4097, (size_t)4 << 20};
    size_t most = 300000;
    uint8_t *data = malloc(most);
    int bad = 0, runs = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        for (int level = 1; level <= 9; level += 8) {
            size_t n = sizes[si];
            fill_lines(data, n);
            struct bytes gz = {0};
            gzip_member(&gz, data, n, level, 0);
            CHECK(gz.len < 65536);
            for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
                io_reader *r;
                struct bytes out = {0};
                CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
                int rc = read_all(r, steps[k], &out, most + 10);
                if (rc != 0 || out.len != n || (n && memcmp(out.p, data, n)) ||
                    !decoded_whole(r, 1)) {
                    fprintf(stderr, "size %zu level %d step %zu: rc %d, %zu bytes\n", n, level,
                            steps[k], rc, out.len);
                    bad++;
                }
                runs++;
                io_reader_close(r);
                free(out.p);
            }
            free(gz.p);
        }
    }
    CHECKF(bad == 0 && runs == 40, "%d of %d reads wrong", bad, runs);

    /* Two members, 3 MB of zeros and 10 bytes: the first's guess is the
     * second's length (a buffer of 2 MiB, a huge page, grows); then the
     * zeros alone, whose guess is right */
    size_t nz = 3000000;
    uint8_t *zeros = calloc(1, nz);
    fill_lines(data, 10);
    struct bytes two = {0};
    gzip_member(&two, zeros, nz, 9, 0);
    gzip_member(&two, data, 10, 9, 0);
    io_reader *r;
    struct bytes out = {0};
    CHECK(io_reader_open_mem(&r, two.p, two.len, NULL) == 0);
    CHECK(read_all(r, 1u << 20, &out, 2 * nz) == 0);
    CHECK(out.len == nz + 10 && !memcmp(out.p, zeros, nz) && !memcmp(out.p + nz, data, 10));
    CHECK(decoded_whole(r, 2));
    io_reader_close(r);
    out.len = 0;
    struct bytes gz = {0};
    gzip_member(&gz, zeros, nz, 9, 0);
    CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
    CHECK(read_all(r, 1u << 20, &out, 2 * nz) == 0 && out.len == nz && !memcmp(out.p, zeros, nz));
    CHECK(decoded_whole(r, 1));
    io_reader_close(r);
    free(zeros);
    free(gz.p);
    free(two.p);

    /* Damage anywhere past the header: zlib's bytes, or its verdict with its
     * message, and zlib (not the whole path) read the member */
    size_t n = 20000;
    fill_lines(data, n);
    gz = (struct bytes){0};
    gzip_member(&gz, data, n, 6, 0);
    int wrong = 0, errors = 0;
    for (int t = 0; t < 400; t++) {
        size_t pos = 10 + rnd() % (gz.len - 10);
        uint8_t bit = (uint8_t)(1u << (rnd() % 8));
        gz.p[pos] ^= bit;
        struct bytes want = {0};
        const char *why = zlib_first_member(gz.p, gz.len, &want);
        out.len = 0;
        CHECK(io_reader_open_mem(&r, gz.p, gz.len, NULL) == 0);
        int rc = read_all(r, 1u << 20, &out, 2 * n);
        int ok = why ? rc < 0 && strstr(io_reader_error(r), why) != NULL && decoded_whole(r, 0)
                     : rc == 0 && out.len >= want.len && !memcmp(out.p, want.p, want.len);
        if (!ok) {
            fprintf(stderr, "flip at %zu: zlib %s, reader rc %d: %s\n", pos, why ? why : "ok", rc,
                    io_reader_error(r));
            wrong++;
        }
        errors += why != NULL;
        io_reader_close(r);
        gz.p[pos] ^= bit;
        free(want.p);
    }
    CHECKF(wrong == 0 && errors > 200, "%d of 400 flips differ from zlib (%d errors)", wrong,
           errors);
    free(gz.p);
    free(out.p);
    free(data);
}

/* Every thread the process starts zeroes its copy of the thread-local
 * storage, faulting in fresh pages (tens of microseconds each on some
 * VMs): the readers' batch tables and header buffers are on the heap, so
 * the library's whole thread-local storage (linked into this program) stays
 * under 8 KiB. */
static void test_thread_local_small(void)
{
    size_t tls = 0;
    dl_iterate_phdr(tls_size_of_program, &tls);
    CHECKF(tls < 8192, "thread-local storage of %zu bytes", tls);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_plain);
    RUN(test_open_errors);
    RUN(test_single_member);
    RUN(test_parallel_mapped);
    RUN(test_multi_member);
    RUN(test_stream_member);
    RUN(test_bgzf);
    RUN(test_open_window);
    RUN(test_truncated);
    RUN(test_bgzf_bad_block);
    RUN(test_bgzf_windows);
    RUN(test_flipped);
    RUN(test_trailing);
    RUN(test_external);
    RUN(test_skip);
    RUN(test_pause);
    RUN(test_zip_member_final);
    RUN(test_member_verdict);
    RUN(test_thread_local_small);
    RUN(test_small_reads);
    RUN(test_whole_member);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
