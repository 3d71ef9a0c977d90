/*
** engine/parallel.c: teams of threads over a loop (see parallel.h).
*/
#include "config.h"
#include "engine/parallel.h"
#include "engine/error.h"

#include <pthread.h>

#if defined(DYNG_HAVE_OPENMP) && defined(_OPENMP)
#include <omp.h>
#endif

/* Set in the child of a fork(): from then on the process runs every loop on
** its calling thread. */
static _Atomic int dyng__forked = 0;
static pthread_once_t dyng__fork_once = PTHREAD_ONCE_INIT;

/* dyng_set_max_threads' cap; 0: none. */
static _Atomic int dyng__max_threads = 0;

void dyng_set_max_threads(int n) { atomic_store(&dyng__max_threads, n > 0 ? n : 0); }

static void dyng__in_child(void) { atomic_store(&dyng__forked, 1); }

static void dyng__watch_fork(void) { pthread_atfork(NULL, NULL, dyng__in_child); }

int dyng_threads(void) {
  pthread_once(&dyng__fork_once, dyng__watch_fork);
  if (atomic_load(&dyng__forked)) return 1;
  int n = 1;
#if defined(DYNG_HAVE_OPENMP) && defined(_OPENMP)
  n = omp_get_max_threads();
#endif
  int cap = atomic_load(&dyng__max_threads);
  if (cap && n > cap) n = cap;
  return n > 0 ? n : 1;
}

void dyng_team_init(dyng_team *t, uint32_t n_items, uint32_t chunk, int max_threads,
                    const dyng_cancel *cancel) {
  if (!chunk) chunk = 1;
  int n = dyng_threads();
  if (max_threads > 0 && n > max_threads) n = max_threads;
  /* Threads beyond one per chunk would find nothing to take. */
  uint64_t useful = ((uint64_t)n_items + chunk - 1) / chunk;
  if ((uint64_t)n > useful) n = useful > 1 ? (int)useful : 1;
  t->n_threads = n;
  t->n_items = n_items;
  t->chunk = chunk;
  atomic_init(&t->next, 0);
  atomic_init(&t->rc, DYNG_OK);
  t->cancel = cancel;
}

int dyng_team_run(dyng_team *t, void (*fn)(void *ctx, int thread), void *ctx) {
#if defined(DYNG_HAVE_OPENMP) && defined(_OPENMP)
  if (t->n_threads > 1) {
#pragma omp parallel num_threads(t->n_threads)
    {
      /* The runtime may give fewer threads than asked: the chunks left
      ** over are taken by those that run. */
      int me = omp_get_thread_num();
      if (me < t->n_threads) fn(ctx, me);
    }
    return atomic_load(&t->rc);
  }
#endif
  t->n_threads = 1;
  fn(ctx, 0);
  return atomic_load(&t->rc);
}

int dyng_team_take(dyng_team *t, uint32_t *begin, uint32_t *end) {
  if (atomic_load_explicit(&t->rc, memory_order_relaxed) != DYNG_OK) return 0;
  uint32_t b = atomic_load_explicit(&t->next, memory_order_relaxed);
  do {
    if (b >= t->n_items) return 0;
  } while (!atomic_compare_exchange_weak_explicit(&t->next, &b, b + (t->n_items - b < t->chunk ? t->n_items - b : t->chunk),
                                                  memory_order_relaxed, memory_order_relaxed));
  *begin = b;
  *end = t->n_items - b < t->chunk ? t->n_items : b + t->chunk;
  return 1;
}

int dyng_team_fail(dyng_team *t, int rc) {
  int expected = DYNG_OK;
  if (rc != DYNG_OK) atomic_compare_exchange_strong(&t->rc, &expected, rc);
  return atomic_load(&t->rc);
}

int dyng_team_check(dyng_team *t, int thread) {
  int rc = atomic_load_explicit(&t->rc, memory_order_relaxed);
  if (rc != DYNG_OK || thread != 0) return rc;
  if (t->cancel && t->cancel->progress) {
    uint32_t done = atomic_load_explicit(&t->next, memory_order_relaxed);
    t->cancel->progress(t->cancel->ctx, done < t->n_items ? done : t->n_items, t->n_items);
  }
  if (t->cancel && t->cancel->should_stop && t->cancel->should_stop(t->cancel->ctx))
    return dyng_team_fail(t, DYNG_EINTERRUPTED);
  return DYNG_OK;
}
