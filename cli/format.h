/* format.h - printing results exactly: shortest round-trip decimal for
 * floats, exact 128-bit integers, JSON strings, and file names escaped the
 * way sha256sum escapes them. */
#ifndef GPUBATCH_CLI_FORMAT_H
#define GPUBATCH_CLI_FORMAT_H

#include <stddef.h>
#include <stdio.h>

/* Shortest decimal that reads back as exactly v ("0.1", "1e+300", "-0",
 * "nan", "inf", "-inf"); NaN of any sign or payload prints "nan". */
void fmt_double(char *buf, size_t len, double v);

/* The same for a float32 value (shortest text that strtof reads back). */
void fmt_float(char *buf, size_t len, float v);

/* Decimal text of a signed / unsigned 128-bit integer. */
void fmt_i128(char *buf, size_t len, __int128 v);
void fmt_u128(char *buf, size_t len, unsigned __int128 v);

/* Writes s as a JSON string literal (quotes included). */
void fmt_json_string(FILE *f, const char *s);

/* Writes a JSON number, or for NaN/Inf the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no such numbers). text is fmt_double's output. */
void fmt_json_number(FILE *f, const char *text);

/* Writes a file name as sha256sum does: backslash and newline escaped.
 * Returns nonzero when it escaped anything (the line then starts with '\'). */
int fmt_name_needs_escape(const char *name);
void fmt_name(FILE *f, const char *name);

#endif
