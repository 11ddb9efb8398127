/* Selective collection inside the collector (select.c): which dispatches are recorded and replayed, from
 * HUBPROF_KERNEL, HUBPROF_KERNEL_EXCLUDE, HUBPROF_DISPATCH_RANGE and HUBPROF_REGION (hubprof trace|profile
 * --kernel, --kernel-exclude, --dispatch-range, --region). The others are forwarded untouched and counted. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_SELECT_H
#define HUBPROF_COLLECTOR_SELECT_H

#include "collector.h"

#define HPC_SELECT_MAX 64 /* values per variable (the CLI refuses more) */

struct hpc_env;
struct hp_store;

/* 1 while a selection is in force (set once at init, before collection starts). */
extern _Atomic int hpc_select_on HPC_HIDDEN;

/* Init: parse and compile the selection of e. A malformed one is reported in one line on stderr and
 * ignored (every dispatch is then collected). */
HPC_HIDDEN void hpc_select_init(const struct hpc_env *e);
/* The dispatch of kernel k (provider pv, runtime context rt) the calling thread is making now: 1 = collect
 * it, 0 = forward it untouched (counted as not selected). No allocation and no regex after a kernel name's
 * first dispatch. A provider's fast path tests hpc_select_on first (prov_opencl.h: hpc_selected). */
HPC_HIDDEN int hpc_select_kernel(const hpc_provider *pv, const void *rt, uintptr_t k);
/* Exit handler: the selection and the count of dispatches not selected as metadata of s. */
HPC_HIDDEN void hpc_select_exit(struct hp_store *s, int debug);

#endif
