/* fuzz_frame.c - fuzz harness for the framing of an input: .npy or raw data
 * with a --dtype and a --shape, streamed through the buffer ring.
 *
 * Input layout: byte 0 picks the raw dtype (its value modulo DT_COUNT, 0:
 * none) and byte order (big-endian from 128 on), byte 1 the raw ndim
 * (255: no --shape), then ndim 8-byte little-endian dims, then the input
 * bytes (plain or gzip). frame_open must accept or refuse with a reason; an
 * accepted frame must be self-consistent, and streaming the data through a
 * small ring must end in exactly one of: the right amount of data, a
 * truncation or excess error, or a reader error. Nothing may allocate from
 * a size the input claims. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/frame.h"
#include "io/pipeline.h"

#define RING_SLOTS 3
#define RING_CHUNK 4096
#define DATA_CAP ((uint64_t)1 << 20) /* stop streaming after this many bytes */

static unsigned char ring_mem[RING_SLOTS][RING_CHUNK];

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Element count of a shape (0 when any axis is empty), or UINT64_MAX when
 * it does not fit in 64 bits; in 128-bit arithmetic, independently of how
 * frame.c and npy.c compute it. */
static uint64_t shape_product(const uint64_t *shape, int ndim)
{
    unsigned __int128 n = 1;
    int empty = 0, over = 0;
    for (int i = 0; i < ndim; i++) {
        empty |= shape[i] == 0;
        if (!over) {
            n *= shape[i];
            over = n > UINT64_MAX;
        }
    }
    return empty ? 0 : over ? UINT64_MAX : (uint64_t)n;
}

/* Checks what frame_open reported against the raw options it was given. */
static void check_frame(const frame_info *fi, dt_type raw_dtype, int raw_big,
                        const uint64_t *raw_shape, int raw_ndim)
{
    require(fi->dtype > DT_NONE && fi->dtype < DT_COUNT);
    require(fi->prefix_len <= sizeof fi->prefix);
    require(fi->swap == 0 || fi->swap == dt_swap_unit(fi->dtype));
    if (!fi->is_npy)
        require(fi->swap == (raw_big ? dt_swap_unit(raw_dtype) : 0));
    if (raw_dtype != DT_NONE)
        require(fi->dtype == raw_dtype);
    if (fi->is_npy) {
        require(fi->ndim >= 0 && fi->ndim <= NPY_MAX_DIMS);
        uint64_t n = shape_product(fi->shape, fi->ndim);
        require(n != UINT64_MAX && fi->data_bytes == n * dt_size(fi->dtype));
        require(fi->data_bytes <= INT64_MAX);
        return;
    }
    require(fi->ndim == raw_ndim);
    if (raw_ndim < 0) {
        require(fi->data_bytes == UINT64_MAX);
        return;
    }
    uint64_t n = shape_product(raw_shape, raw_ndim);
    require(n != UINT64_MAX && fi->data_bytes == n * dt_size(fi->dtype));
    require(fi->data_bytes <= INT64_MAX);
    require(!memcmp(fi->shape, raw_shape, (size_t)raw_ndim * sizeof *raw_shape));
}

/* Streams the data through a small ring; checks the amount against the frame. */
static void stream_data(io_reader *r, const frame_info *fi)
{
    void *bufs[RING_SLOTS];
    for (int i = 0; i < RING_SLOTS; i++)
        bufs[i] = ring_mem[i];
    pl_ring *pl;
    if (pl_open(&pl, r, bufs, RING_SLOTS, RING_SLOTS, RING_CHUNK, fi->prefix, fi->prefix_len,
                fi->data_bytes, fi->swap) < 0)
        return;
    uint64_t bytes = 0, expect_offset = 0;
    int rc, capped = 0;
    pl_chunk c;
    while ((rc = pl_next(pl, &c)) > 0) {
        require(c.bytes > 0 && c.bytes <= RING_CHUNK && c.offset == expect_offset);
        require(c.data == bufs[c.slot]);
        expect_offset += c.bytes;
        bytes += c.bytes;
        pl_release(pl, c.slot);
        if (bytes >= DATA_CAP) {
            capped = 1;
            break;
        }
    }
    if (!capped) {
        /* A size from a header or --shape is delivered exactly or not at all. */
        if (rc == 0 && (fi->is_npy || fi->ndim >= 0))
            require(bytes == fi->data_bytes);
        if (rc < 0)
            require(pl_status(pl)->code == rc && pl_status(pl)->text[0] != '\0');
        io_status err;
        if (rc == 0) {
            int end = frame_check_end(fi, bytes, &err);
            require(end == 0 || end == IO_ERR_FORMAT);
            if (end == 0)
                require(frame_nelem(fi, bytes) * dt_size(fi->dtype) == bytes);
        }
    }
    require(pl_bytes(pl) == bytes);
    pl_close(pl);
}

/* Splits the input into raw options and bytes, frames and streams them. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    dt_type raw_dtype = (dt_type)(data[0] % DT_COUNT);
    int raw_big = data[0] >= 128; /* raw input said big-endian */
    int raw_ndim = data[1] == 255 ? -1 : data[1] % (NPY_MAX_DIMS + 1);
    data += 2;
    size -= 2;
    uint64_t raw_shape[NPY_MAX_DIMS] = {0};
    for (int i = 0; i < raw_ndim; i++) {
        if (size < 8)
            return 0;
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--)
            v = v << 8 | data[b];
        raw_shape[i] = v;
        data += 8;
        size -= 8;
    }
    io_reader *r;
    io_status err;
    require(io_reader_open_mem(&r, data, size, &err) == 0);
    frame_info fi;
    err.text[0] = '\0';
    int rc = frame_open(r, raw_dtype, raw_big, raw_shape, raw_ndim, &fi, &err);
    if (rc < 0) {
        require(err.text[0] != '\0' && memchr(err.text, '\0', sizeof err.text));
        io_reader_close(r);
        return 0;
    }
    require(rc == 0);
    check_frame(&fi, raw_dtype, raw_big, raw_shape, raw_ndim);
    if (frame_is_multidim(&fi))
        require(fi.ndim > 1);
    stream_data(r, &fi);
    io_reader_close(r);
    return 0;
}
