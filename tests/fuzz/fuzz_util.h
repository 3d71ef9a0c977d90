/*
** tests/fuzz/fuzz_util.h: what the SQL-level fuzz harnesses share: a
** connection with dyng compiled in (the extension's sources are built into
** the fuzzer with SQLITE_CORE, so libFuzzer sees their coverage) and a way
** to run SQL whose failure is fine but whose crash, leak or undefined
** behaviour is not.
*/
#ifndef DYNG_FUZZ_UTIL_H
#define DYNG_FUZZ_UTIL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_dyng_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

/* A fresh in-memory connection with dyng registered. */
static sqlite3 *fuzz_open(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) abort();
  char *err = NULL;
  if (sqlite3_dyng_init(db, &err, NULL) != SQLITE_OK) abort();
  /* Long computations end: a fuzz input must not hang the run. */
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  return db;
}

/* Runs sql; errors are expected and ignored. */
static void fuzz_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  sqlite3_exec(db, sql, NULL, NULL, &err);
  sqlite3_free(err);
}

#endif
