/* CUDA counters through CUPTI's Range Profiler (prov_cuda_range.h): per CUDA context, at its first launch,
 * the device's chip and counter availability, the configuration image of its metrics from the Profiler Host
 * API (cupti_host.c), auto range (one range per kernel) and kernel replay (CUPTI runs every pass of a kernel
 * before the launch returns); at each launch's end the ranges decoded and evaluated
 * (cuptiProfilerHostEvaluateToGpuValues) into the values table, which the kernel records read
 * (prov_cuda.c). The parameter structs are declared from cupti_range_profiler.h, cupti_profiler_target.h
 * and cupti_target.h (tests/cuda/test_cuda_range.c checks their sizes against the headers). */
/* SPDX-License-Identifier: MIT */
#include "prov_cuda_range.h"

#include "collector.h"
#include "counters.h"
#include "env.h"
#include "fmt_log.h"
#include "provider.h"
#include "replay.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PSIZE HPC_CRP_SIZE

enum {
  R_PINIT,
  R_CHIP,
  R_AVAIL,
  R_ENABLE,
  R_DISABLE,
  R_CONFIG,
  R_START,
  R_STOP,
  R_DECODE,
  R_DSIZE,
  R_DINIT,
  R_DINFO,
  R_EVAL,
  R_N
};
static const char *const r_names[R_N] = {"cuptiProfilerInitialize",
                                         "cuptiDeviceGetChipName",
                                         "cuptiProfilerGetCounterAvailability",
                                         "cuptiRangeProfilerEnable",
                                         "cuptiRangeProfilerDisable",
                                         "cuptiRangeProfilerSetConfig",
                                         "cuptiRangeProfilerStart",
                                         "cuptiRangeProfilerStop",
                                         "cuptiRangeProfilerDecodeData",
                                         "cuptiRangeProfilerGetCounterDataSize",
                                         "cuptiRangeProfilerCounterDataImageInitialize",
                                         "cuptiRangeProfilerGetCounterDataInfo",
                                         "cuptiProfilerHostEvaluateToGpuValues"};
typedef int (*rp_fn)(void *params);

/* ---- state ------------------------------------------------------------------------------------------- */
#define MAX_CTX 32
#define RANGES 64 /* ranges one launch may make (a graph's kernel nodes); more are dropped by CUPTI */

typedef struct rctx {
  void *ctx;        /* the CUDA context */
  int ready;        /* 1 profiling, -1 given up on this context */
  size_t dev;       /* device ordinal */
  void *host, *obj; /* Profiler Host object, Range Profiler object */
  uint8_t *avail, *config, *data;
  size_t config_size, data_size;
  const char **names; /* the device's metrics (its passes of the plan) */
  uint64_t *ids;      /* their counter_info ids */
  uint32_t *pass;     /* their pass of the plan */
  size_t n;
  size_t passes; /* CUPTI passes of the configuration */
} rctx;

static struct {
  const hpc_env *env;
  hc_plan *plan;
  _Atomic int on; /* read by every launch's callback */
  hc_cupti *lib;
  rp_fn fn[R_N];
  pthread_mutex_t lock; /* one launch profiled at a time: its ranges are the ones decoded at its end */
  rctx ctx[MAX_CTX];
  size_t nctx;
  hpc_cu_rv *vals;
  double *buf; /* one range's values */
  _Atomic uint64_t ranges, dropped, launches, failed, missed;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread rctx *t_ctx __attribute__((tls_model("initial-exec"))); /* the launch open on the thread */
static __thread uint32_t t_corr[4] __attribute__((tls_model("initial-exec")));
static __thread unsigned t_ncorr __attribute__((tls_model("initial-exec")));

int hpc_cu_range_on(void) { return atomic_load_explicit(&R.on, memory_order_relaxed); }

/* ---- init: the plan --------------------------------------------------------------------------------------
 */
int hpc_cu_range_init(const hpc_env *e, const char **why) {
  R.env = e;
  if (hc_plan_parse(e->plan, &R.plan) != HC_OK || !R.plan->npasses || !R.plan->ncounters) {
    *why = "HUBPROF_PLAN is not a list of CUDA metrics (configurations separated by ';', metrics by ',')";
    return -1;
  }
  if (R.plan->ncounters > HPC_CU_RANGE_MAX) {
    *why = "HUBPROF_PLAN names more than 256 CUDA metrics";
    return -1;
  }
  if (e->multiplex) {
    *why = "CUDA counters are collected by kernel replay or application replay, not iteration multiplexing";
    return -1;
  }
  /* per-device plans (device_plans.c) read the shared replay state's plan */
  hpc_rp.env = e;
  hpc_rp.plan = R.plan;
  hpc_rp.npasses = R.plan->npasses;
  if (hpc_rp_devplans_init(why) != 0) return -1;
  R.vals = hpc_cu_rv_new(12, R.plan->ncounters);
  R.buf = calloc(R.plan->ncounters, sizeof *R.buf);
  if (!R.vals || !R.buf) {
    *why = "out of memory";
    return -1;
  }
  R.on = 1;
  return 0;
}

int hpc_cu_range_start(const char *cupti_path, char *why, size_t len) {
  (void)cupti_path;
  if (hc_cupti_open(&R.lib) != HC_OK) {
    snprintf(why, len, "CUDA counters: %s", hc_cupti_error(R.lib));
    R.on = 0;
    return -1;
  }
  for (int i = 0; i < R_N; i++)
    if (!(*(void **)&R.fn[i] = hc_cupti_sym(R.lib, r_names[i]))) {
      snprintf(why, len, "CUDA counters: %s has no %s (the Range Profiler needs CUDA 12.6 or later)",
               hc_cupti_path(R.lib), r_names[i]);
      R.on = 0;
      return -1;
    }
  return 0; /* cuptiProfilerInitialize waits for the first launch: the driver is inside cuInit now */
}

/* ---- per context ------------------------------------------------------------------------------------------
 */
static int give_up(rctx *c, const char *what, int rc) {
  c->ready = -1;
  atomic_fetch_add(&R.failed, 1);
  hpc_say("CUDA counters are off on device %zu: %s failed (CUPTI error %d%s); its kernels are traced without "
          "counters",
          c->dev, what, rc,
          rc == 35 ? ": CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, profiling is restricted to admin users" : "");
  return -1;
}

static int call(rctx *c, int f, void *params, size_t size) {
  *(size_t *)params = size;
  int rc = R.fn[f](params);
  if (rc && c) give_up(c, r_names[f], rc);
  return rc;
}

/* The device's metrics: those of its passes of the plan (per-device plans) or all of them. */
static int pick_metrics(rctx *c) {
  int (*get_dev)(int *) = NULL;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda) *(void **)&get_dev = dlsym(cuda, "cuCtxGetDevice");
  int ord = 0;
  if (get_dev && get_dev(&ord) != 0) ord = 0;
  if (cuda) dlclose(cuda);
  c->dev = (size_t)ord;
  size_t first = 0, np = R.plan->npasses;
  uint32_t agent = hpc_agent_of(&hpc_cuda, NULL, (uintptr_t)ord + 1);
  hpc_rp_device_passes(agent, &first, &np);
  c->names = calloc(R.plan->ncounters, sizeof *c->names);
  c->ids = calloc(R.plan->ncounters, sizeof *c->ids);
  c->pass = calloc(R.plan->ncounters, sizeof *c->pass);
  if (!c->names || !c->ids || !c->pass) return -1;
  for (size_t i = 0; i < R.plan->ncounters; i++)
    if (R.plan->pass[i] > first && R.plan->pass[i] <= first + np) {
      c->names[c->n] = R.plan->names[i];
      c->ids[c->n] = i + 1; /* counter_info ids: 1-based position in the plan (hpc_cu_range_log) */
      c->pass[c->n++] = R.env->pass ? (uint32_t)R.env->pass : R.plan->pass[i];
    }
  return 0;
}

static int reset_data(rctx *c) {
  hpc_crp_dinit di = {0, NULL, c->obj, c->data_size, c->data};
  hpc_crp_config cf = {0,
                       NULL,
                       c->obj,
                       c->config_size,
                       c->config,
                       c->data_size,
                       c->data,
                       1 /* auto */,
                       2 /* kernel replay */,
                       RANGES,
                       1,
                       1,
                       0,
                       1};
  hpc_crp_obj st = {0, NULL, c->obj};
  return call(c, R_DINIT, &di, PSIZE(hpc_crp_dinit, data)) ||
         call(c, R_CONFIG, &cf, PSIZE(hpc_crp_config, target_level)) ||
         call(c, R_START, &st, PSIZE(hpc_crp_obj, obj));
}

static void ctx_setup(rctx *c) {
  static int profiler_ready;
  c->ready = -1;
  hpc_crp_init pi = {0, NULL};
  if (!profiler_ready && call(c, R_PINIT, &pi, PSIZE(hpc_crp_init, priv))) {
    R.on = 0; /* refused for the process (privileges): said once, by give_up */
    return;
  }
  profiler_ready = 1;
  if (pick_metrics(c)) {
    hpc_say("CUDA counters are off: out of memory");
    return;
  }
  if (!c->n) { /* per-device plans: this device measures nothing */
    c->ready = -2;
    return;
  }
  hpc_crp_chip ch = {0, NULL, c->dev, NULL};
  hpc_crp_avail av = {0, NULL, c->ctx, 0, NULL};
  if (call(c, R_CHIP, &ch, PSIZE(hpc_crp_chip, chip)) || call(c, R_AVAIL, &av, PSIZE(hpc_crp_avail, image)))
    return;
  if (!(c->avail = av.image = calloc(1, av.image_size ? av.image_size : 1))) return;
  if (call(c, R_AVAIL, &av, PSIZE(hpc_crp_avail, image))) return;
  char err[300];
  if (hc_cupti_config(R.lib, 0, ch.chip, c->avail, c->names, c->n, &c->host, &c->config, &c->config_size,
                      &c->passes, err, sizeof err) != HC_OK) {
    c->ready = -1;
    hpc_say("CUDA counters are off on device %zu (%s): %s", c->dev, ch.chip ? ch.chip : "?", err);
    return;
  }
  hpc_crp_enable en = {0, NULL, c->ctx, NULL};
  if (call(c, R_ENABLE, &en, PSIZE(hpc_crp_enable, obj))) return;
  c->obj = en.obj;
  hpc_crp_dsize ds = {0, NULL, c->obj, c->names, c->n, RANGES, RANGES, 0};
  if (call(c, R_DSIZE, &ds, PSIZE(hpc_crp_dsize, data_size))) return;
  if (!(c->data = calloc(1, ds.data_size ? ds.data_size : 1))) return;
  c->data_size = ds.data_size;
  if (reset_data(c)) return;
  c->ready = 1;
}

static rctx *ctx_of(void *ctx) {
  for (size_t i = 0; i < R.nctx; i++)
    if (R.ctx[i].ctx == ctx) return &R.ctx[i];
  if (R.nctx == MAX_CTX) return NULL;
  rctx *c = &R.ctx[R.nctx++];
  c->ctx = ctx;
  ctx_setup(c);
  return c;
}

/* ---- launches -------------------------------------------------------------------------------------------
 */
int hpc_cu_range_is_launch(int dom, uint32_t cbid) {
  if (dom == 2) /* runtime: cudaLaunchKernel(_ptsz), cooperative, Ex(C), cudaGraphLaunch(_ptsz) */
    return cbid == 211 || cbid == 214 || cbid == 269 || cbid == 270 || cbid == 430 || cbid == 431 ||
           cbid == 311 || cbid == 312;
  /* driver: cuLaunchKernel(_ptsz), cooperative, Ex(_ptsz), cuGraphLaunch(_ptsz) */
  return cbid == 307 || cbid == 442 || cbid == 477 || cbid == 478 || cbid == 652 || cbid == 653 ||
         cbid == 514 || cbid == 515;
}

void hpc_cu_range_enter(void *ctx, uint32_t corr) {
  if (!R.on) return;
  pthread_mutex_lock(&R.lock);
  rctx *c = ctx_of(ctx);
  if (!c || c->ready != 1) {
    pthread_mutex_unlock(&R.lock);
    return;
  }
  t_ctx = c;
  t_ncorr = 0;
  hpc_cu_range_corr(corr);
}

void hpc_cu_range_corr(uint32_t corr) {
  if (t_ctx && corr && t_ncorr < 4) t_corr[t_ncorr++] = corr;
}

/* A launch's end. Stop, decode or evaluate failing for one launch (a launch captured into a graph makes no
 * range; CUPTI may refuse to stop inside a capture) costs that launch its values, counted, not the device's
 * counters: the profiler is started again only after a stop that succeeded. */
void hpc_cu_range_leave(void) {
  rctx *c = t_ctx;
  if (!c) return;
  t_ctx = NULL;
  atomic_fetch_add_explicit(&R.launches, 1, memory_order_relaxed);
  hpc_crp_stop sp = {0, NULL, c->obj, 0, 0, 0};
  hpc_crp_decode dc = {0, NULL, c->obj, 0};
  hpc_crp_dinfo in = {0, NULL, c->data, c->data_size, 0};
  if (call(NULL, R_STOP, &sp, PSIZE(hpc_crp_stop, all_submitted))) {
    atomic_fetch_add_explicit(&R.missed, 1, memory_order_relaxed);
    pthread_mutex_unlock(&R.lock);
    return;
  }
  if (call(NULL, R_DECODE, &dc, PSIZE(hpc_crp_decode, dropped)) ||
      call(NULL, R_DINFO, &in, PSIZE(hpc_crp_dinfo, ranges))) {
    atomic_fetch_add_explicit(&R.missed, 1, memory_order_relaxed);
    in.ranges = 0;
  }
  atomic_fetch_add_explicit(&R.dropped, dc.dropped, memory_order_relaxed);
  for (size_t r = 0; r < in.ranges; r++) {
    hpc_crp_eval ev = {0, NULL, c->host, c->data, c->data_size, r, c->names, c->n, R.buf};
    if (call(NULL, R_EVAL, &ev, PSIZE(hpc_crp_eval, values))) {
      atomic_fetch_add_explicit(&R.missed, 1, memory_order_relaxed);
      break;
    }
    for (unsigned k = 0; k < t_ncorr; k++) /* under the runtime call's id and the driver call's */
      hpc_cu_rv_put(R.vals, t_corr[k], (uint32_t)r, R.buf, c->ids, c->pass, c->n, (uint32_t)c->passes);
    atomic_fetch_add_explicit(&R.ranges, 1, memory_order_relaxed);
  }
  reset_data(c); /* gives the device up when the profiler cannot start again */
  pthread_mutex_unlock(&R.lock);
}

size_t hpc_cu_range_take(uint32_t corr, uint64_t row, hp_counter_value *out, size_t max, uint32_t *passes) {
  return R.on ? hpc_cu_rv_take(R.vals, corr, row, out, max, passes) : (*passes = 0, 0);
}

/* ---- the log and exit -----------------------------------------------------------------------------------
 */
void hpc_cu_range_log(hp_store *s) {
  if (!R.plan) return;
  hpc_rp_log_head(s); /* replay, pass_plan, device_plans, replay_pass, counter_provider as on OpenCL */
  hp_write_metadata(s, "cuda.range_profiler", "auto range (one range per kernel), CUPTI kernel replay");
  for (size_t i = 0; i < R.plan->ncounters; i++) {
    const char *n = R.plan->names[i], *u = strstr(n, "__");
    char block[64];
    snprintf(block, sizeof block, "%.*s", u ? (int)(u - n) : 0, n); /* the hardware unit: "sm", "dram" */
    hp_counter_info ci = {.size = sizeof ci,
                          .id = i + 1,
                          .name = n,
                          .description = "NVIDIA metric, CUPTI Range Profiler",
                          .block = block,
                          .unit = "",
                          .expression = ""};
    hp_write_counter_info(s, &ci);
  }
}

/* No Stop or Disable at exit: the CUDA runtime may have destroyed its contexts already (its own exit
 * handlers), and every launch's ranges were decoded at its end; the driver releases the rest. */
void hpc_cu_range_exit(int debug) {
  if (!R.plan) return;
  R.on = 0;
  if (debug)
    hpc_say("pid %ld: CUDA counters: %" PRIu64 " launches, %" PRIu64 " ranges evaluated, %" PRIu64
            " dropped by CUPTI, %" PRIu64
            " launches without values (stop, decode or evaluation refused), %" PRIu64 " devices given up",
            (long)getpid(), atomic_load(&R.launches), atomic_load(&R.ranges), atomic_load(&R.dropped),
            atomic_load(&R.missed), atomic_load(&R.failed));
}
