/*
** engine/backend.h: the one seam between dyng and a compute backend.
**
** A backend is a table of function pointers plus its name, the dyng version
** it was built for and the ABI number of this header.  The CPU backend is
** compiled into dyng.so and fills the table statically; a GPU backend is a
** plugin whose single exported entry point fills one.  Only engine/mirror.c
** calls the table's entries (engine/choice.c starts a plugin and hands its
** table out); ext/ calls none of them.
**
** Contract: the host keeps the authoritative graph (engine/graph.h) and
** passes it as a read-only dyng_graph_view.  graph_attach builds the
** backend's own copy (the CPU backend reads the view directly and keeps
** nothing); graph_update is called after every change of the host graph.
** Results come back in host memory the caller owns, except the rows of a
** tree that a backend keeps (host_stale, tree_fetch below).  Functions
** return 0 or a negative DYNG_E... code and never let another kind of
** error (a C++ exception, a CUDA error) cross this boundary;
** error_message() gives the text of the last failure of a state, owned by
** the backend.
**
** The plugin ABI is this header, engine/types.h, engine/errcode.h and
** engine/plugin.h: they include nothing else of dyng, and a plugin
** (cuda/) includes nothing else of engine/.
*/
#ifndef DYNG_BACKEND_H
#define DYNG_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "engine/errcode.h"
#include "engine/types.h"

/* Bumped whenever this struct, engine/types.h, engine/plugin.h, a number
** of engine/errcode.h or the code an entry returns for a condition
** changes incompatibly (11: DYNG_EOVERFLOW, DYNG_EGAVEUP and DYNG_ENOROOM
** where 10 said DYNG_ETOOBIG). */
#define DYNG_BACKEND_ABI 12

/* The layout of every struct of the ABI on x86_64 (LP64), for ABI 11:
** S(struct, sizeof, alignment) and then, for each of its fields in order,
** F(struct, field, offsetof, sizeof).  tests/test_abi.c checks it against
** the compiler, so a change of layout fails there until this table is
** updated and DYNG_BACKEND_ABI bumped with it. */
#define DYNG_ABI_LAYOUT_OF 12 /* the DYNG_BACKEND_ABI the table describes */
#define DYNG_ABI_LAYOUT(S, F) \
  S(dyng_adj_view, 112, 8) \
  F(dyng_adj_view, off, 0, 8) \
  F(dyng_adj_view, deg, 8, 8) \
  F(dyng_adj_view, nbr, 16, 8) \
  F(dyng_adj_view, ref, 24, 8) \
  F(dyng_adj_view, w, 32, 64) \
  F(dyng_adj_view, n_entries, 96, 8) \
  F(dyng_adj_view, layout, 104, 4) \
  S(dyng_cancel, 24, 8) \
  F(dyng_cancel, should_stop, 0, 8) \
  F(dyng_cancel, ctx, 8, 8) \
  F(dyng_cancel, progress, 16, 8) \
  S(dyng_graph_view, 296, 8) \
  F(dyng_graph_view, n_vertices, 0, 4) \
  F(dyng_graph_view, n_edge_slots, 4, 4) \
  F(dyng_graph_view, n_objectives, 8, 4) \
  F(dyng_graph_view, directed, 12, 4) \
  F(dyng_graph_view, out, 16, 112) \
  F(dyng_graph_view, in, 128, 112) \
  F(dyng_graph_view, node_id, 240, 8) \
  F(dyng_graph_view, edge_rowid, 248, 8) \
  F(dyng_graph_view, edge_src, 256, 8) \
  F(dyng_graph_view, edge_dst, 264, 8) \
  F(dyng_graph_view, edge_pos_out, 272, 8) \
  F(dyng_graph_view, edge_pos_in, 280, 8) \
  F(dyng_graph_view, cancel, 288, 8) \
  S(dyng_sssp_tree, 64, 8) \
  F(dyng_sssp_tree, n_vertices, 0, 4) \
  F(dyng_sssp_tree, source, 4, 4) \
  F(dyng_sssp_tree, objective, 8, 4) \
  F(dyng_sssp_tree, n_reached, 12, 4) \
  F(dyng_sssp_tree, order_stale, 16, 4) \
  F(dyng_sssp_tree, host_stale, 20, 4) \
  F(dyng_sssp_tree, dist, 24, 8) \
  F(dyng_sssp_tree, parent, 32, 8) \
  F(dyng_sssp_tree, parent_edge, 40, 8) \
  F(dyng_sssp_tree, order, 48, 8) \
  F(dyng_sssp_tree, hops, 56, 8) \
  S(dyng_edge_change, 88, 8) \
  F(dyng_edge_change, slot, 0, 4) \
  F(dyng_edge_change, src, 4, 4) \
  F(dyng_edge_change, dst, 8, 4) \
  F(dyng_edge_change, rowid, 16, 8) \
  F(dyng_edge_change, w, 24, 64) \
  S(dyng_changes, 72, 8) \
  F(dyng_changes, removed, 0, 8) \
  F(dyng_changes, n_removed, 8, 8) \
  F(dyng_changes, added, 16, 8) \
  F(dyng_changes, n_added, 24, 8) \
  F(dyng_changes, cap, 32, 8) \
  F(dyng_changes, out_pos, 40, 8) \
  F(dyng_changes, n_out_pos, 48, 8) \
  F(dyng_changes, cap_out_pos, 56, 8) \
  F(dyng_changes, out_pos_complete, 64, 4) \
  S(dyng_cycles_diff, 16, 8) \
  F(dyng_cycles_diff, lost, 0, 8) \
  F(dyng_cycles_diff, gained, 8, 8) \
  S(dyng_backend, 144, 8) \
  F(dyng_backend, name, 0, 8) \
  F(dyng_backend, version, 8, 8) \
  F(dyng_backend, abi, 16, 4) \
  F(dyng_backend, concurrent, 20, 4) \
  F(dyng_backend, caps, 24, 4) \
  F(dyng_backend, graph_attach, 32, 8) \
  F(dyng_backend, graph_update, 40, 8) \
  F(dyng_backend, graph_detach, 48, 8) \
  F(dyng_backend, graph_device_bytes, 56, 8) \
  F(dyng_backend, sssp, 64, 8) \
  F(dyng_backend, sssp_update, 72, 8) \
  F(dyng_backend, error_message, 80, 8) \
  F(dyng_backend, tree_release, 88, 8) \
  F(dyng_backend, cycles_count, 96, 8) \
  F(dyng_backend, cycles_delta, 104, 8) \
  F(dyng_backend, mosp_path, 112, 8) \
  F(dyng_backend, tree_fetch, 120, 8) \
  F(dyng_backend, tree_path, 128, 8) \
  F(dyng_backend, matrix, 136, 8) \
  S(dyng_plugin, 48, 8) \
  F(dyng_plugin, abi, 0, 4) \
  F(dyng_plugin, version, 8, 8) \
  F(dyng_plugin, cuda_major, 16, 4) \
  F(dyng_plugin, cuda_runtime, 20, 4) \
  F(dyng_plugin, archs, 24, 8) \
  F(dyng_plugin, init, 32, 8) \
  F(dyng_plugin, backend, 40, 8) \
  S(dyng_host, 8, 8) \
  F(dyng_host, parallel_for, 0, 8)


typedef struct dyng_backend dyng_backend;

/* Capability bits of dyng_backend.caps.  DYNG_CAP_DEVICE: the backend's
** state lives in a device's memory, apart from the host graph, so the
** host can move the graph to the CPU backend when the device fails or
** runs out of memory, and reports the graph as resident on the device. */
#define DYNG_CAP_DEVICE (1u << 0)

struct dyng_backend {
  const char *name;    /* "cpu", "cuda13", ... */
  const char *version; /* the dyng version the backend was built for */
  int abi;             /* DYNG_BACKEND_ABI of the header it was built with */
  int concurrent;      /* nonzero: sssp and sssp_update may run on several
                          trees of one state at once, on several threads */
  unsigned caps;       /* DYNG_CAP_... bits below: what the backend is */

  /* Creates the backend's mirror of the graph in `view`; *state is new and
  ** released with graph_detach. */
  int (*graph_attach)(const dyng_backend *be, const dyng_graph_view *view, void **state);

  /* The host graph has changed; `view` is its current state and `changes`
  ** (engine/types.h) the edges the batch removed and added, or NULL when
  ** they were not recorded (the backend then takes the whole view). */
  int (*graph_update)(void *state, const dyng_graph_view *view, const dyng_changes *changes);

  /* Releases a state; accepts NULL. */
  void (*graph_detach)(void *state);

  /* Bytes the state holds outside host memory (0 for the CPU). */
  size_t (*graph_device_bytes)(void *state);

  /* Shortest paths from vertex `source` in objective `objective` into `t`
  ** (initialized by the caller for view->n_vertices vertices); with a
  ** `target` other than DYNG_NONE the search may stop once the target's
  ** distance is final. */
  int (*sssp)(void *state, const dyng_graph_view *view, uint32_t source, int objective,
              uint32_t target, dyng_sssp_tree *t);

  /* Brings tree `t`, computed by `sssp` before a batch, up to date with
  ** the graph after it, given the edges the batch removed and added
  ** (engine/types.h); the result equals a computation from scratch and its
  ** order[] may be stale.  *pn_touched gets the vertex entries it changed;
  ** past max_touched (> 0) it gives up with DYNG_EGAVEUP and the tree must
  ** be recomputed. */
  int (*sssp_update)(void *state, const dyng_graph_view *view, dyng_sssp_tree *t,
                     const dyng_edge_change *removed, size_t n_removed,
                     const dyng_edge_change *added, size_t n_added, size_t max_touched,
                     size_t *pn_touched);

  /* Text of the last failure of `state`, or NULL; with state NULL, of the
  ** calling thread's last failed graph_attach. */
  const char *(*error_message)(void *state);

  /* The host is about to free tree `t`, which sssp or sssp_update filled: a
  ** backend that keeps its own copy of the trees it computed (in device
  ** memory) lets t's go.  Trees still held when the state is detached go
  ** with it.  NULL when the backend keeps nothing. */
  void (*tree_release)(void *state, const dyng_sssp_tree *t);

  /* The analyses below are optional: where an entry is NULL the host
  ** computes that analysis on its own graph (engine/cycles.h,
  ** engine/mosp.h), and dyng_config() says so; the two cycles entries are
  ** used together or not at all.  Each stops with
  ** DYNG_EINTERRUPTED when view->cancel says so; DYNG_ENOMEM means the
  ** backend ran out of its own (device) memory. */

  /* The number of simple k-cycles of the graph, with dyng_cycles_count's
  ** meaning of k (3..10) and directed, into *count; DYNG_EOVERFLOW past
  ** UINT64_MAX. */
  int (*cycles_count)(void *state, const dyng_graph_view *view, int k, int directed, uint64_t *count);

  /* What the batch `changes`, already given to graph_update, did to the
  ** k-cycles: dyng_cycles_delta's meaning, `view` the graph after it. */
  int (*cycles_delta)(void *state, const dyng_graph_view *view, const dyng_changes *changes, int k,
                      int directed, dyng_cycles_diff *delta);

  /* The MOSP ensemble path (engine/mosp.h) of trees[0 .. k-1], each filled
  ** by this backend's sssp or sssp_update from `source`: vertex[0 .. *n)
  ** from source to target and edge[0 .. *n - 1) the edge slots between
  ** them, at most `cap` vertices (DYNG_ENOROOM with *n the length needed
  ** when the path is longer); *n = 0 when no tree reaches the target.
  ** *ensemble_cost gets the path's ensemble cost. */
  int (*mosp_path)(void *state, const dyng_graph_view *view, const dyng_sssp_tree *const *trees, int k,
                   uint32_t source, uint32_t target, uint32_t cap, uint32_t *vertex, uint32_t *edge,
                   uint32_t *n, double *ensemble_cost);

  /* A backend that keeps its trees (tree_release not NULL) may leave the
  ** host arrays of the trees its sssp and sssp_update fill out of date and
  ** set t->host_stale: the host then asks for the rows it reads.
  ** tree_fetch copies the rows of vertices[0 .. n) of tree t into t's host
  ** arrays, or with vertices NULL every row (and clears t->host_stale).
  ** tree_path writes the vertices of t's tree path from `target` back to
  ** the source into vertex[]: vertex[0] = target, vertex[*n - 1] = the
  ** source, at most `cap` (DYNG_ENOROOM with *n the number needed when it
  ** is longer); *n = 0 when t does not reach the target.  Both NULL for a
  ** backend that always fills the host arrays. */
  int (*tree_fetch)(void *state, dyng_sssp_tree *t, const uint32_t *vertices, uint32_t n);
  int (*tree_path)(void *state, const dyng_sssp_tree *t, uint32_t target, uint32_t cap, uint32_t *vertex,
                   uint32_t *n);

  /* Optional: the distances from each of sources[0 .. n_sources) to each
  ** of targets[0 .. n_targets) in objective `objective`, into
  ** out[i * n_targets + j] (INFINITY: unreachable), equal to the host's
  ** dyng_route_matrix (engine/route.h).  DYNG_ENOMEM when the backend's
  ** memory cannot hold a pass (the host then computes the matrix),
  ** DYNG_EINTERRUPTED when view->cancel says so.  NULL: the host does. */
  int (*matrix)(void *state, const dyng_graph_view *view, int objective, const uint32_t *sources,
                size_t n_sources, const uint32_t *targets, size_t n_targets, double *out);
};

/* The built-in CPU backend. */
const dyng_backend *dyng_backend_cpu(void);

#endif /* DYNG_BACKEND_H */
