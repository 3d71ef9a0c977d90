/*
** ext/read_edges.c: dyng_read_edges(path[, format]), the edges of a file.
**
**   INSERT INTO roads(src, dst, length)
**     SELECT src, dst, weight FROM dyng_read_edges('USA-road-d.NY.gr.gz');
**
** A table-valued function with the columns src, dst, weight (NULL when the
** file has none) and line (1-based, in the file).  Formats, from the name's
** suffix (after a .gz) unless `format` says:
**
**   snap    (.txt, .edges, anything else) "u v [w]" per line, whitespace
**           between fields, '#' and '%' lines and empty lines skipped
**   dimacs  (.gr) "c ..." comments, one "p sp N M", then "a u v w" arcs
**   mtx     (.mtx) MatrixMarket coordinate: "%%MatrixMarket matrix
**           coordinate real|integer|pattern general|symmetric", '%'
**           comments, the size line "rows columns entries", then
**           "i j [v]", exactly `entries` of them, 1 <= i <= rows and
**           1 <= j <= columns; a symmetric file gives each off-diagonal
**           entry both ways (both rows carry its line)
**   csv/tsv (.csv, .tsv) a header, then one edge per row; the columns named
**           src/source/from, dst/target/to and weight/w/cost/length (any
**           case) are used, else the first three
**
** gzip-compressed files are read transparently (zlib).  A malformed line
** (a field more than the format has included) is an error naming the file,
** the line and what was expected; so is a weight that is not a decimal
** number or whose magnitude is above 1e298 (DYNG_MAX_WEIGHT, the largest a
** graph takes; a negative weight is returned, for SQL to transform), and a
** MatrixMarket entry that its size line does not allow (an index out of
** range, an entry more, or fewer entries than it says).  A
** path left out is an error naming it.  The function reads files, so it is
** SQLITE_DIRECTONLY: a trigger, view or schema of a database someone else
** wrote cannot call it.
*/
#include "ext/dyng_ext.h"

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DYNG_HAVE_ZLIB
#include <zlib.h>
#endif

SQLITE_EXTENSION_INIT3

enum { FMT_SNAP, FMT_DIMACS, FMT_MTX, FMT_CSV, FMT_TSV };
static const char *const azFormat[] = {"snap", "dimacs", "mtx", "csv", "tsv"};

enum { COL_SRC, COL_DST, COL_WEIGHT, COL_LINE, COL_PATH, COL_FORMAT };

#define READ_CHUNK (1 << 20)

/* A file read line by line, through zlib when there is one. */
typedef struct DyngReader {
#ifdef DYNG_HAVE_ZLIB
  gzFile gz;
#else
  FILE *f;
#endif
  char *buf;
  size_t len, pos; /* bytes in buf, and where the next line starts */
  int eof;
  sqlite3_int64 line; /* number of the line last returned */
} DyngReader;

typedef struct DyngReadCursor {
  sqlite3_vtab_cursor base;
  DyngReader r;
  char *zPath;
  int fmt;
  int bEof;
  sqlite3_int64 iRowid;
  /* The current edge. */
  sqlite3_int64 src, dst, lineNo;
  double w;
  int bWeight;
  /* MatrixMarket: the header seen, symmetric, pattern; a mirrored entry due. */
  int bHeader, bSymmetric, bPattern, bMirror;
  /* MatrixMarket: the size line (its line, rows, columns, entries) and the
  ** entries read so far. */
  sqlite3_int64 iSizeLine, nRows, nCols, nEntries, nSeen;
  /* CSV/TSV: the header seen, its number of fields and the columns used. */
  int nCol, iSrc, iDst, iW;
} DyngReadCursor;

static int dyngReadConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv, sqlite3_vtab **ppVtab,
                           char **pzErr) {
  (void)pAux, (void)argc, (void)argv, (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(src INTEGER, dst INTEGER, weight REAL, line INTEGER, "
                                    "path HIDDEN, format HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  /* It reads files: never from a trigger, a view or a schema. */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  sqlite3_vtab *p = sqlite3_malloc(sizeof *p);
  if (!p) return SQLITE_NOMEM;
  memset(p, 0, sizeof *p);
  *ppVtab = p;
  return SQLITE_OK;
}

static int dyngReadDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

/*
** Plans.  idxNum bits: 1 the path is argument 1, 2 the format is the next
** one.  An argument constrained but not usable in this plan makes the plan
** impossible (SQLITE_CONSTRAINT), so that SQLite picks an order that
** supplies it; a path missing altogether is reported by xFilter, naming
** it, instead of SQLite's "no query solution".
*/
static int dyngReadBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  (void)pVtab;
  int iPath = -1, iFormat = -1;
  for (int i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if (c->iColumn != COL_PATH && c->iColumn != COL_FORMAT) continue;
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ) return SQLITE_CONSTRAINT;
    if (c->iColumn == COL_PATH) iPath = i;
    else iFormat = i;
  }
  int iArg = 0;
  pInfo->idxNum = 0;
  if (iPath >= 0) {
    pInfo->aConstraintUsage[iPath].argvIndex = ++iArg;
    pInfo->aConstraintUsage[iPath].omit = 1;
    pInfo->idxNum |= 1;
  }
  if (iFormat >= 0) {
    pInfo->aConstraintUsage[iFormat].argvIndex = ++iArg;
    pInfo->aConstraintUsage[iFormat].omit = 1;
    pInfo->idxNum |= 2;
  }
  pInfo->estimatedCost = iPath >= 0 ? 1e6 : 1e12;
  return SQLITE_OK;
}

static int dyngReadOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  DyngReadCursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *ppCur = &c->base;
  return SQLITE_OK;
}

static void dyngReaderClose(DyngReader *r) {
#ifdef DYNG_HAVE_ZLIB
  if (r->gz) gzclose(r->gz);
#else
  if (r->f) fclose(r->f);
#endif
  sqlite3_free(r->buf);
  memset(r, 0, sizeof *r);
}

static int dyngReadClose(sqlite3_vtab_cursor *pCur) {
  DyngReadCursor *c = (DyngReadCursor *)pCur;
  dyngReaderClose(&c->r);
  sqlite3_free(c->zPath);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* The next line, NUL-terminated and without its end of line; NULL at the
** end of the file or on a read error (*pRc says which). */
static char *dyngReaderLine(DyngReadCursor *c, int *pRc) {
  DyngReader *r = &c->r;
  *pRc = SQLITE_OK;
  for (;;) {
    char *zStart = r->buf + r->pos;
    char *zNl = r->pos < r->len ? memchr(zStart, '\n', r->len - r->pos) : NULL;
    if (zNl || (r->eof && r->pos < r->len)) {
      char *zEnd = zNl ? zNl : r->buf + r->len;
      r->pos = zNl ? (size_t)(zNl - r->buf) + 1 : r->len;
      if (zEnd > zStart && zEnd[-1] == '\r') zEnd--;
      *zEnd = 0;
      r->line++;
      return zStart;
    }
    if (r->eof) return NULL;
    /* Keep the partial line, read more after it. */
    size_t keep = r->len - r->pos;
    if (keep == READ_CHUNK) {
      *pRc = dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: longer than %d bytes", c->zPath, r->line + 1,
                          READ_CHUNK);
      return NULL;
    }
    memmove(r->buf, r->buf + r->pos, keep);
    r->len = keep;
    r->pos = 0;
#ifdef DYNG_HAVE_ZLIB
    int n = gzread(r->gz, r->buf + r->len, (unsigned)(READ_CHUNK - r->len));
    if (n < 0) {
      int e;
      const char *zMsg = gzerror(r->gz, &e);
      *pRc = dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: cannot read '%s': %s", c->zPath, zMsg);
      return NULL;
    }
#else
    size_t n = fread(r->buf + r->len, 1, READ_CHUNK - r->len, r->f);
    if (n == 0 && ferror(r->f)) {
      *pRc = dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: cannot read '%s': %s", c->zPath, strerror(errno));
      return NULL;
    }
#endif
    if (n == 0) r->eof = 1;
    r->len += (size_t)n;
  }
}

/* ---- fields ------------------------------------------------------------- */

static inline const char *dyngSkipSpace(const char *z) {
  while (*z == ' ' || *z == '\t') z++;
  return z;
}

/* A 64-bit integer at z (optional sign, digits), ending at a separator or
** the end; *pzEnd after it.  0 when there is none or it overflows. */
static int dyngParseInt(const char *z, const char **pzEnd, sqlite3_int64 *pX, char sep) {
  int neg = 0;
  if (*z == '-' || *z == '+') neg = *z++ == '-';
  if (*z < '0' || *z > '9') return 0;
  uint64_t x = 0;
  while (*z >= '0' && *z <= '9') {
    unsigned d = (unsigned)(*z++ - '0');
    if (x > (UINT64_MAX - d) / 10) return 0;
    x = x * 10 + d;
  }
  if (*z && *z != ' ' && *z != '\t' && *z != sep) return 0;
  if (neg ? x > (uint64_t)INT64_MAX + 1 : x > (uint64_t)INT64_MAX) return 0;
  *pX = neg ? (sqlite3_int64)(0 - x) : (sqlite3_int64)x;
  *pzEnd = z;
  return 1;
}

/* What reading a weight gave. */
#define WEIGHT_OK 1
#define WEIGHT_BAD 0       /* not a decimal number */
#define WEIGHT_TOO_LARGE -1 /* magnitude above DYNG_MAX_WEIGHT */

/* A weight at z: a decimal number (optional sign, digits with an optional
** fraction, optional exponent), ending at a separator or the end; *pzEnd
** after it.  Hexadecimal, "inf" and "nan", which strtod would also take,
** are refused, as is a magnitude above DYNG_MAX_WEIGHT, which no graph
** takes even as abs(weight). */
static int dyngParseReal(const char *z, const char **pzEnd, double *pX, char sep) {
  const char *q = z;
  int nDigit = 0;
  if (*q == '-' || *q == '+') q++;
  while (*q >= '0' && *q <= '9') q++, nDigit++;
  if (*q == '.')
    for (q++; *q >= '0' && *q <= '9'; q++) nDigit++;
  if (!nDigit) return WEIGHT_BAD;
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '-' || *q == '+') q++;
    if (*q < '0' || *q > '9') return WEIGHT_BAD;
    while (*q >= '0' && *q <= '9') q++;
  }
  if (*q && *q != ' ' && *q != '\t' && *q != sep) return WEIGHT_BAD;
  double x = strtod(z, NULL);
  if (!(fabs(x) <= DYNG_MAX_WEIGHT)) return WEIGHT_TOO_LARGE;
  *pX = x;
  *pzEnd = q;
  return WEIGHT_OK;
}

/* The end of the field at z (a blank, a tab, sep or the end). */
static const char *dyngFieldEnd(const char *z, char sep) {
  while (*z && *z != ' ' && *z != '\t' && *z != sep) z++;
  return z;
}

/* Fails for the weight field at zField of line `line`: not a decimal
** number, or too large (eWeight, from dyngParseReal). */
static int dyngWeightFail(DyngReadCursor *c, sqlite3_int64 line, const char *zField, char sep, int eWeight) {
  int n = (int)(dyngFieldEnd(zField, sep) - zField);
  if (eWeight == WEIGHT_TOO_LARGE)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: weight '%.*s' is %s than %s1e298, the %s "
                           "weight a graph takes",
                        c->zPath, line, n < 40 ? n : 40, zField, zField[0] == '-' ? "less" : "larger",
                        zField[0] == '-' ? "-" : "", zField[0] == '-' ? "least" : "largest");
  return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: weight '%.*s' is not a decimal number", c->zPath, line,
                      n < 40 ? n : 40, zField);
}

/* "u v [w]" (leading blanks allowed, nothing after): 1 on success, *pbW when
** w was there; 0 when the line is not of that shape; when the weight field
** is there but unusable, WEIGHT_BAD or WEIGHT_TOO_LARGE as a negative
** code - 1 (so -1 or -2), with *pzW at it. */
static int dyngParseEdge(const char *z, sqlite3_int64 *pU, sqlite3_int64 *pV, double *pW, int *pbW,
                         const char **pzW) {
  z = dyngSkipSpace(z);
  if (!dyngParseInt(z, &z, pU, 0)) return 0;
  z = dyngSkipSpace(z);
  if (!dyngParseInt(z, &z, pV, 0)) return 0;
  z = dyngSkipSpace(z);
  *pbW = 0;
  if (*z) {
    int e = dyngParseReal(z, &z, pW, 0);
    if (e != WEIGHT_OK) {
      *pzW = z;
      return e - 1;
    }
    *pbW = 1;
    z = dyngSkipSpace(z);
  }
  return *z == 0; /* a field more: not this shape */
}

/* Splits a CSV/TSV line into at most nMax fields in place (quotes removed,
** a doubled quote inside them kept once); returns the count. */
static int dyngSplitRow(char *z, char sep, char **az, int nMax) {
  int n = 0;
  for (;;) {
    if (n == nMax) return n + 1; /* more than wanted: say so */
    if (*z == '"') {
      char *zOut = ++z;
      az[n++] = zOut;
      while (*z && !(z[0] == '"' && z[1] != '"')) {
        if (z[0] == '"') z++;
        *zOut++ = *z++;
      }
      if (*z == '"') z++;
      *zOut = 0;
      while (*z && *z != sep) z++;
    } else {
      az[n++] = z;
      while (*z && *z != sep) z++;
    }
    if (!*z) return n;
    *z++ = 0;
  }
}

static int dyngNameIs(const char *z, const char *const *azNames) {
  while (*z == ' ') z++;
  for (int i = 0; azNames[i]; i++) {
    size_t n = strlen(azNames[i]);
    if (sqlite3_strnicmp(z, azNames[i], (int)n) == 0 && (z[n] == 0 || z[n] == ' ')) return 1;
  }
  return 0;
}

/* ---- the formats --------------------------------------------------------- */

#define MAX_FIELDS 64

/* What a line handler returns for a line without an edge (a comment, a
** header); else SQLITE_OK for an edge, or an error code. */
#define LINE_SKIP (-1)

/* One line of a SNAP edge list: "<src> <dst> [weight]", # and % comments. */
static int dyngSnapLine(DyngReadCursor *c, const char *z, const char *zs, sqlite3_int64 line) {
  const char *zW = NULL;
  if (!*zs || *zs == '#' || *zs == '%') return LINE_SKIP;
  int e = dyngParseEdge(zs, &c->src, &c->dst, &c->w, &c->bWeight, &zW);
  if (e < 0) return dyngWeightFail(c, line, zW, 0, e + 1);
  if (!e)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected two integer node ids and an optional "
                           "weight, got '%.40s'",
                        c->zPath, line, z);
  return SQLITE_OK;
}

/* One line of a DIMACS shortest-path file: c comments, one "p sp n m"
** line, then "a <from> <to> <weight>" arcs. */
static int dyngDimacsLine(DyngReadCursor *c, const char *z, const char *zs, sqlite3_int64 line) {
  const char *zW = NULL;
  if (!*zs || *zs == 'c') return LINE_SKIP;
  if (*zs == 'p') {
    if (c->bHeader)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: a second 'p' line", c->zPath, line);
    sqlite3_int64 n, m;
    const char *q = dyngSkipSpace(zs + 1);
    if (strncmp(q, "sp", 2) != 0 || !dyngParseInt(dyngSkipSpace(q + 2), &q, &n, 0) ||
        !dyngParseInt(dyngSkipSpace(q), &q, &m, 0) || *dyngSkipSpace(q))
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected 'p sp <nodes> <arcs>', got '%.40s'",
                          c->zPath, line, z);
    c->bHeader = 1;
    return LINE_SKIP;
  }
  int e = *zs == 'a' && c->bHeader ? dyngParseEdge(zs + 1, &c->src, &c->dst, &c->w, &c->bWeight, &zW) : 0;
  if (e < 0) return dyngWeightFail(c, line, zW, 0, e + 1);
  if (!e || !c->bWeight)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected %s, got '%.40s'", c->zPath, line,
                        c->bHeader ? "'a <from> <to> <weight>' or a 'c' comment"
                                   : "'p sp <nodes> <arcs>' before any arc",
                        z);
  return SQLITE_OK;
}

/* A MatrixMarket line before the entries: the banner (line 1), comments,
** then the size line. */
static int dyngMtxHeader(DyngReadCursor *c, const char *z, const char *zs, sqlite3_int64 line) {
  if (line == 1) {
    char zObj[32] = "", zFmt[32] = "", zField[32] = "", zSym[32] = "";
    if (sscanf(z, "%%%%MatrixMarket %31s %31s %31s %31s", zObj, zFmt, zField, zSym) != 4 ||
        sqlite3_stricmp(zObj, "matrix") != 0 || sqlite3_stricmp(zFmt, "coordinate") != 0)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line 1: expected '%%%%MatrixMarket matrix coordinate "
                             "<real|integer|pattern> <general|symmetric>', got '%.60s'",
                          c->zPath, z);
    c->bPattern = sqlite3_stricmp(zField, "pattern") == 0;
    if (!c->bPattern && sqlite3_stricmp(zField, "real") != 0 && sqlite3_stricmp(zField, "integer") != 0)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line 1: field '%s' not supported (real, integer or "
                             "pattern)",
                          c->zPath, zField);
    c->bSymmetric = sqlite3_stricmp(zSym, "symmetric") == 0;
    if (!c->bSymmetric && sqlite3_stricmp(zSym, "general") != 0)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line 1: symmetry '%s' not supported (general or "
                             "symmetric)",
                          c->zPath, zSym);
    return LINE_SKIP;
  }
  if (*zs == '%' || !*zs) return LINE_SKIP;
  sqlite3_int64 nr, nc, nz;
  const char *q = zs;
  if (!dyngParseInt(q, &q, &nr, 0) || !dyngParseInt(dyngSkipSpace(q), &q, &nc, 0) ||
      !dyngParseInt(dyngSkipSpace(q), &q, &nz, 0) || *dyngSkipSpace(q) || nr < 0 || nc < 0 || nz < 0)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected the size line '<rows> <columns> "
                           "<entries>', got '%.40s'",
                        c->zPath, line, z);
  c->bHeader = 1;
  c->iSizeLine = line;
  c->nRows = nr;
  c->nCols = nc;
  c->nEntries = nz;
  return LINE_SKIP;
}

/* One line of a MatrixMarket coordinate file; a symmetric file's entry
** off the diagonal gives a second, mirrored edge. */
static int dyngMtxLine(DyngReadCursor *c, const char *z, const char *zs, sqlite3_int64 line) {
  const char *zW = NULL;
  if (!c->bHeader) return dyngMtxHeader(c, z, zs, line);
  if (*zs == '%' || !*zs) return LINE_SKIP;
  int e = dyngParseEdge(zs, &c->src, &c->dst, &c->w, &c->bWeight, &zW);
  if (e < 0 && !c->bPattern) return dyngWeightFail(c, line, zW, 0, e + 1);
  if (e <= 0 || c->bWeight == c->bPattern)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected '<row> <column>%s', got '%.40s'",
                        c->zPath, line, c->bPattern ? "" : " <value>", z);
  if (++c->nSeen > c->nEntries)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: an entry more than the %lld that the size line "
                           "(line %lld) declares",
                        c->zPath, line, c->nEntries, c->iSizeLine);
  if (c->src < 1 || c->src > c->nRows)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: row %lld is outside 1..%lld, the rows of the size "
                           "line (line %lld)",
                        c->zPath, line, c->src, c->nRows, c->iSizeLine);
  if (c->dst < 1 || c->dst > c->nCols)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: column %lld is outside 1..%lld, the columns of the "
                           "size line (line %lld)",
                        c->zPath, line, c->dst, c->nCols, c->iSizeLine);
  c->bMirror = c->bSymmetric && c->src != c->dst;
  return SQLITE_OK;
}

/* At the end of a MatrixMarket file: it had its size line, and as many
** entries as that declared. */
static int dyngMtxEnd(DyngReadCursor *c) {
  if (!c->bHeader)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s': the file ends before its size line '<rows> <columns> "
                           "<entries>'",
                        c->zPath);
  if (c->nSeen < c->nEntries)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s': %lld entries, fewer than the %lld that the size line "
                           "(line %lld) declares",
                        c->zPath, c->nSeen, c->nEntries, c->iSizeLine);
  return SQLITE_OK;
}

/* The header row of a CSV or TSV file, its n fields in az: which columns
** hold the source, the destination and the weight (the first, second and
** third when the names are not known ones). */
static int dyngCsvHeader(DyngReadCursor *c, char **az, int n, sqlite3_int64 line) {
  static const char *const azSrc[] = {"src", "source", "from", NULL};
  static const char *const azDst[] = {"dst", "target", "to", "destination", NULL};
  static const char *const azW[] = {"weight", "w", "cost", "length", NULL};
  c->iSrc = c->iDst = c->iW = -1;
  for (int i = 0; i < n && i < MAX_FIELDS; i++) {
    if (c->iSrc < 0 && dyngNameIs(az[i], azSrc)) c->iSrc = i;
    else if (c->iDst < 0 && dyngNameIs(az[i], azDst)) c->iDst = i;
    else if (c->iW < 0 && dyngNameIs(az[i], azW)) c->iW = i;
  }
  if (c->iSrc < 0 || c->iDst < 0) c->iSrc = 0, c->iDst = 1, c->iW = n > 2 ? 2 : -1;
  if (n < 2)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected a header of at least two columns",
                        c->zPath, line);
  c->nCol = n;
  c->bHeader = 1;
  return LINE_SKIP;
}

/* One line of a CSV or TSV file (the first is its header). */
static int dyngCsvLine(DyngReadCursor *c, char *z, const char *zs, sqlite3_int64 line) {
  char sep = c->fmt == FMT_CSV ? ',' : '\t';
  char *az[MAX_FIELDS];
  if (!*zs) return LINE_SKIP;
  int n = dyngSplitRow(z, sep, az, MAX_FIELDS);
  if (!c->bHeader) return dyngCsvHeader(c, az, n, line);
  const char *q;
  c->bWeight = 0;
  if (n > c->nCol)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: %s%d fields, more than the header's %d", c->zPath,
                        line, n > MAX_FIELDS ? "over " : "", n > MAX_FIELDS ? MAX_FIELDS : n, c->nCol);
  int ok = n > c->iSrc && n > c->iDst && n <= MAX_FIELDS &&
           dyngParseInt(dyngSkipSpace(az[c->iSrc]), &q, &c->src, sep) && !*dyngSkipSpace(q) &&
           dyngParseInt(dyngSkipSpace(az[c->iDst]), &q, &c->dst, sep) && !*dyngSkipSpace(q);
  if (ok && c->iW >= 0 && n > c->iW && *dyngSkipSpace(az[c->iW])) {
    const char *zField = dyngSkipSpace(az[c->iW]);
    int e = dyngParseReal(zField, &q, &c->w, sep);
    if (e == WEIGHT_OK && *dyngSkipSpace(q)) e = WEIGHT_BAD; /* "1 2" in one field */
    if (e != WEIGHT_OK) return dyngWeightFail(c, line, zField, sep, e);
    c->bWeight = 1;
  }
  if (!ok)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' line %lld: expected integer node ids in columns %d and %d%s",
                        c->zPath, line, c->iSrc + 1, c->iDst + 1,
                        c->iW >= 0 ? " and a number or nothing as the weight" : "");
  return SQLITE_OK;
}

/* Reads lines up to the next edge of the file into the cursor; c->bEof at
** the end. */
static int dyngReadEdge(DyngReadCursor *c) {
  int rc;
  if (c->bMirror) {
    /* The other half of a symmetric MatrixMarket entry. */
    sqlite3_int64 t = c->src;
    c->src = c->dst;
    c->dst = t;
    c->bMirror = 0;
    return SQLITE_OK;
  }
  for (;;) {
    char *z = dyngReaderLine(c, &rc);
    if (!z) {
      if (rc == SQLITE_OK && c->fmt == FMT_MTX) rc = dyngMtxEnd(c);
      if (rc == SQLITE_OK) c->bEof = 1;
      return rc;
    }
    sqlite3_int64 line = c->r.line;
    const char *zs = dyngSkipSpace(z);
    switch (c->fmt) {
    case FMT_SNAP: rc = dyngSnapLine(c, z, zs, line); break;
    case FMT_DIMACS: rc = dyngDimacsLine(c, z, zs, line); break;
    case FMT_MTX: rc = dyngMtxLine(c, z, zs, line); break;
    default: rc = dyngCsvLine(c, z, zs, line); break; /* CSV, TSV */
    }
    if (rc == LINE_SKIP) continue;
    if (rc != SQLITE_OK) return rc;
    c->lineNo = line;
    return SQLITE_OK;
  }
}

/* The format a file's name suggests. */
static int dyngFormatOf(const char *zPath) {
  size_t n = strlen(zPath);
  if (n > 3 && sqlite3_stricmp(zPath + n - 3, ".gz") == 0) n -= 3;
  static const struct {
    const char *zSuffix;
    int fmt;
  } aSuffix[] = {{".gr", FMT_DIMACS}, {".mtx", FMT_MTX}, {".csv", FMT_CSV}, {".tsv", FMT_TSV}};
  for (size_t i = 0; i < sizeof aSuffix / sizeof *aSuffix; i++) {
    size_t m = strlen(aSuffix[i].zSuffix);
    if (n > m && sqlite3_strnicmp(zPath + n - m, aSuffix[i].zSuffix, (int)m) == 0) return aSuffix[i].fmt;
  }
  return FMT_SNAP;
}

static int dyngReadFilter(sqlite3_vtab_cursor *pCur, int idxNum, const char *idxStr, int argc,
                          sqlite3_value **argv) {
  (void)idxStr;
  DyngReadCursor *c = (DyngReadCursor *)pCur;
  dyngReaderClose(&c->r);
  sqlite3_free(c->zPath);
  memset((char *)c + sizeof c->base, 0, sizeof *c - sizeof c->base);
  (void)argc;
  if (!(idxNum & 1))
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: missing argument 'path' (usage: dyng_read_edges(path[, format]))");
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: path must be text");
  c->zPath = sqlite3_mprintf("%s", (const char *)sqlite3_value_text(argv[0]));
  if (!c->zPath) return SQLITE_NOMEM;
  c->fmt = dyngFormatOf(c->zPath);
  if (idxNum & 2) {
    if (sqlite3_value_type(argv[1]) != SQLITE_TEXT)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: format must be text (snap, dimacs, mtx, csv or tsv; leave it out "
                             "to go by the file's name)");
    const char *zFmt = (const char *)sqlite3_value_text(argv[1]);
    int f = -1;
    for (int i = 0; zFmt && i < (int)(sizeof azFormat / sizeof *azFormat); i++)
      if (sqlite3_stricmp(zFmt, azFormat[i]) == 0) f = i;
    if (zFmt && (sqlite3_stricmp(zFmt, "gr") == 0)) f = FMT_DIMACS;
    if (f < 0)
      return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: unknown format '%s' (known: snap, dimacs, mtx, csv, tsv)",
                          zFmt ? zFmt : "");
    c->fmt = f;
  }
#ifdef DYNG_HAVE_ZLIB
  c->r.gz = gzopen(c->zPath, "rb");
  if (!c->r.gz) return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: cannot open '%s': %s", c->zPath, strerror(errno));
  gzbuffer(c->r.gz, 256 * 1024);
#else
  size_t n = strlen(c->zPath);
  if (n > 3 && sqlite3_stricmp(c->zPath + n - 3, ".gz") == 0)
    return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: '%s' is gzip-compressed and this dyng was built without zlib",
                        c->zPath);
  c->r.f = fopen(c->zPath, "rb");
  if (!c->r.f) return dyngVtabErrorf(c->base.pVtab, "dyng_read_edges: cannot open '%s': %s", c->zPath, strerror(errno));
#endif
  c->r.buf = sqlite3_malloc(READ_CHUNK + 1);
  if (!c->r.buf) return SQLITE_NOMEM;
  int rc = dyngReadEdge(c);
  c->iRowid = 1;
  return rc;
}

static int dyngReadNext(sqlite3_vtab_cursor *pCur) {
  DyngReadCursor *c = (DyngReadCursor *)pCur;
  c->iRowid++;
  return dyngReadEdge(c);
}

static int dyngReadEof(sqlite3_vtab_cursor *pCur) { return ((DyngReadCursor *)pCur)->bEof; }

static int dyngReadColumn(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx, int i) {
  DyngReadCursor *c = (DyngReadCursor *)pCur;
  switch (i) {
  case COL_SRC: sqlite3_result_int64(ctx, c->src); break;
  case COL_DST: sqlite3_result_int64(ctx, c->dst); break;
  case COL_WEIGHT:
    if (c->bWeight) sqlite3_result_double(ctx, c->w);
    break;
  case COL_LINE: sqlite3_result_int64(ctx, c->lineNo); break;
  case COL_PATH: sqlite3_result_text(ctx, c->zPath, -1, SQLITE_TRANSIENT); break;
  default: sqlite3_result_text(ctx, azFormat[c->fmt], -1, SQLITE_STATIC); break;
  }
  return SQLITE_OK;
}

static int dyngReadRowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid) {
  *pRowid = ((DyngReadCursor *)pCur)->iRowid;
  return SQLITE_OK;
}

static sqlite3_module dyngReadModule = {
    .iVersion = 0,
    .xConnect = dyngReadConnect,
    .xBestIndex = dyngReadBestIndex,
    .xDisconnect = dyngReadDisconnect,
    .xOpen = dyngReadOpen,
    .xClose = dyngReadClose,
    .xFilter = dyngReadFilter,
    .xNext = dyngReadNext,
    .xEof = dyngReadEof,
    .xColumn = dyngReadColumn,
    .xRowid = dyngReadRowid,
};

int dyngRegisterReadEdges(sqlite3 *db) {
  return sqlite3_create_module_v2(db, "dyng_read_edges", &dyngReadModule, NULL, NULL);
}
