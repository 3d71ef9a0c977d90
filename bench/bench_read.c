/*
** bench/bench_read.c: how fast dyng_read_edges reads edge files.
**
**   bench_read [--lines N] [--runs R] [--extension PATH]
**
** Writes N random weighted edges (default 5,000,000; ids below 2^24,
** weights with up to 3 decimals) into $TMPDIR (or /tmp) as a SNAP edge list,
** the same gzip-compressed (with the gzip program), a DIMACS .gr and a CSV
** file, then times, R times over (default 3; medians),
**   SELECT count(*), sum(src), sum(dst), sum(weight) FROM dyng_read_edges(F)
** on each, checks every file gives the same sums, and reports lines per
** second (goal: at least 2 million).  The files are removed at exit.
*/
#include "bench/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char bench_program[] = "bench_read";

static char g_files[4][512];

static void remove_files(void) {
  for (int i = 0; i < 4; i++)
    if (g_files[i][0]) unlink(g_files[i]);
}

int main(int argc, char **argv) {
  long lines = 5000000;
  int runs = 3;
  const char *ext = ".libs/dyng.so";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--lines") && i + 1 < argc) lines = atol(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else die("usage: bench_read [--lines N] [--runs R] [--extension PATH]");
  }
  if (lines < 1 || runs < 1) die("usage: bench_read [--lines N] [--runs R] [--extension PATH]");
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  static const char *names[4] = {"edges.txt", "edges.txt.gz", "edges.gr", "edges.csv"};
  for (int i = 0; i < 4; i++) snprintf(g_files[i], sizeof g_files[i], "%s/bench_read-%d-%s", tmp, (int)getpid(), names[i]);
  atexit(remove_files);
  FILE *f[3] = {fopen(g_files[0], "w"), fopen(g_files[2], "w"), fopen(g_files[3], "w")};
  if (!f[0] || !f[1] || !f[2]) die("cannot write the files in %s", tmp);
  fprintf(f[1], "c random\np sp %d %ld\n", 1 << 24, lines);
  fprintf(f[2], "src,dst,weight\n");
  uint64_t rng = 7;
  for (long i = 0; i < lines; i++) {
    unsigned u = (unsigned)(splitmix64(&rng) & 0xffffff), v = (unsigned)(splitmix64(&rng) & 0xffffff);
    unsigned w = (unsigned)(splitmix64(&rng) % 100000);
    fprintf(f[0], "%u %u %u.%03u\n", u, v, w / 1000, w % 1000);
    fprintf(f[1], "a %u %u %u.%03u\n", u, v, w / 1000, w % 1000);
    fprintf(f[2], "%u,%u,%u.%03u\n", u, v, w / 1000, w % 1000);
  }
  for (int i = 0; i < 3; i++) fclose(f[i]);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s'", g_files[0], g_files[1]);
  if (system(cmd) != 0) die("gzip failed");

  sqlite3 *db = open_with_extension(":memory:", ext);
  report r;
  report_init(&r, "random edges");
  sqlite3_stmt *st = prepare(db, "SELECT count(*), sum(src), sum(dst), sum(weight) FROM dyng_read_edges(?)");
  double want[4] = {0, 0, 0, 0};
  static const char *labels[4] = {"snap", "snap_gz", "dimacs", "csv"};
  double *x = xmalloc(sizeof(double) * (size_t)runs);
  printf("# bench_read: %ld lines per file\n", lines);
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < runs; i++) {
      sqlite3_bind_text(st, 1, g_files[k], -1, SQLITE_STATIC);
      double t0 = now_s();
      if (sqlite3_step(st) != SQLITE_ROW) die("%s: %s", g_files[k], sqlite3_errmsg(db));
      x[i] = now_s() - t0;
      double got[4] = {sqlite3_column_double(st, 0), sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
                       sqlite3_column_double(st, 3)};
      sqlite3_reset(st);
      if (k == 0 && i == 0) memcpy(want, got, sizeof want);
      if (got[0] != lines || got[1] != want[1] || got[2] != want[2] || fabs(got[3] - want[3]) > 1e-6 * want[3])
        die("%s gives other edges than %s", g_files[k], g_files[0]);
    }
    char name[64], ratio[64];
    snprintf(name, sizeof name, "read_%s", labels[k]);
    double med = median_of(x, runs);
    snprintf(ratio, sizeof ratio, "%.2f M lines/s", lines / med / 1e6);
    report_add(&r, name, "ms", 1e3, x, runs, ratio);
    snprintf(name, sizeof name, "lines_per_s_%s", labels[k]);
    report_ratio(&r, name, lines / med);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(x);
  printf("\n| %s | median | min | max | n | rate |\n| --- | ---: | ---: | ---: | ---: | --- |\n", r.db);
  report_print_rows(&r);
  printf("\n");
  report_print_lines(&r);
  return 0;
}
