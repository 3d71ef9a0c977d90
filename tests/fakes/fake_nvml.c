/*
** tests/fakes/fake_nvml.c: a stand-in for libnvidia-ml.so.1, built as
** tests/fakes/lib/libnvidia-ml.so.1 for the backend-discovery tests.  It
** reports the devices of fake_devices.h in NVML's order, ignoring
** CUDA_VISIBLE_DEVICES as NVML does.
*/
#include "fake_devices.h"

typedef struct nvml_memory {
  unsigned long long total, free, used;
} nvml_memory;

int nvmlInit_v2(void) {
  fake_log("nvmlInit_v2");
  return 0;
}

int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetCount_v2(unsigned *n) {
  fake_device d[FAKE_MAX_DEVICES];
  *n = (unsigned)fake_devices(d);
  return 0;
}

/* A device handle is its index plus one, as a pointer. */
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
  fake_device d[FAKE_MAX_DEVICES];
  if (i >= (unsigned)fake_devices(d)) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *h = (void *)(size_t)(i + 1);
  return 0;
}

static int index_of(void *h) { return (int)(size_t)h - 1; }

int nvmlDeviceGetName(void *h, char *name, unsigned len) {
  fake_device d[FAKE_MAX_DEVICES];
  fake_devices(d);
  snprintf(name, len, "%s", d[index_of(h)].name);
  return 0;
}

int nvmlDeviceGetUUID(void *h, char *uuid, unsigned len) {
  snprintf(uuid, len, "GPU-fake-%d", index_of(h));
  return 0;
}

int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor) {
  fake_device d[FAKE_MAX_DEVICES];
  fake_devices(d);
  *major = d[index_of(h)].cc / 10;
  *minor = d[index_of(h)].cc % 10;
  return 0;
}

int nvmlDeviceGetMemoryInfo(void *h, nvml_memory *m) {
  fake_device d[FAKE_MAX_DEVICES];
  fake_devices(d);
  m->total = d[index_of(h)].bytes;
  m->free = m->total;
  m->used = 0;
  return 0;
}
