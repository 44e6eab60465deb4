/* gzip_header.c - the gzip member header's magic and length (see
 * gzip_header.h). */
#include "gzip_header.h"

#include <string.h>
#include <unistd.h>

/* Whether p starts with the gzip magic (see gzip_header.h). */
int gzip_header_magic(const void *p, size_t n)
{
    const uint8_t *b = p;
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* The length of a simple gzip member header at p (see gzip_header.h). */
size_t gzip_header_size(const uint8_t *p, size_t n)
{
    if (n < 10 || p[2] != 8 || (p[3] & 0xe2))
        return 0;
    size_t len = 10;
    if (p[3] & 4) { /* FEXTRA */
        if (n < len + 2)
            return 0;
        len += 2 + (size_t)(p[len] | p[len + 1] << 8);
    }
    for (int flag = 8; flag <= 16; flag += 8) { /* FNAME, FCOMMENT: zero-terminated */
        if (!(p[3] & flag))
            continue;
        const uint8_t *z = len < n ? memchr(p + len, 0, n - len) : NULL;
        if (!z)
            return 0;
        len = (size_t)(z - p) + 1;
    }
    return len < n ? len : 0;
}

/* The trailer's ratio for a member of file fd (see gzip_header.h). */
double gzip_trailer_ratio(int fd, uint64_t data_off, uint64_t file_size)
{
    uint8_t t[4];
    if (file_size < data_off + 8 || file_size > (uint64_t)INT64_MAX ||
        pread(fd, t, 4, (off_t)(file_size - 4)) != 4)
        return 0;
    uint32_t isize = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                     (uint32_t)t[3] << 24;
    return (double)isize / (double)(file_size - data_off);
}
