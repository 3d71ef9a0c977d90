/*
** tests/test_pareto.c: engine/pareto.c without SQLite, against brute
** force: on small random graphs with positive integer weights in two or
** three objectives, the front is the set of non-dominated cost vectors of
** all simple paths, enumerated one by one.  Each path of the front is
** checked to be a real path of the graph with the cost it reports.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/pareto.h"

#include <string.h>

#define MAX_V 8
#define MAX_E 24
#define MAX_K 3
#define MAX_COSTS 4096

/* A small graph as the test knows it. */
typedef struct small_graph {
  int n, m, k, directed;
  int src[MAX_E], dst[MAX_E];
  double w[MAX_E][MAX_K];
} small_graph;

/* The cost vectors of every simple path found so far. */
typedef struct costs {
  int n, k;
  double c[MAX_COSTS][MAX_K];
} costs;

static void enumerate(const small_graph *sg, int v, int target, int *on_path, double *acc, costs *out) {
  if (v == target) {
    assert_true(out->n < MAX_COSTS);
    memcpy(out->c[out->n++], acc, sizeof(double) * sg->k);
    return;
  }
  on_path[v] = 1;
  for (int e = 0; e < sg->m; e++) {
    for (int dir = 0; dir < (sg->directed ? 1 : 2); dir++) {
      int a = dir ? sg->dst[e] : sg->src[e], b = dir ? sg->src[e] : sg->dst[e];
      if (a != v || on_path[b]) continue;
      for (int j = 0; j < sg->k; j++) acc[j] += sg->w[e][j];
      enumerate(sg, b, target, on_path, acc, out);
      for (int j = 0; j < sg->k; j++) acc[j] -= sg->w[e][j];
    }
  }
  on_path[v] = 0;
}

static int dominates_or_equals(const double *a, const double *b, int k) {
  for (int j = 0; j < k; j++)
    if (a[j] > b[j]) return 0;
  return 1;
}

static int lex_cmp(const double *a, const double *b, int k) {
  for (int j = 0; j < k; j++)
    if (a[j] != b[j]) return a[j] < b[j] ? -1 : 1;
  return 0;
}

/* The reference front: distinct non-dominated vectors, in lexicographic
** order. */
static void reference_front(const small_graph *sg, int source, int target, costs *front) {
  static costs all;
  int on_path[MAX_V] = {0};
  double acc[MAX_K] = {0};
  all.n = 0;
  all.k = sg->k;
  enumerate(sg, source, target, on_path, acc, &all);
  front->n = 0;
  front->k = sg->k;
  for (int i = 0; i < all.n; i++) {
    int keep = 1;
    for (int j = 0; j < all.n && keep; j++) {
      if (j == i) continue;
      int cmp = lex_cmp(all.c[j], all.c[i], sg->k);
      /* Dominated strictly, or equal to an earlier one. */
      if (dominates_or_equals(all.c[j], all.c[i], sg->k) && (cmp != 0 || j < i)) keep = 0;
    }
    if (keep) memcpy(front->c[front->n++], all.c[i], sizeof(double) * sg->k);
  }
  for (int i = 1; i < front->n; i++) /* insertion sort, lexicographic */
    for (int j = i; j > 0 && lex_cmp(front->c[j - 1], front->c[j], sg->k) > 0; j--) {
      double t[MAX_K];
      memcpy(t, front->c[j], sizeof t);
      memcpy(front->c[j], front->c[j - 1], sizeof t);
      memcpy(front->c[j - 1], t, sizeof t);
    }
}

static void random_graph(test_rng *r, small_graph *sg) {
  sg->n = 2 + (int)test_rng_below(r, MAX_V - 1);
  sg->m = (int)test_rng_below(r, (uint64_t)(3 * sg->n));
  if (sg->m > MAX_E) sg->m = MAX_E;
  sg->k = 2 + (int)test_rng_below(r, MAX_K - 1);
  sg->directed = test_rng_below(r, 3) != 0;
  for (int e = 0; e < sg->m; e++) {
    sg->src[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    sg->dst[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    for (int j = 0; j < sg->k; j++) sg->w[e][j] = (double)(1 + test_rng_below(r, 9));
  }
}

static dyng_graph *build(const small_graph *sg) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, sg->k, sg->directed), DYNG_OK);
  /* Node ids are the test's vertex numbers; edge e has rowid 100 + e. */
  for (int e = 0; e < sg->m; e++)
    assert_int_equal(dyng_graph_load_edge(g, 100 + e, sg->src[e], sg->dst[e], sg->w[e]), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sg->directed) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  return g;
}

/* Checks front path i: a real path from source to target whose edges'
** weights add up to its cost. */
static void check_path(const dyng_graph *g, const dyng_front *f, uint32_t i, uint32_t vs,
                       uint32_t vt, int directed) {
  uint32_t at = f->path_start[i], len = f->path_len[i];
  assert_true(len >= 1);
  assert_int_equal(f->vertex[at], vs);
  assert_int_equal(f->vertex[at + len - 1], vt);
  double sum[MAX_K] = {0};
  for (uint32_t j = 0; j + 1 < len; j++) {
    uint32_t slot = f->edge[at + j], a = f->vertex[at + j], b = f->vertex[at + j + 1];
    uint32_t es = dyng_graph_edge_src(g, slot), ed = dyng_graph_edge_dst(g, slot);
    assert_true((es == a && ed == b) || (!directed && es == b && ed == a));
    for (int k = 0; k < f->k; k++) sum[k] += dyng_graph_edge_weight(g, slot, k);
  }
  assert_int_equal(f->edge[at + len - 1], DYNG_NONE);
  for (int k = 0; k < f->k; k++) assert_true(sum[k] == f->cost[(size_t)i * f->k + k]);
}

static void test_front_matches_brute_force_on_random_graphs(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0);
  static small_graph sg;
  static costs want;
  int n_nonempty = 0;
  for (int round = 0; round < 300; round++) {
    random_graph(&r, &sg);
    if (sg.m == 0) continue;
    dyng_graph *g = build(&sg);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    int s = sg.src[test_rng_below(&r, (uint64_t)sg.m)];
    int t = sg.dst[test_rng_below(&r, (uint64_t)sg.m)];
    uint32_t vs, vt;
    assert_int_equal(dyng_graph_vertex(g, s, &vs), DYNG_OK);
    assert_int_equal(dyng_graph_vertex(g, t, &vt), DYNG_OK);
    reference_front(&sg, s, t, &want);
    dyng_front f;
    memset(&f, 0, sizeof f);
    assert_int_equal(dyng_pareto_front(&view, vs, vt, 1000000, &f), DYNG_OK);
    assert_int_equal(f.k, sg.k);
    assert_int_equal(f.n_paths, (uint32_t)want.n);
    for (uint32_t i = 0; i < f.n_paths; i++) {
      for (int k = 0; k < sg.k; k++) assert_true(f.cost[(size_t)i * sg.k + k] == want.c[i][k]);
      check_path(g, &f, i, vs, vt, sg.directed);
    }
    n_nonempty += f.n_paths > 1;
    dyng_front_free(&f);
    dyng_graph_free(g);
  }
  assert_true(n_nonempty > 20); /* the rounds did reach fronts of several paths */
}

static void test_front_label_bound_gives_etoobig(void **state) {
  (void)state;
  /* A ladder: 2^rungs paths with trade-offs (1, 2) against (2, 1), all on
  ** the front. */
  small_graph sg = {.n = 0, .m = 0, .k = 2, .directed = 1};
  int rungs = 6;
  for (int i = 0; i < rungs; i++) {
    sg.src[sg.m] = i, sg.dst[sg.m] = i + 1, sg.w[sg.m][0] = 1, sg.w[sg.m][1] = 2, sg.m++;
    sg.src[sg.m] = i, sg.dst[sg.m] = i + 1, sg.w[sg.m][0] = 2, sg.w[sg.m][1] = 1, sg.m++;
  }
  sg.n = rungs + 1;
  dyng_graph *g = build(&sg);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint32_t vs, vt;
  assert_int_equal(dyng_graph_vertex(g, 0, &vs), DYNG_OK);
  assert_int_equal(dyng_graph_vertex(g, rungs, &vt), DYNG_OK);
  static costs want;
  reference_front(&sg, 0, rungs, &want);
  assert_int_equal(want.n, rungs + 1); /* costs (6+i, 12-i) */
  dyng_front f;
  memset(&f, 0, sizeof f);
  assert_int_equal(dyng_pareto_front(&view, vs, vt, 3, &f), DYNG_ETOOBIG);
  assert_int_equal(f.n_paths, 0);
  dyng_front_free(&f);
  assert_int_equal(dyng_pareto_front(&view, vs, vt, 100000, &f), DYNG_OK);
  assert_int_equal(f.n_paths, (uint32_t)want.n);
  dyng_front_free(&f);
  assert_int_equal(dyng_pareto_front(&view, vs, 99, 100000, &f), DYNG_EINVAL);
  dyng_front_free(&f);
  dyng_graph_free(g);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_front_matches_brute_force_on_random_graphs),
      cmocka_unit_test(test_front_label_bound_gives_etoobig),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
