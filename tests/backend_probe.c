/*
** tests/backend_probe.c: one process of the backend-discovery tests.
**
**   backend_probe SQL...
**
** Opens an in-memory database, loads dyng.so ($DYNG_EXTENSION) and runs each
** SQL argument, printing every result row on its own line (columns joined
** by '|', NULL as an empty string) and a failing statement as
** "ERROR: <message>".  Every sqlite3_log message goes to stderr as
** "LOG <code>: <message>".  Discovery is once per process, so each scenario
** of tests/test_backends.c runs one of these with its own environment.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void log_to_stderr(void *ctx, int code, const char *msg) {
  (void)ctx;
  fprintf(stderr, "LOG %d: %s\n", code, msg);
}

int main(int argc, char **argv) {
  sqlite3_config(SQLITE_CONFIG_LOG, log_to_stderr, NULL);
  const char *ext = getenv("DYNG_EXTENSION");
  sqlite3 *db = NULL;
  if (!ext || sqlite3_open(":memory:", &db) != SQLITE_OK) return 2;
  sqlite3_enable_load_extension(db, 1);
  char *err = NULL;
  if (sqlite3_load_extension(db, ext, "sqlite3_dyng_init", &err) != SQLITE_OK) {
    printf("ERROR: %s\n", err ? err : "cannot load dyng");
    sqlite3_free(err);
    sqlite3_close(db);
    return 3;
  }
  for (int i = 1; i < argc; i++) {
    sqlite3_stmt *stmt = NULL;
    const char *tail = argv[i];
    while (tail && *tail) {
      if (sqlite3_prepare_v2(db, tail, -1, &stmt, &tail) != SQLITE_OK) {
        printf("ERROR: %s\n", sqlite3_errmsg(db));
        break;
      }
      if (!stmt) break;
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(stmt); c++) {
          const unsigned char *t = sqlite3_column_text(stmt, c);
          printf("%s%s", c ? "|" : "", t ? (const char *)t : "");
        }
        printf("\n");
      }
      if (rc != SQLITE_DONE) printf("ERROR: %s\n", sqlite3_errmsg(db));
      sqlite3_finalize(stmt);
      stmt = NULL;
    }
  }
  sqlite3_close(db);
  return 0;
}
