/* Benchmark for the trace path's host stamp (src/collector/stamp.h, docs/collector.md "Trace fast path"): CPU
 * ns per call of clock_gettime(CLOCK_MONOTONIC_RAW) through the vDSO against one rdtsc, and the collector's
 * own conversion of a TSC stamp to ns (hpc_stamp_ns and, for a region's begin and end, hpc_stamp_ns2: stamp.c
 * compiled in, calibrated as the collector does), interleaved rounds, median and min-max (thread CPU time:
 * other jobs on the machine do not count). usage: bench_stamp [CALLS [ROUNDS]] */
/* SPDX-License-Identifier: MIT */
#include "../src/collector/stamp.c"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static volatile int64_t sink;

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 9;
  if (n < 1 || rounds < 1 || rounds > 99) return 2;
  /* the TSC when there is one (whatever the clocksource: the conversion is what is timed), with the knots
   * a run's harvests add: one each 2 ms for 20 ms */
  const char *src = hpc_stamp_init(HPC_HAVE_TSC ? "tsc" : "clock");
  for (int64_t end = hpc_clock_ns() + 20000000; hpc_clock_ns() < end;)
    hpc_stamp_tick();
  double t[4][99];
  for (int r = 0; r < rounds; r++) {
    double a = cpu();
    for (long i = 0; i < n; i++) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
      sink += ts.tv_nsec;
    }
    double b = cpu();
#if HPC_HAVE_TSC
    for (long i = 0; i < n; i++)
      sink += (int64_t)__rdtsc();
#endif
    double c = cpu();
    /* the collector's conversion of recent stamps (the last knot's segment, as at harvest and region end) */
    int64_t x0 = hpc_stamp();
    for (long i = 0; i < n; i++)
      sink += hpc_stamp_ns(x0 + (i & 1023));
    double d = cpu();
    for (long i = 0; i < n; i++) { /* a region's begin and end */
      int64_t a0 = x0 + (i & 1023), b0 = a0 + 300;
      hpc_stamp_ns2(&a0, &b0);
      sink += a0 + b0;
    }
    double e = cpu();
    t[0][r] = (b - a) / (double)n;
    t[1][r] = (c - b) / (double)n;
    t[2][r] = (d - c) / (double)n;
    t[3][r] = (e - d) / (double)n;
  }
  printf("CPU ns per call, median (min-max) of %d interleaved rounds of %ld calls; stamps: %s, %u knots\n",
         rounds, n, src, atomic_load(&g_nknots));
  const char *what[4] = {"clock_gettime(MONOTONIC_RAW)", HPC_HAVE_TSC ? "rdtsc" : "rdtsc (not x86: skipped)",
                         "hpc_stamp_ns (one stamp)", "hpc_stamp_ns2 (begin and end)"};
  for (int v = 0; v < 4; v++) {
    qsort(t[v], (size_t)rounds, sizeof(double), cmp);
    double m = rounds % 2 ? t[v][rounds / 2] : (t[v][rounds / 2 - 1] + t[v][rounds / 2]) / 2;
    printf("  %-30s %6.1f (%.1f-%.1f)\n", what[v], m, t[v][0], t[v][rounds - 1]);
  }
  return 0;
}
