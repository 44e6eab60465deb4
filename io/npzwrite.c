/* npzwrite.c - the zip records around an .npz output's one stored member, and
 * whole archives of several members built in memory. */
#include "npzwrite.h"

#include <stdlib.h>
#include <string.h>

#include "crc.h"

#define ZIP_VERSION 45     /* 4.5: zip64 */
#define ZIP_FLAGS 0x0008   /* sizes and CRC-32 in the data descriptor */
#define ZIP_DOS_DATE 0x21  /* 1980-01-01 */
#define ZIP_ZIP64_EXTRA 20 /* the 0x0001 field with both sizes */
#define ZIP_FULL32 0xffffffffu

/* Appends v as n little-endian bytes at *p and advances it. */
static void npzw_le(unsigned char **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        *(*p)++ = (unsigned char)(v >> (8 * i));
}

/* Appends the fields the local and central headers share, from the version
 * needed to the extra field's length, and the name. */
static void npzw_common(unsigned char **p, uint32_t crc)
{
    npzw_le(p, ZIP_VERSION, 2);
    npzw_le(p, ZIP_FLAGS, 2);
    npzw_le(p, 0, 2); /* stored */
    npzw_le(p, 0, 2); /* 00:00 */
    npzw_le(p, ZIP_DOS_DATE, 2);
    npzw_le(p, crc, 4);
    npzw_le(p, ZIP_FULL32, 4); /* sizes in the zip64 field */
    npzw_le(p, ZIP_FULL32, 4);
    npzw_le(p, strlen(NPZW_MEMBER), 2);
    npzw_le(p, ZIP_ZIP64_EXTRA, 2);
}

/* Appends the name and the zip64 extra field with both sizes. */
static void npzw_name_extra(unsigned char **p, uint64_t size)
{
    memcpy(*p, NPZW_MEMBER, strlen(NPZW_MEMBER));
    *p += strlen(NPZW_MEMBER);
    npzw_le(p, 0x0001, 2);
    npzw_le(p, 16, 2);
    npzw_le(p, size, 8); /* uncompressed */
    npzw_le(p, size, 8); /* compressed: the same, stored */
}

/* The local header: CRC-32 and sizes zero, given by the descriptor. */
size_t npzw_head(unsigned char *buf)
{
    unsigned char *p = buf;
    npzw_le(&p, 0x04034b50, 4);
    npzw_common(&p, 0);
    npzw_name_extra(&p, 0);
    return (size_t)(p - buf);
}

/* The data descriptor, central directory, zip64 end record, its locator
 * and the end record. */
size_t npzw_tail(unsigned char *buf, uint32_t crc, uint64_t size)
{
    unsigned char *p = buf;
    uint64_t central = (npzw_head(buf) + size + 24); /* the directory's offset */
    npzw_le(&p, 0x08074b50, 4);
    npzw_le(&p, crc, 4);
    npzw_le(&p, size, 8);
    npzw_le(&p, size, 8);
    unsigned char *dir = p;
    npzw_le(&p, 0x02014b50, 4);
    npzw_le(&p, ZIP_VERSION, 2); /* made by */
    npzw_common(&p, crc);
    npzw_le(&p, 0, 2); /* comment */
    npzw_le(&p, 0, 2); /* disk */
    npzw_le(&p, 0, 2); /* internal attributes */
    npzw_le(&p, 0, 4); /* external attributes */
    npzw_le(&p, 0, 4); /* the local header's offset */
    npzw_name_extra(&p, size);
    uint64_t dir_len = (uint64_t)(p - dir), end64 = central + dir_len;
    npzw_le(&p, 0x06064b50, 4);
    npzw_le(&p, 44, 8); /* the record's length after this field */
    npzw_le(&p, ZIP_VERSION, 2);
    npzw_le(&p, ZIP_VERSION, 2);
    npzw_le(&p, 0, 4); /* this disk */
    npzw_le(&p, 0, 4); /* the directory's disk */
    npzw_le(&p, 1, 8); /* members on this disk */
    npzw_le(&p, 1, 8); /* members */
    npzw_le(&p, dir_len, 8);
    npzw_le(&p, central, 8);
    npzw_le(&p, 0x07064b50, 4);
    npzw_le(&p, 0, 4);
    npzw_le(&p, end64, 8);
    npzw_le(&p, 1, 4); /* disks */
    npzw_le(&p, 0x06054b50, 4);
    npzw_le(&p, 0, 2);
    npzw_le(&p, 0, 2);
    npzw_le(&p, 1, 2);
    npzw_le(&p, 1, 2);
    npzw_le(&p, dir_len, 4);
    npzw_le(&p, central < ZIP_FULL32 ? central : ZIP_FULL32, 4);
    npzw_le(&p, 0, 2); /* comment */
    return (size_t)(p - buf);
}

/* Appends the fields of a whole-archive member's local and central
 * headers from the version needed to the extra field's length. */
static void npzw_fixed(unsigned char **p, const npzw_member *m, uint32_t crc)
{
    npzw_le(p, 20, 2); /* 2.0: stored, no zip64 */
    npzw_le(p, 0, 2);
    npzw_le(p, 0, 2);
    npzw_le(p, 0, 2);
    npzw_le(p, ZIP_DOS_DATE, 2);
    npzw_le(p, crc, 4);
    npzw_le(p, m->size, 4);
    npzw_le(p, m->size, 4);
    npzw_le(p, strlen(m->name), 2);
    npzw_le(p, 0, 2);
}

/* Builds a whole archive of stored members. */
int npzw_archive(const npzw_member *m, int n, unsigned char **out, size_t *len)
{
    uint64_t total = 22;
    for (int i = 0; i < n; i++)
        total += 30 + 46 + 2 * (uint64_t)strlen(m[i].name) + m[i].size;
    if (total >= ZIP_FULL32 || !(*out = malloc((size_t)total)))
        return -1;
    unsigned char *p = *out;
    uint32_t crc[n > 0 ? n : 1];
    uint64_t at[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        crc[i] = crc_update(0, m[i].data, m[i].size);
        at[i] = (uint64_t)(p - *out);
        npzw_le(&p, 0x04034b50, 4);
        npzw_fixed(&p, &m[i], crc[i]);
        memcpy(p, m[i].name, strlen(m[i].name));
        p += strlen(m[i].name);
        memcpy(p, m[i].data, m[i].size);
        p += m[i].size;
    }
    uint64_t dir = (uint64_t)(p - *out);
    for (int i = 0; i < n; i++) {
        npzw_le(&p, 0x02014b50, 4);
        npzw_le(&p, 20, 2); /* made by */
        npzw_fixed(&p, &m[i], crc[i]);
        npzw_le(&p, 0, 2); /* comment */
        npzw_le(&p, 0, 2); /* disk */
        npzw_le(&p, 0, 2); /* internal attributes */
        npzw_le(&p, 0, 4); /* external attributes */
        npzw_le(&p, at[i], 4);
        memcpy(p, m[i].name, strlen(m[i].name));
        p += strlen(m[i].name);
    }
    uint64_t dir_len = (uint64_t)(p - *out) - dir;
    npzw_le(&p, 0x06054b50, 4);
    npzw_le(&p, 0, 2);
    npzw_le(&p, 0, 2);
    npzw_le(&p, (uint64_t)n, 2);
    npzw_le(&p, (uint64_t)n, 2);
    npzw_le(&p, dir_len, 4);
    npzw_le(&p, dir, 4);
    npzw_le(&p, 0, 2);
    *len = (size_t)(p - *out);
    return 0;
}
