/* launch_loop: a tight loop of N tiny dispatches with clFinish every M, timed; the launch-bound workload of
 * the collector's overhead benchmark (with PoCL's POCL_DEVICES=basic a launch costs ~0.4 us).
 * usage: launch_loop [N [M]]   prints one line with ns per dispatch, exits 0 when the count is right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *src = "__kernel void tiny(__global int *a) { if (get_global_id(0) == 0) a[0] += 1; }\n";

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long every = argc > 2 ? atol(argv[2]) : 1000;
  if (n < 1 || n > 2000000000L || every < 1) {
    fprintf(stderr, "usage: launch_loop [N [M]]\n");
    return 2;
  }
  ex_name = "launch_loop";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_context ctx = cl.ctx;
  cl_command_queue q = cl.q;
  cl_program prog = cl.prog;
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  int zero = 0;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 1;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)); /* warm-up: first-use compile */
  CHECK(clFinish(q));
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    if ((i + 1) % every == 0) CHECK(clFinish(q));
  }
  CHECK(clFinish(q));
  double t1 = now_ns();
  int count = 0;
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
  clReleaseMemObject(m);
  clReleaseKernel(k);
  ex_teardown(&cl);
  int ok = count == (int)(n + 1);
  printf("launch_loop: n=%ld finish_every=%ld ns_per_dispatch=%.1f %s\n", n, every, (t1 - t0) / (double)n,
         ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
