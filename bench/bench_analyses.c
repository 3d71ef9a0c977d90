/*
** bench/bench_analyses.c: how fast the kept analyses follow a batch of
** changes against computing them again: k-cycle counts
** (dyng_cycles_update against dyng_cycles_count) and the multi-objective
** path of three kept shortest-path trees (three dyng_sssp_update and
** dyng_mosp_path against three dyng_sssp_dijkstra and dyng_mosp_path).
**
**   bench_analyses cycles DB.db [--counts 3,4,d3] [--sizes K1,...] [--runs N]
**                  [--max-update SECONDS] [--verbose]
**   bench_analyses mosp DB.db [--sizes K1,...] [--runs N] [--verbose]
**
** DB.db holds the table edges(src, dst, length, minutes, toll) that
** gen_graph writes; it is only read.  The program works on the engine
** directly (no extension, no SQL but the scan).
**
** cycles: the table is loaded unweighted, as an undirected graph for the
**   counts "3", "4", ... (cycles of the undirected simple graph) and as a
**   directed one, in adjacency built, for "d3", "d4", ... (directed simple
**   cycles).  Each count is first timed from scratch on the table's graph.
**   Then for each batch size K (default 50,000) and each run: K/2 deletes
**   of rowids drawn uniformly from the live edges and K - K/2 inserts of
**   new rowids between two distinct live vertices drawn uniformly, applied
**   with dyng_graph_apply_tracked; per count, dyng_cycles_update of the
**   count before the batch and dyng_cycles_count on the new graph (the
**   two alternate going first) must agree, or the program aborts.  An
**   update slower than 10 s is not repeated in later runs, and one still
**   running after --max-update seconds (default 120) is stopped through
**   dyng_cancel and reported as a bound (4-cycles on RMAT graphs: the
**   update after 50,000 changes takes over a minute).
**
** mosp: the table is loaded as a directed graph with the weights length,
**   minutes and toll, in adjacency built.  The source is, of up to 8 rows'
**   sources drawn with a fixed seed, the one whose length tree reaches the
**   most vertices; the target the vertex it reaches farthest in length.
**   One tree per objective is kept.  For each batch size K (default 1,000
**   and 50,000) and each run: K/2 deletes of random rowids and K - K/2
**   inserts from a random live vertex to the end of a 2- or 3-step random
**   walk from it (a new road between nearby places), with the weights of a
**   random existing edge; then
**     (a) the three kept trees brought up to date by dyng_sssp_update (no
**         work limit) and dyng_mosp_path over them;
**     (b) three trees computed again by dyng_sssp_dijkstra and
**         dyng_mosp_path over those;
**   (a) and (b) alternate going first.  The two sets of trees must give the
**   same distances (relative 1e-9) and, by the tie rule (docs/sql.md,
**   "Ties"), the same parent edge for every vertex, also where shortest
**   paths tie (90% of the tolls are 0); every updated tree vertex must
**   hang from a live edge that closes its distance; the two paths must be
**   the same edges, run from the source to the target over live edges and
**   be the shortest of their ensemble graph (checked by an independent
**   search).  The program aborts otherwise.
**
** In both modes the inverse batch then restores the graph (untimed), and
** the kept trees are computed again, so every batch meets the table's
** graph.  Medians over the runs (default 5) are reported, with min and
** max, as a Markdown table and `BENCH db=... metric=...` lines.
**
** How it works: one process, one thread, the drawing and restoring of
** batches as in bench_dyn.c.
*/
#include "bench/bench_util.h"
#include "engine/cycles.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/mosp.h"
#include "engine/sssp.h"

#include <sqlite3.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_WEIGHTS 3          /* length, minutes, toll */
#define MAX_SIZES 8
#define MAX_COUNTS 8
#define DIST_TOLERANCE 1e-9  /* relative */

const char bench_program[] = "bench_analyses";

/* ---- loading ------------------------------------------------------------ */

/* Opens the database at db_path read-only and loads its edges(...) into a
** new sealed engine graph (caller frees) with n_weights (0 or N_WEIGHTS)
** weights, directed or not (load_graph); every rowid goes into *pool;
** *t_load gets the seconds it took, the open included. */
static dyng_graph *load_graph_file(const char *db_path, int n_weights, int directed,
                                   rowid_pool *pool, double *t_load) {
  double t0 = now_s();
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    die("%s: %s", db_path, sqlite3_errmsg(db));
  dyng_graph *g = load_graph(db, n_weights, directed, pool);
  sqlite3_close(db);
  *t_load = now_s() - t0;
  return g;
}

/* ---- applying a batch ----------------------------------------------------- */

/* Draws a batch of n_del deletes and n_ins inserts and applies it with
** dyng_graph_apply_tracked into *changes; returns the seconds the apply
** took. */
static double apply_batch(dyng_graph *g, rowid_pool *pool, dyng_batch *b, long n_del,
                          long n_ins, int local, uint64_t *rng, dyng_changes *changes) {
  draw_batch(g, pool, b, n_del, n_ins, local, rng);
  dyng_apply_stats st;
  double t0 = now_s();
  int rc = dyng_graph_apply_tracked(g, b, &st, changes);
  double t = now_s() - t0;
  if (rc) die("dyng_graph_apply_tracked: %s", dyng_strerror(rc));
  if (st.deleted != (size_t)n_del || st.inserted != (size_t)n_ins || st.missing)
    die("applied %zu inserts and %zu deletes (%zu missing), drew %ld and %ld", st.inserted,
        st.deleted, st.missing, n_ins, n_del);
  return t;
}

/* ---- command line ------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: bench_analyses cycles DB.db [--counts 3,4,d3] [--sizes K1,...] [--runs N]\n"
          "                      [--max-update SECONDS] [--verbose]\n"
          "       bench_analyses mosp DB.db [--sizes K1,...] [--runs N] [--verbose]\n");
  exit(2);
}

/* Parses "K1,K2,..." (each >= 2) into sizes[]; returns how many. */
static int parse_sizes(const char *list, long *sizes) {
  int n = 0;
  for (const char *s = list; *s;) {
    char *end;
    long k = strtol(s, &end, 10);
    if (end == s || k < 2 || n == MAX_SIZES || (*end && *end != ',')) usage();
    sizes[n++] = k;
    s = *end ? end + 1 : end;
  }
  if (n == 0) usage();
  return n;
}

/* The options both modes take. */
typedef struct options {
  const char *db_path;
  const char *db_base;   /* its last path component, for the BENCH lines */
  const char *counts;    /* cycles: "3,4,d3" */
  long sizes[MAX_SIZES];
  int n_sizes;
  int runs;
  double max_update;     /* cycles: seconds before an update is stopped */
  int verbose;
} options;

/* ---- cycles ------------------------------------------------------------- */

/* An update slower than this, or interrupted, is not run again in later
** runs of its batch size (only the recount is): on RMAT graphs the update
** of a 4-cycle count after 50,000 changes takes over a minute. */
#define SLOW_UPDATE_S 10.0

/* One count measured: k-cycles, directed or not, and its timings. */
typedef struct count_case {
  int k;
  int directed;                  /* directed cycles, on the directed graph */
  char name[8];                  /* "u3", "d3": metric names */
  uint64_t base;                 /* the count on the table's graph */
  double *t_count;               /* from scratch on the table's graph, per run */
  double *t_update[MAX_SIZES];   /* dyng_cycles_update, per run that ran it */
  int n_update[MAX_SIZES];       /* runs that ran it */
  int interrupted[MAX_SIZES];    /* it ran past --max-update and was stopped */
  double *t_recount[MAX_SIZES];  /* dyng_cycles_count on the new graph, per run */
  double *after[MAX_SIZES];      /* the count after the batch, per run */
} count_case;

/* dyng_cancel's callback: stop once the clock passes *(double *)deadline. */
static int past_deadline(void *deadline) { return now_s() > *(const double *)deadline; }

/* The count of case c on view g, timed into *t; dies on error. */
static uint64_t timed_count(const dyng_graph_view *g, const count_case *c, double *t) {
  uint64_t n;
  double t0 = now_s();
  int rc = dyng_cycles_count(g, c->k, c->directed, NULL, &n);
  *t = now_s() - t0;
  if (rc)
    die("dyng_cycles_count(k=%d%s): %s", c->k, c->directed ? ", directed" : "",
        dyng_strerror(rc));
  return n;
}

/* Times the counts of cc[] that belong to graph g (directed or not) from
** scratch, then runs every batch size on g: per run a batch, per count the
** update and the recount (which must agree), then the inverse batch.
** apply[si] gets the apply times. */
static void cycles_on_graph(dyng_graph *g, rowid_pool *pool, count_case *cc, int n_cc,
                            const options *o, double **apply, uint64_t seed) {
  int directed = dyng_graph_directed(g);
  dyng_batch *batch = dyng_batch_new(0);
  if (!batch) die("dyng_batch_new: out of memory");
  dyng_changes changes;
  memset(&changes, 0, sizeof changes);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint64_t rng = seed;
  for (int i = 0; i < n_cc; i++) {
    if (cc[i].directed != directed) continue;
    for (int r = 0; r < o->runs; r++) {
      uint64_t n = timed_count(&view, &cc[i], &cc[i].t_count[r]);
      if (r == 0) cc[i].base = n;
      else if (n != cc[i].base)
        die("count %s: %" PRIu64 " then %" PRIu64, cc[i].name, cc[i].base, n);
    }
  }
  for (int si = 0; si < o->n_sizes; si++) {
    long n_del = o->sizes[si] / 2, n_ins = o->sizes[si] - n_del;
    for (int r = 0; r < o->runs; r++) {
      apply[si][r] = apply_batch(g, pool, batch, n_del, n_ins, 0, &rng, &changes);
      dyng_graph_get_view(g, &view);
      for (int i = 0; i < n_cc; i++) {
        count_case *c = &cc[i];
        if (c->directed != directed) continue;
        int skip = c->interrupted[si] ||
                   (c->n_update[si] && c->t_update[si][c->n_update[si] - 1] > SLOW_UPDATE_S);
        int was_skipped = skip;
        uint64_t updated = c->base, recounted = 0;
        for (int step = 0; step < 2; step++) {
          if ((step == 0) != (r % 2 == 0)) {
            recounted = timed_count(&view, c, &c->t_recount[si][r]);
          } else if (!skip) {
            double deadline = now_s() + o->max_update;
            dyng_cancel cancel = {past_deadline, &deadline, NULL};
            double t0 = now_s();
            int rc = dyng_cycles_update(&view, &changes, c->k, c->directed, &cancel, &updated);
            c->t_update[si][c->n_update[si]++] = now_s() - t0;
            if (rc == DYNG_EINTERRUPTED) c->interrupted[si] = skip = 1;
            else if (rc) die("dyng_cycles_update(%s): %s", c->name, dyng_strerror(rc));
          }
        }
        if (!skip && updated != recounted) {
          fprintf(stderr,
                  "bench_analyses: %s: count %s, batch %ld run %d: update says %" PRIu64
                  ", recount %" PRIu64 " (before %" PRIu64 ")\n",
                  o->db_base, c->name, o->sizes[si], r + 1, updated, recounted, c->base);
          abort();
        }
        c->after[si][r] = (double)recounted;
        if (o->verbose)
          printf("%s batch %ld run %d: %" PRIu64 " -> %" PRIu64 " cycles; update %s, "
                 "recount %.3f ms\n",
                 c->name, o->sizes[si], r + 1, c->base, recounted,
                 was_skipped ? "not repeated" : skip ? "stopped" : "equal to it",
                 1e3 * c->t_recount[si][r]);
      }
      if (o->verbose)
        printf("batch %ld run %d (%s graph): apply %.3f ms\n", o->sizes[si], r + 1,
               directed ? "directed" : "undirected", 1e3 * apply[si][r]);
      restore_graph(g, pool, batch, &changes);
      dyng_graph_get_view(g, &view);
    }
  }
  dyng_changes_free(&changes);
  dyng_batch_free(batch);
}

static int run_cycles(const options *o) {
  count_case cc[MAX_COUNTS];
  int n_cc = 0, want[2] = {0, 0};
  for (const char *s = o->counts; *s;) {
    int directed = *s == 'd';
    if (directed || *s == 'u') s++;
    char *end;
    long k = strtol(s, &end, 10);
    if (end == s || k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K || n_cc == MAX_COUNTS ||
        (*end && *end != ','))
      usage();
    count_case *c = &cc[n_cc++];
    memset(c, 0, sizeof *c);
    c->k = (int)k;
    c->directed = directed;
    snprintf(c->name, sizeof c->name, "%c%d", directed ? 'd' : 'u', c->k);
    c->t_count = xmalloc((size_t)o->runs * sizeof(double));
    for (int si = 0; si < o->n_sizes; si++) {
      c->t_update[si] = xmalloc((size_t)o->runs * sizeof(double));
      c->t_recount[si] = xmalloc((size_t)o->runs * sizeof(double));
      c->after[si] = xmalloc((size_t)o->runs * sizeof(double));
    }
    want[directed] = 1;
    s = *end ? end + 1 : end;
  }
  if (n_cc == 0) usage();

  printf("# bench_analyses cycles %s\n", o->db_path);
  printf("inserts between uniformly drawn vertex pairs, deletes of random rowids; %d runs; "
         "an update over %.0f s is not repeated, one over %.0f s is stopped\n",
         o->runs, SLOW_UPDATE_S, o->max_update);
  double *apply[2][MAX_SIZES];
  double t_all = now_s();
  for (int directed = 0; directed < 2; directed++) {
    if (!want[directed]) continue;
    for (int si = 0; si < o->n_sizes; si++)
      apply[directed][si] = xmalloc((size_t)o->runs * sizeof(double));
    rowid_pool pool = {0};
    double t_load;
    dyng_graph *g = load_graph_file(o->db_path, 0, directed, &pool, &t_load);
    uint32_t n_edges = dyng_graph_n_edges(g);
    printf("%s graph, unweighted: %u edges, %u vertices; loaded in %.2f s\n",
           directed ? "directed (in adjacency built)" : "undirected", n_edges,
           dyng_graph_n_vertices(g), t_load);
    fflush(stdout);
    cycles_on_graph(g, &pool, cc, n_cc, o, apply[directed], 20240601 + (uint64_t)directed);
    if (dyng_graph_check(g) != 0) die("dyng_graph_check failed after the batches");
    if (dyng_graph_n_edges(g) != n_edges)
      die("%u edges after restoring the graph, %u before", dyng_graph_n_edges(g), n_edges);
    dyng_graph_free(g);
    free(pool.rowid);
  }
  printf("%.1f s in all; every update that finished equal to the recount\n\n",
         now_s() - t_all);

  report rep;
  report_init(&rep, o->db_base);
  printf("| %s: cycles | k | count ms | cycles | batch | apply ms | update ms | recount ms | "
         "recount / update | cycles after | update runs |\n",
         o->db_base);
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int i = 0; i < n_cc; i++) {
    count_case *c = &cc[i];
    char metric[64], text[64], name[32];
    snprintf(metric, sizeof metric, "count_%s", c->name);
    report_add(&rep, metric, "ms", 1e3, c->t_count, o->runs, NULL);
    for (int si = 0; si < o->n_sizes; si++) {
      size_name(o->sizes[si], name, sizeof name);
      int nu = c->n_update[si];
      const char *bound = c->interrupted[si] ? ">" : "";
      double mu = median_of(c->t_update[si], nu), mr = median_of(c->t_recount[si], o->runs);
      printf("| %s | %d | %.4g | %" PRIu64 " | %ld | %.4g | %s%.4g | %.4g | %s%.3gx | %.0f | "
             "%d%s |\n",
             c->directed ? "directed" : "undirected", c->k, 1e3 * median_of(c->t_count, o->runs),
             c->base, o->sizes[si], 1e3 * median_of(apply[c->directed][si], o->runs), bound,
             1e3 * mu, 1e3 * mr, c->interrupted[si] ? "<" : "", mr / mu,
             median_of(c->after[si], o->runs), nu, c->interrupted[si] ? " (stopped)" : "");
      snprintf(metric, sizeof metric, "update_%s_%s", c->name, name);
      snprintf(text, sizeof text, "recount / update = %s%.3gx%s", c->interrupted[si] ? "<" : "",
               mr / mu, c->interrupted[si] ? " (update stopped)" : "");
      report_add(&rep, metric, "ms", 1e3, c->t_update[si], nu, text);
      snprintf(metric, sizeof metric, "recount_%s_%s", c->name, name);
      report_add(&rep, metric, "ms", 1e3, c->t_recount[si], o->runs, NULL);
      snprintf(metric, sizeof metric, "recount_over_update_%s_%s%s", c->name, name,
               c->interrupted[si] ? "_at_most" : "");
      report_ratio(&rep, metric, mr / mu);
    }
  }
  for (int directed = 0; directed < 2; directed++)
    for (int si = 0; want[directed] && si < o->n_sizes; si++) {
      char metric[64], name[32];
      size_name(o->sizes[si], name, sizeof name);
      snprintf(metric, sizeof metric, "apply_%s_%s", directed ? "directed" : "undirected", name);
      report_add(&rep, metric, "ms", 1e3, apply[directed][si], o->runs, NULL);
    }
  printf("\n| %s | median | min | max | n | ratio of medians |\n", o->db_base);
  printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  printf("\n");
  report_print_lines(&rep);

  for (int i = 0; i < n_cc; i++) {
    free(cc[i].t_count);
    for (int si = 0; si < o->n_sizes; si++) {
      free(cc[i].t_update[si]);
      free(cc[i].t_recount[si]);
      free(cc[i].after[si]);
    }
  }
  for (int directed = 0; directed < 2; directed++)
    for (int si = 0; want[directed] && si < o->n_sizes; si++) free(apply[directed][si]);
  return 0;
}

/* ---- MOSP --------------------------------------------------------------- */

/* A from-scratch tree. */
static void fresh_tree(const dyng_graph_view *view, uint32_t source, int objective,
                       dyng_sssp_tree *t) {
  int rc = dyng_sssp_dijkstra(view, source, objective, DYNG_NONE, t);
  if (rc) die("computing the tree: %s", dyng_strerror(rc));
}

/* Aborts unless `upd` (an updated tree) and `ref` (computed from scratch on
** the same graph) reach the same vertices at distances within
** DIST_TOLERANCE, and every reached vertex of upd other than the source
** hangs from a live edge parent -> v whose weight closes its distance.
** By the tie rule both trees also give every vertex the same parent edge,
** where shortest paths tie (a toll of 0 on 90% of the grid's roads makes
** many ties) as elsewhere. */
static void check_trees(const dyng_graph_view *g, const dyng_sssp_tree *upd,
                            const dyng_sssp_tree *ref, const char *what) {
  for (uint32_t v = 0; v < g->n_vertices; v++) {
    double du = upd->dist[v], dr = ref->dist[v];
    if (!(isinf(dr) ? isinf(du) : fabs(du - dr) <= DIST_TOLERANCE * dr)) {
      fprintf(stderr,
              "bench_analyses: %s: objective %d: MISMATCH at node %lld: update %.17g, "
              "recompute %.17g\n",
              what, upd->objective, (long long)g->node_id[v], du, dr);
      abort();
    }
    if (isinf(du) || v == upd->source) continue;
    uint32_t p = upd->parent[v], e = upd->parent_edge[v];
    double via = p == DYNG_NONE || e >= g->n_edge_slots || g->edge_src[e] != p ||
                         g->edge_dst[e] != v
                     ? NAN
                     : upd->dist[p] + g->out.w[upd->objective][g->edge_pos_out[e]];
    if (!(fabs(via - du) <= DIST_TOLERANCE * du)) {
      fprintf(stderr,
              "bench_analyses: %s: objective %d: BAD TREE at node %lld: dist %.17g, parent %u "
              "via edge slot %u gives %.17g\n",
              what, upd->objective, (long long)g->node_id[v], du, p, e, via);
      abort();
    }
    if (e != ref->parent_edge[v]) {
      fprintf(stderr,
              "bench_analyses: %s: objective %d: TIE RULE at node %lld: the update keeps edge slot "
              "%u, the recompute %u\n",
              what, upd->objective, (long long)g->node_id[v], e, ref->parent_edge[v]);
      abort();
    }
  }
}

/* The cost from source to target in the ensemble graph of trees t[0..K-1]
** (every tree edge parent -> v once, weighing K + 1 - the trees holding
** it), computed here independently of dyng_mosp_path: a Dial's queue over
** the edges into each vertex, reversed into lists by parent.  INFINITY
** when the target is not reached. */
static double ensemble_distance(const dyng_sssp_tree *const *t, uint32_t n, uint32_t source,
                                uint32_t target) {
  /* Out-lists: for each vertex v and each distinct parent edge of v. */
  uint32_t *head = xmalloc((size_t)n * sizeof *head);
  uint32_t *next = xmalloc((size_t)N_WEIGHTS * n * sizeof *next);
  uint32_t *to = xmalloc((size_t)N_WEIGHTS * n * sizeof *to);
  uint8_t *cost = xmalloc((size_t)N_WEIGHTS * n);
  uint32_t n_arcs = 0;
  for (uint32_t v = 0; v < n; v++) head[v] = DYNG_NONE;
  for (uint32_t v = 0; v < n; v++)
    for (int k = 0; k < N_WEIGHTS; k++) {
      uint32_t e = t[k]->parent_edge[v];
      int seen = 0, holders = 0;
      for (int j = 0; j < N_WEIGHTS; j++) {
        if (t[j]->parent_edge[v] != e) continue;
        holders++;
        seen |= j < k;
      }
      if (e == DYNG_NONE || seen) continue;
      uint32_t u = t[k]->parent[v];
      to[n_arcs] = v;
      cost[n_arcs] = (uint8_t)(N_WEIGHTS + 1 - holders);
      next[n_arcs] = head[u];
      head[u] = n_arcs++;
    }
  /* Dial: distances are integers, arcs at most N_WEIGHTS long, so
  ** N_WEIGHTS + 1 buckets used round-robin. */
  uint32_t *dist = xmalloc((size_t)n * sizeof *dist);
  uint32_t *bucket[N_WEIGHTS + 1];
  size_t bn[N_WEIGHTS + 1] = {0}, bcap[N_WEIGHTS + 1];
  for (int i = 0; i <= N_WEIGHTS; i++) bucket[i] = xmalloc((bcap[i] = 1024) * sizeof(uint32_t));
  for (uint32_t v = 0; v < n; v++) dist[v] = UINT32_MAX;
  dist[source] = 0;
  bucket[0][bn[0]++] = source;
  size_t queued = 1;
  double found = INFINITY;
  for (uint32_t d = 0; queued; d++) {
    uint32_t *q = bucket[d % (N_WEIGHTS + 1)];
    size_t *qn = &bn[d % (N_WEIGHTS + 1)];
    while (*qn) {
      uint32_t u = q[--*qn];
      queued--;
      if (dist[u] != d) continue;
      if (u == target) found = d;
      for (uint32_t a = head[u]; a != DYNG_NONE; a = next[a]) {
        uint32_t nd = d + cost[a], x = to[a];
        if (nd >= dist[x]) continue;
        dist[x] = nd;
        int i = (int)(nd % (N_WEIGHTS + 1));
        if (bn[i] == bcap[i]) {
          bucket[i] = realloc(bucket[i], (bcap[i] *= 2) * sizeof(uint32_t));
          if (!bucket[i]) die("out of memory (ensemble queue)");
        }
        bucket[i][bn[i]++] = x;
        queued++;
      }
    }
    if (!isinf(found)) break;
  }
  for (int i = 0; i <= N_WEIGHTS; i++) free(bucket[i]);
  free(dist);
  free(head);
  free(next);
  free(to);
  free(cost);
  return found;
}

/* Aborts unless path p runs from source to target over live edges, each
** from one path vertex to the next, and its ensemble cost is both the sum
** over its edges of K + 1 - (the trees of t[0..K-1] holding that edge) and
** the shortest in the ensemble graph (ensemble_distance).  Puts its cost
** per objective into cost[]. */
static void check_path(const dyng_graph_view *g, const dyng_sssp_tree *const *t,
                       const dyng_path *p, uint32_t source, uint32_t target, const char *what,
                       double cost[N_WEIGHTS]) {
  if (p->n == 0 || p->vertex[0] != source || p->vertex[p->n - 1] != target) {
    fprintf(stderr, "bench_analyses: %s: BAD PATH: %u vertices, from %u to %u\n", what, p->n,
            p->n ? p->vertex[0] : DYNG_NONE, p->n ? p->vertex[p->n - 1] : DYNG_NONE);
    abort();
  }
  double ensemble = 0.0;
  for (int k = 0; k < N_WEIGHTS; k++) cost[k] = 0.0;
  for (uint32_t i = 0; i + 1 < p->n; i++) {
    uint32_t e = p->edge[i], v = p->vertex[i + 1];
    if (e >= g->n_edge_slots || g->edge_src[e] != p->vertex[i] || g->edge_dst[e] != v) {
      fprintf(stderr, "bench_analyses: %s: BAD PATH: step %u, edge slot %u does not join "
              "node %lld to node %lld\n",
              what, i, e, (long long)g->node_id[p->vertex[i]], (long long)g->node_id[v]);
      abort();
    }
    int n_trees = 0;
    for (int k = 0; k < N_WEIGHTS; k++) {
      n_trees += t[k]->parent_edge[v] == e;
      cost[k] += g->out.w[k][g->edge_pos_out[e]];
    }
    if (n_trees == 0) {
      fprintf(stderr, "bench_analyses: %s: BAD PATH: step %u is in no tree\n", what, i);
      abort();
    }
    ensemble += N_WEIGHTS + 1 - n_trees;
  }
  double shortest = ensemble_distance(t, g->n_vertices, source, target);
  if (ensemble != p->ensemble_cost || shortest != p->ensemble_cost) {
    fprintf(stderr,
            "bench_analyses: %s: BAD PATH: ensemble cost %.17g, its edges say %.17g, the "
            "shortest in the ensemble graph is %.17g\n",
            what, p->ensemble_cost, ensemble, shortest);
    abort();
  }
}

/* The ensemble path over the three trees t[] into *p (freed first), timed
** into *dt. */
static void timed_path(const dyng_graph_view *view, dyng_sssp_tree *t, uint32_t source,
                       uint32_t target, dyng_path *p, double *dt) {
  const dyng_sssp_tree *trees[N_WEIGHTS] = {&t[0], &t[1], &t[2]};
  dyng_path_free(p);
  double t0 = now_s();
  int rc = dyng_mosp_path(trees, N_WEIGHTS, view->n_vertices, view->n_edge_slots, view->edge_rowid, source,
                          target, p);
  *dt = now_s() - t0;
  if (rc) die("dyng_mosp_path: %s", dyng_strerror(rc));
}

/* Timings of one batch size. */
typedef struct mosp_result {
  double *apply;
  double *update_trees, *update_path, *update_total;          /* (a) */
  double *recompute_trees, *recompute_path, *recompute_total; /* (b) */
  double *touched;          /* vertices the three updates reset or improved */
  double *ensemble_a;       /* the path's ensemble cost, (a) */
  double *ensemble_b;       /* and (b) */
  double *hops;             /* edges of (a)'s path */
} mosp_result;

static int run_mosp(const options *o) {
  printf("# bench_analyses mosp %s\n", o->db_path);
  rowid_pool pool = {0};
  double t_load;
  dyng_graph *g = load_graph_file(o->db_path, N_WEIGHTS, 1, &pool, &t_load);
  uint32_t n_edges = dyng_graph_n_edges(g), n_live = dyng_graph_n_vertices(g);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);

  dyng_sssp_tree kept[N_WEIGHTS], fresh[N_WEIGHTS];
  for (int k = 0; k < N_WEIGHTS; k++) {
    int rc = dyng_sssp_tree_init(&kept[k], view.n_vertices);
    if (rc == 0) rc = dyng_sssp_tree_init(&fresh[k], view.n_vertices);
    if (rc) die("dyng_sssp_tree_init: %s", dyng_strerror(rc));
  }
  /* The source: of up to 8 rows' sources drawn with a fixed seed, the one
  ** whose length tree reaches the most vertices (90% of the live ones wins
  ** at once); the target: the vertex it reaches farthest in length. */
  uint64_t rng = 20240601;
  uint32_t source = DYNG_NONE, best_reached = 0;
  for (int c = 0; c < 8 && best_reached < 0.9 * n_live; c++) {
    uint32_t slot;
    int64_t rowid = pool.rowid[splitmix64(&rng) % pool.n];
    if (dyng_graph_edge(g, rowid, &slot)) die("rowid %lld not in the graph", (long long)rowid);
    uint32_t s = dyng_graph_edge_src(g, slot);
    int rc = dyng_sssp_dijkstra(&view, s, 0, DYNG_NONE, &fresh[0]);
    if (rc) die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
    if (fresh[0].n_reached > best_reached) best_reached = fresh[0].n_reached, source = s;
  }
  uint32_t target = source;
  double t_scratch[N_WEIGHTS];
  for (int k = 0; k < N_WEIGHTS; k++) {
    double t0 = now_s();
    int rc = dyng_sssp_dijkstra(&view, source, k, DYNG_NONE, &fresh[k]);
    t_scratch[k] = now_s() - t0;
    if (rc) die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
    fresh_tree(&view, source, k, &kept[k]);
  }
  for (uint32_t v = 0; v < view.n_vertices; v++)
    if (!isinf(kept[0].dist[v]) && kept[0].dist[v] > kept[0].dist[target]) target = v;
  dyng_path path_a, path_b;
  memset(&path_a, 0, sizeof path_a);
  memset(&path_b, 0, sizeof path_b);
  double t_path0, cost0[N_WEIGHTS];
  timed_path(&view, kept, source, target, &path_a, &t_path0);
  const dyng_sssp_tree *kept_p[N_WEIGHTS] = {&kept[0], &kept[1], &kept[2]};
  const dyng_sssp_tree *fresh_p[N_WEIGHTS] = {&fresh[0], &fresh[1], &fresh[2]};
  check_path(&view, kept_p, &path_a, source, target, "table's graph", cost0);

  printf("directed, weights length,minutes,toll: %u edges, %u vertices; loaded (with in "
         "adjacency) in %.2f s\n",
         n_edges, n_live, t_load);
  printf("source node %lld reaches %u vertices (%.1f%%); target node %lld, %.1f away in "
         "length\n",
         (long long)dyng_graph_node_id(g, source), best_reached, 100.0 * best_reached / n_live,
         (long long)dyng_graph_node_id(g, target), kept[0].dist[target]);
  printf("trees from scratch: length %.1f ms, minutes %.1f ms, toll %.1f ms; ensemble path "
         "%.1f ms: %u edges, ensemble cost %.0f, length %.1f, minutes %.1f, toll %.1f "
         "(shortest: %.1f, %.1f, %.1f)\n",
         1e3 * t_scratch[0], 1e3 * t_scratch[1], 1e3 * t_scratch[2], 1e3 * t_path0,
         path_a.n - 1, path_a.ensemble_cost, cost0[0], cost0[1], cost0[2],
         kept[0].dist[target], kept[1].dist[target], kept[2].dist[target]);
  printf("inserts local (2-3 steps downstream), deletes of random rowids; %d runs per size\n",
         o->runs);
  fflush(stdout);

  dyng_batch *batch = dyng_batch_new(N_WEIGHTS);
  if (!batch) die("dyng_batch_new: out of memory");
  dyng_changes changes;
  memset(&changes, 0, sizeof changes);
  mosp_result res[MAX_SIZES];
  double t_all = now_s();
  for (int si = 0; si < o->n_sizes; si++) {
    mosp_result *m = &res[si];
    double **cols[] = {&m->apply, &m->update_trees, &m->update_path, &m->update_total,
                       &m->recompute_trees, &m->recompute_path, &m->recompute_total,
                       &m->touched, &m->ensemble_a, &m->ensemble_b, &m->hops};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
      *cols[i] = xmalloc((size_t)o->runs * sizeof(double));
    long n_del = o->sizes[si] / 2, n_ins = o->sizes[si] - n_del;
    for (int r = 0; r < o->runs; r++) {
      m->apply[r] = apply_batch(g, &pool, batch, n_del, n_ins, 1, &rng, &changes);
      dyng_graph_get_view(g, &view);
      size_t touched_all = 0;
      for (int step = 0; step < 2; step++) {
        if ((step == 0) == (r % 2 == 0)) {
          double t0 = now_s();
          for (int k = 0; k < N_WEIGHTS; k++) {
            size_t touched = 0;
            int rc = dyng_sssp_update(&view, &kept[k], changes.removed, changes.n_removed,
                                      changes.added, changes.n_added, 0, &touched);
            if (rc) die("dyng_sssp_update(objective %d): %s", k, dyng_strerror(rc));
            touched_all += touched;
          }
          m->update_trees[r] = now_s() - t0;
          timed_path(&view, kept, source, target, &path_a, &m->update_path[r]);
          m->update_total[r] = m->update_trees[r] + m->update_path[r];
        } else {
          double t0 = now_s();
          for (int k = 0; k < N_WEIGHTS; k++) {
            int rc = dyng_sssp_dijkstra(&view, source, k, DYNG_NONE, &fresh[k]);
            if (rc) die("dyng_sssp_dijkstra(objective %d): %s", k, dyng_strerror(rc));
          }
          m->recompute_trees[r] = now_s() - t0;
          timed_path(&view, fresh, source, target, &path_b, &m->recompute_path[r]);
          m->recompute_total[r] = m->recompute_trees[r] + m->recompute_path[r];
        }
      }
      m->touched[r] = (double)touched_all;

      /* The checks: equal distances and parents, valid trees and paths,
      ** the same path, the shortest of its ensemble graph. */
      char what[64];
      snprintf(what, sizeof what, "batch %ld run %d", o->sizes[si], r + 1);
      for (int k = 0; k < N_WEIGHTS; k++) check_trees(&view, &kept[k], &fresh[k], what);
      double cost_a[N_WEIGHTS], cost_b[N_WEIGHTS];
      if (path_a.n == 0 || path_b.n == 0) {
        if (path_a.n != path_b.n)
          die("%s: the target is reached after the %s only", what,
              path_a.n ? "update" : "recompute");
        m->ensemble_a[r] = m->ensemble_b[r] = m->hops[r] = NAN;
      } else {
        check_path(&view, kept_p, &path_a, source, target, what, cost_a);
        check_path(&view, fresh_p, &path_b, source, target, what, cost_b);
        int same = path_a.n == path_b.n && path_a.ensemble_cost == path_b.ensemble_cost;
        for (uint32_t i = 0; same && i + 1 < path_a.n; i++)
          same = path_a.edge[i] == path_b.edge[i];
        if (!same) {
          fprintf(stderr,
                  "bench_analyses: %s: the paths differ from the same trees: ensemble cost %.17g / "
                  "%.17g, length %.6g / %.6g, minutes %.6g / %.6g, toll %.6g / %.6g\n",
                  what, path_a.ensemble_cost, path_b.ensemble_cost, cost_a[0], cost_b[0], cost_a[1],
                  cost_b[1], cost_a[2], cost_b[2]);
          abort();
        }
        m->ensemble_a[r] = path_a.ensemble_cost;
        m->ensemble_b[r] = path_b.ensemble_cost;
        m->hops[r] = path_a.n - 1;
      }
      if (o->verbose)
        printf("%s: apply %.3f ms; (a) update %.3f + path %.3f ms, touched %zu; (b) "
               "recompute %.3f + path %.3f ms\n",
               what, 1e3 * m->apply[r], 1e3 * m->update_trees[r], 1e3 * m->update_path[r],
               touched_all, 1e3 * m->recompute_trees[r], 1e3 * m->recompute_path[r]);

      restore_graph(g, &pool, batch, &changes);
      dyng_graph_get_view(g, &view);
      for (int k = 0; k < N_WEIGHTS; k++) fresh_tree(&view, source, k, &kept[k]);
    }
  }
  double t_loop = now_s() - t_all;
  if (dyng_graph_check(g) != 0) die("dyng_graph_check failed after the batches");
  if (dyng_graph_n_edges(g) != n_edges)
    die("%u edges after restoring the graph, %u before", dyng_graph_n_edges(g), n_edges);

  printf("\n%.1f s for the batches; distances and parents equal to the recomputed ones, "
         "trees and paths valid, the same paths, each the shortest of its ensemble graph\n\n",
         t_loop);
  report rep;
  report_init(&rep, o->db_base);
  printf("| %s: batch | apply ms | (a) 3 updates ms | (a) path ms | (a) total ms | (b) 3 "
         "recomputes ms | (b) path ms | (b) total ms | (b) / (a) | touched | path edges | "
         "ensemble cost (a) / (b) |\n",
         o->db_base);
  printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int si = 0; si < o->n_sizes; si++) {
    mosp_result *m = &res[si];
    int n = o->runs;
    double ma = median_of(m->update_total, n), mb = median_of(m->recompute_total, n);
    printf("| %ld | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.3gx | %.0f | %.0f | "
           "%.0f / %.0f |\n",
           o->sizes[si], 1e3 * median_of(m->apply, n), 1e3 * median_of(m->update_trees, n),
           1e3 * median_of(m->update_path, n), 1e3 * ma, 1e3 * median_of(m->recompute_trees, n),
           1e3 * median_of(m->recompute_path, n), 1e3 * mb, mb / ma, median_of(m->touched, n),
           median_of(m->hops, n), median_of(m->ensemble_a, n), median_of(m->ensemble_b, n));
    char name[32], metric[64], text[64];
    size_name(o->sizes[si], name, sizeof name);
    snprintf(metric, sizeof metric, "apply_%s", name);
    report_add(&rep, metric, "ms", 1e3, m->apply, n, NULL);
    snprintf(metric, sizeof metric, "update3_%s", name);
    report_add(&rep, metric, "ms", 1e3, m->update_trees, n, NULL);
    snprintf(metric, sizeof metric, "update3_path_%s", name);
    snprintf(text, sizeof text, "(b) / (a) = %.2fx", mb / ma);
    report_add(&rep, metric, "ms", 1e3, m->update_total, n, text);
    snprintf(metric, sizeof metric, "recompute3_%s", name);
    report_add(&rep, metric, "ms", 1e3, m->recompute_trees, n, NULL);
    snprintf(metric, sizeof metric, "recompute3_path_%s", name);
    report_add(&rep, metric, "ms", 1e3, m->recompute_total, n, NULL);
    snprintf(metric, sizeof metric, "path_%s", name);
    report_add(&rep, metric, "ms", 1e3, m->recompute_path, n, NULL);
    snprintf(metric, sizeof metric, "touched_%s", name);
    report_add(&rep, metric, "vertices", 1.0, m->touched, n, NULL);
    snprintf(metric, sizeof metric, "recompute_over_update_%s", name);
    report_ratio(&rep, metric, mb / ma);
  }
  printf("\n| %s | median | min | max | n | ratio of medians |\n", o->db_base);
  printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  printf("\n");
  report_print_lines(&rep);

  for (int si = 0; si < o->n_sizes; si++) {
    mosp_result *m = &res[si];
    double *cols[] = {m->apply, m->update_trees, m->update_path, m->update_total,
                      m->recompute_trees, m->recompute_path, m->recompute_total,
                      m->touched, m->ensemble_a, m->ensemble_b, m->hops};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) free(cols[i]);
  }
  dyng_path_free(&path_a);
  dyng_path_free(&path_b);
  dyng_changes_free(&changes);
  dyng_batch_free(batch);
  for (int k = 0; k < N_WEIGHTS; k++) {
    dyng_sssp_tree_free(&kept[k]);
    dyng_sssp_tree_free(&fresh[k]);
  }
  dyng_graph_free(g);
  free(pool.rowid);
  return 0;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc < 3) usage();
  int mosp = strcmp(argv[1], "mosp") == 0;
  if (!mosp && strcmp(argv[1], "cycles") != 0) usage();
  options o;
  memset(&o, 0, sizeof o);
  o.runs = 5;
  o.counts = "3,4,d3";
  o.max_update = 120.0;
  const char *size_list = mosp ? "1000,50000" : "50000";
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      o.runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      size_list = argv[++i];
    else if (!mosp && strcmp(argv[i], "--counts") == 0 && i + 1 < argc)
      o.counts = argv[++i];
    else if (!mosp && strcmp(argv[i], "--max-update") == 0 && i + 1 < argc)
      o.max_update = atof(argv[++i]);
    else if (strcmp(argv[i], "--verbose") == 0)
      o.verbose = 1;
    else if (argv[i][0] == '-' || o.db_path)
      usage();
    else
      o.db_path = argv[i];
  }
  if (!o.db_path || o.runs < 1 || o.runs > 1000 || !(o.max_update > 0)) usage();
  o.n_sizes = parse_sizes(size_list, o.sizes);
  if (access(o.db_path, R_OK) != 0) die("%s: %s", o.db_path, strerror(errno));
  o.db_base = strrchr(o.db_path, '/') ? strrchr(o.db_path, '/') + 1 : o.db_path;
  printf("sqlite %s\n", sqlite3_libversion());
  return mosp ? run_mosp(&o) : run_cycles(&o);
}
