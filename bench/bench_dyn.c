/*
** bench/bench_dyn.c: how fast a kept shortest-path tree follows a batch of
** changes (dyng_sssp_update) against computing it again from scratch
** (dyng_sssp_dijkstra), from what batch size on the recomputation wins, and
** what engine/mirror.c's policy (a budgeted update that may give up) costs.
**
**   bench_dyn DB.db [--runs N] [--sizes K1,K2,...] [--inserts random|local]
**             [--apply-only] [--threads T] [--verbose]
**
** DB.db holds the table edges(src, dst, length, minutes, toll) that
** gen_graph writes; it is only read.  The program works on the engine
** directly (no extension): it loads the table into a directed graph with
** the three weights, builds its in adjacency (which an update needs), picks
** a source whose tree reaches many vertices and computes its tree in
** objective 0 (length).  Then, for each batch size K and each run:
**
**   draw      K changes, untimed: K/2 deletes of rowids drawn uniformly
**             from all the graph's edges (so some are tree edges) and
**             K - K/2 inserts of new rowids, each with the weights of a
**             random existing edge (the generator's distribution), between
**             two distinct live vertices drawn uniformly (--inserts random,
**             the default) or from a random live vertex to the end of a
**             2- or 3-step random walk from it (--inserts local: a new
**             road between nearby places).  A 1-change batch is an insert
**             on odd runs, a delete on even ones.
**   apply     dyng_graph_apply_tracked: the graph and the change records.
**   update    dyng_sssp_update of the tree with those records.
**   recompute dyng_sssp_dijkstra from the same source into a second tree,
**             on the same graph.
**   policy    what engine/mirror.c does for a tree meeting a batch of that size
**             for the first time (nothing learned yet), on a third tree, a
**             copy of the first before the batch: a batch changing more
**             than 1/8 of the edges recomputes it; a smaller one updates it
**             with the budget max_touched = max(1024, vertices / 4) and,
**             when that gives up (DYNG_EGAVEUP), recomputes it: the attempt
**             and the recomputation are timed together.  Update, recompute
**             and policy take turns going first.
**   restore   untimed: the inverse batch puts the graph's edges back as they
**             were, and the tree is computed again,
**             so that every batch meets the graph of the table.
**
** The updated tree and the policy's tree must each reach the same vertices
** as the recomputed one with distances equal within a relative 1e-9, and
** every reached vertex of theirs must hang from a live edge with
** dist[parent] + weight = dist; the program aborts otherwise.
**
** Sizes: 1, 1,000, 10,000, 50,000, 200,000, 500,000 and 1,000,000, as far
** as 1/8 of the graph's edges (the share past which engine/mirror.c recomputes,
** DYNG_RECOMPUTE_SHARE) and the first size beyond it; when update still
** wins there, doubling on up to half of the edges.  --sizes replaces the
** list.  Batches of up to 50,000 changes run N times (default 5), larger
** ones (N + 1) / 2 times.  Reported per size: the medians of apply, update
** and recompute time, recompute / update, the tree edges deleted, the
** vertices the update touched (reset or improved, a vertex counting each
** time), and what the extension's 1/8 rule would run; then the batch size
** (and share of the edges) where update and recompute cross, interpolated
** on a log scale between the two sizes around it, and how much slower than
** the faster choice the 1/8 rule is at worst.  Then, per size, the policy:
** its median time, policy / recompute, whether its update gave up (in how
** many runs), and policy_learned / recompute, the cost once a tree has
** learned where updates give up (engine/mirror.h's dyng_give_up): at sizes
** at or above the smallest one whose budgeted update gave up in this run,
** the recompute time; below it, the policy's (its update never gave up
** there).
**
** --apply-only times nothing but the batches themselves: per size and run,
** draw, apply (dyng_graph_apply_tracked) and restore (the inverse batch,
** also timed); no source, no trees.  --threads T caps the engine's threads
** at T (dyng_set_max_threads), which a batch's apply uses.
**
** How it works: one process, SQLite only to read the table; the engine's
** threads only where --threads allows them.
** The graph's memory layout does change
** with the batches (moved adjacency segments, reused edge slots), so a
** from-scratch tree is timed on the graph of the table before the batches
** and again after them.
*/
#include "bench/bench_util.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/parallel.h"
#include "engine/sssp.h"

#include <sqlite3.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_WEIGHTS 3
#define OBJECTIVE 0          /* length */
#define MAX_SIZES 16
#define BIG_BATCH 50000      /* larger batches run (N + 1) / 2 times */
#define RECOMPUTE_SHARE 8    /* engine/mirror.c's DYNG_RECOMPUTE_SHARE */
#define UPDATE_BUDGET 4      /* engine/mirror.c's DYNG_UPDATE_BUDGET: max_touched = */
#define BUDGET_MIN 1024      /* max(BUDGET_MIN, vertices / UPDATE_BUDGET) */
#define DIST_TOLERANCE 1e-9  /* relative */

const char bench_program[] = "bench_dyn";

static const long default_sizes[] = {1, 1000, 10000, 50000, 200000, 500000, 1000000};

/* ---- trees ------------------------------------------------------------- */

/* A from-scratch tree. */
static void fresh_tree(const dyng_graph_view *view, uint32_t source, dyng_sssp_tree *t) {
  int rc = dyng_sssp_dijkstra(view, source, OBJECTIVE, DYNG_NONE, t);
  if (rc) die("computing the tree: %s", dyng_strerror(rc));
}

/* Makes dst (initialized for src->n_vertices) a copy of src. */
static void copy_tree(const dyng_sssp_tree *src, dyng_sssp_tree *dst) {
  uint32_t n = src->n_vertices;
  if (dst->n_vertices != n) die("copy_tree: trees do not match");
  dst->source = src->source;
  dst->objective = src->objective;
  dst->n_reached = src->n_reached;
  dst->order_stale = src->order_stale;
  memcpy(dst->dist, src->dist, n * sizeof *dst->dist);
  memcpy(dst->parent, src->parent, n * sizeof *dst->parent);
  memcpy(dst->parent_edge, src->parent_edge, n * sizeof *dst->parent_edge);
  memcpy(dst->order, src->order, n * sizeof *dst->order);
}

/* The median time of 3 from-scratch trees into t. */
static double time_recompute(const dyng_graph_view *view, uint32_t source, dyng_sssp_tree *t) {
  double x[3];
  for (int i = 0; i < 3; i++) {
    double t0 = now_s();
    int rc = dyng_sssp_dijkstra(view, source, OBJECTIVE, DYNG_NONE, t);
    x[i] = now_s() - t0;
    if (rc) die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
  }
  return median_of(x, 3);
}

/* ---- checking ----------------------------------------------------------- */

/* Aborts unless `upd` (the updated tree) and `ref` (computed from scratch
** on the same graph) reach the same vertices at distances within
** DIST_TOLERANCE, and every reached vertex of upd other than the source
** hangs from a live edge parent -> v whose weight closes the distance.
** Returns the vertices reached; *n_inexact gets how many distances were
** equal only within the tolerance. */
static uint32_t check_trees(const dyng_graph_view *g, const dyng_sssp_tree *upd,
                            const dyng_sssp_tree *ref, const char *what, uint32_t *n_inexact) {
  uint32_t reached = 0, inexact = 0;
  for (uint32_t v = 0; v < g->n_vertices; v++) {
    double du = upd->dist[v], dr = ref->dist[v];
    if (isinf(dr)) {
      if (!isinf(du)) goto mismatch;
      continue;
    }
    reached++;
    if (!(fabs(du - dr) <= DIST_TOLERANCE * dr)) goto mismatch;
    if (du != dr) inexact++;
    if (v == upd->source) continue;
    uint32_t p = upd->parent[v], e = upd->parent_edge[v];
    if (p == DYNG_NONE || e >= g->n_edge_slots || g->edge_src[e] != p || g->edge_dst[e] != v) {
      fprintf(stderr, "bench_dyn: %s: BAD TREE at node %lld: parent %u via edge slot %u\n",
              what, (long long)g->node_id[v], p, e);
      abort();
    }
    double via = upd->dist[p] + g->out.w[upd->objective][g->edge_pos_out[e]];
    if (!(fabs(via - du) <= DIST_TOLERANCE * du)) {
      fprintf(stderr,
              "bench_dyn: %s: BAD TREE at node %lld: dist %.17g but parent %lld + edge = %.17g\n",
              what, (long long)g->node_id[v], du, (long long)g->node_id[p], via);
      abort();
    }
    continue;
  mismatch:
    fprintf(stderr, "bench_dyn: %s: MISMATCH at node %lld: update %.17g, recompute %.17g\n",
            what, (long long)g->node_id[v], du, dr);
    abort();
  }
  *n_inexact = inexact;
  return reached;
}

/* ---- main --------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: bench_dyn DB.db [--runs N] [--sizes K1,K2,...] [--inserts random|local] "
          "[--apply-only] [--threads T] [--verbose]\n");
  exit(2);
}

/* Results of one batch size. */
typedef struct size_result {
  long k;                 /* changes per batch */
  int n;                  /* runs */
  double *t_apply, *t_update, *t_recompute;
  double *t_policy;       /* engine/mirror.c's policy, nothing learned yet */
  double *t_learned;      /* the same once learned (filled after the batches) */
  int n_gave_up;          /* runs whose budgeted update gave up */
  double *touched;        /* vertices the update reset or improved */
  double *cut;            /* deletes that hit a tree edge */
} size_result;

/* --apply-only: the apply and restore times of batches of each size; the
** graph is checked and must hold its edges again at the end. */
static void apply_only(dyng_graph *g, rowid_pool *pool, const long *sizes, int n_sizes, int runs,
                       int local, int verbose, const char *db_label) {
  size_t n_edges = dyng_graph_n_edges(g);
  dyng_batch *batch = dyng_batch_new(N_WEIGHTS);
  if (!batch) die("dyng_batch_new: out of memory");
  dyng_changes changes;
  memset(&changes, 0, sizeof changes);
  uint64_t rng = 20240601;
  double *t_apply = xmalloc((size_t)runs * sizeof(double));
  double *t_restore = xmalloc((size_t)runs * sizeof(double));
  report rep;
  report_init(&rep, db_label);
  printf("| %s: batch | apply ms | restore ms | runs |\n", db_label);
  printf("| ---: | ---: | ---: | ---: |\n");
  for (int si = 0; si < n_sizes; si++) {
    long k = sizes[si];
    char name[32], metric[64];
    size_name(k, name, sizeof name);
    for (int r = 0; r < runs; r++) {
      long n_del = k / 2, n_ins = k - n_del;
      draw_batch(g, pool, batch, n_del, n_ins, local, &rng);
      dyng_apply_stats st;
      double t0 = now_s();
      int rc = dyng_graph_apply_tracked(g, batch, &st, &changes);
      t_apply[r] = now_s() - t0;
      if (rc) die("dyng_graph_apply_tracked: %s", dyng_strerror(rc));
      if (st.deleted != (size_t)n_del || st.inserted != (size_t)n_ins || st.missing)
        die("batch %s: applied %zu inserts and %zu deletes (%zu missing), drew %ld and %ld", name,
            st.inserted, st.deleted, st.missing, n_ins, n_del);
      t0 = now_s();
      restore_graph(g, pool, batch, &changes);
      t_restore[r] = now_s() - t0;
      if (verbose)
        printf("batch %s run %d: apply %.3f ms, restore %.3f ms\n", name, r + 1,
               1e3 * t_apply[r], 1e3 * t_restore[r]);
    }
    printf("| %ld | %.4g | %.4g | %d |\n", k, 1e3 * median_of(t_apply, runs),
           1e3 * median_of(t_restore, runs), runs);
    snprintf(metric, sizeof metric, "apply_%s", name);
    report_add(&rep, metric, "ms", 1e3, t_apply, runs, NULL);
    snprintf(metric, sizeof metric, "restore_%s", name);
    report_add(&rep, metric, "ms", 1e3, t_restore, runs, NULL);
  }
  if (dyng_graph_check(g) != 0) die("dyng_graph_check failed after the batches");
  if (dyng_graph_n_edges(g) != n_edges)
    die("%u edges after restoring the graph, %zu before", dyng_graph_n_edges(g), n_edges);
  printf("\n");
  report_print_lines(&rep);
  free(t_apply);
  free(t_restore);
  dyng_changes_free(&changes);
  dyng_batch_free(batch);
}

int main(int argc, char **argv) {
  const char *db_path = NULL, *size_list = NULL;
  int runs = 5, verbose = 0, local = 0, only_apply = 0, threads = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      size_list = argv[++i];
    else if (strcmp(argv[i], "--inserts") == 0 && i + 1 < argc) {
      const char *mode = argv[++i];
      if (strcmp(mode, "local") == 0) local = 1;
      else if (strcmp(mode, "random") != 0) usage();
    } else if (strcmp(argv[i], "--apply-only") == 0)
      only_apply = 1;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--verbose") == 0)
      verbose = 1;
    else if (argv[i][0] == '-' || db_path)
      usage();
    else
      db_path = argv[i];
  }
  if (!db_path || runs < 1 || runs > 1000 || threads < 0) usage();
  dyng_set_max_threads(threads);
  if (access(db_path, R_OK) != 0) die("%s: %s", db_path, strerror(errno));
  const char *db_base = strrchr(db_path, '/') ? strrchr(db_path, '/') + 1 : db_path;
  /* BENCH lines of the local-insert workload say db=<name>+local. */
  char db_label[256];
  snprintf(db_label, sizeof db_label, "%s%s", db_base, local ? "+local" : "");

  sqlite3 *db = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    die("%s: %s", db_path, sqlite3_errmsg(db));
  rowid_pool pool = {0};
  double t0 = now_s();
  dyng_graph *g = load_graph(db, N_WEIGHTS, 1, &pool);
  double t_load = now_s() - t0;
  sqlite3_close(db);
  size_t n_edges = dyng_graph_n_edges(g);

  /* Batch sizes: the given list, or the defaults up to 1/8 of the edges and
  ** the first one beyond. */
  long sizes[MAX_SIZES];
  int n_sizes = 0;
  if (size_list) {
    for (const char *s = size_list; *s;) {
      char *end;
      long k = strtol(s, &end, 10);
      if (end == s || k < 1 || (size_t)k > 2 * n_edges || n_sizes == MAX_SIZES) usage();
      sizes[n_sizes++] = k;
      s = *end == ',' ? end + 1 : end;
      if (*end && *end != ',') usage();
    }
  } else {
    for (size_t i = 0; i < sizeof default_sizes / sizeof *default_sizes; i++) {
      sizes[n_sizes++] = default_sizes[i];
      if ((size_t)default_sizes[i] * RECOMPUTE_SHARE > n_edges) break;
    }
  }

  if (only_apply) {
    printf("# bench_dyn --apply-only %s\n", db_path);
    printf("sqlite %s; %zu edges, %u vertices; loaded (with in adjacency) in %.2f s; "
           "%d threads; inserts %s\n",
           sqlite3_libversion(), n_edges, dyng_graph_n_vertices(g), t_load, dyng_threads(),
           local ? "local" : "random");
    apply_only(g, &pool, sizes, n_sizes, runs, local, verbose, db_label);
    dyng_graph_free(g);
    free(pool.rowid);
    return 0;
  }

  /* The source: of up to 8 rows' sources drawn with a fixed seed, the one
  ** whose tree reaches the most vertices (the first reaching 90% of the
  ** live ones wins at once). */
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint32_t n_live = dyng_graph_n_vertices(g);
  dyng_sssp_tree tree, fresh, ptree; /* updated, recomputed, the policy's */
  int rc = dyng_sssp_tree_init(&tree, view.n_vertices);
  if (rc == 0) rc = dyng_sssp_tree_init(&fresh, view.n_vertices);
  if (rc == 0) rc = dyng_sssp_tree_init(&ptree, view.n_vertices);
  if (rc) die("dyng_sssp_tree_init: %s", dyng_strerror(rc));
  uint64_t rng = 20240601;
  uint32_t source = DYNG_NONE, best_reached = 0;
  for (int c = 0; c < 8 && best_reached < 0.9 * n_live; c++) {
    uint32_t slot;
    int64_t rowid = pool.rowid[splitmix64(&rng) % pool.n];
    if (dyng_graph_edge(g, rowid, &slot)) die("rowid %lld not in the graph", (long long)rowid);
    uint32_t s = dyng_graph_edge_src(g, slot);
    if ((rc = dyng_sssp_dijkstra(&view, s, OBJECTIVE, DYNG_NONE, &fresh)) != 0)
      die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
    if (fresh.n_reached > best_reached) best_reached = fresh.n_reached, source = s;
  }
  if ((rc = dyng_sssp_dijkstra(&view, source, OBJECTIVE, DYNG_NONE, &tree)) != 0)
    die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
  copy_tree(&tree, &ptree);
  size_t budget = view.n_vertices / UPDATE_BUDGET;
  if (budget < BUDGET_MIN) budget = BUDGET_MIN;
  double t_recompute_start = time_recompute(&view, source, &fresh);

  printf("# bench_dyn %s\n", db_path);
  printf("sqlite %s; %zu edges, %u vertices; loaded (with in adjacency) in %.2f s\n",
         sqlite3_libversion(), n_edges, n_live, t_load);
  printf("source node %lld reaches %u vertices (%.1f%%)\n",
         (long long)dyng_graph_node_id(g, source), best_reached, 100.0 * best_reached / n_live);
  printf("inserts %s; %d runs per size (batches over %d: %d); policy's update budget %zu "
         "vertices\n",
         local ? "local (2-3 steps downstream)" : "random (uniform vertex pairs)", runs,
         BIG_BATCH, (runs + 1) / 2, budget);
  fflush(stdout);

  dyng_batch *batch = dyng_batch_new(N_WEIGHTS);
  if (!batch) die("dyng_batch_new: out of memory");
  dyng_changes changes;
  memset(&changes, 0, sizeof changes);
  size_result res[MAX_SIZES];
  uint32_t total_inexact = 0;
  double t_all = now_s();

  for (int si = 0; si < n_sizes; si++) {
    size_result *sr = &res[si];
    sr->k = sizes[si];
    sr->n = sr->k > BIG_BATCH ? (runs + 1) / 2 : runs;
    sr->t_apply = xmalloc((size_t)sr->n * sizeof(double));
    sr->t_update = xmalloc((size_t)sr->n * sizeof(double));
    sr->t_recompute = xmalloc((size_t)sr->n * sizeof(double));
    sr->t_policy = xmalloc((size_t)sr->n * sizeof(double));
    sr->t_learned = xmalloc((size_t)sr->n * sizeof(double));
    sr->n_gave_up = 0;
    sr->touched = xmalloc((size_t)sr->n * sizeof(double));
    sr->cut = xmalloc((size_t)sr->n * sizeof(double));
    char name[32];
    size_name(sr->k, name, sizeof name);
    for (int r = 0; r < sr->n; r++) {
      long n_del = sr->k / 2, n_ins = sr->k - n_del;
      if (sr->k == 1 && r % 2) n_del = 1, n_ins = 0;
      draw_batch(g, &pool, batch, n_del, n_ins, local, &rng);

      dyng_apply_stats st;
      t0 = now_s();
      rc = dyng_graph_apply_tracked(g, batch, &st, &changes);
      sr->t_apply[r] = now_s() - t0;
      if (rc) die("dyng_graph_apply_tracked: %s", dyng_strerror(rc));
      if (st.deleted != (size_t)n_del || st.inserted != (size_t)n_ins || st.missing)
        die("batch %s: applied %zu inserts and %zu deletes (%zu missing), drew %ld and %ld",
            name, st.inserted, st.deleted, st.missing, n_ins, n_del);
      dyng_graph_get_view(g, &view);

      /* Deleted tree edges, counted on the tree before its update. */
      size_t n_cut = 0;
      for (size_t i = 0; i < changes.n_removed; i++) {
        const dyng_edge_change *c = &changes.removed[i];
        n_cut += c->dst != source && tree.parent_edge[c->dst] == c->slot &&
                 tree.parent[c->dst] == c->src;
      }
      sr->cut[r] = (double)n_cut;

      /* engine/mirror.c's test, on the changes and the edges after the batch. */
      size_t n_changed = changes.n_removed + changes.n_added;
      int huge = n_changed * RECOMPUTE_SHARE > (size_t)dyng_graph_n_edges(g);
      size_t touched = 0, p_touched = 0;
      int gave_up = 0;
      double t_attempt = 0.0;
      /* Update, recompute, policy on even runs, the other way round on odd
      ** ones: each pair alternates which goes first, and update and policy
      ** each run first or right after the recomputation equally often. */
      for (int k = 0; k < 3; k++) {
        int which = r % 2 ? 2 - k : k;
        if (which == 0) {
          t0 = now_s();
          rc = dyng_sssp_update(&view, &tree, changes.removed, changes.n_removed, changes.added,
                                changes.n_added, 0, &touched);
          sr->t_update[r] = now_s() - t0;
          if (rc) die("dyng_sssp_update: %s", dyng_strerror(rc));
        } else if (which == 1) {
          t0 = now_s();
          rc = dyng_sssp_dijkstra(&view, source, OBJECTIVE, DYNG_NONE, &fresh);
          sr->t_recompute[r] = now_s() - t0;
          if (rc) die("dyng_sssp_dijkstra: %s", dyng_strerror(rc));
        } else {
          t0 = now_s();
          rc = DYNG_EGAVEUP;
          if (!huge) {
            rc = dyng_sssp_update(&view, &ptree, changes.removed, changes.n_removed,
                                  changes.added, changes.n_added, budget, &p_touched);
            t_attempt = now_s() - t0;
            gave_up = rc == DYNG_EGAVEUP;
          }
          if (rc == DYNG_EGAVEUP) rc = dyng_sssp_dijkstra(&view, source, OBJECTIVE, DYNG_NONE, &ptree);
          sr->t_policy[r] = now_s() - t0;
          if (rc) die("policy: %s", dyng_strerror(rc));
        }
      }
      sr->touched[r] = (double)touched;
      sr->n_gave_up += gave_up;
      char what[64];
      snprintf(what, sizeof what, "batch %s run %d", name, r + 1);
      uint32_t inexact;
      uint32_t reached = check_trees(&view, &tree, &fresh, what, &inexact);
      total_inexact += inexact;
      char p_what[96];
      snprintf(p_what, sizeof p_what, "batch %s run %d (policy%s)", name, r + 1,
               huge ? ", recomputed" : gave_up ? ", gave up and recomputed" : "");
      uint32_t p_inexact;
      check_trees(&view, &ptree, &fresh, p_what, &p_inexact);
      total_inexact += p_inexact;
      if (verbose) {
        char policy[96];
        if (huge) snprintf(policy, sizeof policy, "recompute");
        else if (gave_up)
          snprintf(policy, sizeof policy, "update gave up after %.3f ms, then recompute",
                   1e3 * t_attempt);
        else snprintf(policy, sizeof policy, "update, touched %zu", p_touched);
        printf("%s: %ld inserts, %ld deletes (%zu tree edges); apply %.3f ms, "
               "update %.3f ms, recompute %.3f ms, touched %zu, reached %u%s; "
               "policy %.3f ms (%s)\n",
               what, n_ins, n_del, n_cut, 1e3 * sr->t_apply[r], 1e3 * sr->t_update[r],
               1e3 * sr->t_recompute[r], touched, reached,
               inexact || p_inexact ? " (inexact distances)" : "", 1e3 * sr->t_policy[r],
               policy);
      }

      restore_graph(g, &pool, batch, &changes);
      dyng_graph_get_view(g, &view);
      fresh_tree(&view, source, &tree);
      copy_tree(&tree, &ptree);
    }
    /* No crossing yet at the last default size: go on doubling, up to half
    ** of the edges. */
    double q = median_of(sr->t_recompute, sr->n) / median_of(sr->t_update, sr->n);
    if (!size_list && si == n_sizes - 1 && q >= 1.0 && n_sizes < MAX_SIZES &&
        (size_t)(2 * sr->k) <= n_edges / 2)
      sizes[n_sizes++] = 2 * sr->k;
  }
  double t_loop = now_s() - t_all;
  if (dyng_graph_check(g) != 0) die("dyng_graph_check failed after the batches");
  if (dyng_graph_n_edges(g) != n_edges)
    die("%u edges after restoring the graph, %zu before", dyng_graph_n_edges(g), n_edges);
  double t_recompute_end = time_recompute(&view, source, &fresh);

  /* ---- the report ---- */
  report rep;
  report_init(&rep, db_label);
  double ratio[MAX_SIZES];
  for (int si = 0; si < n_sizes; si++) {
    size_result *sr = &res[si];
    char name[32], metric[64], text[64];
    size_name(sr->k, name, sizeof name);
    double mu = median_of(sr->t_update, sr->n), mr = median_of(sr->t_recompute, sr->n);
    ratio[si] = mr / mu;
    snprintf(metric, sizeof metric, "apply_%s", name);
    report_add(&rep, metric, "ms", 1e3, sr->t_apply, sr->n, NULL);
    snprintf(metric, sizeof metric, "update_%s", name);
    snprintf(text, sizeof text, "recompute / update = %.2fx", ratio[si]);
    report_add(&rep, metric, "ms", 1e3, sr->t_update, sr->n, text);
    snprintf(metric, sizeof metric, "recompute_%s", name);
    report_add(&rep, metric, "ms", 1e3, sr->t_recompute, sr->n, NULL);
    snprintf(metric, sizeof metric, "touched_%s", name);
    report_add(&rep, metric, "vertices", 1.0, sr->touched, sr->n, NULL);
    snprintf(metric, sizeof metric, "recompute_over_update_%s", name);
    report_ratio(&rep, metric, ratio[si]);
  }

  /* Where the ratio falls through 1: the first size whose recompute is
  ** faster, interpolated in log(size) against log(ratio) with the one
  ** before it. */
  double cross = NAN;
  int cross_at = -1;
  for (int si = 0; si < n_sizes; si++)
    if (ratio[si] < 1.0) {
      cross_at = si;
      break;
    }
  if (cross_at == 0) {
    cross = (double)res[0].k;
  } else if (cross_at > 0) {
    double x0 = log((double)res[cross_at - 1].k), x1 = log((double)res[cross_at].k);
    double y0 = log(ratio[cross_at - 1]), y1 = log(ratio[cross_at]);
    cross = exp(x0 + (x1 - x0) * (0.0 - y0) / (y1 - y0));
  }
  if (cross_at >= 0) {
    report_ratio(&rep, "crossover_changes", cross);
    report_ratio(&rep, "crossover_share", cross / (double)n_edges);
  }
  /* What engine/mirror.c's rule (recompute past 1/8 of the edges) costs: its
  ** choice's time over the faster one's, at worst. */
  double rule_worst = 1.0;
  long rule_worst_k = 0;
  for (int si = 0; si < n_sizes; si++) {
    int rule_recomputes = (size_t)res[si].k * RECOMPUTE_SHARE > n_edges;
    double over = rule_recomputes ? (ratio[si] > 1.0 ? ratio[si] : 1.0)
                                  : (ratio[si] < 1.0 ? 1.0 / ratio[si] : 1.0);
    if (over > rule_worst) rule_worst = over, rule_worst_k = res[si].k;
  }
  report_ratio(&rep, "rule_over_faster_worst", rule_worst);

  /* The policy (engine/mirror.c): as met for the first time, and once learned,
  ** i.e. recomputing from the smallest size whose budgeted update gave up. */
  report prep;
  report_init(&prep, db_label);
  long gave_up_at = 0;
  for (int si = 0; si < n_sizes; si++)
    if (res[si].n_gave_up && (!gave_up_at || res[si].k < gave_up_at)) gave_up_at = res[si].k;
  double p_ratio[MAX_SIZES], l_ratio[MAX_SIZES], learned_worst = 0.0;
  long learned_worst_k = 0;
  for (int si = 0; si < n_sizes; si++) {
    size_result *sr = &res[si];
    int learned = gave_up_at && sr->k >= gave_up_at;
    for (int r = 0; r < sr->n; r++) sr->t_learned[r] = learned ? sr->t_recompute[r] : sr->t_policy[r];
    double mr = median_of(sr->t_recompute, sr->n);
    p_ratio[si] = median_of(sr->t_policy, sr->n) / mr;
    l_ratio[si] = median_of(sr->t_learned, sr->n) / mr;
    if (l_ratio[si] > learned_worst) learned_worst = l_ratio[si], learned_worst_k = sr->k;
    char name[32], metric[64], text[64];
    size_name(sr->k, name, sizeof name);
    snprintf(metric, sizeof metric, "policy_%s", name);
    snprintf(text, sizeof text, "policy / recompute = %.3fx", p_ratio[si]);
    report_add(&prep, metric, "ms", 1e3, sr->t_policy, sr->n, text);
    snprintf(metric, sizeof metric, "policy_over_recompute_%s", name);
    report_ratio(&prep, metric, p_ratio[si]);
    snprintf(metric, sizeof metric, "policy_gave_up_runs_%s", name);
    report_ratio(&prep, metric, (double)sr->n_gave_up);
    snprintf(metric, sizeof metric, "policy_learned_over_recompute_%s", name);
    report_ratio(&prep, metric, l_ratio[si]);
  }
  if (gave_up_at) report_ratio(&prep, "policy_gave_up_from_changes", (double)gave_up_at);
  report_ratio(&prep, "policy_learned_over_recompute_worst", learned_worst);
  report_ratio(&rep, "recompute_end_over_start", t_recompute_end / t_recompute_start);

  printf("\n%.1f s for the batches; %u distances equal to the recomputed ones only within "
         "%.0e (relative); from-scratch tree on the restored graph %.1f ms after the batches, "
         "%.1f ms before\n\n",
         t_loop, total_inexact, DIST_TOLERANCE, 1e3 * t_recompute_end, 1e3 * t_recompute_start);
  printf("| %s: batch | share of edges | apply ms | update ms | recompute ms | recompute / "
         "update | tree edges deleted | touched | runs | 1/%d rule runs |\n",
         db_label, RECOMPUTE_SHARE);
  printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (int si = 0; si < n_sizes; si++) {
    size_result *sr = &res[si];
    int rule_recomputes = (size_t)sr->k * RECOMPUTE_SHARE > n_edges;
    printf("| %ld | %.4g%% | %.4g | %.4g | %.4g | %.3gx | %.0f | %.0f | %d | %s%s |\n", sr->k,
           100.0 * (double)sr->k / (double)n_edges, 1e3 * median_of(sr->t_apply, sr->n),
           1e3 * median_of(sr->t_update, sr->n), 1e3 * median_of(sr->t_recompute, sr->n),
           ratio[si], median_of(sr->cut, sr->n), median_of(sr->touched, sr->n), sr->n,
           rule_recomputes ? "recompute" : "update",
           (rule_recomputes ? ratio[si] > 1.0 : ratio[si] < 1.0) ? " (the slower)" : "");
  }
  if (cross_at < 0)
    printf("\nupdate is faster than recompute at every size measured (up to %ld changes, "
           "%.3g%% of the edges)\n",
           res[n_sizes - 1].k, 100.0 * (double)res[n_sizes - 1].k / (double)n_edges);
  else if (cross_at == 0)
    printf("\nrecompute is faster already at the smallest size (%ld changes)\n", res[0].k);
  else
    printf("\nupdate and recompute cross at about %.0f changes = %.3g%% of the edges (1/%.0f), "
           "between %ld and %ld\n",
           cross, 100.0 * cross / (double)n_edges, (double)n_edges / cross,
           res[cross_at - 1].k, res[cross_at].k);
  if (rule_worst_k)
    printf("the 1/%d rule's choice is %.2fx the faster one's time at worst (%ld changes)\n",
           RECOMPUTE_SHARE, rule_worst, rule_worst_k);
  else
    printf("the 1/%d rule picks the faster one at every size measured\n", RECOMPUTE_SHARE);
  for (int si = 0; si < n_sizes; si++)
    if (res[si].k == 1000)
      printf("goal: update >= 10x faster than recompute at 1,000 changes: %s (%.3gx)\n",
             ratio[si] >= 10.0 ? "met" : "MISSED", ratio[si]);
  printf("goal: with the 1/%d fallback never slower than recompute: %s\n", RECOMPUTE_SHARE,
         rule_worst_k == 0 ? "met" : "MISSED");

  printf("\n| %s: batch | update ms | recompute ms | policy ms | policy / recompute | "
         "policy's update gave up | policy_learned / recompute |\n",
         db_label);
  printf("| ---: | ---: | ---: | ---: | ---: | --- | ---: |\n");
  for (int si = 0; si < n_sizes; si++) {
    size_result *sr = &res[si];
    char gave[48];
    if ((size_t)sr->k * RECOMPUTE_SHARE > n_edges)
      snprintf(gave, sizeof gave, "no (over 1/%d: recomputes)", RECOMPUTE_SHARE);
    else if (sr->n_gave_up == 0) snprintf(gave, sizeof gave, "no");
    else if (sr->n_gave_up == sr->n) snprintf(gave, sizeof gave, "yes");
    else snprintf(gave, sizeof gave, "yes (%d of %d runs)", sr->n_gave_up, sr->n);
    printf("| %ld | %.4g | %.4g | %.4g | %.3gx | %s | %.3gx |\n", sr->k,
           1e3 * median_of(sr->t_update, sr->n), 1e3 * median_of(sr->t_recompute, sr->n),
           1e3 * median_of(sr->t_policy, sr->n), p_ratio[si], gave, l_ratio[si]);
  }
  if (gave_up_at)
    printf("\nthe policy's update (budget %zu vertices) first gave up at %ld changes; once "
           "learned, batches from that size on recompute directly\n",
           budget, gave_up_at);
  else
    printf("\nthe policy's update (budget %zu vertices) never gave up\n", budget);
  for (int si = 0; si < n_sizes; si++)
    if (res[si].k == 1000)
      printf("goal: at 1K changes policy >= 10x faster than recompute: %s (policy / recompute "
             "= %.3gx)\n",
             p_ratio[si] <= 0.1 ? "met" : "MISSED", p_ratio[si]);
  printf("goal: policy_learned never slower than recompute: %s (worst ratio %.3gx, at %ld "
         "changes)\n",
         learned_worst <= 1.0 ? "met" : "MISSED", learned_worst, learned_worst_k);

  printf("\n| %s | median | min | max | n | ratio of medians |\n", db_label);
  printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  report_print_rows(&prep);
  printf("\n");
  report_print_lines(&rep);
  report_print_lines(&prep);

  for (int si = 0; si < n_sizes; si++) {
    free(res[si].t_apply);
    free(res[si].t_update);
    free(res[si].t_recompute);
    free(res[si].t_policy);
    free(res[si].t_learned);
    free(res[si].touched);
    free(res[si].cut);
  }
  dyng_changes_free(&changes);
  dyng_batch_free(batch);
  dyng_sssp_tree_free(&tree);
  dyng_sssp_tree_free(&fresh);
  dyng_sssp_tree_free(&ptree);
  dyng_graph_free(g);
  free(pool.rowid);
  return 0;
}
