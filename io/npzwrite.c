/* npzwrite.c - the zip records around the stored members of an .npz output
 * (see npzwrite.h). */
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
 * needed to the extra field's length (xlen), for a member named name. */
static void npzw_common(unsigned char **p, uint32_t crc, const char *name, unsigned xlen)
{
    npzw_le(p, ZIP_VERSION, 2);
    npzw_le(p, ZIP_FLAGS, 2);
    npzw_le(p, 0, 2); /* stored */
    npzw_le(p, 0, 2); /* 00:00 */
    npzw_le(p, ZIP_DOS_DATE, 2);
    npzw_le(p, crc, 4);
    npzw_le(p, ZIP_FULL32, 4); /* sizes in the zip64 field */
    npzw_le(p, ZIP_FULL32, 4);
    npzw_le(p, strlen(name), 2);
    npzw_le(p, xlen, 2);
}

/* Appends the name and the zip64 extra field with both sizes, and the
 * local header's offset where `with_at` (it does not fit 32 bits). */
static void npzw_name_extra(unsigned char **p, const char *name, uint64_t size, int with_at,
                            uint64_t at)
{
    memcpy(*p, name, strlen(name));
    *p += strlen(name);
    npzw_le(p, 0x0001, 2);
    npzw_le(p, with_at ? 24 : 16, 2);
    npzw_le(p, size, 8); /* uncompressed */
    npzw_le(p, size, 8); /* compressed: the same, stored */
    if (with_at)
        npzw_le(p, at, 8);
}

/* The local header of a member: CRC-32 and sizes zero, given by the
 * descriptor after its data. */
size_t npzw_local(unsigned char *buf, const char *name)
{
    unsigned char *p = buf;
    npzw_le(&p, 0x04034b50, 4);
    npzw_common(&p, 0, name, ZIP_ZIP64_EXTRA);
    npzw_name_extra(&p, name, 0, 0, 0);
    return (size_t)(p - buf);
}

/* The data descriptor after a member's data: its CRC-32 and sizes. */
size_t npzw_descriptor(unsigned char *buf, uint32_t crc, uint64_t size)
{
    unsigned char *p = buf;
    npzw_le(&p, 0x08074b50, 4);
    npzw_le(&p, crc, 4);
    npzw_le(&p, size, 8);
    npzw_le(&p, size, 8);
    return (size_t)(p - buf);
}

/* The central directory of the members e[0 .. n) at offset `central`, the
 * zip64 end record, its locator and the end record. */
size_t npzw_directory(unsigned char *buf, const npzw_entry *e, int n, uint64_t central)
{
    unsigned char *p = buf;
    for (int i = 0; i < n; i++) {
        int with_at = e[i].at >= ZIP_FULL32;
        npzw_le(&p, 0x02014b50, 4);
        npzw_le(&p, ZIP_VERSION, 2); /* made by */
        npzw_common(&p, e[i].crc, e[i].name, ZIP_ZIP64_EXTRA + (with_at ? 8 : 0));
        npzw_le(&p, 0, 2); /* comment */
        npzw_le(&p, 0, 2); /* disk */
        npzw_le(&p, 0, 2); /* internal attributes */
        npzw_le(&p, 0, 4); /* external attributes */
        npzw_le(&p, with_at ? ZIP_FULL32 : e[i].at, 4); /* the local header's offset */
        npzw_name_extra(&p, e[i].name, e[i].size, with_at, e[i].at);
    }
    uint64_t dir_len = (uint64_t)(p - buf), end64 = central + dir_len;
    npzw_le(&p, 0x06064b50, 4);
    npzw_le(&p, 44, 8); /* the record's length after this field */
    npzw_le(&p, ZIP_VERSION, 2);
    npzw_le(&p, ZIP_VERSION, 2);
    npzw_le(&p, 0, 4); /* this disk */
    npzw_le(&p, 0, 4); /* the directory's disk */
    npzw_le(&p, (uint64_t)n, 8); /* members on this disk */
    npzw_le(&p, (uint64_t)n, 8); /* members */
    npzw_le(&p, dir_len, 8);
    npzw_le(&p, central, 8);
    npzw_le(&p, 0x07064b50, 4);
    npzw_le(&p, 0, 4);
    npzw_le(&p, end64, 8);
    npzw_le(&p, 1, 4); /* disks */
    npzw_le(&p, 0x06054b50, 4);
    npzw_le(&p, 0, 2);
    npzw_le(&p, 0, 2);
    npzw_le(&p, (uint64_t)n, 2);
    npzw_le(&p, (uint64_t)n, 2);
    npzw_le(&p, dir_len, 4);
    npzw_le(&p, central < ZIP_FULL32 ? central : ZIP_FULL32, 4);
    npzw_le(&p, 0, 2); /* comment */
    return (size_t)(p - buf);
}

/* The local header of the one member NPZW_MEMBER. */
size_t npzw_head(unsigned char *buf)
{
    return npzw_local(buf, NPZW_MEMBER);
}

/* The data descriptor, central directory and end records after the one
 * member's data. */
size_t npzw_tail(unsigned char *buf, uint32_t crc, uint64_t size)
{
    npzw_entry e = {NPZW_MEMBER, size, crc, 0};
    size_t d = npzw_descriptor(buf, crc, size);
    unsigned char head[NPZW_HEAD_MAX];
    return d + npzw_directory(buf + d, &e, 1, npzw_head(head) + size + d);
}
