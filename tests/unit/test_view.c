/* test_view.c - plain input read in place: views of a file (io/view.h),
 * the reader's views beside its reads, the pipeline's chunks as views, and
 * a file cut under a view (SIGBUS) as one error line and exit status 1;
 * and the input buffers' huge pages (io/hugemem.h) only where filled. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/msg.h"
#include "io/hugemem.h"
#include "io/pipeline.h"
#include "io/reader.h"
#include "io/sink.h"
#include "io/view.h"
#include "check.h"
#define RND_SEED 0x5eed0f1e5eed0f1eull
#include "rnd.h"

static char tmpdir[] = "/tmp/gb_view_XXXXXX";

/* Path of name inside tmpdir (in one of two rotating static buffers). */
static const char *in_tmp(const char *name)
{
    static char paths[2][300];
    static int k;
    k ^= 1;
    snprintf(paths[k], sizeof paths[k], "%s/%s", tmpdir, name);
    return paths[k];
}

/* Writes n pseudo-random bytes to path and returns them (malloc'd). */
static uint8_t *make_file(const char *path, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)rnd();
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f)
        fclose(f);
    return b;
}

/* Views of ranges at every kind of offset (page and huge-page boundaries,
 * odd ones) hold the file's bytes; a range past the end is -EFAULT. */
static void test_view_ranges(void)
{
    size_t n = (5u << 20) + 12345;
    const char *path = in_tmp("ranges");
    uint8_t *want = make_file(path, n);
    int fd = open(path, O_RDONLY);
    static const uint64_t offs[] = {0, 1, 4095, 4096, (2u << 20) - 1, 2u << 20, (2u << 20) + 77};
    static const size_t lens[] = {1, 100, 4096, (1u << 20) + 3, 3u << 20};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
            io_view v;
            int rc = io_view_map(&v, fd, offs[i], lens[j], path);
            CHECKF(rc == 0 && v.len == lens[j] && !memcmp(v.data, want + offs[i], lens[j]),
                   "off %llu len %zu rc %d", (unsigned long long)offs[i], lens[j], rc);
            io_view_fault f;
            CHECK(io_view_owner(v.data + lens[j] - 1, &f) && f.label == path && f.fd == fd &&
                  f.size == n && f.off == offs[i] + lens[j] - 1);
            /* the same bytes with pread, from any address of the view on */
            size_t skip = lens[j] / 3, len = lens[j] - skip;
            uint8_t *copy = malloc(len);
            memset(copy, 0xa5, len);
            io_view_fault at;
            CHECKF(io_view_owner(v.data, &at) && io_view_read(&at, skip, copy, len) == 0 &&
                       !memcmp(copy, want + offs[i] + skip, len),
                   "io_view_read: off %llu len %zu from %zu", (unsigned long long)offs[i], lens[j],
                   skip);
            free(copy);
            const uint8_t *last = v.data + lens[j] - 1;
            io_view_unmap(&v);
            CHECK(!io_view_owner(last, &f));
            io_view_unmap(&v); /* twice: nothing */
        }
    io_view v;
    /* a file cut under a view: io_view_read refuses the bytes it lost */
    CHECK(io_view_map(&v, fd, 4096, 3u << 20, path) == 0);
    const char *cut = in_tmp("ranges-cut");
    uint8_t *cut_want = make_file(cut, n);
    int cfd = open(cut, O_RDWR);
    io_view cv;
    CHECK(io_view_map(&cv, cfd, 4096, 3u << 20, cut) == 0 && ftruncate(cfd, 2u << 20) == 0);
    uint8_t *got = malloc(1u << 20);
    io_view_fault at;
    CHECK(io_view_owner(cv.data, &at) && at.off == 4096);
    CHECK(io_view_read(&at, 0, got, 1u << 20) == 0 && !memcmp(got, cut_want + 4096, 1u << 20));
    CHECK(io_view_read(&at, (2u << 20) - 4096 - 10, got, 100) == -1);
    CHECK(io_view_read(&at, 0, got, (3u << 20) + 1) == -1); /* past the view */
    free(got);
    io_view_unmap(&cv);
    close(cfd);
    free(cut_want);
    io_view_unmap(&v);
    CHECK(io_view_map(&v, fd, n - 10, 11, path) == -EFAULT && v.base == NULL);
    CHECK(io_view_map(&v, fd, n, 0, path) == 0 && v.base == NULL);
    close(fd);
    free(want);
}

/* A reader's views follow its reads: after a read, a step back, a skip,
 * to the end (a short view, then 0); stdin and gzip are not viewable. */
static void test_reader_views(void)
{
    size_t n = (3u << 20) + 999;
    const char *path = in_tmp("reader");
    uint8_t *want = make_file(path, n);
    io_reader *r;
    io_status err;
    CHECK(io_reader_open(&r, path, &err) == 0);
    uint8_t head[1000];
    CHECK(io_reader_read(r, head, sizeof head) == (ssize_t)sizeof head);
    CHECK(io_reader_view_offset(r, 0) == (int64_t)sizeof head);
    CHECK(io_reader_view_offset(r, 100) == (int64_t)sizeof head - 100);
    CHECK(io_reader_view_offset(r, sizeof head + 1) == -1);
    CHECK(io_reader_unread(r, 100) == 0 && io_reader_tell(r) == sizeof head - 100);
    io_view v;
    CHECK(io_reader_view(r, 1u << 20, &v) == (ssize_t)(1u << 20) &&
          !memcmp(v.data, want + 900, 1u << 20));
    io_view_unmap(&v);
    CHECK(io_reader_skip(r, 5) == 5);
    uint64_t at = 900 + (1u << 20) + 5;
    CHECK(io_reader_view(r, n, &v) == (ssize_t)(n - at) && !memcmp(v.data, want + at, n - at));
    io_view_unmap(&v);
    CHECK(io_reader_view(r, 10, &v) == 0 && v.base == NULL);
    CHECK(io_reader_tell(r) == n);
    io_reader_close(r);
    free(want);
}

/* The pipeline's view chunks hold the data in order, with the bytes of a
 * prefix stepped back over, and a limit's truncation is the same error as
 * the buffered ring's. */
static void test_pipeline_views(void)
{
    size_t n = (7u << 20) + 4096 + 64;
    const char *path = in_tmp("ring");
    uint8_t *want = make_file(path, n);
    io_reader *r;
    io_status err;
    CHECK(io_reader_open(&r, path, &err) == 0);
    uint8_t prefix[64];
    CHECK(io_reader_read(r, prefix, 64) == 64);
    pl_ring *p;
    CHECK(pl_open_view(&p, r, 3, 1u << 20, 64, UINT64_MAX) == 0);
    pl_chunk c;
    uint64_t seen = 0;
    int ok = 1;
    while (pl_next(p, &c) == 1) {
        ok &= c.offset == seen && !memcmp(c.data, want + seen, c.bytes);
        seen += c.bytes;
        pl_release(p, c.slot);
    }
    CHECK(ok && seen == n);
    pl_close(p);
    io_reader_close(r);
    CHECK(io_reader_open(&r, path, &err) == 0);
    CHECK(pl_open_view(&p, r, 2, 1u << 20, 0, n + 1) == 0);
    int rc;
    while ((rc = pl_next(p, &c)) == 1)
        pl_release(p, c.slot);
    CHECK(rc == IO_ERR_FORMAT && pl_status(p)->code == rc &&
          strstr(pl_status(p)->text, "truncated: expected"));
    pl_close(p);
    io_reader_close(r);
    free(want);
}

/* What the threads of test_cut_under_view read. */
static const uint8_t *cut_data;
static size_t cut_len;
static pthread_barrier_t cut_start;

/* Reads a byte of every page of the cut view, once the others are ready. */
static void *cut_reader(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&cut_start);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < cut_len; i += 4096)
        sum += cut_data[i];
    return NULL;
}

/* A file cut under a live view: reading the cut pages raises SIGBUS,
 * which the guard turns into one line naming the file (one, though four
 * threads read the cut pages at once), the temporary output removed, and
 * exit status 1. Run in a child process. */
static void test_cut_under_view(void)
{
    size_t n = 4u << 20;
    char path[300], errpath[300], outpath[300];
    snprintf(path, sizeof path, "%s", in_tmp("cut"));
    free(make_file(path, n));
    snprintf(errpath, sizeof errpath, "%s", in_tmp("cut.err"));
    snprintf(outpath, sizeof outpath, "%s", in_tmp("out.bin"));
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(e, 2);
        io_sink_install_signal_cleanup();
        msg_guard_views();
        io_sink *s;
        io_status err;
        io_reader *r;
        if (io_sink_open(&s, outpath, 1, NULL, 0, &err) < 0 || io_reader_open(&r, path, &err) < 0) {
            fprintf(stderr, "%s\n", err.text);
            _exit(3);
        }
        io_view v;
        if (io_reader_view(r, n, &v) != (ssize_t)n)
            _exit(4);
        truncate(path, 4096);
        cut_data = v.data;
        cut_len = n;
        enum { READERS = 4 };
        pthread_t t[READERS];
        pthread_barrier_init(&cut_start, NULL, READERS);
        for (int i = 0; i < READERS; i++)
            pthread_create(&t[i], NULL, cut_reader, NULL);
        for (int i = 0; i < READERS; i++)
            pthread_join(t[i], NULL);
        _exit(5); /* the reads past the cut did not fault */
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %#x", st);
    char line[512] = "", more[512], expect[512];
    int lines = 0;
    FILE *f = fopen(errpath, "r");
    if (f) {
        if (fgets(line, sizeof line, f))
            lines++;
        while (fgets(more, sizeof more, f))
            lines++;
        fclose(f);
    }
    CHECKF(lines == 1, "%d lines", lines);
    snprintf(expect, sizeof expect,
             "gpubatch: error: %s: the file shrank from %zu to 4096 bytes while being read\n",
             path, n);
    CHECKF(!strcmp(line, expect), "got [%s]", line);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -q '^\\.out\\.bin'", tmpdir);
    CHECK(system(cmd) != 0);
}

/* The kB of anonymous huge pages in the mapping that holds p, from
 * /proc/self/smaps; -1 where it cannot be read. */
static long huge_kb_at(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    long kb = -1;
    int in = 0;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = a >= lo && a < hi;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* A buffer that a small input fills only in part faults no huge page in
 * for its first bytes (hugemem_alloc would fault 2 MiB in where the system
 * gives huge pages on advice). */
static void test_hugemem_upto(void)
{
    unsigned char *small = hugemem_alloc_upto((size_t)16 << 20, 1000);
    CHECK(small != NULL);
    if (!small)
        return;
    memset(small, 0x5a, 1000);
    CHECK(small[999] == 0x5a);
    long kb = huge_kb_at(small);
    if (kb >= 0)
        CHECKF(kb == 0, "%ld kB of huge pages for 1000 bytes written", kb);
    free(small);
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 1;
    RUN(test_view_ranges);
    RUN(test_reader_views);
    RUN(test_pipeline_views);
    RUN(test_cut_under_view);
    RUN(test_hugemem_upto);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return 1;
    return check_summary();
}
