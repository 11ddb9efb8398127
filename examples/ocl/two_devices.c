/* two_devices: runs a loop kernel on every device of the first platform (PoCL with POCL_DEVICES="basic
 * pthread": both), D dispatches each, and sleeps S ms on the host between two dispatches (per-device plans
 * and whole-run counter polling, issue 32). usage: two_devices [ITERS [D [S]]]; prints one checksum line. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <time.h>

static const char *src = "__kernel void spin(__global uint *a, uint n) {\n"
                         "  uint x = a[get_global_id(0)];\n"
                         "  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;\n"
                         "  a[get_global_id(0)] = x;\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "two_devices";
  cl_uint iters = argc > 1 ? (cl_uint)strtoul(argv[1], NULL, 10) : 100000;
  int nd = argc > 2 ? atoi(argv[2]) : 2;
  long sleep_ms = argc > 3 ? atol(argv[3]) : 0;
  cl_platform_id plat;
  cl_device_id devs[2];
  cl_uint ndev = 0;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 2, devs, &ndev));
  uint64_t h = 0;
  enum { N = 64 };
  for (cl_uint d = 0; d < ndev; d++) {
    cl_context ctx = clCreateContext(NULL, 1, &devs[d], NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, devs[d], 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &devs[d], "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "spin", &err);
    CHECK(err);
    cl_uint a[N];
    for (int i = 0; i < N; i++)
      a[i] = (cl_uint)i;
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k, 1, sizeof iters, &iters));
    size_t g = N;
    for (int i = 0; i < nd; i++) {
      if (i && sleep_ms) { /* the host sleeps between two dispatches */
        struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
      }
      CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
      CHECK(clFinish(q));
    }
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL));
    h = ex_fnv(h, a, sizeof a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
  }
  printf("two_devices: %u devices, checksum %016llx\n", ndev, (unsigned long long)h);
  return 0;
}
