/* forking: a parent and its forked children use OpenCL: child A forks before the parent touches OpenCL and
 * runs kernels, the parent runs kernels, child B execs /bin/true (no OpenCL), and with "late" child C forks
 * after the parent's OpenCL use and runs kernels (needs a fork-safe runtime: PoCL with POCL_DEVICES=basic).
 * A test workload for the collector's fork handling. Plain OpenCL 1.2.
 * With "quick", child A ends with _exit() (as forked children should: no atexit handlers, no stdio flush),
 * and a vfork child that ends with _exit() at once joins them (it shares the parent's memory meanwhile).
 * usage: forking [D [late|quick]]   prints one line, exits 0 when every process computed the right result. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *src = "__kernel void parent_inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
                         "__kernel void child_inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
                         "__kernel void late_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "forking: %s failed: %d\n", #x, e_);                                                   \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

static void setup(cl_context *ctx, cl_device_id *dev) {
  cl_platform_id plat;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, dev, NULL));
  *ctx = clCreateContext(NULL, 1, dev, NULL, NULL, &err);
  CHECK(err);
}

/* Run kernel `name` d times over a small buffer; 0 when the result is right. */
static int run(cl_context ctx, cl_device_id dev, const char *name, int d) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
  cl_kernel k = clCreateKernel(p, name, &err);
  CHECK(err);
  int h[128] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof h, h, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 128;
  for (int i = 0; i < d; i++)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
  CHECK(clFinish(q));
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < 128; i++)
    bad += h[i] != d;
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseCommandQueue(q);
  return bad != 0;
}

static int wait_ok(pid_t pid, const char *what) {
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "forking: %s failed (status %d)\n", what, st);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  int d = argc > 1 ? atoi(argv[1]) : 10;
  int late = argc > 2 && strcmp(argv[2], "late") == 0;
  int quick = argc > 2 && strcmp(argv[2], "quick") == 0;
  if (d < 0) {
    fprintf(stderr, "usage: forking [D [late|quick]]\n");
    return 2;
  }
  fflush(stdout);
  pid_t a = fork(); /* before any OpenCL in this process */
  if (a < 0) return 1;
  if (a == 0) {
    cl_context ctx;
    cl_device_id dev;
    setup(&ctx, &dev);
    int r = run(ctx, dev, "child_inc", d);
    clReleaseContext(ctx);
    if (quick) _exit(r);
    exit(r);
  }
  cl_context ctx;
  cl_device_id dev;
  setup(&ctx, &dev);
  int bad = run(ctx, dev, "parent_inc", d);
  pid_t b = fork(); /* a child that execs a program without OpenCL */
  if (b < 0) return 1;
  if (b == 0) {
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  if (quick) {
    pid_t v = vfork(); /* the child may call nothing but _exit or exec */
    if (v < 0) return 1;
    if (v == 0) _exit(0);
    if (!wait_ok(v, "child V (vfork)")) bad = 1;
  }
  pid_t c = -1;
  if (late) {
    c = fork(); /* after this process used OpenCL: the child continues with the inherited context */
    if (c < 0) return 1;
    if (c == 0) {
      alarm(60); /* a runtime that is not fork-safe hangs here: fail instead */
      exit(run(ctx, dev, "late_inc", d));
    }
  }
  int ok = !bad;
  ok &= wait_ok(a, "child A");
  ok &= wait_ok(b, "child B (exec /bin/true)");
  if (late) ok &= wait_ok(c, "child C (late)");
  clReleaseContext(ctx);
  printf("forking: dispatches=%d children=%d %s\n", d, late ? 3 : 2, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
