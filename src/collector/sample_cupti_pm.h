/* CUDA PM sampling (counter timelines inside kernels), for the CUDA runtime provider (prov_cuda*.c) to call
 * per device: open before the kernels to sample, drain from the harvester, close at the end. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_SAMPLE_CUPTI_PM_H
#define HUBPROF_COLLECTOR_SAMPLE_CUPTI_PM_H

#include "cupti_pc.h"

#define HPC_PM_MAX_METRICS 32

typedef struct hpc_cupti_pm hpc_cupti_pm;

/* Start PM sampling on CUDA device `device` (its index): the metrics (up to HPC_PM_MAX_METRICS names of
 * CUPTI, e.g. "sm__cycles_active.sum"; one pass only) every interval_ns (0: 100 µs) of GPU time, up to
 * max_samples per decode (0: 10000). Slow path (allocates). Returns the state (NULL only without memory);
 * hpc_cupti_pm_error says why sampling is off ("" when on). */
__attribute__((visibility("hidden"))) hpc_cupti_pm *hpc_cupti_pm_open(size_t device,
                                                                      const char *const *metrics, size_t n,
                                                                      uint64_t interval_ns,
                                                                      uint32_t max_samples);
__attribute__((visibility("hidden"))) const char *hpc_cupti_pm_error(const hpc_cupti_pm *s);
/* Decode what the GPU sampled and write it as counter_sample rows (counter_ids: the counter_info rows of the
 * metrics, in their order) of the dispatches whose windows hold each interval's end; values cumulative from
 * the dispatch's start. The samples' GPU timestamps are taken on the windows' clock, or moved by
 * gpu_minus_host where that puts them in a window (hpc_pm_shift). Returns the rows written. */
__attribute__((visibility("hidden"))) uint64_t hpc_cupti_pm_drain(hpc_cupti_pm *s, struct hp_store *st,
                                                                  const uint64_t *counter_ids,
                                                                  const hpc_pm_window *w, size_t nw,
                                                                  int64_t gpu_minus_host, uint64_t *next_id);
/* Rows written, intervals outside every window, decodes that found the hardware buffer overflowed. */
__attribute__((visibility("hidden"))) void hpc_cupti_pm_stats(const hpc_cupti_pm *s, uint64_t *written,
                                                              uint64_t *outside, uint64_t *overflows);
__attribute__((visibility("hidden"))) void hpc_cupti_pm_close(hpc_cupti_pm *s);

#endif
