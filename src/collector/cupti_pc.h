/* CUDA PC sampling and PM sampling into the hub's rows (issue 26): CUPTI's records as cupti_pcsampling.h lays
 * them out (declared here so the collector builds without the CUDA toolkit), and the pure conversions. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_CUPTI_PC_H
#define HUBPROF_COLLECTOR_CUPTI_PC_H

#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

/* CUPTI's PACKED_ALIGNMENT under GCC and Clang (cupti_common.h): packed members, 8-byte aligned structs. */
#define HPC_CUPTI_PACKED __attribute__((__packed__)) __attribute__((aligned(8)))

typedef struct HPC_CUPTI_PACKED hpc_cupti_stall { /* CUpti_PCSamplingStallReason */
  uint32_t pcSamplingStallReasonIndex;
  uint32_t samples;
} hpc_cupti_stall;

typedef struct HPC_CUPTI_PACKED hpc_cupti_pc { /* CUpti_PCSamplingPCData */
  size_t size;
  uint64_t cubinCrc;
  uint64_t pcOffset; /* from the function's start */
  uint32_t functionIndex;
  uint32_t pad;
  char *functionName;
  size_t stallReasonCount;
  hpc_cupti_stall *stallReason;
  uint32_t correlationId; /* the kernel launch's (continuous mode) */
} hpc_cupti_pc;

typedef struct HPC_CUPTI_PACKED hpc_cupti_pc_data { /* CUpti_PCSamplingData */
  size_t size;
  size_t collectNumPcs;
  uint64_t totalSamples;
  uint64_t droppedSamples;
  size_t totalNumPcs;
  size_t remainingNumPcs;
  uint64_t rangeId;
  hpc_cupti_pc *pPcData;
  uint64_t nonUsrKernelsTotalSamples;
  uint8_t hardwareBufferFull;
} hpc_cupti_pc_data;

/* The stall reasons of a context (cuptiPCSamplingGetStallReasons): CUPTI's index of each and its name. */
typedef struct hpc_cupti_reasons {
  size_t n;
  const uint32_t *index;
  const char *const *names;
} hpc_cupti_reasons;

/* Where a sampled PC is in the hub: its dispatch row (by the launch's correlation id), its code object and
 * the byte offset in that object's bytes (the function's .text offset in the cubin + pcOffset). 0 when
 * known, -1 when not (the PC is counted as unplaced). */
typedef int (*hpc_cupti_where_fn)(void *ctx, const hpc_cupti_pc *pc, uint64_t *dispatch_id,
                                  uint64_t *code_object_id, uint64_t *offset);

typedef struct hpc_cupti_pc_cursor { /* where a conversion stopped: the PC and its stall reason */
  size_t pc, reason;
  uint64_t unplaced; /* samples of PCs `where` could not place */
} hpc_cupti_pc_cursor;

/* CUPTI's parsed PC data into pc_sample rows: one row per PC and stall reason with samples (samples = the
 * count, stall_reason = the reason's name, "" for an index CUPTI did not name), ids from *next_id, the
 * given time, thread and weight. Up to max rows into out; returns how many; *cur says where to go on (start
 * it zeroed; done when cur->pc == d->totalNumPcs). Strings point into `reasons`. No allocation. */
__attribute__((visibility("hidden"))) size_t
hpc_cupti_pc_rows(const hpc_cupti_pc_data *d, const hpc_cupti_reasons *reasons, hpc_cupti_where_fn where,
                  void *ctx, int64_t time_ns, uint64_t thread_id, uint64_t weight, uint64_t *next_id,
                  hpc_cupti_pc_cursor *cur, hp_pc_sample *out, size_t max);

/* The file offset of a kernel's code section (".text.<function>") in cubin bytes (ELF64), for the offsets
 * of its PCs. 0 and *off, or -1 when the bytes are not an ELF64 cubin or have no such section. Bounds-
 * checked, no allocation. */
__attribute__((visibility("hidden"))) int hpc_cubin_func_offset(const void *cubin, size_t n,
                                                                const char *function, uint64_t *off);

/* PM sampling: one interval's values of the counters (cuptiPmSampling decoded by the Profiler Host API). */
typedef struct hpc_pm_interval {
  int64_t start_ns, end_ns; /* the clock of the dispatches' device times */
  const double *values;     /* ncounters values of this interval */
} hpc_pm_interval;

/* A dispatch's device window, to which the intervals ending inside it belong. */
typedef struct hpc_pm_window {
  uint64_t dispatch_id; /* row id */
  int64_t start_ns, end_ns;
} hpc_pm_window;

/* PM intervals (in time order) into counter_sample rows: for each interval ending inside a window, one row
 * per counter at the interval's end time, its value the sum of that dispatch's intervals so far
 * (counter_sample holds values since the dispatch began). `acc` (ncounters) carries the sums across calls,
 * zeroed when another dispatch begins (*last_dispatch remembers which). Whole intervals only: returns the
 * intervals consumed (fewer than niv when out's max rows are used up), *nrows the rows written, *outside
 * += the intervals of no window. No allocation. */
__attribute__((visibility("hidden"))) size_t
hpc_pm_rows(const hpc_pm_interval *iv, size_t niv, const uint64_t *counter_ids, size_t ncounters,
            const hpc_pm_window *w, size_t nw, double *acc, uint64_t *last_dispatch, uint64_t *next_id,
            uint64_t *outside, hp_counter_sample *out, size_t max, size_t *nrows);

/* The clock of a PM interval: 0 when its end lies in a window as it is (the GPU's timestamps on the
 * dispatches' clock), else alt (the GPU clock's distance from the dispatches', e.g. CLOCK_REALTIME's from
 * CLOCK_MONOTONIC_RAW) when its end less alt lies in one; 0 when neither. */
__attribute__((visibility("hidden"))) int64_t hpc_pm_shift(const hpc_pm_interval *iv, const hpc_pm_window *w,
                                                           size_t nw, int64_t alt);

#endif
