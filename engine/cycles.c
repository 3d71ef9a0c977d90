/*
** engine/cycles.c: k-cycle counts from scratch and per batch (see cycles.h).
**
** From scratch, everything runs on a snapshot: the underlying simple
** undirected graph as a CSR with sorted neighbour lists, each entry carrying
** which of the two arcs exist, vertices relabelled by non-increasing degree
** (label 0 is the biggest hub).  Triangles are counted x > y > z, each edge
** followed toward smaller labels (higher degree); 4-cycles from their
** smallest label u over wedges u-v-w with v, w > u; longer cycles by a DFS
** from each root s over labels > s.
**
** Per batch, the changed simple edges (status, rank in the order of their
** keys, copies removed and added) live in a small open-addressing table;
** the edges the batch removed from the simple view are also kept sorted by
** endpoint (the overlay), so that a vertex's neighbours in the union of the
** old and the new graph are its neighbours in the view plus its overlay
** entries.  The path search takes those and admits an edge when it is
** unchanged, or changed the same way as the edge being processed (present
** in the graph searched) and ranked after it.
*/
#include "engine/cycles.h"
#include "engine/alloc.h"
#include "engine/error.h"

#include <stdlib.h>
#include <string.h>

#define ARC_OUT 1u   /* snapshot entry (x, y): the arc x -> y exists */
#define ARC_IN 2u    /* snapshot entry (x, y): the arc y -> x exists */
#define CHECK_EVERY 16384u /* units of work between two cancel checks */

/* ---- stopping ----------------------------------------------------------- */

/* Counts one thread's work (neighbour entries looked at) and checks its
** team each time CHECK_EVERY more was done (thread 0 then also asks the
** cancel callback). */
typedef struct dyng__meter {
  dyng_team *team;
  int thread;
  uint64_t work;             /* done so far */
  uint64_t next;             /* when to check next */
} dyng__meter;

static inline int dyng__meter_add(dyng__meter *m, uint64_t work) {
  m->work += work;
  if (m->work < m->next) return DYNG_OK;
  m->next = m->work + CHECK_EVERY;
  return dyng_team_check(m->team, m->thread);
}

/* Roots handed out at a time: the first ones are the biggest hubs. */
#define ROOT_CHUNK 64u

static inline int dyng__add(uint64_t *sum, uint64_t x) {
  return __builtin_add_overflow(*sum, x, sum) ? DYNG_EOVERFLOW : DYNG_OK;
}

/* First position in nbr[b .. e) holding a value > t (the lists are sorted). */
static inline uint32_t dyng__after(const uint32_t *nbr, uint32_t b, uint32_t e, uint32_t t) {
  while (b < e) {
    uint32_t mid = b + (e - b) / 2;
    if (nbr[mid] <= t) b = mid + 1;
    else e = mid;
  }
  return b;
}

/* ---- the snapshot ------------------------------------------------------- */

typedef struct dyng__snap {
  uint32_t n;    /* vertices, labelled by non-increasing degree */
  uint32_t *off; /* n + 1 list starts */
  uint32_t *nbr; /* per entry: the neighbour, each list increasing */
  uint8_t *arc;  /* per entry: ARC_OUT | ARC_IN */
} dyng__snap;

static void dyng__snap_free(dyng__snap *s) {
  dyng_free(s->off);
  dyng_free(s->nbr);
  dyng_free(s->arc);
  memset(s, 0, sizeof *s);
}

/* Sorts the entries (own[i], nbr[i], arc[i]) of vertices 0..n-1 into a CSR
** (off[n + 1], out_nbr, out_arc), by owner and within an owner by
** neighbour: two stable counting sorts, neighbour first. */
static int dyng__csr_sort(uint32_t n, size_t n_ent, const uint32_t *own, const uint32_t *nbr,
                          const uint8_t *arc, uint32_t *off, uint32_t *out_nbr, uint8_t *out_arc) {
  uint32_t *cnt = dyng_calloc((size_t)n + 1, sizeof *cnt);
  uint32_t *t_own = dyng_malloc((n_ent ? n_ent : 1) * sizeof *t_own);
  uint32_t *t_nbr = dyng_malloc((n_ent ? n_ent : 1) * sizeof *t_nbr);
  uint8_t *t_arc = dyng_malloc(n_ent ? n_ent : 1);
  if (!cnt || !t_own || !t_nbr || !t_arc) {
    dyng_free(cnt);
    dyng_free(t_own);
    dyng_free(t_nbr);
    dyng_free(t_arc);
    return DYNG_ENOMEM;
  }
  for (size_t i = 0; i < n_ent; i++) cnt[nbr[i] + 1]++;
  for (uint32_t v = 0; v < n; v++) cnt[v + 1] += cnt[v];
  for (size_t i = 0; i < n_ent; i++) {
    uint32_t p = cnt[nbr[i]]++;
    t_own[p] = own[i];
    t_nbr[p] = nbr[i];
    t_arc[p] = arc[i];
  }
  memset(off, 0, ((size_t)n + 1) * sizeof *off);
  for (size_t i = 0; i < n_ent; i++) off[own[i] + 1]++;
  for (uint32_t v = 0; v < n; v++) off[v + 1] += off[v];
  memcpy(cnt, off, ((size_t)n + 1) * sizeof *cnt);
  for (size_t i = 0; i < n_ent; i++) {
    uint32_t p = cnt[t_own[i]]++;
    out_nbr[p] = t_nbr[i];
    out_arc[p] = t_arc[i];
  }
  dyng_free(cnt);
  dyng_free(t_own);
  dyng_free(t_nbr);
  dyng_free(t_arc);
  return DYNG_OK;
}

/* Builds the snapshot of view g (see the top of the file).  Think of this
** as the constructor of *s; dyng__snap_free releases it. */
static int dyng__snap_build(const dyng_graph_view *g, dyng__snap *s) {
  const uint32_t n = g->n_vertices;
  size_t n_ent = 0;
  int rc = DYNG_ENOMEM;
  memset(s, 0, sizeof *s);
  for (uint32_t e = 0; e < g->n_edge_slots; e++)
    if (g->edge_src[e] != DYNG_NONE && g->edge_src[e] != g->edge_dst[e]) n_ent += 2;
  const size_t room = n_ent ? n_ent : 1;
  uint32_t *own = dyng_malloc(room * sizeof *own), *nbr = dyng_malloc(room * sizeof *nbr);
  uint8_t *arc = dyng_malloc(room);
  uint32_t *off = dyng_malloc(((size_t)n + 1) * sizeof *off), *label = dyng_calloc((size_t)n + 1, sizeof *label);
  s->off = dyng_malloc(((size_t)n + 1) * sizeof *s->off);
  s->nbr = dyng_malloc(room * sizeof *s->nbr);
  s->arc = dyng_malloc(room);
  if (!own || !nbr || !arc || !off || !label || !s->off || !s->nbr || !s->arc) goto done;

  /* Every arc at both ends, in the view's vertex indices. */
  const uint8_t both = ARC_OUT | ARC_IN;
  size_t i = 0;
  for (uint32_t e = 0; e < g->n_edge_slots; e++) {
    uint32_t a = g->edge_src[e], b = g->edge_dst[e];
    if (a == DYNG_NONE || a == b) continue;
    own[i] = a, nbr[i] = b, arc[i++] = g->directed ? ARC_OUT : both;
    own[i] = b, nbr[i] = a, arc[i++] = g->directed ? ARC_IN : both;
  }
  if ((rc = dyng__csr_sort(n, n_ent, own, nbr, arc, off, s->nbr, s->arc)) != DYNG_OK) goto done;

  /* Merge parallel entries in place; off[] becomes the merged lists. */
  size_t w = 0;
  uint32_t read = 0;
  for (uint32_t v = 0; v < n; v++) {
    size_t start = w;
    uint32_t read_end = off[v + 1];
    for (uint32_t p = read; p < read_end; p++) {
      if (w > start && s->nbr[w - 1] == s->nbr[p]) {
        s->arc[w - 1] |= s->arc[p];
      } else {
        s->nbr[w] = s->nbr[p];
        s->arc[w++] = s->arc[p];
      }
    }
    off[v + 1] = (uint32_t)w;
    read = read_end;
  }

  /* Labels by non-increasing simple degree, ties by index (counting sort). */
  uint32_t max_deg = 0;
  for (uint32_t v = 0; v < n; v++)
    if (off[v + 1] - off[v] > max_deg) max_deg = off[v + 1] - off[v];
  uint32_t *first = dyng_calloc((size_t)max_deg + 2, sizeof *first);
  if (!first) {
    rc = DYNG_ENOMEM;
    goto done;
  }
  for (uint32_t v = 0; v < n; v++) first[max_deg - (off[v + 1] - off[v]) + 1]++;
  for (uint32_t d = 0; d <= max_deg; d++) first[d + 1] += first[d];
  for (uint32_t v = 0; v < n; v++) label[v] = first[max_deg - (off[v + 1] - off[v])]++;
  dyng_free(first);

  /* The merged entries relabelled, sorted once more. */
  i = 0;
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t p = off[v]; p < off[v + 1]; p++) {
      own[i] = label[v];
      nbr[i] = label[s->nbr[p]];
      arc[i++] = s->arc[p];
    }
  rc = dyng__csr_sort(n, w, own, nbr, arc, s->off, s->nbr, s->arc);
done:
  dyng_free(own);
  dyng_free(nbr);
  dyng_free(arc);
  dyng_free(off);
  dyng_free(label);
  if (rc) dyng__snap_free(s);
  else s->n = n;
  return rc;
}

/* ---- from scratch: the loop over roots ---------------------------------- */

/* What the threads of one count from scratch share: the snapshot, the
** mode, and per thread a partial count and scratch arrays (up to three per
** vertex, allocated before the threads start). */
typedef struct dyng__count_job {
  const dyng__snap *s;
  int directed;
  int k;
  dyng_team team;
  uint64_t *count;    /* per thread */
  void **scratch[3];  /* per thread; NULL where unused */
} dyng__count_job;

/* Allocates `bytes` zeroed bytes of scratch slot `slot` for every thread. */
static int dyng__job_scratch(dyng__count_job *j, int slot, size_t bytes) {
  j->scratch[slot] = dyng_calloc((size_t)j->team.n_threads, sizeof *j->scratch[slot]);
  if (!j->scratch[slot]) return DYNG_ENOMEM;
  for (int t = 0; t < j->team.n_threads; t++)
    if (!(j->scratch[slot][t] = dyng_calloc(bytes ? bytes : 1, 1))) return DYNG_ENOMEM;
  return DYNG_OK;
}

static void dyng__job_free(dyng__count_job *j) {
  for (int slot = 0; slot < 3; slot++) {
    if (!j->scratch[slot]) continue;
    for (int t = 0; t < j->team.n_threads; t++) dyng_free(j->scratch[slot][t]);
    dyng_free(j->scratch[slot]);
  }
  dyng_free(j->count);
}

/* ---- from scratch: triangles -------------------------------------------- */

/* Triangles x > y > z: for each x, mark its neighbours below it, then look
** through the lists (below y) of its neighbours y below it.  Lists below a
** vertex hold its neighbours of higher degree, at most sqrt(2E) of them.
** One thread's share; scratch 0: the marks (one byte per vertex). */
static void dyng__triangles(void *ctx, int thread) {
  dyng__count_job *j = ctx;
  const dyng__snap *s = j->s;
  const int directed = j->directed;
  uint8_t *mark = j->scratch[0][thread];
  const uint32_t *off = s->off, *nbr = s->nbr;
  const uint8_t *arc = s->arc;
  dyng__meter m = {&j->team, thread, 0, CHECK_EVERY};
  uint64_t c = 0;
  uint32_t from, to;
  int rc = DYNG_OK;
  while (rc == DYNG_OK && dyng_team_take(&j->team, &from, &to)) {
    for (uint32_t x = from; x < to && rc == DYNG_OK; x++) {
      uint32_t xb = off[x], xe = dyng__after(nbr, off[x], off[x + 1], x);
      if (xe - xb < 2) continue;
      for (uint32_t p = xb; p < xe; p++) mark[nbr[p]] = (uint8_t)(arc[p] | 4u);
      uint64_t work = 0;
      for (uint32_t p = xb; p < xe; p++) {
        uint32_t y = nbr[p], ye = dyng__after(nbr, off[y], off[y + 1], y);
        uint8_t fxy = arc[p];
        work += ye - off[y];
        for (uint32_t q = off[y]; q < ye; q++) {
          uint8_t fxz = mark[nbr[q]];
          if (!fxz) continue;
          if (!directed) {
            c++;
          } else {
            uint8_t fyz = arc[q];
            c += (fxy & ARC_OUT) && (fyz & ARC_OUT) && (fxz & ARC_IN); /* x->y->z->x */
            c += (fxz & ARC_OUT) && (fyz & ARC_IN) && (fxy & ARC_IN);  /* x->z->y->x */
          }
        }
      }
      for (uint32_t p = xb; p < xe; p++) mark[nbr[p]] = 0;
      rc = dyng__meter_add(&m, work + (xe - xb));
    }
  }
  j->count[thread] = c;
  dyng_team_fail(&j->team, rc);
}

/* ---- from scratch: 4-cycles --------------------------------------------- */

/* 4-cycles u-v-w-v' with u their smallest label (their biggest hub): for
** each u, the wedges u-v-w with v, w > u are counted per w; a pair of them
** through different middles is a cycle.  Directed: wedges u->v->w (fwd[w])
** and w->v->u (bwd[w]) pair up, except the same middle taken twice
** (both[w]).  One thread's share; scratch 0..2: fwd, bwd, both (bwd and
** both only when directed). */
static void dyng__quads(void *ctx, int thread) {
  dyng__count_job *j = ctx;
  const dyng__snap *s = j->s;
  const int directed = j->directed;
  uint32_t *fwd = j->scratch[0][thread];
  uint32_t *bwd = directed ? j->scratch[1][thread] : NULL;
  uint32_t *both = directed ? j->scratch[2][thread] : NULL;
  const uint32_t *off = s->off, *nbr = s->nbr;
  const uint8_t *arc = s->arc;
  dyng__meter m = {&j->team, thread, 0, CHECK_EVERY};
  uint64_t c = 0;
  uint32_t from, to;
  int rc = DYNG_OK;
  while (rc == DYNG_OK && dyng_team_take(&j->team, &from, &to)) {
    for (uint32_t u = from; u < to && rc == DYNG_OK; u++) {
      uint32_t ub = dyng__after(nbr, off[u], off[u + 1], u), ue = off[u + 1];
      if (ue - ub < 2) continue;
      /* For one u, sum over w of C(wedges to w, 2) <= (wedges)^2 / 2 < 2^63:
      ** c_u cannot overflow, c is checked. */
      uint64_t work = 0, c_u = 0;
      for (uint32_t p = ub; p < ue; p++) {
        uint32_t v = nbr[p];
        uint8_t fuv = arc[p];
        for (uint32_t q = off[v + 1]; q > off[v] && nbr[q - 1] > u; q--) {
          uint32_t w = nbr[q - 1];
          work++;
          if (!directed) {
            c_u += fwd[w]++;
          } else {
            uint8_t fvw = arc[q - 1];
            uint32_t f = (fuv & ARC_OUT) && (fvw & ARC_OUT), b = (fvw & ARC_IN) && (fuv & ARC_IN);
            fwd[w] += f;
            bwd[w] += b;
            both[w] += f & b;
          }
        }
      }
      /* Collect (directed) and clear, over the same wedges. */
      rc = dyng__add(&c, c_u);
      for (uint32_t p = ub; p < ue; p++) {
        uint32_t v = nbr[p];
        for (uint32_t q = off[v + 1]; q > off[v] && nbr[q - 1] > u; q--) {
          uint32_t w = nbr[q - 1];
          if (directed && (fwd[w] | bwd[w]) && rc == DYNG_OK)
            rc = dyng__add(&c, (uint64_t)fwd[w] * bwd[w] - both[w]);
          fwd[w] = 0;
          if (directed) bwd[w] = both[w] = 0;
        }
      }
      if (rc == DYNG_OK) rc = dyng__meter_add(&m, 2 * work + (ue - ub));
    }
  }
  j->count[thread] = c;
  dyng_team_fail(&j->team, rc);
}

/* ---- from scratch: a DFS for longer cycles ------------------------------ */

/* The search from one root s: paths s = path[0], path[1], ... through
** labels > s, closed by an edge (an arc into s) back to s. */
typedef struct dyng__dfs {
  const dyng__snap *g;
  int k;            /* cycle length */
  int directed;     /* follow arcs x -> y only */
  uint8_t far;      /* dist[] value for "farther than the BFS went" */
  uint32_t s;       /* the root */
  uint8_t *closes;  /* per vertex: an edge (an arc) from it to s, it > s */
  uint8_t *on_path; /* per vertex: on the current path */
  uint8_t *dist;    /* per vertex: hops to s within labels >= s, or far */
  uint32_t path[DYNG_CYCLES_MAX_K];
  uint64_t count;
  dyng__meter *m;
} dyng__dfs;

/* Extends the path, whose last vertex x = path[d] is d edges from s. */
static int dyng__dfs_step(dyng__dfs *c, uint32_t x, int d) {
  const uint32_t *nbr = c->g->nbr;
  const uint8_t *arc = c->g->arc;
  uint32_t e = c->g->off[x + 1];
  int rc = dyng__meter_add(c->m, e - c->g->off[x]);
  if (rc) return rc;
  if (d == c->k - 2) {
    /* One edge to go to a neighbour of s, one to close.  An undirected
    ** cycle is kept in the direction whose last vertex is after path[1]. */
    uint64_t n = 0;
    uint32_t p = dyng__after(nbr, c->g->off[x], e, c->directed ? c->s : c->path[1]);
    for (; p < e; p++) {
      uint32_t y = nbr[p];
      n += c->closes[y] && !c->on_path[y] && (!c->directed || (arc[p] & ARC_OUT));
    }
    return dyng__add(&c->count, n);
  }
  const uint8_t left = (uint8_t)(c->k - d - 1); /* edges still to go from y */
  for (uint32_t p = dyng__after(nbr, c->g->off[x], e, c->s); p < e; p++) {
    uint32_t y = nbr[p];
    if (c->dist[y] > left || c->on_path[y] || (c->directed && !(arc[p] & ARC_OUT))) continue;
    c->on_path[y] = 1;
    c->path[d + 1] = y;
    rc = dyng__dfs_step(c, y, d + 1);
    c->on_path[y] = 0;
    if (rc) return rc;
  }
  return DYNG_OK;
}

/* One thread's share of the roots.  Scratch 0: closes and on_path (two
** bytes per vertex); 1: dist (one byte per vertex, starts all `far`); 2:
** the BFS queue. */
static void dyng__dfs_count(void *ctx, int thread) {
  dyng__count_job *j = ctx;
  const dyng__snap *s = j->s;
  const int k = j->k, directed = j->directed;
  const uint8_t depth = (uint8_t)(k / 2); /* of the BFS around each root */
  dyng__meter m = {&j->team, thread, 0, CHECK_EVERY};
  dyng__dfs c;
  memset(&c, 0, sizeof c);
  c.g = s;
  c.k = k;
  c.directed = directed;
  c.far = (uint8_t)(depth + 1);
  c.m = &m;
  c.closes = j->scratch[0][thread];
  c.on_path = c.closes + s->n;
  c.dist = j->scratch[1][thread];
  uint32_t *queue = j->scratch[2][thread];
  memset(c.dist, c.far, s->n);
  const uint32_t *off = s->off, *nbr = s->nbr;
  const uint8_t *arc = s->arc;
  uint32_t from, to;
  int rc = DYNG_OK;
  while (rc == DYNG_OK && dyng_team_take(&j->team, &from, &to)) {
    for (uint32_t r = from; r < to && rc == DYNG_OK; r++) {
      uint32_t rb = dyng__after(nbr, off[r], off[r + 1], r), re = off[r + 1];
      int n_in = 0, n_out = 0;
      for (uint32_t p = rb; p < re; p++) {
        n_in += (arc[p] & ARC_IN) != 0;
        n_out += (arc[p] & ARC_OUT) != 0;
        c.closes[nbr[p]] = !directed || (arc[p] & ARC_IN);
      }
      if (directed ? n_in && n_out : re - rb >= 2) {
        /* Hops to r within labels >= r (against the arcs), up to `depth`. */
        uint32_t head = 0, tail = 0;
        c.dist[r] = 0;
        queue[tail++] = r;
        while (head < tail && rc == DYNG_OK) {
          uint32_t z = queue[head++];
          if (c.dist[z] >= depth) continue;
          uint32_t zb = dyng__after(nbr, off[z], off[z + 1], r);
          for (uint32_t p = zb; p < off[z + 1]; p++) {
            uint32_t y = nbr[p];
            if (c.dist[y] != c.far || (directed && !(arc[p] & ARC_IN))) continue;
            c.dist[y] = (uint8_t)(c.dist[z] + 1);
            queue[tail++] = y;
          }
          rc = dyng__meter_add(&m, off[z + 1] - zb + 1);
        }
        if (rc == DYNG_OK) {
          c.s = r;
          c.path[0] = r;
          c.on_path[r] = 1;
          rc = dyng__dfs_step(&c, r, 0);
          c.on_path[r] = 0;
        }
        for (uint32_t i = 0; i < tail; i++) c.dist[queue[i]] = c.far;
      }
      for (uint32_t p = rb; p < re; p++) c.closes[nbr[p]] = 0;
    }
  }
  j->count[thread] = c.count;
  dyng_team_fail(&j->team, rc);
}

int dyng_cycles_count(const dyng_graph_view *g, int k, int directed, const dyng_cancel *cancel,
                      uint64_t *count) {
  if (k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K) return DYNG_EINVAL;
  dyng__snap s;
  int rc = dyng__snap_build(g, &s);
  if (rc) return rc;
  dyng__count_job j;
  memset(&j, 0, sizeof j);
  j.s = &s;
  j.k = k;
  j.directed = directed != 0;
  dyng_team_init(&j.team, s.n, ROOT_CHUNK, 0, cancel);
  const size_t n = s.n;
  void (*fn)(void *, int);
  if (!(j.count = dyng_calloc((size_t)j.team.n_threads, sizeof *j.count))) rc = DYNG_ENOMEM;
  if (k == 3) {
    fn = dyng__triangles;
    if (rc == DYNG_OK) rc = dyng__job_scratch(&j, 0, n);
  } else if (k == 4) {
    fn = dyng__quads;
    for (int slot = 0; slot < (j.directed ? 3 : 1) && rc == DYNG_OK; slot++)
      rc = dyng__job_scratch(&j, slot, n * sizeof(uint32_t));
  } else {
    fn = dyng__dfs_count;
    if (rc == DYNG_OK) rc = dyng__job_scratch(&j, 0, 2 * n);
    if (rc == DYNG_OK) rc = dyng__job_scratch(&j, 1, n);
    if (rc == DYNG_OK) rc = dyng__job_scratch(&j, 2, n * sizeof(uint32_t));
  }
  if (rc == DYNG_OK) rc = dyng_team_run(&j.team, fn, &j);
  uint64_t c = 0;
  for (int t = 0; t < j.team.n_threads && rc == DYNG_OK; t++) rc = dyng__add(&c, j.count[t]);
  dyng__job_free(&j);
  dyng__snap_free(&s);
  if (rc == DYNG_OK) *count = c;
  return rc;
}

/* ---- per batch: the changed simple edges -------------------------------- */

enum { DYNG__SAME = 0, DYNG__REMOVED = 1, DYNG__ADDED = 2 };
enum { DYNG__OUT = 0, DYNG__IN = 1 };

/* One simple edge a batch touched.  Undirected, the key is min << 32 | max;
** directed, src << 32 | dst.  Key 0 (a self-loop) marks a free cell. */
typedef struct dyng__chg {
  uint64_t key;
  int64_t removed; /* copies the batch removed (each arc of an edge) */
  int64_t added;   /* copies it added */
  uint32_t rank;   /* position among the changed edges, by key */
  uint8_t status;  /* DYNG__SAME, DYNG__REMOVED or DYNG__ADDED */
} dyng__chg;

/* A vertex's distance to the end of the paths, in a table reused from one
** changed edge to the next: cells of older generations are free. */
typedef struct dyng__hop {
  uint32_t vertex;
  uint32_t gen;  /* the generation that wrote the cell; 0: never */
  uint8_t dist;  /* hops to the end */
} dyng__hop;

/* Everything one dyng_cycles_delta works with. */
typedef struct dyng__delta {
  const dyng_graph_view *g; /* the new graph */
  int k;                    /* cycle length */
  int directed;             /* directed cycles */
  dyng__chg *tab;           /* the touched edges, open addressing */
  size_t mask;              /* cells - 1, a power of two minus one */
  uint64_t *changed;        /* keys whose status is not SAME, increasing */
  size_t n_changed;
  uint64_t *over_out;       /* removed edges x << 32 | y, at x (both ends
                               when undirected), increasing */
  size_t n_over_out;
  uint64_t *over_in;        /* directed: removed arcs y -> x as x << 32 | y */
  size_t n_over_in;
  /* The path search of one changed edge: */
  uint8_t phase;            /* DYNG__REMOVED: old graph; DYNG__ADDED: new */
  uint32_t rank;            /* the edge's rank: smaller changed ones are out */
  int dir;                  /* walk along (DYNG__OUT) or against the arcs */
  uint32_t end;             /* where the paths end */
  uint32_t path[DYNG_CYCLES_MAX_K];
  uint32_t *ends;           /* the admitted neighbours of `end` */
  size_t n_ends, cap_ends;
  /* Per vertex stamps of this search state: seen[v] == seen_gen when v is
  ** already in the list being gathered, at_end[v] == end_gen when v is in
  ** ends[].  Allocated on first use (8 bytes per vertex). */
  uint32_t *seen, seen_gen;
  uint32_t *at_end, end_gen;
  uint32_t *buf[DYNG_CYCLES_MAX_K]; /* per depth: a vertex's neighbours */
  size_t cap[DYNG_CYCLES_MAX_K];
  uint64_t count;           /* paths found for this edge */
  /* Hops to `end` (k >= 5), up to `depth`, of the vertices seen so far: */
  int depth;                /* of the BFS from end; 0: no pruning */
  dyng__hop *hops;          /* open addressing, current `gen` only */
  size_t hops_mask, n_hops;
  uint32_t gen;             /* generation of `hops`, one per edge */
  uint32_t *queue;          /* of the BFS */
  size_t cap_queue;
  dyng__meter m;
} dyng__delta;

static inline size_t dyng__hash(uint64_t key, size_t mask) {
  return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

/* The cell of `key`, or the free cell where it would go. */
static inline dyng__chg *dyng__cell(const dyng__delta *c, uint64_t key) {
  size_t i = dyng__hash(key, c->mask);
  while (c->tab[i].key && c->tab[i].key != key) i = (i + 1) & c->mask;
  return &c->tab[i];
}

static inline uint64_t dyng__key(const dyng__delta *c, uint32_t a, uint32_t b) {
  if (!c->directed && a > b) return (uint64_t)b << 32 | a;
  return (uint64_t)a << 32 | b;
}

/* The key of the edge between x and y crossed in direction dir (from x to y
** along the arc, or from x to y against the arc y -> x). */
static inline uint64_t dyng__step_key(const dyng__delta *c, uint32_t x, uint32_t y, int dir) {
  return dir == DYNG__OUT ? dyng__key(c, x, y) : dyng__key(c, y, x);
}

/* Whether the path search may use the edge of `key`: unchanged, or changed
** like the edge searched for (so present in the graph searched) and after
** it in the order. */
static inline int dyng__admits(const dyng__delta *c, uint64_t key) {
  const dyng__chg *e = dyng__cell(c, key);
  if (!e->key || e->status == DYNG__SAME) return 1;
  return e->status == c->phase && e->rank > c->rank;
}

/* Counts one copy of the edge a - b (directed: arc a -> b; both arcs of an
** undirected graph's edge) as removed or added by the batch. */
static void dyng__touch(dyng__delta *c, uint32_t a, uint32_t b, int is_added) {
  if (a == b) return;
  dyng__chg *e = dyng__cell(c, dyng__key(c, a, b));
  e->key = dyng__key(c, a, b);
  if (is_added) e->added++;
  else e->removed++;
  if (c->directed && !c->g->directed) { /* an undirected edge: both arcs */
    e = dyng__cell(c, dyng__key(c, b, a));
    e->key = dyng__key(c, b, a);
    if (is_added) e->added++;
    else e->removed++;
  }
}

/* Entries of vertex x equal to y in one adjacency direction. */
static uint64_t dyng__copies_in(const dyng_adj_view *a, uint32_t x, uint32_t y) {
  uint64_t n = 0;
  for (uint32_t p = a->off[x], e = a->off[x] + a->deg[x]; p < e; p++) n += a->nbr[p] == y;
  return n;
}

/* Copies of the simple edge a - b (directed: arc a -> b) in the new graph,
** looked up from the end with the shorter list. */
static uint64_t dyng__new_copies(const dyng__delta *c, uint32_t a, uint32_t b) {
  const dyng_graph_view *g = c->g;
  if (!g->directed) return g->out.deg[b] < g->out.deg[a] ? dyng__copies_in(&g->out, b, a)
                                                         : dyng__copies_in(&g->out, a, b);
  if (c->directed) return g->in.deg[b] < g->out.deg[a] ? dyng__copies_in(&g->in, b, a)
                                                       : dyng__copies_in(&g->out, a, b);
  if ((uint64_t)g->out.deg[b] + g->in.deg[b] < (uint64_t)g->out.deg[a] + g->in.deg[a]) {
    uint32_t t = a;
    a = b;
    b = t;
  }
  return dyng__copies_in(&g->out, a, b) + dyng__copies_in(&g->in, a, b);
}

static int dyng__cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return (a > b) - (a < b);
}

/* Fills the table from the batch's records, decides each touched edge's
** status from its copies before and after, ranks the changed ones and
** builds the overlay of the removed ones. */
static int dyng__delta_prepare(dyng__delta *c, const dyng_changes *ch) {
  const dyng_graph_view *g = c->g;
  size_t n_keys = 2 * (ch->n_removed + ch->n_added), cells = 16;
  while (cells < 2 * n_keys) cells *= 2;
  c->tab = dyng_calloc(cells, sizeof *c->tab);
  if (!c->tab) return DYNG_ENOMEM;
  c->mask = cells - 1;
  for (size_t i = 0; i < ch->n_removed + ch->n_added; i++) {
    int is_added = i >= ch->n_removed;
    const dyng_edge_change *r = is_added ? &ch->added[i - ch->n_removed] : &ch->removed[i];
    if (r->src >= g->n_vertices || r->dst >= g->n_vertices) return DYNG_EINVAL;
    dyng__touch(c, r->src, r->dst, is_added);
  }
  size_t n_removed = 0;
  for (size_t i = 0; i < cells; i++) {
    dyng__chg *e = &c->tab[i];
    if (!e->key) continue;
    int64_t now = (int64_t)dyng__new_copies(c, (uint32_t)(e->key >> 32), (uint32_t)e->key);
    int64_t before = now + e->removed - e->added;
    if (before < 0) return DYNG_EINVAL; /* more added than the graph has */
    e->status = before && !now ? DYNG__REMOVED : !before && now ? DYNG__ADDED : DYNG__SAME;
    c->n_changed += e->status != DYNG__SAME;
    n_removed += e->status == DYNG__REMOVED;
  }
  c->changed = dyng_malloc((c->n_changed ? c->n_changed : 1) * sizeof *c->changed);
  c->over_out = dyng_malloc((2 * n_removed + 1) * sizeof *c->over_out);
  c->over_in = dyng_malloc((n_removed + 1) * sizeof *c->over_in);
  if (!c->changed || !c->over_out || !c->over_in) return DYNG_ENOMEM;
  size_t j = 0;
  for (size_t i = 0; i < cells; i++) {
    const dyng__chg *e = &c->tab[i];
    if (!e->key || e->status == DYNG__SAME) continue;
    c->changed[j++] = e->key;
    if (e->status != DYNG__REMOVED) continue;
    uint64_t a = e->key >> 32, b = e->key & 0xffffffffu;
    c->over_out[c->n_over_out++] = a << 32 | b;
    if (c->directed) c->over_in[c->n_over_in++] = b << 32 | a;
    else c->over_out[c->n_over_out++] = b << 32 | a;
  }
  qsort(c->changed, c->n_changed, sizeof *c->changed, dyng__cmp_u64);
  qsort(c->over_out, c->n_over_out, sizeof *c->over_out, dyng__cmp_u64);
  qsort(c->over_in, c->n_over_in, sizeof *c->over_in, dyng__cmp_u64);
  for (size_t i = 0; i < c->n_changed; i++) dyng__cell(c, c->changed[i])->rank = (uint32_t)i;
  return DYNG_OK;
}

/* The overlay entries of x: positions [*b, *e) of the sorted list o. */
static void dyng__over_range(const uint64_t *o, size_t n, uint32_t x, size_t *b, size_t *e) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((o[mid] >> 32) < x) lo = mid + 1;
    else hi = mid;
  }
  *b = lo;
  while (lo < n && (o[lo] >> 32) == x) lo++;
  *e = lo;
}

/* A new generation of stamps[0 .. n): stamps of older ones mean nothing. */
static inline uint32_t dyng__next_gen(uint32_t *stamps, uint32_t *gen, uint32_t n) {
  if (++*gen == 0) { /* wrapped: forget every stamp */
    memset(stamps, 0, (size_t)n * sizeof *stamps);
    *gen = 1;
  }
  return *gen;
}

/* Gathers the distinct neighbours of x other than x, in the union of the
** old and the new graph, walking along (dir DYNG__OUT) or against the arcs
** of a directed count, into *pbuf (grown as needed; *pn of them). */
static int dyng__neighbours(dyng__delta *c, uint32_t x, int dir, uint32_t **pbuf, size_t *pcap, size_t *pn) {
  const dyng_graph_view *g = c->g;
  const dyng_adj_view *a = &g->out, *b = NULL;
  const uint64_t *over = c->over_out;
  size_t n_over = c->n_over_out, ob, oe;
  if (!c->directed) {
    if (g->directed) b = &g->in;
  } else if (dir == DYNG__IN) {
    if (g->directed) a = &g->in;
    over = c->over_in;
    n_over = c->n_over_in;
  }
  dyng__over_range(over, n_over, x, &ob, &oe);
  size_t need = (size_t)a->deg[x] + (b ? b->deg[x] : 0) + (oe - ob), n = 0;
  int rc = dyng__meter_add(&c->m, need);
  if (rc) return rc;
  if (need > *pcap && dyng_grow((void **)pbuf, pcap, need, sizeof **pbuf)) return DYNG_ENOMEM;
  uint32_t *buf = *pbuf, *seen = c->seen;
  const uint32_t gen = dyng__next_gen(c->seen, &c->seen_gen, g->n_vertices);
  seen[x] = gen; /* no self-loops */
  for (uint32_t p = a->off[x], e = a->off[x] + a->deg[x]; p < e; p++) {
    uint32_t y = a->nbr[p];
    if (seen[y] != gen) seen[y] = gen, buf[n++] = y;
  }
  if (b)
    for (uint32_t p = b->off[x], e = b->off[x] + b->deg[x]; p < e; p++) {
      uint32_t y = b->nbr[p];
      if (seen[y] != gen) seen[y] = gen, buf[n++] = y;
    }
  for (size_t i = ob; i < oe; i++) {
    uint32_t y = (uint32_t)over[i];
    if (seen[y] != gen) seen[y] = gen, buf[n++] = y;
  }
  *pn = n;
  return DYNG_OK;
}

static inline int dyng__is_end_neighbour(const dyng__delta *c, uint32_t y) {
  return c->at_end[y] == c->end_gen;
}

static inline dyng__hop *dyng__hop_cell(const dyng__delta *c, uint32_t v) {
  size_t i = dyng__hash((uint64_t)v + 1, c->hops_mask);
  while (c->hops[i].gen == c->gen && c->hops[i].vertex != v) i = (i + 1) & c->hops_mask;
  return &c->hops[i];
}

/* v's hops to the end when at most c->depth, else c->depth + 1. */
static inline int dyng__hops_to_end(const dyng__delta *c, uint32_t v) {
  const dyng__hop *h = dyng__hop_cell(c, v);
  return h->gen == c->gen ? h->dist : c->depth + 1;
}

/* Records v at `dist` hops unless already there (1 when it is new). */
static int dyng__hop_put(dyng__delta *c, uint32_t v, int dist, int *is_new) {
  if (2 * (c->n_hops + 1) > c->hops_mask + 1) { /* keep it half empty */
    size_t cells = c->hops ? 2 * (c->hops_mask + 1) : 1024;
    dyng__hop *old = c->hops;
    size_t old_cells = c->hops ? c->hops_mask + 1 : 0;
    c->hops = dyng_calloc(cells, sizeof *c->hops);
    if (!c->hops) {
      c->hops = old;
      return DYNG_ENOMEM;
    }
    c->hops_mask = cells - 1;
    for (size_t i = 0; i < old_cells; i++)
      if (old[i].gen == c->gen) *dyng__hop_cell(c, old[i].vertex) = old[i];
    dyng_free(old);
  }
  dyng__hop *h = dyng__hop_cell(c, v);
  *is_new = h->gen != c->gen;
  if (*is_new) {
    h->vertex = v;
    h->gen = c->gen;
    h->dist = (uint8_t)dist;
    c->n_hops++;
  }
  return DYNG_OK;
}

/* Breadth-first from the end against the walk, over admitted edges, to
** c->depth hops: a lower bound of how far each vertex is from the end, as
** the paths may not use all of those edges. */
static int dyng__hops_from_end(dyng__delta *c, int end_dir) {
  size_t head = 0, tail = 0;
  int rc, is_new;
  c->n_hops = 0;
  if (++c->gen == 0) { /* wrapped: forget every cell */
    if (c->hops) memset(c->hops, 0, (c->hops_mask + 1) * sizeof *c->hops);
    c->gen = 1;
  }
  if ((rc = dyng__hop_put(c, c->end, 0, &is_new)) != DYNG_OK) return rc;
  if (!c->cap_queue && dyng_grow((void **)&c->queue, &c->cap_queue, 64, sizeof *c->queue)) return DYNG_ENOMEM;
  c->queue[tail++] = c->end;
  while (head < tail) {
    uint32_t z = c->queue[head++];
    int dz = dyng__hops_to_end(c, z);
    if (dz >= c->depth) continue;
    size_t n;
    /* buf[DYNG_CYCLES_MAX_K - 1] is free: paths use k - 2 < that many. */
    if ((rc = dyng__neighbours(c, z, end_dir, &c->buf[DYNG_CYCLES_MAX_K - 1], &c->cap[DYNG_CYCLES_MAX_K - 1],
                               &n)) != DYNG_OK)
      return rc;
    const uint32_t *list = c->buf[DYNG_CYCLES_MAX_K - 1];
    for (size_t i = 0; i < n; i++) {
      uint32_t y = list[i];
      if (!dyng__admits(c, dyng__step_key(c, z, y, end_dir))) continue;
      if ((rc = dyng__hop_put(c, y, dz + 1, &is_new)) != DYNG_OK) return rc;
      if (!is_new) continue;
      if (tail == c->cap_queue && dyng_grow((void **)&c->queue, &c->cap_queue, tail + 1, sizeof *c->queue))
        return DYNG_ENOMEM;
      c->queue[tail++] = y;
    }
  }
  return DYNG_OK;
}

/* Extends the path whose last vertex x = path[d] is d edges from its start;
** paths have k - 1 edges, the last one into `end`. */
static int dyng__paths(dyng__delta *c, uint32_t x, int d) {
  size_t n;
  int rc = dyng__neighbours(c, x, c->dir, &c->buf[d], &c->cap[d], &n);
  if (rc) return rc;
  const uint32_t *list = c->buf[d];
  const int last = d + 1 == c->k - 2; /* y is the end's neighbour */
  for (size_t i = 0; i < n; i++) {
    uint32_t y = list[i];
    int on_path = y == c->end;
    for (int j = 0; j <= d && !on_path; j++) on_path = c->path[j] == y;
    if (on_path || (last && !dyng__is_end_neighbour(c, y))) continue;
    if (!dyng__admits(c, dyng__step_key(c, x, y, c->dir))) continue;
    if (last) {
      if ((rc = dyng__add(&c->count, 1)) != DYNG_OK) return rc;
    } else if (!c->depth || dyng__hops_to_end(c, y) <= c->k - 2 - d) { /* y has k-2-d edges to go */
      c->path[d + 1] = y;
      if ((rc = dyng__paths(c, y, d + 1)) != DYNG_OK) return rc;
    }
  }
  return DYNG_OK;
}

/* The cycles attributed to the changed edge `key`: the simple paths of
** k - 1 edges that close it, in the graph of its status, through no smaller
** changed edge.  Into c->count. */
static int dyng__cycles_of(dyng__delta *c, uint64_t key) {
  const dyng_graph_view *g = c->g;
  const dyng__chg *e = dyng__cell(c, key);
  uint32_t a = (uint32_t)(key >> 32), b = (uint32_t)key, start;
  int end_dir;
  c->phase = e->status;
  c->rank = e->rank;
  c->count = 0;
  if (!c->directed) {
    /* Either way round: start at the end with the shorter list. */
    uint64_t da = (uint64_t)g->out.deg[a] + (g->directed ? g->in.deg[a] : 0);
    uint64_t db = (uint64_t)g->out.deg[b] + (g->directed ? g->in.deg[b] : 0);
    start = da <= db ? a : b;
    c->end = da <= db ? b : a;
    c->dir = end_dir = DYNG__OUT;
  } else if (g->out.deg[b] <= g->in.deg[a]) {
    /* Paths b -> ... -> a along the arcs, the last arc into a. */
    start = b;
    c->end = a;
    c->dir = DYNG__OUT;
    end_dir = DYNG__IN;
  } else {
    /* The same paths walked back from a, the last step to b against b -> y. */
    start = a;
    c->end = b;
    c->dir = DYNG__IN;
    end_dir = DYNG__OUT;
  }
  size_t n;
  if (!c->seen) {
    size_t cells = g->n_vertices ? g->n_vertices : 1;
    c->seen = dyng_calloc(cells, sizeof *c->seen);
    c->at_end = dyng_calloc(cells, sizeof *c->at_end);
    if (!c->seen || !c->at_end) return DYNG_ENOMEM;
  }
  int rc = dyng__neighbours(c, c->end, end_dir, &c->ends, &c->cap_ends, &n);
  if (rc) return rc;
  c->n_ends = 0;
  const uint32_t gen = dyng__next_gen(c->at_end, &c->end_gen, g->n_vertices);
  for (size_t i = 0; i < n; i++) {
    uint32_t y = c->ends[i];
    if (y != start && dyng__admits(c, dyng__step_key(c, c->end, y, end_dir))) {
      c->ends[c->n_ends++] = y;
      c->at_end[y] = gen;
    }
  }
  if (!c->n_ends) return DYNG_OK;
  /* Paths of k - 1 >= 4 edges: a vertex too far from the end is dropped
  ** before its neighbours are looked at. */
  c->depth = c->k >= 5 ? (c->k - 1) / 2 : 0;
  if (c->depth && (rc = dyng__hops_from_end(c, end_dir)) != DYNG_OK) return rc;
  c->path[0] = start;
  return dyng__paths(c, start, 0);
}

/* What the threads of one dyng_cycles_delta share: the prepared batch
** (read only while they run) and per thread a search state of its own. */
typedef struct dyng__delta_job {
  const dyng__delta *shared;
  dyng_team team;
  dyng__delta *mine;         /* per thread */
  dyng_cycles_diff *sum;     /* per thread */
} dyng__delta_job;

/* Frees what one search state owns beyond the shared batch. */
static void dyng__search_free(dyng__delta *c) {
  dyng_free(c->ends);
  dyng_free(c->seen);
  dyng_free(c->at_end);
  dyng_free(c->hops);
  dyng_free(c->queue);
  for (int d = 0; d < DYNG_CYCLES_MAX_K; d++) dyng_free(c->buf[d]);
}

static void dyng__delta_worker(void *ctx, int thread) {
  dyng__delta_job *j = ctx;
  dyng__delta *c = &j->mine[thread];
  dyng_cycles_diff *sum = &j->sum[thread];
  c->m.team = &j->team;
  c->m.thread = thread;
  c->m.next = CHECK_EVERY;
  uint32_t from, to;
  int rc = DYNG_OK;
  while (rc == DYNG_OK && dyng_team_take(&j->team, &from, &to)) {
    for (uint32_t i = from; i < to && rc == DYNG_OK; i++) {
      if ((rc = dyng__cycles_of(c, j->shared->changed[i])) != DYNG_OK) break;
      rc = dyng__add(c->phase == DYNG__REMOVED ? &sum->lost : &sum->gained, c->count);
    }
  }
  dyng_team_fail(&j->team, rc);
}

int dyng_cycles_delta(const dyng_graph_view *g, const dyng_changes *changes, int k, int directed,
                      const dyng_cancel *cancel, dyng_cycles_diff *delta) {
  if (k < DYNG_CYCLES_MIN_K || k > DYNG_CYCLES_MAX_K) return DYNG_EINVAL;
  if (g->directed && !g->in.nbr) return DYNG_ESTATE;
  dyng__delta c;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.k = k;
  c.directed = directed != 0;
  dyng__delta_job j;
  memset(&j, 0, sizeof j);
  j.shared = &c;
  int rc = dyng__delta_prepare(&c, changes);
  if (rc == DYNG_OK && c.n_changed > UINT32_MAX) rc = DYNG_ETOOBIG;
  /* Changed edges are handed out a few at a time: one hub's can cost more
  ** than thousands of others. */
  /* Each thread's search state takes 8 bytes per vertex: at most 256 MiB
  ** of them. */
  size_t per_thread = 8 * (size_t)(g->n_vertices ? g->n_vertices : 1);
  size_t fit = ((size_t)256 << 20) / per_thread;
  int max_threads = fit < 1 ? 1 : fit > 1024 ? 1024 : (int)fit;
  dyng_team_init(&j.team, rc == DYNG_OK ? (uint32_t)c.n_changed : 0, 4, max_threads, cancel);
  if (rc == DYNG_OK) {
    j.mine = dyng_calloc((size_t)j.team.n_threads, sizeof *j.mine);
    j.sum = dyng_calloc((size_t)j.team.n_threads, sizeof *j.sum);
    if (!j.mine || !j.sum) rc = DYNG_ENOMEM;
  }
  if (rc == DYNG_OK) {
    for (int t = 0; t < j.team.n_threads; t++) j.mine[t] = c; /* the shared batch, no buffers yet */
    rc = dyng_team_run(&j.team, dyng__delta_worker, &j);
  }
  dyng_cycles_diff sum = {0, 0};
  for (int t = 0; t < j.team.n_threads && rc == DYNG_OK; t++) {
    if ((rc = dyng__add(&sum.lost, j.sum[t].lost)) == DYNG_OK) rc = dyng__add(&sum.gained, j.sum[t].gained);
  }
  if (j.mine)
    for (int t = 0; t < j.team.n_threads; t++) dyng__search_free(&j.mine[t]);
  dyng_free(j.mine);
  dyng_free(j.sum);
  dyng_free(c.tab);
  dyng_free(c.changed);
  dyng_free(c.over_out);
  dyng_free(c.over_in);
  if (rc == DYNG_OK) *delta = sum;
  return rc;
}

int dyng_cycles_update(const dyng_graph_view *g, const dyng_changes *changes, int k, int directed,
                       const dyng_cancel *cancel, uint64_t *count) {
  dyng_cycles_diff d;
  int rc = dyng_cycles_delta(g, changes, k, directed, cancel, &d);
  if (rc) return rc;
  return dyng_cycles_apply(&d, count);
}

int dyng_cycles_apply(const dyng_cycles_diff *d, uint64_t *count) {
  uint64_t now;
  if (*count >= d->lost) {
    if (__builtin_add_overflow(*count - d->lost, d->gained, &now)) return DYNG_EOVERFLOW;
  } else {
    /* The result is gained - (lost - count): negative means *count was
    ** not this graph's count. */
    if (d->gained < d->lost - *count) return DYNG_EINVAL;
    now = d->gained - (d->lost - *count);
  }
  *count = now;
  return DYNG_OK;
}
