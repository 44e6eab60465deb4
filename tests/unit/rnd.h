/* rnd.h - xorshift64, the unit tests' only source of random data. A test
 * program defines RND_SEED (its own seed, so that its data stays what it
 * was) before including this. */
#ifndef GPUBATCH_TESTS_RND_H
#define GPUBATCH_TESTS_RND_H

#include <stdint.h>

#ifndef RND_SEED
#error "define RND_SEED before including rnd.h"
#endif

static uint64_t rng_state = RND_SEED;

/* The next 64 pseudo-random bits. */
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#endif
