/*
** cuda/dev_sssp.cu: shortest paths on the device copy of a graph
** (cuda/dev_graph.cu).
**
** Shortest paths are a near-far frontier method (delta-stepping with two
** buckets): distances live as the IEEE-754 bits of non-negative doubles,
** which order like unsigned integers, so a relaxation is one 64-bit
** atomicMin.  A vertex whose distance drops below the threshold T joins the
** next near frontier (once per round, by a stamp), one at or above T the far
** queue (once, by a flag).  When the near frontier is empty, T moves past
** the smallest far distance by delta and the far queue is filtered: entries
** already settled below the old T are dropped, those now below T become the
** near frontier.  A frontier vertex of low degree is expanded by TEAM
** threads, an edge each (a round's time is the latency of its longest chain
** of dependent loads and atomics, so the edges of a vertex go side by side);
** one of high degree is queued as chunks of HEAVY_CHUNK entries, each
** expanded by a warp, so that a hub's edges spread over the whole GPU.
**
** The whole loop runs on the device: one cooperative kernel (k_search)
** whose rounds are separated by grid-wide barriers, with the queue lengths
** in device memory, so that a search costs one launch and no host round
** trip however many rounds it takes (a road graph needs thousands).  Where
** cooperative launches are not available (or DYNG_CUDA_HOST_LOOP=1), the
** host launches one kernel per round and reads the lengths every
** ROUNDS_PER_LOOK rounds; both run the same device functions.
**
** Every relaxation adds a weight to a distance exactly as the CPU's Dijkstra
** does, and float addition is monotone, so the distances equal the CPU's
** bit for bit.  Parents are chosen afterwards among the tight in-edges
** (dist[u] + w == dist[v]) by the tie rule of engine/sssp.h, so that they
** are the CPU's: the tight in-edge of smallest rowid among those from a
** strictly closer tail (a 64-bit atomicMin of the rowid per edge, then a
** pass that keeps the edge that won).  A vertex with no such edge (zero
** weights, or weights lost to rounding) gets its level by a breadth-first
** search over tight edges among those vertices, started from the rest, and
** then the tight in-edge of smallest rowid from a tail one level down.
*/
#include "cuda/dev_graph.cuh"
#include "cuda/dev_load.cuh"

#include <cooperative_groups.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engine/errcode.h"
}

#define INF_BITS 0x7ff0000000000000ULL /* +infinity */
#define NO_VERTEX 0xffffffffu
#define RESOLVED 0xfffffffeu /* hops: the vertex has a tight in-edge from a strictly closer tail */
#define HEAVY_DEGREE 8u /* frontier vertices expanded by warps (in chunks) from here */
#define TEAM 4u /* threads that expand a light frontier vertex, one edge each */
#define THREADS 256
#define HEAVY_CHUNK 256u /* entries of a heavy vertex one warp expands */
#define LOOP_THREADS 256 /* threads per block of the device-side loops */
#define ROUNDS_PER_LOOK 8 /* rounds the host loop launches between two reads of the counters */
#define JUMP_PASSES 32 /* pointer-jumping passes launched (each stops early when done) */
#define FULL_COPY_SHARE 4 /* a repair that changed n / 4 rows or more copies whole arrays */

namespace cg = cooperative_groups;

/* Kernels launched and host waits on a stream, for DYNG_CUDA_PROFILE. */
static __thread unsigned tl_launches, tl_looks;

#define TRY(call, what)                                                  \
  do {                                                                   \
    int rc_ = dev_fail((call), (what), err, n_err);                      \
    if (rc_ != DYNG_OK) return rc_;                                      \
  } while (0)

#define LAUNCHED(what)                                                   \
  do {                                                                   \
    tl_launches++;                                                       \
    TRY(cudaGetLastError(), what);                                       \
  } while (0)

static unsigned blocks_for(uint64_t n) {
  uint64_t b = (n + THREADS - 1) / THREADS;
  if (b < 1) b = 1;
  if (b > 65535) b = 65535;
  return (unsigned)b;
}

/* ---- work space ---------------------------------------------------------- */

/* Counters on the device: words of w->ctr.  A near frontier's lengths
** rotate through three counter sets: round k reads set k % 3 (its frontier
** in buffer k & 1), appends to set (k + 1) % 3 and clears set (k + 2) % 3,
** which no one reads any more; so no round needs the host to clear a count,
** and the device-side loop needs no barrier for it. */
enum {
  W_LIGHT = 0,   /* 3 sets: light vertices of a near frontier */
  W_HEAVY = 3,   /* 3 sets: heavy chunks of a near frontier */
  W_FAR = 6,     /* 2: the far queues' lengths */
  W_ROOTS = 8,   /* roots of a repair's cut */
  W_CHANGED = 9, /* vertices a repair changed, listed by k_compact_changed */
  W_ROUNDS = 10, /* what the device-side loops did: near rounds, far phases, BFS levels */
  W_BUCKETS = 11,
  W_LEVELS = 12,
  W_UNRESOLVED = 13, /* reached vertices with no tight in-edge from a strictly closer tail */
  W_JUMP = 16,   /* JUMP_PASSES: pass i of pointer jumping left work for pass i + 1 */
  W_FMIN = 48,   /* 2 x 64 bits: the far queue's smallest distance, by far phase parity */
  W_COUNT = 64
};

/* What the kernels of one search share (passed by value). */
struct Loop {
  const uint32_t *off, *deg, *nbr, *slot; /* the device graph */
  const double *w;                        /* the objective's weights */
  unsigned long long *dist;               /* the tree's distances (bits) */
  uint32_t *stamp, *far_flag;
  uint32_t *light[2];
  unsigned long long *heavy[2];
  uint32_t *far[2];
  uint32_t *ctr;
  uint32_t *chg_stamp;                    /* not NULL: improved vertices get chg_gen */
  uint32_t chg_gen;
  uint32_t *hops, *parent, *pedge;        /* the search over tight edges */
  double delta;                           /* bucket width */
};

void dev_sssp_free(DevSssp *w) {
  cudaFree(w->stamp);
  cudaFree(w->far_flag);
  for (int i = 0; i < 2; i++) {
    cudaFree(w->light[i]);
    cudaFree(w->heavy[i]);
    cudaFree(w->far[i]);
  }
  cudaFree(w->ctr);
  cudaFreeHost(w->h_ctr);
  cudaFree(w->hops);
  cudaFree(w->best);
  cudaFree(w->flag);
  cudaFree(w->anc);
  cudaFree(w->chg_stamp);
  cudaFree(w->chg_list);
  cudaFree(w->rows);
  cudaFreeHost(w->h_rows);
  memset(w, 0, sizeof *w);
}

__global__ void __launch_bounds__(LOOP_THREADS) k_search(Loop L, uint32_t round);
__global__ void __launch_bounds__(LOOP_THREADS) k_bfs(Loop L);

/* Blocks of a cooperative launch of the device-side loops: as many as can
** be resident at once, at most DYNG_CUDA_LOOP_BLOCKS per SM (a grid-wide
** barrier costs more with more blocks); 0 when the loops must run on the
** host. */
static unsigned loop_blocks(void) {
  if (dev_options().host_loop) return 0;
  int dev = 0, coop = 0, sms = 0, a = 0, b = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess || !coop ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, k_search, LOOP_THREADS, 0) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_bfs, LOOP_THREADS, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  int per = a < b ? a : b;
  if (per > dev_options().blocks_per_sm) per = dev_options().blocks_per_sm;
  return per > 0 && sms > 0 ? (unsigned)(per * sms) : 0;
}

int dev_sssp_reserve(DevSssp *w, uint32_t n, size_t cap_p, char *err, size_t n_err) {
  size_t heavy_cap = (size_t)n + cap_p / HEAVY_CHUNK + 64;
  if (w->stamp && w->cap >= n && w->heavy_cap >= heavy_cap) return DYNG_OK;
  dev_sssp_free(w);
  size_t nn = (size_t)(n ? n : 1);
  uint32_t **words[] = {&w->stamp, &w->far_flag, &w->light[0], &w->light[1], &w->far[0], &w->far[1],
                        &w->hops,  &w->flag,     &w->anc,      &w->chg_stamp, &w->chg_list};
  int rc = DYNG_OK;
  for (size_t i = 0; i < sizeof words / sizeof *words && rc == DYNG_OK; i++)
    rc = dev_alloc((void **)words[i], nn * 4, &w->bytes, "cudaMalloc", err, n_err);
  for (int i = 0; i < 2 && rc == DYNG_OK; i++)
    rc = dev_alloc((void **)&w->heavy[i], heavy_cap * 8, &w->bytes, "cudaMalloc", err, n_err);
  if (rc == DYNG_OK) rc = dev_alloc((void **)&w->best, nn * 8, &w->bytes, "cudaMalloc", err, n_err);
  if (rc == DYNG_OK) rc = dev_alloc((void **)&w->ctr, W_COUNT * 4, &w->bytes, "cudaMalloc", err, n_err);
  if (rc == DYNG_OK)
    rc = dev_fail(cudaMallocHost((void **)&w->h_ctr, W_COUNT * 4), "cudaMallocHost", err, n_err);
  /* (Waited for: the searches run on streams that do not wait for the
  ** default one.) */
  if (rc == DYNG_OK) rc = dev_fail(cudaMemset(w->chg_stamp, 0, nn * 4), "cudaMemset", err, n_err);
  if (rc == DYNG_OK) rc = dev_fail(cudaStreamSynchronize(0), "cudaMemset", err, n_err);
  if (rc != DYNG_OK) {
    dev_sssp_free(w);
    return rc;
  }
  w->chg_gen = 0;
  w->cap = n;
  w->heavy_cap = heavy_cap;
  w->coop_blocks = loop_blocks();
  return DYNG_OK;
}

int dev_rows_reserve(DevSssp *w, uint32_t n_rows, char *err, size_t n_err) {
  if (n_rows <= w->rows_cap) return DYNG_OK;
  cudaFree(w->rows);
  cudaFreeHost(w->h_rows);
  w->bytes -= (size_t)w->rows_cap * 24;
  w->rows = NULL;
  w->h_rows = NULL;
  w->rows_cap = 0;
  size_t cap = (size_t)n_rows + n_rows / 2 + 1024;
  TRY(dev_malloc((void **)&w->rows, cap * 24), "cudaMalloc");
  if (cudaMallocHost((void **)&w->h_rows, cap * 24) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(w->rows);
    w->rows = NULL;
    snprintf(err, n_err, "cudaMallocHost: out of pinned host memory");
    return DYNG_ENOMEM;
  }
  w->rows_cap = (uint32_t)cap;
  w->bytes += cap * 24;
  return DYNG_OK;
}

/* ---- the search's device functions -------------------------------------- */

__global__ void k_fill_u64(unsigned long long *a, uint32_t n, unsigned long long x) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = x;
}

__device__ __forceinline__ unsigned long long dbits(double d) { return (unsigned long long)__double_as_longlong(d); }
__device__ __forceinline__ double dval(unsigned long long b) { return __longlong_as_double((long long)b); }

/* Appends v to queue q of length *count; the threads of a warp that append
** at once take their places with one atomic. */
__device__ __forceinline__ void push(uint32_t *q, uint32_t *count, uint32_t v) {
  cg::coalesced_group g = cg::coalesced_threads();
  uint32_t at = 0;
  if (g.thread_rank() == 0) at = atomicAdd(count, g.size());
  at = g.shfl(at, 0);
  q[at + g.thread_rank()] = v;
}

/* Appends v, of degree d, to the near frontier of counter set `set` in
** buffer `buf`: as a light vertex, or as the chunks of a heavy one. */
__device__ __forceinline__ void push_near_deg(const Loop &L, uint32_t v, uint32_t d, uint32_t set, uint32_t buf) {
  if (d < HEAVY_DEGREE) {
    push(L.light[buf], &L.ctr[W_LIGHT + set], v);
  } else {
    uint32_t chunks = (d + HEAVY_CHUNK - 1) / HEAVY_CHUNK;
    uint32_t at = atomicAdd(&L.ctr[W_HEAVY + set], chunks);
    for (uint32_t c = 0; c < chunks; c++) L.heavy[buf][at + c] = (unsigned long long)c << 32 | v;
  }
}

__device__ __forceinline__ void push_near(const Loop &L, uint32_t v, uint32_t set, uint32_t buf) {
  push_near_deg(L, v, L.deg[v], set, buf);
}

/* Offers v the distance nb; an improvement queues v in the next near
** frontier (below the threshold) or in far queue fq. */
__device__ __forceinline__ void offer(const Loop &L, uint32_t v, unsigned long long nb, unsigned long long thresh,
                                      uint32_t round, uint32_t set, uint32_t buf, uint32_t fq) {
  /* The degree is loaded beside the distance, not after the atomics. */
  unsigned long long dv = L.dist[v];
  uint32_t d = L.deg[v];
  if (nb < dv && nb < atomicMin(&L.dist[v], nb)) {
    if (L.chg_stamp) L.chg_stamp[v] = L.chg_gen;
    if (nb < thresh) {
      if (atomicExch(&L.stamp[v], round) != round) push_near_deg(L, v, d, set, buf);
    } else if (atomicExch(&L.far_flag[v], 1u) == 0u) {
      push(L.far[fq], &L.ctr[W_FAR + fq], v);
    }
  }
}

/* One round of the search (thread tid of nthreads): the near frontier of
** set k % 3 relaxes its out-edges into set (k + 1) % 3, stamped `round`.
** Values another block wrote in an earlier round are read past L1
** (dyng_ldcg, cuda/dev_load.cuh). */
__device__ void near_round(const Loop &L, uint32_t k, uint32_t round, unsigned long long thresh, uint32_t fq,
                           uint32_t tid, uint32_t nthreads) {
  uint32_t set = k % 3, buf = k & 1u, oset = (k + 1) % 3, obuf = buf ^ 1u;
  uint32_t nl = dyng_ldcg(&L.ctr[W_LIGHT + set]), nh = dyng_ldcg(&L.ctr[W_HEAVY + set]);
  if (tid == 0) L.ctr[W_LIGHT + (k + 2) % 3] = L.ctr[W_HEAVY + (k + 2) % 3] = 0;
  const uint32_t *in_l = L.light[buf];
  for (uint32_t i = tid / TEAM; i < nl; i += nthreads / TEAM) {
    uint32_t u = dyng_ldcg(&in_l[i]);
    double du = dval(dyng_ldcg(&L.dist[u]));
    for (uint32_t p = L.off[u] + tid % TEAM, e = L.off[u] + L.deg[u]; p < e; p += TEAM)
      offer(L, L.nbr[p], dbits(du + L.w[p]), thresh, round, oset, obuf, fq);
  }
  const unsigned long long *in_h = L.heavy[buf];
  uint32_t lane = tid & 31u;
  for (uint32_t i = tid >> 5; i < nh; i += nthreads >> 5) {
    unsigned long long item = dyng_ldcg(&in_h[i]);
    uint32_t u = (uint32_t)item, c = (uint32_t)(item >> 32);
    double du = dval(dyng_ldcg(&L.dist[u]));
    uint32_t b = L.off[u] + c * HEAVY_CHUNK, e = L.off[u] + L.deg[u];
    if (e - b > HEAVY_CHUNK) e = b + HEAVY_CHUNK;
    for (uint32_t p = b + lane; p < e; p += 32) offer(L, L.nbr[p], dbits(du + L.w[p]), thresh, round, oset, obuf, fq);
  }
}

/* The far phase, first half: the smallest distance in far queue fq into
** slot `parity`; clears the length of the queue the filter fills. */
__device__ void far_min_step(const Loop &L, uint32_t fq, uint32_t parity, uint32_t tid, uint32_t nthreads) {
  uint32_t n = dyng_ldcg(&L.ctr[W_FAR + fq]);
  if (tid == 0) L.ctr[W_FAR + (fq ^ 1u)] = 0;
  unsigned long long best = INF_BITS;
  for (uint32_t i = tid; i < n; i += nthreads) {
    unsigned long long d = dyng_ldcg(&L.dist[dyng_ldcg(&L.far[fq][i])]);
    if (d < best) best = d;
  }
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long x = __shfl_down_sync(0xffffffffu, best, o);
    if (x < best) best = x;
  }
  if ((tid & 31u) == 0 && best < INF_BITS) atomicMin((unsigned long long *)&L.ctr[W_FMIN] + parity, best);
}

/* The far phase, second half: entries settled below `done` leave, those
** below `thresh` start the near frontier of set k % 3, the others move to
** the other far queue.  Readies the other slot of the smallest distance. */
__device__ void far_filter_step(const Loop &L, uint32_t fq, uint32_t k, uint32_t parity, unsigned long long done,
                                unsigned long long thresh, uint32_t round, uint32_t tid, uint32_t nthreads) {
  uint32_t n = dyng_ldcg(&L.ctr[W_FAR + fq]), nf = fq ^ 1u;
  if (tid == 0) ((unsigned long long *)&L.ctr[W_FMIN])[parity ^ 1u] = INF_BITS;
  for (uint32_t i = tid; i < n; i += nthreads) {
    uint32_t v = dyng_ldcg(&L.far[fq][i]);
    unsigned long long d = dyng_ldcg(&L.dist[v]);
    if (d < done) {
      L.far_flag[v] = 0;
    } else if (d < thresh) {
      L.far_flag[v] = 0;
      if (atomicExch(&L.stamp[v], round) != round) push_near(L, v, k % 3, k & 1u);
    } else {
      push(L.far[nf], &L.ctr[W_FAR + nf], v); /* stays flagged */
    }
  }
}

/* The next threshold, from the far queue's smallest distance. */
__host__ __device__ __forceinline__ double next_thresh(double fmin, double thresh, double delta) {
  double base = fmin > thresh ? fmin : thresh, t = base + delta;
  /* Past distances so large that delta is lost in rounding (a weight of
  ** 1e17 among weights near 1), the next representable value still lets
  ** the far queue's nearest vertices in: every phase makes progress. */
  return t > base ? t : nextafter(base, HUGE_VAL);
}

/* The whole search, on the device: near rounds until the near frontier is
** empty, then a far phase, until both are empty.  Every thread reads the
** same counters after each barrier, so all take the same branches. */
__global__ void __launch_bounds__(LOOP_THREADS) k_search(Loop L, uint32_t round) {
  cg::grid_group grid = cg::this_grid();
  uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
  uint32_t k = 0, fq = 0, parity = 0, rounds = 0, buckets = 0;
  double thresh = 0, done = 0;
  for (;;) {
    while (dyng_ldcg(&L.ctr[W_LIGHT + k % 3]) + dyng_ldcg(&L.ctr[W_HEAVY + k % 3])) {
      near_round(L, k, ++round, dbits(thresh), fq, tid, nthreads);
      k++, rounds++;
      grid.sync();
    }
    if (dyng_ldcg(&L.ctr[W_FAR + fq]) == 0) break;
    far_min_step(L, fq, parity, tid, nthreads);
    grid.sync();
    done = thresh;
    thresh = next_thresh(dval(dyng_ldcg((unsigned long long *)&L.ctr[W_FMIN] + parity)), thresh, L.delta);
    far_filter_step(L, fq, k, parity, dbits(done), dbits(thresh), ++round, tid, nthreads);
    fq ^= 1u, parity ^= 1u, buckets++;
    grid.sync();
  }
  if (tid == 0) L.ctr[W_ROUNDS] = rounds, L.ctr[W_BUCKETS] = buckets;
}

/* The same steps, one kernel each, for the loop on the host. */
__global__ void k_near_round(Loop L, uint32_t k, uint32_t round, unsigned long long thresh, uint32_t fq) {
  near_round(L, k, round, thresh, fq, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

__global__ void k_far_min(Loop L, uint32_t fq, uint32_t parity) {
  far_min_step(L, fq, parity, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

__global__ void k_far_filter(Loop L, uint32_t fq, uint32_t k, uint32_t parity, unsigned long long done,
                             unsigned long long thresh, uint32_t round) {
  far_filter_step(L, fq, k, parity, done, thresh, round, blockIdx.x * blockDim.x + threadIdx.x,
                  gridDim.x * blockDim.x);
}

/* A search's start: every counter cleared, both smallest-distance slots
** empty and, for a search from scratch, the source in the far queue at
** distance 0 (the first far phase makes it the near frontier). */
__global__ void k_begin(Loop L, uint32_t source) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int i = 0; i < W_COUNT; i++) L.ctr[i] = 0;
  unsigned long long *fmin = (unsigned long long *)&L.ctr[W_FMIN];
  fmin[0] = fmin[1] = INF_BITS;
  if (source != NO_VERTEX) {
    L.dist[source] = 0;
    L.far[0][0] = source;
    L.far_flag[source] = 1;
    L.ctr[W_FAR] = 1;
  }
}

/* ---- parents ------------------------------------------------------------- */

/* Whether position p holds a live entry, and of which vertex (*u). */
__device__ __forceinline__ int live_entry(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, size_t p,
                                          uint32_t *u) {
  uint32_t o = owner[p];
  *u = o;
  return (uint32_t)(p - off[o]) < deg[o];
}

/* An edge's rank among edges that tie: its rowid, as unsigned bits in the
** same order, or its slot where the graph has no rowids (DevGraph). */
__device__ __forceinline__ unsigned long long rank_of(const long long *rowid, uint32_t slot) {
  return rowid ? (unsigned long long)rowid[slot] ^ 0x8000000000000000ULL : slot;
}

/* What the parent kernels share (by value).  With stamp set, only the
** vertices in scope (stamp[v] == gen, or flag[v] set) get new parents. */
struct Parents {
  const uint32_t *owner, *off, *deg, *nbr, *slot;
  const double *w;
  const long long *rowid;
  size_t n_pos;
  const unsigned long long *dist;
  unsigned long long *best;
  uint32_t *parent, *pedge, *hops;
  const uint32_t *stamp, *flag;
  uint32_t gen;
};

__device__ __forceinline__ int in_scope(const Parents &P, uint32_t v) {
  return !P.stamp || P.stamp[v] == P.gen || P.flag[v];
}

/* One pass over the entries for the tie rule's parents: entry u -> v is a
** candidate when tight and, at level 0 (`zero` 0), from a strictly closer
** tail, or (`zero` 1) for a vertex of level h >= 0 found by the search
** over tight edges, from a tail of the same distance one level down (a
** RESOLVED tail for h = 0).  `pick` 0 keeps the smallest rank per vertex
** in best[]; `pick` 1 makes the candidate of that rank the parent. */
__global__ void k_parent_rank(Parents P, int zero, int pick) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < P.n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(P.owner, P.off, P.deg, p, &u)) continue; /* slack holds garbage */
    uint32_t v = P.nbr[p];
    if (v == u || !in_scope(P, v)) continue;
    unsigned long long bu = P.dist[u], bv = P.dist[v];
    if (bu == INF_BITS || dbits(dval(bu) + P.w[p]) != bv) continue;
    if (!zero) {
      if (!(bu < bv)) continue;
    } else {
      uint32_t hv = P.hops[v], hu = P.hops[u];
      if (hv == RESOLVED || hv == NO_VERTEX || bu != bv) continue;
      if (hv == 0 ? hu != RESOLVED : hu != hv - 1) continue;
    }
    unsigned long long r = rank_of(P.rowid, P.slot[p]);
    if (!pick) {
      atomicMin(&P.best[v], r);
    } else if (P.best[v] == r) {
      P.parent[v] = u;
      P.pedge[v] = P.slot[p];
    }
  }
}

/* For the n vertices in scope, before the parent passes: no parent, no
** candidate yet. */
__global__ void k_parent_reset(Parents P, uint32_t n) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    if (!in_scope(P, v)) continue;
    P.best[v] = ~0ULL;
    P.parent[v] = P.pedge[v] = NO_VERTEX;
  }
}

/* After the level-0 passes, for the n vertices in scope: hops RESOLVED
** where a vertex took a parent (or is the source), NO_VERTEX elsewhere;
** the reached vertices left are counted in *unresolved. */
__global__ void k_resolve(Parents P, uint32_t n, uint32_t source, uint32_t *unresolved) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    if (!in_scope(P, v)) continue;
    int res = v == source || P.best[v] != ~0ULL;
    P.hops[v] = res ? RESOLVED : NO_VERTEX;
    if (!res && P.dist[v] != INF_BITS) atomicAdd(unresolved, 1u);
  }
}

/* The search over tight edges among the unresolved vertices starts at
** those with a tight in-edge from a resolved one: level 0.  Also clears
** the near counters that search starts from (thread 0, first). */
__global__ void k_level_seed(Loop L, const uint32_t *owner, size_t n_pos) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, L.off, L.deg, p, &u)) continue;
    uint32_t v = L.nbr[p];
    if (L.hops[u] != RESOLVED || L.hops[v] != NO_VERTEX) continue;
    unsigned long long bu = L.dist[u];
    if (bu == INF_BITS || dbits(dval(bu) + L.w[p]) != L.dist[v]) continue;
    if (atomicCAS(&L.hops[v], NO_VERTEX, 0u) == NO_VERTEX) push_near(L, v, 0, 0);
  }
}

__global__ void k_level_begin(uint32_t *ctr) {
  if (blockIdx.x == 0 && threadIdx.x < 3) ctr[W_LIGHT + threadIdx.x] = ctr[W_HEAVY + threadIdx.x] = 0;
}

/* One level of the breadth-first search over tight edges: the frontier of
** set k % 3 gives every unvisited (NO_VERTEX) tight out-neighbour level
** k + 1 and queues it in set (k + 1) % 3.  Parents come afterwards. */
__device__ __forceinline__ void bfs_edge(const Loop &L, double du, uint32_t p, uint32_t k, uint32_t set,
                                         uint32_t buf) {
  uint32_t v = L.nbr[p];
  if (dyng_ldcg(&L.hops[v]) != NO_VERTEX) return;
  if (dbits(du + L.w[p]) != dyng_ldcg(&L.dist[v])) return;
  if (atomicCAS(&L.hops[v], NO_VERTEX, k + 1) == NO_VERTEX) push_near(L, v, set, buf);
}

__device__ void bfs_round(const Loop &L, uint32_t k, uint32_t tid, uint32_t nthreads) {
  uint32_t set = k % 3, buf = k & 1u, oset = (k + 1) % 3, obuf = buf ^ 1u;
  uint32_t nl = dyng_ldcg(&L.ctr[W_LIGHT + set]), nh = dyng_ldcg(&L.ctr[W_HEAVY + set]);
  if (tid == 0) L.ctr[W_LIGHT + (k + 2) % 3] = L.ctr[W_HEAVY + (k + 2) % 3] = 0;
  for (uint32_t i = tid / TEAM; i < nl; i += nthreads / TEAM) {
    uint32_t u = dyng_ldcg(&L.light[buf][i]);
    double du = dval(dyng_ldcg(&L.dist[u]));
    for (uint32_t p = L.off[u] + tid % TEAM, e = L.off[u] + L.deg[u]; p < e; p += TEAM)
      bfs_edge(L, du, p, k, oset, obuf);
  }
  uint32_t lane = tid & 31u;
  for (uint32_t i = tid >> 5; i < nh; i += nthreads >> 5) {
    unsigned long long item = dyng_ldcg(&L.heavy[buf][i]);
    uint32_t u = (uint32_t)item, c = (uint32_t)(item >> 32);
    double du = dval(dyng_ldcg(&L.dist[u]));
    uint32_t b = L.off[u] + c * HEAVY_CHUNK, e = L.off[u] + L.deg[u];
    if (e - b > HEAVY_CHUNK) e = b + HEAVY_CHUNK;
    for (uint32_t p = b + lane; p < e; p += 32) bfs_edge(L, du, p, k, oset, obuf);
  }
}

__global__ void __launch_bounds__(LOOP_THREADS) k_bfs(Loop L) {
  cg::grid_group grid = cg::this_grid();
  uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
  uint32_t k = 0;
  while (dyng_ldcg(&L.ctr[W_LIGHT + k % 3]) + dyng_ldcg(&L.ctr[W_HEAVY + k % 3])) {
    bfs_round(L, k, tid, nthreads);
    k++;
    grid.sync();
  }
  if (tid == 0) L.ctr[W_LEVELS] = k;
}

__global__ void k_bfs_round(Loop L, uint32_t k) {
  bfs_round(L, k, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}


/* ---- the run ------------------------------------------------------------ */

static unsigned long long bits_of(double d) {
  unsigned long long b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static double value_of(unsigned long long b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}


/* Copies the counters to the host and waits for them. */
static cudaError_t look(DevSssp *w, cudaStream_t s) {
  tl_looks++;
  cudaError_t e = cudaMemcpyAsync(w->h_ctr, w->ctr, W_COUNT * 4, cudaMemcpyDeviceToHost, s);
  return e == cudaSuccess ? cudaStreamSynchronize(s) : e;
}

/* Profiling: the phase that ends now (waits for the stream). */
struct Phases {
  DevProfile *prof;
  double t0, last;
  unsigned launches0, looks0;
};

static void phases_begin(Phases *ph, DevProfile *prof) {
  ph->prof = prof;
  if (!prof) return;
  memset(prof, 0, sizeof *prof);
  ph->t0 = ph->last = dev_now_ms();
  ph->launches0 = tl_launches, ph->looks0 = tl_looks;
}

static void phase_end(Phases *ph, int i, cudaStream_t s) {
  if (!ph->prof) return;
  cudaStreamSynchronize(s);
  double t = dev_now_ms();
  ph->prof->ms[i] += t - ph->last;
  ph->last = t;
}

static void phases_finish(Phases *ph, DevSssp *w, cudaStream_t s) {
  if (!ph->prof) return;
  DevProfile *p = ph->prof;
  p->ms[P_TOTAL] = dev_now_ms() - ph->t0;
  p->device_loop = w->coop_blocks != 0;
  if (w->coop_blocks && look(w, s) == cudaSuccess) {
    p->rounds = w->h_ctr[W_ROUNDS], p->buckets = w->h_ctr[W_BUCKETS], p->levels = w->h_ctr[W_LEVELS];
    tl_looks--; /* not the search's */
  }
  p->launches = tl_launches - ph->launches0, p->looks = tl_looks - ph->looks0;
}

static Loop make_loop(const DevGraph *c, DevSssp *w, int obj, unsigned long long *dist, uint32_t *parent,
                      uint32_t *pedge, uint32_t *chg_stamp, uint32_t chg_gen) {
  Loop L;
  memset(&L, 0, sizeof L);
  L.off = c->off, L.deg = c->deg, L.nbr = c->nbr, L.slot = c->slot, L.w = c->w[obj];
  L.dist = dist;
  L.stamp = w->stamp, L.far_flag = w->far_flag;
  for (int i = 0; i < 2; i++) L.light[i] = w->light[i], L.heavy[i] = w->heavy[i], L.far[i] = w->far[i];
  L.ctr = w->ctr;
  L.chg_stamp = chg_stamp, L.chg_gen = chg_gen;
  L.hops = w->hops, L.parent = parent, L.pedge = pedge;
  L.delta = c->mean_w[obj] > 0 ? c->mean_w[obj] * dev_options().delta : 1.0;
  return L;
}

/* Marks stamps and flags as fresh for a search over n vertices. */
static int fresh_search(DevSssp *w, uint32_t n, cudaStream_t s, char *err, size_t n_err) {
  TRY(cudaMemsetAsync(w->stamp, 0, (size_t)n * 4, s), "cudaMemset");
  TRY(cudaMemsetAsync(w->far_flag, 0, (size_t)n * 4, s), "cudaMemset");
  w->round = 1;
  return DYNG_OK;
}

/* The search from the queues k_begin and the offers left (near-far), on
** the device in one launch, or driven from the host. */
/* Launches a loop kernel on all of w's blocks at once.  A launch the
** device refuses (fewer SMs free than the occupancy promised, under MPS or
** a partition, say) runs nothing: the error is cleared, and this and every
** later search of w take the loop on the host instead. */
static cudaError_t coop_launch(const void *kernel, DevSssp *w, void **args, cudaStream_t s) {
  cudaError_t rc = cudaLaunchCooperativeKernel(kernel, w->coop_blocks, LOOP_THREADS, args, 0, s);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    w->coop_blocks = 0;
  }
  return rc;
}

static int search(const Loop &L, DevSssp *w, cudaStream_t s, DevProfile *prof, char *err, size_t n_err) {
  if (w->coop_blocks) {
    Loop arg = L;
    uint32_t round = w->round;
    void *args[] = {&arg, &round};
    tl_launches++;
    if (coop_launch((const void *)k_search, w, args, s) == cudaSuccess) return DYNG_OK;
  }
  uint32_t *h = w->h_ctr;
  uint32_t k = 0, fq = 0, parity = 0, round = w->round, rounds = 0, buckets = 0;
  double thresh = 0, done = 0;
  TRY(look(w, s), "starting the search");
  uint32_t n_light = h[W_LIGHT], n_heavy = h[W_HEAVY];
  for (;;) {
    while (n_light + n_heavy) {
      /* Several rounds per look at the counters: a round whose frontier
      ** came out empty returns at once.  The grid is sized from the last
      ** look (the kernel strides, so a frontier that grew is covered). */
      uint64_t est = 2 * (uint64_t)n_light + 8192, est_h = (2 * (uint64_t)n_heavy + 64) * 32;
      if (est_h > est) est = est_h;
      for (int j = 0; j < ROUNDS_PER_LOOK; j++) {
        k_near_round<<<blocks_for(est), THREADS, 0, s>>>(L, k, ++round, bits_of(thresh), fq);
        LAUNCHED("k_near_round");
        k++, rounds++;
      }
      TRY(look(w, s), "relaxing");
      n_light = h[W_LIGHT + k % 3], n_heavy = h[W_HEAVY + k % 3];
    }
    uint32_t n_far = h[W_FAR + fq];
    if (!n_far) break;
    k_far_min<<<blocks_for(n_far), THREADS, 0, s>>>(L, fq, parity);
    LAUNCHED("k_far_min");
    TRY(look(w, s), "the far queue");
    unsigned long long mb;
    memcpy(&mb, &h[W_FMIN + 2 * parity], 8);
    done = thresh;
    thresh = next_thresh(value_of(mb), thresh, L.delta);
    k_far_filter<<<blocks_for(n_far), THREADS, 0, s>>>(L, fq, k, parity, bits_of(done), bits_of(thresh), ++round);
    LAUNCHED("k_far_filter");
    fq ^= 1u, parity ^= 1u, buckets++;
    TRY(look(w, s), "the far queue");
    n_light = h[W_LIGHT + k % 3], n_heavy = h[W_HEAVY + k % 3];
  }
  w->round = round;
  if (prof) prof->rounds = rounds, prof->buckets = buckets;
  return DYNG_OK;
}

/* The search over tight edges among the vertices left without a parent,
** from the frontier k_level_seed put in set 0: their levels (w->hops). */
static int tight_bfs(const Loop &L, DevSssp *w, cudaStream_t s, DevProfile *prof, char *err, size_t n_err) {
  if (w->coop_blocks) {
    Loop arg = L;
    void *args[] = {&arg};
    tl_launches++;
    if (coop_launch((const void *)k_bfs, w, args, s) == cudaSuccess) return DYNG_OK;
  }
  uint32_t *h = w->h_ctr, k = 0;
  uint64_t est = 1u << 20;
  for (;;) {
    for (int j = 0; j < ROUNDS_PER_LOOK; j++, k++) {
      k_bfs_round<<<blocks_for(est), THREADS, 0, s>>>(L, k);
      LAUNCHED("k_bfs_round");
    }
    TRY(look(w, s), "the tree");
    uint64_t nl = h[W_LIGHT + k % 3], nh = h[W_HEAVY + k % 3];
    if (!(nl + nh)) break;
    est = 2 * (nl + 32 * nh) + 8192;
  }
  if (prof) prof->levels = k;
  return DYNG_OK;
}

static Parents make_parents(const DevGraph *c, DevSssp *w, const Loop &L, int obj, const uint32_t *stamp,
                            const uint32_t *flag, uint32_t gen) {
  Parents P;
  memset(&P, 0, sizeof P);
  P.owner = c->owner, P.off = c->off, P.deg = c->deg, P.nbr = c->nbr, P.slot = c->slot, P.w = c->w[obj];
  P.rowid = c->rowid, P.n_pos = c->n_pos;
  P.dist = L.dist, P.best = w->best, P.parent = L.parent, P.pedge = L.pedge, P.hops = w->hops;
  P.stamp = stamp, P.flag = flag, P.gen = gen;
  return P;
}

/* The level-0 parents of the vertices in P's scope (the tight in-edge of
** smallest rank from a strictly closer tail), and the count of those left
** without one in ctr[W_UNRESOLVED] (not waited for). */
static int parents_level0(const DevGraph *c, DevSssp *w, const Parents &P, uint32_t source, cudaStream_t s,
                          char *err, size_t n_err) {
  uint32_t n = c->n;
  k_parent_reset<<<blocks_for(n), THREADS, 0, s>>>(P, n);
  LAUNCHED("k_parent_reset");
  k_parent_rank<<<blocks_for(c->n_pos), THREADS, 0, s>>>(P, 0, 0);
  LAUNCHED("k_parent_rank");
  k_parent_rank<<<blocks_for(c->n_pos), THREADS, 0, s>>>(P, 0, 1);
  LAUNCHED("k_parent_rank");
  TRY(cudaMemsetAsync(&w->ctr[W_UNRESOLVED], 0, 4, s), "cudaMemset");
  k_resolve<<<blocks_for(n), THREADS, 0, s>>>(P, n, source, &w->ctr[W_UNRESOLVED]);
  LAUNCHED("k_resolve");
  return DYNG_OK;
}

/* Every parent by the tie rule: level 0, and, when some reached vertex has
** no tight in-edge from a strictly closer tail, the levels of those (the
** search over tight edges) and their parents one level down. */
static int parents_all(const DevGraph *c, DevSssp *w, const Loop &L, int obj, uint32_t source, cudaStream_t s,
                       DevProfile *prof, char *err, size_t n_err) {
  Parents P = make_parents(c, w, L, obj, NULL, NULL, 0);
  int rc = parents_level0(c, w, P, source, s, err, n_err);
  if (rc) return rc;
  TRY(look(w, s), "the tree");
  if (!w->h_ctr[W_UNRESOLVED]) return DYNG_OK;
  Loop B = L;
  B.chg_stamp = NULL;
  k_level_begin<<<1, 32, 0, s>>>(w->ctr);
  LAUNCHED("k_level_begin");
  k_level_seed<<<blocks_for(c->n_pos), THREADS, 0, s>>>(B, c->owner, c->n_pos);
  LAUNCHED("k_level_seed");
  if ((rc = tight_bfs(B, w, s, prof, err, n_err))) return rc;
  k_parent_rank<<<blocks_for(c->n_pos), THREADS, 0, s>>>(P, 1, 0);
  LAUNCHED("k_parent_rank");
  k_parent_rank<<<blocks_for(c->n_pos), THREADS, 0, s>>>(P, 1, 1);
  LAUNCHED("k_parent_rank");
  return DYNG_OK;
}

/* The whole tree to the host. */
static int copy_tree(uint32_t n, const Loop &L, double *dist, uint32_t *parent, uint32_t *pedge, DevSssp *w,
                     cudaStream_t s, char *err, size_t n_err) {
  TRY(cudaMemcpyAsync(dist, L.dist, (size_t)n * 8, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(parent, L.parent, (size_t)n * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(pedge, L.pedge, (size_t)n * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  tl_looks++;
  TRY(cudaStreamSynchronize(s), "copying the tree");
  (void)w;
  return DYNG_OK;
}

/* The stop request (dev_stop_asked) is asked before a search and after it:
** a launched search runs to its end (milliseconds, tens on millions of
** vertices). */
int dev_sssp_run(const DevGraph *c, DevSssp *w, uint32_t source, int obj, cudaStream_t s, unsigned long long *d_dist,
                 uint32_t *d_parent, uint32_t *d_pedge, double *dist, uint32_t *parent, uint32_t *pedge,
                 const dyng_cancel *cancel, DevProfile *prof, char *err, size_t n_err) {
  Phases ph;
  phases_begin(&ph, prof);
  uint32_t n = c->n;
  int rc = dev_sssp_reserve(w, n, c->cap_p, err, n_err);
  if (rc) return rc;
  if (source >= n || obj < 0 || obj >= c->n_obj) return DYNG_EINVAL;
  if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  Loop L = make_loop(c, w, obj, d_dist, d_parent, d_pedge, NULL, 0);
  k_fill_u64<<<blocks_for(n), THREADS, 0, s>>>(d_dist, n, INF_BITS);
  LAUNCHED("k_fill_u64");
  if ((rc = fresh_search(w, n, s, err, n_err))) return rc;
  k_begin<<<1, 32, 0, s>>>(L, source);
  LAUNCHED("k_begin");
  phase_end(&ph, P_PREPARE, s);
  if ((rc = search(L, w, s, prof, err, n_err))) return rc;
  phase_end(&ph, P_SEARCH, s);
  if ((rc = parents_all(c, w, L, obj, source, s, prof, err, n_err))) return rc;
  phase_end(&ph, P_PARENTS, s);
  if (cancel && cancel->should_stop) {
    tl_looks++;
    TRY(cudaStreamSynchronize(s), "the search");
    if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  }
  if (dist) {
    if ((rc = copy_tree(n, L, dist, parent, pedge, w, s, err, n_err))) return rc;
  } else {
    /* The tree stays on the device: only wait for it. */
    tl_looks++;
    TRY(cudaStreamSynchronize(s), "the search");
  }
  phase_end(&ph, P_COPY, s);
  if (prof) prof->full_copy = dist != NULL, prof->changed = n;
  phases_finish(&ph, w, s);
  return DYNG_OK;
}

/* ---- repairing a kept tree ---------------------------------------------- */

/* Cut roots: the far end of every removed tree edge. */
__global__ void k_cut_roots(const uint32_t *src, const uint32_t *dst, const uint32_t *slot, uint32_t n_rem,
                            int both_ways, uint32_t source, const uint32_t *parent, const uint32_t *pedge,
                            uint32_t *flag, uint32_t *n_roots) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_rem; i += gridDim.x * blockDim.x)
    for (int side = 0; side < (both_ways ? 2 : 1); side++) {
      uint32_t u = side ? dst[i] : src[i], v = side ? src[i] : dst[i];
      if (v != source && pedge[v] == slot[i] && parent[v] == u) {
        flag[v] = 1;
        atomicAdd(n_roots, 1u);
      }
    }
}

/* Pointer jumping: a vertex is cut when an ancestor (or itself) is a root.
** Nothing to do without roots; each pass notes whether a vertex is still
** undecided, and the passes after the first that leaves none return at
** once (so the host launches them all without looking). */
__global__ void k_jump_init(const uint32_t *parent, uint32_t n, const uint32_t *ctr, uint32_t *anc) {
  if (ctr[W_ROOTS] == 0) return;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) anc[v] = parent[v];
}

__global__ void k_jump(uint32_t n, uint32_t *anc, uint32_t *flag, uint32_t *ctr, int pass) {
  if (ctr[pass ? W_JUMP + pass - 1 : W_ROOTS] == 0) return;
  int more = 0;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    if (flag[v]) continue;
    uint32_t a = anc[v];
    if (a == NO_VERTEX) continue;
    if (flag[a]) {
      flag[v] = 1;
    } else {
      uint32_t aa = anc[a];
      anc[v] = aa;
      if (aa != NO_VERTEX) more = 1;
    }
  }
  if (__syncthreads_or(more) && threadIdx.x == 0) ctr[W_JUMP + pass] = 1;
}

/* Cut vertices lose their distance and parent and are noted as changed. */
__global__ void k_cut(uint32_t n, const uint32_t *ctr, const uint32_t *flag, unsigned long long *dist,
                      uint32_t *parent, uint32_t *pedge, uint32_t *chg_stamp, uint32_t chg_gen) {
  if (ctr[W_ROOTS] == 0) return;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (flag[v]) {
      dist[v] = INF_BITS;
      parent[v] = pedge[v] = NO_VERTEX;
      chg_stamp[v] = chg_gen;
    }
}

/* Every vertex outside the cut offers itself to its cut out-neighbours:
** they go to the far queue (the search starts from there). */
__global__ void k_border(Loop L, const uint32_t *owner, size_t n_pos, const uint32_t *flag) {
  if (L.ctr[W_ROOTS] == 0) return;
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, L.off, L.deg, p, &u)) continue;
    uint32_t x = L.nbr[p];
    if (!flag[x] || flag[u]) continue;
    unsigned long long bu = L.dist[u];
    if (bu == INF_BITS) continue;
    unsigned long long nb = dbits(dval(bu) + L.w[p]);
    if (nb < L.dist[x] && nb < atomicMin(&L.dist[x], nb) && atomicExch(&L.far_flag[x], 1u) == 0u)
      push(L.far[0], &L.ctr[W_FAR], x);
  }
}

/* Added edges relax their far end (both ends of an undirected one). */
__global__ void k_relax_added(Loop L, const uint32_t *src, const uint32_t *dst, const double *w, uint32_t n_add,
                              int both_ways) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_add; i += gridDim.x * blockDim.x)
    for (int side = 0; side < (both_ways ? 2 : 1); side++) {
      uint32_t u = side ? dst[i] : src[i], v = side ? src[i] : dst[i];
      unsigned long long bu = L.dist[u];
      if (bu == INF_BITS) continue;
      unsigned long long nb = dbits(dval(bu) + w[i]);
      if (nb < L.dist[v] && nb < atomicMin(&L.dist[v], nb)) {
        L.chg_stamp[v] = L.chg_gen;
        if (atomicExch(&L.far_flag[v], 1u) == 0u) push(L.far[0], &L.ctr[W_FAR], v);
      }
    }
}

/* The vertices whose parent the tie rule may move besides the changed
** ones: the out-neighbours of a changed vertex (a tail whose distance
** moved) and the heads of the added edges. */
__global__ void k_mark_scope(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, const uint32_t *nbr,
                             size_t n_pos, const uint32_t *stamp, uint32_t gen, uint32_t *flag) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, off, deg, p, &u) || stamp[u] != gen) continue;
    flag[nbr[p]] = 1;
  }
}

__global__ void k_mark_added(const uint32_t *src, const uint32_t *dst, uint32_t n_add, int both_ways,
                             uint32_t *flag) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_add; i += gridDim.x * blockDim.x) {
    flag[dst[i]] = 1;
    if (both_ways) flag[src[i]] = 1;
  }
}

/* The changed vertices (and, with flag, the flagged ones), listed in runs
** of increasing number (a warp's 32 consecutive vertices at a time), so
** that the host writes their rows nearly in order. */
__global__ void k_compact_changed(const uint32_t *chg_stamp, uint32_t gen, const uint32_t *flag, uint32_t n,
                                  uint32_t *list, uint32_t *count) {
  uint32_t lane = threadIdx.x & 31u;
  size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * (size_t)blockDim.x) >> 5;
  for (size_t base = warp * 32; base < n; base += warps * 32) {
    size_t v = base + lane;
    int hit = v < n && (chg_stamp[v] == gen || (flag && flag[v]));
    uint32_t mask = __ballot_sync(0xffffffffu, hit);
    if (!mask) continue;
    uint32_t at = 0;
    if (lane == 0) at = atomicAdd(count, (uint32_t)__popc(mask));
    at = __shfl_sync(0xffffffffu, at, 0);
    if (hit) list[at + __popc(mask & ((1u << lane) - 1u))] = (uint32_t)v;
  }
}

/* The changed vertices' rows, packed for the copy to the host: vertex,
** distance bits, then edge and parent in one word. */
__global__ void k_gather(const uint32_t *list, const uint32_t *count, const unsigned long long *dist,
                         const uint32_t *parent, const uint32_t *pedge, unsigned long long *out) {
  uint32_t n = *count;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t v = list[i];
    out[3 * (size_t)i] = v;
    out[3 * (size_t)i + 1] = dist[v];
    out[3 * (size_t)i + 2] = ((unsigned long long)pedge[v] << 32) | parent[v];
  }
}

int dev_sssp_repair(const DevGraph *c, DevSssp *w, const DevBatch *b, uint32_t source, int obj, cudaStream_t s,
                    unsigned long long *d_dist, uint32_t *d_parent, uint32_t *d_pedge, double *dist,
                    uint32_t *parent, uint32_t *pedge, size_t *pn_changed, const dyng_cancel *cancel,
                    DevProfile *prof, char *err, size_t n_err) {
  Phases ph;
  phases_begin(&ph, prof);
  if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  uint32_t n = c->n;
  int rc = dev_sssp_reserve(w, n, c->cap_p, err, n_err);
  if (rc) return rc;
  if ((rc = fresh_search(w, n, s, err, n_err))) return rc;
  if (++w->chg_gen == 0) {
    TRY(cudaMemsetAsync(w->chg_stamp, 0, (size_t)w->cap * 4, s), "cudaMemset");
    w->chg_gen = 1;
  }
  Loop L = make_loop(c, w, obj, d_dist, d_parent, d_pedge, w->chg_stamp, w->chg_gen);
  uint32_t *ctr = w->ctr;
  k_begin<<<1, 32, 0, s>>>(L, NO_VERTEX);
  LAUNCHED("k_begin");
  phase_end(&ph, P_PREPARE, s);
  /* 1. The cut, and offers into it from its border. */
  if (b->n_rem) {
    TRY(cudaMemsetAsync(w->flag, 0, (size_t)n * 4, s), "cudaMemset");
    k_cut_roots<<<blocks_for(b->n_rem), THREADS, 0, s>>>(b->rem_src, b->rem_dst, b->rem_slot, b->n_rem, !b->directed,
                                                         source, d_parent, d_pedge, w->flag, &ctr[W_ROOTS]);
    LAUNCHED("k_cut_roots");
    k_jump_init<<<blocks_for(n), THREADS, 0, s>>>(d_parent, n, ctr, w->anc);
    LAUNCHED("k_jump_init");
    for (int pass = 0; pass < JUMP_PASSES; pass++) {
      k_jump<<<blocks_for(n), THREADS, 0, s>>>(n, w->anc, w->flag, ctr, pass);
      LAUNCHED("k_jump");
    }
    k_cut<<<blocks_for(n), THREADS, 0, s>>>(n, ctr, w->flag, d_dist, d_parent, d_pedge, w->chg_stamp, w->chg_gen);
    LAUNCHED("k_cut");
    phase_end(&ph, P_CUT, s);
    k_border<<<blocks_for(c->n_pos), THREADS, 0, s>>>(L, c->owner, c->n_pos, w->flag);
    LAUNCHED("k_border");
  }
  /* 2. The added edges. */
  if (b->n_add) {
    k_relax_added<<<blocks_for(b->n_add), THREADS, 0, s>>>(L, b->add_src, b->add_dst, b->add_w[obj], b->n_add,
                                                           !b->directed);
    LAUNCHED("k_relax_added");
  }
  phase_end(&ph, P_OFFERS, s);
  /* 3. The search from whatever improved (all of it in the far queue). */
  if ((rc = search(L, w, s, prof, err, n_err))) return rc;
  phase_end(&ph, P_SEARCH, s);
  /* 4. Parents by the tie rule, and the rows that moved to the host.  An
  **    objective with zero weights may move any parent (levels run along
  **    chains of equal distance): all are chosen again.  Otherwise only
  **    those of the changed vertices, of their out-neighbours and of the
  **    added edges' heads can move. */
  const int zero = c->has_zero[obj];
  if (!zero) {
    TRY(cudaMemsetAsync(w->flag, 0, (size_t)n * 4, s), "cudaMemset");
    k_mark_scope<<<blocks_for(c->n_pos), THREADS, 0, s>>>(c->owner, c->off, c->deg, c->nbr, c->n_pos, w->chg_stamp,
                                                           w->chg_gen, w->flag);
    LAUNCHED("k_mark_scope");
    if (b->n_add) {
      k_mark_added<<<blocks_for(b->n_add), THREADS, 0, s>>>(b->add_src, b->add_dst, b->n_add, !b->directed, w->flag);
      LAUNCHED("k_mark_added");
    }
  }
  k_compact_changed<<<blocks_for(n), THREADS, 0, s>>>(w->chg_stamp, w->chg_gen, zero ? NULL : w->flag, n,
                                                      w->chg_list, &ctr[W_CHANGED]);
  LAUNCHED("k_compact_changed");
  TRY(look(w, s), "the repair");
  if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  uint32_t n_chg = w->h_ctr[W_CHANGED];
  if (prof) prof->roots = w->h_ctr[W_ROOTS], prof->changed = n_chg;
  *pn_changed = n_chg;
  /* Without host arrays the rows stay on the device (as with a full
  ** copy, nothing is gathered). */
  int full = (uint64_t)n_chg * FULL_COPY_SHARE >= n || !dist;
  int all = zero && (n_chg || b->n_add || b->n_rem);
  if (!zero && n_chg) {
    Parents P = make_parents(c, w, L, obj, w->chg_stamp, w->flag, w->chg_gen);
    if ((rc = parents_level0(c, w, P, source, s, err, n_err))) return rc;
    TRY(look(w, s), "the repair");
    /* A vertex reached only from tails of its own distance (weights lost
    ** to rounding): levels are needed, over the whole tree. */
    all = w->h_ctr[W_UNRESOLVED] != 0;
  }
  if (all) {
    if ((rc = parents_all(c, w, L, obj, source, s, prof, err, n_err))) return rc;
    full = 1;
    n_chg = n;
  } else if (n_chg && !full) {
    if ((rc = dev_rows_reserve(w, n_chg, err, n_err))) return rc;
    k_gather<<<blocks_for(n_chg), THREADS, 0, s>>>(w->chg_list, &ctr[W_CHANGED], d_dist, d_parent, d_pedge,
                                                   w->rows);
    LAUNCHED("k_gather");
  }
  phase_end(&ph, P_PARENTS, s);
  if (n_chg && !dist) {
    tl_looks++;
    TRY(cudaStreamSynchronize(s), "the repair");
  } else if (n_chg && full) {
    /* Many rows: the whole arrays, which the copy engine streams faster
    ** than the host scatters rows. */
    if ((rc = copy_tree(n, L, dist, parent, pedge, w, s, err, n_err))) return rc;
  } else if (n_chg) {
    TRY(cudaMemcpyAsync(w->h_rows, w->rows, (size_t)n_chg * 24, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
    tl_looks++;
    TRY(cudaStreamSynchronize(s), "copying the changed rows");
    for (uint32_t i = 0; i < n_chg; i++) {
      uint32_t v = (uint32_t)w->h_rows[3 * (size_t)i];
      memcpy(&dist[v], &w->h_rows[3 * (size_t)i + 1], 8);
      parent[v] = (uint32_t)w->h_rows[3 * (size_t)i + 2];
      pedge[v] = (uint32_t)(w->h_rows[3 * (size_t)i + 2] >> 32);
    }
  }
  phase_end(&ph, P_COPY, s);
  if (prof) prof->full_copy = n_chg && full && dist;
  phases_finish(&ph, w, s);
  return DYNG_OK;
}
