/* result.h - the results of one reduced array on standard output, as
 * `gpubatch reduce` prints them and `gpubatch merge` prints them again from
 * the shards' states. */
#ifndef GPUBATCH_CLI_RESULT_H
#define GPUBATCH_CLI_RESULT_H

#include "io/frame.h"
#include "io/sink.h"
#include "output.h"
#include "runtime/axis.h"
#include "runtime/reduce.h"

/* Prints the ops of st for the array name (shape from fi) as one text line
 * per op or one JSON object. An op with no value (min of an empty array)
 * and the ops of refused (not run, for the reason refused_why) get no
 * line, or null in JSON, and one error line per reason after the others
 * are printed, so that one failing op never hides the rest. 0, or 1 when
 * an op has no value or the write to standard output failed. */
int result_print(const char *name, const frame_info *fi, const rd_state *st, unsigned refused,
                 const char *refused_why, int json);

/* Text and JSON print at most this many elements of one op's result along
 * axes; a larger one asks for -o. */
#define RESULT_AXIS_PRINT_MAX 1000

/* The results of a reduction along axes of the array name: with out->path,
 * one op's array to an .npy (compressed by the name) or every op's to an
 * .npz archive, a member per op named by it (inputs: the files not to be
 * overwritten, may be NULL); else per op one text line "OP VALUES  NAME"
 * (nested lists in C order) or one JSON object. An op without a value for
 * some element (min along an empty axis) is reported in one error line
 * after the others are printed, and no file is written; mean, var and std
 * of an empty reduction are NaN with a warning, as numpy's. 0, or 1 after
 * an error. */
int result_axis(const char *name, const ax_plan *p, const ax_state *st, int ddof,
                const out_opts *out, const io_file_id *inputs, int json);

#endif
