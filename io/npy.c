/* npy.c - the NumPy .npy header.
 *
 * The header dict is a Python literal; numpy reads it with literal_eval.
 * We accept the subset any writer produces: a dict with exactly the keys
 * 'descr' (a string), 'fortran_order' (True/False) and 'shape' (a tuple of
 * non-negative integers), in any order, with single or double quotes, any
 * whitespace and optional trailing commas. Everything else is refused with
 * a reason. */
#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reader.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Cursor over the header dict text. */
struct scan {
    const uint8_t *p, *end;
    io_status *st; /* the caller's, or NULL */
};

/* Nonzero when buf starts with the .npy magic. */
int npy_is_magic(const uint8_t *buf, size_t len)
{
    return len >= sizeof(npy_magic) && !memcmp(buf, npy_magic, sizeof(npy_magic));
}

/* Skips Python whitespace. */
static void skip_ws(struct scan *s)
{
    while (s->p < s->end &&
           (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r' || *s->p == '\f' ||
            *s->p == '\v'))
        s->p++;
}

/* Consumes character c after optional whitespace; returns 1 if it was there. */
static int accept(struct scan *s, char c)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == (uint8_t)c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* Parses a quoted string without escapes into out (NUL-terminated). */
static int parse_string(struct scan *s, char *out, size_t cap, const char *what)
{
    skip_ws(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: expected a quoted %s", what);
    uint8_t q = *s->p++;
    size_t n = 0;
    while (s->p < s->end && *s->p != q) {
        uint8_t c = *s->p;
        if (c == '\\' || c == '\n' || c < 0x20 || c >= 0x7f)
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: unsupported character in %s", what);
        if (n + 1 >= cap)
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: %s too long", what);
        out[n++] = (char)c;
        s->p++;
    }
    if (s->p >= s->end)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: unterminated %s", what);
    s->p++;
    out[n] = '\0';
    return 0;
}

/* Maps a descriptor string to a dtype and its byte order, or refuses it
 * with a reason. */
static int parse_descr(struct scan *s, dt_type *out, int *big_endian)
{
    char d[32];
    skip_ws(s);
    if (s->p < s->end && *s->p == '[')
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: structured dtypes are not supported");
    int rc = parse_string(s, d, sizeof(d), "descr");
    if (rc < 0)
        return rc;
    const char *body = d;
    int big = 0;
    if (d[0] == '<' || d[0] == '|' || d[0] == '=') {
        body = d + 1;
    } else if (d[0] == '>' || d[0] == '!') {
        body = d + 1;
        big = 1;
    }
    dt_type t = DT_NONE;
    for (int i = DT_NONE + 1; i < DT_COUNT; i++) {
        const char *code = dt_npy_descr((dt_type)i) + 1; /* without byte order */
        if (!strcmp(body, code) || (body == d && !strcmp(body, dt_name((dt_type)i)))) {
            t = (dt_type)i;
            break;
        }
    }
    if (t == DT_NONE && !strcmp(body, "O"))
        return io_fail(s->st, IO_ERR_FORMAT,
                       "npy header: object (pickled) arrays are not supported ('%s')", d);
    if (t == DT_NONE)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: unsupported dtype '%s'", d);
    /* Byte order means nothing for one-byte types. */
    *big_endian = big && dt_swap_unit(t) > 0;
    *out = t;
    return 0;
}

/* Parses True or False. */
static int parse_bool(struct scan *s, int *out)
{
    skip_ws(s);
    size_t left = (size_t)(s->end - s->p);
    int v = -1;
    size_t n = 0;
    if (left >= 4 && !memcmp(s->p, "True", 4)) {
        v = 1;
        n = 4;
    } else if (left >= 5 && !memcmp(s->p, "False", 5)) {
        v = 0;
        n = 5;
    }
    if (v < 0 || (n < left && ((s->p[n] >= 'A' && s->p[n] <= 'Z') ||
                               (s->p[n] >= 'a' && s->p[n] <= 'z') ||
                               (s->p[n] >= '0' && s->p[n] <= '9') || s->p[n] == '_')))
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: fortran_order must be True or False");
    s->p += n;
    *out = v;
    return 0;
}

/* Parses one non-negative decimal dimension. */
static int parse_dim(struct scan *s, uint64_t *out)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == '-')
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: negative dimension in shape");
    if (s->p >= s->end || *s->p < '0' || *s->p > '9')
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: shape must be a tuple of integers");
    uint64_t v = 0;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, *s->p - '0', &v))
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: dimension too large");
        s->p++;
    }
    if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E' || *s->p == 'x' ||
                          *s->p == 'X' || *s->p == '_' || *s->p == 'j' || *s->p == 'L'))
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: shape must be a tuple of integers");
    *out = v;
    return 0;
}

/* Parses a shape tuple: "()", "(5,)", "(3, 4)", "(3, 4,)". */
static int parse_shape(struct scan *s, npy_header *h)
{
    if (!accept(s, '('))
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: shape must be a tuple");
    h->ndim = 0;
    if (accept(s, ')'))
        return 0;
    for (;;) {
        if (h->ndim >= NPY_MAX_DIMS)
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: more than %d dimensions",
                           NPY_MAX_DIMS);
        int rc = parse_dim(s, &h->shape[h->ndim]);
        if (rc < 0)
            return rc;
        h->ndim++;
        if (accept(s, ',')) {
            if (accept(s, ')'))
                return 0;
            continue;
        }
        if (accept(s, ')')) {
            if (h->ndim == 1) /* "(5)" is an int in Python, not a tuple */
                return io_fail(s->st, IO_ERR_FORMAT, "npy header: shape must be a tuple");
            return 0;
        }
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: malformed shape tuple");
    }
}

/* Parses the dict literal in s into h. */
static int parse_dict(struct scan *s, npy_header *h)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (!accept(s, '{'))
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: not a dict");
    for (;;) {
        if (accept(s, '}'))
            break;
        char key[32];
        int rc = parse_string(s, key, sizeof(key), "key");
        if (rc < 0)
            return rc;
        if (!accept(s, ':'))
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: expected ':' after '%s'", key);
        int *seen;
        if (!strcmp(key, "descr"))
            seen = &have_descr;
        else if (!strcmp(key, "fortran_order"))
            seen = &have_fortran;
        else if (!strcmp(key, "shape"))
            seen = &have_shape;
        else
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: unexpected key '%s'", key);
        if (*seen)
            return io_fail(s->st, IO_ERR_FORMAT, "npy header: duplicate key '%s'", key);
        if (seen == &have_descr)
            rc = parse_descr(s, &h->dtype, &h->big_endian);
        else if (seen == &have_fortran)
            rc = parse_bool(s, &h->fortran_order);
        else
            rc = parse_shape(s, h);
        if (rc < 0)
            return rc;
        *seen = 1;
        if (accept(s, ','))
            continue;
        if (accept(s, '}'))
            break;
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: malformed dict");
    }
    skip_ws(s);
    if (s->p != s->end)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: unexpected bytes after the dict");
    if (!have_descr)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: missing key 'descr'");
    if (!have_fortran)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: missing key 'fortran_order'");
    if (!have_shape)
        return io_fail(s->st, IO_ERR_FORMAT, "npy header: missing key 'shape'");
    return 0;
}

/* Parses the magic, version, length and dict at the start of buf. */
int npy_parse(const uint8_t *buf, size_t len, npy_header *h, io_status *st)
{
    memset(h, 0, sizeof(*h));
    io_clear(st);
    size_t m = len < sizeof(npy_magic) ? len : sizeof(npy_magic);
    if (memcmp(buf, npy_magic, m))
        return io_fail(st, IO_ERR_FORMAT, "not a .npy file (bad magic)");
    if (len < 8) {
        h->header_len = 10;
        return NPY_NEED_MORE;
    }
    uint8_t major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return io_fail(st, IO_ERR_FORMAT, "unsupported .npy version %u.%u", major, minor);
    size_t prefix = major == 1 ? 10 : 12;
    if (len < prefix) {
        h->header_len = prefix;
        return NPY_NEED_MORE;
    }
    uint64_t dict_len = major == 1 ? (uint64_t)buf[8] | (uint64_t)buf[9] << 8
                                   : (uint64_t)buf[8] | (uint64_t)buf[9] << 8 |
                                         (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    if (dict_len + prefix > NPY_MAX_HEADER)
        return io_fail(st, IO_ERR_FORMAT, "npy header of %llu bytes is over the %u-byte limit",
                       (unsigned long long)(dict_len + prefix), NPY_MAX_HEADER);
    size_t total = prefix + (size_t)dict_len;
    if (len < total) {
        h->header_len = total;
        return NPY_NEED_MORE;
    }
    if (dict_len == 0 || buf[total - 1] != '\n')
        return io_fail(st, IO_ERR_FORMAT, "npy header does not end with a newline");
    struct scan s = {buf + prefix, buf + total, st};
    int rc = parse_dict(&s, h);
    if (rc < 0) {
        memset(h, 0, sizeof(*h));
        return rc;
    }
    /* A zero dimension makes the array empty whatever the others are. */
    uint64_t n = 1;
    int empty = 0;
    for (int i = 0; i < h->ndim; i++)
        empty |= h->shape[i] == 0;
    if (empty) {
        n = 0;
    } else {
        for (int i = 0; i < h->ndim; i++)
            if (__builtin_mul_overflow(n, h->shape[i], &n)) {
                memset(h, 0, sizeof(*h));
                return io_fail(st, IO_ERR_FORMAT, "npy header: element count overflows 64 bits");
            }
    }
    uint64_t bytes;
    /* Beyond INT64_MAX no file can hold the data (and UINT64_MAX would read
     * as "size unknown" downstream). */
    if (__builtin_mul_overflow(n, (uint64_t)dt_size(h->dtype), &bytes) || bytes > INT64_MAX) {
        memset(h, 0, sizeof(*h));
        return io_fail(st, IO_ERR_FORMAT, "npy header: data size overflows a 64-bit file offset");
    }
    h->nelem = n;
    h->data_bytes = bytes;
    h->header_len = total;
    return 0;
}

/* Appends text to buf at *pos if it fits; tracks the length either way. */
static void put(char *buf, size_t cap, size_t *pos, const char *text)
{
    size_t n = strlen(text);
    if (*pos + n <= cap)
        memcpy(buf + *pos, text, n);
    *pos += n;
}

/* Writes the header numpy would write for these fields. */
int npy_write_header(uint8_t *buf, size_t cap, dt_type dtype, int ndim, const uint64_t *shape,
                     int fortran_order)
{
    if (dt_size(dtype) == 0 || ndim < 0 || ndim > NPY_MAX_DIMS || (ndim > 0 && !shape))
        return IO_ERR_FORMAT;
    /* The dict text, formatted as numpy does (sorted keys, repr values). */
    char dict[64 + NPY_MAX_DIMS * 22];
    size_t cap_dict = sizeof(dict);
    size_t n = 0;
    char num[24];
    put(dict, cap_dict, &n, "{'descr': '");
    put(dict, cap_dict, &n, dt_npy_descr(dtype));
    put(dict, cap_dict, &n, "', 'fortran_order': ");
    put(dict, cap_dict, &n, fortran_order ? "True" : "False");
    put(dict, cap_dict, &n, ", 'shape': (");
    for (int i = 0; i < ndim; i++) {
        snprintf(num, sizeof(num), "%llu", (unsigned long long)shape[i]);
        if (i)
            put(dict, cap_dict, &n, ", ");
        put(dict, cap_dict, &n, num);
    }
    put(dict, cap_dict, &n, ndim == 1 ? ",), }" : "), }");
    if (n > cap_dict)
        return IO_ERR_FORMAT;
    /* numpy pads with 1..64 spaces then '\n' to a multiple of 64; the
     * length field grows to 4 bytes (v2.0) when it does not fit in 16 bits. */
    size_t hlen = n + 1;
    size_t prefix = 10;
    size_t pad = 64 - (prefix + hlen) % 64;
    if (hlen + pad > 0xffff) {
        prefix = 12;
        pad = 64 - (prefix + hlen) % 64;
    }
    size_t total = prefix + hlen + pad;
    if (total > cap || total > (size_t)0x7fffffff)
        return IO_ERR_NOMEM;
    memcpy(buf, npy_magic, sizeof(npy_magic));
    size_t field = hlen + pad;
    buf[6] = prefix == 10 ? 1 : 2;
    buf[7] = 0;
    buf[8] = (uint8_t)field;
    buf[9] = (uint8_t)(field >> 8);
    if (prefix == 12) {
        buf[10] = (uint8_t)(field >> 16);
        buf[11] = (uint8_t)(field >> 24);
    }
    memcpy(buf + prefix, dict, n);
    memset(buf + prefix + n, ' ', pad);
    buf[total - 1] = '\n';
    return (int)total;
}
