/* test_npy.c - .npy header parsing and writing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/reader.h"
#include "check.h"

/* Builds a header of the given version around dict (padded and ended with
 * '\n' unless raw is set); returns its length. */
static size_t build(uint8_t *buf, int major, const char *dict, int raw)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t n = strlen(dict);
    size_t body = n;
    if (!raw) {
        body = n + 1;
        while ((prefix + body) % 64)
            body++;
    }
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)major;
    buf[7] = 0;
    buf[8] = (uint8_t)body;
    buf[9] = (uint8_t)(body >> 8);
    if (prefix == 12) {
        buf[10] = (uint8_t)(body >> 16);
        buf[11] = (uint8_t)(body >> 24);
    }
    memcpy(buf + prefix, dict, n);
    if (!raw) {
        memset(buf + prefix + n, ' ', body - n - 1);
        buf[prefix + body - 1] = '\n';
    }
    return prefix + body;
}

/* Parses a v1 header around dict and returns the result code. */
static int parse_dict(const char *dict, npy_header *h, io_status *st)
{
    uint8_t buf[4096];
    size_t n = build(buf, 1, dict, 0);
    return npy_parse(buf, n, h, st);
}

/* Every dtype and a set of shapes survive write then parse. */
static void test_round_trip(void)
{
    static const uint64_t shapes[][3] = {{0}, {0}, {1}, {7}, {3, 4}, {2, 3, 5}};
    static const int ndims[] = {0, 1, 1, 1, 2, 3};
    for (int t = DT_NONE + 1; t < DT_COUNT; t++) {
        for (size_t s = 0; s < sizeof(ndims) / sizeof(ndims[0]); s++) {
            for (int fo = 0; fo < 2; fo++) {
                uint8_t buf[1024];
                int n = npy_write_header(buf, sizeof(buf), (dt_type)t, ndims[s], shapes[s], fo);
                CHECKF(n > 0 && n % 64 == 0, "dtype %s shape %zu: length %d", dt_name(t), s, n);
                if (n <= 0)
                    continue;
                CHECK(buf[n - 1] == '\n');
                CHECK(npy_is_magic(buf, (size_t)n));
                npy_header h;
                io_status err;
                int rc = npy_parse(buf, (size_t)n, &h, &err);
                CHECKF(rc == 0, "%s: %s", dt_name(t), err.text);
                CHECK(h.dtype == (dt_type)t);
                CHECK(h.fortran_order == fo);
                CHECK(h.ndim == ndims[s]);
                uint64_t prod = 1;
                for (int i = 0; i < ndims[s]; i++) {
                    CHECK(h.shape[i] == shapes[s][i]);
                    prod *= shapes[s][i];
                }
                CHECK(h.nelem == prod);
                CHECK(h.data_bytes == prod * dt_size((dt_type)t));
                CHECK(h.header_len == (size_t)n);
            }
        }
    }
}

/* The writer's bytes are numpy's for these fields. */
static void test_exact_text(void)
{
    uint8_t buf[256];
    uint64_t s34[] = {3, 4}, s5[] = {5};
    int n = npy_write_header(buf, sizeof(buf), DT_F32, 2, s34, 0);
    const char *d = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    CHECK(n == 128);
    CHECK(!memcmp(buf, "\x93NUMPY\x01\x00", 8));
    CHECK(buf[8] == 118 && buf[9] == 0);
    CHECK(!memcmp(buf + 10, d, strlen(d)));
    for (int i = 10 + (int)strlen(d); i < n - 1; i++)
        CHECK(buf[i] == ' ');
    n = npy_write_header(buf, sizeof(buf), DT_U8, 1, s5, 1);
    d = "{'descr': '|u1', 'fortran_order': True, 'shape': (5,), }";
    CHECK(n == 128 && !memcmp(buf + 10, d, strlen(d)));
    n = npy_write_header(buf, sizeof(buf), DT_C128, 0, NULL, 0);
    d = "{'descr': '<c16', 'fortran_order': False, 'shape': (), }";
    CHECK(n == 128 && !memcmp(buf + 10, d, strlen(d)));
    /* Too small a buffer and bad arguments are refused. */
    CHECK(npy_write_header(buf, 63, DT_F32, 2, s34, 0) < 0);
    CHECK(npy_write_header(buf, sizeof(buf), DT_NONE, 2, s34, 0) < 0);
    CHECK(npy_write_header(buf, sizeof(buf), DT_F32, NPY_MAX_DIMS + 1, s34, 0) < 0);
    /* numpy pads with 64 spaces, not 0, when the dict and '\n' alone land
     * on a multiple of 64 (117 + 1 + 10 = 128 here). */
    uint64_t s3[] = {100000000000000000ull, 10000000000000000000ull, 10000000000000000000ull};
    n = npy_write_header(buf, sizeof(buf), DT_F64, 3, s3, 0);
    CHECK(n == 192);
    for (int i = 127; i < 191; i++)
        CHECK(buf[i] == ' ');
    CHECK(buf[126] == '}' && buf[191] == '\n');
    /* The largest header: 32 dimensions of 20 digits. */
    uint64_t big[NPY_MAX_DIMS];
    for (int i = 0; i < NPY_MAX_DIMS; i++)
        big[i] = i ? 1 : UINT64_MAX;
    uint8_t large[2048];
    n = npy_write_header(large, sizeof(large), DT_I64, NPY_MAX_DIMS, big, 0);
    CHECK(n > 0 && n % 64 == 0);
    npy_header h;
    CHECK(npy_parse(large, (size_t)n, &h, NULL) == IO_ERR_FORMAT); /* bytes overflow */
    big[0] = 1;
    n = npy_write_header(large, sizeof(large), DT_I64, NPY_MAX_DIMS, big, 0);
    CHECK(npy_parse(large, (size_t)n, &h, NULL) == 0 && h.ndim == NPY_MAX_DIMS);
}

/* Spellings numpy and hand-written files use. */
static void test_accepted(void)
{
    npy_header h;
    io_status err;
    CHECK(parse_dict("{'shape': (3,4,), 'fortran_order': True, 'descr': '<i2'}", &h, &err) == 0);
    CHECK(h.dtype == DT_I16 && h.fortran_order == 1 && h.ndim == 2 && h.nelem == 12);
    CHECK(parse_dict("{\"descr\":\"|i1\",\"fortran_order\":False,\"shape\":( 5 , ),}", &h, &err) ==
          0);
    CHECK(h.dtype == DT_I8 && h.ndim == 1 && h.shape[0] == 5);
    CHECK(parse_dict("  {  'descr' : '=f8' ,\t'fortran_order' :False , 'shape' : ( ) }", &h,
                     &err) == 0);
    CHECK(h.dtype == DT_F64 && h.ndim == 0 && h.nelem == 1 && h.data_bytes == 8);
    CHECK(parse_dict("{'descr': 'u4', 'fortran_order': False, 'shape': (0, 7)}", &h, &err) == 0);
    CHECK(h.dtype == DT_U32 && h.nelem == 0 && h.data_bytes == 0);
    CHECK(parse_dict("{'descr': '<i1', 'fortran_order': False, 'shape': (2,)}", &h, &err) == 0 &&
          h.dtype == DT_I8);
    CHECK(parse_dict("{'descr': '>u1', 'fortran_order': False, 'shape': (2,)}", &h, &err) == 0 &&
          h.dtype == DT_U8);
    CHECK(parse_dict("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", &h, &err) == 0 &&
          h.dtype == DT_C64 && h.data_bytes == 16);
    /* float16, bfloat16 (ml_dtypes' '<V2', a plain 2-byte void, its name)
     * and bool, and big-endian data of every kind */
    static const struct {
        const char *descr;
        dt_type t;
        int big;
    } types[] = {
        {"<f2", DT_F16, 0},  {"=f2", DT_F16, 0},   {">f2", DT_F16, 1},      {"<V2", DT_BF16, 0},
        {"|V2", DT_BF16, 0}, {">V2", DT_BF16, 1},  {"bfloat16", DT_BF16, 0}, {"|b1", DT_BOOL, 0},
        {"<b1", DT_BOOL, 0}, {">b1", DT_BOOL, 0},  {">f4", DT_F32, 1},      {"!i8", DT_I64, 1},
        {">u1", DT_U8, 0},   {">c16", DT_C128, 1}, {"<f4", DT_F32, 0},      {"float16", DT_F16, 0},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,)}",
                 types[i].descr);
        int rc = parse_dict(dict, &h, &err);
        CHECKF(rc == 0 && h.dtype == types[i].t && h.big_endian == types[i].big &&
                   h.data_bytes == 3 * dt_size(types[i].t),
               "%s: rc %d %s big %d: %s", types[i].descr, rc, dt_name(h.dtype), h.big_endian,
               err.text);
    }
    /* A zero dimension makes the array empty even after huge ones. */
    CHECK(parse_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615, "
                     "18446744073709551615, 0)}",
                     &h, &err) == 0 &&
          h.nelem == 0);
    /* The largest data size accepted is INT64_MAX bytes (a file offset). */
    CHECK(parse_dict("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807,)}",
                     &h, &err) == 0 &&
          h.data_bytes == INT64_MAX);
}

/* Each malformed header is refused with a reason containing want. */
static void expect_reject(const char *dict, const char *want)
{
    npy_header h;
    io_status err;
    int rc = parse_dict(dict, &h, &err);
    CHECKF(rc == IO_ERR_FORMAT, "accepted %s", dict);
    CHECKF(strstr(err.text, want) != NULL, "%s: message '%s' lacks '%s'", dict, err.text, want);
}

/* Hostile and unsupported headers. */
static void test_rejected(void)
{
    expect_reject("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
                  "structured");
    expect_reject("{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}", "unsupported dtype");
    expect_reject("{'descr': '<V4', 'fortran_order': False, 'shape': (3,)}", "unsupported dtype");
    expect_reject("{'descr': '<g2', 'fortran_order': False, 'shape': (3,)}", "unsupported dtype");
    expect_reject("{'descr': '>bfloat16', 'fortran_order': False, 'shape': (3,)}",
                  "unsupported dtype");
    expect_reject("{'descr': [('', '<V2')], 'fortran_order': False, 'shape': (3,)}",
                  "structured");
    expect_reject("{'descr': '|O', 'fortran_order': False, 'shape': (3,)}", "object (pickled) arrays are not supported ('|O')");
    expect_reject("{'descr': '<U5', 'fortran_order': False, 'shape': (3,)}", "unsupported dtype");
    expect_reject("{'descr': '<f4', 'shape': (3,)}", "missing key 'fortran_order'");
    expect_reject("{'fortran_order': False, 'shape': (3,)}", "missing key 'descr'");
    expect_reject("{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'");
    expect_reject("{}", "missing key");
    expect_reject("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
                  "duplicate key 'descr'");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}",
                  "duplicate key 'shape'");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
                  "unexpected key");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", "negative");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}", "integers");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}", "integers");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", "tuple");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", "tuple");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,,)}", "integers");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}", "malformed");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", "integers");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
                  "too large");
    expect_reject("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", "True or False");
    expect_reject("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,)}", "True or False");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", "after the dict");
    expect_reject("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", "malformed dict");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", "malformed dict");
    expect_reject("{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}", "expected ':'");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), ,}", "quoted");
    expect_reject("['descr', '<f4']", "not a dict");
    /* Overflow of the element count and of the byte size. */
    expect_reject("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
                  "element count overflows");
    expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}",
                  "data size overflows");
    /* 2^63 one-byte elements: no file holds that much (UINT64_MAX would
     * also read as an unknown size downstream). */
    expect_reject("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775808,)}",
                  "data size overflows");
    expect_reject("{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551615,)}",
                  "data size overflows");
    /* A dim beyond 64 bits, and a negative dim. */
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
                  "");
    expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "");
    /* More than NPY_MAX_DIMS dimensions. */
    char dict[512] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    for (int i = 0; i <= NPY_MAX_DIMS; i++)
        strcat(dict, "1, ");
    strcat(dict, ")}");
    expect_reject(dict, "more than 32 dimensions");

    /* Framing: magic, version, newline, size limit. */
    uint8_t buf[256];
    npy_header h;
    io_status err;
    size_t n = build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    buf[n - 1] = ' ';
    CHECK(npy_parse(buf, n, &h, &err) == IO_ERR_FORMAT && strstr(err.text, "newline"));
    n = build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    buf[0] = 0x92;
    CHECK(npy_parse(buf, n, &h, &err) == IO_ERR_FORMAT && strstr(err.text, "magic"));
    CHECK(!npy_is_magic(buf, n));
    buf[0] = 0x93;
    CHECK(npy_is_magic(buf, n) && !npy_is_magic(buf, 5));
    static const uint8_t versions[][2] = {{0, 0}, {4, 0}, {1, 1}, {2, 1}, {255, 0}};
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        buf[6] = versions[i][0];
        buf[7] = versions[i][1];
        CHECK(npy_parse(buf, n, &h, &err) == IO_ERR_FORMAT && strstr(err.text, "version"));
    }
    /* A v2 length just over the limit is refused without more bytes. */
    n = build(buf, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    uint32_t over = NPY_MAX_HEADER - 12 + 1;
    buf[8] = (uint8_t)over;
    buf[9] = (uint8_t)(over >> 8);
    buf[10] = (uint8_t)(over >> 16);
    buf[11] = (uint8_t)(over >> 24);
    CHECK(npy_parse(buf, n, &h, &err) == IO_ERR_FORMAT && strstr(err.text, "limit"));
    buf[11] = 0xff;
    CHECK(npy_parse(buf, n, &h, &err) == IO_ERR_FORMAT);
    /* A zero-length dict. */
    memcpy(buf, "\x93NUMPY\x01\x00\x00\x00", 10);
    CHECK(npy_parse(buf, 10, &h, &err) == IO_ERR_FORMAT);
    /* NUL bytes and non-ASCII inside. */
    n = build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    buf[20] = 0;
    CHECK(npy_parse(buf, n, &h, NULL) == IO_ERR_FORMAT);
    n = build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    buf[n - 2] = 0xff;
    CHECK(npy_parse(buf, n, &h, NULL) == IO_ERR_FORMAT);
}

/* Version 2.0 and 3.0 headers with 32-bit lengths. */
static void test_versions(void)
{
    uint8_t buf[1 << 17];
    npy_header h;
    io_status err;
    for (int major = 1; major <= 3; major++) {
        size_t n = build(buf, major, "{'descr': '<u2', 'fortran_order': False, 'shape': (9, 2)}", 0);
        CHECK(n % 64 == 0);
        CHECK(npy_parse(buf, n, &h, &err) == 0);
        CHECK(h.dtype == DT_U16 && h.nelem == 18 && h.header_len == n);
    }
    /* A v2 header longer than 65535 bytes (whitespace inside the dict). */
    static char dict[70000 + 128];
    strcpy(dict, "{'descr': '<u2', 'fortran_order': False,");
    size_t k = strlen(dict);
    memset(dict + k, ' ', 70000);
    strcpy(dict + k + 70000, "'shape': (9, 2)}");
    size_t n = build(buf, 2, dict, 0);
    CHECK(n > 70000 && n % 64 == 0);
    CHECK(npy_parse(buf, n, &h, &err) == 0 && h.nelem == 18 && h.header_len == n);
    /* The same in v1 cannot be expressed; the length field wraps. */
}

/* Short buffers ask for more with the right total, byte by byte. */
static void test_need_more(void)
{
    uint8_t buf[256];
    uint64_t shape[] = {3, 4};
    int n = npy_write_header(buf, sizeof(buf), DT_F32, 2, shape, 0);
    npy_header h;
    io_status err;
    for (int len = 0; len < n; len++) {
        int rc = npy_parse(buf, (size_t)len, &h, &err);
        CHECKF(rc == NPY_NEED_MORE, "len %d rc %d", len, rc);
        CHECK(h.header_len > (size_t)len && h.header_len <= (size_t)n);
        if (len >= 10)
            CHECK(h.header_len == (size_t)n);
    }
    CHECK(npy_parse(buf, (size_t)n + 100, &h, &err) == 0 && h.header_len == (size_t)n);
    /* Bad magic is reported as soon as the first byte differs. */
    CHECK(npy_parse((const uint8_t *)"X", 1, &h, &err) == IO_ERR_FORMAT);
    CHECK(npy_parse((const uint8_t *)"\x93NUMPZ", 6, &h, &err) == IO_ERR_FORMAT);
    /* v2: the prefix is 12 bytes. */
    size_t m = build(buf, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0);
    CHECK(npy_parse(buf, 9, &h, &err) == NPY_NEED_MORE && h.header_len == 12);
    CHECK(npy_parse(buf, 12, &h, &err) == NPY_NEED_MORE && h.header_len == m);
}

/* numpy itself reads our headers and we read numpy's files. */
static void test_numpy_interop(void)
{
    const char *py = "/usr/bin/python3";
    if (access(py, X_OK) != 0 || system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) {
        fprintf(stderr, "note: numpy not available, interop checks skipped\n");
        return;
    }
    char dir[] = "/tmp/gb_npy_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char path[256], cmd[1024];
    /* Ours -> numpy: a float32 (3, 4) array of 0..11 and a 0-D int64. */
    snprintf(path, sizeof(path), "%s/a.npy", dir);
    FILE *f = fopen(path, "wb");
    uint8_t hdr[256];
    uint64_t shape[] = {3, 4};
    int n = npy_write_header(hdr, sizeof(hdr), DT_F32, 2, shape, 0);
    fwrite(hdr, 1, (size_t)n, f);
    for (int i = 0; i < 12; i++) {
        float v = (float)i;
        fwrite(&v, 4, 1, f);
    }
    fclose(f);
    snprintf(path, sizeof(path), "%s/b.npy", dir);
    f = fopen(path, "wb");
    n = npy_write_header(hdr, sizeof(hdr), DT_I64, 0, NULL, 0);
    fwrite(hdr, 1, (size_t)n, f);
    int64_t v = -42;
    fwrite(&v, 8, 1, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd),
             "%s -c \"import numpy as np; a=np.load('%s/a.npy'); b=np.load('%s/b.npy'); "
             "assert a.dtype==np.float32 and a.shape==(3,4) and a[2,3]==11; "
             "assert b.dtype==np.int64 and b.shape==() and b==-42\"",
             py, dir, dir);
    CHECKF(system(cmd) == 0, "numpy could not load our files");
    /* numpy -> ours, including its spare-space padding and fortran order. */
    snprintf(cmd, sizeof(cmd),
             "%s -c \"import numpy as np; np.save('%s/c.npy', np.zeros((5,6,7), np.uint16)); "
             "np.save('%s/d.npy', np.asfortranarray(np.ones((2,3), np.complex64)))\"",
             py, dir, dir);
    CHECK(system(cmd) == 0);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof(path), "%s/%c.npy", dir, k ? 'd' : 'c');
        uint8_t buf[512];
        f = fopen(path, "rb");
        size_t got = f ? fread(buf, 1, sizeof(buf), f) : 0;
        if (f)
            fclose(f);
        npy_header h;
        io_status err;
        CHECKF(npy_parse(buf, got, &h, &err) == 0, "%s", err.text);
        if (k == 0)
            CHECK(h.dtype == DT_U16 && h.ndim == 3 && h.nelem == 210 && !h.fortran_order);
        else
            CHECK(h.dtype == DT_C64 && h.ndim == 2 && h.nelem == 6 && h.fortran_order);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_exact_text);
    RUN(test_accepted);
    RUN(test_rejected);
    RUN(test_versions);
    RUN(test_need_more);
    RUN(test_numpy_interop);
    return check_summary();
}
