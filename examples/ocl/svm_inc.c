/* svm_inc: increments a coarse-grained SVM allocation in place through clSetKernelArgSVMPointer, the pointer
 * passed into the middle of the allocation (the replay saves the whole allocation). Where the platform has
 * no SVM it prints a "skipped" line instead. usage: svm_inc [N [K]]   exits 0 when right or skipped. */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 200
#include "ocl_common.h"

#include <string.h>

static const char *src = "__kernel void svm_inc(__global int *a) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  a[i] += (int)(i & 7) + 1;\n"
                         "  a[-1] = 7;\n" /* the element before the pointer: still the same allocation */
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "svm_inc";
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  int k = argc > 2 ? atoi(argv[2]) : 5;
  if (n == 0 || k < 0) {
    fprintf(stderr, "usage: svm_inc [N [K]]\n");
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_device_svm_capabilities caps = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) != CL_SUCCESS ||
      !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
    printf("svm_inc: skipped (no SVM on this device)\n");
    return 0;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel kern = ex_kernel(&c, "svm_inc");
  size_t total = n + 16;
  cl_int *a = clSVMAlloc(c.ctx, CL_MEM_READ_WRITE, total * sizeof *a, 0);
  if (!a) {
    printf("svm_inc: skipped (clSVMAlloc failed)\n");
    return 0;
  }
  CHECK(clEnqueueSVMMap(c.q, CL_TRUE, CL_MAP_WRITE, a, total * sizeof *a, 0, NULL, NULL));
  for (size_t i = 0; i < total; i++)
    a[i] = (cl_int)(i * 7 % 1000);
  CHECK(clEnqueueSVMUnmap(c.q, a, 0, NULL, NULL));
  CHECK(clSetKernelArgSVMPointer(kern, 0, a + 8));
  for (int it = 0; it < k; it++)
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(clEnqueueSVMMap(c.q, CL_TRUE, CL_MAP_READ, a, total * sizeof *a, 0, NULL, NULL));
  int ok = 1;
  for (size_t i = 0; i < total; i++) {
    cl_int want = (cl_int)(i * 7 % 1000);
    if (i == 7 && k > 0) want = 7;
    if (i >= 8 && i < 8 + n) want += k * (cl_int)(((i - 8) & 7) + 1);
    ok &= a[i] == want;
  }
  uint64_t h = ex_fnv(0, a, total * sizeof *a);
  CHECK(clEnqueueSVMUnmap(c.q, a, 0, NULL, NULL));
  CHECK(clFinish(c.q));
  clSVMFree(c.ctx, a);
  clReleaseKernel(kern);
  ex_teardown(&c);
  printf("svm_inc: n=%zu k=%d checksum=%016llx %s\n", n, k, (unsigned long long)h, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
