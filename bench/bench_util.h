/*
** bench/bench_util.h: the helpers that the benchmark drivers (bench_graph,
** bench_sync, bench_dyn, bench_analyses) share, so that they die, time,
** summarise, load and report in the same way.
**
** What is here: dying with a message (prefixed with the program's name),
** allocation that cannot fail, a monotonic clock, a seeded generator, the
** median, minimum and maximum of a set of timings, a few SQLite calls
** (prepare, load the extension), a scratch copy of the database removed at
** exit, the report: one Markdown table row and one
** `BENCH db=... metric=...` line per figure, kept until the end, and for
** the drivers that work on an engine graph: loading edges(...) into one,
** and drawing, and undoing, random batches of inserts and deletes.
**
** Each program that links bench_util.c defines bench_program, the name that
** its messages and its scratch file carry.
*/
#ifndef DYNG_BENCH_UTIL_H
#define DYNG_BENCH_UTIL_H

#include "engine/graph.h"

#include <sqlite3.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The program's name ("bench_graph"), defined by each driver. */
extern const char bench_program[];

/* Prints "<bench_program>: " and the printf-style message to stderr, then
** exits with status 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* malloc that dies rather than return NULL (n = 0 gives a 1-byte block);
** the caller frees. */
void *xmalloc(size_t n);

/* Seconds on the monotonic clock; only differences mean anything.  Inline,
** as it brackets every timed piece. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* SplitMix64: the next 64 random bits from *state, which it advances; the
** same seed always gives the same sequence. */
static inline uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Median, minimum and maximum of n >= 1 samples. */
typedef struct stats {
  double median, min, max;
  int n; /* the number of samples */
} stats;

/* The stats of x[0..n-1] (x is left as it is); all NAN when n <= 0. */
stats stats_of(const double *x, int n);

/* The median of x[0..n-1]; NAN when n <= 0. */
double median_of(const double *x, int n);

/* Prepares sql on db, dying with SQLite's message when it does not
** compile; the caller finalizes the statement. */
sqlite3_stmt *prepare(sqlite3 *db, const char *sql);

/* The first column of the first row of sql as a double (NULL gives
** INFINITY, for "no answer" as a distance); 0 when sql does not compile or
** gives no row, leaving *x alone. */
int query_double(sqlite3 *db, const char *sql, double *x);

/* Runs sql (several statements allowed); dies on error. */
void sql_exec(sqlite3 *db, const char *sql);

/* The first column of the first row of sql as new text (free()), or NULL
** for no row or NULL; dies on error. */
char *sql_text(sqlite3 *db, const char *sql);

/* Seconds that sql takes to give its first row, whose first column goes to
** *value (when not NULL); dies when it gives none. */
double time_query(sqlite3 *db, const char *sql, double *value);

/* query_double, dying when sql fails or gives no row. */
double sql_number(sqlite3 *db, const char *sql);

/* The value at `path` of the JSON text `json`: as a number (NAN when
** absent), or as new text (free(); NULL when absent). */
double json_path_number(sqlite3 *db, const char *json, const char *path);
char *json_path_text(sqlite3 *db, const char *json, const char *path);

/* Loads the extension at path (dyng) into db and lifts its max_ms budget:
** 1 on success, 0 (and *why, which the caller sqlite3_free()s) otherwise. */
int load_extension(sqlite3 *db, const char *path, char **why);

/* Opens the database at path with the extension at ext loaded; dies on
** error. */
sqlite3 *open_with_extension(const char *path, const char *ext);

/* 1 when db's connection chose a CUDA backend; else 0, after printing
** "<prog>: no usable GPU backend: <dyng_config()'s reason>" (the caller then
** exits 77, a skip). */
int cuda_backend_or_say_why(sqlite3 *db, const char *prog);

/* Copies the file `from` to `to` (created or truncated); dies on error. */
void copy_file(const char *from, const char *to);

/* Names this process's scratch database, $TMPDIR/<bench_program>-<pid>.db
** (/tmp when TMPDIR is unset or empty), and has it removed at exit with its
** -journal, -wal and -shm files.  Creates nothing: the caller copies the
** database there.  Returns the name (static storage, the same every call). */
const char *scratch_name(void);

/* The figures a driver prints at the end: per figure, one Markdown row and
** one machine-readable line. */
#define REPORT_MAX 64
typedef struct report {
  const char *db;             /* the database's name, for the BENCH lines */
  char md[REPORT_MAX][256];   /* Markdown rows; "" for a ratio (no row) */
  char kv[REPORT_MAX][320];   /* `BENCH db=... metric=...` lines */
  int n;                      /* entries used */
} report;

/* Empties r; its BENCH lines will say db=<db> (borrowed, kept as given). */
void report_init(report *r, const char *db);

/* Adds the figure `name`: the stats of x[0..n-1] times scale, in unit, with
** ratio_text (or nothing when NULL) in the row's last column.  Beyond
** REPORT_MAX entries it adds nothing. */
void report_add(report *r, const char *name, const char *unit, double scale,
                const double *x, int n, const char *ratio_text);

/* Adds the ratio `name` = value: a BENCH line only, no Markdown row. */
void report_ratio(report *r, const char *name, double value);

/* Prints the Markdown rows, one a line, under a header the caller printed. */
void report_print_rows(const report *r);

/* Prints the BENCH lines, one a line. */
void report_print_lines(const report *r);

/* "1000" -> "1k", "50000" -> "50k", "1000000" -> "1m": batch names, into
** out[0..n-1]. */
void size_name(long k, char *out, size_t n);

/* ---- engine graphs and batches (bench_graph, bench_dyn, bench_analyses) */

/* The rowids of the graph's live edges, in no order, so that a delete can
** draw one uniformly and remove it in O(1); next_rowid is above every rowid
** ever used, for inserts.  Starts as {0}; the caller frees rowid. */
typedef struct rowid_pool {
  int64_t *rowid;      /* the live rowids, rowid[0..n-1] */
  size_t n, cap;       /* used and allocated entries */
  int64_t next_rowid;  /* above every rowid pushed so far */
} rowid_pool;

/* Appends rowid to p, growing it (dies when out of memory). */
void pool_push(rowid_pool *p, int64_t rowid);

/* Removes and returns a uniformly drawn rowid; dies when p is empty. */
int64_t pool_take(rowid_pool *p, uint64_t *rng);

/* Reads edges(rowid, src, dst[, length, minutes, toll]) of db, about n_rows
** rows, into a new sealed engine graph (caller frees) with n_weights (0 or
** 3) weights, directed or not, with no in adjacency built; every rowid goes
** into *pool unless pool is NULL.  Dies on any error. */
dyng_graph *load_edges(sqlite3 *db, long long n_rows, int n_weights, int directed,
                       rowid_pool *pool);

/* Counts edges(...) (dying when it is empty), then load_edges(); a directed
** graph also gets its in adjacency, which updates need.  Caller frees. */
dyng_graph *load_graph(sqlite3 *db, int n_weights, int directed, rowid_pool *pool);

/* A uniformly drawn vertex of g that still has an edge. */
uint32_t live_vertex(const dyng_graph *g, uint64_t *rng);

/* A vertex 2 or 3 out-edges away from u along a random walk, other than u;
** DYNG_NONE when the walk gets stuck or comes back. */
uint32_t nearby_vertex(const dyng_graph_view *view, uint32_t u, uint64_t *rng);

/* Fills b with n_del deletes drawn from pool (which loses them) and n_ins
** inserts of new rowids (which pool gains, after the deletes are drawn, so
** a batch never deletes its own inserts).  An insert joins two distinct
** live vertices drawn uniformly, or with `local` a live vertex and one 2-3
** hops downstream of it, and carries the weights of a random live edge. */
void draw_batch(const dyng_graph *g, rowid_pool *pool, dyng_batch *b, long n_del, long n_ins,
                int local, uint64_t *rng);

/* Undoes the batch that `changes` records: deletes the edges it added and
** puts back the ones it removed (same rowids, endpoints and weights).  The
** added rowids are the last n_added of pool (draw_batch appended them after
** drawing the deletes), so the pool gets its old contents back too. */
void restore_graph(dyng_graph *g, rowid_pool *pool, dyng_batch *b, const dyng_changes *changes);

#endif /* DYNG_BENCH_UTIL_H */
