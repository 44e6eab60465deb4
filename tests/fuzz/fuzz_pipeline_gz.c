/* fuzz_pipeline_gz.c - fuzz harness for the pipeline that hands blocked
 * gzip to the device as whole members (pl_open_gz): its walk of the BGZF
 * headers, the runs it decodes on the host, where it rejoins the host's
 * reader, and its end-of-data checks.
 *
 * The input's first four bytes choose the bytes read before the pipeline
 * starts (as a .npy header would be), how many of them it gets back as the
 * prefix, the chunk size and whether the data's size is known; the rest is
 * the file. The members of each chunk are inflated on the host with the
 * device's decoder; the data, the final status and message, and the
 * trailing-garbage warning must be those of pl_open on the same file, and
 * no chunk may break the pipeline's own rules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/pipeline_gz_run.h"

/* Stops the run on a broken invariant (a crash the fuzzer records). */
static void require(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_plgz_%d", (int)getpid());
    if (size < 4)
        return 0;
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data + 4, 1, size - 4, f);
    fclose(f);
    size_t skip = data[0] % 200, prefix_len = data[1] % (skip + 1);
    size_t chunk = (size_t)(1 + data[2] % 4) << 17; /* 128 KiB to 512 KiB */
    uint64_t limit = data[3] & 1 ? UINT64_MAX : (uint64_t)(data[3] >> 1) << 12;
    outcome a, b;
    run(path, 1, skip, prefix_len, chunk, limit, &a);
    run(path, 0, skip, prefix_len, chunk, limit, &b);
    require(!a.broken && !b.broken);
    require((a.rc != 0) == (b.rc != 0));
    require(!strcmp(a.msg, b.msg));
    /* a chunk that held a bad member is not handed out: before the error
     * the device path hands out no more than the host's */
    if (a.rc == 0) {
        require(a.data.n == b.data.n && (!a.data.n || !memcmp(a.data.p, b.data.p, a.data.n)));
        require(a.garbage == b.garbage);
    } else {
        require(a.data.n <= b.data.n && (!a.data.n || !memcmp(a.data.p, b.data.p, a.data.n)));
    }
    free(a.data.p);
    free(b.data.p);
    unlink(path);
    return 0;
}
