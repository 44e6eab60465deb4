/* par.c - the thread fan-out behind par.h. */
#include "par.h"

#include <pthread.h>

/* Starts items 1..n-1 on threads, runs item 0 here, joins. */
void par_run(void *(*fn)(void *), void *items, size_t item_size, size_t n)
{
    pthread_t tids[PAR_MAX];
    int started[PAR_MAX] = {0};
    char *base = items;
    if (n > PAR_MAX)
        n = PAR_MAX;
    for (size_t i = 1; i < n; i++)
        started[i] = pthread_create(&tids[i], NULL, fn, base + i * item_size) == 0;
    if (n > 0)
        fn(base);
    for (size_t i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else
            fn(base + i * item_size);
    }
}
