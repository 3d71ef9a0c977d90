/*
** ext/watch.c: what stops a long computation that a query started.
**
** Two things do: an interrupt of the statement (sqlite3_interrupt, or the
** shell's Ctrl-C) and the connection's time budget, dyng_config('max_ms');
** while it is not set, a Pareto front or a cycle count still stops after 10
** seconds (DYNG_DEFAULT_MAX_MS: views reach them, and they can grow
** exponentially with a small graph).
** The engine asks through a dyng_cancel every few thousand steps; this file
** answers.  It also fills a connection's dyng_hooks (engine/mirror.h): a
** watch for a recount a batch starts, and the warning when a graph leaves
** its device.
**
** SQLite 3.41 and later tell an extension that its connection was
** interrupted through sqlite3_is_interrupted.  dyng may be built against an
** older sqlite3ext.h and loaded into a newer SQLite, or the reverse, so the
** routine is looked up at run time: the running library's version says
** whether its routine table has the entry, which follows value_encoding
** (3.40's last).  Without it, a kept "SELECT 1" is stepped instead: while
** the flag is set, every statement of the connection stops with
** SQLITE_INTERRUPT.
*/
#include "ext/dyng_ext.h"

#include "engine/error.h"

#include <string.h>

SQLITE_EXTENSION_INIT3

typedef int (*DyngIsInterrupted)(sqlite3 *);

/* The running SQLite's sqlite3_is_interrupted, or NULL before 3.41. */
static DyngIsInterrupted dyngIsInterruptedRoutine(void) {
  if (sqlite3_libversion_number() < 3041000) return NULL;
#if defined(SQLITE_CORE) && SQLITE_VERSION_NUMBER >= 3041000
  return sqlite3_is_interrupted; /* compiled into the application */
#elif defined(SQLITE_CORE)
  return NULL;
#elif SQLITE_VERSION_NUMBER >= 3041000
  return sqlite3_api->is_interrupted;
#else
  /* The routine table of 3.41 and later: these headers' table, then it. */
  const struct {
    sqlite3_api_routines base;
    DyngIsInterrupted is_interrupted;
  } *pNewer = (const void *)sqlite3_api;
  return pNewer->is_interrupted;
#endif
}

const char *dyngInterruptCheck(void) {
  return dyngIsInterruptedRoutine() ? "sqlite3_is_interrupted" : "probe statement";
}

static int dyngWatchShouldStop(void *ctx) {
  DyngWatch *w = ctx;
  if (w->xIsInterrupted) {
    if (w->xIsInterrupted(w->pConn->db)) w->eStop = DYNG_STOP_INTERRUPT;
  } else {
    /* Prepared on the first poll: most queries end before one. */
    if (!w->pProbe && !w->bNoProbe &&
        sqlite3_prepare_v2(w->pConn->db, "SELECT 1", -1, &w->pProbe, NULL) != SQLITE_OK) {
      sqlite3_finalize(w->pProbe);
      w->pProbe = NULL;
      w->bNoProbe = 1; /* out of memory: only max_ms can stop it now */
    }
  }
  if (w->pProbe) {
    int rc = sqlite3_step(w->pProbe);
    sqlite3_reset(w->pProbe);
    if (rc == SQLITE_INTERRUPT) w->eStop = DYNG_STOP_INTERRUPT;
  }
  if (!w->eStop && w->tEnd > 0 && dyngNowMs() > w->tEnd) w->eStop = DYNG_STOP_BUDGET;
  return w->eStop != 0;
}

static void dyngWatchProgress(void *ctx, uint64_t done, uint64_t total) {
  DyngWatch *w = ctx;
  w->nDone = (sqlite3_int64)done;
  w->nTotal = (sqlite3_int64)total;
  w->bHeard = 1;
  if (w->bProgress) dyngProgressTick(&w->progress, (sqlite3_int64)done, (sqlite3_int64)total);
}

void dyngWatchBegin(DyngWatch *w, DyngConn *pConn, int bCombinatorial) {
  memset(w, 0, sizeof *w);
  w->pConn = pConn;
  w->tStart = dyngNowMs();
  if (pConn->rMaxMs >= 0) {
    w->rLimitMs = pConn->rMaxMs;
  } else if (bCombinatorial) {
    w->rLimitMs = DYNG_DEFAULT_MAX_MS;
    w->bDefaultLimit = 1;
  }
  if (w->rLimitMs > 0) w->tEnd = w->tStart + w->rLimitMs;
  w->xIsInterrupted = dyngIsInterruptedRoutine();
  w->cancel.should_stop = dyngWatchShouldStop;
  w->cancel.ctx = w;
  w->cancel.progress = dyngWatchProgress;
}

void dyngWatchProgressStart(DyngWatch *w, const char *zWhat, const char *zUnit) {
  dyngProgressStart(&w->progress, w->pConn, zWhat, zUnit);
  w->bProgress = 1;
}

void dyngWatchEnd(DyngWatch *w, sqlite3_int64 nDone) {
  /* Stopped, it finished what the engine last said it had. */
  if (w->bProgress && w->eStop)
    dyngProgressEnd(&w->progress, w->bHeard ? w->nDone : 0, w->bHeard ? w->nTotal : nDone,
                    w->eStop == DYNG_STOP_BUDGET ? "over max_ms" : "interrupted");
  else if (w->bProgress)
    dyngProgressEnd(&w->progress, nDone, nDone, NULL);
  w->bProgress = 0;
  sqlite3_finalize(w->pProbe);
  w->pProbe = NULL;
}

int dyngWatchError(const DyngWatch *w, const char *zFunc, char **pzErr) {
  if (w->eStop == DYNG_STOP_BUDGET) {
    *pzErr = sqlite3_mprintf("%s: stopped after %.0f ms, over this connection's max_ms budget of "
                             "%g ms (%sdyng_config('max_ms', 0) lifts it)",
                             zFunc, dyngNowMs() - w->tStart, w->rLimitMs,
                             w->bDefaultLimit ? "the default; " : "");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  *pzErr = sqlite3_mprintf("interrupted");
  return SQLITE_INTERRUPT;
}

/* A watch the engine starts for a recount a batch runs on its own, with
** room for the progress line's words. */
typedef struct DyngHookWatch {
  DyngWatch w;
  char zWhat[200];
  char zUnit[32];
} DyngHookWatch;

static void *dyngHookWatchBegin(void *ctx, const char *zWhat, const char *zUnit,
                                const dyng_cancel **ppCancel) {
  DyngHookWatch *p = sqlite3_malloc(sizeof *p);
  *ppCancel = NULL;
  if (!p) return NULL;
  dyngWatchBegin(&p->w, (DyngConn *)ctx, 1);
  sqlite3_snprintf((int)sizeof p->zWhat, p->zWhat, "%s", zWhat);
  sqlite3_snprintf((int)sizeof p->zUnit, p->zUnit, "%s", zUnit);
  dyngWatchProgressStart(&p->w, p->zWhat, p->zUnit);
  *ppCancel = &p->w.cancel;
  return p;
}

static void dyngHookWatchEnd(void *ctx, void *pWatch, uint64_t nDone) {
  DyngHookWatch *p = pWatch;
  (void)ctx;
  if (!p) return;
  dyngWatchEnd(&p->w, (sqlite3_int64)nDone);
  sqlite3_free(p);
}

static void dyngHookMoved(void *ctx, const dyng_mirror *m) {
  (void)ctx;
  sqlite3_log(SQLITE_WARNING, "dyng: graph '%s': %s", m->name, m->why);
}

void dyngWatchHooks(DyngConn *pConn) {
  dyng_hooks *h = &pConn->pool.hooks;
  h->ctx = pConn;
  h->watch_begin = dyngHookWatchBegin;
  h->watch_end = dyngHookWatchEnd;
  h->moved = dyngHookMoved;
}
