/* check.h - the assertion layer of the C unit tests.
 *
 * CHECK(cond) counts one passed or failed check and names file and line on
 * failure; check_summary() prints "N passed, N failed" and gives the exit
 * status. Each test program is main() calling its test functions. */
#ifndef GPUBATCH_TESTS_CHECK_H
#define GPUBATCH_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (cond) {                                                                      \
            check_passed++;                                                              \
        } else {                                                                         \
            check_failed++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

/* Like CHECK, with a printf-style explanation on failure. */
#define CHECKF(cond, ...)                                                                \
    do {                                                                                 \
        if (cond) {                                                                      \
            check_passed++;                                                              \
        } else {                                                                         \
            check_failed++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static int check_left_out;

/* Whether the test function `name` runs: the case filter
 * GPUBATCH_TEST_CASE (`make test C=...`), when set, runs only the test
 * functions whose names hold it. */
static inline int check_wanted(const char *name)
{
    const char *want = getenv("GPUBATCH_TEST_CASE");
    if (!want || !*want || strstr(name, want))
        return 1;
    check_left_out++;
    return 0;
}

/* What a test program does before each test function it runs, given the
 * function's name and the number of RUNs before this one (filtered out or
 * not): nothing, unless rnd.h gives each its own random stream. */
#ifndef CHECK_CASE_BEGIN
#define CHECK_CASE_BEGIN(name, index) ((void)(index))
#endif

static unsigned check_run_index __attribute__((unused));

/* Calls the test function fn (with any arguments) unless the case filter
 * leaves it out. */
#define RUN(fn, ...)                                                                     \
    do {                                                                                 \
        unsigned check_index_ = check_run_index++;                                       \
        if (check_wanted(#fn)) {                                                         \
            CHECK_CASE_BEGIN(#fn, check_index_);                                         \
            fn(__VA_ARGS__);                                                             \
        }                                                                                \
    } while (0)

/* Prints the totals and returns the exit status for main. */
static inline int check_summary(void)
{
    if (check_left_out)
        printf("note: GPUBATCH_TEST_CASE=%s: %d test functions left out\n",
               getenv("GPUBATCH_TEST_CASE"), check_left_out);
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
