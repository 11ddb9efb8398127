/* image_inc: increments every pixel of a 2-D image in place, K times, then prints a checksum and "ok" when it
 * equals K + the start value everywhere. The collector cannot save images: a run that executed a dispatch
 * twice (a warm-up without its memory restored) prints another result (tests/replay/test_known_work.sh).
 * usage: image_inc [W [K]]   (defaults 64 4; the image is W x W, CL_R / CL_UNSIGNED_INT32) */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 200
#include "ocl_common.h"

static const char *src = "__kernel void inc(__read_write image2d_t im) {\n"
                         "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
                         "  write_imageui(im, p, read_imageui(im, p) + (uint4)(1, 0, 0, 0));\n"
                         "}\n";

int main(int argc, char **argv) {
  ex_name = "image_inc";
  size_t w = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
  int k = argc > 2 ? atoi(argv[2]) : 4;
  if (!w || w > 4096 || k < 1) {
    fprintf(stderr, "usage: image_inc [W [K]]   (W 1-4096, K at least 1)\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel inc = ex_kernel(&c, "inc");
  cl_image_format fmt = {CL_R, CL_UNSIGNED_INT32};
  cl_uint *px = malloc(w * w * sizeof *px);
  if (!px) return 1;
  for (size_t i = 0; i < w * w; i++)
    px[i] = (cl_uint)i;
  cl_int err;
  cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = w};
  cl_mem img = clCreateImage(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &fmt, &desc, px, &err);
  CHECK(err);
  CHECK(clSetKernelArg(inc, 0, sizeof img, &img));
  size_t g[2] = {w, w}, origin[3] = {0, 0, 0}, region[3] = {w, w, 1};
  for (int r = 0; r < k; r++)
    CHECK(clEnqueueNDRangeKernel(c.q, inc, 2, NULL, g, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadImage(c.q, img, CL_TRUE, origin, region, 0, 0, px, 0, NULL, NULL));
  int bad = 0;
  for (size_t i = 0; i < w * w; i++)
    bad |= px[i] != (cl_uint)i + (cl_uint)k;
  printf("image_inc: %zux%zu k=%d checksum=%016llx %s\n", w, w, k,
         (unsigned long long)ex_fnv(0, px, w * w * sizeof *px), bad ? "WRONG" : "ok");
  free(px);
  return bad;
}
