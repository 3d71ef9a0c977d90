/*
** tests/test_oom.c: every allocation of a session of dyng fails, one at a
** time.
**
** dyng is linked into this program (its sources, registered with
** sqlite3_auto_extension), so that both allocators can be made to fail:
** SQLite's, through a SQLITE_CONFIG_MALLOC wrapper (which dyng's own
** sqlite3_malloc calls also go through), and the engine's, through its seam
** (engine/alloc.h).  A scenario of SQL statements covering every function
** (CREATE, queries of each kind, writes, a rolled-back transaction,
** dyng_update, dyng_read_edges, dyng_config) is run once to count the
** allocations it makes, then again with the n-th SQLite allocation failing
** once, with SQLite's allocations failing from the n-th on, and with the
** engine's failing from the n-th on, for every n = 0, 1, 2, ... up to that
** count.  DYNG_OOM_RUNS caps the runs per sweep (0, the default: every n;
** N: N runs spread over the range);
** DYNG_OOM_FROM starts at another n, and DYNG_OOM_TRACE prints every
** statement's outcome, to replay a failure.
**
** In every run each statement must succeed, fail with SQLITE_NOMEM, or fail
** with a message that says it ran out of memory; afterwards, with nothing
** failing any more, every graph must equal its table (shortest paths in
** both objectives against a Dijkstra over the rows, a kept triangle count
** against a recount), the connection must close with no SQLite allocation
** left, and LeakSanitizer / valgrind see the engine's.
*/
#include "tests/test_util.h"
#include "tests/ref_small.h"

#include "engine/alloc.h"
#include "engine/parallel.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

int sqlite3_dyng_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#define N_NODES 12

/* ---- SQLite's allocator, wrapped ----------------------------------------- */

static sqlite3_mem_methods g_orig;
static long g_fail_at = -1;     /* the allocation that fails (-1: none) */
static int g_fail_on;           /* and every one after it, too */
static long g_count;            /* allocations since the counter was reset */
static long g_live;             /* allocations not yet freed */

/* The allocation being counted now fails. */
static int failing(void) {
  long i = g_count++;
  return g_fail_at >= 0 && (i == g_fail_at || (g_fail_on && i > g_fail_at));
}

static void *oom_malloc(int n) {
  if (failing()) return NULL;
  void *p = g_orig.xMalloc(n);
  if (p) g_live++;
  return p;
}

static void oom_free(void *p) {
  if (p) g_live--;
  g_orig.xFree(p);
}

static void *oom_realloc(void *p, int n) {
  if (failing()) return NULL;
  return g_orig.xRealloc(p, n);
}

static int oom_size(void *p) { return g_orig.xSize(p); }
static int oom_roundup(int n) { return g_orig.xRoundup(n); }
static int oom_init(void *p) { return g_orig.xInit(p); }
static void oom_shutdown(void *p) { g_orig.xShutdown(p); }

static int group_setup(void **state) {
  (void)state;
  sqlite3_shutdown();
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_orig) != SQLITE_OK) return -1;
  sqlite3_mem_methods m = {oom_malloc, oom_free, oom_realloc, oom_size, oom_roundup, oom_init,
                           oom_shutdown, NULL};
  /* No lookaside: every allocation of a connection goes to the wrapper. */
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK) return -1;
  if (sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0) != SQLITE_OK) return -1;
  if (sqlite3_initialize() != SQLITE_OK) return -1;
  sqlite3_auto_extension((void (*)(void))sqlite3_dyng_init);
  /* Allocation counts must not depend on how many threads a count uses. */
  dyng_set_max_threads(1);
  /* The allocators under test are the host's: the CPU backend, also on a
  ** GPU machine and in a GPU test run. */
  setenv("DYNG_CPU_ONLY", "1", 1);
  unsetenv("DYNG_REQUIRE_CUDA");
  return 0;
}

/* ---- the scenario ---------------------------------------------------------- */

static char g_edges_file[64];

/* Statements of the scenario, run one after the other on one connection. */
static const char *const g_script[] = {
    "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,c')",
    "SELECT count(*) FROM dyng_sssp('g', 0)",
    "SELECT sum(agg_cost) FROM dyng_path('g', 0, 7, 'c')",
    "INSERT INTO e VALUES (3, 9, 2, 7), (9, 10, 1, 1), (11, 0, 4, 2)",
    "DELETE FROM e WHERE rowid IN (2, 5)",
    "UPDATE e SET w = w + 1 WHERE src = 1",
    "SELECT count(*) FROM dyng_sssp('g', 0, 'w')",
    "CREATE VIRTUAL TABLE u USING dyng(edges=e, directed=0)",
    "SELECT dyng_cycle_count('u', 3)",
    "SELECT dyng_cycle_count('g', 4, 'directed')",
    /* A directed graph with no kept tree: its in adjacency is built when
    ** its kept count first follows a batch. */
    "CREATE VIRTUAL TABLE d USING dyng(edges=e)",
    "SELECT dyng_cycle_count('d', 3, 'directed')",
    "BEGIN",
    "INSERT INTO e VALUES (0, 11, 1, 1)",
    "SELECT count(*) FROM dyng_sssp('g', 0)",
    "ROLLBACK",
    "SELECT count(*) FROM dyng_mosp('g', 0, 7)",
    "DELETE FROM e WHERE rowid = 1",
    "SELECT dyng_update('g')",
    "SELECT dyng_update('g', 'reattach')",
    "SELECT dyng_cycle_count('d', 3, 'directed')",
    "SELECT count(*) FROM dyng_pareto('g', 0, 7)",
    "SELECT count(*) FROM g",
    "SELECT length(dyng_config())",
    "SELECT count(*) FROM dyng_read_edges(?)",
    "INSERT INTO e VALUES (7, 8, 1, 1)",
    "SELECT dyng_cycle_count('u', 3)",
};
#define N_SCRIPT (int)(sizeof g_script / sizeof *g_script)

static sqlite3 *open_seeded(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) fail_msg("open: %s", sqlite3_errmsg(db));
  char *zErr = NULL;
  if (sqlite3_exec(db,
                   "CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, w REAL, c REAL);"
                   "INSERT INTO e VALUES (0,1,1,5),(1,2,2,1),(2,7,1,1),(0,3,4,1),(3,4,1,2),"
                   "(4,7,2,2),(1,5,3,3),(5,6,1,1),(6,7,1,4),(2,0,2,2),(4,1,1,1),(7,8,2,1),"
                   "(8,2,1,3),(6,3,5,1),(10,11,1,1)",
                   NULL, NULL, &zErr) != SQLITE_OK)
    fail_msg("seed: %s", zErr);
  return db;
}

/* A statement's outcome is acceptable under an injected failure: success,
** SQLITE_NOMEM, or an error whose message says memory ran out; after an
** earlier statement of the run failed, also what follows from that: a graph
** whose CREATE failed does not exist, and a transaction whose BEGIN failed
** (or that SQLite rolled back on the failure) cannot be rolled back. */
static int outcome_ok(int rc, const char *zMsg, int bEarlierFailed) {
  if (rc == SQLITE_OK || rc == SQLITE_NOMEM) return 1;
  if (zMsg && strstr(zMsg, "out of memory")) return 1;
  return bEarlierFailed && zMsg &&
         (strstr(zMsg, "no graph named") || strstr(zMsg, "no such table") ||
          strstr(zMsg, "no transaction is active"));
}

static int run_statement(sqlite3 *db, const char *zSql, char *zWhy, size_t nWhy) {
  sqlite3_stmt *p = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &p, NULL);
  if (rc == SQLITE_OK && p) {
    if (sqlite3_bind_parameter_count(p)) rc = sqlite3_bind_text(p, 1, g_edges_file, -1, SQLITE_STATIC);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) rc = SQLITE_OK;
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  snprintf(zWhy, nWhy, "%s", rc == SQLITE_OK ? "" : sqlite3_errmsg(db));
  sqlite3_finalize(p);
  /* A failed statement inside BEGIN may leave the transaction open. */
  return rc;
}

/* With nothing failing: each graph equals its table. */
static void check_graphs_equal_table(sqlite3 *db, const char *zRun) {
  static const char *const azCreate[] = {"CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,c')",
                                         "CREATE VIRTUAL TABLE u USING dyng(edges=e, directed=0)"};
  static const char *const azName[] = {"g", "u"};
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  ref_snapshot s;
  if (ref_snapshot_read(db, "SELECT src, dst, w, c FROM e", &s) != SQLITE_OK)
    fail_msg("%s: cannot read the edges: %s", zRun, sqlite3_errmsg(db));
  for (int i = 0; i < 2; i++) {
    char zSql[200];
    snprintf(zSql, sizeof zSql, "SELECT 1 FROM sqlite_master WHERE name = '%s'", azName[i]);
    sqlite3_stmt *p = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
    int bExists = sqlite3_step(p) == SQLITE_ROW;
    sqlite3_finalize(p);
    char *zErr = NULL;
    if (!bExists && sqlite3_exec(db, azCreate[i], NULL, NULL, &zErr) != SQLITE_OK)
      fail_msg("%s: %s after the run: %s", zRun, azCreate[i], zErr);
    for (int source = 0; source < N_NODES; source++)
      for (int k = 0; k < (i == 0 ? 2 : 1); k++) {
        double dist[REF_MAX_NODES];
        ref_snapshot wk = s;
        if (i == 1) wk.w[0] = wk.w[1] = NULL;
        double *aOne = NULL;
        if (i == 1) {
          /* The unweighted graph: every edge weighs 1. */
          aOne = malloc((size_t)(s.n + 1) * sizeof *aOne);
          for (int e = 0; e < s.n; e++) aOne[e] = 1;
          wk.w[0] = wk.w[1] = aOne;
        }
        ref_dijkstra(&wk, source, k, i == 1, dist);
        free(aOne);
        snprintf(zSql, sizeof zSql, "SELECT node, dist FROM dyng_sssp('%s', %d, %d)", azName[i], source, k);
        assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
        int nRow = 0, nReached = 0, rc;
        while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
          sqlite3_int64 v = sqlite3_column_int64(p, 0);
          double d = sqlite3_column_double(p, 1);
          if (v < 0 || v >= REF_MAX_NODES || d != dist[v])
            fail_msg("%s: %s: node %lld at %g, the Dijkstra says %g", zRun, zSql, v, d,
                     v >= 0 && v < REF_MAX_NODES ? dist[v] : NAN);
          nRow++;
        }
        if (rc != SQLITE_DONE) fail_msg("%s: %s: %s", zRun, zSql, sqlite3_errmsg(db));
        sqlite3_finalize(p);
        for (int v = 0; v < REF_MAX_NODES; v++) nReached += !isinf(dist[v]);
        if (!ref_has_node(&s, source)) nReached = 0;
        if (nRow != nReached) fail_msg("%s: %s: %d rows, %d nodes reached", zRun, zSql, nRow, nReached);
      }
  }
  /* The kept triangle count (when the run left one) against a recount. */
  sqlite3_int64 aCount[3];
  const char *azCount[] = {"SELECT dyng_cycle_count('u', 3)", "SELECT dyng_update('u', 'reload') IS NOT NULL",
                           "SELECT dyng_cycle_count('u', 3)"};
  for (int j = 0; j < 3; j++) {
    sqlite3_stmt *p = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, azCount[j], -1, &p, NULL), SQLITE_OK);
    if (sqlite3_step(p) != SQLITE_ROW) fail_msg("%s: %s: %s", zRun, azCount[j], sqlite3_errmsg(db));
    aCount[j] = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
  }
  if (aCount[0] != aCount[2])
    fail_msg("%s: kept triangle count %lld, recount %lld", zRun, aCount[0], aCount[2]);
  /* The same for d's directed triangles, when the run made d. */
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = 'd'", -1, &p, NULL), SQLITE_OK);
  int bDirected = sqlite3_step(p) == SQLITE_ROW;
  sqlite3_finalize(p);
  const char *azDirected[] = {"SELECT dyng_cycle_count('d', 3, 'directed')",
                              "SELECT dyng_update('d', 'reload') IS NOT NULL",
                              "SELECT dyng_cycle_count('d', 3, 'directed')"};
  for (int j = 0; bDirected && j < 3; j++) {
    assert_int_equal(sqlite3_prepare_v2(db, azDirected[j], -1, &p, NULL), SQLITE_OK);
    if (sqlite3_step(p) != SQLITE_ROW) fail_msg("%s: %s: %s", zRun, azDirected[j], sqlite3_errmsg(db));
    aCount[j] = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
  }
  if (bDirected && aCount[0] != aCount[2])
    fail_msg("%s: kept directed triangle count %lld, recount %lld", zRun, aCount[0], aCount[2]);
  ref_snapshot_free(&s);
}

/* How allocations fail in a run. */
enum { SQLITE_ONCE, SQLITE_FROM, ENGINE_FROM };
static const char *const azMode[] = {"SQLite allocation %ld failing",
                                     "SQLite allocations from %ld on failing",
                                     "engine allocations from %ld on failing"};

/* Runs the scenario once with allocations failing as eMode says from the
** n-th on; n < 0: nothing fails.  *pnSqlite and *pnEngine (may be NULL) get
** the allocations the scenario made. */
static void run_once(int eMode, long n, long *pnSqlite, long *pnEngine) {
  char zRun[64];
  int bSqlite = eMode != ENGINE_FROM;
  snprintf(zRun, sizeof zRun, azMode[eMode], n);
  long nLive0 = g_live;
  sqlite3 *db = open_seeded();
  g_count = 0;
  unsigned long nEngine0 = dyng_alloc_count();
  g_fail_at = bSqlite ? n : -1;
  g_fail_on = eMode == SQLITE_FROM;
  dyng_alloc_fail_after(bSqlite ? -1 : n);
  int bFailed = 0;
  for (int i = 0; i < N_SCRIPT; i++) {
    char zWhy[512];
    int rc = run_statement(db, g_script[i], zWhy, sizeof zWhy);
    if (n < 0 && rc != SQLITE_OK) fail_msg("%s: %s: %s", zRun, g_script[i], zWhy);
    if (!outcome_ok(rc, zWhy, bFailed)) {
      g_fail_at = -1;
      dyng_alloc_fail_after(-1);
      fail_msg("%s: %s: unexpected error %d: %s", zRun, g_script[i], rc, zWhy);
    }
    bFailed |= rc != SQLITE_OK;
    if (getenv("DYNG_OOM_TRACE"))
      printf("# %s: %s: %d %s (%ld allocations so far)\n", zRun, g_script[i], rc, zWhy, g_count);
  }
  g_fail_at = -1;
  dyng_alloc_fail_after(-1);
  if (pnSqlite) *pnSqlite = g_count;
  if (pnEngine) *pnEngine = (long)(dyng_alloc_count() - nEngine0);
  check_graphs_equal_table(db, zRun);
  if (sqlite3_close(db) != SQLITE_OK) fail_msg("%s: close: %s", zRun, sqlite3_errmsg(db));
  if (g_live != nLive0) fail_msg("%s: %ld SQLite allocations left after close", zRun, g_live - nLive0);
}

static long runs_wanted(void) {
  const char *z = getenv("DYNG_OOM_RUNS");
  return z ? atol(z) : 0;
}

static void sweep(int eMode) {
  long nSqlite = 0, nEngine = 0;
  run_once(eMode, -1, &nSqlite, &nEngine);
  long nAll = eMode == ENGINE_FROM ? nEngine : nSqlite, nRuns = runs_wanted();
  long step = nRuns > 0 && nAll > nRuns ? (nAll + nRuns - 1) / nRuns : 1;
  printf("# %s: %ld allocations in the scenario; n = 0, %ld, %ld, ...%s\n",
         eMode == ENGINE_FROM ? "engine" : "SQLite", nAll, step, 2 * step, step == 1 ? " (all of them)" : "");
  long nRun = 0;
  /* One past the end too: a run where nothing fails must pass the same
  ** checks. */
  const char *zFrom = getenv("DYNG_OOM_FROM");
  for (long n = zFrom ? atol(zFrom) : 0; n <= nAll; n += step, nRun++) run_once(eMode, n, NULL, NULL);
  printf("# %ld runs\n", nRun);
}

static void test_each_sqlite_allocation_failing_once(void **state) {
  (void)state;
  sweep(SQLITE_ONCE);
}

static void test_sqlite_allocations_failing_from_each_on(void **state) {
  (void)state;
  sweep(SQLITE_FROM);
}

static void test_engine_allocations_failing_from_each_on(void **state) {
  (void)state;
  sweep(ENGINE_FROM);
}

int main(void) {
  strcpy(g_edges_file, "/tmp/dyng-oom-XXXXXX");
  int fd = mkstemp(g_edges_file);
  if (fd < 0) return 1;
  static const char zText[] = "# a SNAP edge list\n0 1\n1 2\n2 0\n";
  if (write(fd, zText, sizeof zText - 1) != (ssize_t)(sizeof zText - 1)) return 1;
  close(fd);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_sqlite_allocation_failing_once),
      cmocka_unit_test(test_sqlite_allocations_failing_from_each_on),
      cmocka_unit_test(test_engine_allocations_failing_from_each_on),
  };
  int rc = cmocka_run_group_tests_name("oom", tests, group_setup, NULL);
  unlink(g_edges_file);
  return rc;
}
