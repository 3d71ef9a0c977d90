/*
** tests/test_edges.c: what dyng reports about its own work, and graphs in
** attached databases whose file is detached and attached again.
**
** dyng_update's `touched` against the rows of the tree before and after
** (read back through dyng_sssp), a detached database's graph leaving the
** connection while a prepared statement still holds its table, and a file
** attached again answering from its change log, not from the mirror it had.
*/
#include "tests/test_util.h"

#include "tests/sql_util.h"

#include <math.h>

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

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_touched_counts_the_rows_that_changed),
      cmocka_unit_test(test_touched_matches_the_rows_through_random_batches),
      cmocka_unit_test(test_file_attached_again_answers_from_its_log_wal),
      cmocka_unit_test(test_file_attached_again_answers_from_its_log_rollback_journal),
  };
  return cmocka_run_group_tests_name("edges", tests, NULL, NULL);
}
