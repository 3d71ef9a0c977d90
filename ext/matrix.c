/*
** ext/matrix.c: dyng_matrix, the table-valued function of cost matrices.
**
**   SELECT source, target, dist
**   FROM dyng_matrix('net', '[1, 5, 9]', (SELECT json_group_array(id) FROM depots));
**
** Declared schema (the HIDDEN columns are the function's arguments):
**   dyng_matrix(source, target, dist,
**               graph HIDDEN, sources HIDDEN, targets HIDDEN, objective HIDDEN)
**
** One row per reachable (source, target) pair, sources in the order of
** their array and, for each, targets in theirs: the distance in the
** objective (a weight column's name or 0-based index, default 0), the one
** dyng_sssp gives.  A source is its own target at distance 0.  An id that
** is no node of the graph has no rows, as an unreachable pair has none; an
** id given twice counts once.  Each block (below) is computed on the graph
** as it is then: the graph is opened again, and the ids looked up again,
** for each, so a change a statement makes while it reads the rows is seen
** from the next block on.
**
** How it works: the rows stream.  The sources go in blocks to the engine
** (dyng_route_matrix, engine/route.h), one search per source on every
** thread, each stopping once its targets came out, and a block's rows are
** read out before the next block is computed: memory stays at one block
** (at most DYNG_MATRIX_BLOCK_CELLS distances) whatever the matrix's size.
** One watch (ext/watch.c) covers the whole statement: max_ms and
** interrupts stop it between blocks and within the searches.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/route.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/* Distances computed at a time, at most (8 MiB). */
#define DYNG_MATRIX_BLOCK_CELLS (1u << 20)

enum { COL_SOURCE = 0, COL_TARGET, COL_DIST, COL_GRAPH, COL_SOURCES, COL_TARGETS, COL_OBJECTIVE };

static const char *const zMatrixUsage = "dyng_matrix(graph, sources, targets[, objective])";

typedef struct DyngMatrixVtab {
  sqlite3_vtab base; /* must be first */
  DyngConn *pConn;
} DyngMatrixVtab;

typedef struct DyngMatrixCursor {
  sqlite3_vtab_cursor base; /* must be first */
  char *zGraph;             /* the graph argument */
  sqlite3_value *pObjective; /* the objective argument (a copy), or NULL */
  sqlite3_int64 *aSrc, *aDst; /* node ids of the sources and targets, each once */
  size_t nSrc, nDst;
  uint32_t *aSrcV, *aDstV;  /* per block: the vertices of the known ones */
  size_t *aDstAt;           /* per block: where each known target's column is */
  size_t *aRowOf;           /* per block: where each known source's row is */
  double *aOut;             /* the current block's distances */
  size_t nCap;              /* rows aOut, aSrcV and aRowOf hold */
  size_t iBlock, nBlock;    /* its first source and how many */
  size_t iSrc, iDst;        /* the current row: a source and a target */
  int bEof;
  int bWatching;
  DyngWatch watch;
  sqlite3_int64 iRowid;
} DyngMatrixCursor;

static int dyngMatrixConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv, sqlite3_vtab **ppVtab,
                             char **pzErr) {
  (void)argc, (void)argv, (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(source INTEGER, target INTEGER, dist REAL, graph HIDDEN, "
                                    "sources HIDDEN, targets HIDDEN, objective HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  DyngMatrixVtab *p = sqlite3_malloc(sizeof *p);
  if (!p) return SQLITE_NOMEM;
  memset(p, 0, sizeof *p);
  p->pConn = pAux;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int dyngMatrixDisconnect(sqlite3_vtab *pBase) {
  sqlite3_free(pBase);
  return SQLITE_OK;
}

/* Arguments in column order; idxNum has bit (1 << i) for argument i
** (graph 0, sources 1, targets 2, objective 3).  A missing required one is
** reported by xFilter, naming it. */
static int dyngMatrixBestIndex(sqlite3_vtab *pBase, sqlite3_index_info *pInfo) {
  (void)pBase;
  int aiCons[4] = {-1, -1, -1, -1};
  for (int i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if (c->iColumn < COL_GRAPH || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) return SQLITE_CONSTRAINT;
    if (aiCons[c->iColumn - COL_GRAPH] < 0) aiCons[c->iColumn - COL_GRAPH] = i;
  }
  int iArg = 0, idxNum = 0;
  for (int r = 0; r < 4; r++) {
    if (aiCons[r] < 0) continue;
    pInfo->aConstraintUsage[aiCons[r]].argvIndex = ++iArg;
    pInfo->aConstraintUsage[aiCons[r]].omit = 1;
    idxNum |= 1 << r;
  }
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = (idxNum & 7) == 7 ? 1e6 : 1e15;
  pInfo->estimatedRows = 10000;
  return SQLITE_OK;
}

static void dyngMatrixReset(DyngMatrixCursor *c) {
  if (c->bWatching) dyngWatchEnd(&c->watch, (sqlite3_int64)c->iBlock);
  c->bWatching = 0;
  sqlite3_free(c->zGraph);
  sqlite3_value_free(c->pObjective);
  sqlite3_free(c->aSrc);
  sqlite3_free(c->aDst);
  sqlite3_free(c->aSrcV);
  sqlite3_free(c->aDstV);
  sqlite3_free(c->aDstAt);
  sqlite3_free(c->aRowOf);
  sqlite3_free(c->aOut);
  c->zGraph = NULL;
  c->pObjective = NULL;
  c->aSrc = c->aDst = NULL;
  c->aSrcV = c->aDstV = NULL;
  c->aDstAt = NULL;
  c->aRowOf = NULL;
  c->aOut = NULL;
  c->nSrc = c->nDst = c->iBlock = c->nBlock = c->iSrc = c->iDst = 0;
  c->bEof = 1;
  c->iRowid = 0;
}

static int dyngMatrixOpen(sqlite3_vtab *pBase, sqlite3_vtab_cursor **ppCursor) {
  (void)pBase;
  DyngMatrixCursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->bEof = 1;
  *ppCursor = &c->base;
  return SQLITE_OK;
}

static int dyngMatrixClose(sqlite3_vtab_cursor *pBase) {
  DyngMatrixCursor *c = (DyngMatrixCursor *)pBase;
  dyngMatrixReset(c);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* An id and where it first came, for dyngMatrixIds. */
typedef struct DyngMatrixId {
  sqlite3_int64 iId;
  size_t iAt;
} DyngMatrixId;

static int dyngMatrixIdCmp(const void *a, const void *b) {
  const DyngMatrixId *x = a, *y = b;
  if (x->iId != y->iId) return x->iId < y->iId ? -1 : 1;
  return x->iAt < y->iAt ? -1 : x->iAt > y->iAt;
}

static int dyngMatrixAtCmp(const void *a, const void *b) {
  const DyngMatrixId *x = a, *y = b;
  return x->iAt < y->iAt ? -1 : x->iAt > y->iAt;
}

/* The node ids of JSON array argument zRole into *paId (sqlite3_malloc64),
** *pn of them, each once, in the order each first came.  An error on pVtab
** for anything but an array of integers. */
static int dyngMatrixIds(sqlite3_vtab *pVtab, const char *zRole, sqlite3_value *pVal, sqlite3_int64 **paId,
                         size_t *pn) {
  *paId = NULL;
  *pn = 0;
  int eType = sqlite3_value_type(pVal);
  if (eType != SQLITE_TEXT)
    return dyngVtabErrorf(pVtab, "dyng_matrix: %s must be a JSON array of node ids, got %s", zRole,
                          eType == SQLITE_NULL      ? "NULL"
                          : eType == SQLITE_INTEGER ? "an integer"
                          : eType == SQLITE_FLOAT   ? "a real number"
                                                    : "a blob");
  const char *zText = (const char *)sqlite3_value_text(pVal);
  if (!zText) return SQLITE_NOMEM;
  json_error_t jerr;
  json_t *pArr = json_loads(zText, JSON_DECODE_ANY, &jerr);
  if (!pArr || !json_is_array(pArr)) {
    json_decref(pArr);
    return dyngVtabErrorf(pVtab, "dyng_matrix: %s must be a JSON array of node ids, got '%.40s%s'", zRole, zText,
                          strlen(zText) > 40 ? "..." : "");
  }
  size_t n = json_array_size(pArr);
  DyngMatrixId *a = sqlite3_malloc64((sqlite3_uint64)(n ? n : 1) * sizeof *a);
  if (!a) {
    json_decref(pArr);
    return SQLITE_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *pItem = json_array_get(pArr, i);
    if (!json_is_integer(pItem)) {
      sqlite3_free(a);
      json_decref(pArr);
      return dyngVtabErrorf(pVtab, "dyng_matrix: %s[%lld] is not an integer node id", zRole, (long long)i);
    }
    a[i].iId = (sqlite3_int64)json_integer_value(pItem);
    a[i].iAt = i;
  }
  json_decref(pArr);
  /* Each id once, where it first came. */
  qsort(a, n, sizeof *a, dyngMatrixIdCmp);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || a[i].iId != a[i - 1].iId) a[m++] = a[i];
  qsort(a, m, sizeof *a, dyngMatrixAtCmp);
  sqlite3_int64 *aId = sqlite3_malloc64((sqlite3_uint64)(m ? m : 1) * sizeof *aId);
  if (!aId) {
    sqlite3_free(a);
    return SQLITE_NOMEM;
  }
  for (size_t i = 0; i < m; i++) aId[i] = a[i].iId;
  sqlite3_free(a);
  *paId = aId;
  *pn = m;
  return SQLITE_OK;
}

/* Computes the block of sources from c->iBlock on, on the graph as it is
** now: distances of unknown ids are INFINITY. */
static int dyngMatrixBlock(DyngMatrixVtab *pVtab, DyngMatrixCursor *c) {
  size_t per = DYNG_MATRIX_BLOCK_CELLS / c->nDst;
  if (per < 1) per = 1;
  DyngGraph *pG = NULL;
  char *zErr = NULL;
  int rc = dyngGraphOpen(pVtab->pConn, "dyng_matrix", c->zGraph, 1, &pG, &zErr);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
  /* Several sources per host thread keep every thread busy; a device takes
  ** as many as a block holds, in passes of many sources each. */
  size_t nThreads = (size_t)dyng_threads();
  if (per > 16 * nThreads && !dyng_mirror_matrix_on_backend(pG->pMirror, per)) per = 16 * nThreads;
  /* (The graph may have changed backend since the rows were allocated.) */
  if (per > c->nCap) per = c->nCap;
  c->nBlock = c->nSrc - c->iBlock < per ? c->nSrc - c->iBlock : per;
  for (size_t i = 0; i < c->nBlock * c->nDst; i++) c->aOut[i] = INFINITY;
  int iObj = 0;
  rc = dyngObjectiveArg(&pVtab->base, "dyng_matrix", pG, c->pObjective, &iObj);
  if (rc != SQLITE_OK) return rc;
  /* The known targets (their columns in aDstAt), then the known sources of
  ** the block, each computed into a row of its own. */
  size_t nDstV = 0, nSrcV = 0;
  for (size_t k = 0; k < c->nDst; k++)
    if (dyng_graph_vertex(pG->pGraph, c->aDst[k], &c->aDstV[nDstV]) == DYNG_OK) c->aDstAt[nDstV++] = k;
  size_t *aRowOf = c->aRowOf;
  for (size_t i = 0; i < c->nBlock; i++)
    if (dyng_graph_vertex(pG->pGraph, c->aSrc[c->iBlock + i], &c->aSrcV[nSrcV]) == DYNG_OK) aRowOf[nSrcV++] = i;
  if (!nDstV || !nSrcV) return SQLITE_OK;
  double *aTmp = sqlite3_malloc64((sqlite3_uint64)nSrcV * nDstV * sizeof *aTmp);
  if (!aTmp) return SQLITE_NOMEM;
  int bBackend = 0;
  int erc = dyng_mirror_matrix(pG->pMirror, iObj, c->aSrcV, nSrcV, c->aDstV, nDstV, &c->watch.cancel, aTmp,
                               &bBackend);
  if (erc == DYNG_OK)
    for (size_t i = 0; i < nSrcV; i++)
      for (size_t k = 0; k < nDstV; k++) c->aOut[aRowOf[i] * c->nDst + c->aDstAt[k]] = aTmp[i * nDstV + k];
  sqlite3_free(aTmp);
  rc = dyngEngineFail(pG, erc, &c->watch, "dyng_matrix", bBackend ? DYNG_ERR_BACKEND : 0, &zErr, NULL);
  return dyngVtabError(&pVtab->base, rc, zErr);
}

/* Moves to the next reachable pair from (iSrc, iDst) on, computing blocks
** as it goes; sets bEof past the last. */
static int dyngMatrixSettle(DyngMatrixVtab *pVtab, DyngMatrixCursor *c) {
  for (;;) {
    if (c->iDst == c->nDst) {
      c->iDst = 0;
      c->iSrc++;
    }
    if (c->iSrc >= c->nSrc) {
      c->bEof = 1;
      return SQLITE_OK;
    }
    if (c->iSrc >= c->iBlock + c->nBlock) {
      c->iBlock = c->iSrc;
      int rc = dyngMatrixBlock(pVtab, c);
      if (rc != SQLITE_OK) return rc;
    }
    if (!isinf(c->aOut[(c->iSrc - c->iBlock) * c->nDst + c->iDst])) return SQLITE_OK;
    c->iDst++;
  }
}

static int dyngMatrixFilter(sqlite3_vtab_cursor *pBase, int idxNum, const char *idxStr, int argc,
                            sqlite3_value **argv) {
  (void)idxStr;
  DyngMatrixCursor *c = (DyngMatrixCursor *)pBase;
  DyngMatrixVtab *pVtab = (DyngMatrixVtab *)pBase->pVtab;
  dyngMatrixReset(c);
  sqlite3_value *apArg[4] = {0};
  int iArg = 0;
  for (int r = 0; r < 4 && iArg < argc; r++)
    if (idxNum & (1 << r)) apArg[r] = argv[iArg++];
  static const char *const azName[3] = {"graph", "sources", "targets"};
  for (int r = 0; r < 3; r++)
    if (!apArg[r])
      return dyngVtabErrorf(&pVtab->base, "dyng_matrix: missing argument '%s' (usage: %s)", azName[r],
                            zMatrixUsage);
  if (sqlite3_value_type(apArg[0]) != SQLITE_TEXT)
    return dyngVtabErrorf(&pVtab->base, "dyng_matrix: graph must be the name of a dyng table");
  char *zErr = NULL;
  DyngGraph *pG = NULL;
  c->zGraph = sqlite3_mprintf("%s", (const char *)sqlite3_value_text(apArg[0]));
  if (!c->zGraph) return SQLITE_NOMEM;
  /* The graph and objective are checked now, and again at each block. */
  int rc = dyngGraphOpen(pVtab->pConn, "dyng_matrix", c->zGraph, 1, &pG, &zErr);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
  int iObj = 0;
  rc = dyngObjectiveArg(&pVtab->base, "dyng_matrix", pG, apArg[3], &iObj);
  if (rc == SQLITE_OK && apArg[3] && !(c->pObjective = sqlite3_value_dup(apArg[3]))) rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK) rc = dyngMatrixIds(&pVtab->base, "sources", apArg[1], &c->aSrc, &c->nSrc);
  if (rc == SQLITE_OK) rc = dyngMatrixIds(&pVtab->base, "targets", apArg[2], &c->aDst, &c->nDst);
  if (rc != SQLITE_OK) return rc;
  if (!c->nSrc || !c->nDst) return SQLITE_OK;
  c->bEof = 0;
  size_t per = DYNG_MATRIX_BLOCK_CELLS / c->nDst;
  size_t nRows = per ? (per < c->nSrc ? per : c->nSrc) : 1;
  /* Rows of a block: as dyngMatrixBlock makes them (a device takes more). */
  if (nRows > 16 * (size_t)dyng_threads() && !dyng_mirror_matrix_on_backend(pG->pMirror, nRows))
    nRows = 16 * (size_t)dyng_threads();
  c->nCap = nRows;
  c->aOut = sqlite3_malloc64((sqlite3_uint64)nRows * c->nDst * sizeof *c->aOut);
  c->aSrcV = sqlite3_malloc64((sqlite3_uint64)nRows * sizeof *c->aSrcV);
  c->aRowOf = sqlite3_malloc64((sqlite3_uint64)nRows * sizeof *c->aRowOf);
  c->aDstV = sqlite3_malloc64((sqlite3_uint64)c->nDst * sizeof *c->aDstV);
  c->aDstAt = sqlite3_malloc64((sqlite3_uint64)c->nDst * sizeof *c->aDstAt);
  if (!c->aOut || !c->aSrcV || !c->aRowOf || !c->aDstV || !c->aDstAt) return SQLITE_NOMEM;
  dyngWatchBegin(&c->watch, pVtab->pConn, 0);
  c->bWatching = 1;
  return dyngMatrixSettle(pVtab, c);
}

static int dyngMatrixNext(sqlite3_vtab_cursor *pBase) {
  DyngMatrixCursor *c = (DyngMatrixCursor *)pBase;
  c->iDst++;
  c->iRowid++;
  return dyngMatrixSettle((DyngMatrixVtab *)pBase->pVtab, c);
}

static int dyngMatrixEof(sqlite3_vtab_cursor *pBase) { return ((DyngMatrixCursor *)pBase)->bEof; }

static int dyngMatrixColumn(sqlite3_vtab_cursor *pBase, sqlite3_context *ctx, int iCol) {
  DyngMatrixCursor *c = (DyngMatrixCursor *)pBase;
  switch (iCol) {
  case COL_SOURCE: sqlite3_result_int64(ctx, c->aSrc[c->iSrc]); break;
  case COL_TARGET: sqlite3_result_int64(ctx, c->aDst[c->iDst]); break;
  case COL_DIST: sqlite3_result_double(ctx, c->aOut[(c->iSrc - c->iBlock) * c->nDst + c->iDst]); break;
  default: break; /* the arguments read back as NULL */
  }
  return SQLITE_OK;
}

static int dyngMatrixRowid(sqlite3_vtab_cursor *pBase, sqlite3_int64 *pRowid) {
  *pRowid = ((DyngMatrixCursor *)pBase)->iRowid;
  return SQLITE_OK;
}

static sqlite3_module dyngMatrixModule = {
    .iVersion = 0,
    .xConnect = dyngMatrixConnect,
    .xBestIndex = dyngMatrixBestIndex,
    .xDisconnect = dyngMatrixDisconnect,
    .xOpen = dyngMatrixOpen,
    .xClose = dyngMatrixClose,
    .xFilter = dyngMatrixFilter,
    .xNext = dyngMatrixNext,
    .xEof = dyngMatrixEof,
    .xColumn = dyngMatrixColumn,
    .xRowid = dyngMatrixRowid,
};

int dyngRegisterMatrixModule(sqlite3 *db, DyngConn *pConn) {
  return sqlite3_create_module_v2(db, "dyng_matrix", &dyngMatrixModule, pConn, NULL);
}
