/*
** bench/bench_routing.c: routes, cutoffs and cost matrices through SQL,
** against the whole one-to-all search they replace, in one process.
**
**   bench_routing DB.db [--runs N] [--cols C] [--extension PATH] [--backend B] [--landmarks K] [--verbose]
**
** DB.db holds edges(src, dst, length, ...) (bench/gen_graph), or is an
** edge list (a name ending .edges or .txt, read with dyng_read_edges) whose
** edges get reproducible lengths: 1 + ((src * 7919 + dst * 104729) mod 997)
** / 10, from 1 to 100.6 (the road network of ../shared/data has none);
** --cols C says
** it is a grid of C columns (node r*C + c), so that "a few edges away"
** means c + 5 in the same row; without it the near target is the far end
** of a 5-edge walk along the sources' first out-edges.  On a scratch copy it
** creates the graph `bench_g` (weights `length`, undirected as the grid's
** roads are two-way) with the tree cache off (cache_mb 0), so that every
** query computes from scratch, and times, per query, N times over:
**
**   whole      SELECT count(*) FROM dyng_sssp(g, s): a whole tree, the
**              one-to-all search a route used to cost
**   route      SELECT count(*) FROM dyng_path(g, s, t), random pairs
**   near       the same with t five edges from s
**   edits      1,000 weight edits (one UPDATE per edit, one transaction),
**              then a route: the sync and the route together
**   nearest    the 1,000 nearest nodes: ORDER BY dist LIMIT 1000
**   within     WHERE dist <= the 1,000th nearest's distance
**   matrix     a 100 x 100 dyng_matrix, against `matrix_whole`: the 100
**              sources' whole trees one after another (the same answers)
**
** Each pair's route must give the distance of its whole tree, or the
** program aborts.  Output: a Markdown table, BENCH lines and the ratios
** (route / whole etc.), as the other drivers.
*/
#include "bench/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char bench_program[] = "bench_routing";

/* A random node id of bench_g, drawn from 0 .. max_node until one is. */
static double random_node(sqlite3 *db, uint64_t *seed, double max_node) {
  char sql[128];
  for (;;) {
    double v = (double)(splitmix64(seed) % (uint64_t)(max_node + 1));
    snprintf(sql, sizeof sql, "SELECT count(*) FROM bench_g WHERE node = %.0f", v);
    if (sql_number(db, sql) != 0) return v;
  }
}

int main(int argc, char **argv) {
  const char *path = NULL, *ext = "./dyng.so", *backend = NULL;
  int runs = 11, cols = 0, verbose = 0, landmarks = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--landmarks") && i + 1 < argc) landmarks = atoi(argv[++i]);
    else if (!path) path = argv[i];
    else die("usage: bench_routing DB.db [--runs N] [--cols C] [--extension PATH] [--backend B] [--landmarks K] [--verbose]");
  }
  if (!path || runs < 1) die("usage: bench_routing DB.db [--runs N] [--cols C] [--extension PATH] [--backend B] [--landmarks K] [--verbose]");
  const char *scratch = scratch_name();
  size_t len = strlen(path);
  int edge_list = (len > 6 && !strcmp(path + len - 6, ".edges")) || (len > 4 && !strcmp(path + len - 4, ".txt"));
  if (!edge_list) copy_file(path, scratch);
  sqlite3 *db = open_with_extension(scratch, ext);
  if (edge_list) {
    char *q = sqlite3_mprintf("CREATE TABLE edges(src INTEGER, dst INTEGER, length REAL);"
                              "INSERT INTO edges SELECT src, dst, 1 + ((src * 7919 + dst * 104729) %% 997) / 10.0 "
                              "FROM dyng_read_edges(%Q)",
                              path);
    sql_exec(db, q);
    sqlite3_free(q);
  }
  if (backend) {
    char *q = sqlite3_mprintf("SELECT dyng_config('backend', %Q)", backend);
    sql_exec(db, q);
    sqlite3_free(q);
  }
  if (landmarks >= 0) {
    char *q = sqlite3_mprintf("SELECT dyng_config('landmarks', %d)", landmarks);
    sql_exec(db, q);
    sqlite3_free(q);
  }
  sql_exec(db, "CREATE VIRTUAL TABLE bench_g USING dyng(edges=edges, weights='length', directed=0)");
  sql_exec(db, "SELECT dyng_config('cache_mb', 0)");
  double n_nodes = sql_number(db, "SELECT count(*) FROM bench_g");
  double max_node = sql_number(db, "SELECT max(node) FROM bench_g");
  double max_rowid = sql_number(db, "SELECT max(rowid) FROM edges");
  uint64_t seed = 12345;

  double *whole = xmalloc(sizeof(double) * runs), *route = xmalloc(sizeof(double) * runs),
         *near = xmalloc(sizeof(double) * runs), *edits = xmalloc(sizeof(double) * runs),
         *nearest = xmalloc(sizeof(double) * runs), *within = xmalloc(sizeof(double) * runs);
  char sql[512];
  for (int run = 0; run < runs; run++) {
    /* A random node that exists, its random target, its near one. */
    double s = random_node(db, &seed, max_node), t = random_node(db, &seed, max_node), tn = 0, d = 0, dw = 0;
    if (cols > 0 && (int64_t)s % cols + 5 < cols) {
      tn = s + 5;
    } else {
      tn = s;
      for (int k = 0; k < 5; k++) {
        snprintf(sql, sizeof sql, "SELECT dst FROM edges WHERE src = %.0f AND dst <> %.0f ORDER BY rowid LIMIT 1",
                 tn, s);
        double next;
        if (!query_double(db, sql, &next)) break;
        tn = next;
      }
    }
    /* The whole tree first or last, alternately. */
    snprintf(sql, sizeof sql, "SELECT dist FROM dyng_sssp('bench_g', %.0f) WHERE +node = %.0f", s, t);
    double tw = 0;
    if (run % 2 == 0) tw = time_query(db, sql, &dw);
    snprintf(sql, sizeof sql, "SELECT max(agg_cost) FROM dyng_path('bench_g', %.0f, %.0f)", s, t);
    route[run] = time_query(db, sql, &d);
    if (run % 2 == 1) {
      snprintf(sql, sizeof sql, "SELECT dist FROM dyng_sssp('bench_g', %.0f) WHERE +node = %.0f", s, t);
      tw = time_query(db, sql, &dw);
    }
    whole[run] = tw;
    if (!(d == dw || (isinf(d) && isinf(dw)))) die("route %.0f -> %.0f: %.17g, its whole tree %.17g", s, t, d, dw);
    snprintf(sql, sizeof sql, "SELECT max(agg_cost) FROM dyng_path('bench_g', %.0f, %.0f)", tn, s);
    near[run] = time_query(db, sql, NULL);
    /* 1,000 weight edits, then a route from a new source. */
    sql_exec(db, "BEGIN");
    for (int k = 0; k < 1000; k++) {
      uint64_t r = splitmix64(&seed);
      snprintf(sql, sizeof sql, "UPDATE edges SET length = %.3f WHERE rowid = %llu", 1.0 + (double)(r % 9000) / 1000.0,
               1 + (unsigned long long)((r >> 20) % (uint64_t)max_rowid));
      sql_exec(db, sql);
    }
    sql_exec(db, "COMMIT");
    snprintf(sql, sizeof sql, "SELECT max(agg_cost) FROM dyng_path('bench_g', %.0f, %.0f)", t, s);
    edits[run] = time_query(db, sql, NULL);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT node FROM dyng_sssp('bench_g', %.0f) ORDER BY dist LIMIT 1000)", tn);
    nearest[run] = time_query(db, sql, NULL);
    snprintf(sql, sizeof sql, "SELECT max(dist) FROM (SELECT dist FROM dyng_sssp('bench_g', %.0f) ORDER BY dist "
             "LIMIT 1000)", s);
    double cut = 0;
    time_query(db, sql, &cut);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM dyng_sssp('bench_g', %.0f) WHERE dist <= %.17g", s, cut);
    within[run] = time_query(db, sql, NULL);
    if (verbose)
      fprintf(stderr, "run %d: whole %.2f ms, route %.2f ms, near %.3f ms, edits+route %.2f ms, nearest %.3f ms\n",
              run, whole[run] * 1e3, route[run] * 1e3, near[run] * 1e3, edits[run] * 1e3, nearest[run] * 1e3);
  }
  /* A 100 x 100 matrix against its sources' whole trees. */
  int n_mat = 100, mruns = runs < 3 ? runs : 3;
  double *mat = xmalloc(sizeof(double) * mruns), *mat_whole = xmalloc(sizeof(double) * mruns);
  for (int run = 0; run < mruns; run++) {
    sqlite3_str *src = sqlite3_str_new(NULL), *dst = sqlite3_str_new(NULL);
    sql_exec(db, "DROP TABLE IF EXISTS bench_pick; CREATE TEMP TABLE bench_pick(s INTEGER, t INTEGER)");
    for (int k = 0; k < n_mat; k++) {
      double s = random_node(db, &seed, max_node), t = random_node(db, &seed, max_node);
      sqlite3_str_appendf(src, "%s%.0f", k ? "," : "[", s);
      sqlite3_str_appendf(dst, "%s%.0f", k ? "," : "[", t);
      snprintf(sql, sizeof sql, "INSERT INTO bench_pick VALUES (%.0f, %.0f)", s, t);
      sql_exec(db, sql);
    }
    sqlite3_str_appendall(src, "]");
    sqlite3_str_appendall(dst, "]");
    char *zs = sqlite3_str_finish(src), *zt = sqlite3_str_finish(dst);
    char *q = sqlite3_mprintf("SELECT sum(dist) FROM dyng_matrix('bench_g', '%s', '%s')", zs, zt);
    double sum_m = 0, sum_w = 0;
    mat[run] = time_query(db, q, &sum_m);
    sqlite3_free(q);
    q = sqlite3_mprintf("SELECT sum(d.dist) FROM (SELECT DISTINCT s FROM bench_pick) AS p, dyng_sssp('bench_g', p.s) "
                        "AS d WHERE +d.node IN (SELECT t FROM bench_pick)");
    mat_whole[run] = time_query(db, q, &sum_w);
    sqlite3_free(q);
    if (fabs(sum_m - sum_w) > 1e-6 * fabs(sum_w)) die("matrix sum %.17g, whole trees %.17g", sum_m, sum_w);
    sqlite3_free(zs);
    sqlite3_free(zt);
  }
  report rep;
  report_init(&rep, path);
  char ratio[64];
  report_add(&rep, "whole", "ms", 1e3, whole, runs, NULL);
  stats sw = stats_of(whole, runs), sr = stats_of(route, runs), sn = stats_of(near, runs),
        se = stats_of(edits, runs), sm = stats_of(mat, mruns), smw = stats_of(mat_whole, mruns);
  snprintf(ratio, sizeof ratio, "%.3f of whole", sr.median / sw.median);
  report_add(&rep, "route", "ms", 1e3, route, runs, ratio);
  snprintf(ratio, sizeof ratio, "%.4f of whole", sn.median / sw.median);
  report_add(&rep, "near", "ms", 1e3, near, runs, ratio);
  snprintf(ratio, sizeof ratio, "%.3f of whole", se.median / sw.median);
  report_add(&rep, "edits_then_route", "ms", 1e3, edits, runs, ratio);
  report_add(&rep, "nearest_1000", "ms", 1e3, nearest, runs, NULL);
  report_add(&rep, "within", "ms", 1e3, within, runs, NULL);
  snprintf(ratio, sizeof ratio, "%.2fx faster than matrix_whole", smw.median / sm.median);
  report_add(&rep, "matrix_100x100", "ms", 1e3, mat, mruns, ratio);
  report_add(&rep, "matrix_whole", "ms", 1e3, mat_whole, mruns, NULL);
  report_ratio(&rep, "route_over_whole", sr.median / sw.median);
  report_ratio(&rep, "near_over_whole", sn.median / sw.median);
  report_ratio(&rep, "edits_route_over_whole", se.median / sw.median);
  report_ratio(&rep, "matrix_speedup", smw.median / sm.median);
  printf("%s: %.0f nodes, %d runs, threads %s\n\n", path, n_nodes, runs,
         getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "(all)");
  printf("| figure | median | min | max | |\n| --- | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  printf("\n");
  report_print_lines(&rep);
  free(whole), free(route), free(near), free(edits), free(nearest), free(within), free(mat), free(mat_whole);
  sqlite3_close(db);
  return 0;
}
