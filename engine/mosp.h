/*
** engine/mosp.h: the multi-objective shortest path heuristic of Shovan,
** Khanda, Das et al. (2023).
**
** Given one shortest-path tree per objective from the same source, the
** ensemble graph holds every edge that is in at least one tree, weighted
** K + 1 - (number of trees that contain it): an edge all K trees agree on
** costs 1, one tree's edge costs K.  The path is a shortest path of the
** ensemble graph from the source to the target; it is a real path of the
** graph, good in every objective at once, and its cost in each objective is
** what the caller reports.
*/
#ifndef DYNG_MOSP_H
#define DYNG_MOSP_H

#include <stddef.h>

#include "engine/alloc.h"
#include "engine/types.h"

/* A path: vertices path_vertex[0] = source .. path_vertex[n - 1] = target,
** and path_edge[i] the edge slot from vertex i to vertex i + 1. */
typedef struct dyng_path {
  uint32_t n;            /* vertices on the path (0: unreachable) */
  uint32_t *vertex;
  uint32_t *edge;        /* n - 1 entries */
  double ensemble_cost;  /* its cost in the ensemble graph */
} dyng_path;

void dyng_path_free(dyng_path *p); /* accepts a zeroed path */

/* The ensemble path from trees[0..k-1] (each from `source`, over the same
** graph of n_vertices vertices and n_edge_slots edge slots, whose rowids
** edge_rowid names per slot) to `target`; among equally cheap ways into a
** vertex it takes the edge of smallest rowid (of smallest slot when
** edge_rowid is NULL).
** *out is filled (new arrays, free with dyng_path_free); out->n is 0 when
** no tree reaches the target.  DYNG_EINVAL for mismatched trees;
** DYNG_ENOMEM. */
int dyng_mosp_path(const dyng_sssp_tree *const *trees, int k, uint32_t n_vertices,
                   uint32_t n_edge_slots, const int64_t *edge_rowid, uint32_t source, uint32_t target,
                   dyng_path *out) DYNG_WARN_UNUSED;

#endif /* DYNG_MOSP_H */
