/*
** cuda/dev_sssp.cu: the device copy of a graph and shortest paths on it.
**
** The graph is the view's out-adjacency in the host's own layout (segments
** with room to grow; see engine/types.h): the first time, and whenever the
** host rewrote its pool, every array is copied as it is; after a batch only
** the entries of the vertices its edges touched, gathered into one pinned
** buffer, copied in one transfer and scattered into place by a kernel.
**
** Shortest paths are a near-far frontier method (delta-stepping with two
** buckets): distances live as the IEEE-754 bits of non-negative doubles,
** which order like unsigned integers, so a relaxation is one 64-bit
** atomicMin.  A vertex whose distance drops below the threshold T joins the
** next near frontier (once per round, by a stamp), one at or above T the far
** queue (once, by a flag).  When the near frontier is empty, T moves past
** the smallest far distance by delta and the far queue is filtered: entries
** already settled below the old T are dropped, those now below T become the
** near frontier.  Frontier vertices of high degree are expanded by a whole
** warp, the others by one thread each.
**
** Every relaxation adds a weight to a distance exactly as the CPU's Dijkstra
** does, and float addition is monotone, so the distances equal the CPU's
** bit for bit.  Parents are chosen afterwards among the tight in-edges
** (dist[u] + w == dist[v]): with positive weights, the one of smallest edge
** slot (one 64-bit atomicMin per edge); with zero weights, whose tight edges
** can form cycles, by a breadth-first search over tight edges from the
** source, so that every parent is one hop closer to it.
*/
#include "cuda/dev_graph.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engine/error.h"
}

#define INF_BITS 0x7ff0000000000000ULL /* +infinity */
#define NO_VERTEX 0xffffffffu
#define HEAVY_DEGREE 32u /* frontier vertices expanded by a warp from here */
#define THREADS 256
#define ROUNDS_PER_LOOK 8 /* near rounds launched between two reads of the counters */

/* Counters on the device. */
enum { C_LIGHT_A, C_HEAVY_A, C_LIGHT_B, C_HEAVY_B, C_FAR_A, C_FAR_B, C_ROOTS, C_CHANGED };
/* counters[8..9]: the far queue's smallest distance (64 bits). */

int dev_fail(cudaError_t e, const char *what, char *err, size_t n_err) {
  if (e == cudaSuccess) return DYNG_OK;
  snprintf(err, n_err, "%s: %s", what, cudaGetErrorString(e));
  cudaGetLastError(); /* clear a sticky-free error */
  return e == cudaErrorMemoryAllocation ? DYNG_ENOMEM : DYNG_EBACKEND;
}

#define TRY(call, what)                                                  \
  do {                                                                   \
    int rc_ = dev_fail((call), (what), err, n_err);                      \
    if (rc_ != DYNG_OK) return rc_;                                      \
  } while (0)

#define LAUNCHED(what) TRY(cudaGetLastError(), what)

static unsigned blocks_for(uint64_t n) {
  uint64_t b = (n + THREADS - 1) / THREADS;
  if (b < 1) b = 1;
  if (b > 65535) b = 65535;
  return (unsigned)b;
}

/* ---- the graph ---------------------------------------------------------- */

void dev_graph_free(DevGraph *g) {
  cudaFree(g->off);
  cudaFree(g->deg);
  cudaFree(g->nbr);
  cudaFree(g->slot);
  cudaFree(g->owner);
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) cudaFree(g->w[k]);
  cudaFree(g->dstage);
  cudaFreeHost(g->stage);
  free(g->mark);
  dev_batch_free(&g->batch);
  memset(g, 0, sizeof *g);
}

static int dev_alloc(void **p, size_t bytes, size_t *total, const char *what, char *err, size_t n_err) {
  TRY(cudaMalloc(p, bytes ? bytes : 1), what);
  *total += bytes ? bytes : 1;
  return DYNG_OK;
}

/* Every entry of vertex v gets v as its owner (a warp per vertex). */
__global__ void k_owners(const uint32_t *off, const uint32_t *deg, uint32_t n, uint32_t *owner) {
  uint32_t lane = threadIdx.x & 31u;
  uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
  for (uint32_t v = warp; v < n; v += warps)
    for (uint32_t p = off[v] + lane, e = off[v] + deg[v]; p < e; p += 32) owner[p] = v;
}

__global__ void k_halve_refs(uint32_t *slot, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    slot[i] >>= 1;
}

int dev_graph_upload(DevGraph *g, const dyng_graph_view *v, cudaStream_t s, char *err, size_t n_err) {
  uint32_t n = v->n_vertices;
  size_t p = v->out.n_entries;
  int n_obj = v->n_objectives;
  if (n > g->cap_n || p > g->cap_p || n_obj != g->n_obj || !g->off) {
    /* Room for growth, so that batches rarely need a new upload. */
    DevGraph fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.cap_n = n + n / 4 + 1024;
    fresh.cap_p = p + p / 4 + 4096;
    fresh.n_obj = n_obj;
    int rc;
    if ((rc = dev_alloc((void **)&fresh.off, (size_t)fresh.cap_n * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.deg, (size_t)fresh.cap_n * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.nbr, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.slot, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.owner, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err))) {
      dev_graph_free(&fresh);
      return rc;
    }
    for (int k = 0; k < n_obj; k++)
      if ((rc = dev_alloc((void **)&fresh.w[k], fresh.cap_p * 8, &fresh.bytes, "cudaMalloc", err, n_err))) {
        dev_graph_free(&fresh);
        return rc;
      }
    /* Positions no segment has used yet must name a vertex too (a slack
    ** position is told apart by its owner's range): vertex 0. */
    if ((rc = dev_fail(cudaMemset(fresh.owner, 0, fresh.cap_p * 4), "cudaMemset", err, n_err))) {
      dev_graph_free(&fresh);
      return rc;
    }
    /* The staging buffers move over. */
    fresh.stage = g->stage, fresh.stage_cap = g->stage_cap;
    fresh.dstage = g->dstage, fresh.dstage_cap = g->dstage_cap;
    fresh.mark = g->mark, fresh.mark_cap = g->mark_cap, fresh.mark_gen = g->mark_gen;
    fresh.batch = g->batch;
    memset(&g->batch, 0, sizeof g->batch);
    g->stage = NULL, g->dstage = NULL, g->mark = NULL;
    fresh.bytes += fresh.dstage_cap;
    dev_graph_free(g);
    *g = fresh;
  }
  g->n = n;
  TRY(cudaMemcpyAsync(g->off, v->out.off, (size_t)n * 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(g->deg, v->out.deg, (size_t)n * 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(g->nbr, v->out.nbr, p * 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(g->slot, v->out.ref, p * 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  if (p) {
    k_halve_refs<<<blocks_for(p), THREADS, 0, s>>>(g->slot, p);
    LAUNCHED("k_halve_refs");
  }
  /* Slack positions keep whatever owner they had: an entry p is live only
  ** when p - off[owner[p]] < deg[owner[p]] (see live_entry). */
  TRY(cudaMemsetAsync(g->owner, 0, p * 4, s), "cudaMemset");
  if (n) {
    k_owners<<<blocks_for((uint64_t)n * 32), THREADS, 0, s>>>(g->off, g->deg, n, g->owner);
    LAUNCHED("k_owners");
  }
  g->n_pos = p;
  for (int k = 0; k < n_obj; k++) {
    TRY(cudaMemcpyAsync(g->w[k], v->out.w[k], p * 8, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    double sum = 0;
    size_t cnt = 0;
    g->has_zero[k] = 0;
    for (uint32_t x = 0; x < n; x++)
      for (uint32_t q = v->out.off[x], e = q + v->out.deg[x]; q < e; q++) {
        double wt = v->out.w[k][q];
        sum += wt;
        cnt++;
        if (wt == 0) g->has_zero[k] = 1;
      }
    g->mean_w[k] = cnt ? sum / (double)cnt : 1.0;
  }
  TRY(cudaStreamSynchronize(s), "uploading the graph");
  g->layout = v->out.layout;
  return DYNG_OK;
}

/* Writes the entries of the touched vertices into place. */
__global__ void k_scatter_vertices(const uint32_t *vid, const uint32_t *voff, const uint32_t *vdeg, uint32_t nv,
                                   uint32_t *off, uint32_t *deg) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += gridDim.x * blockDim.x) {
    off[vid[i]] = voff[i];
    deg[vid[i]] = vdeg[i];
  }
}

struct ScatterArgs {
  const uint32_t *pos, *nbr, *slot, *own;
  const double *w[DYNG_MAX_WEIGHTS];
  uint32_t ne;
  int n_obj;
  uint32_t *d_nbr, *d_slot, *d_owner;
  double *d_w[DYNG_MAX_WEIGHTS];
};

__global__ void k_scatter_entries(ScatterArgs a) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.ne; i += gridDim.x * blockDim.x) {
    uint32_t p = a.pos[i];
    a.d_nbr[p] = a.nbr[i];
    a.d_slot[p] = a.slot[i];
    a.d_owner[p] = a.own[i];
    for (int k = 0; k < a.n_obj; k++) a.d_w[k][p] = a.w[k][i];
  }
}

void dev_batch_free(DevBatch *b) {
  cudaFree(b->dbuf);
  cudaFreeHost(b->hbuf);
  memset(b, 0, sizeof *b);
}

/* Copies a batch's removed and added edges to the device (SoA). */
static int dev_batch_upload(DevBatch *b, const dyng_changes *ch, int directed, int n_obj, cudaStream_t s, char *err,
                            size_t n_err) {
  size_t nr = ch->n_removed, na = ch->n_added;
  size_t bytes = na * 8 * (size_t)n_obj + nr * 12 + na * 8 + 64;
  if (bytes > b->cap) {
    cudaFree(b->dbuf);
    cudaFreeHost(b->hbuf);
    b->dbuf = b->hbuf = NULL;
    b->cap = 0;
    size_t cap = bytes + bytes / 2;
    TRY(cudaMalloc(&b->dbuf, cap), "cudaMalloc");
    TRY(cudaMallocHost(&b->hbuf, cap), "cudaMallocHost");
    b->cap = cap;
  }
  char *h = (char *)b->hbuf, *d = (char *)b->dbuf;
  double *hw = (double *)h;
  uint32_t *hu = (uint32_t *)(h + na * 8 * (size_t)n_obj);
  for (size_t i = 0; i < na; i++)
    for (int k = 0; k < n_obj; k++) hw[(size_t)k * na + i] = ch->added[i].w[k];
  for (size_t i = 0; i < nr; i++) {
    hu[i] = ch->removed[i].src;
    hu[nr + i] = ch->removed[i].dst;
    hu[2 * nr + i] = ch->removed[i].slot;
  }
  for (size_t i = 0; i < na; i++) {
    hu[3 * nr + i] = ch->added[i].src;
    hu[3 * nr + na + i] = ch->added[i].dst;
  }
  TRY(cudaMemcpyAsync(b->dbuf, b->hbuf, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  uint32_t *du = (uint32_t *)(d + na * 8 * (size_t)n_obj);
  for (int k = 0; k < n_obj; k++) b->add_w[k] = (const double *)(d + (size_t)k * na * 8);
  b->rem_src = du, b->rem_dst = du + nr, b->rem_slot = du + 2 * nr;
  b->add_src = du + 3 * nr, b->add_dst = du + 3 * nr + na;
  b->n_rem = (uint32_t)nr;
  b->n_add = (uint32_t)na;
  b->directed = directed;
  return DYNG_OK;
}

int dev_graph_follow(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, cudaStream_t s, char *err,
                     size_t n_err) {
  if (!ch || !g->off || v->out.layout != g->layout || v->n_vertices > g->cap_n || v->out.n_entries > g->cap_p ||
      v->n_objectives != g->n_obj)
    return dev_graph_upload(g, v, s, err, n_err);
  uint32_t n = v->n_vertices;
  if (n > g->mark_cap) {
    uint32_t *m = (uint32_t *)realloc(g->mark, (size_t)g->cap_n * sizeof *m);
    if (!m) return DYNG_ENOMEM;
    memset(m + g->mark_cap, 0, ((size_t)g->cap_n - g->mark_cap) * sizeof *m);
    g->mark = m;
    g->mark_cap = g->cap_n;
  }
  if (++g->mark_gen == 0) {
    memset(g->mark, 0, (size_t)g->mark_cap * sizeof *g->mark);
    g->mark_gen = 1;
  }
  /* The touched vertices: both ends of every removed and added edge (an
  ** undirected edge has an out entry at each; a directed one only at its
  ** source, but marking both is harmless). */
  uint32_t nv = 0;
  size_t ne = 0;
  for (int side = 0; side < 2; side++) {
    const dyng_edge_change *r = side ? ch->added : ch->removed;
    size_t cnt = side ? ch->n_added : ch->n_removed;
    for (size_t i = 0; i < cnt; i++)
      for (int end = 0; end < 2; end++) {
        uint32_t x = end ? r[i].dst : r[i].src;
        if (x >= n || g->mark[x] == g->mark_gen) continue;
        g->mark[x] = g->mark_gen;
        nv++;
        ne += v->out.deg[x];
      }
  }
  /* With the positions the host wrote, only those entries travel; else the
  ** touched vertices' whole segments (a hub's, on a power-law graph). */
  const int exact = ch->out_pos_complete;
  if (exact) ne = ch->n_out_pos;
  if (ne > 0xffffffffULL) return dev_graph_upload(g, v, s, err, n_err);
  size_t bytes = (size_t)nv * 12 + ne * (16 + 8 * (size_t)g->n_obj) + 64;
  if (bytes > g->stage_cap) {
    cudaFreeHost(g->stage);
    g->stage = NULL;
    g->stage_cap = 0;
    size_t cap = bytes + bytes / 2;
    TRY(cudaMallocHost(&g->stage, cap), "cudaMallocHost");
    g->stage_cap = cap;
  }
  if (bytes > g->dstage_cap) {
    cudaFree(g->dstage);
    g->bytes -= g->dstage_cap;
    g->dstage = NULL;
    g->dstage_cap = 0;
    size_t cap = bytes + bytes / 2;
    TRY(cudaMalloc(&g->dstage, cap), "cudaMalloc");
    g->dstage_cap = cap;
    g->bytes += cap;
  }
  /* Layout of the staging area: doubles first (aligned), then the words. */
  double *sw[DYNG_MAX_WEIGHTS];
  char *base = (char *)g->stage;
  for (int k = 0; k < g->n_obj; k++) sw[k] = (double *)(base + (size_t)k * ne * 8);
  uint32_t *words = (uint32_t *)(base + (size_t)g->n_obj * ne * 8);
  uint32_t *vid = words, *voff = vid + nv, *vdeg = voff + nv, *pos = vdeg + nv, *enbr = pos + ne, *eslot = enbr + ne,
           *eown = eslot + ne;
  uint32_t iv = 0;
  size_t ie = 0;
  g->mark_gen++; /* a second pass over the same ends, deduplicated again */
  if (g->mark_gen == 0) {
    memset(g->mark, 0, (size_t)g->mark_cap * sizeof *g->mark);
    g->mark_gen = 1;
  }
  for (int side = 0; side < 2; side++) {
    const dyng_edge_change *r = side ? ch->added : ch->removed;
    size_t cnt = side ? ch->n_added : ch->n_removed;
    for (size_t i = 0; i < cnt; i++) {
      if (side)
        for (int k = 0; k < g->n_obj; k++)
          if (r[i].w[k] == 0) g->has_zero[k] = 1;
      for (int end = 0; end < 2; end++) {
        uint32_t x = end ? r[i].dst : r[i].src;
        if (x >= n || g->mark[x] == g->mark_gen) continue;
        g->mark[x] = g->mark_gen;
        uint32_t o = v->out.off[x], d = v->out.deg[x];
        vid[iv] = x, voff[iv] = o, vdeg[iv] = d, iv++;
        if (exact) continue;
        for (uint32_t q = o; q < o + d; q++, ie++) {
          pos[ie] = q;
          eown[ie] = x;
          enbr[ie] = v->out.nbr[q];
          eslot[ie] = v->out.ref[q] >> 1;
          for (int k = 0; k < g->n_obj; k++) sw[k][ie] = v->out.w[k][q];
        }
      }
    }
  }
  if (exact) {
    /* A written position's owner is the end of its edge that keeps it
    ** (side 0: the source); a position written and then left behind still
    ** names a vertex, whose live range does not hold it. */
    for (size_t i = 0; i < ne; i++) {
      uint32_t q = ch->out_pos[i], r = v->out.ref[q], slot = r >> 1;
      uint32_t own = slot < v->n_edge_slots ? ((r & 1u) ? v->edge_dst[slot] : v->edge_src[slot]) : DYNG_NONE;
      pos[i] = q;
      eown[i] = own < n ? own : 0;
      enbr[i] = v->out.nbr[q];
      eslot[i] = slot;
      for (int k = 0; k < g->n_obj; k++) sw[k][i] = v->out.w[k][q];
    }
    ie = ne;
  }
  TRY(cudaMemcpyAsync(g->dstage, g->stage, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  char *dbase = (char *)g->dstage;
  uint32_t *dwords = (uint32_t *)(dbase + (size_t)g->n_obj * ne * 8);
  if (nv) {
    k_scatter_vertices<<<blocks_for(nv), THREADS, 0, s>>>(dwords, dwords + nv, dwords + 2 * (size_t)nv, nv, g->off,
                                                          g->deg);
    LAUNCHED("k_scatter_vertices");
  }
  if (ne) {
    ScatterArgs a;
    memset(&a, 0, sizeof a);
    a.pos = dwords + 3 * (size_t)nv;
    a.nbr = a.pos + ne;
    a.slot = a.nbr + ne;
    a.own = a.slot + ne;
    a.d_owner = g->owner;
    for (int k = 0; k < g->n_obj; k++) a.w[k] = (const double *)(dbase + (size_t)k * ne * 8), a.d_w[k] = g->w[k];
    a.ne = (uint32_t)ne;
    a.n_obj = g->n_obj;
    a.d_nbr = g->nbr;
    a.d_slot = g->slot;
    k_scatter_entries<<<blocks_for(ne), THREADS, 0, s>>>(a);
    LAUNCHED("k_scatter_entries");
  }
  int rc = dev_batch_upload(&g->batch, ch, v->directed, g->n_obj, s, err, n_err);
  if (rc) return rc;
  /* The staging area is reused by the next batch: wait for the copy. */
  TRY(cudaStreamSynchronize(s), "following the batch");
  g->n = n;
  g->n_pos = v->out.n_entries;
  return DYNG_OK;
}

/* ---- work space ---------------------------------------------------------- */

void dev_sssp_free(DevSssp *w) {
  cudaFree(w->dist);
  cudaFree(w->parent);
  cudaFree(w->pedge);
  cudaFree(w->hops);
  cudaFree(w->stamp);
  cudaFree(w->far_flag);
  for (int i = 0; i < 5; i++) cudaFree(w->q[i]);
  cudaFree(w->q2);
  cudaFree(w->counters);
  cudaFreeHost(w->h_counters);
  cudaFree(w->best);
  cudaFree(w->flag);
  cudaFree(w->anc);
  cudaFree(w->chg_stamp);
  cudaFree(w->chg_list);
  cudaFree(w->rows);
  cudaFreeHost(w->h_rows);
  memset(w, 0, sizeof *w);
}

int dev_sssp_reserve(DevSssp *w, uint32_t n, char *err, size_t n_err) {
  if (w->cap >= n && w->dist) return DYNG_OK;
  dev_sssp_free(w);
  size_t nn = (size_t)(n ? n : 1);
  int rc;
  if ((rc = dev_alloc((void **)&w->dist, nn * 8, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->parent, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->pedge, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->hops, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->stamp, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->far_flag, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->q2, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->counters, 16 * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->best, nn * 8, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->flag, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->anc, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->chg_stamp, nn * 4, &w->bytes, "cudaMalloc", err, n_err)) ||
      (rc = dev_alloc((void **)&w->chg_list, nn * 4, &w->bytes, "cudaMalloc", err, n_err))) {
    dev_sssp_free(w);
    return rc;
  }
  for (int i = 0; i < 5; i++)
    if ((rc = dev_alloc((void **)&w->q[i], nn * 4, &w->bytes, "cudaMalloc", err, n_err))) {
      dev_sssp_free(w);
      return rc;
    }
  if ((rc = dev_fail(cudaMallocHost((void **)&w->h_counters, 16 * 4), "cudaMallocHost", err, n_err))) {
    dev_sssp_free(w);
    return rc;
  }
  if ((rc = dev_fail(cudaMemset(w->chg_stamp, 0, nn * 4), "cudaMemset", err, n_err))) {
    dev_sssp_free(w);
    return rc;
  }
  w->chg_gen = 0;
  w->cap = n;
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
  TRY(cudaMalloc((void **)&w->rows, cap * 24), "cudaMalloc");
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

/* ---- kernels ------------------------------------------------------------ */

__global__ void k_fill_u64(unsigned long long *a, uint32_t n, unsigned long long x) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = x;
}

__global__ void k_fill_u32(uint32_t *a, uint32_t n, uint32_t x) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = x;
}

/* Queues a vertex whose distance dropped to `bits`. */
__device__ __forceinline__ void enqueue(uint32_t v, unsigned long long bits, unsigned long long thresh,
                                        const uint32_t *deg, uint32_t *stamp, uint32_t round, uint32_t *far_flag,
                                        uint32_t *out_light, uint32_t *out_heavy, uint32_t *far_q,
                                        uint32_t *c_light, uint32_t *c_heavy, uint32_t *c_far) {
  if (bits < thresh) {
    if (atomicExch(&stamp[v], round) != round) {
      if (deg[v] >= HEAVY_DEGREE) out_heavy[atomicAdd(c_heavy, 1u)] = v;
      else out_light[atomicAdd(c_light, 1u)] = v;
    }
  } else if (atomicExch(&far_flag[v], 1u) == 0u) {
    far_q[atomicAdd(c_far, 1u)] = v;
  }
}

struct RelaxArgs {
  const uint32_t *off, *deg, *nbr;
  const double *w;
  unsigned long long *dist;
  const uint32_t *in_q;
  const uint32_t *in_n;
  uint32_t *out_light, *out_heavy, *far_q;
  uint32_t *c_light, *c_heavy, *c_far;
  uint32_t *stamp, *far_flag;
  uint32_t round;
  unsigned long long thresh;
};

/* The smallest distance in the far queue. */
__global__ void k_far_min(const uint32_t *far_q, const uint32_t *far_n, const unsigned long long *dist,
                          unsigned long long *out) {
  uint32_t n = *far_n;
  unsigned long long best = INF_BITS;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned long long d = dist[far_q[i]];
    if (d < best) best = d;
  }
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long x = __shfl_down_sync(0xffffffffu, best, o);
    if (x < best) best = x;
  }
  if ((threadIdx.x & 31u) == 0 && best < INF_BITS) atomicMin(out, best);
}

/* Splits the far queue: settled entries go, those below the new threshold
** start the next near frontier, the rest stay far. */
__global__ void k_far_filter(const uint32_t *far_in, const uint32_t *far_in_n, uint32_t *far_out,
                             uint32_t *far_out_n, const unsigned long long *dist, unsigned long long done_below,
                             unsigned long long thresh, const uint32_t *deg, uint32_t *stamp, uint32_t round,
                             uint32_t *far_flag, uint32_t *out_light, uint32_t *out_heavy, uint32_t *c_light,
                             uint32_t *c_heavy) {
  uint32_t n = *far_in_n;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t v = far_in[i];
    unsigned long long d = dist[v];
    if (d < done_below) {
      far_flag[v] = 0;
    } else if (d < thresh) {
      far_flag[v] = 0;
      if (atomicExch(&stamp[v], round) != round) {
        if (deg[v] >= HEAVY_DEGREE) out_heavy[atomicAdd(c_heavy, 1u)] = v;
        else out_light[atomicAdd(c_light, 1u)] = v;
      }
    } else {
      far_out[atomicAdd(far_out_n, 1u)] = v; /* stays flagged */
    }
  }
}

/* Whether position p holds a live entry, and of which vertex (*u). */
__device__ __forceinline__ int live_entry(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, size_t p,
                                          uint32_t *u) {
  uint32_t o = owner[p];
  *u = o;
  return (uint32_t)(p - off[o]) < deg[o];
}

/* Parents, positive weights: the tight in-edge of smallest slot. */
__global__ void k_parent_by_slot(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, const uint32_t *nbr,
                                 const uint32_t *slot, const double *w, size_t n_pos, const unsigned long long *dist,
                                 unsigned long long *best) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, off, deg, p, &u)) continue;
    unsigned long long bu = dist[u];
    uint32_t v = nbr[p];
    if (bu == INF_BITS || v == u) continue;
    if ((unsigned long long)__double_as_longlong(__longlong_as_double((long long)bu) + w[p]) == dist[v])
      atomicMin(&best[v], ((unsigned long long)slot[p] << 32) | u);
  }
}

/* One level of the breadth-first search over tight edges. */
__global__ void k_tight_bfs(const uint32_t *off, const uint32_t *deg, const uint32_t *nbr, const uint32_t *slot, const double *w,
                            const unsigned long long *dist, const uint32_t *in_q, const uint32_t *in_n, uint32_t *out_q,
                            uint32_t *out_n, uint32_t *hops, uint32_t level, uint32_t *parent, uint32_t *pedge) {
  uint32_t n = *in_n;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t u = in_q[i];
    double du = __longlong_as_double((long long)dist[u]);
    for (uint32_t p = off[u], e = off[u] + deg[u]; p < e; p++) {
      uint32_t v = nbr[p];
      if (hops[v] != NO_VERTEX) continue;
      if ((unsigned long long)__double_as_longlong(du + w[p]) != dist[v]) continue;
      if (atomicCAS(&hops[v], NO_VERTEX, level + 1) == NO_VERTEX) {
        parent[v] = u;
        pedge[v] = slot[p];
        out_q[atomicAdd(out_n, 1u)] = v;
      }
    }
  }
}

__global__ void k_split_best(const unsigned long long *best, uint32_t n, uint32_t *parent, uint32_t *pedge) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    unsigned long long b = best[v];
    parent[v] = b == ~0ULL ? NO_VERTEX : (uint32_t)b;
    pedge[v] = b == ~0ULL ? NO_VERTEX : (uint32_t)(b >> 32);
  }
}

/* ---- the run ------------------------------------------------------------ */

static unsigned long long bits_of(double d) {
  unsigned long long b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* Where a relaxation records the vertices whose distance dropped (for an
** update: their parents are chosen again and they go back to the host). */
struct Changed {
  uint32_t *stamp; /* per vertex */
  uint32_t gen;
  uint32_t *list;
  uint32_t *count;
};

__device__ __forceinline__ void note_changed(const Changed &c, uint32_t v) {
  if (c.stamp && atomicExch(&c.stamp[v], c.gen) != c.gen) c.list[atomicAdd(c.count, 1u)] = v;
}

/* The near-far loop, from the queues as they are: `n_light`/`n_heavy` in
** near buffer A, the far queue in far buffer A (its length on the device),
** threshold `thresh`, everything below `done_below` settled. */
static int propagate(const DevGraph *c, DevSssp *w, int obj, unsigned long long *dist, cudaStream_t s,
                     uint32_t n_light, uint32_t n_heavy, double thresh, double done_below, Changed chg, char *err,
                     size_t n_err);

struct RelaxArgs2 {
  RelaxArgs a;
  Changed chg;
};

__global__ void k_relax_light(RelaxArgs a, Changed chg) {
  uint32_t n = *a.in_n;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t u = a.in_q[i];
    double du = __longlong_as_double((long long)a.dist[u]);
    for (uint32_t p = a.off[u], e = a.off[u] + a.deg[u]; p < e; p++) {
      uint32_t v = a.nbr[p];
      unsigned long long nb = (unsigned long long)__double_as_longlong(du + a.w[p]);
      if (nb < a.dist[v] && nb < atomicMin(&a.dist[v], nb)) {
        note_changed(chg, v);
        enqueue(v, nb, a.thresh, a.deg, a.stamp, a.round, a.far_flag, a.out_light, a.out_heavy, a.far_q, a.c_light,
                a.c_heavy, a.c_far);
      }
    }
  }
}

__global__ void k_relax_heavy(RelaxArgs a, Changed chg) {
  uint32_t n = *a.in_n;
  uint32_t lane = threadIdx.x & 31u;
  uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
  for (uint32_t i = warp; i < n; i += warps) {
    uint32_t u = a.in_q[i];
    double du = __longlong_as_double((long long)a.dist[u]);
    for (uint32_t p = a.off[u] + lane, e = a.off[u] + a.deg[u]; p < e; p += 32) {
      uint32_t v = a.nbr[p];
      unsigned long long nb = (unsigned long long)__double_as_longlong(du + a.w[p]);
      if (nb < a.dist[v] && nb < atomicMin(&a.dist[v], nb)) {
        note_changed(chg, v);
        enqueue(v, nb, a.thresh, a.deg, a.stamp, a.round, a.far_flag, a.out_light, a.out_heavy, a.far_q, a.c_light,
                a.c_heavy, a.c_far);
      }
    }
  }
}

/* Copies the queue counters to the host and waits for them. */
static cudaError_t look(const uint32_t *cnt, uint32_t *h, cudaStream_t s) {
  cudaError_t e = cudaMemcpyAsync(h, cnt, 8 * 4, cudaMemcpyDeviceToHost, s);
  return e == cudaSuccess ? cudaStreamSynchronize(s) : e;
}

static int propagate(const DevGraph *c, DevSssp *w, int obj, unsigned long long *dist, cudaStream_t s,
                     uint32_t n_light, uint32_t n_heavy, double thresh, double done_below, Changed chg, char *err,
                     size_t n_err) {
  const double *wt = c->w[obj];
  double delta = c->mean_w[obj] > 0 ? c->mean_w[obj] * 4.0 : 1.0;
  uint32_t *cnt = w->counters, *h = w->h_counters;
  /* Buffers: A = (q[0] light, q[1] heavy), B = (q[2], q[3]); far: q[4] and q2. */
  uint32_t *light[2] = {w->q[0], w->q[2]}, *heavy[2] = {w->q[1], w->q[3]};
  uint32_t *c_light[2] = {&cnt[C_LIGHT_A], &cnt[C_LIGHT_B]}, *c_heavy[2] = {&cnt[C_HEAVY_A], &cnt[C_HEAVY_B]};
  uint32_t *far[2] = {w->q[4], w->q2}, *c_far[2] = {&cnt[C_FAR_A], &cnt[C_FAR_B]};
  unsigned long long *far_min = (unsigned long long *)&cnt[8];
  int cur = 0, fcur = 0;
  uint32_t round = w->round;
  TRY(look(cnt, h, s), "starting");
  for (;;) {
    while (n_light + n_heavy) {
      /* Several rounds per look at the counters: each look is a round trip
      ** to the host, and a kernel whose queue came out empty returns at
      ** once.  The grids are sized from the last look (the kernels stride,
      ** so a frontier that grew meanwhile is still covered). */
      uint64_t est_l = 2 * (uint64_t)n_light + 8192, est_h = (2 * (uint64_t)n_heavy + 64) * 32;
      for (int k = 0; k < ROUNDS_PER_LOOK; k++) {
        round++;
        int nxt = cur ^ 1;
        TRY(cudaMemsetAsync(c_light[nxt], 0, 8, s), "cudaMemset"); /* light and heavy counts */
        RelaxArgs a = {c->off, c->deg, c->nbr, wt, dist, light[cur], c_light[cur], light[nxt], heavy[nxt],
                       far[fcur], c_light[nxt], c_heavy[nxt], c_far[fcur], w->stamp, w->far_flag, round,
                       bits_of(thresh)};
        k_relax_light<<<blocks_for(est_l), THREADS, 0, s>>>(a, chg);
        LAUNCHED("k_relax_light");
        a.in_q = heavy[cur];
        a.in_n = c_heavy[cur];
        k_relax_heavy<<<blocks_for(est_h), THREADS, 0, s>>>(a, chg);
        LAUNCHED("k_relax_heavy");
        cur = nxt;
      }
      TRY(look(cnt, h, s), "relaxing");
      n_light = h[cur ? C_LIGHT_B : C_LIGHT_A];
      n_heavy = h[cur ? C_HEAVY_B : C_HEAVY_A];
    }
    uint32_t n_far = h[fcur ? C_FAR_B : C_FAR_A];
    if (!n_far) break;
    /* Past the smallest far distance by delta. */
    unsigned long long inf = INF_BITS;
    TRY(cudaMemcpyAsync(far_min, &inf, 8, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    k_far_min<<<blocks_for(n_far), THREADS, 0, s>>>(far[fcur], c_far[fcur], dist, far_min);
    LAUNCHED("k_far_min");
    unsigned long long mb = 0;
    TRY(cudaMemcpyAsync(h + 12, far_min, 8, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
    TRY(cudaStreamSynchronize(s), "the far queue");
    memcpy(&mb, h + 12, 8);
    double fmin;
    memcpy(&fmin, &mb, 8);
    done_below = thresh;
    thresh = (fmin > thresh ? fmin : thresh) + delta;
    round++;
    int nf = fcur ^ 1;
    TRY(cudaMemsetAsync(c_far[nf], 0, 4, s), "cudaMemset");
    TRY(cudaMemsetAsync(c_light[cur], 0, 4, s), "cudaMemset");
    TRY(cudaMemsetAsync(c_heavy[cur], 0, 4, s), "cudaMemset");
    k_far_filter<<<blocks_for(n_far), THREADS, 0, s>>>(far[fcur], c_far[fcur], far[nf], c_far[nf], dist,
                                                       bits_of(done_below), bits_of(thresh), c->deg, w->stamp,
                                                       round, w->far_flag, light[cur], heavy[cur], c_light[cur],
                                                       c_heavy[cur]);
    LAUNCHED("k_far_filter");
    fcur = nf;
    TRY(look(cnt, h, s), "the far queue");
    n_light = h[cur ? C_LIGHT_B : C_LIGHT_A];
    n_heavy = h[cur ? C_HEAVY_B : C_HEAVY_A];
  }
  w->round = round + 1;
  return DYNG_OK;
}

/* Marks stamps and flags as fresh for a search over n vertices. */
static int fresh_search(DevSssp *w, uint32_t n, cudaStream_t s, char *err, size_t n_err) {
  TRY(cudaMemsetAsync(w->stamp, 0, (size_t)n * 4, s), "cudaMemset");
  TRY(cudaMemsetAsync(w->far_flag, 0, (size_t)n * 4, s), "cudaMemset");
  TRY(cudaMemsetAsync(w->counters, 0, 16 * 4, s), "cudaMemset");
  w->round = 1;
  return DYNG_OK;
}

/* All parents again: the smallest-slot tight in-edge, or (zero weights)
** the search over tight edges from the source. */
static int parents_all(const DevGraph *c, DevSssp *w, int obj, uint32_t source, const unsigned long long *dist,
                       uint32_t *parent, uint32_t *pedge, cudaStream_t s, char *err, size_t n_err) {
  uint32_t n = c->n;
  const double *wt = c->w[obj];
  uint32_t *cnt = w->counters, *h = w->h_counters;
  if (!c->has_zero[obj]) {
    unsigned long long *best = w->best;
    k_fill_u64<<<blocks_for(n), THREADS, 0, s>>>(best, n, ~0ULL);
    LAUNCHED("k_fill_u64");
    k_parent_by_slot<<<blocks_for(c->n_pos), THREADS, 0, s>>>(c->owner, c->off, c->deg, c->nbr, c->slot, wt, c->n_pos,
                                                              dist, best);
    LAUNCHED("k_parent_by_slot");
    k_split_best<<<blocks_for(n), THREADS, 0, s>>>(best, n, parent, pedge);
    LAUNCHED("k_split_best");
  } else {
    uint32_t *light[2] = {w->q[0], w->q[2]};
    uint32_t *c_q[2] = {&cnt[C_LIGHT_A], &cnt[C_LIGHT_B]};
    k_fill_u32<<<blocks_for(n), THREADS, 0, s>>>(w->hops, n, NO_VERTEX);
    LAUNCHED("k_fill_u32");
    k_fill_u32<<<blocks_for(n), THREADS, 0, s>>>(parent, n, NO_VERTEX);
    LAUNCHED("k_fill_u32");
    k_fill_u32<<<blocks_for(n), THREADS, 0, s>>>(pedge, n, NO_VERTEX);
    LAUNCHED("k_fill_u32");
    uint32_t zero32 = 0, one = 1;
    TRY(cudaMemcpyAsync(&w->hops[source], &zero32, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    TRY(cudaMemcpyAsync(light[0], &source, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    TRY(cudaMemcpyAsync(c_q[0], &one, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    int qc = 0;
    uint32_t level = 0, nq = 1;
    while (nq) {
      int qn = qc ^ 1;
      TRY(cudaMemsetAsync(c_q[qn], 0, 4, s), "cudaMemset");
      k_tight_bfs<<<blocks_for(nq), THREADS, 0, s>>>(c->off, c->deg, c->nbr, c->slot, wt, dist, light[qc], c_q[qc],
                                                     light[qn], c_q[qn], w->hops, level, parent, pedge);
      LAUNCHED("k_tight_bfs");
      TRY(cudaMemcpyAsync(h, cnt, 8 * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
      TRY(cudaStreamSynchronize(s), "the tree");
      qc = qn;
      nq = h[qc ? C_LIGHT_B : C_LIGHT_A];
      level++;
    }
    TRY(cudaMemsetAsync(cnt, 0, 8 * 4, s), "cudaMemset");
  }
  uint32_t none[2] = {NO_VERTEX, NO_VERTEX};
  TRY(cudaMemcpyAsync(&parent[source], &none[0], 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(&pedge[source], &none[1], 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  return DYNG_OK;
}

int dev_sssp_run(const DevGraph *c, DevSssp *w, uint32_t source, int obj, cudaStream_t s, unsigned long long *d_dist,
                 uint32_t *d_parent, uint32_t *d_pedge, double *dist, uint32_t *parent, uint32_t *pedge, char *err,
                 size_t n_err) {
  uint32_t n = c->n;
  int rc = dev_sssp_reserve(w, n, err, n_err);
  if (rc) return rc;
  if (source >= n || obj < 0 || obj >= c->n_obj) return DYNG_EINVAL;
  k_fill_u64<<<blocks_for(n), THREADS, 0, s>>>(d_dist, n, INF_BITS);
  LAUNCHED("k_fill_u64");
  if ((rc = fresh_search(w, n, s, err, n_err))) return rc;
  unsigned long long zero = 0;
  uint32_t one = 1;
  TRY(cudaMemcpyAsync(&d_dist[source], &zero, 8, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(w->q[0], &source, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(&w->counters[C_LIGHT_A], &one, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  double delta = c->mean_w[obj] > 0 ? c->mean_w[obj] * 4.0 : 1.0;
  Changed none = {NULL, 0, NULL, NULL};
  if ((rc = propagate(c, w, obj, d_dist, s, 1, 0, delta, 0, none, err, n_err))) return rc;
  if ((rc = parents_all(c, w, obj, source, d_dist, d_parent, d_pedge, s, err, n_err))) return rc;
  TRY(cudaMemcpyAsync(dist, d_dist, (size_t)n * 8, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(parent, d_parent, (size_t)n * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaMemcpyAsync(pedge, d_pedge, (size_t)n * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "copying the tree");
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

/* Pointer jumping: a vertex is cut when an ancestor (or itself) is a root. */
__global__ void k_jump_init(const uint32_t *parent, uint32_t n, uint32_t *anc) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) anc[v] = parent[v];
}

__global__ void k_jump(uint32_t n, uint32_t *anc, uint32_t *flag) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    if (flag[v]) continue;
    uint32_t a = anc[v];
    if (a == NO_VERTEX) continue;
    if (flag[a]) flag[v] = 1;
    else anc[v] = anc[a];
  }
}

/* Cut vertices lose their distance and parent and are noted as changed. */
__global__ void k_cut(uint32_t n, const uint32_t *flag, unsigned long long *dist, uint32_t *parent, uint32_t *pedge,
                      Changed chg) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (flag[v]) {
      dist[v] = INF_BITS;
      parent[v] = pedge[v] = NO_VERTEX;
      note_changed(chg, v);
    }
}

/* Every vertex outside the cut offers itself to its cut out-neighbours:
** they go to the far queue (the search starts from there). */
__global__ void k_border(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, const uint32_t *nbr,
                         const double *w, size_t n_pos, const uint32_t *flag, unsigned long long *dist,
                         uint32_t *far_flag, uint32_t *far_q, uint32_t *c_far) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, off, deg, p, &u)) continue;
    uint32_t x = nbr[p];
    if (!flag[x] || flag[u]) continue;
    unsigned long long bu = dist[u];
    if (bu == INF_BITS) continue;
    unsigned long long nb = (unsigned long long)__double_as_longlong(__longlong_as_double((long long)bu) + w[p]);
    if (nb < dist[x] && nb < atomicMin(&dist[x], nb) && atomicExch(&far_flag[x], 1u) == 0u)
      far_q[atomicAdd(c_far, 1u)] = x;
  }
}

/* Added edges relax their far end (both ends of an undirected one). */
__global__ void k_relax_added(const uint32_t *src, const uint32_t *dst, const double *w, uint32_t n_add,
                              int both_ways, unsigned long long *dist, uint32_t *far_flag, uint32_t *far_q,
                              uint32_t *c_far, Changed chg) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_add; i += gridDim.x * blockDim.x)
    for (int side = 0; side < (both_ways ? 2 : 1); side++) {
      uint32_t u = side ? dst[i] : src[i], v = side ? src[i] : dst[i];
      unsigned long long bu = dist[u];
      if (bu == INF_BITS) continue;
      unsigned long long nb = (unsigned long long)__double_as_longlong(__longlong_as_double((long long)bu) + w[i]);
      if (nb < dist[v] && nb < atomicMin(&dist[v], nb)) {
        note_changed(chg, v);
        if (atomicExch(&far_flag[v], 1u) == 0u) far_q[atomicAdd(c_far, 1u)] = v;
      }
    }
}

/* Parents of the changed vertices only: the smallest-slot tight in-edge. */
__global__ void k_best_reset(const uint32_t *list, const uint32_t *count, unsigned long long *best) {
  uint32_t n = *count;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) best[list[i]] = ~0ULL;
}

__global__ void k_parent_changed(const uint32_t *owner, const uint32_t *off, const uint32_t *deg, const uint32_t *nbr,
                                 const uint32_t *slot, const double *w, size_t n_pos, const unsigned long long *dist,
                                 const uint32_t *stamp, uint32_t gen, unsigned long long *best) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t u;
    if (!live_entry(owner, off, deg, p, &u)) continue; /* slack holds garbage */
    uint32_t v = nbr[p];
    if (v == u || stamp[v] != gen) continue;
    unsigned long long bu = dist[u];
    if (bu == INF_BITS) continue;
    if ((unsigned long long)__double_as_longlong(__longlong_as_double((long long)bu) + w[p]) == dist[v])
      atomicMin(&best[v], ((unsigned long long)slot[p] << 32) | u);
  }
}

/* The changed vertices' new rows, packed for the copy to the host. */
__global__ void k_gather(const uint32_t *list, const uint32_t *count, const unsigned long long *best,
                         const unsigned long long *dist, uint32_t source, uint32_t *parent, uint32_t *pedge,
                         unsigned long long *out) {
  uint32_t n = *count;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t v = list[i];
    unsigned long long b = best[v];
    uint32_t pa = b == ~0ULL || v == source ? NO_VERTEX : (uint32_t)b;
    uint32_t pe = b == ~0ULL || v == source ? NO_VERTEX : (uint32_t)(b >> 32);
    parent[v] = pa;
    pedge[v] = pe;
    out[3 * (size_t)i] = v;
    out[3 * (size_t)i + 1] = dist[v];
    out[3 * (size_t)i + 2] = ((unsigned long long)pe << 32) | pa;
  }
}

int dev_sssp_repair(const DevGraph *c, DevSssp *w, const DevBatch *b, uint32_t source, int obj, cudaStream_t s,
                    unsigned long long *d_dist, uint32_t *d_parent, uint32_t *d_pedge, double *dist,
                    uint32_t *parent, uint32_t *pedge, size_t *pn_changed, char *err, size_t n_err) {
  uint32_t n = c->n;
  int rc = dev_sssp_reserve(w, n, err, n_err);
  if (rc) return rc;
  if (c->has_zero[obj]) return DYNG_ETOOBIG; /* zero weights: parents need the full search */
  if ((rc = fresh_search(w, n, s, err, n_err))) return rc;
  uint32_t *cnt = w->counters, *h = w->h_counters;
  if (++w->chg_gen == 0) {
    TRY(cudaMemsetAsync(w->chg_stamp, 0, (size_t)w->cap * 4, s), "cudaMemset");
    w->chg_gen = 1;
  }
  Changed chg = {w->chg_stamp, w->chg_gen, w->chg_list, &cnt[C_CHANGED]};
  /* 1. The cut. */
  TRY(cudaMemsetAsync(w->flag, 0, (size_t)n * 4, s), "cudaMemset");
  if (b->n_rem) {
    k_cut_roots<<<blocks_for(b->n_rem), THREADS, 0, s>>>(b->rem_src, b->rem_dst, b->rem_slot, b->n_rem, !b->directed,
                                                         source, d_parent, d_pedge, w->flag, &cnt[C_ROOTS]);
    LAUNCHED("k_cut_roots");
  }
  TRY(cudaMemcpyAsync(h, cnt, 16 * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "the cut");
  if (h[C_ROOTS]) {
    k_jump_init<<<blocks_for(n), THREADS, 0, s>>>(d_parent, n, w->anc);
    LAUNCHED("k_jump_init");
    for (uint32_t span = 1; span < n; span *= 2) {
      k_jump<<<blocks_for(n), THREADS, 0, s>>>(n, w->anc, w->flag);
      LAUNCHED("k_jump");
    }
    k_cut<<<blocks_for(n), THREADS, 0, s>>>(n, w->flag, d_dist, d_parent, d_pedge, chg);
    LAUNCHED("k_cut");
    /* 2. Offers into the cut, from its border. */
    k_border<<<blocks_for(c->n_pos), THREADS, 0, s>>>(c->owner, c->off, c->deg, c->nbr, c->w[obj], c->n_pos, w->flag,
                                                      d_dist, w->far_flag, w->q[4], &cnt[C_FAR_A]);
    LAUNCHED("k_border");
  }
  if (b->n_add) {
    k_relax_added<<<blocks_for(b->n_add), THREADS, 0, s>>>(b->add_src, b->add_dst, b->add_w[obj], b->n_add,
                                                           !b->directed, d_dist, w->far_flag, w->q[4], &cnt[C_FAR_A],
                                                           chg);
    LAUNCHED("k_relax_added");
  }
  /* 3. The search from whatever improved (all of it in the far queue). */
  if ((rc = propagate(c, w, obj, d_dist, s, 0, 0, 0.0, 0.0, chg, err, n_err))) return rc;
  /* 4. Parents of the changed vertices, and their rows back to the host. */
  TRY(cudaMemcpyAsync(h, cnt, 16 * 4, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "the repair");
  uint32_t n_chg = h[C_CHANGED];
  *pn_changed = n_chg;
  if (!n_chg) return DYNG_OK;
  unsigned long long *best = w->best;
  k_best_reset<<<blocks_for(n_chg), THREADS, 0, s>>>(w->chg_list, &cnt[C_CHANGED], best);
  LAUNCHED("k_best_reset");
  k_parent_changed<<<blocks_for(c->n_pos), THREADS, 0, s>>>(c->owner, c->off, c->deg, c->nbr, c->slot, c->w[obj],
                                                             c->n_pos, d_dist, w->chg_stamp, w->chg_gen, best);
  LAUNCHED("k_parent_changed");
  if ((rc = dev_rows_reserve(w, n_chg, err, n_err))) return rc;
  k_gather<<<blocks_for(n_chg), THREADS, 0, s>>>(w->chg_list, &cnt[C_CHANGED], best, d_dist, source, d_parent, d_pedge,
                                                 w->rows);
  LAUNCHED("k_gather");
  TRY(cudaMemcpyAsync(w->h_rows, w->rows, (size_t)n_chg * 24, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "copying the changed rows");
  for (uint32_t i = 0; i < n_chg; i++) {
    uint32_t v = (uint32_t)w->h_rows[3 * (size_t)i];
    memcpy(&dist[v], &w->h_rows[3 * (size_t)i + 1], 8);
    parent[v] = (uint32_t)w->h_rows[3 * (size_t)i + 2];
    pedge[v] = (uint32_t)(w->h_rows[3 * (size_t)i + 2] >> 32);
  }
  return DYNG_OK;
}
