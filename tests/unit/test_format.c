/* test_format.c - cli/format.c: shortest round-trip text of doubles and
 * floats, JSON integers, and escaped lines that threads write at once.
 *
 * With no arguments: fixed cases and round trips of random values. With
 * "dump N SEED": prints N lines "d BITS TEXT" and N lines "f BITS TEXT" (BITS
 * in hex) of random values, for tests/cli/test_format.sh to compare with
 * Python's repr() and numpy's shortest float32 digits. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/format.h"

/* xorshift64*: the test's reproducible random bits. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* A random double: any bits, a short decimal, an integer, or a power of two
 * (where the values that read back lie unevenly around the number). */
static double random_double(uint64_t *s)
{
    uint64_t r = rng_next(s);
    double v;
    switch (r % 5) {
    case 0:
        memcpy(&v, &r, sizeof v);
        r = rng_next(s);
        memcpy(&v, &r, sizeof v);
        return v;
    case 1: {
        char text[40];
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)(rng_next(s) % 100000),
                 (int)(rng_next(s) % 60) - 30);
        return strtod(text, NULL);
    }
    case 2:
        return (double)(int64_t)(rng_next(s) >> (rng_next(s) % 64));
    case 3:
        return ldexp(1.0, (int)(rng_next(s) % 2098) - 1074);
    default:
        return nextafter(ldexp(1.0, (int)(rng_next(s) % 2000) - 1000), r & 1 ? 0.0 : INFINITY);
    }
}

/* A random float, as random_double draws them. */
static float random_float(uint64_t *s)
{
    uint64_t r = rng_next(s);
    float v;
    uint32_t b = (uint32_t)(r >> 32);
    switch (r % 4) {
    case 0:
        memcpy(&v, &b, sizeof v);
        return v;
    case 1:
        return (float)random_double(s);
    case 2:
        return ldexpf(1.0f, (int)(rng_next(s) % 277) - 149);
    default:
        return nextafterf(ldexpf(1.0f, (int)(rng_next(s) % 250) - 125), r & 8 ? 0.0f : INFINITY);
    }
}

/* Significant digits of a finite nonzero text (mantissa digits without
 * leading zeros). */
static int significant_digits(const char *t)
{
    int n = 0, started = 0, trailing = 0;
    for (; *t && *t != 'e'; t++) {
        if (*t < '0' || *t > '9')
            continue;
        started |= *t != '0';
        if (started) {
            n++;
            trailing = *t == '0' ? trailing + 1 : 0;
        }
    }
    return n - trailing;
}

/* Fixed cases: plain notation from 1e-4 to below 1e16, scientific beyond. */
static void test_fixed(void)
{
    static const struct {
        double v;
        const char *text;
    } d[] = {
        {30, "30"}, {1770, "1770"}, {0.1, "0.1"}, {-0.0, "-0"}, {0, "0"}, {1e16, "1e+16"},
        {9999999999999998, "9999999999999998"}, {123456789012345680, "1.2345678901234568e+17"},
        {0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e-7, "1.5e-07"}, {1e100, "1e+100"},
        {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"}, {-2.5, "-2.5"},
        {1328.594593050797, "1328.594593050797"}, {0.3, "0.3"}, {1.0 / 3, "0.3333333333333333"},
        {9007199254740993.0, "9007199254740992"}, {100, "100"}, {123.456, "123.456"},
        {INFINITY, "inf"}, {-INFINITY, "-inf"}, {NAN, "nan"}, {-NAN, "nan"},
        {5e-5, "5e-05"}, {0.00012, "0.00012"}, {1e15, "1000000000000000"},
        {0x1p-44, "5.684341886080802e-14"}, /* the rounded 16 digits do not read back */
    };
    char buf[64];
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        fmt_double(buf, sizeof buf, d[i].v);
        CHECKF(!strcmp(buf, d[i].text), "%.17g: [%s], expected [%s]", d[i].v, buf, d[i].text);
    }
    static const struct {
        float v;
        const char *text;
    } f[] = {
        {0.1f, "0.1"}, {30.0f, "30"}, {16777216.0f, "16777216"}, {3.4028235e38f, "3.4028235e+38"},
        {1e-45f, "1e-45"}, {1.17549435e-38f, "1.1754944e-38"}, {-5.411104f, "-5.411104"},
        {1e16f, "1e+16"}, {0.0001f, "0.0001"}, {-0.0f, "-0"}, {2.5f, "2.5"},
        {8.589973e9f, "8589974000"}, {1.0e10f, "10000000000"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        fmt_float(buf, sizeof buf, f[i].v);
        CHECKF(!strcmp(buf, f[i].text), "%.9g: [%s], expected [%s]", (double)f[i].v, buf,
               f[i].text);
    }
}

/* Random values read back with the same bits, in at most 17 (9) digits, and
 * no shorter text of the decimal rounded to fewer digits reads back. */
static void test_random(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int bad = 0, longer = 0;
    char buf[64], shorter[64];
    for (int i = 0; i < 100000; i++) {
        double v = random_double(&s);
        if (!isfinite(v))
            continue;
        fmt_double(buf, sizeof buf, v);
        double back = strtod(buf, NULL);
        bad += memcmp(&back, &v, sizeof v) != 0;
        int n = significant_digits(buf);
        bad += n > 17;
        if (n > 1 && v != 0) {
            snprintf(shorter, sizeof shorter, "%.*e", n - 2, v);
            longer += strtod(shorter, NULL) == v;
        }
        float fv = random_float(&s);
        if (!isfinite(fv))
            continue;
        fmt_float(buf, sizeof buf, fv);
        float fback = strtof(buf, NULL);
        bad += memcmp(&fback, &fv, sizeof fv) != 0;
        n = significant_digits(buf);
        bad += n > 9;
        if (n > 1 && fv != 0) {
            snprintf(shorter, sizeof shorter, "%.*e", n - 2, (double)fv);
            longer += strtof(shorter, NULL) == fv;
        }
    }
    CHECKF(bad == 0, "%d values did not read back", bad);
    CHECKF(longer == 0, "%d values had a shorter text that reads back", longer);
}

/* JSON numbers: integers with all their digits, NaN and infinities as strings. */
static void test_json_integer(void)
{
    static const char *const cases[][2] = {
        {"0", "0"},
        {"-5", "-5"},
        {"9007199254740992", "9007199254740992"},
        {"-9007199254740993", "-9007199254740993"},
        {"10000000000000000", "10000000000000000"},
        {"170141183460469231731687303715884105727", "170141183460469231731687303715884105727"},
        {"nan", "\"NaN\""},
        {"-inf", "\"-Infinity\""},
        {"1e+300", "1e+300"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128] = "";
        FILE *f = fmemopen(out, sizeof out, "w");
        fmt_json_number(f, cases[i][0]);
        fclose(f);
        CHECKF(!strcmp(out, cases[i][1]), "%s: [%s], expected [%s]", cases[i][0], out,
               cases[i][1]);
    }
}

/* Prints random values and their text for an outside reference. */
static int dump(long n, unsigned long long seed)
{
    uint64_t s = seed | 1;
    char buf[64];
    for (long i = 0; i < n; i++) {
        double v = random_double(&s);
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        fmt_double(buf, sizeof buf, v);
        printf("d %016llx %s\n", (unsigned long long)b, buf);
    }
    for (long i = 0; i < n; i++) {
        float v = random_float(&s);
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        fmt_float(buf, sizeof buf, v);
        printf("f %08x %s\n", b, buf);
    }
    return 0;
}

#define LINE_THREADS 4
#define LINE_COUNT 300

/* Writes LINE_COUNT escaped lines, each with a newline and a control byte
 * inside its text, to the unbuffered stream arg. */
static void *write_lines(void *arg)
{
    static int next_id;
    int id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    for (int k = 0; k < LINE_COUNT; k++) {
        char text[160];
        snprintf(text, sizeof text, "thread %d line %d: a\nb\x01 and enough text for a write "
                 "to take a while when it goes out byte by byte", id, k);
        fmt_escaped_line(arg, "gpubatch: ", text, "\n");
    }
    return NULL;
}

/* Lines that several threads write at once to one unbuffered stream come
 * out whole, escaped, none lost (one write each: a line written a piece at
 * a time mixes with the others'). */
static void test_escaped_lines(void)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f)
        return;
    setvbuf(f, NULL, _IONBF, 0);
    pthread_t t[LINE_THREADS];
    for (int i = 0; i < LINE_THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, write_lines, f) == 0);
    for (int i = 0; i < LINE_THREADS; i++)
        pthread_join(t[i], NULL);
    rewind(f);
    static char seen[LINE_THREADS][LINE_COUNT];
    char line[512];
    int whole = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        int id, k, n = -1;
        if (sscanf(line, "gpubatch: thread %d line %d: a\\nb\\x01 and enough text for a write "
                         "to take a while when it goes out byte by byte\n%n", &id, &k, &n) == 2 &&
            n == (int)strlen(line) && id >= 0 && id < LINE_THREADS && k >= 0 && k < LINE_COUNT &&
            !seen[id][k]++)
            whole++;
        else
            bad++;
    }
    CHECKF(whole == LINE_THREADS * LINE_COUNT && bad == 0, "%d whole lines, %d mixed", whole, bad);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "dump"))
        return dump(atol(argv[2]), strtoull(argv[3], NULL, 0));
    RUN(test_fixed);
    RUN(test_random);
    RUN(test_json_integer);
    RUN(test_escaped_lines);
    return check_summary();
}
