/*
** tests/fuzz/fuzz_functions.c: the argument handling of every SQL function
** and table-valued function of dyng.  The input picks a function and its
** arguments (NULL, integers at the edges of int64, reals including NaN and
** infinities, texts, blobs) and runs it against a small graph.
*/
#include "fuzz_util.h"

#include <math.h>

static const char *const calls[] = {
    "SELECT * FROM dyng_sssp(?1, ?2, ?3)",         "SELECT * FROM dyng_sssp(?1, ?2) WHERE node = ?3",
    "SELECT * FROM dyng_path(?1, ?2, ?3, ?4)",     "SELECT * FROM dyng_mosp(?1, ?2, ?3)",
    "SELECT * FROM dyng_pareto(?1, ?2, ?3, ?4)",   "SELECT dyng_cycle_count(?1, ?2)",
    "SELECT dyng_cycle_count(?1, ?2, ?3)",         "SELECT dyng_update(?1)",
    "SELECT dyng_update(?1, ?2)",                  "SELECT dyng_config(?1)",
    "SELECT dyng_config(?1, ?2)",                  "SELECT * FROM g WHERE node = ?1",
    "SELECT * FROM dyng_read_edges(?1, ?2)",       "SELECT dyng_version()",
    "INSERT INTO e VALUES (?1, ?2, ?3, ?4)",       "UPDATE e SET w = ?2 WHERE src = ?1",
};

static void bind(sqlite3_stmt *st, int i, const uint8_t **p, const uint8_t *end) {
  if (*p >= end) return;
  uint8_t kind = *(*p)++;
  static const int64_t ints[] = {0, 1, 2, 3, -1, INT64_MIN, INT64_MAX, 4294967295LL, 4294967296LL, 11};
  static const char *const texts[] = {"g", "main.g", "temp.g", "nope", "", "w", "v", "directed", "reload",
                                      "cache_mb", "backend", "progress", "threads", "cpu", "cuda", "0", "1e400",
                                      "max_ms", "max_graph_mb"};
  switch (kind % 7) {
  case 0: sqlite3_bind_null(st, i); break;
  case 1: sqlite3_bind_int64(st, i, ints[(kind >> 3) % 10]); break;
  case 2: {
    double d[] = {NAN, INFINITY, -INFINITY, -0.0, 0.5, 1e308, -1, 3};
    sqlite3_bind_double(st, i, d[(kind >> 3) % 8]);
    break;
  }
  case 3: sqlite3_bind_text(st, i, texts[(kind >> 3) % (sizeof texts / sizeof *texts)], -1, SQLITE_STATIC); break;
  case 4: {
    size_t n = (size_t)(end - *p) < 12 ? (size_t)(end - *p) : 12;
    sqlite3_bind_text(st, i, (const char *)*p, (int)n, SQLITE_TRANSIENT);
    *p += n;
    break;
  }
  case 5: {
    size_t n = (size_t)(end - *p) < 8 ? (size_t)(end - *p) : 8;
    sqlite3_bind_blob(st, i, *p, (int)n, SQLITE_TRANSIENT);
    *p += n;
    break;
  }
  default: sqlite3_bind_int64(st, i, (int64_t)(kind >> 3) - 8); break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sqlite3 *db = fuzz_open();
  fuzz_exec(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, v REAL);"
                "INSERT INTO e VALUES (1,2,1,2),(2,3,2,1),(3,1,0.5,4),(1,3,3,0),(4,5,1,1);"
                "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,v');"
                "SELECT dyng_config('cache_mb', 1)");
  const uint8_t *p = data, *end = data + size;
  int steps = 0;
  while (p < end && steps++ < 16) {
    const char *sql = calls[*p++ % (sizeof calls / sizeof *calls)];
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) continue;
    for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) bind(st, i, &p, end);
    for (int rows = 0; rows < 1000 && sqlite3_step(st) == SQLITE_ROW; rows++) {
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return 0;
}
