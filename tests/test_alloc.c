/*
** tests/test_alloc.c: out-of-memory paths of the engine, through the
** allocator seam's failure injection (dyng_alloc_fail_after, alloc.h).
**
** How it works: each scenario is run with the n-th allocation failing, for
** n = 0, 1, 2, ... until a run makes no allocation fail.  A failing run must
** report DYNG_ENOMEM (or NULL from a constructor), must not crash, and must
** leave what it was given in a state the API promises: an id map keeps all
** earlier keys, a batch keeps its recorded operations, a graph after a failed
** dyng_graph_apply is consistent and holds every edge either whole (old or
** new version) or not at all.  Everything is freed afterwards, so valgrind
** and ASan also find the leaks of error paths.
*/
#include "test_util.h"

#include "engine/alloc.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/idmap.h"
#include "engine/sssp.h"
#include "engine_internal.h"

#include <math.h>
#include <string.h>

/* No scenario here needs more allocations than this; a loop that gets there
** means injection stopped working. */
#define MAX_FAIL_POINT 100000L

/* Resets injection after every run (and on a failed assertion's way out). */
static int teardown(void **state) {
  (void)state;
  dyng_alloc_fail_after(-1);
  dyng__graph_set_team_min(0);
  return 0;
}

/* ---- the model of a graph ----------------------------------------------- */

#define NW 2 /* weight columns of the graphs here */

typedef struct model_edge {
  int present;
  uint32_t src, dst; /* node positions */
  double w[NW];
} model_edge;

typedef struct model {
  int directed;
  size_t n_rowids;
  model_edge *e;  /* per rowid position; rowid = rowid_of(i) */
  size_t n_nodes; /* node id = node_of(i) */
} model;

static int64_t rowid_of(size_t i) { return (int64_t)(i * 0x9e3779b97f4a7c15ULL); }
static int64_t node_of(uint32_t i) { return (int64_t)i * -104729 + 17; }
static uint32_t node_position(int64_t node) {
  uint32_t i = (uint32_t)((17 - node) / 104729);
  assert_int_equal(node_of(i), node);
  return i;
}

static void model_init(model *m, int directed, size_t n_rowids, size_t n_nodes) {
  m->directed = directed;
  m->n_rowids = n_rowids;
  m->n_nodes = n_nodes;
  m->e = calloc(n_rowids, sizeof *m->e);
  assert_non_null(m->e);
}

static void model_copy(model *to, const model *from) {
  model_init(to, from->directed, from->n_rowids, from->n_nodes);
  memcpy(to->e, from->e, from->n_rowids * sizeof *from->e);
}

typedef struct entry {
  int64_t rowid;
  int side;
  int64_t owner, other;
  double w[NW];
} entry;

static int entry_cmp(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  if (a->rowid != b->rowid) return a->rowid < b->rowid ? -1 : 1;
  return a->side - b->side;
}

/* The graph against the model: check(), each rowid, each node's degrees,
** and the multiset of adjacency entries of the view. */
static void verify(const dyng_graph *g, const model *m) {
  assert_int_equal(dyng_graph_check(g), 0);
  size_t n_edges = 0;
  uint32_t *out = calloc(m->n_nodes, sizeof *out), *in = calloc(m->n_nodes, sizeof *in);
  assert_true(out && in);
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    uint32_t slot;
    int rc = dyng_graph_edge(g, rowid_of(i), &slot);
    if (!e->present) {
      assert_int_equal(rc, DYNG_ENOTFOUND);
      continue;
    }
    assert_int_equal(rc, DYNG_OK);
    n_edges++;
    assert_int_equal(dyng_graph_node_id(g, dyng_graph_edge_src(g, slot)), node_of(e->src));
    assert_int_equal(dyng_graph_node_id(g, dyng_graph_edge_dst(g, slot)), node_of(e->dst));
    for (int k = 0; k < NW; k++) assert_true(dyng_graph_edge_weight(g, slot, k) == e->w[k]);
    out[e->src]++;
    if (m->directed) in[e->dst]++;
    else out[e->dst]++;
  }
  assert_int_equal(dyng_graph_n_edges(g), n_edges);
  uint32_t live = 0;
  for (uint32_t n = 0; n < m->n_nodes; n++) {
    uint32_t v;
    int rc = dyng_graph_vertex(g, node_of(n), &v);
    if (out[n] + in[n] == 0) {
      assert_int_equal(rc, DYNG_ENOTFOUND);
      continue;
    }
    live++;
    assert_int_equal(rc, DYNG_OK);
    assert_int_equal(dyng_graph_out_degree(g, v), out[n]);
    assert_int_equal(dyng_graph_in_degree(g, v), m->directed ? in[n] : out[n]);
  }
  assert_int_equal(dyng_graph_n_vertices(g), live);
  free(out);
  free(in);

  entry *want = calloc(2 * n_edges + 1, sizeof *want), *got = calloc(2 * n_edges + 1, sizeof *got);
  assert_true(want && got);
  size_t n_want = 0, n_got = 0;
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  /* A directed graph has in entries only once dyng_graph_build_in ran. */
  int n_sides = (!m->directed || view.in.nbr) ? 2 : 1;
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    if (!e->present) continue;
    for (int side = 0; side < n_sides; side++) {
      entry *x = &want[n_want++];
      x->rowid = rowid_of(i);
      x->side = side;
      x->owner = node_of(side ? e->dst : e->src);
      x->other = node_of(side ? e->src : e->dst);
      memcpy(x->w, e->w, sizeof x->w);
    }
  }
  for (int dir = 0; dir < (m->directed && n_sides == 2 ? 2 : 1); dir++) {
    const dyng_adj_view *a = dir ? &view.in : &view.out;
    for (uint32_t v = 0; v < view.n_vertices; v++)
      for (uint32_t j = 0; j < a->deg[v]; j++) {
        uint32_t p = a->off[v] + j, slot = a->ref[p] >> 1;
        assert_true(n_got < 2 * n_edges);
        entry *x = &got[n_got++];
        x->rowid = view.edge_rowid[slot];
        x->side = (int)(a->ref[p] & 1u);
        x->owner = view.node_id[v];
        x->other = view.node_id[a->nbr[p]];
        for (int k = 0; k < NW; k++) x->w[k] = dir ? view.out.w[k][view.edge_pos_out[slot]] : a->w[k][p];
      }
  }
  assert_int_equal(n_got, n_want);
  qsort(want, n_want, sizeof *want, entry_cmp);
  qsort(got, n_got, sizeof *got, entry_cmp);
  for (size_t i = 0; i < n_want; i++) {
    assert_int_equal(got[i].rowid, want[i].rowid);
    assert_int_equal(got[i].side, want[i].side);
    assert_int_equal(got[i].owner, want[i].owner);
    assert_int_equal(got[i].other, want[i].other);
    for (int k = 0; k < NW; k++) assert_true(got[i].w[k] == want[i].w[k]);
  }
  free(want);
  free(got);
}

/* A random model: `n_edges` edges over the first `n_nodes` nodes. */
static void random_model(test_rng *r, model *m, int directed, size_t n_rowids, size_t n_nodes, size_t n_edges,
                         uint32_t node_span) {
  model_init(m, directed, n_rowids, n_nodes);
  for (size_t i = 0; i < n_edges; i++) {
    model_edge *e = &m->e[i];
    e->present = 1;
    e->src = (uint32_t)test_rng_below(r, node_span);
    e->dst = test_rng_below(r, 10) == 0 ? e->src : (uint32_t)test_rng_below(r, node_span);
    e->w[0] = (double)test_rng_below(r, 10);
    e->w[1] = test_rng_unit(r);
  }
}

/* Builds a graph of the model with injection off. */
static dyng_graph *graph_of_model(const model *m) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, NW, m->directed), DYNG_OK);
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    if (e->present)
      assert_int_equal(dyng_graph_load_edge(g, rowid_of(i), node_of(e->src), node_of(e->dst), e->w), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  return g;
}

/* ---- id map ------------------------------------------------------------- */

/* Key i of the id map scenario: a dense run (the map's direct window) and
** sparse keys (its hash table), interleaved. */
static int64_t idmap_key(uint32_t i) { return i % 2 ? rowid_of(i) : (int64_t)i / 2 - 300; }

static void test_idmap_growth_survives_every_allocation_failure(void **state) {
  (void)state;
  const uint32_t n_keys = 3000;
  long n;
  int failures = 0;
  for (n = 0; n < MAX_FAIL_POINT; n++) {
    dyng_alloc_fail_after(n);
    dyng_idmap *m = dyng_idmap_new(0);
    if (!m) {
      dyng_alloc_fail_after(-1);
      failures++;
      continue;
    }
    uint32_t i;
    int rc = DYNG_OK;
    for (i = 0; i < n_keys; i++)
      if ((rc = dyng_idmap_put(m, idmap_key(i), i)) != DYNG_OK) break;
    dyng_alloc_fail_after(-1);
    if (rc != DYNG_OK) {
      failures++;
      assert_int_equal(rc, DYNG_ENOMEM);
      /* Unchanged by the failed put: every earlier key, not the new one. */
      assert_int_equal(dyng_idmap_size(m), i);
      for (uint32_t j = 0; j <= i; j++) {
        uint32_t v;
        int got = dyng_idmap_get(m, idmap_key(j), &v);
        if (j == i) {
          assert_int_equal(got, DYNG_ENOTFOUND);
        } else {
          assert_int_equal(got, DYNG_OK);
          assert_int_equal(v, j);
        }
      }
      /* And still usable. */
      assert_int_equal(dyng_idmap_put(m, idmap_key(i), i), DYNG_OK);
      assert_int_equal(dyng_idmap_size(m), i + 1);
      dyng_idmap_free(m);
      continue;
    }
    assert_int_equal(dyng_idmap_size(m), n_keys);
    dyng_idmap_free(m);
    break;
  }
  assert_true(n < MAX_FAIL_POINT);
  assert_true(failures > 5); /* creation and several rehashes failed */
}

/* ---- batches -------------------------------------------------------------- */

static void test_failed_batch_record_keeps_earlier_operations(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 1);
  model base;
  random_model(&r, &base, 1, 400, 60, 100, 40);
  long n;
  for (n = 0; n < MAX_FAIL_POINT; n++) {
    model m;
    model_copy(&m, &base);
    dyng_graph *g = graph_of_model(&m);
    test_rng ops;
    test_rng_for(&ops, 2); /* the same operations in every run */
    dyng_alloc_fail_after(n);
    dyng_batch *b = dyng_batch_new(NW);
    if (!b) {
      dyng_alloc_fail_after(-1);
      dyng_graph_free(g);
      free(m.e);
      continue;
    }
    int failed = 0;
    for (int j = 0; j < 300; j++) {
      size_t i = (size_t)test_rng_below(&ops, m.n_rowids);
      model_edge e = {1, (uint32_t)test_rng_below(&ops, 60), (uint32_t)test_rng_below(&ops, 60),
                      {(double)j, 0.5}};
      int del = test_rng_below(&ops, 3) == 0;
      size_t before = dyng_batch_size(b);
      int rc = del ? dyng_batch_delete(b, rowid_of(i))
                   : dyng_batch_insert(b, rowid_of(i), node_of(e.src), node_of(e.dst), e.w);
      if (rc != DYNG_OK) {
        /* Nothing recorded; record it again with injection off. */
        assert_int_equal(rc, DYNG_ENOMEM);
        assert_int_equal(dyng_batch_size(b), before);
        failed = 1;
        dyng_alloc_fail_after(-1);
        rc = del ? dyng_batch_delete(b, rowid_of(i))
                 : dyng_batch_insert(b, rowid_of(i), node_of(e.src), node_of(e.dst), e.w);
        assert_int_equal(rc, DYNG_OK);
      }
      assert_int_equal(dyng_batch_size(b), before + 1);
      if (del) m.e[i].present = 0;
      else m.e[i] = e;
    }
    dyng_alloc_fail_after(-1);
    assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
    verify(g, &m);
    dyng_batch_free(b);
    dyng_graph_free(g);
    free(m.e);
    if (!failed) break;
  }
  assert_true(n < MAX_FAIL_POINT);
  free(base.e);
}

/* ---- building a graph ----------------------------------------------------- */

/* new (+ reserve) + load + seal with the n-th allocation failing; returns 1
** when the whole build succeeded (and was verified). */
static int build_with_failure(const model *m, long n, int reserve) {
  dyng_graph *g = (dyng_graph *)&g;
  dyng_alloc_fail_after(n);
  int rc = dyng_graph_new(&g, NW, m->directed);
  if (rc != DYNG_OK) {
    dyng_alloc_fail_after(-1);
    assert_int_equal(rc, DYNG_ENOMEM);
    assert_null(g);
    return 0;
  }
  if (reserve && (rc = dyng_graph_reserve(g, m->n_rowids / 2)) != DYNG_OK) goto failed;
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    if (!e->present) continue;
    if ((rc = dyng_graph_load_edge(g, rowid_of(i), node_of(e->src), node_of(e->dst), e->w)) != DYNG_OK)
      goto failed;
  }
  if ((rc = dyng_graph_seal(g)) != DYNG_OK) goto failed;
  dyng_alloc_fail_after(-1);
  verify(g, m);
  dyng_graph_free(g);
  return 1;

failed:
  dyng_alloc_fail_after(-1);
  assert_int_equal(rc, DYNG_ENOMEM);
  dyng_graph_free(g);
  return 0;
}

static void run_build(int directed, int reserve, uint64_t salt) {
  test_rng r;
  test_rng_for(&r, salt);
  model m;
  random_model(&r, &m, directed, 600, 300, 400, 300);
  long n;
  for (n = 0; n < MAX_FAIL_POINT; n++)
    if (build_with_failure(&m, n, reserve)) break;
  assert_true(n > 10 && n < MAX_FAIL_POINT);
  free(m.e);
}

static void test_graph_build_survives_every_allocation_failure_directed(void **state) { run_build(1, 0, 3); }
static void test_graph_build_survives_every_allocation_failure_undirected(void **state) { run_build(0, 0, 4); }
static void test_graph_build_with_reserve_survives_every_allocation_failure(void **state) { run_build(1, 1, 5); }

/* A load that fails for lack of memory must leave no trace: when loading
** then goes on without that edge, the sealed graph is exactly the rest. */
static void run_failed_load_then_continue(int directed, uint64_t salt) {
  test_rng r;
  test_rng_for(&r, salt);
  model base;
  /* A matching: every node is the endpoint of one edge only, so a node
  ** created for an edge that then fails gets no other edge later. */
  model_init(&base, directed, 600, 800);
  for (uint32_t i = 0; i < 400; i++) {
    base.e[i] = (model_edge){1, 2 * i, 2 * i + 1, {(double)test_rng_below(&r, 10), test_rng_unit(&r)}};
  }
  long n;
  int n_failures = 0;
  for (n = 0; n < MAX_FAIL_POINT; n++) {
    model m;
    model_copy(&m, &base);
    dyng_graph *g = NULL;
    assert_int_equal(dyng_graph_new(&g, NW, directed), DYNG_OK);
    dyng_alloc_fail_after(n);
    int failed = 0;
    size_t failed_edge = 0;
    for (size_t i = 0; i < m.n_rowids; i++) {
      model_edge *e = &m.e[i];
      if (!e->present) continue;
      int rc = dyng_graph_load_edge(g, rowid_of(i), node_of(e->src), node_of(e->dst), e->w);
      if (rc != DYNG_OK) {
        assert_int_equal(rc, DYNG_ENOMEM);
        dyng_alloc_fail_after(-1);
        e->present = 0; /* given up: the rest is loaded without it */
        failed = 1;
        failed_edge = i;
      }
    }
    dyng_alloc_fail_after(-1);
    assert_int_equal(dyng_graph_seal(g), DYNG_OK);
    /* Every node but the two of the failed edge has an edge. */
    uint32_t want_vertices = failed ? 798 : 800;
    int check = dyng_graph_check(g);
    uint32_t got_vertices = dyng_graph_n_vertices(g);
    if (check != DYNG_OK || got_vertices != want_vertices) {
      dyng_graph_free(g);
      free(m.e);
      free(base.e);
      fail_msg("load of edge %zu failed at allocation %ld; after loading the rest and sealing: "
               "dyng_graph_check = %s, n_vertices = %u (expected %u)",
               failed_edge, n, dyng_err_name(check), got_vertices, want_vertices);
    }
    verify(g, &m);
    dyng_graph_free(g);
    free(m.e);
    if (!failed) break;
    n_failures++;
  }
  assert_true(n_failures > 10 && n < MAX_FAIL_POINT);
  free(base.e);
}

static void test_failed_load_edge_leaves_no_trace_directed(void **state) { run_failed_load_then_continue(1, 6); }
static void test_failed_load_edge_leaves_no_trace_undirected(void **state) { run_failed_load_then_continue(0, 7); }

/* ---- applying a batch ----------------------------------------------------- */

/* A batch that needs memory everywhere: new vertices (past the per-vertex
** arrays' room), new edge slots, many inserts at a few vertices (their
** segments move, the pool grows), plus deletes, replacements, self-loops and
** deletes of absent rowids.  `after` gets the model once it is applied,
** named[i] is set for each rowid position the batch names. */
static dyng_batch *growth_batch(test_rng *r, const model *before, model *after, int *named) {
  model_copy(after, before);
  dyng_batch *b = dyng_batch_new(NW);
  assert_non_null(b);
  for (int j = 0; j < 500; j++) {
    size_t i = (size_t)test_rng_below(r, after->n_rowids);
    uint64_t dice = test_rng_below(r, 100);
    named[i] = 1;
    if (dice < 25) {
      assert_int_equal(dyng_batch_delete(b, rowid_of(i)), DYNG_OK);
      after->e[i].present = 0;
      continue;
    }
    model_edge e = {1, 0, 0, {(double)test_rng_below(r, 10), test_rng_unit(r)}};
    if (dice < 50) { /* at a hub */
      e.src = (uint32_t)test_rng_below(r, 3);
      e.dst = (uint32_t)test_rng_below(r, after->n_nodes);
    } else if (dice < 55) { /* self-loop */
      e.src = e.dst = (uint32_t)test_rng_below(r, after->n_nodes);
    } else { /* anywhere, mostly new nodes */
      e.src = (uint32_t)test_rng_below(r, after->n_nodes);
      e.dst = (uint32_t)test_rng_below(r, after->n_nodes);
    }
    assert_int_equal(dyng_batch_insert(b, rowid_of(i), node_of(e.src), node_of(e.dst), e.w), DYNG_OK);
    after->e[i] = e;
  }
  return b;
}

static int same_edge(const model_edge *a, const model_edge *b) {
  return a->src == b->src && a->dst == b->dst && a->w[0] == b->w[0] && a->w[1] == b->w[1];
}

/* After a failed apply: every rowid is its old version, its new version or
** absent (rowids the batch does not name: the old version), each edge whole.
** Builds the model of what the graph holds and verifies the graph against
** it. */
static void verify_partial(const dyng_graph *g, const model *before, const model *after, const int *named) {
  model seen;
  model_init(&seen, before->directed, before->n_rowids, before->n_nodes);
  for (size_t i = 0; i < before->n_rowids; i++) {
    uint32_t slot;
    if (dyng_graph_edge(g, rowid_of(i), &slot) != DYNG_OK) {
      if (!named[i]) assert_false(before->e[i].present);
      continue;
    }
    model_edge e = {1, node_position(dyng_graph_node_id(g, dyng_graph_edge_src(g, slot))),
                    node_position(dyng_graph_node_id(g, dyng_graph_edge_dst(g, slot))), {0, 0}};
    assert_true(e.src < before->n_nodes && e.dst < before->n_nodes);
    for (int k = 0; k < NW; k++) e.w[k] = dyng_graph_edge_weight(g, slot, k);
    int old_version = before->e[i].present && same_edge(&e, &before->e[i]);
    int new_version = named[i] && after->e[i].present && same_edge(&e, &after->e[i]);
    if (!old_version && !new_version) fail_msg("rowid position %zu is neither its old nor its new edge", i);
    seen.e[i] = e;
  }
  verify(g, &seen);
  free(seen.e);
}

/* run_apply with in_built: the in adjacency of a directed graph exists
** before the batch, so its maintenance meets the failures too.  With team,
** the batch takes the team path (several threads), which must leave the
** graph exactly as it was when it fails. */
static void run_apply_with(int directed, uint64_t salt, int in_built, int team);
static void run_apply(int directed, uint64_t salt) { run_apply_with(directed, salt, 0, 0); }

static void run_apply_with(int directed, uint64_t salt, int in_built, int team) {
  test_rng r;
  test_rng_for(&r, salt);
  model before;
  /* 150 edges over 50 nodes; the batch brings up to 400 nodes. */
  random_model(&r, &before, directed, 1200, 400, 150, 50);
  long n;
  int n_failures = 0;
  for (n = 0; n < MAX_FAIL_POINT; n++) {
    test_rng batch_rng;
    test_rng_for(&batch_rng, salt + 100); /* the same batch every run */
    model after;
    dyng_graph *g = graph_of_model(&before);
    if (in_built) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
    int *named = calloc(before.n_rowids, sizeof *named);
    assert_non_null(named);
    dyng_batch *b = growth_batch(&batch_rng, &before, &after, named);
    dyng__graph_set_team_min(team ? 1 : SIZE_MAX);
    dyng_alloc_fail_after(n);
    int rc = dyng_graph_apply(g, b, NULL);
    dyng_alloc_fail_after(-1);
    if (rc == DYNG_OK) {
      verify(g, &after);
    } else {
      n_failures++;
      assert_int_equal(rc, DYNG_ENOMEM);
      if (team) verify(g, &before);
      else verify_partial(g, &before, &after, named);
      /* The graph is still usable: the same batch again completes it. */
      assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
      verify(g, &after);
    }
    free(named);
    dyng_batch_free(b);
    dyng_graph_free(g);
    free(after.e);
    if (rc == DYNG_OK) break;
  }
  assert_true(n_failures > 10 && n < MAX_FAIL_POINT);
  free(before.e);
}

static void test_failed_apply_keeps_edges_whole_directed(void **state) { run_apply(1, 8); }
static void test_failed_apply_keeps_edges_whole_undirected(void **state) { run_apply(0, 9); }
static void test_failed_apply_keeps_in_adjacency_whole(void **state) { run_apply_with(1, 11, 1, 0); }
static void test_failed_team_apply_leaves_graph_unchanged_directed(void **state) { run_apply_with(1, 12, 0, 1); }
static void test_failed_team_apply_leaves_graph_unchanged_undirected(void **state) { run_apply_with(0, 13, 0, 1); }
static void test_failed_team_apply_leaves_in_adjacency_unchanged(void **state) { run_apply_with(1, 14, 1, 1); }

/* Building the in adjacency fails cleanly at every allocation, and works
** when retried. */
static void test_build_in_survives_every_allocation_failure(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 12);
  model m;
  random_model(&r, &m, 1, 400, 100, 300, 80);
  int n_failures = 0;
  for (long n = 0; n < MAX_FAIL_POINT; n++) {
    dyng_graph *g = graph_of_model(&m);
    dyng_alloc_fail_after(n);
    int rc = dyng_graph_build_in(g);
    dyng_alloc_fail_after(-1);
    if (rc != DYNG_OK) {
      n_failures++;
      assert_int_equal(rc, DYNG_ENOMEM);
      verify(g, &m); /* unchanged: still without in entries */
      assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
    }
    verify(g, &m);
    dyng_graph_free(g);
    if (rc == DYNG_OK) break;
  }
  assert_true(n_failures > 0);
  free(m.e);
}

/* ---- shortest paths -------------------------------------------------------- */

/* Every allocation of a search from scratch fails in turn: the one thread
** Dijkstra's, or (parallel) dyng_sssp_parallel's on all threads. */
static void searches_survive_every_allocation_failure(int parallel) {
  test_rng r;
  test_rng_for(&r, 10);
  for (int directed = 0; directed < 2; directed++) {
    model m;
    random_model(&r, &m, directed, 3000, 400, 2500, 400);
    dyng_graph *g = graph_of_model(&m);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    uint32_t source = 0;
    assert_int_equal(dyng_graph_vertex(g, node_of(m.e[0].src), &source), DYNG_OK);
    /* The answer of an uninjected run (checked against Bellman-Ford in
    ** test_sssp); every successful injected run must give the same. */
    dyng_sssp_tree want;
    assert_int_equal(dyng_sssp_tree_init(&want, view.n_vertices), DYNG_OK);
    assert_int_equal(dyng_sssp_dijkstra(&view, source, 1, DYNG_NONE, &want), DYNG_OK);
    long n;
    int n_failures = 0;
    for (n = 0; n < MAX_FAIL_POINT; n++) {
      dyng_sssp_tree t;
      dyng_alloc_fail_after(n);
      int rc = dyng_sssp_tree_init(&t, view.n_vertices);
      if (rc != DYNG_OK) {
        dyng_alloc_fail_after(-1);
        assert_int_equal(rc, DYNG_ENOMEM);
        assert_null(t.dist);
        assert_null(t.order);
        dyng_sssp_tree_free(&t); /* a failed init leaves a zeroed tree */
        n_failures++;
        continue;
      }
      rc = parallel ? dyng_sssp_parallel(&view, source, 1, &t) : dyng_sssp_dijkstra(&view, source, 1, DYNG_NONE, &t);
      dyng_alloc_fail_after(-1);
      if (rc != DYNG_OK) {
        assert_int_equal(rc, DYNG_ENOMEM);
        dyng_sssp_tree_free(&t);
        n_failures++;
        continue;
      }
      assert_int_equal(t.n_reached, want.n_reached);
      for (uint32_t v = 0; v < view.n_vertices; v++) {
        assert_true(t.dist[v] == want.dist[v] || (isinf(t.dist[v]) && isinf(want.dist[v])));
        assert_int_equal(t.parent[v], want.parent[v]);
      }
      dyng_sssp_tree_free(&t);
      break;
    }
    assert_true(n_failures > 5 && n < MAX_FAIL_POINT);
    dyng_sssp_tree_free(&want);
    dyng_graph_free(g);
    free(m.e);
  }
}

static void test_dijkstra_survives_every_allocation_failure(void **state) {
  (void)state;
  searches_survive_every_allocation_failure(0);
}

static void test_parallel_search_survives_every_allocation_failure(void **state) {
  (void)state;
  searches_survive_every_allocation_failure(1);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_idmap_growth_survives_every_allocation_failure, teardown),
      cmocka_unit_test_teardown(test_failed_batch_record_keeps_earlier_operations, teardown),
      cmocka_unit_test_teardown(test_graph_build_survives_every_allocation_failure_directed, teardown),
      cmocka_unit_test_teardown(test_graph_build_survives_every_allocation_failure_undirected, teardown),
      cmocka_unit_test_teardown(test_graph_build_with_reserve_survives_every_allocation_failure, teardown),
      cmocka_unit_test_teardown(test_failed_load_edge_leaves_no_trace_directed, teardown),
      cmocka_unit_test_teardown(test_failed_load_edge_leaves_no_trace_undirected, teardown),
      cmocka_unit_test_teardown(test_failed_apply_keeps_edges_whole_directed, teardown),
      cmocka_unit_test_teardown(test_failed_apply_keeps_edges_whole_undirected, teardown),
      cmocka_unit_test_teardown(test_failed_apply_keeps_in_adjacency_whole, teardown),
      cmocka_unit_test_teardown(test_failed_team_apply_leaves_graph_unchanged_directed, teardown),
      cmocka_unit_test_teardown(test_failed_team_apply_leaves_graph_unchanged_undirected, teardown),
      cmocka_unit_test_teardown(test_failed_team_apply_leaves_in_adjacency_unchanged, teardown),
      cmocka_unit_test_teardown(test_build_in_survives_every_allocation_failure, teardown),
      cmocka_unit_test_teardown(test_dijkstra_survives_every_allocation_failure, teardown),
      cmocka_unit_test_teardown(test_parallel_search_survives_every_allocation_failure, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
