/* Kernel replay (HUBPROF_MODE=profile): tracks the buffers a kernel can write (cl_mem objects, sub-buffers,
 * SVM allocations, kernel arguments) and runs each dispatch once per counter pass, saving what it can write
 * before pass 1 and restoring what changed before every later pass, so the application sees one execution.
 * Iteration multiplexing (HUBPROF_MULTIPLEX) runs each dispatch once instead, measuring one pass that rotates
 * over the dispatches of a kernel or launch. It may block (both are synchronous by nature) but must never
 * crash the host or change what it computes: on a failure it says so in one line and forwards from then on.
 * Sections: state · tracking (buffers, SVM, kernels) · intercepted calls · shadow storage · ranges ·
 * multiplexing keys · the replay of one dispatch · log rows · init, fork, exit. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"
#include "replay.h"
#include "sample.h"
#include "counters.h"
#include "env.h"
#include "fmt_log.h"
#include "hubprof/hub.h"
#include "wtrack.h"
#include "regions.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- state ------------------------------------------------------------------------------------------- */
/* The plan, its passes and sessions, the keys and the counter modes' settings: hpc_rp (replay.c). */
static pthread_mutex_t r_tlock = PTHREAD_MUTEX_INITIALIZER; /* the tracking tables */
static pthread_mutex_t r_dlock = PTHREAD_MUTEX_INITIALIZER; /* one dispatch replays at a time */
static int r_warned_unsaved, r_warned_user, r_warned_save, r_warned_drain; /* one line each (under r_dlock) */
/* HUBPROF_TEST_ALL_THREADS=1 (test and benchmark hook): count every thread also on a device that runs the
 * kernel on the launching thread, as before (tests/replay/test_caller_only.sh shows the difference). */
static int r_all_threads;

/* What the HUBPROF_DEBUG summary and the benchmarks report (replay.h; under r_dlock). */
static hpc_rp_stats *const r_st = &hpc_rp.st;

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* The stages' times that only the HUBPROF_DEBUG summary reports are taken only then: a clock read costs
 * ~85 ns on a VM, and a 3-pass dispatch took ~18 of them (docs/replay.md "Fixed cost per pass"). */
static inline int64_t stage_ns(void) { return hpc_rp.timed ? now_ns() : 0; }

/* Kernel replay and the application's own call (not one made while replaying): buffers and arguments are
 * tracked. Iteration multiplexing runs every dispatch once, so it saves nothing and tracks nothing. */
static inline int profiling(void) {
  return atomic_load_explicit(&hpc_enabled, memory_order_relaxed) == HPC_PROFILING && !hpc_busy &&
         !hpc_rp.mux;
}

/* ---- tracking: buffers, SVM allocations, kernels (r_tlock) --------------------------------------------- */
#define NBUCKETS 4096
static inline size_t bucket(const void *p) { return hpc_hash((uintptr_t)p, 12); }

typedef struct mem_rec {
  struct mem_rec *next;
  cl_mem m;
  cl_mem root; /* the buffer that owns the memory (m itself, or a sub-buffer's parent) */
  cl_context ctx;
  size_t off; /* offset of m in root */
  size_t size;
  cl_mem_flags flags; /* access flags, a sub-buffer's inherited from its parent */
  char *host;         /* a root's host address where the device keeps it in host memory (write tracking) */
  int host_state;     /* 0: not asked yet, 1: host known, -1: none */
} mem_rec;
static mem_rec *r_mems[NBUCKETS];

static mem_rec *mem_find(cl_mem m) {
  for (mem_rec *r = r_mems[bucket(m)]; r; r = r->next)
    if (r->m == m) return r;
  return NULL;
}

static void mem_add(cl_mem m, cl_mem root, cl_context ctx, size_t off, size_t size, cl_mem_flags flags) {
  pthread_mutex_lock(&r_tlock);
  mem_rec *r = mem_find(m);
  if (!r && (r = calloc(1, sizeof *r)) != NULL) {
    r->m = m;
    r->next = r_mems[bucket(m)];
    r_mems[bucket(m)] = r;
  }
  if (r) {
    r->host = NULL;
    r->host_state = 0;
    r->root = root;
    r->ctx = ctx;
    r->off = off;
    r->size = size;
    r->flags = flags;
  }
  pthread_mutex_unlock(&r_tlock);
}

static void mem_del(cl_mem m) {
  pthread_mutex_lock(&r_tlock);
  for (mem_rec **pp = &r_mems[bucket(m)]; *pp; pp = &(*pp)->next)
    if ((*pp)->m == m) {
      mem_rec *r = *pp;
      *pp = r->next;
      free(r);
      break;
    }
  pthread_mutex_unlock(&r_tlock);
}

typedef struct svm_rec {
  char *p;
  size_t size;
  cl_context ctx;
} svm_rec;
static svm_rec *r_svm;
static size_t r_nsvm, r_capsvm;

/* The SVM allocation holding p, or NULL (r_tlock held). */
static svm_rec *svm_find(const void *p) {
  for (size_t i = 0; i < r_nsvm; i++)
    if ((const char *)p >= r_svm[i].p && (const char *)p < r_svm[i].p + r_svm[i].size) return &r_svm[i];
  return NULL;
}

static void svm_forget(const char *p, size_t size) { /* r_tlock held: drop records overlapping [p, p+size) */
  for (size_t i = 0; i < r_nsvm;)
    if (r_svm[i].p < p + size && p < r_svm[i].p + r_svm[i].size)
      r_svm[i] = r_svm[--r_nsvm];
    else
      i++;
}

/* ARG_OPAQUE: a value the size of a cl_mem that is no buffer seen created (an image, a pipe, an interop
 * buffer, a sampler — or a 64-bit scalar): memory the kernel may write that is not saved. */
enum { ARG_NONE = 0, ARG_MEM = 1, ARG_SVM = 2, ARG_OPAQUE = 3 };
typedef struct karg {
  unsigned char kind; /* ARG_* */
  unsigned char ro;   /* 1: the kernel cannot write through it (__constant, const-qualified) */
  const void *p;      /* the cl_mem, or the SVM pointer */
} karg;

typedef struct kern_rec {
  struct kern_rec *next;
  cl_kernel k;
  karg *args;
  size_t nargs, cap;
  void **exec; /* SVM pointers named with clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS) */
  size_t nexec;
  int info;               /* 0: argument qualifiers not asked yet, 1: asked */
  unsigned char *ro_info; /* per argument, from clGetKernelArgInfo: 1 = read-only */
  size_t nro;
} kern_rec;
static kern_rec *r_kerns[NBUCKETS];

static kern_rec *kern_find(cl_kernel k, int create) {
  for (kern_rec *r = r_kerns[bucket(k)]; r; r = r->next)
    if (r->k == k) return r;
  if (!create) return NULL;
  kern_rec *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->k = k;
  r->next = r_kerns[bucket(k)];
  r_kerns[bucket(k)] = r;
  return r;
}

static void kern_clear(kern_rec *r) {
  free(r->args);
  free(r->exec);
  free(r->ro_info);
  r->args = NULL;
  r->exec = NULL;
  r->ro_info = NULL;
  r->nargs = r->cap = r->nexec = r->nro = 0;
  r->info = 0;
}

static void kern_del(cl_kernel k) {
  pthread_mutex_lock(&r_tlock);
  for (kern_rec **pp = &r_kerns[bucket(k)]; *pp; pp = &(*pp)->next)
    if ((*pp)->k == k) {
      kern_rec *r = *pp;
      *pp = r->next;
      kern_clear(r);
      free(r);
      break;
    }
  pthread_mutex_unlock(&r_tlock);
}

static void kern_set(cl_kernel k, cl_uint i, int kind, const void *p) {
  pthread_mutex_lock(&r_tlock);
  kern_rec *r = kern_find(k, 1);
  if (r && i >= r->cap) {
    size_t cap = r->cap ? r->cap : 8;
    while (cap <= i)
      cap *= 2;
    karg *a = realloc(r->args, cap * sizeof *a);
    if (a) {
      memset(a + r->cap, 0, (cap - r->cap) * sizeof *a);
      r->args = a;
      r->cap = cap;
    }
  }
  if (r && i < r->cap) {
    r->args[i].kind = (unsigned char)kind;
    r->args[i].p = p;
    if (i >= r->nargs) r->nargs = i + 1;
  }
  pthread_mutex_unlock(&r_tlock);
}

void hpc_replay_kernel_new(const cl_icd_dispatch *n, cl_kernel k, cl_kernel src) {
  (void)n;
  if (hpc_rp.mux) return; /* multiplexing tracks no arguments */
  pthread_mutex_lock(&r_tlock);
  kern_rec *r = kern_find(k, 1); /* a kernel at the address of a released one starts empty */
  if (r) kern_clear(r);
  kern_rec *s = src ? kern_find(src, 0) : NULL;
  if (r && s && s->nargs && (r->args = malloc(s->nargs * sizeof *r->args)) != NULL) {
    memcpy(r->args, s->args, s->nargs * sizeof *r->args); /* clCloneKernel copies the argument values */
    r->nargs = r->cap = s->nargs;
    if (s->nexec && (r->exec = malloc(s->nexec * sizeof *r->exec)) != NULL) {
      memcpy(r->exec, s->exec, s->nexec * sizeof *r->exec);
      r->nexec = s->nexec;
    }
  }
  pthread_mutex_unlock(&r_tlock);
}

/* Ask the runtime once per kernel which arguments it cannot write (r_tlock held). Without the information
 * every buffer argument counts as writable. */
static void kern_info(const cl_icd_dispatch *n, kern_rec *r) {
  r->info = 1;
  cl_uint nargs = 0;
  if (!n->clGetKernelInfo || !n->clGetKernelArgInfo ||
      n->clGetKernelInfo(r->k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) != CL_SUCCESS || !nargs)
    return;
  unsigned char *ro = calloc(nargs, 1);
  if (!ro) return;
  for (cl_uint i = 0; i < nargs; i++) {
    cl_kernel_arg_address_qualifier aq = 0;
    cl_kernel_arg_type_qualifier tq = 0;
    if (n->clGetKernelArgInfo(r->k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL) != CL_SUCCESS) {
      free(ro); /* no argument information (built without -cl-kernel-arg-info): assume writable */
      return;
    }
    if (n->clGetKernelArgInfo(r->k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL) != CL_SUCCESS)
      tq = 0;
    ro[i] = aq == CL_KERNEL_ARG_ADDRESS_CONSTANT || (tq & CL_KERNEL_ARG_TYPE_CONST);
  }
  r->ro_info = ro;
  r->nro = nargs;
}

/* ---- intercepted calls (profile mode only; otherwise they forward untouched) --------------------------- */
static cl_mem_flags access_flags(cl_mem_flags f) {
  return f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY |
              CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_USE_HOST_PTR); /* (write tracking) */
}

cl_mem hpc_CreateBuffer(const cl_icd_dispatch *n, cl_context c, cl_mem_flags f, size_t size, void *host,
                        cl_int *err) {
  cl_mem m = n->clCreateBuffer(c, f, size, host, err);
  if (m && profiling()) {
    int saved = errno;
    mem_add(m, m, c, 0, size, access_flags(f));
    errno = saved;
  }
  return m;
}

cl_mem hpc_CreateBufferWithProperties(const cl_icd_dispatch *n, cl_context c, const cl_mem_properties *props,
                                      cl_mem_flags f, size_t size, void *host, cl_int *err) {
  cl_mem m = n->clCreateBufferWithProperties(c, props, f, size, host, err);
  if (m && profiling()) {
    int saved = errno;
    mem_add(m, m, c, 0, size, access_flags(f));
    errno = saved;
  }
  return m;
}

cl_mem hpc_CreateSubBuffer(const cl_icd_dispatch *n, cl_mem parent, cl_mem_flags f, cl_buffer_create_type t,
                           const void *info, cl_int *err) {
  cl_mem m = n->clCreateSubBuffer(parent, f, t, info, err);
  if (m && profiling() && t == CL_BUFFER_CREATE_TYPE_REGION && info) {
    int saved = errno;
    const cl_buffer_region *reg = info;
    pthread_mutex_lock(&r_tlock);
    mem_rec *p = mem_find(parent);
    mem_rec pr = p ? *p : (mem_rec){0};
    pthread_mutex_unlock(&r_tlock);
    if (p) { /* a sub-buffer aliases its parent's memory: it is saved as a range of the root buffer */
      cl_mem_flags dev = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
      cl_mem_flags hst = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
      cl_mem_flags fl = access_flags(f);
      if (!(fl & dev)) fl |= pr.flags & dev;
      if (!(fl & hst)) fl |= pr.flags & hst;
      mem_add(m, pr.root, pr.ctx, pr.off + reg->origin, reg->size, fl);
    }
    errno = saved;
  }
  return m;
}

/* A root buffer's host memory (write tracking), leaving it writable: the application gets it (a map) or
 * the runtime may free it (a release). */
static void wt_disarm_mem(cl_mem m) {
  pthread_mutex_lock(&r_tlock);
  mem_rec *r = mem_find(m), *root = r ? mem_find(r->root) : NULL;
  char *host = root && root->host_state == 1 ? root->host : NULL;
  size_t size = root ? root->size : 0;
  pthread_mutex_unlock(&r_tlock);
  if (host) hpc_wt_disarm(host, size);
}

void *hpc_EnqueueMapBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b, cl_bool blk,
                           cl_map_flags f, size_t off, size_t size, cl_uint nw, const cl_event *w,
                           cl_event *ev, cl_int *e) {
  if (b) {
    int saved = errno;
    hpc_wt_guard();
    wt_disarm_mem(b);
    errno = saved;
  }
  return n->clEnqueueMapBuffer(q, b, blk, f, off, size, nw, w, ev, e);
}

cl_int hpc_EnqueueWriteBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b, cl_bool blk, size_t off,
                              size_t size, const void *p, cl_uint nw, const cl_event *w, cl_event *ev) {
  int saved = errno;
  hpc_wt_guard();
  errno = saved;
  return n->clEnqueueWriteBuffer(q, b, blk, off, size, p, nw, w, ev);
}

cl_int hpc_EnqueueCopyBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem src, cl_mem dst, size_t so,
                             size_t dof, size_t size, cl_uint nw, const cl_event *w, cl_event *ev) {
  int saved = errno;
  hpc_wt_guard();
  errno = saved;
  return n->clEnqueueCopyBuffer(q, src, dst, so, dof, size, nw, w, ev);
}

cl_int hpc_EnqueueFillBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b, const void *pat,
                             size_t psize, size_t off, size_t size, cl_uint nw, const cl_event *w,
                             cl_event *ev) {
  int saved = errno;
  hpc_wt_guard();
  errno = saved;
  return n->clEnqueueFillBuffer(q, b, pat, psize, off, size, nw, w, ev);
}

cl_int hpc_ReleaseMemObject(const cl_icd_dispatch *n, cl_mem m) {
  if (m) { /* every release: the runtime may free the memory once its own references go */
    int saved = errno;
    wt_disarm_mem(m);
    errno = saved;
  }
  if (m && profiling()) {
    int saved = errno;
    cl_uint refs = 0;
    if (n->clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL) == CL_SUCCESS && refs <= 1)
      mem_del(m);
    errno = saved;
  }
  return n->clReleaseMemObject(m);
}

cl_int hpc_ReleaseKernel(const cl_icd_dispatch *n, cl_kernel k) {
  if (k && profiling()) {
    int saved = errno;
    cl_uint refs = 0;
    if (n->clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL) == CL_SUCCESS && refs <= 1)
      kern_del(k);
    errno = saved;
  }
  return n->clReleaseKernel(k);
}

cl_int hpc_SetKernelArg(const cl_icd_dispatch *n, cl_kernel k, cl_uint i, size_t size, const void *v) {
  cl_int rc = n->clSetKernelArg(k, i, size, v);
  if (rc == CL_SUCCESS && profiling()) {
    int saved = errno;
    cl_mem m = NULL;
    if (size == sizeof(cl_mem) && v) memcpy(&m, v, sizeof m);
    pthread_mutex_lock(&r_tlock);
    int known = m && mem_find(m) != NULL; /* a buffer we saw created (samplers, scalars and others are not) */
    pthread_mutex_unlock(&r_tlock);
    kern_set(k, i, known ? ARG_MEM : m ? ARG_OPAQUE : ARG_NONE, known ? (const void *)m : NULL);
    errno = saved;
  }
  return rc;
}

cl_int hpc_SetKernelArgSVMPointer(const cl_icd_dispatch *n, cl_kernel k, cl_uint i, const void *p) {
  cl_int rc = n->clSetKernelArgSVMPointer(k, i, p);
  if (rc == CL_SUCCESS && profiling()) {
    int saved = errno;
    kern_set(k, i, ARG_SVM, p);
    errno = saved;
  }
  return rc;
}

cl_int hpc_SetKernelExecInfo(const cl_icd_dispatch *n, cl_kernel k, cl_kernel_exec_info what, size_t size,
                             const void *v) {
  cl_int rc = n->clSetKernelExecInfo(k, what, size, v);
  if (rc == CL_SUCCESS && profiling() && what == CL_KERNEL_EXEC_INFO_SVM_PTRS) {
    int saved = errno;
    size_t cnt = v ? size / sizeof(void *) : 0;
    pthread_mutex_lock(&r_tlock);
    kern_rec *r = kern_find(k, 1);
    if (r) {
      free(r->exec);
      r->exec = NULL;
      r->nexec = 0;
      if (cnt && (r->exec = malloc(cnt * sizeof(void *))) != NULL) {
        memcpy(r->exec, v, cnt * sizeof(void *));
        r->nexec = cnt;
      }
    }
    pthread_mutex_unlock(&r_tlock);
    errno = saved;
  }
  return rc;
}

void *hpc_SVMAlloc(const cl_icd_dispatch *n, cl_context c, cl_svm_mem_flags f, size_t size, cl_uint align) {
  void *p = n->clSVMAlloc(c, f, size, align);
  if (p && profiling() && !(f & CL_MEM_READ_ONLY)) {
    int saved = errno;
    pthread_mutex_lock(&r_tlock);
    svm_forget(p, size);
    if (r_nsvm == r_capsvm) {
      size_t cap = r_capsvm ? 2 * r_capsvm : 64;
      svm_rec *v = realloc(r_svm, cap * sizeof *v);
      if (v) {
        r_svm = v;
        r_capsvm = cap;
      }
    }
    if (r_nsvm < r_capsvm) r_svm[r_nsvm++] = (svm_rec){.p = p, .size = size, .ctx = c};
    pthread_mutex_unlock(&r_tlock);
    errno = saved;
  }
  return p;
}

void hpc_SVMFree(const cl_icd_dispatch *n, cl_context c, void *p) {
  if (p && profiling()) {
    int saved = errno;
    pthread_mutex_lock(&r_tlock);
    svm_forget(p, 1);
    pthread_mutex_unlock(&r_tlock);
    errno = saved;
  }
  n->clSVMFree(c, p);
}

/* ---- shadow storage: allocated once, grown when too small, never freed per dispatch -------------------- */
/* Host pool: one mapping, pre-faulted (MAP_POPULATE) when it grows, since memory touched for the first time
 * costs far more than a copy. Device shadows: one buffer per context (HUBPROF_SHADOW=device, and buffers the
 * host may not read or write). */
static char *r_pool;
static size_t r_pool_cap;

/* Write tracking's pool has the same layout but is not pre-faulted: only the pages written are ever
 * touched (once: the pool is reused). */
static char *r_wpool;
static size_t r_wpool_cap;

static int pool_grow(char **pool, size_t *pool_cap, size_t need, int populate) {
  if (need <= *pool_cap) return 0;
  size_t cap = *pool_cap * 2 > need ? *pool_cap * 2 : need;
  cap = (cap + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
  void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : MAP_NORESERVE), -1, 0);
  if (m == MAP_FAILED) return -1;
  if (*pool) munmap(*pool, *pool_cap);
  *pool = m;
  *pool_cap = cap;
  return 0;
}

static int64_t r_grow_ns; /* time spent growing a pool (a one-time cost, not a path's) */
static int pool_reserve(size_t need) {
  if (need <= r_pool_cap) return 0;
  int64_t t = now_ns();
  int rc = pool_grow(&r_pool, &r_pool_cap, need, 1);
  r_grow_ns += now_ns() - t;
  return rc;
}

typedef struct dev_shadow {
  cl_context ctx;
  cl_mem m;
  size_t cap;
} dev_shadow;
#define MAX_SHADOWS 16
static dev_shadow r_dev[MAX_SHADOWS];
static size_t r_ndev;

static size_t r_devnext; /* the slot a 17th context takes over (round robin) */

/* The device shadow of context ctx, grown to `need` bytes; NULL when it cannot be had (r_dlock held). With
 * every slot taken, one is released and reused: a shadow is only a cache, and it holds a reference to its
 * context, so a context never goes away (nor its address gets reused) while its shadow is here. */
static cl_mem dev_reserve(const cl_icd_dispatch *n, cl_context ctx, size_t need) {
  dev_shadow *d = NULL;
  for (size_t i = 0; i < r_ndev; i++)
    if (r_dev[i].ctx == ctx) d = &r_dev[i];
  if (!d) {
    if (r_ndev == MAX_SHADOWS) {
      d = &r_dev[r_devnext++ % MAX_SHADOWS];
      if (d->m) n->clReleaseMemObject(d->m);
    } else {
      d = &r_dev[r_ndev++];
    }
    *d = (dev_shadow){.ctx = ctx};
  }
  if (need <= d->cap) return d->m;
  size_t cap = d->cap * 2 > need ? d->cap * 2 : need;
  cap = (cap + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
  cl_int err = CL_SUCCESS;
  cl_mem m = n->clCreateBuffer(ctx, CL_MEM_READ_WRITE, cap, NULL, &err);
  if (!m) return NULL;
  if (d->m) n->clReleaseMemObject(d->m);
  d->m = m;
  d->cap = cap;
  return m;
}

/* The application releases a context: drop its device shadow first, so the shadow does not keep the
 * context alive (a later dispatch in a context still in use re-creates it). */
cl_int hpc_ReleaseContext(const cl_icd_dispatch *n, cl_context c) {
  if (c && atomic_load_explicit(&hpc_enabled, memory_order_relaxed) == HPC_PROFILING && !hpc_busy) {
    int saved = errno;
    /* never wait for a replay here: this may be an event callback the replaying thread waits on (the
     * shadow then stays, as a cache, until its slot is reused) */
    if (pthread_mutex_trylock(&r_dlock) == 0) {
      for (size_t i = 0; i < r_ndev; i++)
        if (r_dev[i].ctx == c) {
          if (r_dev[i].m) n->clReleaseMemObject(r_dev[i].m);
          r_dev[i] = r_dev[--r_ndev];
          break;
        }
      pthread_mutex_unlock(&r_dlock);
    }
    errno = saved;
  }
  return n->clReleaseContext(c);
}

/* ---- ranges: the memory one dispatch can write ------------------------------------------------------- */
enum { HOW_HOST = 0, HOW_DEVICE = 1, HOW_SVM = 2 };
typedef struct range {
  int how;          /* HOW_*: read/write through the host pool, copy to a device shadow, SVM copy */
  cl_mem root;      /* buffer (HOW_HOST, HOW_DEVICE) */
  char *svm;        /* allocation base (HOW_SVM) */
  cl_context ctx;   /* context of root (device shadows) */
  size_t off, size; /* range of root, or of the SVM allocation */
  size_t pos;       /* offset in the shadow (host pool or device shadow) */
  int host_read;    /* the host may map it for reading (the comparison after pass 1) */
  int changed;      /* pass 1 wrote it: restore before later passes */
  void *map;        /* comparison scratch: the mapped pointer */
  char *host;       /* the range's host address (write tracking), NULL when unknown */
  int keep;         /* memory the runtime allocated (not USE_HOST_PTR): write tracking keeps it armed */
} range;
static range *r_ranges;
static size_t r_nranges, r_capranges;

static int range_push(const range *x) {
  if (r_nranges == r_capranges) {
    size_t cap = r_capranges ? 2 * r_capranges : 32;
    range *v = realloc(r_ranges, cap * sizeof *v);
    if (!v) return -1;
    r_ranges = v;
    r_capranges = cap;
  }
  r_ranges[r_nranges++] = *x;
  return 0;
}

static int range_cmp(const void *a, const void *b) {
  const range *x = a, *y = b;
  uintptr_t kx = x->how == HOW_SVM ? (uintptr_t)x->svm : (uintptr_t)x->root;
  uintptr_t ky = y->how == HOW_SVM ? (uintptr_t)y->svm : (uintptr_t)y->root;
  if (x->how == HOW_SVM && y->how != HOW_SVM) return 1;
  if (x->how != HOW_SVM && y->how == HOW_SVM) return -1;
  if (kx != ky) return kx < ky ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* Fill r_ranges with the writable memory of kernel k's arguments: one range per buffer or SVM allocation,
 * sub-buffers as ranges of their root, overlapping ranges (the same buffer twice, a sub-buffer with its
 * parent) merged. *sealed: 1 when every memory the kernel can write is in the ranges (every argument the
 * size of a cl_mem a buffer seen created, every SVM pointer in an allocation seen: no image, pipe, interop
 * buffer or system SVM). Returns -1 when out of memory. */
static int collect_ranges(const cl_icd_dispatch *n, cl_kernel k, uint64_t *unknown_svm, int *sealed) {
  r_nranges = 0;
  int rc = 0;
  pthread_mutex_lock(&r_tlock);
  kern_rec *kr = kern_find(k, 0);
  if (kr && !kr->info) kern_info(n, kr);
  *sealed = 1;
  for (size_t i = 0; kr && i < kr->nargs; i++) /* an object the size of a cl_mem not seen created */
    if (kr->args[i].kind == ARG_OPAQUE) *sealed = 0;
  for (size_t i = 0; kr && i < kr->nargs + kr->nexec && rc == 0; i++) {
    const void *p = i < kr->nargs ? kr->args[i].p : kr->exec[i - kr->nargs];
    int kind = i < kr->nargs ? kr->args[i].kind : ARG_SVM;
    if (kind == ARG_NONE || kind == ARG_OPAQUE || !p) continue;
    if (i < kr->nargs && i < kr->nro && kr->ro_info[i]) continue; /* __constant or const: never written */
    range x = {0};
    if (kind == ARG_MEM) {
      mem_rec *m = mem_find((cl_mem)p);
      if (!m) *sealed = 0;
      if (!m || (m->flags & CL_MEM_READ_ONLY)) continue; /* read-only buffers never need saving */
      x.root = m->root;
      x.ctx = m->ctx;
      mem_rec *root = m->root == m->m ? m : mem_find(m->root);
      x.host = root && root->host ? root->host + m->off : NULL;
      x.off = m->off;
      x.size = m->size;
      int host_rw = !(m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS));
      x.host_read = !(m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS));
      x.how = hpc_rp.env->shadow_device || !host_rw ? HOW_DEVICE : HOW_HOST;
      x.keep = root && !(root->flags & CL_MEM_USE_HOST_PTR);
    } else {
      svm_rec *s = svm_find(p);
      if (!s) {
        *sealed = 0;
        (*unknown_svm)++;
        continue;
      }
      x.how = HOW_SVM;
      x.svm = s->p;
      x.size = s->size;
      x.host_read = 1;
    }
    if (x.size) rc = range_push(&x);
  }
  pthread_mutex_unlock(&r_tlock);
  if (rc) return rc;
  qsort(r_ranges, r_nranges, sizeof *r_ranges, range_cmp);
  size_t w = 0;
  for (size_t i = 0; i < r_nranges; i++) {
    range *x = &r_ranges[i];
    if (w) {
      range *y = &r_ranges[w - 1];
      if (y->how == x->how && y->root == x->root && y->svm == x->svm && x->off <= y->off + y->size) {
        size_t end = x->off + x->size > y->off + y->size ? x->off + x->size : y->off + y->size;
        y->size = end - y->off;
        y->host_read &= x->host_read;
        continue;
      }
    }
    r_ranges[w++] = *x;
  }
  r_nranges = w;
  size_t pos = 0;
  for (size_t i = 0; i < r_nranges; i++) {
    r_ranges[i].pos = pos;
    pos += (r_ranges[i].size + 127) & ~(size_t)127;
  }
  return 0;
}

/* Bytes of shadow the ranges need. */
static size_t ranges_bytes(void) {
  return r_nranges ? r_ranges[r_nranges - 1].pos + r_ranges[r_nranges - 1].size : 0;
}

/* Bytes the ranges hold (what a save copies; the shadow's alignment padding is not counted). */
static size_t ranges_data(void) {
  size_t b = 0;
  for (size_t i = 0; i < r_nranges; i++)
    b += r_ranges[i].size;
  return b;
}

/* Save every range into the shadow storage (before pass 1). Returns a CL error, CL_SUCCESS when saved. */
static cl_int save_ranges(const cl_icd_dispatch *n, cl_command_queue q) {
  size_t need = ranges_bytes();
  if (pool_reserve(need) != 0) return CL_OUT_OF_HOST_MEMORY;
  cl_int e = CL_SUCCESS;
  for (size_t i = 0; i < r_nranges && e == CL_SUCCESS; i++) {
    range *x = &r_ranges[i];
    x->changed = 1;
    if (x->how == HOW_HOST)
      e = n->clEnqueueReadBuffer(q, x->root, CL_FALSE, x->off, x->size, r_pool + x->pos, 0, NULL, NULL);
    else if (x->how == HOW_SVM)
      e = n->clEnqueueSVMMemcpy(q, CL_FALSE, r_pool + x->pos, x->svm, x->size, 0, NULL, NULL);
    else {
      cl_mem sh = dev_reserve(n, x->ctx, need);
      e = sh ? n->clEnqueueCopyBuffer(q, x->root, sh, x->off, x->pos, x->size, 0, NULL, NULL)
             : CL_OUT_OF_RESOURCES;
    }
  }
  cl_int f = n->clFinish(q);
  return e != CL_SUCCESS ? e : f;
}

/* After pass 1: which ranges did it change? Those the host cannot read count as changed. The unmaps are
 * left to the next restore's clFinish on an in-order queue (`ooo` = 0), which always follows. */
static void compare_ranges(const cl_icd_dispatch *n, cl_command_queue q, int ooo) {
  cl_int e;
  for (size_t i = 0; i < r_nranges; i++) {
    range *x = &r_ranges[i];
    x->map = NULL;
    if (!x->host_read) continue;
    if (x->how == HOW_SVM) {
      if (n->clEnqueueSVMMap(q, CL_FALSE, CL_MAP_READ, x->svm, x->size, 0, NULL, NULL) == CL_SUCCESS)
        x->map = x->svm;
    } else {
      x->map = n->clEnqueueMapBuffer(q, x->root, CL_FALSE, CL_MAP_READ, x->off, x->size, 0, NULL, NULL, &e);
    }
  }
  /* device shadows are compared through a mapping of the shadow */
  void *dev_map[MAX_SHADOWS] = {0};
  for (size_t d = 0; d < r_ndev; d++)
    for (size_t i = 0; i < r_nranges; i++)
      if (r_ranges[i].how == HOW_DEVICE && r_ranges[i].map && r_ranges[i].ctx == r_dev[d].ctx) {
        dev_map[d] =
            n->clEnqueueMapBuffer(q, r_dev[d].m, CL_FALSE, CL_MAP_READ, 0, ranges_bytes(), 0, NULL, NULL, &e);
        break;
      }
  if (n->clFinish(q) != CL_SUCCESS) {
    for (size_t i = 0; i < r_nranges; i++)
      r_ranges[i].changed = 1;
  } else {
    for (size_t i = 0; i < r_nranges; i++) {
      range *x = &r_ranges[i];
      if (!x->map) continue;
      const char *saved = NULL;
      if (x->how != HOW_DEVICE)
        saved = r_pool + x->pos;
      else
        for (size_t d = 0; d < r_ndev; d++)
          if (r_dev[d].ctx == x->ctx && dev_map[d]) saved = (const char *)dev_map[d] + x->pos;
      x->changed = !saved || memcmp(x->map, saved, x->size) != 0;
    }
  }
  for (size_t i = 0; i < r_nranges; i++) {
    range *x = &r_ranges[i];
    if (!x->map) continue;
    if (x->how == HOW_SVM)
      n->clEnqueueSVMUnmap(q, x->svm, 0, NULL, NULL);
    else
      n->clEnqueueUnmapMemObject(q, x->root, x->map, 0, NULL, NULL);
  }
  for (size_t d = 0; d < r_ndev; d++)
    if (dev_map[d]) n->clEnqueueUnmapMemObject(q, r_dev[d].m, dev_map[d], 0, NULL, NULL);
  if (ooo) n->clFinish(q);
}

/* Put the saved contents of the changed ranges back (before passes 2..N). Returns the bytes restored, or
 * -1 on an error. */
static int64_t restore_ranges(const cl_icd_dispatch *n, cl_command_queue q) {
  cl_int e = CL_SUCCESS;
  int64_t bytes = 0;
  for (size_t i = 0; i < r_nranges && e == CL_SUCCESS; i++) {
    range *x = &r_ranges[i];
    if (!x->changed) continue;
    if (x->how == HOW_HOST)
      e = n->clEnqueueWriteBuffer(q, x->root, CL_FALSE, x->off, x->size, r_pool + x->pos, 0, NULL, NULL);
    else if (x->how == HOW_SVM)
      e = n->clEnqueueSVMMemcpy(q, CL_FALSE, x->svm, r_pool + x->pos, x->size, 0, NULL, NULL);
    else {
      cl_mem sh = NULL;
      for (size_t d = 0; d < r_ndev; d++)
        if (r_dev[d].ctx == x->ctx) sh = r_dev[d].m;
      e = sh ? n->clEnqueueCopyBuffer(q, sh, x->root, x->pos, x->off, x->size, 0, NULL, NULL)
             : CL_INVALID_MEM_OBJECT;
    }
    bytes += (int64_t)x->size;
    r_st->restores++;
  }
  cl_int f = n->clFinish(q);
  return e != CL_SUCCESS || f != CL_SUCCESS ? -1 : bytes;
}

/* ---- write tracking (wtrack.c): devices that keep buffers in host memory ------------------------------ */
/* There a dispatch's pages are saved when first written and only those are restored: no save of the whole
 * ranges, no comparison (docs/replay.md). Elsewhere, and when tracking is off or refused, the full save. */
static const char *r_wt_why; /* why write tracking is off in this process; NULL: usable */
static int r_wt_on;          /* the current dispatch's writes are tracked (r_dlock) */
static unsigned r_paths;     /* 1: a dispatch was write-tracked, 2: one was saved in full (the metadata) */
static hpc_wt_range *r_wtr;
static size_t r_capwtr;
typedef struct dev_kind {
  cl_device_id dev;
  int host;   /* 1: a CPU device with unified memory (PoCL's pthread and basic devices) */
  int caller; /* 1: it runs a ready kernel on the thread that enqueues it (PoCL's basic device) */
} dev_kind;
static dev_kind r_devk[8];
static size_t r_ndevk;

/* A replay pass's command is always ready (the queue drained, no wait list after pass 1), so on a device
 * that runs ready commands on the enqueuing thread (hpc_runs_on_caller) only that thread runs the kernel. */
/* What queue q's device is (r_dlock held); asked once per device. */
static dev_kind dev_of(const cl_icd_dispatch *n, cl_command_queue q) {
  cl_device_id dev = NULL;
  if (n->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS || !dev)
    return (dev_kind){0};
  for (size_t i = 0; i < r_ndevk; i++)
    if (r_devk[i].dev == dev) return r_devk[i];
  cl_device_type ty = 0;
  cl_bool uni = CL_FALSE;
  int host = n->clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof ty, &ty, NULL) == CL_SUCCESS &&
             (ty & CL_DEVICE_TYPE_CPU) &&
             n->clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof uni, &uni, NULL) == CL_SUCCESS &&
             uni;
  dev_kind k = {dev, host, hpc_runs_on_caller(n, dev)};
  if (r_ndevk < sizeof r_devk / sizeof *r_devk) r_devk[r_ndevk++] = k;
  return k;
}

/* Whether queue q's device keeps buffers in host memory that host threads write (r_dlock held). */
static int host_device(const cl_icd_dispatch *n, cl_command_queue q) { return dev_of(n, q).host; }

/* The host address of every range: SVM pointers are their own; a buffer's is its mapping, asked once per
 * root buffer (on a host-memory device the mapping is the buffer's own storage, no copy). Returns 1 when
 * every range has one (r_dlock held). */
static int ranges_host(const cl_icd_dispatch *n, cl_command_queue q) {
  for (size_t i = 0; i < r_nranges; i++) {
    range *x = &r_ranges[i];
    if (x->how == HOW_SVM) x->host = x->svm + x->off;
    if (x->host) continue;
    if (x->how != HOW_HOST) return 0;
    pthread_mutex_lock(&r_tlock);
    mem_rec *m = mem_find(x->root);
    int state = m ? m->host_state : -1;
    size_t size = m ? m->size : 0;
    pthread_mutex_unlock(&r_tlock);
    if (state != 0) return 0;
    cl_int e = CL_SUCCESS;
    void *p = n->clEnqueueMapBuffer(q, x->root, CL_TRUE, CL_MAP_READ, 0, size, 0, NULL, NULL, &e);
    if (p && (n->clEnqueueUnmapMemObject(q, x->root, p, 0, NULL, NULL) != CL_SUCCESS || n->clFinish(q)))
      p = NULL;
    pthread_mutex_lock(&r_tlock);
    if ((m = mem_find(x->root)) != NULL) {
      m->host = p;
      m->host_state = p ? 1 : -1;
    }
    pthread_mutex_unlock(&r_tlock);
    if (!p) return 0;
    x->host = (char *)p + x->off;
  }
  return 1;
}

/* Start tracking the ranges' writes, their saved pages going to the host pool. Returns 0 when tracking. */
static int wt_start(void) {
  if (pool_grow(&r_wpool, &r_wpool_cap, ranges_bytes(), 0) != 0) return -1;
  if (r_nranges > r_capwtr) {
    hpc_wt_range *v = realloc(r_wtr, r_nranges * sizeof *v);
    if (!v) return -1;
    r_wtr = v;
    r_capwtr = r_nranges;
  }
  for (size_t i = 0; i < r_nranges; i++)
    r_wtr[i] = (hpc_wt_range){.host = r_ranges[i].host,
                              .size = r_ranges[i].size,
                              .shadow = r_wpool + r_ranges[i].pos,
                              .keep = r_ranges[i].keep};
  return hpc_wt_begin(r_wtr, r_nranges);
}

/* Put back what the dispatch changed: the written pages, or the ranges that differ. Bytes, -1 on an error. */
static int64_t restore_any(const cl_icd_dispatch *n, cl_command_queue q) {
  if (!r_wt_on) return restore_ranges(n, q);
  r_st->restores++;
  return (int64_t)hpc_wt_restore();
}

/* ---- the replay of one dispatch ------------------------------------------------------------------------ */
static inline uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static cl_int enqueue(const cl_icd_dispatch *n, int task, cl_command_queue q, cl_kernel k, cl_uint dim,
                      const size_t *offset, const size_t *global, const size_t *local, cl_uint nwait,
                      const cl_event *wait, cl_event *ev) {
  return task ? n->clEnqueueTask(q, k, nwait, wait, ev)
              : n->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, ev);
}

static void give_up(const char *what, cl_int e) {
  if (atomic_exchange(&hpc_rp.off, 1)) return;
  hpc_say("kernel replay failed (%s: OpenCL error %d); profiling disabled, the application continues "
          "unprofiled",
          what, (int)e);
}

/* After a pass >= 2 broke (its restore, enqueue or kernel failed): restore the saved buffers and run the
 * kernel once more, unprofiled, and wait, so the application's memory is as after one execution. Returns 0
 * when done (r_dlock held). */
static int recover(const cl_icd_dispatch *n, int task, cl_command_queue q, cl_kernel k, cl_uint dim,
                   const size_t *offset, const size_t *global, const size_t *local) {
  if (restore_any(n, q) < 0) return -1;
  cl_event ev = NULL;
  if (enqueue(n, task, q, k, dim, offset, global, local, 0, NULL, &ev) != CL_SUCCESS || !ev) return -1;
  cl_int st = -1;
  if (n->clWaitForEvents(1, &ev) != CL_SUCCESS ||
      n->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
    st = -1;
  n->clReleaseEvent(ev);
  return st == CL_COMPLETE ? 0 : -1;
}

/* Whether event e has finished (1), failed or is invalid (-1), or is still pending (0). */
static int ev_state(const cl_icd_dispatch *n, cl_event e) {
  cl_int st = CL_COMPLETE;
  if (n->clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS || st < 0)
    return -1;
  return st == CL_COMPLETE;
}

/* Drain queue q (every command enqueued before) and the wait list before a replayed dispatch, waiting at
 * most HPC_DRAIN_NS: a command may wait for a user event that the application completes only after this
 * enqueue returns, and an unbounded clFinish would then never return (r_dlock held, the app hung). A marker
 * enqueued on q completes once every earlier command has; it is polled, never waited for. Returns 0 when
 * drained, -1 when the dispatch must run once, unprofiled (a failed, pending-user or too slow dependency).
 * r_dlock held. */
#define HPC_DRAIN_NS 2000000000LL
static int drain(const cl_icd_dispatch *n, cl_command_queue q, cl_uint nwait, const cl_event *wait) {
  for (cl_uint i = 0; i < nwait && wait; i++) {
    int s = ev_state(n, wait[i]);
    if (s < 0) return -1; /* a failed or invalid event: the runtime reports it to the app as it would */
    if (s) continue;
    cl_command_type ty = 0;
    n->clGetEventInfo(wait[i], CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL);
    if (ty == CL_COMMAND_USER) { /* the app completes it later: waiting here would never return */
      if (!r_warned_user++)
        hpc_say("a dispatch waits for a user event that is not complete: it runs once, unprofiled "
                "(and so do others like it)");
      return -1;
    }
    cl_command_queue wq = NULL; /* another queue's command: make sure it was submitted */
    if (n->clGetEventInfo(wait[i], CL_EVENT_COMMAND_QUEUE, sizeof wq, &wq, NULL) == CL_SUCCESS && wq &&
        wq != q)
      n->clFlush(wq);
  }
  if (!n->clEnqueueMarkerWithWaitList) return n->clFinish(q) == CL_SUCCESS ? 0 : -1; /* OpenCL 1.1 */
  cl_event mark = NULL;
  if (n->clEnqueueMarkerWithWaitList(q, 0, NULL, &mark) != CL_SUCCESS || !mark) return -1;
  n->clFlush(q);
  int64_t t0 = 0, dt = 0; /* the clock is read from the first poll that finds work left (~85 ns a read) */
  cl_uint done = 0;       /* wait[0 .. done) complete */
  int rc = 1, s;
  for (unsigned spin = 0;; spin++) {
    while (done < nwait && wait && (s = ev_state(n, wait[done])) > 0)
      done++;
    if (done < nwait && wait && s < 0) {
      rc = -1;
      break;
    }
    if (done == nwait || !wait) {
      s = ev_state(n, mark);
      if (s != 0) {
        rc = s > 0 ? 0 : -1;
        break;
      }
    }
    if (!t0) t0 = now_ns();
    if ((dt = now_ns() - t0) > HPC_DRAIN_NS) break;
    if (spin < 64) {
      sched_yield();
    } else {
      struct timespec ts = {0, dt < 10000000 ? 20000 : 500000}; /* 20 us, 0.5 ms after 10 ms */
      nanosleep(&ts, NULL);
    }
  }
  n->clReleaseEvent(mark);
  if (rc > 0) {
    if (!r_warned_drain++)
      hpc_say(
          "a dispatch's queue or wait list did not finish within %d s (an earlier command may wait for "
          "an event the application completes later): it runs once, unprofiled (and so do others like it)",
          (int)(HPC_DRAIN_NS / 1000000000LL));
    return -1;
  }
  return rc;
}

/* The row, and first, as it changes, which way this run saved memory (docs/replay.md): replay_memory. */
static void write_row(const hpc_rp_row *r, unsigned path) {
  const char *mem = NULL;
  if (path && !(r_paths & path)) {
    r_paths |= path;
    mem = r_paths == 3 ? "write-tracked+full" : r_paths == 1 ? "write-tracked" : "full";
  }
  hpc_rp_write_row(r, "replay_memory", mem);
}

/* Whether this dispatch saves with write tracking (r_dlock held, the ranges collected). It needs a device
 * that keeps buffers in host memory and their host addresses, and, when some page can fault (a range holds
 * whole pages), one unmeasured run that takes the faults (*run = 1): the kernel may be re-run (`wk`, the
 * warm-up's rule), every whole page is resident, and (HUBPROF_WTRACK=auto) tracking costs less than the
 * full save, compare and restores: measured per kernel + launch once both paths ran (the other one measured
 * again every 32nd dispatch), estimated before (docs/replay.md "Write tracking"). */
/* Below this many bytes to save (HUBPROF_WTRACK=auto, a device that runs commands on the caller) the full
 * path is taken from the first dispatch on: partial_write, 4 KiB written, 3 passes, on PoCL's basic device,
 * costs ~30 µs per dispatch in full against ~55 µs tracked at 64 KiB, about the same at 128 KiB, and ~50
 * against ~35-50 µs at 256 KiB (docs/replay.md "Write tracking"). On the pthread device a command costs
 * a worker's wake-up and tracking is cheaper from 64 KiB: no threshold there. */
#define HPC_WT_FULL_BELOW (128u << 10)
static int wt_choose(const cl_icd_dispatch *n, cl_command_queue q, hpc_rp_key *wk, size_t npasses, int *run,
                     int *timed) {
  if (r_wt_why || hpc_rp.env->shadow_device || !host_device(n, q) || !ranges_host(n, q)) return 0;
  size_t pages = 0, walk = 0; /* walk: pages begin protects (an armed buffer's: those written since) */
  for (size_t i = 0; i < r_nranges; i++) {
    pages += hpc_wt_pages(r_ranges[i].host, r_ranges[i].size);
    walk += hpc_wt_walk(r_ranges[i].host, r_ranges[i].size);
  }
  if (!pages) return 1; /* edges only: saved and restored by copies, nothing can fault */
  if (!wk) return 0;
  /* small buffers on a device that runs commands on the calling thread (PoCL basic): the full path's
   * copies cost a few µs, less than tracking's run and faults, so tracking is not even tried */
  if (!hpc_wt_forced() && ranges_data() < HPC_WT_FULL_BELOW && dev_of(n, q).caller) return 0;
  *timed = !hpc_wt_forced();             /* the choice uses the paths' measured costs */
  for (size_t i = 0; i < r_nranges; i++) /* fresh pages: their first touch belongs in pass 1 */
    if (!hpc_wt_resident(r_ranges[i].host, r_ranges[i].size)) return 0;
  if (!hpc_wt_forced() && wk->measured) {
    /* measured: once both paths have a cost, the cheaper one, the other measured again every 32nd time */
    /* the full path at 4 GB/s and 20 us per command: a path 4x dearer than tracking is not tried again */
    double full_ns = (double)(npasses + 1) * ((double)ranges_data() / 4.0 + 20000.0);
    if (wk->mem_ns[0] && wk->mem_ns[1]) {
      int track = wk->mem_ns[0] <= wk->mem_ns[1];
      if (++wk->since >= 32) {
        wk->since = 0;
        if (!track || wk->mem_ns[1] < 4 * wk->mem_ns[0]) track = !track;
      }
      if (!track) return 0;
    } else if (wk->mem_ns[0]) { /* tracked measured, full not yet: tried unless estimated 4x dearer */
      if (full_ns < 4.0 * (double)wk->mem_ns[0]) return 0;
    } else if (!wk->mem_ns[1]) { /* neither: estimates at 4 GB/s, page-table walks ~0.5 us per page */
      double wt_ns =
          (double)wk->run_ns + (double)npasses * (double)wk->wt_written / 4.0 + 500.0 * (double)walk;
      if (wt_ns > full_ns) return 0;
    }
  }
  *run = 1;
  return 1;
}

/* One dispatch under replay (r_dlock held): the application's call and what the stages below share. */
typedef struct rctx {
  const cl_icd_dispatch *n;
  cl_command_queue q;
  cl_kernel k;
  cl_uint dim, nwait;
  const size_t *offset, *global, *local;
  const cl_event *wait;
  cl_event *ev;
  int task;
  hpc_rp_row row;
  size_t npasses, first; /* passes first .. first+npasses-1 (0-based) run */
  hpc_rp_key *mk, *wk;   /* its multiplexing key; its warm-up key (NULL: no warm-up rule applies) */
  int sealed;            /* every memory the kernel can write is saved (collect_ranges) */
  int warm, saving, ooo; /* a warm-up run first; memory saved; restores ignore queue order */
  int wt_run;            /* an unmeasured run first takes the write faults (none in a counting window) */
  int timed;             /* the memory stages are timed (write tracking's choice, HUBPROF_DEBUG) */
  int caller;            /* a device that runs the kernel on this thread: only it is counted */
  pid_t self;            /* the launching thread (left out of the count), 0: every thread */
  int64_t mem_ns;        /* what saving memory costs this dispatch (write tracking's choice) */
  uint64_t wt_saved0, wt_faults0, wt_arm0;
  size_t nvals, done; /* values kept (in row.vals, row.ids, row.pass: 256 at most); passes that ran */
  int replayed;       /* it was replayed, not forwarded once */
  const char *broke;  /* why a pass after the first broke after its restore */
  cl_int broke_e;
  int broke_quiet; /* the kernel itself failed: no line when running it once more recovers */
} rctx;

static cl_int rc_enqueue(const rctx *c, cl_uint nwait, const cl_event *wait, cl_event *ev) {
  return enqueue(c->n, c->task, c->q, c->k, c->dim, c->offset, c->global, c->local, nwait, wait, ev);
}

/* Save what the kernel can write, when later passes (or the warm-up) need it back: with write tracking or
 * in full. */
static void save_stage(rctx *c) {
  const cl_icd_dispatch *n = c->n;
  int64_t ts = now_ns();
  r_grow_ns = 0;
  c->saving = (c->npasses > 1 || c->warm) && r_nranges > 0;
  c->wt_arm0 = hpc_wt_arm_ns();
  hpc_wt_totals(&c->wt_saved0, &c->wt_faults0);
  /* the memory stages are timed for the write-tracking choice (only where it compares the two paths'
   * costs: a clock read is ~50-85 ns on a VM, ~10 per 3-pass dispatch) and for the HUBPROF_DEBUG summary */
  c->timed = hpc_rp.timed;
  r_wt_on = c->saving && wt_choose(n, c->q, c->wk, c->npasses, &c->wt_run, &c->timed) && wt_start() == 0;
  if (!r_wt_on) /* armed buffers it writes: writable first, or their faults would land in a counting window */
    for (size_t i = 0; i < r_nranges; i++)
      if (r_ranges[i].host) hpc_wt_disarm(r_ranges[i].host, r_ranges[i].size);
  if (r_wt_on) {
    r_st->tracked++;
  } else if (c->saving) {
    r_st->full++;
    cl_int e = save_ranges(n, c->q);
    if (e != CL_SUCCESS) {
      if (!r_warned_save++)
        hpc_say("cannot save the buffers of a dispatch (OpenCL error %d): it runs once, with the counters "
                "of pass 1 only",
                (int)e);
      c->npasses = 1;
      c->saving = 0;
      c->warm = 0; /* its writes could not be undone */
    } else {
      r_st->saved += ranges_data();
      int64_t t = c->timed ? now_ns() - ts : 0;
      if (ranges_data() >= (1 << 20) && t > 0 && (double)ranges_data() / (double)t > r_st->save_best)
        r_st->save_best = (double)ranges_data() / (double)t;
    }
  }
  int64_t tse = c->timed ? now_ns() - ts : 0;
  r_st->save_ns += tse;
  c->mem_ns += tse - r_grow_ns;
}

/* The warm-up run (or write tracking's run): no counters, no event for the application, memory put back. */
static void warm_run(rctx *c) {
  const cl_icd_dispatch *n = c->n;
  int64_t tw = c->timed ? now_ns() : 0;
  cl_event wev = NULL;
  cl_int e = rc_enqueue(c, c->nwait, c->wait, &wev);
  if (e == CL_SUCCESS && wev) { /* when it could not be enqueued nothing ran: pass 1 meets the same error */
    n->clWaitForEvents(1, &wev);
    n->clReleaseEvent(wev);
    if (c->warm) {
      c->wk->measured = 1;
      r_st->warmups++;
    } else {
      r_st->track_runs++;
    }
    if (c->saving) {
      if (!r_wt_on) compare_ranges(n, c->q, c->ooo);
      if (restore_any(n, c->q) < 0) /* memory is as after one run: the passes below still run */
        give_up("restoring buffers after the warm-up run; its buffers may not be as after one run",
                CL_INVALID_OPERATION);
    }
  }
  tw = c->timed ? now_ns() - tw : 0;
  r_st->warm_ns += tw;
  if (c->wt_run) c->mem_ns += tw; /* the tracking run is tracking's cost; the warm-up is not */
}

/* Before pass p > 0: restore what pass 1 wrote. 0, or -1 when partly restored (recovered by finish). */
static int pass_restore(rctx *c) {
  int64_t tr = c->timed ? now_ns() : 0;
  int64_t b = restore_any(c->n, c->q);
  tr = c->timed ? now_ns() - tr : 0;
  r_st->restore_ns += tr;
  c->mem_ns += tr;
  if (b >= (1 << 20) && tr > 0 && (double)b / (double)tr > r_st->restore_best)
    r_st->restore_best = (double)b / (double)tr;
  if (b < 0) {
    c->broke = "restoring buffers";
    c->broke_e = CL_INVALID_OPERATION;
    return -1;
  }
  c->row.d.bytes_restored += (uint64_t)b;
  return 0;
}

/* Run the passes, each in its counting window. Returns what the application's own enqueue returned. */
static cl_int run_passes(rctx *c) {
  const cl_icd_dispatch *n = c->n;
  hp_dispatch *d = &c->row.d;
  cl_int app_rc = CL_SUCCESS;
  for (size_t p = 0; p < c->npasses; p++) {
    hpc_pass *pr = &hpc_rp.passes[c->first + p];
    if (p > 0 && c->saving && !hpc_rp.env->skip_restore && pass_restore(c) != 0) break;
    cl_event mine = NULL, *evp = p == 0 && c->ev ? c->ev : &mine;
    int64_t tp = stage_ns();
    if (p == 0) d->enqueue_ns = hpc_rp.timed ? tp : now_ns();
    if (hpc_rp.warmup) {
      hc_session_skip_thread(pr->sess, c->self);
      hc_session_count_caller(pr->sess, c->caller ? c->self : 0);
    }
    /* the thread list is checked once per dispatch, at pass 1: a thread that starts during the later
     * passes counts from the next dispatch (docs/replay.md "Fixed cost per pass") */
    hc_status hs = p == 0 ? hc_session_start(pr->sess) : hc_session_start_cached(pr->sess);
    int64_t tc0 = stage_ns();
    cl_int e = p > 0 && (size_t)hpc_rp.env->fail_pass == p + 1 /* test hook: this pass fails to enqueue */
                   ? CL_OUT_OF_RESOURCES
                   : rc_enqueue(c, p == 0 ? c->nwait : 0, p == 0 ? c->wait : NULL, evp);
    cl_int st = CL_COMPLETE;
    if (e == CL_SUCCESS) {
      n->clWaitForEvents(1, evp);
      if (n->clGetEventInfo(*evp, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        st = -1;
    }
    int64_t tc1 = stage_ns();
    hc_status hs2 = hc_session_stop(pr->sess, hpc_rp.vals);
    int64_t te = stage_ns();
    r_st->pass_ns += te - tp;
    r_st->counters_ns += (tc0 - tp) + (te - tc1);
    if (p == 0) app_rc = e;
    if (e != CL_SUCCESS) { /* the app's own call failed (pass 1): it sees the error, nothing ran */
      if (p > 0) {         /* a later pass: its memory was restored, nothing ran: recovered below */
        c->broke = "enqueueing a replay pass";
        c->broke_e = e;
      }
      break;
    }
    if (p == 0) {
      cl_ulong s0 = 0, s1 = 0;
      if (n->clGetEventProfilingInfo(*evp, CL_PROFILING_COMMAND_START, sizeof s0, &s0, NULL) == CL_SUCCESS &&
          n->clGetEventProfilingInfo(*evp, CL_PROFILING_COMMAND_END, sizeof s1, &s1, NULL) == CL_SUCCESS) {
        d->start_ns = (int64_t)s0;
        d->end_ns = (int64_t)s1;
        if (c->wk) c->wk->run_ns = (int64_t)(s1 - s0);
      }
    }
    if (mine) n->clReleaseEvent(mine);
    c->done++;
    if (hs == HC_OK && hs2 == HC_OK)
      for (size_t i = 0; i < pr->n && c->nvals < 256; i++) {
        c->row.vals[c->nvals] = hpc_rp.vals[i];
        c->row.ids[c->nvals] = pr->info_id[i];
        /* application replay: the run's pass; with per-device plans, the device's pass in the whole plan */
        c->row.pass[c->nvals] =
            hpc_rp.env->pass && !hpc_rp.devplans ? (uint32_t)hpc_rp.env->pass : (uint32_t)(c->first + p + 1);
        c->row.nvals = ++c->nvals;
      }
    if (hs != HC_OK || hs2 != HC_OK) {
      hpc_say("cannot read the counters of pass %zu (%s); profiling disabled", c->first + p + 1,
              hc_status_str(hs != HC_OK ? hs : hs2));
      atomic_store(&hpc_rp.off, 1);
    }
    if (st != CL_COMPLETE) { /* the kernel failed: running it again would fail again */
      if (p > 0) {           /* but pass 1 ran: its memory is recovered below */
        c->broke = "a replay pass's kernel";
        c->broke_e = st;
        c->broke_quiet = 1;
      }
      break;
    }
    if (p == 0 && c->saving && c->npasses > 1 && !r_wt_on) {
      int64_t tc = c->timed ? now_ns() : 0;
      compare_ranges(n, c->q, c->ooo);
      tc = c->timed ? now_ns() - tc : 0;
      r_st->compare_ns += tc;
      c->mem_ns += tc;
    }
    if (atomic_load(&hpc_rp.off)) break;
  }
  return app_rc;
}

/* After the passes: memory recovered when a later pass broke, write tracking ended, the paths' costs kept,
 * the row written. */
static void finish(rctx *c) {
  hp_dispatch *d = &c->row.d;
  if (c->broke) { /* a pass after the first broke after its restore: memory must be as after one run */
    int bad = !c->saving || hpc_rp.env->skip_restore ||
              recover(c->n, c->task, c->q, c->k, c->dim, c->offset, c->global, c->local) != 0;
    if (bad || !c->broke_quiet) {
      char what[160];
      snprintf(what, sizeof what, "%s%s", c->broke,
               bad ? "; running the dispatch once more failed too, its buffers may not be as after one run"
                   : "; the dispatch ran once more, its results are kept");
      give_up(what, c->broke_e);
    }
  }
  int wt_used = r_wt_on;
  if (r_wt_on) { /* every page writable again; what was saved at first write counts as saved */
    int64_t te = c->timed ? now_ns() : 0;
    hpc_wt_end();
    c->mem_ns += c->timed ? now_ns() - te : 0;
    r_wt_on = 0;
    uint64_t sv = 0, fl = 0;
    hpc_wt_totals(&sv, &fl);
    r_st->saved += sv - c->wt_saved0;
    if (c->wk) c->wk->wt_written = sv - c->wt_saved0;
    r_st->faults += fl - c->wt_faults0;
  }
  hpc_rp_key *wk = c->wk;
  if (wt_used && wk && !wk->mem_ns[0]) /* a buffer's first protection (arming) is a one-time cost */
    c->mem_ns -= (int64_t)(hpc_wt_arm_ns() - c->wt_arm0);
  if (wk && c->timed && c->saving && !c->warm && !c->broke && c->done == c->npasses && c->npasses > 1)
    wk->mem_ns[wt_used ? 0 : 1] = c->mem_ns > 0 ? c->mem_ns : 1;
  if (c->done && c->mk && c->nvals) c->mk->measured++; /* the key's next dispatch measures the next pass */
  if (c->done) {
    d->id = d->dispatch_id = atomic_fetch_add(&hpc_next_dispatch, 1) + 1;
    d->passes = (uint32_t)c->done;
    int64_t tw = stage_ns();
    write_row(&c->row, !c->saving ? 0 : wt_used ? 1 : 2);
    r_st->write_ns += stage_ns() - tw;
    r_st->dispatches++;
    r_st->passes += c->done;
    r_st->accessible += d->bytes_accessible;
    r_st->restored += d->bytes_restored;
  }
}

/* The dispatch described, drained, and either forwarded once unprofiled or replayed: saved, warmed up, run
 * once per pass, recorded (r_dlock held, c's call and row identity filled). Returns the app's result. */
static cl_int replay_locked(rctx *c, hpc_thread *t) {
  const cl_icd_dispatch *n = c->n;
  hp_dispatch *d = &c->row.d;
  uint32_t kid = (uint32_t)hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, (uintptr_t)c->k);
  if (!kid) kid = hpc_kernel_slow(&hpc_opencl, n, (uintptr_t)c->k);
  uint64_t qa = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, (uintptr_t)c->q);
  if (!qa) qa = hpc_queue_slow(&hpc_opencl, n, (uintptr_t)c->q);
  d->kernel_id = kid;
  d->queue_id = (uint32_t)(qa >> 32);
  d->agent_id = (uint32_t)qa;
  cl_uint nd = c->dim > 3 ? 3 : c->dim;
  for (cl_uint i = 0; i < 3; i++) {
    d->grid[i] = i < nd && c->global ? clamp32(c->global[i]) : 1;
    d->workgroup[i] = !c->local ? 0 : i < nd ? clamp32(c->local[i]) : 1;
  }

  /* the dispatch runs alone: drain its queue and whatever it waits for, for a bounded time */
  int64_t td = stage_ns();
  int replay = drain(n, c->q, c->nwait, c->wait) == 0 && hpc_rp_sessions_ready() == 0;
  r_st->drain_ns += stage_ns() - td;
  uint64_t unknown_svm = 0;
  size_t first = 0, np = hpc_rp.npasses;
  hpc_rp_device_passes(d->agent_id, &first, &np); /* per-device plans: this device's passes */
  if (!np) replay = 0;                            /* a device no list names: run once, unmeasured */
  c->npasses = np;
  c->first = first;
  if (hpc_rp
          .mux) { /* iteration multiplexing: one run, the key's next pass of its device's; nothing to save */
    c->npasses = 1;
    c->mk = replay ? hpc_rp_key_find(hpc_rp.muxtab, hpc_rp.mux == HPC_MUX_LAUNCH, kid, d->agent_id, d->grid,
                                     d->workgroup)
                   : NULL;
    c->first = first + (c->mk ? (size_t)(c->mk->measured % np) : 0);
  } else if (replay && collect_ranges(n, c->k, &unknown_svm, &c->sealed) != 0) {
    replay = 0;
  }
  if (unknown_svm && !r_warned_unsaved++)
    hpc_say("a kernel argument points to memory not allocated with clSVMAlloc: it is not saved between "
            "passes");
  for (size_t i = 0; replay && !hpc_rp.mux && i < r_nranges; i++)
    d->bytes_accessible += r_ranges[i].size;

  if (!replay) { /* forward once, unprofiled */
    d->enqueue_ns = now_ns();
    cl_int e = rc_enqueue(c, c->nwait, c->wait, c->ev);
    if (e == CL_SUCCESS) {
      d->id = d->dispatch_id = atomic_fetch_add(&hpc_next_dispatch, 1) + 1;
      d->passes = 1;
      write_row(&c->row, 0);
      r_st->unreplayed++;
    }
    return e;
  }
  c->replayed = 1;

  /* A kernel + launch configuration's first dispatch runs once unmeasured first (its memory restored after
   * it): the runtime's first-use work — compiling the kernel for this launch, building its launch state —
   * happens there, outside every counting window (docs/counters.md). Not in multiplexing (nothing saved).
   * A kernel whose writes are not all saved (an image, a pipe, system SVM) is re-run only where kernel
   * replay re-runs it anyway (several passes): never in application replay or with one pass. */
  c->wk = hpc_rp.warmup && !hpc_rp.mux && (c->sealed || (c->npasses > 1 && !hpc_rp.env->pass))
              ? hpc_rp_key_find(hpc_rp.warmtab, 1, kid, d->agent_id, d->grid, d->workgroup)
              : NULL;
  c->warm = c->wk && !c->wk->measured;
  c->self = hpc_rp.warmup ? (pid_t)t->tid : 0; /* the attach's gettid (reset in a forked child) */
  /* a device that runs the kernel on this thread: only it is counted (docs/counters.md, "Which threads") */
  c->caller = hpc_rp.warmup && c->self && !r_all_threads && dev_of(n, c->q).caller;
  r_st->caller_only += c->caller;

  save_stage(c);
  cl_command_queue_properties qprops = 0;
  n->clGetCommandQueueInfo(c->q, CL_QUEUE_PROPERTIES, sizeof qprops, &qprops, NULL);
  c->ooo = (qprops & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) || hpc_rp.env->skip_restore;
  c->wt_run = r_wt_on && c->wt_run && !c->warm;
  if (c->warm || c->wt_run) warm_run(c);
  cl_int app_rc = run_passes(c);
  finish(c);
  return app_rc;
}

/* The dispatch with the calling thread's region host counters paused: what hubprof does for it is not the
 * application's host work (its counter values are the region's kernel part). */
cl_int hpc_replay_dispatch(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k, cl_uint dim,
                           const size_t *offset, const size_t *global, const size_t *local, cl_uint nwait,
                           const cl_event *wait, cl_event *ev, int task) {
  hpc_region_host_pause();
  hpc_wt_guard(); /* armed memory this kernel may write outside tracking: only with the collector's handler */
  cl_int rc;
  hpc_thread *t = hpc_tls;
  if (atomic_load(&hpc_rp.off) ||
      (!t && !(t = hpc_thread_attach(&hpc_opencl, n)))) { /* given up, or no log: nothing to profile into */
    rc = enqueue(n, task, q, k, dim, offset, global, local, nwait, wait, ev);
  } else {
    int saved_errno = errno;
    pthread_mutex_lock(&r_dlock);
    hpc_busy = 1;
    hubprof_collector_replay_enter();
    int64_t t0 = stage_ns();
    double vals[256]; /* the values of the passes that ran, their counter_info ids and passes */
    uint64_t vids[256];
    uint32_t vpass[256];
    rctx c = {.n = n,
              .q = q,
              .k = k,
              .dim = dim,
              .nwait = nwait,
              .offset = offset,
              .global = global,
              .local = local,
              .wait = wait,
              .ev = ev,
              .task = task,
              .row = {.d = {.size = sizeof c.row.d,
                            .process_id = 1,
                            .thread_id = t->thread_id,
                            .region_id = hpc_region_cur},
                      .vals = vals,
                      .ids = vids,
                      .pass = vpass}};
    rc = replay_locked(&c, t);
    if (c.replayed) r_st->total_ns += stage_ns() - t0;
    hubprof_collector_replay_leave();
    hpc_busy = 0;
    pthread_mutex_unlock(&r_dlock);
    errno = saved_errno;
  }
  hpc_region_host_resume();
  return rc;
}

/* ---- log rows: metadata and counter_info --------------------------------------------------------------- */
void hpc_replay_log_opened(hp_store *s) {
  hpc_rp_log_head(s);
  if (!hpc_rp.mux) hp_write_metadata(s, "replay_write_tracking", r_wt_why ? r_wt_why : "on (mprotect)");
  hpc_rp_log_counters(s);
}

/* ---- init, fork, exit -----------------------------------------------------------------------------------
 */
int hpc_replay_init(const hpc_env *e, const char **why) {
  const char *at = getenv("HUBPROF_TEST_ALL_THREADS");
  r_all_threads = at && strcmp(at, "0") != 0;
  if (hpc_rp_init_plan(e, why) != 0) return -1;
  if (!hpc_rp.mux && !hpc_wt_usable(&r_wt_why) && e->debug)
    hpc_say("write tracking is off (%s): kernel replay saves, compares and restores whole buffers", r_wt_why);
  return hpc_rp_init_passes(why);
}

void hpc_replay_fork_child(void) {
  pthread_mutex_init(&r_dlock, NULL); /* a fork while another thread replayed leaves it held */
  pthread_mutex_init(&r_tlock, NULL);
  hpc_rp_fork_child(); /* the parent's counters closed, the keys dropped */
  memset(r_st, 0, sizeof *r_st);
  hpc_wt_fork_child();
  r_paths = 0; /* the child's log says its own */
}

uint64_t hpc_replay_written(void) {
  pthread_mutex_lock(&r_dlock);
  uint64_t n = r_st->dispatches + r_st->unreplayed;
  pthread_mutex_unlock(&r_dlock);
  return n;
}

void hpc_replay_exit(int debug) {
  if (!debug) return;
  pthread_mutex_lock(&r_dlock);
  hpc_rp_summary();
  pthread_mutex_unlock(&r_dlock);
}
