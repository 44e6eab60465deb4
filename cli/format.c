/* format.c - exact text for results. */
#include "format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Names NaN and infinities the same way on every platform. */
static int fmt_special(char *buf, size_t len, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return 1;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return 1;
    }
    return 0;
}

/* Shortest %g precision that round-trips through strtod. */
void fmt_double(char *buf, size_t len, double v)
{
    if (fmt_special(buf, len, v))
        return;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v && (v != 0 || signbit(strtod(buf, NULL)) == signbit(v)))
            return;
    }
}

/* Shortest %g precision that round-trips through strtof. */
void fmt_float(char *buf, size_t len, float v)
{
    if (fmt_special(buf, len, v))
        return;
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            return;
    }
}

/* Unsigned 128-bit decimal. */
void fmt_u128(char *buf, size_t len, unsigned __int128 v)
{
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    size_t i = 0;
    while (n > 0 && i + 1 < len)
        buf[i++] = tmp[--n];
    buf[i] = 0;
}

/* Signed 128-bit decimal. */
void fmt_i128(char *buf, size_t len, __int128 v)
{
    if (v < 0 && len > 1) {
        buf[0] = '-';
        fmt_u128(buf + 1, len - 1, (unsigned __int128)0 - (unsigned __int128)v);
    } else {
        fmt_u128(buf, len, (unsigned __int128)v);
    }
}

/* JSON string with the mandatory escapes. */
void fmt_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* JSON number or the conventional strings for non-finite values. */
void fmt_json_number(FILE *f, const char *text)
{
    if (!strcmp(text, "nan"))
        fputs("\"NaN\"", f);
    else if (!strcmp(text, "inf"))
        fputs("\"Infinity\"", f);
    else if (!strcmp(text, "-inf"))
        fputs("\"-Infinity\"", f);
    else
        fputs(text, f);
}

/* True when a name holds a backslash or newline. */
int fmt_name_needs_escape(const char *name)
{
    return strpbrk(name, "\\\n") != NULL;
}

/* The name with backslash and newline escaped. */
void fmt_name(FILE *f, const char *name)
{
    for (const char *p = name; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
}
