/* api_calls: a fixed, known sequence of OpenCL calls and transfer commands (buffer write/read/copy/fill,
 * rectangles, map/unmap, images), so that `hubprof trace --api` can be checked call by call and byte by
 * byte (tests/api/test_api.sh holds the expected counts). A plain OpenCL 1.2 application.
 * usage: api_calls [N [K]]   N floats per buffer (multiple of 64), K kernel launches; prints one line. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

static const char *src =
    "__kernel void twice(__global float *a) { size_t i = get_global_id(0); a[i] *= 2.0f; }\n";

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4096;
  int k_launches = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 64 || n % 64 || k_launches < 0) {
    fprintf(stderr, "usage: api_calls [N [K]] (N a multiple of 64)\n");
    return 2;
  }
  ex_name = "api_calls";
  ex_cl cl;
  ex_setup(&cl, src); /* clGetPlatformIDs, clGetDeviceIDs, clCreateContext, clCreateCommandQueue,
                         clCreateProgramWithSource, clBuildProgram */
  cl_kernel k = ex_kernel(&cl, "twice");
  cl_int err;
  size_t bytes = n * sizeof(float);
  float *h = malloc(bytes), *back = malloc(bytes);
  if (!h || !back) return 1;
  for (unsigned i = 0; i < n; i++)
    h[i] = (float)i;
  cl_mem a = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CHECK(err);
  cl_mem b = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CHECK(err);
  CHECK(clEnqueueWriteBuffer(cl.q, a, CL_TRUE, 0, bytes, h, 0, NULL, NULL)); /* H2D bytes, blocking */
  cl_event ev;
  CHECK(clEnqueueWriteBuffer(cl.q, b, CL_FALSE, 0, bytes / 2, h, 0, NULL, &ev)); /* H2D bytes/2, event */
  CHECK(clWaitForEvents(1, &ev));
  CHECK(clReleaseEvent(ev));
  float zero = 0.0f;
  CHECK(clEnqueueFillBuffer(cl.q, b, &zero, sizeof zero, bytes / 2, bytes / 2, 0, NULL, NULL)); /* FILL */
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  size_t global = n;
  for (int i = 0; i < k_launches; i++)
    CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clEnqueueCopyBuffer(cl.q, a, b, 0, 0, bytes / 4, 0, NULL, NULL)); /* D2D bytes/4 */
  CHECK(clFinish(cl.q));
  size_t origin[3] = {0, 0, 0}, region[3] = {16 * sizeof(float), 4, 1}; /* 256 bytes */
  CHECK(clEnqueueReadBufferRect(cl.q, b, CL_TRUE, origin, origin, region, 64 * sizeof(float), 0,
                                16 * sizeof(float), 0, back, 0, NULL, NULL)); /* D2H 256 */
  float *m = clEnqueueMapBuffer(cl.q, a, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 1024, 0, NULL, NULL, &err);
  CHECK(err); /* D2H 1024 */
  float first = m[1];
  CHECK(clEnqueueUnmapMemObject(cl.q, a, m, 0, NULL, NULL));                    /* H2D 1024 (the mapping) */
  CHECK(clEnqueueReadBuffer(cl.q, b, CL_FALSE, 0, bytes, back, 0, NULL, NULL)); /* D2H bytes */
  CHECK(clFinish(cl.q));
  /* an 8x8 RGBA8 image: written and read back, 256 bytes each way */
  cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 8};
  cl_mem img = clCreateImage(cl.ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
  CHECK(err);
  unsigned char pix[256], pix2[256];
  for (int i = 0; i < 256; i++)
    pix[i] = (unsigned char)i;
  size_t iregion[3] = {8, 8, 1};
  CHECK(clEnqueueWriteImage(cl.q, img, CL_TRUE, origin, iregion, 0, 0, pix, 0, NULL, NULL)); /* H2D 256 */
  CHECK(clEnqueueReadImage(cl.q, img, CL_TRUE, origin, iregion, 0, 0, pix2, 0, NULL, NULL)); /* D2H 256 */
  unsigned bad = 0;
  float scale = (float)(1u << (k_launches < 20 ? k_launches : 20));
  if (first != scale) bad++;
  for (unsigned i = 0; i < n; i++) {
    float want = i < n / 4 ? (float)i * scale : i < n / 2 ? (float)i : 0.0f;
    if (back[i] != want) bad++;
  }
  for (int i = 0; i < 256; i++)
    if (pix2[i] != pix[i]) bad++;
  clReleaseMemObject(img);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  ex_teardown(&cl); /* clReleaseProgram, clReleaseCommandQueue, clReleaseContext */
  printf("api_calls: n=%u launches=%d bad=%u checksum=%016llx\n", n, k_launches, bad,
         (unsigned long long)ex_fnv(0, back, bytes));
  free(h);
  free(back);
  return bad ? 1 : 0;
}
