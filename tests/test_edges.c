/*
** tests/test_edges.c: what dyng reports about its own work, and graphs in
** attached databases whose file is detached and attached again, and the
** room a load takes.
**
** dyng_update's `touched` against the rows of the tree before and after
** (read back through dyng_sssp), a detached database's graph leaving the
** connection while a prepared statement still holds its table, and a file
** attached again answering from its change log, not from the mirror it had.
*/
#include "tests/test_util.h"

#include "tests/sql_util.h"

#include <math.h>
#include <unistd.h>

/* ---- touched ------------------------------------------------------------ */

/* One row of a tree, as dyng_sssp gives it. */
typedef struct tree_row {
  sqlite3_int64 node, parent, edge;
  double dist;
} tree_row;

/* The rows of dyng_sssp(zGraph, source) ordered by node, into *paRow (from
** malloc); returns their number. */
static int tree_rows(sqlite3 *db, const char *zGraph, sqlite3_int64 source, tree_row **paRow) {
  char *zSql = sqlite3_mprintf("SELECT node, dist, coalesce(parent, -1), coalesce(edge, -1) "
                               "FROM dyng_sssp(%Q, %lld) ORDER BY node",
                               zGraph, source);
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
  int n = 0, cap = 64;
  tree_row *a = malloc(cap * sizeof *a);
  assert_non_null(a);
  int rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    if (n == cap) assert_non_null(a = realloc(a, (cap *= 2) * sizeof *a));
    a[n].node = sqlite3_column_int64(p, 0);
    a[n].dist = sqlite3_column_double(p, 1);
    a[n].parent = sqlite3_column_int64(p, 2);
    a[n++].edge = sqlite3_column_int64(p, 3);
  }
  if (rc != SQLITE_DONE) fail_msg("%s: %s", zSql, sqlite3_errmsg(db));
  sqlite3_finalize(p);
  sqlite3_free(zSql);
  *paRow = a;
  return n;
}

/* The nodes whose row differs between two trees (a node in one only
** counts). */
static int rows_changed(const tree_row *a, int na, const tree_row *b, int nb) {
  int i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && a[i].node < b[j].node)) i++, n++;
    else if (i == na || b[j].node < a[i].node) j++, n++;
    else {
      n += a[i].dist != b[j].dist || a[i].parent != b[j].parent || a[i].edge != b[j].edge;
      i++, j++;
    }
  }
  return n;
}

/* Runs zWrite, then dyng_update(zGraph), and checks that the kept tree of
** (source, objective 0) was updated, not recomputed, and that its
** `touched` is the number of nodes whose row changed.  Returns touched. */
static sqlite3_int64 check_touched(sqlite3 *db, const char *zGraph, sqlite3_int64 source,
                                   const char *zWrite) {
  tree_row *aBefore = NULL, *aAfter = NULL;
  int nBefore = tree_rows(db, zGraph, source, &aBefore);
  sql_ok(db, zWrite);
  char *zSql = sqlite3_mprintf("SELECT json_extract(t.value, '$.mode') = 'update', "
                               "json_extract(t.value, '$.touched') FROM "
                               "json_each(dyng_update(%Q), '$.trees') AS t WHERE "
                               "json_extract(t.value, '$.source') = %lld AND "
                               "json_extract(t.value, '$.objective') IN (0, 'w')",
                               zGraph, source);
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
  /* No row: the write changed nothing the graph uses, so no batch. */
  int bRow = sqlite3_step(p) == SQLITE_ROW;
  int bUpdate = bRow && sqlite3_column_int(p, 0);
  sqlite3_int64 nTouched = bRow ? sqlite3_column_int64(p, 1) : 0;
  sqlite3_finalize(p);
  sqlite3_free(zSql);
  int nAfter = tree_rows(db, zGraph, source, &aAfter);
  int nChanged = rows_changed(aBefore, nBefore, aAfter, nAfter);
  if ((bUpdate || !bRow) && nTouched != nChanged)
    fail_msg("after %s: touched %lld, but %d rows changed", zWrite, nTouched, nChanged);
  free(aBefore);
  free(aAfter);
  return bUpdate && bRow ? nTouched : -1;
}

/* A chain whose first edge gets longer (every row below changes once) and a
** parallel edge with a smaller rowid that becomes a parent edge (only the
** edge of one row changes). */
static void test_touched_counts_the_rows_that_changed(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 1999)"
             "  INSERT INTO e(rowid, src, dst, w) SELECT i + 10, i, i + 1, 1 FROM c;"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  assert_int_equal(check_touched(db, "g", 1900, "UPDATE e SET w = 2 WHERE src = 1900"), 100);
  assert_int_equal(check_touched(db, "g", 1900, "INSERT INTO e(rowid, src, dst, w) VALUES "
                                                "(1, 1900, 1901, 2)"),
                   1);
  assert_int_equal(check_touched(db, "g", 1900, "INSERT INTO e VALUES (1950, 1951, 5)"), 0);
  assert_int_equal(check_touched(db, "g", 1900, "DELETE FROM e WHERE src = 1950 AND w = 1"), 50);
  sqlite3_close(db);
}

/* Random graphs full of ties, through batches of every kind: touched is
** always the number of rows that changed. */
static void test_touched_matches_the_rows_through_random_batches(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 31);
  for (int round = 0; round < 4; round++) {
    sqlite3 *db = sql_open(":memory:");
    int bDirected = round & 1;
    sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL)");
    for (int i = 0; i < 600; i++)
      sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d)",
                                      (int)test_rng_below(&r, 150), (int)test_rng_below(&r, 150),
                                      (int)test_rng_below(&r, 3)));
    sql_ok_free(db, sqlite3_mprintf("CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w, "
                                    "directed=%d)",
                                    bDirected));
    sqlite3_int64 source = sql_int(db, "SELECT src FROM e ORDER BY rowid LIMIT 1");
    int nUpdated = 0;
    for (int step = 0; step < 25; step++) {
      char *zWrite;
      switch (test_rng_below(&r, 3)) {
      case 0:
        zWrite = sqlite3_mprintf("UPDATE e SET w = %d WHERE rowid IN (SELECT rowid FROM e "
                                 "ORDER BY random() LIMIT 3)",
                                 (int)test_rng_below(&r, 3));
        break;
      case 1:
        zWrite = sqlite3_mprintf("DELETE FROM e WHERE rowid IN (SELECT rowid FROM e ORDER BY "
                                 "random() LIMIT 2)");
        break;
      default:
        zWrite = sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d), (%d, %d, 0)",
                                 (int)test_rng_below(&r, 150), (int)test_rng_below(&r, 150),
                                 (int)test_rng_below(&r, 3), (int)test_rng_below(&r, 150),
                                 (int)test_rng_below(&r, 150));
      }
      nUpdated += check_touched(db, "g", source, zWrite) >= 0;
      sqlite3_free(zWrite);
    }
    assert_true(nUpdated > 10);
    sqlite3_close(db);
  }
}

/* ---- detached and attached again ---------------------------------------- */

/* The names of the graphs dyng_config('graphs') lists, comma-separated
** (from sqlite3_mprintf). */
static char *listed_graphs(sqlite3 *db) {
  return sql_text(db, "SELECT coalesce(group_concat(json_extract(value, '$.schema') || '.' || "
                      "json_extract(value, '$.name')), '') FROM json_each(dyng_config('graphs'))");
}

/* A prepared statement that read x.g stays alive over a DETACH (as a
** binding's statement cache keeps it): the graph leaves the list and its
** mirror is freed; attached again, the file answers with what another
** connection wrote while it was detached. */
static void detach_and_attach_again(const char *zJournal) {
  char zPath[] = "/tmp/dyng-edges-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *w = sql_open_plain(zPath);
  sql_ok_free(w, sqlite3_mprintf("PRAGMA journal_mode=%s", zJournal));
  sqlite3 *m = sql_open(":memory:");
  sql_ok(m, "CREATE TABLE e(src INTEGER, dst INTEGER)");
  sql_ok_free(m, sqlite3_mprintf("ATTACH %Q AS x", zPath));
  sql_ok(m, "CREATE TABLE x.e(src INTEGER, dst INTEGER); INSERT INTO x.e VALUES (1, 2);"
            "CREATE VIRTUAL TABLE x.g USING dyng(edges=e)");
  sqlite3_stmt *pKept = NULL;
  assert_int_equal(sqlite3_prepare_v2(m, "SELECT count(*) FROM x.g", -1, &pKept, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(pKept), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(pKept, 0), 2);
  sqlite3_reset(pKept);
  char *z = listed_graphs(m);
  assert_string_equal(z, "x.g");
  sqlite3_free(z);
  sql_ok(m, "DETACH x");
  sql_ok(m, "SELECT dyng_version()");
  z = listed_graphs(m);
  assert_string_equal(z, "");
  sqlite3_free(z);
  sql_ok(w, "INSERT INTO e VALUES (2, 3)");
  sql_ok_free(m, sqlite3_mprintf("ATTACH %Q AS x", zPath));
  assert_int_equal(sql_int(m, "SELECT dist FROM dyng_sssp('x.g', 1) WHERE node = 3"), 2);
  /* Detached and attached again with no dyng call between. */
  sql_ok(m, "DETACH x");
  sql_ok(w, "INSERT INTO e VALUES (3, 4)");
  sql_ok_free(m, sqlite3_mprintf("ATTACH %Q AS x", zPath));
  assert_int_equal(sql_int(m, "SELECT dist FROM dyng_sssp('x.g', 1) WHERE node = 4"), 3);
  assert_int_equal(sqlite3_step(pKept), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(pKept, 0), 4);
  sqlite3_finalize(pKept);
  /* The same once the statement has gone too. */
  sql_ok(m, "DETACH x");
  sql_ok(w, "INSERT INTO e VALUES (4, 5)");
  sql_ok_free(m, sqlite3_mprintf("ATTACH %Q AS x", zPath));
  assert_int_equal(sql_int(m, "SELECT dist FROM dyng_sssp('x.g', 1) WHERE node = 5"), 4);
  sqlite3_close(m);
  sqlite3_close(w);
  sql_remove_db(zPath);
}

static void test_file_attached_again_answers_from_its_log_wal(void **state) {
  (void)state;
  detach_and_attach_again("wal");
}

static void test_file_attached_again_answers_from_its_log_rollback_journal(void **state) {
  (void)state;
  detach_and_attach_again("delete");
}

/* ---- sizing a load ------------------------------------------------------ */

/* memory_bytes of graph zName (dyng_config('graphs')). */
static sqlite3_int64 graph_bytes(sqlite3 *db, const char *zName) {
  return sql_int_free(db, sqlite3_mprintf("SELECT json_extract(value, '$.memory_bytes') FROM "
                                          "json_each(dyng_config('graphs')) WHERE "
                                          "json_extract(value, '$.name') = %Q",
                                          zName));
}

/* A load reserves room by what the table can hold, not by the span of its
** rowids: two rows at rowids 1 and 100000000 are a small graph, and rows
** spread thinly over their rowids take about what the same rows packed do
** (100000 rows over rowids 1 .. 10000000 took 48 times as much). */
static void test_sparse_rowids_do_not_inflate_a_load(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e(rowid, src, dst, w) VALUES (1, 1, 2, 1), (100000000, 2, 3, 1);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  assert_true(graph_bytes(db, "g") < 1024 * 1024);
  sql_ok(db, "CREATE TABLE s(src INTEGER, dst INTEGER);"
             "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 19999)"
             "  INSERT INTO s(rowid, src, dst) SELECT i * 500 + 1, i, i + 1 FROM c;"
             "CREATE TABLE d(src INTEGER, dst INTEGER); INSERT INTO d SELECT src, dst FROM s;"
             "CREATE VIRTUAL TABLE gs USING dyng(edges=s); CREATE VIRTUAL TABLE gd USING dyng(edges=d)");
  sqlite3_int64 nSparse = graph_bytes(db, "gs"), nDense = graph_bytes(db, "gd");
  /* Room that grows as rows come doubles: up to twice what is used. */
  if (nSparse > 3 * nDense)
    fail_msg("sparse rowids: %lld bytes, the same rows packed: %lld", nSparse, nDense);
  /* A budget the graph fits in is not refused for room it never used. */
  sql_ok_free(db, sqlite3_mprintf("SELECT dyng_config('max_graph_mb', %lld)",
                                  nDense * 3 / (1024 * 1024) + 1));
  sql_ok(db, "INSERT INTO s VALUES (1, 5)");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('gs', 0) WHERE node = 5"), 1);
  sql_ok(db, "SELECT dyng_update('gs', 'reload')");
  sqlite3_close(db);
}

/* ---- calls beside a half-read statement --------------------------------- */

/* An INSERT ... RETURNING whose rows are still being read is a writing
** statement that is running: top-level calls of dyng_config and dyng_update
** still pass, and a CHECK constraint that calls them is still refused. */
static void test_half_read_writing_statement_does_not_refuse_top_level_calls(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1, 2);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e); CREATE TABLE t(x)");
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (1), (2) RETURNING x", -1, &p, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(p), SQLITE_ROW);
  sql_ok(db, "SELECT dyng_config()");
  sql_ok(db, "SELECT dyng_config('max_ms')");
  sql_ok(db, "SELECT dyng_config('max_ms', 5000)");
  sql_ok(db, "INSERT INTO e VALUES (2, 3)");
  sql_ok(db, "SELECT dyng_update('g')");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM g"), 3);
  assert_int_equal(sqlite3_step(p), SQLITE_ROW);
  /* The planted call, while the half-read statement still runs. */
  sql_ok(db, "CREATE TABLE planted(x CHECK (dyng_update('g') IS NOT NULL))");
  sql_fails(db, "INSERT INTO planted VALUES (1)", "unsafe use of dyng_update()", NULL);
  assert_int_equal(sqlite3_step(p), SQLITE_DONE);
  sqlite3_finalize(p);
  sql_fails(db, "INSERT INTO planted VALUES (1)", "unsafe use of dyng_update()", NULL);
  sqlite3_close(db);
}

/* ---- progress of a stopped computation ---------------------------------- */

/* With progress on, a cycle count that max_ms stops says so on stderr, with
** how far it got, and never "done". */
static void test_progress_of_a_stopped_count_says_it_stopped(void **state) {
  (void)state;
  char zLog[] = "/tmp/dyng-edges-stderr-XXXXXX";
  int fd = mkstemp(zLog);
  assert_true(fd >= 0);
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER);"
             "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 59999)"
             "  INSERT INTO e SELECT abs(random()) % 3000, abs(random()) % 3000 FROM c;"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, directed=0)");
  sql_ok(db, "SELECT dyng_config('progress', 1), dyng_config('max_ms', 3000)");
  fflush(stderr);
  int fdErr = dup(2);
  assert_true(fdErr >= 0 && dup2(fd, 2) == 2);
  sql_fails(db, "SELECT dyng_cycle_count('g', 6)", "over this connection's max_ms budget", NULL);
  fflush(stderr);
  dup2(fdErr, 2);
  close(fdErr);
  char zOut[4096] = "";
  ssize_t n = pread(fd, zOut, sizeof zOut - 1, 0);
  close(fd);
  unlink(zLog);
  assert_true(n > 0);
  zOut[n] = 0;
  if (!strstr(zOut, "counting 6-cycles of graph 'g': stopped (over max_ms) after ") ||
      strstr(zOut, "done"))
    fail_msg("progress said:\n%s", zOut);
  sqlite3_close(db);
}

/* ---- settings ------------------------------------------------------------- */

/* max_ms keeps its fraction; NULL puts every setting back as a new
** connection has it (compared with a new connection's report). */
static void test_settings_keep_fractions_and_null_restores_defaults(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:"), *fresh = sql_open(":memory:");
  sql_ok(db, "SELECT dyng_config('max_ms', 7.5)");
  assert_int_equal(sql_int(db, "SELECT dyng_config('max_ms') = '7.5'"), 1);
  static const char *const azKey[] = {"max_ms", "max_graph_mb", "cache_mb", "progress", "backend"};
  static const char *const azSet[] = {"250", "64", "3", "1", "'cpu'"};
  for (int i = 0; i < 5; i++) {
    char *zWant = sql_text_free(fresh, sqlite3_mprintf("SELECT dyng_config(%Q)", azKey[i]));
    sql_ok_free(db, sqlite3_mprintf("SELECT dyng_config(%Q, %s)", azKey[i], azSet[i]));
    char *zSet = sql_text_free(db, sqlite3_mprintf("SELECT dyng_config(%Q)", azKey[i]));
    if (strcmp(zSet, zWant) == 0) fail_msg("%s: setting %s changed nothing", azKey[i], azSet[i]);
    sql_ok_free(db, sqlite3_mprintf("SELECT dyng_config(%Q, NULL)", azKey[i]));
    char *zGot = sql_text_free(db, sqlite3_mprintf("SELECT dyng_config(%Q)", azKey[i]));
    if (strcmp(zGot, zWant) != 0)
      fail_msg("%s after NULL: %s, a new connection has %s", azKey[i], zGot, zWant);
    sqlite3_free(zWant);
    sqlite3_free(zSet);
    sqlite3_free(zGot);
  }
  sqlite3_close(fresh);
  sqlite3_close(db);
}

/* Sets e.w of every row to x. */
static void set_weight(sqlite3 *db, double x) {
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "UPDATE e SET w = ?", -1, &p, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_bind_double(p, 1, x), SQLITE_OK);
  assert_int_equal(sqlite3_step(p), SQLITE_DONE);
  sqlite3_finalize(p);
}

/* The values a refused row has are written as they are: -1e299 is
** negative, not too large; 4.5e300 in its shortest form; one byte. */
static void test_refused_values_are_described_as_they_are(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  /* The values are bound, not parsed: SQLite's text-to-real conversion
  ** runs in long double, which valgrind computes in double, a few ulps
  ** off. */
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL); INSERT INTO e VALUES (1, 2, 0)");
  set_weight(db, 4.5e300);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)", "(rowid 1 has 4.5e+300)",
            NULL);
  set_weight(db, -1e299);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)",
            "must be a finite number >= 0 (rowid 1 has -1e+299)", NULL);
  sql_ok(db, "UPDATE e SET w = x'00'");
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)", "(rowid 1 has a blob of 1 "
            "byte)", NULL);
  sql_ok(db, "UPDATE e SET w = 1; CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  sql_fails(db, "INSERT INTO e VALUES (2, 3, -1e299)", "(got a negative number)", NULL);
  sqlite3_close(db);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_touched_counts_the_rows_that_changed),
      cmocka_unit_test(test_touched_matches_the_rows_through_random_batches),
      cmocka_unit_test(test_file_attached_again_answers_from_its_log_wal),
      cmocka_unit_test(test_file_attached_again_answers_from_its_log_rollback_journal),
      cmocka_unit_test(test_sparse_rowids_do_not_inflate_a_load),
      cmocka_unit_test(test_half_read_writing_statement_does_not_refuse_top_level_calls),
      cmocka_unit_test(test_progress_of_a_stopped_count_says_it_stopped),
      cmocka_unit_test(test_settings_keep_fractions_and_null_restores_defaults),
      cmocka_unit_test(test_refused_values_are_described_as_they_are),
  };
  return cmocka_run_group_tests_name("edges", tests, NULL, NULL);
}
