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
** How it works: xCreate checks the options and the edge table, installs the
** change capture of sql/capture.sql (a log table and three triggers) and
** loads the graph, refusing rows dyng cannot use.  xConnect (reopening the
** file, or after a schema change) only records the definition; the graph
** loads on first use.  Before every answer dyngGraphSync brings the mirror
** up to date from the log: unseen entries are applied as one batch, and a
** full reload is the fallback whenever the mirror may hold changes that a
** ROLLBACK removed.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"
#include "engine/loader.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

static const char zCaptureSql[] =
#include "sql/capture.sql.h"
    ;

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

/* ---- definition and options ---------------------------------------- */

/* Finalizes the statements a graph keeps while its table is connected.
** They must be gone before SQLite closes the connection, which it checks
** only after disconnecting every virtual table. */
static void dyngGraphReleaseStmts(DyngGraph *pG) {
  sqlite3_finalize(pG->pDataVersion);
  sqlite3_finalize(pG->pSchemaVersion);
  sqlite3_finalize(pG->pLogMax);
  pG->pDataVersion = pG->pSchemaVersion = pG->pLogMax = NULL;
}

void dyngGraphFree(DyngGraph *pG) {
  if (!pG) return;
  dyngGraphReleaseStmts(pG);
  if (pG->pBackend && pG->pBackendState) pG->pBackend->graph_detach(pG->pBackendState);
  dyng_graph_free(pG->pGraph);
  sqlite3_free(pG->zDb);
  sqlite3_free(pG->zName);
  sqlite3_free(pG->zEdges);
  sqlite3_free(pG->zSrc);
  sqlite3_free(pG->zDst);
  for (int i = 0; i < pG->nWeight; i++) sqlite3_free(pG->azWeight[i]);
  sqlite3_free(pG->zLog);
  sqlite3_free(pG);
}

/* Drops the mirror (the definition stays); the next sync reloads. */
static void dyngGraphUnload(DyngGraph *pG) {
  if (pG->pBackend && pG->pBackendState) pG->pBackend->graph_detach(pG->pBackendState);
  pG->pBackendState = NULL;
  dyng_graph_free(pG->pGraph);
  pG->pGraph = NULL;
}

/* Copies an option value, removing matching quotes ('x', "x", [x], `x`)
** and undoubling quotes inside. */
static char *dyngUnquote(const char *z, int n) {
  while (n > 0 && isspace((unsigned char)z[0])) z++, n--;
  while (n > 0 && isspace((unsigned char)z[n - 1])) n--;
  char q = n >= 2 ? z[0] : 0;
  char qEnd = q == '[' ? ']' : q;
  if ((q == '\'' || q == '"' || q == '`' || q == '[') && z[n - 1] == qEnd) {
    char *zOut = sqlite3_malloc(n);
    if (!zOut) return NULL;
    int j = 0;
    for (int i = 1; i < n - 1; i++) {
      zOut[j++] = z[i];
      if (q != '[' && z[i] == q && i + 1 < n - 1 && z[i + 1] == q) i++;
    }
    zOut[j] = 0;
    return zOut;
  }
  return sqlite3_mprintf("%.*s", n, z);
}

/* Parses a boolean option value. */
static int dyngParseBool(const char *z, int *pb) {
  static const char *azTrue[] = {"1", "true", "yes", "on"};
  static const char *azFalse[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (sqlite3_stricmp(z, azTrue[i]) == 0) return (*pb = 1), 1;
    if (sqlite3_stricmp(z, azFalse[i]) == 0) return (*pb = 0), 1;
  }
  return 0;
}

/* Builds a DyngGraph from CREATE VIRTUAL TABLE arguments:
** argv[1] schema, argv[2] table name, argv[3..] "key=value" options.
** On error returns NULL with *pzErr set. */
static DyngGraph *dyngGraphParse(DyngConn *pConn, int argc, const char *const *argv,
                                 char **pzErr) {
  static const char zKnown[] = "edges, src, dst, weights, directed";
  DyngGraph *pG = sqlite3_malloc(sizeof *pG);
  int seen[5] = {0, 0, 0, 0, 0};
  if (!pG) return NULL;
  memset(pG, 0, sizeof *pG);
  pG->pConn = pConn;
  pG->bDirected = 1;
  pG->iDataVersion = -1;
  pG->zDb = sqlite3_mprintf("%s", argv[1]);
  pG->zName = sqlite3_mprintf("%s", argv[2]);
  pG->zLog = sqlite3_mprintf("%s_log", argv[2]);
  if (!pG->zDb || !pG->zName || !pG->zLog) goto nomem;

  for (int i = 3; i < argc; i++) {
    const char *zArg = argv[i];
    const char *zEq = strchr(zArg, '=');
    if (!zEq) {
      *pzErr = sqlite3_mprintf("dyng: option '%s' of graph '%s' is not key=value (known keys: %s)",
                               zArg, pG->zName, zKnown);
      goto fail;
    }
    char *zKey = dyngUnquote(zArg, (int)(zEq - zArg));
    char *zVal = dyngUnquote(zEq + 1, (int)strlen(zEq + 1));
    if (!zKey || !zVal) {
      sqlite3_free(zKey);
      sqlite3_free(zVal);
      goto nomem;
    }
    int iKey = sqlite3_stricmp(zKey, "edges") == 0     ? 0
               : sqlite3_stricmp(zKey, "src") == 0     ? 1
               : sqlite3_stricmp(zKey, "dst") == 0     ? 2
               : sqlite3_stricmp(zKey, "weights") == 0 ? 3
               : sqlite3_stricmp(zKey, "directed") == 0 ? 4
                                                        : -1;
    if (iKey < 0) {
      *pzErr = sqlite3_mprintf("dyng: unknown option '%s' for graph '%s' (known: %s)", zKey,
                               pG->zName, zKnown);
    } else if (seen[iKey]++) {
      *pzErr = sqlite3_mprintf("dyng: option '%s' given twice for graph '%s'", zKey, pG->zName);
    } else if (iKey != 3 && zVal[0] == 0) {
      *pzErr = sqlite3_mprintf("dyng: option '%s' of graph '%s' is empty", zKey, pG->zName);
    } else if (iKey == 0) {
      pG->zEdges = zVal, zVal = NULL;
    } else if (iKey == 1) {
      pG->zSrc = zVal, zVal = NULL;
    } else if (iKey == 2) {
      pG->zDst = zVal, zVal = NULL;
    } else if (iKey == 4) {
      if (!dyngParseBool(zVal, &pG->bDirected))
        *pzErr = sqlite3_mprintf("dyng: option directed='%s' of graph '%s' must be 0 or 1 "
                                 "(or false/true, no/yes, off/on)",
                                 zVal, pG->zName);
    } else {
      /* weights: a comma-separated list of column names. */
      const char *z = zVal;
      while (*z && !*pzErr) {
        const char *zEnd = strchr(z, ',');
        int n = zEnd ? (int)(zEnd - z) : (int)strlen(z);
        char *zW = dyngUnquote(z, n);
        if (!zW) break;
        if (zW[0] == 0) {
          *pzErr = sqlite3_mprintf("dyng: empty name in weights='%s' of graph '%s'", zVal,
                                   pG->zName);
          sqlite3_free(zW);
        } else if (pG->nWeight == DYNG_MAX_WEIGHTS) {
          int nGiven = 1;
          for (const char *y = zVal; *y; y++) nGiven += *y == ',';
          *pzErr = sqlite3_mprintf("dyng: graph '%s' has %d weight columns; at most %d are allowed",
                                   pG->zName, nGiven, DYNG_MAX_WEIGHTS);
          sqlite3_free(zW);
        } else {
          for (int k = 0; k < pG->nWeight; k++)
            if (sqlite3_stricmp(pG->azWeight[k], zW) == 0 && !*pzErr)
              *pzErr = sqlite3_mprintf("dyng: weight column '%s' listed twice for graph '%s'",
                                       zW, pG->zName);
          pG->azWeight[pG->nWeight++] = zW;
        }
        z = zEnd ? zEnd + 1 : z + n;
      }
      if (!*pzErr && pG->nWeight == 0 && zVal[0] != 0) goto nomem_kv;
    }
    sqlite3_free(zKey);
    sqlite3_free(zVal);
    if (*pzErr) goto fail;
    continue;
  nomem_kv:
    sqlite3_free(zKey);
    sqlite3_free(zVal);
    goto nomem;
  }
  if (!pG->zEdges) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s' needs edges=TABLE naming its edge table",
                             pG->zName);
    goto fail;
  }
  if (!pG->zSrc && !(pG->zSrc = sqlite3_mprintf("src"))) goto nomem;
  if (!pG->zDst && !(pG->zDst = sqlite3_mprintf("dst"))) goto nomem;
  return pG;

nomem:
  if (!*pzErr) *pzErr = sqlite3_mprintf("dyng: out of memory");
fail:
  dyngGraphFree(pG);
  return NULL;
}

/* ---- the edge table ------------------------------------------------- */

/* Checks the edge table: it exists in the graph's schema as an ordinary
** rowid table and has every named column (whose names are replaced by the
** table's own spelling). */
static int dyngCheckEdgeTable(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc;
  char *zSql = sqlite3_mprintf(
      "SELECT type, sql FROM \"%w\".sqlite_master WHERE name = %Q COLLATE NOCASE "
      "AND type IN ('table','view')",
      pG->zDb, pG->zEdges);
  if (!zSql) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: cannot read the schema of '%s': %s", pG->zDb,
                             sqlite3_errmsg(db));
    return rc;
  }
  if (sqlite3_step(pStmt) != SQLITE_ROW) {
    rc = sqlite3_finalize(pStmt);
    if (rc == SQLITE_OK) {
      *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' does not exist in schema '%s'",
                               pG->zEdges, pG->zName, pG->zDb);
      rc = SQLITE_ERROR;
    }
    return rc;
  }
  const char *zType = (const char *)sqlite3_column_text(pStmt, 0);
  const char *zDef = (const char *)sqlite3_column_text(pStmt, 1);
  if (zType && strcmp(zType, "view") == 0) {
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' is a view; dyng needs a table",
                             pG->zEdges, pG->zName);
    rc = SQLITE_ERROR;
  } else if (zDef && sqlite3_strnicmp(zDef, "CREATE VIRTUAL", 14) == 0) {
    *pzErr = sqlite3_mprintf(
        "dyng: edge table '%s' of graph '%s' is a virtual table; dyng needs an ordinary table",
        pG->zEdges, pG->zName);
    rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) return rc;

  /* Rowids identify edges. */
  zSql = sqlite3_mprintf("SELECT rowid FROM \"%w\".\"%w\" LIMIT 0", pG->zDb, pG->zEdges);
  if (!zSql) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf(
        "dyng: edge table '%s' of graph '%s' has no rowid (WITHOUT ROWID?); dyng identifies "
        "edges by rowid",
        pG->zEdges, pG->zName);
    return SQLITE_ERROR;
  }

  /* Every named column exists; adopt the table's spelling. */
  zSql = sqlite3_mprintf("PRAGMA \"%w\".table_info(\"%w\")", pG->zDb, pG->zEdges);
  if (!zSql) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  char **apCol[2 + DYNG_MAX_WEIGHTS];
  int nCol = 0, found[2 + DYNG_MAX_WEIGHTS] = {0};
  apCol[nCol++] = &pG->zSrc;
  apCol[nCol++] = &pG->zDst;
  for (int k = 0; k < pG->nWeight; k++) apCol[nCol++] = &pG->azWeight[k];
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zCol = (const char *)sqlite3_column_text(pStmt, 1);
    for (int i = 0; zCol && i < nCol; i++) {
      if (found[i] || sqlite3_stricmp(*apCol[i], zCol) != 0) continue;
      char *z = sqlite3_mprintf("%s", zCol);
      if (!z) {
        sqlite3_finalize(pStmt);
        return SQLITE_NOMEM;
      }
      sqlite3_free(*apCol[i]);
      *apCol[i] = z;
      found[i] = 1;
    }
  }
  rc = sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) return rc;
  for (int i = 0; i < nCol; i++) {
    if (found[i]) continue;
    const char *zRole = i == 0 ? "src" : i == 1 ? "dst" : "weights";
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' has no column '%s' (option %s of graph '%s')",
                             pG->zEdges, *apCol[i], zRole, pG->zName);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Substitutes {{key}} placeholders of zTpl; NULL when out of memory. */
static char *dyngTemplate(const char *zTpl, int n, const char *const *azKey,
                          const char *const *azVal) {
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  const char *z = zTpl;
  while (*z) {
    const char *zOpen = strstr(z, "{{");
    if (!zOpen) {
      sqlite3_str_appendall(pStr, z);
      break;
    }
    sqlite3_str_append(pStr, z, (int)(zOpen - z));
    const char *zClose = strstr(zOpen, "}}");
    int i = 0;
    for (; zClose && i < n; i++) {
      if ((int)strlen(azKey[i]) == (int)(zClose - zOpen - 2) &&
          memcmp(azKey[i], zOpen + 2, zClose - zOpen - 2) == 0)
        break;
    }
    if (!zClose || i == n) { /* not a placeholder: copy the braces */
      sqlite3_str_append(pStr, "{{", 2);
      z = zOpen + 2;
      continue;
    }
    sqlite3_str_appendall(pStr, azVal[i]);
    z = zClose + 2;
  }
  return dyngStrFinish(pStr);
}

/* The validation statements for one column of NEW rows, appended to pStr.
** bId: the column holds node ids (integers); else a weight. */
static void dyngAppendChecks(sqlite3_str *pStr, const DyngGraph *pG, const char *zCol, int bId) {
  if (bId) {
    sqlite3_str_appendf(pStr,
                        "  SELECT RAISE(ABORT, 'dyng: %q.%q must be an integer node id (got NULL, "
                        "text, blob or a real number)') WHERE typeof(NEW.\"%w\") <> 'integer';\n",
                        pG->zEdges, zCol, zCol);
    return;
  }
  sqlite3_str_appendf(pStr,
                      "  SELECT RAISE(ABORT, 'dyng: %q.%q must be a finite number >= 0 (got NULL "
                      "or NaN)') WHERE NEW.\"%w\" IS NULL;\n",
                      pG->zEdges, zCol, zCol);
  sqlite3_str_appendf(pStr,
                      "  SELECT RAISE(ABORT, 'dyng: %q.%q must be a finite number >= 0 (got text "
                      "or a blob)') WHERE typeof(NEW.\"%w\") NOT IN ('integer','real','null');\n",
                      pG->zEdges, zCol, zCol);
  sqlite3_str_appendf(pStr,
                      "  SELECT RAISE(ABORT, 'dyng: %q.%q must be a finite number >= 0 (got a "
                      "negative number)') WHERE NEW.\"%w\" < 0;\n",
                      pG->zEdges, zCol, zCol);
  sqlite3_str_appendf(pStr,
                      "  SELECT RAISE(ABORT, 'dyng: %q.%q must be a finite number >= 0 (got "
                      "infinity)') WHERE NEW.\"%w\" >= 9e999;\n",
                      pG->zEdges, zCol, zCol);
}

/* Creates the log table and the triggers of sql/capture.sql. */
static int dyngInstallCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  sqlite3_str *pLogW = sqlite3_str_new(db), *pWNames = sqlite3_str_new(db),
              *pNewW = sqlite3_str_new(db), *pChecks = sqlite3_str_new(db),
              *pChanged = sqlite3_str_new(db);
  dyngAppendChecks(pChecks, pG, pG->zSrc, 1);
  dyngAppendChecks(pChecks, pG, pG->zDst, 1);
  sqlite3_str_appendf(pChanged, "OLD.rowid IS NOT NEW.rowid OR OLD.\"%w\" IS NOT NEW.\"%w\" OR "
                                "OLD.\"%w\" IS NOT NEW.\"%w\"",
                      pG->zSrc, pG->zSrc, pG->zDst, pG->zDst);
  for (int k = 0; k < pG->nWeight; k++) {
    const char *zW = pG->azWeight[k];
    sqlite3_str_appendf(pLogW, ", w%d REAL", k);
    sqlite3_str_appendf(pWNames, ", w%d", k);
    sqlite3_str_appendf(pNewW, ", NEW.\"%w\"", zW);
    dyngAppendChecks(pChecks, pG, zW, 0);
    sqlite3_str_appendf(pChanged, " OR OLD.\"%w\" IS NOT NEW.\"%w\"", zW, zW);
  }
  char *azVal[12];
  const char *azKey[12] = {"schema", "log",     "edges",   "trg_ins",     "trg_upd",     "trg_del",
                           "src",    "dst",     "log_weights", "log_wnames", "new_weights", "checks"};
  azVal[0] = sqlite3_mprintf("\"%w\"", pG->zDb);
  azVal[1] = sqlite3_mprintf("\"%w\"", pG->zLog);
  azVal[2] = sqlite3_mprintf("\"%w\"", pG->zEdges);
  azVal[3] = sqlite3_mprintf("\"%w_ins\"", pG->zLog);
  azVal[4] = sqlite3_mprintf("\"%w_upd\"", pG->zLog);
  azVal[5] = sqlite3_mprintf("\"%w_del\"", pG->zLog);
  azVal[6] = sqlite3_mprintf("\"%w\"", pG->zSrc);
  azVal[7] = sqlite3_mprintf("\"%w\"", pG->zDst);
  azVal[8] = dyngStrFinish(pLogW);
  azVal[9] = dyngStrFinish(pWNames);
  azVal[10] = dyngStrFinish(pNewW);
  azVal[11] = dyngStrFinish(pChecks);
  char *zChanged = dyngStrFinish(pChanged);
  int rc = SQLITE_OK;
  for (int i = 0; i < 12; i++)
    if (!azVal[i]) rc = SQLITE_NOMEM;
  if (!zChanged) rc = SQLITE_NOMEM;
  char *zSql = NULL;
  if (rc == SQLITE_OK) {
    const char *azK[13], *azV[13];
    for (int i = 0; i < 12; i++) azK[i] = azKey[i], azV[i] = azVal[i];
    azK[12] = "changed";
    azV[12] = zChanged;
    zSql = dyngTemplate(zCaptureSql, 13, azK, azV);
    if (!zSql) rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK) {
    char *zErr = NULL;
    rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
    if (rc != SQLITE_OK)
      *pzErr = sqlite3_mprintf("dyng: cannot install change capture for graph '%s': %s",
                               pG->zName, zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
  }
  sqlite3_free(zSql);
  sqlite3_free(zChanged);
  for (int i = 0; i < 12; i++) sqlite3_free(azVal[i]);
  return rc;
}

/* Removes the triggers and the log table (IF EXISTS: the edge table may be
** gone, and its triggers with it). */
static int dyngRemoveCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  char *zSql = sqlite3_mprintf("DROP TRIGGER IF EXISTS \"%w\".\"%w_ins\";"
                               "DROP TRIGGER IF EXISTS \"%w\".\"%w_upd\";"
                               "DROP TRIGGER IF EXISTS \"%w\".\"%w_del\";"
                               "DROP TABLE IF EXISTS \"%w\".\"%w\";",
                               pG->zDb, pG->zLog, pG->zDb, pG->zLog, pG->zDb, pG->zLog, pG->zDb,
                               pG->zLog);
  if (!zSql) return SQLITE_NOMEM;
  char *zErr = NULL;
  int rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK)
    *pzErr = sqlite3_mprintf("dyng: cannot remove the change capture of graph '%s': %s",
                             pG->zName, zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  return rc;
}

/* ---- loading and syncing -------------------------------------------- */

/* Describes a value for an error message; the result is from sqlite3_mprintf. */
static char *dyngDescribeValue(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
  case SQLITE_NULL:
    return sqlite3_mprintf("NULL");
  case SQLITE_INTEGER:
    return sqlite3_mprintf("%lld", sqlite3_value_int64(v));
  case SQLITE_FLOAT:
    return sqlite3_mprintf("%!.17g", sqlite3_value_double(v));
  case SQLITE_TEXT:
    return sqlite3_mprintf("text '%.40s'", (const char *)sqlite3_value_text(v));
  default:
    return sqlite3_mprintf("a blob of %d bytes", sqlite3_value_bytes(v));
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
    if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(w >= 0.0) || isinf(w)) {
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

/* A full load in progress: the graph being built and the loader feeding it. */
typedef struct DyngLoad {
  DyngGraph *pG;
  dyng_loader *pLoader;
  int erc;              /* first engine error */
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
  if (dyngReadEdge(pLoad->pG, argv + 1, iRowid, &iSrc, &iDst, aW, &zErr) != SQLITE_OK) {
    sqlite3_result_error(ctx, zErr ? zErr : "dyng: out of memory", -1);
    sqlite3_free(zErr);
    return;
  }
  int erc = dyng_loader_add(pLoad->pLoader, iRowid, iSrc, iDst, aW);
  if (erc != DYNG_OK) {
    pLoad->erc = erc;
    if (erc == DYNG_ENOMEM) {
      sqlite3_result_error_nomem(ctx);
    } else {
      char *zMsg = dyngEngineError("dyng", pLoad->pG, erc);
      sqlite3_result_error(ctx, zMsg ? zMsg : "dyng: load failed", -1);
      sqlite3_free(zMsg);
    }
  }
}

/* The list `"a", "b", ...` of the weight columns, prefixed by ", ". */
static char *dyngWeightList(const DyngGraph *pG, const char *zPrefix) {
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  for (int k = 0; k < pG->nWeight; k++) {
    if (zPrefix) sqlite3_str_appendf(pStr, ", %s%d", zPrefix, k);
    else sqlite3_str_appendf(pStr, ", \"%w\"", pG->azWeight[k]);
  }
  return dyngStrFinish(pStr);
}

/* Runs a one-value query; *piVal gets its integer (0 for NULL). */
static int dyngQueryInt(sqlite3 *db, const char *zSql, sqlite3_int64 *piVal) {
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  *piVal = sqlite3_step(pStmt) == SQLITE_ROW ? sqlite3_column_int64(pStmt, 0) : 0;
  return sqlite3_finalize(pStmt);
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
  rc = sqlite3_reset(*ppStmt);
  if (rc != SQLITE_OK || pG->nRef == 0) {
    sqlite3_finalize(*ppStmt);
    *ppStmt = NULL;
  }
  return rc;
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

/* 1 when what this connection sees may still be rolled back: a transaction
** is open, or a statement that writes is running (a graph queried from a
** trigger, say) and may yet fail. */
static int dyngInUndoableState(sqlite3 *db) {
  if (!sqlite3_get_autocommit(db)) return 1;
  for (sqlite3_stmt *p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p))
    if (sqlite3_stmt_busy(p) && !sqlite3_stmt_readonly(p)) return 1;
  return 0;
}

/* Loads the whole edge table into a new mirror, replacing the old one.
** bCreate: called from CREATE VIRTUAL TABLE, whose own statement is the only
** pending write when no transaction is open; if it fails, the graph goes
** with it, so the load counts as committed. */
static int dyngGraphLoad(DyngGraph *pG, int bCreate, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  sqlite3_stmt *pStmt = NULL;
  dyng_graph *pGraph = NULL;
  sqlite3_int64 iSeq = 0, nRow = 0;
  double t0 = dyngNowMs();
  int rc, erc;

  /* Read the log position before the rows: a change committed in between
  ** is then applied again by the next sync, which is harmless (each log
  ** entry sets its rowid's final state). */
  sqlite3_int64 iDataVersion = 0, iSchemaVersion = 0;
  rc = dyngLogMax(pG, &iSeq, pzErr);
  if (rc == SQLITE_OK) rc = dyngDataVersion(pG, &iDataVersion);
  if (rc == SQLITE_OK) rc = dyngSchemaVersion(pG, &iSchemaVersion);
  if (rc != SQLITE_OK) {
    if (!*pzErr)
      *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_int64 nChanges = sqlite3_total_changes(db);

  char *zCount = sqlite3_mprintf("SELECT max(rowid) - min(rowid) + 1 FROM \"%w\".\"%w\"",
                                 pG->zDb, pG->zEdges);
  if (!zCount) return SQLITE_NOMEM;
  rc = dyngQueryInt(db, zCount, &nRow);
  sqlite3_free(zCount);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read edge table '%s': %s", pG->zName,
                             pG->zEdges, sqlite3_errmsg(db));
    return rc;
  }

  char *zW = dyngWeightList(pG, NULL);
  char *zSql = zW ? sqlite3_mprintf("SELECT count(dyng__load(rowid, \"%w\", \"%w\"%s)) "
                                    "FROM \"%w\".\"%w\"",
                                    pG->zSrc, pG->zDst, zW, pG->zDb, pG->zEdges)
                  : NULL;
  sqlite3_free(zW);
  if (!zSql) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read edge table '%s': %s", pG->zName,
                             pG->zEdges, sqlite3_errmsg(db));
    return rc;
  }
  dyng_loader *pLoader = NULL;
  erc = dyng_graph_new(&pGraph, pG->nWeight, pG->bDirected);
  /* max - min + 1 bounds the row count when rowids are dense; do not trust
  ** it beyond a sane size for sparse rowids. */
  if (erc == DYNG_OK && nRow > 0)
    erc = dyng_graph_reserve(pGraph, (size_t)(nRow < 64 * 1024 * 1024 ? nRow : 64 * 1024 * 1024));
  /* Rows are loaded in chunks (see engine/loader.h), fed by dyng__load(). */
  if (erc == DYNG_OK) erc = dyng_loader_new(&pLoader, pGraph);
  if (erc == DYNG_OK) {
    DyngLoad load = {pG, pLoader, DYNG_OK};
    struct DyngLoad *pOuter = pG->pConn->pLoad;
    pG->pConn->pLoad = &load;
    rc = sqlite3_step(pStmt);
    pG->pConn->pLoad = pOuter;
    if (rc == SQLITE_ROW) {
      erc = dyng_loader_finish(pLoader);
      rc = SQLITE_OK;
    } else {
      erc = load.erc;
      if (erc == DYNG_OK) {
        if (rc == SQLITE_DONE) rc = SQLITE_ERROR;
        *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
      }
    }
  }
  dyng_loader_free(pLoader);
  if (erc != DYNG_OK) {
    rc = erc == DYNG_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    sqlite3_free(*pzErr);
    *pzErr = dyngEngineError("dyng", pG, erc);
  }
  sqlite3_finalize(pStmt);
  void *pState = NULL;
  if (rc == SQLITE_OK) {
    dyng_graph_view view;
    dyng_graph_get_view(pGraph, &view);
    erc = pG->pConn->pBackend->graph_attach(pG->pConn->pBackend, &view, &pState);
    if (erc != DYNG_OK) {
      rc = erc == DYNG_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
      *pzErr = dyngEngineError("dyng", pG, erc);
    }
  }
  if (rc != SQLITE_OK) {
    dyng_graph_free(pGraph);
    return rc;
  }
  dyngGraphUnload(pG);
  pG->pGraph = pGraph;
  pG->pBackend = pG->pConn->pBackend;
  pG->pBackendState = pState;
  pG->iLogSeq = iSeq;
  pG->iDataVersion = iDataVersion;
  pG->iSchemaVersion = iSchemaVersion;
  pG->nChanges = nChanges;
  pG->bTentative = bCreate ? !sqlite3_get_autocommit(db) : dyngInUndoableState(db);
  pG->bStale = 0;
  pG->loadMs = dyngNowMs() - t0;
  pG->loadTime = dyngEpochMs();
  pG->nLoad++;
  return SQLITE_OK;
}

/* Applies the log entries after pG->iLogSeq up to iMax as one batch. */
static int dyngGraphApplyLog(DyngGraph *pG, sqlite3_int64 iMax, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  sqlite3_stmt *pStmt = NULL;
  dyng_batch *pBatch = dyng_batch_new(pG->nWeight);
  if (!pBatch) return SQLITE_NOMEM;
  char *zW = dyngWeightList(pG, "w");
  char *zSql = zW ? sqlite3_mprintf("SELECT seq, op, edge, src, dst%s FROM \"%w\".\"%w\" "
                                    "WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
                                    zW, pG->zDb, pG->zLog)
                  : NULL;
  sqlite3_free(zW);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  int erc = DYNG_OK;
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(pStmt, 1, pG->iLogSeq);
    sqlite3_bind_int64(pStmt, 2, iMax);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
      sqlite3_int64 iEdge = sqlite3_column_int64(pStmt, 2), iSrc, iDst;
      if (sqlite3_column_int(pStmt, 1) < 0) {
        erc = dyng_batch_delete(pBatch, iEdge);
      } else {
        double aW[DYNG_MAX_WEIGHTS];
        sqlite3_value *apVal[2 + DYNG_MAX_WEIGHTS];
        for (int i = 0; i < 2 + pG->nWeight; i++) apVal[i] = sqlite3_column_value(pStmt, 3 + i);
        rc = dyngReadEdge(pG, apVal, iEdge, &iSrc, &iDst, aW, pzErr);
        if (rc != SQLITE_OK) break;
        erc = dyng_batch_insert(pBatch, iEdge, iSrc, iDst, aW);
      }
      if (erc != DYNG_OK) break;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    else if (rc != SQLITE_ROW && rc != SQLITE_ERROR && !*pzErr)
      *pzErr = sqlite3_mprintf("dyng: graph '%s': reading change log failed: %s", pG->zName,
                               sqlite3_errmsg(db));
    else if (rc == SQLITE_ROW) rc = SQLITE_OK; /* stopped by an engine error */
  }
  sqlite3_finalize(pStmt);
  dyng_apply_stats st = {0, 0, 0};
  if (rc == SQLITE_OK && erc == DYNG_OK) erc = dyng_graph_apply(pG->pGraph, pBatch, &st);
  if (rc == SQLITE_OK && erc == DYNG_OK) {
    dyng_graph_view view;
    dyng_graph_get_view(pG->pGraph, &view);
    erc = pG->pBackend->graph_update(pG->pBackendState, &view);
  }
  dyng_batch_free(pBatch);
  if (rc == SQLITE_OK && erc != DYNG_OK) {
    rc = erc == DYNG_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    *pzErr = dyngEngineError("dyng", pG, erc);
  }
  if (rc != SQLITE_OK) {
    /* Part of the batch may be in the mirror: reload before the next use. */
    pG->bStale = 1;
    return rc;
  }
  pG->iLogSeq = iMax;
  pG->nBatch++;
  pG->nInserted += (sqlite3_int64)st.inserted;
  pG->nDeleted += (sqlite3_int64)st.deleted;
  return SQLITE_OK;
}

/*
** Brings the mirror up to date with what this connection can SELECT.
**
** A mirror is "clean" when its last sync could not be undone (no
** transaction open, no writing statement running): it then reflects
** committed rows only, up to log entry iLogSeq.  Any later change adds log
** entries after iLogSeq (or, if rolled back, leaves none), so applying the
** entries after iLogSeq is exact.  A "tentative" mirror was synced while
** changes could still be rolled back, and may hold changes that a ROLLBACK
** or ROLLBACK TO has since removed (the next change then reuses their log
** rowids); it is trusted only while neither this connection's change
** counter, the data version nor the log's last entry moved, and is reloaded
** otherwise.  A changed schema cookie (DDL, VACUUM) also reloads.
** "Nothing changed" costs one PRAGMA step and two counter reads.
*/
int dyngGraphSync(DyngGraph *pG, char **pzErr) {
  sqlite3 *db = pG->pConn->db;
  if (!pG->pGraph || pG->bStale) return dyngGraphLoad(pG, 0, pzErr);
  sqlite3_int64 iDataVersion = 0, iSchemaVersion = 0, iMax = 0;
  int rc = dyngDataVersion(pG, &iDataVersion);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_int64 nChanges = sqlite3_total_changes(db);
  if (!pG->bTentative && iDataVersion == pG->iDataVersion && nChanges == pG->nChanges)
    return SQLITE_OK;
  rc = dyngSchemaVersion(pG, &iSchemaVersion);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, sqlite3_errmsg(db));
    return rc;
  }
  if (iSchemaVersion != pG->iSchemaVersion) return dyngGraphLoad(pG, 0, pzErr);
  rc = dyngLogMax(pG, &iMax, pzErr);
  if (rc != SQLITE_OK) return rc;
  int bUndoable = dyngInUndoableState(db);
  if (pG->bTentative) {
    if (iMax == pG->iLogSeq && nChanges == pG->nChanges && iDataVersion == pG->iDataVersion) {
      pG->bTentative = bUndoable;
      return SQLITE_OK;
    }
    return dyngGraphLoad(pG, 0, pzErr);
  }
  if (iMax < pG->iLogSeq) return dyngGraphLoad(pG, 0, pzErr);
  if (iMax > pG->iLogSeq) {
    rc = dyngGraphApplyLog(pG, iMax, pzErr);
    if (rc != SQLITE_OK) return rc;
  }
  pG->iDataVersion = iDataVersion;
  pG->nChanges = nChanges;
  pG->bTentative = bUndoable;
  return SQLITE_OK;
}

/* ---- the virtual table ---------------------------------------------- */

static int dyngVtabInit(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                        sqlite3_vtab **ppVtab, char **pzErr, int bCreate) {
  DyngConn *pConn = pAux;
  DyngVtab *pVtab = NULL;
  DyngGraph *pNew = dyngGraphParse(pConn, argc, argv, pzErr);
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

  DyngGraph *pOld = dyngGraphFind(pConn, pNew->zDb, pNew->zName);
  if (bCreate) {
    if (pOld) {
      /* A graph of this name was dropped by another connection; forget its
      ** mirror. */
      DyngGraph **pp = &pConn->pGraphs;
      while (*pp != pOld) pp = &(*pp)->pNext;
      *pp = pOld->pNext;
      dyngGraphFree(pOld);
    }
    rc = dyngCheckEdgeTable(db, pNew, pzErr);
    if (rc == SQLITE_OK) rc = dyngInstallCapture(db, pNew, pzErr);
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
  } else if (pOld) {
    /* Reconnecting (schema reset): keep the loaded mirror. */
    dyngGraphFree(pNew);
    pVtab->pG = pOld;
  } else {
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
  if (--pVtab->pG->nRef == 0) dyngGraphReleaseStmts(pVtab->pG);
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
  if (rc != SQLITE_OK) {
    sqlite3_free(pVtab->base.zErrMsg);
    pVtab->base.zErrMsg = zErr;
    return rc;
  }
  DyngGraph **pp = &pConn->pGraphs;
  while (*pp && *pp != pG) pp = &(*pp)->pNext;
  if (*pp) *pp = pG->pNext;
  dyngGraphFree(pG);
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
  if (rc != SQLITE_OK) {
    sqlite3_free(pVtab->base.zErrMsg);
    pVtab->base.zErrMsg = zErr;
    return rc;
  }
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
  sqlite3_free(pBase->zErrMsg);
  pBase->zErrMsg = sqlite3_mprintf("dyng: a graph cannot be renamed; drop it and create it "
                                   "again under the new name");
  return SQLITE_ERROR;
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
  int rc = sqlite3_create_module_v2(db, "dyng", &dyngGraphModule, pConn, dyngConnFree);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "dyng__load", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                    dyngLoadFunc, NULL, NULL, NULL);
  return rc;
}
