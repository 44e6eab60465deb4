/* result.h - the results of one reduced array on standard output, as
 * `gpubatch reduce` prints them and `gpubatch merge` prints them again from
 * the shards' states. */
#ifndef GPUBATCH_CLI_RESULT_H
#define GPUBATCH_CLI_RESULT_H

#include "io/frame.h"
#include "runtime/reduce.h"

/* Prints the ops of st for the array name (shape from fi) as one text line
 * per op or one JSON object. An op with no value (min of an empty array)
 * and the ops of refused (not run, for the reason refused_why) get no
 * line, or null in JSON, and one error line per reason after the others
 * are printed, so that one failing op never hides the rest. 0, or 1 when
 * an op has no value or the write to standard output failed. */
int result_print(const char *name, const frame_info *fi, const rd_state *st, unsigned refused,
                 const char *refused_why, int json);

#endif
