/* Benchmark for the trace path's host stamp (src/collector/stamp.h, docs/collector.md "Trace fast path"): CPU
 * ns per call of clock_gettime(CLOCK_MONOTONIC_RAW) through the vDSO against one rdtsc, and the harvest's
 * conversion of a TSC stamp to ns, interleaved rounds, median and min-max (thread CPU time: other jobs on the
 * machine do not count). usage: bench_stamp [CALLS [ROUNDS]] */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

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
  double t[3][99];
  for (int r = 0; r < rounds; r++) {
    double a = cpu();
    for (long i = 0; i < n; i++) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
      sink += ts.tv_nsec;
    }
    double b = cpu();
#if HAVE_TSC
    for (long i = 0; i < n; i++)
      sink += (int64_t)__rdtsc();
#endif
    double c = cpu();
    /* the conversion at harvest, as stamp.c does it: interpolation between two pairs */
    int64_t t0 = 1000, n0 = 5000, t1 = 1000 + 3 * n, n1 = 5000 + n;
    for (long i = 0; i < n; i++) {
      long double rate = (long double)(n1 - n0) / (long double)(t1 - t0);
      sink += n1 - (int64_t)((long double)(t1 - (t0 + i)) * rate);
    }
    double d = cpu();
    t[0][r] = (b - a) / (double)n;
    t[1][r] = (c - b) / (double)n;
    t[2][r] = (d - c) / (double)n;
  }
  printf("CPU ns per call, median (min-max) of %d interleaved rounds of %ld calls\n", rounds, n);
  const char *what[3] = {"clock_gettime(MONOTONIC_RAW)", HAVE_TSC ? "rdtsc" : "rdtsc (not x86: skipped)",
                         "TSC stamp -> ns (at harvest)"};
  for (int v = 0; v < 3; v++) {
    qsort(t[v], (size_t)rounds, sizeof(double), cmp);
    double m = rounds % 2 ? t[v][rounds / 2] : (t[v][rounds / 2 - 1] + t[v][rounds / 2]) / 2;
    printf("  %-30s %6.1f (%.1f-%.1f)\n", what[v], m, t[v][0], t[v][rounds - 1]);
  }
  return 0;
}
