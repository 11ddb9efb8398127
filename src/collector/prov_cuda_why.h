/* Why a CUDA kernel is slow, inside the CUDA provider (prov_cuda.c calls these hooks): PC sampling with stall
 * reasons per context, PM sampling per device, the cubins of loaded modules (docs/cuda.md, docs/sampling.md).
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_PROV_CUDA_WHY_H
#define HUBPROF_COLLECTOR_PROV_CUDA_WHY_H

#include <stdint.h>

struct hp_store;

enum { HPC_CUPTI_DOMAIN_RESOURCE = 3 }; /* CUPTI_CB_DOMAIN_RESOURCE */

/* From the provider's init: what `hubprof sample` asked (HUBPROF_SAMPLE_PERIOD_US: PC sampling;
 * HUBPROF_SAMPLE_CUDA_COUNTERS: PM sampling of those metrics instead), and whether the code is kept
 * (code_all: --code). Returns 1 when the resource callbacks are wanted. */
__attribute__((visibility("hidden"))) int hpc_cuda_why_init(int code_all);
/* CUPTI is loaded (InitializeInjection): the registry of cubins, CUPTI's CRC and device entry points. */
__attribute__((visibility("hidden"))) void hpc_cuda_why_start(void);
/* A CUPTI resource callback (contexts created and destroyed, modules loaded), on the application's thread. */
__attribute__((visibility("hidden"))) void hpc_cuda_why_resource(uint32_t cbid, const void *data);
/* An application's kernel launch (outermost API call), and a kernel's record (row 0: not selected): the
 * samples of kernels still running wait for their records. */
__attribute__((visibility("hidden"))) void hpc_cuda_why_launch(void);
__attribute__((visibility("hidden"))) void hpc_cuda_why_kernel(uint32_t correlation_id, uint64_t row_id,
                                                               int64_t start_ns, int64_t end_ns);
/* Read the samples into the log: from the flusher (after its activity flush; when no kernel runs, or a
 * second has passed), and at exit (final: everything, then sampling ends and the counts go in as metadata).
 */
__attribute__((visibility("hidden"))) void hpc_cuda_why_drain(struct hp_store *s, int final);
__attribute__((visibility("hidden"))) void hpc_cuda_why_fork_child(void);

#endif
