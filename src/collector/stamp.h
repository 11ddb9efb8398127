/* Host time stamps of the collector's fast paths (dispatch enqueue, region begin and end): the TSC where
 * the kernel keeps time with it (one rdtsc, not a clock_gettime), converted to CLOCK_MONOTONIC_RAW ns. */
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

/* 1 when stamps are TSC ticks (decided once by hpc_stamp_init, before the first stamp is taken). */
extern int hpc_stamp_tsc HPC_STAMP_HIDDEN;

static inline int64_t hpc_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts); /* vDSO: no system call */
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A stamp for a fast path: TSC ticks or nanoseconds (convert with hpc_stamp_ns). */
static inline int64_t hpc_stamp(void) {
#if HPC_HAVE_TSC
  if (__builtin_expect(hpc_stamp_tsc, 1)) return (int64_t)__rdtsc();
#endif
  return hpc_clock_ns();
}

/* Choose the source (HUBPROF_TIMESTAMP=clock|tsc|auto, default auto: the TSC when the kernel's clocksource is
 * "tsc"; tsc without the TSC: the clock) and calibrate the first segment of the conversion. Returns the
 * source's name for the debug output, NULL for a value that is none of the three. */
HPC_STAMP_HIDDEN const char *hpc_stamp_init(const char *want);
/* Called now and then off the fast paths (each harvest): adds a calibration point to the conversion when
 * the last one is old enough (a few ns otherwise; never blocks: another thread adding one wins). */
HPC_STAMP_HIDDEN void hpc_stamp_tick(void);
/* A stamp in CLOCK_MONOTONIC_RAW nanoseconds. The one conversion of every stamp of the process, whoever
 * converts it and when: stamps taken in one order on a thread convert in that order (stamp.c). */
HPC_STAMP_HIDDEN int64_t hpc_stamp_ns(int64_t stamp);
/* *a = hpc_stamp_ns(*a), *b = hpc_stamp_ns(*b) with one look-up of the calibration when a <= b are close (a
 * region's begin and end): the same results. */
HPC_STAMP_HIDDEN void hpc_stamp_ns2(int64_t *a, int64_t *b);
/* A duration of ns nanoseconds in stamp units (TSC ticks at the first calibration's rate, or ns). */
HPC_STAMP_HIDDEN int64_t hpc_stamp_span(int64_t ns);
/* hpc_stamp_ns(hpc_stamp()): the current time on the stamps' time line. */
static inline int64_t hpc_stamp_now_ns(void) { return hpc_stamp_ns(hpc_stamp()); }

#endif
