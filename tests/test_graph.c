/*
** tests/test_graph.c: unit tests of the dynamic graph (engine/graph.h).
**
** How it works: every change made to a graph is mirrored in a naive model,
** an array of edges indexed by the position of their rowid in a fixed pool
** of candidate rowids, whose endpoints are positions in a pool of node ids.
** After each bulk load and each batch the graph is compared with the model
** in every way the API can be asked: edge and live-vertex counts, each
** node's degrees, each edge through its rowid and the accessors, the
** multiset of adjacency entries of dyng_graph_get_view, and
** dyng_graph_check().  Batches are applied to the model one operation at a
** time, in the order recorded, which is what "the last operation on a rowid
** wins" means.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---- pools of ids --------------------------------------------------- */

/* `n` distinct int64 values: i times an odd constant (distinct for distinct
** i), the first few replaced by extreme values, checked duplicate-free. */
static int64_t *id_pool(size_t n, uint64_t mult) {
  static const int64_t special[] = {INT64_MIN, INT64_MAX, -1, 1, INT64_MIN + 1};
  const size_t n_special = sizeof special / sizeof special[0];
  int64_t *p = malloc((n ? n : 1) * sizeof *p);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) p[i] = (int64_t)((uint64_t)i * mult);
  for (size_t s = 0; s < n_special && s + 1 < n; s++) p[s + 1] = special[s];
  for (size_t s = 0; s <= n_special && s < n; s++)
    for (size_t i = 0; i < n; i++)
      if (i != s) assert_true(p[i] != p[s]);
  return p;
}

/* ---- the model -------------------------------------------------------- */

#define MAXW 3

typedef struct model_edge {
  int present;
  uint32_t src, dst; /* positions in the node pool */
  double w[MAXW];
} model_edge;

typedef struct model {
  int directed;
  int n_weights;
  size_t n_rowids;
  int64_t *rowid;   /* pool of rowids */
  model_edge *e;    /* per rowid position */
  size_t n_nodes;
  int64_t *node;    /* pool of node ids */
} model;

static void model_init(model *m, int directed, int n_weights, size_t n_rowids, size_t n_nodes) {
  memset(m, 0, sizeof *m);
  m->directed = directed;
  m->n_weights = n_weights;
  m->n_rowids = n_rowids;
  m->rowid = id_pool(n_rowids, 0x9e3779b97f4a7c15ULL);
  m->e = calloc(n_rowids, sizeof *m->e);
  assert_non_null(m->e);
  m->n_nodes = n_nodes;
  m->node = id_pool(n_nodes, 0xc2b2ae3d27d4eb4fULL);
}

static void model_free(model *m) {
  free(m->rowid);
  free(m->e);
  free(m->node);
}

static size_t model_n_edges(const model *m) {
  size_t n = 0;
  for (size_t i = 0; i < m->n_rowids; i++) n += m->e[i].present != 0;
  return n;
}

/* The weight the graph should report for edge position i in objective k. */
static double model_weight(const model *m, size_t i, int k) { return m->n_weights ? m->e[i].w[k] : 1.0; }

/* ---- comparing a graph with the model --------------------------------- */

/* One adjacency entry, in node-id terms. */
typedef struct entry {
  int64_t rowid;
  int side;
  int64_t owner, other;
  double w[MAXW];
} entry;

static int entry_cmp(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  if (a->rowid != b->rowid) return a->rowid < b->rowid ? -1 : 1;
  return a->side - b->side;
}

static void entry_add(entry *list, size_t *n, size_t cap, int64_t rowid, int side, int64_t owner,
                      int64_t other) {
  assert_true(*n < cap);
  entry *x = &list[(*n)++];
  memset(x, 0, sizeof *x);
  x->rowid = rowid;
  x->side = side;
  x->owner = owner;
  x->other = other;
}

/* The adjacency entries of the view, against those the model implies. */
static void verify_view(const dyng_graph *g, const model *m) {
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  const int n_obj = m->n_weights ? m->n_weights : 1;
  assert_int_equal(view.n_objectives, n_obj);
  assert_int_equal(view.directed, m->directed);
  assert_int_equal(view.n_vertices, dyng_graph_vertex_bound(g));
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) {
    if (k < n_obj) assert_non_null(view.out.w[k]);
    else assert_null(view.out.w[k]);
  }
  if (m->directed) {
    for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) assert_null(view.in.w[k]);
  } else {
    assert_ptr_equal(view.in.off, view.out.off);
    assert_ptr_equal(view.in.deg, view.out.deg);
    assert_ptr_equal(view.in.nbr, view.out.nbr);
    assert_ptr_equal(view.in.ref, view.out.ref);
  }

  /* A directed graph keeps in entries only once dyng_graph_build_in ran;
  ** before that only the out entries (side 0) exist, the in-degrees are
  ** checked by verify() and every side-1 position is DYNG_NONE. */
  int in_entries = !m->directed || view.in.nbr != NULL;
  if (m->directed && !in_entries) {
    assert_null(view.in.off);
    assert_null(view.in.ref);
    assert_non_null(view.in.deg);
    assert_null(view.edge_pos_in);
  }

  size_t n_edges = model_n_edges(m);
  size_t cap = 2 * n_edges + 1;
  entry *want = calloc(cap, sizeof *want), *got = calloc(cap, sizeof *got);
  assert_non_null(want);
  assert_non_null(got);
  size_t n_want = 0, n_got = 0;
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    if (!e->present) continue;
    int64_t s = m->node[e->src], d = m->node[e->dst];
    entry_add(want, &n_want, cap, m->rowid[i], 0, s, d);
    for (int k = 0; k < n_obj; k++) want[n_want - 1].w[k] = model_weight(m, i, k);
    if (!in_entries) continue;
    entry_add(want, &n_want, cap, m->rowid[i], 1, d, s);
    for (int k = 0; k < n_obj; k++) want[n_want - 1].w[k] = model_weight(m, i, k);
  }

  /* Walk the out entries, then (directed) the in entries. */
  for (int dir = 0; dir < (m->directed && in_entries ? 2 : 1); dir++) {
    const dyng_adj_view *a = dir ? &view.in : &view.out;
    for (uint32_t v = 0; v < view.n_vertices; v++) {
      for (uint32_t i = 0; i < a->deg[v]; i++) {
        uint32_t p = a->off[v] + i;
        uint32_t slot = a->ref[p] >> 1;
        int side = (int)(a->ref[p] & 1u);
        assert_true(slot < view.n_edge_slots);
        assert_true(a->nbr[p] < view.n_vertices);
        if (m->directed) assert_int_equal(side, dir);
        assert_int_equal(side ? view.edge_pos_in[slot] : view.edge_pos_out[slot], p);
        entry_add(got, &n_got, cap, view.edge_rowid[slot], side, view.node_id[v],
                  view.node_id[a->nbr[p]]);
        for (int k = 0; k < n_obj; k++)
          got[n_got - 1].w[k] = dir ? view.out.w[k][view.edge_pos_out[slot]] : a->w[k][p];
      }
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
    for (int k = 0; k < n_obj; k++) assert_true(got[i].w[k] == want[i].w[k]);
  }
  free(want);
  free(got);
}

/* Everything the API can tell about the graph, against the model. */
static void verify(const dyng_graph *g, const model *m) {
  const int n_obj = m->n_weights ? m->n_weights : 1;
  assert_int_equal(dyng_graph_check(g), 0);
  assert_int_equal(dyng_graph_directed(g), m->directed);
  assert_int_equal(dyng_graph_n_weights(g), m->n_weights);

  /* Each rowid: present or not, with the right endpoints and weights. */
  size_t n_edges = 0;
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    uint32_t slot = DYNG_NONE;
    int rc = dyng_graph_edge(g, m->rowid[i], &slot);
    if (!e->present) {
      assert_int_equal(rc, DYNG_ENOTFOUND);
      continue;
    }
    n_edges++;
    assert_int_equal(rc, DYNG_OK);
    assert_int_equal(dyng_graph_edge_rowid(g, slot), m->rowid[i]);
    assert_int_equal(dyng_graph_node_id(g, dyng_graph_edge_src(g, slot)), m->node[e->src]);
    assert_int_equal(dyng_graph_node_id(g, dyng_graph_edge_dst(g, slot)), m->node[e->dst]);
    for (int k = 0; k < n_obj; k++) {
      double w = dyng_graph_edge_weight(g, slot, k);
      assert_true(w == model_weight(m, i, k));
    }
  }
  assert_int_equal(dyng_graph_n_edges(g), n_edges);

  /* Each node: found exactly when it has an edge, with the right degrees. */
  uint32_t *out = calloc(m->n_nodes, sizeof *out), *in = calloc(m->n_nodes, sizeof *in);
  assert_non_null(out);
  assert_non_null(in);
  for (size_t i = 0; i < m->n_rowids; i++) {
    const model_edge *e = &m->e[i];
    if (!e->present) continue;
    if (m->directed) {
      out[e->src]++;
      in[e->dst]++;
    } else {
      out[e->src]++; /* a self-loop counts twice */
      out[e->dst]++;
    }
  }
  uint32_t live = 0;
  for (size_t n = 0; n < m->n_nodes; n++) {
    uint32_t v = DYNG_NONE;
    int rc = dyng_graph_vertex(g, m->node[n], &v);
    if (out[n] + in[n] == 0) {
      assert_int_equal(rc, DYNG_ENOTFOUND);
      continue;
    }
    live++;
    assert_int_equal(rc, DYNG_OK);
    assert_true(v < dyng_graph_vertex_bound(g));
    assert_int_equal(dyng_graph_node_id(g, v), m->node[n]);
    assert_int_equal(dyng_graph_out_degree(g, v), out[n]);
    assert_int_equal(dyng_graph_in_degree(g, v), m->directed ? in[n] : out[n]);
  }
  assert_int_equal(dyng_graph_n_vertices(g), live);
  free(out);
  free(in);

  verify_view(g, m);
}

/* ---- building graphs and batches ---------------------------------------- */

/* A weight: mostly small integers, with 0, -0.0, fractions, tiny values and
** the largest allowed mixed in. */
static double random_weight(test_rng *r) {
  switch (test_rng_below(r, 10)) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return test_rng_unit(r) * 1000.0;
  case 3: return 1e-300;
  case 4: return DYNG_MAX_WEIGHT;
  default: return (double)test_rng_below(r, 20);
  }
}

static dyng_graph *graph_new_or_fail(int n_weights, int directed) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, n_weights, directed), DYNG_OK);
  assert_non_null(g);
  return g;
}

/* Loads edge position i of the model (already marked present) into g. */
static void load_model_edge(dyng_graph *g, const model *m, size_t i) {
  const model_edge *e = &m->e[i];
  assert_int_equal(dyng_graph_load_edge(g, m->rowid[i], m->node[e->src], m->node[e->dst],
                                        m->n_weights ? e->w : NULL),
                   DYNG_OK);
}

/* Operations on a batch, mirrored in the model, with the expected stats:
** the first time a batch touches a rowid its old presence is remembered, and
** the last operation decides what it counts as. */
/* A copy of the out adjacency in the graph's own layout that follows each
** batch the way a device copy does: the off/deg of the ends of the batch's
** edges and the entries at the positions it wrote (dyng_changes.out_pos),
** everything again when the layout changed. */
typedef struct follower {
  uint32_t *off, *deg, *nbr, *ref;
  double *w[MAXW];
  size_t cap_n, cap_p;
  uint32_t layout;
  int valid;
  dyng_changes ch;
  int n_exact;     /* batches followed by their positions alone */
} follower;

typedef struct batch_tracker {
  follower f;
  model *m;
  dyng_batch *b;
  int *touched;   /* per rowid position: 1 when the batch names it */
  int *was;       /* ... present before the batch */
  int *last_ins;  /* ... last operation was an insert */
  size_t *list;   /* rowid positions touched, in order */
  size_t n_list;
} batch_tracker;

static void tracker_init(batch_tracker *t, model *m) {
  memset(t, 0, sizeof *t);
  t->m = m;
  t->b = dyng_batch_new(m->n_weights);
  assert_non_null(t->b);
  t->touched = calloc(m->n_rowids, sizeof *t->touched);
  t->was = calloc(m->n_rowids, sizeof *t->was);
  t->last_ins = calloc(m->n_rowids, sizeof *t->last_ins);
  t->list = calloc(m->n_rowids, sizeof *t->list);
  assert_true(t->touched && t->was && t->last_ins && t->list);
}

static void follower_free(follower *f) {
  free(f->off), free(f->deg), free(f->nbr), free(f->ref);
  for (int k = 0; k < MAXW; k++) free(f->w[k]);
  dyng_changes_free(&f->ch);
}

static void follower_grow(follower *f, size_t n, size_t p, int n_obj) {
  if (n > f->cap_n) {
    f->off = realloc(f->off, n * sizeof *f->off);
    f->deg = realloc(f->deg, n * sizeof *f->deg);
    f->cap_n = n;
  }
  if (p > f->cap_p) {
    f->nbr = realloc(f->nbr, p * sizeof *f->nbr);
    f->ref = realloc(f->ref, p * sizeof *f->ref);
    for (int k = 0; k < n_obj; k++) f->w[k] = realloc(f->w[k], p * sizeof *f->w[k]);
    f->cap_p = p;
  }
}

static void follower_copy_entry(follower *f, const dyng_graph_view *v, size_t q) {
  f->nbr[q] = v->out.nbr[q];
  f->ref[q] = v->out.ref[q];
  for (int k = 0; k < v->n_objectives; k++) f->w[k][q] = v->out.w[k][q];
}

/* Brings the follower up to date after a batch recorded in f->ch, then
** checks it equals the graph on every live entry. */
static void follower_follow(follower *f, const dyng_graph *g) {
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  follower_grow(f, v.n_vertices + 1, v.out.n_entries + 1, v.n_objectives);
  if (!f->valid || v.out.layout != f->layout || !f->ch.out_pos_complete) {
    for (uint32_t x = 0; x < v.n_vertices; x++) f->off[x] = v.out.off[x], f->deg[x] = v.out.deg[x];
    for (size_t q = 0; q < v.out.n_entries; q++) follower_copy_entry(f, &v, q);
    f->valid = 1;
  } else {
    for (int side = 0; side < 2; side++) {
      const dyng_edge_change *r = side ? f->ch.added : f->ch.removed;
      size_t n = side ? f->ch.n_added : f->ch.n_removed;
      for (size_t i = 0; i < n; i++)
        for (int end = 0; end < 2; end++) {
          uint32_t x = end ? r[i].dst : r[i].src;
          f->off[x] = v.out.off[x];
          f->deg[x] = v.out.deg[x];
        }
    }
    for (size_t i = 0; i < f->ch.n_out_pos; i++) follower_copy_entry(f, &v, f->ch.out_pos[i]);
    f->n_exact++;
  }
  f->layout = v.out.layout;
  for (uint32_t x = 0; x < v.n_vertices; x++) {
    if (f->deg[x] != v.out.deg[x] || (f->deg[x] && f->off[x] != v.out.off[x]))
      fail_msg("follower: vertex %u has off/deg %u/%u, the graph %u/%u", x, f->off[x], f->deg[x], v.out.off[x],
               v.out.deg[x]);
    for (uint32_t q = v.out.off[x]; q < v.out.off[x] + v.out.deg[x]; q++) {
      assert_int_equal(f->nbr[q], v.out.nbr[q]);
      assert_int_equal(f->ref[q], v.out.ref[q]);
      for (int k = 0; k < v.n_objectives; k++) assert_true(f->w[k][q] == v.out.w[k][q]);
    }
  }
}

static void tracker_free(batch_tracker *t) {
  follower_free(&t->f);
  dyng_batch_free(t->b);
  free(t->touched);
  free(t->was);
  free(t->last_ins);
  free(t->list);
}

static void tracker_touch(batch_tracker *t, size_t i) {
  if (t->touched[i]) return;
  t->touched[i] = 1;
  t->was[i] = t->m->e[i].present;
  t->list[t->n_list++] = i;
}

static void track_insert(batch_tracker *t, size_t i, uint32_t src, uint32_t dst, const double *w) {
  model *m = t->m;
  tracker_touch(t, i);
  assert_int_equal(dyng_batch_insert(t->b, m->rowid[i], m->node[src], m->node[dst], m->n_weights ? w : NULL),
                   DYNG_OK);
  model_edge *e = &m->e[i];
  e->present = 1;
  e->src = src;
  e->dst = dst;
  for (int k = 0; k < MAXW; k++) e->w[k] = k < m->n_weights ? w[k] : 0.0;
  t->last_ins[i] = 1;
}

static void track_delete(batch_tracker *t, size_t i) {
  tracker_touch(t, i);
  assert_int_equal(dyng_batch_delete(t->b, t->m->rowid[i]), DYNG_OK);
  t->m->e[i].present = 0;
  t->last_ins[i] = 0;
}

/* Applies the batch to g, checks the stats, and resets the tracker. */
static void tracker_apply(batch_tracker *t, dyng_graph *g) {
  dyng_apply_stats want = {0, 0, 0}, got = {99, 99, 99};
  for (size_t j = 0; j < t->n_list; j++) {
    size_t i = t->list[j];
    if (t->was[i]) want.deleted++;
    if (t->last_ins[i]) want.inserted++;
    else if (!t->was[i]) want.missing++;
    t->touched[i] = 0;
  }
  t->n_list = 0;
  assert_int_equal(dyng_graph_apply_tracked(g, t->b, &got, &t->f.ch), DYNG_OK);
  follower_follow(&t->f, g);
  assert_int_equal(got.inserted, want.inserted);
  assert_int_equal(got.deleted, want.deleted);
  assert_int_equal(got.missing, want.missing);
  dyng_batch_clear(t->b);
  assert_int_equal(dyng_batch_size(t->b), 0);
}

/* A random present rowid position, or (size_t)-1 when there is none. */
static size_t random_present(test_rng *r, const model *m) {
  size_t start = (size_t)test_rng_below(r, m->n_rowids);
  for (size_t j = 0; j < m->n_rowids; j++) {
    size_t i = (start + j) % m->n_rowids;
    if (m->e[i].present) return i;
  }
  return (size_t)-1;
}

static size_t random_absent(test_rng *r, const model *m) {
  size_t start = (size_t)test_rng_below(r, m->n_rowids);
  for (size_t j = 0; j < m->n_rowids; j++) {
    size_t i = (start + j) % m->n_rowids;
    if (!m->e[i].present) return i;
  }
  return (size_t)-1;
}

/* ---- random batches ----------------------------------------------------- */

enum { RB_ROWIDS = 300, RB_NODES = 90, RB_WINDOW = 40, RB_LOAD = 120, RB_BATCHES = 90 };

/* Endpoints come from a window of the node pool that slides forward and
** back, so nodes lose all their edges and later come back. */
static uint32_t window_node(test_rng *r, int batch) {
  int span = RB_NODES - RB_WINDOW;
  int lo = (batch / 2) % (2 * span);
  if (lo > span) lo = 2 * span - lo;
  return (uint32_t)(lo + (int)test_rng_below(r, RB_WINDOW));
}

static void random_endpoints(test_rng *r, const model *m, int batch, uint32_t *src, uint32_t *dst) {
  uint64_t dice = test_rng_below(r, 100);
  *src = window_node(r, batch);
  if (dice < 10) {
    *dst = *src; /* self-loop */
  } else if (dice < 20) {
    /* parallel to an existing edge, either orientation */
    size_t i = random_present(r, m);
    if (i != (size_t)-1) {
      int flip = (int)test_rng_below(r, 2);
      *src = flip ? m->e[i].dst : m->e[i].src;
      *dst = flip ? m->e[i].src : m->e[i].dst;
    } else {
      *dst = window_node(r, batch);
    }
  } else {
    *dst = window_node(r, batch);
  }
}

static void random_weights(test_rng *r, double *w) {
  for (int k = 0; k < MAXW; k++) w[k] = random_weight(r);
}

static void run_random_batches(int directed, int n_weights, uint64_t salt) {
  test_rng r;
  test_rng_for(&r, salt);
  model m;
  model_init(&m, directed, n_weights, RB_ROWIDS, RB_NODES);
  dyng_graph *g = graph_new_or_fail(n_weights, directed);

  /* Bulk load distinct rowids, then seal. */
  assert_int_equal(dyng_graph_reserve(g, RB_LOAD), DYNG_OK);
  for (int j = 0; j < RB_LOAD; j++) {
    size_t i = random_absent(&r, &m);
    model_edge *e = &m.e[i];
    random_endpoints(&r, &m, 0, &e->src, &e->dst);
    random_weights(&r, e->w);
    e->present = 1;
    load_model_edge(g, &m, i);
  }
  assert_int_equal(dyng_graph_n_edges(g), RB_LOAD);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m);

  batch_tracker t;
  tracker_init(&t, &m);
  for (int batch = 1; batch <= RB_BATCHES; batch++) {
    if (batch == RB_BATCHES / 3) {
      /* From here on the in adjacency exists and batches maintain it. */
      assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
      verify(g, &m);
      if (directed) {
        dyng_graph_view view;
        dyng_graph_get_view(g, &view);
        assert_non_null(view.in.nbr);
      }
    }
    if (batch == RB_BATCHES / 2) {
      /* Delete everything once: no edge, no vertex left. */
      for (size_t i = 0; i < m.n_rowids; i++)
        if (m.e[i].present) track_delete(&t, i);
      tracker_apply(&t, g);
      verify(g, &m);
      assert_int_equal(dyng_graph_n_edges(g), 0);
      assert_int_equal(dyng_graph_n_vertices(g), 0);
      continue;
    }
    int n_ops = (int)test_rng_below(&r, 40);
    for (int op = 0; op < n_ops; op++) {
      uint64_t dice = test_rng_below(&r, 100);
      double w[MAXW];
      uint32_t s, d;
      random_weights(&r, w);
      random_endpoints(&r, &m, batch, &s, &d);
      if (dice < 40) {
        /* insert: any rowid, so sometimes a replacement */
        track_insert(&t, (size_t)test_rng_below(&r, m.n_rowids), s, d, w);
      } else if (dice < 75) {
        size_t i = random_present(&r, &m);
        if (i != (size_t)-1) track_delete(&t, i);
      } else if (dice < 82) {
        size_t i = random_absent(&r, &m);
        if (i != (size_t)-1) track_delete(&t, i); /* missing, unless re-inserted later */
      } else if (dice < 88) {
        /* insert then delete of one rowid: cancels */
        size_t i = (size_t)test_rng_below(&r, m.n_rowids);
        track_insert(&t, i, s, d, w);
        track_delete(&t, i);
      } else if (dice < 94) {
        /* delete then insert: a replacement */
        size_t i = random_present(&r, &m);
        if (i == (size_t)-1) i = (size_t)test_rng_below(&r, m.n_rowids);
        track_delete(&t, i);
        track_insert(&t, i, s, d, w);
      } else {
        /* the same rowid inserted twice: the second wins */
        size_t i = (size_t)test_rng_below(&r, m.n_rowids);
        track_insert(&t, i, s, d, w);
        random_weights(&r, w);
        random_endpoints(&r, &m, batch, &s, &d);
        track_insert(&t, i, s, d, w);
      }
    }
    tracker_apply(&t, g);
    verify(g, &m);
  }
  /* Most batches were followed by their written positions alone. */
  assert_true(t.f.n_exact > RB_BATCHES / 2);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_random_batches_directed_unweighted(void **state) { run_random_batches(1, 0, 10); }
static void test_random_batches_directed_one_weight(void **state) { run_random_batches(1, 1, 11); }
static void test_random_batches_directed_three_weights(void **state) { run_random_batches(1, 3, 12); }
static void test_random_batches_undirected_unweighted(void **state) { run_random_batches(0, 0, 13); }
static void test_random_batches_undirected_one_weight(void **state) { run_random_batches(0, 1, 14); }
static void test_random_batches_undirected_three_weights(void **state) { run_random_batches(0, 3, 15); }

/* ---- many inserts into one vertex ---------------------------------------- */

/* A hub that gains thousands of edges batch after batch (its segment
** outgrows its room again and again and moves to the end of the pool),
** while many other vertices grow too, then loses most of them and gains
** them back. */
static void run_hub_growth(int directed, uint64_t salt) {
  enum { ROWIDS = 9000, NODES = 400, PER_BATCH = 600 };
  test_rng r;
  test_rng_for(&r, salt);
  model m;
  model_init(&m, directed, 1, ROWIDS, NODES);
  dyng_graph *g = graph_new_or_fail(1, directed);
  size_t next = 0;
  /* A small loaded graph: a ring over the first 50 nodes. */
  for (uint32_t v = 0; v < 50; v++, next++) {
    model_edge *e = &m.e[next];
    e->present = 1;
    e->src = v;
    e->dst = (v + 1) % 50;
    e->w[0] = (double)v;
    load_model_edge(g, &m, next);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m);

  batch_tracker t;
  tracker_init(&t, &m);
  const uint32_t hub = 7;
  for (int batch = 0; batch < 14; batch++) {
    int shrink = batch == 8 || batch == 9;
    if (shrink) {
      /* Delete most of the hub's edges and a share of the rest. */
      for (size_t i = 0; i < next; i++) {
        if (!m.e[i].present) continue;
        int at_hub = m.e[i].src == hub || m.e[i].dst == hub;
        if (test_rng_below(&r, 100) < (at_hub ? 80u : 30u)) track_delete(&t, i);
      }
    } else {
      for (int j = 0; j < PER_BATCH && next < ROWIDS; j++, next++) {
        double w[MAXW] = {(double)test_rng_below(&r, 100), 0, 0};
        uint64_t dice = test_rng_below(&r, 100);
        uint32_t other = (uint32_t)test_rng_below(&r, NODES);
        if (dice < 45) track_insert(&t, next, hub, other, w);
        else if (dice < 75) track_insert(&t, next, other, hub, w);
        else if (dice < 80) track_insert(&t, next, hub, hub, w);
        else track_insert(&t, next, other, (uint32_t)test_rng_below(&r, NODES), w);
      }
    }
    tracker_apply(&t, g);
    verify(g, &m);
  }
  uint32_t v;
  assert_int_equal(dyng_graph_vertex(g, m.node[hub], &v), DYNG_OK);
  assert_true(dyng_graph_out_degree(g, v) > 1000);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_many_inserts_into_one_vertex_directed(void **state) { run_hub_growth(1, 20); }
static void test_many_inserts_into_one_vertex_undirected(void **state) { run_hub_growth(0, 21); }

/* Many small vertices each gaining a few edges at a time, self-loops
** included: every insert makes a segment move, so moved-away segments pile
** up in the pool (the case compaction is meant for).  With more vertices
** than a compaction block (4096) the blocks are copied on several threads
** where the engine has them; the pools must have been compacted. */
static void run_scattered_relocations(int directed, uint64_t salt, uint32_t nodes) {
  const size_t rowids = (size_t)nodes * 6;
  test_rng r;
  test_rng_for(&r, salt);
  model m;
  model_init(&m, directed, 1, rowids, nodes);
  dyng_graph *g = graph_new_or_fail(1, directed);
  size_t next = 0;
  for (uint32_t v = 0; v < nodes; v++, next++) {
    model_edge *e = &m.e[next];
    e->present = 1;
    e->src = v;
    e->dst = (v * 7 + 1) % nodes;
    e->w[0] = 1.0;
    load_model_edge(g, &m, next);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint32_t layout = view.out.layout;
  batch_tracker t;
  tracker_init(&t, &m);
  for (int round = 0; round < 5; round++) {
    /* Each round adds one self-loop and one edge per vertex, then deletes
    ** a third of all edges: segments keep outgrowing their room. */
    for (uint32_t v = 0; v < nodes && next + 2 <= rowids; v++) {
      double w[MAXW] = {(double)test_rng_below(&r, 5), 0, 0};
      track_insert(&t, next++, v, v, w);
      track_insert(&t, next++, v, (uint32_t)test_rng_below(&r, nodes), w);
    }
    tracker_apply(&t, g);
    verify(g, &m);
    for (size_t i = 0; i < next; i++)
      if (m.e[i].present && test_rng_below(&r, 3) == 0) track_delete(&t, i);
    tracker_apply(&t, g);
    verify(g, &m);
  }
  dyng_graph_get_view(g, &view);
  assert_true(view.out.layout != layout);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_scattered_segment_relocations_directed(void **state) { run_scattered_relocations(1, 22, 1500); }
static void test_scattered_segment_relocations_undirected(void **state) { run_scattered_relocations(0, 23, 1500); }
static void test_scattered_relocations_compact_in_blocks_directed(void **state) {
  run_scattered_relocations(1, 24, 10000);
}
static void test_scattered_relocations_compact_in_blocks_undirected(void **state) {
  run_scattered_relocations(0, 25, 10000);
}

/* ---- batch semantics ---------------------------------------------------- */

/* A sealed graph of the model's present edges. */
static dyng_graph *graph_of_model(const model *m) {
  dyng_graph *g = graph_new_or_fail(m->n_weights, m->directed);
  for (size_t i = 0; i < m->n_rowids; i++)
    if (m->e[i].present) load_model_edge(g, m, i);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  return g;
}

static void set_edge(model *m, size_t i, uint32_t src, uint32_t dst, double w0) {
  m->e[i].present = 1;
  m->e[i].src = src;
  m->e[i].dst = dst;
  m->e[i].w[0] = w0;
}

/* Self-loops added one batch at a time to many low-degree vertices of an
** undirected graph: each needs two entries in its vertex's segment at once,
** and must get them even when making room moves or compacts the pool. */
static void test_self_loops_one_at_a_time_keep_graph_consistent(void **state) {
  (void)state;
  enum { NODES = 2000, ROUNDS = 6 };
  model m;
  model_init(&m, 0, 0, NODES * (ROUNDS + 1), NODES);
  dyng_graph *g = graph_new_or_fail(0, 0);
  size_t next = 0;
  for (uint32_t v = 0; v < NODES; v++, next++) {
    set_edge(&m, next, v, (v + 1) % NODES, 0);
    load_model_edge(g, &m, next);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  batch_tracker t;
  tracker_init(&t, &m);
  for (int round = 0; round < ROUNDS; round++) {
    for (uint32_t v = 0; v < NODES; v++) {
      track_insert(&t, next++, v, v, NULL);
      tracker_apply(&t, g);
    }
    assert_int_equal(dyng_graph_check(g), 0);
  }
  verify(g, &m);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_insert_then_delete_of_new_rowid_cancels(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 1, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(1);
  assert_non_null(b);
  double w = 3.0;
  assert_int_equal(dyng_batch_insert(b, m.rowid[4], m.node[6], m.node[7], &w), DYNG_OK);
  assert_int_equal(dyng_batch_delete(b, m.rowid[4]), DYNG_OK);
  dyng_apply_stats st;
  assert_int_equal(dyng_graph_apply(g, b, &st), DYNG_OK);
  assert_int_equal(st.inserted, 0);
  assert_int_equal(st.deleted, 0);
  assert_int_equal(st.missing, 1); /* what is left is a delete of an absent rowid */
  verify(g, &m);
  uint32_t v;
  assert_int_equal(dyng_graph_vertex(g, m.node[6], &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_graph_vertex(g, m.node[7], &v), DYNG_ENOTFOUND);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_insert_then_delete_of_existing_rowid_deletes_it(void **state) {
  (void)state;
  model m;
  model_init(&m, 0, 1, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  set_edge(&m, 1, 2, 3, 6.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(1);
  assert_non_null(b);
  double w = 3.0;
  assert_int_equal(dyng_batch_insert(b, m.rowid[0], m.node[6], m.node[7], &w), DYNG_OK);
  assert_int_equal(dyng_batch_delete(b, m.rowid[0]), DYNG_OK);
  m.e[0].present = 0;
  dyng_apply_stats st;
  assert_int_equal(dyng_graph_apply(g, b, &st), DYNG_OK);
  assert_int_equal(st.inserted, 0);
  assert_int_equal(st.deleted, 1);
  assert_int_equal(st.missing, 0);
  verify(g, &m);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_delete_then_insert_of_rowid_replaces_edge(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 1, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  set_edge(&m, 1, 2, 3, 6.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(1);
  assert_non_null(b);
  double w = 9.5;
  assert_int_equal(dyng_batch_delete(b, m.rowid[0]), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, m.rowid[0], m.node[4], m.node[4], &w), DYNG_OK);
  set_edge(&m, 0, 4, 4, 9.5);
  dyng_apply_stats st;
  assert_int_equal(dyng_graph_apply(g, b, &st), DYNG_OK);
  assert_int_equal(st.inserted, 1);
  assert_int_equal(st.deleted, 1);
  assert_int_equal(st.missing, 0);
  verify(g, &m); /* node 1 is gone, node 4 is new */
  assert_int_equal(dyng_graph_n_edges(g), 2);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_last_operation_on_a_rowid_wins(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 2, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(2);
  assert_non_null(b);
  double w1[2] = {1, 2}, w2[2] = {3, 4}, w3[2] = {0, 7};
  /* rowid 3: insert, delete, insert, insert: the last insert stays. */
  assert_int_equal(dyng_batch_insert(b, m.rowid[3], m.node[1], m.node[2], w1), DYNG_OK);
  assert_int_equal(dyng_batch_delete(b, m.rowid[3]), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, m.rowid[3], m.node[2], m.node[5], w2), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, m.rowid[3], m.node[5], m.node[6], w3), DYNG_OK);
  /* rowid 0: insert twice then delete: gone. */
  assert_int_equal(dyng_batch_insert(b, m.rowid[0], m.node[8], m.node[9], w1), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, m.rowid[0], m.node[8], m.node[8], w2), DYNG_OK);
  assert_int_equal(dyng_batch_delete(b, m.rowid[0]), DYNG_OK);
  m.e[0].present = 0;
  m.e[3].present = 1;
  m.e[3].src = 5;
  m.e[3].dst = 6;
  m.e[3].w[0] = 0;
  m.e[3].w[1] = 7;
  dyng_apply_stats st;
  assert_int_equal(dyng_graph_apply(g, b, &st), DYNG_OK);
  assert_int_equal(st.inserted, 1);
  assert_int_equal(st.deleted, 1);
  assert_int_equal(st.missing, 0);
  verify(g, &m);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_normalize_keeps_one_operation_per_rowid(void **state) {
  (void)state;
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  /* Rowids recorded out of order, several more than once. */
  const int64_t rowids[] = {5, 3, 5, INT64_MIN, 7, 3, 3, INT64_MAX, 5, -1, INT64_MIN};
  const size_t n = sizeof rowids / sizeof rowids[0];
  for (size_t i = 0; i < n; i++) {
    if (i % 3 == 2) assert_int_equal(dyng_batch_delete(b, rowids[i]), DYNG_OK);
    else assert_int_equal(dyng_batch_insert(b, rowids[i], (int64_t)i, 0, NULL), DYNG_OK);
  }
  assert_int_equal(dyng_batch_size(b), n);
  assert_int_equal(dyng_batch_normalize(b), DYNG_OK);
  assert_int_equal(dyng_batch_size(b), 6); /* 5, 3, MIN, 7, MAX, -1 */
  assert_int_equal(dyng_batch_normalize(b), DYNG_OK); /* idempotent */
  assert_int_equal(dyng_batch_size(b), 6);
  dyng_batch_clear(b);
  assert_int_equal(dyng_batch_size(b), 0);
  dyng_batch_free(b);
  dyng_batch_free(NULL);
}

static void test_apply_stats_count_inserted_deleted_missing(void **state) {
  (void)state;
  model m;
  model_init(&m, 0, 1, 20, 10);
  for (size_t i = 0; i < 5; i++) set_edge(&m, i, (uint32_t)i, (uint32_t)(i + 1), 1.0);
  dyng_graph *g = graph_of_model(&m);
  batch_tracker t;
  tracker_init(&t, &m);
  double w[MAXW] = {2.0, 0, 0};
  track_insert(&t, 10, 1, 2, w); /* 3 new inserts */
  track_insert(&t, 11, 2, 3, w);
  track_insert(&t, 12, 3, 3, w);
  track_delete(&t, 0);           /* 2 deletes of present rowids */
  track_delete(&t, 1);
  track_insert(&t, 2, 8, 9, w);  /* 1 replacement */
  track_delete(&t, 15);          /* 2 deletes of absent rowids */
  track_delete(&t, 16);
  dyng_apply_stats st;
  assert_int_equal(dyng_graph_apply(g, t.b, &st), DYNG_OK);
  assert_int_equal(st.inserted, 4);
  assert_int_equal(st.deleted, 3);
  assert_int_equal(st.missing, 2);
  verify(g, &m);
  /* A NULL stats pointer is allowed. */
  dyng_batch_clear(t.b);
  track_delete(&t, 10);
  assert_int_equal(dyng_graph_apply(g, t.b, NULL), DYNG_OK);
  verify(g, &m);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

/* ---- invalid input and states ------------------------------------------- */

/* Past DYNG_MAX_WEIGHT, two weights could already overflow a path's sum. */
static const double bad_weights[] = {NAN, -NAN, -1.0, -1e-300, INFINITY, -INFINITY, 1e308, DBL_MAX,
                                     0x1.0p990, 1.0000000000000001e298 /* the next double after 1e298 */};
#define N_BAD (sizeof bad_weights / sizeof bad_weights[0])

static void test_batch_insert_rejects_invalid_weights(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 3, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(3);
  assert_non_null(b);
  for (size_t j = 0; j < N_BAD; j++)
    for (int k = 0; k < 3; k++) {
      double w[3] = {1.0, 2.0, 3.0};
      w[k] = bad_weights[j];
      assert_int_equal(dyng_batch_insert(b, m.rowid[3], m.node[1], m.node[2], w), DYNG_EWEIGHT);
      assert_int_equal(dyng_batch_size(b), 0);
    }
  /* Zero, negative zero and the largest weight are valid. */
  double ok[3] = {0.0, -0.0, DYNG_MAX_WEIGHT};
  assert_int_equal(dyng_batch_insert(b, m.rowid[4], m.node[1], m.node[2], ok), DYNG_OK);
  assert_int_equal(dyng_batch_size(b), 1);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  m.e[4] = (model_edge){1, 1, 2, {0.0, 0.0, DYNG_MAX_WEIGHT}};
  verify(g, &m);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_load_edge_rejects_invalid_weights(void **state) {
  (void)state;
  model m;
  model_init(&m, 0, 2, 10, 10);
  dyng_graph *g = graph_new_or_fail(2, 0);
  for (size_t j = 0; j < N_BAD; j++)
    for (int k = 0; k < 2; k++) {
      double w[2] = {1.0, 2.0};
      w[k] = bad_weights[j];
      assert_int_equal(dyng_graph_load_edge(g, m.rowid[1], m.node[1], m.node[2], w), DYNG_EWEIGHT);
      assert_int_equal(dyng_graph_n_edges(g), 0);
    }
  /* The rejected rowid is still free. */
  m.e[1] = (model_edge){1, 1, 2, {-0.0, 4.0, 0}};
  load_model_edge(g, &m, 1);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_load_of_duplicate_rowid_is_einval(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 1, 10, 10);
  dyng_graph *g = graph_new_or_fail(1, 1);
  set_edge(&m, 2, 1, 2, 5.0);
  load_model_edge(g, &m, 2);
  double w = 1.0;
  assert_int_equal(dyng_graph_load_edge(g, m.rowid[2], m.node[3], m.node[4], &w), DYNG_EINVAL);
  assert_int_equal(dyng_graph_load_edge(g, m.rowid[2], m.node[1], m.node[2], &w), DYNG_EINVAL);
  assert_int_equal(dyng_graph_n_edges(g), 1);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m); /* the first edge stays; nodes 3 and 4 never appear */
  dyng_graph_free(g);
  model_free(&m);
}

static void test_load_reserve_and_seal_after_seal_are_estate(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 1, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  dyng_graph *g = graph_of_model(&m);
  double w = 1.0;
  assert_int_equal(dyng_graph_load_edge(g, m.rowid[1], m.node[3], m.node[4], &w), DYNG_ESTATE);
  assert_int_equal(dyng_graph_reserve(g, 100), DYNG_ESTATE);
  assert_int_equal(dyng_graph_seal(g), DYNG_ESTATE);
  verify(g, &m);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_apply_before_seal_is_estate(void **state) {
  (void)state;
  dyng_graph *g = graph_new_or_fail(0, 1);
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  assert_int_equal(dyng_batch_insert(b, 1, 2, 3, NULL), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_ESTATE);
  assert_int_equal(dyng_graph_n_edges(g), 0);
  dyng_batch_free(b);
  dyng_graph_free(g);
}

static void test_apply_of_batch_with_other_weight_count_is_einval(void **state) {
  (void)state;
  model m;
  model_init(&m, 1, 2, 10, 10);
  set_edge(&m, 0, 1, 2, 5.0);
  dyng_graph *g = graph_of_model(&m);
  dyng_batch *b = dyng_batch_new(1);
  assert_non_null(b);
  double w = 1.0;
  assert_int_equal(dyng_batch_insert(b, m.rowid[1], m.node[1], m.node[2], &w), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_EINVAL);
  verify(g, &m);
  dyng_batch_free(b);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_weight_count_out_of_range_is_rejected(void **state) {
  (void)state;
  dyng_graph *g = (dyng_graph *)&g; /* must be reset to NULL */
  assert_int_equal(dyng_graph_new(&g, DYNG_MAX_WEIGHTS + 1, 0), DYNG_EINVAL);
  assert_null(g);
  g = (dyng_graph *)&g;
  assert_int_equal(dyng_graph_new(&g, -1, 1), DYNG_EINVAL);
  assert_null(g);
  assert_null(dyng_batch_new(DYNG_MAX_WEIGHTS + 1));
  assert_null(dyng_batch_new(-1));
  assert_int_equal(dyng_graph_new(&g, DYNG_MAX_WEIGHTS, 0), DYNG_OK);
  assert_int_equal(dyng_graph_n_weights(g), DYNG_MAX_WEIGHTS);
  dyng_graph_free(g);
  dyng_graph_free(NULL);
}

/* ---- vertices, weights, empty graphs ------------------------------------ */

static void run_vertex_comes_and_goes(int directed) {
  model m;
  model_init(&m, directed, 0, 10, 10);
  set_edge(&m, 0, 1, 2, 0);
  set_edge(&m, 1, 2, 3, 0);
  dyng_graph *g = graph_of_model(&m);
  verify(g, &m);
  assert_int_equal(dyng_graph_n_vertices(g), 3);
  batch_tracker t;
  tracker_init(&t, &m);
  uint32_t v;

  track_delete(&t, 0); /* node 1 loses its only edge */
  tracker_apply(&t, g);
  verify(g, &m);
  assert_int_equal(dyng_graph_vertex(g, m.node[1], &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_graph_n_vertices(g), 2);

  track_delete(&t, 1); /* now nothing is left */
  tracker_apply(&t, g);
  verify(g, &m);
  assert_int_equal(dyng_graph_n_vertices(g), 0);
  assert_int_equal(dyng_graph_vertex(g, m.node[2], &v), DYNG_ENOTFOUND);

  track_insert(&t, 5, 1, 1, NULL); /* node 1 comes back with a self-loop */
  tracker_apply(&t, g);
  verify(g, &m);
  assert_int_equal(dyng_graph_vertex(g, m.node[1], &v), DYNG_OK);
  assert_int_equal(dyng_graph_n_vertices(g), 1);
  assert_int_equal(dyng_graph_out_degree(g, v), directed ? 1 : 2);

  track_insert(&t, 6, 3, 1, NULL); /* and node 3 with an edge to it */
  tracker_apply(&t, g);
  verify(g, &m);
  assert_int_equal(dyng_graph_n_vertices(g), 2);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_vertex_without_edges_disappears_and_comes_back_directed(void **state) { run_vertex_comes_and_goes(1); }
static void test_vertex_without_edges_disappears_and_comes_back_undirected(void **state) { run_vertex_comes_and_goes(0); }

static void test_negative_zero_weight_is_stored_as_zero(void **state) {
  (void)state;
  dyng_graph *g = graph_new_or_fail(2, 1);
  double w[2] = {-0.0, -0.0};
  assert_int_equal(dyng_graph_load_edge(g, 1, 10, 20, w), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_batch *b = dyng_batch_new(2);
  assert_non_null(b);
  assert_int_equal(dyng_batch_insert(b, 2, 20, 30, w), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  for (int64_t rowid = 1; rowid <= 2; rowid++) {
    uint32_t slot;
    assert_int_equal(dyng_graph_edge(g, rowid, &slot), DYNG_OK);
    for (int k = 0; k < 2; k++) {
      double x = dyng_graph_edge_weight(g, slot, k);
      assert_true(x == 0.0);
      assert_false(signbit(x));
    }
  }
  /* The adjacency entries that Dijkstra's radix heap reads, too. */
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  for (uint32_t v = 0; v < view.n_vertices; v++)
    for (uint32_t i = 0; i < view.out.deg[v]; i++)
      for (int k = 0; k < 2; k++) assert_false(signbit(view.out.w[k][view.out.off[v] + i]));
  dyng_batch_free(b);
  dyng_graph_free(g);
}

static void test_unweighted_edges_weigh_one(void **state) {
  (void)state;
  dyng_graph *g = graph_new_or_fail(0, 0);
  assert_int_equal(dyng_graph_load_edge(g, 1, 10, 20, NULL), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  assert_int_equal(dyng_batch_insert(b, 2, 20, 20, NULL), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  assert_int_equal(view.n_objectives, 1);
  for (int64_t rowid = 1; rowid <= 2; rowid++) {
    uint32_t slot;
    assert_int_equal(dyng_graph_edge(g, rowid, &slot), DYNG_OK);
    assert_true(dyng_graph_edge_weight(g, slot, 0) == 1.0);
    assert_true(view.out.w[0][view.edge_pos_out[slot]] == 1.0);
    assert_true(view.out.w[0][view.edge_pos_in[slot]] == 1.0);
  }
  dyng_batch_free(b);
  dyng_graph_free(g);
}

static void run_empty_graph(int directed) {
  model m;
  model_init(&m, directed, 1, 50, 20);
  dyng_graph *g = graph_new_or_fail(1, directed);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  verify(g, &m);
  assert_int_equal(dyng_graph_n_vertices(g), 0);
  assert_int_equal(dyng_graph_n_edges(g), 0);
  batch_tracker t;
  tracker_init(&t, &m);
  tracker_apply(&t, g); /* an empty batch */
  verify(g, &m);
  for (size_t i = 0; i < 30; i++) {
    double w[MAXW] = {(double)i, 0, 0};
    track_insert(&t, i, (uint32_t)(i % 7), (uint32_t)((i * 3) % 11), w);
  }
  tracker_apply(&t, g);
  verify(g, &m);
  tracker_free(&t);
  dyng_graph_free(g);
  model_free(&m);
}

static void test_empty_graph_seals_and_accepts_inserts_directed(void **state) { run_empty_graph(1); }
static void test_empty_graph_seals_and_accepts_inserts_undirected(void **state) { run_empty_graph(0); }

/* A graph sealed with its slots cut into several ranges (on however many
** threads run them) has the very pool of one sealed in one range: each
** vertex's entries in slot order.  A hub, self-loops and parallel edges
** make vertices whose entries come from many ranges. */
static void run_seal_in_ranges(int directed) {
  enum { NODES = 700, EDGES = 6000, RUNS = 3 };
  static const uint32_t ranges[RUNS] = {1, 7, 97};
  test_rng r;
  test_rng_for(&r, 30 + (uint64_t)directed);
  int64_t *ids = id_pool(NODES, 0x9E3779B97F4A7C15ull);
  int64_t src[EDGES], dst[EDGES];
  double w[EDGES][MAXW];
  for (int i = 0; i < EDGES; i++) {
    src[i] = ids[test_rng_below(&r, 4) == 0 ? 0 : test_rng_below(&r, NODES)];
    dst[i] = test_rng_below(&r, 10) == 0 ? src[i] : ids[test_rng_below(&r, NODES)];
    if (i > 0 && test_rng_below(&r, 10) == 0) src[i] = src[i - 1], dst[i] = dst[i - 1];
    for (int k = 0; k < MAXW; k++) w[i][k] = (double)test_rng_below(&r, 4);
  }
  dyng_graph *g[RUNS];
  for (int j = 0; j < RUNS; j++) {
    dyng__graph_set_seal_ranges(ranges[j]);
    g[j] = graph_new_or_fail(MAXW, directed);
    for (int i = 0; i < EDGES; i++)
      assert_int_equal(dyng_graph_load_edge(g[j], 3 * (int64_t)i + 1, src[i], dst[i], w[i]), DYNG_OK);
    assert_int_equal(dyng_graph_seal(g[j]), DYNG_OK);
    assert_int_equal(dyng_graph_check(g[j]), DYNG_OK);
  }
  dyng__graph_set_seal_ranges(0);
  dyng_graph_view a, b;
  dyng_graph_get_view(g[0], &a);
  for (int j = 1; j < RUNS; j++) {
    dyng_graph_get_view(g[j], &b);
    assert_int_equal(a.n_vertices, b.n_vertices);
    assert_int_equal(a.n_edge_slots, b.n_edge_slots);
    assert_int_equal(a.out.n_entries, b.out.n_entries);
    for (uint32_t v = 0; v < a.n_vertices; v++) {
      assert_true(a.node_id[v] == b.node_id[v]);
      assert_int_equal(a.out.off[v], b.out.off[v]);
      assert_int_equal(a.out.deg[v], b.out.deg[v]);
      assert_int_equal(a.in.deg[v], b.in.deg[v]);
      for (uint32_t p = a.out.off[v]; p < a.out.off[v] + a.out.deg[v]; p++) {
        assert_int_equal(a.out.nbr[p], b.out.nbr[p]);
        assert_int_equal(a.out.ref[p], b.out.ref[p]);
        for (int k = 0; k < MAXW; k++) assert_true(a.out.w[k][p] == b.out.w[k][p]);
      }
    }
    for (uint32_t s = 0; s < a.n_edge_slots; s++) {
      assert_int_equal(a.edge_pos_out[s], b.edge_pos_out[s]);
      if (!directed) assert_int_equal(a.edge_pos_in[s], b.edge_pos_in[s]);
    }
  }
  /* The hub's entries are in slot order. */
  uint32_t hub;
  assert_int_equal(dyng_graph_vertex(g[0], ids[0], &hub), DYNG_OK);
  for (uint32_t p = a.out.off[hub] + 1; p < a.out.off[hub] + a.out.deg[hub]; p++)
    assert_true(a.out.ref[p - 1] < a.out.ref[p]);
  for (int j = 0; j < RUNS; j++) dyng_graph_free(g[j]);
  free(ids);
}

static void test_seal_in_ranges_gives_one_pool_directed(void **state) { run_seal_in_ranges(1); }
static void test_seal_in_ranges_gives_one_pool_undirected(void **state) { run_seal_in_ranges(0); }

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_batches_directed_unweighted),
      cmocka_unit_test(test_random_batches_directed_one_weight),
      cmocka_unit_test(test_random_batches_directed_three_weights),
      cmocka_unit_test(test_random_batches_undirected_unweighted),
      cmocka_unit_test(test_random_batches_undirected_one_weight),
      cmocka_unit_test(test_random_batches_undirected_three_weights),
      cmocka_unit_test(test_many_inserts_into_one_vertex_directed),
      cmocka_unit_test(test_many_inserts_into_one_vertex_undirected),
      cmocka_unit_test(test_scattered_segment_relocations_directed),
      cmocka_unit_test(test_scattered_segment_relocations_undirected),
      cmocka_unit_test(test_scattered_relocations_compact_in_blocks_directed),
      cmocka_unit_test(test_scattered_relocations_compact_in_blocks_undirected),
      cmocka_unit_test(test_self_loops_one_at_a_time_keep_graph_consistent),
      cmocka_unit_test(test_insert_then_delete_of_new_rowid_cancels),
      cmocka_unit_test(test_insert_then_delete_of_existing_rowid_deletes_it),
      cmocka_unit_test(test_delete_then_insert_of_rowid_replaces_edge),
      cmocka_unit_test(test_last_operation_on_a_rowid_wins),
      cmocka_unit_test(test_normalize_keeps_one_operation_per_rowid),
      cmocka_unit_test(test_apply_stats_count_inserted_deleted_missing),
      cmocka_unit_test(test_batch_insert_rejects_invalid_weights),
      cmocka_unit_test(test_load_edge_rejects_invalid_weights),
      cmocka_unit_test(test_load_of_duplicate_rowid_is_einval),
      cmocka_unit_test(test_load_reserve_and_seal_after_seal_are_estate),
      cmocka_unit_test(test_apply_before_seal_is_estate),
      cmocka_unit_test(test_apply_of_batch_with_other_weight_count_is_einval),
      cmocka_unit_test(test_weight_count_out_of_range_is_rejected),
      cmocka_unit_test(test_vertex_without_edges_disappears_and_comes_back_directed),
      cmocka_unit_test(test_vertex_without_edges_disappears_and_comes_back_undirected),
      cmocka_unit_test(test_negative_zero_weight_is_stored_as_zero),
      cmocka_unit_test(test_unweighted_edges_weigh_one),
      cmocka_unit_test(test_empty_graph_seals_and_accepts_inserts_directed),
      cmocka_unit_test(test_empty_graph_seals_and_accepts_inserts_undirected),
      cmocka_unit_test(test_seal_in_ranges_gives_one_pool_directed),
      cmocka_unit_test(test_seal_in_ranges_gives_one_pool_undirected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
