/* fuzz_axis_state.c - fuzz harness for `gpubatch merge` over the state
 * files of `reduce --axis --shard` (state format 5: a text head, the
 * accumulators as hex lines, a CRC-32 check line).
 *
 * Once per process, in a temporary directory, the harness writes four small
 * inputs and the three shard states of one axis reduction of each (its
 * kinds of work: 16-row blocks of an axis 0, tiles of long runs, several
 * reduced axes of integers, short runs cut by the shards with --skipnan and
 * --ddof) and merges each set untampered for the reference text. The fuzz
 * input is one byte, then a state file's new contents. The byte picks the
 * set (its value mod 4), the shard replaced ((value / 4) mod 3) and whether
 * the replacement is merged with the set's other two or alone (value / 12
 * odd). The harness rewrites the new contents' last check line with the
 * CRC-32 of the text before it, so that the parser's checks of the
 * geometry and of the accumulators are reached; merge must not crash, and
 * where it exits 0 over the unchanged file its text must be the
 * reference's. The inputs' times are fixed, so the states are the same
 * bytes on every run and the seeds (the untampered states) merge. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cli/commands.h"
#include "cli/msg.h"
#include "fuzz_cli.h"

#define NSETS 4

/* A set: its input, how gen makes it, and the reduce options. */
typedef struct {
    const char *input;
    char *gen[12];
    char *opts[10];
} fuzz_set;

static fuzz_set sets[NSETS] = {
    {"a.npy", {"--shape", "30000x2", "--seed", "1", NULL},
     {"--axis", "0", "--op", "mean,std,min,max", NULL}},
    {"b.npy.gz", {"--shape", "2x40000", "--dtype", "float64", "--dist", "normal", "--seed", "2", NULL},
     {"--axis", "1", "--op", "sum,mean,min,max,argmin,argmax,sumsq,count,var,std", NULL}},
    {"c.npy", {"--shape", "40x2x800", "--dtype", "int32", "--low", "-1000", "--high", "1000", "--seed",
               "3", NULL},
     {"--axis", "0,2", "--op", "sum,sumsq,count,argmax", NULL}},
    {"d.npy", {"--shape", "4x16000", "--dist", "normal", "--seed", "4", NULL},
     {"--axis", "1", "--op", "var,min,mean", "--skipnan", "--ddof", "1", NULL}},
};

static char *ref_text[NSETS];            /* the untampered merges' text */
static size_t ref_len[NSETS];
static char *state[NSETS][3];            /* the untampered state files */
static size_t state_len[NSETS][3];

/* The name of set k's shard i state file. */
static char *state_name(int k, int i)
{
    static char name[16];
    snprintf(name, sizeof name, "s%d-%d", k, i);
    return at(name);
}

/* The number of entries of a NULL-ended argument list. */
static int count_args(char *const *v)
{
    int n = 0;
    while (v[n])
        n++;
    return n;
}

/* Merges set k's files (only shard `only` when it is >= 0) to out.txt. */
static int merge_set(int k, int only)
{
    char *argv[5] = {"merge"};
    int n = 1;
    for (int i = 0; i < 3; i++)
        if (only < 0 || i == only)
            argv[n++] = state_name(k, i);
    argv[n] = NULL;
    return run(cmd_merge, n, argv);
}

/* Writes set k's input and its three shard states, and merges them. */
static void make_set(int k)
{
    const fuzz_set *s = &sets[k];
    char *gen[16] = {"gen", "-q", "-f", "-o", (char *)s->input};
    int n = 5;
    for (int i = 0; s->gen[i]; i++)
        gen[n++] = s->gen[i];
    gen[n] = NULL;
    /* a fixed time, so that the states (and the seeds) are the same bytes on every run */
    struct timespec when[2] = {{1700000000, 0}, {1700000000, 0}};
    require(run(cmd_gen, n, gen) == 0 && utimensat(AT_FDCWD, s->input, when, 0) == 0);
    for (int i = 0; i < 3; i++) {
        char spec[8];
        snprintf(spec, sizeof spec, "%d/3", i);
        char *red[20] = {"reduce", "-q", "--backend", "cpu", "--shard", spec, "-o"};
        n = 7;
        red[n++] = state_name(k, i);
        for (int j = 0; s->opts[j]; j++)
            red[n++] = s->opts[j];
        red[n++] = (char *)s->input;
        red[n] = NULL;
        require(n == count_args(red) && run(cmd_reduce, n, red) == 0);
    }
    require(merge_set(k, -1) == 0);
    slurp(at("out.txt"), &ref_text[k], &ref_len[k]);
    require(ref_len[k] > 0);
    for (int i = 0; i < 3; i++)
        slurp(state_name(k, i), &state[k][i], &state_len[k][i]);
}

/* Removes the temporary directory's files and the directory. */
static void cleanup(void)
{
    static const char *const inputs[] = {"a.npy", "b.npy.gz", "c.npy", "d.npy", "out.txt"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        unlink(at(inputs[i]));
    for (int k = 0; k < NSETS; k++)
        for (int i = 0; i < 3; i++)
            unlink(state_name(k, i));
    rmdir(dir);
}

/* Makes the inputs, the state files and the reference merges. */
static void setup(void)
{
    char cwd[4096];
    enter_fresh_dir("fuzz_axis_state", cwd, sizeof cwd);
    for (int k = 0; k < NSETS; k++)
        make_set(k);
    require(chdir(cwd) == 0);
    cleanup();
}

/* Rewrites the last "check XXXXXXXX" line of text with the CRC-32 of the
 * text before it (the writer's rule), so that edits pass the check. */
static void fix_check(char *text, size_t len)
{
    for (size_t i = len; i-- > 0;) {
        if ((i == 0 || text[i - 1] == '\n') && len - i >= 14 && !memcmp(text + i, "check ", 6)) {
            char hex[9];
            snprintf(hex, sizeof hex, "%08lx", crc32(0, (const Bytef *)text, (uInt)i));
            memcpy(text + i + 6, hex, 8);
            return;
        }
    }
}

/* Replaces one state file of a set with the input and merges. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup_once(setup);
    if (size < 1)
        return 0;
    int k = data[0] % NSETS, which = data[0] / NSETS % 3, alone = data[0] / 12 % 2;
    size_t len = size - 1;
    char *text = malloc(len + 1);
    require(text != NULL);
    memcpy(text, data + 1, len);
    fix_check(text, len);
    fresh_dir("fuzz_axis_state");
    for (int i = 0; i < 3; i++)
        spill(state_name(k, i), i == which ? text : state[k][i],
              i == which ? len : state_len[k][i]);
    int same = len == state_len[k][which] && !memcmp(text, state[k][which], len);
    if (merge_set(k, alone ? which : -1) == 0 && same && !alone)
        require_file(at("out.txt"), ref_text[k], ref_len[k]);
    free(text);
    cleanup();
    return 0;
}
