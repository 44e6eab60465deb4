/* fuzz_cli.h - what the harnesses that run whole commands share: a
 * temporary directory's file names, whole-file reads and writes, and a
 * command's entry point run with its stdout in a file and stderr silenced.
 * Included by one harness each (static definitions). */
#ifndef GPUBATCH_TESTS_FUZZ_CLI_H
#define GPUBATCH_TESTS_FUZZ_CLI_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64]; /* the harness's temporary directory */

/* dir/name, in one of a few static buffers (enough for one argv). */
static char *at(const char *name)
{
    static char bufs[16][96];
    static int next;
    char *b = bufs[next++ % 16];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

/* Reads a whole file into *out (NULL when missing). */
static void slurp(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *out = NULL;
    *len = 0;
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)n + 1);
    require(*out && fread(*out, 1, (size_t)n, f) == (size_t)n);
    *len = (size_t)n;
    fclose(f);
}

/* Writes len bytes to path. */
static void spill(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    require(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

/* Runs a command's entry point with stdout in dir/out.txt and stderr
 * silenced; returns its status. */
static int run(int (*cmd)(int, char **), int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    int keep_out = dup(1), keep_err = dup(2);
    int out = open(at("out.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);
    dup2(out, 1);
    dup2(null, 2);
    close(out);
    close(null);
    optind = 0; /* a fresh getopt scan */
    int status = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(keep_out, 1);
    dup2(keep_err, 2);
    close(keep_out);
    close(keep_err);
    return status;
}

#endif
