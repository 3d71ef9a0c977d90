/*
** engine/types.h: plain data shared by the engine and every backend.
**
** Nothing here allocates or calls anything: a backend plugin sees the graph
** only through dyng_graph_view (borrowed pointers into the host graph), a
** batch only through its change records (dyng_edge_change, dyng_changes),
** and returns shortest-path trees in a dyng_sssp_tree the caller owns.
** Part of the plugin ABI (engine/backend.h): includes only libc headers.
*/
#ifndef DYNG_TYPES_H
#define DYNG_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define DYNG_MAX_WEIGHTS 8       /* weight columns per edge */
#define DYNG_NONE UINT32_MAX     /* "no vertex" / "no edge" */
#define DYNG_MAX_INDEX 0x7fffffffu /* largest vertex index or edge slot */

/* The largest weight an edge may have.  A simple path has fewer than 2^32
** edges (vertex indices are 32-bit), so the sum of its weights in any
** objective, rounding included, stays below 2^32 * 1e298 = 4.3e307 <
** DBL_MAX: no distance, path cost or Pareto label can overflow to infinity,
** on any backend.  1e298 reads as the same double in C and in SQLite. */
#define DYNG_MAX_WEIGHT 1e298

/*
** One direction of adjacency.  The entries of vertex v are positions
** off[v] .. off[v] + deg[v] - 1 of the per-entry arrays.  ref[] names the
** edge an entry belongs to: edge slot << 1 | side, where side 0 is the entry
** kept at the edge's source and side 1 the one kept at its destination.
** w[k][p] is the weight of entry p in objective k.  The in-direction of a
** directed graph stores no weights (w[k] is NULL): the weight of in-entry p
** is out.w[k][edge_pos_out[ref[p] >> 1]].
**
** Between two views with the same `layout`, only the entries of vertices
** that a batch's edges touch (the ends of the edges it removed and added)
** have moved or changed: a device copy can follow by copying those
** vertices' entries again.
*/
typedef struct dyng_adj_view {
  const uint32_t *off;               /* per vertex: first entry */
  const uint32_t *deg;               /* per vertex: number of entries */
  const uint32_t *nbr;               /* per entry: the vertex at the other end */
  const uint32_t *ref;               /* per entry: edge slot << 1 | side */
  const double *w[DYNG_MAX_WEIGHTS]; /* per objective, per entry: weight */
  size_t n_entries;                  /* positions in use: every off[v] + deg[v]
                                        is at most this */
  uint32_t layout;                   /* changes whenever entries are rewritten
                                        wholesale (not by a batch's own edges) */
} dyng_adj_view;

/* A way to stop a long computation: `should_stop(ctx)` is called every few
** thousand steps, on the calling thread only; nonzero makes the computation
** return DYNG_EINTERRUPTED.  A NULL dyng_cancel (or a NULL should_stop)
** never stops. */
typedef struct dyng_cancel {
  int (*should_stop)(void *ctx); /* nonzero: stop now */
  void *ctx;                     /* passed to should_stop and progress */
  /* May be NULL; else called with should_stop, on the calling thread, with
  ** how many of a loop's items are finished so far and how many there are
  ** (0 and 0 when the computation is not such a loop). */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
} dyng_cancel;

/*
** A read-only view of a graph, valid until the graph next changes.  Vertex
** indices run 0 .. n_vertices - 1; a vertex whose out and in degree are both
** 0 is dead (its node has no edges left) and is not part of the graph.
** For an undirected graph `in` is the same as `out`, and every edge has an
** entry at each endpoint.  An unweighted graph has n_objectives == 1 and
** every weight 1.
*/
typedef struct dyng_graph_view {
  uint32_t n_vertices;     /* vertex indices in use (dead ones included) */
  uint32_t n_edge_slots;   /* edge slots in use (free ones included) */
  int n_objectives;        /* weight columns, at least 1 */
  int directed;            /* 1: out/in differ; 0: in == out */
  dyng_adj_view out;       /* entries by source (all entries if undirected) */
  dyng_adj_view in;        /* entries by destination */
  const int64_t *node_id;  /* per vertex: the user's node id */
  const int64_t *edge_rowid; /* per edge slot: rowid in the edge table */
  const uint32_t *edge_src;  /* per edge slot: source vertex (DYNG_NONE: free) */
  const uint32_t *edge_dst;  /* per edge slot: destination vertex */
  const uint32_t *edge_pos_out; /* per edge slot: position of its side-0 entry
                                  (in `out`, at its source) */
  const uint32_t *edge_pos_in;  /* per edge slot: position of its side-1 entry
                                  (in `in`, at its destination); NULL while a
                                  directed graph has no in entries */
  /* How the caller stops a long computation on this view (dyng_cancel
  ** above); NULL (as dyng_graph_get_view leaves it) never stops.  A backend
  ** may ignore it; one that honours it returns DYNG_EINTERRUPTED. */
  const dyng_cancel *cancel;
} dyng_graph_view;

/*
** A shortest-path tree from one source in one objective.  dist[v] is
** INFINITY when v was not reached; parent[v] and parent_edge[v] (an edge
** slot) are DYNG_NONE for the source and for unreached vertices.  order[]
** lists the n_reached reached vertices by non-decreasing distance, the
** source first, unless order_stale is set (after an incremental update;
** dyng_sssp_tree_order rebuilds it).  The parents follow the tie rule of
** engine/sssp.h, so the tree is a function of the graph's edges (their
** ends, weights and rowids) alone.  hops[v] is that rule's tie level of v
** (0 when v's parent is strictly closer to the source, else one more than
** its parent's); only the CPU backend reads or writes it, and a tree that
** comes to the CPU from another backend gets it from its parents
** (dyng_sssp_tree_hops).  When host_stale is set, the tree is
** held by the backend that computed it (in device memory) and these host
** arrays are not current: the backend's tree_fetch brings rows over
** (engine/backend.h).
*/
typedef struct dyng_sssp_tree {
  uint32_t n_vertices;     /* length of the per-vertex arrays */
  uint32_t source;         /* vertex index of the source */
  int objective;           /* weight column used */
  uint32_t n_reached;      /* entries in order[] */
  int order_stale;         /* order[] and n_reached are out of date */
  int host_stale;          /* dist, parent, parent_edge are out of date */
  double *dist;
  uint32_t *parent;
  uint32_t *parent_edge;
  uint32_t *order;
  uint32_t *hops;
} dyng_sssp_tree;

/* One edge a batch took out of the graph or put into it.  A replaced edge
** appears as removed (old version) and added (new version).  A removed
** edge's slot may be reused by an edge added in the same batch. */
typedef struct dyng_edge_change {
  uint32_t slot;               /* the edge's slot */
  uint32_t src;                /* its source vertex */
  uint32_t dst;                /* its destination vertex */
  int64_t rowid;               /* its rowid */
  double w[DYNG_MAX_WEIGHTS];  /* its weights (1 for an unweighted graph) */
} dyng_edge_change;

/* The edges one batch removed and added, in the order it did so.  Owned by
** the caller: zero it, pass it to dyng_graph_apply_tracked (which empties
** it first), release it with dyng_changes_free (engine/graph.h). */
typedef struct dyng_changes {
  dyng_edge_change *removed;
  size_t n_removed;
  dyng_edge_change *added;
  size_t n_added;
  size_t cap;                  /* entries allocated in each array */
  /* Positions of the out adjacency (view.out) the batch wrote, repeats
  ** included: with them and the off/deg of the batch's edges' ends, a copy
  ** of the adjacency in the same layout follows the batch exactly.  Only
  ** when out_pos_complete (an allocation can fail while recording). */
  uint32_t *out_pos;
  size_t n_out_pos, cap_out_pos;
  int out_pos_complete;
} dyng_changes;

/* The k-cycles one batch took away and brought (engine/cycles.h). */
typedef struct dyng_cycles_diff {
  uint64_t lost;   /* cycles of the old graph through a removed edge */
  uint64_t gained; /* cycles of the new graph through an added edge */
} dyng_cycles_diff;

#endif /* DYNG_TYPES_H */
