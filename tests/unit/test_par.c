/* test_par.c - the thread pool behind par_run(): every item runs exactly
 * once for every item count, with several threads calling at once, and with
 * items that call par_run() themselves; items run on more than one thread. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "io/par.h"

typedef struct {
    int runs;          /* times the item ran */
    pthread_t thread;  /* the thread that ran it */
    int nested;        /* run a nested par_run of this many items */
    int inner[8];      /* the nested items' run counts */
    long spin;         /* busy-work iterations, so that workers join in */
} par_item;

/* An inner item: counts its run. */
static void *inner_item(void *arg)
{
    (*(int *)arg)++;
    return NULL;
}

/* An item: counts its run, notes its thread, and maybe fans out again. */
static void *count_item(void *arg)
{
    par_item *it = arg;
    it->thread = pthread_self();
    for (volatile long k = 0; k < it->spin; k++)
        ;
    if (it->nested)
        par_run(inner_item, it->inner, sizeof it->inner[0], (size_t)it->nested);
    it->runs++; /* last: an item counts once it has finished */
    return NULL;
}

/* Runs n items (nested > 0: each with a nested call; spin: busy work per
 * item); *bad gets the number of items that did not run exactly once.
 * Returns the number of distinct threads that ran them. */
static int run_items(size_t n, int nested, long spin, int *bad_out)
{
    static _Thread_local par_item items[PAR_MAX];
    memset(items, 0, sizeof items);
    size_t m = n < PAR_MAX ? n : PAR_MAX; /* par_run runs at most PAR_MAX */
    for (size_t i = 0; i < m; i++) {
        items[i].nested = nested;
        items[i].spin = spin;
    }
    par_run(count_item, items, sizeof items[0], n);
    int bad = 0, threads = 0;
    for (size_t i = 0; i < m; i++) {
        bad += items[i].runs != 1;
        for (int k = 0; k < nested; k++)
            bad += items[i].inner[k] != 1;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = pthread_equal(items[j].thread, items[i].thread);
        threads += !seen;
    }
    for (size_t i = m; i < PAR_MAX; i++)
        bad += items[i].runs != 0;
    *bad_out = bad;
    return threads;
}

/* Runs n items and checks that each ran once; returns the threads seen. */
static int run_and_check(size_t n, int nested, long spin)
{
    int bad;
    int threads = run_items(n, nested, spin, &bad);
    CHECKF(bad == 0, "%d items of %zu (nested %d) ran a wrong number of times", bad, n, nested);
    return threads;
}

typedef struct {
    unsigned seed;
    int bad; /* items that ran a wrong number of times, over every call */
} caller;

/* A thread that calls par_run many times with varying counts (the checks
 * are counted after the join: the check counters are not thread-safe). */
static void *caller_main(void *arg)
{
    caller *c = arg;
    for (int r = 0; r < 300; r++) {
        c->seed = c->seed * 1103515245u + 12345u;
        int bad;
        run_items(1 + (c->seed >> 8) % 40, r % 7 == 0 ? 3 : 0, r % 5 == 0 ? 2000 : 0, &bad);
        c->bad += bad;
    }
    return NULL;
}

int main(void)
{
    for (size_t n = 0; n <= PAR_MAX; n++)
        run_and_check(n, 0, 0);
    run_and_check(PAR_MAX + 5, 0, 0); /* clamped to PAR_MAX */
    int most = 0;
    for (int r = 0; r < 20 && most < 2; r++) {
        int t = run_and_check(64, 0, 200000);
        most = t > most ? t : most;
    }
    /* on one CPU there is no worker: the caller runs every item */
    CHECKF(most > 1 || par_cpus() == 1, "64 busy items always ran on one thread (%d CPUs)",
           par_cpus());
    run_and_check(32, 8, 1000);
    pthread_t tids[8];
    caller callers[8];
    for (int i = 0; i < 8; i++) {
        callers[i] = (caller){(unsigned)i + 1, 0};
        CHECK(pthread_create(&tids[i], NULL, caller_main, &callers[i]) == 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(tids[i], NULL);
        CHECKF(callers[i].bad == 0, "caller %d: %d items ran a wrong number of times", i,
               callers[i].bad);
    }
    return check_summary();
}
