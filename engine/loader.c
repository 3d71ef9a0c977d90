/*
** engine/loader.c: the chunked bulk loader (see loader.h).
*/
#include "engine/loader.h"
#include "engine/error.h"

#include <string.h>

#define DYNG__CHUNK 4096

struct dyng_loader {
  dyng_graph *g;
  int n_weights;
  int rc;                       /* first error; sticky */
  size_t n;                     /* edges queued */
  int64_t rowid[DYNG__CHUNK];
  int64_t src[DYNG__CHUNK];
  int64_t dst[DYNG__CHUNK];
  double *w;                    /* n_weights per queued edge */
};

int dyng_loader_new(dyng_loader **out, dyng_graph *g) {
  *out = NULL;
  dyng_loader *l = dyng_malloc(sizeof *l);
  if (!l) return DYNG_ENOMEM;
  l->g = g;
  l->n_weights = dyng_graph_n_weights(g);
  l->rc = DYNG_OK;
  l->n = 0;
  l->w = dyng_malloc((size_t)DYNG__CHUNK * (size_t)(l->n_weights ? l->n_weights : 1) *
                     sizeof(double));
  if (!l->w) {
    dyng_free(l);
    return DYNG_ENOMEM;
  }
  *out = l;
  return DYNG_OK;
}

/* Loads the queued edges into the graph, prefetching the lookups of an
** edge a few ahead. */
static int dyng__flush(dyng_loader *l) {
  int nw = l->n_weights;
  for (size_t i = 0; i < l->n && l->rc == DYNG_OK; i++) {
    size_t a = i + DYNG_LOAD_AHEAD;
    if (a < l->n) dyng_graph_prefetch_load(l->g, l->rowid[a], l->src[a], l->dst[a]);
    l->rc = dyng_graph_load_edge(l->g, l->rowid[i], l->src[i], l->dst[i],
                                 nw ? l->w + i * (size_t)nw : NULL);
  }
  l->n = 0;
  return l->rc;
}

int dyng_loader_add(dyng_loader *l, int64_t rowid, int64_t src, int64_t dst, const double *w) {
  if (l->rc != DYNG_OK) return l->rc;
  size_t i = l->n++;
  l->rowid[i] = rowid;
  l->src[i] = src;
  l->dst[i] = dst;
  if (l->n_weights) memcpy(l->w + i * (size_t)l->n_weights, w, (size_t)l->n_weights * sizeof *w);
  return l->n == DYNG__CHUNK ? dyng__flush(l) : DYNG_OK;
}

int dyng_loader_finish(dyng_loader *l) {
  int rc = dyng__flush(l);
  return rc == DYNG_OK ? dyng_graph_seal(l->g) : rc;
}

void dyng_loader_free(dyng_loader *l) {
  if (!l) return;
  dyng_free(l->w);
  dyng_free(l);
}
