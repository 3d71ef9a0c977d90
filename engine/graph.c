/*
** engine/graph.c: the dynamic graph (see graph.h for what it offers).
**
** Layout: edge slots (rowid, src, dst, positions of their two adjacency
** entries) and per-direction adjacency pools of slack CSR segments.  The
** out pool carries the weights (one array per objective); the in pool of a
** directed graph carries none.  Every function that changes the graph
** reserves all memory it needs before touching anything, so an edge is
** either fully in the graph or fully out of it.  The representation is in
** engine/graph_internal.h.  engine/graph_apply.c applies a batch: it calls
** this file's one-at-a-time loop (dyng__apply_loop), or for a large batch
** runs its team path on several threads.
*/
#include "engine/graph_internal.h"
#include "engine/error.h"
#include "engine/idmap.h"
#include "engine/parallel.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- batches ---------------------------------------------------------- */

dyng_batch *dyng_batch_new(int n_weights) {
  if (n_weights < 0 || n_weights > DYNG_MAX_WEIGHTS) return NULL;
  dyng_batch *b = dyng_calloc(1, sizeof *b);
  if (!b) return NULL;
  b->n_weights = n_weights;
  return b;
}

void dyng_batch_free(dyng_batch *b) {
  if (!b) return;
  dyng_free(b->ops);
  dyng_free(b->w);
  dyng_free(b->key);
  dyng_free(b->key_to);
  dyng_free(b->at);
  dyng_free(b->at_to);
  dyng_free(b->ops_spare);
  dyng_free(b);
}

size_t dyng_batch_bytes(const dyng_batch *b) {
  return sizeof *b + (b->ops_cap + b->spare_cap) * sizeof *b->ops + b->w_cap * sizeof *b->w +
         b->sort_cap * (2 * sizeof *b->key + 2 * sizeof *b->at);
}

void dyng_batch_clear(dyng_batch *b) {
  b->n_ops = 0;
  b->n_recorded = 0;
}

size_t dyng_batch_size(const dyng_batch *b) { return b->n_ops; }

static int dyng__weights_valid(const double *w, int n) {
  for (int k = 0; k < n; k++)
    if (!dyng_weight_ok(w[k])) return 0;
  return 1;
}

static int dyng__batch_record(dyng_batch *b, int64_t rowid, int64_t src,
                              int64_t dst, const double *w, int is_insert) {
  int rc = dyng_grow((void **)&b->ops, &b->ops_cap, b->n_ops + 1, sizeof *b->ops);
  if (rc) return rc;
  if (b->n_weights) {
    rc = dyng_grow((void **)&b->w, &b->w_cap, (b->n_recorded + 1) * (size_t)b->n_weights,
                   sizeof *b->w);
    if (rc) return rc;
    double *dst_w = b->w + b->n_recorded * (size_t)b->n_weights;
    for (int k = 0; k < b->n_weights; k++) dst_w[k] = is_insert ? w[k] : 0.0;
  }
  dyng__op *op = &b->ops[b->n_ops++];
  op->rowid = rowid;
  op->src = src;
  op->dst = dst;
  op->seq = b->n_recorded++;
  op->is_insert = is_insert;
  return DYNG_OK;
}

int dyng_batch_insert(dyng_batch *b, int64_t rowid, int64_t src, int64_t dst,
                      const double *w) {
  if (b->n_weights && !w) return DYNG_EINVAL;
  if (b->n_weights && !dyng__weights_valid(w, b->n_weights)) return DYNG_EWEIGHT;
  return dyng__batch_record(b, rowid, src, dst, w, 1);
}

int dyng_batch_delete(dyng_batch *b, int64_t rowid) {
  return dyng__batch_record(b, rowid, 0, 0, NULL, 0);
}

static int dyng__op_cmp(const void *pa, const void *pb) {
  const dyng__op *a = pa, *b = pb;
  if (a->rowid != b->rowid) return a->rowid < b->rowid ? -1 : 1;
  return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Batches of at least this many operations are sorted by dyng_radix_sort. */
#define DYNG__RADIX_MIN_OPS 1024

/* Sorts a batch's operations by rowid with dyng_radix_sort: operations of
** one rowid are in seq order in the array already (they are recorded in
** that order, and a normalized batch has one each), and the sort is stable.
** Its room stays with the batch for the next time.  DYNG_ENOMEM when out of
** memory (the batch is left as it was). */
static int dyng__batch_radix_sort(dyng_batch *b) {
  size_t n = b->n_ops;
  /* Room grows with realloc (what it holds then is not needed, but it is
  ** rare); sort_cap is what all four have, also after a failure. */
  if (n > b->sort_cap) {
    if (dyng_resize(&b->key, n, sizeof *b->key) || dyng_resize(&b->key_to, n, sizeof *b->key_to) ||
        dyng_resize(&b->at, n, sizeof *b->at) || dyng_resize(&b->at_to, n, sizeof *b->at_to))
      return DYNG_ENOMEM;
    b->sort_cap = n;
  }
  if (b->spare_cap < b->ops_cap) {
    if (dyng_resize(&b->ops_spare, b->ops_cap, sizeof *b->ops_spare)) return DYNG_ENOMEM;
    b->spare_cap = b->ops_cap;
  }
  /* Flipping the sign bit orders int64 keys as unsigned ones. */
  for (size_t i = 0; i < n; i++) {
    b->key[i] = (uint64_t)b->ops[i].rowid ^ (UINT64_C(1) << 63);
    b->at[i] = (uint32_t)i;
  }
  int rc = dyng_radix_sort(&b->key, &b->key_to, &b->at, &b->at_to, n, 0);
  if (rc) return rc;
  dyng__op *ops = b->ops_spare;
  for (size_t i = 0; i < n; i++) ops[i] = b->ops[b->at[i]];
  size_t cap = b->spare_cap;
  b->ops_spare = b->ops, b->spare_cap = b->ops_cap;
  b->ops = ops, b->ops_cap = cap;
  return DYNG_OK;
}

int dyng_batch_normalize(dyng_batch *b) {
  size_t n = b->n_ops, i, out = 0;
  for (i = 1; i < n; i++)
    if (dyng__op_cmp(&b->ops[i - 1], &b->ops[i]) > 0) break;
  if (i < n && (n < DYNG__RADIX_MIN_OPS || n > UINT32_MAX || dyng__batch_radix_sort(b) != DYNG_OK))
    qsort(b->ops, n, sizeof *b->ops, dyng__op_cmp);
  for (i = 0; i < n; i++) {
    if (i + 1 < n && b->ops[i + 1].rowid == b->ops[i].rowid) continue;
    b->ops[out++] = b->ops[i];
  }
  b->n_ops = out;
  return DYNG_OK;
}

/* ---- creation and bulk loading ---------------------------------------- */

int dyng_graph_new(dyng_graph **out, int n_weights, int directed) {
  *out = NULL;
  if (n_weights < 0 || n_weights > DYNG_MAX_WEIGHTS) return DYNG_EINVAL;
  dyng_graph *g = dyng_calloc(1, sizeof *g);
  if (!g) return DYNG_ENOMEM;
  g->n_weights = n_weights;
  g->n_obj = n_weights ? n_weights : 1;
  g->directed = directed ? 1 : 0;
  g->out.has_w = 1;
  g->vmap = dyng_idmap_new(0);
  g->emap = dyng_idmap_new(0);
  if (!g->vmap || !g->emap) {
    dyng_graph_free(g);
    return DYNG_ENOMEM;
  }
  *out = g;
  return DYNG_OK;
}

static void dyng__adj_free(dyng__adj *a) {
  dyng_free(a->off);
  dyng_free(a->deg);
  dyng_free(a->cap);
  dyng_free(a->nbr);
  dyng_free(a->ref);
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) dyng_free(a->w[k]);
}

void dyng_graph_free(dyng_graph *g) {
  if (!g) return;
  dyng_free(g->node_id);
  dyng_idmap_free(g->vmap);
  dyng_free(g->e_rowid);
  dyng_free(g->e_src);
  dyng_free(g->e_dst);
  dyng_free(g->e_pos[0]);
  dyng_free(g->e_pos[1]);
  dyng_free(g->free_slot);
  dyng_idmap_free(g->emap);
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) dyng_free(g->load_w[k]);
  dyng__adj_free(&g->out);
  dyng__adj_free(&g->in);
  dyng_free(g);
}

/* Makes room for `need` vertices in every per-vertex array. */
int dyng__vert_reserve(dyng_graph *g, size_t need) {
  if (need <= g->vert_cap) return DYNG_OK;
  if (need > (size_t)DYNG_MAX_INDEX) return DYNG_ETOOBIG;
  size_t cap = g->vert_cap ? g->vert_cap : 64;
  while (cap < need) cap *= 2;
  if (cap > (size_t)DYNG_MAX_INDEX + 1) cap = (size_t)DYNG_MAX_INDEX + 1;
  if (dyng_resize(&g->node_id, cap, sizeof(int64_t)) ||
      dyng_resize(&g->out.off, cap, sizeof(uint32_t)) ||
      dyng_resize(&g->out.deg, cap, sizeof(uint32_t)) ||
      dyng_resize(&g->out.cap, cap, sizeof(uint32_t)))
    return DYNG_ENOMEM;
  /* A directed graph always counts in-degrees; segments only once built. */
  if (g->directed && dyng_resize(&g->in.deg, cap, sizeof(uint32_t))) return DYNG_ENOMEM;
  if (g->in_built && (dyng_resize(&g->in.off, cap, sizeof(uint32_t)) ||
                      dyng_resize(&g->in.cap, cap, sizeof(uint32_t))))
    return DYNG_ENOMEM;
  g->vert_cap = cap;
  return DYNG_OK;
}

/* Room of each weight staging array for `slots` edge slots.  Sealing
** scatters objective k into the pool array that staging array k-1 becomes
** (its pages are already in memory), so staging arrays are sized for a whole
** pool: deg + deg/8 per vertex, at most 9/8 entry per edge end.  Pages past
** the slots cost nothing until used. */
static size_t dyng__stage_cap(const dyng_graph *g, size_t slots) {
  size_t ends = g->directed ? slots : 2 * slots;
  size_t total = ends + ends / 8; /* at most, see dyng__slack_cap */
  return total + total / 32 + 1024 + 64; /* dyng__pool_room(total), and some */
}

/* Makes room for `need` edge slots in every per-slot array. */
int dyng__slot_reserve(dyng_graph *g, size_t need) {
  if (need <= g->slot_cap) return DYNG_OK;
  if (need > (size_t)DYNG_MAX_INDEX) return DYNG_ETOOBIG;
  size_t cap = g->slot_cap ? g->slot_cap : 64;
  while (cap < need) cap *= 2;
  if (cap > (size_t)DYNG_MAX_INDEX + 1) cap = (size_t)DYNG_MAX_INDEX + 1;
  if (dyng_resize(&g->e_rowid, cap, sizeof(int64_t)) ||
      dyng_resize(&g->e_src, cap, sizeof(uint32_t)) ||
      dyng_resize(&g->e_dst, cap, sizeof(uint32_t)) ||
      dyng_resize(&g->e_pos[0], cap, sizeof(uint32_t)) ||
      dyng_resize(&g->free_slot, cap, sizeof(uint32_t)))
    return DYNG_ENOMEM;
  if (DYNG__HAS_IN_ENTRIES(g) && dyng_resize(&g->e_pos[1], cap, sizeof(uint32_t)))
    return DYNG_ENOMEM;
  if (!g->sealed) {
    size_t stage = dyng__stage_cap(g, cap);
    for (int k = 0; k < g->n_obj; k++)
      if (dyng_resize(&g->load_w[k], stage, sizeof(double))) return DYNG_ENOMEM;
    g->stage_cap = stage;
  }
  g->slot_cap = cap;
  return DYNG_OK;
}

int dyng_graph_reserve(dyng_graph *g, size_t n_edges) {
  if (g->sealed) return DYNG_ESTATE;
  int rc = dyng__slot_reserve(g, n_edges);
  if (rc) return rc;
  /* Maps sized up front avoid rehashing while loading: one rowid per edge,
  ** and a guess of one vertex per four edges for the node ids. */
  if (dyng_idmap_size(g->emap) == 0) {
    dyng_idmap *m = dyng_idmap_new(n_edges);
    if (!m) return DYNG_ENOMEM;
    dyng_idmap_free(g->emap);
    g->emap = m;
  }
  if (dyng_idmap_size(g->vmap) == 0) {
    dyng_idmap *m = dyng_idmap_new(n_edges / 4);
    if (!m) return DYNG_ENOMEM;
    dyng_idmap_free(g->vmap);
    g->vmap = m;
  }
  return DYNG_OK;
}

/* Sets up index v (inside the per-vertex arrays' room) as the vertex of
** node `id`, with no edges. */
void dyng__vertex_init(dyng_graph *g, uint32_t v, int64_t id) {
  g->node_id[v] = id;
  g->out.off[v] = g->out.deg[v] = g->out.cap[v] = 0;
  if (g->directed) g->in.deg[v] = 0;
  if (g->in_built) g->in.off[v] = g->in.cap[v] = 0;
}

/* The vertex of node `id`, created (with no edges) when new. */
static int dyng__vertex_get_or_create(dyng_graph *g, int64_t id, uint32_t *v) {
  int inserted;
  if (dyng_idmap_get(g->vmap, id, v) == DYNG_OK) return DYNG_OK;
  int rc = dyng__vert_reserve(g, (size_t)g->n_vert + 1);
  if (rc) return rc;
  rc = dyng_idmap_get_or_put(g->vmap, id, g->n_vert, v, &inserted);
  if (rc) return rc;
  dyng__vertex_init(g, g->n_vert++, id);
  return DYNG_OK;
}

int dyng_graph_load_edge(dyng_graph *g, int64_t rowid, int64_t src, int64_t dst,
                         const double *w) {
  uint32_t vs, vd, slot;
  int inserted, rc;
  if (g->sealed) return DYNG_ESTATE;
  if (g->n_weights && !w) return DYNG_EINVAL;
  if (g->n_weights && !dyng__weights_valid(w, g->n_weights)) return DYNG_EWEIGHT;
  rc = dyng__slot_reserve(g, (size_t)g->n_slots + 1);
  if (rc) return rc;
  slot = g->n_slots;
  rc = dyng_idmap_get_or_put(g->emap, rowid, slot, &slot, &inserted);
  if (rc) return rc;
  if (!inserted) return DYNG_EINVAL;
  if ((rc = dyng__vertex_get_or_create(g, src, &vs)) != 0 ||
      (rc = dyng__vertex_get_or_create(g, dst, &vd)) != 0) {
    dyng_idmap_remove(g->emap, rowid);
    return rc;
  }
  g->n_slots++;
  g->n_edges++;
  g->e_rowid[slot] = rowid;
  g->e_src[slot] = vs;
  g->e_dst[slot] = vd;
  /* + 0.0 turns -0.0 into 0.0, so that every weight's bit pattern orders
  ** like its value (the radix heap relies on it). */
  for (int k = 0; k < g->n_obj; k++) g->load_w[k][slot] = g->n_weights ? w[k] + 0.0 : 1.0;
  return DYNG_OK;
}

void dyng_graph_prefetch_load(const dyng_graph *g, int64_t rowid, int64_t src, int64_t dst) {
  dyng_idmap_prefetch(g->emap, rowid);
  dyng_idmap_prefetch(g->vmap, src);
  dyng_idmap_prefetch(g->vmap, dst);
}

/* Sizes the per-entry arrays of a pool for `size` entries: neighbours,
** refs and the first n_w weight arrays. */
static int dyng__adj_pool_resize(dyng__adj *a, int n_w, size_t size) {
  if (size > (size_t)UINT32_MAX) return DYNG_ETOOBIG;
  if (dyng_resize(&a->nbr, size, sizeof(uint32_t)) ||
      dyng_resize(&a->ref, size, sizeof(uint32_t)))
    return DYNG_ENOMEM;
  for (int k = 0; k < n_w; k++)
    if (dyng_resize(&a->w[k], size, sizeof(double))) return DYNG_ENOMEM;
  a->size = size;
  return DYNG_OK;
}

/* Room reserved for a vertex of degree d when a pool is laid out: 1/8
** more, rounded down, so small segments carry no slack at load time (their
** first insert moves them, doubling); compaction keeps at least one free
** entry per segment, which dyng__insert_edge relies on when a second
** reservation compacts the pool under the first. */
static inline uint32_t dyng__slack_cap(uint32_t d) { return d + (d >> 3); }
static inline uint32_t dyng__compact_cap(uint32_t d) { return d + (d >> 3) + 1; }

/* Entries allocated for a pool whose segments take `total`: room at the end
** for the first segments that outgrow their slack to move into, so that the
** first changes after a load do not reallocate (and copy) the whole pool. */
static inline size_t dyng__pool_room(size_t total) { return total + total / 32 + 1024; }

/* Entries a pool laid out from the degrees in a->deg needs. */
static size_t dyng__adj_layout_size(const dyng__adj *a, uint32_t n_vert) {
  size_t total = 0;
  for (uint32_t v = 0; v < n_vert; v++) total += dyng__slack_cap(a->deg[v]);
  return total;
}

/* Lays out the segments of one pool from the degrees in a->deg, resetting
** deg to 0 so that it can serve as the fill cursor.  Sizes neighbours and
** refs only; weights are the caller's. */
static int dyng__adj_layout(dyng__adj *a, uint32_t n_vert) {
  size_t total = dyng__adj_layout_size(a, n_vert);
  if (total > (size_t)UINT32_MAX) return DYNG_ETOOBIG;
  /* Allocate first: on failure the degrees are still intact. */
  int rc = dyng__adj_pool_resize(a, 0, dyng__pool_room(total));
  if (rc) return rc;
  total = 0;
  for (uint32_t v = 0; v < n_vert; v++) {
    uint32_t c = dyng__slack_cap(a->deg[v]);
    a->off[v] = (uint32_t)total;
    a->cap[v] = c;
    a->deg[v] = 0;
    total += c;
  }
  a->used = total;
  a->garbage = 0;
  a->moved = 0;
  a->layout++;
  return DYNG_OK;
}

/* The seal's passes over the edge slots cut them into ranges of at least
** this many slots, one per thread at most. */
#define DYNG__SEAL_RANGE 65536u

/* dyng__graph_set_seal_ranges' override; 0: none. */
static _Atomic uint32_t dyng__seal_ranges = 0;

void dyng__graph_set_seal_ranges(uint32_t n) { atomic_store(&dyng__seal_ranges, n); }

/* What the seal's threads share.  The slots are cut into n_ranges
** contiguous ranges; per range and vertex, cnt counts the vertex's entries
** in the range, then holds where the range's next one goes: a vertex's
** entries come from the ranges in order, and from each range in slot
** order, so the pool is the same for any number of ranges. */
typedef struct dyng__seal {
  dyng_graph *g;
  uint32_t n_ranges, per_range; /* slots per range (the last may have fewer) */
  uint32_t *cnt;                /* n_ranges arrays of n_vert */
  uint32_t *in_deg;             /* a directed graph's in-degrees; NULL */
  int placing;                  /* the range passes place (else count) */
  double *w;                    /* the objective being scattered, and */
  const double *staged;         /* its weights by slot */
  dyng_team team;
} dyng__seal;

/* Runs fn over items 0..n-1, `chunk` at a time, on the engine's threads. */
static void dyng__seal_run(dyng__seal *z, uint32_t n, uint32_t chunk, void (*fn)(void *ctx, int thread)) {
  dyng_team_init(&z->team, n, chunk, 0, NULL);
  (void)dyng_team_run(&z->team, fn, z);
}

/* Slots [*lo, *hi) of range r. */
static void dyng__seal_range(const dyng__seal *z, uint32_t r, uint32_t *lo, uint32_t *hi) {
  uint64_t a = (uint64_t)r * z->per_range, b = a + z->per_range;
  *lo = (uint32_t)a;
  *hi = b < z->g->n_slots ? (uint32_t)b : z->g->n_slots;
}

/* 1. Range [lo, hi)'s entries per vertex, into c (a directed graph's
** in-degrees are counted into in_deg, shared). */
static void dyng__seal_count(const dyng__seal *z, uint32_t *c, uint32_t lo, uint32_t hi) {
  const dyng_graph *g = z->g;
  const uint32_t ahead = DYNG_LOAD_AHEAD;
  memset(c, 0, (size_t)g->n_vert * sizeof *c);
  for (uint32_t s = lo; s < hi; s++) {
    if (s + ahead < hi) {
      __builtin_prefetch(&c[g->e_src[s + ahead]], 1);
      __builtin_prefetch(z->in_deg ? &z->in_deg[g->e_dst[s + ahead]] : &c[g->e_dst[s + ahead]], 1);
    }
    c[g->e_src[s]]++;
    if (z->in_deg) __atomic_fetch_add(&z->in_deg[g->e_dst[s]], 1u, __ATOMIC_RELAXED);
    else c[g->e_dst[s]]++;
  }
}

/* 2. Per vertex: its out-degree, the sum of its counts. */
static void dyng__seal_degrees(void *ctx, int thread) {
  dyng__seal *z = ctx;
  const dyng_graph *g = z->g;
  uint32_t v, v_end;
  (void)thread;
  while (dyng_team_take(&z->team, &v, &v_end))
    for (; v < v_end; v++) {
      uint32_t d = 0;
      for (uint32_t r = 0; r < z->n_ranges; r++) d += z->cnt[(size_t)r * g->n_vert + v];
      g->out.deg[v] = d;
    }
}

/* 3. Per vertex, once the pool is laid out: each range's first position. */
static void dyng__seal_cursors(void *ctx, int thread) {
  dyng__seal *z = ctx;
  dyng_graph *g = z->g;
  uint32_t v, v_end;
  (void)thread;
  while (dyng_team_take(&z->team, &v, &v_end))
    for (; v < v_end; v++) {
      uint32_t at = g->out.off[v];
      for (uint32_t r = 0; r < z->n_ranges; r++) {
        uint32_t *c = &z->cnt[(size_t)r * g->n_vert + v], n = *c;
        *c = at;
        at += n;
      }
      g->out.deg[v] = at - g->out.off[v];
    }
}

/* 4. Range [lo, hi)'s entries into place (neighbour, ref, the edge's
** positions), from the positions in c. */
static void dyng__seal_place(const dyng__seal *z, uint32_t *c, uint32_t lo, uint32_t hi) {
  dyng_graph *g = z->g;
  dyng__adj *out = &g->out;
  const uint32_t ahead = DYNG_LOAD_AHEAD;
  for (uint32_t s = lo; s < hi; s++) {
    if (s + ahead < hi) {
      __builtin_prefetch(&c[g->e_src[s + ahead]], 1);
      if (!g->directed) __builtin_prefetch(&c[g->e_dst[s + ahead]], 1);
    }
    uint32_t vs = g->e_src[s], vd = g->e_dst[s];
    uint32_t p = c[vs]++;
    out->nbr[p] = vd;
    out->ref[p] = s << 1;
    g->e_pos[0][s] = p;
    if (g->directed) continue;
    uint32_t q = c[vd]++;
    out->nbr[q] = vs;
    out->ref[q] = (s << 1) | 1u;
    g->e_pos[1][s] = q;
  }
}

/* Steps 1 and 4 (z->placing), a range at a time, on the engine's threads. */
static void dyng__seal_each_range(void *ctx, int thread) {
  dyng__seal *z = ctx;
  uint32_t r, r_end, lo, hi;
  (void)thread;
  while (dyng_team_take(&z->team, &r, &r_end))
    for (; r < r_end; r++) {
      uint32_t *c = z->cnt + (size_t)r * z->g->n_vert;
      dyng__seal_range(z, r, &lo, &hi);
      if (z->placing) dyng__seal_place(z, c, lo, hi);
      else dyng__seal_count(z, c, lo, hi);
    }
}

/* 5. Per slot: one objective's staged weight to its entries. */
static void dyng__seal_weights(void *ctx, int thread) {
  dyng__seal *z = ctx;
  const dyng_graph *g = z->g;
  const uint32_t ahead = DYNG_LOAD_AHEAD;
  uint32_t lo, hi;
  (void)thread;
  while (dyng_team_take(&z->team, &lo, &hi))
    for (uint32_t s = lo; s < hi; s++) {
      if (s + ahead < hi) __builtin_prefetch(&z->w[g->e_pos[0][s + ahead]], 1);
      z->w[g->e_pos[0][s]] = z->staged[s];
      if (!g->directed) z->w[g->e_pos[1][s]] = z->staged[s];
    }
}

int dyng_graph_seal(dyng_graph *g) {
  if (g->sealed) return DYNG_ESTATE;
  dyng__adj *out = &g->out;
  int rc = dyng__vert_reserve(g, g->n_vert ? g->n_vert : 1);
  if (rc) return rc;
  dyng__seal z;
  memset(&z, 0, sizeof z);
  z.g = g;
  uint32_t most = g->n_slots / DYNG__SEAL_RANGE, forced = atomic_load(&dyng__seal_ranges);
  int threads = dyng_threads_now();
  z.n_ranges = most < 1 ? 1 : most < (uint32_t)threads ? most : (uint32_t)threads;
  if (forced) z.n_ranges = forced;
  z.per_range = g->n_slots / z.n_ranges + 1;
  z.cnt = dyng_malloc((size_t)z.n_ranges * (g->n_vert ? g->n_vert : 1) * sizeof *z.cnt);
  if (!z.cnt) return DYNG_ENOMEM;
  /* Degrees; a directed graph's in entries are built on demand
  ** (dyng_graph_build_in): shortest paths from scratch need only out. */
  if (g->directed) {
    z.in_deg = g->in.deg;
    memset(g->in.deg, 0, (size_t)g->n_vert * sizeof(uint32_t));
  }
  dyng__seal_run(&z, z.n_ranges, 1, dyng__seal_each_range);
  dyng__seal_run(&z, g->n_vert, 16384, dyng__seal_degrees);
  size_t total = dyng__adj_layout_size(out, g->n_vert);
  if (dyng__pool_room(total) > (size_t)UINT32_MAX) {
    dyng_free(z.cnt);
    return DYNG_ETOOBIG;
  }
  size_t room = dyng__pool_room(total); /* the pool's size (see dyng__adj_layout) */

  /* Weight arrays of the pool: objective 0's is new; objective k's is the
  ** staging array of k - 1, whose pages are in memory already, once its
  ** weights have been scattered.  Everything that can fail is allocated
  ** before anything changes, so a failed seal can be retried. */
  int reuse = g->stage_cap >= room;
  double *fresh[DYNG_MAX_WEIGHTS] = {0};
  for (int k = 0; k < g->n_obj && rc == DYNG_OK; k++) {
    if (k > 0 && reuse && g->load_w[k - 1]) continue;
    fresh[k] = dyng_malloc(room * sizeof(double));
    if (!fresh[k]) rc = DYNG_ENOMEM;
  }
  if (rc == DYNG_OK) rc = dyng__adj_layout(out, g->n_vert);
  if (rc) {
    for (int k = 0; k < g->n_obj; k++) dyng_free(fresh[k]);
    dyng_free(z.cnt);
    return rc;
  }
  dyng__seal_run(&z, g->n_vert, 16384, dyng__seal_cursors);
  z.placing = 1;
  dyng__seal_run(&z, z.n_ranges, 1, dyng__seal_each_range);
  dyng_free(z.cnt);
  for (int k = 0; k < g->n_obj; k++) {
    double *w = fresh[k];
    if (!w) {
      w = g->load_w[k - 1];
      g->load_w[k - 1] = NULL;
    }
    z.w = w;
    z.staged = g->load_w[k];
    dyng__seal_run(&z, g->n_slots, DYNG__SEAL_RANGE, dyng__seal_weights);
    dyng_free(out->w[k]);
    out->w[k] = w;
  }
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) {
    dyng_free(g->load_w[k]);
    g->load_w[k] = NULL;
  }
  g->stage_cap = 0;
  g->sealed = 1;
  /* A vertex created by a load that then failed has no edges. */
  g->n_live = 0;
  for (uint32_t v = 0; v < g->n_vert; v++) g->n_live += dyng__live(g, v) ? 1u : 0u;
  return DYNG_OK;
}

/* ---- changes ---------------------------------------------------------- */

/* Records that the batch being applied wrote position `pos` of the out
** pool; past an allocation failure the record is marked incomplete. */
static void dyng__note_out(dyng_graph *g, size_t pos) {
  dyng_changes *c = g->recording;
  if (!c || !c->out_pos_complete) return;
  if (c->n_out_pos == c->cap_out_pos &&
      dyng_grow((void **)&c->out_pos, &c->cap_out_pos, c->n_out_pos + 1, sizeof *c->out_pos)) {
    c->out_pos_complete = 0;
    return;
  }
  c->out_pos[c->n_out_pos++] = (uint32_t)pos;
}

/* Moves the entry at `from` to `to` (both in pool a), noting the write. */
static inline void dyng__adj_move(dyng_graph *g, dyng__adj *a, size_t from, size_t to) {
  if (a == &g->out) dyng__note_out(g, to);
  dyng__entry_copy(g, a, from, to);
}

/* Makes pool a hold at least `need` entries, growing it by half at least. */
int dyng__pool_fit(dyng_graph *g, dyng__adj *a, size_t need) {
  if (need <= a->size) return DYNG_OK;
  size_t size = a->size + a->size / 2;
  if (size < need) size = need;
  return dyng__adj_pool_resize(a, a->has_w ? g->n_obj : 0, size);
}

/* Vertices per block of a compaction: a block's segments follow those of
** the blocks before it, so blocks are copied independently. */
#define DYNG__COMPACT_BLOCK 4096u

/* What a compaction's threads share. */
typedef struct dyng__compaction {
  dyng_graph *g;
  dyng__adj *a;         /* the pool, rewritten into fresh */
  const dyng__adj *fresh;
  const size_t *base;   /* per block: its first position in fresh */
  dyng_team team;
} dyng__compaction;

/* Copies the segments of the blocks a thread takes into the fresh pool,
** in vertex order, and points their entries' slots at the new positions. */
static void dyng__compact_blocks(void *ctx, int thread) {
  dyng__compaction *c = ctx;
  dyng_graph *g = c->g;
  dyng__adj *a = c->a;
  const dyng__adj *fresh = c->fresh;
  uint32_t begin, end;
  (void)thread;
  while (dyng_team_take(&c->team, &begin, &end))
    for (uint32_t b = begin; b < end; b++) {
      size_t p = c->base[b];
      uint32_t v = b * DYNG__COMPACT_BLOCK;
      uint32_t v_end = g->n_vert - v > DYNG__COMPACT_BLOCK ? v + DYNG__COMPACT_BLOCK : g->n_vert;
      for (; v < v_end; v++) {
        uint32_t d = a->deg[v], o = a->off[v];
        memcpy(fresh->nbr + p, a->nbr + o, (size_t)d * sizeof *a->nbr);
        memcpy(fresh->ref + p, a->ref + o, (size_t)d * sizeof *a->ref);
        if (a->has_w)
          for (int k = 0; k < g->n_obj; k++) memcpy(fresh->w[k] + p, a->w[k] + o, (size_t)d * sizeof *a->w[k]);
        for (uint32_t i = 0; i < d; i++) {
          uint32_t r = a->ref[o + i];
          g->e_pos[r & 1u][r >> 1] = (uint32_t)(p + i);
        }
        a->off[v] = (uint32_t)p;
        a->cap[v] = dyng__compact_cap(d);
        p += a->cap[v];
      }
    }
}

/* Rewrites a pool with its segments in vertex order and fresh slack, its
** blocks of vertices on the engine's threads.  On allocation failure the
** pool is left as it was (compaction is optional). */
void dyng__adj_compact(dyng_graph *g, dyng__adj *a) {
  dyng__adj fresh = {0};
  uint32_t n_blocks = g->n_vert / DYNG__COMPACT_BLOCK + 1;
  size_t *base = dyng_malloc((size_t)n_blocks * sizeof *base);
  size_t total = 0;
  if (!base) return;
  for (uint32_t v = 0; v < g->n_vert; v++) {
    if (v % DYNG__COMPACT_BLOCK == 0) base[v / DYNG__COMPACT_BLOCK] = total;
    total += dyng__compact_cap(a->deg[v]);
  }
  fresh.has_w = a->has_w;
  if (total > (size_t)UINT32_MAX ||
      dyng__adj_pool_resize(&fresh, a->has_w ? g->n_obj : 0, dyng__pool_room(total))) {
    dyng__adj_free(&fresh);
    dyng_free(base);
    return;
  }
  dyng__compaction c = {g, a, &fresh, base, {0}};
  dyng_team_init(&c.team, (g->n_vert + DYNG__COMPACT_BLOCK - 1) / DYNG__COMPACT_BLOCK, 1, 0, NULL);
  (void)dyng_team_run(&c.team, dyng__compact_blocks, &c); /* cannot fail */
  dyng_free(base);
  dyng_free(a->nbr);
  dyng_free(a->ref);
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) dyng_free(a->w[k]);
  a->nbr = fresh.nbr;
  a->ref = fresh.ref;
  memcpy(a->w, fresh.w, sizeof a->w);
  a->size = fresh.size;
  a->used = total;
  a->garbage = 0;
  a->moved = 0;
  a->layout++;
}

/* Ensures vertex v's segment in pool a has room for `extra` more entries,
** moving it to the end of the pool when it is full. */
static int dyng__adj_reserve(dyng_graph *g, dyng__adj *a, uint32_t v, uint32_t extra) {
  size_t need = (size_t)a->deg[v] + extra;
  if (need <= a->cap[v]) return DYNG_OK;
  size_t cap = dyng__moved_cap(a->cap[v], need);
  if (!cap) return DYNG_ETOOBIG;
  /* The last segment of the pool grows in place. */
  if ((size_t)a->off[v] + a->cap[v] == a->used && a->off[v] + cap <= a->size) {
    a->used = a->off[v] + cap;
    a->cap[v] = (uint32_t)cap;
    return DYNG_OK;
  }
  int rc = dyng__pool_fit(g, a, a->used + cap);
  if (rc) return rc;
  size_t to = a->used, from = a->off[v];
  for (uint32_t i = 0; i < a->deg[v]; i++) dyng__adj_move(g, a, from + i, to + i);
  a->garbage += a->cap[v];
  a->off[v] = (uint32_t)to;
  a->cap[v] = (uint32_t)cap;
  a->used += cap;
  a->moved++;
  /* Compaction trims every segment's slack, so v's room is checked again
  ** afterwards. */
  if (dyng__compact_due(g, a)) {
    dyng__adj_compact(g, a);
    if (a->deg[v] + (size_t)extra > a->cap[v]) return dyng__adj_reserve(g, a, v, extra);
  }
  return DYNG_OK;
}

/* Removes the entry at position p of vertex v's segment in pool a. */
static void dyng__adj_remove(dyng_graph *g, dyng__adj *a, uint32_t v, uint32_t p) {
  uint32_t last = a->off[v] + a->deg[v] - 1;
  if (p != last) dyng__adj_move(g, a, last, p);
  a->deg[v]--;
}

static void dyng__delete_slot(dyng_graph *g, uint32_t slot) {
  uint32_t vs = g->e_src[slot], vd = g->e_dst[slot];
  dyng__adj_remove(g, &g->out, vs, g->e_pos[0][slot]);
  if (DYNG__HAS_IN_ENTRIES(g)) dyng__adj_remove(g, DYNG__ADJ_IN(g), vd, g->e_pos[1][slot]);
  else g->in.deg[vd]--;
  dyng_idmap_remove(g->emap, g->e_rowid[slot]);
  g->e_src[slot] = g->e_dst[slot] = DYNG_NONE;
  g->free_slot[g->n_free++] = slot;
  g->n_edges--;
  if (!dyng__live(g, vs)) g->n_live--;
  if (vd != vs && !dyng__live(g, vd)) g->n_live--;
}

static int dyng__insert_edge(dyng_graph *g, int64_t rowid, int64_t src, int64_t dst,
                             const double *w, uint32_t *pslot) {
  uint32_t vs, vd, slot, got;
  int inserted, rc;
  dyng__adj *in = DYNG__ADJ_IN(g);
  if ((rc = dyng__vertex_get_or_create(g, src, &vs)) != 0) return rc;
  if ((rc = dyng__vertex_get_or_create(g, dst, &vd)) != 0) return rc;
  if (g->n_free) {
    slot = g->free_slot[g->n_free - 1];
  } else {
    if ((rc = dyng__slot_reserve(g, (size_t)g->n_slots + 1)) != 0) return rc;
    slot = g->n_slots;
  }
  rc = dyng_idmap_get_or_put(g->emap, rowid, slot, &got, &inserted);
  if (rc) return rc;
  if (!inserted) return DYNG_EINVAL; /* the caller deletes first */
  if (in == &g->out && vs == vd) {
    rc = dyng__adj_reserve(g, &g->out, vs, 2);
  } else {
    rc = dyng__adj_reserve(g, &g->out, vs, 1);
    if (!rc && DYNG__HAS_IN_ENTRIES(g)) rc = dyng__adj_reserve(g, in, vd, 1);
  }
  if (rc) {
    dyng_idmap_remove(g->emap, rowid);
    return rc;
  }
  /* Nothing below can fail. */
  if (g->n_free && g->free_slot[g->n_free - 1] == slot) g->n_free--;
  else g->n_slots++;
  int vs_was_live = dyng__live(g, vs), vd_was_live = dyng__live(g, vd);
  g->e_rowid[slot] = rowid;
  g->e_src[slot] = vs;
  g->e_dst[slot] = vd;
  uint32_t p = g->out.off[vs] + g->out.deg[vs]++;
  dyng__note_out(g, p);
  dyng__entry_put(g, &g->out, p, vd, slot << 1, w);
  g->e_pos[0][slot] = p;
  if (DYNG__HAS_IN_ENTRIES(g)) {
    uint32_t q = in->off[vd] + in->deg[vd]++;
    if (in == &g->out) dyng__note_out(g, q);
    dyng__entry_put(g, in, q, vs, (slot << 1) | 1u, w);
    g->e_pos[1][slot] = q;
  } else {
    in->deg[vd]++;
  }
  g->n_edges++;
  if (!vs_was_live) g->n_live++;
  if (vd != vs && !vd_was_live) g->n_live++;
  *pslot = slot;
  return DYNG_OK;
}

/* Fills a change record for the edge (slot, src, dst, rowid) whose out
** entry is at position `pos` (its weights are read there). */
void dyng__record_at(const dyng_graph *g, uint32_t slot, uint32_t src, uint32_t dst,
                     int64_t rowid, uint32_t pos, dyng_edge_change *c) {
  c->slot = slot;
  c->src = src;
  c->dst = dst;
  c->rowid = rowid;
  for (int k = 0; k < g->n_obj; k++) c->w[k] = g->out.w[k][pos];
}

/* Fills a change record for the edge in `slot`. */
static void dyng__record(const dyng_graph *g, uint32_t slot, dyng_edge_change *c) {
  dyng__record_at(g, slot, g->e_src[slot], g->e_dst[slot], g->e_rowid[slot], g->e_pos[0][slot], c);
}

void dyng_changes_free(dyng_changes *c) {
  dyng_free(c->removed);
  dyng_free(c->added);
  dyng_free(c->out_pos);
  memset(c, 0, sizeof *c);
}

void dyng__prefetch_keys(const dyng_graph *g, const dyng__op *op) {
  dyng_idmap_prefetch(g->emap, op->rowid);
  if (op->is_insert) {
    dyng_idmap_prefetch(g->vmap, op->src);
    dyng_idmap_prefetch(g->vmap, op->dst);
  }
}

static void dyng__prefetch_vertex(const dyng__adj *a, uint32_t v) {
  __builtin_prefetch(&a->off[v]);
  __builtin_prefetch(&a->deg[v]);
  __builtin_prefetch(&a->cap[v]);
}

void dyng__prefetch_places(const dyng_graph *g, const dyng__op *op) {
  uint32_t slot, v;
  if (dyng_idmap_get(g->emap, op->rowid, &slot) == DYNG_OK) {
    __builtin_prefetch(&g->e_src[slot]);
    __builtin_prefetch(&g->e_dst[slot]);
    __builtin_prefetch(&g->e_pos[0][slot]);
    if (DYNG__HAS_IN_ENTRIES(g)) __builtin_prefetch(&g->e_pos[1][slot]);
  }
  if (!op->is_insert) return;
  if (dyng_idmap_get(g->vmap, op->src, &v) == DYNG_OK) dyng__prefetch_vertex(&g->out, v);
  if (DYNG__HAS_IN_ENTRIES(g) && dyng_idmap_get(g->vmap, op->dst, &v) == DYNG_OK)
    dyng__prefetch_vertex(DYNG__ADJ_IN(g), v);
}


/* The loop of dyng_graph_apply_tracked: one operation after the other,
** each edge reserving what it needs before it changes anything. */
int dyng__apply_loop(dyng_graph *g, dyng_batch *b, dyng_apply_stats *st,
                            dyng_changes *changes) {
  int rc = DYNG_OK;
  g->recording = changes;
  for (size_t i = 0; i < b->n_ops; i++) {
    const dyng__op *op = &b->ops[i];
    uint32_t slot;
    /* The operations touch random places of a large graph: start loading
    ** what later ones will read, in stages, each stage's addresses found
    ** from what the one before brought in. */
    if (i + DYNG__PREFETCH_FAR < b->n_ops) dyng__prefetch_keys(g, &b->ops[i + DYNG__PREFETCH_FAR]);
    if (i + DYNG__PREFETCH_NEAR < b->n_ops) dyng__prefetch_places(g, &b->ops[i + DYNG__PREFETCH_NEAR]);
    if (dyng_idmap_get(g->emap, op->rowid, &slot) == DYNG_OK) {
      if (changes) dyng__record(g, slot, &changes->removed[changes->n_removed++]);
      dyng__delete_slot(g, slot);
      st->deleted++;
    } else if (!op->is_insert) {
      st->missing++;
    }
    if (op->is_insert) {
      const double *w = g->n_weights ? b->w + op->seq * (size_t)b->n_weights : NULL;
      rc = dyng__insert_edge(g, op->rowid, op->src, op->dst, w, &slot);
      if (rc) break;
      if (changes) dyng__record(g, slot, &changes->added[changes->n_added++]);
      st->inserted++;
    }
  }
  g->recording = NULL;
  return rc;
}

int dyng_graph_build_in(dyng_graph *g) {
  if (!g->sealed) return DYNG_ESTATE;
  if (DYNG__HAS_IN_ENTRIES(g)) return DYNG_OK;
  dyng__adj *a = &g->in;
  size_t vcap = g->vert_cap ? g->vert_cap : 1, scap = g->slot_cap ? g->slot_cap : 1;
  /* What only in entries need: segment starts and room per vertex, and
  ** each edge's in position.  On failure the graph stays as it was. */
  if (dyng_resize(&a->off, vcap, sizeof(uint32_t)) ||
      dyng_resize(&a->cap, vcap, sizeof(uint32_t)) ||
      dyng_resize(&g->e_pos[1], scap, sizeof(uint32_t)))
    return DYNG_ENOMEM;
  int rc = dyng__adj_layout(a, g->n_vert);
  if (rc) return rc;
  for (uint32_t s = 0; s < g->n_slots; s++) {
    uint32_t vs = g->e_src[s], vd = g->e_dst[s];
    if (vs == DYNG_NONE) continue;
    uint32_t q = a->off[vd] + a->deg[vd]++;
    a->nbr[q] = vs;
    a->ref[q] = (s << 1) | 1u;
    g->e_pos[1][s] = q;
  }
  g->in_built = 1;
  return DYNG_OK;
}

/* ---- queries ---------------------------------------------------------- */

static void dyng__adj_view(const dyng__adj *a, int n_obj, dyng_adj_view *v) {
  v->off = a->off;
  v->deg = a->deg;
  v->nbr = a->nbr;
  v->ref = a->ref;
  for (int k = 0; k < DYNG_MAX_WEIGHTS; k++) v->w[k] = (a->has_w && k < n_obj) ? a->w[k] : NULL;
  v->n_entries = a->used;
  v->layout = a->layout;
}

void dyng_graph_get_view(const dyng_graph *g, dyng_graph_view *view) {
  memset(view, 0, sizeof *view);
  view->n_vertices = g->n_vert;
  view->n_edge_slots = g->n_slots;
  view->n_objectives = g->n_obj;
  view->directed = g->directed;
  dyng__adj_view(&g->out, g->n_obj, &view->out);
  dyng__adj_view(DYNG__ADJ_IN(g), g->n_obj, &view->in);
  if (!DYNG__HAS_IN_ENTRIES(g)) view->in.off = view->in.nbr = view->in.ref = NULL;
  view->node_id = g->node_id;
  view->edge_rowid = g->e_rowid;
  view->edge_src = g->e_src;
  view->edge_dst = g->e_dst;
  view->edge_pos_out = g->e_pos[0];
  view->edge_pos_in = DYNG__HAS_IN_ENTRIES(g) ? g->e_pos[1] : NULL;
}

int dyng_graph_directed(const dyng_graph *g) { return g->directed; }
int dyng_graph_n_weights(const dyng_graph *g) { return g->n_weights; }
uint32_t dyng_graph_n_vertices(const dyng_graph *g) { return g->sealed ? g->n_live : g->n_vert; }
uint32_t dyng_graph_n_edges(const dyng_graph *g) { return g->n_edges; }
uint32_t dyng_graph_vertex_bound(const dyng_graph *g) { return g->n_vert; }

size_t dyng_graph_bytes(const dyng_graph *g) {
  size_t b = sizeof *g + dyng_idmap_bytes(g->vmap) + dyng_idmap_bytes(g->emap);
  b += g->vert_cap * (sizeof(int64_t) + 3 * sizeof(uint32_t) * (g->directed ? 2 : 1));
  b += g->slot_cap * (sizeof(int64_t) + (DYNG__HAS_IN_ENTRIES(g) ? 5 : 4) * sizeof(uint32_t));
  if (!g->sealed) b += g->stage_cap * (size_t)g->n_obj * sizeof(double);
  b += g->out.size * (2 * sizeof(uint32_t) + (size_t)g->n_obj * sizeof(double));
  if (g->in_built) b += g->in.size * 2 * sizeof(uint32_t);
  return b;
}

int dyng_graph_vertex(const dyng_graph *g, int64_t node_id, uint32_t *v) {
  uint32_t x;
  if (dyng_idmap_get(g->vmap, node_id, &x) != DYNG_OK) return DYNG_ENOTFOUND;
  if (g->sealed && !dyng__live(g, x)) return DYNG_ENOTFOUND;
  *v = x;
  return DYNG_OK;
}

int64_t dyng_graph_node_id(const dyng_graph *g, uint32_t v) { return g->node_id[v]; }
uint32_t dyng_graph_out_degree(const dyng_graph *g, uint32_t v) { return g->out.deg[v]; }
uint32_t dyng_graph_in_degree(const dyng_graph *g, uint32_t v) {
  return DYNG__ADJ_IN(g)->deg[v];
}

int dyng_graph_edge(const dyng_graph *g, int64_t rowid, uint32_t *slot) {
  return dyng_idmap_get(g->emap, rowid, slot) == DYNG_OK ? DYNG_OK : DYNG_ENOTFOUND;
}

int64_t dyng_graph_edge_rowid(const dyng_graph *g, uint32_t slot) { return g->e_rowid[slot]; }
uint32_t dyng_graph_edge_src(const dyng_graph *g, uint32_t slot) { return g->e_src[slot]; }
uint32_t dyng_graph_edge_dst(const dyng_graph *g, uint32_t slot) { return g->e_dst[slot]; }

double dyng_graph_edge_weight(const dyng_graph *g, uint32_t slot, int k) {
  if (!g->sealed) return g->load_w[k][slot];
  return g->out.w[k][g->e_pos[0][slot]];
}

/* Checks one pool: segments inside the pool and disjoint-by-capacity, every
** entry pointing back at an edge whose recorded position is this entry. */
static int dyng__adj_check(const dyng_graph *g, const dyng__adj *a, int side_of_owner) {
  size_t entries = 0;
  for (uint32_t v = 0; v < g->n_vert; v++) {
    if (a->deg[v] > a->cap[v]) return DYNG_ESTATE;
    if ((size_t)a->off[v] + a->cap[v] > a->used && a->cap[v]) return DYNG_ESTATE;
    for (uint32_t i = 0; i < a->deg[v]; i++) {
      size_t p = (size_t)a->off[v] + i;
      uint32_t r = a->ref[p], s = r >> 1, side = r & 1u;
      if (s >= g->n_slots || g->e_src[s] == DYNG_NONE) return DYNG_ESTATE;
      if (g->e_pos[side][s] != p) return DYNG_ESTATE;
      uint32_t owner = side ? g->e_dst[s] : g->e_src[s];
      uint32_t other = side ? g->e_src[s] : g->e_dst[s];
      if (owner != v || a->nbr[p] != other) return DYNG_ESTATE;
      if (side_of_owner >= 0 && (int)side != side_of_owner) return DYNG_ESTATE;
    }
    entries += a->deg[v];
  }
  size_t expect = (size_t)g->n_edges * (g->directed ? 1 : 2);
  return entries == expect ? DYNG_OK : DYNG_ESTATE;
}

int dyng_graph_check(const dyng_graph *g) {
  if (!g->sealed) return DYNG_ESTATE;
  int rc = dyng__adj_check(g, &g->out, g->directed ? 0 : -1);
  if (!rc && g->in_built) rc = dyng__adj_check(g, &g->in, 1);
  if (rc) return rc;
  if (!DYNG__HAS_IN_ENTRIES(g)) {
    /* Only in-degrees are kept: recount them from the slots. */
    uint32_t *count = dyng_calloc(g->n_vert ? g->n_vert : 1, sizeof *count);
    if (!count) return DYNG_ENOMEM;
    for (uint32_t s = 0; s < g->n_slots; s++) {
      if (g->e_src[s] == DYNG_NONE) continue;
      count[g->e_dst[s]]++;
    }
    for (uint32_t v = 0; v < g->n_vert && !rc; v++)
      if (count[v] != g->in.deg[v]) rc = DYNG_ESTATE;
    dyng_free(count);
    if (rc) return rc;
  }
  uint32_t live = 0, used = 0;
  for (uint32_t v = 0; v < g->n_vert; v++) {
    uint32_t x;
    if (dyng_idmap_get(g->vmap, g->node_id[v], &x) != DYNG_OK || x != v) return DYNG_ESTATE;
    live += dyng__live(g, v) ? 1u : 0u;
  }
  if (live != g->n_live || dyng_idmap_size(g->vmap) != g->n_vert) return DYNG_ESTATE;
  for (uint32_t s = 0; s < g->n_slots; s++) {
    uint32_t x;
    if (g->e_src[s] == DYNG_NONE) continue;
    used++;
    if (dyng_idmap_get(g->emap, g->e_rowid[s], &x) != DYNG_OK || x != s) return DYNG_ESTATE;
  }
  if (used != g->n_edges || dyng_idmap_size(g->emap) != g->n_edges) return DYNG_ESTATE;
  if (g->n_free + g->n_edges != g->n_slots) return DYNG_ESTATE;
  return DYNG_OK;
}
