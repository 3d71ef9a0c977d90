/*
** engine/alloc.c: the allocator seam (see alloc.h) and its failure injection.
*/
#include "engine/alloc.h"
#include "engine/error.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* Allocations left before injected failures start; < 0 means never. */
static _Atomic long dyng__fail_countdown = -1;
static _Atomic unsigned long dyng__alloc_calls = 0;

/* Returns 1 when this allocation must fail. */
static int dyng__alloc_should_fail(void) {
  atomic_fetch_add_explicit(&dyng__alloc_calls, 1, memory_order_relaxed);
  long left = atomic_load_explicit(&dyng__fail_countdown, memory_order_relaxed);
  if (left < 0) return 0;
  if (left == 0) return 1;
  atomic_fetch_sub_explicit(&dyng__fail_countdown, 1, memory_order_relaxed);
  return 0;
}

void dyng_alloc_fail_after(long n) {
  atomic_store_explicit(&dyng__fail_countdown, n < 0 ? -1 : n, memory_order_relaxed);
}

unsigned long dyng_alloc_count(void) {
  return atomic_load_explicit(&dyng__alloc_calls, memory_order_relaxed);
}

void *dyng_malloc(size_t n) {
  if (dyng__alloc_should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *dyng_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  if (dyng__alloc_should_fail()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *dyng_realloc(void *p, size_t n) {
  if (dyng__alloc_should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void dyng_free(void *p) { free(p); }

int dyng_resize(void *pp, size_t n, size_t elem) {
  void **p = pp;
  if (elem && n > SIZE_MAX / elem) return DYNG_ENOMEM;
  void *q = dyng_realloc(*p, n * elem);
  if (!q) return DYNG_ENOMEM;
  *p = q;
  return DYNG_OK;
}

int dyng_grow(void **pp, size_t *pcap, size_t need, size_t elem) {
  if (need <= *pcap) return DYNG_OK;
  size_t cap = *pcap ? *pcap : 16;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) return DYNG_ENOMEM;
    cap *= 2;
  }
  if (elem && cap > SIZE_MAX / elem) return DYNG_ENOMEM;
  void *p = dyng_realloc(*pp, cap * elem);
  if (!p) return DYNG_ENOMEM;
  *pp = p;
  *pcap = cap;
  return DYNG_OK;
}
