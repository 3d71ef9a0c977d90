/*
** ext/dyng.c: entry point of the dyng SQLite extension.
**
**   .load ./dyng
**   CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights='length,minutes');
**   SELECT node, dist FROM dyng_sssp('net', 1);
**
** sqlite3_dyng_init registers, for one database connection, the `dyng`
** module (graph tables), the table-valued functions dyng_sssp and
** dyng_path, and the scalar functions dyng_version and dyng_config.  They
** all share one DyngConn, freed by SQLite when the connection closes.  A
** second load into the same connection finds it (through the internal
** dyng__conn) and registers nothing.  This file also finds graphs by name
** for the functions.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

SQLITE_EXTENSION_INIT1

double dyngNowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- progress reports -------------------------------------------------- */

#define DYNG_PROGRESS_MS 2000.0

void dyngProgressStart(DyngProgress *p, const DyngConn *pConn, const char *zWhat, const char *zUnit) {
  p->pConn = pConn;
  p->zWhat = zWhat;
  p->zUnit = zUnit;
  p->t0 = dyngNowMs();
  p->tNext = p->t0 + DYNG_PROGRESS_MS;
  p->bReported = 0;
}

/* n with an M or K for millions and thousands, into z (32 bytes). */
static void dyngShortCount(double n, char *z) {
  if (n >= 1e6) snprintf(z, 32, "%.1fM", n / 1e6);
  else if (n >= 1e4) snprintf(z, 32, "%.0fK", n / 1e3);
  else snprintf(z, 32, "%.0f", n);
}

void dyngProgressTick(DyngProgress *p, sqlite3_int64 done, sqlite3_int64 total) {
  if (!p->pConn || !p->pConn->bProgress) return;
  double now = dyngNowMs();
  if (now < p->tNext) return;
  p->tNext = now + DYNG_PROGRESS_MS;
  p->bReported = 1;
  char zDone[32], zTotal[32], zRate[32];
  double s = (now - p->t0) / 1e3;
  dyngShortCount((double)done, zDone);
  dyngShortCount((double)total, zTotal);
  dyngShortCount(s > 0 ? (double)done / s : 0, zRate);
  if (total > 0)
    fprintf(stderr, "dyng: %s: %s of %s %s (%.0f%%), %s %s/s, %.0f s\n", p->zWhat, zDone, zTotal, p->zUnit,
            100.0 * (double)done / (double)total, zRate, p->zUnit, s);
  else
    fprintf(stderr, "dyng: %s: %s %s, %s %s/s, %.0f s\n", p->zWhat, zDone, p->zUnit, zRate, p->zUnit, s);
  fflush(stderr);
}

void dyngProgressEnd(DyngProgress *p, sqlite3_int64 done) {
  if (!p->bReported) return;
  char zDone[32];
  dyngShortCount((double)done, zDone);
  fprintf(stderr, "dyng: %s: done, %s %s in %.1f s\n", p->zWhat, zDone, p->zUnit, (dyngNowMs() - p->t0) / 1e3);
  fflush(stderr);
}

sqlite3_int64 dyngEpochMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (sqlite3_int64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int dyngValueAsNodeId(sqlite3_value *v, sqlite3_int64 *piNode) {
  int t = sqlite3_value_type(v);
  if (t == SQLITE_TEXT) t = sqlite3_value_numeric_type(v);
  if (t == SQLITE_INTEGER) {
    *piNode = sqlite3_value_int64(v);
    return 1;
  }
  if (t == SQLITE_FLOAT) {
    double r = sqlite3_value_double(v);
    /* Integral and inside int64 (2^63 itself is not). */
    if (r >= -9223372036854775808.0 && r < 9223372036854775808.0 && r == (double)(sqlite3_int64)r) {
      *piNode = (sqlite3_int64)r;
      return 1;
    }
  }
  return 0;
}

char *dyngStrFinish(sqlite3_str *pStr) {
  int bEmpty = sqlite3_str_errcode(pStr) == SQLITE_OK && sqlite3_str_length(pStr) == 0;
  char *z = sqlite3_str_finish(pStr);
  return (!z && bEmpty) ? sqlite3_mprintf("") : z;
}

char *dyngEngineError(const char *zFunc, const DyngGraph *pG, int rc) {
  if (pG) return sqlite3_mprintf("%s: graph '%s': %s", zFunc, pG->zName, dyng_strerror(rc));
  return sqlite3_mprintf("%s: %s", zFunc, dyng_strerror(rc));
}

char *dyngBackendError(const char *zFunc, const DyngGraph *pG, int rc) {
  const char *zMsg = dyng_mirror_backend_message(pG->pMirror, rc);
  if (!zMsg) return dyngEngineError(zFunc, pG, rc);
  return sqlite3_mprintf("%s: graph '%s': %s (%s backend: %s)", zFunc, pG->zName, dyng_strerror(rc),
                         pG->pMirror->be->name, zMsg);
}

DyngGraph *dyngGraphFind(DyngConn *pConn, const char *zDb, const char *zName) {
  DyngGraph *pFound = NULL;
  for (DyngGraph *p = pConn->pGraphs; p; p = p->pNext) {
    if (sqlite3_stricmp(p->zName, zName) != 0) continue;
    if (zDb) {
      if (sqlite3_stricmp(p->zDb, zDb) == 0) return p;
      continue;
    }
    /* Without a schema, SQLite's own order: temp, main, then attached. */
    if (sqlite3_stricmp(p->zDb, "temp") == 0) return p;
    if (!pFound || sqlite3_stricmp(p->zDb, "main") == 0) pFound = p;
  }
  return pFound;
}

int dyngGraphInItsDb(const DyngGraph *pG) {
  if (sqlite3_stricmp(pG->zDb, "main") == 0 || sqlite3_stricmp(pG->zDb, "temp") == 0) return 1;
  const char *zFile = sqlite3_db_filename(pG->pConn->db, pG->zDb);
  if (!zFile || strcmp(zFile, pG->zFile) != 0) return 0;
  return zFile[0] != 0 || pG->nRef > 0;
}

void dyngGraphsForgetGone(DyngConn *pConn) {
  DyngGraph **pp = &pConn->pGraphs;
  while (*pp) {
    DyngGraph *pG = *pp;
    if (pG->nRef == 0 && !pG->bBusy && !dyngGraphInItsDb(pG)) {
      *pp = pG->pNext;
      dyngGraphFree(pG);
    } else {
      pp = &pG->pNext;
    }
  }
}

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

/* Destructor of the shared DyngConn: runs when the connection closes, after
** SQLite has disconnected every virtual table of the dyng module. */
void dyngConnFree(void *p) {
  DyngConn *pConn = p;
  while (pConn->pGraphs) {
    DyngGraph *pG = pConn->pGraphs;
    pConn->pGraphs = pG->pNext;
    dyngGraphFree(pG);
  }
  sqlite3_free(pConn);
}

static void dyngVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, PACKAGE_VERSION, -1, SQLITE_STATIC);
}

#ifndef SQLITE_CORE
/* Guards the first assignment of sqlite3_api, which every connection's
** initialization reads. */
static pthread_mutex_t dyngInitMutex = PTHREAD_MUTEX_INITIALIZER;
#endif

/* ---- one registration per connection ------------------------------------ */

/* The pointer type under which dyng__conn() is handed the address to write
** its DyngConn to.  It holds the address of this copy of the library, so
** that another copy of dyng in the process (loaded from another file) does
** not answer for this one. */
static char dyngConnPtrType[48];
static pthread_once_t dyngConnPtrOnce = PTHREAD_ONCE_INIT;

static void dyngConnPtrTypeInit(void) {
  snprintf(dyngConnPtrType, sizeof dyngConnPtrType, "dyng-conn %p", (void *)dyngConnPtrType);
}

/* dyng__conn(p): writes the connection's DyngConn to p, a pointer bound
** with the type dyngConnPtrType, and returns 1; any other argument (a
** value from SQL, another copy's pointer) gives 0. */
static void dyngConnFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  DyngConn **ppConn = sqlite3_value_pointer(argv[0], dyngConnPtrType);
  if (ppConn) *ppConn = sqlite3_user_data(ctx);
  sqlite3_result_int(ctx, ppConn != NULL);
}

/* 1 when db has a function dyng__conn of one argument, by PRAGMA
** function_list: asking by calling it would leave an error and an
** sqlite3_log line ("no such function") on every first load.  A build
** without the pragma answers nothing, as for a first load. */
static int dyngHasConnFunc(sqlite3 *db, int *pbHas) {
  sqlite3_stmt *pStmt = NULL;
  *pbHas = 0;
  int rc = sqlite3_prepare_v2(db, "PRAGMA function_list", -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  int iNarg = -1;
  for (int i = 0; pStmt && i < sqlite3_column_count(pStmt); i++)
    if (sqlite3_stricmp(sqlite3_column_name(pStmt, i), "narg") == 0) iNarg = i;
  while (pStmt && sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    if (zName && sqlite3_stricmp(zName, "dyng__conn") == 0 &&
        (iNarg < 0 || sqlite3_column_int(pStmt, iNarg) == 1))
      *pbHas = 1;
  }
  return sqlite3_finalize(pStmt);
}

/* Asks db whether this library is already registered on it, through
** dyng__conn(), registered last by a load that succeeded.  SQLITE_OK with
** *ppConn the connection's DyngConn, or NULL when dyng is not registered;
** SQLITE_ERROR with *pzErrMsg set when another copy of dyng is.  Neither
** statement names a table, so no schema is read. */
static int dyngConnOfDb(sqlite3 *db, DyngConn **ppConn, char **pzErrMsg) {
  sqlite3_stmt *pStmt = NULL;
  int bHas;
  *ppConn = NULL;
  int rc = dyngHasConnFunc(db, &bHas);
  if (rc != SQLITE_OK || !bHas) return rc;
  rc = sqlite3_prepare_v2(db, "SELECT dyng__conn(?1)", -1, &pStmt, NULL);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_pointer(pStmt, 1, ppConn, dyngConnPtrType, NULL);
  rc = sqlite3_step(pStmt);
  int bOurs = rc == SQLITE_ROW && sqlite3_column_int(pStmt, 0) == 1;
  rc = sqlite3_finalize(pStmt);
  if (rc != SQLITE_OK) return rc;
  if (!bOurs || !*ppConn) {
    *ppConn = NULL;
    *pzErrMsg = sqlite3_mprintf("dyng: this connection already has dyng__conn() from another copy "
                                "of dyng; a connection can use dyng from one library file only");
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_dyng_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  /* Every call into SQLite goes through the routine table of the library
  ** that loaded dyng first.  A process holding two SQLite libraries (an
  ** application's own and the system's, say) can use dyng from one of them
  ** only: the other is refused instead of being handed the first one's
  ** routines. */
#ifdef SQLITE_CORE
  /* Compiled into the application (the fuzzers): SQLite is called
  ** directly, there is no routine table. */
  const sqlite3_api_routines *pFirst = pApi;
#else
  pthread_mutex_lock(&dyngInitMutex);
  if (!sqlite3_api) sqlite3_api = pApi;
  const sqlite3_api_routines *pFirst = sqlite3_api;
  pthread_mutex_unlock(&dyngInitMutex);
#endif
  if (pFirst != pApi) {
    *pzErrMsg = pApi->mprintf("dyng is already in use by another SQLite library in this process "
                              "(SQLite %s; this one is %s): a process can use dyng from one SQLite "
                              "library only",
                              pFirst->libversion(), pApi->libversion());
    return SQLITE_ERROR;
  }
  if (sqlite3_libversion_number() < 3031000) {
    *pzErrMsg = sqlite3_mprintf("dyng needs SQLite 3.31.0 or newer (this is %s)",
                                sqlite3_libversion());
    return SQLITE_ERROR;
  }
  /* Loaded again into a connection that has it (an application's
  ** on-connect hook run twice): registering again would make SQLite free
  ** the DyngConn that the connected graphs, and the settings, live in. */
  pthread_once(&dyngConnPtrOnce, dyngConnPtrTypeInit);
  DyngConn *pConn = NULL;
  int rc = dyngConnOfDb(db, &pConn, pzErrMsg);
  if (rc != SQLITE_OK || pConn) return rc;
  pConn = sqlite3_malloc(sizeof *pConn);
  if (!pConn) return SQLITE_NOMEM;
  memset(pConn, 0, sizeof *pConn);
  pConn->db = db;
  dyng_mirror_pool_init(&pConn->pool, (int64_t)DYNG_DEFAULT_CACHE_MB << 20);
  dyngWatchHooks(pConn);
  pConn->nMaxMs = -1; /* not set: DYNG_DEFAULT_MAX_MS where it applies */
  pConn->eBackendPref = DYNG_BACKEND_AUTO;

  /* The graph module owns pConn: its destructor frees it, also when the
  ** registration itself fails. */
  rc = dyngRegisterGraphModule(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterSyncFunctions(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterSsspModules(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterCycleFunctions(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterConfigFunctions(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterReadEdges(db);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "dyng_version", 0,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                    dyngVersionFunc, NULL, NULL, NULL);
  /* Last: it says that everything above is registered. */
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "dyng__conn", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                    dyngConnFunc, NULL, NULL, NULL);
  if (rc != SQLITE_OK) *pzErrMsg = sqlite3_mprintf("dyng: %s", sqlite3_errstr(rc));
  return rc;
}
