/*
** tests/test_mirror.c: engine/mirror.c without SQLite.
**
** Applying batches to a mirror that keeps trees and cycle counts must give
** what a computation from scratch on the graph after them gives (random
** small graphs, random batches).  A device backend that runs out of memory
** (a fake one: the CPU backend's table with DYNG_CAP_DEVICE and entries
** that fail on demand) moves the graph to the CPU once, and the answers
** stay right.  The kept trees' budget evicts the least recently used tree,
** and a tree whose update gave up is recomputed directly for batches as
** large.
*/
#include "tests/test_util.h"

#include "engine/alloc.h"
#include "engine/cycles.h"
#include "engine/error.h"
#include "engine/mirror.h"
#include "engine/mosp.h"
#include "engine/sssp.h"

#include <math.h>
#include <string.h>

static uint64_t g_seed;

/* ---- the fake device backend ------------------------------------------- */

static dyng_backend g_fake;
static int g_fail_sssp;    /* sssp calls on the fake left before one fails */
static int g_fail_update;  /* graph_update calls likewise */
static int g_moves;        /* moved hook calls */

static int fake_sssp(void *state, const dyng_graph_view *view, uint32_t source, int objective, uint32_t target,
                     dyng_sssp_tree *t) {
  if (g_fail_sssp >= 0 && g_fail_sssp-- == 0) return DYNG_ENOMEM;
  return dyng_backend_cpu()->sssp(state, view, source, objective, target, t);
}

static int fake_update(void *state, const dyng_graph_view *view, const dyng_changes *changes) {
  if (g_fail_update >= 0 && g_fail_update-- == 0) return DYNG_ENOMEM;
  return dyng_backend_cpu()->graph_update(state, view, changes);
}

static int fake_cycles_count(void *state, const dyng_graph_view *view, int k, int directed, uint64_t *count) {
  (void)state, (void)view, (void)k, (void)directed, (void)count;
  return DYNG_ENOMEM; /* never room on this device */
}

static int fake_cycles_delta(void *state, const dyng_graph_view *view, const dyng_changes *changes, int k,
                             int directed, dyng_cycles_diff *delta) {
  (void)state, (void)view, (void)changes, (void)k, (void)directed, (void)delta;
  return DYNG_ENOMEM;
}

static int fake_mosp_path(void *state, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                          uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge,
                          uint32_t *n, double *cost) {
  (void)state, (void)view, (void)trees, (void)k, (void)source, (void)target, (void)cap, (void)vertex;
  (void)edge, (void)n, (void)cost;
  return DYNG_ENOMEM;
}

static const char *fake_message(void *state) {
  (void)state;
  return "fake device full";
}

static const dyng_backend *fake_backend(void) {
  g_fake = *dyng_backend_cpu();
  g_fake.name = "fakedev";
  g_fake.caps = DYNG_CAP_DEVICE;
  g_fake.sssp = fake_sssp;
  g_fake.graph_update = fake_update;
  g_fake.error_message = fake_message;
  g_fail_sssp = g_fail_update = -1;
  return &g_fake;
}

static void on_moved(void *ctx, const dyng_mirror *m) {
  (void)ctx;
  (void)m;
  g_moves++;
}

/* ---- graphs ------------------------------------------------------------- */

#define N_NODES 12

/* A random graph of n_edges edges on N_NODES nodes, rowids 1..n_edges. */
static dyng_graph *random_graph(test_rng *r, int directed, int n_weights, int n_edges) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, n_weights, directed), DYNG_OK);
  for (int e = 1; e <= n_edges; e++) {
    double w[DYNG_MAX_WEIGHTS];
    for (int k = 0; k < n_weights; k++) w[k] = (double)(1 + test_rng_below(r, 9));
    assert_int_equal(dyng_graph_load_edge(g, e, (int64_t)test_rng_below(r, N_NODES),
                                          (int64_t)test_rng_below(r, N_NODES), w),
                     DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  return g;
}

/* A random batch: inserts, replacements and deletes of rowids 1..max_rowid. */
static dyng_batch *random_batch(test_rng *r, int n_weights, int n_ops, int max_rowid) {
  dyng_batch *b = dyng_batch_new(n_weights);
  assert_non_null(b);
  for (int i = 0; i < n_ops; i++) {
    int64_t rowid = 1 + (int64_t)test_rng_below(r, (uint64_t)max_rowid);
    if (test_rng_below(r, 3) == 0) {
      assert_int_equal(dyng_batch_delete(b, rowid), DYNG_OK);
    } else {
      double w[DYNG_MAX_WEIGHTS];
      for (int k = 0; k < n_weights; k++) w[k] = (double)(1 + test_rng_below(r, 9));
      assert_int_equal(dyng_batch_insert(b, rowid, (int64_t)test_rng_below(r, N_NODES),
                                         (int64_t)test_rng_below(r, N_NODES), w),
                       DYNG_OK);
    }
  }
  return b;
}

/* Tree t (of m's graph now) equals a Dijkstra from scratch in distances. */
static void assert_tree_fresh(dyng_mirror *m, dyng_sssp_tree *t) {
  assert_int_equal(dyng_mirror_tree_rows(m, t, NULL, 0), DYNG_OK);
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  dyng_sssp_tree ref;
  assert_int_equal(dyng_sssp_tree_init(&ref, view.n_vertices), DYNG_OK);
  assert_int_equal(dyng_sssp_dijkstra(&view, t->source, t->objective, DYNG_NONE, &ref), DYNG_OK);
  for (uint32_t v = 0; v < view.n_vertices; v++) {
    if (isinf(ref.dist[v])) assert_true(isinf(t->dist[v]));
    else assert_true(t->dist[v] == ref.dist[v]);
  }
  dyng_sssp_tree_free(&ref);
}

/* m's kept count of k-cycles equals a count from scratch. */
static void assert_count_fresh(dyng_mirror *m, int k, int directed) {
  uint64_t kept = 0, ref = 0;
  assert_int_equal(dyng_mirror_cycles(m, k, directed, NULL, &kept), DYNG_OK);
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  assert_int_equal(dyng_cycles_count(&view, k, directed, NULL, &ref), DYNG_OK);
  assert_true(kept == ref);
}

static void test_apply_matches_recompute(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, g_seed);
  for (int round = 0; round < 40; round++) {
    int directed = round & 1, n_weights = 1 + (int)(round % 3);
    dyng_mirror_pool pool;
    dyng_mirror_pool_init(&pool, 1 << 20);
    dyng_mirror *m = NULL;
    char err[200];
    assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, directed, n_weights, 20), dyng_backend_cpu(), "test",
                                     0, "g", &m, err, sizeof err),
                     DYNG_OK);
    /* Keep trees from two sources in every objective, and two counts. */
    for (int k = 0; k < n_weights; k++)
      for (uint32_t s = 0; s < 2; s++) {
        dyng_sssp_tree *t;
        dyng_kept_tree *owned;
        assert_int_equal(dyng_mirror_tree(m, s, k, NULL, &t, &owned), DYNG_OK);
        assert_null(owned);
      }
    assert_count_fresh(m, 3, directed);
    assert_count_fresh(m, 4, directed);
    for (int step = 0; step < 6; step++) {
      dyng_batch *b = random_batch(&r, n_weights, 1 + (int)test_rng_below(&r, 8), 26);
      assert_int_equal(dyng_mirror_apply(m, b, NULL), DYNG_OK);
      dyng_batch_free(b);
      assert_int_equal(dyng_graph_check(m->graph), DYNG_OK);
      int n = 0;
      for (dyng_kept_tree *p = m->trees; p; p = p->next, n++) assert_tree_fresh(m, &p->tree);
      assert_int_equal(n, 2 * n_weights);
      assert_count_fresh(m, 3, directed);
      assert_count_fresh(m, 4, directed);
    }
    dyng_mirror_free(m);
    assert_int_equal(pool.bytes, 0);
    assert_null(pool.first);
  }
}

static void test_out_of_device_memory_moves_to_cpu_once(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, g_seed ^ 0x5151);
  dyng_mirror_pool pool;
  dyng_mirror_pool_init(&pool, 1 << 20);
  pool.hooks.moved = on_moved;
  g_moves = 0;
  dyng_mirror *m = NULL;
  char err[200];
  assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 1, 1, 24), fake_backend(), "fake", 0, "g", &m, err,
                                   sizeof err),
                   DYNG_OK);
  assert_ptr_equal(m->be, &g_fake);
  /* A first tree on the device, then a batch whose update runs out of
  ** device memory: the graph moves, the kept tree follows on the CPU. */
  dyng_sssp_tree *t;
  dyng_kept_tree *owned;
  assert_int_equal(dyng_mirror_tree(m, 0, 0, NULL, &t, &owned), DYNG_OK);
  g_fail_update = 0;
  dyng_batch *b = random_batch(&r, 1, 6, 30);
  assert_int_equal(dyng_mirror_apply(m, b, NULL), DYNG_OK);
  dyng_batch_free(b);
  assert_int_equal(g_moves, 1);
  assert_ptr_equal(m->be, dyng_backend_cpu());
  assert_non_null(strstr(m->why, "fake device full"));
  assert_non_null(m->trees);
  assert_tree_fresh(m, &m->trees->tree);
  /* Later failures of the fake are not reached: it is gone. */
  g_fail_sssp = 0;
  assert_int_equal(dyng_mirror_tree(m, 1, 0, NULL, &t, &owned), DYNG_OK);
  assert_tree_fresh(m, t);
  assert_int_equal(g_moves, 1);
  dyng_mirror_free(m);

  /* A tree the device cannot compute: moved once, computed on the CPU. */
  g_moves = 0;
  assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 0, 2, 24), fake_backend(), "fake", 0, "g", &m, err,
                                   sizeof err),
                   DYNG_OK);
  g_fail_sssp = 0;
  assert_int_equal(dyng_mirror_tree(m, 3, 1, NULL, &t, &owned), DYNG_OK);
  assert_int_equal(g_moves, 1);
  assert_ptr_equal(m->be, dyng_backend_cpu());
  assert_tree_fresh(m, t);
  dyng_mirror_free(m);

  /* With the device required the graph stays, and says why. */
  g_moves = 0;
  assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 1, 1, 24), fake_backend(), "fake", 1, "g", &m, err,
                                   sizeof err),
                   DYNG_OK);
  g_fail_sssp = 0;
  assert_int_equal(dyng_mirror_tree(m, 0, 0, NULL, &t, &owned), DYNG_EBACKEND);
  assert_int_equal(g_moves, 0);
  assert_ptr_equal(m->be, &g_fake);
  assert_non_null(strstr(m->err, "fakedev"));
  dyng_mirror_free(m);
  assert_null(pool.first);
}

/* A count and an ensemble path the device has no room for: each moves the
** graph once and is computed on the host, equal to the engine's own. */
static void test_count_and_mosp_move_to_cpu(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, g_seed ^ 0xc0c0);
  dyng_mirror_pool pool;
  dyng_mirror_pool_init(&pool, 1 << 20);
  pool.hooks.moved = on_moved;
  char err[200];
  for (int what = 0; what < 2; what++) {
    dyng_mirror *m = NULL;
    const dyng_backend *be = fake_backend();
    g_fake.cycles_count = fake_cycles_count;
    g_fake.cycles_delta = fake_cycles_delta;
    g_fake.mosp_path = fake_mosp_path;
    g_moves = 0;
    assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 0, 2, 30), be, "fake", 0, "g", &m, err, sizeof err),
                     DYNG_OK);
    assert_string_equal(dyng_mirror_runs_on(m, DYNG_RUNS_CYCLES), "fakedev");
    if (what == 0) {
      uint64_t n = 0, ref = 0;
      assert_int_equal(dyng_mirror_cycles(m, 3, 0, NULL, &n), DYNG_OK);
      dyng_graph_view view;
      dyng_graph_get_view(m->graph, &view);
      assert_int_equal(dyng_cycles_count(&view, 3, 0, NULL, &ref), DYNG_OK);
      assert_true(n == ref);
    } else {
      dyng_path path, ref;
      assert_int_equal(dyng_mirror_mosp(m, 0, 5, NULL, &path), DYNG_OK);
      /* The engine's path from the host's trees of every objective. */
      dyng_graph_view view;
      dyng_graph_get_view(m->graph, &view);
      dyng_sssp_tree t[2];
      const dyng_sssp_tree *pt[2] = {&t[0], &t[1]};
      for (int k = 0; k < 2; k++) {
        assert_int_equal(dyng_sssp_tree_init(&t[k], view.n_vertices), DYNG_OK);
        assert_int_equal(dyng_sssp_dijkstra(&view, 0, k, DYNG_NONE, &t[k]), DYNG_OK);
      }
      assert_int_equal(dyng_mosp_path(pt, 2, view.n_vertices, view.n_edge_slots, view.edge_rowid, 0, 5, &ref), DYNG_OK);
      assert_int_equal(path.n, ref.n);
      for (uint32_t i = 0; i < path.n; i++) assert_int_equal(path.vertex[i], ref.vertex[i]);
      assert_true(path.ensemble_cost == ref.ensemble_cost);
      dyng_path_free(&path);
      dyng_path_free(&ref);
      for (int k = 0; k < 2; k++) dyng_sssp_tree_free(&t[k]);
    }
    assert_int_equal(g_moves, 1);
    assert_ptr_equal(m->be, dyng_backend_cpu());
    assert_string_equal(dyng_mirror_runs_on(m, DYNG_RUNS_CYCLES), "cpu");
    dyng_mirror_free(m);
  }
}

static void test_budget_evicts_least_recently_used(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, g_seed ^ 0xb0d9e7);
  dyng_mirror_pool pool;
  dyng_mirror_pool_init(&pool, 1 << 20);
  dyng_mirror *m = NULL;
  char err[200];
  assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 0, 1, 30), dyng_backend_cpu(), "test", 0, "g", &m,
                                   err, sizeof err),
                   DYNG_OK);
  dyng_sssp_tree *t;
  dyng_kept_tree *owned;
  assert_int_equal(dyng_mirror_tree(m, 0, 0, NULL, &t, &owned), DYNG_OK);
  int64_t one = dyng_kept_tree_bytes(m->trees);
  /* Room for two trees: the third evicts the one used longest ago. */
  pool.limit = 2 * one + one / 2;
  assert_int_equal(dyng_mirror_tree(m, 1, 0, NULL, &t, &owned), DYNG_OK);
  assert_int_equal(dyng_mirror_tree(m, 1, 0, NULL, &t, &owned), DYNG_OK); /* 1 used again */
  assert_int_equal(dyng_mirror_tree(m, 2, 0, NULL, &t, &owned), DYNG_OK);
  assert_null(owned);
  int have[3] = {0, 0, 0}, n = 0;
  for (dyng_kept_tree *p = m->trees; p; p = p->next, n++) have[p->tree.source] = 1;
  assert_int_equal(n, 2);
  assert_true(!have[0] && have[1] && have[2]);
  assert_true(pool.bytes <= pool.limit);
  assert_true(pool.bytes == 2 * one);
  /* A budget below one tree keeps none: the tree is the caller's. */
  pool.limit = one / 2;
  dyng_mirror_pool_fit(&pool);
  assert_null(m->trees);
  assert_int_equal(pool.bytes, 0);
  assert_int_equal(dyng_mirror_tree(m, 1, 0, NULL, &t, &owned), DYNG_OK);
  assert_non_null(owned);
  assert_tree_fresh(m, t);
  dyng_mirror_tree_release(owned);
  dyng_mirror_free(m);
}

static void test_give_up_rule(void **state) {
  (void)state;
  dyng_give_up g;
  memset(&g, 0, sizeof g);
  assert_false(dyng_give_up_skips(&g, 1000));
  dyng_give_up_note(&g, 500);
  assert_false(dyng_give_up_skips(&g, 499));
  /* Batches as large are computed again directly, up to DYNG_RETRY_AFTER
  ** of them; then an update is tried from twice the size. */
  for (int i = 0; i < DYNG_RETRY_AFTER; i++) assert_true(dyng_give_up_skips(&g, 500));
  assert_int_equal(g.at, 1000);
  assert_false(dyng_give_up_skips(&g, 999));
  dyng_give_up_note(&g, 700);
  assert_int_equal(g.at, 700);
}

/* A tree whose update gives up (a batch past the work budget) is
** recomputed, and the next batch as large recomputes at once. */
static void test_gave_up_tree_is_recomputed(void **state) {
  (void)state;
  test_rng r;
  test_rng_seed(&r, g_seed ^ 0x9a7e);
  dyng_mirror_pool pool;
  dyng_mirror_pool_init(&pool, 1 << 20);
  dyng_mirror *m = NULL;
  char err[200];
  assert_int_equal(dyng_mirror_new(&pool, random_graph(&r, 1, 1, 40), dyng_backend_cpu(), "test", 0, "g", &m,
                                   err, sizeof err),
                   DYNG_OK);
  dyng_sssp_tree *t;
  dyng_kept_tree *owned;
  assert_int_equal(dyng_mirror_tree(m, 0, 0, NULL, &t, &owned), DYNG_OK);
  /* As if an earlier batch of 2 changes had given up. */
  dyng_give_up_note(&m->trees->give_up, 2);
  dyng_batch *b = dyng_batch_new(1);
  double w = 1;
  assert_int_equal(dyng_batch_insert(b, 1000, 0, 5, &w), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, 1001, 5, 7, &w), DYNG_OK);
  assert_int_equal(dyng_mirror_apply(m, b, NULL), DYNG_OK);
  assert_int_equal(m->trees->n_recompute, 1);
  assert_int_equal(m->trees->last_recompute, 1);
  assert_tree_fresh(m, &m->trees->tree);
  /* A smaller batch updates. */
  dyng_batch_clear(b);
  assert_int_equal(dyng_batch_delete(b, 1001), DYNG_OK);
  assert_int_equal(dyng_mirror_apply(m, b, NULL), DYNG_OK);
  assert_int_equal(m->trees->n_update, 1);
  assert_int_equal(m->trees->last_recompute, 0);
  assert_tree_fresh(m, &m->trees->tree);
  dyng_batch_free(b);
  dyng_mirror_free(m);
}

int main(void) {
  g_seed = test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_apply_matches_recompute),
      cmocka_unit_test(test_out_of_device_memory_moves_to_cpu_once),
      cmocka_unit_test(test_count_and_mosp_move_to_cpu),
      cmocka_unit_test(test_budget_evicts_least_recently_used),
      cmocka_unit_test(test_give_up_rule),
      cmocka_unit_test(test_gave_up_tree_is_recomputed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
