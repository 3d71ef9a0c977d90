/*
** cuda/dev_graph.cuh: the graph and the shortest-path machinery a CUDA
** backend state keeps in device memory (see dev_backend.cu): the device
** copy of the graph (dev_graph.cu), the SSSP work space and runs
** (dev_sssp.cu), and the helpers every file uses (dev_common.cu).
*/
#ifndef DYNG_DEV_GRAPH_CUH
#define DYNG_DEV_GRAPH_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

extern "C" {
#include "engine/types.h"
}

/* The last batch's edges in device memory (for repairing kept trees). */
struct DevBatch {
  uint32_t n_rem, n_add;
  int directed;
  const uint32_t *rem_src, *rem_dst, *rem_slot;
  const uint32_t *add_src, *add_dst, *add_slot;
  const long long *add_rowid;
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
  /* cap_s: per edge slot, the edge's rowid, which ranks the edges that tie
  ** for a parent (the tie rule of engine/sssp.h); NULL ranks them by slot
  ** (the MOSP ensemble's own entries). */
  long long *rowid;
  uint32_t cap_s;        /* room for edge slots */
  size_t n_pos;          /* positions in use (the view's out.n_entries) */
  double *w[DYNG_MAX_WEIGHTS]; /* cap_p each */
  double mean_w[DYNG_MAX_WEIGHTS]; /* mean weight per objective (host) */
  /* Parents need the search over tight edges: some weight of the objective
  ** is 0, or so small against the weights' sum (which bounds every
  ** distance) that adding it to a distance may change nothing.  Either way
  ** an edge can be tight both ways, and the smallest-slot rule could make
  ** parents that circle. */
  int has_zero[DYNG_MAX_WEIGHTS];
  double sum_w[DYNG_MAX_WEIGHTS];  /* weights' sum, never lowered by deletes */
  double min_w[DYNG_MAX_WEIGHTS];  /* least weight, never raised by deletes */
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

/* Work space of one SSSP on the device, sized for n vertices and a graph of
** cap_p positions (see dev_sssp.cu for the queues and the counters). */
struct DevSssp {
  uint32_t cap;                /* vertices it is sized for */
  size_t heavy_cap;            /* items a heavy frontier holds */
  uint32_t *stamp;             /* per vertex: the last round that queued it */
  uint32_t *far_flag;          /* per vertex: in the far queue */
  uint32_t *light[2];          /* near frontiers: vertices of low degree */
  unsigned long long *heavy[2]; /* near frontiers: (chunk << 32 | vertex) of high degree */
  uint32_t *far[2];            /* the far queue and the one it is filtered into */
  uint32_t *ctr;               /* counters on the device (W_COUNT words) */
  uint32_t *h_ctr;             /* pinned host copy of the counters */
  uint32_t round;              /* the stamps' current round */
  uint32_t *hops;              /* tree depth, for the parents of zero-weight objectives */
  unsigned long long *best;    /* per vertex: (slot << 32 | parent) candidates */
  uint32_t *flag, *anc;        /* the cut, by pointer jumping */
  uint32_t *chg_stamp, *chg_list, chg_gen; /* vertices a repair changed */
  unsigned long long *rows, *h_rows; /* their rows (vertex, dist, edge|parent) */
  uint32_t rows_cap;
  unsigned coop_blocks;        /* blocks of the device-side loops; 0: loops on the host */
  size_t bytes;
};

/* What the last dev_sssp_run or dev_sssp_repair did, for
** DYNG_CUDA_PROFILE (dev_backend.cu prints it). */
struct DevProfile {
  uint32_t rounds, buckets, levels; /* near rounds, far phases, BFS levels */
  uint32_t roots, changed;          /* cut roots; vertices whose row changed */
  unsigned launches, looks;         /* kernels launched; host waits on the stream */
  int full_copy, device_loop;
  double ms[7];                     /* time of each phase (P_...) */
};
enum { P_PREPARE, P_CUT, P_OFFERS, P_SEARCH, P_PARENTS, P_COPY, P_TOTAL };

/* cudaMalloc, except that a request larger than DYNG_CUDA_MAX_ALLOC bytes
** (read once; unset: no limit) fails as out of device memory: the way a
** test makes a graph too large for the device. */
cudaError_t dev_malloc(void **p, size_t bytes);
/* The same from a stream-ordered pool, in the order of `stream` (free it
** with cudaFreeAsync). */
cudaError_t dev_malloc_async(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t stream);

/* Whether a query's stop request (may be NULL) asks to stop now. */
static inline int dev_stop_asked(const dyng_cancel *cancel) {
  return cancel && cancel->should_stop && cancel->should_stop(cancel->ctx);
}

/* Milliseconds on the monotonic clock. */
static inline double dev_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Options from the environment, read once (see cuda/README.md). */
struct DevOptions {
  int profile;        /* DYNG_CUDA_PROFILE=1: a line per search on stderr */
  int host_loop;      /* DYNG_CUDA_HOST_LOOP=1: the loops run on the host */
  int blocks_per_sm;  /* DYNG_CUDA_LOOP_BLOCKS: blocks per SM of the device-side loops */
  double delta;       /* DYNG_CUDA_DELTA: the bucket width, in mean weights */
  size_t max_alloc;   /* DYNG_CUDA_MAX_ALLOC: the largest device allocation allowed */
  int cycles_rebuild; /* DYNG_CUDA_CYCLES_REBUILD=1: cycle snapshots never patched */
};
const DevOptions &dev_options(void);

/* Two of them, for the files that need only these (dev_common.cu). */
int dev_profile_on(void);
/* DYNG_CUDA_CYCLES_REBUILD=1 (for tests): cycle counts build their
** snapshot anew at every batch instead of patching it. */
int dev_cycles_rebuild_on(void);

/* Runs fn(ctx, begin, end) over [0, n) in ranges of `chunk` items on the
** host's threads (dyng_host.parallel_for, engine/plugin.h), or at once on
** the calling thread when the host lent none. */
void dev_parallel_for(size_t n, size_t chunk, void (*fn)(void *ctx, size_t begin, size_t end), void *ctx);

/* A CUDA error as a dyng error code, with the message kept in `err`. */
int dev_fail(cudaError_t e, const char *what, char *err, size_t n_err);

/* dev_malloc of `bytes` (at least 1), added to *total; a failure as
** dev_fail reports it. */
int dev_alloc(void **p, size_t bytes, size_t *total, const char *what, char *err, size_t n_err);

/* The device copy of the graph (dev_graph.cu).  Copies the whole view
** (the first time, or after the host rewrote its pool). */
int dev_graph_upload(DevGraph *g, const dyng_graph_view *v, cudaStream_t s, char *err, size_t n_err);

/* Brings the copy up to date with view v after a batch whose changes are
** ch (NULL: unknown, so everything is copied). */
int dev_graph_follow(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, cudaStream_t s, char *err,
                     size_t n_err);
void dev_graph_free(DevGraph *g);

/* Shortest paths (dev_sssp.cu).  Sizes w for n vertices and a graph of
** cap_p positions. */
int dev_sssp_reserve(DevSssp *w, uint32_t n, size_t cap_p, char *err, size_t n_err);
void dev_sssp_free(DevSssp *w);

int dev_rows_reserve(DevSssp *w, uint32_t n_rows, char *err, size_t n_err);
void dev_batch_free(DevBatch *b);

/* Shortest paths from `source` in objective `obj` over g into the device
** arrays d_dist/d_parent/d_pedge (a kept tree's copy) and, unless dist is
** NULL, the host arrays dist/parent/pedge (n entries each).
** DYNG_EINTERRUPTED when `cancel` (may be NULL) asks to stop, before the
** search or after it. */
int dev_sssp_run(const DevGraph *c, DevSssp *w, uint32_t source, int obj, cudaStream_t s, unsigned long long *d_dist,
                 uint32_t *d_parent, uint32_t *d_pedge, double *dist, uint32_t *parent, uint32_t *pedge,
                 const dyng_cancel *cancel, DevProfile *prof, char *err, size_t n_err);

/* Repairs a tree (device copy d_*, host copy dist/parent/pedge) computed
** before the batch g->batch: cut, offers from the cut's border and the
** added edges, the search from what improved, new parents for what changed;
** the changed rows travel to the host (or, when they are many, the whole
** arrays), unless dist is NULL: then the tree stays on the device.
** *pn_changed gets their number.  DYNG_EINTERRUPTED as for dev_sssp_run. */
int dev_sssp_repair(const DevGraph *c, DevSssp *w, const DevBatch *b, uint32_t source, int obj, cudaStream_t s,
                    unsigned long long *d_dist, uint32_t *d_parent, uint32_t *d_pedge, double *dist,
                    uint32_t *parent, uint32_t *pedge, size_t *pn_changed, const dyng_cancel *cancel,
                    DevProfile *prof, char *err, size_t n_err);

#endif /* DYNG_DEV_GRAPH_CUH */
