/*
** tests/test_read_edges.c: dyng_read_edges through the real extension.
**
** Files of every format are written here (and gzip-compressed with the
** gzip program), read back, and compared row by row with what was written:
** src, dst, weight (NULL when the file has none) and line.  Malformed lines
** must fail with the file, the line and what was expected; the function must
** not run from a view or a trigger (SQLITE_DIRECTONLY); and what it reads
** must load into a graph.  The real graphs in ../shared/data are read when
** present.
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

static char g_dir[64];

/* Writes `text` to <dir>/<name>; the path in a static ring. */
static const char *write_file(const char *name, const char *text) {
  static char paths[4][300];
  static int next;
  char *p = paths[next++ % 4];
  snprintf(p, 300, "%s/%s", g_dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

/* gzip -k: path.gz beside path; 0 when gzip is not there. */
static int gzip_file(const char *path) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "gzip -kf '%s' 2>/dev/null", path);
  return system(cmd) == 0;
}

/* The rows of dyng_read_edges(path[, format]) as "src dst weight line;"
** (weight "-" for NULL), or "ERROR: <message>". */
static char *read_all(sqlite3 *db, const char *path, const char *format) {
  char *sql = format ? sqlite3_mprintf("SELECT src, dst, weight, line FROM dyng_read_edges(%Q, %Q)", path, format)
                     : sqlite3_mprintf("SELECT src, dst, weight, line FROM dyng_read_edges(%Q)", path);
  sqlite3_stmt *st = NULL;
  sqlite3_str *out = sqlite3_str_new(db);
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      sqlite3_str_appendf(out, "%lld %lld ", sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
      if (sqlite3_column_type(st, 2) == SQLITE_NULL) sqlite3_str_appendf(out, "-");
      else sqlite3_str_appendf(out, "%g", sqlite3_column_double(st, 2));
      sqlite3_str_appendf(out, " %lld;", sqlite3_column_int64(st, 3));
    }
  }
  if (rc != SQLITE_DONE) {
    sqlite3_str_reset(out);
    sqlite3_str_appendf(out, "ERROR: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  char *z = sqlite3_str_finish(out);
  return z ? z : sqlite3_mprintf("");
}

/* Reads path (and its .gz, when gzip exists and zlib is built in) and
** compares with `want`. */
static void check_file(sqlite3 *db, const char *path, const char *format, const char *want) {
  char *got = read_all(db, path, format);
  if (strcmp(got, want) != 0) fail_msg("%s:\n got  %s\n want %s", path, got, want);
  sqlite3_free(got);
  if (!gzip_file(path)) return;
  char gz[320];
  snprintf(gz, sizeof gz, "%s.gz", path);
  got = read_all(db, gz, format);
  if (strstr(got, "built without zlib")) {
    sqlite3_free(got);
    return;
  }
  if (strcmp(got, want) != 0) fail_msg("%s:\n got  %s\n want %s", gz, got, want);
  sqlite3_free(got);
}

static void expect_error(sqlite3 *db, const char *path, const char *format, const char *part1, const char *part2) {
  char *got = read_all(db, path, format);
  if (strncmp(got, "ERROR: ", 7) != 0 || !strstr(got, part1) || (part2 && !strstr(got, part2)))
    fail_msg("%s: expected an error with '%s'%s%s, got: %s", path, part1, part2 ? " and " : "", part2 ? part2 : "",
             got);
  sqlite3_free(got);
}

/* ---- formats ------------------------------------------------------------ */

static void test_snap_edge_lists(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("a.txt", "# SNAP style\n% also a comment\n0 1\n\n  1\t2 \n-5 9223372036854775807 2.5\r\n"
                                       "7 7 0\n");
  check_file(db, p, NULL, "0 1 - 3;1 2 - 5;-5 9223372036854775807 2.5 6;7 7 0 7;");
  /* Any other suffix is an edge list too; the format may be named. */
  p = write_file("a.dat", "3 4 1e3\n");
  check_file(db, p, NULL, "3 4 1000 1;");
  check_file(db, p, "SNAP", "3 4 1000 1;");
  /* An empty file has no rows. */
  p = write_file("empty.edges", "");
  check_file(db, p, NULL, "");
  sqlite3_close(db);
}

static void test_dimacs_gr(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("a.gr", "c 9th DIMACS\nc\np sp 3 3\na 1 2 7\na 2 3 1\nc mid\na 3 1 2.5\n");
  check_file(db, p, NULL, "1 2 7 4;2 3 1 5;3 1 2.5 7;");
  check_file(db, p, "dimacs", "1 2 7 4;2 3 1 5;3 1 2.5 7;");
  sqlite3_close(db);
}

static void test_matrix_market(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("a.mtx", "%%MatrixMarket matrix coordinate real general\n% comment\n4 4 3\n1 2 0.5\n"
                                       "3 3 2\n4 1 1\n");
  check_file(db, p, NULL, "1 2 0.5 4;3 3 2 5;4 1 1 6;");
  /* Symmetric: off-diagonal entries both ways; pattern: no weight. */
  p = write_file("b.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n3 1\n");
  check_file(db, p, NULL, "2 1 - 3;1 2 - 3;3 3 - 4;3 1 - 5;1 3 - 5;");
  p = write_file("c.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 2 4\n");
  check_file(db, p, NULL, "1 2 4 3;2 1 4 3;");
  sqlite3_close(db);
}

static void test_csv_and_tsv(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  /* Columns found by name, in any order; an empty weight is NULL. */
  const char *p = write_file("a.csv", "cost,To,from,note\n1.5,2,1,x\n,3,\"2\",\"a, b\"\n7,1,3,\n");
  check_file(db, p, NULL, "1 2 1.5 2;2 3 - 3;3 1 7 4;");
  /* Unknown names: the first three columns. */
  p = write_file("b.csv", "a,b,c\n10,20,0.25\n30,40,\n");
  check_file(db, p, NULL, "10 20 0.25 2;30 40 - 3;");
  p = write_file("a.tsv", "src\tdst\n5\t6\n\n7\t8\n");
  check_file(db, p, NULL, "5 6 - 2;7 8 - 4;");
  check_file(db, p, "tsv", "5 6 - 2;7 8 - 4;");
  sqlite3_close(db);
}

/* ---- errors -------------------------------------------------------------- */

static void test_malformed_lines_name_file_line_and_expectation(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("bad.txt", "1 2\n3 x\n");
  expect_error(db, p, NULL, "bad.txt' line 2: expected two integer node ids", "'3 x'");
  p = write_file("big.txt", "1 99999999999999999999\n");
  expect_error(db, p, NULL, "line 1: expected two integer node ids", NULL);
  p = write_file("bad.gr", "a 1 2 3\n");
  expect_error(db, p, NULL, "bad.gr' line 1: expected 'p sp <nodes> <arcs>' before any arc", NULL);
  p = write_file("bad2.gr", "p sp 2 1\na 1 2\n");
  expect_error(db, p, NULL, "line 2: expected 'a <from> <to> <weight>'", NULL);
  p = write_file("bad3.gr", "p sp 2 1\np sp 2 1\n");
  expect_error(db, p, NULL, "line 2: a second 'p' line", NULL);
  p = write_file("bad.mtx", "%%MatrixMarket matrix array real general\n");
  expect_error(db, p, NULL, "bad.mtx' line 1: expected '%%MatrixMarket matrix coordinate", NULL);
  p = write_file("bad2.mtx", "%%MatrixMarket matrix coordinate complex general\n");
  expect_error(db, p, NULL, "field 'complex' not supported", NULL);
  p = write_file("bad3.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n");
  expect_error(db, p, NULL, "symmetry 'skew-symmetric' not supported", NULL);
  p = write_file("bad4.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n");
  expect_error(db, p, NULL, "line 3: expected '<row> <column> <value>'", NULL);
  p = write_file("bad5.mtx", "%%MatrixMarket matrix coordinate real general\n2 x 1\n");
  expect_error(db, p, NULL, "line 2: expected the size line", NULL);
  p = write_file("bad.csv", "src,dst,weight\n1,x,2\n");
  expect_error(db, p, NULL, "bad.csv' line 2: expected integer node ids in columns 1 and 2", "weight");
  p = write_file("bad2.csv", "only\n1\n");
  expect_error(db, p, NULL, "line 1: expected a header of at least two columns", NULL);
  expect_error(db, "/nonexistent/edges.txt", NULL, "cannot open '/nonexistent/edges.txt'", NULL);
  p = write_file("ok.txt", "1 2\n");
  expect_error(db, p, "xml", "unknown format 'xml' (known: snap, dimacs, mtx, csv, tsv)", NULL);
  sqlite3_close(db);
}

/* The size line of a MatrixMarket file is a promise: the entries must be as
** many as it says, and each row and column index within its rows and
** columns; a file that breaks it fails naming the line, and a file that ends
** before its size line fails too. */
static void test_matrix_market_entries_must_fit_the_size_line(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("few.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1\n2 3 1\n");
  expect_error(db, p, NULL, "few.mtx': 2 entries, fewer than the 3 that the size line (line 3) declares", NULL);
  p = write_file("none.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n%\n");
  expect_error(db, p, NULL, "none.mtx': 0 entries, fewer than the 1 that the size line (line 2) declares", NULL);
  p = write_file("many.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n\n2 1 1\n");
  expect_error(db, p, NULL, "many.mtx' line 5: an entry more than the 1 that the size line (line 2) declares",
               NULL);
  p = write_file("row.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 4 1\n4 1 1\n");
  expect_error(db, p, NULL, "row.mtx' line 4: row 4 is outside 1..3, the rows of the size line (line 2)", NULL);
  p = write_file("col.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 4 2\n1 4\n2 5\n");
  expect_error(db, p, NULL, "col.mtx' line 4: column 5 is outside 1..4, the columns of the size line (line 2)",
               NULL);
  p = write_file("zero.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n0 1\n");
  expect_error(db, p, NULL, "zero.mtx' line 3: row 0 is outside 1..3", NULL);
  p = write_file("neg.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 -3 1\n1 1\n");
  expect_error(db, p, NULL, "neg.mtx' line 2: expected the size line '<rows> <columns> <entries>'", NULL);
  p = write_file("nosize.mtx", "%%MatrixMarket matrix coordinate real general\n% only comments\n");
  expect_error(db, p, NULL, "nosize.mtx': the file ends before its size line '<rows> <columns> <entries>'", NULL);
  /* A symmetric file counts its entries, not the edges they give. */
  p = write_file("sym.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 5\n3 3 1\n");
  check_file(db, p, NULL, "2 1 5 3;1 2 5 3;3 3 1 4;");
  /* An empty matrix is a size line with 0 entries. */
  p = write_file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  check_file(db, p, NULL, "");
  sqlite3_close(db);
}

/* A line with a field more than its format has, and a weight that is not a
** decimal number (strtod would take hexadecimal, inf and nan), fail naming
** the line; so does a weight above 1e298, the largest a graph takes, from
** the first double past it on, in every format. */
static void test_extra_fields_and_unusable_weights_are_errors(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  const char *p = write_file("extra.txt", "1 2 3\n4 5 6 7\n");
  expect_error(db, p, NULL, "extra.txt' line 2: expected two integer node ids and an optional weight", "'4 5 6 7'");
  p = write_file("extra.gr", "p sp 3 2\na 1 2 3\na 2 3 4 5\n");
  expect_error(db, p, NULL, "extra.gr' line 3: expected 'a <from> <to> <weight>'", NULL);
  p = write_file("extra.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 3 4\n");
  expect_error(db, p, NULL, "extra.mtx' line 3: expected '<row> <column> <value>'", NULL);
  p = write_file("extra.csv", "src,dst,weight\n1,2,3\n4,5,6,7\n");
  expect_error(db, p, NULL, "extra.csv' line 3: 4 fields, more than the header's 3", NULL);
  static const char *const azNotDecimal[] = {"0x10", "0x1p3", "inf", "-Infinity", "nan", "1e", ".", "1.5.2", "1,5"};
  for (size_t i = 0; i < sizeof azNotDecimal / sizeof *azNotDecimal; i++) {
    char zText[64], zWant[64];
    snprintf(zText, sizeof zText, "1 2 %s\n", azNotDecimal[i]);
    snprintf(zWant, sizeof zWant, "line 1: weight '%s' is not a decimal number", azNotDecimal[i]);
    expect_error(db, write_file("w.txt", zText), NULL, zWant, NULL);
    snprintf(zText, sizeof zText, "p sp 2 1\na 1 2 %s\n", azNotDecimal[i]);
    expect_error(db, write_file("w.gr", zText), NULL, "line 2: weight", "is not a decimal number");
  }
  p = write_file("w.csv", "src,dst,weight\n1,2,0x10\n");
  expect_error(db, p, NULL, "w.csv' line 2: weight '0x10' is not a decimal number", NULL);
  p = write_file("w2.csv", "src,dst,weight\n1,2,heavy\n");
  expect_error(db, p, NULL, "w2.csv' line 2: weight 'heavy' is not a decimal number", NULL);
  /* 1e298 and -1e298 are read; the next double up, in magnitude, is not. */
  check_file(db, write_file("max.txt", "1 2 1e298\n2 3 -1e298\n3 4 1.0e+298\n"), NULL,
             "1 2 1e+298 1;2 3 -1e+298 2;3 4 1e+298 3;");
  static const char *const azFiles[][2] = {
      {"big.txt", "1 2 1.0000000000000001e298\n"},
      {"big.gr", "p sp 2 1\na 1 2 1.0000000000000001e298\n"},
      {"big.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.0000000000000001e298\n"},
      {"big.csv", "src,dst,weight\n1,2,1.0000000000000001e298\n"},
      {"big.tsv", "src\tdst\tweight\n1\t2\t1e309\n"}};
  for (size_t i = 0; i < sizeof azFiles / sizeof *azFiles; i++)
    expect_error(db, write_file(azFiles[i][0], azFiles[i][1]), NULL, "is larger than 1e298, the largest weight",
                 azFiles[i][0]);
  /* Below -1e298 is not "larger". */
  expect_error(db, write_file("big2.txt", "1 2 -1e299\n"), NULL,
               "weight '-1e299' is less than -1e298, the least weight a graph takes", NULL);
  sqlite3_close(db);
}

static void test_arguments_and_trust(void **state) {
  (void)state;
  sqlite3 *db = sql_open(":memory:");
  char *err = NULL;
  /* The path is required and must be text; the format, when given, too. */
  static const char *const azMissing[] = {"SELECT * FROM dyng_read_edges", "SELECT * FROM dyng_read_edges()"};
  for (int i = 0; i < 2; i++) {
    assert_int_not_equal(sqlite3_exec(db, azMissing[i], NULL, NULL, &err), SQLITE_OK);
    if (!strstr(err, "dyng_read_edges: missing argument 'path' (usage: dyng_read_edges(path[, format]))"))
      fail_msg("%s: %s", azMissing[i], err);
    sqlite3_free(err);
  }
  assert_int_not_equal(sqlite3_exec(db, "SELECT * FROM dyng_read_edges('x.txt', NULL)", NULL, NULL, &err),
                       SQLITE_OK);
  assert_non_null(strstr(err, "dyng_read_edges: format must be text (snap, dimacs, mtx, csv or tsv"));
  sqlite3_free(err);
  assert_int_not_equal(sqlite3_exec(db, "SELECT * FROM dyng_read_edges(42)", NULL, NULL, &err), SQLITE_OK);
  assert_non_null(strstr(err, "path must be text"));
  sqlite3_free(err);
  /* Never from a view or a trigger. */
  const char *p = write_file("t.txt", "1 2\n");
  char *sql = sqlite3_mprintf("CREATE VIEW v AS SELECT * FROM dyng_read_edges(%Q);", p);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_free(sql);
  assert_int_not_equal(sqlite3_exec(db, "SELECT * FROM v", NULL, NULL, &err), SQLITE_OK);
  assert_non_null(strstr(err, "unsafe use of virtual table"));
  sqlite3_free(err);
  sql = sqlite3_mprintf("CREATE TABLE t(x); CREATE TABLE e(src, dst);"
                        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
                        "  INSERT INTO e SELECT src, dst FROM dyng_read_edges(%Q); END;",
                        p);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_free(sql);
  assert_int_not_equal(sqlite3_exec(db, "INSERT INTO t VALUES (1)", NULL, NULL, &err), SQLITE_OK);
  assert_non_null(strstr(err, "unsafe use of virtual table"));
  sqlite3_free(err);
  sqlite3_close(db);
}

/* ---- into a graph -------------------------------------------------------- */

/* A random weighted edge list written as SNAP, CSV and MatrixMarket: every
** reading gives the same edges, and they load into a graph whose distances
** match those from the table the rows came from. */
static void test_random_files_round_trip_into_a_graph(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, test_seed() + 40);
  sqlite3 *db = sql_open(":memory:");
  enum { N = 3000 };
  sqlite3_str *snap = sqlite3_str_new(NULL), *csv = sqlite3_str_new(NULL), *mtx = sqlite3_str_new(NULL);
  sqlite3_str_appendf(csv, "src,dst,weight\n");
  sqlite3_str_appendf(mtx, "%%%%MatrixMarket matrix coordinate real general\n500 500 %d\n", N);
  for (int i = 0; i < N; i++) {
    int u = 1 + (int)test_rng_below(&r, 500), v = 1 + (int)test_rng_below(&r, 500);
    int w = (int)test_rng_below(&r, 1000);
    sqlite3_str_appendf(snap, "%d %d %d.%d\n", u, v, w / 10, w % 10);
    sqlite3_str_appendf(csv, "%d,%d,%d.%d\n", u, v, w / 10, w % 10);
    sqlite3_str_appendf(mtx, "%d %d %d.%d\n", u, v, w / 10, w % 10);
  }
  char *zs = sqlite3_str_finish(snap), *zc = sqlite3_str_finish(csv), *zm = sqlite3_str_finish(mtx);
  char ps[300], pc[300], pm[300];
  snprintf(ps, sizeof ps, "%s", write_file("r.txt", zs));
  snprintf(pc, sizeof pc, "%s", write_file("r.csv", zc));
  snprintf(pm, sizeof pm, "%s", write_file("r.mtx", zm));
  sqlite3_free(zs), sqlite3_free(zc), sqlite3_free(zm);
  char *a = read_all(db, ps, NULL), *b = read_all(db, pc, NULL), *c = read_all(db, pm, NULL);
  /* The same edges; lines differ by the header lines. */
  assert_int_equal(strncmp(a, "ERROR", 5) != 0, 1);
  char *sql = sqlite3_mprintf(
      "CREATE TABLE e1(src INTEGER, dst INTEGER, w REAL); CREATE TABLE e2(src INTEGER, dst INTEGER, w REAL);"
      "CREATE TABLE e3(src INTEGER, dst INTEGER, w REAL);"
      "INSERT INTO e1 SELECT src, dst, weight FROM dyng_read_edges(%Q);"
      "INSERT INTO e2 SELECT src, dst, weight FROM dyng_read_edges(%Q);"
      "INSERT INTO e3 SELECT src, dst, weight FROM dyng_read_edges(%Q);",
      ps, pc, pm);
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fail_msg("%s", err);
  sqlite3_free(sql);
  sqlite3_free(a), sqlite3_free(b), sqlite3_free(c);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "SELECT (SELECT count(*) FROM e1), "
                                      "(SELECT count(*) FROM (SELECT * FROM e1 EXCEPT SELECT * FROM e2)), "
                                      "(SELECT count(*) FROM (SELECT * FROM e1 EXCEPT SELECT * FROM e3))",
                                      -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), N);
  assert_int_equal(sqlite3_column_int(st, 1), 0);
  assert_int_equal(sqlite3_column_int(st, 2), 0);
  sqlite3_finalize(st);
  /* Into a graph: its edges are the rows, and its distances those of a
  ** Bellman-Ford over the table. */
  assert_int_equal(sqlite3_exec(db, "CREATE VIRTUAL TABLE g USING dyng(edges=e1, weights=w)", NULL, NULL, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_extract(dyng_config(), '$.graphs[0].edges')", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), N);
  sqlite3_finalize(st);
  double dist[501];
  for (int i = 0; i <= 500; i++) dist[i] = INFINITY;
  dist[1] = 0;
  for (int round = 0; round < 500; round++) {
    int changed = 0;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT src, dst, w FROM e1", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      int u = sqlite3_column_int(st, 0), v = sqlite3_column_int(st, 1);
      double d = dist[u] + sqlite3_column_double(st, 2);
      if (d < dist[v]) dist[v] = d, changed = 1;
    }
    sqlite3_finalize(st);
    if (!changed) break;
  }
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT node, dist FROM dyng_sssp('g', 1)", -1, &st, NULL), SQLITE_OK);
  int reached = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    reached++;
    int v = sqlite3_column_int(st, 0);
    assert_true(fabs(dist[v] - sqlite3_column_double(st, 1)) <= 1e-9 * (1 + dist[v]));
  }
  sqlite3_finalize(st);
  int want = 0;
  for (int i = 1; i <= 500; i++) want += !isinf(dist[i]);
  assert_int_equal(reached, want);
  sqlite3_close(db);
}

/* The real graphs of ../shared/data, when present: their published sizes. */
static void test_real_graphs(void **state) {
  (void)state;
  const char *dir = getenv("DYNG_DATA_DIR");
  static const struct {
    const char *file;
    int edges;
  } graphs[] = {{"facebook_combined.txt", 88234}, {"oregon1_010331.edges", 22002},
                {"uspowergrid.edges", 6594},      {"luxembourg_osm.edges", 119666}};
  sqlite3 *db = sql_open(":memory:");
  int seen = 0;
  for (size_t i = 0; dir && i < sizeof graphs / sizeof *graphs; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, graphs[i].file);
    if (access(path, R_OK) != 0) continue;
    seen++;
    char *sql = sqlite3_mprintf("SELECT count(*), count(weight) FROM dyng_read_edges(%Q)", path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_free(sql);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), graphs[i].edges);
    assert_int_equal(sqlite3_column_int(st, 1), 0);
    sqlite3_finalize(st);
  }
  if (!seen) printf("# ../shared/data not present: no real graph read\n");
  sqlite3_close(db);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/dyng-read-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_snap_edge_lists),
      cmocka_unit_test(test_dimacs_gr),
      cmocka_unit_test(test_matrix_market),
      cmocka_unit_test(test_csv_and_tsv),
      cmocka_unit_test(test_malformed_lines_name_file_line_and_expectation),
      cmocka_unit_test(test_matrix_market_entries_must_fit_the_size_line),
      cmocka_unit_test(test_extra_fields_and_unusable_weights_are_errors),
      cmocka_unit_test(test_arguments_and_trust),
      cmocka_unit_test(test_random_files_round_trip_into_a_graph),
      cmocka_unit_test(test_real_graphs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
