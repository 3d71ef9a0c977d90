/*
** tests/sql_util.h: what the SQL-level test programs share: a connection
** with dyng.so loaded (its path in $DYNG_EXTENSION) or one that never loads
** it, statements that must succeed or fail with given message fragments,
** one-value queries and temporary database files.  Include after
** tests/test_util.h (cmocka).
*/
#ifndef DYNG_SQL_UTIL_H
#define DYNG_SQL_UTIL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* Loads dyng into db. */
static inline void sql_load(sqlite3 *db) {
  char *zErr = NULL;
  const char *zExt = getenv("DYNG_EXTENSION");
  assert_non_null(zExt);
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, zExt, "sqlite3_dyng_init", &zErr) != SQLITE_OK)
    fail_msg("cannot load %s: %s", zExt, zErr ? zErr : "?");
  sqlite3_free(zErr);
}

/* A connection to zPath with dyng loaded. */
static inline sqlite3 *sql_open(const char *zPath) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(zPath, &db), SQLITE_OK);
  sql_load(db);
  return db;
}

/* A connection to zPath that never loads dyng, as another program would
** open the file. */
static inline sqlite3 *sql_open_plain(const char *zPath) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(zPath, &db), SQLITE_OK);
  return db;
}

static inline void sql_ok(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK)
    fail_msg("SQL failed: %s\n  in: %s", zErr ? zErr : "?", zSql);
}

/* sql_ok of SQL made by sqlite3_mprintf, freeing it. */
static inline void sql_ok_free(sqlite3 *db, char *zSql) {
  sql_ok(db, zSql);
  sqlite3_free(zSql);
}

/* The error message zSql fails with (from sqlite3_mprintf); the test fails
** when it succeeds. */
static inline char *sql_error(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) == SQLITE_OK)
    fail_msg("SQL succeeded but should fail: %s", zSql);
  return zErr ? zErr : sqlite3_mprintf("");
}

/* Runs zSql expecting an error whose message contains every one of the
** NULL-terminated fragments. */
static inline void sql_fails(sqlite3 *db, const char *zSql, ...) {
  char *zErr = sql_error(db, zSql);
  va_list ap;
  va_start(ap, zSql);
  for (const char *z = va_arg(ap, const char *); z; z = va_arg(ap, const char *))
    if (!strstr(zErr, z)) fail_msg("error '%s' lacks '%s'\n  in: %s", zErr, z, zSql);
  va_end(ap);
  sqlite3_free(zErr);
}

static inline sqlite3_int64 sql_int(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
  if (sqlite3_step(p) != SQLITE_ROW) fail_msg("no row (%s)\n  in: %s", sqlite3_errmsg(db), zSql);
  sqlite3_int64 v = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  return v;
}

/* sql_int of SQL made by sqlite3_mprintf, freeing it. */
static inline sqlite3_int64 sql_int_free(sqlite3 *db, char *zSql) {
  sqlite3_int64 v = sql_int(db, zSql);
  sqlite3_free(zSql);
  return v;
}

/* The first value of zSql as text, from sqlite3_mprintf ("" for NULL). */
static inline char *sql_text(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
    fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(db), zSql);
  if (sqlite3_step(p) != SQLITE_ROW) fail_msg("no row (%s)\n  in: %s", sqlite3_errmsg(db), zSql);
  const char *z = (const char *)sqlite3_column_text(p, 0);
  char *zOut = sqlite3_mprintf("%s", z ? z : "");
  sqlite3_finalize(p);
  return zOut;
}

/* sql_text of SQL made by sqlite3_mprintf, freeing it. */
static inline char *sql_text_free(sqlite3 *db, char *zSql) {
  char *z = sql_text(db, zSql);
  sqlite3_free(zSql);
  return z;
}

/* Makes zTemplate ("/tmp/...-XXXXXX") the name of a new empty file. */
static inline void sql_temp_file(char *zTemplate) {
  int fd = mkstemp(zTemplate);
  assert_true(fd >= 0);
  close(fd);
}

/* Removes database file zPath and what SQLite keeps beside it. */
static inline void sql_remove_db(const char *zPath) {
  char z[512];
  unlink(zPath);
  snprintf(z, sizeof z, "%s-wal", zPath);
  unlink(z);
  snprintf(z, sizeof z, "%s-shm", zPath);
  unlink(z);
  snprintf(z, sizeof z, "%s-journal", zPath);
  unlink(z);
}

#endif /* DYNG_SQL_UTIL_H */
