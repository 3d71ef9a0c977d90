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
** smaller level, or an equal level and a smaller rowid.  Vertices are taken
** by distance, then level (see sssp_tie.h for why), so each is taken once,
** its level and parent final, and order[] lists them in that order
** (parents before their children).  Here that costs little: the heap's
** entries at the distance being taken (its bucket 0) all have level 0, and
** an offer at that same distance (a zero weight) goes to the end of a
** first-in first-out list of levels 1, 2, ..., taken once bucket 0 is
** empty.  A search toward a target stops when the target is taken; the
** vertices before it are final. */
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
  int rc = DYNG_OK;

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
  dyng__level_fifo same;
  memset(&same, 0, sizeof same);

  dist[source] = 0.0;
  hops[source] = 0;
  rc = dyng__heap_push(&h, dyng__key(0.0), source);
  while (rc == DYNG_OK) {
    uint32_t u;
    if (h.b[0].n || same.at == same.n) {
      if (!h.size) break;
      dyng__item it;
      if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
      u = it.vertex;
      if (it.key != dyng__key(dist[u])) continue; /* stale */
      if (same.at == same.n) same.n = same.at = 0; /* all taken: room again */
    } else {
      uint64_t e = same.v[same.at++];
      u = (uint32_t)e;
      if (hops[u] != (uint32_t)(e >> 32)) continue; /* stale */
    }
    if (dyng_poll_stop(g->cancel, &tick, 4095)) {
      rc = DYNG_EINTERRUPTED;
      break;
    }
    if (n_reached < n) order[n_reached++] = u;
    if (u == target) break;
    double du = dist[u];
    uint32_t hu = hops[u];
    uint32_t begin = off[u], end = off[u] + deg[u];
    for (uint32_t p = begin; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      if (nd > dist[x]) continue;
      uint32_t hx = dyng__offer_level(du, hu, nd);
      if (nd < dist[x] || hx < hops[x]) {
        dist[x] = nd;
        hops[x] = hx;
        pedge[x] = p; /* the entry; its edge and parent are found below */
        rc = nd == du ? dyng__fifo_push(&same, hx, x) : dyng__heap_push(&h, dyng__key(nd), x);
        if (rc) break;
      } else if (hx == hops[x] && x != source &&
                 dyng__edge_rank(g, ref[p] >> 1) < dyng__edge_rank(g, ref[pedge[x]] >> 1)) {
        pedge[x] = p;
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
  t->order_stale = 0;
  dyng__heap_free(&h);
  dyng_free(same.v);
  return rc;
}
