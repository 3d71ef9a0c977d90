/*
** cuda/backend_cuda.cu: the CUDA backend's table (engine/backend.h).
**
** A stand-in until the device structures and kernels exist: every function
** fails with DYNG_EBACKEND and error_message() says "not implemented", so
** dyng keeps using the CPU.  The one kernel gives the plugin device code,
** which the build checks (cuda/test_plugin_build.sh) look for.
*/
#include "cuda/backend_cuda.h"

#define DYNG_CUDA_STR_(x) #x
#define DYNG_CUDA_STR(x) DYNG_CUDA_STR_(x)

/* Marks the vertices of a range as unreached (dist = +infinity). */
__global__ void dyng_cuda_fill_unreached(double *dist, unsigned n) {
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) dist[v] = __longlong_as_double(0x7ff0000000000000LL);
}

static int cuda_graph_attach(const dyng_backend *be, const dyng_graph_view *view, void **state) {
  *state = NULL;
  return DYNG_EBACKEND;
}

static int cuda_graph_update(void *state, const dyng_graph_view *view,
                             const dyng_changes *changes) {
  return DYNG_EBACKEND;
}

static void cuda_graph_detach(void *state) {}

static size_t cuda_graph_device_bytes(void *state) {
  return 0;
}

static int cuda_sssp(void *state, const dyng_graph_view *view, uint32_t source, int objective,
                     uint32_t target, dyng_sssp_tree *t) {
  return DYNG_EBACKEND;
}

static int cuda_sssp_update(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                            const dyng_edge_change *removed, size_t n_removed,
                            const dyng_edge_change *added, size_t n_added, size_t max_touched,
                            size_t *pn_touched) {
  return DYNG_EBACKEND;
}

static const char *cuda_error_message(void *state) {
  return "not implemented";
}

static const dyng_backend cuda_backend = {
    "cuda" DYNG_CUDA_STR(DYNG_CUDA_MAJOR), /* name */
    PACKAGE_VERSION,                       /* version */
    DYNG_BACKEND_ABI,                      /* abi */
    0,                                     /* concurrent */
    cuda_graph_attach,
    cuda_graph_update,
    cuda_graph_detach,
    cuda_graph_device_bytes,
    cuda_sssp,
    cuda_sssp_update,
    cuda_error_message,
};

extern "C" const dyng_backend *dyng_cuda_backend(void) {
  return &cuda_backend;
}
