/*
** engine/cycles.h: counting the simple cycles of length k (3 <= k <= 10).
**
** Serves dyng_cycle_count(graph, k[, 'directed']): the number of simple
** cycles of exactly k edges, each cycle counted once.
**
**   - undirected (the default): the graph seen as undirected and simple.
**     Parallel edges and self-loops are ignored, and in a directed graph
**     u - v is one edge when u->v, v->u or both exist.
**   - directed: directed simple cycles v1->v2->...->vk->v1, once each (not
**     once per starting vertex).  Parallel arcs and self-loops are ignored;
**     an antiparallel pair u->v, v->u is a 2-cycle and never counted (k >= 3).
**     An undirected graph's edge is an arc each way, so there every
**     undirected cycle is two directed ones.
**
** How it works, from scratch (dyng_cycles_count): the view is first turned
** into a simple snapshot, sorted deduplicated neighbour lists of the
** underlying undirected graph whose entries also say which of u->v and
** v->u exist, with vertices relabelled by non-increasing degree (two
** counting sorts, O(V + E)).  Then:
**   k = 3  each triangle found once from its lowest-degree vertex, edges
**          oriented toward higher degree: O(E^1.5) (O(E * arboricity)).
**   k = 4  wedges u-v-w with u the highest-degree vertex of the cycle,
**          counted per opposite vertex w (Chiba-Nishizeki): O(E^1.5).
**   k >= 5 a DFS for each root s over the vertices after s in the degree
**          order (so s is the cycle's first vertex, and hubs leave the graph
**          first), pruned by a BFS of depth k/2 around s; the last edge is
**          closed by a mark on s's neighbours.  Undirected cycles keep one
**          of their two directions (second vertex < last vertex).  The cost
**          grows like the number of simple paths of k-2 edges, about
**          V * d^(k-2) for average degree d: fine on sparse graphs, hopeless
**          for k = 8..10 on graphs like ego-Facebook (average degree 44),
**          which is what the interruption is for.
**
** Incrementally (dyng_cycles_delta, dyng_cycles_update), after
** dyng_graph_apply_tracked: a simple edge changes when its existence in the
** simple view changed (a removed parallel copy changes nothing).  Every lost
** cycle has a removed edge, every new one an added edge; each is attributed
** to the smallest changed edge it contains (edges ordered by their
** endpoints' vertex indices), and counted as that edge plus a simple path of
** k-1 edges between its endpoints: in the old graph for a removed edge, in
** the new graph for an added one, and through no smaller changed edge.
** Only the new graph exists; the old one is read through an overlay (new
** minus the edges added to the simple view plus those removed from it), so
** nothing of size O(E) is built.  Cost: per changed edge, the neighbours
** of its higher-degree end are stamped, then a DFS of k-2 levels runs from
** its lower-degree end, each step gathering the visited vertex's distinct
** neighbours by per-vertex stamps (O(d) per step: O(d_a + d_b) for
** triangles, about d^(k-2) in general), for k >= 5 pruned by a BFS of
** depth (k-1)/2 from the other end.  Each thread keeps 8 bytes of stamps
** per vertex (the thread count is capped so that all of them fit 256 MiB).
**
** Both run on several threads (see parallel.h): from scratch each takes
** chunks of roots, per batch chunks of changed edges; the counts add up.
**
** Long runs call a cancel callback every few thousand steps and stop with
** DYNG_EINTERRUPTED when it says so (ext/watch.c's, on an interrupt or past
** max_ms).
*/
#ifndef DYNG_CYCLES_H
#define DYNG_CYCLES_H

#include <stdint.h>

#include "engine/graph.h"
#include "engine/parallel.h"
#include "engine/types.h"

#define DYNG_CYCLES_MIN_K 3
#define DYNG_CYCLES_MAX_K 10


/* The number of simple cycles of exactly k edges in the graph of view `g`:
** of the undirected simple graph when `directed` is 0, of directed simple
** cycles when it is 1 (see the top of this file).  Works whether or not a
** directed graph's in adjacency is built.  Returns 0 and sets *count;
** DYNG_EINVAL for k outside 3..10; DYNG_EOVERFLOW when the count exceeds
** UINT64_MAX; DYNG_EINTERRUPTED; DYNG_ENOMEM.  Memory: O(V + E). */
int dyng_cycles_count(const dyng_graph_view *g, int k, int directed, const dyng_cancel *cancel,
                      uint64_t *count);

/* dyng_cycles_diff, the k-cycles one batch took away and brought, is in
** engine/types.h (backends return it too). */

/* What the batch recorded in `changes` (by dyng_graph_apply_tracked) did to
** the k-cycles (same meaning of k and directed as dyng_cycles_count), given
** the view `g` of the graph after it.  The new count is the old one minus
** lost plus gained.  A directed graph needs its in adjacency
** (dyng_graph_build_in, before the batch or after it): DYNG_ESTATE without
** it.  DYNG_EINVAL for k out of range or changes that do not fit the graph
** (a vertex index out of range, more copies of an edge recorded as added
** than the graph holds); DYNG_ETOOBIG past 2^32 changed edges;
** DYNG_EOVERFLOW when a count exceeds UINT64_MAX; DYNG_EINTERRUPTED;
** DYNG_ENOMEM. */
int dyng_cycles_delta(const dyng_graph_view *g, const dyng_changes *changes, int k, int directed,
                      const dyng_cancel *cancel, dyng_cycles_diff *delta);

/* Applies delta to *count, a count before the batch: DYNG_EINVAL when *count
** is less than what the batch took away (it was not this graph's count),
** DYNG_EOVERFLOW when the result exceeds UINT64_MAX; *count is changed only on
** success. */
int dyng_cycles_apply(const dyng_cycles_diff *delta, uint64_t *count);

/* dyng_cycles_delta applied to a cached count: *count, the count before the
** batch, becomes the count after it.  DYNG_EINVAL also when *count is less
** than what the batch took away (it was not this graph's count);
** DYNG_EOVERFLOW when the new count exceeds UINT64_MAX.  *count is changed only
** on success. */
int dyng_cycles_update(const dyng_graph_view *g, const dyng_changes *changes, int k, int directed,
                       const dyng_cancel *cancel, uint64_t *count);

#endif /* DYNG_CYCLES_H */
