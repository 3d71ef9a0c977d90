/*
** engine/graph_apply.c: applying a batch to the dynamic graph
** (dyng_graph_apply, dyng_graph_apply_tracked): a small one, or one on a
** single thread, through graph.c's one-at-a-time loop (dyng__apply_loop);
** a large one through the team path below, on several threads.
**
** The team path: what dyng_graph_apply_tracked does for a large batch when
** more than one thread may run, with the same result as the loop in graph.c but
** for the positions of adjacency entries inside the segments (still the
** same for the same graph and batch, whatever the threads' timing), and
** all or nothing: every allocation comes before the graph changes.
**
**   1. lookup (per operation, in parallel): the rowid's slot, that edge's
**      ends and entry positions, the new edge's vertices;
**   2. claim (in order): edge slots from the free stack as the loop would
**      take them, new vertices and new rowids into the maps (undone on
**      failure);
**   3. group: per operation (in parallel) a key for each end of the edges
**      it removes and adds, vertex above operation; the keys radix-sorted
**      (dyng_radix_sort); in order, the touched vertices, in vertex order;
**   4. plan (per touched vertex, in parallel): per pool its events, the
**      positions of removed entries (sorted) then added entries (in
**      operation order), whether its segment moves and how many out
**      positions it writes; in order: where moved segments go (after the
**      pool's end, in vertex order) and each vertex's share of
**      changes->out_pos; then the room (pools, out_pos);
**   5. slots (per operation, in parallel): change records, edge slots;
**   6. segments (per touched vertex, in parallel): entries, degrees;
**   7. in order: removed rowids leave the map, the free stack, counters,
**      and compaction when due.
**
** A segment that stays fills the holes below its new degree with the
** entries above it, then with the added ones; one that moves is copied in
** order without its removed entries, the added ones after. */
#include "engine/graph_internal.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Batches of at least this many operations take the team path when more
** than one thread may run (below it the loop is faster). */
#define DYNG__TEAM_MIN_OPS 2048

/* dyng__graph_set_team_min's override; 0: none. */
static _Atomic size_t dyng__team_min = 0;

void dyng__graph_set_team_min(size_t n_ops) { atomic_store(&dyng__team_min, n_ops); }

/* 1 when a batch of n_ops operations takes the team path. */
static int dyng__use_team(size_t n_ops) {
  size_t forced = atomic_load(&dyng__team_min);
  if (n_ops == 0 || n_ops > (size_t)DYNG_MAX_INDEX / 4) return 0;
  if (forced) return n_ops >= forced;
  return n_ops >= DYNG__TEAM_MIN_OPS && dyng_threads_now() > 1;
}

/* One operation of the batch, as the team path works it out. */
typedef struct dyng__step {
  uint32_t old_slot;     /* slot of the edge it removes; DYNG_NONE: none */
  uint32_t old_end[2];   /* that edge's source and destination */
  uint32_t old_pos[2];   /* positions of its side-0 and side-1 entries */
  uint32_t slot;         /* slot of the edge it adds; DYNG_NONE: none */
  uint32_t end[2];       /* that edge's source and destination */
  uint32_t removed_at;   /* index of its records in changes */
  uint32_t added_at;
  uint32_t event_at;     /* its first event (2 per edge it removes or adds) */
  int keep_old_slot;     /* a later insert of the batch reuses old_slot */
} dyng__step;

/* One pool's changes at one touched vertex. */
typedef struct dyng__seg_plan {
  uint32_t first;    /* its events (in dyng__team.event): the positions of */
  uint32_t n_rm;     /* the entries removed, sorted, then the entries */
  uint32_t n_add;    /* added, op << 1 | side, in op order */
  uint32_t to;       /* where the segment moves; DYNG_NONE: it stays */
  uint32_t cap;      /* its room there */
  uint32_t n_writes; /* positions it writes */
} dyng__seg_plan;

/* A vertex the batch touches. */
typedef struct dyng__touched {
  uint32_t v;
  uint32_t first, n_events; /* its range of dyng__team.key */
  uint32_t out_at;        /* its first position in changes->out_pos */
  dyng__seg_plan seg[2];  /* 0: the out pool; 1: a directed graph's in pool */
} dyng__touched;

/* What the passes share. */
typedef struct dyng__team {
  dyng_graph *g;
  const dyng_batch *b;
  dyng_changes *changes;  /* NULL: nothing recorded */
  uint32_t *out_pos;      /* changes->out_pos, or NULL when not recorded */
  dyng__step *step;       /* per operation */
  dyng__touched *touched; /* in vertex order */
  uint32_t n_touched;
  uint64_t *key, *key_to; /* per event: vertex << code_bits | op << 2 | kind */
  int code_bits;
  uint32_t *event;        /* per event, once planned: see dyng__seg_plan */
  uint32_t n_events;
  uint32_t *pushed;       /* ops whose removed slot went on the free stack */
  uint32_t n_pushed;
  uint32_t free_top;      /* free stack entries below these left */
  uint32_t n_new_slots;
  int64_t *new_node;      /* node ids of new vertices, in index order */
  uint32_t n_new_nodes;
  size_t n_claimed;       /* operations whose claim succeeded */
  size_t grown[2];        /* per pool: entries the moved segments take */
  size_t garbage[2];      /* per pool: entries they leave behind */
  uint32_t moved[2];      /* per pool: segments that move */
  _Atomic long live_delta; /* change of n_live */
  dyng_team team;
} dyng__team;

/* Runs fn over items 0..n-1 on the engine's threads, `chunk` at a time. */
static void dyng__team_each(dyng__team *t, size_t n, uint32_t chunk,
                            void (*fn)(void *ctx, int thread)) {
  dyng_team_init(&t->team, (uint32_t)n, chunk, 0, NULL);
  (void)dyng_team_run(&t->team, fn, t);
}

/* 1. The places of every operation, read-only. */
static void dyng__team_lookup(void *ctx, int thread) {
  dyng__team *t = ctx;
  const dyng_graph *g = t->g;
  const dyng__op *ops = t->b->ops;
  uint32_t begin, end;
  (void)thread;
  while (dyng_team_take(&t->team, &begin, &end)) {
    for (uint32_t i = begin; i < end; i++) {
      const dyng__op *op = &ops[i];
      dyng__step *s = &t->step[i];
      uint32_t slot;
      if (i + DYNG__PREFETCH_FAR < end) dyng__prefetch_keys(g, &ops[i + DYNG__PREFETCH_FAR]);
      if (i + DYNG__PREFETCH_NEAR < end) dyng__prefetch_places(g, &ops[i + DYNG__PREFETCH_NEAR]);
      s->old_slot = s->slot = DYNG_NONE;
      s->keep_old_slot = 0;
      if (dyng_idmap_get(g->emap, op->rowid, &slot) == DYNG_OK) {
        s->old_slot = slot;
        s->old_end[0] = g->e_src[slot];
        s->old_end[1] = g->e_dst[slot];
        s->old_pos[0] = g->e_pos[0][slot];
        s->old_pos[1] = DYNG__HAS_IN_ENTRIES(g) ? g->e_pos[1][slot] : DYNG_NONE;
      }
      if (op->is_insert) {
        if (dyng_idmap_get(g->vmap, op->src, &s->end[0]) != DYNG_OK) s->end[0] = DYNG_NONE;
        if (dyng_idmap_get(g->vmap, op->dst, &s->end[1]) != DYNG_OK) s->end[1] = DYNG_NONE;
      }
    }
  }
}

/* 2's undo: the new rowids and node ids leave the maps again. */
static void dyng__team_unclaim(dyng__team *t) {
  dyng_graph *g = t->g;
  for (size_t i = 0; i < t->n_claimed; i++)
    if (t->b->ops[i].is_insert && t->step[i].old_slot == DYNG_NONE)
      dyng_idmap_remove(g->emap, t->b->ops[i].rowid);
  for (uint32_t k = 0; k < t->n_new_nodes; k++) dyng_idmap_remove(g->vmap, t->new_node[k]);
  t->n_claimed = 0;
  t->n_new_nodes = 0;
}

/* The vertex of node `id` for a claim: `found` from the lookup, else new
** (index n_vert + its rank among the new ones) or made new by an earlier
** operation of the batch. */
static int dyng__team_vertex(dyng__team *t, int64_t id, uint32_t *v) {
  dyng_graph *g = t->g;
  int inserted;
  if (*v != DYNG_NONE) return DYNG_OK;
  uint32_t next = g->n_vert + t->n_new_nodes;
  if (next > DYNG_MAX_INDEX - 1) return DYNG_ETOOBIG;
  int rc = dyng_idmap_get_or_put(g->vmap, id, next, v, &inserted);
  if (rc) return rc;
  if (inserted) t->new_node[t->n_new_nodes++] = id;
  return DYNG_OK;
}

/* 2. Slots, vertices and rowids, in operation order.  Stats as the loop
** counts them.  On failure the maps are as they were. */
static int dyng__team_claim(dyng__team *t, dyng_apply_stats *st) {
  dyng_graph *g = t->g;
  const dyng__op *ops = t->b->ops;
  size_t n = t->b->n_ops;
  t->free_top = (uint32_t)g->n_free;
  for (size_t i = 0; i < n; i++) {
    const dyng__op *op = &ops[i];
    dyng__step *s = &t->step[i];
    s->event_at = (uint32_t)(2 * (st->deleted + st->inserted));
    if (i + DYNG__PREFETCH_FAR < n && ops[i + DYNG__PREFETCH_FAR].is_insert)
      dyng_idmap_prefetch(g->emap, ops[i + DYNG__PREFETCH_FAR].rowid);
    if (s->old_slot != DYNG_NONE) {
      s->removed_at = (uint32_t)st->deleted++;
      t->pushed[t->n_pushed++] = (uint32_t)i;
    } else if (!op->is_insert) {
      st->missing++;
    }
    if (!op->is_insert) continue;
    int rc = dyng__team_vertex(t, op->src, &s->end[0]);
    if (!rc) rc = dyng__team_vertex(t, op->dst, &s->end[1]);
    if (rc) {
      dyng__team_unclaim(t);
      return rc;
    }
    /* The free stack: what this batch pushed, then what was there. */
    if (t->n_pushed) {
      dyng__step *freed = &t->step[t->pushed[--t->n_pushed]];
      freed->keep_old_slot = 1;
      s->slot = freed->old_slot;
    } else if (t->free_top) {
      s->slot = g->free_slot[--t->free_top];
    } else {
      s->slot = g->n_slots + t->n_new_slots++;
    }
    if (s->old_slot == DYNG_NONE) {
      uint32_t got;
      int inserted;
      rc = dyng_idmap_get_or_put(g->emap, op->rowid, s->slot, &got, &inserted);
      if (rc) {
        dyng__team_unclaim(t);
        return rc;
      }
    }
    t->n_claimed = i + 1;
    s->added_at = (uint32_t)st->inserted++;
  }
  t->n_claimed = n;
  return DYNG_OK;
}

/* The pool side-1 entries live in, as an index of dyng__touched.seg. */
#define DYNG__SIDE1_SEG(g) ((g)->directed ? 1 : 0)

/* 3. Per operation: the keys of its events, kind 0/1 for the side-0/1
** entry of the edge it removes, 2/3 for the edge it adds.  Sorted, they
** group the events by vertex, in operation order. */
static void dyng__team_keys(void *ctx, int thread) {
  dyng__team *t = ctx;
  uint32_t begin, end;
  (void)thread;
  while (dyng_team_take(&t->team, &begin, &end)) {
    for (uint32_t i = begin; i < end; i++) {
      const dyng__step *s = &t->step[i];
      uint64_t *key = t->key + s->event_at;
      uint64_t code = (uint64_t)i << 2;
      if (s->old_slot != DYNG_NONE) {
        *key++ = (uint64_t)s->old_end[0] << t->code_bits | code;
        *key++ = (uint64_t)s->old_end[1] << t->code_bits | code | 1u;
      }
      if (t->b->ops[i].is_insert) {
        *key++ = (uint64_t)s->end[0] << t->code_bits | code | 2u;
        *key++ = (uint64_t)s->end[1] << t->code_bits | code | 3u;
      }
    }
  }
}

/* 3, in order: the touched vertices, from the sorted keys; first counts
** them (touched NULL), then fills them in. */
static uint32_t dyng__team_group(dyng__team *t, dyng__touched *touched) {
  uint32_t n = 0;
  for (uint32_t j = 0; j < t->n_events; j++) {
    uint32_t v = (uint32_t)(t->key[j] >> t->code_bits);
    if (j && v == (uint32_t)(t->key[j - 1] >> t->code_bits)) continue;
    if (touched) {
      if (n) touched[n - 1].n_events = j - touched[n - 1].first;
      memset(&touched[n], 0, sizeof touched[n]);
      touched[n].v = v;
      touched[n].first = j;
    }
    n++;
  }
  if (touched && n) touched[n - 1].n_events = t->n_events - touched[n - 1].first;
  return n;
}

static int dyng__u32_cmp(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return a < b ? -1 : a > b;
}

/* Sorts x[0..n-1] ascending. */
static void dyng__sort_u32(uint32_t *x, uint32_t n) {
  if (n > 16) {
    qsort(x, n, sizeof *x, dyng__u32_cmp);
    return;
  }
  for (uint32_t i = 1; i < n; i++) {
    uint32_t v = x[i], j = i;
    for (; j > 0 && x[j - 1] > v; j--) x[j] = x[j - 1];
    x[j] = v;
  }
}

/* 4. Per touched vertex: its events by pool, removed positions sorted;
** whether each segment moves (to = 0 marks a move until offsets are handed
** out) and the positions it writes. */
static void dyng__team_plan(void *ctx, int thread) {
  dyng__team *t = ctx;
  dyng_graph *g = t->g;
  uint32_t begin, end;
  (void)thread;
  while (dyng_team_take(&t->team, &begin, &end)) {
    for (uint32_t k = begin; k < end; k++) {
      dyng__touched *x = &t->touched[k];
      /* Its events by pool: removed positions, then added entries. */
      const uint64_t *key = t->key + x->first;
      uint64_t code_mask = (UINT64_C(1) << t->code_bits) - 1;
      int seg1 = DYNG__SIDE1_SEG(g);
      for (uint32_t j = 0; j < x->n_events; j++) {
        uint32_t kind = (uint32_t)key[j] & 3u;
        dyng__seg_plan *p = &x->seg[kind & 1u ? seg1 : 0];
        if (kind < 2) p->n_rm++;
        else p->n_add++;
      }
      x->seg[0].first = x->first;
      x->seg[1].first = x->first + x->seg[0].n_rm + x->seg[0].n_add;
      uint32_t fill_rm[2] = {0, 0}, fill_add[2] = {0, 0};
      for (uint32_t j = 0; j < x->n_events; j++) {
        uint32_t code = (uint32_t)(key[j] & code_mask), kind = code & 3u, side = kind & 1u;
        int sg = side ? seg1 : 0;
        dyng__seg_plan *p = &x->seg[sg];
        if (kind < 2) t->event[p->first + fill_rm[sg]++] = t->step[code >> 2].old_pos[side];
        else t->event[p->first + p->n_rm + fill_add[sg]++] = (code >> 2) << 1 | side;
      }
      for (int sg = 0; sg < 2; sg++) {
        dyng__seg_plan *p = &x->seg[sg];
        p->to = DYNG_NONE;
        p->n_writes = 0;
        if (sg == 1 && !g->in_built) continue;
        const dyng__adj *a = sg ? &g->in : &g->out;
        uint32_t *rm = t->event + p->first;
        uint32_t d0 = a->deg[x->v], d1 = d0 - p->n_rm + p->n_add, end_pos = a->off[x->v] + d1;
        dyng__sort_u32(rm, p->n_rm);
        if (d1 > a->cap[x->v]) {
          size_t cap = dyng__moved_cap(a->cap[x->v], d1);
          if (!cap) dyng_team_fail(&t->team, DYNG_ETOOBIG);
          p->to = 0;
          p->cap = (uint32_t)cap;
          p->n_writes = d1;
        } else {
          /* Entries above the new end that stay move down into holes. */
          uint32_t rm_above = 0;
          for (uint32_t r = p->n_rm; r > 0 && rm[r - 1] >= end_pos; r--) rm_above++;
          p->n_writes = p->n_add + (d0 > d1 ? d0 - d1 - rm_above : 0);
        }
      }
    }
  }
}

/* 4, in order: moved segments' offsets after each pool's end, shares of
** out_pos; then the room for both.  On failure nothing changed. */
static int dyng__team_place(dyng__team *t) {
  dyng_graph *g = t->g;
  size_t n_out = 0;
  for (uint32_t k = 0; k < t->n_touched; k++) {
    dyng__touched *x = &t->touched[k];
    for (int sg = 0; sg < 2; sg++) {
      dyng__seg_plan *p = &x->seg[sg];
      const dyng__adj *a = sg ? &g->in : &g->out;
      if (p->to == DYNG_NONE) continue;
      if (a->used + t->grown[sg] + p->cap > (size_t)UINT32_MAX) return DYNG_ETOOBIG;
      p->to = (uint32_t)(a->used + t->grown[sg]);
      t->grown[sg] += p->cap;
      t->garbage[sg] += a->cap[x->v];
      t->moved[sg]++;
    }
    if (n_out > (size_t)UINT32_MAX) return DYNG_ETOOBIG; /* cannot happen: a pool's positions fit */
    x->out_at = (uint32_t)n_out;
    n_out += x->seg[0].n_writes;
  }
  int rc = dyng__pool_fit(g, &g->out, g->out.used + t->grown[0]);
  if (!rc && g->in_built) rc = dyng__pool_fit(g, &g->in, g->in.used + t->grown[1]);
  if (rc) return rc;
  dyng_changes *c = t->changes;
  if (c && dyng_grow((void **)&c->out_pos, &c->cap_out_pos, n_out, sizeof *c->out_pos) == DYNG_OK) {
    c->n_out_pos = n_out;
    t->out_pos = c->out_pos;
  } else if (c) {
    c->out_pos_complete = 0;
  }
  return DYNG_OK;
}

/* 5. Per operation: its change records and its edge slots.  A slot the
** batch frees and reuses is written by the insert only. */
static void dyng__team_slots(void *ctx, int thread) {
  dyng__team *t = ctx;
  dyng_graph *g = t->g;
  const dyng_batch *b = t->b;
  dyng_changes *c = t->changes;
  uint32_t begin, end;
  (void)thread;
  while (dyng_team_take(&t->team, &begin, &end)) {
    for (uint32_t i = begin; i < end; i++) {
      const dyng__op *op = &b->ops[i];
      const dyng__step *s = &t->step[i];
      if (s->old_slot != DYNG_NONE) {
        if (c)
          dyng__record_at(g, s->old_slot, s->old_end[0], s->old_end[1], op->rowid, s->old_pos[0],
                          &c->removed[s->removed_at]);
        if (!s->keep_old_slot) g->e_src[s->old_slot] = g->e_dst[s->old_slot] = DYNG_NONE;
      }
      if (!op->is_insert) continue;
      g->e_rowid[s->slot] = op->rowid;
      g->e_src[s->slot] = s->end[0];
      g->e_dst[s->slot] = s->end[1];
      if (c) {
        dyng_edge_change *r = &c->added[s->added_at];
        r->slot = s->slot;
        r->src = s->end[0];
        r->dst = s->end[1];
        r->rowid = op->rowid;
        for (int k = 0; k < g->n_obj; k++)
          r->w[k] = g->n_weights ? b->w[op->seq * (size_t)b->n_weights + k] + 0.0 : 1.0;
      }
    }
  }
}

/* Writes the added entry `code` (op << 1 | side) at position p of pool a. */
static void dyng__team_put(dyng__team *t, dyng__adj *a, uint32_t code, uint32_t p) {
  dyng_graph *g = t->g;
  uint32_t i = code >> 1, side = code & 1u;
  const dyng__step *s = &t->step[i];
  const double *w = g->n_weights ? t->b->w + t->b->ops[i].seq * (size_t)g->n_weights : NULL;
  dyng__entry_put(g, a, p, s->end[!side], (s->slot << 1) | side, w);
  g->e_pos[side][s->slot] = p;
}

/* 6 for one pool of one vertex; `note` gets the positions written (NULL:
** not noted). */
static void dyng__team_segment(dyng__team *t, dyng__adj *a, uint32_t v, const dyng__seg_plan *p,
                               uint32_t *note) {
  dyng_graph *g = t->g;
  const uint32_t *rm = t->event + p->first, *add = rm + p->n_rm;
  uint32_t off = a->off[v], d0 = a->deg[v], d1 = d0 - p->n_rm + p->n_add, n_note = 0;
  if (p->to != DYNG_NONE) {
    uint32_t to = p->to, k = 0, r = 0;
    for (uint32_t q = off; q < off + d0; q++) {
      if (r < p->n_rm && rm[r] == q) {
        r++;
        continue;
      }
      dyng__entry_copy(g, a, q, to + k);
      if (note) note[n_note++] = to + k;
      k++;
    }
    for (uint32_t j = 0; j < p->n_add; j++, k++) {
      dyng__team_put(t, a, add[j], to + k);
      if (note) note[n_note++] = to + k;
    }
    a->off[v] = to;
    a->cap[v] = p->cap;
  } else {
    /* Spots below the new end: holes (ascending), then past the old end.
    ** Fillers: entries above the new end (ascending), then added ones. */
    uint32_t new_end = off + d1, old_end = off + d0;
    uint32_t hole = 0, fresh = old_end, tail = new_end, above = 0, j = 0;
    while (above < p->n_rm && rm[above] < new_end) above++;
    for (;;) {
      while (tail < old_end && above < p->n_rm && rm[above] == tail) above++, tail++;
      int from_tail = tail < old_end;
      if (!from_tail && j == p->n_add) break;
      uint32_t spot = hole < p->n_rm && rm[hole] < new_end ? rm[hole++] : fresh++;
      if (from_tail) dyng__entry_copy(g, a, tail++, spot);
      else dyng__team_put(t, a, add[j++], spot);
      if (note) note[n_note++] = spot;
    }
  }
  a->deg[v] = d1;
}

/* 6. Per touched vertex: its segments and whether it is still live. */
static void dyng__team_segments(void *ctx, int thread) {
  dyng__team *t = ctx;
  dyng_graph *g = t->g;
  uint32_t begin, end;
  long live_delta = 0;
  (void)thread;
  while (dyng_team_take(&t->team, &begin, &end)) {
    for (uint32_t k = begin; k < end; k++) {
      const dyng__touched *x = &t->touched[k];
      uint32_t v = x->v, *note = t->out_pos ? t->out_pos + x->out_at : NULL;
      int was_live = dyng__live(g, v);
      dyng__team_segment(t, &g->out, v, &x->seg[0], note);
      if (g->in_built) dyng__team_segment(t, &g->in, v, &x->seg[1], NULL);
      else if (g->directed) g->in.deg[v] = g->in.deg[v] + x->seg[1].n_add - x->seg[1].n_rm;
      live_delta += dyng__live(g, v) - was_live;
    }
  }
  atomic_fetch_add(&t->live_delta, live_delta);
}

static void dyng__team_free(dyng__team *t) {
  dyng_free(t->step);
  dyng_free(t->pushed);
  dyng_free(t->new_node);
  dyng_free(t->touched);
  dyng_free(t->key);
  dyng_free(t->key_to);
  dyng_free(t->event);
}

/* Step 3's room and keys, once the claim succeeded: room in the graph for
** the new vertices and slots, the events' keys, sorted, and t->touched
** allocated for the grouping.  On failure nothing of the graph changed
** but the claim (the caller undoes it). */
static int dyng__team_group_keys(dyng__team *t, dyng_apply_stats *st) {
  dyng_graph *g = t->g;
  size_t n = t->b->n_ops;
  size_t n_new_vert = (size_t)g->n_vert + t->n_new_nodes;
  t->n_events = (uint32_t)(2 * (st->deleted + st->inserted));
  int rc = dyng__vert_reserve(g, n_new_vert ? n_new_vert : 1);
  if (!rc) rc = dyng__slot_reserve(g, (size_t)g->n_slots + t->n_new_slots);
  if (!rc) {
    size_t room = t->n_events ? t->n_events : 1;
    t->key = dyng_malloc(room * sizeof *t->key);
    t->key_to = dyng_malloc(room * sizeof *t->key_to);
    t->event = dyng_malloc(room * sizeof *t->event);
    if (!t->key || !t->key_to || !t->event) rc = DYNG_ENOMEM;
  }
  if (!rc) {
    /* Keys: the vertex above the operation's code (op << 2 | kind). */
    for (t->code_bits = 2; ((size_t)1 << t->code_bits) < 4 * n; t->code_bits++) {
    }
    dyng__team_each(t, n, 1024, dyng__team_keys);
    /* The codes already rise along the array (operations in order, each
    ** one's events by kind): sorted by the vertex bits alone, the keys are
    ** sorted whole. */
    rc = dyng_radix_sort(&t->key, &t->key_to, NULL, NULL, t->n_events, t->code_bits);
  }
  if (!rc) {
    t->n_touched = dyng__team_group(t, NULL);
    t->touched = dyng_malloc((t->n_touched ? t->n_touched : 1) * sizeof *t->touched);
    if (!t->touched) rc = DYNG_ENOMEM;
  }
  return rc;
}

/* Steps 5 to 7, which cannot fail: the slots, the segments, then in
** order the maps, the free stack, the counters and compaction. */
static void dyng__team_commit(dyng__team *t, dyng_apply_stats *st) {
  dyng_graph *g = t->g;
  const dyng_batch *b = t->b;
  size_t n = b->n_ops;
  dyng__team_each(t, n, 1024, dyng__team_slots);
  dyng__team_each(t, t->n_touched, 64, dyng__team_segments);
  for (size_t i = 0; i < n; i++) {
    const dyng__step *s = &t->step[i];
    if (s->old_slot != DYNG_NONE && !b->ops[i].is_insert) dyng_idmap_remove(g->emap, b->ops[i].rowid);
  }
  g->n_free = t->free_top;
  for (uint32_t k = 0; k < t->n_pushed; k++) g->free_slot[g->n_free++] = t->step[t->pushed[k]].old_slot;
  g->n_slots += t->n_new_slots;
  g->n_vert += t->n_new_nodes;
  g->n_edges = (uint32_t)(g->n_edges + st->inserted - st->deleted);
  g->n_live = (uint32_t)((long)g->n_live + atomic_load(&t->live_delta));
  for (int sg = 0; sg < 2; sg++) {
    dyng__adj *a = sg ? &g->in : &g->out;
    a->used += t->grown[sg];
    a->garbage += t->garbage[sg];
    a->moved += t->moved[sg];
  }
  if (t->changes) {
    t->changes->n_removed = st->deleted;
    t->changes->n_added = st->inserted;
  }
  if (dyng__compact_due(g, &g->out)) dyng__adj_compact(g, &g->out);
  if (g->in_built && dyng__compact_due(g, &g->in)) dyng__adj_compact(g, &g->in);
}

/* The team path of dyng_graph_apply_tracked (see the top of the file):
** applies the normalized batch b with the result of the one-at-a-time
** loop, all or nothing; `changes` is reserved and emptied (or NULL). */
static int dyng__apply_team(dyng_graph *g, dyng_batch *b, dyng_apply_stats *st,
                            dyng_changes *changes) {
  dyng__team t;
  size_t n = b->n_ops;
  int rc;
  memset(&t, 0, sizeof t);
  t.g = g;
  t.b = b;
  t.changes = changes;
  atomic_init(&t.live_delta, 0);
  t.step = dyng_malloc(n * sizeof *t.step);
  t.pushed = dyng_malloc(n * sizeof *t.pushed);
  t.new_node = dyng_malloc(2 * n * sizeof *t.new_node);
  if (!t.step || !t.pushed || !t.new_node) {
    dyng__team_free(&t);
    return DYNG_ENOMEM;
  }
  dyng__team_each(&t, n, 1024, dyng__team_lookup);
  if ((rc = dyng__team_claim(&t, st)) != 0) {
    dyng__team_free(&t);
    return rc;
  }
  rc = dyng__team_group_keys(&t, st);
  if (!rc) {
    /* New vertices sit past n_vert until the batch is in. */
    for (uint32_t k = 0; k < t.n_new_nodes; k++) dyng__vertex_init(g, g->n_vert + k, t.new_node[k]);
    dyng__team_group(&t, t.touched);
    dyng__team_each(&t, t.n_touched, 256, dyng__team_plan);
    rc = atomic_load(&t.team.rc);
    if (!rc) rc = dyng__team_place(&t);
  }
  if (rc) {
    dyng__team_unclaim(&t);
    dyng__team_free(&t);
    return rc;
  }
  dyng__team_commit(&t, st); /* nothing below the claim's undo can fail */
  dyng__team_free(&t);
  return DYNG_OK;
}

int dyng_graph_apply_tracked(dyng_graph *g, dyng_batch *b, dyng_apply_stats *stats,
                             dyng_changes *changes) {
  dyng_apply_stats st = {0, 0, 0};
  int rc;
  if (!g->sealed) return DYNG_ESTATE;
  if (b->n_weights != g->n_weights) return DYNG_EINVAL;
  dyng_batch_normalize(b);
  if (changes) {
    /* Each operation removes and adds at most one edge. */
    changes->n_removed = changes->n_added = 0;
    changes->n_out_pos = 0;
    changes->out_pos_complete = 1;
    if (changes->cap < b->n_ops) {
      size_t cap = b->n_ops;
      if (dyng_resize(&changes->removed, cap, sizeof *changes->removed) ||
          dyng_resize(&changes->added, cap, sizeof *changes->added))
        return DYNG_ENOMEM;
      changes->cap = cap;
    }
  }
  if (dyng__use_team(b->n_ops)) {
    rc = dyng__apply_team(g, b, &st, changes);
    if (rc) memset(&st, 0, sizeof st); /* nothing was applied */
  } else {
    rc = dyng__apply_loop(g, b, &st, changes);
  }
  if (stats) *stats = st;
  return rc;
}

int dyng_graph_apply(dyng_graph *g, dyng_batch *b, dyng_apply_stats *stats) {
  return dyng_graph_apply_tracked(g, b, stats, NULL);
}
