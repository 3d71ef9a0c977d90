/*
** cuda/dev_cycles_patch.cu: the device's cycle counts per batch, before
** the search (see cuda/dev_cycles.cu): the kept snapshot patched on the
** device with the entries the batch's records touch, and the batch's
** changed edges, found from the patch's entries on the device or, when the
** snapshot was built anew, from the records and the graph on the host.
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

/* Marks the ends of the changed edges [0, nc). */
__global__ void k_touch(const uint32_t *s, const uint32_t *e, uint32_t nc, uint8_t *touched) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nc; i += (size_t)gridDim.x * blockDim.x)
    touched[s[i]] = touched[e[i]] = 1;
}

/* ---- the host side: the patch ------------------------------------------------ */

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
  if (m == 0 || m > 0x3fffffffu) return DYNG_EGAVEUP; /* built anew */
  c->hubs_known = 0;
  /* The records as the device copy followed them. */
  const DevBatch *db = &st->csr.batch;
  if (db->n_rem != ch->n_removed || db->n_add != ch->n_added) return DYNG_EGAVEUP; /* built anew */
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
int snap_current(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes,
                        int directed) {
  if (!dev_cycles_rebuild_on() && c->valid && c->behind && changes && changes == c->batch_seen &&
      changes->n_removed == c->batch_removed && changes->n_added == c->batch_added) {
    int rc = snap_patch(st, c, view, directed);
    if (rc == DYNG_OK || rc == DYNG_EINVAL) return rc;
    st->err[0] = 0; /* built anew below */
  }
  return snap_build(st, c, view);
}

int patched_changed(DevState *st, DevCycles *c, uint32_t *n_real) {
  int counts[1] = {0};
  PatchBufs pb = patch_layout((char *)c->pbuf, c->pbuf_m, c->pbuf_cub);
  TRY(cudaMemcpyAsync(counts, pb.counts + 3, sizeof counts, cudaMemcpyDeviceToHost, st->stream), "cycle update");
  TRY(cudaStreamSynchronize(st->stream), "cycle update");
  *n_real = (uint32_t)counts[0];
  return DYNG_OK;
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
int changed_on_host(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes,
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
int changed_on_device(DevState *st, DevCycles *c, int directed, WalkArgs *pa, uint32_t *pnc) {
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
