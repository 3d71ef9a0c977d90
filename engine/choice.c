/*
** engine/choice.c: discovery of the driver, the devices and the backend
** plugins, and the one decision of which backend a graph runs on.
**
** The steps of discovery (D1-D4) and the rules of the choice (R1-R8) are
** listed in engine/choice.h.  How it works: dyng__discover() reads the
** environment, the driver, the devices and every plugin's description into
** a dyng_discovery (I/O only), then dyng_choice_settle() judges and ranks
** the plugins; dyng_choose() answers a graph's question from that record,
** starting the selected plugin when asked to.  The process's record is one
** static behind a mutex; tests pass their own record instead.
*/
#include "engine/choice.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The process's discovery, under dyng__mutex. */
static dyng_discovery dyng__found;
static pthread_mutex_t dyng__mutex = PTHREAD_MUTEX_INITIALIZER;

static void dyng__warn(const dyng_choice_hooks *hooks, const char *fmt, ...) {
  if (!hooks || !hooks->warn) return;
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  hooks->warn(hooks->ctx, message);
}

static const char *dyng__basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void dyng_discovery_init(dyng_discovery *d) {
  memset(d, 0, sizeof *d);
  d->done = 1;
  d->i_device = -1;
  d->i_started = -1;
  d->device_source = "none";
}

/* ---- the environment (D1) ------------------------------------------------ */

/* Reads a boolean variable: 0 with *on set, or -1 when its value means
** neither (then *on is 0). */
static int dyng__env_bool(const char *name, int *on) {
  const char *z = getenv(name);
  *on = 0;
  if (!z || !*z) return 0;
  static const char *const on_words[] = {"1", "true", "yes", "on"};
  static const char *const off_words[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(z, on_words[i]) == 0) return *on = 1, 0;
    if (strcasecmp(z, off_words[i]) == 0) return 0;
  }
  return -1;
}

/* ---- the driver (D2) ----------------------------------------------------- */

typedef int (*dyng__cu_driver_get_version)(int *);
typedef int (*dyng__cu_init)(unsigned);
typedef int (*dyng__cu_device_get_count)(int *);
typedef int (*dyng__cu_device_get)(int *, int);
typedef int (*dyng__cu_device_get_name)(char *, int, int);
typedef int (*dyng__cu_device_get_attribute)(int *, int, int);
typedef int (*dyng__cu_device_total_mem)(size_t *, int);

#define DYNG__CU_CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define DYNG__CU_CC_MINOR 76 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */

static void dyng__find_driver(dyng_discovery *d) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *z = dlerror();
    snprintf(d->driver_note, sizeof d->driver_note, "no NVIDIA driver: %s",
             z ? z : "libcuda.so.1 not found");
    return;
  }
  dyng__cu_driver_get_version get_version = (dyng__cu_driver_get_version)dlsym(h, "cuDriverGetVersion");
  int v = 0;
  if (!get_version) {
    snprintf(d->driver_note, sizeof d->driver_note, "libcuda.so.1 has no cuDriverGetVersion");
  } else if (get_version(&v) != 0 || v <= 0) {
    snprintf(d->driver_note, sizeof d->driver_note, "cuDriverGetVersion failed");
    v = 0;
  } else {
    snprintf(d->driver_note, sizeof d->driver_note, "cuDriverGetVersion through libcuda.so.1");
  }
  d->driver_version = v;
  /* Kept loaded: the devices may have to be read through it, and a plugin
  ** will load it again anyway. */
}

/* ---- devices (D3) -------------------------------------------------------- */

/* CUDA_VISIBLE_DEVICES as CUDA reads it: a comma list of indices or UUID
** prefixes ("GPU-..."), up to the first entry that matches nothing.  Fills
** pick with indices into the n devices of all (in the listed order) and
** returns how many; all of them, in order, when the variable is unset. */
static int dyng__visible(const dyng_device *all, int n, int *pick) {
  const char *z = getenv("CUDA_VISIBLE_DEVICES");
  if (!z) {
    for (int i = 0; i < n; i++) pick[i] = i;
    return n;
  }
  int n_pick = 0;
  while (*z && n_pick < n) {
    while (*z == ' ') z++;
    const char *end = z;
    while (*end && *end != ',') end++;
    int len = (int)(end - z), found = -1;
    while (len > 0 && z[len - 1] == ' ') len--;
    if (len > 0 && (isdigit((unsigned char)z[0]) || z[0] == '-')) {
      char *stop = NULL;
      long i = strtol(z, &stop, 10);
      if (stop == z + len && i >= 0 && i < n) found = (int)i;
    } else if (len > 0) {
      for (int i = 0; i < n && found < 0; i++)
        if (strncmp(all[i].uuid, z, (size_t)len) == 0) found = i;
    }
    if (found < 0) break; /* CUDA ignores the rest of the list */
    for (int j = 0; j < n_pick; j++)
      if (pick[j] == found) found = -1; /* listed twice: CUDA refuses the list */
    if (found < 0) return 0;
    pick[n_pick++] = found;
    z = *end ? end + 1 : end;
  }
  return n_pick;
}

typedef int (*dyng__nvml_init)(void);
typedef int (*dyng__nvml_shutdown)(void);
typedef int (*dyng__nvml_get_count)(unsigned *);
typedef int (*dyng__nvml_get_handle)(unsigned, void **);
typedef int (*dyng__nvml_get_name)(void *, char *, unsigned);
typedef int (*dyng__nvml_get_uuid)(void *, char *, unsigned);
typedef int (*dyng__nvml_get_cc)(void *, int *, int *);
typedef struct {
  unsigned long long total, free, used;
} dyng__nvml_memory;
typedef int (*dyng__nvml_get_memory)(void *, dyng__nvml_memory *);

/* Reads the devices through NVML into all[0 .. *pn); 0 when NVML is not
** there (d->device_note may say why). */
static int dyng__devices_from_nvml(dyng_discovery *d, dyng_device *all, int *pn) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
  dyng__nvml_init x_init = (dyng__nvml_init)dlsym(h, "nvmlInit_v2");
  dyng__nvml_shutdown x_shutdown = (dyng__nvml_shutdown)dlsym(h, "nvmlShutdown");
  dyng__nvml_get_count x_count = (dyng__nvml_get_count)dlsym(h, "nvmlDeviceGetCount_v2");
  dyng__nvml_get_handle x_handle = (dyng__nvml_get_handle)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  dyng__nvml_get_name x_name = (dyng__nvml_get_name)dlsym(h, "nvmlDeviceGetName");
  dyng__nvml_get_uuid x_uuid = (dyng__nvml_get_uuid)dlsym(h, "nvmlDeviceGetUUID");
  dyng__nvml_get_cc x_cc = (dyng__nvml_get_cc)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
  dyng__nvml_get_memory x_memory = (dyng__nvml_get_memory)dlsym(h, "nvmlDeviceGetMemoryInfo");
  if (!x_init || !x_shutdown || !x_count || !x_handle || !x_name || !x_cc || !x_memory) {
    snprintf(d->device_note, sizeof d->device_note, "libnvidia-ml.so.1 lacks functions dyng needs");
    dlclose(h);
    return 0;
  }
  int rc = x_init();
  if (rc != 0) {
    snprintf(d->device_note, sizeof d->device_note, "nvmlInit failed (NVML error %d)", rc);
    dlclose(h);
    return 0;
  }
  unsigned n = 0;
  if (x_count(&n) != 0) n = 0;
  if (n > DYNG_CHOICE_MAX_DEVICES) n = DYNG_CHOICE_MAX_DEVICES;
  int m = 0;
  for (unsigned i = 0; i < n; i++) {
    void *dev = NULL;
    dyng_device *x = &all[m];
    memset(x, 0, sizeof *x);
    if (x_handle(i, &dev) != 0) continue;
    if (x_name(dev, x->name, sizeof x->name) != 0) snprintf(x->name, sizeof x->name, "device %u", i);
    if (!x_uuid || x_uuid(dev, x->uuid, sizeof x->uuid) != 0) x->uuid[0] = 0;
    int major = 0, minor = 0;
    if (x_cc(dev, &major, &minor) == 0) x->cc = major * 10 + minor;
    dyng__nvml_memory mem = {0, 0, 0};
    if (x_memory(dev, &mem) == 0) x->memory = (long long)mem.total;
    m++;
  }
  x_shutdown();
  dlclose(h);
  *pn = m;
  return 1;
}

/* The last resort: cuInit and the driver API.  A process that has run
** cuInit cannot use CUDA in a child it forks later. */
static void dyng__devices_from_cuinit(dyng_device *all, int *pn) {
  *pn = 0;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  dyng__cu_init x_init = (dyng__cu_init)dlsym(h, "cuInit");
  dyng__cu_device_get_count x_count = (dyng__cu_device_get_count)dlsym(h, "cuDeviceGetCount");
  dyng__cu_device_get x_get = (dyng__cu_device_get)dlsym(h, "cuDeviceGet");
  dyng__cu_device_get_name x_name = (dyng__cu_device_get_name)dlsym(h, "cuDeviceGetName");
  dyng__cu_device_get_attribute x_attr = (dyng__cu_device_get_attribute)dlsym(h, "cuDeviceGetAttribute");
  dyng__cu_device_total_mem x_mem = (dyng__cu_device_total_mem)dlsym(h, "cuDeviceTotalMem_v2");
  int n = 0;
  if (!x_init || !x_count || !x_get || !x_name || !x_attr || x_init(0) != 0 || x_count(&n) != 0) {
    dlclose(h);
    return;
  }
  if (n > DYNG_CHOICE_MAX_DEVICES) n = DYNG_CHOICE_MAX_DEVICES;
  /* CUDA_VISIBLE_DEVICES already applied by the driver. */
  for (int i = 0; i < n; i++) {
    dyng_device *x = &all[i];
    memset(x, 0, sizeof *x);
    int dev = 0, major = 0, minor = 0;
    size_t mem = 0;
    if (x_get(&dev, i) != 0) continue;
    if (x_name(x->name, (int)sizeof x->name, dev) != 0) snprintf(x->name, sizeof x->name, "device %d", i);
    x_attr(&major, DYNG__CU_CC_MAJOR, dev);
    x_attr(&minor, DYNG__CU_CC_MINOR, dev);
    x->cc = major * 10 + minor;
    if (x_mem && x_mem(&mem, dev) == 0) x->memory = (long long)mem;
    x->ordinal = i;
  }
  *pn = n;
  /* The driver stays loaded: it has been initialized. */
}

static void dyng__find_devices(dyng_discovery *d) {
  dyng_device all[DYNG_CHOICE_MAX_DEVICES];
  int n = 0, pick[DYNG_CHOICE_MAX_DEVICES];
  if (dyng__devices_from_nvml(d, all, &n)) {
    d->device_source = "nvml";
    int m = dyng__visible(all, n, pick);
    for (int i = 0; i < m; i++) {
      d->device[i] = all[pick[i]];
      d->device[i].ordinal = i;
    }
    d->n_device = m;
  } else if (d->driver_version) {
    d->device_source = "cuInit";
    if (!d->device_note[0])
      snprintf(d->device_note, sizeof d->device_note,
               "NVML (libnvidia-ml.so.1) not found: devices read after cuInit, so a child "
               "forked from now on cannot use CUDA");
    dyng__devices_from_cuinit(d->device, &d->n_device);
  } else {
    d->device_source = "none";
  }
}

/* ---- plugins (D4) -------------------------------------------------------- */

/* The major in a file name dyng_cuda<MAJOR>.so, or -1 when it is not one. */
static int dyng__plugin_major(const char *file) {
  size_t n_pre = strlen(DYNG_PLUGIN_PREFIX), n_suf = strlen(DYNG_PLUGIN_SUFFIX), n = strlen(file);
  if (n <= n_pre + n_suf || strncmp(file, DYNG_PLUGIN_PREFIX, n_pre) != 0 ||
      strcmp(file + n - n_suf, DYNG_PLUGIN_SUFFIX) != 0)
    return -1;
  int major = 0;
  for (size_t i = n_pre; i < n - n_suf; i++) {
    if (!isdigit((unsigned char)file[i]) || major > 1000) return -1;
    major = major * 10 + (file[i] - '0');
  }
  return major;
}

/* Adds the plugins of folder dir (a path already seen is skipped). */
static void dyng__scan_folder(dyng_discovery *d, const char *dir) {
  DIR *folder = opendir(dir);
  if (!folder) return;
  struct dirent *e;
  while ((e = readdir(folder)) != NULL && d->n_plugin < DYNG_CHOICE_MAX_PLUGINS) {
    int major = dyng__plugin_major(e->d_name);
    if (major < 0) continue;
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(n);
    if (!path) continue;
    snprintf(path, n, "%s/%s", dir, e->d_name);
    char *real = realpath(path, NULL);
    free(path);
    if (!real) continue;
    int seen = 0;
    for (int i = 0; i < d->n_plugin && !seen; i++) seen = strcmp(d->plugin[i].path, real) == 0;
    if (seen) {
      free(real);
      continue;
    }
    dyng_plugin_found *p = &d->plugin[d->n_plugin++];
    memset(p, 0, sizeof *p);
    p->path = real;
    p->name_major = major;
    snprintf(p->name, sizeof p->name, "cuda%d", major);
  }
  closedir(folder);
}

/* Scans the folder this library (dyng.so) was loaded from. */
static void dyng__scan_own_folder(dyng_discovery *d) {
  Dl_info info;
  if (!dladdr((void *)dyng__scan_own_folder, &info) || !info.dli_fname) return;
  char *self = strdup(info.dli_fname);
  char *slash = self ? strrchr(self, '/') : NULL;
  if (slash) {
    *slash = 0;
    dyng__scan_folder(d, self[0] ? self : "/");
  } else if (self) {
    dyng__scan_folder(d, ".");
  }
  free(self);
}

/* DYNG_PLUGIN_PATH, when set, lists the folders to look in instead of the
** one dyng.so was loaded from; an empty entry stands for that one. */
static void dyng__find_plugins(dyng_discovery *d) {
  const char *plugin_path = getenv("DYNG_PLUGIN_PATH");
  if (!plugin_path) {
    dyng__scan_own_folder(d);
    return;
  }
  char *copy = strdup(plugin_path);
  for (char *z = copy; z;) {
    char *next = strchr(z, ':');
    if (next) *next++ = 0;
    if (*z) dyng__scan_folder(d, z);
    else dyng__scan_own_folder(d);
    z = next;
  }
  free(copy);
}

/* Loads one plugin and runs its entry point, without starting it. */
static void dyng__load_plugin(dyng_plugin_found *p) {
  p->state = DYNG_PLUGIN_UNUSABLE;
  void *h = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *z = dlerror();
    snprintf(p->reason, sizeof p->reason, "cannot be loaded: %s", z ? z : "dlopen failed");
    snprintf(p->brief, sizeof p->brief, "not loadable");
    return;
  }
  dyng_plugin_entry_fn entry = (dyng_plugin_entry_fn)dlsym(h, DYNG_PLUGIN_ENTRY);
  p->loaded = 1;
  p->handle = h;
  p->entry = entry ? entry() : NULL;
}

/* Marks p unusable with a reason and a brief; frees its module when
** nothing of it may be read any more (forget).  Returns 0. */
static int dyng__refuse(dyng_plugin_found *p, int forget, const char *brief, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->reason, sizeof p->reason, fmt, ap);
  va_end(ap);
  snprintf(p->brief, sizeof p->brief, "%s", brief);
  p->state = DYNG_PLUGIN_UNUSABLE;
  if (forget) {
    if (p->handle) dlclose(p->handle);
    p->handle = NULL;
    p->entry = NULL;
  }
  return 0;
}

/* R1: judges one loaded plugin against this dyng, the driver and the
** devices.  Only abi and version are read before they are known to match.
** Returns 1 when it is usable. */
static int dyng__judge_plugin(const dyng_discovery *d, dyng_plugin_found *p) {
  if (!p->loaded) return 0; /* dyng__load_plugin gave the reason */
  const dyng_plugin *e = p->entry;
  if (!e) return dyng__refuse(p, 1, "no entry point", "not a dyng plugin: no %s", DYNG_PLUGIN_ENTRY);
  p->abi = e->abi;
  snprintf(p->version, sizeof p->version, "%s", e->version ? e->version : "");
  if (e->abi != DYNG_BACKEND_ABI) {
    char brief[32];
    snprintf(brief, sizeof brief, "ABI %d", e->abi);
    return dyng__refuse(p, 1, brief, "built for backend ABI %d; this dyng has ABI %d", e->abi,
                        DYNG_BACKEND_ABI);
  }
  if (!e->version || strcmp(e->version, PACKAGE_VERSION) != 0) {
    char brief[48];
    snprintf(brief, sizeof brief, "dyng %.30s", p->version);
    return dyng__refuse(p, 1, brief, "built for dyng %s; this is dyng %s", p->version, PACKAGE_VERSION);
  }
  p->desc = e;
  p->cuda_major = e->cuda_major;
  p->cuda_runtime = e->cuda_runtime;
  snprintf(p->archs, sizeof p->archs, "%s", e->archs ? e->archs : "");
  if (e->cuda_major != p->name_major) {
    char brief[48];
    snprintf(brief, sizeof brief, "built with CUDA %d", e->cuda_major);
    return dyng__refuse(p, 0, brief, "its name says CUDA %d but it was built with CUDA %d", p->name_major,
                        e->cuda_major);
  }
  if (!e->init || !e->backend)
    return dyng__refuse(p, 0, "incomplete", "incomplete description (no init or backend)");
  int drv = d->driver_version;
  if (!drv) return dyng__refuse(p, 0, "no driver", "%s", d->driver_note);
  if (e->cuda_major > drv / 1000)
    return dyng__refuse(p, 0, "driver too old", "needs a driver for CUDA %d; the driver supports CUDA %d.%d",
                        e->cuda_major, drv / 1000, drv % 1000 / 10);
  if (d->i_device < 0) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!d->n_device)
      return dyng__refuse(p, 0, "no usable device", "no visible CUDA device%s%s%s",
                          visible ? " (CUDA_VISIBLE_DEVICES=" : "", visible ? visible : "", visible ? ")" : "");
    const dyng_device *x = &d->device[0];
    return dyng__refuse(p, 0, "no usable device", "no device of compute capability %d.%d or newer (%s is %d.%d)",
                        DYNG_MIN_COMPUTE_CAPABILITY / 10, DYNG_MIN_COMPUTE_CAPABILITY % 10, x->name,
                        x->cc / 10, x->cc % 10);
  }
  p->state = DYNG_PLUGIN_AVAILABLE;
  snprintf(p->reason, sizeof p->reason, "usable with the CUDA %d.%d driver", drv / 1000, drv % 1000 / 10);
  return 1;
}

/* R2: usable ones first, the driver's own major first, then newer majors
** before older. */
static int dyng__plugin_rank(const dyng_discovery *d, const dyng_plugin_found *p) {
  if (p->state == DYNG_PLUGIN_UNUSABLE) return -1;
  return p->cuda_major == d->driver_version / 1000 ? 100000 : p->cuda_major;
}

/* Warns, once, why no plugin is used, naming each one with its reason in a
** few words (a logged message may be cut at about 200 bytes; the full
** reasons are in the report). */
static void dyng__warn_unusable(dyng_discovery *d, const dyng_choice_hooks *hooks) {
  if (d->warned || !d->n_plugin) return;
  d->warned = 1;
  char list[900] = "";
  size_t len = 0;
  for (int i = 0; i < d->n_plugin && len < sizeof list; i++) {
    const dyng_plugin_found *p = &d->plugin[i];
    int n = snprintf(list + len, sizeof list - len, "%s %s (%s)", i ? "," : "", dyng__basename(p->path), p->brief);
    if (n > 0) len += (size_t)n;
  }
  dyng__warn(hooks, "dyng: no usable GPU plugin, using the CPU:%s; see dyng_config('plugins')", list);
}

void dyng_choice_settle(dyng_discovery *d, const dyng_choice_hooks *hooks) {
  if (d->cpu_only) {
    snprintf(d->no_gpu, sizeof d->no_gpu, "DYNG_CPU_ONLY is set");
    return;
  }
  d->i_device = -1;
  for (int i = 0; i < d->n_device && d->i_device < 0; i++)
    if (d->device[i].cc >= DYNG_MIN_COMPUTE_CAPABILITY) d->i_device = i;
  for (int i = 0; i < d->n_plugin; i++) dyng__judge_plugin(d, &d->plugin[i]);
  for (int i = 1; i < d->n_plugin; i++) {
    dyng_plugin_found x = d->plugin[i];
    int j = i;
    while (j > 0 && dyng__plugin_rank(d, &d->plugin[j - 1]) < dyng__plugin_rank(d, &x)) {
      d->plugin[j] = d->plugin[j - 1];
      j--;
    }
    d->plugin[j] = x;
  }
  if (d->n_plugin && d->plugin[0].state == DYNG_PLUGIN_AVAILABLE) d->plugin[0].state = DYNG_PLUGIN_SELECTED;
  if (!d->n_plugin) {
    snprintf(d->no_gpu, sizeof d->no_gpu, "no GPU backend plugin (%s*%s) is installed", DYNG_PLUGIN_PREFIX,
             DYNG_PLUGIN_SUFFIX);
  } else if (d->plugin[0].state != DYNG_PLUGIN_SELECTED) {
    snprintf(d->no_gpu, sizeof d->no_gpu, "no plugin is usable: %s", d->plugin[0].reason);
    dyng__warn_unusable(d, hooks);
  }
}

/* D1-D4 into d (once), then dyng_choice_settle. */
static void dyng__discover(dyng_discovery *d, const dyng_choice_hooks *hooks) {
  if (d->done) return;
  dyng_discovery_init(d);
  int on = 0;
  if (dyng__env_bool("DYNG_CPU_ONLY", &on) < 0) {
    snprintf(d->env_note, sizeof d->env_note, "DYNG_CPU_ONLY='%s' is not a boolean and was ignored",
             getenv("DYNG_CPU_ONLY"));
    dyng__warn(hooks, "dyng: %s (use 1/true/yes/on or 0/false/no/off)", d->env_note);
  }
  d->cpu_only = on;
  if (dyng__env_bool("DYNG_REQUIRE_CUDA", &on) < 0)
    dyng__warn(hooks, "dyng: DYNG_REQUIRE_CUDA='%s' is not a boolean and was ignored",
               getenv("DYNG_REQUIRE_CUDA"));
  d->require_cuda = on;
  if (!d->cpu_only) {
    dyng__find_driver(d);
    if (d->driver_version) dyng__find_devices(d);
    dyng__find_plugins(d);
    for (int i = 0; i < d->n_plugin; i++) dyng__load_plugin(&d->plugin[i]);
  }
  dyng_choice_settle(d, hooks);
}

/* ---- the decision (R3-R8) ------------------------------------------------ */

/* What a started plugin borrows from dyng (engine/plugin.h). */
static const dyng_host dyng__host = {dyng_parallel_ranges};

/* R6 and R7: starts the selected plugin, passing to the next on failure.
** Returns the started plugin's index, or -1 with d->no_gpu saying why. */
static int dyng__start(dyng_discovery *d, long pid, const dyng_choice_hooks *hooks) {
  if (d->i_started >= 0) {
    if (d->start_pid == pid) return d->i_started;
    snprintf(d->no_gpu, sizeof d->no_gpu, "%s", DYNG_FORK_REMEDY);
    return -1;
  }
  int n_tried = 0;
  for (int i = 0; i < d->n_plugin; i++) {
    dyng_plugin_found *p = &d->plugin[i];
    if (p->state == DYNG_PLUGIN_UNUSABLE || p->tried) continue;
    p->tried = 1;
    n_tried++;
    char err[DYNG_CHOICE_REASON] = "";
    int rc = p->desc->init(d->device[d->i_device].ordinal, &dyng__host, err, sizeof err);
    const dyng_backend *be = p->desc->backend;
    if (rc == 0 && !be->tree_fetch != !be->tree_path) {
      /* The host could not read the rows of its trees. */
      rc = -1;
      snprintf(err, sizeof err, "its backend has only one of tree_fetch and tree_path");
    }
    if (rc == 0) {
      const dyng_device *x = &d->device[d->i_device];
      char started[DYNG_CHOICE_REASON]; /* x may alias d for the compiler */
      snprintf(started, sizeof started, "started on %s (compute capability %d.%d)", x->name, x->cc / 10,
               x->cc % 10);
      memcpy(p->reason, started, sizeof started);
      p->state = DYNG_PLUGIN_SELECTED;
      d->i_started = i;
      d->start_pid = pid;
      return i;
    }
    p->state = DYNG_PLUGIN_UNUSABLE;
    /* err is at most as long as reason: say so to the compiler. */
    snprintf(p->reason, sizeof p->reason, "failed to start: %.*s", (int)sizeof p->reason - 20,
             err[0] ? err : "init failed");
    snprintf(p->brief, sizeof p->brief, "failed to start");
    if (i + 1 < d->n_plugin && d->plugin[i + 1].state == DYNG_PLUGIN_AVAILABLE)
      d->plugin[i + 1].state = DYNG_PLUGIN_SELECTED;
  }
  if (n_tried) {
    snprintf(d->no_gpu, sizeof d->no_gpu, "no plugin could be started: %s", d->plugin[0].reason);
    dyng__warn_unusable(d, hooks);
  }
  return -1;
}

/* R6 for a preview: the selected plugin, started or not, unless another
** process started it; -1 with d->no_gpu saying why otherwise. */
static int dyng__selected(dyng_discovery *d, long pid) {
  if (d->i_started >= 0 && d->start_pid != pid) {
    snprintf(d->no_gpu, sizeof d->no_gpu, "%s", DYNG_FORK_REMEDY);
    return -1;
  }
  for (int i = 0; i < d->n_plugin; i++)
    if (d->plugin[i].state == DYNG_PLUGIN_SELECTED) return i;
  return -1;
}

static int dyng__decide(const dyng_choice_request *req, dyng_discovery *d, dyng_choice *out) {
  long pid = req->pid ? req->pid : (long)getpid();
  snprintf(out->name, sizeof out->name, "cpu");
  out->backend = dyng_backend_cpu();
  out->required = req->pref == DYNG_PREF_CUDA || (req->pref == DYNG_PREF_AUTO && d->require_cuda);
  if (req->pref == DYNG_PREF_CPU) {
    snprintf(out->reason, sizeof out->reason, "the CPU was asked for");
    return 0;
  }
  if (d->cpu_only && !out->required) {
    snprintf(out->reason, sizeof out->reason, "DYNG_CPU_ONLY is set");
    return 0;
  }
  int i = d->cpu_only ? -1 : req->start ? dyng__start(d, pid, req->hooks) : dyng__selected(d, pid);
  if (i >= 0) {
    const dyng_plugin_found *p = &d->plugin[i];
    snprintf(out->name, sizeof out->name, "%s", p->name);
    out->backend = p->tried ? p->desc->backend : NULL;
    snprintf(out->reason, sizeof out->reason, "%s %s%s", dyng__basename(p->path),
             p->tried ? "" : "selected, started by the first graph that uses it; ", p->reason);
    return 0;
  }
  if (out->required) {
    snprintf(out->name, sizeof out->name, "none");
    out->backend = NULL;
    out->refused = 1;
    snprintf(out->reason, sizeof out->reason, "CUDA was required (%s) but cannot be used: %s",
             req->pref == DYNG_PREF_CUDA ? "backend 'cuda'" : "DYNG_REQUIRE_CUDA", d->no_gpu);
    return DYNG_EBACKEND;
  }
  snprintf(out->reason, sizeof out->reason, "%s", d->no_gpu);
  return 0;
}

int dyng_choose(const dyng_choice_request *req, dyng_choice *out) {
  memset(out, 0, sizeof *out);
  if (req->found) return dyng__decide(req, req->found, out);
  pthread_mutex_lock(&dyng__mutex);
  dyng__discover(&dyng__found, req->hooks);
  int rc = dyng__decide(req, &dyng__found, out);
  pthread_mutex_unlock(&dyng__mutex);
  return rc;
}

void dyng_choice_report(void (*visit)(const dyng_discovery *d, void *ctx), void *ctx,
                        const dyng_choice_hooks *hooks) {
  pthread_mutex_lock(&dyng__mutex);
  dyng__discover(&dyng__found, hooks);
  visit(&dyng__found, ctx);
  pthread_mutex_unlock(&dyng__mutex);
}
