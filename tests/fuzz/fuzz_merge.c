/* fuzz_merge.c - fuzz harness for `gpubatch merge` over state and part
 * files.
 *
 * Once per process, in a temporary directory, the harness writes a small
 * input and the files of its shards (kept in memory; each run writes them
 * to a new directory, removed after it): three reduce states (float32, every
 * operation) and three compressed quadratic parts, and merges each set
 * untampered for the reference results. The fuzz input is one byte that
 * picks the file to replace (its low bits: which of the six) and then that
 * file's new contents; merge then runs over the set with the replacement.
 * It must not crash, and where it exits 0 its result (the printed text, or
 * the written file) must equal the untampered one: a damaged file is
 * refused or changes nothing. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/msg.h"
#include "fuzz_cli.h"

#define NFILES 6 /* states 0..2, then parts 0..2 */

static char *ref_text, *ref_part; /* the untampered merges */
static size_t ref_text_len, ref_part_len;
static char *shard[NFILES];        /* the untampered shard files */
static size_t shard_len[NFILES];
static const char *const shard_name[NFILES] = {"s-0", "s-1", "s-2", "p-0", "p-1", "p-2"};

/* Merges the current files: states (printing) or parts (to merged.npy.gz). */
static int merge_set(int parts)
{
    char *states[] = {"merge", at("s-0"), at("s-1"), at("s-2"), NULL};
    char *partv[] = {"merge", "-f", "-o", at("merged.npy.gz"), at("p-0"), at("p-1"), at("p-2"), NULL};
    unlink(at("merged.npy.gz"));
    return parts ? run(cmd_merge, 7, partv) : run(cmd_merge, 4, states);
}

/* Removes the temporary directory and what the harness put there. */
static void cleanup(void)
{
    static const char *const names[] = {"in.npy.gz", "q.npy.gz", "s-0", "s-1", "s-2", "p-0",
                                        "p-1", "p-2", "out.txt", "merged.npy.gz"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(at(names[i]));
    rmdir(dir);
}

/* Makes the input, the shard files and the reference merges. */
static void setup(void)
{
    char cwd[4096];
    enter_fresh_dir("fuzz_merge", cwd, sizeof cwd);
    char *gen[] = {"gen", "--shape", "70000", "--dist", "normal", "--seed", "5", "-o", "in.npy.gz", NULL};
    char *genq[] = {"gen", "--quadratic", "10000", "--seed", "5", "-o", "q.npy.gz", NULL};
    require(run(cmd_gen, 9, gen) == 0 && run(cmd_gen, 7, genq) == 0);
    for (int i = 0; i < 3; i++) {
        char spec[8], st[8], pt[8];
        snprintf(spec, sizeof spec, "%d/3", i);
        snprintf(st, sizeof st, "s-%d", i);
        snprintf(pt, sizeof pt, "p-%d", i);
        char *red[] = {"reduce", "-q", "--backend", "cpu", "--op",
                       "sum,mean,min,max,argmin,argmax,sumsq,count", "--shard", spec, "-o", st,
                       "in.npy.gz", NULL};
        char *quad[] = {"quadratic", "-q", "--backend", "cpu", "--shard", spec, "-o", pt,
                        "q.npy.gz", NULL};
        require(run(cmd_reduce, 11, red) == 0 && run(cmd_quadratic, 9, quad) == 0);
    }
    require(merge_set(0) == 0);
    slurp(at("out.txt"), &ref_text, &ref_text_len);
    require(merge_set(1) == 0);
    slurp(at("merged.npy.gz"), &ref_part, &ref_part_len);
    require(ref_text_len > 0 && ref_part_len > 0 && chdir(cwd) == 0);
    for (int i = 0; i < NFILES; i++)
        slurp(at(shard_name[i]), &shard[i], &shard_len[i]);
    cleanup();
}

/* Replaces one shard file with the input and merges the set. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup_once(setup);
    if (size < 1)
        return 0;
    int which = data[0] % NFILES, parts = which >= 3;
    fresh_dir("fuzz_merge");
    for (int i = 0; i < NFILES; i++)
        spill(at(shard_name[i]), i == which ? data + 1 : (const uint8_t *)shard[i],
              i == which ? size - 1 : shard_len[i]);
    if (merge_set(parts) == 0)
        require_file(at(parts ? "merged.npy.gz" : "out.txt"), parts ? ref_part : ref_text,
                     parts ? ref_part_len : ref_text_len);
    cleanup();
    return 0;
}
