/* result.h - the results of one reduced array on standard output, as
 * `gpubatch reduce` prints them and `gpubatch merge` prints them again from
 * the shards' states. */
#ifndef GPUBATCH_CLI_RESULT_H
#define GPUBATCH_CLI_RESULT_H

#include "io/frame.h"
#include "runtime/reduce.h"

/* Prints the ops of st for the array name (shape from fi) as one text line
 * per op or one JSON object; 0, or 1 after an error line (printing nothing)
 * when an op has no value or the write to standard output failed. */
int result_print(const char *name, const frame_info *fi, const rd_state *st, int json);

#endif
