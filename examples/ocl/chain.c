/* chain: three kernels where each one's output feeds the next, K rounds: b = 2a + 1; c += b; a = c mod 1021
 * (every buffer is both read and written across the chain; any pass that ran on unrestored memory shows).
 * usage: chain [N [K [S]]]   prints one line with a checksum; exits 0 when right. S (0..2) starts every round
 * at step S+1 instead (another order of dispatches, for the matching tests of application replay). */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void step1(__global const int *a, __global int *b) {\n"
                         "  size_t i = get_global_id(0); b[i] = 2 * a[i] + 1; }\n"
                         "__kernel void step2(__global const int *b, __global int *c) {\n"
                         "  size_t i = get_global_id(0); c[i] += b[i]; }\n"
                         "__kernel void step3(__global const int *c, __global int *a) {\n"
                         "  size_t i = get_global_id(0); a[i] = c[i] % 1021; }\n";

int main(int argc, char **argv) {
  ex_name = "chain";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 16384;
  int k = argc > 2 ? atoi(argv[2]) : 5, s0 = argc > 3 ? atoi(argv[3]) : 0;
  if (n == 0 || k < 0 || s0 < 0 || s0 > 2) {
    fprintf(stderr, "usage: chain [N [K [S]]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_int *a = malloc(n * sizeof *a), *b = calloc(n, sizeof *b), *cc = calloc(n, sizeof *cc);
  cl_int *wa = malloc(n * sizeof *a), *wb = calloc(n, sizeof *b), *wc = calloc(n, sizeof *cc);
  if (!a || !b || !cc || !wa || !wb || !wc) return 1;
  for (size_t i = 0; i < n; i++)
    wa[i] = a[i] = (cl_int)(i % 313);
  cl_int err;
  cl_mem m[3];
  cl_int *init[3] = {a, b, cc};
  for (int j = 0; j < 3; j++) {
    m[j] = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, init[j], &err);
    CHECK(err);
  }
  cl_kernel s[3] = {ex_kernel(&c, "step1"), ex_kernel(&c, "step2"), ex_kernel(&c, "step3")};
  for (int j = 0; j < 3; j++) { /* step j reads m[j], writes m[(j+1)%3] */
    CHECK(clSetKernelArg(s[j], 0, sizeof m[j], &m[j]));
    CHECK(clSetKernelArg(s[j], 1, sizeof m[(j + 1) % 3], &m[(j + 1) % 3]));
  }
  for (int it = 0; it < k; it++) {
    for (int j = 0; j < 3; j++) {
      int st = (s0 + j) % 3;
      CHECK(clEnqueueNDRangeKernel(c.q, s[st], 1, NULL, &n, NULL, 0, NULL, NULL));
      for (size_t i = 0; i < n; i++) {
        if (st == 0) wb[i] = 2 * wa[i] + 1;
        if (st == 1) wc[i] += wb[i];
        if (st == 2) wa[i] = wc[i] % 1021;
      }
    }
  }
  uint64_t h = 0;
  int ok = 1;
  cl_int *want[3] = {wa, wb, wc};
  for (int j = 0; j < 3; j++) {
    CHECK(clEnqueueReadBuffer(c.q, m[j], CL_TRUE, 0, n * sizeof *a, init[j], 0, NULL, NULL));
    h = ex_fnv(h, init[j], n * sizeof *a);
    for (size_t i = 0; i < n; i++)
      ok &= init[j][i] == want[j][i];
    clReleaseMemObject(m[j]);
    clReleaseKernel(s[j]);
  }
  ex_teardown(&c);
  printf("chain: n=%zu k=%d checksum=%016llx %s\n", n, k, (unsigned long long)h, ok ? "ok" : "FAILED");
  free(a);
  free(b);
  free(cc);
  free(wa);
  free(wb);
  free(wc);
  return ok ? 0 : 1;
}
