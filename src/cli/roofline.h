/* The ceilings of `hubprof roofline`, measured by hubprof's own OpenCL micro-benchmarks (roofline_cl.c):
 * FLOP/s per precision, int32 op/s and global-memory bandwidth on every OpenCL device. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_ROOFLINE_H
#define HUBPROF_CLI_ROOFLINE_H

#include <stddef.h>

typedef struct rl_ceiling {
  char device[256];    /* CL_DEVICE_NAME */
  const char *ceiling; /* "fp64", "fp32", "fp16", "int32", "dram" */
  const char *unit;    /* "GFLOP/s", "GOP/s", "GB/s" */
  double value;        /* < 0: not measured (note says why) */
  char note[192];      /* how it was measured (the best kernel), or why there is no value */
} rl_ceiling;

typedef struct rl_opts {
  const char *device_glob; /* NULL: every device */
  int quick;               /* smaller sizes, fewer repetitions (tests) */
  int quiet;               /* no progress lines on stderr */
} rl_opts;

/* Measure every ceiling on every matching OpenCL device (libOpenCL.so.1 loaded with dlopen). Returns 0 with
 * *out (free()) holding *n rows, or -1 with one line in err (no OpenCL, no device matches the glob, out of
 * memory). */
int rl_measure(const rl_opts *o, rl_ceiling **out, size_t *n, char *err, size_t len);

#endif
