/*
** tests/fuzz/fuzz_create.c: the option parser of CREATE VIRTUAL TABLE
** ... USING dyng(...), and what a graph so created then does.  The input is
** the text inside the parentheses; a few edges exist in tables e and "x y".
*/
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 2000) return 0;
  sqlite3 *db = fuzz_open();
  fuzz_exec(db, "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, \"odd name\" REAL);"
                "INSERT INTO e VALUES (1,2,1,2),(2,3,2,1),(3,1,0.5,4),(1,1,0,0);"
                "CREATE TABLE \"x y\"(a, b);  INSERT INTO \"x y\" VALUES (1, 2);");
  char *opts = malloc(size + 1);
  memcpy(opts, data, size);
  opts[size] = 0;
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE g USING dyng(%s)", opts);
  free(opts);
  if (sql) {
    fuzz_exec(db, sql);
    fuzz_exec(db, "SELECT * FROM g; SELECT * FROM dyng_sssp('g', 1); SELECT * FROM dyng_path('g', 1, 3);"
                  "INSERT INTO e VALUES (3, 4, 1, 1); DELETE FROM e WHERE src = 1;"
                  "SELECT dyng_cycle_count('g', 3); SELECT dyng_update('g'); SELECT dyng_config();"
                  "SELECT * FROM dyng_mosp('g', 2, 3); DROP TABLE g;");
  }
  sqlite3_free(sql);
  sqlite3_close(db);
  return 0;
}
