/* Why a CUDA kernel is slow, inside the CUDA provider: under `hubprof sample`, CUPTI's PC sampling
 * (continuous mode, every stall reason) enabled on each context as it is created, or PM sampling of the
 * metrics of `sample --counters` on its device; the cubin of every module as it loads (stored once per hash);
 * the samples read into pc_sample and counter_sample rows at the provider's flush points, once the kernels
 * they fall in have their dispatch rows. docs/cuda.md ("Why a kernel is slow") says what and how. */
/* SPDX-License-Identifier: MIT */
#include "prov_cuda_why.h"

#include "collector.h"
#include "counters.h"
#include "cuda_cubin.h"
#include "fmt_log.h"
#include "sample_cupti_pc.h"
#include "sample_cupti_pm.h"
#include "stamp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CB_CONTEXT_CREATED = 1, CB_CONTEXT_DESTROY_STARTING = 2, CB_MODULE_LOADED = 6 };

typedef struct { /* CUpti_ResourceData */
  void *context;
  void *handle;
  void *descriptor; /* CUpti_ModuleResourceData for the module callbacks */
} res_data;
typedef struct { /* CUpti_ModuleResourceData */
  uint32_t module_id;
  size_t cubin_size;
  const char *cubin;
} module_data;
typedef struct { /* CUpti_GetCubinCrcParams */
  size_t size;
  size_t cubin_size;
  const void *cubin;
  uint64_t crc;
} crc_params;

#define NCTX 64                     /* contexts sampled at once */
#define NDEV 64                     /* devices with PM sampling */
#define CORR_N (1u << 16)           /* launches remembered: correlation id -> dispatch row */
#define NWIN 4096                   /* recent dispatch windows, for the PM intervals */
#define ID_BASE ((uint64_t)1 << 40) /* pc_sample / counter_sample row ids, apart from sample.c's */
#define PM_COUNTER_ID 0x10000       /* counter_info ids of the PM metrics: this + index */
#define PEND_N 65536                /* PC rows waiting for their launch's dispatch row */
/* where(): a dispatch not known yet, the launch's correlation id in the low bits */
#define PENDING ((uint64_t)1 << 63)
#define NOT_SELECTED UINT64_MAX /* the corr ring's row of a launch the selection left out */

static int g_pc, g_pm, g_code; /* PC sampling, PM sampling, cubins kept */
static int g_debug;
static uint32_t g_period_log2;    /* HUBPROF_CUDA_PC_PERIOD: 2^N cycles, 0 CUPTI's default */
static uint64_t g_pm_interval_ns; /* HUBPROF_CUDA_PM_INTERVAL_US */
static char g_pm_buf[2048];
static const char *g_pm_names[HPC_PM_MAX_METRICS];
static uint64_t g_pm_ids[HPC_PM_MAX_METRICS];
static size_t g_npm;

static hc_cupti *g_lib;
static int (*g_crc)(void *params);
static int (*g_device_id)(void *ctx, uint32_t *dev);
static hpc_cubins *g_cubins;
extern _Atomic uint64_t hpc_code_object_ids; /* prov_opencl_codeobj.c: code_object row ids of the process */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* contexts, devices, the drains */
static struct {
  void *ctx;
  uint32_t dev;
  hpc_cupti_pcs *pcs;
} g_ctx[NCTX];
static size_t g_nctx;
static hpc_cupti_pm *g_dev_pm[NDEV];
static void *g_dev_ctx[NDEV]; /* the context whose creation opened the device's PM sampling */
static uint64_t g_ids = ID_BASE;
static uint64_t g_pc_rows, g_pc_unplaced, g_pc_dropped, g_pm_rows, g_pm_outside, g_pm_overflows;
static _Atomic uint64_t g_no_dispatch; /* PC rows written without their dispatch */
static hp_pc_sample *g_pend;           /* rows whose launch has no record yet (g_lock) */
static size_t g_npend;
static int g_said_pc, g_said_pm;

static struct {
  _Atomic uint32_t corr;
  _Atomic uint64_t row;
} g_corr[CORR_N];
static pthread_mutex_t g_wlock = PTHREAD_MUTEX_INITIALIZER;
static hpc_pm_window g_win[NWIN], g_wcopy[NWIN];
static uint64_t g_nwin;
static _Atomic int64_t g_launched, g_recorded, g_last_drain;

static unsigned long env_ul(const char *name, unsigned long def, unsigned long lo, unsigned long hi) {
  const char *v = getenv(name); /* like sample.c: `hubprof sample`'s variables are read where they act */
  char *end;
  unsigned long x = v && *v ? strtoul(v, &end, 10) : def;
  if (v && *v && (*end || x < lo || x > hi)) {
    hpc_say("%s=%s is not a number from %lu to %lu: %lu is used", name, v, lo, hi, def);
    x = def;
  }
  return x;
}

int hpc_cuda_why_init(int code_all) {
  const char *period = getenv("HUBPROF_SAMPLE_PERIOD_US"), *pm = getenv("HUBPROF_SAMPLE_CUDA_COUNTERS");
  const char *dbg = getenv("HUBPROF_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0");
  int sampling = period && *period;
  g_code = sampling || code_all;
  if (sampling && pm && *pm) { /* PM sampling: one of the two per run (docs/sampling.md) */
    snprintf(g_pm_buf, sizeof g_pm_buf, "%s", pm);
    char *save = NULL;
    for (char *t = strtok_r(g_pm_buf, ",;", &save); t && g_npm < HPC_PM_MAX_METRICS;
         t = strtok_r(NULL, ",;", &save)) {
      g_pm_ids[g_npm] = PM_COUNTER_ID + g_npm;
      g_pm_names[g_npm++] = t;
    }
    g_pm = g_npm > 0;
    g_pm_interval_ns = (uint64_t)env_ul("HUBPROF_CUDA_PM_INTERVAL_US", 100, 1, 1000000) * 1000;
  } else if (sampling) {
    g_pc = 1;
    g_period_log2 = (uint32_t)env_ul("HUBPROF_CUDA_PC_PERIOD", 0, 0, 31);
    if (g_period_log2 && g_period_log2 < 5) g_period_log2 = 5;
  }
  return g_code;
}

void hpc_cuda_why_start(void) {
  g_last_drain = hpc_clock_ns();
  if (g_pc && !(g_pend = calloc(PEND_N, sizeof *g_pend))) {
    g_pc = 0;
    hpc_say("CUDA PC sampling is off: out of memory");
  }
  g_cubins = hpc_cubins_new();
  if (hc_cupti_open(&g_lib) == HC_OK) { /* the library the provider loaded: found the same way */
    *(void **)&g_crc = hc_cupti_sym(g_lib, "cuptiGetCubinCrc");
    *(void **)&g_device_id = hc_cupti_sym(g_lib, "cuptiGetDeviceId");
  }
}

/* ---- the resource callbacks (application threads) ---------------------------------------------------- */
static void module_loaded(const module_data *m) {
  if (!g_code || !m || !m->cubin || !m->cubin_size) return;
  crc_params p = {sizeof p, m->cubin_size, m->cubin, 0};
  if (!g_crc || g_crc(&p) != 0) p.crc = 0; /* stored all the same; its PCs are not placed */
  const char *why;
  hp_store *s = hpc_store_enter_open();
  uint64_t id =
      hpc_cubins_add(g_cubins, s, m->cubin, m->cubin_size, p.crc, m->module_id, &hpc_code_object_ids, &why);
  hpc_store_leave(s);
  if (g_debug && *why) hpc_say("CUDA module %u (%zu bytes): %s", m->module_id, m->cubin_size, why);
  (void)id;
}

static void write_facts(void);
static void drain_locked(hp_store *s, void *only_ctx, int final);

static void context_created(void *ctx) {
  uint32_t dev = 0;
  if (g_device_id && g_device_id(ctx, &dev) != 0) dev = 0;
  hpc_cupti_pcs *pcs = g_pc ? hpc_cupti_pcs_open(ctx, g_period_log2, 0) : NULL;
  hpc_cupti_pm *pm = NULL;
  pthread_mutex_lock(&g_lock);
  int open_pm = g_pm && dev < NDEV && !g_dev_pm[dev];
  pthread_mutex_unlock(&g_lock);
  if (open_pm) pm = hpc_cupti_pm_open(dev, g_pm_names, g_npm, g_pm_interval_ns, 0);
  pthread_mutex_lock(&g_lock);
  if (pcs && *hpc_cupti_pcs_error(pcs)) {
    if (!g_said_pc++) hpc_say("CUDA PC sampling is off: %s", hpc_cupti_pcs_error(pcs));
    hpc_cupti_pcs_close(pcs);
    pcs = NULL;
  }
  if (pm && *hpc_cupti_pm_error(pm)) {
    if (!g_said_pm++) hpc_say("CUDA PM sampling is off: %s", hpc_cupti_pm_error(pm));
    hpc_cupti_pm_close(pm);
    pm = NULL;
  }
  if (pcs && g_nctx < NCTX) {
    g_ctx[g_nctx].ctx = ctx, g_ctx[g_nctx].dev = dev, g_ctx[g_nctx].pcs = pcs;
    g_nctx++;
    pcs = NULL;
  }
  if (pm) g_dev_pm[dev] = pm, g_dev_ctx[dev] = ctx;
  int on = g_nctx > 0 || pm;
  pthread_mutex_unlock(&g_lock);
  if (on) write_facts();
  if (pcs) { /* more contexts than NCTX */
    hpc_say("CUDA PC sampling: more than %d contexts; context %p is not sampled", NCTX, ctx);
    hpc_cupti_pcs_close(pcs);
  }
}

static void context_destroying(void *ctx) {
  hp_store *s = hpc_store_enter_open();
  pthread_mutex_lock(&g_lock);
  drain_locked(s, ctx, 1); /* its samples, then its sampling ends */
  pthread_mutex_unlock(&g_lock);
  if (s) hp_log_flush(s);
  hpc_store_leave(s);
}

void hpc_cuda_why_resource(uint32_t cbid, const void *data) {
  const res_data *r = data;
  if (!r) return;
  int busy = hpc_busy;
  hpc_busy = 1;
  if (cbid == CB_MODULE_LOADED)
    module_loaded(r->descriptor);
  else if (cbid == CB_CONTEXT_CREATED && (g_pc || g_pm))
    context_created(r->context);
  else if (cbid == CB_CONTEXT_DESTROY_STARTING && (g_pc || g_pm))
    context_destroying(r->context);
  hpc_busy = busy;
}

/* ---- dispatches ------------------------------------------------------------------------------------- */
void hpc_cuda_why_launch(void) {
  if (g_pc || g_pm) atomic_fetch_add_explicit(&g_launched, 1, memory_order_relaxed);
}

void hpc_cuda_why_kernel(uint32_t corr, uint64_t row, int64_t start_ns, int64_t end_ns) {
  if (!g_pc && !g_pm) return;
  if (g_pc) {
    unsigned i = corr & (CORR_N - 1);
    atomic_store_explicit(&g_corr[i].row, row ? row : NOT_SELECTED, memory_order_relaxed);
    atomic_store_explicit(&g_corr[i].corr, corr, memory_order_release);
  }
  if (g_pm && row && end_ns > start_ns) {
    pthread_mutex_lock(&g_wlock);
    g_win[g_nwin++ % NWIN] = (hpc_pm_window){row, start_ns, end_ns};
    pthread_mutex_unlock(&g_wlock);
  }
  atomic_fetch_add_explicit(&g_recorded, 1, memory_order_release);
}

static uint64_t dispatch_of(uint32_t corr) {
  unsigned i = corr & (CORR_N - 1);
  if (!corr || atomic_load_explicit(&g_corr[i].corr, memory_order_acquire) != corr) return 0;
  return atomic_load_explicit(&g_corr[i].row, memory_order_relaxed);
}

static int where(void *ctx, const hpc_cupti_pc *pc, uint64_t *d, uint64_t *co, uint64_t *off) {
  (void)ctx;
  if (hpc_cubins_place(g_cubins, pc, co, off)) return -1;
  *d = dispatch_of(pc->correlationId);
  if (*d == NOT_SELECTED) return -1;         /* a kernel --kernel/--dispatch-range left out: not kept */
  if (!*d) *d = PENDING | pc->correlationId; /* its record has not come: write_row keeps it */
  return 0;
}

/* A drained row: written when its dispatch is known, else kept until it is (the last drain writes what is
 * left without one). g_lock held. */
static int write_row(void *ctx, hp_store *s, const hp_pc_sample *r) {
  (void)ctx;
  if (!(r->dispatch_id & PENDING)) return s && hp_write_pc_sample(s, r) == HP_OK;
  if (g_pend && g_npend < PEND_N) { /* counted when written */
    g_pend[g_npend++] = *r;
    return 0;
  }
  hp_pc_sample w = *r;
  w.dispatch_id = 0;
  atomic_fetch_add_explicit(&g_no_dispatch, 1, memory_order_relaxed);
  return s && hp_write_pc_sample(s, &w) == HP_OK;
}

/* The kept rows whose dispatch is known now (all of them when final). g_lock held. */
static void write_pending(hp_store *s, int final) {
  size_t keep = 0;
  for (size_t i = 0; i < g_npend; i++) {
    hp_pc_sample *r = &g_pend[i];
    uint64_t d = dispatch_of((uint32_t)r->dispatch_id);
    if (!d && !final) {
      g_pend[keep++] = *r;
      continue;
    }
    if (d == NOT_SELECTED) continue;
    if (!d) atomic_fetch_add_explicit(&g_no_dispatch, 1, memory_order_relaxed);
    r->dispatch_id = d;
    g_pc_rows += s && hp_write_pc_sample(s, r) == HP_OK;
  }
  g_npend = keep;
}

/* ---- the drains ------------------------------------------------------------------------------------- */
/* The GPU's timer runs on the host's wall clock (Linux): CLOCK_REALTIME - the collector's clock, the wall
 * clock read between two reads of ours, the tightest pair of 8 (a thread preempted between two reads would
 * move every PM interval by as long as it waited: out of the kernels it belongs to). */
static int64_t realtime_minus_raw(void) {
  int64_t best = 0, width = INT64_MAX;
  for (int i = 0; i < 8 && width > 200; i++) {
    struct timespec ts;
    int64_t a = hpc_clock_ns();
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t b = hpc_clock_ns();
    if (b - a < width) width = b - a, best = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - (a + (b - a) / 2);
  }
  return best;
}

static void pc_stats(hpc_cupti_pcs *p) {
  uint64_t w, u, d;
  hpc_cupti_pcs_stats(p, &w, &u, &d);
  g_pc_rows += w, g_pc_unplaced += u, g_pc_dropped += d;
}
static void pm_stats(hpc_cupti_pm *p) {
  uint64_t w, o, v;
  hpc_cupti_pm_stats(p, &w, &o, &v);
  g_pm_rows += w, g_pm_outside += o, g_pm_overflows += v;
}

/* Drain every context (or only_ctx) and device; final: then close them. g_lock held. */
static void drain_locked(hp_store *s, void *only_ctx, int final) {
  int64_t now = hpc_clock_ns();
  atomic_store_explicit(&g_last_drain, now, memory_order_relaxed);
  write_pending(s, 0); /* rows of earlier drains whose records came since */
  for (size_t i = 0; i < g_nctx; i++) {
    if (only_ctx && g_ctx[i].ctx != only_ctx) continue;
    hpc_cupti_pcs_drain(g_ctx[i].pcs, s, where, NULL, now, 0, &g_ids, write_row, NULL);
    if (!final) continue;
    write_pending(s, 1); /* their stall reasons' names belong to the sampling state closed next */
    pc_stats(g_ctx[i].pcs);
    hpc_cupti_pcs_close(g_ctx[i].pcs);
    g_ctx[i--] = g_ctx[--g_nctx];
  }
  size_t nw = 0;
  pthread_mutex_lock(&g_wlock);
  for (uint64_t k = g_nwin > NWIN ? g_nwin - NWIN : 0; k < g_nwin; k++)
    g_wcopy[nw++] = g_win[k % NWIN];
  pthread_mutex_unlock(&g_wlock);
  int64_t alt = realtime_minus_raw();
  for (size_t d = 0; d < NDEV; d++) {
    if (!g_dev_pm[d] || (only_ctx && g_dev_ctx[d] != only_ctx)) continue;
    hpc_cupti_pm_drain(g_dev_pm[d], s, g_pm_ids, g_wcopy, nw, alt, &g_ids);
    if (!final) continue;
    pm_stats(g_dev_pm[d]);
    hpc_cupti_pm_close(g_dev_pm[d]);
    g_dev_pm[d] = NULL;
  }
}

void hpc_cuda_why_drain(hp_store *s, int final) {
  if (!g_pc && !g_pm) return;
  if (!final) { /* kernels still running: their samples wait for their records, a second at most */
    int64_t running = atomic_load(&g_launched) - atomic_load(&g_recorded);
    if (running > 0 && hpc_clock_ns() - atomic_load(&g_last_drain) < 1000000000) return;
  }
  hp_store *own = s ? NULL : hpc_store_enter_open();
  if (!s) s = own;
  pthread_mutex_lock(&g_lock);
  uint64_t before = g_ids + g_pc_rows;
  drain_locked(s, NULL, final);
  if (final) write_pending(s, 1);
  int wrote = g_ids + g_pc_rows != before;
  if (final && s) {
    static const char *const keys[] = {"cuda_pc_samples_rows", "cuda_pc_unplaced",   "cuda_pc_dropped",
                                       "cuda_pc_no_dispatch",  "cuda_pm_rows",       "cuda_pm_outside",
                                       "cuda_pm_overflows",    "cuda_modules_stored"};
    uint64_t modules = 0, refused = 0;
    hpc_cubins_stats(g_cubins, &modules, &refused);
    uint64_t v[] = {g_pc_rows, g_pc_unplaced, g_pc_dropped,   atomic_load(&g_no_dispatch),
                    g_pm_rows, g_pm_outside,  g_pm_overflows, modules - refused};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
      if (i < 4 ? !g_pc : i < 7 ? !g_pm : 0) continue;
      char b[32];
      snprintf(b, sizeof b, "%llu", (unsigned long long)v[i]);
      hp_write_metadata(s, keys[i], b);
    }
    if (g_debug)
      hpc_say(
          "CUDA sampling: %llu PC rows, %llu samples unplaced, %llu dropped; %llu PM rows, %llu intervals "
          "outside kernels",
          (unsigned long long)g_pc_rows, (unsigned long long)g_pc_unplaced, (unsigned long long)g_pc_dropped,
          (unsigned long long)g_pm_rows, (unsigned long long)g_pm_outside);
    g_pc = g_pm = 0;
  }
  pthread_mutex_unlock(&g_lock);
  if (s && (wrote || final)) hp_log_flush(s); /* in the file: a SIGKILL from here on keeps them */
  hpc_store_leave(own);
}

/* What was sampled, once sampling runs on a first context: the PM metrics' counter_info rows, metadata. */
static void write_facts(void) {
  static _Atomic int done;
  if (atomic_exchange(&done, 1)) return;
  hp_store *s = hpc_store_enter_open();
  if (!s) return;
  for (size_t i = 0; g_pm && i < g_npm; i++) {
    hp_counter_info ci = {.size = sizeof ci,
                          .id = g_pm_ids[i],
                          .name = g_pm_names[i],
                          .description = "CUPTI PM sampling",
                          .block = "cupti_pm",
                          .unit = "",
                          .expression = ""};
    hp_write_counter_info(s, &ci);
  }
  if (g_pc) hp_write_metadata(s, "sample_provider_cuda", "cupti_pc_sampling");
  if (g_pm) {
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)g_pm_interval_ns);
    hp_write_metadata(s, "sample_provider_cuda", "cupti_pm_sampling");
    hp_write_metadata(s, "cuda_pm_interval_ns", v);
  }
  if (g_pc && g_period_log2) {
    char v[32];
    snprintf(v, sizeof v, "%llu", 1ull << g_period_log2);
    hp_write_metadata(s, "cuda_pc_period_cycles", v);
  }
  hpc_store_leave(s);
}

/* A forked child has none of CUPTI's threads: it samples nothing and never calls CUPTI. */
void hpc_cuda_why_fork_child(void) {
  g_pc = g_pm = 0;
  pthread_mutex_init(&g_lock, NULL);
  pthread_mutex_init(&g_wlock, NULL);
  g_nctx = 0;
  memset(g_dev_pm, 0, sizeof g_dev_pm);
}
