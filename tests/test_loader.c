/*
** tests/test_loader.c: engine/loader.c without SQLite.  A graph loaded
** through the loader (in chunks, across chunk boundaries) must be the graph
** built edge by edge with dyng_graph_load_edge, and hold what the edge list
** says: every rowid's ends and weights, every vertex's degrees.  An edge's
** error (a rowid twice, a bad weight) comes back, at the latest from
** dyng_loader_finish, and sticks.
*/
#include "test_util.h"

#include "engine_internal.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/loader.h"

#include <math.h>
#include <string.h>

typedef struct edge_list {
  size_t n;
  int n_weights, directed;
  int64_t *rowid, *src, *dst;
  double *w; /* n_weights per edge */
} edge_list;

static void random_edges(test_rng *r, edge_list *el, size_t n, int n_weights, int directed) {
  el->n = n;
  el->n_weights = n_weights;
  el->directed = directed;
  el->rowid = malloc((n + 1) * sizeof *el->rowid);
  el->src = malloc((n + 1) * sizeof *el->src);
  el->dst = malloc((n + 1) * sizeof *el->dst);
  el->w = malloc((n * (size_t)(n_weights ? n_weights : 1) + 1) * sizeof *el->w);
  assert_true(el->rowid && el->src && el->dst && el->w);
  int64_t n_nodes = 1 + (int64_t)(n / 3);
  for (size_t i = 0; i < n; i++) {
    el->rowid[i] = (int64_t)(i * 7 + 1) - (int64_t)(n * 3); /* distinct, some negative */
    el->src[i] = (int64_t)test_rng_below(r, (uint64_t)n_nodes) * 1000003 - 5;
    el->dst[i] = (int64_t)test_rng_below(r, (uint64_t)n_nodes) * 1000003 - 5;
    for (int k = 0; k < n_weights; k++) el->w[i * n_weights + k] = test_rng_unit(r) * 100.0;
  }
}

static void free_edges(edge_list *el) {
  free(el->rowid);
  free(el->src);
  free(el->dst);
  free(el->w);
}

/* Loads el through a loader; the weights pass through a buffer that is
** overwritten after each call, as a reader of rows would. */
static int load_with_loader(const edge_list *el, dyng_graph **out) {
  assert_int_equal(dyng_graph_new(out, el->n_weights, el->directed), DYNG_OK);
  dyng_loader *l = NULL;
  assert_int_equal(dyng_loader_new(&l, *out), DYNG_OK);
  double buf[DYNG_MAX_WEIGHTS];
  int rc = DYNG_OK;
  for (size_t i = 0; i < el->n && rc == DYNG_OK; i++) {
    memcpy(buf, el->w + i * el->n_weights, sizeof(double) * el->n_weights);
    rc = dyng_loader_add(l, el->rowid[i], el->src[i], el->dst[i], el->n_weights ? buf : NULL);
    for (int k = 0; k < el->n_weights; k++) buf[k] = -1.0;
  }
  if (rc == DYNG_OK) rc = dyng_loader_finish(l);
  dyng_loader_free(l);
  return rc;
}

static dyng_graph *load_by_hand(const edge_list *el) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, el->n_weights, el->directed), DYNG_OK);
  for (size_t i = 0; i < el->n; i++)
    assert_int_equal(dyng_graph_load_edge(g, el->rowid[i], el->src[i], el->dst[i],
                                          el->n_weights ? el->w + i * el->n_weights : NULL),
                     DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  return g;
}

/* g holds exactly el, with the same vertices and degrees as ref. */
static void check_graph(const dyng_graph *g, const dyng_graph *ref, const edge_list *el) {
  assert_int_equal(dyng_graph_check(g), DYNG_OK);
  assert_int_equal(dyng_graph_n_edges(g), (uint32_t)el->n);
  assert_int_equal(dyng_graph_n_vertices(g), dyng_graph_n_vertices(ref));
  for (size_t i = 0; i < el->n; i++) {
    uint32_t slot;
    assert_int_equal(dyng_graph_edge(g, el->rowid[i], &slot), DYNG_OK);
    assert_true(dyng_graph_node_id(g, dyng_graph_edge_src(g, slot)) == el->src[i]);
    assert_true(dyng_graph_node_id(g, dyng_graph_edge_dst(g, slot)) == el->dst[i]);
    for (int k = 0; k < el->n_weights; k++)
      assert_true(dyng_graph_edge_weight(g, slot, k) == el->w[i * el->n_weights + k]);
    if (!el->n_weights) assert_true(dyng_graph_edge_weight(g, slot, 0) == 1.0);
  }
  /* Degrees: from the edge list for a directed graph, else as the graph
  ** built by hand has them. */
  for (size_t i = 0; i < el->n; i++) {
    int64_t ends[2] = {el->src[i], el->dst[i]};
    for (int e = 0; e < 2; e++) {
      uint32_t v, vr;
      assert_int_equal(dyng_graph_vertex(g, ends[e], &v), DYNG_OK);
      assert_int_equal(dyng_graph_vertex(ref, ends[e], &vr), DYNG_OK);
      assert_int_equal(dyng_graph_out_degree(g, v), dyng_graph_out_degree(ref, vr));
      assert_int_equal(dyng_graph_in_degree(g, v), dyng_graph_in_degree(ref, vr));
      if (el->directed) {
        uint32_t n_out = 0, n_in = 0;
        for (size_t j = 0; j < el->n; j++) n_out += el->src[j] == ends[e], n_in += el->dst[j] == ends[e];
        assert_int_equal(dyng_graph_out_degree(g, v), n_out);
        assert_int_equal(dyng_graph_in_degree(g, v), n_in);
      }
    }
    if (i > 300) i += i / 16; /* degrees of a sample on large lists */
  }
}

static int teardown(void **state) {
  (void)state;
  dyng__loader_set_helper_after(0);
  return 0;
}

/* Sizes around the loader's chunk of 8192 edges. */
static void run_builds_the_graph(uint64_t salt) {
  test_rng r;
  test_rng_for(&r, salt);
  static const size_t sizes[] = {0, 1, 17, 8191, 8192, 8193, 16384, 24577, 41000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int variant = 0; variant < 4; variant++) {
      edge_list el;
      random_edges(&r, &el, sizes[s], variant & 1 ? 3 : 0, variant < 2);
      dyng_graph *g = NULL;
      assert_int_equal(load_with_loader(&el, &g), DYNG_OK);
      dyng_graph *ref = load_by_hand(&el);
      check_graph(g, ref, &el);
      dyng_graph_free(g);
      dyng_graph_free(ref);
      free_edges(&el);
    }
}

static void test_loader_builds_the_graph_edge_by_edge_would(void **state) {
  (void)state;
  run_builds_the_graph(0);
}

/* The same with a helper thread loading the chunks from the first on (and
** from the second): the graph is the same. */
static void test_loader_with_a_helper_builds_the_same_graph(void **state) {
  (void)state;
  dyng__loader_set_helper_after(1);
  run_builds_the_graph(1);
  dyng__loader_set_helper_after(2);
  run_builds_the_graph(2);
}

/* The edge at `bad` is broken by `how`; the error comes back from add or
** finish, and sticks. */
static void check_error(size_t n, size_t bad, int how, int want) {
  test_rng r;
  test_rng_for(&r, bad * 31 + (size_t)how);
  edge_list el;
  random_edges(&r, &el, n, 1, 1);
  if (how == 0) el.rowid[bad] = el.rowid[0];
  if (how == 1) el.w[bad] = NAN;
  if (how == 2) el.w[bad] = -1.0;
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 1, 1), DYNG_OK);
  dyng_loader *l = NULL;
  assert_int_equal(dyng_loader_new(&l, g), DYNG_OK);
  int first = DYNG_OK;
  for (size_t i = 0; i < n; i++) {
    int rc = dyng_loader_add(l, el.rowid[i], el.src[i], el.dst[i], el.w + i);
    if (first == DYNG_OK) first = rc;
    else assert_int_equal(rc, first); /* sticks */
    if (rc != DYNG_OK) assert_true(i >= bad);
  }
  int rc = dyng_loader_finish(l);
  assert_int_equal(rc, want);
  if (first != DYNG_OK) assert_int_equal(first, want);
  assert_int_equal(dyng_loader_add(l, 1, 1, 2, el.w), want);
  assert_int_equal(dyng_loader_finish(l), want);
  dyng_loader_free(l);
  dyng_graph_free(g);
  free_edges(&el);
}

static void test_loader_reports_an_edge_error_and_keeps_it(void **state) {
  (void)state;
  for (unsigned after = 0; after <= 1; after++) { /* 1: a helper loads the chunks */
    dyng__loader_set_helper_after(after);
    check_error(100, 50, 0, DYNG_EINVAL);      /* in the last, partial chunk */
    check_error(20000, 10, 0, DYNG_EINVAL);    /* in the first chunk */
    check_error(20000, 9000, 1, DYNG_EWEIGHT); /* in the second */
    check_error(20000, 19999, 2, DYNG_EWEIGHT); /* the very last edge */
    check_error(60000, 30000, 0, DYNG_EINVAL); /* with chunks queued behind it */
  }
}

static void test_loader_free_accepts_null_and_drops_queued_edges(void **state) {
  (void)state;
  dyng_loader_free(NULL);
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 0, 1), DYNG_OK);
  dyng_loader *l = NULL;
  assert_int_equal(dyng_loader_new(&l, g), DYNG_OK);
  assert_int_equal(dyng_loader_add(l, 1, 10, 20, NULL), DYNG_OK);
  dyng_loader_free(l); /* not finished: the edge never reaches the graph */
  assert_int_equal(dyng_graph_n_edges(g), 0);
  dyng_graph_free(g);
  /* With a helper running and chunks queued: it stops, what it loaded
  ** stays in the graph (not sealed), nothing leaks. */
  dyng__loader_set_helper_after(1);
  assert_int_equal(dyng_graph_new(&g, 0, 1), DYNG_OK);
  assert_int_equal(dyng_loader_new(&l, g), DYNG_OK);
  for (int64_t i = 0; i < 50000; i++) assert_int_equal(dyng_loader_add(l, i + 1, i % 977, i % 131, NULL), DYNG_OK);
  dyng_loader_free(l);
  assert_true(dyng_graph_n_edges(g) <= 50000);
  dyng_graph_free(g);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_loader_builds_the_graph_edge_by_edge_would, teardown),
      cmocka_unit_test_teardown(test_loader_with_a_helper_builds_the_same_graph, teardown),
      cmocka_unit_test_teardown(test_loader_reports_an_edge_error_and_keeps_it, teardown),
      cmocka_unit_test_teardown(test_loader_free_accepts_null_and_drops_queued_edges, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
