/*
** ext/util.c: the helpers every file of ext/ shares, at the bottom of ext/.
**
** Clocks and progress reports, values read as node ids, and a
** connection's graphs: finding one by name, whether its database is still
** the one it was made in, and freeing one (its mirror, its statements, its
** definition).  This file calls no other file of ext/; it also holds the
** sqlite3_api pointer the others share.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

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

void dyngProgressEnd(DyngProgress *p, sqlite3_int64 done, sqlite3_int64 total,
                     const char *zStopped) {
  if (!p->bReported) return;
  char zDone[32], zTotal[32];
  double s = (dyngNowMs() - p->t0) / 1e3;
  dyngShortCount((double)done, zDone);
  dyngShortCount((double)total, zTotal);
  if (!zStopped)
    fprintf(stderr, "dyng: %s: done, %s %s in %.1f s\n", p->zWhat, zDone, p->zUnit, s);
  else if (total > 0)
    fprintf(stderr, "dyng: %s: stopped (%s) after %s of %s %s (%.0f%%) in %.1f s\n", p->zWhat,
            zStopped, zDone, zTotal, p->zUnit, 100.0 * (double)done / (double)total, s);
  else
    fprintf(stderr, "dyng: %s: stopped (%s) after %s %s in %.1f s\n", p->zWhat, zStopped, zDone,
            p->zUnit, s);
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
    if (!pG->bBusy && !dyngGraphInItsDb(pG)) {
      *pp = pG->pNext;
      pG->pNext = NULL;
      if (pG->nRef == 0) {
        dyngGraphFree(pG);
      } else {
        /* A statement prepared before the DETACH still holds the graph's
        ** table: the mirror goes now, the rest at the last xDisconnect. */
        dyngGraphReleaseStmts(pG);
        dyngGraphDropMirror(pG);
        pG->bOrphan = 1;
      }
    } else {
      pp = &pG->pNext;
    }
  }
}

/* ---- freeing graphs ------------------------------------------------------ */

void dyngGraphReleaseStmts(DyngGraph *pG) {
  sqlite3_finalize(pG->pDataVersion);
  sqlite3_finalize(pG->pSchemaVersion);
  sqlite3_finalize(pG->pLogMax);
  sqlite3_finalize(pG->pLogRead);
  sqlite3_finalize(pG->pLogTake);
  sqlite3_finalize(pG->pLogNonce);
  pG->pDataVersion = pG->pSchemaVersion = pG->pLogMax = pG->pLogRead = pG->pLogTake =
      pG->pLogNonce = NULL;
}

void dyngGraphDropMirror(DyngGraph *pG) {
  dyng_mirror_free(pG->pMirror);
  pG->pMirror = NULL;
  pG->pGraph = NULL;
  dyng_batch_free(pG->pBatch);
  pG->pBatch = NULL;
  sqlite3_free(pG->aUndo);
  sqlite3_free(pG->aUndoW);
  pG->aUndo = NULL;
  pG->aUndoW = NULL;
  pG->nUndo = pG->nUndoAlloc = 0;
}

size_t dyngGraphHostBytes(const DyngGraph *pG) {
  if (!pG->pGraph) return 0;
  size_t n = dyng_graph_bytes(pG->pGraph) + (pG->pBatch ? dyng_batch_bytes(pG->pBatch) : 0);
  /* What the routes keep: their workspace and landmarks. */
  if (pG->pMirror) n += dyng_route_bytes(pG->pMirror->route) + dyng_landmarks_bytes(pG->pMirror->landmarks);
  return n;
}

void dyngGraphFreeDefinition(DyngGraph *pG) {
  sqlite3_free(pG->zDb);
  sqlite3_free(pG->zFile);
  sqlite3_free(pG->zName);
  sqlite3_free(pG->zEdges);
  sqlite3_free(pG->zSrc);
  sqlite3_free(pG->zDst);
  for (int i = 0; i < pG->nWeight; i++) sqlite3_free(pG->azWeight[i]);
  sqlite3_free(pG->zLog);
}

void dyngGraphFree(DyngGraph *pG) {
  if (!pG) return;
  dyngGraphReleaseStmts(pG);
  dyngGraphDropMirror(pG);
  dyngGraphFreeDefinition(pG);
  sqlite3_free(pG);
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

