/*
** engine/sssp.h: single-source shortest paths on the CPU, from scratch.
**
** dyng_sssp_dijkstra is Dijkstra's algorithm with a radix heap: weights are
** non-negative doubles, whose IEEE-754 bit patterns order like unsigned
** integers, so a monotone radix heap over those 64-bit keys gives
** O(E + V log C) work with cheap, cache-friendly operations.  Stale heap
** entries are skipped instead of decreased.
**
** The tie rule.  A tree keeps, for every reached vertex v but the source,
** one parent edge among v's tight in-edges (u -> v with dist[u] + w ==
** dist[v], the sum rounded as every search rounds it):
**
**   - when some tight in-edge comes from a tail strictly closer to the
**     source (dist[u] < dist[v]), the one of those with the smallest rowid;
**     v's level (hops[v]) is then 0;
**   - otherwise (v is reached only along edges that add nothing to the
**     distance: zero weights, or weights lost to rounding), among the tight
**     in-edges whose tail has the smallest level, the one with the smallest
**     rowid; v's level is one more than that tail's.
**
** The source has level 0 and no parent.  Put another way, every vertex
** takes the smallest (dist, level, rowid) its in-edges offer, where an edge
** offers (dist[u] + w, 0 if that is more than dist[u] else level[u] + 1,
** its rowid); the offer only grows along an edge, so the searches below
** find it by ordering on (dist, level), and levels strictly grow along a
** chain of equal distances, so the parents form a tree even through
** zero-weight cycles.  Rowids name edges the same way whatever the history
** of the graph (edge slots and vertex indices do not), so the tree is a
** function of the table's rows alone: the same on every backend, with any
** number of threads, from scratch or after any sequence of batches.
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
** tentative values and are not listed in order[].  Parents follow the tie
** rule above (rowids from g->edge_rowid; a view without them ranks edges by
** slot).  DYNG_EINVAL for a source
** or objective out of range; DYNG_ENOMEM; DYNG_EINTERRUPTED when g->cancel
** asked to stop (the tree is then incomplete). */
int dyng_sssp_dijkstra(const dyng_graph_view *g, uint32_t source, int objective,
                       uint32_t target, dyng_sssp_tree *t);

/* The tree of dyng_sssp_dijkstra (no target), the same bit for bit,
** computed on dyng_threads() threads: delta-stepping for the distances,
** then the tie rule's parents in parallel passes, with a parallel level
** search where ties need levels (engine/sssp_par.c).  It pays from some
** hundred thousand vertices on (dyng_sssp_parallel_pays).  order[] is left
** stale (order_stale set; dyng_sssp_tree_order builds it).  DYNG_EINVAL,
** DYNG_ENOMEM, DYNG_EINTERRUPTED as there. */
int dyng_sssp_parallel(const dyng_graph_view *g, uint32_t source, int objective, dyng_sssp_tree *t);

/* Whether dyng_sssp_parallel is worth it on g now: more than one thread
** and at least DYNG_PARALLEL_SSSP_MIN vertices (the environment's, read
** once; default 100000). */
int dyng_sssp_parallel_pays(const dyng_graph_view *g);

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
** a priority queue ordered by (dist, level), so every vertex settles once
** (sssp_tie.h).
** Every offer is weighed by (dist, level, rowid), so the parents it leaves
** are those of the tie rule, as from scratch.  Works for directed
** graphs (their in adjacency must be built) and undirected ones, weight
** increases and decreases (a replaced edge) and parallel edges.  The
** result equals a computation from scratch, parents included; order[]
** becomes stale.
** *pn_touched (may be NULL) gets the number of vertices whose entry (dist,
** parent, parent_edge) differs from what it was before.  With max_touched
** > 0 the update gives up once the number of times a vertex's entry was
** reset or improved passes it, returning DYNG_EGAVEUP: when a batch moves most of a
** tree (deep trees of road networks), recomputing is cheaper.  DYNG_EINVAL
** when a directed graph's in adjacency is missing; after DYNG_EGAVEUP or
** DYNG_ENOMEM the tree must be recomputed. */
int dyng_sssp_update(const dyng_graph_view *g, dyng_sssp_tree *t, const dyng_edge_change *removed,
                     size_t n_removed, const dyng_edge_change *added, size_t n_added,
                     size_t max_touched, size_t *pn_touched);

/* Fills t->hops[] from t's parents (for a tree another backend computed,
** whose hops[] it does not keep): the level of the tie rule along each
** tree path.  DYNG_ENOMEM; DYNG_EINVAL when the parents loop. */
int dyng_sssp_tree_hops(dyng_sssp_tree *t) DYNG_WARN_UNUSED;

/* Rebuilds order[] and n_reached when stale: reached vertices by
** non-decreasing distance (ties by vertex index, the source first). */
int dyng_sssp_tree_order(dyng_sssp_tree *t);

#endif /* DYNG_SSSP_H */
