/*
** tests/test_mosp.c: engine/mosp.c without SQLite.  On random graphs with
** one shortest-path tree per objective, the ensemble path must be a path
** of tree edges from the source to the target whose ensemble cost (K + 1 -
** the trees sharing each edge) is what it reports and is the least such
** cost, found by Bellman-Ford over the ensemble built here by hand.  A
** target no tree reaches gives the empty path; mismatched trees DYNG_EINVAL.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/mosp.h"
#include "engine/sssp.h"

#include <math.h>
#include <string.h>

#define MAX_K 4

/* The trees sharing the ensemble edge (parent -> child over slot): those
** whose parent edge of the child is that slot from that parent. */
static int n_sharing(dyng_sssp_tree *const *trees, int k, uint32_t parent, uint32_t child,
                     uint32_t slot) {
  int n = 0;
  for (int i = 0; i < k; i++) n += trees[i]->parent_edge[child] == slot && trees[i]->parent[child] == parent;
  return n;
}

/* The least ensemble cost from source to every vertex (Bellman-Ford). */
static void ensemble_distances(dyng_sssp_tree *const *trees, int k, uint32_t n, uint32_t source,
                               double *dist) {
  for (uint32_t v = 0; v < n; v++) dist[v] = INFINITY;
  dist[source] = 0;
  for (uint32_t round = 0; round < n; round++)
    for (int i = 0; i < k; i++)
      for (uint32_t v = 0; v < n; v++) {
        uint32_t p = trees[i]->parent[v];
        if (p == DYNG_NONE || isinf(dist[p])) continue;
        double w = k + 1 - n_sharing(trees, k, p, v, trees[i]->parent_edge[v]);
        if (dist[p] + w < dist[v]) dist[v] = dist[p] + w;
      }
}

static void test_ensemble_path_is_least_cost_over_tree_edges(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0);
  int n_paths = 0;
  for (int round = 0; round < 200; round++) {
    int k = 1 + (int)test_rng_below(&r, MAX_K);
    int directed = test_rng_below(&r, 2) == 0;
    int n_nodes = 2 + (int)test_rng_below(&r, 30);
    int m = (int)test_rng_below(&r, (uint64_t)(4 * n_nodes)) + 1;
    dyng_graph *g = NULL;
    assert_int_equal(dyng_graph_new(&g, k, directed), DYNG_OK);
    for (int e = 0; e < m; e++) {
      double w[MAX_K];
      for (int j = 0; j < k; j++) w[j] = (double)(1 + test_rng_below(&r, 5));
      /* Rowids against the load order: ties go by rowid, not by slot. */
      assert_int_equal(dyng_graph_load_edge(g, m - e, (int64_t)test_rng_below(&r, (uint64_t)n_nodes),
                                            (int64_t)test_rng_below(&r, (uint64_t)n_nodes), w),
                       DYNG_OK);
    }
    assert_int_equal(dyng_graph_seal(g), DYNG_OK);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    uint32_t n = view.n_vertices;
    uint32_t source = (uint32_t)test_rng_below(&r, n), target = (uint32_t)test_rng_below(&r, n);
    dyng_sssp_tree tree[MAX_K];
    dyng_sssp_tree *trees[MAX_K];
    for (int j = 0; j < k; j++) {
      assert_int_equal(dyng_sssp_tree_init(&tree[j], n), DYNG_OK);
      assert_int_equal(dyng_sssp_dijkstra(&view, source, j, DYNG_NONE, &tree[j]), DYNG_OK);
      trees[j] = &tree[j];
    }
    double *dist = malloc(n * sizeof *dist);
    assert_non_null(dist);
    ensemble_distances(trees, k, n, source, dist);
    dyng_path p;
    assert_int_equal(dyng_mosp_path((const dyng_sssp_tree *const *)trees, k, n, view.n_edge_slots, view.edge_rowid,
                                    source, target, &p),
                     DYNG_OK);
    if (isinf(dist[target])) {
      assert_int_equal(p.n, 0);
    } else {
      assert_true(p.n >= 1);
      assert_int_equal(p.vertex[0], source);
      assert_int_equal(p.vertex[p.n - 1], target);
      double cost = 0;
      for (uint32_t i = 0; i + 1 < p.n; i++) {
        int shared = n_sharing(trees, k, p.vertex[i], p.vertex[i + 1], p.edge[i]);
        assert_true(shared >= 1); /* a tree edge, in the tree's direction */
        cost += k + 1 - shared;
      }
      assert_true(cost == p.ensemble_cost);
      assert_true(cost == dist[target]);
      /* Into every vertex of the path, the cheapest way with the smallest
      ** rowid among the trees' parent edges. */
      for (uint32_t i = 1; i < p.n; i++) {
        uint32_t v = p.vertex[i], want = DYNG_NONE;
        for (int j = 0; j < k; j++) {
          uint32_t e = trees[j]->parent_edge[v], u = trees[j]->parent[v];
          if (e == DYNG_NONE || dist[u] + (k + 1 - n_sharing(trees, k, u, v, e)) != dist[v]) continue;
          if (want == DYNG_NONE || view.edge_rowid[e] < view.edge_rowid[want]) want = e;
        }
        assert_int_equal(p.edge[i - 1], want);
      }
      n_paths += p.n > 2;
    }
    dyng_path_free(&p);
    free(dist);
    for (int j = 0; j < k; j++) dyng_sssp_tree_free(&tree[j]);
    dyng_graph_free(g);
  }
  assert_true(n_paths > 30); /* the rounds did reach paths of several edges */
}

static void test_mismatched_trees_are_refused(void **state) {
  (void)state;
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 2, 1), DYNG_OK);
  double w[2] = {1, 2};
  assert_int_equal(dyng_graph_load_edge(g, 1, 10, 20, w), DYNG_OK);
  assert_int_equal(dyng_graph_load_edge(g, 2, 20, 30, w), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  dyng_sssp_tree a, b;
  assert_int_equal(dyng_sssp_tree_init(&a, view.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_tree_init(&b, view.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&view, 0, 0, DYNG_NONE, &a), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&view, 1, 1, DYNG_NONE, &b), DYNG_OK);
  const dyng_sssp_tree *trees[2] = {&a, &b};
  dyng_path p;
  assert_int_equal(dyng_mosp_path(trees, 2, view.n_vertices, view.n_edge_slots, view.edge_rowid, 0, 2, &p),
                   DYNG_EINVAL); /* different sources */
  dyng_path_free(&p);
  assert_int_equal(dyng_mosp_path(trees, 1, view.n_vertices, view.n_edge_slots, view.edge_rowid, 0, 99, &p),
                   DYNG_EINVAL); /* target out of range */
  dyng_path_free(&p);
  assert_int_equal(dyng_mosp_path(trees, 0, view.n_vertices, view.n_edge_slots, view.edge_rowid, 0, 2, &p),
                   DYNG_EINVAL); /* no tree */
  dyng_path_free(&p);
  /* The one tree alone: its own path, every edge costing 1. */
  assert_int_equal(dyng_mosp_path(trees, 1, view.n_vertices, view.n_edge_slots, view.edge_rowid, 0, 2, &p), DYNG_OK);
  assert_int_equal(p.n, 3);
  assert_true(p.ensemble_cost == 2.0);
  dyng_path_free(&p);
  dyng_sssp_tree_free(&a);
  dyng_sssp_tree_free(&b);
  dyng_graph_free(g);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ensemble_path_is_least_cost_over_tree_edges),
      cmocka_unit_test(test_mismatched_trees_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
