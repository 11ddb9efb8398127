/* inplace_update: increments a buffer in place K times (every other dispatch with an event the app waits on
 * and releases itself) and prints the checksum; a test workload for the collector. Plain OpenCL 1.2.
 * usage: inplace_update [N [K]]   prints one line, exits 0 when the checksum is right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void inplace_inc(__global int *a) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] += 1;\n"
                         "}\n";

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  int k = argc > 2 ? atoi(argv[2]) : 20;
  if (n == 0 || k < 0) {
    fprintf(stderr, "usage: inplace_update [N [K]]\n");
    return 2;
  }
  ex_name = "inplace_update";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_context ctx = cl.ctx;
  cl_command_queue q = cl.q;
  cl_program prog = cl.prog;
  cl_int err;
  cl_kernel kern;
  cl_uint nk = 0;
  CHECK(clCreateKernelsInProgram(prog, 1, &kern, &nk));
  int *a = malloc(n * sizeof *a);
  if (!a) return 1;
  for (size_t i = 0; i < n; i++)
    a[i] = (int)(i % 1000);
  cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof da, &da));
  for (int it = 0; it < k; it++) {
    if (it % 2) {
      cl_event ev;
      CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, 0, NULL, &ev));
      CHECK(clWaitForEvents(1, &ev));
      cl_int status = 0;
      CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
      if (status != CL_COMPLETE) {
        fprintf(stderr, "inplace_update: event status %d after wait\n", status);
        return 1;
      }
      CHECK(clReleaseEvent(ev));
    } else {
      CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
    }
  }
  CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, n * sizeof *a, a, 0, NULL, NULL));
  long long sum = 0, want = 0;
  for (size_t i = 0; i < n; i++) {
    sum += a[i];
    want += (long long)(i % 1000) + k;
  }
  clReleaseMemObject(da);
  clReleaseKernel(kern);
  ex_teardown(&cl);
  free(a);
  printf("inplace_update: n=%zu k=%d checksum=%lld %s\n", n, k, sum, sum == want ? "ok" : "FAILED");
  return sum == want ? 0 : 1;
}
