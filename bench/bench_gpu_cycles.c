/*
** bench/bench_gpu_cycles.c: cycle counts on the CUDA backend against the CPU
** backend, through SQL.
**
**   bench_gpu_cycles SOURCE [--runs N] [--batch K] [--counts 3,4,d3]
**                    [--extension PATH]
**
** SOURCE is a database with a table edges(src, dst, ...) (bench/gen_graph
** writes one) or an edge file dyng_read_edges reads (a SNAP .txt, say),
** which is first read into a table edges(src, dst).  On a scratch copy the
** program creates graphs over the table with backend=cpu and backend=cuda,
** undirected for the counts "3", "4", ... and directed for "d3", "d4", ...
** (directed cycles), and measures, N times over (default 5; medians):
**
**   count_cpu / count_cuda    dyng_cycle_count(g, k[, 'directed']) from
**                             scratch: the graph is created anew (its load
**                             untimed) and counted once; the two counts must
**                             be equal
**   update_cpu / update_cuda  after a batch of K changes (default 50,000: K/2
**                             deletes of random rows and K/2 inserts of new
**                             edges between the endpoints of two random
**                             rows) in one transaction and dyng_update(g),
**                             the time the kept count took to follow it
**                             (last_update_ms of dyng_update's report), and
**                             whether it was updated or counted again (a
**                             kept count is counted again when its update
**                             runs longer than counting did); the counts of
**                             both graphs must again be equal
**
** Each run's batch is undone (the deleted rows put back, the inserted ones
** deleted) before the next one, untimed, so that every run starts from the
** same graph.  The ratios: count_cpu / count_cuda (goal: 20x) and, per
** backend, update / count (goal: below 1/10).  Without a usable GPU the
** program says why and exits with status 77.
*/
#include "bench/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char bench_program[] = "bench_gpu_cycles";

#define MAX_COUNTS 8

/* One count: k-cycles, of the undirected view or directed ones. */
typedef struct count_case {
  int k, directed;
  char name[8];
} count_case;

static int parse_counts(const char *list, count_case *out) {
  int n = 0;
  for (const char *p = list; *p && n < MAX_COUNTS;) {
    int directed = *p == 'd';
    if (directed) p++;
    char *end = NULL;
    long k = strtol(p, &end, 10);
    if (end == p || k < 3 || k > 10) die("--counts: each count is k or dk with k from 3 to 10");
    out[n].k = (int)k;
    out[n].directed = directed;
    snprintf(out[n].name, sizeof out[n].name, "%s%ld", directed ? "d" : "", k);
    n++;
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* Creates graph `name` over edges on `backend`, directed or not. */
static void create_graph(sqlite3 *db, const char *name, const char *backend, int directed) {
  char sql[256];
  snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", name);
  sql_exec(db, sql);
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE %s USING dyng(edges=edges, directed=%d, backend=%s)", name,
           directed, backend);
  sql_exec(db, sql);
}

static long long count_of(sqlite3 *db, const char *g, const count_case *c, double *seconds) {
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT dyng_cycle_count('%s', %d%s)", g, c->k, c->directed ? ", 'directed'" : "");
  double t0 = now_s();
  double x = sql_number(db, sql);
  if (seconds) *seconds = now_s() - t0;
  return (long long)x;
}

/* The batch of one run: deleted rows to put back, inserted rowids to drop. */
typedef struct batch_log {
  long long *del_rowid, *del_src, *del_dst, *ins_rowid;
  long n_del, n_ins;
} batch_log;

/* Deletes n_del random rows and inserts n_ins edges between the endpoints
** of random rows, in one transaction, recording what it did in *bl. */
static void make_batch(sqlite3 *db, long long max_rowid, long n_del, long n_ins, uint64_t *rng, batch_log *bl) {
  sqlite3_stmt *get = prepare(db, "SELECT src, dst FROM edges WHERE rowid = ?1");
  sqlite3_stmt *del = prepare(db, "DELETE FROM edges WHERE rowid = ?1");
  sqlite3_stmt *ins = prepare(db, "INSERT INTO edges(src, dst) VALUES (?1, ?2)");
  sql_exec(db, "BEGIN");
  bl->n_del = bl->n_ins = 0;
  for (long tries = 0; bl->n_del < n_del && tries < 20 * n_del; tries++) {
    long long r = 1 + (long long)(splitmix64(rng) % (uint64_t)max_rowid);
    sqlite3_bind_int64(get, 1, r);
    if (sqlite3_step(get) == SQLITE_ROW) {
      bl->del_rowid[bl->n_del] = r;
      bl->del_src[bl->n_del] = sqlite3_column_int64(get, 0);
      bl->del_dst[bl->n_del] = sqlite3_column_int64(get, 1);
      sqlite3_bind_int64(del, 1, r);
      if (sqlite3_step(del) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
      sqlite3_reset(del);
      bl->n_del++;
    }
    sqlite3_reset(get);
  }
  while (bl->n_ins < n_ins) {
    long long a = bl->del_src[splitmix64(rng) % (uint64_t)(bl->n_del ? bl->n_del : 1)];
    long long b = bl->del_dst[splitmix64(rng) % (uint64_t)(bl->n_del ? bl->n_del : 1)];
    /* Mostly endpoints of live rows: a random live row's source and
    ** another's destination. */
    long long r1 = 1 + (long long)(splitmix64(rng) % (uint64_t)max_rowid);
    long long r2 = 1 + (long long)(splitmix64(rng) % (uint64_t)max_rowid);
    sqlite3_bind_int64(get, 1, r1);
    if (sqlite3_step(get) == SQLITE_ROW) a = sqlite3_column_int64(get, 0);
    sqlite3_reset(get);
    sqlite3_bind_int64(get, 1, r2);
    if (sqlite3_step(get) == SQLITE_ROW) b = sqlite3_column_int64(get, 1);
    sqlite3_reset(get);
    sqlite3_bind_int64(ins, 1, a);
    sqlite3_bind_int64(ins, 2, b);
    if (sqlite3_step(ins) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
    sqlite3_reset(ins);
    bl->ins_rowid[bl->n_ins++] = sqlite3_last_insert_rowid(db);
  }
  sql_exec(db, "COMMIT");
  sqlite3_finalize(get);
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
}

/* Undoes *bl: the inserted rows go, the deleted ones come back. */
static void undo_batch(sqlite3 *db, const batch_log *bl) {
  sqlite3_stmt *del = prepare(db, "DELETE FROM edges WHERE rowid = ?1");
  sqlite3_stmt *put = prepare(db, "INSERT INTO edges(rowid, src, dst) VALUES (?1, ?2, ?3)");
  sql_exec(db, "BEGIN");
  for (long i = 0; i < bl->n_ins; i++) {
    sqlite3_bind_int64(del, 1, bl->ins_rowid[i]);
    if (sqlite3_step(del) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
    sqlite3_reset(del);
  }
  for (long i = 0; i < bl->n_del; i++) {
    sqlite3_bind_int64(put, 1, bl->del_rowid[i]);
    sqlite3_bind_int64(put, 2, bl->del_src[i]);
    sqlite3_bind_int64(put, 3, bl->del_dst[i]);
    if (sqlite3_step(put) != SQLITE_DONE) die("%s", sqlite3_errmsg(db));
    sqlite3_reset(put);
  }
  sql_exec(db, "COMMIT");
  sqlite3_finalize(del);
  sqlite3_finalize(put);
}

/* dyng_update(g): the kept count c's last_update_ms in seconds and whether
** it was counted again (*recount). */
static double follow(sqlite3 *db, const char *g, const count_case *c, int *recount) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT dyng_update('%s')", g);
  char *rep = sql_text(db, sql);
  if (!rep) die("dyng_update('%s') returned nothing", g);
  char path[160];
  /* The report lists the counts the batch changed; find c's entry. */
  double ms = NAN;
  *recount = 0;
  for (int i = 0; i < 2 * MAX_COUNTS; i++) {
    snprintf(path, sizeof path, "$.cycle_counts[%d].k", i);
    double k = json_path_number(db, rep, path);
    if (isnan(k)) break;
    snprintf(path, sizeof path, "$.cycle_counts[%d].directed", i);
    if ((int)k != c->k || (int)json_path_number(db, rep, path) != c->directed) continue;
    snprintf(path, sizeof path, "$.cycle_counts[%d].last_update_ms", i);
    ms = json_path_number(db, rep, path);
    snprintf(path, sizeof path, "$.cycle_counts[%d].mode", i);
    char *mode = json_path_text(db, rep, path);
    *recount = mode && !strcmp(mode, "recount");
    free(mode);
  }
  if (isnan(ms)) die("dyng_update('%s') did not report the %s-cycle count: %s", g, c->name, rep);
  free(rep);
  return ms / 1e3;
}

static void usage(void) {
  die("usage: bench_gpu_cycles DB.db|EDGEFILE [--runs N] [--batch K] [--counts 3,4,d3] [--extension PATH]");
}

int main(int argc, char **argv) {
  const char *src = NULL, *ext = ".libs/dyng.so", *counts = "3,4";
  int runs = 5;
  long batch = 50000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atol(argv[++i]);
    else if (!strcmp(argv[i], "--counts") && i + 1 < argc) counts = argv[++i];
    else if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else if (argv[i][0] != '-' && !src) src = argv[i];
    else usage();
  }
  if (!src || runs < 1 || batch < 2) usage();
  setvbuf(stdout, NULL, _IOLBF, 0);
  count_case cc[MAX_COUNTS];
  int n_cc = parse_counts(counts, cc);
  if (n_cc == 0) usage();

  const char *scratch = scratch_name();
  size_t len = strlen(src);
  int is_db = len > 3 && !strcmp(src + len - 3, ".db");
  if (is_db) copy_file(src, scratch);
  sqlite3 *db = open_with_extension(scratch, ext);
  if (!cuda_backend_or_say_why(db, "bench_gpu_cycles")) return 77;
  sql_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  if (!is_db) {
    sql_exec(db, "CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL)");
    sqlite3_stmt *st = prepare(db, "INSERT INTO edges(src, dst) SELECT src, dst FROM dyng_read_edges(?1)");
    sqlite3_bind_text(st, 1, src, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) die("reading %s: %s", src, sqlite3_errmsg(db));
    sqlite3_finalize(st);
  }
  long long n_edges = (long long)sql_number(db, "SELECT count(*) FROM edges");
  long long max_rowid = (long long)sql_number(db, "SELECT max(rowid) FROM edges");
  char *dev = sql_text(db, "SELECT json_extract(dyng_config(), '$.devices[0].name')");
  const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
  printf("# bench_gpu_cycles %s\n%lld edges; counts %s; batch %ld; %d runs; device %s\n", src, n_edges, counts,
         batch, runs, dev ? dev : "?");
  free(dev);

  report r;
  report_init(&r, base);
  double *t_cpu = xmalloc(sizeof(double) * (size_t)runs), *t_gpu = xmalloc(sizeof(double) * (size_t)runs);
  double *u_cpu = xmalloc(sizeof(double) * (size_t)runs), *u_gpu = xmalloc(sizeof(double) * (size_t)runs);
  batch_log bl;
  bl.del_rowid = xmalloc(sizeof(long long) * (size_t)batch);
  bl.del_src = xmalloc(sizeof(long long) * (size_t)batch);
  bl.del_dst = xmalloc(sizeof(long long) * (size_t)batch);
  bl.ins_rowid = xmalloc(sizeof(long long) * (size_t)batch);
  uint64_t rng = 20261130;
  for (int ci = 0; ci < n_cc; ci++) {
    const count_case *c = &cc[ci];
    long long n_cpu = -1, n_gpu = -1;
    for (int i = 0; i < runs; i++) {
      create_graph(db, "gc", "cpu", c->directed);
      n_cpu = count_of(db, "gc", c, &t_cpu[i]);
      create_graph(db, "gg", "cuda", c->directed);
      n_gpu = count_of(db, "gg", c, &t_gpu[i]);
      if (n_cpu != n_gpu) die("%s-cycles: cpu counts %lld, cuda %lld", c->name, n_cpu, n_gpu);
    }
    char *runs_on = sql_text(db, "SELECT json_extract(value, '$.runs_on.cycle_counts') FROM "
                             "json_each(dyng_config(), '$.graphs') WHERE json_extract(value, '$.name') = 'gg'");
    printf("%s-cycles: %lld (cuda graph's counts run on %s)\n", c->name, n_cpu, runs_on ? runs_on : "?");
    free(runs_on);
    char name[64], ratio[64];
    snprintf(name, sizeof name, "count_cpu_%s", c->name);
    report_add(&r, name, "ms", 1e3, t_cpu, runs, NULL);
    double sp = median_of(t_cpu, runs) / median_of(t_gpu, runs);
    snprintf(ratio, sizeof ratio, "%.1fx faster (goal 20x)", sp);
    snprintf(name, sizeof name, "count_cuda_%s", c->name);
    report_add(&r, name, "ms", 1e3, t_gpu, runs, ratio);
    snprintf(name, sizeof name, "count_speedup_%s", c->name);
    report_ratio(&r, name, sp);

    /* Kept counts on both graphs, then batches.  Both graphs are created
    ** first: a CREATE changes the schema, which makes the other graph load
    ** again and drop what it kept. */
    create_graph(db, "gc", "cpu", c->directed);
    create_graph(db, "gg", "cuda", c->directed);
    if (count_of(db, "gc", c, NULL) != n_cpu || count_of(db, "gg", c, NULL) != n_cpu)
      die("%s-cycles: a second count differs", c->name);
    int rc_cpu = 0, rc_gpu = 0;
    for (int i = 0; i < runs; i++) {
      make_batch(db, max_rowid, batch / 2, batch - batch / 2, &rng, &bl);
      int re_cpu, re_gpu;
      u_cpu[i] = follow(db, "gc", c, &re_cpu);
      u_gpu[i] = follow(db, "gg", c, &re_gpu);
      rc_cpu += re_cpu;
      rc_gpu += re_gpu;
      long long a = count_of(db, "gc", c, NULL), b = count_of(db, "gg", c, NULL);
      if (a != b) die("%s-cycles after a batch: cpu %lld, cuda %lld", c->name, a, b);
      printf("%s run %d: %lld -> %lld cycles; update cpu %.2f ms%s, cuda %.2f ms%s\n", c->name, i, n_cpu, a,
             u_cpu[i] * 1e3, re_cpu ? " (counted again)" : "", u_gpu[i] * 1e3, re_gpu ? " (counted again)" : "");
      undo_batch(db, &bl);
      free(sql_text(db, "SELECT dyng_update('gc')"));
      free(sql_text(db, "SELECT dyng_update('gg')"));
    }
    snprintf(name, sizeof name, "update_cpu_%s", c->name);
    snprintf(ratio, sizeof ratio, "%.3f of a count%s", median_of(u_cpu, runs) / median_of(t_cpu, runs),
             rc_cpu ? " (counted again)" : "");
    report_add(&r, name, "ms", 1e3, u_cpu, runs, ratio);
    snprintf(name, sizeof name, "update_cuda_%s", c->name);
    snprintf(ratio, sizeof ratio, "%.3f of a count (goal < 0.1)%s", median_of(u_gpu, runs) / median_of(t_gpu, runs),
             rc_gpu ? " (counted again)" : "");
    report_add(&r, name, "ms", 1e3, u_gpu, runs, ratio);
    snprintf(name, sizeof name, "update_over_count_cuda_%s", c->name);
    report_ratio(&r, name, median_of(u_gpu, runs) / median_of(t_gpu, runs));
  }
  printf("\n| %s | median | min | max | |\n|---|---:|---:|---:|---|\n", base);
  report_print_rows(&r);
  printf("\n");
  report_print_lines(&r);
  free(t_cpu), free(t_gpu), free(u_cpu), free(u_gpu);
  free(bl.del_rowid), free(bl.del_src), free(bl.del_dst), free(bl.ins_rowid);
  sqlite3_close(db);
  return 0;
}
