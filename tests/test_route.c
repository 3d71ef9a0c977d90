/*
** tests/test_route.c: the searches that stop early (engine/route.h)
** against the whole tree (dyng_sssp_dijkstra from scratch).
**
** Tie-heavy random graphs (weights 0..2 and 0..1, zero-weight cycles,
** parallel edges, self-loops), directed and undirected, take random
** batches.  After every batch, one workspace reused throughout answers:
** routes between random pairs (the same distance, the same vertices, the
** same parent edges all the way as the tree), searches bounded by a
** distance (<= and <) and by a count (exactly the tree's rows with that
** distance, or the first of its order), and a cost matrix (every entry the
** tree's distance).
*/
#include "tests/test_util.h"

#include <math.h>
#include <string.h>

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/route.h"
#include "engine/sssp.h"

static uint64_t g_seed;

typedef struct scenario {
  int directed;
  int max_weight; /* integer weights 0 .. max_weight */
  int n_nodes;
  int n_edges;
} scenario;

static void draw_edge(test_rng *r, const scenario *sc, int64_t *s, int64_t *d, double *w) {
  *s = (int64_t)test_rng_below(r, (uint64_t)sc->n_nodes);
  *d = test_rng_below(r, 4) ? (*s + 1 + (int64_t)test_rng_below(r, 5)) % sc->n_nodes
                            : (int64_t)test_rng_below(r, (uint64_t)sc->n_nodes);
  if (test_rng_below(r, 40) == 0) *d = *s;
  w[0] = (double)test_rng_below(r, (uint64_t)sc->max_weight + 1);
  w[1] = test_rng_below(r, 3) ? 0.0 : test_rng_unit(r);
}

/* A route from s to t (aimed with `aim` when not NULL) against tree `t`
** (from s): 1 when its path, read back from the workspace, is the tree's
** path, vertex by vertex and edge by edge; with `quiet` 0 a difference
** fails the test. */
static int route_matches(dyng_route *r, const dyng_graph_view *v, const dyng_sssp_tree *t, uint32_t target,
                         const dyng_route_aim *aim, int quiet) {
  dyng_route_goal goal = dyng_route_goal_none();
  goal.target = target;
  goal.aim = aim;
  assert_int_equal(dyng_route_search(r, v, t->source, t->objective, &goal), DYNG_OK);
  if (isinf(t->dist[target])) return !dyng_route_final(r, target);
  if (!dyng_route_final(r, target)) return 0;
  uint32_t *path = NULL, n = 0;
  assert_int_equal(dyng_route_path(r, v, target, &path, &n), DYNG_OK);
  uint32_t x = target;
  int ok = n >= 1;
  for (uint32_t i = 0; ok && i < n; i++) {
    if (path[i] != x || dyng_route_dist(r, x) != t->dist[x] || dyng_route_parent_edge(r, v, x) != t->parent_edge[x]) {
      if (!quiet)
        fail_msg("route %u -> %u: vertex %u of the path is %u at %.17g by edge %u; the tree's %u at %.17g by edge %u",
                 t->source, target, i, path[i], dyng_route_dist(r, path[i]), dyng_route_parent_edge(r, v, path[i]), x,
                 t->dist[x], t->parent_edge[x]);
      ok = 0;
      break;
    }
    x = t->parent[x];
  }
  if (ok && x != DYNG_NONE) ok = 0;
  dyng_free(path);
  return ok;
}

/* Whether a potential's value d is as tight as the landmarks keep it
** where nothing was removed: at least DYNG_LANDMARK_SCALE of the distance
** (rounding aside). */
static int tight(double d, double dist) {
  if (isinf(dist)) return isinf(d);
  return d >= DYNG_LANDMARK_SCALE * dist * (1 - 1e-12);
}

/* Whether d is a potential of g in objective obj: d[y] <= d[x] + w for
** every entry x -> y, as the double sums are. */
static int potential_holds(const dyng_graph_view *g, int obj, const double *d) {
  for (uint32_t x = 0; x < g->n_vertices; x++)
    for (uint32_t p = g->out.off[x]; p < g->out.off[x] + g->out.deg[x]; p++)
      if (!(d[g->out.nbr[p]] <= d[x] + g->out.w[obj][p])) return 0;
  return 1;
}

static void check_route(dyng_route *r, const dyng_graph_view *v, const dyng_sssp_tree *t, uint32_t target) {
  assert_true(route_matches(r, v, t, target, NULL, 0));
  dyng_route_goal goal = dyng_route_goal_none();
  goal.target = target;
  assert_int_equal(dyng_route_search(r, v, t->source, t->objective, &goal), DYNG_OK);
  if (isinf(t->dist[target])) {
    assert_false(dyng_route_final(r, target));
    return;
  }
  assert_true(dyng_route_final(r, target));
  uint32_t *path = NULL, n = 0;
  assert_int_equal(dyng_route_path(r, v, target, &path, &n), DYNG_OK);
  assert_true(n >= 1);
  uint32_t x = target;
  for (uint32_t i = 0; i < n; i++) {
    if (path[i] != x) fail_msg("route %u -> %u: vertex %u of the path is %u, the tree's %u", t->source, target, i,
                               path[i], x);
    if (dyng_route_dist(r, x) != t->dist[x])
      fail_msg("route %u -> %u: vertex %u at %.17g, the tree's %.17g", t->source, target, x,
               dyng_route_dist(r, x), t->dist[x]);
    if (dyng_route_parent_edge(r, v, x) != t->parent_edge[x] || dyng_route_parent(r, v, x) != t->parent[x])
      fail_msg("route %u -> %u: vertex %u by edge %u from %u, the tree's edge %u from %u", t->source, target, x,
               dyng_route_parent_edge(r, v, x), dyng_route_parent(r, v, x), t->parent_edge[x], t->parent[x]);
    x = t->parent[x];
  }
  assert_int_equal(x, DYNG_NONE);
  dyng_free(path);
}

/* A search bounded by max_dist (strict or not): it takes exactly the
** tree's vertices within the bound, in an order of non-decreasing
** distance, each with the tree's row. */
static void check_within(dyng_route *r, const dyng_graph_view *v, const dyng_sssp_tree *t, double max_dist,
                         int strict) {
  dyng_route_goal goal = dyng_route_goal_none();
  goal.max_dist = max_dist;
  goal.strict = strict;
  assert_int_equal(dyng_route_search(r, v, t->source, t->objective, &goal), DYNG_OK);
  size_t n_taken = 0;
  const uint32_t *taken = dyng_route_taken(r, &n_taken);
  size_t want = 0;
  for (uint32_t x = 0; x < v->n_vertices; x++) {
    int in = !isinf(t->dist[x]) && (strict ? t->dist[x] < max_dist : t->dist[x] <= max_dist);
    want += in;
    if (dyng_route_final(r, x) != in) fail_msg("bound %g strict %d: vertex %u at %.17g (source %u) final %d", max_dist, strict, x, t->dist[x], t->source, dyng_route_final(r, x));
    if (!in) continue;
    assert_true(dyng_route_dist(r, x) == t->dist[x]);
    assert_int_equal(dyng_route_parent_edge(r, v, x), t->parent_edge[x]);
  }
  assert_int_equal(n_taken, want);
  for (size_t i = 1; i < n_taken; i++) assert_true(t->dist[taken[i - 1]] <= t->dist[taken[i]]);
  if (n_taken) assert_int_equal(taken[0], t->source);
  /* The first k vertices by count: a prefix of the same order. */
  if (want > 1) {
    goal = dyng_route_goal_none();
    goal.max_taken = want / 2;
    assert_int_equal(dyng_route_search(r, v, t->source, t->objective, &goal), DYNG_OK);
    size_t n_first = 0;
    const uint32_t *first = dyng_route_taken(r, &n_first);
    assert_int_equal(n_first, want / 2);
    for (size_t i = 0; i < n_first; i++) {
      assert_true(t->dist[first[i]] <= t->dist[taken[n_first - 1]]);
      assert_int_equal(dyng_route_parent_edge(r, v, first[i]), t->parent_edge[first[i]]);
    }
  }
}

static void run_scenario(const scenario *sc, uint64_t salt) {
  test_rng rng;
  test_rng_seed(&rng, g_seed * 7919 + salt);
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 2, sc->directed), DYNG_OK);
  int64_t next_rowid = 1;
  for (int i = 0; i < sc->n_edges; i++) {
    int64_t s, d;
    double w[2];
    draw_edge(&rng, sc, &s, &d, w);
    /* Rowids out of insertion order, so that rank and slot differ. */
    assert_int_equal(dyng_graph_load_edge(g, 1000000 - next_rowid++, s, d, w), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sc->directed) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  dyng_route *r = dyng_route_new();
  assert_non_null(r);
  dyng_batch *b = dyng_batch_new(2);
  assert_non_null(b);
  /* Landmarks of both objectives, repaired with every batch. */
  dyng_landmarks *lm[2];
  int exact[2] = {1, 1}; /* the potentials are still the exact distances */
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  {
    dyng_graph_view v;
    dyng_graph_get_view(g, &v);
    for (int k = 0; k < 2; k++) assert_int_equal(dyng_landmarks_build(&v, k, 3 + k, &lm[k]), DYNG_OK);
  }
  for (int round = 0; round < 12; round++) {
    dyng_graph_view v;
    dyng_graph_get_view(g, &v);
    for (int q = 0; q < 6; q++) {
      uint32_t src = (uint32_t)test_rng_below(&rng, v.n_vertices);
      int obj = (int)test_rng_below(&rng, 2);
      dyng_sssp_tree t;
      assert_int_equal(dyng_sssp_tree_init(&t, v.n_vertices), DYNG_OK);
      assert_int_equal(dyng_sssp_dijkstra(&v, src, obj, DYNG_NONE, &t), DYNG_OK);
      for (int k = 0; k < 8; k++) check_route(r, &v, &t, (uint32_t)test_rng_below(&rng, v.n_vertices));
      check_route(r, &v, &t, src);
      /* Aimed by the landmarks, kept up to date. */
      dyng_route_aim aim;
      dyng_landmarks_aim(lm[obj], &aim);
      for (int k = 0; k < 8; k++)
        assert_true(route_matches(r, &v, &t, (uint32_t)test_rng_below(&rng, v.n_vertices), &aim, 0));
      assert_true(route_matches(r, &v, &t, src, &aim, 0));
      assert_true(route_matches(r, &v, &t, dyng_landmarks_vertex(lm[obj], 0), &aim, 0));
      /* Bounds at a distance some vertex has (ties at the bound) and
      ** between. */
      uint32_t at = (uint32_t)test_rng_below(&rng, v.n_vertices);
      double bound = isinf(t.dist[at]) ? 1.5 : t.dist[at];
      check_within(r, &v, &t, bound, 0);
      check_within(r, &v, &t, bound, 1);
      check_within(r, &v, &t, bound + 0.5, 0);
      check_within(r, &v, &t, INFINITY, 0);
      check_within(r, &v, &t, 0.0, 0);
      dyng_sssp_tree_free(&t);
    }
    /* A matrix of a few sources and targets, repeats among them. */
    uint32_t srcs[5], tgts[7];
    for (int i = 0; i < 5; i++) srcs[i] = (uint32_t)test_rng_below(&rng, v.n_vertices);
    for (int i = 0; i < 7; i++) tgts[i] = (uint32_t)test_rng_below(&rng, v.n_vertices);
    tgts[6] = tgts[0];
    srcs[4] = srcs[0];
    double out[5 * 7];
    assert_int_equal(dyng_route_matrix(&v, 1, srcs, 5, tgts, 7, out), DYNG_OK);
    for (int i = 0; i < 5; i++) {
      dyng_sssp_tree t;
      assert_int_equal(dyng_sssp_tree_init(&t, v.n_vertices), DYNG_OK);
      assert_int_equal(dyng_sssp_dijkstra(&v, srcs[i], 1, DYNG_NONE, &t), DYNG_OK);
      for (int k = 0; k < 7; k++)
        if (!(out[i * 7 + k] == t.dist[tgts[k]]))
          fail_msg("matrix %u -> %u: %.17g, the tree's %.17g", srcs[i], tgts[k], out[i * 7 + k], t.dist[tgts[k]]);
      dyng_sssp_tree_free(&t);
    }
    /* A batch: inserts, deletes, weight changes. */
    dyng_batch_clear(b);
    int n_ops = 1 + (int)test_rng_below(&rng, (uint64_t)sc->n_edges / 8);
    for (int op = 0; op < n_ops; op++) {
      int64_t s, d;
      double w[2];
      draw_edge(&rng, sc, &s, &d, w);
      if (test_rng_below(&rng, 2)) {
        assert_int_equal(dyng_batch_insert(b, 1000000 - next_rowid++, s, d, w), DYNG_OK);
      } else {
        int64_t rowid = 1000000 - 1 - (int64_t)test_rng_below(&rng, (uint64_t)next_rowid);
        assert_int_equal(dyng_batch_delete(b, rowid), DYNG_OK);
      }
    }
    assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
    dyng_graph_get_view(g, &v);
    for (int k = 0; k < 2; k++) {
      int64_t recomputes = dyng_landmarks_recomputes(lm[k]);
      assert_int_equal(dyng_landmarks_update(lm[k], &v, &ch, 0), DYNG_OK);
      if (dyng_landmarks_recomputes(lm[k]) != recomputes)
        exact[k] = 1;
      else if (ch.n_removed)
        exact[k] = 0;
      dyng_route_aim aim;
      dyng_landmarks_aim(lm[k], &aim);
      for (int i = 0; i < aim.n; i++) {
        /* Each potential is one of the graph now: no edge breaks it, its
        ** landmark at 0, and never above the distances from scratch,
        ** nor below DYNG_LANDMARK_SCALE of them while no batch since they
        ** were computed removed an edge. */
        uint32_t at = dyng_landmarks_vertex(lm[k], i);
        assert_true(aim.dist[i][at] == 0.0);
        assert_true(potential_holds(&v, k, aim.dist[i]));
        dyng_sssp_tree fresh;
        assert_int_equal(dyng_sssp_tree_init(&fresh, v.n_vertices), DYNG_OK);
        assert_int_equal(dyng_sssp_dijkstra(&v, at, k, DYNG_NONE, &fresh), DYNG_OK);
        for (uint32_t x = 0; x < v.n_vertices; x++) {
          assert_true(aim.dist[i][x] <= fresh.dist[x]);
          if (exact[k]) assert_true(tight(aim.dist[i][x], fresh.dist[x]));
        }
        dyng_sssp_tree_free(&fresh);
      }
    }
    /* Now and then a batch of inserts alone, which keeps exact ones exact. */
    if (round % 3 == 2) {
      dyng_batch_clear(b);
      for (int op = 0; op < 4; op++) {
        int64_t s, d;
        double w[2];
        draw_edge(&rng, sc, &s, &d, w);
        assert_int_equal(dyng_batch_insert(b, 1000000 - next_rowid++, s, d, w), DYNG_OK);
      }
      assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
      dyng_graph_get_view(g, &v);
      for (int k = 0; k < 2; k++) {
        assert_int_equal(dyng_landmarks_update(lm[k], &v, &ch, round == 8), DYNG_OK);
        if (round == 8) exact[k] = 1;
        dyng_route_aim aim;
        dyng_landmarks_aim(lm[k], &aim);
        dyng_sssp_tree fresh;
        assert_int_equal(dyng_sssp_tree_init(&fresh, v.n_vertices), DYNG_OK);
        assert_int_equal(dyng_sssp_dijkstra(&v, dyng_landmarks_vertex(lm[k], 0), k, DYNG_NONE, &fresh), DYNG_OK);
        for (uint32_t x = 0; x < v.n_vertices; x++)
          assert_true(aim.dist[0][x] <= fresh.dist[x] && (!exact[k] || tight(aim.dist[0][x], fresh.dist[x])));
        assert_true(potential_holds(&v, k, aim.dist[0]));
        dyng_sssp_tree_free(&fresh);
      }
    }
  }
  for (int k = 0; k < 2; k++) dyng_landmarks_free(lm[k]);
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_route_free(r);
  dyng_graph_free(g);
}

static void test_directed_ties_routes_equal_the_tree(void **state) {
  (void)state;
  scenario sc = {1, 2, 300, 1500};
  run_scenario(&sc, 1);
}

static void test_undirected_ties_routes_equal_the_tree(void **state) {
  (void)state;
  scenario sc = {0, 1, 300, 700};
  run_scenario(&sc, 2);
}

static void test_zero_weights_everywhere_routes_equal_the_tree(void **state) {
  (void)state;
  scenario sc = {1, 0, 120, 600};
  run_scenario(&sc, 3);
}

static void test_sparse_disconnected_routes_equal_the_tree(void **state) {
  (void)state;
  scenario sc = {0, 3, 400, 250};
  run_scenario(&sc, 4);
}

/* The checks above catch a broken aim: a bound that overestimates (a
** landmark's distances scaled up), and a landmark left stale by a batch
** that made a shortcut (a chain 0 - 1 - ... - 99 of weight 10 with its
** landmark at 0, then an edge 0 - 99 of weight 1: from 98 to 1 the stale
** bound says 970, the route is 21). */
static void test_broken_aims_are_caught(void **state) {
  (void)state;
  /* Overestimating: a 12 x 12 grid of weights 1..9, its landmark's
  ** distances tripled. */
  {
    dyng_graph *grid = NULL;
    assert_int_equal(dyng_graph_new(&grid, 1, 0), DYNG_OK);
    test_rng rng;
    test_rng_seed(&rng, g_seed + 77);
    int64_t rowid = 1;
    for (int y = 0; y < 12; y++)
      for (int x = 0; x < 12; x++) {
        double w = (double)(1 + test_rng_below(&rng, 9));
        if (x + 1 < 12) assert_int_equal(dyng_graph_load_edge(grid, rowid++, y * 12 + x, y * 12 + x + 1, &w), DYNG_OK);
        w = (double)(1 + test_rng_below(&rng, 9));
        if (y + 1 < 12) assert_int_equal(dyng_graph_load_edge(grid, rowid++, y * 12 + x, y * 12 + x + 12, &w), DYNG_OK);
      }
    assert_int_equal(dyng_graph_seal(grid), DYNG_OK);
    dyng_graph_view gv;
    dyng_graph_get_view(grid, &gv);
    dyng_landmarks *glm = NULL;
    assert_int_equal(dyng_landmarks_build(&gv, 0, 2, &glm), DYNG_OK);
    dyng_route_aim aim;
    dyng_landmarks_aim(glm, &aim);
    double *scaled[2];
    for (int i = 0; i < 2; i++) {
      scaled[i] = test_malloc(gv.n_vertices * sizeof *scaled[i]);
      for (uint32_t x = 0; x < gv.n_vertices; x++) scaled[i][x] = 3 * aim.dist[i][x];
    }
    const double *scaled_dist[2] = {scaled[0], scaled[1]};
    dyng_route_aim over = aim;
    over.dist = scaled_dist;
    dyng_route *gr = dyng_route_new();
    dyng_sssp_tree gt;
    assert_int_equal(dyng_sssp_tree_init(&gt, gv.n_vertices), DYNG_OK);
    int caught = 0;
    for (uint32_t s = 0; s < gv.n_vertices; s += 7) {
      assert_int_equal(dyng_sssp_dijkstra(&gv, s, 0, DYNG_NONE, &gt), DYNG_OK);
      for (uint32_t x = 0; x < gv.n_vertices; x += 5) {
        assert_true(route_matches(gr, &gv, &gt, x, &aim, 0));
        caught += !route_matches(gr, &gv, &gt, x, &over, 1);
      }
    }
    assert_true(caught > 0);
    for (int i = 0; i < 2; i++) test_free(scaled[i]);
    dyng_sssp_tree_free(&gt);
    dyng_route_free(gr);
    dyng_landmarks_free(glm);
    dyng_graph_free(grid);
  }
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 1, 0), DYNG_OK);
  for (int i = 0; i < 99; i++) {
    double w = 10.0;
    assert_int_equal(dyng_graph_load_edge(g, i + 1, i, i + 1, &w), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_landmarks *lm = NULL;
  assert_int_equal(dyng_landmarks_build(&v, 0, 1, &lm), DYNG_OK);
  dyng_route_aim aim;
  uint32_t l0 = dyng_landmarks_vertex(lm, 0);
  dyng_route *r = dyng_route_new();
  dyng_sssp_tree t;
  assert_int_equal(dyng_sssp_tree_init(&t, v.n_vertices), DYNG_OK);
  /* Stale: the shortcut, and the landmark not told. */
  uint32_t far = l0 == 0 ? 99 : 0;
  dyng_batch *b = dyng_batch_new(1);
  double w1 = 1.0;
  int64_t a = dyng_graph_node_id(g, l0), z = dyng_graph_node_id(g, far);
  assert_int_equal(dyng_batch_insert(b, 1000, a, z, &w1), DYNG_OK);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_graph_get_view(g, &v);
  uint32_t s98, t1;
  assert_int_equal(dyng_graph_vertex(g, l0 == 0 ? 98 : 1, &s98), DYNG_OK);
  assert_int_equal(dyng_graph_vertex(g, l0 == 0 ? 1 : 98, &t1), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&v, s98, 0, DYNG_NONE, &t), DYNG_OK);
  assert_true(t.dist[t1] == 21.0);
  dyng_landmarks_aim(lm, &aim);
  assert_false(route_matches(r, &v, &t, t1, &aim, 1));
  /* Told, it is right again. */
  assert_int_equal(dyng_landmarks_update(lm, &v, &ch, 0), DYNG_OK);
  dyng_landmarks_aim(lm, &aim);
  assert_true(route_matches(r, &v, &t, t1, &aim, 0));
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_sssp_tree_free(&t);
  dyng_landmarks_free(lm);
  dyng_route_free(r);
  dyng_graph_free(g);
}

/* Out-of-range vertices and objectives are refused; a workspace made for
** a small graph grows for a larger one. */
static void test_bad_arguments_and_growth(void **state) {
  (void)state;
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 1, 1), DYNG_OK);
  double w = 1.0;
  assert_int_equal(dyng_graph_load_edge(g, 1, 10, 20, &w), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_route *r = dyng_route_new();
  dyng_route_goal goal = dyng_route_goal_none();
  assert_int_equal(dyng_route_search(r, &v, 2, 0, &goal), DYNG_EINVAL);
  assert_int_equal(dyng_route_search(r, &v, 0, 1, &goal), DYNG_EINVAL);
  goal.target = 5;
  assert_int_equal(dyng_route_search(r, &v, 0, 0, &goal), DYNG_EINVAL);
  goal.target = 1;
  assert_int_equal(dyng_route_search(r, &v, 0, 0, &goal), DYNG_OK);
  assert_true(dyng_route_dist(r, 1) == 1.0);
  /* The other way round: the target is unreachable. */
  assert_int_equal(dyng_route_search(r, &v, 1, 0, &(dyng_route_goal){.target = 0, .max_dist = INFINITY}), DYNG_OK);
  assert_false(dyng_route_final(r, 0));
  uint32_t *path = NULL, n = 7;
  assert_int_equal(dyng_route_path(r, &v, 0, &path, &n), DYNG_OK);
  assert_int_equal(n, 0);
  assert_null(path);
  uint32_t bad = 9;
  double out[1];
  assert_int_equal(dyng_route_matrix(&v, 0, &bad, 1, &bad, 1, out), DYNG_EINVAL);
  dyng_batch *b = dyng_batch_new(1);
  for (int i = 0; i < 100; i++) assert_int_equal(dyng_batch_insert(b, 10 + i, 20 + i, 21 + i, &w), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  dyng_graph_get_view(g, &v);
  goal = dyng_route_goal_none();
  goal.target = v.n_vertices - 1;
  assert_int_equal(dyng_route_search(r, &v, 0, 0, &goal), DYNG_OK);
  assert_true(dyng_route_dist(r, v.n_vertices - 1) == 101.0);
  assert_true(dyng_route_bytes(r) > 0);
  dyng_batch_free(b);
  dyng_route_free(r);
  dyng_graph_free(g);
}

int main(void) {
  g_seed = test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_directed_ties_routes_equal_the_tree),
      cmocka_unit_test(test_undirected_ties_routes_equal_the_tree),
      cmocka_unit_test(test_zero_weights_everywhere_routes_equal_the_tree),
      cmocka_unit_test(test_sparse_disconnected_routes_equal_the_tree),
      cmocka_unit_test(test_broken_aims_are_caught),
      cmocka_unit_test(test_bad_arguments_and_growth),
  };
  return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
