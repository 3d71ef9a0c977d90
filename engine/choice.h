/*
** engine/choice.h: finding the GPU and the backend plugins, and choosing the
** backend a graph runs on.  No SQLite: ext/backends.c asks dyng_choose() and
** reports what dyng_choice_report() shows.
**
** Discovery runs once per process, on first need, and never initializes
** CUDA (so that a process may still fork and use CUDA in the child):
**
**   D1. DYNG_CPU_ONLY and DYNG_REQUIRE_CUDA are read as booleans (1/true/
**       yes/on; 0/false/no/off or empty; anything else is ignored with a
**       warning).  With DYNG_CPU_ONLY set nothing below runs.
**   D2. The driver's CUDA version comes from cuDriverGetVersion, looked up
**       with dlopen("libcuda.so.1"); cuDriverGetVersion needs no cuInit.
**   D3. Devices, their compute capability and memory come from NVML
**       (libnvidia-ml.so.1), filtered by CUDA_VISIBLE_DEVICES.  Only when
**       NVML is missing does cuInit run, as the last resort.
**   D4. Plugins dyng_cuda<MAJOR>.so are looked for in the folder dyng.so was
**       loaded from, or in the folders of DYNG_PLUGIN_PATH (an empty entry
**       stands for dyng.so's folder).  Each one's description
**       (engine/plugin.h) is read without starting it.
**
** The rules, each written once, in the order they apply:
**
**   R1. A plugin is unusable when it cannot be loaded, has no entry point,
**       was built for another backend ABI or dyng version, its file name's
**       major differs from the CUDA it was built with, its description lacks
**       init or backend, there is no driver, the driver's CUDA major is
**       older than the plugin's, or no visible device has compute capability
**       DYNG_MIN_COMPUTE_CAPABILITY or newer (dyng_choice_settle).
**   R2. Ranking: usable plugins first; among them the driver's own major
**       first, then newer majors before older (a stable order).  The first
**       usable one is "selected"; the first device new enough is the one a
**       plugin is started on.
**   R3. Preference: a graph's backend= option, else its connection's
**       dyng_config('backend', ...), is "auto", "cpu" or "cuda".  "cpu"
**       always gets the CPU.
**   R4. CUDA is required when the preference is "cuda", or it is "auto" and
**       DYNG_REQUIRE_CUDA is set.
**   R5. DYNG_CPU_ONLY gives the CPU unless CUDA is required (then R8).
**   R6. Fork: a plugin started by another process (this one is a child
**       forked after its parent started CUDA) is never used here.
**   R7. The selected plugin is started (its init) by the first graph that
**       wants it; one that fails is unusable with its reason and the next
**       usable one is tried.  A preview starts nothing.
**   R8. No plugin running: an error when CUDA is required ("CUDA was
**       required (...) but cannot be used: <why>"), else the CPU with why.
**
** When plugins exist but none can be used, one warning (through the hooks)
** names each plugin with its reason in a few words; when there are none,
** dyng stays silent.  The process's discovery is kept behind a mutex.
*/
#ifndef DYNG_CHOICE_H
#define DYNG_CHOICE_H

#include <stddef.h>

#include "engine/backend.h"
#include "engine/plugin.h"

/* DYNG_MIN_COMPUTE_CAPABILITY (R1) and DYNG_FORK_REMEDY (R6) are in
** engine/plugin.h: the plugins apply them too. */

#define DYNG_CHOICE_REASON 320      /* bytes of a reason */
#define DYNG_CHOICE_MAX_DEVICES 64
#define DYNG_CHOICE_MAX_PLUGINS 32

/* Preferences (R3). */
#define DYNG_PREF_AUTO 0
#define DYNG_PREF_CPU 1
#define DYNG_PREF_CUDA 2

/* Where warnings go (ext/ hands them to sqlite3_log); warn may be NULL. */
typedef struct dyng_choice_hooks {
  void (*warn)(void *ctx, const char *message);
  void *ctx;
} dyng_choice_hooks;

typedef struct dyng_device {
  char name[96];
  char uuid[96];
  int cc;                   /* major * 10 + minor */
  long long memory;         /* bytes */
  int ordinal;              /* ordinal among the visible devices */
} dyng_device;

/* A plugin's state (R1, R2, R7). */
enum { DYNG_PLUGIN_UNUSABLE = 0, DYNG_PLUGIN_AVAILABLE = 1, DYNG_PLUGIN_SELECTED = 2 };

typedef struct dyng_plugin_found {
  char *path;               /* malloc'd by discovery; set by hand in tests */
  int name_major;           /* the major in its file name */
  int loaded;               /* its file loaded and its entry point ran */
  void *handle;             /* dlopen's handle while it is kept loaded */
  const dyng_plugin *entry; /* what its entry point returned (NULL: none) */
  const dyng_plugin *desc;  /* entry, once its ABI and version match */
  char version[32];         /* copied from entry (or empty) */
  int abi, cuda_major, cuda_runtime;
  char archs[160];
  int state;                /* DYNG_PLUGIN_... */
  char reason[DYNG_CHOICE_REASON];
  int tried;                /* init was called */
  char name[16];            /* its backend's name, "cuda<MAJOR>" */
  char brief[48];           /* the reason in a few words, for the warning */
} dyng_plugin_found;

/* Everything discovery found, and what was started since. */
typedef struct dyng_discovery {
  int done;                 /* discovery ran */
  int cpu_only;             /* DYNG_CPU_ONLY says so */
  int require_cuda;         /* DYNG_REQUIRE_CUDA says so */
  char env_note[DYNG_CHOICE_REASON];    /* a word about an ignored variable */
  int driver_version;       /* cuDriverGetVersion; 0: none */
  char driver_note[DYNG_CHOICE_REASON]; /* why none, or how it was read */
  const char *device_source; /* "nvml", "cuInit" or "none" */
  char device_note[DYNG_CHOICE_REASON];
  int n_device;
  dyng_device device[DYNG_CHOICE_MAX_DEVICES];
  int i_device;             /* the device a plugin is started on; -1: none */
  int n_plugin;
  dyng_plugin_found plugin[DYNG_CHOICE_MAX_PLUGINS];
  int i_started;            /* the plugin running; -1: none */
  long start_pid;           /* the process that started it */
  char no_gpu[DYNG_CHOICE_REASON + 64]; /* why there is no GPU backend */
  int warned;               /* the one warning was given */
} dyng_discovery;

/* An empty discovery: no driver, no device, no plugin, done. */
void dyng_discovery_init(dyng_discovery *d);

/* Judges every plugin of d (R1), ranks them (R2), picks the device and says
** why there is no GPU backend when there is none (warning once through
** hooks when plugins exist but none is usable).  Discovery calls it; a test
** fills a dyng_discovery by hand and calls it. */
void dyng_choice_settle(dyng_discovery *d, const dyng_choice_hooks *hooks);

/* The question. */
typedef struct dyng_choice_request {
  int pref;                 /* DYNG_PREF_... (R3) */
  int start;                /* 1: start the plugin chosen (R7); 0: a preview */
  dyng_discovery *found;    /* NULL: the process's own, discovered on first
                            ** need under its mutex */
  long pid;                 /* the asking process; 0: getpid() */
  const dyng_choice_hooks *hooks; /* may be NULL */
} dyng_choice_request;

/* The answer. */
typedef struct dyng_choice {
  const dyng_backend *backend; /* the chosen one; NULL when refused, or a
                               ** preview's plugin not started yet */
  char name[16];            /* "cpu", "cuda<MAJOR>", or "none" when refused */
  int required;             /* CUDA is required (R4) */
  int refused;              /* required and cannot be used (R8) */
  char reason[800];         /* why */
} dyng_choice;

/* The one decision: applies R3-R8 to req and fills *out.  Returns 0, or
** DYNG_EBACKEND when CUDA is required and cannot be used (out->reason says
** why; a preview returns it too and starts nothing). */
int dyng_choose(const dyng_choice_request *req, dyng_choice *out);

/* Runs visit on the process's discovery (discovering first) under its
** mutex, for reporting. */
void dyng_choice_report(void (*visit)(const dyng_discovery *d, void *ctx), void *ctx,
                        const dyng_choice_hooks *hooks);

#endif /* DYNG_CHOICE_H */
