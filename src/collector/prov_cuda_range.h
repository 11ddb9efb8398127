/* CUDA counters through CUPTI's Range Profiler (cupti_range_profiler.h) for the CUDA provider: one range per
 * kernel (auto range), CUPTI's kernel replay for every pass of the device's configuration inside one run (or
 * one configuration per run under hubprof's application replay), values evaluated with the Profiler Host API
 * and written as counter_value rows of the kernel's dispatch row (prov_cuda_range.c); the table that carries
 * a launch's values from its call to its activity record (prov_cuda_range_vals.c, no CUPTI call: tested
 * alone). docs/cuda.md, "Counters". */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_PROV_CUDA_RANGE_H
#define HUBPROF_COLLECTOR_PROV_CUDA_RANGE_H

#include "counters.h"
#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

struct hpc_env;

/* ---- the values table (prov_cuda_range_vals.c) -------------------------------------------------------- */
/* Ranges evaluated at a launch's end, keyed by the launch call's correlation id and the range's order within
 * the launch (a graph launch has one range per kernel node), read when the launch's kernel records are
 * written (CUPTI's thread). Lock-free: one writer per slot at a time (launches are serialised under kernel
 * replay), readers check the key before and after copying. A slot reused before its record came (more than
 * `slots` ranges later) loses those values: the dispatch is written without them. */
typedef struct hpc_cu_rv hpc_cu_rv;

/* A table of 2^bits slots of up to nmax values each; NULL without memory. */
__attribute__((visibility("hidden"))) hpc_cu_rv *hpc_cu_rv_new(unsigned bits, size_t nmax);
__attribute__((visibility("hidden"))) void hpc_cu_rv_free(hpc_cu_rv *t);
/* Range k (0-based) of launch corr: n values (n <= nmax), their counter_info ids and passes (arrays that
 * outlive the table's use: the device configuration's), and the CUPTI passes its configuration took. */
__attribute__((visibility("hidden"))) void hpc_cu_rv_put(hpc_cu_rv *t, uint32_t corr, uint32_t k,
                                                         const double *vals, const uint64_t *ids,
                                                         const uint32_t *pass, size_t n, uint32_t passes);
/* The next range of launch corr not taken yet (kernel records of one launch come in execution order): its
 * values as counter_value rows of dispatch row `dispatch_row` into out (max rows), *passes its CUPTI passes.
 * Returns the rows (0: none known for corr). */
__attribute__((visibility("hidden"))) size_t hpc_cu_rv_take(hpc_cu_rv *t, uint32_t corr,
                                                            uint64_t dispatch_row, hp_counter_value *out,
                                                            size_t max, uint32_t *passes);

/* ---- the Range Profiler (prov_cuda_range.c) ------------------------------------------------------------ */
/* Profile mode with HUBPROF_PROVIDER=cupti: parse the plan (and per-device plans); 0, or -1 with a reason.
 * Loads nothing yet: CUPTI is set up per context at its first launch. */
__attribute__((visibility("hidden"))) int hpc_cu_range_init(const struct hpc_env *e, const char **why);
/* 1 when CUDA counters are on (init succeeded and nothing gave up). */
__attribute__((visibility("hidden"))) int hpc_cu_range_on(void);
/* CUPTI is loaded: its library path (dlsym of the Range Profiler's functions). 0, or -1 with the reason. */
__attribute__((visibility("hidden"))) int hpc_cu_range_start(const char *cupti_path, char *why, size_t len);
/* The outermost launch call (kernel or graph) enters on the application's thread: the context's Range
 * Profiler set up at its first launch; the range lock taken until hpc_cu_range_leave. `corr`: the call's
 * correlation id (nested driver calls add theirs with hpc_cu_range_corr). */
__attribute__((visibility("hidden"))) void hpc_cu_range_enter(void *ctx, uint32_t corr);
__attribute__((visibility("hidden"))) void hpc_cu_range_corr(uint32_t corr);
/* Its exit: the ranges it made decoded, evaluated and put in the values table; the lock released. */
__attribute__((visibility("hidden"))) void hpc_cu_range_leave(void);
/* 1 for the runtime and driver calls that launch kernels (launches and graph launches). */
__attribute__((visibility("hidden"))) int hpc_cu_range_is_launch(int domain, uint32_t cbid);
/* A kernel record's values (by its correlation id) as rows of dispatch row `row` into out; see
 * hpc_cu_rv_take. */
__attribute__((visibility("hidden"))) size_t
hpc_cu_range_take(uint32_t corr, uint64_t row, hp_counter_value *out, size_t max, uint32_t *passes);
/* The log opened: the profile's metadata and the counter_info rows. */
__attribute__((visibility("hidden"))) void hpc_cu_range_log(hp_store *s);
/* Exit: each context's Range Profiler stopped and disabled; the debug summary line. */
__attribute__((visibility("hidden"))) void hpc_cu_range_exit(int debug);

#define HPC_CU_RANGE_MAX 256 /* metrics of one configuration */

/* ---- CUPTI's parameter structs the Range Profiler takes, declared from cupti_range_profiler.h,
 * cupti_profiler_target.h, cupti_target.h and cupti_profiler_host.h in their fields' order (hubprof builds
 * without the toolkit; tests/cuda/test_cuda_range.c checks each size against the headers where present) -- */
/* The head of every parameter struct that names a Range Profiler or PM sampling object: structSize, pPriv
 * and the object (both files' structs begin so) */
#define HPC_CRP_OBJ_HEAD                                                                                     \
  size_t size;                                                                                               \
  void *priv;                                                                                                \
  void *obj
typedef struct {
  size_t size;
  void *priv;
} hpc_crp_init;                            /* CUpti_Profiler_Initialize_Params */
typedef hc_cupti_chip_params hpc_crp_chip; /* CUpti_Device_GetChipName_Params (counters.h) */
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  size_t image_size;
  uint8_t *image;
} hpc_crp_avail; /* CUpti_Profiler_GetCounterAvailability_Params */
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  void *obj;
} hpc_crp_enable; /* CUpti_RangeProfiler_Enable_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
} hpc_crp_obj; /* CUpti_RangeProfiler_Disable_Params, _Start_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  size_t pass;
  size_t level;
  uint8_t all_submitted;
} hpc_crp_stop; /* CUpti_RangeProfiler_Stop_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  size_t config_size;
  const uint8_t *config;
  size_t data_size;
  uint8_t *data;
  int32_t range;  /* CUPTI_AutoRange = 1 */
  int32_t replay; /* CUPTI_KernelReplay = 2 */
  size_t max_ranges;
  uint16_t levels, min_level;
  size_t pass;
  uint16_t target_level;
} hpc_crp_config; /* CUpti_RangeProfiler_SetConfig_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  size_t dropped;
} hpc_crp_decode; /* CUpti_RangeProfiler_DecodeData_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  const char **names;
  size_t n;
  size_t max_ranges;
  uint32_t max_nodes;
  size_t data_size;
} hpc_crp_dsize; /* CUpti_RangeProfiler_GetCounterDataSize_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  size_t data_size;
  uint8_t *data;
} hpc_crp_dinit; /* CUpti_RangeProfiler_CounterDataImage_Initialize_Params */
typedef struct {
  size_t size;
  void *priv;
  const uint8_t *data;
  size_t data_size;
  size_t ranges;
} hpc_crp_dinfo; /* CUpti_RangeProfiler_GetCounterDataInfo_Params */
typedef struct {
  size_t size;
  void *priv;
  void *host;
  const uint8_t *data;
  size_t data_size;
  size_t range;
  const char **names;
  size_t n;
  double *values;
} hpc_crp_eval; /* CUpti_Profiler_Host_EvaluateToGpuValues_Params */
#define HPC_CRP_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

#endif
