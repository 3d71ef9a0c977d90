/*
** bench/cycle_work.c: how much work counting triangles and 4-cycles, and
** following a batch, takes on a graph, in steps rather than milliseconds:
** what decides how the CUDA backend's cycle kernels split their work.
**
**   cycle_work DB.db [--batch K] [--seed S]
**
** DB holds a table edges(src, dst, ...) (bench/gen_graph writes one).  The
** program builds the simple undirected graph (self-loops dropped, parallel
** edges merged), labels its vertices by non-increasing degree as the
** snapshot does, and prints:
**
**   the 4-cycle count's wedges: the wedges u - v - w with v, w > u summed
**   over the roots u, the largest root's, and the share of the first 10,
**   100, 1000 and 10000 roots (the biggest hubs);
**   for a batch like bench_gpu_cycles's (K/2 random rows deleted, K/2 edges
**   between the source of a random row and the destination of another),
**   over its changed edges (F the end with the shorter list, L the other):
**   the triangle search's candidates, the sum of |N(F)|, with the largest;
**   and the 4-cycle search's, the sum over x in N(F) of min(|N(x)|, |N(L)|)
**   (every 2-path F - x - y looked up in the shorter list), against the
**   count's wedges.
**
** The batch's work is taken on the graph before the batch (the searches
** of removed edges run there, those of added edges on the graph after it,
** which differs from it by the batch alone).
*/
#include "bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char bench_program[] = "cycle_work";

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The simple graph in labels: lists off[v] .. off[v + 1] of nbr, sorted. */
typedef struct simple_graph {
  uint32_t n;
  uint32_t *off, *nbr, *label; /* label: vertex index -> label */
} simple_graph;

static uint32_t deg_of(const simple_graph *g, uint32_t v) { return g->off[v + 1] - g->off[v]; }

/* Builds g from the m edges src[i] - dst[i] among n vertices. */
static void build(simple_graph *g, uint32_t n, const uint32_t *src, const uint32_t *dst, size_t m) {
  uint64_t *key = xmalloc(2 * m * sizeof *key);
  size_t e = 0;
  for (size_t i = 0; i < m; i++) {
    if (src[i] == dst[i]) continue;
    key[e++] = (uint64_t)src[i] << 32 | dst[i];
    key[e++] = (uint64_t)dst[i] << 32 | src[i];
  }
  qsort(key, e, sizeof *key, cmp_u64);
  size_t u = 0;
  for (size_t i = 0; i < e; i++)
    if (i == 0 || key[i] != key[i - 1]) key[u++] = key[i];
  e = u;
  uint32_t *deg = calloc(n ? n : 1, sizeof *deg);
  if (!deg) die("out of memory");
  for (size_t i = 0; i < e; i++) deg[key[i] >> 32]++;
  /* Labels: non-increasing degree, ties by index. */
  uint64_t *dk = xmalloc((size_t)n * sizeof *dk);
  for (uint32_t v = 0; v < n; v++) dk[v] = (uint64_t)(0xffffffffu - deg[v]) << 32 | v;
  qsort(dk, n, sizeof *dk, cmp_u64);
  g->n = n;
  g->label = xmalloc((size_t)n * sizeof *g->label);
  for (uint32_t i = 0; i < n; i++) g->label[(uint32_t)dk[i]] = i;
  for (size_t i = 0; i < e; i++) key[i] = (uint64_t)g->label[key[i] >> 32] << 32 | g->label[(uint32_t)key[i]];
  qsort(key, e, sizeof *key, cmp_u64);
  g->off = calloc((size_t)n + 1, sizeof *g->off);
  if (!g->off) die("out of memory");
  g->nbr = xmalloc(e * sizeof *g->nbr);
  for (size_t i = 0; i < e; i++) {
    g->off[(key[i] >> 32) + 1]++;
    g->nbr[i] = (uint32_t)key[i];
  }
  for (uint32_t v = 0; v < n; v++) g->off[v + 1] += g->off[v];
  free(dk);
  free(deg);
  free(key);
}

/* The wedges u - v - w with v, w > u. */
static double root_wedges(const simple_graph *g, uint32_t u) {
  double w = 0;
  for (uint32_t i = g->off[u]; i < g->off[u + 1]; i++) {
    uint32_t v = g->nbr[i];
    if (v <= u) continue;
    for (uint32_t j = g->off[v]; j < g->off[v + 1]; j++) w += g->nbr[j] > u;
  }
  return w;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long batch = 50000;
  uint64_t rng = 20261130;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atol(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) rng = strtoull(argv[++i], NULL, 10);
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else die("usage: cycle_work DB.db [--batch K] [--seed S]");
  }
  if (!path || batch < 2) die("usage: cycle_work DB.db [--batch K] [--seed S]");
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("cannot open %s", path);
  double rows = sql_number(db, "SELECT count(*) FROM edges");
  size_t m = (size_t)rows, cap = m ? m : 1;
  uint32_t *src = xmalloc(cap * sizeof *src), *dst = xmalloc(cap * sizeof *dst);
  uint32_t n = 0;
  sqlite3_stmt *st = prepare(db, "SELECT src, dst FROM edges");
  size_t got = 0;
  while (sqlite3_step(st) == SQLITE_ROW && got < m) {
    sqlite3_int64 a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
    if (a < 0 || b < 0 || a >= 0xffffffffLL || b >= 0xffffffffLL) die("vertex ids must be in [0, 2^32 - 1)");
    src[got] = (uint32_t)a;
    dst[got] = (uint32_t)b;
    if (src[got] + 1 > n) n = src[got] + 1;
    if (dst[got] + 1 > n) n = dst[got] + 1;
    got++;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  m = got;
  simple_graph g;
  build(&g, n, src, dst, m);
  printf("# cycle_work %s: %u vertices, %u simple entries, the largest list %u\n", path, n, g.off[n],
         n ? deg_of(&g, 0) : 0);

  /* The 4-cycle count's wedges per root. */
  double total = 0, largest = 0, first[4] = {0, 0, 0, 0};
  for (uint32_t u = 0; u < n; u++) {
    double w = root_wedges(&g, u);
    total += w;
    if (w > largest) largest = w;
    for (int j = 0, lim = 10; j < 4; j++, lim *= 10)
      if (u < (uint32_t)lim) first[j] += w;
  }
  printf("| 4-cycle count: wedges | %.4g |\n| largest root's wedges | %.4g (%.2f%%) |\n", total, largest,
         total > 0 ? 100 * largest / total : 0);
  for (int j = 0, lim = 10; j < 4; j++, lim *= 10)
    printf("| first %d roots' share | %.1f%% |\n", lim, total > 0 ? 100 * first[j] / total : 0);

  /* A batch's changed edges, as bench_gpu_cycles draws them. */
  double tri = 0, tri_max = 0, quad = 0, quad_max = 0;
  long changed = 0;
  for (long t = 0; t < batch && m > 0; t++) {
    uint32_t x, y;
    if (t < batch / 2) {
      size_t i = (size_t)(splitmix64(&rng) % m);
      x = src[i];
      y = dst[i];
    } else {
      x = src[splitmix64(&rng) % m];
      y = dst[splitmix64(&rng) % m];
    }
    if (x == y) continue;
    changed++;
    uint32_t a = g.label[x], b = g.label[y];
    uint32_t f = deg_of(&g, a) <= deg_of(&g, b) ? a : b, l = f == a ? b : a;
    double dl = deg_of(&g, l), w3 = deg_of(&g, f), w4 = 0;
    for (uint32_t i = g.off[f]; i < g.off[f + 1]; i++) {
      double dx = deg_of(&g, g.nbr[i]);
      w4 += dx < dl ? dx : dl;
    }
    tri += w3;
    quad += w4;
    if (w3 > tri_max) tri_max = w3;
    if (w4 > quad_max) quad_max = w4;
  }
  printf("| batch: changed edges | %ld |\n", changed);
  printf("| triangle search: candidates | %.4g (largest edge %.4g) |\n", tri, tri_max);
  printf("| 4-cycle search: lookups | %.4g (largest edge %.4g) |\n", quad, quad_max);
  printf("| 4-cycle search / count's wedges | %.2fx |\n", total > 0 ? quad / total : 0);
  free(g.off);
  free(g.nbr);
  free(g.label);
  free(src);
  free(dst);
  return 0;
}
