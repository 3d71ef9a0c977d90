/*
** bench/bench_gpu.c: the CUDA backend against the CPU backend, through SQL.
**
**   bench_gpu DB.db [--runs N] [--batch K] [--inserts random|reopen]
**             [--extension PATH] [--no-cpu] [--mosp]
**
** On a scratch copy of DB.db (a table edges(src, dst, length, minutes,
** toll), as bench/gen_graph writes) it creates two graphs over the same
** table, `gc` (backend=cpu) and `gg` (backend=cuda), directed, weights
** length,minutes,toll, and measures, N times over (default 5; medians):
**
**   create_cpu / create_cuda   CREATE VIRTUAL TABLE (load; for CUDA with the
**                              copy to the device), once
**   sssp_cpu / sssp_cuda       SELECT dist FROM dyng_sssp(g, S, 'length')
**                              WHERE node = T with cache_mb = 0: the whole
**                              tree is computed from scratch every time (T,
**                              the vertex farthest from S, is only read);
**                              the two answers must be equal.  The whole
**                              tree's count and largest distance are
**                              compared once per source, untimed
**   update_cpu / update_cuda   after keeping the trees of all three
**                              objectives from S on both graphs, one batch
**                              of K changes (default 50,000: K/2 deletes
**                              of random rows and K/2 inserts; with
**                              --inserts random, the default, of new edges
**                              from one random edge's source to another's
**                              destination, shortcuts across a road-like
**                              graph; with --inserts reopen, of the rows
**                              the previous batch deleted, as a road
**                              network's closures are reopened, so both
**                              halves are drawn from the graph's edges; a
**                              first, untimed batch deletes K/2 rows for
**                              the first one to reopen) in one
**                              transaction, then
**                              dyng_update(g): reading the log, applying the
**                              batch and bringing the three trees up to date
**   read_cuda / apply_cuda /   the parts of the CUDA update spent reading
**   follow_cuda / kept_cuda    the log rows into a batch, applying it to the
**                              host graph, copying it to the device and
**                              bringing the kept trees up to date, all of
**                              it (read_ms, apply_ms, backend_ms, kept_ms
**                              of dyng_update's report)
**   other_cuda                 the update as the caller times it less
**                              those parts
**   trees_cpu / trees_cuda     the part spent on the trees (the sum of their
**                              last_update_ms in dyng_config; the CPU's
**                              trees run in parallel, so theirs can exceed
**                              the update's wall time)
**   tree_cuda_<objective>      one tree's update (dyng_update's report), with
**                              the vertices it changed and how it was done
**   recompute_cuda             the same trees computed from scratch on the
**                              graph after the batch: a second connection
**                              with cache_mb = 0 follows the batch
**                              (untimed), then runs, per objective, a
**                              dyng_sssp query from S that reads one row
**                              (the whole tree is computed, in device
**                              memory allocated for it, as an update
**                              leaves it: on the device); the mean of the
**                              three
**   read_log                   the bare read of the same batch's log rows:
**                              SELECT count(*), sum(src), sum(dst) FROM
**                              <log> WHERE seq > P
**   read_log_all               the same read of every column an update
**                              needs (seq, op, edge, src, dst and the three
**                              weights): the floor for any reader of the
**                              log, as bench_sync's batch50k_log_read_all
**
** Every tree of gg must then equal gc's (count of reached vertices, the
** largest distance and a checksum of every row's node, parent and edge: by
** the tie rule the same tree, vertex by vertex); the program aborts
** otherwise.  The whole CUDA update
** is compared with read_log_all (goal: within 2x on R-MAT 21, 3x on the
** 2M-vertex grid) and with read_log, the CUDA tree time with 3 ms
** per objective and with the recompute (goal: 5x faster).  --no-cpu leaves
** out the CPU graph and the comparisons (for trying settings of the CUDA
** backend quickly).  Without a usable GPU the program says why and exits
** with status 77.
**
** With --mosp it measures instead the MOSP path with the three objectives
** (dyng_mosp from S to T, the vertex farthest from S by length), N times
** over, each after one batch of K changes (K/2 inserts of new edges between
** random edges' ends, K/2 deletes of random rows):
**
**   mosp_update_cpu / _cuda    dyng_update(g), which applies the batch and
**                              updates the three kept trees, then the
**                              dyng_mosp query, which builds the ensemble
**                              and finds its path (on CUDA on the device)
**   mosp_path_cpu / _cuda      the dyng_mosp query alone
**   mosp_trees_path_cuda       the three trees' updates (the sum of their
**                              ms in dyng_update's report) plus the query:
**                              the update of the MOSP answer without
**                              reading the log and applying the batch
**   mosp_recompute_cuda        on the second connection (cache_mb = 0,
**                              following the batch untimed) the dyng_mosp
**                              query, which computes the three trees from
**                              scratch on the device and then the path
**
** The goal: the whole CUDA update under 15 ms.  The CPU's and the CUDA
** graph's paths are compared after every batch (rows: node, edge and
** agg_costs) and must be equal; the program aborts otherwise.
*/
#include "bench/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char bench_program[] = "bench_gpu";

/* A whole tree's count(*), max(dist) and a checksum of its rows' node,
** parent and edge (equal trees, equal sums; each term below 2^31). */
typedef struct tree_sum {
  long long count, rows;
  double maxd;
} tree_sum;

static void tree_summary(sqlite3 *db, const char *g, long long s, const char *obj, tree_sum *out) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*), max(dist), sum(((node %% 1000003) * 1009 + (ifnull(parent, -1) %% 1000003) * 17 + "
           "ifnull(edge, -1) %% 1000003) %% 2147483647) FROM dyng_sssp('%s', %lld, '%s')",
           g, s, obj);
  sqlite3_stmt *st = prepare(db, sql);
  if (sqlite3_step(st) != SQLITE_ROW) die("%s", sqlite3_errmsg(db));
  out->count = sqlite3_column_int64(st, 0);
  out->maxd = sqlite3_column_double(st, 1);
  out->rows = sqlite3_column_int64(st, 2);
  sqlite3_finalize(st);
}

/* Aborts unless the CPU's tree a and the CUDA tree b are equal. */
static void same_tree(const tree_sum *a, const tree_sum *b, const char *what) {
  if (a->count != b->count || a->maxd != b->maxd || a->rows != b->rows)
    die("%s: CPU reaches %lld at most %.17g (rows %lld), CUDA %lld at most %.17g (rows %lld)", what, a->count,
        a->maxd, a->rows, b->count, b->maxd, b->rows);
}

/* A deleted row, to be inserted again. */
typedef struct closed_edge {
  long long src, dst;
  double w[3];
} closed_edge;

/* Deletes row `rowid` (when it exists), appending it to out[*n]. */
static void delete_row(sqlite3_stmt *del, long long rowid, closed_edge *out, long *n) {
  sqlite3_bind_int64(del, 1, rowid);
  int rc;
  while ((rc = sqlite3_step(del)) == SQLITE_ROW) {
    closed_edge *c = &out[(*n)++];
    c->src = sqlite3_column_int64(del, 0);
    c->dst = sqlite3_column_int64(del, 1);
    for (int k = 0; k < 3; k++) c->w[k] = sqlite3_column_double(del, 2 + k);
  }
  if (rc != SQLITE_DONE) die("%s", sqlite3_errmsg(sqlite3_db_handle(del)));
  sqlite3_reset(del);
}

/* The rows of dyng_mosp(g, s, t) as one string (node, edge, agg_costs). */
static char *mosp_rows(sqlite3 *db, const char *g, long long s, long long t) {
  char sql[300];
  snprintf(sql, sizeof sql,
           "SELECT count(*) || ' ' || ifnull(group_concat(node || ':' || ifnull(edge, '-') || ':' || agg_costs, ' '), '') "
           "FROM dyng_mosp('%s', %lld, %lld)",
           g, s, t);
  char *z = sql_text(db, sql);
  if (!z) die("%s\n  in: %s", sqlite3_errmsg(db), sql);
  return z;
}

/* The --mosp mode (see the top of the file): db has gc (when cpu) and gg,
** db2 a second connection to the same file. */
static void run_mosp(sqlite3 *db, sqlite3 *db2, report *r, int runs, long batch, int cpu) {
  sql_exec(db, "SELECT dyng_config('cache_mb', 65536)");
  sql_exec(db2, "SELECT dyng_config('cache_mb', 0)");
  free(sql_text(db2, "SELECT dyng_update('gg')"));
  long long n_edges = (long long)sql_number(db, "SELECT count(*) FROM edges");
  long long s = (long long)sql_number(db, "SELECT src FROM edges ORDER BY rowid LIMIT 1 OFFSET (SELECT count(*) / 2 FROM edges)");
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT node FROM dyng_sssp('gg', %lld, 'length') ORDER BY dist DESC LIMIT 1", s);
  long long t = (long long)sql_number(db, sql);
  /* The kept trees, of every objective, on both graphs. */
  free(mosp_rows(db, "gg", s, t));
  if (cpu) free(mosp_rows(db, "gc", s, t));
  double *u[2], *p[2], *rc = xmalloc(sizeof(double) * (size_t)runs), *len = xmalloc(sizeof(double) * (size_t)runs);
  double *tp = xmalloc(sizeof(double) * (size_t)runs); /* CUDA: the trees' updates plus the path */
  for (int c = 0; c < 2; c++) u[c] = xmalloc(sizeof(double) * (size_t)runs), p[c] = xmalloc(sizeof(double) * (size_t)runs);
  uint64_t rng = 4242;
  long long max_rowid = (long long)sql_number(db, "SELECT max(rowid) FROM edges");
  sqlite3_stmt *ins = prepare(db, "INSERT INTO edges(src, dst, length, minutes, toll) "
                                  "SELECT a.src, b.dst, a.length, a.minutes, a.toll FROM "
                                  "(SELECT * FROM edges WHERE rowid = ?1) a, (SELECT * FROM edges WHERE rowid = ?2) b");
  sqlite3_stmt *del = prepare(db, "DELETE FROM edges WHERE rowid = ?1");
  for (int i = 0; i < runs; i++) {
    sql_exec(db, "BEGIN");
    for (long j = 0; j < batch; j++) {
      long long a = 1 + (long long)(splitmix64(&rng) % (uint64_t)max_rowid);
      sqlite3_stmt *st = j & 1 ? del : ins;
      sqlite3_bind_int64(st, 1, a);
      if (!(j & 1)) sqlite3_bind_int64(st, 2, 1 + (long long)(splitmix64(&rng) % (uint64_t)max_rowid));
      if (sqlite3_step(st) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
      sqlite3_reset(st);
    }
    sql_exec(db, "COMMIT");
    char *rows[2] = {NULL, NULL};
    for (int order = 0; order < 2; order++) {
      int c = (i & 1) ^ order; /* 1: CUDA */
      if (!cpu && !c) continue;
      const char *g = c ? "gg" : "gc";
      snprintf(sql, sizeof sql, "SELECT dyng_update('%s')", g);
      double t0 = now_s();
      char *report = sql_text(db, sql);
      double t1 = now_s();
      snprintf(sql, sizeof sql, "SELECT count(*), sum(edge) FROM dyng_mosp('%s', %lld, %lld)", g, s, t);
      free(sql_text(db, sql));
      double t2 = now_s();
      u[c][i] = t2 - t0;
      p[c][i] = t2 - t1;
      if (c) {
        /* The trees' part of the update, from its report. */
        sqlite3_stmt *st = prepare(db, "SELECT sum(json_extract(value, '$.ms')) FROM json_each(?1, '$.trees')");
        sqlite3_bind_text(st, 1, report, -1, SQLITE_STATIC);
        tp[i] = (sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_double(st, 0) / 1e3 : NAN) + p[c][i];
        sqlite3_finalize(st);
      }
      free(report);
      rows[c] = mosp_rows(db, g, s, t); /* again, untimed, for the comparison */
    }
    len[i] = atof(rows[1]);
    if (cpu && strcmp(rows[0], rows[1]) != 0)
      die("run %d: the CPU's and the CUDA graph's paths differ:\n  cpu:  %.300s\n  cuda: %.300s", i, rows[0],
          rows[1]);
    free(rows[0]), free(rows[1]);
    /* Three trees from scratch, then the path, on the second connection. */
    free(sql_text(db2, "SELECT dyng_update('gg')"));
    snprintf(sql, sizeof sql, "SELECT count(*), sum(edge) FROM dyng_mosp('gg', %lld, %lld)", s, t);
    double t0 = now_s();
    free(sql_text(db2, sql));
    rc[i] = now_s() - t0;
  }
  sqlite3_finalize(ins);
  sqlite3_finalize(del);
  char bname[40], name[64], note[160];
  size_name(batch, bname, sizeof bname);
  double mu_cuda = median_of(u[1], runs);
  printf("mosp from %lld to %lld: %.0f vertices on the path (median), %lld edges\n", s, t, median_of(len, runs),
         n_edges);
  if (cpu) {
    snprintf(name, sizeof name, "mosp_update_cpu_%s", bname);
    report_add(r, name, "ms", 1e3, u[0], runs, NULL);
  }
  snprintf(name, sizeof name, "mosp_update_cuda_%s", bname);
  if (cpu) snprintf(note, sizeof note, "cpu / cuda = %.2fx; goal 15 ms; the same paths", median_of(u[0], runs) / mu_cuda);
  else snprintf(note, sizeof note, "goal 15 ms");
  report_add(r, name, "ms", 1e3, u[1], runs, note);
  if (cpu) {
    snprintf(name, sizeof name, "mosp_path_cpu_%s", bname);
    report_add(r, name, "ms", 1e3, p[0], runs, "the dyng_mosp query");
  }
  snprintf(name, sizeof name, "mosp_path_cuda_%s", bname);
  report_add(r, name, "ms", 1e3, p[1], runs, "the dyng_mosp query");
  snprintf(name, sizeof name, "mosp_trees_path_cuda_%s", bname);
  snprintf(note, sizeof note, "three tree updates (from dyng_update's report) and the path; goal 15 ms");
  report_add(r, name, "ms", 1e3, tp, runs, note);
  snprintf(name, sizeof name, "mosp_recompute_cuda_%s", bname);
  snprintf(note, sizeof note, "three trees from scratch and the path; / (trees and path) = %.2fx",
           median_of(rc, runs) / median_of(tp, runs));
  report_add(r, name, "ms", 1e3, rc, runs, note);
  if (cpu) report_ratio(r, "mosp_update_cpu_over_cuda", median_of(u[0], runs) / mu_cuda);
  report_ratio(r, "mosp_update_cuda_ms", 1e3 * mu_cuda);
  report_ratio(r, "mosp_trees_path_cuda_ms", 1e3 * median_of(tp, runs));
  report_ratio(r, "mosp_recompute_over_trees_path", median_of(rc, runs) / median_of(tp, runs));
  for (int c = 0; c < 2; c++) free(u[c]), free(p[c]);
  free(rc), free(len), free(tp);
}

int main(int argc, char **argv) {
  const char *db_path = NULL, *ext = ".libs/dyng.so";
  int runs = 5, cpu = 1;
  long batch = 50000;
  int reopen = 0, mosp = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mosp")) mosp = 1;
    else if (!strcmp(argv[i], "--inserts") && i + 1 < argc) {
      const char *m = argv[++i];
      if (strcmp(m, "random") && strcmp(m, "reopen")) die("--inserts takes random or reopen");
      reopen = !strcmp(m, "reopen");
    }
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atol(argv[++i]);
    else if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else if (!strcmp(argv[i], "--no-cpu")) cpu = 0;
    else if (argv[i][0] != '-' && !db_path) db_path = argv[i];
    else die("usage: bench_gpu DB.db [--runs N] [--batch K] [--inserts random|reopen] [--extension PATH] [--no-cpu] [--mosp]");
  }
  if (!db_path || runs < 1 || batch < 2) die("usage: bench_gpu DB.db [--runs N] [--batch K] [--inserts random|reopen] [--extension PATH] [--no-cpu] [--mosp]");
  const char *scratch = scratch_name();
  copy_file(db_path, scratch);
  sqlite3 *db = open_with_extension(scratch, ext);
  if (!cuda_backend_or_say_why(db, "bench_gpu")) return 77;
  sql_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  report r;
  report_init(&r, strrchr(db_path, '/') ? strrchr(db_path, '/') + 1 : db_path);
  const char *gcpu = cpu ? "gc" : "gg"; /* the graph the sources and targets come from */

  double t0 = now_s(), t_create_cpu = 0;
  if (cpu) {
    sql_exec(db, "CREATE VIRTUAL TABLE gc USING dyng(edges=edges, weights='length,minutes,toll', backend=cpu)");
    t_create_cpu = now_s() - t0;
  }
  t0 = now_s();
  sql_exec(db, "CREATE VIRTUAL TABLE gg USING dyng(edges=edges, weights='length,minutes,toll', backend=cuda)");
  double t_create_cuda = now_s() - t0;
  char *dev = sql_text(db, "SELECT json_extract(dyng_config(), '$.devices[0].name')");
  char *gg_be = sql_text(db, "SELECT json_extract(value, '$.backend') FROM json_each(dyng_config(), '$.graphs') "
                         "WHERE json_extract(value, '$.name') = 'gg'");
  long long n_edges = (long long)sql_number(db, "SELECT count(*) FROM edges");
  long long n_nodes = (long long)sql_number(db, "SELECT json_extract(dyng_config(), '$.graphs[0].vertices')");
  printf("# bench_gpu %s\n%lld edges, %lld vertices; graph gg on %s (%s)\n", db_path, n_edges, n_nodes,
         gg_be ? gg_be : "?", dev ? dev : "?");
  if (cpu) report_add(&r, "create_cpu", "ms", 1e3, &t_create_cpu, 1, NULL);
  report_add(&r, "create_cuda", "ms", 1e3, &t_create_cuda, 1, NULL);
  if (mosp) {
    sqlite3 *db2 = open_with_extension(scratch, ext);
    run_mosp(db, db2, &r, runs, batch, cpu);
    printf("\n| %s | median | min | max | n | ratio |\n| --- | ---: | ---: | ---: | ---: | --- |\n", r.db);
    report_print_rows(&r);
    printf("\n");
    report_print_lines(&r);
    free(dev), free(gg_be);
    sqlite3_close(db2);
    sqlite3_close(db);
    return 0;
  }

  /* From scratch: no kept trees. */
  sql_exec(db, "SELECT dyng_config('cache_mb', 0)");
  double *x_cpu = xmalloc(sizeof(double) * (size_t)runs), *x_cuda = xmalloc(sizeof(double) * (size_t)runs);
  long long src = (long long)sql_number(db, "SELECT src FROM edges ORDER BY rowid LIMIT 1 OFFSET (SELECT count(*) / 2 FROM edges)");
  for (int i = 0; i < runs; i++) {
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT src FROM edges LIMIT 1 OFFSET %lld", (long long)((i * 7919LL) % n_edges));
    long long s = (long long)sql_number(db, sql);
    if (cpu) {
      tree_sum a, b;
      char what[64];
      tree_summary(db, "gc", s, "length", &a);
      tree_summary(db, "gg", s, "length", &b);
      snprintf(what, sizeof what, "source %lld", s);
      same_tree(&a, &b, what);
    }
    snprintf(sql, sizeof sql, "SELECT node FROM dyng_sssp('%s', %lld, 'length') ORDER BY dist DESC LIMIT 1", gcpu, s);
    long long t = (long long)sql_number(db, sql);
    double d1 = 0, d2 = 0;
    for (int order = 0; order < 2; order++) {
      int cuda_first = (i & 1) ^ order;
      if (!cpu && !cuda_first) continue;
      snprintf(sql, sizeof sql, "SELECT dist FROM dyng_sssp('%s', %lld, 'length') WHERE node = %lld",
               cuda_first ? "gg" : "gc", s, t);
      t0 = now_s();
      *(cuda_first ? &d2 : &d1) = sql_number(db, sql);
      (cuda_first ? x_cuda : x_cpu)[i] = now_s() - t0;
    }
    if (cpu && d1 != d2) die("source %lld, node %lld: CPU %.17g, CUDA %.17g", s, t, d1, d2);
  }
  char ratio[160];
  if (cpu) {
    report_add(&r, "sssp_cpu", "ms", 1e3, x_cpu, runs, NULL);
    snprintf(ratio, sizeof ratio, "cpu / cuda = %.2fx", median_of(x_cpu, runs) / median_of(x_cuda, runs));
  }
  report_add(&r, "sssp_cuda", "ms", 1e3, x_cuda, runs, cpu ? ratio : NULL);
  if (cpu) report_ratio(&r, "sssp_cpu_over_cuda", median_of(x_cpu, runs) / median_of(x_cuda, runs));

  /* The second connection, for the recomputes: its own mirror of gg, no
  ** kept trees. */
  sqlite3 *db2 = open_with_extension(scratch, ext);
  sql_exec(db2, "SELECT dyng_config('cache_mb', 0)");
  free(sql_text(db2, "SELECT dyng_update('gg')"));

  /* Kept trees, one per objective, then batches. */
  sql_exec(db, "SELECT dyng_config('cache_mb', 65536)");
  static const char *objs[3] = {"length", "minutes", "toll"};
  for (int k = 0; k < 3; k++) {
    tree_sum a, b;
    tree_summary(db, "gg", src, objs[k], &b);
    if (cpu) {
      tree_summary(db, "gc", src, objs[k], &a);
      same_tree(&a, &b, objs[k]);
    }
  }
  double *u_cpu = xmalloc(sizeof(double) * (size_t)runs), *u_cuda = xmalloc(sizeof(double) * (size_t)runs);
  double *tr_cpu = xmalloc(sizeof(double) * (size_t)runs), *tr_cuda = xmalloc(sizeof(double) * (size_t)runs);
  double *rl = xmalloc(sizeof(double) * (size_t)runs), *rla = xmalloc(sizeof(double) * (size_t)runs);
  double *ap_cuda = xmalloc(sizeof(double) * (size_t)runs), *be_cuda = xmalloc(sizeof(double) * (size_t)runs);
  double *rd_cuda = xmalloc(sizeof(double) * (size_t)runs), *kp_cuda = xmalloc(sizeof(double) * (size_t)runs);
  double *ot_cuda = xmalloc(sizeof(double) * (size_t)runs);
  double *rc_mean = xmalloc(sizeof(double) * (size_t)runs);
  double *t_obj[3], *rc_obj[3], *touched_obj[3];
  int recomputed[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    t_obj[k] = xmalloc(sizeof(double) * (size_t)runs);
    rc_obj[k] = xmalloc(sizeof(double) * (size_t)runs);
    touched_obj[k] = xmalloc(sizeof(double) * (size_t)runs);
  }
  uint64_t rng = 42;
  sqlite3_stmt *ins = prepare(db, "INSERT INTO edges(src, dst, length, minutes, toll) "
                                  "SELECT a.src, b.dst, a.length, a.minutes, a.toll FROM "
                                  "(SELECT * FROM edges WHERE rowid = ?1) a, (SELECT * FROM edges WHERE rowid = ?2) b");
  sqlite3_stmt *del = prepare(db, "DELETE FROM edges WHERE rowid = ?1 RETURNING src, dst, length, minutes, toll");
  sqlite3_stmt *put = prepare(db, "INSERT INTO edges(src, dst, length, minutes, toll) VALUES (?1, ?2, ?3, ?4, ?5)");
  long long max_rowid = (long long)sql_number(db, "SELECT max(rowid) FROM edges");
  /* --inserts reopen: the rows a batch deleted (closed[1]) are the ones the
  ** next batch inserts again (closed[0]). */
  closed_edge *closed[2] = {xmalloc(sizeof(closed_edge) * (size_t)(batch / 2 + 1)),
                            xmalloc(sizeof(closed_edge) * (size_t)(batch / 2 + 1))};
  long n_closed[2] = {0, 0};
  if (reopen) {
    sql_exec(db, "BEGIN");
    for (long j = 0; j < batch / 2; j++)
      delete_row(del, 1 + (long long)(splitmix64(&rng) % (uint64_t)max_rowid), closed[0], &n_closed[0]);
    sql_exec(db, "COMMIT");
    free(sql_text(db, "SELECT dyng_update('gg')"));
    if (cpu) free(sql_text(db, "SELECT dyng_update('gc')"));
  }
  for (int i = 0; i < runs; i++) {
    double pos_c = sql_number(db, "SELECT json_extract(value, '$.log_position') FROM json_each(dyng_config(), '$.graphs') "
                              "WHERE json_extract(value, '$.name') = 'gg'");
    sql_exec(db, "BEGIN");
    n_closed[1] = 0;
    for (long j = 0; j < batch; j++) {
      long long a = 1 + (long long)(splitmix64(&rng) % (uint64_t)max_rowid);
      if (j & 1) {
        delete_row(del, a, closed[1], &n_closed[1]);
      } else if (reopen) {
        if (j / 2 < n_closed[0]) {
          const closed_edge *c = &closed[0][j / 2];
          sqlite3_bind_int64(put, 1, c->src);
          sqlite3_bind_int64(put, 2, c->dst);
          for (int k = 0; k < 3; k++) sqlite3_bind_double(put, 3 + k, c->w[k]);
          if (sqlite3_step(put) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
          sqlite3_reset(put);
        }
      } else {
        long long b = 1 + (long long)(splitmix64(&rng) % (uint64_t)max_rowid);
        sqlite3_bind_int64(ins, 1, a);
        sqlite3_bind_int64(ins, 2, b);
        sqlite3_step(ins);
        sqlite3_reset(ins);
      }
    }
    sql_exec(db, "COMMIT");
    closed_edge *swap = closed[0];
    closed[0] = closed[1], closed[1] = swap;
    n_closed[0] = n_closed[1];
    char sql[300];
    for (int order = 0; order < 2; order++) {
      int all = (i & 1) ^ order;
      if (all)
        snprintf(sql, sizeof sql,
                 "SELECT count(*), sum(seq), sum(op), sum(edge), sum(src), sum(dst), sum(w0), sum(w1), sum(w2) "
                 "FROM gg_log WHERE seq > %.0f",
                 pos_c);
      else
        snprintf(sql, sizeof sql, "SELECT count(*), sum(src), sum(dst) FROM gg_log WHERE seq > %.0f", pos_c);
      t0 = now_s();
      free(sql_text(db, sql));
      (all ? rla : rl)[i] = now_s() - t0;
    }
    for (int order = 0; order < 2; order++) {
      int cuda_first = (i & 1) ^ order;
      if (!cpu && !cuda_first) continue;
      const char *g = cuda_first ? "gg" : "gc";
      snprintf(sql, sizeof sql, "SELECT dyng_update('%s')", g);
      t0 = now_s();
      char *report = sql_text(db, sql);
      (cuda_first ? u_cuda : u_cpu)[i] = now_s() - t0;
      if (cuda_first) {
        ap_cuda[i] = json_path_number(db, report, "$.apply_ms") / 1e3;
        be_cuda[i] = json_path_number(db, report, "$.backend_ms") / 1e3;
        rd_cuda[i] = json_path_number(db, report, "$.read_ms") / 1e3;
        kp_cuda[i] = json_path_number(db, report, "$.kept_ms") / 1e3;
        ot_cuda[i] = u_cuda[i] - rd_cuda[i] - ap_cuda[i] - be_cuda[i] - kp_cuda[i];
        double sum = 0;
        for (int k = 0; k < 3; k++) {
          /* The report's trees, by objective. */
          sqlite3_stmt *st = prepare(db, "SELECT json_extract(value, '$.ms'), json_extract(value, '$.touched'), "
                                         "json_extract(value, '$.mode') FROM json_each(?1, '$.trees') "
                                         "WHERE json_extract(value, '$.objective') = ?2");
          sqlite3_bind_text(st, 1, report, -1, SQLITE_STATIC);
          sqlite3_bind_text(st, 2, objs[k], -1, SQLITE_STATIC);
          if (sqlite3_step(st) != SQLITE_ROW) die("dyng_update's report has no tree of %s: %s", objs[k], report);
          t_obj[k][i] = sqlite3_column_double(st, 0) / 1e3;
          touched_obj[k][i] = sqlite3_column_double(st, 1);
          if (strcmp((const char *)sqlite3_column_text(st, 2), "update") != 0) recomputed[k]++;
          sum += t_obj[k][i];
          sqlite3_finalize(st);
        }
        tr_cuda[i] = sum;
      } else {
        snprintf(sql, sizeof sql,
                 "SELECT sum(json_extract(t.value, '$.last_update_ms')) FROM json_each(dyng_config(), '$.graphs') AS g, "
                 "json_each(json_extract(g.value, '$.trees')) AS t WHERE json_extract(g.value, '$.name') = 'gc'");
        tr_cpu[i] = sql_number(db, sql) / 1e3;
      }
      free(report);
    }
    if (cpu)
      for (int k = 0; k < 3; k++) {
        tree_sum a, b;
        char what[64];
        tree_summary(db, "gc", src, objs[k], &a);
        tree_summary(db, "gg", src, objs[k], &b);
        snprintf(what, sizeof what, "after batch %d, objective %s", i, objs[k]);
        same_tree(&a, &b, what);
      }
    /* The recomputes, on the second connection's copy of the same graph. */
    free(sql_text(db2, "SELECT dyng_update('gg')"));
    rc_mean[i] = 0;
    for (int k = 0; k < 3; k++) {
      snprintf(sql, sizeof sql, "SELECT dist FROM dyng_sssp('gg', %lld, '%s') WHERE node = %lld", src, objs[k], src);
      t0 = now_s();
      (void)sql_number(db2, sql);
      rc_obj[k][i] = now_s() - t0;
      rc_mean[i] += rc_obj[k][i] / 3;
    }
  }
  sqlite3_finalize(ins);
  sqlite3_finalize(del);
  sqlite3_finalize(put);
  free(closed[0]);
  free(closed[1]);
  char bname[40];
  size_name(batch, bname, sizeof bname);
  if (reopen) strcat(bname, "_reopen");
  char name[64];
  snprintf(name, sizeof name, "read_log_%s", bname);
  report_add(&r, name, "ms", 1e3, rl, runs, NULL);
  snprintf(name, sizeof name, "read_log_all_%s", bname);
  report_add(&r, name, "ms", 1e3, rla, runs, "every column an update needs");
  if (cpu) {
    snprintf(name, sizeof name, "update_cpu_%s", bname);
    report_add(&r, name, "ms", 1e3, u_cpu, runs, NULL);
  }
  snprintf(name, sizeof name, "update_cuda_%s", bname);
  snprintf(ratio, sizeof ratio, "cuda / read_log_all = %.2fx; / read_log = %.2fx",
           median_of(u_cuda, runs) / median_of(rla, runs), median_of(u_cuda, runs) / median_of(rl, runs));
  report_add(&r, name, "ms", 1e3, u_cuda, runs, ratio);
  snprintf(name, sizeof name, "read_cuda_%s", bname);
  report_add(&r, name, "ms", 1e3, rd_cuda, runs, "the log rows into a batch");
  snprintf(name, sizeof name, "apply_cuda_%s", bname);
  report_add(&r, name, "ms", 1e3, ap_cuda, runs, "the host graph");
  snprintf(name, sizeof name, "follow_cuda_%s", bname);
  report_add(&r, name, "ms", 1e3, be_cuda, runs, "the device graph");
  snprintf(name, sizeof name, "kept_cuda_%s", bname);
  report_add(&r, name, "ms", 1e3, kp_cuda, runs, "the kept trees, all of it");
  snprintf(name, sizeof name, "other_cuda_%s", bname);
  report_add(&r, name, "ms", 1e3, ot_cuda, runs, "the rest of dyng_update, as the caller sees it");
  if (cpu) {
    snprintf(name, sizeof name, "trees_cpu_%s", bname);
    report_add(&r, name, "ms", 1e3, tr_cpu, runs, NULL);
  }
  snprintf(name, sizeof name, "trees_cuda_%s", bname);
  snprintf(ratio, sizeof ratio, "per objective %.2f ms", 1e3 * median_of(tr_cuda, runs) / 3);
  report_add(&r, name, "ms", 1e3, tr_cuda, runs, ratio);
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof name, "tree_cuda_%s_%s", objs[k], bname);
    snprintf(ratio, sizeof ratio, "%.0f vertices changed; recompute %.2f ms = %.2fx%s", median_of(touched_obj[k], runs),
             1e3 * median_of(rc_obj[k], runs), median_of(rc_obj[k], runs) / median_of(t_obj[k], runs),
             recomputed[k] ? "; some recomputed" : "");
    report_add(&r, name, "ms", 1e3, t_obj[k], runs, ratio);
  }
  snprintf(name, sizeof name, "recompute_cuda_%s", bname);
  snprintf(ratio, sizeof ratio, "mean of the objectives; / tree update = %.2fx",
           median_of(rc_mean, runs) / (median_of(tr_cuda, runs) / 3));
  report_add(&r, name, "ms", 1e3, rc_mean, runs, ratio);
  report_ratio(&r, "update_cuda_over_read_log", median_of(u_cuda, runs) / median_of(rl, runs));
  report_ratio(&r, "update_cuda_over_read_log_all", median_of(u_cuda, runs) / median_of(rla, runs));
  report_ratio(&r, "trees_cuda_ms_per_objective", 1e3 * median_of(tr_cuda, runs) / 3);
  report_ratio(&r, "recompute_over_tree_update", median_of(rc_mean, runs) / (median_of(tr_cuda, runs) / 3));

  printf("\n| %s | median | min | max | n | ratio |\n| --- | ---: | ---: | ---: | ---: | --- |\n", r.db);
  report_print_rows(&r);
  printf("\n");
  report_print_lines(&r);
  free(x_cpu), free(x_cuda), free(u_cpu), free(u_cuda), free(tr_cpu), free(tr_cuda), free(rl), free(rla);
  free(ap_cuda), free(be_cuda), free(rd_cuda), free(kp_cuda), free(ot_cuda), free(rc_mean);
  for (int k = 0; k < 3; k++) free(t_obj[k]), free(rc_obj[k]), free(touched_obj[k]);
  free(dev), free(gg_be);
  sqlite3_close(db2);
  sqlite3_close(db);
  return 0;
}
