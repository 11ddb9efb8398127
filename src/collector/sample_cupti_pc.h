/* CUDA PC sampling with stall reasons, for the CUDA runtime provider (prov_cuda*.c) to call per CUDA context:
 * open when a context is created (before its first launch), drain from the harvester, close at its end. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_SAMPLE_CUPTI_PC_H
#define HUBPROF_COLLECTOR_SAMPLE_CUPTI_PC_H

#include "cupti_pc.h"

typedef struct hpc_cupti_pcs hpc_cupti_pcs;

/* Where a drained row goes: 1 when written (or kept to be written later), 0 when not. */
typedef int (*hpc_cupti_write_fn)(void *ctx, struct hp_store *st, const hp_pc_sample *row);

/* Enable continuous PC sampling on context cuctx (a CUcontext): every stall reason CUPTI names, a sampling
 * period of 2^period_log2 cycles (5 to 31; 0: CUPTI's default), up to max_pcs PCs per read (0: 4096). Slow
 * path (allocates). Returns the state (NULL only without memory); hpc_cupti_pcs_error says why sampling is
 * off ("" when on). */
__attribute__((visibility("hidden"))) hpc_cupti_pcs *hpc_cupti_pcs_open(void *cuctx, uint32_t period_log2,
                                                                        size_t max_pcs);
__attribute__((visibility("hidden"))) const char *hpc_cupti_pcs_error(const hpc_cupti_pcs *s);
/* Read what CUPTI has gathered and write it as pc_sample rows (where: the provider's map from a PC to its
 * dispatch row, code object and offset; hpc_cubin_func_offset gives a kernel's offset in its cubin), through
 * write when given (else hp_write_pc_sample).
 * Row ids from *next_id. Returns the rows written. From a collector's thread, or a resource callback. */
__attribute__((visibility("hidden"))) uint64_t hpc_cupti_pcs_drain(hpc_cupti_pcs *s, struct hp_store *st,
                                                                   hpc_cupti_where_fn where, void *wctx,
                                                                   int64_t time_ns, uint64_t weight,
                                                                   uint64_t *next_id,
                                                                   hpc_cupti_write_fn write, void *write_ctx);
/* Rows written, samples of PCs that could not be placed, samples CUPTI dropped (its buffers were full). */
__attribute__((visibility("hidden"))) void hpc_cupti_pcs_stats(const hpc_cupti_pcs *s, uint64_t *written,
                                                               uint64_t *unplaced, uint64_t *dropped);
/* Disable sampling on the context and free the state (the last drain first). */
__attribute__((visibility("hidden"))) void hpc_cupti_pcs_close(hpc_cupti_pcs *s);

#endif
