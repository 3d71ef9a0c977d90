/*
** tests/test_sync_model.c: a model-based random test of how dyng keeps its
** mirror true (docs/design.md, "Keeping the mirror true").
**
** A seeded random walk of thousands of steps writes the edge tables of four
** graphs in every way SQL allows, and after every step asks dyng for
** shortest paths and compares them with an answer computed here, from
** scratch, over the rows the same connection can SELECT at that moment:
**
**   main.e(id INTEGER PRIMARY KEY, src, dst, a, b, k UNIQUE, t), with a
**       partial unique index on t COLLATE NOCASE
**       main.gd  directed, weights a,b         (log_limit=1000)
**       main.gu  undirected, weights b,a       (default log_limit)
**       main.gh  directed, unweighted          (log_limit=10: trimmed often)
**   aux.f(src, dst, w), a plain rowid table in an ATTACHed file
**       aux.ga   directed, weight w            (log_limit=6)
**
** Step kinds (weighted random, only ones valid in the current state):
**   writes on the connection under test: INSERT (single, multi-row, INSERT
**     ... SELECT, explicit ids that may collide, INSERT then DELETE of the
**     same row), REPLACE through the rowid, UNIQUE k and the index on t
**     (also all three at once, and a row replaced by a later row of the
**     same statement), upserts (DO UPDATE, also one whose update meets
**     t; DO NOTHING, also of INSERT ... SELECT), OR IGNORE and OR FAIL (the
**     rows before the failing one stay), UPDATE of weights only (also ones
**     that change nothing), of src/dst (reversal, self-loops, merging nodes), of the
**     id/rowid, of k and of t (plain, OR REPLACE, OR IGNORE), DELETE (single
**     and multi-row);
**     node ids from a pool of 40 (negative, 2^53+1, INT64_MIN/MAX, ...)
**     written as integers, text or reals, weights 0..9 as integers, reals,
**     text or -0.0; TEMP triggers of this connection query the graphs from
**     inside some of these statements;
**   invalid writes (negative, NULL, text, infinite weights; text, real, NULL
**     ids; a bad row after good ones; a bad REPLACE) that must fail with the
**     trigger's message and leave the rows as they were;
**   BEGIN [DEFERRED|IMMEDIATE], COMMIT, ROLLBACK, SAVEPOINT (nested up to 3),
**     RELEASE, ROLLBACK TO, each only where valid;
**   writes from a second connection without dyng (autocommit or its own
**     BEGIN ... COMMIT; SQLITE_BUSY, while the first holds a transaction,
**     makes it a no-op), from a third connection with dyng (which then
**     checks its own mirror), and from a child process (fork() and exec of
**     this program as a writer that opens the files with the plain library)
**     while no transaction is open;
**   a write while a dyng_sssp statement is half read: its rows must stay
**     those of the moment it started;
**   REPLACE-like writes on six values of k around a query and a rollback:
**     write, query, ROLLBACK TO, another write; write, SAVEPOINT, write,
**     query, ROLLBACK TO; or a transaction with a write and a query rolled
**     back, then a write of the second connection;
**   rarely: dyng_update() (also 'reload'), DDL (an index, a table, dropping
**     and creating gh again, renaming e and back, an index by the second
**     connection), VACUUM, a WAL checkpoint, closing and reopening the
**     connection under test while the second one writes.
**
** After every step one or two (graph, source, objective) picks compare
** `dyng_sssp` (sometimes with WHERE node = X, sometimes `dyng_path`) with
** Dijkstra over the rows read by plain SELECT: the same reachable nodes, the
** same distances (weights are small integers, so exactly), nearest first, and
** every (parent, edge) a real edge on a shortest path.  Every 50 steps each
** graph table's degrees are compared with degrees counted from the rows.
**
** The walk runs on a WAL database (4/5 of the steps) and on a rollback-
** journal database (1/5, with recursive_triggers on).  Short fixed cases
** cover ROLLBACK TO after the graph was queried inside the savepoint,
** REPLACE through each kind of UNIQUE index, and a graph dropped and created
** again inside a savepoint that is rolled back twice.  On a mismatch the
** test prints the seed, the run, the step and the last statements of every
** connection.
**
** Environment:
**   DYNG_TEST_SEED    the seed (tests/test_util.h); printed at the start.
**   DYNG_SYNC_STEPS   steps of both walks together; default 5000, or 2000
**                     when run under valgrind (seen from LD_PRELOAD, where
**                     valgrind puts its vgpreload_*.so).  A soak:
**                     DYNG_SYNC_STEPS=200000 DYNG_TEST_SEED=$RANDOM \
**                       DYNG_EXTENSION=.libs/dyng.so tests/test_sync_model
*/
#include "tests/test_util.h"
#include "tests/sql_util.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- what the walk works on ----------------------------------------- */

/* A graph and the table it mirrors. */
typedef struct graph_def {
  const char *zName;       /* as dyng_sssp takes it (maybe schema-qualified) */
  const char *zSchema;     /* schema of the graph and its edge table */
  const char *zTable;      /* the edge table */
  int directed;            /* 1 directed, 0 undirected */
  int n_weight;            /* weight columns; 0: every edge weighs 1 */
  const char *azWeight[2]; /* weight columns in objective order */
} graph_def;

static const graph_def aGraph[] = {
    {"gd", "main", "e", 1, 2, {"a", "b"}},
    {"main.gu", "main", "e", 0, 2, {"b", "a"}},
    {"gh", "main", "e", 1, 0, {NULL, NULL}},
    {"aux.ga", "aux", "f", 1, 1, {"w", NULL}},
};
#define N_GRAPH ((int)(sizeof aGraph / sizeof aGraph[0]))

static const char zCreateGraphs[] =
    "CREATE VIRTUAL TABLE main.gd USING dyng(edges=e, src=src, dst=dst, weights='a,b', "
    "log_limit=1000);"
    "CREATE VIRTUAL TABLE main.gu USING dyng(edges=e, weights='b, a', directed=0);"
    "CREATE VIRTUAL TABLE main.gh USING dyng(edges=e, log_limit=10);"
    "CREATE VIRTUAL TABLE aux.ga USING dyng(edges=f, weights=w, log_limit=6)";

/* TEMP triggers of the connection under test that query graphs from inside
** writing statements (a row with src 7777, an update to dst 7777, a
** deleted f row from 100).  Other connections do not have them. */
static const char zCreateProbes[] =
    "CREATE TEMP TABLE probe(n INTEGER);"
    "CREATE TEMP TRIGGER probe_ins AFTER INSERT ON main.e WHEN NEW.src = 7777 BEGIN "
    "  INSERT INTO probe SELECT count(*) FROM dyng_sssp('gd', 1); END;"
    "CREATE TEMP TRIGGER probe_upd AFTER UPDATE ON main.e WHEN NEW.dst = 7777 BEGIN "
    "  INSERT INTO probe SELECT count(*) FROM main.gu; END;"
    "CREATE TEMP TRIGGER probe_del AFTER DELETE ON aux.f WHEN OLD.src = 100 BEGIN "
    "  INSERT INTO probe SELECT count(*) FROM dyng_sssp('aux.ga', OLD.dst); END;";

/* An edge table, as the write generator sees it. */
typedef struct table_def {
  const char *zName;  /* schema-qualified name */
  const char *zId;    /* the rowid column: "id" (INTEGER PRIMARY KEY) or "rowid" */
  const char *zCols;  /* the columns row_values() fills */
  int n_weight;
  const char *azWeight[2];
} table_def;

static const table_def tabE = {"main.e", "id", "src, dst, a, b", 2, {"a", "b"}};
static const table_def tabF = {"aux.f", "rowid", "src, dst, w", 1, {"w", NULL}};

/* Node ids: small ones so that edges meet, and the awkward ones. */
static const sqlite3_int64 aPool[] = {
    -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    17, 100, 7777, 1000003, -1000003, 4294967295LL, 4294967296LL, -2147483648LL,
    9007199254740992LL, 9007199254740993LL, -9007199254740993LL, 123456789012345LL,
    -987654321098LL, 4611686018427387904LL, -4611686018427387905LL, INT64_MAX,
    INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, 65536,
};
#define N_POOL ((int)(sizeof aPool / sizeof aPool[0]))

/* Sources asked again and again, so cached answers get reused. */
static const sqlite3_int64 aHot[] = {1, INT64_MIN, 9007199254740993LL};
#define N_HOT ((int)(sizeof aHot / sizeof aHot[0]))

/* Step kinds. */
enum {
  K_WRITE,      /* a valid write on the connection under test */
  K_INVALID,    /* a write the triggers must refuse */
  K_BEGIN,
  K_COMMIT,
  K_ROLLBACK,
  K_SAVEPOINT,
  K_RELEASE,
  K_ROLLBACK_TO,
  K_CONN2,      /* writes from the second connection (no dyng) */
  K_CONN3,      /* a write and a check on the third connection (dyng) */
  K_CHILD,      /* writes from a child process */
  K_PENDING,    /* a write while a dyng_sssp statement is half read */
  K_UPDATE_FN,  /* SELECT dyng_update(...) */
  K_DDL,
  K_VACUUM,
  K_CHECKPOINT,
  K_REOPEN,     /* close and reopen the connection under test */
  K_REWRITE,    /* REPLACE-like writes on few keys around a query and a rollback */
  K_N
};
static const char *const azKind[K_N] = {
    "write", "invalid", "begin", "commit", "rollback", "savepoint", "release", "rollback_to",
    "conn2", "conn3", "child", "pending", "dyng_update", "ddl", "vacuum", "checkpoint", "reopen",
    "rewrite",
};

#define RING 32      /* statements kept for the failure report */
#define MAX_DEPTH 3  /* nested savepoints */

/* The edges of one graph in one objective, read with plain SELECT, and the
** scratch arrays of the computations over them.  Buffers are kept between
** uses (cap_*). */
typedef struct ref_graph {
  int n_edge, cap_edge;
  sqlite3_int64 *id, *src, *dst; /* per edge, by ascending rowid */
  double *w;                     /* weight in the chosen objective */
  int *si, *di;                  /* node index of src, dst */
  int n_node, cap_node;
  sqlite3_int64 *node;           /* distinct node ids, ascending (2 * cap_edge) */
  double *dist;                  /* per node: Dijkstra's distance */
  sqlite3_int64 *out, *in;       /* per node: degrees */
  char *mark;                    /* per node: settled / seen */
} ref_graph;

/* Rows read from dyng: dyng_sssp (node, dist, parent, edge), dyng_path
** (node, dist = agg_cost, edge, cost) or a graph table (node, parent =
** out_degree, edge = in_degree). */
typedef struct dyng_rows {
  int n, cap;
  sqlite3_int64 *node, *parent, *edge;
  double *dist, *cost;
  int *shape; /* dyng_sssp: 0 parent and edge NULL, 1 both integers, 2 other */
} dyng_rows;

/* The state of one walk.  Think of it as the test's fixture: a case creates
** it, model_teardown closes and frees everything, also after a failure, so
** nothing the checks allocate is owned by a C local. */
typedef struct model {
  const char *zRun;      /* "wal", "journal", ...: named in messages */
  uint64_t seed;         /* DYNG_TEST_SEED */
  test_rng rng;          /* the walk's randomness */
  int wal;               /* WAL mode, else rollback journal */
  sqlite3 *db;           /* the connection under test, dyng loaded */
  sqlite3 *db2;          /* second connection on the same files, no dyng */
  sqlite3 *db3;          /* third connection, dyng loaded */
  sqlite3 *dbq;          /* the connection checks run on (db or db3) */
  const char *zQ;        /* its name in the report */
  char zMain[64];        /* main database file */
  char zAux[64];         /* attached database file */
  long step;             /* current step, from 1 */
  int n_sp;              /* savepoints open on db: s0 .. s<n_sp-1> */
  int has_update;        /* this build has dyng_update() */
  int n_e, n_f;          /* row counts of e and f when last read */
  char *azRing[RING];    /* the last statements run, owned */
  int iRing;             /* next slot of azRing */
  char **azTmp;          /* strings of the current step, freed after it */
  int nTmp, capTmp;
  ref_graph ref[2];      /* reference graphs: [1] is the one before a pending write */
  sqlite3_stmt *pPending; /* a half-read dyng_sssp statement (step_pending) */
  dyng_rows rows[2];     /* rows read from dyng: [1] those of a pending statement */
  long n_kind[K_N];      /* steps taken per kind */
  long n_check;          /* sssp / path / degree comparisons */
  long n_busy;           /* writes that SQLITE_BUSY turned into no-ops */
  long n_refused;        /* writes refused as they should be */
  long n_collided;       /* writes that met a taken rowid, k or t */
  long n_conn2_in_txn;   /* second-connection writes committed while db had a transaction */
} model;

/* ---- memory and the failure report ------------------------------------ */

/* realloc() that fails the case when out of memory. */
static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n);
  assert_non_null(p);
  return p;
}

/* Resizes array a to cap elements (a is evaluated twice). */
#define RESIZE(a, cap) ((a) = xrealloc((a), (size_t)(cap) * sizeof *(a)))

/* Keeps z (from sqlite3_mprintf) until the step ends; returns it.  Steps
** and checks never free their strings, so a failure leaks nothing. */
static char *tmp(model *m, char *z) {
  if (m->nTmp == m->capTmp) {
    m->capTmp = m->capTmp ? 2 * m->capTmp : 64;
    RESIZE(m->azTmp, m->capTmp);
  }
  assert_non_null(z);
  return m->azTmp[m->nTmp++] = z;
}

static void tmp_clear(model *m) {
  for (int i = 0; i < m->nTmp; i++) sqlite3_free(m->azTmp[i]);
  m->nTmp = 0;
}

/* Remembers a statement (or a note) for the failure report. */
static void ring_note(model *m, const char *zWho, const char *zSql) {
  int i = m->iRing;
  sqlite3_free(m->azRing[i]);
  m->azRing[i] = sqlite3_mprintf("step %ld [%s] %s", m->step, zWho, zSql);
  m->iRing = (i + 1) % RING;
}

/* Prints seed, run, step and the last statements, then fails the case. */
static void model_fail(model *m, const char *zFormat, ...) {
  va_list ap;
  va_start(ap, zFormat);
  char *zMsg = tmp(m, sqlite3_vmprintf(zFormat, ap));
  va_end(ap);
  printf("# MISMATCH: %s\n", zMsg);
  printf("# run '%s', seed %llu, step %ld; replay: DYNG_TEST_SEED=%llu (same DYNG_SYNC_STEPS)\n",
         m->zRun, (unsigned long long)m->seed, m->step, (unsigned long long)m->seed);
  printf("# last statements, oldest first ([main] and [conn3] have dyng, [conn2] and [child] do "
         "not; [ref] is the reference's plain SELECT):\n");
  for (int i = 0; i < RING; i++) {
    const char *z = m->azRing[(m->iRing + i) % RING];
    if (z) printf("#   %s\n", z);
  }
  fflush(stdout);
  fail_msg("%s (seed %llu, run %s, step %ld)", zMsg, (unsigned long long)m->seed, m->zRun,
           m->step);
}

/* ---- small SQL helpers ------------------------------------------------ */

/* Runs zSql on db for connection zWho, remembering it; returns the
** extended result code. */
static int model_exec(model *m, sqlite3 *db, const char *zWho, const char *zSql) {
  int rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  if (rc == SQLITE_OK) {
    ring_note(m, zWho, zSql);
    return rc;
  }
  rc = sqlite3_extended_errcode(db);
  ring_note(m, zWho, tmp(m, sqlite3_mprintf("%s  -> error %d: %s", zSql, rc, sqlite3_errmsg(db))));
  return rc;
}

/* Runs zSql, which must succeed. */
static void model_exec_ok(model *m, sqlite3 *db, const char *zWho, const char *zSql) {
  if (model_exec(m, db, zWho, zSql) != SQLITE_OK)
    model_fail(m, "[%s] %s failed: %s", zWho, zSql, sqlite3_errmsg(db));
}

/* The first column of the first row of zSql as text (kept until the step
** ends); fails the case on an error or no row. */
static char *model_text(model *m, sqlite3 *db, const char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    model_fail(m, "prepare failed: %s in: %s", sqlite3_errmsg(db), zSql);
  int rc = sqlite3_step(p);
  char *z = tmp(m, rc == SQLITE_ROW ? sqlite3_mprintf("%s", (const char *)sqlite3_column_text(p, 0))
                                    : sqlite3_mprintf("%s", sqlite3_errmsg(db)));
  sqlite3_finalize(p);
  if (rc != SQLITE_ROW) model_fail(m, "no row (%s) in: %s", z, zSql);
  return z;
}

/* A taken rowid or UNIQUE value: a fine outcome for a write that may meet one. */
static int is_collision(int rc) {
  return rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_ROWID ||
         rc == SQLITE_CONSTRAINT_UNIQUE;
}

/* ATTACHes the aux file and turns fsync off: the walk tests visibility,
** not durability, and stays fast. */
static void prepare_connection(model *m, sqlite3 *db, const char *zWho) {
  sqlite3_busy_timeout(db, 0);
  model_exec_ok(m, db, zWho,
                tmp(m, sqlite3_mprintf("ATTACH %Q AS aux; PRAGMA main.synchronous=OFF; "
                                       "PRAGMA aux.synchronous=OFF", m->zAux)));
}

/* ---- the reference: rows read with plain SELECT, Dijkstra ------------ */

static int cmp_int64(const void *a, const void *b) {
  sqlite3_int64 x = *(const sqlite3_int64 *)a, y = *(const sqlite3_int64 *)b;
  return x < y ? -1 : x > y;
}

/* Index of x in the ascending array a[0..n), or -1. */
static int find_int64(const sqlite3_int64 *a, int n, sqlite3_int64 x) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] == x) return mid;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int ref_node(const ref_graph *g, sqlite3_int64 id) { return find_int64(g->node, g->n_node, id); }
static int ref_edge(const ref_graph *g, sqlite3_int64 id) { return find_int64(g->id, g->n_edge, id); }

static void ref_free(ref_graph *g) {
  free(g->id);
  free(g->src);
  free(g->dst);
  free(g->w);
  free(g->si);
  free(g->di);
  free(g->node);
  free(g->dist);
  free(g->out);
  free(g->in);
  free(g->mark);
  memset(g, 0, sizeof *g);
}

/* Reads the edges of graph gd in objective oi into m->ref[slot] from
** m->dbq, as SELECT sees them now; returns it. */
static ref_graph *ref_load(model *m, const graph_def *gd, int oi, int slot) {
  ref_graph *g = &m->ref[slot];
  char *zSql = tmp(m, sqlite3_mprintf("SELECT rowid, src, dst, %s FROM \"%w\".\"%w\" ORDER BY rowid",
                                      gd->n_weight ? gd->azWeight[oi] : "1", gd->zSchema,
                                      gd->zTable));
  ring_note(m, m->dbq == m->db ? "ref main" : "ref conn3", zSql);
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(m->dbq, zSql, -1, &p, NULL) != SQLITE_OK)
    model_fail(m, "reference read failed: %s in: %s", sqlite3_errmsg(m->dbq), zSql);
  int rc;
  g->n_edge = g->n_node = 0;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    int i = g->n_edge++;
    if (i == g->cap_edge) {
      int cap = g->cap_edge ? 2 * g->cap_edge : 256;
      RESIZE(g->id, cap), RESIZE(g->src, cap), RESIZE(g->dst, cap);
      RESIZE(g->w, cap), RESIZE(g->si, cap), RESIZE(g->di, cap);
      g->cap_edge = cap;
    }
    g->id[i] = sqlite3_column_int64(p, 0);
    g->src[i] = sqlite3_column_int64(p, 1);
    g->dst[i] = sqlite3_column_int64(p, 2);
    g->w[i] = sqlite3_column_double(p, 3);
  }
  if (rc != SQLITE_DONE) {
    char *zErr = tmp(m, sqlite3_mprintf("%s", sqlite3_errmsg(m->dbq)));
    sqlite3_finalize(p);
    model_fail(m, "reference read failed: %s", zErr);
  }
  sqlite3_finalize(p);
  if (2 * g->n_edge + 1 > g->cap_node) {
    int cap = 2 * g->cap_edge + 1;
    RESIZE(g->node, cap), RESIZE(g->dist, cap), RESIZE(g->out, cap);
    RESIZE(g->in, cap), RESIZE(g->mark, cap);
    g->cap_node = cap;
  }
  for (int i = 0; i < g->n_edge; i++) {
    g->node[2 * i] = g->src[i];
    g->node[2 * i + 1] = g->dst[i];
  }
  qsort(g->node, 2 * g->n_edge, sizeof *g->node, cmp_int64);
  for (int i = 0; i < 2 * g->n_edge; i++)
    if (g->n_node == 0 || g->node[g->n_node - 1] != g->node[i]) g->node[g->n_node++] = g->node[i];
  for (int i = 0; i < g->n_edge; i++) {
    g->si[i] = ref_node(g, g->src[i]);
    g->di[i] = ref_node(g, g->dst[i]);
  }
  if (strcmp(gd->zTable, "e") == 0) m->n_e = g->n_edge;
  else if (strcmp(gd->zTable, "f") == 0) m->n_f = g->n_edge;
  return g;
}

/* Dijkstra from node id source (not a node: nothing is reached) into
** g->dist, INFINITY when unreachable. */
static void ref_dijkstra(ref_graph *g, sqlite3_int64 source, int directed) {
  double *dist = g->dist;
  for (int i = 0; i < g->n_node; i++) dist[i] = INFINITY, g->mark[i] = 0;
  int s = ref_node(g, source);
  if (s >= 0) dist[s] = 0;
  for (;;) {
    int u = -1;
    for (int i = 0; i < g->n_node; i++)
      if (!g->mark[i] && !isinf(dist[i]) && (u < 0 || dist[i] < dist[u])) u = i;
    if (u < 0) break;
    g->mark[u] = 1;
    for (int e = 0; e < g->n_edge; e++) {
      if (g->si[e] == u && dist[u] + g->w[e] < dist[g->di[e]]) dist[g->di[e]] = dist[u] + g->w[e];
      if (!directed && g->di[e] == u && dist[u] + g->w[e] < dist[g->si[e]])
        dist[g->si[e]] = dist[u] + g->w[e];
    }
  }
}

/* ---- comparing dyng with the reference -------------------------------- */

/* The objective argument for dyng_sssp / dyng_path: left out, by index, by
** name, by name in upper case. */
static const char *objective_arg(model *m, const graph_def *gd, int oi) {
  int form = (int)test_rng_below(&m->rng, 4);
  if (form == 0 && oi == 0) return "";
  if (gd->n_weight == 0 || form == 1) return tmp(m, sqlite3_mprintf(", %d", oi));
  char *z = tmp(m, sqlite3_mprintf(", '%s'", gd->azWeight[oi]));
  if (form == 3)
    for (char *c = z; *c; c++)
      if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
  return z;
}

static sqlite3_int64 pick_source(model *m) {
  uint64_t r = test_rng_below(&m->rng, 100);
  if (r < 45) return aHot[test_rng_below(&m->rng, N_HOT)];
  if (r < 95) return aPool[test_rng_below(&m->rng, N_POOL)];
  return 424242; /* never a node */
}

/* Appends the current row of p (columns as dyng_rows says) to r. */
static void rows_add(dyng_rows *r, sqlite3_stmt *p, int path) {
  int i = r->n++;
  if (i == r->cap) {
    int cap = r->cap ? 2 * r->cap : 64;
    RESIZE(r->node, cap), RESIZE(r->parent, cap), RESIZE(r->edge, cap);
    RESIZE(r->dist, cap), RESIZE(r->cost, cap), RESIZE(r->shape, cap);
    r->cap = cap;
  }
  if (path) { /* seq, node, edge, cost, agg_cost */
    r->parent[i] = sqlite3_column_int64(p, 0);
    r->node[i] = sqlite3_column_int64(p, 1);
    r->edge[i] = sqlite3_column_type(p, 2) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(p, 2);
    r->cost[i] = sqlite3_column_double(p, 3);
    r->dist[i] = sqlite3_column_double(p, 4);
    return;
  }
  int tp = sqlite3_column_type(p, 2), te = sqlite3_column_type(p, 3);
  r->node[i] = sqlite3_column_int64(p, 0);
  r->dist[i] = sqlite3_column_double(p, 1);
  r->parent[i] = sqlite3_column_int64(p, 2);
  r->edge[i] = sqlite3_column_int64(p, 3);
  r->shape[i] = tp == SQLITE_NULL && te == SQLITE_NULL           ? 0
                : tp == SQLITE_INTEGER && te == SQLITE_INTEGER ? 1
                                                               : 2;
}

static void rows_free(dyng_rows *r) {
  free(r->node);
  free(r->parent);
  free(r->edge);
  free(r->dist);
  free(r->cost);
  free(r->shape);
  memset(r, 0, sizeof *r);
}

/* Prepares zSql on m->dbq; fails the case when it does not prepare. */
static sqlite3_stmt *model_prepare(model *m, const char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(m->dbq, zSql, -1, &p, NULL) != SQLITE_OK)
    model_fail(m, "%s: %s", zSql, sqlite3_errmsg(m->dbq));
  return p;
}

/* Reads the rest of p's rows into r and finalizes p; fails the case on an
** error. */
static void rows_read(model *m, sqlite3_stmt *p, const char *zSql, dyng_rows *r, int path) {
  int rc;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) rows_add(r, p, path);
  if (rc != SQLITE_DONE) {
    char *zErr = tmp(m, sqlite3_mprintf("%s", sqlite3_errmsg(m->dbq)));
    sqlite3_finalize(p);
    model_fail(m, "%s failed: %s", zSql, zErr);
  }
  sqlite3_finalize(p);
}

/* The text of a dyng_sssp query. */
static char *sssp_sql(model *m, const graph_def *gd, int oi, sqlite3_int64 source, int use_target,
                      sqlite3_int64 target) {
  return tmp(m, sqlite3_mprintf("SELECT node, dist, parent, edge FROM dyng_sssp('%s', %lld%s)%s",
                                gd->zName, source, objective_arg(m, gd, oi),
                                use_target ? tmp(m, sqlite3_mprintf(" WHERE node = %lld", target))
                                           : ""));
}

/* Compares the dyng_sssp rows r of zSql with Dijkstra over g: the same
** reachable nodes with the same distances, nearest first, the source with
** no parent, every other node's (parent, edge) a real edge that ends a
** shortest path. */
static void sssp_compare(model *m, const char *zSql, const graph_def *gd, ref_graph *g,
                         sqlite3_int64 source, int use_target, sqlite3_int64 target,
                         const dyng_rows *r) {
  ref_dijkstra(g, source, gd->directed);
  const double *dist = g->dist;
  int n_want = 0;
  if (use_target) {
    int t = ref_node(g, target);
    n_want = t >= 0 && !isinf(dist[t]);
  } else {
    for (int i = 0; i < g->n_node; i++) n_want += !isinf(dist[i]);
  }
  char *seen = g->mark;
  memset(seen, 0, g->n_node);
  double last = 0;
  for (int k = 0; k < r->n; k++) {
    sqlite3_int64 node = r->node[k];
    int i = ref_node(g, node);
    if (i < 0) model_fail(m, "%s: row for node %lld, which no edge touches", zSql, node);
    if (isinf(dist[i]))
      model_fail(m, "%s: node %lld at dist %.17g, but the rows do not reach it", zSql, node,
                 r->dist[k]);
    if (seen[i]) model_fail(m, "%s: node %lld listed twice", zSql, node);
    seen[i] = 1;
    if (use_target && node != target) model_fail(m, "%s: row for node %lld, not the target", zSql, node);
    if (r->dist[k] != dist[i])
      model_fail(m, "%s: node %lld dist %.17g, reference %.17g", zSql, node, r->dist[k], dist[i]);
    if (r->dist[k] < last) model_fail(m, "%s: node %lld is not in nearest-first order", zSql, node);
    last = r->dist[k];
    if (node == source) {
      if (r->shape[k] != 0 || r->dist[k] != 0)
        model_fail(m, "%s: the source's row has a parent, an edge or dist %g", zSql, r->dist[k]);
      continue;
    }
    if (r->shape[k] != 1) model_fail(m, "%s: node %lld has no integer parent and edge", zSql, node);
    int e = ref_edge(g, r->edge[k]);
    if (e < 0) model_fail(m, "%s: node %lld via edge %lld, which is no row", zSql, node, r->edge[k]);
    int forward = g->src[e] == r->parent[k] && g->dst[e] == node;
    int backward = !gd->directed && g->dst[e] == r->parent[k] && g->src[e] == node;
    if (!forward && !backward)
      model_fail(m, "%s: node %lld via edge %lld from %lld, but that row is %lld -> %lld", zSql, node,
                 r->edge[k], r->parent[k], g->src[e], g->dst[e]);
    int pi = ref_node(g, r->parent[k]);
    if (dist[pi] + g->w[e] != dist[i])
      model_fail(m, "%s: node %lld via edge %lld of weight %g from %lld at %g: not a shortest path "
                 "to %g", zSql, node, r->edge[k], g->w[e], r->parent[k], dist[pi], dist[i]);
  }
  if (r->n != n_want) {
    sqlite3_int64 missing = 0;
    double d = 0;
    for (int i = 0; i < g->n_node; i++)
      if (!seen[i] && !isinf(dist[i]) && (!use_target || g->node[i] == target)) {
        missing = g->node[i], d = dist[i];
        break;
      }
    model_fail(m, "%s: %d rows, the rows reach %d (e.g. node %lld at %g is missing)", zSql, r->n,
               n_want, missing, d);
  }
}

/* Runs dyng_sssp(graph, source, objective) [WHERE node = target] on
** m->dbq and compares it with the reference. */
static void check_sssp(model *m, const graph_def *gd, int oi, sqlite3_int64 source, int use_target,
                       sqlite3_int64 target) {
  char *zSql = sssp_sql(m, gd, oi, source, use_target, target);
  ring_note(m, m->zQ, zSql);
  m->n_check++;
  /* dyng first: the query, not the reference read, is the first to look at
  ** the database after the step. */
  dyng_rows *r = &m->rows[0];
  r->n = 0;
  rows_read(m, model_prepare(m, zSql), zSql, r, 0);
  sssp_compare(m, zSql, gd, ref_load(m, gd, oi, 0), source, use_target, target, r);
}

/* Compares dyng_path(graph, s, t, objective) with Dijkstra: a chain of real
** edges from s to t whose costs add up to the distance; no rows when t is
** unreachable. */
static void check_path(model *m, const graph_def *gd, int oi, sqlite3_int64 s, sqlite3_int64 t) {
  char *zSql = tmp(m, sqlite3_mprintf("SELECT seq, node, edge, cost, agg_cost FROM dyng_path('%s', "
                                      "%lld, %lld%s)", gd->zName, s, t, objective_arg(m, gd, oi)));
  ring_note(m, m->zQ, zSql);
  m->n_check++;
  dyng_rows *r = &m->rows[0];
  r->n = 0;
  rows_read(m, model_prepare(m, zSql), zSql, r, 1);
  ref_graph *g = ref_load(m, gd, oi, 0);
  ref_dijkstra(g, s, gd->directed);
  int ti = ref_node(g, t), n = r->n;
  double want = ti < 0 ? INFINITY : g->dist[ti];
  if (isinf(want)) {
    if (n) model_fail(m, "%s: %d rows, but the rows do not reach %lld", zSql, n, t);
    return;
  }
  if (n == 0) model_fail(m, "%s: no rows, reference distance %g", zSql, want);
  if (r->node[0] != s) model_fail(m, "%s: starts at %lld", zSql, r->node[0]);
  double agg = 0;
  for (int k = 0; k < n; k++) {
    if (r->parent[k] != k + 1) model_fail(m, "%s: row %d has seq %lld", zSql, k + 1, r->parent[k]);
    if (r->dist[k] != agg)
      model_fail(m, "%s: row %d agg_cost %g, edges add up to %g", zSql, k + 1, r->dist[k], agg);
    if (k == n - 1) {
      if (r->node[k] != t || r->edge[k] != INT64_MIN || r->cost[k] != 0)
        model_fail(m, "%s: last row is not the target with no edge", zSql);
      break;
    }
    int e = ref_edge(g, r->edge[k]);
    if (e < 0) model_fail(m, "%s: row %d uses edge %lld, which is no row", zSql, k + 1, r->edge[k]);
    if (!((g->src[e] == r->node[k] && g->dst[e] == r->node[k + 1]) ||
          (!gd->directed && g->dst[e] == r->node[k] && g->src[e] == r->node[k + 1])))
      model_fail(m, "%s: edge %lld does not join %lld and %lld", zSql, r->edge[k], r->node[k],
                 r->node[k + 1]);
    if (r->cost[k] != g->w[e])
      model_fail(m, "%s: edge %lld costs %g, its row has %g", zSql, r->edge[k], r->cost[k], g->w[e]);
    agg += g->w[e];
  }
  if (agg != want) model_fail(m, "%s: path costs %g, reference distance %g", zSql, agg, want);
}

/* Compares SELECT node, out_degree, in_degree FROM graph with degrees
** counted from the rows (undirected: edge ends, a self-loop twice), and one
** WHERE node = X lookup. */
static void check_degrees(model *m, const graph_def *gd) {
  char *zSql = tmp(m, sqlite3_mprintf("SELECT node, NULL, out_degree, in_degree FROM %s",
                                      gd->zName));
  ring_note(m, m->zQ, zSql);
  m->n_check++;
  dyng_rows *r = &m->rows[0];
  r->n = 0;
  rows_read(m, model_prepare(m, zSql), zSql, r, 0); /* out_degree in parent, in_degree in edge */
  ref_graph *g = ref_load(m, gd, 0, 0);
  for (int i = 0; i < g->n_node; i++) g->out[i] = g->in[i] = 0, g->mark[i] = 0;
  for (int e = 0; e < g->n_edge; e++) {
    g->out[g->si[e]]++;
    g->in[g->di[e]]++;
    if (!gd->directed) g->in[g->si[e]]++, g->out[g->di[e]]++;
  }
  for (int k = 0; k < r->n; k++) {
    int i = ref_node(g, r->node[k]);
    if (i < 0) model_fail(m, "%s: node %lld, which no edge touches", zSql, r->node[k]);
    if (g->mark[i]) model_fail(m, "%s: node %lld listed twice", zSql, r->node[k]);
    g->mark[i] = 1;
    if (r->parent[k] != g->out[i] || r->edge[k] != g->in[i])
      model_fail(m, "%s: node %lld has degrees out %lld in %lld, the rows give %lld and %lld", zSql,
                 r->node[k], r->parent[k], r->edge[k], g->out[i], g->in[i]);
  }
  if (r->n != g->n_node) {
    sqlite3_int64 missing = 0;
    for (int i = 0; i < g->n_node; i++)
      if (!g->mark[i]) missing = g->node[i];
    model_fail(m, "%s: %d nodes, the rows touch %d (e.g. %lld is missing)", zSql, r->n, g->n_node,
               missing);
  }
  if (g->n_node) {
    int i = (int)test_rng_below(&m->rng, g->n_node);
    char *zOne = tmp(m, sqlite3_mprintf("SELECT out_degree || ' ' || in_degree FROM %s WHERE "
                                        "node = %lld", gd->zName, g->node[i]));
    ring_note(m, m->zQ, zOne);
    char *zGot = model_text(m, m->dbq, zOne);
    char *zWant = tmp(m, sqlite3_mprintf("%lld %lld", g->out[i], g->in[i]));
    if (strcmp(zGot, zWant) != 0) model_fail(m, "%s: got %s, the rows give %s", zOne, zGot, zWant);
  }
}

/* One random comparison on m->dbq. */
static void check_one(model *m) {
  const graph_def *gd = &aGraph[test_rng_below(&m->rng, N_GRAPH)];
  int oi = gd->n_weight ? (int)test_rng_below(&m->rng, gd->n_weight) : 0;
  sqlite3_int64 s = pick_source(m);
  uint64_t r = test_rng_below(&m->rng, 100);
  if (r < 80) check_sssp(m, gd, oi, s, 0, 0);
  else if (r < 92) check_sssp(m, gd, oi, s, 1, aPool[test_rng_below(&m->rng, N_POOL)]);
  else check_path(m, gd, oi, s, aPool[test_rng_below(&m->rng, N_POOL)]);
}

/* One or two random comparisons after a step; every 50 steps all degrees. */
static void check_step(model *m) {
  int n = 1 + (test_rng_below(&m->rng, 3) == 0);
  for (int k = 0; k < n; k++) check_one(m);
  if (m->step % 50 == 0)
    for (int gi = 0; gi < N_GRAPH; gi++) check_degrees(m, &aGraph[gi]);
}

/* ---- generating writes ------------------------------------------------ */

static sqlite3_int64 pick_node(model *m) { return aPool[test_rng_below(&m->rng, N_POOL)]; }

/* A node id as an SQL literal: an integer, or text / a real that the
** column's INTEGER affinity turns back into that integer (new). */
static char *node_literal(model *m, sqlite3_int64 id) {
  uint64_t r = test_rng_below(&m->rng, 20);
  if (r == 0) return sqlite3_mprintf("'%lld'", id);
  if (r == 1 && id > -1000000 && id < 1000000) return sqlite3_mprintf("%lld.0", id);
  return sqlite3_mprintf("%lld", id);
}

/* A weight 0..9 as an SQL literal, sometimes a real, text or -0.0 (new). */
static char *weight_literal(model *m) {
  int w = (int)test_rng_below(&m->rng, 10);
  uint64_t r = test_rng_below(&m->rng, 40);
  if (r < 4) return sqlite3_mprintf("%d.0", w);
  if (r == 4) return sqlite3_mprintf("'%d'", w);
  if (r == 5 && w == 0) return sqlite3_mprintf("-0.0");
  return sqlite3_mprintf("%d", w);
}

/* "src, dst, w..." values of a valid random row, for t->zCols (new). */
static char *row_values(model *m, const table_def *t) {
  char *zS = node_literal(m, pick_node(m));
  char *zD = test_rng_below(&m->rng, 20) == 0 ? sqlite3_mprintf("%s", zS) /* self-loop */
                                              : node_literal(m, pick_node(m));
  char *z = sqlite3_mprintf("%s, %s", zS, zD);
  for (int i = 0; i < t->n_weight; i++) {
    char *zW = weight_literal(m);
    char *z2 = sqlite3_mprintf("%s, %s", z, zW);
    sqlite3_free(zW);
    sqlite3_free(z);
    z = z2;
  }
  sqlite3_free(zS);
  sqlite3_free(zD);
  return z;
}

/* A subquery naming the rowid of some row (by position, so replays agree);
** NULL when the position is past the end (new). */
static char *some_row(model *m, const table_def *t) {
  int n = t == &tabE ? m->n_e : m->n_f;
  return sqlite3_mprintf("(SELECT %s FROM %s ORDER BY %s LIMIT 1 OFFSET %d)", t->zId, t->zName,
                         t->zId, (int)test_rng_below(&m->rng, (uint64_t)n + 2));
}

/* A rowid for an explicit write: small, maybe negative, maybe taken. */
static sqlite3_int64 some_id(model *m) { return (sqlite3_int64)test_rng_below(&m->rng, 600) - 100; }

/* A random valid write of e or f (new).  *pMayCollide is set when a rowid,
** k or t it writes may be taken (a constraint error is then a fine outcome). */
static char *gen_write(model *m, int *pMayCollide) {
  /* Values of e.t, unique without regard to case unless 'free'. */
  static const char *const azTag[] = {"x0", "X0", "x1", "X1", "x2", "X2", "x3", "free", "FREE"};
  const table_def *t = test_rng_below(&m->rng, 4) ? &tabE : &tabF;
  int isE = t == &tabE, n = isE ? m->n_e : m->n_f;
  int lo = isE ? 60 : 15, hi = isE ? 150 : 50;
  const char *zT = t->zName, *zId = t->zId, *zCols = t->zCols, *zW0 = t->azWeight[0];
  *pMayCollide = 0;
  /* r < 33 inserts, r >= 57 deletes: keep the table between lo and hi rows. */
  uint64_t r = test_rng_below(&m->rng, 100);
  if (n < lo && r >= 57) r = test_rng_below(&m->rng, 33);
  if (n > hi && r < 33) r = 57 + test_rng_below(&m->rng, 43);
  char *zV = row_values(m, t), *zRow = some_row(m, t), *zSql;
  sqlite3_int64 x = pick_node(m), y = pick_node(m);
  int w = (int)test_rng_below(&m->rng, 10), v = (int)test_rng_below(&m->rng, 6);
  int k = (int)test_rng_below(&m->rng, 40);
  const char *tag = azTag[test_rng_below(&m->rng, sizeof azTag / sizeof azTag[0])];
  if (r < 15) { /* INSERT, in e sometimes with a k that may be taken */
    if (isE && v == 0) {
      zSql = sqlite3_mprintf("INSERT INTO main.e(%s, k) VALUES (%s, %d)", zCols, zV, k);
      *pMayCollide = 1;
    } else {
      zSql = sqlite3_mprintf("INSERT INTO %s(%s) VALUES (%s)", zT, zCols, zV);
    }
  } else if (r < 20) { /* multi-row INSERT */
    zSql = sqlite3_mprintf("INSERT INTO %s(%s) VALUES (%s)", zT, zCols, zV);
    for (int i = (int)test_rng_below(&m->rng, 4); i >= 0; i--) {
      char *zMore = row_values(m, t), *z2 = sqlite3_mprintf("%s, (%s)", zSql, zMore);
      sqlite3_free(zMore);
      sqlite3_free(zSql);
      zSql = z2;
    }
  } else if (r < 22) { /* INSERT ... SELECT: reversed copies, parallel edges */
    zSql = isE ? sqlite3_mprintf("INSERT INTO main.e(src, dst, a, b) SELECT dst, src, b, a FROM "
                                 "main.e WHERE src = %lld OR dst = %lld", x, y)
               : sqlite3_mprintf("INSERT INTO aux.f(src, dst, w) SELECT dst, src, w FROM aux.f "
                                 "WHERE src = %lld", x);
  } else if (r < 25) { /* explicit rowid */
    zSql = sqlite3_mprintf("INSERT INTO %s(%s, %s) VALUES (%lld, %s)", zT, zId, zCols, some_id(m), zV);
    *pMayCollide = 1;
  } else if (r < 27) { /* inserted and deleted in one exec */
    zSql = sqlite3_mprintf("INSERT INTO %s(%s) VALUES (%s); DELETE FROM %s WHERE %s = "
                           "last_insert_rowid()", zT, zCols, zV, zT, zId);
  } else if (r < 30 && isE && w < 4) { /* conflicts with several rows, or a later row's */
    char *zV2 = row_values(m, t);
    if (w == 0) /* the rowid, k and t at once: up to three rows go */
      zSql = sqlite3_mprintf("REPLACE INTO main.e(id, %s, k, t) VALUES (%s, %s, %d, '%s')", zCols,
                             zRow, zV, k, tag);
    else if (w == 1) /* the second row replaces the first one */
      zSql = sqlite3_mprintf("INSERT OR REPLACE INTO main.e(%s, k) VALUES (%s, %d), (%s, %d)", zCols,
                             zV, k, zV2, k);
    else if (w == 2) /* OR FAIL keeps the first row, the second fails on k */
      zSql = sqlite3_mprintf("INSERT OR FAIL INTO main.e(%s, k) VALUES (%s, %d), (%s, %d)", zCols, zV,
                             k, zV2, k);
    else /* an upsert on k whose update may meet t */
      zSql = sqlite3_mprintf("INSERT INTO main.e(%s, k, t) VALUES (%s, %d, '%s') ON CONFLICT(k) DO "
                             "UPDATE SET dst = excluded.dst, b = excluded.b, t = excluded.t", zCols,
                             zV, k, tag);
    sqlite3_free(zV2);
    *pMayCollide = 1;
  } else if (r < 30) { /* REPLACE: of the row with that rowid, with that k, or both */
    if (isE && v < 2)
      zSql = sqlite3_mprintf("REPLACE INTO main.e(id, %s, k) VALUES (%s, %s, %d)", zCols, zRow, zV, k);
    else if (isE && v < 4)
      zSql = sqlite3_mprintf("INSERT OR REPLACE INTO main.e(%s, k) VALUES (%s, %d)", zCols, zV, k);
    else if (isE && v == 4)
      zSql = sqlite3_mprintf("INSERT OR REPLACE INTO main.e(%s, t) VALUES (%s, '%s')", zCols, zV,
                             tag);
    else zSql = sqlite3_mprintf("REPLACE INTO %s(%s, %s) VALUES (%s, %s)", zT, zId, zCols, zRow, zV);
  } else if (r < 33) { /* upserts and OR IGNORE */
    if (v == 0)
      zSql = sqlite3_mprintf("INSERT INTO %s(%s, %s) VALUES (%s, %s) ON CONFLICT(%s) DO UPDATE SET "
                             "%s = excluded.%s, dst = excluded.dst", zT, zId, zCols, zRow, zV, zId,
                             zW0, zW0);
    else if (v == 1)
      zSql = sqlite3_mprintf("INSERT INTO %s(%s, %s) VALUES (%s, %s) ON CONFLICT(%s) DO UPDATE SET "
                             "%s = (%s + 1) %% 10", zT, zId, zCols, zRow, zV, zId, zW0, zW0);
    else if (v == 2)
      zSql = sqlite3_mprintf("INSERT INTO %s(%s, %s) VALUES (%s, %s) ON CONFLICT(%s) DO NOTHING", zT,
                             zId, zCols, zRow, zV, zId);
    else if (v == 3 && isE)
      zSql = sqlite3_mprintf("INSERT INTO main.e(%s, k) VALUES (%s, %d) ON CONFLICT(k) DO UPDATE SET "
                             "src = excluded.src, a = excluded.a", zCols, zV, k);
    else if (v == 4 && isE)
      zSql = sqlite3_mprintf("INSERT OR IGNORE INTO main.e(%s, k) VALUES (%s, %d)", zCols, zV, k);
    else if (v == 5 && isE)
      zSql = sqlite3_mprintf("INSERT OR IGNORE INTO main.e(%s, t) VALUES (%s, '%s')", zCols, zV, tag);
    else
      zSql = sqlite3_mprintf("INSERT OR IGNORE INTO %s(%s, %s) VALUES (%s, %s)", zT, zId, zCols, zRow,
                             zV);
  } else if (r < 36 && isE && test_rng_below(&m->rng, 4) == 0) { /* k and the graph's columns */
    if (v < 3)
      zSql = sqlite3_mprintf("UPDATE OR REPLACE main.e SET k = %d, dst = %lld WHERE id = %s", k, y,
                             zRow);
    else
      zSql = sqlite3_mprintf("INSERT INTO main.e(src, dst, a, b, k) SELECT dst, src, b, a, k + %d "
                             "FROM main.e WHERE src = %lld OR dst = %lld ON CONFLICT DO NOTHING",
                             v, x, y);
  } else if (r < 36 && isE && test_rng_below(&m->rng, 3) == 0) { /* t, which no graph reads */
    if (v < 2) {
      zSql = sqlite3_mprintf("UPDATE main.e SET t = '%s' WHERE id = %s", tag, zRow);
      *pMayCollide = 1;
    } else if (v < 4) {
      zSql = sqlite3_mprintf("UPDATE OR REPLACE main.e SET t = '%s' WHERE id = %s", tag, zRow);
    } else if (v == 4) {
      zSql = sqlite3_mprintf("UPDATE OR IGNORE main.e SET t = '%s', b = %d WHERE id = %s", tag, w, zRow);
    } else {
      zSql = sqlite3_mprintf("INSERT INTO main.e(%s, t) VALUES (%s, '%s')", zCols, zV, tag);
      *pMayCollide = 1;
    }
  } else if (r < 36 && isE) { /* k, which no graph reads */
    if (v < 2) {
      zSql = sqlite3_mprintf("UPDATE main.e SET k = %d WHERE id = %s", k, zRow);
      *pMayCollide = 1;
    } else if (v < 4) {
      zSql = sqlite3_mprintf("UPDATE OR REPLACE main.e SET k = %d WHERE id = %s", k, zRow);
    } else if (v == 4) {
      zSql = sqlite3_mprintf("UPDATE OR IGNORE main.e SET k = %d, a = %d WHERE id = %s", k, w, zRow);
    } else {
      zSql = sqlite3_mprintf("UPDATE main.e SET k = NULL WHERE k > %d", 30 + w);
    }
  } else if (r < 45) { /* weights only */
    const char *zW = t->azWeight[test_rng_below(&m->rng, t->n_weight)];
    if (v < 3) zSql = sqlite3_mprintf("UPDATE %s SET %s = %d WHERE %s = %s", zT, zW, w, zId, zRow);
    else if (v < 4 && isE)
      zSql = sqlite3_mprintf("UPDATE main.e SET a = %d, b = (b + %d) %% 10 WHERE id = %s", w, v, zRow);
    else if (v < 5)
      zSql = sqlite3_mprintf("UPDATE %s SET %s = (%s + 1) %% 10 WHERE src = %lld", zT, zW, zW, x);
    else zSql = sqlite3_mprintf("UPDATE %s SET %s = %d WHERE dst = %lld", zT, zW, w, x);
  } else if (r < 47) { /* changes nothing the triggers look at */
    if (v < 3) zSql = sqlite3_mprintf("UPDATE %s SET %s = %s WHERE %s = %s", zT, zW0, zW0, zId, zRow);
    else zSql = sqlite3_mprintf("UPDATE %s SET src = src + 0, dst = dst WHERE src = %lld", zT, x);
  } else if (r < 53) { /* endpoints */
    if (v == 0) zSql = sqlite3_mprintf("UPDATE %s SET src = %lld WHERE %s = %s", zT, x, zId, zRow);
    else if (v == 1) zSql = sqlite3_mprintf("UPDATE %s SET dst = %lld WHERE %s = %s", zT, x, zId, zRow);
    else if (v == 2)
      zSql = sqlite3_mprintf("UPDATE %s SET src = dst, dst = src WHERE %s = %s", zT, zId, zRow);
    else if (v == 3) zSql = sqlite3_mprintf("UPDATE %s SET dst = src WHERE %s = %s", zT, zId, zRow);
    else if (v == 4) zSql = sqlite3_mprintf("UPDATE %s SET src = %lld WHERE src = %lld", zT, x, y);
    else zSql = sqlite3_mprintf("UPDATE %s SET src = %lld, dst = %lld, %s = %d WHERE %s = %s", zT, x,
                                y, zW0, w, zId, zRow);
  } else if (r < 57) { /* the rowid itself */
    if (v < 2) {
      zSql = sqlite3_mprintf("UPDATE %s SET %s = %lld WHERE %s = %s", zT, zId, some_id(m), zId, zRow);
      *pMayCollide = 1;
    } else if (v < 4) {
      char *zOther = some_row(m, t);
      zSql = sqlite3_mprintf("UPDATE OR REPLACE %s SET %s = coalesce(%s, %s) WHERE %s = %s", zT, zId,
                             zOther, zId, zId, zRow);
      sqlite3_free(zOther);
    } else {
      zSql = sqlite3_mprintf("UPDATE %s SET %s = -%s WHERE %s = %s", zT, zId, zId, zId, zRow);
      *pMayCollide = 1;
    }
  } else if (r < 88) { /* DELETE one row */
    zSql = sqlite3_mprintf("DELETE FROM %s WHERE %s = %s", zT, zId, zRow);
  } else { /* DELETE several */
    if (v < 2) zSql = sqlite3_mprintf("DELETE FROM %s WHERE src = %lld", zT, x);
    else if (v < 4)
      zSql = sqlite3_mprintf("DELETE FROM %s WHERE %s IN (SELECT %s FROM %s ORDER BY %s LIMIT %d "
                             "OFFSET %d)", zT, zId, zId, zT, zId, 2 + w % 3,
                             (int)test_rng_below(&m->rng, (uint64_t)n + 1));
    else zSql = sqlite3_mprintf("DELETE FROM %s WHERE dst = %lld AND %s >= %d", zT, x, zW0, w);
  }
  sqlite3_free(zV);
  sqlite3_free(zRow);
  return zSql;
}

/* A write the triggers must refuse as a whole (new).  *pMayMatchNone is
** set for an UPDATE that does nothing, and so succeeds, when no row
** matches. */
static char *gen_invalid(model *m, int *pMayMatchNone) {
  static const char *const azBadW[] = {"-1", "-0.5", "NULL", "'fast'", "9e999", "-9e999", "x'00'"};
  static const char *const azBadId[] = {"'x'", "2.5", "NULL", "x'01'", "1e300", "'12a'"};
  const table_def *t = test_rng_below(&m->rng, 4) ? &tabE : &tabF;
  int isE = t == &tabE;
  const char *zT = t->zName, *zId = t->zId, *zCols = t->zCols;
  const char *zBadW = azBadW[test_rng_below(&m->rng, 7)];
  const char *zBadId = azBadId[test_rng_below(&m->rng, 6)];
  const char *zW1 = isE ? ", 1" : ""; /* the second weight of e */
  char *zV = row_values(m, t), *zSql;
  *pMayMatchNone = 0;
  switch (test_rng_below(&m->rng, 7)) {
  case 0: /* bad weight, in one of the weight columns */
    if (isE && test_rng_below(&m->rng, 2))
      zSql = sqlite3_mprintf("INSERT INTO main.e(src, dst, a, b) VALUES (1, 2, 3, %s)", zBadW);
    else zSql = sqlite3_mprintf("INSERT INTO %s(%s) VALUES (1, 2, %s%s)", zT, zCols, zBadW, zW1);
    break;
  case 1: /* bad node id, as src or as dst */
    zSql = sqlite3_mprintf("INSERT INTO %s(%s, %s) VALUES (%s, 5, 1%s)", zT,
                           test_rng_below(&m->rng, 2) ? "src, dst" : "dst, src",
                           isE ? "a, b" : "w", zBadId, zW1);
    break;
  case 2: /* a bad row after good ones (the first may run a probe trigger) */
    zSql = sqlite3_mprintf("INSERT INTO %s(%s) VALUES (7777, 1, 1%s), (%s), (7, 8, %s%s)", zT, zCols,
                           zW1, zV, zBadW, zW1);
    break;
  case 3: /* UPDATE of weights */
    zSql = sqlite3_mprintf("UPDATE %s SET %s = %s WHERE %s IN (SELECT %s FROM %s ORDER BY %s LIMIT 3)",
                           zT, t->azWeight[test_rng_below(&m->rng, t->n_weight)], zBadW, zId, zId,
                           zT, zId);
    *pMayMatchNone = 1;
    break;
  case 4: /* UPDATE of an id */
    zSql = sqlite3_mprintf("UPDATE %s SET %s = %s WHERE %s IN (SELECT %s FROM %s ORDER BY %s DESC "
                           "LIMIT 2)", zT, test_rng_below(&m->rng, 2) ? "src" : "dst", zBadId, zId,
                           zId, zT, zId);
    *pMayMatchNone = 1;
    break;
  case 5: /* REPLACE of an existing row by a bad one */
    zSql = sqlite3_mprintf("REPLACE INTO %s(%s, %s) VALUES ((SELECT max(%s) FROM %s), 9, 9, %s%s)", zT,
                           zId, zCols, zId, zT, zBadW, zW1);
    break;
  default: /* REPLACE through k, UPDATE OR REPLACE of k, by a bad row */
    if (isE && test_rng_below(&m->rng, 2)) {
      zSql = sqlite3_mprintf("INSERT OR REPLACE INTO main.e(src, dst, a, b, k) VALUES (9, 9, %s, 0, "
                             "(SELECT k FROM main.e WHERE k IS NOT NULL ORDER BY k LIMIT 1))", zBadW);
    } else if (isE) {
      zSql = sqlite3_mprintf("UPDATE OR REPLACE main.e SET k = (SELECT max(k) FROM main.e), b = %s "
                             "WHERE id = (SELECT min(id) FROM main.e)", zBadW);
      *pMayMatchNone = 1;
    } else {
      zSql = sqlite3_mprintf("UPDATE OR REPLACE aux.f SET rowid = (SELECT max(rowid) FROM aux.f), "
                             "w = %s WHERE rowid = (SELECT min(rowid) FROM aux.f)", zBadW);
      *pMayMatchNone = 1;
    }
    break;
  }
  sqlite3_free(zV);
  return zSql;
}

/* ---- the steps -------------------------------------------------------- */

/* A valid write on db (the connection under test, conn2 or conn3).
** SQLITE_BUSY is a fine outcome when busy_ok; returns the result code. */
static int write_on(model *m, sqlite3 *db, const char *zWho, int busy_ok) {
  int may_collide;
  char *zSql = tmp(m, gen_write(m, &may_collide));
  int rc = model_exec(m, db, zWho, zSql);
  if (rc == SQLITE_OK) {
  } else if ((rc & 0xff) == SQLITE_BUSY && busy_ok) {
    m->n_busy++; /* a lock of another connection, or (WAL) a snapshot gone stale */
  } else if (may_collide && is_collision(rc)) {
    m->n_collided++;
  } else {
    model_fail(m, "[%s] %s failed: %s (%d)", zWho, zSql, sqlite3_errmsg(db), rc);
  }
  return rc;
}

/* What the rows of both tables look like, for "unchanged". */
static char *fingerprint(model *m, sqlite3 *db) {
  return model_text(m, db,
                    "SELECT (SELECT count(*) || ' ' || total(a) || ' ' || total(b) || ' ' || "
                    "total(src) || ' ' || total(dst) || ' ' || total(id) || ' ' || total(k) || "
                    "' ' || count(t) FROM main.e) || ' | ' || (SELECT count(*) || ' ' || "
                    "total(w) || ' ' || total(src) || ' ' || total(dst) || ' ' || total(rowid) "
                    "FROM aux.f)");
}

/* A write that must fail with the trigger's message and change nothing,
** on db (the connection under test or conn2). */
static void step_invalid(model *m, sqlite3 *db, const char *zWho, int busy_ok) {
  int may_match_none;
  char *zSql = tmp(m, gen_invalid(m, &may_match_none));
  char *zBefore = fingerprint(m, db);
  int rc = model_exec(m, db, zWho, zSql);
  const char *zErr = sqlite3_errmsg(db);
  if (rc == SQLITE_CONSTRAINT_TRIGGER) {
    if (!strstr(zErr, "dyng: ") || !strstr(zErr, "must be"))
      model_fail(m, "[%s] %s: refused with '%s', not the trigger's message", zWho, zSql, zErr);
    m->n_refused++;
  } else if (rc == SQLITE_ERROR && db == m->db && strstr(zErr, "dyng: ") &&
             strstr(zErr, "must be") && strstr(zErr, "(rowid ")) {
    /* A TEMP probe trigger ran before the validating triggers and made dyng
    ** load the graph while the bad row was in the table: the load refuses
    ** it with its own message ("... (rowid 1 has -1.0)"). */
    m->n_refused++;
  } else if (rc == SQLITE_OK) {
    if (!may_match_none || sqlite3_changes(db) != 0)
      model_fail(m, "[%s] %s succeeded; the triggers should refuse it", zWho, zSql);
  } else if ((rc & 0xff) == SQLITE_BUSY && busy_ok) {
    m->n_busy++;
  } else {
    model_fail(m, "[%s] %s failed with %d (%s), not the trigger's refusal", zWho, zSql, rc, zErr);
  }
  char *zAfter = fingerprint(m, db);
  if (strcmp(zBefore, zAfter) != 0)
    model_fail(m, "[%s] %s failed but changed the rows: %s before, %s after", zWho, zSql, zBefore,
               zAfter);
}

/* Writes from the second connection: one to three statements, in
** autocommit or its own transaction.  While the connection under test
** holds a transaction they may meet SQLITE_BUSY: then nothing happened. */
static void step_conn2(model *m) {
  int busy_ok = !sqlite3_get_autocommit(m->db);
  int wrap = test_rng_below(&m->rng, 3) == 0;
  int n = 1 + (int)test_rng_below(&m->rng, 3);
  if (wrap) model_exec_ok(m, m->db2, "conn2", "BEGIN");
  for (int k = 0; k < n; k++) {
    if (test_rng_below(&m->rng, 8) == 0) step_invalid(m, m->db2, "conn2", busy_ok);
    else if (write_on(m, m->db2, "conn2", busy_ok) == SQLITE_OK && busy_ok && !wrap)
      m->n_conn2_in_txn++;
  }
  if (wrap && !sqlite3_get_autocommit(m->db2)) {
    int rc = model_exec(m, m->db2, "conn2", "COMMIT");
    if (rc != SQLITE_OK && !((rc & 0xff) == SQLITE_BUSY && busy_ok))
      model_fail(m, "[conn2] COMMIT failed: %d (%s)", rc, sqlite3_errmsg(m->db2));
  }
  if (!sqlite3_get_autocommit(m->db2)) {
    m->n_busy++;
    model_exec_ok(m, m->db2, "conn2", "ROLLBACK");
  }
}

/* A write from the third connection, which has dyng, then a check of its
** own mirror. */
static void step_conn3(model *m) {
  write_on(m, m->db3, "conn3", !sqlite3_get_autocommit(m->db));
  m->dbq = m->db3;
  m->zQ = "conn3";
  check_one(m);
  m->dbq = m->db;
  m->zQ = "main";
}

/* Exit codes of the child's writer. */
enum { CHILD_OK = 0, CHILD_REFUSED = 1, CHILD_COLLIDED = 2, CHILD_OTHER = 3, CHILD_NO_EXEC = 4 };

/* This program, run again as the child's writer (see main). */
static const char *g_zSelf;

/* The child's writer: opens zPath with the plain library (dyng never
** loaded) and runs zScript; returns a CHILD_ exit code. */
static int child_write(const char *zPath, const char *zScript) {
  sqlite3 *c = NULL;
  int code = CHILD_OTHER;
  if (sqlite3_open_v2(zPath, &c, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
    int rc = sqlite3_exec(c, zScript, NULL, NULL, NULL);
    if (rc != SQLITE_OK) rc = sqlite3_extended_errcode(c);
    if (rc == SQLITE_OK) code = CHILD_OK;
    else if (rc == SQLITE_CONSTRAINT_TRIGGER && strstr(sqlite3_errmsg(c), "must be"))
      code = CHILD_REFUSED;
    else if (is_collision(rc)) code = CHILD_COLLIDED;
    else fprintf(stderr, "child: %s (%d)\n", sqlite3_errmsg(c), rc);
  }
  sqlite3_close(c);
  return code;
}

/* Writes from a child process, run while no transaction is open here.  The
** child execs this program afresh (main's --child-write), so it shares no
** SQLite state with this process and, under valgrind, runs outside it. */
static void step_child(model *m) {
  int n = 1 + (int)test_rng_below(&m->rng, 3), may_collide_any = 0, bad = 0;
  char *zScript = tmp(m, sqlite3_mprintf("ATTACH %Q AS aux; PRAGMA main.synchronous=OFF; "
                                         "PRAGMA aux.synchronous=OFF", m->zAux));
  for (int k = 0; k < n; k++) {
    int may_collide;
    zScript = tmp(m, sqlite3_mprintf("%s; %s", zScript, tmp(m, gen_write(m, &may_collide))));
    may_collide_any |= may_collide;
  }
  if (test_rng_below(&m->rng, 5) == 0) {
    int may_match_none;
    zScript = tmp(m, sqlite3_mprintf("%s; %s", zScript, tmp(m, gen_invalid(m, &may_match_none))));
    bad = may_match_none ? 2 : 1;
  }
  ring_note(m, "child", zScript);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) model_fail(m, "fork failed");
  if (pid == 0) {
    execl(g_zSelf, g_zSelf, "--child-write", m->zMain, zScript, (char *)NULL);
    _exit(CHILD_NO_EXEC);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) model_fail(m, "waitpid failed");
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  ring_note(m, "child", tmp(m, sqlite3_mprintf("exit %d", code)));
  int ok = code == CHILD_OK         ? bad != 1 || may_collide_any
           : code == CHILD_REFUSED  ? bad != 0
           : code == CHILD_COLLIDED ? may_collide_any
                                    : 0;
  if (!ok)
    model_fail(m, "child process writing %s: exit status %d (0 ok, 1 refused, 2 rowid or k taken, "
               "3 other error, 4 exec failed)", zScript, code);
  if (code == CHILD_REFUSED) m->n_refused++;
}

/* A write while a dyng_sssp statement has returned its first row: the
** statement's rows stay those of the moment it started (it materializes
** them), and a query in between sees the write. */
static void step_pending(model *m) {
  const graph_def *gd = &aGraph[test_rng_below(&m->rng, N_GRAPH)];
  int oi = gd->n_weight ? (int)test_rng_below(&m->rng, gd->n_weight) : 0;
  sqlite3_int64 s = aHot[test_rng_below(&m->rng, N_HOT)];
  char *zSql = sssp_sql(m, gd, oi, s, 0, 0);
  ring_note(m, "main", zSql);
  m->n_check++;
  sqlite3_stmt *p = m->pPending = model_prepare(m, zSql);
  dyng_rows *r = &m->rows[1];
  r->n = 0;
  int rc = sqlite3_step(p);
  if (rc == SQLITE_ROW) rows_add(r, p, 0);
  else if (rc != SQLITE_DONE) model_fail(m, "%s failed: %s", zSql, sqlite3_errmsg(m->db));
  ref_graph *g = ref_load(m, gd, oi, 1);
  ring_note(m, "main", "(the statement above is still open)");
  write_on(m, m->db, "main", !sqlite3_get_autocommit(m->db));
  check_one(m);
  m->pPending = NULL;
  if (rc == SQLITE_ROW) rows_read(m, p, zSql, r, 0);
  else sqlite3_finalize(p);
  ring_note(m, "main", "(the statement above, read to its end, against the rows before the write)");
  sssp_compare(m, zSql, gd, g, s, 0, 0, r);
}

static void step_txn(model *m, int kind) {
  static const char *const azBegin[] = {"BEGIN", "BEGIN DEFERRED", "BEGIN IMMEDIATE",
                                        "BEGIN TRANSACTION"};
  const char *zSql;
  int level;
  switch (kind) {
  case K_BEGIN:
    zSql = azBegin[test_rng_below(&m->rng, 4)];
    break;
  case K_COMMIT:
    zSql = test_rng_below(&m->rng, 4) ? "COMMIT" : "END";
    m->n_sp = 0;
    break;
  case K_ROLLBACK:
    zSql = "ROLLBACK";
    m->n_sp = 0;
    break;
  case K_SAVEPOINT:
    zSql = tmp(m, sqlite3_mprintf("SAVEPOINT s%d", m->n_sp++));
    break;
  case K_RELEASE:
    level = (int)test_rng_below(&m->rng, m->n_sp);
    zSql = tmp(m, sqlite3_mprintf("RELEASE%s s%d", test_rng_below(&m->rng, 2) ? "" : " SAVEPOINT",
                                  level));
    m->n_sp = level;
    break;
  default: /* K_ROLLBACK_TO */
    level = (int)test_rng_below(&m->rng, m->n_sp);
    zSql = tmp(m, sqlite3_mprintf("ROLLBACK%s TO s%d",
                                  test_rng_below(&m->rng, 2) ? "" : " TRANSACTION", level));
    m->n_sp = level + 1;
    break;
  }
  model_exec_ok(m, m->db, "main", zSql);
}

/* Schema changes: they make the next query reload, and inside a
** transaction they may be rolled back. */
static void step_ddl(model *m) {
  int busy_ok = !sqlite3_get_autocommit(m->db), on = (int)test_rng_below(&m->rng, 2);
  sqlite3 *db = m->db;
  const char *zWho = "main", *zSql;
  switch (test_rng_below(&m->rng, 5)) {
  case 0:
    zSql = on ? "CREATE INDEX IF NOT EXISTS main.e_src ON e(src, dst)"
              : "DROP INDEX IF EXISTS main.e_src";
    break;
  case 1:
    zSql = on ? "CREATE TABLE IF NOT EXISTS aux.junk(x); INSERT INTO aux.junk VALUES (1)"
              : "DROP TABLE IF EXISTS aux.junk";
    break;
  case 2:
    zSql = "DROP TABLE main.gh; CREATE VIRTUAL TABLE main.gh USING dyng(edges=e, log_limit=10)";
    break;
  case 3:
    zSql = "ALTER TABLE main.e RENAME TO e_renamed; ALTER TABLE main.e_renamed RENAME TO e";
    break;
  default:
    db = m->db2;
    zWho = "conn2";
    zSql = on ? "CREATE INDEX IF NOT EXISTS aux.f_dst ON f(dst)" : "DROP INDEX IF EXISTS aux.f_dst";
    break;
  }
  int rc = model_exec(m, db, zWho, zSql);
  if (rc != SQLITE_OK && !((rc & 0xff) == SQLITE_BUSY && busy_ok))
    model_fail(m, "[%s] %s failed: %s (%d)", zWho, zSql, sqlite3_errmsg(db), rc);
  if (rc != SQLITE_OK) m->n_busy++;
  if (!sqlite3_get_autocommit(m->db2)) model_exec_ok(m, m->db2, "conn2", "ROLLBACK");
}

/* SELECT dyng_update(graph[, 'reload']): valid JSON, and a reload when
** asked for one. */
static void step_update_fn(model *m) {
  const graph_def *gd = &aGraph[test_rng_below(&m->rng, N_GRAPH)];
  int reload = test_rng_below(&m->rng, 4) == 0;
  char *zSql = tmp(m, sqlite3_mprintf("SELECT json_valid(u) || ' ' || json_extract(u, '$.reloads') "
                                      "FROM (SELECT dyng_update('%s'%s) AS u)", gd->zName,
                                      reload ? ", 'reload'" : ""));
  ring_note(m, "main", zSql);
  char *z = model_text(m, m->db, zSql);
  if (reload ? strcmp(z, "1 1") != 0 : strcmp(z, "1 0") != 0 && strcmp(z, "1 1") != 0)
    model_fail(m, "%s gave '%s' (want valid JSON%s)", zSql, z, reload ? " with reloads 1" : "");
}

/* Closes the connection under test, lets the second connection write while
** it is closed, and opens it again: the mirror is loaded afresh. */
static void step_reopen(model *m) {
  ring_note(m, "main", "(close)");
  if (sqlite3_close(m->db) != SQLITE_OK)
    model_fail(m, "closing the connection under test failed: %s", sqlite3_errmsg(m->db));
  m->db = m->dbq = NULL;
  write_on(m, m->db2, "conn2", 0);
  ring_note(m, "main", "(open, load dyng)");
  m->db = m->dbq = sql_open(m->zMain);
  prepare_connection(m, m->db, "main");
  model_exec_ok(m, m->db, "main", zCreateProbes);
  if (!m->wal) model_exec_ok(m, m->db, "main", "PRAGMA recursive_triggers=ON");
}

/* A write of main.e that may replace, ignore or upsert on one of six
** values of k (or a taken rowid), so that writes meet each other's rows. */
static char *gen_replace(model *m) {
  char *zV = tmp(m, row_values(m, &tabE)), *zRow = tmp(m, some_row(m, &tabE));
  int k = (int)test_rng_below(&m->rng, 6), w = (int)test_rng_below(&m->rng, 10);
  const char *zCols = tabE.zCols;
  switch (test_rng_below(&m->rng, 9)) {
  case 0: return sqlite3_mprintf("INSERT OR REPLACE INTO main.e(%s, k) VALUES (%s, %d)", zCols, zV, k);
  case 1: return sqlite3_mprintf("REPLACE INTO main.e(id, %s, k) VALUES (%s, %s, %d)", zCols, zRow, zV, k);
  case 2: return sqlite3_mprintf("INSERT OR IGNORE INTO main.e(%s, k) VALUES (%s, %d)", zCols, zV, k);
  case 3:
    return sqlite3_mprintf("INSERT INTO main.e(%s, k) VALUES (%s, %d) ON CONFLICT(k) DO UPDATE SET "
                           "dst = excluded.dst, a = excluded.a", zCols, zV, k);
  case 4:
    return sqlite3_mprintf("INSERT INTO main.e(%s, k) VALUES (%s, %d) ON CONFLICT DO NOTHING", zCols,
                           zV, k);
  case 5: return sqlite3_mprintf("UPDATE OR REPLACE main.e SET k = %d WHERE id = %s", k, zRow);
  case 6: return sqlite3_mprintf("UPDATE OR IGNORE main.e SET k = %d, b = %d WHERE id = %s", k, w, zRow);
  case 7: /* a rowid a REPLACE may just have freed, or taken */
    return sqlite3_mprintf("INSERT OR REPLACE INTO main.e(id, %s) VALUES (%s, %s)", zCols, zRow, zV);
  default: return sqlite3_mprintf("DELETE FROM main.e WHERE k = %d", k);
  }
}

/* Runs a gen_replace() write on db; SQLITE_BUSY is a no-op when busy_ok. */
static void replace_on(model *m, sqlite3 *db, const char *zWho, int busy_ok) {
  const char *zSql = tmp(m, gen_replace(m));
  int rc = model_exec(m, db, zWho, zSql);
  if (rc == SQLITE_OK) return;
  if ((rc & 0xff) == SQLITE_BUSY && busy_ok) m->n_busy++;
  else model_fail(m, "[%s] %s failed: %s (%d)", zWho, zSql, sqlite3_errmsg(db), rc);
}

/* Asks each graph of main.e once (source 1, every objective in turn). */
static void check_graphs_of_e(model *m) {
  for (int gi = 0; gi < N_GRAPH; gi++)
    if (strcmp(aGraph[gi].zTable, "e") == 0)
      check_sssp(m, &aGraph[gi], (int)(m->step % (aGraph[gi].n_weight ? aGraph[gi].n_weight : 1)),
                 pick_source(m), 0, 0);
}

/* Writes of gen_replace() around a query and a rollback: a write, a query,
** ROLLBACK TO, another write (the log's seqs reused by a different entry);
** a write, a savepoint, a write, a query, ROLLBACK TO (the state before the
** second write, not the table's now); or, outside a transaction, a write
** and a query in a transaction rolled back, then a write of the second
** connection. */
static void step_rewrite(model *m) {
  int auto_ = sqlite3_get_autocommit(m->db);
  uint64_t v = test_rng_below(&m->rng, 3);
  if (v == 2 && auto_) {
    model_exec_ok(m, m->db, "main", "BEGIN");
    replace_on(m, m->db, "main", !auto_);
    check_graphs_of_e(m);
    model_exec_ok(m, m->db, "main", "ROLLBACK");
    replace_on(m, m->db2, "conn2", 1);
    return;
  }
  model_exec_ok(m, m->db, "main", "SAVEPOINT rw");
  replace_on(m, m->db, "main", !auto_);
  if (v == 0) {
    check_graphs_of_e(m);
    model_exec_ok(m, m->db, "main", "ROLLBACK TO rw");
    replace_on(m, m->db, "main", !auto_);
  } else {
    model_exec_ok(m, m->db, "main", "SAVEPOINT rw2");
    replace_on(m, m->db, "main", !auto_);
    check_graphs_of_e(m);
    model_exec_ok(m, m->db, "main", "ROLLBACK TO rw2; RELEASE rw2");
  }
  model_exec_ok(m, m->db, "main", "RELEASE rw");
}

/* One step of the walk: a kind valid in the current state, then checks. */
static void model_step(model *m) {
  int auto_ = sqlite3_get_autocommit(m->db);
  int w[K_N] = {0};
  w[K_WRITE] = 480;
  w[K_INVALID] = 30;
  w[K_BEGIN] = auto_ ? 45 : 0;
  w[K_COMMIT] = auto_ ? 0 : 30;
  w[K_ROLLBACK] = auto_ ? 0 : 20;
  w[K_SAVEPOINT] = m->n_sp < MAX_DEPTH ? 40 : 0;
  w[K_RELEASE] = m->n_sp ? 25 : 0;
  w[K_ROLLBACK_TO] = m->n_sp ? 30 : 0;
  w[K_CONN2] = 60;
  w[K_CONN3] = 15;
  w[K_CHILD] = auto_ ? 20 : 0;
  w[K_PENDING] = 10;
  w[K_UPDATE_FN] = m->has_update ? 10 : 0;
  w[K_DDL] = 4;
  w[K_VACUUM] = auto_ ? 1 : 0;
  w[K_CHECKPOINT] = auto_ && m->wal ? 5 : 0;
  w[K_REOPEN] = auto_ ? 2 : 0;
  w[K_REWRITE] = 20;
  int total = 0;
  for (int k = 0; k < K_N; k++) total += w[k];
  int r = (int)test_rng_below(&m->rng, (uint64_t)total), kind = 0;
  while (r >= w[kind]) r -= w[kind++];
  m->n_kind[kind]++;
  switch (kind) {
  case K_WRITE: write_on(m, m->db, "main", !auto_); break;
  case K_INVALID: step_invalid(m, m->db, "main", !auto_); break;
  case K_CONN2: step_conn2(m); break;
  case K_CONN3: step_conn3(m); break;
  case K_CHILD: step_child(m); break;
  case K_PENDING: step_pending(m); break;
  case K_UPDATE_FN: step_update_fn(m); break;
  case K_DDL: step_ddl(m); break;
  case K_VACUUM:
    model_exec_ok(m, m->db, "main", test_rng_below(&m->rng, 2) ? "VACUUM" : "VACUUM aux");
    break;
  case K_CHECKPOINT: model_exec_ok(m, m->db, "main", "PRAGMA main.wal_checkpoint(TRUNCATE)"); break;
  case K_REOPEN: step_reopen(m); break;
  case K_REWRITE: step_rewrite(m); break;
  default: step_txn(m, kind); break;
  }
  if (sqlite3_get_autocommit(m->db)) m->n_sp = 0;
  check_step(m);
  tmp_clear(m);
}

/* ---- fixtures --------------------------------------------------------- */

static uint64_t g_seed;

/* Steps of both walks together: DYNG_SYNC_STEPS, else 5000 (2000 under
** valgrind, which preloads its vgpreload_*.so into the program). */
static long total_steps(void) {
  const char *z = getenv("DYNG_SYNC_STEPS");
  if (z && *z) return strtol(z, NULL, 10);
  const char *zPre = getenv("LD_PRELOAD");
  return zPre && strstr(zPre, "vgpreload") ? 2000 : 5000;
}

/* Creates the files and the three connections and puts the fixture in
** *state; with tables, also the edge tables with some rows, the graphs and
** the probes. */
static model *model_open(void **state, const char *zRun, int wal, uint64_t salt, int tables) {
  model *m = calloc(1, sizeof *m);
  assert_non_null(m);
  *state = m;
  m->zRun = zRun;
  m->seed = g_seed;
  m->wal = wal;
  m->zQ = "main";
  test_rng_seed(&m->rng, g_seed * 0x9e3779b97f4a7c15ULL + salt);
  strcpy(m->zMain, "/tmp/dyng-sync-XXXXXX");
  strcpy(m->zAux, "/tmp/dyng-sync-aux-XXXXXX");
  sql_temp_file(m->zMain);
  sql_temp_file(m->zAux);
  m->db = m->dbq = sql_open(m->zMain);
  prepare_connection(m, m->db, "main");
  const char *zMode = wal ? "WAL" : "DELETE";
  model_exec_ok(m, m->db, "main", tmp(m, sqlite3_mprintf("PRAGMA main.journal_mode=%s; "
                                                         "PRAGMA aux.journal_mode=%s", zMode, zMode)));
  if (tables) {
    model_exec_ok(m, m->db, "main",
                  "CREATE TABLE main.e(id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, a REAL, "
                  "b REAL, k INTEGER UNIQUE, t TEXT);"
                  "CREATE UNIQUE INDEX main.e_t ON e(t COLLATE NOCASE) WHERE t <> 'free';"
                  "CREATE TABLE aux.f(src INTEGER, dst INTEGER, w REAL)");
    for (int i = 0; i < 100; i++) {
      const table_def *t = i < 75 ? &tabE : &tabF;
      model_exec_ok(m, m->db, "main",
                    tmp(m, sqlite3_mprintf("INSERT INTO %s(%s) VALUES (%s)", t->zName, t->zCols,
                                           tmp(m, row_values(m, t)))));
    }
    m->n_e = 75;
    m->n_f = 25;
    model_exec_ok(m, m->db, "main", zCreateGraphs);
    model_exec_ok(m, m->db, "main", zCreateProbes);
  }
  /* The journal walk also covers REPLACE with recursive triggers, which
  ** fires DELETE triggers for the rows it removes. */
  if (!wal) model_exec_ok(m, m->db, "main", "PRAGMA recursive_triggers=ON");
  assert_int_equal(sqlite3_open(m->zMain, &m->db2), SQLITE_OK);
  prepare_connection(m, m->db2, "conn2");
  if (wal) model_exec_ok(m, m->db2, "conn2", "PRAGMA recursive_triggers=ON");
  m->db3 = sql_open(m->zMain);
  prepare_connection(m, m->db3, "conn3");
  m->has_update = strcmp(model_text(m, m->db, "SELECT count(*) FROM pragma_function_list "
                                              "WHERE name = 'dyng_update'"), "0") != 0;
  tmp_clear(m);
  return m;
}

/* Closes everything (close_v2 also takes a statement a failure left
** open), removes the files and frees the fixture. */
static int model_teardown(void **state) {
  model *m = *state;
  if (!m) return 0;
  sqlite3_close_v2(m->db3);
  sqlite3_close_v2(m->db2);
  sqlite3_finalize(m->pPending);
  sqlite3_close_v2(m->db);
  sql_remove_db(m->zMain);
  sql_remove_db(m->zAux);
  for (int i = 0; i < RING; i++) sqlite3_free(m->azRing[i]);
  tmp_clear(m);
  free(m->azTmp);
  for (int i = 0; i < 2; i++) {
    ref_free(&m->ref[i]);
    rows_free(&m->rows[i]);
  }
  free(m);
  *state = NULL;
  return 0;
}

/* One TAP comment on what the walk did, and how the graphs were kept in
** step (full loads / batches / reverts since the last reopen). */
static void model_report(model *m) {
  printf("# %s: %ld steps, %ld comparisons, %ld refused writes, %ld collisions, %ld busy no-ops, "
         "%ld conn2 writes seen through a read transaction%s\n# %s kinds:", m->zRun, m->step,
         m->n_check, m->n_refused, m->n_collided, m->n_busy, m->n_conn2_in_txn,
         m->has_update ? "" : ", no dyng_update()", m->zRun);
  for (int k = 0; k < K_N; k++)
    if (m->n_kind[k]) printf(" %s %ld", azKind[k], m->n_kind[k]);
  printf("\n# %s loads/batches/reverts: %s\n", m->zRun,
         model_text(m, m->db, "SELECT group_concat(json_extract(value, '$.name') || ' ' || "
                              "json_extract(value, '$.loads') || '/' || "
                              "json_extract(value, '$.batches') || '/' || "
                              "ifnull(json_extract(value, '$.reverts'), '-'), ', ') "
                              "FROM json_each(dyng_config('graphs'))"));
  fflush(stdout);
  tmp_clear(m);
}

static void run_walk(void **state, const char *zRun, int wal, long n_steps, uint64_t salt) {
  model *m = model_open(state, zRun, wal, salt, 1);
  for (m->step = 1; m->step <= n_steps; m->step++) model_step(m);
  m->step--;
  /* End in autocommit and look once more at everything. */
  if (!sqlite3_get_autocommit(m->db)) model_exec_ok(m, m->db, "main", "COMMIT");
  for (int gi = 0; gi < N_GRAPH; gi++) {
    check_degrees(m, &aGraph[gi]);
    for (int h = 0; h < N_HOT; h++) check_sssp(m, &aGraph[gi], 0, aHot[h], 0, 0);
  }
  model_report(m);
}

/* ---- cases ------------------------------------------------------------ */

static void test_random_walk_in_wal_mode_matches_reference(void **state) {
  long n = total_steps();
  run_walk(state, "wal", 1, n - n / 5, 1);
}

static void test_random_walk_in_rollback_journal_mode_matches_reference(void **state) {
  run_walk(state, "journal", 0, total_steps() / 5, 2);
}

/* The graph is queried inside savepoints, the savepoints are rolled back
** and the next changes reuse the rolled-back log rows with other content;
** the graphs of e are checked after every statement. */
static void test_rollback_to_after_query_in_savepoint(void **state) {
  model *m = model_open(state, "savepoint", 1, 3, 1);
  static const char *const azStep[] = {
      "DELETE FROM e; DELETE FROM aux.f",
      "INSERT INTO e(id, src, dst, a, b) VALUES (1, 1, 2, 5, 1), (2, 2, 3, 5, 1), (3, 1, 3, 9, 9)",
      "BEGIN",
      "SAVEPOINT s0",
      "INSERT INTO e(id, src, dst, a, b) VALUES (10, 1, 3, 1, 1)",
      "SAVEPOINT s1",
      "DELETE FROM e WHERE id = 1",
      "UPDATE e SET a = 0 WHERE id = 2",
      "ROLLBACK TO s1",
      "INSERT INTO e(id, src, dst, a, b) VALUES (11, 3, 4, 2, 2)",
      "ROLLBACK TO s0",
      "INSERT INTO e(id, src, dst, a, b) VALUES (10, 2, 4, 1, 1)",
      "RELEASE s0",
      "SAVEPOINT s0",
      "UPDATE e SET id = 20 WHERE id = 10",
      "ROLLBACK TO s0",
      "DELETE FROM e WHERE id = 10",
      "ROLLBACK",
      "SAVEPOINT t",
      "UPDATE e SET dst = 4 WHERE id = 3",
      "ROLLBACK TO t",
      "INSERT INTO e(id, src, dst, a, b) VALUES (4, 3, 4, 2, 2)",
      "RELEASE t",
  };
  for (size_t i = 0; i < sizeof azStep / sizeof azStep[0]; i++) {
    m->step++;
    model_exec_ok(m, m->db, "main", azStep[i]);
    for (int gi = 0; gi < 3; gi++)
      for (int oi = 0; oi < (aGraph[gi].n_weight ? aGraph[gi].n_weight : 1); oi++) {
        check_sssp(m, &aGraph[gi], oi, 1, 0, 0);
        check_sssp(m, &aGraph[gi], oi, 2, 0, 0);
      }
    if (i % 4 == 3)
      for (int gi = 0; gi < 3; gi++) check_degrees(m, &aGraph[gi]);
    tmp_clear(m);
  }
}

/* The graph of table r used by the fixed cases below. */
static const graph_def graphR = {"gr", "main", "r", 1, 0, {NULL, NULL}};

/* REPLACE that removes a row through a UNIQUE index fires no DELETE
** trigger; the graph must still lose that row, whatever the index. */
static void check_replace_through_index(void **state, const char *zRun, const char *zIndex,
                                        const char *zInsert) {
  model *m = model_open(state, zRun, 1, 4, 0);
  model_exec_ok(m, m->db, "main",
                tmp(m, sqlite3_mprintf("CREATE TABLE r(id INTEGER PRIMARY KEY, src INTEGER, "
                                       "dst INTEGER, tag TEXT, p INTEGER, x INTEGER); %s;"
                                       "INSERT INTO r VALUES (1, 1, 2, 'A', 5, 7), "
                                       "(2, 2, 3, 'B', 6, 8);"
                                       "CREATE VIRTUAL TABLE gr USING dyng(edges=r)", zIndex)));
  m->step = 1;
  check_sssp(m, &graphR, 0, 1, 0, 0);
  m->step = 2;
  model_exec_ok(m, m->db, "main", zInsert);
  char *zIds = model_text(m, m->db, "SELECT group_concat(id) FROM (SELECT id FROM r ORDER BY id)");
  if (strcmp(zIds, "2,3") != 0)
    model_fail(m, "the REPLACE left rows %s, not 2,3; the test's premise is wrong", zIds);
  check_sssp(m, &graphR, 0, 1, 0, 0);
  check_sssp(m, &graphR, 0, 2, 0, 0);
  check_degrees(m, &graphR);
}

static void test_replace_through_unique_index_removes_edge(void **state) {
  check_replace_through_index(state, "replace-unique", "CREATE UNIQUE INDEX r_tag ON r(tag)",
                              "INSERT OR REPLACE INTO r(id, src, dst, tag) VALUES (3, 7, 8, 'A')");
}

static void test_replace_through_nocase_unique_index_removes_edge(void **state) {
  check_replace_through_index(state, "replace-nocase",
                              "CREATE UNIQUE INDEX r_tag ON r(tag COLLATE NOCASE)",
                              "INSERT OR REPLACE INTO r(id, src, dst, tag) VALUES (3, 7, 8, 'a')");
}

static void test_replace_through_partial_unique_index_removes_edge(void **state) {
  check_replace_through_index(state, "replace-partial",
                              "CREATE UNIQUE INDEX r_p ON r(p) WHERE p > 0",
                              "INSERT OR REPLACE INTO r(id, src, dst, p) VALUES (3, 7, 8, 5)");
}

static void test_replace_through_expression_unique_index_removes_edge(void **state) {
  check_replace_through_index(state, "replace-expression", "CREATE UNIQUE INDEX r_x ON r(abs(x))",
                              "INSERT OR REPLACE INTO r(id, src, dst, x) VALUES (3, 7, 8, -7)");
}

/* A graph dropped and created again inside a savepoint that is rolled back,
** twice: the graph stays usable, and the connection closes cleanly. */
static void test_graph_recreated_in_savepoint_rolled_back_twice(void **state) {
  model *m = model_open(state, "recreate", 1, 5, 0);
  static const char *const azStep[] = {
      "CREATE TABLE r(src INTEGER, dst INTEGER); INSERT INTO r VALUES (1, 2), (2, 3);"
      "CREATE VIRTUAL TABLE gr USING dyng(edges=r)",
      "SAVEPOINT s1",
      "DROP TABLE gr; CREATE VIRTUAL TABLE gr USING dyng(edges=r)",
      "ROLLBACK TO s1",
      "DROP TABLE gr; CREATE VIRTUAL TABLE gr USING dyng(edges=r)",
      "ROLLBACK TO s1",
      "RELEASE s1",
  };
  for (size_t i = 0; i < sizeof azStep / sizeof azStep[0]; i++) {
    m->step++;
    model_exec_ok(m, m->db, "main", azStep[i]);
  }
  for (int k = 0; k < 3; k++) {
    m->step++;
    check_sssp(m, &graphR, 0, 1, 0, 0);
    check_degrees(m, &graphR);
  }
  m->step++;
  model_exec_ok(m, m->db, "main", "INSERT INTO r VALUES (3, 4)");
  check_sssp(m, &graphR, 0, 1, 0, 0);
  ring_note(m, "main", "(close)");
  if (sqlite3_close(m->db) != SQLITE_OK)
    model_fail(m, "sqlite3_close: %s (a statement dyng keeps was not finalized)",
               sqlite3_errmsg(m->db));
  m->db = m->dbq = NULL;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child-write") == 0) return child_write(argv[2], argv[3]);
  g_zSelf = strchr(argv[0], '/') ? argv[0] : "/proc/self/exe";
  g_seed = test_seed();
  printf("# %ld steps (DYNG_SYNC_STEPS)\n", total_steps());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_rollback_to_after_query_in_savepoint, model_teardown),
      cmocka_unit_test_teardown(test_replace_through_unique_index_removes_edge, model_teardown),
      cmocka_unit_test_teardown(test_replace_through_nocase_unique_index_removes_edge,
                                model_teardown),
      cmocka_unit_test_teardown(test_replace_through_partial_unique_index_removes_edge,
                                model_teardown),
      cmocka_unit_test_teardown(test_replace_through_expression_unique_index_removes_edge,
                                model_teardown),
      cmocka_unit_test_teardown(test_random_walk_in_wal_mode_matches_reference, model_teardown),
      cmocka_unit_test_teardown(test_random_walk_in_rollback_journal_mode_matches_reference,
                                model_teardown),
      /* Last: where it fails it may corrupt memory (under ASan it aborts). */
      cmocka_unit_test_teardown(test_graph_recreated_in_savepoint_rolled_back_twice,
                                model_teardown),
  };
  return cmocka_run_group_tests_name("sync_model", tests, NULL, NULL);
}
