/*
** tests/test_parallel.c: engine/parallel.c without SQLite: the team (every
** item handed out once, the first failure wins, a stop asked through
** dyng_cancel), the engine's threads (a barrier's rounds, loops started
** from loops and from several threads at once, idle threads that hold no
** core, fewer threads on a busy machine), the radix sort against qsort,
** and the fork guard (a forked child runs every loop on one thread).
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/parallel.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int teardown(void **state) {
  (void)state;
  dyng_set_max_threads(0);
  return 0;
}

/* ---- the team ---------------------------------------------------------- */

typedef struct count_job {
  dyng_team team;
  _Atomic uint32_t *taken; /* per item: times handed out */
  uint32_t fail_at;        /* the item whose thread fails; UINT32_MAX: none */
  int fail_rc;
  _Atomic uint64_t sum;    /* of the items' values, i * 3 + 1 */
} count_job;

static void count_items(void *ctx, int thread) {
  count_job *j = ctx;
  uint32_t b, e;
  uint64_t part = 0;
  while (dyng_team_check(&j->team, thread) == DYNG_OK && dyng_team_take(&j->team, &b, &e)) {
    for (uint32_t i = b; i < e; i++) {
      atomic_fetch_add(&j->taken[i], 1);
      part += (uint64_t)i * 3 + 1;
      if (i == j->fail_at) dyng_team_fail(&j->team, j->fail_rc);
    }
  }
  atomic_fetch_add(&j->sum, part);
}

static void run_count(count_job *j, uint32_t n, uint32_t chunk, int max_threads,
                      const dyng_cancel *cancel, int *rc) {
  j->taken = calloc(n ? n : 1, sizeof *j->taken);
  assert_non_null(j->taken);
  atomic_init(&j->sum, 0);
  dyng_team_init(&j->team, n, chunk, max_threads, cancel);
  *rc = dyng_team_run(&j->team, count_items, j);
}

static void test_team_hands_out_every_item_once(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0);
  for (int round = 0; round < 40; round++) {
    uint32_t n = (uint32_t)test_rng_below(&r, 20000);
    uint32_t chunk = 1 + (uint32_t)test_rng_below(&r, 700);
    int max_threads = (int)test_rng_below(&r, 5);
    count_job j = {.fail_at = UINT32_MAX};
    int rc;
    run_count(&j, n, chunk, max_threads, NULL, &rc);
    assert_int_equal(rc, DYNG_OK);
    uint64_t want = 0;
    for (uint32_t i = 0; i < n; i++) {
      assert_int_equal(atomic_load(&j.taken[i]), 1);
      want += (uint64_t)i * 3 + 1;
    }
    assert_true(atomic_load(&j.sum) == want);
    assert_true(j.team.n_threads >= 1);
    if (max_threads > 0) assert_true(j.team.n_threads <= max_threads);
    free(j.taken);
  }
}

/* What dyng_parallel_ranges' ranges saw. */
typedef struct range_job {
  size_t chunk;
  _Atomic uint32_t *taken;  /* per item: times passed */
  _Atomic uint32_t misplaced; /* ranges not starting at a multiple of chunk,
                                 or longer than it */
} range_job;

static void count_range(void *ctx, size_t begin, size_t end) {
  range_job *j = ctx;
  if (begin % j->chunk || end - begin > j->chunk || end <= begin) atomic_fetch_add(&j->misplaced, 1);
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&j->taken[i], 1);
}

static void test_parallel_ranges_cover_every_item_once(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0);
  for (int round = 0; round < 60; round++) {
    /* Empty, one short range, exact multiples and ragged ends. */
    size_t n = round == 0 ? 0 : round == 1 ? 5 : (size_t)test_rng_below(&r, 30000);
    size_t chunk = round == 2 ? 0 : 1 + (size_t)test_rng_below(&r, 900);
    if (round == 3) n = chunk * 17;
    dyng_set_max_threads(round % 3 == 0 ? 1 : 0);
    range_job j = {.chunk = chunk ? chunk : 1};
    j.taken = calloc(n ? n : 1, sizeof *j.taken);
    assert_non_null(j.taken);
    atomic_init(&j.misplaced, 0);
    dyng_parallel_ranges(n, chunk, count_range, &j);
    assert_int_equal(atomic_load(&j.misplaced), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(atomic_load(&j.taken[i]), 1);
    free(j.taken);
  }
}

static void test_team_never_runs_more_threads_than_chunks(void **state) {
  (void)state;
  dyng_team t;
  dyng_team_init(&t, 10, 4, 0, NULL); /* 3 chunks */
  assert_true(t.n_threads >= 1 && t.n_threads <= 3);
  dyng_team_init(&t, 0, 4, 0, NULL);
  assert_int_equal(t.n_threads, 1);
}

static void test_team_stops_at_the_first_failure(void **state) {
  (void)state;
  count_job j = {.fail_at = 5000, .fail_rc = DYNG_ENOMEM};
  int rc;
  run_count(&j, 100000, 64, 0, NULL, &rc);
  assert_int_equal(rc, DYNG_ENOMEM);
  assert_int_equal(atomic_load(&j.taken[5000]), 1);
  /* Later failures do not replace the first. */
  assert_int_equal(dyng_team_fail(&j.team, DYNG_EINVAL), DYNG_ENOMEM);
  /* Nothing is handed out after it. */
  uint32_t b, e;
  assert_int_equal(dyng_team_take(&j.team, &b, &e), 0);
  free(j.taken);
}

static int stop_after(void *ctx) {
  int *calls = ctx;
  return ++*calls >= 3;
}

static void test_team_stops_when_cancel_asks(void **state) {
  (void)state;
  int calls = 0;
  dyng_cancel cancel = {stop_after, &calls, NULL};
  count_job j = {.fail_at = UINT32_MAX};
  int rc;
  run_count(&j, 1000000, 16, 0, &cancel, &rc);
  assert_int_equal(rc, DYNG_EINTERRUPTED);
  assert_true(calls >= 3);
  uint64_t n_taken = 0;
  for (uint32_t i = 0; i < 1000000; i++) n_taken += atomic_load(&j.taken[i]);
  assert_true(n_taken < 1000000); /* it did stop early */
  free(j.taken);
}

/* The progress a team reports counts the items of finished chunks (a
** chunk is finished when its thread comes back for another, or the loop
** runs to its end), never those merely handed out: a stop leaves the chunk
** a thread holds uncounted.  One thread, chunks of 10; the stop comes while
** the chunk from 30 is held (40 handed out), and the last report, after
** the loop, says 30. */
typedef struct progress_seen {
  uint64_t done, total;
  int n_calls;
  const dyng_team *team;
} progress_seen;

static void note_progress(void *ctx, uint64_t done, uint64_t total) {
  progress_seen *s = ctx;
  s->done = done, s->total = total, s->n_calls++;
}

static int stop_once_40_taken(void *ctx) {
  progress_seen *s = ctx;
  return atomic_load(&((dyng_team *)s->team)->next) >= 40;
}

static void test_team_progress_counts_finished_items(void **state) {
  (void)state;
  progress_seen seen = {0};
  dyng_cancel cancel = {stop_once_40_taken, &seen, note_progress};
  count_job j = {.fail_at = UINT32_MAX};
  seen.team = &j.team;
  int rc;
  run_count(&j, 100, 10, 1, &cancel, &rc);
  assert_int_equal(rc, DYNG_EINTERRUPTED);
  assert_true(seen.n_calls >= 2);
  assert_int_equal(seen.total, 100);
  assert_int_equal(seen.done, 30);
  free(j.taken);
  /* Run to its end, every item is finished. */
  dyng_cancel quiet = {NULL, &seen, note_progress};
  count_job k = {.fail_at = UINT32_MAX};
  run_count(&k, 100, 10, 0, &quiet, &rc);
  assert_int_equal(rc, DYNG_OK);
  assert_int_equal(seen.done, 100);
  free(k.taken);
}

static void test_poll_stop_asks_once_per_period(void **state) {
  (void)state;
  int calls = 0;
  dyng_cancel cancel = {stop_after, &calls, NULL};
  uint32_t tick = 0;
  int stopped_at = -1;
  for (int i = 1; i <= 64 && stopped_at < 0; i++)
    if (dyng_poll_stop(&cancel, &tick, 7)) stopped_at = i;
  assert_int_equal(stopped_at, 24); /* asked at ticks 8, 16, 24 */
  assert_int_equal(dyng_poll_stop(NULL, &tick, 0), 0);
}

/* ---- the radix sort ---------------------------------------------------- */

typedef struct pair {
  uint64_t key;
  uint32_t val;
} pair;

static int g_begin_bit;

/* By the key's bits from g_begin_bit up, then by original place: a
** stable sort. */
static int pair_cmp(const void *pa, const void *pb) {
  const pair *a = pa, *b = pb;
  uint64_t ka = a->key >> g_begin_bit, kb = b->key >> g_begin_bit;
  if (ka != kb) return ka < kb ? -1 : 1;
  return a->val < b->val ? -1 : a->val > b->val;
}

static void check_radix(test_rng *r, size_t n, int begin_bit, int key_bits, int with_val) {
  uint64_t *key = malloc((n ? n : 1) * sizeof *key), *key_to = malloc((n ? n : 1) * sizeof *key);
  uint32_t *val = malloc((n ? n : 1) * sizeof *val), *val_to = malloc((n ? n : 1) * sizeof *val);
  pair *ref = malloc((n ? n : 1) * sizeof *ref);
  assert_true(key && key_to && val && val_to && ref);
  uint64_t mask = key_bits >= 64 ? UINT64_MAX : (((uint64_t)1 << key_bits) - 1);
  for (size_t i = 0; i < n; i++) {
    key[i] = test_rng_next(r) & mask;
    val[i] = (uint32_t)i;
    ref[i].key = key[i];
    ref[i].val = (uint32_t)i;
  }
  g_begin_bit = begin_bit;
  qsort(ref, n, sizeof *ref, pair_cmp);
  int rc = dyng_radix_sort(&key, &key_to, with_val ? &val : NULL, with_val ? &val_to : NULL, n,
                           begin_bit);
  assert_int_equal(rc, DYNG_OK);
  for (size_t i = 0; i < n; i++) {
    assert_true(key[i] == ref[i].key);
    if (with_val) assert_int_equal(val[i], ref[i].val);
  }
  free(key);
  free(key_to);
  free(val);
  free(val_to);
  free(ref);
}

static void test_radix_sort_matches_a_stable_qsort(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0x5a5a);
  static const size_t sizes[] = {0, 1, 2, 7, 255, 256, 257, 5000, 70001, 300000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int round = 0; round < 3; round++) {
      int key_bits = 1 + (int)test_rng_below(&r, 64);
      int begin_bit = (int)test_rng_below(&r, (uint64_t)key_bits);
      check_radix(&r, sizes[s], begin_bit, key_bits, round != 2);
    }
}

static void test_radix_sort_is_the_same_on_one_thread(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0xa5a5);
  dyng_set_max_threads(1);
  check_radix(&r, 200000, 8, 40, 1);
  dyng_set_max_threads(0);
  check_radix(&r, 200000, 0, 64, 1);
}


/* ---- the engine's threads ---------------------------------------------- */

static void test_free_cores_count_the_others(void **state) {
  (void)state;
  /* Only the reader runs: every core is free. */
  assert_int_equal(dyng_free_cores(16, 1, 0), 16);
  /* Five other threads run. */
  assert_int_equal(dyng_free_cores(16, 6, 0), 11);
  /* The engine's own idle threads polling are not others. */
  assert_int_equal(dyng_free_cores(16, 6, 3), 14);
  /* As many busy threads as cores, or more: the caller alone. */
  assert_int_equal(dyng_free_cores(16, 17, 0), 1);
  assert_int_equal(dyng_free_cores(2, 40, 0), 1);
  /* Nonsense (more own threads than runnable) leaves every core. */
  assert_int_equal(dyng_free_cores(4, 1, 9), 4);
}

/* Rounds at a barrier: each thread adds its mark, and the last to arrive
** checks that every thread's mark of this round is in and starts the next. */
typedef struct rounds_job {
  int n;                   /* threads granted */
  int rounds;
  _Atomic uint64_t marks;  /* this round's */
  int round;               /* written by the round's last thread */
  _Atomic int bad;
  _Atomic int ran[8];      /* per slot: rounds it passed */
} rounds_job;

static void run_rounds(void *ctx, int thread) {
  rounds_job *j = ctx;
  for (;;) {
    int r = j->round;
    if (r == j->rounds) break;
    atomic_fetch_add(&j->marks, (uint64_t)1 << (thread * 8));
    atomic_fetch_add(&j->ran[thread], 1);
    if (dyng_barrier_arrive(j->n)) {
      uint64_t want = 0;
      for (int t = 0; t < j->n; t++) want += (uint64_t)1 << (t * 8);
      if (atomic_load(&j->marks) != want) atomic_store(&j->bad, 1);
      atomic_store(&j->marks, 0);
      j->round = r + 1;
      dyng_barrier_release(j->n);
    }
  }
}

static void rounds_init(rounds_job *j, int rounds) {
  memset(j, 0, sizeof *j);
  j->rounds = rounds;
  atomic_init(&j->marks, 0);
  atomic_init(&j->bad, 0);
  for (int t = 0; t < 8; t++) atomic_init(&j->ran[t], 0);
}

static void test_barrier_rounds_see_every_thread(void **state) {
  (void)state;
  for (int want = 1; want <= 8; want++) {
    rounds_job j;
    rounds_init(&j, 100);
    int ran = dyng_run_threads(want, run_rounds, &j, &j.n);
    assert_int_equal(ran, j.n);
    assert_true(j.n >= 1 && j.n <= want);
    assert_int_equal(atomic_load(&j.bad), 0);
    assert_int_equal(j.round, 100);
    for (int t = 0; t < j.n; t++) assert_int_equal(atomic_load(&j.ran[t]), 100);
  }
}

/* A team whose every item runs a team of its own (the inner loops find the
** threads taken and run on their calling thread). */
typedef struct nested_job {
  dyng_team team;
  _Atomic uint32_t *taken; /* per inner item, over all outer items */
  uint32_t n_inner;
} nested_job;

static void inner_items(void *ctx, int thread) {
  count_job *c = ctx;
  uint32_t b, e;
  (void)thread;
  while (dyng_team_take(&c->team, &b, &e))
    for (uint32_t i = b; i < e; i++) atomic_fetch_add(&c->taken[i], 1);
}

static void outer_items(void *ctx, int thread) {
  nested_job *j = ctx;
  uint32_t b, e;
  (void)thread;
  while (dyng_team_take(&j->team, &b, &e))
    for (uint32_t i = b; i < e; i++) {
      count_job c = {.taken = j->taken, .fail_at = UINT32_MAX};
      dyng_team_init(&c.team, j->n_inner, 7, 0, NULL);
      if (dyng_team_run(&c.team, inner_items, &c) != DYNG_OK) fail_msg("inner loop failed");
    }
}

static void test_loops_inside_loops_cover_every_item(void **state) {
  (void)state;
  nested_job j = {.n_inner = 3000};
  j.taken = calloc(j.n_inner, sizeof *j.taken);
  assert_non_null(j.taken);
  dyng_team_init(&j.team, 40, 1, 0, NULL);
  assert_int_equal(dyng_team_run(&j.team, outer_items, &j), DYNG_OK);
  for (uint32_t i = 0; i < j.n_inner; i++) assert_int_equal(atomic_load(&j.taken[i]), 40);
  free(j.taken);
}

/* Loops started from several threads at once. */
static void *loops_from_a_thread(void *arg) {
  int *ok = arg;
  for (int round = 0; round < 30; round++) {
    count_job j = {.fail_at = UINT32_MAX};
    int rc;
    run_count(&j, 20000, 13, 0, NULL, &rc);
    for (uint32_t i = 0; i < 20000; i++)
      if (atomic_load(&j.taken[i]) != 1) rc = DYNG_EINVAL;
    free(j.taken);
    if (rc != DYNG_OK) *ok = 0;
  }
  return NULL;
}

static void test_loops_from_many_threads_at_once(void **state) {
  (void)state;
  pthread_t th[4];
  int ok[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, loops_from_a_thread, &ok[i]), 0);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_true(ok[i]);
  }
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

/* After a loop the threads wait a moment and then sleep: over 200 ms of
** the caller's sleep the process uses next to no CPU time. */
/* Jobs of alternating sizes, each slot's runs counted per job: a worker
** left over from a larger job must never run a slot of a smaller one or a
** later one. */
enum { SIZED_JOBS = 600 };
static _Atomic uint8_t sized_runs[SIZED_JOBS][8];

typedef struct sized_job {
  int job;
} sized_job;

static void count_slot(void *ctx, int thread) {
  sized_job *j = ctx;
  if (thread >= 0 && thread < 8) atomic_fetch_add(&sized_runs[j->job][thread], 1);
}

static void test_jobs_of_changing_sizes_run_each_slot_once(void **state) {
  (void)state;
  int granted[SIZED_JOBS];
  for (int job = 0; job < SIZED_JOBS; job++) {
    sized_job j = {job};
    int want = job % 3 == 0 ? 8 : job % 3 == 1 ? 2 : 5;
    (void)dyng_run_threads(want, count_slot, &j, &granted[job]);
  }
  /* Late runs would land after their job returned: look at every job now. */
  for (int job = 0; job < SIZED_JOBS; job++)
    for (int t = 0; t < 8; t++) {
      int want = t < granted[job] ? 1 : 0;
      if (atomic_load(&sized_runs[job][t]) != want)
        fail_msg("job %d (%d threads): slot %d ran %d times", job, granted[job], t, atomic_load(&sized_runs[job][t]));
    }
}

static void test_idle_threads_hold_no_core(void **state) {
  (void)state;
  int ran = 0;
  rounds_job j;
  rounds_init(&j, 50);
  ran = dyng_run_threads(8, run_rounds, &j, &j.n);
  assert_true(ran >= 1);
  double before = cpu_seconds();
  struct timespec ts = {0, 200 * 1000 * 1000};
  nanosleep(&ts, NULL);
  double used = cpu_seconds() - before;
  if (used > 0.05) fail_msg("%.1f ms of CPU time while idle for 200 ms (%d threads)", used * 1e3, ran);
}

/* With a busy process on every CPU a loop runs on the caller alone (unless
** DYNG_THREADS pinned the count). */
static void test_busy_machine_gets_one_thread(void **state) {
  (void)state;
  long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (getenv("DYNG_THREADS") || n_cpus < 1 || n_cpus > 64 || access("/proc/loadavg", R_OK) != 0) {
    print_message("# DYNG_THREADS set, or no /proc/loadavg, or over 64 CPUs: nothing to check\n");
    return;
  }
  pid_t kids[64];
  long n_kids = 0;
  for (; n_kids < n_cpus; n_kids++) {
    kids[n_kids] = fork();
    if (kids[n_kids] < 0) break;
    if (kids[n_kids] == 0) {
      /* Gone in 20 s even if the test is killed before it kills them. */
      alarm(20);
      for (volatile uint64_t x = 0;; x++) {
      }
    }
  }
  if (n_kids < n_cpus) {
    for (long i = 0; i < n_kids; i++) kill(kids[i], SIGKILL);
    for (long i = 0; i < n_kids; i++) waitpid(kids[i], NULL, 0);
    fail_msg("fork failed after %ld children", n_kids);
  }
  /* Past the 5 ms between readings, and the children on their cores. */
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  int now = dyng_threads_now();
  dyng_team t;
  dyng_team_init(&t, 100000, 16, 0, NULL);
  for (long i = 0; i < n_cpus; i++) kill(kids[i], SIGKILL);
  for (long i = 0; i < n_cpus; i++) waitpid(kids[i], NULL, 0);
  assert_int_equal(now, 1);
  assert_int_equal(t.n_threads, 1);
}

/* ---- the fork guard ---------------------------------------------------- */

static void test_forked_child_runs_loops_on_one_thread(void **state) {
  (void)state;
  int parent_threads = dyng_threads();
  assert_true(parent_threads >= 1);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* The child: exit status 0 when every check holds. */
    if (dyng_threads() != 1) _exit(1);
    count_job j = {.fail_at = UINT32_MAX};
    j.taken = calloc(50000, sizeof *j.taken);
    if (!j.taken) _exit(2);
    atomic_init(&j.sum, 0);
    dyng_team_init(&j.team, 50000, 16, 0, NULL);
    if (j.team.n_threads != 1) _exit(3);
    if (dyng_team_run(&j.team, count_items, &j) != DYNG_OK) _exit(4);
    for (uint32_t i = 0; i < 50000; i++)
      if (atomic_load(&j.taken[i]) != 1) _exit(5);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* The parent keeps its threads. */
  assert_int_equal(dyng_threads(), parent_threads);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_team_hands_out_every_item_once, teardown),
      cmocka_unit_test_teardown(test_team_never_runs_more_threads_than_chunks, teardown),
      cmocka_unit_test_teardown(test_parallel_ranges_cover_every_item_once, teardown),
      cmocka_unit_test_teardown(test_team_stops_at_the_first_failure, teardown),
      cmocka_unit_test_teardown(test_team_stops_when_cancel_asks, teardown),
      cmocka_unit_test_teardown(test_team_progress_counts_finished_items, teardown),
      cmocka_unit_test_teardown(test_poll_stop_asks_once_per_period, teardown),
      cmocka_unit_test_teardown(test_radix_sort_matches_a_stable_qsort, teardown),
      cmocka_unit_test_teardown(test_radix_sort_is_the_same_on_one_thread, teardown),
      cmocka_unit_test_teardown(test_forked_child_runs_loops_on_one_thread, teardown),
      cmocka_unit_test_teardown(test_free_cores_count_the_others, teardown),
      cmocka_unit_test_teardown(test_barrier_rounds_see_every_thread, teardown),
      cmocka_unit_test_teardown(test_loops_inside_loops_cover_every_item, teardown),
      cmocka_unit_test_teardown(test_loops_from_many_threads_at_once, teardown),
      cmocka_unit_test_teardown(test_jobs_of_changing_sizes_run_each_slot_once, teardown),
      cmocka_unit_test_teardown(test_idle_threads_hold_no_core, teardown),
      cmocka_unit_test_teardown(test_busy_machine_gets_one_thread, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
