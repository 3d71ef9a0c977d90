/*
** tests/test_gpu.c: the CUDA backend against the CPU backend, through SQL.
**
** Every case builds one edge table and two graphs over it, `gc` on the CPU
** and `gg` on CUDA (backend=cuda), and compares dyng_sssp from several
** sources element by element: the same vertices reached at bit-identical
** distances, the same parent and parent edge everywhere (the tie rule of
** engine/sssp.h: ties are everywhere with integer weights), and on CUDA
** every parent one real edge away with dist[parent] + weight == dist
** exactly; dyng_path and dyng_mosp give the same rows on both.
** Then random batches (inserts, deletes, weight changes; 1 change to a tenth
** of the edges) reach both, and the kept trees are compared again.
** Directed and undirected graphs, integer weights (zeros included) and real
** ones, sparse random graphs, graphs with hubs (whose edges the GPU splits
** into chunks) and grids.  The same cases run again in a child process with
** DYNG_CUDA_HOST_LOOP=1, where the searches' loops run on the host instead
** of in one cooperative kernel.  A forked child of a process that used dyng
** on the CPU must still be able to use CUDA.  A graph too large for the
** device (DYNG_CUDA_MAX_ALLOC makes every allocation past a size fail as out
** of device memory) goes to the CPU with the reason in dyng_config(), or is
** an error when CUDA was asked for.
**
** Cycle counts (dyng_cycle_count, k = 3..10, both modes) on CUDA equal the
** CPU's on random graphs with hubs, parallel edges, antiparallel pairs and
** self-loops, from scratch and through batches (kept counts updated by the
** changed edges, or counted again), and ego-Facebook's 1,612,010
** triangles when $DYNG_DATA_DIR has it.
**
** Without a usable GPU the file is skipped with the reason, unless
** DYNG_REQUIRE_CUDA=1 (make check-gpu sets it): then it fails.
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The first value of sql as a new string (free()), NULL when none. */
static char *query_text(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s", sqlite3_errmsg(db));
  char *out = NULL;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    out = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return out;
}

/* Whether a GPU backend can run here; *why gets the reason when not (the
** caller frees it). */
static int gpu_usable(char **why) {
  sqlite3 *db = sql_open(":memory:");
  char *name = query_text(db, "SELECT json_extract(dyng_config(), '$.backend.name')");
  *why = query_text(db, "SELECT json_extract(dyng_config(), '$.backend.reason')");
  sqlite3_close(db);
  int ok = name && strncmp(name, "cuda", 4) == 0;
  free(name);
  return ok;
}

/* ---- graphs ------------------------------------------------------------- */

/* Fills e(src, dst, a, b): a random sparse graph (kind 0), a grid with both
** directions (kind 1) or a random sparse graph whose edges leave three hubs
** a fifth of the time (kind 2); `a` integer 0..9 or real, `b` real. */
static void make_edges(sqlite3 *db, test_rng *r, int kind, int n, int integer) {
  sql_ok(db, "CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL, b REAL)");
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO e VALUES (?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
  int m = kind != 1 ? 4 * n : 0, side = (int)sqrt((double)n);
  for (int i = 0; kind != 1 ? i < m : i < side * side; i++) {
    int pairs[2][2], np = 0;
    if (kind != 1) {
      pairs[0][0] = (int)test_rng_below(r, (uint64_t)(kind == 2 && test_rng_below(r, 5) == 0 ? 3 : n)) * 7 - 100;
      pairs[0][1] = (int)test_rng_below(r, (uint64_t)n) * 7 - 100;
      np = 1;
    } else {
      int row = i / side, col = i % side;
      if (col + 1 < side) pairs[np][0] = i, pairs[np++][1] = i + 1;
      if (row + 1 < side) pairs[np][0] = i, pairs[np++][1] = i + side;
    }
    for (int j = 0; j < np; j++)
      for (int dir = 0; dir < (kind == 1 ? 2 : 1); dir++) {
        sqlite3_bind_int64(st, 1, dir ? pairs[j][1] : pairs[j][0]);
        sqlite3_bind_int64(st, 2, dir ? pairs[j][0] : pairs[j][1]);
        if (integer) sqlite3_bind_double(st, 3, (double)test_rng_below(r, integer == 2 ? 2 : 10));
        else sqlite3_bind_double(st, 3, 0.5 + 9.5 * test_rng_unit(r));
        sqlite3_bind_double(st, 4, 0.01 + test_rng_unit(r));
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
      }
  }
  sqlite3_finalize(st);
}

/* A batch of n random changes: a third inserts, a third deletes, a third
** weight changes. */
static void random_batch(sqlite3 *db, test_rng *r, int n, int n_nodes, int integer) {
  sql_ok(db, "BEGIN");
  for (int i = 0; i < n; i++) {
    char sql[300];
    double w = integer ? (double)test_rng_below(r, integer == 2 ? 2 : 10) : 0.5 + 9.5 * test_rng_unit(r);
    switch (test_rng_below(r, 3)) {
    case 0:
      snprintf(sql, sizeof sql, "INSERT INTO e VALUES (%d, %d, %.17g, %.17g)",
               (int)test_rng_below(r, (uint64_t)n_nodes) * 7 - 100, (int)test_rng_below(r, (uint64_t)n_nodes) * 7 - 100,
               w, 0.01 + test_rng_unit(r));
      break;
    case 1:
      snprintf(sql, sizeof sql,
               "DELETE FROM e WHERE rowid = (SELECT rowid FROM e LIMIT 1 OFFSET abs(random()) %% "
               "max(1, (SELECT count(*) FROM e)))");
      break;
    default:
      snprintf(sql, sizeof sql,
               "UPDATE e SET a = %.17g WHERE rowid = (SELECT rowid FROM e LIMIT 1 OFFSET abs(random()) %% "
               "max(1, (SELECT count(*) FROM e)))",
               w);
    }
    sql_ok(db, sql);
  }
  sql_ok(db, "COMMIT");
}

/* ---- comparing ---------------------------------------------------------- */

/* A node of a tree and its parent. */
typedef struct node_parent {
  sqlite3_int64 node, parent;
} node_parent;

static int node_parent_cmp(const void *a, const void *b) {
  sqlite3_int64 x = ((const node_parent *)a)->node, y = ((const node_parent *)b)->node;
  return (x > y) - (x < y);
}

/* dyng_sssp of gg equals gc's for `source` and objective `obj`. */
static void compare_trees(sqlite3 *db, sqlite3_int64 source, const char *obj, int directed) {
  char sql[800];
  /* CUDA's listing once (every row in one fetch), not a row at a time. */
  snprintf(sql, sizeof sql,
           "WITH g AS MATERIALIZED (SELECT node, dist, parent, edge FROM dyng_sssp('gg', %lld, '%s')) "
           "SELECT c.node, c.dist, g.dist, g.parent, g.edge, e.src, e.dst, e.%s, "
           "  (SELECT dist FROM g AS up WHERE up.node = g.parent), c.parent, c.edge "
           "FROM dyng_sssp('gc', %lld, '%s') AS c "
           "LEFT JOIN g ON g.node = c.node "
           "LEFT JOIN e ON e.rowid = g.edge",
           (long long)source, obj, obj, (long long)source, obj);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s", sqlite3_errmsg(db));
  int rows = 0, cap = 0;
  node_parent *links = NULL;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows++;
    sqlite3_int64 node = sqlite3_column_int64(st, 0);
    if (rows > cap) {
      cap = cap ? 2 * cap : 1024;
      links = realloc(links, (size_t)cap * sizeof *links);
      assert_non_null(links);
    }
    links[rows - 1].node = node;
    links[rows - 1].parent = sqlite3_column_type(st, 3) == SQLITE_NULL ? node : sqlite3_column_int64(st, 3);
    double dc = sqlite3_column_double(st, 1);
    if (sqlite3_column_type(st, 2) == SQLITE_NULL) fail_msg("node %lld reached on the CPU, not on CUDA", (long long)node);
    double dg = sqlite3_column_double(st, 2);
    if (memcmp(&dc, &dg, sizeof dc) != 0)
      fail_msg("source %lld, node %lld: CPU %.17g, CUDA %.17g", (long long)source, (long long)node, dc, dg);
    if (sqlite3_column_int64(st, 3) != sqlite3_column_int64(st, 9) ||
        sqlite3_column_int64(st, 4) != sqlite3_column_int64(st, 10))
      fail_msg("source %lld, node %lld at %.17g: CPU's parent %lld by edge %lld, CUDA's %lld by edge %lld",
               (long long)source, (long long)node, dc, (long long)sqlite3_column_int64(st, 9),
               (long long)sqlite3_column_int64(st, 10), (long long)sqlite3_column_int64(st, 3),
               (long long)sqlite3_column_int64(st, 4));
    if (node == source) continue;
    if (sqlite3_column_type(st, 5) == SQLITE_NULL)
      fail_msg("node %lld: CUDA's parent edge %lld is not an edge", (long long)node,
               (long long)sqlite3_column_int64(st, 4));
    sqlite3_int64 parent = sqlite3_column_int64(st, 3), src = sqlite3_column_int64(st, 5),
                  dst = sqlite3_column_int64(st, 6);
    int joins = (src == parent && dst == node) || (!directed && dst == parent && src == node);
    if (!joins) fail_msg("node %lld: edge %lld-%lld does not join parent %lld", (long long)node, (long long)src,
                         (long long)dst, (long long)parent);
    double w = sqlite3_column_double(st, 7), dp = sqlite3_column_double(st, 8);
    if (dp + w != dg) fail_msg("node %lld: parent at %.17g + %.17g != %.17g", (long long)node, dp, w, dg);
  }
  sqlite3_finalize(st);
  /* Each parent is one tight edge away (above), and following them leads to
  ** the source: with weights that vanish in the sum, an edge can be tight
  ** both ways, and parents must still not circle. */
  qsort(links, (size_t)rows, sizeof *links, node_parent_cmp);
  for (int i = 0; i < rows; i++) {
    sqlite3_int64 x = links[i].node;
    int steps = 0;
    while (x != source && steps++ <= rows) {
      node_parent key = {x, 0}, *hit = bsearch(&key, links, (size_t)rows, sizeof *links, node_parent_cmp);
      if (!hit || hit->parent == x) fail_msg("node %lld: its parents end at %lld, not the source %lld",
                                             (long long)links[i].node, (long long)x, (long long)source);
      x = hit->parent;
    }
    if (x != source) fail_msg("node %lld: its parents circle", (long long)links[i].node);
  }
  free(links);
  /* And no more rows on CUDA than on the CPU. */
  snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM dyng_sssp('gg', %lld, '%s')) - %d", (long long)source,
           obj, rows);
  char *diff = query_text(db, sql);
  assert_string_equal(diff, "0");
  free(diff);
}

/* dyng_sssp(gg, source) WHERE node = target (one row read from the
** device): the CPU's distance, no parent at the source only, and a parent
** edge that joins parent and node. */
static void compare_point(sqlite3 *db, sqlite3_int64 source, sqlite3_int64 target, const char *obj) {
  char sql[900];
  snprintf(sql, sizeof sql,
           "SELECT (SELECT dist FROM dyng_sssp('gg', %lld, '%s') WHERE node = %lld) IS "
           "       (SELECT dist FROM dyng_sssp('gc', %lld, '%s') WHERE node = %lld) "
           "   AND ifnull((SELECT (parent IS NULL) = (node = %lld) AND (node = %lld OR EXISTS ("
           "                 SELECT 1 FROM e WHERE e.rowid = g.edge AND ((e.src = g.parent AND e.dst = g.node) "
           "                 OR (e.dst = g.parent AND e.src = g.node)))) "
           "               FROM dyng_sssp('gg', %lld, '%s') AS g WHERE node = %lld), 1)",
           (long long)source, obj, (long long)target, (long long)source, obj, (long long)target, (long long)source,
           (long long)source, (long long)source, obj, (long long)target);
  char *ok = query_text(db, sql);
  if (!ok || strcmp(ok, "1") != 0)
    fail_msg("dyng_sssp from %lld, node %lld (%s): CUDA's row differs from the CPU's (%s)", (long long)source,
             (long long)target, obj, ok ? ok : sqlite3_errmsg(db));
  free(ok);
}

/* dyng_path on gg from `source` to `target`: it ends at the CPU's distance
** (or has no rows when the CPU does not reach the target), starts at the
** source with cost 0, ends at the target, and each step is an edge of e
** between the two nodes with the step's cost. */
static void compare_path(sqlite3 *db, sqlite3_int64 source, sqlite3_int64 target, const char *obj, int directed) {
  char sql[1200];
  snprintf(sql, sizeof sql,
           "SELECT (SELECT max(agg_cost) FROM dyng_path('gg', %lld, %lld, '%s')) IS "
           "       (SELECT dist FROM dyng_sssp('gc', %lld, '%s') WHERE node = %lld) "
           "   AND ifnull((SELECT node = %lld AND agg_cost = 0 FROM dyng_path('gg', %lld, %lld, '%s') "
           "               WHERE seq = 1), 1) "
           "   AND ifnull((SELECT node = %lld AND edge IS NULL FROM dyng_path('gg', %lld, %lld, '%s') "
           "               ORDER BY seq DESC LIMIT 1), 1) "
           "   AND (SELECT count(*) FROM dyng_path('gg', %lld, %lld, '%s') AS p "
           "        JOIN dyng_path('gg', %lld, %lld, '%s') AS q ON q.seq = p.seq + 1 "
           "        LEFT JOIN e ON e.rowid = p.edge "
           "        WHERE e.rowid IS NULL OR e.%s != p.cost OR p.agg_cost + p.cost != q.agg_cost "
           "           OR NOT ((e.src = p.node AND e.dst = q.node) OR (%d AND e.dst = p.node AND e.src = q.node))) = 0",
           (long long)source, (long long)target, obj, (long long)source, obj, (long long)target, (long long)source,
           (long long)source, (long long)target, obj, (long long)target, (long long)source, (long long)target, obj,
           (long long)source, (long long)target, obj, (long long)source, (long long)target, obj, obj, !directed);
  char *ok = query_text(db, sql);
  if (!ok || strcmp(ok, "1") != 0)
    fail_msg("dyng_path from %lld to %lld (%s) on CUDA is not a shortest path of the CPU's length (%s)",
             (long long)source, (long long)target, obj, ok ? ok : sqlite3_errmsg(db));
  free(ok);
  /* And the CPU's very path. */
  const char *rows = "SELECT group_concat(seq || ',' || node || ',' || ifnull(edge, '-') || ',' || agg_cost, ';') "
                     "FROM dyng_path('%s', %lld, %lld, '%s')";
  char qc[300], qg[300];
  snprintf(qc, sizeof qc, rows, "gc", (long long)source, (long long)target, obj);
  snprintf(qg, sizeof qg, rows, "gg", (long long)source, (long long)target, obj);
  char *pc = query_text(db, qc), *pg = query_text(db, qg);
  if ((pc || pg) && (!pc || !pg || strcmp(pc, pg) != 0))
    fail_msg("dyng_path from %lld to %lld (%s):\n  CPU  %.800s\n  CUDA %.800s", (long long)source, (long long)target,
             obj, pc ? pc : "", pg ? pg : "");
  free(pc), free(pg);
}

static sqlite3_int64 some_node(sqlite3 *db) {
  char *z = query_text(db, "SELECT src FROM e ORDER BY random() LIMIT 1");
  sqlite3_int64 x = z ? strtoll(z, NULL, 10) : 0;
  free(z);
  return x;
}

static void run_case(int kind, int directed, int integer, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, test_seed() ^ (salt * 0x9e3779b97f4a7c15ULL));
  sqlite3 *db = sql_open(":memory:");
  /* DYNG_TEST_QUICK (under compute-sanitizer): smaller graphs. */
  int quick = getenv("DYNG_TEST_QUICK") != NULL;
  int n = quick ? (kind != 1 ? 200 : 196) : (kind != 1 ? 1500 : 1600);
  make_edges(db, &r, kind, n, integer);
  char sql[400];
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', directed=%d, backend=cpu);"
           "CREATE VIRTUAL TABLE gg USING dyng(edges=e, weights='a,b', directed=%d, backend=cuda)",
           directed, directed);
  sql_ok(db, sql);
  char *be = query_text(db, "SELECT json_extract(dyng_config(), '$.graphs[1].backend')");
  assert_non_null(be);
  assert_true(strncmp(be, "cuda", 4) == 0);
  free(be);
  sqlite3_int64 sources[3] = {some_node(db), some_node(db), some_node(db)};
  for (int i = 0; i < 3; i++) compare_trees(db, sources[i], i == 2 ? "b" : "a", directed);
  int m = 4 * n;
  const int sizes[] = {1, 3, 30, m / 10, 1, 200};
  size_t n_sizes = quick ? 3 : sizeof sizes / sizeof *sizes;
  for (size_t b = 0; b < n_sizes; b++) {
    random_batch(db, &r, sizes[b], n, integer);
    /* One row at a time first, then paths, while the kept trees' rows are
    ** still on the device. */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) compare_point(db, sources[i], some_node(db), i == 2 ? "b" : "a");
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) compare_path(db, sources[i], some_node(db), i == 2 ? "b" : "a", directed);
    for (int i = 0; i < 3; i++) compare_trees(db, sources[i], i == 2 ? "b" : "a", directed);
  }
  sqlite3_close(db);
}

/* dyng_matrix on the device equals the CPU's, bit for bit, on a graph
** large enough for the device's batched search, before and after batches;
** dyng_config says the device computed it. */
static void matrix_case(int kind, int directed, int integer, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, test_seed() ^ (salt * 0x9e3779b97f4a7c15ULL));
  sqlite3 *db = sql_open(":memory:");
  int n = kind != 1 ? 60000 : 52000;
  make_edges(db, &r, kind, n, integer);
  char sql[1600];
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', directed=%d, backend=cpu);"
           "CREATE VIRTUAL TABLE gg USING dyng(edges=e, weights='a,b', directed=%d, backend=cuda)",
           directed, directed);
  sql_ok(db, sql);
  for (int round = 0; round < 3; round++) {
    /* Sources and targets, repeats and an unknown id among them. */
    char src[400] = "[", dst[1200] = "[";
    for (int i = 0; i < 9; i++)
      snprintf(src + strlen(src), sizeof src - strlen(src), "%lld, ", (long long)some_node(db));
    for (int i = 0; i < 60; i++)
      snprintf(dst + strlen(dst), sizeof dst - strlen(dst), "%lld, ", (long long)some_node(db));
    strcat(src, "123456789]");
    strcat(dst, "123456789]");
    const char *obj = round == 1 ? "b" : "a";
    snprintf(sql, sizeof sql,
             "WITH g AS MATERIALIZED (SELECT * FROM dyng_matrix('gg', '%s', '%s', '%s')), "
             "c AS MATERIALIZED (SELECT * FROM dyng_matrix('gc', '%s', '%s', '%s')) "
             "SELECT (SELECT count(*) FROM g) || ' ' || (SELECT count(*) FROM c) || ' ' || "
             "(SELECT count(*) FROM g JOIN c USING (source, target) WHERE g.dist = c.dist)",
             src, dst, obj, src, dst, obj);
    char *counts = query_text(db, sql);
    assert_non_null(counts);
    long a = 0, b = 0, same = 0;
    assert_int_equal(sscanf(counts, "%ld %ld %ld", &a, &b, &same), 3);
    if (!(a == b && b == same && a > 0)) fail_msg("dyng_matrix on CUDA and on the CPU: %s (rows, rows, equal)", counts);
    free(counts);
    char *on = query_text(db, "SELECT json_extract(dyng_config('graphs'), '$[1].matrices.on_backend')");
    assert_non_null(on);
    assert_int_equal(atoi(on), round + 1);
    free(on);
    random_batch(db, &r, 40, n, integer);
  }
  sqlite3_close(db);
}

static void test_matrix_sparse_directed_integer(void **state) { (void)state; matrix_case(0, 1, 1, 31); }
static void test_matrix_grid_undirected_real(void **state) { (void)state; matrix_case(1, 0, 0, 32); }
static void test_matrix_ties_everywhere_grid_directed(void **state) { (void)state; matrix_case(1, 1, 2, 33); }

/* Kept trees through many small batches: the host graph compacts its pools
** and outgrows the device copy's room on the way (new nodes), and each time
** the copy is loaded again, the trees must still follow the batch. */
static void test_kept_trees_through_reloads_of_the_device_copy(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() ^ 0x51ed);
  sqlite3 *db = sql_open(":memory:");
  int quick = getenv("DYNG_TEST_QUICK") != NULL, n = quick ? 200 : 1500, batches = quick ? 60 : 240;
  make_edges(db, &r, 0, n, 0);
  sql_ok(db, "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', directed=1, backend=cpu);"
              "CREATE VIRTUAL TABLE gg USING dyng(edges=e, weights='a,b', directed=1, backend=cuda)");
  sqlite3_int64 sources[2] = {some_node(db), some_node(db)};
  for (int i = 0; i < 2; i++) compare_trees(db, sources[i], i ? "b" : "a", 1);
  int next_node = n;
  for (int b = 0; b < batches; b++) {
    sql_ok(db, "BEGIN");
    for (int j = 0; j < 6; j++) {
      char sql[200];
      int from = (int)test_rng_below(&r, (uint64_t)n), to = j % 3 == 0 ? next_node++ : (int)test_rng_below(&r, (uint64_t)n);
      snprintf(sql, sizeof sql, "INSERT INTO e VALUES (%d, %d, %.17g, %.17g)", from * 7 - 100, to * 7 - 100,
               0.5 + 9.5 * test_rng_unit(&r), 0.01 + test_rng_unit(&r));
      sql_ok(db, sql);
    }
    sql_ok(db, "DELETE FROM e WHERE rowid = (SELECT rowid FROM e LIMIT 1 OFFSET abs(random()) % "
                "max(1, (SELECT count(*) FROM e)))");
    sql_ok(db, "COMMIT");
    if (b % 10 == 9)
      for (int i = 0; i < 2; i++) compare_trees(db, sources[i], i ? "b" : "a", 1);
  }
  sqlite3_close(db);
}

/* Weights far apart: one of 1e17 among weights near 1 (the search's bucket
** width, from the mean weight, vanishes next to such distances), and ones
** that vanish next to a distance of 1e16 (an edge then is tight both
** ways).  The search must end and its parents lead to the source. */
static void test_weights_of_very_different_sizes(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() ^ 0xfa7);
  for (int directed = 0; directed < 2; directed++) {
    sqlite3 *db = sql_open(":memory:");
    make_edges(db, &r, 0, 300, 0);
    char sql[300];
    snprintf(sql, sizeof sql,
             "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', directed=%d, backend=cpu);"
             "CREATE VIRTUAL TABLE gg USING dyng(edges=e, weights='a,b', directed=%d, backend=cuda)",
             directed, directed);
    sql_ok(db, sql);
    sqlite3_int64 s = some_node(db);
    compare_trees(db, s, "a", directed);
    /* Kept trees, then far edges: from the source at 1e17 and at 1e16, and
    ** on from there edges of 0.5, which vanish next to 1e16. */
    snprintf(sql, sizeof sql,
             "INSERT INTO e VALUES (%lld, 100001, 1e17, 1), (%lld, 100002, 1e16, 1),"
             " (100002, 100003, 0.5, 1), (100003, 100002, 0.5, 1), (100003, 100004, 0.25, 1),"
             " (100001, 100004, 3, 1)",
             (long long)s, (long long)s);
    sql_ok(db, sql);
    compare_trees(db, s, "a", directed);
    compare_trees(db, 100002, "a", directed);
    /* The same from scratch, with nothing kept. */
    sql_ok(db, "SELECT dyng_config('cache_mb', 0)");
    compare_trees(db, s, "a", directed);
    sqlite3_close(db);
  }
}

static void test_sparse_directed_integer(void **state) { (void)state; run_case(0, 1, 1, 1); }
static void test_sparse_directed_real(void **state) { (void)state; run_case(0, 1, 0, 2); }
static void test_sparse_undirected_integer(void **state) { (void)state; run_case(0, 0, 1, 3); }
static void test_sparse_undirected_real(void **state) { (void)state; run_case(0, 0, 0, 4); }
static void test_grid_directed_real(void **state) { (void)state; run_case(1, 1, 0, 5); }
static void test_grid_undirected_integer(void **state) { (void)state; run_case(1, 0, 1, 6); }
static void test_hubs_directed_integer(void **state) { (void)state; run_case(2, 1, 1, 7); }
static void test_hubs_undirected_real(void **state) { (void)state; run_case(2, 0, 0, 8); }
/* Weights 0 and 1: ties and zero-weight cycles everywhere. */
static void test_ties_everywhere_directed(void **state) { (void)state; run_case(0, 1, 2, 9); }
static void test_ties_everywhere_grid_undirected(void **state) { (void)state; run_case(1, 0, 2, 10); }

/* ---- cycle counts ------------------------------------------------------- */

static sqlite3_int64 query_i64(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s\n  in: %s", sqlite3_errmsg(db), sql);
  if (sqlite3_step(st) != SQLITE_ROW) fail_msg("%s\n  in: %s", sqlite3_errmsg(db), sql);
  sqlite3_int64 x = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return x;
}

/* Fills c(src, dst, a): m random edges among n nodes, a tenth of them from
** one of three hubs; then copies of a twentieth of the edges (parallel
** edges), their reverses (antiparallel pairs) and a few self-loops. */
static void make_cycle_edges(sqlite3 *db, test_rng *r, int n, int m) {
  sql_ok(db, "CREATE TABLE c(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL)");
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO c VALUES (?, ?, 1)", -1, &st, NULL), SQLITE_OK);
  for (int i = 0; i < m + n / 20; i++) {
    int hub = test_rng_below(r, 10) == 0;
    sqlite3_int64 a = (sqlite3_int64)test_rng_below(r, hub ? 3 : (uint64_t)n);
    sqlite3_int64 b = i < m ? (sqlite3_int64)test_rng_below(r, (uint64_t)n) : a; /* the last: self-loops */
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  char sql[300];
  snprintf(sql, sizeof sql,
           "INSERT INTO c SELECT src, dst, 1 FROM c WHERE rowid %% 20 = 1;"
           "INSERT INTO c SELECT dst, src, 1 FROM c WHERE rowid %% 20 = 2");
  sql_ok(db, sql);
}

/* A batch of n changes to c: inserts (a few of them self-loops or copies
** of an existing edge or its reverse), deletes and weight updates. */
static void cycle_batch(sqlite3 *db, test_rng *r, int n, int n_nodes) {
  sql_ok(db, "BEGIN");
  for (int i = 0; i < n; i++) {
    char sql[300];
    switch (test_rng_below(r, 4)) {
    case 0: {
      /* An eighth of them self-loops. */
      int a = (int)test_rng_below(r, (uint64_t)n_nodes);
      int b = test_rng_below(r, 8) == 0 ? a : (int)test_rng_below(r, (uint64_t)n_nodes);
      snprintf(sql, sizeof sql, "INSERT INTO c VALUES (%d, %d, 1)", a, b);
      break;
    }
    case 1:
      snprintf(sql, sizeof sql,
               "INSERT INTO c SELECT %s, 1 FROM c LIMIT 1 OFFSET abs(random()) %% max(1, (SELECT count(*) FROM c))",
               test_rng_below(r, 2) ? "src, dst" : "dst, src");
      break;
    case 2:
      snprintf(sql, sizeof sql,
               "DELETE FROM c WHERE rowid = (SELECT rowid FROM c LIMIT 1 OFFSET abs(random()) %% "
               "max(1, (SELECT count(*) FROM c)))");
      break;
    default:
      snprintf(sql, sizeof sql,
               "UPDATE c SET a = a + 1 WHERE rowid = (SELECT rowid FROM c LIMIT 1 OFFSET abs(random()) %% "
               "max(1, (SELECT count(*) FROM c)))");
    }
    sql_ok(db, sql);
  }
  sql_ok(db, "COMMIT");
}

/* dyng_cycle_count of the CUDA graph `gg` equals the CPU graph `gc`'s for
** k = k_from .. k_to in both modes. */
static void compare_cycle_counts(sqlite3 *db, int k_from, int k_to, const char *when) {
  for (int k = k_from; k <= k_to; k++)
    for (int directed = 0; directed < 2; directed++) {
      char sql[200];
      const char *mode = directed ? ", 'directed'" : "";
      snprintf(sql, sizeof sql, "SELECT dyng_cycle_count('gc', %d%s)", k, mode);
      sqlite3_int64 cpu = query_i64(db, sql);
      snprintf(sql, sizeof sql, "SELECT dyng_cycle_count('gg', %d%s)", k, mode);
      sqlite3_int64 gpu = query_i64(db, sql);
      if (cpu != gpu)
        fail_msg("%s: %d-cycles%s: CPU %lld, CUDA %lld", when, k, directed ? " (directed)" : "", (long long)cpu,
                 (long long)gpu);
    }
}

/* The counts a graph keeps, summed over its k and modes: its updates (a
** batch's changed edges) and its recounts. */
static sqlite3_int64 kept_count_field(sqlite3 *db, const char *graph, const char *field) {
  char sql[400];
  snprintf(sql, sizeof sql,
           "SELECT coalesce(sum(json_extract(c.value, '$.%s')), 0) FROM json_each(dyng_config(), '$.graphs') AS g, "
           "json_each(g.value, '$.cycle_counts') AS c WHERE json_extract(g.value, '$.name') = '%s'",
           field, graph);
  return query_i64(db, sql);
}

/* Cycle counts on CUDA equal the CPU's for k = 3..7 in both modes, from
** scratch and through batches (the kept counts follow each batch by its
** changed edges, or count again when that runs long), on a random graph
** with hubs, parallel edges, antiparallel pairs and self-loops. */
static void cycle_case(int directed, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, test_seed() ^ (salt * 0x9e3779b97f4a7c15ULL));
  sqlite3 *db = sql_open(":memory:");
  int quick = getenv("DYNG_TEST_QUICK") != NULL;
  int n = quick ? 60 : 400, k_to = quick ? 5 : 7;
  make_cycle_edges(db, &r, n, 3 * n);
  char sql[300];
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE gc USING dyng(edges=c, weights=a, directed=%d, backend=cpu);"
           "CREATE VIRTUAL TABLE gg USING dyng(edges=c, weights=a, directed=%d, backend=cuda)",
           directed, directed);
  sql_ok(db, sql);
  char *on = query_text(db, "SELECT json_extract(value, '$.runs_on.cycle_counts') FROM json_each(dyng_config(), "
                            "'$.graphs') WHERE json_extract(value, '$.name') = 'gg'");
  assert_non_null(on);
  if (strncmp(on, "cuda", 4) != 0) fail_msg("cycle counts of a CUDA graph run on %s", on);
  free(on);
  compare_cycle_counts(db, 3, k_to, "from scratch");
  /* Kept counts follow each batch on a snapshot patched batch after batch. */
  const int sizes[] = {1, 2, 5, 40, 3, 1, 200, 17, 1, 90};
  for (int b = 0; b < (quick ? 3 : 10); b++) {
    cycle_batch(db, &r, sizes[b], n);
    char when[40];
    snprintf(when, sizeof when, "after batch %d", b + 1);
    compare_cycle_counts(db, 3, k_to, when);
  }
  sqlite3_int64 updates = kept_count_field(db, "gg", "updates"), recounts = kept_count_field(db, "gg", "recounts");
  printf("# %s: CUDA kept counts: %lld updates, %lld recounts\n", directed ? "directed" : "undirected",
         (long long)updates, (long long)recounts);
  if (!quick) assert_true(updates > 0);
  sqlite3_close(db);
}

static void test_cycle_counts_undirected_graph(void **state) { (void)state; cycle_case(0, 11); }
static void test_cycle_counts_directed_graph(void **state) { (void)state; cycle_case(1, 12); }

/* Counts around hubs whose lists are long (hundreds of entries): the
** 4-cycles from hub roots, which all blocks share, and triangles through
** changed edges between hubs, whose lists are cut into pieces; from
** scratch and through batches that add and remove edges between hubs. */
static void test_cycle_counts_around_big_hubs(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() ^ 0xb16b0b);
  const int quick = getenv("DYNG_TEST_QUICK") != NULL;
  /* Enough draws that each hub's simple list passes 256 entries (about
  ** 330 of 700, 490 of 1500). */
  const int n = quick ? 700 : 1500, hubs = 5, per_hub = quick ? 450 : 600;
  for (int directed = 0; directed < 2; directed++) {
    sqlite3 *db = sql_open(":memory:");
    sql_ok(db, "CREATE TABLE c(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL); BEGIN");
    char sql[300];
    for (int h = 0; h < hubs; h++)
      for (int i = 0; i < per_hub; i++) {
        int v = hubs + (int)test_rng_below(&r, (uint64_t)(n - hubs));
        int out = test_rng_below(&r, 2) == 0;
        snprintf(sql, sizeof sql, "INSERT INTO c VALUES (%d, %d, 1)", out ? h : v, out ? v : h);
        sql_ok(db, sql);
      }
    for (int i = 0; i < 2 * n; i++) {
      snprintf(sql, sizeof sql, "INSERT INTO c VALUES (%d, %d, 1)", (int)test_rng_below(&r, (uint64_t)n),
               (int)test_rng_below(&r, (uint64_t)n));
      sql_ok(db, sql);
    }
    sql_ok(db, "INSERT INTO c VALUES (0, 1, 1), (1, 2, 1), (2, 0, 1), (3, 4, 1); COMMIT");
    snprintf(sql, sizeof sql,
             "CREATE VIRTUAL TABLE gc USING dyng(edges=c, weights=a, directed=%d, backend=cpu);"
             "CREATE VIRTUAL TABLE gg USING dyng(edges=c, weights=a, directed=%d, backend=cuda)",
             directed, directed);
    sql_ok(db, sql);
    compare_cycle_counts(db, 3, 4, "hubs, from scratch");
    for (int b = 0; b < (quick ? 2 : 4); b++) {
      /* Edges between hubs come and go, with some random changes. */
      sql_ok(db, "BEGIN");
      for (int i = 0; i < 3; i++) {
        int x = (int)test_rng_below(&r, hubs), y = (int)test_rng_below(&r, hubs);
        snprintf(sql, sizeof sql, "INSERT INTO c VALUES (%d, %d, 1)", x, y);
        sql_ok(db, sql);
      }
      sql_ok(db, "DELETE FROM c WHERE rowid = (SELECT min(rowid) FROM c WHERE src < 5 AND dst < 5)");
      sql_ok(db, "COMMIT");
      cycle_batch(db, &r, 20, n);
      char when[40];
      snprintf(when, sizeof when, "hubs, after batch %d", b + 1);
      compare_cycle_counts(db, 3, 4, when);
    }
    sqlite3_int64 updates = kept_count_field(db, "gg", "updates");
    printf("# hubs%s: CUDA kept counts: %lld updates, %lld recounts\n", directed ? " (directed)" : "",
           (long long)updates, (long long)kept_count_field(db, "gg", "recounts"));
    assert_true(updates > 0);
    sqlite3_close(db);
  }
}

/* k = 8..10 on a small sparse graph (a ring with chords, so that long
** cycles exist), from scratch and after a batch, both modes. */
static void test_long_cycle_counts_small_sparse_graph(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() ^ 0xc1c1e);
  for (int directed = 0; directed < 2; directed++) {
    sqlite3 *db = sql_open(":memory:");
    int n = getenv("DYNG_TEST_QUICK") ? 24 : 60;
    sql_ok(db, "CREATE TABLE c(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL)");
    char sql[300];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < %d) "
             "INSERT INTO c SELECT x, (x + 1) %% %d, 1 FROM i",
             n - 1, n);
    sql_ok(db, sql);
    for (int i = 0; i < n / 2; i++) {
      snprintf(sql, sizeof sql, "INSERT INTO c VALUES (%d, %d, 1)", (int)test_rng_below(&r, (uint64_t)n),
               (int)test_rng_below(&r, (uint64_t)n));
      sql_ok(db, sql);
    }
    snprintf(sql, sizeof sql,
             "CREATE VIRTUAL TABLE gc USING dyng(edges=c, weights=a, directed=%d, backend=cpu);"
             "CREATE VIRTUAL TABLE gg USING dyng(edges=c, weights=a, directed=%d, backend=cuda)",
             directed, directed);
    sql_ok(db, sql);
    compare_cycle_counts(db, 8, 10, "from scratch");
    cycle_batch(db, &r, 4, n);
    compare_cycle_counts(db, 8, 10, "after a batch");
    sqlite3_close(db);
  }
}

/* ego-Facebook ($DYNG_DATA_DIR/facebook_combined.txt, when present): SNAP's
** 1,612,010 triangles, and 3- and 4-cycles in both modes equal to the CPU's,
** also after deleting a seventh of the edges. */
static void test_facebook_cycle_counts_when_present(void **state) {
  (void)state;
  const char *dir = getenv("DYNG_DATA_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/facebook_combined.txt", dir ? dir : "");
  FILE *f = dir && !getenv("DYNG_TEST_QUICK") ? fopen(path, "r") : NULL;
  if (!f) {
    /* (Not cmocka's skip(): its TAP line reads as a failure.) */
    printf("# left out: %s not found%s\n", path, getenv("DYNG_TEST_QUICK") ? " or DYNG_TEST_QUICK set" : "");
    return;
  }
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE c(src INTEGER, dst INTEGER, a REAL); BEGIN");
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO c VALUES (?, ?, 1)", -1, &p, NULL), SQLITE_OK);
  long long u, v;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%lld %lld", &u, &v) != 2) continue;
    sqlite3_bind_int64(p, 1, u);
    sqlite3_bind_int64(p, 2, v);
    assert_int_equal(sqlite3_step(p), SQLITE_DONE);
    sqlite3_reset(p);
  }
  fclose(f);
  sqlite3_finalize(p);
  sql_ok(db, "COMMIT;"
              "CREATE VIRTUAL TABLE gc USING dyng(edges=c, weights=a, directed=0, backend=cpu);"
              "CREATE VIRTUAL TABLE gg USING dyng(edges=c, weights=a, directed=0, backend=cuda)");
  assert_int_equal(query_i64(db, "SELECT dyng_cycle_count('gg', 3)"), 1612010);
  compare_cycle_counts(db, 3, 4, "ego-Facebook");
  sql_ok(db, "DELETE FROM c WHERE rowid % 7 = 0");
  compare_cycle_counts(db, 3, 4, "ego-Facebook less a seventh");
  sqlite3_close(db);
}

/* Runs this program again as `mode`, with `env` ("NAME=VALUE", or NULL)
** added to its environment and DYNG_REQUIRE_CUDA removed; the child's
** output goes to stderr (the test's log), not into the TAP stream. */
static int run_child(const char *mode, const char *env) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(2, 1);
    unsetenv("DYNG_REQUIRE_CUDA");
    if (env) putenv((char *)env);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) _exit(100);
    self[len] = 0;
    execl(self, self, mode, (char *)NULL);
    _exit(101);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The cases again, with the searches' loops on the host. */
static void test_host_loop_gives_the_same_trees(void **state) {
  (void)state;
  /* Under compute-sanitizer (DYNG_TEST_QUICK) the same kernels have just
  ** run in the cases above; only their launches differ here. */
  if (getenv("DYNG_TEST_QUICK")) {
    printf("# left out under DYNG_TEST_QUICK\n");
    return;
  }
  int rc = run_child("--cases", "DYNG_CUDA_HOST_LOOP=1");
  if (rc != 0) fail_msg("the cases with DYNG_CUDA_HOST_LOOP=1 failed (status %d; see the log)", rc);
}

/* The cycle cases again, with the snapshot built anew at every batch and
** the changed edges found on the host (the path taken when a patch is not
** possible). */
static void test_cycle_counts_with_snapshots_built_anew(void **state) {
  (void)state;
  int rc = run_child("--cycles", "DYNG_CUDA_CYCLES_REBUILD=1");
  if (rc != 0) fail_msg("the cycle cases with DYNG_CUDA_CYCLES_REBUILD=1 failed (status %d; see the log)", rc);
}

/* A graph the device cannot hold: in the child, every device allocation
** past 1 MB fails. */
static void test_graph_too_large_for_the_device(void **state) {
  (void)state;
  int rc = run_child("--too-large", "DYNG_CUDA_MAX_ALLOC=1000000");
  if (rc != 0) fail_msg("the child with DYNG_CUDA_MAX_ALLOC failed (status %d; see the log)", rc);
}

/* In a child: an in-memory database with dyng loaded and `setup` run, or
** NULL after saying on stderr, as `who`, what failed. */
static sqlite3 *child_open(const char *who, const char *setup) {
  sqlite3 *db = NULL;
  char *err = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    fprintf(stderr, "%s: cannot open a database\n", who);
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, getenv("DYNG_EXTENSION"), "sqlite3_dyng_init", &err) != SQLITE_OK ||
      sqlite3_exec(db, setup, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "%s: %s\n", who, err ? err : "cannot load dyng");
    sqlite3_free(err);
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

/* In the child of test_graph_too_large_for_the_device: a small graph still
** goes to CUDA; a 200 x 200 grid (160,000 edges: 1.6 MB of weights per
** objective) goes to the CPU with the reason, answers as a CPU graph does,
** and is an error with backend=cuda.  Returns 0 when all holds. */
static int child_too_large(void) {
  char *err = NULL;
  static const char *setup =
      "CREATE TABLE small(src INTEGER, dst INTEGER, a REAL, b REAL);"
      "INSERT INTO small VALUES (1,2,1,1),(2,3,2,1),(1,3,5,1),(3,4,1,1);"
      "CREATE VIRTUAL TABLE gs USING dyng(edges=small, weights='a,b');"
      "CREATE TABLE e(src INTEGER, dst INTEGER, a REAL, b REAL);"
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 39999) "
      "INSERT INTO e SELECT x, x + 1, 1 + x % 7, 1 + x % 3 FROM i WHERE x % 200 < 199 "
      "UNION ALL SELECT x + 1, x, 1 + x % 5, 1 + x % 2 FROM i WHERE x % 200 < 199 "
      "UNION ALL SELECT x, x + 200, 1 + x % 11, 1 FROM i WHERE x < 39800 "
      "UNION ALL SELECT x + 200, x, 1 + x % 13, 1 FROM i WHERE x < 39800;"
      "CREATE VIRTUAL TABLE gbig USING dyng(edges=e, weights='a,b');"
      "CREATE VIRTUAL TABLE gcpu USING dyng(edges=e, weights='a,b', backend=cpu);";
  sqlite3 *db = child_open("too-large", setup);
  if (!db) return 2;
  static const char *check =
      "SELECT (SELECT json_extract(value, '$.backend') FROM json_each(dyng_config(), '$.graphs') "
      "        WHERE json_extract(value, '$.name') = 'gs') LIKE 'cuda%' "
      "   AND (SELECT json_extract(value, '$.backend') FROM json_each(dyng_config(), '$.graphs') "
      "        WHERE json_extract(value, '$.name') = 'gbig') = 'cpu' "
      "   AND (SELECT json_extract(value, '$.backend_reason') FROM json_each(dyng_config(), '$.graphs') "
      "        WHERE json_extract(value, '$.name') = 'gbig') LIKE '%could not take the graph%out of memory%CPU%' "
      "   AND (SELECT group_concat(node || ':' || dist) FROM dyng_sssp('gs', 1)) = '1:0.0,2:1.0,3:3.0,4:4.0' "
      "   AND (SELECT sum(dist) FROM dyng_sssp('gbig', 20100)) = (SELECT sum(dist) FROM dyng_sssp('gcpu', 20100)) "
      "   AND (SELECT count(*) FROM dyng_sssp('gbig', 20100, 'b')) = 40000";
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, check, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW ||
      sqlite3_column_int(st, 0) != 1) {
    char *cfg = NULL;
    sqlite3_stmt *c = NULL;
    if (sqlite3_prepare_v2(db, "SELECT dyng_config()", -1, &c, NULL) == SQLITE_OK && sqlite3_step(c) == SQLITE_ROW)
      cfg = strdup((const char *)sqlite3_column_text(c, 0));
    sqlite3_finalize(c);
    fprintf(stderr, "too-large: the check failed (%s); dyng_config() = %s\n", sqlite3_errmsg(db), cfg ? cfg : "?");
    free(cfg);
    return 4;
  }
  sqlite3_finalize(st);
  int rc = sqlite3_exec(db, "CREATE VIRTUAL TABLE greq USING dyng(edges=e, weights='a,b', backend=cuda)", NULL, NULL,
                        &err);
  if (rc == SQLITE_OK || !err || !strstr(err, "could not take the graph") || !strstr(err, "greq")) {
    fprintf(stderr, "too-large: backend=cuda gave %d: %s\n", rc, err ? err : "no message");
    return 5;
  }
  sqlite3_free(err);
  sqlite3_close(db);
  return 0;
}

/* A graph the device holds, whose first search then finds no room for its
** work space: in the child, every device allocation past 1.2 MB fails. */
static void test_device_full_after_attach(void **state) {
  (void)state;
  int rc = run_child("--full-later", "DYNG_CUDA_MAX_ALLOC=1200000");
  if (rc != 0) fail_msg("the child with DYNG_CUDA_MAX_ALLOC failed (status %d; see the log)", rc);
}

/* The value at `path` of graph `g`'s entry in dyng_config(), as text. */
static char *graph_config(sqlite3 *db, const char *g, const char *path) {
  sqlite3_stmt *st = NULL;
  char *out = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT json_extract(value, ?2) FROM json_each(dyng_config(), '$.graphs') "
                         "WHERE json_extract(value, '$.name') = ?1",
                         -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, g, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = strdup((const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  return out;
}

/* In the child of test_device_full_after_attach: 200,000 vertices joined
** by 100,000 directed edges.  The graph's device copy (its largest array
** 1.0 MB of weights) fits under the limit; a search's work space (1.6 MB
** per frontier) does not.  The graph must go to the CPU at its first
** search, with the reason, and answer as a CPU graph; with backend=cuda
** the same search is an error naming the device's memory.  Returns 0 when
** all holds. */
static int child_full_later(void) {
  char *err = NULL;
  static const char *setup =
      "CREATE TABLE m(src INTEGER, dst INTEGER, a REAL);"
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 99999) "
      "INSERT INTO m SELECT x, x + 100000, 1 + x % 5 FROM i;"
      "INSERT INTO m VALUES (100000, 1, 1), (100001, 2, 3), (100002, 7, 2);"
      "CREATE VIRTUAL TABLE gm USING dyng(edges=m, weights='a', directed=1);"
      "CREATE VIRTUAL TABLE gmc USING dyng(edges=m, weights='a', directed=1, backend=cpu);"
      "CREATE VIRTUAL TABLE gmr USING dyng(edges=m, weights='a', directed=1, backend=cuda);";
  sqlite3 *db = child_open("full-later", setup);
  if (!db) return 2;
  char *before = graph_config(db, "gm", "$.backend");
  int ok = before && strncmp(before, "cuda", 4) == 0;
  if (!ok) fprintf(stderr, "full-later: gm is on %s before its first search\n", before ? before : "?");
  free(before);
  static const char *check =
      "SELECT (SELECT group_concat(node || ':' || dist) FROM dyng_sssp('gm', 0)) = "
      "       (SELECT group_concat(node || ':' || dist) FROM dyng_sssp('gmc', 0)) "
      "   AND (SELECT group_concat(node || ':' || dist) FROM dyng_sssp('gm', 100000)) = "
      "       (SELECT group_concat(node || ':' || dist) FROM dyng_sssp('gmc', 100000))";
  sqlite3_stmt *st = NULL;
  if (ok && (sqlite3_prepare_v2(db, check, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW ||
             sqlite3_column_int(st, 0) != 1)) {
    fprintf(stderr, "full-later: gm's answers differ from the CPU's (%s)\n", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_finalize(st);
  char *after = graph_config(db, "gm", "$.backend"), *why = graph_config(db, "gm", "$.backend_reason");
  if (ok && (!after || strcmp(after, "cpu") != 0 || !why || !strstr(why, "ran out of device memory") ||
             !strstr(why, "computed on the CPU"))) {
    fprintf(stderr, "full-later: after its search gm is on %s because %s\n", after ? after : "?", why ? why : "?");
    ok = 0;
  }
  free(after);
  free(why);
  if (ok) {
    int rc = sqlite3_exec(db, "SELECT count(*) FROM dyng_sssp('gmr', 0)", NULL, NULL, &err);
    if (rc == SQLITE_OK || !err || !strstr(err, "gmr") || !strstr(err, "device memory")) {
      fprintf(stderr, "full-later: backend=cuda gave %d: %s\n", rc, err ? err : "no message");
      ok = 0;
    }
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return ok ? 0 : 4;
}

/* Kept trees on the device when the device fills: in the child, every
** device allocation past 1.6 MB fails, which the graph and its trees stay
** under and the MOSP path's ensemble does not. */
static void test_device_full_with_kept_trees(void **state) {
  (void)state;
  int rc = run_child("--mosp-full", "DYNG_CUDA_MAX_ALLOC=1600000");
  if (rc != 0) fail_msg("the child with DYNG_CUDA_MAX_ALLOC failed (status %d; see the log)", rc);
}

/* In the child of test_device_full_with_kept_trees: a binary tree of
** 100,000 vertices (directed, every path unique), three objectives.
** dyng_mosp computes and keeps the three trees on the device (each array
** under 1 MB), then its ensemble (27 bytes a vertex) finds no room: the
** graph must move to the CPU, bringing the kept trees' rows, and answer as
** a CPU graph, also after a batch.  Returns 0 when all holds. */
static char *mosp_rows(sqlite3 *db, const char *graph, sqlite3_int64 s, sqlite3_int64 t);

static int child_mosp_full(void) {
  char *err = NULL;
  static const char *setup =
      "CREATE TABLE m(src INTEGER, dst INTEGER, a REAL, b REAL, c REAL);"
      "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < 99999) "
      "INSERT INTO m SELECT (x - 1) / 2, x, 1 + x % 7, 1 + x % 5, 1 + x % 3 FROM i;"
      "CREATE VIRTUAL TABLE gm USING dyng(edges=m, weights='a,b,c', directed=1);"
      "CREATE VIRTUAL TABLE gmc USING dyng(edges=m, weights='a,b,c', directed=1, backend=cpu);";
  sqlite3 *db = child_open("mosp-full", setup);
  if (!db) return 2;
  int ok = 1;
  for (int round = 0; round < 2 && ok; round++) {
    /* Trees first (kept on the device), then the path from them. */
    char *before = graph_config(db, "gm", "$.backend");
    char *counts = query_text(db, "SELECT (SELECT count(*) FROM dyng_sssp('gm', 0, 'a')) || ' ' || "
                                  "(SELECT count(*) FROM dyng_sssp('gm', 0, 'b') WHERE node = 99998) || ' ' || "
                                  "(SELECT count(*) FROM dyng_path('gm', 0, 77777, 'c'))");
    char *g = mosp_rows(db, "gm", 0, 99998), *c = mosp_rows(db, "gmc", 0, 99998);
    char *after = graph_config(db, "gm", "$.backend"), *why = graph_config(db, "gm", "$.backend_reason");
    if (round == 0 && (!before || strncmp(before, "cuda", 4) != 0)) {
      fprintf(stderr, "mosp-full: gm starts on %s\n", before ? before : "?");
      ok = 0;
    }
    if (!counts || strcmp(counts, "100000 1 17") != 0) {
      fprintf(stderr, "mosp-full: round %d: tree rows %s\n", round, counts ? counts : sqlite3_errmsg(db));
      ok = 0;
    }
    if (strcmp(g, c) != 0 || !g[0]) {
      fprintf(stderr, "mosp-full: round %d: gm's path differs from the CPU's:\n%.300s\n%.300s\n", round, g, c);
      ok = 0;
    }
    if (!after || strcmp(after, "cpu") != 0 || !why || !strstr(why, "ensemble path")) {
      fprintf(stderr, "mosp-full: round %d: gm is on %s because %s\n", round, after ? after : "?",
              why ? why : "?");
      ok = 0;
    }
    free(before), free(counts), free(g), free(c), free(after), free(why);
    /* A batch, followed by the trees now kept on the CPU. */
    if (sqlite3_exec(db, "INSERT INTO m VALUES (0, 99998, 1, 100, 100)", NULL, NULL, &err) != SQLITE_OK) {
      fprintf(stderr, "mosp-full: %s\n", err);
      ok = 0;
    }
  }
  sqlite3_close(db);
  return ok ? 0 : 4;
}

/* A process that used dyng on the CPU only (loading, dyng_config, a CPU
** graph) forks; the child must be able to start CUDA and get the same
** answers. */
static void test_forked_child_can_use_cuda(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, a REAL, b REAL);"
              "INSERT INTO e VALUES (1,2,1,1),(2,3,2,1),(1,3,5,1),(3,4,1,1);"
              "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', backend=cpu)");
  char *cpu = query_text(db, "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('gc', 1)");
  char *cfg = query_text(db, "SELECT dyng_config()");
  free(cfg);
  sqlite3_close(db);
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    sqlite3 *c = NULL;
    char *err = NULL;
    if (sqlite3_open(":memory:", &c) != SQLITE_OK) _exit(2);
    sqlite3_enable_load_extension(c, 1);
    if (sqlite3_load_extension(c, getenv("DYNG_EXTENSION"), "sqlite3_dyng_init", &err) != SQLITE_OK) _exit(3);
    if (sqlite3_exec(c,
                     "CREATE TABLE e(src INTEGER, dst INTEGER, a REAL, b REAL);"
                     "INSERT INTO e VALUES (1,2,1,1),(2,3,2,1),(1,3,5,1),(3,4,1,1);"
                     "CREATE VIRTUAL TABLE gg USING dyng(edges=e, weights='a,b', backend=cuda)",
                     NULL, NULL, &err) != SQLITE_OK) {
      fprintf(stderr, "child: %s\n", err);
      _exit(4);
    }
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(c, "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('gg', 1)", -1, &st, NULL);
    int same = sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), cpu) == 0;
    sqlite3_finalize(st);
    sqlite3_close(c);
    _exit(same ? 0 : 5);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("the child failed (status %d)", status);
  free(cpu);
}

/* ---- the MOSP ensemble path --------------------------------------------- */

/* Fills m(src, dst, a, b, c) with a random sparse graph on nodes 0 .. n-1
** and one edge apart from it (n + 1 -> n + 2, never reached from the
** rest): weights real (0.5 .. 10), or small integers (1 .. 3, or 0 .. 3
** with `zeros`) so that trees tie. */
static void mosp_edges(sqlite3 *db, test_rng *r, int n, int integer, int zeros) {
  sql_ok(db, "CREATE TABLE m(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL, b REAL, c REAL)");
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO m VALUES (?, ?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
  for (int i = 0; i <= 3 * n; i++) {
    sqlite3_bind_int64(st, 1, i < 3 * n ? (sqlite3_int64)test_rng_below(r, (uint64_t)n) : n + 1);
    sqlite3_bind_int64(st, 2, i < 3 * n ? (sqlite3_int64)test_rng_below(r, (uint64_t)n) : n + 2);
    for (int k = 0; k < 3; k++)
      sqlite3_bind_double(st, 3 + k, integer ? (double)(zeros ? test_rng_below(r, 4) : 1 + test_rng_below(r, 3))
                                             : 0.5 + 9.5 * test_rng_unit(r));
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

/* A batch of n random changes to m: inserts, deletes, weight changes. */
static void mosp_batch(sqlite3 *db, test_rng *r, int n, int n_nodes, int integer) {
  sql_ok(db, "BEGIN");
  for (int i = 0; i < n; i++) {
    char sql[300];
    double w[3];
    for (int k = 0; k < 3; k++) w[k] = integer ? (double)(1 + test_rng_below(r, 3)) : 0.5 + 9.5 * test_rng_unit(r);
    switch (test_rng_below(r, 3)) {
    case 0:
      snprintf(sql, sizeof sql, "INSERT INTO m VALUES (%d, %d, %.17g, %.17g, %.17g)",
               (int)test_rng_below(r, (uint64_t)n_nodes), (int)test_rng_below(r, (uint64_t)n_nodes), w[0], w[1], w[2]);
      break;
    case 1:
      snprintf(sql, sizeof sql,
               "DELETE FROM m WHERE rowid = (SELECT rowid FROM m WHERE src < %d LIMIT 1 OFFSET abs(random()) %% "
               "max(1, (SELECT count(*) FROM m WHERE src < %d)))",
               n_nodes, n_nodes);
      break;
    default:
      snprintf(sql, sizeof sql,
               "UPDATE m SET a = %.17g, b = %.17g WHERE rowid = (SELECT rowid FROM m LIMIT 1 OFFSET "
               "abs(random()) %% max(1, (SELECT count(*) FROM m)))",
               w[0], w[1]);
    }
    sql_ok(db, sql);
  }
  sql_ok(db, "COMMIT");
}

/* dyng_mosp's rows of `graph` as one string: seq, node, edge, agg_costs. */
static char *mosp_rows(sqlite3 *db, const char *graph, sqlite3_int64 s, sqlite3_int64 t) {
  char sql[300];
  snprintf(sql, sizeof sql,
           "SELECT ifnull(group_concat(seq || ':' || node || ':' || ifnull(edge, '-') || ':' || agg_costs, ' '), '') "
           "FROM dyng_mosp('%s', %lld, %lld)",
           graph, (long long)s, (long long)t);
  char *z = query_text(db, sql);
  assert_non_null(z);
  return z;
}

/* Whether gc and gg keep the same trees from s (every objective): then
** their ensembles, and so their paths, must be the same. */
static int mosp_same_trees(sqlite3 *db, sqlite3_int64 s, int n_w) {
  for (int k = 0; k < n_w; k++) {
    char sql[500];
    snprintf(sql, sizeof sql,
             "WITH g AS MATERIALIZED (SELECT node, parent, edge FROM dyng_sssp('gg', %lld, %d)) "
             "SELECT (SELECT count(*) FROM dyng_sssp('gc', %lld, %d)) = (SELECT count(*) FROM g)"
             " AND NOT EXISTS (SELECT 1 FROM dyng_sssp('gc', %lld, %d) AS c JOIN g "
             "USING (node) WHERE c.edge IS NOT g.edge OR c.parent IS NOT g.parent)",
             (long long)s, k, (long long)s, k, (long long)s, k);
    char *z = query_text(db, sql);
    int same = z && strcmp(z, "1") == 0;
    free(z);
    if (!same) return 0;
  }
  return 1;
}

/* gg's path from s to t against the heuristic rebuilt here from gg's own
** trees (read through dyng_sssp): a real path from s to t whose every step
** is an ensemble edge, whose ensemble cost is the least (Bellman-Ford over
** the ensemble, nodes 0 .. n_nodes + 2) and whose agg_costs add up its
** edges' weights.  No path exactly when no tree reaches t. */
static void mosp_check_path(sqlite3 *db, sqlite3_int64 s, sqlite3_int64 t, int n_w, int n_nodes, int directed) {
  char sql[1500];
  int len = snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS temp.ens; CREATE TEMP TABLE ens AS "
                                      "SELECT u, v, r, %d + 1 - count(*) AS w FROM (",
                     n_w);
  for (int k = 0; k < n_w; k++)
    len += snprintf(sql + len, sizeof sql - (size_t)len,
                    "%sSELECT parent AS u, node AS v, edge AS r FROM dyng_sssp('gg', %lld, %d) WHERE parent IS NOT NULL",
                    k ? " UNION ALL " : "", (long long)s, k);
  snprintf(sql + len, sizeof sql - (size_t)len, ") GROUP BY u, v, r");
  sql_ok(db, sql);
  int nn = n_nodes + 3, n_ens = 0, cap = 1024;
  sqlite3_int64 *eu = malloc(cap * sizeof *eu), *ev = malloc(cap * sizeof *ev);
  double *ew = malloc(cap * sizeof *ew), *d = malloc(nn * sizeof *d);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT u, v, w FROM ens", -1, &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (n_ens == cap) {
      cap *= 2;
      eu = realloc(eu, cap * sizeof *eu), ev = realloc(ev, cap * sizeof *ev), ew = realloc(ew, cap * sizeof *ew);
    }
    eu[n_ens] = sqlite3_column_int64(st, 0), ev[n_ens] = sqlite3_column_int64(st, 1);
    ew[n_ens++] = sqlite3_column_double(st, 2);
  }
  sqlite3_finalize(st);
  for (int i = 0; i < nn; i++) d[i] = INFINITY;
  d[s] = 0;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < n_ens; i++)
      if (d[eu[i]] + ew[i] < d[ev[i]]) d[ev[i]] = d[eu[i]] + ew[i], changed = 1;
  }
  /* The path gg returns, each step's ensemble weight looked up in ens. */
  snprintf(sql, sizeof sql,
           "SELECT p.seq, p.node, p.edge, p.agg_costs, m.src, m.dst, m.a, m.b, m.c "
           "FROM dyng_mosp('gg', %lld, %lld) AS p LEFT JOIN m ON m.rowid = p.edge ORDER BY p.seq",
           (long long)s, (long long)t);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s", sqlite3_errmsg(db));
  sqlite3_stmt *ens = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT w FROM ens WHERE u = ? AND v = ? AND r = ?", -1, &ens, NULL),
                   SQLITE_OK);
  int rows = 0;
  double agg[3] = {0, 0, 0}, cost = 0, step[3] = {0, 0, 0};
  sqlite3_int64 prev = 0, edge = 0, src = 0, dst = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows++;
    sqlite3_int64 node = sqlite3_column_int64(st, 1);
    assert_int_equal(sqlite3_column_int64(st, 0), rows);
    if (rows == 1) {
      assert_true(node == s);
    } else {
      if (!((src == prev && dst == node) || (!directed && dst == prev && src == node)))
        fail_msg("mosp %lld -> %lld: edge %lld does not join %lld and %lld", (long long)s, (long long)t,
                 (long long)edge, (long long)prev, (long long)node);
      sqlite3_bind_int64(ens, 1, prev), sqlite3_bind_int64(ens, 2, node), sqlite3_bind_int64(ens, 3, edge);
      if (sqlite3_step(ens) != SQLITE_ROW)
        fail_msg("mosp %lld -> %lld: step %lld -> %lld (edge %lld) is in no tree", (long long)s, (long long)t,
                 (long long)prev, (long long)node, (long long)edge);
      cost += sqlite3_column_double(ens, 0);
      sqlite3_reset(ens);
      for (int k = 0; k < n_w; k++) agg[k] += step[k];
    }
    /* agg_costs: JSON numbers that read back as exactly the sums. */
    const char *costs = (const char *)sqlite3_column_text(st, 3);
    for (int k = 0; k < n_w; k++) {
      sqlite3_stmt *chk = NULL;
      assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_valid(?1) AND json_extract(?1, '$[' || ?2 || ']') = ?3",
                                          -1, &chk, NULL),
                       SQLITE_OK);
      sqlite3_bind_text(chk, 1, costs, -1, SQLITE_STATIC);
      sqlite3_bind_int(chk, 2, k);
      sqlite3_bind_double(chk, 3, agg[k]);
      assert_int_equal(sqlite3_step(chk), SQLITE_ROW);
      if (sqlite3_column_int(chk, 0) != 1) fail_msg("agg_costs %s: objective %d is not %.17g", costs, k, agg[k]);
      sqlite3_finalize(chk);
    }
    if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
      assert_true(node == t);
    } else {
      edge = sqlite3_column_int64(st, 2), src = sqlite3_column_int64(st, 4), dst = sqlite3_column_int64(st, 5);
      for (int k = 0; k < n_w; k++) step[k] = sqlite3_column_double(st, 6 + k);
    }
    prev = node;
  }
  sqlite3_finalize(st);
  sqlite3_finalize(ens);
  if (isinf(d[t])) assert_int_equal(rows, 0);
  else if (cost != d[t])
    fail_msg("mosp %lld -> %lld: ensemble cost %g, least %g", (long long)s, (long long)t, cost, d[t]);
  free(eu), free(ev), free(ew), free(d);
}

/* dyng_mosp on CUDA against the CPU over one table: for random pairs (and
** s = t, and an unreachable t), after random batches.  Where both keep the
** same trees the rows must be identical (the ensemble's ties included);
** gg's path must always be a least-cost path of its own trees' ensemble. */
static void mosp_case(int n_w, int directed, int integer, int zeros, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, test_seed() ^ (salt * 0x9e3779b97f4a7c15ULL));
  sqlite3 *db = sql_open(":memory:");
  int quick = getenv("DYNG_TEST_QUICK") != NULL, n = quick ? 120 : 600, rounds = quick ? 2 : 4,
      pairs = quick ? 6 : 15;
  mosp_edges(db, &r, n, integer, zeros);
  char sql[400];
  const char *w = n_w == 2 ? "a,b" : "a,b,c";
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE gc USING dyng(edges=m, weights='%s', directed=%d, backend=cpu);"
           "CREATE VIRTUAL TABLE gg USING dyng(edges=m, weights='%s', directed=%d, backend=cuda)",
           w, directed, w, directed);
  sql_ok(db, sql);
  char *runs = query_text(db, "SELECT json_extract(value, '$.runs_on.mosp_path') FROM json_each(dyng_config(), "
                              "'$.graphs') WHERE json_extract(value, '$.name') = 'gg'");
  assert_non_null(runs);
  assert_true(strncmp(runs, "cuda", 4) == 0);
  free(runs);
  int exact = 0, total = 0;
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < pairs; i++) {
      /* A source in the main part (not n + 1, from which n + 2 is reached),
      ** picked by the test's seed. */
      char pick[200];
      snprintf(pick, sizeof pick, "SELECT src FROM m WHERE src < %d LIMIT 1 OFFSET %d", n,
               (int)test_rng_below(&r, (uint64_t)query_i64(db, "SELECT count(*) FROM m") / 2));
      char *zs = query_text(db, pick);
      sqlite3_int64 s = zs ? strtoll(zs, NULL, 10) : 0;
      free(zs);
      sqlite3_int64 t = i == 0 ? s : i == 1 ? n + 2 : (sqlite3_int64)test_rng_below(&r, (uint64_t)n);
      char *zc = mosp_rows(db, "gc", s, t), *zg = mosp_rows(db, "gg", s, t);
      total++;
      /* The same trees (the tie rule), so the same path, ties and all. */
      if (!mosp_same_trees(db, s, n_w)) fail_msg("mosp %lld: the CPU's and CUDA's trees differ", (long long)s);
      exact++;
      if (strcmp(zc, zg) != 0)
        fail_msg("mosp %lld -> %lld:\n  CPU  %.1500s\n  CUDA %.1500s", (long long)s, (long long)t, zc, zg);
      mosp_check_path(db, s, t, n_w, n, directed);
      if (i == 0) assert_true(strncmp(zg, "1:", 2) == 0 && strchr(zg, ' ') == NULL);
      if (i == 1) assert_string_equal(zg, "");
      free(zc), free(zg);
    }
    mosp_batch(db, &r, round == 0 ? 5 : n / 10, n, integer);
  }
  assert_int_equal(exact, total);
  sqlite3_close(db);
}

static void test_mosp_two_objectives_directed_real(void **state) { (void)state; mosp_case(2, 1, 0, 0, 21); }
static void test_mosp_two_objectives_undirected_integer(void **state) { (void)state; mosp_case(2, 0, 1, 0, 22); }
static void test_mosp_three_objectives_directed_integer(void **state) { (void)state; mosp_case(3, 1, 1, 0, 23); }
static void test_mosp_three_objectives_undirected_real(void **state) { (void)state; mosp_case(3, 0, 0, 0, 24); }
static void test_mosp_three_objectives_undirected_zero_weights(void **state) { (void)state; mosp_case(3, 0, 1, 1, 25); }

/* A path longer than the 4096 vertices the host first makes room for: the
** backend says how long it is and is asked again.  A directed chain
** 0 -> 1 -> .. -> L with random real weights and a few shortcuts that skip
** one vertex (cheaper in one objective only). */
static void test_mosp_path_longer_than_first_room(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() ^ 0x4096);
  sqlite3 *db = sql_open(":memory:");
  int L = getenv("DYNG_TEST_QUICK") ? 4500 : 6000;
  sql_ok(db, "CREATE TABLE m(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL, b REAL, c REAL)");
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO m VALUES (?, ?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
  sql_ok(db, "BEGIN");
  for (int i = 0; i < L; i++)
    for (int skip = 1; skip <= (i % 97 == 0 && i + 2 <= L ? 2 : 1); skip++) {
      sqlite3_bind_int64(st, 1, i);
      sqlite3_bind_int64(st, 2, i + skip);
      for (int k = 0; k < 3; k++)
        sqlite3_bind_double(st, 3 + k, skip == 1 ? 1 + test_rng_unit(&r) : (k == 0 ? 1.5 : 5.0));
      assert_int_equal(sqlite3_step(st), SQLITE_DONE);
      sqlite3_reset(st);
    }
  sql_ok(db, "COMMIT");
  sqlite3_finalize(st);
  sql_ok(db, "CREATE VIRTUAL TABLE gc USING dyng(edges=m, weights='a,b,c', directed=1, backend=cpu);"
              "CREATE VIRTUAL TABLE gg USING dyng(edges=m, weights='a,b,c', directed=1, backend=cuda)");
  char sql[200];
  char *zc = mosp_rows(db, "gc", 0, L), *zg = mosp_rows(db, "gg", 0, L);
  assert_string_equal(zc, zg);
  free(zc), free(zg);
  snprintf(sql, sizeof sql, "SELECT count(*) > 4096 FROM dyng_mosp('gg', 0, %d)", L);
  char *n = query_text(db, sql);
  assert_string_equal(n, "1");
  free(n);
  /* dyng_path walks the same length on the device's kept tree. */
  for (int k = 0; k < 3; k++) {
    char *paths[2];
    for (int g = 0; g < 2; g++) {
      snprintf(sql, sizeof sql,
               "SELECT count(*) || ' ' || group_concat(node || ':' || ifnull(edge, '') || ':' || agg_cost, ' ') "
               "FROM dyng_path('%s', 0, %d, %d)",
               g ? "gg" : "gc", L, k);
      paths[g] = query_text(db, sql);
      assert_non_null(paths[g]);
    }
    assert_true(atoi(paths[1]) > 4096);
    assert_string_equal(paths[0], paths[1]);
    free(paths[0]), free(paths[1]);
  }
  sqlite3_close(db);
}

int main(int argc, char **argv) {
  /* The children of test_host_loop_gives_the_same_trees,
  ** test_cycle_counts_with_snapshots_built_anew and the tests of a full
  ** device. */
  if (argc == 2 && strcmp(argv[1], "--too-large") == 0) return child_too_large();
  if (argc == 2 && strcmp(argv[1], "--full-later") == 0) return child_full_later();
  if (argc == 2 && strcmp(argv[1], "--mosp-full") == 0) return child_mosp_full();
  if (argc == 2 && strcmp(argv[1], "--cycles") == 0) {
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(test_cycle_counts_undirected_graph),
        cmocka_unit_test(test_cycle_counts_directed_graph),
        cmocka_unit_test(test_cycle_counts_around_big_hubs),
    };
    return cmocka_run_group_tests(cases, NULL, NULL) ? 1 : 0;
  }
  if (argc == 2 && strcmp(argv[1], "--cases") == 0) {
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(test_sparse_directed_integer),   cmocka_unit_test(test_sparse_undirected_real),
        cmocka_unit_test(test_grid_directed_real),        cmocka_unit_test(test_grid_undirected_integer),
        cmocka_unit_test(test_hubs_directed_integer),     cmocka_unit_test(test_hubs_undirected_real),
        cmocka_unit_test(test_ties_everywhere_directed),
    };
    return cmocka_run_group_tests(cases, NULL, NULL) ? 1 : 0;
  }
  /* Without a GPU the whole file is skipped, as TAP says it: a plan of
  ** nothing with the reason.  DYNG_REQUIRE_CUDA=1 turns that into a
  ** failure. */
  char *why = NULL;
  if (!gpu_usable(&why)) {
    const char *req = getenv("DYNG_REQUIRE_CUDA");
    if (req && strcmp(req, "1") == 0) {
      printf("1..1\nnot ok 1 - CUDA is required but not usable: %s\n", why ? why : "?");
      return 1;
    }
    printf("1..0 # SKIP no usable GPU backend: %s\n", why ? why : "?");
    free(why);
    return 0;
  }
  free(why);
  const struct CMUnitTest tests[] = {
      /* First: the process must not have started CUDA before it forks. */
      cmocka_unit_test(test_forked_child_can_use_cuda),
      cmocka_unit_test(test_sparse_directed_integer),   cmocka_unit_test(test_sparse_directed_real),
      cmocka_unit_test(test_sparse_undirected_integer), cmocka_unit_test(test_sparse_undirected_real),
      cmocka_unit_test(test_grid_directed_real),        cmocka_unit_test(test_grid_undirected_integer),
      cmocka_unit_test(test_hubs_directed_integer),     cmocka_unit_test(test_hubs_undirected_real),
      cmocka_unit_test(test_ties_everywhere_directed),  cmocka_unit_test(test_ties_everywhere_grid_undirected),
      cmocka_unit_test(test_kept_trees_through_reloads_of_the_device_copy),
      cmocka_unit_test(test_weights_of_very_different_sizes),
      cmocka_unit_test(test_cycle_counts_undirected_graph),
      cmocka_unit_test(test_cycle_counts_directed_graph),
      cmocka_unit_test(test_cycle_counts_around_big_hubs),
      cmocka_unit_test(test_long_cycle_counts_small_sparse_graph),
      cmocka_unit_test(test_facebook_cycle_counts_when_present),
      cmocka_unit_test(test_cycle_counts_with_snapshots_built_anew),
      cmocka_unit_test(test_host_loop_gives_the_same_trees),
      cmocka_unit_test(test_graph_too_large_for_the_device),
      cmocka_unit_test(test_device_full_after_attach),
      cmocka_unit_test(test_device_full_with_kept_trees),
      /* The MOSP ensemble path. */
      cmocka_unit_test(test_mosp_two_objectives_directed_real),
      cmocka_unit_test(test_mosp_two_objectives_undirected_integer),
      cmocka_unit_test(test_mosp_three_objectives_directed_integer),
      cmocka_unit_test(test_mosp_three_objectives_undirected_real),
      cmocka_unit_test(test_mosp_three_objectives_undirected_zero_weights),
      cmocka_unit_test(test_mosp_path_longer_than_first_room),
      /* Cost matrices. */
      cmocka_unit_test(test_matrix_sparse_directed_integer),
      cmocka_unit_test(test_matrix_grid_undirected_real),
      cmocka_unit_test(test_matrix_ties_everywhere_grid_directed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
