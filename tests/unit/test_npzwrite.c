/* test_npzwrite.c - the zip records of an .npz output (io/npzwrite.c):
 * archives of one to eight stored members of random names and sizes,
 * written record by record as the commands write them, read back by the
 * archive parser (io/npz.c) with their names in order, local header
 * offsets, sizes, CRC-32s and data; a local header's offset past 4 GiB
 * goes to the central entry's zip64 field, the 32-bit one all ones; the
 * one-member writer's records are those of a one-member archive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "io/npz.h"
#include "io/npzwrite.h"
#define RND_SEED 0x51ed27063a1c9b47ull
#include "rnd.h"

#define ARCHIVE_MAX ((size_t)1 << 20) /* room for the largest archive written */

/* Reads a little-endian value of n bytes at p. */
static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Archives of random members, written as the commands write them, read
 * back whole. */
static void test_archives(void)
{
    for (int round = 0; round < 200; round++) {
        int n = 1 + (int)(rnd() % 8);
        struct {
            uint8_t *p;
            size_t len;
        } b = {malloc(ARCHIVE_MAX), 0};
        npzw_entry e[8];
        char names[8][NPZW_NAME_MAX];
        uint8_t *data[8];
        for (int i = 0; i < n; i++) {
            int len = 1 + (int)(rnd() % (NPZW_NAME_MAX - 9));
            for (int k = 0; k < len; k++)
                names[i][k] = (char)('a' + rnd() % 26);
            snprintf(names[i] + len, sizeof names[i] - (size_t)len, "%d.npy", i);
            size_t size = round % 4 == 0 ? 0 : (size_t)(rnd() % 100000);
            data[i] = malloc(size + 1);
            for (size_t k = 0; k < size; k++)
                data[i][k] = (uint8_t)(rnd() >> 24);
            e[i] = (npzw_entry){names[i], size, (uint32_t)crc32(0, data[i], (uInt)size), b.len};
            b.len += npzw_local(b.p + b.len, names[i]);
            memcpy(b.p + b.len, data[i], size);
            b.len += size;
            b.len += npzw_descriptor(b.p + b.len, e[i].crc, size);
        }
        b.len += npzw_directory(b.p + b.len, e, n, b.len);
        npz_archive *a = NULL;
        io_status st;
        int ok = npz_open_mem(&a, b.p, b.len, &st) == 0 && npz_count(a) == (size_t)n;
        for (int i = 0; ok && i < n; i++) {
            const npz_member *m = npz_member_at(a, (size_t)i);
            ok = !strcmp(m->name, names[i]) && m->header_off == e[i].at &&
                 m->data.size == e[i].size && m->data.comp_size == e[i].size &&
                 m->data.crc == e[i].crc && m->data.method == IO_ZIP_STORED &&
                 m->data.data_off + e[i].size <= b.len &&
                 memcmp(b.p + m->data.data_off, data[i], (size_t)e[i].size) == 0;
        }
        CHECKF(ok, "round %d: %d members: %s", round, n, a ? "read back wrong" : st.text);
        npz_close(a);
        for (int i = 0; i < n; i++)
            free(data[i]);
        free(b.p);
    }
}

/* A member whose local header lies past 4 GiB: its central entry holds the
 * offset in the zip64 field, after both sizes, and all ones in the 32-bit
 * field; one below keeps it in the 32-bit field. */
static void test_far_offset(void)
{
    npzw_entry e[2] = {{"near.npy", 100, 0x1234u, 4294967294ull},
                       {"far.npy", 5000000000ull, 0x5678u, 4294967295ull + 7}};
    unsigned char dir[NPZW_DIR_MAX(2)];
    size_t len = npzw_directory(dir, e, 2, 9999999999ull);
    const unsigned char *c = dir;
    CHECK(get_le(c, 4) == 0x02014b50 && get_le(c + 42, 4) == 4294967294ull &&
          get_le(c + 30, 2) == 20); /* sizes only */
    c += 46 + strlen("near.npy") + 20;
    CHECK(get_le(c, 4) == 0x02014b50 && get_le(c + 42, 4) == 0xffffffffu &&
          get_le(c + 30, 2) == 28);
    const unsigned char *x = c + 46 + strlen("far.npy");
    CHECK(get_le(x, 2) == 1 && get_le(x + 2, 2) == 24 && get_le(x + 4, 8) == 5000000000ull &&
          get_le(x + 12, 8) == 5000000000ull && get_le(x + 20, 8) == 4294967295ull + 7);
    /* the zip64 end record names the directory's offset in full */
    const unsigned char *end64 = x + 28;
    CHECK(get_le(end64, 4) == 0x06064b50 && get_le(end64 + 48, 8) == 9999999999ull);
    CHECK(len == (size_t)(end64 - dir) + 56 + 20 + 22);
}

/* The one-member writer's head and tail are a one-member archive's
 * records: np.savez's name, at offset 0. */
static void test_one_member(void)
{
    unsigned char head[NPZW_HEAD_MAX], local[NPZW_LOCAL_MAX], tail[NPZW_TAIL_MAX],
        want[NPZW_DESC_MAX + NPZW_DIR_MAX(1)];
    size_t hl = npzw_head(head);
    CHECK(hl == npzw_local(local, NPZW_MEMBER) && memcmp(head, local, hl) == 0);
    uint64_t size = 123456789;
    size_t tl = npzw_tail(tail, 0xabcdef01u, size);
    npzw_entry e = {NPZW_MEMBER, size, 0xabcdef01u, 0};
    size_t d = npzw_descriptor(want, e.crc, size);
    size_t wl = d + npzw_directory(want + d, &e, 1, hl + size + d);
    CHECK(tl == wl && memcmp(tail, want, tl) == 0);
}

int main(void)
{
    RUN(test_archives);
    RUN(test_far_offset);
    RUN(test_one_member);
    return check_summary();
}
