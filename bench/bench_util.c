/*
** bench/bench_util.c: the helpers that bench_graph and bench_sync share;
** see bench_util.h for what each one does.
**
** How it works: plain C and the SQLite API, no state but the scratch
** file's name.  Messages carry bench_program, which each driver defines.
*/
#include "bench/bench_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", bench_program);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory (%zu bytes)", n);
  return p;
}

/* ---- statistics ------------------------------------------------------- */

/* qsort's comparison for doubles, ascending. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

stats stats_of(const double *x, int n) {
  stats s = {NAN, NAN, NAN, n};
  if (n <= 0) return s;
  double *c = xmalloc((size_t)n * sizeof *c);
  memcpy(c, x, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  s.median = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  s.min = c[0];
  s.max = c[n - 1];
  free(c);
  return s;
}

double median_of(const double *x, int n) { return stats_of(x, n).median; }

/* ---- SQLite and files ------------------------------------------------- */

sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    die("%s: %s", sql, sqlite3_errmsg(db));
  return st;
}

int load_extension(sqlite3 *db, const char *path, char **why) {
  *why = NULL;
  if (sqlite3_enable_load_extension(db, 1) != SQLITE_OK) {
    *why = sqlite3_mprintf("sqlite3_enable_load_extension failed: %s", sqlite3_errmsg(db));
    return 0;
  }
  if (sqlite3_load_extension(db, path, NULL, why) != SQLITE_OK) {
    if (!*why) *why = sqlite3_mprintf("unknown error");
    return 0;
  }
  return 1;
}

void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) die("%s: %s", from, strerror(errno));
  FILE *out = fopen(to, "wb");
  if (!out) die("%s: %s", to, strerror(errno));
  size_t cap = 1 << 20, got;
  char *buf = xmalloc(cap);
  while ((got = fread(buf, 1, cap, in)) > 0)
    if (fwrite(buf, 1, got, out) != got) die("%s: %s", to, strerror(errno));
  if (ferror(in)) die("%s: read error", from);
  if (fclose(out) != 0) die("%s: %s", to, strerror(errno));
  fclose(in);
  free(buf);
}

static char scratch_path[4096]; /* "" until scratch_name() */

/* atexit handler: removes the scratch database and its side files. */
static void remove_scratch(void) {
  if (!scratch_path[0]) return;
  const char *suffix[] = {"", "-journal", "-wal", "-shm"};
  for (int i = 0; i < 4; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s%s", scratch_path, suffix[i]);
    unlink(p);
  }
}

const char *scratch_name(void) {
  if (scratch_path[0]) return scratch_path;
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch_path, sizeof scratch_path, "%s/%s-%ld.db", tmp && *tmp ? tmp : "/tmp",
           bench_program, (long)getpid());
  atexit(remove_scratch);
  return scratch_path;
}

/* ---- reporting -------------------------------------------------------- */

void report_init(report *r, const char *db) {
  memset(r, 0, sizeof *r);
  r->db = db;
}

void report_add(report *r, const char *name, const char *unit, double scale,
                const double *x, int n, const char *ratio_text) {
  if (r->n == REPORT_MAX) return;
  stats s = stats_of(x, n);
  snprintf(r->md[r->n], sizeof r->md[r->n], "| %s (%s) | %.3f | %.3f | %.3f | %d | %s |",
           name, unit, s.median * scale, s.min * scale, s.max * scale, s.n,
           ratio_text ? ratio_text : "");
  snprintf(r->kv[r->n], sizeof r->kv[r->n],
           "BENCH db=%s metric=%s unit=%s median=%.6g min=%.6g max=%.6g n=%d", r->db,
           name, unit, s.median * scale, s.min * scale, s.max * scale, s.n);
  r->n++;
}

void report_ratio(report *r, const char *name, double value) {
  if (r->n == REPORT_MAX) return;
  r->md[r->n][0] = '\0';
  snprintf(r->kv[r->n], sizeof r->kv[r->n], "BENCH db=%s metric=%s ratio=%.4f", r->db,
           name, value);
  r->n++;
}

void report_print_rows(const report *r) {
  for (int i = 0; i < r->n; i++)
    if (r->md[i][0]) printf("%s\n", r->md[i]);
}

void report_print_lines(const report *r) {
  for (int i = 0; i < r->n; i++) printf("%s\n", r->kv[i]);
}
