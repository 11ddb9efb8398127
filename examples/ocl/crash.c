/* crash: runs D dispatches and clFinish (or, with "wait", waits for the last one's event), enqueues a few
 * more, then dies as asked (segfault, abort or SIGKILL), to test that the collector's log keeps every
 * dispatch harvested before the death.
 * usage: crash segv|abort|kill [D [wait]]   prints one line before dying; never exits normally. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src = "__kernel void crash_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "";
  int d = argc > 2 ? atoi(argv[2]) : 25;
  int wait = argc > 3 && strcmp(argv[3], "wait") == 0;
  if ((strcmp(how, "segv") && strcmp(how, "abort") && strcmp(how, "kill")) || d < 0) {
    fprintf(stderr, "usage: crash segv|abort|kill [D [wait]]\n");
    return 2;
  }
  ex_name = "crash";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_context ctx = cl.ctx;
  cl_command_queue q = cl.q;
  cl_program prog = cl.prog;
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "crash_inc", &err);
  CHECK(err);
  int h[64] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof h, h, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 64;
  cl_event last = NULL;
  for (int i = 0; i < d; i++)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, wait && i == d - 1 ? &last : NULL));
  if (last) { /* an in-order queue: everything so far is complete (and harvested by a collector) */
    CHECK(clWaitForEvents(1, &last));
    CHECK(clReleaseEvent(last));
  } else {
    CHECK(clFinish(q));
  }
  for (int i = 0; i < 3; i++) /* in flight when the process dies */
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
  printf("crash: %d dispatches finished, dying by %s\n", d, how);
  fflush(stdout);
  if (strcmp(how, "segv") == 0) {
    signal(SIGSEGV, SIG_DFL);
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
  } else if (strcmp(how, "abort") == 0) {
    abort();
  }
  kill(getpid(), SIGKILL);
  pause();
  return 3;
}
