/*
** engine/sssp.c: shortest-path trees from scratch: Dijkstra with the
** monotone radix heap of radix_heap.h (see sssp.h).
*/
#include "engine/sssp.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/radix_heap.h"
#include "engine/sssp_tie.h"

#include <math.h>
#include <string.h>

int dyng_sssp_tree_init(dyng_sssp_tree *t, uint32_t n) {
  memset(t, 0, sizeof *t);
  t->dist = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->dist);
  t->parent = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->parent);
  t->parent_edge = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->parent_edge);
  t->order = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->order);
  t->hops = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->hops);
  if (!t->dist || !t->parent || !t->parent_edge || !t->order || !t->hops) {
    dyng_sssp_tree_free(t);
    return DYNG_ENOMEM;
  }
  /* Unknown until a CPU search fills them (a device backend never does). */
  for (uint32_t v = 0; v < n; v++) t->hops[v] = DYNG_NONE;
  t->n_vertices = n;
  return DYNG_OK;
}

void dyng_sssp_tree_free(dyng_sssp_tree *t) {
  dyng_free(t->dist);
  dyng_free(t->parent);
  dyng_free(t->parent_edge);
  dyng_free(t->order);
  dyng_free(t->hops);
  memset(t, 0, sizeof *t);
}

/* Ties (see the rule in sssp.h): an offer equal in distance wins with a
** smaller level, or an equal level and a smaller rowid.  A vertex whose
** level drops at its own distance (a zero-weight edge from a vertex of the
** same distance) may have been settled already: it is pushed again and
** settles again, so order[], which lists it twice, is rebuilt at the end
** (by distance, then level: parents still come before their children); so
** it is when a settled vertex takes a parent of its own distance.
** Positive weights never do that.  A search toward a target stops before
** every tie is known, so it leaves equal distances to the first offer
** among tails of that same distance (ties among strictly closer tails are
** still broken by rowid), and lists every vertex once. */
int dyng_sssp_dijkstra(const dyng_graph_view *g, uint32_t source, int objective,
                       uint32_t target, dyng_sssp_tree *t) {
  uint32_t n = g->n_vertices;
  if (source >= n || objective < 0 || objective >= g->n_objectives) return DYNG_EINVAL;
  if (t->n_vertices < n) return DYNG_EINVAL;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr, *ref = g->out.ref;
  const double *w = g->out.w[objective];
  double *dist = t->dist;
  uint32_t *parent = t->parent, *pedge = t->parent_edge, *order = t->order, *hops = t->hops;
  uint32_t n_reached = 0, tick = 0;
  int rc = DYNG_OK, settled_again = 0, all_ties = target == DYNG_NONE;

  for (uint32_t v = 0; v < n; v++) {
    dist[v] = INFINITY;
    parent[v] = DYNG_NONE;
    pedge[v] = DYNG_NONE;
    hops[v] = DYNG_NONE;
  }
  t->source = source;
  t->objective = objective;

  dyng__radix_heap h;
  memset(&h, 0, sizeof h);

  dist[source] = 0.0;
  hops[source] = 0;
  rc = dyng__heap_push(&h, dyng__key(0.0), source);
  while (rc == DYNG_OK && h.size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    /* Keys of a vertex's entries do not grow (a push needs a shorter
    ** distance, or the same one at a smaller level), so the entries whose
    ** key is dist[u] are current and every other is stale. */
    double du = dist[u];
    if (it.key != dyng__key(du)) continue;
    if (dyng_poll_stop(g->cancel, &tick, 4095)) {
      rc = DYNG_EINTERRUPTED;
      break;
    }
    if (n_reached < n) order[n_reached++] = u;
    if (u == target) break;
    uint32_t hu = hops[u];
    uint32_t begin = off[u], end = off[u] + deg[u];
    for (uint32_t p = begin; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      if (nd > dist[x]) continue;
      uint32_t hx = dyng__offer_level(du, hu, nd);
      if (nd < dist[x]) {
        dist[x] = nd;
        hops[x] = hx;
        pedge[x] = p; /* the entry; its edge and parent are found below */
        rc = dyng__heap_push(&h, dyng__key(nd), x);
        if (rc) break;
      } else if (!all_ties && nd == du) {
        continue; /* see above */
      } else if (hx < hops[x]) {
        hops[x] = hx;
        pedge[x] = p;
        if (nd == du) { /* x may be settled: settle it again */
          settled_again = 1;
          if ((rc = dyng__heap_push(&h, dyng__key(nd), x)) != DYNG_OK) break;
        }
      } else if (hx == hops[x] && x != source &&
                 dyng__edge_rank(g, ref[p] >> 1) < dyng__edge_rank(g, ref[pedge[x]] >> 1)) {
        pedge[x] = p;
        if (nd == du) settled_again = 1; /* x may be listed before its new parent */
      }
    }
  }
  /* The search records one word per improvement, the adjacency entry it
  ** came through; here each entry becomes its edge slot and the vertex that
  ** owns the entry (the edge's source for side 0, its destination for side
  ** 1) becomes the parent.  One sequential pass whose lookups do not depend
  ** on each other costs less than a second random write per improvement. */
  const uint32_t *esrc = g->edge_src, *edst = g->edge_dst;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t p = pedge[v];
    if (p == DYNG_NONE) continue;
    uint32_t r = ref[p], s = r >> 1;
    pedge[v] = s;
    parent[v] = (r & 1u) ? edst[s] : esrc[s];
  }
  t->n_reached = n_reached;
  t->order_stale = settled_again;
  dyng__heap_free(&h);
  if (rc == DYNG_OK && settled_again) rc = dyng_sssp_tree_order(t);
  return rc;
}
