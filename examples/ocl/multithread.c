/* multithread: T threads share one context and device, each with its own command queue, kernel and buffer,
 * and each enqueues D dispatches; a test workload for the collector's per-thread rings. Plain OpenCL 1.2.
 * usage: multithread [T [D]]   prints one line, exits 0 when every thread's buffer is right. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "__kernel void mt_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "multithread: %s failed: %d\n", #x, e_);                                               \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

#define LEN 256
static cl_context ctx;
static cl_device_id dev;
static cl_program prog;
static int dispatches;

static void *worker(void *arg) {
  long id = (long)arg;
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_kernel k = clCreateKernel(prog, "mt_inc", &err);
  CHECK(err);
  int host[LEN] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = LEN, l = 16;
  for (int i = 0; i < dispatches; i++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    if (i % 100 == 99) CHECK(clFinish(q));
  }
  CHECK(clFinish(q));
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  long bad = 0;
  for (int i = 0; i < LEN; i++)
    if (host[i] != dispatches) bad++;
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseCommandQueue(q);
  if (bad) fprintf(stderr, "multithread: thread %ld: %ld wrong\n", id, bad);
  return (void *)bad;
}

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  dispatches = argc > 2 ? atoi(argv[2]) : 100;
  if (nthreads < 1 || nthreads > 1024 || dispatches < 0) {
    fprintf(stderr, "usage: multithread [T [D]]\n");
    return 2;
  }
  cl_platform_id plat;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  if (!th) return 1;
  for (long i = 0; i < nthreads; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
      fprintf(stderr, "multithread: cannot create thread %ld\n", i);
      return 1;
    }
  long bad = 0;
  for (int i = 0; i < nthreads; i++) {
    void *r;
    pthread_join(th[i], &r);
    bad += (long)r;
  }
  free(th);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  printf("multithread: threads=%d dispatches=%d %s\n", nthreads, dispatches, bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
