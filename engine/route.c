/*
** engine/route.c: searches that stop early, in a reusable workspace (see
** route.h).  The search is dyng_sssp_dijkstra's (engine/sssp.c): a radix
** heap by distance and, for the offers of zero weight at the distance
** being taken, a first-in first-out list of levels; here every per-vertex
** word is valid only where the search's stamp says so.
*/
#include "engine/route.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/radix_heap.h"
#include "engine/sssp.h"
#include "engine/sssp_tie.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* An entry of the aimed search's queue: by f (distance plus bound), then
** level; current while its vertex still has distance g and that level. */
typedef struct dyng__aim_item {
  double f, g;
  uint32_t level, v;
} dyng__aim_item;

struct dyng_route {
  uint32_t cap;      /* vertices the per-vertex arrays hold */
  uint32_t stamp;    /* the current search's; 0 is never one */
  uint32_t *seen;    /* per vertex: the stamp of the search that offered to it */
  uint32_t *out;     /* per vertex: the stamp of the search it came out of */
  uint32_t *want;    /* per vertex: the stamp of the search it is a target of */
  double *dist;      /* per vertex, where seen: the best offer's distance */
  uint32_t *level;   /* ... its level */
  uint32_t *entry;   /* ... the adjacency entry it came through (DYNG_NONE: the source) */
  uint32_t *taken;   /* the vertices that came out, in order */
  size_t n_taken, taken_cap;
  dyng__radix_heap heap;
  dyng__level_fifo same;
  double *bound;     /* per vertex, where seen by an aimed search: its bound */
  dyng__aim_item *aq; /* the aimed search's binary heap */
  size_t n_aq, aq_cap;
};

dyng_route *dyng_route_new(void) {
  dyng_route *r = dyng_calloc(1, sizeof *r);
  return r;
}

void dyng_route_free(dyng_route *r) {
  if (!r) return;
  dyng_free(r->seen);
  dyng_free(r->out);
  dyng_free(r->want);
  dyng_free(r->dist);
  dyng_free(r->level);
  dyng_free(r->entry);
  dyng_free(r->taken);
  dyng_free(r->bound);
  dyng_free(r->aq);
  dyng__heap_free(&r->heap);
  dyng_free(r->same.v);
  dyng_free(r);
}

size_t dyng_route_bytes(const dyng_route *r) {
  if (!r) return 0;
  size_t n = (size_t)r->cap * (4 * sizeof(uint32_t) + sizeof(double) + sizeof(uint32_t)) +
             r->taken_cap * sizeof(uint32_t) + r->same.cap * sizeof(uint64_t) +
             (r->bound ? (size_t)r->cap * sizeof(double) : 0) + r->aq_cap * sizeof(dyng__aim_item);
  for (int i = 0; i < DYNG__BUCKETS; i++) n += r->heap.b[i].cap * sizeof(dyng__item);
  return n + sizeof *r;
}

dyng_route_goal dyng_route_goal_none(void) {
  dyng_route_goal g;
  memset(&g, 0, sizeof g);
  g.target = DYNG_NONE;
  g.max_dist = INFINITY;
  return g;
}

/* Room for n vertices; a new stamp for the search about to run. */
static int dyng__route_begin(dyng_route *r, uint32_t n) {
  if (n > r->cap) {
    uint32_t cap = n;
    uint32_t *seen = dyng_calloc(cap, sizeof *seen), *out = dyng_calloc(cap, sizeof *out),
             *want = dyng_calloc(cap, sizeof *want);
    if (!seen || !out || !want || (r->bound && dyng_resize(&r->bound, cap, sizeof *r->bound)) ||
        dyng_resize(&r->dist, cap, sizeof *r->dist) ||
        dyng_resize(&r->level, cap, sizeof *r->level) || dyng_resize(&r->entry, cap, sizeof *r->entry)) {
      dyng_free(seen), dyng_free(out), dyng_free(want);
      return DYNG_ENOMEM;
    }
    dyng_free(r->seen), dyng_free(r->out), dyng_free(r->want);
    r->seen = seen, r->out = out, r->want = want;
    r->cap = cap;
    r->stamp = 0;
  }
  if (++r->stamp == 0) {
    /* The stamps wrapped: every word written by an older search goes. */
    memset(r->seen, 0, (size_t)r->cap * sizeof *r->seen);
    memset(r->out, 0, (size_t)r->cap * sizeof *r->out);
    memset(r->want, 0, (size_t)r->cap * sizeof *r->want);
    r->stamp = 1;
  }
  r->n_taken = 0;
  /* An empty heap, its buckets' room kept. */
  for (int i = 0; i < DYNG__BUCKETS; i++) r->heap.b[i].n = 0;
  r->heap.last = r->heap.used = 0;
  r->heap.size = 0;
  r->same.n = r->same.at = 0;
  return DYNG_OK;
}

static inline double dyng__rdist(const dyng_route *r, uint32_t v) {
  return r->seen[v] == r->stamp ? r->dist[v] : INFINITY;
}

static inline uint32_t dyng__rlevel(const dyng_route *r, uint32_t v) {
  return r->seen[v] == r->stamp ? r->level[v] : DYNG_NONE;
}

/* Records that u came out (in r->taken): DYNG_OK or DYNG_ENOMEM. */
static int dyng__route_take(dyng_route *r, uint32_t u) {
  r->out[u] = r->stamp;
  if (r->n_taken == r->taken_cap && dyng_grow((void **)&r->taken, &r->taken_cap, r->n_taken + 1, sizeof *r->taken))
    return DYNG_ENOMEM;
  r->taken[r->n_taken++] = u;
  return DYNG_OK;
}

/* The offer of adjacency entry p, from a vertex at du (level hu), of nd
** to its head x, weighed by the tie rule: 1 when it improves x's distance
** or level (x now has it, and goes in the queue), else 0 (x's parent edge
** is taken over when the offer ties and its rowid is smaller). */
static inline int dyng__route_offer(dyng_route *r, const dyng_graph_view *g, uint32_t source, uint32_t p,
                                    uint32_t x, double du, uint32_t hu, double nd) {
  double dx = dyng__rdist(r, x);
  if (nd > dx) return 0;
  uint32_t hx = dyng__offer_level(du, hu, nd);
  if (nd < dx || hx < dyng__rlevel(r, x)) {
    r->seen[x] = r->stamp;
    r->dist[x] = nd;
    r->level[x] = hx;
    r->entry[x] = p;
    return 1;
  }
  const uint32_t *ref = g->out.ref;
  if (hx == r->level[x] && x != source && dyng__edge_rank(g, ref[p] >> 1) < dyng__edge_rank(g, ref[r->entry[x]] >> 1))
    r->entry[x] = p;
  return 0;
}

/* ---- the aimed search ----------------------------------------------------- */

static inline int dyng__aim_less(const dyng__aim_item *a, const dyng__aim_item *b) {
  return a->f < b->f || (a->f == b->f && a->level < b->level);
}

static int dyng__aq_push(dyng_route *r, double f, double gd, uint32_t level, uint32_t v) {
  if (r->n_aq == r->aq_cap && dyng_grow((void **)&r->aq, &r->aq_cap, r->n_aq + 1, sizeof *r->aq))
    return DYNG_ENOMEM;
  size_t i = r->n_aq++;
  dyng__aim_item it = {f, gd, level, v};
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!dyng__aim_less(&it, &r->aq[p])) break;
    r->aq[i] = r->aq[p];
    i = p;
  }
  r->aq[i] = it;
  return DYNG_OK;
}

static dyng__aim_item dyng__aq_pop(dyng_route *r) {
  dyng__aim_item top = r->aq[0], last = r->aq[--r->n_aq];
  size_t i = 0, n = r->n_aq;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && dyng__aim_less(&r->aq[c + 1], &r->aq[c])) c++;
    if (!dyng__aim_less(&r->aq[c], &last)) break;
    r->aq[i] = r->aq[c];
    i = c;
  }
  if (n) r->aq[i] = last;
  return top;
}

/* The bound on v's distance to t (never above it). */
static double dyng__aim_bound(const dyng_route_aim *aim, uint32_t v, uint32_t t) {
  double h = 0.0;
  for (int i = 0; i < aim->n; i++) {
    const double *d = aim->dist[i];
    if (isinf(d[v]) || isinf(d[t])) continue;
    double b = d[t] - d[v];
    if (aim->undirected && d[v] - d[t] > b) b = d[v] - d[t];
    b -= aim->slack[i];
    if (b > h) h = b;
  }
  return h;
}

/* A* toward goal->target with goal->aim (see route.h).  A vertex's offer
** is taken as in the plain search (distance, then level, then rowid); an
** improvement of distance or level puts it back in the queue. */
static int dyng__route_aimed(dyng_route *r, const dyng_graph_view *g, uint32_t source, int objective,
                             const dyng_route_goal *goal) {
  if (!r->bound && !(r->bound = dyng_malloc((size_t)r->cap * sizeof *r->bound))) return DYNG_ENOMEM;
  const uint32_t stamp = r->stamp, t = goal->target;
  const dyng_route_aim *aim = goal->aim;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr;
  const double *w = g->out.w[objective];
  double *dist = r->dist, *bound = r->bound;
  uint32_t *level = r->level, *entry = r->entry, *seen = r->seen;
  uint32_t tick = 0;
  r->n_aq = 0;
  seen[source] = stamp;
  dist[source] = 0.0;
  level[source] = 0;
  entry[source] = DYNG_NONE;
  bound[source] = dyng__aim_bound(aim, source, t);
  int rc = dyng__aq_push(r, bound[source], 0.0, 0, source);
  while (rc == DYNG_OK && r->n_aq) {
    /* Once the target came out, what is left bounded at its distance or
    ** below may still tie with it or improve a vertex of its path. */
    if (r->out[t] == stamp) {
      double dt = dist[t];
      if (r->aq[0].f > dt + dt * (4 * DBL_EPSILON)) break;
    }
    dyng__aim_item it = dyng__aq_pop(r);
    uint32_t u = it.v;
    if (it.g != dist[u] || it.level != level[u]) continue; /* stale */
    if (dyng_poll_stop(g->cancel, &tick, 4095)) {
      rc = DYNG_EINTERRUPTED;
      break;
    }
    if (r->out[u] != stamp && (rc = dyng__route_take(r, u)) != DYNG_OK) break;
    double du = dist[u];
    uint32_t hu = level[u];
    for (uint32_t p = off[u], end = off[u] + deg[u]; p < end; p++) {
      uint32_t x = nbr[p];
      int fresh = seen[x] != stamp;
      if (!dyng__route_offer(r, g, source, p, x, du, hu, du + w[p])) continue;
      if (fresh) bound[x] = dyng__aim_bound(aim, x, t);
      if ((rc = dyng__aq_push(r, dist[x] + bound[x], dist[x], level[x], x)) != DYNG_OK) break;
    }
  }
  return rc;
}

int dyng_route_search(dyng_route *r, const dyng_graph_view *g, uint32_t source, int objective,
                      const dyng_route_goal *goal) {
  uint32_t n = g->n_vertices;
  if (source >= n || objective < 0 || objective >= g->n_objectives) return DYNG_EINVAL;
  if (goal->target != DYNG_NONE && goal->target >= n) return DYNG_EINVAL;
  for (size_t i = 0; i < goal->n_targets; i++)
    if (goal->targets[i] >= n) return DYNG_EINVAL;
  int rc = dyng__route_begin(r, n);
  if (rc != DYNG_OK) return rc;
  if (goal->target != DYNG_NONE && goal->aim && goal->aim->n > 0)
    return dyng__route_aimed(r, g, source, objective, goal);
  const uint32_t stamp = r->stamp;
  size_t n_wanted = 0;
  if (goal->target == DYNG_NONE)
    for (size_t i = 0; i < goal->n_targets; i++)
      if (r->want[goal->targets[i]] != stamp) r->want[goal->targets[i]] = stamp, n_wanted++;
  const int by_targets = goal->target == DYNG_NONE && goal->n_targets > 0;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr;
  const double *w = g->out.w[objective];
  double *dist = r->dist;
  uint32_t *level = r->level, *entry = r->entry, *seen = r->seen;
  uint32_t tick = 0;

  seen[source] = stamp;
  dist[source] = 0.0;
  level[source] = 0;
  entry[source] = DYNG_NONE;
  rc = dyng__heap_push(&r->heap, dyng__key(0.0), source);
  while (rc == DYNG_OK) {
    uint32_t u;
    if (r->heap.b[0].n || r->same.at == r->same.n) {
      if (!r->heap.size) break;
      dyng__item it;
      if ((rc = dyng__heap_pop(&r->heap, &it)) != DYNG_OK) break;
      u = it.vertex;
      if (it.key != dyng__key(dist[u])) continue; /* stale */
      if (r->same.at == r->same.n) r->same.n = r->same.at = 0;
    } else {
      uint64_t e = r->same.v[r->same.at++];
      u = (uint32_t)e;
      if (level[u] != (uint32_t)(e >> 32)) continue; /* stale */
    }
    if (r->out[u] == stamp) continue;
    double du = dist[u];
    /* Past the bound: neither u nor anything after it is taken. */
    if (goal->strict ? !(du < goal->max_dist) : du > goal->max_dist) break;
    if (dyng_poll_stop(g->cancel, &tick, 4095)) {
      rc = DYNG_EINTERRUPTED;
      break;
    }
    if ((rc = dyng__route_take(r, u)) != DYNG_OK) break;
    if (u == goal->target) break;
    if (by_targets && r->want[u] == stamp && --n_wanted == 0) break;
    if (goal->max_taken && r->n_taken >= goal->max_taken) break;
    uint32_t hu = level[u];
    for (uint32_t p = off[u], end = off[u] + deg[u]; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      if (!dyng__route_offer(r, g, source, p, x, du, hu, nd)) continue;
      rc = nd == du ? dyng__fifo_push(&r->same, level[x], x) : dyng__heap_push(&r->heap, dyng__key(nd), x);
      if (rc) break;
    }
  }
  return rc;
}

const uint32_t *dyng_route_taken(const dyng_route *r, size_t *n) {
  *n = r->n_taken;
  return r->taken;
}

int dyng_route_final(const dyng_route *r, uint32_t v) {
  return v < r->cap && r->stamp && r->out[v] == r->stamp;
}

double dyng_route_dist(const dyng_route *r, uint32_t v) {
  return dyng_route_final(r, v) ? r->dist[v] : INFINITY;
}

uint32_t dyng_route_parent_edge(const dyng_route *r, const dyng_graph_view *g, uint32_t v) {
  if (!dyng_route_final(r, v) || r->entry[v] == DYNG_NONE) return DYNG_NONE;
  return g->out.ref[r->entry[v]] >> 1;
}

uint32_t dyng_route_parent(const dyng_route *r, const dyng_graph_view *g, uint32_t v) {
  if (!dyng_route_final(r, v) || r->entry[v] == DYNG_NONE) return DYNG_NONE;
  uint32_t ref = g->out.ref[r->entry[v]], s = ref >> 1;
  /* The entry's owner: the edge's source for side 0, its destination for 1. */
  return (ref & 1u) ? g->edge_dst[s] : g->edge_src[s];
}

int dyng_route_path(const dyng_route *r, const dyng_graph_view *g, uint32_t target, uint32_t **pv,
                    uint32_t *pn) {
  *pv = NULL;
  *pn = 0;
  if (!dyng_route_final(r, target)) return DYNG_OK;
  uint32_t n = 1;
  for (uint32_t v = target; (v = dyng_route_parent(r, g, v)) != DYNG_NONE;) {
    if (++n > g->n_vertices) return DYNG_EINVAL; /* parents loop: cannot happen */
  }
  uint32_t *av = dyng_malloc((size_t)n * sizeof *av);
  if (!av) return DYNG_ENOMEM;
  uint32_t i = 0;
  for (uint32_t v = target; v != DYNG_NONE; v = dyng_route_parent(r, g, v)) av[i++] = v;
  *pv = av;
  *pn = n;
  return DYNG_OK;
}

/* ---- many sources --------------------------------------------------------- */

typedef struct dyng__matrix_job {
  dyng_team team;
  const dyng_graph_view *g;
  dyng_graph_view quiet; /* g without its cancel, for the threads but the caller's */
  int objective;
  const uint32_t *sources, *targets;
  size_t n_targets;
  double *out;
  dyng_route **ws; /* one per thread */
} dyng__matrix_job;

static void dyng__matrix_worker(void *ctx, int thread) {
  dyng__matrix_job *j = ctx;
  dyng_route *r = j->ws[thread];
  const dyng_graph_view *g = thread == 0 ? j->g : &j->quiet;
  dyng_route_goal goal = dyng_route_goal_none();
  goal.targets = j->targets;
  goal.n_targets = j->n_targets;
  uint32_t from, to;
  while (dyng_team_take(&j->team, &from, &to)) {
    for (uint32_t i = from; i < to; i++) {
      if (dyng_team_check(&j->team, thread) != DYNG_OK) return;
      int rc = dyng_route_search(r, g, j->sources[i], j->objective, &goal);
      if (rc != DYNG_OK) {
        dyng_team_fail(&j->team, rc);
        return;
      }
      double *row = j->out + (size_t)i * j->n_targets;
      for (size_t k = 0; k < j->n_targets; k++) row[k] = dyng_route_dist(r, j->targets[k]);
    }
  }
}

int dyng_route_matrix(const dyng_graph_view *g, int objective, const uint32_t *sources, size_t n_sources,
                      const uint32_t *targets, size_t n_targets, double *out) {
  if (objective < 0 || objective >= g->n_objectives) return DYNG_EINVAL;
  for (size_t i = 0; i < n_sources; i++)
    if (sources[i] >= g->n_vertices) return DYNG_EINVAL;
  for (size_t i = 0; i < n_targets; i++)
    if (targets[i] >= g->n_vertices) return DYNG_EINVAL;
  if (n_sources > UINT32_MAX) return DYNG_ETOOBIG;
  if (!n_sources || !n_targets) return DYNG_OK;
  dyng__matrix_job j;
  memset(&j, 0, sizeof j);
  dyng_team_init(&j.team, (uint32_t)n_sources, 1, 0, g->cancel);
  j.g = g;
  j.quiet = *g;
  j.quiet.cancel = NULL;
  j.objective = objective;
  j.sources = sources;
  j.targets = targets;
  j.n_targets = n_targets;
  j.out = out;
  j.ws = dyng_calloc((size_t)j.team.n_threads, sizeof *j.ws);
  int rc = j.ws ? DYNG_OK : DYNG_ENOMEM;
  for (int t = 0; rc == DYNG_OK && t < j.team.n_threads; t++)
    if (!(j.ws[t] = dyng_route_new())) rc = DYNG_ENOMEM;
  if (rc == DYNG_OK) rc = dyng_team_run(&j.team, dyng__matrix_worker, &j);
  for (int t = 0; j.ws && t < j.team.n_threads; t++) dyng_route_free(j.ws[t]);
  dyng_free(j.ws);
  return rc;
}

/* ---- landmarks ------------------------------------------------------------ */

/*
** A landmark keeps one number per vertex, d[v], a potential: for every edge
** (x, y) of the graph, d[y] <= d[x] + w(x, y) (both ways on an undirected
** graph), and d[L] = 0.  Summed along any path from v to t this gives
** d[t] - d[v] <= d(v, t), the bound of the aim, and d[v] <= d(L, v): the
** exact distances from L are the largest potential, and the build computes
** them.  A batch can break the inequality only where it added an edge or
** lowered a weight (an update is its old edge removed and the new one
** added); removing an edge or raising a weight only loosens it.  So a
** batch is followed by lowering d where an added edge breaks it and
** carrying that down the edges by Dijkstra's rule: the result is a
** potential of the new graph again, the exact distances when the batch
** removed nothing.  The bounds it gives never overestimate; with every
** removal they may get weaker, until the distances are computed again.
**
** The distances are stored scaled by DYNG_LANDMARK_SCALE (a scaled
** potential is one: a * d[y] <= a * d[x] + w when a <= 1), which leaves
** every edge a little room, (1 - a) w: a lowered d then runs out after a
** few edges instead of down a whole subtree, for bounds a little weaker.
*/
struct dyng_landmarks {
  int k, objective;
  int undirected;
  uint32_t n;             /* vertices each potential holds */
  uint32_t *vertex;       /* k landmark vertices */
  double **d;             /* k potentials */
  double *dmax;           /* per landmark: at least its largest finite d */
  double *slack;          /* per landmark: what rounding can add to a bound */
  dyng__radix_heap *heap; /* per landmark: the queue of its repairs */
  size_t loosened;        /* edges removed or reweighed since d was exact */
  int64_t n_update, n_recompute;
};

/* What rounding can add to a bound of landmark i: each d is a sum of at
** most n_vertices weights, each addition off by half an ulp of a sum of at
** most 2 dmax (a larger sum never decides a d), so a bound, the difference
** of two, is off by less than the slack. */
static void dyng__landmark_slack(dyng_landmarks *lm, int i) {
  lm->slack[i] = lm->dmax[i] * (4.0 * (double)lm->n + 16.0) * DBL_EPSILON + DBL_MIN;
}

void dyng_landmarks_free(dyng_landmarks *lm) {
  if (!lm) return;
  for (int i = 0; lm->d && i < lm->k; i++) dyng_free(lm->d[i]);
  for (int i = 0; lm->heap && i < lm->k; i++) dyng__heap_free(&lm->heap[i]);
  dyng_free(lm->d);
  dyng_free(lm->vertex);
  dyng_free(lm->dmax);
  dyng_free(lm->slack);
  dyng_free(lm->heap);
  dyng_free(lm);
}

/* DYNG_LANDMARK_SCALE, or the environment's value of that name (a
** number in (0, 1], read once) for measuring another. */
static double dyng__landmark_scale(void) {
  static _Atomic double scale = 0.0;
  double s = atomic_load(&scale);
  if (s == 0.0) {
    const char *z = getenv("DYNG_LANDMARK_SCALE");
    s = z ? strtod(z, NULL) : 0.0;
    if (!(s > 0.0 && s <= 1.0)) s = DYNG_LANDMARK_SCALE;
    atomic_store(&scale, s);
  }
  return s;
}

/* Landmark i's potential computed again: its exact distances on g, scaled. */
static int dyng__landmark_exact(dyng_landmarks *lm, int i, const dyng_graph_view *g, dyng_sssp_tree *t) {
  int rc = dyng_sssp_dijkstra(g, lm->vertex[i], lm->objective, DYNG_NONE, t);
  if (rc != DYNG_OK) return rc;
  double dmax = 0.0, *d = lm->d[i], scale = dyng__landmark_scale();
  for (uint32_t v = 0; v < lm->n; v++) {
    d[v] = scale * t->dist[v];
    if (!isinf(d[v]) && d[v] > dmax) dmax = d[v];
  }
  lm->dmax[i] = dmax;
  dyng__landmark_slack(lm, i);
  return DYNG_OK;
}

int dyng_landmarks_build(const dyng_graph_view *g, int objective, int k, dyng_landmarks **out) {
  *out = NULL;
  uint32_t n = g->n_vertices;
  if (k < 1 || objective < 0 || objective >= g->n_objectives || n == 0) return DYNG_EINVAL;
  dyng_landmarks *lm = dyng_calloc(1, sizeof *lm);
  if (!lm) return DYNG_ENOMEM;
  lm->objective = objective;
  lm->undirected = !g->directed;
  lm->n = n;
  lm->vertex = dyng_calloc((size_t)k, sizeof *lm->vertex);
  lm->d = dyng_calloc((size_t)k, sizeof *lm->d);
  lm->dmax = dyng_calloc((size_t)k, sizeof *lm->dmax);
  lm->slack = dyng_calloc((size_t)k, sizeof *lm->slack);
  lm->heap = dyng_calloc((size_t)k, sizeof *lm->heap);
  /* Per vertex: its distance from the nearest landmark so far. */
  double *nearest = dyng_malloc((size_t)n * sizeof *nearest);
  int rc = lm->vertex && lm->d && lm->dmax && lm->slack && lm->heap && nearest ? DYNG_OK : DYNG_ENOMEM;
  /* The first landmark is the vertex farthest from a vertex with edges. */
  uint32_t start = 0;
  while (start < n && g->out.deg[start] == 0) start++;
  if (start == n) start = 0;
  dyng_sssp_tree t;
  memset(&t, 0, sizeof t);
  if (rc == DYNG_OK) rc = dyng_sssp_tree_init(&t, n);
  if (rc == DYNG_OK) rc = dyng_sssp_dijkstra(g, start, objective, DYNG_NONE, &t);
  uint32_t next = start;
  if (rc == DYNG_OK) {
    for (uint32_t v = 0; v < n; v++) nearest[v] = INFINITY;
    for (uint32_t v = 0; v < n; v++)
      if (!isinf(t.dist[v]) && t.dist[v] > t.dist[next]) next = v;
  }
  for (int i = 0; rc == DYNG_OK && i < k; i++) {
    if (!(lm->d[i] = dyng_malloc((size_t)n * sizeof *lm->d[i]))) {
      rc = DYNG_ENOMEM;
      break;
    }
    lm->k = i + 1;
    lm->vertex[i] = next;
    if ((rc = dyng__landmark_exact(lm, i, g, &t)) != DYNG_OK) break;
    /* The next one: the vertex with edges farthest from every landmark
    ** (one no landmark reaches first: another component). */
    const double *d = lm->d[i];
    double best = -1.0;
    for (uint32_t v = 0; v < n; v++) {
      if (d[v] < nearest[v]) nearest[v] = d[v];
      if (g->out.deg[v] && nearest[v] > best) best = nearest[v], next = v;
    }
    if (best <= 0.0) break; /* every vertex is a landmark's own */
  }
  dyng_sssp_tree_free(&t);
  dyng_free(nearest);
  if (rc != DYNG_OK) {
    dyng_landmarks_free(lm);
    return rc;
  }
  *out = lm;
  return DYNG_OK;
}

/* Lowers d[y] to du + w when that is below it, and queues y. */
static inline int dyng__landmark_lower(dyng_landmarks *lm, int i, uint32_t y, double nd) {
  double *d = lm->d[i];
  if (!(nd < d[y])) return DYNG_OK;
  d[y] = nd;
  if (nd > lm->dmax[i]) lm->dmax[i] = nd;
  return dyng__heap_push(&lm->heap[i], dyng__key(nd), y);
}

/* Landmark i's potential after the batch ch: lowered where an added edge
** breaks it, and the lowering carried down the edges of g. */
static int dyng__landmark_repair(dyng_landmarks *lm, int i, const dyng_graph_view *g, const dyng_changes *ch) {
  dyng__radix_heap *h = &lm->heap[i];
  for (int b = 0; b < DYNG__BUCKETS; b++) h->b[b].n = 0;
  h->last = h->used = 0;
  h->size = 0;
  const double *d = lm->d[i];
  const int obj = lm->objective;
  int rc = DYNG_OK;
  for (size_t e = 0; rc == DYNG_OK && e < ch->n_added; e++) {
    const dyng_edge_change *c = &ch->added[e];
    double w = c->w[obj];
    rc = dyng__landmark_lower(lm, i, c->dst, d[c->src] + w);
    if (rc == DYNG_OK && lm->undirected) rc = dyng__landmark_lower(lm, i, c->src, d[c->dst] + w);
  }
  const double *wt = g->out.w[obj];
  while (rc == DYNG_OK && h->size) {
    dyng__item it;
    if ((rc = dyng__heap_pop(h, &it)) != DYNG_OK) break;
    uint32_t u = it.vertex;
    if (it.key != dyng__key(d[u])) continue; /* lowered again since */
    double du = d[u];
    uint32_t p = g->out.off[u], end = p + g->out.deg[u];
    for (; rc == DYNG_OK && p < end; p++) rc = dyng__landmark_lower(lm, i, g->out.nbr[p], du + wt[p]);
  }
  if (rc == DYNG_OK) dyng__landmark_slack(lm, i);
  return rc;
}

/* One update of the landmarks, a landmark per thread at a time. */
typedef struct dyng__landmark_job {
  dyng_team team;
  dyng_landmarks *lm;
  const dyng_graph_view *g;
  const dyng_changes *ch;
  int exact; /* compute the distances again instead of repairing */
} dyng__landmark_job;

static void dyng__landmark_worker(void *ctx, int thread) {
  (void)thread;
  dyng__landmark_job *j = ctx;
  uint32_t from, to;
  dyng_sssp_tree t;
  memset(&t, 0, sizeof t);
  int rc = j->exact ? dyng_sssp_tree_init(&t, j->g->n_vertices) : DYNG_OK;
  while (rc == DYNG_OK && dyng_team_take(&j->team, &from, &to))
    for (uint32_t i = from; rc == DYNG_OK && i < to; i++)
      rc = j->exact ? dyng__landmark_exact(j->lm, (int)i, j->g, &t) : dyng__landmark_repair(j->lm, (int)i, j->g, j->ch);
  dyng_sssp_tree_free(&t);
  if (rc != DYNG_OK) dyng_team_fail(&j->team, rc);
}

int dyng_landmarks_update(dyng_landmarks *lm, const dyng_graph_view *g, const dyng_changes *ch, int recompute) {
  uint32_t n = g->n_vertices;
  if (n > lm->n) {
    /* New vertices: no edge constrains them yet. */
    for (int i = 0; i < lm->k; i++) {
      if (dyng_resize(&lm->d[i], n, sizeof *lm->d[i])) return DYNG_ENOMEM;
      for (uint32_t v = lm->n; v < n; v++) lm->d[i][v] = INFINITY;
    }
    lm->n = n;
  }
  lm->loosened += ch->n_removed;
  dyng__landmark_job j;
  memset(&j, 0, sizeof j);
  j.lm = lm;
  j.g = g;
  j.ch = ch;
  j.exact = recompute || lm->loosened * DYNG_LANDMARK_LOOSE_SHARE > (size_t)g->n_edge_slots;
  dyng_team_init(&j.team, (uint32_t)lm->k, 1, 0, NULL);
  int rc = dyng_team_run(&j.team, dyng__landmark_worker, &j);
  if (rc != DYNG_OK) return rc;
  if (j.exact) {
    lm->loosened = 0;
    lm->n_recompute++;
  } else {
    lm->n_update++;
  }
  return DYNG_OK;
}

void dyng_landmarks_aim(const dyng_landmarks *lm, dyng_route_aim *aim) {
  aim->n = lm->k;
  aim->dist = (const double *const *)lm->d;
  aim->slack = lm->slack;
  aim->undirected = lm->undirected;
}

size_t dyng_landmarks_bytes(const dyng_landmarks *lm) {
  if (!lm) return 0;
  size_t n = (size_t)lm->k * lm->n * sizeof(double);
  for (int i = 0; i < lm->k; i++)
    for (int b = 0; b < DYNG__BUCKETS; b++) n += lm->heap[i].b[b].cap * sizeof(dyng__item);
  return n + sizeof *lm + (size_t)lm->k * (sizeof(uint32_t) + sizeof(double *) + 2 * sizeof(double) + sizeof(dyng__radix_heap));
}

int dyng_landmarks_objective(const dyng_landmarks *lm) { return lm->objective; }
int dyng_landmarks_count(const dyng_landmarks *lm) { return lm->k; }
uint32_t dyng_landmarks_vertex(const dyng_landmarks *lm, int i) { return lm->vertex[i]; }
int64_t dyng_landmarks_updates(const dyng_landmarks *lm) { return lm->n_update; }
int64_t dyng_landmarks_recomputes(const dyng_landmarks *lm) { return lm->n_recompute; }
