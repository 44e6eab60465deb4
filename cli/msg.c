/* msg.c - stderr messages with one prefix and a verbosity level, and one
 * self-erasing progress line on a terminal's stderr that they erase. */
#include "msg.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "io/clock.h"
#include "io/sink.h"
#include "io/view.h"

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
    char head[64];
    snprintf(head, sizeof head, "gpubatch: %s", kind);
    progress_erase();
    fmt_escaped_line(stderr, head, line, "\n");
}

/* An error line (always printed). */
void msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line("error: ", fmt, ap);
    va_end(ap);
}

/* A failure's line, named by its input where it has one (see msg.h). */
int msg_status(const char *name, const io_status *st)
{
    if (name)
        msg_error("%s: %s", name, st->text);
    else
        msg_error("%s", st->text);
    return 1;
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

#define PROGRESS_INTERVAL 0.25 /* seconds between redraws */
#define PROGRESS_DELAY 1.0     /* seconds of work before the line appears */

static struct {
    int active;       /* between progress_begin and progress_end, and wanted */
    int shown;        /* the line is on the terminal now */
    const char *name;
    int64_t total;    /* bytes, negative when unknown */
    double start;     /* when progress_begin ran */
    double last_draw; /* when the line was last drawn, negative before */
    double delay;
} pg;

/* The delay before the line appears: GPUBATCH_PROGRESS_DELAY seconds when
 * it is a non-negative number, else the default. */
static double progress_delay(void)
{
    const char *s = getenv("GPUBATCH_PROGRESS_DELAY");
    char *end;
    if (!s || !*s)
        return PROGRESS_DELAY;
    double v = strtod(s, &end);
    return (*end || !(v >= 0)) ? PROGRESS_DELAY : v;
}

/* Writes a byte count with a decimal unit ("512 B", "1.25 GB"). */
static void progress_bytes(char *buf, size_t len, double v)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (v >= 1000 && u < (int)(sizeof units / sizeof units[0]) - 1) {
        v /= 1000;
        u++;
    }
    snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", v, units[u]);
}

/* Writes a duration as M:SS or H:MM:SS. */
static void progress_time(char *buf, size_t len, double s)
{
    unsigned long long t = s < 1e9 ? (unsigned long long)(s + 0.5) : 999999999ull;
    if (t >= 3600)
        snprintf(buf, len, "%llu:%02llu:%02llu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%llu:%02llu", t / 60, t % 60);
}

/* Width of the terminal on stderr (80 when unknown). */
static int progress_columns(void)
{
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* Draws "NAME: DONE of TOTAL (P%), RATE/s, T left", the name shortened from
 * the left when the line would not fit the terminal. */
static void progress_draw(uint64_t done, double elapsed)
{
    char d[32], tot[32], rate[32], left[32], stats[160];
    double per_s = elapsed > 0 ? (double)done / elapsed : 0;
    progress_bytes(d, sizeof d, (double)done);
    progress_bytes(rate, sizeof rate, per_s);
    if (pg.total > 0) {
        double frac = (double)done / (double)pg.total;
        progress_bytes(tot, sizeof tot, (double)pg.total);
        if (per_s > 0 && done <= (uint64_t)pg.total)
            progress_time(left, sizeof left, (double)((uint64_t)pg.total - done) / per_s);
        else
            snprintf(left, sizeof left, "?");
        snprintf(stats, sizeof stats, ": %s of %s (%.0f%%), %s/s, %s left", d, tot,
                 100 * (frac < 1 ? frac : 1), rate, left);
    } else {
        snprintf(stats, sizeof stats, ": %s, %s/s", d, rate);
    }
    int room = progress_columns() - 1 - (int)strlen(stats);
    int nlen = (int)strlen(pg.name);
    const char *name = pg.name, *dots = "";
    if (nlen > room) {
        dots = room > 3 ? "..." : "";
        name = pg.name + nlen - (room > 3 ? room - 3 : 0);
    }
    fprintf(stderr, "\r%s%s%s\033[K", dots, name, stats);
    pg.shown = 1;
}

/* Starts the line for one input when stderr is a terminal and not -q. */
void progress_begin(const char *name, int64_t total)
{
    progress_end();
    if (msg_level() < MSG_NORMAL || !isatty(2))
        return;
    pg.active = 1;
    pg.name = name;
    pg.total = total;
    pg.start = io_seconds();
    pg.last_draw = -1;
    pg.delay = progress_delay();
}

/* Redraws once the delay has passed, at most every PROGRESS_INTERVAL. */
void progress_update(uint64_t done)
{
    if (!pg.active)
        return;
    double t = io_seconds();
    if (t - pg.start < pg.delay || (pg.last_draw >= 0 && t - pg.last_draw < PROGRESS_INTERVAL))
        return;
    pg.last_draw = t;
    progress_draw(done, t - pg.start);
}

/* Clears the line so that other text starts at column 0. */
void progress_erase(void)
{
    if (!pg.shown)
        return;
    fputs("\r\033[K", stderr);
    pg.shown = 0;
}

/* Clears the line and stops drawing. */
void progress_end(void)
{
    progress_erase();
    pg.active = 0;
}

/* SIGBUS's action before msg_guard_views() took it (the sink's cleanup). */
static struct sigaction msg_bus_old;

/* Appends n bytes of s to line (cap bytes) at *at, as far as they fit;
 * async-signal-safe. */
static void msg_put(char *line, size_t cap, size_t *at, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *at < cap; i++)
        line[(*at)++] = s[i];
}

/* Appends v in decimal (async-signal-safe). */
static void msg_put_u64(char *line, size_t cap, size_t *at, uint64_t v)
{
    char d[24];
    size_t n = 0;
    do
        d[sizeof d - ++n] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof d);
    msg_put(line, cap, at, d + sizeof d - n, n);
}

/* Appends a file name with its control bytes escaped as fmt_escape_text
 * escapes them (async-signal-safe). */
static void msg_put_name(char *line, size_t cap, size_t *at, const char *name)
{
    static const char hex[] = "0123456789abcdef";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        char e[4] = {'\\', (char)*p, 0, 0};
        if (*p == '\\' || *p == '\n' || *p == '\t' || *p == '\r') {
            e[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : '\\';
            msg_put(line, cap, at, e, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            msg_put(line, cap, at, "\\x", 2);
            e[0] = hex[*p >> 4];
            e[1] = hex[*p & 15];
            msg_put(line, cap, at, e, 2);
        } else {
            msg_put(line, cap, at, (const char *)p, 1);
        }
    }
}

/* SIGBUS: a read of a view of an input (io/view.h) past the end of a file
 * that was cut while it was read ends the run as a read error does: one
 * line naming the file, no temporary output left, exit status 1. The
 * threads that read the cut pages at once fault together: the first one
 * reports, the others wait for its exit. Any other SIGBUS gets the action
 * it had. */
static void msg_bus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    static atomic_int reporting;
    io_view_fault f;
    if (!io_view_owner(si->si_addr, &f)) {
        sigaction(sig, &msg_bus_old, NULL); /* the fault comes again, to that action */
        return;
    }
    if (atomic_exchange(&reporting, 1))
        for (;;)
            pause();
    struct stat st;
    uint64_t now = fstat(f.fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    char line[4096];
    size_t at = 0, cap = sizeof line - 1;
    if (pg.shown)
        msg_put(line, cap, &at, "\r\033[K", 4);
    msg_put(line, cap, &at, "gpubatch: error: ", 17);
    msg_put_name(line, cap, &at, f.label ? f.label : "input");
    msg_put(line, cap, &at, ": the file shrank from ", 23);
    msg_put_u64(line, cap, &at, f.size);
    msg_put(line, cap, &at, " to ", 4);
    msg_put_u64(line, cap, &at, now);
    static const char tail[] = " bytes while being read";
    msg_put(line, cap, &at, tail, sizeof tail - 1);
    line[at++] = '\n';
    for (size_t done = 0; done < at;) {
        ssize_t k = write(STDERR_FILENO, line + done, at - done);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    io_sink_remove_temps();
    _exit(1);
}

/* Takes SIGBUS for faults in input views (see msg.h). */
void msg_guard_views(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = msg_bus;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &msg_bus_old);
}
