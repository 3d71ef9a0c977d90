/*
** engine/idmap.c: hash map int64 -> uint32 with a dense fast path (see
** idmap.h).
**
** Keys in the window [lo, lo + span) live in a direct array (value or
** DYNG__EMPTY per key); others in an open-addressing hash table.  The window
** starts empty and grows to take in a new key when the result stays dense
** (span at most twice the keys stored plus 1024), so node ids 0..n-1 and
** the rowids of an ordinary table never touch the hash table, while sparse
** ids never make the window large.  A key lives in exactly one of the two
** parts: one that entered the hash table stays there even if the window
** later grows over it, and lookups check the window first, then the hash
** table when it is not empty.
*/
#include "engine/idmap.h"
#include "engine/error.h"

#include <string.h>

#define DYNG__EMPTY UINT32_MAX

typedef struct dyng__cell {
  int64_t key;
  uint32_t value;
  uint32_t used; /* 1 when the cell holds a key */
} dyng__cell;

struct dyng_idmap {
  /* the dense window */
  int64_t lo;        /* first key of the window */
  size_t span;       /* keys in the window (0: no window yet) */
  uint32_t *direct;  /* per key of the window: value or DYNG__EMPTY */
  size_t n_direct;   /* keys stored in the window */
  /* the hash table */
  dyng__cell *cells; /* 2^k cells */
  size_t mask;       /* number of cells - 1 */
  size_t n_hashed;   /* keys stored in the hash table */
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

/* Offset of key in the window, or SIZE_MAX when outside it. */
static inline size_t dyng__slot(const dyng_idmap *m, int64_t key) {
  uint64_t d = (uint64_t)key - (uint64_t)m->lo;
  return (m->span && key >= m->lo && d < m->span) ? (size_t)d : SIZE_MAX;
}

dyng_idmap *dyng_idmap_new(size_t hint) {
  dyng_idmap *m = dyng_calloc(1, sizeof *m);
  if (!m) return NULL;
  /* The hash table starts small: dense keys may never need it. */
  size_t n = dyng__cells_for(hint / 16);
  m->cells = dyng_calloc(n, sizeof *m->cells);
  if (!m->cells) {
    dyng_free(m);
    return NULL;
  }
  m->mask = n - 1;
  return m;
}

void dyng_idmap_free(dyng_idmap *m) {
  if (!m) return;
  dyng_free(m->direct);
  dyng_free(m->cells);
  dyng_free(m);
}

static int dyng__hash_get(const dyng_idmap *m, int64_t key, uint32_t *value) {
  if (m->n_hashed == 0) return DYNG_ENOTFOUND;
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

int dyng_idmap_get(const dyng_idmap *m, int64_t key, uint32_t *value) {
  size_t s = dyng__slot(m, key);
  if (s != SIZE_MAX && m->direct[s] != DYNG__EMPTY) {
    *value = m->direct[s];
    return DYNG_OK;
  }
  return dyng__hash_get(m, key, value);
}

void dyng_idmap_prefetch(const dyng_idmap *m, int64_t key) {
  size_t s = dyng__slot(m, key);
  if (s != SIZE_MAX) __builtin_prefetch(&m->direct[s]);
  else if (m->n_hashed) __builtin_prefetch(&m->cells[dyng__hash(key) & m->mask]);
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

/* Tries to grow the window so that it holds `key`.  Returns 1 when key is
** now inside it, 0 when the window would be too sparse or memory is short
** (the key then goes to the hash table). */
static int dyng__window_take(dyng_idmap *m, int64_t key) {
  size_t keys = m->n_direct + 1;
  size_t limit = 2 * keys + 1024;
  if (!m->span) {
    size_t span = 1024;
    uint32_t *d = dyng_malloc(span * sizeof *d);
    if (!d) return 0;
    memset(d, 0xff, span * sizeof *d);
    m->direct = d;
    m->span = span;
    /* Start small keys at 0 so that ids 0.. and rowids 1.. fit at once;
    ** centre others, clamped so that the window stays inside int64. */
    if (key >= 0 && key < (int64_t)span) m->lo = 0;
    else if (key < INT64_MIN + (int64_t)(span / 2)) m->lo = key;
    else if (key > INT64_MAX - (int64_t)span) m->lo = INT64_MAX - (int64_t)span + 1;
    else m->lo = key - (int64_t)(span / 2);
    return 1;
  }
  /* The window after taking key in: [new_lo, new_hi]. */
  uint64_t hi = (uint64_t)m->lo + m->span - 1;
  int64_t new_lo = key < m->lo ? key : m->lo;
  int64_t cur_hi = (int64_t)hi;
  int64_t new_hi = key > cur_hi ? key : cur_hi;
  uint64_t need = (uint64_t)new_hi - (uint64_t)new_lo + 1;
  if (need == 0 || need > limit) return 0;
  /* Room to grow without reallocating for every key: double the span, but
  ** never past the density limit. */
  uint64_t span = need;
  if (span < m->span * 2) span = m->span * 2;
  if (span > limit) span = limit;
  if (key < m->lo) {
    uint64_t room = span - ((uint64_t)cur_hi - (uint64_t)new_lo + 1);
    if ((uint64_t)new_lo - (uint64_t)INT64_MIN < room) room = (uint64_t)new_lo - (uint64_t)INT64_MIN;
    new_lo = (int64_t)((uint64_t)new_lo - room);
  }
  uint64_t max_span = (uint64_t)INT64_MAX - (uint64_t)new_lo + 1;
  if (max_span && span > max_span) span = max_span;
  if (span > SIZE_MAX / sizeof(uint32_t)) return 0;
  uint32_t *d = dyng_realloc(m->direct, (size_t)span * sizeof *d);
  if (!d) return 0;
  size_t shift = (size_t)((uint64_t)m->lo - (uint64_t)new_lo);
  if (shift) memmove(d + shift, d, m->span * sizeof *d);
  memset(d, 0xff, shift * sizeof *d);
  memset(d + shift + m->span, 0xff, ((size_t)span - shift - m->span) * sizeof *d);
  m->direct = d;
  m->lo = new_lo;
  m->span = (size_t)span;
  return 1;
}

int dyng_idmap_get_or_put(dyng_idmap *m, int64_t key, uint32_t value_if_new,
                          uint32_t *value, int *inserted) {
  size_t s = dyng__slot(m, key);
  if (s != SIZE_MAX && m->direct[s] != DYNG__EMPTY) {
    *value = m->direct[s];
    *inserted = 0;
    return DYNG_OK;
  }
  if (dyng__hash_get(m, key, value) == DYNG_OK) {
    *inserted = 0;
    return DYNG_OK;
  }
  if (s != SIZE_MAX || dyng__window_take(m, key)) {
    m->direct[dyng__slot(m, key)] = value_if_new;
    m->n_direct++;
  } else {
    if ((m->n_hashed + 1) * 10 > (m->mask + 1) * 7) {
      int rc = dyng__rehash(m, (m->mask + 1) * 2);
      if (rc) return rc;
    }
    size_t i = dyng__hash(key) & m->mask;
    while (m->cells[i].used) i = (i + 1) & m->mask;
    m->cells[i].key = key;
    m->cells[i].value = value_if_new;
    m->cells[i].used = 1;
    m->n_hashed++;
  }
  *value = value_if_new;
  *inserted = 1;
  return DYNG_OK;
}

int dyng_idmap_put(dyng_idmap *m, int64_t key, uint32_t value) {
  uint32_t old;
  int inserted;
  int rc = dyng_idmap_get_or_put(m, key, value, &old, &inserted);
  if (rc || inserted) return rc;
  size_t s = dyng__slot(m, key);
  if (s != SIZE_MAX && m->direct[s] != DYNG__EMPTY) {
    m->direct[s] = value;
    return DYNG_OK;
  }
  size_t i = dyng__hash(key) & m->mask;
  while (m->cells[i].key != key || !m->cells[i].used) i = (i + 1) & m->mask;
  m->cells[i].value = value;
  return DYNG_OK;
}

int dyng_idmap_remove(dyng_idmap *m, int64_t key) {
  size_t s = dyng__slot(m, key);
  if (s != SIZE_MAX && m->direct[s] != DYNG__EMPTY) {
    m->direct[s] = DYNG__EMPTY;
    m->n_direct--;
    return DYNG_OK;
  }
  if (m->n_hashed == 0) return DYNG_ENOTFOUND;
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
  m->n_hashed--;
  return DYNG_OK;
}

void dyng_idmap_clear(dyng_idmap *m) {
  if (m->span) memset(m->direct, 0xff, m->span * sizeof *m->direct);
  memset(m->cells, 0, (m->mask + 1) * sizeof *m->cells);
  m->n_direct = m->n_hashed = 0;
}

size_t dyng_idmap_size(const dyng_idmap *m) { return m->n_direct + m->n_hashed; }

size_t dyng_idmap_bytes(const dyng_idmap *m) {
  return sizeof *m + m->span * sizeof *m->direct + (m->mask + 1) * sizeof *m->cells;
}
