/*
** bench/bench_sync.c: what keeping a graph in step with its edge table
** costs, against reloading it, and what a query pays when nothing changed.
**
**   bench_sync DB.db [--runs N] [--extension PATH] [--verbose]
**
** DB.db holds the table edges(src, dst, length, minutes, toll) that
** gen_graph writes.  On a scratch copy the program creates
**
**   CREATE TABLE bench_nodes(node INTEGER PRIMARY KEY, d INTEGER);  -- out_degree per node
**   CREATE VIRTUAL TABLE bench_g USING dyng(edges=edges, src=src, dst=dst,
**                                           weights='length,minutes,toll', directed=1);
**
** and then, N times over (medians reported):
**
**   idle        nothing changed since the last sync.  10,000 steps of each
**               prepared statement, per call:
**                 SELECT dyng_version()                          (the floor)
**                 SELECT dyng_update('bench_g')                  (sync + JSON)
**                 SELECT d FROM bench_nodes WHERE node = ?1       (a plain lookup)
**                 SELECT out_degree FROM bench_g WHERE node = ?1  (syncs first)
**               the two lookups read the same random nodes, in autocommit
**               (each statement opens a read transaction) and again inside
**               one BEGIN .. COMMIT (_txn: what is left is the sync's own
**               check); the *_extra rows are the per-run differences
**               (goal: under 50 us).
**   batchK      K = 1, 1,000 and 50,000 changes, one statement each, in one
**               transaction: change i is an insert of a new edge between
**               existing nodes when i % 5 is 0 or 1, an UPDATE of length and
**               minutes of an existing edge when 2 or 3, a DELETE when 4 (so
**               the 1-change batch is one insert).  Timed: the write (BEGIN
**               to COMMIT), SELECT dyng_update('bench_g') (the incremental
**               apply), then SELECT dyng_update('bench_g', 'reload') on the
**               same state (a full reload).  Each batch meets a mirror fresh
**               from the previous reload, so its update includes what the
**               first change after a load costs; batch1_update_steady is a
**               second 1-change batch applied right after the first.
**               For the 50,000-change batch, before its update: the bare
**               read of its log rows (count(*), sum(src), sum(dst), the
**               floor bench_gpu compares dyng_update with) and a read that
**               decodes every column dyng_update needs (sums of seq, op,
**               edge, src, dst and the weights); and the update's own
**               reading of them (read_ms of its report).
**   e2e         S is the middle node id (the centre of a square grid), T the
**               50th nearest node by length.  Q is SELECT dist FROM
**               dyng_sssp('bench_g', S) WHERE node = T (the search stops at
**               T, but the tree's O(V) arrays are set up per query).  Timed:
**               Q with nothing changed; a one-row autocommit INSERT of an
**               edge S -> T shorter than any before, then Q (the first
**               change after the previous reload); a second such INSERT
**               and Q (_steady); dyng_update(..., 'reload') plus Q on that
**               same state.
**   txn         what an application with explicit transactions sees: after
**               a schema change (a table created and dropped), 50 times
**               BEGIN; one-row INSERT of an edge S -> T shorter than any
**               before; Q; COMMIT.  Timed per transaction; counted per
**               run: the graph's loads (the first query after the schema
**               change reloads, inside its transaction; the others should
**               apply batches) and batches.
**
** Checks, each fatal: every incremental dyng_update reports one batch, no
** reload, inserted = inserts + updates and deleted = updates + deletes (an
** UPDATE is a delete plus an insert of its rowid), and afterwards the
** graph's edge count (dyng_config) matches the table's; each reload reports
** one reload; the idle calls report nothing done and nothing reloads; the
** lookups agree with bench_nodes; Q returns the new edge's length after
** each INSERT without a reload, and after the forced reload, and in each
** transaction of txn.
**
** How it works: like bench_graph, on a copy of DB.db in $TMPDIR (or /tmp)
** that is removed at exit, with SQLite's default journal and synchronous
** settings (so a COMMIT syncs the file).  The changes of a batch are drawn
** before its timing starts (fixed seed; endpoints read from the table);
** each rowid is updated or deleted at most once per batch and never after
** its delete.  Output: a Markdown table and one `BENCH db=... metric=...`
** line per figure, plus `ratio=` lines and the goals met or missed;
** --verbose prints each run as it comes.
*/
#include "bench/bench_util.h"

#include <sqlite3.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GRAPH "bench_g"
#define CREATE_SQL                                                         \
  "CREATE VIRTUAL TABLE " GRAPH " USING dyng(edges=edges, src=src, dst=dst, " \
  "weights='length,minutes,toll', directed=1)"
#define IDLE_STEPS 10000 /* steps per idle loop and run */
#define QUERY_REPS 10    /* idle SSSP queries per run */
#define TARGET_RANK 50   /* T is the TARGET_RANK-th nearest node to S */

const char bench_program[] = "bench_sync";

/* ---- small helpers ---------------------------------------------------- */

/* Uniform in [0, 1) with 53 random bits. */
static double unit_random(uint64_t *state) {
  return (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

/* ---- SQL helpers ------------------------------------------------------- */

static void exec_sql(sqlite3 *db, const char *sql) {
  char *why = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &why) != SQLITE_OK)
    die("%s: %s", sql, why ? why : sqlite3_errmsg(db));
}

/* Runs a one-value query and returns its integer. */
static int64_t query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = prepare(db, sql);
  if (sqlite3_step(st) != SQLITE_ROW) die("%s: %s", sql, sqlite3_errmsg(db));
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Steps a statement that writes (or returns nothing) to its end. */
static void step_done(sqlite3 *db, sqlite3_stmt *st) {
  if (sqlite3_step(st) != SQLITE_DONE) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  sqlite3_reset(st);
}

/* ---- dyng_update's answer and the graph's counters ---------------------- */

/* The JSON of dyng_update: {graph, inserted, deleted, batches, reloads, ms}. */
typedef struct update_result {
  long long inserted, deleted, batches, reloads;
  double ms, read_ms;
  char json[256];
} update_result;

/* The number after "key": in a flat JSON object; dies when absent. */
static double json_number(const char *json, const char *key) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *p = strstr(json, pattern);
  if (!p) die("no \"%s\" in %s", key, json);
  char *end;
  double v = strtod(p + strlen(pattern), &end);
  if (end == p + strlen(pattern)) die("\"%s\" is not a number in %s", key, json);
  return v;
}

static void parse_update(update_result *u, const char *json) {
  snprintf(u->json, sizeof u->json, "%s", json ? json : "(null)");
  if (!json) die("dyng_update returned NULL");
  u->inserted = (long long)json_number(json, "inserted");
  u->deleted = (long long)json_number(json, "deleted");
  u->batches = (long long)json_number(json, "batches");
  u->reloads = (long long)json_number(json, "reloads");
  u->ms = json_number(json, "ms");
  u->read_ms = json_number(json, "read_ms");
}

/* Steps a prepared SELECT dyng_update(...) once: the JSON in *u, the
** elapsed seconds (step and reading the text) returned. */
static double timed_update(sqlite3 *db, sqlite3_stmt *st, update_result *u) {
  double t0 = now_s();
  int rc = sqlite3_step(st);
  const char *json = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
  double t = now_s() - t0;
  if (rc != SQLITE_ROW) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  parse_update(u, json);
  sqlite3_reset(st);
  return t;
}

/* The graph's counters from dyng_config('graphs'). */
typedef struct graph_counters {
  long long loads, batches, edges;
} graph_counters;

static graph_counters graph_counters_of(sqlite3 *db) {
  static const char sql[] =
      "SELECT json_extract(value, '$.loads'), json_extract(value, '$.batches'), "
      "json_extract(value, '$.edges') FROM json_each(dyng_config('graphs')) "
      "WHERE json_extract(value, '$.name') = '" GRAPH "'";
  sqlite3_stmt *st = prepare(db, sql);
  if (sqlite3_step(st) != SQLITE_ROW) die("graph " GRAPH " is missing from dyng_config('graphs')");
  graph_counters c = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                      sqlite3_column_int64(st, 2)};
  sqlite3_finalize(st);
  return c;
}

/* ---- changes ------------------------------------------------------------- */

enum { CHANGE_INSERT, CHANGE_UPDATE, CHANGE_DELETE };

/* One change of the edge table, written as one statement. */
typedef struct change {
  int kind;
  int64_t rowid;           /* update, delete: the edge */
  int64_t src, dst;        /* insert: the new edge's ends */
  double length, minutes;  /* insert, update: its weights */
} change;

/* The rowids the table had at the start and what became of them.
** stamp[rowid]: ROW_ABSENT when the table lacks it (never was, or deleted
** by a batch), else the number of the last batch that touched it (0:
** none). */
#define ROW_ABSENT UINT32_MAX
typedef struct rowid_book {
  uint32_t *stamp;
  int64_t max_rowid;
  uint32_t batch_no;   /* the batch being drawn */
  uint64_t seed;
  sqlite3_stmt *ends;  /* SELECT src, dst FROM edges WHERE rowid = ?1 */
} rowid_book;

/* A rowid that exists and is not touched yet by the batch being drawn. */
static int64_t pick_rowid(rowid_book *b) {
  for (int tries = 0; tries < 100000; tries++) {
    int64_t r = 1 + (int64_t)(splitmix64(&b->seed) % (uint64_t)b->max_rowid);
    if (b->stamp[r] != ROW_ABSENT && b->stamp[r] != b->batch_no) return r;
  }
  die("cannot find a live rowid in 1..%lld (rowids too sparse?)", (long long)b->max_rowid);
  return 0;
}

/* The ends of edge `rowid`; 0 when the table has no such row. */
static int edge_ends(sqlite3 *db, rowid_book *b, int64_t rowid, int64_t *src, int64_t *dst) {
  sqlite3_bind_int64(b->ends, 1, rowid);
  int rc = sqlite3_step(b->ends);
  if (rc == SQLITE_ROW) {
    *src = sqlite3_column_int64(b->ends, 0);
    *dst = sqlite3_column_int64(b->ends, 1);
  } else if (rc != SQLITE_DONE) {
    die("%s: %s", sqlite3_sql(b->ends), sqlite3_errmsg(db));
  }
  sqlite3_reset(b->ends);
  return rc == SQLITE_ROW;
}

/* Draws n changes into c (the mix described at the top) and counts them by
** kind into n_kind[3].  A new edge joins the source of a random edge to the
** destination of the edge two rowids later: on gen_graph's grid, a node
** within two steps. */
static void draw_changes(sqlite3 *db, rowid_book *b, change *c, int n, int n_kind[3]) {
  b->batch_no++;
  n_kind[0] = n_kind[1] = n_kind[2] = 0;
  for (int i = 0; i < n; i++) {
    change *x = &c[i];
    int k = i % 5;
    x->kind = k < 2 ? CHANGE_INSERT : k < 4 ? CHANGE_UPDATE : CHANGE_DELETE;
    x->length = 1.0 + 9.0 * unit_random(&b->seed);
    x->minutes = x->length * (0.6 + unit_random(&b->seed));
    if (x->kind == CHANGE_INSERT) {
      int64_t s, d, unused;
      for (int tries = 0;; tries++) {
        if (tries == 1000) die("cannot draw a new edge between existing nodes");
        int64_t a = pick_rowid(b);
        if (edge_ends(db, b, a, &s, &unused) && a + 2 <= b->max_rowid &&
            edge_ends(db, b, a + 2, &unused, &d))
          break;
      }
      x->src = s;
      x->dst = d;
      x->rowid = 0;
    } else {
      x->rowid = pick_rowid(b);
      b->stamp[x->rowid] = x->kind == CHANGE_DELETE ? ROW_ABSENT : b->batch_no;
    }
    n_kind[x->kind]++;
  }
}

/* The prepared statements a batch is written with. */
typedef struct writer {
  sqlite3_stmt *begin, *commit, *insert, *update, *delete_;
} writer;

/* Writes the changes in one transaction; returns the elapsed seconds. */
static double write_changes(sqlite3 *db, writer *w, const change *c, int n) {
  double t0 = now_s();
  step_done(db, w->begin);
  for (int i = 0; i < n; i++) {
    const change *x = &c[i];
    sqlite3_stmt *st;
    if (x->kind == CHANGE_INSERT) {
      st = w->insert;
      sqlite3_bind_int64(st, 1, x->src);
      sqlite3_bind_int64(st, 2, x->dst);
      sqlite3_bind_double(st, 3, x->length);
      sqlite3_bind_double(st, 4, x->minutes);
    } else if (x->kind == CHANGE_UPDATE) {
      st = w->update;
      sqlite3_bind_double(st, 1, x->length);
      sqlite3_bind_double(st, 2, x->minutes);
      sqlite3_bind_int64(st, 3, x->rowid);
    } else {
      st = w->delete_;
      sqlite3_bind_int64(st, 1, x->rowid);
    }
    step_done(db, st);
    if (x->kind != CHANGE_INSERT && sqlite3_changes(db) != 1)
      die("change %d (rowid %lld) touched %d rows", i, (long long)x->rowid, sqlite3_changes(db));
  }
  step_done(db, w->commit);
  return now_s() - t0;
}

/* ---- the timed pieces ------------------------------------------------- */

/* Steps a one-row SELECT `steps` times (binding node[i % n_node] to ?1
** when node is given) and returns seconds per step; *sum gets the sum of
** column 0 as an integer, to compare two lookups. */
static double step_loop(sqlite3 *db, sqlite3_stmt *st, int steps, const int64_t *node,
                        int n_node, int64_t *sum) {
  int64_t s = 0;
  double t0 = now_s();
  for (int i = 0; i < steps; i++) {
    if (node) sqlite3_bind_int64(st, 1, node[i % n_node]);
    if (sqlite3_step(st) != SQLITE_ROW) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
    s += sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
  }
  double t = now_s() - t0;
  if (sum) *sum = s;
  return t / steps;
}

/* What a batch needs: the connection, the rowids, the statements, and the
** edge count the table should have. */
typedef struct batch_ctx {
  sqlite3 *db;
  rowid_book *book;
  writer *w;
  sqlite3_stmt *update; /* SELECT dyng_update(GRAPH) */
  change *chg;          /* room for the largest batch */
  int64_t n_edges;
  sqlite3_stmt *log_max;  /* SELECT max(seq) of the graph's change log */
  sqlite3_stmt *read_bare, *read_all; /* the log rows after ?1: two columns, all */
} batch_ctx;

/* What reading a batch's log rows costs: SQLite alone, decoding two
** columns (the floor bench_gpu compares dyng_update with) and every column
** dyng_update needs, and dyng_update's own reading (read_ms). */
typedef struct read_times {
  double bare, all, update;
} read_times;

/* Steps a one-row SELECT bound to ?1 = pos; the seconds it took. */
static double timed_read(sqlite3 *db, sqlite3_stmt *st, long long pos) {
  sqlite3_bind_int64(st, 1, pos);
  double t0 = now_s();
  int rc = sqlite3_step(st);
  double t = now_s() - t0;
  if (rc != SQLITE_ROW) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  sqlite3_reset(st);
  return t;
}

/* Draws n changes, writes them (*t_write) and applies them with
** dyng_update (the seconds returned), checking its JSON and the graph's
** edge count; `what` and `run` name the batch in a failure. */
static double write_and_apply(batch_ctx *c, int n, const char *what, int run, double *t_write,
                              read_times *rt) {
  int n_kind[3];
  update_result u;
  draw_changes(c->db, c->book, c->chg, n, n_kind);
  if (sqlite3_step(c->log_max) != SQLITE_ROW) die("%s", sqlite3_errmsg(c->db));
  long long pos = sqlite3_column_int64(c->log_max, 0);
  sqlite3_reset(c->log_max);
  *t_write = write_changes(c->db, c->w, c->chg, n);
  c->n_edges += n_kind[CHANGE_INSERT] - n_kind[CHANGE_DELETE];
  if (rt) {
    rt->bare = timed_read(c->db, c->read_bare, pos);
    rt->all = timed_read(c->db, c->read_all, pos);
  }
  double t = timed_update(c->db, c->update, &u);
  if (rt) rt->update = u.read_ms / 1e3;
  long long want_ins = n_kind[CHANGE_INSERT] + n_kind[CHANGE_UPDATE];
  long long want_del = n_kind[CHANGE_UPDATE] + n_kind[CHANGE_DELETE];
  if (u.reloads != 0 || u.batches != 1 || u.inserted != want_ins || u.deleted != want_del)
    die("%s run %d: dyng_update gave %s; expected 1 batch, 0 reloads, %lld inserted, "
        "%lld deleted (%d inserts, %d updates, %d deletes)",
        what, run, u.json, want_ins, want_del, n_kind[0], n_kind[1], n_kind[2]);
  long long edges = graph_counters_of(c->db).edges;
  if (edges != c->n_edges)
    die("%s run %d: after the incremental update the graph has %lld edges, the table %lld", what,
        run, edges, (long long)c->n_edges);
  return t;
}

/* Runs the e2e query once: the distance to T (NAN when T has no row). */
static double query_dist(sqlite3 *db, sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  double d = rc == SQLITE_ROW ? sqlite3_column_double(st, 0) : NAN;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  sqlite3_reset(st);
  return d;
}

/* Inserts the edge S -> T of length len (autocommit; *t_insert) and runs
** the query (the seconds returned), which must answer len without a
** reload. */
static double insert_then_query(sqlite3 *db, sqlite3_stmt *insert, sqlite3_stmt *query,
                                double len, const char *what, int run, double *t_insert) {
  long long loads = graph_counters_of(db).loads;
  sqlite3_bind_double(insert, 3, len);
  double t0 = now_s();
  step_done(db, insert);
  *t_insert = now_s() - t0;
  t0 = now_s();
  double got = query_dist(db, query);
  double t = now_s() - t0;
  if (got != len)
    die("%s run %d: after the INSERT dist is %.17g, expected %.17g", what, run, got, len);
  if (graph_counters_of(db).loads != loads)
    die("%s run %d: the query after the INSERT reloaded the graph", what, run);
  return t;
}

/* ---- main ------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr, "usage: bench_sync DB.db [--runs N] [--extension PATH] [--verbose]\n");
  exit(2);
}

#define N_BATCH 3
#define TXN_REPS 50 /* transactions per run of txn */
static const int batch_size[N_BATCH] = {1, 1000, 50000};
static const char *const batch_name[N_BATCH] = {"batch1", "batch1k", "batch50k"};

/* A run's figures: one array of `runs` samples per row. */
enum {
  T_VERSION, T_IDLE_UPDATE, T_IDLE_UPDATE_EXTRA,
  T_LOOKUP_TABLE, T_LOOKUP_GRAPH, T_LOOKUP_EXTRA,
  T_LOOKUP_TABLE_TXN, T_LOOKUP_GRAPH_TXN, T_LOOKUP_EXTRA_TXN,
  T_WRITE, T_UPDATE = T_WRITE + N_BATCH, T_RELOAD = T_UPDATE + N_BATCH,
  T_WRITE1_STEADY = T_RELOAD + N_BATCH, T_UPDATE1_STEADY,
  T_QUERY_IDLE, T_INSERT, T_QUERY_AFTER, T_SYNC_SHARE, T_INSERT_TO_ANSWER,
  T_INSERT_STEADY, T_QUERY_AFTER_STEADY, T_SYNC_SHARE_STEADY, T_INSERT_TO_ANSWER_STEADY,
  T_RELOAD_QUERY,
  T_READ_BARE, T_READ_ALL, T_READ_UPDATE, /* the largest batch's log rows */
  T_TXN, T_TXN_LOADS, T_TXN_BATCHES, /* explicit transactions, one write and one query each */
  T_COUNT
};

int main(int argc, char **argv) {
  const char *db_path = NULL, *ext_path = "./.libs/dyng.so";
  int runs = 5, verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--extension") == 0 && i + 1 < argc)
      ext_path = argv[++i];
    else if (strcmp(argv[i], "--verbose") == 0)
      verbose = 1;
    else if (argv[i][0] == '-' || db_path)
      usage();
    else
      db_path = argv[i];
  }
  if (!db_path || runs < 1 || runs > 1000) usage();
  if (access(db_path, R_OK) != 0) die("%s: %s", db_path, strerror(errno));
  const char *db_label = strrchr(db_path, '/') ? strrchr(db_path, '/') + 1 : db_path;

  /* Everything here needs the extension: fail before copying the file. */
  char *why = NULL;
  {
    sqlite3 *probe;
    if (sqlite3_open(":memory:", &probe) != SQLITE_OK) die("sqlite3_open(:memory:) failed");
    if (!load_extension(probe, ext_path, &why)) die("%s: %s", ext_path, why);
    sqlite3_close(probe);
  }
  const char *scratch_path = scratch_name();
  double t0 = now_s();
  copy_file(db_path, scratch_path);
  double t_copy = now_s() - t0;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(scratch_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    die("%s: %s", scratch_path, sqlite3_errmsg(db));
  if (!load_extension(db, ext_path, &why)) die("%s: %s", ext_path, why);
  sqlite3_stmt *st_version = prepare(db, "SELECT dyng_version()");
  if (sqlite3_step(st_version) != SQLITE_ROW) die("dyng_version: %s", sqlite3_errmsg(db));
  printf("# bench_sync %s\n", db_path);
  printf("sqlite %s, dyng %s (%s), %d runs; working on a scratch copy %s (copied in %.2f s)\n",
         sqlite3_libversion(), (const char *)sqlite3_column_text(st_version, 0), ext_path, runs,
         scratch_path, t_copy);
  sqlite3_reset(st_version);
  fflush(stdout);

  /* ---- setup (untimed but for the CREATE) ---- */
  /* Which rowids exist; also warms the OS cache. */
  rowid_book book = {NULL, 0, 0, 20240607, NULL};
  book.max_rowid = query_int(db, "SELECT max(rowid) FROM edges");
  if (book.max_rowid < 3) die("%s: table edges has too few rows", db_path);
  if (book.max_rowid > 0x7fffffff)
    die("rowids up to %lld: too many for this driver", (long long)book.max_rowid);
  book.stamp = xmalloc(((size_t)book.max_rowid + 1) * sizeof *book.stamp);
  for (int64_t r = 0; r <= book.max_rowid; r++) book.stamp[r] = ROW_ABSENT;
  int64_t n_edges = 0;
  {
    sqlite3_stmt *st = prepare(db, "SELECT rowid FROM edges");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      int64_t r = sqlite3_column_int64(st, 0);
      if (r >= 1) book.stamp[r] = 0, n_edges++;
    }
    if (rc != SQLITE_DONE) die("SELECT rowid FROM edges: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
  }
  /* The plain table first: DDL after the graph would make its next sync a
  ** reload. */
  exec_sql(db, "CREATE TABLE bench_nodes(node INTEGER PRIMARY KEY, d INTEGER)");
  t0 = now_s();
  exec_sql(db, CREATE_SQL);
  double t_create = now_s() - t0;
  exec_sql(db, "INSERT INTO bench_nodes SELECT node, out_degree FROM " GRAPH);
  int64_t n_nodes = query_int(db, "SELECT count(*) FROM bench_nodes");
  if (n_nodes < TARGET_RANK + 1) die("%s: too few nodes (%lld)", db_path, (long long)n_nodes);
  int64_t *node = xmalloc((size_t)n_nodes * sizeof *node);
  {
    sqlite3_stmt *st = prepare(db, "SELECT node FROM bench_nodes ORDER BY node");
    for (int64_t i = 0; i < n_nodes; i++) {
      if (sqlite3_step(st) != SQLITE_ROW) die("reading bench_nodes: %s", sqlite3_errmsg(db));
      node[i] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  book.ends = prepare(db, "SELECT src, dst FROM edges WHERE rowid = ?1");

  sqlite3_stmt *st_update = prepare(db, "SELECT dyng_update('" GRAPH "')");
  sqlite3_stmt *st_reload = prepare(db, "SELECT dyng_update('" GRAPH "', 'reload')");
  update_result u;
  timed_update(db, st_update, &u); /* takes in the bench_nodes writes */
  if (u.reloads != 0) die("the first sync after CREATE reloaded: %s", u.json);
  if (graph_counters_of(db).edges != n_edges)
    die("graph has %lld edges, table %lld", graph_counters_of(db).edges, (long long)n_edges);
  printf("%lld edges, %lld nodes; CREATE VIRTUAL TABLE %.3f s\n", (long long)n_edges,
         (long long)n_nodes, t_create);
  fflush(stdout);

  double *t[T_COUNT];
  for (int k = 0; k < T_COUNT; k++) t[k] = xmalloc((size_t)runs * sizeof(double));

  /* ---- 1. nothing changed ---- */
  int n_probe = 4096;
  int64_t *probe_node = xmalloc((size_t)n_probe * sizeof *probe_node);
  uint64_t seed = 77;
  for (int i = 0; i < n_probe; i++) probe_node[i] = node[splitmix64(&seed) % (uint64_t)n_nodes];
  sqlite3_stmt *st_lookup_graph = prepare(db, "SELECT out_degree FROM " GRAPH " WHERE node = ?1");
  sqlite3_stmt *st_lookup_table = prepare(db, "SELECT d FROM bench_nodes WHERE node = ?1");
  long long loads_before = graph_counters_of(db).loads;
  for (int r = 0; r < runs; r++) {
    int64_t sum_graph = 0, sum_table = 0, sum_graph_txn = 0, sum_table_txn = 0;
    /* Alternate which of each pair goes first. */
    for (int k = 0; k < 2; k++) {
      if ((k == 0) == (r % 2 == 0)) {
        t[T_VERSION][r] = step_loop(db, st_version, IDLE_STEPS, NULL, 0, NULL);
        t[T_LOOKUP_TABLE][r] =
            step_loop(db, st_lookup_table, IDLE_STEPS, probe_node, n_probe, &sum_table);
      } else {
        t[T_IDLE_UPDATE][r] = step_loop(db, st_update, IDLE_STEPS, NULL, 0, NULL);
        timed_update(db, st_update, &u);
        if (u.inserted || u.deleted || u.batches || u.reloads)
          die("dyng_update with nothing changed did something: %s", u.json);
        t[T_LOOKUP_GRAPH][r] =
            step_loop(db, st_lookup_graph, IDLE_STEPS, probe_node, n_probe, &sum_graph);
      }
    }
    exec_sql(db, "BEGIN");
    for (int k = 0; k < 2; k++) {
      if ((k == 0) == (r % 2 == 0))
        t[T_LOOKUP_TABLE_TXN][r] =
            step_loop(db, st_lookup_table, IDLE_STEPS, probe_node, n_probe, &sum_table_txn);
      else
        t[T_LOOKUP_GRAPH_TXN][r] =
            step_loop(db, st_lookup_graph, IDLE_STEPS, probe_node, n_probe, &sum_graph_txn);
    }
    exec_sql(db, "COMMIT");
    if (sum_graph != sum_table || sum_graph_txn != sum_table_txn || sum_graph != sum_graph_txn)
      die("graph lookups sum out_degree to %lld (%lld in a transaction), bench_nodes to %lld "
          "(%lld)", (long long)sum_graph, (long long)sum_graph_txn, (long long)sum_table,
          (long long)sum_table_txn);
    t[T_IDLE_UPDATE_EXTRA][r] = t[T_IDLE_UPDATE][r] - t[T_VERSION][r];
    t[T_LOOKUP_EXTRA][r] = t[T_LOOKUP_GRAPH][r] - t[T_LOOKUP_TABLE][r];
    t[T_LOOKUP_EXTRA_TXN][r] = t[T_LOOKUP_GRAPH_TXN][r] - t[T_LOOKUP_TABLE_TXN][r];
    if (verbose)
      printf("run %d: idle version %.2f us, update %.2f us; lookup table %.2f us, graph %.2f us; "
             "in a transaction %.2f us, %.2f us\n",
             r + 1, 1e6 * t[T_VERSION][r], 1e6 * t[T_IDLE_UPDATE][r], 1e6 * t[T_LOOKUP_TABLE][r],
             1e6 * t[T_LOOKUP_GRAPH][r], 1e6 * t[T_LOOKUP_TABLE_TXN][r],
             1e6 * t[T_LOOKUP_GRAPH_TXN][r]);
  }
  if (graph_counters_of(db).loads != loads_before) die("the graph reloaded while nothing changed");

  /* ---- 2. batches ---- */
  writer w;
  w.begin = prepare(db, "BEGIN");
  w.commit = prepare(db, "COMMIT");
  w.insert = prepare(db, "INSERT INTO edges(src, dst, length, minutes, toll) "
                         "VALUES (?1, ?2, ?3, ?4, 0)");
  w.update = prepare(db, "UPDATE edges SET length = ?1, minutes = ?2 WHERE rowid = ?3");
  w.delete_ = prepare(db, "DELETE FROM edges WHERE rowid = ?1");
  batch_ctx bc = {db, &book, &w, st_update, NULL, n_edges, NULL, NULL, NULL};
  bc.log_max = prepare(db, "SELECT coalesce(max(seq), 0) FROM " GRAPH "_log");
  bc.read_bare = prepare(db, "SELECT count(*), sum(src), sum(dst) FROM " GRAPH "_log WHERE seq > ?1");
  bc.read_all = prepare(db, "SELECT count(*), sum(seq), sum(op), sum(edge), sum(src), sum(dst), sum(w0), "
                            "sum(w1), sum(w2) FROM " GRAPH "_log WHERE seq > ?1");
  bc.chg = xmalloc((size_t)batch_size[N_BATCH - 1] * sizeof *bc.chg);
  for (int r = 0; r < runs; r++) {
    for (int b = 0; b < N_BATCH; b++) {
      read_times rt;
      t[T_UPDATE + b][r] = write_and_apply(&bc, batch_size[b], batch_name[b], r + 1, &t[T_WRITE + b][r],
                                           b == N_BATCH - 1 ? &rt : NULL);
      if (b == N_BATCH - 1) {
        t[T_READ_BARE][r] = rt.bare;
        t[T_READ_ALL][r] = rt.all;
        t[T_READ_UPDATE][r] = rt.update;
      }
      if (b == 0)
        t[T_UPDATE1_STEADY][r] =
            write_and_apply(&bc, 1, "batch1 (steady)", r + 1, &t[T_WRITE1_STEADY][r], NULL);
      t[T_RELOAD + b][r] = timed_update(db, st_reload, &u);
      if (u.reloads != 1)
        die("%s run %d: dyng_update(..., 'reload') gave %s", batch_name[b], r + 1, u.json);
      if (graph_counters_of(db).edges != bc.n_edges)
        die("%s run %d: after the reload the graph has %lld edges, the table %lld",
            batch_name[b], r + 1, graph_counters_of(db).edges, (long long)bc.n_edges);
      if (verbose) {
        printf("run %d: %s write %.3f ms, update %.3f ms, ", r + 1, batch_name[b],
               1e3 * t[T_WRITE + b][r], 1e3 * t[T_UPDATE + b][r]);
        if (b == 0) printf("steady %.3f ms, ", 1e3 * t[T_UPDATE1_STEADY][r]);
        printf("reload %.1f ms\n", 1e3 * t[T_RELOAD + b][r]);
      }
    }
  }

  /* ---- 3. end to end ---- */
  /* Run r's source S: the middle node id shifted by half a row (the centre
  ** of a square grid), then 3 ids further per run, so that every run's
  ** first INSERT meets a source with no inserted edge yet (moving on to
  ** the next id while a node reaches too few others); T: its
  ** TARGET_RANK-th nearest node, at distance d0. */
  int64_t *s_node = xmalloc((size_t)runs * sizeof *s_node);
  int64_t *t_node = xmalloc((size_t)runs * sizeof *t_node);
  double *d0 = xmalloc((size_t)runs * sizeof *d0);
  {
    sqlite3_stmt *st = prepare(db, "SELECT node, dist FROM dyng_sssp('" GRAPH "', ?1) "
                                   "ORDER BY dist LIMIT 1 OFFSET ?2");
    int64_t next = n_nodes / 2 + (int64_t)sqrt((double)n_nodes) / 2;
    for (int r = 0; r < runs; r++) {
      for (int tries = 0;; tries++, next++) {
        if (tries == 1000)
          die("no node near id %lld reaches %d others", (long long)node[next % n_nodes],
              TARGET_RANK);
        s_node[r] = node[next % n_nodes];
        sqlite3_bind_int64(st, 1, s_node[r]);
        sqlite3_bind_int(st, 2, TARGET_RANK);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
          t_node[r] = sqlite3_column_int64(st, 0);
          d0[r] = sqlite3_column_double(st, 1);
        } else if (rc != SQLITE_DONE) {
          die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
        }
        sqlite3_reset(st);
        if (rc == SQLITE_ROW) break;
      }
      next += 3;
    }
    sqlite3_finalize(st);
  }
  sqlite3_stmt *st_query =
      prepare(db, "SELECT dist FROM dyng_sssp('" GRAPH "', ?1) WHERE node = ?2");
  sqlite3_stmt *st_insert = prepare(db, "INSERT INTO edges(src, dst, length, minutes, toll) "
                                        "VALUES (?1, ?2, ?3, ?3, 0)");
  printf("e2e: source %lld, target %lld (its %dth nearest node), dist %.4f; %d runs from "
         "sources %lld, %lld, ...\n",
         (long long)s_node[0], (long long)t_node[0], TARGET_RANK, d0[0], runs,
         (long long)s_node[0], (long long)s_node[runs > 1 ? 1 : 0]);
  fflush(stdout);

  for (int r = 0; r < runs; r++) {
    sqlite3_bind_int64(st_query, 1, s_node[r]);
    sqlite3_bind_int64(st_query, 2, t_node[r]);
    sqlite3_bind_int64(st_insert, 1, s_node[r]);
    sqlite3_bind_int64(st_insert, 2, t_node[r]);
    /* Q alone, nothing changed, after one untimed Q (the first query after
    ** a reload also pays for fresh memory). */
    if (query_dist(db, st_query) != d0[r])
      die("e2e run %d: dist %lld -> %lld is not %.17g", r + 1, (long long)s_node[r],
          (long long)t_node[r], d0[r]);
    t0 = now_s();
    for (int i = 0; i < QUERY_REPS; i++)
      if (query_dist(db, st_query) != d0[r]) die("e2e: the idle query's answer moved");
    t[T_QUERY_IDLE][r] = (now_s() - t0) / QUERY_REPS;

    /* Each new edge S -> T is shorter than any path before, so Q must
    ** answer its length. */
    double len = d0[r] / 2, len_steady = d0[r] / 3;
    t[T_QUERY_AFTER][r] = insert_then_query(db, st_insert, st_query, len, "e2e", r + 1,
                                            &t[T_INSERT][r]);
    t[T_QUERY_AFTER_STEADY][r] = insert_then_query(db, st_insert, st_query, len_steady,
                                                   "e2e (steady)", r + 1, &t[T_INSERT_STEADY][r]);
    t[T_INSERT_TO_ANSWER][r] = t[T_INSERT][r] + t[T_QUERY_AFTER][r];
    t[T_INSERT_TO_ANSWER_STEADY][r] = t[T_INSERT_STEADY][r] + t[T_QUERY_AFTER_STEADY][r];
    t[T_SYNC_SHARE][r] = t[T_QUERY_AFTER][r] - t[T_QUERY_IDLE][r];
    t[T_SYNC_SHARE_STEADY][r] = t[T_QUERY_AFTER_STEADY][r] - t[T_QUERY_IDLE][r];

    /* The same state, reloaded in full. */
    t0 = now_s();
    timed_update(db, st_reload, &u);
    double got = query_dist(db, st_query);
    t[T_RELOAD_QUERY][r] = now_s() - t0;
    if (u.reloads != 1) die("e2e run %d: dyng_update(..., 'reload') gave %s", r + 1, u.json);
    if (got != len_steady)
      die("e2e run %d: after the reload dist is %.17g, expected %.17g", r + 1, got, len_steady);
    if (verbose)
      printf("run %d: e2e query idle %.3f ms; insert %.3f ms, query %.3f ms; again %.3f ms, "
             "%.3f ms; reload + query %.1f ms\n",
             r + 1, 1e3 * t[T_QUERY_IDLE][r], 1e3 * t[T_INSERT][r], 1e3 * t[T_QUERY_AFTER][r],
             1e3 * t[T_INSERT_STEADY][r], 1e3 * t[T_QUERY_AFTER_STEADY][r],
             1e3 * t[T_RELOAD_QUERY][r]);
  }

  /* An application with explicit transactions: after a schema change,
  ** each transaction writes one edge and asks Q. */
  for (int r = 0; r < runs; r++) {
    sqlite3_bind_int64(st_query, 1, s_node[r]);
    sqlite3_bind_int64(st_query, 2, t_node[r]);
    sqlite3_bind_int64(st_insert, 1, s_node[r]);
    sqlite3_bind_int64(st_insert, 2, t_node[r]);
    exec_sql(db, "CREATE TABLE bench_schema_change(x); DROP TABLE bench_schema_change");
    graph_counters c0 = graph_counters_of(db);
    t0 = now_s();
    for (int i = 0; i < TXN_REPS; i++) {
      double len = d0[r] / (4 + i);
      exec_sql(db, "BEGIN");
      sqlite3_bind_double(st_insert, 3, len);
      step_done(db, st_insert);
      double got = query_dist(db, st_query);
      exec_sql(db, "COMMIT");
      if (got != len)
        die("txn run %d, transaction %d: dist is %.17g, expected %.17g", r + 1, i + 1, got, len);
    }
    t[T_TXN][r] = (now_s() - t0) / TXN_REPS;
    graph_counters c1 = graph_counters_of(db);
    t[T_TXN_LOADS][r] = (double)(c1.loads - c0.loads);
    t[T_TXN_BATCHES][r] = (double)(c1.batches - c0.batches);
    if (verbose)
      printf("run %d: txn %.3f ms per transaction, %lld loads, %lld batches\n", r + 1,
             1e3 * t[T_TXN][r], c1.loads - c0.loads, c1.batches - c0.batches);
  }

  /* ---- the report ---- */
  report rep;
  report_init(&rep, db_label);
  char ratio[96], name[64];
  double m[T_COUNT];
  for (int k = 0; k < T_COUNT; k++) m[k] = median_of(t[k], runs);

  report_add(&rep, "idle_version", "us", 1e6, t[T_VERSION], runs, "1.00x (reference)");
  snprintf(ratio, sizeof ratio, "%.1fx version", m[T_IDLE_UPDATE] / m[T_VERSION]);
  report_add(&rep, "idle_update", "us", 1e6, t[T_IDLE_UPDATE], runs, ratio);
  report_add(&rep, "idle_update_extra", "us", 1e6, t[T_IDLE_UPDATE_EXTRA], runs,
             "update - version, per run");
  report_add(&rep, "idle_lookup_table", "us", 1e6, t[T_LOOKUP_TABLE], runs, "1.00x (reference)");
  snprintf(ratio, sizeof ratio, "%.2fx table", m[T_LOOKUP_GRAPH] / m[T_LOOKUP_TABLE]);
  report_add(&rep, "idle_lookup_graph", "us", 1e6, t[T_LOOKUP_GRAPH], runs, ratio);
  report_add(&rep, "idle_lookup_extra", "us", 1e6, t[T_LOOKUP_EXTRA], runs,
             "graph - table, per run (goal < 50 us)");
  report_add(&rep, "idle_lookup_table_txn", "us", 1e6, t[T_LOOKUP_TABLE_TXN], runs,
             "1.00x (reference)");
  snprintf(ratio, sizeof ratio, "%.2fx table", m[T_LOOKUP_GRAPH_TXN] / m[T_LOOKUP_TABLE_TXN]);
  report_add(&rep, "idle_lookup_graph_txn", "us", 1e6, t[T_LOOKUP_GRAPH_TXN], runs, ratio);
  report_add(&rep, "idle_lookup_extra_txn", "us", 1e6, t[T_LOOKUP_EXTRA_TXN], runs,
             "graph - table, per run");
  report_ratio(&rep, "idle_update_over_version", m[T_IDLE_UPDATE] / m[T_VERSION]);
  report_ratio(&rep, "idle_lookup_graph_over_table", m[T_LOOKUP_GRAPH] / m[T_LOOKUP_TABLE]);
  report_ratio(&rep, "idle_lookup_graph_over_table_txn",
               m[T_LOOKUP_GRAPH_TXN] / m[T_LOOKUP_TABLE_TXN]);

  for (int b = 0; b < N_BATCH; b++) {
    snprintf(name, sizeof name, "%s_write", batch_name[b]);
    report_add(&rep, name, "ms", 1e3, t[T_WRITE + b], runs, "BEGIN .. COMMIT");
    snprintf(name, sizeof name, "%s_update", batch_name[b]);
    snprintf(ratio, sizeof ratio, "reload / this = %.1f", m[T_RELOAD + b] / m[T_UPDATE + b]);
    report_add(&rep, name, "ms", 1e3, t[T_UPDATE + b], runs, ratio);
    if (b == 0) {
      snprintf(ratio, sizeof ratio, "reload / this = %.1f", m[T_RELOAD] / m[T_UPDATE1_STEADY]);
      report_add(&rep, "batch1_update_steady", "ms", 1e3, t[T_UPDATE1_STEADY], runs, ratio);
    }
    snprintf(name, sizeof name, "%s_reload", batch_name[b]);
    report_add(&rep, name, "ms", 1e3, t[T_RELOAD + b], runs, "full reload, same state");
    snprintf(name, sizeof name, "%s_reload_over_update", batch_name[b]);
    report_ratio(&rep, name, m[T_RELOAD + b] / m[T_UPDATE + b]);
    if (b == 0)
      report_ratio(&rep, "batch1_reload_over_update_steady", m[T_RELOAD] / m[T_UPDATE1_STEADY]);
  }

  snprintf(name, sizeof name, "%s_log_read_bare", batch_name[N_BATCH - 1]);
  report_add(&rep, name, "ms", 1e3, t[T_READ_BARE], runs, "count(*), sum(src), sum(dst)");
  snprintf(name, sizeof name, "%s_log_read_all", batch_name[N_BATCH - 1]);
  snprintf(ratio, sizeof ratio, "every column: %.2fx bare", m[T_READ_ALL] / m[T_READ_BARE]);
  report_add(&rep, name, "ms", 1e3, t[T_READ_ALL], runs, ratio);
  snprintf(name, sizeof name, "%s_update_read", batch_name[N_BATCH - 1]);
  snprintf(ratio, sizeof ratio, "dyng_update's read_ms: %.2fx bare", m[T_READ_UPDATE] / m[T_READ_BARE]);
  report_add(&rep, name, "ms", 1e3, t[T_READ_UPDATE], runs, ratio);

  report_add(&rep, "e2e_query_idle", "ms", 1e3, t[T_QUERY_IDLE], runs, "Q alone");
  report_add(&rep, "e2e_insert", "ms", 1e3, t[T_INSERT], runs, "autocommit, one row");
  snprintf(ratio, sizeof ratio, "(reload + Q) / this = %.0f", m[T_RELOAD_QUERY] / m[T_QUERY_AFTER]);
  report_add(&rep, "e2e_query_after_insert", "ms", 1e3, t[T_QUERY_AFTER], runs, ratio);
  report_add(&rep, "e2e_sync_share", "ms", 1e3, t[T_SYNC_SHARE], runs,
             "query_after_insert - query_idle");
  report_add(&rep, "e2e_insert_to_answer", "ms", 1e3, t[T_INSERT_TO_ANSWER], runs,
             "insert + query_after_insert");
  snprintf(ratio, sizeof ratio, "(reload + Q) / this = %.0f",
           m[T_RELOAD_QUERY] / m[T_QUERY_AFTER_STEADY]);
  report_add(&rep, "e2e_query_after_insert_steady", "ms", 1e3, t[T_QUERY_AFTER_STEADY], runs,
             ratio);
  report_add(&rep, "e2e_sync_share_steady", "ms", 1e3, t[T_SYNC_SHARE_STEADY], runs,
             "query_after_insert_steady - query_idle");
  report_add(&rep, "e2e_insert_to_answer_steady", "ms", 1e3, t[T_INSERT_TO_ANSWER_STEADY], runs,
             "insert + query_after_insert_steady");
  report_add(&rep, "e2e_reload_query", "ms", 1e3, t[T_RELOAD_QUERY], runs,
             "dyng_update(g, 'reload') + Q");
  report_ratio(&rep, "e2e_reload_query_over_query_after_insert",
               m[T_RELOAD_QUERY] / m[T_QUERY_AFTER]);
  report_ratio(&rep, "e2e_reload_query_over_query_after_insert_steady",
               m[T_RELOAD_QUERY] / m[T_QUERY_AFTER_STEADY]);
  report_ratio(&rep, "e2e_insert_reload_query_over_insert_to_answer",
               (m[T_INSERT] + m[T_RELOAD_QUERY]) / m[T_INSERT_TO_ANSWER]);

  snprintf(ratio, sizeof ratio, "BEGIN; INSERT; Q; COMMIT (%d after a schema change)", TXN_REPS);
  report_add(&rep, "txn_write_query", "ms", 1e3, t[T_TXN], runs, ratio);
  snprintf(ratio, sizeof ratio, "per %d transactions (goal: 1)", TXN_REPS);
  report_add(&rep, "txn_loads", "count", 1, t[T_TXN_LOADS], runs, ratio);
  snprintf(ratio, sizeof ratio, "per %d transactions", TXN_REPS);
  report_add(&rep, "txn_batches", "count", 1, t[T_TXN_BATCHES], runs, ratio);

  printf("\n| %s | median | min | max | n | |\n", db_label);
  printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  report_print_rows(&rep);
  printf("\n");
  double extra_us = 1e6 * m[T_LOOKUP_EXTRA], extra_txn_us = 1e6 * m[T_LOOKUP_EXTRA_TXN];
  printf("goal: a query with nothing changed costs < 50 us more than the same lookup in a table: "
         "%.2f us (%.2f us inside a transaction): %s\n",
         extra_us, extra_txn_us, extra_us < 50.0 && extra_txn_us < 50.0 ? "met" : "MISSED");
  double r1 = m[T_RELOAD] / m[T_UPDATE], r1s = m[T_RELOAD] / m[T_UPDATE1_STEADY];
  printf("goal: one change is applied >= 100x faster than a reload: %.0fx as the first change "
         "after a load, %.0fx as the next: %s\n",
         r1, r1s, r1 >= 100.0 && r1s >= 100.0 ? "met" : "MISSED");
  double re = m[T_RELOAD_QUERY] / m[T_QUERY_AFTER];
  double res = m[T_RELOAD_QUERY] / m[T_QUERY_AFTER_STEADY];
  printf("goal: INSERT to the next dyng_sssp answer >= 100x faster than reload + query: %.0fx "
         "(%.0fx as the next change): %s\n",
         re, res, re >= 100.0 && res >= 100.0 ? "met" : "MISSED");
  printf("\n");
  report_print_lines(&rep);

  sqlite3_finalize(st_version);
  sqlite3_finalize(st_update);
  sqlite3_finalize(st_reload);
  sqlite3_finalize(st_lookup_graph);
  sqlite3_finalize(st_lookup_table);
  sqlite3_finalize(st_query);
  sqlite3_finalize(st_insert);
  sqlite3_finalize(book.ends);
  sqlite3_finalize(w.begin);
  sqlite3_finalize(w.commit);
  sqlite3_finalize(w.insert);
  sqlite3_finalize(w.update);
  sqlite3_finalize(w.delete_);
  sqlite3_finalize(bc.log_max);
  sqlite3_finalize(bc.read_bare);
  sqlite3_finalize(bc.read_all);
  if (sqlite3_close(db) != SQLITE_OK) die("sqlite3_close: %s", sqlite3_errmsg(db));
  for (int k = 0; k < T_COUNT; k++) free(t[k]);
  free(bc.chg);
  free(probe_node);
  free(s_node);
  free(t_node);
  free(d0);
  free(node);
  free(book.stamp);
  return 0;
}
