/* Host API calls and memory copies (api_trace.c, hubprof --api): what the layer and the exit handler call. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_API_TRACE_H
#define HUBPROF_COLLECTOR_API_TRACE_H

#include "collector.h"

#include <stddef.h>

struct hp_store;
/* Category of the API call regions ("api"). */
extern const char hpc_api_cat[] HPC_HIDDEN;
/* HUBPROF_API (at init, before the layer's table is made). */
HPC_HIDDEN void hpc_api_enable(int on);
/* With --api, put the wrappers into the layer's table `ours` (nent entries); `target` is the runtime. */
HPC_HIDDEN void hpc_api_install(cl_icd_dispatch *ours, const cl_icd_dispatch *target, size_t nent);
/* Exit handler: write every pending memory copy (device times where its command completed). */
HPC_HIDDEN void hpc_api_exit(struct hp_store *s);

#endif
