/* errtext.c - formatting of the io handles' error texts. */
#include "errtext.h"

#include <stdio.h>

/* Formats into buf when there is one. */
void io_put_msg(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Keeps the first error. */
int io_sticky_error(int *err, char *msg, size_t len, int code, const char *fmt, va_list ap)
{
    if (*err)
        return *err;
    *err = code;
    vsnprintf(msg, len, fmt, ap);
    return code;
}
