/*
** ext/cycles.c: dyng_cycle_count, with counts kept and updated per batch.
**
**   SELECT dyng_cycle_count('net', 3);               -- triangles, undirected view
**   SELECT dyng_cycle_count('net', 5, 'directed');   -- directed 5-cycles
**
** The count is of simple cycles of exactly k edges, 3 <= k <= 10, in the
** graph seen as undirected and simple (parallel edges and self-loops
** ignored), or of directed simple cycles with 'directed'; each cycle once
** (engine/cycles.h says how, and what large k costs).  A count, once asked
** for, is kept per (graph, k, mode); each batch then updates it from the
** cycles through the changed edges instead of counting again, unless the
** update runs longer than the last count from scratch took: then it counts
** again (engine/mirror.c keeps the counts; here is the SQL function).
*/
#include "ext/dyng_ext.h"
#include "engine/cycles.h"
#include "engine/error.h"

#include <jansson.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/* dyng_cycle_count(graph, k[, 'directed']) */
static void dyngCycleCountFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  DyngConn *pConn = sqlite3_user_data(ctx);
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "dyng_cycle_count: graph must be the name of a dyng table", -1);
    return;
  }
  if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER || sqlite3_value_int64(argv[1]) < DYNG_CYCLES_MIN_K ||
      sqlite3_value_int64(argv[1]) > DYNG_CYCLES_MAX_K) {
    sqlite3_result_error(ctx, "dyng_cycle_count: k must be an integer from 3 to 10", -1);
    return;
  }
  int k = sqlite3_value_int(argv[1]), bDirected = 0;
  if (argc > 2) {
    const char *zMode = (const char *)sqlite3_value_text(argv[2]);
    if (!zMode || (sqlite3_stricmp(zMode, "directed") && sqlite3_stricmp(zMode, "undirected"))) {
      sqlite3_result_error(ctx, "dyng_cycle_count: the third argument can only be 'directed' or "
                                "'undirected'", -1);
      return;
    }
    bDirected = sqlite3_stricmp(zMode, "directed") == 0;
  }
  DyngGraph *pG = NULL;
  char *zErr = NULL;
  int rc = dyngGraphOpen(pConn, "dyng_cycle_count", (const char *)sqlite3_value_text(argv[0]), 1,
                         &pG, &zErr);
  if (rc != SQLITE_OK) {
    dyngFuncError(ctx, rc, zErr);
    return;
  }
  uint64_t n = 0;
  DyngWatch watch;
  dyngWatchBegin(&watch, pConn, 1);
  char *zWhat = sqlite3_mprintf("counting %d-cycles%s of graph '%s'", k, bDirected ? " (directed)" : "",
                                pG->zName);
  dyngWatchProgressStart(&watch, zWhat ? zWhat : "counting cycles", "roots");
  int erc = dyng_mirror_cycles(pG->pMirror, k, bDirected, &watch.cancel, &n);
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  dyngWatchEnd(&watch, view.n_vertices);
  sqlite3_free(zWhat);
  if (erc == DYNG_EOVERFLOW)
    rc = dyngEngineFail(pG, erc, &watch, "dyng_cycle_count", 0, &zErr,
                        "more %d-cycles than a 64-bit count holds", k);
  else
    rc = dyngEngineFail(pG, erc, &watch, "dyng_cycle_count", DYNG_ERR_BACKEND, &zErr, NULL);
  if (rc == SQLITE_OK && n > (uint64_t)INT64_MAX)
    rc = dyngEngineFail(pG, DYNG_EOVERFLOW, NULL, "dyng_cycle_count", 0, &zErr,
                        "%llu %d-cycles, more than SQLite's 64-bit integers hold", (unsigned long long)n, k);
  if (rc != SQLITE_OK) {
    dyngFuncError(ctx, rc, zErr);
    return;
  }
  sqlite3_result_int64(ctx, (sqlite3_int64)n);
}

int dyngRegisterCycleFunctions(sqlite3 *db, DyngConn *pConn) {
  int rc = SQLITE_OK;
  for (int n = 2; n <= 3 && rc == SQLITE_OK; n++)
    rc = sqlite3_create_function_v2(db, "dyng_cycle_count", n, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                                    pConn, dyngCycleCountFunc, NULL, NULL, NULL);
  return rc;
}
