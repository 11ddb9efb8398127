/* remap: kernel code unloaded and another object mapped at the same addresses, on purpose (issue 28:
 * "mappings tracked by identity"; PoCL 3.1 keeps every released program's kernel loaded, so it never shows
 * the reuse). Each round dlopens one of the given shared objects (stand-ins for a kernel's code in PoCL's
 * cache, each exporting `double spin(double cpu_ms)`), runs its spin for CPU_MS of CPU time while a dispatch
 * of the OpenCL kernel `tune` is running on the device (the kernel waits for the host's word, so the spin
 * lies inside the dispatch's device window), then dlcloses it. The next object usually lands where the last
 * one was; the program says how many rounds reused the previous round's address. usage: remap CPU_MS
 * OBJECT...   (POCL_DEVICES=pthread: the kernel runs beside the host thread) prints "round R: ..." per round
 * and "reused N of M", exits 0 when every round ran. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <dlfcn.h>
#include <time.h>

/* f[0] set by the kernel when it runs; it returns when the host sets f[1] (or after a bound of iterations) */
static const char *src = "__kernel void tune(__global volatile int *f) {\n"
                         "  f[0] = 1;\n"
                         "  for (ulong i = 0; i < 200000000000UL && f[1] == 0; i++) {}\n"
                         "  f[2] = 7;\n"
                         "}\n";

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
  ex_name = "remap";
  double cpu_ms = argc > 2 ? atof(argv[1]) : 0;
  if (argc < 3 || cpu_ms <= 0 || cpu_ms > 10000) {
    fprintf(stderr, "usage: remap CPU_MS OBJECT...   (CPU_MS from 1 to 10000)\n");
    return 2;
  }
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel k = ex_kernel(&c, "tune");
  cl_int err;
  cl_mem b = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 4 * sizeof(cl_int), NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof b, &b));
  /* mapped for the whole run: on a CPU device the kernel and the host share this memory */
  volatile cl_int *f = clEnqueueMapBuffer(c.q, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4 * sizeof(cl_int),
                                          0, NULL, NULL, &err);
  CHECK(err);
  int rounds = argc - 2, reused = 0;
  void *last = NULL;
  for (int r = 0; r < rounds; r++) {
    void *h = dlopen(argv[2 + r], RTLD_NOW | RTLD_LOCAL);
    double (*spin)(double) = h ? (double (*)(double))dlsym(h, "spin") : NULL;
    if (!spin) {
      fprintf(stderr, "remap: %s: %s\n", argv[2 + r], dlerror());
      return 1;
    }
    Dl_info di;
    void *base = dladdr((void *)spin, &di) ? di.dli_fbase : NULL;
    reused += r > 0 && base == last;
    last = base;
    f[0] = f[1] = f[2] = 0;
    size_t one = 1;
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(c.q, k, 1, NULL, &one, &one, 0, NULL, &ev));
    CHECK(clFlush(c.q));
    for (int w = 0; !f[0]; w++) { /* the kernel is running: its device window has begun */
      if (w == 60000) {
        fprintf(stderr, "remap: the kernel did not start within a minute\n");
        return 1;
      }
      nap_ms(1);
    }
    double v = spin(cpu_ms);
    f[1] = 1; /* the spin is over: the kernel may end */
    CHECK(clWaitForEvents(1, &ev));
    cl_int st;
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(clReleaseEvent(ev));
    if (st != CL_COMPLETE || f[2] != 7) {
      fprintf(stderr, "remap: round %d: the kernel did not complete\n", r);
      return 1;
    }
    printf("round %d: %s\n", r, v != 0 ? "spun" : "idle");
    dlclose(h);
  }
  CHECK(clEnqueueUnmapMemObject(c.q, b, (void *)f, 0, NULL, NULL));
  CHECK(clFinish(c.q));
  printf("reused %d of %d\n", reused, rounds - 1);
  CHECK(clReleaseMemObject(b));
  CHECK(clReleaseKernel(k));
  CHECK(clReleaseProgram(c.prog));
  CHECK(clReleaseCommandQueue(c.q));
  CHECK(clReleaseContext(c.ctx));
  return 0;
}
