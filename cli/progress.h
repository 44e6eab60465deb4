/* progress.h - the progress line on stderr for long work.
 *
 * Shown only when stderr is a terminal, warnings are not silenced (-q) and
 * the work has lasted longer than GPUBATCH_PROGRESS_DELAY seconds (default
 * 1): input bytes done, the rate, and the percentage and time left when the
 * input size is known. Redrawn at most four times a second, by the thread
 * that calls progress_update() (the consumer of the pipeline), so there is
 * no lock and no timer thread. msg_error() and msg_warn() erase the line
 * before they print, and progress_end() erases it for good. One line for
 * the whole process: the state is global and single-threaded. */
#ifndef GPUBATCH_CLI_PROGRESS_H
#define GPUBATCH_CLI_PROGRESS_H

#include <stdint.h>

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
