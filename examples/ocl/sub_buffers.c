/* sub_buffers: one parent buffer of four regions; kernels increment a sub-buffer in place, and write the
 * parent and a sub-buffer of it in the same dispatch (aliased memory: the replay saves the parent's range
 * once), reading a read-only sub-buffer. usage: sub_buffers [N [K]]   prints one line with a checksum; exits
 * 0 when right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src = "__kernel void inc_sub(__global int *s) { s[get_global_id(0)] += 1; }\n"
                         "__kernel void both(__global int *p, __global int *s, __global const int *r) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  p[i] = p[i] * 2 + r[i];\n"
                         "  s[i] += 3;\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "sub_buffers";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096; /* ints per region, rounded to the alignment */
  int k = argc > 2 ? atoi(argv[2]) : 6;
  if (n == 0 || k < 0) {
    fprintf(stderr, "usage: sub_buffers [N [K]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_uint align_bits = 0;
  CHECK(clGetDeviceInfo(c.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
  size_t align = align_bits / 8 ? align_bits / 8 : 128, rb = n * sizeof(cl_int);
  rb = (rb + align - 1) / align * align;
  n = rb / sizeof(cl_int);
  cl_int *h = malloc(4 * rb), *w = malloc(4 * rb);
  if (!h || !w) return 1;
  for (size_t i = 0; i < 4 * n; i++)
    w[i] = h[i] = (cl_int)(i % 977);
  cl_int err;
  cl_mem parent = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4 * rb, h, &err);
  CHECK(err);
  cl_mem sub[4];
  for (int r = 1; r < 4; r++) {
    cl_buffer_region reg = {(size_t)r * rb, rb};
    sub[r] =
        clCreateSubBuffer(parent, r == 3 ? CL_MEM_READ_ONLY : 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
  }
  cl_kernel inc = ex_kernel(&c, "inc_sub"), both = ex_kernel(&c, "both");
  CHECK(clSetKernelArg(inc, 0, sizeof sub[1], &sub[1]));
  CHECK(clSetKernelArg(both, 0, sizeof parent, &parent));
  CHECK(clSetKernelArg(both, 1, sizeof sub[2], &sub[2]));
  CHECK(clSetKernelArg(both, 2, sizeof sub[3], &sub[3]));
  for (int it = 0; it < k; it++) {
    CHECK(clEnqueueNDRangeKernel(c.q, inc, 1, NULL, &n, NULL, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
      w[n + i] += 1;
    CHECK(clEnqueueNDRangeKernel(c.q, both, 1, NULL, &n, NULL, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++) {
      w[i] = w[i] * 2 + w[3 * n + i];
      w[2 * n + i] += 3;
    }
  }
  CHECK(clEnqueueReadBuffer(c.q, parent, CL_TRUE, 0, 4 * rb, h, 0, NULL, NULL));
  int ok = 1;
  for (size_t i = 0; i < 4 * n; i++)
    ok &= h[i] == w[i];
  for (int r = 1; r < 4; r++)
    clReleaseMemObject(sub[r]);
  clReleaseMemObject(parent);
  clReleaseKernel(inc);
  clReleaseKernel(both);
  ex_teardown(&c);
  printf("sub_buffers: n=%zu k=%d checksum=%016llx %s\n", n, k, (unsigned long long)ex_fnv(0, h, 4 * rb),
         ok ? "ok" : "FAILED");
  free(h);
  free(w);
  return ok ? 0 : 1;
}
