/*
** bench/gen_graph.c: writes benchmark graphs straight into an SQLite file.
**
**   gen_graph grid ROWS COLS OUT.db [SEED]
**   gen_graph rmat SCALE OUT.db [SEED]
**
** Both write one table (replacing it if it exists):
**
**   CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL,
**                      length REAL, minutes REAL, toll REAL);
**
** which a graph is then made from with
**
**   CREATE VIRTUAL TABLE g USING dyng(edges=edges, src=src, dst=dst,
**                                     weights='length,minutes,toll', directed=1);
**
** grid: a road-like ROWS x COLS grid.  Node r*COLS+c; every pair of right /
**   down neighbours is joined in both directions (2 * (2*R*C - R - C)
**   edges, 3,996,000 for 1000x1000), written row by row.  length is uniform
**   in [1, 10); minutes = length * a road-class factor (0.6, 1.0 or 1.6,
**   chosen per edge) * noise in [0.9, 1.1), so it is correlated with length
**   but not proportional; toll is independent: 0 for 90% of edges, else
**   uniform in [0.5, 5).  Then R*C/1000 shortcuts ("highways", both
**   directions) join random node pairs: length = their grid distance * 5.5
**   (the mean weight) * uniform [0.4, 0.8), minutes = length * 0.5, toll
**   uniform in [1, 10), so they are long, fast and paid.
** rmat: 2^SCALE vertices and 8 * 2^SCALE directed edges drawn with the
**   R-MAT recursion (a = .57, b = .19, c = .19, d = .05, as in Graph500),
**   without noise; vertex labels are then shuffled by a random permutation
**   so that ids carry no locality.  Self-loops and duplicate edges are kept
**   (the graph keeps parallel edges).  length is uniform in [1, 100),
**   minutes = length * uniform [0.5, 2), toll as for the grid.
**
** How it works: one transaction, one prepared INSERT, journal_mode=OFF and
** synchronous=OFF while writing.  Everything comes from one splitmix64
** stream seeded by SEED (default 1), so a seed always gives the same file.
*/
#include <sqlite3.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- deterministic random numbers ------------------------------------- */

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t rng_next(rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static double rng_range(rng *r, double lo, double hi) {
  return lo + (hi - lo) * rng_unit(r);
}

/* Uniform in [0, n), n > 0 (multiply-shift; bias below 2^-32 for our n). */
static uint64_t rng_below(rng *r, uint64_t n) {
  return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* ---- writing ---------------------------------------------------------- */

typedef struct writer {
  sqlite3 *db;
  sqlite3_stmt *ins;
  long long n;  /* rows written */
} writer;

static void die_db(sqlite3 *db, const char *what) {
  fprintf(stderr, "gen_graph: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
  exit(1);
}

static void exec_or_die(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "gen_graph: %s: %s\n", sql, err ? err : "?");
    exit(1);
  }
}

/* Opens (creating) the file, replaces the edges table and starts the one
** transaction every row goes into. */
static void writer_open(writer *w, const char *path) {
  memset(w, 0, sizeof *w);
  if (sqlite3_open(path, &w->db) != SQLITE_OK) die_db(w->db, path);
  exec_or_die(w->db, "PRAGMA journal_mode=OFF");
  exec_or_die(w->db, "PRAGMA synchronous=OFF");
  exec_or_die(w->db, "PRAGMA cache_size=-262144"); /* 256 MiB while writing */
  exec_or_die(w->db, "BEGIN");
  exec_or_die(w->db, "DROP TABLE IF EXISTS edges");
  exec_or_die(w->db,
              "CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL, "
              "length REAL, minutes REAL, toll REAL)");
  if (sqlite3_prepare_v2(w->db, "INSERT INTO edges VALUES (?1, ?2, ?3, ?4, ?5)", -1,
                         &w->ins, NULL) != SQLITE_OK)
    die_db(w->db, "prepare insert");
}

static void writer_add(writer *w, int64_t src, int64_t dst, double length,
                       double minutes, double toll) {
  sqlite3_bind_int64(w->ins, 1, src);
  sqlite3_bind_int64(w->ins, 2, dst);
  sqlite3_bind_double(w->ins, 3, length);
  sqlite3_bind_double(w->ins, 4, minutes);
  sqlite3_bind_double(w->ins, 5, toll);
  if (sqlite3_step(w->ins) != SQLITE_DONE) die_db(w->db, "insert");
  sqlite3_reset(w->ins);
  w->n++;
}

static void writer_close(writer *w) {
  sqlite3_finalize(w->ins);
  exec_or_die(w->db, "COMMIT");
  if (sqlite3_close(w->db) != SQLITE_OK) die_db(w->db, "close");
}

/* ---- graphs ----------------------------------------------------------- */

/* Toll of an ordinary road: independent of its length and time. */
static double road_toll(rng *r) {
  return rng_unit(r) < 0.9 ? 0.0 : rng_range(r, 0.5, 5.0);
}

/* One ordinary grid road in both directions; each direction gets its own
** weights (traffic differs by direction). */
static void grid_road(writer *w, rng *r, int64_t a, int64_t b) {
  static const double klass[3] = {0.6, 1.0, 1.6};
  for (int dir = 0; dir < 2; dir++) {
    double length = rng_range(r, 1.0, 10.0);
    double minutes = length * klass[rng_below(r, 3)] * rng_range(r, 0.9, 1.1);
    double toll = road_toll(r);
    if (dir == 0)
      writer_add(w, a, b, length, minutes, toll);
    else
      writer_add(w, b, a, length, minutes, toll);
  }
}

static void gen_grid(writer *w, rng *r, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t v = i * cols + j;
      if (j + 1 < cols) grid_road(w, r, v, v + 1);
      if (i + 1 < rows) grid_road(w, r, v, v + cols);
    }
  int64_t n_short = rows * cols / 1000;
  for (int64_t s = 0; s < n_short; s++) {
    int64_t a = (int64_t)rng_below(r, (uint64_t)(rows * cols));
    int64_t b = (int64_t)rng_below(r, (uint64_t)(rows * cols));
    if (a == b) continue;
    int64_t dr = a / cols - b / cols, dc = a % cols - b % cols;
    double manhattan = (double)((dr < 0 ? -dr : dr) + (dc < 0 ? -dc : dc));
    double length = manhattan * 5.5 * rng_range(r, 0.4, 0.8);
    double minutes = length * 0.5;
    writer_add(w, a, b, length, minutes, rng_range(r, 1.0, 10.0));
    writer_add(w, b, a, length, minutes, rng_range(r, 1.0, 10.0));
  }
}

static void gen_rmat(writer *w, rng *r, int scale) {
  const double a = 0.57, b = 0.19, c = 0.19; /* d = 0.05 */
  uint64_t n = 1ULL << scale, m = 8 * n;
  /* A random permutation of the labels (Fisher-Yates). */
  int64_t *label = malloc(n * sizeof *label);
  if (!label) {
    fprintf(stderr, "gen_graph: out of memory\n");
    exit(1);
  }
  for (uint64_t i = 0; i < n; i++) label[i] = (int64_t)i;
  for (uint64_t i = n - 1; i > 0; i--) {
    uint64_t j = rng_below(r, i + 1);
    int64_t t = label[i];
    label[i] = label[j];
    label[j] = t;
  }
  for (uint64_t e = 0; e < m; e++) {
    uint64_t u = 0, v = 0;
    for (int bit = 0; bit < scale; bit++) {
      double p = rng_unit(r);
      if (p < a) {
      } else if (p < a + b) {
        v |= 1ULL << bit;
      } else if (p < a + b + c) {
        u |= 1ULL << bit;
      } else {
        u |= 1ULL << bit;
        v |= 1ULL << bit;
      }
    }
    double length = rng_range(r, 1.0, 100.0);
    double minutes = length * rng_range(r, 0.5, 2.0);
    writer_add(w, label[u], label[v], length, minutes, road_toll(r));
  }
  free(label);
}

/* ---- main ------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: gen_graph grid ROWS COLS OUT.db [SEED]\n"
          "       gen_graph rmat SCALE OUT.db [SEED]\n");
  exit(2);
}

static long long parse_int(const char *s, long long lo, long long hi, const char *what) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end || end == s || x < lo || x > hi) {
    fprintf(stderr, "gen_graph: %s must be an integer in [%lld, %lld], not '%s'\n",
            what, lo, hi, s);
    exit(2);
  }
  return x;
}

int main(int argc, char **argv) {
  writer w;
  rng r;
  if (argc < 2) usage();
  if (strcmp(argv[1], "grid") == 0) {
    if (argc != 5 && argc != 6) usage();
    long long rows = parse_int(argv[2], 1, 1 << 20, "ROWS");
    long long cols = parse_int(argv[3], 1, 1 << 20, "COLS");
    if (rows * cols > (1LL << 30)) {
      fprintf(stderr, "gen_graph: grid too large\n");
      return 2;
    }
    r.state = argc == 6 ? (uint64_t)parse_int(argv[5], 0, INT64_MAX, "SEED") : 1;
    writer_open(&w, argv[4]);
    gen_grid(&w, &r, rows, cols);
    writer_close(&w);
    printf("%s: grid %lldx%lld, %lld nodes, %lld edges\n", argv[4], rows, cols,
           rows * cols, w.n);
  } else if (strcmp(argv[1], "rmat") == 0) {
    if (argc != 4 && argc != 5) usage();
    int scale = (int)parse_int(argv[2], 1, 26, "SCALE");
    r.state = argc == 5 ? (uint64_t)parse_int(argv[4], 0, INT64_MAX, "SEED") : 1;
    writer_open(&w, argv[3]);
    gen_rmat(&w, &r, scale);
    writer_close(&w);
    printf("%s: rmat scale %d, %lld node ids, %lld edges\n", argv[3], scale,
           1LL << scale, w.n);
  } else {
    usage();
  }
  return 0;
}
