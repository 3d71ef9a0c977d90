/*
** tests/test_cycles.c: unit tests of the k-cycle counts (engine/cycles.h).
**
** How it works: each test keeps a plain edge list (parallel edges,
** antiparallel arcs and self-loops included), builds the engine's graph
** from it and compares dyng_cycles_count with a brute force over the list:
** every closed walk of k distinct vertices, found by a DFS from every
** vertex, is counted when it is the lexicographically smallest of its
** rotations (and, undirected, reversals), so each cycle once.  After random
** batches through dyng_graph_apply_tracked, dyng_cycles_update applied to
** the cached counts must give the same as a recount and as the brute force.
** Complete graphs check the closed forms n!/(2k(n-k)!) and n!/(k(n-k)!) up
** to k = 10.  When $DYNG_DATA_DIR has them, the SNAP graphs check the
** published triangle counts and the 4-cycles against a slower count over
** common neighbours; those cases print their timings.
*/
#include "test_util.h"

#include "engine/alloc.h"
#include "engine/cycles.h"
#include "engine/error.h"
#include "engine/graph.h"

#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* 1 under valgrind, which preloads its vgpreload_*.so into the program. */
static int under_valgrind(void) {
  const char *z = getenv("LD_PRELOAD");
  return z && strstr(z, "vgpreload") != NULL;
}

static int teardown(void **state) {
  (void)state;
  dyng_alloc_fail_after(-1);
  return 0;
}

/* ---- the edge list ------------------------------------------------------ */

#define MAX_NODES 20 /* node positions of the random lists */

static int64_t rowid_of(size_t e) { return 3 * (int64_t)e + 11; }
static int64_t node_id_of(uint32_t i) { return (int64_t)i * 7919 - 50000; }

typedef struct edge_list {
  int directed;
  size_t n_edges; /* list positions, present or not */
  size_t cap;
  int *present;
  uint32_t *src, *dst; /* node positions */
} edge_list;

static void list_init(edge_list *l, int directed) {
  memset(l, 0, sizeof *l);
  l->directed = directed;
}

static void list_free(edge_list *l) {
  free(l->present);
  free(l->src);
  free(l->dst);
  memset(l, 0, sizeof *l);
}

static size_t list_add(edge_list *l, uint32_t s, uint32_t d) {
  if (l->n_edges == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->present = realloc(l->present, l->cap * sizeof *l->present);
    l->src = realloc(l->src, l->cap * sizeof *l->src);
    l->dst = realloc(l->dst, l->cap * sizeof *l->dst);
    assert_true(l->present && l->src && l->dst);
  }
  size_t e = l->n_edges++;
  l->present[e] = 1;
  l->src[e] = s;
  l->dst[e] = d;
  return e;
}

/* A sealed graph of the list's present edges; directed ones with their in
** adjacency when `with_in`. */
static dyng_graph *graph_of_list(const edge_list *l, int with_in) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 0, l->directed), DYNG_OK);
  assert_int_equal(dyng_graph_reserve(g, l->n_edges), DYNG_OK);
  for (size_t e = 0; e < l->n_edges; e++)
    if (l->present[e])
      assert_int_equal(dyng_graph_load_edge(g, rowid_of(e), node_id_of(l->src[e]), node_id_of(l->dst[e]), NULL),
                       DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (with_in) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  return g;
}

static uint64_t count_of(const dyng_graph *g, int k, int directed) {
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint64_t n = UINT64_MAX;
  assert_int_equal(dyng_cycles_count(&view, k, directed, NULL, &n), DYNG_OK);
  return n;
}

/* ---- the brute force ---------------------------------------------------- */

typedef struct brute {
  int k, directed;
  uint32_t n;
  unsigned char adj[MAX_NODES][MAX_NODES]; /* adj[u][v]: u -> v (or u - v) */
  uint32_t walk[16];
  unsigned char used[MAX_NODES];
  uint64_t count;
} brute;

/* 1 when walk[0..k-1] is the lexicographically smallest of the sequences
** that describe its cycle: its k rotations, and their reversals when
** undirected. */
static int is_canonical(const brute *b) {
  const int k = b->k;
  for (int flip = 0; flip < (b->directed ? 1 : 2); flip++)
    for (int rot = 0; rot < k; rot++) {
      if (!flip && !rot) continue;
      for (int i = 0; i < k; i++) {
        uint32_t other = flip ? b->walk[((rot - i) % k + k) % k] : b->walk[(rot + i) % k];
        if (other < b->walk[i]) return 0;
        if (other > b->walk[i]) break;
      }
    }
  return 1;
}

static void brute_extend(brute *b, int len) {
  uint32_t last = b->walk[len - 1];
  if (len == b->k) {
    if (b->adj[last][b->walk[0]] && is_canonical(b)) b->count++;
    return;
  }
  for (uint32_t v = 0; v < b->n; v++) {
    if (b->used[v] || !b->adj[last][v]) continue;
    b->used[v] = 1;
    b->walk[len] = v;
    brute_extend(b, len + 1);
    b->used[v] = 0;
  }
}

/* The k-cycles of the list's present edges, simple view, by brute force. */
static uint64_t brute_count(const edge_list *l, int k, int directed) {
  brute b;
  memset(&b, 0, sizeof b);
  b.k = k;
  b.directed = directed;
  for (size_t e = 0; e < l->n_edges; e++) {
    if (!l->present[e]) continue;
    uint32_t s = l->src[e], d = l->dst[e];
    assert_true(s < MAX_NODES && d < MAX_NODES);
    if (s + 1 > b.n) b.n = s + 1;
    if (d + 1 > b.n) b.n = d + 1;
    if (s == d) continue;
    b.adj[s][d] = 1;
    if (!directed || !l->directed) b.adj[d][s] = 1;
  }
  for (uint32_t s = 0; s < b.n; s++) {
    b.walk[0] = s;
    b.used[s] = 1;
    brute_extend(&b, 1);
    b.used[s] = 0;
  }
  return b.count;
}

/* ---- random graphs ------------------------------------------------------ */

/* A random list over n_nodes nodes: some self-loops, parallel edges and
** (directed) antiparallel arcs; density drawn so that some graphs are
** sparse and others nearly complete. */
static void random_list(test_rng *r, edge_list *l, int directed, uint32_t n_nodes) {
  list_init(l, directed);
  size_t n_edges = (size_t)test_rng_below(r, 4 * (uint64_t)n_nodes + 1);
  for (size_t j = 0; j < n_edges; j++) {
    uint32_t s = (uint32_t)test_rng_below(r, n_nodes), d = (uint32_t)test_rng_below(r, n_nodes);
    uint64_t dice = test_rng_below(r, 100);
    if (dice < 5) {
      d = s;
    } else if (dice < 20 && l->n_edges) {
      size_t e = (size_t)test_rng_below(r, l->n_edges);
      s = dice < 12 ? l->src[e] : l->dst[e]; /* parallel or antiparallel */
      d = dice < 12 ? l->dst[e] : l->src[e];
    }
    list_add(l, s, d);
  }
}

static void check_random_graphs(int directed_graph, uint64_t salt, int n_graphs) {
  test_rng r;
  test_rng_for(&r, salt);
  for (int i = 0; i < n_graphs; i++) {
    edge_list l;
    random_list(&r, &l, directed_graph, 8 + (uint32_t)test_rng_below(&r, 7));
    if (!l.n_edges) list_add(&l, 0, 1);
    dyng_graph *g = graph_of_list(&l, 0);
    for (int k = 3; k <= 7; k++)
      for (int directed = 0; directed < 2; directed++) {
        uint64_t want = brute_count(&l, k, directed), got = count_of(g, k, directed);
        if (got != want)
          fail_msg("graph %d (%s), k = %d, %s: %llu cycles, brute force %llu", i,
                   directed_graph ? "directed" : "undirected", k, directed ? "directed" : "undirected",
                   (unsigned long long)got, (unsigned long long)want);
      }
    dyng_graph_free(g);
    list_free(&l);
  }
}

static void test_undirected_graphs_match_brute_force(void **state) { check_random_graphs(0, 1, 40); }
static void test_directed_graphs_match_brute_force(void **state) { check_random_graphs(1, 2, 40); }

/* Two antiparallel arcs are one edge of the simple view, and no 2-cycle;
** parallel edges and self-loops add nothing. */
static void test_parallel_edges_and_self_loops_are_ignored(void **state) {
  (void)state;
  for (int directed = 0; directed < 2; directed++) {
    edge_list l;
    list_init(&l, directed);
    list_add(&l, 0, 1);
    list_add(&l, 1, 0);
    list_add(&l, 1, 2);
    list_add(&l, 1, 2);
    list_add(&l, 2, 0);
    list_add(&l, 2, 2);
    list_add(&l, 0, 0);
    dyng_graph *g = graph_of_list(&l, 0);
    assert_int_equal(count_of(g, 3, 0), 1);
    /* Directed, 0->1->2->0 is a cycle; 1->0 closes nothing of length 3.
    ** The undirected graph's edges go both ways: two directed triangles. */
    assert_int_equal(count_of(g, 3, 1), directed ? 1 : 2);
    for (int k = 4; k <= 10; k++) {
      assert_int_equal(count_of(g, k, 0), 0);
      assert_int_equal(count_of(g, k, 1), 0);
    }
    dyng_graph_free(g);
    list_free(&l);
  }
}

/* n! / (n - k)! / (2k) undirected, / k directed. */
static uint64_t complete_count(uint32_t n, int k, int directed) {
  uint64_t c = 1;
  for (int i = 0; i < k; i++) c *= n - (uint64_t)i;
  return c / (uint64_t)k / (directed ? 1 : 2);
}

static void test_complete_graphs_match_closed_form(void **state) {
  (void)state;
  const uint32_t n = 10;
  edge_list und, dir;
  list_init(&und, 0);
  list_init(&dir, 1);
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t v = 0; v < n; v++) {
      if (u < v) list_add(&und, u, v);
      if (u != v) list_add(&dir, u, v);
    }
  dyng_graph *gu = graph_of_list(&und, 0), *gd = graph_of_list(&dir, 0);
  for (int k = 3; k <= 10; k++) {
    assert_int_equal(count_of(gu, k, 0), complete_count(n, k, 0));
    assert_int_equal(count_of(gd, k, 0), complete_count(n, k, 0));
    assert_int_equal(count_of(gd, k, 1), complete_count(n, k, 1));
    /* An undirected edge is an arc each way. */
    assert_int_equal(count_of(gu, k, 1), complete_count(n, k, 1));
  }
  dyng_graph_free(gu);
  dyng_graph_free(gd);
  list_free(&und);
  list_free(&dir);
}

/* A ring of k vertices has one k-cycle and nothing else; as a directed
** ring, one directed cycle, which a reversed arc breaks. */
static void test_a_ring_is_one_cycle(void **state) {
  (void)state;
  for (int k = 3; k <= 10; k++) {
    edge_list l;
    list_init(&l, 1);
    for (int i = 0; i < k; i++) list_add(&l, (uint32_t)i, (uint32_t)((i + 1) % k));
    dyng_graph *g = graph_of_list(&l, 0);
    for (int j = 3; j <= 10; j++) {
      assert_int_equal(count_of(g, j, 0), j == k);
      assert_int_equal(count_of(g, j, 1), j == k);
    }
    dyng_graph_free(g);
    l.src[0] = 1;
    l.dst[0] = 0;
    g = graph_of_list(&l, 0);
    assert_int_equal(count_of(g, k, 0), 1);
    assert_int_equal(count_of(g, k, 1), 0);
    dyng_graph_free(g);
    list_free(&l);
  }
}

static void test_empty_graph_has_no_cycles(void **state) {
  (void)state;
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, 0, 0), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  for (int k = 3; k <= 10; k++) {
    assert_int_equal(count_of(g, k, 0), 0);
    assert_int_equal(count_of(g, k, 1), 0);
  }
  dyng_graph_free(g);
}

/* ---- after batches ------------------------------------------------------ */

#define K_INC 6 /* the largest k kept up to date */

/* Random batches of inserts (new, parallel, antiparallel, self-loops, new
** nodes), deletes and replacements, mirrored in the list; after each, every
** cached count (k = 3..K_INC, both modes) moved by dyng_cycles_update
** equals a recount and the brute force. */
static void run_after_batches(int directed_graph, uint64_t salt, int n_batches) {
  test_rng r;
  test_rng_for(&r, salt);
  edge_list l;
  random_list(&r, &l, directed_graph, 10);
  if (!l.n_edges) list_add(&l, 0, 1);
  dyng_graph *g = graph_of_list(&l, directed_graph);
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  dyng_changes changes;
  memset(&changes, 0, sizeof changes);
  uint64_t cached[K_INC + 1][2];
  for (int k = 3; k <= K_INC; k++)
    for (int directed = 0; directed < 2; directed++) cached[k][directed] = count_of(g, k, directed);
  for (int batch = 0; batch < n_batches; batch++) {
    uint32_t n_nodes = 10 + (uint32_t)(batch / 4 < 5 ? batch / 4 : 5); /* new nodes now and then */
    int n_ops = 1 + (int)test_rng_below(&r, batch % 5 == 4 ? 25 : 6);
    for (int op = 0; op < n_ops; op++) {
      uint32_t s = (uint32_t)test_rng_below(&r, n_nodes), d = (uint32_t)test_rng_below(&r, n_nodes);
      uint64_t dice = test_rng_below(&r, 100);
      if (dice < 20 && l.n_edges) { /* a copy of an edge, or its reverse */
        size_t e = (size_t)test_rng_below(&r, l.n_edges);
        s = dice < 12 ? l.src[e] : l.dst[e];
        d = dice < 12 ? l.dst[e] : l.src[e];
      } else if (dice < 23) {
        d = s;
      }
      if (dice < 45) { /* insert */
        size_t e = list_add(&l, s, d);
        assert_int_equal(dyng_batch_insert(b, rowid_of(e), node_id_of(s), node_id_of(d), NULL), DYNG_OK);
      } else if (dice < 80) { /* delete, maybe of a rowid already gone */
        size_t e = (size_t)test_rng_below(&r, l.n_edges);
        l.present[e] = 0;
        assert_int_equal(dyng_batch_delete(b, rowid_of(e)), DYNG_OK);
      } else { /* replace: same rowid, new endpoints */
        size_t e = (size_t)test_rng_below(&r, l.n_edges);
        l.present[e] = 1;
        l.src[e] = s;
        l.dst[e] = d;
        assert_int_equal(dyng_batch_insert(b, rowid_of(e), node_id_of(s), node_id_of(d), NULL), DYNG_OK);
      }
    }
    assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &changes), DYNG_OK);
    dyng_batch_clear(b);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    for (int k = 3; k <= K_INC; k++)
      for (int directed = 0; directed < 2; directed++) {
        assert_int_equal(dyng_cycles_update(&view, &changes, k, directed, NULL, &cached[k][directed]), DYNG_OK);
        uint64_t again = count_of(g, k, directed), want = brute_count(&l, k, directed);
        if (cached[k][directed] != want || again != want)
          fail_msg("batch %d (%s graph), k = %d, %s: updated %llu, recounted %llu, brute force %llu", batch,
                   directed_graph ? "directed" : "undirected", k, directed ? "directed" : "undirected",
                   (unsigned long long)cached[k][directed], (unsigned long long)again,
                   (unsigned long long)want);
      }
  }
  dyng_changes_free(&changes);
  dyng_batch_free(b);
  dyng_graph_free(g);
  list_free(&l);
}

static void test_update_after_batches_undirected_matches_recount(void **state) {
  for (int i = 0; i < 6; i++) run_after_batches(0, 100 + (uint64_t)i, 30);
}

static void test_update_after_batches_directed_matches_recount(void **state) {
  for (int i = 0; i < 6; i++) run_after_batches(1, 200 + (uint64_t)i, 30);
}

/* Adding a second copy of an edge, or its reverse, changes no simple edge;
** removing one of two copies neither.  Removing the last copy does. */
static void test_parallel_copies_change_nothing_until_the_last(void **state) {
  (void)state;
  edge_list l;
  list_init(&l, 1);
  list_add(&l, 0, 1);
  list_add(&l, 1, 2);
  list_add(&l, 2, 0);
  dyng_graph *g = graph_of_list(&l, 1);
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  dyng_graph_view view;
  dyng_cycles_diff d;
  /* 1 -> 0 next to 0 -> 1, a copy of 1 -> 2: nothing changes. */
  assert_int_equal(dyng_batch_insert(b, rowid_of(3), node_id_of(1), node_id_of(0), NULL), DYNG_OK);
  assert_int_equal(dyng_batch_insert(b, rowid_of(4), node_id_of(1), node_id_of(2), NULL), DYNG_OK);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_batch_clear(b);
  dyng_graph_get_view(g, &view);
  for (int directed = 0; directed < 2; directed++) {
    assert_int_equal(dyng_cycles_delta(&view, &ch, 3, directed, NULL, &d), DYNG_OK);
    assert_int_equal(d.lost, 0);
    assert_int_equal(d.gained, 0);
  }
  /* Deleting 0 -> 1: undirected, 1 -> 0 keeps the edge; directed, the
  ** triangle goes. */
  assert_int_equal(dyng_batch_delete(b, rowid_of(0)), DYNG_OK);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_batch_clear(b);
  dyng_graph_get_view(g, &view);
  assert_int_equal(dyng_cycles_delta(&view, &ch, 3, 0, NULL, &d), DYNG_OK);
  assert_int_equal(d.lost, 0);
  assert_int_equal(d.gained, 0);
  assert_int_equal(dyng_cycles_delta(&view, &ch, 3, 1, NULL, &d), DYNG_OK);
  assert_int_equal(d.lost, 1);
  assert_int_equal(d.gained, 0);
  /* A cached count smaller than what was lost was not this graph's. */
  uint64_t count = 0;
  assert_int_equal(dyng_cycles_update(&view, &ch, 3, 1, NULL, &count), DYNG_EINVAL);
  assert_int_equal(count, 0);
  count = 1;
  assert_int_equal(dyng_cycles_update(&view, &ch, 3, 1, NULL, &count), DYNG_OK);
  assert_int_equal(count, 0);
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
  list_free(&l);
}

/* A batch that touches nothing in the simple view and an empty batch. */
static void test_empty_batch_changes_nothing(void **state) {
  (void)state;
  edge_list l;
  list_init(&l, 0);
  list_add(&l, 0, 1);
  list_add(&l, 1, 2);
  list_add(&l, 2, 0);
  dyng_graph *g = graph_of_list(&l, 0);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint64_t count = 7;
  for (int k = 3; k <= 10; k++) {
    assert_int_equal(dyng_cycles_update(&view, &ch, k, k % 2, NULL, &count), DYNG_OK);
    assert_int_equal(count, 7);
  }
  dyng_graph_free(g);
  list_free(&l);
}

/* ---- arguments, state, interruption, memory ----------------------------- */

static void test_k_out_of_range_is_einval(void **state) {
  (void)state;
  edge_list l;
  list_init(&l, 1);
  list_add(&l, 0, 1);
  dyng_graph *g = graph_of_list(&l, 1);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  const int bad[] = {-3, 0, 1, 2, 11, 100};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    for (int directed = 0; directed < 2; directed++) {
      uint64_t c = 42;
      dyng_cycles_diff d;
      assert_int_equal(dyng_cycles_count(&view, bad[i], directed, NULL, &c), DYNG_EINVAL);
      assert_int_equal(dyng_cycles_delta(&view, &ch, bad[i], directed, NULL, &d), DYNG_EINVAL);
      assert_int_equal(dyng_cycles_update(&view, &ch, bad[i], directed, NULL, &c), DYNG_EINVAL);
      assert_int_equal(c, 42);
    }
  dyng_graph_free(g);
  list_free(&l);
}

/* Records that cannot come from this graph: a vertex out of range, an
** edge recorded as added that the graph does not hold. */
static void test_changes_that_do_not_fit_the_graph_are_einval(void **state) {
  (void)state;
  for (int directed_graph = 0; directed_graph < 2; directed_graph++) {
    edge_list l;
    list_init(&l, directed_graph);
    list_add(&l, 0, 1);
    list_add(&l, 1, 2);
    dyng_graph *g = graph_of_list(&l, directed_graph);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    dyng_edge_change rec;
    memset(&rec, 0, sizeof rec);
    dyng_changes ch;
    memset(&ch, 0, sizeof ch);
    ch.added = &rec;
    ch.n_added = 1;
    dyng_cycles_diff d;
    rec.src = 0;
    rec.dst = view.n_vertices; /* out of range */
    assert_int_equal(dyng_cycles_delta(&view, &ch, 3, 0, NULL, &d), DYNG_EINVAL);
    rec.dst = 2; /* 0 - 2 is not in the graph */
    assert_int_equal(dyng_cycles_delta(&view, &ch, 3, 0, NULL, &d), DYNG_EINVAL);
    assert_int_equal(dyng_cycles_delta(&view, &ch, 3, 1, NULL, &d), DYNG_EINVAL);
    ch.added = NULL;
    ch.n_added = 0;
    ch.removed = &rec;
    ch.n_removed = 1;
    rec.src = view.n_vertices;
    assert_int_equal(dyng_cycles_delta(&view, &ch, 4, 1, NULL, &d), DYNG_EINVAL);
    dyng_graph_free(g);
    list_free(&l);
  }
}

/* A directed graph's update needs its in adjacency; a count does not. */
static void test_update_of_directed_graph_needs_in_adjacency(void **state) {
  (void)state;
  edge_list l;
  list_init(&l, 1);
  list_add(&l, 0, 1);
  list_add(&l, 1, 2);
  list_add(&l, 2, 0);
  dyng_graph *g = graph_of_list(&l, 0);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  uint64_t c = 1;
  assert_int_equal(dyng_cycles_update(&view, &ch, 3, 1, NULL, &c), DYNG_ESTATE);
  assert_int_equal(dyng_cycles_update(&view, &ch, 3, 0, NULL, &c), DYNG_ESTATE);
  assert_int_equal(count_of(g, 3, 1), 1);
  assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  dyng_graph_get_view(g, &view);
  assert_int_equal(dyng_cycles_update(&view, &ch, 3, 1, NULL, &c), DYNG_OK);
  assert_int_equal(c, 1);
  dyng_graph_free(g);
  list_free(&l);
}

typedef struct stopper {
  int calls;      /* how often it was asked */
  int stop_after; /* answers "stop" from this call on */
} stopper;

static int stop_when_told(void *ctx) {
  stopper *s = ctx;
  return ++s->calls >= s->stop_after;
}

/* K_n as an edge list (undirected), every node below n. */
static void complete_list(edge_list *l, uint32_t n) {
  list_init(l, 0);
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t v = u + 1; v < n; v++) list_add(l, u, v);
}

static void test_cancel_stops_a_long_count(void **state) {
  (void)state;
  edge_list l;
  complete_list(&l, 40); /* about 10^14 cycles of length 10 */
  dyng_graph *g = graph_of_list(&l, 0);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  for (int k = 3; k <= 10; k++)
    for (int directed = 0; directed < 2; directed++) {
      stopper s = {0, 3};
      dyng_cancel cancel = {stop_when_told, &s, NULL};
      uint64_t c = 42;
      int rc = dyng_cycles_count(&view, k, directed, &cancel, &c);
      if (k >= 6) {
        assert_int_equal(rc, DYNG_EINTERRUPTED);
        assert_int_equal(s.calls, 3);
        assert_int_equal(c, 42);
      } else if (rc == DYNG_OK) {
        assert_int_equal(c, complete_count(40, k, directed));
      } else {
        assert_int_equal(rc, DYNG_EINTERRUPTED);
      }
    }
  /* A callback that never stops lets the count finish. */
  stopper never = {0, 1 << 30};
  dyng_cancel cancel = {stop_when_told, &never, NULL};
  uint64_t c = 0;
  assert_int_equal(dyng_cycles_count(&view, 4, 0, &cancel, &c), DYNG_OK);
  assert_int_equal(c, complete_count(40, 4, 0));
  dyng_cancel no_callback = {NULL, NULL, NULL};
  assert_int_equal(dyng_cycles_count(&view, 3, 0, &no_callback, &c), DYNG_OK);
  assert_int_equal(c, complete_count(40, 3, 0));

  /* The update of a new edge of K_40 minus that edge, with k = 10. */
  dyng_batch *b = dyng_batch_new(0);
  assert_non_null(b);
  dyng_changes ch;
  memset(&ch, 0, sizeof ch);
  assert_int_equal(dyng_batch_delete(b, rowid_of(0)), DYNG_OK);
  assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
  dyng_graph_get_view(g, &view);
  for (int directed = 0; directed < 2; directed++) {
    stopper s = {0, 2};
    dyng_cancel stop = {stop_when_told, &s, NULL};
    c = UINT64_MAX;
    assert_int_equal(dyng_cycles_update(&view, &ch, 10, directed, &stop, &c), DYNG_EINTERRUPTED);
    assert_int_equal(s.calls, 2);
    assert_int_equal(c, UINT64_MAX);
  }
  dyng_changes_free(&ch);
  dyng_batch_free(b);
  dyng_graph_free(g);
  list_free(&l);
}

/* A graph big enough for the counts to run on several threads (roots and
** changed edges are handed out in chunks): a ring of 3,000 nodes with random
** chords between nearby nodes, so that short cycles abound.  Counts from
** scratch and updates after a batch must not depend on how many threads
** ran them, and the updates must equal a recount. */
static void test_counts_do_not_depend_on_threads(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 500);
  const uint32_t n = 3000;
  for (int directed_graph = 0; directed_graph < 2; directed_graph++) {
    edge_list l;
    list_init(&l, directed_graph);
    for (uint32_t v = 0; v < n; v++) list_add(&l, v, (v + 1) % n);
    for (uint32_t i = 0; i < 3 * n; i++) {
      uint32_t u = (uint32_t)test_rng_below(&r, n), d = 1 + (uint32_t)test_rng_below(&r, 6);
      if (test_rng_below(&r, 2)) list_add(&l, u, (u + d) % n);
      else list_add(&l, (u + d) % n, u);
    }
    dyng_graph *g = graph_of_list(&l, directed_graph);
    const int k_max = under_valgrind() ? 4 : 6;
    uint64_t one[8][2], many[8][2];
    for (int k = 3; k <= k_max; k++)
      for (int directed = 0; directed < 2; directed++) {
        dyng_set_max_threads(1);
        one[k][directed] = count_of(g, k, directed);
        dyng_set_max_threads(0);
        many[k][directed] = count_of(g, k, directed);
        if (one[k][directed] != many[k][directed])
          fail_msg("k = %d, %s: %llu cycles on one thread, %llu on %d", k, directed ? "directed" : "undirected",
                   (unsigned long long)one[k][directed], (unsigned long long)many[k][directed], dyng_threads());
        assert_true(one[k][directed] > 0);
      }
    /* A batch of 600 deletes and 600 inserts. */
    dyng_batch *b = dyng_batch_new(0);
    assert_non_null(b);
    dyng_changes ch;
    memset(&ch, 0, sizeof ch);
    for (int i = 0; i < 600; i++) {
      size_t e = (size_t)test_rng_below(&r, l.n_edges);
      l.present[e] = 0;
      assert_int_equal(dyng_batch_delete(b, rowid_of(e)), DYNG_OK);
      uint32_t u = (uint32_t)test_rng_below(&r, n), v = (u + 1 + (uint32_t)test_rng_below(&r, 5)) % n;
      size_t f = list_add(&l, u, v);
      assert_int_equal(dyng_batch_insert(b, rowid_of(f), node_id_of(u), node_id_of(v), NULL), DYNG_OK);
    }
    assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    for (int k = 3; k <= k_max; k++)
      for (int directed = 0; directed < 2; directed++) {
        dyng_set_max_threads(1);
        assert_int_equal(dyng_cycles_update(&view, &ch, k, directed, NULL, &one[k][directed]), DYNG_OK);
        dyng_set_max_threads(0);
        assert_int_equal(dyng_cycles_update(&view, &ch, k, directed, NULL, &many[k][directed]), DYNG_OK);
        uint64_t again = count_of(g, k, directed);
        if (one[k][directed] != again || many[k][directed] != again)
          fail_msg("after the batch, k = %d, %s: updated %llu on one thread, %llu on %d, recounted %llu", k,
                   directed ? "directed" : "undirected", (unsigned long long)one[k][directed],
                   (unsigned long long)many[k][directed], dyng_threads(), (unsigned long long)again);
      }
    /* A stop asked on the calling thread ends the work of all of them. */
    for (int k = 3; k <= k_max; k++) {
      stopper s = {0, 1};
      dyng_cancel cancel = {stop_when_told, &s, NULL};
      uint64_t c = 42;
      int rc = dyng_cycles_count(&view, k, 0, &cancel, &c);
      if (rc != DYNG_OK) {
        assert_int_equal(rc, DYNG_EINTERRUPTED);
        assert_int_equal(c, 42);
      }
    }
    dyng_changes_free(&ch);
    dyng_batch_free(b);
    dyng_graph_free(g);
    list_free(&l);
  }
}

/* After a parallel count, a forked child counts too (on one thread: GNU
** OpenMP's pool does not survive fork) and gets the parent's answer; a hang
** is caught by an alarm in the child. */
static void test_a_forked_child_still_counts(void **state) {
  (void)state;
  edge_list l;
  list_init(&l, 0);
  for (uint32_t v = 0; v < 2000; v++) {
    list_add(&l, v, (v + 1) % 2000);
    list_add(&l, v, (v + 2) % 2000);
  }
  dyng_graph *g = graph_of_list(&l, 0);
  uint64_t want = count_of(g, 3, 0);
  assert_true(want > 0);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(20);
    close(fds[0]);
    uint64_t got[2] = {0, 0};
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    int rc = dyng_cycles_count(&view, 3, 0, NULL, &got[0]);
    got[1] = (uint64_t)dyng_threads();
    _exit(rc == DYNG_OK && write(fds[1], got, sizeof got) == (ssize_t)sizeof got ? 0 : 1);
  }
  close(fds[1]);
  uint64_t got[2] = {0, 0};
  ssize_t n = read(fds[0], got, sizeof got);
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(n, (ssize_t)sizeof got);
  assert_int_equal(got[0], want);
  assert_int_equal(got[1], 1);
  assert_int_equal(count_of(g, 3, 0), want); /* the parent is unaffected */
  dyng_graph_free(g);
  list_free(&l);
}

/* Every allocation of a count and of an update failing in turn: DYNG_ENOMEM,
** nothing leaked (valgrind / ASan), and then the right answer. */
static void test_out_of_memory_is_enomem(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 300);
  for (int directed_graph = 0; directed_graph < 2; directed_graph++) {
    edge_list l;
    random_list(&r, &l, directed_graph, 12);
    list_add(&l, 0, 1);
    dyng_graph *g = graph_of_list(&l, directed_graph);
    dyng_batch *b = dyng_batch_new(0);
    assert_non_null(b);
    dyng_changes ch;
    memset(&ch, 0, sizeof ch);
    assert_int_equal(dyng_batch_delete(b, rowid_of(0)), DYNG_OK);
    assert_int_equal(dyng_batch_insert(b, rowid_of(1000), node_id_of(3), node_id_of(7), NULL), DYNG_OK);
    assert_int_equal(dyng_batch_insert(b, rowid_of(1001), node_id_of(2), node_id_of(5), NULL), DYNG_OK);
    uint64_t before[11][2];
    for (int k = 3; k <= 6; k++)
      for (int directed = 0; directed < 2; directed++) before[k][directed] = count_of(g, k, directed);
    assert_int_equal(dyng_graph_apply_tracked(g, b, NULL, &ch), DYNG_OK);
    l.present[0] = 0;
    list_add(&l, 3, 7);
    list_add(&l, 2, 5);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    for (int k = 3; k <= 6; k++)
      for (int directed = 0; directed < 2; directed++) {
        uint64_t want = brute_count(&l, k, directed);
        for (long n = 0;; n++) {
          assert_true(n < 1000);
          uint64_t c = 0;
          dyng_alloc_fail_after(n);
          int rc = dyng_cycles_count(&view, k, directed, NULL, &c);
          dyng_alloc_fail_after(-1);
          if (rc == DYNG_OK) {
            assert_int_equal(c, want);
            break;
          }
          assert_int_equal(rc, DYNG_ENOMEM);
        }
        for (long n = 0;; n++) {
          assert_true(n < 1000);
          uint64_t c = before[k][directed];
          dyng_alloc_fail_after(n);
          int rc = dyng_cycles_update(&view, &ch, k, directed, NULL, &c);
          dyng_alloc_fail_after(-1);
          if (rc == DYNG_OK) {
            assert_int_equal(c, want);
            break;
          }
          assert_int_equal(rc, DYNG_ENOMEM);
          assert_int_equal(c, before[k][directed]);
        }
      }
    dyng_changes_free(&ch);
    dyng_batch_free(b);
    dyng_graph_free(g);
    list_free(&l);
  }
}

/* ---- real graphs -------------------------------------------------------- */

/* Reads "u v" lines ('#' comments allowed) of $DYNG_DATA_DIR/name; 0 when
** the file is not there. */
static int read_edges(const char *name, int directed, edge_list *l, uint32_t *n_nodes) {
  const char *dir = getenv("DYNG_DATA_DIR");
  if (!dir || !*dir) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  list_init(l, directed);
  *n_nodes = 0;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    unsigned long long u, v;
    if (line[0] == '#' || sscanf(line, "%llu %llu", &u, &v) != 2) continue;
    assert_true(u < 10000000 && v < 10000000);
    list_add(l, (uint32_t)u, (uint32_t)v);
    if (u + 1 > *n_nodes) *n_nodes = (uint32_t)u + 1;
    if (v + 1 > *n_nodes) *n_nodes = (uint32_t)v + 1;
  }
  fclose(f);
  assert_true(l->n_edges > 0);
  return 1;
}

static int data_file_present(const char *name) {
  const char *dir = getenv("DYNG_DATA_DIR");
  if (!dir || !*dir) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  fclose(f);
  return 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_u32(const void *pa, const void *pb) {
  uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
  return (x > y) - (x < y);
}

/* 4-cycles the slow way: every pair {a, c} with m common neighbours closes
** m(m-1)/2 of them, and each 4-cycle has two such diagonals.  The simple
** adjacency of the list (as undirected) is built here: sorted, deduplicated
** lists without self-loops. */
static uint64_t quads_by_common_neighbours(const edge_list *l, uint32_t n) {
  uint32_t *off = calloc((size_t)n + 1, sizeof *off), *len = calloc(n, sizeof *len);
  uint32_t *adj = malloc(2 * l->n_edges * sizeof *adj), *common = calloc(n, sizeof *common);
  uint32_t *touched = malloc((size_t)n * sizeof *touched);
  assert_true(off && len && adj && common && touched);
  for (size_t e = 0; e < l->n_edges; e++) {
    off[l->src[e] + 1]++;
    off[l->dst[e] + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) off[v + 1] += off[v];
  for (size_t e = 0; e < l->n_edges; e++) {
    uint32_t a = l->src[e], b = l->dst[e];
    if (a == b) continue;
    adj[off[a] + len[a]++] = b;
    adj[off[b] + len[b]++] = a;
  }
  for (uint32_t v = 0; v < n; v++) {
    uint32_t *list = adj + off[v], w = 0;
    qsort(list, len[v], sizeof *list, cmp_u32);
    for (uint32_t i = 0; i < len[v]; i++)
      if (!w || list[w - 1] != list[i]) list[w++] = list[i];
    len[v] = w;
  }
  uint64_t pairs = 0;
  for (uint32_t a = 0; a < n; a++) {
    uint32_t n_touched = 0;
    for (uint32_t i = 0; i < len[a]; i++) {
      uint32_t b = adj[off[a] + i];
      for (uint32_t j = 0; j < len[b]; j++) {
        uint32_t c = adj[off[b] + j];
        if (c <= a) continue;
        if (!common[c]++) touched[n_touched++] = c;
      }
    }
    for (uint32_t t = 0; t < n_touched; t++) {
      uint64_t m = common[touched[t]];
      pairs += m * (m - 1) / 2;
      common[touched[t]] = 0;
    }
  }
  free(off);
  free(len);
  free(adj);
  free(common);
  free(touched);
  return pairs / 2;
}

static void check_real_graph(const char *name, uint64_t triangles) {
  edge_list l;
  uint32_t n_nodes;
  if (!read_edges(name, 0, &l, &n_nodes)) {
    print_message("# %s not found: skipped\n", name);
    return;
  }
  dyng_graph *g = graph_of_list(&l, 0);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint64_t c3 = 0, c4 = 0;
  double t0 = now_ms();
  assert_int_equal(dyng_cycles_count(&view, 3, 0, NULL, &c3), DYNG_OK);
  double t1 = now_ms();
  assert_int_equal(dyng_cycles_count(&view, 4, 0, NULL, &c4), DYNG_OK);
  double t2 = now_ms();
  printf("# %s: %llu triangles in %.1f ms, %llu 4-cycles in %.1f ms\n", name, (unsigned long long)c3, t1 - t0,
         (unsigned long long)c4, t2 - t1);
  assert_int_equal(c3, triangles);
  if (!under_valgrind()) {
    double t3 = now_ms();
    uint64_t slow = quads_by_common_neighbours(&l, n_nodes);
    printf("# %s: 4-cycles over common neighbours %llu in %.1f ms\n", name, (unsigned long long)slow,
           now_ms() - t3);
    assert_int_equal(c4, slow);
    /* Each undirected cycle is two directed ones. */
    assert_int_equal(count_of(g, 3, 1), 2 * triangles);
  }
  dyng_graph_free(g);

  /* The same file as a directed graph, seen as undirected. */
  l.directed = 1;
  g = graph_of_list(&l, 0);
  assert_int_equal(count_of(g, 3, 0), triangles);
  dyng_graph_free(g);
  list_free(&l);
}

/* SNAP lists 1,612,010 triangles for ego-Facebook, 17,144 for Oregon-1. */
static void test_facebook_triangles_match_snap(void **state) { check_real_graph("facebook_combined.txt", 1612010); }
static void test_oregon_triangles_match_snap(void **state) { check_real_graph("oregon1_010331.edges", 17144); }

int main(void) {
  test_seed();
  const struct CMUnitTest always[] = {
      cmocka_unit_test(test_undirected_graphs_match_brute_force),
      cmocka_unit_test(test_directed_graphs_match_brute_force),
      cmocka_unit_test(test_parallel_edges_and_self_loops_are_ignored),
      cmocka_unit_test(test_complete_graphs_match_closed_form),
      cmocka_unit_test(test_a_ring_is_one_cycle),
      cmocka_unit_test(test_empty_graph_has_no_cycles),
      cmocka_unit_test(test_counts_do_not_depend_on_threads),
      cmocka_unit_test(test_a_forked_child_still_counts),
      cmocka_unit_test(test_update_after_batches_undirected_matches_recount),
      cmocka_unit_test(test_update_after_batches_directed_matches_recount),
      cmocka_unit_test(test_parallel_copies_change_nothing_until_the_last),
      cmocka_unit_test(test_empty_batch_changes_nothing),
      cmocka_unit_test(test_k_out_of_range_is_einval),
      cmocka_unit_test(test_changes_that_do_not_fit_the_graph_are_einval),
      cmocka_unit_test(test_update_of_directed_graph_needs_in_adjacency),
      cmocka_unit_test(test_cancel_stops_a_long_count),
      cmocka_unit_test_teardown(test_out_of_memory_is_enomem, teardown),
  };
  const struct {
    const char *file;
    struct CMUnitTest test;
  } real[] = {
      {"facebook_combined.txt", cmocka_unit_test(test_facebook_triangles_match_snap)},
      {"oregon1_010331.edges", cmocka_unit_test(test_oregon_triangles_match_snap)},
  };
  const size_t n_always = sizeof always / sizeof always[0], n_real = sizeof real / sizeof real[0];
  struct CMUnitTest tests[sizeof always / sizeof always[0] + sizeof real / sizeof real[0]];
  size_t n = 0;
  for (size_t i = 0; i < n_always; i++) tests[n++] = always[i];
  /* The real-graph cases are left out, not skipped, when their file is
  ** absent: the TAP driver counts cmocka's skip as a failure. */
  for (size_t i = 0; i < n_real; i++) {
    if (data_file_present(real[i].file)) tests[n++] = real[i].test;
    else printf("# left out %s: $DYNG_DATA_DIR/%s not found\n", real[i].test.name, real[i].file);
  }
  return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
