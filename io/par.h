/* par.h - fan-out of independent jobs over threads.
 *
 * par_run() runs fn on each of n items, item 0 on the calling thread and
 * the others on a pool of threads (one per CPU, started once and shared by
 * every caller), and returns when all are done. Jobs write only their own
 * item, so results never depend on scheduling. Several threads may call
 * par_run() at once.
 * Failure policy: items no pool thread takes (none could be created, or all
 * are busy) run on the calling thread, so every item always runs exactly
 * once. */
#ifndef GPUBATCH_IO_PAR_H
#define GPUBATCH_IO_PAR_H

#include <stddef.h>

#define PAR_MAX 256 /* most items one call runs */

/* CPUs this process may run on (its affinity mask, e.g. under taskset, at
 * the first call), at least 1: the pool's size and the fan-out of the
 * parallel readers. */
int par_cpus(void);

/* Bounds par_cpus() (and so the pool and every parallel reader) to n
 * threads, for a user's thread limit (--threads); before the first
 * par_run() call, which starts the pool. */
void par_limit(int n);

/* Runs fn(items + i * item_size) for i < n (n <= PAR_MAX). */
void par_run(void *(*fn)(void *), void *items, size_t item_size, size_t n);

#endif
