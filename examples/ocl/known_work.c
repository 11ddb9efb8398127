/* known_work: kernels whose counter values are known by construction, for the known-work validation of
 * tests/replay/test_known_work.sh — `idle` does nothing, `spin` spins a fixed number of iterations per
 * work-item (one work-item per work-group, one per compute unit), `touch` writes one word in each page of a
 * buffer created just before it on memory mapped just before (CL_MEM_USE_HOST_PTR on fresh anonymous pages:
 * one page fault each at the first write, whatever the runtime's allocator does). Prints the CPU time this
 * thread took for the same recurrence (the reference for `spin`'s task-clock: spin_host_ns, per dispatch, the
 * minimum over the reps). Plain OpenCL 1.2. usage: known_work [PAGES [ITERS [REPS]]]   (defaults 256 4000000
 * 4) */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_common.h"
/* known_kernels.h uses ocl_common.h */
#include "known_kernels.h"

#include <sys/mman.h>

int main(int argc, char **argv) {
  kw_setup k;
  kw_init(&k, "known_work", argc, argv, 256, 4000000, 4);
  ex_cl c = k.c;
  cl_kernel idle = k.idle, spin = k.spin, touch = k.touch;
  size_t pages = k.pages, nspin = k.nspin, one = 1;
  unsigned long iters = k.iters;
  int reps = k.reps;
  cl_mem out = k.out;
  cl_int err;
  uint64_t h = 1469598103934665603ull;
  int bad = 0;
  int64_t host_best = -1;
  for (int r = 0; r < reps; r++) {
    CHECK(clEnqueueNDRangeKernel(c.q, idle, 1, NULL, &one, &one, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(c.q, spin, 1, NULL, &nspin, &one, 0, NULL, NULL));
    cl_uint *v = malloc(nspin * sizeof *v);
    if (!v) return 1;
    CHECK(clEnqueueReadBuffer(c.q, out, CL_TRUE, 0, nspin * sizeof *v, v, 0, NULL, NULL));
    int64_t t0 = kw_cpu_ns();
    for (size_t i = 0; i < nspin; i++) { /* the same recurrence on the host */
      uint32_t x = kw_spin_host(i, iters);
      bad |= x != v[i];
      h = (h ^ v[i]) * 1099511628211ull;
    }
    int64_t t1 = kw_cpu_ns() - t0;
    if (host_best < 0 || t1 < host_best) host_best = t1;
    free(v);
    /* fresh pages: a new mapping and buffer for every dispatch of `touch` */
    void *mem = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return 1;
    cl_mem fresh = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, pages * 4096, mem, &err);
    CHECK(err);
    CHECK(clSetKernelArg(touch, 0, sizeof fresh, &fresh));
    CHECK(clEnqueueNDRangeKernel(c.q, touch, 1, NULL, &pages, NULL, 0, NULL, NULL));
    cl_uint last = 0;
    CHECK(clEnqueueReadBuffer(c.q, fresh, CL_TRUE, (pages - 1) * 4096, sizeof last, &last, 0, NULL, NULL));
    bad |= last != (cl_uint)pages;
    CHECK(clReleaseMemObject(fresh));
    CHECK(clFinish(c.q));
    munmap(mem, pages * 4096);
  }
  CHECK(clFinish(c.q));
  printf("known_work: %zu pages, %lu iterations x %zu work-items, %d reps: spin_host_ns=%lld %016llx %s\n",
         pages, iters, nspin, reps, (long long)host_best, (unsigned long long)h, bad ? "WRONG" : "ok");
  return bad;
}
