/* same_buffer: one buffer passed as both the input and the output of a kernel (y = 3*y + x with x == y, so
 * y *= 4, wrapping), alternating with dispatches on two distinct buffers; the replay must save the buffer
 * once and restore it once. usage: same_buffer [N [K]]   prints one line with a checksum; exits 0 when right.
 */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void axpy3(__global const uint *x, __global uint *y) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  y[i] = 3u * y[i] + x[i];\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "same_buffer";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 8192;
  int k = argc > 2 ? atoi(argv[2]) : 6;
  if (n == 0 || k < 0) {
    fprintf(stderr, "usage: same_buffer [N [K]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel kern = ex_kernel(&c, "axpy3");
  cl_uint *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *wa = malloc(n * sizeof *a),
          *wb = malloc(n * sizeof *b);
  if (!a || !b || !wa || !wb) return 1;
  for (size_t i = 0; i < n; i++) {
    wa[i] = a[i] = (cl_uint)(i * 2654435761u);
    wb[i] = b[i] = (cl_uint)i;
  }
  cl_int err;
  cl_mem da = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  cl_mem db = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *b, b, &err);
  CHECK(err);
  for (int it = 0; it < k; it++) {
    if (it % 2 == 0) { /* the same buffer twice: a = 3a + a */
      CHECK(clSetKernelArg(kern, 0, sizeof da, &da));
      CHECK(clSetKernelArg(kern, 1, sizeof da, &da));
      for (size_t i = 0; i < n; i++)
        wa[i] = 3u * wa[i] + wa[i];
    } else { /* distinct: b = 3b + a */
      CHECK(clSetKernelArg(kern, 0, sizeof da, &da));
      CHECK(clSetKernelArg(kern, 1, sizeof db, &db));
      for (size_t i = 0; i < n; i++)
        wb[i] = 3u * wb[i] + wa[i];
    }
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
  }
  CHECK(clEnqueueReadBuffer(c.q, da, CL_TRUE, 0, n * sizeof *a, a, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(c.q, db, CL_TRUE, 0, n * sizeof *b, b, 0, NULL, NULL));
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= a[i] == wa[i] && b[i] == wb[i];
  uint64_t h = ex_fnv(ex_fnv(0, a, n * sizeof *a), b, n * sizeof *b);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseKernel(kern);
  ex_teardown(&c);
  free(a);
  free(b);
  free(wa);
  free(wb);
  printf("same_buffer: n=%zu k=%d checksum=%016llx %s\n", n, k, (unsigned long long)h, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
