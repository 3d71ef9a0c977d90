/*
** bench/bench_util.h: the helpers that the benchmark drivers bench_graph
** and bench_sync share, so that both die, time, summarise and report in
** the same way.
**
** What is here: dying with a message (prefixed with the program's name),
** allocation that cannot fail, a monotonic clock, a seeded generator, the
** median, minimum and maximum of a set of timings, a few SQLite calls
** (prepare, load the extension), a scratch copy of the database removed at
** exit, and the report: one Markdown table row and one
** `BENCH db=... metric=...` line per figure, kept until the end.
**
** Each program that links bench_util.c defines bench_program, the name that
** its messages and its scratch file carry.
*/
#ifndef DYNG_BENCH_UTIL_H
#define DYNG_BENCH_UTIL_H

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

/* Loads the extension at path into db: 1 on success, 0 (and *why, which
** the caller sqlite3_free()s) otherwise. */
int load_extension(sqlite3 *db, const char *path, char **why);

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

#endif /* DYNG_BENCH_UTIL_H */
