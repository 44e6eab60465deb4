/* npy.h - the NumPy .npy header: parse (v1.0, v2.0, v3.0) and write (v1.0,
 * or v2.0 when the header needs it).
 *
 * The descriptors of the types in dtype.h are accepted in either byte
 * order ('<f4', '>f4', '|b1', '<f2', bfloat16 as '<V2' or '|V2', ...);
 * structured and object arrays are rejected with a message saying so.
 * Fortran order and big-endian data are reported, not rejected: each
 * command decides what they mean. */
#ifndef GPUBATCH_IO_NPY_H
#define GPUBATCH_IO_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"

#define NPY_MAX_DIMS 32
#define NPY_MAX_HEADER (1u << 20) /* total header bytes we accept */

typedef struct {
    dt_type dtype;
    int fortran_order;
    int big_endian;      /* the data is big-endian (never for one-byte types) */
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t nelem;      /* product of shape; 1 for shape () */
    uint64_t data_bytes; /* nelem * dt_size(dtype); checked for overflow */
    size_t header_len;   /* bytes before the data: magic + length + dict */
} npy_header;

enum { NPY_NEED_MORE = 1 };

/* Nonzero when buf (at least 6 bytes) starts with the .npy magic. */
int npy_is_magic(const uint8_t *buf, size_t len);

/* Parses the header at the start of buf. Returns 0 and fills *h; or
 * NPY_NEED_MORE with h->header_len set to the total header size when len is
 * shorter than the header (call again with at least that many bytes); or a
 * negative io_error with a one-line reason in *st (st may be NULL). Shapes whose element
 * count or byte size overflow 64 bits are rejected here. */
int npy_parse(const uint8_t *buf, size_t len, npy_header *h, io_status *st);

/* Writes a header for dtype/shape (C order unless fortran_order) into buf;
 * returns its length (a multiple of 64), or a negative io_error when cap is
 * too small. Same output numpy's own writer would give for these fields,
 * keys in sorted order. */
int npy_write_header(uint8_t *buf, size_t cap, dt_type dtype, int ndim, const uint64_t *shape,
                     int fortran_order);

#endif
