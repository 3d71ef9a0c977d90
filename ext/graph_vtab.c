/*
** ext/graph_vtab.c: the `dyng` virtual table module, one graph per table.
**
**   CREATE VIRTUAL TABLE net USING dyng(edges=roads, src=src, dst=dst,
**                                       weights='length,minutes', directed=1);
**   SELECT node, out_degree, in_degree FROM net;     -- one row per vertex
**   DROP TABLE net;                                   -- removes what it made
**
** Declared schema: CREATE TABLE x(node INTEGER, out_degree INTEGER,
** in_degree INTEGER); the rowid is the node id.  The table is read-only.
**
** How it works: xCreate parses the options (options.c), checks the edge
** table (edge_table.c), installs the change capture (capture.c: a log
** table and its triggers) and loads the graph, refusing rows dyng cannot
** use.  xConnect (reopening the
** file, or after a schema change) only records the definition; the graph
** loads on first use, after checking that the edge table still fits and
** still carries the capture (a table dropped and created again has lost
** it: dyngGraphReattach, dyng_update(g, 'reattach'), adds it again).
** Before every answer dyngGraphSync brings the mirror
** up to date from the log: unseen entries are applied as one batch, and a
** full reload is the fallback whenever the mirror may hold changes that a
** ROLLBACK removed.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/* A virtual table object: SQLite creates one per connect. */
typedef struct DyngVtab {
  sqlite3_vtab base; /* must be first */
  DyngConn *pConn;
  DyngGraph *pG;     /* the graph it shows (owned by pConn) */
} DyngVtab;

/* A cursor over the vertices, materialized at xFilter so that a change of
** the graph by a nested statement cannot invalidate it. */
typedef struct DyngCursor {
  sqlite3_vtab_cursor base; /* must be first */
  sqlite3_int64 *aNode;     /* node ids */
  sqlite3_int64 *aOut;      /* out degrees */
  sqlite3_int64 *aIn;       /* in degrees */
  sqlite3_int64 nRow;
  sqlite3_int64 iRow;
} DyngCursor;

#define DYNG_COL_NODE 0
#define DYNG_COL_OUT_DEGREE 1
#define DYNG_COL_IN_DEGREE 2

/* ---- reattach -------------------------------------------------------- */

int dyngGraphReattach(DyngGraph *pG, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  int rc = dyngResolveEdgeTable(pG);
  if (rc != SQLITE_OK) {
    if (rc != SQLITE_NOMEM)
      *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  rc = dyngCheckEdgeTable(db, pG, 0, pzErr);
  if (rc != SQLITE_OK) return rc;
  /* A capture that is whole and up to date keeps its triggers: only what
  ** is missing is added, and capture triggers left on another table are
  ** dropped, so a failure half-way (out of memory, after which SQLite runs
  ** no further statement until the caller's ends) leaves no capture worse
  ** than it was.  One that is incomplete or out of date (a UNIQUE index
  ** added since needs the REPLACE triggers, and AFTER triggers that finish
  ** their work) is made anew from the table as it is now; a failure
  ** half-way leaves it incomplete, the graph refusing to answer, and the
  ** next reattach completes it.  The log table stays. */
  char *zFault = NULL;
  rc = dyngCheckCapture(db, pG, &zFault);
  sqlite3_free(zFault);
  if (rc == SQLITE_OK || rc == SQLITE_ERROR)
    rc = dyngDropCaptureTriggers(db, pG, rc == SQLITE_ERROR, pzErr);
  if (rc == SQLITE_OK) rc = dyngLogAddNonce(db, pG, pzErr);
  if (rc == SQLITE_OK) rc = dyngInstallCapture(db, pG, 1, pzErr);
  /* A row dyng cannot use, written while the capture was gone, fails the
  ** load and every query until it is fixed; the capture checks the fix. */
  if (rc == SQLITE_OK) rc = dyngGraphLoad(pG, 0, pzErr);
  if (rc != SQLITE_OK) pG->bStale = 1;
  return rc;
}

/* ---- the virtual table ---------------------------------------------- */

/* Takes pG out of its connection's list.  SQLite may still hold virtual
** table objects for it (a DROP or CREATE inside a savepoint that is rolled
** back leaves several): it is freed now if none is left, else by the last
** xDisconnect. */
static void dyngGraphOrphan(DyngGraph *pG) {
  DyngGraph **pp = &pG->pConn->pGraphs;
  while (*pp && *pp != pG) pp = &(*pp)->pNext;
  if (*pp) *pp = pG->pNext;
  pG->pNext = NULL;
  if (pG->nRef == 0) dyngGraphFree(pG);
  else pG->bOrphan = 1;
}

/* 1 when two parsed definitions describe the same graph. */
static int dyngSameDefinition(const DyngGraph *a, const DyngGraph *b) {
  if (sqlite3_stricmp(a->zEdges, b->zEdges) || sqlite3_stricmp(a->zSrc, b->zSrc) ||
      sqlite3_stricmp(a->zDst, b->zDst) || a->nWeight != b->nWeight ||
      a->bDirected != b->bDirected || a->nLogLimit != b->nLogLimit)
    return 0;
  for (int k = 0; k < a->nWeight; k++)
    if (sqlite3_stricmp(a->azWeight[k], b->azWeight[k])) return 0;
  return 1;
}

static int dyngVtabInit(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                        sqlite3_vtab **ppVtab, char **pzErr, int bCreate) {
  DyngConn *pConn = pAux;
  DyngVtab *pVtab = NULL;
  DyngGraph *pNew = dyngGraphParse(pConn, argc, argv, bCreate, pzErr);
  int rc;
  if (!pNew) return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(node INTEGER, out_degree INTEGER, "
                                "in_degree INTEGER)");
  if (rc != SQLITE_OK) goto fail;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  pVtab = sqlite3_malloc(sizeof *pVtab);
  if (!pVtab) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  memset(pVtab, 0, sizeof *pVtab);
  pVtab->pConn = pConn;

  /* The database file is part of the graph's identity: a schema name may
  ** be detached and attached to another database. */
  const char *zFile = sqlite3_db_filename(db, pNew->zDb);
  pNew->zFile = sqlite3_mprintf("%s", zFile ? zFile : "");
  if (!pNew->zFile) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  dyngGraphsForgetGone(pConn);
  DyngGraph *pOld = dyngGraphFind(pConn, pNew->zDb, pNew->zName);
  if (bCreate) {
    /* A graph of this name was dropped by another connection, or in a
    ** savepoint: forget its mirror. */
    if (pOld) dyngGraphOrphan(pOld);
    rc = dyngCheckEdgeTable(db, pNew, 1, pzErr);
    if (rc == SQLITE_OK) rc = dyngInstallCapture(db, pNew, 0, pzErr);
    /* The table's own triggers may keep the capture from seeing all. */
    if (rc == SQLITE_OK && (rc = dyngCheckCapture(db, pNew, pzErr)) != SQLITE_OK) {
      char *zIgnored = NULL;
      dyngRemoveCapture(db, pNew, &zIgnored);
      sqlite3_free(zIgnored);
    }
    if (rc == SQLITE_OK) {
      pNew->pNext = pConn->pGraphs;
      pConn->pGraphs = pNew;
      rc = dyngGraphLoad(pNew, 1, pzErr);
      if (rc != SQLITE_OK) {
        pConn->pGraphs = pNew->pNext;
        char *zIgnored = NULL;
        dyngRemoveCapture(db, pNew, &zIgnored);
        sqlite3_free(zIgnored);
      }
    }
    if (rc != SQLITE_OK) goto fail;
    pVtab->pG = pNew;
  } else if (pOld && dyngSameDefinition(pOld, pNew) && dyngGraphInItsDb(pOld)) {
    /* Reconnecting (schema reset): keep the loaded mirror.  An attached
    ** file may have been detached and attached again, with a new data
    ** version that means nothing to the mirror: the next sync compares
    ** the schema and the change log instead. */
    if (pOld->nRef == 0 && sqlite3_stricmp(pOld->zDb, "main") != 0 &&
        sqlite3_stricmp(pOld->zDb, "temp") != 0)
      pOld->iDataVersion = -1;
    dyngGraphFree(pNew);
    pVtab->pG = pOld;
  } else {
    /* New to this connection, re-created with another definition, or in
    ** another database attached under the same schema name. */
    if (pOld) dyngGraphOrphan(pOld);
    pNew->pNext = pConn->pGraphs;
    pConn->pGraphs = pNew;
    pVtab->pG = pNew;
  }
  pVtab->pG->nRef++;
  *ppVtab = &pVtab->base;
  return SQLITE_OK;

fail:
  sqlite3_free(pVtab);
  dyngGraphFree(pNew);
  if (rc == SQLITE_NOMEM) {
    /* Out of memory says it all; a message made from sqlite3_errmsg on the
    ** way may not. */
    sqlite3_free(*pzErr);
    *pzErr = NULL;
  }
  return rc;
}

static int dyngVtabCreate(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                          sqlite3_vtab **ppVtab, char **pzErr) {
  return dyngVtabInit(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

static int dyngVtabConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                           sqlite3_vtab **ppVtab, char **pzErr) {
  return dyngVtabInit(db, pAux, argc, argv, ppVtab, pzErr, 0);
}

static int dyngVtabDisconnect(sqlite3_vtab *pBase) {
  DyngVtab *pVtab = (DyngVtab *)pBase;
  DyngGraph *pG = pVtab->pG;
  if (--pG->nRef == 0) {
    if (pG->bOrphan) dyngGraphFree(pG);
    else dyngGraphReleaseStmts(pG);
  }
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* DROP TABLE: removes the triggers and the log, then the mirror. */
static int dyngVtabDestroy(sqlite3_vtab *pBase) {
  DyngVtab *pVtab = (DyngVtab *)pBase;
  DyngGraph *pG = pVtab->pG;
  DyngConn *pConn = pVtab->pConn;
  char *zErr = NULL;
  int rc = dyngRemoveCapture(pConn->db, pG, &zErr);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
  pG->nRef--;
  dyngGraphOrphan(pG);
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/*
** Plans.  idxNum bit 1: an equality constraint on `node` is used (argv[0]);
** otherwise every vertex is listed.
*/
static int dyngVtabBestIndex(sqlite3_vtab *pBase, sqlite3_index_info *pInfo) {
  (void)pBase;
  pInfo->idxNum = 0;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  for (int i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (c->iColumn != DYNG_COL_NODE && c->iColumn != -1) continue;
    pInfo->aConstraintUsage[i].argvIndex = 1;
    pInfo->aConstraintUsage[i].omit = 1;
    pInfo->idxNum = 1;
    pInfo->estimatedCost = 10;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    break;
  }
  return SQLITE_OK;
}

static int dyngVtabOpen(sqlite3_vtab *pBase, sqlite3_vtab_cursor **ppCursor) {
  (void)pBase;
  DyngCursor *pCur = sqlite3_malloc(sizeof *pCur);
  if (!pCur) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof *pCur);
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void dyngCursorReset(DyngCursor *pCur) {
  sqlite3_free(pCur->aNode);
  pCur->aNode = pCur->aOut = pCur->aIn = NULL;
  pCur->nRow = pCur->iRow = 0;
}

static int dyngVtabClose(sqlite3_vtab_cursor *pBase) {
  DyngCursor *pCur = (DyngCursor *)pBase;
  dyngCursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int dyngVtabFilter(sqlite3_vtab_cursor *pBase, int idxNum, const char *idxStr, int argc,
                          sqlite3_value **argv) {
  (void)idxStr;
  (void)argc;
  DyngCursor *pCur = (DyngCursor *)pBase;
  DyngVtab *pVtab = (DyngVtab *)pBase->pVtab;
  DyngGraph *pG = pVtab->pG;
  char *zErr = NULL;
  dyngCursorReset(pCur);
  int rc = dyngGraphSync(pG, &zErr);
  if (rc != SQLITE_OK) return dyngVtabError(&pVtab->base, rc, zErr);
  const dyng_graph *g = pG->pGraph;
  uint32_t nBound = dyng_graph_vertex_bound(g), v;
  sqlite3_int64 nMax = (idxNum & 1) ? 1 : (sqlite3_int64)dyng_graph_n_vertices(g);
  pCur->aNode = sqlite3_malloc64((sqlite3_uint64)(nMax ? nMax : 1) * 3 * sizeof(sqlite3_int64));
  if (!pCur->aNode) return SQLITE_NOMEM;
  pCur->aOut = pCur->aNode + (nMax ? nMax : 1);
  pCur->aIn = pCur->aOut + (nMax ? nMax : 1);
  if (idxNum & 1) {
    sqlite3_int64 iNode;
    if (dyngValueAsNodeId(argv[0], &iNode) && dyng_graph_vertex(g, iNode, &v) == DYNG_OK) {
      pCur->aNode[0] = dyng_graph_node_id(g, v);
      pCur->aOut[0] = dyng_graph_out_degree(g, v);
      pCur->aIn[0] = dyng_graph_in_degree(g, v);
      pCur->nRow = 1;
    }
    return SQLITE_OK;
  }
  for (v = 0; v < nBound; v++) {
    uint32_t dOut = dyng_graph_out_degree(g, v), dIn = dyng_graph_in_degree(g, v);
    if (dOut == 0 && dIn == 0) continue;
    pCur->aNode[pCur->nRow] = dyng_graph_node_id(g, v);
    pCur->aOut[pCur->nRow] = dOut;
    pCur->aIn[pCur->nRow] = dIn;
    pCur->nRow++;
  }
  return SQLITE_OK;
}

static int dyngVtabNext(sqlite3_vtab_cursor *pBase) {
  ((DyngCursor *)pBase)->iRow++;
  return SQLITE_OK;
}

static int dyngVtabEof(sqlite3_vtab_cursor *pBase) {
  DyngCursor *pCur = (DyngCursor *)pBase;
  return pCur->iRow >= pCur->nRow;
}

static int dyngVtabColumn(sqlite3_vtab_cursor *pBase, sqlite3_context *ctx, int iCol) {
  DyngCursor *pCur = (DyngCursor *)pBase;
  sqlite3_int64 i = pCur->iRow;
  switch (iCol) {
  case DYNG_COL_NODE:
    sqlite3_result_int64(ctx, pCur->aNode[i]);
    break;
  case DYNG_COL_OUT_DEGREE:
    sqlite3_result_int64(ctx, pCur->aOut[i]);
    break;
  default:
    sqlite3_result_int64(ctx, pCur->aIn[i]);
    break;
  }
  return SQLITE_OK;
}

static int dyngVtabRowid(sqlite3_vtab_cursor *pBase, sqlite_int64 *pRowid) {
  DyngCursor *pCur = (DyngCursor *)pBase;
  *pRowid = pCur->aNode[pCur->iRow];
  return SQLITE_OK;
}

static int dyngVtabRename(sqlite3_vtab *pBase, const char *zNew) {
  (void)zNew;
  return dyngVtabErrorf(pBase, "dyng: a graph cannot be renamed; drop it and create it again under the "
                               "new name");
}

static sqlite3_module dyngGraphModule = {
    .iVersion = 0,
    .xCreate = dyngVtabCreate,
    .xConnect = dyngVtabConnect,
    .xBestIndex = dyngVtabBestIndex,
    .xDisconnect = dyngVtabDisconnect,
    .xDestroy = dyngVtabDestroy,
    .xOpen = dyngVtabOpen,
    .xClose = dyngVtabClose,
    .xFilter = dyngVtabFilter,
    .xNext = dyngVtabNext,
    .xEof = dyngVtabEof,
    .xColumn = dyngVtabColumn,
    .xRowid = dyngVtabRowid,
    .xRename = dyngVtabRename,
};

int dyngRegisterGraphModule(sqlite3 *db, DyngConn *pConn) {
  return sqlite3_create_module_v2(db, "dyng", &dyngGraphModule, pConn, dyngConnFree);
}
