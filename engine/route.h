/*
** engine/route.h: searches that stop early: one source to one target, to
** the nodes within a distance, or to a set of targets (a cost matrix).
**
** A whole shortest-path tree (engine/sssp.h) touches every vertex the
** source reaches; a route from A to B five edges away needs a few dozen.
** These searches work in a workspace (dyng_route) that is reused from one
** search to the next: its per-vertex arrays are valid only where a stamp
** says the current search wrote them, so a search costs what it touches,
** not the size of the graph.
**
** The same rows as the whole tree.  Vertices come out of the queue by
** (distance, level), as in dyng_sssp_dijkstra, and each vertex takes the
** smallest (distance, level, rowid) its in-edges offer (the tie rule of
** engine/sssp.h).  Every offer equal to a vertex's final key comes from a
** vertex taken before it, so a vertex's distance, level and parent are
** final when it comes out: a search that stops once its target came out,
** or once the next vertex is past a distance bound, has the whole tree's
** rows for every vertex it took.
*/
#ifndef DYNG_ROUTE_H
#define DYNG_ROUTE_H

#include "engine/alloc.h"
#include "engine/types.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dyng_route dyng_route;

/* A workspace; one search at a time.  NULL when out of memory. */
dyng_route *dyng_route_new(void);
void dyng_route_free(dyng_route *r); /* accepts NULL */

/* Bytes the workspace holds. */
size_t dyng_route_bytes(const dyng_route *r);

/* Lower bounds on the distance from any vertex to a target, from the
** distances of a few landmark vertices (ALT: A*, landmarks and the
** triangle inequality): d(L, t) - d(L, v) <= d(v, t) for each landmark L
** whose tree reaches both, and on an undirected graph d(L, v) - d(L, t)
** too.  Each bound is lowered by `slack`, more than rounding can add to
** the sums it compares, so it never overestimates. */
typedef struct dyng_route_aim {
  int n;                     /* landmarks (0: no aim) */
  const double *const *dist; /* per landmark: its tree's distances (INFINITY: unreached) */
  const double *slack;       /* per landmark: taken off each of its bounds */
  int undirected;
} dyng_route_aim;

/* What a search is after; a search stops at the first of these that holds
** (none: every vertex the source reaches). */
typedef struct dyng_route_goal {
  uint32_t target;      /* stop once it came out; DYNG_NONE: no target */
  const uint32_t *targets; /* or stop once all of these came out ... */
  size_t n_targets;     /* ... (with target DYNG_NONE) */
  double max_dist;      /* take only vertices at most this far (INFINITY: any) */
  int strict;           /* take only vertices nearer than max_dist */
  uint64_t max_taken;   /* stop after this many vertices (0: no limit) */
  const dyng_route_aim *aim; /* with a target: aim at it (NULL: do not) */
} dyng_route_goal;

/* A goal with no limit. */
dyng_route_goal dyng_route_goal_none(void);

/* Searches from `source` in objective `objective` of g until `goal` holds.
** With a target and an aim, vertices come out by distance plus the bound
** (A*); a vertex that a later offer improves goes back in the queue, and
** the search goes on until every vertex left is bounded past the target's
** distance, so that the target's path and every tie on it are final: the
** whole tree's path.  Only the target's path is then final
** (dyng_route_final holds for the target and its path).
** DYNG_EINVAL for a source, target or objective out of range; DYNG_ENOMEM;
** DYNG_EINTERRUPTED when g->cancel asks to stop. */
int dyng_route_search(dyng_route *r, const dyng_graph_view *g, uint32_t source, int objective,
                      const dyng_route_goal *goal) DYNG_WARN_UNUSED;

/* After a search: the vertices it took, in the order they came out
** (non-decreasing distance, the source first). */
const uint32_t *dyng_route_taken(const dyng_route *r, size_t *n);

/* After a search: 1 when v came out (its row is final), else 0. */
int dyng_route_final(const dyng_route *r, uint32_t v);

/* After a search, for a vertex that came out: its distance, its parent
** (DYNG_NONE for the source) and the edge slot from the parent. */
double dyng_route_dist(const dyng_route *r, uint32_t v);
uint32_t dyng_route_parent(const dyng_route *r, const dyng_graph_view *g, uint32_t v);
uint32_t dyng_route_parent_edge(const dyng_route *r, const dyng_graph_view *g, uint32_t v);

/* After a search that took `target`: the vertices of its path from the
** target back to the source into *pv (from dyng_malloc, the caller frees
** it), *pn of them; *pn = 0 when the target did not come out. */
int dyng_route_path(const dyng_route *r, const dyng_graph_view *g, uint32_t target, uint32_t **pv,
                    uint32_t *pn) DYNG_WARN_UNUSED;

/* Landmarks: k vertices far apart (each next one the farthest from those
** before), each with a potential per vertex (engine/route.c says what
** that is): their distances when built, kept a valid lower bound through
** every batch by lowering it only where the batch added an edge or lowered
** a weight, so that the bounds they give never overestimate and a batch
** costs what its shortcuts change, not a tree's repair. */
typedef struct dyng_landmarks dyng_landmarks;

/* Once the edges removed or reweighed since the distances were last exact
** are more than 1/DYNG_LANDMARK_LOOSE_SHARE of the edge slots, an update
** computes the distances again (from the same vertices). */
#define DYNG_LANDMARK_LOOSE_SHARE 16

/* The factor the landmarks' distances are kept at (engine/route.c says
** why); the environment's DYNG_LANDMARK_SCALE overrides it, for benches. */
#define DYNG_LANDMARK_SCALE 0.98

/* Builds k landmarks (k >= 1) of objective `objective` on g.  DYNG_ENOMEM,
** DYNG_EINVAL, DYNG_EINTERRUPTED (g->cancel). */
int dyng_landmarks_build(const dyng_graph_view *g, int objective, int k, dyng_landmarks **out) DYNG_WARN_UNUSED;
void dyng_landmarks_free(dyng_landmarks *lm); /* accepts NULL */

/* Brings the potentials up to date with g after the batch `changes`:
** repaired, or computed again with `recompute` (the caller's rule for a
** batch too large to repair; engine/mirror.c's for kept trees) or by the
** rule of DYNG_LANDMARK_LOOSE_SHARE.  On an error other than DYNG_ENOMEM
** while growing, the landmarks must be freed, not used. */
int dyng_landmarks_update(dyng_landmarks *lm, const dyng_graph_view *g, const dyng_changes *changes,
                          int recompute) DYNG_WARN_UNUSED;

/* The aim the landmarks give (valid until they are updated or freed). */
void dyng_landmarks_aim(const dyng_landmarks *lm, dyng_route_aim *aim);

size_t dyng_landmarks_bytes(const dyng_landmarks *lm);
int dyng_landmarks_objective(const dyng_landmarks *lm);
int dyng_landmarks_count(const dyng_landmarks *lm);
/* Landmark i's vertex. */
uint32_t dyng_landmarks_vertex(const dyng_landmarks *lm, int i);
/* Batches repaired, and times computed again, since the build. */
int64_t dyng_landmarks_updates(const dyng_landmarks *lm);
int64_t dyng_landmarks_recomputes(const dyng_landmarks *lm);

/* Distances from each of sources[0 .. n_sources) to each of targets[0 ..
** n_targets) in objective `objective`: out[i * n_targets + j], INFINITY
** where unreachable.  One search per source, each stopping once its
** targets came out, on dyng_threads() threads.  DYNG_EINVAL for a vertex
** or objective out of range; DYNG_ENOMEM; DYNG_EINTERRUPTED when g->cancel
** asks to stop (checked between sources and within the calling thread's). */
int dyng_route_matrix(const dyng_graph_view *g, int objective, const uint32_t *sources, size_t n_sources,
                      const uint32_t *targets, size_t n_targets, double *out) DYNG_WARN_UNUSED;

#endif /* DYNG_ROUTE_H */
