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

static const char zCaptureSql[] =
#include "sql/capture.sql.h"
    ;
static const char zReplaceSql[] =
#include "sql/replace.sql.h"
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
** bCreate: for CREATE, which also refuses a weights list ending in a comma
** (a definition already stored with one must still connect, or it could
** not even be dropped).  On error returns NULL with *pzErr set. */
static DyngGraph *dyngGraphParse(DyngConn *pConn, int argc, const char *const *argv, int bCreate,
                                 char **pzErr) {
  static const char zKnown[] = "edges, src, dst, weights, directed, log_limit, backend";
  DyngGraph *pG = sqlite3_malloc(sizeof *pG);
  int seen[7] = {0, 0, 0, 0, 0, 0, 0};
  if (!pG) return NULL;
  memset(pG, 0, sizeof *pG);
  pG->pConn = pConn;
  pG->bDirected = 1;
  pG->iDataVersion = -1;
  pG->nLogLimit = DYNG_DEFAULT_LOG_LIMIT;
  pG->eBackendPref = -1;
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
               : sqlite3_stricmp(zKey, "log_limit") == 0 ? 5
               : sqlite3_stricmp(zKey, "backend") == 0 ? 6
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
    } else if (iKey == 5) {
      char *zEnd = NULL;
      long long n = strtoll(zVal, &zEnd, 10);
      if (!zEnd || *zEnd || n < 1 || n > 1000000000)
        *pzErr = sqlite3_mprintf("dyng: option log_limit='%s' of graph '%s' must be an integer "
                                 "from 1 to 1000000000",
                                 zVal, pG->zName);
      else pG->nLogLimit = (int)n;
    } else if (iKey == 6) {
      if (!dyngBackendPrefParse(zVal, &pG->eBackendPref))
        *pzErr = sqlite3_mprintf("dyng: option backend='%s' of graph '%s' must be auto, cpu or cuda",
                                 zVal, pG->zName);
    } else if (iKey == 4) {
      if (!dyngParseBool(zVal, &pG->bDirected))
        *pzErr = sqlite3_mprintf("dyng: option directed='%s' of graph '%s' must be 0 or 1 "
                                 "(or false/true, no/yes, off/on)",
                                 zVal, pG->zName);
    } else {
      /* weights: a comma-separated list of column names; a comma at the
      ** end leaves an empty last name. */
      const char *z = zVal;
      while (*z && !*pzErr) {
        const char *zEnd = strchr(z, ',');
        int n = zEnd ? (int)(zEnd - z) : (int)strlen(z);
        char *zW = dyngUnquote(z, n);
        if (!zW) goto nomem_kv;
        if (bCreate && zEnd && zEnd[1] == 0 && zW[0]) {
          *pzErr = sqlite3_mprintf("dyng: empty name in weights='%s' of graph '%s'", zVal,
                                   pG->zName);
          sqlite3_free(zW);
        } else if (zW[0] == 0) {
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

/* A reference to pG for a message: "name", or "schema.name" outside main;
** NULL when out of memory. */
static char *dyngGraphRef(const DyngGraph *pG) {
  if (sqlite3_stricmp(pG->zDb, "main") == 0) return sqlite3_mprintf("%s", pG->zName);
  return sqlite3_mprintf("%s.%s", pG->zDb, pG->zName);
}

/* 1 when zSql, a schema entry's statement, creates a virtual table: after
** CREATE, past any spaces and comments, comes VIRTUAL.  SQLite writes one
** space there, but a schema edited by hand may hold anything it parses. */
static int dyngIsCreateVirtual(const char *zSql) {
  if (!zSql || sqlite3_strnicmp(zSql, "create", 6) != 0) return 0;
  const char *z = zSql + 6;
  for (;;) {
    while (isspace((unsigned char)*z)) z++;
    if (z[0] == '/' && z[1] == '*') {
      const char *zEnd = strstr(z + 2, "*/");
      if (!zEnd) return 0;
      z = zEnd + 2;
    } else if (z[0] == '-' && z[1] == '-') {
      while (*z && *z != '\n') z++;
    } else {
      break;
    }
  }
  return sqlite3_strnicmp(z, "virtual", 7) == 0 && !isalnum((unsigned char)z[7]) && z[7] != '_';
}

/* What the edge table of pG is, from its schema's sqlite_master: one of
** DYNG_EDGES_... into *peKind.  Returns an SQLite code, with a message
** when the schema cannot be read. */
#define DYNG_EDGES_MISSING 0
#define DYNG_EDGES_TABLE 1
#define DYNG_EDGES_VIEW 2
#define DYNG_EDGES_VIRTUAL 3
static int dyngEdgeTableKind(sqlite3 *db, DyngGraph *pG, int *peKind, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  *peKind = DYNG_EDGES_MISSING;
  char *zSql = sqlite3_mprintf(
      "SELECT type, sql, rootpage FROM \"%w\".sqlite_master WHERE name = %Q COLLATE NOCASE "
      "AND type IN ('table','view')",
      pG->zDb, pG->zEdges);
  if (!zSql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: cannot read the schema of '%s': %s", pG->zDb,
                             sqlite3_errmsg(db));
    return rc;
  }
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zType = (const char *)sqlite3_column_text(pStmt, 0);
    if (zType && strcmp(zType, "view") == 0) *peKind = DYNG_EDGES_VIEW;
    else if (dyngIsCreateVirtual((const char *)sqlite3_column_text(pStmt, 1)) ||
             sqlite3_column_int64(pStmt, 2) == 0)
      *peKind = DYNG_EDGES_VIRTUAL; /* an ordinary table has a root page */
    else *peKind = DYNG_EDGES_TABLE;
  }
  return sqlite3_finalize(pStmt);
}

/* The error for an edge table of kind eKind that dyng cannot read: a view
** or a virtual table (another graph, or the graph itself). */
static int dyngRefuseEdgeKind(const DyngGraph *pG, int eKind, char **pzErr) {
  if (eKind == DYNG_EDGES_VIEW) {
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' is a view; dyng needs a table",
                             pG->zEdges, pG->zName);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if (eKind == DYNG_EDGES_VIRTUAL) {
    *pzErr = sqlite3_mprintf(
        "dyng: edge table '%s' of graph '%s' is a virtual table; dyng needs an ordinary table",
        pG->zEdges, pG->zName);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int dyngCheckEdgeKind(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  int eKind;
  int rc = dyngEdgeTableKind(db, pG, &eKind, pzErr);
  return rc == SQLITE_OK ? dyngRefuseEdgeKind(pG, eKind, pzErr) : rc;
}

/* Checks the edge table: it exists in the graph's schema as an ordinary
** rowid table and has every named column (whose names are replaced by the
** table's own spelling). */
static int dyngCheckEdgeTable(sqlite3 *db, DyngGraph *pG, int bCreate, char **pzErr) {
  int eKind;
  int rc = dyngEdgeTableKind(db, pG, &eKind, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (eKind == DYNG_EDGES_MISSING) {
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' does not exist in schema '%s'",
                             pG->zEdges, pG->zName, pG->zDb);
    return SQLITE_ERROR;
  }
  if ((rc = dyngRefuseEdgeKind(pG, eKind, pzErr)) != SQLITE_OK) return rc;
  /* dyngCheckColumns also checks that rowid names the rowid. */
  return dyngCheckColumns(db, pG, bCreate, pzErr);
}

/*
** Edges are identified by rowid, and the SQL dyng runs and installs says
** `rowid`.  That fails for a WITHOUT ROWID table, which has none, and for a
** table with a column named rowid, which hides it, unless that column is
** the INTEGER PRIMARY KEY, and so the rowid itself.  A rowid table's
** PRIMARY KEY that is not its rowid has an index of origin 'pk' ending in
** the rowid (cid -1); a WITHOUT ROWID table's PRIMARY KEY index is the
** table, and has no rowid.  iRowidPk: the pk field of table_info's row for
** a column named rowid (0: not part of the key), -1 when there is none.
*/
static int dyngCheckRowid(sqlite3 *db, DyngGraph *pG, int iRowidPk, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf(
      "SELECT count(*), coalesce(sum(NOT EXISTS (SELECT 1 FROM pragma_index_xinfo(l.name, %Q) x "
      "WHERE x.cid = -1)), 0) FROM pragma_index_list(%Q, %Q) l WHERE l.origin = 'pk'",
      pG->zDb, pG->zEdges, pG->zDb);
  if (!zSql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  int nPkIndex = 0, bWithoutRowid = 0;
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    nPkIndex = sqlite3_column_int(pStmt, 0);
    bWithoutRowid = sqlite3_column_int(pStmt, 1) > 0;
  }
  rc = sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) return rc;
  if (bWithoutRowid) {
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' is a WITHOUT ROWID table; dyng "
                             "identifies edges by rowid",
                             pG->zEdges, pG->zName);
    return SQLITE_ERROR;
  }
  if (iRowidPk >= 0 && !(iRowidPk > 0 && nPkIndex == 0)) {
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' of graph '%s' has a column named 'rowid' that "
                             "is not its rowid; dyng identifies edges by rowid (rename the column, "
                             "or make it the INTEGER PRIMARY KEY)",
                             pG->zEdges, pG->zName);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

int dyngCheckColumns(sqlite3 *db, DyngGraph *pG, int bCreate, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc;
  /* Every named column exists; adopt the table's spelling.  table_xinfo
  ** lists generated columns too (hidden 2 and 3), which dyng reads like
  ** any other: the capture triggers run AFTER the write, when NEW has them. */
  char *zSql = sqlite3_mprintf("SELECT name, pk FROM pragma_table_xinfo(%Q, %Q)", pG->zEdges,
                               pG->zDb);
  if (!zSql) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  char **apCol[2 + DYNG_MAX_WEIGHTS];
  int nCol = 0, found[2 + DYNG_MAX_WEIGHTS] = {0};
  apCol[nCol++] = &pG->zSrc;
  apCol[nCol++] = &pG->zDst;
  for (int k = 0; k < pG->nWeight; k++) apCol[nCol++] = &pG->azWeight[k];
  int nRow = 0, iRowidPk = -1;
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zCol = (const char *)sqlite3_column_text(pStmt, 0);
    nRow++;
    if (zCol && sqlite3_stricmp(zCol, "rowid") == 0) iRowidPk = sqlite3_column_int(pStmt, 1);
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
  if (nRow == 0) {
    char *zRef = dyngGraphRef(pG);
    *pzErr = zRef ? sqlite3_mprintf("dyng: graph '%s': its edge table '%s' does not exist "
                                    "(dropped?); create it again and run SELECT dyng_update('%q', "
                                    "'reattach'), or drop the graph",
                                    pG->zName, pG->zEdges, zRef)
                  : NULL;
    sqlite3_free(zRef);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  rc = dyngCheckRowid(db, pG, iRowidPk, pzErr);
  if (rc != SQLITE_OK) return rc;
  for (int i = 0; i < nCol; i++) {
    if (found[i]) continue;
    const char *zRole = i == 0 ? "src" : i == 1 ? "dst" : "weights";
    *pzErr = sqlite3_mprintf("dyng: edge table '%s' has no column '%s' (option %s of graph '%s'%s)",
                             pG->zEdges, *apCol[i], zRole, pG->zName,
                             bCreate ? "" : "; if it was renamed, drop the graph and create it again");
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
  /* DYNG_MAX_WEIGHT: above it a path's length could overflow. */
  sqlite3_str_appendf(pStr,
                      "  SELECT RAISE(ABORT, 'dyng: %q.%q must be at most 1e298 so that path lengths "
                      "stay finite (got a larger number)') WHERE NEW.\"%w\" > 1e298;\n",
                      pG->zEdges, zCol, zCol);
}

/* Splits the key list of a CREATE INDEX statement into its terms: the text
** between the parentheses after ON <table>, cut at top-level commas, with a
** trailing ASC or DESC dropped (a COLLATE stays: it is part of the
** comparison).  Appends "term1\0term2\0...\0" to pTerms and points
** *pzTail just past the closing parenthesis (where a partial index has its
** WHERE clause); 0 when the text cannot be read. */
static int dyngIndexTerms(const char *zSql, sqlite3_str *pTerms, const char **pzTail) {
  const char *z = zSql, *zOn = NULL;
  /* The key list is the first parenthesis after the word ON. */
  for (; *z; z++) {
    if ((z == zSql || !isalnum((unsigned char)z[-1])) && sqlite3_strnicmp(z, "ON", 2) == 0 &&
        !isalnum((unsigned char)z[2]) && z[2] != '_') {
      zOn = z + 2;
      break;
    }
  }
  if (!zOn) return 0;
  z = strchr(zOn, '(');
  if (!z) return 0;
  int depth = 0;
  const char *zTerm = z + 1;
  for (z = z + 1; *z; z++) {
    char c = *z;
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char q = c == '[' ? ']' : c;
      for (z++; *z && !(*z == q && z[1] != q); z++)
        if (*z == q) z++;
      if (!*z) return 0;
      continue;
    }
    if (c == '(') depth++;
    else if ((c == ')' && depth == 0) || (c == ',' && depth == 0)) {
      int n = (int)(z - zTerm);
      while (n > 0 && isspace((unsigned char)zTerm[n - 1])) n--;
      for (int k = 0; k < 2; k++) {
        const char *zDir = k ? "DESC" : "ASC";
        int m = (int)strlen(zDir);
        if (n > m && sqlite3_strnicmp(zTerm + n - m, zDir, m) == 0 &&
            isspace((unsigned char)zTerm[n - m - 1])) {
          n -= m;
          while (n > 0 && isspace((unsigned char)zTerm[n - 1])) n--;
        }
      }
      if (n == 0) return 0;
      sqlite3_str_append(pTerms, zTerm, n);
      sqlite3_str_append(pTerms, "", 1);
      if (c == ')') {
        *pzTail = z + 1;
        return 1;
      }
      zTerm = z + 1;
    } else if (c == ')') depth--;
  }
  return 0;
}

/*
** The UNIQUE constraints and unique indexes of the edge table, as the
** condition "this row may conflict with NEW": one group per index,
** (c1 = NEW.c1 COLLATE x AND ...) OR (...).  A term that is an expression
** is compared with the same expression evaluated over NEW's values:
** (expr) = (SELECT expr FROM (SELECT NEW.a AS a, NEW.b AS b, ...)).  A
** partial index adds its WHERE clause, read from its definition, so that
** each group matches one row at most (sql/replace.sql counts on it).  The
** condition may match more rows than can really conflict (each match is
** only a marker), never fewer.  *pzMatch is "" when there is no unique
** index; it comes from sqlite3_mprintf.  *pnGroup gets the number of groups.
*/
static int dyngUniqueMatch(sqlite3 *db, const DyngGraph *pG, char **pzMatch, int *pnGroup,
                           char **pzErr) {
  sqlite3_stmt *pList = NULL, *pInfo = NULL, *pDef = NULL, *pCols = NULL;
  sqlite3_str *pOut = sqlite3_str_new(db), *pNew = sqlite3_str_new(db);
  int rc, nGroup = 0;
  char *zNew = NULL;
  char *zSql = sqlite3_mprintf("SELECT name, partial FROM pragma_index_list(%Q, %Q) "
                               "WHERE \"unique\"",
                               pG->zEdges, pG->zDb);
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pList, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "SELECT cid, name, coll FROM pragma_index_xinfo(?1, ?2) "
                                "WHERE key ORDER BY seqno",
                            -1, &pInfo, NULL);
  if (rc == SQLITE_OK) {
    zSql = sqlite3_mprintf("SELECT sql FROM \"%w\".sqlite_master WHERE type = 'index' AND name = ?1",
                           pG->zDb);
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pDef, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  /* NEW's values under the table's column names, for expression terms. */
  if (rc == SQLITE_OK) {
    zSql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q)", pG->zEdges, pG->zDb);
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pCols, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    for (int n = 0; rc == SQLITE_OK && sqlite3_step(pCols) == SQLITE_ROW; n++) {
      const char *zCol = (const char *)sqlite3_column_text(pCols, 0);
      sqlite3_str_appendf(pNew, "%sNEW.\"%w\" AS \"%w\"", n ? ", " : "", zCol, zCol);
    }
    /* A step that failed (out of memory) ended the list early. */
    if (rc == SQLITE_OK) rc = sqlite3_reset(pCols);
    zNew = dyngStrFinish(pNew);
    pNew = NULL;
    if (!zNew) rc = SQLITE_NOMEM;
  }
  while (rc == SQLITE_OK && sqlite3_step(pList) == SQLITE_ROW) {
    const char *zIndex = (const char *)sqlite3_column_text(pList, 0);
    int bPartial = sqlite3_column_int(pList, 1);
    sqlite3_str *pGroup = sqlite3_str_new(db);
    int nTerm = 0, bExpr = 0;
    sqlite3_bind_text(pInfo, 1, zIndex, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(pInfo, 2, pG->zDb, -1, SQLITE_STATIC);
    while (sqlite3_step(pInfo) == SQLITE_ROW) {
      const char *zCol = (const char *)sqlite3_column_text(pInfo, 1);
      const char *zColl = (const char *)sqlite3_column_text(pInfo, 2);
      if (sqlite3_column_int(pInfo, 0) < 0 || !zCol) {
        bExpr = 1;
        continue;
      }
      sqlite3_str_appendf(pGroup, "%s\"%w\" = NEW.\"%w\" COLLATE \"%w\"", nTerm++ ? " AND " : "",
                          zCol, zCol, zColl ? zColl : "BINARY");
    }
    rc = sqlite3_reset(pInfo);
    if (rc == SQLITE_OK && (bExpr || bPartial)) {
      /* Read the index's own definition: an expression group is rebuilt
      ** from its terms, a partial index adds its WHERE clause. */
      sqlite3_bind_text(pDef, 1, zIndex, -1, SQLITE_TRANSIENT);
      const char *zDef = sqlite3_step(pDef) == SQLITE_ROW ? (const char *)sqlite3_column_text(pDef, 0)
                                                          : NULL;
      sqlite3_str *pTerms = sqlite3_str_new(db);
      const char *zTail = NULL, *zWhere = NULL;
      int bOk = zDef && dyngIndexTerms(zDef, pTerms, &zTail);
      if (bOk && bPartial) {
        while (isspace((unsigned char)*zTail)) zTail++;
        bOk = sqlite3_strnicmp(zTail, "WHERE", 5) == 0 && !isalnum((unsigned char)zTail[5]) &&
              zTail[5] != '_';
        zWhere = zTail + 5;
      }
      int nTerms = sqlite3_str_length(pTerms);
      char *zTerms = dyngStrFinish(pTerms);
      if (!zTerms) rc = SQLITE_NOMEM;
      else if (!bOk) {
        *pzErr = sqlite3_mprintf("dyng: cannot read the definition of unique index '%s' of edge "
                                 "table '%s', so rows an INSERT OR REPLACE removes through it "
                                 "would go unseen",
                                 zIndex, pG->zEdges);
        rc = SQLITE_ERROR;
      } else {
        if (bExpr) {
          sqlite3_str_reset(pGroup);
          nTerm = 0;
          for (const char *zT = zTerms; zT < zTerms + nTerms; zT += strlen(zT) + 1)
            sqlite3_str_appendf(pGroup, "%s(%s) = (SELECT %s FROM (SELECT %s))",
                                nTerm++ ? " AND " : "", zT, zT, zNew);
        }
        /* The WHERE clause runs to the end of the statement (SQLite keeps
        ** no trailing semicolon); it names columns of the edge table. */
        if (zWhere && nTerm) sqlite3_str_appendf(pGroup, " AND (%s)", zWhere);
      }
      sqlite3_free(zTerms);
      int rc2 = sqlite3_reset(pDef);
      if (rc == SQLITE_OK) rc = rc2;
    }
    char *zGroup = dyngStrFinish(pGroup);
    if (!zGroup && rc == SQLITE_OK) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK && nTerm)
      sqlite3_str_appendf(pOut, "%s(%s)", nGroup++ ? " OR " : "", zGroup);
    *pnGroup = nGroup;
    sqlite3_free(zGroup);
  }
  if (rc == SQLITE_OK) rc = sqlite3_reset(pList);
  sqlite3_finalize(pList);
  sqlite3_finalize(pInfo);
  sqlite3_finalize(pDef);
  sqlite3_finalize(pCols);
  sqlite3_free(dyngStrFinish(pNew));
  sqlite3_free(zNew);
  char *zMatch = dyngStrFinish(pOut);
  if (rc == SQLITE_OK && !zMatch) rc = SQLITE_NOMEM;
  if (rc != SQLITE_OK) {
    sqlite3_free(zMatch);
    zMatch = NULL;
  }
  *pzMatch = zMatch;
  return rc;
}

/* zSql with "IF NOT EXISTS " after each CREATE TABLE and CREATE TRIGGER
** that starts a line (the statements of the templates do, their bodies are
** indented); NULL when out of memory.  Frees zSql. */
static char *dyngIfNotExists(char *zSql) {
  static const char *const azCreate[] = {"CREATE TABLE ", "CREATE TRIGGER "};
  if (!zSql) return NULL;
  sqlite3_str *pOut = sqlite3_str_new(NULL);
  for (const char *z = zSql; *z;) {
    const char *zEol = strchr(z, '\n');
    int n = zEol ? (int)(zEol - z) + 1 : (int)strlen(z);
    for (int i = 0; i < 2; i++) {
      int m = (int)strlen(azCreate[i]);
      if (n > m && strncmp(z, azCreate[i], m) == 0) {
        sqlite3_str_append(pOut, z, m);
        sqlite3_str_appendall(pOut, "IF NOT EXISTS ");
        z += m, n -= m;
        break;
      }
    }
    sqlite3_str_append(pOut, z, n);
    z += n;
  }
  sqlite3_free(zSql);
  return dyngStrFinish(pOut);
}

/* Creates the log table and the triggers of sql/capture.sql, and those of
** sql/replace.sql when the edge table has UNIQUE constraints.  bMissing:
** only those not there yet (reattaching). */
static int dyngInstallCapture(sqlite3 *db, DyngGraph *pG, int bMissing, char **pzErr) {
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
  char *azVal[13];
  const char *azKey[13] = {"schema", "log",         "edges",      "trg_ins",     "trg_upd",
                           "trg_del", "src",        "dst",        "log_weights", "log_wnames",
                           "new_weights", "checks", "log_limit"};
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
  azVal[12] = sqlite3_mprintf("%d", pG->nLogLimit);
  char *zChanged = dyngStrFinish(pChanged);
  int rc = SQLITE_OK;
  for (int i = 0; i < 13; i++)
    if (!azVal[i]) rc = SQLITE_NOMEM;
  if (!zChanged) rc = SQLITE_NOMEM;
  char *zSql = NULL, *zMatch = NULL;
  int nGroup = 0;
  char *zRepIns = sqlite3_mprintf("\"%w_rep_ins\"", pG->zLog);
  char *zRepUpd = sqlite3_mprintf("\"%w_rep_upd\"", pG->zLog);
  if (!zRepIns || !zRepUpd) rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK) rc = dyngUniqueMatch(db, pG, &zMatch, &nGroup, pzErr);
  if (rc == SQLITE_OK) {
    /* sql/replace.sql: the BEFORE triggers, then (after their last END;)
    ** the statement the AFTER triggers begin with. */
    const char *zFragment = zReplaceSql;
    for (const char *z = zReplaceSql; (z = strstr(z, "END;\n")) != NULL; z += 5) zFragment = z + 5;
    int bReplace = zMatch[0] != 0;
    char *zWindow = sqlite3_mprintf("%d", 3 * nGroup + 2);
    char *zUpdWhen = bReplace ? sqlite3_mprintf("") : sqlite3_mprintf("WHEN %s\n", zChanged);
    char *zTriggers = sqlite3_mprintf("%.*s", (int)(zFragment - zReplaceSql), zReplaceSql);
    const char *azK[20], *azV[20];
    for (int i = 0; i < 13; i++) azK[i] = azKey[i], azV[i] = azVal[i];
    azK[13] = "changed", azV[13] = zChanged;
    azK[14] = "trg_rep_ins", azV[14] = zRepIns;
    azK[15] = "trg_rep_upd", azV[15] = zRepUpd;
    azK[16] = "unique_match", azV[16] = zMatch;
    azK[17] = "replace_window", azV[17] = zWindow;
    azK[18] = "upd_when", azV[18] = zUpdWhen;
    char *zReplaced = bReplace && zWindow ? dyngTemplate(zFragment, 18, azK, azV)
                                          : sqlite3_mprintf("");
    azK[19] = "replaced", azV[19] = zReplaced;
    char *zCapture = zReplaced && zUpdWhen ? dyngTemplate(zCaptureSql, 20, azK, azV) : NULL;
    char *zReplace = !bReplace ? sqlite3_mprintf("")
                     : zTriggers ? dyngTemplate(zTriggers, 18, azK, azV) : NULL;
    /* Reattaching, the REPLACE triggers come first: a failure half-way
    ** then leaves one that dyngCheckCapture counts missing. */
    if (!zCapture || !zReplace) zSql = NULL;
    else if (bMissing) zSql = dyngIfNotExists(sqlite3_mprintf("%s%s", zReplace, zCapture));
    else zSql = sqlite3_mprintf("%s%s", zCapture, zReplace);
    sqlite3_free(zCapture);
    sqlite3_free(zReplace);
    sqlite3_free(zReplaced);
    sqlite3_free(zTriggers);
    sqlite3_free(zUpdWhen);
    sqlite3_free(zWindow);
    if (!zSql) rc = SQLITE_NOMEM;
  }
  sqlite3_free(zMatch);
  sqlite3_free(zRepIns);
  sqlite3_free(zRepUpd);
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
  for (int i = 0; i < 13; i++) sqlite3_free(azVal[i]);
  return rc;
}

/* The capture's trigger names, after "<log>_". */
static const char *const azCaptureTrigger[] = {"ins", "upd", "del", "rep_ins", "rep_upd"};

/* Removes the triggers and the log table (IF EXISTS: the edge table may be
** gone, and its triggers with it). */
static int dyngRemoveCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  sqlite3_str *pSql = sqlite3_str_new(db);
  for (int i = 0; i < 5; i++)
    sqlite3_str_appendf(pSql, "DROP TRIGGER IF EXISTS \"%w\".\"%w_%s\";", pG->zDb, pG->zLog,
                        azCaptureTrigger[i]);
  sqlite3_str_appendf(pSql, "DROP TABLE IF EXISTS \"%w\".\"%w\";", pG->zDb, pG->zLog);
  char *zSql = sqlite3_str_finish(pSql);
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

/* Drops the capture triggers of pG that are on another table than its
** edge table. */
static int dyngDropStrayTriggers(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  sqlite3_str *pSql = sqlite3_str_new(db);
  sqlite3_str_appendf(pSql, "SELECT name FROM \"%w\".sqlite_master WHERE type = 'trigger' AND "
                            "tbl_name <> %Q COLLATE NOCASE AND name COLLATE NOCASE IN (",
                      pG->zDb, pG->zEdges);
  for (int i = 0; i < 5; i++)
    sqlite3_str_appendf(pSql, "%s'%q_%s'", i ? ", " : "", pG->zLog, azCaptureTrigger[i]);
  sqlite3_str_appendall(pSql, ")");
  char *zSql = sqlite3_str_finish(pSql);
  if (!zSql) return SQLITE_NOMEM;
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  sqlite3_str *pDrop = sqlite3_str_new(db);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW)
    sqlite3_str_appendf(pDrop, "DROP TRIGGER \"%w\".\"%w\";", pG->zDb,
                        (const char *)sqlite3_column_text(pStmt, 0));
  int rc2 = sqlite3_finalize(pStmt);
  if (rc == SQLITE_OK) rc = rc2;
  char *zDrop = dyngStrFinish(pDrop);
  if (rc == SQLITE_OK && !zDrop) rc = SQLITE_NOMEM;
  char *zErr = NULL;
  if (rc == SQLITE_OK && zDrop[0]) rc = sqlite3_exec(db, zDrop, NULL, NULL, &zErr);
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("dyng: cannot remove the change capture of graph '%s': %s",
                             pG->zName, zErr ? zErr : sqlite3_errmsg(db));
  sqlite3_free(zErr);
  sqlite3_free(zDrop);
  return rc;
}

int dyngCheckCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  char *zSql = sqlite3_mprintf(
      "SELECT count(*) FROM \"%w\".sqlite_master WHERE (type = 'trigger' AND tbl_name = %Q "
      "COLLATE NOCASE AND (name = '%q_ins' COLLATE NOCASE OR name = '%q_upd' COLLATE NOCASE OR "
      "name = '%q_del' COLLATE NOCASE)) OR (type = 'table' AND name = %Q COLLATE NOCASE)",
      pG->zDb, pG->zEdges, pG->zLog, pG->zLog, pG->zLog, pG->zLog);
  if (!zSql) return SQLITE_NOMEM;
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read the schema of '%s': %s", pG->zName,
                             pG->zDb, sqlite3_errmsg(db));
    return rc;
  }
  int nFound = sqlite3_step(pStmt) == SQLITE_ROW ? sqlite3_column_int(pStmt, 0) : 0;
  rc = sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) return rc;
  if (nFound == 4) return SQLITE_OK;
  char *zRef = dyngGraphRef(pG);
  *pzErr = zRef ? sqlite3_mprintf("dyng: graph '%s': the change capture on its edge table '%s' is "
                                  "gone (was the table dropped and created again, or rebuilt?), "
                                  "so writes to it would go unseen; SELECT dyng_update('%q', "
                                  "'reattach') installs it again and reloads the graph",
                                  pG->zName, pG->zEdges, zRef)
                : NULL;
  sqlite3_free(zRef);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* A log kept from a graph created by an older version has no nonce column;
** the capture installed again writes one, so it is added (the entries
** before the reload that follows are never read again). */
static int dyngLogAddNonce(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  char *zSql = sqlite3_mprintf("SELECT count(*), count(*) FILTER (WHERE name = 'nonce') "
                               "FROM pragma_table_info(%Q, %Q)",
                               pG->zLog, pG->zDb);
  sqlite3_stmt *pStmt = NULL;
  if (!zSql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  int bAdd = 0;
  if (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW)
    bAdd = sqlite3_column_int(pStmt, 0) > 0 && sqlite3_column_int(pStmt, 1) == 0;
  int rc2 = sqlite3_finalize(pStmt);
  if (rc == SQLITE_OK) rc = rc2;
  if (rc == SQLITE_OK && bAdd) {
    zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w\" ADD COLUMN nonce INTEGER", pG->zDb, pG->zLog);
    rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot update its change log '%s': %s", pG->zName,
                             pG->zLog, sqlite3_errmsg(db));
  return rc;
}

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
  /* Only adds what is missing, and drops only capture triggers left on
  ** another table: a failure half-way (out of memory, after which SQLite
  ** runs no further statement until the caller's ends) leaves no capture
  ** worse than it was, and the next reattach completes it.  Nothing is
  ** dropped that a cursor could hold (SELECT dyng_update(...) FROM t). */
  rc = dyngDropStrayTriggers(db, pG, pzErr);
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
  if (rc != SQLITE_OK) {
    sqlite3_free(pVtab->base.zErrMsg);
    pVtab->base.zErrMsg = zErr;
    return rc;
  }
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
  return sqlite3_create_module_v2(db, "dyng", &dyngGraphModule, pConn, dyngConnFree);
}
