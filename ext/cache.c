/*
** ext/cache.c: shortest-path trees kept between queries.
**
**   SELECT * FROM dyng_sssp('net', 1);          -- computes and keeps the tree
**   SELECT * FROM dyng_path('net', 1, 99);      -- answers from the kept tree
**   INSERT INTO roads VALUES (...);              -- the next query updates it
**   SELECT dyng_config('cache_mb', 512);         -- the budget, per connection
**
** Each dyng_sssp / dyng_path answer leaves its tree (dist, parent, parent
** edge) per (graph, source, objective).  When a batch reaches a graph, each
** of its trees is repaired with the backend's sssp_update (the dynamic SSSP
** template of engine/sssp_dyn.c) instead of recomputed, unless the batch is
** so large that a recomputation is cheaper (DYNG_RECOMPUTE_SHARE).  The
** trees of a connection share a memory budget; past it the least recently
** used tree goes.  A reload drops a graph's trees (vertex numbers change).
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/sssp.h"

#include <jansson.h>

#include <math.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

/*
** When to recompute a tree rather than update it.  bench/bench_dyn measured
** where the two cross: at about a quarter of the edges changed on R-MAT,
** but at a few hundred to a few thousand changes on a road-like grid, whose
** deep trees move wholesale.  So: a batch that changes more than
** 1/DYNG_RECOMPUTE_SHARE of the edges recomputes at once; otherwise the
** update runs with a work budget of 1/DYNG_UPDATE_BUDGET of the vertices
** and, past it, gives up and recomputes.  Each tree remembers the batches
** that gave up (DyngGiveUp) and recomputes batches at least that large
** directly.
*/
#define DYNG_RECOMPUTE_SHARE 8
#define DYNG_UPDATE_BUDGET 4

int dyngGiveUpSkips(DyngGiveUp *p, size_t nChanged) {
  if (!p->nAt || nChanged < p->nAt) return 0;
  if (++p->nSkipped >= DYNG_RETRY_AFTER) p->nAt *= 2, p->nSkipped = 0;
  return 1;
}

void dyngGiveUpNote(DyngGiveUp *p, size_t nChanged) {
  if (!p->nAt || nChanged < p->nAt) p->nAt = nChanged;
  p->nSkipped = 0;
}

struct DyngTree {
  DyngTree *pNext;          /* next tree of the same graph */
  DyngGraph *pG;            /* the graph it belongs to */
  dyng_sssp_tree tree;      /* the tree; its source is a vertex index */
  sqlite3_int64 iLastUse;   /* the connection's clock at the last use */
  sqlite3_int64 nHit;       /* queries answered from it */
  sqlite3_int64 nUpdate;    /* batches applied to it incrementally */
  sqlite3_int64 nRecompute; /* batches after which it was recomputed */
  sqlite3_int64 iStamp;     /* pConn->iUpdateStamp of its last update */
  double lastMs;            /* duration of that update */
  int bLastRecompute;       /* that update recomputed the tree */
  DyngGiveUp giveUp;        /* the batches whose update gave up */
  size_t nLastTouched;      /* vertices that update touched */
};

/* Bytes a tree holds. */
static sqlite3_int64 dyngTreeBytes(const DyngTree *p) {
  size_t per = sizeof(double) + 3 * sizeof(uint32_t);
  return (sqlite3_int64)(sizeof *p + (size_t)p->tree.n_vertices * per);
}

static void dyngTreeFree(DyngTree *p) {
  if (!p) return;
  /* Its backend may keep a copy (trees go before their graph's state). */
  DyngGraph *pG = p->pG;
  if (pG && pG->pBackend && pG->pBackendState && pG->pBackend->tree_release)
    pG->pBackend->tree_release(pG->pBackendState, &p->tree);
  dyng_sssp_tree_free(&p->tree);
  sqlite3_free(p);
}

void dyngTreesDrop(DyngGraph *pG) {
  while (pG->pTrees) {
    DyngTree *p = pG->pTrees;
    pG->pTrees = p->pNext;
    pG->pConn->nTreeBytes -= dyngTreeBytes(p);
    dyngTreeFree(p);
  }
  dyng_changes_free(&pG->changes);
}

/* Frees least recently used trees of the connection until `nNeed` more
** bytes fit in the budget (or nothing is left to free). */
static void dyngTreesMakeRoom(DyngConn *pConn, sqlite3_int64 nNeed) {
  while (pConn->nTreeBytes + nNeed > pConn->nCacheLimit) {
    DyngTree **ppOldest = NULL;
    for (DyngGraph *pG = pConn->pGraphs; pG; pG = pG->pNext)
      for (DyngTree **pp = &pG->pTrees; *pp; pp = &(*pp)->pNext) {
        if ((*pp)->iLastUse >= pConn->iPinFrom) continue; /* in use by this query */
        if (!ppOldest || (*pp)->iLastUse < (*ppOldest)->iLastUse) ppOldest = pp;
      }
    if (!ppOldest) return;
    DyngTree *p = *ppOldest;
    *ppOldest = p->pNext;
    pConn->nTreeBytes -= dyngTreeBytes(p);
    dyngTreeFree(p);
  }
}

void dyngTreesFit(DyngConn *pConn) { dyngTreesMakeRoom(pConn, 0); }

void dyngTreesPin(DyngConn *pConn, int bOn) {
  pConn->iPinFrom = bOn ? pConn->iClock + 1 : INT64_MAX;
}

int dyngTreeGet(DyngGraph *pG, uint32_t vSource, int iObj, DyngWatch *pWatch, const char *zFunc,
                dyng_sssp_tree **ppTree, DyngTree **ppOwned, char **pzErr) {
  DyngConn *pConn = pG->pConn;
  *ppTree = NULL;
  *ppOwned = NULL;
  for (DyngTree *p = pG->pTrees; p; p = p->pNext) {
    if (p->tree.source != vSource || p->tree.objective != iObj) continue;
    p->iLastUse = ++pConn->iClock;
    p->nHit++;
    *ppTree = &p->tree;
    return SQLITE_OK;
  }
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  view.cancel = &pWatch->cancel;
  DyngTree *p = sqlite3_malloc(sizeof *p);
  if (!p) return SQLITE_NOMEM;
  memset(p, 0, sizeof *p);
  p->pG = pG;
  int erc = dyng_sssp_tree_init(&p->tree, view.n_vertices);
  if (erc == DYNG_OK) {
    erc = pG->pBackend->sssp(pG->pBackendState, &view, vSource, iObj, DYNG_NONE, &p->tree);
    if (erc == DYNG_ENOMEM && pG->pBackend != dyng_backend_cpu()) {
      /* Out of device memory (a second graph took it, say): this graph
      ** goes on on the CPU, unless CUDA is required. */
      int rc = dyngGraphLeaveDevice(pG, "computing a shortest-path tree", pzErr);
      if (rc != SQLITE_OK) {
        dyngTreeFree(p);
        return rc;
      }
      erc = pG->pBackend->sssp(pG->pBackendState, &view, vSource, iObj, DYNG_NONE, &p->tree);
    }
  }
  if (erc != DYNG_OK) {
    dyngTreeFree(p);
    if (erc == DYNG_ENOMEM) return SQLITE_NOMEM;
    if (erc == DYNG_EINTERRUPTED) return dyngWatchError(pWatch, zFunc, pzErr);
    *pzErr = dyngEngineError(zFunc, pG, erc);
    return SQLITE_ERROR;
  }
  p->iLastUse = ++pConn->iClock;
  /* Keep it if it fits the budget and the graph can be updated under it
  ** (a directed graph needs its in adjacency for that). */
  sqlite3_int64 nBytes = dyngTreeBytes(p) + (sqlite3_int64)view.n_vertices * 3 * sizeof(uint32_t);
  if (nBytes > pConn->nCacheLimit || dyng_graph_build_in(pG->pGraph) != DYNG_OK) {
    *ppTree = &p->tree;
    *ppOwned = p;
    return SQLITE_OK;
  }
  dyngTreesMakeRoom(pConn, dyngTreeBytes(p));
  p->pNext = pG->pTrees;
  pG->pTrees = p;
  pConn->nTreeBytes += dyngTreeBytes(p);
  *ppTree = &p->tree;
  return SQLITE_OK;
}

void dyngTreeRelease(DyngTree *pOwned) { dyngTreeFree(pOwned); }

int dyngTreeRows(DyngGraph *pG, dyng_sssp_tree *t, const uint32_t *aV, uint32_t n) {
  if (!t->host_stale) return DYNG_OK;
  const dyng_backend *pBe = pG->pBackend;
  if (pBe->tree_fetch) {
    int erc = pBe->tree_fetch(pG->pBackendState, t, aV, aV ? n : 0);
    /* Some rows need device room to be gathered; every row needs none. */
    if (erc == DYNG_ENOMEM && aV) erc = pBe->tree_fetch(pG->pBackendState, t, NULL, 0);
    return erc;
  }
  /* The backend that held it is gone (its graph left the device while a
  ** query held a tree it does not keep): computed again, on the host. */
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  int erc = dyng_sssp_tree_grow(t, view.n_vertices);
  if (erc == DYNG_OK) erc = pBe->sssp(pG->pBackendState, &view, t->source, t->objective, DYNG_NONE, t);
  if (erc == DYNG_OK && t->host_stale) erc = DYNG_ESTATE;
  return erc;
}

int dyngTreePath(DyngGraph *pG, dyng_sssp_tree *t, uint32_t vTarget, uint32_t **paV, uint32_t *pn) {
  *paV = NULL;
  *pn = 0;
  const dyng_backend *pBe = pG->pBackend;
  if (t->host_stale && !pBe->tree_path) {
    int erc = dyngTreeRows(pG, t, NULL, 0);
    if (erc != DYNG_OK) return erc;
  }
  if (!t->host_stale) {
    if (isinf(t->dist[vTarget])) return DYNG_OK;
    uint32_t n = 1;
    for (uint32_t v = vTarget; v != t->source; v = t->parent[v]) n++;
    uint32_t *aV = sqlite3_malloc64((sqlite3_uint64)n * sizeof *aV);
    if (!aV) return DYNG_ENOMEM;
    uint32_t i = 0;
    for (uint32_t v = vTarget;; v = t->parent[v]) {
      aV[i++] = v;
      if (v == t->source) break;
    }
    *paV = aV;
    *pn = n;
    return DYNG_OK;
  }
  /* On the device: room for 4096 vertices first, then for what it needs. */
  uint32_t nCap = t->n_vertices < 4096 ? t->n_vertices : 4096;
  for (;;) {
    uint32_t *aV = sqlite3_malloc64((sqlite3_uint64)(nCap ? nCap : 1) * sizeof *aV);
    if (!aV) return DYNG_ENOMEM;
    uint32_t n = 0;
    int erc = pBe->tree_path(pG->pBackendState, t, vTarget, nCap, aV, &n);
    if (erc == DYNG_ETOOBIG && n > nCap && n <= t->n_vertices) {
      sqlite3_free(aV);
      nCap = n;
      continue;
    }
    if (erc == DYNG_ENOMEM) {
      /* No device room for the walk: every row to the host, and the walk
      ** there. */
      sqlite3_free(aV);
      erc = pBe->tree_fetch(pG->pBackendState, t, NULL, 0);
      return erc == DYNG_OK ? dyngTreePath(pG, t, vTarget, paV, pn) : erc;
    }
    if (erc == DYNG_OK && n) erc = pBe->tree_fetch(pG->pBackendState, t, aV, n);
    if (erc != DYNG_OK || !n) {
      sqlite3_free(aV);
      return erc;
    }
    *paV = aV;
    *pn = n;
    return DYNG_OK;
  }
}

void dyngTreesToHost(DyngGraph *pG) {
  /* A tree whose rows cannot come stays host_stale (a query may hold it):
  ** the next use computes it again on the new backend (dyngTreeRows,
  ** dyngTreeFollow). */
  for (DyngTree *p = pG->pTrees; p; p = p->pNext) (void)dyngTreeRows(pG, &p->tree, NULL, 0);
}

/* One tree's part of a batch: what was decided and how it went. */
typedef struct DyngTreeJob {
  DyngTree *p;
  sqlite3_int64 nBefore;  /* its bytes before */
  int erc;                /* DYNG_OK or why it could not follow */
  int bRecompute;         /* it was computed again */
  size_t nTouched;        /* vertex entries changed */
  double ms;              /* time taken */
} DyngTreeJob;

/* What the threads of one dyngTreesUpdate share. */
typedef struct DyngTreesRun {
  DyngGraph *pG;
  const dyng_changes *pCh;
  const dyng_graph_view *pView;
  int bHuge;              /* the batch is past 1/DYNG_RECOMPUTE_SHARE */
  size_t nBudget;         /* max_touched of an update */
  DyngTreeJob *aJob;
  dyng_team team;
} DyngTreesRun;

/* Updates or recomputes one tree (no SQLite call: may run on any thread). */
static void dyngTreeFollow(DyngTreesRun *pRun, DyngTreeJob *pJob) {
  DyngGraph *pG = pRun->pG;
  const dyng_changes *pCh = pRun->pCh;
  const dyng_graph_view *pView = pRun->pView;
  DyngTree *p = pJob->p;
  size_t nChanged = pCh->n_removed + pCh->n_added;
  double t0 = dyngNowMs();
  int erc = DYNG_OK;
  size_t nTouched = 0;
  int bRecompute = pRun->bHuge;
  /* Rows the backend no longer holds (the graph left the device and they
  ** could not come over): only a recomputation brings them back. */
  if (p->tree.host_stale && !pG->pBackend->tree_fetch) bRecompute = 1;
  if (!bRecompute) bRecompute = dyngGiveUpSkips(&p->giveUp, nChanged);
  if (!bRecompute) erc = dyng_sssp_tree_grow(&p->tree, pView->n_vertices);
  if (!bRecompute && erc == DYNG_OK) {
    erc = pG->pBackend->sssp_update(pG->pBackendState, pView, &p->tree, pCh->removed, pCh->n_removed,
                                    pCh->added, pCh->n_added, pRun->nBudget, &nTouched);
    if (erc == DYNG_ETOOBIG) {
      dyngGiveUpNote(&p->giveUp, nChanged);
      bRecompute = 1;
    }
  }
  if (bRecompute) {
    if (p->tree.n_vertices < pView->n_vertices) {
      uint32_t src = p->tree.source;
      int obj = p->tree.objective;
      dyng_sssp_tree_free(&p->tree);
      erc = dyng_sssp_tree_init(&p->tree, pView->n_vertices);
      p->tree.source = src;
      p->tree.objective = obj;
    } else {
      erc = DYNG_OK;
    }
    if (erc == DYNG_OK)
      erc = pG->pBackend->sssp(pG->pBackendState, pView, p->tree.source, p->tree.objective, DYNG_NONE,
                               &p->tree);
    nTouched = pView->n_vertices;
  }
  pJob->erc = erc;
  pJob->bRecompute = bRecompute;
  pJob->nTouched = nTouched;
  pJob->ms = dyngNowMs() - t0;
}

static void dyngTreesWorker(void *pCtx, int iThread) {
  DyngTreesRun *pRun = pCtx;
  uint32_t iFrom, iTo;
  (void)iThread;
  while (dyng_team_take(&pRun->team, &iFrom, &iTo))
    for (uint32_t i = iFrom; i < iTo; i++) dyngTreeFollow(pRun, &pRun->aJob[i]);
}

/* Batches smaller than this update a graph's trees one after the other:
** below it an update costs microseconds, less than waking threads. */
#define DYNG_TREES_PARALLEL_FROM 256

void dyngTreesUpdate(DyngGraph *pG, const dyng_changes *pCh) {
  DyngConn *pConn = pG->pConn;
  if (!pG->pTrees) return;
  pConn->iUpdateStamp++;
  size_t nChanged = pCh->n_removed + pCh->n_added;
  if (nChanged == 0) return;
  dyng_graph_view view;
  dyng_graph_get_view(pG->pGraph, &view);
  DyngTreesRun run;
  memset(&run, 0, sizeof run);
  run.pG = pG;
  run.pCh = pCh;
  run.pView = &view;
  run.bHuge = nChanged * DYNG_RECOMPUTE_SHARE > (size_t)dyng_graph_n_edges(pG->pGraph);
  run.nBudget = view.n_vertices / DYNG_UPDATE_BUDGET;
  if (run.nBudget < 1024) run.nBudget = 1024;
  uint32_t nTree = 0;
  for (DyngTree *p = pG->pTrees; p; p = p->pNext) nTree++;
  run.aJob = sqlite3_malloc64((sqlite3_uint64)nTree * sizeof *run.aJob);
  if (!run.aJob) {
    /* No room to keep track: drop the trees, the next queries recompute. */
    while (pG->pTrees) {
      DyngTree *p = pG->pTrees;
      pG->pTrees = p->pNext;
      pConn->nTreeBytes -= dyngTreeBytes(p);
      dyngTreeFree(p);
    }
    return;
  }
  uint32_t i = 0;
  for (DyngTree *p = pG->pTrees; p; p = p->pNext, i++) {
    memset(&run.aJob[i], 0, sizeof run.aJob[i]);
    run.aJob[i].p = p;
    run.aJob[i].nBefore = dyngTreeBytes(p);
  }
  int bParallel = pG->pBackend->concurrent && nTree > 1 && nChanged >= DYNG_TREES_PARALLEL_FROM;
  dyng_team_init(&run.team, nTree, 1, bParallel ? 0 : 1, NULL);
  dyng_team_run(&run.team, dyngTreesWorker, &run);

  /* Book-keeping, in list order, on the calling thread. */
  i = 0;
  for (DyngTree **pp = &pG->pTrees; *pp; i++) {
    DyngTree *p = *pp;
    DyngTreeJob *pJob = &run.aJob[i];
    pConn->nTreeBytes += dyngTreeBytes(p) - pJob->nBefore;
    if (pJob->erc != DYNG_OK) {
      /* A tree that could not follow is dropped; the next query recomputes. */
      *pp = p->pNext;
      pConn->nTreeBytes -= dyngTreeBytes(p);
      dyngTreeFree(p);
      continue;
    }
    p->lastMs = pJob->ms;
    p->bLastRecompute = pJob->bRecompute;
    p->nLastTouched = pJob->nTouched;
    p->iStamp = pConn->iUpdateStamp;
    if (pJob->bRecompute) p->nRecompute++;
    else p->nUpdate++;
    pp = &p->pNext;
  }
  sqlite3_free(run.aJob);
  dyngTreesMakeRoom(pConn, 0);
}

/* The objective's name, or its index for an unweighted graph. */
static json_t *dyngObjectiveJson(const DyngGraph *pG, int iObj) {
  if (pG->nWeight) return json_string(pG->azWeight[iObj]);
  return json_integer(iObj);
}

json_t *dyngTreesJson(DyngGraph *pG, sqlite3_int64 iSinceStamp) {
  json_t *pArr = json_array();
  for (DyngTree *p = pG->pTrees; p; p = p->pNext) {
    if (iSinceStamp >= 0 && p->iStamp <= iSinceStamp) continue;
    json_t *pObj = json_object();
    json_object_set_new(pObj, "source",
                        json_integer(dyng_graph_node_id(pG->pGraph, p->tree.source)));
    json_object_set_new(pObj, "objective", dyngObjectiveJson(pG, p->tree.objective));
    if (iSinceStamp >= 0) {
      json_object_set_new(pObj, "mode", json_string(p->bLastRecompute ? "recompute" : "update"));
      json_object_set_new(pObj, "touched", json_integer((json_int_t)p->nLastTouched));
      json_object_set_new(pObj, "ms", json_real(p->lastMs));
    } else {
      json_object_set_new(pObj, "bytes", json_integer(dyngTreeBytes(p)));
      json_object_set_new(pObj, "hits", json_integer(p->nHit));
      json_object_set_new(pObj, "updates", json_integer(p->nUpdate));
      json_object_set_new(pObj, "recomputes", json_integer(p->nRecompute));
      json_object_set_new(pObj, "last_update_ms", json_real(p->lastMs));
    }
    json_array_append_new(pArr, pObj);
  }
  return pArr;
}
