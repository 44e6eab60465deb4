/* par.c - the thread pool behind par.h.
 *
 * One pool of worker threads, started at the first call that has work for
 * them and kept for the life of the process, serves every par_run() call:
 * starting threads per call costs about as much as reading a few megabytes
 * from the page cache, which the parallel readers do hundreds of times per
 * second. A call queues its items 1..n-1, runs item 0, then runs queued
 * items itself (its own, or those of calls queued before it) until all of
 * its own are handed out, and waits for the ones workers are running; so a
 * call completes even when no worker could be started or every worker is
 * busy. */
#include "par.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* One call's items; lives on the caller's stack until they are all done. */
typedef struct par_batch {
    void *(*fn)(void *);
    char *base;
    size_t item_size;
    size_t next;             /* next item to hand out (items 1..n-1) */
    size_t n;
    size_t running;          /* items handed to workers and not finished */
    struct par_batch *link;  /* next batch in the queue */
} par_batch;

static pthread_mutex_t par_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t par_work = PTHREAD_COND_INITIALIZER; /* a batch was queued */
static pthread_cond_t par_done = PTHREAD_COND_INITIALIZER; /* a worker finished an item */
static par_batch *par_head, *par_tail; /* batches with items to hand out */
static pthread_once_t par_once = PTHREAD_ONCE_INIT;

/* Takes the next item of the oldest queued batch (par_mu held); the batch
 * leaves the queue with its last item. Returns the item's index. */
static size_t par_take(par_batch *b)
{
    size_t i = b->next++;
    if (b->next == b->n) {
        /* b is the head: only the head's items are handed out */
        par_head = b->link;
        if (!par_head)
            par_tail = NULL;
    }
    return i;
}

/* Runs one item of the oldest queued batch (par_mu held, dropped while the
 * item runs) and wakes the waiting callers. */
static void par_run_head(void)
{
    par_batch *b = par_head;
    size_t i = par_take(b);
    b->running++;
    pthread_mutex_unlock(&par_mu);
    b->fn(b->base + i * b->item_size);
    pthread_mutex_lock(&par_mu);
    b->running--;
    pthread_cond_broadcast(&par_done);
}

/* Worker thread: runs queued items, oldest batch first, forever. */
static void *par_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&par_mu);
    for (;;) {
        while (!par_head)
            pthread_cond_wait(&par_work, &par_mu);
        par_run_head();
    }
    return NULL;
}

static int par_ncpus;
static int par_cap; /* par_limit's bound, 0 for none */
static pthread_once_t par_cpus_once = PTHREAD_ONCE_INIT;

/* Counts the CPUs in the affinity mask, else the online CPUs, into par_ncpus. */
static void par_count_cpus(void)
{
    cpu_set_t set;
    long n;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
    else
        n = sysconf(_SC_NPROCESSORS_ONLN);
    par_ncpus = n < 1 ? 1 : n > 0x7fffffff ? 0x7fffffff : (int)n;
}

/* Bounds the count par_cpus gives (see par.h). */
void par_limit(int n)
{
    par_cap = n;
}

/* CPUs this process may run on, counted once: the parallel readers ask on
 * every read, and the pool is sized by the same count. */
int par_cpus(void)
{
    pthread_once(&par_cpus_once, par_count_cpus);
    return par_cap > 0 && par_cap < par_ncpus ? par_cap : par_ncpus;
}

/* Starts one worker per usable CPU (fewer if some cannot be created; none
 * on one CPU, where the caller runs every item). */
static void par_start(void)
{
    int cpus = par_cpus();
    int n = cpus > 1 ? (cpus < PAR_MAX ? cpus : PAR_MAX) : 0;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < n; i++) {
        pthread_t tid;
        if (pthread_create(&tid, &attr, par_worker, NULL) != 0)
            break;
    }
    pthread_attr_destroy(&attr);
}

/* Queues items 1..n-1, runs item 0 here, helps with queued items and waits
 * for the ones that workers run. */
void par_run(void *(*fn)(void *), void *items, size_t item_size, size_t n)
{
    if (n > PAR_MAX)
        n = PAR_MAX;
    if (n == 0)
        return;
    char *base = items;
    if (n == 1) {
        fn(base);
        return;
    }
    pthread_once(&par_once, par_start);
    par_batch b = {fn, base, item_size, 1, n, 0, NULL};
    pthread_mutex_lock(&par_mu);
    if (par_tail)
        par_tail->link = &b;
    else
        par_head = &b;
    par_tail = &b;
    pthread_cond_broadcast(&par_work);
    pthread_mutex_unlock(&par_mu);

    fn(base);

    pthread_mutex_lock(&par_mu);
    /* While b is queued, run queued items: b's own, or those of a call
     * queued before it (the head). Then wait for the items workers run. */
    while (b.next < b.n)
        par_run_head();
    while (b.running > 0)
        pthread_cond_wait(&par_done, &par_mu);
    pthread_mutex_unlock(&par_mu);
}
