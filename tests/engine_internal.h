/*
** tests/engine_internal.h: engine internals that unit tests reach (they are
** built with -DDYNG_TEST); not part of any public header.
*/
#ifndef DYNG_ENGINE_INTERNAL_H
#define DYNG_ENGINE_INTERNAL_H

#ifndef DYNG_TEST
#error "tests/engine_internal.h is for the unit tests"
#endif

#include <stddef.h>
#include <stdint.h>

/* engine/graph_apply.c: batches of at least n_ops operations are applied by the
** team path (several threads), whatever the number of threads; SIZE_MAX:
** never; 0: the engine decides again (size and threads). */
void dyng__graph_set_team_min(size_t n_ops);

/* engine/graph.c: a seal cuts the edge slots into n contiguous ranges,
** whatever the graph's size and the number of threads; 0: the engine
** decides again. */
void dyng__graph_set_seal_ranges(uint32_t n);

/* engine/loader.c: a loader hands its chunks to a helper thread from its
** n-th full chunk on, whatever the number of threads; 0: the engine decides
** again (its own threshold, and only when more than one thread may run). */
void dyng__loader_set_helper_after(unsigned n_chunks);

#endif /* DYNG_ENGINE_INTERNAL_H */
