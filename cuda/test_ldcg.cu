/*
** cuda/test_ldcg.cu: make check's probe of cuda/dev_load.cuh, compiled to
** PTX with each plugin's own compiler and flags by cuda/test_plugin_build.sh
** (never linked into a plugin).  Each kernel reads one address twice, with
** a fence or an atomic on that address between the reads; the PTX must
** hold two ld.global.cg loads per kernel.  (With clang's __ldcg the second
** read of each is merged into the first.)
*/
#include "cuda/dev_load.cuh"

__global__ void dyng_probe_fence_u32(const uint32_t *p, uint32_t *out) {
  uint32_t a = dyng_ldcg(p);
  __threadfence();
  uint32_t b = dyng_ldcg(p);
  out[threadIdx.x] = a * 1000u + b;
}

__global__ void dyng_probe_atomic_u64(unsigned long long *p, unsigned long long *out) {
  unsigned long long a = dyng_ldcg(p);
  atomicAdd(p, 1ull);
  unsigned long long b = dyng_ldcg(p);
  out[threadIdx.x] = a * 1000u + b;
}
