/*
** engine/sssp_dyn.c: updating a shortest-path tree after a batch (see
** dyng_sssp_update in sssp.h), and rebuilding its distance order.
**
** The tree is only dist/parent/parent_edge: the children of a vertex v are
** the out-neighbours x with parent[x] == v through that very edge, so
** cutting the subtree under a deleted tree edge costs the out-degrees of the
** subtree's vertices, which the relaxation that follows pays anyway.
*/
#include "engine/sssp.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/radix_heap.h"
#include "engine/sssp_tie.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int dyng_sssp_tree_grow(dyng_sssp_tree *t, uint32_t n) {
  uint32_t old = t->n_vertices;
  if (n <= old) return DYNG_OK;
  size_t m = n;
  if (dyng_resize(&t->dist, m, sizeof *t->dist) ||
      dyng_resize(&t->parent, m, sizeof *t->parent) ||
      dyng_resize(&t->parent_edge, m, sizeof *t->parent_edge) ||
      dyng_resize(&t->order, m, sizeof *t->order) ||
      dyng_resize(&t->hops, m, sizeof *t->hops))
    return DYNG_ENOMEM;
  for (uint32_t v = old; v < n; v++) {
    t->dist[v] = INFINITY;
    t->parent[v] = t->parent_edge[v] = t->hops[v] = DYNG_NONE;
  }
  t->n_vertices = n;
  return DYNG_OK;
}

/* A stack of vertices; DYNG_ENOMEM when it cannot grow. */
typedef dyng_u32_list dyng__stack;

static int dyng__push(dyng__stack *s, uint32_t v) { return dyng_u32_push(s, v) ? DYNG_ENOMEM : DYNG_OK; }

/* The best way into a cut vertex from outside the cut. */
typedef struct dyng__offer {
  double dist;
  uint32_t parent, edge, level;
} dyng__offer;

/* A vertex's entry as it was before the update changed it, noted at each
** change (the first note of a vertex holds its entry from before). */
typedef struct dyng__was {
  double dist;
  uint32_t v, parent, edge, seq;
} dyng__was;

/* The notes of the entries an update changed. */
typedef struct dyng__notes {
  dyng__was *a;
  size_t n, cap;
} dyng__notes;

/* Notes vertex x's entry before it changes; DYNG_ENOMEM when the notes
** cannot grow. */
static int dyng__note(dyng__notes *w, const dyng_sssp_tree *t, uint32_t x) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 256;
    if (dyng_resize(&w->a, cap, sizeof *w->a)) return DYNG_ENOMEM;
    w->cap = cap;
  }
  dyng__was *o = &w->a[w->n];
  o->dist = t->dist[x];
  o->v = x;
  o->parent = t->parent[x];
  o->edge = t->parent_edge[x];
  o->seq = (uint32_t)w->n++;
  return DYNG_OK;
}

static int dyng__was_cmp(const void *a, const void *b) {
  const dyng__was *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The number of noted vertices whose entry (dist, parent, edge) differs
** now from what it was before the update.  Sorts the notes. */
static size_t dyng__count_changed(dyng__notes *w, const dyng_sssp_tree *t) {
  if (w->n) qsort(w->a, w->n, sizeof *w->a, dyng__was_cmp);
  size_t n = 0;
  for (size_t i = 0; i < w->n; i++) {
    const dyng__was *o = &w->a[i];
    if (i && w->a[i - 1].v == o->v) continue;
    uint32_t v = o->v;
    /* Distances compare by their bits: +0.0 and -0.0 never occur. */
    n += memcmp(&o->dist, &t->dist[v], sizeof o->dist) != 0 || o->parent != t->parent[v] ||
         o->edge != t->parent_edge[v];
  }
  return n;
}

/* Whether an offer (d, level hx, edge slot e) beats vertex x's entry: the
** tie rule's order (sssp.h) on (dist, level, rowid). */
static inline int dyng__beats(const dyng_graph_view *g, const dyng_sssp_tree *t, uint32_t x, double d,
                              uint32_t hx, uint32_t e) {
  if (d != t->dist[x]) return d < t->dist[x];
  if (hx != t->hops[x]) return hx < t->hops[x];
  return t->parent_edge[x] != DYNG_NONE && dyng__edge_rank(g, e) < dyng__edge_rank(g, t->parent_edge[x]);
}

/* Vertex x takes the offer of tail u through edge slot e; it goes (back)
** into the queue unless only the edge changed (its distance and level, all
** its children see, stay). */
static inline int dyng__take(dyng__tie_queue *q, dyng_sssp_tree *t, uint32_t x, double d, uint32_t hx, uint32_t u,
                             uint32_t e, size_t *n_touched, size_t max_touched, dyng__notes *was) {
  int moved = d != t->dist[x] || hx != t->hops[x];
  if (dyng__note(was, t, x) != DYNG_OK) return DYNG_ENOMEM;
  t->dist[x] = d;
  t->hops[x] = hx;
  t->parent[x] = u;
  t->parent_edge[x] = e;
  if (!moved) return DYNG_OK;
  if (++*n_touched > max_touched) return DYNG_EGAVEUP;
  return dyng__tq_push(q, d, hx, x);
}

/* Weight of in-entry p of vertex-side adjacency `in` (see types.h). */
static inline double dyng__in_weight(const dyng_graph_view *g, int obj, uint32_t p) {
  if (g->in.w[obj]) return g->in.w[obj][p];
  return g->out.w[obj][g->edge_pos_out[g->in.ref[p] >> 1]];
}

/* One function over 80 lines on purpose: its three numbered steps (cut,
** offers, propagate) share the cut marks, the stack and the heap, and the
** give-up count runs across all three; split, each step would take them
** all as arguments. */
int dyng_sssp_update(const dyng_graph_view *g, dyng_sssp_tree *t, const dyng_edge_change *removed,
                     size_t n_removed, const dyng_edge_change *added, size_t n_added,
                     size_t max_touched, size_t *pn_touched) {
  if (!max_touched) max_touched = SIZE_MAX;
  int obj = t->objective, rc;
  if (obj < 0 || obj >= g->n_objectives) return DYNG_EINVAL;
  if (!g->in.nbr) return DYNG_EINVAL; /* a directed graph's in adjacency */
  if ((rc = dyng_sssp_tree_grow(t, g->n_vertices)) != DYNG_OK) return rc;
  const double *w = g->out.w[obj];
  double *dist = t->dist;
  uint32_t *parent = t->parent, *pedge = t->parent_edge, *hops = t->hops;
  const uint32_t *out_off = g->out.off, *out_deg = g->out.deg, *out_nbr = g->out.nbr,
                 *out_ref = g->out.ref;
  dyng__stack cut = {0}, work = {0};
  dyng__tie_queue q;
  memset(&q, 0, sizeof q);
  dyng__notes was = {0};
  size_t n_touched = 0;

  /* 1. Cut the subtrees under removed tree edges (either direction of an
  **    undirected edge).  The removed record names the old edge, so a slot
  **    reused by an added edge is told apart by its endpoints.  A cut vertex
  **    loses its parent at once, so it is found as nobody else's child. */
  for (size_t i = 0; i < n_removed && rc == DYNG_OK; i++) {
    const dyng_edge_change *r = &removed[i];
    for (int side = 0; side < (g->directed ? 1 : 2); side++) {
      uint32_t u = side ? r->dst : r->src, v = side ? r->src : r->dst;
      if (v == t->source || t->parent_edge[v] != r->slot || t->parent[v] != u) continue;
      if ((rc = dyng__note(&was, t, v)) != DYNG_OK) break;
      parent[v] = pedge[v] = DYNG_NONE;
      rc = dyng__push(&work, v);
    }
  }
  while (rc == DYNG_OK && work.n) {
    uint32_t v = work.v[--work.n];
    dist[v] = INFINITY;
    hops[v] = DYNG_NONE;
    if (++n_touched > max_touched) {
      rc = DYNG_EGAVEUP;
      break;
    }
    if ((rc = dyng__push(&cut, v)) != DYNG_OK) break;
    for (uint32_t p = out_off[v], end = out_off[v] + out_deg[v]; p < end; p++) {
      uint32_t x = out_nbr[p];
      if (parent[x] != v || pedge[x] != out_ref[p] >> 1) continue;
      if ((rc = dyng__note(&was, t, x)) != DYNG_OK) break;
      parent[x] = pedge[x] = DYNG_NONE;
      if ((rc = dyng__push(&work, x)) != DYNG_OK) break;
    }
  }

  /* 2. Cut vertices take the best offer of their in-neighbours outside the
  **    cut (all cut vertices are at infinity until every offer is known, so
  **    only the cut's border seeds the heap and its inside is reached once,
  **    by step 3); added edges relax their far end. */
  dyng__offer *offer = NULL;
  if (rc == DYNG_OK && cut.n && !(offer = dyng_malloc(cut.n * sizeof *offer))) rc = DYNG_ENOMEM;
  for (size_t i = 0; i < cut.n && rc == DYNG_OK; i++) {
    uint32_t v = cut.v[i], best_u = DYNG_NONE, best_e = DYNG_NONE, best_h = DYNG_NONE;
    double best = INFINITY;
    for (uint32_t p = g->in.off[v], end = g->in.off[v] + g->in.deg[v]; p < end; p++) {
      uint32_t u = g->in.nbr[p];
      /* Most in-neighbours of a cut vertex are cut too: skip them before
      ** looking the weight up (an indirection through the edge). */
      if (!(dist[u] <= best) || isinf(dist[u])) continue;
      double d = dist[u] + dyng__in_weight(g, obj, p);
      if (d > best) continue;
      uint32_t e = g->in.ref[p] >> 1, hx = dyng__offer_level(dist[u], hops[u], d);
      if (d < best || hx < best_h || (hx == best_h && dyng__edge_rank(g, e) < dyng__edge_rank(g, best_e)))
        best = d, best_u = u, best_e = e, best_h = hx;
    }
    offer[i].dist = best;
    offer[i].parent = best_u;
    offer[i].edge = best_e;
    offer[i].level = best_h;
  }
  for (size_t i = 0; i < cut.n && rc == DYNG_OK; i++) {
    if (offer[i].parent == DYNG_NONE) continue;
    uint32_t v = cut.v[i];
    dist[v] = offer[i].dist;
    hops[v] = offer[i].level;
    parent[v] = offer[i].parent;
    pedge[v] = offer[i].edge;
    rc = dyng__tq_push(&q, dist[v], hops[v], v);
  }
  dyng_free(offer);
  for (size_t i = 0; i < n_added && rc == DYNG_OK; i++) {
    const dyng_edge_change *a = &added[i];
    for (int side = 0; side < (g->directed ? 1 : 2) && rc == DYNG_OK; side++) {
      uint32_t u = side ? a->dst : a->src, v = side ? a->src : a->dst;
      if (isinf(dist[u]) || v == t->source) continue;
      double d = dist[u] + a->w[obj];
      uint32_t hx = dyng__offer_level(dist[u], hops[u], d);
      if (dyng__beats(g, t, v, d, hx, a->slot)) rc = dyng__take(&q, t, v, d, hx, u, a->slot, &n_touched, max_touched, &was);
    }
  }

  /* 3. Propagate: a Dijkstra over the vertices that improved, in the tie
  **    rule's order (sssp_tie.h).  Seeds were pushed with keys that may be
  **    below the queue's last key only if pushed after a pop, which never
  **    happens before this loop. */
  uint32_t u;
  while (rc == DYNG_OK && dyng__tq_pop(&q, dist, hops, &u, &rc)) {
    double du = dist[u];
    uint32_t hu = hops[u];
    for (uint32_t p = out_off[u], end = out_off[u] + out_deg[u]; p < end; p++) {
      uint32_t x = out_nbr[p];
      double nd = du + w[p];
      if (nd > dist[x] || x == t->source) continue;
      uint32_t hx = dyng__offer_level(du, hu, nd), e = out_ref[p] >> 1;
      if (dyng__beats(g, t, x, nd, hx, e) && (rc = dyng__take(&q, t, x, nd, hx, u, e, &n_touched, max_touched, &was)))
        break;
    }
  }
  dyng__tq_free(&q);
  dyng_free(cut.v);
  dyng_free(work.v);
  t->order_stale = 1;
  if (pn_touched) *pn_touched = rc == DYNG_OK ? dyng__count_changed(&was, t) : n_touched;
  dyng_free(was.a);
  return rc;
}

int dyng_sssp_tree_hops(dyng_sssp_tree *t) {
  uint32_t n = t->n_vertices;
  const double *dist = t->dist;
  const uint32_t *parent = t->parent;
  uint32_t *hops = t->hops;
  for (uint32_t v = 0; v < n; v++) hops[v] = DYNG_NONE;
  if (t->source < n) hops[t->source] = 0;
  dyng__stack up = {0};
  /* Each vertex climbs to the nearest ancestor whose level is known, then
  ** the levels come back down that chain: every vertex is stacked once. */
  for (uint32_t v = 0; v < n; v++) {
    if (hops[v] != DYNG_NONE || isinf(dist[v]) || parent[v] == DYNG_NONE) continue;
    uint32_t x = v;
    while (x != DYNG_NONE && hops[x] == DYNG_NONE) {
      int rc = up.n < n ? dyng__push(&up, x) : DYNG_EINVAL; /* a loop: not a tree */
      if (rc != DYNG_OK) {
        dyng_free(up.v);
        return rc;
      }
      x = parent[x] < n ? parent[x] : DYNG_NONE;
    }
    while (up.n) {
      uint32_t y = up.v[--up.n], p = parent[y];
      hops[y] = p >= n || hops[p] == DYNG_NONE ? 0 : dyng__offer_level(dist[p], hops[p], dist[y]);
    }
  }
  dyng_free(up.v);
  return DYNG_OK;
}

/* Sorted by (distance bits, level, vertex): vertices enter in index order
** and the radix sort is stable, so a sort by level and then one by
** distance leaves ties by level and then by index.  The level pass is
** needed only when some vertex has a level above 0 (zero-weight ties); it
** puts a parent before a child of the same distance.  Levels a backend did
** not fill (DYNG_NONE everywhere) order nothing. */
int dyng_sssp_tree_order(dyng_sssp_tree *t) {
  if (!t->order_stale) return DYNG_OK;
  uint32_t n = t->n_vertices, m = 0;
  int by_level = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!isinf(t->dist[v])) {
      m++;
      if (t->hops[v] != 0 && t->hops[v] != DYNG_NONE) by_level = 1;
    }
  uint64_t *key = dyng_malloc((size_t)(m ? m : 1) * 2 * sizeof *key);
  uint32_t *tmp = dyng_malloc((size_t)(m ? m : 1) * sizeof *tmp);
  if (!key || !tmp) {
    dyng_free(key);
    dyng_free(tmp);
    return DYNG_ENOMEM;
  }
  /* The source goes first (other vertices may share its distance 0). */
  uint32_t *order = t->order + 1, i = 0;
  t->order[0] = t->source;
  m--;
  for (uint32_t v = 0; v < n; v++) {
    if (isinf(t->dist[v]) || v == t->source) continue;
    key[i] = by_level ? t->hops[v] : dyng__key(t->dist[v]);
    order[i++] = v;
  }
  uint64_t *k = key, *k_to = key + m;
  uint32_t *o = order, *o_to = tmp;
  int rc = dyng_radix_sort(&k, &k_to, &o, &o_to, m, 0);
  if (rc == DYNG_OK && by_level) {
    for (uint32_t j = 0; j < m; j++) k[j] = dyng__key(t->dist[o[j]]);
    rc = dyng_radix_sort(&k, &k_to, &o, &o_to, m, 0);
  }
  if (rc == DYNG_OK && o != order) memcpy(order, o, (size_t)m * sizeof *order);
  dyng_free(key);
  dyng_free(tmp);
  if (rc != DYNG_OK) return rc;
  t->n_reached = m + 1;
  t->order_stale = 0;
  return DYNG_OK;
}
