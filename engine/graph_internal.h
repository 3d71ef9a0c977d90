/*
** engine/graph_internal.h: the dynamic graph's representation, shared by
** the two files that implement it: engine/graph.c (creation, loading,
** sealing, the one-at-a-time apply loop, queries, checks) and
** engine/graph_apply.c (applying a batch, a large one on several threads).
** Nothing outside those two files includes it; engine/graph.h is the
** graph's interface.
*/
#ifndef DYNG_GRAPH_INTERNAL_H
#define DYNG_GRAPH_INTERNAL_H

#include "engine/graph.h"
#include "engine/idmap.h"

#include <stddef.h>
#include <stdint.h>

/* One direction of adjacency: per-vertex segments in a shared pool. */
typedef struct dyng__adj {
  uint32_t *off;  /* per vertex: first entry of its segment */
  uint32_t *deg;  /* per vertex: entries in use */
  uint32_t *cap;  /* per vertex: entries reserved */
  uint32_t *nbr;  /* per entry: vertex at the other end */
  uint32_t *ref;  /* per entry: edge slot << 1 | side */
  double *w[DYNG_MAX_WEIGHTS]; /* per objective, per entry (out pool only) */
  int has_w;      /* 1 when this pool stores weights */
  size_t used;    /* entries handed out to segments (end of the last one) */
  size_t size;    /* entries allocated in every per-entry array */
  size_t garbage; /* entries in segments that were moved away */
  uint32_t moved; /* segments moved out of vertex order since the last layout */
  uint32_t layout; /* counts rewrites of the whole pool (layouts, compactions) */
} dyng__adj;

/* One pending operation of a batch. */
typedef struct dyng__op {
  int64_t rowid;
  int64_t src;
  int64_t dst;
  size_t seq;     /* order of recording; also indexes the batch's weights */
  int is_insert;  /* 1: insert/replace, 0: delete */
} dyng__op;

struct dyng_batch {
  int n_weights;
  dyng__op *ops;
  size_t n_ops;
  size_t ops_cap;
  double *w;      /* n_weights per recorded operation, by seq */
  size_t w_cap;   /* doubles allocated in w */
  size_t n_recorded; /* seq of the next operation */
  /* The radix sort's room, kept with the batch so that a batch cleared and
  ** filled again (one per sync) writes to memory it already has: */
  uint64_t *key, *key_to; /* per operation: rowid keys */
  uint32_t *at, *at_to;   /* per operation: where it came from */
  size_t sort_cap;        /* operations each of the four has room for */
  dyng__op *ops_spare;    /* the sorted operations go here, then trade */
  size_t spare_cap;       /* places with ops */
};

struct dyng_graph {
  dyng_changes *recording; /* the batch being applied records into this */
  int n_weights;  /* weight columns (0 = unweighted) */
  int n_obj;      /* objectives stored: max(1, n_weights) */
  int directed;
  int sealed;

  /* vertices */
  uint32_t n_vert;   /* indices handed out */
  size_t vert_cap;   /* room in the per-vertex arrays */
  uint32_t n_live;   /* vertices with at least one edge */
  int64_t *node_id;
  dyng_idmap *vmap;  /* node id -> vertex */

  /* edge slots */
  uint32_t n_slots;  /* slots handed out */
  size_t slot_cap;   /* room in the per-slot arrays */
  uint32_t n_edges;  /* slots holding an edge */
  int64_t *e_rowid;
  uint32_t *e_src;   /* DYNG_NONE marks a free slot */
  uint32_t *e_dst;
  uint32_t *e_pos[2]; /* per slot: position of the side-0 entry and of the
                         side-1 entry ([1] only while DYNG__HAS_IN_ENTRIES) */
  uint32_t *free_slot; /* stack of free slots; room for slot_cap */
  size_t n_free;
  dyng_idmap *emap;  /* rowid -> slot */
  double *load_w[DYNG_MAX_WEIGHTS]; /* before sealing: per objective, per slot */
  size_t stage_cap;  /* doubles allocated in each load_w (see dyng__stage_cap) */

  dyng__adj out;
  dyng__adj in;      /* unused when undirected: entries all live in out */
  int in_built;      /* directed: the in pool exists (else only in.deg) */
};

#define DYNG__ADJ_IN(g) ((g)->directed ? &(g)->in : &(g)->out)
/* 1 when edges have side-1 adjacency entries (undirected, or in pool built). */
#define DYNG__HAS_IN_ENTRIES(g) (!(g)->directed || (g)->in_built)

/* How many operations ahead the apply loop starts loading their hash cells
** (far) and, from those, their edges and vertices (near). */
#define DYNG__PREFETCH_FAR 16
#define DYNG__PREFETCH_NEAR 8

/* 1 when vertex v has an edge. */
static inline int dyng__live(const dyng_graph *g, uint32_t v) {
  return g->out.deg[v] != 0 || (g->directed && g->in.deg[v] != 0);
}

/* Copies the entry at `from` to `to` (both in pool a) and tells its edge. */
static inline void dyng__entry_copy(dyng_graph *g, dyng__adj *a, size_t from, size_t to) {
  uint32_t r = a->ref[from];
  a->nbr[to] = a->nbr[from];
  a->ref[to] = r;
  if (a->has_w)
    for (int k = 0; k < g->n_obj; k++) a->w[k][to] = a->w[k][from];
  g->e_pos[r & 1u][r >> 1] = (uint32_t)to;
}

/* Writes a new entry at position p of pool a: neighbour, ref (slot << 1 |
** side), and for a pool with weights the edge's (w, n_weights of them; all
** 1 when the graph is unweighted).  The caller tells the edge (e_pos). */
static inline void dyng__entry_put(dyng_graph *g, dyng__adj *a, size_t p, uint32_t nbr,
                                   uint32_t ref, const double *w) {
  a->nbr[p] = nbr;
  a->ref[p] = ref;
  /* + 0.0 turns -0.0 into 0.0 (see dyng_graph_load_edge). */
  if (a->has_w)
    for (int k = 0; k < g->n_obj; k++) a->w[k][p] = g->n_weights ? w[k] + 0.0 : 1.0;
}

/* The room a segment of `cap` entries gets when it moves because it must
** hold `need`: at least twice as much, and 4.  0 past DYNG_MAX_INDEX. */
static inline size_t dyng__moved_cap(uint32_t cap, size_t need) {
  size_t c = (size_t)cap * 2;
  if (c < need) c = need;
  if (c < 4) c = 4;
  return c > (size_t)DYNG_MAX_INDEX ? 0 : c;
}

/* 1 when pool a should be compacted.  Segments at least double when they
** move, so abandoned room stays below half of the pool; compact at a third.
** Moved segments also scatter neighbouring vertices' lists over the pool,
** which slows every traversal (Dijkstra by half once a quarter of a grid's
** vertices moved), so compact too when an eighth of the vertices moved:
** O(V + E) for at least V/8 moves. */
static inline int dyng__compact_due(const dyng_graph *g, const dyng__adj *a) {
  return a->garbage > 4096 && (a->garbage * 3 > a->used || (size_t)a->moved * 8 > g->n_vert);
}

/* ---- graph.c's helpers that graph_apply.c uses ---------------------- */

/* Makes room for `need` vertices / edge slots (all or nothing). */
int dyng__vert_reserve(dyng_graph *g, size_t need);
int dyng__slot_reserve(dyng_graph *g, size_t need);

/* Sets up the new vertex v for node id `id`. */
void dyng__vertex_init(dyng_graph *g, uint32_t v, int64_t id);

/* Makes pool a hold at least `need` entries, growing it by half at least. */
int dyng__pool_fit(dyng_graph *g, dyng__adj *a, size_t need);

/* Rewrites a pool with its segments in vertex order and fresh slack; left
** as it was on allocation failure. */
void dyng__adj_compact(dyng_graph *g, dyng__adj *a);

/* Fills a change record for the edge (slot, src, dst, rowid) whose out
** entry is at position `pos`. */
void dyng__record_at(const dyng_graph *g, uint32_t slot, uint32_t src, uint32_t dst,
                     int64_t rowid, uint32_t pos, dyng_edge_change *c);

/* Start loading an operation's hash cells, and its edges and vertices. */
void dyng__prefetch_keys(const dyng_graph *g, const dyng__op *op);
void dyng__prefetch_places(const dyng_graph *g, const dyng__op *op);

/* The one-at-a-time apply of the normalized batch b (graph.c). */
int dyng__apply_loop(dyng_graph *g, dyng_batch *b, dyng_apply_stats *st, dyng_changes *changes);

#endif
