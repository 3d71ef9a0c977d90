/*
** engine/idmap.h: a hash map from 64-bit keys to 32-bit values.
**
** The graph uses two of them: node id -> dense vertex index, and the edge
** table's rowid -> edge slot.  Any int64 is a valid key (INT64_MIN and
** INT64_MAX included).
**
** Values must be below UINT32_MAX (the engine's indices are below 2^31).
**
** How it works: keys in a dense window (node ids 0..n-1, the rowids of an
** ordinary table) are looked up in a direct array; other keys in an
** open-addressing hash table with linear probing over a power-of-two table
** of (key, value, used) cells kept at most 70% full.  Removal shifts the
** following cluster back (no tombstones), so lookups never slow down after
** deletes.  The window only grows while it stays dense (at most two slots
** per key stored, plus 1024), so sparse ids cost no more memory than the
** hash table alone.
*/
#ifndef DYNG_IDMAP_H
#define DYNG_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "engine/alloc.h"

typedef struct dyng_idmap dyng_idmap;

/* A new, empty map sized for about `hint` keys; NULL when out of memory.
** The caller frees it with dyng_idmap_free. */
dyng_idmap *dyng_idmap_new(size_t hint) DYNG_WARN_UNUSED;

/* Frees the map; accepts NULL. */
void dyng_idmap_free(dyng_idmap *m);

/* Looks key up: 0 and *value set when found, DYNG_ENOTFOUND otherwise. */
int dyng_idmap_get(const dyng_idmap *m, int64_t key, uint32_t *value);

/* Sets key -> value, inserting or overwriting.  DYNG_ENOMEM when the table
** had to grow and could not (the map is unchanged then). */
int dyng_idmap_put(dyng_idmap *m, int64_t key, uint32_t value);

/* Looks key up and, when absent, inserts key -> value_if_new.  *value gets
** the value now stored, *inserted 1 when the key was new.  DYNG_ENOMEM as for
** dyng_idmap_put. */
int dyng_idmap_get_or_put(dyng_idmap *m, int64_t key, uint32_t value_if_new,
                          uint32_t *value, int *inserted);

/* A hint that key will be looked up soon: starts loading the memory the
** lookup reads.  No effect on the map. */
void dyng_idmap_prefetch(const dyng_idmap *m, int64_t key);

/* Removes key: 0 when it was there, DYNG_ENOTFOUND otherwise. */
int dyng_idmap_remove(dyng_idmap *m, int64_t key);

/* Removes every key; keeps the table's memory. */
void dyng_idmap_clear(dyng_idmap *m);

/* Number of keys stored. */
size_t dyng_idmap_size(const dyng_idmap *m);

/* Bytes of memory the map holds. */
size_t dyng_idmap_bytes(const dyng_idmap *m);

#endif /* DYNG_IDMAP_H */
