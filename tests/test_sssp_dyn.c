/*
** tests/test_sssp_dyn.c: dyng_sssp_update against a fresh computation.
**
** Random graphs (grid-like and skewed, directed and undirected, integer
** and real weights) take random batches (inserts, deletes of tree and
** non-tree edges, weight changes, parallel edges, self-loops; from one
** change to a tenth of the edges).  After every batch each tree updated in
** place must equal dyng_sssp_dijkstra from scratch: the same distances bit
** for bit, the same parents, both those of the tie rule (by brute force
** here), parents that form a valid shortest-path tree over real edges,
** and, once rebuilt, an order that lists the reached vertices by distance.
*/
#include "tests/test_util.h"

#include <math.h>
#include <string.h>

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/sssp.h"

static uint64_t g_seed;

typedef struct scenario {
  int directed;
  int integer;     /* integer weights 0..integer-1 (10 when 1), else reals in [0, 10) */
  int grid;        /* grid-like ids and edges, else skewed random */
  int n_nodes;
  int n_edges;
} scenario;

static double draw_weight(test_rng *r, int integer) {
  return integer ? (double)test_rng_below(r, integer > 1 ? (uint64_t)integer : 10) : test_rng_unit(r) * 10.0;
}

/* An edge's endpoints: neighbours on a grid of side `side`, or skewed (low
** ids far more likely), with an occasional self-loop. */
static void draw_edge(test_rng *r, const scenario *sc, int64_t *s, int64_t *d) {
  if (sc->grid) {
    int side = (int)sqrt((double)sc->n_nodes);
    int64_t u = (int64_t)test_rng_below(r, (uint64_t)(side * side));
    int64_t v = test_rng_below(r, 2) ? u + 1 : u + side;
    if (v >= side * side) v = u - 1 >= 0 ? u - 1 : u;
    if (test_rng_below(r, 2)) *s = u, *d = v;
    else *s = v, *d = u;
  } else {
    uint64_t a = test_rng_below(r, (uint64_t)sc->n_nodes), b = test_rng_below(r, (uint64_t)sc->n_nodes);
    *s = (int64_t)(a * test_rng_below(r, (uint64_t)sc->n_nodes) / (uint64_t)sc->n_nodes);
    *d = (int64_t)b;
  }
  if (test_rng_below(r, 50) == 0) *d = *s;
}

static int close_enough(double a, double b, int integer) {
  if (isinf(a) || isinf(b)) return a == b;
  if (integer) return a == b;
  return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* The tie rule of engine/sssp.h, by brute force from the distances: the
** level of every reached vertex (0 with a tight in-edge from a strictly
** closer tail, else one more than the smallest level among its tight
** in-edges' tails, found by relaxing to a fixed point) and then its parent
** edge, the tight in-edge of smallest rowid among those that give it that
** level.  Checks that the tree's parents and levels are those. */
static void check_tie_rule(const dyng_graph *g, const dyng_sssp_tree *t) {
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  uint32_t n = v.n_vertices, *level = test_malloc((n ? n : 1) * sizeof *level);
  const double *dist = t->dist;
  for (uint32_t x = 0; x < n; x++) level[x] = x == t->source ? 0 : DYNG_NONE;
  /* An in-edge of x: slot e from u, both ways when undirected. */
#define FOR_EACH_TIGHT(body)                                                           \
  for (uint32_t e = 0; e < v.n_edge_slots; e++) {                                      \
    if (v.edge_src[e] == DYNG_NONE) continue;                                          \
    for (int side = 0; side < (v.directed ? 1 : 2); side++) {                          \
      uint32_t u = side ? v.edge_dst[e] : v.edge_src[e], x = side ? v.edge_src[e] : v.edge_dst[e]; \
      if (x == t->source || isinf(dist[u]) || dist[u] + dyng_graph_edge_weight(g, e, t->objective) != dist[x]) \
        continue;                                                                      \
      body                                                                             \
    }                                                                                  \
  }
  FOR_EACH_TIGHT(if (dist[u] < dist[x]) level[x] = 0;)
  for (int changed = 1; changed;) {
    changed = 0;
    FOR_EACH_TIGHT(if (dist[u] == dist[x] && level[u] != DYNG_NONE && level[u] + 1 < level[x]) {
      level[x] = level[u] + 1;
      changed = 1;
    })
  }
  uint32_t *want = test_malloc((n ? n : 1) * sizeof *want);
  for (uint32_t x = 0; x < n; x++) want[x] = DYNG_NONE;
  FOR_EACH_TIGHT(if ((level[x] == 0 ? dist[u] < dist[x] : dist[u] == dist[x] && level[u] + 1 == level[x]) &&
                     (want[x] == DYNG_NONE || v.edge_rowid[e] < v.edge_rowid[want[x]])) want[x] = e;)
#undef FOR_EACH_TIGHT
  for (uint32_t x = 0; x < n; x++) {
    if (isinf(dist[x])) continue;
    if (t->parent_edge[x] != want[x] || t->hops[x] != level[x])
      fail_msg("vertex %u at %.17g: parent edge %u (rowid %lld), level %u; the tie rule gives edge %u (rowid %lld), "
               "level %u",
               x, dist[x], t->parent_edge[x],
               t->parent_edge[x] == DYNG_NONE ? -1LL : (long long)v.edge_rowid[t->parent_edge[x]], t->hops[x],
               want[x], want[x] == DYNG_NONE ? -1LL : (long long)v.edge_rowid[want[x]], level[x]);
  }
  test_free(level);
  test_free(want);
}

/* The cached tree against a fresh computation on the same graph. */
static void verify_tree(const dyng_graph *g, dyng_sssp_tree *t, int integer) {
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_sssp_tree fresh;
  assert_int_equal(dyng_sssp_tree_init(&fresh, v.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&v, t->source, t->objective, DYNG_NONE, &fresh), DYNG_OK);
  assert_true(t->n_vertices >= v.n_vertices);
  (void)integer;
  for (uint32_t x = 0; x < v.n_vertices; x++) {
    /* Bit for bit: both are the least fixed point of the same sums. */
    if (!(t->dist[x] == fresh.dist[x] || (isnan(t->dist[x]) && isnan(fresh.dist[x]))))
      fail_msg("vertex %u: updated %.17g, fresh %.17g", x, t->dist[x], fresh.dist[x]);
    if (t->parent_edge[x] != fresh.parent_edge[x] || t->parent[x] != fresh.parent[x])
      fail_msg("vertex %u: updated parent %u by edge %u, fresh parent %u by edge %u", x, t->parent[x],
               t->parent_edge[x], fresh.parent[x], fresh.parent_edge[x]);
    uint32_t p = t->parent[x], e = t->parent_edge[x];
    if (x == t->source || isinf(t->dist[x])) {
      assert_int_equal(p, DYNG_NONE);
      assert_int_equal(e, DYNG_NONE);
      continue;
    }
    /* A real edge from p to x (either way if undirected) that accounts for
    ** the distance. */
    assert_true(e < v.n_edge_slots && v.edge_src[e] != DYNG_NONE);
    int fwd = v.edge_src[e] == p && v.edge_dst[e] == x;
    int bwd = !v.directed && v.edge_dst[e] == p && v.edge_src[e] == x;
    assert_true(fwd || bwd);
    double w = dyng_graph_edge_weight(g, e, t->objective);
    assert_true(close_enough(t->dist[p] + w, t->dist[x], integer));
  }
  /* The rebuilt order lists exactly the reached vertices by distance. */
  check_tie_rule(g, &fresh);
  check_tie_rule(g, t);
  /* Levels derived from the parents alone (a tree that came from another
  ** backend) are the ones the search kept. */
  for (uint32_t x = 0; x < v.n_vertices; x++) fresh.hops[x] = 12345;
  assert_int_equal(dyng_sssp_tree_hops(&fresh), DYNG_OK);
  for (uint32_t x = 0; x < v.n_vertices; x++)
    if (!isinf(fresh.dist[x])) assert_int_equal(fresh.hops[x], t->hops[x]);
  assert_int_equal(dyng_sssp_tree_order(t), DYNG_OK);
  uint32_t reached = 0;
  for (uint32_t x = 0; x < v.n_vertices; x++) reached += !isinf(t->dist[x]);
  assert_int_equal(t->n_reached, reached);
  assert_int_equal(t->order[0], t->source);
  for (uint32_t i = 1; i < t->n_reached; i++) assert_true(t->dist[t->order[i - 1]] <= t->dist[t->order[i]]);
  dyng_sssp_tree_free(&fresh);
}

static void run_scenario(const scenario *sc, uint64_t salt) {
  test_rng r;
  test_rng_seed(&r, g_seed * 1000003 + salt);
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 2, sc->directed), DYNG_OK);
  int64_t next_rowid = 1;
  for (int i = 0; i < sc->n_edges; i++) {
    int64_t s, d;
    double w[2] = {draw_weight(&r, sc->integer), draw_weight(&r, sc->integer)};
    draw_edge(&r, sc, &s, &d);
    assert_int_equal(dyng_graph_load_edge(g, next_rowid++, s, d, w), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  assert_int_equal(dyng_graph_build_in(g), DYNG_OK);

  /* Two trees: objective 0 and 1, from different sources. */
  dyng_sssp_tree tree[2];
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  for (int k = 0; k < 2; k++) {
    uint32_t src = (uint32_t)test_rng_below(&r, v.n_vertices);
    assert_int_equal(dyng_sssp_tree_init(&tree[k], v.n_vertices), DYNG_OK);
    assert_int_equal(dyng_sssp_dijkstra(&v, src, k, DYNG_NONE, &tree[k]), DYNG_OK);
  }

  dyng_batch *b = dyng_batch_new(2);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  assert_non_null(b);
  for (int round = 0; round < 40; round++) {
    dyng_batch_clear(b);
    uint32_t n_edges = dyng_graph_n_edges(g);
    /* Batch sizes from one change to a tenth of the edges. */
    int n_ops = round % 4 == 0 ? 1 : 1 + (int)test_rng_below(&r, n_edges / 10 + 1);
    for (int op = 0; op < n_ops; op++) {
      uint64_t dice = test_rng_below(&r, 10);
      double w[2] = {draw_weight(&r, sc->integer), draw_weight(&r, sc->integer)};
      if (dice < 4) {
        int64_t s, d;
        draw_edge(&r, sc, &s, &d);
        assert_int_equal(dyng_batch_insert(b, next_rowid++, s, d, w), DYNG_OK);
      } else {
        /* An existing rowid: a tree edge of tree 0 half of the time. */
        int64_t rowid;
        dyng_graph_get_view(g, &v);
        uint32_t x = (uint32_t)test_rng_below(&r, v.n_vertices);
        if (dice < 7 && x < tree[0].n_vertices && tree[0].parent_edge[x] != DYNG_NONE)
          rowid = v.edge_rowid[tree[0].parent_edge[x]];
        else
          rowid = 1 + (int64_t)test_rng_below(&r, (uint64_t)next_rowid);
        uint32_t slot;
        if (dice < 8 || dyng_graph_edge(g, rowid, &slot) != DYNG_OK) {
          assert_int_equal(dyng_batch_delete(b, rowid), DYNG_OK);
        } else {
          /* A weight change (up or down) of the same edge. */
          int64_t s = dyng_graph_node_id(g, dyng_graph_edge_src(g, slot));
          int64_t d = dyng_graph_node_id(g, dyng_graph_edge_dst(g, slot));
          assert_int_equal(dyng_batch_insert(b, rowid, s, d, w), DYNG_OK);
        }
      }
    }
    assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
    assert_int_equal(dyng_graph_check(g), DYNG_OK);
    dyng_graph_get_view(g, &v);
    for (int k = 0; k < 2; k++) {
      size_t touched = 0;
      assert_int_equal(dyng_sssp_update(&v, &tree[k], ch.removed, ch.n_removed, ch.added,
                                        ch.n_added, 0, &touched),
                       DYNG_OK);
      verify_tree(g, &tree[k], sc->integer);
    }
  }
  for (int k = 0; k < 2; k++) dyng_sssp_tree_free(&tree[k]);
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
}

static void test_directed_grid_integer_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {1, 1, 1, 400, 1400};
  run_scenario(&sc, 1);
}

static void test_undirected_grid_integer_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {0, 1, 1, 400, 900};
  run_scenario(&sc, 2);
}

static void test_directed_skewed_real_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {1, 0, 0, 300, 1500};
  run_scenario(&sc, 3);
}

static void test_undirected_skewed_real_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {0, 0, 0, 300, 1200};
  run_scenario(&sc, 4);
}

static void test_sparse_graph_with_disconnections_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {1, 1, 0, 200, 260};
  run_scenario(&sc, 5);
}

/* Weights 0 and 1 only: ties everywhere, zero-weight cycles, parallel
** edges of equal weight: the tie rule decides most parents. */
static void test_directed_ties_everywhere_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {1, 2, 1, 400, 1600};
  run_scenario(&sc, 6);
}

static void test_undirected_ties_everywhere_updates_equal_recompute(void **state) {
  (void)state;
  scenario sc = {0, 2, 0, 300, 900};
  run_scenario(&sc, 7);
}

static void test_update_past_its_budget_gives_up(void **state) {
  (void)state;
  /* A path 0-1-...-99 whose first edge goes: every vertex moves. */
  dyng_graph *g = NULL;
  double w[1] = {1};
  assert_int_equal(dyng_graph_new(&g, 1, 1), DYNG_OK);
  for (int i = 0; i < 99; i++) assert_int_equal(dyng_graph_load_edge(g, i + 1, i, i + 1, w), DYNG_OK);
  double far[1] = {1000};
  assert_int_equal(dyng_graph_load_edge(g, 100, 0, 1, far), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_sssp_tree t;
  assert_int_equal(dyng_sssp_tree_init(&t, v.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&v, 0, 0, DYNG_NONE, &t), DYNG_OK);
  dyng_batch *b = dyng_batch_new(1);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  assert_int_equal(dyng_batch_delete(b, 1), DYNG_OK);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_graph_get_view(g, &v);
  size_t touched = 0;
  assert_int_equal(dyng_sssp_update(&v, &t, ch.removed, ch.n_removed, ch.added, ch.n_added, 10,
                                    &touched),
                   DYNG_EGAVEUP);
  /* The caller then recomputes, which gives the right tree. */
  assert_int_equal(dyng_sssp_dijkstra(&v, 0, 0, DYNG_NONE, &t), DYNG_OK);
  verify_tree(g, &t, 1);
  assert_true(t.dist[99] == 1000 + 98);
  dyng_sssp_tree_free(&t);
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
}

/* The stop poll of a search: called once per 4096 vertices it takes. */
static int count_polls(void *ctx) {
  ++*(unsigned *)ctx;
  return 0;
}

/* Long chains of zero weights: a search takes each vertex once, and an
** update moves each a few times at most.  Taken by distance alone (in any
** order among equal distances), a vertex first reached along a long chain
** was taken again each time a shorter one turned up, with its whole chain
** after it.  A 100 x 100 grid, both ways, objective 0 all zeros,
** objective 1 zeros but for one edge in ten; then the source's edges go
** and zero-weight shortcuts come. */
static void test_zero_weight_chains_take_each_vertex_once(void **state) {
  (void)state;
  const int side = 100, n = side * side;
  test_rng r;
  test_rng_seed(&r, g_seed * 1000003 + 17);
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 2, 0), DYNG_OK);
  int64_t rowid = 1;
  for (int u = 0; u < n; u++)
    for (int j = 0; j < 2; j++) {
      int x = j ? u + side : u + 1;
      if (j ? x >= n : x % side == 0) continue;
      double w[2] = {0, test_rng_below(&r, 10) ? 0 : 1};
      assert_int_equal(dyng_graph_load_edge(g, rowid++, u, x, w), DYNG_OK);
    }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  unsigned polls = 0;
  dyng_cancel c = {count_polls, &polls, NULL};
  v.cancel = &c;
  dyng_sssp_tree t[2];
  uint32_t src;
  assert_int_equal(dyng_graph_vertex(g, 0, &src), DYNG_OK);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(dyng_sssp_tree_init(&t[k], v.n_vertices), DYNG_OK);
    polls = 0;
    assert_int_equal(dyng_sssp_dijkstra(&v, src, k, DYNG_NONE, &t[k]), DYNG_OK);
    if (polls > (unsigned)n / 4096) fail_msg("objective %d: %u polls, the search took vertices again", k, polls);
    verify_tree(g, &t[k], 1);
  }
  /* The source's two edges go (rowids 1 and 2); shortcuts of weight 0. */
  dyng_batch *b = dyng_batch_new(2);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  assert_int_equal(dyng_batch_delete(b, 1), DYNG_OK);
  assert_int_equal(dyng_batch_delete(b, 2), DYNG_OK);
  double zero[2] = {0, 0};
  assert_int_equal(dyng_batch_insert(b, rowid++, 0, n - 1, zero), DYNG_OK);
  for (int i = 0; i < 20; i++)
    assert_int_equal(dyng_batch_insert(b, rowid++, (int64_t)test_rng_below(&r, (uint64_t)n),
                                       (int64_t)test_rng_below(&r, (uint64_t)n), zero),
                     DYNG_OK);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_graph_get_view(g, &v);
  for (int k = 0; k < 2; k++) {
    size_t touched = 0;
    assert_int_equal(dyng_sssp_update(&v, &t[k], ch.removed, ch.n_removed, ch.added, ch.n_added, 0, &touched),
                     DYNG_OK);
    /* Cut once, then moved at most once per in-edge (4 on the grid). */
    if (touched > 6 * (size_t)n) fail_msg("objective %d: %zu vertices touched of %d", k, touched, n);
    verify_tree(g, &t[k], 1);
    dyng_sssp_tree_free(&t[k]);
  }
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
}

static void test_update_without_in_adjacency_is_einval(void **state) {
  (void)state;
  dyng_graph *g = NULL;
  double w[1] = {1};
  assert_int_equal(dyng_graph_new(&g, 1, 1), DYNG_OK);
  assert_int_equal(dyng_graph_load_edge(g, 1, 1, 2, w), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_sssp_tree t;
  assert_int_equal(dyng_sssp_tree_init(&t, v.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&v, 0, 0, DYNG_NONE, &t), DYNG_OK);
  assert_int_equal(dyng_sssp_update(&v, &t, NULL, 0, NULL, 0, 0, NULL), DYNG_EINVAL);
  dyng_sssp_tree_free(&t);
  dyng_graph_free(g);
}

int main(void) {
  g_seed = test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_directed_grid_integer_updates_equal_recompute),
      cmocka_unit_test(test_undirected_grid_integer_updates_equal_recompute),
      cmocka_unit_test(test_directed_skewed_real_updates_equal_recompute),
      cmocka_unit_test(test_undirected_skewed_real_updates_equal_recompute),
      cmocka_unit_test(test_sparse_graph_with_disconnections_updates_equal_recompute),
      cmocka_unit_test(test_directed_ties_everywhere_updates_equal_recompute),
      cmocka_unit_test(test_undirected_ties_everywhere_updates_equal_recompute),
      cmocka_unit_test(test_update_past_its_budget_gives_up),
      cmocka_unit_test(test_zero_weight_chains_take_each_vertex_once),
      cmocka_unit_test(test_update_without_in_adjacency_is_einval),
  };
  return cmocka_run_group_tests_name("sssp_dyn", tests, NULL, NULL);
}
