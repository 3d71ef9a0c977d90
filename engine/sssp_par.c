/*
** engine/sssp_par.c: shortest paths from scratch on every core (see
** dyng_sssp_parallel in sssp.h).
**
** Distances: delta-stepping with two buckets (Meyer and Sanders; the
** near-far form the GAP benchmark suite and cuda/dev_sssp.cu use).  A
** threshold T splits tentative distances: a vertex improved below T joins
** a near list, unless it is already waiting in one (a per-vertex flag, set
** when it is queued and cleared when it is taken), one at or above T a far
** list.  Each round, the threads take chunks of the near frontier and
** relax their out-edges with a compare-and-swap on the distance's bits
** (non-negative doubles order like their IEEE-754 bits), each into its own
** near and far lists.  A thread whose near list stays short then relaxes
** it on its own, again and again, before it waits for the others (bucket
** fusion, as in GAP: a road graph's frontiers are a few hundred vertices,
** and without it every step of a wave would cost a barrier).  When a round
** leaves no near vertex, T moves past the smallest far distance by delta
** and the far lists are filtered into the next frontier.  Every relaxation
** adds one weight to one distance, as Dijkstra does, so the distances are
** the least fixed point of the same sums: bit for bit Dijkstra's, whatever
** the order of the relaxations.
**
** Parents: the tie rule of sssp.h from the distances, in one pass over the
** out-entries: the smallest rank among tight in-edges from a strictly
** closer tail, kept by a compare-and-swap on a word that packs the rank
** (above) with the entry's edge and side (below), so the winner names its
** edge.  A rank that does not fit in 32 bits (a rowid below 0 or past
** 2^32 - 1) falls back to two passes: the smallest rank alone, then the
** edge that holds it.
** A vertex left without such an edge (zero weights, or weights lost to
** rounding) gets the rule's level from a breadth-first search over tight
** edges between vertices of equal distance, started from those that have
** one, and then the tight in-edge of smallest rank from one level down.
*/
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/sssp.h"
#include "engine/sssp_tie.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* A list of vertices (engine/alloc.h); DYNG_ENOMEM when it cannot grow. */
typedef dyng_u32_list dyng__vlist;

static int dyng__vlist_push(dyng__vlist *l, uint32_t x) { return dyng_u32_push(l, x) ? DYNG_ENOMEM : DYNG_OK; }

/* A distance's bits: the tree's doubles, read and swapped as 64-bit words. */
typedef uint64_t __attribute__((may_alias)) dyng__bits;

static inline uint64_t dyng__bits_of(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static inline double dyng__value_of(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* What the threads of one search share. */
typedef struct dyng__par {
  const dyng_graph_view *g;
  const double *w;
  dyng__bits *dist;
  _Atomic uint8_t *queued;  /* per vertex: waiting in a near list or the frontier */
  double thresh;            /* T */
  const uint32_t *frontier; /* this round's near vertices */
  dyng__vlist *near, *far;  /* per thread */
  dyng__vlist *work;        /* per thread: a near list being relaxed alone */
  dyng_team team;
  _Atomic uint64_t *best;   /* per vertex: the smallest (packed) rank of a candidate parent edge */
  uint32_t *parent, *pedge, *hops;
  int zero;                 /* the parent passes are those of levels above 0 */
  int packed;               /* best[] packs rank << 32 | ref (else rank alone) */
  _Atomic int wide;         /* a packed pass met a rank that does not fit */
} dyng__par;

/* Relaxes the out-edges of vertices list[from, to) into thread `me`'s
** near and far lists.  Taking a vertex clears its flag before its distance
** is read: a thread that improves it and finds the flag still set (and so
** does not queue it) made its improvement before the clear, and the
** acquire of the clear makes it visible to the read. */
static int dyng__relax(dyng__par *P, int me, const uint32_t *list, size_t from, size_t to) {
  const dyng_graph_view *g = P->g;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr;
  for (size_t i = from; i < to; i++) {
    uint32_t u = list[i];
    atomic_exchange_explicit(&P->queued[u], 0, memory_order_acq_rel);
    double du = dyng__value_of(__atomic_load_n(&P->dist[u], __ATOMIC_RELAXED));
    for (uint32_t p = off[u], e = off[u] + deg[u]; p < e; p++) {
      uint32_t x = nbr[p];
      uint64_t nb = dyng__bits_of(du + P->w[p]), ob = __atomic_load_n(&P->dist[x], __ATOMIC_RELAXED);
      int won = 0;
      while (nb < ob)
        if (__atomic_compare_exchange_n(&P->dist[x], &ob, nb, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
          won = 1;
          break;
        }
      if (!won) continue;
      int rc;
      if (dyng__value_of(nb) < P->thresh) {
        if (atomic_exchange_explicit(&P->queued[x], 1, memory_order_acq_rel)) continue;
        rc = dyng__vlist_push(&P->near[me], x);
      } else {
        rc = dyng__vlist_push(&P->far[me], x);
      }
      if (rc != DYNG_OK) return rc;
    }
  }
  return DYNG_OK;
}

/* The tie rule's parents, pass `pick` 0 (smallest rank per vertex, packed
** with its entry's ref where P->packed) or 1 (the edge of that rank, when
** not packed), over the out-entries of vertices [from, to):
** at level 0 (`zero` 0) from strictly closer tails; for the vertices the
** level search reached (`zero` 1), from tails of the same distance one
** level down. */
static void dyng__parents(dyng__par *P, int pick, int zero, uint32_t from, uint32_t to) {
  const dyng_graph_view *g = P->g;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr, *ref = g->out.ref;
  for (uint32_t u = from; u < to; u++) {
    double du = dyng__value_of(P->dist[u]);
    if (isinf(du)) continue;
    for (uint32_t p = off[u], e = off[u] + deg[u]; p < e; p++) {
      uint32_t x = nbr[p];
      double dx = dyng__value_of(P->dist[x]);
      if (du + P->w[p] != dx) continue;
      if (!zero) {
        if (!(du < dx)) continue;
      } else {
        uint32_t hx = P->hops[x];
        if (hx == 0 || hx == DYNG_NONE || du != dx || P->hops[u] != hx - 1) continue;
      }
      uint32_t s = ref[p] >> 1;
      int64_t rank = dyng__edge_rank(g, s);
      uint64_t r;
      if (P->packed) {
        if (rank < 0 || rank > (int64_t)UINT32_MAX) {
          atomic_store_explicit(&P->wide, 1, memory_order_relaxed);
          continue;
        }
        r = (uint64_t)rank << 32 | ref[p];
      } else {
        r = (uint64_t)rank ^ 0x8000000000000000u;
      }
      if (pick) {
        if (atomic_load_explicit(&P->best[x], memory_order_relaxed) == r) P->parent[x] = u, P->pedge[x] = s;
        continue;
      }
      uint64_t b = atomic_load_explicit(&P->best[x], memory_order_relaxed);
      while (r < b && !atomic_compare_exchange_weak_explicit(&P->best[x], &b, r, memory_order_relaxed,
                                                             memory_order_relaxed)) {
      }
    }
  }
}

/* Every vertex unreached, no candidate parent yet. */
static void dyng__clear(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to))
    for (uint32_t v = from; v < to; v++) {
      __atomic_store_n(&P->dist[v], dyng__bits_of(INFINITY), __ATOMIC_RELAXED);
      P->parent[v] = P->pedge[v] = P->hops[v] = DYNG_NONE;
      atomic_init(&P->best[v], UINT64_MAX);
    }
  (void)dyng_team_check(&P->team, thread);
}

static void dyng__parents_rank(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to)) dyng__parents(P, 0, P->zero, from, to);
  (void)dyng_team_check(&P->team, thread);
}

/* The parent of every vertex of the passes' kind (level 0, or with
** P->zero the levels above) from its packed best[]. */
static void dyng__parents_unpack(void *ctx, int thread) {
  dyng__par *P = ctx;
  const uint32_t *src = P->g->edge_src, *dst = P->g->edge_dst;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to))
    for (uint32_t v = from; v < to; v++) {
      uint64_t b = atomic_load_explicit(&P->best[v], memory_order_relaxed);
      if (b == UINT64_MAX || (P->zero && (P->hops[v] == 0 || P->hops[v] == DYNG_NONE))) continue;
      uint32_t ref = (uint32_t)b, s = ref >> 1;
      P->pedge[v] = s;
      P->parent[v] = ref & 1 ? dst[s] : src[s];
    }
  (void)dyng_team_check(&P->team, thread);
}

/* No candidate parent yet for any vertex. */
static void dyng__best_clear(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to))
    for (uint32_t v = from; v < to; v++) atomic_store_explicit(&P->best[v], UINT64_MAX, memory_order_relaxed);
  (void)dyng_team_check(&P->team, thread);
}

static void dyng__parents_pick(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to)) dyng__parents(P, 1, P->zero, from, to);
  (void)dyng_team_check(&P->team, thread);
}

/* The level search over tight edges between vertices of equal distance:
** vertex u of the frontier (or, with `seed`, every vertex of level 0 among
** [from, to)) gives each tight out-neighbour still without a level its
** own level + 1, and queues it. */
static void dyng__levels(dyng__par *P, int thread, int seed, uint32_t from, uint32_t to) {
  const dyng_graph_view *g = P->g;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr;
  for (uint32_t i = from; i < to; i++) {
    uint32_t u = seed ? i : P->frontier[i];
    double du = dyng__value_of(P->dist[u]);
    uint32_t hu = __atomic_load_n(&P->hops[u], __ATOMIC_RELAXED);
    if (isinf(du) || (seed && hu != 0)) continue;
    uint32_t level = hu + 1;
    for (uint32_t p = off[u], e = off[u] + deg[u]; p < e; p++) {
      uint32_t x = nbr[p], none = DYNG_NONE;
      if (__atomic_load_n(&P->hops[x], __ATOMIC_RELAXED) != DYNG_NONE || du + P->w[p] != dyng__value_of(P->dist[x]))
        continue;
      if (!__atomic_compare_exchange_n(&P->hops[x], &none, level, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) continue;
      if (dyng__vlist_push(&P->near[thread], x) != DYNG_OK) {
        dyng_team_fail(&P->team, DYNG_ENOMEM);
        return;
      }
    }
  }
}

static void dyng__levels_seed(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to)) dyng__levels(P, thread, 1, from, to);
  (void)dyng_team_check(&P->team, thread);
}

static void dyng__levels_next(void *ctx, int thread) {
  dyng__par *P = ctx;
  uint32_t from, to;
  while (dyng_team_take(&P->team, &from, &to)) dyng__levels(P, thread, 0, from, to);
  (void)dyng_team_check(&P->team, thread);
}

/* Runs fn over items 0 .. n - 1 on the search's threads. */
static int dyng__par_run(dyng__par *P, uint32_t n, uint32_t chunk, int threads, const dyng_cancel *cancel,
                         void (*fn)(void *, int)) {
  dyng_team_init(&P->team, n, chunk, threads, cancel);
  return dyng_team_run(&P->team, fn, P);
}

/* The parents of one kind of vertex (level 0, or with `zero` the levels
** above): one packed pass, or two where a rank does not fit. */
static int dyng__parent_passes(dyng__par *P, int zero, int threads, const dyng_cancel *cancel) {
  uint32_t n = P->g->n_vertices;
  int rc;
  P->zero = zero;
  if (P->packed) {
    if ((rc = dyng__par_run(P, n, 4096, threads, cancel, dyng__parents_rank)) != DYNG_OK) return rc;
    if (!atomic_load(&P->wide)) return dyng__par_run(P, n, 16384, threads, cancel, dyng__parents_unpack);
    /* Start over with ranks alone (for good: they do not fit). */
    P->packed = 0;
    if ((rc = dyng__par_run(P, n, 16384, threads, cancel, dyng__best_clear)) != DYNG_OK) return rc;
  }
  if ((rc = dyng__par_run(P, n, 4096, threads, cancel, dyng__parents_rank)) != DYNG_OK) return rc;
  return dyng__par_run(P, n, 4096, threads, cancel, dyng__parents_pick);
}

/* The next frontier from the far lists (each vertex once, by its flag),
** once T has moved past their smallest distance: those now below
** T go, those still at or above it stay; those below the old T were
** settled in an earlier phase and go too. */
static int dyng__far_filter(dyng__par *P, int threads, double old_thresh, dyng__vlist *next) {
  next->n = 0;
  for (int t = 0; t < threads; t++) {
    dyng__vlist *f = &P->far[t];
    size_t keep = 0;
    for (size_t i = 0; i < f->n; i++) {
      uint32_t x = f->v[i];
      double dx = dyng__value_of(P->dist[x]);
      if (dx < old_thresh) continue;
      if (dx < P->thresh) {
        if (atomic_exchange_explicit(&P->queued[x], 1, memory_order_relaxed)) continue;
        if (dyng__vlist_push(next, x)) return DYNG_ENOMEM;
      } else {
        f->v[keep++] = x;
      }
    }
    f->n = keep;
  }
  return DYNG_OK;
}

/* The threshold past distance d: d + delta, or the next double when delta
** is lost next to d. */
static double dyng__past(double d, double delta) {
  double t = d + delta;
  return t > d ? t : nextafter(d, INFINITY);
}

/* What the threads of the near-far search share besides dyng__par. */
typedef struct dyng__search {
  dyng__par *P;
  dyng__vlist *cur;         /* the frontier */
  int threads;              /* per-thread lists */
  int running;              /* threads that run the search */
  double delta;
  const dyng_cancel *cancel;
  _Atomic size_t next;      /* the frontier's next chunk */
  _Atomic int rc;           /* the first failure */
  int done;                 /* set by the thread of a round's turn */
} dyng__search;

/* Relaxes thread me's near list on its own while it holds fewer than
** this many vertices: more are better shared at the next round. */
#define DYNG__FUSE 1024

/* Records the first failure of the search. */
static void dyng__search_fail(dyng__search *S, int rc) {
  int expected = DYNG_OK;
  if (rc != DYNG_OK) atomic_compare_exchange_strong(&S->rc, &expected, rc);
}

/* One thread of the search: rounds of relaxing the frontier's chunks and
** then, while it stays short, its own near list; each round ends with one
** thread's turn of the near lists into the next frontier (or, with none,
** T past the smallest far distance and the far lists filtered), taken by
** the last thread to reach the round's barrier while the others wait, so
** a round costs no new start of threads. */
static void dyng__search_thread(void *ctx, int me) {
  dyng__search *S = ctx;
  dyng__par *P = S->P;
  uint32_t tick = 0;
  for (;;) {
    size_t n = S->cur->n, b;
    while (atomic_load_explicit(&S->rc, memory_order_relaxed) == DYNG_OK &&
           (b = atomic_fetch_add_explicit(&S->next, 64, memory_order_relaxed)) < n)
      dyng__search_fail(S, dyng__relax(P, me, P->frontier, b, n - b < 64 ? n : b + 64));
    while (atomic_load_explicit(&S->rc, memory_order_relaxed) == DYNG_OK && P->near[me].n &&
           P->near[me].n < DYNG__FUSE) {
      dyng__vlist w = P->work[me];
      P->work[me] = P->near[me];
      P->near[me] = w;
      P->near[me].n = 0;
      dyng__search_fail(S, dyng__relax(P, me, P->work[me].v, 0, P->work[me].n));
      if (me == 0 && dyng_poll_stop(S->cancel, &tick, 15)) dyng__search_fail(S, DYNG_EINTERRUPTED);
    }
    if (me == 0 && dyng_poll_stop(S->cancel, &tick, 15)) dyng__search_fail(S, DYNG_EINTERRUPTED);
    if (dyng_barrier_arrive(S->running)) {
      int rc = atomic_load(&S->rc);
      atomic_store_explicit(&S->next, 0, memory_order_relaxed);
      S->cur->n = 0;
      for (int th = 0; th < S->threads && rc == DYNG_OK; th++) {
        for (size_t i = 0; i < P->near[th].n && rc == DYNG_OK; i++) rc = dyng__vlist_push(S->cur, P->near[th].v[i]);
        P->near[th].n = 0;
      }
      if (rc == DYNG_OK && !S->cur->n) {
        double least = INFINITY, old = P->thresh;
        for (int th = 0; th < S->threads; th++)
          for (size_t i = 0; i < P->far[th].n; i++) {
            double d = dyng__value_of(P->dist[P->far[th].v[i]]);
            if (d >= old && d < least) least = d;
          }
        if (isinf(least)) {
          S->done = 1;
        } else {
          P->thresh = dyng__past(least, S->delta);
          rc = dyng__far_filter(P, S->threads, old, S->cur);
        }
      }
      P->frontier = S->cur->v;
      if (rc != DYNG_OK) {
        atomic_store(&S->rc, rc);
        S->done = 1;
      }
      dyng_barrier_release(S->running);
    }
    if (S->done) break;
  }
}

/* The distances from the source (already at 0 and queued in cur). */
static int dyng__distances(dyng__par *P, dyng__vlist *cur, int threads, double delta, const dyng_cancel *cancel) {
  dyng__search S;
  memset(&S, 0, sizeof S);
  S.P = P, S.cur = cur, S.threads = threads, S.delta = delta, S.cancel = cancel;
  atomic_init(&S.next, 0);
  atomic_init(&S.rc, DYNG_OK);
  P->frontier = cur->v;
  (void)dyng_run_threads(threads, dyng__search_thread, &S, &S.running);
  return atomic_load(&S.rc);
}


static uint32_t dyng__parallel_min(void) {
  static _Atomic uint32_t min = 0; /* 0: not read yet */
  uint32_t m = atomic_load(&min);
  if (m) return m;
  /* Anything but a positive integer leaves the default. */
  const char *z = getenv("DYNG_PARALLEL_SSSP_MIN");
  char *end = NULL;
  long long v = z ? strtoll(z, &end, 10) : 0;
  if (!z || end == z || *end || v < 1) v = 100000;
  m = v > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
  atomic_store(&min, m);
  return m;
}

int dyng_sssp_parallel_pays(const dyng_graph_view *g) {
  return g->n_vertices >= dyng__parallel_min() && dyng_threads_now() > 1;
}

/* One function over 80 lines on purpose: the phases (near rounds, far
** filter) and the parent passes share the per-thread lists, the flags and
** the single cleanup; split, each would take them all as arguments. */
int dyng_sssp_parallel(const dyng_graph_view *g, uint32_t source, int objective, dyng_sssp_tree *t) {
  uint32_t n = g->n_vertices;
  if (source >= n || objective < 0 || objective >= g->n_objectives || t->n_vertices < n) return DYNG_EINVAL;
  int threads = dyng_threads_now();
  dyng__par P;
  memset(&P, 0, sizeof P);
  P.g = g;
  P.w = g->out.w[objective];
  P.dist = (dyng__bits *)t->dist;
  P.parent = t->parent;
  P.pedge = t->parent_edge;
  P.hops = t->hops;
  P.queued = dyng_calloc(n, sizeof *P.queued);
  P.best = dyng_malloc((size_t)n * sizeof *P.best);
  P.near = dyng_calloc((size_t)threads, sizeof *P.near);
  P.far = dyng_calloc((size_t)threads, sizeof *P.far);
  P.work = dyng_calloc((size_t)threads, sizeof *P.work);
  dyng__vlist cur = {0};
  int rc = DYNG_ENOMEM;
  if (!P.queued || !P.best || !P.near || !P.far || !P.work) goto done;
  if ((rc = dyng__par_run(&P, n, 16384, threads, NULL, dyng__clear)) != DYNG_OK) goto done;
  t->source = source;
  t->objective = objective;
  t->dist[source] = 0.0;

  /* The bucket width: a few mean weights of the objective, the mean taken
  ** over the first entries of up to 4096 vertices spread over the graph. */
  double sum = 0;
  size_t cnt = 0;
  for (uint32_t u = 0, step = n / 4096 + 1; u < n; u += step)
    for (uint32_t p = g->out.off[u], e = p + (g->out.deg[u] < 16 ? g->out.deg[u] : 16); p < e; p++)
      sum += P.w[p], cnt++;
  double delta = cnt && sum > 0 ? 4.0 * sum / (double)cnt : 1.0;

  P.thresh = dyng__past(0.0, delta);
  if ((rc = dyng__vlist_push(&cur, source)) != DYNG_OK) goto done;
  atomic_store_explicit(&P.queued[source], 1, memory_order_relaxed);
  if ((rc = dyng__distances(&P, &cur, threads, delta, g->cancel)) != DYNG_OK) goto done;

  /* Parents by the tie rule, level 0; the vertices left without one get
  ** their levels from the search over tight edges of equal distance, then
  ** their parents one level down. */
  P.packed = g->edge_src != NULL && g->edge_dst != NULL;
  atomic_init(&P.wide, 0);
  if ((rc = dyng__parent_passes(&P, 0, threads, g->cancel)) != DYNG_OK) goto done;
  uint32_t reached = 0, left = 0;
  for (uint32_t v = 0; v < n; v++) {
    if (isinf(t->dist[v])) continue;
    reached++;
    if (v == source || t->parent_edge[v] != DYNG_NONE) t->hops[v] = 0;
    else left++;
  }
  if (left) {
    if ((rc = dyng__par_run(&P, n, 4096, threads, g->cancel, dyng__levels_seed)) != DYNG_OK) goto done;
    for (;;) {
      cur.n = 0;
      for (int th = 0; th < threads; th++) {
        for (size_t i = 0; i < P.near[th].n; i++)
          if ((rc = dyng__vlist_push(&cur, P.near[th].v[i])) != DYNG_OK) goto done;
        P.near[th].n = 0;
      }
      if (!cur.n) break;
      P.frontier = cur.v;
      if ((rc = dyng__par_run(&P, (uint32_t)cur.n, 64, threads, g->cancel, dyng__levels_next)) != DYNG_OK) goto done;
    }
    if ((rc = dyng__parent_passes(&P, 1, threads, g->cancel)) != DYNG_OK) goto done;
  }
  /* The distance order is left to the first listing of the whole tree
  ** (dyng_sssp_tree_order), as after an update: a path or one node's
  ** distance does not need it. */
  t->n_reached = reached;
  t->order_stale = 1;
  rc = DYNG_OK;
done:
  for (int k = 0; k < 3; k++) {
    dyng__vlist *l = k == 0 ? P.near : k == 1 ? P.far : P.work;
    for (int th = 0; th < threads && l; th++) dyng_free(l[th].v);
    dyng_free(l);
  }
  dyng_free(cur.v);
  dyng_free((void *)P.queued);
  dyng_free((void *)P.best);
  return rc;
}
