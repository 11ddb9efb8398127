/* same_name: two programs built from different sources, each with a kernel named `update`, dispatched a
 * different number of times (a tuner's situation: one kernel name, many programs); a third program object
 * built from the first source again (the same program). Checks the results; a test workload for kernel
 * identity (a kernel is its name and its program). It never depends on hubprof: a plain OpenCL 1.2 program.
 * usage: same_name [NA [NB]]   prints one line, exits 0 when every element is right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src_a =
    "__kernel void update(__global float *x) { size_t i = get_global_id(0); x[i] *= 2.0f; }\n";
static const char *src_b =
    "__kernel void update(__global float *x) { size_t i = get_global_id(0); x[i] += 1.0f; }\n";

static cl_kernel build(ex_cl *cl, const char *src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(cl->ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &cl->dev, "", NULL, NULL));
  cl_kernel k = clCreateKernel(p, "update", &err);
  CHECK(err);
  clReleaseProgram(p); /* the kernel keeps it */
  return k;
}

int main(int argc, char **argv) {
  int na = argc > 1 ? atoi(argv[1]) : 3, nb = argc > 2 ? atoi(argv[2]) : 5;
  if (na < 0 || nb < 0 || na > 60 || nb > 1000) {
    fprintf(stderr, "usage: same_name [NA [NB]]   (NA <= 60, NB <= 1000)\n");
    return 2;
  }
  ex_name = "same_name";
  ex_cl cl;
  ex_setup(&cl, src_a);
  cl_kernel ka = build(&cl, src_a), kb = build(&cl, src_b),
            ka2 = ex_kernel(&cl, "update"); /* ka2: program A again */
  enum { N = 256 };
  float x[N];
  for (int i = 0; i < N; i++)
    x[i] = 1.0f;
  cl_int err;
  cl_mem d = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  CHECK(err);
  size_t global = N;
  cl_kernel ks[3] = {ka, kb, ka2};
  for (int j = 0; j < 3; j++)
    CHECK(clSetKernelArg(ks[j], 0, sizeof d, &d));
  /* program B's kernel nb times, then program A's na times (every other one through the second object) */
  for (int it = 0; it < nb; it++)
    CHECK(clEnqueueNDRangeKernel(cl.q, kb, 1, NULL, &global, NULL, 0, NULL, NULL));
  for (int it = 0; it < na; it++)
    CHECK(clEnqueueNDRangeKernel(cl.q, it % 2 ? ka2 : ka, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(cl.q, d, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
  float want = (1.0f + (float)nb);
  for (int it = 0; it < na; it++)
    want *= 2.0f;
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += x[i] != want;
  clReleaseMemObject(d);
  for (int j = 0; j < 3; j++)
    clReleaseKernel(ks[j]);
  ex_teardown(&cl);
  printf("same_name: a=%d b=%d %s\n", na, nb, bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
