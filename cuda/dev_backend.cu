/*
** cuda/dev_backend.cu: the CUDA backend's table (engine/backend.h).
**
** Each graph attached to it gets a state: its own stream, the graph's
** out-adjacency as a CSR in device memory (cuda/dev_sssp.cu) and the work
** space of a shortest-path search.  A batch is followed by copying the
** entries of the vertices it touched (cuda/dev_sssp.cu).  A tree is
** computed on the device and copied to the host arrays the caller owns; the
** device keeps its own copy, so that a batch repairs it there and sends the
** host only the rows that changed (dev_sssp_repair).  Every CUDA failure
** becomes a DYNG_E... code with the CUDA message in error_message(); out of
** device memory is DYNG_ENOMEM, which makes the host keep that graph on the
** CPU.  With DYNG_CUDA_PROFILE=1 every search writes one line to stderr:
** what it did (rounds, launches, host waits, rows changed) and where its
** time went.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_graph.cuh"
#include "cuda/dev_state.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "config.h"
#include "engine/error.h"
}

/* The backend's name, "cuda<MAJOR>" (plugin_build.h). */
#define DEV_STR2(x) #x
#define DEV_STR(x) DEV_STR2(x)
#define DEV_NAME "cuda" DEV_STR(DYNG_CUDA_MAJOR)

__global__ void k_unreached(unsigned long long *dist, uint32_t *parent, uint32_t *pedge, uint32_t from, uint32_t to) {
  for (uint32_t i = from + blockIdx.x * blockDim.x + threadIdx.x; i < to; i += gridDim.x * blockDim.x) {
    dist[i] = 0x7ff0000000000000ULL; /* +infinity */
    parent[i] = pedge[i] = 0xffffffffu;
  }
}

static void dev_tree_free(DevTree *t) {
  if (!t) return;
  cudaFree(t->dist);
  cudaFree(t->parent);
  cudaFree(t->pedge);
  free(t);
}

static void dev_state_free(DevState *st) {
  if (!st) return;
  while (st->trees) {
    DevTree *t = st->trees;
    st->trees = t->next;
    dev_tree_free(t);
  }
  dev_cycles_free(st->cycles);
  dev_mosp_free(st->mosp);
  dev_graph_free(&st->csr);
  dev_sssp_free(&st->ws);
  if (st->stream) cudaStreamDestroy(st->stream);
  free(st);
}

static size_t dev_trees_bytes(const DevState *st) {
  size_t b = 0;
  for (const DevTree *t = st->trees; t; t = t->next) b += (size_t)t->cap * 16;
  return b;
}

/* The device copy of host tree `key`, made (or grown, new vertices
** unreached) to hold n vertices. */
static int dev_tree_for(DevState *st, const dyng_sssp_tree *key, uint32_t n, DevTree **out) {
  DevTree *t = st->trees;
  while (t && t->key != key) t = t->next;
  if (!t) {
    t = (DevTree *)calloc(1, sizeof *t);
    if (!t) return DYNG_ENOMEM;
    t->key = key;
    t->next = st->trees;
    st->trees = t;
  }
  if (t->cap < n) {
    uint32_t cap = n + n / 8 + 1024;
    unsigned long long *d = NULL;
    uint32_t *p = NULL, *e = NULL;
    cudaError_t ce = dev_malloc((void **)&d, (size_t)cap * 8);
    if (ce == cudaSuccess) ce = dev_malloc((void **)&p, (size_t)cap * 4);
    if (ce == cudaSuccess) ce = dev_malloc((void **)&e, (size_t)cap * 4);
    if (ce == cudaSuccess && t->cap) {
      ce = cudaMemcpyAsync(d, t->dist, (size_t)t->cap * 8, cudaMemcpyDeviceToDevice, st->stream);
      if (ce == cudaSuccess) ce = cudaMemcpyAsync(p, t->parent, (size_t)t->cap * 4, cudaMemcpyDeviceToDevice, st->stream);
      if (ce == cudaSuccess) ce = cudaMemcpyAsync(e, t->pedge, (size_t)t->cap * 4, cudaMemcpyDeviceToDevice, st->stream);
    }
    /* New vertices: unreached. */
    if (ce == cudaSuccess) {
      k_unreached<<<(cap - t->cap + 255) / 256 < 65535 ? (cap - t->cap + 255) / 256 : 65535, 256, 0, st->stream>>>(
          d, p, e, t->cap, cap);
      ce = cudaGetLastError();
    }
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(st->stream);
    if (ce != cudaSuccess) {
      cudaFree(d), cudaFree(p), cudaFree(e);
      return dev_fail(ce, "keeping a tree on the device", st->err, sizeof st->err);
    }
    cudaFree(t->dist), cudaFree(t->parent), cudaFree(t->pedge);
    t->dist = d, t->parent = p, t->pedge = e;
    t->cap = cap;
  }
  *out = t;
  return DYNG_OK;
}

/* Why this thread's last graph_attach failed (it has no state to say it). */
static __thread char attach_err[512];

static int dev_attach(const dyng_backend *be, const dyng_graph_view *view, void **state) {
  (void)be;
  *state = NULL;
  DevState *st = (DevState *)calloc(1, sizeof *st);
  if (!st) return DYNG_ENOMEM;
  int rc = dev_fail(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), "cudaStreamCreate", st->err,
                    sizeof st->err);
  if (rc == DYNG_OK) rc = dev_graph_upload(&st->csr, view, st->stream, st->err, sizeof st->err);
  if (rc != DYNG_OK) {
    snprintf(attach_err, sizeof attach_err, "%s", st->err[0] ? st->err : "out of host memory");
    dev_state_free(st);
    return rc;
  }
  *state = st;
  return DYNG_OK;
}

static int dev_update(void *state, const dyng_graph_view *view, const dyng_changes *changes) {
  DevState *st = (DevState *)state;
  int rc = dev_graph_follow(&st->csr, view, changes, st->stream, st->err, sizeof st->err);
  dev_cycles_stale(st->cycles);
  /* Without the batch's edges on the device the kept copies cannot be
  ** repaired: they will be computed again. */
  if (rc != DYNG_OK || !changes)
    for (DevTree *t = st->trees; t; t = t->next) t->valid = 0;
  return rc;
}

static void dev_detach(void *state) { dev_state_free((DevState *)state); }

static size_t dev_device_bytes(void *state) {
  DevState *st = (DevState *)state;
  return st ? st->csr.bytes + st->ws.bytes + dev_trees_bytes(st) + dev_cycles_bytes(st->cycles) +
                  dev_mosp_bytes(st->mosp)
            : 0;
}

/* One line on stderr per search when DYNG_CUDA_PROFILE=1. */
static void dev_report(const char *what, int objective, uint32_t n, const DevProfile *p) {
  fprintf(stderr,
          "dyng-cuda: %s obj=%d n=%u loop=%s rounds=%u buckets=%u levels=%u roots=%u changed=%u copy=%s "
          "launches=%u looks=%u ms: prepare=%.3f cut=%.3f offers=%.3f search=%.3f parents=%.3f copy=%.3f "
          "total=%.3f\n",
          what, objective, n, p->device_loop ? "device" : "host", p->rounds, p->buckets, p->levels, p->roots,
          p->changed, p->full_copy ? "full" : "rows", p->launches, p->looks, p->ms[P_PREPARE], p->ms[P_CUT],
          p->ms[P_OFFERS], p->ms[P_SEARCH], p->ms[P_PARENTS], p->ms[P_COPY], p->ms[P_TOTAL]);
}

static void dev_finish_tree(const dyng_graph_view *view, uint32_t source, int objective, dyng_sssp_tree *t) {
  for (uint32_t v = view->n_vertices; v < t->n_vertices; v++) {
    t->dist[v] = INFINITY;
    t->parent[v] = t->parent_edge[v] = DYNG_NONE;
  }
  t->source = source;
  t->objective = objective;
  t->order_stale = 1;
}

static int dev_sssp(void *state, const dyng_graph_view *view, uint32_t source, int objective, uint32_t target,
                    dyng_sssp_tree *t) {
  (void)target; /* the whole tree is computed: it is what gets kept */
  DevState *st = (DevState *)state;
  if (source >= view->n_vertices || objective < 0 || objective >= view->n_objectives) return DYNG_EINVAL;
  if (t->n_vertices < view->n_vertices || st->csr.n != view->n_vertices) return DYNG_EINVAL;
  DevTree *dt = NULL;
  int rc = dev_tree_for(st, t, view->n_vertices, &dt);
  if (rc != DYNG_OK) return rc;
  dt->valid = 0;
  DevProfile prof;
  rc = dev_sssp_run(&st->csr, &st->ws, source, objective, st->stream, dt->dist, dt->parent, dt->pedge, t->dist,
                    t->parent, t->parent_edge, view->cancel, dev_profile_on() ? &prof : NULL, st->err,
                    sizeof st->err);
  if (rc != DYNG_OK) return rc;
  if (dev_profile_on()) dev_report("sssp", objective, view->n_vertices, &prof);
  dt->source = source;
  dt->obj = objective;
  dt->valid = 1;
  dev_finish_tree(view, source, objective, t);
  return DYNG_OK;
}

static int dev_sssp_update(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                           const dyng_edge_change *removed, size_t n_removed, const dyng_edge_change *added,
                           size_t n_added, size_t max_touched, size_t *pn_touched) {
  (void)removed, (void)n_removed, (void)added, (void)n_added, (void)max_touched;
  DevState *st = (DevState *)state;
  if (pn_touched) *pn_touched = 0;
  if (t->n_vertices < view->n_vertices || st->csr.n != view->n_vertices) return DYNG_EINVAL;
  DevTree *dt = st->trees;
  while (dt && dt->key != t) dt = dt->next;
  if (!dt || !dt->valid || dt->source != t->source || dt->obj != t->objective) {
    /* No device copy to repair: compute it again, on the device. */
    if (pn_touched) *pn_touched = view->n_vertices;
    return dev_sssp(state, view, t->source, t->objective, DYNG_NONE, t);
  }
  int rc = dev_tree_for(st, t, view->n_vertices, &dt);
  if (rc != DYNG_OK) return rc;
  size_t changed = 0;
  dt->valid = 0;
  DevProfile prof;
  rc = dev_sssp_repair(&st->csr, &st->ws, &st->csr.batch, t->source, t->objective, st->stream, dt->dist, dt->parent,
                       dt->pedge, t->dist, t->parent, t->parent_edge, &changed, view->cancel,
                       dev_profile_on() ? &prof : NULL, st->err, sizeof st->err);
  if (rc == DYNG_OK && dev_profile_on()) dev_report("repair", t->objective, view->n_vertices, &prof);
  if (rc == DYNG_ETOOBIG) {
    if (pn_touched) *pn_touched = view->n_vertices;
    return dev_sssp(state, view, t->source, t->objective, DYNG_NONE, t);
  }
  if (rc != DYNG_OK) return rc;
  dt->valid = 1;
  dev_finish_tree(view, t->source, t->objective, t);
  if (pn_touched) *pn_touched = changed;
  return DYNG_OK;
}

static void dev_tree_release(void *state, const dyng_sssp_tree *t) {
  DevState *st = (DevState *)state;
  for (DevTree **pp = &st->trees; *pp; pp = &(*pp)->next)
    if ((*pp)->key == t) {
      DevTree *x = *pp;
      *pp = x->next;
      dev_tree_free(x);
      return;
    }
}

static const char *dev_error(void *state) {
  DevState *st = (DevState *)state;
  if (!st) return attach_err[0] ? attach_err : NULL;
  return st->err[0] ? st->err : NULL;
}

static const dyng_backend dev_table = {
    DEV_NAME, PACKAGE_VERSION, DYNG_BACKEND_ABI, 0, dev_attach, dev_update, dev_detach,
    dev_device_bytes, dev_sssp, dev_sssp_update, dev_error, dev_tree_release,
    dev_cycles_count, dev_cycles_delta, NULL /* mosp_path */,
};

extern "C" const dyng_backend *dyng_cuda_backend(void) { return &dev_table; }
