/*
** engine/sssp.c: Dijkstra with a monotone radix heap (see sssp.h).
**
** The radix heap keeps bucket i for keys whose highest bit differing from
** the last extracted key is bit i-1 (bucket 0: keys equal to it).  Popping
** from an empty bucket 0 takes the lowest non-empty bucket, makes its
** minimum the new "last" key and redistributes the bucket into lower ones;
** every key moves down at most 64 times, in practice a few.
*/
#include "engine/sssp.h"
#include "engine/error.h"

#include <math.h>
#include <string.h>

typedef struct dyng__item {
  uint64_t key;   /* bit pattern of the tentative distance */
  uint32_t vertex;
} dyng__item;

typedef struct dyng__bucket {
  dyng__item *items;
  size_t n;
  size_t cap;
} dyng__bucket;

#define DYNG__BUCKETS 65

typedef struct dyng__radix_heap {
  dyng__bucket b[DYNG__BUCKETS];
  uint64_t last;  /* last key extracted: every stored key is >= last */
  size_t size;
} dyng__radix_heap;

static inline uint64_t dyng__key(double d) {
  uint64_t k;
  memcpy(&k, &d, sizeof k);
  return k;
}

static inline int dyng__bucket_of(uint64_t key, uint64_t last) {
  uint64_t x = key ^ last;
  return x ? 64 - __builtin_clzll(x) : 0;
}

static inline int dyng__heap_push(dyng__radix_heap *h, uint64_t key, uint32_t v) {
  dyng__bucket *b = &h->b[dyng__bucket_of(key, h->last)];
  if (b->n == b->cap) {
    int rc = dyng_grow((void **)&b->items, &b->cap, b->n + 1, sizeof *b->items);
    if (rc) return rc;
  }
  b->items[b->n].key = key;
  b->items[b->n].vertex = v;
  b->n++;
  h->size++;
  return DYNG_OK;
}

/* Pops an item of minimum key into *out; the heap must not be empty.
** Refilling bucket 0 moves the lowest non-empty bucket's items into lower
** buckets, which may have to grow: DYNG_ENOMEM then. */
static inline int dyng__heap_pop(dyng__radix_heap *h, dyng__item *out) {
  if (h->b[0].n == 0) {
    int i = 1;
    while (h->b[i].n == 0) i++;
    dyng__bucket *src = &h->b[i];
    uint64_t m = src->items[0].key;
    for (size_t j = 1; j < src->n; j++)
      if (src->items[j].key < m) m = src->items[j].key;
    h->last = m;
    while (src->n) {
      dyng__item it = src->items[src->n - 1];
      dyng__bucket *d = &h->b[dyng__bucket_of(it.key, m)];
      if (d->n == d->cap &&
          dyng_grow((void **)&d->items, &d->cap, d->n + 1, sizeof *d->items))
        return DYNG_ENOMEM;
      d->items[d->n++] = it;
      src->n--;
    }
  }
  h->size--;
  *out = h->b[0].items[--h->b[0].n];
  return DYNG_OK;
}

static void dyng__heap_free(dyng__radix_heap *h) {
  for (int i = 0; i < DYNG__BUCKETS; i++) dyng_free(h->b[i].items);
}

int dyng_sssp_tree_init(dyng_sssp_tree *t, uint32_t n) {
  memset(t, 0, sizeof *t);
  t->dist = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->dist);
  t->parent = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->parent);
  t->parent_edge = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->parent_edge);
  t->order = dyng_malloc((size_t)(n ? n : 1) * sizeof *t->order);
  if (!t->dist || !t->parent || !t->parent_edge || !t->order) {
    dyng_sssp_tree_free(t);
    return DYNG_ENOMEM;
  }
  t->n_vertices = n;
  return DYNG_OK;
}

void dyng_sssp_tree_free(dyng_sssp_tree *t) {
  dyng_free(t->dist);
  dyng_free(t->parent);
  dyng_free(t->parent_edge);
  dyng_free(t->order);
  memset(t, 0, sizeof *t);
}

int dyng_sssp_dijkstra(const dyng_graph_view *g, uint32_t source, int objective,
                       uint32_t target, dyng_sssp_tree *t) {
  uint32_t n = g->n_vertices;
  if (source >= n || objective < 0 || objective >= g->n_objectives) return DYNG_EINVAL;
  if (t->n_vertices < n) return DYNG_EINVAL;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr, *ref = g->out.ref;
  const double *w = g->out.w[objective];
  double *dist = t->dist;
  uint32_t *parent = t->parent, *pedge = t->parent_edge, *order = t->order;
  uint32_t n_reached = 0;
  int rc = DYNG_OK;

  for (uint32_t v = 0; v < n; v++) {
    dist[v] = INFINITY;
    parent[v] = DYNG_NONE;
    pedge[v] = DYNG_NONE;
  }
  t->source = source;
  t->objective = objective;

  dyng__radix_heap h;
  memset(&h, 0, sizeof h);
  /* One bit per vertex marks it settled. */
  uint64_t *done = dyng_calloc(((size_t)n + 63) / 64, sizeof *done);
  if (!done) return DYNG_ENOMEM;

  dist[source] = 0.0;
  rc = dyng__heap_push(&h, dyng__key(0.0), source);
  while (rc == DYNG_OK && h.size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    /* A stale entry (u settled earlier through a shorter path) is skipped. */
    if (done[u >> 6] & (1ULL << (u & 63))) continue;
    done[u >> 6] |= 1ULL << (u & 63);
    order[n_reached++] = u;
    if (u == target) break;
    double du = dist[u];
    uint32_t begin = off[u], end = off[u] + deg[u];
    for (uint32_t p = begin; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      if (nd < dist[x]) {
        dist[x] = nd;
        parent[x] = u;
        pedge[x] = ref[p] >> 1;
        rc = dyng__heap_push(&h, dyng__key(nd), x);
        if (rc) break;
      }
    }
  }
  t->n_reached = n_reached;
  dyng__heap_free(&h);
  dyng_free(done);
  return rc;
}
