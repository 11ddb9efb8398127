/* Where libcupti is looked for, in one place (cupti_host.c): the host API's planner and the collector's CUDA
 * provider (src/collector/prov_cuda.c) walk the same candidates in the same order (docs/cuda.md). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COUNTERS_CUPTI_FIND_H
#define HUBPROF_COUNTERS_CUPTI_FIND_H

#include <stddef.h>

/* Try one candidate file: 1 loaded (stop), 0 absent (go on), -1 present but unusable (stop; the loader keeps
 * its own message). */
typedef int (*hc_cupti_load_fn)(void *ctx, const char *path);

/* $HUBPROF_CUPTI alone when set; else /usr/local/cuda/{lib64,extras/CUPTI/lib64}, $CUDA_HOME/{lib64,
 * extras/CUPTI/lib64}, then the nvidia-cuda-cupti pip package's folders. Returns what the last load call
 * returned; 0: none found, and then err (len bytes) says where it looked. */
__attribute__((visibility("hidden"))) int hc_cupti_search(hc_cupti_load_fn load, void *ctx, char *err,
                                                          size_t len);

#endif
