/*
** cuda/dev_cycles.cuh: what the three files of the device's cycle counts
** share: the snapshot and its per-state memory (dev_cycles_snap.cu), its
** patch per batch and the changed edges (dev_cycles_patch.cu), and the
** counting itself (dev_cycles.cu, whose opening comment says how it all
** works).  Kernels are launched only from the file that defines them;
** the device functions and the small host helpers here are inline.
*/
#ifndef DYNG_DEV_CYCLES_CUH
#define DYNG_DEV_CYCLES_CUH

#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

#include <stdint.h>
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
static __device__ __forceinline__ uint32_t d_after(const uint32_t *nbr, uint32_t b, uint32_t e, uint32_t t) {
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    if (nbr[mid] <= t) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* Position of y in nbr[b .. e), or NONE. */
static __device__ __forceinline__ uint32_t d_find(const uint32_t *nbr, uint32_t b, uint32_t e, uint32_t y) {
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
static __device__ __forceinline__ uint32_t d_lower(const T *a, uint32_t n, typename Same<T>::type t) {
  uint32_t b = 0, e = n;
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    if (a[mid] < t) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* The vertex whose list holds position p (off[] of n + 1 starts). */
static __device__ __forceinline__ uint32_t d_owner(const uint32_t *off, uint32_t n, uint32_t p) {
  uint32_t lo = 0, hi = n - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (off[mid] <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Adds x to counter c, flagging a wrap past 2^64. */
static __device__ __forceinline__ void d_add(unsigned long long *ctr, int c, unsigned long long x) {
  if (!x) return;
  unsigned long long old = atomicAdd(&ctr[c], x);
  if (old + x < old) ctr[C_WRAP] = 1;
}

/* A warp's sum of x, added to counter c by its first lane.  Every lane of
** the warp must call it. */
static __device__ __forceinline__ void d_warp_add(unsigned long long *ctr, int c, unsigned long long x) {
  for (int o = 16; o; o >>= 1) {
    unsigned long long y = __shfl_down_sync(0xffffffffu, x, o);
    if (x + y < x) ctr[C_WRAP] = 1;
    x += y;
  }
  if ((threadIdx.x & 31) == 0) d_add(ctr, c, x);
}

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

/* The fewest bits b with n < 2^b: sort keys packed as x << b | y for
** labels or indices below n take 2b bits (cub's radix sorts then make
** fewer passes than over 64), and NO_KEY's low 2b bits (all ones) stay
** above every real key. */
static inline int key_bits(uint32_t n) {
  int b = 1;
  while (b < 32 && (n >> b) != 0) b++;
  return b;
}

/* ---- host helpers ---------------------------------------------------------- */

static inline void report_progress(const dyng_cancel *cancel, uint64_t done, uint64_t total) {
  if (cancel && cancel->progress) cancel->progress(cancel->ctx, done, total);
}

static inline unsigned grid_for(size_t items, unsigned threads) {
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
static inline double profile_step(DevState *st) {
  if (dev_profile_on()) cudaStreamSynchronize(st->stream);
  return dev_now_ms();
}

/* ---- across the files ------------------------------------------------------ */

/* dev_cycles_snap.cu: device memory of the cycle counts (from the plugin's
** stream-ordered pool where the device has one; see there), the
** snapshot's arrays and labels, the snapshot built from the device copy of
** the graph, and the state's DevCycles made on first use. */
cudaError_t cyc_alloc(DevCycles *c, void **p, size_t bytes);
void cyc_free(DevCycles *c, void *p);
cudaError_t cyc_reserve(DevCycles *c, void **p, size_t *cap, size_t bytes);
cudaError_t arrays_reserve(DevCycles *c, SnapArrays *a, size_t n_ent, size_t n);
int labels_reserve(DevState *st, DevCycles *c, size_t n_keep, size_t n);
int snap_build(DevState *st, DevCycles *c, const dyng_graph_view *view);
/* Launches the search for the first label whose list is shorter than d
** into *out (device memory), on stream s; the launch's error. */
cudaError_t first_shorter(const uint32_t *off, uint32_t n, uint32_t d, uint32_t *out, cudaStream_t s);
int cycles_of(DevState *st, DevCycles **out);

/* dev_cycles_patch.cu: the snapshot brought up to date with the graph
** (patched when it is one batch behind, else built anew), and the changed
** edges of a batch into the searches' arguments, from the patch's entries
** on the device or from the records on the host; patched_changed gives the
** number of real changed edges the last patch found (for the profile). */
int snap_current(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes, int directed);
int changed_on_host(DevState *st, DevCycles *c, const dyng_graph_view *view, const dyng_changes *changes,
                    int directed, WalkArgs *pa, uint32_t *pnc, std::vector<uint8_t> &buf);
int changed_on_device(DevState *st, DevCycles *c, int directed, WalkArgs *pa, uint32_t *pnc);
int patched_changed(DevState *st, DevCycles *c, uint32_t *n_real);

#endif /* DYNG_DEV_CYCLES_CUH */
