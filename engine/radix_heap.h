/*
** engine/radix_heap.h: a monotone radix heap over 64-bit keys, for the
** engine's Dijkstra searches (internal; static functions).
**
** Keys are bit patterns of non-negative doubles, which order like unsigned
** integers.  Bucket i holds keys whose highest bit differing from the last
** extracted key is bit i-1 (bucket 0: keys equal to it).  Popping from an
** empty bucket 0 takes the lowest non-empty bucket, makes its minimum the
** new "last" key and redistributes the bucket into lower ones; every key
** moves down at most 64 times, in practice a few.  Keys pushed must not be
** below the last key popped (Dijkstra's distances never are).
*/
#ifndef DYNG_RADIX_HEAP_H
#define DYNG_RADIX_HEAP_H

#include <stdint.h>
#include <string.h>

#include "engine/alloc.h"
#include "engine/error.h"

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

static inline void dyng__heap_free(dyng__radix_heap *h) {
  for (int i = 0; i < DYNG__BUCKETS; i++) dyng_free(h->b[i].items);
}


#endif /* DYNG_RADIX_HEAP_H */
