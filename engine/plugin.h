/*
** engine/plugin.h: what a backend plugin (dyng_cuda<MAJOR>.so) exports.
**
** A plugin exports exactly one symbol, DYNG_PLUGIN_ENTRY, a function that
** returns a static description of the plugin.  Calling it must not touch the
** GPU or initialize any runtime: dyng reads the description of every plugin
** it finds (to report it and to choose one) before it decides to use one.
** Only `init` starts the runtime, once, when the first graph needs the
** backend; a plugin whose `init` fails is passed over with its reason.
**
** The description's layout is fixed for every ABI: `abi` and `version` are
** read first, and a plugin whose ABI or dyng version differs from the host's
** is never used (nothing else of it is read).  Part of the plugin ABI
** (engine/backend.h lists its layout).
*/
#ifndef DYNG_PLUGIN_H
#define DYNG_PLUGIN_H

#include <stddef.h>

#include "engine/backend.h"

/* The name of the one exported symbol. */
#define DYNG_PLUGIN_ENTRY "dyng_plugin_entry"

/* File names: dyng_cuda<MAJOR>.so, next to dyng.so or in DYNG_PLUGIN_PATH. */
#define DYNG_PLUGIN_PREFIX "dyng_cuda"
#define DYNG_PLUGIN_SUFFIX ".so"

/* Rules the host and a plugin share (the host applies them before it
** starts a plugin; the plugin's init checks them again):
** the lowest compute capability a plugin is started on, major * 10 +
** minor, and what a child forked after its parent started CUDA is told. */
#define DYNG_MIN_COMPUTE_CAPABILITY 75
#define DYNG_FORK_REMEDY                                                                   \
  "CUDA was started in the parent before fork(); use CUDA only in the child, or start " \
  "the child with exec"

/* What the host lends a plugin, for as long as the process runs.
** parallel_for runs fn(ctx, begin, end) over the items [0, n) in ranges of
** `chunk` items, each starting at a multiple of chunk (the last may be
** shorter), on the host's threads (the calling one among them: the ones
** dyng's own loops use, so a process has one set of them), and returns when
** every range is done; fn cannot fail. */
typedef struct dyng_host {
  void (*parallel_for)(size_t n, size_t chunk, void (*fn)(void *ctx, size_t begin, size_t end),
                       void *ctx);
} dyng_host;

typedef struct dyng_plugin {
  int abi;                  /* DYNG_BACKEND_ABI it was built with */
  const char *version;      /* the dyng version it was built for */
  int cuda_major;           /* the CUDA toolkit's major, e.g. 13 */
  int cuda_runtime;         /* its runtime version, e.g. 13000 */
  const char *archs;        /* device code it carries, e.g. "sm_75,...,compute_120" */

  /* Starts the runtime on the device of ordinal `device` (among the visible
  ** ones), with what the host lends it.  Returns 0, or a negative DYNG_E...
  ** code with a sentence in err[0 .. n_err) saying why (no device, too old
  ** a driver, fork, ...).  Called at most once per process. */
  int (*init)(int device, const dyng_host *host, char *err, size_t n_err);

  /* The backend table; valid after a successful init. */
  const dyng_backend *backend;
} dyng_plugin;

typedef const dyng_plugin *(*dyng_plugin_entry_fn)(void);

#endif /* DYNG_PLUGIN_H */
