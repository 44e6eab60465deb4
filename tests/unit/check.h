/* check.h - the assertion layer of the C unit tests.
 *
 * CHECK(cond) counts one passed or failed check and names file and line on
 * failure; check_summary() prints "N passed, N failed" and gives the exit
 * status. Each test program is main() calling its test functions. */
#ifndef GPUBATCH_TESTS_CHECK_H
#define GPUBATCH_TESTS_CHECK_H

#include <stdio.h>

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

/* Prints the totals and returns the exit status for main. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
