/*
** tests/fuzz/fuzz_read_edges.c: dyng_read_edges' parsers.  The first byte
** picks the format (snap, dimacs, mtx, csv, tsv, and each of them
** gzip-compressed by the harness when zlib is there); the rest is the file.
*/
#include "config.h"
#include "fuzz_util.h"

#include <stdio.h>
#include <unistd.h>
#ifdef DYNG_HAVE_ZLIB
#include <zlib.h>
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const char *const suffix[] = {".txt", ".gr", ".mtx", ".csv", ".tsv"};
  int f = data[0] % 5, gz = (data[0] >> 4) & 1;
  char path[128];
  snprintf(path, sizeof path, "/tmp/dyng-fuzz-%d%s%s", (int)getpid(), suffix[f], gz ? ".gz" : "");
#ifdef DYNG_HAVE_ZLIB
  if (gz) {
    gzFile z = gzopen(path, "wb");
    if (!z) return 0;
    if (size > 1) gzwrite(z, data + 1, (unsigned)(size - 1));
    gzclose(z);
  } else
#endif
  {
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    fwrite(data + 1, 1, size - 1, fp);
    fclose(fp);
  }
  sqlite3 *db = fuzz_open();
  char *sql = sqlite3_mprintf("SELECT count(*), sum(src), sum(dst), sum(weight), max(line) FROM dyng_read_edges(%Q)",
                              path);
  fuzz_exec(db, sql);
  sqlite3_free(sql);
  sqlite3_close(db);
  unlink(path);
  return 0;
}
