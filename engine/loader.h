/*
** engine/loader.h: bulk loading of a graph on a second thread.
**
** Reading rows out of SQLite and building the graph from them are both
** sequential; the loader lets them overlap.  The caller (the thread that
** steps the SQLite statement) adds edges; they are copied into chunks that
** a worker thread feeds to dyng_graph_load_edge; dyng_loader_finish waits
** for the worker and seals the graph.  Without thread support (or when the
** worker cannot start) edges are loaded on the caller's thread.
*/
#ifndef DYNG_LOADER_H
#define DYNG_LOADER_H

#include <stdint.h>

#include "engine/alloc.h"
#include "engine/graph.h"

typedef struct dyng_loader dyng_loader;

/* Starts loading into the empty, unsealed graph g (which the loader
** borrows; do not touch it until dyng_loader_finish returns).  *out is new;
** release it with dyng_loader_free. */
int dyng_loader_new(dyng_loader **out, dyng_graph *g) DYNG_WARN_UNUSED;

/* Queues one edge (same rules as dyng_graph_load_edge).  An error of an
** earlier edge may be reported here instead; after an error every further
** call fails with the same code. */
int dyng_loader_add(dyng_loader *l, int64_t rowid, int64_t src, int64_t dst, const double *w);

/* Loads what is queued, stops the worker and seals the graph.  Returns the
** first error of any edge, or of sealing. */
int dyng_loader_finish(dyng_loader *l);

/* Stops the worker if still running (dropping queued edges) and frees the
** loader; accepts NULL.  The graph stays with its owner. */
void dyng_loader_free(dyng_loader *l);

#endif /* DYNG_LOADER_H */
