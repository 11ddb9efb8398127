/* CUDA PM sampling (CUPTI's cupti_pmsampling.h) for the CUDA runtime provider: counter values sampled on a
 * timer while kernels run, decoded and evaluated through the Profiler Host API, written as counter_sample
 * rows of the dispatch whose window holds them (cupti_pc.c's hpc_pm_rows). Needs a GPU to run; libcupti
 * through cupti_host.c. The parameter structs are declared from cupti_pmsampling.h, cupti_profiler_host.h
 * and cupti_target.h (tests/test_cupti_pc.c checks them against those headers where installed). */
/* SPDX-License-Identifier: MIT */
#include "sample_cupti_pm.h"

#include "counters.h"
#include "prov_cuda_range.h" /* the parameter structs the Range Profiler shares with PM sampling */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef hpc_crp_init pm_init; /* CUpti_Profiler_Initialize_Params */
typedef hpc_crp_chip pm_chip; /* CUpti_Device_GetChipName_Params */
typedef hpc_crp_eval pm_eval; /* CUpti_Profiler_Host_EvaluateToGpuValues_Params */
typedef struct {
  size_t size;
  void *priv;
  size_t device;
  size_t image_size;
  uint8_t *image;
} pm_avail; /* CUpti_PmSampling_GetCounterAvailability_Params */
typedef struct {
  size_t size;
  void *priv;
  size_t device;
  void *obj;
} pm_enable;                /* CUpti_PmSampling_Enable_Params */
typedef hpc_crp_obj pm_obj; /* CUpti_PmSampling_Disable_Params, _Start_Params, _Stop_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  size_t config_size;
  const uint8_t *config;
  size_t hw_buffer;
  uint64_t interval;
  int32_t trigger; /* CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL = 1 */
  int32_t append;  /* CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST = 0 */
} pm_config;       /* CUpti_PmSampling_SetConfig_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  const char **names;
  size_t n;
  uint32_t max_samples;
  size_t data_size;
} pm_dsize;                     /* CUpti_PmSampling_GetCounterDataSize_Params */
typedef hpc_crp_dinit pm_dinit; /* CUpti_PmSampling_CounterDataImage_Initialize_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  uint8_t *data;
  size_t data_size;
  int32_t stop_reason;
  uint8_t overflow;
} pm_decode; /* CUpti_PmSampling_DecodeData_Params */
typedef struct {
  size_t size;
  void *priv;
  const uint8_t *data;
  size_t data_size;
  size_t total, populated, completed;
} pm_dinfo; /* CUpti_PmSampling_GetCounterDataInfo_Params */
typedef struct {
  HPC_CRP_OBJ_HEAD;
  const uint8_t *data;
  size_t data_size;
  size_t index;
  uint64_t start, end;
} pm_sinfo; /* CUpti_PmSampling_CounterData_GetSampleInfo_Params */

#define PSIZE HPC_CRP_SIZE

enum {
  M_PINIT,
  M_CHIP,
  M_AVAIL,
  M_EVAL,
  M_ENABLE,
  M_DISABLE,
  M_CONFIG,
  M_START,
  M_STOP,
  M_DSIZE,
  M_DINIT,
  M_DECODE,
  M_DINFO,
  M_SINFO,
  M_N
};
static const char *const pm_fn_names[M_N] = {"cuptiProfilerInitialize",
                                             "cuptiDeviceGetChipName",
                                             "cuptiPmSamplingGetCounterAvailability",
                                             "cuptiProfilerHostEvaluateToGpuValues",
                                             "cuptiPmSamplingEnable",
                                             "cuptiPmSamplingDisable",
                                             "cuptiPmSamplingSetConfig",
                                             "cuptiPmSamplingStart",
                                             "cuptiPmSamplingStop",
                                             "cuptiPmSamplingGetCounterDataSize",
                                             "cuptiPmSamplingCounterDataImageInitialize",
                                             "cuptiPmSamplingDecodeData",
                                             "cuptiPmSamplingGetCounterDataInfo",
                                             "cuptiPmSamplingCounterDataGetSampleInfo"};
typedef int (*cupti_fn)(void *params);

struct hpc_cupti_pm {
  hc_cupti *lib;
  cupti_fn fn[M_N];
  void *host, *obj; /* the Profiler Host object, the PM sampling object */
  const char **names;
  size_t n;
  uint8_t *avail, *config, *data;
  size_t data_size;
  double *values, *acc;
  uint64_t last_dispatch, outside, written, overflows;
  int started;
  char error[256];
};

static int pm_call(hpc_cupti_pm *s, int f, void *params, size_t size) {
  *(size_t *)params = size;
  int rc = s->fn[f](params);
  if (rc && !s->error[0])
    snprintf(s->error, sizeof s->error, "CUDA PM sampling: %s failed (CUPTI error %d)", pm_fn_names[f], rc);
  return rc;
}

const char *hpc_cupti_pm_error(const hpc_cupti_pm *s) { return s ? s->error : "out of memory"; }

static hpc_cupti_pm *pm_nomem(hpc_cupti_pm *s) {
  snprintf(s->error, sizeof s->error, "CUDA PM sampling: out of memory");
  return s;
}

hpc_cupti_pm *hpc_cupti_pm_open(size_t device, const char *const *metrics, size_t n, uint64_t interval_ns,
                                uint32_t max_samples) {
  hpc_cupti_pm *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  if (!n || n > HPC_PM_MAX_METRICS)
    return snprintf(s->error, sizeof s->error, "CUDA PM sampling: 1 to %d metrics", HPC_PM_MAX_METRICS), s;
  if (hc_cupti_open(&s->lib) != HC_OK)
    return snprintf(s->error, sizeof s->error, "CUDA PM sampling: %s", hc_cupti_error(s->lib)), s;
  for (int i = 0; i < M_N; i++)
    if (!(*(void **)&s->fn[i] = hc_cupti_sym(s->lib, pm_fn_names[i])))
      return snprintf(s->error, sizeof s->error, "CUDA PM sampling: %s has no %s", hc_cupti_path(s->lib),
                      pm_fn_names[i]),
             s;
  s->names = calloc(n, sizeof *s->names);
  s->values = calloc(n, sizeof *s->values);
  s->acc = calloc(n, sizeof *s->acc);
  if (!s->names || !s->values || !s->acc) return pm_nomem(s);
  for (size_t i = 0; i < n; i++)
    s->names[i] = metrics[i];
  s->n = n;
  pm_init pi = {0, NULL};
  pm_chip pc = {0, NULL, device, NULL};
  pm_avail pa = {0, NULL, device, 0, NULL};
  if (pm_call(s, M_PINIT, &pi, PSIZE(pm_init, priv)) || pm_call(s, M_CHIP, &pc, PSIZE(pm_chip, chip)) ||
      pm_call(s, M_AVAIL, &pa, PSIZE(pm_avail, image)))
    return s;
  if (!(s->avail = pa.image = calloc(1, pa.image_size ? pa.image_size : 1))) return pm_nomem(s);
  if (pm_call(s, M_AVAIL, &pa, PSIZE(pm_avail, image))) return s;
  /* the configuration: which counters to collect, from the metrics' names (Profiler Host API, cupti_host.c)
   */
  size_t config_size = 0;
  char err[200];
  if (hc_cupti_pm_config(s->lib, pc.chip, s->avail, metrics, n, &s->host, &s->config, &config_size, err,
                         sizeof err) != HC_OK)
    return snprintf(s->error, sizeof s->error, "CUDA PM sampling: %s", err), s;
  pm_enable en = {0, NULL, device, NULL};
  if (pm_call(s, M_ENABLE, &en, PSIZE(pm_enable, obj))) return s;
  s->obj = en.obj;
  if (!max_samples) max_samples = 10000;
  pm_config cf = {
      0, NULL, s->obj, config_size, s->config, (size_t)max_samples * 1024, interval_ns ? interval_ns : 100000,
      1, 0};
  pm_dsize ds = {0, NULL, s->obj, s->names, n, max_samples, 0};
  if (pm_call(s, M_CONFIG, &cf, PSIZE(pm_config, append)) ||
      pm_call(s, M_DSIZE, &ds, PSIZE(pm_dsize, data_size)))
    return s;
  if (!(s->data = calloc(1, ds.data_size ? ds.data_size : 1))) return pm_nomem(s);
  s->data_size = ds.data_size;
  pm_dinit di = {0, NULL, s->obj, s->data_size, s->data};
  pm_obj st = {0, NULL, s->obj};
  if (pm_call(s, M_DINIT, &di, PSIZE(pm_dinit, data)) || pm_call(s, M_START, &st, PSIZE(pm_obj, obj)))
    return s;
  s->started = 1;
  return s;
}

uint64_t hpc_cupti_pm_drain(hpc_cupti_pm *s, struct hp_store *st, const uint64_t *counter_ids,
                            const hpc_pm_window *w, size_t nw, int64_t gpu_minus_host, uint64_t *next_id) {
  if (!s || !s->started || s->error[0]) return 0;
  uint64_t wrote = 0;
  for (int round = 0; round < 64; round++) { /* until the hardware buffer is decoded */
    pm_decode dc = {0, NULL, s->obj, s->data, s->data_size, 0, 0};
    if (pm_call(s, M_DECODE, &dc, PSIZE(pm_decode, overflow))) break;
    s->overflows += dc.overflow != 0;
    pm_dinfo in = {0, NULL, s->data, s->data_size, 0, 0, 0};
    if (pm_call(s, M_DINFO, &in, PSIZE(pm_dinfo, completed))) break;
    for (size_t i = 0; i < in.completed; i++) {
      pm_sinfo si = {0, NULL, s->obj, s->data, s->data_size, i, 0, 0};
      pm_eval ev = {0, NULL, s->host, s->data, s->data_size, i, s->names, s->n, s->values};
      if (pm_call(s, M_SINFO, &si, PSIZE(pm_sinfo, end)) || pm_call(s, M_EVAL, &ev, PSIZE(pm_eval, values)))
        break;
      hpc_pm_interval iv = {(int64_t)si.start, (int64_t)si.end, s->values};
      int64_t shift = hpc_pm_shift(&iv, w, nw, gpu_minus_host); /* onto the windows' clock */
      iv.start_ns -= shift, iv.end_ns -= shift;
      hp_counter_sample rows[HPC_PM_MAX_METRICS];
      size_t nrows = 0;
      hpc_pm_rows(&iv, 1, counter_ids, s->n, w, nw, s->acc, &s->last_dispatch, next_id, &s->outside, rows,
                  HPC_PM_MAX_METRICS, &nrows);
      for (size_t r = 0; r < nrows; r++)
        wrote += st && hp_write_counter_sample(st, &rows[r]) == HP_OK;
    }
    pm_dinit di = {0, NULL, s->obj, s->data_size, s->data}; /* empty the image for the next decode */
    if (pm_call(s, M_DINIT, &di, PSIZE(pm_dinit, data)) || dc.stop_reason != 1 /* COUNTER_DATA_FULL */) break;
  }
  s->written += wrote;
  return wrote;
}

void hpc_cupti_pm_stats(const hpc_cupti_pm *s, uint64_t *written, uint64_t *outside, uint64_t *overflows) {
  *written = s ? s->written : 0, *outside = s ? s->outside : 0, *overflows = s ? s->overflows : 0;
}

void hpc_cupti_pm_close(hpc_cupti_pm *s) {
  if (!s) return;
  pm_obj o = {0, NULL, s->obj};
  if (s->started) pm_call(s, M_STOP, &o, PSIZE(pm_obj, obj));
  if (s->obj) pm_call(s, M_DISABLE, &o, PSIZE(pm_obj, obj));
  hc_cupti_host_close(s->lib, s->host);
  free(s->names);
  free(s->values);
  free(s->acc);
  free(s->avail);
  free(s->config);
  free(s->data);
  hc_cupti_close(s->lib);
  free(s);
}
