/*
** cuda/dev_graph.cuh: the graph and the shortest-path machinery a CUDA
** backend state keeps in device memory (see dev_backend.cu).
*/
#ifndef DYNG_DEV_GRAPH_CUH
#define DYNG_DEV_GRAPH_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "engine/graph.h"
#include "engine/types.h"
}

/* The last batch's edges in device memory (for repairing kept trees). */
struct DevBatch {
  uint32_t n_rem, n_add;
  int directed;
  const uint32_t *rem_src, *rem_dst, *rem_slot;
  const uint32_t *add_src, *add_dst;
  const double *add_w[DYNG_MAX_WEIGHTS];
  void *dbuf, *hbuf;     /* device and pinned host buffers */
  size_t cap;
};

/* The out-adjacency in device memory, laid out as the host's pool: vertex
** v's entries are positions off[v] .. off[v] + deg[v] - 1 (see
** engine/types.h), so that a batch is followed by copying the entries of the
** vertices it touched (dev_graph_follow). */
struct DevGraph {
  uint32_t n, cap_n;     /* vertices; room for them */
  size_t cap_p;          /* room for entries */
  uint32_t layout;       /* the host view's out.layout this copy follows */
  int n_obj;             /* objectives */
  uint32_t *off, *deg;   /* cap_n each */
  uint32_t *nbr;         /* cap_p: the entry's other end */
  uint32_t *slot;        /* cap_p: the entry's edge slot */
  uint32_t *owner;       /* cap_p: the vertex whose segment holds the entry */
  size_t n_pos;          /* positions in use (the view's out.n_entries) */
  double *w[DYNG_MAX_WEIGHTS]; /* cap_p each */
  double mean_w[DYNG_MAX_WEIGHTS]; /* mean weight per objective (host) */
  int has_zero[DYNG_MAX_WEIGHTS];  /* some weight of the objective is 0 */
  size_t bytes;          /* device bytes held */
  /* Host staging for dev_graph_follow (pinned), grown as needed. */
  void *stage;
  size_t stage_cap;
  void *dstage;          /* its device twin */
  size_t dstage_cap;
  uint32_t *mark;        /* host, per vertex: the follow that last saw it */
  uint32_t mark_cap, mark_gen;
  DevBatch batch;        /* the batch followed last (valid until the next) */
};

/* Work space of one SSSP on the device, sized for n vertices. */
struct DevSssp {
  uint32_t cap;                /* vertices it is sized for */
  unsigned long long *dist;    /* IEEE-754 bits of the distances */
  uint32_t *parent, *pedge;    /* the tree */
  uint32_t *hops;              /* tree depth, for the parents */
  uint32_t *stamp;             /* per vertex: last round it was queued in */
  uint32_t *far_flag;          /* per vertex: in the far queue */
  uint32_t *q[5];              /* near light/heavy in, near light/heavy out, far */
  uint32_t *q2;                /* the far queue being filtered into */
  uint32_t *counters;          /* queue lengths and tallies on the device (16) */
  uint32_t *h_counters;        /* pinned host copy of the counters */
  uint32_t round;              /* the stamps' current round */
  unsigned long long *best;    /* per vertex: (slot << 32 | parent) candidates */
  uint32_t *flag, *anc;        /* the cut, by pointer jumping */
  uint32_t *chg_stamp, *chg_list, chg_gen; /* vertices a repair changed */
  unsigned long long *rows, *h_rows; /* their rows (vertex, dist, edge|parent) */
  uint32_t rows_cap;
  size_t bytes;
};

/* A CUDA error as a dyng error code, with the message kept in `err`. */
int dev_fail(cudaError_t e, const char *what, char *err, size_t n_err);

/* Copies the whole view (the first time, or after the host rewrote its
** pool). */
int dev_graph_upload(DevGraph *g, const dyng_graph_view *v, cudaStream_t s, char *err, size_t n_err);

/* Brings the copy up to date with view v after a batch whose changes are
** ch (NULL: unknown, so everything is copied). */
int dev_graph_follow(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, cudaStream_t s, char *err,
                     size_t n_err);
void dev_graph_free(DevGraph *g);

int dev_sssp_reserve(DevSssp *w, uint32_t n, char *err, size_t n_err);
void dev_sssp_free(DevSssp *w);

int dev_rows_reserve(DevSssp *w, uint32_t n_rows, char *err, size_t n_err);
void dev_batch_free(DevBatch *b);

/* Shortest paths from `source` in objective `obj` over g into the device
** arrays d_dist/d_parent/d_pedge (a kept tree's copy) and the host arrays
** dist/parent/pedge (n entries each). */
int dev_sssp_run(const DevGraph *c, DevSssp *w, uint32_t source, int obj, cudaStream_t s, unsigned long long *d_dist,
                 uint32_t *d_parent, uint32_t *d_pedge, double *dist, uint32_t *parent, uint32_t *pedge, char *err,
                 size_t n_err);

/* Repairs a tree (device copy d_*, host copy dist/parent/pedge) computed
** before the batch g->batch: cut, offers from the cut's border and the
** added edges, the search from what improved, new parents for what changed;
** only the changed rows travel to the host.  *pn_changed gets their number.
** DYNG_ETOOBIG when the objective has zero weights (then recompute). */
int dev_sssp_repair(const DevGraph *c, DevSssp *w, const DevBatch *b, uint32_t source, int obj, cudaStream_t s,
                    unsigned long long *d_dist, uint32_t *d_parent, uint32_t *d_pedge, double *dist,
                    uint32_t *parent, uint32_t *pedge, size_t *pn_changed, char *err, size_t n_err);

#endif /* DYNG_DEV_GRAPH_CUH */
