/*
** engine/errcode.h: the engine's error codes, each a pinned number.
**
** Every engine function and every backend table entry that can fail returns
** an int: 0 (DYNG_OK) on success, a negative DYNG_E... code on failure.  The
** codes are part of the plugin ABI (engine/backend.h): a plugin built
** against one list returns them to a host built against another, so each
** keeps its number for ever.  A new code takes the next unused number and is
** added at the end of DYNG_ERRCODE_LIST; tests/test_abi.c holds its own copy
** of the list and fails when a number moves.  Their messages live in
** engine/error.h.
*/
#ifndef DYNG_ERRCODE_H
#define DYNG_ERRCODE_H

#define DYNG_OK 0
#define DYNG_ENOMEM (-1)       /* out of memory (host or device) */
#define DYNG_EINVAL (-2)       /* invalid argument */
#define DYNG_ENOTFOUND (-3)    /* no such node, edge or graph */
#define DYNG_EWEIGHT (-4)      /* a weight outside 0 .. DYNG_MAX_WEIGHT */
#define DYNG_ETOOBIG (-5)      /* past a size limit */
#define DYNG_ESTATE (-6)       /* not allowed in the graph's present state */
#define DYNG_EBACKEND (-7)     /* the backend failed */
#define DYNG_EINTERRUPTED (-8) /* stopped by the caller's cancel hook */

/* Every code above but DYNG_OK, as X(NAME) for DYNG_E##NAME, in the order
** of their numbers. */
#define DYNG_ERRCODE_LIST(X) \
  X(NOMEM)                   \
  X(INVAL)                   \
  X(NOTFOUND)                \
  X(WEIGHT)                  \
  X(TOOBIG)                  \
  X(STATE)                   \
  X(BACKEND)                 \
  X(INTERRUPTED)

#endif /* DYNG_ERRCODE_H */
