/*
** cuda/dev_load.cuh: loads of global memory that skip L1 (ld.global.cg),
** for values another block wrote earlier in the same kernel (dev_sssp.cu's
** rounds, separated by grid-wide barriers).
**
** Why not __ldcg: NVIDIA's headers write it as `asm volatile`, clang's CUDA
** headers as a plain builtin load, which clang may merge with an earlier
** load of the same address in the same basic block, even across
** __threadfence() or an atomic on that address.  The plugin is compiled by
** nvcc (dyng_cuda13.so) and by clang (dyng_cuda12.so, cuda/README.md), so
** the code says what it needs itself: each dyng_ldcg is one load, kept in
** order with the others and never merged or dropped.  Like NVIDIA's
** __ldcg it names no memory clobber: it orders nothing else.
** cuda/test_ldcg.cu is make check's proof of that (cuda/test_plugin_build.sh).
*/
#ifndef DYNG_DEV_LOAD_CUH
#define DYNG_DEV_LOAD_CUH

#include <stdint.h>

static __device__ __forceinline__ uint32_t dyng_ldcg(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

static __device__ __forceinline__ unsigned long long dyng_ldcg(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

#endif
