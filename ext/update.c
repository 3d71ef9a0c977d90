/*
** ext/update.c: dyng_update, bringing a graph up to date on demand.
**
**   SELECT dyng_update('net');              -- apply the pending changes now
**   SELECT dyng_update('net', 'reload');    -- load it again from its table
**   SELECT dyng_update('net', 'reattach');  -- install its capture again
**
** The work is ext/sync.c's (and for 'reattach' ext/graph_vtab.c's
** dyngGraphReattach, which installs ext/capture.c's triggers again); this
** file reports what it took, with what the kept trees and counts did.
*/
#include "ext/dyng_ext.h"

#include <jansson.h>
#include <stdlib.h>

SQLITE_EXTENSION_INIT3

/*
** dyng_update(graph[, 'reload' | 'reattach']): brings the graph up to date
** now (or reloads it from the table, or installs its change capture again
** and reloads: dyngGraphReattach) and returns what that took, as JSON:
** {"graph", "inserted", "deleted", "batches", "reloads", "ms", "read_ms", "apply_ms",
** "backend_ms", "kept_ms", "trees", "cycle_counts"}.
*/
static void dyngUpdateFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  DyngConn *pConn = sqlite3_user_data(ctx);
  if (dyngRefuseFromSchema(ctx, "dyng_update")) return;
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "dyng_update: graph must be the name of a dyng table", -1);
    return;
  }
  int bReload = 0, bReattach = 0;
  if (argc > 1) {
    const char *zMode = (const char *)sqlite3_value_text(argv[1]);
    bReload = zMode && sqlite3_stricmp(zMode, "reload") == 0;
    bReattach = zMode && sqlite3_stricmp(zMode, "reattach") == 0;
    if (!bReload && !bReattach) {
      sqlite3_result_error(ctx, "dyng_update: the second argument can only be 'reload' or "
                                "'reattach'", -1);
      return;
    }
  }
  DyngGraph *pG = NULL;
  char *zErr = NULL;
  double t0 = dyngNowMs();
  sqlite3_int64 nIns = 0, nDel = 0, nBatch = 0, nLoad = 0, iStamp = pConn->pool.update_stamp;
  double readMs = 0, applyMs = 0, backendMs = 0, keptMs = 0;
  int rc = dyngGraphOpen(pConn, "dyng_update", (const char *)sqlite3_value_text(argv[0]), 0, &pG,
                         &zErr);
  if (rc == SQLITE_OK) {
    nIns = pG->nInserted, nDel = pG->nDeleted, nBatch = pG->nBatch, nLoad = pG->nLoad;
    readMs = pG->readMs, applyMs = pG->applyMs, backendMs = pG->backendMs, keptMs = pG->keptMs;
    rc = bReattach ? dyngGraphReattach(pG, &zErr)
         : bReload ? dyngGraphLoad(pG, 0, &zErr)
                   : dyngGraphSync(pG, &zErr);
  }
  if (rc != SQLITE_OK) {
    dyngFuncError(ctx, rc, zErr);
    return;
  }
  json_t *pObj = json_object();
  json_object_set_new(pObj, "graph", json_string(pG->zName));
  json_object_set_new(pObj, "inserted", json_integer(pG->nInserted - nIns));
  json_object_set_new(pObj, "deleted", json_integer(pG->nDeleted - nDel));
  json_object_set_new(pObj, "batches", json_integer(pG->nBatch - nBatch));
  json_object_set_new(pObj, "reloads", json_integer(pG->nLoad - nLoad));
  json_object_set_new(pObj, "ms", json_real(dyngNowMs() - t0));
  json_object_set_new(pObj, "read_ms", json_real(pG->readMs - readMs));
  json_object_set_new(pObj, "apply_ms", json_real(pG->applyMs - applyMs));
  json_object_set_new(pObj, "backend_ms", json_real(pG->backendMs - backendMs));
  json_object_set_new(pObj, "kept_ms", json_real(pG->keptMs - keptMs));
  json_object_set_new(pObj, "trees", pG->pGraph ? dyngTreesJson(pG, iStamp) : json_array());
  json_object_set_new(pObj, "cycle_counts", dyngCountsJson(pG, iStamp));
  char *zJson = json_dumps(pObj, JSON_COMPACT | JSON_REAL_PRECISION(6));
  json_decref(pObj);
  if (!zJson) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zJson, -1, SQLITE_TRANSIENT);
  free(zJson);
}

int dyngRegisterUpdateFunction(sqlite3 *db, DyngConn *pConn) {
  int rc = SQLITE_OK;
  for (int n = 1; n <= 2 && rc == SQLITE_OK; n++)
    rc = sqlite3_create_function_v2(db, "dyng_update", n, SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                    dyngUpdateFunc, NULL, NULL, NULL);
  return rc;
}
