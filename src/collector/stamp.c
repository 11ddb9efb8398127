/* The fast paths' host time stamps (stamp.h): which source, and the one TSC-to-nanosecond conversion that
 * dispatch enqueue times and region begin/end times share, so that they lie on one time line. */
/* SPDX-License-Identifier: MIT */

/* The conversion is a continuous, increasing, piecewise-linear map of TSC ticks to CLOCK_MONOTONIC_RAW ns,
 * defined by calibration points ("knots" (t, n, r): from tick t on, n + (x - t)·r ns) that are only ever
 * appended, never changed. A stamp x converts with the last knot whose t <= x, whoever converts it and
 * whenever: a region converts its begin and end when it ends, a dispatch its enqueue stamp at harvest, with
 * the same knots, so three stamps taken in one order on a thread keep that order once converted (a
 * knot appended between two conversions of the same x moves it by (x - t)·Δr, with x - t only the time
 * between the knot's clock reading and its publication: far below a nanosecond). Each new knot starts
 * where the previous segment ends (no jump: the map stays increasing) and its rate steers the map back
 * to the clock: the long-run rate (ns per tick since the first reading), corrected by the error found at
 * the knot spread over the next segment. Knots come at harvests, at most one per max(2 ms, 1/8 of the
 * time since start) (about 120 for an hour), at most HPC_KNOTS; the first one is made at the first need and
 * runs through the library's load and that reading (at least 1 ms apart), so every stamp before it converts
 * exactly at both ends whenever the first harvest comes. Each clock reading is paired with the TSC as the
 * best of 4 tries (two rdtsc around the clock read, the closest kept). CLOCK_MONOTONIC_RAW is itself the TSC
 * scaled linearly when the kernel's clocksource is "tsc" (no NTP slewing), so the only error is the
 * estimate's. */
#include "stamp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int hpc_stamp_tsc;

#define HPC_KNOTS 256
typedef struct knot {
  int64_t t, n; /* from tick t on: n + (x - t) * r ns */
  double r;
} knot;

#if HPC_HAVE_TSC
typedef struct tpair {
  int64_t tsc, ns;
} tpair;

static knot g_knot[HPC_KNOTS];
static _Atomic unsigned g_nknots; /* knots [0, g_nknots) are published and never change */
static _Atomic int g_kwriter;     /* 1 while a thread appends a knot */
static tpair g_base;              /* the first reading (library load): the long-run rate's origin */
static int64_t g_min_ticks;       /* 2 ms in ticks: the smallest spacing of knots */

/* Both clocks read together: of 4 tries, the one whose TSC readings around the clock read are closest. */
static tpair pair(void) {
  tpair best = {0, 0};
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

/* The first reading, when the collector is loaded: the first segment's rate is measured from here. */
__attribute__((constructor)) static void stamp_load(void) { g_base = pair(); }

/* The kernel keeps time with the TSC: it found it invariant and synchronized across CPUs. */
static int kernel_uses_tsc(void) {
  char buf[32] = {0};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

/* The first knot, made at the first need (a conversion or a tick, whichever thread comes first; others wait
 * for it): the rate from the library's load to now, over at least 1 ms (sleeps out what is left of it: the
 * CPU stays the application's; a conversion that early is rare). Every stamp before it converts between two
 * clock readings, exact at both ends, however long the application ran before its first harvest (a compile,
 * a process with no background harvester). */
static void first_knot_locked(void) {
  if (!g_base.tsc) g_base = pair();
  for (int64_t left; (left = 1000000 - (hpc_clock_ns() - g_base.ns)) > 0;) {
    struct timespec ts = {0, (long)left};
    int e = errno;
    nanosleep(&ts, NULL); /* a signal cuts it short: the loop sleeps the rest */
    errno = e;
  }
  tpair p = pair();
  double r = p.tsc > g_base.tsc ? (double)(p.ns - g_base.ns) / (double)(p.tsc - g_base.tsc) : 1.0;
  if (!(r > 0)) r = 1.0;
  g_min_ticks = (int64_t)(2e6 / r);
  g_knot[0] = (knot){p.tsc, p.ns, r};
  atomic_store_explicit(&g_nknots, 1, memory_order_release);
}
static void first_knot(void) {
  for (int i = 0; !atomic_load_explicit(&g_nknots, memory_order_acquire); i++) {
    if (!atomic_exchange_explicit(&g_kwriter, 1, memory_order_acquire)) {
      if (!atomic_load_explicit(&g_nknots, memory_order_relaxed)) first_knot_locked();
      atomic_store_explicit(&g_kwriter, 0, memory_order_release);
      return;
    }
    int e = errno; /* another thread makes it: at most ~1 ms */
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
    errno = e;
    if (i > 100000) return; /* never: a writer never holds it long; the caller then uses the clock's rate */
  }
}
#endif

const char *hpc_stamp_init(const char *want) {
  hpc_stamp_tsc = 0;
  if (want && strcmp(want, "auto") && strcmp(want, "tsc") && strcmp(want, "clock")) return NULL;
#if HPC_HAVE_TSC
  if (want && !strcmp(want, "clock")) return "clock_gettime (HUBPROF_TIMESTAMP=clock)";
  if ((want && !strcmp(want, "tsc")) || kernel_uses_tsc()) {
    atomic_store(&g_kwriter, 0); /* a fork while another thread appended: that thread is not here */
    /* a forked child keeps its parent's knots: the TSC is the machine's, and open regions keep their stamps;
     * the first knot is made at the first conversion or tick (first_knot) */
    hpc_stamp_tsc = 1;
    return "rdtsc, converted by one shared calibration";
  }
  return "clock_gettime (the kernel's clocksource is not the TSC)";
#else
  (void)want;
  return "clock_gettime (no TSC)";
#endif
}

void hpc_stamp_tick(void) {
#if HPC_HAVE_TSC
  if (!hpc_stamp_tsc) return;
  unsigned k = atomic_load_explicit(&g_nknots, memory_order_acquire);
  if (k == 0) { /* the first knot once 1 ms has passed since the load (never sleeps here) */
    if (hpc_clock_ns() - g_base.ns >= 1000000) first_knot();
    return;
  }
  if (k == HPC_KNOTS) return;
  const knot *last = &g_knot[k - 1];
  int64_t x = (int64_t)__rdtsc(), gap = (x - g_base.tsc) / 8;
  if (x - last->t < (gap > g_min_ticks ? gap : g_min_ticks)) return;
  if (atomic_exchange_explicit(&g_kwriter, 1, memory_order_acquire)) return;
  if (atomic_load_explicit(&g_nknots, memory_order_relaxed) == k) {
    tpair p = pair();
    double ticks = (double)(p.tsc - last->t);
    double cont = (double)last->n + ticks * last->r; /* where the last segment is at this reading */
    double rate = (double)(p.ns - g_base.ns) / (double)(p.tsc - g_base.tsc);
    double err = cont - (double)p.ns; /* ns ahead of the clock */
    double r = rate - err / ticks;    /* back on the clock after as many ticks again */
    if (r < rate * 0.5) r = rate * 0.5;
    if (r > rate * 1.5) r = rate * 1.5;
    int64_t n = (int64_t)cont; /* rounded up: no stamp before the knot converts later than it */
    if ((double)n < cont) n++;
    g_knot[k] = (knot){p.tsc, n, r};
    atomic_store_explicit(&g_nknots, k + 1, memory_order_release);
  }
  atomic_store_explicit(&g_kwriter, 0, memory_order_release);
#endif
}

int64_t hpc_stamp_span(int64_t ns) {
#if HPC_HAVE_TSC
  if (!hpc_stamp_tsc) return ns;
  first_knot();
  if (atomic_load_explicit(&g_nknots, memory_order_acquire)) return (int64_t)((double)ns / g_knot[0].r);
#endif
  return ns;
}

void hpc_stamp_ns2(int64_t *a, int64_t *b) {
#if HPC_HAVE_TSC
  if (!hpc_stamp_tsc) return;
  int64_t x = *a, y = *b;
  unsigned k = atomic_load_explicit(&g_nknots, memory_order_acquire);
  if (__builtin_expect(k == 0, 0)) {
    first_knot();
    if (!(k = atomic_load_explicit(&g_nknots, memory_order_acquire))) return; /* never */
  }
  while (k > 1 && g_knot[k - 1].t > y)
    k--;
  const knot *c = &g_knot[k - 1];
  *b = c->n + (int64_t)((double)(y - c->t) * c->r);
  /* the knot of y is x's too when it starts at or before x (later ones start after y): the same sum */
  *a = x <= y && (k == 1 || c->t <= x) ? c->n + (int64_t)((double)(x - c->t) * c->r) : hpc_stamp_ns(x);
#else
  (void)a, (void)b;
#endif
}

int64_t hpc_stamp_ns(int64_t stamp) {
#if HPC_HAVE_TSC
  if (!hpc_stamp_tsc) return stamp;
  unsigned k = atomic_load_explicit(&g_nknots, memory_order_acquire);
  if (__builtin_expect(k == 0, 0)) {
    first_knot();
    if (!(k = atomic_load_explicit(&g_nknots, memory_order_acquire))) return stamp; /* never */
  }
  while (k > 1 && g_knot[k - 1].t > stamp)
    k--;
  const knot *c = &g_knot[k - 1];
  return c->n + (int64_t)((double)(stamp - c->t) * c->r);
#else
  return stamp;
#endif
}
