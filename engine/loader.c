/*
** engine/loader.c: a two-thread bulk loader (see loader.h).
**
** Two chunks alternate: the caller fills one while the worker loads the
** other.  A chunk holds up to DYNG__CHUNK edges as parallel arrays.  One
** mutex and one condition variable guard the hand-over: `full[i]` says
** chunk i waits for the worker; the worker clears it when done.
*/
#include "engine/loader.h"
#include "engine/error.h"

#include <pthread.h>
#include <string.h>

#define DYNG__CHUNK 8192

typedef struct dyng__chunk {
  size_t n;
  int64_t rowid[DYNG__CHUNK];
  int64_t src[DYNG__CHUNK];
  int64_t dst[DYNG__CHUNK];
  double *w; /* n_weights per edge */
} dyng__chunk;

struct dyng_loader {
  dyng_graph *g;
  int n_weights;
  int threaded;        /* 1 when the worker runs */
  pthread_t worker;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  dyng__chunk chunk[2];
  int full[2];         /* chunk waits for (or is being loaded by) the worker */
  int filling;         /* chunk the caller fills */
  int stop;            /* no more chunks will come */
  int rc;              /* first error */
};

/* Loads the edges of one chunk into the graph; returns the first error. */
static int dyng__load_chunk(dyng_loader *l, dyng__chunk *c) {
  int nw = l->n_weights;
  for (size_t i = 0; i < c->n; i++) {
    int rc = dyng_graph_load_edge(l->g, c->rowid[i], c->src[i], c->dst[i],
                                  nw ? c->w + i * (size_t)nw : NULL);
    if (rc) return rc;
  }
  return DYNG_OK;
}

static void *dyng__worker(void *arg) {
  dyng_loader *l = arg;
  int next = 0;
  pthread_mutex_lock(&l->mu);
  for (;;) {
    while (!l->full[next] && !l->stop) pthread_cond_wait(&l->cv, &l->mu);
    if (!l->full[next]) break; /* stopped and drained */
    int failed = l->rc != DYNG_OK;
    pthread_mutex_unlock(&l->mu);
    int rc = failed ? DYNG_OK : dyng__load_chunk(l, &l->chunk[next]);
    pthread_mutex_lock(&l->mu);
    if (rc && l->rc == DYNG_OK) l->rc = rc;
    l->full[next] = 0;
    l->chunk[next].n = 0;
    pthread_cond_broadcast(&l->cv);
    next ^= 1;
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

int dyng_loader_new(dyng_loader **out, dyng_graph *g) {
  *out = NULL;
  dyng_loader *l = dyng_calloc(1, sizeof *l);
  if (!l) return DYNG_ENOMEM;
  l->g = g;
  l->n_weights = dyng_graph_n_weights(g);
  for (int i = 0; i < 2; i++) {
    l->chunk[i].w = dyng_malloc((size_t)DYNG__CHUNK * (size_t)(l->n_weights ? l->n_weights : 1) *
                                sizeof(double));
    if (!l->chunk[i].w) {
      dyng_loader_free(l);
      return DYNG_ENOMEM;
    }
  }
  if (pthread_mutex_init(&l->mu, NULL) == 0) {
    if (pthread_cond_init(&l->cv, NULL) == 0) {
      l->threaded = pthread_create(&l->worker, NULL, dyng__worker, l) == 0;
      if (!l->threaded) pthread_cond_destroy(&l->cv);
    }
    if (!l->threaded) pthread_mutex_destroy(&l->mu);
  }
  *out = l;
  return DYNG_OK;
}

/* Hands the chunk being filled to the worker (or loads it here). */
static int dyng__flush(dyng_loader *l) {
  dyng__chunk *c = &l->chunk[l->filling];
  if (c->n == 0) return l->rc;
  if (!l->threaded) {
    if (l->rc == DYNG_OK) l->rc = dyng__load_chunk(l, c);
    c->n = 0;
    return l->rc;
  }
  pthread_mutex_lock(&l->mu);
  l->full[l->filling] = 1;
  pthread_cond_broadcast(&l->cv);
  l->filling ^= 1;
  while (l->full[l->filling]) pthread_cond_wait(&l->cv, &l->mu);
  int rc = l->rc;
  pthread_mutex_unlock(&l->mu);
  return rc;
}

int dyng_loader_add(dyng_loader *l, int64_t rowid, int64_t src, int64_t dst, const double *w) {
  dyng__chunk *c = &l->chunk[l->filling];
  size_t i = c->n++;
  c->rowid[i] = rowid;
  c->src[i] = src;
  c->dst[i] = dst;
  if (l->n_weights) memcpy(c->w + i * (size_t)l->n_weights, w, (size_t)l->n_weights * sizeof *w);
  if (c->n == DYNG__CHUNK) return dyng__flush(l);
  return DYNG_OK;
}

/* Stops the worker after it has loaded every full chunk. */
static void dyng__stop(dyng_loader *l) {
  if (!l->threaded) return;
  pthread_mutex_lock(&l->mu);
  l->stop = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->worker, NULL);
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
  l->threaded = 0;
}

int dyng_loader_finish(dyng_loader *l) {
  int rc = dyng__flush(l);
  dyng__stop(l);
  if (rc == DYNG_OK) rc = l->rc;
  if (rc == DYNG_OK) rc = dyng_graph_seal(l->g);
  return rc;
}

void dyng_loader_free(dyng_loader *l) {
  if (!l) return;
  if (l->threaded) {
    /* Drop what is queued: mark a failure so the worker skips it. */
    pthread_mutex_lock(&l->mu);
    if (l->rc == DYNG_OK) l->rc = DYNG_ESTATE;
    pthread_mutex_unlock(&l->mu);
    dyng__stop(l);
  }
  for (int i = 0; i < 2; i++) dyng_free(l->chunk[i].w);
  dyng_free(l);
}
