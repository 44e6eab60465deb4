/* fuzz_cli.h - what the harnesses that run whole commands share: a
 * temporary directory's file names, whole-file reads and writes, and a
 * command's entry point run with its stdout in a file and stderr silenced.
 * Included by one harness each (static definitions). */
#ifndef GPUBATCH_TESTS_FUZZ_CLI_H
#define GPUBATCH_TESTS_FUZZ_CLI_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/msg.h"

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

/* Makes a new temporary directory /tmp/prefix.XXXXXX, its name in dir. */
static void fresh_dir(const char *prefix)
{
    snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", prefix);
    require(mkdtemp(dir) != NULL);
}

/* Makes a fresh directory and works there (cwd keeps where the process
 * was, cwd_len bytes), messages off: the commands that set a harness up
 * name their files relatively, as the seeds do. */
static void enter_fresh_dir(const char *prefix, char *cwd, size_t cwd_len)
{
    require(getcwd(cwd, cwd_len) != NULL);
    fresh_dir(prefix);
    require(chdir(dir) == 0);
    msg_set_level(MSG_QUIET);
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

/* Runs a harness's set-up on its first input only. */
static void setup_once(void (*setup)(void))
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
}

/* Requires the file at path to hold exactly want_len bytes want. */
static void require_file(const char *path, const char *want, size_t want_len)
{
    char *got;
    size_t got_len;
    slurp(path, &got, &got_len);
    require(got && got_len == want_len && !memcmp(got, want, want_len));
    free(got);
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
