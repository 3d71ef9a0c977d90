/*
** cuda/dev_state.cuh: the CUDA backend's per-graph state (dev_backend.cu),
** shared with the files that compute the other analyses on it: cycle counts
** (dev_cycles.cu) and the MOSP ensemble path (dev_mosp.cu).
*/
#ifndef DYNG_DEV_STATE_CUH
#define DYNG_DEV_STATE_CUH

#include "cuda/dev_graph.cuh"

/* The device copy of a host tree this backend computed, kept or held by a
** query (found by the host tree's address; freed by tree_release). */
struct DevTree {
  DevTree *next;
  const dyng_sssp_tree *key;
  uint32_t source, cap;
  int obj;
  int valid;                 /* equals the host's copy */
  unsigned long long *dist;  /* cap each: the distance's IEEE-754 bits */
  uint32_t *parent, *pedge;
};

struct DevCycles; /* dev_cycles.cu: what counting cycles keeps */
struct DevMosp;   /* dev_mosp.cu: the ensemble path's work space */

struct DevState {
  cudaStream_t stream;       /* every kernel and copy of this graph */
  DevGraph csr;
  DevSssp ws;
  DevTree *trees;
  DevCycles *cycles;         /* NULL until cycles are counted */
  DevMosp *mosp;             /* NULL until an ensemble path is asked for */
  /* Rows a query asks for (dev_tree_fetch, dev_tree_path): vertices or
  ** (vertex, dist, edge << 32 | parent) triples, on the device and pinned
  ** on the host, room for pick_cap rows. */
  unsigned long long *d_pick, *h_pick;
  uint32_t pick_cap;
  char err[512];
};

/* The device copy of host tree t, or NULL (dev_backend.cu). */
DevTree *dev_tree_find(const DevState *st, const dyng_sssp_tree *t);

/* Cycle counts on the device (engine/backend.h's cycles_count and
** cycles_delta). */
int dev_cycles_count(void *state, const dyng_graph_view *view, int k, int directed, uint64_t *count);
int dev_cycles_delta(void *state, const dyng_graph_view *view, const dyng_changes *changes, int k, int directed,
                     dyng_cycles_diff *delta);
/* The graph changed in a way the kept snapshot cannot follow: it goes. */
void dev_cycles_stale(DevCycles *c);
/* The device copy followed the batch `changes` (graph_update): the kept
** snapshot is one batch behind, and is patched when cycles_delta comes with
** that batch; NULL, or a second batch, and it goes. */
void dev_cycles_followed(DevCycles *c, const dyng_changes *changes);
size_t dev_cycles_bytes(const DevCycles *c);
void dev_cycles_free(DevCycles *c); /* accepts NULL */

/* The MOSP ensemble path on the device (engine/backend.h's mosp_path). */
int dev_mosp_path(void *state, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                  uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge, uint32_t *n,
                  double *ensemble_cost);
size_t dev_mosp_bytes(const DevMosp *m);

/* Cost matrices on the device (engine/backend.h's matrix; dev_matrix.cu). */
int dev_matrix(void *state, const dyng_graph_view *view, int objective, const uint32_t *sources, size_t n_sources,
               const uint32_t *targets, size_t n_targets, double *out);
void dev_mosp_free(DevMosp *m); /* accepts NULL */

#endif /* DYNG_DEV_STATE_CUH */
