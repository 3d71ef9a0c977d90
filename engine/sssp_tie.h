/*
** engine/sssp_tie.h: the tie rule of engine/sssp.h as the searches weigh an
** offer (internal; static inline functions for sssp.c and sssp_dyn.c).
*/
#ifndef DYNG_SSSP_TIE_H
#define DYNG_SSSP_TIE_H

#include "engine/types.h"

/* The rank of edge slot s among the edges that tie: its rowid, or the slot
** itself in a view without rowids (the MOSP ensemble, hand-built views). */
static inline int64_t dyng__edge_rank(const dyng_graph_view *g, uint32_t s) {
  return g->edge_rowid ? g->edge_rowid[s] : (int64_t)s;
}

/* The level an edge from a tail at distance du (level hu) offers at nd. */
static inline uint32_t dyng__offer_level(double du, uint32_t hu, double nd) {
  return nd > du ? 0u : hu + 1u;
}

#endif /* DYNG_SSSP_TIE_H */
