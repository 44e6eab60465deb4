/* format.h - printing results exactly: shortest round-trip decimal for
 * floats, exact 128-bit integers, JSON strings, and file names escaped the
 * way sha256sum escapes them. */
#ifndef GPUBATCH_CLI_FORMAT_H
#define GPUBATCH_CLI_FORMAT_H

#include <stddef.h>
#include <stdio.h>

/* Shortest decimal that reads back as exactly v, and of those the nearest
 * to v, as Python's repr() writes it but with no ".0" on a whole number:
 * plain notation for decimal exponents -4 to 15 ("30", "1770", "0.0001",
 * "-0"), else scientific with a two-digit or longer exponent ("1e+16",
 * "1.5e-05", "1e+300"); "nan" (NaN of any sign or payload), "inf", "-inf".
 * Needs len >= 32. */
void fmt_double(char *buf, size_t len, double v);

/* The same for a float32 value: the shortest text that reads back as that
 * float ("0.1" for 0.1f, whose double is 0.10000000149011612). */
void fmt_float(char *buf, size_t len, float v);

/* The same for a float16 / bfloat16 value (given as the float32 it equals):
 * the shortest text that reads back to it when parsed as a double and
 * rounded to the type, as numpy and ml_dtypes read it. */
void fmt_float16(char *buf, size_t len, float v);
void fmt_bfloat16(char *buf, size_t len, float v);

/* Decimal text of a signed / unsigned 128-bit integer. */
void fmt_i128(char *buf, size_t len, __int128 v);
void fmt_u128(char *buf, size_t len, unsigned __int128 v);

/* Length of the valid UTF-8 sequence at p (1 for ASCII, NUL included), or
 * 0 when p starts no valid sequence (a stray, overlong or surrogate byte). */
size_t fmt_utf8_len(const unsigned char *p);

/* Writes s for a terminal: backslash, control characters (C0, DEL and
 * C1) and bytes that are not UTF-8 as escapes (\\, \n, \t, \r, \xHH),
 * so a name cannot split a line or reach the terminal as a command. */
void fmt_escape_text(FILE *f, const char *s);

/* Writes head, s as fmt_escape_text writes it, then tail, to f in one
 * write where memory allows: lines that threads print at once do not mix. */
void fmt_escaped_line(FILE *f, const char *head, const char *s, const char *tail);

/* Writes s as a JSON string literal (quotes included), valid UTF-8: a byte
 * that is not UTF-8 becomes the text \xHH. */
void fmt_json_string(FILE *f, const char *s);

/* Writes a JSON number, or for NaN/Inf the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no such numbers). text is fmt_double's output or
 * a decimal integer, written with all its digits whatever its size. */
void fmt_json_number(FILE *f, const char *text);

/* Writes a file name as sha256sum does: backslash and newline escaped.
 * Returns nonzero when it escaped anything (the line then starts with '\'). */
int fmt_name_needs_escape(const char *name);
void fmt_name(FILE *f, const char *name);

#endif
