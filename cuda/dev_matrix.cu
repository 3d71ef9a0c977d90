/*
** cuda/dev_matrix.cu: cost matrices on the device, the CUDA backend's
** matrix (engine/backend.h), behind dyng_matrix:
**
**   SELECT * FROM dyng_matrix('net', '[1, 5, 9]', '[3, 4]');
**
** One search from a source keeps few vertices busy at a time (a road graph's
** frontier is a thin ring); many sources searched together fill the device.
** A pass takes B sources at once: item b * n + v is vertex v as seen from
** the pass's source b, with its own distance, and every kernel works on
** items of all B searches alike.
**
** The search is near-far: a near frontier of items below a threshold T is
** relaxed round by round (an item whose distance went down goes into the
** next round's frontier once, by a per-item stamp, or into the far queue
** once, by a per-item flag, when it is past T); when the near frontier runs
** dry, T moves to the least far distance plus a bucket width and the far
** queue is split again.  Distances go down by atomicMin on their IEEE-754
** bits (non-negative doubles order as their bits do), each one the double
** sum d(u) + w(u, v) the host's Dijkstra forms, so every distance settles
** at the least over paths of those sums: the host's, bit for bit.
**
** Memory: 32 bytes per item, so B is what half of the free device memory
** (at most 8 GiB) holds; B * n stays below 2^32 (items are 32-bit).
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define INF_BITS 0x7ff0000000000000ULL /* +infinity */
#define THREADS 256
#define ITEM_BYTES 32 /* dist 8, stamp 4, far flag 4, two near and two far slots 4 each */

/* The counters of one pass on the device. */
enum { C_NEAR, C_FAR, C_WORDS };

struct MatrixPass {
  uint32_t n;                   /* vertices */
  const uint32_t *off, *deg, *nbr;
  const double *w;
  unsigned long long *dist;     /* per item: its distance's bits */
  uint32_t *stamp;              /* per item: the round whose frontier holds it */
  uint32_t *far_flag;           /* per item: 1 while in the far queue */
  unsigned long long *ctr;      /* C_WORDS counters, then the least far distance */
};

__global__ void k_mx_fill(unsigned long long *dist, uint32_t *stamp, uint32_t *far_flag, size_t n_items) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_items) return;
  dist[i] = INF_BITS;
  stamp[i] = 0;
  far_flag[i] = 0;
}

__global__ void k_mx_seed(MatrixPass P, const uint32_t *src, uint32_t n_src, uint32_t *near) {
  uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n_src) return;
  uint32_t item = b * P.n + src[b];
  P.dist[item] = 0; /* the bits of +0.0 */
  P.stamp[item] = 1;
  near[b] = item;
}

/* Relaxes the out-entries of the frontier's items: an item whose distance
** went down goes into the next frontier (stamp `round`) below T, else into
** the far queue. */
__global__ void k_mx_relax(MatrixPass P, const uint32_t *front, uint32_t n_front, double T, uint32_t round,
                           uint32_t *near, uint32_t *far) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_front) return;
  uint32_t item = front[i];
  uint32_t u = item % P.n, base = item - u;
  double du = __longlong_as_double((long long)P.dist[item]);
  uint32_t p = P.off[u], end = p + P.deg[u];
  for (; p < end; p++) {
    uint32_t x = base + P.nbr[p];
    double nd = du + P.w[p];
    unsigned long long bits = (unsigned long long)__double_as_longlong(nd);
    if (bits >= P.dist[x]) continue;
    if (bits >= atomicMin(&P.dist[x], bits)) continue;
    if (nd < T) {
      if (atomicExch(&P.stamp[x], round) != round) near[atomicAdd(&P.ctr[C_NEAR], 1ULL)] = x;
    } else if (atomicExch(&P.far_flag[x], 1u) == 0) {
      far[atomicAdd(&P.ctr[C_FAR], 1ULL)] = x;
    }
  }
}

__global__ void k_mx_far_min(MatrixPass P, const uint32_t *far, uint32_t n_far) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_far) atomicMin(&P.ctr[C_WORDS], P.dist[far[i]]);
}

/* Splits the far queue at T: below it into the frontier of `round`, the
** rest into the other far queue. */
__global__ void k_mx_far_split(MatrixPass P, const uint32_t *far_in, uint32_t n_far, double T, uint32_t round,
                               uint32_t *near, uint32_t *far_out) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_far) return;
  uint32_t x = far_in[i];
  if (__longlong_as_double((long long)P.dist[x]) < T) {
    P.far_flag[x] = 0;
    if (atomicExch(&P.stamp[x], round) != round) near[atomicAdd(&P.ctr[C_NEAR], 1ULL)] = x;
  } else {
    far_out[atomicAdd(&P.ctr[C_FAR], 1ULL)] = x;
  }
}

__global__ void k_mx_gather(const unsigned long long *dist, uint32_t n, uint32_t n_src, const uint32_t *tgt,
                            uint32_t n_tgt, double *out) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)n_src * n_tgt) return;
  size_t b = i / n_tgt, j = i % n_tgt;
  out[i] = __longlong_as_double((long long)dist[b * n + tgt[j]]);
}

#define TRY(call, what)                                  \
  do {                                                   \
    if ((rc = dev_fail((call), (what), err, n_err))) goto done; \
  } while (0)

static unsigned blocks_of(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

/* The sources' rows of one pass, B = n_src of them, into out. */
static int matrix_pass(DevState *st, const dyng_graph_view *view, MatrixPass P, uint32_t *q[4], const uint32_t *d_src,
                       uint32_t n_src, const uint32_t *d_tgt, uint32_t n_tgt, double *d_out, double *out,
                       double delta) {
  char *err = st->err;
  size_t n_err = sizeof st->err;
  cudaStream_t s = st->stream;
  int rc = DYNG_OK;
  size_t n_items = (size_t)n_src * P.n;
  unsigned long long h[C_WORDS + 1];
  uint32_t *near = q[0], *next = q[1], *far = q[2], *far2 = q[3];
  uint32_t n_near = n_src, n_far = 0, round = 1;
  double T = delta;
  k_mx_fill<<<blocks_of(n_items), THREADS, 0, s>>>(P.dist, P.stamp, P.far_flag, n_items);
  TRY(cudaGetLastError(), "k_mx_fill");
  k_mx_seed<<<blocks_of(n_src), THREADS, 0, s>>>(P, d_src, n_src, near);
  TRY(cudaGetLastError(), "k_mx_seed");
  for (uint64_t step = 1;; step++) {
    if ((step & 15) == 1 && dev_stop_asked(view->cancel)) {
      rc = DYNG_EINTERRUPTED;
      goto done;
    }
    h[C_NEAR] = 0, h[C_FAR] = n_far, h[C_WORDS] = INF_BITS;
    TRY(cudaMemcpyAsync(P.ctr, h, sizeof h, cudaMemcpyHostToDevice, s), "cudaMemcpy (counters)");
    round++;
    if (n_near) {
      k_mx_relax<<<blocks_of(n_near), THREADS, 0, s>>>(P, near, n_near, T, round, next, far);
      TRY(cudaGetLastError(), "k_mx_relax");
      TRY(cudaMemcpyAsync(h, P.ctr, sizeof h, cudaMemcpyDeviceToHost, s), "cudaMemcpy (counters)");
      TRY(cudaStreamSynchronize(s), "a matrix round");
      uint32_t *t = near;
      near = next, next = t;
    } else {
      if (!n_far) break;
      k_mx_far_min<<<blocks_of(n_far), THREADS, 0, s>>>(P, far, n_far);
      TRY(cudaGetLastError(), "k_mx_far_min");
      TRY(cudaMemcpyAsync(&h[C_WORDS], &P.ctr[C_WORDS], 8, cudaMemcpyDeviceToHost, s), "cudaMemcpy (counters)");
      TRY(cudaStreamSynchronize(s), "a matrix round");
      double least;
      memcpy(&least, &h[C_WORDS], sizeof least);
      /* Never back: an item already done can be the least. */
      double from = least > T ? least : T;
      T = from + delta;
      if (!(T > from)) T = nextafter(from, INFINITY); /* delta below an ulp */
      h[C_FAR] = 0;
      TRY(cudaMemcpyAsync(&P.ctr[C_FAR], &h[C_FAR], 8, cudaMemcpyHostToDevice, s), "cudaMemcpy (counters)");
      k_mx_far_split<<<blocks_of(n_far), THREADS, 0, s>>>(P, far, n_far, T, round, near, far2);
      TRY(cudaGetLastError(), "k_mx_far_split");
      TRY(cudaMemcpyAsync(h, P.ctr, 16, cudaMemcpyDeviceToHost, s), "cudaMemcpy (counters)");
      TRY(cudaStreamSynchronize(s), "a matrix round");
      uint32_t *t = far;
      far = far2, far2 = t;
    }
    n_near = (uint32_t)h[C_NEAR];
    n_far = (uint32_t)h[C_FAR];
  }
  /* A pass of few rounds is asked once more at its end. */
  if (dev_stop_asked(view->cancel)) {
    rc = DYNG_EINTERRUPTED;
    goto done;
  }
  k_mx_gather<<<blocks_of((size_t)n_src * n_tgt), THREADS, 0, s>>>(P.dist, P.n, n_src, d_tgt, n_tgt, d_out);
  TRY(cudaGetLastError(), "k_mx_gather");
  TRY(cudaMemcpyAsync(out, d_out, (size_t)n_src * n_tgt * sizeof *out, cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  TRY(cudaStreamSynchronize(s), "copying a matrix");
done:
  return rc;
}

int dev_matrix(void *state, const dyng_graph_view *view, int objective, const uint32_t *sources, size_t n_sources,
               const uint32_t *targets, size_t n_targets, double *out) {
  DevState *st = (DevState *)state;
  st->err[0] = 0;
  char *err = st->err;
  size_t n_err = sizeof st->err;
  const DevGraph *c = &st->csr;
  uint32_t n = view->n_vertices;
  if (objective < 0 || objective >= view->n_objectives || c->n != n) return DYNG_EINVAL;
  for (size_t i = 0; i < n_sources; i++)
    if (sources[i] >= n) return DYNG_EINVAL;
  for (size_t j = 0; j < n_targets; j++)
    if (targets[j] >= n) return DYNG_EINVAL;
  if (!n_sources || !n_targets) return DYNG_OK;
  if (n_targets > 0xffffffffu) return DYNG_EINVAL;
  size_t free_b = 0, total_b = 0;
  int rc = dev_fail(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", err, n_err);
  if (rc) return rc;
  size_t budget = free_b / 2;
  if (budget > ((size_t)8 << 30)) budget = (size_t)8 << 30;
  size_t per = budget / ((size_t)ITEM_BYTES * n + (size_t)n_targets * sizeof(double));
  if (per > 0xfffffffeu / n) per = 0xfffffffeu / n;
  if (per > n_sources) per = n_sources;
  if (per < 1) {
    snprintf(st->err, sizeof st->err, "cost matrix: %u vertices per source do not fit the device's free memory", n);
    return DYNG_ENOMEM;
  }
  /* A bucket wide enough to keep rounds few and work near Dijkstra's. */
  double delta = c->mean_w[objective] * dev_options().delta;
  if (!(delta > 0) || isinf(delta)) delta = 1.0;
  size_t n_items = per * n;
  MatrixPass P;
  memset(&P, 0, sizeof P);
  P.n = n, P.off = c->off, P.deg = c->deg, P.nbr = c->nbr, P.w = c->w[objective];
  uint32_t *q[4] = {NULL, NULL, NULL, NULL}, *d_src = NULL, *d_tgt = NULL;
  double *d_out = NULL;
  size_t bytes = 0;
  if ((rc = dev_alloc((void **)&P.dist, n_items * 8, &bytes, "cost matrix distances", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&P.stamp, n_items * 4, &bytes, "cost matrix stamps", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&P.far_flag, n_items * 4, &bytes, "cost matrix flags", err, n_err))) goto done;
  for (int k = 0; k < 4; k++)
    if ((rc = dev_alloc((void **)&q[k], n_items * 4, &bytes, "cost matrix queues", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&P.ctr, (C_WORDS + 1) * 8, &bytes, "cost matrix counters", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&d_src, per * 4, &bytes, "cost matrix sources", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&d_tgt, n_targets * 4, &bytes, "cost matrix targets", err, n_err))) goto done;
  if ((rc = dev_alloc((void **)&d_out, per * n_targets * 8, &bytes, "cost matrix rows", err, n_err))) goto done;
  rc = dev_fail(cudaMemcpyAsync(d_tgt, targets, n_targets * 4, cudaMemcpyHostToDevice, st->stream), "cudaMemcpy",
                err, n_err);
  for (size_t at = 0; rc == DYNG_OK && at < n_sources; at += per) {
    uint32_t b = (uint32_t)(n_sources - at < per ? n_sources - at : per);
    rc = dev_fail(cudaMemcpyAsync(d_src, sources + at, (size_t)b * 4, cudaMemcpyHostToDevice, st->stream),
                  "cudaMemcpy", err, n_err);
    if (rc == DYNG_OK)
      rc = matrix_pass(st, view, P, q, d_src, b, d_tgt, (uint32_t)n_targets, d_out, out + at * n_targets, delta);
  }
done:
  /* Whatever a failed pass left queued is waited for before its memory goes. */
  cudaStreamSynchronize(st->stream);
  cudaFree(P.dist), cudaFree(P.stamp), cudaFree(P.far_flag), cudaFree(P.ctr);
  for (int k = 0; k < 4; k++) cudaFree(q[k]);
  cudaFree(d_src), cudaFree(d_tgt), cudaFree(d_out);
  return rc;
}
