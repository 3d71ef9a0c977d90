/*
** ext/backends.c: the SQLite face of the backend choice.
**
**   SELECT dyng_config('backend', 'auto' | 'cpu' | 'cuda');  -- per connection
**   CREATE VIRTUAL TABLE g USING dyng(..., backend=cuda);   -- per graph
**
** Discovery of the driver, the devices and the plugins, and the one
** decision of which backend a graph gets, live in engine/choice.c (its
** header lists the rules).  This file parses and names the preferences,
** asks dyng_choose(), hands its warnings to sqlite3_log, and writes what
** discovery found into dyng_config()'s JSON report.
*/
#include "ext/dyng_ext.h"
#include "engine/choice.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

SQLITE_EXTENSION_INIT3

_Static_assert(DYNG_BACKEND_AUTO == DYNG_PREF_AUTO && DYNG_BACKEND_CPU == DYNG_PREF_CPU &&
                   DYNG_BACKEND_CUDA == DYNG_PREF_CUDA,
               "ext/ passes its preferences to engine/choice.h as they are");

/* engine/choice.c's warnings go to sqlite3_log. */
static void dyngChoiceWarn(void *pCtx, const char *zMsg) {
  (void)pCtx;
  sqlite3_log(SQLITE_WARNING, "%s", zMsg);
}

static const dyng_choice_hooks dyngChoiceHooks = {dyngChoiceWarn, NULL};

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

/* Asks engine/choice.c about the process's discovery; bStart: may start a
** plugin. */
static int dyngAsk(int ePref, int bStart, dyng_choice *pOut) {
  dyng_choice_request req = {ePref, bStart, NULL, 0, &dyngChoiceHooks};
  return dyng_choose(&req, pOut);
}

int dyngBackendRequired(int ePref) {
  dyng_choice c;
  dyngAsk(ePref, 0, &c);
  return c.required;
}

int dyngBackendChoose(int ePref, const dyng_backend **ppBackend, char *zWhy, int nWhy) {
  dyng_choice c;
  int rc = dyngAsk(ePref, 1, &c);
  *ppBackend = rc == 0 ? c.backend : dyng_backend_cpu();
  snprintf(zWhy, (size_t)nWhy, "%s", c.reason);
  return rc == 0 ? SQLITE_OK : SQLITE_ERROR;
}

void dyngBackendPreview(int ePref, char *zName, int nName, char *zWhy, int nWhy) {
  dyng_choice c;
  dyngAsk(ePref, 0, &c);
  snprintf(zWhy, (size_t)nWhy, "%s", c.reason);
  snprintf(zName, (size_t)nName, "%s", c.name);
}

/* One plugin as JSON. */
static json_t *dyngPluginJson(const dyng_plugin_found *p) {
  static const char *azState[] = {"unusable", "available", "selected"};
  json_t *pObj = json_object();
  json_object_set_new(pObj, "path", json_string(p->path));
  json_object_set_new(pObj, "cuda_major", p->desc ? json_integer(p->cuda_major) : json_integer(p->name_major));
  json_object_set_new(pObj, "cuda_runtime", p->desc ? json_integer(p->cuda_runtime) : json_null());
  json_object_set_new(pObj, "dyng_version", p->version[0] ? json_string(p->version) : json_null());
  json_object_set_new(pObj, "abi", p->abi ? json_integer(p->abi) : json_null());
  json_object_set_new(pObj, "archs", p->archs[0] ? json_string(p->archs) : json_null());
  json_object_set_new(pObj, "state", json_string(azState[p->state]));
  json_object_set_new(pObj, "started", json_boolean(p->tried && p->state == DYNG_PLUGIN_SELECTED));
  json_object_set_new(pObj, "reason", json_string(p->reason));
  return pObj;
}

/* One device as JSON; bChosen: the one a plugin is started on. */
static json_t *dyngDeviceJson(const dyng_device *d, int bChosen) {
  json_t *pDev = json_object();
  char zCc[16];
  snprintf(zCc, sizeof zCc, "%d.%d", d->cc / 10, d->cc % 10);
  json_object_set_new(pDev, "ordinal", json_integer(d->ordinal));
  json_object_set_new(pDev, "name", json_string(d->name));
  json_object_set_new(pDev, "compute_capability", json_string(zCc));
  json_object_set_new(pDev, "memory_bytes", json_integer(d->memory));
  if (d->uuid[0]) json_object_set_new(pDev, "uuid", json_string(d->uuid));
  json_object_set_new(pDev, "usable", json_boolean(d->cc >= DYNG_MIN_COMPUTE_CAPABILITY));
  json_object_set_new(pDev, "chosen", json_boolean(bChosen));
  return pDev;
}

/* dyng_choice_report's visitor: writes d into the report pCtx. */
static void dyngDiscoveryJson(const dyng_discovery *d, void *pCtx) {
  json_t *pRoot = pCtx;
  json_t *pDriver = json_object();
  json_object_set_new(pDriver, "cuda_version", d->driver_version ? json_integer(d->driver_version) : json_null());
  if (d->driver_version) {
    char z[32];
    snprintf(z, sizeof z, "%d.%d", d->driver_version / 1000, d->driver_version % 1000 / 10);
    json_object_set_new(pDriver, "cuda", json_string(z));
  }
  json_object_set_new(pDriver, "note",
                      json_string(d->cpu_only ? "not looked for: DYNG_CPU_ONLY is set" : d->driver_note));
  json_t *pDevices = json_array();
  for (int i = 0; i < d->n_device; i++)
    json_array_append_new(pDevices, dyngDeviceJson(&d->device[i], i == d->i_device));
  json_t *pPlugins = json_array();
  for (int i = 0; i < d->n_plugin; i++) json_array_append_new(pPlugins, dyngPluginJson(&d->plugin[i]));
  json_t *pDiscovery = json_object();
  json_object_set_new(pDiscovery, "cpu_only", json_boolean(d->cpu_only));
  json_object_set_new(pDiscovery, "require_cuda", json_boolean(d->require_cuda));
  json_object_set_new(pDiscovery, "devices_from", json_string(d->device_source));
  if (d->device_note[0]) json_object_set_new(pDiscovery, "devices_note", json_string(d->device_note));
  if (d->env_note[0]) json_object_set_new(pDiscovery, "note", json_string(d->env_note));
  json_object_set_new(pRoot, "driver", pDriver);
  json_object_set_new(pRoot, "devices", pDevices);
  json_object_set_new(pRoot, "plugins", pPlugins);
  json_object_set_new(pRoot, "discovery", pDiscovery);
}

void dyngBackendsJson(json_t *pRoot) {
  dyng_choice_report(dyngDiscoveryJson, pRoot, &dyngChoiceHooks);
}
