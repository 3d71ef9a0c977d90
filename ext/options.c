/*
** ext/options.c: reading a graph's definition.  Two parsers of text:
**
**   - the options of CREATE VIRTUAL TABLE ... USING dyng(edges=roads,
**     src=src, dst=dst, weights='length,minutes', directed=1, log_limit=N,
**     backend=auto|cpu|cuda) into a DyngGraph (dyngGraphParse), with the
**     error that names the option and the graph for each bad one;
**   - the key list of a CREATE INDEX statement, which the REPLACE capture
**     needs to match the rows a new row may conflict with (dyngUniqueMatch
**     builds that condition from the edge table's unique indexes).
**
** How it works: each option is key=value, quotes removed as SQLite would;
** each key is handled by one small function.  Nothing here touches the
** mirror: a parsed definition owns only its strings
** (ext/util.c's dyngGraphFreeDefinition frees them).
*/
#include "ext/dyng_ext.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

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

/* The option keys, in the order of dyngGraphParse's seen[] slots. */
static const char *const azOptionKey[] = {"edges",    "src",       "dst",    "weights",
                                          "directed", "log_limit", "backend"};
#define DYNG_N_OPTION 7
#define DYNG_OPT_WEIGHTS 3
static const char zKnownOptions[] = "edges, src, dst, weights, directed, log_limit, backend";

/* The slot of option key zKey, -1 when it is not one. */
static int dyngOptionKey(const char *zKey) {
  for (int i = 0; i < DYNG_N_OPTION; i++)
    if (sqlite3_stricmp(zKey, azOptionKey[i]) == 0) return i;
  return -1;
}

/* weights=zVal: a comma-separated list of column names, appended to
** pG->azWeight; a comma at the end leaves an empty last name.  Sets
** *pzErr for a bad list; SQLITE_NOMEM when out of memory. */
static int dyngParseWeights(DyngGraph *pG, const char *zVal, int bCreate, char **pzErr) {
  const char *z = zVal;
  while (*z && !*pzErr) {
    const char *zEnd = strchr(z, ',');
    int n = zEnd ? (int)(zEnd - z) : (int)strlen(z);
    char *zW = dyngUnquote(z, n);
    if (!zW) return SQLITE_NOMEM;
    if (bCreate && zEnd && zEnd[1] == 0 && zW[0]) {
      *pzErr = sqlite3_mprintf("dyng: empty name in weights='%s' of graph '%s'", zVal, pG->zName);
      sqlite3_free(zW);
    } else if (zW[0] == 0) {
      *pzErr = sqlite3_mprintf("dyng: empty name in weights='%s' of graph '%s'", zVal, pG->zName);
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
          *pzErr = sqlite3_mprintf("dyng: weight column '%s' listed twice for graph '%s'", zW,
                                   pG->zName);
      pG->azWeight[pG->nWeight++] = zW;
    }
    z = zEnd ? zEnd + 1 : z + n;
  }
  return SQLITE_OK;
}

/* Sets option iKey of pG to *pzVal, taking the string (*pzVal = NULL) when
** pG keeps it.  Sets *pzErr for a bad value; SQLITE_NOMEM when out of
** memory. */
static int dyngSetOption(DyngGraph *pG, int iKey, char **pzVal, int bCreate, char **pzErr) {
  char *zVal = *pzVal;
  if (iKey == 0) {
    pG->zEdges = zVal, *pzVal = NULL;
  } else if (iKey == 1) {
    pG->zSrc = zVal, *pzVal = NULL;
  } else if (iKey == 2) {
    pG->zDst = zVal, *pzVal = NULL;
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
    return dyngParseWeights(pG, zVal, bCreate, pzErr);
  }
  return SQLITE_OK;
}

/* One "key=value" argument zArg into pG; seen[] counts each key given.
** SQLITE_ERROR with *pzErr set for a bad one, SQLITE_NOMEM when out of
** memory. */
static int dyngParseArg(DyngGraph *pG, const char *zArg, int *seen, int bCreate, char **pzErr) {
  const char *zEq = strchr(zArg, '=');
  if (!zEq) {
    *pzErr = sqlite3_mprintf("dyng: option '%s' of graph '%s' is not key=value (known keys: %s)",
                             zArg, pG->zName, zKnownOptions);
    return SQLITE_ERROR;
  }
  char *zKey = dyngUnquote(zArg, (int)(zEq - zArg));
  char *zVal = dyngUnquote(zEq + 1, (int)strlen(zEq + 1));
  int rc = SQLITE_OK;
  if (!zKey || !zVal) {
    rc = SQLITE_NOMEM;
  } else {
    int iKey = dyngOptionKey(zKey);
    if (iKey < 0) {
      *pzErr = sqlite3_mprintf("dyng: unknown option '%s' for graph '%s' (known: %s)", zKey,
                               pG->zName, zKnownOptions);
    } else if (seen[iKey]++) {
      *pzErr = sqlite3_mprintf("dyng: option '%s' given twice for graph '%s'", zKey, pG->zName);
    } else if (iKey != DYNG_OPT_WEIGHTS && zVal[0] == 0) {
      *pzErr = sqlite3_mprintf("dyng: option '%s' of graph '%s' is empty", zKey, pG->zName);
    } else {
      rc = dyngSetOption(pG, iKey, &zVal, bCreate, pzErr);
    }
  }
  sqlite3_free(zKey);
  sqlite3_free(zVal);
  if (rc == SQLITE_OK && *pzErr) rc = SQLITE_ERROR;
  return rc;
}

DyngGraph *dyngGraphParse(DyngConn *pConn, int argc, const char *const *argv, int bCreate,
                          char **pzErr) {
  DyngGraph *pG = sqlite3_malloc(sizeof *pG);
  int seen[DYNG_N_OPTION] = {0};
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
    int rc = dyngParseArg(pG, argv[i], seen, bCreate, pzErr);
    if (rc == SQLITE_NOMEM) goto nomem;
    if (rc != SQLITE_OK) goto fail;
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
  dyngGraphFreeDefinition(pG);
  sqlite3_free(pG);
  return NULL;
}

char *dyngGraphRef(const DyngGraph *pG) {
  if (sqlite3_stricmp(pG->zDb, "main") == 0) return sqlite3_mprintf("%s", pG->zName);
  return sqlite3_mprintf("%s.%s", pG->zDb, pG->zName);
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

/* "NEW."a" AS "a", ..." over the edge table's columns: NEW's values under
** the table's column names, over which an expression term is evaluated.
** *pzNew is new (sqlite3_free), NULL when out of memory. */
static int dyngNewColumns(sqlite3 *db, const DyngGraph *pG, char **pzNew) {
  sqlite3_stmt *pCols = NULL;
  sqlite3_str *pNew = sqlite3_str_new(db);
  char *zSql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q)", pG->zEdges, pG->zDb);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pCols, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  for (int n = 0; rc == SQLITE_OK && sqlite3_step(pCols) == SQLITE_ROW; n++) {
    const char *zCol = (const char *)sqlite3_column_text(pCols, 0);
    sqlite3_str_appendf(pNew, "%sNEW.\"%w\" AS \"%w\"", n ? ", " : "", zCol, zCol);
  }
  /* A step that failed (out of memory) ended the list early. */
  if (rc == SQLITE_OK) rc = sqlite3_reset(pCols);
  sqlite3_finalize(pCols);
  *pzNew = dyngStrFinish(pNew);
  if (!*pzNew) rc = SQLITE_NOMEM;
  return rc;
}

/* The group of unique index zIndex when it has expression terms (bExpr)
** or is partial: its definition, read through pDef, gives the terms (the
** group in pGroup is rebuilt from them, evaluated over zNew) and the WHERE
** clause (added to the group).  *pnTerm: the group's terms.  SQLITE_ERROR
** with *pzErr set when the definition cannot be read. */
static int dyngIndexDefGroup(sqlite3 *db, const DyngGraph *pG, sqlite3_stmt *pDef,
                             const char *zIndex, int bExpr, int bPartial, const char *zNew,
                             sqlite3_str *pGroup, int *pnTerm, char **pzErr) {
  int rc = SQLITE_OK;
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
      *pnTerm = 0;
      for (const char *zT = zTerms; zT < zTerms + nTerms; zT += strlen(zT) + 1)
        sqlite3_str_appendf(pGroup, "%s(%s) = (SELECT %s FROM (SELECT %s))",
                            (*pnTerm)++ ? " AND " : "", zT, zT, zNew);
    }
    /* The WHERE clause runs to the end of the statement (SQLite keeps
    ** no trailing semicolon); it names columns of the edge table. */
    if (zWhere && *pnTerm) sqlite3_str_appendf(pGroup, " AND (%s)", zWhere);
  }
  sqlite3_free(zTerms);
  int rc2 = sqlite3_reset(pDef);
  if (rc == SQLITE_OK) rc = rc2;
  return rc;
}

int dyngUniqueMatch(sqlite3 *db, const DyngGraph *pG, char **pzMatch, int *pnGroup,
                    char **pzErr) {
  sqlite3_stmt *pList = NULL, *pInfo = NULL, *pDef = NULL;
  sqlite3_str *pOut = sqlite3_str_new(db);
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
  if (rc == SQLITE_OK) rc = dyngNewColumns(db, pG, &zNew);
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
    if (rc == SQLITE_OK && (bExpr || bPartial))
      rc = dyngIndexDefGroup(db, pG, pDef, zIndex, bExpr, bPartial, zNew, pGroup, &nTerm, pzErr);
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
