/*
** engine/mirror.h: one graph's whole life in memory, without SQLite.
**
** A dyng_mirror owns the host graph (engine/graph.h), the backend that
** computes on it and that backend's state, the shortest-path trees kept
** between queries with their cache policy, the kept k-cycle counts and the
** records of the last batch's changes.  Every analysis a query asks for
** goes through it: a tree (dyng_mirror_tree), a path walk, a cycle count,
** the MOSP path, the Pareto front.  A batch goes through it too
** (dyng_mirror_apply): host graph, then the backend, then the kept trees,
** then the kept counts.  When a device backend runs out of its memory the
** mirror moves the graph to the CPU backend, once, here, for every
** analysis (dyng_mirror_leave_device), unless the device was required.
**
** The kept trees of several mirrors share one memory budget and one
** least-recently-used clock: a dyng_mirror_pool, one per database
** connection.  What the engine needs from its caller (a cancel check and a
** time budget for a recount a batch starts on its own, a word when a graph
** left its device) comes as plain function pointers (dyng_hooks).
*/
#ifndef DYNG_MIRROR_H
#define DYNG_MIRROR_H

#include <stdint.h>

#include "engine/backend.h"
#include "engine/cycles.h"
#include "engine/graph.h"
#include "engine/mosp.h"
#include "engine/pareto.h"
#include "engine/route.h"

typedef struct dyng_mirror dyng_mirror;
typedef struct dyng_kept_tree dyng_kept_tree;

/* What the engine asks of its caller; every entry may be NULL. */
typedef struct dyng_hooks {
  void *ctx; /* passed to each */
  /* Starts watching a computation a batch starts on its own (a recount):
  ** returns a handle for watch_end and sets *cancel to what stops it (the
  ** caller's interrupt and time budget; NULL: nothing stops it).  what and
  ** unit name its progress ("counting 3-cycles of graph 'g'", "roots"). */
  void *(*watch_begin)(void *ctx, const char *what, const char *unit, const dyng_cancel **cancel);
  /* Ends that watch; done: the closing progress count. */
  void (*watch_end)(void *ctx, void *watch, uint64_t done);
  /* Mirror m left its device backend for the CPU; m->why says why. */
  void (*moved)(void *ctx, const dyng_mirror *m);
} dyng_hooks;

/* The kept trees' shared budget and clocks (one per connection). */
typedef struct dyng_mirror_pool {
  int64_t limit;        /* bytes the kept trees may take */
  int64_t bytes;        /* bytes they take */
  int64_t clock;        /* counts tree uses, for least-recently-used */
  int64_t pin_from;     /* trees used since this clock are not evicted */
  int64_t update_stamp; /* counts updates of kept trees and counts */
  dyng_mirror *first;   /* the mirrors sharing it */
  dyng_hooks hooks;     /* the caller's hooks, for every mirror of the pool */
} dyng_mirror_pool;

/* An empty pool with a budget of `limit` bytes. */
void dyng_mirror_pool_init(dyng_mirror_pool *pool, int64_t limit);

/* Frees least recently used trees until the pool fits its budget. */
void dyng_mirror_pool_fit(dyng_mirror_pool *pool);

/* From pin(pool, 1) to pin(pool, 0), trees taken with dyng_mirror_tree are
** not evicted (a query holding several at once). */
void dyng_mirror_pool_pin(dyng_mirror_pool *pool, int on);

/* What a kept answer (a tree, a count) remembers of the batches whose
** incremental update gave up: batches at least as large as the smallest of
** them are computed again at once, and every DYNG_RETRY_AFTER such batches
** an update is tried again from twice the size, in case the graph changed
** character. */
#define DYNG_RETRY_AFTER 16
typedef struct dyng_give_up {
  size_t at;   /* smallest batch whose update gave up; 0: none */
  int skipped; /* batches computed again directly since */
} dyng_give_up;

/* Whether a batch of n_changed changes skips the update (counted as such). */
int dyng_give_up_skips(dyng_give_up *p, size_t n_changed);
/* An update of a batch of n_changed changes gave up. */
void dyng_give_up_note(dyng_give_up *p, size_t n_changed);

/* A kept shortest-path tree and its counters. */
struct dyng_kept_tree {
  dyng_kept_tree *next;   /* next tree of the same mirror */
  dyng_mirror *m;         /* the mirror it belongs to */
  dyng_sssp_tree tree;    /* the tree; its source is a vertex index */
  int64_t last_use;       /* the pool's clock at the last use */
  int64_t n_hit;          /* queries answered from it */
  int64_t n_update;       /* batches applied to it incrementally */
  int64_t n_recompute;    /* batches after which it was recomputed */
  int64_t stamp;          /* the pool's update_stamp of its last update */
  double last_ms;         /* duration of that update */
  int last_recompute;     /* that update recomputed the tree */
  dyng_give_up give_up;   /* the batches whose update gave up */
  size_t last_touched;    /* vertices that update touched */
};

/* Bytes a kept tree holds. */
int64_t dyng_kept_tree_bytes(const dyng_kept_tree *p);

/* A kept k-cycle count. */
typedef struct dyng_kept_count {
  int valid;              /* kept and current */
  uint64_t n_cycles;      /* the count */
  int64_t n_hit;          /* queries answered from it */
  int64_t n_update;       /* batches applied to it */
  int64_t n_recount;      /* batches after which it was counted again */
  int last_recount;       /* the last batch counted again */
  double count_ms;        /* the count from scratch took */
  double last_ms;         /* the last update took */
  int64_t stamp;          /* the pool's update_stamp of that update */
  dyng_give_up give_up;   /* the batches whose update gave up */
} dyng_kept_count;

/* Sources whose last searches a mirror remembers: a source met again gets
** its whole tree, kept (dyng_mirror_route_pays). */
#define DYNG_ROUTE_RECENT 8

/* One graph's life; the fields are read by the caller, changed only here. */
struct dyng_mirror {
  dyng_graph *graph;          /* the host graph, owned */
  const dyng_backend *be;     /* backend that computes on it */
  void *state;                /* the backend's state, owned */
  int require_device;         /* a device failure is an error, not a move */
  char why[800];              /* why `be` */
  char err[400];              /* the last failure dyng_mirror_* returned as
                                 DYNG_EBACKEND: a device that could not be left */
  const char *name;           /* the graph's name, for messages (borrowed) */
  dyng_mirror_pool *pool;     /* the budget its trees share */
  dyng_mirror *next_in_pool;
  dyng_kept_tree *trees;      /* shortest-path trees kept */
  dyng_kept_count counts[2][DYNG_CYCLES_MAX_K + 1]; /* [directed][k] */
  dyng_changes changes;       /* the last batch's changes, for them to follow */
  double apply_ms;            /* time spent applying batches to the host graph */
  double backend_ms;          /* time the backend spent following them */
  double kept_ms;             /* time kept trees and counts spent following them */
  int64_t matrices_backend;   /* cost matrix blocks the backend computed ... */
  int64_t matrices_host;      /* ... and the host */
  dyng_route *route;          /* the searches that stop early, made on first use */
  dyng_landmarks *landmarks;  /* their aim (engine/route.h), built on first use and
                                 repaired with every batch; NULL: none */
  uint64_t recent[DYNG_ROUTE_RECENT]; /* objective << 32 | source of the last
                                 such searches, newest at recent_at - 1 */
  unsigned recent_at;
};

/* A new mirror of `graph` (taken over, also on failure) in `pool`, on
** backend `be`, with `why` saying why that one.  require_device: a device
** that cannot take the graph is an error; otherwise the graph goes to the
** CPU backend and the mirror's why says so.  DYNG_EBACKEND, with err
** (nerr bytes) saying why, when the device was required and failed. */
int dyng_mirror_new(dyng_mirror_pool *pool, dyng_graph *graph, const dyng_backend *be, const char *why,
                    int require_device, const char *name, dyng_mirror **pm, char *err, size_t nerr);

/* Frees a mirror: its trees, counts, backend state and host graph.  NULL
** is accepted. */
void dyng_mirror_free(dyng_mirror *m);

/* The backend ran out of device memory while doing `doing` ("computing a
** shortest-path tree"): the graph moves to the CPU backend, keeping its
** host graph and its kept trees, with the reason in m->why; the pool's
** moved hook hears of it.  When the device is required it stays and this
** returns DYNG_EBACKEND with m->err naming the backend and its message. */
int dyng_mirror_leave_device(dyng_mirror *m, const char *doing);

/* Applies a batch to the host graph, then tells the backend, then brings
** the kept trees and counts up to date.  On failure part of the batch may
** be in the graph: the caller must load it again. */
int dyng_mirror_apply(dyng_mirror *m, dyng_batch *batch, dyng_apply_stats *stats);

/* Frees the kept trees and counts (the graph stays). */
void dyng_mirror_forget(dyng_mirror *m);

/* The tree of (source vertex, objective): the kept one, else computed now
** and kept when the budget allows.  Its order[] may be stale: call
** dyng_sssp_tree_order before listing it.  *owned is set when the tree is
** not kept: release it with dyng_mirror_tree_release.  cancel: what stops
** the computation (may be NULL). */
int dyng_mirror_tree(dyng_mirror *m, uint32_t source, int objective, const dyng_cancel *cancel,
                     dyng_sssp_tree **pt, dyng_kept_tree **owned);
void dyng_mirror_tree_release(dyng_kept_tree *owned); /* accepts NULL */

/* Whether a question from (source, objective) that needs only part of the
** tree (a route to one target, the vertices within a distance) is best
** answered by a search that stops early (1) or by the whole tree, kept for
** the next one (0): 0 when a tree of that source is kept, or when the
** source asked such a question of late (one of the last DYNG_ROUTE_RECENT
** sources) and the pool's budget can keep a tree, which it then gets; 1
** otherwise, and the source is remembered. */
int dyng_mirror_route_pays(dyng_mirror *m, uint32_t source, int objective);

/* Graphs with fewer vertices than this get no landmarks: a search that is
** not aimed is quick there. */
#define DYNG_LANDMARK_MIN_VERTICES 10000

/* Runs a search that stops early (engine/route.h) on the host graph, in
** the mirror's workspace, which *pr then gives the answer of.  The host
** graph is current on every backend, so the answer is the same.  A route
** to a target is aimed by n_landmarks landmarks of its objective (0: not
** aimed), built now when the mirror has none of that objective and count
** and the graph has DYNG_LANDMARK_MIN_VERTICES vertices or more. */
int dyng_mirror_route(dyng_mirror *m, uint32_t source, int objective, const dyng_route_goal *goal,
                      int n_landmarks, const dyng_cancel *cancel, dyng_route **pr);

/* A cost matrix (engine/route.h's dyng_route_matrix) on the mirror's
** graph: on the backend when its table has a matrix entry and the matrix
** is large enough to pay for a device pass (DYNG_MATRIX_DEVICE_MIN_SOURCES
** sources, DYNG_MATRIX_DEVICE_MIN_VERTICES vertices), else, and when the
** device is out of memory for it, on the host's threads.  *on_backend gets
** 1 when the backend computed it (its errors are then the backend's). */
#define DYNG_MATRIX_DEVICE_MIN_SOURCES 4
#define DYNG_MATRIX_DEVICE_MIN_VERTICES 50000
int dyng_mirror_matrix(dyng_mirror *m, int objective, const uint32_t *sources, size_t n_sources,
                       const uint32_t *targets, size_t n_targets, const dyng_cancel *cancel, double *out,
                       int *on_backend);

/* Whether a matrix of n_sources sources would go to the backend. */
int dyng_mirror_matrix_on_backend(const dyng_mirror *m, size_t n_sources);

/* Bytes n landmarks would take on the mirror's graph. */
size_t dyng_mirror_landmark_bytes(const dyng_mirror *m, int n);

/* Makes the host rows of tree t current where the backend left them on
** the device (t->host_stale): every row with v NULL, else the rows of
** vertices v[0 .. n). */
int dyng_mirror_tree_rows(dyng_mirror *m, dyng_sssp_tree *t, const uint32_t *v, uint32_t n);

/* The vertices of t's tree path from target back to its source into *pv
** (dyng_malloc'd; the target first, the source last) and *pn, 0 when t
** does not reach target; their rows are then current on the host. */
int dyng_mirror_tree_path(dyng_mirror *m, dyng_sssp_tree *t, uint32_t target, uint32_t **pv, uint32_t *pn);

/* The number of k-cycles (engine/cycles.h's meaning), the kept count when
** there is one, else counted now (on the backend when it has both cycles
** entries, else on the host) and kept for batches to update. */
int dyng_mirror_cycles(dyng_mirror *m, int k, int directed, const dyng_cancel *cancel, uint64_t *count);

/* 1 when the mirror keeps a cycle count. */
int dyng_mirror_counts_kept(const dyng_mirror *m);

/* 1 when backend be counts cycles itself (else the host engine does). */
int dyng_backend_counts_cycles(const dyng_backend *be);

/* The MOSP ensemble path (engine/mosp.h) from source to target, from the
** trees of every objective. */
int dyng_mirror_mosp(dyng_mirror *m, uint32_t source, uint32_t target, const dyng_cancel *cancel,
                     dyng_path *path);

/* The exact Pareto front (engine/pareto.h) from source to target. */
int dyng_mirror_pareto(dyng_mirror *m, uint32_t source, uint32_t target, size_t max_labels,
                       const dyng_cancel *cancel, dyng_front *front);

/* The device backend's text of its last failure on this mirror, or NULL
** (for the CPU backend, and for an interruption). */
const char *dyng_mirror_backend_message(const dyng_mirror *m, int erc);

/* The name of the backend that computes an analysis of this mirror: the
** backend computes shortest-path trees and their updates, and the cycle
** counts, the MOSP path and cost matrices where its table has them (a
** matrix smaller than dyng_mirror_matrix's threshold runs on the host all
** the same); the rest runs on the host graph, on the CPU. */
enum { DYNG_RUNS_SSSP, DYNG_RUNS_MOSP, DYNG_RUNS_PARETO, DYNG_RUNS_CYCLES, DYNG_RUNS_MATRIX };
const char *dyng_mirror_runs_on(const dyng_mirror *m, int analysis);

/* Bytes the backend's state holds outside host memory (0 on the CPU). */
size_t dyng_mirror_device_bytes(const dyng_mirror *m);

/* Milliseconds on a monotonic clock. */
double dyng_now_ms(void);

#endif /* DYNG_MIRROR_H */
