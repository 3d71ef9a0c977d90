/*
** engine/graph.h: the dynamic graph that mirrors an edge table.
**
** A graph holds edges (rowid, src, dst, 0..8 weights) keyed by the edge
** table's rowid.  Node ids are arbitrary int64 values mapped to dense vertex
** indices; parallel edges and self-loops are kept.  It is filled once in bulk
** (dyng_graph_load_edge ... dyng_graph_seal) and then changed by batches of
** inserts and deletes keyed by rowid (dyng_graph_apply), never rebuilt.
**
** How it works: edges live in slots (src, dst, rowid and the positions of
** their adjacency entries).  Adjacency is a CSR whose per-vertex segments
** keep some slack: an insert appends to its vertex's segment, moving the
** segment to the end of the pool with twice the room when it is full; a
** delete moves the segment's last entry into the hole.  A directed graph
** keeps its in adjacency only once asked for (dyng_graph_build_in).  A pool is
** rewritten in vertex order (compacted) when moved-away segments waste a
** third of it, or an eighth of the vertices' segments have moved
** (dyng__compact_due in graph_internal.h).  Weights are
** stored with the adjacency entries, one array per objective, so a traversal
** in one objective reads them sequentially.
*/
#ifndef DYNG_GRAPH_H
#define DYNG_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "engine/alloc.h"
#include "engine/types.h"

typedef struct dyng_graph dyng_graph;
typedef struct dyng_batch dyng_batch;

/* 1 when w can be an edge's weight: a number from 0 to DYNG_MAX_WEIGHT
** (NaN, infinities and negative numbers cannot).  The one rule every entry
** point of weights applies. */
static inline int dyng_weight_ok(double w) { return w >= 0.0 && w <= DYNG_MAX_WEIGHT; }

/* ---- batches ---------------------------------------------------------- */

/* A new, empty batch for graphs of `n_weights` weight columns (0..8).
** NULL when out of memory or n_weights is out of range. */
dyng_batch *dyng_batch_new(int n_weights) DYNG_WARN_UNUSED;
void dyng_batch_free(dyng_batch *b); /* accepts NULL */
void dyng_batch_clear(dyng_batch *b);

/* Records "edge `rowid` is now (src, dst, w[0..n_weights-1])": the edge with
** that rowid, if any, is replaced.  DYNG_EWEIGHT for a weight that is NaN,
** negative or above DYNG_MAX_WEIGHT; DYNG_ENOMEM. */
int dyng_batch_insert(dyng_batch *b, int64_t rowid, int64_t src, int64_t dst,
                      const double *w);

/* Records "edge `rowid` is gone".  Deleting a rowid the graph lacks is not
** an error (it is counted as missing by dyng_graph_apply). */
int dyng_batch_delete(dyng_batch *b, int64_t rowid);

/* Operations recorded since the last clear (before normalization). */
size_t dyng_batch_size(const dyng_batch *b);

/* Bytes the batch holds: a cleared batch keeps its room (and that of its
** sort) for the operations recorded next. */
size_t dyng_batch_bytes(const dyng_batch *b);

/* Sorts the batch by rowid and keeps only the last operation recorded for
** each rowid, so that an insert followed by a delete of the same rowid
** cancels, and a delete followed by an insert becomes one replacement.
** dyng_graph_apply normalizes on its own; this is exposed for tests. */
int dyng_batch_normalize(dyng_batch *b);

/* ---- the graph -------------------------------------------------------- */

/* What one dyng_graph_apply did. */
typedef struct dyng_apply_stats {
  size_t inserted; /* edges added (replacements count once here ...) */
  size_t deleted;  /* ... and once here) */
  size_t missing;  /* deletes of rowids the graph did not have */
} dyng_apply_stats;

/* Creates an empty graph with `n_weights` weight columns (0 = unweighted:
** every edge weighs 1) that is directed (1) or undirected (0).  *out is new;
** free it with dyng_graph_free. */
int dyng_graph_new(dyng_graph **out, int n_weights, int directed) DYNG_WARN_UNUSED;
void dyng_graph_free(dyng_graph *g); /* accepts NULL */

/* Bulk loading, only before dyng_graph_seal: reserve room for about
** `n_edges` edges, then add each edge.  DYNG_EINVAL when rowid was already
** added; DYNG_EWEIGHT for an invalid weight; DYNG_ETOOBIG past 2^31 - 1
** edges or vertices; DYNG_ESTATE after sealing. */
int dyng_graph_reserve(dyng_graph *g, size_t n_edges);
int dyng_graph_load_edge(dyng_graph *g, int64_t rowid, int64_t src, int64_t dst,
                         const double *w);

/* Asks the processor to fetch what loading an edge (rowid, src, dst) will
** look up, so that a loader can overlap a few edges' cache misses (ids in
** random order miss on every edge).  Changes nothing.  DYNG_LOAD_AHEAD:
** how many edges ahead loading prefetches (the loader, and the seal's
** passes over the slots). */
#define DYNG_LOAD_AHEAD 16
void dyng_graph_prefetch_load(const dyng_graph *g, int64_t rowid, int64_t src, int64_t dst);

/* Builds the adjacency of the loaded edges.  After it, the graph changes only
** through dyng_graph_apply. */
int dyng_graph_seal(dyng_graph *g);

/* Applies a batch (normalizing it first).  Each edge is inserted or deleted
** as a whole; on DYNG_ENOMEM part of the batch may have been applied and the
** graph stays consistent, and the caller should reload it.  A large batch
** (thousands of operations) is applied on several threads when dyng_threads()
** allows, with every allocation made first: its failure leaves the graph as
** it was.  `stats` may be NULL. */
int dyng_graph_apply(dyng_graph *g, dyng_batch *b, dyng_apply_stats *stats);

/* The records of what one batch changed are a dyng_changes (engine/types.h):
** zero one, pass it to dyng_graph_apply_tracked (which empties it first),
** release it with dyng_changes_free. */
void dyng_changes_free(dyng_changes *c); /* frees the arrays; accepts a zeroed one */

/* dyng_graph_apply that also records what changed into *changes.  The
** records' room is reserved before the graph is touched, so DYNG_ENOMEM
** from that leaves the graph unchanged. */
int dyng_graph_apply_tracked(dyng_graph *g, dyng_batch *b, dyng_apply_stats *stats,
                             dyng_changes *changes);

/* Builds the in adjacency of a directed graph (its in-degrees are always
** kept; the entries only from this call on, maintained by every later
** batch).  A no-op for undirected graphs and when already built. */
int dyng_graph_build_in(dyng_graph *g);

/* A view of the graph for traversals (see types.h); valid until the next
** change.  For a directed graph whose in adjacency is not built, in.off,
** in.nbr, in.ref and edge_pos_in are NULL (in.deg is valid). */
void dyng_graph_get_view(const dyng_graph *g, dyng_graph_view *view);

int dyng_graph_directed(const dyng_graph *g);
int dyng_graph_n_weights(const dyng_graph *g);         /* 0 when unweighted */
uint32_t dyng_graph_n_vertices(const dyng_graph *g);   /* live vertices */
uint32_t dyng_graph_n_edges(const dyng_graph *g);
uint32_t dyng_graph_vertex_bound(const dyng_graph *g); /* indices in use */
size_t dyng_graph_bytes(const dyng_graph *g);          /* memory held */

/* The vertex of node `node_id`: 0 and *v set, or DYNG_ENOTFOUND when no
** edge has that node as an endpoint. */
int dyng_graph_vertex(const dyng_graph *g, int64_t node_id, uint32_t *v);

/* Per vertex: the node id, and the number of edges leaving / entering it
** (for an undirected graph both are the degree, a self-loop counting 2). */
int64_t dyng_graph_node_id(const dyng_graph *g, uint32_t v);
uint32_t dyng_graph_out_degree(const dyng_graph *g, uint32_t v);
uint32_t dyng_graph_in_degree(const dyng_graph *g, uint32_t v);

/* The edge slot of a rowid: 0 and *slot set, or DYNG_ENOTFOUND. */
int dyng_graph_edge(const dyng_graph *g, int64_t rowid, uint32_t *slot);

/* Per edge slot: rowid, endpoints (vertex indices) and weight in objective
** k (1 for an unweighted graph). */
int64_t dyng_graph_edge_rowid(const dyng_graph *g, uint32_t slot);
uint32_t dyng_graph_edge_src(const dyng_graph *g, uint32_t slot);
uint32_t dyng_graph_edge_dst(const dyng_graph *g, uint32_t slot);
double dyng_graph_edge_weight(const dyng_graph *g, uint32_t slot, int k);

/* Checks every internal invariant (positions, degrees, maps); 0 when the
** graph is consistent.  For tests; O(V + E). */
int dyng_graph_check(const dyng_graph *g);

#endif /* DYNG_GRAPH_H */
