/*
** ext/edge_table.c: checks that a graph's edge table is one dyng can
** mirror: it exists, is an ordinary rowid table (not a view, a virtual
** table or WITHOUT ROWID), has no column shadowing `rowid`, and has every
** column the graph names, whose spelling it adopts.  Called at CREATE, at
** reattach (graph_vtab.c) and before a load (sync.c); calls only options.c
** (dyngGraphRef) and util.c.
*/
#include "ext/dyng_ext.h"

#include <ctype.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

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
int dyngCheckEdgeTable(sqlite3 *db, DyngGraph *pG, int bCreate, char **pzErr) {
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


