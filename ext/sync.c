/*
** ext/sync.c: keeping a graph's mirror equal to its edge table.
**
**   SELECT dyng_update('net');          -- apply pending changes now (update.c)
**
** The triggers of sql/capture.sql append every change of the edge table to
** the graph's log, `<graph>_log(seq, op, edge, src, dst, w0, ...)`.  Before
** any answer (and in dyng_update) dyngGraphSync brings the mirror up to
** date:
**
**   - A *clean* mirror reflects committed rows up to log entry iLogSeq: it
**     was synced when nothing could be rolled back.  "Nothing changed" is
**     this connection's change counter and the file's data version both
**     unmoved (one kept PRAGMA step and two reads).  Otherwise the entries
**     after iLogSeq are applied as one normalized batch.
**   - A *tentative* mirror was synced while a transaction was open (or a
**     writing statement ran): the entries it applied since it was last
**     clean, iUndoBase < seq <= iLogSeq, may be rolled back.  For each it
**     keeps an undo record: the log row it applied (to recognise it: each
**     row has a random nonce) and the edge's state before.  A ROLLBACK or
**     ROLLBACK TO removes a suffix of the log, and later writes reuse those
**     seq numbers with other content, so the sync compares the log after
**     iUndoBase with the undo records, reverts exactly the records that no
**     longer match (newest first), and applies what follows.  Without new
**     writes it only needs the log's last seq.  Undo records are dropped
**     when the mirror becomes clean, and when the transaction of the last
**     sync is over (the data version moved): entries still there then are
**     committed.  A mirror loaded inside a transaction (or past the records'
**     limit) has an *unsure* base: it holds while log entry iUndoBase keeps
**     its nonce, since any rollback of what the load saw removes it.
**   - Every log entry says what its rowid is from there on, so replaying,
**     comparing and undoing entry by entry is exact.  A BEFORE trigger
**     logs a marker (op 2, no effect) for each row a REPLACE could remove;
**     the AFTER trigger of the row that replaced it turns the markers of
**     rows that went into deletes (op -1), where they stand.  Logs of
**     graphs created by older versions have no nonces and op 0, "re-read
**     this rowid from the table": a mirror that applied one inside a
**     transaction reloads at the next change there.
**   - A schema change (DDL, VACUUM; inside a transaction the schema cookie
**     is read even when nothing else moved) reloads, after checking that
**     the edge table still has its capture triggers: a table dropped and
**     created again, or rebuilt, has lost them, and the graph refuses to
**     answer until dyng_update(g, 'reattach').  So does a log that no longer
**     starts right after the mirror's position (trimmed by the writers'
**     bound, or edited), an undo list that grew past DYNG_UNDO_MAX and any
**     failure in the middle of applying reload too.  Reloads are counted.
**
** A full load streams the table through the internal function dyng__load
** into the engine's chunked loader (see docs/design.md) and gives the graph
** a mirror (engine/mirror.h) on the backend ext/backends.c chooses; a batch
** read from the log goes to dyng_mirror_apply.  dyngGraphOpen, which finds
** a graph for a function and syncs it, is here too.  A graph is busy
** while it loads or syncs: reached again from inside (a schema edited to
** make it read itself), it answers with an error, not a recursion.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"
#include "engine/idmap.h"
#include "engine/loader.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/* Undo records kept at most; a transaction that changes more edges falls
** back to a reload if it is rolled back after the mirror applied them. */
#define DYNG_UNDO_MAX 200000

/* One log entry applied while the mirror was tentative. */
struct DyngUndo {
  sqlite3_int64 iSeq;   /* the log row ... */
  sqlite3_int64 iEdge;  /* ... its edge rowid */
  sqlite3_int64 iSrc;   /* ... and for an insert its values */
  sqlite3_int64 iDst;
  sqlite3_int64 iNonce; /* ... and its nonce (0 in a log without them) */
  int op;               /* 1 insert, -1 delete, 2 marker, 0 re-read (old log) */
  int bHadOld;          /* the edge existed before the entry */
  sqlite3_int64 iOldSrc; /* its endpoints before */
  sqlite3_int64 iOldDst;
  /* Weights follow in DyngGraph.aUndoW: nWeight of the entry, then nWeight
  ** of the old edge, per record. */
};

/* ---- statements and counters ----------------------------------------- */

/* Forgets the undo records. */
static void dyngUndoClear(DyngGraph *pG) {
  pG->nUndo = 0;
  pG->iUndoBase = pG->iLogSeq;
}

/* Runs a one-value query; *piVal gets its integer (0 for NULL). */
static int dyngQueryInt(sqlite3 *db, const char *zSql, sqlite3_int64 *piVal) {
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  *piVal = sqlite3_step(pStmt) == SQLITE_ROW ? sqlite3_column_int64(pStmt, 0) : 0;
  return sqlite3_finalize(pStmt);
}

/* Ends a use of the kept statement *ppStmt: reset for the next call, or
** finalized when that failed or the graph's table is no longer connected.
** Returns the reset's result. */
static int dyngKeptStmtDone(DyngGraph *pG, sqlite3_stmt **ppStmt) {
  int rc = sqlite3_reset(*ppStmt);
  if (rc != SQLITE_OK || pG->nRef == 0) {
    sqlite3_finalize(*ppStmt);
    *ppStmt = NULL;
  }
  return rc;
}

/* Runs the one-value query zSql through the statement *ppStmt, preparing it
** when needed.  The statement is kept for the next call while the graph's
** table is connected, and finalized otherwise. */
static int dyngGraphQueryInt(DyngGraph *pG, sqlite3_stmt **ppStmt, char *zSql,
                             sqlite3_int64 *piVal) {
  sqlite3 *db = pG->pConn->db;
  int rc = SQLITE_OK;
  if (!*ppStmt) {
    rc = zSql ? sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT, ppStmt, NULL)
              : SQLITE_NOMEM;
  }
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_step(*ppStmt);
  *piVal = rc == SQLITE_ROW ? sqlite3_column_int64(*ppStmt, 0) : 0;
  return dyngKeptStmtDone(pG, ppStmt);
}

/* The highest sequence number in the log (0 when empty). */
static int dyngLogMax(DyngGraph *pG, sqlite3_int64 *piSeq, char **pzErr) {
  char *zSql = pG->pLogMax ? NULL
                           : sqlite3_mprintf("SELECT max(seq) FROM \"%w\".\"%w\"", pG->zDb, pG->zLog);
  int rc = dyngGraphQueryInt(pG, &pG->pLogMax, zSql, piSeq);
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read its change log '%s': %s", pG->zName,
                             pG->zLog, sqlite3_errmsg(pG->pConn->db));
  return rc;
}

/* The nonce of log entry iSeq into *piNonce; *pbFound is 0 when the entry
** is not there. */
static int dyngLogNonce(DyngGraph *pG, sqlite3_int64 iSeq, sqlite3_int64 *piNonce, int *pbFound,
                        char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  int rc = SQLITE_OK;
  if (!pG->pLogNonce) {
    char *zSql = sqlite3_mprintf("SELECT nonce FROM \"%w\".\"%w\" WHERE seq = ?1", pG->zDb, pG->zLog);
    rc = zSql ? sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &pG->pLogNonce, NULL)
              : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(pG->pLogNonce, 1, iSeq);
    *pbFound = sqlite3_step(pG->pLogNonce) == SQLITE_ROW;
    *piNonce = *pbFound ? sqlite3_column_int64(pG->pLogNonce, 0) : 0;
    rc = dyngKeptStmtDone(pG, &pG->pLogNonce);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read its change log '%s': %s", pG->zName,
                             pG->zLog, sqlite3_errmsg(db));
  return rc;
}

/* Whether the log has the nonce column of this version's capture (graphs
** created by older versions keep their log and triggers); sets
** pG->bLogNonce, and drops the kept log reader when that changed. */
static int dyngLogKind(DyngGraph *pG) {
  sqlite3_int64 n = 0;
  char *zSql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info(%Q, %Q) WHERE name = 'nonce'",
                               pG->zLog, pG->zDb);
  if (!zSql) return SQLITE_NOMEM;
  int rc = dyngQueryInt(pG->pConn->db, zSql, &n);
  sqlite3_free(zSql);
  if (rc == SQLITE_OK && (n > 0) != pG->bLogNonce) {
    pG->bLogNonce = n > 0;
    sqlite3_finalize(pG->pLogRead);
    sqlite3_finalize(pG->pLogTake);
    sqlite3_finalize(pG->pLogNonce);
    pG->pLogRead = pG->pLogTake = pG->pLogNonce = NULL;
  }
  return rc;
}

/* The data version of the graph's file: it changes with every commit to it,
** by this or any other connection.  SQLite notices another connection's
** commit only when a read transaction starts, so PRAGMA data_version runs
** first (its own value ignores this connection's commits). */
static int dyngDataVersion(DyngGraph *pG, sqlite3_int64 *piVersion) {
  sqlite3_int64 iPragma;
  char *zSql = pG->pDataVersion ? NULL : sqlite3_mprintf("PRAGMA \"%w\".data_version", pG->zDb);
  int rc = dyngGraphQueryInt(pG, &pG->pDataVersion, zSql, &iPragma);
  if (rc != SQLITE_OK) return rc;
  unsigned int v = 0;
  if (sqlite3_file_control(pG->pConn->db, pG->zDb, SQLITE_FCNTL_DATA_VERSION, &v) != SQLITE_OK)
    v = 0;
  /* Both parts: the file's counter (own commits, VACUUM) and the pragma's
  ** (other connections), in one number. */
  *piVersion = ((sqlite3_int64)v << 32) ^ (iPragma & 0xffffffff);
  return SQLITE_OK;
}

/* The schema cookie of the graph's schema.  It changes with every schema
** change, and with VACUUM, which may renumber the rowids of an edge table
** that has no INTEGER PRIMARY KEY; either way the mirror is reloaded. */
static int dyngSchemaVersion(DyngGraph *pG, sqlite3_int64 *piVersion) {
  char *zSql =
      pG->pSchemaVersion ? NULL : sqlite3_mprintf("PRAGMA \"%w\".schema_version", pG->zDb);
  return dyngGraphQueryInt(pG, &pG->pSchemaVersion, zSql, piVersion);
}

/* 1 when a statement that writes is running (a graph queried from a
** trigger, say): it may yet fail, and the row it is writing may be in the
** table before its AFTER triggers log it. */
static int dyngWriteRunning(sqlite3 *db) {
  for (sqlite3_stmt *p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p))
    if (sqlite3_stmt_busy(p) && !sqlite3_stmt_readonly(p)) return 1;
  return 0;
}

/* 1 when what this connection sees may still be rolled back: a transaction
** is open, or a statement that writes is running. */
static int dyngInUndoableState(sqlite3 *db) {
  return !sqlite3_get_autocommit(db) || dyngWriteRunning(db);
}

/* Follows a rename of the edge table: the capture triggers move with the
** table (SQLite rewrites them), so the table their INSERT trigger is on is
** the edge table.  Without that trigger the name stays, and
** dyngCheckCapture says what happened. */
int dyngResolveEdgeTable(DyngGraph *pG) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf("SELECT tbl_name FROM \"%w\".sqlite_master "
                               "WHERE type = 'trigger' AND name = '%q_ins'",
                               pG->zDb, pG->zLog);
  if (!zSql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(pG->pConn->db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zTable = (const char *)sqlite3_column_text(pStmt, 0);
    if (zTable && sqlite3_stricmp(zTable, pG->zEdges) != 0) {
      char *z = sqlite3_mprintf("%s", zTable);
      if (!z) rc = SQLITE_NOMEM;
      else {
        sqlite3_free(pG->zEdges);
        pG->zEdges = z;
      }
    }
  }
  int rc2 = sqlite3_finalize(pStmt);
  return rc == SQLITE_OK ? rc2 : rc;
}

/* ---- reading rows ------------------------------------------------------ */

/* r in the fewest significant digits (15 to 17) that read back as r, into
** z (32 bytes), with ".0" after a whole number so it reads as a real, as
** SQLite prints one; returns z. */
static const char *dyngShortestReal(double r, char *z) {
  for (int nDigit = 15; nDigit <= 17; nDigit++) {
    snprintf(z, 32, "%.*g", nDigit, r);
    if (strtod(z, NULL) == r) break;
  }
  if (!strpbrk(z, ".eEn")) strcat(z, ".0");
  return z;
}

/* Describes a value for an error message; the result is from sqlite3_mprintf. */
static char *dyngDescribeValue(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
  case SQLITE_NULL:
    return sqlite3_mprintf("NULL");
  case SQLITE_INTEGER:
    return sqlite3_mprintf("%lld", sqlite3_value_int64(v));
  case SQLITE_FLOAT: {
    char zVal[32];
    return sqlite3_mprintf("%s", dyngShortestReal(sqlite3_value_double(v), zVal));
  }
  case SQLITE_TEXT:
    return sqlite3_mprintf("text '%.40s'", (const char *)sqlite3_value_text(v));
  default:
    return sqlite3_mprintf("a blob of %d byte%s", sqlite3_value_bytes(v),
                           sqlite3_value_bytes(v) == 1 ? "" : "s");
  }
}

/* Reads one edge from apVal (src, dst, then the weights) into *piSrc,
** *piDst and aW.  On an unusable value returns SQLITE_ERROR with a message
** naming table, column, rowid and value. */
static int dyngReadEdge(const DyngGraph *pG, sqlite3_value **apVal, sqlite3_int64 iRowid,
                        sqlite3_int64 *piSrc, sqlite3_int64 *piDst, double *aW, char **pzErr) {
  sqlite3_value *pBad = NULL;
  const char *zBad = NULL;
  if (sqlite3_value_type(apVal[0]) != SQLITE_INTEGER) {
    zBad = pG->zSrc, pBad = apVal[0];
  } else if (sqlite3_value_type(apVal[1]) != SQLITE_INTEGER) {
    zBad = pG->zDst, pBad = apVal[1];
  }
  if (zBad) {
    char *zVal = dyngDescribeValue(pBad);
    *pzErr = sqlite3_mprintf("dyng: %s.%s must be an integer node id (rowid %lld has %s)",
                             pG->zEdges, zBad, iRowid, zVal ? zVal : "?");
    sqlite3_free(zVal);
    return SQLITE_ERROR;
  }
  *piSrc = sqlite3_value_int64(apVal[0]);
  *piDst = sqlite3_value_int64(apVal[1]);
  for (int k = 0; k < pG->nWeight; k++) {
    sqlite3_value *pW = apVal[2 + k];
    int t = sqlite3_value_type(pW);
    double w = sqlite3_value_double(pW);
    if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !dyng_weight_ok(w)) {
      /* The triggers' rule (ext/capture.c dyngAppendChecks), for rows
      ** written past them: before the graph existed, or by hand. */
      if ((t == SQLITE_INTEGER || t == SQLITE_FLOAT) && w > DYNG_MAX_WEIGHT && !isinf(w)) {
        /* SQLite's printf would round 1.0000000000000001e+298 to 1.0e+298. */
        char zVal[32];
        dyngShortestReal(w, zVal);
        *pzErr = sqlite3_mprintf("dyng: %s.%s must be at most 1e298 so that path lengths stay finite "
                                 "(rowid %lld has %s)",
                                 pG->zEdges, pG->azWeight[k], iRowid, zVal);
        return SQLITE_ERROR;
      }
      char *zVal = dyngDescribeValue(pW);
      *pzErr = sqlite3_mprintf("dyng: %s.%s must be a finite number >= 0 (rowid %lld has %s)",
                               pG->zEdges, pG->azWeight[k], iRowid, zVal ? zVal : "?");
      sqlite3_free(zVal);
      return SQLITE_ERROR;
    }
    aW[k] = w;
  }
  return SQLITE_OK;
}

/* The list `, "a", "b", ...` of the weight columns, or `, w0, w1, ...` of
** the log's when zPrefix is given. */
static char *dyngWeightList(const DyngGraph *pG, const char *zPrefix) {
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  for (int k = 0; k < pG->nWeight; k++) {
    if (zPrefix) sqlite3_str_appendf(pStr, ", %s%d", zPrefix, k);
    else sqlite3_str_appendf(pStr, ", \"%w\"", pG->azWeight[k]);
  }
  return dyngStrFinish(pStr);
}

/* Engine code erc of a load or a batch of pG as an SQLite code and *pzErr,
** a message already there kept. */
static int dyngEngineFailure(DyngGraph *pG, int erc, char **pzErr) {
  return dyngEngineFail(pG, erc, NULL, "dyng", DYNG_ERR_KEEP, pzErr, NULL);
}

/* Past the connection's max_graph_mb, a graph of nBytes (pG's mirror, or the
** one being loaded for it) is refused: SQLITE_ERROR with *pzErr saying so. */
static int dyngCheckBudgetBytes(DyngGraph *pG, size_t nBytes, char **pzErr) {
  sqlite3_int64 nLimit = pG->pConn->nMaxGraphBytes;
  if (nLimit <= 0 || nBytes <= (size_t)nLimit) return SQLITE_OK;
  sqlite3_free(*pzErr);
  *pzErr = sqlite3_mprintf("dyng: graph '%s' needs %.1f MiB or more, over this connection's "
                           "max_graph_mb budget of %.1f MiB (dyng_config('max_graph_mb', 0) "
                           "lifts it)",
                           pG->zName, (double)nBytes / (1 << 20), (double)nLimit / (1 << 20));
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* The same for pGraph, which no loader holds. */
static int dyngCheckGraphBudget(DyngGraph *pG, const dyng_graph *pGraph, char **pzErr) {
  return pG->pConn->nMaxGraphBytes > 0 ? dyngCheckBudgetBytes(pG, dyng_graph_bytes(pGraph), pzErr) : SQLITE_OK;
}

/* The backend preference that applies to pG: its backend= option, else the
** connection's. */
static int dyngGraphPref(const DyngGraph *pG) {
  return pG->eBackendPref >= 0 ? pG->eBackendPref : pG->pConn->eBackendPref;
}

/* ---- full load ---------------------------------------------------------- */

/* A full load in progress: the graph being built and the loader feeding it. */
typedef struct DyngLoad {
  DyngGraph *pG;
  dyng_graph *pGraph;   /* the graph being built */
  dyng_loader *pLoader;
  int erc;              /* first engine error */
  int bOverBudget;      /* stopped: past max_graph_mb */
  sqlite3_int64 nDone;  /* rows handed over */
  sqlite3_int64 nAbout; /* rows expected at most (dyngLoadPrepare) */
  DyngProgress progress;
} DyngLoad;

/*
** dyng__load(rowid, src, dst, w0, ...): hands one row of the edge table to
** the load in progress.  A load runs "SELECT count(dyng__load(rowid, src,
** dst, ...)) FROM edges", so the values reach the loader straight from the
** virtual machine, with no C API call per column.  Outside a load (and so
** for any other caller) it is an error.
*/
static void dyngLoadFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  DyngConn *pConn = sqlite3_user_data(ctx);
  DyngLoad *pLoad = pConn->pLoad;
  if (!pLoad || argc != 3 + pLoad->pG->nWeight) {
    sqlite3_result_error(ctx, "dyng__load() is internal to dyng", -1);
    return;
  }
  sqlite3_int64 iRowid = sqlite3_value_int64(argv[0]), iSrc, iDst;
  double aW[DYNG_MAX_WEIGHTS];
  char *zErr = NULL;
  int rc = dyngReadEdge(pLoad->pG, argv + 1, iRowid, &iSrc, &iDst, aW, &zErr);
  if (rc != SQLITE_OK) {
    dyngFuncError(ctx, rc, zErr);
    return;
  }
  int erc = dyng_loader_add(pLoad->pLoader, iRowid, iSrc, iDst, aW);
  if ((++pLoad->nDone & 0xffff) == 0) {
    dyngProgressTick(&pLoad->progress, pLoad->nDone, pLoad->nAbout);
    /* The graph is the loader's until it finishes: its size as of the
    ** last chunk it loaded. */
    if (erc == DYNG_OK &&
        (rc = dyngCheckBudgetBytes(pLoad->pG, dyng_loader_graph_bytes(pLoad->pLoader), &zErr)) != SQLITE_OK) {
      pLoad->bOverBudget = 1;
      dyngFuncError(ctx, rc, zErr);
      return;
    }
  }
  if (erc != DYNG_OK) {
    pLoad->erc = erc;
    rc = dyngEngineFail(pLoad->pG, erc, NULL, "dyng", 0, &zErr, NULL);
    dyngFuncError(ctx, rc, zErr);
  }
}

/* Before a load other than CREATE's: follows a rename of the edge table and
** checks that it is still an ordinary table with the graph's columns and
** its capture; then reads what kind of log it has. */
static int dyngLoadCheck(DyngGraph *pG, int bCreate, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  int rc;
  if (!bCreate) {
    /* The edge table may have been renamed, or its columns; it may have
    ** been dropped, or dropped and created again without the capture. */
    if ((rc = dyngResolveEdgeTable(pG)) != SQLITE_OK) {
      *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
      return rc;
    }
    /* A schema edited by hand may name a view or a virtual table (another
    ** graph, the graph itself) as the edge table. */
    rc = dyngCheckEdgeKind(db, pG, pzErr);
    if (rc == SQLITE_OK) rc = dyngCheckColumns(db, pG, 0, pzErr);
    if (rc == SQLITE_OK) rc = dyngCheckCapture(db, pG, pzErr);
    if (rc != SQLITE_OK) {
      /* Every query fails the same way until the table is right again. */
      pG->bStale = 1;
      return rc;
    }
  }
  if ((rc = dyngLogKind(pG)) != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  return SQLITE_OK;
}

/* Where a load starts in the log and the database, read before the rows. */
typedef struct DyngLoadPos {
  sqlite3_int64 iSeq;           /* the log's last entry */
  sqlite3_int64 iDataVersion, iSchemaVersion, nChanges;
  sqlite3_int64 iNonce;         /* the nonce of entry iSeq (with bAnchor) */
  int bAnchor;                  /* iNonce was read */
  int bTentative;               /* rows may still be rolled back */
  int bAnchored;                /* the log up to iSeq is what the rows hold */
} DyngLoadPos;

/* Reads the log position before the rows: a change committed in between
** is then applied again by the next sync, which is harmless (each log
** entry sets its rowid's final state). */
static int dyngLoadPosition(DyngGraph *pG, int bCreate, DyngLoadPos *p, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  memset(p, 0, sizeof *p);
  /* CREATE's own statement is the only pending write when no transaction
  ** is open; if it fails, the graph goes with it. */
  p->bTentative = bCreate ? !sqlite3_get_autocommit(db) : dyngInUndoableState(db);
  /* Between statements the rows are those of the log up to iSeq; inside a
  ** writing statement the row being written may not be logged yet. */
  p->bAnchored = p->bTentative && pG->bLogNonce && (bCreate || !dyngWriteRunning(db));
  int rc = dyngLogMax(pG, &p->iSeq, pzErr);
  if (rc == SQLITE_OK && p->bAnchored && p->iSeq > 0)
    rc = dyngLogNonce(pG, p->iSeq, &p->iNonce, &p->bAnchor, pzErr);
  if (rc == SQLITE_OK) rc = dyngDataVersion(pG, &p->iDataVersion);
  if (rc == SQLITE_OK) rc = dyngSchemaVersion(pG, &p->iSchemaVersion);
  if (rc != SQLITE_OK) {
    if (!*pzErr) *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  p->nChanges = sqlite3_total_changes(db);
  return SQLITE_OK;
}

/* The fewest bytes a row of the edge table takes in its database file: a
** cell pointer, the payload size, the rowid and a record header of three
** columns whose values (0 and 1) live in the header alone. */
#define DYNG_MIN_ROW_BYTES 7

/* Prepares "SELECT count(dyng__load(rowid, src, dst, w...)) FROM edges"
** into *ppStmt, and into *pnRow a bound on its rows that costs no scan:
** the span of its rowids (max - min + 1), and no more rows than the
** database file could hold.  Sparse rowids (two rows, 1 and 100000000)
** make the span useless; the file's size does not. */
static int dyngLoadPrepare(DyngGraph *pG, sqlite3_stmt **ppStmt, sqlite3_int64 *pnRow, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  /* Each of max() and min() alone is one seek to an end of the b-tree;
  ** "max(rowid) - min(rowid)" in one SELECT would scan the whole table. */
  char *zCount = sqlite3_mprintf("SELECT min((SELECT max(rowid) FROM \"%w\".\"%w\") - "
                                 "(SELECT min(rowid) FROM \"%w\".\"%w\") + 1, "
                                 "(SELECT page_count FROM pragma_page_count(%Q)) * "
                                 "(SELECT page_size FROM pragma_page_size(%Q)) / %d + 1)",
                                 pG->zDb, pG->zEdges, pG->zDb, pG->zEdges, pG->zDb, pG->zDb,
                                 DYNG_MIN_ROW_BYTES);
  if (!zCount) return SQLITE_NOMEM;
  int rc = dyngQueryInt(db, zCount, pnRow);
  sqlite3_free(zCount);
  if (rc == SQLITE_OK) {
    char *zW = dyngWeightList(pG, NULL);
    char *zSql = zW ? sqlite3_mprintf("SELECT count(dyng__load(rowid, \"%w\", \"%w\"%s)) "
                                      "FROM \"%w\".\"%w\"",
                                      pG->zSrc, pG->zDst, zW, pG->zDb, pG->zEdges)
                    : NULL;
    sqlite3_free(zW);
    if (!zSql) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, zSql, -1, ppStmt, NULL);
    sqlite3_free(zSql);
  }
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read edge table '%s': %s", pG->zName,
                             pG->zEdges, sqlite3_errmsg(db));
  }
  return rc;
}

/* Runs pStmt, which feeds every row through dyng__load() to a loader
** building pGraph (nRow: rows expected).  *pbOverBudget: it stopped past
** max_graph_mb. */
static int dyngLoadRows(DyngGraph *pG, sqlite3_stmt *pStmt, dyng_graph *pGraph, sqlite3_int64 nRow,
                        int *pbOverBudget, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  dyng_loader *pLoader = NULL;
  int rc = SQLITE_OK;
  /* The bound is the row count when rowids are dense; room beyond 64M
  ** edges grows as they come. */
  int erc = DYNG_OK;
  if (nRow > 0 && pG->pConn->nMaxGraphBytes <= 0)
    erc = dyng_graph_reserve(pGraph, (size_t)(nRow < 64 * 1024 * 1024 ? nRow : 64 * 1024 * 1024));
  /* Rows are loaded in chunks (see engine/loader.h), fed by dyng__load(). */
  if (erc == DYNG_OK) erc = dyng_loader_new(&pLoader, pGraph);
  if (erc == DYNG_OK) {
    DyngLoad load;
    memset(&load, 0, sizeof load);
    load.pG = pG;
    load.pGraph = pGraph;
    load.pLoader = pLoader;
    load.nAbout = nRow;
    char *zWhat = sqlite3_mprintf("loading graph '%s'", pG->zName);
    dyngProgressStart(&load.progress, pG->pConn, zWhat ? zWhat : "loading a graph", "rows");
    struct DyngLoad *pOuter = pG->pConn->pLoad;
    pG->pConn->pLoad = &load;
    rc = sqlite3_step(pStmt);
    pG->pConn->pLoad = pOuter;
    dyngProgressEnd(&load.progress, load.nDone, load.nDone,
                    rc == SQLITE_ROW ? NULL : rc == SQLITE_INTERRUPT ? "interrupted" : "failed");
    sqlite3_free(zWhat);
    if (rc == SQLITE_ROW) {
      erc = dyng_loader_finish(pLoader);
      rc = erc == DYNG_OK ? dyngCheckGraphBudget(pG, pGraph, pzErr) : SQLITE_OK;
      *pbOverBudget = rc != SQLITE_OK;
    } else {
      *pbOverBudget = load.bOverBudget;
      erc = load.erc;
      if (erc == DYNG_OK) {
        if (rc == SQLITE_DONE) rc = SQLITE_ERROR;
        *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
      }
    }
  }
  dyng_loader_free(pLoader);
  if (erc != DYNG_OK) {
    sqlite3_free(*pzErr);
    *pzErr = NULL;
    rc = dyngEngineFailure(pG, erc, pzErr);
  }
  return rc;
}

/* Gives the loaded pGraph (taken over, also on failure) a mirror on the
** backend the graph's preference chooses (engine/mirror.h): a device that
** cannot take it leaves it on the CPU, unless CUDA was required. */
static int dyngLoadAttach(DyngGraph *pG, dyng_graph *pGraph, dyng_mirror **ppMirror, char **pzErr) {
  const dyng_backend *pBe = NULL;
  char zWhy[sizeof((dyng_mirror *)0)->why];
  int rc = dyngBackendChoose(dyngGraphPref(pG), &pBe, zWhy, (int)sizeof zWhy);
  if (rc != SQLITE_OK) {
    dyng_graph_free(pGraph);
    sqlite3_free(*pzErr);
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, zWhy);
    return rc;
  }
  char zGpu[sizeof((dyng_mirror *)0)->err];
  int erc = dyng_mirror_new(&pG->pConn->pool, pGraph, pBe, zWhy, dyngBackendRequired(dyngGraphPref(pG)),
                            pG->zName, ppMirror, zGpu, sizeof zGpu);
  if (erc == DYNG_EBACKEND && zGpu[0]) {
    sqlite3_free(*pzErr);
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, zGpu);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return erc == DYNG_OK ? SQLITE_OK : dyngEngineFailure(pG, erc, pzErr);
}

/* Puts pMirror, loaded from position *p, in place of pG's old mirror. */
static void dyngLoadInstall(DyngGraph *pG, dyng_mirror *pMirror, const DyngLoadPos *p, double t0) {
  dyngGraphDropMirror(pG);
  pG->pMirror = pMirror;
  pG->pGraph = pMirror->graph;
  pG->bReattach = 0;
  pG->iLogSeq = p->iSeq;
  pG->iDataVersion = p->iDataVersion;
  pG->iSchemaVersion = p->iSchemaVersion;
  pG->nChanges = p->nChanges;
  pG->bTentative = p->bTentative;
  /* A mirror loaded while rows could still be rolled back has no undo
  ** records for them.  With nonces it holds while log entry iSeq keeps
  ** its nonce: a rollback of anything the load saw removes that entry
  ** (rollbacks remove the newest entries), and once the transaction is
  ** over an entry still there is committed.  Records start from there.
  ** An older log cannot tell, nor can a load inside a writing statement:
  ** such a mirror is trusted only while nothing moves. */
  pG->bUndoValid = !p->bTentative || p->bAnchored;
  pG->bBaseUnsure = p->bTentative && p->bAnchor;
  pG->iBaseNonce = p->iNonce;
  dyngUndoClear(pG);
  pG->bStale = 0;
  pG->loadMs = dyngNowMs() - t0;
  pG->loadTime = pG->syncTime = dyngEpochMs();
  pG->nLoad++;
}

/* One try of dyngLoadMirror: check, position, rows, backend, install. */
static int dyngLoadMirrorOnce(DyngGraph *pG, int bCreate, char **pzErr) {
  double t0 = dyngNowMs();
  DyngLoadPos pos;
  sqlite3_stmt *pStmt = NULL;
  sqlite3_int64 nRow = 0;
  int rc = dyngLoadCheck(pG, bCreate, pzErr);
  if (rc == SQLITE_OK) rc = dyngLoadPosition(pG, bCreate, &pos, pzErr);
  if (rc == SQLITE_OK) rc = dyngLoadPrepare(pG, &pStmt, &nRow, pzErr);
  if (rc != SQLITE_OK) return rc;
  dyng_graph *pGraph = NULL;
  int bOverBudget = 0;
  int erc = dyng_graph_new(&pGraph, pG->nWeight, pG->bDirected);
  rc = erc == DYNG_OK ? dyngLoadRows(pG, pStmt, pGraph, nRow, &bOverBudget, pzErr)
                      : dyngEngineFailure(pG, erc, pzErr);
  sqlite3_finalize(pStmt);
  /* A graph past max_graph_mb keeps no mirror: the old one is out of date
  ** (the table changed, or it would not be loaded again) and as large. */
  if (bOverBudget && pG->pGraph) dyngGraphDropMirror(pG);
  if (rc != SQLITE_OK) {
    dyng_graph_free(pGraph);
    return rc;
  }
  dyng_mirror *pMirror = NULL;
  rc = dyngLoadAttach(pG, pGraph, &pMirror, pzErr);
  if (rc == SQLITE_OK) dyngLoadInstall(pG, pMirror, &pos, t0);
  return rc;
}

/* dyngGraphLoad, before dyngNomemSaysAll's rule for its message.  A load
** that fails leaves the old mirror, if any, marked stale: the table no
** longer matches it (a row written past the capture, say, that the load
** refused), so every query loads again, and fails the same way, until the
** table is right. */
static int dyngLoadMirror(DyngGraph *pG, int bCreate, char **pzErr) {
  int rc = dyngLoadMirrorOnce(pG, bCreate, pzErr);
  if (rc != SQLITE_OK && pG->pGraph) pG->bStale = 1;
  return rc;
}

/* ---- applying the log --------------------------------------------------- */

/* An edge's state: present or not, with its values. */
typedef struct DyngEdgeState {
  int bPresent;
  sqlite3_int64 iSrc, iDst;
  double aW[DYNG_MAX_WEIGHTS];
} DyngEdgeState;

/* The mirror's current state of edge iEdge. */
static void dyngMirrorEdge(const DyngGraph *pG, sqlite3_int64 iEdge, DyngEdgeState *p) {
  uint32_t slot;
  memset(p, 0, sizeof *p);
  if (dyng_graph_edge(pG->pGraph, iEdge, &slot) != DYNG_OK) return;
  p->bPresent = 1;
  p->iSrc = dyng_graph_node_id(pG->pGraph, dyng_graph_edge_src(pG->pGraph, slot));
  p->iDst = dyng_graph_node_id(pG->pGraph, dyng_graph_edge_dst(pG->pGraph, slot));
  for (int k = 0; k < pG->nWeight; k++) p->aW[k] = dyng_graph_edge_weight(pG->pGraph, slot, k);
}

/* Makes room for one more undo record; 0 when the list is at its limit or
** memory is short (the undo list then becomes invalid). */
static int dyngUndoReserve(DyngGraph *pG) {
  if (pG->nUndo < pG->nUndoAlloc) return 1;
  if (pG->nUndo >= DYNG_UNDO_MAX) return 0;
  int n = pG->nUndoAlloc ? 2 * pG->nUndoAlloc : 64;
  if (n > DYNG_UNDO_MAX) n = DYNG_UNDO_MAX;
  int nW = 2 * (pG->nWeight ? pG->nWeight : 1);
  struct DyngUndo *a = sqlite3_realloc64(pG->aUndo, (sqlite3_uint64)n * sizeof *a);
  if (!a) return 0;
  pG->aUndo = a;
  double *w = sqlite3_realloc64(pG->aUndoW, (sqlite3_uint64)n * nW * sizeof *w);
  if (!w) return 0;
  pG->aUndoW = w;
  pG->nUndoAlloc = n;
  return 1;
}

/* The weights of undo record i: the entry's, then the old edge's. */
static double *dyngUndoW(DyngGraph *pG, int i) {
  return pG->aUndoW + (size_t)i * 2 * (size_t)(pG->nWeight ? pG->nWeight : 1);
}

/* One log row, read from columns seq, op, edge, src, dst, w0, ..., nonce.
** Op 1 inserts (or replaces) the edge, -1 deletes it, and 2, logged for
** rows a REPLACE may remove (sql/replace.sql), changes nothing: the AFTER
** trigger turns it into a -1 for those that went.  A log of an older
** version has no nonces and no markers, but op 0 for those rows, which
** says "take this rowid as the table has it now". */
typedef struct DyngLogRow {
  sqlite3_int64 iSeq, iEdge, iSrc, iDst, iNonce;
  int op;
  double aW[DYNG_MAX_WEIGHTS];
} DyngLogRow;

/* Reads one log row from apVal (seq, op, edge, src, dst, the weights, then
** the nonce when the log has them) into *r. */
static int dyngReadLogRow(DyngGraph *pG, sqlite3_value **apVal, DyngLogRow *r, char **pzErr) {
  int op = sqlite3_value_int(apVal[1]);
  /* The triggers write -1, 1 and 2 (older ones -1, 0 and 1) only. */
  if (sqlite3_value_type(apVal[1]) != SQLITE_INTEGER || op < -1 || op > 2 ||
      op == (pG->bLogNonce ? 0 : 2)) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': change log entry %lld has no valid op", pG->zName,
                             sqlite3_value_int64(apVal[0]));
    return SQLITE_CORRUPT;
  }
  r->iSeq = sqlite3_value_int64(apVal[0]);
  r->op = op;
  r->iEdge = sqlite3_value_int64(apVal[2]);
  r->iNonce = pG->bLogNonce ? sqlite3_value_int64(apVal[5 + pG->nWeight]) : 0;
  r->iSrc = r->iDst = 0;
  memset(r->aW, 0, sizeof r->aW);
  if (r->op != 1) return SQLITE_OK;
  return dyngReadEdge(pG, apVal + 3, r->iEdge, &r->iSrc, &r->iDst, r->aW, pzErr);
}

/* The number of columns of a log row: seq, op, edge, src, dst, the weights
** and, in a log that has them, the nonce. */
static int dyngLogColumns(const DyngGraph *pG) { return 5 + pG->nWeight + (pG->bLogNonce ? 1 : 0); }

/* Reads the current row of pStmt, which selects a log row's columns. */
static int dyngReadLogStmt(DyngGraph *pG, sqlite3_stmt *pStmt, DyngLogRow *r, char **pzErr) {
  sqlite3_value *apVal[6 + DYNG_MAX_WEIGHTS];
  for (int i = 0; i < dyngLogColumns(pG); i++) apVal[i] = sqlite3_column_value(pStmt, i);
  return dyngReadLogRow(pG, apVal, r, pzErr);
}

/* 1 when undo record i was made from log row r. */
static int dyngUndoMatches(DyngGraph *pG, int i, const DyngLogRow *r) {
  const struct DyngUndo *u = &pG->aUndo[i];
  if (u->iSeq != r->iSeq || u->op != r->op || u->iEdge != r->iEdge || u->iNonce != r->iNonce)
    return 0;
  if (r->op != 1) return 1;
  if (u->iSrc != r->iSrc || u->iDst != r->iDst) return 0;
  const double *w = dyngUndoW(pG, i);
  for (int k = 0; k < pG->nWeight; k++)
    if (w[k] != r->aW[k]) return 0;
  return 1;
}

/* Applies a batch to the mirror and tells the backend; on failure the
** mirror is marked stale (part of the batch may be in it). */
static int dyngApplyBatch(DyngGraph *pG, dyng_batch *pBatch, dyng_apply_stats *pStats,
                          char **pzErr) {
  /* The mirror applies it to the host graph, the backend, the kept trees
  ** and counts (engine/mirror.c); its clocks add to the graph's. */
  dyng_mirror *m = pG->pMirror;
  double applyMs = m->apply_ms, backendMs = m->backend_ms, keptMs = m->kept_ms;
  int erc = dyng_mirror_apply(m, pBatch, pStats);
  pG->applyMs += m->apply_ms - applyMs;
  pG->backendMs += m->backend_ms - backendMs;
  pG->keptMs += m->kept_ms - keptMs;
  if (erc != DYNG_OK) {
    pG->bStale = 1;
    return dyngEngineFail(pG, erc, NULL, "dyng", erc == DYNG_EBACKEND ? 0 : DYNG_ERR_KEEP, pzErr, NULL);
  }
  if (dyngCheckGraphBudget(pG, pG->pGraph, pzErr) != SQLITE_OK) {
    /* The batch made the mirror too large: it goes, and the next query
    ** loads it again (and fails the same way until edges are deleted or
    ** the budget raised). */
    dyngGraphDropMirror(pG);
    pG->bStale = 1;
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  pG->nInserted += (sqlite3_int64)pStats->inserted;
  pG->nDeleted += (sqlite3_int64)pStats->deleted;
  return SQLITE_OK;
}

/* Reverts undo records iFrom .. nUndo-1: each edge goes back to its state
** before the oldest reverted record that touched it. */
static int dyngUndoRevert(DyngGraph *pG, int iFrom, char **pzErr) {
  if (iFrom >= pG->nUndo) return SQLITE_OK;
  dyng_batch *pBatch = dyng_batch_new(pG->nWeight);
  if (!pBatch) return SQLITE_NOMEM;
  int erc = DYNG_OK, nW = pG->nWeight;
  /* Newest first: a batch keeps the last operation per rowid, so the
  ** oldest record's "before" wins. */
  for (int i = pG->nUndo - 1; i >= iFrom && erc == DYNG_OK; i--) {
    const struct DyngUndo *u = &pG->aUndo[i];
    if (u->op == 2) continue; /* a marker changed nothing */
    if (u->bHadOld)
      erc = dyng_batch_insert(pBatch, u->iEdge, u->iOldSrc, u->iOldDst, dyngUndoW(pG, i) + nW);
    else
      erc = dyng_batch_delete(pBatch, u->iEdge);
  }
  dyng_apply_stats st = {0, 0, 0};
  int rc = erc == DYNG_OK ? dyngApplyBatch(pG, pBatch, &st, pzErr) : dyngEngineFailure(pG, erc, pzErr);
  dyng_batch_free(pBatch);
  if (rc != SQLITE_OK) return rc;
  pG->nUndo = iFrom;
  pG->iLogSeq = iFrom ? pG->aUndo[iFrom - 1].iSeq : pG->iUndoBase;
  pG->nBatch++;
  pG->nRevert++;
  return SQLITE_OK;
}

/* For an op-0 log row: reads edge r->iEdge from the edge table through
** *ppStmt (prepared on first use) and sets *pbPresent, r->iSrc, r->iDst
** and r->aW to what the table has now. */
static int dyngReadTableEdge(DyngGraph *pG, sqlite3_stmt **ppStmt, DyngLogRow *r, int *pbPresent,
                             char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  int rc = SQLITE_OK;
  if (!*ppStmt) {
    char *zW = dyngWeightList(pG, NULL);
    char *zSql = zW ? sqlite3_mprintf("SELECT \"%w\", \"%w\"%s FROM \"%w\".\"%w\" WHERE rowid = ?1",
                                      pG->zSrc, pG->zDst, zW, pG->zDb, pG->zEdges)
                    : NULL;
    sqlite3_free(zW);
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, ppStmt, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc != SQLITE_OK) {
      if (rc != SQLITE_NOMEM)
        *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read edge table '%s': %s", pG->zName,
                                 pG->zEdges, sqlite3_errmsg(db));
      return rc;
    }
  }
  sqlite3_bind_int64(*ppStmt, 1, r->iEdge);
  *pbPresent = 0;
  if (sqlite3_step(*ppStmt) == SQLITE_ROW) {
    sqlite3_value *apVal[2 + DYNG_MAX_WEIGHTS];
    for (int i = 0; i < 2 + pG->nWeight; i++) apVal[i] = sqlite3_column_value(*ppStmt, i);
    rc = dyngReadEdge(pG, apVal, r->iEdge, &r->iSrc, &r->iDst, r->aW, pzErr);
    *pbPresent = 1;
  }
  int rc2 = sqlite3_reset(*ppStmt);
  if (rc == SQLITE_OK && rc2 != SQLITE_OK) {
    rc = rc2;
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read edge table '%s': %s", pG->zName,
                             pG->zEdges, sqlite3_errmsg(db));
  }
  return rc;
}

/* A batch read from the log whose room the graph keeps for the next sync
** is at most this large: a batch of 50,000 changes writes about 8 MB,
** and memory the process has not written to yet costs a page fault per
** 4 KiB (several microseconds each in a virtual machine) once more. */
#define DYNG_BATCH_KEEP ((size_t)32 << 20)

/* An empty batch for reading the log into: the one the graph kept, or a
** new one.  NULL when out of memory. */
static dyng_batch *dyngTakeBatch(DyngGraph *pG) {
  dyng_batch *pBatch = pG->pBatch;
  pG->pBatch = NULL;
  if (!pBatch) return dyng_batch_new(pG->nWeight);
  dyng_batch_clear(pBatch);
  return pBatch;
}

/* Done with pBatch: the graph keeps it for the next sync while it has a
** mirror, the batch is not too large and the mirror with it stays within
** max_graph_mb; else it is freed. */
static void dyngKeepBatch(DyngGraph *pG, dyng_batch *pBatch) {
  size_t nBytes = dyng_batch_bytes(pBatch);
  sqlite3_int64 nLimit = pG->pConn->nMaxGraphBytes;
  if (pG->pMirror && !pG->pBatch && nBytes <= DYNG_BATCH_KEEP &&
      (nLimit <= 0 || dyngGraphHostBytes(pG) + nBytes <= (size_t)nLimit)) {
    pG->pBatch = pBatch;
    return;
  }
  dyng_batch_free(pBatch);
}

/* A read of log rows into one batch (dyngApplyRows), which dyng__log()
** advances by a row at a time; with bRecord it keeps an undo record per row
** and each edge's state after the rows so far. */
typedef struct DyngTake {
  DyngGraph *pG;
  dyng_batch *pBatch;
  int bRecord;
  sqlite3_stmt *pRead;    /* reads an edge's row, for op-0 entries */
  dyng_idmap *pSeen;      /* rowid -> index in aSeen, for this batch */
  DyngEdgeState *aSeen;   /* each edge's state after the rows so far */
  int nSeen, nSeenAlloc;
  int erc;                /* the engine's failure; DYNG_OK: none */
  int bCorrupt;           /* an entry the triggers would not write */
  int bRebase;            /* out of undo records: the base moves */
  sqlite3_int64 iLast, iLastNonce; /* the last entry read */
  sqlite3_int64 nRow;     /* entries read */
  char *zErr;             /* the message of a failure */
} DyngTake;

/* Keeps the undo record of log row r: what it did and the state of its
** edge before it. */
static void dyngTakeUndo(DyngTake *t, const DyngLogRow *r) {
  DyngGraph *pG = t->pG;
  /* The edge's state before this row: as earlier rows of this batch left
  ** it, else as in the mirror. */
  uint32_t idx;
  DyngEdgeState before;
  if (dyng_idmap_get(t->pSeen, r->iEdge, &idx) == DYNG_OK) before = t->aSeen[idx];
  else dyngMirrorEdge(pG, r->iEdge, &before);
  if (!dyngUndoReserve(pG)) {
    if (pG->bLogNonce) t->bRebase = 1;
    else pG->bUndoValid = 0;
    return;
  }
  struct DyngUndo *u = &pG->aUndo[pG->nUndo];
  double *w = dyngUndoW(pG, pG->nUndo);
  u->iSeq = r->iSeq;
  u->iNonce = r->iNonce;
  u->op = r->op;
  u->iEdge = r->iEdge;
  u->iSrc = r->iSrc;
  u->iDst = r->iDst;
  u->bHadOld = before.bPresent;
  u->iOldSrc = before.iSrc;
  u->iOldDst = before.iDst;
  for (int k = 0; k < pG->nWeight; k++) {
    w[k] = r->op == 1 ? r->aW[k] : 0.0; /* what identifies the log row */
    w[pG->nWeight + k] = before.aW[k];
  }
  pG->nUndo++;
}

/* Notes that edge r->iEdge is now present (bPresent) with r's values, or
** absent, for the undo records of later rows. */
static int dyngTakeSeen(DyngTake *t, const DyngLogRow *r, int bPresent) {
  uint32_t idx;
  DyngEdgeState after;
  memset(&after, 0, sizeof after);
  after.bPresent = bPresent;
  after.iSrc = r->iSrc;
  after.iDst = r->iDst;
  memcpy(after.aW, r->aW, sizeof after.aW);
  if (dyng_idmap_get(t->pSeen, r->iEdge, &idx) == DYNG_OK) {
    t->aSeen[idx] = after;
    return DYNG_OK;
  }
  if (t->nSeen == t->nSeenAlloc) {
    int n = t->nSeenAlloc ? 2 * t->nSeenAlloc : 64;
    DyngEdgeState *a = sqlite3_realloc64(t->aSeen, (sqlite3_uint64)n * sizeof *a);
    if (!a) return DYNG_ENOMEM;
    t->aSeen = a;
    t->nSeenAlloc = n;
  }
  t->aSeen[t->nSeen] = after;
  return dyng_idmap_put(t->pSeen, r->iEdge, (uint32_t)t->nSeen++);
}

/* Takes one log row (apVal: its columns) into the batch. */
static int dyngTakeRow(DyngTake *t, sqlite3_value **apVal) {
  DyngGraph *pG = t->pG;
  DyngLogRow r;
  int rc = dyngReadLogRow(pG, apVal, &r, &t->zErr);
  if (rc == SQLITE_OK && r.iSeq != t->iLast + 1) rc = SQLITE_CORRUPT;
  if (rc != SQLITE_OK) {
    if (rc != SQLITE_NOMEM) t->bCorrupt = 1;
    return rc;
  }
  t->nRow++;
  /* The entry's effect: the edge present with r's values, or absent. */
  int bPresent = r.op == 1;
  if (r.op == 0) {
    if ((rc = dyngReadTableEdge(pG, &t->pRead, &r, &bPresent, &t->zErr)) != SQLITE_OK) return rc;
    if (t->bRecord) pG->bUndoValid = 0;
  }
  if (t->bRecord && pG->bUndoValid && !t->bRebase) dyngTakeUndo(t, &r);
  t->iLast = r.iSeq;
  t->iLastNonce = r.iNonce;
  if (r.op == 2) return SQLITE_OK; /* a marker: nothing changes */
  if (t->bRecord && pG->bUndoValid && !t->bRebase) t->erc = dyngTakeSeen(t, &r, bPresent);
  if (t->erc == DYNG_OK)
    t->erc = bPresent ? dyng_batch_insert(t->pBatch, r.iEdge, r.iSrc, r.iDst, r.aW)
                      : dyng_batch_delete(t->pBatch, r.iEdge);
  return t->erc == DYNG_OK ? SQLITE_OK : SQLITE_ERROR;
}

/*
** dyng__log(seq, op, edge, src, dst, w0, ..., nonce): takes one row of the
** change log into the read in progress (dyngApplyRows), which runs "SELECT
** 1 FROM <log> WHERE seq > ?1 AND dyng__log(...) ORDER BY seq": the values
** reach it straight from the virtual machine, with no C API call per
** column (each of which takes the connection's mutex).  It returns 0, so
** the statement yields no rows.  Outside a read (and so for any other
** caller) it is an error.
*/
static void dyngLogFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  DyngConn *pConn = sqlite3_user_data(ctx);
  DyngTake *t = pConn->pTake;
  if (!t || argc != dyngLogColumns(t->pG)) {
    sqlite3_result_error(ctx, "dyng__log() is internal to dyng", -1);
    return;
  }
  int rc = dyngTakeRow(t, argv);
  if (rc == SQLITE_OK) sqlite3_result_int(ctx, 0);
  else if (rc == SQLITE_NOMEM || t->erc == DYNG_ENOMEM) sqlite3_result_error_nomem(ctx);
  /* SQLITE_ERROR whatever the reason: the caller reads t->bCorrupt, and a
  ** gap in the log (SQLITE_CORRUPT here) must not fail the statement as a
  ** corrupt database. */
  else dyngFuncError(ctx, SQLITE_ERROR, sqlite3_mprintf("%s", t->zErr ? t->zErr : "dyng: cannot read the change log"));
}

/* Prepares, unless kept already, the statement over the log rows after ?1
** in order: with bTake pG->pLogTake, which feeds them to dyng__log(), else
** pG->pLogRead, which selects their columns. */
static int dyngLogRowsStmt(DyngGraph *pG, int bTake, char **pzErr) {
  sqlite3_stmt **ppStmt = bTake ? &pG->pLogTake : &pG->pLogRead;
  if (*ppStmt) return SQLITE_OK;
  sqlite3 *db = pG->pConn->db;
  char *zW = dyngWeightList(pG, "w");
  char *zCols = zW ? sqlite3_mprintf("seq, op, edge, src, dst%s%s", zW, pG->bLogNonce ? ", nonce" : "")
                   : NULL;
  char *zSql = !zCols ? NULL
               : bTake ? sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" WHERE seq > ?1 AND "
                                         "dyng__log(%s) ORDER BY seq",
                                         pG->zDb, pG->zLog, zCols)
                       : sqlite3_mprintf("SELECT %s FROM \"%w\".\"%w\" WHERE seq > ?1 ORDER BY seq",
                                         zCols, pG->zDb, pG->zLog);
  sqlite3_free(zW);
  sqlite3_free(zCols);
  int rc = zSql ? sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT, ppStmt, NULL)
                : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read its change log '%s': %s", pG->zName,
                             pG->zLog, sqlite3_errmsg(db));
  return rc;
}

/* Applies the log rows after iAfter as one batch.  With bRecord, an undo
** record is kept per row.  Past DYNG_UNDO_MAX records (or short of memory)
** a log with nonces moves the records' base to the batch's end, unsure
** (see dyngLoadMirror); an older log's records become invalid, and so do
** they when an op-0 entry of an older log is applied (it reads the table as
** it is now, which a rollback may change).  A log that does not continue
** right after iAfter (trimmed) or that someone edited (an entry the
** triggers would not write: an unknown op, values the table refuses, a gap
** in the sequence) sets *pbReload and leaves the mirror alone: the table is
** the truth, and the caller loads it again. */
static int dyngApplyRows(DyngGraph *pG, sqlite3_int64 iAfter, int bRecord, int *pbReload,
                         char **pzErr) {
  int rc = dyngLogRowsStmt(pG, 1, pzErr);
  if (rc != SQLITE_OK) return rc;
  sqlite3_stmt *pStmt = pG->pLogTake;
  DyngTake t;
  memset(&t, 0, sizeof t);
  t.pG = pG;
  t.bRecord = bRecord;
  t.iLast = iAfter;
  if (!(t.pBatch = dyngTakeBatch(pG))) return SQLITE_NOMEM;
  double t0 = dyngNowMs();
  if (bRecord && !(t.pSeen = dyng_idmap_new(64))) t.erc = DYNG_ENOMEM;
  if (t.erc == DYNG_OK) {
    DyngTake *pOuter = pG->pConn->pTake;
    pG->pConn->pTake = &t;
    sqlite3_bind_int64(pStmt, 1, iAfter);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    }
    pG->pConn->pTake = pOuter;
    if (rc != SQLITE_DONE && !t.bCorrupt && t.erc == DYNG_OK && !t.zErr)
      t.zErr = sqlite3_mprintf("dyng: graph '%s': reading change log failed: %s", pG->zName,
                               sqlite3_errmsg(pG->pConn->db));
    int rc2 = dyngKeptStmtDone(pG, &pG->pLogTake);
    if (rc == SQLITE_DONE) rc = rc2;
  }
  sqlite3_finalize(t.pRead);
  dyng_idmap_free(t.pSeen);
  sqlite3_free(t.aSeen);
  if (t.bCorrupt) {
    dyngKeepBatch(pG, t.pBatch);
    sqlite3_free(t.zErr);
    *pbReload = 1;
    return SQLITE_OK;
  }
  if (t.erc != DYNG_OK) {
    sqlite3_free(t.zErr);
    t.zErr = NULL;
    rc = dyngEngineFailure(pG, t.erc, &t.zErr);
  }
  *pzErr = t.zErr;
  pG->readMs += dyngNowMs() - t0;
  dyng_apply_stats st = {0, 0, 0};
  if (rc == SQLITE_OK && t.nRow == 0) {
    dyngKeepBatch(pG, t.pBatch);
    return SQLITE_OK;
  }
  if (rc == SQLITE_OK) rc = dyngApplyBatch(pG, t.pBatch, &st, pzErr);
  dyngKeepBatch(pG, t.pBatch);
  if (rc != SQLITE_OK) {
    pG->bStale = 1;
    return rc;
  }
  pG->iLogSeq = t.iLast;
  if (t.bRebase) {
    dyngUndoClear(pG);
    pG->bBaseUnsure = 1;
    pG->iBaseNonce = t.iLastNonce;
  }
  pG->nBatch++;
  return SQLITE_OK;
}

/* Ends a use of the kept log-reading statement: reset for the next sync,
** or finalized when the graph's table is no longer connected. */
static void dyngLogReadDone(DyngGraph *pG) { (void)dyngKeptStmtDone(pG, &pG->pLogRead); }

/* Reads the log after iFrom as long as its rows match the undo records:
** *pi gets how many do, *piAfter the last of them (iFrom: none).  Sets
** *pbReload when the log does not continue right after iFrom, or has an
** entry the triggers would not write. */
static int dyngMatchUndo(DyngGraph *pG, sqlite3_int64 iFrom, int *pi, sqlite3_int64 *piAfter,
                         int *pbReload, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  int rc = dyngLogRowsStmt(pG, 0, pzErr);
  if (rc != SQLITE_OK) return rc;
  sqlite3_stmt *pStmt = pG->pLogRead;
  sqlite3_bind_int64(pStmt, 1, iFrom);
  rc = sqlite3_step(pStmt);
  if (rc == SQLITE_ROW && sqlite3_column_int64(pStmt, 0) != iFrom + 1) {
    *pbReload = 1;
    dyngLogReadDone(pG);
    return SQLITE_OK;
  }
  int i = 0;
  while (i < pG->nUndo && rc == SQLITE_ROW) {
    DyngLogRow r;
    int rcRow = dyngReadLogStmt(pG, pStmt, &r, pzErr);
    if (rcRow != SQLITE_OK) {
      if (rcRow == SQLITE_NOMEM) {
        rc = rcRow;
        break;
      }
      /* An entry the triggers would not write: load the table again. */
      sqlite3_free(*pzErr);
      *pzErr = NULL;
      *pbReload = 1;
      dyngLogReadDone(pG);
      return SQLITE_OK;
    }
    if (!dyngUndoMatches(pG, i, &r)) break;
    *piAfter = r.iSeq;
    i++;
    rc = sqlite3_step(pStmt);
  }
  *pi = i;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  else if (rc != SQLITE_NOMEM && !*pzErr)
    *pzErr = sqlite3_mprintf("dyng: graph '%s': reading change log failed: %s", pG->zName,
                             sqlite3_errmsg(db));
  dyngLogReadDone(pG);
  return rc;
}

/*
** Reads the log after iFrom and brings the mirror to it: first the rows
** that match the undo records are skipped (records that do not match are
** reverted), then the rest is applied.  *pbReload is set when the log does
** not start right after iFrom (trimmed or edited), or when an unsure base
** lost its log entry (rolled back): only a reload helps.  bEnded says that
** the transaction of the last sync is over: the entries that still match
** are then committed (a rolled-back one would be gone, and a later one in
** its place has another nonce), and their records go.
*/
static int dyngCatchUp(DyngGraph *pG, int bUndoable, int bEnded, int *pbReload, char **pzErr) {
  sqlite3_int64 iFrom = pG->bTentative ? pG->iUndoBase : pG->iLogSeq;
  int rc = SQLITE_OK;
  if (pG->bTentative && pG->bBaseUnsure) {
    sqlite3_int64 iNonce = 0;
    int bFound = 0;
    rc = dyngLogNonce(pG, pG->iUndoBase, &iNonce, &bFound, pzErr);
    if (rc != SQLITE_OK) return rc;
    if (!bFound || iNonce != pG->iBaseNonce) {
      *pbReload = 1;
      return SQLITE_OK;
    }
  }
  /* Skip what still matches; revert the rest of the undo records. */
  sqlite3_int64 iAfter = iFrom;
  if (pG->bTentative && pG->nUndo > 0) {
    int i = 0;
    rc = dyngMatchUndo(pG, iFrom, &i, &iAfter, pbReload, pzErr);
    if (rc != SQLITE_OK || *pbReload) return rc;
    if ((rc = dyngUndoRevert(pG, i, pzErr)) != SQLITE_OK) return rc;
  }
  /* Records are kept only while the result can still be rolled back. */
  if (!bUndoable || bEnded) {
    dyngUndoClear(pG);
    pG->bBaseUnsure = 0;
  } else if (!pG->bTentative) {
    pG->iUndoBase = pG->iLogSeq;
  }
  return dyngApplyRows(pG, iAfter, bUndoable, pbReload, pzErr);
}

/* ---- the sync ------------------------------------------------------------- */

/* dyngGraphSync, before dyngNomemSaysAll's rule for its message. */
static int dyngSyncMirror(DyngGraph *pG, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  if (!pG->pGraph || pG->bStale || pG->bReattach) return dyngLoadMirror(pG, 0, pzErr);
  sqlite3_int64 iDataVersion = 0, iSchemaVersion = 0, iMax = 0;
  int rc = dyngDataVersion(pG, &iDataVersion);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  /* A DETACH and ATTACH of the file (another connection may have written
  ** it in between) starts its data version anew, and makes SQLite prepare
  ** the kept statement that reads it again: the version then says nothing. */
  int nPrepared = pG->pDataVersion
                      ? sqlite3_stmt_status(pG->pDataVersion, SQLITE_STMTSTATUS_REPREPARE, 0)
                      : 0;
  if (nPrepared != pG->nDataVersionPrepared) {
    pG->nDataVersionPrepared = nPrepared;
    pG->iDataVersion = -1;
  }
  sqlite3_int64 nChanges = sqlite3_total_changes(db);
  int bQuiet = iDataVersion == pG->iDataVersion && nChanges == pG->nChanges;
  /* DDL of an open transaction moves neither counter (the data version
  ** moves at commit): inside one, the schema cookie is read too. */
  int bInTxn = !sqlite3_get_autocommit(db);
  if (!pG->bTentative && bQuiet && !bInTxn) return SQLITE_OK;
  rc = dyngSchemaVersion(pG, &iSchemaVersion);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  if (iSchemaVersion != pG->iSchemaVersion) return dyngLoadMirror(pG, 0, pzErr);
  if (!pG->bTentative && bQuiet) return SQLITE_OK;
  rc = dyngLogMax(pG, &iMax, pzErr);
  if (rc != SQLITE_OK) return rc;
  int bUndoable = dyngInUndoableState(db);

  if (pG->bTentative && bQuiet && (iMax == pG->iLogSeq || (iMax < pG->iLogSeq && !pG->bLogNonce))) {
    /* No write and no commit since the last sync: only a ROLLBACK or
    ** ROLLBACK TO can have changed the log, and those remove its tail.
    ** With this version's capture they also turn back into markers the
    ** deletes that the statements they undo made of earlier entries
    ** (sql/replace.sql), so a shorter log is compared with the records
    ** below instead. */
    if (iMax < pG->iLogSeq) {
      if (!pG->bUndoValid || iMax < pG->iUndoBase) return dyngLoadMirror(pG, 0, pzErr);
      int i = pG->nUndo;
      while (i > 0 && pG->aUndo[i - 1].iSeq > iMax) i--;
      rc = dyngUndoRevert(pG, i, pzErr);
      if (rc != SQLITE_OK) return rc;
    }
    pG->bTentative = bUndoable;
    if (!bUndoable) {
      /* Over without a commit, and the base's entry is still there: the
      ** base was committed before. */
      dyngUndoClear(pG);
      pG->bBaseUnsure = 0;
    }
    pG->syncTime = dyngEpochMs();
    return SQLITE_OK;
  }
  if (pG->bTentative && !pG->bUndoValid) return dyngLoadMirror(pG, 0, pzErr);
  /* A tentative mirror whose data version moved: the transaction of its
  ** last sync is over (a commit moves it; another connection's commit is
  ** seen only in a later transaction).  A version of -1 was forgotten when
  ** the graph's table was connected again (a schema reset, which can come
  ** inside the transaction): that says nothing of the transaction. */
  int bEnded = pG->bTentative && pG->bLogNonce && pG->iDataVersion >= 0 &&
               iDataVersion != pG->iDataVersion;
  if (!pG->bTentative && iMax == pG->iLogSeq) {
    /* Changes elsewhere (another table, another graph's log). */
    pG->iDataVersion = iDataVersion;
    pG->nChanges = nChanges;
    pG->bTentative = bUndoable;
    pG->bUndoValid = 1;
    dyngUndoClear(pG);
    return SQLITE_OK;
  }
  if (!pG->bTentative && iMax < pG->iLogSeq) return dyngLoadMirror(pG, 0, pzErr);

  int bReload = 0;
  if (!pG->bTentative) pG->bUndoValid = 1;
  rc = dyngCatchUp(pG, bUndoable, bEnded, &bReload, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (bReload) return dyngLoadMirror(pG, 0, pzErr);
  pG->iDataVersion = iDataVersion;
  pG->nChanges = nChanges;
  pG->bTentative = bUndoable;
  if (!bUndoable) dyngUndoClear(pG);
  pG->syncTime = dyngEpochMs();
  return SQLITE_OK;
}

/* Out of memory is reported as such, without the message composed on the
** way: that comes from sqlite3_errmsg, which knows nothing of dyng's own
** failed allocations, and would mislead. */
static int dyngNomemSaysAll(int rc, char **pzErr) {
  if (rc == SQLITE_NOMEM) {
    sqlite3_free(*pzErr);
    *pzErr = NULL;
  }
  return rc;
}

/* A graph reached again while its mirror is being loaded or brought up to
** date: a statement of the load or the sync read something that asks for
** the graph itself (a database whose schema was edited to make a graph
** read its own table, or its change log a view that queries it).  That is
** an error, not a recursion that would end in a stack overflow. */
static int dyngReentered(DyngGraph *pG, char **pzErr) {
  *pzErr = sqlite3_mprintf("dyng: graph '%s' is used while it is being loaded or brought up "
                           "to date (does its edge table or change log read the graph itself?)",
                           pG->zName);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

int dyngGraphLoad(DyngGraph *pG, int bCreate, char **pzErr) {
  if (pG->bBusy) return dyngReentered(pG, pzErr);
  pG->bBusy = 1;
  int rc = dyngLoadMirror(pG, bCreate, pzErr);
  pG->bBusy = 0;
  return dyngNomemSaysAll(rc, pzErr);
}

int dyngGraphSync(DyngGraph *pG, char **pzErr) {
  if (pG->bBusy) return dyngReentered(pG, pzErr);
  pG->bBusy = 1;
  int rc = dyngSyncMirror(pG, pzErr);
  pG->bBusy = 0;
  return dyngNomemSaysAll(rc, pzErr);
}

/* ---- finding a graph for a function ------------------------------------ */

/* Makes SQLite connect the virtual table zDb.zName (xConnect registers it in
** pConn) by preparing a statement that names it.  Returns the prepare's
** result code; *pzErr gets SQLite's message on failure. */
static int dyngProbeTable(DyngConn *pConn, const char *zDb, const char *zName, char **pzErr) {
  char *zSql = zDb ? sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" LIMIT 0", zDb, zName)
                   : sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 0", zName);
  sqlite3_stmt *pStmt = NULL;
  if (!zSql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(pConn->db));
  sqlite3_finalize(pStmt);
  return rc;
}

int dyngGraphOpen(DyngConn *pConn, const char *zFunc, const char *zArg, int bSync,
                  DyngGraph **ppG, char **pzErr) {
  char *zDb = NULL;
  const char *zName = zArg;
  const char *zDot = strchr(zArg, '.');
  int rc = SQLITE_OK;
  *ppG = NULL;
  if (zDot) {
    zDb = sqlite3_mprintf("%.*s", (int)(zDot - zArg), zArg);
    if (!zDb) return SQLITE_NOMEM;
    zName = zDot + 1;
  }
  dyngGraphsForgetGone(pConn);
  DyngGraph *pG = dyngGraphFind(pConn, zDb, zName);
  if (!pG || pG->nRef == 0 || !dyngGraphInItsDb(pG)) {
    /* Not connected in this schema generation (first use after opening the
    ** file, or after a schema change): let SQLite connect it, which also
    ** checks that the table still exists. */
    char *zProbeErr = NULL;
    rc = dyngProbeTable(pConn, zDb, zName, &zProbeErr);
    if (rc != SQLITE_OK) {
      if (rc == SQLITE_NOMEM) {
        sqlite3_free(zProbeErr);
        goto done;
      }
      *pzErr = sqlite3_mprintf("%s: no graph named '%s' (%s)", zFunc, zArg,
                               zProbeErr ? zProbeErr : "unknown table");
      sqlite3_free(zProbeErr);
      rc = SQLITE_ERROR;
      goto done;
    }
    pG = dyngGraphFind(pConn, zDb, zName);
    if (!pG || pG->nRef == 0 || !dyngGraphInItsDb(pG)) {
      *pzErr = sqlite3_mprintf("%s: '%s' is not a dyng graph", zFunc, zArg);
      rc = SQLITE_ERROR;
      goto done;
    }
  }
  rc = bSync ? dyngGraphSync(pG, pzErr) : SQLITE_OK;
  if (rc == SQLITE_OK) *ppG = pG;
done:
  sqlite3_free(zDb);
  return rc;
}

int dyngPendingEntries(DyngGraph *pG, sqlite3_int64 *pnPending) {
  sqlite3_int64 iMax = 0;
  char *zErr = NULL;
  int rc = dyngLogMax(pG, &iMax, &zErr);
  sqlite3_free(zErr);
  *pnPending = rc == SQLITE_OK && iMax > pG->iLogSeq ? iMax - pG->iLogSeq : 0;
  return rc;
}

int dyngRegisterSyncFunctions(sqlite3 *db, DyngConn *pConn) {
  int rc = sqlite3_create_function_v2(db, "dyng__load", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                      dyngLoadFunc, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "dyng__log", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                    dyngLogFunc, NULL, NULL, NULL);
  return rc;
}
