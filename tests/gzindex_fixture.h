/* gzindex_fixture.h - gzip files and seek indexes for the index's unit test
 * and fuzz harness: data of a few kinds, deflated by zlib into a gzip file
 * of one member, written to a temporary file, and its index built with
 * points at every chunk boundary of the parallel decoder. Header only. */
#ifndef GPUBATCH_TESTS_GZINDEX_FIXTURE_H
#define GPUBATCH_TESTS_GZINDEX_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io/gzip/gzindex.h"
#include "io/reader.h"

/* Fills buf with n bytes of kind 0 (float32-like noise), 1 (small int32s)
 * or 2 (text with long repeats), from seed. */
__attribute__((unused)) static void fixture_data(uint8_t *buf, size_t n, int kind, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        if (kind == 0)
            buf[i] = (i % 4 == 3) ? (uint8_t)(0x3e + (s & 1)) : (uint8_t)s;
        else if (kind == 1)
            buf[i] = (i % 4 == 0) ? (uint8_t)(s % 200) : (i % 4 == 1 ? (uint8_t)(s & 1) : 0);
        else
            buf[i] = (s % 64 == 0 && i > 300) ? buf[i - 1 - (size_t)(s >> 40) % 300]
                                              : (uint8_t)("abcdefgh \n"[(s >> 20) % 10]);
    }
}

/* Deflates data into a gzip member (zlib, level and strategy), flushing
 * with `flush` (Z_NO_FLUSH: never) after every `every` bytes, in *gz
 * (malloc'd, *gzlen bytes). 0 or -1. */
__attribute__((unused)) static int fixture_gzip_flushed(const uint8_t *data, size_t n, int level,
                                                        int strategy, int flush, size_t every,
                                                        uint8_t **gz, size_t *gzlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 31, 8, strategy) != Z_OK)
        return -1;
    size_t cap = deflateBound(&zs, (uLong)n) + 64 + (flush == Z_NO_FLUSH ? 0 : (n / every + 1) * 16);
    *gz = malloc(cap);
    zs.next_out = *gz;
    zs.avail_out = (uInt)cap;
    int zr = *gz ? Z_OK : Z_MEM_ERROR;
    for (size_t at = 0; zr == Z_OK && at < n; at += every) {
        size_t k = n - at < every ? n - at : every;
        zs.next_in = (Bytef *)(uintptr_t)(data + at);
        zs.avail_in = (uInt)k;
        zr = deflate(&zs, at + k < n ? flush : Z_FINISH);
    }
    if (zr == Z_OK && n == 0)
        zr = deflate(&zs, Z_FINISH);
    *gzlen = cap - zs.avail_out;
    deflateEnd(&zs);
    return zr == Z_STREAM_END ? 0 : -1;
}

/* Deflates data into a gzip member (zlib, level and strategy) in *gz
 * (malloc'd, *gzlen bytes). 0 or -1. */
__attribute__((unused)) static int fixture_gzip(const uint8_t *data, size_t n, int level, int strategy, uint8_t **gz,
                        size_t *gzlen)
{
    return fixture_gzip_flushed(data, n, level, strategy, Z_NO_FLUSH, n ? n : 1, gz, gzlen);
}

/* Writes n bytes to a new temporary file whose path goes into path (room
 * for 64 bytes). 0 or -1. */
__attribute__((unused)) static int fixture_file(const void *bytes, size_t n, char *path)
{
    snprintf(path, 64, "/tmp/gzindex-fixture-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    int rc = write(fd, bytes, n) == (ssize_t)n ? 0 : -1;
    close(fd);
    return rc;
}

/* Builds the index of the gzip file at path with spacing sp: *idx
 * (malloc'd, *len bytes). 0 or the negative io_error. */
__attribute__((unused)) static int fixture_index_spaced(const char *path, const gzindex_spacing *sp,
                                                        uint8_t **idx, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return IO_ERR_OPEN;
    fseek(f, 0, SEEK_END);
    uint64_t flen = (uint64_t)ftell(f);
    size_t points;
    io_status st;
    int rc = gzindex_build(fileno(f), flen, sp, io_gzip_member_error, idx, len, &points, &st);
    fclose(f);
    return rc;
}

/* Builds the index of the gzip file at path with a point at every deflate
 * block boundary, the parallel decoder cutting chunks of chunk_bytes
 * compressed bytes: *idx (malloc'd, *len bytes). 0 or the negative
 * io_error. */
__attribute__((unused)) static int fixture_index(const char *path, uint64_t chunk_bytes, uint8_t **idx, size_t *len)
{
    gzindex_spacing sp = {chunk_bytes, 0, 0};
    return fixture_index_spaced(path, &sp, idx, len);
}

/* Reads the file at path through the index bytes idx[0..len): 0 with every
 * decoded byte in out (cap bytes, *got of them), else the negative
 * io_error of the index's load, its attachment or the read. */
__attribute__((unused)) static int fixture_read(const char *path, const uint8_t *idx, size_t len, uint64_t from,
                        uint64_t count, uint8_t *out, size_t cap, size_t *got)
{
    gzindex *x;
    io_reader *r;
    io_status st;
    *got = 0;
    int rc = gzindex_parse(&x, "fixture.gzidx", idx, len, &st);
    if (rc < 0)
        return rc;
    if ((rc = io_reader_open(&r, path, &st)) < 0) {
        gzindex_free(x);
        return rc;
    }
    if ((rc = io_reader_set_index(r, x, &st)) == 0 && (from || count != UINT64_MAX))
        rc = io_reader_seek(r, from, count);
    while (rc == 0 && *got < cap) {
        ssize_t k = io_reader_read(r, out + *got, cap - *got);
        if (k < 0)
            rc = (int)k;
        else if (k == 0)
            break;
        else
            *got += (size_t)k;
    }
    io_reader_close(r);
    return rc;
}

#endif
