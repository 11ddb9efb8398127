/* The roofline of a store: its devices' ceilings (the ceiling table) and each kernel placed by arithmetic
 * intensity and achieved FLOP/s where the device's counters give FLOPs and DRAM bytes (NVIDIA's
 * sass_thread_inst_executed_op_* and dram__bytes, as Nsight Compute; gfx942's SQ_INSTS_VALU_* and TCC_EA0_*,
 * as rocprofiler-compute), else what is missing. Read through the hub's API; used by `analyze --roofline` and
 * the HTML report. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXPORT_ROOFLINE_PLACE_H
#define HUBPROF_EXPORT_ROOFLINE_PLACE_H

#include "../common/hu_map.h"
#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rf_ceiling {
  uint64_t agent_id;
  const char *device; /* the agent's name */
  const char *name;   /* fp64, fp32, fp16, int32, dram */
  const char *unit;
  double value; /* the latest measurement of that device and ceiling */
} rf_ceiling;

typedef struct rf_point {
  uint64_t agent_id;
  const char *device, *kernel;
  const char *precision; /* fp64, fp32, fp16; NULL when not placed */
  double flop, bytes;    /* summed over the kernel's dispatches */
  double time_ns;        /* the dispatches' device time */
  double intensity;      /* FLOP per DRAM byte */
  double gflops;         /* achieved GFLOP/s */
  const char *bound; /* "memory" or "compute" (which roof is lower at its intensity), "" without ceilings */
  char missing[512]; /* when not placed: the counters that would place it */
} rf_point;

typedef struct rf_roofline {
  rf_ceiling *ceilings;
  size_t nceilings;
  rf_point *points;
  size_t npoints;
  hu_strmap strs; /* the names, owned */
} rf_roofline;

/* Read the roofline of s into *out (free with rf_free). HP_OK, or the hub's error reading s. */
hp_status rf_read(hp_store *s, rf_roofline *out);
void rf_free(rf_roofline *r);

#endif
