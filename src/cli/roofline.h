/* The ceilings of `hubprof roofline`, measured by hubprof's own micro-benchmarks on OpenCL (roofline_cl.c)
 * and CUDA (roofline_cuda.c): FLOP/s per precision, int32 op/s, global-memory bandwidth and each cache
 * level's bandwidth (roofline_cache.c: the levels and their working sets) on every device.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_ROOFLINE_H
#define HUBPROF_CLI_ROOFLINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rl_ceiling {
  char device[256];    /* CL_DEVICE_NAME */
  const char *ceiling; /* "fp64", "fp32", "fp16", "int32", "dram", then the cache levels "l1", "l2", "l3" */
  const char *unit;    /* "GFLOP/s", "GOP/s", "GB/s" */
  double value;        /* < 0: not measured (note says why) */
  char note[192];      /* how it was measured (the best kernel), or why there is no value */
  /* the device as the collector describes it (an hp_agent row: merge finds the profile's own agent by type,
   * index among its platform's devices, vendor and name) */
  int type;          /* hp_agent_type */
  int device_index;  /* index among its platform's devices */
  char vendor[128];  /* CL_DEVICE_VENDOR */
  char runtime[192]; /* CL_PLATFORM_VERSION */
  int64_t compute_units, max_clock_mhz, global_mem_bytes, local_mem_bytes;
} rl_ceiling;

/* c->note from a printf format: why a ceiling has no value (roofline_store.c; the measurers' one helper). */
void rl_note(rl_ceiling *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The rows of one device: fp64, fp32, fp16, int32, dram (RL_FIXED), then up to RL_MAX_LEVELS cache levels. */
#define RL_FIXED 5
#define RL_MAX_LEVELS 4
#define RL_MAX_ROWS (RL_FIXED + RL_MAX_LEVELS)

/* roofline_cache.c: a data (or unified) cache level of the host CPU, as sysfs describes cpu0's. */
typedef struct rl_level {
  int level;    /* 1, 2, 3, 4 */
  int64_t size; /* bytes */
} rl_level;

/* The host CPU's data and unified cache levels, innermost first, from DIR/indexN/{level,type,size} (DIR:
 * $HUBPROF_ROOFLINE_CACHES, else /sys/devices/system/cpu/cpu0/cache); 0 when there is none to read. */
size_t rl_host_caches(rl_level *out, size_t max);
/* The ceiling name of cache level n ("l1" .. "l4"). */
const char *rl_level_name(int level);
/* The working set (bytes) that measures levels[i]: half of L1; for an outer level 4x the level inside it,
 * at least 1/8 of its own size, at most half of it. 0 when there is no such working set, why in `why`. */
int64_t rl_working_set(const rl_level *levels, size_t i, char *why, size_t len);
/* The cache ceilings of one device, innermost first, against the dram ceiling: from the outermost in, a
 * level that does not read at least RL_APART times faster than the next level out that is kept (dram first)
 * cannot be told apart from it: its value is dropped (-1) and its note says so. */
#define RL_APART 1.2
void rl_order_levels(rl_ceiling *levels, size_t n, double dram);
/* "48 KiB", "2 MiB": a byte count for notes. */
void rl_size_text(int64_t bytes, char *buf, size_t len);

typedef struct rl_opts {
  const char *device_glob; /* NULL: every device */
  int quick;               /* smaller sizes, fewer repetitions (tests) */
  int quiet;               /* no progress lines on stderr */
  int skip_nvidia;         /* OpenCL: leave out NVIDIA's devices (CUDA measured them) */
} rl_opts;

/* Measure every ceiling on every matching OpenCL device (libOpenCL.so.1 loaded with dlopen). Returns 0 with
 * *out (free()) holding *n rows, or -1 with one line in err (no OpenCL, no device matches the glob, out of
 * memory). */
int rl_measure(const rl_opts *o, rl_ceiling **out, size_t *n, char *err, size_t len);
/* The same on every matching CUDA device (libcuda.so.1 loaded with dlopen; the kernels built by nvcc with
 * hubprof): the device named as the CUDA provider names its agent (CUPTI's chip name, else sm_XY), the glob
 * matching that name or the product name. -1 with one line in err when there is no CUDA here (built without
 * nvcc, no driver, no device), -2 when there are devices but none matches. */
int rl_measure_cuda(const rl_opts *o, rl_ceiling **out, size_t *n, char *err, size_t len);
/* 1 when this hubprof carries the CUDA micro-benchmarks (built where nvcc was found), else 0 */
int rl_cuda_built(void);

/* roofline_store.c: the ceilings as hub rows (node, agents, ceiling). `method` names the tool ("hubprof
 * roofline 0.1.0"), `when` the Unix time of the measurement in ns. Errors printed; CLI_OK or CLI_FAIL. */
int rl_store_check_append(const char *store); /* a readable store to add ceilings to */
int rl_store_new(const char *path, const char *format, const rl_ceiling *rows, size_t n, const char *method,
                 int64_t when);
/* Add them to an existing store, rewritten in its format (a Parquet dataset: appended to). */
int rl_store_append(const char *store, const rl_ceiling *rows, size_t n, const char *method, int64_t when);

#endif
