/* test_detach.c - detach_exit(): the exit status, the files the process
 * drops (closed at once) and keeps (held by the helper, then released),
 * the helper itself (adopted by this test, a subreaper: it must exist,
 * end after the process with status 0), and the plain return where
 * nothing matches (no helper). */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "runtime/detach.h"

/* Milliseconds on a monotonic clock. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Waits up to ms for fd to reach its end (read gives 0); 1 if it did. */
static int reaches_end(int fd, double ms)
{
    double until = now_ms() + ms;
    char buf[64];
    while (now_ms() < until) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            ssize_t k = read(fd, buf, sizeof buf);
            if (k == 0)
                return 1;
        }
    }
    return 0;
}

/* A child writes to a pipe on stdout and holds a FIFO under `fifo`, then
 * calls detach_exit(7, prefix); returns the child's wait status. out_end
 * and fifo_end get whether each reader then saw the end of its data;
 * helper the wait status of the other process that ended after the child
 * (-1: none). */
static int run_child(const char *fifo, const char *prefix, int *out_end, int *fifo_end,
                     int *helper)
{
    int out[2];
    if (pipe(out) < 0)
        return -1;
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    pid_t pid = fork();
    if (pid == 0) {
        close(out[0]);
        close(rd);
        dup2(out[1], 1);
        close(out[1]);
        int w = open(fifo, O_WRONLY);
        if (w < 0)
            _exit(40);
        printf("results\n");
        fflush(stdout);
        detach_exit(7, prefix);
        _exit(3); /* detach_exit returned: nothing matched */
    }
    close(out[1]);
    int st = -1;
    waitpid(pid, &st, 0);
    char buf[16] = {0};
    ssize_t k = read(out[0], buf, sizeof buf - 1);
    *out_end = k == 8 && !strcmp(buf, "results\n") && reaches_end(out[0], 5000);
    *fifo_end = reaches_end(rd, 5000);
    int hst = -1;
    *helper = waitpid(-1, &hst, 0) > 0 ? hst : -1;
    close(out[0]);
    close(rd);
    return st;
}

int main(void)
{
    char dir[] = "/tmp/gpubatch-detach-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/device-file", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); /* the helper is then ours to wait for */
    int out_end, fifo_end, helper;

    /* the FIFO matches: the process ends with 7, stdout closed with it,
     * the FIFO's writer (the helper) gone soon after */
    int st = run_child(fifo, fifo, &out_end, &fifo_end, &helper);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 7, "wait status %#x", st);
    CHECK(out_end);
    CHECK(fifo_end);
    CHECKF(helper != -1 && WIFEXITED(helper) && WEXITSTATUS(helper) == 0, "helper %#x", helper);

    /* nothing matches: detach_exit returns and the caller exits as usual */
    st = run_child(fifo, "/nonexistent-prefix/", &out_end, &fifo_end, &helper);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 3, "wait status %#x", st);
    CHECK(out_end);
    CHECK(fifo_end);
    CHECKF(helper == -1, "a helper where nothing matched: %#x", helper);

    unlink(fifo);
    rmdir(dir);
    return check_summary();
}
