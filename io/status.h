/* status.h - the one error type that io, the runtime and cli share: a code
 * from the one list below and one line of text.
 *
 * A failing call returns its negative code and fills the io_status its
 * caller passed (a call without a handle), or keeps it in the handle that
 * failed (io_reader_status, pl_status, gpu_status, engine_status,
 * sched_status, backend_status); a layer above passes the same value on.
 * Only cli/ prints them and decides the exit status. */
#ifndef GPUBATCH_IO_STATUS_H
#define GPUBATCH_IO_STATUS_H

#include <stdarg.h>

/* Every error code of every layer: the io layer's (io_error) and the
 * driver's and devices' (gpu_error), in ranges of their own that never
 * overlap. A driver call's CUresult never travels as a code: where the
 * driver is called (CU_TRY and its siblings, runtime/cu.h) it becomes one
 * of these (cu_error), the driver's number and name kept in the line. A
 * state that cannot happen or a bad argument is GPU_ERR_INTERNAL, never a
 * driver failure. A code says what failed; no code is read for where it
 * came from. */
enum io_error {
    IO_OK = 0,
    IO_ERR_OPEN = -1,      /* missing, unreadable, a directory */
    IO_ERR_READ = -2,      /* read(2) failed */
    IO_ERR_TRUNCATED = -3, /* compressed stream ends inside a member */
    IO_ERR_CORRUPT = -4,   /* invalid deflate data or gzip header */
    IO_ERR_CRC = -5,       /* CRC-32 or ISIZE trailer mismatch */
    IO_ERR_NOMEM = -6,
    IO_ERR_WRITE = -7,     /* used by sinks */
    IO_ERR_EXISTS = -8,    /* output exists and no --force */
    IO_ERR_SAME = -9,      /* output would overwrite an input */
    IO_ERR_FORMAT = -10,   /* framing: bad .npy header, size mismatch */
    IO_ERR_PIPE = -11,     /* downstream closed (EPIPE) */
    IO_ERR_SEEK = -12,     /* the input cannot be read from an offset */
};

enum gpu_error {
    GPU_OK = 0,
    GPU_ERR_NO_DRIVER = -1001,      /* libcuda.so.1 not found */
    GPU_ERR_DRIVER_TOO_OLD = -1002, /* older than the ABI or the kernels need, or an entry
                                       point missing */
    GPU_ERR_NO_DEVICE = -1003,
    GPU_ERR_BAD_DEVICE = -1004,     /* --device N out of range */
    GPU_ERR_MODULE = -1005,         /* a module failed to load (the driver's log in the text) */
    GPU_ERR_PTX_TOO_NEW = -1006,    /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222) */
    GPU_ERR_OUT_OF_MEMORY = -1007,
    GPU_ERR_LAUNCH = -1008,         /* a kernel failed; the text names it */
    GPU_ERR_DRIVER = -1009,         /* any other failed driver call (cuInit's included) */
    GPU_ERR_INTERNAL = -1010,       /* a state that cannot happen, or a bad argument: a defect
                                       of the caller, not of the driver or the input */
};

/* The longest line a status keeps (longer ones are cut). */
#define IO_STATUS_TEXT 2048

/* A failure as a value: its code (0: none) and its one line, held in place
 * so that a call without a handle can fill one, and a layer above can keep
 * or pass it on whole. */
typedef struct {
    int code;
    char text[IO_STATUS_TEXT];
} io_status;

/* Empties *st (code 0, no line) when st is not NULL. */
void io_clear(io_status *st);

/* Sets *st to code and a formatted line when st is not NULL; returns code. */
int io_fail(io_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* io_fail with a va_list. */
int io_failv(io_status *st, int code, const char *fmt, va_list ap);

/* Sets *st as io_failv does unless it already holds a failure (a handle's
 * first failure sticks); returns the code in force. */
int io_keepv(io_status *st, int code, const char *fmt, va_list ap);

/* Copies *from into *st (st may be NULL, or from itself); returns its code. */
int io_pass(io_status *st, const io_status *from);

/* Copies from's line into *st under code, the caller's own result, which
 * may differ from from's code (st may be NULL, or from itself); returns code. */
int io_pass_as(io_status *st, int code, const io_status *from);

#endif
