/*
** engine/error.h: the text of the engine's error codes.
**
** The codes themselves are pinned numbers in engine/errcode.h (part of the
** plugin ABI).  One X-macro table here gives each code its message, so
** dyng_strerror() and dyng_err_name() never disagree with the codes.
*/
#ifndef DYNG_ERROR_H
#define DYNG_ERROR_H

#include "engine/errcode.h"

/* X(NAME, message) for every DYNG_E##NAME of engine/errcode.h. */
#define DYNG_ERRNO_MAP(X)                                              \
  X(NOMEM, "out of memory")                                            \
  X(INVAL, "invalid argument")                                         \
  X(NOTFOUND, "not found")                                             \
  X(WEIGHT, "weight must be a number from 0 to 1e298")                 \
  X(TOOBIG, "graph too large (at most 2^31 - 1 edges and vertices)")   \
  X(STATE, "operation not allowed in this state of the graph")         \
  X(BACKEND, "backend failure")                                        \
  X(INTERRUPTED, "interrupted")

/* The message of a code ("out of memory"); "unknown error" for other values.
** The string is static. */
const char *dyng_strerror(int code);

/* The name of a code ("DYNG_ENOMEM"); "DYNG_OK" for 0.  The string is static. */
const char *dyng_err_name(int code);

#endif /* DYNG_ERROR_H */
