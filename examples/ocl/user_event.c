/* user_event: in-place increments on an out-of-order queue, each dispatch waiting for the previous one's
 * event, then one dispatch gated by a user event that the application completes only after the enqueue
 * returns (kernel replay cannot wait for it: that dispatch must run once, unprofiled, and never hang). usage:
 * user_event [N [K]]   prints one line with a checksum; exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void inc_ooo(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv) {
  ex_name = "user_event";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  int k = argc > 2 ? atoi(argv[2]) : 10;
  if (n == 0 || k < 1) {
    fprintf(stderr, "usage: user_event [N [K]]\n");
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  cl_kernel kern = clCreateKernel(prog, "inc_ooo", &err);
  CHECK(err);
  cl_int *h = malloc(n * sizeof *h);
  if (!h) return 1;
  for (size_t i = 0; i < n; i++)
    h[i] = (cl_int)(i % 100);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *h, h, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof m, &m));
  cl_event prev = NULL;
  for (int i = 0; i < k; i++) { /* a chain of events: the order an out-of-order queue must keep */
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, prev ? 1 : 0, prev ? &prev : NULL, &ev));
    if (prev) clReleaseEvent(prev);
    prev = ev;
  }
  cl_event gate = clCreateUserEvent(ctx, &err), gated, wait[2];
  CHECK(err);
  wait[0] = gate;
  wait[1] = prev;
  CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, 2, wait, &gated));
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE)); /* only now can the gated dispatch run */
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *h, h, 1, &gated, NULL));
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= h[i] == (cl_int)(i % 100) + k + 1;
  clReleaseEvent(prev);
  clReleaseEvent(gate);
  clReleaseEvent(gated);
  clReleaseMemObject(m);
  clReleaseKernel(kern);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  printf("user_event: n=%zu k=%d checksum=%016llx %s\n", n, k,
         (unsigned long long)ex_fnv(0, h, n * sizeof *h), ok ? "ok" : "FAILED");
  free(h);
  return ok ? 0 : 1;
}
