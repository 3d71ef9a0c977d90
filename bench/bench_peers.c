/*
** bench/bench_peers.c: dyng side by side with the tools people use today.
**
**   bench_peers DB.db [--extension PATH] [--timeout S] [--python PATH]
**
** On a scratch copy of DB.db (a table edges(src, dst, length, ...), as
** bench/gen_graph writes), a directed graph weighted by `length`, source S
** (the source of the middle row) and target T (the vertex farthest from S),
** each peer that is installed is timed on the same four questions:
**
**   load     building its graph from the table
**   sssp     one-to-all shortest distances from S
**   p2p      the shortest distance from S to T
**   update   the answer to p2p after deleting the first edge of that path
**            (all copies of it): for dyng a DELETE and the query; for the
**            others, rebuilding their graph and the query
**
** Peers: dyng (this extension), a recursive CTE in plain SQLite (with the
** timeout, default 20 s), SpatiaLite's VirtualRouting (`CreateRouting`, then
** NodeFrom/NodeTo and an isochrone `Cost <=`; Debian package
** libsqlite3-mod-spatialite), igraph's C Dijkstra (when configure found
** libigraph), and NetworkX (python3-networkx, run as bench/peers_networkx.py).
** Every answer is checked against a textbook Dijkstra run here (nodes
** reached and the sum of their distances for sssp, the distance for p2p and
** update): a peer that answers wrong is reported as wrong, and not timed as
** if right.  One run each (the peers are slow); the table is printed in
** Markdown, with BENCH lines.
*/
#include "bench/bench_util.h"

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DYNG_HAVE_IGRAPH
#include <igraph/igraph.h>
#endif

const char bench_program[] = "bench_peers";

/* ---- the reference ------------------------------------------------------ */

typedef struct edge_list {
  size_t n;
  int64_t *src, *dst;
  double *w;
  int64_t *ids;    /* distinct node ids, sorted */
  uint32_t n_ids;
} edge_list;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static uint32_t index_of(const edge_list *e, int64_t id) {
  const int64_t *p = bsearch(&id, e->ids, e->n_ids, sizeof *e->ids, cmp_i64);
  return p ? (uint32_t)(p - e->ids) : UINT32_MAX;
}

static void read_edges(sqlite3 *db, edge_list *e) {
  memset(e, 0, sizeof *e);
  sqlite3_stmt *st = prepare(db, "SELECT count(*) FROM edges");
  sqlite3_step(st);
  size_t n = (size_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  e->src = xmalloc(n * sizeof *e->src);
  e->dst = xmalloc(n * sizeof *e->dst);
  e->w = xmalloc(n * sizeof *e->w);
  int64_t *all = xmalloc(2 * n * sizeof *all);
  st = prepare(db, "SELECT src, dst, length FROM edges");
  while (sqlite3_step(st) == SQLITE_ROW && e->n < n) {
    e->src[e->n] = sqlite3_column_int64(st, 0);
    e->dst[e->n] = sqlite3_column_int64(st, 1);
    e->w[e->n] = sqlite3_column_double(st, 2);
    all[2 * e->n] = e->src[e->n];
    all[2 * e->n + 1] = e->dst[e->n];
    e->n++;
  }
  sqlite3_finalize(st);
  qsort(all, 2 * e->n, sizeof *all, cmp_i64);
  uint32_t m = 0;
  for (size_t i = 0; i < 2 * e->n; i++)
    if (!m || all[m - 1] != all[i]) all[m++] = all[i];
  e->ids = all;
  e->n_ids = m;
}

/* Dijkstra (binary heap) from node id s over the edges (reversed when
** `reverse`: distances to s), skipping those from skip_u to skip_v; dist[]
** by node index. */
static void reference_dir(const edge_list *e, int64_t s, int64_t skip_u, int64_t skip_v, int reverse,
                          double *dist) {
  uint32_t n = e->n_ids;
  size_t *off = calloc((size_t)n + 1, sizeof *off);
  uint32_t *to = xmalloc(e->n * sizeof *to);
  double *w = xmalloc(e->n * sizeof *w);
  const int64_t *from = reverse ? e->dst : e->src, *into = reverse ? e->src : e->dst;
  for (size_t i = 0; i < e->n; i++) off[index_of(e, from[i]) + 1]++;
  for (uint32_t v = 0; v < n; v++) off[v + 1] += off[v];
  size_t *at = xmalloc(((size_t)n + 1) * sizeof *at);
  memcpy(at, off, ((size_t)n + 1) * sizeof *at);
  for (size_t i = 0; i < e->n; i++) {
    size_t p = at[index_of(e, from[i])]++;
    int skip = e->src[i] == skip_u && e->dst[i] == skip_v;
    to[p] = skip ? UINT32_MAX : index_of(e, into[i]);
    w[p] = skip ? 0 : e->w[i];
  }
  for (uint32_t v = 0; v < n; v++) dist[v] = INFINITY;
  typedef struct {
    double d;
    uint32_t v;
  } item;
  item *heap = xmalloc((e->n + 2) * sizeof *heap);
  size_t hn = 0;
  uint32_t si = index_of(e, s);
  dist[si] = 0;
  heap[hn++] = (item){0, si};
  while (hn) {
    item top = heap[0], last = heap[--hn];
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= hn) break;
      if (c + 1 < hn && heap[c + 1].d < heap[c].d) c++;
      if (!(heap[c].d < last.d)) break;
      heap[i] = heap[c];
      i = c;
    }
    if (hn) heap[i] = last;
    if (top.d > dist[top.v]) continue;
    for (size_t p = off[top.v]; p < off[top.v + 1]; p++) {
      if (to[p] == UINT32_MAX) continue;
      double nd = top.d + w[p];
      if (nd < dist[to[p]]) {
        dist[to[p]] = nd;
        size_t j = hn++;
        while (j && nd < heap[(j - 1) / 2].d) heap[j] = heap[(j - 1) / 2], j = (j - 1) / 2;
        heap[j] = (item){nd, to[p]};
      }
    }
  }
  free(heap), free(off), free(to), free(w), free(at);
}

static void reference(const edge_list *e, int64_t s, int64_t skip_u, int64_t skip_v, double *dist) {
  reference_dir(e, s, skip_u, skip_v, 0, dist);
}

/* ---- results ------------------------------------------------------------- */

typedef struct result {
  const char *peer;
  int available;
  char why[200];               /* when not available */
  double load, sssp, p2p, update; /* ms; NAN when not measured */
  long long reached;           /* sssp answer */
  double sum;
  double p2p_dist, after_dist;
  int wrong;                   /* an answer differs from the reference */
  char wrong_what[200];
  int timed_out;
} result;

static void init_result(result *r, const char *peer) {
  memset(r, 0, sizeof *r);
  r->peer = peer;
  r->available = 1;
  r->load = r->sssp = r->p2p = r->update = NAN;
  r->p2p_dist = r->after_dist = NAN;
}

static int close_enough(double a, double b) { return (isinf(a) && isinf(b)) || fabs(a - b) <= 1e-6 * (1 + fabs(b)); }

/* ---- the peers ------------------------------------------------------------ */

static double ms_since(double t0) { return (now_s() - t0) * 1e3; }

static int g_deadline_hit;
static double g_deadline;
static int past_deadline(void *ctx) {
  (void)ctx;
  if (now_s() > g_deadline) {
    g_deadline_hit = 1;
    return 1;
  }
  return 0;
}

/* query_double (bench_util.h), NAN when there is no answer at all. */
static double one_number(sqlite3 *db, const char *sql, int *ok) {
  double x = NAN;
  *ok = query_double(db, sql, &x);
  return x;
}

static void two_numbers(sqlite3 *db, const char *sql, long long *a, double *b) {
  sqlite3_stmt *st = prepare(db, sql);
  if (sqlite3_step(st) == SQLITE_ROW) {
    *a = sqlite3_column_int64(st, 0);
    *b = sqlite3_column_double(st, 1);
  }
  sqlite3_finalize(st);
}

static void run_dyng(sqlite3 *db, result *r, int64_t s, int64_t t, int64_t du, int64_t dv) {
  double t0 = now_s();
  char *err = NULL;
  if (sqlite3_exec(db, "CREATE VIRTUAL TABLE peers_g USING dyng(edges=edges, weights=length)", NULL, NULL, &err) != SQLITE_OK) {
    r->available = 0;
    snprintf(r->why, sizeof r->why, "%s", err);
    sqlite3_free(err);
    return;
  }
  r->load = ms_since(t0);
  sqlite3_exec(db, "SELECT dyng_config('cache_mb', 0)", NULL, NULL, NULL);
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT count(*), sum(dist) FROM dyng_sssp('peers_g', %lld)", (long long)s);
  t0 = now_s();
  two_numbers(db, sql, &r->reached, &r->sum);
  r->sssp = ms_since(t0);
  sqlite3_exec(db, "SELECT dyng_config('cache_mb', 1024)", NULL, NULL, NULL);
  snprintf(sql, sizeof sql, "SELECT max(agg_cost) FROM dyng_path('peers_g', %lld, %lld)", (long long)s, (long long)t);
  int ok;
  t0 = now_s();
  r->p2p_dist = one_number(db, sql, &ok);
  r->p2p = ms_since(t0);
  char del[200];
  snprintf(del, sizeof del, "DELETE FROM edges WHERE src = %lld AND dst = %lld", (long long)du, (long long)dv);
  t0 = now_s();
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  sqlite3_exec(db, del, NULL, NULL, NULL);
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  r->after_dist = one_number(db, sql, &ok);
  r->update = ms_since(t0);
  sqlite3_exec(db, "DROP TABLE peers_g", NULL, NULL, NULL);
}

static void run_cte(sqlite3 *db, result *r, int64_t s, int64_t t, double timeout) {
  (void)t;
  /* Bellman-Ford as a recursive CTE: every path prefix that is shorter than
  ** the best distance found so far cannot be expressed, so it expands every
  ** path up to a bound (the reference's largest distance), which explodes. */
  char sql[800];
  snprintf(sql, sizeof sql,
           "WITH RECURSIVE d(node, cost) AS (SELECT %lld, 0.0 UNION "
           "  SELECT e.dst, d.cost + e.length FROM d JOIN edges e ON e.src = d.node) "
           "SELECT count(*), sum(c) FROM (SELECT node, min(cost) AS c FROM d GROUP BY node)",
           (long long)s);
  g_deadline = now_s() + timeout;
  g_deadline_hit = 0;
  sqlite3_progress_handler(db, 100000, past_deadline, NULL);
  double t0 = now_s();
  sqlite3_stmt *st = prepare(db, sql);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    r->reached = sqlite3_column_int64(st, 0);
    r->sum = sqlite3_column_double(st, 1);
    r->sssp = ms_since(t0);
  } else {
    r->timed_out = 1;
  }
  sqlite3_finalize(st);
  sqlite3_progress_handler(db, 0, NULL, NULL);
  r->load = 0;
}

static void run_spatialite(sqlite3 *db, result *r, int64_t s, int64_t t, int64_t du, int64_t dv) {
  char *err = NULL;
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, "mod_spatialite", NULL, &err) != SQLITE_OK) {
    r->available = 0;
    snprintf(r->why, sizeof r->why, "mod_spatialite not loadable (apt-get install libsqlite3-mod-spatialite)");
    sqlite3_free(err);
    return;
  }
  sqlite3_exec(db, "SELECT InitSpatialMetadata(1)", NULL, NULL, NULL);
  static const char *build =
      "SELECT CreateRouting('peers_rd', 'peers_rn', 'edges', 'src', 'dst', NULL, 'length', NULL, 0, 0, NULL, "
      "NULL, 1)";
  int ok;
  double t0 = now_s();
  double built = one_number(db, build, &ok);
  r->load = ms_since(t0);
  if (!ok || built != 1) {
    r->available = 0;
    snprintf(r->why, sizeof r->why, "CreateRouting failed");
    return;
  }
  char sql[400];
  snprintf(sql, sizeof sql,
           "SELECT count(*) + 1, sum(Cost) FROM peers_rn WHERE NodeFrom = %lld AND Cost <= 1e300", (long long)s);
  t0 = now_s();
  two_numbers(db, sql, &r->reached, &r->sum);
  r->sssp = ms_since(t0);
  snprintf(sql, sizeof sql, "SELECT Cost FROM peers_rn WHERE NodeFrom = %lld AND NodeTo = %lld LIMIT 1", (long long)s,
           (long long)t);
  t0 = now_s();
  r->p2p_dist = one_number(db, sql, &ok);
  r->p2p = ms_since(t0);
  char del[200];
  snprintf(del, sizeof del, "DELETE FROM edges WHERE src = %lld AND dst = %lld", (long long)du, (long long)dv);
  sqlite3_exec(db, "SAVEPOINT peers", NULL, NULL, NULL);
  sqlite3_exec(db, del, NULL, NULL, NULL);
  t0 = now_s();
  sqlite3_exec(db, "DROP TABLE IF EXISTS peers_rn", NULL, NULL, NULL);
  one_number(db, build, &ok);
  r->after_dist = one_number(db, sql, &ok);
  if (!ok) r->after_dist = INFINITY;
  r->update = ms_since(t0);
  sqlite3_exec(db, "ROLLBACK TO peers; RELEASE peers", NULL, NULL, NULL);
}

#ifdef DYNG_HAVE_IGRAPH
static void igraph_build(const edge_list *e, int64_t skip_u, int64_t skip_v, igraph_t *g, igraph_vector_t *w) {
  igraph_vector_int_t ev;
  igraph_vector_int_init(&ev, 0);
  igraph_vector_init(w, 0);
  for (size_t i = 0; i < e->n; i++) {
    if (e->src[i] == skip_u && e->dst[i] == skip_v) continue;
    igraph_vector_int_push_back(&ev, index_of(e, e->src[i]));
    igraph_vector_int_push_back(&ev, index_of(e, e->dst[i]));
    igraph_vector_push_back(w, e->w[i]);
  }
  igraph_create(g, &ev, e->n_ids, IGRAPH_DIRECTED);
  igraph_vector_int_destroy(&ev);
}

static double igraph_p2p(const igraph_t *g, const igraph_vector_t *w, uint32_t s, uint32_t t) {
  igraph_matrix_t m;
  igraph_matrix_init(&m, 0, 0);
  igraph_distances_dijkstra(g, &m, igraph_vss_1(s), igraph_vss_1(t), w, IGRAPH_OUT);
  double d = MATRIX(m, 0, 0);
  igraph_matrix_destroy(&m);
  return d;
}

static void run_igraph(const edge_list *e, result *r, int64_t s, int64_t t, int64_t du, int64_t dv) {
  igraph_t g;
  igraph_vector_t w;
  double t0 = now_s();
  igraph_build(e, INT64_MIN, INT64_MIN, &g, &w);
  r->load = ms_since(t0);
  igraph_matrix_t m;
  igraph_matrix_init(&m, 0, 0);
  t0 = now_s();
  igraph_distances_dijkstra(&g, &m, igraph_vss_1(index_of(e, s)), igraph_vss_all(), &w, IGRAPH_OUT);
  r->sssp = ms_since(t0);
  r->reached = 0;
  r->sum = 0;
  for (igraph_integer_t j = 0; j < igraph_matrix_ncol(&m); j++)
    if (isfinite(MATRIX(m, 0, j))) r->reached++, r->sum += MATRIX(m, 0, j);
  igraph_matrix_destroy(&m);
  t0 = now_s();
  r->p2p_dist = igraph_p2p(&g, &w, index_of(e, s), index_of(e, t));
  r->p2p = ms_since(t0);
  igraph_destroy(&g);
  igraph_vector_destroy(&w);
  t0 = now_s();
  igraph_build(e, du, dv, &g, &w);
  r->after_dist = igraph_p2p(&g, &w, index_of(e, s), index_of(e, t));
  r->update = ms_since(t0);
  igraph_destroy(&g);
  igraph_vector_destroy(&w);
}
#endif

static void run_networkx(const edge_list *e, const char *python, result *r, int64_t s, int64_t t, int64_t du,
                         int64_t dv) {
  char path[300];
  snprintf(path, sizeof path, "%s-edges.tsv", scratch_name());
  FILE *f = fopen(path, "w");
  if (!f) die("cannot write %s", path);
  for (size_t i = 0; i < e->n; i++) fprintf(f, "%lld\t%lld\t%.17g\n", (long long)e->src[i], (long long)e->dst[i], e->w[i]);
  fclose(f);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s -c 'import networkx' 2>/dev/null", python);
  if (system(cmd) != 0) {
    r->available = 0;
    snprintf(r->why, sizeof r->why, "no networkx for %s (apt-get install python3-networkx)", python);
    unlink(path);
    return;
  }
  const char *srcdir = getenv("DYNG_SRCDIR");
  snprintf(cmd, sizeof cmd, "%s %s/bench/peers_networkx.py %s %lld %lld %lld %lld", python, srcdir ? srcdir : ".",
           path, (long long)s, (long long)t, (long long)du, (long long)dv);
  FILE *p = popen(cmd, "r");
  char line[2000] = "";
  if (!p || !fgets(line, sizeof line, p)) {
    r->available = 0;
    snprintf(r->why, sizeof r->why, "bench/peers_networkx.py failed");
  }
  if (p) pclose(p);
  unlink(path);
  if (!r->available) return;
  /* {"load_ms": x, "sssp_ms": x, "reached": n, "sum": x, "p2p": x, "p2p_ms": x, "after": x, "update_ms": x} */
  sqlite3 *j = NULL;
  sqlite3_open(":memory:", &j);
  sqlite3_stmt *st = prepare(j, "SELECT json_extract(?1,'$.load_ms'), json_extract(?1,'$.sssp_ms'), "
                                "json_extract(?1,'$.reached'), json_extract(?1,'$.sum'), json_extract(?1,'$.p2p'), "
                                "json_extract(?1,'$.p2p_ms'), json_extract(?1,'$.after'), json_extract(?1,'$.update_ms')");
  sqlite3_bind_text(st, 1, line, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW) {
    r->load = sqlite3_column_double(st, 0);
    r->sssp = sqlite3_column_double(st, 1);
    r->reached = sqlite3_column_int64(st, 2);
    r->sum = sqlite3_column_double(st, 3);
    r->p2p_dist = sqlite3_column_double(st, 4);
    r->p2p = sqlite3_column_double(st, 5);
    r->after_dist = sqlite3_column_type(st, 6) == SQLITE_NULL ? INFINITY : sqlite3_column_double(st, 6);
    r->update = sqlite3_column_double(st, 7);
  }
  sqlite3_finalize(st);
  sqlite3_close(j);
}

/* ---- main ---------------------------------------------------------------- */

static void fmt_ms(char *out, size_t n, double ms) {
  if (isnan(ms)) snprintf(out, n, "-");
  else if (ms >= 1000) snprintf(out, n, "%.2f s", ms / 1e3);
  else snprintf(out, n, "%.1f ms", ms);
}

int main(int argc, char **argv) {
  const char *db_path = NULL, *ext = ".libs/dyng.so", *python = "/usr/bin/python3";
  double timeout = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
    else if (!strcmp(argv[i], "--python") && i + 1 < argc) python = argv[++i];
    else if (argv[i][0] != '-' && !db_path) db_path = argv[i];
    else die("usage: bench_peers DB.db [--extension PATH] [--timeout S] [--python PATH]");
  }
  if (!db_path) die("usage: bench_peers DB.db [--extension PATH] [--timeout S] [--python PATH]");
  const char *scratch = scratch_name();
  copy_file(db_path, scratch);
  sqlite3 *db = NULL;
  if (sqlite3_open(scratch, &db) != SQLITE_OK) die("cannot open %s", scratch);
  edge_list e;
  read_edges(db, &e);
  /* S: the source of the middle row; T: the farthest vertex from it. */
  sqlite3_stmt *st = prepare(db, "SELECT src FROM edges LIMIT 1 OFFSET (SELECT count(*) / 2 FROM edges)");
  sqlite3_step(st);
  int64_t s = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  double *dist = xmalloc(e.n_ids * sizeof *dist);
  reference(&e, s, INT64_MIN, INT64_MIN, dist);
  uint32_t ti = index_of(&e, s);
  long long ref_reached = 0;
  double ref_sum = 0;
  for (uint32_t v = 0; v < e.n_ids; v++)
    if (isfinite(dist[v])) {
      ref_reached++, ref_sum += dist[v];
      if (dist[v] > dist[ti]) ti = v;
    }
  int64_t t = e.ids[ti];
  double ref_p2p = dist[ti];
  /* The first edge of a shortest S -> T path: an edge S -> x with
  ** w + dist(x, T) = dist(S, T) (distances to T by a reversed search). */
  int64_t du = s, dv = s;
  double *to_t = xmalloc(e.n_ids * sizeof *to_t);
  reference_dir(&e, t, INT64_MIN, INT64_MIN, 1, to_t);
  for (size_t i = 0; i < e.n && dv == s; i++)
    if (e.src[i] == s && e.dst[i] != s && close_enough(e.w[i] + to_t[index_of(&e, e.dst[i])], ref_p2p))
      dv = e.dst[i];
  free(to_t);
  double *d3 = xmalloc(e.n_ids * sizeof *d3);
  reference(&e, s, du, dv, d3);
  double ref_after = d3[ti];
  free(d3);
  printf("# bench_peers %s: %zu edges, %u nodes; S = %lld, T = %lld (distance %.6g, %lld nodes reached); the "
         "edge deleted: %lld -> %lld (then %.6g)\n",
         db_path, e.n, e.n_ids, (long long)s, (long long)t, ref_p2p, ref_reached, (long long)du, (long long)dv,
         ref_after);

  enum { N_PEERS = 5 };
  result res[N_PEERS];
  char *why = NULL;
  init_result(&res[0], "dyng");
  if (!load_extension(db, ext, &why)) {
    res[0].available = 0;
    snprintf(res[0].why, sizeof res[0].why, "cannot load %s", ext);
  } else {
    run_dyng(db, &res[0], s, t, du, dv);
    /* Put the deleted edge back for the others. */
    sqlite3_close(db);
    copy_file(db_path, scratch);
    sqlite3_open(scratch, &db);
  }
  init_result(&res[1], "recursive CTE");
  run_cte(db, &res[1], s, t, timeout);
  init_result(&res[2], "SpatiaLite VirtualRouting");
  run_spatialite(db, &res[2], s, t, du, dv);
  init_result(&res[3], "igraph (C)");
#ifdef DYNG_HAVE_IGRAPH
  run_igraph(&e, &res[3], s, t, du, dv);
#else
  res[3].available = 0;
  snprintf(res[3].why, sizeof res[3].why, "not built with igraph (apt-get install libigraph-dev, configure again)");
#endif
  init_result(&res[4], "NetworkX");
  run_networkx(&e, python, &res[4], s, t, du, dv);

  report r;
  report_init(&r, strrchr(db_path, '/') ? strrchr(db_path, '/') + 1 : db_path);
  printf("\n| peer | load | one-to-all | point-to-point | after deleting an edge on the path | answers |\n"
         "| --- | ---: | ---: | ---: | ---: | --- |\n");
  for (int i = 0; i < N_PEERS; i++) {
    result *p = &res[i];
    if (!p->available) {
      printf("| %s | | | | | not run: %s |\n", p->peer, p->why);
      continue;
    }
    char what[200] = "";
    if (!isnan(p->sssp) && (p->reached != ref_reached || !close_enough(p->sum, ref_sum)))
      snprintf(what + strlen(what), sizeof what - strlen(what), "one-to-all %lld nodes / sum %.6g; ", p->reached,
               p->sum);
    if (!isnan(p->p2p_dist) && !close_enough(p->p2p_dist, ref_p2p))
      snprintf(what + strlen(what), sizeof what - strlen(what), "S->T %.6g; ", p->p2p_dist);
    if (!isnan(p->after_dist) && !close_enough(p->after_dist, ref_after))
      snprintf(what + strlen(what), sizeof what - strlen(what), "after %.6g; ", p->after_dist);
    char l[32], a[32], b[32], c[32];
    fmt_ms(l, sizeof l, p->load);
    fmt_ms(a, sizeof a, p->sssp);
    fmt_ms(b, sizeof b, p->p2p);
    fmt_ms(c, sizeof c, p->update);
    if (what[0]) {
      printf("| %s | %s | WRONG | WRONG | WRONG | wrong: %s |\n", p->peer, l, what);
      continue;
    }
    if (p->timed_out) snprintf(a, sizeof a, "> %.0f s", timeout);
    printf("| %s | %s | %s | %s | %s | %s |\n", p->peer, l, a, b, c,
           p->timed_out ? "timed out" : "equal to the reference");
    const char *names[4] = {"load", "sssp", "p2p", "update"};
    double vals[4] = {p->load, p->sssp, p->p2p, p->update};
    for (int k = 0; k < 4; k++) {
      if (isnan(vals[k])) continue;
      char metric[96];
      snprintf(metric, sizeof metric, "%s_%s", names[k], p->peer);
      for (char *z = metric; *z; z++)
        if (*z == ' ' || *z == '(' || *z == ')') *z = '_';
      report_ratio(&r, metric, vals[k]);
    }
  }
  printf("\n");
  report_print_lines(&r);
  free(dist);
  sqlite3_close(db);
  return 0;
}
