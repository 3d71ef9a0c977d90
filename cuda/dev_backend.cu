/*
** cuda/dev_backend.cu: the CUDA backend's table (engine/backend.h).
**
** Each graph attached to it gets a state: its own stream, the graph's
** out-adjacency as a CSR in device memory (cuda/dev_graph.cu) and the work
** space of a shortest-path search (cuda/dev_sssp.cu).  A batch is followed
** by copying the entries of the vertices it touched (cuda/dev_graph.cu).  A tree is
** computed on the device and stays there (the host's arrays are marked
** host_stale): a batch repairs it there (dev_sssp_repair), and a query
** copies the rows it reads (dev_tree_fetch, dev_tree_path).  Cycle counts
** (dev_cycles.cu) and the MOSP path (dev_mosp.cu) run on the same state.
** Every CUDA failure
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
#include "engine/errcode.h"
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
  cudaFree(st->d_pick);
  cudaFreeHost(st->h_pick);
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

DevTree *dev_tree_find(const DevState *st, const dyng_sssp_tree *t) {
  DevTree *dt = st->trees;
  while (dt && dt->key != t) dt = dt->next;
  return dt;
}

/* Whether dt, the device copy of host tree t, equals t's tree. */
static int dev_tree_is_current(const DevTree *dt, const dyng_sssp_tree *t) {
  return dt && dt->valid && dt->source == t->source && dt->obj == t->objective;
}

/* The device copy of host tree `key`, made (or grown, new vertices
** unreached) to hold n vertices. */
static int dev_tree_for(DevState *st, const dyng_sssp_tree *key, uint32_t n, DevTree **out) {
  DevTree *t = dev_tree_find(st, key);
  if (!t) {
    t = (DevTree *)calloc(1, sizeof *t);
    if (!t) return DYNG_ENOMEM;
    t->key = key;
    t->next = st->trees;
    st->trees = t;
  }
  if (t->cap < n) {
    /* Room to grow, within 32-bit vertex numbers. */
    uint64_t want = (uint64_t)n + n / 8 + 1024;
    uint32_t cap = want > 0xffffffffu ? 0xffffffffu : (uint32_t)want;
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
  if (rc == DYNG_OK) dev_cycles_followed(st->cycles, changes);
  else dev_cycles_stale(st->cycles);
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
                  dev_mosp_bytes(st->mosp) + (size_t)st->pick_cap * 24
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

/* A tree computed or repaired on the device: its rows stay there until
** the host asks for them (dev_tree_fetch). */
static void dev_finish_tree(uint32_t source, int objective, dyng_sssp_tree *t) {
  t->source = source;
  t->objective = objective;
  t->order_stale = 1;
  t->host_stale = 1;
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
  rc = dev_sssp_run(&st->csr, &st->ws, source, objective, st->stream, dt->dist, dt->parent, dt->pedge, NULL, NULL,
                    NULL, view->cancel, dev_profile_on() ? &prof : NULL, st->err, sizeof st->err);
  if (rc != DYNG_OK) return rc;
  if (dev_profile_on()) dev_report("sssp", objective, view->n_vertices, &prof);
  dt->source = source;
  dt->obj = objective;
  dt->valid = 1;
  dev_finish_tree(source, objective, t);
  return DYNG_OK;
}

static int dev_sssp_update(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                           const dyng_edge_change *removed, size_t n_removed, const dyng_edge_change *added,
                           size_t n_added, size_t max_touched, size_t *pn_touched) {
  (void)removed, (void)n_removed, (void)added, (void)n_added, (void)max_touched;
  DevState *st = (DevState *)state;
  if (pn_touched) *pn_touched = 0;
  if (t->n_vertices < view->n_vertices || st->csr.n != view->n_vertices) return DYNG_EINVAL;
  DevTree *dt = dev_tree_find(st, t);
  if (!dev_tree_is_current(dt, t)) {
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
                       dt->pedge, NULL, NULL, NULL, &changed, view->cancel, dev_profile_on() ? &prof : NULL, st->err,
                       sizeof st->err);
  if (rc == DYNG_OK && dev_profile_on()) dev_report("repair", t->objective, view->n_vertices, &prof);
  if (rc == DYNG_EGAVEUP) {
    if (pn_touched) *pn_touched = view->n_vertices;
    return dev_sssp(state, view, t->source, t->objective, DYNG_NONE, t);
  }
  if (rc != DYNG_OK) return rc;
  dt->valid = 1;
  dev_finish_tree(t->source, t->objective, t);
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

/* Room for n picked rows (dev_tree_fetch, dev_tree_path). */
static int dev_pick_reserve(DevState *st, uint32_t n) {
  if (n <= st->pick_cap) return DYNG_OK;
  cudaFree(st->d_pick);
  cudaFreeHost(st->h_pick);
  st->d_pick = st->h_pick = NULL;
  st->pick_cap = 0;
  uint64_t want = (uint64_t)n + n / 2 + 256;
  uint32_t cap = want > 0xffffffffu ? 0xffffffffu : (uint32_t)want;
  int rc = dev_fail(dev_malloc((void **)&st->d_pick, (size_t)cap * 24), "keeping query rows", st->err, sizeof st->err);
  if (rc == DYNG_OK)
    rc = dev_fail(cudaMallocHost((void **)&st->h_pick, (size_t)cap * 24), "keeping query rows (pinned host memory)",
                  st->err, sizeof st->err);
  if (rc != DYNG_OK) {
    cudaFree(st->d_pick);
    cudaFreeHost(st->h_pick);
    st->d_pick = st->h_pick = NULL;
    return rc;
  }
  st->pick_cap = cap;
  return DYNG_OK;
}

/* The device copy of host tree t, when it is current. */
static DevTree *dev_tree_current(DevState *st, const dyng_sssp_tree *t) {
  DevTree *dt = dev_tree_find(st, t);
  if (!dev_tree_is_current(dt, t)) {
    snprintf(st->err, sizeof st->err, "the device holds no current copy of the tree from vertex %u", t->source);
    return NULL;
  }
  return dt;
}

/* The rows of the n vertices listed after them (as 32-bit words from
** rows[3n] on), as (vertex, dist, edge << 32 | parent) triples. */
__global__ void k_pick_rows(unsigned long long *rows, uint32_t n, const unsigned long long *dist,
                            const uint32_t *parent, const uint32_t *pedge, uint32_t cap) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t v = ((const uint32_t *)(rows + 3 * (size_t)n))[i];
  unsigned long long *r = rows + 3 * (size_t)i;
  if (v < cap) {
    r[0] = v;
    r[1] = dist[v];
    r[2] = (unsigned long long)pedge[v] << 32 | parent[v];
  } else {
    r[0] = v;
    r[1] = 0x7ff0000000000000ULL; /* +infinity */
    r[2] = 0xffffffffffffffffULL;
  }
}

static int dev_tree_fetch(void *state, dyng_sssp_tree *t, const uint32_t *vertices, uint32_t n) {
  DevState *st = (DevState *)state;
  DevTree *dt = dev_tree_current(st, t);
  if (!dt) return DYNG_ESTATE;
  uint32_t have = dt->cap < st->csr.n ? dt->cap : st->csr.n;
  if (have > t->n_vertices) have = t->n_vertices;
  if (!vertices) {
    /* Every row: the three arrays (a distance's bits are the double's). */
    cudaError_t ce = cudaMemcpyAsync(t->dist, dt->dist, (size_t)have * 8, cudaMemcpyDeviceToHost, st->stream);
    if (ce == cudaSuccess)
      ce = cudaMemcpyAsync(t->parent, dt->parent, (size_t)have * 4, cudaMemcpyDeviceToHost, st->stream);
    if (ce == cudaSuccess)
      ce = cudaMemcpyAsync(t->parent_edge, dt->pedge, (size_t)have * 4, cudaMemcpyDeviceToHost, st->stream);
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(st->stream);
    if (ce != cudaSuccess) return dev_fail(ce, "copying a tree to the host", st->err, sizeof st->err);
    for (uint32_t v = have; v < t->n_vertices; v++) {
      t->dist[v] = INFINITY;
      t->parent[v] = t->parent_edge[v] = DYNG_NONE;
    }
    t->host_stale = 0;
    t->order_stale = 1;
    return DYNG_OK;
  }
  if (n == 0) return DYNG_OK;
  /* n rows of 24 bytes, then the list of their n vertices. */
  uint64_t room = (uint64_t)n + n / 6 + 1;
  if (room > 0xffffffffu) return DYNG_EINVAL; /* more rows than a tree has */
  int rc = dev_pick_reserve(st, (uint32_t)room);
  if (rc != DYNG_OK) return rc;
  uint32_t *h_list = (uint32_t *)(st->h_pick + 3 * (size_t)n);
  for (uint32_t i = 0; i < n; i++) {
    if (vertices[i] >= t->n_vertices) return DYNG_EINVAL;
    h_list[i] = vertices[i];
  }
  cudaError_t ce = cudaMemcpyAsync(st->d_pick + 3 * (size_t)n, h_list, (size_t)n * 4, cudaMemcpyHostToDevice,
                                   st->stream);
  if (ce == cudaSuccess) {
    k_pick_rows<<<(n + 255) / 256, 256, 0, st->stream>>>(st->d_pick, n, dt->dist, dt->parent, dt->pedge, have);
    ce = cudaGetLastError();
  }
  if (ce == cudaSuccess)
    ce = cudaMemcpyAsync(st->h_pick, st->d_pick, (size_t)n * 24, cudaMemcpyDeviceToHost, st->stream);
  if (ce == cudaSuccess) ce = cudaStreamSynchronize(st->stream);
  if (ce != cudaSuccess) return dev_fail(ce, "copying tree rows to the host", st->err, sizeof st->err);
  for (uint32_t i = 0; i < n; i++) {
    const unsigned long long *r = st->h_pick + 3 * (size_t)i;
    uint32_t v = (uint32_t)r[0];
    memcpy(&t->dist[v], &r[1], 8);
    t->parent[v] = (uint32_t)r[2];
    t->parent_edge[v] = (uint32_t)(r[2] >> 32);
  }
  return DYNG_OK;
}

/* The tree path from `target` back to `source`, by one thread: out[0 ..)
** gets up to cap vertices, *count their number (all of them, even past
** cap), or 0 when the target is unreached, or limit + 1 when the walk
** does not reach the source within `limit` steps (a broken tree). */
__global__ void k_tree_path(const unsigned long long *dist, const uint32_t *parent, uint32_t source,
                            uint32_t target, uint32_t cap, uint32_t limit, uint32_t *out, uint32_t *count) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  if (dist[target] == 0x7ff0000000000000ULL) {
    *count = 0;
    return;
  }
  uint32_t i = 0, v = target;
  for (;;) {
    if (i < cap) out[i] = v;
    i++;
    if (v == source || i > limit) break;
    v = parent[v];
    if (v == 0xffffffffu) {
      i = limit + 1;
      break;
    }
  }
  *count = i;
}

static int dev_tree_path(void *state, const dyng_sssp_tree *t, uint32_t target, uint32_t cap, uint32_t *vertex,
                         uint32_t *n) {
  DevState *st = (DevState *)state;
  *n = 0;
  DevTree *dt = dev_tree_current(st, t);
  if (!dt) return DYNG_ESTATE;
  uint32_t have = dt->cap < st->csr.n ? dt->cap : st->csr.n;
  if (target >= have) return DYNG_OK; /* a vertex newer than the tree: unreached */
  /* Room for its length and the path, 4 bytes each (a picked row is 24). */
  int rc = dev_pick_reserve(st, (uint32_t)(((uint64_t)cap + 1) * 4 / 24 + 1));
  if (rc != DYNG_OK) return rc;
  uint32_t *d_out = (uint32_t *)st->d_pick, *h_out = (uint32_t *)st->h_pick;
  k_tree_path<<<1, 32, 0, st->stream>>>(dt->dist, dt->parent, t->source, target, cap, have, d_out + 1, d_out);
  cudaError_t ce = cudaGetLastError();
  if (ce == cudaSuccess)
    ce = cudaMemcpyAsync(h_out, d_out, ((size_t)cap + 1) * 4, cudaMemcpyDeviceToHost, st->stream);
  if (ce == cudaSuccess) ce = cudaStreamSynchronize(st->stream);
  if (ce != cudaSuccess) return dev_fail(ce, "walking a tree path", st->err, sizeof st->err);
  uint32_t count = h_out[0];
  if (count > have) {
    snprintf(st->err, sizeof st->err, "the tree from vertex %u has no path from vertex %u back to it", t->source,
             target);
    return DYNG_EBACKEND;
  }
  *n = count;
  if (count > cap) return DYNG_ENOROOM;
  memcpy(vertex, h_out + 1, (size_t)count * 4);
  return DYNG_OK;
}

static const char *dev_error(void *state) {
  DevState *st = (DevState *)state;
  if (!st) return attach_err[0] ? attach_err : NULL;
  return st->err[0] ? st->err : NULL;
}

static const dyng_backend dev_table = {
    DEV_NAME, PACKAGE_VERSION, DYNG_BACKEND_ABI, 0, DYNG_CAP_DEVICE, dev_attach, dev_update, dev_detach,
    dev_device_bytes, dev_sssp, dev_sssp_update, dev_error, dev_tree_release,
    dev_cycles_count, dev_cycles_delta, dev_mosp_path,
    dev_tree_fetch, dev_tree_path, dev_matrix,
};

extern "C" const dyng_backend *dyng_cuda_backend(void) { return &dev_table; }
