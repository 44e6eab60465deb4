/* clock.c - the monotonic clock (see clock.h). */
#include "clock.h"

#include <time.h>

/* Seconds on the monotonic clock. */
double io_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
