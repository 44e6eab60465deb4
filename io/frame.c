/* frame.c - sniffing .npy against raw input. */
#include "frame.h"

#include "npz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Product of a raw --shape (0 when any axis is empty, as for .npy), or
 * UINT64_MAX on overflow. */
static uint64_t frame_shape_elems(const uint64_t *shape, int ndim)
{
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 0;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n))
            return UINT64_MAX;
    return n;
}

/* Parses an .npy header whose first bytes are in head. */
static int frame_read_npy(io_reader *r, unsigned char *head, size_t have, frame_info *fi,
                          io_status *st)
{
    npy_header h;
    int rc = npy_parse(head, have, &h, st);
    unsigned char *buf = NULL;
    if (rc == NPY_NEED_MORE) {
        size_t need = h.header_len;
        buf = malloc(need);
        if (!buf)
            return io_fail(st, IO_ERR_NOMEM, "out of memory reading the .npy header");
        memcpy(buf, head, have);
        ssize_t got = io_reader_read(r, buf + have, need - have);
        if (got < 0 || (size_t)got < need - have) {
            free(buf);
            return got < 0 ? io_fail(st, (int)got, "%s", io_reader_error(r))
                           : io_fail(st, IO_ERR_FORMAT, "truncated .npy header (%zu of %zu bytes)",
                                     have + (size_t)got, need);
        }
        rc = npy_parse(buf, need, &h, st);
        free(buf);
        have = 0;
    } else if (rc == 0) {
        have -= h.header_len; /* bytes past the header are data */
        memcpy(fi->prefix, head + h.header_len, have);
    }
    if (rc < 0)
        return rc;
    if (rc != 0)
        return io_fail(st, IO_ERR_FORMAT, "malformed .npy header");
    fi->is_npy = 1;
    fi->dtype = h.dtype;
    fi->swap = h.big_endian ? dt_swap_unit(h.dtype) : 0;
    fi->fortran_order = h.fortran_order;
    fi->ndim = h.ndim;
    memcpy(fi->shape, h.shape, sizeof h.shape);
    fi->data_bytes = h.data_bytes;
    fi->data_offset = h.header_len;
    fi->prefix_len = have;
    return 0;
}

/* Refuses a size the file cannot hold (a header that promises more data
 * than a regular file has, or than its gzip data can inflate to: deflate
 * expands at most 1032 times), before anything is allocated for it. */
static int frame_check_room(io_reader *r, const frame_info *fi, io_status *st)
{
    int64_t size = io_reader_file_size(r);
    uint64_t start = io_reader_tell(r) - fi->prefix_len;
    if (size < 0 || fi->data_bytes == UINT64_MAX)
        return 0;
    if (!io_reader_deflated(r)) {
        uint64_t have = (uint64_t)size > start ? (uint64_t)size - start : 0;
        if (fi->data_bytes <= have)
            return 0;
        return io_fail(st, IO_ERR_TRUNCATED,
                       "truncated: expected %llu bytes of data, the input has %llu",
                       (unsigned long long)fi->data_bytes, (unsigned long long)have);
    }
    uint64_t most = (uint64_t)size < UINT64_MAX / 1032 ? (uint64_t)size * 1032 : UINT64_MAX;
    if (fi->data_bytes <= most)
        return 0;
    return io_fail(
        st, IO_ERR_TRUNCATED,
        "truncated: expected %llu bytes of data, %lld bytes of gzip inflate to %llu at most",
        (unsigned long long)fi->data_bytes, (long long)size, (unsigned long long)most);
}

/* Writes dims as --shape spells them ("3x4"; "()" for none) into buf. */
static void frame_shape_text(const uint64_t *dims, int ndim, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", ndim ? "" : "()");
    for (int d = 0; d < ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", d ? "x" : "",
                                 (unsigned long long)dims[d]);
}

/* Formats gpubatch does not read, told by their first bytes, and what to
 * run instead. */
static const struct {
    const char *magic;
    size_t len;
    const char *what;
    const char *instead;
} frame_foreign[] = {
    {"\x28\xb5\x2f\xfd", 4, "zstd-compressed data", "decompress with zstd -dc"},
    {"\xfd" "7zXZ\0", 6, "xz-compressed data", "decompress with xz -dc"},
    {"\x04\x22\x4d\x18", 4, "lz4-compressed data", "decompress with lz4 -dc"},
    {"\x02\x21\x4c\x18", 4, "lz4-compressed data (legacy format)", "decompress with lz4 -dc"},
    {"LZIP", 4, "lzip-compressed data", "decompress with lzip -dc"},
    {"\x1f\x9d", 2, "compress (.Z) data", "decompress with gzip -dc"},
    {"7z\xbc\xaf\x27\x1c", 6, "a 7-Zip archive", "extract it with 7z x"},
};

/* Whether the n bytes at p start a bzip2 stream: "BZh", the block size
 * digit, then a block's or the end's 48-bit magic when they are there. */
static int frame_is_bzip2(const unsigned char *p, size_t n)
{
    if (n < 4 || memcmp(p, "BZh", 3) || p[3] < '1' || p[3] > '9')
        return 0;
    return n < 10 || !memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) ||
           !memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6);
}

/* Whether every one of the n bytes is printable ASCII or a tab, newline or
 * carriage return. */
static int frame_is_text(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
            return 0;
    return n > 0;
}

/* The reason for input that is not an .npy array and comes with no
 * --dtype: a compressed format named by its magic, an empty input, text,
 * or none of those. */
static int frame_not_npy(io_reader *r, const unsigned char *head, size_t n, io_status *st)
{
    for (size_t i = 0; i < sizeof frame_foreign / sizeof frame_foreign[0]; i++) {
        size_t len = frame_foreign[i].len;
        if (n >= len && !memcmp(head, frame_foreign[i].magic, len))
            return io_fail(st, IO_ERR_FORMAT, "%s: not supported; %s", frame_foreign[i].what,
                           frame_foreign[i].instead);
    }
    const char *why = "not an .npy file (give --dtype to read raw data)";
    if (frame_is_bzip2(head, n))
        why = "bzip2-compressed data: not supported; decompress with bzip2 -dc";
    else if (n == 0 && io_reader_deflated(r))
        why = "compressed data that decompresses to nothing: not an .npy file";
    else if (n == 0 && io_reader_file_size(r) == 0)
        why = "empty file (0 bytes): not an .npy file (give --dtype to read an empty raw array)";
    else if (n == 0)
        why = "empty input (0 bytes): not an .npy file (give --dtype to read an empty raw array)";
    else if (frame_is_text(head, n))
        why = "text, not an .npy file (give --dtype to read raw data)";
    return io_fail(st, IO_ERR_FORMAT, "%s", why);
}

/* Sniffs the input and describes its framing. */
int frame_open(io_reader *r, dt_type raw_dtype, int raw_big_endian, const uint64_t *raw_shape,
               int raw_ndim, frame_info *fi, io_status *st)
{
    memset(fi, 0, sizeof *fi);
    unsigned char head[16];
    ssize_t got = io_reader_read(r, head, sizeof head);
    if (got < 0)
        return io_fail(st, (int)got, "%s", io_reader_error(r));
    if (npy_is_magic(head, (size_t)got)) {
        int rc = frame_read_npy(r, head, (size_t)got, fi, st);
        if (rc < 0)
            return rc;
        if (raw_dtype != DT_NONE && raw_dtype != fi->dtype)
            return io_fail(st, IO_ERR_FORMAT, "--dtype %s contradicts the .npy header's %s",
                           dt_name(raw_dtype), dt_name(fi->dtype));
        if (raw_big_endian && !fi->swap)
            return io_fail(st, IO_ERR_FORMAT,
                           "--dtype says big-endian, the .npy header little-endian");
        if (raw_ndim >= 0 && (raw_ndim != fi->ndim ||
                              memcmp(raw_shape, fi->shape, (size_t)raw_ndim * sizeof *raw_shape))) {
            char given[256], header[256];
            frame_shape_text(raw_shape, raw_ndim, given, sizeof given);
            frame_shape_text(fi->shape, fi->ndim, header, sizeof header);
            return io_fail(st, IO_ERR_FORMAT, "--shape %s contradicts the .npy header's shape %s",
                           given, header);
        }
        return frame_check_room(r, fi, st);
    }
    if (npz_is_magic(head, (size_t)got) && raw_dtype == DT_NONE)
        return io_fail(st, IO_ERR_FORMAT,
                       "a zip archive (.npz) is read from a regular file only, "
                       "uncompressed: give its name");
    if (raw_dtype == DT_NONE)
        return frame_not_npy(r, head, (size_t)got, st);
    fi->dtype = raw_dtype;
    fi->swap = raw_big_endian ? dt_swap_unit(raw_dtype) : 0;
    fi->ndim = raw_ndim;
    fi->data_bytes = UINT64_MAX;
    if (raw_ndim >= 0) {
        uint64_t n = frame_shape_elems(raw_shape, raw_ndim), bytes;
        if (n == UINT64_MAX || __builtin_mul_overflow(n, (uint64_t)dt_size(raw_dtype), &bytes) ||
            bytes > INT64_MAX)
            return io_fail(st, IO_ERR_FORMAT, "--shape is too large");
        memcpy(fi->shape, raw_shape, (size_t)raw_ndim * sizeof *raw_shape);
        fi->data_bytes = bytes;
    }
    memcpy(fi->prefix, head, (size_t)got);
    fi->prefix_len = (size_t)got;
    return frame_check_room(r, fi, st);
}

/* Verifies the amount of raw data once it is known. */
int frame_check_end(const frame_info *fi, uint64_t bytes, io_status *st)
{
    size_t sz = dt_size(fi->dtype);
    if (bytes % sz)
        return io_fail(st, IO_ERR_FORMAT,
                       "size %llu bytes is not a multiple of the %s element size (%zu)",
                       (unsigned long long)bytes, dt_name(fi->dtype), sz);
    if (fi->data_bytes != UINT64_MAX && bytes != fi->data_bytes)
        return io_fail(st, IO_ERR_FORMAT, "holds %llu bytes of data, the shape needs %llu",
                       (unsigned long long)bytes, (unsigned long long)fi->data_bytes);
    return 0;
}

/* Element count once the data size is known. */
uint64_t frame_nelem(const frame_info *fi, uint64_t bytes)
{
    return bytes / dt_size(fi->dtype);
}

/* Counts the axes longer than 1. */
int frame_is_multidim(const frame_info *fi)
{
    int n = 0;
    for (int d = 0; d < fi->ndim; d++)
        n += fi->shape[d] > 1;
    return n > 1;
}
