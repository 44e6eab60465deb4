/* detach.c - the process ends; a helper that shares its memory and files
 * waits for the last thread, then lets the kernel release them. */
#include "detach.h"

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every Linux architecture */
#endif

#define DETACH_MAX_FILES 1024 /* more open files than this: no helper */

static int detach_pidfd = -1;
static char detach_stack[16384] __attribute__((aligned(64)));

/* The helper's body: raw system calls only, since it runs on the
 * process's memory without a thread of its own in the C library. Returns
 * (and so exits) once the whole process has ended. */
static int detach_helper(void *arg)
{
    (void)arg;
    struct pollfd p = {detach_pidfd, POLLIN, 0};
    while (syscall(SYS_ppoll, &p, 1UL, NULL, NULL, 0UL) < 0)
        continue; /* only EINTR: a bad descriptor is reported as POLLNVAL */
    return 0;
}

/* Lists the open descriptors other than those whose path starts with
 * keep_prefix into drop; *kept gets how many matched. -1 where they cannot
 * be listed, or too many are open. */
static int detach_scan(const char *keep_prefix, int *drop, int *ndrop, int *kept)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    size_t plen = strlen(keep_prefix);
    int rc = 0;
    struct dirent *e;
    *ndrop = 0;
    *kept = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int fd = atoi(e->d_name);
        if (fd == dirfd(d))
            continue;
        char path[64], target[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n >= 0) {
            target[n] = 0;
            if (!strncmp(target, keep_prefix, plen)) {
                (*kept)++;
                continue;
            }
        }
        if (*ndrop == DETACH_MAX_FILES) {
            rc = -1;
            break;
        }
        drop[(*ndrop)++] = fd;
    }
    closedir(d);
    return rc;
}

/* Ends the process, the helper holding what it leaves (see detach.h). */
void detach_exit(int status, const char *keep_prefix)
{
    static int drop[DETACH_MAX_FILES];
    int ndrop, kept;
    if (detach_scan(keep_prefix, drop, &ndrop, &kept) < 0 || kept == 0)
        return;
    detach_pidfd = (int)syscall(SYS_pidfd_open, (long)getpid(), 0L);
    if (detach_pidfd < 0)
        return;
    /* no CLONE_THREAD: the helper is a process of its own, so the exit of
     * this one (all its threads) ends neither the helper nor the memory */
    if (clone(detach_helper, detach_stack + sizeof detach_stack, CLONE_VM | CLONE_FILES | SIGCHLD,
              NULL) < 0) {
        close(detach_pidfd);
        detach_pidfd = -1;
        return;
    }
    for (int i = 0; i < ndrop; i++)
        close(drop[i]);
    _exit(status);
}
