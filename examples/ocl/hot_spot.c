/* hot_spot: kernels whose hot spots are known by construction, for `hubprof sample` (tests/sample/). `hot`
 * spends its time in one arithmetic loop line and little in one memory line; `ratio` runs two loops whose
 * work is 1 : 3 (each on its own line). Prints a checksum of every result (the same with and without a
 * profiler). usage: hot_spot [-f] [-g | -o OPTIONS] [ITERS [REPS]]   (-f: fork first; the child runs the
 * kernels, then the parent; -g: build with debug information; -o: these build options; defaults 20000000 2)
 */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_common.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Line numbers matter to the tests: keep the loop lines where they are (lines 3, 4, 9 and 10 of src). */
static const char *src =
    "__kernel void hot(__global uint *o, __global const uint *in, uint iters) {\n"
    "  uint x = (uint)get_global_id(0) + 1u;\n"
    "  for (uint i = 0; i < iters; i++) { x = x * 1664525u + 1013904223u; x ^= x >> 7; }\n"
    "  o[get_global_id(0)] = x + in[get_global_id(0)];\n"
    "}\n"
    "__kernel void ratio(__global uint *o, uint iters) {\n"
    "  uint x = (uint)get_global_id(0) + 1u, y = x * 3u;\n"
    "  uint n = iters / 4u;\n"
    "  for (uint i = 0; i < n; i++) { x = x * 1664525u + 1013904223u; x ^= x >> 7; }\n"
    "  for (uint i = 0; i < 3u * n; i++) { y = y * 22695477u + 1u; y ^= y >> 9; }\n"
    "  o[get_global_id(0)] = x ^ y;\n"
    "}\n";

int main(int argc, char **argv) {
  ex_name = "hot_spot";
  int a = 1;
  const char *opts = "";
  int fork_first = a < argc && !strcmp(argv[a], "-f");
  a += fork_first;
  if (a < argc && !strcmp(argv[a], "-g")) opts = "-g", a++;
  if (a + 1 < argc && !strcmp(argv[a], "-o")) opts = argv[a + 1], a += 2; /* any build options */
  unsigned long iters = a < argc ? strtoul(argv[a++], NULL, 10) : 20000000;
  int reps = a < argc ? atoi(argv[a++]) : 2;
  if (!iters || iters > 0xffffffffUL || reps < 1) {
    fprintf(stderr, "usage: hot_spot [-f] [-g | -o OPTIONS] [ITERS [REPS]]   (each at least 1)\n");
    return 2;
  }
  pid_t child = fork_first ? fork() : 0;
  if (child < 0) return 1;
  if (child > 0) { /* the parent: after the child, the same work */
    int st = 0;
    fflush(stdout);
    if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) return 1;
  }
  ex_cl c;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &c.plat, NULL));
  CHECK(clGetDeviceIDs(c.plat, CL_DEVICE_TYPE_ALL, 1, &c.dev, NULL));
  c.ctx = clCreateContext(NULL, 1, &c.dev, NULL, NULL, &err);
  CHECK(err);
  c.q = clCreateCommandQueue(c.ctx, c.dev, 0, &err);
  CHECK(err);
  c.prog = clCreateProgramWithSource(c.ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(c.prog, 1, &c.dev, opts, NULL, NULL));
  cl_kernel hot = ex_kernel(&c, "hot"), ratio = ex_kernel(&c, "ratio");
  cl_uint cus = 1;
  CHECK(clGetDeviceInfo(c.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
  size_t n = cus ? cus : 1, one = 1;
  cl_mem out = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL, &err);
  CHECK(err);
  cl_uint *init = calloc(n, sizeof *init), *v = malloc(n * sizeof *v);
  if (!init || !v) return 1;
  for (size_t i = 0; i < n; i++)
    init[i] = (cl_uint)(i * 7u + 3u);
  cl_mem in = clCreateBuffer(c.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_uint), init, &err);
  CHECK(err);
  cl_uint it = (cl_uint)iters;
  CHECK(clSetKernelArg(hot, 0, sizeof out, &out));
  CHECK(clSetKernelArg(hot, 1, sizeof in, &in));
  CHECK(clSetKernelArg(hot, 2, sizeof it, &it));
  CHECK(clSetKernelArg(ratio, 0, sizeof out, &out));
  CHECK(clSetKernelArg(ratio, 1, sizeof it, &it));
  uint64_t h = 1469598103934665603ull;
  for (int r = 0; r < reps; r++) {
    cl_kernel ks[2] = {hot, ratio};
    for (int k = 0; k < 2; k++) {
      CHECK(clEnqueueNDRangeKernel(c.q, ks[k], 1, NULL, &n, &one, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(c.q, out, CL_TRUE, 0, n * sizeof *v, v, 0, NULL, NULL));
      h = ex_fnv(h, v, n * sizeof *v);
    }
  }
  CHECK(clFinish(c.q));
  printf("hot_spot: %d reps of %lu iterations on %zu work-items, checksum %016llx\n", reps, iters, n,
         (unsigned long long)h);
  free(init);
  free(v);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseKernel(hot);
  clReleaseKernel(ratio);
  ex_teardown(&c);
  return 0;
}
