/*
** ext/dyng_ext.h: what the files of ext/ share.
**
** One DyngConn exists per database connection that loaded dyng; it owns a
** list of DyngGraph, one per `dyng` virtual table the connection has seen.
** A DyngGraph outlives the virtual table objects SQLite connects and
** disconnects (SQLite disconnects them on every schema reset), so the
** in-memory graph survives; it is freed by DROP TABLE (xDestroy), once its
** database is detached, or when the connection closes.  A graph is known by
** its schema, its name and its database's file (dyngGraphInItsDb).  The
** loaded graph itself, its backend and what it keeps live in a dyng_mirror
** (engine/mirror.h).
**
** Below, one section per file declares what that file defines for the
** others (ext/dyng.c, which defines nothing the others call, has none).
** The files call each other in no loop (tests/test_layers.sh): util.c, the
** bottom of ext/, calls no other file; ext/dyng.c, the entry point at the
** top, is called by none; docs/design.md ("Layers") gives the order.
*/
#ifndef DYNG_EXT_H
#define DYNG_EXT_H

#include "sqlite3ext.h"

#include "engine/backend.h"
#include "engine/graph.h"
#include "engine/mirror.h"

#ifndef SQLITE_CORE
extern const sqlite3_api_routines *sqlite3_api;
#endif

/* Log entries the triggers keep by default (option log_limit=). */
#define DYNG_DEFAULT_LOG_LIMIT 100000

typedef struct DyngConn DyngConn;
typedef struct DyngGraph DyngGraph;

/* One graph: the definition from CREATE VIRTUAL TABLE, the loaded mirror
** and the state that keeps it in step with the edge table. */
struct DyngGraph {
  DyngConn *pConn;          /* connection that owns this graph */
  DyngGraph *pNext;         /* next graph of the connection */
  char *zDb;                /* schema of the graph and its edge table */
  char *zFile;              /* file of that database when connected ("": none,
                               as for ":memory:"), part of the graph's identity */
  char *zName;              /* name of the virtual table */
  char *zEdges;             /* edge table */
  char *zSrc;               /* source column */
  char *zDst;               /* destination column */
  int nWeight;              /* weight columns (0: every edge weighs 1) */
  char *azWeight[DYNG_MAX_WEIGHTS]; /* their names */
  int bDirected;            /* 1: directed, 0: undirected */
  char *zLog;               /* change-log table filled by the triggers */
  int nRef;                 /* virtual table objects connected to it */
  int bOrphan;              /* dropped or replaced: no longer in pConn's list,
                               freed when the last object disconnects */
  int bBusy;                /* its mirror is being loaded or synced: a use
                               from inside that is an error */

  dyng_mirror *pMirror;     /* the loaded graph, its backend and what it
                               keeps (engine/mirror.h); NULL until loaded */
  dyng_graph *pGraph;       /* pMirror's host graph (NULL with it), read by
                               the vtabs; set only where pMirror is */
  int eBackendPref;         /* backend= option; -1: the connection's choice */
  int bReattach;            /* the preference changed: attach again */

  /* Sync state (see dyngGraphSync in sync.c). */
  sqlite3_int64 iLogSeq;    /* last log entry the mirror reflects */
  sqlite3_int64 iDataVersion; /* file data version of zDb at the last sync */
  int nDataVersionPrepared;   /* times SQLite prepared pDataVersion again */
  sqlite3_int64 iSchemaVersion; /* schema cookie of zDb at the last load */
  sqlite3_int64 nChanges;   /* sqlite3_total_changes() at the last sync */
  int bTentative;           /* the last sync happened inside a transaction */
  int bStale;               /* the mirror must be reloaded before use */
  sqlite3_stmt *pDataVersion;   /* PRAGMA data_version, kept while connected */
  sqlite3_stmt *pSchemaVersion; /* PRAGMA schema_version, likewise */
  sqlite3_stmt *pLogMax;        /* SELECT max(seq) FROM the log, likewise */
  sqlite3_stmt *pLogRead;       /* SELECT the log after a position, likewise */
  sqlite3_stmt *pLogTake;       /* the same rows fed to dyng__log(), likewise */
  sqlite3_stmt *pLogNonce;      /* SELECT the nonce of one log entry, likewise */
  int bLogNonce;            /* the log has nonces and op-2 markers (capture of
                               this version); else op 0 means "re-read" */
  int nLogLimit;            /* log entries the writers keep (log_limit=) */


  dyng_batch *pBatch;       /* the last batch read from the log, emptied:
                               its room serves the next sync (ext/sync.c
                               dyngKeepBatch); NULL: none kept */

  /* Undo records of a tentative mirror (see ext/sync.c). */
  struct DyngUndo *aUndo;   /* one per log entry applied since iUndoBase */
  double *aUndoW;           /* their weights: 2 * max(1, nWeight) each */
  int nUndo;                /* records in use */
  int nUndoAlloc;           /* records allocated */
  sqlite3_int64 iUndoBase;  /* log position where the records start */
  int bUndoValid;           /* the records cover every uncommitted entry */
  int bBaseUnsure;          /* the state at iUndoBase was taken while a write
                               could still be rolled back (a load inside a
                               transaction, or records past their limit):
                               it holds while log entry iUndoBase keeps ... */
  sqlite3_int64 iBaseNonce; /* ... this nonce */

  /* Diagnostics for dyng_config(). */
  double loadMs;            /* duration of the last full load */
  sqlite3_int64 loadTime;   /* when it happened, ms since the epoch */
  sqlite3_int64 nLoad;      /* full loads so far */
  sqlite3_int64 nBatch;     /* incremental batches applied */
  sqlite3_int64 nInserted;  /* edges inserted by batches */
  sqlite3_int64 nDeleted;   /* edges deleted by batches */
  sqlite3_int64 nRevert;    /* batches that undid rolled-back entries */
  double readMs;            /* time spent reading log rows into batches */
  double applyMs;           /* time spent applying batches to the mirror */
  double backendMs;         /* time the backend spent following them */
  double keptMs;            /* time kept trees and counts spent following them */
  sqlite3_int64 syncTime;   /* last sync that changed or confirmed the
                               mirror, ms since the epoch */
};

/* Per-connection state, the client data of every dyng module and function. */
struct DyngConn {
  sqlite3 *db;
  DyngGraph *pGraphs;       /* graphs of this connection */
  int eBackendPref;         /* DYNG_BACKEND_AUTO/CPU/CUDA for new graphs */
  int bProgress;            /* report long loads and counts on stderr */
  struct DyngLoad *pLoad;   /* the load in progress, fed by dyng__load() */
  struct DyngTake *pTake;   /* the log read in progress, fed by dyng__log() */
  dyng_mirror_pool pool;    /* the kept trees' budget (cache_mb) and clocks,
                               shared by the graphs' mirrors */
  double rMaxMs;            /* max_ms: time a query's computation may take
                               (0: no limit; -1, at first and after NULL:
                               not set, see DYNG_DEFAULT_MAX_MS) */
  sqlite3_int64 nMaxGraphBytes; /* max_graph_mb: memory one graph's mirror
                               may take (0: no limit) */
  int nLandmarks;           /* landmarks: how many aim a graph's routes */
};

/* The default tree budget of a connection, in MiB. */
#define DYNG_DEFAULT_CACHE_MB 256

/* The landmarks a graph's routes are aimed by unless dyng_config says
** otherwise, and the most it may say. */
#define DYNG_DEFAULT_LANDMARKS 4
#define DYNG_MAX_LANDMARKS 16

/* The budget of a combinatorial computation (a Pareto front, a cycle count)
** while max_ms is not set.  Every computation a query starts can be reached
** from a view or a trigger (the functions are INNOCUOUS), and these two can
** take hours on a graph of a few dozen edges: a view someone planted would
** stall its reader that long.  A shortest-path tree (also each of MOSP's)
** takes time near-linear in the graph's size, which the database's own size
** bounds, so without a max_ms it runs to the end. */
#define DYNG_DEFAULT_MAX_MS 10000

/* ---- util.c (calls no other file of ext/) ------------------------------ */

/* Milliseconds on a monotonic clock, and since the epoch. */
double dyngNowMs(void);
sqlite3_int64 dyngEpochMs(void);

/* Frees a graph's mirror and definition (not the tables it created). */
void dyngGraphFree(DyngGraph *pG);

/* Frees the strings of pG's definition (not pG, not its mirror). */
void dyngGraphFreeDefinition(DyngGraph *pG);

/* Finalizes the statements a graph keeps while its table is connected.
** They must be gone before SQLite closes the connection, which it checks
** only after disconnecting every virtual table. */
void dyngGraphReleaseStmts(DyngGraph *pG);

/* Frees the mirror (engine/mirror.h) and its undo records (the definition
** stays). */
void dyngGraphDropMirror(DyngGraph *pG);

/* The host memory of pG's mirror: its graph and the batch room it keeps
** (what max_graph_mb bounds and dyng_config reports); 0 when not loaded. */
size_t dyngGraphHostBytes(const DyngGraph *pG);

/* Frees a DyngConn and every graph it owns (the graph module's destructor). */
void dyngConnFree(void *pConn);


/* Looks a graph up by schema (NULL: any, main first) and name. */
DyngGraph *dyngGraphFind(DyngConn *pConn, const char *zDb, const char *zName);

/* 1 when pG's schema name still stands for the database pG was connected
** in: always for main and temp; for an attached database, when it has the
** same file, and for one without a file (":memory:", ""), which no name
** tells from a new one, only while pG's table is connected. */
int dyngGraphInItsDb(const DyngGraph *pG);

/* Forgets the graphs whose database is gone (detached, or another attached
** under their schema name): each leaves pConn's list and its mirror is
** freed; the graph itself goes with the last xDisconnect of its table (a
** prepared statement may keep it connected). */
void dyngGraphsForgetGone(DyngConn *pConn);


/* 1 and *piNode set when v equals an integer the way a value compares with
** an INTEGER column (3, 3.0 and '3' all equal 3); 0 otherwise.  For
** constraints on node columns, not for function arguments. */
int dyngValueAsNodeId(sqlite3_value *v, sqlite3_int64 *piNode);

/* Like sqlite3_str_finish, but an empty string gives "" instead of NULL;
** NULL only when out of memory.  The result is freed with sqlite3_free. */
char *dyngStrFinish(sqlite3_str *pStr);

/* The progress of one long piece of work (a load, a count), reported on
** stderr every two seconds once it has run two seconds, when its
** connection asked for it (dyng_config('progress', 1)). */
typedef struct DyngProgress {
  const DyngConn *pConn;
  const char *zWhat;        /* "loading graph 'g'", say */
  const char *zUnit;        /* "rows", "roots", ... */
  double t0, tNext;         /* when it started; when to report next */
  int bReported;            /* something was printed */
} DyngProgress;
void dyngProgressStart(DyngProgress *p, const DyngConn *pConn, const char *zWhat, const char *zUnit);
/* done of total (total 0: unknown) so far; prints when it is time. */
void dyngProgressTick(DyngProgress *p, sqlite3_int64 done, sqlite3_int64 total);
/* The closing line, when anything was reported: "done, N units in T s",
** or with zStopped ("interrupted", say) "stopped (zStopped) after done of
** total units (P%) in T s" (total 0: unknown). */
void dyngProgressEnd(DyngProgress *p, sqlite3_int64 done, sqlite3_int64 total,
                     const char *zStopped);

/* ---- watch.c ---------------------------------------------------------- */

/* Why a watch asked a computation to stop. */
#define DYNG_STOP_INTERRUPT 1 /* the statement was interrupted */
#define DYNG_STOP_BUDGET 2    /* it ran past the connection's max_ms */

/* Watches one computation a query started: its dyng_cancel (engine/types.h)
** stops it when the statement is interrupted or max_ms has passed, and
** reports its progress when the connection asked for that. */
typedef struct DyngWatch {
  DyngConn *pConn;
  int (*xIsInterrupted)(sqlite3 *); /* the running SQLite's, when it has one */
  sqlite3_stmt *pProbe;     /* else a "SELECT 1" that fails once interrupted,
                               prepared at the first poll */
  int bNoProbe;             /* it could not be prepared */
  double tStart, tEnd;      /* dyngNowMs() at the start; the deadline (0: none) */
  double rLimitMs;          /* the budget it runs under (0: none) */
  int bDefaultLimit;        /* that budget is DYNG_DEFAULT_MAX_MS, max_ms unset */
  int eStop;                /* DYNG_STOP_...; 0 while running */
  int bProgress;            /* progress is reported */
  sqlite3_int64 nDone, nTotal; /* the last progress the engine reported */
  int bHeard;               /* it reported some */
  DyngProgress progress;
  dyng_cancel cancel;       /* hand this to the engine */
} DyngWatch;

/* How an interrupt is noticed in this process: "sqlite3_is_interrupted"
** (SQLite 3.41 and later) or "probe statement". */
const char *dyngInterruptCheck(void);

/* Starts watching for pConn's statement now.  bCombinatorial: a Pareto
** front or a cycle count, whose budget is DYNG_DEFAULT_MAX_MS while the
** connection's max_ms is not set. */
void dyngWatchBegin(DyngWatch *w, DyngConn *pConn, int bCombinatorial);
/* Reports the computation's progress as "zWhat ... zUnit" (both must live
** until dyngWatchEnd) when the connection asked for progress reports. */
void dyngWatchProgressStart(DyngWatch *w, const char *zWhat, const char *zUnit);
/* Ends the watch; nDone: the closing progress line's count. */
void dyngWatchEnd(DyngWatch *w, sqlite3_int64 nDone);
/* After the engine returned DYNG_EINTERRUPTED: SQLITE_INTERRUPT with
** "interrupted", or SQLITE_ERROR with a message naming zFunc and the
** budget; *pzErr from sqlite3_mprintf (NULL with SQLITE_NOMEM). */
int dyngWatchError(const DyngWatch *w, const char *zFunc, char **pzErr);

/* Gives pConn's mirror pool the hooks its engine calls: a watch under the
** connection's max_ms and interrupt for a recount a batch starts, and a
** warning in sqlite3_log when a graph leaves its device. */
void dyngWatchHooks(DyngConn *pConn);

/* ---- error.c (calls only util.c and watch.c) ---------------------------- */

/* Flags of dyngEngineFail. */
#define DYNG_ERR_BACKEND 1 /* add the backend's own text (a CUDA error) */
#define DYNG_ERR_KEEP 2    /* a message already in *pzErr stays */

/* The one way an engine code becomes an SQL error: erc, met by SQL
** function zFunc on graph pG (NULL: none), as an SQLite code, with *pzErr
** (freed first) the message from sqlite3_mprintf:
**   DYNG_OK            SQLITE_OK, *pzErr untouched;
**   DYNG_ENOMEM        SQLITE_NOMEM, no message;
**   DYNG_EINTERRUPTED  what pWatch says stopped it (dyngWatchError), when
**                      pWatch is given;
**   DYNG_EBACKEND      when the mirror has one, why the graph could not
**                      leave a device that was required;
**   any other          "zFunc: graph 'g': " and the printf-style detail
**                      zFmt, or without one the code's SQL text (error.c's
**                      table, else dyng_strerror); with DYNG_ERR_BACKEND
**                      the backend's own text in parentheses.
** With DYNG_ERR_KEEP a message already in *pzErr is kept. */
int dyngEngineFail(DyngGraph *pG, int erc, DyngWatch *pWatch, const char *zFunc, int flags,
                   char **pzErr, const char *zFmt, ...);

/* A virtual table's error: zMsg (from sqlite3_mprintf, taken over) becomes
** pVtab's message and rc is returned; zMsg NULL with rc SQLITE_ERROR (its
** allocation failed) gives SQLITE_NOMEM, with any other rc leaves the
** message there is.  SQLITE_OK frees zMsg. */
int dyngVtabError(sqlite3_vtab *pVtab, int rc, char *zMsg);

/* dyngVtabError with SQLITE_ERROR and a printf-style message. */
int dyngVtabErrorf(sqlite3_vtab *pVtab, const char *zFmt, ...);

/* A scalar function's error: result code rc (not SQLITE_OK) with message
** zMsg (from sqlite3_mprintf, taken over; NULL: SQLite's text of rc);
** SQLITE_NOMEM, or zMsg NULL with SQLITE_ERROR, is an out-of-memory
** error. */
void dyngFuncError(sqlite3_context *ctx, int rc, char *zMsg);

/* ---- edge_table.c (calls only options.c and util.c) -------------------- */

/* Checks that pG's edge table, when it exists, is an ordinary table, not a
** view or a virtual table (a graph over a graph, or over itself, would
** read a graph to load one); SQLITE_ERROR with a message otherwise. */
int dyngCheckEdgeKind(sqlite3 *db, DyngGraph *pG, char **pzErr);

/* Checks that the edge table exists, that `rowid` names its rowid (not a
** WITHOUT ROWID table, no other column named rowid) and that it has every
** column the graph names (SQLite would read a missing "column" as a
** string), adopting the table's spelling; SQLITE_ERROR with a message
** saying which otherwise.  bCreate: at CREATE (a missing column was not
** renamed since). */
int dyngCheckColumns(sqlite3 *db, DyngGraph *pG, int bCreate, char **pzErr);

/* Checks the edge table as CREATE (bCreate) or a reattach does: its kind
** (dyngCheckEdgeKind), then its columns (dyngCheckColumns). */
int dyngCheckEdgeTable(sqlite3 *db, DyngGraph *pG, int bCreate, char **pzErr);

/* ---- graph_vtab.c ---------------------------------------------------- */

int dyngRegisterGraphModule(sqlite3 *db, DyngConn *pConn);

/* dyng_update(graph, 'reattach'): checks the edge table as CREATE does,
** installs the capture triggers again (replacing what is left of them,
** keeping the log) and reloads the graph.  When the load fails (a row dyng
** cannot use, written while the capture was gone) the capture stays and
** every query fails the same way until the row is fixed. */
int dyngGraphReattach(DyngGraph *pG, char **pzErr);

/* ---- options.c -------------------------------------------------------- */

/* Builds a DyngGraph from CREATE VIRTUAL TABLE arguments: argv[1] schema,
** argv[2] table name, argv[3..] "key=value" options.  bCreate: for CREATE,
** which also refuses a weights list ending in a comma (a definition
** already stored with one must still connect, or it could not even be
** dropped).  New (dyngGraphFree); on error NULL with *pzErr set. */
DyngGraph *dyngGraphParse(DyngConn *pConn, int argc, const char *const *argv, int bCreate,
                          char **pzErr);

/* A reference to pG for a message: "name", or "schema.name" outside main;
** new, NULL when out of memory. */
char *dyngGraphRef(const DyngGraph *pG);

/*
** The UNIQUE constraints and unique indexes of the edge table, as the
** condition "this row may conflict with NEW": one group per index,
** (c1 = NEW.c1 COLLATE x AND ...) OR (...).  A term that is an expression
** is compared with the same expression evaluated over NEW's values:
** (expr) = (SELECT expr FROM (SELECT NEW.a AS a, NEW.b AS b, ...)).  A
** partial index adds its WHERE clause, read from its definition, so that
** each group matches one row at most (sql/replace.sql counts on it).  The
** condition may match more rows than can really conflict (each match is
** only a marker), never fewer.  *pzMatch is "" when there is no unique
** index; it comes from sqlite3_mprintf.  *pnGroup gets the number of groups.
*/
int dyngUniqueMatch(sqlite3 *db, const DyngGraph *pG, char **pzMatch, int *pnGroup,
                    char **pzErr);

/* ---- capture.c -------------------------------------------------------- */

/* Creates the log table and the triggers of sql/capture.sql, and those of
** sql/replace.sql when the edge table has UNIQUE constraints.  bMissing:
** only those not there yet (reattaching). */
int dyngInstallCapture(sqlite3 *db, DyngGraph *pG, int bMissing, char **pzErr);

/* Removes the triggers and the log table (IF EXISTS: the edge table may be
** gone, and its triggers with it). */
int dyngRemoveCapture(sqlite3 *db, DyngGraph *pG, char **pzErr);

/* Drops the capture triggers of pG that are on another table than its
** edge table, or with bAll all of them, wherever they are (a reattach then
** installs them anew, as the table is now). */
int dyngDropCaptureTriggers(sqlite3 *db, DyngGraph *pG, int bAll, char **pzErr);

/* Checks that the whole change capture is on the edge table: the log, the
** three AFTER triggers and, when the table has UNIQUE constraints, the two
** REPLACE triggers matching those constraints as they are now, with AFTER
** triggers that turn their markers into deletes.  A table dropped and
** created again, or rebuilt by SQLite's CREATE-copy-DROP-RENAME procedure,
** has lost the triggers; a trigger may have been dropped by hand, or a
** UNIQUE index added after the capture.  SQLITE_ERROR then, with a message
** saying what is wrong and how to reattach. */
int dyngCheckCapture(sqlite3 *db, DyngGraph *pG, char **pzErr);

/* A log kept from a graph created by an older version has no nonce column;
** the capture installed again writes one, so it is added (the entries
** before the reload that follows are never read again). */
int dyngLogAddNonce(sqlite3 *db, DyngGraph *pG, char **pzErr);

/* ---- sync.c ----------------------------------------------------------- */

/* Follows a rename of the edge table: the table its capture's INSERT
** trigger is on becomes pG->zEdges. */
int dyngResolveEdgeTable(DyngGraph *pG);

/* Registers dyng__load (the loader's feed). */
int dyngRegisterSyncFunctions(sqlite3 *db, DyngConn *pConn);

/* Finds the graph `zArg` ("name" or "schema.name") for function `zFunc`,
** connecting its virtual table if SQLite has not yet done so, and (with
** bSync) brings it up to date with its edge table.  On failure returns an
** SQLite code and sets *pzErr to a message from sqlite3_mprintf naming
** zFunc. */
int dyngGraphOpen(DyngConn *pConn, const char *zFunc, const char *zArg, int bSync,
                  DyngGraph **ppG, char **pzErr);


/* Brings pG's mirror up to date (loading it the first time).  On
** SQLITE_NOMEM *pzErr stays NULL, as for dyngGraphLoad.  A graph used from
** inside its own load or sync (pG->bBusy) gets an error instead. */
int dyngGraphSync(DyngGraph *pG, char **pzErr);

/* Loads the whole edge table into a new mirror, replacing the old one.
** bCreate: called from CREATE VIRTUAL TABLE.  On SQLITE_NOMEM *pzErr stays
** NULL (a message made from sqlite3_errmsg would mislead).  Refuses an edge
** table that is a view or a virtual table, and a graph already busy. */
int dyngGraphLoad(DyngGraph *pG, int bCreate, char **pzErr);

/* Log entries not yet applied, for dyng_config(). */
int dyngPendingEntries(DyngGraph *pG, sqlite3_int64 *pnPending);

/* ---- update.c --------------------------------------------------------- */

int dyngRegisterUpdateFunction(sqlite3 *db, DyngConn *pConn);

/* ---- cache.c ---------------------------------------------------------- */

/* The tree of (source vertex, objective) of pG (dyng_mirror_tree), stopped
** as pWatch says, its failure as an SQL error naming zFunc.  *ppOwned is
** set when the tree is not kept: release it with dyng_mirror_tree_release
** once its rows are copied out. */
int dyngTreeGet(DyngGraph *pG, uint32_t vSource, int iObj, DyngWatch *pWatch, const char *zFunc,
                dyng_sssp_tree **ppTree, dyng_kept_tree **ppOwned, char **pzErr);

/* pG's kept trees and counts as JSON: all of them with their counters
** (iSinceStamp < 0), or those updated after iSinceStamp with that update's
** figures. */
struct json_t *dyngTreesJson(DyngGraph *pG, sqlite3_int64 iSinceStamp);
struct json_t *dyngCountsJson(const DyngGraph *pG, sqlite3_int64 iSinceStamp);

/* ---- cycles.c --------------------------------------------------------- */

int dyngRegisterCycleFunctions(sqlite3 *db, DyngConn *pConn);

/* ---- sssp_vtab.c ----------------------------------------------------- */

int dyngRegisterSsspModules(sqlite3 *db, DyngConn *pConn);

/* Resolves an objective argument of SQL function zFunc (a weight column's
** name or a 0-based index; NULL pVal: 0) of graph pG to *piObj, or sets an
** error on pBase naming what the graph has. */
int dyngObjectiveArg(sqlite3_vtab *pBase, const char *zFunc, DyngGraph *pG, sqlite3_value *pVal, int *piObj);

/* ---- matrix.c --------------------------------------------------------- */

int dyngRegisterMatrixModule(sqlite3 *db, DyngConn *pConn);

/* ---- backends.c ------------------------------------------------------ */

/* Backend preferences, of a connection or of a graph. */
#define DYNG_BACKEND_AUTO 0
#define DYNG_BACKEND_CPU 1
#define DYNG_BACKEND_CUDA 2

/* "auto", "cpu" or "cuda"; parsing accepts those (and "gpu"), any case. */
const char *dyngBackendPrefName(int ePref);
int dyngBackendPrefParse(const char *z, int *pePref); /* 1 when understood */

/* The backend a graph with preference ePref gets now, starting the GPU
** plugin if it is the one (rules: engine/choice.h), with the reason in zWhy.
** SQLITE_ERROR (zWhy says why) when CUDA is required and cannot be used;
** the CPU backend otherwise. */
int dyngBackendChoose(int ePref, const dyng_backend **ppBackend, char *zWhy, int nWhy);

/* 1 when a graph with preference ePref must run on CUDA or fail. */
int dyngBackendRequired(int ePref);

/* Writes the name of the backend dyngBackendChoose would give ("none"
** when CUDA is required and cannot be used) to zName, and why to zWhy,
** without starting anything. */
void dyngBackendPreview(int ePref, char *zName, int nName, char *zWhy, int nWhy);

/* Adds driver, devices, plugins and discovery to a dyng_config() report. */
void dyngBackendsJson(struct json_t *pRoot);

/* ---- read_edges.c ----------------------------------------------------- */

/* Registers dyng_read_edges(path[, format]), SQLITE_DIRECTONLY. */
int dyngRegisterReadEdges(sqlite3 *db);

/* ---- config.c -------------------------------------------------------- */

int dyngRegisterConfigFunctions(sqlite3 *db, DyngConn *pConn);

/* For the DIRECTONLY functions that change something (dyng_config,
** dyng_update): 1, with an error set on ctx, when the call comes from the
** schema (a CHECK constraint) rather than from the running statement's own
** text, which SQLite itself does not always prevent. */
int dyngRefuseFromSchema(sqlite3_context *ctx, const char *zFunc);

#endif /* DYNG_EXT_H */
