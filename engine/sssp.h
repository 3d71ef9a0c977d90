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

/* Computes the shortest-path tree from vertex `source` in objective
** `objective` of the graph `g` into `t` (initialized for at least
** g->n_vertices).  When `target` is not DYNG_NONE the search stops once the
** target's distance is final: vertices not yet settled then keep their
** tentative values and are not listed in order[].  DYNG_EINVAL for a source
** or objective out of range; DYNG_ENOMEM. */
int dyng_sssp_dijkstra(const dyng_graph_view *g, uint32_t source, int objective,
                       uint32_t target, dyng_sssp_tree *t);

#endif /* DYNG_SSSP_H */
