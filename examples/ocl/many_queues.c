/* many_queues: creates Q command queues and K kernels and keeps them all (more than the collector's
 * lock-free tables hold), then dispatches on every 97th queue and on the last 8, with every 997th kernel and
 * the last one. Every dispatch must carry a valid queue and kernel id, and each queue one row.
 * usage: many_queues [Q [K]]   prints one line with a checksum and the dispatch count; exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv) {
  ex_name = "many_queues";
  size_t nq = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
  size_t nk = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
  if (nq == 0 || nk == 0) {
    fprintf(stderr, "usage: many_queues [Q [K]]\n");
    return 2;
  }
  size_t n = 256;
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  cl_command_queue *qs = calloc(nq, sizeof *qs);
  cl_kernel *ks = calloc(nk, sizeof *ks);
  cl_int *h = calloc(n, sizeof *h);
  if (!qs || !ks || !h) return 1;
  for (size_t i = 0; i < nq; i++) {
    qs[i] = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
  }
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *h, h, &err);
  CHECK(err);
  for (size_t i = 0; i < nk; i++) {
    ks[i] = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    CHECK(clSetKernelArg(ks[i], 0, sizeof m, &m));
  }
  int dispatches = 0;
  for (size_t i = 0; i < nq; i++) {
    if (i % 97 && i + 8 < nq) continue;
    for (int r = 0; r < 2; r++) { /* twice per queue: the second finds the ids registered */
      size_t ki = (size_t)dispatches % 2 ? nk - 1 : ((size_t)dispatches * 997) % nk;
      CHECK(clEnqueueNDRangeKernel(qs[i], ks[ki], 1, NULL, &n, NULL, 0, NULL, NULL));
      dispatches++;
    }
    CHECK(clFinish(qs[i]));
  }
  CHECK(clEnqueueReadBuffer(qs[0], m, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= h[i] == dispatches;
  for (size_t i = 0; i < nk; i++)
    clReleaseKernel(ks[i]);
  for (size_t i = 0; i < nq; i++)
    clReleaseCommandQueue(qs[i]);
  clReleaseMemObject(m);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  printf("many_queues: queues=%zu kernels=%zu dispatches=%d checksum=%016llx %s\n", nq, nk, dispatches,
         (unsigned long long)ex_fnv(0, h, n * sizeof *h), ok ? "ok" : "FAILED");
  free(qs);
  free(ks);
  free(h);
  return ok ? 0 : 1;
}
