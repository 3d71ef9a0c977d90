/*
** bench/bench_busy.c: what dyng's threads cost and give on an idle and on
** a busy machine, through SQL, in one run.
**
**   bench_busy DB.db [--runs N] [--busy B] [--extension PATH]
**
** DB.db holds edges(src, dst, length, ...) (bench/gen_graph).  Four
** conditions, each in a child process of this program (dyng reads its
** thread settings once per process): the machine idle or with B busy
** processes (a spinning loop each; default: one per online CPU), and dyng
** on one thread (DYNG_THREADS=1 and OMP_NUM_THREADS=1, so that a build on
** OpenMP is measured alike) or on its default threads (both unset).  Each
** child copies the database, and times, N times over:
**
**   load     CREATE VIRTUAL TABLE and the first query's load of the graph
**            (weights `length`, undirected; the load's helper thread and
**            the seal's team)
**   tree     SELECT count(*) FROM dyng_sssp(g, s), a random new source (the
**            tree cache off): the parallel search at 100,000 nodes or more
**   matrix   a 16 x 16 dyng_matrix on the host (one source per thread)
**   cycles   dyng_cycle_count(g, 4) from scratch (the count's team)
**
** Output: a Markdown table of the medians per condition and the ratios
** busy_default_over_one (goal: at most 1.1: threads never cost more than
** they give) and idle_speedup (one thread over default, idle), per figure,
** as BENCH lines.
*/
#include "bench/bench_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char bench_program[] = "bench_busy";

enum { FIG_LOAD, FIG_TREE, FIG_MATRIX, FIG_CYCLES, N_FIG };
static const char *const fig_name[N_FIG] = {"load", "tree", "matrix", "cycles"};

/* One condition's figures, medians in ms, printed as one RESULT line. */
static int child(const char *path, const char *ext, int runs) {
  const char *scratch = scratch_name();
  double *x[N_FIG];
  for (int f = 0; f < N_FIG; f++) x[f] = xmalloc(sizeof(double) * runs);
  uint64_t seed = 777;
  char sql[512];
  for (int run = 0; run < runs; run++) {
    copy_file(path, scratch);
    sqlite3 *db = open_with_extension(scratch, ext);
    sql_exec(db, "SELECT dyng_config('backend', 'cpu')");
    sql_exec(db, "SELECT dyng_config('cache_mb', 0)");
    double t0 = now_s();
    sql_exec(db, "CREATE VIRTUAL TABLE g USING dyng(edges=edges, weights='length', directed=0)");
    (void)sql_number(db, "SELECT count(*) FROM g");
    x[FIG_LOAD][run] = now_s() - t0;
    double max_node = sql_number(db, "SELECT max(node) FROM g");
    double s = (double)(splitmix64(&seed) % (uint64_t)(max_node + 1));
    snprintf(sql, sizeof sql, "SELECT count(*) FROM dyng_sssp('g', (SELECT min(node) FROM g WHERE node >= %.0f))",
             s);
    x[FIG_TREE][run] = time_query(db, sql, NULL);
    /* 16 random sources and 16 random targets, drawn untimed. */
    char *src = sql_text(db, "SELECT json_group_array(node) FROM (SELECT node FROM g ORDER BY random() LIMIT 16)");
    char *dst = sql_text(db, "SELECT json_group_array(node) FROM (SELECT node FROM g ORDER BY random() LIMIT 16)");
    char *q = sqlite3_mprintf("SELECT count(*) FROM dyng_matrix('g', %Q, %Q)", src, dst);
    x[FIG_MATRIX][run] = time_query(db, q, NULL);
    sqlite3_free(q);
    free(src);
    free(dst);
    x[FIG_CYCLES][run] = time_query(db, "SELECT dyng_cycle_count('g', 4)", NULL);
    sqlite3_close(db);
  }
  printf("RESULT");
  for (int f = 0; f < N_FIG; f++) printf(" %s=%.6f", fig_name[f], median_of(x[f], runs) * 1e3);
  printf("\n");
  for (int f = 0; f < N_FIG; f++) free(x[f]);
  return 0;
}

/* Runs this program as a child for one condition; its medians into ms[]. */
static void run_condition(const char *self, const char *path, const char *ext, int runs, int one_thread,
                          int busy, double *ms) {
  pid_t spin[512];
  for (int i = 0; i < busy; i++) {
    spin[i] = fork();
    if (spin[i] < 0) die("fork failed");
    if (spin[i] == 0)
      for (volatile uint64_t k = 0;; k++) {
      }
  }
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s '%s' '%s' --child --runs %d --extension '%s'",
           one_thread ? "DYNG_THREADS=1 OMP_NUM_THREADS=1" : "env -u DYNG_THREADS -u OMP_NUM_THREADS", self, path,
           runs, ext);
  FILE *f = popen(cmd, "r");
  if (!f) die("cannot run %s", cmd);
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "RESULT", 6)) continue;
    found = 1;
    for (int k = 0; k < N_FIG; k++) {
      char key[32];
      snprintf(key, sizeof key, " %s=", fig_name[k]);
      const char *at = strstr(line, key);
      ms[k] = at ? atof(at + strlen(key)) : -1;
    }
  }
  int st = pclose(f);
  for (int i = 0; i < busy; i++) kill(spin[i], SIGKILL);
  for (int i = 0; i < busy; i++) waitpid(spin[i], NULL, 0);
  if (st != 0 || !found) die("the child (%s) failed", cmd);
}

int main(int argc, char **argv) {
  const char *path = NULL, *ext = "./dyng.so";
  int runs = 7, is_child = 0;
  long busy = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--busy") && i + 1 < argc) busy = atol(argv[++i]);
    else if (!strcmp(argv[i], "--extension") && i + 1 < argc) ext = argv[++i];
    else if (!strcmp(argv[i], "--child")) is_child = 1;
    else if (!path) path = argv[i];
    else die("usage: bench_busy DB.db [--runs N] [--busy B] [--extension PATH]");
  }
  if (!path || runs < 1 || busy < 0 || busy > 512) die("usage: bench_busy DB.db [--runs N] [--busy B] [--extension PATH]");
  if (is_child) return child(path, ext, runs);
  char self[1024];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("cannot read /proc/self/exe");
  self[n] = 0;
  /* [idle, busy][one, default] */
  double ms[2][2][N_FIG];
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) run_condition(self, path, ext, runs, !d, b ? (int)busy : 0, ms[b][d]);
  printf("%s: %d runs a condition, %ld busy processes, %ld online CPUs\n\n", path, runs, busy,
         sysconf(_SC_NPROCESSORS_ONLN));
  printf("| figure (ms, medians) | idle, 1 thread | idle, default | busy, 1 thread | busy, default | busy default / 1 | idle speedup |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int f = 0; f < N_FIG; f++)
    printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2fx |\n", fig_name[f], ms[0][0][f], ms[0][1][f], ms[1][0][f],
           ms[1][1][f], ms[1][1][f] / ms[1][0][f], ms[0][0][f] / ms[0][1][f]);
  printf("\n");
  for (int f = 0; f < N_FIG; f++) {
    printf("BENCH db=%s metric=%s_busy_default_over_one ratio=%.4f\n", path, fig_name[f], ms[1][1][f] / ms[1][0][f]);
    printf("BENCH db=%s metric=%s_idle_speedup ratio=%.4f\n", path, fig_name[f], ms[0][0][f] / ms[0][1][f]);
  }
  return 0;
}
