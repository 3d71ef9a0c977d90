/*
** engine/idmap.c: open-addressing hash map int64 -> uint32 (see idmap.h).
*/
#include "engine/idmap.h"
#include "engine/error.h"

#include <string.h>

typedef struct dyng__cell {
  int64_t key;
  uint32_t value;
  uint32_t used; /* 1 when the cell holds a key */
} dyng__cell;

struct dyng_idmap {
  dyng__cell *cells; /* 2^k cells */
  size_t mask;       /* number of cells - 1 */
  size_t count;      /* keys stored */
};

/* splitmix64's finalizer: spreads sequential ids over the whole table. */
static inline size_t dyng__hash(int64_t key) {
  uint64_t x = (uint64_t)key;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return (size_t)x;
}

static size_t dyng__cells_for(size_t keys) {
  size_t n = 16;
  while (n * 7 / 10 < keys + 1) n *= 2;
  return n;
}

dyng_idmap *dyng_idmap_new(size_t hint) {
  dyng_idmap *m = dyng_malloc(sizeof *m);
  if (!m) return NULL;
  size_t n = dyng__cells_for(hint);
  m->cells = dyng_calloc(n, sizeof *m->cells);
  if (!m->cells) {
    dyng_free(m);
    return NULL;
  }
  m->mask = n - 1;
  m->count = 0;
  return m;
}

void dyng_idmap_free(dyng_idmap *m) {
  if (!m) return;
  dyng_free(m->cells);
  dyng_free(m);
}

int dyng_idmap_get(const dyng_idmap *m, int64_t key, uint32_t *value) {
  size_t i = dyng__hash(key) & m->mask;
  for (;;) {
    const dyng__cell *c = &m->cells[i];
    if (!c->used) return DYNG_ENOTFOUND;
    if (c->key == key) {
      *value = c->value;
      return DYNG_OK;
    }
    i = (i + 1) & m->mask;
  }
}

/* Rehashes into a table of `n` cells. */
static int dyng__rehash(dyng_idmap *m, size_t n) {
  dyng__cell *cells = dyng_calloc(n, sizeof *cells);
  if (!cells) return DYNG_ENOMEM;
  size_t mask = n - 1;
  for (size_t j = 0; j <= m->mask; j++) {
    const dyng__cell *c = &m->cells[j];
    if (!c->used) continue;
    size_t i = dyng__hash(c->key) & mask;
    while (cells[i].used) i = (i + 1) & mask;
    cells[i] = *c;
  }
  dyng_free(m->cells);
  m->cells = cells;
  m->mask = mask;
  return DYNG_OK;
}

int dyng_idmap_get_or_put(dyng_idmap *m, int64_t key, uint32_t value_if_new,
                          uint32_t *value, int *inserted) {
  size_t i = dyng__hash(key) & m->mask;
  for (;;) {
    dyng__cell *c = &m->cells[i];
    if (!c->used) break;
    if (c->key == key) {
      *value = c->value;
      *inserted = 0;
      return DYNG_OK;
    }
    i = (i + 1) & m->mask;
  }
  if ((m->count + 1) * 10 > (m->mask + 1) * 7) {
    int rc = dyng__rehash(m, (m->mask + 1) * 2);
    if (rc) return rc;
    i = dyng__hash(key) & m->mask;
    while (m->cells[i].used) i = (i + 1) & m->mask;
  }
  m->cells[i].key = key;
  m->cells[i].value = value_if_new;
  m->cells[i].used = 1;
  m->count++;
  *value = value_if_new;
  *inserted = 1;
  return DYNG_OK;
}

int dyng_idmap_put(dyng_idmap *m, int64_t key, uint32_t value) {
  uint32_t old;
  int inserted;
  int rc = dyng_idmap_get_or_put(m, key, value, &old, &inserted);
  if (rc) return rc;
  if (!inserted) {
    size_t i = dyng__hash(key) & m->mask;
    while (m->cells[i].key != key || !m->cells[i].used) i = (i + 1) & m->mask;
    m->cells[i].value = value;
  }
  return DYNG_OK;
}

int dyng_idmap_remove(dyng_idmap *m, int64_t key) {
  size_t i = dyng__hash(key) & m->mask;
  for (;;) {
    if (!m->cells[i].used) return DYNG_ENOTFOUND;
    if (m->cells[i].key == key) break;
    i = (i + 1) & m->mask;
  }
  /* Backward-shift deletion: move later members of the cluster into the hole
  ** when their home position does not lie cyclically in (hole, j]. */
  size_t hole = i, j = i;
  for (;;) {
    j = (j + 1) & m->mask;
    if (!m->cells[j].used) break;
    size_t home = dyng__hash(m->cells[j].key) & m->mask;
    int stays = (hole <= j) ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    m->cells[hole] = m->cells[j];
    hole = j;
  }
  m->cells[hole].used = 0;
  m->count--;
  return DYNG_OK;
}

void dyng_idmap_clear(dyng_idmap *m) {
  memset(m->cells, 0, (m->mask + 1) * sizeof *m->cells);
  m->count = 0;
}

size_t dyng_idmap_size(const dyng_idmap *m) { return m->count; }

size_t dyng_idmap_bytes(const dyng_idmap *m) {
  return sizeof *m + (m->mask + 1) * sizeof *m->cells;
}
