/* iterations: a solver-like loop for iteration multiplexing — kernel `relax` dispatched K times, alternating
 * a full and a half grid (two launches of one kernel), then kernel `finish` dispatched R times; prints a
 * checksum and exits with EXIT. A test workload (tests/replay/test_multiplex.sh). Plain OpenCL 1.2.
 * usage: iterations [N [K [R [EXIT]]]]   (N work-items, even; defaults 4096 60 2 0) */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_common.h"

static const char *src = "__kernel void relax(__global uint *a, uint it) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] = a[i] * 1664525u + 1013904223u + it;\n"
                         "}\n"
                         "__kernel void finish(__global uint *a, __global uint *sum, uint n) {\n"
                         "  if (get_global_id(0) == 0) {\n"
                         "    uint s = 0;\n"
                         "    for (uint i = 0; i < n; i++) s = s * 31u + a[i];\n"
                         "    *sum += s;\n"
                         "  }\n"
                         "}\n";

/* The same computation on the host, for the "ok". */
static uint32_t expected(size_t n, int k, int r) {
  uint32_t *a = malloc(n * sizeof *a), sum = 0;
  if (!a) exit(1);
  for (size_t i = 0; i < n; i++)
    a[i] = (uint32_t)i;
  for (int it = 0; it < k; it++) {
    size_t m = it % 2 ? n / 2 : n;
    for (size_t i = 0; i < m; i++)
      a[i] = a[i] * 1664525u + 1013904223u + (uint32_t)it;
  }
  for (int j = 0; j < r; j++) {
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++)
      s = s * 31u + a[i];
    sum += s;
  }
  free(a);
  return sum;
}

int main(int argc, char **argv) {
  ex_name = "iterations";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  int k = argc > 2 ? atoi(argv[2]) : 60, r = argc > 3 ? atoi(argv[3]) : 2, rc = argc > 4 ? atoi(argv[4]) : 0;
  if (n < 2 || n % 2 || k < 0 || r < 0) {
    fprintf(stderr, "usage: iterations [N [K [R [EXIT]]]]   (N even)\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel relax = ex_kernel(&c, "relax"), finish = ex_kernel(&c, "finish");
  uint32_t *a = malloc(n * sizeof *a), sum = 0;
  if (!a) return 1;
  for (size_t i = 0; i < n; i++)
    a[i] = (uint32_t)i;
  cl_int err;
  cl_mem da = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  cl_mem ds = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof sum, &sum, &err);
  CHECK(err);
  CHECK(clSetKernelArg(relax, 0, sizeof da, &da));
  for (int it = 0; it < k; it++) {
    size_t m = it % 2 ? n / 2 : n; /* two launches of one kernel: the full grid, then half of it */
    cl_uint u = (cl_uint)it;
    CHECK(clSetKernelArg(relax, 1, sizeof u, &u));
    CHECK(clEnqueueNDRangeKernel(c.q, relax, 1, NULL, &m, NULL, 0, NULL, NULL));
  }
  cl_uint un = (cl_uint)n;
  CHECK(clSetKernelArg(finish, 0, sizeof da, &da));
  CHECK(clSetKernelArg(finish, 1, sizeof ds, &ds));
  CHECK(clSetKernelArg(finish, 2, sizeof un, &un));
  size_t one = 1;
  for (int j = 0; j < r; j++)
    CHECK(clEnqueueNDRangeKernel(c.q, finish, 1, NULL, &one, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(c.q, ds, CL_TRUE, 0, sizeof sum, &sum, 0, NULL, NULL));
  uint32_t want = expected(n, k, r);
  clReleaseMemObject(da);
  clReleaseMemObject(ds);
  clReleaseKernel(relax);
  clReleaseKernel(finish);
  ex_teardown(&c);
  free(a);
  printf("iterations: n=%zu k=%d r=%d checksum=%u %s\n", n, k, r, (unsigned)sum,
         sum == want ? "ok" : "FAILED");
  return sum == want ? rc : 1;
}
