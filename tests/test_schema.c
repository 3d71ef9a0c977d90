/*
** tests/test_schema.c: a graph while its edge table's schema changes under
** it, and the tables it accepts.
**
** The edge table dropped and created again, or rebuilt by SQLite's
** CREATE-copy-DROP-RENAME procedure, loses the capture triggers: the graph
** must then refuse to answer until dyng_update(g, 'reattach') installs them
** again, never answer blind.  A column that hides the rowid, WITHOUT ROWID
** tables, generated columns, the messages of CREATE, and a graph removed by
** a program that never loads dyng.  Expected answers come from the table
** read back with plain SQL and a Dijkstra over it (tests/ref_small.h).
*/
#include "tests/test_util.h"

#include "tests/ref_small.h"
#include "tests/sql_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference ----------------------------------------------------- */

/* Graph zGraph, objective k, equals the rows zRows (src, dst, w0, w1 over
** node ids 0 .. REF_MAX_NODES - 1): from every node, dyng_sssp reaches
** exactly the nodes a Dijkstra reaches, at the same distances, and each
** tree edge it names is a row of zTable (by its real rowid) from the parent
** to the node; the graph table lists every node once. */
static void check_graph(sqlite3 *db, const char *zGraph, const char *zRows, int k,
                        const char *zTable) {
  ref_snapshot s;
  assert_int_equal(ref_snapshot_read(db, zRows, &s), SQLITE_OK);
  double dist[REF_MAX_NODES];
  int nNodes = 0;
  char *zEdge = sqlite3_mprintf("SELECT count(*) FROM \"%w\" WHERE rowid = ?1 AND src = ?2 AND "
                                "dst = ?3",
                                zTable);
  sqlite3_stmt *pEdge = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, zEdge, -1, &pEdge, NULL), SQLITE_OK);
  for (int v = 0; v < REF_MAX_NODES; v++) {
    if (!ref_has_node(&s, v)) continue;
    nNodes++;
    ref_dijkstra(&s, v, k, 0, dist);
    int nReach = 0, nRow = 0;
    for (int u = 0; u < REF_MAX_NODES; u++) nReach += !isinf(dist[u]);
    char *zSql = sqlite3_mprintf("SELECT node, dist, parent, edge FROM dyng_sssp(%Q, %d, %d)",
                                 zGraph, v, k);
    sqlite3_stmt *p = NULL;
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
      fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
    int rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
      sqlite3_int64 u = sqlite3_column_int64(p, 0);
      assert_true(u >= 0 && u < REF_MAX_NODES);
      if (fabs(sqlite3_column_double(p, 1) - dist[u]) > 1e-9)
        fail_msg("%s: node %lld at %g, the reference says %g", zSql, u,
                 sqlite3_column_double(p, 1), dist[u]);
      if (sqlite3_column_type(p, 3) != SQLITE_NULL) {
        sqlite3_bind_int64(pEdge, 1, sqlite3_column_int64(p, 3));
        sqlite3_bind_int64(pEdge, 2, sqlite3_column_int64(p, 2));
        sqlite3_bind_int64(pEdge, 3, u);
        assert_int_equal(sqlite3_step(pEdge), SQLITE_ROW);
        if (sqlite3_column_int(pEdge, 0) != 1)
          fail_msg("%s: edge %lld into node %lld is not a row of %s from %lld", zSql,
                   sqlite3_column_int64(p, 3), u, zTable, sqlite3_column_int64(p, 2));
        sqlite3_reset(pEdge);
      }
      nRow++;
    }
    if (rc != SQLITE_DONE) fail_msg("%s: %s", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    assert_int_equal(nRow, nReach);
  }
  sqlite3_finalize(pEdge);
  sqlite3_free(zEdge);
  char *zCount = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", zGraph);
  assert_int_equal(sql_int(db, zCount), nNodes);
  sqlite3_free(zCount);
  ref_snapshot_free(&s);
}

#define ROWS_E "SELECT src, dst, w, w FROM e"

/* The capture triggers on table zTable. */
static sqlite3_int64 n_triggers_on(sqlite3 *db, const char *zTable) {
  char *zSql = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND "
                               "tbl_name = %Q",
                               zTable);
  sqlite3_int64 n = sql_int(db, zSql);
  sqlite3_free(zSql);
  return n;
}

/* ---- the edge table dropped, created again, rebuilt --------------------- */

static void test_table_dropped_and_created_again_refuses_until_reattached(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng-schema-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 1), (1, 2, 2), (0, 2, 5);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "DROP TABLE e; CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 1), (1, 2, 1)");
  /* Its writes would go unseen: every way of asking refuses. */
  const char *azAsk[] = {"SELECT count(*) FROM dyng_sssp('g', 0)", "SELECT * FROM g",
                         "SELECT dyng_update('g')", "SELECT dyng_update('g', 'reload')"};
  for (int i = 0; i < 4; i++)
    sql_fails(db, azAsk[i], "graph 'g'", "change capture on its edge table 'e' is gone",
              "SELECT dyng_update('g', 'reattach')", NULL);
  /* So does a connection that loads the graph for the first time. */
  sqlite3 *db2 = sql_open(zPath);
  sql_fails(db2, "SELECT * FROM g", "change capture on its edge table 'e' is gone", NULL);
  sqlite3_close(db2);
  /* Nothing checks the table now: a bad weight gets in, and the reattach
  ** then fails on it, with the capture back to check its fix. */
  sql_ok(db, "INSERT INTO e VALUES (2, 3, -7)");
  sql_fails(db, "SELECT dyng_update('g', 'reattach')",
            "e.w must be a finite number >= 0 (rowid 3 has -7", NULL);
  assert_int_equal(n_triggers_on(db, "e"), 3);
  sql_fails(db, "SELECT * FROM g", "rowid 3 has -7", NULL);
  sql_fails(db, "UPDATE e SET w = -1 WHERE rowid = 3", "e.w must be a finite number >= 0", NULL);
  sql_ok(db, "UPDATE e SET w = 7 WHERE rowid = 3");
  check_graph(db, "g", ROWS_E, 0, "e");
  /* From now on writes are seen and checked. */
  sql_ok(db, "INSERT INTO e VALUES (3, 4, 2), (0, 4, 20)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_fails(db, "INSERT INTO e VALUES (4, 5, -7)", "e.w must be a finite number >= 0", NULL);
  sqlite3_close(db);
  db = sql_open(zPath);
  check_graph(db, "g", ROWS_E, 0, "e");
  /* A reattach with the capture in place changes nothing but the load. */
  sql_ok(db, "SELECT dyng_update('g', 'reattach')");
  sql_ok(db, "DELETE FROM e WHERE src = 0 AND dst = 4");
  check_graph(db, "g", ROWS_E, 0, "e");
  sqlite3_close(db);
  unlink(zPath);
}

/* SQLite's procedure for the changes ALTER TABLE cannot make in place
** (https://sqlite.org/lang_altertable.html#otheralter), as migration tools
** run it: the new table carries no trigger. */
static void test_rebuilt_table_refuses_until_reattached(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, w REAL, UNIQUE(src, dst));"
             "INSERT INTO e VALUES (0, 1, 4), (1, 2, 1), (0, 2, 9), (2, 3, 1);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "BEGIN;"
             "CREATE TABLE e_new(id INTEGER PRIMARY KEY, src INTEGER NOT NULL, dst INTEGER NOT NULL,"
             "                   w REAL, note TEXT, UNIQUE(src, dst));"
             "INSERT INTO e_new(src, dst, w) SELECT src, dst, w FROM e;"
             "DROP TABLE e;"
             "ALTER TABLE e_new RENAME TO e;"
             "COMMIT");
  sql_fails(db, "SELECT * FROM dyng_sssp('g', 0)", "change capture on its edge table 'e' is gone",
            NULL);
  sql_ok(db, "INSERT INTO e(src, dst, w) VALUES (3, 4, 1)"); /* written blind */
  sql_ok(db, "SELECT dyng_update('g', 'reattach')");
  /* All five triggers, the REPLACE ones too (the new table is UNIQUE). */
  assert_int_equal(n_triggers_on(db, "e"), 5);
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "INSERT INTO e(src, dst, w) VALUES (0, 4, 1);"
             "INSERT OR REPLACE INTO e(src, dst, w) VALUES (0, 1, 0.5);"
             "UPDATE e SET w = 3 WHERE src = 2 AND dst = 3");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_fails(db, "INSERT INTO e(src, dst, w) VALUES (5, 6, -7)", "e.w must be a finite number >= 0",
            NULL);
  sqlite3_close(db);
}

/* The same procedure followed to the letter re-creates the table's
** triggers from their saved SQL (its step 8): the graph keeps going. */
static void test_rebuild_that_keeps_the_triggers_needs_nothing(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 4), (1, 2, 1), (0, 2, 9);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "BEGIN;"
             "CREATE TEMP TABLE saved AS SELECT sql FROM sqlite_master WHERE type = 'trigger' AND "
             "  tbl_name = 'e';"
             "CREATE TABLE e_new(src INTEGER, dst INTEGER, w REAL, note TEXT);"
             "INSERT INTO e_new(src, dst, w) SELECT src, dst, w FROM e;"
             "DROP TABLE e;"
             "ALTER TABLE e_new RENAME TO e");
  sqlite3_stmt *p = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT sql FROM temp.saved", -1, &p, NULL), SQLITE_OK);
  int nSaved = 0;
  while (sqlite3_step(p) == SQLITE_ROW) {
    sql_ok(db, (const char *)sqlite3_column_text(p, 0));
    nSaved++;
  }
  sqlite3_finalize(p);
  assert_int_equal(nSaved, 3);
  sql_ok(db, "DROP TABLE temp.saved; COMMIT");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "INSERT INTO e(src, dst, w) VALUES (2, 3, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_fails(db, "INSERT INTO e(src, dst, w) VALUES (3, 4, -7)", "e.w must be a finite number >= 0",
            NULL);
  sqlite3_close(db);
}

/* DDL of an open transaction moves neither the change counter nor the data
** version: the graph must still see it. */
static void test_drop_inside_a_transaction_is_seen(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 4), (1, 2, 1);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "BEGIN; DROP TABLE e");
  sql_fails(db, "SELECT count(*) FROM g", "graph 'g': its edge table 'e' does not exist", NULL);
  sql_fails(db, "SELECT * FROM dyng_sssp('g', 0)", "'e' does not exist", NULL);
  sql_ok(db, "ROLLBACK");
  check_graph(db, "g", ROWS_E, 0, "e");
  /* Created again in the transaction: refused, then reattached there; the
  ** ROLLBACK brings back the old table with its capture. */
  sql_ok(db, "BEGIN; DROP TABLE e; CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 2, 1)");
  sql_fails(db, "SELECT count(*) FROM g", "change capture on its edge table 'e' is gone", NULL);
  sql_ok(db, "SELECT dyng_update('g', 'reattach')");
  sql_ok(db, "INSERT INTO e VALUES (2, 3, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "ROLLBACK");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "INSERT INTO e VALUES (2, 3, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sqlite3_close(db);
}

/* A reattach from inside a query that reads a table (a cursor is open, so
** no table can be dropped) and from inside a writing statement. */
static void test_reattach_from_inside_other_statements(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 4), (1, 2, 1);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w);"
             "CREATE TABLE t(x)");
  sql_ok(db, "DROP TABLE e; CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 2)");
  sql_ok(db, "SELECT dyng_update('g', 'reattach') FROM e");
  assert_int_equal(n_triggers_on(db, "e"), 3);
  sql_ok(db, "INSERT INTO e VALUES (1, 3, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "INSERT INTO t SELECT dyng_update('g', 'reattach')");
  sql_ok(db, "INSERT INTO e VALUES (3, 4, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_fails(db, "SELECT dyng_update('g', 'again')", "can only be 'reload' or 'reattach'", NULL);
  sql_ok(db, "DROP TABLE e");
  sql_fails(db, "SELECT dyng_update('g', 'reattach')", "edge table 'e' of graph 'g' does not exist",
            NULL);
  sqlite3_close(db);
}

/* ---- UNIQUE constraints and the REPLACE triggers ----------------------- */

/* A UNIQUE index added after the graph: the capture does not cover it, so
** the graph refuses to answer until a reattach, which installs the REPLACE
** triggers and AFTER triggers that use them; rows REPLACE removes are then
** seen, by INSERT OR REPLACE and by an upsert. */
static void test_unique_index_added_later_needs_and_gets_a_reattach(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (0, 1, 1), (1, 2, 4);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w);"
             "CREATE UNIQUE INDEX eu ON e(src, dst)");
  sql_fails(db, "SELECT count(*) FROM dyng_sssp('g', 0)",
            "edge table 'e' has UNIQUE constraints that its change capture does not cover",
            "SELECT dyng_update('g', 'reattach')", NULL);
  sql_ok(db, "SELECT dyng_update('g', 'reattach')");
  assert_int_equal(n_triggers_on(db, "e"), 5);
  sql_ok(db, "INSERT OR REPLACE INTO e VALUES (0, 1, 9)");
  check_graph(db, "g", ROWS_E, 0, "e");
  assert_int_equal(sql_int(db, "SELECT edge FROM dyng_sssp('g', 0) WHERE node = 1"),
                   sql_int(db, "SELECT rowid FROM e WHERE src = 0 AND dst = 1"));
  sql_ok(db, "INSERT INTO e VALUES (1, 2, 2) ON CONFLICT DO UPDATE SET w = excluded.w");
  check_graph(db, "g", ROWS_E, 0, "e");
  /* A second UNIQUE index: not covered until reattached again. */
  sql_ok(db, "ALTER TABLE e ADD COLUMN tag TEXT; CREATE UNIQUE INDEX et ON e(tag);"
             "UPDATE e SET tag = 'x' WHERE src = 0");
  sql_fails(db, "SELECT count(*) FROM g", "UNIQUE constraints that its change capture does not cover",
            NULL);
  sql_ok(db, "SELECT dyng_update('g', 'reattach') FROM e");
  sql_ok(db, "INSERT OR REPLACE INTO e VALUES (2, 3, 1, 'x')");
  check_graph(db, "g", ROWS_E, 0, "e");
  sqlite3_close(db);
}

/* Every trigger of the capture is checked, the REPLACE ones included. */
static void test_each_dropped_capture_trigger_is_noticed(void **state) {
  (void)state;
  static const char *const azTrigger[] = {"g_log_ins", "g_log_upd", "g_log_del", "g_log_rep_ins",
                                          "g_log_rep_upd"};
  for (int i = 0; i < 5; i++) {
    sqlite3 *db = sql_open(":memory:");
    sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, UNIQUE(src, dst));"
               "INSERT INTO e VALUES (0, 1, 1);"
               "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
    assert_int_equal(sql_int(db, "SELECT count(*) FROM g"), 2);
    sql_ok_free(db, sqlite3_mprintf("DROP TRIGGER %s", azTrigger[i]));
    char *zWant = sqlite3_mprintf("trigger '%s' of the change capture on its edge table 'e' is "
                                  "gone",
                                  azTrigger[i]);
    sql_fails(db, "SELECT count(*) FROM g", zWant, "SELECT dyng_update('g', 'reattach')", NULL);
    sql_fails(db, "SELECT dyng_update('g')", zWant, NULL);
    sqlite3_free(zWant);
    sql_ok(db, "SELECT dyng_update('g', 'reattach')");
    sql_ok(db, "INSERT OR REPLACE INTO e VALUES (0, 1, 9)");
    check_graph(db, "g", ROWS_E, 0, "e");
    sqlite3_close(db);
  }
}

/* A BEFORE trigger of the table's own that writes rows, older than the
** capture (so it runs after the REPLACE triggers, past the window their
** AFTER trigger looks back at): refused with the remedy; made again, it runs
** first and every row REPLACE removes is seen. */
static void test_older_writing_before_trigger_is_refused_until_made_again(void **state) {
  (void)state;
  static const char zTrigger[] =
      "CREATE TRIGGER fan BEFORE INSERT ON e WHEN NEW.src = 3 BEGIN "
      "  INSERT INTO e VALUES (10, 11, 1, NULL), (12, 13, 1, NULL), (14, 15, 1, NULL),"
      "    (16, 17, 1, NULL), (18, 19, 1, NULL), (20, 21, 1, NULL);"
      "END;";
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, tag UNIQUE)");
  sql_ok(db, zTrigger);
  sql_ok(db, "INSERT INTO e VALUES (0, 1, 1, 'a'), (1, 2, 1, 'b')");
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)",
            "trigger 'fan' on its edge table 'e' writes into it and runs after the REPLACE",
            "create that trigger again", NULL);
  assert_int_equal(n_triggers_on(db, "e"), 1);
  /* A trigger that runs before the capture's is fine, whenever it came. */
  sql_ok(db, "DROP TRIGGER fan");
  sql_ok(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  sql_ok(db, zTrigger);
  sql_ok(db, "INSERT OR REPLACE INTO e VALUES (3, 4, 7, 'a')");
  check_graph(db, "g", ROWS_E, 0, "e");
  /* A REPLACE trigger made again by a reattach is newer than it: refused
  ** again, by the reattach itself and then by every query. */
  sql_ok(db, "DROP TRIGGER g_log_rep_ins");
  sql_fails(db, "SELECT dyng_update('g', 'reattach')", "trigger 'fan'", "create that trigger again",
            NULL);
  sql_fails(db, "SELECT count(*) FROM g", "trigger 'fan'", "create that trigger again", NULL);
  sql_ok_free(db, sqlite3_mprintf("DROP TRIGGER fan; %s", zTrigger));
  sql_ok(db, "INSERT OR REPLACE INTO e VALUES (3, 5, 2, 'b')");
  check_graph(db, "g", ROWS_E, 0, "e");
  /* Older triggers that do not write into the table, or run after the
  ** row, are no concern. */
  sql_ok(db, "DROP TRIGGER fan; DROP TRIGGER g_log_rep_upd; CREATE TABLE t(x);"
             "CREATE TRIGGER quiet BEFORE INSERT ON e BEGIN SELECT 'insert into e';"
             "  INSERT INTO t VALUES (NEW.src); END;"
             "CREATE TRIGGER later AFTER INSERT ON e BEGIN INSERT INTO t VALUES (1); END;"
             "SELECT dyng_update('g', 'reattach')");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM g"), sql_int(db, "SELECT count(*) FROM "
                   "(SELECT src FROM e UNION SELECT dst FROM e)"));
  sqlite3_close(db);
}

/* ---- the tables a graph accepts --------------------------------------- */

static void test_column_that_hides_the_rowid_is_refused(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(rowid INTEGER, src INTEGER, dst INTEGER);"
             "INSERT INTO e VALUES (5, 1, 2), (5, 2, 3);"
             "CREATE TABLE wr(rowid INTEGER, src INTEGER, dst INTEGER, PRIMARY KEY(src, dst))"
             "  WITHOUT ROWID;"
             "CREATE TABLE wr2(src INTEGER, dst INTEGER, PRIMARY KEY(src, dst)) WITHOUT ROWID;"
             "CREATE TABLE desc_pk(rowid INTEGER PRIMARY KEY DESC, src INTEGER, dst INTEGER)");
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e)",
            "edge table 'e' of graph 'g' has a column named 'rowid' that is not its rowid", NULL);
  /* INTEGER PRIMARY KEY DESC is not the rowid (a quirk SQLite keeps). */
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=desc_pk)", "column named 'rowid'", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=wr)",
            "edge table 'wr' of graph 'g' is a WITHOUT ROWID table", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=wr2)", "is a WITHOUT ROWID table", NULL);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'g%'"), 0);

  /* Columns named oid and _rowid_ hide nothing dyng uses. */
  sql_ok(db, "CREATE TABLE o(oid INTEGER, _rowid_ INTEGER, src INTEGER, dst INTEGER);"
             "INSERT INTO o VALUES (5, 5, 1, 2), (5, 5, 2, 3);"
             "CREATE VIRTUAL TABLE go USING dyng(edges=o);"
             "INSERT INTO o VALUES (5, 5, 3, 4), (5, 5, 1, 4)");
  check_graph(db, "go", "SELECT src, dst, 1, 1 FROM o", 0, "o");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('go', 1)"), 4);
  /* A column named rowid that is the INTEGER PRIMARY KEY is the rowid. */
  sql_ok(db, "CREATE TABLE k(rowid INTEGER PRIMARY KEY, src INTEGER, dst INTEGER);"
             "INSERT INTO k VALUES (10, 1, 2), (20, 2, 3);"
             "CREATE VIRTUAL TABLE gk USING dyng(edges=k);"
             "INSERT INTO k VALUES (30, 3, 4); DELETE FROM k WHERE rowid = 10;"
             "INSERT INTO k VALUES (40, 1, 3)");
  check_graph(db, "gk", "SELECT src, dst, 1, 1 FROM k", 0, "k");
  /* Added later, the column is refused at the next load. */
  sql_ok(db, "ALTER TABLE o ADD COLUMN rowid INTEGER");
  sql_fails(db, "SELECT * FROM go", "edge table 'o' of graph 'go' has a column named 'rowid'", NULL);
  sqlite3_close(db);
}

/* Generated columns (VIRTUAL and STORED) are read like any other: the
** capture triggers run AFTER the write, when NEW has them. */
static void test_generated_columns_are_read(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, len REAL,"
             "  w REAL AS (len * 2), s REAL AS (len + 1) STORED, d INTEGER AS (src + 1));"
             "INSERT INTO e(src, dst, len) VALUES (0, 1, 1), (1, 2, 2), (0, 2, 4);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w, s');"
             "CREATE VIRTUAL TABLE gd USING dyng(edges=e, dst=d)");
  check_graph(db, "g", "SELECT src, dst, w, s FROM e", 0, "e");
  check_graph(db, "g", "SELECT src, dst, w, s FROM e", 1, "e");
  /* A change of the base column changes the generated ones. */
  sql_ok(db, "UPDATE e SET len = 10 WHERE src = 0 AND dst = 1;"
             "INSERT INTO e(src, dst, len) VALUES (2, 3, 0.5)");
  check_graph(db, "g", "SELECT src, dst, w, s FROM e", 0, "e");
  check_graph(db, "g", "SELECT src, dst, w, s FROM e", 1, "e");
  sql_fails(db, "INSERT INTO e(src, dst, len) VALUES (3, 4, -1)",
            "e.w must be a finite number >= 0 (got a negative number)", NULL);
  sql_fails(db, "UPDATE e SET len = NULL WHERE src = 2", "e.w must be a finite number >= 0", NULL);
  ref_snapshot s;
  assert_int_equal(ref_snapshot_read(db, "SELECT src, d, 1, 1 FROM e", &s), SQLITE_OK);
  double dist[REF_MAX_NODES];
  ref_dijkstra(&s, 0, 0, 0, dist);
  for (int v = 0; v < REF_MAX_NODES; v++) {
    char *zSql = sqlite3_mprintf("SELECT coalesce((SELECT dist FROM dyng_sssp('gd', 0) WHERE "
                                 "node = %d), -1)",
                                 v);
    double d = (double)sql_int(db, zSql);
    assert_true(isinf(dist[v]) ? d == -1 : d == dist[v]);
    sqlite3_free(zSql);
  }
  ref_snapshot_free(&s);
  sqlite3_close(db);
}

/* ---- CREATE's messages ------------------------------------------------ */

static void test_create_messages_say_what_is_wrong(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng-schema-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, t REAL);"
             "INSERT INTO e VALUES (0, 1, 1, 1)");
  /* A column missing at CREATE was never renamed. */
  char *zErr = sql_error(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=nope)");
  assert_non_null(strstr(zErr, "dyng: edge table 'e' has no column 'nope' (option weights of "
                               "graph 'g')"));
  assert_null(strstr(zErr, "renamed"));
  sqlite3_free(zErr);
  /* Every empty name in the list is refused, the last one too. */
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,')",
            "dyng: empty name in weights='w,' of graph 'g'", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=',w')", "empty name", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w, ,t')", "empty name", NULL);
  /* Every option is listed as known. */
  sql_fails(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, colour=red)",
            "(known: edges, src, dst, weights, directed, log_limit, backend)", NULL);
  /* backend=gpu is another name for backend=cuda. */
  int rcCuda = sqlite3_exec(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, backend=cuda)", NULL,
                            NULL, NULL);
  char *zCuda = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  if (rcCuda == SQLITE_OK) sql_ok(db, "DROP TABLE g");
  int rcGpu = sqlite3_exec(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, backend=gpu)", NULL,
                           NULL, NULL);
  assert_int_equal(rcGpu, rcCuda);
  if (rcGpu == SQLITE_OK) {
    char *zOption = sql_text(db, "SELECT json_extract(dyng_config(), '$.graphs[0].backend_option')");
    assert_string_equal(zOption, "cuda");
    sqlite3_free(zOption);
    sql_ok(db, "DROP TABLE g");
  } else {
    assert_string_equal(sqlite3_errmsg(db), zCuda);
  }
  sqlite3_free(zCuda);

  /* After CREATE, a missing column may have been renamed. */
  sql_ok(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,t');"
             "ALTER TABLE e RENAME COLUMN t TO toll");
  sql_fails(db, "SELECT * FROM g",
            "no column 't' (option weights of graph 'g'; if it was renamed, drop the graph", NULL);
  /* Until then the triggers, rewritten by SQLite, still check the column,
  ** naming it by its old name (RAISE takes only a literal). */
  sql_fails(db, "INSERT INTO e(src, dst, w, toll) VALUES (1, 2, 1, -1)",
            "dyng: e.t must be a finite number >= 0 (got a negative number)", NULL);
  sql_ok(db, "DROP TABLE g; ALTER TABLE e RENAME COLUMN toll TO t");
  /* A definition stored with a comma at the end of its weights (accepted
  ** before) still connects, answers and can be dropped. */
  sql_ok(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  sqlite3_close(db);
  db = sql_open_plain(zPath);
  sql_ok(db, "PRAGMA writable_schema = ON;"
             "UPDATE sqlite_master SET sql = replace(sql, 'weights=w', 'weights=''w,''') "
             "  WHERE name = 'g';"
             "PRAGMA writable_schema = RESET");
  sqlite3_close(db);
  db = sql_open(zPath);
  char *zDef = sql_text(db, "SELECT sql FROM sqlite_master WHERE name = 'g'");
  assert_non_null(strstr(zDef, "weights='w,'"));
  sqlite3_free(zDef);
  sql_ok(db, "INSERT INTO e VALUES (1, 2, 3, 1)");
  check_graph(db, "g", ROWS_E, 0, "e");
  sql_ok(db, "DROP TABLE g");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'g%'"), 0);
  sqlite3_close(db);
  unlink(zPath);
}

/* ---- a graph removed without dyng --------------------------------------- */

/* The plain SQL of docs/sql.md ("Removing a graph without dyng"), read from
** the doc (its first ```sql block there), for graph net: its triggers, its
** log, then its own row in the schema.  New; sqlite3_free it. */
static char *doc_removal_sql(void) {
  const char *zDir = getenv("DYNG_SRCDIR");
  char zPath[600];
  snprintf(zPath, sizeof zPath, "%s/docs/sql.md", zDir ? zDir : ".");
  FILE *f = fopen(zPath, "rb");
  assert_non_null(f);
  sqlite3_str *pText = sqlite3_str_new(NULL);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sqlite3_str_append(pText, buf, (int)n);
  fclose(f);
  char *zDoc = sqlite3_str_finish(pText);
  assert_non_null(zDoc);
  const char *zAt = strstr(zDoc, "### Removing a graph without dyng");
  assert_non_null(zAt);
  zAt = strstr(zAt, "```sql\n");
  assert_non_null(zAt);
  zAt += strlen("```sql\n");
  const char *zEnd = strstr(zAt, "\n```");
  assert_non_null(zEnd);
  char *zSql = sqlite3_mprintf("%.*s", (int)(zEnd - zAt), zAt);
  sqlite3_free(zDoc);
  assert_non_null(zSql);
  return zSql;
}

static void test_graph_removed_by_a_program_without_dyng(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng-schema-XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, w REAL, UNIQUE(src, dst));"
             "INSERT INTO e VALUES (0, 1, 4), (1, 2, 1), (0, 2, 9)");
  char *zSchemaBefore =
      sql_text(db, "SELECT group_concat(type || ' ' || name, ', ') FROM sqlite_master");
  sql_ok(db, "CREATE VIRTUAL TABLE net USING dyng(edges=e, weights=w)");
  assert_int_equal(n_triggers_on(db, "e"), 5);
  check_graph(db, "net", ROWS_E, 0, "e");
  sqlite3_close(db);

  /* A program that never loads dyng: DROP TABLE cannot reach the module,
  ** and the triggers still refuse rows; the plain SQL removes it all. */
  db = sql_open_plain(zPath);
  sql_fails(db, "DROP TABLE net", "no such module: dyng", NULL);
  sql_fails(db, "INSERT INTO e VALUES (2, 3, -1)", "e.w must be a finite number >= 0", NULL);
  char *zRows = sql_text(db, "SELECT group_concat(rowid || ':' || src || '-' || dst || '=' || w) "
                             "FROM e");
  char *zRemove = doc_removal_sql();
  sql_ok(db, zRemove);
  sqlite3_free(zRemove);
  /* The connection that ran it sees the change at once. */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'net%'"), 0);
  sqlite3_close(db);
  db = sql_open_plain(zPath);
  char *zCheck = sql_text(db, "PRAGMA integrity_check");
  assert_string_equal(zCheck, "ok");
  char *zSchemaAfter =
      sql_text(db, "SELECT group_concat(type || ' ' || name, ', ') FROM sqlite_master");
  assert_string_equal(zSchemaAfter, zSchemaBefore);
  char *zRowsAfter = sql_text(db, "SELECT group_concat(rowid || ':' || src || '-' || dst || '=' || "
                                  "w) FROM e");
  assert_string_equal(zRowsAfter, zRows);
  /* Writable, and checked by nothing. */
  sql_ok(db, "INSERT INTO e VALUES (2, 3, -1); UPDATE e SET w = 2 WHERE src = 0 AND dst = 1");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM e"), 4);
  sqlite3_close(db);

  /* With dyng again, the name is free for a new graph. */
  db = sql_open(zPath);
  sql_ok(db, "DELETE FROM e WHERE w < 0; CREATE VIRTUAL TABLE net USING dyng(edges=e, weights=w)");
  check_graph(db, "net", ROWS_E, 0, "e");
  sqlite3_close(db);
  sqlite3_free(zSchemaBefore);
  sqlite3_free(zSchemaAfter);
  sqlite3_free(zRows);
  sqlite3_free(zRowsAfter);
  sqlite3_free(zCheck);
  unlink(zPath);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_dropped_and_created_again_refuses_until_reattached),
      cmocka_unit_test(test_rebuilt_table_refuses_until_reattached),
      cmocka_unit_test(test_rebuild_that_keeps_the_triggers_needs_nothing),
      cmocka_unit_test(test_drop_inside_a_transaction_is_seen),
      cmocka_unit_test(test_reattach_from_inside_other_statements),
      cmocka_unit_test(test_unique_index_added_later_needs_and_gets_a_reattach),
      cmocka_unit_test(test_each_dropped_capture_trigger_is_noticed),
      cmocka_unit_test(test_older_writing_before_trigger_is_refused_until_made_again),
      cmocka_unit_test(test_column_that_hides_the_rowid_is_refused),
      cmocka_unit_test(test_generated_columns_are_read),
      cmocka_unit_test(test_create_messages_say_what_is_wrong),
      cmocka_unit_test(test_graph_removed_by_a_program_without_dyng),
  };
  return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
