/*
** engine/loader.h: bulk loading of a graph in chunks.
**
** Reading rows out of SQLite and building the graph from them touch very
** different memory.  Interleaving them row by row makes each evict the
** other's cache lines; the loader copies rows into a chunk of a few thousand
** edges and loads the chunk in one go, so each side runs with a warm cache.
** A large load (past a few hundred thousand edges, when dyng_threads()
** allows more than one thread) loads the chunks on a helper thread while
** the caller fills the next ones: the two run side by side, to the same
** graph.  A small one runs on the caller's thread alone: a process that
** starts a thread makes every later lock of it (SQLite's mutexes, malloc)
** pay for atomics.  Until dyng_loader_finish or dyng_loader_free the graph
** is the loader's: read it only through dyng_loader_graph_bytes.
*/
#ifndef DYNG_LOADER_H
#define DYNG_LOADER_H

#include <stdint.h>

#include "engine/alloc.h"
#include "engine/graph.h"

typedef struct dyng_loader dyng_loader;

/* Starts loading into the empty, unsealed graph g (which the loader
** borrows).  *out is new; release it with dyng_loader_free. */
int dyng_loader_new(dyng_loader **out, dyng_graph *g) DYNG_WARN_UNUSED;

/* Queues one edge (same rules as dyng_graph_load_edge).  An error of an
** earlier queued edge may be reported here instead; after an error every
** further call fails with the same code. */
int dyng_loader_add(dyng_loader *l, int64_t rowid, int64_t src, int64_t dst, const double *w);

/* The graph's bytes (dyng_graph_bytes) as of the last chunk loaded. */
size_t dyng_loader_graph_bytes(const dyng_loader *l);

/* Loads what is queued and seals the graph.  Returns the first error of
** any edge, or of sealing. */
int dyng_loader_finish(dyng_loader *l);

/* Frees the loader (queued edges are dropped); accepts NULL.  The graph
** stays with its owner. */
void dyng_loader_free(dyng_loader *l);

#endif /* DYNG_LOADER_H */
