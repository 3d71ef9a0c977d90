/*
** engine/pareto.c: multi-objective label setting (see pareto.h).
**
** Labels live in one growing array: costs (k doubles each), vertex,
** predecessor label, the edge slot that led here and the tie level.  A
** binary heap of label indices orders them lexicographically by cost, then
** by the tie rule (below).  Each vertex keeps the list of its permanent
** labels (linked through `next`); dominance checks walk that list, and a
** new label is also dropped at once when the target's permanent labels
** dominate it (no extension of it can join the front).
**
** Ties.  Of the labels of one vertex with one cost vector, the first to
** leave the heap becomes permanent and the others are dropped; so the heap
** breaks ties by the rule of dyng_sssp's parents (engine/sssp.h), on the
** labels' keys (cost, level, rowid of the last edge, cost of the label it
** extends): a label whose cost its predecessor's is not (the edge added
** something) has level 0, one that its edge left unchanged its
** predecessor's level + 1.  A label's key is never below that of the label
** it extends, so labels leave the heap in key order, and every candidate
** for a (vertex, cost) is in the heap before the first of them leaves it:
** the one that stays is the smallest rowid among the edges from a strictly
** cheaper label, else the fewest steps that add nothing, then the smallest
** rowid.  Which path represents a cost vector then depends on the graph's
** edges alone, not on the order of its adjacency (its history).
*/
#include "engine/pareto.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <string.h>

typedef struct dyng__labels {
  int k;
  double *cost;       /* k per label */
  uint32_t *vertex;
  uint32_t *pred;     /* label it extends, DYNG_NONE at the source */
  uint32_t *edge;     /* slot from the predecessor's vertex */
  uint32_t *next;     /* next permanent label of the same vertex */
  uint32_t *level;    /* tie level: 0 when the edge added to the cost, else
                         the predecessor's + 1 */
  const int64_t *rowid; /* per edge slot: its rowid (the graph's) */
  size_t n, cap;
} dyng__labels;

static int dyng__labels_grow(dyng__labels *L) {
  if (L->n < L->cap) return DYNG_OK;
  size_t cap = L->cap ? L->cap * 2 : 1024;
  if (cap > DYNG_MAX_INDEX) return DYNG_ETOOBIG;
  if (dyng_resize(&L->cost, cap * (size_t)L->k, sizeof *L->cost) ||
      dyng_resize(&L->vertex, cap, sizeof *L->vertex) ||
      dyng_resize(&L->pred, cap, sizeof *L->pred) || dyng_resize(&L->edge, cap, sizeof *L->edge) ||
      dyng_resize(&L->next, cap, sizeof *L->next) || dyng_resize(&L->level, cap, sizeof *L->level))
    return DYNG_ENOMEM;
  L->cap = cap;
  return DYNG_OK;
}

/* -1, 0, 1: lexicographic comparison of two cost vectors. */
static int dyng__lex(const double *a, const double *b, int k) {
  for (int i = 0; i < k; i++) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}

/* -1, 0, 1: labels a and b in the heap's order: cost, then the tie rule
** (level, rowid of the last edge, cost of the label extended; the source's
** label, the only one without an edge, has cost 0 and level 0 and comes
** first).  0 only for labels that make the same path. */
static int dyng__label_cmp(const dyng__labels *L, uint32_t a, uint32_t b) {
  int k = L->k;
  int c = dyng__lex(L->cost + (size_t)a * k, L->cost + (size_t)b * k, k);
  if (c) return c;
  if (L->level[a] != L->level[b]) return L->level[a] < L->level[b] ? -1 : 1;
  if (L->pred[a] == DYNG_NONE || L->pred[b] == DYNG_NONE)
    return (L->pred[a] != DYNG_NONE) - (L->pred[b] != DYNG_NONE);
  int64_t ra = L->rowid[L->edge[a]], rb = L->rowid[L->edge[b]];
  if (ra != rb) return ra < rb ? -1 : 1;
  return dyng__lex(L->cost + (size_t)L->pred[a] * k, L->cost + (size_t)L->pred[b] * k, k);
}

/* 1 when a dominates or equals b (a <= b in every objective). */
static int dyng__covers(const double *a, const double *b, int k) {
  for (int i = 0; i < k; i++)
    if (a[i] > b[i]) return 0;
  return 1;
}

/* 1 when a permanent label of vertex v (first label `head`) covers c. */
static int dyng__covered(const dyng__labels *L, uint32_t head, const double *c) {
  for (uint32_t i = head; i != DYNG_NONE; i = L->next[i])
    if (dyng__covers(L->cost + (size_t)i * L->k, c, L->k)) return 1;
  return 0;
}

typedef struct dyng__lheap {
  uint32_t *a;
  size_t n, cap;
} dyng__lheap;

static int dyng__lheap_push(dyng__lheap *h, const dyng__labels *L, uint32_t x) {
  if (h->n == h->cap && dyng_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a)) return DYNG_ENOMEM;
  size_t i = h->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (dyng__label_cmp(L, h->a[p], x) <= 0) break;
    h->a[i] = h->a[p];
    i = p;
  }
  h->a[i] = x;
  return DYNG_OK;
}

static uint32_t dyng__lheap_pop(dyng__lheap *h, const dyng__labels *L) {
  uint32_t top = h->a[0], last = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && dyng__label_cmp(L, h->a[c + 1], h->a[c]) < 0) c++;
    if (dyng__label_cmp(L, h->a[c], last) >= 0) break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n) h->a[i] = last;
  return top;
}

void dyng_front_free(dyng_front *f) {
  dyng_free(f->path_start);
  dyng_free(f->path_len);
  dyng_free(f->vertex);
  dyng_free(f->edge);
  dyng_free(f->cost);
  memset(f, 0, sizeof *f);
}

/* One function over 80 lines on purpose: the label search and the walk
** of the target's labels into paths share the label arrays and one
** cleanup on every exit (out of memory, too many labels). */
int dyng_pareto_front(const dyng_graph_view *g, uint32_t source, uint32_t target,
                      size_t max_labels, dyng_front *out) {
  memset(out, 0, sizeof *out);
  uint32_t n = g->n_vertices;
  int k = g->n_objectives;
  if (source >= n || target >= n) return DYNG_EINVAL;
  dyng__labels L;
  memset(&L, 0, sizeof L);
  L.k = k;
  L.rowid = g->edge_rowid;
  dyng__lheap h;
  memset(&h, 0, sizeof h);
  uint32_t *head = dyng_malloc((size_t)n * sizeof *head); /* permanent labels per vertex */
  double c[DYNG_MAX_WEIGHTS];
  size_t n_permanent = 0;
  uint32_t tick = 0;
  int rc = head ? dyng__labels_grow(&L) : DYNG_ENOMEM;
  if (rc) goto done;
  for (uint32_t v = 0; v < n; v++) head[v] = DYNG_NONE;
  for (int j = 0; j < k; j++) L.cost[j] = 0.0;
  L.vertex[0] = source, L.pred[0] = L.edge[0] = L.next[0] = DYNG_NONE;
  L.level[0] = 0;
  L.n = 1;
  rc = dyng__lheap_push(&h, &L, 0);
  while (rc == DYNG_OK && h.n) {
    if (dyng_poll_stop(g->cancel, &tick, 255)) {
      rc = DYNG_EINTERRUPTED;
      break;
    }
    uint32_t x = dyng__lheap_pop(&h, &L);
    uint32_t v = L.vertex[x];
    const double *cx = L.cost + (size_t)x * k;
    if (dyng__covered(&L, head[v], cx)) continue;
    if (++n_permanent > max_labels) {
      rc = DYNG_EGAVEUP;
      break;
    }
    L.next[x] = head[v];
    head[v] = x;
    if (v == target) continue; /* paths through the target are dominated */
    for (uint32_t p = g->out.off[v], end = g->out.off[v] + g->out.deg[v]; p < end; p++) {
      uint32_t y = g->out.nbr[p];
      for (int j = 0; j < k; j++) c[j] = L.cost[(size_t)x * k + j] + g->out.w[j][p];
      if (dyng__covered(&L, head[y], c) || dyng__covered(&L, head[target], c)) continue;
      if ((rc = dyng__labels_grow(&L)) != DYNG_OK) break;
      size_t z = L.n++;
      memcpy(L.cost + z * k, c, (size_t)k * sizeof *c);
      L.vertex[z] = y;
      L.pred[z] = x;
      L.edge[z] = g->out.ref[p] >> 1;
      L.next[z] = DYNG_NONE;
      /* An edge that left every objective as it was (weight 0, or lost to
      ** rounding) adds a step to the tie level. */
      L.level[z] = dyng__lex(c, L.cost + (size_t)x * k, k) ? 0 : L.level[x] + 1;
      if ((rc = dyng__lheap_push(&h, &L, (uint32_t)z)) != DYNG_OK) break;
    }
  }
  if (rc != DYNG_OK) goto done;

  /* The target's labels, reversed into lexicographic order, then walked
  ** back to the source. */
  uint32_t n_paths = 0, total = 0;
  for (uint32_t x = head[target]; x != DYNG_NONE; x = L.next[x]) {
    n_paths++;
    for (uint32_t y = x; y != DYNG_NONE; y = L.pred[y]) total++;
  }
  out->k = k;
  if (!n_paths) goto done;
  out->path_start = dyng_malloc((size_t)n_paths * sizeof *out->path_start);
  out->path_len = dyng_malloc((size_t)n_paths * sizeof *out->path_len);
  out->vertex = dyng_malloc((size_t)total * sizeof *out->vertex);
  out->edge = dyng_malloc((size_t)total * sizeof *out->edge);
  out->cost = dyng_malloc((size_t)n_paths * k * sizeof *out->cost);
  if (!out->path_start || !out->path_len || !out->vertex || !out->edge || !out->cost) {
    dyng_front_free(out);
    rc = DYNG_ENOMEM;
    goto done;
  }
  out->n_paths = n_paths;
  /* head[target] lists the labels newest first: the last one is the
  ** lexicographically smallest. */
  uint32_t i = n_paths, at = total;
  for (uint32_t x = head[target]; x != DYNG_NONE; x = L.next[x]) {
    i--;
    uint32_t len = 0;
    for (uint32_t y = x; y != DYNG_NONE; y = L.pred[y]) len++;
    at -= len;
    out->path_start[i] = at;
    out->path_len[i] = len;
    memcpy(out->cost + (size_t)i * k, L.cost + (size_t)x * k, (size_t)k * sizeof *out->cost);
    uint32_t j = len;
    uint32_t next_edge = DYNG_NONE;
    for (uint32_t y = x; y != DYNG_NONE; y = L.pred[y]) {
      j--;
      out->vertex[at + j] = L.vertex[y];
      out->edge[at + j] = next_edge;
      next_edge = L.edge[y];
    }
  }
done:
  dyng_free(head);
  dyng_free(h.a);
  dyng_free(L.cost);
  dyng_free(L.vertex);
  dyng_free(L.pred);
  dyng_free(L.edge);
  dyng_free(L.next);
  dyng_free(L.level);
  return rc;
}
