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
** given.  ROLE_NODE is an equality on dyng_sssp's output column `node`. */
enum { ROLE_GRAPH = 0, ROLE_SOURCE, ROLE_TARGET, ROLE_OBJECTIVE, ROLE_LIMIT, ROLE_NODE, ROLE_COUNT };
static const char *const azRoleName[ROLE_COUNT] = {"graph", "source", "target", "objective",
                                                   "max_labels",
                                                   "node"};

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

/*
** Plans.  idxNum bits, by role: 1 graph, 2 source, 4 target, 8 objective,
** 16 max_labels, 32 node (= constraint on dyng_sssp's output).  Arguments reach xFilter in
** role order.  A required argument that is constrained but not usable in
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
    int role = dyngColumnRole(pVtab->pInfo, c->iColumn);
    if (role < 0 || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) {
      if (role != ROLE_NODE) bUnusable = 1;
      continue;
    }
    if (aiCons[role] < 0) aiCons[role] = i;
  }
  if (bUnusable) return SQLITE_CONSTRAINT;
  int iArg = 0, idxNum = 0;
  for (int r = 0; r < ROLE_COUNT; r++) {
    if (aiCons[r] < 0) continue;
    pInfo->aConstraintUsage[aiCons[r]].argvIndex = ++iArg;
    pInfo->aConstraintUsage[aiCons[r]].omit = r != ROLE_NODE;
    idxNum |= 1 << r;
  }
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = (idxNum & 3) == 3 ? ((idxNum & (1 << ROLE_NODE)) || pVtab->pInfo->bPath ? 100 : 1e4)
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

/* Sets zMsg (from sqlite3_mprintf, taken over) as the vtab's error; returns
** SQLITE_ERROR, or SQLITE_NOMEM when zMsg is NULL (its allocation failed). */
static int dyngFuncError(DyngFuncVtab *pVtab, char *zMsg) {
  sqlite3_free(pVtab->base.zErrMsg);
  pVtab->base.zErrMsg = zMsg;
  return zMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Fails with code rc and message zMsg (when not NULL) on the vtab. */
static int dyngFuncFail(DyngFuncVtab *pVtab, int rc, char *zMsg) {
  if (zMsg) dyngFuncError(pVtab, zMsg);
  return rc;
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

/* Resolves the objective argument (name or 0-based index) to *piObj. */
static int dyngResolveObjective(DyngFuncVtab *pVtab, DyngGraph *pG, sqlite3_value *pVal,
                                int *piObj) {
  const char *zFunc = pVtab->pInfo->zName;
  int nObj = pG->nWeight ? pG->nWeight : 1;
  *piObj = 0;
  if (!pVal) return SQLITE_OK;
  int t = sqlite3_value_type(pVal);
  if (t == SQLITE_INTEGER) {
    sqlite3_int64 i = sqlite3_value_int64(pVal);
    if (i < 0 || i >= nObj)
      return dyngFuncError(pVtab, sqlite3_mprintf("%s: objective %lld is out of range for graph "
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
    return dyngFuncError(pVtab, zMsg);
  }
  return dyngFuncError(pVtab, sqlite3_mprintf("%s: objective must be a weight column name or a "
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
  return dyngFuncError(pVtab, sqlite3_mprintf("%s: %s must be an integer node id, got %s",
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
  int rc = dyngMirrorFailure(pG, erc, pWatch, pVtab->pInfo->zName, 1, &zErr);
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
  return dyngFuncFail(pVtab, rc, zErr);
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
  if (erc == DYNG_ENOMEM) return SQLITE_NOMEM;
  if (erc == DYNG_EINTERRUPTED) {
    char *zErr = NULL;
    int rc = dyngWatchError(pWatch, zFunc, &zErr);
    return dyngFuncFail(pVtab, rc, zErr);
  }
  if (erc == DYNG_ETOOBIG)
    return dyngFuncError(pVtab, sqlite3_mprintf("%s: the front of graph '%s' from node %lld to node "
                                                "%lld needs more labels than max_labels (%lld) allows; "
                                                "no partial front is returned (raise max_labels, "
                                                "default %d)",
                                                zFunc, pG->zName, (sqlite3_int64)view.node_id[vSource],
                                                (sqlite3_int64)view.node_id[vTarget], nMax,
                                                DYNG_DEFAULT_MAX_LABELS));
  if (erc != DYNG_OK) return dyngFuncError(pVtab, dyngEngineError(zFunc, pG, erc));
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

/* dyng_path's rows: the tree path from the source to vTarget in pTree (of
** pG, objective iObj; rows of a tree held on the device come over for its
** vertices only). */
static int dyngPathRows(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG, dyng_sssp_tree *pTree,
                        uint32_t vTarget, int iObj) {
  const char *zFunc = pVtab->pInfo->zName;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  /* The path's vertices from the target back to the source (rows of a
  ** tree held on the device come over for them only), then the rows in
  ** path order. */
  uint32_t *aPath = NULL, nPath = 0;
  int erc = dyng_mirror_tree_path(pG->pMirror, pTree, vTarget, &aPath, &nPath);
  if (erc != DYNG_OK)
    return erc == DYNG_ENOMEM ? SQLITE_NOMEM : dyngFuncError(pVtab, dyngBackendError(zFunc, pG, erc));
  if (!nPath) return SQLITE_OK; /* unreachable: no rows */
  sqlite3_int64 n = nPath;
  pCur->aRow = sqlite3_malloc64((sqlite3_uint64)n * sizeof *pCur->aRow);
  if (!pCur->aRow) {
    dyng_free(aPath);
    return SQLITE_NOMEM;
  }
  sqlite3_int64 i = n - 1;
  uint32_t next = DYNG_NONE, nextEdge = DYNG_NONE;
  for (uint32_t k = 0; k < nPath; k++) {
    uint32_t v = aPath[k];
    DyngRow *r = &pCur->aRow[i];
    r->iNode = view.node_id[v];
    r->rDist = pTree->dist[v];
    r->bHasParent = next != DYNG_NONE;
    r->iEdge = r->bHasParent ? view.edge_rowid[nextEdge] : 0;
    r->rCost = r->bHasParent ? view.out.w[iObj][view.edge_pos_out[nextEdge]] : 0.0;
    next = v;
    nextEdge = pTree->parent_edge[v];
    i--;
  }
  dyng_free(aPath);
  pCur->nRow = n;
  return SQLITE_OK;
}

/* dyng_sssp's rows: every vertex pTree (of pG) reaches, nearest first, or
** only vertex vTarget with bNode (a constraint on the node column). */
static int dyngTreeListRows(DyngFuncVtab *pVtab, DyngFuncCursor *pCur, DyngGraph *pG, dyng_sssp_tree *pTree,
                            uint32_t vTarget, int bNode) {
  const char *zFunc = pVtab->pInfo->zName;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  /* The rows this answer reads: the target's, or every row. */
  int erc = dyng_mirror_tree_rows(pG->pMirror, pTree, bNode ? &vTarget : NULL, 1);
  if (erc != DYNG_OK)
    return erc == DYNG_ENOMEM ? SQLITE_NOMEM : dyngFuncError(pVtab, dyngBackendError(zFunc, pG, erc));
  if (bNode && isinf(pTree->dist[vTarget])) return SQLITE_OK; /* unreachable: no rows */
  /* The distance order is rebuilt only for a listing of the whole tree
  ** (after an update, or when the backend left it to the host). */
  if (!bNode) {
    erc = dyng_sssp_tree_order(pTree);
    if (erc != DYNG_OK) return erc == DYNG_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
  }
  sqlite3_int64 n = bNode ? 1 : pTree->n_reached;
  pCur->aRow = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof *pCur->aRow);
  if (!pCur->aRow) return SQLITE_NOMEM;
  for (sqlite3_int64 i = 0; i < n; i++) {
    uint32_t v = bNode ? vTarget : pTree->order[i];
    DyngRow *r = &pCur->aRow[i];
    r->iNode = view.node_id[v];
    r->rDist = pTree->dist[v];
    r->bHasParent = pTree->parent[v] != DYNG_NONE;
    r->iParent = r->bHasParent ? view.node_id[pTree->parent[v]] : 0;
    r->iEdge = r->bHasParent ? view.edge_rowid[pTree->parent_edge[v]] : 0;
  }
  pCur->nRow = n;
  return SQLITE_OK;
}

/* The arguments of one call, checked. */
typedef struct DyngFuncArgs {
  sqlite3_int64 iSource, iTarget, iNode;
  sqlite3_int64 nMaxLabels; /* dyng_pareto's max_labels */
  int bNode;                /* a constraint on the node column: iNode */
  int bNoRows;              /* the call matches no row (node = 'a') */
} DyngFuncArgs;

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
      return dyngFuncError(pVtab, sqlite3_mprintf("%s: missing argument '%s' (usage: %s)", zFunc,
                                                  azRoleName[aReq[i]], pInfo->zUsage));
  }
  if (sqlite3_value_type(apArg[ROLE_GRAPH]) != SQLITE_TEXT)
    return dyngFuncError(pVtab, sqlite3_mprintf("%s: graph must be the name of a dyng table, got %s",
                                                zFunc, dyngTypeName(apArg[ROLE_GRAPH])));
  int rc = dyngNodeArg(pVtab, "source", apArg[ROLE_SOURCE], &p->iSource);
  if (rc == SQLITE_OK && pInfo->bPath) rc = dyngNodeArg(pVtab, "target", apArg[ROLE_TARGET], &p->iTarget);
  if (rc != SQLITE_OK) return rc;
  p->nMaxLabels = DYNG_DEFAULT_MAX_LABELS;
  if (apArg[ROLE_LIMIT]) {
    if (sqlite3_value_type(apArg[ROLE_LIMIT]) != SQLITE_INTEGER)
      return dyngFuncError(pVtab, sqlite3_mprintf("%s: max_labels must be a positive integer, "
                                                  "got %s", zFunc,
                                                  dyngTypeName(apArg[ROLE_LIMIT])));
    if (sqlite3_value_int64(apArg[ROLE_LIMIT]) < 1)
      return dyngFuncError(pVtab, sqlite3_mprintf("%s: max_labels must be a positive integer, "
                                                  "got %lld", zFunc,
                                                  sqlite3_value_int64(apArg[ROLE_LIMIT])));
    p->nMaxLabels = sqlite3_value_int64(apArg[ROLE_LIMIT]);
  }
  p->bNode = apArg[ROLE_NODE] != NULL;
  if (p->bNode) {
    /* node = X matches as for an INTEGER column; X = 'a' matches no row. */
    if (!dyngValueAsNodeId(apArg[ROLE_NODE], &p->iNode)) p->bNoRows = 1;
  }
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
  if (rc != SQLITE_OK) return dyngFuncFail(pVtab, rc, zErr);
  int iObj;
  rc = dyngResolveObjective(pVtab, pG, apArg[ROLE_OBJECTIVE], &iObj);
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

  /* The whole tree, kept for the next query from this source (and updated
  ** by later batches) when the connection's budget allows. */
  dyng_sssp_tree *pTree = NULL;
  dyng_kept_tree *pOwned = NULL;
  rc = dyngTreeGet(pG, vSource, iObj, &watch, zFunc, &pTree, &pOwned, &zErr);
  dyngWatchEnd(&watch, 0);
  if (rc != SQLITE_OK) return dyngFuncFail(pVtab, rc, zErr);

  rc = pInfo->bPath ? dyngPathRows(pVtab, pCur, pG, pTree, vTarget, iObj)
                    : dyngTreeListRows(pVtab, pCur, pG, pTree, vTarget, args.bNode);
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
