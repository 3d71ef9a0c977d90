/*
** ext/backends.c: finding the GPU, the backend plugins, and choosing one.
**
**   DYNG_CPU_ONLY=1            never look for a GPU
**   DYNG_REQUIRE_CUDA=1        a graph that cannot run on CUDA is an error
**   DYNG_PLUGIN_PATH=dir:dir   folders to look for plugins in, instead of
**                              dyng.so's own (an empty entry stands for it)
**   SELECT dyng_config('backend', 'auto' | 'cpu' | 'cuda');  -- per connection
**   CREATE VIRTUAL TABLE g USING dyng(..., backend=cuda);   -- per graph
**
** Discovery runs once per process, on first need, and never initializes
** CUDA (so that a process may still fork and use CUDA in the child):
**
**   1. DYNG_CPU_ONLY is read as a boolean (1/true/yes/on; 0/false/no/off or
**      empty; anything else is ignored with a warning).
**   2. The driver's CUDA version comes from cuDriverGetVersion, looked up
**      with dlopen("libcuda.so.1"); cuDriverGetVersion needs no cuInit.
**   3. Devices, their compute capability and memory come from NVML
**      (libnvidia-ml.so.1), filtered by CUDA_VISIBLE_DEVICES.  Only when
**      NVML is missing does cuInit run, as the last resort.
**   4. Plugins dyng_cuda<MAJOR>.so are looked for next to dyng.so (or in
**      DYNG_PLUGIN_PATH).  Each one's description (engine/plugin.h) is read
**      without starting it; one built for another dyng version or backend
**      ABI is never used, nor one whose major the driver cannot run.  The
**      candidates are ranked: the driver's own major first, then the newest
**      older one.
**
** The first graph that wants the GPU starts the best candidate (its `init`);
** one that fails is marked unusable with its reason and the next is tried.
** When plugins exist but none can be used, one sqlite3_log warning names
** each plugin's reason; when there are none, dyng stays silent.  All of this
** is process-wide, behind a mutex; connections only choose between "cpu"
** and whatever the process could start.
*/
#include "ext/dyng_ext.h"
#include "engine/error.h"
#include "engine/plugin.h"

#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SQLITE_EXTENSION_INIT3

#define DYNG_MIN_CC 75     /* compute capability 7.5, as major * 10 + minor */
#define DYNG_MAX_DEVICES 64
#define DYNG_MAX_PLUGINS 32
#define DYNG_REASON 320    /* bytes of a reason */

typedef struct DyngDevice {
  char zName[96];
  char zUuid[96];
  int cc;                  /* major * 10 + minor */
  sqlite3_int64 nMemory;   /* bytes */
  int iOrdinal;            /* ordinal among the visible devices */
} DyngDevice;

enum { DYNG_PLUGIN_UNUSABLE = 0, DYNG_PLUGIN_AVAILABLE = 1, DYNG_PLUGIN_SELECTED = 2 };

typedef struct DyngPlugin {
  char *zPath;             /* malloc'd */
  int nameMajor;           /* the major in its file name */
  const dyng_plugin *pDesc; /* its description, when it could be read */
  char zVersion[32];       /* copied from pDesc (or empty) */
  int abi, cudaMajor, cudaRuntime;
  char zArchs[160];
  int eState;              /* DYNG_PLUGIN_... */
  char zReason[DYNG_REASON];
  int bTried;              /* init was called */
  char zName[16];          /* its backend's name, "cuda<MAJOR>" */
  char zBrief[48];         /* the reason in a few words, for the warning */
} DyngPlugin;

/* Everything the process found; written under dyng__mutex. */
static struct {
  int bDone;               /* discovery ran */
  int bCpuOnly;            /* DYNG_CPU_ONLY says so */
  int bRequireCuda;        /* DYNG_REQUIRE_CUDA says so */
  char zEnvNote[DYNG_REASON]; /* a word about an ignored variable */
  int driverVersion;       /* cuDriverGetVersion; 0: none */
  char zDriverNote[DYNG_REASON]; /* why none, or how it was read */
  const char *zDeviceSource; /* "nvml", "cuInit" or "none" */
  char zDeviceNote[DYNG_REASON];
  int nDevice;
  DyngDevice aDevice[DYNG_MAX_DEVICES];
  int iDevice;             /* the device a plugin is started on; -1: none */
  int nPlugin;
  DyngPlugin aPlugin[DYNG_MAX_PLUGINS];
  int iStarted;            /* the plugin running; -1: none */
  pid_t startPid;          /* the process that started it */
  char zNoGpu[DYNG_REASON + 64]; /* why the process has no GPU backend */
  int bWarned;             /* the one warning was logged */
} dyng__b;

static pthread_mutex_t dyng__mutex = PTHREAD_MUTEX_INITIALIZER;

/* ---- the environment ---------------------------------------------------- */

/* Reads a boolean variable: 1 or 0, or -1 when its value means neither. */
static int dyngEnvBool(const char *zName, int *pbOn) {
  const char *z = getenv(zName);
  *pbOn = 0;
  if (!z || !*z) return 0;
  static const char *azOn[] = {"1", "true", "yes", "on"};
  static const char *azOff[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (sqlite3_stricmp(z, azOn[i]) == 0) return *pbOn = 1, 0;
    if (sqlite3_stricmp(z, azOff[i]) == 0) return 0;
  }
  return -1;
}

/* ---- the driver --------------------------------------------------------- */

typedef int (*DyngCuDriverGetVersion)(int *);
typedef int (*DyngCuInit)(unsigned);
typedef int (*DyngCuDeviceGetCount)(int *);
typedef int (*DyngCuDeviceGet)(int *, int);
typedef int (*DyngCuDeviceGetName)(char *, int, int);
typedef int (*DyngCuDeviceGetAttribute)(int *, int, int);
typedef int (*DyngCuDeviceTotalMem)(size_t *, int);

#define DYNG_CU_CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define DYNG_CU_CC_MINOR 76 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */

static void dyngFindDriver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *z = dlerror();
    snprintf(dyng__b.zDriverNote, DYNG_REASON, "no NVIDIA driver: %s", z ? z : "libcuda.so.1 not found");
    return;
  }
  DyngCuDriverGetVersion xVersion = (DyngCuDriverGetVersion)dlsym(h, "cuDriverGetVersion");
  int v = 0;
  if (!xVersion) {
    snprintf(dyng__b.zDriverNote, DYNG_REASON, "libcuda.so.1 has no cuDriverGetVersion");
  } else if (xVersion(&v) != 0 || v <= 0) {
    snprintf(dyng__b.zDriverNote, DYNG_REASON, "cuDriverGetVersion failed");
    v = 0;
  } else {
    snprintf(dyng__b.zDriverNote, DYNG_REASON, "cuDriverGetVersion through libcuda.so.1");
  }
  dyng__b.driverVersion = v;
  /* Kept loaded: the devices may have to be read through it, and a plugin
  ** will load it again anyway. */
}

/* ---- devices ------------------------------------------------------------ */

/* CUDA_VISIBLE_DEVICES as CUDA reads it: a comma list of indices or UUID
** prefixes ("GPU-..."), up to the first entry that matches nothing.  Fills
** aPick with indices into the n devices of aAll (in the listed order) and
** returns how many; all of them, in order, when the variable is unset. */
static int dyngVisible(const DyngDevice *aAll, int n, int *aPick) {
  const char *z = getenv("CUDA_VISIBLE_DEVICES");
  if (!z) {
    for (int i = 0; i < n; i++) aPick[i] = i;
    return n;
  }
  int nPick = 0;
  while (*z && nPick < n) {
    while (*z == ' ') z++;
    const char *zEnd = z;
    while (*zEnd && *zEnd != ',') zEnd++;
    int len = (int)(zEnd - z), found = -1;
    while (len > 0 && z[len - 1] == ' ') len--;
    if (len > 0 && (isdigit((unsigned char)z[0]) || z[0] == '-')) {
      char *zStop = NULL;
      long i = strtol(z, &zStop, 10);
      if (zStop == z + len && i >= 0 && i < n) found = (int)i;
    } else if (len > 0) {
      for (int i = 0; i < n && found < 0; i++)
        if (strncmp(aAll[i].zUuid, z, (size_t)len) == 0) found = i;
    }
    if (found < 0) break; /* CUDA ignores the rest of the list */
    for (int j = 0; j < nPick; j++)
      if (aPick[j] == found) found = -1; /* listed twice: CUDA refuses the list */
    if (found < 0) return 0;
    aPick[nPick++] = found;
    z = *zEnd ? zEnd + 1 : zEnd;
  }
  return nPick;
}

typedef int (*DyngNvmlInit)(void);
typedef int (*DyngNvmlShutdown)(void);
typedef int (*DyngNvmlGetCount)(unsigned *);
typedef int (*DyngNvmlGetHandle)(unsigned, void **);
typedef int (*DyngNvmlGetName)(void *, char *, unsigned);
typedef int (*DyngNvmlGetUuid)(void *, char *, unsigned);
typedef int (*DyngNvmlGetCc)(void *, int *, int *);
typedef struct {
  unsigned long long total, free, used;
} DyngNvmlMemory;
typedef int (*DyngNvmlGetMemory)(void *, DyngNvmlMemory *);

/* Reads the devices through NVML; 0 when NVML is not there. */
static int dyngDevicesFromNvml(DyngDevice *aAll, int *pn) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
  DyngNvmlInit xInit = (DyngNvmlInit)dlsym(h, "nvmlInit_v2");
  DyngNvmlShutdown xShutdown = (DyngNvmlShutdown)dlsym(h, "nvmlShutdown");
  DyngNvmlGetCount xCount = (DyngNvmlGetCount)dlsym(h, "nvmlDeviceGetCount_v2");
  DyngNvmlGetHandle xHandle = (DyngNvmlGetHandle)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  DyngNvmlGetName xName = (DyngNvmlGetName)dlsym(h, "nvmlDeviceGetName");
  DyngNvmlGetUuid xUuid = (DyngNvmlGetUuid)dlsym(h, "nvmlDeviceGetUUID");
  DyngNvmlGetCc xCc = (DyngNvmlGetCc)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
  DyngNvmlGetMemory xMemory = (DyngNvmlGetMemory)dlsym(h, "nvmlDeviceGetMemoryInfo");
  if (!xInit || !xShutdown || !xCount || !xHandle || !xName || !xCc || !xMemory) {
    snprintf(dyng__b.zDeviceNote, DYNG_REASON, "libnvidia-ml.so.1 lacks functions dyng needs");
    dlclose(h);
    return 0;
  }
  int rc = xInit();
  if (rc != 0) {
    snprintf(dyng__b.zDeviceNote, DYNG_REASON, "nvmlInit failed (NVML error %d)", rc);
    dlclose(h);
    return 0;
  }
  unsigned n = 0;
  if (xCount(&n) != 0) n = 0;
  if (n > DYNG_MAX_DEVICES) n = DYNG_MAX_DEVICES;
  int m = 0;
  for (unsigned i = 0; i < n; i++) {
    void *pDev = NULL;
    DyngDevice *d = &aAll[m];
    memset(d, 0, sizeof *d);
    if (xHandle(i, &pDev) != 0) continue;
    if (xName(pDev, d->zName, sizeof d->zName) != 0) snprintf(d->zName, sizeof d->zName, "device %u", i);
    if (!xUuid || xUuid(pDev, d->zUuid, sizeof d->zUuid) != 0) d->zUuid[0] = 0;
    int major = 0, minor = 0;
    if (xCc(pDev, &major, &minor) == 0) d->cc = major * 10 + minor;
    DyngNvmlMemory mem = {0, 0, 0};
    if (xMemory(pDev, &mem) == 0) d->nMemory = (sqlite3_int64)mem.total;
    m++;
  }
  xShutdown();
  dlclose(h);
  *pn = m;
  return 1;
}

/* The last resort: cuInit and the driver API.  A process that has run
** cuInit cannot use CUDA in a child it forks later. */
static void dyngDevicesFromCuInit(DyngDevice *aAll, int *pn) {
  *pn = 0;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  DyngCuInit xInit = (DyngCuInit)dlsym(h, "cuInit");
  DyngCuDeviceGetCount xCount = (DyngCuDeviceGetCount)dlsym(h, "cuDeviceGetCount");
  DyngCuDeviceGet xGet = (DyngCuDeviceGet)dlsym(h, "cuDeviceGet");
  DyngCuDeviceGetName xName = (DyngCuDeviceGetName)dlsym(h, "cuDeviceGetName");
  DyngCuDeviceGetAttribute xAttr = (DyngCuDeviceGetAttribute)dlsym(h, "cuDeviceGetAttribute");
  DyngCuDeviceTotalMem xMem = (DyngCuDeviceTotalMem)dlsym(h, "cuDeviceTotalMem_v2");
  int n = 0;
  if (!xInit || !xCount || !xGet || !xName || !xAttr || xInit(0) != 0 || xCount(&n) != 0) {
    dlclose(h);
    return;
  }
  if (n > DYNG_MAX_DEVICES) n = DYNG_MAX_DEVICES;
  /* CUDA_VISIBLE_DEVICES already applied by the driver. */
  for (int i = 0; i < n; i++) {
    DyngDevice *d = &aAll[i];
    memset(d, 0, sizeof *d);
    int dev = 0, major = 0, minor = 0;
    size_t mem = 0;
    if (xGet(&dev, i) != 0) continue;
    if (xName(d->zName, (int)sizeof d->zName, dev) != 0) snprintf(d->zName, sizeof d->zName, "device %d", i);
    xAttr(&major, DYNG_CU_CC_MAJOR, dev);
    xAttr(&minor, DYNG_CU_CC_MINOR, dev);
    d->cc = major * 10 + minor;
    if (xMem && xMem(&mem, dev) == 0) d->nMemory = (sqlite3_int64)mem;
    d->iOrdinal = i;
  }
  *pn = n;
  /* The driver stays loaded: it has been initialized. */
}

static void dyngFindDevices(void) {
  DyngDevice aAll[DYNG_MAX_DEVICES];
  int n = 0, aPick[DYNG_MAX_DEVICES];
  dyng__b.iDevice = -1;
  if (dyngDevicesFromNvml(aAll, &n)) {
    dyng__b.zDeviceSource = "nvml";
    int m = dyngVisible(aAll, n, aPick);
    for (int i = 0; i < m; i++) {
      dyng__b.aDevice[i] = aAll[aPick[i]];
      dyng__b.aDevice[i].iOrdinal = i;
    }
    dyng__b.nDevice = m;
  } else if (dyng__b.driverVersion) {
    dyng__b.zDeviceSource = "cuInit";
    if (!dyng__b.zDeviceNote[0])
      snprintf(dyng__b.zDeviceNote, DYNG_REASON,
               "NVML (libnvidia-ml.so.1) not found: devices read after cuInit, so a child "
               "forked from now on cannot use CUDA");
    dyngDevicesFromCuInit(dyng__b.aDevice, &dyng__b.nDevice);
  } else {
    dyng__b.zDeviceSource = "none";
  }
  for (int i = 0; i < dyng__b.nDevice && dyng__b.iDevice < 0; i++)
    if (dyng__b.aDevice[i].cc >= DYNG_MIN_CC) dyng__b.iDevice = i;
}

/* ---- plugins ------------------------------------------------------------ */

/* The major in a file name dyng_cuda<MAJOR>.so, or -1 when it is not one. */
static int dyngPluginMajor(const char *zFile) {
  size_t nPre = strlen(DYNG_PLUGIN_PREFIX), nSuf = strlen(DYNG_PLUGIN_SUFFIX), n = strlen(zFile);
  if (n <= nPre + nSuf || strncmp(zFile, DYNG_PLUGIN_PREFIX, nPre) != 0 ||
      strcmp(zFile + n - nSuf, DYNG_PLUGIN_SUFFIX) != 0)
    return -1;
  int major = 0;
  for (size_t i = nPre; i < n - nSuf; i++) {
    if (!isdigit((unsigned char)zFile[i]) || major > 1000) return -1;
    major = major * 10 + (zFile[i] - '0');
  }
  return major;
}

/* Reads one plugin's description and judges it against this dyng and the
** driver (not yet the devices). */
static void dyngInspectPlugin(DyngPlugin *p) {
  p->eState = DYNG_PLUGIN_UNUSABLE;
  void *h = dlopen(p->zPath, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *z = dlerror();
    snprintf(p->zReason, DYNG_REASON, "cannot be loaded: %s", z ? z : "dlopen failed");
    snprintf(p->zBrief, sizeof p->zBrief, "not loadable");
    return;
  }
  dyng_plugin_entry_fn xEntry = (dyng_plugin_entry_fn)dlsym(h, DYNG_PLUGIN_ENTRY);
  const dyng_plugin *d = xEntry ? xEntry() : NULL;
  if (!d) {
    snprintf(p->zReason, DYNG_REASON, "not a dyng plugin: no %s", DYNG_PLUGIN_ENTRY);
    snprintf(p->zBrief, sizeof p->zBrief, "no entry point");
    dlclose(h);
    return;
  }
  /* Only abi and version are read before they are known to match. */
  p->abi = d->abi;
  snprintf(p->zVersion, sizeof p->zVersion, "%s", d->version ? d->version : "");
  if (d->abi != DYNG_BACKEND_ABI) {
    snprintf(p->zReason, DYNG_REASON, "built for backend ABI %d; this dyng has ABI %d", d->abi,
             DYNG_BACKEND_ABI);
    snprintf(p->zBrief, sizeof p->zBrief, "ABI %d", d->abi);
    dlclose(h);
    return;
  }
  if (!d->version || strcmp(d->version, PACKAGE_VERSION) != 0) {
    snprintf(p->zReason, DYNG_REASON, "built for dyng %s; this is dyng %s", p->zVersion, PACKAGE_VERSION);
    snprintf(p->zBrief, sizeof p->zBrief, "dyng %.30s", p->zVersion);
    dlclose(h);
    return;
  }
  p->pDesc = d;
  p->cudaMajor = d->cuda_major;
  p->cudaRuntime = d->cuda_runtime;
  snprintf(p->zArchs, sizeof p->zArchs, "%s", d->archs ? d->archs : "");
  if (d->cuda_major != p->nameMajor) {
    snprintf(p->zReason, DYNG_REASON, "its name says CUDA %d but it was built with CUDA %d",
             p->nameMajor, d->cuda_major);
    snprintf(p->zBrief, sizeof p->zBrief, "built with CUDA %d", d->cuda_major);
    return;
  }
  if (!d->init || !d->backend) {
    snprintf(p->zReason, DYNG_REASON, "incomplete description (no init or backend)");
    snprintf(p->zBrief, sizeof p->zBrief, "incomplete");
    return;
  }
  int drv = dyng__b.driverVersion;
  if (!drv) {
    snprintf(p->zReason, DYNG_REASON, "%s", dyng__b.zDriverNote);
    snprintf(p->zBrief, sizeof p->zBrief, "no driver");
    return;
  }
  if (d->cuda_major > drv / 1000) {
    snprintf(p->zReason, DYNG_REASON, "needs a driver for CUDA %d; the driver supports CUDA %d.%d",
             d->cuda_major, drv / 1000, drv % 1000 / 10);
    snprintf(p->zBrief, sizeof p->zBrief, "driver too old");
    return;
  }
  if (dyng__b.iDevice < 0) {
    snprintf(p->zBrief, sizeof p->zBrief, "no usable device");
    if (!dyng__b.nDevice) {
      snprintf(p->zReason, DYNG_REASON, "no visible CUDA device%s%s",
               getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES=" : "",
               getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "");
      if (getenv("CUDA_VISIBLE_DEVICES")) strncat(p->zReason, ")", DYNG_REASON - strlen(p->zReason) - 1);
    } else {
      const DyngDevice *x = &dyng__b.aDevice[0];
      snprintf(p->zReason, DYNG_REASON,
               "no device of compute capability 7.5 or newer (%s is %d.%d)", x->zName, x->cc / 10,
               x->cc % 10);
    }
    return;
  }
  p->eState = DYNG_PLUGIN_AVAILABLE;
  snprintf(p->zReason, DYNG_REASON, "usable with the CUDA %d.%d driver", drv / 1000, drv % 1000 / 10);
}

/* Adds the plugins of folder zDir (a path already seen is skipped). */
static void dyngScanFolder(const char *zDir) {
  DIR *pDir = opendir(zDir);
  if (!pDir) return;
  struct dirent *e;
  while ((e = readdir(pDir)) != NULL && dyng__b.nPlugin < DYNG_MAX_PLUGINS) {
    int major = dyngPluginMajor(e->d_name);
    if (major < 0) continue;
    char *zPath = sqlite3_mprintf("%s/%s", zDir, e->d_name);
    char *zReal = zPath ? realpath(zPath, NULL) : NULL;
    sqlite3_free(zPath);
    if (!zReal) continue;
    int bSeen = 0;
    for (int i = 0; i < dyng__b.nPlugin && !bSeen; i++) bSeen = strcmp(dyng__b.aPlugin[i].zPath, zReal) == 0;
    if (bSeen) {
      free(zReal);
      continue;
    }
    DyngPlugin *p = &dyng__b.aPlugin[dyng__b.nPlugin++];
    memset(p, 0, sizeof *p);
    p->zPath = zReal;
    p->nameMajor = major;
    snprintf(p->zName, sizeof p->zName, "cuda%d", major);
  }
  closedir(pDir);
}

/* Orders the plugins: usable ones first, the driver's own major first,
** then newer majors before older; a stable insertion sort. */
static int dyngPluginRank(const DyngPlugin *p) {
  if (p->eState == DYNG_PLUGIN_UNUSABLE) return -1;
  int drv = dyng__b.driverVersion / 1000;
  return p->cudaMajor == drv ? 100000 : p->cudaMajor;
}

/* Scans the folder dyng.so was loaded from. */
static void dyngScanOwnFolder(void) {
  Dl_info info;
  if (!dladdr((void *)dyngScanOwnFolder, &info) || !info.dli_fname) return;
  char *zSelf = sqlite3_mprintf("%s", info.dli_fname);
  char *zSlash = zSelf ? strrchr(zSelf, '/') : NULL;
  if (zSlash) {
    *zSlash = 0;
    dyngScanFolder(zSelf[0] ? zSelf : "/");
  } else if (zSelf) {
    dyngScanFolder(".");
  }
  sqlite3_free(zSelf);
}

/* DYNG_PLUGIN_PATH, when set, lists the folders to look in instead of the
** one dyng.so was loaded from; an empty entry stands for that one. */
static void dyngFindPlugins(void) {
  const char *zPath = getenv("DYNG_PLUGIN_PATH");
  if (zPath) {
    char *zCopy = sqlite3_mprintf("%s", zPath);
    char *z = zCopy;
    while (z) {
      char *zNext = strchr(z, ':');
      if (zNext) *zNext++ = 0;
      if (*z) dyngScanFolder(z);
      else dyngScanOwnFolder();
      z = zNext;
    }
    sqlite3_free(zCopy);
  } else {
    dyngScanOwnFolder();
  }
  for (int i = 0; i < dyng__b.nPlugin; i++) dyngInspectPlugin(&dyng__b.aPlugin[i]);
  for (int i = 1; i < dyng__b.nPlugin; i++) {
    DyngPlugin x = dyng__b.aPlugin[i];
    int j = i;
    while (j > 0 && dyngPluginRank(&dyng__b.aPlugin[j - 1]) < dyngPluginRank(&x)) {
      dyng__b.aPlugin[j] = dyng__b.aPlugin[j - 1];
      j--;
    }
    dyng__b.aPlugin[j] = x;
  }
  if (dyng__b.nPlugin && dyng__b.aPlugin[0].eState == DYNG_PLUGIN_AVAILABLE)
    dyng__b.aPlugin[0].eState = DYNG_PLUGIN_SELECTED;
}

/* Logs, once, why no plugin is used, naming each one with its reason in a
** few words (SQLite cuts a logged message at about 200 bytes; the full
** reasons are in dyng_config('plugins')). */
static void dyngWarnUnusable(void) {
  if (dyng__b.bWarned || !dyng__b.nPlugin) return;
  dyng__b.bWarned = 1;
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  sqlite3_str_appendf(pStr, "dyng: no usable GPU plugin, using the CPU:");
  for (int i = 0; i < dyng__b.nPlugin; i++) {
    const DyngPlugin *p = &dyng__b.aPlugin[i];
    const char *zBase = strrchr(p->zPath, '/');
    sqlite3_str_appendf(pStr, "%s %s (%s)", i ? "," : "", zBase ? zBase + 1 : p->zPath, p->zBrief);
  }
  sqlite3_str_appendf(pStr, "; see dyng_config('plugins')");
  char *z = sqlite3_str_finish(pStr);
  sqlite3_log(SQLITE_WARNING, "%s", z ? z : "dyng: no usable GPU plugin");
  sqlite3_free(z);
}

static void dyngDiscover(void) {
  if (dyng__b.bDone) return;
  dyng__b.bDone = 1;
  dyng__b.iStarted = -1;
  dyng__b.iDevice = -1;
  dyng__b.zDeviceSource = "none";
  int bOn = 0;
  if (dyngEnvBool("DYNG_CPU_ONLY", &bOn) < 0) {
    snprintf(dyng__b.zEnvNote, DYNG_REASON, "DYNG_CPU_ONLY='%s' is not a boolean and was ignored",
             getenv("DYNG_CPU_ONLY"));
    sqlite3_log(SQLITE_WARNING, "dyng: %s (use 1/true/yes/on or 0/false/no/off)", dyng__b.zEnvNote);
  }
  dyng__b.bCpuOnly = bOn;
  if (dyngEnvBool("DYNG_REQUIRE_CUDA", &bOn) < 0)
    sqlite3_log(SQLITE_WARNING, "dyng: DYNG_REQUIRE_CUDA='%s' is not a boolean and was ignored",
                getenv("DYNG_REQUIRE_CUDA"));
  dyng__b.bRequireCuda = bOn;
  if (dyng__b.bCpuOnly) {
    snprintf(dyng__b.zNoGpu, DYNG_REASON, "DYNG_CPU_ONLY is set");
    return;
  }
  dyngFindDriver();
  if (dyng__b.driverVersion) dyngFindDevices();
  dyngFindPlugins();
  if (!dyng__b.nPlugin) {
    snprintf(dyng__b.zNoGpu, DYNG_REASON, "no GPU backend plugin (%s*%s) is installed", DYNG_PLUGIN_PREFIX,
             DYNG_PLUGIN_SUFFIX);
  } else if (dyng__b.aPlugin[0].eState != DYNG_PLUGIN_SELECTED) {
    snprintf(dyng__b.zNoGpu, sizeof dyng__b.zNoGpu, "no plugin is usable: %s", dyng__b.aPlugin[0].zReason);
    dyngWarnUnusable();
  }
}

/* Starts the selected plugin, passing to the next on failure.  Returns the
** started plugin's index, or -1 with dyng__b.zNoGpu saying why. */
static int dyngStart(void) {
  if (dyng__b.iStarted >= 0) {
    if (dyng__b.startPid == getpid()) return dyng__b.iStarted;
    snprintf(dyng__b.zNoGpu, DYNG_REASON,
             "CUDA was started in the parent before fork(); use CUDA only in the child, or start "
             "the child with exec");
    return -1;
  }
  int nTried = 0;
  for (int i = 0; i < dyng__b.nPlugin; i++) {
    DyngPlugin *p = &dyng__b.aPlugin[i];
    if (p->eState == DYNG_PLUGIN_UNUSABLE || p->bTried) continue;
    p->bTried = 1;
    nTried++;
    char zErr[DYNG_REASON] = "";
    int rc = p->pDesc->init(dyng__b.aDevice[dyng__b.iDevice].iOrdinal, zErr, sizeof zErr);
    const dyng_backend *pBe = p->pDesc->backend;
    if (rc == 0 && !pBe->tree_fetch != !pBe->tree_path) {
      /* The host could not read the rows of its trees. */
      rc = -1;
      snprintf(zErr, sizeof zErr, "its backend has only one of tree_fetch and tree_path");
    }
    if (rc == 0) {
      const DyngDevice *d = &dyng__b.aDevice[dyng__b.iDevice];
      char zReason[DYNG_REASON];
      snprintf(zReason, sizeof zReason, "started on %s (compute capability %d.%d)", d->zName, d->cc / 10,
               d->cc % 10);
      memcpy(p->zReason, zReason, sizeof zReason);
      p->eState = DYNG_PLUGIN_SELECTED;
      dyng__b.iStarted = i;
      dyng__b.startPid = getpid();
      return i;
    }
    p->eState = DYNG_PLUGIN_UNUSABLE;
    snprintf(p->zReason, DYNG_REASON, "failed to start: %s", zErr[0] ? zErr : "init failed");
    snprintf(p->zBrief, sizeof p->zBrief, "failed to start");
    if (i + 1 < dyng__b.nPlugin && dyng__b.aPlugin[i + 1].eState == DYNG_PLUGIN_AVAILABLE)
      dyng__b.aPlugin[i + 1].eState = DYNG_PLUGIN_SELECTED;
  }
  if (nTried) {
    snprintf(dyng__b.zNoGpu, sizeof dyng__b.zNoGpu, "no plugin could be started: %s",
             dyng__b.aPlugin[0].zReason);
    dyngWarnUnusable();
  }
  return -1;
}

/* ---- what ext/ asks --------------------------------------------------- */

const char *dyngBackendPrefName(int ePref) {
  return ePref == DYNG_BACKEND_CPU ? "cpu" : ePref == DYNG_BACKEND_CUDA ? "cuda" : "auto";
}

int dyngBackendPrefParse(const char *z, int *pePref) {
  if (!z) return 0;
  if (sqlite3_stricmp(z, "auto") == 0) *pePref = DYNG_BACKEND_AUTO;
  else if (sqlite3_stricmp(z, "cpu") == 0) *pePref = DYNG_BACKEND_CPU;
  else if (sqlite3_stricmp(z, "cuda") == 0 || sqlite3_stricmp(z, "gpu") == 0) *pePref = DYNG_BACKEND_CUDA;
  else return 0;
  return 1;
}

int dyngBackendRequired(int ePref) {
  if (ePref == DYNG_BACKEND_CUDA) return 1;
  if (ePref != DYNG_BACKEND_AUTO) return 0;
  pthread_mutex_lock(&dyng__mutex);
  dyngDiscover();
  int b = dyng__b.bRequireCuda;
  pthread_mutex_unlock(&dyng__mutex);
  return b;
}

int dyngBackendChoose(int ePref, const dyng_backend **ppBackend, char *zWhy, int nWhy) {
  pthread_mutex_lock(&dyng__mutex);
  dyngDiscover();
  int bRequire = ePref == DYNG_BACKEND_CUDA || (ePref == DYNG_BACKEND_AUTO && dyng__b.bRequireCuda);
  int rc = SQLITE_OK;
  *ppBackend = dyng_backend_cpu();
  if (ePref == DYNG_BACKEND_CPU) {
    snprintf(zWhy, (size_t)nWhy, "the CPU was asked for");
  } else if (dyng__b.bCpuOnly && !bRequire) {
    snprintf(zWhy, (size_t)nWhy, "DYNG_CPU_ONLY is set");
  } else {
    int i = dyng__b.bCpuOnly ? -1 : dyngStart();
    if (i >= 0) {
      const DyngPlugin *p = &dyng__b.aPlugin[i];
      *ppBackend = p->pDesc->backend;
      snprintf(zWhy, (size_t)nWhy, "%s %s", strrchr(p->zPath, '/') ? strrchr(p->zPath, '/') + 1 : p->zPath,
               p->zReason);
    } else if (bRequire) {
      snprintf(zWhy, (size_t)nWhy, "CUDA was required (%s) but cannot be used: %s",
               ePref == DYNG_BACKEND_CUDA ? "backend 'cuda'" : "DYNG_REQUIRE_CUDA",
               dyng__b.zNoGpu);
      rc = SQLITE_ERROR;
    } else {
      snprintf(zWhy, (size_t)nWhy, "%s", dyng__b.zNoGpu);
    }
  }
  pthread_mutex_unlock(&dyng__mutex);
  return rc;
}

const char *dyngBackendPreview(int ePref, char *zWhy, int nWhy) {
  pthread_mutex_lock(&dyng__mutex);
  dyngDiscover();
  const char *zName = "cpu";
  int bRequire = ePref == DYNG_BACKEND_CUDA || (ePref == DYNG_BACKEND_AUTO && dyng__b.bRequireCuda);
  const DyngPlugin *p = dyng__b.nPlugin && dyng__b.aPlugin[0].eState == DYNG_PLUGIN_SELECTED ? &dyng__b.aPlugin[0]
                                                                                          : NULL;
  for (int i = 0; i < dyng__b.nPlugin && !p; i++)
    if (dyng__b.aPlugin[i].eState == DYNG_PLUGIN_SELECTED) p = &dyng__b.aPlugin[i];
  if (ePref == DYNG_BACKEND_CPU) {
    snprintf(zWhy, (size_t)nWhy, "the CPU was asked for");
  } else if (dyng__b.bCpuOnly && !bRequire) {
    snprintf(zWhy, (size_t)nWhy, "DYNG_CPU_ONLY is set");
  } else if (p && !(dyng__b.iStarted >= 0 && dyng__b.startPid != getpid())) {
    zName = p->zName;
    snprintf(zWhy, (size_t)nWhy, "%s %s%s", strrchr(p->zPath, '/') ? strrchr(p->zPath, '/') + 1 : p->zPath,
             p->bTried ? "" : "selected, started by the first graph that uses it; ", p->zReason);
  } else {
    if (dyng__b.iStarted >= 0)
      snprintf(dyng__b.zNoGpu, DYNG_REASON,
               "CUDA was started in the parent before fork(); use CUDA only in the child, or start "
               "the child with exec");
    snprintf(zWhy, (size_t)nWhy, "%s%s", bRequire ? "CUDA is required but cannot be used: " : "",
             dyng__b.zNoGpu);
    if (bRequire) zName = "none";
  }
  pthread_mutex_unlock(&dyng__mutex);
  return zName;
}

/* One plugin as JSON. */
static json_t *dyngPluginJson(const DyngPlugin *p) {
  static const char *azState[] = {"unusable", "available", "selected"};
  json_t *pObj = json_object();
  json_object_set_new(pObj, "path", json_string(p->zPath));
  json_object_set_new(pObj, "cuda_major", p->pDesc ? json_integer(p->cudaMajor) : json_integer(p->nameMajor));
  json_object_set_new(pObj, "cuda_runtime", p->pDesc ? json_integer(p->cudaRuntime) : json_null());
  json_object_set_new(pObj, "dyng_version", p->zVersion[0] ? json_string(p->zVersion) : json_null());
  json_object_set_new(pObj, "abi", p->abi ? json_integer(p->abi) : json_null());
  json_object_set_new(pObj, "archs", p->zArchs[0] ? json_string(p->zArchs) : json_null());
  json_object_set_new(pObj, "state", json_string(azState[p->eState]));
  json_object_set_new(pObj, "started", json_boolean(p->bTried && p->eState == DYNG_PLUGIN_SELECTED));
  json_object_set_new(pObj, "reason", json_string(p->zReason));
  return pObj;
}

void dyngBackendsJson(json_t *pRoot) {
  pthread_mutex_lock(&dyng__mutex);
  dyngDiscover();
  json_t *pDriver = json_object();
  json_object_set_new(pDriver, "cuda_version",
                      dyng__b.driverVersion ? json_integer(dyng__b.driverVersion) : json_null());
  if (dyng__b.driverVersion) {
    char z[32];
    snprintf(z, sizeof z, "%d.%d", dyng__b.driverVersion / 1000, dyng__b.driverVersion % 1000 / 10);
    json_object_set_new(pDriver, "cuda", json_string(z));
  }
  json_object_set_new(pDriver, "note", json_string(dyng__b.bCpuOnly ? "not looked for: DYNG_CPU_ONLY is set"
                                                                     : dyng__b.zDriverNote));
  json_t *pDevices = json_array();
  for (int i = 0; i < dyng__b.nDevice; i++) {
    const DyngDevice *d = &dyng__b.aDevice[i];
    json_t *pDev = json_object();
    char zCc[16];
    snprintf(zCc, sizeof zCc, "%d.%d", d->cc / 10, d->cc % 10);
    json_object_set_new(pDev, "ordinal", json_integer(d->iOrdinal));
    json_object_set_new(pDev, "name", json_string(d->zName));
    json_object_set_new(pDev, "compute_capability", json_string(zCc));
    json_object_set_new(pDev, "memory_bytes", json_integer(d->nMemory));
    if (d->zUuid[0]) json_object_set_new(pDev, "uuid", json_string(d->zUuid));
    json_object_set_new(pDev, "usable", json_boolean(d->cc >= DYNG_MIN_CC));
    json_object_set_new(pDev, "chosen", json_boolean(i == dyng__b.iDevice));
    json_array_append_new(pDevices, pDev);
  }
  json_t *pPlugins = json_array();
  for (int i = 0; i < dyng__b.nPlugin; i++) json_array_append_new(pPlugins, dyngPluginJson(&dyng__b.aPlugin[i]));
  json_t *pDiscovery = json_object();
  json_object_set_new(pDiscovery, "cpu_only", json_boolean(dyng__b.bCpuOnly));
  json_object_set_new(pDiscovery, "require_cuda", json_boolean(dyng__b.bRequireCuda));
  json_object_set_new(pDiscovery, "devices_from", json_string(dyng__b.zDeviceSource));
  if (dyng__b.zDeviceNote[0]) json_object_set_new(pDiscovery, "devices_note", json_string(dyng__b.zDeviceNote));
  if (dyng__b.zEnvNote[0]) json_object_set_new(pDiscovery, "note", json_string(dyng__b.zEnvNote));
  json_object_set_new(pRoot, "driver", pDriver);
  json_object_set_new(pRoot, "devices", pDevices);
  json_object_set_new(pRoot, "plugins", pPlugins);
  json_object_set_new(pRoot, "discovery", pDiscovery);
  pthread_mutex_unlock(&dyng__mutex);
}
