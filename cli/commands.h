/* commands.h - one entry point per command; each returns the exit status
 * (0 ok, 1 error, 2 usage). */
#ifndef GPUBATCH_CLI_COMMANDS_H
#define GPUBATCH_CLI_COMMANDS_H

int cmd_reduce(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_quadratic(int argc, char **argv);
int cmd_transpose(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_index(int argc, char **argv);

#endif
