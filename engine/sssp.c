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
  uint64_t used;  /* bit i-1 set when bucket i (i >= 1) is not empty */
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
  int i = dyng__bucket_of(key, h->last);
  dyng__bucket *b = &h->b[i];
  if (i) h->used |= 1ULL << (i - 1);
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
    int i = __builtin_ctzll(h->used) + 1;
    h->used &= h->used - 1;
    dyng__bucket *src = &h->b[i];
    uint64_t m = src->items[0].key;
    for (size_t j = 1; j < src->n; j++)
      if (src->items[j].key < m) m = src->items[j].key;
    h->last = m;
    while (src->n) {
      dyng__item it = src->items[src->n - 1];
      int k = dyng__bucket_of(it.key, m);
      dyng__bucket *d = &h->b[k];
      if (k) h->used |= 1ULL << (k - 1);
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

  dist[source] = 0.0;
  rc = dyng__heap_push(&h, dyng__key(0.0), source);
  while (rc == DYNG_OK && h.size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(&h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    /* Keys of a vertex's entries strictly decrease (a push needs a shorter
    ** distance), so the one entry whose key is dist[u] is current and every
    ** other is stale. */
    double du = dist[u];
    if (it.key != dyng__key(du)) continue;
    order[n_reached++] = u;
    if (u == target) break;
    uint32_t begin = off[u], end = off[u] + deg[u];
    for (uint32_t p = begin; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      if (nd < dist[x]) {
        dist[x] = nd;
        pedge[x] = p; /* the entry; its edge and parent are found below */
        rc = dyng__heap_push(&h, dyng__key(nd), x);
        if (rc) break;
      }
    }
  }
  /* The search records one word per improvement, the adjacency entry it
  ** came through; here each entry becomes its edge slot and the vertex that
  ** owns the entry (the edge's source for side 0, its destination for side
  ** 1) becomes the parent.  One sequential pass whose lookups do not depend
  ** on each other costs less than a second random write per improvement. */
  const uint32_t *esrc = g->edge_src, *edst = g->edge_dst;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t p = pedge[v];
    if (p == DYNG_NONE) continue;
    uint32_t r = ref[p], s = r >> 1;
    pedge[v] = s;
    parent[v] = (r & 1u) ? edst[s] : esrc[s];
  }
  t->n_reached = n_reached;
  dyng__heap_free(&h);
  return rc;
}
