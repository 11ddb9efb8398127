/* A stand-in libcupti (and, built again with -DFAKE_LIBCUDA, a stand-in libcuda.so.1, also for `hubprof
 * roofline --platform cuda`) for the CUDA provider's sampling path without a GPU (tests/cuda/test_cuda.sh,
 * with why_driver.c): the entry points prov_cuda.c,
 * prov_cuda_why.c, sample_cupti_pc.c and cupti_host.c resolve, callbacks kept, and fake_cupti_run() plays
 * what the driver and CUPTI would do for one context, one module (a real cubin) and two launches: resource
 * and API callbacks, kernel activity records at flushes (the second only at the forced flush, a kernel still
 * running), PC sampling records of both launches, laid out as cupti_pcsampling.h defines them, and PM
 * sampling intervals around and inside the first (on the GPU's clock, CLOCK_REALTIME). */
/* SPDX-License-Identifier: MIT */
#ifdef FAKE_LIBCUDA
#include <stddef.h>
#include <stdio.h>
#include <string.h>
int cuInit(unsigned flags) { return (int)flags; }
int cuDeviceGetCount(int *n) {
  *n = 1;
  return 0;
}
/* The driver API of `hubprof roofline --platform cuda` (src/cli/roofline_cuda.c): a device "Fake H100" of
 * 132 SMs (50 MiB of L2) whose kernels take the time their work takes at 60 TFLOP/s fp32 (30 fp64 and int32,
 * 120 fp16 in half2), 3 TB/s from device memory, 10 TB/s from L2, 20 TB/s from L1 and 30 TB/s from shared
 * memory: each event pair's elapsed time is the last launch's work at those rates. */
static double last_ms;
int cuDriverGetVersion(int *v) { return *v = 13000, 0; }
int cuDeviceGet(int *d, int i) { return *d = i, 0; }
int cuDeviceGetName(char *b, int n, int d) { return (void)d, snprintf(b, (size_t)n, "Fake H100"), 0; }
int cuDeviceGetAttribute(int *v, int a, int d) {
  (void)d;
  *v = a == 16 ? 132 : a == 13 ? 1980000 : a == 75 ? 9 : a == 38 ? 50 << 20 : 0;
  return 0;
}
int cuDeviceTotalMem_v2(size_t *b, int d) { return (void)d, *b = (size_t)80 << 30, 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { return (void)d, *c = (void *)0x1, 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { return (void)d, 0; }
int cuCtxSetCurrent(void *c) { return (void)c, 0; }
int cuCtxSynchronize(void) { return 0; }
int cuModuleLoadData(void **m, const void *image) { return *m = (void *)image, 0; }
int cuModuleUnload(void *m) { return (void)m, 0; }
int cuModuleGetFunction(void **f, void *m, const char *name) {
  static const char *const known[] = {"hp_fp64", "hp_fp32", "hp_fp16", "hp_int32", "hp_read",
                                      "hp_copy", "hp_l2",   "hp_l1",   "hp_shared"};
  (void)m;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (!strcmp(name, known[i])) return *f = (void *)known[i], 0;
  return 500; /* CUDA_ERROR_NOT_FOUND */
}
int cuMemAlloc_v2(unsigned long long *p, size_t n) { return *p = 0x1000 + n, 0; }
int cuMemFree_v2(unsigned long long p) { return (void)p, 0; }
int cuMemsetD32_v2(unsigned long long p, unsigned v, size_t n) { return (void)p, (void)v, (void)n, 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **args, void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
  const char *k = f;
  double threads = (double)gx * bx;
  if (!strcmp(k, "hp_l2") || !strcmp(k, "hp_l1") || !strcmp(k, "hp_shared")) { /* n float4 reads a thread */
    double bytes = threads * *(int *)args[3] * 16;
    last_ms = bytes / (k[4] == '2' ? 10e12 : k[3] == 'l' ? 20e12 : 30e12) * 1e3;
  } else if (!strcmp(k, "hp_read") || !strcmp(k, "hp_copy")) {
    double bytes = (double)*(size_t *)args[2] * 16 * (k[3] == 'c' ? 2 : 1);
    last_ms = bytes / 3e12 * 1e3;
  } else {
    double ops = threads * *(int *)args[3] * 16 * (!strcmp(k, "hp_fp16") ? 2 : 1);
    double rate = !strcmp(k, "hp_fp32") ? 60e12 : !strcmp(k, "hp_fp16") ? 120e12 : 30e12;
    last_ms = ops / rate * 1e3;
  }
  return 0;
}
int cuEventCreate(void **e, unsigned f) { return (void)f, *e = (void *)0x2, 0; }
int cuEventRecord(void *e, void *s) { return (void)e, (void)s, 0; }
int cuEventSynchronize(void *e) { return (void)e, 0; }
int cuEventDestroy_v2(void *e) { return (void)e, 0; }
int cuEventElapsedTime(float *ms, void *a, void *b) { return (void)a, (void)b, *ms = (float)last_ms, 0; }
int cuGetErrorString(int rc, const char **s) { return (void)rc, *s = "fake CUDA error", 0; }
#else
#include "cupti_pc.h"
#include "prov_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*buf_req_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buf_done_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);
typedef void (*api_cb_fn)(void *userdata, int domain, uint32_t cbid, const void *data);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static buf_req_fn req;
static buf_done_fn done;
static api_cb_fn cb;
static uint64_t (*now)(void);
static int domains[8];
static hpc_cu_kernel recs[4];
static int nrecs, held; /* records to deliver; the last `held` only at a forced flush */
static const unsigned char *cubin;
static size_t cubin_n;
static uint64_t pc_ldg;        /* the LDG's offset in the kernel */
static int pc_given, pc_ready; /* the samples handed over; they exist (both launches made) */

#define OK 0
#define FAIL 1
int cuptiActivityRegisterCallbacks(buf_req_fn r, buf_done_fn d) { return req = r, done = d, OK; }
int cuptiActivityEnable(uint32_t kind) { return (void)kind, OK; }
int cuptiActivityFlushAll(uint32_t flag) {
  pthread_mutex_lock(&lock);
  int n = flag ? nrecs : nrecs - held;
  uint8_t *b = NULL;
  size_t size = 0, max = 0;
  if (n > 0 && req) req(&b, &size, &max);
  if (b && size >= (size_t)n * sizeof *recs) {
    memcpy(b, recs, (size_t)n * sizeof *recs);
    memmove(recs, recs + n, (size_t)(nrecs - n) * sizeof *recs);
    nrecs -= n;
    if (flag) held = 0;
  }
  pthread_mutex_unlock(&lock);
  if (b) done(NULL, 0, b, size, (size_t)n * sizeof *recs);
  return OK;
}
int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record) {
  uint8_t *next = *record ? (uint8_t *)*record + sizeof *recs : buffer;
  if (next + sizeof *recs > buffer + valid) return 3; /* CUPTI_ERROR_MAX_LIMIT_REACHED */
  *record = next;
  return OK;
}
int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *n) {
  return (void)ctx, (void)stream, *n = 0, OK;
}
int cuptiSubscribe(void **sub, api_cb_fn f, void *ud) { return (void)ud, *sub = &cb, cb = f, OK; }
int cuptiEnableDomain(uint32_t on, void *sub, int domain) {
  (void)sub;
  if (domain >= 0 && domain < 8) domains[domain] = (int)on;
  return OK;
}
int cuptiGetCallbackName(int domain, uint32_t cbid, const char **name) {
  return (void)domain, (void)cbid, *name = "cuLaunchKernel", OK;
}
int cuptiGetResultString(int rc, const char **s) { return (void)rc, *s = "fake CUPTI error", OK; }
int cuptiActivityRegisterTimestampCallback(uint64_t (*fn)(void)) { return now = fn, OK; }

/* the Profiler Host API's names (cupti_host.c resolves them all); PM sampling is not played */
#define HOST(f)                                                                                              \
  int f(void *p) { return (void)p, FAIL; }
HOST(cuptiProfilerHostGetSupportedChips)
HOST(cuptiProfilerHostGetBaseMetrics)
HOST(cuptiProfilerHostGetSubMetrics)
HOST(cuptiProfilerHostGetMetricProperties)
HOST(cuptiProfilerHostGetNumOfPasses)
#define OKAY(f)                                                                                              \
  int f(void *p) { return (void)p, OK; }
OKAY(cuptiProfilerHostDeinitialize)
OKAY(cuptiProfilerHostConfigAddMetrics)
OKAY(cuptiProfilerHostGetConfigImage)
OKAY(cuptiProfilerInitialize)
OKAY(cuptiPmSamplingDisable)
OKAY(cuptiPmSamplingStart)
OKAY(cuptiPmSamplingStop)
OKAY(cuptiPmSamplingSetConfig)
typedef struct {
  size_t size;
  void *priv;
} hdr;
int cuptiProfilerHostInitialize(void *p) {
  struct {
    hdr h;
    int type;
    const char *chip;
    const uint8_t *avail;
    void *host;
  } *q = p;
  return q->host = (void *)0x5, OK;
}
int cuptiProfilerHostGetConfigImageSize(void *p) {
  struct {
    hdr h;
    void *host;
    size_t n;
  } *q = p;
  return q->n = 16, OK;
}
int cuptiDeviceGetChipName(void *p) {
  struct {
    hdr h;
    size_t device;
    const char *chip;
  } *q = p;
  return q->chip = "GH100", OK;
}
int cuptiPmSamplingGetCounterAvailability(void *p) {
  struct {
    hdr h;
    size_t device, n;
    uint8_t *image;
  } *q = p;
  return q->n = 8, OK;
}
int cuptiPmSamplingEnable(void *p) {
  struct {
    hdr h;
    size_t device;
    void *obj;
  } *q = p;
  return q->obj = (void *)0x6, OK;
}
int cuptiPmSamplingGetCounterDataSize(void *p) {
  struct {
    hdr h;
    void *obj;
    const char **names;
    size_t n;
    uint32_t max;
    size_t size;
  } *q = p;
  return q->size = 64, OK;
}

/* PM sampling: the intervals the GPU sampled, made at the first launch on the collector's clock
 * (CLOCK_MONOTONIC_RAW): two before its kernel (the second ends 1 us inside it), ten of 99 us inside it, the
 * values 1 to 10; decoded on CLOCK_REALTIME, as a GPU's timer runs, by the offset measured at the decode (in
 * the provider's drain, as it measures its own), each clock read between two of the other, the tightest of 8
 */
typedef struct {
  uint64_t start, end;
  double v;
} pm_iv;
static pm_iv pm_made[32], pm_decoded[32];
static int pm_nmade, pm_ndecoded;
int cuptiPmSamplingCounterDataImageInitialize(void *p) { return (void)p, pm_ndecoded = 0, OK; }
int cuptiPmSamplingDecodeData(void *p) {
  struct {
    hdr h;
    void *obj;
    uint8_t *data;
    size_t size;
    int32_t stop;
    uint8_t overflow;
  } *q = p;
  int64_t off = 0, width = INT64_MAX;
  for (int i = 0; i < 8 && width > 200; i++) {
    struct timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    int64_t an = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec, bn = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
    if (bn - an < width)
      width = bn - an, off = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - (an + (bn - an) / 2);
  }
  pthread_mutex_lock(&lock);
  for (int i = 0; i < pm_nmade; i++)
    pm_decoded[i] = (pm_iv){(uint64_t)((int64_t)pm_made[i].start + off),
                            (uint64_t)((int64_t)pm_made[i].end + off), pm_made[i].v};
  pm_ndecoded = pm_nmade, pm_nmade = 0;
  pthread_mutex_unlock(&lock);
  return q->stop = 0, q->overflow = 0, OK;
}
int cuptiPmSamplingGetCounterDataInfo(void *p) {
  struct {
    hdr h;
    const uint8_t *data;
    size_t size, total, populated, completed;
  } *q = p;
  return q->total = 32, q->populated = q->completed = (size_t)pm_ndecoded, OK;
}
int cuptiPmSamplingCounterDataGetSampleInfo(void *p) {
  struct {
    hdr h;
    void *obj;
    const uint8_t *data;
    size_t size, index;
    uint64_t start, end;
  } *q = p;
  if (q->index >= (size_t)pm_ndecoded) return FAIL;
  return q->start = pm_decoded[q->index].start, q->end = pm_decoded[q->index].end, OK;
}
int cuptiProfilerHostEvaluateToGpuValues(void *p) {
  struct {
    hdr h;
    void *host;
    const uint8_t *data;
    size_t size, index;
    const char **names;
    size_t n;
    double *values;
  } *q = p;
  if (q->index >= (size_t)pm_ndecoded) return FAIL;
  for (size_t k = 0; k < q->n; k++)
    q->values[k] = pm_decoded[q->index].v * (double)(k + 1);
  return OK;
}
static void pm_make(uint64_t start) { /* lock held */
  for (int i = -2; i < 10 && pm_nmade < 32; i++)
    pm_made[pm_nmade++] = (pm_iv){(uint64_t)((int64_t)start + 1000 + i * 99000),
                                  (uint64_t)((int64_t)start + 1000 + (i + 1) * 99000), i + 1.0};
}

static uint64_t crc_of(const void *p, size_t n) { /* FNV-1a: any function of the bytes does */
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
  return h;
}
int cuptiGetCubinCrc(void *params) {
  struct {
    size_t size, n;
    const void *cubin;
    uint64_t crc;
  } *p = params;
  return p->crc = crc_of(p->cubin, p->n), OK;
}
int cuptiGetDeviceId(void *ctx, uint32_t *dev) { return (void)ctx, *dev = 0, OK; }

/* PC sampling */
static const char *const reason_names[3] = {"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                            "smsp__pcsamp_warps_issue_stalled_selected",
                                            "smsp__pcsamp_warps_issue_stalled_barrier"};
static const uint32_t reason_index[3] = {2, 9, 4};
typedef struct {
  size_t size;
  void *priv;
  void *ctx;
} p_ctx;
static int pc_enabled;
int cuptiPCSamplingEnable(void *p) { return pc_enabled = 1, ((p_ctx *)p)->ctx ? OK : FAIL; }
int cuptiPCSamplingDisable(void *p) { return (void)p, OK; }
int cuptiPCSamplingStart(void *p) { return (void)p, OK; }
int cuptiPCSamplingStop(void *p) { return (void)p, OK; }
int cuptiPCSamplingSetConfigurationAttribute(void *p) { return (void)p, OK; }
int cuptiPCSamplingGetNumStallReasons(void *p) {
  struct {
    p_ctx c;
    size_t *n;
  } *q = p;
  return *q->n = 3, OK;
}
int cuptiPCSamplingGetStallReasons(void *p) {
  struct {
    p_ctx c;
    size_t n;
    uint32_t *index;
    char **names;
  } *q = p;
  for (size_t i = 0; i < q->n && i < 3; i++) {
    q->index[i] = reason_index[i];
    snprintf(q->names[i], 128, "%s", reason_names[i]);
  }
  return OK;
}
/* Once, after both launches (as on a GPU: no sample of a kernel before its module has loaded and it has
 * launched; a drain between the context's creation and the module's callback would find them unplaceable):
 * launch 5's samples (90 on the load, 10 at the start) and launch 6's (20 on the load). */
int cuptiPCSamplingGetData(void *p) {
  struct {
    p_ctx c;
    hpc_cupti_pc_data *d;
  } *q = p;
  hpc_cupti_pc_data *d = q->d;
  pthread_mutex_lock(&lock);
  d->totalNumPcs = d->remainingNumPcs = 0;
  if (!pc_given && pc_ready && cubin && d->collectNumPcs >= 3) {
    static char fn[] = "_Z5chasePKjPji";
    static const struct {
      uint64_t off;
      uint32_t corr, reason[2], samples[2];
      size_t n;
    } pcs[3] = {{0, 5, {2, 9}, {85, 5}, 2}, {0, 5, {4, 0}, {10, 0}, 1}, {0, 6, {2, 0}, {20, 0}, 1}};
    for (int i = 0; i < 3; i++) {
      hpc_cupti_pc *pc = &d->pPcData[i];
      pc->cubinCrc = crc_of(cubin, cubin_n);
      pc->pcOffset = i == 1 ? 0 : pc_ldg;
      pc->functionName = fn;
      pc->correlationId = pcs[i].corr;
      pc->stallReasonCount = pcs[i].n;
      for (size_t k = 0; k < pcs[i].n; k++)
        pc->stallReason[k] = (hpc_cupti_stall){pcs[i].reason[k], pcs[i].samples[k]};
    }
    d->totalNumPcs = 3;
    d->totalSamples = 120;
    pc_given = 1;
  }
  pthread_mutex_unlock(&lock);
  return OK;
}

/* CUpti_CallbackData as prov_cuda.c reads it */
typedef struct {
  int site;
  const char *function_name;
  const void *params;
  void *ret;
  const char *symbol_name;
  void *context;
  uint32_t context_uid;
  uint64_t *correlation_data;
  uint32_t correlation_id;
} cb_data;

static void api(int domain, uint32_t cbid, uint32_t corr, const char *symbol) {
  cb_data d = {0, "cuLaunchKernel", NULL, NULL, symbol, (void *)0x1234, 1, NULL, corr};
  cb(NULL, domain, cbid, &d);
  d.site = 1;
  cb(NULL, domain, cbid, &d);
}

/* What a run does: returns 0, or 1 with a line when the provider did not subscribe as it should. */
int fake_cupti_run(const unsigned char *bytes, size_t n, uint64_t ldg) {
  if (!cb || !domains[1] || !domains[3]) {
    fprintf(stderr, "fake_cupti: callbacks %p, driver domain %d, resource domain %d\n", (void *)cb,
            domains[1], domains[3]);
    return 1;
  }
  cubin = bytes, cubin_n = n, pc_ldg = ldg;
  struct {
    void *ctx, *handle, *desc;
  } res = {(void *)0x1234, NULL, NULL};
  cb(NULL, 3, 1, &res); /* CUPTI_CBID_RESOURCE_CONTEXT_CREATED */
  struct {
    uint32_t id;
    size_t n;
    const unsigned char *cubin;
  } mod = {7, n, bytes};
  res.desc = &mod;
  cb(NULL, 3, 6, &res); /* CUPTI_CBID_RESOURCE_MODULE_LOADED */
  uint64_t end5 = 0;    /* launch 5's end (its record may be flushed before launch 6) */
  for (uint32_t corr = 5; corr <= 6; corr++) {
    api(1, 307, corr, "_Z5chasePKjPji"); /* cuLaunchKernel */
    pthread_mutex_lock(&lock);
    hpc_cu_kernel *k = &recs[nrecs++];
    memset(k, 0, sizeof *k);
    k->kind = HPC_CU_KIND_CONCURRENT_KERNEL;
    k->start = corr == 6 ? end5 + 1000 : now ? now() : 1000; /* one stream: one after the other */
    k->end = end5 = k->start + 1000000;
    k->correlationId = corr;
    k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
    k->name = "_Z5chasePKjPji";
    if (corr == 5) pm_make(k->start);
    /* PC sampling: launch 6 still runs, its record comes at the forced flush only; the samples now exist */
    if (corr == 6) held = pc_enabled, pc_ready = 1;
    pthread_mutex_unlock(&lock);
  }
  api(1, 17, 8, NULL); /* cuCtxSynchronize: the flusher reads what has completed */
  return 0;
}
#endif
