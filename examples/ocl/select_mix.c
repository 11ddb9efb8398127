/* select_mix: three kernels dispatched many times in a fixed order, each iteration in a region "iter" and
 * every third one's two sm_mul dispatches in a nested region "hot" (include/hubprof/api.h), each dispatch
 * updating buffers in place, so a replay that is not restored or a lost dispatch changes the checksum. The
 * workload of tests/collector/test_select.sh (selective collection).
 * Order: sm_add with a global size of 1 outside any region, then for i = 0 .. N-1: sm_add, (i % 3 == 0:
 * sm_mul twice inside "hot"), sm_mix, every one with a global size of 64 + i.
 * usage: select_mix [N]   (default 30) prints one checksum line, the same with and without hubprof. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "hubprof/api.h"
#include "ocl_common.h"

static const char *src = "__kernel void sm_add(__global uint *a, __global const uint *b) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] += b[i] + (uint)i;\n"
                         "}\n"
                         "__kernel void sm_mul(__global uint *a) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] = a[i] * 2654435761u + 1u;\n"
                         "}\n"
                         "__kernel void sm_mix(__global uint *a, __global uint *b) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  b[i] = (b[i] << 5 | b[i] >> 27) ^ a[i];\n"
                         "}\n";

static void run(cl_command_queue q, cl_kernel k, size_t g) {
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  if (n < 1 || n > 100000) {
    fprintf(stderr, "usage: select_mix [N]\n");
    return 2;
  }
  ex_name = "select_mix";
  ex_cl cl;
  ex_setup(&cl, src);
  size_t len = 64 + (size_t)n;
  uint32_t *a = calloc(len, sizeof *a), *b = calloc(len, sizeof *b);
  if (!a || !b) return 1;
  for (size_t i = 0; i < len; i++)
    b[i] = (uint32_t)(i * 7 + 3);
  cl_int err;
  cl_mem ma = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, len * sizeof *a, a, &err);
  CHECK(err);
  cl_mem mb = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, len * sizeof *b, b, &err);
  CHECK(err);
  cl_kernel kadd = ex_kernel(&cl, "sm_add"), kmul = ex_kernel(&cl, "sm_mul"), kmix = ex_kernel(&cl, "sm_mix");
  CHECK(clSetKernelArg(kadd, 0, sizeof ma, &ma));
  CHECK(clSetKernelArg(kadd, 1, sizeof mb, &mb));
  CHECK(clSetKernelArg(kmul, 0, sizeof ma, &ma));
  CHECK(clSetKernelArg(kmix, 0, sizeof ma, &ma));
  CHECK(clSetKernelArg(kmix, 1, sizeof mb, &mb));
  run(cl.q, kadd, 1);
  for (long i = 0; i < n; i++) {
    size_t g = 64 + (size_t)i;
    hubprof_region_begin("iter");
    run(cl.q, kadd, g);
    if (i % 3 == 0) {
      hubprof_region_begin("hot");
      run(cl.q, kmul, g);
      run(cl.q, kmul, g);
      hubprof_region_end();
    }
    run(cl.q, kmix, g);
    CHECK(clFinish(cl.q));
    hubprof_region_end();
  }
  CHECK(clEnqueueReadBuffer(cl.q, ma, CL_TRUE, 0, len * sizeof *a, a, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(cl.q, mb, CL_TRUE, 0, len * sizeof *b, b, 0, NULL, NULL));
  uint64_t h = ex_fnv(ex_fnv(0, a, len * sizeof *a), b, len * sizeof *b);
  printf("select_mix: n=%ld dispatches=%ld checksum=%016llx\n", n, 1 + 2 * n + 2 * ((n + 2) / 3),
         (unsigned long long)h);
  clReleaseKernel(kadd);
  clReleaseKernel(kmul);
  clReleaseKernel(kmix);
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  ex_teardown(&cl);
  free(a);
  free(b);
  return 0;
}
