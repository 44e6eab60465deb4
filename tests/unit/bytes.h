/* bytes.h - byte helpers of the C unit tests: a growable buffer, and
 * writing bytes to a file in the test's scratch directory.
 *
 * The including test defines `static char tmpdir[]` (made with mkdtemp)
 * before including this header. */
#ifndef GPUBATCH_TESTS_BYTES_H
#define GPUBATCH_TESTS_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growable byte buffer. */
struct bytes {
    uint8_t *p;
    size_t len, cap;
};

/* Appends n bytes to b. */
static void append(struct bytes *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Writes bytes to a file in tmpdir and returns its path (valid until the
 * next call). */
static const char *put_file(const char *name, const void *p, size_t n)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
    return path;
}

#endif
