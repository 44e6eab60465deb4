/* npz.c - the directory of a zip archive of .npy members.
 *
 * The archive is read from its end: the end record (and the zip64 end
 * record that its locator points at) gives the central directory, whose
 * entries give each member's sizes, CRC-32 and local header; the local
 * header gives where the data starts. Offsets are checked against the file
 * before anything is read at them, and members must lie one after another
 * before the central directory, as every zip writer lays them out. */
#include "npz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc.h"
#include "par.h"
#include "pread.h"

#include <zlib.h>

#define EOCD_LEN 22     /* end of central directory record, without its comment */
#define LOC64_LEN 20    /* zip64 end of central directory locator */
#define EOCD64_LEN 56   /* zip64 end of central directory record, fixed part */
#define CEN_LEN 46      /* central directory entry, fixed part */
#define LOC_LEN 30      /* local file header, fixed part */
#define MAX_COMMENT 0xffff
#define SIG_EOCD 0x06054b50u
#define SIG_LOC64 0x07064b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_CEN 0x02014b50u
#define SIG_LOC 0x04034b50u
#define FLAG_ENCRYPTED 0x0001u
#define FLAG_STRONG_ENCRYPTION 0x0040u
#define FLAG_MASKED_HEADERS 0x2000u
#define EXTRA_ZIP64 0x0001u
#define NAME_SHOWN 200 /* bytes of a member name quoted in a message */
#define CRC_PIECE ((size_t)256 << 10) /* bytes one thread reads at a time for a CRC */
#define CRC_MIN_SHARE ((uint64_t)4 << 20) /* fewest bytes worth a thread of their own */

struct npz_archive {
    int fd;             /* -1 for memory */
    const uint8_t *mem;
    uint64_t size;      /* bytes in the file */
    npz_member *members;
    size_t count;
};

/* Little-endian 16-bit value at p. */
static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* Little-endian 32-bit value at p. */
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

/* Little-endian 64-bit value at p. */
static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* A member name made safe to print: control bytes as \xHH, cut after
 * NAME_SHOWN bytes. */
static const char *shown(const char *name, char *buf, size_t len)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 5 < len; p++) {
        if (p - (const unsigned char *)name >= NAME_SHOWN) {
            o += (size_t)snprintf(buf + o, len - o, "...");
            break;
        }
        if (*p < 0x20 || *p == 0x7f)
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
        else
            buf[o++] = (char)*p;
    }
    buf[o] = 0;
    return buf;
}

/* Reads n bytes at offset off, which the caller has checked lie in the
 * file; a short read means the file shrank. 0 or a negative io_error. */
static int npz_read(const npz_archive *a, void *buf, size_t n, uint64_t off, io_status *st)
{
    if (off > a->size || n > a->size - off)
        return io_fail(st, IO_ERR_FORMAT, "offset %llu lies outside the archive",
                       (unsigned long long)off);
    if (a->fd < 0) {
        memcpy(buf, a->mem + off, n);
        return 0;
    }
    ssize_t k = io_pread(a->fd, buf, n, off);
    if (k < 0)
        return io_fail(st, IO_ERR_READ, "%s", strerror((int)-k));
    if ((size_t)k < n)
        return io_fail(st, IO_ERR_READ, "the file shrank while being read");
    return 0;
}

/* Where the central directory is and how many entries it has. */
typedef struct {
    uint64_t entries, cd_off, cd_size;
    uint64_t cd_end; /* where the central directory must end: the (zip64) end record */
} npz_end;

/* Finds the end record in the last bytes of the file: the last signature
 * whose comment runs exactly to the end of the file. */
static int npz_find_end(const npz_archive *a, uint8_t *rec, uint64_t *at, io_status *st)
{
    if (a->size < EOCD_LEN)
        return io_fail(st, IO_ERR_FORMAT,
                       "not a zip archive (%llu bytes, too short for an end record)",
                       (unsigned long long)a->size);
    size_t tail = a->size < EOCD_LEN + MAX_COMMENT ? (size_t)a->size : EOCD_LEN + MAX_COMMENT;
    uint8_t *buf = malloc(tail);
    if (!buf)
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    int rc = npz_read(a, buf, tail, a->size - tail, st);
    for (size_t p = tail - EOCD_LEN + 1; rc == 0 && p-- > 0;) {
        if (get32(buf + p) == SIG_EOCD && get16(buf + p + 20) == tail - p - EOCD_LEN) {
            memcpy(rec, buf + p, EOCD_LEN);
            *at = a->size - tail + p;
            free(buf);
            return 0;
        }
    }
    free(buf);
    return rc < 0 ? rc
                  : io_fail(st, IO_ERR_FORMAT,
                            "not a zip archive (no end of central directory record)");
}

/* Reads the zip64 end record that the locator before the end record at
 * eocd points at, when there is one; *found says whether there was. */
static int npz_read_end64(const npz_archive *a, uint64_t eocd, npz_end *e, int *found,
                          io_status *st)
{
    uint8_t loc[LOC64_LEN], rec[EOCD64_LEN];
    *found = 0;
    if (eocd < LOC64_LEN)
        return 0;
    int rc = npz_read(a, loc, sizeof loc, eocd - LOC64_LEN, st);
    if (rc < 0 || get32(loc) != SIG_LOC64)
        return rc;
    *found = 1;
    uint64_t off = get64(loc + 8), loc_at = eocd - LOC64_LEN;
    if (get32(loc + 4) != 0 || get32(loc + 16) != 1)
        return io_fail(st, IO_ERR_FORMAT, "archives that span several disks are not supported");
    if (off > loc_at || loc_at - off < EOCD64_LEN)
        return io_fail(st, IO_ERR_FORMAT, "the zip64 locator points outside the archive");
    if ((rc = npz_read(a, rec, sizeof rec, off, st)) < 0)
        return rc;
    if (get32(rec) != SIG_EOCD64)
        return io_fail(st, IO_ERR_FORMAT, "no zip64 end record where the locator points");
    if (get64(rec + 4) != loc_at - off - 12)
        return io_fail(st, IO_ERR_FORMAT,
                       "the zip64 end record's length does not reach its locator");
    if (get32(rec + 16) != 0 || get32(rec + 20) != 0 || get64(rec + 24) != get64(rec + 32))
        return io_fail(st, IO_ERR_FORMAT, "archives that span several disks are not supported");
    e->entries = get64(rec + 32);
    e->cd_size = get64(rec + 40);
    e->cd_off = get64(rec + 48);
    e->cd_end = off;
    return 0;
}

/* Locates the central directory from the end record (and zip64 end record). */
static int npz_read_end(const npz_archive *a, npz_end *e, io_status *st)
{
    uint8_t rec[EOCD_LEN] = {0};
    uint64_t eocd = 0;
    int found, rc = npz_find_end(a, rec, &eocd, st);
    if (rc < 0 || (rc = npz_read_end64(a, eocd, e, &found, st)) < 0)
        return rc;
    if (!found) {
        if (get16(rec + 4) != 0 || get16(rec + 6) != 0 || get16(rec + 8) != get16(rec + 10))
            return io_fail(st, IO_ERR_FORMAT, "archives that span several disks are not supported");
        e->entries = get16(rec + 10);
        e->cd_size = get32(rec + 12);
        e->cd_off = get32(rec + 16);
        e->cd_end = eocd;
    }
    if (e->cd_off > e->cd_end || e->cd_end - e->cd_off != e->cd_size)
        return io_fail(st, IO_ERR_FORMAT,
                       "the central directory is not where the end record says (bytes before the "
                       "archive, or a damaged end record)");
    if (e->cd_size > NPZ_MAX_CENTRAL)
        return io_fail(st, IO_ERR_FORMAT,
                       "a central directory of %llu bytes is more than gpubatch reads (%llu)",
                       (unsigned long long)e->cd_size, (unsigned long long)NPZ_MAX_CENTRAL);
    if (e->entries > e->cd_size / CEN_LEN)
        return io_fail(st, IO_ERR_FORMAT,
                       "the end record counts %llu members, more than the central directory holds",
                       (unsigned long long)e->entries);
    return 0;
}

/* Takes the values of the zip64 extra field (id 0x0001) in the extra data
 * x (xlen bytes) for the central fields that are saturated: each 64-bit
 * value stands for a 32-bit field of all ones, in the order size,
 * compressed size, header offset (the disk number, 32-bit, last). */
static int npz_zip64_extra(const uint8_t *x, size_t xlen, uint64_t *size, uint64_t *csize,
                           uint64_t *hoff, uint64_t *disk)
{
    for (size_t p = 0; p + 4 <= xlen;) {
        size_t id = get16(x + p), len = get16(x + p + 2);
        if (len > xlen - p - 4)
            return -1;
        if (id == EXTRA_ZIP64) {
            const uint8_t *v = x + p + 4, *end = v + len;
            uint64_t *wide[3] = {size, csize, hoff};
            for (int i = 0; i < 3; i++)
                if (*wide[i] == 0xffffffffu) {
                    if (end - v < 8)
                        return -1;
                    *wide[i] = get64(v);
                    v += 8;
                }
            if (*disk == 0xffffu) {
                if (end - v < 4)
                    return -1;
                *disk = get32(v);
            }
            return 0;
        }
        p += 4 + len;
    }
    return 0;
}

/* " (NAME)" of a zip compression method other than stored and deflate
 * (APPNOTE 4.4.5), or "" for one without a common name. */
static const char *npz_method_name(unsigned method)
{
    switch (method) {
    case 1: return " (shrink)";
    case 6: return " (implode)";
    case 9: return " (deflate64)";
    case 12: return " (bzip2)";
    case 14: return " (LZMA)";
    case 93: return " (zstd)";
    case 95: return " (xz)";
    case 98: return " (PPMd)";
    default: return "";
    }
}

/* Fills member m from the central directory entry at e (of `room` bytes
 * left in the directory); *len gets the entry's length. */
static int npz_parse_entry(const uint8_t *e, size_t room, npz_member *m, size_t *len,
                           uint64_t index, io_status *st)
{
    char nb[NAME_SHOWN * 4 + 8];
    if (room < CEN_LEN || get32(e) != SIG_CEN)
        return io_fail(st, IO_ERR_FORMAT, "central directory entry %llu is damaged",
                       (unsigned long long)index);
    size_t nlen = get16(e + 28), xlen = get16(e + 30), clen = get16(e + 32);
    if (room - CEN_LEN < nlen + xlen + clen)
        return io_fail(st, IO_ERR_FORMAT, "central directory entry %llu runs past the directory",
                       (unsigned long long)index);
    *len = CEN_LEN + nlen + xlen + clen;
    if (nlen == 0 || memchr(e + CEN_LEN, 0, nlen))
        return io_fail(st, IO_ERR_FORMAT, "member %llu has an empty name or one with a NUL byte",
                       (unsigned long long)index);
    if (!(m->name = malloc(2 * nlen + 2)))
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    memcpy(m->name, e + CEN_LEN, nlen);
    m->name[nlen] = 0;
    m->key = m->name + nlen + 1;
    size_t klen = nlen > 4 && !memcmp(m->name + nlen - 4, ".npy", 4) ? nlen - 4 : nlen;
    memcpy(m->key, m->name, klen);
    m->key[klen] = 0;
    const char *who = shown(m->name, nb, sizeof nb);
    unsigned flags = get16(e + 8), method = get16(e + 10);
    uint64_t size = get32(e + 24), csize = get32(e + 20), hoff = get32(e + 42), disk = get16(e + 34);
    if (npz_zip64_extra(e + CEN_LEN + nlen, xlen, &size, &csize, &hoff, &disk) < 0)
        return io_fail(st, IO_ERR_FORMAT, "member %s: malformed extra field (zip64)", who);
    if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS))
        return io_fail(st, IO_ERR_FORMAT, "member %s is encrypted", who);
    if (method != IO_ZIP_STORED && method != IO_ZIP_DEFLATED)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s: compression method %u%s is not supported (only stored and "
                       "deflate, as np.savez and np.savez_compressed write)",
                       who, method, npz_method_name(method));
    if (disk != 0)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s: archives that span several disks are not supported", who);
    if (method == IO_ZIP_STORED && csize != size)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s is stored, but its compressed size %llu is not its size %llu",
                       who, (unsigned long long)csize, (unsigned long long)size);
    m->data = (io_zip_member){.comp_size = csize, .size = size, .crc = get32(e + 16),
                              .method = (int)method};
    m->header_off = hoff;
    return 0;
}

/* Reads member m's local header, which must agree with the central
 * directory, and sets where its data starts; the data must end by `limit`
 * (the central directory). name_buf holds 64 KiB. */
static int npz_read_local(const npz_archive *a, npz_member *m, uint64_t limit, uint8_t *name_buf,
                          io_status *st)
{
    char nb[NAME_SHOWN * 4 + 8];
    const char *who = shown(m->name, nb, sizeof nb);
    uint8_t h[LOC_LEN];
    if (m->header_off > limit || limit - m->header_off < LOC_LEN)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s: its local header offset %llu lies outside the archive's data",
                       who, (unsigned long long)m->header_off);
    int rc = npz_read(a, h, sizeof h, m->header_off, st);
    if (rc < 0)
        return rc;
    size_t nlen = get16(h + 26), xlen = get16(h + 28);
    if (get32(h) != SIG_LOC)
        return io_fail(st, IO_ERR_FORMAT, "member %s: no local header at byte %llu", who,
                       (unsigned long long)m->header_off);
    if (get16(h + 6) & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION))
        return io_fail(st, IO_ERR_FORMAT, "member %s is encrypted", who);
    if ((int)get16(h + 8) != m->data.method)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s: the local header's method differs from the central directory's",
                       who);
    uint64_t name_at = m->header_off + LOC_LEN;
    if (limit - name_at < nlen + xlen)
        return io_fail(st, IO_ERR_FORMAT, "member %s: its local header runs past the data", who);
    if (nlen != strlen(m->name) || (rc = npz_read(a, name_buf, nlen, name_at, st)) < 0 ||
        memcmp(name_buf, m->name, nlen))
        return rc < 0 ? rc
                      : io_fail(st, IO_ERR_FORMAT,
                                "member %s: the local header names another member", who);
    m->data.data_off = name_at + nlen + xlen;
    if (m->data.comp_size > limit - m->data.data_off)
        return io_fail(st, IO_ERR_FORMAT,
                       "member %s: its %llu bytes of data run past the archive's data", who,
                       (unsigned long long)m->data.comp_size);
    return 0;
}

/* Orders members by where their local headers are. */
static int npz_by_offset(const void *x, const void *y)
{
    const npz_member *a = *(const npz_member *const *)x, *b = *(const npz_member *const *)y;
    return a->header_off < b->header_off ? -1 : a->header_off > b->header_off;
}

/* Orders members by key. */
static int npz_by_key(const void *x, const void *y)
{
    return strcmp((*(const npz_member *const *)x)->key, (*(const npz_member *const *)y)->key);
}

/* Refuses members that overlap (one's header inside another's data, as in
 * archives made to inflate many times their size) and names np.load could
 * not tell apart. */
static int npz_check_layout(npz_archive *a, io_status *st)
{
    if (a->count < 2)
        return 0;
    char n1[NAME_SHOWN * 4 + 8], n2[NAME_SHOWN * 4 + 8];
    const npz_member **v = malloc(a->count * sizeof *v);
    if (!v)
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < a->count; i++)
        v[i] = &a->members[i];
    qsort(v, a->count, sizeof *v, npz_by_offset);
    for (size_t i = 1; i < a->count && rc == 0; i++)
        if (v[i - 1]->data.data_off + v[i - 1]->data.comp_size > v[i]->header_off)
            rc = io_fail(st, IO_ERR_FORMAT, "members %s and %s overlap",
                         shown(v[i - 1]->name, n1, sizeof n1), shown(v[i]->name, n2, sizeof n2));
    qsort(v, a->count, sizeof *v, npz_by_key);
    for (size_t i = 1; i < a->count && rc == 0; i++)
        if (!strcmp(v[i - 1]->key, v[i]->key))
            rc = io_fail(st, IO_ERR_FORMAT, "two members are named %s",
                         shown(v[i]->key, n1, sizeof n1));
    free(v);
    return rc;
}

/* Reads the central directory and every local header. */
static int npz_read_directory(npz_archive *a, io_status *st)
{
    npz_end e = {0};
    int rc = npz_read_end(a, &e, st);
    if (rc < 0)
        return rc;
    uint8_t *cd = malloc(e.cd_size ? (size_t)e.cd_size : 1);
    uint8_t *name_buf = malloc(0x10000);
    a->members = calloc(e.entries ? (size_t)e.entries : 1, sizeof *a->members);
    if (!cd || !name_buf || !a->members) {
        rc = io_fail(st, IO_ERR_NOMEM, "out of memory");
        goto out_free;
    }
    if ((rc = npz_read(a, cd, (size_t)e.cd_size, e.cd_off, st)) < 0)
        goto out_free;
    size_t pos = 0;
    for (; a->count < e.entries; a->count++) {
        size_t len;
        npz_member *m = &a->members[a->count];
        rc = npz_parse_entry(cd + pos, (size_t)e.cd_size - pos, m, &len, a->count, st);
        if (rc == 0)
            rc = npz_read_local(a, m, e.cd_off, name_buf, st);
        if (rc < 0) {
            a->count++; /* its name is freed with the rest */
            goto out_free;
        }
        pos += len;
    }
    if (pos != e.cd_size)
        rc = io_fail(st, IO_ERR_FORMAT,
                     "the central directory holds more than the %llu members the end record counts",
                     (unsigned long long)e.entries);
    else
        rc = npz_check_layout(a, st);
out_free:
    free(name_buf);
    free(cd);
    return rc;
}

/* Allocates a handle and reads the directory; frees it on failure. */
static int npz_start(npz_archive **out, npz_archive *a, io_status *st)
{
    int rc = npz_read_directory(a, st);
    if (rc < 0) {
        npz_close(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* Nonzero for PK\3\4 or PK\5\6. */
int npz_is_magic(const uint8_t *buf, size_t len)
{
    return len >= 4 && buf[0] == 'P' && buf[1] == 'K' &&
           ((buf[2] == 3 && buf[3] == 4) || (buf[2] == 5 && buf[3] == 6));
}

/* Opens the archive file and reads its directory. */
int npz_open(npz_archive **out, const char *path, io_status *st)
{
    struct stat sb;
    *out = NULL;
    npz_archive *a = calloc(1, sizeof *a);
    if (!a)
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    a->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    int rc = 0;
    if (a->fd < 0 || fstat(a->fd, &sb) < 0)
        rc = io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = io_fail(st, IO_ERR_OPEN, "a zip archive is read from a regular file only");
    if (rc < 0) {
        npz_close(a);
        return rc;
    }
    a->size = (uint64_t)sb.st_size;
    return npz_start(out, a, st);
}

/* Reads the directory of an archive in memory. */
int npz_open_mem(npz_archive **out, const void *data, size_t len, io_status *st)
{
    *out = NULL;
    npz_archive *a = calloc(1, sizeof *a);
    if (!a)
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    a->fd = -1;
    a->mem = data;
    a->size = len;
    return npz_start(out, a, st);
}

/* Number of members. */
size_t npz_count(const npz_archive *a)
{
    return a->count;
}

/* Member i in archive order. */
const npz_member *npz_member_at(const npz_archive *a, size_t i)
{
    return &a->members[i];
}

/* The member with this key, else with this name, or NULL. */
const npz_member *npz_find(const npz_archive *a, const char *name)
{
    for (size_t i = 0; i < a->count; i++)
        if (!strcmp(a->members[i].key, name))
            return &a->members[i];
    for (size_t i = 0; i < a->count; i++)
        if (!strcmp(a->members[i].name, name))
            return &a->members[i];
    return NULL;
}

/* Frees the names, the table and the descriptor. */
void npz_close(npz_archive *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->count; i++)
        free(a->members[i].name);
    free(a->members);
    if (a->fd >= 0)
        close(a->fd);
    free(a);
}

/* One thread's share of a stored member's CRC-32: its bytes' CRC, or the
 * error of a read. */
typedef struct {
    int fd;
    uint64_t off, len;
    uint32_t crc;
    int err; /* 0, -errno, or 1 for a file that ended early */
} npz_crc_share;

/* Computes a share's CRC-32 by reads of CRC_PIECE bytes into a buffer of
 * its own, which stays in the core's cache. */
static void *npz_crc_share_run(void *arg)
{
    npz_crc_share *c = arg;
    uint8_t *buf = malloc(CRC_PIECE);
    c->crc = 0;
    if (!buf) {
        c->err = -ENOMEM;
        return NULL;
    }
    for (uint64_t done = 0; done < c->len;) {
        size_t want = c->len - done < CRC_PIECE ? (size_t)(c->len - done) : CRC_PIECE;
        ssize_t got = io_pread_full(c->fd, buf, want, c->off + done);
        if (got < 0 || (size_t)got != want) {
            c->err = got < 0 ? (int)got : 1;
            break;
        }
        c->crc = crc_update(c->crc, buf, want);
        done += want;
    }
    free(buf);
    return NULL;
}

/* Checks a stored member's CRC-32 (see npz.h): shares on every core,
 * their CRCs combined in order. */
int npz_check_stored(const char *path, const io_zip_member *m, io_status *st)
{
    if (m->method != IO_ZIP_STORED)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
    npz_crc_share shares[PAR_MAX];
    uint64_t n = m->comp_size / CRC_MIN_SHARE + 1, cpus = (uint64_t)par_cpus();
    n = n < cpus ? n : cpus;
    n = n < PAR_MAX ? n : PAR_MAX;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = m->comp_size * i / n, b = m->comp_size * (i + 1) / n;
        shares[i] = (npz_crc_share){fd, m->data_off + a, b - a, 0, 0};
    }
    par_run(npz_crc_share_run, shares, sizeof shares[0], (size_t)n);
    close(fd);
    uint32_t crc = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (shares[i].err < 0)
            return io_fail(st, IO_ERR_READ, "%s", strerror(-shares[i].err));
        if (shares[i].err)
            return io_fail(st, IO_ERR_TRUNCATED, "stored data at byte %llu: the file ends early",
                           (unsigned long long)m->data_off);
        crc = (uint32_t)crc32_combine(crc, shares[i].crc, (z_off_t)shares[i].len);
    }
    if (crc != m->crc)
        return io_fail(st, IO_ERR_CRC, "stored data at byte %llu: incorrect data check",
                       (unsigned long long)m->data_off);
    return 0;
}
