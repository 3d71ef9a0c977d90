/*
** cuda/dev_cycles.cu: counting simple k-cycles (3 <= k <= 10) on the
** device, from scratch and per batch: engine/backend.h's cycles_count and
** cycles_delta, serving dyng_cycle_count(graph, k[, 'directed']).  The
** counts are exactly those of engine/cycles.c (see engine/cycles.h for what
** is counted and for the rule that gives each lost or gained cycle to one
** changed edge).
**
** How it works.  The snapshot, built on the device from the out-adjacency
** copy and kept until the next batch: the underlying simple undirected
** graph as a CSR with sorted neighbour lists, each entry carrying which of
** the arcs x -> y (ARC_OUT) and y -> x (ARC_IN) exist, vertices relabelled
** by non-increasing degree (parallel arcs counted), ties by index (label 0
** is the biggest hub): the labels first, by one small radix sort, then
** every arc's ends in labels, radix sorted and merged by a reduce-by-key
** (cub).  Then, from scratch:
**   k = 3  one warp per entry (u, v) with v < u: the entries w < v of u's
**          list are looked up in v's list (binary search), so each triangle
**          is found once, from its two highest labels.
**   k = 4  per root u, the cycle's smallest label: wedges u - v - w with
**          v, w > u bump a counter per w (the value before each bump,
**          summed, is the number of pairs of wedges); then the counters
**          are cleared.  The hub roots (lists of HUB_LIST or more) share
**          all blocks, a group of roots at a time, each root's counters in
**          device memory; the others take a block each, their counters in
**          shared memory when they fit (QUAD_SHARED).
**   k >= 5 depth-first searches by walkers: one thread each, its explicit
**          stack kept in device memory between launches; a walker takes an
**          entry (s, y) with y > s and follows the paths s, y, ... through
**          labels > s, the last vertex closing to s (found by binary search
**          in s's list).  Undirected cycles keep one direction, the last
**          vertex after the second.
** Per batch: graph_update leaves the snapshot one batch behind, and the
** first cycles_delta patches it on the device (snap_patch): the entries
** the batch's records touch, at both ends, in labels, sorted and unique;
** for each, its arcs before (the snapshot) and now (found in the device
** copy of the graph); the entries now merged into a new snapshot in place
** of the old ones, without sorting the whole again.  The changed edges of
** the delta's mode follow from the same entries (changed_on_device), in
** key order, from a scan of their flags: sorted by their keys in labels,
** which are their ranks, with the removed ones as an overlay (sorted
** entries at both ends).  A snapshot built anew instead
** (no kept one, or more than one batch behind) has its changed edges
** found on the host from the records and the host's graph
** (changed_on_host).  Each changed edge then counts the simple paths of
** k - 1 edges that close it, in the new snapshot plus the overlay, through
** admitted edges only (unchanged, or changed like it and ranked after it):
** for triangles a warp per piece of 256 entries of its shorter end's list,
** each entry looked up in the other end's list; for 4-cycles one block per
** changed edge over the 2-paths from its shorter end; for k >= 5 walkers.
**
** Every kernel does bounded work: the entries or roots are cut into ranges
** whose size adapts to what the last launch took (about 20 ms), and walkers
** stop after a budget of steps and go on in the next launch.  Between
** launches the host asks view->cancel and returns DYNG_EINTERRUPTED.  Counts
** are 64-bit, summed with atomics that flag a wrap: DYNG_ETOOBIG.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

#include <cub/cub.cuh>

#include <algorithm>
#include <new>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

/* engine/cycles.h's range of k (that header is C only). */
#define DYNG_CYCLES_MIN_K 3
#define DYNG_CYCLES_MAX_K 10

#define ARC_OUT 1u /* snapshot entry (x, y): the arc x -> y exists */
#define ARC_IN 2u  /* snapshot entry (x, y): the arc y -> x exists */
#define NONE 0xffffffffu
#define NO_KEY 0xffffffffffffffffULL
#define MAX_K DYNG_CYCLES_MAX_K
#define TARGET_MS 20.0 /* what one launch should take */
#define HUB_LIST 256u  /* 4-cycles from scratch: lists this long are hubs' */
#define QUAD_SHARED (48u << 10) /* 4-cycles from scratch: a root's counters up to this size in shared memory */

enum { S_REMOVED = 1, S_ADDED = 2 }; /* a changed edge's status */

/* Counters on the device (ctr[]). */
enum { C_NEXT, C_ACTIVE, C_SUM0, C_SUM1, C_WRAP, C_WORDS };

/* One walker's depth-first search, kept in device memory between launches.
** Level d of the stack is vertex path[d] and the entries of its list still
** to look at, positions pos .. stop - 1: below send they are snapshot
** entries, from send on overlay entries obase + (pos - send). */
struct Walker {
  uint32_t task;  /* entry (from scratch) or changed edge (per batch); NONE: idle */
  int32_t d;      /* the path's last level */
  uint32_t end;   /* per batch: where the paths end */
  uint32_t rank;  /* per batch: the changed edge's rank */
  uint32_t phase; /* per batch: S_REMOVED (old graph) or S_ADDED (new) */
  uint32_t path[MAX_K], pos[MAX_K], send[MAX_K], stop[MAX_K], obase[MAX_K];
};

/* A snapshot's lists (labels): the sorted neighbours and their arcs, and
** the list starts; room for cap_ent entries and cap_off - 1 vertices. */
struct SnapArrays {
  uint32_t *nbr;
  uint8_t *arc;
  uint32_t *off;
  size_t cap_ent, cap_off;
};

struct DevCycles {
  int valid;                 /* cur is a snapshot of the graph, as of ... */
  int behind;                /* ... one batch ago (1), or now (0) */
  const dyng_changes *batch_seen; /* that batch's records, as graph_update had them */
  size_t batch_removed, batch_added;
  uint32_t n;                /* vertices */
  uint32_t n_ent;            /* snapshot entries (two per simple edge) */
  SnapArrays cur;            /* the snapshot */
  SnapArrays spare;          /* room a patched snapshot is written into */
  uint32_t *label;           /* n: vertex index -> label */
  uint32_t *vert;            /* n: label -> vertex index (in label's buffer) */
  size_t cap_label;
  uint8_t *touched;          /* per batch, by label: an end of a changed edge */
  size_t cap_touched;
  unsigned long long *ctr;   /* C_WORDS counters */
  Walker *walkers;
  uint32_t cap_walkers;
  uint32_t *scratch;         /* k = 4: counters per block */
  size_t cap_scratch;        /* words */
  void *batch;               /* per batch: keys, overlay and tasks */
  size_t cap_batch;
  void *pbuf;                /* per batch, patched snapshot: see PatchBufs */
  size_t cap_pbuf;
  uint32_t pbuf_m;           /* records PatchBufs was laid out for */
  size_t pbuf_cub;           /* and the cub work space it has */
  void *tbuf;                /* a snapshot build's temporaries: see SnapTemp */
  size_t cap_tbuf;
  void *pieces;              /* per batch, triangles: see k_delta3 */
  size_t cap_pieces;
  int pairs_ready;           /* the entries of the batch last patched are in pbuf */
  int hubs_known;            /* hubs is the snapshot's (as built; a patch may change it) */
  uint32_t hubs;             /* the labels before the first list shorter than HUB_LIST */
  uint32_t n_slots;          /* the slots of pairs_ready's entries (the unique ones) */
  int chg_mode;              /* while pairs_ready: the mode (directed) whose changed edges are in pbuf, or -1 */
  int tasks_mode;            /* the mode whose tasks are in pbuf and ends in touched, or -1 */
  size_t bytes;              /* device bytes held apart from the snapshot's */
  cudaStream_t stream;       /* the state's: where the buffers are allocated and freed */
  int pooled;                /* from the device's stream-ordered pool (cyc_alloc) */
};

/* ---- device helpers ------------------------------------------------------ */

/* First position in nbr[b .. e) holding a value > t (the lists are sorted). */
__device__ __forceinline__ uint32_t d_after(const uint32_t *nbr, uint32_t b, uint32_t e, uint32_t t) {
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    if (nbr[mid] <= t) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* Position of y in nbr[b .. e), or NONE. */
__device__ __forceinline__ uint32_t d_find(const uint32_t *nbr, uint32_t b, uint32_t e, uint32_t y) {
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    uint32_t v = nbr[mid];
    if (v == y) return mid;
    if (v < y) b = mid + 1;
    else e = mid;
  }
  return NONE;
}

/* T itself, in a parameter that does not take part in deducing T. */
template <typename T> struct Same { typedef T type; };

/* First position in a[0 .. n) holding a value >= t (a sorted). */
template <typename T>
__device__ __forceinline__ uint32_t d_lower(const T *a, uint32_t n, typename Same<T>::type t) {
  uint32_t b = 0, e = n;
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    if (a[mid] < t) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* The vertex whose list holds position p (off[] of n + 1 starts). */
__device__ __forceinline__ uint32_t d_owner(const uint32_t *off, uint32_t n, uint32_t p) {
  uint32_t lo = 0, hi = n - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (off[mid] <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Adds x to counter c, flagging a wrap past 2^64. */
__device__ __forceinline__ void d_add(unsigned long long *ctr, int c, unsigned long long x) {
  if (!x) return;
  unsigned long long old = atomicAdd(&ctr[c], x);
  if (old + x < old) ctr[C_WRAP] = 1;
}

/* A warp's sum of x, added to counter c by its first lane.  Every lane of
** the warp must call it. */
__device__ __forceinline__ void d_warp_add(unsigned long long *ctr, int c, unsigned long long x) {
  for (int o = 16; o; o >>= 1) {
    unsigned long long y = __shfl_down_sync(0xffffffffu, x, o);
    if (x + y < x) ctr[C_WRAP] = 1;
    x += y;
  }
  if ((threadIdx.x & 31) == 0) d_add(ctr, c, x);
}

/* ---- building the snapshot ----------------------------------------------- */

/* The fewest bits b with n < 2^b: sort keys packed as x << b | y for
** labels or indices below n take 2b bits (cub's radix sorts then make
** fewer passes than over 64), and NO_KEY's low 2b bits (all ones) stay
** above every real key. */
static int key_bits(uint32_t n) {
  int b = 1;
  while (b < 32 && (n >> b) != 0) b++;
  return b;
}

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

/* ---- from scratch: triangles and 4-cycles ---------------------------------- */

/* Triangles w < v < u from the entries (u, v) at positions [lo, hi), one
** warp each: the entries of u before v (w < v) looked up in v's list.
** Directed, the two ways round the triangle are checked. */
__global__ void k_triangles(const uint32_t *off, const uint32_t *nbr, const uint8_t *arc, uint32_t n, uint32_t lo,
                            uint32_t hi, int directed, unsigned long long *ctr) {
  const uint32_t lane = threadIdx.x & 31;
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
  unsigned long long sum = 0;
  for (size_t p = lo + (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; p < hi; p += warps) {
    const uint32_t v = nbr[p], u = d_owner(off, n, (uint32_t)p);
    if (v >= u) continue;
    const uint8_t fuv = arc[p];
    const uint32_t vb = off[v], ve = off[v + 1];
    for (uint32_t i = off[u] + lane; i < p; i += 32) {
      const uint32_t q = d_find(nbr, vb, ve, nbr[i]);
      if (q == NONE) continue;
      if (!directed) {
        sum++;
      } else {
        const uint8_t fuw = arc[i], fvw = arc[q];
        sum += ((fuv & ARC_OUT) && (fvw & ARC_OUT) && (fuw & ARC_IN)) +   /* u -> v -> w -> u */
               ((fuw & ARC_OUT) && (fvw & ARC_IN) && (fuv & ARC_IN));     /* u -> w -> v -> u */
      }
    }
  }
  d_warp_add(ctr, C_SUM0, sum);
}

/* 4-cycles with smallest label u and opposite vertex w, by wedges
** u - v - w with v, w > u.  Undirected: each pair of wedges u - v - w,
** u - x - w is a cycle; the counter of w counts the wedges, and the values
** before each increment sum to the pairs.  Directed: a[w] counts
** u -> v -> w, b[w] counts w -> x -> u, the cycles are the sum of a[w] b[w]
** (C_SUM0) less the pairs with v = x (C_SUM1).  The counters of a root
** (words: n, or 2n directed) are all 0 before it, and cleared after.
**
** A phase over the wedges through the centre v (entry fuv of u's list)
** for the lane's share of v's list: undirected, 0 counts and 1 clears;
** directed, 0 counts a and b, 1 sums, 2 clears. */
__device__ __forceinline__ void d_quad_wedges(const uint32_t *off, const uint32_t *nbr, const uint8_t *arc, uint32_t u,
                                              uint32_t v, uint8_t fuv, int directed, int phase, uint32_t *a,
                                              uint32_t *b, uint32_t lane, unsigned long long &sum,
                                              unsigned long long &same) {
  const uint32_t ve = off[v + 1];
  for (uint32_t j = d_after(nbr, off[v], ve, u) + lane; j < ve; j += 32) {
    const uint32_t w = nbr[j];
    if (!directed) {
      if (phase == 0) sum += atomicAdd(&a[w], 1u);
      else a[w] = 0;
      continue;
    }
    const uint8_t fvw = arc[j];
    const bool fwd = (fuv & ARC_OUT) && (fvw & ARC_OUT), back = (fvw & ARC_IN) && (fuv & ARC_IN);
    if (phase == 0) {
      if (fwd) atomicAdd(&a[w], 1u);
      if (back) atomicAdd(&b[w], 1u);
      same += fwd && back;
    } else if (phase == 1) {
      if (fwd) sum += b[w];
    } else {
      a[w] = 0;
      b[w] = 0;
    }
  }
}

/* 4-cycles from the roots [lo, hi), one block each, in its own counters:
** in shared memory (its n or 2n words, zeroed first), or else in scratch,
** per block. */
__global__ void k_quads(const uint32_t *off, const uint32_t *nbr, const uint8_t *arc, uint32_t n, uint32_t lo,
                        uint32_t hi, int directed, int in_shared, uint32_t *scratch, unsigned long long *ctr) {
  extern __shared__ uint32_t quad_counters[];
  const size_t words = (size_t)n * (directed ? 2 : 1);
  uint32_t *a = in_shared ? quad_counters : scratch + (size_t)blockIdx.x * words, *b = a + n;
  if (in_shared) {
    for (size_t i = threadIdx.x; i < words; i += blockDim.x) quad_counters[i] = 0;
    __syncthreads();
  }
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32, n_warps = blockDim.x / 32;
  unsigned long long sum = 0, same = 0;
  for (uint32_t u = lo + blockIdx.x; u < hi; u += gridDim.x) {
    const uint32_t ub = d_after(nbr, off[u], off[u + 1], u), ue = off[u + 1];
    for (int phase = 0; phase < (directed ? 3 : 2); phase++) {
      for (uint32_t i = ub + warp; i < ue; i += n_warps)
        d_quad_wedges(off, nbr, arc, u, nbr[i], arc[i], directed, phase, a, b, lane, sum, same);
      __syncthreads();
    }
  }
  d_warp_add(ctr, C_SUM0, sum);
  d_warp_add(ctr, C_SUM1, same);
}

/* One phase of the hub roots [r0, r1), all blocks together: a warp per
** entry (u, v) of their lists, root u's counters at scratch's block u - r0.
** The phases are separate launches (the counts of a root are complete
** only when all its wedges are in). */
__global__ void k_quads_hubs(const uint32_t *off, const uint32_t *nbr, const uint8_t *arc, uint32_t n, uint32_t r0,
                             uint32_t r1, int directed, int phase, uint32_t *scratch, unsigned long long *ctr) {
  const uint32_t lane = threadIdx.x & 31;
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
  const size_t words = (size_t)n * (directed ? 2 : 1);
  unsigned long long sum = 0, same = 0;
  for (size_t p = off[r0] + (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; p < off[r1]; p += warps) {
    const uint32_t u = r0 + d_owner(off + r0, r1 - r0, (uint32_t)p), v = nbr[p];
    if (v <= u) continue;
    uint32_t *a = scratch + (size_t)(u - r0) * words;
    d_quad_wedges(off, nbr, arc, u, v, arc[p], directed, phase, a, a + n, lane, sum, same);
  }
  d_warp_add(ctr, C_SUM0, sum);
  d_warp_add(ctr, C_SUM1, same);
}

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

/* ---- walkers: k >= 5 from scratch, every k per batch ----------------------- */

/* What the walkers read.  From scratch the tasks are the snapshot's
** entries; per batch the changed edges, with the changed keys in labels
** (ckey sorted, crank and cstatus beside) and the overlay of removed edges
** (okey = x << 32 | y sorted, oarc its arcs seen from x). */
struct WalkArgs {
  const uint32_t *off, *nbr;
  const uint8_t *arc;
  uint32_t n;
  int k, directed, delta;
  uint32_t n_tasks;
  const unsigned long long *ckey;
  const uint32_t *crank;
  const uint8_t *cstatus;
  uint32_t n_chg;
  const unsigned long long *okey;
  const uint8_t *oarc;
  uint32_t n_ovl;
  const uint32_t *t_start, *t_end, *t_rank;
  const uint8_t *t_phase;
  const uint8_t *touched; /* by label: an end of a changed edge */
  Walker *w;
  unsigned long long *ctr;
};

__device__ __forceinline__ unsigned long long d_key(const WalkArgs &a, uint32_t x, uint32_t y) {
  if (!a.directed && x > y) return (unsigned long long)y << 32 | x;
  return (unsigned long long)x << 32 | y;
}

/* Whether the search of a changed edge (its phase and rank) may cross the
** edge x - y (directed: the arc x -> y): unchanged, or changed like it and
** ranked after it.  Only an edge between two ends of changed edges can
** have changed. */
__device__ __forceinline__ bool d_admits(const WalkArgs &a, uint32_t phase, uint32_t rank, uint32_t x, uint32_t y) {
  if (!a.touched[x] || !a.touched[y]) return true;
  const unsigned long long key = d_key(a, x, y);
  const uint32_t j = d_lower(a.ckey, a.n_chg, key);
  if (j == a.n_chg || a.ckey[j] != key) return true;
  return a.cstatus[j] == phase && a.crank[j] > rank;
}

/* Level d of the stack on x, over x's whole list and overlay entries. */
__device__ __forceinline__ void d_level_union(const WalkArgs &a, Walker &me, int d, uint32_t x) {
  const unsigned long long kx = (unsigned long long)x << 32;
  const uint32_t ob = d_lower(a.okey, a.n_ovl, kx), oe = d_lower(a.okey, a.n_ovl, kx + (1ULL << 32));
  me.path[d] = x;
  me.pos[d] = a.off[x];
  me.send[d] = a.off[x + 1];
  me.stop[d] = me.send[d] + (oe - ob);
  me.obase[d] = ob;
}

/* Level d of the stack on x (from scratch), over x's entries > s, or > the
** bound of the last edge at the closing level. */
__device__ __forceinline__ void d_level(const WalkArgs &a, Walker &me, int d, uint32_t x) {
  const uint32_t s = me.path[0];
  const uint32_t bound = d == a.k - 2 ? (a.directed ? s : me.path[1]) : s;
  me.path[d] = x;
  me.send[d] = me.stop[d] = a.off[x + 1];
  me.pos[d] = d_after(a.nbr, a.off[x], a.off[x + 1], bound);
}

/* Starts task t; false when it has nothing to search. */
__device__ __forceinline__ bool d_start(const WalkArgs &a, Walker &me, uint32_t t) {
  if (a.delta) {
    if (a.t_start[t] == NONE) return false;
    me.end = a.t_end[t];
    me.rank = a.t_rank[t];
    me.phase = a.t_phase[t];
    me.d = 0;
    d_level_union(a, me, 0, a.t_start[t]);
    return true;
  }
  const uint32_t s = d_owner(a.off, a.n, t), y = a.nbr[t];
  if (y <= s || (a.directed && !(a.arc[t] & ARC_OUT))) return false;
  me.path[0] = s;
  me.path[1] = y;
  me.d = 1;
  d_level(a, me, 1, y);
  return true;
}

/* Whether the paths' last edge y - end (directed: y -> end) is in the graph
** searched and admitted. */
__device__ __forceinline__ bool d_closes_to_end(const WalkArgs &a, const Walker &me, uint32_t y) {
  const uint32_t e = me.end;
  uint32_t f = 0;
  const uint32_t p = d_find(a.nbr, a.off[e], a.off[e + 1], y);
  if (p != NONE) f |= a.arc[p];
  const unsigned long long ok = (unsigned long long)e << 32 | y;
  const uint32_t j = d_lower(a.okey, a.n_ovl, ok);
  if (j < a.n_ovl && a.okey[j] == ok) f |= a.oarc[j];
  if (a.directed ? !(f & ARC_IN) : !f) return false;
  return d_admits(a, me.phase, me.rank, y, e);
}

/* Each walker takes up to `budget` steps (an entry looked at, or a task
** taken), taking tasks from ctr[C_NEXT] while there are some; what it found
** goes to C_SUM0 (from scratch; per batch: paths of removed edges) and
** C_SUM1 (of added edges); C_ACTIVE counts the walkers still busy. */
__global__ void __launch_bounds__(128) k_walk(WalkArgs a, uint32_t budget) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  Walker me = a.w[tid];
  unsigned long long found[2] = {0, 0};
  const int base = a.delta ? 0 : 1;
  for (uint32_t step = 0; step < budget; step++) {
    if (me.task == NONE) {
      const unsigned long long t = atomicAdd(&a.ctr[C_NEXT], 1ULL);
      if (t >= a.n_tasks) break;
      me.task = d_start(a, me, (uint32_t)t) ? (uint32_t)t : NONE;
      continue;
    }
    const int d = me.d;
    if (me.pos[d] >= me.stop[d]) {
      if (d == base) me.task = NONE;
      else me.d = d - 1;
      continue;
    }
    const uint32_t q = me.pos[d]++;
    uint32_t y;
    uint8_t f;
    if (q < me.send[d]) {
      y = a.nbr[q];
      f = a.arc[q];
    } else {
      const uint32_t j = me.obase[d] + (q - me.send[d]);
      y = (uint32_t)a.okey[j];
      f = a.oarc[j];
    }
    if (a.directed && !(f & ARC_OUT)) continue;
    bool on_path = false;
    for (int j = 0; j <= d; j++) on_path |= me.path[j] == y;
    if (on_path) continue;
    if (!a.delta) {
      if (d == a.k - 2) {
        /* y closes to s: an entry (s, y), directed an arc y -> s. */
        const uint32_t s = me.path[0], p = d_find(a.nbr, a.off[s], a.off[s + 1], y);
        found[0] += p != NONE && (!a.directed || (a.arc[p] & ARC_IN));
      } else {
        me.d = d + 1;
        d_level(a, me, d + 1, y);
      }
      continue;
    }
    if (y == me.end || !d_admits(a, me.phase, me.rank, me.path[d], y)) continue;
    if (d + 1 == a.k - 2) {
      found[me.phase == S_REMOVED ? 0 : 1] += d_closes_to_end(a, me, y);
    } else {
      me.d = d + 1;
      d_level_union(a, me, d + 1, y);
    }
  }
  a.w[tid] = me;
  if (me.task != NONE) atomicAdd(&a.ctr[C_ACTIVE], 1ULL);
  d_warp_add(a.ctr, C_SUM0, found[0]);
  d_warp_add(a.ctr, C_SUM1, found[1]);
}

/* ---- per batch: triangles and 4-cycles through each changed edge --------- */

/* A vertex's list in the graph a changed edge's search sees: its snapshot
** entries at positions b .. send - 1, then (removed edges, searching the
** graph before the batch) its overlay entries obase .. obase + stop - send - 1. */
struct List {
  uint32_t b, send, stop, obase;
};

__device__ __forceinline__ List d_list(const WalkArgs &a, uint32_t x, bool before) {
  List l;
  l.b = a.off[x];
  l.send = l.stop = a.off[x + 1];
  l.obase = 0;
  if (before && a.touched[x]) {
    const unsigned long long kx = (unsigned long long)x << 32;
    l.obase = d_lower(a.okey, a.n_ovl, kx);
    l.stop += d_lower(a.okey, a.n_ovl, kx + (1ULL << 32)) - l.obase;
  }
  return l;
}

__device__ __forceinline__ void d_entry(const WalkArgs &a, const List &l, uint32_t q, uint32_t &y, uint8_t &f) {
  if (q < l.send) {
    y = a.nbr[q];
    f = a.arc[q];
  } else {
    const uint32_t j = l.obase + (q - l.send);
    y = (uint32_t)a.okey[j];
    f = a.oarc[j];
  }
}

/* The arcs of entry (x, y) in the graph searched. */
__device__ __forceinline__ uint8_t d_arcs(const WalkArgs &a, bool before, uint32_t x, uint32_t y) {
  uint8_t f = 0;
  const uint32_t p = d_find(a.nbr, a.off[x], a.off[x + 1], y);
  if (p != NONE) f = a.arc[p];
  if (before && a.touched[x] && a.touched[y]) {
    const unsigned long long k = (unsigned long long)x << 32 | y;
    const uint32_t j = d_lower(a.okey, a.n_ovl, k);
    if (j < a.n_ovl && a.okey[j] == k) f |= a.oarc[j];
  }
  return f;
}

/* Whether arcs f hold what is needed: directed, the arc `need`; else any. */
__device__ __forceinline__ bool d_has(const WalkArgs &a, uint8_t f, uint8_t need) {
  return a.directed ? (f & need) != 0 : f != 0;
}

/* One changed edge's search: paths from F to L (F - ... - L), F the end
** with the shorter list.  Undirected, which end is first does not matter.
** Directed, the paths go t_start -> ... -> t_end: walked forwards from
** F = t_start (fwd), else backwards from F = t_end.  Entry (x, y) along
** the walk then needs arc `step` (x -> y forwards, y -> x backwards), and
** the closing entry (L, y) arc `close`. */
struct Search {
  uint32_t F, L, rank, phase;
  bool before, fwd;
  uint8_t step, close;
};

__device__ __forceinline__ Search d_search(const WalkArgs &a, uint32_t t) {
  Search r;
  const uint32_t s = a.t_start[t], e = a.t_end[t];
  r.rank = a.t_rank[t];
  r.phase = a.t_phase[t];
  r.before = r.phase == S_REMOVED;
  r.fwd = !(a.directed && a.off[e + 1] - a.off[e] < a.off[s + 1] - a.off[s]);
  r.F = r.fwd ? s : e;
  r.L = r.fwd ? e : s;
  r.step = r.fwd ? ARC_OUT : ARC_IN;
  r.close = r.fwd ? ARC_IN : ARC_OUT;
  return r;
}

/* Whether the search may cross from x to y (the arc x -> y forwards, y -> x
** backwards). */
__device__ __forceinline__ bool d_admits_step(const WalkArgs &a, const Search &r, uint32_t x, uint32_t y) {
  return r.fwd ? d_admits(a, r.phase, r.rank, x, y) : d_admits(a, r.phase, r.rank, y, x);
}

/* Triangles through a changed edge: the entries y of F's list that close
** to L.  Its list is cut into pieces of PIECE entries, one warp each, so
** that an edge between two hubs does not hold up the launch: pieces[t] is
** the number of pieces of the changed edges up to t. */
#define PIECE 256u

__global__ void k_pieces(WalkArgs a, uint32_t nc, unsigned long long *pieces) {
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < nc; t += (size_t)gridDim.x * blockDim.x) {
    if (a.t_start[t] == NONE) {
      pieces[t] = 0;
      continue;
    }
    const Search r = d_search(a, (uint32_t)t);
    const List l = d_list(a, r.F, r.before);
    const uint32_t np = (l.stop - l.b + PIECE - 1) / PIECE;
    pieces[t] = np ? np : 1;
  }
}

/* The pieces of the changed edges [lo, hi) (pieces summed by cub). */
__global__ void k_delta3(WalkArgs a, uint32_t lo, uint32_t hi, const unsigned long long *pieces) {
  const uint32_t lane = threadIdx.x & 31;
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
  const unsigned long long p0 = lo ? pieces[lo - 1] : 0, p1 = pieces[hi - 1];
  unsigned long long found[2] = {0, 0};
  for (unsigned long long q = p0 + (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; q < p1; q += warps) {
    /* The changed edge t whose pieces hold q: the first with pieces[t] > q. */
    const uint32_t t = lo + d_lower(pieces + lo, hi - lo, q + 1);
    const uint32_t first = (uint32_t)(q - (t ? pieces[t - 1] : 0));
    const Search r = d_search(a, t);
    const List lf = d_list(a, r.F, r.before);
    const uint32_t b = lf.b + first * PIECE, e = lf.stop < b + PIECE ? lf.stop : b + PIECE;
    unsigned long long n = 0;
    for (uint32_t i = b + lane; i < e; i += 32) {
      uint32_t y;
      uint8_t f;
      d_entry(a, lf, i, y, f);
      /* The edges first (most candidates close no triangle), then whether
      ** the search may use them. */
      if (y == r.L || !d_has(a, f, r.step) || !d_has(a, d_arcs(a, r.before, r.L, y), r.close)) continue;
      if (!d_admits_step(a, r, r.F, y) || !d_admits_step(a, r, y, r.L)) continue;
      n++;
    }
    found[r.before ? 0 : 1] += n;
  }
  d_warp_add(a.ctr, C_SUM0, found[0]);
  d_warp_add(a.ctr, C_SUM1, found[1]);
}

/* 4-cycles through the changed edges [lo, hi), one block each: its warps
** take the entries x of F's list, and a warp's lanes the shorter of x's
** and L's lists, looking each entry y up in the other. */
__global__ void __launch_bounds__(128) k_delta4(WalkArgs a, uint32_t lo, uint32_t hi) {
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32, n_warps = blockDim.x / 32;
  unsigned long long found[2] = {0, 0};
  for (uint32_t t = lo + blockIdx.x; t < hi; t += gridDim.x) {
    if (a.t_start[t] == NONE) continue;
    const Search r = d_search(a, t);
    const List lf = d_list(a, r.F, r.before), ll = d_list(a, r.L, r.before);
    unsigned long long n = 0;
    for (uint32_t i = lf.b + warp; i < lf.stop; i += n_warps) {
      uint32_t x;
      uint8_t f;
      d_entry(a, lf, i, x, f);
      if (x == r.L || !d_has(a, f, r.step) || !d_admits_step(a, r, r.F, x)) continue;
      const List lx = d_list(a, x, r.before);
      if (lx.stop - lx.b <= ll.stop - ll.b) {
        for (uint32_t q = lx.b + lane; q < lx.stop; q += 32) {
          uint32_t y;
          uint8_t g;
          d_entry(a, lx, q, y, g);
          if (y == r.F || y == r.L || !d_has(a, g, r.step) || !d_has(a, d_arcs(a, r.before, r.L, y), r.close))
            continue;
          if (!d_admits_step(a, r, x, y) || !d_admits_step(a, r, y, r.L)) continue;
          n++;
        }
      } else {
        for (uint32_t q = ll.b + lane; q < ll.stop; q += 32) {
          uint32_t y;
          uint8_t h;
          d_entry(a, ll, q, y, h);
          if (y == r.F || y == x || !d_has(a, h, r.close) || !d_has(a, d_arcs(a, r.before, x, y), r.step)) continue;
          if (!d_admits_step(a, r, y, r.L) || !d_admits_step(a, r, x, y)) continue;
          n++;
        }
      }
    }
    found[r.before ? 0 : 1] += n;
  }
  d_warp_add(a.ctr, C_SUM0, found[0]);
  d_warp_add(a.ctr, C_SUM1, found[1]);
}

/* Marks the ends of the changed edges [0, nc). */
__global__ void k_touch(const uint32_t *s, const uint32_t *e, uint32_t nc, uint8_t *touched) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nc; i += (size_t)gridDim.x * blockDim.x)
    touched[s[i]] = touched[e[i]] = 1;
}

/* ---- per batch: the snapshot patched ---------------------------------------- */

__global__ void k_label_new(uint32_t *label, uint32_t *vert, uint32_t from, uint32_t to) {
  for (size_t v = from + blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < to; v += (size_t)gridDim.x * blockDim.x)
    label[v] = vert[v] = (uint32_t)v;
}

/* The snapshot's entries that stay (lists off, nbr, arc of n_old
** vertices), at their places among the new ones: entry i of list x, key
** x << 32 | nbr[i], moves back by the replaced entries before it (gone,
** sorted) and on by the new keys below it (ikey, sorted).  A block takes a
** tile of KEEP_TILE entries: a few of its threads find the tile's owners
** and its ranges of gone and ikey, and each entry then searches only those
** (a few, usually). */
#define KEEP_TILE 2048
__global__ void __launch_bounds__(256) k_patch_keep(const uint32_t *off, uint32_t n_old, const uint32_t *nbr,
                                                    const uint8_t *arc, uint32_t n_ent, const uint32_t *gone,
                                                    uint32_t ng, const unsigned long long *ikey, uint32_t ni,
                                                    uint32_t *onbr, uint8_t *oarc) {
  __shared__ uint32_t r[6];
  for (size_t base = (size_t)blockIdx.x * KEEP_TILE; base < n_ent; base += (size_t)gridDim.x * KEEP_TILE) {
    const size_t end = base + KEEP_TILE < n_ent ? base + KEEP_TILE : n_ent;
    __syncthreads();
    if (threadIdx.x == 0) r[0] = d_lower(gone, ng, (uint32_t)base);
    if (threadIdx.x == 1) r[1] = d_lower(gone, ng, (uint32_t)end);
    if (threadIdx.x == 2) r[4] = d_owner(off, n_old, (uint32_t)base);
    if (threadIdx.x == 3) r[5] = d_owner(off, n_old, (uint32_t)end - 1);
    __syncthreads();
    if (threadIdx.x == 0) r[2] = d_lower(ikey, ni, (unsigned long long)r[4] << 32 | nbr[base]);
    if (threadIdx.x == 1) r[3] = d_lower(ikey, ni, ((unsigned long long)r[5] << 32 | nbr[end - 1]) + 1);
    __syncthreads();
    const uint32_t g0 = r[0], g1 = r[1], i0 = r[2], i1 = r[3], ob = r[4], oe = r[5];
    for (size_t i = base + threadIdx.x; i < end; i += blockDim.x) {
      const uint32_t g = g0 + d_lower(gone + g0, g1 - g0, (uint32_t)i);
      if (g < g1 && gone[g] == i) continue;
      const uint32_t x = ob + d_owner(off + ob, oe - ob + 1, (uint32_t)i), y = nbr[i];
      const size_t p = i - g + i0 + d_lower(ikey + i0, i1 - i0, (unsigned long long)x << 32 | y);
      onbr[p] = y;
      oarc[p] = arc[i];
    }
  }
}

/* Where key x << 32 | y goes among the snapshot's entries (lists off, nbr
** of n_old vertices, n_ent entries). */
__device__ __forceinline__ uint32_t d_place(const uint32_t *off, uint32_t n_old, const uint32_t *nbr, uint32_t n_ent,
                                            unsigned long long k) {
  const uint32_t x = (uint32_t)(k >> 32);
  if (x >= n_old) return n_ent;
  return off[x] + d_lower(nbr + off[x], off[x + 1] - off[x], (uint32_t)k);
}

/* The new entries at their places. */
__global__ void k_patch_add(const uint32_t *off, uint32_t n_old, const uint32_t *nbr, uint32_t n_ent,
                            const uint32_t *gone, uint32_t ng, const unsigned long long *ikey, const uint8_t *iarc,
                            uint32_t ni, uint32_t *onbr, uint8_t *oarc) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < ni; j += (size_t)gridDim.x * blockDim.x) {
    const uint32_t q = d_place(off, n_old, nbr, n_ent, ikey[j]);
    const size_t p = q - d_lower(gone, ng, q) + j;
    onbr[p] = (uint32_t)ikey[j];
    oarc[p] = iarc[j];
  }
}

/* The patched lists' starts: v's list starts after the old entries of
** lists before v, less those replaced, and the new keys below v << 32. */
__global__ void k_patch_starts(const uint32_t *off, uint32_t n_old, uint32_t n_ent, uint32_t n, const uint32_t *gone,
                               uint32_t ng, const unsigned long long *ikey, uint32_t ni, uint32_t *ooff) {
  for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v <= n; v += (size_t)gridDim.x * blockDim.x) {
    const uint32_t pos = v <= n_old ? off[v] : n_ent;
    ooff[v] = pos - d_lower(gone, ng, pos) + d_lower(ikey, ni, (unsigned long long)v << 32);
  }
}

/* Whether x's list in the device copy of the graph (the host's layout)
** holds y; every lane of the warp calls it.  Each lane has four loads in
** flight at a time: a hub's list is long. */
__device__ __forceinline__ bool d_warp_has(const uint32_t *off, const uint32_t *deg, const uint32_t *nbr, uint32_t x,
                                           uint32_t y) {
  const uint32_t lane = threadIdx.x & 31, b = off[x], e = b + deg[x];
  for (uint32_t base = b; base < e; base += 128) {
    bool hit = false;
#pragma unroll
    for (uint32_t i = 0; i < 4; i++) {
      const uint32_t p = base + lane + 32 * i;
      hit |= p < e && nbr[p] == y;
    }
    if (__any_sync(0xffffffffu, hit)) return true;
  }
  return false;
}

__device__ __forceinline__ uint8_t d_mirror(uint8_t f) {
  return (uint8_t)(((f & ARC_OUT) ? ARC_IN : 0) | ((f & ARC_IN) ? ARC_OUT : 0));
}

/* The arcs that entry (x, y) lost, from its arcs before (o) and after (w):
** undirected, both when the simple edge went. */
__device__ __forceinline__ uint8_t d_removed(uint8_t o, uint8_t w, int directed) {
  return directed ? (uint8_t)(o & ~w) : (uint8_t)(o && !w ? (ARC_OUT | ARC_IN) : 0);
}

/* Whether entry (lx, ly) is a changed edge of the mode: directed, its arc
** lx -> ly went or came; undirected, the simple edge did (from lx < ly). */
__device__ __forceinline__ bool d_changed(uint32_t lx, uint32_t ly, uint8_t o, uint8_t w, int directed) {
  return directed ? ((o ^ w) & ARC_OUT) != 0 : lx < ly && (o != 0) != (w != 0);
}

/* An entry's flags: x, it exists now; y, it had a place in the snapshot;
** z, it is a changed edge of the mode; w, it lost arcs (the overlay). */
__device__ __forceinline__ uint4 d_flags(uint32_t lx, uint32_t ly, uint8_t o, uint8_t w, uint32_t pos, int directed) {
  return make_uint4(w != 0, pos != NONE, d_changed(lx, ly, o, w, directed), d_removed(o, w, directed) != 0);
}

struct Add4 {
  __device__ __forceinline__ uint4 operator()(const uint4 &a, const uint4 &b) const {
    return make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
};

/* The batch's records (removed, then added; the device copy of the graph
** followed it with them) as the entries they touch, at both ends, keyed
** in labels: slots 2i and 2i + 1 get lx << b | ly and ly << b | lx, or
** NO_KEY for a self-loop or a record naming a vertex past n (which also
** sets counts[5]). */
__global__ void k_entry_keys(const uint32_t *rs, const uint32_t *rd, uint32_t nr, const uint32_t *as,
                             const uint32_t *ad, uint32_t na, uint32_t n, const uint32_t *label, int b,
                             unsigned long long *key, int *counts) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)nr + na;
       i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t x = i < nr ? rs[i] : as[i - nr], y = i < nr ? rd[i] : ad[i - nr];
    const bool out = x >= n || y >= n;
    if (out) counts[5] = 1;
    if (out || x == y) {
      key[2 * i] = key[2 * i + 1] = NO_KEY;
      continue;
    }
    const unsigned long long lx = label[x], ly = label[y];
    key[2 * i] = lx << b | ly;
    key[2 * i + 1] = ly << b | lx;
  }
}

/* What the batch did to each entry it touched (ent[j], sorted and unique,
** j < *n_ent; NO_KEY, last, for the records that touch none), one warp for
** the two entries (lx, ly) and (ly, lx) of a pair, from the one with
** lx < ly: each entry's arcs before (the snapshot: oldf, and its place
** there, pos, or NONE) and after (the device copy of the graph: newf), and
** its flags (d_flags) in the mode.  The other slots, up to `slots`, touch
** nothing. */
struct EntArgs {
  const unsigned long long *ent;
  const int *n_ent;
  uint32_t slots;
  int b;        /* the packing of ent */
  int directed; /* the mode */
  const uint32_t *vert;
  uint32_t n_old;
  const uint32_t *soff, *snbr; /* the snapshot's lists */
  const uint8_t *sarc;
  const uint32_t *goff, *gdeg, *gnbr;
  int graph_directed;
  uint8_t *oldf, *newf;
  uint32_t *pos;
  uint4 *flags;
};

__global__ void k_entry_state(EntArgs a) {
  const uint32_t lane = threadIdx.x & 31;
  const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
  const uint32_t ne = (uint32_t)*a.n_ent;
  const unsigned long long mask = (1ULL << a.b) - 1;
  for (size_t j = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; j < a.slots; j += warps) {
    const unsigned long long k = j < ne ? a.ent[j] : NO_KEY;
    if (k == NO_KEY) {
      if (lane == 0) {
        a.oldf[j] = a.newf[j] = 0;
        a.pos[j] = NONE;
        a.flags[j] = make_uint4(0, 0, 0, 0);
      }
      continue;
    }
    const uint32_t lx = (uint32_t)(k >> a.b), ly = (uint32_t)(k & mask);
    if (lx > ly) continue; /* written with its mirror */
    const uint32_t x = a.vert[lx], y = a.vert[ly];
    uint8_t nf;
    if (!a.graph_directed) {
      const bool any = a.gdeg[x] <= a.gdeg[y] ? d_warp_has(a.goff, a.gdeg, a.gnbr, x, y)
                                              : d_warp_has(a.goff, a.gdeg, a.gnbr, y, x);
      nf = any ? (ARC_OUT | ARC_IN) : 0;
    } else {
      const bool xy = d_warp_has(a.goff, a.gdeg, a.gnbr, x, y), yx = d_warp_has(a.goff, a.gdeg, a.gnbr, y, x);
      nf = (uint8_t)((xy ? ARC_OUT : 0) | (yx ? ARC_IN : 0));
    }
    if (lane) continue;
    const uint32_t pxy = lx < a.n_old ? d_find(a.snbr, a.soff[lx], a.soff[lx + 1], ly) : NONE;
    const uint32_t pyx = ly < a.n_old ? d_find(a.snbr, a.soff[ly], a.soff[ly + 1], lx) : NONE;
    const uint8_t of = pxy != NONE ? a.sarc[pxy] : 0;
    a.oldf[j] = of;
    a.newf[j] = nf;
    a.pos[j] = pxy;
    a.flags[j] = d_flags(lx, ly, of, nf, pxy, a.directed);
    /* Both keys of every pair were emitted, so the mirror is there. */
    const unsigned long long mk = (unsigned long long)ly << a.b | lx;
    const uint32_t jm = d_lower(a.ent, ne, mk);
    if (jm < ne && a.ent[jm] == mk) {
      a.oldf[jm] = d_mirror(of);
      a.newf[jm] = d_mirror(nf);
      a.pos[jm] = pyx;
      a.flags[jm] = d_flags(ly, lx, d_mirror(of), d_mirror(nf), pyx, a.directed);
    }
  }
}

/* The flags of the entries [0, slots) again, for another mode. */
__global__ void k_entry_flags(const unsigned long long *ent, const uint8_t *oldf, const uint8_t *newf,
                              const uint32_t *pos, uint32_t slots, int b, int directed, uint4 *flags) {
  const unsigned long long mask = (1ULL << b) - 1;
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < slots; j += (size_t)gridDim.x * blockDim.x) {
    const uint8_t o = oldf[j], w = newf[j];
    /* (An empty slot's key is not read: it has no arcs and no place.) */
    const unsigned long long k = o | w ? ent[j] : 0;
    flags[j] = d_flags((uint32_t)(k >> b), (uint32_t)(k & mask), o, w, pos[j], directed);
  }
}

/* Each entry j < slots into the lists its flags name, at the places their
** exclusive scan (at) gives: the entries now (pks: keys x << 32 | y, and
** pfs), the replaced places (gones), the changed edges of the mode (ck,
** cs) and the overlay (ok, oa: the arcs lost).  ck and ok hold NO_KEY past
** their last, to `slots`.  counts[1 .. 4]: the totals.  Without `all`, only
** the changed edges and the overlay. */
struct EntOut {
  const unsigned long long *ent;
  const uint8_t *oldf, *newf;
  const uint32_t *pos;
  const uint4 *flags, *at;
  uint32_t slots;
  int b, directed, all;
  unsigned long long *pks, *ck, *ok;
  uint8_t *pfs, *cs, *oa;
  uint32_t *gones;
  int *counts;
};

__global__ void k_entry_scatter(EntOut a) {
  if (!a.slots) return;
  const unsigned long long mask = (1ULL << a.b) - 1;
  const uint4 tot = Add4()(a.at[a.slots - 1], a.flags[a.slots - 1]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (a.all) a.counts[1] = (int)tot.x, a.counts[2] = (int)tot.y;
    a.counts[3] = (int)tot.z, a.counts[4] = (int)tot.w;
  }
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < a.slots; j += (size_t)gridDim.x * blockDim.x) {
    const uint4 f = a.flags[j], at = a.at[j];
    if (f.x | f.y | f.z | f.w) {
      const unsigned long long k = a.ent[j], key = (k >> a.b) << 32 | (k & mask);
      const uint8_t o = a.oldf[j], w = a.newf[j];
      if (a.all && f.x) {
        a.pks[at.x] = key;
        a.pfs[at.x] = w;
      }
      if (a.all && f.y) a.gones[at.y] = a.pos[j];
      if (f.z) {
        a.ck[at.z] = key;
        a.cs[at.z] = (a.directed ? (w & ARC_OUT) != 0 : w != 0) ? S_ADDED : S_REMOVED;
      }
      if (f.w) {
        a.ok[at.w] = key;
        a.oa[at.w] = d_removed(o, w, a.directed);
      }
    }
    if (j >= tot.z) a.ck[j] = NO_KEY;
    if (j >= tot.w) a.ok[j] = NO_KEY;
  }
}

/* The tasks: changed edge t (rank t) searched from its end with the shorter
** list (undirected), or from its arc's head to its tail (directed); its
** ends marked.  The slots [0, nc) may end in NO_KEY (sorted last): their
** tasks start at NONE and search nothing. */
__global__ void k_tasks(const unsigned long long *ck, const uint8_t *cs, uint32_t nc, const uint32_t *off, int directed,
                        uint32_t *crank, uint32_t *ts, uint32_t *te, uint32_t *tr, uint8_t *tp, uint8_t *touched) {
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < nc; t += (size_t)gridDim.x * blockDim.x) {
    crank[t] = tr[t] = (uint32_t)t;
    if (ck[t] == NO_KEY) {
      ts[t] = te[t] = NONE;
      tp[t] = 0;
      continue;
    }
    const uint32_t x = (uint32_t)(ck[t] >> 32), y = (uint32_t)ck[t];
    tp[t] = cs[t];
    bool from_y = directed || off[y + 1] - off[y] < off[x + 1] - off[x];
    ts[t] = from_y ? y : x;
    te[t] = from_y ? x : y;
    touched[x] = touched[y] = 1;
  }
}

/* ---- the host side ------------------------------------------------------- */


static void report_progress(const dyng_cancel *cancel, uint64_t done, uint64_t total) {
  if (cancel && cancel->progress) cancel->progress(cancel->ctx, done, total);
}

static unsigned grid_for(size_t items, unsigned threads) {
  size_t b = (items + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > 65535u * 8) b = 65535u * 8;
  return (unsigned)b;
}

#define TRY(call, what)                                                    \
  do {                                                                     \
    int rc_ = dev_fail((call), (what), st->err, sizeof st->err);           \
    if (rc_ != DYNG_OK) return rc_;                                        \
  } while (0)

/* The time now, after the stream's work so far when DYNG_CUDA_PROFILE=1
** splits a step (a failure is left for the step's own wait to report). */
static double profile_step(DevState *st) {
  if (dev_profile_on()) cudaStreamSynchronize(st->stream);
  return dev_now_ms();
}

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

static cudaError_t cyc_alloc(DevCycles *c, void **p, size_t bytes) {
  return c->pooled ? dev_malloc_async(p, bytes, pool, c->stream) : dev_malloc(p, bytes);
}

static void cyc_free(DevCycles *c, void *p) {
  if (!p) return;
  if (c->pooled) cudaFreeAsync(p, c->stream);
  else cudaFree(p);
}

/* Replaces *p by a buffer of at least `bytes` (contents lost), counted in
** c->bytes. */
static cudaError_t cyc_reserve(DevCycles *c, void **p, size_t *cap, size_t bytes) {
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
static cudaError_t arrays_reserve(DevCycles *c, SnapArrays *a, size_t n_ent, size_t n) {
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

/* Cuts consecutive pieces, each 256-byte aligned, out of base; with base
** NULL it only counts the bytes (at). */
struct Carver {
  char *base;
  size_t at;
  char *take(size_t bytes) {
    char *p = base ? base + at : NULL;
    at += (bytes + 255) / 256 * 256;
    return p;
  }
};

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
static int labels_reserve(DevState *st, DevCycles *c, size_t n_keep, size_t n) {
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
static int snap_build(DevState *st, DevCycles *c, const dyng_graph_view *view) {
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

/* Per-batch device arrays of a patched snapshot, carved from c->pbuf for m
** records: per slot, two per record (an entry at each end). */
struct PatchBufs {
  unsigned long long *kraw, *ksort, *ent; /* the entries' keys; sorted; unique */
  uint8_t *oldf, *newf;                   /* their arcs before and after */
  uint32_t *pos;                          /* their places in the snapshot, or NONE */
  uint4 *flags, *at;                      /* d_flags, and their exclusive scan */
  int *counts;                            /* entries, new entries, gone, changed, overlay, bad record */
  unsigned long long *pks;                /* entries now, sorted (keys x << 32 | y) */
  uint8_t *pfs;                           /* their arcs */
  uint32_t *gones;                        /* replaced places, sorted */
  unsigned long long *ck, *ok;            /* changed edges and overlay, sorted */
  uint8_t *cs, *oa;                       /* their statuses and arcs */
  uint32_t *crank, *ts, *te, *tr;         /* ranks and tasks */
  uint8_t *tp;
  void *cub;
  size_t cub_bytes;
  size_t total;
};

static PatchBufs patch_layout(char *base, size_t m, size_t cub_bytes) {
  PatchBufs b;
  Carver cv = {base, 0};
  const size_t m2 = 2 * m;
  b.kraw = (unsigned long long *)cv.take(m2 * 8), b.ksort = (unsigned long long *)cv.take(m2 * 8);
  b.ent = (unsigned long long *)cv.take(m2 * 8);
  b.oldf = (uint8_t *)cv.take(m2), b.newf = (uint8_t *)cv.take(m2);
  b.pos = (uint32_t *)cv.take(m2 * 4);
  b.flags = (uint4 *)cv.take(m2 * 16), b.at = (uint4 *)cv.take(m2 * 16);
  b.counts = (int *)cv.take(8 * sizeof(int));
  b.pks = (unsigned long long *)cv.take(m2 * 8), b.pfs = (uint8_t *)cv.take(m2);
  b.gones = (uint32_t *)cv.take(m2 * 4);
  b.ck = (unsigned long long *)cv.take(m2 * 8), b.ok = (unsigned long long *)cv.take(m2 * 8);
  b.cs = (uint8_t *)cv.take(m2), b.oa = (uint8_t *)cv.take(m2);
  b.crank = (uint32_t *)cv.take(m2 * 4), b.ts = (uint32_t *)cv.take(m2 * 4), b.te = (uint32_t *)cv.take(m2 * 4);
  b.tr = (uint32_t *)cv.take(m2 * 4);
  b.tp = (uint8_t *)cv.take(m2);
  b.cub = cv.take(cub_bytes);
  b.cub_bytes = cub_bytes;
  b.total = cv.at;
  return b;
}

/* The work space cub needs for the patch's sort, selection and scan of
** the entries of m records. */
static int patch_cub_bytes(DevState *st, size_t m, size_t *out) {
  const int n2 = 2 * (int)(m ? m : 1);
  size_t b[3] = {0, 0, 0};
  unsigned long long *k = NULL;
  uint4 *f = NULL;
  int *cnt = NULL;
  TRY(cub::DeviceRadixSort::SortKeys(NULL, b[0], k, k, n2, 0, 64, st->stream), "cub");
  TRY(cub::DeviceSelect::Unique(NULL, b[1], k, k, cnt, n2, st->stream), "cub");
  TRY(cub::DeviceScan::ExclusiveScan(NULL, b[2], f, f, Add4(), make_uint4(0, 0, 0, 0), n2, st->stream), "cub");
  *out = *std::max_element(b, b + 3);
  return DYNG_OK;
}

/* c->pbuf laid out for m records. */
static int patch_bufs(DevState *st, DevCycles *c, size_t m, PatchBufs *pb) {
  size_t cub_bytes = c->pbuf_cub;
  if (!c->pbuf || c->pbuf_m != m) {
    int rc = patch_cub_bytes(st, m, &cub_bytes);
    if (rc) return rc;
  }
  const size_t total = patch_layout(NULL, m, cub_bytes).total;
  size_t cap = c->cap_pbuf;
  TRY(cyc_reserve(c, &c->pbuf, &cap, total), "cycle snapshot");
  c->cap_pbuf = cap;
  c->pbuf_m = (uint32_t)m;
  c->pbuf_cub = cub_bytes;
  *pb = patch_layout((char *)c->pbuf, m, cub_bytes);
  return DYNG_OK;
}

/* Scans the entries' flags and writes out what they name (k_entry_scatter:
** `all`, or the changed edges and overlay only). */
static int entries_out(DevState *st, DevCycles *c, const PatchBufs &pb, int directed, int b, int all) {
  const uint32_t slots = c->n_slots;
  if (!slots) return DYNG_OK;
  size_t bytes = pb.cub_bytes;
  TRY(cub::DeviceScan::ExclusiveScan(pb.cub, bytes, pb.flags, pb.at, Add4(), make_uint4(0, 0, 0, 0), (int)slots,
                                     st->stream),
      "scan");
  EntOut o;
  o.ent = pb.ent, o.oldf = pb.oldf, o.newf = pb.newf, o.pos = pb.pos, o.flags = pb.flags, o.at = pb.at;
  o.slots = slots, o.b = b, o.directed = directed, o.all = all;
  o.pks = pb.pks, o.ck = pb.ck, o.ok = pb.ok, o.pfs = pb.pfs, o.cs = pb.cs, o.oa = pb.oa, o.gones = pb.gones;
  o.counts = pb.counts;
  k_entry_scatter<<<grid_for(slots, 256), 256, 0, st->stream>>>(o);
  TRY(cudaGetLastError(), "cycle update: entries");
  c->chg_mode = directed;
  c->tasks_mode = -1;
  return DYNG_OK;
}

/* The changed edges of another mode, from the entries of the last patch
** (in c->pbuf). */
static int changed_select(DevState *st, DevCycles *c, int directed) {
  PatchBufs pb = patch_layout((char *)c->pbuf, c->pbuf_m, c->pbuf_cub);
  if (c->n_slots) {
    k_entry_flags<<<grid_for(c->n_slots, 256), 256, 0, st->stream>>>(pb.ent, pb.oldf, pb.newf, pb.pos, c->n_slots,
                                                                       key_bits(c->n), directed, pb.flags);
    TRY(cudaGetLastError(), "cycle update: changed edges");
  }
  return entries_out(st, c, pb, directed, key_bits(c->n), 0);
}

/* Brings the snapshot of the graph before the batch c->batch_seen to the
** graph after it, on the device: the entries the batch's records touch,
** at both ends, in labels, sorted and unique (one radix sort); for each,
** its arcs before (the snapshot) and now (the device copy of the graph);
** from their flags' scan, in key order, which is the snapshot's: the
** entries now, the places they replace, the changed edges of the mode and
** the overlay.  The entries now are merged in place of the old ones into
** the spare arrays, which become the snapshot.  Labels stay (a new vertex
** is its own label): only the kernels' speed depends on them, not the
** counts.  The entries stay in c->pbuf for cycles_delta
** (changed_on_device). */
static int snap_patch(DevState *st, DevCycles *c, const dyng_graph_view *g, int directed) {
  const dyng_changes *ch = c->batch_seen;
  const uint32_t n_old = c->n, n = g->n_vertices;
  c->pairs_ready = 0;
  c->chg_mode = c->tasks_mode = -1;
  if (n < n_old || st->csr.n != n) return DYNG_EINVAL;
  const size_t m = ch->n_removed + ch->n_added;
  if (m == 0 && n == n_old) {
    c->behind = 0;
    c->n_slots = 0;
    c->pairs_ready = 1;
    return DYNG_OK;
  }
  if (m == 0 || m > 0x3fffffffu) return DYNG_ETOOBIG; /* built anew */
  c->hubs_known = 0;
  /* The records as the device copy followed them. */
  const DevBatch *db = &st->csr.batch;
  if (db->n_rem != ch->n_removed || db->n_add != ch->n_added) return DYNG_ETOOBIG; /* built anew */
  PatchBufs pb;
  int rc = patch_bufs(st, c, m, &pb);
  if (rc) return rc;

  /* New vertices are their own labels. */
  if (n > n_old) {
    if ((rc = labels_reserve(st, c, n_old, n)) != DYNG_OK) return rc;
    k_label_new<<<grid_for(n - n_old, 256), 256, 0, st->stream>>>(c->label, c->vert, n_old, n);
    TRY(cudaGetLastError(), "cycle snapshot: labels");
  }

  /* The entries the batch touched, at both ends, sorted in labels and
  ** unique: keys of labels (below n) packed in 2b bits. */
  const uint32_t slots = (uint32_t)(2 * m);
  const int b = key_bits(n);
  c->n_slots = slots;
  size_t bytes;
  const double t0 = dev_now_ms();
  TRY(cudaMemsetAsync(pb.counts, 0, 8 * sizeof(int), st->stream), "cycle snapshot");
  k_entry_keys<<<grid_for(m, 256), 256, 0, st->stream>>>(db->rem_src, db->rem_dst, db->n_rem, db->add_src,
                                                          db->add_dst, db->n_add, n, c->label, b, pb.kraw, pb.counts);
  TRY(cudaGetLastError(), "cycle snapshot: entries");
  bytes = pb.cub_bytes;
  TRY(cub::DeviceRadixSort::SortKeys(pb.cub, bytes, pb.kraw, pb.ksort, (int)slots, 0, 2 * b, st->stream), "sort");
  bytes = pb.cub_bytes;
  TRY(cub::DeviceSelect::Unique(pb.cub, bytes, pb.ksort, pb.ent, pb.counts, (int)slots, st->stream), "unique");
  /* What the batch did to each, and from that, in key order (which is the
  ** snapshot's order): the entries now, the places they replace, and the
  ** changed edges of the mode asked for, with the overlay. */
  EntArgs ea;
  ea.ent = pb.ent;
  ea.n_ent = pb.counts;
  ea.slots = slots;
  ea.b = b;
  ea.directed = directed;
  ea.vert = c->vert;
  ea.n_old = n_old;
  ea.soff = c->cur.off;
  ea.snbr = c->cur.nbr;
  ea.sarc = c->cur.arc;
  ea.goff = st->csr.off;
  ea.gdeg = st->csr.deg;
  ea.gnbr = st->csr.nbr;
  ea.graph_directed = g->directed != 0;
  ea.oldf = pb.oldf, ea.newf = pb.newf, ea.pos = pb.pos, ea.flags = pb.flags;
  k_entry_state<<<grid_for((size_t)slots * 32, 256), 256, 0, st->stream>>>(ea);
  TRY(cudaGetLastError(), "cycle snapshot: entries");
  if ((rc = entries_out(st, c, pb, directed, b, 1)) != DYNG_OK) return rc;
  int counts[6];
  TRY(cudaMemcpyAsync(counts, pb.counts, sizeof counts, cudaMemcpyDeviceToHost, st->stream), "cycle snapshot");
  TRY(cudaStreamSynchronize(st->stream), "cycle snapshot");
  if (counts[5]) return DYNG_EINVAL; /* records that do not fit the graph */
  /* The slots past the unique entries hold nothing (no flags; NO_KEY among
  ** the changed edges and the overlay): later steps stop before them. */
  c->n_slots = (uint32_t)counts[0];
  const uint32_t ni = (uint32_t)counts[1], ng = (uint32_t)counts[2];
  const size_t n_new = (size_t)c->n_ent - ng + ni;
  if (n_new > 0x7fffffffu) return DYNG_ETOOBIG;
  const double t1 = dev_now_ms();

  /* The merge. */
  TRY(arrays_reserve(c, &c->spare, n_new, n), "cycle snapshot");
  if (c->n_ent) {
    const unsigned grid = grid_for(((size_t)c->n_ent + KEEP_TILE - 1) / KEEP_TILE * 256, 256);
    k_patch_keep<<<grid, 256, 0, st->stream>>>(c->cur.off, n_old, c->cur.nbr, c->cur.arc, c->n_ent, pb.gones, ng,
                                               pb.pks, ni, c->spare.nbr, c->spare.arc);
    TRY(cudaGetLastError(), "cycle snapshot: keep");
  }
  if (ni) {
    k_patch_add<<<grid_for(ni, 256), 256, 0, st->stream>>>(c->cur.off, n_old, c->cur.nbr, c->n_ent, pb.gones, ng,
                                                             pb.pks, pb.pfs, ni, c->spare.nbr, c->spare.arc);
    TRY(cudaGetLastError(), "cycle snapshot: add");
  }
  k_patch_starts<<<grid_for((size_t)n + 1, 256), 256, 0, st->stream>>>(c->cur.off, n_old, c->n_ent, n, pb.gones, ng,
                                                                        pb.pks, ni, c->spare.off);
  TRY(cudaGetLastError(), "cycle snapshot: starts");
  std::swap(c->cur, c->spare);
  c->n = n;
  c->n_ent = (uint32_t)n_new;
  c->behind = 0;
  c->pairs_ready = 1;
  if (dev_profile_on())
    fprintf(stderr, "dyng cuda: cycle snapshot patched with %zu records: entries %.3f ms, merge %.3f ms\n", m,
            t1 - t0, profile_step(st) - t1);
  return DYNG_OK;
}

/* The snapshot of the graph as it is now: the kept one, patched when it is
** one batch behind (the batch `changes`, as graph_update had it), else
** built anew. */
static int snap_current(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes,
                        int directed) {
  if (!dev_cycles_rebuild_on() && c->valid && c->behind && changes && changes == c->batch_seen &&
      changes->n_removed == c->batch_removed && changes->n_added == c->batch_added) {
    int rc = snap_patch(st, c, view, directed);
    if (rc == DYNG_OK || rc == DYNG_EINVAL) return rc;
    st->err[0] = 0; /* built anew below */
  }
  return snap_build(st, c, view);
}

/* The device's multiprocessors. */
static cudaError_t sm_count(int *sms) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
  if (*sms < 1) *sms = 1;
  return e;
}

/* Reads the counters back (after the stream's work so far). */
static int read_counters(DevState *st, DevCycles *c, unsigned long long *h) {
  TRY(cudaMemcpyAsync(h, c->ctr, C_WORDS * sizeof *h, cudaMemcpyDeviceToHost, st->stream), "cycle count");
  TRY(cudaStreamSynchronize(st->stream), "cycle count");
  return DYNG_OK;
}

/* Runs launch(lo, hi) over [0, total) in ranges sized for about TARGET_MS
** each, asking `cancel` between them; the progress shown is shown_before +
** lo of shown_total (default: lo of total).  The last launch is not waited
** for: the caller's read_counters does. */
template <typename Launch>
static int run_ranges(DevState *st, const dyng_cancel *cancel, uint32_t total, uint32_t first, Launch launch,
                      uint64_t shown_before = 0, uint64_t shown_total = 0) {
  uint64_t chunk = first ? first : 1;
  for (uint32_t lo = 0; lo < total;) {
    if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
    uint32_t hi = (uint32_t)std::min<uint64_t>(total, lo + chunk);
    double t0 = dev_now_ms();
    launch(lo, hi);
    TRY(cudaGetLastError(), "cycle count: launch");
    if (hi < total) TRY(cudaStreamSynchronize(st->stream), "cycle count");
    double ms = dev_now_ms() - t0;
    if (ms < TARGET_MS / 2 && chunk < (1u << 30)) chunk *= 2;
    else if (ms > TARGET_MS * 2 && chunk > 1) chunk /= 2;
    lo = hi;
    report_progress(cancel, shown_before + lo, shown_total ? shown_total : total);
  }
  return DYNG_OK;
}

/* Runs walkers over a.n_tasks tasks to the end, in launches of a budget of
** steps sized for about TARGET_MS each, asking `cancel` between them.  The
** two sums are left in h[C_SUM0] and h[C_SUM1]. */
static int run_walkers(DevState *st, DevCycles *c, WalkArgs a, const dyng_cancel *cancel, unsigned long long *h) {
  int sms = 0;
  TRY(sm_count(&sms), "cycle count");
  uint64_t want = (uint64_t)sms * 1024;
  uint64_t tasks = ((uint64_t)a.n_tasks + 127) / 128 * 128;
  uint32_t n_walkers = (uint32_t)std::max<uint64_t>(128, std::min(want, tasks));
  size_t cap = (size_t)c->cap_walkers * sizeof(Walker);
  TRY(cyc_reserve(c, (void **)&c->walkers, &cap, (size_t)n_walkers * sizeof(Walker)), "cycle count: walkers");
  c->cap_walkers = (uint32_t)(cap / sizeof(Walker));
  TRY(cudaMemsetAsync(c->walkers, 0xff, (size_t)n_walkers * sizeof(Walker), st->stream), "cycle count");
  TRY(cudaMemsetAsync(c->ctr, 0, C_WORDS * sizeof(unsigned long long), st->stream), "cycle count");
  a.w = c->walkers;
  a.ctr = c->ctr;
  uint32_t budget = 64;
  for (;;) {
    if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
    TRY(cudaMemsetAsync(c->ctr + C_ACTIVE, 0, sizeof(unsigned long long), st->stream), "cycle count");
    double t0 = dev_now_ms();
    k_walk<<<n_walkers / 128, 128, 0, st->stream>>>(a, budget);
    TRY(cudaGetLastError(), "cycle count: walk");
    int rc = read_counters(st, c, h);
    if (rc) return rc;
    double ms = dev_now_ms() - t0;
    if (ms < TARGET_MS / 2 && budget < (1u << 24)) budget *= 2;
    else if (ms > TARGET_MS * 2 && budget > 8) budget /= 2;
    report_progress(cancel, std::min<uint64_t>(h[C_NEXT], a.n_tasks), a.n_tasks);
    if (h[C_WRAP]) return DYNG_ETOOBIG;
    if (!h[C_ACTIVE] && h[C_NEXT] >= a.n_tasks) return DYNG_OK;
  }
}

/* The state's DevCycles, made on first use, with its counters. */
static int cycles_of(DevState *st, DevCycles **out) {
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

static WalkArgs walk_args(const DevCycles *c, int k, int directed) {
  WalkArgs a;
  memset(&a, 0, sizeof a);
  a.off = c->cur.off;
  a.nbr = c->cur.nbr;
  a.arc = c->cur.arc;
  a.n = c->n;
  a.k = k;
  a.directed = directed;
  return a;
}

static int count_on_device(DevState *st, const dyng_graph_view *view, int k, int directed, uint64_t *count) {
  if (k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K) return DYNG_EINVAL;
  if (st->csr.n != view->n_vertices) return DYNG_EINVAL;
  const dyng_cancel *cancel = view->cancel;
  DevCycles *c = NULL;
  const double t0 = dev_now_ms();
  const int built = !(st->cycles && st->cycles->valid && !st->cycles->behind);
  int rc = cycles_of(st, &c);
  if (rc == DYNG_OK) rc = snap_build(st, c, view);
  if (rc == DYNG_OK && dev_profile_on()) rc = dev_fail(cudaStreamSynchronize(st->stream), "cycle snapshot", st->err,
                                                       sizeof st->err);
  if (rc) return rc;
  const double t1 = dev_now_ms();
  if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  if (!c->n_ent) {
    *count = 0;
    return DYNG_OK;
  }
  unsigned long long h[C_WORDS];
  TRY(cudaMemsetAsync(c->ctr, 0, C_WORDS * sizeof(unsigned long long), st->stream), "cycle count");
  const uint32_t n = c->n;
  /* A small snapshot's count takes one launch. */
  const bool n_ent_small = c->n_ent <= (1u << 20);
  if (k == 3) {
    rc = run_ranges(st, cancel, c->n_ent, n_ent_small ? c->n_ent : 1u << 18, [&](uint32_t lo, uint32_t hi) {
      k_triangles<<<grid_for(((size_t)hi - lo) * 32, 256), 256, 0, st->stream>>>(c->cur.off, c->cur.nbr, c->cur.arc, n,
                                                                                   lo, hi, directed, c->ctr);
    });
  } else if (k == 4) {
    /* Counters for as many roots as 256 MiB holds (at least one); a
    ** small graph's other roots keep theirs in shared memory. */
    const size_t per_block = (size_t)n * (directed ? 2 : 1);
    size_t blocks = ((size_t)256 << 20) / (per_block * 4);
    blocks = std::max<size_t>(1, std::min<size_t>(blocks, 1024));
    const bool in_shared = per_block * 4 <= QUAD_SHARED;
    /* The hubs (lists of HUB_LIST entries or more) hold most of the wedges:
    ** a block each would leave the first blocks running long after the
    ** others, so all blocks share each group of hub roots.  (A patched
    ** snapshot's labels no longer follow the degrees exactly: the split
    ** is then only less even, never wrong.)  Each phase of a group is one
    ** launch; the stop request is asked between groups. */
    uint32_t hubs = c->hubs;
    int sms = 0;
    TRY(sm_count(&sms), "cycle count");
    if (!c->hubs_known) {
      /* C_NEXT, unused by this count, brings the number of hubs back. */
      TRY(cudaMemsetAsync(c->ctr + C_NEXT, 0, sizeof(unsigned long long), st->stream), "cycle count");
      k_first_shorter<<<1, 32, 0, st->stream>>>(c->cur.off, n, HUB_LIST, (uint32_t *)(c->ctr + C_NEXT));
      TRY(cudaGetLastError(), "cycle count: hubs");
      TRY(cudaMemcpyAsync(&hubs, c->ctr + C_NEXT, sizeof hubs, cudaMemcpyDeviceToHost, st->stream), "cycle count");
      TRY(cudaStreamSynchronize(st->stream), "cycle count");
      c->hubs = hubs;
      c->hubs_known = 1;
    }
    const size_t rows = in_shared ? std::min<size_t>(blocks, hubs) : blocks;
    if (rows) {
      size_t cap = c->cap_scratch * 4;
      TRY(cyc_reserve(c, (void **)&c->scratch, &cap, rows * per_block * 4), "cycle count: counters");
      c->cap_scratch = cap / 4;
      TRY(cudaMemsetAsync(c->scratch, 0, rows * per_block * 4, st->stream), "cycle count");
    }
    for (uint32_t r0 = 0; r0 < hubs && rc == DYNG_OK; r0 += (uint32_t)blocks) {
      if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
      const uint32_t r1 = (uint32_t)std::min<size_t>(hubs, r0 + blocks);
      for (int phase = 0; phase < (directed ? 3 : 2); phase++) {
        k_quads_hubs<<<grid_for((size_t)sms * 2048, 256), 256, 0, st->stream>>>(
            c->cur.off, c->cur.nbr, c->cur.arc, n, r0, r1, directed, phase, c->scratch, c->ctr);
        TRY(cudaGetLastError(), "cycle count: hubs");
      }
      /* (A small graph's other roots follow in one launch, without a wait
      ** between: read_counters waits for both.) */
      if (r1 < hubs || !n_ent_small) TRY(cudaStreamSynchronize(st->stream), "cycle count");
      report_progress(cancel, r1, n);
    }
    rc = run_ranges(st, cancel, n - hubs, n_ent_small ? n - hubs : 256, [&](uint32_t lo, uint32_t hi) {
      unsigned grid = (unsigned)std::min<size_t>(blocks, (size_t)hi - lo);
      k_quads<<<grid, 256, in_shared ? per_block * 4 : 0, st->stream>>>(
          c->cur.off, c->cur.nbr, c->cur.arc, n, hubs + lo, hubs + hi, directed, in_shared, c->scratch, c->ctr);
    }, hubs, n);
  } else {
    WalkArgs a = walk_args(c, k, directed);
    a.n_tasks = c->n_ent;
    rc = run_walkers(st, c, a, cancel, h);
    if (rc == DYNG_OK) {
      *count = h[C_SUM0];
      return DYNG_OK;
    }
    return rc;
  }
  if (rc) return rc;
  if ((rc = read_counters(st, c, h)) != DYNG_OK) return rc;
  if (h[C_WRAP]) return DYNG_ETOOBIG;
  *count = h[C_SUM0] - h[C_SUM1]; /* C_SUM1: only the directed 4-cycles' pairs with v = x */
  if (dev_profile_on())
    fprintf(stderr, "dyng cuda: %d-cycles%s count: snapshot %s %.3f ms, count %.3f ms\n", k,
            directed ? " (directed)" : "", built ? "built" : "kept", t1 - t0, dev_now_ms() - t1);
  return DYNG_OK;
}

int dev_cycles_count(void *state, const dyng_graph_view *view, int k, int directed, uint64_t *count) {
  DevState *st = (DevState *)state;
  try {
    return count_on_device(st, view, k, directed != 0, count);
  } catch (const std::bad_alloc &) {
    return DYNG_ENOMEM;
  } catch (...) {
    snprintf(st->err, sizeof st->err, "counting cycles: unexpected C++ exception");
    return DYNG_EBACKEND;
  }
}

/* ---- per batch: the changed edges, found on the host ----------------------- */

/* One copy of a simple edge a batch removed or added. */
struct Touch {
  uint64_t key;
  int added;
  bool operator<(const Touch &o) const { return key < o.key; }
};

/* A changed simple edge (status S_REMOVED or S_ADDED), its key in vertex
** indices (undirected: min << 32 | max; directed: src << 32 | dst). */
struct Changed {
  uint64_t key;
  uint32_t status;
};

static uint64_t copies_in(const dyng_adj_view *a, uint32_t x, uint32_t y) {
  uint64_t n = 0;
  for (uint32_t p = a->off[x], e = a->off[x] + a->deg[x]; p < e; p++) n += a->nbr[p] == y;
  return n;
}

/* Copies of the simple edge a - b (directed: arc a -> b) in the new graph,
** as engine/cycles.c counts them. */
static uint64_t new_copies(const dyng_graph_view *g, int directed, uint32_t a, uint32_t b) {
  if (!g->directed) return g->out.deg[b] < g->out.deg[a] ? copies_in(&g->out, b, a) : copies_in(&g->out, a, b);
  if (directed) return g->in.deg[b] < g->out.deg[a] ? copies_in(&g->in, b, a) : copies_in(&g->out, a, b);
  if ((uint64_t)g->out.deg[b] + g->in.deg[b] < (uint64_t)g->out.deg[a] + g->in.deg[a]) std::swap(a, b);
  return copies_in(&g->out, a, b) + copies_in(&g->in, a, b);
}

/* The changed simple edges of the batch, in increasing key order (their
** ranks).  DYNG_EINVAL for records that do not fit the graph. */
static int find_changed(const dyng_graph_view *g, const dyng_changes *ch, int directed, std::vector<Changed> &out) {
  std::vector<Touch> t;
  t.reserve(2 * (ch->n_removed + ch->n_added));
  for (size_t i = 0; i < ch->n_removed + ch->n_added; i++) {
    const int added = i >= ch->n_removed;
    const dyng_edge_change *r = added ? &ch->added[i - ch->n_removed] : &ch->removed[i];
    if (r->src >= g->n_vertices || r->dst >= g->n_vertices) return DYNG_EINVAL;
    uint32_t a = r->src, b = r->dst;
    if (a == b) continue;
    if (!directed && a > b) std::swap(a, b);
    t.push_back(Touch{(uint64_t)a << 32 | b, added});
    if (directed && !g->directed) t.push_back(Touch{(uint64_t)b << 32 | a, added});
  }
  std::sort(t.begin(), t.end());
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    int64_t removed = 0, added = 0;
    for (; j < t.size() && t[j].key == t[i].key; j++) (t[j].added ? added : removed)++;
    const uint32_t a = (uint32_t)(t[i].key >> 32), b = (uint32_t)t[i].key;
    const int64_t now = (int64_t)new_copies(g, directed, a, b), before = now + removed - added;
    if (before < 0) return DYNG_EINVAL; /* more added than the graph has */
    if (before && !now) out.push_back(Changed{t[i].key, S_REMOVED});
    else if (!before && now) out.push_back(Changed{t[i].key, S_ADDED});
    i = j;
  }
  return DYNG_OK;
}

/* Labels and snapshot degrees of the vertices v[0 .. m). */
__global__ void k_gather(const uint32_t *label, const uint32_t *off, const uint32_t *v, uint32_t m, uint32_t *out) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m; i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t l = label[v[i]];
    out[2 * i] = l;
    out[2 * i + 1] = off[l + 1] - off[l];
  }
}

/* Byte offsets of the batch's arrays in one device buffer. */
struct BatchLayout {
  size_t ckey, okey, crank, tstart, tend, trank, cstatus, tphase, oarc, total;
  BatchLayout(size_t nc, size_t no) {
    size_t at = 0;
    ckey = at, at += 8 * nc;
    okey = at, at += 8 * no;
    crank = at, at += 4 * nc;
    tstart = at, at += 4 * nc;
    tend = at, at += 4 * nc;
    trank = at, at += 4 * nc;
    cstatus = at, at += nc;
    tphase = at, at += nc;
    oarc = at, at += no;
    total = at ? at : 1;
  }
};

/* Clears the marks of the changed edges' ends (c->touched, by label). */
static int touched_clear(DevState *st, DevCycles *c) {
  if (c->cap_touched < c->n) {
    size_t tcap = c->cap_touched;
    void *p = c->touched;
    cudaError_t e = cyc_reserve(c, &p, &tcap, (size_t)c->n + c->n / 16 + 1024);
    c->touched = (uint8_t *)p; /* NULL, with cap 0, when it failed */
    c->cap_touched = tcap;
    TRY(e, "cycle update");
  }
  TRY(cudaMemsetAsync(c->touched, 0, c->n, st->stream), "cycle update");
  return DYNG_OK;
}

/* The changed edges of the batch `changes` in one mode, found on the host
** from the records and the graph after the batch (view), into the
** searches' arguments *pa; *pnc = 0 when none changed.  buf keeps the host
** copy of what went to the device. */
static int changed_on_host(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes,
                           int directed, WalkArgs *pa, uint32_t *pnc, std::vector<uint8_t> &buf) {
  *pnc = 0;
  std::vector<Changed> chg;
  int rc = find_changed(view, changes, directed, chg);
  if (rc) return rc;
  if (chg.empty()) return DYNG_OK;
  if (chg.size() > 0x7fffffffu) return DYNG_ETOOBIG;
  const uint32_t nc = (uint32_t)chg.size();

  /* The endpoints' labels and degrees. */
  std::vector<uint32_t> ends(2 * (size_t)nc), info(4 * (size_t)nc);
  for (uint32_t i = 0; i < nc; i++) {
    ends[2 * i] = (uint32_t)(chg[i].key >> 32);
    ends[2 * i + 1] = (uint32_t)chg[i].key;
  }
  size_t cap = c->cap_batch;
  TRY(cyc_reserve(c, &c->batch, &cap, std::max<size_t>(BatchLayout(nc, 2 * (size_t)nc).total, 24 * (size_t)nc)),
      "cycle update");
  c->cap_batch = cap;
  uint32_t *d_ends = (uint32_t *)c->batch, *d_info = d_ends + 2 * (size_t)nc;
  TRY(cudaMemcpyAsync(d_ends, ends.data(), 8 * (size_t)nc, cudaMemcpyHostToDevice, st->stream), "cycle update");
  k_gather<<<grid_for(2 * (size_t)nc, 256), 256, 0, st->stream>>>(c->label, c->cur.off, d_ends, 2 * nc, d_info);
  TRY(cudaGetLastError(), "cycle update: labels");
  TRY(cudaMemcpyAsync(info.data(), d_info, 16 * (size_t)nc, cudaMemcpyDeviceToHost, st->stream), "cycle update");
  TRY(cudaStreamSynchronize(st->stream), "cycle update");

  /* Keys in labels, the overlay of the removed edges, the tasks. */
  std::vector<std::pair<uint64_t, uint32_t>> ck(nc);  /* label key, rank */
  std::vector<std::pair<uint64_t, uint8_t>> ov;       /* overlay entry, arcs */
  std::vector<uint32_t> tstart(nc), tend(nc), trank(nc);
  std::vector<uint8_t> tphase(nc);
  for (uint32_t i = 0; i < nc; i++) {
    const uint64_t la = info[4 * i], da = info[4 * i + 1], lb = info[4 * i + 2], db = info[4 * i + 3];
    ck[i] = {directed || la < lb ? la << 32 | lb : lb << 32 | la, i};
    trank[i] = i;
    tphase[i] = (uint8_t)chg[i].status;
    if (directed) {
      /* Arc a -> b: paths b -> ... -> a along the arcs. */
      tstart[i] = (uint32_t)lb;
      tend[i] = (uint32_t)la;
    } else {
      tstart[i] = (uint32_t)(da <= db ? la : lb);
      tend[i] = (uint32_t)(da <= db ? lb : la);
    }
    if (chg[i].status != S_REMOVED) continue;
    ov.push_back({la << 32 | lb, (uint8_t)(directed ? ARC_OUT : ARC_OUT | ARC_IN)});
    ov.push_back({lb << 32 | la, (uint8_t)(directed ? ARC_IN : ARC_OUT | ARC_IN)});
  }
  std::sort(ck.begin(), ck.end());
  std::sort(ov.begin(), ov.end());
  size_t no = 0;
  for (size_t i = 0; i < ov.size(); i++) {
    if (no && ov[no - 1].first == ov[i].first) ov[no - 1].second |= ov[i].second;
    else ov[no++] = ov[i];
  }
  BatchLayout L(nc, no);
  buf.resize(L.total);
  uint8_t *hb = buf.data();
  for (uint32_t i = 0; i < nc; i++) {
    ((uint64_t *)(hb + L.ckey))[i] = ck[i].first;
    ((uint32_t *)(hb + L.crank))[i] = ck[i].second;
    hb[L.cstatus + i] = (uint8_t)chg[ck[i].second].status;
  }
  for (size_t i = 0; i < no; i++) {
    ((uint64_t *)(hb + L.okey))[i] = ov[i].first;
    hb[L.oarc + i] = ov[i].second;
  }
  memcpy(hb + L.tstart, tstart.data(), 4 * (size_t)nc);
  memcpy(hb + L.tend, tend.data(), 4 * (size_t)nc);
  memcpy(hb + L.trank, trank.data(), 4 * (size_t)nc);
  memcpy(hb + L.tphase, tphase.data(), nc);
  TRY(cudaMemcpyAsync(c->batch, hb, L.total, cudaMemcpyHostToDevice, st->stream), "cycle update");
  const uint8_t *db = (const uint8_t *)c->batch;

  c->tasks_mode = -1; /* touched is this search's */
  if ((rc = touched_clear(st, c)) != DYNG_OK) return rc;
  k_touch<<<grid_for(nc, 256), 256, 0, st->stream>>>((const uint32_t *)(db + L.tstart), (const uint32_t *)(db + L.tend),
                                                      nc, c->touched);
  TRY(cudaGetLastError(), "cycle update: ends");
  WalkArgs &a = *pa;
  a.ckey = (const unsigned long long *)(db + L.ckey);
  a.crank = (const uint32_t *)(db + L.crank);
  a.cstatus = db + L.cstatus;
  a.n_chg = nc;
  a.okey = (const unsigned long long *)(db + L.okey);
  a.oarc = db + L.oarc;
  a.n_ovl = (uint32_t)no;
  a.t_start = (const uint32_t *)(db + L.tstart);
  a.t_end = (const uint32_t *)(db + L.tend);
  a.t_rank = (const uint32_t *)(db + L.trank);
  a.t_phase = db + L.tphase;
  a.touched = c->touched;
  *pnc = nc;
  return DYNG_OK;
}

/* The same from the entries the snapshot's patch left in c->pbuf, on the
** device: the changed edges sorted by their keys in labels, which are
** their ranks.  What the patch or an earlier kept count of the same mode
** left in pbuf is used again.  *pnc: the slots of changed edges (the real
** ones and NO_KEY after them). */
static int changed_on_device(DevState *st, DevCycles *c, int directed, WalkArgs *pa, uint32_t *pnc) {
  *pnc = 0;
  const uint32_t slots = c->n_slots;
  if (!slots) return DYNG_OK;
  int rc;
  PatchBufs pb = patch_layout((char *)c->pbuf, c->pbuf_m, c->pbuf_cub);
  if (c->chg_mode != directed && (rc = changed_select(st, c, directed)) != DYNG_OK) return rc;
  /* Without waiting for their numbers: the slots of changed edges and of
  ** the overlay hold NO_KEY past the real ones, which searches skip, and
  ** so do the tasks (k_tasks). */
  const uint32_t nc = slots, no = slots;
  if (c->tasks_mode != directed) {
    if ((rc = touched_clear(st, c)) != DYNG_OK) return rc;
    k_tasks<<<grid_for(nc, 256), 256, 0, st->stream>>>(pb.ck, pb.cs, nc, c->cur.off, directed, pb.crank, pb.ts,
                                                        pb.te, pb.tr, pb.tp, c->touched);
    TRY(cudaGetLastError(), "cycle update: tasks");
    c->tasks_mode = directed;
  }
  WalkArgs &a = *pa;
  a.ckey = pb.ck;
  a.crank = pb.crank;
  a.cstatus = pb.cs;
  a.n_chg = nc;
  a.okey = pb.ok;
  a.oarc = pb.oa;
  a.n_ovl = no;
  a.t_start = pb.ts;
  a.t_end = pb.te;
  a.t_rank = pb.tr;
  a.t_phase = pb.tp;
  a.touched = c->touched;
  *pnc = nc;
  return DYNG_OK;
}

/* The pieces of the nc changed edges' lists, summed (see k_delta3), in
** c->pieces. */
static int pieces_of(DevState *st, DevCycles *c, const WalkArgs &a, uint32_t nc, unsigned long long **out) {
  size_t scan = 0;
  unsigned long long *u = NULL;
  TRY(cub::DeviceScan::InclusiveSum(NULL, scan, u, u, (int)nc, st->stream), "cub");
  const size_t at = ((size_t)nc * 8 + 255) / 256 * 256;
  size_t cap = c->cap_pieces;
  TRY(cyc_reserve(c, &c->pieces, &cap, 2 * at + scan), "cycle update");
  c->cap_pieces = cap;
  unsigned long long *cnt = (unsigned long long *)c->pieces, *sum = (unsigned long long *)((char *)c->pieces + at);
  k_pieces<<<grid_for(nc, 256), 256, 0, st->stream>>>(a, nc, cnt);
  TRY(cudaGetLastError(), "cycle update: pieces");
  TRY(cub::DeviceScan::InclusiveSum((char *)c->pieces + 2 * at, scan, cnt, sum, (int)nc, st->stream), "scan");
  *out = sum;
  return DYNG_OK;
}

static int delta_on_device(DevState *st, const dyng_graph_view *view, const dyng_changes *changes, int k,
                           int directed, dyng_cycles_diff *delta) {
  if (k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K) return DYNG_EINVAL;
  if (view->directed && !view->in.nbr) return DYNG_ESTATE;
  if (st->csr.n != view->n_vertices) return DYNG_EINVAL;
  const dyng_cancel *cancel = view->cancel;
  delta->lost = delta->gained = 0;
  DevCycles *c = NULL;
  int rc;
  const double t0 = dev_now_ms();
  const int patched = st->cycles && st->cycles->valid && st->cycles->behind;
  if ((rc = cycles_of(st, &c)) != DYNG_OK || (rc = snap_current(st, c, view, changes, directed)) != DYNG_OK) return rc;
  if (dev_stop_asked(cancel)) return DYNG_EINTERRUPTED;
  if (dev_profile_on()) TRY(cudaStreamSynchronize(st->stream), "cycle update");
  const double t1 = dev_now_ms();
  WalkArgs a = walk_args(c, k, directed);
  a.delta = 1;
  uint32_t nc = 0;
  std::vector<uint8_t> buf;
  const int on_device = c->pairs_ready;
  rc = on_device ? changed_on_device(st, c, directed, &a, &nc)
                 : changed_on_host(st, c, view, changes, directed, &a, &nc, buf);
  if (rc || !nc) return rc;
  /* (The profile waits for each step; the update itself does not.) */
  uint32_t n_real = nc;
  if (dev_profile_on() && on_device) {
    int counts[1] = {0};
    PatchBufs pb = patch_layout((char *)c->pbuf, c->pbuf_m, c->pbuf_cub);
    TRY(cudaMemcpyAsync(counts, pb.counts + 3, sizeof counts, cudaMemcpyDeviceToHost, st->stream), "cycle update");
    TRY(cudaStreamSynchronize(st->stream), "cycle update");
    n_real = (uint32_t)counts[0];
  }
  const double t2 = dev_now_ms();
  a.n_tasks = nc;
  unsigned long long h[C_WORDS];
  if (k <= 4) {
    /* Pieces of lists (triangles) or a block per changed edge (4-cycles). */
    a.ctr = c->ctr;
    TRY(cudaMemsetAsync(c->ctr, 0, C_WORDS * sizeof(unsigned long long), st->stream), "cycle update");
    unsigned long long *pieces = NULL;
    int sms = 0;
    if (k == 3 && (rc = pieces_of(st, c, a, nc, &pieces)) != DYNG_OK) return rc;
    TRY(sm_count(&sms), "cycle update");
    rc = run_ranges(st, cancel, nc, k == 3 ? 1u << 18 : 1u << 10, [&](uint32_t lo, uint32_t hi) {
      /* Pieces: a warp per changed edge, or enough to fill the device. */
      const size_t threads = std::max<size_t>(((size_t)hi - lo) * 32, (size_t)sms * 1024);
      if (k == 3) k_delta3<<<grid_for(threads, 256), 256, 0, st->stream>>>(a, lo, hi, pieces);
      else k_delta4<<<grid_for(((size_t)hi - lo) * 128, 128), 128, 0, st->stream>>>(a, lo, hi);
    });
    if (rc == DYNG_OK) rc = read_counters(st, c, h); /* synchronizes: buf may go */
    if (rc == DYNG_OK && h[C_WRAP]) rc = DYNG_ETOOBIG;
  } else {
    rc = run_walkers(st, c, a, cancel, h); /* synchronizes: buf may go */
  }
  if (rc && dev_profile_on())
    fprintf(stderr, "dyng cuda: %d-cycles%s update: %s after %.3f ms of search (%u changed edges)\n", k,
            directed ? " (directed)" : "", rc == DYNG_EINTERRUPTED ? "stopped" : "failed", dev_now_ms() - t2, n_real);
  if (rc) return rc;
  delta->lost = h[C_SUM0];
  delta->gained = h[C_SUM1];
  if (dev_profile_on())
    fprintf(stderr,
            "dyng cuda: %d-cycles%s update: snapshot %s %.3f ms, %u changed edges (%s) %.3f ms, search %.3f ms\n",
            k, directed ? " (directed)" : "", patched ? (on_device ? "patched" : "built") : "kept", t1 - t0, n_real,
            on_device ? "device" : "host", t2 - t1, dev_now_ms() - t2);
  return DYNG_OK;
}

int dev_cycles_delta(void *state, const dyng_graph_view *view, const dyng_changes *changes, int k, int directed,
                     dyng_cycles_diff *delta) {
  DevState *st = (DevState *)state;
  try {
    return delta_on_device(st, view, changes, k, directed != 0, delta);
  } catch (const std::bad_alloc &) {
    return DYNG_ENOMEM;
  } catch (...) {
    snprintf(st->err, sizeof st->err, "updating a cycle count: unexpected C++ exception");
    return DYNG_EBACKEND;
  }
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
