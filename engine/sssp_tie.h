/*
** engine/sssp_tie.h: the tie rule of engine/sssp.h as the searches weigh an
** offer (internal; static inline functions for sssp.c and sssp_dyn.c).
*/
#ifndef DYNG_SSSP_TIE_H
#define DYNG_SSSP_TIE_H

#include "engine/radix_heap.h"
#include "engine/types.h"

#include <stdlib.h>

/* The rank of edge slot s among the edges that tie: its rowid, or the slot
** itself in a view without rowids (the MOSP ensemble, hand-built views). */
static inline int64_t dyng__edge_rank(const dyng_graph_view *g, uint32_t s) {
  return g->edge_rowid ? g->edge_rowid[s] : (int64_t)s;
}

/* The level an edge from a tail at distance du (level hu) offers at nd. */
static inline uint32_t dyng__offer_level(double du, uint32_t hu, double nd) {
  return nd > du ? 0u : hu + 1u;
}

/* ---- the searches' queue, in the tie rule's order ----------------------
**
** Vertices come out by distance, then by level (the tight steps of equal
** distance from a vertex reached from strictly nearer), so a vertex's level
** is final when it comes out and every tail of its level, one less, came
** out before it: its parent is then final too, and no vertex is taken
** twice.  Taken by distance alone, the vertices of one distance came out in
** any order, and one reached first along a long chain of zero weights was
** taken again each time a shorter chain turned up, and its whole chain
** after it (hundreds of seconds on a 250,000-vertex grid whose weights are
** mostly 0).
**
** The queue below serves an update (sssp_dyn.c), whose seeds of one
** distance may have any level; the search from scratch (sssp.c) does the
** same with less, as all its heap entries have level 0.  by_dist holds
** entries keyed by distance; once the first entry of a distance (cur) is
** out, the others are in its bucket 0, and they move together to `seed`,
** sorted by level.  Entries of distance cur pushed while it is taken offer
** one level more than the vertex being taken, so they come in level order
** and go to the end of `next`; the lower head of seed and next comes out
** first.  An entry is current while its vertex still has the distance and
** level it was pushed with (pushes need a smaller distance, or a smaller
** level); stale ones are passed over. */
typedef struct dyng__level_fifo {
  uint64_t *v;  /* level << 32 | vertex */
  size_t n, at, cap;
} dyng__level_fifo;

typedef struct dyng__tie_queue {
  dyng__radix_heap by_dist;
  dyng__level_fifo seed, next;
  double cur;   /* the distance being taken, while in_class */
  int in_class;
} dyng__tie_queue;

static inline int dyng__fifo_push(dyng__level_fifo *f, uint32_t level, uint32_t v) {
  if (f->n == f->cap && dyng_grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v)) return DYNG_ENOMEM;
  f->v[f->n++] = (uint64_t)level << 32 | v;
  return DYNG_OK;
}

static inline int dyng__u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static inline int dyng__tq_push(dyng__tie_queue *q, double d, uint32_t level, uint32_t v) {
  if (q->in_class && d == q->cur) return dyng__fifo_push(&q->next, level, v);
  return dyng__heap_push(&q->by_dist, dyng__key(d), v);
}

/* Moves the current entries of bucket 0 (distance cur) to seed, by level. */
static inline int dyng__tq_seed(dyng__tie_queue *q, const double *dist, const uint32_t *level) {
  dyng__item it;
  int sorted = 1, rc;
  while (q->by_dist.b[0].n) {
    if ((rc = dyng__heap_pop(&q->by_dist, &it)) != DYNG_OK) return rc;
    if (it.key != dyng__key(dist[it.vertex])) continue;
    if ((rc = dyng__fifo_push(&q->seed, level[it.vertex], it.vertex)) != DYNG_OK) return rc;
    sorted &= q->seed.n < 2 || q->seed.v[q->seed.n - 2] <= q->seed.v[q->seed.n - 1];
  }
  if (!sorted) qsort(q->seed.v, q->seed.n, sizeof *q->seed.v, dyng__u64_cmp);
  return DYNG_OK;
}

/* The next current entry's vertex into *v: 1, or 0 when none is left (or
** on *rc, DYNG_ENOMEM). */
static inline int dyng__tq_pop(dyng__tie_queue *q, const double *dist, const uint32_t *level, uint32_t *v,
                               int *rc) {
  dyng__item it;
  for (;;) {
    if (q->in_class) {
      if (q->seed.at < q->seed.n || q->next.at < q->next.n) {
        dyng__level_fifo *f = q->next.at == q->next.n ||
                                      (q->seed.at < q->seed.n && q->seed.v[q->seed.at] <= q->next.v[q->next.at])
                                  ? &q->seed
                                  : &q->next;
        uint64_t e = f->v[f->at++];
        uint32_t x = (uint32_t)e;
        if (dist[x] != q->cur || level[x] != (uint32_t)(e >> 32)) continue;
        *v = x;
        return 1;
      }
      q->in_class = 0;
    }
    if (!q->by_dist.size) return 0;
    if ((*rc = dyng__heap_pop(&q->by_dist, &it)) != DYNG_OK) return 0;
    if (it.key != dyng__key(dist[it.vertex])) continue;
    /* The first entry of a new distance. */
    q->cur = dist[it.vertex];
    q->in_class = 1;
    q->next.n = q->next.at = 0;
    if (q->by_dist.b[0].n) { /* not alone: order them by level */
      q->seed.n = q->seed.at = 0;
      if ((*rc = dyng__fifo_push(&q->seed, level[it.vertex], it.vertex)) != DYNG_OK) return 0;
      if ((*rc = dyng__tq_seed(q, dist, level)) != DYNG_OK) return 0;
      continue;
    }
    *v = it.vertex;
    return 1;
  }
}

static inline void dyng__tq_free(dyng__tie_queue *q) {
  dyng__heap_free(&q->by_dist);
  dyng_free(q->seed.v);
  dyng_free(q->next.v);
}

#endif /* DYNG_SSSP_TIE_H */
