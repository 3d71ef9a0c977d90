/*
** tests/test_sync_txn.c: the mirror under REPLACE conflicts, upserts and
** rollbacks, and graphs queried inside write transactions.
**
** Each case writes an edge table in the ways that once left a mirror wrong
** (a REPLACE, then a later write of the same rowid, then ROLLBACK TO; a
** REPLACE rolled back and the same row written with OR IGNORE; an upsert
** rolled back and another connection's REPLACE), or that made every query
** reload (a graph queried inside `BEGIN; INSERT; SELECT; COMMIT` loops after
** a schema change), and compares every answer of dyng_sssp with
** Bellman-Ford over the rows a plain SELECT returns.  Loads and undo records
** are read from dyng_config().  The same cases also run on a change capture
** as graphs made by older versions have it (no nonces, op 0 re-read).
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------- */

static sqlite3 *open_plain(const char *zPath) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(zPath, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 2000);
  return db;
}

static sqlite3 *open_db(const char *zPath) {
  sqlite3 *db = open_plain(zPath);
  sql_load(db);
  return db;
}

/* The first value of zSql; 0 when it returns no row. */
static sqlite3_int64 query_int(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("%s\n  failed: %s", zSql, sqlite3_errmsg(db));
  int rc = sqlite3_step(p);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail_msg("%s\n  failed: %s", zSql, sqlite3_errmsg(db));
  sqlite3_int64 v = rc == SQLITE_ROW ? sqlite3_column_int64(p, 0) : 0;
  sqlite3_finalize(p);
  return v;
}

/* A statistic of graph zGraph from dyng_config(). */
static sqlite3_int64 graph_stat(sqlite3 *db, const char *zGraph, const char *zKey) {
  char *zSql = sqlite3_mprintf("SELECT json_extract(value, '$.%s') FROM "
                               "json_each(dyng_config(), '$.graphs') "
                               "WHERE json_extract(value, '$.name') = %Q",
                               zKey, zGraph);
  sqlite3_int64 v = query_int(db, zSql);
  sqlite3_free(zSql);
  return v;
}

#define MAX_REF 256

/* Bellman-Ford from source over the rows of zTable (src, dst and zWeight,
** or weight 1 when zWeight is NULL), read with a plain SELECT on db; ids
** and dist get the reached nodes.  Returns their number (0 when the source
** is no edge's end). */
static int ref_sssp(sqlite3 *db, const char *zTable, const char *zWeight, sqlite3_int64 source,
                    sqlite3_int64 *ids, double *dist) {
  sqlite3_int64 aSrc[MAX_REF], aDst[MAX_REF];
  double aW[MAX_REF];
  int nEdge = 0, nNode = 0;
  char *zSql = sqlite3_mprintf("SELECT src, dst, %s FROM %s", zWeight ? zWeight : "1", zTable);
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
  sqlite3_free(zSql);
  while (sqlite3_step(p) == SQLITE_ROW) {
    assert_true(nEdge < MAX_REF);
    aSrc[nEdge] = sqlite3_column_int64(p, 0);
    aDst[nEdge] = sqlite3_column_int64(p, 1);
    aW[nEdge++] = sqlite3_column_double(p, 2);
  }
  sqlite3_finalize(p);
  /* A source that is no edge's end is not a node of the graph. */
  int bNode = 0;
  for (int i = 0; i < nEdge; i++) bNode |= aSrc[i] == source || aDst[i] == source;
  if (!bNode) return 0;
  ids[nNode] = source, dist[nNode++] = 0;
  for (int round = 0; round <= nEdge; round++) {
    for (int i = 0; i < nEdge; i++) {
      int a = -1, b = -1;
      for (int k = 0; k < nNode; k++) {
        if (ids[k] == aSrc[i]) a = k;
        if (ids[k] == aDst[i]) b = k;
      }
      if (a < 0) continue;
      if (b < 0) {
        assert_true(nNode < MAX_REF);
        ids[nNode] = aDst[i], dist[nNode] = INFINITY, b = nNode++;
      }
      if (dist[a] + aW[i] < dist[b]) dist[b] = dist[a] + aW[i];
    }
  }
  return nNode;
}

/* dyng_sssp(zGraph, source) gives exactly the nodes and distances that
** Bellman-Ford finds over the rows of zTable, as db sees them. */
static void check_sssp(sqlite3 *db, const char *zGraph, const char *zTable, const char *zWeight,
                       sqlite3_int64 source) {
  sqlite3_int64 ids[MAX_REF];
  double dist[MAX_REF];
  int n = ref_sssp(db, zTable, zWeight, source, ids, dist);
  char *zSql = sqlite3_mprintf("SELECT node, dist FROM dyng_sssp(%Q, %lld)", zGraph, source);
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("%s\n  failed: %s", zSql, sqlite3_errmsg(db));
  int nSeen = 0, rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    sqlite3_int64 node = sqlite3_column_int64(p, 0);
    double d = sqlite3_column_double(p, 1);
    int k = 0;
    while (k < n && ids[k] != node) k++;
    if (k == n) fail_msg("%s: node %lld is not reachable in the table", zSql, node);
    if (fabs(dist[k] - d) > 1e-9)
      fail_msg("%s: node %lld at %g, the table says %g", zSql, node, d, dist[k]);
    nSeen++;
  }
  if (rc != SQLITE_DONE) fail_msg("%s\n  failed: %s", zSql, sqlite3_errmsg(db));
  if (nSeen != n) fail_msg("%s: %d nodes, the table reaches %d", zSql, nSeen, n);
  sqlite3_finalize(p);
  sqlite3_free(zSql);
}

/*
** Replaces the change capture of graph g over e(src, dst[, w]) by the one
** older versions installed (no nonce column; BEFORE triggers that log op 0,
** "re-read this rowid", and an AFTER UPDATE trigger only for changed rows),
** as a database made by them has it.  zMatch is the UNIQUE condition.
*/
static void install_old_capture(sqlite3 *db, int bWeight, const char *zMatch) {
  const char *zW = bWeight ? ", w0 REAL" : "", *zWN = bWeight ? ", w0" : "";
  const char *zNW = bWeight ? ", NEW.w" : "", *zChW = bWeight ? " OR OLD.w IS NOT NEW.w" : "";
  char *zSql = sqlite3_mprintf(
      "DROP TRIGGER g_log_ins; DROP TRIGGER g_log_upd; DROP TRIGGER g_log_del;"
      "DROP TRIGGER g_log_rep_ins; DROP TRIGGER g_log_rep_upd; DROP TABLE g_log;"
      "CREATE TABLE g_log(seq INTEGER PRIMARY KEY, op INTEGER NOT NULL, edge INTEGER NOT NULL,"
      "  src INTEGER, dst INTEGER%s);"
      "CREATE TRIGGER g_log_ins AFTER INSERT ON e BEGIN"
      "  INSERT INTO g_log(op, edge, src, dst%s) VALUES (1, NEW.rowid, NEW.src, NEW.dst%s);"
      "  DELETE FROM g_log WHERE seq <= last_insert_rowid() - 100000; END;"
      "CREATE TRIGGER g_log_upd AFTER UPDATE ON e WHEN OLD.rowid IS NOT NEW.rowid OR"
      "  OLD.src IS NOT NEW.src OR OLD.dst IS NOT NEW.dst%s BEGIN"
      "  INSERT INTO g_log(op, edge) VALUES (-1, OLD.rowid);"
      "  INSERT INTO g_log(op, edge, src, dst%s) VALUES (1, NEW.rowid, NEW.src, NEW.dst%s);"
      "  DELETE FROM g_log WHERE seq <= last_insert_rowid() - 100000; END;"
      "CREATE TRIGGER g_log_del AFTER DELETE ON e BEGIN"
      "  INSERT INTO g_log(op, edge) VALUES (-1, OLD.rowid);"
      "  DELETE FROM g_log WHERE seq <= last_insert_rowid() - 100000; END;"
      "CREATE TRIGGER g_log_rep_ins BEFORE INSERT ON e BEGIN"
      "  INSERT INTO g_log(op, edge) SELECT 0, rowid FROM e WHERE %s; END;"
      "CREATE TRIGGER g_log_rep_upd BEFORE UPDATE ON e BEGIN"
      "  INSERT INTO g_log(op, edge) SELECT 0, rowid FROM e WHERE rowid <> OLD.rowid AND (%s);"
      "END;",
      zW, zWN, zNW, zChW, zWN, zNW, zMatch, zMatch);
  sql_ok(db, zSql);
  sqlite3_free(zSql);
}

/* ---- REPLACE, upserts and rollbacks ------------------------------------ */

/* A REPLACE removes rowid 1 (its 1->2 conflicts); a later write puts 3->4
** at rowid 1, and ROLLBACK TO takes that back: rowid 1 stays removed. */
static void replace_then_rollback_to(int bOld) {
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, UNIQUE(src, dst));"
              "INSERT INTO e VALUES (1, 2, 1), (2, 3, 1);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  if (bOld) install_old_capture(db, 1, "(src = NEW.src AND dst = NEW.dst)");
  check_sssp(db, "g", "e", "w", 1);
  sql_ok(db, "BEGIN; INSERT OR REPLACE INTO e(rowid, src, dst, w) VALUES (100, 1, 2, 5);"
              "SAVEPOINT sp; INSERT INTO e(rowid, src, dst, w) VALUES (1, 3, 4, 7)");
  check_sssp(db, "g", "e", "w", 3);
  sql_ok(db, "ROLLBACK TO sp");
  check_sssp(db, "g", "e", "w", 3);
  sql_ok(db, "COMMIT");
  check_sssp(db, "g", "e", "w", 3);
  check_sssp(db, "g", "e", "w", 1);
  assert_int_equal(query_int(db, "SELECT count(*) FROM dyng_sssp('g', 3)"), 1);
  sqlite3_close(db);
}

static void test_replace_then_rollback_to_keeps_the_earlier_state(void **state) {
  (void)state;
  replace_then_rollback_to(0);
}

/* A REPLACE rolled back, then the same row with OR IGNORE (which keeps the
** row it conflicts with): the edge 1->2 stays. */
static void replace_rolled_back_then_ignored(int bOld) {
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, UNIQUE(src, dst));"
              "INSERT INTO e VALUES (1, 2), (2, 3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e)");
  if (bOld) install_old_capture(db, 0, "(src = NEW.src AND dst = NEW.dst)");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "BEGIN; SAVEPOINT sp; INSERT OR REPLACE INTO e(src, dst) VALUES (1, 2)");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "ROLLBACK TO sp; INSERT OR IGNORE INTO e(src, dst) VALUES (1, 2); COMMIT");
  check_sssp(db, "g", "e", NULL, 1);
  assert_int_equal(query_int(db, "SELECT dist FROM dyng_sssp('g', 1) WHERE node = 3"), 2);
  sqlite3_close(db);
}

static void test_replace_rolled_back_then_or_ignore_keeps_the_row(void **state) {
  (void)state;
  replace_rolled_back_then_ignored(0);
}

/* Connection A (dyng) sees an upsert's update inside a transaction that it
** rolls back; connection B (no dyng) then replaces the row.  A must not
** keep the update it saw (1->6). */
static void upsert_rolled_back_then_replaced_elsewhere(int bOld) {
  char zPath[] = "/tmp/dyng-sync-txn-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *a = open_db(zPath);
  sql_ok(a, "PRAGMA journal_mode=WAL;"
             "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, tag TEXT UNIQUE);"
             "INSERT INTO e VALUES (1, 2, 1, 'b');"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  if (bOld) install_old_capture(a, 1, "(tag = NEW.tag)");
  sqlite3 *b = open_plain(zPath);
  check_sssp(a, "g", "e", "w", 1);
  sql_ok(a, "BEGIN; INSERT INTO e VALUES (5, 6, 0, 'b') "
             "ON CONFLICT(tag) DO UPDATE SET w = excluded.w, dst = excluded.dst");
  check_sssp(a, "g", "e", "w", 1);
  sql_ok(a, "ROLLBACK");
  sql_ok(b, "INSERT OR REPLACE INTO e VALUES (5, 6, 2, 'b')");
  check_sssp(a, "g", "e", "w", 1);
  check_sssp(a, "g", "e", "w", 5);
  assert_int_equal(query_int(a, "SELECT count(*) FROM g WHERE node = 1"), 0);
  sqlite3_close(b);
  sqlite3_close(a);
  sql_remove_db(zPath);
}

static void test_upsert_rolled_back_then_replaced_elsewhere_leaves_no_phantom(void **state) {
  (void)state;
  upsert_rolled_back_then_replaced_elsewhere(0);
}

/* An UPDATE OR REPLACE of a column the graph does not use still removes
** the row it conflicts with; ROLLBACK TO brings it back. */
static void test_update_or_replace_of_an_unused_column_is_seen(void **state) {
  (void)state;
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, tag TEXT UNIQUE);"
              "INSERT INTO e VALUES (1, 2, 'a'), (2, 3, 'b'), (1, 3, 'c');"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e)");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "BEGIN; SAVEPOINT sp; UPDATE OR REPLACE e SET tag = 'b' WHERE tag = 'a'");
  check_sssp(db, "g", "e", NULL, 2);
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "ROLLBACK TO sp");
  check_sssp(db, "g", "e", NULL, 2);
  sql_ok(db, "PRAGMA recursive_triggers = ON");
  sql_ok(db, "UPDATE OR REPLACE e SET tag = 'c' WHERE tag = 'b'");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "INSERT INTO e VALUES (4, 5, 'c') ON CONFLICT DO NOTHING; COMMIT");
  check_sssp(db, "g", "e", NULL, 1);
  check_sssp(db, "g", "e", NULL, 2);
  sqlite3_close(db);
}

/* A REPLACE turns the marker an ignored UPDATE logged before the savepoint
** into a delete; ROLLBACK TO makes it a marker again without shortening the
** log past it, and the next query (nothing written since) must see the row
** back. */
static void test_rollback_to_restores_a_marker_the_replace_turned_into_a_delete(void **state) {
  (void)state;
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, k INTEGER UNIQUE);"
              "INSERT INTO e VALUES (1, 2, 3), (2, 3, NULL), (3, 4, 5);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e)");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "BEGIN; UPDATE OR IGNORE e SET k = 3 WHERE src = 3"); /* a marker for 1->2 */
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "SAVEPOINT sp; INSERT OR REPLACE INTO e VALUES (7, 8, 3)"); /* removes 1->2 */
  check_sssp(db, "g", "e", NULL, 1);
  check_sssp(db, "g", "e", NULL, 7);
  sql_ok(db, "ROLLBACK TO sp");
  check_sssp(db, "g", "e", NULL, 1);
  sql_ok(db, "COMMIT");
  check_sssp(db, "g", "e", NULL, 1);
  check_sssp(db, "g", "e", NULL, 7);
  sqlite3_close(db);
}

/* The same three cases on the capture of an older version: the sync reads
** its op 0 as before, and reloads where that cannot be undone. */
static void test_older_capture_stays_true_under_rollbacks(void **state) {
  (void)state;
  replace_then_rollback_to(1);
  replace_rolled_back_then_ignored(1);
  upsert_rolled_back_then_replaced_elsewhere(1);
}

/* An older capture whose edge table is rebuilt: the reattach adds the
** nonce column to the kept log, installs this version's triggers, and
** writes are seen (and checked) again. */
static void test_older_capture_reattached_after_a_rebuild(void **state) {
  (void)state;
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, UNIQUE(src, dst));"
              "INSERT INTO e VALUES (1, 2, 1), (2, 3, 1);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  install_old_capture(db, 1, "(src = NEW.src AND dst = NEW.dst)");
  assert_int_equal(query_int(db, "SELECT count(*) FROM dyng_sssp('g', 1)"), 3);
  sql_ok(db, "BEGIN; CREATE TABLE e_new(src INTEGER, dst INTEGER, w REAL, UNIQUE(src, dst));"
              "INSERT INTO e_new SELECT src, dst, w FROM e; DROP TABLE e;"
              "ALTER TABLE e_new RENAME TO e; COMMIT");
  sql_fails(db, "SELECT count(*) FROM dyng_sssp('g', 1)", "dyng_update('g', 'reattach')", NULL);
  sql_ok(db, "SELECT dyng_update('g', 'reattach')");
  assert_int_equal(query_int(db, "SELECT count(*) FROM pragma_table_info('g_log') WHERE name = 'nonce'"), 1);
  sql_ok(db, "INSERT INTO e VALUES (3, 4, 1)");
  assert_int_equal(query_int(db, "SELECT count(*) FROM dyng_sssp('g', 1)"), 4);
  sql_ok(db, "BEGIN; INSERT OR REPLACE INTO e VALUES (1, 2, 5); SAVEPOINT sp;"
              "INSERT INTO e VALUES (4, 5, 1)");
  assert_int_equal(query_int(db, "SELECT count(*) FROM dyng_sssp('g', 1)"), 5);
  sql_ok(db, "ROLLBACK TO sp; COMMIT");
  assert_int_equal(query_int(db, "SELECT count(*) FROM dyng_sssp('g', 1)"), 4);
  assert_int_equal(query_int(db, "SELECT CAST(dist AS INTEGER) FROM dyng_sssp('g', 1) WHERE node = 4"), 7);
  sql_fails(db, "INSERT INTO e VALUES (5, 6, -1)", "e.w must be", NULL);
  sqlite3_close(db);
}

/* ---- graphs queried inside write transactions -------------------------- */

/* `BEGIN; INSERT; SELECT ... dyng_sssp ...; COMMIT` after a schema change:
** one load (inside the first transaction), then batches; undo records do
** not pile up across commits. */
static void test_transactions_after_a_schema_change_batch_instead_of_reloading(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng-sync-txn-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = open_db(zPath);
  sql_ok(db, "PRAGMA journal_mode=WAL;"
              "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
              "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 30) "
              "INSERT INTO e SELECT n, n + 1, n % 7 FROM i;"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  check_sssp(db, "g", "e", "w", 1);
  sql_ok(db, "CREATE INDEX e_src ON e(src)"); /* a schema change: the next query reloads */
  sqlite3_int64 nLoad = graph_stat(db, "g", "loads");
  for (int i = 0; i < 40; i++) {
    char *zSql = sqlite3_mprintf("BEGIN; INSERT INTO e VALUES (%d, %d, %d)", i % 30, (i * 7) % 31,
                                 i % 5);
    sql_ok(db, zSql);
    sqlite3_free(zSql);
    check_sssp(db, "g", "e", "w", 1 + i % 3);
    sql_ok(db, i == 20 ? "ROLLBACK" : "COMMIT");
  }
  check_sssp(db, "g", "e", "w", 1);
  /* The load after the schema change, and one after the rollback of the
  ** transaction it was made in at most; every other query batched. */
  assert_true(graph_stat(db, "g", "loads") - nLoad <= 2);
  assert_true(graph_stat(db, "g", "batches") >= 35);
  sql_ok(db, "BEGIN; INSERT INTO e VALUES (1, 30, 1)");
  check_sssp(db, "g", "e", "w", 1);
  assert_true(graph_stat(db, "g", "undo_records") <= 2);
  sql_ok(db, "COMMIT");
  sqlite3_close(db);
  sql_remove_db(zPath);
}

/* A mirror loaded inside a transaction that then rolls back: it saw rows
** that are gone, and must not keep them; later transactions batch again. */
static void test_mirror_loaded_in_a_rolled_back_transaction_is_not_kept(void **state) {
  (void)state;
  sqlite3 *db = open_db(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER);"
              "INSERT INTO e VALUES (1, 2), (2, 3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e)");
  check_sssp(db, "g", "e", NULL, 1);
  for (int round = 0; round < 3; round++) {
    sql_ok(db, "CREATE TABLE IF NOT EXISTS other(x); DROP TABLE other"); /* schema change */
    sql_ok(db, "BEGIN; INSERT INTO e VALUES (3, 4); DELETE FROM e WHERE src = 1");
    check_sssp(db, "g", "e", NULL, 2); /* loaded here, with the rows of this transaction */
    sql_ok(db, "SAVEPOINT sp; INSERT INTO e VALUES (4, 5)");
    check_sssp(db, "g", "e", NULL, 2);
    sql_ok(db, "ROLLBACK TO sp");
    check_sssp(db, "g", "e", NULL, 2);
    sql_ok(db, "ROLLBACK; BEGIN; INSERT INTO e VALUES (2, 9)");
    check_sssp(db, "g", "e", NULL, 1);
    check_sssp(db, "g", "e", NULL, 2);
    sql_ok(db, "COMMIT; DELETE FROM e WHERE dst = 9");
    check_sssp(db, "g", "e", NULL, 1);
  }
  sqlite3_close(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_replace_then_rollback_to_keeps_the_earlier_state),
      cmocka_unit_test(test_replace_rolled_back_then_or_ignore_keeps_the_row),
      cmocka_unit_test(test_upsert_rolled_back_then_replaced_elsewhere_leaves_no_phantom),
      cmocka_unit_test(test_update_or_replace_of_an_unused_column_is_seen),
      cmocka_unit_test(test_rollback_to_restores_a_marker_the_replace_turned_into_a_delete),
      cmocka_unit_test(test_older_capture_stays_true_under_rollbacks),
      cmocka_unit_test(test_older_capture_reattached_after_a_rebuild),
      cmocka_unit_test(test_transactions_after_a_schema_change_batch_instead_of_reloading),
      cmocka_unit_test(test_mirror_loaded_in_a_rolled_back_transaction_is_not_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
