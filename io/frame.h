/* frame.h - what the bytes of an input are: an .npy array (detected by its
 * magic, after decompression) or raw elements of a dtype the user names,
 * with an optional shape; little-endian, or big-endian data that the
 * reader byte-swaps (frame_info.swap). */
#ifndef GPUBATCH_IO_FRAME_H
#define GPUBATCH_IO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "npy.h"
#include "reader.h"

typedef struct {
    int is_npy;
    dt_type dtype;
    int fortran_order;
    size_t swap;                    /* big-endian: bytes per unit to swap (dt_swap_unit), else 0 */
    int ndim;                       /* -1: raw input without --shape (1-D, length from size) */
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t data_bytes;            /* UINT64_MAX when unknown until the end (raw) */
    uint64_t data_offset;           /* decoded bytes before the data (the .npy header) */
    unsigned char prefix[64];       /* data bytes read while sniffing */
    size_t prefix_len;
} frame_info;

/* Reads the start of r and fills fi. raw_dtype / raw_big_endian /
 * raw_shape describe raw input (DT_NONE / raw_ndim < 0 when not given); an
 * .npy input ignores them unless they contradict its header, which is an
 * error. Returns 0 or a negative io_error with a one-line reason. */
int frame_open(io_reader *r, dt_type raw_dtype, int raw_big_endian, const uint64_t *raw_shape,
               int raw_ndim, frame_info *fi, io_status *st);

/* Checks the data size seen at the end against the framing (raw: a whole
 * number of elements matching --shape). Returns 0 or IO_ERR_FORMAT. */
int frame_check_end(const frame_info *fi, uint64_t bytes, io_status *st);

/* Nonzero when more than one axis has a length above 1 (so C and Fortran
 * order differ). */
int frame_is_multidim(const frame_info *fi);

/* Elements in the array once its size is known. */
uint64_t frame_nelem(const frame_info *fi, uint64_t bytes);

#endif
