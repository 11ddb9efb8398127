/* crash: runs D dispatches and clFinish (or, with "wait", waits for the last one's event), enqueues MORE
 * (default 3) more, one every EVERY ms (default 0), waits LINGER ms (default 0) without any OpenCL call, then
 * dies as asked (segfault, abort or SIGKILL), to test that the collector's log keeps every dispatch harvested
 * before the death.
 * usage: crash segv|abort|kill [D [wait|finish [LINGER [MORE [EVERY]]]]]   prints one line before dying;
 * never exits normally. */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *src = "__kernel void crash_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "";
  int d = argc > 2 ? atoi(argv[2]) : 25;
  int wait = argc > 3 && strcmp(argv[3], "wait") == 0;
  int linger = argc > 4 ? atoi(argv[4]) : 0;
  int more = argc > 5 ? atoi(argv[5]) : 3, every = argc > 6 ? atoi(argv[6]) : 0;
  if ((strcmp(how, "segv") && strcmp(how, "abort") && strcmp(how, "kill")) || d < 0 || linger < 0 ||
      more < 0 || every < 0) {
    fprintf(stderr, "usage: crash segv|abort|kill [D [wait|finish [LINGER_MS [MORE [EVERY_MS]]]]]\n");
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
  for (int i = 0; i < more; i++) { /* in flight when the process dies */
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    struct timespec ts = {every / 1000, (long)(every % 1000) * 1000000};
    if (every > 0) nanosleep(&ts, NULL);
  }
  if (linger > 0) { /* no OpenCL call: only a background harvester can write the last three meanwhile */
    CHECK(clFlush(q));
    struct timespec ts = {linger / 1000, (long)(linger % 1000) * 1000000};
    nanosleep(&ts, NULL);
  }
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
