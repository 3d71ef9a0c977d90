/*
** cuda/dev_common.cu: what every file of the CUDA plugin uses: the options
** read once from the environment (see cuda/README.md), device allocation
** under the DYNG_CUDA_MAX_ALLOC limit, and a CUDA error turned into a dyng
** error code with its message.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_graph.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engine/errcode.h"
}

static DevOptions read_options(void) {
  DevOptions o = {0, 0, 2, 4.0, (size_t)-1, 0};
  const char *z;
  if ((z = getenv("DYNG_CUDA_PROFILE")) && strcmp(z, "1") == 0) o.profile = 1;
  if ((z = getenv("DYNG_CUDA_HOST_LOOP")) && strcmp(z, "1") == 0) o.host_loop = 1;
  if ((z = getenv("DYNG_CUDA_LOOP_BLOCKS")) && atoi(z) > 0) o.blocks_per_sm = atoi(z);
  if ((z = getenv("DYNG_CUDA_DELTA")) && atof(z) > 0) o.delta = atof(z);
  if ((z = getenv("DYNG_CUDA_CYCLES_REBUILD")) && strcmp(z, "1") == 0) o.cycles_rebuild = 1;
  if ((z = getenv("DYNG_CUDA_MAX_ALLOC")) && *z) {
    char *end = NULL;
    unsigned long long x = strtoull(z, &end, 10);
    if (end && *end == 0) o.max_alloc = (size_t)x;
  }
  return o;
}

const DevOptions &dev_options(void) {
  static const DevOptions o = read_options();
  return o;
}

int dev_profile_on(void) { return dev_options().profile; }

/* What the host lent at init; NULL before (and in the plugin's own tests). */
static const dyng_host *host_lent;

void dev_set_host(const dyng_host *host) { host_lent = host; }

void dev_parallel_for(size_t n, size_t chunk, void (*fn)(void *ctx, size_t begin, size_t end), void *ctx) {
  if (host_lent && host_lent->parallel_for) host_lent->parallel_for(n, chunk, fn, ctx);
  else if (n) fn(ctx, 0, n);
}

int dev_cycles_rebuild_on(void) { return dev_options().cycles_rebuild; }

cudaError_t dev_malloc(void **p, size_t bytes) {
  if (bytes > dev_options().max_alloc) {
    *p = NULL;
    return cudaErrorMemoryAllocation;
  }
  return cudaMalloc(p, bytes);
}

cudaError_t dev_malloc_async(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  if (bytes > dev_options().max_alloc) {
    *p = NULL;
    return cudaErrorMemoryAllocation;
  }
  return cudaMallocFromPoolAsync(p, bytes, pool, stream);
}

int dev_fail(cudaError_t e, const char *what, char *err, size_t n_err) {
  if (e == cudaSuccess) return DYNG_OK;
  snprintf(err, n_err, "%s: %s", what, cudaGetErrorString(e));
  cudaGetLastError(); /* clear a sticky-free error */
  return e == cudaErrorMemoryAllocation ? DYNG_ENOMEM : DYNG_EBACKEND;
}

int dev_alloc(void **p, size_t bytes, size_t *total, const char *what, char *err, size_t n_err) {
  int rc = dev_fail(dev_malloc(p, bytes ? bytes : 1), what, err, n_err);
  if (rc != DYNG_OK) return rc;
  *total += bytes ? bytes : 1;
  return DYNG_OK;
}
