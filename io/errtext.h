/* errtext.h - the one-line error texts of the io handles.
 *
 * A handle keeps a sticky first error: its code and one line of text; later
 * failures keep the first. */
#ifndef GPUBATCH_IO_ERRTEXT_H
#define GPUBATCH_IO_ERRTEXT_H

#include <stdarg.h>
#include <stddef.h>

/* Formats a one-line message into buf when buf is not NULL. */
void io_put_msg(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records code and its text in *err / msg unless an error is already there;
 * returns the error in force. */
int io_sticky_error(int *err, char *msg, size_t len, int code, const char *fmt, va_list ap);

#endif
