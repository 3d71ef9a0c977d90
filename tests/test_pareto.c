/*
** tests/test_pareto.c: engine/pareto.c without SQLite, against brute
** force: on small random graphs with positive integer weights in two or
** three objectives, the front is the set of non-dominated cost vectors of
** all simple paths, enumerated one by one.  Each path of the front is
** checked to be a real path of the graph with the cost it reports.  On
** graphs full of ties (weights 0, 1 and 2, parallel edges), the paths must
** be the ones the tie rule picks, computed by brute force too, for the
** graph loaded in two orders and after a history of batches.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/graph.h"
#include "engine/pareto.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_V 8
#define MAX_E 24
#define MAX_K 3
#define MAX_COSTS 4096

/* A small graph as the test knows it. */
typedef struct small_graph {
  int n, m, k, directed;
  int src[MAX_E], dst[MAX_E];
  double w[MAX_E][MAX_K];
} small_graph;

/* The cost vectors of every simple path found so far. */
typedef struct costs {
  int n, k;
  double c[MAX_COSTS][MAX_K];
} costs;

static void enumerate(const small_graph *sg, int v, int target, int *on_path, double *acc, costs *out) {
  if (v == target) {
    assert_true(out->n < MAX_COSTS);
    memcpy(out->c[out->n++], acc, sizeof(double) * sg->k);
    return;
  }
  on_path[v] = 1;
  for (int e = 0; e < sg->m; e++) {
    for (int dir = 0; dir < (sg->directed ? 1 : 2); dir++) {
      int a = dir ? sg->dst[e] : sg->src[e], b = dir ? sg->src[e] : sg->dst[e];
      if (a != v || on_path[b]) continue;
      for (int j = 0; j < sg->k; j++) acc[j] += sg->w[e][j];
      enumerate(sg, b, target, on_path, acc, out);
      for (int j = 0; j < sg->k; j++) acc[j] -= sg->w[e][j];
    }
  }
  on_path[v] = 0;
}

static int dominates_or_equals(const double *a, const double *b, int k) {
  for (int j = 0; j < k; j++)
    if (a[j] > b[j]) return 0;
  return 1;
}

static int lex_cmp(const double *a, const double *b, int k) {
  for (int j = 0; j < k; j++)
    if (a[j] != b[j]) return a[j] < b[j] ? -1 : 1;
  return 0;
}

/* The reference front: distinct non-dominated vectors, in lexicographic
** order. */
static void reference_front(const small_graph *sg, int source, int target, costs *front) {
  static costs all;
  int on_path[MAX_V] = {0};
  double acc[MAX_K] = {0};
  all.n = 0;
  all.k = sg->k;
  enumerate(sg, source, target, on_path, acc, &all);
  front->n = 0;
  front->k = sg->k;
  for (int i = 0; i < all.n; i++) {
    int keep = 1;
    for (int j = 0; j < all.n && keep; j++) {
      if (j == i) continue;
      int cmp = lex_cmp(all.c[j], all.c[i], sg->k);
      /* Dominated strictly, or equal to an earlier one. */
      if (dominates_or_equals(all.c[j], all.c[i], sg->k) && (cmp != 0 || j < i)) keep = 0;
    }
    if (keep) memcpy(front->c[front->n++], all.c[i], sizeof(double) * sg->k);
  }
  for (int i = 1; i < front->n; i++) /* insertion sort, lexicographic */
    for (int j = i; j > 0 && lex_cmp(front->c[j - 1], front->c[j], sg->k) > 0; j--) {
      double t[MAX_K];
      memcpy(t, front->c[j], sizeof t);
      memcpy(front->c[j], front->c[j - 1], sizeof t);
      memcpy(front->c[j - 1], t, sizeof t);
    }
}

static void random_graph(test_rng *r, small_graph *sg) {
  sg->n = 2 + (int)test_rng_below(r, MAX_V - 1);
  sg->m = (int)test_rng_below(r, (uint64_t)(3 * sg->n));
  if (sg->m > MAX_E) sg->m = MAX_E;
  sg->k = 2 + (int)test_rng_below(r, MAX_K - 1);
  sg->directed = test_rng_below(r, 3) != 0;
  for (int e = 0; e < sg->m; e++) {
    sg->src[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    sg->dst[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    for (int j = 0; j < sg->k; j++) sg->w[e][j] = (double)(1 + test_rng_below(r, 9));
  }
}

static dyng_graph *build(const small_graph *sg) {
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, sg->k, sg->directed), DYNG_OK);
  /* Node ids are the test's vertex numbers; edge e has rowid 100 + e. */
  for (int e = 0; e < sg->m; e++)
    assert_int_equal(dyng_graph_load_edge(g, 100 + e, sg->src[e], sg->dst[e], sg->w[e]), DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sg->directed) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  return g;
}

/* Checks front path i: a real path from source to target whose edges'
** weights add up to its cost. */
static void check_path(const dyng_graph *g, const dyng_front *f, uint32_t i, uint32_t vs,
                       uint32_t vt, int directed) {
  uint32_t at = f->path_start[i], len = f->path_len[i];
  assert_true(len >= 1);
  assert_int_equal(f->vertex[at], vs);
  assert_int_equal(f->vertex[at + len - 1], vt);
  double sum[MAX_K] = {0};
  for (uint32_t j = 0; j + 1 < len; j++) {
    uint32_t slot = f->edge[at + j], a = f->vertex[at + j], b = f->vertex[at + j + 1];
    uint32_t es = dyng_graph_edge_src(g, slot), ed = dyng_graph_edge_dst(g, slot);
    assert_true((es == a && ed == b) || (!directed && es == b && ed == a));
    for (int k = 0; k < f->k; k++) sum[k] += dyng_graph_edge_weight(g, slot, k);
  }
  assert_int_equal(f->edge[at + len - 1], DYNG_NONE);
  for (int k = 0; k < f->k; k++) assert_true(sum[k] == f->cost[(size_t)i * f->k + k]);
}

static void test_front_matches_brute_force_on_random_graphs(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 0);
  static small_graph sg;
  static costs want;
  int n_nonempty = 0;
  for (int round = 0; round < 300; round++) {
    random_graph(&r, &sg);
    if (sg.m == 0) continue;
    dyng_graph *g = build(&sg);
    dyng_graph_view view;
    dyng_graph_get_view(g, &view);
    int s = sg.src[test_rng_below(&r, (uint64_t)sg.m)];
    int t = sg.dst[test_rng_below(&r, (uint64_t)sg.m)];
    uint32_t vs, vt;
    assert_int_equal(dyng_graph_vertex(g, s, &vs), DYNG_OK);
    assert_int_equal(dyng_graph_vertex(g, t, &vt), DYNG_OK);
    reference_front(&sg, s, t, &want);
    dyng_front f;
    memset(&f, 0, sizeof f);
    assert_int_equal(dyng_pareto_front(&view, vs, vt, 1000000, &f), DYNG_OK);
    assert_int_equal(f.k, sg.k);
    assert_int_equal(f.n_paths, (uint32_t)want.n);
    for (uint32_t i = 0; i < f.n_paths; i++) {
      for (int k = 0; k < sg.k; k++) assert_true(f.cost[(size_t)i * sg.k + k] == want.c[i][k]);
      check_path(g, &f, i, vs, vt, sg.directed);
    }
    n_nonempty += f.n_paths > 1;
    dyng_front_free(&f);
    dyng_graph_free(g);
  }
  assert_true(n_nonempty > 20); /* the rounds did reach fronts of several paths */
}

static void test_front_label_bound_gives_etoobig(void **state) {
  (void)state;
  /* A ladder: 2^rungs paths with trade-offs (1, 2) against (2, 1), all on
  ** the front. */
  small_graph sg = {.n = 0, .m = 0, .k = 2, .directed = 1};
  int rungs = 6;
  for (int i = 0; i < rungs; i++) {
    sg.src[sg.m] = i, sg.dst[sg.m] = i + 1, sg.w[sg.m][0] = 1, sg.w[sg.m][1] = 2, sg.m++;
    sg.src[sg.m] = i, sg.dst[sg.m] = i + 1, sg.w[sg.m][0] = 2, sg.w[sg.m][1] = 1, sg.m++;
  }
  sg.n = rungs + 1;
  dyng_graph *g = build(&sg);
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint32_t vs, vt;
  assert_int_equal(dyng_graph_vertex(g, 0, &vs), DYNG_OK);
  assert_int_equal(dyng_graph_vertex(g, rungs, &vt), DYNG_OK);
  static costs want;
  reference_front(&sg, 0, rungs, &want);
  assert_int_equal(want.n, rungs + 1); /* costs (6+i, 12-i) */
  dyng_front f;
  memset(&f, 0, sizeof f);
  assert_int_equal(dyng_pareto_front(&view, vs, vt, 3, &f), DYNG_EGAVEUP);
  assert_int_equal(f.n_paths, 0);
  dyng_front_free(&f);
  assert_int_equal(dyng_pareto_front(&view, vs, vt, 100000, &f), DYNG_OK);
  assert_int_equal(f.n_paths, (uint32_t)want.n);
  dyng_front_free(&f);
  assert_int_equal(dyng_pareto_front(&view, vs, 99, 100000, &f), DYNG_EINVAL);
  dyng_front_free(&f);
  dyng_graph_free(g);
}

/* ---- the tie rule ------------------------------------------------------- */

/* Where paths tie on a cost vector, the front's path is the one the tie rule
** of docs/sql.md ("Ties", "dyng_pareto") picks, whatever order the graph's
** edges came in.  The reference computes that rule by brute force: every
** simple path from the source gives each vertex its cost vectors, the
** non-dominated ones are its labels, and each label's last edge is, among
** the edges that complete its cost from a label of their start, the
** smallest rowid of those from a strictly cheaper label, else (the edge adds
** nothing) the smallest rowid among those whose start label is the fewest
** such steps from one of the first kind. */

#define TIE_V 6
#define TIE_E 14
#define TIE_LABELS 256 /* per vertex */

/* Rows of a front as text, for comparing and for messages. */
typedef struct tie_rows {
  char *z;
  size_t n, cap;
} tie_rows;

static void tie_printf(tie_rows *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (out->n + (size_t)n + 1 > out->cap) {
    out->cap = 2 * (out->n + (size_t)n + 1);
    out->z = realloc(out->z, out->cap);
    assert_non_null(out->z);
  }
  va_start(ap, fmt);
  vsnprintf(out->z + out->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  out->n += (size_t)n;
}

typedef struct tie_graph {
  small_graph sg;
  int64_t rowid[TIE_E];
} tie_graph;

/* The labels of each vertex: distinct cost vectors, the non-dominated ones
** marked, each with its last edge, its start label and its tie level. */
typedef struct tie_labels {
  int n[TIE_V];
  double c[TIE_V][TIE_LABELS][MAX_K];
  int keep[TIE_V][TIE_LABELS];
  int edge[TIE_V][TIE_LABELS];  /* -1 at the source */
  int from[TIE_V][TIE_LABELS];  /* label index at the edge's start vertex */
  int level[TIE_V][TIE_LABELS]; /* INT_MAX while unknown */
} tie_labels;

static int tie_find(const tie_labels *L, int v, const double *c, int k) {
  for (int i = 0; i < L->n[v]; i++)
    if (lex_cmp(L->c[v][i], c, k) == 0) return i;
  return -1;
}

static void tie_enumerate(const small_graph *sg, int v, int *on_path, double *acc, tie_labels *L) {
  if (tie_find(L, v, acc, sg->k) < 0) {
    assert_true(L->n[v] < TIE_LABELS);
    memcpy(L->c[v][L->n[v]++], acc, sizeof(double) * sg->k);
  }
  on_path[v] = 1;
  for (int e = 0; e < sg->m; e++)
    for (int dir = 0; dir < (sg->directed ? 1 : 2); dir++) {
      int a = dir ? sg->dst[e] : sg->src[e], b = dir ? sg->src[e] : sg->dst[e];
      if (a != v || on_path[b]) continue;
      double next[MAX_K];
      for (int j = 0; j < sg->k; j++) next[j] = acc[j] + sg->w[e][j];
      tie_enumerate(sg, b, on_path, next, L);
    }
  on_path[v] = 0;
}

/* Whether edge e, taken in direction dir, ends at v, and from where. */
static int tie_edge_into(const small_graph *sg, int e, int dir, int v, int *u) {
  int a = dir ? sg->dst[e] : sg->src[e], b = dir ? sg->src[e] : sg->dst[e];
  *u = a;
  return b == v;
}

static void tie_reference(const tie_graph *tg, int s, tie_labels *L) {
  const small_graph *sg = &tg->sg;
  int k = sg->k, on_path[TIE_V] = {0};
  double zero[MAX_K] = {0};
  memset(L, 0, sizeof *L);
  tie_enumerate(sg, s, on_path, zero, L);
  for (int v = 0; v < sg->n; v++)
    for (int i = 0; i < L->n[v]; i++) {
      L->keep[v][i] = 1;
      for (int j = 0; j < L->n[v] && L->keep[v][i]; j++)
        if (j != i && dominates_or_equals(L->c[v][j], L->c[v][i], k)) L->keep[v][i] = 0;
      L->edge[v][i] = L->from[v][i] = -1;
      L->level[v][i] = INT_MAX;
    }
  /* Labels reached from a strictly cheaper label: the smallest rowid. */
  for (int v = 0; v < sg->n; v++)
    for (int i = 0; i < L->n[v]; i++) {
      if (!L->keep[v][i]) continue;
      if (v == s && lex_cmp(L->c[v][i], zero, k) == 0) {
        L->level[v][i] = 0; /* the source */
        continue;
      }
      for (int e = 0; e < sg->m; e++)
        for (int dir = 0; dir < (sg->directed ? 1 : 2); dir++) {
          int u;
          if (!tie_edge_into(sg, e, dir, v, &u)) continue;
          for (int x = 0; x < L->n[u]; x++) {
            if (!L->keep[u][x] || lex_cmp(L->c[u][x], L->c[v][i], k) == 0) continue;
            double c[MAX_K];
            for (int j = 0; j < k; j++) c[j] = L->c[u][x][j] + sg->w[e][j];
            if (lex_cmp(c, L->c[v][i], k) != 0) continue;
            int best = L->edge[v][i], bf = L->from[v][i];
            if (best < 0 || tg->rowid[e] < tg->rowid[best] ||
                (tg->rowid[e] == tg->rowid[best] && lex_cmp(L->c[u][x], L->c[bf >> 8][bf & 0xff], k) < 0)) {
              L->edge[v][i] = e;
              L->from[v][i] = u << 8 | x;
              L->level[v][i] = 0;
            }
          }
        }
    }
  /* The others, by tie level: fewest steps that add nothing, then rowid. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (int v = 0; v < sg->n; v++)
      for (int i = 0; i < L->n[v]; i++) {
        if (!L->keep[v][i] || L->level[v][i] == 0) continue;
        int best_e = -1, best_from = -1, best_level = INT_MAX;
        for (int e = 0; e < sg->m; e++)
          for (int dir = 0; dir < (sg->directed ? 1 : 2); dir++) {
            int u;
            if (!tie_edge_into(sg, e, dir, v, &u)) continue;
            int x = tie_find(L, u, L->c[v][i], k);
            if (x < 0 || !L->keep[u][x] || L->level[u][x] == INT_MAX) continue;
            double c[MAX_K];
            for (int j = 0; j < k; j++) c[j] = L->c[u][x][j] + sg->w[e][j];
            if (lex_cmp(c, L->c[v][i], k) != 0) continue;
            int lv = L->level[u][x] + 1;
            if (lv < best_level || (lv == best_level && tg->rowid[e] < tg->rowid[best_e]))
              best_e = e, best_from = u << 8 | x, best_level = lv;
          }
        if (best_level != L->level[v][i] || best_e != L->edge[v][i] || best_from != L->from[v][i]) {
          L->level[v][i] = best_level, L->edge[v][i] = best_e, L->from[v][i] = best_from;
          changed = 1;
        }
      }
  }
}

/* The reference front from s to t as rows "node/rowid ... (cost) ;", each
** path in lexicographic order of cost. */
static char *tie_reference_rows(const tie_graph *tg, int s, int t) {
  static tie_labels L;
  tie_reference(tg, s, &L);
  const small_graph *sg = &tg->sg;
  int order[TIE_LABELS], n = 0;
  for (int i = 0; i < L.n[t]; i++)
    if (L.keep[t][i]) order[n++] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && lex_cmp(L.c[t][order[j - 1]], L.c[t][order[j]], sg->k) > 0; j--) {
      int x = order[j];
      order[j] = order[j - 1], order[j - 1] = x;
    }
  tie_rows out = {NULL, 0, 0};
  tie_printf(&out, "");
  for (int p = 0; p < n; p++) {
    int vs[64], es[64], len = 0;
    for (int v = t, i = order[p]; v >= 0;) {
      assert_true(len < 64);
      assert_true(L.level[v][i] != INT_MAX);
      vs[len] = v;
      es[len++] = L.edge[v][i];
      if (L.edge[v][i] < 0) break;
      int from = L.from[v][i];
      v = from >> 8, i = from & 0xff;
    }
    for (int j = len - 1; j >= 0; j--)
      tie_printf(&out, "%d/%lld ", vs[j], es[j] >= 0 ? (long long)tg->rowid[es[j]] : -1LL);
    tie_printf(&out, "(");
    for (int j = 0; j < sg->k; j++) tie_printf(&out, "%s%g", j ? "," : "", L.c[t][order[p]][j]);
    tie_printf(&out, ");");
  }
  return out.z;
}

/* The engine's front from node s to node t as tie_reference_rows writes it. */
static char *tie_front_rows(const dyng_graph *g, int64_t s, int64_t t) {
  dyng_graph_view view;
  dyng_graph_get_view(g, &view);
  uint32_t vs, vt;
  assert_int_equal(dyng_graph_vertex(g, s, &vs), DYNG_OK);
  assert_int_equal(dyng_graph_vertex(g, t, &vt), DYNG_OK);
  dyng_front f;
  memset(&f, 0, sizeof f);
  assert_int_equal(dyng_pareto_front(&view, vs, vt, 1000000, &f), DYNG_OK);
  tie_rows out = {NULL, 0, 0};
  tie_printf(&out, "");
  for (uint32_t p = 0; p < f.n_paths; p++) {
    uint32_t at = f.path_start[p];
    for (uint32_t j = 0; j < f.path_len[p]; j++)
      tie_printf(&out, "%lld/%lld ", (long long)view.node_id[f.vertex[at + j]],
                          j ? (long long)view.edge_rowid[f.edge[at + j - 1]] : -1LL);
    tie_printf(&out, "(");
    for (int j = 0; j < f.k; j++) tie_printf(&out, "%s%g", j ? "," : "", f.cost[(size_t)p * f.k + j]);
    tie_printf(&out, ");");
  }
  dyng_front_free(&f);
  return out.z;
}

/* A small graph full of ties: weights 0, 1 or 2 (0 often), parallel edges
** of equal weights, rowids in no particular order. */
static void tie_random_graph(test_rng *r, tie_graph *tg) {
  small_graph *sg = &tg->sg;
  sg->n = 3 + (int)test_rng_below(r, TIE_V - 2);
  sg->m = sg->n + (int)test_rng_below(r, (uint64_t)(TIE_E - sg->n + 1));
  sg->k = 2 + (int)test_rng_below(r, MAX_K - 1);
  sg->directed = test_rng_below(r, 3) != 0;
  int perm[TIE_E];
  for (int e = 0; e < sg->m; e++) perm[e] = e;
  for (int e = sg->m - 1; e > 0; e--) {
    int j = (int)test_rng_below(r, (uint64_t)e + 1), x = perm[e];
    perm[e] = perm[j], perm[j] = x;
  }
  for (int e = 0; e < sg->m; e++) {
    tg->rowid[e] = 7 + 3 * perm[e];
    if (e > 0 && test_rng_below(r, 3) == 0) {
      /* A parallel edge (or the same edge reversed), same weights. */
      int f = (int)test_rng_below(r, (uint64_t)e);
      int rev = !sg->directed && test_rng_below(r, 2);
      sg->src[e] = rev ? sg->dst[f] : sg->src[f];
      sg->dst[e] = rev ? sg->src[f] : sg->dst[f];
      memcpy(sg->w[e], sg->w[f], sizeof sg->w[e]);
      continue;
    }
    sg->src[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    sg->dst[e] = (int)test_rng_below(r, (uint64_t)sg->n);
    for (int j = 0; j < sg->k; j++) sg->w[e][j] = test_rng_below(r, 2) ? 0.0 : (double)(1 + test_rng_below(r, 2));
  }
}

/* The graph loaded at once, edges in the given order. */
static dyng_graph *tie_load(const tie_graph *tg, const int *order) {
  const small_graph *sg = &tg->sg;
  dyng_graph *g = NULL;
  assert_int_equal(dyng_graph_new(&g, sg->k, sg->directed), DYNG_OK);
  for (int i = 0; i < sg->m; i++) {
    int e = order[i];
    assert_int_equal(dyng_graph_load_edge(g, tg->rowid[e], sg->src[e], sg->dst[e], sg->w[e]), DYNG_OK);
  }
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sg->directed) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  return g;
}

/* The same graph after a history: other edges and nodes first (some edges
** with other weights), then batches that add the rest in another order,
** fix the weights, delete the others, and delete and add again some edges. */
static dyng_graph *tie_with_history(test_rng *r, const tie_graph *tg) {
  const small_graph *sg = &tg->sg;
  dyng_graph *g = NULL;
  double other[MAX_K] = {5, 5, 5};
  assert_int_equal(dyng_graph_new(&g, sg->k, sg->directed), DYNG_OK);
  for (int i = 0; i < 4; i++)
    assert_int_equal(dyng_graph_load_edge(g, 1000 + i, 100 + i, i % 2 ? 0 : 101 + i, other), DYNG_OK);
  for (int e = sg->m - 1; e >= 0; e -= 2)
    assert_int_equal(dyng_graph_load_edge(g, tg->rowid[e], sg->src[e], sg->dst[e], e % 3 ? sg->w[e] : other),
                     DYNG_OK);
  assert_int_equal(dyng_graph_seal(g), DYNG_OK);
  if (sg->directed) assert_int_equal(dyng_graph_build_in(g), DYNG_OK);
  dyng_batch *b = dyng_batch_new(sg->k);
  assert_non_null(b);
  int order[TIE_E];
  for (int e = 0; e < sg->m; e++) order[e] = e;
  for (int e = sg->m - 1; e > 0; e--) {
    int j = (int)test_rng_below(r, (uint64_t)e + 1), x = order[e];
    order[e] = order[j], order[j] = x;
  }
  for (int i = 0; i < sg->m; i++) {
    int e = order[i];
    if (e % 2 == (sg->m - 1) % 2 && e % 3) continue; /* loaded as it is */
    assert_int_equal(dyng_batch_insert(b, tg->rowid[e], sg->src[e], sg->dst[e], sg->w[e]), DYNG_OK);
  }
  for (int i = 0; i < 4; i++) assert_int_equal(dyng_batch_delete(b, 1000 + i), DYNG_OK);
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  int again[3];
  for (int i = 0; i < 3; i++) {
    again[i] = (int)test_rng_below(r, (uint64_t)sg->m);
    dyng_batch_clear(b);
    assert_int_equal(dyng_batch_delete(b, tg->rowid[again[i]]), DYNG_OK);
    assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  }
  dyng_batch_clear(b);
  for (int i = 2; i >= 0; i--) {
    int e = again[i];
    assert_int_equal(dyng_batch_insert(b, tg->rowid[e], sg->src[e], sg->dst[e], sg->w[e]), DYNG_OK);
  }
  assert_int_equal(dyng_graph_apply(g, b, NULL), DYNG_OK);
  dyng_batch_free(b);
  return g;
}

static void test_front_paths_follow_the_tie_rule_whatever_the_history(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 1);
  static tie_graph tg;
  int n_ties = 0;
  for (int round = 0; round < 400; round++) {
    tie_random_graph(&r, &tg);
    const small_graph *sg = &tg.sg;
    int forward[TIE_E], backward[TIE_E];
    for (int e = 0; e < sg->m; e++) forward[e] = e, backward[e] = sg->m - 1 - e;
    dyng_graph *a = tie_load(&tg, forward), *b = tie_load(&tg, backward), *c = tie_with_history(&r, &tg);
    int s = sg->src[test_rng_below(&r, (uint64_t)sg->m)];
    int t = sg->dst[test_rng_below(&r, (uint64_t)sg->m)];
    char *want = tie_reference_rows(&tg, s, t);
    char *got_a = tie_front_rows(a, s, t), *got_b = tie_front_rows(b, s, t), *got_c = tie_front_rows(c, s, t);
    if (strcmp(got_a, want) || strcmp(got_b, want) || strcmp(got_c, want))
      fail_msg("round %d, %s graph, %d -> %d:\n want    %s\n loaded  %s\n reverse %s\n history %s", round,
               sg->directed ? "directed" : "undirected", s, t, want, got_a, got_b, got_c);
    /* Count the fronts where some path had a tie to break. */
    static costs all;
    int on_path[MAX_V] = {0};
    double acc[MAX_K] = {0};
    all.n = 0;
    if (s != t) enumerate(sg, s, t, on_path, acc, &all);
    for (int i = 0; i < all.n; i++)
      for (int j = i + 1; j < all.n; j++)
        if (lex_cmp(all.c[i], all.c[j], sg->k) == 0) {
          n_ties++;
          i = j = all.n;
        }
    free(want), free(got_a), free(got_b), free(got_c);
    dyng_graph_free(a), dyng_graph_free(b), dyng_graph_free(c);
  }
  assert_true(n_ties > 100); /* the rounds did have ties to break */
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_front_matches_brute_force_on_random_graphs),
      cmocka_unit_test(test_front_label_bound_gives_etoobig),
      cmocka_unit_test(test_front_paths_follow_the_tie_rule_whatever_the_history),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
