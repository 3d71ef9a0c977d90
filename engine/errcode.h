/*
** engine/errcode.h: the engine's error codes: numbers, names and messages,
** all generated from the one list DYNG_ERRNO_MAP.
**
** Every engine function and every backend table entry that can fail returns
** an int: 0 (DYNG_OK) on success, a negative DYNG_E... code on failure.  The
** codes are part of the plugin ABI (engine/backend.h): a plugin built
** against one list returns them to a host built against another, so each
** keeps its number for ever.  A new code takes the next unused number and is
** added at the end of the list; tests/test_abi.c holds its own copy of the
** numbers and fails when one moves.  dyng_strerror() and dyng_err_name()
** (engine/error.h) read the same list.
*/
#ifndef DYNG_ERRCODE_H
#define DYNG_ERRCODE_H

/* X(NAME, number, message) for every DYNG_E##NAME, in the order of their
** numbers.  The message completes "failed: ..." and stands alone. */
#define DYNG_ERRNO_MAP(X)                                                          \
  X(NOMEM, -1, "out of memory")                                                    \
  X(INVAL, -2, "invalid argument")                                                 \
  X(NOTFOUND, -3, "not found")                                                     \
  X(WEIGHT, -4, "weight must be a number from 0 to 1e298")                         \
  X(TOOBIG, -5, "graph too large (at most 2^31 - 1 edges and vertices)")           \
  X(STATE, -6, "operation not allowed in this state of the graph")                 \
  X(BACKEND, -7, "backend failure")                                                \
  X(INTERRUPTED, -8, "interrupted")                                                \
  X(OVERFLOW, -9, "the count does not fit in 64 bits")                             \
  X(GAVEUP, -10, "gave up past its work limit")                                    \
  X(NOROOM, -11, "the room given for the result is too small")

/* DYNG_OK, and DYNG_E##NAME for each entry of the list:
**   NOMEM        out of memory (host or device)
**   INVAL        invalid argument
**   NOTFOUND     no such node, edge or graph
**   WEIGHT       a weight outside 0 .. DYNG_MAX_WEIGHT
**   TOOBIG       past a size limit (vertices, edges, a pool's positions)
**   STATE        not allowed in the graph's present state
**   BACKEND      the backend failed
**   INTERRUPTED  stopped by the caller's cancel hook
**   OVERFLOW     a count (of cycles) past UINT64_MAX
**   GAVEUP       an incremental repair or a label search passed the limit
**                it was given (max_touched, max_labels); the caller
**                computes from scratch or reports the limit
**   NOROOM       the caller's buffer is too small; the needed size is
**                reported where the function says so */
enum {
  DYNG_OK = 0,
#define DYNG__ERRNO_ENUM(name, number, msg) DYNG_E##name = (number),
  DYNG_ERRNO_MAP(DYNG__ERRNO_ENUM)
#undef DYNG__ERRNO_ENUM
};

#endif /* DYNG_ERRCODE_H */
