/* msg.c - stderr messages with one prefix and a verbosity level. */
#include "msg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "io/clock.h"
#include "progress.h"

static int msg_verbosity = MSG_NORMAL;
static double msg_t0; /* msg_start_clock()'s time */

/* Marks the process's start. */
void msg_start_clock(void)
{
    msg_t0 = io_seconds();
}

/* Seconds since the start was marked. */
double msg_elapsed(void)
{
    return io_seconds() - msg_t0;
}

/* Sets the verbosity. */
void msg_set_level(int level)
{
    msg_verbosity = level;
}

/* Current verbosity. */
int msg_level(void)
{
    return msg_verbosity;
}

/* Writes one prefixed line. */
static void msg_line(const char *kind, const char *fmt, va_list ap)
{
    char line[4096];
    vsnprintf(line, sizeof line, fmt, ap);
    progress_erase();
    fprintf(stderr, "gpubatch: %s", kind);
    fmt_escape_text(stderr, line);
    fputc('\n', stderr);
}

/* An error line (always printed). */
void msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line("error: ", fmt, ap);
    va_end(ap);
}

/* A warning line unless -q. */
void msg_warn(const char *fmt, ...)
{
    if (msg_verbosity < MSG_NORMAL)
        return;
    va_list ap;
    va_start(ap, fmt);
    msg_line("warning: ", fmt, ap);
    va_end(ap);
}

/* An info line at -v. */
void msg_info(const char *fmt, ...)
{
    if (msg_verbosity < MSG_VERBOSE)
        return;
    va_list ap;
    va_start(ap, fmt);
    msg_line("", fmt, ap);
    va_end(ap);
}

/* Flushes stdout and reports a failed write once. */
int msg_flush_stdout(void)
{
    static int reported;
    errno = 0;
    int failed = fflush(stdout) != 0;
    int e = errno ? errno : EIO;
    if (!failed && !ferror(stdout))
        return 0;
    if (!reported && e != EPIPE)
        msg_error("(stdout): %s", strerror(e));
    reported = 1;
    return 1;
}
