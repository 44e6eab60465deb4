/* rnd.h - xorshift64, the unit tests' only source of random data. A test
 * program defines RND_SEED (its own seed, so that its data stays what it
 * was) before including this. Each test function that main() calls through
 * RUN (check.h) draws from a stream of its own, seeded from RND_SEED, its
 * name and its place among the RUNs: a function that fails fails the same
 * way when run alone (GPUBATCH_TEST_CASE), whatever the functions before it
 * drew (threaded tests draw as many numbers as their reads return). */
#ifndef GPUBATCH_TESTS_RND_H
#define GPUBATCH_TESTS_RND_H

#include <stdint.h>

#ifndef RND_SEED
#error "define RND_SEED before including rnd.h"
#endif

static uint64_t rng_state = RND_SEED;

/* Seeds the stream of the test function `name`, the index-th RUN of its
 * program. */
static inline void rnd_case(const char *name, unsigned index)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    h ^= (uint64_t)index * 0x9e3779b97f4a7c15ull;
    rng_state = RND_SEED ^ h ? RND_SEED ^ h : RND_SEED; /* xorshift's state is never 0 */
}

#undef CHECK_CASE_BEGIN
#define CHECK_CASE_BEGIN(name, index) rnd_case(name, index)

/* The next 64 pseudo-random bits. */
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#endif
