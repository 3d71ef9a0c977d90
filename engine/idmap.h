/*
** engine/idmap.h: a hash map from 64-bit keys to 32-bit values.
**
** The graph uses two of them: node id -> dense vertex index, and the edge
** table's rowid -> edge slot.  Any int64 is a valid key (INT64_MIN and
** INT64_MAX included).
**
** How it works: open addressing with linear probing over a power-of-two
** table of (key, value) pairs kept at most 70% full; a separate bitmap marks
** used cells, so no key value is reserved.  Removal shifts the following
** cluster back (no tombstones), so lookups never slow down after deletes.
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

/* Removes key: 0 when it was there, DYNG_ENOTFOUND otherwise. */
int dyng_idmap_remove(dyng_idmap *m, int64_t key);

/* Removes every key; keeps the table's memory. */
void dyng_idmap_clear(dyng_idmap *m);

/* Number of keys stored. */
size_t dyng_idmap_size(const dyng_idmap *m);

/* Bytes of memory the map holds. */
size_t dyng_idmap_bytes(const dyng_idmap *m);

#endif /* DYNG_IDMAP_H */
