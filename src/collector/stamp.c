/* The trace path's host time stamps (stamp.h): which source, and the TSC-to-nanosecond conversion. A stamp x
 * taken after the first pair (t0, n0) converts by interpolation to the latest pair (t1, n1) of the harvest:
 * n1 - (t1 - x) * (n1 - n0) / (t1 - t0). Both ends are exact, so the error is bounded by how well each pair's
 * two readings line up (the pair with the smallest TSC gap of a few tries: tens of ns), whatever the TSC's
 * frequency, and CLOCK_MONOTONIC_RAW is itself the TSC scaled linearly when the clocksource is "tsc". */
/* SPDX-License-Identifier: MIT */
#include "stamp.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int hpc_stamp_tsc;
static hpc_stamp_now g_first; /* the first pair (process start, or the fork that made this process) */

#if HPC_HAVE_TSC
/* Both clocks read together: of 4 tries, the one whose TSC readings around the clock read are closest. */
static hpc_stamp_now pair(void) {
  hpc_stamp_now best = {0, 0};
  int64_t gap = INT64_MAX;
  for (int i = 0; i < 4; i++) {
    int64_t a = (int64_t)__rdtsc(), n = hpc_clock_ns(), b = (int64_t)__rdtsc();
    if (b - a < gap) {
      gap = b - a;
      best.tsc = a + (b - a) / 2;
      best.ns = n;
    }
  }
  return best;
}

/* The kernel keeps time with the TSC: it found it invariant and synchronized across CPUs. */
static int kernel_uses_tsc(void) {
  char buf[32] = {0};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}
#endif

const char *hpc_stamp_init(const char *want) {
  hpc_stamp_tsc = 0;
  if (want && strcmp(want, "auto") && strcmp(want, "tsc") && strcmp(want, "clock")) return NULL;
#if HPC_HAVE_TSC
  if (want && !strcmp(want, "clock")) return "clock_gettime (HUBPROF_TIMESTAMP=clock)";
  if ((want && !strcmp(want, "tsc")) || kernel_uses_tsc()) {
    g_first = pair();
    hpc_stamp_tsc = 1;
    return "rdtsc, converted at harvest";
  }
  return "clock_gettime (the kernel's clocksource is not the TSC)";
#else
  (void)want;
  return "clock_gettime (no TSC)";
#endif
}

void hpc_stamp_pair(hpc_stamp_now *now) {
#if HPC_HAVE_TSC
  if (hpc_stamp_tsc) {
    *now = pair();
    return;
  }
#endif
  now->tsc = now->ns = 0;
}

int64_t hpc_stamp_ns(const hpc_stamp_now *now, int64_t stamp) {
  if (!hpc_stamp_tsc) return stamp;
  int64_t span = now->tsc - g_first.tsc;
  if (span <= 0) return now->ns; /* the pair of this harvest is the first one */
  long double rate = (long double)(now->ns - g_first.ns) / (long double)span;
  return now->ns - (int64_t)((long double)(now->tsc - stamp) * rate);
}
