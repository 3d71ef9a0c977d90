/*
** cuda/dev_graph.cu: the device copy of a graph.
**
** The graph is the view's out-adjacency in the host's own layout (segments
** with room to grow; see engine/types.h): the first time, and whenever the
** host rewrote its pool, every array is copied as it is; after a batch only
** the entries of the vertices its edges touched, gathered into one pinned
** buffer, copied in one transfer and scattered into place by a kernel.
*/
#include "cuda/dev_graph.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engine/errcode.h"
}

#define THREADS 256

#define TRY(call, what)                                                  \
  do {                                                                   \
    int rc_ = dev_fail((call), (what), err, n_err);                      \
    if (rc_ != DYNG_OK) return rc_;                                      \
  } while (0)

#define LAUNCHED(what) TRY(cudaGetLastError(), what)

/* How many items ahead the host's gathering loops ask for what they will
** read: the touched vertices and written positions are scattered over
** arrays far larger than the caches, and a loop that waits for each miss in
** turn spends the follow's time waiting. */
#define AHEAD 16

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
  cudaFree(g->rowid);
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) cudaFree(g->w[k]);
  cudaFree(g->dstage);
  cudaFreeHost(g->stage);
  free(g->mark);
  dev_batch_free(&g->batch);
  memset(g, 0, sizeof *g);
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

/* Whether a weight w of an objective whose weights add up to `sum` can be
** lost when added to a distance: every shortest distance is at most the
** sum, and adding w > ulp(D) / 2 to D always changes D; 2^-52 * sum is a
** bound on ulp(D) with room to spare.  Zero is lost by definition. */
static int weight_may_vanish(double w, double sum) {
  return !(w > 0) || w <= ldexp(sum, -52);
}

int dev_graph_upload(DevGraph *g, const dyng_graph_view *v, cudaStream_t s, char *err, size_t n_err) {
  uint32_t n = v->n_vertices;
  size_t p = v->out.n_entries;
  int n_obj = v->n_objectives;
  uint32_t n_slots = v->n_edge_slots;
  if (n > g->cap_n || p > g->cap_p || n_slots > g->cap_s || n_obj != g->n_obj || !g->off) {
    /* Room for growth, so that batches rarely need a new upload. */
    DevGraph fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.cap_n = n + n / 4 + 1024;
    fresh.cap_p = p + p / 4 + 4096;
    fresh.cap_s = n_slots + n_slots / 4 + 1024;
    fresh.n_obj = n_obj;
    int rc;
    if ((rc = dev_alloc((void **)&fresh.off, (size_t)fresh.cap_n * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.deg, (size_t)fresh.cap_n * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.nbr, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.slot, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.owner, fresh.cap_p * 4, &fresh.bytes, "cudaMalloc", err, n_err)) ||
        (rc = dev_alloc((void **)&fresh.rowid, (size_t)fresh.cap_s * 8, &fresh.bytes, "cudaMalloc", err, n_err))) {
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
    if ((rc = dev_fail(cudaMemsetAsync(fresh.owner, 0, fresh.cap_p * 4, s), "cudaMemset", err, n_err))) {
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
  if (n_slots)
    TRY(cudaMemcpyAsync(g->rowid, v->edge_rowid, (size_t)n_slots * 8, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  for (int k = 0; k < n_obj; k++) {
    TRY(cudaMemcpyAsync(g->w[k], v->out.w[k], p * 8, cudaMemcpyHostToDevice, s), "cudaMemcpy");
    double sum = 0;
    size_t cnt = 0;
    double least = INFINITY;
    for (uint32_t x = 0; x < n; x++)
      for (uint32_t q = v->out.off[x], e = q + v->out.deg[x]; q < e; q++) {
        double wt = v->out.w[k][q];
        sum += wt;
        cnt++;
        if (wt < least) least = wt;
      }
    g->mean_w[k] = cnt ? sum / (double)cnt : 1.0;
    g->sum_w[k] = sum;
    g->min_w[k] = least;
    g->has_zero[k] = weight_may_vanish(least, sum);
  }
  TRY(cudaStreamSynchronize(s), "uploading the graph");
  g->layout = v->out.layout;
  return DYNG_OK;
}

/* Writes the offsets and degrees of the touched vertices into place (a
** vertex staged twice has the same values both times); vertices n and
** above are none. */
__global__ void k_scatter_vertices(const uint32_t *vid, const uint32_t *voff, const uint32_t *vdeg, uint32_t nv,
                                   uint32_t n, uint32_t *off, uint32_t *deg) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += gridDim.x * blockDim.x) {
    uint32_t x = vid[i];
    if (x >= n) continue;
    off[x] = voff[i];
    deg[x] = vdeg[i];
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

/* The added edges' rowids into their slots. */
__global__ void k_scatter_rowids(const uint32_t *slot, const long long *rowid, uint32_t n, long long *to) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) to[slot[i]] = rowid[i];
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
  size_t bytes = na * 8 * (size_t)n_obj + na * 8 + nr * 12 + na * 12 + 64;
  if (bytes > b->cap) {
    cudaFree(b->dbuf);
    cudaFreeHost(b->hbuf);
    b->dbuf = b->hbuf = NULL;
    b->cap = 0;
    size_t cap = bytes + bytes / 2;
    TRY(dev_malloc(&b->dbuf, cap), "cudaMalloc");
    TRY(cudaMallocHost(&b->hbuf, cap), "cudaMallocHost");
    b->cap = cap;
  }
  /* Doubles, then rowids, then words. */
  char *h = (char *)b->hbuf, *d = (char *)b->dbuf;
  double *hw = (double *)h;
  long long *hr = (long long *)(h + na * 8 * (size_t)n_obj);
  uint32_t *hu = (uint32_t *)(h + na * 8 * (size_t)n_obj + na * 8);
  for (size_t i = 0; i < na; i++) {
    for (int k = 0; k < n_obj; k++) hw[(size_t)k * na + i] = ch->added[i].w[k];
    hr[i] = ch->added[i].rowid;
  }
  for (size_t i = 0; i < nr; i++) {
    hu[i] = ch->removed[i].src;
    hu[nr + i] = ch->removed[i].dst;
    hu[2 * nr + i] = ch->removed[i].slot;
  }
  for (size_t i = 0; i < na; i++) {
    hu[3 * nr + i] = ch->added[i].src;
    hu[3 * nr + na + i] = ch->added[i].dst;
    hu[3 * nr + 2 * na + i] = ch->added[i].slot;
  }
  TRY(cudaMemcpyAsync(b->dbuf, b->hbuf, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  b->add_rowid = (const long long *)(d + na * 8 * (size_t)n_obj);
  uint32_t *du = (uint32_t *)(d + na * 8 * (size_t)n_obj + na * 8);
  for (int k = 0; k < n_obj; k++) b->add_w[k] = (const double *)(d + (size_t)k * na * 8);
  b->rem_src = du, b->rem_dst = du + nr, b->rem_slot = du + 2 * nr;
  b->add_src = du + 3 * nr, b->add_dst = du + 3 * nr + na, b->add_slot = du + 3 * nr + 2 * na;
  b->n_rem = (uint32_t)nr;
  b->n_add = (uint32_t)na;
  b->directed = directed;
  return DYNG_OK;
}

/* The whole graph again, and then the batch: kept trees are repaired with
** it whether the copy followed the batch or was loaded anew. */
static int dev_graph_reload(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, cudaStream_t s,
                            char *err, size_t n_err) {
  int rc = dev_graph_upload(g, v, s, err, n_err);
  if (rc || !ch) return rc;
  rc = dev_batch_upload(&g->batch, ch, v->directed, g->n_obj, s, err, n_err);
  if (rc) return rc;
  TRY(cudaStreamSynchronize(s), "loading the graph");
  return DYNG_OK;
}

/* Starts a new generation of marks, with room for n vertices (grown to
** g->cap_n): a vertex is marked in this pass when g->mark[v] == g->mark_gen. */
static int marks_next(DevGraph *g, uint32_t n) {
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
  return DYNG_OK;
}

/* Asks for the mark, degree and offset of both ends of change e. */
static inline void prefetch_ends(const DevGraph *g, const dyng_graph_view *v, const dyng_edge_change *e) {
  if (e->src < g->mark_cap) __builtin_prefetch(&g->mark[e->src], 1);
  if (e->dst < g->mark_cap) __builtin_prefetch(&g->mark[e->dst], 1);
  if (e->src < v->n_vertices) __builtin_prefetch(&v->out.deg[e->src]), __builtin_prefetch(&v->out.off[e->src]);
  if (e->dst < v->n_vertices) __builtin_prefetch(&v->out.deg[e->dst]), __builtin_prefetch(&v->out.off[e->dst]);
}

/* The touched vertices: both ends of every removed and added edge (an
** undirected edge has an out entry at each; a directed one only at its
** source, but marking both is harmless): their number and their entries'. */
static void touched_count(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, uint32_t *pnv,
                          size_t *pne) {
  uint32_t n = v->n_vertices, nv = 0;
  size_t ne = 0;
  for (int side = 0; side < 2; side++) {
    const dyng_edge_change *r = side ? ch->added : ch->removed;
    size_t cnt = side ? ch->n_added : ch->n_removed;
    for (size_t i = 0; i < cnt; i++) {
      if (i + AHEAD < cnt) prefetch_ends(g, v, &r[i + AHEAD]);
      for (int end = 0; end < 2; end++) {
        uint32_t x = end ? r[i].dst : r[i].src;
        if (x >= n || g->mark[x] == g->mark_gen) continue;
        g->mark[x] = g->mark_gen;
        nv++;
        ne += v->out.deg[x];
      }
    }
  }
  *pnv = nv;
  *pne = ne;
}

/* Room for `bytes` in the pinned staging area and its device twin. */
static int stage_reserve(DevGraph *g, size_t bytes, char *err, size_t n_err) {
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
    TRY(dev_malloc(&g->dstage, cap), "cudaMalloc");
    g->dstage_cap = cap;
    g->bytes += cap;
  }
  return DYNG_OK;
}

/* The staging area of a follow of nv vertices and ne entries: doubles
** first (aligned), then the words. */
struct Stage {
  double *w[DYNG_MAX_WEIGHTS];
  uint32_t *vid, *voff, *vdeg, *pos, *nbr, *slot, *own;
};

static Stage stage_layout(char *base, int n_obj, uint32_t nv, size_t ne) {
  Stage st;
  memset(&st, 0, sizeof st);
  for (int k = 0; k < n_obj; k++) st.w[k] = (double *)(base + (size_t)k * ne * 8);
  st.vid = (uint32_t *)(base + (size_t)n_obj * ne * 8);
  st.voff = st.vid + nv, st.vdeg = st.voff + nv, st.pos = st.vdeg + nv;
  st.nbr = st.pos + ne, st.slot = st.nbr + ne, st.own = st.slot + ne;
  return st;
}

/* An added edge's weights join the sums and least weights behind has_zero:
** a large weight can make the small ones vanish, too. */
static void weights_seen(DevGraph *g, const dyng_edge_change *e) {
  for (int k = 0; k < g->n_obj; k++)
    if (!g->has_zero[k]) {
      g->sum_w[k] += e->w[k];
      if (e->w[k] < g->min_w[k]) g->min_w[k] = e->w[k];
      g->has_zero[k] = weight_may_vanish(g->min_w[k], g->sum_w[k]);
    }
}

/* Fills the staging area when the host's written positions are unknown:
** each touched vertex once (deduplicated by a new generation of marks) with
** its whole segment's entries.  Returns how many vertices it staged. */
static uint32_t stage_vertices(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, const Stage &st) {
  uint32_t n = v->n_vertices, iv = 0;
  size_t ie = 0;
  for (int side = 0; side < 2; side++) {
    const dyng_edge_change *r = side ? ch->added : ch->removed;
    size_t cnt = side ? ch->n_added : ch->n_removed;
    for (size_t i = 0; i < cnt; i++) {
      if (i + AHEAD < cnt) prefetch_ends(g, v, &r[i + AHEAD]);
      if (side) weights_seen(g, &r[i]);
      for (int end = 0; end < 2; end++) {
        uint32_t x = end ? r[i].dst : r[i].src;
        if (x >= n || g->mark[x] == g->mark_gen) continue;
        g->mark[x] = g->mark_gen;
        uint32_t o = v->out.off[x], d = v->out.deg[x];
        st.vid[iv] = x, st.voff[iv] = o, st.vdeg[iv] = d, iv++;
        for (uint32_t q = o; q < o + d; q++, ie++) {
          st.pos[ie] = q;
          st.own[ie] = x;
          st.nbr[ie] = v->out.nbr[q];
          st.slot[ie] = v->out.ref[q] >> 1;
          for (int k = 0; k < g->n_obj; k++) st.w[k][ie] = v->out.w[k][q];
        }
      }
    }
  }
  return iv;
}

/* What the staging loops of an exact follow share; their ranges run on the
** host's threads (dev_parallel_for). */
struct StageJob {
  const dyng_graph_view *v;
  const dyng_changes *ch;
  Stage st;
  int n_obj;
};

/* Items of a staging loop handed to a thread at a time. */
#define STAGE_CHUNK 4096

/* Stages both ends of changes [begin, end) (the removed edges, then the
** added ones) at 2 i and 2 i + 1: an end touched by several changes is
** staged each time, with the same offset and degree (finding the repeats
** would cost a pass over marks, on one thread); an end outside the graph
** is staged as none. */
static void stage_ends(void *ctx, size_t begin, size_t end) {
  const StageJob *j = (const StageJob *)ctx;
  const dyng_graph_view *v = j->v;
  const dyng_changes *ch = j->ch;
  const uint32_t n = v->n_vertices;
  const size_t n_rem = ch->n_removed;
  for (size_t i = begin; i < end; i++) {
    if (i + AHEAD < end) {
      size_t a = i + AHEAD;
      const dyng_edge_change *f = a < n_rem ? &ch->removed[a] : &ch->added[a - n_rem];
      if (f->src < n) __builtin_prefetch(&v->out.off[f->src]), __builtin_prefetch(&v->out.deg[f->src]);
      if (f->dst < n) __builtin_prefetch(&v->out.off[f->dst]), __builtin_prefetch(&v->out.deg[f->dst]);
    }
    const dyng_edge_change *e = i < n_rem ? &ch->removed[i] : &ch->added[i - n_rem];
    for (int k = 0; k < 2; k++) {
      uint32_t x = k ? e->dst : e->src;
      size_t at = 2 * i + (size_t)k;
      j->st.vid[at] = x < n ? x : DYNG_NONE;
      j->st.voff[at] = x < n ? v->out.off[x] : 0;
      j->st.vdeg[at] = x < n ? v->out.deg[x] : 0;
    }
  }
}

/* Stages the entries at the positions [begin, end) of those the host wrote.
** A written position's owner is the end of its edge that keeps it (side 0:
** the source); a position written and then left behind still names a
** vertex, whose live range does not hold it. */
static void stage_written(void *ctx, size_t begin, size_t end) {
  const StageJob *j = (const StageJob *)ctx;
  const dyng_graph_view *v = j->v;
  const Stage &st = j->st;
  const uint32_t *out_pos = j->ch->out_pos;
  const uint32_t n = v->n_vertices;
  for (size_t i = begin; i < end; i++) {
    /* Two steps ahead: the entry's arrays, then (its ref arrived) the
    ** array that names its owner. */
    if (i + 2 * AHEAD < end) {
      uint32_t qa = out_pos[i + 2 * AHEAD];
      __builtin_prefetch(&v->out.ref[qa]);
      __builtin_prefetch(&v->out.nbr[qa]);
      for (int k = 0; k < j->n_obj; k++) __builtin_prefetch(&v->out.w[k][qa]);
    }
    if (i + AHEAD < end) {
      uint32_t rb = v->out.ref[out_pos[i + AHEAD]], sb = rb >> 1;
      if (sb < v->n_edge_slots) __builtin_prefetch((rb & 1u) ? &v->edge_dst[sb] : &v->edge_src[sb]);
    }
    uint32_t q = out_pos[i], r = v->out.ref[q], slot = r >> 1;
    uint32_t own = slot < v->n_edge_slots ? ((r & 1u) ? v->edge_dst[slot] : v->edge_src[slot]) : DYNG_NONE;
    st.pos[i] = q;
    st.own[i] = own < n ? own : 0;
    st.nbr[i] = v->out.nbr[q];
    st.slot[i] = slot;
    for (int k = 0; k < j->n_obj; k++) st.w[k][i] = v->out.w[k][q];
  }
}

/* Copies the staging area (laid out for nv_room vertices) over and
** scatters its nv vertices and ne entries into the copy. */
static int stage_scatter(DevGraph *g, uint32_t n, uint32_t nv_room, uint32_t nv, size_t ne, size_t bytes,
                         cudaStream_t s, char *err, size_t n_err) {
  TRY(cudaMemcpyAsync(g->dstage, g->stage, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy");
  Stage d = stage_layout((char *)g->dstage, g->n_obj, nv_room, ne);
  if (nv) {
    k_scatter_vertices<<<blocks_for(nv), THREADS, 0, s>>>(d.vid, d.voff, d.vdeg, nv, n, g->off, g->deg);
    LAUNCHED("k_scatter_vertices");
  }
  if (ne) {
    ScatterArgs a;
    memset(&a, 0, sizeof a);
    a.pos = d.pos;
    a.nbr = d.nbr;
    a.slot = d.slot;
    a.own = d.own;
    a.d_owner = g->owner;
    for (int k = 0; k < g->n_obj; k++) a.w[k] = d.w[k], a.d_w[k] = g->w[k];
    a.ne = (uint32_t)ne;
    a.n_obj = g->n_obj;
    a.d_nbr = g->nbr;
    a.d_slot = g->slot;
    k_scatter_entries<<<blocks_for(ne), THREADS, 0, s>>>(a);
    LAUNCHED("k_scatter_entries");
  }
  return DYNG_OK;
}

int dev_graph_follow(DevGraph *g, const dyng_graph_view *v, const dyng_changes *ch, cudaStream_t s, char *err,
                     size_t n_err) {
  if (!ch || !g->off || v->out.layout != g->layout || v->n_vertices > g->cap_n || v->out.n_entries > g->cap_p ||
      v->n_edge_slots > g->cap_s || v->n_objectives != g->n_obj)
    return dev_graph_reload(g, v, ch, s, err, n_err);
  uint32_t nv_room;
  size_t ne;
  double t[6] = {dev_now_ms()};
  int rc;
  /* With the positions the host wrote, only those entries travel, with
  ** every end of every change (12 bytes each), both staged on the host's
  ** threads; else the touched vertices' whole segments (a hub's, on a
  ** power-law graph), counted first. */
  const int exact = ch->out_pos_complete;
  const size_t n_changes = ch->n_removed + ch->n_added;
  if (exact) {
    if (n_changes > 0x7fffffffULL) return dev_graph_reload(g, v, ch, s, err, n_err);
    nv_room = (uint32_t)(2 * n_changes);
    ne = ch->n_out_pos;
  } else {
    if ((rc = marks_next(g, v->n_vertices))) return rc;
    touched_count(g, v, ch, &nv_room, &ne);
  }
  t[1] = dev_now_ms();
  if (ne > 0xffffffffULL) return dev_graph_reload(g, v, ch, s, err, n_err);
  size_t bytes = (size_t)nv_room * 12 + ne * (16 + 8 * (size_t)g->n_obj) + 64;
  if ((rc = stage_reserve(g, bytes, err, n_err))) return rc;
  Stage st = stage_layout((char *)g->stage, g->n_obj, nv_room, ne);
  uint32_t nv = nv_room;
  if (exact) {
    for (size_t i = 0; i < ch->n_added; i++) weights_seen(g, &ch->added[i]);
    StageJob job = {v, ch, st, g->n_obj};
    dev_parallel_for(n_changes, STAGE_CHUNK, stage_ends, &job);
    t[2] = dev_now_ms();
    dev_parallel_for(ne, STAGE_CHUNK, stage_written, &job);
  } else {
    if ((rc = marks_next(g, v->n_vertices))) return rc;
    nv = stage_vertices(g, v, ch, st);
    t[2] = dev_now_ms();
  }
  t[3] = dev_now_ms();
  if ((rc = stage_scatter(g, v->n_vertices, nv_room, nv, ne, bytes, s, err, n_err))) return rc;
  t[4] = dev_now_ms();
  rc = dev_batch_upload(&g->batch, ch, v->directed, g->n_obj, s, err, n_err);
  if (rc) return rc;
  if (g->batch.n_add) {
    k_scatter_rowids<<<blocks_for(g->batch.n_add), THREADS, 0, s>>>(g->batch.add_slot, g->batch.add_rowid,
                                                                     g->batch.n_add, g->rowid);
    LAUNCHED("k_scatter_rowids");
  }
  /* The staging area is reused by the next batch: wait for the copy. */
  TRY(cudaStreamSynchronize(s), "following the batch");
  t[5] = dev_now_ms();
  if (dev_profile_on())
    fprintf(stderr,
            "dyng-cuda: follow vertices=%u entries=%zu exact=%d ms: count=%.3f vertices=%.3f entries=%.3f "
            "copy=%.3f batch+wait=%.3f\n",
            nv, ne, exact, t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
  g->n = v->n_vertices;
  g->n_pos = v->out.n_entries;
  return DYNG_OK;
}
