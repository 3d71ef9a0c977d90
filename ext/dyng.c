/*
** ext/dyng.c: entry point of the dyng SQLite extension.
**
**   .load ./dyng
**   CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights='length,minutes');
**   SELECT node, dist FROM dyng_sssp('net', 1);
**
** sqlite3_dyng_init registers, for one database connection, what the
** files of ext/ offer, each through its file's function: the `dyng` module
** of graph tables (dyngRegisterGraphModule, graph_vtab.c), the internal
** dyng__load and dyng__log (dyngRegisterSyncFunctions, sync.c),
** dyng_update (dyngRegisterUpdateFunction, update.c), the table-valued
** functions dyng_sssp, dyng_path, dyng_mosp and dyng_pareto
** (dyngRegisterSsspModules, sssp_vtab.c), dyng_matrix
** (dyngRegisterMatrixModule, matrix.c), dyng_cycle_count
** (dyngRegisterCycleFunctions, cycles.c), dyng_config
** (dyngRegisterConfigFunctions, config.c) and the table-valued
** dyng_read_edges (dyngRegisterReadEdges, read_edges.c); then its own
** dyng_version and, last, the internal dyng__conn.  They all share one
** DyngConn, freed by SQLite when the connection closes.  A second load into
** the same connection finds it (through dyng__conn) and registers nothing.
** It sits at the top of ext/: it calls the files that register modules and
** functions, and none calls it.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

SQLITE_EXTENSION_INIT3

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
  pConn->rMaxMs = -1; /* not set: DYNG_DEFAULT_MAX_MS where it applies */
  pConn->nLandmarks = DYNG_DEFAULT_LANDMARKS;
  pConn->eBackendPref = DYNG_BACKEND_AUTO;

  /* The graph module owns pConn: its destructor frees it, also when the
  ** registration itself fails. */
  rc = dyngRegisterGraphModule(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterSyncFunctions(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterUpdateFunction(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterSsspModules(db, pConn);
  if (rc == SQLITE_OK) rc = dyngRegisterMatrixModule(db, pConn);
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
