/*
** engine/error.h: the names and messages of the engine's error codes
** (the list: DYNG_ERRNO_MAP in engine/errcode.h).
*/
#ifndef DYNG_ERROR_H
#define DYNG_ERROR_H

#include "engine/errcode.h"

/* The message of a code ("out of memory"); "unknown error" for other values.
** The string is static. */
const char *dyng_strerror(int code);

/* The name of a code ("DYNG_ENOMEM"); "DYNG_OK" for 0.  The string is static. */
const char *dyng_err_name(int code);

#endif /* DYNG_ERROR_H */
