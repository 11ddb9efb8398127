/* Kernels whose counter values are known by construction, shared by known_work.c and region_work.c: `idle`
 * does nothing, `spin` runs a fixed recurrence per work-item, `touch` writes one word per page; their setup
 * from the command line, the same recurrence on the host, this thread's CPU clock and its time on the CPU.
 * Include after ocl_common.h. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXAMPLES_KNOWN_KERNELS_H
#define HUBPROF_EXAMPLES_KNOWN_KERNELS_H

#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *kw_src = "__kernel void idle(__global uint *o) {}\n"
                            "__kernel void spin(__global uint *o, uint iters) {\n"
                            "  uint x = (uint)get_global_id(0) + 1u;\n"
                            "  for (uint i = 0; i < iters; i++) x = x * 1664525u + 1013904223u;\n"
                            "  o[get_global_id(0)] = x;\n"
                            "}\n"
                            "__kernel void touch(__global uint *p) {\n"
                            "  p[get_global_id(0) * 1024u] = (uint)get_global_id(0) + 1u;\n"
                            "}\n";

static inline int64_t kw_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* This thread's time on a CPU as perf's task-clock counts it, for an interval in which it never sleeps:
 * wall time less the time it waited to run (run_delay, /proc/thread-self/schedstat). Unlike its CPU time it
 * keeps what a hypervisor takes from the vCPU while the thread runs (steal), as task-clock does: on a shared
 * VM the two drift apart by up to 2x. Falls back to the CPU time where schedstat is missing. */
static inline int64_t kw_oncpu_ns(void) {
  char b[128];
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); /* no stdio: no allocation, no fault */
  ssize_t n = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
  if (fd >= 0) close(fd);
  char *e = NULL;
  if (n > 0) {
    b[n] = 0;
    strtoull(b, &e, 10); /* sum_exec_runtime, then run_delay */
  }
  unsigned long long delay = e && *e == ' ' ? strtoull(e, &e, 10) : 0;
  if (n <= 0 || !e || (*e != ' ' && *e != '\n')) return kw_cpu_ns();
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec - (int64_t)delay;
}

/* spin's value for work-item i, computed on the host (not folded at compile time). */
static inline uint32_t kw_spin_host(size_t i, unsigned long iters) {
  volatile uint32_t x0 = (uint32_t)i + 1u;
  uint32_t x = x0;
  for (unsigned long k = 0; k < iters; k++)
    x = x * 1664525u + 1013904223u;
  return x;
}

/* The command line, the device, the three kernels, spin's output buffer (one work-item per compute unit). */
typedef struct kw_setup {
  ex_cl c;
  cl_kernel idle, spin, touch;
  size_t pages, nspin;
  unsigned long iters;
  int reps;
  cl_mem out;
  cl_uint it;
} kw_setup;

/* usage: NAME [PAGES [ITERS [REPS]]] with the given defaults; exits 2 on a bad one. */
static void kw_init(kw_setup *k, const char *name, int argc, char **argv, size_t pages, unsigned long iters,
                    int reps) {
  ex_name = name;
  k->pages = argc > 1 ? strtoul(argv[1], NULL, 10) : pages;
  k->iters = argc > 2 ? strtoul(argv[2], NULL, 10) : iters;
  k->reps = argc > 3 ? atoi(argv[3]) : reps;
  if (!k->pages || !k->iters || k->iters > 0xffffffffUL || k->reps < 1) {
    fprintf(stderr, "usage: %s [PAGES [ITERS [REPS]]]   (each at least 1)\n", name);
    exit(2);
  }
  ex_setup(&k->c, kw_src);
  k->idle = ex_kernel(&k->c, "idle");
  k->spin = ex_kernel(&k->c, "spin");
  k->touch = ex_kernel(&k->c, "touch");
  cl_uint cus = 1;
  CHECK(clGetDeviceInfo(k->c.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
  k->nspin = cus ? cus : 1;
  cl_int err;
  k->out = clCreateBuffer(k->c.ctx, CL_MEM_READ_WRITE, k->nspin * sizeof(cl_uint), NULL, &err);
  CHECK(err);
  k->it = (cl_uint)k->iters;
  CHECK(clSetKernelArg(k->idle, 0, sizeof k->out, &k->out));
  CHECK(clSetKernelArg(k->spin, 0, sizeof k->out, &k->out));
  CHECK(clSetKernelArg(k->spin, 1, sizeof k->it, &k->it));
}

#endif
