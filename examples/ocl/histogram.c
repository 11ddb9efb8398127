/* histogram: K dispatches add a read-only data set into 64 bins with atomics, never clearing them (the
 * bins accumulate: a replay that did not restore counts twice; the data, CL_MEM_READ_ONLY, needs no saving).
 * usage: histogram [N [K]]   prints one line with the bin total and a checksum; exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void hist(__global const uint *data, __global uint *bins) {\n"
                         "  uint v = data[get_global_id(0)];\n"
                         "  atomic_inc(&bins[(v ^ (v >> 7)) & 63]);\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "histogram";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 65536;
  int k = argc > 2 ? atoi(argv[2]) : 8;
  if (n == 0 || k < 0) {
    fprintf(stderr, "usage: histogram [N [K]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel kern = ex_kernel(&c, "hist");
  cl_uint *data = malloc(n * sizeof *data), bins[64] = {0};
  if (!data) return 1;
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) { /* xorshift: the same data every run */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    data[i] = x;
  }
  cl_int err;
  cl_mem d = clCreateBuffer(c.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *data, data, &err);
  CHECK(err);
  cl_mem b = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof bins, bins, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof d, &d));
  CHECK(clSetKernelArg(kern, 1, sizeof b, &b));
  for (int i = 0; i < k; i++)
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(c.q, b, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL));
  cl_uint want[64] = {0};
  for (size_t i = 0; i < n; i++)
    want[(data[i] ^ (data[i] >> 7)) & 63] += (cl_uint)k;
  unsigned long long total = 0;
  int ok = 1;
  for (int i = 0; i < 64; i++) {
    total += bins[i];
    ok &= bins[i] == want[i];
  }
  clReleaseMemObject(d);
  clReleaseMemObject(b);
  clReleaseKernel(kern);
  ex_teardown(&c);
  free(data);
  printf("histogram: n=%zu k=%d total=%llu checksum=%016llx %s\n", n, k, total,
         (unsigned long long)ex_fnv(0, bins, sizeof bins), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
