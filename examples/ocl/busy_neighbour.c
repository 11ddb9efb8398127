/* busy_neighbour: one thread enqueues D dispatches of a one-work-item kernel that runs a fixed recurrence of
 * N steps, with clFinish after each, while another thread of the application burns CPU and takes page faults
 * (it maps, touches and unmaps 16 fresh pages at a time) the whole time; the
 * workload of tests/replay/test_caller_only.sh (which threads a dispatch's counting window holds).
 * usage: busy_neighbour [D [N]]   prints one line, exits 0 when the kernel's result is right. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static const char *src = "__kernel void walk(__global uint *a, uint n) {\n"
                         "  uint x = a[0];\n"
                         "  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;\n"
                         "  a[1] = x;\n"
                         "}\n";

static atomic_int stop;
static void *burn(void *arg) {
  volatile unsigned x = 1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    for (int i = 0; i < 10000; i++)
      x = x * 1664525u + 1013904223u;
    char *p = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) continue;
    for (int i = 0; i < 16; i++)
      p[i * 4096] = (char)x;
    munmap(p, 16 * 4096);
  }
  (void)arg;
  return NULL;
}

int main(int argc, char **argv) {
  long d = argc > 1 ? atol(argv[1]) : 10;
  long n = argc > 2 ? atol(argv[2]) : 2000000;
  if (d < 1 || d > 1000000 || n < 1 || n > 2000000000L) {
    fprintf(stderr, "usage: busy_neighbour [D [N]]\n");
    return 2;
  }
  ex_name = "busy_neighbour";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_int err;
  cl_kernel k = clCreateKernel(cl.prog, "walk", &err);
  CHECK(err);
  cl_uint init[2] = {7, 0}, steps = (cl_uint)n;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  CHECK(clSetKernelArg(k, 1, sizeof steps, &steps));
  pthread_t th;
  if (pthread_create(&th, NULL, burn, NULL) != 0) return 1;
  size_t g = 1;
  for (long i = 0; i < d; i++) {
    CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
  }
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
  cl_uint out[2] = {0, 0};
  CHECK(clEnqueueReadBuffer(cl.q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  unsigned x = init[0];
  for (long i = 0; i < n; i++)
    x = x * 1664525u + 1013904223u;
  clReleaseMemObject(m);
  clReleaseKernel(k);
  ex_teardown(&cl);
  int ok = out[1] == x;
  printf("busy_neighbour: dispatches=%ld steps=%ld %s\n", d, n, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
