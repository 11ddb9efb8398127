/* Cost of one region begin+end pair from inside an application: through include/hubprof/api.h and, when
 * built with the NVTX v3 headers (-DHAVE_NVTX), an nvtxRangePushA/Pop pair. Run it alone (hubprof absent)
 * or with the collector's environment (bench/bench_regions.sh). Prints wall-clock ns per pair, then the
 * calling thread's CPU ns per pair (other jobs on a loaded machine inflate the first far more than the
 * second; the collector's background thread is in neither). The timed N pairs follow N untimed ones: the
 * steady state (the collector's background thread faults in the log's next chunks from its first period on,
 * sized by what the last one used; until then the thread writing makes its own, a one-off cost that
 * BENCH_REGIONS_COLD=1, timing the first N pairs, shows). usage: bench_regions api|nvtx|clock|loop N */
/* SPDX-License-Identifier: MIT */
#include <hubprof/api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

static double now(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  if (argc < 2 || n <= 0) {
    fprintf(stderr, "usage: bench_regions api|nvtx|clock|loop N\n");
    return 2;
  }
  const char *mode = argv[1];
  volatile long sink = 0;
  /* first calls outside the timing: the lookup, the thread's state, the log */
  hubprof_region_begin("warm");
  hubprof_region_end();
#ifdef HAVE_NVTX
  nvtxRangePushA("warm");
  nvtxRangePop();
#endif
  double t0 = 0, c0 = 0;
  /* the same loops twice (not a warm-up loop of its own: another call site changes what the compiler
   * inlines, and the absent figure with it) */
  for (int pass = getenv("BENCH_REGIONS_COLD") ? 1 : 0; pass < 2; pass++) {
    t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    if (strcmp(mode, "api") == 0) {
      for (long i = 0; i < n; i++) {
        hubprof_region_begin("bench region");
        hubprof_region_end();
      }
    } else if (strcmp(mode, "nvtx") == 0) {
#ifdef HAVE_NVTX
      for (long i = 0; i < n; i++) {
        nvtxRangePushA("bench region");
        nvtxRangePop();
      }
#else
      fprintf(stderr, "bench_regions: built without the NVTX headers\n");
      return 3;
#endif
    } else if (strcmp(mode, "clock") == 0) { /* two reads of the collector's clock: the floor under trace */
      struct timespec ts;
      for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        sink = sink + ts.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        sink = sink + ts.tv_nsec;
      }
    } else if (strcmp(mode, "loop") == 0) { /* the loop alone: the floor of the figures */
      for (long i = 0; i < n; i++)
        sink = sink + 1;
    } else {
      fprintf(stderr, "bench_regions: unknown mode %s\n", mode);
      return 2;
    }
  }
  double t1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_THREAD_CPUTIME_ID);
  printf("%.2f %.2f\n", (t1 - t0) / (double)n, (c1 - c0) / (double)n);
  return 0;
}
