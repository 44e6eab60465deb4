/* copy_share.c - one long copy shared out in pieces among threads (see
 * copy_share.h). */
#include "copy_share.h"

#include <string.h>

/* Copies the next piece (see copy_share.h). */
void copy_share_piece(copy_share *c, pthread_mutex_t *lock, pthread_cond_t *finished)
{
    size_t off = c->next, n = c->len - off < COPY_SHARE_PIECE ? c->len - off : COPY_SHARE_PIECE;
    uint8_t *dst = c->dst + off;
    const uint8_t *src = c->src + off;
    c->next += n;
    pthread_mutex_unlock(lock);
    memcpy(dst, src, n);
    pthread_mutex_lock(lock);
    c->done += n;
    if (c->done == c->len)
        pthread_cond_broadcast(finished);
}

/* Copies n bytes with the help of idle threads (see copy_share.h). */
void copy_share_run(copy_share *c, uint8_t *dst, const uint8_t *src, size_t n,
                    pthread_mutex_t *lock, pthread_cond_t *wake, pthread_cond_t *finished)
{
    c->dst = dst;
    c->src = src;
    c->len = n;
    c->next = c->done = 0;
    c->runs++;
    pthread_cond_broadcast(wake);
    while (c->next < n)
        copy_share_piece(c, lock, finished);
    while (c->done < n)
        pthread_cond_wait(finished, lock);
    c->len = c->next = c->done = 0;
}
