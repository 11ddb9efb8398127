/* many_contexts: C times in turn, creates a context, runs K in-place increments in it and releases it all
 * (more contexts than kernel replay keeps device shadows for). usage: many_contexts [C [K]]   prints one
 * line with a checksum; exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void ctx_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv) {
  ex_name = "many_contexts";
  int nc = argc > 1 ? atoi(argv[1]) : 20;
  int k = argc > 2 ? atoi(argv[2]) : 2;
  if (nc < 1 || k < 1) {
    fprintf(stderr, "usage: many_contexts [C [K]]\n");
    return 2;
  }
  size_t n = 1024;
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_int *h = malloc(n * sizeof *h);
  if (!h) return 1;
  uint64_t sum = 0;
  int ok = 1;
  for (int c = 0; c < nc; c++) {
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel kern = clCreateKernel(prog, "ctx_inc", &err);
    CHECK(err);
    for (size_t i = 0; i < n; i++)
      h[i] = (cl_int)(i % 100) + c;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *h, h, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kern, 0, sizeof m, &m));
    for (int i = 0; i < k; i++)
      CHECK(clEnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
      ok &= h[i] == (cl_int)(i % 100) + c + k;
    sum = ex_fnv(sum, h, n * sizeof *h);
    clReleaseMemObject(m);
    clReleaseKernel(kern);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
  }
  printf("many_contexts: contexts=%d k=%d checksum=%016llx %s\n", nc, k, (unsigned long long)sum,
         ok ? "ok" : "FAILED");
  free(h);
  return ok ? 0 : 1;
}
