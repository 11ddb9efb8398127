/* The OpenCL runtime provider (provider.h): the intercepted OpenCL calls, one body shared by the ICD layer
 * and the LD_PRELOAD shim (`n` is the table to forward to), and the provider's answers to the core (kernel
 * names, event times at harvest; its devices: prov_opencl_device.c). The dispatch fast path calls the core
 * directly (ring, lookup tables): it takes no lock, allocates nothing and makes no system call in steady
 * state; every wrapper returns exactly what the runtime returned, with errno untouched.
 * Sections: fast path · dispatches · sync points · queues · kernels · the provider's answers. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"
#include "replay.h"
#include "env.h"
#include "hubprof/hub.h"
#include "stamp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Atomic int hpc_layer_active;
const cl_icd_dispatch *_Atomic hpc_layer_next;

#ifdef HUBPROF_COLLECTOR_NOOP /* the overhead floor: every wrapper forwards */
static inline int tracing(void) { return 0; }
static inline int active(void) { return 0; }
static inline int profiling(void) { return 0; }
static inline int profiling_on(void) { return 0; }
#else
/* Tracing this call? Enabled, no replay context owns the dispatch, not nested inside the collector. */
static inline int tracing(void) {
  int e = atomic_load_explicit(&hpc_enabled, memory_order_relaxed);
  if (HPC_UNLIKELY(e == 0)) e = hpc_init_slow();
  return e == 1 && !atomic_load_explicit(&hpc_replay_active, memory_order_relaxed) && !hpc_busy &&
         !atomic_load_explicit(&hpc_paused, memory_order_relaxed);
}

/* Harvest points and registrations run when tracing is on, even while a replay context is active. */
static inline int active(void) {
  int e = atomic_load_explicit(&hpc_enabled, memory_order_relaxed);
  if (HPC_UNLIKELY(e == 0)) e = hpc_init_slow();
  return e >= 1 && !hpc_busy;
}

/* Profile mode (whoever calls). */
static inline int profiling_on(void) {
  return atomic_load_explicit(&hpc_enabled, memory_order_relaxed) == HPC_PROFILING;
}

/* Profile mode, and this call is the application's own (not one the collector makes while replaying). */
static inline int profiling(void) {
  return atomic_load_explicit(&hpc_enabled, memory_order_relaxed) == HPC_PROFILING && !hpc_busy &&
         !atomic_load_explicit(&hpc_paused, memory_order_relaxed);
}

#endif

static inline uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* HUBPROF_BENCH_SPIN=N (`make bench-check SPIN=N`, docs/development.md "The release guard"): a deliberate
 * slowdown of N pause instructions on every dispatch the collector records or replays, to show the guard
 * catching it. Off by default: without the define this is empty and costs nothing. */
static inline __attribute__((always_inline)) void bench_spin(void) {
#ifdef HUBPROF_BENCH_SPIN
  for (int i = 0; i < HUBPROF_BENCH_SPIN; i++) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
  }
#endif
}

/* Put one enqueued dispatch in the thread's ring (hpc_busy is set). Inlined into its two callers: no call,
 * no saved registers on the enqueue path. */
static inline __attribute__((always_inline)) void record(const cl_icd_dispatch *n, hpc_thread *t, cl_event ev,
                                                         cl_command_queue q, cl_kernel k, cl_uint dim,
                                                         const size_t *global, const size_t *local,
                                                         int64_t enq) {
  bench_spin();
  uint64_t h = atomic_load_explicit(&t->lr.head, memory_order_relaxed);
  if (HPC_UNLIKELY(h - atomic_load_explicit(&t->lr.tail, memory_order_acquire) > t->mask) &&
      hpc_ring_full(t) != 0) {
    n->clReleaseEvent(ev);
    hpc_count_lost(1);
    return;
  }
  uint64_t kv = hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, (uintptr_t)k);
  uint32_t kid = (uint32_t)kv;
  if (HPC_UNLIKELY(!kid)) kid = hpc_cl_kernel_slow(n, k), kv = HPC_KFIRST; /* new, or in the overflow */
  uint64_t qa = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, (uintptr_t)q);
  if (HPC_UNLIKELY(!qa)) qa = hpc_cl_queue_slow(n, q);
  hpc_pending *p = &t->ring[h & t->mask];
  p->ev = ev;
  if (HPC_UNLIKELY(t->id_next == t->id_end)) {
    t->id_next = atomic_fetch_add_explicit(&hpc_next_dispatch, HPC_ID_BLOCK, memory_order_relaxed) + 1;
    t->id_end = t->id_next + HPC_ID_BLOCK;
  }
  p->dispatch_id = t->id_next++;
  p->kernel_id = kid;
  p->keep = HPC_UNLIKELY(kv >> 32) ? hpc_kernel_first(kid, (uintptr_t)k) : 0; /* its kernel's first: cold */
  p->queue_id = (uint32_t)(qa >> 32);
  p->agent_id = (uint32_t)qa;
  if (HPC_LIKELY(dim == 1 && global)) { /* the common case, without the loop's per-dimension tests */
    p->grid[0] = clamp32(global[0]);
    p->grid[1] = p->grid[2] = 1;
    p->wg[0] = local ? clamp32(local[0]) : 0;
    p->wg[1] = p->wg[2] = local ? 1 : 0;
  } else {
    for (cl_uint d = 0; d < 3; d++) {
      p->grid[d] = d < dim && global ? clamp32(global[d]) : 1;
      p->wg[d] = !local ? 0 : d < dim ? clamp32(local[d]) : 1;
    }
  }
  p->enqueue_ns = enq;
  p->region_id = hpc_region_cur;
  atomic_store_explicit(&t->lr.head, h + 1, memory_order_release);
  /* The exit handler may have harvested this ring already: it sets hpc_enabled, then membarrier() orders
   * every thread (at_exit), so either it saw the entry above or this load sees it exiting. */
  atomic_signal_fence(memory_order_seq_cst);
  if (HPC_UNLIKELY(atomic_load_explicit(&hpc_enabled, memory_order_relaxed) != HPC_TRACING)) hpc_exit_race(t);
  hpc_harvester_check_enqueue(t,
                              enq); /* HUBPROF_HARVESTER=auto, one thread: a thread gained, a harvest due */
}

/* The dispatch was forwarded without being recorded: after the exit handler ran, it is counted as lost. */
static inline void unrecorded(cl_int rc) {
#ifndef HUBPROF_COLLECTOR_NOOP
  if (HPC_UNLIKELY(atomic_load_explicit(&hpc_enabled, memory_order_relaxed) == HPC_EXITING) &&
      rc == CL_SUCCESS && !hpc_busy)
    hpc_unrecorded();
#else
  (void)rc;
#endif
}

cl_int hpc_EnqueueNDRangeKernel(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k, cl_uint dim,
                                const size_t *offset, const size_t *global, const size_t *local,
                                cl_uint nwait, const cl_event *wait, cl_event *ev) {
  if (!tracing()) {
    if (HPC_UNLIKELY(profiling()) && hpc_selected(n, k)) {
      bench_spin();
      return hpc_replay_dispatch(n, q, k, dim, offset, global, local, nwait, wait, ev, 0);
    }
    cl_int rc = n->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, ev);
    unrecorded(rc);
    return rc;
  }
  hpc_thread *t = hpc_tls;
  if (HPC_UNLIKELY(!hpc_selected(n, k)) || (HPC_UNLIKELY(!t) && !(t = hpc_cl_thread_attach(n)))) {
    cl_int rc = n->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, ev);
    unrecorded(rc);
    return rc;
  }
  hpc_busy = 1;
  cl_event mine = NULL, *evp = ev ? ev : &mine;
  int64_t enq = hpc_stamp(); /* TSC ticks or ns: converted at harvest (stamp.h) */
  cl_int rc = n->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, evp);
  int *err = t->err, saved = *err;
  if (HPC_LIKELY(rc == CL_SUCCESS && *evp)) {
    if (ev) n->clRetainEvent(*ev); /* the app keeps its own reference; ours goes at harvest */
    record(n, t, *evp, q, k, dim > 3 ? 3 : dim, global, local, enq);
  }
  hpc_busy = 0;
  *err = saved;
  return rc;
}

cl_int hpc_EnqueueTask(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k, cl_uint nwait,
                       const cl_event *wait, cl_event *ev) {
  if (!tracing()) {
    static const size_t one[1] = {1};
    if (HPC_UNLIKELY(profiling()) && hpc_selected(n, k)) {
      bench_spin();
      return hpc_replay_dispatch(n, q, k, 1, NULL, one, one, nwait, wait, ev, 1);
    }
    cl_int rc = n->clEnqueueTask(q, k, nwait, wait, ev);
    unrecorded(rc);
    return rc;
  }
  hpc_thread *t = hpc_tls;
  if (HPC_UNLIKELY(!hpc_selected(n, k)) || (HPC_UNLIKELY(!t) && !(t = hpc_cl_thread_attach(n)))) {
    cl_int rc = n->clEnqueueTask(q, k, nwait, wait, ev);
    unrecorded(rc);
    return rc;
  }
  hpc_busy = 1;
  cl_event mine = NULL, *evp = ev ? ev : &mine;
  int64_t enq = hpc_stamp(); /* TSC ticks or ns: converted at harvest (stamp.h) */
  cl_int rc = n->clEnqueueTask(q, k, nwait, wait, evp);
  int *err = t->err, saved = *err;
  if (rc == CL_SUCCESS && *evp) {
    if (ev) n->clRetainEvent(*ev);
    static const size_t one[1] = {1};
    record(n, t, *evp, q, k, 1, one, one, enq); /* a task is one work-item in a work-group of one */
  }
  hpc_busy = 0;
  *err = saved;
  return rc;
}

cl_int hpc_Finish(const cl_icd_dispatch *n, cl_command_queue q) {
  cl_int rc = n->clFinish(q);
  if (active()) hpc_harvest_sync(); /* every thread's ring; preserves errno */
  return rc;
}

cl_int hpc_WaitForEvents(const cl_icd_dispatch *n, cl_uint num, const cl_event *list) {
  cl_int rc = n->clWaitForEvents(num, list);
  if (active()) hpc_harvest_sync();
  return rc;
}

cl_int hpc_ReleaseCommandQueue(const cl_icd_dispatch *n, cl_command_queue q) {
  if (active()) hpc_harvest_sync();
  return n->clReleaseCommandQueue(q);
}

/* ---- queues: profiling forced on, registered with their device ---- */
/* The end of both queue creations (not a dispatch path): the runtime's status handed on, the queue
 * registered, errno as the runtime left it. */
static cl_command_queue queue_made(const cl_icd_dispatch *n, cl_command_queue q, cl_device_id d, cl_int e,
                                   cl_int *err) {
  int saved = errno;
  if (err) *err = e;
  if (q) {
    hpc_busy = 1;
    hpc_queue_created(&hpc_opencl, n, (uintptr_t)q, (uintptr_t)d);
    hpc_busy = 0;
  }
  errno = saved;
  return q;
}

cl_command_queue hpc_CreateCommandQueue(const cl_icd_dispatch *n, cl_context c, cl_device_id d,
                                        cl_command_queue_properties p, cl_int *err) {
  if (!active()) return n->clCreateCommandQueue(c, d, p, err);
  cl_int e = CL_SUCCESS;
  cl_command_queue q = n->clCreateCommandQueue(c, d, p | CL_QUEUE_PROFILING_ENABLE, &e);
  if (!q && !(p & CL_QUEUE_PROFILING_ENABLE)) q = n->clCreateCommandQueue(c, d, p, &e); /* as the app asked */
  return queue_made(n, q, d, e, err);
}

cl_command_queue hpc_CreateCommandQueueWithProperties(const cl_icd_dispatch *n, cl_context c, cl_device_id d,
                                                      const cl_queue_properties *p, cl_int *err) {
  if (!active()) return n->clCreateCommandQueueWithProperties(c, d, p, err);
  /* copy the list with CL_QUEUE_PROFILING_ENABLE added to CL_QUEUE_PROPERTIES (or appended) */
  cl_queue_properties mine[64];
  size_t m = 0;
  int found = 0, fits = 1;
  for (size_t i = 0; p && p[i]; i += 2) {
    if (m + 4 >= sizeof mine / sizeof mine[0]) {
      fits = 0;
      break;
    }
    mine[m++] = p[i];
    mine[m++] = p[i + 1];
    if (p[i] == CL_QUEUE_PROPERTIES) {
      mine[m - 1] |= CL_QUEUE_PROFILING_ENABLE;
      found = 1;
    }
  }
  if (!found && fits) {
    mine[m++] = CL_QUEUE_PROPERTIES;
    mine[m++] = CL_QUEUE_PROFILING_ENABLE;
  }
  mine[m] = 0;
  cl_int e = CL_SUCCESS;
  cl_command_queue q = NULL;
  if (fits) q = n->clCreateCommandQueueWithProperties(c, d, mine, &e);
  if (!q) q = n->clCreateCommandQueueWithProperties(c, d, p, &e); /* as the app asked */
  return queue_made(n, q, d, e, err);
}

/* ---- kernels: registered by name when created ---- */
cl_kernel hpc_CreateKernel(const cl_icd_dispatch *n, cl_program p, const char *name, cl_int *err) {
  cl_kernel k = n->clCreateKernel(p, name, err);
  if (k && active()) {
    int saved = errno;
    hpc_busy = 1;
    hpc_kernel_created(&hpc_opencl, n, (uintptr_t)k);
    if (profiling_on()) hpc_replay_kernel_new(n, k, NULL);
    hpc_busy = 0;
    errno = saved;
  }
  return k;
}

cl_int hpc_CreateKernelsInProgram(const cl_icd_dispatch *n, cl_program p, cl_uint num, cl_kernel *k,
                                  cl_uint *num_ret) {
  cl_uint got = 0;
  cl_int rc = n->clCreateKernelsInProgram(p, num, k, num_ret ? num_ret : &got);
  if (num_ret) got = *num_ret;
  if (rc == CL_SUCCESS && k && active()) {
    int saved = errno;
    hpc_busy = 1;
    for (cl_uint i = 0; i < got && i < num; i++) {
      hpc_kernel_created(&hpc_opencl, n, (uintptr_t)k[i]);
      if (profiling_on()) hpc_replay_kernel_new(n, k[i], NULL);
    }
    hpc_busy = 0;
    errno = saved;
  }
  return rc;
}

cl_kernel hpc_CloneKernel(const cl_icd_dispatch *n, cl_kernel src, cl_int *err) {
  cl_kernel k = n->clCloneKernel(src, err);
  if (k && active()) {
    int saved = errno;
    hpc_busy = 1;
    hpc_kernel_created(&hpc_opencl, n, (uintptr_t)k);
    if (profiling_on()) hpc_replay_kernel_new(n, k, src);
    hpc_busy = 0;
    errno = saved;
  }
  return k;
}

/* ---- the provider's answers to the core (provider.h; slow paths and harvest only) ---------------------- */
__attribute__((noinline)) uint32_t hpc_cl_kernel_slow(const cl_icd_dispatch *n, cl_kernel k) {
  return hpc_kernel_slow(&hpc_opencl, n, (uintptr_t)k);
}
__attribute__((noinline)) uint64_t hpc_cl_queue_slow(const cl_icd_dispatch *n, cl_command_queue q) {
  return hpc_queue_slow(&hpc_opencl, n, (uintptr_t)q);
}
__attribute__((noinline)) int hpc_select_dispatch(const cl_icd_dispatch *n, cl_kernel k) {
  return hpc_select_kernel(&hpc_opencl, n, (uintptr_t)k);
}
__attribute__((noinline)) hpc_thread *hpc_cl_thread_attach(const cl_icd_dispatch *n) {
  return hpc_thread_attach(&hpc_opencl, n);
}

static const hpc_env *g_env; /* the collector's configuration (init) */
/* A profile of CUDA counters (HUBPROF_PROVIDER=cupti): OpenCL's kernel replay stays off. */
static int hpc_ocl_cupti(const hpc_env *e) { return e->provider && !strcmp(e->provider, "cupti"); }

static int ocl_init(void *h, const hpc_env *e, const char **why) {
  g_env = e;
  hpc_cl_code = e->code;
  hpc_api_enable(e->api);               /* --api: the layer's table gets its wrappers (prov_opencl_api.c) */
  if (e->profile && hpc_ocl_cupti(e)) { /* CUDA counters (prov_cuda_range.c): OpenCL kernels run unprofiled */
    atomic_store(&hpc_rp.off, 1);
    return 0;
  }
  return e->profile ? hpc_replay_init(e, why) : 0;
}

static const char *ocl_attached(void *h) {
  return atomic_load(&hpc_layer_active) ? "OpenCL layer" : "LD_PRELOAD";
}

static void ocl_log_opened(void *h, hp_store *s) {
  if (g_env && g_env->profile && !hpc_ocl_cupti(g_env)) hpc_replay_log_opened(s);
}

/* CL_KERNEL_FUNCTION_NAME; NULL when the runtime does not answer, "" when it fails the second time. */
static char *ocl_kernel_name(void *h, const void *rt, uintptr_t k, char *buf, size_t size) {
  const cl_icd_dispatch *n = rt;
  char *name = buf;
  size_t len = 0;
  if (n->clGetKernelInfo((cl_kernel)k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &len) != CL_SUCCESS) return NULL;
  if (len >= size && !(name = malloc(len + 1))) return NULL;
  if (n->clGetKernelInfo((cl_kernel)k, CL_KERNEL_FUNCTION_NAME, len, name, NULL) != CL_SUCCESS) len = 0;
  name[len] = 0;
  return name;
}

/* Its program's code object (prov_opencl_codeobj.c). */
static uint64_t ocl_kernel_code_object(void *h, const void *rt, uintptr_t k) {
  const cl_icd_dispatch *n = rt;
  cl_program prog = NULL;
  return n->clGetKernelInfo((cl_kernel)k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL) == CL_SUCCESS
             ? hpc_program_code_object(prog)
             : 0;
}

/* Its program's identity (prov_opencl_codeobj.c). */
static int ocl_kernel_program(void *h, const void *rt, uintptr_t k, char id[HPC_PROGRAM_ID]) {
  const cl_icd_dispatch *n = rt;
  cl_program prog = NULL;
  return n->clGetKernelInfo((cl_kernel)k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL) == CL_SUCCESS &&
         hpc_program_identity(prog, id);
}

static uintptr_t ocl_queue_device(void *h, const void *rt, uintptr_t q) {
  const cl_icd_dispatch *n = rt;
  cl_device_id d = NULL;
  if (n->clGetCommandQueueInfo((cl_command_queue)q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) != CL_SUCCESS)
    return 0;
  return (uintptr_t)d;
}

/* The device start and end of a completed command: 1 with both set, else 0 (profiling times exist only once
 * the command is complete: CL_PROFILING_INFO_NOT_AVAILABLE before). */
static inline int event_times(const cl_icd_dispatch *n, cl_event ev, cl_ulong *start, cl_ulong *end) {
  *start = *end = 0;
  if (n->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL) != CL_SUCCESS || !*end)
    return 0;
  if (n->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof *start, start, NULL) != CL_SUCCESS) {
    *start = *end = 0;
    return 0;
  }
  return 1;
}

/* Harvest: a dispatch that has its end time is done and costs the runtime no status query; without device
 * times it is complete (a queue without profiling), failed or pending. */
static void ocl_poll(void *h, const void *rt, hpc_pending *ring, uint64_t mask, uint64_t from, size_t count,
                     int want_start, hpc_poll *out) {
  const cl_icd_dispatch *n = rt;
  for (size_t j = 0; j < count; j++) {
    cl_event ev = ring[(from + j) & mask].ev;
    cl_ulong start = 0, end = 0;
    hpc_poll *o = &out[j];
    if (event_times(n, ev, &start, &end)) {
      n->clReleaseEvent(ev);
      *o = (hpc_poll){(int64_t)start, (int64_t)end, HPC_POLL_DONE};
      continue;
    }
    cl_int st = CL_QUEUED;
    if (n->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS) st = -1;
    if (st == CL_COMPLETE || st < 0) {
      /* it may have completed between the two queries (the harvester polls running work): ask again */
      if (st < 0 || !event_times(n, ev, &start, &end)) start = end = 0;
      n->clReleaseEvent(ev);
      *o = (hpc_poll){(int64_t)start, (int64_t)end, HPC_POLL_DONE};
      continue;
    }
    *o = (hpc_poll){0, 0, HPC_POLL_PENDING};
    if (st == CL_RUNNING &&
        want_start) { /* PoCL gives no start until the end: 0, the core uses the enqueue */
      o->state = HPC_POLL_RUNNING;
      if (n->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
          CL_SUCCESS)
        o->start_ns = (int64_t)start;
    }
  }
}

static void ocl_release(void *h, const void *rt, void *ev) {
  ((const cl_icd_dispatch *)rt)->clReleaseEvent((cl_event)ev);
}

static void ocl_flush(void *h, hp_store *s) { hpc_api_exit(s); } /* copies still waiting for device times */

static void ocl_fork_child(void *h) {
  if (g_env && g_env->profile && !hpc_ocl_cupti(g_env)) hpc_replay_fork_child();
}

static uint64_t ocl_exit(void *h, int debug) {
  if (!g_env || !g_env->profile || hpc_ocl_cupti(g_env)) return 0;
  hpc_replay_exit(debug);
  return hpc_replay_written();
}

hpc_provider hpc_opencl = {.name = "opencl",
                           .h = NULL,
                           .init = ocl_init,
                           .attached = ocl_attached,
                           .log_opened = ocl_log_opened,
                           .agent_describe = hpc_cl_agent_describe,
                           .kernel_name = ocl_kernel_name,
                           .kernel_code_object = ocl_kernel_code_object,
                           .queue_device = ocl_queue_device,
                           .poll = ocl_poll,
                           .release = ocl_release,
                           .flush = ocl_flush,
                           .fork_child = ocl_fork_child,
                           .exit = ocl_exit,
                           .kernel_program = ocl_kernel_program};
