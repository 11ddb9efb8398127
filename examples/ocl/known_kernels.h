/* Kernels whose counter values are known by construction, shared by known_work.c and region_work.c: `idle`
 * does nothing, `spin` runs a fixed recurrence per work-item, `touch` writes one word per page; with the
 * same recurrence on the host and this thread's CPU clock (the reference for spin's task-clock). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXAMPLES_KNOWN_KERNELS_H
#define HUBPROF_EXAMPLES_KNOWN_KERNELS_H

#include <stdint.h>
#include <time.h>

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

/* spin's value for work-item i, computed on the host (not folded at compile time). */
static inline uint32_t kw_spin_host(size_t i, unsigned long iters) {
  volatile uint32_t x0 = (uint32_t)i + 1u;
  uint32_t x = x0;
  for (unsigned long k = 0; k < iters; k++)
    x = x * 1664525u + 1013904223u;
  return x;
}

#endif
