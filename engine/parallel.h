/*
** engine/parallel.h: running a loop over items on several threads, and a
** radix sort that runs its passes that way.
**
** A team hands out items 0..n-1 in chunks to however many threads
** dyng_threads() allows; every thread keeps its own scratch and partial
** result, and the first failure (or a stop asked through dyng_cancel) ends
** the work of all of them.  The threads are the engine's own (POSIX
** threads, parallel.c says how they wait): DYNG_THREADS of them, else at
** most OMP_NUM_THREADS, else at most the CPUs the process may run on, a
** loop taking no more than there are cores free when it starts.  In a process
** forked after dyng was loaded everything runs on the calling thread.
*/
#ifndef DYNG_PARALLEL_H
#define DYNG_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/types.h"

/* For a sequential computation's loop: counts calls in *tick and asks
** c->should_stop on every call where the count is a multiple of mask + 1 (a
** power of two), so a poll costs an increment in between.  Nonzero: stop
** now (return DYNG_EINTERRUPTED).  c may be NULL. */
static inline int dyng_poll_stop(const dyng_cancel *c, uint32_t *tick, uint32_t mask) {
  if (!c || !c->should_stop || (++*tick & mask)) return 0;
  return c->should_stop(c->ctx) != 0;
}

/* Threads a parallel loop may use at most: at least 1. */
int dyng_threads(void);

/* Threads a loop starting now gets: dyng_threads(), less when fewer cores
** are free (the machine's online CPUs less its runnable threads, read at
** most every 5 ms) unless DYNG_THREADS pinned the count; at least 1. */
int dyng_threads_now(void);

/* The cores free when `runnable` threads are runnable on n_cpus CPUs, one
** of them the caller and `own` more of them the engine's idle threads:
** from 1 to n_cpus. */
int dyng_free_cores(int n_cpus, long runnable, int own);

/* The calling thread's slot in the loop it runs (0 outside one). */
int dyng_thread_slot(void);

/* Runs fn(ctx, thread) on up to n threads at once, thread 0 the caller,
** and returns when all are done; *granted (when not NULL) is set, before
** any of them starts, to how many run (1 when another loop holds the
** threads).  For work whose threads meet at dyng_barrier_arrive. */
int dyng_run_threads(int n, void (*fn)(void *ctx, int thread), void *ctx, int *granted);

/* A barrier of the n_threads threads of dyng_run_threads: returns 1 on the
** last to arrive, which must then call dyng_barrier_release (the others
** return 0 once it did); work between the two runs alone. */
int dyng_barrier_arrive(int n_threads);
void dyng_barrier_release(int n_threads);

/* Caps dyng_threads() for the whole process at n (0 or less: no cap). */
void dyng_set_max_threads(int n);

/* The most threads one loop runs on. */
#define DYNG_TEAM_MAX_THREADS 512

/* One loop's threads and what they share. */
typedef struct dyng_team {
  int n_threads;             /* threads that run the loop */
  uint32_t n_items;          /* items 0 .. n_items - 1 */
  uint32_t chunk;            /* items handed out at a time */
  _Atomic uint32_t next;     /* the first item not handed out */
  _Atomic uint32_t done;     /* items whose chunk its thread finished */
  _Atomic int rc;            /* the first failure; DYNG_OK while none */
  const dyng_cancel *cancel; /* may be NULL */
  /* Per thread, the size of the chunk it took last: finished when the
  ** thread comes back for another (or the loop ends).  Kept here rather
  ** than in thread-local storage, which the engine's threads would keep
  ** after the extension is unloaded. */
  uint32_t taken[DYNG_TEAM_MAX_THREADS];
} dyng_team;

/* Prepares a team for n_items items handed out `chunk` at a time, on at
** most max_threads threads (0: no limit other than dyng_threads()) and
** never more than there are chunks. */
void dyng_team_init(dyng_team *t, uint32_t n_items, uint32_t chunk, int max_threads,
                    const dyng_cancel *cancel);

/* Runs fn(ctx, thread) at most once per thread, thread = 0 .. t->n_threads
** - 1 (0 is the calling thread, which always runs; a thread that had not
** started when the caller ran out of chunks does not), and returns the
** team's result.  t->n_threads is left as it was. */
int dyng_team_run(dyng_team *t, void (*fn)(void *ctx, int thread), void *ctx);

/* Hands the next chunk [*begin, *end) to the caller: 0 when nothing is
** left or the team failed. */
int dyng_team_take(dyng_team *t, uint32_t *begin, uint32_t *end);

/* Records a failure (the first one wins) and returns the team's result. */
int dyng_team_fail(dyng_team *t, int rc);

/* The team's result so far; on thread 0 it also asks t->cancel, and a stop
** becomes the team's failure DYNG_EINTERRUPTED. */
int dyng_team_check(dyng_team *t, int thread);

/* Runs fn(ctx, begin, end) over the items [0, n) in ranges of `chunk`
** items (0: 1), each starting at a multiple of chunk (the last may be
** shorter), on the engine's threads, the calling one among them; returns
** when every range is done.  fn cannot fail.  A plugin gets it as
** dyng_host.parallel_for (engine/plugin.h). */
void dyng_parallel_ranges(size_t n, size_t chunk, void (*fn)(void *ctx, size_t begin, size_t end),
                          void *ctx);

/* Sorts key[0..n-1] (and val with it, when not NULL) stably by the key's
** bits from begin_bit (0 to 63) up, with the room key_to (val_to) of as
** many: a least-significant-digit radix sort, 8 bits a pass and only over
** the bytes where the keys differ, its passes cut into chunks on the team's
** threads (the result does not depend on how many).  Keys whose lower bits
** are already in order come out sorted by the whole key.  The result is in
** *key (*val): the arrays may have traded places.  Returns DYNG_ENOMEM
** (nothing sorted) when its counts cannot be allocated. */
int dyng_radix_sort(uint64_t **key, uint64_t **key_to, uint32_t **val, uint32_t **val_to, size_t n,
                    int begin_bit);

#endif /* DYNG_PARALLEL_H */
