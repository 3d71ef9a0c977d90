/*
** engine/mosp.c: the ensemble path of the MOSP heuristic (see mosp.h).
**
** How it works: lay the ensemble graph out as a CSR with one entry per
** distinct tree edge, keyed (parent, child, slot); the trees that contain
** it are those whose parent edge of the child is that slot (so the two
** directions of an undirected edge count apart).  Present it as a graph
** view (each entry its own edge), run the engine's Dijkstra on it from the
** source to the target, and walk back.
**
** Ties: ensemble weights are small integers, so a vertex often has several
** tight in-entries.  Which one the Dijkstra records depends on the order
** its heap pops equal keys; the walk back instead takes, at every vertex,
** the tight in-entry whose edge has the smallest rowid.  The path is then
** a function of the trees and the rowids alone (not of edge slots or
** vertex indices, which depend on the graph's history), and a backend
** that searches the same ensemble another way finds the same one.
*/
#include "engine/mosp.h"
#include "engine/error.h"
#include "engine/sssp.h"

#include <math.h>
#include <string.h>

void dyng_path_free(dyng_path *p) {
  dyng_free(p->vertex);
  dyng_free(p->edge);
  memset(p, 0, sizeof *p);
}

/* One function over 80 lines on purpose: building the ensemble's CSR,
** the search over it and the walk back share the same arrays and their
** single cleanup; it reads as the steps its comments name. */
int dyng_mosp_path(const dyng_sssp_tree *const *trees, int k, uint32_t n_vertices,
                   uint32_t n_edge_slots, const int64_t *edge_rowid, uint32_t source, uint32_t target,
                   dyng_path *out) {
  memset(out, 0, sizeof *out);
  if (k < 1 || source >= n_vertices || target >= n_vertices) return DYNG_EINVAL;
  for (int i = 0; i < k; i++)
    if (trees[i]->source != source || trees[i]->n_vertices < n_vertices) return DYNG_EINVAL;
  int rc = DYNG_ENOMEM;
  uint32_t *off = dyng_calloc((size_t)n_vertices + 1, sizeof *off);
  uint32_t *nbr = dyng_malloc((size_t)k * n_vertices * sizeof *nbr + 1);
  size_t cap = (size_t)k * n_vertices + 1;
  uint32_t *slot = dyng_malloc(cap * sizeof *slot);  /* per entry: the graph's edge */
  double *cost = dyng_malloc(cap * sizeof *cost);    /* per entry: K + 1 - trees */
  uint32_t *tail = dyng_malloc(cap * sizeof *tail);  /* per entry: its tree parent */
  uint32_t *ref = dyng_malloc(cap * sizeof *ref);    /* per entry: itself, as an edge */
  uint32_t *deg = dyng_malloc(((size_t)n_vertices + 1) * sizeof *deg);
  uint32_t *at = dyng_malloc(cap * sizeof *at);      /* per (tree, vertex): the entry of its parent edge */
  dyng_sssp_tree t;
  memset(&t, 0, sizeof t);
  if (!off || !nbr || !slot || !cost || !tail || !ref || !deg || !at) goto done;

  /* CSR of the ensemble, keyed by the tail (the tree parent); an edge shared
  ** by several trees appears once, at the first tree that has it. */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < k; i++)
      for (uint32_t v = 0; v < n_vertices; v++) {
        uint32_t e = trees[i]->parent_edge[v];
        at[(size_t)i * n_vertices + v] = DYNG_NONE;
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
          cost[p] = (double)(k + 1 - n_trees);
          tail[p] = trees[i]->parent[v];
          ref[p] = p << 1;
          at[(size_t)i * n_vertices + v] = p;
        }
      }
    if (pass == 0)
      for (uint32_t v = 0; v < n_vertices; v++) off[v + 1] += off[v];
  }
  /* off[] now holds segment ends; shift back to starts. */
  for (uint32_t v = n_vertices; v > 0; v--) off[v] = off[v - 1];
  off[0] = 0;

  for (uint32_t v = 0; v < n_vertices; v++) deg[v] = off[v + 1] - off[v];
  dyng_graph_view ens;
  memset(&ens, 0, sizeof ens);
  ens.n_vertices = n_vertices;
  ens.n_edge_slots = off[n_vertices];
  ens.n_objectives = 1;
  ens.directed = 1;
  ens.out.off = off;
  ens.out.deg = deg;
  ens.out.nbr = nbr;
  ens.out.ref = ref;
  ens.out.w[0] = cost;
  ens.edge_src = tail;
  ens.edge_dst = nbr;
  if ((rc = dyng_sssp_tree_init(&t, n_vertices)) != DYNG_OK) goto done;
  if ((rc = dyng_sssp_dijkstra(&ens, source, 0, target, &t)) != DYNG_OK) goto done;
  if (isinf(t.dist[target])) goto done;

  /* Every vertex of the path gets the tight in-entry whose edge has the
  ** smallest rowid.  Its in-entries are its parent edges in the trees
  ** (at[]), each edge once; a tight one leads from a vertex strictly closer
  ** (weights are at least 1), which the search settled before it stopped at
  ** the target, so the distances compared here are final. */
  uint32_t n = 1;
  for (uint32_t v = target; v != source; v = tail[t.parent_edge[v]]) {
    uint32_t best = DYNG_NONE;
    for (int i = 0; i < k; i++) {
      uint32_t p = at[(size_t)i * n_vertices + v];
      if (p == DYNG_NONE || tail[p] == v || t.dist[tail[p]] + cost[p] != t.dist[v]) continue;
      if (best == DYNG_NONE || (edge_rowid ? edge_rowid[slot[p]] < edge_rowid[slot[best]] : slot[p] < slot[best]))
        best = p;
    }
    t.parent_edge[v] = best; /* an entry, as the search left it */
    n++;
  }
  out->vertex = dyng_malloc((size_t)n * sizeof *out->vertex);
  out->edge = dyng_malloc((size_t)n * sizeof *out->edge);
  if (!out->vertex || !out->edge) {
    dyng_path_free(out);
    rc = DYNG_ENOMEM;
    goto done;
  }
  out->n = n;
  out->ensemble_cost = t.dist[target];
  uint32_t i = n - 1;
  for (uint32_t v = target;; v = tail[t.parent_edge[v]]) {
    out->vertex[i] = v;
    if (v == source) break;
    out->edge[i - 1] = slot[t.parent_edge[v]];
    i--;
  }
done:
  dyng_sssp_tree_free(&t);
  dyng_free(off);
  dyng_free(nbr);
  dyng_free(slot);
  dyng_free(cost);
  dyng_free(tail);
  dyng_free(ref);
  dyng_free(deg);
  dyng_free(at);
  return rc;
}
