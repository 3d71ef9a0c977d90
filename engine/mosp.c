/*
** engine/mosp.c: the ensemble path of the MOSP heuristic (see mosp.h).
**
** How it works: lay the ensemble graph out as a CSR with one entry per
** distinct tree edge, keyed (parent, child, slot); the trees that contain
** it are those whose parent edge of the child is that slot (so the two
** directions of an undirected edge count apart).  Run Dijkstra on it from
** the source (at most K entries per vertex, weights 1..K) and walk back
** from the target.
*/
#include "engine/mosp.h"
#include "engine/error.h"
#include "engine/radix_heap.h"

#include <math.h>
#include <string.h>

void dyng_path_free(dyng_path *p) {
  dyng_free(p->vertex);
  dyng_free(p->edge);
  memset(p, 0, sizeof *p);
}

int dyng_mosp_path(const dyng_sssp_tree *const *trees, int k, uint32_t n_vertices,
                   uint32_t n_edge_slots, uint32_t source, uint32_t target, dyng_path *out) {
  memset(out, 0, sizeof *out);
  if (k < 1 || source >= n_vertices || target >= n_vertices) return DYNG_EINVAL;
  for (int i = 0; i < k; i++)
    if (trees[i]->source != source || trees[i]->n_vertices < n_vertices) return DYNG_EINVAL;
  int rc = DYNG_ENOMEM;
  uint32_t *off = dyng_calloc((size_t)n_vertices + 1, sizeof *off);
  uint32_t *nbr = dyng_malloc((size_t)k * n_vertices * sizeof *nbr + 1);
  uint32_t *slot = dyng_malloc((size_t)k * n_vertices * sizeof *slot + 1);
  uint8_t *cost = dyng_malloc((size_t)k * n_vertices + 1); /* per entry: K + 1 - trees */
  double *dist = dyng_malloc((size_t)n_vertices * sizeof *dist);
  uint32_t *via = dyng_malloc((size_t)n_vertices * sizeof *via);   /* entry into v */
  uint32_t *from = dyng_malloc((size_t)n_vertices * sizeof *from); /* its tail */
  dyng__radix_heap h;
  memset(&h, 0, sizeof h);
  if (!off || !nbr || !slot || !cost || !dist || !via || !from) goto done;

  /* CSR of the ensemble, keyed by the tail (the tree parent); an edge shared
  ** by several trees appears once, at the first tree that has it. */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < k; i++)
      for (uint32_t v = 0; v < n_vertices; v++) {
        uint32_t e = trees[i]->parent_edge[v];
        if (e == DYNG_NONE || e >= n_edge_slots) continue;
        int first = 1, n_trees = 1;
        for (int j = 0; j < k; j++) {
          if (j == i || trees[j]->parent_edge[v] != e) continue;
          if (j < i) first = 0;
          n_trees++;
        }
        if (!first) continue;
        if (pass == 0) {
          off[trees[i]->parent[v] + 1]++;
        } else {
          uint32_t p = off[trees[i]->parent[v]]++;
          nbr[p] = v;
          slot[p] = e;
          cost[p] = (uint8_t)(k + 1 - n_trees);
        }
      }
    if (pass == 0)
      for (uint32_t v = 0; v < n_vertices; v++) off[v + 1] += off[v];
  }
  /* off[] now holds segment ends; shift back to starts. */
  for (uint32_t v = n_vertices; v > 0; v--) off[v] = off[v - 1];
  off[0] = 0;

  for (uint32_t v = 0; v < n_vertices; v++) dist[v] = INFINITY, via[v] = from[v] = DYNG_NONE;
  dist[source] = 0.0;
  rc = dyng__heap_push(&h, dyng__key(0.0), source);
  while (rc == DYNG_OK && h.size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    double du = dist[u];
    if (it.key != dyng__key(du)) continue;
    if (u == target) break;
    for (uint32_t p = off[u]; p < off[u + 1]; p++) {
      uint32_t x = nbr[p];
      double nd = du + (double)cost[p];
      if (nd < dist[x]) {
        dist[x] = nd;
        via[x] = slot[p];
        from[x] = u;
        if ((rc = dyng__heap_push(&h, dyng__key(nd), x)) != DYNG_OK) break;
      }
    }
  }
  if (rc != DYNG_OK || isinf(dist[target])) goto done;

  uint32_t n = 1;
  for (uint32_t v = target; v != source; v = from[v]) n++;
  out->vertex = dyng_malloc((size_t)n * sizeof *out->vertex);
  out->edge = dyng_malloc((size_t)n * sizeof *out->edge);
  if (!out->vertex || !out->edge) {
    dyng_path_free(out);
    rc = DYNG_ENOMEM;
    goto done;
  }
  out->n = n;
  out->ensemble_cost = dist[target];
  uint32_t i = n - 1;
  for (uint32_t v = target;; v = from[v]) {
    out->vertex[i] = v;
    if (v == source) break;
    out->edge[i - 1] = via[v];
    i--;
  }
done:
  dyng__heap_free(&h);
  dyng_free(off);
  dyng_free(nbr);
  dyng_free(slot);
  dyng_free(cost);
  dyng_free(dist);
  dyng_free(via);
  dyng_free(from);
  return rc;
}
