/* fuzz_options.c - fuzz harness for the command-line value parsers: sizes
 * (--chunk), integers (-p, --streams), device lists (--device), shapes (--shape), dtype
 * names, operation lists (--op) and backend names, alone and through
 * cli_common_option.
 *
 * The input is one option value (a NUL ends it early). Every parser must
 * accept or refuse without crashing; an accepted value must print back to
 * text that parses to the same value, and the options a command keeps must
 * be usable as they are (a nonzero, aligned --chunk; a shape within
 * NPY_MAX_DIMS). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "runtime/reduce.h"

#define VALUE_MAX 4096

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Points stderr at /dev/null (the usage errors the parsers print) and
 * returns the saved descriptor, or back at saved when saved >= 0. */
static int swap_stderr(int saved)
{
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
        return -1;
    }
    int keep = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    return keep;
}

/* Sizes: an accepted size prints back as a plain number of the same value. */
static void check_size(const char *s)
{
    size_t v;
    if (cli_parse_size(s, &v) < 0)
        return;
    char text[32];
    snprintf(text, sizeof text, "%zu", v);
    size_t back;
    require(cli_parse_size(text, &back) == 0 && back == v);
    if (v % 1024 == 0) {
        snprintf(text, sizeof text, "%zuK", v / 1024);
        require(cli_parse_size(text, &back) == 0 && back == v);
    }
}

/* Integers: accepted values are in [0, 2^30] and print back the same. */
static void check_int(const char *s)
{
    int v;
    if (cli_parse_int(s, &v) < 0)
        return;
    require(v >= 0 && v <= 1 << 30);
    char text[16];
    snprintf(text, sizeof text, "%d", v);
    int back;
    require(cli_parse_int(text, &back) == 0 && back == v);
}

/* Shapes: 1..NPY_MAX_DIMS dims that print back as "AxBxC" to the same dims. */
static void check_shape(const char *s)
{
    uint64_t dims[NPY_MAX_DIMS], back[NPY_MAX_DIMS];
    int n = cli_parse_shape(s, dims, NPY_MAX_DIMS);
    if (n < 0)
        return;
    require(n >= 1 && n <= NPY_MAX_DIMS);
    char text[NPY_MAX_DIMS * 21 + 1];
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%" PRIu64, i ? "x" : "",
                                dims[i]);
    require(cli_parse_shape(text, back, NPY_MAX_DIMS) == n);
    require(!memcmp(dims, back, (size_t)n * sizeof dims[0]));
}

/* Names: a recognised dtype's canonical name maps back to it. */
static void check_names(const char *s)
{
    dt_type t = dt_from_name(s);
    if (t != DT_NONE) {
        require(t > DT_NONE && t < DT_COUNT && dt_size(t) > 0);
        require(dt_from_name(dt_name(t)) == t && dt_from_name(dt_npy_descr(t)) == t);
    }
    int b = backend_parse(s);
    require(b == -1 || b == BACKEND_AUTO || b == BACKEND_CUDA || b == BACKEND_CPU);
}

/* Operation lists: a nonzero set of known ops whose names parse back to it. */
static void check_ops(const char *s)
{
    io_status err;
    err.text[0] = '\0';
    unsigned ops = rd_parse_ops(s, &err);
    if (!ops) {
        require(err.code == IO_ERR_FORMAT && err.text[0] != '\0' &&
                memchr(err.text, '\0', sizeof err.text));
        return;
    }
    require(ops < 1u << RD_OP_NUM);
    char text[256];
    size_t len = 0;
    for (int bit = 0; bit < RD_OP_NUM; bit++)
        if (ops & (1u << bit))
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", len ? "," : "",
                                    rd_op_name(bit));
    require(rd_parse_ops(text, &err) == ops);
}

/* The common options as a command sees them: a refused value leaves a usage
 * error, an accepted one leaves usable settings. */
static void check_common(const char *s)
{
    static const int opts[] = {OPT_BACKEND, OPT_DEVICE, 'p',       OPT_CHUNK,
                               OPT_STREAMS, OPT_DTYPE,  OPT_SHAPE};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        cli_common c;
        cli_common_init(&c);
        int rc = cli_common_option(&c, opts[i], s);
        require(rc == 1 || rc == -1);
        if (rc < 0)
            continue;
        require(c.chunk > 0 && c.chunk % CLI_CHUNK_ALIGN == 0);
        require(c.streams >= 2 && c.streams <= 64);
        require(c.threads >= 0);
        require(c.devices.all || (c.devices.count >= 1 && c.devices.count <= BACKEND_MAX_GPUS));
        for (int d = 0; !c.devices.all && d < c.devices.count; d++) {
            require(c.devices.list[d] >= 0);
            for (int e = 0; e < d; e++)
                require(c.devices.list[e] != c.devices.list[d]);
        }
        require(c.ndim == -1 || (c.ndim >= 1 && c.ndim <= NPY_MAX_DIMS));
        if (opts[i] == 'p')
            require(c.threads >= 1);
        if (opts[i] == OPT_DTYPE)
            require(c.dtype != DT_NONE);
    }
}

/* Runs every parser over the value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char value[VALUE_MAX + 1];
    size_t n = size < VALUE_MAX ? size : VALUE_MAX;
    memcpy(value, data, n);
    value[n] = '\0';
    check_size(value);
    check_int(value);
    check_shape(value);
    check_names(value);
    check_ops(value);
    int saved = swap_stderr(-1);
    check_common(value);
    swap_stderr(saved);
    return 0;
}
