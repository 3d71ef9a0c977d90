/*
** engine/parallel.c: teams of threads over a loop, and a radix sort on them
** (see parallel.h).
*/
#include "config.h"
#include "engine/parallel.h"
#include "engine/alloc.h"
#include "engine/error.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
** The crew: the engine's own threads, started on first use and kept.  A
** loop posts a job (a function and its context) for n threads, the calling
** one among them; idle workers claim its slots 1 .. n-1.  Every wait (an
** idle worker's, a barrier's, the caller's for the job's end) polls for a
** bounded time (0.2 ms idle, 1 ms inside a job) and then sleeps on a
** condition variable: a thread that waits never holds a core that another
** process could use for longer than that, and since a loop takes only the
** cores free when it starts, a busy host sees no spinning at all.  A team (dyng_team_run) closes its job once
** the caller ran out of chunks, so a worker that did not start in time
** (its core taken by another process) is not waited for; a job with
** barriers waits for all its threads.  Only one job runs at a time: a loop
** that starts while another runs (another connection's thread) runs on its
** calling thread alone.  The extension is never unloaded (-z nodelete in
** ext/Makefile.mk), so idle workers may stay asleep in it to the end.
*/

/* How long a waiting thread polls before it sleeps, in nanoseconds: an
** idle worker between loops (back-to-back loops, as a load's seal runs
** them, find it awake), and a thread waiting inside a loop (at a barrier,
** or for the loop's end), where a round of the parallel search must not
** cost a wake-up. */
#define DYNG__IDLE_SPIN_NS 200000
#define DYNG__WAIT_SPIN_NS 1000000

static inline void dyng__relax_cpu(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t dyng__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One wait's polls: nonzero while it may poll on (budget ns from the
** first call; the clock read every 64 polls).  Past the first 20 us each
** reading also yields the core, so that with more threads than cores (the
** count pinned by DYNG_THREADS) the thread being waited for gets to run. */
typedef struct dyng__spin {
  int64_t until, budget;
  unsigned polls;
} dyng__spin;

static int dyng__spin_on(dyng__spin *sp) {
  if ((sp->polls++ & 63) == 0) {
    int64_t now = dyng__now_ns();
    if (sp->polls == 1) sp->until = now + sp->budget;
    else if (now >= sp->until) return 0;
    else if (sp->until - now < sp->budget - 20000) sched_yield();
  }
  dyng__relax_cpu();
  return 1;
}

typedef struct dyng__crew {
  pthread_mutex_t mu;    /* guards the sleeps and wakes below */
  pthread_cond_t work;   /* idle workers: a job was posted */
  pthread_cond_t done;   /* the caller: a worker left the job */
  pthread_cond_t turn;   /* a barrier's waiters: it was released */
  pthread_mutex_t busy;  /* held by the thread whose job runs */
  int n_workers;         /* started (under mu) */
  _Atomic uint64_t seq;  /* jobs posted; a worker waits for it to change */
  void (*fn)(void *ctx, int thread);
  void *ctx;
  /* The job's threads (the caller's included) in the high 32 bits, the
  ** slot the next worker claims in the low ones: a worker claims with a
  ** compare-and-swap while the slot is below the count, so the slot it
  ** gets and the job it belongs to are read together.  0: no job. */
  _Atomic uint64_t claim;
  _Atomic int finished;  /* workers that ran their slot to its end */
  _Atomic int waiting;   /* the caller sleeps until finished moves */
  _Atomic int spinning;  /* workers polling (on a core) while idle */
  _Atomic int arrived;   /* at the job's barrier this round */
  _Atomic uint64_t gen;  /* barrier rounds released */
} dyng__crew;

static dyng__crew dyng__the_crew = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                    .work = PTHREAD_COND_INITIALIZER,
                                    .done = PTHREAD_COND_INITIALIZER,
                                    .turn = PTHREAD_COND_INITIALIZER,
                                    .busy = PTHREAD_MUTEX_INITIALIZER};

/* Which slot of the running job the calling thread holds (slot + 1; unset,
** 0, on a thread outside any job).  Thread-specific data rather than
** thread-local storage, which a module loaded by dlopen() keeps per thread
** in memory of its own. */
static pthread_key_t dyng__slot_key;

/* Set in the child of a fork(): the child has none of the parent's
** workers, and from then on it runs every loop on its calling thread. */
static _Atomic int dyng__forked = 0;
static pthread_once_t dyng__once = PTHREAD_ONCE_INIT;

/* dyng_set_max_threads' cap; 0: none. */
static _Atomic int dyng__max_threads = 0;

/* The threads a loop may use at most: DYNG_THREADS, else OMP_NUM_THREADS
** (its first number), else the CPUs this process may run on; pinned (set by
** DYNG_THREADS): that many whatever the cores free. */
static int dyng__configured = 1;
static int dyng__pinned = 0;

static void dyng__in_child(void) { atomic_store(&dyng__forked, 1); }

static int dyng__env_threads(const char *name) {
  const char *z = getenv(name);
  char *end = NULL;
  long v = z ? strtol(z, &end, 10) : 0;
  if (!z || end == z || (*end && *end != ',') || v < 1) return 0;
  return v > DYNG_TEAM_MAX_THREADS ? DYNG_TEAM_MAX_THREADS : (int)v;
}

static void dyng__init_once(void) {
  pthread_atfork(NULL, NULL, dyng__in_child);
  (void)pthread_key_create(&dyng__slot_key, NULL);
  int n = dyng__env_threads("DYNG_THREADS");
  dyng__pinned = n > 0;
  if (!n) n = dyng__env_threads("OMP_NUM_THREADS");
  if (!n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  }
  if (n < 1) n = 1;
  dyng__configured = n > DYNG_TEAM_MAX_THREADS ? DYNG_TEAM_MAX_THREADS : n;
}

void dyng_set_max_threads(int n) { atomic_store(&dyng__max_threads, n > 0 ? n : 0); }

int dyng_threads(void) {
  pthread_once(&dyng__once, dyng__init_once);
  if (atomic_load(&dyng__forked)) return 1;
  int n = dyng__configured;
  int cap = atomic_load(&dyng__max_threads);
  if (cap && n > cap) n = cap;
  return n > 0 ? n : 1;
}

/* Returns once *word is no longer old: polls for budget ns (counted in
** *polling meanwhile, when not NULL), then sleeps on cv, which is signalled
** under the crew's mu after every change of *word. */
static void dyng__await_change(dyng__crew *c, _Atomic uint64_t *word, uint64_t old, int64_t budget,
                               pthread_cond_t *cv, _Atomic int *polling) {
  if (polling) atomic_fetch_add(polling, 1);
  dyng__spin sp = {0, budget, 0};
  while (atomic_load_explicit(word, memory_order_acquire) == old && dyng__spin_on(&sp)) {
  }
  if (polling) atomic_fetch_sub(polling, 1);
  if (atomic_load_explicit(word, memory_order_acquire) != old) return;
  pthread_mutex_lock(&c->mu);
  while (atomic_load_explicit(word, memory_order_acquire) == old) pthread_cond_wait(cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

/* ---- cores free now --------------------------------------------------- */

/* The last reading of the cores free, and when (CLOCK_MONOTONIC, ns). */
static _Atomic int dyng__free_seen = 0;
static _Atomic int64_t dyng__free_at = INT64_MIN / 2;

/* Readings this far apart at most (a loop's sizing costs a file read
** at most once per period). */
#define DYNG__FREE_PERIOD_NS 5000000

int dyng_free_cores(int n_cpus, long runnable, int own) {
  long others = runnable - 1 - own; /* the reader itself runs */
  if (others < 0) others = 0;
  long free_cores = (long)n_cpus - others;
  return free_cores < 1 ? 1 : free_cores > n_cpus ? n_cpus : (int)free_cores;
}

/* The cores no other thread of the machine runs on now: the online CPUs
** less the threads runnable now (/proc/loadavg's fourth field), less this
** one and the crew's idle workers still polling.  0 when unknown. */
static int dyng__read_free(void) {
  FILE *f = fopen("/proc/loadavg", "re");
  if (!f) return 0;
  double a, b, c;
  long runnable = 0, total = 0;
  int got = fscanf(f, "%lf %lf %lf %ld/%ld", &a, &b, &c, &runnable, &total);
  fclose(f);
  if (got != 5 || runnable < 1) return 0;
  long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (n_cpus < 1) return 0;
  return dyng_free_cores(n_cpus > INT_MAX ? INT_MAX : (int)n_cpus, runnable,
                         atomic_load_explicit(&dyng__the_crew.spinning, memory_order_relaxed));
}

int dyng_threads_now(void) {
  int n = dyng_threads();
  if (n <= 1 || dyng__pinned) return n;
  int64_t now = dyng__now_ns();
  int free_cores = atomic_load_explicit(&dyng__free_seen, memory_order_relaxed);
  if (now - atomic_load_explicit(&dyng__free_at, memory_order_relaxed) > DYNG__FREE_PERIOD_NS) {
    free_cores = dyng__read_free();
    atomic_store_explicit(&dyng__free_seen, free_cores, memory_order_relaxed);
    atomic_store_explicit(&dyng__free_at, now, memory_order_relaxed);
  }
  return free_cores > 0 && free_cores < n ? free_cores : n;
}

/* ---- the crew ----------------------------------------------------------- */

static void dyng__set_slot(int slot) { (void)pthread_setspecific(dyng__slot_key, (void *)(intptr_t)(slot + 1)); }

int dyng_thread_slot(void) {
  pthread_once(&dyng__once, dyng__init_once);
  intptr_t v = (intptr_t)pthread_getspecific(dyng__slot_key);
  return v > 0 ? (int)(v - 1) : 0;
}

static void *dyng__worker(void *arg) {
  dyng__crew *c = &dyng__the_crew;
  uint64_t seen = (uint64_t)(uintptr_t)arg;
  for (;;) {
    /* Idle: poll a while for the next job, then sleep. */
    dyng__await_change(c, &c->seq, seen, DYNG__IDLE_SPIN_NS, &c->work, &c->spinning);
    seen = atomic_load_explicit(&c->seq, memory_order_acquire);
    uint64_t w = atomic_load_explicit(&c->claim, memory_order_acquire);
    int slot = -1;
    while ((uint32_t)w < (uint32_t)(w >> 32))
      if (atomic_compare_exchange_weak_explicit(&c->claim, &w, w + 1, memory_order_acq_rel, memory_order_acquire)) {
        slot = (int)(uint32_t)w;
        break;
      }
    if (slot < 0) continue; /* none left, or closed */
    dyng__set_slot(slot);
    c->fn(c->ctx, slot);
    dyng__set_slot(-1);
    atomic_fetch_add(&c->finished, 1);
    if (atomic_load(&c->waiting)) {
      pthread_mutex_lock(&c->mu);
      pthread_cond_broadcast(&c->done);
      pthread_mutex_unlock(&c->mu);
    }
  }
  return NULL;
}

/* Workers for slots 1 .. n-1, started as needed: the threads there are
** (at least 1, the caller). */
static int dyng__crew_grow(dyng__crew *c, int n) {
  pthread_mutex_lock(&c->mu);
  while (c->n_workers < n - 1) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int erc = pthread_create(&th, &attr, dyng__worker,
                             (void *)(uintptr_t)atomic_load_explicit(&c->seq, memory_order_relaxed));
    pthread_attr_destroy(&attr);
    if (erc != 0) break;
    c->n_workers++;
  }
  int have = c->n_workers + 1;
  pthread_mutex_unlock(&c->mu);
  return have < n ? have : n;
}

/* Runs fn(ctx, slot) on n threads, slot 0 on the caller; all: wait for
** every slot (a job with barriers), else close the job when slot 0 is done
** and wait only for the slots that started.  Returns the threads the job
** was posted for (1: it ran on the caller alone). */
static int dyng__crew_run(int n, int all, void (*fn)(void *ctx, int thread), void *ctx, int *granted) {
  dyng__crew *c = &dyng__the_crew;
  pthread_once(&dyng__once, dyng__init_once);
  if (n > 1 && !atomic_load(&dyng__forked) && pthread_mutex_trylock(&c->busy) == 0) {
    n = dyng__crew_grow(c, n);
    if (n > 1) {
      if (granted) *granted = n;
      c->fn = fn;
      c->ctx = ctx;
      atomic_store(&c->finished, 0);
      atomic_store(&c->arrived, 0);
      atomic_store_explicit(&c->claim, (uint64_t)n << 32 | 1, memory_order_release);
      pthread_mutex_lock(&c->mu);
      atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
      for (int i = 1; i < n; i++) pthread_cond_signal(&c->work);
      pthread_mutex_unlock(&c->mu);
      int outer = dyng_thread_slot();
      dyng__set_slot(0);
      fn(ctx, 0);
      dyng__set_slot(outer);
      /* The slots to wait for. */
      int started = n - 1;
      if (!all) {
        uint32_t claimed = (uint32_t)atomic_exchange(&c->claim, 0);
        started = (int)(claimed < (uint32_t)n ? claimed : (uint32_t)n) - 1;
      }
      dyng__spin sp = {0, DYNG__WAIT_SPIN_NS, 0};
      while (atomic_load(&c->finished) < started && dyng__spin_on(&sp)) {
      }
      if (atomic_load(&c->finished) < started) {
        pthread_mutex_lock(&c->mu);
        atomic_store(&c->waiting, 1);
        while (atomic_load(&c->finished) < started) pthread_cond_wait(&c->done, &c->mu);
        atomic_store(&c->waiting, 0);
        pthread_mutex_unlock(&c->mu);
      }
      /* Late workers find no slot. */
      atomic_store(&c->claim, 0);
      pthread_mutex_unlock(&c->busy);
      return n;
    }
    pthread_mutex_unlock(&c->busy);
  }
  if (granted) *granted = 1;
  int outer = dyng_thread_slot();
  dyng__set_slot(0);
  fn(ctx, 0);
  dyng__set_slot(outer);
  return 1;
}

int dyng_barrier_arrive(int n_threads) {
  if (n_threads <= 1) return 1;
  dyng__crew *c = &dyng__the_crew;
  uint64_t g = atomic_load_explicit(&c->gen, memory_order_acquire);
  if (atomic_fetch_add_explicit(&c->arrived, 1, memory_order_acq_rel) == n_threads - 1) {
    atomic_store_explicit(&c->arrived, 0, memory_order_relaxed);
    return 1;
  }
  dyng__await_change(c, &c->gen, g, DYNG__WAIT_SPIN_NS, &c->turn, NULL);
  return 0;
}

void dyng_barrier_release(int n_threads) {
  if (n_threads <= 1) return;
  dyng__crew *c = &dyng__the_crew;
  pthread_mutex_lock(&c->mu);
  atomic_fetch_add_explicit(&c->gen, 1, memory_order_release);
  pthread_cond_broadcast(&c->turn);
  pthread_mutex_unlock(&c->mu);
}

int dyng_run_threads(int n, void (*fn)(void *ctx, int thread), void *ctx, int *granted) {
  return dyng__crew_run(n, 1, fn, ctx, granted);
}

void dyng_team_init(dyng_team *t, uint32_t n_items, uint32_t chunk, int max_threads,
                    const dyng_cancel *cancel) {
  if (!chunk) chunk = 1;
  int n = dyng_threads_now();
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
  /* Fewer threads than asked (the crew busy, or workers not started in
  ** time) leave their chunks to those that run; t->n_threads stays, as
  ** callers size and free per-thread scratch by it. */
  (void)dyng__crew_run(t->n_threads, 0, fn, ctx, NULL);
  return dyng__team_end(t);
}

/* The calling thread's place in team t's loop. */
static int dyng__team_me(const dyng_team *t) {
  int me = t->n_threads > 1 ? dyng_thread_slot() : 0;
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
