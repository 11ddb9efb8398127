/* crash: runs D dispatches and clFinish (or, with "wait", waits for the last one's event), enqueues a few
 * more, then dies as asked (segfault, abort or SIGKILL), to test that the collector's log keeps every
 * dispatch harvested before the death.
 * usage: crash segv|abort|kill [D [wait]]   prints one line before dying; never exits normally. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src = "__kernel void crash_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "crash: %s failed: %d\n", #x, e_);                                                     \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "";
  int d = argc > 2 ? atoi(argv[2]) : 25;
  int wait = argc > 3 && strcmp(argv[3], "wait") == 0;
  if ((strcmp(how, "segv") && strcmp(how, "abort") && strcmp(how, "kill")) || d < 0) {
    fprintf(stderr, "usage: crash segv|abort|kill [D [wait]]\n");
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
  cl_kernel k = clCreateKernel(prog, "crash_inc", &err);
  CHECK(err);
  int h[64] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof h, h, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 64;
  cl_event last = NULL;
  for (int i = 0; i < d; i++)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, wait && i == d - 1 ? &last : NULL));
  if (last) { /* an in-order queue: everything so far is complete (and harvested by a collector) */
    CHECK(clWaitForEvents(1, &last));
    CHECK(clReleaseEvent(last));
  } else {
    CHECK(clFinish(q));
  }
  for (int i = 0; i < 3; i++) /* in flight when the process dies */
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
  printf("crash: %d dispatches finished, dying by %s\n", d, how);
  fflush(stdout);
  if (strcmp(how, "segv") == 0) {
    signal(SIGSEGV, SIG_DFL);
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
  } else if (strcmp(how, "abort") == 0) {
    abort();
  }
  kill(getpid(), SIGKILL);
  pause();
  return 3;
}
