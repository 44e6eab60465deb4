/* test_sink.c - atomic output files, direct devices, refusals, signals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/reader.h"
#include "io/sink.h"
#include "check.h"
#define RND_SEED 0x1234567887654321ull
#include "rnd.h"

static char tmpdir[] = "/tmp/gb_sink_XXXXXX";


/* Fills buf with pseudo-random bytes. */
static void fill(uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)rnd();
}

/* Path of name inside tmpdir (in one of two rotating static buffers). */
static const char *in_tmp(const char *name)
{
    static char paths[2][300];
    static int k;
    k ^= 1;
    snprintf(paths[k], sizeof(paths[k]), "%s/%s", tmpdir, name);
    return paths[k];
}

/* Number of entries in dir whose name starts with prefix. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    }
    closedir(d);
    return n;
}

/* Nonzero when path holds exactly the n bytes at data. */
static int file_equals(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *buf = malloc(n + 1);
    size_t got = fread(buf, 1, n + 1, f);
    fclose(f);
    int ok = got == n && !memcmp(buf, data, n);
    free(buf);
    return ok;
}

/* Writes a small file with fixed content. */
static void make_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

/* The target appears only on commit; nothing is left behind after abort. */
static void test_atomic(void)
{
    size_t n = (1u << 20) + 12345;
    uint8_t *data = malloc(n);
    fill(data, n);
    const char *target = in_tmp("out.bin");
    io_sink *s;
    io_status err;
    CHECK(io_sink_open(&s, target, 0, NULL, 0, &err) == 0);
    CHECK(!io_sink_is_tty(s));
    /* Many small writes, then large ones. */
    size_t pos = 0;
    while (pos < 300000) {
        size_t k = 1 + (size_t)(rnd() % 100);
        CHECK(io_sink_write(s, data + pos, k) == 0);
        pos += k;
    }
    CHECK(io_sink_write(s, data + pos, n - pos) == 0);
    CHECK(access(target, F_OK) != 0 && errno == ENOENT);
    CHECK(count_entries(tmpdir, ".out.bin.") == 1);
    CHECK(io_sink_error(s)[0] == '\0');
    CHECK(io_sink_commit(s) == 0);
    CHECK(file_equals(target, data, n));
    CHECK(count_entries(tmpdir, ".out.bin.") == 0);
    /* Abort removes the temporary file and leaves the target alone. */
    CHECK(io_sink_open(&s, in_tmp("aborted.bin"), 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, data, 1000) == 0);
    CHECK(io_sink_write(s, data, n) == 0);
    CHECK(count_entries(tmpdir, ".aborted.bin.") == 1);
    io_sink_abort(s);
    CHECK(count_entries(tmpdir, ".aborted.bin.") == 0);
    CHECK(count_entries(tmpdir, "aborted.bin") == 0);
    io_sink_abort(NULL);
    /* An empty output is a real (empty) file. */
    CHECK(io_sink_open(&s, in_tmp("empty.bin"), 0, NULL, 0, &err) == 0);
    CHECK(io_sink_commit(s) == 0);
    struct stat st;
    CHECK(stat(in_tmp("empty.bin"), &st) == 0 && st.st_size == 0);
    /* A relative path (no directory part) works too. */
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(chdir(tmpdir) == 0);
    CHECK(io_sink_open(&s, "rel.bin", 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, "abc", 3) == 0);
    CHECK(count_entries(".", ".rel.bin.") == 1);
    CHECK(io_sink_commit(s) == 0);
    CHECK(file_equals("rel.bin", (const uint8_t *)"abc", 3));
    CHECK(chdir(cwd) == 0);
    free(data);
}

/* A target whose name is near the file system's limit still gets a
 * temporary name that fits, relative or in a directory. */
static void test_long_name(void)
{
    char name[256];
    for (size_t len = 247; len <= 255; len += 4) {
        memset(name, 'n', len);
        name[len] = '\0';
        io_sink *s;
        io_status err;
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        CHECK(io_sink_open(&s, path, 0, NULL, 0, &err) == 0);
        CHECK(io_sink_write(s, "xyz", 3) == 0);
        CHECK(count_entries(tmpdir, ".nnnn") == 1);
        CHECK(io_sink_commit(s) == 0);
        CHECK(file_equals(path, (const uint8_t *)"xyz", 3));
        CHECK(count_entries(tmpdir, ".nnnn") == 0);
        CHECK(unlink(path) == 0);
    }
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(chdir(tmpdir) == 0);
    io_sink *s;
    io_status err;
    CHECK(io_sink_open(&s, name, 0, NULL, 0, &err) == 0);
    CHECK(io_sink_commit(s) == 0);
    CHECK(access(name, F_OK) == 0 && unlink(name) == 0);
    CHECK(chdir(cwd) == 0);
}

/* New files get 0666 minus the umask. */
static void test_mode(void)
{
    static const mode_t masks[] = {022, 077, 002};
    for (size_t i = 0; i < 3; i++) {
        mode_t old = umask(masks[i]);
        io_sink *s;
        const char *p = in_tmp("mode.bin");
        unlink(p);
        CHECK(io_sink_open(&s, p, 0, NULL, 0, NULL) == 0);
        CHECK(io_sink_commit(s) == 0);
        struct stat st;
        CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == (0666 & ~masks[i]));
        umask(old);
    }
}

/* Existing targets need force; inputs are never overwritten. */
static void test_refusals(void)
{
    const char *target = in_tmp("exists.txt");
    make_file(target, "old");
    io_sink *s = (io_sink *)1;
    io_status err;
    CHECK(io_sink_open(&s, target, 0, NULL, 0, &err) == IO_ERR_EXISTS && s == NULL);
    CHECK(strstr(err.text, "already exists (use -f to overwrite)") != NULL);
    CHECK(file_equals(target, (const uint8_t *)"old", 3));
    CHECK(io_sink_open(&s, target, 1, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, "new!", 4) == 0);
    CHECK(file_equals(target, (const uint8_t *)"old", 3));
    CHECK(io_sink_commit(s) == 0);
    CHECK(file_equals(target, (const uint8_t *)"new!", 4));

    /* The input itself, through a symlink and through a hard link. */
    struct stat st;
    CHECK(stat(target, &st) == 0);
    io_file_id ids[2] = {{12345, 678}, {(uint64_t)st.st_dev, (uint64_t)st.st_ino}};
    CHECK(io_sink_open(&s, target, 1, ids, 2, &err) == IO_ERR_SAME);
    CHECK(strstr(err.text, "would overwrite an input") != NULL);
    CHECK(symlink(target, in_tmp("link.txt")) == 0);
    CHECK(io_sink_open(&s, in_tmp("link.txt"), 1, ids, 2, &err) == IO_ERR_SAME);
    CHECK(link(target, in_tmp("hard.txt")) == 0);
    CHECK(io_sink_open(&s, in_tmp("hard.txt"), 1, ids, 2, &err) == IO_ERR_SAME);
    char rel[400];
    snprintf(rel, sizeof(rel), "%s/../%s/./exists.txt", tmpdir, strrchr(tmpdir, '/') + 1);
    CHECK(io_sink_open(&s, rel, 1, ids, 2, &err) == IO_ERR_SAME);
    CHECK(file_equals(target, (const uint8_t *)"new!", 4));
    /* The reader's identity is what the sink compares. */
    io_reader *r;
    CHECK(io_reader_open(&r, target, NULL) == 0);
    io_file_id rid;
    CHECK(io_reader_identity(r, &rid.dev, &rid.ino) == 0);
    io_reader_close(r);
    CHECK(io_sink_open(&s, target, 1, &rid, 1, &err) == IO_ERR_SAME);
    /* Other files are fine even with inputs listed. */
    CHECK(io_sink_open(&s, in_tmp("other.txt"), 0, ids, 2, &err) == 0);
    io_sink_abort(s);

    /* An empty name, a directory, a missing directory. */
    CHECK(io_sink_open(&s, "", 1, NULL, 0, &err) == IO_ERR_OPEN);
    CHECK(io_sink_open(&s, tmpdir, 1, NULL, 0, &err) == IO_ERR_OPEN);
    CHECKF(strstr(err.text, "s a directory") != NULL, "%s", err.text);
    CHECK(io_sink_open(&s, in_tmp("nodir/x.bin"), 1, NULL, 0, &err) == IO_ERR_OPEN);
    CHECK(strstr(err.text, "No such file") != NULL);

    /* A target created by someone else after open is not replaced. */
    const char *late = in_tmp("late.bin");
    CHECK(io_sink_open(&s, late, 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, "mine", 4) == 0);
    make_file(late, "theirs");
    CHECK(io_sink_commit(s) == IO_ERR_EXISTS);
    CHECK(strstr(io_sink_commit_error(), "already exists") != NULL);
    CHECK(file_equals(late, (const uint8_t *)"theirs", 6));
    CHECK(count_entries(tmpdir, ".late.bin.") == 0);
}

/* Devices are written in place, with no temporary file beside them. */
static void test_devices(void)
{
    size_t n = 3u << 20;
    uint8_t *data = malloc(n);
    fill(data, n);
    int before = count_entries("/dev", ".null.");
    io_sink *s;
    io_status err;
    CHECK(io_sink_open(&s, "/dev/null", 0, NULL, 0, &err) == 0);
    CHECK(count_entries("/dev", ".null.") == before);
    CHECK(io_sink_write(s, data, 10) == 0);
    CHECK(io_sink_write(s, data, n) == 0);
    CHECK(io_sink_commit(s) == 0);

    /* /dev/full: the error comes from a large write or from commit. */
    CHECK(io_sink_open(&s, "/dev/full", 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, data, n) == IO_ERR_WRITE);
    CHECK(strstr(io_sink_error(s), "No space left on device") != NULL);
    CHECK(io_sink_write(s, data, 1) == IO_ERR_WRITE); /* sticky */
    io_sink_abort(s);
    CHECK(io_sink_open(&s, "/dev/full", 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, data, 100) == 0);
    CHECK(io_sink_commit(s) == IO_ERR_WRITE);
    CHECK(strstr(io_sink_commit_error(), "No space left on device") != NULL);
    CHECK(count_entries("/dev", ".full.") == 0);

    /* A FIFO is written directly. */
    const char *fifo = in_tmp("fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(fifo, O_RDONLY);
        size_t total = 0;
        uint8_t buf[65536];
        ssize_t k;
        while ((k = read(fd, buf, sizeof(buf))) > 0)
            total += (size_t)k;
        free(data);
        _exit(total == n ? 0 : 1);
    }
    CHECK(io_sink_open(&s, fifo, 0, NULL, 0, &err) == 0);
    CHECK(io_sink_write(s, data, n) == 0);
    CHECK(io_sink_commit(s) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(count_entries(tmpdir, ".fifo.") == 0);
    free(data);
}

/* "-" is stdout; a closed pipe gives IO_ERR_PIPE once SIGPIPE is ignored. */
static void test_stdout_and_pipe(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        io_sink *s;
        if (io_sink_open(&s, "-", 0, NULL, 0, NULL) < 0)
            _exit(2);
        for (int i = 0; i < 1000; i++)
            if (io_sink_write(s, "0123456789", 10) < 0)
                _exit(3);
        _exit(io_sink_commit(s) < 0 ? 4 : 0);
    }
    close(fds[1]);
    size_t total = 0;
    char buf[4096];
    ssize_t k;
    int ok = 1;
    while ((k = read(fds[0], buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < k; i++)
            ok &= buf[i] == (char)('0' + (total + (size_t)i) % 10);
        total += (size_t)k;
    }
    close(fds[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(total == 10000 && ok);

    /* Reader gone: EPIPE, not death by SIGPIPE. */
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        io_sink_install_signal_cleanup();
        io_sink *s;
        if (io_sink_open(&s, "-", 0, NULL, 0, NULL) < 0)
            _exit(2);
        static uint8_t big[1 << 20];
        int rc = io_sink_write(s, big, sizeof(big));
        int text = strstr(io_sink_error(s), "Broken pipe") != NULL;
        io_sink_abort(s);
        _exit(rc == IO_ERR_PIPE && text ? 0 : 5);
    }
    close(fds[1]);
    close(fds[0]);
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* SIGTERM, SIGINT and SIGHUP remove live temporary files and kill. */
static void test_signals(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        int fds[2];
        CHECK(pipe(fds) == 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            /* a test run as a background job inherits SIGINT ignored, which
             * the clean-up keeps ignored (see the nohup case below) */
            signal(sigs[i], SIG_DFL);
            io_sink_install_signal_cleanup();
            io_sink *a, *b;
            if (io_sink_open(&a, in_tmp("sig_a.bin"), 0, NULL, 0, NULL) < 0 ||
                io_sink_open(&b, in_tmp("sig_b.bin"), 0, NULL, 0, NULL) < 0)
                _exit(2);
            io_sink *c;
            /* A committed file must survive the signal. */
            if (io_sink_open(&c, in_tmp("sig_c.bin"), 1, NULL, 0, NULL) < 0 ||
                io_sink_commit(c) < 0)
                _exit(3);
            io_sink_write(a, "x", 1);
            if (write(fds[1], "r", 1) != 1)
                _exit(4);
            for (;;)
                pause();
        }
        close(fds[1]);
        char c;
        CHECK(read(fds[0], &c, 1) == 1);
        close(fds[0]);
        CHECK(count_entries(tmpdir, ".sig_") == 2);
        kill(pid, sigs[i]);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i], "signal %d", sigs[i]);
        CHECK(count_entries(tmpdir, ".sig_") == 0);
        CHECK(count_entries(tmpdir, "sig_a") == 0);
        CHECK(access(in_tmp("sig_c.bin"), F_OK) == 0);
    }
    /* An ignored SIGHUP (nohup) stays ignored. */
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        io_sink_install_signal_cleanup();
        raise(SIGHUP);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Spools: unnamed files in the target's directory (nothing to see or
 * remove there, even while open), appended in order to the target; with
 * no regular target they go to $TMPDIR. */
static void test_spool(void)
{
    size_t n = (600u << 10) + 77; /* more than the sink's buffer */
    uint8_t *data = malloc(2 * n);
    fill(data, 2 * n);
    io_sink *out, *sp[2];
    io_status err;
    CHECK(io_sink_open(&out, in_tmp("joined.bin"), 1, NULL, 0, &err) == 0);
    int before = count_entries(tmpdir, "");
    for (int k = 0; k < 2; k++)
        CHECK(io_sink_open_spool(&sp[k], out, &err) == 0);
    CHECK(count_entries(tmpdir, "") == before);
    CHECK(io_sink_write(out, "head", 4) == 0);
    for (size_t i = 0; i < n; i += 1000)
        for (int k = 0; k < 2; k++)
            CHECK(io_sink_write(sp[k], data + k * n + i, n - i < 1000 ? n - i : 1000) == 0);
    for (int k = 0; k < 2; k++) {
        CHECK(io_sink_spool_copy(sp[k], out) == 0);
        io_sink_abort(sp[k]);
    }
    CHECK(io_sink_commit(out) == 0);
    uint8_t *want = malloc(2 * n + 4);
    memcpy(want, "head", 4);
    memcpy(want + 4, data, 2 * n);
    CHECK(file_equals(in_tmp("joined.bin"), want, 2 * n + 4));
    CHECK(count_entries(tmpdir, "") == before);

    /* Writing to stdout: the spool lives in $TMPDIR. */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/spooldir", tmpdir);
    CHECK(mkdir(sub, 0700) == 0);
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", sub, 1);
    CHECK(io_sink_open_spool(&sp[0], NULL, &err) == 0);
    CHECK(io_sink_write(sp[0], data, 10) == 0);
    io_sink_abort(sp[0]);
    setenv("TMPDIR", in_tmp("missing/dir"), 1);
    CHECK(io_sink_open_spool(&sp[0], NULL, &err) == IO_ERR_OPEN && strstr(err.text, "missing"));
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    CHECK(count_entries(sub, "") == 0);
    free(want);
    free(data);
}

/* Memory sinks: small and large writes (past the sink's buffer and the
 * first capacity) come back in order, and an empty one gives no bytes. */
static void test_mem(void)
{
    size_t n = (3u << 20) + 12345;
    uint8_t *data = malloc(n);
    fill(data, n);
    io_sink *s;
    CHECK(io_sink_open_mem(&s) == 0);
    CHECK(!io_sink_is_tty(s));
    size_t at = 0;
    for (size_t step = 1; at < n; step = step * 3 + 1) {
        size_t k = step < n - at ? step : n - at;
        CHECK(io_sink_write(s, data + at, k) == 0);
        at += k;
    }
    void *got;
    size_t len;
    CHECK(io_sink_mem_take(s, &got, &len) == 0);
    CHECK(len == n && got && memcmp(got, data, n) == 0);
    free(got);
    CHECK(io_sink_open_mem(&s) == 0);
    CHECK(io_sink_mem_take(s, &got, &len) == 0);
    CHECK(got == NULL && len == 0);
    CHECK(io_sink_open_mem(&s) == 0);
    CHECK(io_sink_write(s, data, n) == 0);
    io_sink_abort(s);
    free(data);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    fflush(stdout);
    RUN(test_atomic);
    RUN(test_long_name);
    RUN(test_mode);
    RUN(test_refusals);
    RUN(test_devices);
    RUN(test_stdout_and_pipe);
    RUN(test_signals);
    RUN(test_spool);
    RUN(test_mem);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
