/* CUDA PC sampling with stall reasons (CUPTI's cupti_pcsampling.h, continuous mode) for the CUDA runtime
 * provider: per context, enable and configure sampling, read the stall reasons' names, drain the parsed PC
 * data into pc_sample rows (cupti_pc.c) and write them. Needs a GPU to run; libcupti through cupti_host.c. */
/* SPDX-License-Identifier: MIT */
#include "sample_cupti_pc.h"

#include "counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALL_NAME 128 /* CUPTI_STALL_REASON_STRING_SIZE */
#define ROWS 256       /* pc_sample rows converted at a time (on the stack of the draining thread) */

/* The parameter structs of cupti_pcsampling.h (size, reserved pointer, context, then their own fields). */
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
} p_ctx; /* Enable, Disable, Start, Stop */
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  size_t *n;
} p_nreasons;
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  size_t n;
  uint32_t *index;
  char **names;
} p_reasons;
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  void *data;
} p_getdata;
typedef struct { /* CUpti_PCSamplingConfigurationInfo */
  int32_t type;
  int32_t status;
  union {
    uint64_t data[3];
    uint32_t u32;
    size_t sz;
    void *ptr;
    struct {
      size_t n;
      uint32_t *index;
    } stall;
  } v;
} p_attr;
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
  size_t n;
  p_attr *attrs;
} p_config;

enum { A_PERIOD = 1, A_STALL = 2, A_SCRATCH = 3, A_MODE = 5, A_STARTSTOP = 6, A_FORMAT = 7, A_BUFFER = 8 };
enum { F_NREASONS, F_REASONS, F_CONFIG, F_ENABLE, F_DISABLE, F_START, F_STOP, F_GETDATA, F_N };
static const char *const fn_names[F_N] = {"cuptiPCSamplingGetNumStallReasons",
                                          "cuptiPCSamplingGetStallReasons",
                                          "cuptiPCSamplingSetConfigurationAttribute",
                                          "cuptiPCSamplingEnable",
                                          "cuptiPCSamplingDisable",
                                          "cuptiPCSamplingStart",
                                          "cuptiPCSamplingStop",
                                          "cuptiPCSamplingGetData"};
typedef int (*cupti_fn)(void *params);

struct hpc_cupti_pcs {
  hc_cupti *lib;
  cupti_fn fn[F_N];
  void *ctx; /* the CUcontext */
  size_t nreasons;
  uint32_t *index;
  char **names; /* nreasons buffers of STALL_NAME */
  hpc_cupti_reasons reasons;
  hpc_cupti_pc_data data; /* CUPTI fills it: pPcData[collectNumPcs], each with nreasons stall slots */
  hpc_cupti_stall *slots;
  uint64_t unplaced, dropped, written;
  char error[256];
};

static int call(hpc_cupti_pcs *s, int f, void *params, size_t size, const char *what) {
  *(size_t *)params = size;
  int rc = s->fn[f](params);
  if (rc) snprintf(s->error, sizeof s->error, "CUDA PC sampling: %s failed (CUPTI error %d)", what, rc);
  return rc;
}

const char *hpc_cupti_pcs_error(const hpc_cupti_pcs *s) { return s ? s->error : "out of memory"; }

hpc_cupti_pcs *hpc_cupti_pcs_open(void *cuctx, uint32_t period_log2, size_t max_pcs) {
  hpc_cupti_pcs *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ctx = cuctx;
  if (hc_cupti_open(&s->lib) != HC_OK) {
    snprintf(s->error, sizeof s->error, "CUDA PC sampling: %s", hc_cupti_error(s->lib));
    return s;
  }
  for (int i = 0; i < F_N; i++)
    if (!(*(void **)&s->fn[i] = hc_cupti_sym(s->lib, fn_names[i]))) {
      snprintf(s->error, sizeof s->error, "CUDA PC sampling: %s has no %s", hc_cupti_path(s->lib),
               fn_names[i]);
      return s;
    }
  p_ctx en = {0, NULL, cuctx};
  if (call(s, F_ENABLE, &en, sizeof en, "cuptiPCSamplingEnable")) return s;
  /* the stall reasons' names: data of this GPU and CUPTI, not an enum of ours */
  size_t n = 0;
  p_nreasons pn = {0, NULL, cuctx, &n};
  if (call(s, F_NREASONS, &pn, sizeof pn, "cuptiPCSamplingGetNumStallReasons")) return s;
  s->index = calloc(n ? n : 1, sizeof *s->index);
  s->names = calloc(n ? n : 1, sizeof *s->names);
  for (size_t i = 0; s->names && i < n; i++)
    if (!(s->names[i] = calloc(1, STALL_NAME))) n = i;
  if (!s->index || !s->names)
    return snprintf(s->error, sizeof s->error, "CUDA PC sampling: out of memory"), s;
  s->nreasons = n;
  p_reasons pr = {0, NULL, cuctx, n, s->index, s->names};
  if (call(s, F_REASONS, &pr, sizeof pr, "cuptiPCSamplingGetStallReasons")) return s;
  s->reasons = (hpc_cupti_reasons){n, s->index, (const char *const *)s->names};
  /* the buffer CUPTI fills on each GetData */
  if (!max_pcs) max_pcs = 4096;
  s->data.size = sizeof s->data;
  s->data.collectNumPcs = max_pcs;
  s->data.pPcData = calloc(max_pcs, sizeof *s->data.pPcData);
  s->slots = calloc(max_pcs * (n ? n : 1), sizeof *s->slots);
  if (!s->data.pPcData || !s->slots)
    return snprintf(s->error, sizeof s->error, "CUDA PC sampling: out of memory"), s;
  for (size_t i = 0; i < max_pcs; i++) {
    s->data.pPcData[i].size = sizeof(hpc_cupti_pc);
    s->data.pPcData[i].stallReason = s->slots + i * (n ? n : 1);
  }
  p_attr a[7];
  memset(a, 0, sizeof a);
  a[0].type = A_STALL, a[0].v.stall.n = n, a[0].v.stall.index = s->index;
  a[1].type = A_SCRATCH, a[1].v.sz = (size_t)max_pcs * (32 + 8 * (n ? n : 1)) * 4;
  a[2].type = A_MODE, a[2].v.u32 = 1;      /* CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS */
  a[3].type = A_STARTSTOP, a[3].v.u32 = 0; /* sampling runs from enable to disable */
  a[4].type = A_FORMAT, a[4].v.u32 = 1;    /* CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED */
  a[5].type = A_BUFFER, a[5].v.ptr = &s->data;
  size_t na = 6;
  if (period_log2) { /* 2^period_log2 cycles (5 to 31); else CUPTI's default, which follows the SM count */
    a[6].type = A_PERIOD, a[6].v.u32 = period_log2 < 5 ? 5 : period_log2 > 31 ? 31 : period_log2;
    na = 7;
  }
  p_config pc = {0, NULL, cuctx, na, a};
  if (call(s, F_CONFIG, &pc, sizeof pc, "cuptiPCSamplingSetConfigurationAttribute")) return s;
  s->error[0] = 0;
  return s;
}

uint64_t hpc_cupti_pcs_drain(hpc_cupti_pcs *s, struct hp_store *st, hpc_cupti_where_fn where, void *wctx,
                             int64_t time_ns, uint64_t weight, uint64_t *next_id, hpc_cupti_write_fn write,
                             void *write_ctx) {
  if (!s || s->error[0] || !s->data.pPcData) return 0;
  uint64_t wrote = 0;
  for (int round = 0; round < 1024; round++) { /* until CUPTI has no PCs left */
    p_getdata g = {0, NULL, s->ctx, &s->data};
    if (call(s, F_GETDATA, &g, sizeof g, "cuptiPCSamplingGetData")) break;
    s->dropped += s->data.droppedSamples;
    hpc_cupti_pc_cursor cur = {0};
    hp_pc_sample rows[ROWS];
    size_t n;
    while ((n = hpc_cupti_pc_rows(&s->data, &s->reasons, where, wctx, time_ns, 0, weight, next_id, &cur, rows,
                                  ROWS)) > 0)
      for (size_t i = 0; i < n; i++)
        wrote += write ? write(write_ctx, st, &rows[i]) : st && hp_write_pc_sample(st, &rows[i]) == HP_OK;
    s->unplaced += cur.unplaced;
    if (!s->data.remainingNumPcs || !s->data.totalNumPcs) break;
  }
  s->written += wrote;
  return wrote;
}

void hpc_cupti_pcs_stats(const hpc_cupti_pcs *s, uint64_t *written, uint64_t *unplaced, uint64_t *dropped) {
  *written = s ? s->written : 0, *unplaced = s ? s->unplaced : 0, *dropped = s ? s->dropped : 0;
}

void hpc_cupti_pcs_close(hpc_cupti_pcs *s) {
  if (!s) return;
  if (s->lib && s->fn[F_DISABLE] && s->index) {
    p_ctx d = {0, NULL, s->ctx};
    call(s, F_DISABLE, &d, sizeof d, "cuptiPCSamplingDisable");
  }
  for (size_t i = 0; s->names && i < s->nreasons; i++)
    free(s->names[i]);
  free(s->names);
  free(s->index);
  free(s->data.pPcData);
  free(s->slots);
  hc_cupti_close(s->lib);
  free(s);
}
