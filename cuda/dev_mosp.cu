/*
** cuda/dev_mosp.cu: the MOSP ensemble path (engine/mosp.h) on the device,
** the CUDA backend's mosp_path.
**
** It serves dyng_mosp on a graph that lives on CUDA, e.g.
**
**   SELECT seq, node, edge, agg_costs FROM dyng_mosp('net', 1, 42);
**
** whose trees, one per objective, are the device's kept copies (DevTree),
** repaired there after every batch.  Only the path comes back to the host.
**
** How it works: the ensemble graph is built in device memory exactly as
** engine/mosp.c lays it out.  Candidate (tree i, vertex v), numbered
** i * n + v, is an entry when v's parent edge in tree i is an edge slot
** that no earlier tree gives v; its key is the tree parent (the tail), or n
** for no entry.  Counting entries per tail and a scan give the CSR's
** offsets; a stable radix sort of the candidates by key puts every tail's
** entries in (i, v) order, the CPU's loop order, so entry p here is entry p
** there.  Each entry weighs K + 1 - (trees whose parent edge of v is that
** slot) and is its own edge: its slot is its position, ranked by the rowid
** of the graph's edge it stands for.  The shortest paths over it are the
** near-far search of dev_sssp.cu, which keeps as parent the tight in-entry
** of smallest rank, that is of smallest rowid: the rule engine/mosp.c walks
** back by, so the two paths are the same.  Distances are sums of small
** integers, exact in doubles on both sides.  One thread
** then walks from the target to the source; the path's length and cost
** come back first, then the path itself when it fits the caller's room.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_VERTEX 0xffffffffu
#define INF_BITS 0x7ff0000000000000ULL /* +infinity */
#define THREADS 256

/* The work space of the ensemble path, kept across calls and grown as
** needed.  Entry arrays hold k * n candidates (every one may be an entry). */
struct DevMosp {
  uint32_t cap_n;              /* vertices the per-vertex arrays hold */
  size_t cap_e;                /* candidates the per-entry arrays hold */
  uint32_t *off, *deg;         /* cap_n + 1: the ensemble's CSR (deg first holds counts) */
  uint32_t *nbr, *slot;        /* cap_e: head, and the entry itself as an edge (its position) */
  uint32_t *owner;             /* cap_e: the tail (sorted keys; n - 1 past the entries) */
  uint32_t *orig;              /* cap_e: the graph's edge slot (first the sorted candidates) */
  long long *rank;             /* cap_e: the rowid of that edge */
  double *w;                   /* cap_e: K + 1 - trees */
  unsigned long long *dist;    /* cap_n: the search's distances (bits) */
  uint32_t *parent, *pedge;    /* cap_n: its parents and parent entries */
  uint32_t *rev_vertex, *rev_edge; /* cap_n: the path from the target back */
  unsigned long long *result;  /* 2 words: vertices on the path, its cost (bits) */
  unsigned long long *h_result; /* pinned host copy of them */
  void *temp;                  /* cub's temporary storage */
  size_t temp_cap;
  size_t bytes;                /* device bytes held */
};

/* The trees of one query, by value into the kernels. */
struct MospTrees {
  const uint32_t *parent[DYNG_MAX_WEIGHTS];
  const uint32_t *pedge[DYNG_MAX_WEIGHTS];
  int k;
};

size_t dev_mosp_bytes(const DevMosp *m) { return m ? m->bytes : 0; }

/* Releases the arrays; the struct stays, empty. */
static void mosp_release(DevMosp *m) {
  void *dev[] = {m->off, m->deg, m->nbr, m->slot, m->owner, m->orig, m->rank, m->w, m->dist,
                 m->parent, m->pedge, m->rev_vertex, m->rev_edge, m->result, m->temp};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
  cudaFreeHost(m->h_result);
  memset(m, 0, sizeof *m);
}

void dev_mosp_free(DevMosp *m) {
  if (!m) return;
  mosp_release(m);
  free(m);
}

static int mosp_alloc(void **p, size_t bytes, size_t *total, char *err, size_t n_err) {
  int rc = dev_fail(dev_malloc(p, bytes ? bytes : 1), "cudaMalloc (ensemble graph)", err, n_err);
  if (rc == DYNG_OK) *total += bytes;
  return rc;
}

/* Room for n vertices and k * n candidates, and `temp` bytes of cub's
** temporary storage. */
static int mosp_reserve(DevMosp *m, uint32_t n, size_t n_cand, size_t temp, char *err, size_t n_err) {
  int rc = DYNG_OK;
  if (!m->off || m->cap_n < n || m->cap_e < n_cand) {
    mosp_release(m);
    uint32_t cap_n = n + n / 8 + 1024 > n ? n + n / 8 + 1024 : n;
    size_t cap_e = n_cand + n_cand / 8 + 1024;
    size_t vn = (size_t)cap_n + 1;
    struct {
      void **p;
      size_t bytes;
    } a[] = {{(void **)&m->off, vn * 4},       {(void **)&m->deg, vn * 4},         {(void **)&m->nbr, cap_e * 4},
             {(void **)&m->slot, cap_e * 4},   {(void **)&m->owner, cap_e * 4},    {(void **)&m->orig, cap_e * 4},
             {(void **)&m->w, cap_e * 8},      {(void **)&m->rank, cap_e * 8},     {(void **)&m->dist, vn * 8},
             {(void **)&m->parent, vn * 4},
             {(void **)&m->pedge, vn * 4},     {(void **)&m->rev_vertex, vn * 4},  {(void **)&m->rev_edge, vn * 4},
             {(void **)&m->result, 16}};
    for (size_t i = 0; i < sizeof a / sizeof *a && rc == DYNG_OK; i++)
      rc = mosp_alloc(a[i].p, a[i].bytes, &m->bytes, err, n_err);
    if (rc == DYNG_OK && cudaMallocHost((void **)&m->h_result, 16) != cudaSuccess) {
      cudaGetLastError();
      snprintf(err, n_err, "cudaMallocHost: out of pinned host memory");
      rc = DYNG_ENOMEM;
    }
    if (rc != DYNG_OK) {
      mosp_release(m);
      return rc;
    }
    m->cap_n = cap_n;
    m->cap_e = cap_e;
  }
  if (m->temp_cap < temp) {
    cudaFree(m->temp);
    m->bytes -= m->temp_cap;
    m->temp = NULL;
    m->temp_cap = 0;
    size_t cap = temp + temp / 4 + 4096;
    if ((rc = mosp_alloc(&m->temp, cap, &m->bytes, err, n_err)) != DYNG_OK) return rc;
    m->temp_cap = cap;
  }
  return DYNG_OK;
}

static unsigned blocks_for(uint64_t n) {
  uint64_t b = (n + THREADS - 1) / THREADS;
  if (b < 1) b = 1;
  if (b > 65535) b = 65535;
  return (unsigned)b;
}

/* ---- the ensemble graph ----------------------------------------------- */

/* Candidate c = i * n + v: key the tail when v's parent edge in tree i is a
** slot of the graph that no tree before i gives v (engine/mosp.c's "first"),
** else n; counts the entries of every tail. */
__global__ void k_candidates(MospTrees T, uint32_t n, uint32_t n_slots, size_t n_cand, uint32_t *key,
                             uint32_t *cand, uint32_t *count) {
  for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < n_cand; c += (size_t)gridDim.x * blockDim.x) {
    uint32_t i = (uint32_t)(c / n), v = (uint32_t)(c - (size_t)i * n);
    uint32_t e = T.pedge[i][v], u = n;
    if (e != NO_VERTEX && e < n_slots) {
      int first = 1;
      for (uint32_t j = 0; j < i; j++)
        if (T.pedge[j][v] == e) first = 0;
      uint32_t p = T.parent[i][v];
      if (first && p < n) {
        u = p;
        atomicAdd(&count[u], 1u);
      }
    }
    key[c] = u;
    cand[c] = (uint32_t)c;
  }
}

/* Entry p of the ensemble from the sorted candidates: sorted[p] (read from
** orig[p], then overwritten there by the graph's slot) and its tail
** owner[p].  Positions past the entries get the last vertex as owner, whose
** segment ends before them, so that they are never live. */
__global__ void k_entries(MospTrees T, uint32_t n, size_t n_cand, const long long *rowid, uint32_t *nbr,
                          uint32_t *slot, uint32_t *owner, uint32_t *orig, long long *rank, double *w) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_cand; p += (size_t)gridDim.x * blockDim.x) {
    slot[p] = (uint32_t)p;
    if (owner[p] >= n) {
      owner[p] = n - 1;
      nbr[p] = 0;
      orig[p] = NO_VERTEX;
      w[p] = 1.0;
      continue;
    }
    uint32_t c = orig[p], i = c / n, v = c - i * n;
    uint32_t e = T.pedge[i][v];
    int trees = 0;
    for (int j = 0; j < T.k; j++) trees += T.pedge[j][v] == e;
    nbr[p] = v;
    orig[p] = e;
    rank[p] = rowid[e];
    w[p] = (double)(T.k + 1 - trees);
  }
}

__global__ void k_degrees(const uint32_t *off, uint32_t n, uint32_t *deg) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    deg[v] = off[v + 1] - off[v];
}

/* The path from the target back to the source, one thread: rev_vertex[0]
** is the target, rev_edge[j] the graph's slot between rev_vertex[j + 1] and
** rev_vertex[j].  result[0] gets the vertices (0: unreachable; ~0: the
** parents do not lead to the source), result[1] the target's distance. */
__global__ void k_walk(const unsigned long long *dist, const uint32_t *parent, const uint32_t *pedge,
                       const uint32_t *orig, uint32_t n, uint32_t source, uint32_t target, uint32_t *rev_vertex,
                       uint32_t *rev_edge, unsigned long long *result) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned long long d = dist[target];
  result[1] = d;
  if (d == INF_BITS) {
    result[0] = 0;
    return;
  }
  uint32_t len = 0, v = target;
  while (v != source && len < n - 1) {
    uint32_t u = parent[v], p = pedge[v];
    rev_vertex[len] = v;
    rev_edge[len] = p == NO_VERTEX ? NO_VERTEX : orig[p];
    len++;
    if (u >= n) break;
    v = u;
  }
  if (v != source) {
    result[0] = ~0ULL;
    return;
  }
  rev_vertex[len++] = source;
  result[0] = len;
}

/* ---- the entry ---------------------------------------------------------- */

#define TRY(call, what)                                                  \
  do {                                                                   \
    int rc_ = dev_fail((call), (what), err, n_err);                      \
    if (rc_ != DYNG_OK) return rc_;                                      \
  } while (0)

#define LAUNCHED(what) TRY(cudaGetLastError(), what)

/* The device copies of trees[0 .. k) into *T: each must be kept, up to
** date and from `source`; anything else is DYNG_ESTATE (the host computes
** nothing in the device's place). */
static int mosp_trees(DevState *st, const dyng_sssp_tree *const *trees, int k, uint32_t n, uint32_t source,
                      MospTrees *T) {
  memset(T, 0, sizeof *T);
  T->k = k;
  for (int i = 0; i < k; i++) {
    const DevTree *dt = dev_tree_find(st, trees[i]);
    const char *why = !dt                       ? "is not on the device"
                      : !dt->valid               ? "is out of date on the device"
                      : dt->source != source || trees[i]->source != source ? "is from another source"
                      : dt->cap < n || trees[i]->n_vertices < n ? "has fewer vertices than the graph"
                                                                : NULL;
    if (why) {
      snprintf(st->err, sizeof st->err, "ensemble path: the tree of objective %d %s", i, why);
      return DYNG_ESTATE;
    }
    T->parent[i] = dt->parent;
    T->pedge[i] = dt->pedge;
  }
  return DYNG_OK;
}

/* Builds the ensemble graph of T over n vertices into m, presented as *g. */
static int mosp_build(DevMosp *m, const MospTrees &T, uint32_t n, uint32_t n_slots, const long long *rowid,
                      cudaStream_t s, DevGraph *g, char *err, size_t n_err) {
  size_t n_cand = (size_t)T.k * n;
  int end_bit = 32 - __builtin_clz(n); /* keys 0 .. n */
  size_t scan_bytes = 0, sort_bytes = 0;
  TRY(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (uint32_t *)NULL, (uint32_t *)NULL, (int)n + 1, s),
      "cub scan (ensemble graph)");
  TRY(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const uint32_t *)NULL, (uint32_t *)NULL,
                                      (const uint32_t *)NULL, (uint32_t *)NULL, (int)n_cand, 0, end_bit, s),
      "cub sort (ensemble graph)");
  int rc = mosp_reserve(m, n, n_cand, scan_bytes > sort_bytes ? scan_bytes : sort_bytes, err, n_err);
  if (rc != DYNG_OK) return rc;

  /* Candidates: keys into nbr, their numbers into slot, counts into deg. */
  TRY(cudaMemsetAsync(m->deg, 0, ((size_t)n + 1) * 4, s), "cudaMemset");
  k_candidates<<<blocks_for(n_cand), THREADS, 0, s>>>(T, n, n_slots, n_cand, m->nbr, m->slot, m->deg);
  LAUNCHED("k_candidates");
  size_t bytes = m->temp_cap;
  TRY(cub::DeviceScan::ExclusiveSum(m->temp, bytes, m->deg, m->off, (int)n + 1, s), "cub scan (ensemble graph)");
  /* Stable, so every tail's entries keep the (tree, vertex) order. */
  bytes = m->temp_cap;
  TRY(cub::DeviceRadixSort::SortPairs(m->temp, bytes, m->nbr, m->owner, m->slot, m->orig, (int)n_cand, 0, end_bit, s),
      "cub sort (ensemble graph)");
  k_entries<<<blocks_for(n_cand), THREADS, 0, s>>>(T, n, n_cand, rowid, m->nbr, m->slot, m->owner, m->orig, m->rank,
                                                   m->w);
  LAUNCHED("k_entries");
  k_degrees<<<blocks_for(n), THREADS, 0, s>>>(m->off, n, m->deg);
  LAUNCHED("k_degrees");

  memset(g, 0, sizeof *g);
  g->n = g->cap_n = n;
  g->cap_p = g->n_pos = n_cand;
  g->n_obj = 1;
  g->off = m->off, g->deg = m->deg, g->nbr = m->nbr, g->slot = m->slot, g->owner = m->owner;
  g->w[0] = m->w;
  g->rowid = m->rank; /* per entry, which is its own slot */
  /* Weights are 1 .. K; the search's bucket width follows a mean weight,
  ** and any positive width gives the same distances. */
  g->mean_w[0] = (T.k + 1) / 2.0;
  g->min_w[0] = 1.0;
  g->sum_w[0] = (double)T.k * (double)n_cand;
  g->has_zero[0] = 0;
  return DYNG_OK;
}

static int mosp_path(DevState *st, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                     uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge, uint32_t *pn,
                     double *ensemble_cost) {
  char *err = st->err;
  size_t n_err = sizeof st->err;
  uint32_t n = view->n_vertices;
  *pn = 0;
  *ensemble_cost = 0;
  if (k < 1 || k > DYNG_MAX_WEIGHTS || source >= n || target >= n) return DYNG_EINVAL;
  if ((size_t)k * n > 0x7fffffffu) {
    snprintf(st->err, sizeof st->err, "ensemble path: %d trees of %u vertices exceed the device's sort", k, n);
    return DYNG_ENOMEM;
  }
  MospTrees T;
  int rc = mosp_trees(st, trees, k, n, source, &T);
  if (rc != DYNG_OK) return rc;
  if (dev_stop_asked(view->cancel)) return DYNG_EINTERRUPTED;
  if (!st->mosp && !(st->mosp = (DevMosp *)calloc(1, sizeof *st->mosp))) return DYNG_ENOMEM;
  DevMosp *m = st->mosp;
  cudaStream_t s = st->stream;
  DevGraph g;
  if ((rc = mosp_build(m, T, n, view->n_edge_slots, st->csr.rowid, s, &g, err, n_err)) != DYNG_OK) return rc;
  /* The search polls view->cancel before it starts and after it ends; its
  ** tree stays on the device (no host arrays). */
  rc = dev_sssp_run(&g, &st->ws, source, 0, s, m->dist, m->parent, m->pedge, NULL, NULL, NULL, view->cancel, NULL,
                    err, n_err);
  if (rc != DYNG_OK) return rc;
  k_walk<<<1, 32, 0, s>>>(m->dist, m->parent, m->pedge, m->orig, n, source, target, m->rev_vertex, m->rev_edge,
                          m->result);
  LAUNCHED("k_walk");
  TRY(cudaMemcpyAsync(m->h_result, m->result, 16, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "the ensemble path");
  unsigned long long len = m->h_result[0], bits = m->h_result[1];
  if (len == 0) return DYNG_OK;
  if (len > n) {
    snprintf(st->err, sizeof st->err, "ensemble path: the parents from vertex %u do not lead to the source %u",
             target, source);
    return DYNG_EBACKEND;
  }
  memcpy(ensemble_cost, &bits, sizeof bits);
  *pn = (uint32_t)len;
  if (len > cap) return DYNG_ENOROOM;
  TRY(cudaMemcpyAsync(vertex, m->rev_vertex, len * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  if (len > 1) TRY(cudaMemcpyAsync(edge, m->rev_edge, (len - 1) * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "copying the ensemble path");
  /* From the target back to the source: turn it around. */
  for (uint32_t a = 0, b = (uint32_t)len - 1; a < b; a++, b--) {
    uint32_t x = vertex[a];
    vertex[a] = vertex[b], vertex[b] = x;
  }
  if (len > 1)
    for (uint32_t a = 0, b = (uint32_t)len - 2; a < b; a++, b--) {
      uint32_t x = edge[a];
      edge[a] = edge[b], edge[b] = x;
    }
  return DYNG_OK;
}

int dev_mosp_path(void *state, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                  uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge, uint32_t *n,
                  double *ensemble_cost) {
  DevState *st = (DevState *)state;
  st->err[0] = 0;
  return mosp_path(st, view, trees, k, source, target, cap, vertex, edge, n, ensemble_cost);
}
