/* partial_write: K dispatches of a kernel that increments WRITE bytes in the middle of a BYTES buffer, in
 * place (kernel replay must restore exactly those bytes), through a plain buffer, a CL_MEM_USE_HOST_PTR
 * buffer, an SVM allocation, a sub-buffer, or two aliasing arguments; the workload of write-tracking tests
 * and benchmarks. With "oob" the kernel writes far outside its buffer (a real crash); with "trap" the program
 * handles SIGSEGV itself (prints "trapped", exits 3) and ends with a fault of its own: a profiler must leave
 * both as they are. Prints one line with ns per dispatch (K timed after one untimed dispatch) and a checksum;
 * exits 0 when the result is right.
 * With "between" the program changes the buffer between dispatches itself: through a mapped pointer (with a
 * read() from a pipe, a system call writing into it), clEnqueueWriteBuffer and clEnqueueFillBuffer; with
 * "between trap" its SIGSEGV handler is installed after the first dispatch.
 * usage: partial_write BYTES WRITE K [buffer|host|sub|oob [trap|between|between trap]] (svm, alias: no
 * between)
 */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 200
#include "ocl_common.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Between two dispatches, step `it`: the written part changed by the program itself (want follows). */
static void between(ex_cl *c, cl_mem buf, size_t n, cl_uint off, size_t w, int it, cl_int *want,
                    cl_int *tmp) {
  cl_int err = CL_SUCCESS;
  if (it % 3 == 0) { /* mapped, and written by a system call: read() from a pipe */
    cl_int *m = clEnqueueMapBuffer(c->q, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n * sizeof *m, 0, NULL,
                                   NULL, &err);
    CHECK(err);
    for (size_t i = 0; i < w; i++)
      tmp[i] = m[off + i] + 7;
    int fd[2];
    if (pipe(fd) != 0) exit(1);
    for (size_t done = 0; done < w * sizeof *tmp;) { /* in pieces of at most a pipe's capacity */
      size_t part = w * sizeof *tmp - done > 32768 ? 32768 : w * sizeof *tmp - done;
      if (write(fd[1], (char *)tmp + done, part) != (ssize_t)part ||
          read(fd[0], (char *)(m + off) + done, part) != (ssize_t)part) {
        perror("partial_write: read into the mapped buffer");
        exit(1);
      }
      done += part;
    }
    close(fd[0]);
    close(fd[1]);
    CHECK(clEnqueueUnmapMemObject(c->q, buf, m, 0, NULL, NULL));
    for (size_t i = 0; i < w; i++)
      want[off + i] += 7;
  } else if (it % 3 == 1) { /* read, changed, written back */
    CHECK(clEnqueueReadBuffer(c->q, buf, CL_TRUE, off * sizeof *tmp, w * sizeof *tmp, tmp, 0, NULL, NULL));
    for (size_t i = 0; i < w; i++)
      tmp[i] += 3;
    CHECK(clEnqueueWriteBuffer(c->q, buf, CL_TRUE, off * sizeof *tmp, w * sizeof *tmp, tmp, 0, NULL, NULL));
    for (size_t i = 0; i < w; i++)
      want[off + i] += 3;
  } else if (off >= 16) { /* a fill before the written part */
    cl_int v = 11 + it;
    CHECK(clEnqueueFillBuffer(c->q, buf, &v, sizeof v, 0, 16 * sizeof v, 0, NULL, NULL));
    for (size_t i = 0; i < 16; i++)
      want[i] = v;
  }
  CHECK(clFinish(c->q));
}

static int *volatile nowhere; /* NULL */

static void trapped(int sig) {
  (void)sig;
  static const char msg[] = "partial_write: trapped\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

static const char *src =
    "__kernel void inc(__global int *a, uint off) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[off + i] += 1 + (int)(i & 3);\n"
    "}\n"
    "__kernel void inc2(__global int *a, __global int *b, uint off, uint nh) {\n" /* b aliases a */
    "  size_t i = get_global_id(0);\n"
    "  a[off + i] += 1 + (int)(i & 3);\n"
    "  if (i < nh) b[off + i] ^= 5;\n" /* the same int, through the other argument */
    "}\n";

int main(int argc, char **argv) {
  ex_name = "partial_write";
  size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 65536;
  size_t wbytes = argc > 2 ? strtoull(argv[2], NULL, 10) : 4096;
  int k = argc > 3 ? atoi(argv[3]) : 4;
  const char *mode = argc > 4 ? argv[4] : "buffer";
  size_t n = bytes / sizeof(cl_int), w = wbytes / sizeof(cl_int);
  if (n == 0 || w == 0 || w > n || k < 0 ||
      (strcmp(mode, "buffer") && strcmp(mode, "host") && strcmp(mode, "svm") && strcmp(mode, "sub") &&
       strcmp(mode, "alias") && strcmp(mode, "oob"))) {
    fprintf(stderr, "usage: partial_write BYTES WRITE K [buffer|host|svm|sub|alias|oob [trap]]\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  int btw = argc > 5 && !strcmp(argv[5], "between");
  int trap = (argc > 5 && !strcmp(argv[5], "trap")) || (btw && argc > 6 && !strcmp(argv[6], "trap"));
  if (btw && (!strcmp(mode, "svm") || !strcmp(mode, "alias"))) {
    fprintf(stderr, "partial_write: 'between' is for buffer, host, sub and oob\n");
    return 2;
  }
  struct sigaction trap_sa;
  memset(&trap_sa, 0, sizeof trap_sa);
  trap_sa.sa_handler = trapped;
  if (trap && !btw) { /* after the runtime's own set-up (its compiler may install handlers of its own) */
    sigaction(SIGSEGV, &trap_sa, NULL);
  }
  cl_int *h = malloc(n * sizeof *h), *want = malloc(n * sizeof *want), *tmp = malloc(n * sizeof *tmp);
  if (!h || !want || !tmp) return 1;
  for (size_t i = 0; i < n; i++)
    want[i] = h[i] = (cl_int)(i * 2654435761u % 100003);
  cl_uint off = (cl_uint)((n - w) / 2 + ((n - w) / 2 > 3 ? 3 : 0)); /* never page-aligned */
  if (off + w > n) off = (cl_uint)(n - w);
  cl_uint align_bits = 0;
  CHECK(clGetDeviceInfo(c.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
  size_t align = align_bits / 8 ? align_bits / 8 : 128;
  cl_int err = CL_SUCCESS;
  cl_mem buf = NULL, sub = NULL, arg = NULL;
  cl_int *svm = NULL;
  cl_kernel kern = ex_kernel(&c, strcmp(mode, "alias") ? "inc" : "inc2");
  cl_uint koff = off;
  if (!strcmp(mode, "svm")) {
    cl_device_svm_capabilities caps = 0;
    if (clGetDeviceInfo(c.dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) != CL_SUCCESS ||
        !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) ||
        !(svm = clSVMAlloc(c.ctx, CL_MEM_READ_WRITE, n * sizeof *svm, 0))) {
      printf("partial_write: skipped (no SVM on this device)\n");
      return 0;
    }
    CHECK(clEnqueueSVMMap(c.q, CL_TRUE, CL_MAP_WRITE, svm, n * sizeof *svm, 0, NULL, NULL));
    memcpy(svm, h, n * sizeof *svm);
    CHECK(clEnqueueSVMUnmap(c.q, svm, 0, NULL, NULL));
    CHECK(clSetKernelArgSVMPointer(kern, 0, svm));
  } else {
    int host = !strcmp(mode, "host");
    buf = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR),
                         n * sizeof *h, h, &err);
    CHECK(err);
    arg = buf;
    if (!strcmp(mode,
                "sub")) { /* the sub-buffer starts at the first aligned offset before the written part */
      size_t origin = (size_t)off * sizeof(cl_int) / align * align;
      cl_buffer_region reg = {origin, n * sizeof *h - origin};
      sub = clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
      CHECK(err);
      arg = sub;
      koff = (cl_uint)(off - origin / sizeof(cl_int));
    }
    CHECK(clSetKernelArg(kern, 0, sizeof arg, &arg));
  }
  if (!strcmp(mode, "oob")) koff = 0x7fffffffu; /* 8 GiB past the buffer: no memory there */
  cl_uint half = (cl_uint)(w / 2);
  if (!strcmp(mode, "alias")) {
    CHECK(clSetKernelArg(kern, 1, sizeof arg, &arg));
    CHECK(clSetKernelArg(kern, 2, sizeof koff, &koff));
    CHECK(clSetKernelArg(kern, 3, sizeof half, &half));
  } else {
    CHECK(clSetKernelArg(kern, 1, sizeof koff, &koff));
  }
  struct timespec t0, t1; /* the first dispatch (the runtime's first use of the kernel) is not timed */
  CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &w, NULL, 0, NULL, NULL));
  CHECK(clFinish(c.q));
  if (trap && btw) /* after a dispatch: the profiler's tracking may already be in place */
    sigaction(SIGSEGV, &trap_sa, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int it = 0; it < k; it++) {
    if (btw) between(&c, buf, n, off, w, it, want, tmp);
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &w, NULL, 0, NULL, NULL));
  }
  CHECK(clFinish(c.q));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (int it = 0; it <= k; it++)
    for (size_t i = 0; i < w; i++) {
      want[off + i] += 1 + (cl_int)(i & 3);
      if (!strcmp(mode, "alias") && i < half) want[off + i] ^= 5;
    }
  if (svm) {
    CHECK(clEnqueueSVMMap(c.q, CL_TRUE, CL_MAP_READ, svm, n * sizeof *svm, 0, NULL, NULL));
    memcpy(h, svm, n * sizeof *h);
    CHECK(clEnqueueSVMUnmap(c.q, svm, 0, NULL, NULL));
    CHECK(clFinish(c.q));
  } else {
    CHECK(clEnqueueReadBuffer(c.q, buf, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
  }
  int ok = memcmp(h, want, n * sizeof *h) == 0;
  double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (k ? k : 1);
  printf("partial_write: bytes=%zu write=%zu k=%d mode=%s ns_per_dispatch=%.0f checksum=%016llx %s\n",
         n * sizeof *h, w * sizeof *h, k, mode, ns, (unsigned long long)ex_fnv(0, h, n * sizeof *h),
         ok ? "ok" : "FAILED");
  if (sub) clReleaseMemObject(sub);
  if (buf) clReleaseMemObject(buf);
  if (svm) clSVMFree(c.ctx, svm);
  clReleaseKernel(kern);
  ex_teardown(&c);
  free(h);
  free(want);
  free(tmp);
  if (trap) { /* the program's own fault, for its own handler */
    fflush(stdout);
    *nowhere = 1;
  }
  return ok ? 0 : 1;
}
