/* sink.c - byte sinks: atomic regular files, or direct stdout/devices/FIFOs,
 * or a growing block of memory.
 *
 * A regular target is written to ".NAME.XXXXXX" in the same directory
 * (created with O_EXCL and mode 0666, so the umask applies as for any new
 * file) and renamed over NAME on commit. Live temporary paths are kept in a
 * fixed table that the signal handler can walk without locks or allocation:
 * it only calls unlink(), sigaction() and raise(). */
#include "sink.h"

#include "crc.h"
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "reader.h"

#define SINK_BUF (256u << 10)
#define MAX_TEMPS 16
#define WRITE_STEP ((size_t)1 << 30)
#define MEM_FIRST ((size_t)1 << 20) /* first capacity of a memory sink */

struct io_sink {
    int fd;
    int close_fd;   /* not stdout */
    int slot;       /* index in the temp table, or -1 */
    char *target;   /* final path (atomic mode) */
    char *tmp;      /* temporary path, NULL when writing directly */
    int force;
    uint8_t *buf;
    size_t fill;
    char *spool_dir; /* a spool: the directory of its unnamed file (for messages) */
    int in_mem;     /* a memory sink: bytes go to mem, not fd */
    int crc_on;     /* io_sink_crc_start was called */
    uint32_t crc;   /* CRC-32 of the bytes written since */
    uint64_t crc_len; /* and their number */
    uint8_t *mem;
    size_t mem_len, mem_cap;
    io_status st; /* the first failure (sticky) */
};

/* Temporary files the signal handler removes; a slot is live while its
 * flag is set, and its path is never changed while live. */
static char temp_paths[MAX_TEMPS][PATH_MAX];
static volatile sig_atomic_t temp_live[MAX_TEMPS];
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

/* The text of the last failed commit on this thread (the sink is gone). */
static _Thread_local char commit_msg[IO_STATUS_TEXT];

/* AddressSanitizer reports faults from its own handlers. */
#if defined(__SANITIZE_ADDRESS__)
#define SINK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SINK_SANITIZED 1
#endif
#endif

/* The signals whose handler removes the temporary files (filled once by
 * io_sink_install_signal_cleanup; blocked while a commit renames). */
static sigset_t cleanup_set;

/* Records the first error of the handle (sticky) and returns the one in force. */
static int set_error(io_sink *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = io_keepv(&s->st, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* Puts path in a free slot of the temp table; returns the slot or -1 when
 * the table is full (the file is then not removed on a signal). */
static int temp_register(const char *path)
{
    int slot = -1;
    if (strlen(path) >= PATH_MAX)
        return -1;
    pthread_mutex_lock(&temp_lock);
    for (int i = 0; i < MAX_TEMPS; i++) {
        if (!temp_live[i]) {
            strcpy(temp_paths[i], path);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            temp_live[i] = 1;
            slot = i;
            break;
        }
    }
    pthread_mutex_unlock(&temp_lock);
    return slot;
}

/* Frees a slot of the temp table. */
static void temp_unregister(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&temp_lock);
    temp_live[slot] = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&temp_lock);
}

/* Removes every live temporary file (see sink.h). */
void io_sink_remove_temps(void)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temp_live[i])
            unlink(temp_paths[i]);
}

/* Removes every live temporary file, then dies of the same signal. */
static void cleanup_handler(int sig)
{
    io_sink_remove_temps();
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig); /* delivered when the handler returns */
}

/* Nonzero for a signal whose default action ends the process and that the
 * cleanup handler takes: every one but those that cannot be caught, those
 * ignored here (SIGPIPE, SIGXFSZ: a write then fails with EPIPE or EFBIG),
 * those whose default is to ignore or stop, and, in a sanitizer build, the
 * faults the sanitizer reports itself. */
static int cleanup_wanted(int sig)
{
    switch (sig) {
    case SIGKILL: case SIGSTOP: case SIGPIPE: case SIGXFSZ: case SIGCHLD: case SIGCONT:
    case SIGURG: case SIGWINCH: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return 0;
#ifdef SINK_SANITIZED
    case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGABRT: case SIGTRAP:
        return 0;
#endif
    default:
        return 1;
    }
}

/* Installs the cleanup handler for every signal that would end the process
 * (leaving ignored signals ignored, as under nohup), and ignores SIGPIPE and
 * SIGXFSZ so that a closed pipe or a file-size limit is a write error. */
void io_sink_install_signal_cleanup(void)
{
    struct sigaction sa, old;
    sigemptyset(&cleanup_set);
    for (int sig = 1; sig < NSIG; sig++)
        if (cleanup_wanted(sig) && sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaddset(&cleanup_set, sig);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = cleanup_handler;
    sa.sa_mask = cleanup_set;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&cleanup_set, sig) == 1 && sigaction(sig, &sa, NULL) < 0)
            sigdelset(&cleanup_set, sig); /* reserved by the C library */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
}

/* The longest file name the directory of target takes (NAME_MAX where the
 * file system does not say). */
static size_t name_max_of(const char *target, size_t dirlen)
{
    char dir[PATH_MAX];
    if (dirlen >= sizeof(dir))
        return NAME_MAX;
    if (dirlen)
        snprintf(dir, sizeof(dir), "%.*s", (int)dirlen, target);
    else
        snprintf(dir, sizeof(dir), ".");
    long m = pathconf(dir, _PC_NAME_MAX);
    return m > 8 ? (size_t)m : NAME_MAX;
}

/* Creates ".BASE.XXXXXX" next to target with O_EXCL, BASE cut so that the
 * name fits the file system's limit; returns the fd and sets *tmp_out, or
 * returns -errno. */
static int create_temp(const char *target, char **tmp_out)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long counter;
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dirlen;
    size_t baselen = strlen(base), name_max = name_max_of(target, dirlen);
    if (baselen + 8 > name_max)
        baselen = name_max - 8;
    size_t len = dirlen + 1 + baselen + 8;
    char *tmp = malloc(len);
    if (!tmp)
        return -ENOMEM;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                    ((uint64_t)getpid() << 16) ^
                    (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            suffix[i] = digits[seed % (sizeof(digits) - 1)];
        }
        suffix[6] = '\0';
        snprintf(tmp, len, "%.*s.%.*s.%s", (int)dirlen, target, (int)baselen, base, suffix);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0) {
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST) {
            int e = errno;
            free(tmp);
            return -e;
        }
    }
    free(tmp);
    return -EEXIST;
}

/* Gives the temporary file fd the permission bits and group of the file st
 * it replaces (and its owner, when run as root), never more: where the
 * group cannot be kept, the new group gets no more than everyone else had.
 * 0 or -errno. */
static int keep_mode(int fd, const struct stat *st)
{
    mode_t mode = st->st_mode & 0777;
    if (geteuid() == 0) {
        if (fchown(fd, st->st_uid, st->st_gid) < 0)
            mode &= 0700;
    } else if (fchown(fd, (uid_t)-1, st->st_gid) < 0) {
        mode = (mode & 0707) | (mode & 0070 & (mode << 3));
    }
    return fchmod(fd, mode) < 0 ? -errno : 0;
}

/* Nonzero when st is one of the inputs. */
static int is_input(const struct stat *st, const io_file_id *inputs, size_t ninputs)
{
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i].dev == (uint64_t)st->st_dev && inputs[i].ino == (uint64_t)st->st_ino)
            return 1;
    return 0;
}

/* The bytes still free to the sink's file (see sink.h). */
int io_sink_free_space(const io_sink *s, uint64_t *bytes)
{
    struct stat sb;
    struct statvfs vb;
    if (s->in_mem || s->fd < 0 || fstat(s->fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
        fstatvfs(s->fd, &vb) < 0)
        return -1;
    *bytes = (uint64_t)vb.f_bavail * (uint64_t)vb.f_frsize;
    return 0;
}

/* Whether standard output is one of the inputs (see sink.h). */
int io_stdout_is_input(const io_file_id *inputs, size_t ninputs)
{
    struct stat sb;
    if (fstat(STDOUT_FILENO, &sb) < 0 || !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)))
        return 0;
    return is_input(&sb, inputs, ninputs);
}

/* Opens the sink for path as described in sink.h. */
int io_sink_open(io_sink **out, const char *path, int force, const io_file_id *inputs,
                 size_t ninputs, io_status *st)
{
    int rc;
    struct stat sb;
    *out = NULL;
    io_clear(st);
    io_sink *s = calloc(1, sizeof(*s));
    if (!s)
        return io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
    s->fd = -1;
    s->slot = -1;
    s->force = force;
    s->buf = malloc(SINK_BUF);
    if (!s->buf) {
        rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        goto out_free_sink;
    }
    if (!*path) {
        rc = io_fail(st, IO_ERR_OPEN, "%s", strerror(ENOENT));
        goto out_free_buf;
    }
    if (!strcmp(path, "-")) {
        if (io_stdout_is_input(inputs, ninputs)) {
            rc = io_fail(st, IO_ERR_SAME, "%s", "would overwrite an input");
            goto out_free_buf;
        }
        s->fd = STDOUT_FILENO;
        *out = s;
        return 0;
    }
    int exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT) {
        rc = io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
        goto out_free_buf;
    }
    struct stat lsb;
    if (!exists && !force && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
        /* the commit would replace the link (as mv does), only with force */
        rc = io_fail(st, IO_ERR_EXISTS, "%s",
                     "is a symbolic link to a missing file (use -f to replace the link)");
        goto out_free_buf;
    }
    if (exists && S_ISDIR(sb.st_mode)) {
        rc = io_fail(st, IO_ERR_OPEN, "%s", strerror(EISDIR));
        goto out_free_buf;
    }
    if (exists && is_input(&sb, inputs, ninputs) && !S_ISCHR(sb.st_mode)) {
        rc = io_fail(st, IO_ERR_SAME, "%s", "would overwrite an input");
        goto out_free_buf;
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        /* Devices, FIFOs and sockets are written in place; a block device
         * (a disk) only with force. */
        if (S_ISBLK(sb.st_mode) && !force) {
            rc = io_fail(st, IO_ERR_EXISTS, "%s", "already exists (use -f to overwrite)");
            goto out_free_buf;
        }
        s->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (s->fd < 0) {
            rc = io_fail(st, IO_ERR_OPEN, "%s", strerror(errno));
            goto out_free_buf;
        }
        s->close_fd = 1;
        *out = s;
        return 0;
    }
    if (exists && !force) {
        rc = io_fail(st, IO_ERR_EXISTS, "%s", "already exists (use -f to overwrite)");
        goto out_free_buf;
    }
    s->target = strdup(path);
    if (!s->target) {
        rc = io_fail(st, IO_ERR_NOMEM, "%s", "out of memory");
        goto out_free_buf;
    }
    s->fd = create_temp(path, &s->tmp);
    if (s->fd < 0) {
        rc = io_fail(st, s->fd == -ENOMEM ? IO_ERR_NOMEM : IO_ERR_OPEN,
                     "cannot create a temporary file: %s", strerror(-s->fd));
        goto out_free_target;
    }
    s->close_fd = 1;
    s->slot = temp_register(s->tmp);
    if (exists && (rc = keep_mode(s->fd, &sb)) < 0) {
        io_sink_abort(s);
        return io_fail(st, IO_ERR_OPEN, "cannot set the mode of a temporary file: %s",
                       strerror(-rc));
    }
    *out = s;
    return 0;

out_free_target:
    free(s->target);
out_free_buf:
    free(s->buf);
out_free_sink:
    free(s);
    return rc;
}

/* Appends n bytes to a memory sink, doubling its capacity as needed. */
static int mem_append(io_sink *s, const uint8_t *p, size_t n)
{
    if (n > s->mem_cap - s->mem_len) {
        size_t cap = s->mem_cap ? s->mem_cap : MEM_FIRST;
        while (cap - s->mem_len < n && cap <= SIZE_MAX / 2)
            cap *= 2;
        uint8_t *mem = cap - s->mem_len >= n ? realloc(s->mem, cap) : NULL;
        if (!mem)
            return set_error(s, IO_ERR_NOMEM, "%s", "out of memory");
        s->mem = mem;
        s->mem_cap = cap;
    }
    memcpy(s->mem + s->mem_len, p, n);
    s->mem_len += n;
    return 0;
}

/* Writes all n bytes to the descriptor (over short writes and EINTR), or to
 * the memory of a memory sink. */
static int write_all(io_sink *s, const uint8_t *p, size_t n)
{
    if (s->in_mem)
        return mem_append(s, p, n);
    while (n) {
        ssize_t k = write(s->fd, p, n < WRITE_STEP ? n : WRITE_STEP);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE)
                return set_error(s, IO_ERR_PIPE, "%s", strerror(EPIPE));
            if (s->spool_dir)
                return set_error(s, IO_ERR_WRITE, "%s: writing a temporary file: %s",
                                 s->spool_dir, strerror(errno));
            return set_error(s, IO_ERR_WRITE, "%s", strerror(errno));
        }
        if (k == 0)
            return set_error(s, IO_ERR_WRITE, "%s", "write made no progress");
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Writes out the buffered bytes. */
static int flush_buf(io_sink *s)
{
    if (!s->fill)
        return 0;
    int rc = write_all(s, s->buf, s->fill);
    s->fill = 0;
    return rc;
}

/* Buffers small writes; large ones go straight to the descriptor. */
int io_sink_write(io_sink *s, const void *buf, size_t n)
{
    if (s->st.code)
        return s->st.code;
    if (s->crc_on) {
        s->crc = crc_update(s->crc, buf, n);
        s->crc_len += n;
    }
    if (s->fill + n <= SINK_BUF) {
        memcpy(s->buf + s->fill, buf, n);
        s->fill += n;
        return 0;
    }
    int rc = flush_buf(s);
    if (rc < 0)
        return rc;
    if (n >= SINK_BUF)
        return write_all(s, buf, n);
    memcpy(s->buf, buf, n);
    s->fill = n;
    return 0;
}

/* Starts the CRC-32 of the bytes written from here on. */
void io_sink_crc_start(io_sink *s)
{
    s->crc_on = 1;
    s->crc = 0;
    s->crc_len = 0;
}

/* The number of bytes written since io_sink_crc_start. */
uint64_t io_sink_crc_len(const io_sink *s)
{
    return s->crc_len;
}

/* The CRC-32 of the bytes written since io_sink_crc_start. */
uint32_t io_sink_crc(const io_sink *s)
{
    return s->crc;
}

/* Nonzero when the descriptor is a terminal. */
int io_sink_is_tty(const io_sink *s)
{
    return isatty(s->fd);
}

/* Releases the sink's memory (not its file). */
static void sink_free(io_sink *s)
{
    free(s->tmp);
    free(s->target);
    free(s->spool_dir);
    free(s->buf);
    free(s->mem);
    free(s);
}

/* Renames the temporary file over the target; refuses a target that
 * appeared since open unless force. */
static int rename_into_place(io_sink *s)
{
    int r;
    if (!s->force) {
        r = renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->target, RENAME_NOREPLACE);
        if (r < 0 && errno == EEXIST)
            return set_error(s, IO_ERR_EXISTS, "%s", "already exists (use -f to overwrite)");
        if (r == 0 || (errno != EINVAL && errno != ENOSYS))
            return r < 0 ? set_error(s, IO_ERR_WRITE, "cannot rename: %s", strerror(errno)) : 0;
    }
    r = rename(s->tmp, s->target);
    if (r < 0)
        return set_error(s, IO_ERR_WRITE, "cannot rename: %s", strerror(errno));
    return 0;
}

/* Flushes, closes and (for a regular target) renames into place; frees. */
int io_sink_commit(io_sink *s)
{
    commit_msg[0] = '\0';
    int rc = s->st.code ? s->st.code : flush_buf(s);
    if (s->close_fd) {
        if (close(s->fd) < 0 && rc == 0)
            rc = set_error(s, IO_ERR_WRITE, "%s", strerror(errno));
        s->close_fd = 0;
    }
    if (s->tmp) {
        if (rc == 0) {
            /* Signals stay blocked while the name changes, so the handler
             * never removes a file that is already the committed target. */
            sigset_t old;
            pthread_sigmask(SIG_BLOCK, &cleanup_set, &old);
            rc = rename_into_place(s);
            temp_unregister(s->slot);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (rc < 0) {
            unlink(s->tmp);
            temp_unregister(s->slot);
        }
    }
    if (rc < 0)
        snprintf(commit_msg, sizeof(commit_msg), "%s", s->st.text);
    sink_free(s);
    return rc;
}

/* The reason the last io_sink_commit() on this thread failed. */
const char *io_sink_commit_error(void)
{
    return commit_msg;
}

/* Closes, removes the temporary file and frees. */
void io_sink_abort(io_sink *s)
{
    if (!s)
        return;
    if (s->close_fd)
        close(s->fd);
    if (s->tmp) {
        unlink(s->tmp);
        temp_unregister(s->slot);
    }
    sink_free(s);
}

/* The directory a spool next to near goes in: near's target's directory,
 * else $TMPDIR, else /tmp; written into dir (PATH_MAX bytes). */
static void spool_dir(const io_sink *near, char *dir)
{
    const char *slash = near && near->target ? strrchr(near->target, '/') : NULL;
    if (near && near->target && !slash)
        snprintf(dir, PATH_MAX, ".");
    else if (slash)
        snprintf(dir, PATH_MAX, "%.*s", slash == near->target ? 1 : (int)(slash - near->target),
                 near->target);
    else if (getenv("TMPDIR") && *getenv("TMPDIR"))
        snprintf(dir, PATH_MAX, "%s", getenv("TMPDIR"));
    else
        snprintf(dir, PATH_MAX, "/tmp");
}

/* Opens an unnamed temporary file in the directory of near's target (see
 * sink.h): O_TMPFILE, or a named file removed at once where the file
 * system lacks it. */
int io_sink_open_spool(io_sink **out, const io_sink *near, io_status *st)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    *out = NULL;
    io_clear(st);
    io_sink *s = calloc(1, sizeof(*s));
    if (!s || !(s->buf = malloc(SINK_BUF))) {
        free(s);
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    }
    s->slot = -1;
    s->close_fd = 1;
    spool_dir(near, dir);
    s->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->fd < 0 && errno != ENOENT && errno != EACCES && errno != EROFS) {
        snprintf(path, sizeof path, "%s/.gpubatch-part.XXXXXX", dir);
        s->fd = mkostemp(path, O_CLOEXEC);
        if (s->fd >= 0)
            unlink(path);
    }
    if (s->fd < 0) {
        io_fail(st, IO_ERR_OPEN, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        sink_free(s);
        return IO_ERR_OPEN;
    }
    if (!(s->spool_dir = strdup(dir))) {
        io_sink_abort(s);
        return io_fail(st, IO_ERR_NOMEM, "out of memory");
    }
    *out = s;
    return 0;
}

/* Appends everything written to the spool to dst, through the spool's
 * buffer. */
int io_sink_spool_copy(io_sink *spool, io_sink *dst)
{
    int rc = spool->st.code ? spool->st.code : flush_buf(spool);
    for (off_t off = 0; rc == 0;) {
        ssize_t k = pread(spool->fd, spool->buf, SINK_BUF, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return set_error(spool, IO_ERR_READ, "%s: reading a temporary file: %s",
                             spool->spool_dir ? spool->spool_dir : "", strerror(errno));
        if (k == 0)
            break;
        rc = io_sink_write(dst, spool->buf, (size_t)k);
        off += k;
    }
    return rc;
}

/* Opens a memory sink (see sink.h). */
int io_sink_open_mem(io_sink **out)
{
    io_sink *s = calloc(1, sizeof(*s));
    if (!s || !(s->buf = malloc(SINK_BUF))) {
        free(s);
        *out = NULL;
        return IO_ERR_NOMEM;
    }
    s->fd = -1;
    s->slot = -1;
    s->in_mem = 1;
    *out = s;
    return 0;
}

/* Flushes a memory sink and hands its bytes over (see sink.h). */
int io_sink_mem_take(io_sink *s, void **data, size_t *len)
{
    int rc = s->st.code ? s->st.code : flush_buf(s);
    *data = rc == 0 ? s->mem : NULL;
    *len = rc == 0 ? s->mem_len : 0;
    if (rc == 0)
        s->mem = NULL;
    sink_free(s);
    return rc;
}

/* The sticky error's text, or "". */
const char *io_sink_error(const io_sink *s)
{
    return s->st.code ? s->st.text : "";
}
