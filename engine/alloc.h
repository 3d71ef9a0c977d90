/*
** engine/alloc.h: the engine's one allocator seam.
**
** Every allocation of the engine goes through dyng_malloc / dyng_calloc /
** dyng_realloc and is released with dyng_free.  Tests use
** dyng_alloc_fail_after() to make the n-th allocation from now fail, and so
** reach every out-of-memory path; in normal use the seam costs one relaxed
** atomic load per allocation.
*/
#ifndef DYNG_ALLOC_H
#define DYNG_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DYNG_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define DYNG_WARN_UNUSED
#endif

/* malloc(n); NULL on failure or when a failure is injected.  n == 0 gives a
** unique pointer that dyng_free accepts. */
void *dyng_malloc(size_t n) DYNG_WARN_UNUSED;

/* calloc(count, size), with overflow of count * size reported as NULL. */
void *dyng_calloc(size_t count, size_t size) DYNG_WARN_UNUSED;

/* realloc(p, n); on failure NULL is returned and p is left as it was. */
void *dyng_realloc(void *p, size_t n) DYNG_WARN_UNUSED;

/* Releases what the functions above returned; accepts NULL. */
void dyng_free(void *p);

/* Failure injection: after this call, allocations succeed `n` more times and
** then every one fails until the next call.  n < 0 turns injection off (the
** default).  Process-wide; meant for single-threaded tests. */
void dyng_alloc_fail_after(long n);

/* The number of allocations made through the seam since the process started
** (successful or not); tests use it to size their failure loops. */
unsigned long dyng_alloc_count(void);

/* Reallocates the array *pp (a pointer to any pointer) to `n` items of
** `elem` bytes; on failure DYNG_ENOMEM and *pp is left as it was. */
int dyng_resize(void *pp, size_t n, size_t elem) DYNG_WARN_UNUSED;

/* Grows an array of `elem` bytes per item so that it holds at least `need`
** items, doubling.  Updates *pp and *pcap only on success. */
int dyng_grow(void **pp, size_t *pcap, size_t need, size_t elem) DYNG_WARN_UNUSED;

/* A growable list of 32-bit words (the searches' stacks and frontiers of
** vertices); zero it to start, dyng_free its v to end. */
typedef struct dyng_u32_list {
  uint32_t *v;
  size_t n, cap;
} dyng_u32_list;

/* Appends x: DYNG_OK, or nonzero (out of memory) with the list unchanged. */
static inline int dyng_u32_push(dyng_u32_list *l, uint32_t x) {
  if (l->n == l->cap && dyng_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
  l->v[l->n++] = x;
  return 0;
}

#endif /* DYNG_ALLOC_H */
