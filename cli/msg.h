/* msg.h - the one message layer: every line gpubatch writes to stderr.
 *
 * Lines start with "gpubatch: "; errors and warnings always print (unless
 * -q silences warnings), info lines only at -v. */
#ifndef GPUBATCH_CLI_MSG_H
#define GPUBATCH_CLI_MSG_H

enum { MSG_QUIET = 0, MSG_NORMAL = 1, MSG_VERBOSE = 2 };

/* Sets the verbosity (MSG_QUIET, MSG_NORMAL, MSG_VERBOSE). */
void msg_set_level(int level);
int msg_level(void);

/* "gpubatch: error: ..." */
void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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

#endif
