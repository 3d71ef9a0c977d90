/*
** tests/ref_small.h: the reference for SQL tests on small graphs whose node
** ids are 0 .. REF_MAX_NODES - 1: the edge table read back with a plain
** SELECT (so nothing depends on dyng's view of it) and an O(V^2) Dijkstra
** over it.  No cmocka calls: usable from worker threads and forked
** children.
*/
#ifndef DYNG_REF_SMALL_H
#define DYNG_REF_SMALL_H

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define REF_MAX_NODES 256

/* The rows of an edge table: src, dst and two weights. */
typedef struct ref_snapshot {
  int n;
  sqlite3_int64 *src, *dst;
  double *w[2];
} ref_snapshot;

static inline void ref_snapshot_free(ref_snapshot *s) {
  free(s->src);
  free(s->dst);
  free(s->w[0]);
  free(s->w[1]);
  memset(s, 0, sizeof *s);
}

/* Reads zSql (four columns: src, dst, w0, w1) into *s; SQLite's code of the
** failure, or SQLITE_OK.  Node ids outside 0 .. REF_MAX_NODES - 1 give
** SQLITE_RANGE. */
static inline int ref_snapshot_read(sqlite3 *db, const char *zSql, ref_snapshot *s) {
  memset(s, 0, sizeof *s);
  sqlite3_stmt *p = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &p, NULL), cap = 0;
  if (rc != SQLITE_OK) return rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    if (s->n == cap) {
      cap = cap ? 2 * cap : 256;
      s->src = realloc(s->src, cap * sizeof *s->src);
      s->dst = realloc(s->dst, cap * sizeof *s->dst);
      s->w[0] = realloc(s->w[0], cap * sizeof *s->w[0]);
      s->w[1] = realloc(s->w[1], cap * sizeof *s->w[1]);
      if (!s->src || !s->dst || !s->w[0] || !s->w[1]) abort();
    }
    s->src[s->n] = sqlite3_column_int64(p, 0);
    s->dst[s->n] = sqlite3_column_int64(p, 1);
    s->w[0][s->n] = sqlite3_column_double(p, 2);
    s->w[1][s->n] = sqlite3_column_double(p, 3);
    if (s->src[s->n] < 0 || s->src[s->n] >= REF_MAX_NODES || s->dst[s->n] < 0 ||
        s->dst[s->n] >= REF_MAX_NODES) {
      sqlite3_finalize(p);
      return SQLITE_RANGE;
    }
    s->n++;
  }
  sqlite3_finalize(p);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Distances from `source` in objective k over directed (or, with
** undirected, both-way) edges into dist[0 .. REF_MAX_NODES - 1]. */
static inline void ref_dijkstra(const ref_snapshot *s, int source, int k, int undirected, double *dist) {
  char done[REF_MAX_NODES] = {0};
  for (int v = 0; v < REF_MAX_NODES; v++) dist[v] = INFINITY;
  dist[source] = 0;
  for (;;) {
    int u = -1;
    for (int v = 0; v < REF_MAX_NODES; v++)
      if (!done[v] && !isinf(dist[v]) && (u < 0 || dist[v] < dist[u])) u = v;
    if (u < 0) break;
    done[u] = 1;
    for (int e = 0; e < s->n; e++) {
      if (s->src[e] == u && dist[u] + s->w[k][e] < dist[s->dst[e]]) dist[s->dst[e]] = dist[u] + s->w[k][e];
      if (undirected && s->dst[e] == u && dist[u] + s->w[k][e] < dist[s->src[e]])
        dist[s->src[e]] = dist[u] + s->w[k][e];
    }
  }
}

/* 1 when node v is an end of some edge of s. */
static inline int ref_has_node(const ref_snapshot *s, int v) {
  for (int e = 0; e < s->n; e++)
    if (s->src[e] == v || s->dst[e] == v) return 1;
  return 0;
}

#endif /* DYNG_REF_SMALL_H */
