/*
** cuda/dev_cycles_snap.cu: the snapshot the device's cycle counts search
** (see cuda/dev_cycles.cu for what it is), built from the device copy of the
** graph, and the memory of a state's cycle counts: its stream-ordered pool,
** the snapshot's arrays and labels, the state's DevCycles from first use to
** its release.
*/
#include "cuda/dev_cycles.cuh"

#include <cub/cub.cuh>

#include <algorithm>
#include <new>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- building the snapshot ----------------------------------------------- */

/* The number of entries at each vertex (both ends of each arc of a
** directed graph; an undirected graph's deg[] already counts them), parallel
** ones and all: what its label is chosen by. */
__global__ void k_arc_degrees(const uint32_t *off, const uint32_t *deg, const uint32_t *nbr, const uint32_t *owner,
                              uint32_t n, size_t n_pos, uint32_t *cnt) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t o = owner[p], y = nbr[p];
    if (o < n && p >= off[o] && p < (size_t)off[o] + deg[o] && y < n && y != o) {
      atomicAdd(&cnt[o], 1u);
      atomicAdd(&cnt[y], 1u);
    }
  }
}

/* Sort keys (2b bits) for the labels: non-increasing number of entries
** (at most n counted), then index. */
__global__ void k_degree_keys(const uint32_t *deg, uint32_t n, int b, unsigned long long *dk) {
  for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n; v += (size_t)gridDim.x * blockDim.x)
    dk[v] = (unsigned long long)(n - min(deg[v], n)) << b | v;
}

/* label[v] = v's place i in the sorted keys dk, and vert[i] = v. */
__global__ void k_labels(const unsigned long long *dk, uint32_t n, int b, uint32_t *label, uint32_t *vert) {
  const unsigned long long mask = (1ULL << b) - 1;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t v = (uint32_t)(dk[i] & mask);
    label[v] = (uint32_t)i;
    vert[i] = v;
  }
}

/* The same labels for a small graph (n <= SMALL_LABELS, so that a key's
** 2b bits fit 32) in one block: the keys sorted in shared memory. */
#define LABEL_THREADS 1024
#define LABEL_ITEMS 8
#define SMALL_LABELS (LABEL_THREADS * LABEL_ITEMS)
__global__ void __launch_bounds__(LABEL_THREADS) k_labels_small(const uint32_t *deg, uint32_t n, int b,
                                                                uint32_t *label, uint32_t *vert) {
  typedef cub::BlockRadixSort<uint32_t, LABEL_THREADS, LABEL_ITEMS> Sort;
  __shared__ typename Sort::TempStorage tmp;
  const uint32_t mask = (1u << b) - 1;
  uint32_t key[LABEL_ITEMS];
#pragma unroll
  for (int i = 0; i < LABEL_ITEMS; i++) {
    const uint32_t v = threadIdx.x * LABEL_ITEMS + i;
    /* Past n: all 2b bits set, above every real key (whose low b bits,
    ** v < n <= 2^b - 1, are not all set). */
    key[i] = v < n ? (n - min(deg[v], n)) << b | v : (1u << 2 * b) - 1;
  }
  Sort(tmp).Sort(key, 0, 2 * b);
#pragma unroll
  for (int i = 0; i < LABEL_ITEMS; i++) {
    const uint32_t at = threadIdx.x * LABEL_ITEMS + i;
    if (at < n) {
      label[key[i] & mask] = at;
      vert[at] = key[i] & mask;
    }
  }
}

/* Every entry of the out-adjacency as (label of owner << b | label of other
** end) with its arcs; positions between segments, self-loops and ends out
** of range give NO_KEY.  A directed graph's arc goes in at both ends (slots
** 2p, 2p + 1); an undirected graph already has an entry at each end. */
__global__ void k_emit(const uint32_t *off, const uint32_t *deg, const uint32_t *nbr, const uint32_t *owner,
                       const uint32_t *label, uint32_t n, size_t n_pos, int directed, int b, unsigned long long *key,
                       uint8_t *arc) {
  for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n_pos; p += (size_t)gridDim.x * blockDim.x) {
    uint32_t o = owner[p], y = nbr[p];
    int ok = o < n && p >= off[o] && p < (size_t)off[o] + deg[o] && y < n && y != o;
    unsigned long long lo = ok ? label[o] : 0, ly = ok ? label[y] : 0;
    if (directed) {
      key[2 * p] = ok ? lo << b | ly : NO_KEY;
      arc[2 * p] = ARC_OUT;
      key[2 * p + 1] = ok ? ly << b | lo : NO_KEY;
      arc[2 * p + 1] = ARC_IN;
    } else {
      key[p] = ok ? lo << b | ly : NO_KEY;
      arc[p] = ARC_OUT | ARC_IN;
    }
  }
}

/* The merged entries: runs[0] runs of sorted keys, the last NO_KEY ones
** not counted; their number goes to runs[1] and their other ends to nbr. */
__global__ void k_merged(const unsigned long long *key, int *runs, int b, uint32_t *nbr) {
  const unsigned long long mask = (1ULL << b) - 1;
  const int r = runs[0];
  const int real = r - (r > 0 && key[r - 1] == NO_KEY);
  if (blockIdx.x == 0 && threadIdx.x == 0) runs[1] = real;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)real; i += (size_t)gridDim.x * blockDim.x)
    nbr[i] = (uint32_t)(key[i] & mask);
}

/* off[v] = first of the sorted keys[0 .. *m) (x << shift | y) owned by v
** or later, v <= n. */
__global__ void k_starts(const unsigned long long *key, const int *m, uint32_t n, int shift, uint32_t *off) {
  const uint32_t mm = (uint32_t)*m;
  for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v <= n; v += (size_t)gridDim.x * blockDim.x)
    off[v] = d_lower(key, mm, (unsigned long long)v << shift);
}

/* Bitwise or of two entries' arcs (merging parallel entries). */
struct ArcOr {
  __device__ __forceinline__ uint8_t operator()(uint8_t a, uint8_t b) const { return (uint8_t)(a | b); }
};

/* The first label whose list is shorter than d (labels go by
** non-increasing degree), in *out. */
__global__ void k_first_shorter(const uint32_t *off, uint32_t n, uint32_t d, uint32_t *out) {
  if (blockIdx.x || threadIdx.x) return;
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (off[mid + 1] - off[mid] >= d) lo = mid + 1;
    else hi = mid;
  }
  *out = lo;
}

cudaError_t first_shorter(const uint32_t *off, uint32_t n, uint32_t d, uint32_t *out, cudaStream_t s) {
  k_first_shorter<<<1, 32, 0, s>>>(off, n, d, out);
  return cudaGetLastError();
}

/* ---- memory ------------------------------------------------------------------ */

/* Device memory of the cycle counts, in the order of the state's stream:
** from the plugin's own stream-ordered pool where the device has pools, so
** that a new graph's snapshot reuses what an earlier one freed (up to
** POOL_KEEP bytes stay in the pool) instead of paying for cudaMalloc, and
** cudaFree's wait for the whole device; else cudaMalloc and cudaFree.  The
** pool lives as long as the process. */
#define POOL_KEEP ((uint64_t)64 << 20)

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static cudaMemPool_t pool;
static int pool_made;

static void pool_make(void) {
  int dev = 0, pools = 0;
  cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev) == cudaSuccess && pools) {
    props.location.id = dev;
    if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
      uint64_t keep = POOL_KEEP;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
      pool_made = 1;
    }
  }
  cudaGetLastError(); /* a failed query leaves no error behind */
}

cudaError_t cyc_alloc(DevCycles *c, void **p, size_t bytes) {
  return c->pooled ? dev_malloc_async(p, bytes, pool, c->stream) : dev_malloc(p, bytes);
}

void cyc_free(DevCycles *c, void *p) {
  if (!p) return;
  if (c->pooled) cudaFreeAsync(p, c->stream);
  else cudaFree(p);
}

/* Replaces *p by a buffer of at least `bytes` (contents lost), counted in
** c->bytes. */
cudaError_t cyc_reserve(DevCycles *c, void **p, size_t *cap, size_t bytes) {
  if (*p && *cap >= bytes) return cudaSuccess;
  if (*p) {
    cyc_free(c, *p);
    c->bytes -= *cap;
    *p = NULL;
    *cap = 0;
  }
  cudaError_t e = cyc_alloc(c, p, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    *p = NULL;
    return e;
  }
  *cap = bytes ? bytes : 1;
  c->bytes += *cap;
  return cudaSuccess;
}

static void arrays_free(DevCycles *c, SnapArrays *a) {
  cyc_free(c, a->nbr);
  cyc_free(c, a->arc);
  cyc_free(c, a->off);
  memset(a, 0, sizeof *a);
}

static size_t arrays_bytes(const SnapArrays *a) { return a->cap_ent * 5 + a->cap_off * 4; }

/* Makes *a hold at least n_ent entries and n + 1 list starts (contents
** lost when it grows), with some room to spare for later batches. */
cudaError_t arrays_reserve(DevCycles *c, SnapArrays *a, size_t n_ent, size_t n) {
  if (a->nbr && a->cap_ent >= n_ent && a->cap_off >= n + 1) return cudaSuccess;
  arrays_free(c, a);
  const size_t ce = n_ent + n_ent / 16 + 1024, co = n + 1 + n / 16 + 1024;
  cudaError_t e;
  if ((e = cyc_alloc(c, (void **)&a->nbr, ce * 4)) != cudaSuccess ||
      (e = cyc_alloc(c, (void **)&a->arc, ce)) != cudaSuccess ||
      (e = cyc_alloc(c, (void **)&a->off, co * 4)) != cudaSuccess) {
    arrays_free(c, a);
    return e;
  }
  a->cap_ent = ce;
  a->cap_off = co;
  return cudaSuccess;
}

static void snap_free(DevCycles *c) {
  arrays_free(c, &c->cur);
  arrays_free(c, &c->spare);
  cyc_free(c, c->label);
  cyc_free(c, c->touched);
  c->bytes -= c->cap_touched; /* counted by cyc_reserve */
  c->label = c->vert = NULL;
  c->touched = NULL;
  c->cap_label = c->cap_touched = 0;
  c->valid = 0;
}

/* The temporary arrays of one snapshot build, carved from c->tbuf, which
** is kept for the next build when it is small (SNAP_TEMP_KEEP). */
struct SnapTemp {
  unsigned long long *ka, *kb, *da, *db;
  uint8_t *fa, *fb;
  uint32_t *deg;
  int *runs;
  void *cub;
  size_t cub_bytes, total;
};
#define SNAP_TEMP_KEEP ((size_t)64 << 20)

static SnapTemp snap_temp_layout(char *base, size_t m, size_t n, size_t cub_bytes) {
  SnapTemp t;
  Carver cv = {base, 0};
  t.ka = (unsigned long long *)cv.take(m * 8), t.kb = (unsigned long long *)cv.take(m * 8);
  t.fa = (uint8_t *)cv.take(m), t.fb = (uint8_t *)cv.take(m);
  t.da = (unsigned long long *)cv.take(n * 8), t.db = (unsigned long long *)cv.take(n * 8);
  t.deg = (uint32_t *)cv.take(n * 4);
  t.runs = (int *)cv.take(4 * sizeof(int));
  t.cub = cv.take(cub_bytes);
  t.cub_bytes = cub_bytes;
  t.total = cv.at;
  return t;
}

static void snap_temp_release(DevCycles *c) {
  if (c->tbuf && c->cap_tbuf > SNAP_TEMP_KEEP) {
    cyc_free(c, c->tbuf);
    c->bytes -= c->cap_tbuf;
    c->tbuf = NULL;
    c->cap_tbuf = 0;
  }
}

/* Makes c->label room for n vertices' labels and their inverse (c->vert),
** keeping the first n_keep of each. */
int labels_reserve(DevState *st, DevCycles *c, size_t n_keep, size_t n) {
  if (c->cap_label >= n) return DYNG_OK;
  const size_t cap = n + n / 16 + 1024;
  if (!n_keep) {
    cyc_free(c, c->label);
    c->label = c->vert = NULL;
    c->cap_label = 0;
  }
  uint32_t *l = NULL;
  TRY(cyc_alloc(c, (void **)&l, cap * 8), "cycle snapshot");
  if (n_keep) {
    cudaError_t e = cudaMemcpyAsync(l, c->label, n_keep * 4, cudaMemcpyDeviceToDevice, st->stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(l + cap, c->vert, n_keep * 4, cudaMemcpyDeviceToDevice, st->stream);
    /* (cudaFree, unlike cudaFreeAsync, must not run ahead of the copies.) */
    if (e == cudaSuccess && !c->pooled) e = cudaStreamSynchronize(st->stream);
    if (e != cudaSuccess) {
      cyc_free(c, l);
      return dev_fail(e, "cycle snapshot", st->err, sizeof st->err);
    }
    cyc_free(c, c->label);
  }
  c->label = l;
  c->vert = l + cap;
  c->cap_label = cap;
  return DYNG_OK;
}

/* Builds the snapshot of the device's copy of the graph (see the top of
** the file) unless the kept one is current. */
int snap_build(DevState *st, DevCycles *c, const dyng_graph_view *view) {
  if (c->valid && !c->behind) return DYNG_OK;
  c->valid = c->behind = c->pairs_ready = c->hubs_known = 0;
  c->chg_mode = c->tasks_mode = -1;
  arrays_free(c, &c->spare);
  const DevGraph *g = &st->csr;
  const uint32_t n = g->n;
  const int directed = view->directed != 0;
  const size_t m = (directed ? 2 : 1) * g->n_pos;
  if (m > 0x7fffffffu || n == 0xffffffffu) {
    snprintf(st->err, sizeof st->err, "counting cycles: %zu entries are too many for the device snapshot", m);
    return DYNG_ENOMEM;
  }
  const size_t mm = m ? m : 1, nn = n ? n : 1;
  const int b = key_bits(n), bits = 2 * b;
  size_t b1 = 0, b2 = 0, b3 = 0;
  {
    SnapTemp q = snap_temp_layout(NULL, mm, nn, 0);
    TRY(cub::DeviceRadixSort::SortPairs(NULL, b1, q.ka, q.kb, q.fa, q.fb, (int)mm, 0, bits, st->stream), "cub");
    TRY(cub::DeviceReduce::ReduceByKey(NULL, b2, q.kb, q.ka, q.fb, q.fa, q.runs, ArcOr(), (int)mm, st->stream),
        "cub");
    TRY(cub::DeviceRadixSort::SortKeys(NULL, b3, q.da, q.db, (int)nn, 0, bits, st->stream), "cub");
  }
  const size_t need = std::max(b1, std::max(b2, b3));
  size_t cap = c->cap_tbuf;
  TRY(cyc_reserve(c, &c->tbuf, &cap, snap_temp_layout(NULL, mm, nn, need).total), "cycle snapshot");
  c->cap_tbuf = cap;
  SnapTemp t = snap_temp_layout((char *)c->tbuf, mm, nn, need);

  /* Labels by non-increasing number of entries, ties by index (parallel
  ** arcs count too: the labels only balance the work). */
  c->n = n;
  int rc = labels_reserve(st, c, 0, nn);
  if (rc) return rc;
  const double t0 = dev_now_ms();
  if (n) {
    const uint32_t *deg = g->deg;
    if (directed) {
      TRY(cudaMemsetAsync(t.deg, 0, (size_t)n * 4, st->stream), "cycle snapshot");
      if (g->n_pos) {
        k_arc_degrees<<<grid_for(g->n_pos, 256), 256, 0, st->stream>>>(g->off, g->deg, g->nbr, g->owner, n, g->n_pos,
                                                                        t.deg);
        TRY(cudaGetLastError(), "cycle snapshot: degrees");
      }
      deg = t.deg;
    }
    if (n <= SMALL_LABELS) {
      k_labels_small<<<1, LABEL_THREADS, 0, st->stream>>>(deg, n, b, c->label, c->vert);
    } else {
      k_degree_keys<<<grid_for(n, 256), 256, 0, st->stream>>>(deg, n, b, t.da);
      TRY(cudaGetLastError(), "cycle snapshot: degrees");
      size_t bytes = need;
      TRY(cub::DeviceRadixSort::SortKeys(t.cub, bytes, t.da, t.db, (int)n, 0, bits, st->stream), "sort");
      k_labels<<<grid_for(n, 256), 256, 0, st->stream>>>(t.db, n, b, c->label, c->vert);
    }
    TRY(cudaGetLastError(), "cycle snapshot: labels");
  }
  const double t1 = profile_step(st);

  /* Every arc at both ends (keys in labels, x << b | y), sorted and merged
  ** into simple entries; their number is read back with the list starts. */
  TRY(arrays_reserve(c, &c->cur, m, n), "cycle snapshot");
  TRY(cudaMemsetAsync(t.runs, 0, 4 * sizeof(int), st->stream), "cycle snapshot");
  if (m) {
    k_emit<<<grid_for(g->n_pos, 256), 256, 0, st->stream>>>(g->off, g->deg, g->nbr, g->owner, c->label, n, g->n_pos,
                                                              directed, b, t.ka, t.fa);
    TRY(cudaGetLastError(), "cycle snapshot: emit");
    size_t bytes = need;
    TRY(cub::DeviceRadixSort::SortPairs(t.cub, bytes, t.ka, t.kb, t.fa, t.fb, (int)m, 0, bits, st->stream), "sort");
    bytes = need;
    TRY(cub::DeviceReduce::ReduceByKey(t.cub, bytes, t.kb, t.ka, t.fb, c->cur.arc, t.runs, ArcOr(), (int)m,
                                       st->stream),
        "merge");
    k_merged<<<grid_for(m, 256), 256, 0, st->stream>>>(t.ka, t.runs, b, c->cur.nbr);
    TRY(cudaGetLastError(), "cycle snapshot: merge");
  }
  const double t2 = profile_step(st);
  k_starts<<<grid_for((size_t)n + 1, 256), 256, 0, st->stream>>>(t.ka, t.runs + 1, n, b, c->cur.off);
  TRY(cudaGetLastError(), "cycle snapshot: starts");
  /* The hubs of a 4-cycle count come back with the number of entries. */
  if (n) {
    k_first_shorter<<<1, 32, 0, st->stream>>>(c->cur.off, n, HUB_LIST, (uint32_t *)(t.runs + 2));
    TRY(cudaGetLastError(), "cycle snapshot: hubs");
  }
  int runs[2] = {0, 0};
  TRY(cudaMemcpyAsync(runs, t.runs + 1, sizeof runs, cudaMemcpyDeviceToHost, st->stream), "cycle snapshot");
  TRY(cudaStreamSynchronize(st->stream), "cycle snapshot");
  c->n_ent = (uint32_t)runs[0];
  c->hubs = (uint32_t)runs[1];
  c->hubs_known = 1;
  if (dev_profile_on())
    fprintf(stderr,
            "dyng cuda: cycle snapshot of %zu positions: labels %.3f ms, sort and merge %.3f ms, starts %.3f ms\n", m,
            t1 - t0, t2 - t1, dev_now_ms() - t2);
  if (c->cap_tbuf > SNAP_TEMP_KEEP) {
    /* (cudaFree, unlike cudaFreeAsync, must not run ahead of the work.) */
    if (!c->pooled) TRY(cudaStreamSynchronize(st->stream), "cycle snapshot");
    snap_temp_release(c);
  }
  c->valid = 1;
  return DYNG_OK;
}

/* The state's DevCycles, made on first use, with its counters. */
int cycles_of(DevState *st, DevCycles **out) {
  if (!st->cycles) {
    DevCycles *c = (DevCycles *)calloc(1, sizeof *c);
    if (!c) return DYNG_ENOMEM;
    c->stream = st->stream;
    c->chg_mode = c->tasks_mode = -1;
    pthread_once(&pool_once, pool_make);
    c->pooled = pool_made;
    cudaError_t e = cyc_alloc(c, (void **)&c->ctr, C_WORDS * sizeof(unsigned long long));
    if (e != cudaSuccess) {
      dev_cycles_free(c);
      return dev_fail(e, "cycle counters", st->err, sizeof st->err);
    }
    c->bytes = C_WORDS * sizeof(unsigned long long);
    st->cycles = c;
  }
  *out = st->cycles;
  return DYNG_OK;
}

/* ---- the state ------------------------------------------------------------ */

void dev_cycles_stale(DevCycles *c) {
  if (!c) return;
  c->valid = c->behind = c->pairs_ready = 0;
  c->chg_mode = c->tasks_mode = -1;
}

void dev_cycles_followed(DevCycles *c, const dyng_changes *changes) {
  if (!c) return;
  if (!changes || !c->valid || c->behind) {
    dev_cycles_stale(c);
    return;
  }
  c->behind = 1;
  c->pairs_ready = 0;
  c->chg_mode = c->tasks_mode = -1;
  c->batch_seen = changes;
  c->batch_removed = changes->n_removed;
  c->batch_added = changes->n_added;
}

size_t dev_cycles_bytes(const DevCycles *c) {
  return c ? c->bytes + arrays_bytes(&c->cur) + arrays_bytes(&c->spare) + c->cap_label * 8 : 0;
}

void dev_cycles_free(DevCycles *c) {
  if (!c) return;
  snap_free(c);
  cyc_free(c, c->ctr);
  cyc_free(c, c->walkers);
  cyc_free(c, c->scratch);
  cyc_free(c, c->batch);
  cyc_free(c, c->pbuf);
  cyc_free(c, c->tbuf);
  cyc_free(c, c->pieces);
  if (c->pooled) {
    /* What the pool holds past POOL_KEEP goes back now, not at some later
    ** synchronization, so that allocations elsewhere find it. */
    cudaStreamSynchronize(c->stream);
    cudaMemPoolTrimTo(pool, POOL_KEEP);
    cudaGetLastError();
  }
  free(c);
}
