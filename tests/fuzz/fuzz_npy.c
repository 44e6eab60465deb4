/* fuzz_npy.c - fuzz harness for the .npy header parser.
 *
 * Whatever the input, npy_parse must return 0, NPY_NEED_MORE or
 * IO_ERR_FORMAT with a reason; an accepted header must be self-consistent,
 * describe at most INT64_MAX bytes of data, and survive a write/parse round
 * trip with the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "io/reader.h"

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Checks the fields of an accepted header. */
static void check_header(const npy_header *h, size_t size)
{
    require(h->header_len >= 10 && h->header_len <= size && h->header_len <= NPY_MAX_HEADER);
    require(h->dtype > DT_NONE && h->dtype < DT_COUNT);
    require(h->ndim >= 0 && h->ndim <= NPY_MAX_DIMS);
    require(h->fortran_order == 0 || h->fortran_order == 1);
    /* big-endian only where the byte order means something */
    require(h->big_endian == 0 || (h->big_endian == 1 && dt_swap_unit(h->dtype) > 0));
    uint64_t n = 1;
    int zero = 0;
    for (int i = 0; i < h->ndim; i++)
        zero |= h->shape[i] == 0;
    for (int i = 0; i < h->ndim && !zero; i++)
        require(!__builtin_mul_overflow(n, h->shape[i], &n));
    if (zero)
        n = 0;
    require(h->nelem == n);
    require(h->data_bytes == n * dt_size(h->dtype));
    /* No file holds more; UINT64_MAX would read as an unknown size. */
    require(h->data_bytes <= INT64_MAX);
}

/* Parses data; checks invariants and the write/parse round trip. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_header h;
    io_status err;
    err.text[0] = 'x';
    int rc = npy_parse(data, size, &h, &err);
    if (rc == NPY_NEED_MORE) {
        require(h.header_len > size && h.header_len <= NPY_MAX_HEADER);
        return 0;
    }
    if (rc < 0) {
        require(rc == IO_ERR_FORMAT && err.text[0] != '\0' &&
                memchr(err.text, '\0', sizeof(err.text)));
        return 0;
    }
    require(rc == 0);
    check_header(&h, size);
    /* One byte short of the header asks for more. */
    npy_header part;
    require(npy_parse(data, h.header_len - 1, &part, NULL) == NPY_NEED_MORE);
    /* What we write for these fields parses back to them, little-endian. */
    uint8_t buf[4096];
    int n = npy_write_header(buf, sizeof(buf), h.dtype, h.ndim, h.shape, h.fortran_order);
    require(n > 0 && n % 64 == 0);
    npy_header back;
    rc = npy_parse(buf, (size_t)n, &back, &err);
    require(rc == 0);
    require(back.dtype == h.dtype && back.ndim == h.ndim && back.fortran_order == h.fortran_order &&
            back.nelem == h.nelem && back.data_bytes == h.data_bytes &&
            back.header_len == (size_t)n && back.big_endian == 0);
    require(!memcmp(back.shape, h.shape, sizeof(h.shape[0]) * (size_t)h.ndim));
    return 0;
}
