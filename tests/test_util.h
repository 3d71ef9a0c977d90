/*
** tests/test_util.h: small helpers shared by the test programs: a seeded
** pseudo-random generator (every test prints its seed, and DYNG_TEST_SEED
** replays one) and cmocka includes in the order cmocka needs.
*/
#ifndef DYNG_TEST_UTIL_H
#define DYNG_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* xorshift64*: small, fast, good enough for test inputs. */
typedef struct test_rng {
  uint64_t s;
} test_rng;

static inline void test_rng_seed(test_rng *r, uint64_t seed) { r->s = seed ? seed : 0x9e3779b97f4a7c15ULL; }

static inline uint64_t test_rng_next(test_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n). */
static inline uint64_t test_rng_below(test_rng *r, uint64_t n) { return n ? test_rng_next(r) % n : 0; }

/* Uniform in [0, 1). */
static inline double test_rng_unit(test_rng *r) { return (double)(test_rng_next(r) >> 11) / 9007199254740992.0; }

/* Where test_seed() keeps the run's seed (one per test program). */
static inline uint64_t *test_seed_slot(void) {
  static uint64_t seed;
  return &seed;
}

/* The seed for this run: DYNG_TEST_SEED when set, else a fixed default, so a
** failure reproduces; printed as a TAP comment.  Call it once, from main. */
static inline uint64_t test_seed(void) {
  const char *z = getenv("DYNG_TEST_SEED");
  uint64_t seed = z ? strtoull(z, NULL, 0) : 20261129ULL;
  printf("# seed %llu (set DYNG_TEST_SEED to replay)\n", (unsigned long long)seed);
  *test_seed_slot() = seed;
  return seed;
}

/* A generator for one test: the run's seed mixed with the test's own salt,
** so that each case draws the same inputs whatever ran before it. */
static inline void test_rng_for(test_rng *r, uint64_t salt) {
  test_rng_seed(r, *test_seed_slot() ^ (salt * 0x9e3779b97f4a7c15ULL));
}

#endif /* DYNG_TEST_UTIL_H */
