/* The collector's shared core, as its files and its runtime providers (provider.h) see it: the collector's
 * state, the lock-free lookup tables, the per-thread rings of pending dispatches, the registries and the log.
 * Nothing here knows a runtime (OpenCL's part is prov_opencl.h). Nothing on the dispatch path may block,
 * allocate or change what the app sees. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_H
#define HUBPROF_COLLECTOR_H

#include "fmt_log.h" /* the launch file's ring header and entry (hp_launch_ring) */
#include "provider.h"

#include <stdatomic.h>
#include <stdint.h>

#define HPC_HIDDEN __attribute__((visibility("hidden")))
#define HPC_EXPORT __attribute__((visibility("default")))
#define HPC_LIKELY(x) __builtin_expect(!!(x), 1)
#define HPC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- state of the whole collector ------------------------------------------------------------------ */
/* hpc_enabled: 0 = not decided yet (first call decides), 1 = tracing, 2 = profiling (HUBPROF_MODE=profile:
 * dispatches go to the provider's replay, prov_opencl_replay.c), 3 = the exit handler ran (dispatches are
 * forwarded and each written as a LOST record), -1 = disabled (forward only). The trace fast path tests == 1.
 */
extern _Atomic int hpc_enabled HPC_HIDDEN;
/* Replay guard for the counter modes: while non-zero, a replay context owns the dispatches and the lite-trace
 * fast path steps aside (forwards without taking anything). Set with hubprof_collector_replay_enter/leave. */
extern _Atomic int hpc_replay_active HPC_HIDDEN;
#define HPC_TRACING 1
#define HPC_PROFILING 2
#define HPC_EXITING 3
/* Decide on the first call whether to trace (reads the environment). Returns hpc_enabled afterwards. */
HPC_HIDDEN int hpc_init_slow(void);

/* Replay-guard hooks (for the counter modes; documented in docs/collector.md). Nestable. */
HPC_HIDDEN void hubprof_collector_replay_enter(void);
HPC_HIDDEN void hubprof_collector_replay_leave(void);

/* Helpers the core offers providers: the log for writing (NULL when there is none; bracket every use),
 * one line on stderr. */
HPC_HIDDEN struct hp_store *hpc_store_enter(void);
HPC_HIDDEN void hpc_store_leave(struct hp_store *s);
HPC_HIDDEN void hpc_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- lock-free lookup tables: object pointer -> ids, filled at create time, read per dispatch ---------- */
/* Open addressing, linear probing, keys never removed (a re-created object at the same address overwrites
 * its value). A reader that finds no key or a 0 value takes the slow path, which fills the slot. */
typedef struct hpc_slot {
  _Atomic uintptr_t key; /* the runtime's kernel / queue object (cl_kernel, cl_command_queue), 0 = empty */
  _Atomic uint64_t val;  /* its ids, 0 = not filled yet */
} hpc_slot;

#define HPC_KTAB_BITS 14 /* kernels: 16384 slots */
#define HPC_QTAB_BITS 12 /* queues: 4096 slots */
#define HPC_PROBES 32    /* slots tried before giving up (the slow path then answers each time) */
extern hpc_slot hpc_ktab[1u << HPC_KTAB_BITS] HPC_HIDDEN;
extern hpc_slot hpc_qtab[1u << HPC_QTAB_BITS] HPC_HIDDEN;

static inline size_t hpc_hash(uintptr_t key, unsigned bits) {
  return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static inline uint64_t hpc_tab_get(const hpc_slot *tab, unsigned bits, uintptr_t key) {
  size_t mask = ((size_t)1 << bits) - 1, i = hpc_hash(key, bits);
  for (unsigned p = 0; p < HPC_PROBES; p++, i = (i + 1) & mask) {
    uintptr_t k = atomic_load_explicit(&tab[i].key, memory_order_acquire);
    if (k == key) return atomic_load_explicit(&tab[i].val, memory_order_acquire);
    if (!k) return 0;
  }
  return 0;
}

/* Insert or overwrite; returns 0 when the probe window is full (the key then stays slow). */
HPC_HIDDEN int hpc_tab_put(hpc_slot *tab, unsigned bits, uintptr_t key, uint64_t val);

/* ---- per-thread state: the ring of dispatches enqueued but not harvested yet ----------------------- */
typedef struct hpc_pending {
  void *ev;             /* the provider's completion handle (OpenCL: our reference to the event) */
  uint64_t dispatch_id; /* the collector's id, also the row id */
  uint32_t kernel_id;   /* kernel_symbol row id */
  uint32_t queue_id;    /* queue row id */
  uint32_t agent_id;    /* agent row id */
  uint32_t keep;    /* bit 0: harvest scratch (1 = still pending); bit 1 (HPC_COLD): the enqueue found it its
                       kernel's first dispatch in the process (hp_dispatch.cold) */
  uint32_t grid[3]; /* global work size per dimension */
  uint32_t wg[3];   /* local work size, 0 when the runtime chooses */
  int64_t enqueue_ns; /* host stamp just before the enqueue call (stamp.h: ns at harvest) */
  uint64_t region_id; /* innermost region open on the thread at the enqueue (hpc_region_cur), 0 none */
} hpc_pending;

typedef struct hpc_thread {
  /* The ring's header in the run's launch file (src/hub/fmt_log.h): head (next slot to fill, written by the
   * owner only), tail (oldest pending slot, written under `lock`), the ring's geometry and calibration. The
   * whole struct lives in the header's page, so a killed process leaves its pending dispatches on record. */
  hp_launch_ring lr;
  hpc_pending *ring;            /* `cap` entries (the file's, after the header page; reused) */
  uint64_t mask;                /* cap - 1 */
  _Atomic int lock;             /* 1 while someone harvests this ring (owner, thread exit or process exit) */
  _Atomic int in_use;           /* 1 while a live thread owns it; 0: free for the next new thread */
  _Atomic int64_t harvested_ns; /* end of its last harvest (the background harvester skips it when recent) */
  _Atomic int64_t due;          /* HUBPROF_HARVESTER=auto with one thread: the stamp (stamp.h) after which its
                                   next enqueue harvests the ring itself (one HUBPROF_HARVEST_MS after the last) */
  uint64_t id_next, id_end;     /* dispatch ids taken from hpc_next_dispatch in blocks of HPC_ID_BLOCK */
  uint64_t thread_id;           /* thread row id */
  int64_t tid;                  /* kernel thread id */
  int64_t start_ns;             /* when the thread attached */
  const hpc_provider *prov;     /* the provider whose dispatches the ring holds (poll, release) */
  const void *rt;               /* its runtime context (OpenCL: the table its events were made with) */
  int *err;                     /* the owning thread's errno (&errno: no libc call on the enqueue path) */
  struct hpc_thread *all;       /* list of every ring of this process */
} hpc_thread;
_Static_assert(sizeof(hpc_thread) <= HP_LAUNCH_PAGE, "a ring's state fits its header page");
/* hpc_pending is the launch file's entry (fmt_log.h), field for field */
_Static_assert(sizeof(hpc_pending) == HP_LAUNCH_ENTRY &&
                   offsetof(hpc_pending, dispatch_id) == HP_LAUNCH_E_DISPATCH &&
                   offsetof(hpc_pending, kernel_id) == HP_LAUNCH_E_KERNEL &&
                   offsetof(hpc_pending, queue_id) == HP_LAUNCH_E_QUEUE &&
                   offsetof(hpc_pending, agent_id) == HP_LAUNCH_E_AGENT &&
                   offsetof(hpc_pending, keep) == HP_LAUNCH_E_FLAGS &&
                   offsetof(hpc_pending, grid) == HP_LAUNCH_E_GRID &&
                   offsetof(hpc_pending, wg) == HP_LAUNCH_E_WG &&
                   offsetof(hpc_pending, enqueue_ns) == HP_LAUNCH_E_ENQUEUE &&
                   offsetof(hpc_pending, region_id) == HP_LAUNCH_E_REGION,
               "hpc_pending is the launch file's entry");

/* The calling thread's state (NULL until its first dispatch) and the recursion guard (1 while the thread
 * is inside the collector: nested runtime calls made by the runtime then go straight through). */
extern __thread hpc_thread *hpc_tls HPC_HIDDEN __attribute__((tls_model("initial-exec")));
extern __thread int hpc_busy HPC_HIDDEN __attribute__((tls_model("initial-exec")));

/* Slow paths of the dispatch fast path. */
/* `pv` and `rt`: the provider the objects come from and its runtime context (the questions of provider.h
 * are asked through them); keys are the runtime's object pointers. */
HPC_HIDDEN hpc_thread *hpc_thread_attach(const hpc_provider *pv,
                                         const void *rt); /* a thread's first dispatch */
/* hpc_pending.keep: a kernel's first dispatch */
#define HPC_COLD 2u
/* In a kernel's hpc_ktab value: no dispatch of that kernel seen yet */
#define HPC_KFIRST ((uint64_t)1 << 32)
/* The enqueue of kernel handle k (id kid) whose table value carried HPC_KFIRST, or that took the slow path:
 * HPC_COLD when this is the kernel's first dispatch in the process (one enqueue wins), else 0; the handle's
 * value loses the flag, so the next enqueue of it costs nothing. */
HPC_HIDDEN uint32_t hpc_kernel_first(uint32_t kid, uintptr_t k);
HPC_HIDDEN uint32_t hpc_kernel_slow(const hpc_provider *pv, const void *rt,
                                    uintptr_t k); /* register, its id */
HPC_HIDDEN uint64_t hpc_queue_slow(const hpc_provider *pv, const void *rt, uintptr_t q); /* qid<<32 | agent */
/* The agent row of device d, registered at need. */
HPC_HIDDEN uint32_t hpc_agent_of(const hpc_provider *pv, const void *rt, uintptr_t d);
/* Agent row `id`'s name, product name and device index (0, or -1 when there is no such row). */
HPC_HIDDEN int hpc_agent_names(uint32_t id, char *name, size_t nn, char *product, size_t pn, int32_t *index);
/* The ring is full: harvest what completed; when too little did, write the oldest without device times.
 * Returns 0 when there is room now, -1 when the ring is held by an exiting process (drop the dispatch). */
HPC_HIDDEN int hpc_ring_full(hpc_thread *t);
/* A sync point (clFinish, clWaitForEvents, clReleaseCommandQueue) on any thread: harvest the completed
 * dispatches of every thread's ring (never waits for the device; waits briefly for a ring another thread
 * is harvesting) and commit. */
HPC_HIDDEN void hpc_harvest_sync(void);
/* HUBPROF_HARVESTER=auto while the background harvester waits for a reason to start (a process with one
 * thread, every queue on a device that runs commands on the enqueuing thread): 1, and the enqueue path then
 * starts it once the process has gained a thread (glibc's __libc_single_threaded, one byte). Starting the
 * thread earlier would end glibc's single-thread fast paths in the runtime's own locks and allocations
 * (~130-250 ns per dispatch on PoCL's basic device; docs/collector.md "What the harvester costs"). */
extern _Atomic int hpc_harv_watch HPC_HIDDEN;
HPC_HIDDEN void hpc_harvester_late(void);
#if defined(__has_include) && __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HPC_SINGLE_THREADED() (__libc_single_threaded != 0)
#else
/* unknown: the harvester starts with the log, as with HUBPROF_HARVESTER=thread */
#define HPC_SINGLE_THREADED() 0
#endif
static inline void hpc_harvester_check(void) {
  if (__builtin_expect(atomic_load_explicit(&hpc_harv_watch, memory_order_relaxed), 0) &&
      !HPC_SINGLE_THREADED())
    hpc_harvester_late();
}
/* The enqueue path's check (stamp: this dispatch's enqueue stamp): while the harvester waits, the one thread
 * harvests its own ring when HUBPROF_HARVEST_MS has passed since the last harvest, so a loop without sync
 * points keeps no more than that pending. */
HPC_HIDDEN void hpc_harvest_due(hpc_thread *t);
static inline void hpc_harvester_check_enqueue(hpc_thread *t, int64_t stamp) {
  if (__builtin_expect(atomic_load_explicit(&hpc_harv_watch, memory_order_relaxed), 0)) {
    if (!HPC_SINGLE_THREADED())
      hpc_harvester_late();
    else if (__builtin_expect(stamp >= atomic_load_explicit(&t->due, memory_order_relaxed), 0))
      hpc_harvest_due(t);
  }
}
/* A dispatch the application made that the collector does not record (the exit handler ran, or no ring):
 * written at once as a LOST record of one. Preserves errno. */
HPC_HIDDEN void hpc_unrecorded(void);
/* The exit handler started while this thread was inside an enqueue (record() saw it after publishing the
 * entry): write its ring now (what is pending without device times). */
HPC_HIDDEN void hpc_exit_race(hpc_thread *t);
/* The process's exit code as given to exit/_exit (proc_exit.c), -1 until one is; the process row carries it.
 */
extern _Atomic int64_t hpc_exit_code HPC_HIDDEN;
/* What exit() does for the log, for an _exit(): nothing when another thread holds the collector's lock. */
HPC_HIDDEN void hpc_exit_close(void);
/* Register objects created through an intercepted call (slow path, may lock). */
HPC_HIDDEN void hpc_kernel_created(const hpc_provider *pv, const void *rt, uintptr_t k);
HPC_HIDDEN void hpc_queue_created(const hpc_provider *pv, const void *rt, uintptr_t q, uintptr_t d);
/* A dispatch could not be recorded (counted and reported as lost). */
HPC_HIDDEN void hpc_count_lost(uint64_t n);
/* Process-wide dispatch id counter; threads take ids in blocks so that they do not contend per dispatch
 * (ids stay unique in the process and increase along each thread). */
extern _Atomic uint64_t hpc_next_dispatch HPC_HIDDEN;
#define HPC_ID_BLOCK 64

/* ---- regions, markers, start/stop (regions.c, nvtx.c) ------------------------------------------------ */
/* 1 while collection is paused (hubprof_stop, HUBPROF_START_PAUSED): dispatches are forwarded untouched. */
extern _Atomic int hpc_paused HPC_HIDDEN;
/* The calling thread's thread row id, 0 until its first dispatch or region (shared so both use one row). */
extern __thread uint64_t hpc_thread_row HPC_HIDDEN __attribute__((tls_model("initial-exec")));
/* Row id of the calling thread's innermost open region (regions.c), 0 when none: each dispatch records it. */
extern __thread uint64_t hpc_region_cur HPC_HIDDEN __attribute__((tls_model("initial-exec")));
/* A new thread row id (g_lock). */
HPC_HIDDEN uint64_t hpc_thread_id_new(void);
/* The log for a writer that may be the first (regions): opened at need; bracket with hpc_store_leave. */
HPC_HIDDEN struct hp_store *hpc_store_enter_open(void);
/* The calling thread's row (its name from pthread_getname_np): end 0 while it runs. */
HPC_HIDDEN void hpc_write_thread_row(struct hp_store *s, uint64_t id, int64_t tid, int64_t start,
                                     int64_t end);
/* Exit handler: close every region still open (recorded as such) into s at time end_ns. */
HPC_HIDDEN void hpc_regions_exit(struct hp_store *s, int64_t end_ns);
/* Init: apply HUBPROF_START_PAUSED. */
HPC_HIDDEN void hpc_regions_init(int start_paused);

#endif
