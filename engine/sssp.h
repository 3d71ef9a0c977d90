/*
** engine/sssp.h: single-source shortest paths on the CPU, from scratch.
**
** dyng_sssp_dijkstra is Dijkstra's algorithm with a radix heap: weights are
** non-negative doubles, whose IEEE-754 bit patterns order like unsigned
** integers, so a monotone radix heap over those 64-bit keys gives
** O(E + V log C) work with cheap, cache-friendly operations.  Stale heap
** entries are skipped instead of decreased.
*/
#ifndef DYNG_SSSP_H
#define DYNG_SSSP_H

#include "engine/alloc.h"
#include "engine/types.h"

/* Allocates the arrays of a tree for `n_vertices` vertices.  The tree owns
** them; dyng_sssp_tree_free releases them (and accepts a zeroed tree). */
int dyng_sssp_tree_init(dyng_sssp_tree *t, uint32_t n_vertices) DYNG_WARN_UNUSED;
void dyng_sssp_tree_free(dyng_sssp_tree *t);

/* Grows a tree's per-vertex arrays to n vertices (the new ones unreached);
** nothing when it has that many.  DYNG_ENOMEM leaves it as it was. */
int dyng_sssp_tree_grow(dyng_sssp_tree *t, uint32_t n) DYNG_WARN_UNUSED;

/* Computes the shortest-path tree from vertex `source` in objective
** `objective` of the graph `g` into `t` (initialized for at least
** g->n_vertices).  When `target` is not DYNG_NONE the search stops once the
** target's distance is final: vertices not yet settled then keep their
** tentative values and are not listed in order[].  DYNG_EINVAL for a source
** or objective out of range; DYNG_ENOMEM; DYNG_EINTERRUPTED when g->cancel
** asked to stop (the tree is then incomplete). */
int dyng_sssp_dijkstra(const dyng_graph_view *g, uint32_t source, int objective,
                       uint32_t target, dyng_sssp_tree *t);

/* Brings tree `t` (computed on the graph before a batch) up to date with
** the graph `g` after it, given what the batch removed and added:
**
**   1. a removed edge that was a tree edge cuts its subtree: every vertex
**      in it gets distance infinity (its children are the out-neighbours
**      whose parent edge leads from it);
**   2. each cut vertex takes the best offer of its in-neighbours outside
**      the cut, and each added edge relaxes its far end;
**   3. a Dijkstra from the vertices that improved propagates until no
**      distance changes.
**
** This is the dynamic SSSP template of Khanda et al. (IEEE TPDS 2022) with
** a priority queue, so every vertex settles once.  Works for directed
** graphs (their in adjacency must be built) and undirected ones, weight
** increases and decreases (a replaced edge) and parallel edges.  The
** result equals a computation from scratch; order[] becomes stale.
** *pn_touched (may be NULL) gets the number of times a vertex's entry was
** reset or improved.  With max_touched > 0 the update gives up once that
** count passes it, returning DYNG_ETOOBIG: when a batch moves most of a
** tree (deep trees of road networks), recomputing is cheaper.  DYNG_EINVAL
** when a directed graph's in adjacency is missing; after DYNG_ETOOBIG or
** DYNG_ENOMEM the tree must be recomputed. */
int dyng_sssp_update(const dyng_graph_view *g, dyng_sssp_tree *t, const dyng_edge_change *removed,
                     size_t n_removed, const dyng_edge_change *added, size_t n_added,
                     size_t max_touched, size_t *pn_touched);

/* Rebuilds order[] and n_reached when stale: reached vertices by
** non-decreasing distance (ties by vertex index, the source first). */
int dyng_sssp_tree_order(dyng_sssp_tree *t);

#endif /* DYNG_SSSP_H */
