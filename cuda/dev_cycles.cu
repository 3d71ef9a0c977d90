/*
** cuda/dev_cycles.cu: counting simple k-cycles on the device.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

struct DevCycles {
  size_t bytes;
};

void dev_cycles_stale(DevCycles *c) { (void)c; }
size_t dev_cycles_bytes(const DevCycles *c) { return c ? c->bytes : 0; }
void dev_cycles_free(DevCycles *c) { (void)c; }
