/*
** cuda/backend_cuda.h: what the files of the CUDA plugin share.
**
** The plugin dyng_cuda<MAJOR>.so is C++ compiled by nvcc; the ABI headers
** of engine/ are C, so they are included here with C linkage.  Every name the
** plugin defines is hidden (-fvisibility=hidden and cuda/plugin.map) except
** dyng_plugin_entry (cuda/entry.cu).
**
** plugin_build.h is written by make for each toolkit (cuda/Makefile.mk):
** DYNG_CUDA_MAJOR, DYNG_CUDA_RUNTIME and DYNG_CUDA_ARCHS, the device code
** the plugin carries ("sm_75,...,compute_120").
*/
#ifndef DYNG_CUDA_BACKEND_CUDA_H
#define DYNG_CUDA_BACKEND_CUDA_H

#include "config.h"
#include "plugin_build.h"

extern "C" {
#include "engine/backend.h"
#include "engine/errcode.h"
#include "engine/plugin.h"
}

#define DYNG_CUDA_HIDDEN __attribute__((visibility("hidden")))

/* The CUDA backend's table (static; valid for the life of the process).
** Its functions may be called only after the plugin's init succeeded. */
extern "C" DYNG_CUDA_HIDDEN const dyng_backend *dyng_cuda_backend(void);

/* Keeps what the host lent the plugin at init (dev_common.cu), for
** dev_parallel_for. */
DYNG_CUDA_HIDDEN void dev_set_host(const dyng_host *host);

#endif /* DYNG_CUDA_BACKEND_CUDA_H */
