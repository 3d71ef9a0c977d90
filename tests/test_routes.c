/*
** tests/test_routes.c: the answers that need only part of a tree, through
** SQL, against the whole tree's.
**
** One edge table, two graphs: `g` answers dyng_path, dyng_sssp WHERE node
** = t, WHERE dist <= X (and <), ORDER BY dist LIMIT n and dyng_matrix by
** searches that stop early; `w` lists whole trees (kept) first and answers
** from them, and the references read its rows with the bounds hidden from
** the planner (+dist).  Random tie-heavy tables (weights 0..2, zero-weight
** cycles, parallel edges, self-loops), directed and undirected, through
** random batches of inserts, deletes and updates: every answer must be the
** same text.  Also: routes leave kept trees where they are, and bad
** arguments get clear errors or the documented empty answer.
*/
#include "tests/test_util.h"

#include "tests/sql_util.h"

#include <math.h>
#include <string.h>

static uint64_t g_seed;

/* The text of zSql's one value (NULL, or no row, as ""), from
** sqlite3_mprintf; frees zSql. */
static char *one(sqlite3 *db, char *zSql) {
  char *z = sql_text_free(db, sqlite3_mprintf("SELECT (%s)", zSql));
  sqlite3_free(zSql);
  return z;
}

static void same(sqlite3 *db, char *zGot, char *zWant, const char *zWhat) {
  char *a = one(db, zGot), *b = one(db, zWant);
  if (strcmp(a, b) != 0) fail_msg("%s:\n  early: %s\n  whole: %s", zWhat, a, b);
  sqlite3_free(a);
  sqlite3_free(b);
}

static void run_tables(int directed, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, g_seed * 31 + salt);
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, v REAL)");
  const int nNodes = 60;
  for (int i = 0; i < 240; i++) {
    int s = (int)test_rng_below(&r, nNodes), d = (s + 1 + (int)test_rng_below(&r, 4)) % nNodes;
    if (test_rng_below(&r, 30) == 0) d = s;
    sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d, %g)", s, d, (int)test_rng_below(&r, 3),
                                    test_rng_below(&r, 2) ? 0.0 : test_rng_unit(&r)));
  }
  sql_ok_free(db, sqlite3_mprintf("CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,v', directed=%d)", directed));
  sql_ok_free(db, sqlite3_mprintf("CREATE VIRTUAL TABLE w USING dyng(edges=e, weights='w,v', directed=%d)", directed));
  for (int round = 0; round < 10; round++) {
    for (int q = 0; q < 12; q++) {
      int s = (int)test_rng_below(&r, nNodes), t = (int)test_rng_below(&r, nNodes);
      const char *obj = test_rng_below(&r, 2) ? "w" : "v";
      /* The whole tree of w, kept. */
      sqlite3_free(one(db, sqlite3_mprintf("SELECT count(*) FROM dyng_sssp('w', %d, '%s')", s, obj)));
      same(db,
           sqlite3_mprintf("SELECT group_concat(seq || ':' || node || ':' || ifnull(edge, '') || ':' || cost || ':' "
                           "|| agg_cost, ' ') FROM dyng_path('g', %d, %d, '%s')",
                           s, t, obj),
           sqlite3_mprintf("SELECT group_concat(seq || ':' || node || ':' || ifnull(edge, '') || ':' || cost || ':' "
                           "|| agg_cost, ' ') FROM dyng_path('w', %d, %d, '%s')",
                           s, t, obj),
           "dyng_path");
      same(db,
           sqlite3_mprintf("SELECT dist || ':' || ifnull(parent, '') || ':' || ifnull(edge, '') FROM "
                           "dyng_sssp('g', %d, '%s') WHERE node = %d",
                           s, obj, t),
           sqlite3_mprintf("SELECT dist || ':' || ifnull(parent, '') || ':' || ifnull(edge, '') FROM "
                           "dyng_sssp('w', %d, '%s') WHERE +node = %d",
                           s, obj, t),
           "dyng_sssp WHERE node");
      double x = (double)test_rng_below(&r, 5);
      const char *op = test_rng_below(&r, 2) ? "<=" : "<";
      same(db,
           sqlite3_mprintf("SELECT group_concat(node || ':' || dist || ':' || ifnull(parent, '') || ':' || "
                           "ifnull(edge, ''), ' ') FROM (SELECT * FROM dyng_sssp('g', %d, '%s') WHERE dist %s %g "
                           "ORDER BY node)",
                           (s + 7) % nNodes, obj, op, x),
           sqlite3_mprintf("SELECT group_concat(node || ':' || dist || ':' || ifnull(parent, '') || ':' || "
                           "ifnull(edge, ''), ' ') FROM (SELECT * FROM dyng_sssp('w', %d, '%s') WHERE +dist %s %g "
                           "ORDER BY node)",
                           (s + 7) % nNodes, obj, op, x),
           "dyng_sssp WHERE dist");
      /* The nearest k: their distances (ties at the k-th come in no set
      ** order), and each row one of the tree's. */
      int k = 1 + (int)test_rng_below(&r, 10);
      same(db,
           sqlite3_mprintf("SELECT group_concat(dist, ' ') FROM (SELECT dist FROM dyng_sssp('g', %d, '%s') "
                           "ORDER BY dist LIMIT %d)",
                           (s + 13) % nNodes, obj, k),
           sqlite3_mprintf("SELECT group_concat(dist, ' ') FROM (SELECT dist FROM dyng_sssp('w', %d, '%s') "
                           "ORDER BY +dist LIMIT %d)",
                           (s + 13) % nNodes, obj, k),
           "ORDER BY dist LIMIT");
      sqlite3_int64 nOff = sql_int_free(
          db, sqlite3_mprintf("SELECT count(*) FROM (SELECT node, dist, parent, edge FROM dyng_sssp('g', %d, '%s') "
                              "ORDER BY dist LIMIT %d) AS a WHERE NOT EXISTS (SELECT 1 FROM dyng_sssp('w', %d, '%s') "
                              "AS b WHERE +b.node = a.node AND b.dist = a.dist AND b.parent IS a.parent AND b.edge IS "
                              "a.edge)",
                              (s + 13) % nNodes, obj, k, (s + 13) % nNodes, obj));
      assert_int_equal(nOff, 0);
    }
    /* A matrix, ids repeated and unknown ones among them. */
    int a = (int)test_rng_below(&r, nNodes), b = (int)test_rng_below(&r, nNodes);
    same(db,
         sqlite3_mprintf("SELECT group_concat(source || '>' || target || ':' || dist, ' ') FROM dyng_matrix('g', "
                         "'[%d, %d, %d, 999, %d]', '[%d, %d, 5, 999, %d]', 'v')",
                         a, b, (a + 3) % nNodes, a, b, a, (b + 1) % nNodes),
         sqlite3_mprintf("SELECT group_concat(x, ' ') FROM (SELECT s.value || '>' || t.value || ':' || d.dist AS x "
                         "FROM json_each('[%d, %d, %d]') AS s, json_each('[%d, %d, 5, %d]') AS t, "
                         "dyng_sssp('w', s.value, 'v') AS d WHERE +d.node = t.value AND "
                         "s.key = (SELECT min(key) FROM json_each('[%d, %d, %d]') WHERE value = s.value) AND "
                         "t.key = (SELECT min(key) FROM json_each('[%d, %d, 5, %d]') WHERE value = t.value) "
                         "ORDER BY s.key, t.key)",
                         a, b, (a + 3) % nNodes, b, a, (b + 1) % nNodes, a, b, (a + 3) % nNodes, b, a,
                         (b + 1) % nNodes),
         "dyng_matrix");
    /* A batch. */
    sql_ok(db, "BEGIN");
    int nOps = 1 + (int)test_rng_below(&r, 25);
    for (int i = 0; i < nOps; i++) {
      int dice = (int)test_rng_below(&r, 3);
      int s = (int)test_rng_below(&r, nNodes), d = (s + 1 + (int)test_rng_below(&r, 4)) % nNodes;
      if (dice == 0)
        sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d, 0)", s, d, (int)test_rng_below(&r, 3)));
      else if (dice == 1)
        sql_ok_free(db, sqlite3_mprintf("DELETE FROM e WHERE rowid = (SELECT rowid FROM e ORDER BY rowid LIMIT 1 "
                                        "OFFSET %d)",
                                        (int)test_rng_below(&r, 200)));
      else
        sql_ok_free(db, sqlite3_mprintf("UPDATE e SET w = %d WHERE rowid = (SELECT rowid FROM e ORDER BY rowid "
                                        "LIMIT 1 OFFSET %d)",
                                        (int)test_rng_below(&r, 3), (int)test_rng_below(&r, 200)));
    }
    sql_ok(db, "COMMIT");
  }
  sqlite3_close(db);
}

static void test_directed_parts_equal_the_whole_tree(void **state) {
  (void)state;
  run_tables(1, 1);
}

static void test_undirected_parts_equal_the_whole_tree(void **state) {
  (void)state;
  run_tables(0, 2);
}

/* On a graph large enough for landmarks (10,100 nodes: a grid with weights
** 0..2), aimed routes through batches equal the whole trees', and
** dyng_config reports the landmarks. */
static void run_aimed(int directed, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, g_seed * 131 + salt);
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL)");
  sql_ok(db, "BEGIN");
  for (int y = 0; y < 101; y++)
    for (int x = 0; x < 100; x++) {
      int v = y * 100 + x;
      if (x + 1 < 100)
        sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d)", v, v + 1, (int)test_rng_below(&r, 3)));
      if (y + 1 < 101)
        sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d)", v + 100, v, (int)test_rng_below(&r, 3)));
      if (directed && x > 0)
        sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, %d)", v, v - 1, (int)test_rng_below(&r, 3)));
    }
  sql_ok(db, "COMMIT");
  sql_ok_free(db, sqlite3_mprintf("CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w, directed=%d)", directed));
  sql_ok_free(db, sqlite3_mprintf("CREATE VIRTUAL TABLE w USING dyng(edges=e, weights=w, directed=%d)", directed));
  for (int round = 0; round < 4; round++) {
    for (int q = 0; q < 10; q++) {
      int s = (int)test_rng_below(&r, 10100), t = (int)test_rng_below(&r, 10100);
      sqlite3_free(one(db, sqlite3_mprintf("SELECT count(*) FROM dyng_sssp('w', %d)", s)));
      same(db,
           sqlite3_mprintf("SELECT group_concat(node || ':' || ifnull(edge, '') || ':' || agg_cost, ' ') FROM "
                           "dyng_path('g', %d, %d)",
                           s, t),
           sqlite3_mprintf("SELECT group_concat(node || ':' || ifnull(edge, '') || ':' || agg_cost, ' ') FROM "
                           "dyng_path('w', %d, %d)",
                           s, t),
           "aimed dyng_path");
    }
    assert_int_equal(sql_int(db, "SELECT json_array_length(dyng_config('graphs'), '$[0].landmarks.nodes')"), 4);
    sql_ok(db, "BEGIN");
    for (int i = 0; i < 30; i++)
      sql_ok_free(db, sqlite3_mprintf("UPDATE e SET w = %d WHERE rowid = %d", (int)test_rng_below(&r, 3),
                                      1 + (int)test_rng_below(&r, 20000)));
    sql_ok_free(db, sqlite3_mprintf("DELETE FROM e WHERE rowid = %d", 1 + (int)test_rng_below(&r, 20000)));
    sql_ok_free(db, sqlite3_mprintf("INSERT INTO e VALUES (%d, %d, 0)", (int)test_rng_below(&r, 10100),
                                    (int)test_rng_below(&r, 10100)));
    sql_ok(db, "COMMIT");
  }
  assert_true(sql_int(db, "SELECT json_extract(dyng_config('graphs'), '$[0].landmarks.updates') + "
                          "json_extract(dyng_config('graphs'), '$[0].landmarks.recomputes')") >= 3);
  /* landmarks 0: not aimed (and the same answers). */
  sql_ok(db, "SELECT dyng_config('landmarks', 0)");
  same(db, sqlite3_mprintf("SELECT group_concat(node, ' ') FROM dyng_path('g', 17, 9999)"),
       sqlite3_mprintf("SELECT group_concat(node, ' ') FROM dyng_path('w', 17, 9999)"), "unaimed dyng_path");
  sql_fails(db, "SELECT dyng_config('landmarks', 17)", "dyng_config: landmarks must be an integer from 0", NULL);
  sql_fails(db, "SELECT dyng_config('landmarks', 'many')", "dyng_config: landmarks must be an integer from 0", NULL);
  sql_ok(db, "SELECT dyng_config('landmarks', NULL)");
  assert_int_equal(sql_int(db, "SELECT dyng_config('landmarks')"), 4);
  sqlite3_close(db);
}

static void test_directed_aimed_routes_equal_the_whole_tree(void **state) {
  (void)state;
  run_aimed(1, 1);
}

static void test_undirected_aimed_routes_equal_the_whole_tree(void **state) {
  (void)state;
  run_aimed(0, 2);
}

/* Routes from many sources leave a kept tree in the cache, however small
** it is; a source asked again gets its tree kept. */
static void test_routes_keep_kept_trees(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 2999) "
             "INSERT INTO e SELECT x, x + 1, 1 + x % 3 FROM i;"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)");
  /* Room for about one tree of 3,001 vertices. */
  sql_ok(db, "SELECT dyng_config('cache_mb', 0.1)");
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 0)"), 3001);
  for (int s = 1; s < 200; s++)
    assert_int_equal(sql_int_free(db, sqlite3_mprintf("SELECT count(*) FROM dyng_path('g', %d, %d)", s * 10,
                                                      s * 10 + 5)),
                     6);
  /* 1500 -> 1501 -> 1502 at 1 and 3, 1503 at 6: a directed chain. */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1500) WHERE dist <= 4"), 3);
  assert_int_equal(sql_int(db, "SELECT json_array_length(dyng_config('graphs'), '$[0].trees')"), 1);
  assert_int_equal(sql_int(db, "SELECT json_extract(dyng_config('graphs'), '$[0].trees[0].source')"), 0);
  /* Node 1990, among the last sources, asked again: its tree is kept (in
  ** place of 0's). */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_path('g', 1990, 2020)"), 31);
  assert_int_equal(sql_int(db, "SELECT json_extract(dyng_config('graphs'), '$[0].trees[0].source')"), 1990);
  sqlite3_close(db);
}

/* Bad arguments: clear errors, or the documented empty answer. */
static void test_bad_arguments(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
             "INSERT INTO e VALUES (1, 2, 1), (2, 3, 1);"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w, directed=1)");
  /* Cutoffs: NULL (and NaN, stored as NULL) and negative ones match
  ** nothing, text is above every number. */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist <= NULL"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist <= -1"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist < 0"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist <= 0"), 1);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist <= 'x'"), 3);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 1) WHERE dist <= 1e308 * 10"), 3);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM (SELECT * FROM dyng_sssp('g', 1) ORDER BY dist LIMIT 0)"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM (SELECT * FROM dyng_sssp('g', 1) ORDER BY dist LIMIT -1)"), 3);
  assert_int_equal(sql_int(db, "SELECT sum(node) FROM (SELECT * FROM dyng_sssp('g', 1) ORDER BY dist LIMIT 1 "
                               "OFFSET 1)"),
                   2);
  /* Unknown nodes: no rows. */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_path('g', 1, 99)"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_path('g', 3, 1)"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_sssp('g', 99) WHERE dist <= 5"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_matrix('g', '[99, 98]', '[1]')"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_matrix('g', '[]', '[1]')"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_matrix('g', '[1]', '[]')"), 0);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_matrix('g', '[1, 1, 1]', '[3, 3]')"), 1);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM dyng_matrix('g', '[9223372036854775807]', '[1]')"), 0);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1, 2.5]', '[1]')", "dyng_matrix: sources[1] is not an integer node id",
            NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1]', '[null]')", "dyng_matrix: targets[0] is not an integer node id",
            NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', NULL, '[1]')",
            "dyng_matrix: sources must be a JSON array of node ids, got NULL", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', 1, '[1]')",
            "dyng_matrix: sources must be a JSON array of node ids, got an integer", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1', '[1]')",
            "dyng_matrix: sources must be a JSON array of node ids, got '[1'", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '{\"a\": 1}', '[1]')",
            "dyng_matrix: sources must be a JSON array of node ids", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1]')", "dyng_matrix: missing argument 'targets'", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('nope', '[1]', '[1]')", "dyng_matrix: no graph named 'nope'", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1]', '[1]', 'x')", "objective 'x' is not a weight of graph 'g'",
            NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix('g', '[1]', '[1]', 5)", "objective 5 is out of range", NULL);
  sql_fails(db, "SELECT * FROM dyng_matrix(5, '[1]', '[1]')", "dyng_matrix: graph must be the name of a dyng table",
            NULL);
  sqlite3_close(db);
}

/* max_ms stops a large matrix with the budget's message. */
static void test_matrix_honours_max_ms(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  sql_ok(db, "CREATE TABLE e(src INTEGER, dst INTEGER);"
             "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 199999) "
             "INSERT INTO e SELECT x, (x * 7 + 1) % 200000 FROM i;"
             "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 199999) "
             "INSERT INTO e SELECT x, (x + 1) % 200000 FROM i;"
             "CREATE VIRTUAL TABLE g USING dyng(edges=e)");
  sql_ok(db, "SELECT dyng_config('max_ms', 1)");
  sql_fails(db,
            "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 7 FROM i WHERE x < 2000) "
            "SELECT count(*) FROM dyng_matrix('g', (SELECT json_group_array(x) FROM i), '[199999, 3]')",
            "dyng_matrix: stopped after", NULL);
  sqlite3_close(db);
}

int main(void) {
  g_seed = test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_directed_parts_equal_the_whole_tree),
      cmocka_unit_test(test_undirected_parts_equal_the_whole_tree),
      cmocka_unit_test(test_directed_aimed_routes_equal_the_whole_tree),
      cmocka_unit_test(test_undirected_aimed_routes_equal_the_whole_tree),
      cmocka_unit_test(test_routes_keep_kept_trees),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_matrix_honours_max_ms),
  };
  return cmocka_run_group_tests_name("routes", tests, NULL, NULL);
}
