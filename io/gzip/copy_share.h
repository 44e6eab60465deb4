/* copy_share.h - one long copy shared out in pieces among threads.
 *
 * A reader that hands decoded bytes out in order copies them alone, and on
 * many cores that one copy can be slower than all the decoding threads
 * together. copy_share_run() cuts such a copy into pieces: the thread that
 * asked copies pieces itself, and threads that have nothing else to do
 * (they see copy_share_pending() under the same lock) take pieces with
 * copy_share_piece(). Every byte is copied exactly once, whoever takes it,
 * so the result never depends on scheduling. */
#ifndef GPUBATCH_IO_COPY_SHARE_H
#define GPUBATCH_IO_COPY_SHARE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define COPY_SHARE_PIECE ((size_t)256 << 10) /* bytes one thread takes at a time */

typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    size_t len, next, done; /* its bytes, the next piece's offset, bytes copied */
    uint64_t runs;          /* copies shared so far */
} copy_share;

/* Whether a piece of a copy waits for a thread (lock held). */
static inline int copy_share_pending(const copy_share *c)
{
    return c->next < c->len;
}

/* Copies the next piece (lock held, dropped meanwhile); the last piece done
 * broadcasts `finished`. */
void copy_share_piece(copy_share *c, pthread_mutex_t *lock, pthread_cond_t *finished);

/* Copies n bytes from src to dst with the help of the threads that `wake`
 * wakes (lock held on entry and on return): copies pieces itself, then
 * waits on `finished` for those others took. */
void copy_share_run(copy_share *c, uint8_t *dst, const uint8_t *src, size_t n,
                    pthread_mutex_t *lock, pthread_cond_t *wake, pthread_cond_t *finished);

#endif
