/* dlopen_ocl: loads libOpenCL.so.1 with dlopen and finds every function with dlsym (as Python bindings and
 * plugin hosts do), then scales a vector D times; an LD_PRELOAD shim cannot see it, the ICD layer can.
 * Never links libOpenCL. usage: dlopen_ocl [N [D]]   prints one line, exits 0 when the result is right. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void dl_scale(__global float *a) { a[get_global_id(0)] *= 2.0f; }\n";

#define FN(name) static __typeof__(name) *p_##name
FN(clGetPlatformIDs);
FN(clGetDeviceIDs);
FN(clCreateContext);
FN(clCreateCommandQueue);
FN(clCreateProgramWithSource);
FN(clBuildProgram);
FN(clCreateKernel);
FN(clCreateBuffer);
FN(clSetKernelArg);
FN(clEnqueueNDRangeKernel);
FN(clFinish);
FN(clEnqueueReadBuffer);
FN(clReleaseMemObject);
FN(clReleaseKernel);
FN(clReleaseProgram);
FN(clReleaseCommandQueue);
FN(clReleaseContext);

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "dlopen_ocl: %s failed: %d\n", #x, e_);                                                \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
  int d = argc > 2 ? atoi(argv[2]) : 8;
  if (n == 0 || d < 0 || d > 60) {
    fprintf(stderr, "usage: dlopen_ocl [N [D<=60]]\n");
    return 2;
  }
  void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen_ocl: %s\n", dlerror());
    return 1;
  }
#define LOAD(name)                                                                                           \
  if (!(*(void **)&p_##name = dlsym(lib, #name))) {                                                          \
    fprintf(stderr, "dlopen_ocl: no %s in libOpenCL.so.1\n", #name);                                         \
    return 1;                                                                                                \
  }
  LOAD(clGetPlatformIDs);
  LOAD(clGetDeviceIDs);
  LOAD(clCreateContext);
  LOAD(clCreateCommandQueue);
  LOAD(clCreateProgramWithSource);
  LOAD(clBuildProgram);
  LOAD(clCreateKernel);
  LOAD(clCreateBuffer);
  LOAD(clSetKernelArg);
  LOAD(clEnqueueNDRangeKernel);
  LOAD(clFinish);
  LOAD(clEnqueueReadBuffer);
  LOAD(clReleaseMemObject);
  LOAD(clReleaseKernel);
  LOAD(clReleaseProgram);
  LOAD(clReleaseCommandQueue);
  LOAD(clReleaseContext);
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  CHECK(p_clGetPlatformIDs(1, &plat, NULL));
  CHECK(p_clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_context ctx = p_clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = p_clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_program prog = p_clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(p_clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  cl_kernel k = p_clCreateKernel(prog, "dl_scale", &err);
  CHECK(err);
  float *a = malloc(n * sizeof *a);
  if (!a) return 1;
  for (size_t i = 0; i < n; i++)
    a[i] = (float)(i % 7);
  cl_mem m = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  CHECK(p_clSetKernelArg(k, 0, sizeof m, &m));
  for (int i = 0; i < d; i++)
    CHECK(p_clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(p_clFinish(q));
  CHECK(p_clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *a, a, 0, NULL, NULL));
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    bad += a[i] != (float)(i % 7) * (float)(1ull << d);
  p_clReleaseMemObject(m);
  p_clReleaseKernel(k);
  p_clReleaseProgram(prog);
  p_clReleaseCommandQueue(q);
  p_clReleaseContext(ctx);
  free(a);
  printf("dlopen_ocl: n=%zu dispatches=%d %s\n", n, d, bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
