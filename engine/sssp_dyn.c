/*
** engine/sssp_dyn.c: updating a shortest-path tree after a batch (see
** dyng_sssp_update in sssp.h), and rebuilding its distance order.
**
** The tree keeps, besides dist/parent/parent_edge, child lists (first
** child, next and previous sibling per vertex) so that cutting the subtree
** under a deleted tree edge costs the size of that subtree.  Every change of
** a parent goes through dyng__set_parent, which keeps the lists right.
*/
#include "engine/sssp.h"
#include "engine/error.h"
#include "engine/radix_heap.h"

#include <math.h>
#include <string.h>

/* Unlinks v from its parent's child list. */
static void dyng__unlink(dyng_sssp_tree *t, uint32_t v) {
  uint32_t p = t->parent[v];
  if (p == DYNG_NONE) return;
  uint32_t prev = t->prev_sibling[v], next = t->next_sibling[v];
  if (prev != DYNG_NONE) t->next_sibling[prev] = next;
  else t->first_child[p] = next;
  if (next != DYNG_NONE) t->prev_sibling[next] = prev;
  t->prev_sibling[v] = t->next_sibling[v] = DYNG_NONE;
}

/* Makes p (possibly DYNG_NONE) the parent of v through edge slot e. */
static void dyng__set_parent(dyng_sssp_tree *t, uint32_t v, uint32_t p, uint32_t e) {
  dyng__unlink(t, v);
  t->parent[v] = p;
  t->parent_edge[v] = e;
  if (p == DYNG_NONE) return;
  uint32_t first = t->first_child[p];
  t->next_sibling[v] = first;
  t->prev_sibling[v] = DYNG_NONE;
  if (first != DYNG_NONE) t->prev_sibling[first] = v;
  t->first_child[p] = v;
}

/* Grows the per-vertex arrays to n vertices (new ones unreached) and builds
** the child lists if the tree has none. */
static int dyng__tree_prepare(dyng_sssp_tree *t, uint32_t n) {
  uint32_t old = t->n_vertices;
  if (n > old) {
    size_t m = n;
    if (dyng_resize(&t->dist, m, sizeof *t->dist) ||
        dyng_resize(&t->parent, m, sizeof *t->parent) ||
        dyng_resize(&t->parent_edge, m, sizeof *t->parent_edge) ||
        dyng_resize(&t->order, m, sizeof *t->order))
      return DYNG_ENOMEM;
    for (uint32_t v = old; v < n; v++) {
      t->dist[v] = INFINITY;
      t->parent[v] = t->parent_edge[v] = DYNG_NONE;
    }
    if (t->first_child) {
      if (dyng_resize(&t->first_child, m, sizeof *t->first_child) ||
          dyng_resize(&t->next_sibling, m, sizeof *t->next_sibling) ||
          dyng_resize(&t->prev_sibling, m, sizeof *t->prev_sibling))
        return DYNG_ENOMEM;
      for (uint32_t v = old; v < n; v++)
        t->first_child[v] = t->next_sibling[v] = t->prev_sibling[v] = DYNG_NONE;
    }
    t->n_vertices = n;
  }
  if (!t->first_child) {
    size_t m = t->n_vertices ? t->n_vertices : 1;
    t->first_child = dyng_malloc(m * sizeof *t->first_child);
    t->next_sibling = dyng_malloc(m * sizeof *t->next_sibling);
    t->prev_sibling = dyng_malloc(m * sizeof *t->prev_sibling);
    if (!t->first_child || !t->next_sibling || !t->prev_sibling) {
      dyng_free(t->first_child);
      dyng_free(t->next_sibling);
      dyng_free(t->prev_sibling);
      t->first_child = t->next_sibling = t->prev_sibling = NULL;
      return DYNG_ENOMEM;
    }
    for (uint32_t v = 0; v < t->n_vertices; v++)
      t->first_child[v] = t->next_sibling[v] = t->prev_sibling[v] = DYNG_NONE;
    for (uint32_t v = 0; v < t->n_vertices; v++) {
      uint32_t p = t->parent[v];
      if (p == DYNG_NONE) continue;
      uint32_t first = t->first_child[p];
      t->next_sibling[v] = first;
      if (first != DYNG_NONE) t->prev_sibling[first] = v;
      t->first_child[p] = v;
    }
  }
  return DYNG_OK;
}

/* A growable stack of vertices. */
typedef struct dyng__stack {
  uint32_t *v;
  size_t n, cap;
} dyng__stack;

static int dyng__push(dyng__stack *s, uint32_t v) {
  if (s->n == s->cap && dyng_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) return DYNG_ENOMEM;
  s->v[s->n++] = v;
  return DYNG_OK;
}

/* Weight of in-entry p of vertex-side adjacency `in` (see types.h). */
static inline double dyng__in_weight(const dyng_graph_view *g, int obj, uint32_t p) {
  if (g->in.w[obj]) return g->in.w[obj][p];
  return g->out.w[obj][g->edge_pos_out[g->in.ref[p] >> 1]];
}

int dyng_sssp_update(const dyng_graph_view *g, dyng_sssp_tree *t, const dyng_edge_change *removed,
                     size_t n_removed, const dyng_edge_change *added, size_t n_added,
                     size_t max_touched, size_t *pn_touched) {
  if (!max_touched) max_touched = SIZE_MAX;
  int obj = t->objective, rc;
  if (obj < 0 || obj >= g->n_objectives) return DYNG_EINVAL;
  if (!g->in.nbr) return DYNG_EINVAL; /* a directed graph's in adjacency */
  if ((rc = dyng__tree_prepare(t, g->n_vertices)) != DYNG_OK) return rc;
  const double *w = g->out.w[obj];
  double *dist = t->dist;
  dyng__stack cut = {0}, work = {0};
  dyng__radix_heap h;
  memset(&h, 0, sizeof h);
  size_t n_touched = 0;

  /* 1. Cut the subtrees under removed tree edges (either direction of an
  **    undirected edge).  The removed record names the old edge, so a slot
  **    reused by an added edge is told apart by its endpoints. */
  for (size_t i = 0; i < n_removed && rc == DYNG_OK; i++) {
    const dyng_edge_change *r = &removed[i];
    for (int side = 0; side < (g->directed ? 1 : 2); side++) {
      uint32_t u = side ? r->dst : r->src, v = side ? r->src : r->dst;
      if (v == t->source || t->parent_edge[v] != r->slot || t->parent[v] != u) continue;
      dyng__set_parent(t, v, DYNG_NONE, DYNG_NONE);
      rc = dyng__push(&work, v);
    }
  }
  while (rc == DYNG_OK && work.n) {
    uint32_t v = work.v[--work.n];
    dist[v] = INFINITY;
    if (++n_touched > max_touched) {
      rc = DYNG_ETOOBIG;
      break;
    }
    if ((rc = dyng__push(&cut, v)) != DYNG_OK) break;
    for (uint32_t c = t->first_child[v]; c != DYNG_NONE;) {
      uint32_t next = t->next_sibling[c];
      t->parent[c] = t->parent_edge[c] = DYNG_NONE;
      t->next_sibling[c] = t->prev_sibling[c] = DYNG_NONE;
      if ((rc = dyng__push(&work, c)) != DYNG_OK) break;
      c = next;
    }
    t->first_child[v] = DYNG_NONE;
  }

  /* 2. Cut vertices take the best offer of their in-neighbours (those
  **    outside the cut, and cut ones already reattached here: any offer is a
  **    real path, and step 3 lowers it if needed); added edges relax their
  **    far end.  Whatever improved seeds the heap. */
  for (size_t i = 0; i < cut.n && rc == DYNG_OK; i++) {
    uint32_t v = cut.v[i], best_u = DYNG_NONE, best_e = DYNG_NONE;
    double best = INFINITY;
    for (uint32_t p = g->in.off[v], end = g->in.off[v] + g->in.deg[v]; p < end; p++) {
      uint32_t u = g->in.nbr[p];
      /* Most in-neighbours of a cut vertex are cut too: skip them before
      ** looking the weight up (an indirection through the edge). */
      if (!(dist[u] < best)) continue;
      double d = dist[u] + dyng__in_weight(g, obj, p);
      if (d < best) best = d, best_u = u, best_e = g->in.ref[p] >> 1;
    }
    if (best_u == DYNG_NONE) continue;
    dist[v] = best;
    dyng__set_parent(t, v, best_u, best_e);
    rc = dyng__heap_push(&h, dyng__key(best), v);
  }
  for (size_t i = 0; i < n_added && rc == DYNG_OK; i++) {
    const dyng_edge_change *a = &added[i];
    for (int side = 0; side < (g->directed ? 1 : 2) && rc == DYNG_OK; side++) {
      uint32_t u = side ? a->dst : a->src, v = side ? a->src : a->dst;
      double d = dist[u] + a->w[obj];
      if (!(d < dist[v])) continue;
      dist[v] = d;
      dyng__set_parent(t, v, u, a->slot);
      if (++n_touched > max_touched) rc = DYNG_ETOOBIG;
      else rc = dyng__heap_push(&h, dyng__key(d), v);
    }
  }

  /* 3. Propagate: a Dijkstra over the vertices that improved.  Seeds were
  **    pushed with keys that may be below the heap's last key only if
  **    pushed after a pop, which never happens before this loop. */
  while (rc == DYNG_OK && h.size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    double du = dist[u];
    if (it.key != dyng__key(du)) continue; /* stale */
    for (uint32_t p = g->out.off[u], end = g->out.off[u] + g->out.deg[u]; p < end; p++) {
      uint32_t x = g->out.nbr[p];
      double nd = du + w[p];
      if (nd < dist[x]) {
        dist[x] = nd;
        dyng__set_parent(t, x, u, g->out.ref[p] >> 1);
        if (++n_touched > max_touched) rc = DYNG_ETOOBIG;
        else rc = dyng__heap_push(&h, dyng__key(nd), x);
        if (rc) break;
      }
    }
  }
  dyng__heap_free(&h);
  dyng_free(cut.v);
  dyng_free(work.v);
  t->order_stale = 1;
  if (pn_touched) *pn_touched = n_touched;
  return rc;
}

int dyng_sssp_tree_order(dyng_sssp_tree *t) {
  if (!t->order_stale) return DYNG_OK;
  uint32_t n = t->n_vertices, m = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!isinf(t->dist[v])) m++;
  /* LSD radix sort of (distance bits, vertex) on 8-bit digits; vertices
  ** enter in index order and each pass is stable, so ties stay by index. */
  uint64_t *key = dyng_malloc((size_t)(m ? m : 1) * 2 * sizeof *key);
  uint32_t *tmp = dyng_malloc((size_t)(m ? m : 1) * sizeof *tmp);
  if (!key || !tmp) {
    dyng_free(key);
    dyng_free(tmp);
    return DYNG_ENOMEM;
  }
  uint64_t *key2 = key + m;
  /* The source goes first (other vertices may share its distance 0). */
  uint32_t *order = t->order + 1, i = 0;
  t->order[0] = t->source;
  m--;
  for (uint32_t v = 0; v < n; v++) {
    if (isinf(t->dist[v]) || v == t->source) continue;
    key[i] = dyng__key(t->dist[v]);
    order[i++] = v;
  }
  for (int shift = 0; shift < 64 && m; shift += 8) {
    size_t count[257] = {0};
    for (uint32_t j = 0; j < m; j++) count[((key[j] >> shift) & 0xff) + 1]++;
    if (count[((key[0] >> shift) & 0xff) + 1] == m) continue; /* one digit: skip */
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (uint32_t j = 0; j < m; j++) {
      size_t at = count[(key[j] >> shift) & 0xff]++;
      key2[at] = key[j];
      tmp[at] = order[j];
    }
    memcpy(key, key2, (size_t)m * sizeof *key);
    memcpy(order, tmp, (size_t)m * sizeof *order);
  }
  dyng_free(key);
  dyng_free(tmp);
  t->n_reached = m + 1;
  t->order_stale = 0;
  return DYNG_OK;
}
