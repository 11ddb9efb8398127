/* A stand-in for a kernel's code in PoCL's cache (tests/sample/test_sample_remap.sh, examples/ocl/remap.c):
 * spin() burns cpu_ms of its thread's CPU time in this object's own code. Built once per round with another
 * ROUND (-DROUND=N): each object a different file of the same size. */
/* SPDX-License-Identifier: MIT */
#include <time.h>

#ifndef ROUND
#define ROUND 1
#endif

static double cpu_ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double spin(double cpu_ms);
double spin(double cpu_ms) {
  volatile double x = ROUND;
  double end = cpu_ms_now() + cpu_ms;
  do {
    for (int i = 0; i < 200000; i++) /* ~0.2-1 ms: most samples here, not in the clock's call */
      x = x * 1.0000001 + (double)ROUND;
  } while (cpu_ms_now() < end);
  return x;
}
