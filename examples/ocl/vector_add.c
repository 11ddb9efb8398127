/* vector_add: adds two vectors on the first OpenCL device N times and checks the result; a demo and test
 * workload for the collector. It must never depend on hubprof: it is a plain OpenCL 1.2 application.
 * usage: vector_add [N [ITERATIONS]]   prints one line, exits 0 when every element is right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void vector_add(__global const float *a, __global const float *b,\n"
                         "                         __global float *c, const unsigned n) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  if (i < n) c[i] = a[i] + b[i];\n"
                         "}\n";

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1024;
  int iters = argc > 2 ? atoi(argv[2]) : 10;
  if (n == 0 || iters < 0) {
    fprintf(stderr, "usage: vector_add [N [ITERATIONS]]\n");
    return 2;
  }
  ex_name = "vector_add";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_context ctx = cl.ctx;
  cl_command_queue q = cl.q;
  cl_kernel k = ex_kernel(&cl, "vector_add");
  cl_int err;

  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) return 1;
  for (unsigned i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
    c[i] = -1.0f;
  }
  cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *b, b, &err);
  CHECK(err);
  cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *c, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof da, &da));
  CHECK(clSetKernelArg(k, 1, sizeof db, &db));
  CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
  CHECK(clSetKernelArg(k, 3, sizeof n, &n));
  size_t local = 64, global = (n + local - 1) / local * local;
  for (int it = 0; it < iters; it++)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
  CHECK(clFinish(q));
  CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, n * sizeof *c, c, 0, NULL, NULL));
  unsigned bad = 0;
  for (unsigned i = 0; i < n; i++)
    if (iters > 0 && c[i] != 3.0f * (float)i) bad++;
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(k);
  ex_teardown(&cl);
  free(a);
  free(b);
  free(c);
  if (bad) {
    printf("vector_add: n=%u iterations=%d FAILED (%u wrong)\n", n, iters, bad);
    return 1;
  }
  printf("vector_add: n=%u iterations=%d ok\n", n, iters);
  return 0;
}
