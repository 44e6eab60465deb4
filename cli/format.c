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

/* A decimal D[0].D[1..n-1] x 10^exp with n significant digits (no
 * trailing zeros once trimmed). */
typedef struct {
    char d[24];
    int n;
    int exp;
} fmt_decimal;

/* Whether the decimal reads back as v (as a float when is_float). */
static int fmt_reads_back(const fmt_decimal *x, int neg, double v, int is_float)
{
    char text[48];
    snprintf(text, sizeof text, "%s%c.%.*se%d", neg ? "-" : "", x->d[0], x->n - 1, x->d + 1,
             x->exp);
    return is_float ? strtof(text, NULL) == (float)v : strtod(text, NULL) == v;
}

/* Moves the decimal one unit in its last digit up (dir 1) or down (-1),
 * keeping its digit count where a carry or borrow does not change it. */
static void fmt_step(fmt_decimal *x, int dir)
{
    int i = x->n - 1;
    if (dir > 0) {
        while (i >= 0 && x->d[i] == '9')
            x->d[i--] = '0';
        if (i >= 0) {
            x->d[i]++;
        } else { /* 99..9 -> 100..0: one more power of ten */
            x->d[0] = '1';
            x->exp++;
        }
    } else {
        while (i >= 0 && x->d[i] == '0')
            x->d[i--] = '9';
        x->d[i]--; /* d[0] is never 0, so the borrow stops there */
        if (x->d[0] == '0') { /* 100..0 -> 99..9 (n nines), one power of ten less */
            memmove(x->d, x->d + 1, (size_t)x->n - 1);
            x->d[x->n - 1] = '9';
            x->exp--;
        }
    }
}

/* The shortest decimal that reads back as |v| (nonzero, finite), and of
 * those the nearest to v: for each digit count, the correctly rounded
 * decimal, else the other one of the two that bracket v (at a power of two
 * the values that read back as v lie more on one side of it than on the
 * other). */
static void fmt_shortest(double v, int is_float, fmt_decimal *out)
{
    int neg = signbit(v), most = is_float ? 9 : 17;
    for (int p = 1; p <= most; p++) {
        char text[48];
        snprintf(text, sizeof text, "%.*e", p - 1, fabs(v));
        fmt_decimal x = {.n = p};
        x.d[0] = text[0];
        if (p > 1)
            memcpy(x.d + 1, text + 2, (size_t)p - 1);
        x.exp = atoi(strchr(text, 'e') + 1);
        *out = x;
        if (fmt_reads_back(&x, neg, v, is_float))
            break;
        fmt_decimal up = x, down = x;
        fmt_step(&up, 1);
        fmt_step(&down, -1);
        if (fmt_reads_back(&up, neg, v, is_float)) {
            *out = up;
            break;
        }
        if (fmt_reads_back(&down, neg, v, is_float)) {
            *out = down;
            break;
        }
    }
    while (out->n > 1 && out->d[out->n - 1] == '0')
        out->n--;
}

/* Writes the shortest decimal of v in plain notation when its exponent is
 * -4 to 15, else in scientific notation with a signed exponent of at least
 * two digits (Python's repr() rule), without a trailing ".0". */
static void fmt_shortest_text(char *buf, size_t len, double v, int is_float)
{
    if (fmt_special(buf, len, v))
        return;
    const char *sign = signbit(v) ? "-" : "";
    if (v == 0) {
        snprintf(buf, len, "%s0", sign);
        return;
    }
    fmt_decimal x;
    fmt_shortest(v, is_float, &x);
    const char *d = x.d;
    int n = x.n, e = x.exp;
    if (e < -4 || e >= 16)
        snprintf(buf, len, "%s%c%s%.*se%c%02d", sign, d[0], n > 1 ? "." : "", n - 1, d + 1,
                 e < 0 ? '-' : '+', e < 0 ? -e : e);
    else if (e < 0)
        snprintf(buf, len, "%s0.%.*s%.*s", sign, -e - 1, "0000", n, d);
    else if (n <= e + 1)
        snprintf(buf, len, "%s%.*s%.*s", sign, n, d, e + 1 - n, "000000000000000");
    else
        snprintf(buf, len, "%s%.*s.%.*s", sign, e + 1, d, n - e - 1, d + e + 1);
}

/* Shortest decimal that strtod reads back as v. */
void fmt_double(char *buf, size_t len, double v)
{
    fmt_shortest_text(buf, len, v, 0);
}

/* Shortest decimal that strtof reads back as v. */
void fmt_float(char *buf, size_t len, float v)
{
    fmt_shortest_text(buf, len, v, 1);
}

/* x rounded to nearest-even in a binary format of p significand bits and
 * exponents emin..emax (subnormals below 2^emin, infinity past the largest
 * finite value): a float16 or bfloat16 held in a double. */
static double fmt_round_to(double x, int p, int emin, int emax)
{
    if (x == 0 || isnan(x) || isinf(x))
        return x;
    int e;
    frexp(x, &e); /* the leading bit is 2^(e-1) */
    int lead = e - 1 < emin ? emin : e - 1;
    if (lead > emax)
        return copysign(INFINITY, x);
    double q = ldexp(1.0, lead - p + 1); /* the spacing of the format at x */
    double r = nearbyint(x / q) * q;      /* both steps exact but the rounding */
    return fabs(r) >= ldexp(1.0, emax + 1) ? copysign(INFINITY, x) : r;
}

/* Shortest %g precision whose text, read as a double and rounded to the
 * format (fmt_round_to's p, emin, emax), gives back v. */
static void fmt_narrow(char *buf, size_t len, float v, int p, int emin, int emax)
{
    if (fmt_special(buf, len, v))
        return;
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)v);
        double back = fmt_round_to(strtod(buf, NULL), p, emin, emax);
        if (back == v && !signbit(back) == !signbit(v))
            return;
    }
}

/* Shortest text of a float16 value. */
void fmt_float16(char *buf, size_t len, float v)
{
    fmt_narrow(buf, len, v, 11, -14, 15);
}

/* Shortest text of a bfloat16 value. */
void fmt_bfloat16(char *buf, size_t len, float v)
{
    fmt_narrow(buf, len, v, 8, -126, 127);
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

/* Length of a valid UTF-8 sequence (RFC 3629: no overlongs, surrogates or
 * values above U+10FFFF), or 0. */
size_t fmt_utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* Escaped text for a terminal line. */
void fmt_escape_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = fmt_utf8_len(p);
        int control = n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f || *p == '\\')) ||
                      (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
        if (!control)
            fwrite(p, 1, n, f);
        else if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else
            for (size_t i = 0; i < (n ? n : 1); i++)
                fprintf(f, "\\x%02x", p[i]);
        p += n ? n : 1;
    }
}

/* Writes head, escaped s and tail to f as they come. */
static void escaped_parts(FILE *f, const char *head, const char *s, const char *tail)
{
    fputs(head, f);
    fmt_escape_text(f, s);
    fputs(tail, f);
}

/* One line of head, escaped s and tail in one write (see format.h); piece
 * by piece where memory runs out, never lost. */
void fmt_escaped_line(FILE *f, const char *head, const char *s, const char *tail)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
        escaped_parts(m, head, s, tail);
        if (fclose(m) == 0) {
            fwrite(text, 1, len, f);
            free(text);
            return;
        }
        free(text);
    }
    escaped_parts(f, head, s, tail);
}

/* JSON string with the mandatory escapes; bytes that are not UTF-8 as text. */
void fmt_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = fmt_utf8_len(p);
        if (n == 0)
            fprintf(f, "\\\\x%02x", *p);
        else if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fwrite(p, 1, n, f);
        p += n ? n : 1;
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
