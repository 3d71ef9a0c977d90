/*
** tests/fakes/fake_cuda.c: a stand-in for the NVIDIA driver's libcuda.so.1,
** built as tests/fakes/lib/libcuda.so.1 for the backend-discovery tests.
** $FAKE_CUDA_DRIVER is the version cuDriverGetVersion reports (default
** 13000); $FAKE_CUDA_INIT_FAILS makes cuInit fail.  Devices: fake_devices.h.
*/
#include "fake_devices.h"

#include <stddef.h>

int cuDriverGetVersion(int *v) {
  fake_log("cuDriverGetVersion");
  const char *z = getenv("FAKE_CUDA_DRIVER");
  *v = z ? atoi(z) : 13000;
  return 0;
}

static int initialized;

int cuInit(unsigned flags) {
  (void)flags;
  fake_log("cuInit");
  if (getenv("FAKE_CUDA_INIT_FAILS")) return 100; /* CUDA_ERROR_NO_DEVICE */
  initialized = 1;
  return 0;
}

int cuDeviceGetCount(int *n) {
  fake_device d[FAKE_MAX_DEVICES];
  if (!initialized) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
  *n = fake_devices(d);
  return 0;
}

int cuDeviceGet(int *dev, int ordinal) {
  *dev = ordinal;
  return 0;
}

int cuDeviceGetName(char *name, int len, int dev) {
  fake_device d[FAKE_MAX_DEVICES];
  int n = fake_devices(d);
  if (dev < 0 || dev >= n) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  snprintf(name, (size_t)len, "%s", d[dev].name);
  return 0;
}

int cuDeviceGetAttribute(int *value, int attrib, int dev) {
  fake_device d[FAKE_MAX_DEVICES];
  int n = fake_devices(d);
  if (dev < 0 || dev >= n) return 101;
  if (attrib == 75) *value = d[dev].cc / 10;
  else if (attrib == 76) *value = d[dev].cc % 10;
  else *value = 0;
  return 0;
}

int cuDeviceTotalMem_v2(size_t *bytes, int dev) {
  fake_device d[FAKE_MAX_DEVICES];
  int n = fake_devices(d);
  if (dev < 0 || dev >= n) return 101;
  *bytes = (size_t)d[dev].bytes;
  return 0;
}
