/*
** engine/pareto.h: the exact Pareto front of multi-objective path costs.
**
** Multi-objective label setting (Martins 1984): a label is a path to a
** vertex with its cost in every objective.  Labels leave a priority queue in
** lexicographic order of their costs, so a label leaving it cannot be
** dominated by one that leaves later; it becomes permanent unless a
** permanent label of its vertex (or of the target) dominates or equals it,
** and extends along every out-edge.  The target's permanent labels are the
** front: one path per distinct non-dominated cost vector.  Where several
** paths share a cost vector, the one kept follows the tie rule of
** engine/sssp.h on cost vectors (smallest rowid among the edges from a
** strictly cheaper label, else fewest steps that add nothing, then smallest
** rowid), so the front is a function of the graph's edges (their ends,
** weights and rowids) alone, whatever the order of its adjacency.  The
** number of labels can grow exponentially with the graph, so it is bounded.
*/
#ifndef DYNG_PARETO_H
#define DYNG_PARETO_H

#include <stddef.h>

#include "engine/alloc.h"
#include "engine/types.h"

/* The front: n_paths paths, each a run of path_len[i] vertices starting at
** path_start[i] in vertex[] (source first), with edge[] the slot from each
** vertex to the next (one fewer per path; edge[path_start[i] + j] leads
** from vertex j of the path to vertex j + 1; the last entry of each run is
** DYNG_NONE) and cost[i * k + j] the path's cost in objective j.  Paths are
** in lexicographic order of their costs. */
typedef struct dyng_front {
  uint32_t n_paths;
  int k;
  uint32_t *path_start;
  uint32_t *path_len;
  uint32_t *vertex;
  uint32_t *edge;
  double *cost;
} dyng_front;

void dyng_front_free(dyng_front *f); /* accepts a zeroed front */

/* The Pareto front of paths from `source` to `target` in objectives
** 0 .. g->n_objectives - 1.  At most max_labels labels are made permanent:
** DYNG_EGAVEUP when that is not enough (no partial front is returned).
** An unreachable target gives a front of no paths.  DYNG_EINVAL for
** vertices out of range; DYNG_ENOMEM; DYNG_EINTERRUPTED when g->cancel
** asked to stop. */
int dyng_pareto_front(const dyng_graph_view *g, uint32_t source, uint32_t target,
                      size_t max_labels, dyng_front *out) DYNG_WARN_UNUSED;

#endif /* DYNG_PARETO_H */
