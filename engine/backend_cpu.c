/*
** engine/backend_cpu.c: the CPU backend.  It computes straight on the host
** graph's view, so its per-graph state holds nothing but the table it
** belongs to.
*/
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/sssp.h"

#include "config.h"

typedef struct dyng__cpu_state {
  const dyng_backend *be;
} dyng__cpu_state;

static int dyng__cpu_attach(const dyng_backend *be, const dyng_graph_view *view, void **state) {
  (void)view;
  dyng__cpu_state *s = dyng_malloc(sizeof *s);
  if (!s) return DYNG_ENOMEM;
  s->be = be;
  *state = s;
  return DYNG_OK;
}

static int dyng__cpu_update(void *state, const dyng_graph_view *view, const dyng_changes *changes) {
  (void)state;
  (void)view;
  (void)changes;
  return DYNG_OK;
}

static void dyng__cpu_detach(void *state) { dyng_free(state); }

static size_t dyng__cpu_device_bytes(void *state) {
  (void)state;
  return 0;
}

static int dyng__cpu_sssp(void *state, const dyng_graph_view *view, uint32_t source,
                          int objective, uint32_t target, dyng_sssp_tree *t) {
  (void)state;
  t->host_stale = 0;
  if (target == DYNG_NONE && dyng_sssp_parallel_pays(view)) return dyng_sssp_parallel(view, source, objective, t);
  return dyng_sssp_dijkstra(view, source, objective, target, t);
}

static int dyng__cpu_sssp_update(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                                 const dyng_edge_change *removed, size_t n_removed,
                                 const dyng_edge_change *added, size_t n_added, size_t max_touched,
                                 size_t *pn_touched) {
  (void)state;
  return dyng_sssp_update(view, t, removed, n_removed, added, n_added, max_touched, pn_touched);
}

static const char *dyng__cpu_error(void *state) {
  (void)state;
  return NULL;
}

static const dyng_backend dyng__cpu = {
    .name = "cpu",
    .version = PACKAGE_VERSION,
    .abi = DYNG_BACKEND_ABI,
    .concurrent = 1,
    .caps = 0,
    .graph_attach = dyng__cpu_attach,
    .graph_update = dyng__cpu_update,
    .graph_detach = dyng__cpu_detach,
    .graph_device_bytes = dyng__cpu_device_bytes,
    .sssp = dyng__cpu_sssp,
    .sssp_update = dyng__cpu_sssp_update,
    .error_message = dyng__cpu_error,
    .tree_release = NULL,
};

const dyng_backend *dyng_backend_cpu(void) { return &dyng__cpu; }
