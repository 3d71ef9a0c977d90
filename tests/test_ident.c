/*
** tests/test_ident.c: which graph a name stands for, and how long a graph
** lives, through the real extension in the real SQLite.
**
**   - dyng loaded a second time into a connection (an application's
**     on-connect hook run twice) keeps serving the graphs and the settings
**     of the first load;
**   - a schema name that is detached and attached to another database
**     serves that database's graph, never the old one's (a long random run
**     of ATTACH and DETACH, every answer checked against the table it must
**     be reading);
**   - a database whose schema was edited to make a graph read a graph (its
**     own table, or another graph) gets an error, never a recursion.
**
** Expected answers come from the edge tables, read with plain SQL, and a
** breadth-first search here.
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

/* ---- the reference: the edge table read with plain SQL ---------------- */

/* Checks graph zDb.g against edge table zDb.e: the graph table lists every
** node with its degrees, and dyng_sssp from node `source` reaches the nodes
** a breadth-first search over the rows reaches, at the same hop counts. */
static void check_graph(sqlite3 *db, const char *zDb, sqlite3_int64 source) {
  /* Nodes and degrees: compared as a count and two order-free sums. */
  sqlite3_int64 nRef = sql_int_free(
      db, sqlite3_mprintf("SELECT count(*) FROM (SELECT src FROM \"%w\".e UNION SELECT dst FROM \"%w\".e)",
                          zDb, zDb));
  sqlite3_int64 nGot = sql_int_free(db, sqlite3_mprintf("SELECT count(*) FROM \"%w\".g", zDb));
  if (nGot != nRef) fail_msg("%s.g lists %lld nodes, its table has %lld", zDb, nGot, nRef);
  const char *zSum = "SELECT total(node * 1000003 + out_degree * 1009 + in_degree * 17) FROM %s";
  char *zRef = sqlite3_mprintf(
      "(SELECT n AS node, (SELECT count(*) FROM \"%w\".e WHERE src = n) AS out_degree, "
      "(SELECT count(*) FROM \"%w\".e WHERE dst = n) AS in_degree "
      "FROM (SELECT src AS n FROM \"%w\".e UNION SELECT dst FROM \"%w\".e))",
      zDb, zDb, zDb, zDb);
  char *zGraph = sqlite3_mprintf("\"%w\".g", zDb);
  sqlite3_int64 sumRef = sql_int_free(db, sqlite3_mprintf(zSum, zRef));
  sqlite3_int64 sumGot = sql_int_free(db, sqlite3_mprintf(zSum, zGraph));
  if (sumRef != sumGot) fail_msg("%s.g: degrees differ from its table", zDb);
  sqlite3_free(zRef);
  sqlite3_free(zGraph);

  /* Hops from source by breadth-first search over the rows. */
  int nEdge = (int)sql_int_free(db, sqlite3_mprintf("SELECT count(*) FROM \"%w\".e", zDb));
  sqlite3_int64 *aSrc = calloc(nEdge + 1, sizeof *aSrc), *aDst = calloc(nEdge + 1, sizeof *aDst);
  sqlite3_int64 *aNode = calloc(2 * nEdge + 2, sizeof *aNode);
  int *aHop = calloc(2 * nEdge + 2, sizeof *aHop);
  sqlite3_stmt *p = NULL;
  char *zSql = sqlite3_mprintf("SELECT src, dst FROM \"%w\".e", zDb);
  assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
  sqlite3_free(zSql);
  int n = 0;
  while (sqlite3_step(p) == SQLITE_ROW && n < nEdge) {
    aSrc[n] = sqlite3_column_int64(p, 0);
    aDst[n] = sqlite3_column_int64(p, 1);
    n++;
  }
  sqlite3_finalize(p);
  int nReached = 0, bHasSource = 0;
  for (int i = 0; i < n; i++) bHasSource |= aSrc[i] == source || aDst[i] == source;
  if (bHasSource) {
    aNode[0] = source;
    aHop[0] = 0;
    nReached = 1;
    for (int iHead = 0; iHead < nReached; iHead++)
      for (int i = 0; i < n; i++) {
        if (aSrc[i] != aNode[iHead]) continue;
        int j = 0;
        while (j < nReached && aNode[j] != aDst[i]) j++;
        if (j == nReached) aNode[nReached] = aDst[i], aHop[nReached++] = aHop[iHead] + 1;
      }
  }
  sqlite3_int64 hopRef = 0, hopGot;
  for (int i = 0; i < nReached; i++) hopRef += aHop[i] * 7919 + aNode[i] % 1000003;
  zSql = sqlite3_mprintf("SELECT count(*), total(dist * 7919 + node %% 1000003) FROM dyng_sssp('%q.g', %lld)",
                         zDb, source);
  assert_int_equal(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
  if (sqlite3_step(p) != SQLITE_ROW) fail_msg("%s: %s", zSql, sqlite3_errmsg(db));
  nGot = sqlite3_column_int64(p, 0);
  hopGot = sqlite3_column_int64(p, 1);
  sqlite3_finalize(p);
  if (nGot != nReached || hopGot != hopRef)
    fail_msg("%s: %lld nodes reached (the table: %d), hop sum %lld (the table: %lld)", zSql, nGot,
             nReached, hopGot, hopRef);
  sqlite3_free(zSql);
  free(aSrc);
  free(aDst);
  free(aNode);
  free(aHop);
}

/* ---- a second load ------------------------------------------------------- */

/* The connection's settings, as dyng_config reports them. */
static char *settings(sqlite3 *db) {
  return sql_text(db, "SELECT json_array(dyng_config('cache_mb'), dyng_config('max_ms'), "
                        "dyng_config('max_graph_mb'), dyng_config('progress'))");
}

/* An application's on-connect hook run twice loads dyng twice through
** sqlite3_load_extension: the second load changes nothing. */
static void test_second_load_keeps_graphs_and_settings(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  /* The first load asks whether dyng is there and leaves no error behind
  ** (sqlite3_open reads one as a failed automatic extension). */
  assert_int_equal(sqlite3_errcode(db), SQLITE_OK);
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1,2),(2,3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e);");
  check_graph(db, "main", 1);
  sql_ok(db, "SELECT dyng_config('cache_mb', 7), dyng_config('max_ms', 60000), "
              "dyng_config('max_graph_mb', 512), dyng_config('progress', 1)");
  char *zBefore = settings(db);
  sql_load(db);
  check_graph(db, "main", 1);
  char *zAfter = settings(db);
  assert_string_equal(zBefore, zAfter);
  sqlite3_free(zAfter);
  /* A schema change reconnects the graph table; a load reads dyng__load. */
  sql_ok(db, "CREATE TABLE x(a); INSERT INTO e VALUES (3,4),(4,1);");
  check_graph(db, "main", 3);
  sql_ok(db, "SELECT dyng_update('g', 'reload')");
  check_graph(db, "main", 4);
  sql_load(db);
  sql_ok(db, "CREATE VIRTUAL TABLE g2 USING dyng(edges=e, directed=0)");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g2', 1)"), 4);
  sql_ok(db, "DELETE FROM e WHERE src = 2; DROP TABLE x;");
  check_graph(db, "main", 1);
  zAfter = settings(db);
  assert_string_equal(zBefore, zAfter);
  sqlite3_free(zBefore);
  sqlite3_free(zAfter);
  /* Closing disconnects the graph tables, then frees what they used. */
  assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* Another copy of the library (the same file under another name) is
** refused by a connection that has dyng; the first keeps working. */
static void test_second_copy_of_the_library_is_refused(void **state) {
  (void)state;
  char zDir[] = "/tmp/dyng_ident_XXXXXX";
  assert_non_null(mkdtemp(zDir));
  char *zCopy = sqlite3_mprintf("%s/dyng_copy.so", zDir);
  char *zCmd = sqlite3_mprintf("cp '%s' '%s'", getenv("DYNG_EXTENSION"), zCopy);
  assert_int_equal(system(zCmd), 0);
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1,2),(2,3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e);");
  check_graph(db, "main", 1);
  char *zErr = NULL;
  assert_int_not_equal(sqlite3_load_extension(db, zCopy, "sqlite3_dyng_init", &zErr), SQLITE_OK);
  if (!zErr || !strstr(zErr, "another copy of dyng")) fail_msg("unexpected error: %s", zErr ? zErr : "");
  sqlite3_free(zErr);
  sql_ok(db, "INSERT INTO e VALUES (3,1)");
  check_graph(db, "main", 2);
  /* A connection of its own can use the copy. */
  sqlite3 *db2 = NULL;
  assert_int_equal(sqlite3_open(":memory:", &db2), SQLITE_OK);
  sqlite3_enable_load_extension(db2, 1);
  assert_int_equal(sqlite3_load_extension(db2, zCopy, "sqlite3_dyng_init", NULL), SQLITE_OK);
  sql_ok(db2, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (5,6);"
               "CREATE VIRTUAL TABLE g USING dyng(edges=e);");
  check_graph(db2, "main", 5);
  assert_int_equal(sqlite3_close(db2), SQLITE_OK);
  assert_int_equal(sqlite3_close(db), SQLITE_OK);
  unlink(zCopy);
  rmdir(zDir);
  sqlite3_free(zCopy);
  sqlite3_free(zCmd);
}

/* ---- ATTACH and DETACH ------------------------------------------------------ */

/* Graphs dyng_config() lists in schema zDb. */
static sqlite3_int64 graphs_listed(sqlite3 *db, const char *zDb) {
  return sql_int_free(db, sqlite3_mprintf("SELECT count(*) FROM json_each(dyng_config('graphs')) "
                                            "WHERE json_extract(value, '$.schema') = %Q",
                                            zDb));
}

/* Makes edge table e with rows zRows ("(1,2),(2,3)") and graph g over it in
** the database file zPath. */
static void make_graph_file(const char *zPath, const char *zRows) {
  sqlite3 *db = sql_open(zPath);
  sql_ok_free(db, sqlite3_mprintf("CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES %s;"
                                   "CREATE VIRTUAL TABLE g USING dyng(edges=e);",
                                   zRows));
  assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_detach_then_attach_another_file_serves_its_graph(void **state) {
  (void)state;
  char zY1[] = "/tmp/dyng_ident_XXXXXX", zY2[] = "/tmp/dyng_ident_XXXXXX";
  sql_temp_file(zY1);
  sql_temp_file(zY2);
  make_graph_file(zY1, "(1,2)");
  make_graph_file(zY2, "(1,3),(3,4)");
  sqlite3 *db = sql_open(":memory:");
  sqlite3 *dbW = NULL;
  assert_int_equal(sqlite3_open(zY1, &dbW), SQLITE_OK);
  sql_ok_free(db, sqlite3_mprintf("ATTACH %Q AS aux", zY1));
  check_graph(db, "aux", 1);
  sql_ok(db, "DETACH aux");
  /* y1 again, changed meanwhile by another connection: the new data
  ** version of the file says nothing about the mirror. */
  sql_ok(dbW, "INSERT INTO e VALUES (2,6),(6,7)");
  sql_ok_free(db, sqlite3_mprintf("ATTACH %Q AS aux", zY1));
  check_graph(db, "aux", 1);
  sql_ok(db, "DETACH aux");
  sql_ok_free(db, sqlite3_mprintf("ATTACH %Q AS aux", zY2));
  check_graph(db, "aux", 1);
  /* y2's logged changes reach y2's mirror. */
  sql_ok(db, "INSERT INTO aux.e VALUES (4,5),(5,1); DELETE FROM aux.e WHERE src = 1;");
  check_graph(db, "aux", 3);
  sql_ok(db, "DETACH aux");
  /* The detached graphs are let go. */
  assert_int_equal(graphs_listed(db, "aux"), 0);
  sql_ok_free(db, sqlite3_mprintf("ATTACH %Q AS aux", zY1));
  check_graph(db, "aux", 1);
  sql_ok(dbW, "DELETE FROM e WHERE dst = 6");
  check_graph(db, "aux", 1);
  assert_int_equal(sqlite3_close(dbW), SQLITE_OK);
  /* Databases without a file: each ATTACH of ':memory:' is a new one. */
  sql_ok(db, "DETACH aux; ATTACH ':memory:' AS aux;"
              "CREATE TABLE aux.e(src INTEGER, dst INTEGER); INSERT INTO aux.e VALUES (1,2),(2,3),(3,4);"
              "CREATE VIRTUAL TABLE aux.g USING dyng(edges=e);");
  check_graph(db, "aux", 1);
  sql_ok(db, "DETACH aux; ATTACH ':memory:' AS aux;"
              "CREATE TABLE aux.e(src INTEGER, dst INTEGER); INSERT INTO aux.e VALUES (1,2);");
  sql_fails(db, "SELECT count(*) FROM dyng_sssp('aux.g', 1)", "no graph named 'aux.g'", NULL);
  sql_ok(db, "CREATE VIRTUAL TABLE aux.g USING dyng(edges=e)");
  check_graph(db, "aux", 1);
  sql_ok_free(db, sqlite3_mprintf("DETACH aux; ATTACH %Q AS aux", zY2));
  check_graph(db, "aux", 3);
  assert_int_equal(sqlite3_close(db), SQLITE_OK);
  unlink(zY1);
  unlink(zY2);
}

/* A long random run of ATTACH and DETACH of several files (and of
** ':memory:') under a few schema names, with writes in between, from this
** connection and from another one; every answer is checked against the
** table the name stands for at that moment. */
#define N_FILES 4
#define N_NAMES 3
static void test_random_attach_detach_matches_the_tables(void **state) {
  (void)state;
  test_rng rng;
  test_rng_seed(&rng, test_seed());
  const char *zSteps = getenv("DYNG_IDENT_STEPS");
  int nStep = zSteps ? atoi(zSteps) : 400;
  char azFile[N_FILES][32];
  sqlite3 *dbW[N_FILES];
  for (int f = 0; f < N_FILES; f++) {
    snprintf(azFile[f], sizeof azFile[f], "/tmp/dyng_ident_XXXXXX");
    sql_temp_file(azFile[f]);
    make_graph_file(azFile[f], "(1,2)");
    /* A writer that never loads dyng: the triggers log its writes. */
    assert_int_equal(sqlite3_open(azFile[f], &dbW[f]), SQLITE_OK);
    sqlite3_busy_timeout(dbW[f], 5000);
  }
  sqlite3 *db = sql_open(":memory:");
  sqlite3_busy_timeout(db, 5000);
  int aAt[N_NAMES];  /* per name: the file attached (-1: none, N_FILES: ':memory:') */
  for (int i = 0; i < N_NAMES; i++) aAt[i] = -1;
  int nCheck = 0, nMemory = 0;
  for (int step = 0; step < nStep; step++) {
    int iName = (int)test_rng_below(&rng, N_NAMES);
    char zName[8];
    snprintf(zName, sizeof zName, "aux%d", iName);
    int r = (int)test_rng_below(&rng, 100);
    if (r < 20) {
      /* DETACH, or ATTACH a file no name holds (or a new ':memory:'). */
      if (aAt[iName] >= 0) {
        sql_ok_free(db, sqlite3_mprintf("DETACH %s", zName));
        aAt[iName] = -1;
        continue;
      }
      int f = (int)test_rng_below(&rng, N_FILES + 1);
      for (int i = 0; i < N_NAMES; i++)
        if (aAt[i] == f && f < N_FILES) f = N_FILES;
      if (f == N_FILES) {
        sql_ok_free(db, sqlite3_mprintf("ATTACH ':memory:' AS %s;"
                                         "CREATE TABLE %s.e(src INTEGER, dst INTEGER);"
                                         "INSERT INTO %s.e VALUES (%d, %d);"
                                         "CREATE VIRTUAL TABLE %s.g USING dyng(edges=e);",
                                         zName, zName, zName, 1 + nMemory % 5, 2 + nMemory % 3, zName));
        nMemory++;
      } else {
        sql_ok_free(db, sqlite3_mprintf("ATTACH %Q AS %s", azFile[f], zName));
      }
      aAt[iName] = f;
    } else if (r < 45) {
      /* Writes to a name's table through this connection, or to a file
      ** (attached or not) through its writer. */
      int bHere = aAt[iName] >= 0 && test_rng_below(&rng, 2);
      int f = (int)test_rng_below(&rng, N_FILES);
      sqlite3 *dbTo = bHere ? db : dbW[f];
      char zTable[16];
      snprintf(zTable, sizeof zTable, "%s", bHere ? zName : "main");
      int a = 1 + (int)test_rng_below(&rng, 8), b = 1 + (int)test_rng_below(&rng, 8);
      if (test_rng_below(&rng, 3))
        sql_ok_free(dbTo, sqlite3_mprintf("INSERT INTO %s.e VALUES (%d, %d)", zTable, a, b));
      else
        sql_ok_free(dbTo, sqlite3_mprintf("DELETE FROM %s.e WHERE rowid IN "
                                           "(SELECT rowid FROM %s.e ORDER BY random() LIMIT 1)",
                                           zTable, zTable));
    } else if (r < 50) {
      /* A schema change elsewhere reconnects every graph table. */
      sql_ok(db, test_rng_below(&rng, 2) ? "CREATE TABLE IF NOT EXISTS main.t(a)" : "DROP TABLE IF EXISTS main.t");
    } else if (aAt[iName] >= 0) {
      check_graph(db, zName, 1 + (sqlite3_int64)test_rng_below(&rng, 8));
      nCheck++;
    }
  }
  for (int i = 0; i < N_NAMES; i++) {
    char zName[8];
    snprintf(zName, sizeof zName, "aux%d", i);
    if (aAt[i] >= 0) {
      check_graph(db, zName, 1);
      sql_ok_free(db, sqlite3_mprintf("DETACH %s", zName));
    }
    assert_int_equal(graphs_listed(db, zName), 0);
  }
  printf("# %d steps, %d checks, %d ':memory:' databases\n", nStep, nCheck, nMemory);
  assert_int_equal(sqlite3_close(db), SQLITE_OK);
  for (int f = 0; f < N_FILES; f++) {
    assert_int_equal(sqlite3_close(dbW[f]), SQLITE_OK);
    unlink(azFile[f]);
  }
}

/* ---- a database whose schema was edited ------------------------------- */

/* Edits the schema of the database file zPath with zSql, run with
** writable_schema on and without dyng (the file is then reopened). */
static void plant(const char *zPath, const char *zSql) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(zPath, &db), SQLITE_OK);
  sql_ok(db, "PRAGMA writable_schema = ON");
  sql_ok(db, zSql);
  sql_ok(db, "PRAGMA writable_schema = OFF");
  sqlite3_close(db);
}

static void test_create_refuses_a_graph_over_a_graph_or_a_view(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1,2),(2,3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e);"
              "CREATE VIEW ev AS SELECT src, dst FROM e;");
  sql_fails(db, "CREATE VIRTUAL TABLE g2 USING dyng(edges=g, src=node, dst=out_degree)",
             "edge table 'g' of graph 'g2' is a virtual table", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g3 USING dyng(edges=g3, src=node, dst=out_degree)",
             "edge table 'g3' of graph 'g3' is a virtual table", NULL);
  sql_fails(db, "CREATE VIRTUAL TABLE g4 USING dyng(edges=ev)", "is a view", NULL);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name GLOB 'g[234]*'"), 0);
  check_graph(db, "main", 1);
  sqlite3_close(db);
}

/* A graph over itself: loading it would read it, which would load it ... */
static void test_planted_graph_over_itself_is_an_error(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng_ident_XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE g_log(seq INTEGER PRIMARY KEY, op INTEGER NOT NULL, "
              "edge INTEGER NOT NULL, src INTEGER, dst INTEGER);"
              "CREATE VIEW v AS SELECT count(*) AS n FROM g;");
  sqlite3_close(db);
  plant(zPath, "INSERT INTO sqlite_schema VALUES('table', 'g', 'g', 0, "
               "'CREATE VIRTUAL TABLE g USING dyng(edges=g, src=node, dst=out_degree)')");
  db = sql_open(zPath);
  const char *zWant = "edge table 'g' of graph 'g' is a virtual table";
  sql_fails(db, "SELECT count(*) FROM g", zWant, NULL);
  sql_fails(db, "SELECT * FROM dyng_sssp('g', 1)", zWant, NULL);
  /* Graph tables may be read by views, also with an untrusted schema. */
  sql_ok(db, "PRAGMA trusted_schema = OFF");
  sql_fails(db, "SELECT n FROM v", zWant, NULL);
  sql_fails(db, "SELECT dyng_update('g')", zWant, NULL);
  assert_int_equal(sql_int(db, "SELECT 40 + 2"), 42);
  sqlite3_close(db);
  unlink(zPath);
}

/* A graph over another graph: refused at load as at CREATE. */
static void test_planted_graph_over_a_graph_is_an_error(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng_ident_XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1,2),(2,3),(3,1),(3,4);"
              "CREATE VIRTUAL TABLE g1 USING dyng(edges=e);"
              "CREATE TABLE g2_log(seq INTEGER PRIMARY KEY, op INTEGER NOT NULL, "
              "edge INTEGER NOT NULL, src INTEGER, dst INTEGER);"
              "CREATE VIEW v AS SELECT count(*) AS n FROM g2;");
  sqlite3_close(db);
  plant(zPath, "INSERT INTO sqlite_schema VALUES('table', 'g2', 'g2', 0, "
               "'CREATE   VIRTUAL TABLE g2 USING dyng(edges=g1, src=node, dst=out_degree)')");
  db = sql_open(zPath);
  sql_ok(db, "PRAGMA trusted_schema = OFF");
  const char *zWant = "edge table 'g1' of graph 'g2' is a virtual table";
  sql_fails(db, "SELECT count(*) FROM g2", zWant, NULL);
  sql_fails(db, "SELECT n FROM v", zWant, NULL);
  sql_fails(db, "SELECT dyng_cycle_count('g2', 3)", zWant, NULL);
  /* g1 itself is unharmed. */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM g1"), 4);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g1', 1)"), 4);
  assert_int_equal(sql_int(db, "SELECT dyng_cycle_count('g1', 3, 'directed')"), 1);
  sqlite3_close(db);
  unlink(zPath);
}

/* A change log that is a view querying the graph: the sync reads the log,
** which asks for the graph being synced. */
static void test_planted_log_reading_its_graph_is_an_error(void **state) {
  (void)state;
  char zPath[] = "/tmp/dyng_ident_XXXXXX";
  sql_temp_file(zPath);
  sqlite3 *db = sql_open(zPath);
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER); INSERT INTO e VALUES (1,2),(2,3);"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e);");
  sqlite3_close(db);
  plant(zPath, "UPDATE sqlite_schema SET type = 'view', rootpage = 0, "
               "sql = 'CREATE VIEW g_log(seq, op, edge, src, dst) AS "
               "SELECT dyng_cycle_count(''g'', 3), 1, 1, 1, 1' WHERE name = 'g_log'");
  db = sql_open(zPath);
  sql_ok(db, "PRAGMA trusted_schema = OFF");
  /* A log that is no table is no change capture. */
  const char *zWant = "graph 'g': the change capture on its edge table 'e' is gone";
  sql_fails(db, "SELECT count(*) FROM g", zWant, NULL);
  sql_fails(db, "SELECT count(*) FROM dyng_sssp('g', 1)", zWant, NULL);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM e"), 2);
  sqlite3_close(db);
  unlink(zPath);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_second_load_keeps_graphs_and_settings),
      cmocka_unit_test(test_second_copy_of_the_library_is_refused),
      cmocka_unit_test(test_detach_then_attach_another_file_serves_its_graph),
      cmocka_unit_test(test_random_attach_detach_matches_the_tables),
      cmocka_unit_test(test_create_refuses_a_graph_over_a_graph_or_a_view),
      cmocka_unit_test(test_planted_graph_over_itself_is_an_error),
      cmocka_unit_test(test_planted_graph_over_a_graph_is_an_error),
      cmocka_unit_test(test_planted_log_reading_its_graph_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
