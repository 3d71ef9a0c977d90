/*
** tests/fakes/fake_plugin.c: a backend plugin that computes on the CPU but
** otherwise behaves like dyng_cuda<MAJOR>.so, for the discovery tests.
** Compiled once per variant:
**   FAKE_MAJOR       the CUDA major it claims (required)
**   FAKE_ABI         the backend ABI it claims (default DYNG_BACKEND_ABI)
**   FAKE_VERSION     the dyng version it claims (default PACKAGE_VERSION)
**   FAKE_NO_ENTRY    exports no entry point
** $FAKE_PLUGIN_FAIL_INIT=<major> makes that major's init fail,
** $FAKE_PLUGIN_NO_MEMORY=<major> makes that major's trees from scratch fail
** as out of device memory, and $FAKE_CUDA_LOG gets "init <major> <device>"
** when init runs.
**
** $FAKE_PLUGIN_KEEP=<major> makes that major keep its trees as a GPU
** backend does: a tree it computes or updates goes into the state's own
** copy, the host's arrays are overwritten with rows no answer could come
** from (distance -1, no parent) and marked host_stale, and the host gets
** rows only through tree_fetch and tree_path.  It also counts cycles and
** finds the MOSP path itself (with the engine, on its copies).  With it,
** $FAKE_PLUGIN_MOSP_NO_MEMORY=<major> makes the MOSP path fail as out of
** device memory, $FAKE_PLUGIN_FETCH_FAILS=<major> makes every tree_fetch
** fail, and $FAKE_PLUGIN_SLOW_DELTA=<major> makes every cycle-count update
** run past its deadline (DYNG_EINTERRUPTED, as the host's deadline stops
** it); each update asked for adds "delta <k>" to $FAKE_CUDA_LOG.
** $FAKE_PLUGIN_RETURN=<major>:<entry>:<code> makes that entry (sssp,
** sssp_update, tree_path, mosp_path, cycles_count or matrix) of a keeping major
** return the engine code <code> (a number) instead of computing.
*/
#include "config.h"
#include "engine/cycles.h"
#include "engine/error.h"
#include "engine/mosp.h"
#include "engine/plugin.h"
#include "engine/route.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_ABI
#define FAKE_ABI DYNG_BACKEND_ABI
#endif
#ifndef FAKE_VERSION
#define FAKE_VERSION PACKAGE_VERSION
#endif
#define FAKE_STR2(x) #x
#define FAKE_STR(x) FAKE_STR2(x)

static dyng_backend fake_backend;

static size_t fake_device_bytes(void *state) {
  (void)state;
  return 4096;
}

static int fake_sssp(void *state, const dyng_graph_view *view, uint32_t source, int objective, uint32_t target,
                     dyng_sssp_tree *t) {
  const char *fail = getenv("FAKE_PLUGIN_NO_MEMORY");
  if (fail && atoi(fail) == FAKE_MAJOR) return DYNG_ENOMEM;
  return dyng_backend_cpu()->sssp(state, view, source, objective, target, t);
}

static const char *fake_error_message(void *state) {
  const char *fail = getenv("FAKE_PLUGIN_NO_MEMORY");
  if (state && fail && atoi(fail) == FAKE_MAJOR) return "cudaMalloc: out of memory (fake)";
  return dyng_backend_cpu()->error_message ? dyng_backend_cpu()->error_message(state) : NULL;
}

/* Whether $name names this plugin's major. */
static int fake_env_is_me(const char *name) {
  const char *v = getenv(name);
  return v && atoi(v) == FAKE_MAJOR;
}

/* The code $FAKE_PLUGIN_RETURN makes `entry` of this major return, else
** DYNG_OK. */
static int fake_forced(const char *entry) {
  const char *v = getenv("FAKE_PLUGIN_RETURN");
  int major = 0, code = 0;
  char name[32];
  if (!v || sscanf(v, "%d:%31[a-z_]:%d", &major, name, &code) != 3) return DYNG_OK;
  return major == FAKE_MAJOR && strcmp(name, entry) == 0 ? code : DYNG_OK;
}

/* ---- keeping trees (FAKE_PLUGIN_KEEP) ----------------------------------- */

typedef struct fake_tree {
  struct fake_tree *next;
  const dyng_sssp_tree *key; /* the host's tree */
  uint32_t n, source;
  double *dist;
  uint32_t *parent, *pedge;
} fake_tree;

typedef struct fake_state {
  fake_tree *trees;
  char err[160];
} fake_state;

static void fake_tree_free(fake_tree *k) {
  if (!k) return;
  free(k->dist), free(k->parent), free(k->pedge), free(k);
}

static fake_tree *fake_find(fake_state *st, const dyng_sssp_tree *t) {
  fake_tree *k = st->trees;
  while (k && k->key != t) k = k->next;
  return k;
}

static int fake_attach(const dyng_backend *be, const dyng_graph_view *view, void **state) {
  (void)be, (void)view;
  *state = calloc(1, sizeof(fake_state));
  return *state ? DYNG_OK : DYNG_ENOMEM;
}

static void fake_detach(void *state) {
  fake_state *st = state;
  if (!st) return;
  while (st->trees) {
    fake_tree *k = st->trees;
    st->trees = k->next;
    fake_tree_free(k);
  }
  free(st);
}

static int fake_update(void *state, const dyng_graph_view *view, const dyng_changes *changes) {
  (void)state, (void)view, (void)changes;
  return DYNG_OK;
}

/* Takes t's rows into the state's copy and leaves the host arrays wrong. */
static int fake_keep(fake_state *st, dyng_sssp_tree *t) {
  fake_tree *k = fake_find(st, t);
  if (!k) {
    if (!(k = calloc(1, sizeof *k))) return DYNG_ENOMEM;
    k->key = t;
    k->next = st->trees;
    st->trees = k;
  }
  double *d = realloc(k->dist, (size_t)(t->n_vertices ? t->n_vertices : 1) * sizeof *d);
  if (d) k->dist = d;
  uint32_t *p = realloc(k->parent, (size_t)(t->n_vertices ? t->n_vertices : 1) * sizeof *p);
  if (p) k->parent = p;
  uint32_t *e = realloc(k->pedge, (size_t)(t->n_vertices ? t->n_vertices : 1) * sizeof *e);
  if (e) k->pedge = e;
  if (!d || !p || !e) return DYNG_ENOMEM;
  k->n = t->n_vertices;
  k->source = t->source;
  memcpy(k->dist, t->dist, (size_t)k->n * sizeof *k->dist);
  memcpy(k->parent, t->parent, (size_t)k->n * sizeof *k->parent);
  memcpy(k->pedge, t->parent_edge, (size_t)k->n * sizeof *k->pedge);
  for (uint32_t v = 0; v < t->n_vertices; v++) {
    t->dist[v] = -1.0;
    t->parent[v] = t->parent_edge[v] = DYNG_NONE;
  }
  t->host_stale = 1;
  t->order_stale = 1;
  return DYNG_OK;
}

/* Row v of kept tree k into host tree t. */
static void fake_row(const fake_tree *k, dyng_sssp_tree *t, uint32_t v) {
  if (v < k->n) {
    t->dist[v] = k->dist[v];
    t->parent[v] = k->parent[v];
    t->parent_edge[v] = k->pedge[v];
  } else {
    t->dist[v] = INFINITY;
    t->parent[v] = t->parent_edge[v] = DYNG_NONE;
  }
}

static int fake_keep_sssp(void *state, const dyng_graph_view *view, uint32_t source, int objective,
                          uint32_t target, dyng_sssp_tree *t) {
  (void)target; /* the whole tree: it is what gets kept */
  if (fake_forced("sssp")) return fake_forced("sssp");
  int rc = dyng_backend_cpu()->sssp(NULL, view, source, objective, DYNG_NONE, t);
  return rc == DYNG_OK ? fake_keep(state, t) : rc;
}

static int fake_keep_sssp_update(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                                 const dyng_edge_change *removed, size_t n_removed, const dyng_edge_change *added,
                                 size_t n_added, size_t max_touched, size_t *pn_touched) {
  fake_tree *k = fake_find(state, t);
  if (fake_forced("sssp_update")) return fake_forced("sssp_update");
  if (!k) return fake_keep_sssp(state, view, t->source, t->objective, DYNG_NONE, t);
  for (uint32_t v = 0; v < t->n_vertices; v++) fake_row(k, t, v);
  t->host_stale = 0;
  int rc = dyng_backend_cpu()->sssp_update(NULL, view, t, removed, n_removed, added, n_added, max_touched,
                                           pn_touched);
  return rc == DYNG_OK ? fake_keep(state, t) : rc;
}

static void fake_tree_release(void *state, const dyng_sssp_tree *t) {
  fake_state *st = state;
  for (fake_tree **pp = &st->trees; *pp; pp = &(*pp)->next)
    if ((*pp)->key == t) {
      fake_tree *k = *pp;
      *pp = k->next;
      fake_tree_free(k);
      return;
    }
}

static int fake_tree_fetch(void *state, dyng_sssp_tree *t, const uint32_t *vertices, uint32_t n) {
  fake_state *st = state;
  fake_tree *k = fake_find(st, t);
  if (!k) return DYNG_ESTATE;
  if (fake_env_is_me("FAKE_PLUGIN_FETCH_FAILS")) {
    snprintf(st->err, sizeof st->err, "cudaMemcpy: unspecified launch failure (fake)");
    return DYNG_EBACKEND;
  }
  if (!vertices) {
    for (uint32_t v = 0; v < t->n_vertices; v++) fake_row(k, t, v);
    t->host_stale = 0;
    t->order_stale = 1;
    return DYNG_OK;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (vertices[i] >= t->n_vertices) return DYNG_EINVAL;
    fake_row(k, t, vertices[i]);
  }
  return DYNG_OK;
}

static int fake_tree_path(void *state, const dyng_sssp_tree *t, uint32_t target, uint32_t cap, uint32_t *vertex,
                          uint32_t *n) {
  fake_tree *k = fake_find(state, t);
  *n = 0;
  if (fake_forced("tree_path")) return fake_forced("tree_path");
  if (!k) return DYNG_ESTATE;
  if (target >= k->n || isinf(k->dist[target])) return DYNG_OK;
  uint32_t count = 1;
  for (uint32_t v = target; v != k->source; v = k->parent[v]) count++;
  *n = count;
  if (count > cap) return DYNG_ENOROOM;
  uint32_t i = 0;
  for (uint32_t v = target;; v = k->parent[v]) {
    vertex[i++] = v;
    if (v == k->source) break;
  }
  return DYNG_OK;
}

/* Appends a line to $FAKE_CUDA_LOG, when set. */
static void fake_log(const char *fmt, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

/* The cost matrix, on the host's engine: its dispatch is what is tested;
** each call adds "matrix <sources>" to $FAKE_CUDA_LOG. */
static int fake_matrix(void *state, const dyng_graph_view *view, int objective, const uint32_t *sources,
                       size_t n_sources, const uint32_t *targets, size_t n_targets, double *out) {
  (void)state;
  fake_log("matrix %zu\n", n_sources);
  if (fake_forced("matrix")) return fake_forced("matrix");
  return dyng_route_matrix(view, objective, sources, n_sources, targets, n_targets, out);
}

static int fake_mosp_path(void *state, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                          uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge,
                          uint32_t *n, double *ensemble_cost) {
  fake_state *st = state;
  *n = 0;
  if (fake_forced("mosp_path")) return fake_forced("mosp_path");
  if (fake_env_is_me("FAKE_PLUGIN_MOSP_NO_MEMORY")) {
    snprintf(st->err, sizeof st->err, "cudaMalloc (ensemble graph): out of memory (fake)");
    return DYNG_ENOMEM;
  }
  if (k < 1 || k > DYNG_MAX_WEIGHTS) return DYNG_EINVAL;
  dyng_sssp_tree copy[DYNG_MAX_WEIGHTS];
  const dyng_sssp_tree *ptr[DYNG_MAX_WEIGHTS];
  for (int i = 0; i < k; i++) {
    const fake_tree *kt = fake_find(st, trees[i]);
    if (!kt) return DYNG_ESTATE;
    memset(&copy[i], 0, sizeof copy[i]);
    copy[i].n_vertices = kt->n;
    copy[i].source = kt->source;
    copy[i].objective = trees[i]->objective;
    copy[i].dist = kt->dist;
    copy[i].parent = kt->parent;
    copy[i].parent_edge = kt->pedge;
    ptr[i] = &copy[i];
  }
  dyng_path path;
  int rc = dyng_mosp_path(ptr, k, view->n_vertices, view->n_edge_slots, view->edge_rowid, source, target, &path);
  if (rc != DYNG_OK) return rc;
  *n = path.n;
  *ensemble_cost = path.ensemble_cost;
  if (path.n > cap) rc = DYNG_ENOROOM;
  else if (path.n) {
    memcpy(vertex, path.vertex, (size_t)path.n * sizeof *vertex);
    memcpy(edge, path.edge, (size_t)(path.n - 1) * sizeof *edge);
  }
  dyng_path_free(&path);
  return rc;
}

static int fake_cycles_count(void *state, const dyng_graph_view *view, int k, int directed, uint64_t *count) {
  (void)state;
  if (fake_forced("cycles_count")) return fake_forced("cycles_count");
  return dyng_cycles_count(view, k, directed, view->cancel, count);
}

static int fake_cycles_delta(void *state, const dyng_graph_view *view, const dyng_changes *changes, int k,
                             int directed, dyng_cycles_diff *delta) {
  (void)state;
  fake_log("delta %d\n", k);
  if (fake_env_is_me("FAKE_PLUGIN_SLOW_DELTA")) return DYNG_EINTERRUPTED;
  return dyng_cycles_delta(view, changes, k, directed, view->cancel, delta);
}

static const char *fake_keep_error(void *state) {
  fake_state *st = state;
  return st && st->err[0] ? st->err : fake_error_message(state);
}

/* Adds each item of a range to its count, for fake_host_works. */
static void fake_count_range(void *ctx, size_t begin, size_t end) {
  _Atomic unsigned *count = ctx;
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&count[i], 1u);
}

/* 1 when the host's parallel_for runs every item of a range once, as the
** CUDA plugin relies on. */
static int fake_host_works(const dyng_host *host) {
  enum { N = 1000 };
  static _Atomic unsigned count[N];
  if (!host || !host->parallel_for) return 0;
  for (int i = 0; i < N; i++) atomic_init(&count[i], 0u);
  host->parallel_for(N, 7, fake_count_range, count);
  for (int i = 0; i < N; i++)
    if (atomic_load(&count[i]) != 1) return 0;
  return 1;
}

static int fake_init(int device, const dyng_host *host, char *err, size_t n_err) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (path) {
    FILE *f = fopen(path, "a");
    if (f) {
      fprintf(f, "init %d %d\n", FAKE_MAJOR, device);
      fclose(f);
    }
  }
  if (!fake_host_works(host)) {
    snprintf(err, n_err, "the host lent no working parallel_for");
    return DYNG_EBACKEND;
  }
  const char *fail = getenv("FAKE_PLUGIN_FAIL_INIT");
  if (fail && atoi(fail) == FAKE_MAJOR) {
    snprintf(err, n_err, "cudaSetDevice: fake failure of CUDA %d", FAKE_MAJOR);
    return DYNG_EBACKEND;
  }
  fake_backend = *dyng_backend_cpu();
  fake_backend.name = "cuda" FAKE_STR(FAKE_MAJOR);
  fake_backend.caps = DYNG_CAP_DEVICE; /* a device backend, as the CUDA plugin is */
  fake_backend.graph_device_bytes = fake_device_bytes;
  fake_backend.sssp = fake_sssp;
  fake_backend.error_message = fake_error_message;
  if (fake_env_is_me("FAKE_PLUGIN_KEEP")) {
    fake_backend.graph_attach = fake_attach;
    fake_backend.graph_update = fake_update;
    fake_backend.graph_detach = fake_detach;
    fake_backend.sssp = fake_keep_sssp;
    fake_backend.sssp_update = fake_keep_sssp_update;
    fake_backend.error_message = fake_keep_error;
    fake_backend.tree_release = fake_tree_release;
    fake_backend.tree_fetch = fake_tree_fetch;
    fake_backend.tree_path = fake_tree_path;
    fake_backend.mosp_path = fake_mosp_path;
    fake_backend.matrix = fake_matrix;
    fake_backend.cycles_count = fake_cycles_count;
    fake_backend.cycles_delta = fake_cycles_delta;
    fake_backend.concurrent = 0;
  }
  return 0;
}

static const dyng_plugin fake_plugin = {
    .abi = FAKE_ABI,
    .version = FAKE_VERSION,
    .cuda_major = FAKE_MAJOR,
    .cuda_runtime = FAKE_MAJOR * 1000,
    .archs = "sm_75,compute_75",
    .init = fake_init,
    .backend = &fake_backend,
};

#ifndef FAKE_NO_ENTRY
__attribute__((visibility("default"))) const dyng_plugin *dyng_plugin_entry(void) { return &fake_plugin; }
#else
__attribute__((visibility("default"))) const dyng_plugin *not_the_entry(void) { return &fake_plugin; }
#endif
