/* status.c - filling and passing on io_status values. */
#include "status.h"

#include <stdio.h>
#include <string.h>

/* Empties a status. */
void io_clear(io_status *st)
{
    if (st) {
        st->code = 0;
        st->text[0] = '\0';
    }
}

/* Formats the line into st when there is one. */
int io_failv(io_status *st, int code, const char *fmt, va_list ap)
{
    if (st) {
        st->code = code;
        vsnprintf(st->text, sizeof st->text, fmt, ap);
    }
    return code;
}

/* Formats the line into st when there is one. */
int io_fail(io_status *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    io_failv(st, code, fmt, ap);
    va_end(ap);
    return code;
}

/* Keeps the first failure. */
int io_keepv(io_status *st, int code, const char *fmt, va_list ap)
{
    if (st->code)
        return st->code;
    return io_failv(st, code, fmt, ap);
}

/* Copies a status whole; a copy onto itself is a no-op. */
int io_pass(io_status *st, const io_status *from)
{
    if (st && st != from)
        memcpy(st, from, sizeof *st);
    return from->code;
}

/* Copies a status's line, the code the caller's. */
int io_pass_as(io_status *st, int code, const io_status *from)
{
    io_pass(st, from);
    if (st)
        st->code = code;
    return code;
}
