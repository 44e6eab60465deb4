/* msg.h - the one message layer: every line gpubatch writes to stderr, and
 * the progress line they share the terminal with.
 *
 * Lines start with "gpubatch: "; errors and warnings always print (unless
 * -q silences warnings), info lines only at -v. */
#ifndef GPUBATCH_CLI_MSG_H
#define GPUBATCH_CLI_MSG_H

#include <stdint.h>

#include "io/status.h"

enum { MSG_QUIET = 0, MSG_NORMAL = 1, MSG_VERBOSE = 2 };

/* Sets the verbosity (MSG_QUIET, MSG_NORMAL, MSG_VERBOSE). */
void msg_set_level(int level);
int msg_level(void);

/* "gpubatch: error: ..." */
/* Takes SIGBUS (after io_sink_install_signal_cleanup): a fault in a view
 * of an input file (io/view.h: the file was cut while mapped) prints one
 * error line naming the file ("the file shrank from N to M bytes while
 * being read", as a read that meets the cut says), removes the temporary
 * outputs and exits with status 1; any other SIGBUS keeps its action. */
void msg_guard_views(void);

void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failure from io or the runtime as an error line: "NAME: TEXT", or the
 * text alone where name is NULL (a failure of the machine, not of an
 * input); returns 1, the exit status of a failed command. */
int msg_status(const char *name, const io_status *st);
/* "gpubatch: warning: ..." unless quiet. */
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "gpubatch: ..." at -v. */
void msg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Flushes standard output: 0, or 1 after an error line naming "(stdout)"
 * when a write to it failed (once; a closed pipe prints nothing). */
int msg_flush_stdout(void);

/* Marks the process's start for msg_elapsed(); main calls it first. */
void msg_start_clock(void);

/* Seconds since msg_start_clock() on the monotonic clock (the times that
 * -v reports "after the process started"). */
double msg_elapsed(void);

/* The progress line on stderr for long work.
 *
 * Shown only when stderr is a terminal, warnings are not silenced (-q) and
 * the work has lasted longer than GPUBATCH_PROGRESS_DELAY seconds (default
 * 1): input bytes done, the rate, and the percentage and time left when the
 * input size is known. Redrawn at most four times a second, by the thread
 * that calls progress_update() (the consumer of the pipeline), so there is
 * no lock and no timer thread. msg_error(), msg_warn() and msg_info() erase
 * the line before they print, and progress_end() erases it for good. One
 * line for the whole process: the state is global and single-threaded. */

/* Starts the line for one input: name is shown as given (not copied: it
 * must live until progress_end), total is its size in bytes or a negative
 * number when unknown. */
void progress_begin(const char *name, int64_t total);

/* Reports bytes of input done so far; redraws when due. */
void progress_update(uint64_t done);

/* Erases the line if it is shown (before other output on stderr); the next
 * update draws it again. */
void progress_erase(void);

/* Erases the line and stops updates until the next progress_begin. */
void progress_end(void);

#endif
