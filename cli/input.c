/* input.c - FILE arguments as inputs: files, standard input and the
 * members of .npz archives. */
#include "input.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/sink.h"
#include "msg.h"

/* Whether path is a regular file holding a zip archive: by its first
 * bytes, or by an .npz name (so that a damaged archive is reported as one). */
static int input_is_archive(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    size_t n = strlen(path);
    if (n >= 4 && !strcmp(path + n - 4, ".npz"))
        return 1;
    uint8_t magic[4];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return npz_is_magic(magic, got);
}

/* Splits arg into a file and a member key: an existing file (or "-") is
 * itself, else the first colon with an archive on its left ends the file.
 * Returns the file's length in arg; *key is NULL when arg names no member. */
static size_t input_split(const char *arg, const char **key)
{
    struct stat st;
    *key = NULL;
    if (!strcmp(arg, "-") || stat(arg, &st) == 0)
        return strlen(arg);
    for (const char *c = strchr(arg, ':'); c; c = strchr(c + 1, ':')) {
        char *file = strndup(arg, (size_t)(c - arg));
        int archive = file && input_is_archive(file);
        free(file);
        if (archive) {
            *key = c + 1;
            return (size_t)(c - arg);
        }
    }
    return strlen(arg);
}

/* Resolves arg into its inputs (see input.h). */
int input_begin(input_list *l, const char *arg)
{
    io_status st;
    const char *key;
    memset(l, 0, sizeof *l);
    l->arg = arg;
    size_t len = input_split(arg, &key);
    if (!(l->path = strndup(arg, len)))
        return msg_error("out of memory"), 1;
    if (!key && (!strcmp(arg, "-") || !input_is_archive(l->path)))
        return 0;
    if (npz_open(&l->npz, l->path, &st) < 0)
        return msg_status(l->path, &st);
    l->end = npz_count(l->npz);
    if (key) {
        const npz_member *m = npz_find(l->npz, key);
        if (!m) {
            msg_error("%s: no member %s", l->path, key);
            return 1;
        }
        l->next = (size_t)(m - npz_member_at(l->npz, 0));
        l->end = l->next + 1;
    } else if (l->end == 0) {
        msg_error("%s: the archive holds no arrays", l->path);
        return 1;
    }
    size_t longest = 0;
    for (size_t i = l->next; i < l->end; i++)
        if (strlen(npz_member_at(l->npz, i)->key) > longest)
            longest = strlen(npz_member_at(l->npz, i)->key);
    if (!(l->name = malloc(len + longest + 2)))
        return msg_error("out of memory"), 1;
    return 0;
}

/* Inputs not handed out yet. */
size_t input_count(const input_list *l)
{
    return l->npz ? l->end - l->next : !l->done;
}

/* The next input (see input.h). */
int input_next(input_list *l, input_item *it)
{
    if (!l->npz) {
        if (l->done)
            return 0;
        l->done = 1;
        *it = (input_item){l->arg, l->path, NULL};
        return 1;
    }
    if (l->next >= l->end)
        return 0;
    const npz_member *m = npz_member_at(l->npz, l->next++);
    sprintf(l->name, "%s:%s", l->path, m->key); /* sized for the longest key */
    *it = (input_item){l->name, l->path, &m->data};
    return 1;
}

/* Frees the archive and the names. */
void input_end(input_list *l)
{
    npz_close(l->npz);
    free(l->path);
    free(l->name);
    memset(l, 0, sizeof *l);
}

/* The one input of a command that reads one, opened (see input.h). */
int input_one(input_list *l, const char *arg, input_item *it, io_reader **r)
{
    io_status st;
    if (input_begin(l, arg))
        goto out_end;
    size_t n = input_count(l);
    if (n != 1) {
        msg_error("%s: holds %zu arrays and this command reads one: name it as %s:KEY "
                  "(the first is %s:%s)",
                  l->path, n, l->path, l->path, npz_member_at(l->npz, l->next)->key);
        goto out_end;
    }
    input_next(l, it);
    if (r && input_open(it, r, &st) < 0) {
        msg_status(it->name, &st);
        goto out_end;
    }
    return 0;
out_end:
    input_end(l);
    return 1;
}

/* The seek index --index names (NULL: the one found beside a gzip file),
 * and whether --no-index turned the finding off. */
static const char *input_index_path;
static int input_index_off;

/* Sets the seek index of the inputs (see input.h). */
void input_set_index(const char *path, int off)
{
    input_index_path = path;
    input_index_off = off;
}

/* Reads a gzip file through its seek index: the one --index names, else
 * FILE.gzidx beside it when there is one. 0 or a negative io_error. */
static int input_attach_index(const input_item *it, io_reader *r, io_status *st)
{
    char beside[4096];
    const char *path = input_index_path;
    struct stat sb;
    if (!path) {
        if (input_index_off || !io_reader_compressed(r) || !strcmp(it->path, "-") ||
            (size_t)snprintf(beside, sizeof beside, "%s%s", it->path, GZINDEX_SUFFIX) >=
                sizeof beside ||
            stat(beside, &sb) != 0)
            return 0;
        path = beside;
    }
    gzindex *x;
    int rc = gzindex_load(&x, path, st);
    return rc < 0 ? rc : io_reader_set_index(r, x, st);
}

/* Opens a file or an archive member. */
int input_open(const input_item *it, io_reader **r, io_status *st)
{
    if (it->member && input_index_path)
        return io_fail(st, IO_ERR_FORMAT, "the seek index %s is for a gzip file, and this is a "
                       "zip archive's member", input_index_path);
    if (it->member)
        return io_reader_open_zip_member(r, it->path, it->member, st);
    int rc = io_reader_open(r, it->path, st);
    if (rc == 0 && (rc = input_attach_index(it, *r, st)) < 0) {
        io_reader_close(*r);
        *r = NULL;
    }
    return rc;
}

/* Checks a stored archive member's CRC-32 before a whole read (see
 * input.h): 0, or 1 after the error. */
int input_check(const input_item *it)
{
    io_status st;
    if (it->member && npz_check_stored(it->path, it->member, &st) < 0)
        return msg_status(it->name, &st);
    return 0;
}

/* The file an argument names (see input.h). */
const char *input_file(const char *arg, char *buf, size_t len)
{
    const char *key;
    size_t n = input_split(arg, &key);
    if (!key || n >= len)
        return arg;
    memcpy(buf, arg, n);
    buf[n] = 0;
    return buf;
}

/* Refuses a run whose standard output is the file one of args names (see
 * input.h): 0, or 1 after the error. */
int input_stdout_guard(const char *const *args, int n)
{
    char buf[4096];
    for (int i = 0; i < n; i++) {
        struct stat st;
        const char *file = input_file(args[i], buf, sizeof buf);
        if (strcmp(file, "-") ? stat(file, &st) != 0 : fstat(STDIN_FILENO, &st) != 0)
            continue;
        io_file_id id = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
        if (io_stdout_is_input(&id, 1)) {
            msg_error("(stdout): would overwrite an input (%s)", args[i]);
            return 1;
        }
    }
    return 0;
}
