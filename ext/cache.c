/*
** ext/cache.c: what a graph's mirror keeps, as SQL sees it.
**
**   SELECT * FROM dyng_sssp('net', 1);          -- computes and keeps the tree
**   SELECT * FROM dyng_path('net', 1, 99);      -- answers from the kept tree
**   SELECT dyng_config('cache_mb', 512);         -- the budget, per connection
**
** The trees and cycle counts themselves, their budget and how they follow
** a batch live in engine/mirror.c.  Here: a tree for a query with its
** failure as an SQL error, and the kept trees and counts as JSON for
** dyng_config() and dyng_update().
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"

#include <jansson.h>

SQLITE_EXTENSION_INIT3

int dyngTreeGet(DyngGraph *pG, uint32_t vSource, int iObj, DyngWatch *pWatch, const char *zFunc,
                dyng_sssp_tree **ppTree, dyng_kept_tree **ppOwned, char **pzErr) {
  int erc = dyng_mirror_tree(pG->pMirror, vSource, iObj, &pWatch->cancel, ppTree, ppOwned);
  return dyngEngineFail(pG, erc, pWatch, zFunc, 0, pzErr, NULL);
}

/* The objective's name, or its index for an unweighted graph. */
static json_t *dyngObjectiveJson(const DyngGraph *pG, int iObj) {
  if (pG->nWeight) return json_string(pG->azWeight[iObj]);
  return json_integer(iObj);
}

json_t *dyngTreesJson(DyngGraph *pG, sqlite3_int64 iSinceStamp) {
  json_t *pArr = json_array();
  if (!pG->pMirror) return pArr;
  for (dyng_kept_tree *p = pG->pMirror->trees; p; p = p->next) {
    if (iSinceStamp >= 0 && p->stamp <= iSinceStamp) continue;
    json_t *pObj = json_object();
    json_object_set_new(pObj, "source", json_integer(dyng_graph_node_id(pG->pGraph, p->tree.source)));
    json_object_set_new(pObj, "objective", dyngObjectiveJson(pG, p->tree.objective));
    if (iSinceStamp >= 0) {
      json_object_set_new(pObj, "mode", json_string(p->last_recompute ? "recompute" : "update"));
      json_object_set_new(pObj, "touched", json_integer((json_int_t)p->last_touched));
      json_object_set_new(pObj, "ms", json_real(p->last_ms));
    } else {
      json_object_set_new(pObj, "bytes", json_integer(dyng_kept_tree_bytes(p)));
      json_object_set_new(pObj, "hits", json_integer(p->n_hit));
      json_object_set_new(pObj, "updates", json_integer(p->n_update));
      json_object_set_new(pObj, "recomputes", json_integer(p->n_recompute));
      json_object_set_new(pObj, "last_update_ms", json_real(p->last_ms));
    }
    json_array_append_new(pArr, pObj);
  }
  return pArr;
}

json_t *dyngCountsJson(const DyngGraph *pG, sqlite3_int64 iSinceStamp) {
  json_t *pArr = json_array();
  if (!pG->pMirror) return pArr;
  for (int d = 0; d < 2; d++)
    for (int k = DYNG_CYCLES_MIN_K; k <= DYNG_CYCLES_MAX_K; k++) {
      const dyng_kept_count *c = &pG->pMirror->counts[d][k];
      if (!c->valid || (iSinceStamp >= 0 && c->stamp <= iSinceStamp)) continue;
      json_t *pObj = json_object();
      json_object_set_new(pObj, "k", json_integer(k));
      json_object_set_new(pObj, "directed", json_boolean(d));
      if (iSinceStamp < 0) {
        json_object_set_new(pObj, "cycles", json_integer((json_int_t)c->n_cycles));
        json_object_set_new(pObj, "hits", json_integer(c->n_hit));
        json_object_set_new(pObj, "updates", json_integer(c->n_update));
        json_object_set_new(pObj, "recounts", json_integer(c->n_recount));
        json_object_set_new(pObj, "count_ms", json_real(c->count_ms));
      }
      if (iSinceStamp >= 0)
        json_object_set_new(pObj, "mode", json_string(c->last_recount ? "recount" : "update"));
      json_object_set_new(pObj, "last_update_ms", json_real(c->last_ms));
      json_array_append_new(pArr, pObj);
    }
  return pArr;
}
