/* reload: programs built, run once and released one after the other, as an auto-tuner does (CLBlast's
 * tuners build one program per configuration, each with the same kernel name): PoCL loads each program's
 * kernel code and unloads it at the release, so the next one is often mapped where the last one was. For
 * `hubprof sample` (tests/sample/test_sample_reload.sh): every sample must go to the code that ran.
 * usage: reload [ROUNDS [ITERS]]   (defaults 6 and 3000000); prints one checksum per round. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_common.h"

#include <string.h>

/* One kernel name, a different program each round (the constant K differs: another build, another .so) */
static const char *fmt = "__kernel void tune(__global uint *o, uint iters) {\n"
                         "  uint x = (uint)get_global_id(0) + %uu;\n"
                         "  for (uint i = 0; i < iters; i++) { x = x * 1664525u + %uu; x ^= x >> 7; }\n"
                         "  o[get_global_id(0)] = x;\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "reload";
  int rounds = argc > 1 ? atoi(argv[1]) : 6;
  unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 10) : 3000000;
  if (rounds < 1 || !iters || iters > 0xffffffffUL) {
    fprintf(stderr, "usage: reload [ROUNDS [ITERS]]   (each at least 1)\n");
    return 2;
  }
  ex_cl c;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &c.plat, NULL));
  CHECK(clGetDeviceIDs(c.plat, CL_DEVICE_TYPE_ALL, 1, &c.dev, NULL));
  c.ctx = clCreateContext(NULL, 1, &c.dev, NULL, NULL, &err);
  CHECK(err);
  c.q = clCreateCommandQueue(c.ctx, c.dev, 0, &err);
  CHECK(err);
  cl_mem out = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
  CHECK(err);
  cl_uint it = (cl_uint)iters;
  for (int r = 0; r < rounds; r++) {
    char src[512];
    snprintf(src, sizeof src, fmt, (unsigned)r + 1u, 1013904223u + 2u * (unsigned)r);
    const char *s = src;
    c.prog = clCreateProgramWithSource(c.ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(c.prog, 1, &c.dev, "", NULL, NULL));
    cl_kernel k = ex_kernel(&c, "tune");
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof it, &it));
    size_t one = 1;
    CHECK(clEnqueueNDRangeKernel(c.q, k, 1, NULL, &one, &one, 0, NULL, NULL));
    cl_uint v = 0;
    CHECK(clEnqueueReadBuffer(c.q, out, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
    printf("round %d: %u\n", r, (unsigned)v);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(c.prog)); /* PoCL unloads the kernel's code */
  }
  CHECK(clReleaseMemObject(out));
  CHECK(clReleaseCommandQueue(c.q));
  CHECK(clReleaseContext(c.ctx));
  return 0;
}
