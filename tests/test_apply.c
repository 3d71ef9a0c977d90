/*
** tests/test_apply.c: a batch applied on several threads (the team path of
** dyng_graph_apply_tracked) gives what the one-operation-at-a-time loop
** gives.
**
** How it works: two graphs are loaded with the same edges.  Every random
** batch is applied to the first through the loop on one thread
** (dyng_set_max_threads(1)) and to the second through the team path on all
** threads, forced whatever the batch's size (dyng__graph_set_team_min).
** After each batch the two must agree on the stats, the change records
** (element by element, in order), the counts, every vertex (node id,
** degrees) and every rowid (slot, ends, weights); each graph's adjacency
** must hold exactly its edges, every entry where its edge says; and a copy
** of each graph's out adjacency that follows only the positions the batch
** reports (changes->out_pos) and the off/deg of the changed edges' ends,
** as the CUDA plugin's copy does, must equal the graph's.  Batches have 1
** to 30,000 operations: hubs (their segments move and the pool grows),
** self-loops, parallel edges, new nodes, deletes of missing rowids, a rowid
** deleted and inserted again, or inserted twice; graphs are directed with
** and without the in adjacency (built halfway through), or undirected,
** weighted or not, with dense or sparse ids.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/parallel.h"
#include "engine_internal.h"

#include <string.h>

/* Puts the engine back to deciding for itself (also on a failed assertion's
** way out). */
static int teardown(void **state) {
  (void)state;
  dyng__graph_set_team_min(0);
  dyng_set_max_threads(0);
  return 0;
}

/* ---- one scenario ------------------------------------------------------ */

#define N_NODES 4000   /* nodes of the loaded graph; batches bring more */
#define N_HUBS 4       /* nodes 0..3 get many edges */
#define N_ROWIDS 60000 /* rowid positions; about a third are live */
#define N_LOADED 20000

typedef struct scenario {
  int directed;
  int in_built;   /* directed: build the in adjacency before the batches (1), */
                  /* halfway through them (2), or never (0) */
  int n_weights;  /* 0 or 2 */
  int sparse;     /* node ids and rowids spread over int64 (the maps' hash tables) */
  uint64_t salt;
} scenario;

static int64_t rowid_at(const scenario *sc, uint32_t i) {
  return sc->sparse ? (int64_t)((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL) : (int64_t)i + 1;
}

static int64_t node_at(const scenario *sc, uint32_t i) {
  return sc->sparse ? (int64_t)((uint64_t)(i + 7) * 0xc2b2ae3d27d4eb4fULL) : (int64_t)i;
}

/* Endpoints of a new edge: at a hub, a self-loop, a parallel edge to a
** recent one, a new node, or anywhere among the nodes so far. */
typedef struct drawer {
  test_rng r;
  uint32_t n_nodes;         /* node positions in use */
  uint32_t recent[64][2];   /* ends of recent inserts */
  unsigned n_recent;
} drawer;

static void draw_ends(drawer *d, uint32_t *src, uint32_t *dst) {
  uint64_t dice = test_rng_below(&d->r, 100);
  if (dice < 20) {
    *src = (uint32_t)test_rng_below(&d->r, N_HUBS);
    *dst = (uint32_t)test_rng_below(&d->r, d->n_nodes);
    if (dice < 8) { uint32_t x = *src; *src = *dst; *dst = x; }
  } else if (dice < 25) {
    *src = *dst = (uint32_t)test_rng_below(&d->r, d->n_nodes);
  } else if (dice < 35 && d->n_recent) {
    const uint32_t *e = d->recent[test_rng_below(&d->r, d->n_recent < 64 ? d->n_recent : 64)];
    *src = e[0];
    *dst = e[1];
  } else if (dice < 38) {
    *src = (uint32_t)test_rng_below(&d->r, d->n_nodes);
    *dst = d->n_nodes++;
  } else {
    *src = (uint32_t)test_rng_below(&d->r, d->n_nodes);
    *dst = (uint32_t)test_rng_below(&d->r, d->n_nodes);
  }
  d->recent[d->n_recent++ % 64][0] = *src;
  d->recent[(d->n_recent - 1) % 64][1] = *dst;
}

static void draw_weights(drawer *d, int n_weights, double *w) {
  for (int k = 0; k < n_weights; k++)
    w[k] = test_rng_below(&d->r, 4) == 0 ? (double)test_rng_below(&d->r, 3) : test_rng_unit(&d->r) * 10;
}

static void record_insert(const scenario *sc, drawer *d, dyng_batch *b, uint32_t i) {
  uint32_t s, t;
  double w[2];
  draw_ends(d, &s, &t);
  draw_weights(d, sc->n_weights, w);
  assert_int_equal(dyng_batch_insert(b, rowid_at(sc, i), node_at(sc, s), node_at(sc, t), w), DYNG_OK);
}

/* A batch of n operations over random rowid positions (so some deletes
** miss, some inserts replace, and large batches name a rowid more than
** once), with explicit delete-then-insert and insert-twice pairs. */
static void draw_batch(const scenario *sc, drawer *d, dyng_batch *b, uint32_t n) {
  dyng_batch_clear(b);
  for (uint32_t j = 0; j < n; j++) {
    uint32_t i = (uint32_t)test_rng_below(&d->r, N_ROWIDS);
    uint64_t dice = test_rng_below(&d->r, 100);
    if (dice < 40) {
      assert_int_equal(dyng_batch_delete(b, rowid_at(sc, i)), DYNG_OK);
    } else if (dice < 45) {
      assert_int_equal(dyng_batch_delete(b, rowid_at(sc, i)), DYNG_OK);
      record_insert(sc, d, b, i);
    } else if (dice < 48) {
      record_insert(sc, d, b, i);
      record_insert(sc, d, b, i);
    } else {
      record_insert(sc, d, b, i);
    }
  }
}

static dyng_graph *load(const scenario *sc, drawer *d) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, sc->n_weights, sc->directed), DYNG_OK);
  for (uint32_t i = 0; i < N_LOADED; i++) {
    uint32_t s, t;
    double w[2];
    draw_ends(d, &s, &t);
    draw_weights(d, sc->n_weights, w);
    assert_int_equal(dyng_graph_load_edge(g, rowid_at(sc, i * 3), node_at(sc, s), node_at(sc, t), w), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sc->in_built == 1) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  return g;
}

/* ---- checks ------------------------------------------------------------ */

/* Every live edge has its entries inside its ends' segments, pointing back
** at it, and the segments hold nothing else. */
static void check_adjacency(const dyng_graph *g) {
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  assert_int_equal(dyng_graph_check(g), DYNG_OK);
  int has_in = !v.directed || v.in.nbr != NULL;
  const dyng_adj_view *in = v.directed ? &v.in : &v.out;
  size_t n_edges = 0, out_entries = 0, in_entries = 0;
  for (uint32_t s = 0; s < v.n_edge_slots; s++) {
    uint32_t a = v.edge_src[s], z = v.edge_dst[s];
    if (a == DYNG_NONE) continue;
    n_edges++;
    uint32_t p = v.edge_pos_out[s];
    assert_true(p >= v.out.off[a] && p < v.out.off[a] + v.out.deg[a]);
    assert_int_equal(v.out.ref[p], s << 1);
    assert_int_equal(v.out.nbr[p], z);
    if (!has_in) continue;
    uint32_t q = v.edge_pos_in[s];
    assert_true(q >= in->off[z] && q < in->off[z] + in->deg[z]);
    assert_int_equal(in->ref[q], (s << 1) | 1u);
    assert_int_equal(in->nbr[q], a);
  }
  for (uint32_t x = 0; x < v.n_vertices; x++) {
    out_entries += v.out.deg[x];
    if (v.directed) in_entries += v.in.deg[x];
  }
  assert_int_equal(n_edges, dyng_graph_n_edges(g));
  assert_int_equal(out_entries, v.directed ? n_edges : 2 * n_edges);
  if (v.directed) assert_int_equal(in_entries, n_edges);
}

/* A copy of a graph's out adjacency that follows batches the way the CUDA
** plugin's device copy does (cuda/dev_graph.cu, dev_graph_follow). */
typedef struct mirror {
  uint32_t n_vert, cap_vert, *off, *deg;
  size_t cap, n_obj;
  uint32_t *nbr, *ref;
  double *w[2];
  uint32_t layout;
  int loaded;
} mirror;

static void mirror_free(mirror *m) {
  free(m->off);
  free(m->deg);
  free(m->nbr);
  free(m->ref);
  free(m->w[0]);
  free(m->w[1]);
  memset(m, 0, sizeof *m);
}

static void mirror_load(mirror *m, const dyng_graph_view *v) {
  int loaded = m->loaded;
  mirror_free(m);
  m->loaded = loaded;
  m->cap_vert = v->n_vertices + v->n_vertices / 2 + 16;
  m->cap = v->out.n_entries + v->out.n_entries / 2 + 16;
  m->n_obj = (size_t)v->n_objectives;
  m->off = calloc(m->cap_vert, sizeof *m->off);
  m->deg = calloc(m->cap_vert, sizeof *m->deg);
  m->nbr = calloc(m->cap, sizeof *m->nbr);
  m->ref = calloc(m->cap, sizeof *m->ref);
  assert_true(m->off && m->deg && m->nbr && m->ref);
  for (size_t k = 0; k < m->n_obj; k++) {
    m->w[k] = calloc(m->cap, sizeof *m->w[k]);
    assert_non_null(m->w[k]);
  }
  memcpy(m->off, v->out.off, v->n_vertices * sizeof *m->off);
  memcpy(m->deg, v->out.deg, v->n_vertices * sizeof *m->deg);
  memcpy(m->nbr, v->out.nbr, v->out.n_entries * sizeof *m->nbr);
  memcpy(m->ref, v->out.ref, v->out.n_entries * sizeof *m->ref);
  for (size_t k = 0; k < m->n_obj; k++) memcpy(m->w[k], v->out.w[k], v->out.n_entries * sizeof *m->w[k]);
  m->n_vert = v->n_vertices;
  m->layout = v->out.layout;
  m->loaded++;
}

static void mirror_touch(mirror *m, const dyng_graph_view *v, uint32_t x) {
  m->off[x] = v->out.off[x];
  m->deg[x] = v->out.deg[x];
}

/* Follows one batch; then the copy must equal the graph's live entries. */
static void mirror_follow(mirror *m, const dyng_graph_view *v, const dyng_changes *ch) {
  if (v->out.layout != m->layout || v->n_vertices > m->cap_vert || v->out.n_entries > m->cap ||
      !ch->out_pos_complete) {
    mirror_load(m, v);
  } else {
    for (size_t i = 0; i < ch->n_out_pos; i++) {
      uint32_t p = ch->out_pos[i];
      assert_true(p < v->out.n_entries);
      m->nbr[p] = v->out.nbr[p];
      m->ref[p] = v->out.ref[p];
      for (size_t k = 0; k < m->n_obj; k++) m->w[k][p] = v->out.w[k][p];
    }
    for (size_t i = 0; i < ch->n_removed; i++) {
      mirror_touch(m, v, ch->removed[i].src);
      mirror_touch(m, v, ch->removed[i].dst);
    }
    for (size_t i = 0; i < ch->n_added; i++) {
      mirror_touch(m, v, ch->added[i].src);
      mirror_touch(m, v, ch->added[i].dst);
    }
    m->n_vert = v->n_vertices;
  }
  for (uint32_t x = 0; x < v->n_vertices; x++) {
    assert_int_equal(m->deg[x], v->out.deg[x]);
    if (!m->deg[x]) continue;
    assert_int_equal(m->off[x], v->out.off[x]);
    for (uint32_t j = 0; j < m->deg[x]; j++) {
      uint32_t p = m->off[x] + j;
      assert_int_equal(m->nbr[p], v->out.nbr[p]);
      assert_int_equal(m->ref[p], v->out.ref[p]);
      for (size_t k = 0; k < m->n_obj; k++) assert_true(m->w[k][p] == v->out.w[k][p]);
    }
  }
}

static void check_same_changes(const dyng_changes *a, const dyng_changes *b, int n_obj) {
  assert_int_equal(a->n_removed, b->n_removed);
  assert_int_equal(a->n_added, b->n_added);
  for (int side = 0; side < 2; side++) {
    const dyng_edge_change *x = side ? a->added : a->removed, *y = side ? b->added : b->removed;
    size_t n = side ? a->n_added : a->n_removed;
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(x[i].slot, y[i].slot);
      assert_int_equal(x[i].src, y[i].src);
      assert_int_equal(x[i].dst, y[i].dst);
      assert_int_equal(x[i].rowid, y[i].rowid);
      for (int k = 0; k < n_obj; k++) assert_true(x[i].w[k] == y[i].w[k]);
    }
  }
}

static void check_same_graphs(const scenario *sc, const dyng_graph *a, const dyng_graph *b) {
  assert_int_equal(dyng_graph_n_edges(a), dyng_graph_n_edges(b));
  assert_int_equal(dyng_graph_n_vertices(a), dyng_graph_n_vertices(b));
  assert_int_equal(dyng_graph_vertex_bound(a), dyng_graph_vertex_bound(b));
  for (uint32_t v = 0; v < dyng_graph_vertex_bound(a); v++) {
    assert_int_equal(dyng_graph_node_id(a, v), dyng_graph_node_id(b, v));
    assert_int_equal(dyng_graph_out_degree(a, v), dyng_graph_out_degree(b, v));
    assert_int_equal(dyng_graph_in_degree(a, v), dyng_graph_in_degree(b, v));
  }
  int n_obj = sc->n_weights ? sc->n_weights : 1;
  for (uint32_t i = 0; i < N_ROWIDS; i++) {
    uint32_t sa, sb;
    int ra = dyng_graph_edge(a, rowid_at(sc, i), &sa), rb = dyng_graph_edge(b, rowid_at(sc, i), &sb);
    assert_int_equal(ra, rb);
    if (ra != DYNG_OK) continue;
    assert_int_equal(sa, sb);
    assert_int_equal(dyng_graph_edge_src(a, sa), dyng_graph_edge_src(b, sb));
    assert_int_equal(dyng_graph_edge_dst(a, sa), dyng_graph_edge_dst(b, sb));
    for (int k = 0; k < n_obj; k++) assert_true(dyng_graph_edge_weight(a, sa, k) == dyng_graph_edge_weight(b, sb, k));
  }
}

/* ---- the run ----------------------------------------------------------- */

static const uint32_t batch_sizes[] = {1, 2, 5, 40, 300, 1500, 4000, 12000, 30000};

static void run(const scenario *sc) {
  drawer d;
  test_rng_for(&d.r, sc->salt);
  d.n_nodes = N_NODES;
  d.n_recent = 0;
  dyng_graph *one = load(sc, &d);
  test_rng_for(&d.r, sc->salt);
  d.n_nodes = N_NODES;
  d.n_recent = 0;
  dyng_graph *team = load(sc, &d);
  dyng_batch *b = dyng_batch_new(sc->n_weights);
  assert_non_null(b);
  dyng_changes ca, cb;
  memset(&ca, 0, sizeof ca);
  memset(&cb, 0, sizeof cb);
  mirror ma, mb;
  memset(&ma, 0, sizeof ma);
  memset(&mb, 0, sizeof mb);
  dyng_graph_view v;
  dyng_graph_get_view(one, &v);
  mirror_load(&ma, &v);
  dyng_graph_get_view(team, &v);
  mirror_load(&mb, &v);
  const int n_batches = 40;
  size_t total_ops = 0;
  for (int bi = 0; bi < n_batches; bi++) {
    if (sc->in_built == 2 && bi == n_batches / 2) {
      assert_int_equal(dyng_graph_build_in(one), DYNG_OK);
      assert_int_equal(dyng_graph_build_in(team), DYNG_OK);
    }
    /* Mostly small and middling batches, every size at least once. */
    uint32_t n = bi < 9 ? batch_sizes[8 - bi]
                        : batch_sizes[test_rng_below(&d.r, sizeof batch_sizes / sizeof *batch_sizes - 1)];
    draw_batch(sc, &d, b, n);
    dyng_apply_stats sa, sb;
    dyng_set_max_threads(1);
    dyng__graph_set_team_min(SIZE_MAX);
    assert_int_equal(dyng_graph_apply_tracked(one, b, &sa, &ca), DYNG_OK);
    dyng_set_max_threads(0);
    dyng__graph_set_team_min(1);
    assert_int_equal(dyng_graph_apply_tracked(team, b, &sb, &cb), DYNG_OK);
    dyng__graph_set_team_min(0);
    total_ops += dyng_batch_size(b);
    assert_int_equal(sa.inserted, sb.inserted);
    assert_int_equal(sa.deleted, sb.deleted);
    assert_int_equal(sa.missing, sb.missing);
    check_same_changes(&ca, &cb, sc->n_weights ? sc->n_weights : 1);
    check_same_graphs(sc, one, team);
    check_adjacency(one);
    check_adjacency(team);
    dyng_graph_get_view(one, &v);
    mirror_follow(&ma, &v, &ca);
    dyng_graph_get_view(team, &v);
    mirror_follow(&mb, &v, &cb);
  }
  printf("# %zu operations in %d batches, %d threads, team graph's copy reloaded %d times\n", total_ops,
         n_batches, dyng_threads(), mb.loaded);
  mirror_free(&ma);
  mirror_free(&mb);
  dyng_changes_free(&ca);
  dyng_changes_free(&cb);
  dyng_batch_free(b);
  dyng_graph_free(one);
  dyng_graph_free(team);
}

/* A large batch naming few rowids many times (sorted by the radix sort of
** dyng_batch_normalize, extreme rowids included) leaves what its operations
** one at a time leave.  The same batch, cleared, serves three rounds of
** different sizes: its sort's kept room must not leak one round into the
** next. */
static void test_large_batch_keeps_the_last_operation_of_each_rowid(void **state) {
  static const int64_t extreme[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX};
  static const uint32_t round_ops[] = {6000, 2500, 9000};
  const uint32_t n_rowids = 700;
  test_rng r;
  test_rng_for(&r, 6);
  int64_t rowid[700];
  for (uint32_t i = 0; i < n_rowids; i++)
    rowid[i] = i < 7 ? extreme[i] : (int64_t)(test_rng_next(&r) >> (i % 3 ? 1 : 40)) * (i % 2 ? 1 : -1);
  dyng_graph *whole = NULL, *single = NULL;
  assert_int_equal(dyng_graph_new(&whole, 1, 1), DYNG_OK);
  assert_int_equal(dyng_graph_new(&single, 1, 1), DYNG_OK);
  assert_int_equal(dyng_graph_seal(whole), DYNG_OK);
  assert_int_equal(dyng_graph_seal(single), DYNG_OK);
  dyng_batch *b = dyng_batch_new(1), *one = dyng_batch_new(1);
  assert_true(b && one);
  for (int round = 0; round < 3; round++) {
    dyng_batch_clear(b);
    for (uint32_t j = 0; j < round_ops[round]; j++) {
      int64_t id = rowid[test_rng_below(&r, n_rowids)];
      double w = (double)(round * 10000 + (int)j);
      dyng_batch_clear(one);
      if (test_rng_below(&r, 3) == 0) {
        assert_int_equal(dyng_batch_delete(b, id), DYNG_OK);
        assert_int_equal(dyng_batch_delete(one, id), DYNG_OK);
      } else {
        int64_t s = (int64_t)test_rng_below(&r, 50), t = (int64_t)test_rng_below(&r, 50);
        assert_int_equal(dyng_batch_insert(b, id, s, t, &w), DYNG_OK);
        assert_int_equal(dyng_batch_insert(one, id, s, t, &w), DYNG_OK);
      }
      assert_int_equal(dyng_graph_apply(single, one, NULL), DYNG_OK);
    }
    assert_int_equal(dyng_graph_apply(whole, b, NULL), DYNG_OK);
    assert_true(dyng_batch_size(b) <= n_rowids);
    check_adjacency(whole);
    assert_int_equal(dyng_graph_n_edges(whole), dyng_graph_n_edges(single));
    for (uint32_t i = 0; i < n_rowids; i++) {
      uint32_t sw, ss;
      int rw = dyng_graph_edge(whole, rowid[i], &sw), rs = dyng_graph_edge(single, rowid[i], &ss);
      assert_int_equal(rw, rs);
      if (rw != DYNG_OK) continue;
      assert_int_equal(dyng_graph_node_id(whole, dyng_graph_edge_src(whole, sw)),
                       dyng_graph_node_id(single, dyng_graph_edge_src(single, ss)));
      assert_int_equal(dyng_graph_node_id(whole, dyng_graph_edge_dst(whole, sw)),
                       dyng_graph_node_id(single, dyng_graph_edge_dst(single, ss)));
      assert_true(dyng_graph_edge_weight(whole, sw, 0) == dyng_graph_edge_weight(single, ss, 0));
    }
  }
  dyng_batch_free(b);
  dyng_batch_free(one);
  dyng_graph_free(whole);
  dyng_graph_free(single);
}

static void test_team_apply_matches_loop_directed(void **state) {
  scenario sc = {1, 0, 2, 0, 1};
  run(&sc);
}

static void test_team_apply_matches_loop_directed_with_in_adjacency(void **state) {
  scenario sc = {1, 1, 2, 1, 2};
  run(&sc);
}

static void test_team_apply_matches_loop_directed_in_adjacency_built_halfway(void **state) {
  scenario sc = {1, 2, 0, 0, 3};
  run(&sc);
}

static void test_team_apply_matches_loop_undirected(void **state) {
  scenario sc = {0, 0, 2, 1, 4};
  run(&sc);
}

static void test_team_apply_matches_loop_undirected_unweighted(void **state) {
  scenario sc = {0, 0, 0, 0, 5};
  run(&sc);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_team_apply_matches_loop_directed, teardown),
      cmocka_unit_test_teardown(test_team_apply_matches_loop_directed_with_in_adjacency, teardown),
      cmocka_unit_test_teardown(test_team_apply_matches_loop_directed_in_adjacency_built_halfway, teardown),
      cmocka_unit_test_teardown(test_team_apply_matches_loop_undirected, teardown),
      cmocka_unit_test_teardown(test_team_apply_matches_loop_undirected_unweighted, teardown),
      cmocka_unit_test_teardown(test_large_batch_keeps_the_last_operation_of_each_rowid, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
