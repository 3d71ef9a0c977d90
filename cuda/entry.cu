/*
** cuda/entry.cu: the one symbol dyng_cuda<MAJOR>.so exports.
**
** dyng_plugin_entry() returns the plugin's description (engine/plugin.h):
** the dyng version and backend ABI it was built for, the CUDA toolkit
** (major and runtime version) and the device code it carries.  dyng reads
** it from every plugin it finds before choosing one, so it touches no CUDA
** API: a process that reads it can still fork and use CUDA in the child.
**
** How it works: init() starts the CUDA runtime (statically linked, so no
** libcudart is needed at run time; libcuda.so.1 comes from the driver) on
** one device, once per process.  It checks for a driver new enough for the
** runtime, counts the devices, checks the
** ordinal and the compute capability (>= 7.5), makes the device current,
** creates its context with cudaFree(0) and checks that the plugin holds
** code the device can run.  The result is kept: later calls give the same
** answer, except in a child forked after the parent started CUDA, where
** the inherited runtime cannot work and init says so.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "cuda/backend_cuda.h"

#define DYNG_CUDA_EXPORT __attribute__((visibility("default")))

/* The rules shared with the host: DYNG_MIN_COMPUTE_CAPABILITY and
** DYNG_FORK_REMEDY (engine/plugin.h). */
static const char fork_remedy[] = DYNG_FORK_REMEDY;

/* What init found, kept for later calls (all under `lock`). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started;      /* init has run in process `started_pid` */
static pid_t started_pid;
static int result;       /* 0 or DYNG_EBACKEND */
static char reason[512]; /* why init failed */

/* An empty kernel: asking for its attributes tells whether the plugin has
** device code this device can run (SASS for its arch, or PTX to JIT). */
__global__ void dyng_cuda_probe(void) {}

/* Writes a sentence into `out` (n bytes) and returns DYNG_EBACKEND. */
static int fail(char *out, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, n, fmt, ap);
  va_end(ap);
  return DYNG_EBACKEND;
}

/* The failure of CUDA call `what`.  cudaErrorInitializationError is what a
** child forked after its parent initialized CUDA gets, so that one also
** names fork and the remedy. */
static int fail_cuda(char *out, size_t n, const char *what, cudaError_t rc) {
  if (rc == cudaErrorInitializationError)
    return fail(out, n, "%s: %s (in a forked child: %s)", what, cudaGetErrorString(rc), fork_remedy);
  return fail(out, n, "%s: %s", what, cudaGetErrorString(rc));
}

/* The runtime's "CUDA driver version is insufficient" also stands for no
** driver at all; this says which it is. */
static int fail_driver(char *out, size_t n) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return fail(out, n, "no CUDA driver: %s", dlerror());
  dlclose(driver);
  int version = 0;
  cudaDriverGetVersion(&version);
  return fail(out, n,
              "the CUDA driver supports CUDA %d.%d, older than this plugin's runtime %d.%d: "
              "update the driver or use a plugin of an older CUDA major",
              version / 1000, version % 1000 / 10, DYNG_CUDA_RUNTIME / 1000,
              DYNG_CUDA_RUNTIME % 1000 / 10);
}

/* Starts the runtime on `device`; a sentence in out[0 .. n) on failure. */
static int start_runtime(int device, char *out, size_t n) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorInsufficientDriver) return fail_driver(out, n);
  if (rc != cudaSuccess) return fail_cuda(out, n, "cudaGetDeviceCount", rc);
  if (device < 0 || device >= count)
    return fail(out, n, "CUDA device %d does not exist: %d device%s visible", device, count,
                count == 1 ? " is" : "s are");

  cudaDeviceProp prop;
  rc = cudaGetDeviceProperties(&prop, device);
  if (rc != cudaSuccess) return fail_cuda(out, n, "cudaGetDeviceProperties", rc);
  if (prop.major * 10 + prop.minor < DYNG_MIN_COMPUTE_CAPABILITY)
    return fail(out, n,
                "CUDA device %d (%s) has compute capability %d.%d; the CUDA backend needs %d.%d "
                "or newer",
                device, prop.name, prop.major, prop.minor, DYNG_MIN_COMPUTE_CAPABILITY / 10,
                DYNG_MIN_COMPUTE_CAPABILITY % 10);

  rc = cudaSetDevice(device);
  if (rc != cudaSuccess) return fail_cuda(out, n, "cudaSetDevice", rc);
  rc = cudaFree(0);
  if (rc != cudaSuccess) return fail_cuda(out, n, "cudaFree (creating the context)", rc);

  cudaFuncAttributes attr;
  rc = cudaFuncGetAttributes(&attr, dyng_cuda_probe);
  if (rc == cudaErrorNoKernelImageForDevice || rc == cudaErrorInvalidDeviceFunction)
    return fail(out, n,
                "CUDA device %d (%s, sm_%d%d) cannot run this plugin's device code (%s); "
                "build it with --with-cuda-arch including %d%d",
                device, prop.name, prop.major, prop.minor, DYNG_CUDA_ARCHS, prop.major, prop.minor);
  if (rc != cudaSuccess) return fail_cuda(out, n, "cudaFuncGetAttributes", rc);
  return 0;
}

/* engine/plugin.h's init: starts the runtime once, then repeats the answer. */
static int dyng_cuda_init(int device, const dyng_host *host, char *err, size_t n_err) {
  pthread_mutex_lock(&lock);
  if (!started) {
    dev_set_host(host);
    result = start_runtime(device, reason, sizeof reason);
    started = 1;
    started_pid = getpid();
  } else if (started_pid != getpid() && result == 0) {
    /* This is a child forked after the parent started the runtime: the
    ** contexts it inherited belong to the parent. */
    result = fail(reason, sizeof reason, "%s", fork_remedy);
    started_pid = getpid();
  }
  int rc = result;
  if (rc != 0 && err && n_err > 0) snprintf(err, n_err, "%s", reason);
  pthread_mutex_unlock(&lock);
  return rc;
}

extern "C" DYNG_CUDA_EXPORT const dyng_plugin *dyng_plugin_entry(void) {
  static const dyng_plugin plugin = {
      DYNG_BACKEND_ABI,  /* abi */
      PACKAGE_VERSION,   /* version */
      DYNG_CUDA_MAJOR,   /* cuda_major */
      DYNG_CUDA_RUNTIME, /* cuda_runtime */
      DYNG_CUDA_ARCHS,   /* archs */
      dyng_cuda_init,    /* init */
      dyng_cuda_backend(),
  };
  return &plugin;
}
