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
#include "engine/sssp_tie.h"

#include <math.h>
#include <string.h>

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
  dyng__heap_free(&r->heap);
  dyng_free(r->same.v);
  dyng_free(r);
}

size_t dyng_route_bytes(const dyng_route *r) {
  if (!r) return 0;
  size_t n = (size_t)r->cap * (4 * sizeof(uint32_t) + sizeof(double) + sizeof(uint32_t)) +
             r->taken_cap * sizeof(uint32_t) + r->same.cap * sizeof(uint64_t);
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
    if (!seen || !out || !want || dyng_resize(&r->dist, cap, sizeof *r->dist) ||
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

int dyng_route_search(dyng_route *r, const dyng_graph_view *g, uint32_t source, int objective,
                      const dyng_route_goal *goal) {
  uint32_t n = g->n_vertices;
  if (source >= n || objective < 0 || objective >= g->n_objectives) return DYNG_EINVAL;
  if (goal->target != DYNG_NONE && goal->target >= n) return DYNG_EINVAL;
  for (size_t i = 0; i < goal->n_targets; i++)
    if (goal->targets[i] >= n) return DYNG_EINVAL;
  int rc = dyng__route_begin(r, n);
  if (rc != DYNG_OK) return rc;
  const uint32_t stamp = r->stamp;
  size_t n_wanted = 0;
  if (goal->target == DYNG_NONE)
    for (size_t i = 0; i < goal->n_targets; i++)
      if (r->want[goal->targets[i]] != stamp) r->want[goal->targets[i]] = stamp, n_wanted++;
  const int by_targets = goal->target == DYNG_NONE && goal->n_targets > 0;
  const uint32_t *off = g->out.off, *deg = g->out.deg, *nbr = g->out.nbr, *ref = g->out.ref;
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
    r->out[u] = stamp;
    if (r->n_taken == r->taken_cap &&
        dyng_grow((void **)&r->taken, &r->taken_cap, r->n_taken + 1, sizeof *r->taken)) {
      rc = DYNG_ENOMEM;
      break;
    }
    r->taken[r->n_taken++] = u;
    if (u == goal->target) break;
    if (by_targets && r->want[u] == stamp && --n_wanted == 0) break;
    if (goal->max_taken && r->n_taken >= goal->max_taken) break;
    uint32_t hu = level[u];
    for (uint32_t p = off[u], end = off[u] + deg[u]; p < end; p++) {
      uint32_t x = nbr[p];
      double nd = du + w[p];
      double dx = dyng__rdist(r, x);
      if (nd > dx) continue;
      uint32_t hx = dyng__offer_level(du, hu, nd);
      if (nd < dx || hx < dyng__rlevel(r, x)) {
        seen[x] = stamp;
        dist[x] = nd;
        level[x] = hx;
        entry[x] = p;
        rc = nd == du ? dyng__fifo_push(&r->same, hx, x) : dyng__heap_push(&r->heap, dyng__key(nd), x);
        if (rc) break;
      } else if (hx == level[x] && x != source &&
                 dyng__edge_rank(g, ref[p] >> 1) < dyng__edge_rank(g, ref[entry[x]] >> 1)) {
        entry[x] = p;
      }
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
