/*
** engine/mirror.c: one graph's life: its backend, its kept trees and
** counts, its batches, and the move from a device to the CPU.
**
** Kept trees.  Each tree a query computes stays (dist, parent, parent
** edge) per (source, objective).  When a batch reaches the graph, each tree
** is repaired with the backend's sssp_update (the dynamic SSSP template of
** engine/sssp_dyn.c) instead of recomputed, unless the batch is so large
** that a recomputation is cheaper (DYNG_RECOMPUTE_SHARE).  The trees of a
** pool share a memory budget; past it the least recently used tree goes.
**
** Kept counts.  A k-cycle count, once asked for, is kept per (k, mode);
** each batch then updates it from the cycles through the changed edges
** instead of counting again, unless the update runs longer than the last
** count from scratch took: then it counts again.
**
** The CPU fallback.  A backend whose state lives on a device (DYNG_CAP_DEVICE)
** may run out of device memory at any analysis; dyng_mirror_leave_device
** moves the graph to the CPU backend, and every analysis here retries once
** there.
*/
#include "engine/mirror.h"
#include "engine/alloc.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/sssp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double dyng_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the give-up rule ----------------------------------------------------- */

int dyng_give_up_skips(dyng_give_up *p, size_t n_changed) {
  if (!p->at || n_changed < p->at) return 0;
  if (++p->skipped >= DYNG_RETRY_AFTER) p->at *= 2, p->skipped = 0;
  return 1;
}

void dyng_give_up_note(dyng_give_up *p, size_t n_changed) {
  if (!p->at || n_changed < p->at) p->at = n_changed;
  p->skipped = 0;
}

/* ---- the pool -------------------------------------------------------------- */

void dyng_mirror_pool_init(dyng_mirror_pool *pool, int64_t limit) {
  memset(pool, 0, sizeof *pool);
  pool->limit = limit;
  pool->pin_from = INT64_MAX;
}

int64_t dyng_kept_tree_bytes(const dyng_kept_tree *p) {
  size_t per = sizeof(double) + 3 * sizeof(uint32_t);
  return (int64_t)(sizeof *p + (size_t)p->tree.n_vertices * per);
}

static void kept_tree_free(dyng_kept_tree *p) {
  if (!p) return;
  /* Its backend may keep a copy (trees go before their mirror's state). */
  dyng_mirror *m = p->m;
  if (m && m->be && m->state && m->be->tree_release) m->be->tree_release(m->state, &p->tree);
  dyng_sssp_tree_free(&p->tree);
  dyng_free(p);
}

/* Unlinks *pp (a tree of its mirror) and frees it. */
static void kept_tree_drop(dyng_kept_tree **pp) {
  dyng_kept_tree *p = *pp;
  *pp = p->next;
  p->m->pool->bytes -= dyng_kept_tree_bytes(p);
  kept_tree_free(p);
}

/* Frees least recently used trees of the pool until `need` more bytes fit
** in the budget (or nothing is left to free). */
static void pool_make_room(dyng_mirror_pool *pool, int64_t need) {
  while (pool->bytes + need > pool->limit) {
    dyng_kept_tree **oldest = NULL;
    for (dyng_mirror *m = pool->first; m; m = m->next_in_pool)
      for (dyng_kept_tree **pp = &m->trees; *pp; pp = &(*pp)->next) {
        if ((*pp)->last_use >= pool->pin_from) continue; /* in use by this query */
        if (!oldest || (*pp)->last_use < (*oldest)->last_use) oldest = pp;
      }
    if (!oldest) return;
    kept_tree_drop(oldest);
  }
}

void dyng_mirror_pool_fit(dyng_mirror_pool *pool) { pool_make_room(pool, 0); }

void dyng_mirror_pool_pin(dyng_mirror_pool *pool, int on) {
  pool->pin_from = on ? pool->clock + 1 : INT64_MAX;
}

/* ---- life ------------------------------------------------------------------ */

int dyng_mirror_counts_kept(const dyng_mirror *m) {
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++)
      if (m->counts[d][k].valid) return 1;
  return 0;
}

void dyng_mirror_forget(dyng_mirror *m) {
  while (m->trees) kept_tree_drop(&m->trees);
  dyng_landmarks_free(m->landmarks);
  m->landmarks = NULL;
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) m->counts[d][k].valid = 0;
  dyng_changes_free(&m->changes);
}

int dyng_mirror_new(dyng_mirror_pool *pool, dyng_graph *graph, const dyng_backend *be, const char *why,
                    int require_device, const char *name, dyng_mirror **pm, char *err, size_t nerr) {
  *pm = NULL;
  if (nerr) err[0] = 0;
  dyng_mirror *m = dyng_calloc(1, sizeof *m);
  if (!m) {
    dyng_graph_free(graph);
    return DYNG_ENOMEM;
  }
  m->graph = graph;
  m->pool = pool;
  m->name = name;
  m->require_device = require_device;
  snprintf(m->why, sizeof m->why, "%s", why ? why : "");
  dyng_graph_view view;
  dyng_graph_get_view(graph, &view);
  int erc = be->graph_attach(be, &view, &m->state);
  if (erc != DYNG_OK && (be->caps & DYNG_CAP_DEVICE)) {
    /* The device could not take this graph (out of its memory, say): it
    ** is computed on the CPU, unless the device is required. */
    const char *msg = be->error_message ? be->error_message(NULL) : NULL;
    char gpu[400];
    snprintf(gpu, sizeof gpu, "the %s backend could not take the graph: %s", be->name,
             msg ? msg : dyng_strerror(erc));
    if (require_device) {
      snprintf(err, nerr, "%s", gpu);
      erc = DYNG_EBACKEND;
    } else {
      snprintf(m->why, sizeof m->why, "%s; computed on the CPU", gpu);
      be = dyng_backend_cpu();
      m->state = NULL;
      erc = be->graph_attach(be, &view, &m->state);
    }
  }
  if (erc != DYNG_OK) {
    dyng_graph_free(graph);
    dyng_free(m);
    return erc;
  }
  m->be = be;
  m->next_in_pool = pool->first;
  pool->first = m;
  *pm = m;
  return DYNG_OK;
}

void dyng_mirror_free(dyng_mirror *m) {
  if (!m) return;
  dyng_mirror_forget(m);
  for (dyng_mirror **pp = &m->pool->first; *pp; pp = &(*pp)->next_in_pool)
    if (*pp == m) {
      *pp = m->next_in_pool;
      break;
    }
  if (m->be && m->state) m->be->graph_detach(m->state);
  dyng_graph_free(m->graph);
  dyng_route_free(m->route);
  dyng_landmarks_free(m->landmarks);
  dyng_free(m);
}

/* Brings every kept tree wholly to the host (before the backend's state
** goes), with the tie levels the CPU's updates read (sssp.h); a tree that
** cannot come stays (or becomes) host_stale and is computed again on its
** next use (dyng_mirror_tree_rows, tree_follow). */
static void trees_to_host(dyng_mirror *m) {
  for (dyng_kept_tree *p = m->trees; p; p = p->next) {
    dyng_sssp_tree *t = &p->tree;
    if (dyng_mirror_tree_rows(m, t, NULL, 0) == DYNG_OK && !t->host_stale && dyng_sssp_tree_hops(t) == DYNG_OK)
      continue;
    t->host_stale = 1;
  }
}

int dyng_mirror_leave_device(dyng_mirror *m, const char *doing) {
  const dyng_backend *be = m->be, *cpu = dyng_backend_cpu();
  const char *msg = be->error_message ? be->error_message(m->state) : NULL;
  char gpu[400];
  snprintf(gpu, sizeof gpu, "the %s backend ran out of device memory %s (%s)", be->name, doing,
           msg ? msg : "out of memory");
  if (m->require_device) {
    snprintf(m->err, sizeof m->err, "%s", gpu);
    return DYNG_EBACKEND;
  }
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  void *state = NULL;
  int erc = cpu->graph_attach(cpu, &view, &state);
  if (erc != DYNG_OK) return erc;
  /* Kept trees come to the host and stay; the device copies go with the
  ** backend's state. */
  trees_to_host(m);
  be->graph_detach(m->state);
  m->be = cpu;
  m->state = state;
  snprintf(m->why, sizeof m->why, "%s; computed on the CPU", gpu);
  const dyng_hooks *h = &m->pool->hooks;
  if (h->moved) h->moved(h->ctx, m);
  return DYNG_OK;
}

/* An analysis on the backend returned erc: DYNG_ENOMEM from a device moves
** the graph to the CPU, and the caller tries once more (1); 0 otherwise,
** with *perc what to return (the move's failure, when it failed). */
static int retry_on_cpu(dyng_mirror *m, const char *doing, int *perc) {
  if (*perc != DYNG_ENOMEM || !(m->be->caps & DYNG_CAP_DEVICE)) return 0;
  int erc = dyng_mirror_leave_device(m, doing);
  if (erc != DYNG_OK) {
    *perc = erc;
    return 0;
  }
  return 1;
}

/* ---- trees ----------------------------------------------------------------- */

int dyng_mirror_tree(dyng_mirror *m, uint32_t source, int objective, const dyng_cancel *cancel,
                     dyng_sssp_tree **pt, dyng_kept_tree **owned) {
  dyng_mirror_pool *pool = m->pool;
  *pt = NULL;
  *owned = NULL;
  for (dyng_kept_tree *p = m->trees; p; p = p->next) {
    if (p->tree.source != source || p->tree.objective != objective) continue;
    p->last_use = ++pool->clock;
    p->n_hit++;
    *pt = &p->tree;
    return DYNG_OK;
  }
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  view.cancel = cancel;
  dyng_kept_tree *p = dyng_calloc(1, sizeof *p);
  if (!p) return DYNG_ENOMEM;
  p->m = m;
  int erc = dyng_sssp_tree_init(&p->tree, view.n_vertices);
  if (erc == DYNG_OK) {
    erc = m->be->sssp(m->state, &view, source, objective, DYNG_NONE, &p->tree);
    if (retry_on_cpu(m, "computing a shortest-path tree", &erc))
      erc = m->be->sssp(m->state, &view, source, objective, DYNG_NONE, &p->tree);
  }
  if (erc != DYNG_OK) {
    kept_tree_free(p);
    return erc;
  }
  p->last_use = ++pool->clock;
  /* Keep it if it fits the budget and the graph can be updated under it
  ** (a directed graph needs its in adjacency for that). */
  int64_t bytes = dyng_kept_tree_bytes(p) + (int64_t)view.n_vertices * 3 * (int64_t)sizeof(uint32_t);
  if (bytes > pool->limit || dyng_graph_build_in(m->graph) != DYNG_OK) {
    *pt = &p->tree;
    *owned = p;
    return DYNG_OK;
  }
  pool_make_room(pool, dyng_kept_tree_bytes(p));
  p->next = m->trees;
  m->trees = p;
  pool->bytes += dyng_kept_tree_bytes(p);
  *pt = &p->tree;
  return DYNG_OK;
}

void dyng_mirror_tree_release(dyng_kept_tree *owned) { kept_tree_free(owned); }

int dyng_mirror_route_pays(dyng_mirror *m, uint32_t source, int objective) {
  for (dyng_kept_tree *p = m->trees; p; p = p->next)
    if (p->tree.source == source && p->tree.objective == objective) return 0;
  /* A tree the budget cannot keep would be computed for nothing. */
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  int64_t tree_bytes = (int64_t)view.n_vertices * (int64_t)(sizeof(double) + 6 * sizeof(uint32_t));
  if (tree_bytes > m->pool->limit) return 1;
  uint64_t key = (uint64_t)(uint32_t)objective << 32 | source;
  unsigned n = m->recent_at < DYNG_ROUTE_RECENT ? m->recent_at : DYNG_ROUTE_RECENT;
  for (unsigned i = 0; i < n; i++)
    if (m->recent[i] == key) return 0;
  m->recent[m->recent_at++ % DYNG_ROUTE_RECENT] = key;
  if (m->recent_at >= 2 * DYNG_ROUTE_RECENT) m->recent_at -= DYNG_ROUTE_RECENT;
  return 1;
}

size_t dyng_mirror_landmark_bytes(const dyng_mirror *m, int n) {
  return (size_t)n * dyng_graph_n_vertices(m->graph) * sizeof(double);
}

int dyng_mirror_route(dyng_mirror *m, uint32_t source, int objective, const dyng_route_goal *goal,
                      int n_landmarks, const dyng_cancel *cancel, dyng_route **pr) {
  *pr = NULL;
  if (!m->route && !(m->route = dyng_route_new())) return DYNG_ENOMEM;
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  view.cancel = cancel;
  dyng_route_goal aimed = *goal;
  dyng_route_aim aim;
  if (goal->target != DYNG_NONE && n_landmarks > 0 && view.n_vertices >= DYNG_LANDMARK_MIN_VERTICES) {
    dyng_landmarks *lm = m->landmarks;
    if (lm && (dyng_landmarks_objective(lm) != objective || dyng_landmarks_count(lm) > n_landmarks)) {
      dyng_landmarks_free(lm);
      m->landmarks = lm = NULL;
    }
    /* Built once, then kept up to date by every batch. */
    int erc = lm ? DYNG_OK : dyng_landmarks_build(&view, objective, n_landmarks, &m->landmarks);
    if (erc == DYNG_EINTERRUPTED) return erc;
    /* Out of memory for them: the search goes unaimed. */
    if (m->landmarks) {
      dyng_landmarks_aim(m->landmarks, &aim);
      aimed.aim = &aim;
    }
  }
  int erc = dyng_route_search(m->route, &view, source, objective, &aimed);
  if (erc == DYNG_OK) *pr = m->route;
  return erc;
}

int dyng_mirror_matrix_on_backend(const dyng_mirror *m, size_t n_sources) {
  return m->be->matrix && n_sources >= DYNG_MATRIX_DEVICE_MIN_SOURCES &&
         dyng_graph_n_vertices(m->graph) >= DYNG_MATRIX_DEVICE_MIN_VERTICES;
}

int dyng_mirror_matrix(dyng_mirror *m, int objective, const uint32_t *sources, size_t n_sources,
                       const uint32_t *targets, size_t n_targets, const dyng_cancel *cancel, double *out,
                       int *on_backend) {
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  view.cancel = cancel;
  *on_backend = 0;
  if (dyng_mirror_matrix_on_backend(m, n_sources)) {
    int erc = m->be->matrix(m->state, &view, objective, sources, n_sources, targets, n_targets, out);
    /* Out of device memory for a pass: the host computes this one. */
    if (erc != DYNG_ENOMEM) {
      *on_backend = 1;
      if (erc == DYNG_OK) m->matrices_backend++;
      return erc;
    }
  }
  int erc = dyng_route_matrix(&view, objective, sources, n_sources, targets, n_targets, out);
  if (erc == DYNG_OK) m->matrices_host++;
  return erc;
}

int dyng_mirror_tree_rows(dyng_mirror *m, dyng_sssp_tree *t, const uint32_t *v, uint32_t n) {
  if (!t->host_stale) return DYNG_OK;
  const dyng_backend *be = m->be;
  if (be->tree_fetch) {
    int erc = be->tree_fetch(m->state, t, v, v ? n : 0);
    /* Some rows need device room to be gathered; every row needs none. */
    if (erc == DYNG_ENOMEM && v) erc = be->tree_fetch(m->state, t, NULL, 0);
    return erc;
  }
  /* The backend that held it is gone (the graph left the device while a
  ** query held a tree it does not keep): computed again, on the host. */
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  int erc = dyng_sssp_tree_grow(t, view.n_vertices);
  if (erc == DYNG_OK) erc = be->sssp(m->state, &view, t->source, t->objective, DYNG_NONE, t);
  if (erc == DYNG_OK && t->host_stale) erc = DYNG_ESTATE;
  return erc;
}

int dyng_mirror_tree_path(dyng_mirror *m, dyng_sssp_tree *t, uint32_t target, uint32_t **pv, uint32_t *pn) {
  *pv = NULL;
  *pn = 0;
  const dyng_backend *be = m->be;
  if (t->host_stale && !be->tree_path) {
    int erc = dyng_mirror_tree_rows(m, t, NULL, 0);
    if (erc != DYNG_OK) return erc;
  }
  if (!t->host_stale) {
    if (isinf(t->dist[target])) return DYNG_OK;
    uint32_t n = 1;
    for (uint32_t v = target; v != t->source; v = t->parent[v]) n++;
    uint32_t *av = dyng_malloc((size_t)n * sizeof *av);
    if (!av) return DYNG_ENOMEM;
    uint32_t i = 0;
    for (uint32_t v = target;; v = t->parent[v]) {
      av[i++] = v;
      if (v == t->source) break;
    }
    *pv = av;
    *pn = n;
    return DYNG_OK;
  }
  /* On the device: room for 4096 vertices first, then for what it needs. */
  uint32_t cap = t->n_vertices < 4096 ? t->n_vertices : 4096;
  for (;;) {
    uint32_t *av = dyng_malloc((size_t)(cap ? cap : 1) * sizeof *av);
    if (!av) return DYNG_ENOMEM;
    uint32_t n = 0;
    int erc = be->tree_path(m->state, t, target, cap, av, &n);
    if (erc == DYNG_ENOROOM && n > cap && n <= t->n_vertices) {
      dyng_free(av);
      cap = n;
      continue;
    }
    if (erc == DYNG_ENOMEM) {
      /* No device room for the walk: every row to the host, and the walk
      ** there. */
      dyng_free(av);
      erc = be->tree_fetch(m->state, t, NULL, 0);
      return erc == DYNG_OK ? dyng_mirror_tree_path(m, t, target, pv, pn) : erc;
    }
    if (erc == DYNG_OK && n) erc = be->tree_fetch(m->state, t, av, n);
    if (erc != DYNG_OK || !n) {
      dyng_free(av);
      return erc;
    }
    *pv = av;
    *pn = n;
    return DYNG_OK;
  }
}

/*
** When to recompute a tree rather than update it.  bench/bench_dyn measured
** where the two cross: at about a quarter of the edges changed on R-MAT,
** but at a few hundred to a few thousand changes on a road-like grid, whose
** deep trees move wholesale.  So: a batch that changes more than
** 1/DYNG_RECOMPUTE_SHARE of the edges recomputes at once; otherwise the
** update runs with a work budget of 1/DYNG_UPDATE_BUDGET of the vertices
** and, past it, gives up and recomputes.  Each tree remembers the batches
** that gave up (dyng_give_up) and recomputes batches at least that large
** directly.
*/
#define DYNG_RECOMPUTE_SHARE 8
#define DYNG_UPDATE_BUDGET 4

/* The rule above: a batch of n_changed changes is huge when kept trees
** and landmarks compute again at once; otherwise a tree's repair has the
** work budget batch_budget. */
static int batch_huge(const dyng_mirror *m, size_t n_changed) {
  return n_changed * DYNG_RECOMPUTE_SHARE > (size_t)dyng_graph_n_edges(m->graph);
}

static size_t batch_budget(const dyng_mirror *m) {
  size_t budget = dyng_graph_n_vertices(m->graph) / DYNG_UPDATE_BUDGET;
  return budget < 1024 ? 1024 : budget;
}

/* One tree's part of a batch: what was decided and how it went. */
typedef struct tree_job {
  dyng_kept_tree *p;
  int64_t before;   /* its bytes before */
  int erc;          /* DYNG_OK or why it could not follow */
  int recompute;    /* it was computed again */
  size_t touched;   /* vertex entries changed */
  double ms;        /* time taken */
} tree_job;

/* What the threads of one trees_update share. */
typedef struct trees_run {
  dyng_mirror *m;
  const dyng_changes *ch;
  const dyng_graph_view *view;
  int huge;         /* the batch is past 1/DYNG_RECOMPUTE_SHARE */
  size_t budget;    /* max_touched of an update */
  tree_job *job;
  dyng_team team;
} trees_run;

/* Updates or recomputes one tree (may run on any thread). */
static void tree_follow(trees_run *run, tree_job *job) {
  dyng_mirror *m = run->m;
  const dyng_changes *ch = run->ch;
  const dyng_graph_view *view = run->view;
  dyng_kept_tree *p = job->p;
  size_t n_changed = ch->n_removed + ch->n_added;
  double t0 = dyng_now_ms();
  int erc = DYNG_OK;
  size_t touched = 0;
  int recompute = run->huge;
  /* Rows the backend no longer holds (the graph left the device and they
  ** could not come over): only a recomputation brings them back. */
  if (p->tree.host_stale && !m->be->tree_fetch) recompute = 1;
  if (!recompute) recompute = dyng_give_up_skips(&p->give_up, n_changed);
  if (!recompute) erc = dyng_sssp_tree_grow(&p->tree, view->n_vertices);
  if (!recompute && erc == DYNG_OK) {
    erc = m->be->sssp_update(m->state, view, &p->tree, ch->removed, ch->n_removed, ch->added, ch->n_added,
                             run->budget, &touched);
    if (erc == DYNG_EGAVEUP) {
      dyng_give_up_note(&p->give_up, n_changed);
      recompute = 1;
    }
  }
  if (recompute) {
    if (p->tree.n_vertices < view->n_vertices) {
      uint32_t src = p->tree.source;
      int obj = p->tree.objective;
      dyng_sssp_tree_free(&p->tree);
      erc = dyng_sssp_tree_init(&p->tree, view->n_vertices);
      p->tree.source = src;
      p->tree.objective = obj;
    } else {
      erc = DYNG_OK;
    }
    if (erc == DYNG_OK)
      erc = m->be->sssp(m->state, view, p->tree.source, p->tree.objective, DYNG_NONE, &p->tree);
    touched = view->n_vertices;
  }
  job->erc = erc;
  job->recompute = recompute;
  job->touched = touched;
  job->ms = dyng_now_ms() - t0;
}

static void trees_worker(void *ctx, int thread) {
  trees_run *run = ctx;
  uint32_t from, to;
  (void)thread;
  while (dyng_team_take(&run->team, &from, &to))
    for (uint32_t i = from; i < to; i++) tree_follow(run, &run->job[i]);
}

/* Batches smaller than this update a mirror's trees one after the other:
** below it an update costs microseconds, less than waking threads. */
#define DYNG_TREES_PARALLEL_FROM 256

/* Brings the kept trees up to date with a batch already applied to the
** graph; a tree that cannot follow is dropped. */
static void trees_update(dyng_mirror *m, const dyng_changes *ch) {
  dyng_mirror_pool *pool = m->pool;
  if (!m->trees) return;
  pool->update_stamp++;
  size_t n_changed = ch->n_removed + ch->n_added;
  if (n_changed == 0) return;
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  trees_run run;
  memset(&run, 0, sizeof run);
  run.m = m;
  run.ch = ch;
  run.view = &view;
  run.huge = batch_huge(m, n_changed);
  run.budget = batch_budget(m);
  uint32_t n_tree = 0;
  for (dyng_kept_tree *p = m->trees; p; p = p->next) n_tree++;
  run.job = dyng_calloc(n_tree, sizeof *run.job);
  if (!run.job) {
    /* No room to keep track: drop the trees, the next queries recompute. */
    while (m->trees) kept_tree_drop(&m->trees);
    return;
  }
  uint32_t i = 0;
  for (dyng_kept_tree *p = m->trees; p; p = p->next, i++) {
    run.job[i].p = p;
    run.job[i].before = dyng_kept_tree_bytes(p);
  }
  int parallel = m->be->concurrent && n_tree > 1 && n_changed >= DYNG_TREES_PARALLEL_FROM;
  dyng_team_init(&run.team, n_tree, 1, parallel ? 0 : 1, NULL);
  dyng_team_run(&run.team, trees_worker, &run);

  /* Book-keeping, in list order, on the calling thread. */
  i = 0;
  for (dyng_kept_tree **pp = &m->trees; *pp; i++) {
    dyng_kept_tree *p = *pp;
    tree_job *job = &run.job[i];
    pool->bytes += dyng_kept_tree_bytes(p) - job->before;
    if (job->erc != DYNG_OK) {
      /* A tree that could not follow is dropped; the next query recomputes. */
      kept_tree_drop(pp);
      continue;
    }
    p->last_ms = job->ms;
    p->last_recompute = job->recompute;
    p->last_touched = job->touched;
    p->stamp = pool->update_stamp;
    if (job->recompute) p->n_recompute++;
    else p->n_update++;
    pp = &p->next;
  }
  dyng_free(run.job);
  pool_make_room(pool, 0);
}

/* ---- cycle counts ---------------------------------------------------------- */

int dyng_backend_counts_cycles(const dyng_backend *be) { return be->cycles_count && be->cycles_delta; }

/* Counts the k-cycles on the backend (the host engine unless the backend
** has both cycles entries); out of device memory moves the graph to the
** CPU and counts there. */
static int cycles_count(dyng_mirror *m, const dyng_graph_view *view, int k, int directed, uint64_t *pn) {
  if (!dyng_backend_counts_cycles(m->be)) return dyng_cycles_count(view, k, directed, view->cancel, pn);
  int erc = m->be->cycles_count(m->state, view, k, directed, pn);
  if (retry_on_cpu(m, "counting cycles", &erc)) return cycles_count(m, view, k, directed, pn);
  return erc;
}

/* Brings *pn, the k-cycle count before the batch ch, up to date, on the
** backend (the host engine unless it has both cycles entries). */
static int cycles_follow(dyng_mirror *m, const dyng_graph_view *view, const dyng_changes *ch, int k,
                         int directed, uint64_t *pn) {
  if (!dyng_backend_counts_cycles(m->be)) return dyng_cycles_update(view, ch, k, directed, view->cancel, pn);
  dyng_cycles_diff d;
  int erc = m->be->cycles_delta(m->state, view, ch, k, directed, &d);
  return erc == DYNG_OK ? dyng_cycles_apply(&d, pn) : erc;
}

/* Counts k-cycles from scratch into *c, stopped by cancel. */
static int count_from_scratch(dyng_mirror *m, int k, int directed, dyng_kept_count *c,
                              const dyng_cancel *cancel) {
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  view.cancel = cancel;
  double t0 = dyng_now_ms();
  uint64_t n = 0;
  int erc = cycles_count(m, &view, k, directed, &n);
  if (erc != DYNG_OK) return erc;
  c->n_cycles = n;
  c->count_ms = dyng_now_ms() - t0;
  return DYNG_OK;
}

/* count_from_scratch under a watch the hooks give (a batch's recount). */
static int recount(dyng_mirror *m, int k, int directed, dyng_kept_count *c) {
  const dyng_hooks *h = &m->pool->hooks;
  const dyng_cancel *cancel = NULL;
  void *watch = NULL;
  char what[200];
  snprintf(what, sizeof what, "counting %d-cycles%s of graph '%s'", k, directed ? " (directed)" : "",
           m->name ? m->name : "");
  if (h->watch_begin) {
    watch = h->watch_begin(h->ctx, what, "roots", &cancel);
    if (!watch) return DYNG_ENOMEM;
  }
  int erc = count_from_scratch(m, k, directed, c, cancel);
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  if (h->watch_end) h->watch_end(h->ctx, watch, view.n_vertices);
  return erc;
}

/* Stops an update once it has run longer than a recount took: on a graph
** with hubs the paths through the changed edges can cost far more than
** counting again (bench/bench_analyses: 4-cycles on R-MAT 16 cross at about
** 60 changes).  A count remembers the batches that gave up (dyng_give_up)
** and counts batches at least that large again at once, without spending
** that time first. */
typedef struct deadline {
  double end; /* dyng_now_ms() past which to stop */
} deadline;

static int past_deadline(void *ctx) { return dyng_now_ms() > ((deadline *)ctx)->end; }

/* Updates the kept counts with a batch already applied to the graph. */
static void counts_update(dyng_mirror *m, const dyng_changes *ch) {
  size_t n_changed = ch->n_removed + ch->n_added;
  if (n_changed == 0 || !dyng_mirror_counts_kept(m)) return;
  /* A directed graph's kept counts follow a batch with its in adjacency,
  ** built (from the graph after the batch) at the first batch they follow;
  ** without it they are counted again by the next query. */
  if (dyng_graph_build_in(m->graph) != DYNG_OK) {
    for (int d = 0; d < 2; d++)
      for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) m->counts[d][k].valid = 0;
    return;
  }
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) {
      dyng_kept_count *c = &m->counts[d][k];
      if (!c->valid) continue;
      double t0 = dyng_now_ms();
      uint64_t n = c->n_cycles;
      /* At most as long as counting again took (and at least 1 ms). */
      deadline dl = {t0 + (c->count_ms > 1.0 ? c->count_ms : 1.0)};
      dyng_cancel cancel = {past_deadline, &dl, NULL};
      view.cancel = &cancel;
      int direct = dyng_give_up_skips(&c->give_up, n_changed);
      int erc = direct ? DYNG_EINTERRUPTED : cycles_follow(m, &view, ch, k, d, &n);
      /* Past the deadline: batches this large count again at once. */
      if (erc == DYNG_EINTERRUPTED && !direct) dyng_give_up_note(&c->give_up, n_changed);
      if (erc == DYNG_OK) {
        c->n_cycles = n;
        c->n_update++;
        c->last_recount = 0;
      } else if (erc == DYNG_EINTERRUPTED && recount(m, k, d, c) == DYNG_OK) {
        c->n_recount++;
        c->last_recount = 1;
      } else {
        /* Counted again by the next query. */
        c->valid = 0;
        continue;
      }
      c->last_ms = dyng_now_ms() - t0;
      c->stamp = ++m->pool->update_stamp;
    }
}

int dyng_mirror_cycles(dyng_mirror *m, int k, int directed, const dyng_cancel *cancel, uint64_t *count) {
  if (k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K) return DYNG_EINVAL;
  dyng_kept_count *c = &m->counts[directed != 0][k];
  if (c->valid) {
    c->n_hit++;
    *count = c->n_cycles;
    return DYNG_OK;
  }
  int erc = count_from_scratch(m, k, directed != 0, c, cancel);
  if (erc != DYNG_OK) return erc;
  /* Kept for batches to update (see counts_update). */
  c->n_hit = c->n_update = c->n_recount = 0;
  memset(&c->give_up, 0, sizeof c->give_up);
  c->last_ms = 0;
  c->stamp = 0;
  c->valid = 1;
  *count = c->n_cycles;
  return DYNG_OK;
}

/* ---- batches --------------------------------------------------------------- */

int dyng_mirror_apply(dyng_mirror *m, dyng_batch *batch, dyng_apply_stats *stats) {
  /* With trees or counts kept, or a backend with its own copy of the
  ** graph, record what changed so that they follow. */
  int track = m->trees || m->landmarks || dyng_mirror_counts_kept(m) || (m->be->caps & DYNG_CAP_DEVICE);
  dyng_changes *ch = track ? &m->changes : NULL;
  double t0 = dyng_now_ms();
  int erc = dyng_graph_apply_tracked(m->graph, batch, stats, ch);
  double t1 = dyng_now_ms();
  if (erc == DYNG_OK) {
    dyng_graph_view view;
    dyng_graph_get_view(m->graph, &view);
    erc = m->be->graph_update(m->state, &view, ch);
    /* The kept trees still hold the graph before the batch: they come to
    ** the host with the move and follow the batch there. */
    if (retry_on_cpu(m, "following a batch", &erc)) erc = m->be->graph_update(m->state, &view, ch);
  }
  m->apply_ms += t1 - t0;
  m->backend_ms += dyng_now_ms() - t1;
  if (erc != DYNG_OK) return erc;
  if (ch && (m->trees || m->landmarks || dyng_mirror_counts_kept(m))) {
    double t2 = dyng_now_ms();
    trees_update(m, ch);
    counts_update(m, ch);
    /* Landmarks that cannot follow go; the next route builds them again. */
    if (m->landmarks) {
      dyng_graph_view view;
      dyng_graph_get_view(m->graph, &view);
      if (dyng_landmarks_update(m->landmarks, &view, ch, batch_huge(m, ch->n_removed + ch->n_added)) != DYNG_OK) {
        dyng_landmarks_free(m->landmarks);
        m->landmarks = NULL;
      }
    }
    m->kept_ms += dyng_now_ms() - t2;
  }
  return DYNG_OK;
}

/* ---- MOSP and Pareto ------------------------------------------------------- */

/* The ensemble path of trees t[0 .. k) on the backend (the host engine
** where it has no mosp_path); out of device memory moves the graph to the
** CPU, whose engine then computes it from the host's rows of the trees. */
static int mosp_on_backend(dyng_mirror *m, const dyng_graph_view *view, dyng_sssp_tree *const *t, int k,
                           uint32_t source, uint32_t target, dyng_path *path) {
  const dyng_backend *be = m->be;
  if (!be->mosp_path) {
    for (int i = 0; i < k; i++) {
      int erc = dyng_mirror_tree_rows(m, t[i], NULL, 0);
      if (erc != DYNG_OK) return erc;
    }
    return dyng_mosp_path((const dyng_sssp_tree *const *)t, k, view->n_vertices, view->n_edge_slots, view->edge_rowid, source,
                          target, path);
  }
  /* Room for a path of up to 4096 vertices first, then for the length the
  ** backend says it needs. */
  uint32_t cap = view->n_vertices < 4096 ? view->n_vertices : 4096;
  for (;;) {
    path->vertex = dyng_malloc((size_t)cap * sizeof *path->vertex);
    path->edge = dyng_malloc((size_t)cap * sizeof *path->edge);
    if (!path->vertex || !path->edge) {
      dyng_path_free(path);
      return DYNG_ENOMEM;
    }
    uint32_t n = 0;
    double cost = 0;
    int erc = be->mosp_path(m->state, view, (const dyng_sssp_tree *const *)t, k, source, target, cap,
                            path->vertex, path->edge, &n, &cost);
    if (erc == DYNG_OK) {
      path->n = n;
      path->ensemble_cost = cost;
      return DYNG_OK;
    }
    dyng_path_free(path);
    if (erc == DYNG_ENOROOM && n > cap && n <= view->n_vertices) {
      cap = n;
      continue;
    }
    if (retry_on_cpu(m, "finding an ensemble path", &erc))
      return mosp_on_backend(m, view, t, k, source, target, path);
    return erc;
  }
}

int dyng_mirror_mosp(dyng_mirror *m, uint32_t source, uint32_t target, const dyng_cancel *cancel,
                     dyng_path *path) {
  int k = dyng_graph_n_weights(m->graph);
  if (k < 1) k = 1;
  dyng_sssp_tree *t[DYNG_MAX_WEIGHTS];
  dyng_kept_tree *owned[DYNG_MAX_WEIGHTS] = {0};
  memset(path, 0, sizeof *path);
  int erc = DYNG_OK;
  /* Keep the trees of this query from evicting each other. */
  dyng_mirror_pool_pin(m->pool, 1);
  for (int i = 0; i < k && erc == DYNG_OK; i++) erc = dyng_mirror_tree(m, source, i, cancel, &t[i], &owned[i]);
  dyng_mirror_pool_pin(m->pool, 0);
  if (erc == DYNG_OK) {
    dyng_graph_view view;
    dyng_graph_get_view(m->graph, &view);
    view.cancel = cancel;
    erc = mosp_on_backend(m, &view, t, k, source, target, path);
  }
  for (int i = 0; i < k; i++) dyng_mirror_tree_release(owned[i]);
  return erc;
}

int dyng_mirror_pareto(dyng_mirror *m, uint32_t source, uint32_t target, size_t max_labels,
                       const dyng_cancel *cancel, dyng_front *front) {
  /* No backend computes fronts: always the host engine. */
  dyng_graph_view view;
  dyng_graph_get_view(m->graph, &view);
  view.cancel = cancel;
  return dyng_pareto_front(&view, source, target, max_labels, front);
}

/* ---- what the caller reports ----------------------------------------------- */

const char *dyng_mirror_backend_message(const dyng_mirror *m, int erc) {
  if (!m || !m->be || !(m->be->caps & DYNG_CAP_DEVICE) || !m->be->error_message || erc == DYNG_EINTERRUPTED)
    return NULL;
  return m->be->error_message(m->state);
}

size_t dyng_mirror_device_bytes(const dyng_mirror *m) {
  return m && m->be && m->state ? m->be->graph_device_bytes(m->state) : 0;
}

const char *dyng_mirror_runs_on(const dyng_mirror *m, int analysis) {
  const dyng_backend *be = m->be;
  const char *cpu = dyng_backend_cpu()->name;
  switch (analysis) {
    case DYNG_RUNS_SSSP: return be->name;
    case DYNG_RUNS_MOSP: return be->mosp_path ? be->name : cpu;
    case DYNG_RUNS_CYCLES: return dyng_backend_counts_cycles(be) ? be->name : cpu;
    case DYNG_RUNS_MATRIX: return be->matrix ? be->name : cpu;
    default: return cpu;
  }
}
