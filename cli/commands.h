/* commands.h - one entry point per command; each returns the exit status
 * (0 ok, 1 error, 2 usage). */
#ifndef GPUBATCH_CLI_COMMANDS_H
#define GPUBATCH_CLI_COMMANDS_H

#include "io/frame.h"
#include "runtime/reduce.h"

int cmd_reduce(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_quadratic(int argc, char **argv);
int cmd_transpose(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* Prints the results of one reduced array as reduce does, text or JSON
 * (cmd_reduce.c; merge prints with it too); 0, or 1 after an error. */
int reduce_print(const char *name, const frame_info *fi, const rd_state *st, int json);

#endif
