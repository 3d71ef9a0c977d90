/*
** engine/error.c: names and messages of the engine's error codes, generated
** from the list DYNG_ERRNO_MAP in engine/errcode.h.
*/
#include "engine/error.h"

const char *dyng_strerror(int code) {
  switch (code) {
  case DYNG_OK:
    return "no error";
#define DYNG__ERRNO_MSG(name, number, msg) \
  case DYNG_E##name:               \
    return msg;
    DYNG_ERRNO_MAP(DYNG__ERRNO_MSG)
#undef DYNG__ERRNO_MSG
  default:
    return "unknown error";
  }
}

const char *dyng_err_name(int code) {
  switch (code) {
  case DYNG_OK:
    return "DYNG_OK";
#define DYNG__ERRNO_NAME(name, number, msg) \
  case DYNG_E##name:                \
    return "DYNG_E" #name;
    DYNG_ERRNO_MAP(DYNG__ERRNO_NAME)
#undef DYNG__ERRNO_NAME
  default:
    return "DYNG_EUNKNOWN";
  }
}
