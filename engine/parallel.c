/*
** engine/parallel.c: teams of threads over a loop, and a radix sort on them
** (see parallel.h).
*/
#include "config.h"
#include "engine/parallel.h"
#include "engine/alloc.h"
#include "engine/error.h"

#include <pthread.h>
#include <string.h>

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
  if (n > DYNG_TEAM_MAX_THREADS) n = DYNG_TEAM_MAX_THREADS;
  /* Threads beyond one per chunk would find nothing to take. */
  uint64_t useful = ((uint64_t)n_items + chunk - 1) / chunk;
  if ((uint64_t)n > useful) n = useful > 1 ? (int)useful : 1;
  t->n_threads = n;
  t->n_items = n_items;
  t->chunk = chunk;
  atomic_init(&t->next, 0);
  atomic_init(&t->done, 0);
  atomic_init(&t->rc, DYNG_OK);
  t->cancel = cancel;
  memset(t->taken, 0, (size_t)n * sizeof t->taken[0]);
}

/* After the loop: the last chunk of each thread that ran it to its end
** (taken, then no other found) is finished; a failure or a stop leaves
** the chunks it cut short uncounted.  The progress hears the final count. */
static int dyng__team_end(dyng_team *t) {
  int rc = atomic_load(&t->rc);
  if (rc == DYNG_OK) atomic_store(&t->done, t->n_items);
  if (t->cancel && t->cancel->progress)
    t->cancel->progress(t->cancel->ctx, atomic_load(&t->done), t->n_items);
  return rc;
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
    return dyng__team_end(t);
  }
#endif
  t->n_threads = 1;
  fn(ctx, 0);
  return dyng__team_end(t);
}

/* The calling thread's place in team t's loop. */
static int dyng__team_me(const dyng_team *t) {
  int me = 0;
#if defined(DYNG_HAVE_OPENMP) && defined(_OPENMP)
  if (t->n_threads > 1) me = omp_get_thread_num();
#endif
  return me >= 0 && me < t->n_threads ? me : 0;
}

int dyng_team_take(dyng_team *t, uint32_t *begin, uint32_t *end) {
  /* This thread's last chunk is finished. */
  int me = dyng__team_me(t);
  if (t->taken[me]) atomic_fetch_add_explicit(&t->done, t->taken[me], memory_order_relaxed);
  t->taken[me] = 0;
  if (atomic_load_explicit(&t->rc, memory_order_relaxed) != DYNG_OK) return 0;
  uint32_t b = atomic_load_explicit(&t->next, memory_order_relaxed);
  do {
    if (b >= t->n_items) return 0;
  } while (!atomic_compare_exchange_weak_explicit(&t->next, &b, b + (t->n_items - b < t->chunk ? t->n_items - b : t->chunk),
                                                  memory_order_relaxed, memory_order_relaxed));
  *begin = b;
  *end = t->n_items - b < t->chunk ? t->n_items : b + t->chunk;
  t->taken[me] = *end - b;
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
  if (t->cancel && t->cancel->progress)
    t->cancel->progress(t->cancel->ctx, atomic_load_explicit(&t->done, memory_order_relaxed),
                        t->n_items);
  if (t->cancel && t->cancel->should_stop && t->cancel->should_stop(t->cancel->ctx))
    return dyng_team_fail(t, DYNG_EINTERRUPTED);
  return DYNG_OK;
}

/* ---- ranges for a plugin ------------------------------------------------- */

/* What the threads of one dyng_parallel_ranges share. */
typedef struct dyng__ranges {
  size_t n, chunk;
  void (*fn)(void *ctx, size_t begin, size_t end);
  void *ctx;
  dyng_team team; /* its items are the ranges */
} dyng__ranges;

static void dyng__ranges_run(void *ctx, int thread) {
  dyng__ranges *r = ctx;
  uint32_t c, end;
  (void)thread;
  while (dyng_team_take(&r->team, &c, &end))
    for (; c < end; c++) {
      size_t lo = (size_t)c * r->chunk;
      r->fn(r->ctx, lo, r->n - lo < r->chunk ? r->n : lo + r->chunk);
    }
}

void dyng_parallel_ranges(size_t n, size_t chunk, void (*fn)(void *ctx, size_t begin, size_t end),
                          void *ctx) {
  if (!chunk) chunk = 1;
  size_t n_ranges = n / chunk + (n % chunk != 0);
  if (n_ranges <= 1 || n_ranges > UINT32_MAX) {
    if (n) fn(ctx, 0, n);
    return;
  }
  dyng__ranges r = {n, chunk, fn, ctx, {0}};
  dyng_team_init(&r.team, (uint32_t)n_ranges, 1, 0, NULL);
  (void)dyng_team_run(&r.team, dyng__ranges_run, &r);
}

/* ---- a radix sort on the team ------------------------------------------ */

/* A least-significant-digit radix sort of (key, value) pairs, stable, 8 bits
** a pass and only over the bytes where the keys differ.  The input is cut
** into fixed chunks; each pass counts every chunk's digits and then moves
** every chunk's pairs, the chunks handed to the engine's threads (the
** result does not depend on which thread takes which). */
typedef struct dyng__radix {
  uint64_t *key, *key_to;   /* the pairs, and room for as many */
  uint32_t *val, *val_to;   /* values; NULL: keys only */
  size_t n;
  uint32_t chunk, n_chunks; /* items per chunk, chunks */
  uint32_t *count;          /* per chunk, per digit: count, then first place */
  int shift;                /* the digit of this pass */
  dyng_team team;
} dyng__radix;

/* Chunks of at least this many pairs (and at most 64 chunks a thread). */
#define DYNG__RADIX_CHUNK 8192

static void dyng__radix_count(void *ctx, int thread) {
  dyng__radix *r = ctx;
  uint32_t c, end;
  (void)thread;
  while (dyng_team_take(&r->team, &c, &end))
    for (; c < end; c++) {
      uint32_t *count = r->count + (size_t)c * 256;
      size_t lo = (size_t)c * r->chunk, hi = lo + r->chunk < r->n ? lo + r->chunk : r->n;
      memset(count, 0, 256 * sizeof *count);
      for (size_t i = lo; i < hi; i++) count[(r->key[i] >> r->shift) & 255]++;
    }
}

static void dyng__radix_move(void *ctx, int thread) {
  dyng__radix *r = ctx;
  uint32_t c, end;
  (void)thread;
  while (dyng_team_take(&r->team, &c, &end))
    for (; c < end; c++) {
      uint32_t *place = r->count + (size_t)c * 256;
      size_t lo = (size_t)c * r->chunk, hi = lo + r->chunk < r->n ? lo + r->chunk : r->n;
      for (size_t i = lo; i < hi; i++) {
        uint32_t to = place[(r->key[i] >> r->shift) & 255]++;
        r->key_to[to] = r->key[i];
        if (r->val) r->val_to[to] = r->val[i];
      }
    }
}

/* See parallel.h. */
int dyng_radix_sort(uint64_t **key, uint64_t **key_to, uint32_t **val, uint32_t **val_to, size_t n,
                    int begin_bit) {
  dyng__radix r;
  uint64_t differ = 0;
  for (size_t i = 1; i < n; i++) differ |= (*key)[i] ^ (*key)[0];
  differ &= ~(uint64_t)0 << begin_bit;
  if (!differ) return DYNG_OK;
  size_t chunk = n / (64 * (size_t)dyng_threads()) + 1;
  if (chunk < DYNG__RADIX_CHUNK) chunk = DYNG__RADIX_CHUNK;
  r.n = n;
  r.chunk = (uint32_t)chunk;
  r.n_chunks = (uint32_t)((n + chunk - 1) / chunk);
  r.count = dyng_malloc((size_t)r.n_chunks * 256 * sizeof *r.count);
  if (!r.count) return DYNG_ENOMEM;
  r.key = *key;
  r.key_to = *key_to;
  r.val = val ? *val : NULL;
  r.val_to = val ? *val_to : NULL;
  for (r.shift = begin_bit; r.shift < 64; r.shift += 8) {
    if (!((differ >> r.shift) & 255)) continue;
    dyng_team_init(&r.team, r.n_chunks, 1, 0, NULL);
    (void)dyng_team_run(&r.team, dyng__radix_count, &r);
    uint32_t at = 0;
    for (int d = 0; d < 256; d++)
      for (uint32_t c = 0; c < r.n_chunks; c++) {
        uint32_t *x = &r.count[(size_t)c * 256 + d], k = *x;
        *x = at;
        at += k;
      }
    dyng_team_init(&r.team, r.n_chunks, 1, 0, NULL);
    (void)dyng_team_run(&r.team, dyng__radix_move, &r);
    uint64_t *k = r.key;
    r.key = r.key_to;
    r.key_to = k;
    uint32_t *v = r.val;
    r.val = r.val_to;
    r.val_to = v;
  }
  *key = r.key;
  *key_to = r.key_to;
  if (val) {
    *val = r.val;
    *val_to = r.val_to;
  }
  dyng_free(r.count);
  return DYNG_OK;
}
