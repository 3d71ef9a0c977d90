/*
** tests/fakes/fake_devices.h: the devices the fake driver and the fake NVML
** report, from $FAKE_CUDA_DEVICES: "name:cc:MiB;name:cc:MiB;..." with cc
** like 90 for compute capability 9.0 (unset or empty: no device).  Device
** i has UUID "GPU-fake-<i>".  Calls are appended to $FAKE_CUDA_LOG, one
** function name per line, so a test can see which ones ran.
*/
#ifndef FAKE_DEVICES_H
#define FAKE_DEVICES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_DEVICES 8

typedef struct fake_device {
  char name[64];
  int cc;
  unsigned long long bytes;
} fake_device;

static int fake_devices(fake_device *out) {
  const char *z = getenv("FAKE_CUDA_DEVICES");
  int n = 0;
  while (z && *z && n < FAKE_MAX_DEVICES) {
    const char *end = strchr(z, ';');
    size_t len = end ? (size_t)(end - z) : strlen(z);
    char buf[128];
    if (len >= sizeof buf) len = sizeof buf - 1;
    memcpy(buf, z, len);
    buf[len] = 0;
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c1 && c2) {
      *c1 = *c2 = 0;
      snprintf(out[n].name, sizeof out[n].name, "%.63s", buf);
      out[n].cc = atoi(c1 + 1);
      out[n].bytes = strtoull(c2 + 1, NULL, 10) << 20;
      n++;
    }
    z = end ? end + 1 : z + len;
  }
  return n;
}

static void fake_log(const char *fn) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", fn);
  fclose(f);
}

#endif /* FAKE_DEVICES_H */
