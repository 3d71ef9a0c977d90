/*
** ext/config.c: dyng_config(), the settings and diagnostics of the
** extension as JSON.
**
**   SELECT dyng_config();            -- the whole report
**   SELECT dyng_config('backend');   -- one top-level key, as JSON
**   SELECT dyng_config('cache_mb', 512); -- a setting, then the report
**
** The settings, per connection: backend (auto, cpu, cuda), cache_mb,
** max_ms, max_graph_mb and progress.  The report holds the version, the
** SQLite library, how dyng was built, the backend preference, the one this
** connection would get and why, the OpenMP threads, the settings, how an
** interrupt is noticed, and for every graph the connection has seen: its
** definition, size, memory, residency, kept trees and counts, and sync
** counters.  It is built with Jansson; backends.c, cache.c and sync.c
** write their parts.  dyngRefuseFromSchema, which dyng_config and
** dyng_update call first, refuses a call from a CHECK constraint.
*/
#include "ext/dyng_ext.h"

#include "config.h"
#include "engine/parallel.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>

SQLITE_EXTENSION_INIT3

/* The landmarks that aim pG's routes: null while it has none. */
static json_t *dyngLandmarksJson(const DyngGraph *pG) {
  const dyng_landmarks *lm = pG->pMirror ? pG->pMirror->landmarks : NULL;
  if (!lm) return json_null();
  json_t *pObj = json_object(), *pNodes = json_array();
  for (int i = 0; i < dyng_landmarks_count(lm); i++)
    json_array_append_new(pNodes, json_integer(dyng_graph_node_id(pG->pGraph, dyng_landmarks_vertex(lm, i))));
  int iObj = dyng_landmarks_objective(lm);
  json_object_set_new(pObj, "objective", pG->nWeight ? json_string(pG->azWeight[iObj]) : json_integer(iObj));
  json_object_set_new(pObj, "nodes", pNodes);
  json_object_set_new(pObj, "bytes", json_integer((json_int_t)dyng_landmarks_bytes(lm)));
  json_object_set_new(pObj, "updates", json_integer(dyng_landmarks_updates(lm)));
  json_object_set_new(pObj, "recomputes", json_integer(dyng_landmarks_recomputes(lm)));
  return pObj;
}

/* Formats ms since the epoch as ISO 8601 UTC into zBuf (at least 32 bytes). */
static void dyngIsoTime(sqlite3_int64 ms, char *zBuf) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n = strftime(zBuf, 24, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(zBuf + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

static json_t *dyngGraphJson(DyngGraph *pG) {
  json_t *pObj = json_object();
  json_t *pW = json_array();
  for (int k = 0; k < pG->nWeight; k++) json_array_append_new(pW, json_string(pG->azWeight[k]));
  json_object_set_new(pObj, "schema", json_string(pG->zDb));
  json_object_set_new(pObj, "name", json_string(pG->zName));
  json_object_set_new(pObj, "edge_table", json_string(pG->zEdges));
  json_object_set_new(pObj, "src", json_string(pG->zSrc));
  json_object_set_new(pObj, "dst", json_string(pG->zDst));
  json_object_set_new(pObj, "weights", pW);
  json_object_set_new(pObj, "directed", json_boolean(pG->bDirected));
  json_object_set_new(pObj, "backend_option",
                      pG->eBackendPref >= 0 ? json_string(dyngBackendPrefName(pG->eBackendPref)) : json_null());
  json_object_set_new(pObj, "change_log", json_string(pG->zLog));
  json_object_set_new(pObj, "loaded", json_boolean(pG->pGraph != NULL));
  if (pG->pGraph) {
    char zTime[32];
    const dyng_mirror *m = pG->pMirror;
    size_t nDevice = dyng_mirror_device_bytes(m);
    json_object_set_new(pObj, "vertices", json_integer(dyng_graph_n_vertices(pG->pGraph)));
    json_object_set_new(pObj, "edges", json_integer(dyng_graph_n_edges(pG->pGraph)));
    json_object_set_new(pObj, "memory_bytes", json_integer((json_int_t)dyngGraphHostBytes(pG)));
    json_object_set_new(pObj, "backend", json_string(m->be->name));
    json_object_set_new(pObj, "backend_reason", json_string(m->why));
    json_object_set_new(pObj, "residency", json_string(m->be->caps & DYNG_CAP_DEVICE ? "device" : "host"));
    /* Which backend computes each analysis of this graph: the mirror's rule
    ** (engine/mirror.h; docs/backends.md). */
    json_t *pRuns = json_object();
    json_object_set_new(pRuns, "shortest_paths", json_string(dyng_mirror_runs_on(m, DYNG_RUNS_SSSP)));
    json_object_set_new(pRuns, "mosp_path", json_string(dyng_mirror_runs_on(m, DYNG_RUNS_MOSP)));
    json_object_set_new(pRuns, "pareto", json_string(dyng_mirror_runs_on(m, DYNG_RUNS_PARETO)));
    json_object_set_new(pRuns, "cycle_counts", json_string(dyng_mirror_runs_on(m, DYNG_RUNS_CYCLES)));
    json_object_set_new(pRuns, "matrix", json_string(dyng_mirror_runs_on(m, DYNG_RUNS_MATRIX)));
    json_object_set_new(pObj, "runs_on", pRuns);
    json_t *pMat = json_object();
    json_object_set_new(pMat, "on_backend", json_integer(m->matrices_backend));
    json_object_set_new(pMat, "on_host", json_integer(m->matrices_host));
    json_object_set_new(pObj, "matrices", pMat);
    json_object_set_new(pObj, "device_bytes", json_integer((json_int_t)nDevice));
    dyngIsoTime(pG->loadTime, zTime);
    json_object_set_new(pObj, "last_load", json_string(zTime));
    json_object_set_new(pObj, "load_ms", json_real(pG->loadMs));
  }
  json_object_set_new(pObj, "loads", json_integer(pG->nLoad));
  json_object_set_new(pObj, "reloads", json_integer(pG->nLoad > 1 ? pG->nLoad - 1 : 0));
  json_object_set_new(pObj, "batches", json_integer(pG->nBatch));
  json_object_set_new(pObj, "reverts", json_integer(pG->nRevert));
  json_object_set_new(pObj, "inserted", json_integer(pG->nInserted));
  json_object_set_new(pObj, "deleted", json_integer(pG->nDeleted));
  json_object_set_new(pObj, "log_position", json_integer(pG->iLogSeq));
  json_object_set_new(pObj, "log_limit", json_integer(pG->nLogLimit));
  if (pG->pGraph) {
    sqlite3_int64 nPending = 0;
    char zTime[32];
    if (dyngPendingEntries(pG, &nPending) == SQLITE_OK)
      json_object_set_new(pObj, "pending", json_integer(nPending));
    dyngIsoTime(pG->syncTime, zTime);
    json_object_set_new(pObj, "last_sync", json_string(zTime));
    json_object_set_new(pObj, "tentative", json_boolean(pG->bTentative));
    json_object_set_new(pObj, "undo_records", json_integer(pG->nUndo));
    json_object_set_new(pObj, "trees", dyngTreesJson(pG, -1));
    json_object_set_new(pObj, "cycle_counts", dyngCountsJson(pG, -1));
    json_object_set_new(pObj, "landmarks", dyngLandmarksJson(pG));
  }
  return pObj;
}

static json_t *dyngConfigJson(DyngConn *pConn) {
  json_t *pRoot = json_object();
  json_t *pBuild = json_object();
  json_t *pBackend = json_object();
  json_t *pGraphs = json_array();
  int nThread = dyng_threads();
  json_object_set_new(pBuild, "flags", json_string(DYNG_BUILD_FLAGS));
#ifdef DYNG_SANITIZED
  json_object_set_new(pBuild, "sanitizers", json_true());
#else
  json_object_set_new(pBuild, "sanitizers", json_false());
#endif
  json_object_set_new(pBuild, "sqlite_compiled", json_string(SQLITE_VERSION));
  char zWhy[400], zName[16];
  dyngBackendPreview(pConn->eBackendPref, zName, (int)sizeof zName, zWhy, (int)sizeof zWhy);
  json_object_set_new(pBackend, "preference", json_string(dyngBackendPrefName(pConn->eBackendPref)));
  json_object_set_new(pBackend, "name", json_string(zName));
  json_object_set_new(pBackend, "reason", json_string(zWhy));
  json_object_set_new(pBackend, "abi", json_integer(DYNG_BACKEND_ABI));
  /* The list holds the newest first; the report lists them oldest first. */
  for (DyngGraph *p = pConn->pGraphs; p; p = p->pNext)
    json_array_insert_new(pGraphs, 0, dyngGraphJson(p));
  json_object_set_new(pRoot, "version", json_string(PACKAGE_VERSION));
  json_object_set_new(pRoot, "sqlite", json_string(sqlite3_libversion()));
  json_object_set_new(pRoot, "build", pBuild);
  json_object_set_new(pRoot, "backend", pBackend);
  dyngBackendsJson(pRoot);
  json_object_set_new(pRoot, "threads", json_integer(nThread));
  json_object_set_new(pRoot, "progress", json_boolean(pConn->bProgress));
  json_object_set_new(pRoot, "cache_mb", json_real((double)pConn->pool.limit / (1 << 20)));
  json_object_set_new(pRoot, "cache_bytes", json_integer(pConn->pool.bytes));
  json_object_set_new(pRoot, "max_ms",
                      pConn->rMaxMs < 0 ? json_null()
                      : pConn->rMaxMs == floor(pConn->rMaxMs) ? json_integer((json_int_t)pConn->rMaxMs)
                                                               : json_real(pConn->rMaxMs));
  json_object_set_new(pRoot, "interrupt_check", json_string(dyngInterruptCheck()));
  json_object_set_new(pRoot, "max_graph_mb", json_real((double)pConn->nMaxGraphBytes / (1 << 20)));
  json_object_set_new(pRoot, "landmarks", json_integer(pConn->nLandmarks));
  json_object_set_new(pRoot, "graphs", pGraphs);
  return pRoot;
}

/* dyng_config(key, value) changes a setting of this connection: backend,
** progress, landmarks, cache_mb (the memory of kept shortest-path trees), max_ms (the
** time a query's computation may take; not set at first) and
** max_graph_mb (the memory of one graph's mirror).  A NULL value puts the
** setting back as a new connection has it. */
static int dyngConfigSet(sqlite3_context *ctx, DyngConn *pConn, const char *zKey,
                         sqlite3_value *pVal) {
  int bNull = sqlite3_value_type(pVal) == SQLITE_NULL;
  if (sqlite3_stricmp(zKey, "backend") == 0) {
    int ePref = DYNG_BACKEND_AUTO;
    if (!bNull && (sqlite3_value_type(pVal) != SQLITE_TEXT ||
                   !dyngBackendPrefParse((const char *)sqlite3_value_text(pVal), &ePref))) {
      sqlite3_result_error(ctx, "dyng_config: backend must be 'auto', 'cpu' or 'cuda' ('gpu' "
                                "says the same), or NULL for the default, 'auto'",
                           -1);
      return 0;
    }
    if (ePref != pConn->eBackendPref) {
      pConn->eBackendPref = ePref;
      /* Graphs without a backend= option move at their next use. */
      for (DyngGraph *p = pConn->pGraphs; p; p = p->pNext)
        if (p->eBackendPref < 0 && p->pGraph) p->bReattach = 1;
    }
    return 1;
  }
  if (sqlite3_stricmp(zKey, "landmarks") == 0) {
    int t = sqlite3_value_numeric_type(pVal);
    sqlite3_int64 x = bNull ? DYNG_DEFAULT_LANDMARKS : sqlite3_value_int64(pVal);
    if (!bNull && (t != SQLITE_INTEGER || x < 0 || x > DYNG_MAX_LANDMARKS)) {
      dyngFuncError(ctx, SQLITE_ERROR,
                    sqlite3_mprintf("dyng_config: landmarks must be an integer from 0 (routes not aimed) to %d, "
                                    "or NULL for the default, %d",
                                    DYNG_MAX_LANDMARKS, DYNG_DEFAULT_LANDMARKS));
      return 0;
    }
    pConn->nLandmarks = (int)x;
    return 1;
  }
  if (sqlite3_stricmp(zKey, "progress") == 0) {
    int t = sqlite3_value_numeric_type(pVal);
    sqlite3_int64 x = bNull ? 0 : sqlite3_value_int64(pVal);
    if (!bNull && (t != SQLITE_INTEGER || (x != 0 && x != 1))) {
      sqlite3_result_error(ctx, "dyng_config: progress must be 0 or 1, or NULL for the default, 0",
                           -1);
      return 0;
    }
    pConn->bProgress = (int)x;
    return 1;
  }
  if (sqlite3_stricmp(zKey, "max_ms") == 0 || sqlite3_stricmp(zKey, "max_graph_mb") == 0) {
    int bMs = sqlite3_stricmp(zKey, "max_ms") == 0;
    int t = sqlite3_value_numeric_type(pVal);
    double x = sqlite3_value_double(pVal);
    if (!bNull && ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(x >= 0) || x > 1e12)) {
      sqlite3_result_error(ctx, bMs ? "dyng_config: max_ms must be a number of milliseconds from 0 "
                                      "(no limit) to 1e12, or NULL for not set"
                                    : "dyng_config: max_graph_mb must be a number of MiB from 0 "
                                      "(no limit) to 1e12, or NULL for the default, 0",
                           -1);
      return 0;
    }
    if (bMs) pConn->rMaxMs = bNull ? -1 : x;
    else pConn->nMaxGraphBytes = bNull ? 0 : (sqlite3_int64)ceil(x * (1 << 20));
    return 1;
  }
  if (sqlite3_stricmp(zKey, "cache_mb") != 0) {
    dyngFuncError(ctx, SQLITE_ERROR,
                  sqlite3_mprintf("dyng_config: '%s' cannot be set (settable: backend, cache_mb, "
                                  "landmarks, max_ms, max_graph_mb, progress)", zKey));
    return 0;
  }
  int t = sqlite3_value_numeric_type(pVal);
  double mb = bNull ? DYNG_DEFAULT_CACHE_MB : sqlite3_value_double(pVal);
  if (!bNull && ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(mb >= 0) || mb > 1e9)) {
    sqlite3_result_error(ctx, "dyng_config: cache_mb must be a number of MiB from 0 to 1e9, or "
                              "NULL for the default, 256",
                         -1);
    return 0;
  }
  pConn->pool.limit = (int64_t)(mb * (1 << 20));
  dyng_mirror_pool_fit(&pConn->pool);
  return 1;
}

/* 1 when zFunc (an identifier) occurs in zSql, in any case. */
static int dyngSqlNames(const char *zSql, const char *zFunc) {
  int n = (int)strlen(zFunc);
  for (const char *z = zSql; *z; z++)
    if (sqlite3_strnicmp(z, zFunc, n) == 0) return 1;
  return 0;
}

/*
** SQLITE_DIRECTONLY keeps a function out of views, triggers and most of a
** schema, but a CHECK constraint still runs it: on SQLite 3.40 always, and
** on later versions (up to 3.54 at least) when the function was registered
** after the schema was read, as loading dyng usually is.  A statement that
** writes a table whose planted CHECK calls dyng_config(key, value) or
** dyng_update would change settings or run a sync on the writer's behalf.
**
** SQLite says nothing of where a call comes from, so this goes by the
** statements that are running: a CHECK constraint runs inside an INSERT or
** UPDATE, and a direct call is written in the statement's own text.  So a
** call is refused (1, with SQLite's "unsafe use" error set on ctx) while a
** statement that writes is running whose text does not name zFunc and no
** running statement names it.  A writing statement left half-read (an
** INSERT ... RETURNING whose rows are still being read) then does not
** refuse the calls of the statements that follow.  (A statement prepared
** with the legacy sqlite3_prepare has no text to read: its calls pass.)
*/
int dyngRefuseFromSchema(sqlite3_context *ctx, const char *zFunc) {
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int bForeignWrite = 0;
  for (sqlite3_stmt *p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p)) {
    if (!sqlite3_stmt_busy(p)) continue;
    const char *zSql = sqlite3_sql(p);
    if (!zSql || dyngSqlNames(zSql, zFunc)) return 0;
    if (!sqlite3_stmt_readonly(p)) bForeignWrite = 1;
  }
  if (!bForeignWrite) return 0;
  char *zMsg = sqlite3_mprintf("unsafe use of %s(): only top-level SQL may call it, and this call "
                               "comes from the schema of a table the statement writes (a CHECK "
                               "constraint)",
                               zFunc);
  dyngFuncError(ctx, SQLITE_ERROR, zMsg);
  return 1;
}

/* dyng_config() returns the report; dyng_config(key) one top-level entry of
** it, as JSON; dyng_config(key, value) sets key first. */
static void dyngConfigFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  DyngConn *pConn = sqlite3_user_data(ctx);
  if (dyngRefuseFromSchema(ctx, "dyng_config")) return;
  if (argc == 2) {
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
      sqlite3_result_error(ctx, "dyng_config: key must be text", -1);
      return;
    }
    if (!dyngConfigSet(ctx, pConn, (const char *)sqlite3_value_text(argv[0]), argv[1])) return;
  }
  dyngGraphsForgetGone(pConn); /* no graph of a detached database */
  json_t *pRoot = dyngConfigJson(pConn);
  json_t *pOut = pRoot;
  if (argc >= 1) {
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
      json_decref(pRoot);
      sqlite3_result_error(ctx, "dyng_config: key must be text", -1);
      return;
    }
    const char *zKey = (const char *)sqlite3_value_text(argv[0]);
    pOut = json_object_get(pRoot, zKey);
    if (!pOut) {
      char *zMsg = sqlite3_mprintf("dyng_config: unknown key '%s' (known: version, sqlite, build, "
                                   "backend, driver, devices, plugins, discovery, threads, progress, cache_mb, cache_bytes, "
                                   "max_ms, max_graph_mb, landmarks, interrupt_check, graphs)",
                                   zKey);
      json_decref(pRoot);
      dyngFuncError(ctx, SQLITE_ERROR, zMsg);
      return;
    }
  }
  char *zJson = json_dumps(pOut, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
  json_decref(pRoot);
  if (!zJson) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zJson, -1, SQLITE_TRANSIENT);
  free(zJson);
}

int dyngRegisterConfigFunctions(sqlite3 *db, DyngConn *pConn) {
  int rc = SQLITE_OK;
  for (int n = 0; n <= 2 && rc == SQLITE_OK; n++)
    rc = sqlite3_create_function_v2(db, "dyng_config", n, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                    dyngConfigFunc, NULL, NULL, NULL);
  return rc;
}
