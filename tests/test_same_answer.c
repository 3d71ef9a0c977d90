/*
** tests/test_same_answer.c: one answer per table, whatever the history.
**
** An edge table with ties everywhere (weights 0, 1 and 2, parallel edges,
** self-loops, zero-weight cycles) takes random batches: inserts with new
** and with reused low rowids, deletes, weight and endpoint changes, some
** rolled back.  Two graphs over it (directed and undirected, two
** objectives) live through the whole history, their kept trees updated
** batch by batch.  After every batch:
**
**   - every kept tree's dyng_sssp rows (node, dist, parent, edge) equal a
**     brute-force reference of the tie rule (docs/sql.md, "Ties") computed
**     here from the rows a plain SELECT reads: Bellman-Ford distances, the
**     levels by fixed point, the smallest rowid; and every dyng_mosp path
**     equals the path by the same rule through an ensemble built here from
**     those reference trees;
**   - a graph loaded afresh from a copy of the rows (in a database of its
**     own), and (every few batches) the same graph on a second connection,
**     give the same dyng_sssp, dyng_path and dyng_mosp rows as the graphs
**     that lived through the history (which must have met it as batches,
**     their trees updated in place).
**
** The whole run also goes again in child processes with DYNG_THREADS=1
** and 4 (graph batches and tree updates run on a team of threads, and with
** 4 every tree from scratch is the parallel search's), whose answers must
** hash to the same digest as this process's.
**
** The graphs are on the CPU, also on a machine with a GPU; with
** DYNG_REQUIRE_CUDA=1 (make check-gpu) every one of them is on CUDA, and the
** same reference holds them to the same rule.
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define N_NODES 48
#define MAX_ROWS 4096
#define N_ROUNDS 24
#define N_SOURCES 3

static uint64_t g_seed;

/* The run demands CUDA (DYNG_REQUIRE_CUDA set, and not to 0 or false). */
static int on_cuda(void) {
  const char *z = getenv("DYNG_REQUIRE_CUDA");
  return z && *z && strcmp(z, "0") != 0 && strcasecmp(z, "false") != 0 && strcasecmp(z, "no") != 0;
}

/* A connection whose graphs go where the run says (see above). */
static sqlite3 *open_db(const char *zPath) {
  sqlite3 *db = sql_open(zPath);
  if (!on_cuda()) sql_ok(db, "SELECT dyng_config('backend', 'cpu')");
  return db;
}

/* Fails unless every loaded graph of db is on that backend. */
static void check_backend(sqlite3 *db) {
  const char *zSql = on_cuda() ? "SELECT count(*) FROM json_each(dyng_config('graphs')) WHERE "
                                 "json_extract(value, '$.loaded') AND json_extract(value, '$.backend') NOT LIKE 'cuda%'"
                               : "SELECT count(*) FROM json_each(dyng_config('graphs')) WHERE "
                                 "json_extract(value, '$.loaded') AND json_extract(value, '$.backend') <> 'cpu'";
  if (sql_int(db, zSql) != 0)
    fail_msg("a graph is not on %s: %s", on_cuda() ? "CUDA" : "the CPU", sql_text(db, "SELECT dyng_config('graphs')"));
}

/* ---- the reference ------------------------------------------------------- */

typedef struct edge_rows {
  int n;
  sqlite3_int64 rowid[MAX_ROWS], src[MAX_ROWS], dst[MAX_ROWS];
  double w[2][MAX_ROWS];
} edge_rows;

static void read_rows(sqlite3 *db, edge_rows *r) {
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT rowid, src, dst, a, b FROM e", -1, &p, NULL), SQLITE_OK);
  r->n = 0;
  while (sqlite3_step(p) == SQLITE_ROW) {
    assert_true(r->n < MAX_ROWS);
    r->rowid[r->n] = sqlite3_column_int64(p, 0);
    r->src[r->n] = sqlite3_column_int64(p, 1);
    r->dst[r->n] = sqlite3_column_int64(p, 2);
    r->w[0][r->n] = sqlite3_column_double(p, 3);
    r->w[1][r->n] = sqlite3_column_double(p, 4);
    r->n++;
  }
  sqlite3_finalize(p);
}

/* Row i read as an edge from *u to *v (its second side when undirected). */
static int side_of(const edge_rows *r, int i, int side, int *u, int *v) {
  *u = (int)(side ? r->dst[i] : r->src[i]);
  *v = (int)(side ? r->src[i] : r->dst[i]);
  return 1;
}

/* The tie rule by brute force: the tree from `source` in objective `obj`,
** dist[x] and best[x] (the row of x's parent edge; -1 for the source and
** unreached nodes).  Returns 0 when the source is in no row. */
static int reference_tree(const edge_rows *r, int directed, int source, int obj, double *dist, int *best) {
  unsigned level[N_NODES];
  int present[N_NODES] = {0};
  for (int x = 0; x < N_NODES; x++) dist[x] = INFINITY, level[x] = ~0u, best[x] = -1;
  for (int i = 0; i < r->n; i++) present[r->src[i]] = present[r->dst[i]] = 1;
  if (!present[source]) return 0;
  dist[source] = 0;
  level[source] = 0;
  int sides = directed ? 1 : 2, u, v;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < r->n; i++)
      for (int s = 0; s < sides && side_of(r, i, s, &u, &v); s++)
        if (dist[u] + r->w[obj][i] < dist[v]) dist[v] = dist[u] + r->w[obj][i], changed = 1;
  }
#define TIGHT(i, s) (side_of(r, i, s, &u, &v) && v != source && !isinf(dist[u]) && dist[u] + r->w[obj][i] == dist[v])
  for (int i = 0; i < r->n; i++)
    for (int s = 0; s < sides; s++)
      if (TIGHT(i, s) && dist[u] < dist[v]) level[v] = 0;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < r->n; i++)
      for (int s = 0; s < sides; s++)
        if (TIGHT(i, s) && dist[u] == dist[v] && level[u] != ~0u && level[u] + 1 < level[v])
          level[v] = level[u] + 1, changed = 1;
  }
  for (int i = 0; i < r->n; i++)
    for (int s = 0; s < sides; s++)
      if (TIGHT(i, s) && (level[v] == 0 ? dist[u] < dist[v] : dist[u] == dist[v] && level[u] + 1 == level[v]) &&
          (best[v] < 0 || r->rowid[i] < r->rowid[best[v]]))
        best[v] = i;
#undef TIGHT
  for (int x = 0; x < N_NODES; x++) assert_true(x == source || isinf(dist[x]) || best[x] >= 0);
  return 1;
}

/* The tree parent of x by row i: the edge's other end (its source if
** directed). */
static int parent_by(const edge_rows *r, int directed, int i, int x) {
  return (int)(directed || r->dst[i] == x ? r->src[i] : r->dst[i]);
}

/* The rows "node dist parent edge" of reference_tree's tree, by node. */
static char *reference_rows(const edge_rows *r, int directed, int source, int obj) {
  double dist[N_NODES];
  int best[N_NODES];
  if (!reference_tree(r, directed, source, obj, dist, best)) return sqlite3_mprintf("");
  char *z = sqlite3_mprintf("");
  for (int x = 0; x < N_NODES; x++) {
    if (isinf(dist[x])) continue;
    if (x == source) {
      z = sqlite3_mprintf("%z%d %.17g - -\n", z, x, dist[x]);
    } else {
      int i = best[x];
      z = sqlite3_mprintf("%z%d %.17g %d %lld\n", z, x, dist[x], parent_by(r, directed, i, x),
                          (long long)r->rowid[i]);
    }
  }
  return z;
}

/* The MOSP path by brute force (docs/sql.md, dyng_mosp): the ensemble of
** both objectives' trees, one entry per distinct (parent, node, edge)
** costing 3 - the trees that hold it; its shortest distances from the
** source; the walk back from the target taking, into every node, the tight
** entry of smallest rowid.  The rows "node edge" in path order. */
static char *reference_mosp(const edge_rows *r, int directed, int source, int target) {
  enum { K = 2, MAX_E = K * N_NODES };
  double dist[N_NODES];
  int best[N_NODES], eu[MAX_E], ev[MAX_E], er[MAX_E], cnt[MAX_E], n = 0;
  for (int k = 0; k < K; k++) {
    if (!reference_tree(r, directed, source, k, dist, best)) return sqlite3_mprintf("");
    for (int x = 0; x < N_NODES; x++) {
      if (best[x] < 0) continue;
      int u = parent_by(r, directed, best[x], x), j = 0;
      while (j < n && !(eu[j] == u && ev[j] == x && er[j] == best[x])) j++;
      if (j == n) eu[n] = u, ev[n] = x, er[n] = best[x], cnt[n++] = 0;
      cnt[j]++;
    }
  }
  long long d[N_NODES];
  for (int x = 0; x < N_NODES; x++) d[x] = LLONG_MAX;
  d[source] = 0;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int j = 0; j < n; j++)
      if (d[eu[j]] != LLONG_MAX && d[eu[j]] + K + 1 - cnt[j] < d[ev[j]]) d[ev[j]] = d[eu[j]] + K + 1 - cnt[j], changed = 1;
  }
  if (d[target] == LLONG_MAX) return sqlite3_mprintf("");
  int node[N_NODES + 1], edge[N_NODES + 1], len = 0;
  for (int v = target, e = -1;;) {
    assert_true(len <= N_NODES);
    node[len] = v, edge[len++] = e;
    if (v == source) break;
    int pick = -1;
    for (int j = 0; j < n; j++)
      if (ev[j] == v && d[eu[j]] != LLONG_MAX && d[eu[j]] + K + 1 - cnt[j] == d[v] &&
          (pick < 0 || r->rowid[er[j]] < r->rowid[er[pick]]))
        pick = j;
    assert_true(pick >= 0);
    e = er[pick], v = eu[pick];
  }
  char *z = sqlite3_mprintf("");
  for (int i = len - 1; i >= 0; i--)
    z = edge[i] < 0 ? sqlite3_mprintf("%z%d -\n", z, node[i])
                    : sqlite3_mprintf("%z%d %lld\n", z, node[i], (long long)r->rowid[edge[i]]);
  return z;
}

/* ---- answers through SQL ------------------------------------------------- */

/* Every row of zSql (freed), as text: columns by spaces, rows by lines. */
static char *rows_of(sqlite3 *db, char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
  char *z = sqlite3_mprintf("");
  int rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(p); c++) {
      int t = sqlite3_column_type(p, c);
      if (t == SQLITE_NULL) z = sqlite3_mprintf("%z%s-", z, c ? " " : "");
      else if (t == SQLITE_FLOAT) z = sqlite3_mprintf("%z%s%.17g", z, c ? " " : "", sqlite3_column_double(p, c));
      else z = sqlite3_mprintf("%z%s%s", z, c ? " " : "", (const char *)sqlite3_column_text(p, c));
    }
    z = sqlite3_mprintf("%z\n", z);
  }
  if (rc != SQLITE_DONE) fail_msg("step failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
  sqlite3_finalize(p);
  sqlite3_free(zSql);
  return z;
}

static char *sssp_rows(sqlite3 *db, const char *graph, int source, int obj) {
  return rows_of(db, sqlite3_mprintf("SELECT node, dist, parent, edge FROM dyng_sssp('%q', %d, %d) ORDER BY node",
                                     graph, source, obj));
}

/* dyng_sssp, dyng_path and dyng_mosp rows of one graph for a few queries. */
static char *answers(sqlite3 *db, const char *graph, const int *sources) {
  char *z = sqlite3_mprintf("");
  for (int i = 0; i < N_SOURCES; i++)
    for (int obj = 0; obj < 2; obj++) {
      char *s = sssp_rows(db, graph, sources[i], obj);
      z = sqlite3_mprintf("%zsssp %d %d\n%z", z, sources[i], obj, s);
      for (int t = 0; t < N_NODES; t += 7) {
        s = rows_of(db, sqlite3_mprintf("SELECT * FROM dyng_path('%q', %d, %d, %d)", graph, sources[i], t, obj));
        z = sqlite3_mprintf("%zpath %d %d %d\n%z", z, sources[i], t, obj, s);
      }
    }
  for (int i = 0; i < N_SOURCES; i++)
    for (int t = 1; t < N_NODES; t += 5) {
      char *s = rows_of(db, sqlite3_mprintf("SELECT * FROM dyng_mosp('%q', %d, %d)", graph, sources[i], t));
      z = sqlite3_mprintf("%zmosp %d %d\n%z", z, sources[i], t, s);
    }
  return z;
}

static void assert_same(const char *what, const char *got, const char *want) {
  if (strcmp(got, want) == 0) return;
  const char *a = got, *b = want;
  while (*a && *a == *b) a++, b++;
  while (a > got && a[-1] != '\n') a--, b--;
  fail_msg("%s differ; first at:\n  got:  %.200s\n  want: %.200s", what, a, b);
}

/* ---- the history ----------------------------------------------------------- */

static void random_batch(sqlite3 *db, test_rng *r) {
  int n_ops = 1 + (int)test_rng_below(r, 30);
  int rollback = test_rng_below(r, 5) == 0;
  sql_ok(db, "BEGIN");
  for (int i = 0; i < n_ops; i++) {
    int dice = (int)test_rng_below(r, 10);
    int s = (int)test_rng_below(r, N_NODES), d = (int)test_rng_below(r, N_NODES);
    int a = (int)test_rng_below(r, 3), b = (int)test_rng_below(r, 3);
    if (dice < 3) {
      sql_ok_free(db, sqlite3_mprintf("INSERT INTO e(src, dst, a, b) VALUES (%d, %d, %d, %d)", s, d, a, b));
    } else if (dice < 4) {
      /* A low rowid again, when free: rowids do not follow arrival. */
      sql_ok_free(db, sqlite3_mprintf("INSERT OR IGNORE INTO e(rowid, src, dst, a, b) VALUES (%d, %d, %d, %d, %d)",
                                      1 + (int)test_rng_below(r, 400), s, d, a, b));
    } else if (dice < 6) {
      sql_ok_free(db, sqlite3_mprintf("DELETE FROM e WHERE rowid = (SELECT rowid FROM e ORDER BY "
                                      "abs(rowid * 7919 %% 1009 - %d) LIMIT 1)",
                                      (int)test_rng_below(r, 1009)));
    } else if (dice < 9) {
      sql_ok_free(db, sqlite3_mprintf("UPDATE e SET a = %d, b = %d WHERE rowid = (SELECT rowid FROM e ORDER BY "
                                      "abs(rowid * 7919 %% 1009 - %d) LIMIT 1)",
                                      a, b, (int)test_rng_below(r, 1009)));
    } else {
      sql_ok_free(db, sqlite3_mprintf("UPDATE e SET dst = %d WHERE rowid = (SELECT rowid FROM e ORDER BY "
                                      "abs(rowid * 7919 %% 1009 - %d) LIMIT 1)",
                                      d, (int)test_rng_below(r, 1009)));
    }
  }
  sql_ok(db, rollback ? "ROLLBACK" : "COMMIT");
}

static const char *const k_graphs[2] = {"gd", "gu"};
static const char k_reloads[] = "SELECT sum(json_extract(value, '$.reloads')) FROM json_each(dyng_config('graphs'))";

/* The answers of a graph loaded from a copy of the rows, in a database of
** its own (a schema change in the first database would reload its graphs,
** and the history would never reach them as batches). */
static char *fresh_answers(const edge_rows *rows, int directed, const int *sources) {
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, a REAL, b REAL); BEGIN");
  for (int i = 0; i < rows->n; i++)
    sql_ok_free(db, sqlite3_mprintf("INSERT INTO e(rowid, src, dst, a, b) VALUES (%lld, %lld, %lld, %.17g, %.17g)",
                                    (long long)rows->rowid[i], (long long)rows->src[i], (long long)rows->dst[i],
                                    rows->w[0][i], rows->w[1][i]));
  sql_ok_free(db, sqlite3_mprintf("COMMIT; CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='a,b', directed=%d)",
                                  directed));
  char *z = answers(db, "g", sources);
  check_backend(db);
  sqlite3_close(db);
  return z;
}

/* The whole history; returns the hash of every answer of the graphs that
** lived through it. */
static uint64_t run_history(void) {
  char zPath[] = "/tmp/dyng-same-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = open_db(zPath);
  test_rng r;
  test_rng_seed(&r, g_seed * 1000003 + 11);
  sql_ok(db, "PRAGMA journal_mode = WAL; CREATE TABLE e(src INTEGER, dst INTEGER, a REAL, b REAL)");
  sql_ok(db, "BEGIN");
  for (int i = 0; i < 5 * N_NODES; i++)
    sql_ok_free(db, sqlite3_mprintf("INSERT INTO e(rowid, src, dst, a, b) VALUES (%d, %d, %d, %d, %d)", 1000 - i,
                                    (int)test_rng_below(&r, N_NODES), (int)test_rng_below(&r, N_NODES),
                                    (int)test_rng_below(&r, 3), (int)test_rng_below(&r, 3)));
  sql_ok(db, "COMMIT");
  sql_ok(db, "CREATE VIRTUAL TABLE gd USING dyng(edges=e, weights='a,b', directed=1);"
             "CREATE VIRTUAL TABLE gu USING dyng(edges=e, weights='a,b', directed=0)");
  int sources[N_SOURCES] = {0, 1, 2};
  uint64_t digest = 1469598103934665603ULL;
  edge_rows *rows = malloc(sizeof *rows);
  assert_non_null(rows);
  sqlite3_int64 reloads = 0;
  for (int round = 0; round <= N_ROUNDS; round++) {
    if (round == 1) reloads = sql_int(db, k_reloads);
    if (round) random_batch(db, &r);
    read_rows(db, rows);
    for (int k = 0; k < 2; k++) {
      const char *g = k_graphs[k];
      for (int i = 0; i < N_SOURCES; i++)
        for (int obj = 0; obj < 2; obj++) {
          char *got = sssp_rows(db, g, sources[i], obj), *want = reference_rows(rows, k == 0, sources[i], obj);
          assert_same(g, got, want);
          sqlite3_free(got);
          sqlite3_free(want);
        }
      for (int i = 0; i < N_SOURCES; i++)
        for (int t = 0; t < N_NODES; t += 3) {
          char *got = rows_of(db, sqlite3_mprintf("SELECT node, edge FROM dyng_mosp('%q', %d, %d) ORDER BY seq", g,
                                                  sources[i], t));
          char *want = reference_mosp(rows, k == 0, sources[i], t);
          assert_same("a MOSP path", got, want);
          sqlite3_free(got);
          sqlite3_free(want);
        }
      char *kept = answers(db, g, sources);
      for (const char *c = kept; *c; c++) digest = (digest ^ (unsigned char)*c) * 1099511628211ULL;
      /* The same rows, copied into a new database and loaded there. */
      char *fresh = fresh_answers(rows, k == 0, sources);
      assert_same("a fresh graph's answers", kept, fresh);
      sqlite3_free(fresh);
      /* And loaded by another connection. */
      if (round % 6 == 0) {
        sqlite3 *db2 = open_db(zPath);
        char *other = answers(db2, g, sources);
        check_backend(db2);
        sqlite3_close(db2);
        assert_same("another connection's answers", kept, other);
        sqlite3_free(other);
      }
      sqlite3_free(kept);
    }
    check_backend(db);
  }
  free(rows);
  /* The kept graphs met the history as batches, and their trees were
  ** updated in place, not only recomputed. */
  assert_int_equal(sql_int(db, k_reloads), reloads);
  assert_true(sql_int(db, "SELECT sum(json_extract(value, '$.batches')) FROM json_each(dyng_config('graphs'))") > 0);
  assert_true(sql_int(db, "SELECT sum(json_extract(t.value, '$.updates')) FROM json_each(dyng_config('graphs')) g, "
                          "json_each(g.value, '$.trees') t") > 0);
  sqlite3_close(db);
  sql_remove_db(zPath);
  return digest;
}

static void test_kept_fresh_and_reloaded_graphs_follow_the_tie_rule(void **state) {
  (void)state;
  uint64_t d = run_history();
  print_message("# digest %016llx\n", (unsigned long long)d);
}

/* The same history in a child process with DYNG_THREADS threads. */
static uint64_t digest_with_threads(int threads) {
  char self[1024], cmd[1200];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  assert_true(n > 0);
  self[n] = 0;
  /* With several threads, every tree from scratch is the parallel search's
  ** (engine/sssp_par.c), however small the graph. */
  snprintf(cmd, sizeof cmd, "DYNG_THREADS=%d DYNG_PARALLEL_SSSP_MIN=%d DYNG_SAME_ANSWER_CHILD=1 DYNG_TEST_SEED=%llu '%s'",
           threads, threads > 1 ? 1 : 1000000000, (unsigned long long)g_seed, self);
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  char line[256];
  unsigned long long d = 0;
  int found = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "digest %llx", &d) == 1) found = 1;
  int st = pclose(f);
  if (st != 0 || !found) fail_msg("the child with %d threads failed (status %d)", threads, st);
  return d;
}

static void test_every_thread_count_gives_the_same_answers(void **state) {
  (void)state;
  uint64_t here = run_history();
  uint64_t one = digest_with_threads(1), four = digest_with_threads(4);
  if (one != here || four != here)
    fail_msg("digests: this process %016llx, 1 thread %016llx, 4 threads %016llx", (unsigned long long)here,
             (unsigned long long)one, (unsigned long long)four);
}

int main(void) {
  if (getenv("DYNG_SAME_ANSWER_CHILD")) {
    g_seed = test_seed();
    printf("digest %016llx\n", (unsigned long long)run_history());
    return 0;
  }
  g_seed = test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kept_fresh_and_reloaded_graphs_follow_the_tie_rule),
      cmocka_unit_test(test_every_thread_count_gives_the_same_answers),
  };
  return cmocka_run_group_tests_name("same_answer", tests, NULL, NULL);
}
