/* Tests of the collector's host stamps (src/collector/stamp.c, compiled in): the TSC-to-ns conversion stays
 * on CLOCK_MONOTONIC_RAW, never goes backwards, and converts a stamp the same whenever it is converted. */
/* SPDX-License-Identifier: MIT */
#include "../src/collector/stamp.c"

#include "check.h"

#include <stdio.h>

/* A stamp and the clock read just before and just after it (retried when the thread was preempted between).
 */
static void bracket(int64_t *before, int64_t *x, int64_t *after) {
  for (int i = 0; i < 100; i++) {
    *before = hpc_clock_ns();
    *x = hpc_stamp();
    *after = hpc_clock_ns();
    if (*after - *before < 2000) return;
  }
}

#define SAVED 64

static void test_clock(void) {
  CHECK(hpc_stamp_init("bogus") == NULL);
  CHECK(hpc_stamp_init("clock") != NULL && hpc_stamp_tsc == 0);
  int64_t a = hpc_clock_ns(), x = hpc_stamp(), b = hpc_clock_ns();
  CHECK(a <= hpc_stamp_ns(x) && hpc_stamp_ns(x) <= b); /* the clock's stamps are nanoseconds already */
}

static void test_tsc(void) {
#if HPC_HAVE_TSC
  const char *src = hpc_stamp_init("tsc");
  CHECK(src != NULL && hpc_stamp_tsc == 1);
  int64_t saved[SAVED], conv[SAVED], prev_x = 0, prev_n = INT64_MIN, worst = 0;
  size_t ns = 0, backwards = 0, off = 0, checks = 0;
  int64_t t_end = hpc_clock_ns() + 400000000; /* 0.4 s: about 30 calibration points */
  while (hpc_clock_ns() < t_end) {
    hpc_stamp_tick();
    int64_t before, x, after;
    bracket(&before, &x, &after);
    int64_t n = hpc_stamp_ns(x);
    /* on the clock: within the two clock reads around the stamp, give or take 2 us (the calibration's
     * error is tens of ns; a generous bound, not a timing) */
    int64_t err = n < before ? before - n : n > after ? n - after : 0;
    if (err > worst) worst = err;
    off += err > 2000;
    /* never backwards: a later stamp converts to a later or equal time */
    if (x >= prev_x && n < prev_n) backwards++;
    prev_x = x;
    prev_n = n;
    if (ns < SAVED && checks % 50 == 0) {
      saved[ns] = x;
      conv[ns++] = n;
    }
    checks++;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  unsigned knots = atomic_load(&g_nknots);
  CHECK_MSG(knots >= 5, "only %u calibration points in 0.4 s", knots);
  CHECK_MSG(off == 0, "%zu of %zu stamps off the clock by more than 2 us (worst %lld ns)", off, checks,
            (long long)worst);
  CHECK_MSG(backwards == 0, "%zu of %zu conversions went backwards", backwards, checks);
  /* the same stamps converted again, after every calibration point added since: unchanged */
  size_t moved = 0;
  for (size_t i = 0; i < ns; i++)
    moved += hpc_stamp_ns(saved[i]) != conv[i];
  CHECK_MSG(ns >= 10 && moved == 0, "%zu of %zu stamps converted differently later", moved, ns);
  /* two stamps at once (a region's begin and end): the same as one by one, for pairs within one segment,
   * across calibration points, in reverse order and before the first point */
  size_t pairs = 0, differ = 0;
  for (size_t i = 0; i + 1 < ns; i++) {
    const int64_t xs[][2] = {{saved[i], saved[i] + 200},
                             {saved[i], saved[i + 1]},
                             {saved[i + 1], saved[i]},
                             {saved[0] - 1000000, saved[i]},
                             {g_knot[1].t - 1, g_knot[1].t}};
    for (size_t j = 0; j < sizeof xs / sizeof xs[0]; j++) {
      int64_t a = xs[j][0], b = xs[j][1];
      hpc_stamp_ns2(&a, &b);
      differ += a != hpc_stamp_ns(xs[j][0]) || b != hpc_stamp_ns(xs[j][1]);
      pairs++;
    }
  }
  CHECK_MSG(pairs > 40 && differ == 0, "%zu of %zu pairs converted unlike one by one", differ, pairs);
  printf("test_stamp: %u calibration points, %zu stamps, worst distance to the clock %lld ns\n", knots,
         checks, (long long)worst);
#endif
}

int main(void) {
  test_clock();
  test_tsc();
  return check_report("test_stamp");
}
