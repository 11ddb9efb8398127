/* launch_loop: a tight loop of N tiny dispatches with clFinish every M, timed; the launch-bound workload of
 * the collector's overhead benchmark (with PoCL's POCL_DEVICES=basic a launch costs ~0.4 us).
 * usage: launch_loop [N [M]]   prints one line with wall ns per dispatch, the launching thread's CPU ns and
 * the whole process's CPU ns per dispatch (a collector's threads too), exits 0 when the count is right.
 * Benchmark options (environment): LAUNCH_LOOP_CPU=C pins the launching thread alone to CPU C for the timed
 * loop (threads started before, such as a collector's, keep their CPUs);
 * LAUNCH_LOOP_EVENTS=queue|events|times does by hand what an event-based tracer makes the runtime do, without
 * one: a profiling queue; also an event per dispatch, released after each clFinish; also its start and end
 * times read before the release. Within one process, LAUNCH_LOOP_AB=1 alternates blocks of M dispatches with
 * a collector collecting and paused (hubprof_start/stop); LAUNCH_LOOP_AB=queue|events|times alternates blocks
 * done that LAUNCH_LOOP_EVENTS way (on a second queue, with profiling) and blocks on the plain queue; both
 * print the median ns per dispatch of each kind of block ("on": collecting, or the tracer's way). */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include "hubprof/api.h"

#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *src = "__kernel void tiny(__global int *a) { if (get_global_id(0) == 0) a[0] += 1; }\n";

static double clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v), 0 for none. */
static double median(double *v, long n) {
  if (n < 1) return 0;
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* LAUNCH_LOOP_EVENTS's ways: 0 none (unset or empty), 1 queue, 2 events, 3 times, -1 not one of them. */
static int way(const char *how) {
  return !how || !*how                ? 0
         : strcmp(how, "queue") == 0  ? 1
         : strcmp(how, "events") == 0 ? 2
         : strcmp(how, "times") == 0  ? 3
                                      : -1;
}

/* Release the events of the dispatches since the last sync (their times read first when asked). */
static void drop_events(cl_event *evs, long n, int times) {
  for (long i = 0; i < n; i++) {
    if (times) {
      cl_ulong a = 0, b = 0;
      CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
      CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
      if (b < a) {
        fprintf(stderr, "launch_loop: a dispatch ends before it starts\n");
        exit(1);
      }
    }
    CHECK(clReleaseEvent(evs[i]));
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long every = argc > 2 ? atol(argv[2]) : 1000;
  if (n < 1 || n > 2000000000L || every < 1) {
    fprintf(stderr, "usage: launch_loop [N [M]]\n");
    return 2;
  }
  ex_name = "launch_loop";
  const char *how = getenv("LAUNCH_LOOP_EVENTS"), *cpu = getenv("LAUNCH_LOOP_CPU"),
             *abv = getenv("LAUNCH_LOOP_AB");
  int mode = way(how), ab = abv && strcmp(abv, "1") == 0 ? 1 : 0, abway = ab ? 0 : way(abv);
  if (mode < 0 || abway < 0 || (abway && mode) ||
      (cpu && *cpu && (atoi(cpu) < 0 || atoi(cpu) >= CPU_SETSIZE))) {
    fprintf(stderr,
            "launch_loop: LAUNCH_LOOP_EVENTS must be queue, events or times, LAUNCH_LOOP_AB 1, queue, "
            "events or times (not with LAUNCH_LOOP_EVENTS), LAUNCH_LOOP_CPU a CPU\n");
    return 2;
  }
  if (abway) { /* blocks that way, on a queue of their own, and plain blocks */
    ab = 2;
    mode = abway;
  }
  ex_cl cl;
  ex_setup(&cl, src);
  cl_context ctx = cl.ctx;
  cl_command_queue q = cl.q, qt = NULL; /* qt: the way's queue (LAUNCH_LOOP_AB: its blocks only) */
  cl_int err;
  if (mode) { /* the same in-order queue, with profiling */
    qt = clCreateCommandQueue(ctx, cl.dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    if (ab != 2) q = qt;
  }
  cl_event *evs = NULL;
  if (mode >= 2 && !(evs = malloc(sizeof *evs * (size_t)(every < n ? every : n)))) {
    fprintf(stderr, "launch_loop: out of memory\n");
    return 1;
  }
  long nblocks = (n + every - 1) / every, nab[2] = {0, 0}; /* [0] paused blocks, [1] collecting */
  double *abw[2] = {NULL, NULL}, *abc[2] = {NULL, NULL};   /* their wall and CPU ns per dispatch */
  for (int x = 0; ab && x < 2; x++)
    if (!(abw[x] = malloc(sizeof(double) * (size_t)nblocks)) ||
        !(abc[x] = malloc(sizeof(double) * (size_t)nblocks))) {
      fprintf(stderr, "launch_loop: out of memory\n");
      return 1;
    }
  cl_program prog = cl.prog;
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  int zero = 0;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = 1;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)); /* warm-up: first-use compile */
  CHECK(clFinish(q));
  if (cpu && *cpu) { /* this thread only */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(cpu), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("launch_loop: sched_setaffinity (not pinned)");
  }
  double t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
         p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  long since = 0, block = 0; /* dispatches since the last sync; blocks so far */
  double bw = t0, bc = c0;   /* the block's start */
  int tracer = 1;            /* LAUNCH_LOOP_AB=WAY: this block done that way (the first one is "on") */
  for (long i = 0; i < n; i++) {
    cl_command_queue cq = ab == 2 && tracer ? qt : q;
    cl_event *ev = evs && (ab != 2 || tracer) ? &evs[since] : NULL;
    CHECK(clEnqueueNDRangeKernel(cq, k, 1, NULL, &g, NULL, 0, NULL, ev));
    since++;
    if ((i + 1) % every == 0 || i + 1 == n) {
      CHECK(clFinish(cq));
      if (ev) drop_events(evs, since, mode == 3);
      if (ab) { /* this block's kind: on, off, off, on, on, ...; the next one's set before its start */
        int on = !((block + 1) >> 1 & 1), next = !((block + 2) >> 1 & 1);
        double w = clock_ns(CLOCK_MONOTONIC), c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        abw[on][nab[on]] = (w - bw) / (double)since;
        abc[on][nab[on]++] = (c - bc) / (double)since;
        if (ab == 2)
          tracer = next;
        else
          next ? hubprof_start() : hubprof_stop();
        bw = clock_ns(CLOCK_MONOTONIC), bc = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      }
      block++;
      since = 0;
    }
  }
  if (ab == 1) hubprof_start(); /* as it was */
  double t1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
         p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  free(evs);
  int count = 0;
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
  clReleaseMemObject(m);
  clReleaseKernel(k);
  if (qt) clReleaseCommandQueue(qt);
  ex_teardown(&cl);
  int ok = count == (int)(n + 1);
  printf("launch_loop: n=%ld finish_every=%ld ns_per_dispatch=%.1f cpu_per_dispatch_ns=%.1f "
         "proc_cpu_per_dispatch_ns=%.1f %s\n",
         n, every, (t1 - t0) / (double)n, (c1 - c0) / (double)n, (p1 - p0) / (double)n, ok ? "ok" : "FAILED");
  if (ab) {
    double w1m = median(abw[1], nab[1]), w0m = median(abw[0], nab[0]);
    double c1m = median(abc[1], nab[1]), c0m = median(abc[0], nab[0]);
    printf("launch_loop: ab blocks=%ld+%ld on_ns=%.1f off_ns=%.1f on_cpu_ns=%.1f off_cpu_ns=%.1f\n", nab[1],
           nab[0], w1m, w0m, c1m, c0m);
    for (int x = 0; x < 2; x++) {
      free(abw[x]);
      free(abc[x]);
    }
  }
  return ok ? 0 : 1;
}
