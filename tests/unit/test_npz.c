/* test_npz.c - zip archives (.npz): the directory parser and the member
 * reader, on archives built here byte by byte (stored, deflated, zip64
 * extras and end records, comments, local headers unlike the central ones)
 * and on every way of damaging one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/npz.h"
#include "io/reader.h"
#include "check.h"
#define RND_SEED 0x2545f4914f6cdd1dull
#include "rnd.h"

static char tmpdir[] = "/tmp/gb_npz_XXXXXX";

#include "bytes.h"


/* Appends a little-endian value of `bytes` bytes. */
static void put_le(struct bytes *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    append(b, t, (size_t)bytes);
}

/* One member to write, and the ways to write it wrong. */
typedef struct {
    const char *name;
    const uint8_t *data;
    size_t len;
    int method;               /* 0 stored, 8 deflate, anything else as given */
    int zip64_local;          /* zip64 extra in the local header, sizes all ones */
    int zip64_central;        /* zip64 extra in the central entry: sizes and offset */
    const char *local_name;   /* NULL: the same as name */
    size_t local_pad;         /* bytes of an unknown extra field in the local header */
    unsigned flags;
    uint32_t crc_xor;         /* damages the central CRC-32 */
    int64_t size_delta;       /* damages the central size */
    int64_t csize_delta;      /* damages the central compressed size */
    const char *junk;         /* bytes after the deflate stream, counted in its size */
    int64_t hoff_delta;       /* damages the central header offset */
} zmember;

/* Archive-wide choices. */
typedef struct {
    int zip64_end;            /* zip64 end record and locator */
    size_t comment;           /* bytes of archive comment */
    int64_t cd_off_delta;     /* damages the end record's directory offset */
    int64_t entries_delta;    /* damages the end record's count */
} zopts;

/* Raw deflate of data (level 6). */
static struct bytes deflate_raw(const uint8_t *data, size_t len)
{
    struct bytes out = {0};
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CHECK(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    out.cap = deflateBound(&zs, len) + 16;
    out.p = malloc(out.cap);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out.p;
    zs.avail_out = (uInt)out.cap;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    out.len = zs.total_out;
    deflateEnd(&zs);
    return out;
}

/* Builds an archive of n members as o says. */
static struct bytes build_zip(const zmember *ms, int n, const zopts *o)
{
    static const zopts plain;
    struct bytes z = {0}, cd = {0};
    uint64_t offs[16];
    if (!o)
        o = &plain;
    for (int i = 0; i < n; i++) {
        const zmember *m = &ms[i];
        struct bytes body = {0};
        if (m->method == 8)
            body = deflate_raw(m->data, m->len);
        else
            append(&body, m->data, m->len);
        if (m->junk)
            append(&body, m->junk, strlen(m->junk));
        uint32_t crc = (uint32_t)crc32(0, m->data, (uInt)m->len);
        const char *ln = m->local_name ? m->local_name : m->name;
        offs[i] = z.len;
        put_le(&z, 0x04034b50, 4);
        put_le(&z, m->zip64_local ? 45 : 20, 2);
        put_le(&z, m->flags, 2);
        put_le(&z, (uint64_t)m->method, 2);
        put_le(&z, 0, 4); /* time, date */
        put_le(&z, crc, 4);
        put_le(&z, m->zip64_local ? 0xffffffffu : body.len, 4);
        put_le(&z, m->zip64_local ? 0xffffffffu : m->len, 4);
        put_le(&z, strlen(ln), 2);
        put_le(&z, (m->zip64_local ? 20 : 0) + (m->local_pad ? 4 + m->local_pad : 0), 2);
        append(&z, ln, strlen(ln));
        if (m->zip64_local) {
            put_le(&z, 1, 2);
            put_le(&z, 16, 2);
            put_le(&z, m->len, 8);
            put_le(&z, body.len, 8);
        }
        if (m->local_pad) {
            put_le(&z, 0xcafe, 2);
            put_le(&z, m->local_pad, 2);
            for (size_t k = 0; k < m->local_pad; k++)
                put_le(&z, 0x55, 1);
        }
        append(&z, body.p, body.len);
        uint64_t size = m->len + (uint64_t)m->size_delta;
        uint64_t csize = body.len + (uint64_t)m->csize_delta;
        uint64_t hoff = offs[i] + (uint64_t)m->hoff_delta;
        put_le(&cd, 0x02014b50, 4);
        put_le(&cd, 20, 2);
        put_le(&cd, m->zip64_central ? 45 : 20, 2);
        put_le(&cd, m->flags, 2);
        put_le(&cd, (uint64_t)m->method, 2);
        put_le(&cd, 0, 4);
        put_le(&cd, crc ^ m->crc_xor, 4);
        put_le(&cd, m->zip64_central ? 0xffffffffu : csize, 4);
        put_le(&cd, m->zip64_central ? 0xffffffffu : size, 4);
        put_le(&cd, strlen(m->name), 2);
        put_le(&cd, m->zip64_central ? 28 : 0, 2);
        put_le(&cd, 0, 2);  /* comment */
        put_le(&cd, 0, 2);  /* disk */
        put_le(&cd, 0, 2);  /* internal attributes */
        put_le(&cd, 0, 4);  /* external attributes */
        put_le(&cd, m->zip64_central ? 0xffffffffu : hoff, 4);
        append(&cd, m->name, strlen(m->name));
        if (m->zip64_central) {
            put_le(&cd, 1, 2);
            put_le(&cd, 24, 2);
            put_le(&cd, size, 8);
            put_le(&cd, csize, 8);
            put_le(&cd, hoff, 8);
        }
        free(body.p);
    }
    uint64_t cd_off = z.len, entries = (uint64_t)(n + o->entries_delta);
    append(&z, cd.p, cd.len);
    free(cd.p);
    if (o->zip64_end) {
        uint64_t at = z.len;
        put_le(&z, 0x06064b50, 4);
        put_le(&z, 44, 8);
        put_le(&z, 45, 2);
        put_le(&z, 45, 2);
        put_le(&z, 0, 4);
        put_le(&z, 0, 4);
        put_le(&z, entries, 8);
        put_le(&z, entries, 8);
        put_le(&z, at - cd_off, 8);
        put_le(&z, cd_off + (uint64_t)o->cd_off_delta, 8);
        put_le(&z, 0x07064b50, 4);
        put_le(&z, 0, 4);
        put_le(&z, at, 8);
        put_le(&z, 1, 4);
    }
    uint64_t cd_len = (o->zip64_end ? z.len - 76 : z.len) - cd_off;
    put_le(&z, 0x06054b50, 4);
    put_le(&z, 0, 4);
    put_le(&z, o->zip64_end ? 0xffff : entries, 2);
    put_le(&z, o->zip64_end ? 0xffff : entries, 2);
    put_le(&z, o->zip64_end ? 0xffffffffu : cd_len, 4);
    put_le(&z, o->zip64_end ? 0xffffffffu : cd_off + (uint64_t)o->cd_off_delta, 4);
    put_le(&z, o->comment, 2);
    for (size_t k = 0; k < o->comment; k++)
        put_le(&z, k & 1 ? 'P' : 'K', 1);
    return z;
}

/* Reads everything r gives, in pieces of `step` bytes, into a new buffer. */
static ssize_t slurp(io_reader *r, uint8_t **out, size_t step)
{
    struct bytes b = {0};
    uint8_t *piece = malloc(step);
    ssize_t k;
    while ((k = io_reader_read(r, piece, step)) > 0)
        append(&b, piece, (size_t)k);
    free(piece);
    *out = b.p;
    return k < 0 ? k : (ssize_t)b.len;
}

/* Member m of archive z (also in file path) reads back as want, from
 * memory and from the file, at several read sizes; a stored one can be
 * positioned and a deflated one cannot. */
static void check_member(const struct bytes *z, const char *path, const npz_member *m,
                         const uint8_t *want, size_t len)
{
    io_status err;
    for (int src = 0; src < 2; src++) {
        for (size_t step = 1; step <= 1u << 20; step *= 97) {
            io_reader *r;
            int rc = src ? io_reader_open_zip_member(&r, path, &m->data, &err)
                         : io_reader_open_zip_member_mem(&r, z->p, z->len, &m->data, &err);
            CHECKF(rc == 0, "%s: %s", m->name, err.text);
            if (rc < 0)
                continue;
            CHECK(!io_reader_compressed(r));
            CHECK(io_reader_file_size(r) == (int64_t)m->data.comp_size);
            uint8_t *got = NULL;
            ssize_t n = slurp(r, &got, step);
            CHECKF(n == (ssize_t)len, "%s: %zd of %zu bytes: %s", m->name, n, len,
                   io_reader_error(r));
            CHECK(n != (ssize_t)len || !len || !memcmp(got, want, len));
            CHECK(io_reader_raw_offset(r) == m->data.comp_size);
            free(got);
            io_reader_close(r);
        }
    }
    io_reader *r;
    uint64_t size = 0;
    CHECK(io_reader_open_zip_member(&r, path, &m->data, &err) == 0);
    if (m->data.method == IO_ZIP_DEFLATED) {
        CHECK(io_reader_data_size(r, &size) == IO_ERR_SEEK);
        CHECK(strstr(io_reader_error(r), "deflated zip member") != NULL);
    } else {
        CHECK(io_reader_data_size(r, &size) == 0 && size == len);
        uint64_t off = len / 3, cut = len - off;
        uint8_t *got = NULL;
        CHECK(io_reader_seek(r, off, UINT64_MAX) == 0);
        CHECK(slurp(r, &got, 4096) == (ssize_t)cut && (!cut || !memcmp(got, want + off, cut)));
        free(got);
        CHECK(io_reader_seek(r, 1, len ? len - 1 : 0) == 0 || len == 0);
        CHECK(io_reader_seek(r, 0, UINT64_MAX) == 0);
        CHECK(io_reader_skip(r, len + 100) == (int64_t)len);
        uint8_t extra;
        CHECK(io_reader_read(r, &extra, 1) == 0);
    }
    io_reader_close(r);
}

/* Fills n bytes with random values. */
static uint8_t *random_bytes(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rnd() >> 24) & (i % 5 ? 0xff : 0x0f);
    return p;
}

/* Stored and deflated members, empty and not, plain and zip64, with and
 * without a comment, read back in archive order and found by key and name. */
static void test_round_trip(void)
{
    size_t sizes[4] = {0, 1, 1000, 300000};
    uint8_t *data[4];
    for (int i = 0; i < 4; i++)
        data[i] = random_bytes(sizes[i]);
    for (int variant = 0; variant < 6; variant++) {
        zmember ms[8];
        char names[8][16];
        for (int i = 0; i < 8; i++) {
            snprintf(names[i], sizeof names[i], i == 5 ? "x%d" : "arr_%d.npy", i);
            ms[i] = (zmember){.name = names[i], .data = data[i % 4], .len = sizes[i % 4],
                              .method = i < 4 ? 0 : 8};
            ms[i].zip64_local = variant == 1 || (variant == 4 && i % 2);
            ms[i].zip64_central = variant == 2 || (variant == 4 && i % 3 == 0);
            ms[i].local_pad = variant == 3 ? (size_t)(i * 7) : 0;
            ms[i].flags = variant == 5 ? 0x0808 : 0; /* descriptor flag, UTF-8 names */
        }
        zopts o = {.zip64_end = variant == 2 || variant == 4,
                   .comment = variant == 3 ? 65535 : variant == 4 ? 17 : 0};
        struct bytes z = build_zip(ms, 8, &o);
        const char *path = put_file("a.npz", z.p, z.len);
        io_status err;
        npz_archive *a;
        int rc = npz_open_mem(&a, z.p, z.len, &err);
        CHECKF(rc == 0, "variant %d: %s", variant, err.text);
        if (rc == 0) {
            CHECK(npz_count(a) == 8);
            for (size_t i = 0; i < npz_count(a) && i < 8; i++) {
                const npz_member *m = npz_member_at(a, i);
                CHECK(!strcmp(m->name, names[i]));
                CHECK(npz_find(a, m->key) == m && npz_find(a, m->name) == m);
                CHECK(m->data.method == ms[i].method && m->data.size == ms[i].len);
                check_member(&z, path, m, ms[i].data, ms[i].len);
            }
            CHECK(!strcmp(npz_member_at(a, 1)->key, "arr_1"));
            CHECK(!strcmp(npz_member_at(a, 5)->key, "x5"));
            CHECK(npz_find(a, "arr_9") == NULL && npz_find(a, "arr") == NULL);
            npz_close(a);
        }
        CHECKF(npz_open(&a, path, &err) == 0 && npz_count(a) == 8, "%s", err.text);
        npz_close(a);
        free(z.p);
    }
    /* an archive with no members (np.savez with no arrays) */
    struct bytes z = build_zip(NULL, 0, NULL);
    npz_archive *a;
    CHECK(npz_open_mem(&a, z.p, z.len, NULL) == 0 && npz_count(a) == 0);
    CHECK(npz_is_magic(z.p, z.len));
    npz_close(a);
    free(z.p);
    for (int i = 0; i < 4; i++)
        free(data[i]);
}

/* npz_open_mem must refuse the archive with a reason containing `want`. */
static void expect_refused(const char *what, const zmember *ms, int n, const zopts *o,
                           const char *want)
{
    struct bytes z = build_zip(ms, n, o);
    io_status err;
    npz_archive *a = NULL;
    int rc = npz_open_mem(&a, z.p, z.len, &err);
    CHECKF(rc == IO_ERR_FORMAT && a == NULL && strstr(err.text, want), "%s: rc %d, [%s]", what, rc,
           err.text);
    npz_close(a);
    free(z.p);
}

/* Every damage to the directory and the local headers is refused, naming
 * the member. */
static void test_refused(void)
{
    uint8_t d[200];
    for (size_t i = 0; i < sizeof d; i++)
        d[i] = (uint8_t)(rnd() >> 11);
    zmember two[2] = {{.name = "a.npy", .data = d, .len = 100, .method = 8},
                      {.name = "b.npy", .data = d, .len = 200, .method = 0}};
    zmember m[2];
#define VARY(field, value) (memcpy(m, two, sizeof m), m[0].field = value, m)
    expect_refused("encrypted", VARY(flags, 1), 2, NULL, "member a.npy is encrypted");
    expect_refused("method", VARY(method, 12), 2, NULL, "member a.npy: compression method 12");
    expect_refused("bzip2 stored size", (memcpy(m, two, sizeof m), m[1].size_delta = 1, m), 2,
                   NULL, "member b.npy is stored, but its compressed size");
    expect_refused("overlap", VARY(csize_delta, 40), 2, NULL, "members a.npy and b.npy overlap");
    expect_refused("past the data", (memcpy(m, two, sizeof m), m[1].csize_delta = 1,
                                     m[1].size_delta = 1, m),
                   2, NULL, "member b.npy: its 201 bytes of data run past");
    expect_refused("header outside", VARY(hoff_delta, 100000), 2, NULL,
                   "member a.npy: its local header offset");
    expect_refused("no local header", VARY(hoff_delta, 3), 2, NULL,
                   "member a.npy: no local header at byte 3");
    expect_refused("local name", VARY(local_name, "c.npy"), 2, NULL,
                   "member a.npy: the local header names another member");
    expect_refused("duplicate", VARY(name, "b"), 2, NULL, "two members are named b");
    expect_refused("empty name", VARY(name, ""), 2, NULL, "member 0 has an empty name");
    zopts o = {.cd_off_delta = 1};
    expect_refused("directory offset", two, 2, &o, "the central directory is not where");
    o = (zopts){.cd_off_delta = -1, .zip64_end = 1};
    expect_refused("zip64 directory offset", two, 2, &o, "the central directory is not where");
    o = (zopts){.entries_delta = 1};
    expect_refused("count high", two, 2, &o, "the end record counts 3 members, more than");
    o = (zopts){.entries_delta = -1};
    expect_refused("count low", two, 2, &o, "holds more than the 1 members");
    o = (zopts){.entries_delta = 1000};
    expect_refused("count huge", two, 2, &o, "more than the central directory holds");

    /* byte-level damage: the end record's comment length, a cut file,
     * bytes before the archive, a zip64 extra field too short */
    struct bytes z = build_zip(two, 2, NULL);
    io_status err;
    npz_archive *a = NULL;
    z.p[z.len - 2] = 1;
    CHECK(npz_open_mem(&a, z.p, z.len, &err) == IO_ERR_FORMAT &&
          strstr(err.text, "no end of central directory record"));
    z.p[z.len - 2] = 0;
    CHECK(npz_open_mem(&a, z.p, z.len - 1, &err) == IO_ERR_FORMAT &&
          strstr(err.text, "no end of central directory record"));
    CHECK(npz_open_mem(&a, z.p, 10, &err) == IO_ERR_FORMAT && strstr(err.text, "too short"));
    struct bytes pre = {0};
    append(&pre, "#!/bin/sh\n", 10);
    append(&pre, z.p, z.len);
    CHECK(npz_open_mem(&a, pre.p, pre.len, &err) == IO_ERR_FORMAT &&
          strstr(err.text, "bytes before the archive"));
    free(pre.p);
    free(z.p);
    memcpy(m, two, sizeof m);
    m[0].zip64_central = 1;
    z = build_zip(m, 2, NULL);
    /* the extra field's length 24 becomes 20: the header offset is missing */
    size_t cd = z.len - 22 - (46 + 5 + 28) - (46 + 5);
    CHECK(z.p[cd + 46 + 5 + 2] == 24);
    z.p[cd + 46 + 5 + 2] = 20;
    CHECK(npz_open_mem(&a, z.p, z.len, &err) == IO_ERR_FORMAT &&
          strstr(err.text, "member a.npy: malformed extra field"));
    free(z.p);
    CHECK(npz_open(&a, tmpdir, &err) == IO_ERR_OPEN && strstr(err.text, "regular file"));
    CHECK(npz_open(&a, "/nonexistent/x.npz", &err) == IO_ERR_OPEN &&
          strstr(err.text, "No such file"));
    CHECK(!npz_is_magic((const uint8_t *)"PK\1\2", 4) && !npz_is_magic((const uint8_t *)"PK", 2));
}

/* Opens the first member of an archive built from ms and reads it from
 * memory and from a file: the read must fail with code and a message
 * containing want, or (code 0) succeed. */
static void expect_read(const char *what, const zmember *ms, int code, const char *want)
{
    struct bytes z = build_zip(ms, 1, NULL);
    const char *path = put_file("bad.npz", z.p, z.len);
    io_status err;
    npz_archive *a;
    int rc = npz_open_mem(&a, z.p, z.len, &err);
    CHECKF(rc == 0, "%s: %s", what, err.text);
    if (rc < 0) {
        free(z.p);
        return;
    }
    for (int src = 0; src < 2; src++) {
        io_reader *r;
        const io_zip_member *m = &npz_member_at(a, 0)->data;
        rc = src ? io_reader_open_zip_member(&r, path, m, &err)
                 : io_reader_open_zip_member_mem(&r, z.p, z.len, m, &err);
        CHECKF(rc == 0, "%s: %s", what, err.text);
        if (rc < 0)
            continue;
        uint8_t *got = NULL;
        ssize_t n = slurp(r, &got, 777);
        free(got);
        if (code == 0)
            CHECKF(n == (ssize_t)ms->len, "%s: %zd: %s", what, n, io_reader_error(r));
        else
            CHECKF(n == code && strstr(io_reader_error(r), want), "%s: %zd [%s]", what, n,
                   io_reader_error(r));
        io_reader_close(r);
    }
    npz_close(a);
    free(z.p);
}

/* A deflated member's bad CRC-32, lengths and data fail as a gzip member's
 * would; a stored member's CRC-32 is not read. */
static void test_member_errors(void)
{
    size_t n = 50000;
    uint8_t *d = random_bytes(n);
    zmember m = {.name = "a.npy", .data = d, .len = n, .method = 8};
    zmember v;
#define ONE(field, value) (v = m, v.field = value, &v)
    expect_read("good", &m, 0, "");
    expect_read("crc", ONE(crc_xor, 1), IO_ERR_CRC,
                "deflated data at byte 35: incorrect data check");
    expect_read("size high", ONE(size_delta, 1), IO_ERR_CRC, "incorrect length check");
    expect_read("size low", ONE(size_delta, -1), IO_ERR_CRC, "incorrect length check");
    expect_read("cut", ONE(csize_delta, -10), IO_ERR_TRUNCATED, "unexpected end of compressed data");
    expect_read("junk after the stream", ONE(junk, "JUNK"), IO_ERR_CORRUPT,
                "the stream ends 4 bytes before the member's data");
    expect_read("stored crc", (v = m, v.method = 0, v.crc_xor = 1, &v), 0, "");
    /* damaged deflate data */
    struct bytes z = build_zip(&m, 1, NULL);
    npz_archive *a;
    io_status err;
    CHECK(npz_open_mem(&a, z.p, z.len, &err) == 0);
    io_zip_member dm = npz_member_at(a, 0)->data;
    z.p[dm.data_off] = 0xff; /* a block of reserved type 3 */
    io_reader *r;
    CHECK(io_reader_open_zip_member_mem(&r, z.p, z.len, &dm, &err) == 0);
    uint8_t *got = NULL;
    CHECK(slurp(r, &got, 4096) == IO_ERR_CORRUPT &&
          strstr(io_reader_error(r), "invalid compressed data: invalid block type"));
    free(got);
    io_reader_close(r);
    /* a range outside the file, and methods the reader cannot read */
    io_zip_member bad = dm;
    bad.comp_size = z.len;
    CHECK(io_reader_open_zip_member_mem(&r, z.p, z.len, &bad, &err) == IO_ERR_FORMAT && r == NULL &&
          strstr(err.text, "lies outside the file"));
    const char *path = put_file("range.npz", z.p, z.len);
    CHECK(io_reader_open_zip_member(&r, path, &bad, &err) == IO_ERR_FORMAT);
    bad = dm;
    bad.method = 12;
    CHECK(io_reader_open_zip_member_mem(&r, z.p, z.len, &bad, &err) == IO_ERR_FORMAT);
    CHECK(io_reader_open_zip_member(&r, "-", &dm, &err) == IO_ERR_OPEN);
    npz_close(a);
    free(z.p);
    free(d);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_round_trip);
    RUN(test_refused);
    RUN(test_member_errors);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmpdir);
    return check_summary();
}
