/* inject_ocl: what the CUDA driver does at cuInit (loads $CUDA_INJECTION64_PATH and calls its
 * InitializeInjection), then OpenCL work: the CUDA provider's start where there is no GPU, with OpenCL in the
 * same process still recorded (tests/cuda/test_cuda.sh). Prints one line; exits 0 when the sums are right. */
/* SPDX-License-Identifier: MIT */
#include "../../examples/ocl/ocl_common.h"

#include <dlfcn.h>

static const char *src = "__kernel void twice(__global float *a) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] = 2.0f * a[i];\n"
                         "}\n";

int main(void) {
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  int injected = 0; /* 0: no injection asked for; 1: InitializeInjection said success */
  if (inj && *inj) {
    void *h = dlopen(inj, RTLD_NOW | RTLD_GLOBAL);
    int (*init)(void) = NULL;
    if (h) *(void **)&init = dlsym(h, "InitializeInjection");
    injected = init ? init() : -1;
  }
  ex_name = "inject_ocl";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_kernel k = ex_kernel(&cl, "twice");
  cl_int err;
  enum { N = 256, ITERS = 4 };
  float a[N];
  for (int i = 0; i < N; i++)
    a[i] = (float)i;
  cl_mem d = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof d, &d));
  size_t global = N;
  for (int it = 0; it < ITERS; it++)
    CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(cl.q, d, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += a[i] != (float)i * (1 << ITERS);
  clReleaseMemObject(d);
  clReleaseKernel(k);
  ex_teardown(&cl);
  printf("inject_ocl: injection %d, %d dispatches, %s\n", injected, ITERS, bad ? "WRONG" : "ok");
  return bad ? 1 : 0;
}
