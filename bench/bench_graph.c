/*
** bench/bench_graph.c: how fast dyng builds a graph and runs SSSP, compared
** with the cheapest thing that could do the same job.
**
**   bench_graph DB.db [--runs N] [--sources K] [--extension PATH] [--in-place]
**               [--verbose]
**
** DB.db holds the table edges(src, dst, length, minutes, toll) that
** gen_graph writes.  In one process, N times over (medians reported):
**
**   scan        SELECT rowid, src, dst, length, minutes, toll FROM edges,
**               every column read with sqlite3_column_*: the floor for any
**               way of building a graph from the table.  All N scans run
**               first (see scan_mt).
**   api_load    the same scan feeding dyng_graph_load_edge, then
**               dyng_graph_seal: the engine's share of a CREATE.
**   create      CREATE VIRTUAL TABLE bench_g USING dyng(edges=edges, ...,
**               weights='length,minutes,toll', directed=1, backend=cpu)
**               through the loaded extension (DROP TABLE outside the
**               timing).  backend=cpu: on a GPU machine the default would
**               add the copy to the device (bench_gpu's create_cuda) and
**               start the CUDA driver's threads, which slow every later
**               SQLite call of the process (see scan_mt).
**   scan_mt     the scan again after the creates, as a control: once the
**               process has started a thread (the engine's, in the seal of
**               api_load and of every create), glibc's malloc and mutexes
**               use atomic instructions for good and the same scan may be
**               slower: create is then compared with scan_mt too.
**   create_fresh the same CREATE, each in a new process (this program run
**               again with --create-once): a program's first load, before
**               any thread of it started; compared with scan, and run by
**               run with scan_fresh, the scan in a new process (--scan-once)
**               run just before it: create_fresh_over_scan_fresh is the
**               median of those ratios, which a machine's drifting load
**               disturbs least.
**   sssp        per source, objective 'length', no target:
**               dyng_sssp_dijkstra (radix heap) on the engine graph vs
**               baseline_dijkstra below (lazy binary heap over a plain CSR);
**               both must give identical distances or the program aborts;
**               then dyng_sssp_parallel (delta-stepping on dyng_threads()
**               threads, OMP_NUM_THREADS), which must give them too,
**               and Dijkstra's parent edge for every vertex (the tie rule).
**   sql_sssp    SELECT count(*), max(dist) FROM dyng_sssp('bench_g', ?):
**               the first query of a source (computes the tree, on the
**               CPU: the parallel search where it pays, then the distance
**               order for the listing) and a repeat of it (may come from
**               the extension's tree cache).
**
** How it works: CREATE VIRTUAL TABLE writes to the database (the graph's
** definition, a change-log table, triggers), so when the extension loads the
** program copies DB.db to a scratch file ($TMPDIR or /tmp) and works there,
** removing it at exit; --in-place works on DB.db itself and drops bench_g
** afterwards.  Without the extension DB.db is opened read-only and the
** create, create_fresh and sql_sssp rows are skipped.  One untimed scan first warms the
** OS cache, so every timed figure reads the table from memory.  --verbose
** prints every run's figures as they come.
*/
#include "bench/bench_util.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/sssp.h"
#include "engine/parallel.h"

#include <sqlite3.h>

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define EDGE_SCAN_SQL "SELECT rowid, src, dst, length, minutes, toll FROM edges"
#define CREATE_SQL                                                          \
  "CREATE VIRTUAL TABLE bench_g USING dyng(edges=edges, src=src, dst=dst, " \
  "weights='length,minutes,toll', directed=1, backend=cpu)"
#define SQL_SSSP_SQL "SELECT count(*), max(dist) FROM dyng_sssp('bench_g', ?1)"

const char bench_program[] = "bench_graph";

/* ---- a node id -> index map for the baseline --------------------------- */

/* Open addressing, linear probing, at most 50% full; the baseline numbers
** vertices itself so that it shares no code with the engine. */
typedef struct id_map {
  int64_t *key;
  uint32_t *val; /* UINT32_MAX: empty cell */
  size_t mask;
} id_map;

static void id_map_init(id_map *m, size_t n_keys) {
  size_t cap = 16;
  while (cap < 2 * n_keys) cap *= 2;
  m->key = xmalloc(cap * sizeof *m->key);
  m->val = xmalloc(cap * sizeof *m->val);
  memset(m->val, 0xff, cap * sizeof *m->val);
  m->mask = cap - 1;
}

static void id_map_free(id_map *m) {
  free(m->key);
  free(m->val);
}

static inline size_t id_hash(int64_t k) {
  uint64_t x = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
  return (size_t)(x ^ (x >> 29));
}

/* The index of `key`, given `next` (and *added set) when new. */
static uint32_t id_map_get_or_add(id_map *m, int64_t key, uint32_t next, int *added) {
  size_t i = id_hash(key) & m->mask;
  while (m->val[i] != UINT32_MAX) {
    if (m->key[i] == key) {
      *added = 0;
      return m->val[i];
    }
    i = (i + 1) & m->mask;
  }
  m->key[i] = key;
  m->val[i] = next;
  *added = 1;
  return next;
}

static uint32_t id_map_get(const id_map *m, int64_t key) {
  size_t i = id_hash(key) & m->mask;
  while (m->val[i] != UINT32_MAX) {
    if (m->key[i] == key) return m->val[i];
    i = (i + 1) & m->mask;
  }
  return UINT32_MAX;
}

/* ---- the baseline: plain CSR and lazy binary-heap Dijkstra -------------- */

/* A static CSR in objective 'length': the out-edges of vertex v are
** target[offset[v] .. offset[v+1]-1] with weight[...]. */
typedef struct csr {
  uint32_t n_vertices;
  size_t n_edges;
  size_t *offset;    /* n_vertices + 1 */
  uint32_t *target;
  double *weight;
  int64_t *node_id;  /* per vertex */
  id_map ids;        /* node id -> vertex */
} csr;

static void csr_free(csr *g) {
  free(g->offset);
  free(g->target);
  free(g->weight);
  free(g->node_id);
  id_map_free(&g->ids);
}

typedef struct heap_item {
  double dist;
  uint32_t vertex;
} heap_item;

/* Textbook Dijkstra with a lazy binary heap (what std::priority_queue code
** does): push a (dist, vertex) pair on every improvement, skip popped pairs
** whose dist is stale.  Fills dist[] and parent[] (caller-owned, n_vertices
** each); the heap is allocated here.  Returns the vertices settled. */
static uint32_t baseline_dijkstra(const csr *g, uint32_t source, double *dist,
                                  uint32_t *parent) {
  uint32_t n = g->n_vertices, settled = 0;
  size_t cap = 1024, size = 0;
  heap_item *h = xmalloc(cap * sizeof *h);
  for (uint32_t v = 0; v < n; v++) {
    dist[v] = INFINITY;
    parent[v] = UINT32_MAX;
  }
  dist[source] = 0.0;
  h[size++] = (heap_item){0.0, source};
  while (size) {
    heap_item top = h[0];
    /* Pop: move the last item to the root and sift it down. */
    heap_item last = h[--size];
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && h[c + 1].dist < h[c].dist) c++;
      if (!(h[c].dist < last.dist)) break;
      h[i] = h[c];
      i = c;
    }
    if (size) h[i] = last;

    uint32_t u = top.vertex;
    if (top.dist > dist[u]) continue; /* stale */
    settled++;
    for (size_t p = g->offset[u], end = g->offset[u + 1]; p < end; p++) {
      uint32_t x = g->target[p];
      double nd = top.dist + g->weight[p];
      if (nd < dist[x]) {
        dist[x] = nd;
        parent[x] = u;
        if (size == cap) {
          cap *= 2;
          heap_item *nh = realloc(h, cap * sizeof *h);
          if (!nh) die("out of memory in baseline heap");
          h = nh;
        }
        /* Push: sift up from the end. */
        size_t j = size++;
        while (j > 0) {
          size_t parent_slot = (j - 1) / 2;
          if (!(nd < h[parent_slot].dist)) break;
          h[j] = h[parent_slot];
          j = parent_slot;
        }
        h[j] = (heap_item){nd, x};
      }
    }
  }
  free(h);
  return settled;
}

/* ---- reading the table ------------------------------------------------ */

static volatile double scan_sink;

/* (a) The bare scan: every row, every column; returns the rows read. */
static long long bare_scan(sqlite3 *db) {
  sqlite3_stmt *st = prepare(db, EDGE_SCAN_SQL);
  long long n = 0;
  int64_t isum = 0;
  double dsum = 0.0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    isum += sqlite3_column_int64(st, 0);
    isum += sqlite3_column_int64(st, 1);
    isum += sqlite3_column_int64(st, 2);
    dsum += sqlite3_column_double(st, 3);
    dsum += sqlite3_column_double(st, 4);
    dsum += sqlite3_column_double(st, 5);
    n++;
  }
  if (rc != SQLITE_DONE) die("scan: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  scan_sink = dsum + (double)isum;
  return n;
}

/* Builds the baseline CSR from the table: vertices numbered by first
** appearance (src before dst, rowid order), out-edges in rowid order.  Also
** returns every row's source node id in *row_src (caller frees), from which
** the benchmark's sources are drawn. */
static void csr_load(sqlite3 *db, long long n_rows, csr *g, int64_t **row_src) {
  uint32_t *src = xmalloc((size_t)n_rows * sizeof *src);
  uint32_t *dst = xmalloc((size_t)n_rows * sizeof *dst);
  double *len = xmalloc((size_t)n_rows * sizeof *len);
  int64_t *rs = xmalloc((size_t)n_rows * sizeof *rs);
  size_t id_cap = 1024;
  int64_t *node_id = xmalloc(id_cap * sizeof *node_id);
  uint32_t n = 0;
  long long m = 0;
  int rc, added;
  memset(g, 0, sizeof *g);
  id_map_init(&g->ids, (size_t)n_rows / 2 + 16);
  sqlite3_stmt *st = prepare(db, EDGE_SCAN_SQL);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (m == n_rows) die("the edge table grew while reading it");
    int64_t ends[2] = {sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
    uint32_t v[2];
    for (int k = 0; k < 2; k++) {
      v[k] = id_map_get_or_add(&g->ids, ends[k], n, &added);
      if (added) {
        if (n == id_cap) {
          id_cap *= 2;
          int64_t *p = realloc(node_id, id_cap * sizeof *node_id);
          if (!p) die("out of memory");
          node_id = p;
        }
        node_id[n++] = ends[k];
      }
    }
    src[m] = v[0];
    dst[m] = v[1];
    len[m] = sqlite3_column_double(st, 3) + 0.0;
    rs[m] = ends[0];
    m++;
  }
  if (rc != SQLITE_DONE) die("scan: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);

  g->n_vertices = n;
  g->n_edges = (size_t)m;
  g->node_id = node_id;
  g->offset = calloc((size_t)n + 1, sizeof *g->offset);
  g->target = xmalloc((size_t)m * sizeof *g->target);
  g->weight = xmalloc((size_t)m * sizeof *g->weight);
  if (!g->offset) die("out of memory");
  for (long long e = 0; e < m; e++) g->offset[src[e] + 1]++;
  for (uint32_t v = 0; v < n; v++) g->offset[v + 1] += g->offset[v];
  size_t *fill = xmalloc((size_t)n * sizeof *fill);
  memcpy(fill, g->offset, (size_t)n * sizeof *fill);
  for (long long e = 0; e < m; e++) {
    size_t p = fill[src[e]]++;
    g->target[p] = dst[e];
    g->weight[p] = len[e];
  }
  free(fill);
  free(src);
  free(dst);
  free(len);
  *row_src = rs;
}

/* ---- running SQL ------------------------------------------------------ */

/* Runs sql; 0 on success, else the error text in *why (sqlite3_free it). */
static int exec_sql(sqlite3 *db, const char *sql, char **why) {
  *why = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, why) == SQLITE_OK) return 0;
  if (!*why) *why = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return -1;
}

/* ---- a create in a fresh process ----------------------------------------- */

/* --scan-once DB: one scan in this new process, timed; prints its
** seconds. */
static int scan_once(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    die("%s: %s", path, sqlite3_errmsg(db));
  double t0 = now_s();
  bare_scan(db);
  double t = now_s() - t0;
  sqlite3_close(db);
  printf("%.9f\n", t);
  return 0;
}

/* --create-once DB EXT: one CREATE in this new process, timed (the graph is
** dropped after, untimed); prints its seconds. */
static int create_once(const char *path, const char *ext) {
  sqlite3 *db = NULL;
  char *why = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    die("%s: %s", path, sqlite3_errmsg(db));
  if (!load_extension(db, ext, &why)) die("%s: %s", ext, why);
  if (exec_sql(db, "DROP TABLE IF EXISTS bench_g", &why)) die("DROP TABLE IF EXISTS bench_g: %s", why);
  double t0 = now_s();
  if (exec_sql(db, CREATE_SQL, &why)) die("%s: %s", CREATE_SQL, why);
  double t = now_s() - t0;
  if (exec_sql(db, "DROP TABLE bench_g", &why)) die("DROP TABLE bench_g: %s", why);
  sqlite3_close(db);
  printf("%.9f\n", t);
  return 0;
}

/* Runs this program again with `mode` (--create-once or --scan-once) in a
** new process (through exec, so that no thread of this one carries over)
** and returns the seconds it printed. */
static double run_fresh(const char *mode, const char *work_path, const char *ext_path) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  self[n] = 0;
  int fd[2];
  if (pipe(fd) != 0) die("pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  char *child_argv[] = {self, (char *)mode, (char *)work_path, (char *)ext_path, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, NULL, child_argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) die("posix_spawn %s: %s", self, strerror(rc));
  char out[128];
  size_t got = 0;
  ssize_t k;
  while (got < sizeof out - 1 && (k = read(fd[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)k;
  out[got] = 0;
  close(fd[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("the %s child failed", mode);
  char *end = NULL;
  double t = strtod(out, &end);
  if (end == out || !(t > 0)) die("the %s child printed '%s'", mode, out);
  return t;
}

/* ---- main ------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: bench_graph DB.db [--runs N] [--sources K] [--extension PATH] "
          "[--in-place] [--verbose]\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--create-once") == 0) return create_once(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "--scan-once") == 0) return scan_once(argv[2]);
  const char *db_path = NULL, *ext_path = "./.libs/dyng.so";
  int runs = 5, n_sources = 4, in_place = 0, verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sources") == 0 && i + 1 < argc)
      n_sources = atoi(argv[++i]);
    else if (strcmp(argv[i], "--extension") == 0 && i + 1 < argc)
      ext_path = argv[++i];
    else if (strcmp(argv[i], "--in-place") == 0)
      in_place = 1;
    else if (strcmp(argv[i], "--verbose") == 0)
      verbose = 1;
    else if (argv[i][0] == '-' || db_path)
      usage();
    else
      db_path = argv[i];
  }
  if (!db_path || runs < 1 || runs > 1000 || n_sources < 1 || n_sources > 10000) usage();
  if (access(db_path, R_OK) != 0) die("%s: %s", db_path, strerror(errno));
  const char *db_label = strrchr(db_path, '/') ? strrchr(db_path, '/') + 1 : db_path;

  /* Can the extension load at all?  Decides read-only vs scratch copy. */
  sqlite3 *db = NULL;
  char *why = NULL;
  int have_ext;
  {
    sqlite3 *probe;
    if (sqlite3_open(":memory:", &probe) != SQLITE_OK) die("sqlite3_open(:memory:) failed");
    have_ext = load_extension(probe, ext_path, &why);
    sqlite3_close(probe);
  }
  const char *work_path = db_path;
  if (have_ext && !in_place) {
    work_path = scratch_name();
    copy_file(db_path, work_path);
  }
  int flags = have_ext ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(work_path, &db, flags, NULL) != SQLITE_OK)
    die("%s: %s", work_path, sqlite3_errmsg(db));
  if (have_ext && !load_extension(db, ext_path, &why)) die("%s: %s", ext_path, why);

  printf("# bench_graph %s\n", db_path);
  printf("sqlite %s, %d runs, %d sources; extension %s: %s\n", sqlite3_libversion(), runs,
         n_sources, ext_path, have_ext ? "loaded" : why);
  if (have_ext)
    printf("working on %s (%s)\n", work_path,
           in_place ? "in place; bench_g dropped after each use" : "a scratch copy");
  else
    printf("create and SQL SSSP skipped: the extension did not load; %s opened read-only\n",
           db_path);
  sqlite3_free(why);
  why = NULL;
  fflush(stdout);

  /* Warm-up scan (untimed): row count, and the table in the OS cache. */
  long long n_rows = bare_scan(db);
  if (n_rows == 0) die("%s: table edges is empty", db_path);
  if (have_ext && exec_sql(db, "DROP TABLE IF EXISTS bench_g", &why))
    die("DROP TABLE IF EXISTS bench_g: %s", why);

  double *t_scan = xmalloc((size_t)runs * sizeof(double));
  double *t_load = xmalloc((size_t)runs * sizeof(double));
  double *t_create = xmalloc((size_t)runs * sizeof(double));
  double *t_scan_mt = xmalloc((size_t)runs * sizeof(double));
  double *t_create_fresh = xmalloc((size_t)runs * sizeof(double));
  double *t_scan_fresh = xmalloc((size_t)runs * sizeof(double));
  double *fresh_ratio = xmalloc((size_t)runs * sizeof(double));
  int n_create = 0;
  int create_ok = have_ext;
  dyng_graph *g = NULL;
  size_t graph_bytes = 0;

  /* (a) first, all of it: once any thread has been started, glibc takes
  ** real atomic locks in malloc and in SQLite's mutexes for the rest of the
  ** process, and the same scan gets slower.  The reference is the scan of
  ** an ordinary single-threaded program; scan_mt repeats it after the
  ** creates to show that nothing changed that. */
  for (int r = 0; r < runs; r++) {
    double t0 = now_s();
    long long n = bare_scan(db);
    t_scan[r] = now_s() - t0;
    if (n != n_rows) die("row count changed: %lld then %lld", n_rows, n);
    if (verbose) printf("run %d: scan %.3f s\n", r + 1, t_scan[r]);
  }
  /* The engine's load path on this thread; the last graph is kept for (c). */
  for (int r = 0; r < runs; r++) {
    dyng_graph_free(g);
    g = NULL;
    double t0 = now_s();
    g = load_edges(db, n_rows, 3, 1, NULL);
    t_load[r] = now_s() - t0;
    graph_bytes = dyng_graph_bytes(g);
    if (verbose) printf("run %d: api_load %.3f s\n", r + 1, t_load[r]);
  }
  /* (b) */
  for (int r = 0; r < runs && create_ok; r++) {
    double t0 = now_s();
    int rc = exec_sql(db, CREATE_SQL, &why);
    double t = now_s() - t0;
    if (rc) {
      printf("create skipped: %s: %s\n", CREATE_SQL, why);
      sqlite3_free(why);
      why = NULL;
      create_ok = 0;
      break;
    }
    t_create[n_create++] = t;
    if (exec_sql(db, "DROP TABLE bench_g", &why)) die("DROP TABLE bench_g: %s", why);
    if (verbose) printf("run %d: create %.3f s\n", r + 1, t);
  }
  for (int r = 0; r < runs && n_create; r++) {
    double t0 = now_s();
    bare_scan(db);
    t_scan_mt[r] = now_s() - t0;
    if (verbose) printf("run %d: scan after create %.3f s\n", r + 1, t_scan_mt[r]);
  }
  for (int r = 0; r < runs && n_create; r++) {
    t_scan_fresh[r] = run_fresh("--scan-once", work_path, ext_path);
    t_create_fresh[r] = run_fresh("--create-once", work_path, ext_path);
    fresh_ratio[r] = t_create_fresh[r] / t_scan_fresh[r];
    if (verbose)
      printf("run %d: in fresh processes, scan %.3f s, create %.3f s\n", r + 1, t_scan_fresh[r],
             t_create_fresh[r]);
  }

  /* (c) SSSP: engine vs baseline from the same sources. */
  csr base;
  int64_t *row_src;
  double t0 = now_s();
  csr_load(db, n_rows, &base, &row_src);
  double t_csr = now_s() - t0;
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  if (view.n_vertices != base.n_vertices)
    die("engine has %u vertices, baseline %u", view.n_vertices, base.n_vertices);
  /* engine vertex -> baseline vertex, through the node ids */
  uint32_t *to_base = xmalloc((size_t)view.n_vertices * sizeof *to_base);
  for (uint32_t v = 0; v < view.n_vertices; v++) {
    to_base[v] = id_map_get(&base.ids, view.node_id[v]);
    if (to_base[v] == UINT32_MAX) die("node %lld missing from the baseline", (long long)view.node_id[v]);
  }

  /* Sources: the src of rows drawn with a fixed seed; n_sources for the
  ** engine/baseline comparison, runs * n_sources for the SQL first queries
  ** (the extension may cache trees, so each first query needs a new source;
  ** the first n_sources are the same as the engine's). */
  int n_pool = runs * n_sources;
  int64_t *source = xmalloc((size_t)n_pool * sizeof *source);
  uint64_t seed = 20240601;
  for (int i = 0; i < n_pool; i++)
    source[i] = row_src[splitmix64(&seed) % (uint64_t)n_rows];
  free(row_src);

  dyng_sssp_tree tree;
  int rc = dyng_sssp_tree_init(&tree, view.n_vertices);
  if (rc) die("dyng_sssp_tree_init: %s", dyng_strerror(rc));
  double *base_dist = xmalloc((size_t)base.n_vertices * sizeof *base_dist);
  uint32_t *base_parent = xmalloc((size_t)base.n_vertices * sizeof *base_parent);
  uint32_t *dij_edge = xmalloc(((size_t)view.n_vertices + 1) * sizeof *dij_edge);
  double *t_eng = xmalloc((size_t)runs * sizeof(double));
  double *t_base = xmalloc((size_t)runs * sizeof(double));
  double *t_par = xmalloc((size_t)runs * sizeof(double));
  double reached_sum = 0.0;
  for (int r = 0; r < runs; r++) {
    double te = 0.0, tb = 0.0, tp = 0.0;
    for (int s = 0; s < n_sources; s++) {
      uint32_t ve;
      if (dyng_graph_vertex(g, source[s], &ve)) die("source %lld not in the graph", (long long)source[s]);
      uint32_t vb = id_map_get(&base.ids, source[s]);
      /* Alternate which goes first, so neither always runs on a cache the
      ** other warmed. */
      for (int k = 0; k < 2; k++) {
        if ((k == 0) == ((r + s) % 2 == 0)) {
          t0 = now_s();
          rc = dyng_sssp_dijkstra(&view, ve, 0, DYNG_NONE, &tree);
          te += now_s() - t0;
          if (rc) die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
        } else {
          t0 = now_s();
          uint32_t settled = baseline_dijkstra(&base, vb, base_dist, base_parent);
          tb += now_s() - t0;
          if (r == 0) reached_sum += settled;
        }
      }
      /* Distances must agree exactly: both sum the same doubles along
      ** shortest paths, and a vertex's final distance is the minimum over
      ** its in-edges whatever the order of settling. */
      uint32_t base_reached = 0;
      for (uint32_t v = 0; v < base.n_vertices; v++) base_reached += base_dist[v] < INFINITY;
      if (tree.n_reached != base_reached)
        die("source %lld: engine reached %u vertices, baseline %u", (long long)source[s],
            tree.n_reached, base_reached);
      for (uint32_t v = 0; v < view.n_vertices; v++) {
        double de = tree.dist[v], db_ = base_dist[to_base[v]];
        if (!(de == db_)) {
          fprintf(stderr,
                  "bench_graph: MISMATCH source %lld node %lld: engine %.17g, baseline %.17g\n",
                  (long long)source[s], (long long)view.node_id[v], de, db_);
          abort();
        }
      }
      /* The parallel search, on every thread dyng may use: the same tree,
      ** the same parent edge for every vertex (the tie rule). */
      memcpy(dij_edge, tree.parent_edge, (size_t)view.n_vertices * sizeof *dij_edge);
      t0 = now_s();
      rc = dyng_sssp_parallel(&view, ve, 0, &tree);
      tp += now_s() - t0;
      if (rc) die("dyng_sssp_parallel: %s", dyng_strerror(rc));
      for (uint32_t v = 0; v < view.n_vertices; v++)
        if (!(tree.dist[v] == base_dist[to_base[v]])) {
          fprintf(stderr, "bench_graph: MISMATCH (parallel) source %lld node %lld: %.17g, baseline %.17g\n",
                  (long long)source[s], (long long)view.node_id[v], tree.dist[v], base_dist[to_base[v]]);
          abort();
        }
      for (uint32_t v = 0; v < view.n_vertices; v++)
        if (tree.parent_edge[v] != dij_edge[v]) {
          fprintf(stderr, "bench_graph: TIE RULE (parallel) source %lld node %lld: edge slot %u, Dijkstra's %u\n",
                  (long long)source[s], (long long)view.node_id[v], tree.parent_edge[v], dij_edge[v]);
          abort();
        }
    }
    t_eng[r] = te / n_sources;
    t_base[r] = tb / n_sources;
    t_par[r] = tp / n_sources;
    if (verbose)
      printf("run %d: sssp engine %.3f ms, baseline %.3f ms per source\n", r + 1,
             1e3 * t_eng[r], 1e3 * t_base[r]);
  }
  dyng_sssp_tree_free(&tree);
  free(dij_edge);
  free(base_dist);
  free(base_parent);
  free(to_base);
  uint32_t n_vertices = base.n_vertices;
  csr_free(&base);
  dyng_graph_free(g);
  g = NULL;

  /* (d) SQL SSSP through the extension. */
  double *t_sql_first = xmalloc((size_t)n_pool * sizeof(double));
  double *t_sql_repeat = xmalloc((size_t)n_pool * sizeof(double));
  int n_sql = 0;
  double t_create_sql = 0.0;
  int sql_ok = have_ext;
  if (sql_ok) {
    t0 = now_s();
    if (exec_sql(db, CREATE_SQL, &why)) {
      printf("SQL SSSP skipped: %s: %s\n", CREATE_SQL, why);
      sqlite3_free(why);
      why = NULL;
      sql_ok = 0;
    }
    t_create_sql = now_s() - t0;
  }
  if (sql_ok) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, SQL_SSSP_SQL, -1, &st, NULL) != SQLITE_OK) {
      printf("SQL SSSP skipped: %s: %s\n", SQL_SSSP_SQL, sqlite3_errmsg(db));
      sql_ok = 0;
    }
    for (int i = 0; sql_ok && i < n_pool; i++) {
      for (int rep = 0; rep < 2 && sql_ok; rep++) {
        sqlite3_bind_int64(st, 1, source[i]);
        t0 = now_s();
        int src = sqlite3_step(st);
        long long cnt = sqlite3_column_int64(st, 0);
        double t = now_s() - t0;
        if (src != SQLITE_ROW || cnt <= 0) {
          printf("SQL SSSP skipped: %s (source %lld): %s\n", SQL_SSSP_SQL,
                 (long long)source[i], src == SQLITE_ROW ? "no rows" : sqlite3_errmsg(db));
          sql_ok = 0;
        }
        sqlite3_reset(st);
        (rep == 0 ? t_sql_first : t_sql_repeat)[n_sql] = t;
      }
      if (sql_ok) n_sql++;
    }
    sqlite3_finalize(st);
    if (exec_sql(db, "DROP TABLE IF EXISTS bench_g", &why)) {
      printf("DROP TABLE bench_g: %s\n", why);
      sqlite3_free(why);
      why = NULL;
    }
  }
  sqlite3_close(db);

  /* ---- the report ---- */
  report rep;
  report_init(&rep, db_label);
  char ratio[64];
  double m_scan = median_of(t_scan, runs);
  report_add(&rep, "scan", "s", 1.0, t_scan, runs, "1.00x (reference)");
  snprintf(ratio, sizeof ratio, "%.2fx scan", median_of(t_load, runs) / m_scan);
  report_add(&rep, "api_load", "s", 1.0, t_load, runs, ratio);
  report_ratio(&rep, "api_load_over_scan", median_of(t_load, runs) / m_scan);
  if (n_create) {
    snprintf(ratio, sizeof ratio, "%.2fx scan", median_of(t_create, n_create) / m_scan);
    report_add(&rep, "create", "s", 1.0, t_create, n_create, ratio);
    report_ratio(&rep, "create_over_scan", median_of(t_create, n_create) / m_scan);
    snprintf(ratio, sizeof ratio, "%.2fx scan", median_of(t_scan_mt, runs) / m_scan);
    report_add(&rep, "scan_mt", "s", 1.0, t_scan_mt, runs, ratio);
    report_ratio(&rep, "create_over_scan_mt",
                 median_of(t_create, n_create) / median_of(t_scan_mt, runs));
    snprintf(ratio, sizeof ratio, "%.2fx scan", median_of(t_create_fresh, runs) / m_scan);
    report_add(&rep, "create_fresh", "s", 1.0, t_create_fresh, runs, ratio);
    report_ratio(&rep, "create_fresh_over_scan", median_of(t_create_fresh, runs) / m_scan);
    report_add(&rep, "scan_fresh", "s", 1.0, t_scan_fresh, runs, NULL);
    report_ratio(&rep, "create_fresh_over_scan_fresh", median_of(fresh_ratio, runs));
    if (median_of(t_create, n_create) < 0.5 * m_scan)
      printf("note: CREATE took less than half a scan; the extension may build the graph "
             "lazily, so see sql_sssp_first for the deferred cost\n");
  }
  double m_eng = median_of(t_eng, runs), m_base = median_of(t_base, runs);
  snprintf(ratio, sizeof ratio, "%.2fx baseline", m_eng / m_base);
  report_add(&rep, "sssp_engine", "ms", 1e3, t_eng, runs, ratio);
  report_add(&rep, "sssp_baseline", "ms", 1e3, t_base, runs, "1.00x (reference)");
  report_ratio(&rep, "sssp_engine_over_baseline", m_eng / m_base);
  double m_par = median_of(t_par, runs);
  snprintf(ratio, sizeof ratio, "%.2fx baseline, %d threads", m_par / m_base, dyng_threads());
  report_add(&rep, "sssp_parallel", "ms", 1e3, t_par, runs, ratio);
  report_ratio(&rep, "sssp_parallel_over_baseline", m_par / m_base);
  if (n_sql) {
    snprintf(ratio, sizeof ratio, "%.2fx engine SSSP", median_of(t_sql_first, n_sql) / m_eng);
    report_add(&rep, "sql_sssp_first", "ms", 1e3, t_sql_first, n_sql, ratio);
    report_add(&rep, "sql_sssp_repeat", "ms", 1e3, t_sql_repeat, n_sql, NULL);
    report_ratio(&rep, "sql_sssp_first_over_engine", median_of(t_sql_first, n_sql) / m_eng);
  }

  printf("\n%lld edges, %u vertices (%.0f reached per source on average); engine graph "
         "%.1f MiB; baseline CSR built in %.3f s",
         n_rows, n_vertices, reached_sum / n_sources, graph_bytes / 1048576.0, t_csr);
  if (sql_ok || n_sql) printf("; CREATE for SQL SSSP %.3f s", t_create_sql);
  printf("\n\n| %s | median | min | max | n | ratio of medians |\n", db_label);
  printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  printf("\n");
  report_print_lines(&rep);

  free(t_scan);
  free(t_load);
  free(t_create);
  free(t_scan_mt);
  free(t_create_fresh);
  free(t_scan_fresh);
  free(fresh_ratio);
  free(t_eng);
  free(t_base);
  free(t_par);
  free(t_sql_first);
  free(t_sql_repeat);
  free(source);
  return 0;
}
