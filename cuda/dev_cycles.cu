/*
** cuda/dev_cycles.cu: counting simple k-cycles (3 <= k <= 10) on the
** device, from scratch and per batch: engine/backend.h's cycles_count and
** cycles_delta, serving dyng_cycle_count(graph, k[, 'directed']).  The
** counts are exactly those of engine/cycles.c (see engine/cycles.h for what
** is counted and for the rule that gives each lost or gained cycle to one
** changed edge).  This file counts; the snapshot it searches is built in
** dev_cycles_snap.cu and patched per batch in dev_cycles_patch.cu, which
** also finds the batch's changed edges (what they share: dev_cycles.cuh).
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
** are 64-bit, summed with atomics that flag a wrap: DYNG_EOVERFLOW.
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
#include <vector>

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

/* ---- walkers: k >= 5 from scratch, every k per batch ----------------------- */

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

/* ---- the host side: counting ----------------------------------------------- */

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
    if (h[C_WRAP]) return DYNG_EOVERFLOW;
    if (!h[C_ACTIVE] && h[C_NEXT] >= a.n_tasks) return DYNG_OK;
  }
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
      TRY(first_shorter(c->cur.off, n, HUB_LIST, (uint32_t *)(c->ctr + C_NEXT), st->stream), "cycle count: hubs");
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
  if (h[C_WRAP]) return DYNG_EOVERFLOW;
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
  if (dev_profile_on() && on_device && (rc = patched_changed(st, c, &n_real)) != DYNG_OK) return rc;
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
    if (rc == DYNG_OK && h[C_WRAP]) rc = DYNG_EOVERFLOW;
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
