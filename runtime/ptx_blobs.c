/* ptx_blobs.c - inflating an embedded module. */
#include "ptx_blobs.h"

#include <stdlib.h>
#include <zlib.h>

/* Inflates one zlib stream of the table into a NUL-terminated buffer. */
int ptx_blob_unpack(const ptx_blob *b, char **out)
{
    *out = NULL;
    char *buf = malloc(b->size + 1);
    if (!buf)
        return -1;
    uLongf size = (uLongf)b->size;
    int z = uncompress((Bytef *)buf, &size, b->data, (uLong)b->stored);
    if (z != Z_OK || size != b->size) {
        free(buf);
        return z == Z_MEM_ERROR ? -1 : -2;
    }
    buf[b->size] = 0;
    *out = buf;
    return 0;
}
