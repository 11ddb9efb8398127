/* Host API calls and memory copies (hubprof trace|profile|sample --api): when asked, the ICD layer's table
 * gets a wrapper per OpenCL call that times the call (a region of category "api") and, for transfer
 * commands, records a memory_copy row with the event's device times. Without --api nothing here is installed:
 * the layer's table is the one it always was, so the lite trace pays nothing for this file. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"
#include "hubprof/hub.h"
#include "regions.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char hpc_api_cat[] = "api";

static int g_api;                     /* HUBPROF_API=1 (set once at init) */
static cl_icd_dispatch g_in;          /* what the layer called before the wrappers went in */
static const cl_icd_dispatch *g_next; /* the runtime (or the next layer), for our own queries */
static _Atomic uint64_t g_copy_ids;   /* memory_copy row ids */

void hpc_api_enable(int on) { g_api = on; }

static inline int64_t now_ns(void) { return hpc_region_now(); }

/* Record this call? Collection on and not paused, and not a call the collector itself makes. */
static inline int recording(void) {
  return !hpc_busy && atomic_load_explicit(&hpc_enabled, memory_order_relaxed) >= HPC_TRACING &&
         atomic_load_explicit(&hpc_enabled, memory_order_relaxed) <= HPC_PROFILING &&
         !atomic_load_explicit(&hpc_paused, memory_order_relaxed);
}

/* One finished call: its region on the calling thread (errno kept), with its host part when regions have
 * counters (profile --api with counters: `host` read before the call). */
static void call_done(const char *name, size_t len, int64_t t0, int host_ok, const double *host) {
  int saved = errno;
  if (HPC_UNLIKELY(host_ok))
    hpc_region_write_host(hpc_api_cat, name, len, t0, now_ns(), host);
  else
    hpc_region_write(hpc_api_cat, name, len, t0, now_ns());
  errno = saved;
}

/* ---- memory copies: pending per thread until their event completes ------------------------------------- */
#define CS_PENDING 256 /* transfer commands of a thread waiting for their device times */

typedef struct pcopy {
  cl_event ev; /* our reference */
  hp_memory_copy row;
} pcopy;

typedef struct cstate {
  _Atomic int lock;   /* 1 while its owner or the exit handler drains it */
  _Atomic int in_use; /* 0: its thread ended, free for a new one */
  int n;
  struct cstate *all;
  pcopy p[CS_PENDING];
} cstate;

static __thread cstate *t_cs __attribute__((tls_model("initial-exec")));
static pthread_mutex_t g_cslock = PTHREAD_MUTEX_INITIALIZER; /* the list (slow paths only) */
static cstate *g_cs;
static pthread_key_t g_cskey;
static pthread_once_t g_csonce = PTHREAD_ONCE_INIT;
static int g_cskey_ok;

/* Write pending copy i of cs (its device times when the command completed) and drop our event. */
static void emit(hp_store *s, pcopy *c) {
  cl_int st = CL_QUEUED;
  cl_ulong a = 0, b = 0;
  if (g_next->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
      st == CL_COMPLETE &&
      g_next->clGetEventProfilingInfo(c->ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) == CL_SUCCESS &&
      g_next->clGetEventProfilingInfo(c->ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) == CL_SUCCESS) {
    c->row.start_ns = (int64_t)a;
    c->row.end_ns = (int64_t)b;
  }
  g_next->clReleaseEvent(c->ev);
  if (s) hp_write_memory_copy(s, &c->row);
}

static int complete(cl_event ev) {
  cl_int st = CL_QUEUED;
  return g_next->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
         st <= CL_COMPLETE; /* complete, or failed (negative): nothing more will come */
}

/* Write the completed copies of cs (all of them with `all`, the oldest when it is full); cs->lock held. */
static void drain(hp_store *s, cstate *cs, int all) {
  int k = 0;
  for (int i = 0; i < cs->n; i++) {
    if (all || complete(cs->p[i].ev) || (i == 0 && cs->n == CS_PENDING))
      emit(s, &cs->p[i]);
    else
      cs->p[k++] = cs->p[i];
  }
  cs->n = k;
}

static void cs_thread_end(void *arg) {
  cstate *cs = arg;
  int saved = errno;
  if (cs && !atomic_exchange(&cs->lock, 1)) {
    hp_store *s = hpc_store_enter();
    drain(s, cs, 1);
    hpc_store_leave(s);
    atomic_store(&cs->lock, 0);
    atomic_store(&cs->in_use, 0);
  }
  t_cs = NULL;
  errno = saved;
}

static pthread_mutex_t g_maplock = PTHREAD_MUTEX_INITIALIZER; /* mapped pointers (below) */

static void cs_fork_child(void) {
  pthread_mutex_init(&g_cslock, NULL);
  pthread_mutex_init(&g_maplock, NULL); /* another thread may have held it at the fork */
  for (cstate *cs = g_cs; cs; cs = cs->all) {
    cs->n = 0; /* the parent's events: the parent writes them */
    atomic_store(&cs->lock, 0);
    if (cs != t_cs) atomic_store(&cs->in_use, 0);
  }
}

static void cs_once(void) {
  g_cskey_ok = pthread_key_create(&g_cskey, cs_thread_end) == 0;
  pthread_atfork(NULL, NULL, cs_fork_child);
}

static cstate *cs_slow(void) {
  pthread_once(&g_csonce, cs_once);
  if (!g_cskey_ok) return NULL;
  cstate *cs = NULL;
  pthread_mutex_lock(&g_cslock);
  for (cstate *x = g_cs; x; x = x->all)
    if (!atomic_load(&x->in_use) && !atomic_load(&x->lock)) {
      cs = x;
      break;
    }
  if (!cs && (cs = calloc(1, sizeof *cs)) != NULL) {
    cs->all = g_cs;
    g_cs = cs;
  }
  if (cs) {
    atomic_store(&cs->in_use, 1);
    cs->n = 0;
  }
  pthread_mutex_unlock(&g_cslock);
  if (!cs) return NULL;
  pthread_setspecific(g_cskey, cs);
  t_cs = cs;
  return cs;
}

/* The calling thread's completed copies, written (after clFinish, clWaitForEvents, and each transfer). */
static void drain_mine(void) {
  cstate *cs = t_cs;
  if (!cs || !cs->n || atomic_exchange_explicit(&cs->lock, 1, memory_order_acquire)) return;
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1;
  hp_store *s = hpc_store_enter_open();
  drain(s, cs, 0);
  hpc_store_leave(s);
  hpc_busy = busy;
  atomic_store_explicit(&cs->lock, 0, memory_order_release);
  errno = saved;
}

/* A transfer command was enqueued (rc, and its event in *evp; `app_ev`: the application asked for it and
 * keeps its own reference): its API region, and its memory_copy row now or once the event completes. */
static void copy_done(const char *name, size_t len, int64_t t0, int host_ok, const double *host,
                      cl_command_queue q, uint32_t dir, uint64_t bytes, cl_int rc, cl_event *evp,
                      int app_ev) {
  call_done(name, len, t0, host_ok, host);
  if (rc != CL_SUCCESS || !*evp) return;
  int saved = errno;
  hpc_busy = 1;
  uint64_t qa = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, (uintptr_t)q);
  if (!qa) qa = hpc_queue_slow(&hpc_opencl, g_next, (uintptr_t)q);
  pcopy c = {.ev = *evp,
             .row = {.size = sizeof(hp_memory_copy),
                     .id = atomic_fetch_add_explicit(&g_copy_ids, 1, memory_order_relaxed) + 1,
                     .process_id = 1,
                     .thread_id = hpc_region_thread(),
                     .agent_id = (uint32_t)qa,
                     .queue_id = qa >> 32,
                     .name = name,
                     .direction = dir,
                     .bytes = bytes,
                     .enqueue_ns = t0,
                     .region_id = hpc_region_cur}};
  if (app_ev) g_next->clRetainEvent(*evp); /* the application releases its own; ours goes at emit */
  cstate *cs = t_cs;
  if (!cs) cs = cs_slow();
  if (cs && !atomic_exchange_explicit(&cs->lock, 1, memory_order_acquire)) {
    hp_store *s = hpc_store_enter_open();
    if (complete(c.ev)) { /* a blocking transfer: written now */
      emit(s, &c);
    } else {
      if (cs->n == CS_PENDING) drain(s, cs, 0); /* full: completed ones go, else the oldest without times */
      cs->p[cs->n++] = c;
    }
    if (cs->n) drain(s, cs, 0);
    hpc_store_leave(s);
    atomic_store_explicit(&cs->lock, 0, memory_order_release);
  } else {
    hp_store *s = hpc_store_enter_open();
    emit(s, &c); /* no state (out of memory) or closed by the exit handler: written at once */
    hpc_store_leave(s);
  }
  hpc_busy = 0;
  errno = saved;
}

void hpc_api_exit(hp_store *s) {
  pthread_mutex_lock(&g_cslock);
  cstate *list = g_cs;
  pthread_mutex_unlock(&g_cslock);
  for (cstate *cs = list; cs; cs = cs->all) {
    int expect = 0;
    if (!atomic_load(&cs->in_use) || !atomic_compare_exchange_strong(&cs->lock, &expect, 1)) continue;
    drain(s, cs, 1); /* stays locked: the thread's later copies are written at once */
  }
}

/* ---- what a transfer moves ------------------------------------------------------------------------------
 */
static uint64_t region_bytes(const size_t *r) { return r ? (uint64_t)r[0] * r[1] * r[2] : 0; }

static uint64_t image_bytes(cl_mem img, const size_t *r) {
  size_t el = 0;
  if (g_next->clGetImageInfo &&
      g_next->clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof el, &el, NULL) != CL_SUCCESS)
    el = 0;
  return region_bytes(r) * el;
}

/* Mapped pointers and their sizes, so that an unmap knows what it writes back (--api only). */
#define MAPS 1024
static struct {
  void *p;
  uint64_t bytes;
} g_maps[MAPS];

static void map_put(void *p, uint64_t bytes) {
  if (!p) return;
  pthread_mutex_lock(&g_maplock);
  for (size_t i = 0; i < MAPS; i++)
    if (!g_maps[i].p || g_maps[i].p == p) {
      g_maps[i].p = p;
      g_maps[i].bytes = bytes;
      break;
    }
  pthread_mutex_unlock(&g_maplock);
}

static uint64_t map_take(void *p) {
  uint64_t b = 0;
  pthread_mutex_lock(&g_maplock);
  for (size_t i = 0; i < MAPS && p; i++)
    if (g_maps[i].p == p) {
      b = g_maps[i].bytes;
      g_maps[i].p = NULL;
      break;
    }
  pthread_mutex_unlock(&g_maplock);
  return b;
}

/* ---- the wrappers -----------------------------------------------------------------------------------------
 */
#define NAME(f) #f, sizeof #f - 1
/* a call timed as a region */
#define CALL(T, f, args)                                                                                     \
  if (HPC_UNLIKELY(!recording())) return g_in.f args;                                                        \
  double host[HPC_REGION_HOST_MAX];                                                                          \
  int host_ok = hpc_region_host_begin(host);                                                                 \
  int64_t t0 = now_ns();                                                                                     \
  T rc = g_in.f args;                                                                                        \
  call_done(NAME(f), t0, host_ok, host);                                                                     \
  return rc
/* a call after which completed copies are written */
#define SYNC_CALL(f, args)                                                                                   \
  if (HPC_UNLIKELY(!recording())) return g_in.f args;                                                        \
  double host[HPC_REGION_HOST_MAX];                                                                          \
  int host_ok = hpc_region_host_begin(host);                                                                 \
  int64_t t0 = now_ns();                                                                                     \
  cl_int rc = g_in.f args;                                                                                   \
  call_done(NAME(f), t0, host_ok, host);                                                                     \
  drain_mine();                                                                                              \
  return rc
/* a transfer command returning cl_int; `args` name the event pointer `evp` */
#define COPY(f, dir, bytes, args)                                                                            \
  cl_event mine = NULL, *evp = ev;                                                                           \
  if (HPC_UNLIKELY(!recording())) return g_in.f args;                                                        \
  if (!evp) evp = &mine;                                                                                     \
  double host[HPC_REGION_HOST_MAX];                                                                          \
  int host_ok = hpc_region_host_begin(host);                                                                 \
  int64_t t0 = now_ns();                                                                                     \
  cl_int rc = g_in.f args;                                                                                   \
  copy_done(NAME(f), t0, host_ok, host, q, dir, bytes, rc, evp, ev != NULL);                                 \
  return rc

static cl_int CL_API_CALL A_clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *r) {
  CALL(cl_int, clGetPlatformIDs, (n, p, r));
}
static cl_int CL_API_CALL A_clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d,
                                           cl_uint *r) {
  CALL(cl_int, clGetDeviceIDs, (p, t, n, d, r));
}
static cl_context CL_API_CALL
A_clCreateContext(const cl_context_properties *p, cl_uint n, const cl_device_id *d,
                  void(CL_CALLBACK *f)(const char *, const void *, size_t, void *), void *u, cl_int *e) {
  CALL(cl_context, clCreateContext, (p, n, d, f, u, e));
}
static cl_int CL_API_CALL A_clReleaseContext(cl_context c) { CALL(cl_int, clReleaseContext, (c)); }
static cl_command_queue CL_API_CALL A_clCreateCommandQueue(cl_context c, cl_device_id d,
                                                           cl_command_queue_properties p, cl_int *e) {
  CALL(cl_command_queue, clCreateCommandQueue, (c, d, p, e));
}
static cl_command_queue CL_API_CALL A_clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
                                                                         const cl_queue_properties *p,
                                                                         cl_int *e) {
  CALL(cl_command_queue, clCreateCommandQueueWithProperties, (c, d, p, e));
}
static cl_int CL_API_CALL A_clReleaseCommandQueue(cl_command_queue q) {
  drain_mine();
  CALL(cl_int, clReleaseCommandQueue, (q));
}
static cl_mem CL_API_CALL A_clCreateBuffer(cl_context c, cl_mem_flags f, size_t n, void *h, cl_int *e) {
  CALL(cl_mem, clCreateBuffer, (c, f, n, h, e));
}
static cl_int CL_API_CALL A_clReleaseMemObject(cl_mem m) { CALL(cl_int, clReleaseMemObject, (m)); }
static cl_program CL_API_CALL A_clCreateProgramWithSource(cl_context c, cl_uint n, const char **s,
                                                          const size_t *l, cl_int *e) {
  CALL(cl_program, clCreateProgramWithSource, (c, n, s, l, e));
}
static cl_int CL_API_CALL A_clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
                                           void(CL_CALLBACK *f)(cl_program, void *), void *u) {
  CALL(cl_int, clBuildProgram, (p, n, d, o, f, u));
}
static cl_int CL_API_CALL A_clReleaseProgram(cl_program p) { CALL(cl_int, clReleaseProgram, (p)); }
static cl_kernel CL_API_CALL A_clCreateKernel(cl_program p, const char *name, cl_int *e) {
  CALL(cl_kernel, clCreateKernel, (p, name, e));
}
static cl_int CL_API_CALL A_clSetKernelArg(cl_kernel k, cl_uint i, size_t n, const void *v) {
  CALL(cl_int, clSetKernelArg, (k, i, n, v));
}
static cl_int CL_API_CALL A_clReleaseKernel(cl_kernel k) { CALL(cl_int, clReleaseKernel, (k)); }
static cl_int CL_API_CALL A_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                   const size_t *o, const size_t *g, const size_t *l,
                                                   cl_uint nw, const cl_event *w, cl_event *ev) {
  CALL(cl_int, clEnqueueNDRangeKernel, (q, k, dim, o, g, l, nw, w, ev));
}
static cl_int CL_API_CALL A_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *w,
                                          cl_event *ev) {
  CALL(cl_int, clEnqueueTask, (q, k, nw, w, ev));
}
static cl_int CL_API_CALL A_clFlush(cl_command_queue q) { CALL(cl_int, clFlush, (q)); }
static cl_int CL_API_CALL A_clFinish(cl_command_queue q) { SYNC_CALL(clFinish, (q)); }
static cl_int CL_API_CALL A_clWaitForEvents(cl_uint n, const cl_event *l) {
  SYNC_CALL(clWaitForEvents, (n, l));
}
static cl_int CL_API_CALL A_clReleaseEvent(cl_event e) { CALL(cl_int, clReleaseEvent, (e)); }

/* transfers */
static cl_int CL_API_CALL A_clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                                                size_t n, void *p, cl_uint nw, const cl_event *w,
                                                cl_event *ev) {
  COPY(clEnqueueReadBuffer, HP_COPY_D2H, n, (q, b, blk, off, n, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                                                 size_t n, const void *p, cl_uint nw, const cl_event *w,
                                                 cl_event *ev) {
  COPY(clEnqueueWriteBuffer, HP_COPY_H2D, n, (q, b, blk, off, n, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof,
                                                size_t n, cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueCopyBuffer, HP_COPY_D2D, n, (q, s, d, so, dof, n, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blk,
                                                    const size_t *bo, const size_t *ho, const size_t *r,
                                                    size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p,
                                                    cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueReadBufferRect, HP_COPY_D2H, region_bytes(r),
       (q, b, blk, bo, ho, r, brp, bsp, hrp, hsp, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blk,
                                                     const size_t *bo, const size_t *ho, const size_t *r,
                                                     size_t brp, size_t bsp, size_t hrp, size_t hsp,
                                                     const void *p, cl_uint nw, const cl_event *w,
                                                     cl_event *ev) {
  COPY(clEnqueueWriteBufferRect, HP_COPY_H2D, region_bytes(r),
       (q, b, blk, bo, ho, r, brp, bsp, hrp, hsp, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem s, cl_mem d, const size_t *so,
                                                    const size_t *dof, const size_t *r, size_t srp,
                                                    size_t ssp, size_t drp, size_t dsp, cl_uint nw,
                                                    const cl_event *w, cl_event *ev) {
  COPY(clEnqueueCopyBufferRect, HP_COPY_D2D, region_bytes(r),
       (q, s, d, so, dof, r, srp, ssp, drp, dsp, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat, size_t ps,
                                                size_t off, size_t n, cl_uint nw, const cl_event *w,
                                                cl_event *ev) {
  COPY(clEnqueueFillBuffer, HP_COPY_FILL, n, (q, b, pat, ps, off, n, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueReadImage(cl_command_queue q, cl_mem im, cl_bool blk, const size_t *o,
                                               const size_t *r, size_t rp, size_t sp, void *p, cl_uint nw,
                                               const cl_event *w, cl_event *ev) {
  COPY(clEnqueueReadImage, HP_COPY_D2H, image_bytes(im, r), (q, im, blk, o, r, rp, sp, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueWriteImage(cl_command_queue q, cl_mem im, cl_bool blk, const size_t *o,
                                                const size_t *r, size_t rp, size_t sp, const void *p,
                                                cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueWriteImage, HP_COPY_H2D, image_bytes(im, r), (q, im, blk, o, r, rp, sp, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueCopyImage(cl_command_queue q, cl_mem s, cl_mem d, const size_t *so,
                                               const size_t *dof, const size_t *r, cl_uint nw,
                                               const cl_event *w, cl_event *ev) {
  COPY(clEnqueueCopyImage, HP_COPY_D2D, image_bytes(s, r), (q, s, d, so, dof, r, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueFillImage(cl_command_queue q, cl_mem im, const void *c, const size_t *o,
                                               const size_t *r, cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueFillImage, HP_COPY_FILL, image_bytes(im, r), (q, im, c, o, r, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem s, cl_mem d,
                                                       const size_t *so, const size_t *r, size_t dof,
                                                       cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueCopyImageToBuffer, HP_COPY_D2D, image_bytes(s, r), (q, s, d, so, r, dof, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem s, cl_mem d, size_t so,
                                                       const size_t *dof, const size_t *r, cl_uint nw,
                                                       const cl_event *w, cl_event *ev) {
  COPY(clEnqueueCopyBufferToImage, HP_COPY_D2D, image_bytes(d, r), (q, s, d, so, dof, r, nw, w, evp));
}
static void *CL_API_CALL A_clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk, cl_map_flags f,
                                              size_t off, size_t n, cl_uint nw, const cl_event *w,
                                              cl_event *ev, cl_int *e) {
  cl_event mine = NULL, *evp = ev;
  if (HPC_UNLIKELY(!recording())) return g_in.clEnqueueMapBuffer(q, b, blk, f, off, n, nw, w, ev, e);
  if (!evp) evp = &mine;
  cl_int rc = CL_SUCCESS;
  double host[HPC_REGION_HOST_MAX];
  int host_ok = hpc_region_host_begin(host);
  int64_t t0 = now_ns();
  void *p = g_in.clEnqueueMapBuffer(q, b, blk, f, off, n, nw, w, evp, &rc);
  int saved = errno;
  if (e) *e = rc;
  map_put(p, n);
  errno = saved;
  copy_done(NAME(clEnqueueMapBuffer), t0, host_ok, host, q, HP_COPY_D2H, n, p ? rc : CL_OUT_OF_RESOURCES, evp,
            ev != NULL);
  return p;
}
static void *CL_API_CALL A_clEnqueueMapImage(cl_command_queue q, cl_mem im, cl_bool blk, cl_map_flags f,
                                             const size_t *o, const size_t *r, size_t *rp, size_t *sp,
                                             cl_uint nw, const cl_event *w, cl_event *ev, cl_int *e) {
  cl_event mine = NULL, *evp = ev;
  if (HPC_UNLIKELY(!recording())) return g_in.clEnqueueMapImage(q, im, blk, f, o, r, rp, sp, nw, w, ev, e);
  if (!evp) evp = &mine;
  cl_int rc = CL_SUCCESS;
  double host[HPC_REGION_HOST_MAX];
  int host_ok = hpc_region_host_begin(host);
  int64_t t0 = now_ns();
  void *p = g_in.clEnqueueMapImage(q, im, blk, f, o, r, rp, sp, nw, w, evp, &rc);
  int saved = errno;
  if (e) *e = rc;
  uint64_t n = image_bytes(im, r);
  map_put(p, n);
  errno = saved;
  copy_done(NAME(clEnqueueMapImage), t0, host_ok, host, q, HP_COPY_D2H, n, p ? rc : CL_OUT_OF_RESOURCES, evp,
            ev != NULL);
  return p;
}
static cl_int CL_API_CALL A_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint nw,
                                                    const cl_event *w, cl_event *ev) {
  COPY(clEnqueueUnmapMemObject, HP_COPY_H2D, map_take(p), (q, m, p, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blk, void *d, const void *s,
                                               size_t n, cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueSVMMemcpy, HP_COPY_D2D, n, (q, blk, d, s, n, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueSVMMemFill(cl_command_queue q, void *d, const void *pat, size_t ps,
                                                size_t n, cl_uint nw, const cl_event *w, cl_event *ev) {
  COPY(clEnqueueSVMMemFill, HP_COPY_FILL, n, (q, d, pat, ps, n, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueSVMMap(cl_command_queue q, cl_bool blk, cl_map_flags f, void *p,
                                            size_t n, cl_uint nw, const cl_event *w, cl_event *ev) {
  if (recording()) map_put(p, n);
  COPY(clEnqueueSVMMap, HP_COPY_D2H, n, (q, blk, f, p, n, nw, w, evp));
}
static cl_int CL_API_CALL A_clEnqueueSVMUnmap(cl_command_queue q, void *p, cl_uint nw, const cl_event *w,
                                              cl_event *ev) {
  COPY(clEnqueueSVMUnmap, HP_COPY_H2D, map_take(p), (q, p, nw, w, evp));
}

void hpc_api_install(cl_icd_dispatch *ours, const cl_icd_dispatch *target, size_t nent) {
  if (!g_api) return;
  g_in = *ours;
  g_next = target;
#define API(f)                                                                                               \
  if (offsetof(cl_icd_dispatch, f) / sizeof(void *) < nent && g_in.f) ours->f = A_##f
  API(clGetPlatformIDs);
  API(clGetDeviceIDs);
  API(clCreateContext);
  API(clReleaseContext);
  API(clCreateCommandQueue);
  API(clCreateCommandQueueWithProperties);
  API(clReleaseCommandQueue);
  API(clCreateBuffer);
  API(clReleaseMemObject);
  API(clCreateProgramWithSource);
  API(clBuildProgram);
  API(clReleaseProgram);
  API(clCreateKernel);
  API(clSetKernelArg);
  API(clReleaseKernel);
  API(clEnqueueNDRangeKernel);
  API(clEnqueueTask);
  API(clFlush);
  API(clFinish);
  API(clWaitForEvents);
  API(clReleaseEvent);
  API(clEnqueueReadBuffer);
  API(clEnqueueWriteBuffer);
  API(clEnqueueCopyBuffer);
  API(clEnqueueReadBufferRect);
  API(clEnqueueWriteBufferRect);
  API(clEnqueueCopyBufferRect);
  API(clEnqueueFillBuffer);
  API(clEnqueueReadImage);
  API(clEnqueueWriteImage);
  API(clEnqueueCopyImage);
  API(clEnqueueFillImage);
  API(clEnqueueCopyImageToBuffer);
  API(clEnqueueCopyBufferToImage);
  API(clEnqueueMapBuffer);
  API(clEnqueueMapImage);
  API(clEnqueueUnmapMemObject);
  API(clEnqueueSVMMemcpy);
  API(clEnqueueSVMMemFill);
  API(clEnqueueSVMMap);
  API(clEnqueueSVMUnmap);
#undef API
}
