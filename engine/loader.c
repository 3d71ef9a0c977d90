/*
** engine/loader.c: the chunked bulk loader (see loader.h).
**
** The caller fills one chunk at a time.  A full chunk is loaded into the
** graph on the caller's thread, until the load proves large
** (DYNG__HELPER_AFTER chunks) and more than one thread may run: then a
** helper thread loads the chunks, in order, while the caller fills the
** next ones, DYNG__NBUF chunks in flight at most.  The graph is the same
** either way; only the helper touches it while it runs.
*/
#include "engine/loader.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define DYNG__CHUNK 8192
#define DYNG__NBUF 4
/* Chunks loaded on the caller's thread before a helper may start: a small
** load never starts a thread. */
#define DYNG__HELPER_AFTER 16

/* dyng__loader_set_helper_after's override; 0: none. */
static _Atomic unsigned dyng__helper_after = 0;

void dyng__loader_set_helper_after(unsigned n_chunks) { atomic_store(&dyng__helper_after, n_chunks); }

/* One chunk of queued edges. */
typedef struct dyng__chunk {
  size_t n;
  int64_t rowid[DYNG__CHUNK];
  int64_t src[DYNG__CHUNK];
  int64_t dst[DYNG__CHUNK];
  double *w; /* n_weights per queued edge */
} dyng__chunk;

struct dyng_loader {
  dyng_graph *g;
  int n_weights;
  int rc;                       /* first error, as the caller last saw it */
  dyng__chunk *buf[DYNG__NBUF];
  int cur;                      /* the chunk the caller fills */
  unsigned n_full;              /* chunks filled so far */
  /* The helper, once started; under mu: full, closing, abandon, helper_rc. */
  int helper;                   /* it runs (or ran and was not joined) */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv_full, cv_free;
  int full[DYNG__NBUF];         /* 1: queued for the helper; 0: the caller's */
  int closing;                  /* no more chunks: stop once the full ones are loaded */
  int abandon;                  /* ... or without loading them */
  int helper_rc;                /* the helper's first error */
  _Atomic size_t bytes;         /* the graph's bytes after the last chunk loaded */
};

/* Loads chunk c into the graph, prefetching the lookups of an edge a few
** ahead. */
static int dyng__load_chunk(dyng_graph *g, int nw, dyng__chunk *c) {
  int rc = DYNG_OK;
  for (size_t i = 0; i < c->n && rc == DYNG_OK; i++) {
    size_t a = i + DYNG_LOAD_AHEAD;
    if (a < c->n) dyng_graph_prefetch_load(g, c->rowid[a], c->src[a], c->dst[a]);
    rc = dyng_graph_load_edge(g, c->rowid[i], c->src[i], c->dst[i], nw ? c->w + i * (size_t)nw : NULL);
  }
  c->n = 0;
  return rc;
}

/* The helper: loads the full chunks in order until the caller closes. */
static void *dyng__helper(void *arg) {
  dyng_loader *l = arg;
  int rc = DYNG_OK;
  for (int c = 0;; c = (c + 1) % DYNG__NBUF) {
    pthread_mutex_lock(&l->mu);
    while (!l->full[c] && !l->closing) pthread_cond_wait(&l->cv_full, &l->mu);
    /* Chunks fill in order: if this one is not full, none after it is. */
    int stop = !l->full[c] || l->abandon;
    pthread_mutex_unlock(&l->mu);
    if (stop) break;
    if (rc == DYNG_OK) {
      rc = dyng__load_chunk(l->g, l->n_weights, l->buf[c]);
      atomic_store_explicit(&l->bytes, dyng_graph_bytes(l->g), memory_order_relaxed);
    }
    l->buf[c]->n = 0;
    pthread_mutex_lock(&l->mu);
    if (rc != DYNG_OK && l->helper_rc == DYNG_OK) l->helper_rc = rc;
    l->full[c] = 0;
    pthread_cond_signal(&l->cv_free);
    pthread_mutex_unlock(&l->mu);
  }
  return NULL;
}

/* Starts the helper; 0 when it could not (the caller then loads). */
static int dyng__helper_start(dyng_loader *l) {
  if (pthread_mutex_init(&l->mu, NULL) != 0) return 0;
  if (pthread_cond_init(&l->cv_full, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    return 0;
  }
  if (pthread_cond_init(&l->cv_free, NULL) != 0) {
    pthread_cond_destroy(&l->cv_full);
    pthread_mutex_destroy(&l->mu);
    return 0;
  }
  memset(l->full, 0, sizeof l->full);
  l->closing = l->abandon = 0;
  l->helper_rc = DYNG_OK;
  if (pthread_create(&l->thread, NULL, dyng__helper, l) != 0) {
    pthread_cond_destroy(&l->cv_free);
    pthread_cond_destroy(&l->cv_full);
    pthread_mutex_destroy(&l->mu);
    return 0;
  }
  l->helper = 1;
  return 1;
}

/* Stops the helper (after it loaded what is queued, unless abandon) and
** takes its result. */
static void dyng__helper_stop(dyng_loader *l, int abandon) {
  if (!l->helper) return;
  pthread_mutex_lock(&l->mu);
  l->closing = 1;
  l->abandon = abandon;
  pthread_cond_signal(&l->cv_full);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->thread, NULL);
  if (l->rc == DYNG_OK) l->rc = l->helper_rc;
  pthread_cond_destroy(&l->cv_free);
  pthread_cond_destroy(&l->cv_full);
  pthread_mutex_destroy(&l->mu);
  l->helper = 0;
}

/* The caller's chunk is full (or the last): hands it to the helper and
** waits for the next one to be free, or loads it here. */
static int dyng__chunk_done(dyng_loader *l) {
  unsigned after = atomic_load(&dyng__helper_after);
  if (!l->helper && ++l->n_full > (after ? after - 1 : DYNG__HELPER_AFTER) && (after || dyng_threads_now() > 1))
    (void)dyng__helper_start(l);
  if (!l->helper) {
    l->rc = dyng__load_chunk(l->g, l->n_weights, l->buf[l->cur]);
    return l->rc;
  }
  pthread_mutex_lock(&l->mu);
  l->full[l->cur] = 1;
  pthread_cond_signal(&l->cv_full);
  l->cur = (l->cur + 1) % DYNG__NBUF;
  while (l->full[l->cur]) pthread_cond_wait(&l->cv_free, &l->mu);
  l->rc = l->helper_rc;
  pthread_mutex_unlock(&l->mu);
  return l->rc;
}

void dyng_loader_free(dyng_loader *l) {
  if (!l) return;
  dyng__helper_stop(l, 1);
  for (int b = 0; b < DYNG__NBUF; b++) {
    if (l->buf[b]) dyng_free(l->buf[b]->w);
    dyng_free(l->buf[b]);
  }
  dyng_free(l);
}

int dyng_loader_new(dyng_loader **out, dyng_graph *g) {
  *out = NULL;
  dyng_loader *l = dyng_malloc(sizeof *l);
  if (!l) return DYNG_ENOMEM;
  memset(l, 0, sizeof *l);
  l->g = g;
  l->n_weights = dyng_graph_n_weights(g);
  l->rc = DYNG_OK;
  atomic_init(&l->bytes, 0);
  for (int b = 0; b < DYNG__NBUF; b++) {
    l->buf[b] = dyng_malloc(sizeof *l->buf[b]);
    if (l->buf[b]) {
      l->buf[b]->n = 0;
      l->buf[b]->w = dyng_malloc((size_t)DYNG__CHUNK * (size_t)(l->n_weights ? l->n_weights : 1) *
                                 sizeof(double));
    }
    if (!l->buf[b] || !l->buf[b]->w) {
      dyng_loader_free(l);
      return DYNG_ENOMEM;
    }
  }
  *out = l;
  return DYNG_OK;
}

int dyng_loader_add(dyng_loader *l, int64_t rowid, int64_t src, int64_t dst, const double *w) {
  if (l->rc != DYNG_OK) return l->rc;
  dyng__chunk *c = l->buf[l->cur];
  size_t i = c->n++;
  c->rowid[i] = rowid;
  c->src[i] = src;
  c->dst[i] = dst;
  if (l->n_weights) memcpy(c->w + i * (size_t)l->n_weights, w, (size_t)l->n_weights * sizeof *w);
  return c->n == DYNG__CHUNK ? dyng__chunk_done(l) : DYNG_OK;
}

size_t dyng_loader_graph_bytes(const dyng_loader *l) {
  return l->helper ? atomic_load_explicit(&l->bytes, memory_order_relaxed) : dyng_graph_bytes(l->g);
}

int dyng_loader_finish(dyng_loader *l) {
  if (l->rc == DYNG_OK && l->buf[l->cur]->n) (void)dyng__chunk_done(l);
  dyng__helper_stop(l, 0);
  return l->rc == DYNG_OK ? dyng_graph_seal(l->g) : l->rc;
}
