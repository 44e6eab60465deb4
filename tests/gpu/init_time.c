/* init_time.c [N [serial|threads]] - the start-up floor: time of driver
 * load + cuInit and of primary-context creation, measured with gpubatch's
 * own runtime. With N, contexts are made on the first N devices the driver
 * sees, one after another (serial, the default) or each on a thread of its
 * own, all started at once (threads). Prints "name value" lines. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/gpu.h"

#define MAX_DEVICES 64

/* Milliseconds on a monotonic clock. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    int device;
    gpu *g;
    int rc;
    double done_ms;
} opening;

/* Thread body: opens one device and notes when it was open. */
static void *open_main(void *arg)
{
    opening *o = arg;
    o->rc = gpu_open(&o->g, o->device);
    o->done_ms = now_ms();
    return NULL;
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 1;
    int threads = argc > 2 && !strcmp(argv[2], "threads");
    double t0 = now_ms();
    int n = gpu_device_count();
    double t1 = now_ms();
    if (n <= 0) {
        fprintf(stderr, "no device: %s\n", gpu_load_message());
        return 1;
    }
    if (want < 1 || want > n)
        want = n;
    if (want > MAX_DEVICES)
        want = MAX_DEVICES;
    opening o[MAX_DEVICES];
    pthread_t th[MAX_DEVICES];
    for (int i = 0; i < want; i++)
        o[i] = (opening){.device = i};
    for (int i = 0; i < want; i++) {
        if (threads)
            pthread_create(&th[i], NULL, open_main, &o[i]);
        else
            open_main(&o[i]);
    }
    for (int i = 0; threads && i < want; i++)
        pthread_join(th[i], NULL);
    double t2 = now_ms();
    printf("driver_init_ms %.1f\ndevices_seen %d\ncontext_ms %.1f\ntotal_ms %.1f\n", t1 - t0, n,
           t2 - t1, t2 - t0);
    for (int i = 0; i < want; i++)
        printf("device_%d_open_ms %.1f%s\n", i, o[i].done_ms - t1, o[i].rc < 0 ? " FAILED" : "");
    for (int i = 0; i < want; i++)
        if (o[i].rc == 0)
            gpu_close(o[i].g);
    return 0;
}
