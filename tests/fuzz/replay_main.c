/* replay_main.c - runs a fuzz harness over saved inputs without libFuzzer.
 *
 * Each argument is a file or a directory of files; every input runs in a
 * child process so that one crashing input is counted and named and the
 * rest still run. Ends with "replayed N inputs" and "N passed, N failed". */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int passed, failed;

/* Reads a whole file; returns NULL on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Runs one input in a child and counts the outcome. */
static void run_file(const char *path)
{
    size_t len;
    uint8_t *data = slurp(path, &len);
    if (!data) {
        fprintf(stderr, "FAIL %s: cannot read\n", path);
        failed++;
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        LLVMFuzzerTestOneInput(data, len);
        free(data);
        _exit(0);
    }
    free(data);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        fprintf(stderr, "FAIL %s: cannot run\n", path);
        failed++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        passed++;
    } else {
        fprintf(stderr, "FAIL %s: %s %d\n", path, WIFSIGNALED(status) ? "signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        failed++;
    }
}

/* Orders directory entries by name so runs are repeatable. */
static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file in dir (not recursive), in name order. */
static void run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "FAIL %s: cannot open directory\n", dir);
        failed++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof(*names));
            if (!grown)
                break;
            names = grown;
        }
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!names[n])
            break;
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            run_file(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            run_dir(argv[i]);
        else
            run_file(argv[i]);
    }
    printf("replayed %d inputs\n", passed + failed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
