/*
** engine/error.h: the engine's error codes.
**
** Every engine function that can fail returns an int: 0 (DYNG_OK) on success,
** a negative DYNG_E... code on failure.  One X-macro table gives each code its
** name and its message, so dyng_strerror() and dyng_err_name() never disagree
** with the enum.
*/
#ifndef DYNG_ERROR_H
#define DYNG_ERROR_H

#define DYNG_ERRNO_MAP(X)                                              \
  X(NOMEM, "out of memory")                                            \
  X(INVAL, "invalid argument")                                         \
  X(NOTFOUND, "not found")                                             \
  X(WEIGHT, "weight must be a number from 0 to 1e298")                 \
  X(TOOBIG, "graph too large (at most 2^31 - 1 edges and vertices)")   \
  X(STATE, "operation not allowed in this state of the graph")         \
  X(BACKEND, "backend failure")                                        \
  X(INTERRUPTED, "interrupted")

enum {
  DYNG_OK = 0,
#define DYNG__ERRNO_ENUM(name, msg) DYNG__E_##name,
  DYNG__E_FIRST_ = 0,
  DYNG_ERRNO_MAP(DYNG__ERRNO_ENUM)
#undef DYNG__ERRNO_ENUM
  DYNG__E_COUNT_
};

/* Public codes are the negated positions in the table above. */
#define DYNG_ENOMEM (-DYNG__E_NOMEM)
#define DYNG_EINVAL (-DYNG__E_INVAL)
#define DYNG_ENOTFOUND (-DYNG__E_NOTFOUND)
#define DYNG_EWEIGHT (-DYNG__E_WEIGHT)
#define DYNG_ETOOBIG (-DYNG__E_TOOBIG)
#define DYNG_ESTATE (-DYNG__E_STATE)
#define DYNG_EBACKEND (-DYNG__E_BACKEND)
#define DYNG_EINTERRUPTED (-DYNG__E_INTERRUPTED)

/* The message of a code ("out of memory"); "unknown error" for other values.
** The string is static. */
const char *dyng_strerror(int code);

/* The name of a code ("DYNG_ENOMEM"); "DYNG_OK" for 0.  The string is static. */
const char *dyng_err_name(int code);

#endif /* DYNG_ERROR_H */
