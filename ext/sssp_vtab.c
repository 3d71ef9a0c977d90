/*
** ext/sssp_vtab.c: the table-valued functions dyng_sssp, dyng_path,
** dyng_mosp and dyng_pareto.
**
**   SELECT node, dist, parent, edge FROM dyng_sssp('net', 1[, 'minutes']);
**   SELECT seq, node, edge, cost, agg_cost FROM dyng_path('net', 1, 99[, 0]);
**   SELECT seq, node, edge, agg_costs FROM dyng_mosp('net', 1, 99);
**   SELECT path, seq, node, agg_costs FROM dyng_pareto('net', 1, 99[, N]);
**
** Declared schemas (the HIDDEN columns are the function's arguments):
**   dyng_sssp(node, dist, parent, edge,
**             graph HIDDEN, source HIDDEN, objective HIDDEN)
**   dyng_path(seq, node, edge, cost, agg_cost,
**             graph HIDDEN, source HIDDEN, target HIDDEN, objective HIDDEN)
**   dyng_mosp(seq, node, edge, agg_costs,
**             graph HIDDEN, source HIDDEN, target HIDDEN)
**   dyng_pareto(path, seq, node, edge, agg_costs,
**               graph HIDDEN, source HIDDEN, target HIDDEN, max_labels HIDDEN)
**
** dyng_sssp lists every vertex reachable from the source, nearest first:
** its distance, its parent in the shortest-path tree and the rowid (in the
** edge table) of the edge from the parent; the source has dist 0 and NULL
** parent and edge.  dyng_path lists the vertices of one shortest path, with
** the edge leaving each (NULL at the target), that edge's cost and the cost
** so far (pgRouting's column names).  The objective is a weight column's
** name or 0-based index; it defaults to 0.  dyng_mosp lists one path good
** in every objective at once (engine/mosp.h), dyng_pareto every path of
** the exact Pareto front (engine/pareto.h), at most max_labels labels made
** permanent; agg_costs is the cost so far in every objective, as a JSON
** array.
**
** How it works: the four share one implementation, told apart by a
** DyngFuncInfo.  dyngFuncFilter finds and syncs the graph (dyngGraphOpen,
** ext/sync.c), asks its mirror (engine/mirror.h) for the shortest-path tree
** of (source, objective), kept or computed and kept (dyngTreeGet,
** ext/cache.c), or for the MOSP path or the Pareto front, and materializes
** the rows, so that a graph change by a nested statement cannot disturb
** them.  It calls no backend: the mirror does.
*/
#include "ext/dyng_ext.h"
#include "engine/alloc.h"
#include "engine/error.h"
#include "engine/mosp.h"
#include "engine/pareto.h"
#include "engine/sssp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/* The functions share one implementation, told apart by this kind. */
typedef struct DyngFuncInfo {
  const char *zName; /* "dyng_sssp", "dyng_path", "dyng_mosp" or "dyng_pareto" */
  const char *zSchema;
  int bPath;         /* 1 for the path functions (a target, rows along a path) */
  int nOut;          /* output columns before the hidden ones */
  int bMosp;         /* 1 for dyng_mosp and dyng_pareto (every objective) */
  int bPareto;       /* 1 for dyng_pareto (several paths, a path column) */
  const char *zUsage;
} DyngFuncInfo;

static const DyngFuncInfo dyngSsspInfo = {
    "dyng_sssp",
    "CREATE TABLE x(node INTEGER, dist REAL, parent INTEGER, edge INTEGER, "
    "graph HIDDEN, source HIDDEN, objective HIDDEN)",
    0, 4, 0, 0, "dyng_sssp(graph, source[, objective])"};
static const DyngFuncInfo dyngPathInfo = {
    "dyng_path",
    "CREATE TABLE x(seq INTEGER, node INTEGER, edge INTEGER, cost REAL, agg_cost REAL, "
    "graph HIDDEN, source HIDDEN, target HIDDEN, objective HIDDEN)",
    1, 5, 0, 0, "dyng_path(graph, source, target[, objective])"};
static const DyngFuncInfo dyngMospInfo = {
    "dyng_mosp",
    "CREATE TABLE x(seq INTEGER, node INTEGER, edge INTEGER, agg_costs TEXT, "
    "graph HIDDEN, source HIDDEN, target HIDDEN)",
    1, 4, 1, 0, "dyng_mosp(graph, source, target)"};
static const DyngFuncInfo dyngParetoInfo = {
    "dyng_pareto",
    "CREATE TABLE x(path INTEGER, seq INTEGER, node INTEGER, edge INTEGER, agg_costs TEXT, "
    "graph HIDDEN, source HIDDEN, target HIDDEN, max_labels HIDDEN)",
    1, 5, 1, 1, "dyng_pareto(graph, source, target[, max_labels])"};

/* Labels dyng_pareto may make permanent unless max_labels says otherwise. */
#define DYNG_DEFAULT_MAX_LABELS 1000000

typedef struct DyngFuncVtab {
  sqlite3_vtab base; /* must be first */
  DyngConn *pConn;
  const DyngFuncInfo *pInfo;
} DyngFuncVtab;

/* One output row.  For dyng_sssp: node, dist, parent (node id), edge
** (rowid); for dyng_path: node, agg_cost in dist, edge, cost. */
typedef struct DyngRow {
  sqlite3_int64 iPath;   /* dyng_pareto: which path of the front */
  sqlite3_int64 iSeq;    /* dyng_pareto: position on that path */
  sqlite3_int64 iNode;
  sqlite3_int64 iParent; /* dyng_sssp: parent node */
  sqlite3_int64 iEdge;
  double rDist;          /* dist / agg_cost */
  double rCost;          /* dyng_path: cost of iEdge */
  int bHasParent;        /* parent / edge are not NULL */
} DyngRow;

typedef struct DyngFuncCursor {
  sqlite3_vtab_cursor base; /* must be first */
  DyngRow *aRow;
  sqlite3_int64 nRow;
  sqlite3_int64 iRow;
  double *aAgg;             /* dyng_mosp: nObj cumulative costs per row */
  int nObj;
} DyngFuncCursor;

/* Argument roles, in argv order; idxNum has bit (1 << role) per argument
** given.  ROLE_NODE is an equality on dyng_sssp's output column `node`,
** ROLE_DIST_LE and ROLE_DIST_LT bounds on its `dist`, ROLE_ROWS and
** ROLE_SKIP the LIMIT and OFFSET of a query whose rows it orders by dist. */
enum {
  ROLE_GRAPH = 0,
  ROLE_SOURCE,
  ROLE_TARGET,
  ROLE_OBJECTIVE,
  ROLE_LIMIT,
  ROLE_NODE,
  ROLE_DIST_LE,
  ROLE_DIST_LT,
  ROLE_ROWS,
  ROLE_SKIP,
  ROLE_COUNT
};
static const char *const azRoleName[ROLE_COUNT] = {"graph", "source", "target", "objective", "max_labels",
                                                   "node",  "dist",   "dist",   "LIMIT",     "OFFSET"};

static int dyngFuncConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                           sqlite3_vtab **ppVtab, char **pzErr) {
  (void)argc;
  (void)argv;
  (void)pzErr;
  const DyngFuncInfo *pInfo = sqlite3_stricmp(argv[0], "dyng_path") == 0     ? &dyngPathInfo
                              : sqlite3_stricmp(argv[0], "dyng_mosp") == 0   ? &dyngMospInfo
                              : sqlite3_stricmp(argv[0], "dyng_pareto") == 0 ? &dyngParetoInfo
                                                                             : &dyngSsspInfo;
  int rc = sqlite3_declare_vtab(db, pInfo->zSchema);
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  DyngFuncVtab *pVtab = sqlite3_malloc(sizeof *pVtab);
  if (!pVtab) return SQLITE_NOMEM;
  memset(pVtab, 0, sizeof *pVtab);
  pVtab->pConn = pAux;
  pVtab->pInfo = pInfo;
  *ppVtab = &pVtab->base;
  return SQLITE_OK;
}

static int dyngFuncDisconnect(sqlite3_vtab *pBase) {
  sqlite3_free(pBase);
  return SQLITE_OK;
}

/* The role of constraint c, or -1 for one that is no argument: an
** equality on an argument or on dyng_sssp's `node`, a bound on its `dist`,
** a LIMIT or OFFSET. */
static int dyngConstraintRole(const DyngFuncInfo *pInfo, const struct sqlite3_index_constraint *c);

/* The role of a column, or -1 for an output column other than `node`. */
static int dyngColumnRole(const DyngFuncInfo *pInfo, int iCol) {
  if (!pInfo->bPath && iCol == 0) return ROLE_NODE;
  int iHidden = iCol - pInfo->nOut;
  if (iHidden < 0) return -1;
  if (pInfo->bPareto) {
    static const int aPareto[] = {ROLE_GRAPH, ROLE_SOURCE, ROLE_TARGET, ROLE_LIMIT};
    return iHidden < 4 ? aPareto[iHidden] : -1;
  }
  if (pInfo->bPath) {
    static const int aPath[] = {ROLE_GRAPH, ROLE_SOURCE, ROLE_TARGET, ROLE_OBJECTIVE};
    return iHidden < (pInfo->bMosp ? 3 : 4) ? aPath[iHidden] : -1;
  }
  static const int aSssp[] = {ROLE_GRAPH, ROLE_SOURCE, ROLE_OBJECTIVE};
  return iHidden < 3 ? aSssp[iHidden] : -1;
}

static int dyngConstraintRole(const DyngFuncInfo *pInfo, const struct sqlite3_index_constraint *c) {
  const int bSssp = !pInfo->bPath;
#ifdef SQLITE_INDEX_CONSTRAINT_LIMIT
  if (c->op == SQLITE_INDEX_CONSTRAINT_LIMIT) return bSssp ? ROLE_ROWS : -1;
  if (c->op == SQLITE_INDEX_CONSTRAINT_OFFSET) return bSssp ? ROLE_SKIP : -1;
#endif
  if (bSssp && c->iColumn == 1) {
    if (c->op == SQLITE_INDEX_CONSTRAINT_LE) return ROLE_DIST_LE;
    if (c->op == SQLITE_INDEX_CONSTRAINT_LT) return ROLE_DIST_LT;
    return -1;
  }
  if (c->op != SQLITE_INDEX_CONSTRAINT_EQ) return -1;
  return dyngColumnRole(pInfo, c->iColumn);
}

/*
** Plans.  idxNum bits, by role: 1 graph, 2 source, 4 target, 8 objective,
** 16 max_labels, 32 node (= constraint on dyng_sssp's output), 64 dist <=,
** 128 dist <, 256 LIMIT, 512 OFFSET.  Arguments reach xFilter in role order.
** dyng_sssp's rows come by non-decreasing dist, so an ORDER BY dist is
** consumed; SQLite still checks the bounds and applies LIMIT and OFFSET to
** what xFilter returns.  A required argument that is constrained but not usable in
** this plan makes the plan impossible (SQLITE_CONSTRAINT), so SQLite picks
** an order that supplies it; one that is missing altogether is reported by
** xFilter as an error naming it.
*/
static int dyngFuncBestIndex(sqlite3_vtab *pBase, sqlite3_index_info *pInfo) {
  DyngFuncVtab *pVtab = (DyngFuncVtab *)pBase;
  int aiCons[ROLE_COUNT], bUnusable = 0;
  for (int r = 0; r < ROLE_COUNT; r++) aiCons[r] = -1;
  for (int i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    int role = dyngConstraintRole(pVtab->pInfo, c);
    if (role < 0) continue;
    if (!c->usable) {
      if (role < ROLE_NODE) bUnusable = 1;
      continue;
    }
    if (aiCons[role] < 0) aiCons[role] = i;
  }
  if (bUnusable) return SQLITE_CONSTRAINT;
  int iArg = 0, idxNum = 0;
  for (int r = 0; r < ROLE_COUNT; r++) {
    if (aiCons[r] < 0) continue;
    pInfo->aConstraintUsage[aiCons[r]].argvIndex = ++iArg;
    pInfo->aConstraintUsage[aiCons[r]].omit = r < ROLE_NODE;
    idxNum |= 1 << r;
  }
  pInfo->idxNum = idxNum;
  if (!pVtab->pInfo->bPath && pInfo->nOrderBy == 1 && pInfo->aOrderBy[0].iColumn == 1 && !pInfo->aOrderBy[0].desc)
    pInfo->orderByConsumed = 1;
  const int mBound = 1 << ROLE_DIST_LE | 1 << ROLE_DIST_LT | 1 << ROLE_ROWS;
  pInfo->estimatedCost = (idxNum & 3) == 3 ? ((idxNum & (1 << ROLE_NODE)) || pVtab->pInfo->bPath ? 100
                                              : (idxNum & mBound)                                 ? 1e3
                                                                                                  : 1e4)
                                           : 1e12;
  pInfo->estimatedRows = (idxNum & (1 << ROLE_NODE)) ? 1 : pVtab->pInfo->bPath ? 100 : 100000;
  return SQLITE_OK;
}

static int dyngFuncOpen(sqlite3_vtab *pBase, sqlite3_vtab_cursor **ppCursor) {
  (void)pBase;
  DyngFuncCursor *pCur = sqlite3_malloc(sizeof *pCur);
  if (!pCur) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof *pCur);
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static int dyngFuncClose(sqlite3_vtab_cursor *pBase) {
  DyngFuncCursor *pCur = (DyngFuncCursor *)pBase;
  sqlite3_free(pCur->aRow);
  sqlite3_free(pCur->aAgg);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Describes the SQL type of a value for messages. */
static const char *dyngTypeName(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return "an integer";
  case SQLITE_FLOAT: return "a real number";
  case SQLITE_TEXT: return "text";
  case SQLITE_BLOB: return "a blob";
  default: return "NULL";
  }
}

int dyngObjectiveArg(sqlite3_vtab *pBase, const char *zFunc, DyngGraph *pG, sqlite3_value *pVal, int *piObj) {
  int nObj = pG->nWeight ? pG->nWeight : 1;
  *piObj = 0;
  if (!pVal) return SQLITE_OK;
  int t = sqlite3_value_type(pVal);
  if (t == SQLITE_INTEGER) {
    sqlite3_int64 i = sqlite3_value_int64(pVal);
    if (i < 0 || i >= nObj)
      return dyngVtabError(pBase, SQLITE_ERROR, sqlite3_mprintf("%s: objective %lld is out of range for graph "
                                                  "'%s' (0..%d)",
                                                  zFunc, i, pG->zName, nObj - 1));
    *piObj = (int)i;
    return SQLITE_OK;
  }
  if (t == SQLITE_TEXT) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    for (int k = 0; k < pG->nWeight; k++)
      if (sqlite3_stricmp(z, pG->azWeight[k]) == 0) return (*piObj = k), SQLITE_OK;
    sqlite3_str *pList = sqlite3_str_new(NULL);
    for (int k = 0; k < pG->nWeight; k++)
      sqlite3_str_appendf(pList, "%s%s", k ? ", " : "", pG->azWeight[k]);
    char *zList = dyngStrFinish(pList);
    char *zMsg = pG->nWeight
                     ? sqlite3_mprintf("%s: objective '%s' is not a weight of graph '%s' (%s)",
                                       zFunc, z, pG->zName, zList ? zList : "")
                     : sqlite3_mprintf("%s: objective '%s' is not a weight of graph '%s' (it has "
                                       "no weight columns; use 0 or omit it)",
                                       zFunc, z, pG->zName);
    sqlite3_free(zList);
    return dyngVtabError(pBase, SQLITE_ERROR, zMsg);
  }
  return dyngVtabError(pBase, SQLITE_ERROR, sqlite3_mprintf("%s: objective must be a weight column name or a "
                                              "0-based index, got %s",
                                              zFunc, dyngTypeName(pVal)));
}

/* Reads a node-id argument (source, target) into *piNode. */
static int dyngNodeArg(DyngFuncVtab *pVtab, const char *zRole, sqlite3_value *pVal,
                       sqlite3_int64 *piNode) {
  if (sqlite3_value_type(pVal) == SQLITE_INTEGER) {
    *piNode = sqlite3_value_int64(pVal);
    return SQLITE_OK;
  }
  return dyngVtabError(&pVtab->base, SQLITE_ERROR, sqlite3_mprintf("%s: %s must be an integer node id, got %s",
                                              pVtab->pInfo->zName, zRole,
                                              dyngTypeName(pVal)));
}

/* dyng_mosp: the ensemble path of one kept tree per objective (see
** engine/mosp.h), with its cumulative cost in every objective. */
static int dyngMospFilter(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG,
                          DyngWatch *pWatch, uint32_t vSource, uint32_t vTarget) {
  int nObj = pG->nWeight ? pG->nWeight : 1;
  char *zErr = NULL;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  dyng_path path;
  int erc = dyng_mirror_mosp(pG->pMirror, vSource, vTarget, &pWatch->cancel, &path);
  int rc = dyngEngineFail(pG, erc, pWatch, pVtab->pInfo->zName, DYNG_ERR_BACKEND, &zErr, NULL);
  if (rc == SQLITE_OK && path.n) {
    pCur->aRow = sqlite3_malloc64((sqlite3_uint64)path.n * sizeof *pCur->aRow);
    pCur->aAgg = sqlite3_malloc64((sqlite3_uint64)path.n * nObj * sizeof *pCur->aAgg);
    if (!pCur->aRow || !pCur->aAgg) rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && path.n) {
    pCur->nObj = nObj;
    for (uint32_t i = 0; i < path.n; i++) {
      DyngRow *r = &pCur->aRow[i];
      double *agg = pCur->aAgg + (size_t)i * nObj;
      memset(r, 0, sizeof *r);
      r->iNode = view.node_id[path.vertex[i]];
      r->bHasParent = i + 1 < path.n;
      if (r->bHasParent) r->iEdge = view.edge_rowid[path.edge[i]];
      for (int k = 0; k < nObj; k++) {
        agg[k] = i ? agg[k - nObj] + view.out.w[k][view.edge_pos_out[path.edge[i - 1]]] : 0.0;
      }
    }
    pCur->nRow = path.n;
  }
  dyng_path_free(&path);
  return dyngVtabError(&pVtab->base, rc, zErr);
}

/* dyng_pareto: the exact Pareto front (engine/pareto.h), one row per step
** of each path, with the cost so far in every objective. */
static int dyngParetoFilter(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG,
                            DyngWatch *pWatch, uint32_t vSource, uint32_t vTarget, sqlite3_int64 nMax) {
  const char *zFunc = pVtab->pInfo->zName;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  dyng_front f;
  int erc = dyng_mirror_pareto(pG->pMirror, vSource, vTarget, (size_t)nMax, &pWatch->cancel, &f);
  if (erc != DYNG_OK) {
    char *zErr = NULL;
    int rc = erc == DYNG_EGAVEUP
                 ? dyngEngineFail(pG, erc, pWatch, zFunc, 0, &zErr,
                                  "the front from node %lld to node %lld needs more labels than max_labels "
                                  "(%lld) allows; no partial front is returned (raise max_labels, default %d)",
                                  (sqlite3_int64)view.node_id[vSource], (sqlite3_int64)view.node_id[vTarget],
                                  nMax, DYNG_DEFAULT_MAX_LABELS)
                 : dyngEngineFail(pG, erc, pWatch, zFunc, 0, &zErr, NULL);
    return dyngVtabError(&pVtab->base, rc, zErr);
  }
  int rc = SQLITE_OK, nObj = view.n_objectives;
  sqlite3_int64 nRow = 0;
  for (uint32_t i = 0; i < f.n_paths; i++) nRow += f.path_len[i];
  if (nRow) {
    pCur->aRow = sqlite3_malloc64((sqlite3_uint64)nRow * sizeof *pCur->aRow);
    pCur->aAgg = sqlite3_malloc64((sqlite3_uint64)nRow * nObj * sizeof *pCur->aAgg);
    if (!pCur->aRow || !pCur->aAgg) rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && nRow) {
    pCur->nObj = nObj;
    sqlite3_int64 at = 0;
    for (uint32_t i = 0; i < f.n_paths; i++) {
      for (uint32_t j = 0; j < f.path_len[i]; j++, at++) {
        DyngRow *r = &pCur->aRow[at];
        double *agg = pCur->aAgg + (size_t)at * nObj;
        uint32_t e = f.edge[f.path_start[i] + j];
        memset(r, 0, sizeof *r);
        r->iPath = i + 1;
        r->iSeq = j + 1;
        r->iNode = view.node_id[f.vertex[f.path_start[i] + j]];
        r->bHasParent = e != DYNG_NONE;
        if (r->bHasParent) r->iEdge = view.edge_rowid[e];
        for (int k = 0; k < nObj; k++) {
          uint32_t prev = j ? f.edge[f.path_start[i] + j - 1] : DYNG_NONE;
          agg[k] = j ? agg[k - nObj] + view.out.w[k][view.edge_pos_out[prev]] : 0.0;
        }
      }
    }
    pCur->nRow = nRow;
  }
  dyng_front_free(&f);
  return rc;
}

/* The arguments of one call, checked. */
typedef struct DyngFuncArgs {
  sqlite3_int64 iSource, iTarget, iNode;
  sqlite3_int64 nMaxLabels; /* dyng_pareto's max_labels */
  int bNode;                /* a constraint on the node column: iNode */
  int bNoRows;              /* the call matches no row (node = 'a', dist <= NULL) */
  int bBound;               /* dyng_sssp's rows are bounded: ... */
  double rMaxDist;          /* ... by dist <= rMaxDist (< with bStrict), ... */
  int bStrict;
  sqlite3_int64 nRows;      /* ... and by count (LIMIT + OFFSET; -1: none) */
} DyngFuncArgs;

/* dyng_path's rows from a path: aPath[0 .. nPath) the vertices from the
** target back to the source, aDist[k] and aEdge[k] (an edge slot) the
** distance and parent edge of aPath[k]; the rows go in path order, each
** with the edge leaving it and that edge's cost in objective iObj. */
static int dyngPathFill(DyngFuncCursor *pCur, const dyng_graph_view *view, const uint32_t *aPath,
                        const double *aDist, const uint32_t *aEdge, uint32_t nPath, int iObj) {
  sqlite3_int64 n = nPath;
  pCur->aRow = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof *pCur->aRow);
  if (!pCur->aRow) return SQLITE_NOMEM;
  sqlite3_int64 i = n - 1;
  uint32_t nextEdge = DYNG_NONE;
  for (uint32_t k = 0; k < nPath; k++) {
    DyngRow *r = &pCur->aRow[i--];
    memset(r, 0, sizeof *r);
    r->iNode = view->node_id[aPath[k]];
    r->rDist = aDist[k];
    r->bHasParent = k > 0;
    r->iEdge = r->bHasParent ? view->edge_rowid[nextEdge] : 0;
    r->rCost = r->bHasParent ? view->out.w[iObj][view->edge_pos_out[nextEdge]] : 0.0;
    nextEdge = aEdge[k];
  }
  pCur->nRow = n;
  return SQLITE_OK;
}

/* The distances and parent edges along aPath[0 .. n) in tree t, or in the
** route r when t is NULL, for dyngPathFill: *paDist and *paEdge from
** sqlite3_malloc64. */
static int dyngPathRowsOf(const dyng_sssp_tree *t, const dyng_route *r, const dyng_graph_view *view,
                          const uint32_t *aPath, uint32_t n, double **paDist, uint32_t **paEdge) {
  *paDist = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof **paDist);
  *paEdge = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof **paEdge);
  if (!*paDist || !*paEdge) return SQLITE_NOMEM;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t v = aPath[k];
    (*paDist)[k] = t ? t->dist[v] : dyng_route_dist(r, v);
    (*paEdge)[k] = t ? t->parent_edge[v] : dyng_route_parent_edge(r, view, v);
  }
  return SQLITE_OK;
}

/* dyng_path's rows: the path from the source to vTarget in tree pTree (of
** pG, objective iObj; rows of a tree held on the device come over for its
** vertices only), or with pTree NULL in the route pRoute, which took the
** target. */
static int dyngPathRows(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG, dyng_sssp_tree *pTree,
                        const dyng_route *pRoute, uint32_t vTarget, int iObj) {
  const char *zFunc = pVtab->pInfo->zName;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  /* The path's vertices from the target back to the source, then the rows
  ** in path order. */
  uint32_t *aPath = NULL, nPath = 0;
  int erc = pTree ? dyng_mirror_tree_path(pG->pMirror, pTree, vTarget, &aPath, &nPath)
                  : dyng_route_path(pRoute, &view, vTarget, &aPath, &nPath);
  if (erc != DYNG_OK) {
    char *zErr = NULL;
    int rc = dyngEngineFail(pG, erc, NULL, zFunc, DYNG_ERR_BACKEND, &zErr, NULL);
    return dyngVtabError(&pVtab->base, rc, zErr);
  }
  if (!nPath) return SQLITE_OK; /* unreachable: no rows */
  double *aDist = NULL;
  uint32_t *aEdge = NULL;
  int rc = dyngPathRowsOf(pTree, pRoute, &view, aPath, nPath, &aDist, &aEdge);
  if (rc == SQLITE_OK) rc = dyngPathFill(pCur, &view, aPath, aDist, aEdge, nPath, iObj);
  sqlite3_free(aDist);
  sqlite3_free(aEdge);
  dyng_free(aPath);
  return rc;
}

/* Sets r to dyng_sssp's row of vertex v: its distance, its parent and the
** edge slot from the parent (DYNG_NONE for the source). */
static void dyngSsspRow(DyngRow *r, const dyng_graph_view *view, uint32_t v, double dist, uint32_t parent,
                        uint32_t edge) {
  memset(r, 0, sizeof *r);
  r->iNode = view->node_id[v];
  r->rDist = dist;
  r->bHasParent = parent != DYNG_NONE;
  r->iParent = r->bHasParent ? view->node_id[parent] : 0;
  r->iEdge = r->bHasParent ? view->edge_rowid[edge] : 0;
}

/* dyng_sssp's rows: every vertex pTree (of pG) reaches, nearest first, or
** only vertex vTarget with bNode (a constraint on the node column), or
** with bBound those within rMax (nearer than it with bStrict), at most
** nRows of them (-1: any number). */
static int dyngTreeListRows(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG, dyng_sssp_tree *pTree,
                            uint32_t vTarget, int bNode, const DyngFuncArgs *pArgs) {
  const char *zFunc = pVtab->pInfo->zName;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  /* The rows this answer reads: the target's, or every row. */
  int erc = dyng_mirror_tree_rows(pG->pMirror, pTree, bNode ? &vTarget : NULL, 1);
  if (erc != DYNG_OK) {
    char *zErr = NULL;
    int rc = dyngEngineFail(pG, erc, NULL, zFunc, DYNG_ERR_BACKEND, &zErr, NULL);
    return dyngVtabError(&pVtab->base, rc, zErr);
  }
  if (bNode && isinf(pTree->dist[vTarget])) return SQLITE_OK; /* unreachable: no rows */
  /* The distance order is rebuilt only for a listing of the whole tree
  ** (after an update, or when the backend left it to the host). */
  if (!bNode) {
    erc = dyng_sssp_tree_order(pTree);
    if (erc != DYNG_OK) {
      char *zErr = NULL;
      int rc = dyngEngineFail(pG, erc, NULL, zFunc, 0, &zErr, NULL);
      return dyngVtabError(&pVtab->base, rc, zErr);
    }
  }
  sqlite3_int64 n = bNode ? 1 : pTree->n_reached;
  if (!bNode && pArgs->bBound) {
    /* The rows within the bound: a prefix of the order. */
    sqlite3_int64 k = 0;
    while (k < n && (pArgs->nRows < 0 || k < pArgs->nRows)) {
      double d = pTree->dist[pTree->order[k]];
      if (pArgs->bStrict ? !(d < pArgs->rMaxDist) : d > pArgs->rMaxDist) break;
      k++;
    }
    n = k;
  }
  pCur->aRow = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof *pCur->aRow);
  if (!pCur->aRow) return SQLITE_NOMEM;
  for (sqlite3_int64 i = 0; i < n; i++) {
    uint32_t v = bNode ? vTarget : pTree->order[i];
    dyngSsspRow(&pCur->aRow[i], &view, v, pTree->dist[v], pTree->parent[v], pTree->parent_edge[v]);
  }
  pCur->nRow = n;
  return SQLITE_OK;
}

/* dyng_sssp's rows from a route that stopped early: the target's row with
** bNode (none when it did not come out), else every vertex it took. */
static int dyngRouteListRows(DyngFuncCursor *pCur, DyngGraph *pG, const dyng_route *pRoute, uint32_t vTarget,
                             int bNode) {
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  size_t nTaken = 0;
  const uint32_t *aTaken = dyng_route_taken(pRoute, &nTaken);
  if (bNode) {
    aTaken = &vTarget;
    nTaken = dyng_route_final(pRoute, vTarget) ? 1 : 0;
  }
  pCur->aRow = sqlite3_malloc64((sqlite3_uint64)(nTaken ? nTaken : 1) * sizeof *pCur->aRow);
  if (!pCur->aRow) return SQLITE_NOMEM;
  for (size_t i = 0; i < nTaken; i++) {
    uint32_t v = aTaken[i];
    dyngSsspRow(&pCur->aRow[i], &view, v, dyng_route_dist(pRoute, v), dyng_route_parent(pRoute, &view, v),
                dyng_route_parent_edge(pRoute, &view, v));
  }
  pCur->nRow = (sqlite3_int64)nTaken;
  return SQLITE_OK;
}


/* Checks the arguments apArg[] (by role) of a call into *p; an error on
** pVtab otherwise. */
static int dyngFuncArgs(DyngFuncVtab *pVtab, sqlite3_value **apArg, DyngFuncArgs *p) {
  const DyngFuncInfo *pInfo = pVtab->pInfo;
  const char *zFunc = pInfo->zName;
  memset(p, 0, sizeof *p);
  /* Required arguments. */
  int aReq[3] = {ROLE_GRAPH, ROLE_SOURCE, pInfo->bPath ? ROLE_TARGET : -1};
  for (int i = 0; i < 3; i++) {
    if (aReq[i] < 0) continue;
    if (!apArg[aReq[i]])
      return dyngVtabError(&pVtab->base, SQLITE_ERROR, sqlite3_mprintf("%s: missing argument '%s' (usage: %s)", zFunc,
                                                  azRoleName[aReq[i]], pInfo->zUsage));
  }
  if (sqlite3_value_type(apArg[ROLE_GRAPH]) != SQLITE_TEXT)
    return dyngVtabError(&pVtab->base, SQLITE_ERROR, sqlite3_mprintf("%s: graph must be the name of a dyng table, got %s",
                                                zFunc, dyngTypeName(apArg[ROLE_GRAPH])));
  int rc = dyngNodeArg(pVtab, "source", apArg[ROLE_SOURCE], &p->iSource);
  if (rc == SQLITE_OK && pInfo->bPath) rc = dyngNodeArg(pVtab, "target", apArg[ROLE_TARGET], &p->iTarget);
  if (rc != SQLITE_OK) return rc;
  p->nMaxLabels = DYNG_DEFAULT_MAX_LABELS;
  if (apArg[ROLE_LIMIT]) {
    if (sqlite3_value_type(apArg[ROLE_LIMIT]) != SQLITE_INTEGER)
      return dyngVtabError(&pVtab->base, SQLITE_ERROR, sqlite3_mprintf("%s: max_labels must be a positive integer, "
                                                  "got %s", zFunc,
                                                  dyngTypeName(apArg[ROLE_LIMIT])));
    if (sqlite3_value_int64(apArg[ROLE_LIMIT]) < 1)
      return dyngVtabError(&pVtab->base, SQLITE_ERROR, sqlite3_mprintf("%s: max_labels must be a positive integer, "
                                                  "got %lld", zFunc,
                                                  sqlite3_value_int64(apArg[ROLE_LIMIT])));
    p->nMaxLabels = sqlite3_value_int64(apArg[ROLE_LIMIT]);
  }
  p->bNode = apArg[ROLE_NODE] != NULL;
  if (p->bNode) {
    /* node = X matches as for an INTEGER column; X = 'a' matches no row. */
    if (!dyngValueAsNodeId(apArg[ROLE_NODE], &p->iNode)) p->bNoRows = 1;
  }
  /* dist <= X and dist < X compare as with a REAL column: NULL (and NaN,
  ** which SQLite stores as NULL) matches nothing, a number bounds the
  ** search, text or a blob is above every number (no bound). */
  p->rMaxDist = INFINITY;
  p->nRows = -1;
  for (int r = ROLE_DIST_LE; r <= ROLE_DIST_LT; r++) {
    sqlite3_value *v = apArg[r];
    if (!v) continue;
    int eType = sqlite3_value_numeric_type(v);
    if (eType == SQLITE_NULL) p->bNoRows = 1;
    if (eType != SQLITE_INTEGER && eType != SQLITE_FLOAT) continue;
    double x = sqlite3_value_double(v);
    if (x < p->rMaxDist || (x == p->rMaxDist && r == ROLE_DIST_LT)) {
      p->rMaxDist = x;
      p->bStrict = r == ROLE_DIST_LT;
    }
    p->bBound = 1;
  }
  /* LIMIT n OFFSET m: the first n + m rows in dist order are enough (a
  ** negative LIMIT is none, as in SQLite). */
  if (apArg[ROLE_ROWS] && sqlite3_value_type(apArg[ROLE_ROWS]) == SQLITE_INTEGER &&
      sqlite3_value_int64(apArg[ROLE_ROWS]) >= 0) {
    sqlite3_int64 nSkip = 0;
    if (apArg[ROLE_SKIP] && sqlite3_value_type(apArg[ROLE_SKIP]) == SQLITE_INTEGER &&
        sqlite3_value_int64(apArg[ROLE_SKIP]) > 0)
      nSkip = sqlite3_value_int64(apArg[ROLE_SKIP]);
    sqlite3_int64 n = sqlite3_value_int64(apArg[ROLE_ROWS]);
    p->nRows = n > INT64_MAX - nSkip ? INT64_MAX : n + nSkip;
    p->bBound = 1;
  }
  if (p->nRows == 0) p->bNoRows = 1;
  return SQLITE_OK;
}

static int dyngFuncFilter(sqlite3_vtab_cursor *pBase, int idxNum, const char *idxStr, int argc,
                          sqlite3_value **argv) {
  (void)idxStr;
  DyngFuncCursor *pCur = (DyngFuncCursor *)pBase;
  DyngFuncVtab *pVtab = (DyngFuncVtab *)pBase->pVtab;
  const DyngFuncInfo *pInfo = pVtab->pInfo;
  const char *zFunc = pInfo->zName;
  sqlite3_value *apArg[ROLE_COUNT] = {0};
  int iArg = 0;
  for (int r = 0; r < ROLE_COUNT && iArg < argc; r++)
    if (idxNum & (1 << r)) apArg[r] = argv[iArg++];

  sqlite3_free(pCur->aRow);
  sqlite3_free(pCur->aAgg);
  pCur->aRow = NULL;
  pCur->aAgg = NULL;
  pCur->nRow = pCur->iRow = 0;

  DyngFuncArgs args;
  int rc = dyngFuncArgs(pVtab, apArg, &args);
  if (rc != SQLITE_OK || args.bNoRows) return rc;

  DyngGraph *pG = NULL;
  char *zErr = NULL;
  rc = dyngGraphOpen(pVtab->pConn, zFunc, (const char *)sqlite3_value_text(apArg[ROLE_GRAPH]), 1,
                     &pG, &zErr);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
  int iObj;
  rc = dyngObjectiveArg(&pVtab->base, zFunc, pG, apArg[ROLE_OBJECTIVE], &iObj);
  if (rc != SQLITE_OK) return rc;

  const dyng_graph *g = pG->pGraph;
  uint32_t vSource, vTarget = DYNG_NONE;
  /* A source or target that is no node of the graph (now) gives no rows. */
  if (dyng_graph_vertex(g, args.iSource, &vSource) != DYNG_OK) return SQLITE_OK;
  if (pInfo->bPath && dyng_graph_vertex(g, args.iTarget, &vTarget) != DYNG_OK) return SQLITE_OK;
  if (args.bNode && dyng_graph_vertex(g, args.iNode, &vTarget) != DYNG_OK) return SQLITE_OK;
  /* What stops the computation: an interrupt, the max_ms budget. */
  DyngWatch watch;
  dyngWatchBegin(&watch, pVtab->pConn, pInfo->bPareto);
  if (pInfo->bPareto || pInfo->bMosp) {
    rc = pInfo->bPareto ? dyngParetoFilter(pVtab, pCur, pG, &watch, vSource, vTarget, args.nMaxLabels)
                        : dyngMospFilter(pVtab, pCur, pG, &watch, vSource, vTarget);
    dyngWatchEnd(&watch, 0);
    return rc;
  }

  /* Part of a tree (a route to one node, the nodes within a distance or
  ** the nearest ones) from a source that has no kept tree and asked of
  ** late for none: a search that stops early, on the host graph. */
  if ((pInfo->bPath || args.bNode || args.bBound) && dyng_mirror_route_pays(pG->pMirror, vSource, iObj)) {
    dyng_route_goal goal = dyng_route_goal_none();
    if (pInfo->bPath || args.bNode) {
      goal.target = vTarget;
    } else {
      goal.max_dist = args.rMaxDist;
      goal.strict = args.bStrict;
      if (args.nRows > 0) goal.max_taken = (uint64_t)args.nRows;
    }
    /* Landmarks (built at the first route) only where max_graph_mb has
    ** room for them. */
    int nLandmarks = pVtab->pConn->nLandmarks;
    sqlite3_int64 nLimit = pVtab->pConn->nMaxGraphBytes;
    if (nLimit > 0 && !pG->pMirror->landmarks &&
        dyngGraphHostBytes(pG) + dyng_mirror_landmark_bytes(pG->pMirror, nLandmarks) > (size_t)nLimit)
      nLandmarks = 0;
    dyng_route *pRoute = NULL;
    int erc = dyng_mirror_route(pG->pMirror, vSource, iObj, &goal, nLandmarks, &watch.cancel, &pRoute);
    rc = dyngEngineFail(pG, erc, &watch, zFunc, 0, &zErr, NULL);
    dyngWatchEnd(&watch, 0);
    if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
    return pInfo->bPath ? dyngPathRows(pVtab, pCur, pG, NULL, pRoute, vTarget, iObj)
                        : dyngRouteListRows(pCur, pG, pRoute, vTarget, args.bNode);
  }

  /* The whole tree, kept for the next query from this source (and updated
  ** by later batches) when the connection's budget allows. */
  dyng_sssp_tree *pTree = NULL;
  dyng_kept_tree *pOwned = NULL;
  rc = dyngTreeGet(pG, vSource, iObj, &watch, zFunc, &pTree, &pOwned, &zErr);
  dyngWatchEnd(&watch, 0);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);

  rc = pInfo->bPath ? dyngPathRows(pVtab, pCur, pG, pTree, NULL, vTarget, iObj)
                    : dyngTreeListRows(pVtab, pCur, pG, pTree, vTarget, args.bNode, &args);
  dyng_mirror_tree_release(pOwned);
  return rc;
}

static int dyngFuncNext(sqlite3_vtab_cursor *pBase) {
  ((DyngFuncCursor *)pBase)->iRow++;
  return SQLITE_OK;
}

static int dyngFuncEof(sqlite3_vtab_cursor *pBase) {
  DyngFuncCursor *pCur = (DyngFuncCursor *)pBase;
  return pCur->iRow >= pCur->nRow;
}

/* Appends cost x to an agg_costs array as a JSON number that reads back as
** the same double: the fewest of 15 to 17 significant digits that do
** (SQLite's printf stops at 16), with ".0" on a whole number, as SQLite
** writes reals.  Weights up to DYNG_MAX_WEIGHT keep every cost finite;
** were one not, it would be null, so the text stays JSON. */
static void dyngAppendCost(sqlite3_str *pStr, double x) {
  if (!isfinite(x)) {
    sqlite3_str_appendall(pStr, "null");
    return;
  }
  char zNum[40];
  for (int nDigit = 15; nDigit <= 17; nDigit++) {
    snprintf(zNum, sizeof zNum, "%.*g", nDigit, x);
    if (strtod(zNum, NULL) == x) break;
  }
  sqlite3_str_appendall(pStr, zNum);
  if (!strpbrk(zNum, ".e")) sqlite3_str_appendall(pStr, ".0");
}

static int dyngFuncColumn(sqlite3_vtab_cursor *pBase, sqlite3_context *ctx, int iCol) {
  DyngFuncCursor *pCur = (DyngFuncCursor *)pBase;
  const DyngFuncVtab *pVtab = (const DyngFuncVtab *)pBase->pVtab;
  const DyngRow *r = &pCur->aRow[pCur->iRow];
  if (pVtab->pInfo->bPareto) {
    /* Columns path, seq, then as dyng_mosp's from node on. */
    if (iCol == 0) {
      sqlite3_result_int64(ctx, r->iPath);
      return SQLITE_OK;
    }
    if (iCol == 1) {
      sqlite3_result_int64(ctx, r->iSeq);
      return SQLITE_OK;
    }
    iCol--;
  }
  if (pVtab->pInfo->bMosp) {
    switch (iCol) {
    case 0: sqlite3_result_int64(ctx, pCur->iRow + 1); break;
    case 1: sqlite3_result_int64(ctx, r->iNode); break;
    case 2:
      if (r->bHasParent) sqlite3_result_int64(ctx, r->iEdge);
      break;
    case 3: {
      sqlite3_str *pStr = sqlite3_str_new(NULL);
      const double *agg = pCur->aAgg + (size_t)pCur->iRow * pCur->nObj;
      for (int k = 0; k < pCur->nObj; k++) {
        sqlite3_str_appendall(pStr, k ? "," : "[");
        dyngAppendCost(pStr, agg[k]);
      }
      sqlite3_str_appendall(pStr, "]");
      int n = sqlite3_str_length(pStr);
      char *z = sqlite3_str_finish(pStr);
      if (!z) return SQLITE_NOMEM;
      sqlite3_result_text(ctx, z, n, sqlite3_free);
      break;
    }
    default: break;
    }
    return SQLITE_OK;
  }
  if (pVtab->pInfo->bPath) {
    switch (iCol) {
    case 0: sqlite3_result_int64(ctx, pCur->iRow + 1); break;
    case 1: sqlite3_result_int64(ctx, r->iNode); break;
    case 2:
      if (r->bHasParent) sqlite3_result_int64(ctx, r->iEdge);
      break;
    case 3: sqlite3_result_double(ctx, r->rCost); break;
    case 4: sqlite3_result_double(ctx, r->rDist); break;
    default: break; /* hidden argument columns read back as NULL */
    }
    return SQLITE_OK;
  }
  switch (iCol) {
  case 0: sqlite3_result_int64(ctx, r->iNode); break;
  case 1: sqlite3_result_double(ctx, r->rDist); break;
  case 2:
    if (r->bHasParent) sqlite3_result_int64(ctx, r->iParent);
    break;
  case 3:
    if (r->bHasParent) sqlite3_result_int64(ctx, r->iEdge);
    break;
  default: break;
  }
  return SQLITE_OK;
}

static int dyngFuncRowid(sqlite3_vtab_cursor *pBase, sqlite_int64 *pRowid) {
  *pRowid = ((DyngFuncCursor *)pBase)->iRow + 1;
  return SQLITE_OK;
}

static sqlite3_module dyngFuncModule = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous-only: exists only as a table-valued function */
    .xConnect = dyngFuncConnect,
    .xBestIndex = dyngFuncBestIndex,
    .xDisconnect = dyngFuncDisconnect,
    .xDestroy = dyngFuncDisconnect,
    .xOpen = dyngFuncOpen,
    .xClose = dyngFuncClose,
    .xFilter = dyngFuncFilter,
    .xNext = dyngFuncNext,
    .xEof = dyngFuncEof,
    .xColumn = dyngFuncColumn,
    .xRowid = dyngFuncRowid,
};

int dyngRegisterSsspModules(sqlite3 *db, DyngConn *pConn) {
  int rc = sqlite3_create_module_v2(db, "dyng_sssp", &dyngFuncModule, pConn, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_module_v2(db, "dyng_path", &dyngFuncModule, pConn, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_module_v2(db, "dyng_mosp", &dyngFuncModule, pConn, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_module_v2(db, "dyng_pareto", &dyngFuncModule, pConn, NULL);
  return rc;
}
