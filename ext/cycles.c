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
** again.
*/
#include "ext/dyng_ext.h"
#include "engine/cycles.h"
#include "engine/error.h"

#include <jansson.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

int dyngCountsKept(const DyngGraph *pG) {
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++)
      if (pG->aCount[d][k].bValid) return 1;
  return 0;
}

void dyngCountsDrop(DyngGraph *pG) {
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) pG->aCount[d][k].bValid = 0;
}

/* Stops an update once it has run longer than a recount took: on a graph
** with hubs the paths through the changed edges can cost far more than
** counting again (bench/bench_analyses: 4-cycles on R-MAT 16 cross at about
** 60 changes).  A count remembers the batches that gave up (DyngGiveUp)
** and counts batches at least that large again at once, without spending
** that time first. */

typedef struct DyngDeadline {
  double tEnd; /* dyngNowMs() past which to stop */
} DyngDeadline;

static int dyngPastDeadline(void *ctx) { return dyngNowMs() > ((DyngDeadline *)ctx)->tEnd; }

int dyngCountsOnBackend(const dyng_backend *pBe) { return pBe->cycles_count && pBe->cycles_delta; }

/* Counts pG's k-cycles on its backend (the host engine unless the backend
** has both cycles_count and cycles_delta).  Out of device memory moves the graph to the CPU
** and counts there, or fails with *pzErr when CUDA is required
** (DYNG_EBACKEND). */
static int dyngCyclesCount(DyngGraph *pG, dyng_graph_view *pView, int k, int bDirected, uint64_t *pn,
                           char **pzErr) {
  const dyng_backend *pBe = pG->pBackend;
  if (!dyngCountsOnBackend(pBe)) return dyng_cycles_count(pView, k, bDirected, pView->cancel, pn);
  int erc = pBe->cycles_count(pG->pBackendState, pView, k, bDirected, pn);
  if (erc != DYNG_ENOMEM || pBe == dyng_backend_cpu()) return erc;
  if (dyngGraphLeaveDevice(pG, "counting cycles", pzErr) != SQLITE_OK) return *pzErr ? DYNG_EBACKEND : DYNG_ENOMEM;
  return dyngCyclesCount(pG, pView, k, bDirected, pn, pzErr);
}

/* Brings *pn, pG's k-cycle count before the batch pChanges, up to date, on
** the backend (the host engine unless it has both cycles entries). */
static int dyngCyclesUpdate(DyngGraph *pG, const dyng_graph_view *pView, const dyng_changes *pChanges, int k,
                            int bDirected, uint64_t *pn) {
  const dyng_backend *pBe = pG->pBackend;
  if (!dyngCountsOnBackend(pBe)) return dyng_cycles_update(pView, pChanges, k, bDirected, pView->cancel, pn);
  dyng_cycles_diff d;
  int erc = pBe->cycles_delta(pG->pBackendState, pView, pChanges, k, bDirected, &d);
  return erc == DYNG_OK ? dyng_cycles_apply(&d, pn) : erc;
}

/* Counts k-cycles of pG from scratch into *c, stopping as w says (an
** interrupt, max_ms: DYNG_EINTERRUPTED) and reporting progress. */
static int dyngCountFromScratch(DyngGraph *pG, int k, int bDirected, DyngCount *c, DyngWatch *w, char **pzErr) {
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  view.cancel = &w->cancel;
  double t0 = dyngNowMs();
  uint64_t n = 0;
  char *zWhat = sqlite3_mprintf("counting %d-cycles%s of graph '%s'", k, bDirected ? " (directed)" : "", pG->zName);
  dyngWatchProgressStart(w, zWhat ? zWhat : "counting cycles", "roots");
  int erc = dyngCyclesCount(pG, &view, k, bDirected, &n, pzErr);
  dyngWatchEnd(w, view.n_vertices);
  sqlite3_free(zWhat);
  if (erc != DYNG_OK) return erc;
  c->nCycles = n;
  c->countMs = dyngNowMs() - t0;
  return DYNG_OK;
}

/* dyngCountFromScratch under a watch of its own. */
static int dyngRecount(DyngGraph *pG, int k, int bDirected, DyngCount *c) {
  DyngWatch w;
  dyngWatchBegin(&w, pG->pConn, 1);
  char *zErr = NULL;
  int erc = dyngCountFromScratch(pG, k, bDirected, c, &w, &zErr);
  sqlite3_free(zErr);
  return erc;
}

void dyngCountsUpdate(DyngGraph *pG, const dyng_changes *pChanges) {
  size_t nChanged = pChanges->n_removed + pChanges->n_added;
  if (nChanged == 0) return;
  /* A directed graph's kept counts follow a batch with its in adjacency,
  ** built (from the graph after the batch) at the first batch they follow;
  ** without it they are counted again by the next query. */
  if (!dyngCountsKept(pG)) return;
  if (dyng_graph_build_in(pG->pGraph) != DYNG_OK) {
    dyngCountsDrop(pG);
    return;
  }
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) {
      DyngCount *c = &pG->aCount[d][k];
      if (!c->bValid) continue;
      double t0 = dyngNowMs();
      uint64_t n = c->nCycles;
      /* At most as long as counting again took (and at least 1 ms). */
      DyngDeadline deadline = {t0 + (c->countMs > 1.0 ? c->countMs : 1.0)};
      dyng_cancel cancel = {dyngPastDeadline, &deadline, NULL};
      view.cancel = &cancel;
      int bDirect = dyngGiveUpSkips(&c->giveUp, nChanged);
      int erc = bDirect ? DYNG_EINTERRUPTED : dyngCyclesUpdate(pG, &view, pChanges, k, d, &n);
      /* Past the deadline: batches this large count again at once. */
      if (erc == DYNG_EINTERRUPTED && !bDirect) dyngGiveUpNote(&c->giveUp, nChanged);
      if (erc == DYNG_OK) {
        c->nCycles = n;
        c->nUpdate++;
        c->bLastRecount = 0;
      } else if (erc == DYNG_EINTERRUPTED && dyngRecount(pG, k, d, c) == DYNG_OK) {
        c->nRecount++;
        c->bLastRecount = 1;
      } else {
        /* Counted again by the next query. */
        c->bValid = 0;
        continue;
      }
      c->lastMs = dyngNowMs() - t0;
      c->iStamp = ++pG->pConn->iUpdateStamp;
    }
}

json_t *dyngCountsJson(const DyngGraph *pG, sqlite3_int64 iSinceStamp) {
  json_t *pArr = json_array();
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) {
      const DyngCount *c = &pG->aCount[d][k];
      if (!c->bValid || (iSinceStamp >= 0 && c->iStamp <= iSinceStamp)) continue;
      json_t *pObj = json_object();
      json_object_set_new(pObj, "k", json_integer(k));
      json_object_set_new(pObj, "directed", json_boolean(d));
      if (iSinceStamp < 0) {
        json_object_set_new(pObj, "cycles", json_integer((json_int_t)c->nCycles));
        json_object_set_new(pObj, "hits", json_integer(c->nHit));
        json_object_set_new(pObj, "updates", json_integer(c->nUpdate));
        json_object_set_new(pObj, "recounts", json_integer(c->nRecount));
        json_object_set_new(pObj, "count_ms", json_real(c->countMs));
      }
      if (iSinceStamp >= 0)
        json_object_set_new(pObj, "mode", json_string(c->bLastRecount ? "recount" : "update"));
      json_object_set_new(pObj, "last_update_ms", json_real(c->lastMs));
      json_array_append_new(pArr, pObj);
    }
  return pArr;
}

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
    if (rc == SQLITE_NOMEM && !zErr) sqlite3_result_error_nomem(ctx);
    else sqlite3_result_error(ctx, zErr ? zErr : "dyng_cycle_count: failed", -1);
    sqlite3_free(zErr);
    return;
  }
  DyngCount *c = &pG->aCount[bDirected][k];
  if (c->bValid) {
    c->nHit++;
  } else {
    DyngWatch watch;
    dyngWatchBegin(&watch, pConn, 1);
    int erc = dyngCountFromScratch(pG, k, bDirected, c, &watch, &zErr);
    if (erc != DYNG_OK && zErr) {
      /* The graph could not leave a device that ran out of memory. */
      sqlite3_result_error(ctx, zErr, -1);
      sqlite3_free(zErr);
      return;
    }
    if (erc != DYNG_OK) {
      if (erc == DYNG_ENOMEM) {
        sqlite3_result_error_nomem(ctx);
      } else {
        if (erc == DYNG_EINTERRUPTED) {
          rc = dyngWatchError(&watch, "dyng_cycle_count", &zErr);
          if (zErr) sqlite3_result_error(ctx, zErr, -1);
          sqlite3_result_error_code(ctx, rc);
          sqlite3_free(zErr);
          return;
        }
        char *zMsg = erc == DYNG_ETOOBIG
                         ? sqlite3_mprintf("dyng_cycle_count: graph '%s' has more %d-cycles than a "
                                           "64-bit count holds", pG->zName, k)
                         : dyngBackendError("dyng_cycle_count", pG, erc);
        sqlite3_result_error(ctx, zMsg ? zMsg : "dyng_cycle_count: failed", -1);
        sqlite3_free(zMsg);
      }
      return;
    }
    /* Kept for batches to update (see dyngCountsUpdate). */
    c->nHit = c->nUpdate = c->nRecount = 0;
    memset(&c->giveUp, 0, sizeof c->giveUp);
    c->lastMs = 0;
    c->iStamp = 0;
    c->bValid = 1;
  }
  if (c->nCycles > (uint64_t)INT64_MAX) {
    sqlite3_result_error(ctx, "dyng_cycle_count: the count exceeds SQLite's 64-bit integers", -1);
    return;
  }
  sqlite3_result_int64(ctx, (sqlite3_int64)c->nCycles);
}

int dyngRegisterCycleFunctions(sqlite3 *db, DyngConn *pConn) {
  int rc = SQLITE_OK;
  for (int n = 2; n <= 3 && rc == SQLITE_OK; n++)
    rc = sqlite3_create_function_v2(db, "dyng_cycle_count", n, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                                    pConn, dyngCycleCountFunc, NULL, NULL, NULL);
  return rc;
}
