/* fuzz_npz.c - fuzz harness for zip archives (.npz): the directory parser
 * and the member reader.
 *
 * The input is an archive. npz_open_mem must accept or refuse it with a
 * reason; an accepted directory must be self-consistent (members inside the
 * file, before one another's headers, names unique and printable as C
 * strings). Each member is then read in odd-sized pieces: a read either
 * fails with a reason, or gives exactly the member's size, and for a
 * deflated member bytes whose CRC-32 is the directory's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/npz.h"
#include "io/reader.h"

#define MEMBERS_READ 8                 /* members read per input */
#define READ_CAP ((uint64_t)4 << 20)   /* stop reading a member after this many bytes */

static unsigned char piece[65536];

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Checks the directory's entries against the file and each other. */
static void check_directory(const npz_archive *a, size_t size)
{
    for (size_t i = 0; i < npz_count(a); i++) {
        const npz_member *m = npz_member_at(a, i);
        const io_zip_member *d = &m->data;
        require(m->name[0] && m->key[0] && strlen(m->key) <= strlen(m->name));
        require(d->method == IO_ZIP_STORED || d->method == IO_ZIP_DEFLATED);
        require(d->method != IO_ZIP_STORED || d->comp_size == d->size);
        require(m->header_off < d->data_off && d->data_off <= size &&
                d->comp_size <= size - d->data_off);
        require(npz_find(a, m->key) == m);
        for (size_t j = 0; j < i; j++) {
            const npz_member *o = npz_member_at(a, j);
            require(strcmp(o->key, m->key) != 0);
            const npz_member *lo = o->header_off < m->header_off ? o : m, *hi = lo == o ? m : o;
            require(lo->data.data_off + lo->data.comp_size <= hi->header_off);
        }
    }
}

/* Reads member m in pieces of changing size; checks the outcome. */
static void read_member(const uint8_t *data, size_t size, const npz_member *m, unsigned seed)
{
    io_reader *r;
    io_status err;
    if (io_reader_open_zip_member_mem(&r, data, size, &m->data, &err) < 0) {
        require(err.text[0] != '\0');
        return;
    }
    uint64_t total = 0;
    uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
    ssize_t k;
    size_t step = 1 + seed % 4093;
    while (total < READ_CAP && (k = io_reader_read(r, piece, step)) > 0) {
        require((size_t)k <= step);
        crc = (uint32_t)crc32(crc, piece, (uInt)k);
        total += (uint64_t)k;
        step = 1 + (step * 7919 + 13) % sizeof piece;
    }
    if (total < READ_CAP) {
        if (k < 0) {
            require(io_reader_error(r)[0] != '\0');
        } else {
            require(total == m->data.size);
            require(m->data.method == IO_ZIP_STORED || crc == m->data.crc);
            require(io_reader_raw_offset(r) == m->data.comp_size);
        }
    }
    io_reader_close(r);
}

/* Parses the input as an archive and reads its first members. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npz_archive *a;
    io_status err;
    if (npz_open_mem(&a, data, size, &err) < 0) {
        require(err.text[0] != '\0' && memchr(err.text, '\0', sizeof err.text));
        require(a == NULL);
        return 0;
    }
    check_directory(a, size);
    for (size_t i = 0; i < npz_count(a) && i < MEMBERS_READ; i++)
        read_member(data, size, npz_member_at(a, i), (unsigned)(i * 31 + size));
    npz_close(a);
    return 0;
}
