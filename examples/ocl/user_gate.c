/* user_gate: on an in-order queue, kernel A waits for a user event; kernel B, with no wait list, follows it
 * (so B waits for the gate too, through the queue's order); only then does the application complete the
 * user event. Kernel replay must not drain the queue unboundedly before B (it would never return): B runs
 * once, unprofiled, and the application finishes. usage: user_gate [N]   prints one line with a checksum;
 * exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
                         "__kernel void dbl(__global int *a) { a[get_global_id(0)] *= 2; }\n";

int main(int argc, char **argv) {
  ex_name = "user_gate";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  if (n == 0) {
    fprintf(stderr, "usage: user_gate [N]\n");
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  cl_kernel a = clCreateKernel(prog, "inc", &err);
  CHECK(err);
  cl_kernel b = clCreateKernel(prog, "dbl", &err);
  CHECK(err);
  cl_int *h = malloc(n * sizeof *h);
  if (!h) return 1;
  for (size_t i = 0; i < n; i++)
    h[i] = (cl_int)(i % 100);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *h, h, &err);
  CHECK(err);
  CHECK(clSetKernelArg(a, 0, sizeof m, &m));
  CHECK(clSetKernelArg(b, 0, sizeof m, &m));
  cl_event gate = clCreateUserEvent(ctx, &err);
  CHECK(err);
  CHECK(clEnqueueNDRangeKernel(q, a, 1, NULL, &n, NULL, 1, &gate, NULL)); /* A: gated */
  CHECK(clEnqueueNDRangeKernel(q, b, 1, NULL, &n, NULL, 0, NULL, NULL));  /* B: after A, no wait list */
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE));                         /* only now can A (then B) run */
  CHECK(clEnqueueNDRangeKernel(q, a, 1, NULL, &n, NULL, 0, NULL, NULL));  /* and one more, ungated */
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= h[i] == 2 * ((cl_int)(i % 100) + 1) + 1;
  clReleaseEvent(gate);
  clReleaseMemObject(m);
  clReleaseKernel(a);
  clReleaseKernel(b);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  printf("user_gate: n=%zu checksum=%016llx %s\n", n, (unsigned long long)ex_fnv(0, h, n * sizeof *h),
         ok ? "ok" : "FAILED");
  free(h);
  return ok ? 0 : 1;
}
