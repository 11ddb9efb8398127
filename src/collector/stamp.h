/* Host time stamps of the trace fast path: the TSC where the kernel itself keeps time with it (one rdtsc
 * instead of a clock_gettime per dispatch), converted to CLOCK_MONOTONIC_RAW nanoseconds at harvest. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_STAMP_H
#define HUBPROF_COLLECTOR_STAMP_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HPC_HAVE_TSC 1
#else
#define HPC_HAVE_TSC 0
#endif

#define HPC_STAMP_HIDDEN __attribute__((visibility("hidden")))

/* 1 when stamps are TSC ticks (decided once by hpc_stamp_init, before the first dispatch is recorded). */
extern int hpc_stamp_tsc HPC_STAMP_HIDDEN;

static inline int64_t hpc_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts); /* vDSO: no system call */
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A stamp for the enqueue path: TSC ticks or nanoseconds (convert with hpc_stamp_ns). */
static inline int64_t hpc_stamp(void) {
#if HPC_HAVE_TSC
  if (__builtin_expect(hpc_stamp_tsc, 1)) return (int64_t)__rdtsc();
#endif
  return hpc_clock_ns();
}

/* A pair of readings of both clocks taken together: converts the stamps of one harvest. */
typedef struct hpc_stamp_now {
  int64_t tsc, ns;
} hpc_stamp_now;

/* Choose the source (HUBPROF_TIMESTAMP=clock|tsc|auto, default auto: the TSC when the kernel's clocksource is
 * "tsc"; tsc without the TSC: the clock) and take the first calibration pair. Returns the source's name for
 * the debug output, NULL for a value that is none of the three. */
HPC_STAMP_HIDDEN const char *hpc_stamp_init(const char *want);
/* The pair to convert this harvest's stamps with (a no-op without the TSC). */
HPC_STAMP_HIDDEN void hpc_stamp_pair(hpc_stamp_now *now);
/* A stamp in CLOCK_MONOTONIC_RAW nanoseconds: interpolated between the first pair and `now`. */
HPC_STAMP_HIDDEN int64_t hpc_stamp_ns(const hpc_stamp_now *now, int64_t stamp);

#endif
