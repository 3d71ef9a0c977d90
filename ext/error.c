/*
** ext/error.c: the one way an error reaches SQL.
**
**   dyngEngineFail   an engine code (DYNG_E..., engine/errcode.h) met by an
**                    SQL function on a graph -> an SQLite code and message;
**   dyngVtabError    a code and message -> a virtual table's error;
**   dyngVtabErrorf   the same with a printf-style message;
**   dyngFuncError    a code and message -> a scalar function's result.
**
** Every message names the SQL function and the graph ("dyng_path: graph
** 'net': ..."); what follows is the text of the table below where an
** engine code needs more than dyng_strerror() says to an SQL user, else
** dyng_strerror(), or the caller's own detail.  Calls only util.c and
** watch.c.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

#include <stdarg.h>

SQLITE_EXTENSION_INIT3

/* Engine codes whose SQL text is not dyng_strerror()'s: each says what
** was past a limit and, where the user can change it, how. */
static const struct {
  int erc;
  const char *zText;
} aDyngSqlText[] = {
    {DYNG_ETOOBIG, "the graph is too large (at most 2^31 - 1 vertices and 2^31 - 1 edges)"},
    {DYNG_EOVERFLOW, "the count does not fit in 64 bits"},
    {DYNG_EGAVEUP, "the search gave up past its work limit"},
    {DYNG_ENOROOM, "an answer did not fit the room made for it"},
};

/* The SQL text of engine code erc. */
static const char *dyngSqlText(int erc) {
  for (size_t i = 0; i < sizeof aDyngSqlText / sizeof aDyngSqlText[0]; i++)
    if (aDyngSqlText[i].erc == erc) return aDyngSqlText[i].zText;
  return dyng_strerror(erc);
}

int dyngEngineFail(DyngGraph *pG, int erc, DyngWatch *pWatch, const char *zFunc, int flags,
                   char **pzErr, const char *zFmt, ...) {
  if (erc == DYNG_OK) return SQLITE_OK;
  if ((flags & DYNG_ERR_KEEP) && *pzErr) return erc == DYNG_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
  sqlite3_free(*pzErr);
  *pzErr = NULL;
  if (erc == DYNG_ENOMEM) return SQLITE_NOMEM;
  if (erc == DYNG_EINTERRUPTED && pWatch) return dyngWatchError(pWatch, zFunc, pzErr);
  if (erc == DYNG_EBACKEND && pG && pG->pMirror && pG->pMirror->err[0]) {
    /* The graph could not leave a device that was required. */
    *pzErr = sqlite3_mprintf("dyng: graph '%s': %s", pG->zName, pG->pMirror->err);
    pG->pMirror->err[0] = 0;
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  char *zDetail = NULL;
  if (zFmt) {
    va_list ap;
    va_start(ap, zFmt);
    zDetail = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    if (!zDetail) return SQLITE_NOMEM;
  }
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  sqlite3_str_appendf(pStr, "%s: ", zFunc);
  if (pG) sqlite3_str_appendf(pStr, "graph '%s': ", pG->zName);
  sqlite3_str_appendall(pStr, zDetail ? zDetail : dyngSqlText(erc));
  const char *zBackend = (flags & DYNG_ERR_BACKEND) && pG && pG->pMirror
                             ? dyng_mirror_backend_message(pG->pMirror, erc)
                             : NULL;
  if (zBackend) sqlite3_str_appendf(pStr, " (%s backend: %s)", pG->pMirror->be->name, zBackend);
  sqlite3_free(zDetail);
  *pzErr = sqlite3_str_finish(pStr);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

int dyngVtabError(sqlite3_vtab *pVtab, int rc, char *zMsg) {
  if (rc == SQLITE_OK) {
    sqlite3_free(zMsg);
    return rc;
  }
  if (!zMsg) return rc == SQLITE_ERROR ? SQLITE_NOMEM : rc;
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zMsg;
  return rc;
}

int dyngVtabErrorf(sqlite3_vtab *pVtab, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  char *z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return dyngVtabError(pVtab, SQLITE_ERROR, z);
}

void dyngFuncError(sqlite3_context *ctx, int rc, char *zMsg) {
  if (rc == SQLITE_NOMEM || (!zMsg && rc == SQLITE_ERROR)) {
    sqlite3_free(zMsg);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_error(ctx, zMsg ? zMsg : sqlite3_errstr(rc), -1);
  if (rc != SQLITE_ERROR) sqlite3_result_error_code(ctx, rc);
  sqlite3_free(zMsg);
}
