/*
** ext/capture.c: the change capture of a graph, the log table and the
** triggers on its edge table that record every write into it.
**
**   net_log(seq INTEGER PRIMARY KEY, op, edge, src, dst, w0, ..., nonce)
**   triggers net_log_ins, net_log_upd, net_log_del (sql/capture.sql) and,
**   when the edge table has UNIQUE constraints, net_log_rep_ins and
**   net_log_rep_upd (sql/replace.sql), which log the rows REPLACE removes.
**
** How it works: the two SQL files are templates with {{key}} placeholders
** (dyngTemplate); dyngInstallCapture fills them from the graph's definition
** (quoted names, the validation statements of each column, the unique-index
** match from options.c's dyngUniqueMatch) and runs them.  dyngRemoveCapture drops them at
** DROP TABLE, dyngCheckCapture checks they are all still there and cover
** the table's UNIQUE constraints, and dyngDropCaptureTriggers and
** dyngLogAddNonce prepare a reattach, which installs them all anew.
*/
#include "ext/dyng_ext.h"

#include <ctype.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

static const char zCaptureSql[] =
#include "sql/capture.sql.h"
    ;
static const char zReplaceSql[] =
#include "sql/replace.sql.h"
    ;

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

/* The SQL that installs the capture: the templates filled from azK/azV
** (azK[0..16] set by dyngInstallCapture: the names, the checks, "changed",
** the REPLACE trigger names and "unique_match"; this adds the last three).
** nGroup: the unique-match's groups.  bMissing: only what is missing.  New
** string, NULL when out of memory. */
static char *dyngCaptureSql(const char **azK, const char **azV, int nGroup, int bMissing) {
  /* sql/replace.sql: the BEFORE triggers, then (after their last END;)
  ** the statement the AFTER triggers begin with. */
  const char *zFragment = zReplaceSql;
  for (const char *z = zReplaceSql; (z = strstr(z, "END;\n")) != NULL; z += 5) zFragment = z + 5;
  int bReplace = azV[16][0] != 0;
  char *zWindow = sqlite3_mprintf("%d", 3 * nGroup + 2);
  char *zUpdWhen = bReplace ? sqlite3_mprintf("") : sqlite3_mprintf("WHEN %s\n", azV[13]);
  char *zTriggers = sqlite3_mprintf("%.*s", (int)(zFragment - zReplaceSql), zReplaceSql);
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
  char *zSql;
  if (!zCapture || !zReplace) zSql = NULL;
  else if (bMissing) zSql = dyngIfNotExists(sqlite3_mprintf("%s%s", zReplace, zCapture));
  else zSql = sqlite3_mprintf("%s%s", zCapture, zReplace);
  sqlite3_free(zCapture);
  sqlite3_free(zReplace);
  sqlite3_free(zReplaced);
  sqlite3_free(zTriggers);
  sqlite3_free(zUpdWhen);
  sqlite3_free(zWindow);
  return zSql;
}

int dyngInstallCapture(sqlite3 *db, DyngGraph *pG, int bMissing, char **pzErr) {
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
    const char *azK[13 + 7];
    const char *azV[13 + 7];
    for (int i = 0; i < 13; i++) azK[i] = azKey[i], azV[i] = azVal[i];
    azK[13] = "changed", azV[13] = zChanged;
    azK[14] = "trg_rep_ins", azV[14] = zRepIns;
    azK[15] = "trg_rep_upd", azV[15] = zRepUpd;
    azK[16] = "unique_match", azV[16] = zMatch;
    zSql = dyngCaptureSql(azK, azV, nGroup, bMissing);
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
#define DYNG_N_CAPTURE_TRIGGER 5

int dyngRemoveCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  sqlite3_str *pSql = sqlite3_str_new(db);
  for (int i = 0; i < DYNG_N_CAPTURE_TRIGGER; i++)
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

int dyngDropCaptureTriggers(sqlite3 *db, DyngGraph *pG, int bAll, char **pzErr) {
  sqlite3_str *pSql = sqlite3_str_new(db);
  sqlite3_str_appendf(pSql, "SELECT name FROM \"%w\".sqlite_master WHERE type = 'trigger' AND "
                            "(%d OR tbl_name <> %Q COLLATE NOCASE) AND name COLLATE NOCASE IN (",
                      pG->zDb, bAll, pG->zEdges);
  for (int i = 0; i < DYNG_N_CAPTURE_TRIGGER; i++)
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

/* The fault of a missing capture trigger azCaptureTrigger[i]. */
static char *dyngTriggerGone(const DyngGraph *pG, int i) {
  return sqlite3_mprintf("trigger '%s_%s' of the change capture on its edge table '%s' is gone "
                         "(dropped?), so writes to it would go unseen",
                         pG->zLog, azCaptureTrigger[i], pG->zEdges);
}

/* What dyngCheckCapture found wrong with the capture, for its message (new
** string), or NULL when nothing is.  bLog: the log table exists; azSql:
** the SQL of each trigger of azCaptureTrigger on the edge table, NULL for
** one that is not there; zMatch: the match of the table's UNIQUE
** constraints as they are now (dyngUniqueMatch), "" without any. */
static char *dyngCaptureFault(const DyngGraph *pG, int bLog, const char *const *azSql,
                              const char *zMatch) {
  int bUnique = zMatch && zMatch[0];
  if (!bLog || (!azSql[0] && !azSql[1] && !azSql[2]))
    return sqlite3_mprintf("the change capture on its edge table '%s' is gone (was the table "
                           "dropped and created again, or rebuilt?), so writes to it would go "
                           "unseen",
                           pG->zEdges);
  for (int i = 0; i < 3; i++)
    if (!azSql[i]) return dyngTriggerGone(pG, i);
  if (!bUnique) return NULL;
  /* The REPLACE triggers must match the table's UNIQUE constraints as they
  ** are now, and the AFTER triggers must turn their markers into deletes
  ** (sql/replace.sql): a constraint added after the capture is not covered.
  ** Older versions' REPLACE triggers log op 0, "re-read this rowid", which
  ** needs nothing of the AFTER triggers; their match is written otherwise,
  ** and a reattach makes them anew. */
  int bAfterOk = strstr(azSql[0], "SET op = -1") && strstr(azSql[1], "SET op = -1");
  if (bAfterOk || azSql[3] || azSql[4]) {
    for (int i = 3; i < DYNG_N_CAPTURE_TRIGGER; i++)
      if (!azSql[i]) return dyngTriggerGone(pG, i);
  }
  int bOld = azSql[3] && !strstr(azSql[3], "SELECT 2, rowid") &&
             !strstr(azSql[4], "SELECT 2, rowid");
  if (!bOld && (!bAfterOk || !strstr(azSql[3], zMatch) || !strstr(azSql[4], zMatch)))
    return sqlite3_mprintf("its edge table '%s' has UNIQUE constraints that its change capture "
                           "does not cover (added after the graph was created?), so rows that "
                           "INSERT OR REPLACE removes would go unseen",
                           pG->zEdges);
  return NULL;
}

/* The next token of *pz: a word, a quoted name (quotes removed, doubled
** quotes left as they are) or one other character; its start and length
** in *pzTok / *pn, its kind in the result: 'w' word, 'n' quoted name, 's'
** string, 'p' punctuation, 0 at the end. */
static int dyngNextToken(const char **pz, const char **pzTok, int *pn) {
  const char *z = *pz;
  while (*z && isspace((unsigned char)*z)) z++;
  int kind = 0;
  if (!*z) {
    *pzTok = z, *pn = 0;
  } else if (*z == '\'' || *z == '"' || *z == '`' || *z == '[') {
    char cEnd = *z == '[' ? ']' : *z;
    kind = *z == '\'' ? 's' : 'n';
    const char *zStart = ++z;
    while (*z && (*z != cEnd || (cEnd != ']' && z[1] == cEnd))) z += *z == cEnd ? 2 : 1;
    *pzTok = zStart, *pn = (int)(z - zStart);
    if (*z) z++;
  } else if (isalnum((unsigned char)*z) || *z == '_' || (unsigned char)*z >= 0x80) {
    const char *zStart = z;
    while (isalnum((unsigned char)*z) || *z == '_' || (unsigned char)*z >= 0x80) z++;
    *pzTok = zStart, *pn = (int)(z - zStart), kind = 'w';
  } else {
    *pzTok = z++, *pn = 1, kind = 'p';
  }
  *pz = z;
  return kind;
}

/* 1 when token (z, n) is the word zWord, in any case. */
static int dyngIsWord(const char *z, int n, const char *zWord) {
  return n == (int)strlen(zWord) && sqlite3_strnicmp(z, zWord, n) == 0;
}

/* 1 when zSql, the CREATE TRIGGER statement of a trigger, makes a BEFORE
** trigger (written so, or by default) whose body writes into table zTable
** (an INSERT, REPLACE, UPDATE or DELETE naming it, with or without a
** schema): the rows it writes are logged between the REPLACE triggers'
** markers and the AFTER trigger that looks back for them, when it runs
** after the REPLACE triggers.  A write into another table whose own
** triggers write into zTable is not followed. */
static int dyngTriggerWritesBefore(const char *zSql, const char *zTable) {
  const char *z = zSql, *zTok;
  int n, kind, bBody = 0, bTarget = 0;
  while ((kind = dyngNextToken(&z, &zTok, &n)) != 0) {
    if (kind == 'w' && !bBody) {
      if (dyngIsWord(zTok, n, "AFTER") || dyngIsWord(zTok, n, "INSTEAD")) return 0;
      bBody = dyngIsWord(zTok, n, "BEGIN");
      continue;
    }
    if (!bBody) continue;
    if (kind == 'w' && (dyngIsWord(zTok, n, "INSERT") || dyngIsWord(zTok, n, "REPLACE") ||
                        dyngIsWord(zTok, n, "UPDATE") || dyngIsWord(zTok, n, "DELETE"))) {
      bTarget = 1; /* the table is the next name but for OR x, INTO, FROM */
      continue;
    }
    if (!bTarget) continue;
    if (kind == 'w' && (dyngIsWord(zTok, n, "OR") || dyngIsWord(zTok, n, "INTO") ||
                        dyngIsWord(zTok, n, "FROM") || dyngIsWord(zTok, n, "ROLLBACK") ||
                        dyngIsWord(zTok, n, "ABORT") || dyngIsWord(zTok, n, "FAIL") ||
                        dyngIsWord(zTok, n, "IGNORE") || dyngIsWord(zTok, n, "REPLACE")))
      continue;
    if (kind == 'w' || kind == 'n') {
      /* schema.table: the name after the dot */
      const char *zAfter = z, *zDot;
      int nDot;
      if (dyngNextToken(&zAfter, &zDot, &nDot) == 'p' && *zDot == '.') {
        z = zAfter;
        continue;
      }
      if (n == (int)strlen(zTable) && sqlite3_strnicmp(zTok, zTable, n) == 0) return 1;
    }
    bTarget = 0;
  }
  return 0;
}

int dyngCheckCapture(sqlite3 *db, DyngGraph *pG, char **pzErr) {
  char *zSql = sqlite3_mprintf(
      "SELECT type, name, sql, rowid FROM \"%w\".sqlite_master WHERE (type = 'trigger' AND "
      "tbl_name = %Q COLLATE NOCASE) OR (type = 'table' AND name = %Q COLLATE NOCASE)",
      pG->zDb, pG->zEdges, pG->zLog);
  if (!zSql) return SQLITE_NOMEM;
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("dyng: graph '%s': cannot read the schema of '%s': %s", pG->zName,
                             pG->zDb, sqlite3_errmsg(db));
    return rc;
  }
  char *azSql[DYNG_N_CAPTURE_TRIGGER] = {0};
  sqlite3_int64 aRowid[DYNG_N_CAPTURE_TRIGGER] = {0};
  /* The oldest other BEFORE trigger that writes: it runs after the REPLACE
  ** triggers when it is older than they are (SQLite runs a table's
  ** triggers newest first, and keeps them in the order of sqlite_master's
  ** rowids). */
  char *zWriter = NULL;
  sqlite3_int64 iWriter = 0;
  int bLog = 0;
  size_t nLog = strlen(pG->zLog);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zType = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zName = (const char *)sqlite3_column_text(pStmt, 1);
    const char *zText = (const char *)sqlite3_column_text(pStmt, 2);
    if (!zType || !zName) continue;
    if (zType[0] == 't' && zType[1] == 'a') {
      bLog = 1;
      continue;
    }
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 3);
    int iCapture = -1;
    if (strlen(zName) > nLog + 1 && sqlite3_strnicmp(zName, pG->zLog, (int)nLog) == 0 &&
        zName[nLog] == '_')
      for (int i = 0; i < DYNG_N_CAPTURE_TRIGGER; i++)
        if (sqlite3_stricmp(zName + nLog + 1, azCaptureTrigger[i]) == 0) iCapture = i;
    if (iCapture >= 0 && !azSql[iCapture]) {
      azSql[iCapture] = sqlite3_mprintf("%s", zText ? zText : "");
      aRowid[iCapture] = iRowid;
      if (!azSql[iCapture]) rc = SQLITE_NOMEM;
    } else if (iCapture < 0 && zText && (!zWriter || iRowid < iWriter) &&
               dyngTriggerWritesBefore(zText, pG->zEdges)) {
      sqlite3_free(zWriter);
      zWriter = sqlite3_mprintf("%s", zName);
      iWriter = iRowid;
      if (!zWriter) rc = SQLITE_NOMEM;
    }
  }
  int rc2 = sqlite3_finalize(pStmt);
  if (rc == SQLITE_OK) rc = rc2;
  char *zMatch = NULL;
  int nGroup = 0;
  if (rc == SQLITE_OK) rc = dyngUniqueMatch(db, pG, &zMatch, &nGroup, pzErr);
  char *zFault = NULL;
  if (rc == SQLITE_OK) {
    zFault = dyngCaptureFault(pG, bLog, (const char *const *)azSql, zMatch);
    if (zFault) {
      char *zRef = dyngGraphRef(pG);
      *pzErr = zRef ? sqlite3_mprintf("dyng: graph '%s': %s; SELECT dyng_update('%q', "
                                      "'reattach') installs it again and reloads the graph",
                                      pG->zName, zFault, zRef)
                    : NULL;
      sqlite3_free(zRef);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    } else if (zMatch[0] && zWriter && (iWriter < aRowid[3] || iWriter < aRowid[4])) {
      /* The rows it writes come between the markers of the REPLACE
      ** triggers and the AFTER trigger that looks back for them. */
      *pzErr = sqlite3_mprintf(
          "dyng: graph '%s': trigger '%s' on its edge table '%s' writes into it and runs after "
          "the REPLACE triggers of its change capture, so a row that INSERT OR REPLACE "
          "removes could go unseen; create that trigger again (DROP TRIGGER, then the same "
          "CREATE TRIGGER) so that it runs first",
          pG->zName, zWriter, pG->zEdges);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  sqlite3_free(zWriter);
  sqlite3_free(zFault);
  sqlite3_free(zMatch);
  for (int i = 0; i < DYNG_N_CAPTURE_TRIGGER; i++) sqlite3_free(azSql[i]);
  return rc;
}

int dyngLogAddNonce(sqlite3 *db, DyngGraph *pG, char **pzErr) {
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
