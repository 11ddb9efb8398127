/* bench_replay: two baselines of the kernel-replay benchmark (bench/bench_replay.sh).
 * memcpy: copies BYTES between two buffers faulted in beforehand, REPS times, and prints the median copy's
 * bandwidth (with the fastest and slowest) — what a restore of the same bytes is measured against.
 * session: what counting costs a replayed dispatch, no kernel: PASSES software counters, one per pass, on a
 * process of THREADS threads (THREADS-1 idle, a runtime's worker pool; the launching thread left out as the
 * collector does), five ways interleaved in each of ROUNDS rounds of ITERS dispatches: "scan" (every start
 * re-reads /proc/self/task, as before the list was cached), "check" (every start fstats it), "cached" (the
 * check at pass 1 only), "group" (the PASSES counters in ONE pass, one read() per thread), "caller" (the
 * calling thread alone, hc_session_count_caller: replay on PoCL basic, context-switches from getrusage).
 * Median (min-max) over the rounds of the calling thread's CPU time and of wall time, ns per dispatch.
 * usage: bench_replay memcpy BYTES [REPS]   prints "memcpy bytes=B median_ms=T min_ms=A max_ms=Z gbps=G"
 *        bench_replay session PASSES THREADS ROUNDS ITERS */
/* SPDX-License-Identifier: MIT */
#include "../src/counters/counters.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int idle_pipe[2];
static void *idle_main(void *arg) {
  char c;
  (void)arg;
  while (read(idle_pipe[0], &c, 1) < 0) /* sleeps until the end */
    ;
  return NULL;
}

/* One way of counting ITERS dispatches of `np` passes; returns 0 or -1. */
static int run_way(int way, hc_session **ps, hc_session *all, size_t np, long iters, int taskdir) {
  static double v[64];
  char buf[4096] __attribute__((aligned(8)));
  pid_t self = (pid_t)syscall(SYS_gettid);
  for (size_t p = 0; p < np; p++)
    hc_session_count_caller(ps[p], way == 4 ? self : 0);
  for (long i = 0; i < iters; i++) {
    if (way == 3) {
      if (hc_session_start(all) != HC_OK || hc_session_stop(all, v) != HC_OK) return -1;
      continue;
    }
    for (size_t p = 0; p < np; p++) {
      if (way == 0) { /* the scan every start made before */
        if (lseek(taskdir, 0, SEEK_SET) < 0) return -1;
        while (syscall(SYS_getdents64, taskdir, buf, sizeof buf) > 0)
          ;
      }
      hc_status st = way == 1 || ((way == 2 || way == 4) && p == 0) ? hc_session_start(ps[p])
                                                                    : hc_session_start_cached(ps[p]);
      if (st != HC_OK || hc_session_stop(ps[p], v) != HC_OK) return -1;
    }
  }
  return 0;
}

static int session_bench(int argc, char **argv) {
  static const char *names[] = {"task-clock",     "cpu-clock",        "context-switches",
                                "cpu-migrations", "page-faults",      "minor-faults",
                                "major-faults",   "alignment-faults", "emulation-faults"};
  size_t np = argc > 2 ? strtoul(argv[2], NULL, 10) : 3;
  int threads = argc > 3 ? atoi(argv[3]) : 1, rounds = argc > 4 ? atoi(argv[4]) : 7;
  long iters = argc > 5 ? atol(argv[5]) : 20000;
  if (np < 1 || np > 9 || threads < 1 || threads > 64 || rounds < 1 || iters < 1) {
    fprintf(stderr, "usage: bench_replay session PASSES(1-9) THREADS ROUNDS ITERS\n");
    return 2;
  }
  hc_provider *p;
  if (hc_provider_open("perf", &p) != HC_OK) {
    fprintf(stderr, "bench_replay: no perf provider\n");
    return 1;
  }
  if (pipe(idle_pipe)) return 1;
  pthread_t th[64];
  for (int t = 1; t < threads; t++)
    if (pthread_create(&th[t], NULL, idle_main, NULL)) return 1;
  size_t idx[9];
  hc_session *ps[9], *all = NULL;
  for (size_t k = 0; k < np; k++) {
    long x = hc_provider_find(p, names[k]);
    if (x < 0 || !hc_provider_counter(p, (size_t)x)->available) {
      fprintf(stderr, "bench_replay: counter %s not available\n", names[k]);
      return 1;
    }
    idx[k] = (size_t)x;
    if (hc_session_open_mode(p, &idx[k], 1, HC_SESSION_PER_THREAD, &ps[k]) != HC_OK) return 1;
  }
  if (hc_session_open_mode(p, idx, np, HC_SESSION_PER_THREAD, &all) != HC_OK) return 1;
  pid_t self = (pid_t)syscall(SYS_gettid); /* the launching thread, left out as the collector does */
  for (size_t k = 0; k < np && threads > 1; k++)
    hc_session_skip_thread(ps[k], self);
  if (threads > 1) hc_session_skip_thread(all, self);
  int taskdir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  enum { NWAYS = 5 };
  double *cpu[NWAYS], *wall[NWAYS];
  for (int w = 0; w < NWAYS; w++) {
    cpu[w] = calloc((size_t)rounds, sizeof(double));
    wall[w] = calloc((size_t)rounds, sizeof(double));
    if (!cpu[w] || !wall[w]) return 1;
  }
  for (int r = 0; r < rounds; r++)
    for (int w = 0; w < NWAYS; w++) {
      double c0 = cpu_ns(), w0 = now_s();
      if (run_way(w, ps, all, np, iters, taskdir) < 0) {
        fprintf(stderr, "bench_replay: a session failed: %s\n", hc_provider_error(p));
        return 1;
      }
      cpu[w][r] = (cpu_ns() - c0) / (double)iters;
      wall[w][r] = (now_s() - w0) * 1e9 / (double)iters;
    }
  static const char *way[] = {"scan", "check", "cached", "group", "caller"};
  for (int w = 0; w < NWAYS; w++) {
    double cm = median(cpu[w], rounds), wm = median(wall[w], rounds);
    printf("session passes=%zu threads=%d way=%s cpu_ns_per_dispatch=%.0f cpu_min=%.0f cpu_max=%.0f "
           "wall_ns_per_dispatch=%.0f wall_min=%.0f wall_max=%.0f\n",
           np, threads, way[w], cm, cpu[w][0], cpu[w][rounds - 1], wm, wall[w][0], wall[w][rounds - 1]);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "session") == 0) return session_bench(argc, argv);
  if (argc < 3 || strcmp(argv[1], "memcpy") != 0) {
    fprintf(stderr, "usage: bench_replay memcpy BYTES [REPS] | session PASSES THREADS ROUNDS ITERS\n");
    return 2;
  }
  size_t bytes = strtoull(argv[2], NULL, 10);
  int reps = argc > 3 ? atoi(argv[3]) : 10;
  if (!bytes || reps < 1) return 2;
  /* faulted in now, as the collector's shadow pool is (MAP_POPULATE): first touches are not measured */
  char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (a == MAP_FAILED || b == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t) return 1;
  for (int r = 0; r < reps; r++) {
    t[r] = now_s();
    memcpy(b, a, bytes);
    t[r] = now_s() - t[r];
    a[r % bytes] = (char)r; /* keep the copies from being merged */
  }
  volatile char sink = b[bytes / 2];
  (void)sink;
  double med = median(t, reps);
  printf("memcpy bytes=%zu median_ms=%.3f min_ms=%.3f max_ms=%.3f gbps=%.2f\n", bytes, med * 1e3, t[0] * 1e3,
         t[reps - 1] * 1e3, (double)bytes / med / 1e9);
  free(t);
  return 0;
}
