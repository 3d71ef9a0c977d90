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
*/
#include "config.h"
#include "engine/plugin.h"
#include "engine/error.h"

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

static int fake_init(int device, char *err, size_t n_err) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (path) {
    FILE *f = fopen(path, "a");
    if (f) {
      fprintf(f, "init %d %d\n", FAKE_MAJOR, device);
      fclose(f);
    }
  }
  const char *fail = getenv("FAKE_PLUGIN_FAIL_INIT");
  if (fail && atoi(fail) == FAKE_MAJOR) {
    snprintf(err, n_err, "cudaSetDevice: fake failure of CUDA %d", FAKE_MAJOR);
    return DYNG_EBACKEND;
  }
  fake_backend = *dyng_backend_cpu();
  fake_backend.name = "cuda" FAKE_STR(FAKE_MAJOR);
  fake_backend.graph_device_bytes = fake_device_bytes;
  fake_backend.sssp = fake_sssp;
  fake_backend.error_message = fake_error_message;
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
