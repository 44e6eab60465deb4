/* stream.c - the ordered submit/collect/write loop of chunked commands. */
#include "stream.h"

#include "msg.h"
#include "progress.h"

/* Submits every chunk, and writes the oldest result once the ring is busy
 * or the input has ended; after an error, only lets every slot go idle. */
int stream_chunks(pl_ring *pl, int nslots, const stream_engine *ops, void *engine, out_stream *o,
                  uint64_t *bytes_in, const char *name)
{
    int failed = 0, rc;
    pl_chunk c;
    *bytes_in = 0;
    do {
        rc = pl_next(pl, &c);
        if (rc > 0) {
            progress_update(c.raw_end);
            *bytes_in += c.bytes;
            if (ops->submit(engine, c.slot, c.data, c.bytes) < 0) {
                msg_error("%s: %s", name, ops->error(engine));
                failed = 1;
            }
        } else if (rc < 0) {
            msg_error("%s: %s", name, pl_error(pl));
            failed = 1;
        }
        while (pl_outstanding(pl) > 0 && (pl_outstanding(pl) == nslots - 1 || rc <= 0 || failed)) {
            int slot = pl_oldest(pl);
            const void *out;
            size_t bytes;
            if (ops->collect(engine, slot, &out, &bytes) < 0) {
                if (!failed)
                    msg_error("%s: %s", name, ops->error(engine));
                failed = 1;
            } else if (!failed && out_write(o, out, bytes)) {
                failed = 1;
            }
            pl_release(pl, slot);
        }
    } while (rc > 0 && !failed);
    return failed;
}
