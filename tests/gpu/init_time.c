/* init_time.c - the start-up floor: time of driver load + cuInit and of
 * primary-context creation, measured with gpubatch's own runtime. Prints
 * "init_ms CTX_MS" style lines for tests/gpu/run.sh. */
#include <stdio.h>
#include <time.h>

#include "runtime/gpu.h"

/* Milliseconds on a monotonic clock. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
    double t0 = now_ms();
    int n = gpu_device_count();
    double t1 = now_ms();
    if (n <= 0) {
        fprintf(stderr, "no device: %s\n", gpu_load_message());
        return 1;
    }
    gpu *g;
    if (gpu_open(&g, 0) < 0)
        return 1;
    double t2 = now_ms();
    printf("driver_init_ms %.1f\ncontext_ms %.1f\ntotal_ms %.1f\n", t1 - t0, t2 - t1, t2 - t0);
    gpu_close(g);
    return 0;
}
