/* sink.h - byte sinks: a regular file written atomically, or stdout / a
 * device / a FIFO written directly, or memory.
 *
 * A regular output goes to a temporary file in the same directory and is
 * renamed over the target only by io_sink_commit(); io_sink_abort(), an
 * error, or SIGINT/SIGTERM/SIGHUP (through io_sink_install_signal_cleanup)
 * removes it. An existing target is refused unless force is set; a target
 * that is one of the inputs is always refused. */
#ifndef GPUBATCH_IO_SINK_H
#define GPUBATCH_IO_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct io_sink io_sink;

typedef struct {
    uint64_t dev, ino;
} io_file_id;

/* The bytes its file system still has free for an unprivileged user,
 * where the sink writes a regular file (a temporary one, or standard
 * output redirected to one): 0 and *bytes, else -1. */
int io_sink_free_space(const io_sink *s, uint64_t *bytes);

/* Whether standard output is a regular file or block device that is one of
 * the inputs (writing there would destroy it). */
int io_stdout_is_input(const io_file_id *inputs, size_t ninputs);

/* Opens path ("-" is stdout, refused where it is one of the inputs). inputs/ninputs name files that must not be
 * overwritten. Returns 0 or a negative io_error with a one-line reason. */
int io_sink_open(io_sink **out, const char *path, int force, const io_file_id *inputs,
                 size_t ninputs, io_status *st);

/* Writes all n bytes or fails (sticky error). EPIPE gives IO_ERR_PIPE. */
int io_sink_write(io_sink *s, const void *buf, size_t n);

/* Starts a CRC-32 of every byte io_sink_write takes from here on;
 * io_sink_crc gives it (0 before the first byte), io_sink_crc_len the
 * number of those bytes. */
void io_sink_crc_start(io_sink *s);
uint32_t io_sink_crc(const io_sink *s);
uint64_t io_sink_crc_len(const io_sink *s);

/* Nonzero when the sink is a terminal (compressed output is refused there). */
int io_sink_is_tty(const io_sink *s);

/* Flushes, fsyncs nothing, closes and renames the temporary file into place.
 * Frees the sink whatever happens. */
int io_sink_commit(io_sink *s);

/* The one-line reason the last io_sink_commit() on this thread failed
 * (the sink itself is freed by then), or "". */
const char *io_sink_commit_error(void);

/* Removes the temporary file (if any) and frees; accepts NULL. */
void io_sink_abort(io_sink *s);

/* Opens a spool: an unnamed temporary file (nothing to remove, whatever
 * happens) in the directory of near's target, or in $TMPDIR (else /tmp)
 * when near (may be NULL) writes to stdout, a device or a FIFO. Write it
 * with io_sink_write, append it to another sink with io_sink_spool_copy,
 * free it with io_sink_abort. Returns 0 or a negative io_error with a
 * one-line reason. */
int io_sink_open_spool(io_sink **out, const io_sink *near, io_status *st);

/* A spool's errors name its directory ("DIR: writing a temporary file:
 * REASON"), not the output it is joined to. */

/* Appends every byte written to spool to dst. Returns 0 or a negative
 * io_error; the reason is io_sink_error() of spool (reading) or dst. */
int io_sink_spool_copy(io_sink *spool, io_sink *dst);

/* Opens a sink that keeps every byte written in memory (for producing a
 * compressed stream in memory, e.g. a benchmark's input); take the bytes
 * with io_sink_mem_take or drop them with io_sink_abort. Returns 0 or
 * IO_ERR_NOMEM. */
int io_sink_open_mem(io_sink **out);

/* Hands over every byte written to a memory sink: *data (free() it; NULL
 * when nothing was written) and *len. Frees the sink whatever happens.
 * Returns 0, or the sticky error (then *data is NULL and *len 0). */
int io_sink_mem_take(io_sink *s, void **data, size_t *len);

/* The one-line reason of the sticky error. */
const char *io_sink_error(const io_sink *s);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that unlink every open temporary
 * file and then re-raise the signal; SIGPIPE is ignored so writes see EPIPE.
 * Call once from main. */
void io_sink_install_signal_cleanup(void);

/* Unlinks every open temporary file, as that handler does: for a signal
 * handler that ends the process itself; async-signal-safe. */
void io_sink_remove_temps(void);

#endif
