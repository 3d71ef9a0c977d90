/*
** tests/test_threads.c: many connections on many threads, and fork().
**
** Threads: DYNG_THREADS threads (default 8), each with its own connection
** to one database file in WAL mode, write edges (INSERT, UPDATE, DELETE in
** transactions) and query every function for DYNG_THREAD_STEPS steps
** (default 150) at once.  Every so often a thread checks, inside one read
** transaction, that its graph's shortest paths equal a Dijkstra over the
** rows it sees, that dyng_path and dyng_mosp agree with them, and that its
** incrementally kept cycle count equals a count after a reload.  The first
** use of dyng on every thread at once also races the one-time backend
** discovery.  Run under ThreadSanitizer (configure --enable-tsan) this test
** must report nothing.
**
** Fork: a process that used dyng (queries, a parallel count) forks; the
** child opens its own connection, writes and queries, and its answers are
** checked; the parent's connection is unaffected and sees the child's
** writes.
**
** cmocka's assertions are not thread-safe: worker threads record their
** first failure, and the main thread asserts.
*/
#include "tests/test_util.h"
#include "tests/ref_small.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Under valgrind, a forked child holds what it inherited from the parent
** (the parent's connection, which SQLite forbids the child to touch, other
** threads' stacks) and cannot free it: the child turns valgrind's leak check
** off, and the parent's own check covers the same code. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CHILD_SKIPS_LEAK_CHECK() VALGRIND_CLO_CHANGE("--leak-check=no")
#endif
#endif
#ifndef CHILD_SKIPS_LEAK_CHECK
#define CHILD_SKIPS_LEAK_CHECK() ((void)0)
#endif

#define N_NODES 60

static char g_path[64];

static int env_int(const char *zName, int iDefault) {
  const char *z = getenv(zName);
  return z && atoi(z) > 0 ? atoi(z) : iDefault;
}

/* A worker's connection and its first failure. */
typedef struct worker {
  int id;
  uint64_t seed;
  int steps;
  sqlite3 *db;
  char zFail[512];
  int nChecks, nBusy, nWrites;
} worker;

static void fail_at(worker *w, const char *zWhat, const char *zSql) {
  if (w->zFail[0]) return;
  snprintf(w->zFail, sizeof w->zFail, "thread %d: %s (%s)\n  in: %s", w->id, zWhat,
           w->db ? sqlite3_errmsg(w->db) : "no connection", zSql ? zSql : "");
}

static sqlite3 *open_conn(char *zErrOut, size_t nErrOut) {
  sqlite3 *db = NULL;
  char *zErr = NULL;
  if (sqlite3_open_v2(g_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
    snprintf(zErrOut, nErrOut, "open: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_busy_timeout(db, 30000);
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, getenv("DYNG_EXTENSION"), "sqlite3_dyng_init", &zErr) != SQLITE_OK) {
    snprintf(zErrOut, nErrOut, "load: %s", zErr ? zErr : "?");
    sqlite3_free(zErr);
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

/* Runs SQL; SQLITE_BUSY (after the timeout) counts as "try later". */
static int run_sql(worker *w, const char *zSql) {
  int rc = sqlite3_exec(w->db, zSql, NULL, NULL, NULL);
  if (rc == SQLITE_BUSY) w->nBusy++;
  else if (rc != SQLITE_OK) fail_at(w, "statement failed", zSql);
  return rc;
}

static int query_i64(worker *w, const char *zSql, sqlite3_int64 *pv) {
  sqlite3_stmt *p = NULL;
  int rc = sqlite3_prepare_v2(w->db, zSql, -1, &p, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(p);
  if (rc == SQLITE_ROW) {
    *pv = sqlite3_column_int64(p, 0);
    rc = SQLITE_OK;
  } else if (rc == SQLITE_BUSY) {
    w->nBusy++;
  } else {
    fail_at(w, "query failed", zSql);
  }
  sqlite3_finalize(p);
  return rc;
}

/* Inside one read transaction: dyng_sssp, dyng_path and dyng_mosp against
** the Dijkstra, and the kept triangle count against a reload's. */
static void check_consistent(worker *w, test_rng *r) {
  if (run_sql(w, "BEGIN") != SQLITE_OK) return;
  ref_snapshot s;
  memset(&s, 0, sizeof s);
  int source = (int)test_rng_below(r, N_NODES), target = (int)test_rng_below(r, N_NODES);
  int k = (int)test_rng_below(r, 2);
  char zSql[256];
  sqlite3_int64 nKept = -1, nFresh = -2;
  if (ref_snapshot_read(w->db, "SELECT src, dst, w, c FROM e", &s) != SQLITE_OK) {
    fail_at(w, "reading the edges", "SELECT src, dst, w, c FROM e");
    goto out;
  }
  double dist[REF_MAX_NODES];
  ref_dijkstra(&s, source, k, 0, dist);
  /* dyng_sssp: every node it lists at the right distance, and only those. */
  snprintf(zSql, sizeof zSql, "SELECT node, dist FROM dyng_sssp('g', %d, %d)", source, k);
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(w->db, zSql, -1, &p, NULL) != SQLITE_OK) {
    fail_at(w, "prepare", zSql);
    goto out;
  }
  int nListed = 0, nReached = 0, rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    sqlite3_int64 v = sqlite3_column_int64(p, 0);
    double d = sqlite3_column_double(p, 1);
    nListed++;
    if (v < 0 || v >= N_NODES || fabs(d - dist[v]) > 1e-9) {
      char zWhat[128];
      snprintf(zWhat, sizeof zWhat, "node %lld at %g, the Dijkstra says %g", v, d,
               v >= 0 && v < N_NODES ? dist[v] : NAN);
      fail_at(w, zWhat, zSql);
    }
  }
  sqlite3_finalize(p);
  if (rc != SQLITE_DONE) {
    fail_at(w, "dyng_sssp failed", zSql);
    goto out;
  }
  for (int v = 0; v < N_NODES; v++) nReached += !isinf(dist[v]);
  /* A source with no edges left is no node of the graph: no rows. */
  if (nListed != nReached && !(nListed == 0 && nReached == 1)) {
    char zWhat[96];
    snprintf(zWhat, sizeof zWhat, "%d nodes listed, %d reached", nListed, nReached);
    fail_at(w, zWhat, zSql);
  }
  /* dyng_path ends at the target's distance; dyng_mosp is a path too. */
  sqlite3_int64 nSteps = 0;
  snprintf(zSql, sizeof zSql,
           "SELECT coalesce(max(agg_cost), -1) * 1000000 FROM dyng_path('g', %d, %d, %d)", source,
           target, k);
  if (query_i64(w, zSql, &nSteps) != SQLITE_OK) goto out;
  double want = source == target && nListed == 0 ? -1 : isinf(dist[target]) ? -1 : dist[target];
  if (llround(want * 1000000) != nSteps) fail_at(w, "dyng_path's cost is not the distance", zSql);
  snprintf(zSql, sizeof zSql, "SELECT count(*) FROM dyng_mosp('g', %d, %d)", source, target);
  if (query_i64(w, zSql, &nSteps) != SQLITE_OK) goto out;
  if ((nSteps > 0) != (want >= 0)) fail_at(w, "dyng_mosp disagrees with reachability", zSql);
  /* The kept count, updated batch by batch, against one counted again. */
  if (query_i64(w, "SELECT dyng_cycle_count('u', 3)", &nKept) != SQLITE_OK) goto out;
  if (query_i64(w, "SELECT dyng_update('u', 'reload') IS NOT NULL", &nFresh) != SQLITE_OK) goto out;
  if (query_i64(w, "SELECT dyng_cycle_count('u', 3)", &nFresh) != SQLITE_OK) goto out;
  if (nKept != nFresh) fail_at(w, "kept triangle count differs from a recount", "dyng_cycle_count");
  w->nChecks++;
out:
  ref_snapshot_free(&s);
  sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
}

/* One random write, in its own transaction. */
static void random_write(worker *w, test_rng *r) {
  char zSql[256];
  int a = (int)test_rng_below(r, N_NODES), b = (int)test_rng_below(r, N_NODES);
  switch (test_rng_below(r, 4)) {
  case 0:
  case 1:
    snprintf(zSql, sizeof zSql, "INSERT INTO e VALUES (%d, %d, %d, %d)", a, b,
             1 + (int)test_rng_below(r, 20), 1 + (int)test_rng_below(r, 20));
    break;
  case 2:
    snprintf(zSql, sizeof zSql,
             "DELETE FROM e WHERE rowid = (SELECT rowid FROM e ORDER BY random() LIMIT 1)");
    break;
  default:
    snprintf(zSql, sizeof zSql,
             "BEGIN IMMEDIATE; UPDATE e SET w = %d WHERE rowid IN "
             "(SELECT rowid FROM e ORDER BY random() LIMIT 2); DELETE FROM e WHERE src = %d AND "
             "dst = %d; COMMIT",
             1 + (int)test_rng_below(r, 20), a, b);
  }
  if (run_sql(w, zSql) == SQLITE_OK) w->nWrites++;
  else sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Every other function once: the answers are not checked here, only that
** they run beside the other threads. */
static void random_query(worker *w, test_rng *r) {
  static const char *const azSql[] = {
      "SELECT count(*) FROM dyng_sssp('g', %d)",
      "SELECT count(*) FROM dyng_pareto('g', %d, 7)",
      "SELECT dyng_cycle_count('g', 4, 'directed') >= 0 AND %d >= 0",
      "SELECT length(dyng_config()) > %d",
      "SELECT dyng_update('g') IS NOT NULL AND %d >= 0",
      "SELECT count(*) FROM g WHERE node = %d",
  };
  char zSql[160];
  snprintf(zSql, sizeof zSql, azSql[test_rng_below(r, sizeof azSql / sizeof *azSql)],
           (int)test_rng_below(r, N_NODES));
  sqlite3_int64 v;
  query_i64(w, zSql, &v);
}

static pthread_barrier_t g_start;

static void *worker_main(void *arg) {
  worker *w = arg;
  test_rng r;
  test_rng_seed(&r, w->seed);
  /* Every thread's first dyng call at once: one discovery, one choice. */
  pthread_barrier_wait(&g_start);
  char zErr[256];
  w->db = open_conn(zErr, sizeof zErr);
  if (!w->db) {
    fail_at(w, zErr, NULL);
    return NULL;
  }
  sqlite3_int64 v;
  query_i64(w, "SELECT length(dyng_config('backend')) > 0", &v);
  for (int i = 0; i < w->steps && !w->zFail[0]; i++) {
    uint64_t x = test_rng_below(&r, 10);
    if (x < 4) random_write(w, &r);
    else if (x < 8) random_query(w, &r);
    else check_consistent(w, &r);
  }
  if (!w->zFail[0]) check_consistent(w, &r);
  sqlite3_close(w->db);
  w->db = NULL;
  return NULL;
}

static void exec_main(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) fail_msg("%s\n  in: %s", zErr, zSql);
}

/* A fresh database file with the edge table and two graphs over it, each
** created with zOptions (", backend=cpu", say) after its own. */
static sqlite3 *create_database(uint64_t seed, const char *zOptions) {
  strcpy(g_path, "/tmp/dyng-threads-XXXXXX");
  int fd = mkstemp(g_path);
  assert_true(fd >= 0);
  close(fd);
  char zErr[256];
  sqlite3 *db = open_conn(zErr, sizeof zErr);
  if (!db) fail_msg("%s", zErr);
  exec_main(db, "PRAGMA journal_mode=WAL;"
                "CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, w REAL, c REAL);");
  test_rng r;
  test_rng_seed(&r, seed);
  exec_main(db, "BEGIN");
  for (int i = 0; i < 5 * N_NODES; i++) {
    char zSql[128];
    snprintf(zSql, sizeof zSql, "INSERT INTO e VALUES (%d, %d, %d, %d)", (int)test_rng_below(&r, N_NODES),
             (int)test_rng_below(&r, N_NODES), 1 + (int)test_rng_below(&r, 20),
             1 + (int)test_rng_below(&r, 20));
    exec_main(db, zSql);
  }
  exec_main(db, "COMMIT");
  char zSql[256];
  snprintf(zSql, sizeof zSql,
           "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,c'%s);"
           "CREATE VIRTUAL TABLE u USING dyng(edges=e, directed=0%s);",
           zOptions, zOptions);
  exec_main(db, zSql);
  return db;
}

static void remove_database(void) {
  char z[80];
  unlink(g_path);
  snprintf(z, sizeof z, "%s-wal", g_path);
  unlink(z);
  snprintf(z, sizeof z, "%s-shm", g_path);
  unlink(z);
}

static void test_many_connections_on_many_threads(void **state) {
  (void)state;
  uint64_t seed = test_seed();
  int n = env_int("DYNG_THREADS", 8), steps = env_int("DYNG_THREAD_STEPS", 150);
  printf("# %d threads x %d steps, one connection each, WAL\n", n, steps);
  /* Graphs on the backend the process chooses: on a GPU machine, eight
  ** connections share the CUDA plugin. */
  sqlite3 *db = create_database(seed, "");
  worker *aw = calloc((size_t)n, sizeof *aw);
  pthread_t *at = calloc((size_t)n, sizeof *at);
  assert_int_equal(pthread_barrier_init(&g_start, NULL, (unsigned)n), 0);
  for (int i = 0; i < n; i++) {
    aw[i].id = i;
    aw[i].seed = seed * 1000003 + (uint64_t)i;
    aw[i].steps = steps;
    assert_int_equal(pthread_create(&at[i], NULL, worker_main, &aw[i]), 0);
  }
  int nChecks = 0, nBusy = 0, nWrites = 0;
  for (int i = 0; i < n; i++) pthread_join(at[i], NULL);
  pthread_barrier_destroy(&g_start);
  for (int i = 0; i < n; i++) {
    if (aw[i].zFail[0]) fail_msg("%s", aw[i].zFail);
    nChecks += aw[i].nChecks;
    nBusy += aw[i].nBusy;
    nWrites += aw[i].nWrites;
  }
  printf("# %d writes, %d consistency checks, %d busy retries\n", nWrites, nChecks, nBusy);
  /* Every thread got through its checks, and the writes happened. */
  assert_true(nChecks >= n);
  assert_true(nWrites > 0);
  /* The creating connection, idle all along, catches up too. */
  worker main = {.id = -1, .db = db};
  test_rng r;
  test_rng_seed(&r, seed);
  for (int i = 0; i < 5 && !main.zFail[0]; i++) check_consistent(&main, &r);
  if (main.zFail[0]) fail_msg("%s", main.zFail);
  free(aw);
  free(at);
  sqlite3_close(db);
  remove_database();
}

static void test_forked_child_uses_dyng_and_parent_is_unaffected(void **state) {
  (void)state;
  uint64_t seed = test_seed();
  /* On the CPU: a child forked after its parent started CUDA cannot use
  ** CUDA (the driver does not survive fork; dyng's error says so), and on
  ** a GPU machine the test above may have started it.  tests/test_gpu
  ** checks that a child forked before CUDA started can use it. */
  sqlite3 *db = create_database(seed, ", backend=cpu");
  worker parent = {.id = -1, .db = db};
  test_rng r;
  test_rng_seed(&r, seed);
  check_consistent(&parent, &r);
  sqlite3_int64 n4 = 0;
  assert_int_equal(query_i64(&parent, "SELECT dyng_cycle_count('g', 4, 'directed')", &n4), SQLITE_OK);
  if (parent.zFail[0]) fail_msg("%s", parent.zFail);
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* The child: its own connection, its own writes and checks. */
    CHILD_SKIPS_LEAK_CHECK();
    worker child = {.id = 0};
    char zErr[256];
    child.db = open_conn(zErr, sizeof zErr);
    if (!child.db) {
      fprintf(stderr, "child: %s\n", zErr);
      _exit(2);
    }
    test_rng cr;
    test_rng_seed(&cr, seed + 1);
    sqlite3_int64 c4 = -1;
    query_i64(&child, "SELECT dyng_cycle_count('g', 4, 'directed')", &c4);
    if (c4 != n4) fail_at(&child, "the child counts other 4-cycles than the parent", NULL);
    for (int i = 0; i < 20 && !child.zFail[0]; i++) {
      random_write(&child, &cr);
      check_consistent(&child, &cr);
    }
    if (child.zFail[0]) fprintf(stderr, "child: %s\n", child.zFail);
    sqlite3_close(child.db);
    _exit(child.zFail[0] ? 1 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* The parent's connection sees the child's writes through the log. */
  for (int i = 0; i < 5 && !parent.zFail[0]; i++) check_consistent(&parent, &r);
  if (parent.zFail[0]) fail_msg("%s", parent.zFail);
  sqlite3_close(db);
  remove_database();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_connections_on_many_threads),
      cmocka_unit_test(test_forked_child_uses_dyng_and_parent_is_unaffected),
  };
  return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
