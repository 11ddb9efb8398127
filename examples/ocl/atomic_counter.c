/* atomic_counter: every work-item takes a ticket from a global atomic counter and adds its id to a running
 * sum, K dispatches without resetting them (not idempotent: a replay that did not restore counts twice).
 * usage: atomic_counter [N [K]]   prints one line with the counters and a checksum; exits 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void take_ticket(__global int *ctr, __global int *last) {\n"
                         "  int t = atomic_inc(&ctr[0]);\n"
                         "  atomic_add(&ctr[1], (int)get_global_id(0));\n"
                         "  atomic_max(&last[0], t);\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "atomic_counter";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  int k = argc > 2 ? atoi(argv[2]) : 10;
  if (n == 0 || n > 100000 || k < 0) {
    fprintf(stderr, "usage: atomic_counter [N (1..100000) [K]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel kern = ex_kernel(&c, "take_ticket");
  cl_int err, zero[2] = {0, 0}, minus1 = -1;
  cl_mem ctr = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
  CHECK(err);
  cl_mem last = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof minus1, &minus1, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof ctr, &ctr));
  CHECK(clSetKernelArg(kern, 1, sizeof last, &last));
  for (int i = 0; i < k; i++)
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
  cl_int got[2], mx;
  CHECK(clEnqueueReadBuffer(c.q, ctr, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(c.q, last, CL_TRUE, 0, sizeof mx, &mx, 0, NULL, NULL));
  long long want0 = (long long)k * (long long)n, want1 = (long long)k * (long long)(n * (n - 1) / 2);
  int ok = got[0] == want0 && got[1] == (cl_int)want1 && mx == got[0] - 1;
  uint64_t h = ex_fnv(ex_fnv(0, got, sizeof got), &mx, sizeof mx);
  clReleaseMemObject(ctr);
  clReleaseMemObject(last);
  clReleaseKernel(kern);
  ex_teardown(&c);
  printf("atomic_counter: n=%zu k=%d tickets=%d sum=%d max=%d checksum=%016llx %s\n", n, k, got[0], got[1],
         mx, (unsigned long long)h, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
