/* fuzz_reader.c - fuzz harness for the byte reader (plain and gzip).
 *
 * Reads the input through io_reader_open_mem in odd-sized pieces into a
 * bounded buffer, stopping after OUT_CAP bytes so that highly compressed
 * inputs stay fast. Plain input must come back unchanged; the status, and
 * on success the bytes, must not depend on the piece sizes; errors must be
 * sticky. The same bytes read from a pipe (written in pieces of every size
 * by a thread, read through the reader's spool) give the same status, and
 * on success the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/reader.h"
#include "tests/pipe_feeder.h"

#define OUT_CAP ((uint64_t)64 << 20)
#define PIECE_MAX 65536

static uint8_t piece[PIECE_MAX];

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

struct result {
    int status;     /* 0, 1 when capped, or a negative io_error */
    uint64_t len;
    uint32_t crc;
    int garbage;
};

/* Reads everything in pieces cycling through sizes, from memory or (pipe)
 * from a pipe; when plain, compares with the input. */
static struct result read_all(const uint8_t *data, size_t size, const size_t *sizes,
                              size_t nsizes, int pipe)
{
    struct result res = {0, 0, (uint32_t)crc32(0L, Z_NULL, 0), 0};
    io_reader *r;
    io_status err;
    pipe_feeder f;
    int rc;
    if (pipe) { /* the reader opens the pipe by name and makes its own spool */
        char name[32];
        int fd = pipe_feeder_start(&f, data, size, 1 + size / 3, size);
        snprintf(name, sizeof name, "/dev/fd/%d", fd);
        rc = io_reader_open(&r, name, &err);
    } else {
        rc = io_reader_open_mem(&r, data, size, &err);
    }
    require(rc == 0);
    int plain = !io_reader_compressed(r);
    for (size_t i = 0;; i++) {
        size_t want = sizes[i % nsizes];
        ssize_t k = io_reader_read(r, piece, want);
        if (k < 0) {
            require(k == IO_ERR_TRUNCATED || k == IO_ERR_CORRUPT || k == IO_ERR_CRC ||
                    k == IO_ERR_NOMEM);
            require(io_reader_error(r)[0] != '\0');
            require(io_reader_read(r, piece, 1) == k);
            res.status = (int)k;
            break;
        }
        require((size_t)k <= want);
        if (plain)
            require(res.len + (uint64_t)k <= size && !memcmp(piece, data + res.len, (size_t)k));
        res.crc = (uint32_t)crc32(res.crc, piece, (uInt)k);
        res.len += (uint64_t)k;
        if ((size_t)k < want) {
            require(io_reader_read(r, piece, want) == 0);
            break;
        }
        if (res.len >= OUT_CAP) {
            res.status = 1;
            break;
        }
    }
    if (plain && res.status == 0)
        require(res.len == size);
    require(io_reader_raw_offset(r) <= size);
    res.garbage = io_reader_trailing_garbage(r);
    io_reader_close(r);
    if (pipe)
        pipe_feeder_end(&f, NULL);
    return res;
}

/* The first gzip member of data as zlib alone decodes it: 1 and its bytes'
 * length and CRC-32 in *res, or 0 where zlib refuses it; -1 past OUT_CAP. */
static int zlib_first_member(const uint8_t *data, size_t size, struct result *res)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    require(inflateInit2(&zs, 15 + 16) == Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)size;
    *res = (struct result){0, 0, (uint32_t)crc32(0L, Z_NULL, 0), 0};
    int rc;
    do {
        zs.next_out = piece;
        zs.avail_out = sizeof piece;
        rc = inflate(&zs, Z_NO_FLUSH);
        res->crc = (uint32_t)crc32(res->crc, piece, (uInt)(sizeof piece - zs.avail_out));
        res->len += sizeof piece - zs.avail_out;
    } while (rc == Z_OK && res->len < OUT_CAP);
    inflateEnd(&zs);
    return rc == Z_STREAM_END ? 1 : rc == Z_OK ? -1 : 0;
}

/* Decodes data twice with different piece sizes and compares; a gzip
 * member's verdict and bytes are zlib's. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t odd[] = {1, 3, 4097, 7, PIECE_MAX, 2};
    static const size_t whole[] = {PIECE_MAX};
    struct result a = read_all(data, size, odd, sizeof(odd) / sizeof(odd[0]), 0);
    if (a.status == 1 || a.len > ((uint64_t)1 << 20))
        return 0;
    struct result b = read_all(data, size, whole, 1, 0);
    struct result c = read_all(data, size, whole, 1, 1);
    require(a.status == b.status && c.status == b.status);
    /* Bytes handed out before an error depend on the piece sizes. */
    if (a.status == 0)
        require(a.len == b.len && a.crc == b.crc && a.garbage == b.garbage);
    if (c.status == 0)
        require(c.len == b.len && c.crc == b.crc && c.garbage == b.garbage);
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        struct result z;
        int zok = zlib_first_member(data, size, &z);
        if (zok == 0)
            require(b.status < 0);
        if (zok == 1 && b.status == 0 && b.len == z.len)
            require(b.crc == z.crc);
        if (zok == 1 && b.status == 0)
            require(b.len >= z.len);
    }
    return 0;
}
