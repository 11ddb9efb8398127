/* region_work: hubprof regions around kernels whose counter values are known by construction (the kernels of
 * known_work.c), for tests/replay/test_region_counters.sh: REPS times, region "op" holds `spin` (a fixed
 * recurrence per work-item, one per compute unit) and region "touch" (nested in "op") holds `touch` (one
 * write in each of PAGES fresh pages: PAGES page faults); `idle` runs outside every region; region "host"
 * holds host work only: spin's recurrence computed on the host (its CPU time measured here) and one write in
 * each of PAGES fresh pages. Prints the CPU time of the recurrence (spin_host_ns, the minimum over the reps;
 * host_cpu_ns, the sum of the whole "host" regions' thread CPU time; host_oncpu_ns, the same regions' time on
 * the CPU, steal included, as task-clock counts it) and a checksum line, the same with and without hubprof
 * but for those times. usage: region_work [PAGES [ITERS [REPS]]]   (defaults 64 2000000 3) */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "hubprof/api.h"
#include "ocl_common.h"
/* known_kernels.h uses ocl_common.h */
#include "known_kernels.h"

#include <sys/mman.h>

int main(int argc, char **argv) {
  kw_setup k;
  kw_init(&k, "region_work", argc, argv, 64, 2000000, 3);
  size_t one = 1;
  cl_int err;
  cl_uint *v = malloc(k.nspin * sizeof *v);
  if (!v) return 1;
  uint64_t h = 1469598103934665603ull;
  int bad = 0;
  int64_t host_best = -1, host_cpu = 0, host_oncpu = 0;
  for (int r = 0; r < k.reps; r++) {
    hubprof_region_begin("op");
    CHECK(clEnqueueNDRangeKernel(k.c.q, k.spin, 1, NULL, &k.nspin, &one, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(k.c.q, k.out, CL_TRUE, 0, k.nspin * sizeof *v, v, 0, NULL, NULL));
    /* fresh pages: a new mapping and buffer for every dispatch of `touch` */
    void *mem = mmap(NULL, k.pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return 1;
    cl_mem fresh =
        clCreateBuffer(k.c.ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, k.pages * 4096, mem, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k.touch, 0, sizeof fresh, &fresh));
    hubprof_region_begin("touch");
    CHECK(clEnqueueNDRangeKernel(k.c.q, k.touch, 1, NULL, &k.pages, NULL, 0, NULL, NULL));
    cl_uint last = 0;
    CHECK(
        clEnqueueReadBuffer(k.c.q, fresh, CL_TRUE, (k.pages - 1) * 4096, sizeof last, &last, 0, NULL, NULL));
    hubprof_region_end();
    bad |= last != (cl_uint)k.pages;
    CHECK(clReleaseMemObject(fresh));
    CHECK(clFinish(k.c.q));
    munmap(mem, k.pages * 4096);
    hubprof_region_end();
    CHECK(clEnqueueNDRangeKernel(k.c.q, k.idle, 1, NULL, &one, &one, 0, NULL, NULL));
    CHECK(clFinish(k.c.q));
    hubprof_region_begin("host"); /* host work only: known CPU time and PAGES page faults */
    int64_t o0 = kw_oncpu_ns(), h0 = kw_cpu_ns(), t0 = h0;
    for (size_t i = 0; i < k.nspin; i++) { /* the same recurrence on the host */
      uint32_t x = kw_spin_host(i, k.iters);
      bad |= x != v[i];
      h = (h ^ v[i]) * 1099511628211ull;
    }
    int64_t t1 = kw_cpu_ns() - t0;
    if (host_best < 0 || t1 < host_best) host_best = t1;
    volatile char *pg =
        mmap(NULL, k.pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((void *)pg == MAP_FAILED) return 1;
    for (size_t i = 0; i < k.pages; i++)
      pg[i * 4096] = (char)i;
    munmap((void *)pg, k.pages * 4096);
    host_cpu += kw_cpu_ns() - h0;
    host_oncpu += kw_oncpu_ns() - o0;
    hubprof_region_end();
  }
  free(v);
  printf(
      "region_work: %zu pages, %lu iterations x %zu work-items, %d reps: spin_host_ns=%lld host_cpu_ns=%lld "
      "host_oncpu_ns=%lld %016llx %s\n",
      k.pages, k.iters, k.nspin, k.reps, (long long)host_best, (long long)host_cpu, (long long)host_oncpu,
      (unsigned long long)h, bad ? "WRONG" : "ok");
  return bad;
}
