/* clock.h - the one monotonic clock that timings, timelines and progress
 * read. */
#ifndef GPUBATCH_IO_CLOCK_H
#define GPUBATCH_IO_CLOCK_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), from an arbitrary start. */
double io_seconds(void);

#endif
