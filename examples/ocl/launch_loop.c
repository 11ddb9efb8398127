/* launch_loop: a tight loop of N tiny dispatches with clFinish every M, timed; the launch-bound workload of
 * the collector's overhead benchmark (with PoCL's POCL_DEVICES=basic a launch costs ~0.4 us).
 * usage: launch_loop [N [M]]   prints one line with ns per dispatch, exits 0 when the count is right. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *src = "__kernel void tiny(__global int *a) { if (get_global_id(0) == 0) a[0] += 1; }\n";

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "launch_loop: %s failed: %d\n", #x, e_);                                               \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long every = argc > 2 ? atol(argv[2]) : 1000;
  if (n < 1 || n > 2000000000L || every < 1) {
    fprintf(stderr, "usage: launch_loop [N [M]]\n");
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
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  int zero = 0;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 1;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)); /* warm-up: first-use compile */
  CHECK(clFinish(q));
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    if ((i + 1) % every == 0) CHECK(clFinish(q));
  }
  CHECK(clFinish(q));
  double t1 = now_ns();
  int count = 0;
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  int ok = count == (int)(n + 1);
  printf("launch_loop: n=%ld finish_every=%ld ns_per_dispatch=%.1f %s\n", n, every, (t1 - t0) / (double)n,
         ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
