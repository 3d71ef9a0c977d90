/*
** bench/bench_util.c: the helpers that the benchmark drivers share; see
** bench_util.h for what each one does.
**
** How it works: plain C, the SQLite API and the engine's graph API, no
** state but the scratch file's name.  Messages carry bench_program, which
** each driver defines.
*/
#include "bench/bench_util.h"
#include "engine/error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", bench_program);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory (%zu bytes)", n);
  return p;
}

/* ---- statistics ------------------------------------------------------- */

/* qsort's comparison for doubles, ascending. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

stats stats_of(const double *x, int n) {
  stats s = {NAN, NAN, NAN, n};
  if (n <= 0) return s;
  double *c = xmalloc((size_t)n * sizeof *c);
  memcpy(c, x, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  s.median = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  s.min = c[0];
  s.max = c[n - 1];
  free(c);
  return s;
}

double median_of(const double *x, int n) { return stats_of(x, n).median; }

/* ---- SQLite and files ------------------------------------------------- */

sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    die("%s: %s", sql, sqlite3_errmsg(db));
  return st;
}

int query_double(sqlite3 *db, const char *sql, double *x) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return 0;
  }
  int ok = sqlite3_step(st) == SQLITE_ROW;
  if (ok) *x = sqlite3_column_type(st, 0) == SQLITE_NULL ? INFINITY : sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  return ok;
}

int load_extension(sqlite3 *db, const char *path, char **why) {
  *why = NULL;
  if (sqlite3_enable_load_extension(db, 1) != SQLITE_OK) {
    *why = sqlite3_mprintf("sqlite3_enable_load_extension failed: %s", sqlite3_errmsg(db));
    return 0;
  }
  if (sqlite3_load_extension(db, path, NULL, why) != SQLITE_OK) {
    if (!*why) *why = sqlite3_mprintf("unknown error");
    return 0;
  }
  /* Measured work runs as long as it takes: no max_ms (a Pareto front or a
  ** cycle count stops after 10 s while it is not set). */
  sqlite3_exec(db, "SELECT dyng_config('max_ms', 0)", NULL, NULL, NULL);
  return 1;
}

sqlite3 *open_with_extension(const char *path, const char *ext) {
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) die("cannot open %s", path);
  char *why = NULL;
  if (!load_extension(db, ext, &why)) die("cannot load %s: %s", ext, why);
  return db;
}

int cuda_backend_or_say_why(sqlite3 *db, const char *prog) {
  char *be = sql_text(db, "SELECT json_extract(dyng_config(), '$.backend.name')");
  int cuda = be && strncmp(be, "cuda", 4) == 0;
  free(be);
  if (cuda) return 1;
  char *reason = sql_text(db, "SELECT json_extract(dyng_config(), '$.backend.reason')");
  printf("%s: no usable GPU backend: %s\n", prog, reason ? reason : "?");
  free(reason);
  return 0;
}

void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) die("%s: %s", from, strerror(errno));
  FILE *out = fopen(to, "wb");
  if (!out) die("%s: %s", to, strerror(errno));
  size_t cap = 1 << 20, got;
  char *buf = xmalloc(cap);
  while ((got = fread(buf, 1, cap, in)) > 0)
    if (fwrite(buf, 1, got, out) != got) die("%s: %s", to, strerror(errno));
  if (ferror(in)) die("%s: read error", from);
  if (fclose(out) != 0) die("%s: %s", to, strerror(errno));
  fclose(in);
  free(buf);
}

static char scratch_path[4096]; /* "" until scratch_name() */

/* atexit handler: removes the scratch database and its side files. */
static void remove_scratch(void) {
  if (!scratch_path[0]) return;
  const char *suffix[] = {"", "-journal", "-wal", "-shm"};
  for (int i = 0; i < 4; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s%s", scratch_path, suffix[i]);
    unlink(p);
  }
}

const char *scratch_name(void) {
  if (scratch_path[0]) return scratch_path;
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch_path, sizeof scratch_path, "%s/%s-%ld.db", tmp && *tmp ? tmp : "/tmp",
           bench_program, (long)getpid());
  atexit(remove_scratch);
  return scratch_path;
}

/* ---- reporting -------------------------------------------------------- */

void report_init(report *r, const char *db) {
  memset(r, 0, sizeof *r);
  r->db = db;
}

void report_add(report *r, const char *name, const char *unit, double scale,
                const double *x, int n, const char *ratio_text) {
  if (r->n == REPORT_MAX) return;
  stats s = stats_of(x, n);
  snprintf(r->md[r->n], sizeof r->md[r->n], "| %s (%s) | %.3f | %.3f | %.3f | %d | %s |",
           name, unit, s.median * scale, s.min * scale, s.max * scale, s.n,
           ratio_text ? ratio_text : "");
  snprintf(r->kv[r->n], sizeof r->kv[r->n],
           "BENCH db=%s metric=%s unit=%s median=%.6g min=%.6g max=%.6g n=%d", r->db,
           name, unit, s.median * scale, s.min * scale, s.max * scale, s.n);
  r->n++;
}

void report_ratio(report *r, const char *name, double value) {
  if (r->n == REPORT_MAX) return;
  r->md[r->n][0] = '\0';
  snprintf(r->kv[r->n], sizeof r->kv[r->n], "BENCH db=%s metric=%s ratio=%.4f", r->db,
           name, value);
  r->n++;
}

void report_print_rows(const report *r) {
  for (int i = 0; i < r->n; i++)
    if (r->md[i][0]) printf("%s\n", r->md[i]);
}

void report_print_lines(const report *r) {
  for (int i = 0; i < r->n; i++) printf("%s\n", r->kv[i]);
}

void size_name(long k, char *out, size_t n) {
  if (k >= 1000000 && k % 1000000 == 0) snprintf(out, n, "%ldm", k / 1000000);
  else if (k >= 1000 && k % 1000 == 0) snprintf(out, n, "%ldk", k / 1000);
  else snprintf(out, n, "%ld", k);
}

/* ---- engine graphs and batches ---------------------------------------- */

void pool_push(rowid_pool *p, int64_t rowid) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 1024;
    int64_t *r = realloc(p->rowid, p->cap * sizeof *r);
    if (!r) die("out of memory (rowid pool)");
    p->rowid = r;
  }
  p->rowid[p->n++] = rowid;
  if (rowid >= p->next_rowid) p->next_rowid = rowid + 1;
}

int64_t pool_take(rowid_pool *p, uint64_t *rng) {
  if (p->n == 0) die("no edge left to delete");
  size_t i = (size_t)(splitmix64(rng) % p->n);
  int64_t r = p->rowid[i];
  p->rowid[i] = p->rowid[--p->n];
  return r;
}

dyng_graph *load_edges(sqlite3 *db, long long n_rows, int n_weights, int directed,
                       rowid_pool *pool) {
  dyng_graph *g;
  int rc = dyng_graph_new(&g, n_weights, directed);
  if (rc) die("dyng_graph_new: %s", dyng_strerror(rc));
  if ((rc = dyng_graph_reserve(g, (size_t)n_rows)) != 0)
    die("dyng_graph_reserve: %s", dyng_strerror(rc));
  sqlite3_stmt *st = prepare(db, n_weights
                                     ? "SELECT rowid, src, dst, length, minutes, toll FROM edges"
                                     : "SELECT rowid, src, dst FROM edges");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    double w[DYNG_MAX_WEIGHTS];
    for (int k = 0; k < n_weights; k++) w[k] = sqlite3_column_double(st, 3 + k);
    int64_t rowid = sqlite3_column_int64(st, 0);
    int erc = dyng_graph_load_edge(g, rowid, sqlite3_column_int64(st, 1),
                                   sqlite3_column_int64(st, 2), n_weights ? w : NULL);
    if (erc) die("dyng_graph_load_edge(rowid %lld): %s", (long long)rowid, dyng_strerror(erc));
    if (pool) pool_push(pool, rowid);
  }
  if (rc != SQLITE_DONE) die("scan: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  if ((rc = dyng_graph_seal(g)) != 0) die("dyng_graph_seal: %s", dyng_strerror(rc));
  return g;
}

dyng_graph *load_graph(sqlite3 *db, int n_weights, int directed, rowid_pool *pool) {
  sqlite3_stmt *st = prepare(db, "SELECT count(*) FROM edges");
  if (sqlite3_step(st) != SQLITE_ROW) die("count(*): %s", sqlite3_errmsg(db));
  long long n_rows = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (n_rows <= 0) die("table edges is empty");
  dyng_graph *g = load_edges(db, n_rows, n_weights, directed, pool);
  int rc;
  if (directed && (rc = dyng_graph_build_in(g)) != 0)
    die("dyng_graph_build_in: %s", dyng_strerror(rc));
  return g;
}

uint32_t live_vertex(const dyng_graph *g, uint64_t *rng) {
  uint32_t bound = dyng_graph_vertex_bound(g);
  for (int tries = 0; tries < 1000000; tries++) {
    uint32_t v = (uint32_t)(splitmix64(rng) % bound);
    if (dyng_graph_out_degree(g, v) || dyng_graph_in_degree(g, v)) return v;
  }
  die("no live vertex found");
}

uint32_t nearby_vertex(const dyng_graph_view *view, uint32_t u, uint64_t *rng) {
  int hops = 2 + (int)(splitmix64(rng) & 1);
  uint32_t v = u;
  for (int h = 0; h < hops; h++) {
    uint32_t deg = view->out.deg[v];
    if (deg == 0) return DYNG_NONE;
    v = view->out.nbr[view->out.off[v] + (uint32_t)(splitmix64(rng) % deg)];
  }
  return v == u ? DYNG_NONE : v;
}

void draw_batch(const dyng_graph *g, rowid_pool *pool, dyng_batch *b, long n_del, long n_ins,
                int local, uint64_t *rng) {
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  int n_weights = dyng_graph_n_weights(g);
  dyng_batch_clear(b);
  for (long i = 0; i < n_del; i++) {
    int rc = dyng_batch_delete(b, pool_take(pool, rng));
    if (rc) die("dyng_batch_delete: %s", dyng_strerror(rc));
  }
  for (long i = 0; i < n_ins; i++) {
    uint32_t u, v;
    if (local) {
      do {
        u = live_vertex(g, rng);
        v = nearby_vertex(&view, u, rng);
      } while (v == DYNG_NONE);
    } else {
      u = live_vertex(g, rng);
      do v = live_vertex(g, rng);
      while (v == u);
    }
    double w[DYNG_MAX_WEIGHTS];
    if (n_weights) {
      /* The batch is not applied yet, so every rowid of the pool but the
      ** ones drawn for deletion above is live. */
      uint32_t slot;
      int64_t like;
      do like = pool->rowid[splitmix64(rng) % pool->n];
      while (dyng_graph_edge(g, like, &slot) != 0);
      for (int k = 0; k < n_weights; k++) w[k] = dyng_graph_edge_weight(g, slot, k);
    }
    int64_t rowid = pool->next_rowid;
    int rc = dyng_batch_insert(b, rowid, dyng_graph_node_id(g, u), dyng_graph_node_id(g, v),
                               n_weights ? w : NULL);
    if (rc) die("dyng_batch_insert: %s", dyng_strerror(rc));
    pool_push(pool, rowid);
  }
}

void restore_graph(dyng_graph *g, rowid_pool *pool, dyng_batch *b, const dyng_changes *changes) {
  dyng_batch_clear(b);
  int rc = 0;
  int n_weights = dyng_graph_n_weights(g);
  for (size_t i = 0; i < changes->n_added && !rc; i++)
    rc = dyng_batch_delete(b, changes->added[i].rowid);
  for (size_t i = 0; i < changes->n_removed && !rc; i++) {
    const dyng_edge_change *c = &changes->removed[i];
    rc = dyng_batch_insert(b, c->rowid, dyng_graph_node_id(g, c->src),
                           dyng_graph_node_id(g, c->dst), n_weights ? c->w : NULL);
  }
  if (rc) die("restoring the graph: %s", dyng_strerror(rc));
  pool->n -= changes->n_added;
  for (size_t i = 0; i < changes->n_removed; i++) pool_push(pool, changes->removed[i].rowid);
  dyng_apply_stats st;
  if ((rc = dyng_graph_apply(g, b, &st)) != 0) die("restoring the graph: %s", dyng_strerror(rc));
  if (st.inserted != changes->n_removed || st.deleted != changes->n_added || st.missing)
    die("restoring the graph: %zu inserts and %zu deletes (%zu missing) instead of %zu and %zu",
        st.inserted, st.deleted, st.missing, changes->n_removed, changes->n_added);
}

void sql_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) die("%s\n  in: %.200s", err, sql);
}

char *sql_text(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = prepare(db, sql);
  char *out = NULL;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_text(st, 0)) out = strdup((const char *)sqlite3_column_text(st, 0));
  else if (rc != SQLITE_ROW && rc != SQLITE_DONE) die("%s\n  in: %s", sqlite3_errmsg(db), sql);
  sqlite3_finalize(st);
  return out;
}

double time_query(sqlite3 *db, const char *sql, double *value) {
  double t0 = now_s();
  double x = 0;
  if (!query_double(db, sql, &x)) die("query gave no row: %s (%s)", sql, sqlite3_errmsg(db));
  double dt = now_s() - t0;
  if (value) *value = x;
  return dt;
}

double sql_number(sqlite3 *db, const char *sql) {
  double x = NAN;
  if (!query_double(db, sql, &x)) die("%s\n  in: %s", sqlite3_errmsg(db), sql);
  return x;
}

/* json_extract(json, path) prepared and bound; the caller steps it. */
static sqlite3_stmt *json_path(sqlite3 *db, const char *json, const char *path) {
  sqlite3_stmt *st = prepare(db, "SELECT json_extract(?1, ?2)");
  sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
  return st;
}

double json_path_number(sqlite3 *db, const char *json, const char *path) {
  sqlite3_stmt *st = json_path(db, json, path);
  double x = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
                 ? sqlite3_column_double(st, 0)
                 : NAN;
  sqlite3_finalize(st);
  return x;
}

char *json_path_text(sqlite3 *db, const char *json, const char *path) {
  sqlite3_stmt *st = json_path(db, json, path);
  char *out = NULL;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    out = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return out;
}
