/*
** cuda/dev_mosp.cu: the MOSP ensemble path on the device.
*/
#include "cuda/backend_cuda.h"
#include "cuda/dev_state.cuh"

struct DevMosp {
  size_t bytes;
};

size_t dev_mosp_bytes(const DevMosp *m) { return m ? m->bytes : 0; }
void dev_mosp_free(DevMosp *m) { (void)m; }
