/* The CUDA runtime provider: loaded by the CUDA driver through CUDA_INJECTION64_PATH (InitializeInjection, at
 * cuInit), it loads libcupti at run time (never linked), records kernels, copies, fills, and under --api the
 * runtime and driver calls and synchronisations through CUPTI's Activity API, and writes them through the
 * collector's log (conversion: prov_cuda_conv.c). docs/cuda.md says how and what. */
/* SPDX-License-Identifier: MIT */
#include "collector.h"
#include "counters.h"
#include "cupti_find.h"
#include "env.h"
#include "fmt_log.h"
#include "prov_cuda.h"
#include "prov_cuda_why.h"
#include "prov_cuda_range.h"
#include "regions.h"
#include "select.h"
#include "stamp.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- CUPTI, as dlsym finds it ---------------------------------------------------------------------- */
typedef int (*cu_fn0)(void);
typedef void (*buf_req_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buf_done_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);
typedef void (*api_cb_fn)(void *userdata, int domain, uint32_t cbid, const void *data);

static struct {
  int (*register_callbacks)(buf_req_fn, buf_done_fn);
  int (*enable)(uint32_t kind);
  int (*flush_all)(uint32_t flag);
  int (*next_record)(uint8_t *buffer, size_t valid, void **record);
  int (*dropped)(void *ctx, uint32_t stream, size_t *n);
  int (*subscribe)(void **sub, api_cb_fn cb, void *userdata);
  int (*enable_domain)(uint32_t on, void *sub, int domain);
  int (*callback_name)(int domain, uint32_t cbid, const char **name);
  int (*result_string)(int rc, const char **s);
  /* optional */
  int (*flush_period)(uint32_t ms);
  int (*timestamp_cb)(uint64_t (*fn)(void));
  int (*get_timestamp)(uint64_t *ts);
  int (*chip_name)(void *params);
} cu;

static const struct {
  const char *name;
  size_t off;
  int optional;
} cu_syms[] = {
    {"cuptiActivityRegisterCallbacks", offsetof(__typeof__(cu), register_callbacks), 0},
    {"cuptiActivityEnable", offsetof(__typeof__(cu), enable), 0},
    {"cuptiActivityFlushAll", offsetof(__typeof__(cu), flush_all), 0},
    {"cuptiActivityGetNextRecord", offsetof(__typeof__(cu), next_record), 0},
    {"cuptiActivityGetNumDroppedRecords", offsetof(__typeof__(cu), dropped), 0},
    {"cuptiSubscribe", offsetof(__typeof__(cu), subscribe), 0},
    {"cuptiEnableDomain", offsetof(__typeof__(cu), enable_domain), 0},
    {"cuptiGetCallbackName", offsetof(__typeof__(cu), callback_name), 0},
    {"cuptiGetResultString", offsetof(__typeof__(cu), result_string), 0},
    {"cuptiActivityFlushPeriod", offsetof(__typeof__(cu), flush_period), 1},
    {"cuptiActivityRegisterTimestampCallback", offsetof(__typeof__(cu), timestamp_cb), 1},
    {"cuptiGetTimestamp", offsetof(__typeof__(cu), get_timestamp), 1},
    {"cuptiDeviceGetChipName", offsetof(__typeof__(cu), chip_name), 1},
};

enum { DOM_DRIVER = 1, DOM_RUNTIME = 2, SITE_ENTER = 0, SITE_EXIT = 1 };

/* CUpti_CallbackData (cupti_callbacks.h), the fields read */
typedef struct cb_data {
  int site;
  const char *function_name;
  const void *params;
  void *ret;
  const char *symbol_name; /* valid for launch callbacks only */
  void *context;
  uint32_t context_uid;
  uint64_t *correlation_data;
  uint32_t correlation_id;
} cb_data;

/* ---- state --------------------------------------------------------------------------------------------- */
static int g_api;              /* --api: runtime and driver calls, synchronisations */
static int g_profile;          /* hubprof profile: counters through the Range Profiler (prov_cuda_range.c) */
static const char *g_provider; /* HUBPROF_PROVIDER (profile) */
static int g_why_on;           /* sampling or --code: CUPTI's resource callbacks (prov_cuda_why.c) */
static unsigned g_flush_ms;    /* HUBPROF_HARVEST_MS: CUPTI's flush period, and the sync points' spacing */
static _Atomic int g_started;  /* InitializeInjection ran */
static _Atomic int g_on;       /* CUPTI records into the log */
static char g_cupti_path[PATH_MAX];
static int64_t g_ts_offset; /* subtracted from CUPTI's times when its timestamp callback is missing */
static _Atomic int64_t g_last_flush;
static _Atomic uint64_t g_kernels, g_copies, g_calls, g_dropped, g_not_selected;
static _Atomic uint64_t g_copy_ids; /* memory_copy row ids, above OpenCL's (prov_opencl_api.c) */
#define COPY_ID_BASE ((uint64_t)1 << 48)

/* ---- host facts of each API call, by correlation id --------------------------------------------------- */
/* Written on the calling thread at the call's entry, read when its activity records arrive (CUPTI's
 * thread). A ring indexed by correlation id: a record that comes later than CORR_N calls finds its slot
 * reused and is written without them (thread, region, enqueue time 0; selected). */
#define CORR_BITS 16
#define CORR_N (1u << CORR_BITS)
typedef struct corr_slot {
  _Atomic uint32_t corr;
  _Atomic uint32_t sel; /* 1 recorded, 0 not selected or paused */
  _Atomic uint64_t thread_id, region_id;
  _Atomic int64_t stamp;
} corr_slot;
static corr_slot g_corr[CORR_N];

typedef struct facts {
  uint64_t thread_id, region_id;
  int64_t stamp;
  uint32_t sel;
} facts;

static __thread int t_depth __attribute__((tls_model("initial-exec"))); /* API calls open on the thread */
static __thread facts t_cur __attribute__((tls_model("initial-exec"))); /* facts of the outermost one */

static void corr_put(uint32_t c, const facts *f) {
  corr_slot *s = &g_corr[c & (CORR_N - 1)];
  atomic_store_explicit(&s->corr, 0, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&s->sel, f->sel, memory_order_relaxed);
  atomic_store_explicit(&s->thread_id, f->thread_id, memory_order_relaxed);
  atomic_store_explicit(&s->region_id, f->region_id, memory_order_relaxed);
  atomic_store_explicit(&s->stamp, f->stamp, memory_order_relaxed);
  atomic_store_explicit(&s->corr, c, memory_order_release);
}

static int corr_get(uint32_t c, facts *f) {
  corr_slot *s = &g_corr[c & (CORR_N - 1)];
  if (!c || atomic_load_explicit(&s->corr, memory_order_acquire) != c) return 0;
  f->sel = atomic_load_explicit(&s->sel, memory_order_relaxed);
  f->thread_id = atomic_load_explicit(&s->thread_id, memory_order_relaxed);
  f->region_id = atomic_load_explicit(&s->region_id, memory_order_relaxed);
  f->stamp = atomic_load_explicit(&s->stamp, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&s->corr, memory_order_relaxed) == c;
}

/* ---- the callbacks on the application's threads ------------------------------------------------------- */
static int is_launch(int dom, uint32_t cbid) {
  if (dom ==
      DOM_RUNTIME) /* cudaLaunchKernel(_ptsz), cudaLaunchCooperativeKernel(_ptsz), cudaLaunchKernelExC */
    return cbid == 211 || cbid == 214 || cbid == 269 || cbid == 270 || cbid == 430 || cbid == 431;
  /* cuLaunchKernel(_ptsz), cuLaunchCooperativeKernel(_ptsz), cuLaunchKernelEx(_ptsz) */
  return cbid == 307 || cbid == 442 || cbid == 477 || cbid == 478 || cbid == 652 || cbid == 653;
}
static int is_sync(int dom, uint32_t cbid) {
  if (dom == DOM_RUNTIME) /* cudaStreamSynchronize(_ptsz), cudaEventSynchronize, cudaDeviceSynchronize */
    return cbid == 131 || cbid == 239 || cbid == 137 || cbid == 165;
  /* cuCtxSynchronize(_v2), cuEventSynchronize, cuStreamSynchronize(_ptsz) */
  return cbid == 17 || cbid == 800 || cbid == 121 || cbid == 126 || cbid == 440;
}

/* The flusher thread: every HUBPROF_HARVEST_MS, and at once after a sync point, CUPTI hands over what has
 * completed (cuptiActivityFlushAll(0): half-full buffers too; CUPTI's own periodic flush returns full
 * buffers only), so a completed kernel reaches the log within that bound. Never called from a CUPTI
 * callback: a sync point only wakes the thread. */
static sem_t g_wake;
static _Atomic int g_stop;     /* exit: the flusher stops (the exit handler makes the last, forced flush) */
static _Atomic int g_flushing; /* 1 while the flusher is inside cuptiActivityFlushAll */

static void *flusher(void *arg) {
  (void)arg;
  hpc_busy = 1; /* the collector's own thread: its CUDA calls are not the application's */
  while (!atomic_load(&g_stop)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)(g_flush_ms % 1000) * 1000000;
    ts.tv_sec += g_flush_ms / 1000 + ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    while (sem_timedwait(&g_wake, &ts) != 0 && errno == EINTR)
      ;
    if (atomic_load(&g_stop)) break;
    atomic_store_explicit(&g_last_flush, hpc_clock_ns(), memory_order_relaxed);
    atomic_store(&g_flushing, 1);
    if (!atomic_load(&g_stop)) cu.flush_all(0);
    if (!atomic_load(&g_stop)) hpc_cuda_why_drain(NULL, 0); /* samples of the kernels just recorded */
    atomic_store(&g_flushing, 0);
  }
  return NULL;
}

/* A sync point: wake the flusher, unless it flushed less than a quarter period ago (a loop that synchronises
 * every few microseconds wakes it a few hundred times a second at most). */
static void flush_due(void) {
  int64_t now = hpc_clock_ns(), last = atomic_load_explicit(&g_last_flush, memory_order_relaxed);
  if (now - last < (int64_t)g_flush_ms * 250000 ||
      !atomic_compare_exchange_strong_explicit(&g_last_flush, &last, now, memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  sem_post(&g_wake);
}

static void on_api(void *userdata, int dom, uint32_t cbid, const void *data) {
  (void)userdata;
  int saved = errno;
  if (dom == HPC_CUPTI_DOMAIN_RESOURCE) { /* contexts and modules: sampling, cubins */
    hpc_cuda_why_resource(cbid, data);
    errno = saved;
    return;
  }
  if (hpc_busy || (dom != DOM_RUNTIME && dom != DOM_DRIVER)) return; /* the collector's own calls */
  const cb_data *d = data;
  if (d->site == SITE_ENTER) {
    if (t_depth++ == 0) { /* the outermost call: the application's */
      hpc_busy = 1;
      t_cur.stamp = hpc_stamp();
      t_cur.thread_id = hpc_region_thread();
      t_cur.region_id = hpc_region_cur;
      t_cur.sel = !atomic_load_explicit(&hpc_paused, memory_order_relaxed);
      if (t_cur.sel && is_launch(dom, cbid) && atomic_load_explicit(&hpc_select_on, memory_order_relaxed) &&
          d->symbol_name)
        t_cur.sel = (uint32_t)hpc_select_kernel(&hpc_cuda, NULL, (uintptr_t)d->symbol_name);
      if (is_launch(dom, cbid)) hpc_cuda_why_launch();
      if (hpc_cu_range_on() && hpc_cu_range_is_launch(dom, cbid)) /* counters: the launch's ranges */
        hpc_cu_range_enter(d->context, d->correlation_id);
      hpc_busy = 0;
    } else {
      hpc_cu_range_corr(d->correlation_id); /* a launch's nested driver call: its records may carry this id */
    }
    corr_put(d->correlation_id, &t_cur);
  } else if (t_depth > 0 && --t_depth == 0) {
    if (is_sync(dom, cbid)) flush_due();
    hpc_busy = 1;
    hpc_cu_range_leave(); /* after a profiled launch: its ranges decoded and evaluated */
    hpc_busy = 0;
  }
  errno = saved;
}

/* ---- activity buffers ------------------------------------------------------------------------------- */
#define BUF_SIZE ((size_t)1 << 20)

static void buf_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, BUF_SIZE);
  *size = *buffer ? BUF_SIZE : 0;
  *max_records = 0;
}

/* Demangled for display, through libstdc++'s __cxa_demangle when the process has it; NULL otherwise. */
static char *demangle(const char *name) {
  static char *(*dm)(const char *, char *, size_t *, int *);
  static int looked;
  if (!looked) {
    *(void **)&dm = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    looked = 1;
  }
  int status = -1;
  char *out = dm && name && name[0] == '_' && name[1] == 'Z' ? dm(name, NULL, NULL, &status) : NULL;
  if (status != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* kernel_symbol rows written with their display names (ids below KSYM_N; above, the core's row stays) */
#define KSYM_N 65536
static _Atomic uint8_t g_ksym[KSYM_N];

static uint32_t kernel_id(const hpc_cu_kernel *k, uint32_t *cold) {
  uintptr_t key = (uintptr_t)k->name;
  if (!key) return 0;
  uint32_t kid = (uint32_t)hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, key);
  if (!kid) kid = hpc_kernel_slow(&hpc_cuda, NULL, key);
  if (!kid) return 0;
  *cold = hpc_kernel_first(kid, key) ? 1 : 0;
  if (kid < KSYM_N && !atomic_exchange(&g_ksym[kid], 1)) { /* the symbol's row again, with what CUPTI says */
    char *display = demangle(k->name);
    hp_kernel_symbol r;
    hpc_cu_kernel_symbol_row(k, kid, display, &r);
    hp_store *s = hpc_store_enter_open();
    if (s) hp_write_kernel_symbol(s, &r);
    hpc_store_leave(s);
    free(display);
  }
  return kid;
}

/* agent (low 32 bits) and queue (high) of a record's device and stream */
static uint64_t queue_of(uint32_t dev, uint32_t stream) {
  uintptr_t key = (uintptr_t)1 << 63 | (uintptr_t)(dev + 1) << 32 | stream;
  uint64_t v = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, key);
  return v ? v : hpc_queue_slow(&hpc_cuda, NULL, key);
}

static int ids_of(uint32_t corr, uint32_t dev, uint32_t stream, hpc_cu_ids *ids) {
  memset(ids, 0, sizeof *ids);
  facts f;
  if (corr_get(corr, &f)) {
    if (!f.sel) return 0;
    ids->thread_id = f.thread_id;
    ids->region_id = f.region_id;
    ids->enqueue_ns = f.stamp ? hpc_stamp_ns(f.stamp) : 0;
  }
  uint64_t qa = queue_of(dev, stream);
  ids->agent_id = (uint32_t)qa;
  ids->queue_id = qa >> 32;
  return 1;
}

static uint64_t fix(uint64_t ns) { return ns && g_ts_offset ? (uint64_t)((int64_t)ns - g_ts_offset) : ns; }

static void write_record(hp_store *s, void *rec) {
  uint32_t kind = *(const uint32_t *)rec;
  hpc_cu_ids ids;
  char name[160];
  switch (kind) {
  case HPC_CU_KIND_CONCURRENT_KERNEL: {
    hpc_cu_kernel *k = rec;
    k->start = fix(k->start), k->end = fix(k->end);
    if (!ids_of(k->correlationId, k->deviceId, k->streamId, &ids)) {
      atomic_fetch_add_explicit(&g_not_selected, 1, memory_order_relaxed);
      hpc_cuda_why_kernel(k->correlationId, 0, 0, 0);
      return;
    }
    ids.kernel_id = kernel_id(k, &ids.cold);
    ids.row_id = atomic_fetch_add_explicit(&hpc_next_dispatch, 1, memory_order_relaxed) + 1;
    hp_dispatch d;
    hpc_cu_dispatch_row(k, &ids, &d);
    hp_counter_value v[HPC_CU_RANGE_MAX]; /* its counters (profile), by the launch's correlation id */
    uint32_t passes = 0;
    size_t nv = g_profile ? hpc_cu_range_take(k->correlationId, d.id, v, HPC_CU_RANGE_MAX, &passes) : 0;
    if (nv) d.passes = passes;
    hp_write_dispatch(s, &d);
    hpc_cuda_why_kernel(k->correlationId, ids.row_id, (int64_t)k->start, (int64_t)k->end);
    for (size_t i = 0; i < nv; i++)
      hp_write_counter_value(s, &v[i]);
    atomic_fetch_add_explicit(&g_kernels, 1, memory_order_relaxed);
    return;
  }
  case HPC_CU_KIND_MEMCPY:
  case HPC_CU_KIND_MEMSET: {
    hp_memory_copy r;
    if (kind == HPC_CU_KIND_MEMCPY) {
      hpc_cu_memcpy *m = rec;
      m->start = fix(m->start), m->end = fix(m->end);
      if (!ids_of(m->correlationId, m->deviceId, m->streamId, &ids)) return;
      ids.row_id = COPY_ID_BASE + atomic_fetch_add_explicit(&g_copy_ids, 1, memory_order_relaxed) + 1;
      hpc_cu_memcpy_row(m, &ids, name, sizeof name, &r);
    } else {
      hpc_cu_memset *m = rec;
      m->start = fix(m->start), m->end = fix(m->end);
      if (!ids_of(m->correlationId, m->deviceId, m->streamId, &ids)) return;
      ids.row_id = COPY_ID_BASE + atomic_fetch_add_explicit(&g_copy_ids, 1, memory_order_relaxed) + 1;
      hpc_cu_memset_row(m, &ids, name, sizeof name, &r);
    }
    hp_write_memory_copy(s, &r);
    atomic_fetch_add_explicit(&g_copies, 1, memory_order_relaxed);
    return;
  }
  case HPC_CU_KIND_RUNTIME:
  case HPC_CU_KIND_DRIVER:
  case HPC_CU_KIND_SYNCHRONIZATION: {
    facts f = {0};
    hp_region r;
    memset(&ids, 0, sizeof ids);
    if (kind == HPC_CU_KIND_SYNCHRONIZATION) {
      hpc_cu_sync *y = rec;
      y->start = fix(y->start), y->end = fix(y->end);
      if (corr_get(y->correlationId, &f)) ids.thread_id = f.thread_id;
      ids.row_id = hpc_region_id_new();
      hpc_cu_sync_row(y, &ids, &r);
    } else {
      hpc_cu_api *a = rec;
      a->start = fix(a->start), a->end = fix(a->end);
      const char *fn = NULL;
      if (cu.callback_name(kind == HPC_CU_KIND_DRIVER ? DOM_DRIVER : DOM_RUNTIME, a->cbid, &fn) != 0)
        fn = NULL;
      if (corr_get(a->correlationId, &f)) ids.thread_id = f.thread_id;
      ids.row_id = hpc_region_id_new();
      hpc_cu_api_row(a, fn, &ids, &r);
    }
    hp_write_region(s, &r);
    atomic_fetch_add_explicit(&g_calls, 1, memory_order_relaxed);
    return;
  }
  default: return;
  }
}

static void buf_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1;
  if (buffer && valid && atomic_load(&g_on)) {
    void *rec = NULL;
    while (cu.next_record(buffer, valid, &rec) == 0 && rec) {
      hp_store *s = hpc_store_enter_open();
      if (s) write_record(s, rec);
      hpc_store_leave(s);
    }
    hp_store *s = hpc_store_enter();
    if (s) hp_log_flush(s); /* written rows reach the file: they survive a SIGKILL from here on */
    hpc_store_leave(s);
  }
  size_t dropped = 0;
  if (ctx && cu.dropped(ctx, stream, &dropped) == 0 && dropped) {
    atomic_fetch_add(&g_dropped, dropped);
    hpc_count_lost(dropped);
  }
  free(buffer);
  hpc_busy = busy;
  errno = saved;
}

static uint64_t timestamp(void) { return (uint64_t)hpc_clock_ns(); }

/* ---- the driver's device facts (libcuda is loaded: it called us) --------------------------------------- */
static void *cuda_sym(const char *name) {
  static void *lib;
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return lib ? dlsym(lib, name) : NULL;
}

/* ---- loading CUPTI ------------------------------------------------------------------------------------ */
static char g_why[1024];

static int load_cupti(void *ctx, const char *path) {
  (void)ctx;
  if (access(path, R_OK) != 0) return 0;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(g_why, sizeof g_why, "%s: %s", path, dlerror());
    return -1;
  }
  for (size_t i = 0; i < sizeof cu_syms / sizeof cu_syms[0]; i++) {
    void *f = dlsym(h, cu_syms[i].name);
    if (!f && !cu_syms[i].optional) {
      snprintf(g_why, sizeof g_why, "%s has no %s", path, cu_syms[i].name);
      dlclose(h);
      memset(&cu, 0, sizeof cu);
      return -1;
    }
    memcpy((char *)&cu + cu_syms[i].off, &f, sizeof f);
  }
  snprintf(g_cupti_path, sizeof g_cupti_path, "%s", path);
  return 1;
}

static const char *cupti_err(int rc) {
  const char *s = NULL;
  static char buf[32];
  if (cu.result_string && cu.result_string(rc, &s) == 0 && s) return s;
  snprintf(buf, sizeof buf, "CUPTI error %d", rc);
  return buf;
}

/* CUPTI set up: 0, or -1 with the reason in g_why. */
static int start_cupti(void) {
  if (hc_cupti_search(load_cupti, NULL, g_why, sizeof g_why) != 1) return -1;
  if (!cuda_sym("cuInit")) { /* not called by the driver (a test calling InitializeInjection by hand) */
    snprintf(g_why, sizeof g_why, "no CUDA driver in this process (libcuda.so.1 is not loaded)");
    return -1;
  }
  if (cu.timestamp_cb && cu.timestamp_cb(timestamp) == 0) {
    g_ts_offset = 0;
  } else if (cu.get_timestamp) { /* CUPTI's clock, moved onto ours */
    uint64_t c = 0;
    if (cu.get_timestamp(&c) == 0) g_ts_offset = (int64_t)c - hpc_clock_ns();
  }
  int rc = cu.register_callbacks(buf_requested, buf_completed);
  void *sub = NULL;
  if (rc == 0) rc = cu.subscribe(&sub, on_api, NULL);
  if (rc == 0) rc = cu.enable_domain(1, sub, DOM_RUNTIME);
  if (rc == 0) rc = cu.enable_domain(1, sub, DOM_DRIVER);
  if (rc != 0) {
    snprintf(g_why, sizeof g_why, "CUPTI (%.600s) refused its callbacks: %s", g_cupti_path, cupti_err(rc));
    return -1;
  }
  if (g_why_on) hpc_cuda_why_start();
  int rrc = g_why_on ? cu.enable_domain(1, sub, HPC_CUPTI_DOMAIN_RESOURCE) : 0;
  if (rrc != 0)
    hpc_say("CUDA sampling and cubins are off: CUPTI refused its resource callbacks: %s", cupti_err(rrc));
  const uint32_t kinds[] = {HPC_CU_KIND_CONCURRENT_KERNEL, HPC_CU_KIND_MEMCPY, HPC_CU_KIND_MEMSET,
                            HPC_CU_KIND_RUNTIME,           HPC_CU_KIND_DRIVER, HPC_CU_KIND_SYNCHRONIZATION};
  size_t nk = g_api ? 6 : 3;
  atomic_store(&g_on, 1);
  for (size_t i = 0; i < nk; i++)
    if ((rc = cu.enable(kinds[i])) != 0) {
      snprintf(g_why, sizeof g_why, "CUPTI (%.600s) refused activity kind %u: %s", g_cupti_path, kinds[i],
               cupti_err(rc));
      atomic_store(&g_on, 0);
      cu.enable_domain(0, sub, DOM_RUNTIME);
      cu.enable_domain(0, sub, DOM_DRIVER);
      return -1;
    }
  if (cu.flush_period) cu.flush_period(g_flush_ms); /* CUPTI's own thread delivers full buffers */
  atomic_store(&g_last_flush, hpc_clock_ns());
  pthread_t th;
  pthread_attr_t at;
  int ok = sem_init(&g_wake, 0, 0) == 0 && pthread_attr_init(&at) == 0;
  if (ok) {
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    ok = pthread_create(&th, &at, flusher, NULL) == 0;
    pthread_attr_destroy(&at);
  }
  if (ok)
    pthread_setname_np(th, "hubprof-cuda");
  else /* still recorded, at full buffers and at exit only */
    hpc_say(
        "cannot start the CUDA flusher thread: completed kernels reach the log at full buffers and at exit");
  return 0;
}

/* Called by libcuda in cuInit when CUDA_INJECTION64_PATH names this library (hubprof trace|profile|sample
 * set it). Returns 1 (success for the driver) in every case: the application must run as it would. */
HPC_EXPORT int InitializeInjection(void) {
  int saved = errno;
  if (atomic_exchange(&g_started, 1)) return 1;
  int on = hpc_init_slow();
  if (on != HPC_TRACING && on != HPC_PROFILING) {
    errno = saved;
    return 1;
  }
  int busy = hpc_busy;
  hpc_busy = 1;
  if (start_cupti() != 0)
    hpc_say("CUDA work is not recorded: %s", g_why);
  else if (hpc_cu_range_on() && hpc_cu_range_start(g_cupti_path, g_why, sizeof g_why) != 0)
    hpc_say("%s; CUDA kernels are traced without counters", g_why);
  else if (g_profile && !hpc_cu_range_on())
    hpc_say("CUDA kernels are traced without counters: the counters of this profile (provider %s) are not "
            "NVIDIA metrics (hubprof profile --device cuda, docs/cuda.md)",
            g_provider);
  hpc_busy = busy;
  errno = saved;
  return 1;
}

static void cuda_agent_describe(void *h, const void *rt, uintptr_t dev, hp_agent *row, int *caller) {
  (void)h, (void)rt;
  int ord = (int)dev - 1, cdev = -1;
  *caller = 0;
  row->type = HP_AGENT_GPU;
  row->device_index = ord;
  row->vendor = strdup("NVIDIA");
  int (*get)(int *, int) = NULL;
  int (*attr)(int *, int, int) = NULL;
  int (*name)(char *, int, int) = NULL;
  int (*mem)(size_t *, int) = NULL;
  int (*uuid)(unsigned char *, int) = NULL;
  int (*ver)(int *) = NULL;
  *(void **)&get = cuda_sym("cuDeviceGet");
  *(void **)&attr = cuda_sym("cuDeviceGetAttribute");
  *(void **)&name = cuda_sym("cuDeviceGetName");
  *(void **)&mem = cuda_sym("cuDeviceTotalMem_v2");
  *(void **)&uuid = cuda_sym("cuDeviceGetUuid_v2");
  if (!uuid) *(void **)&uuid = cuda_sym("cuDeviceGetUuid");
  *(void **)&ver = cuda_sym("cuDriverGetVersion");
  if (get && get(&cdev, ord) != 0) cdev = -1;
  int v[12] = {0};
  /* SMs, clock kHz, warp, shared/block opt-in, memory clock kHz, bus bits, PCI domain, bus, device, cc */
  static const int which[] = {16, 13, 10, 97, 36, 37, 50, 33, 34, 75, 76};
  for (size_t i = 0; attr && cdev >= 0 && i < sizeof which / sizeof *which; i++)
    if (attr(&v[i], which[i], cdev) != 0) v[i] = 0;
  char buf[256] = "";
  if (name && cdev >= 0 && name(buf, sizeof buf, cdev) != 0) buf[0] = 0;
  row->product_name = strdup(buf);
  const char *chip = hc_cupti_chip(cu.chip_name, (size_t)ord);
  snprintf(buf, sizeof buf, "sm_%d%d", v[9], v[10]);
  row->name = strdup(chip ? chip : buf);
  unsigned char u[16] = {0};
  int uok = uuid && cdev >= 0 && uuid(u, cdev) == 0, dv = 0;
  if (ver && ver(&dv) != 0) dv = 0;
  char us[48] = "";
  if (uok)
    snprintf(us, sizeof us, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  /* what the agent row has no column for: driver, compute capability, UUID, PCI bus, memory clock and width
   */
  snprintf(buf, sizeof buf, "CUDA %d.%d, sm_%d%d, %s, PCI %04x:%02x:%02x.0, memory %d MHz x %d bits",
           dv / 1000, dv % 1000 / 10, v[9], v[10], uok ? us : "no UUID", (unsigned)v[6], (unsigned)v[7],
           (unsigned)v[8], v[4] / 1000, v[5]);
  row->runtime = strdup(buf);
  row->compute_units = v[0];
  row->max_clock_mhz = v[1] / 1000;
  size_t bytes = 0;
  if (mem && cdev >= 0 && mem(&bytes, cdev) == 0) row->global_mem_bytes = (int64_t)bytes;
  row->local_mem_bytes = v[3];
  row->wave_size = v[2];
}

/* ---- the provider table ------------------------------------------------------------------------------ */
static int cuda_init(void *h, const hpc_env *e, const char **why) {
  (void)h;
  g_api = e->api;
  g_profile = e->profile;
  g_why_on = !e->profile && hpc_cuda_why_init(e->code == HPC_CODE_ALL);
  g_provider = e->provider ? e->provider : "?";
  if (g_profile && e->provider && !strcmp(e->provider, "cupti") && hpc_cu_range_init(e, why) != 0) return -1;
  g_flush_ms = e->harvest_ms ? e->harvest_ms : 10;
  return 0;
}
static const char *cuda_attached(void *h) {
  (void)h;
  return "CUDA injection";
}
static void cuda_log_opened(void *h, hp_store *s) {
  (void)h;
  if (atomic_load(&g_on)) hp_write_metadata(s, "cuda.cupti", g_cupti_path);
  if (g_profile) hpc_cu_range_log(s); /* the counters' metadata and counter_info rows */
}
static char *cuda_kernel_name(void *h, const void *rt, uintptr_t k, char *buf, size_t len) {
  (void)h, (void)rt;
  const char *n = (const char *)k;
  if (!n) return NULL;
  if (strlen(n) < len) return memcpy(buf, n, strlen(n) + 1);
  return strdup(n);
}
static uint64_t cuda_kernel_code_object(void *h, const void *rt, uintptr_t k) {
  (void)h, (void)rt, (void)k;
  return 0;
}
static uintptr_t cuda_queue_device(void *h, const void *rt, uintptr_t q) {
  (void)h, (void)rt;
  return (q >> 32) & 0x7fffffffu; /* device ordinal + 1 (queue_of) */
}
static void cuda_poll(void *h, const void *rt, hpc_pending *ring, uint64_t mask, uint64_t from, size_t n,
                      int want_start, hpc_poll *out) {
  (void)h, (void)rt, (void)ring, (void)mask, (void)from, (void)want_start;
  for (size_t i = 0; i < n; i++) /* never called: CUDA dispatches go through no ring */
    out[i] = (hpc_poll){0, 0, HPC_POLL_DONE};
}
static void cuda_release(void *h, const void *rt, void *ev) { (void)h, (void)rt, (void)ev; }
static void cuda_flush(void *h, hp_store *s) {
  (void)h, (void)s;
  if (!atomic_load(&g_on)) return;
  int busy = hpc_busy;
  hpc_busy = 1;
  atomic_store(&g_stop, 1);
  sem_post(&g_wake);
  for (int i = 0; i < 200 && atomic_load(&g_flushing); i++) { /* its flush ends first (200 ms at most) */
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  cu.flush_all(1);          /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: records of work still running come too */
  hpc_cuda_why_drain(s, 1); /* the last samples, then sampling ends */
  hpc_busy = busy;
}
/* A forked child has CUPTI's state but none of its threads (CUDA does not work after fork): it records no
 * CUDA and never calls CUPTI, whose flush could wait for a lock a parent's thread held at the fork. */
static void cuda_fork_child(void *h) {
  (void)h;
  atomic_store(&g_on, 0);
  atomic_store(&g_stop, 1);
  hpc_cuda_why_fork_child();
  hpc_cu_range_exit(0); /* no counters either: the range lock may be a parent thread's */
}
static uint64_t cuda_exit(void *h, int debug) {
  (void)h;
  int (*count)(int *) = NULL;
  int n = 0, rc = -1;
  *(void **)&count = atomic_load(&g_on) && !atomic_load(&g_kernels) && !atomic_load(&g_copies)
                         ? cuda_sym("cuDeviceGetCount")
                         : NULL;
  if (count && ((rc = count(&n)) != 0 || n == 0)) /* CUPTI was ready, but there was nothing to run on */
    hpc_say("CUDA work is not recorded: no CUDA device (cuDeviceGetCount returned %d, %d devices)", rc, n);
  hpc_cu_range_exit(debug && atomic_load(&g_on));
  if (debug && atomic_load(&g_on))
    hpc_say("pid %ld: CUDA: %" PRIu64 " kernels, %" PRIu64 " copies and fills, %" PRIu64 " calls, %" PRIu64
            " not selected, %" PRIu64 " dropped by CUPTI",
            (long)getpid(), atomic_load(&g_kernels), atomic_load(&g_copies), atomic_load(&g_calls),
            atomic_load(&g_not_selected), atomic_load(&g_dropped));
  return atomic_load(&g_kernels); /* dispatch rows written here, not through the rings */
}

hpc_provider hpc_cuda = {.name = "cuda",
                         .h = NULL,
                         .init = cuda_init,
                         .attached = cuda_attached,
                         .log_opened = cuda_log_opened,
                         .agent_describe = cuda_agent_describe,
                         .kernel_name = cuda_kernel_name,
                         .kernel_code_object = cuda_kernel_code_object,
                         .queue_device = cuda_queue_device,
                         .poll = cuda_poll,
                         .release = cuda_release,
                         .flush = cuda_flush,
                         .fork_child = cuda_fork_child,
                         .exit = cuda_exit};
