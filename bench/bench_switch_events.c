/* Benchmark for what a thread's perf events cost at each context switch (docs/sampling.md, switch-bound
 * threads): a two-thread futex ping-pong under five per-thread event set-ups, interleaved. */
/* SPDX-License-Identifier: MIT */
/* Each round runs every set-up once (the order rotates by round); a run is ROUND_TRIPS round trips of two
 * threads that wake each other through a futex (4 switches each), timed by the process's CPU time (both
 * threads, their switches and the perf code in the kernel; other jobs do not count) and by wall time. Each
 * thread opens its own events on itself (user space only: exclude_kernel, allowed at perf_event_paranoid 2;
 * CLOCK_MONOTONIC_RAW times; a 16-page ring). The set-ups: "none", no event; "tc 1ms", a task-clock sampler
 * at 1 ms with mmap records (mmap, mmap2, sample_id_all), the collector's sampler at the default period;
 * "tc 50ms", the same opened at 1 ms and set to 50 ms by PERF_EVENT_IOC_PERIOD, the collector's slowed
 * sampler (src/collector/sample.c adapt()); "off+dummy", the sampler opened without mmap records and
 * PERF_EVENT_IOC_DISABLE'd, and a software dummy event with the mmap records whose output goes to the
 * sampler's ring (PERF_EVENT_IOC_SET_OUTPUT); "dummy", the dummy event alone on a ring of its own.
 * Also each set-up's CPU time over the same round's "tc 50ms" run (paired: what the load does to a round, it
 * does to both). After each run with events (untimed), each thread maps a file executable and checks that a
 * PERF_RECORD_MMAP2 of its own thread at that address, timed inside the call, reached its ring; for off+dummy
 * it then enables the sampler and checks that samples arrive again.
 * usage: bench_switch_events [ROUND_TRIPS [ROUNDS]]   (default 20000, 7) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { NONE, TC1, TC50, OFFDUMMY, DUMMY, NCFG };
static const char *const names[NCFG] = {"none", "tc 1ms", "tc 50ms", "off+dummy", "dummy"};
#define RING_PAGES 16

typedef struct ev {
  int sampler, dummy; /* -1 when not open */
  unsigned char *ring;
  size_t len, page;
} ev;

static _Atomic int g_turn;
static pthread_barrier_t g_bar;
static long g_n;
static int g_cfg;
static _Atomic int g_bad; /* checks failed */
static char g_self_path[4096];

static int64_t ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void fwait(int v) { syscall(SYS_futex, &g_turn, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); }
static void fwake(void) { syscall(SYS_futex, &g_turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static int open_event(struct perf_event_attr *a) {
  return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_base(struct perf_event_attr *a, uint32_t type, uint64_t config) {
  memset(a, 0, sizeof *a);
  a->size = sizeof *a;
  a->type = type;
  a->config = config;
  a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a->exclude_kernel = 1;
  a->exclude_hv = 1;
  a->use_clockid = 1; /* SET_OUTPUT needs the same clock on both events */
  a->clockid = CLOCK_MONOTONIC_RAW;
  a->sample_id_all = 1;
}

static int map_ring(ev *e, int fd) {
  e->page = (size_t)sysconf(_SC_PAGESIZE);
  e->len = e->page * (1 + RING_PAGES);
  void *m = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  e->ring = m;
  return 0;
}

static void die(const char *what) {
  fprintf(stderr, "bench_switch_events: %s: %s (perf_event_paranoid?)\n", what, strerror(errno));
  exit(1);
}

/* The calling thread's events for set-up cfg. */
static void setup(int cfg, ev *e) {
  memset(e, 0, sizeof *e);
  e->sampler = e->dummy = -1;
  struct perf_event_attr a;
  if (cfg == TC1 || cfg == TC50 || cfg == OFFDUMMY) {
    attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    a.sample_period = 1000000;
    a.mmap = a.mmap2 = cfg != OFFDUMMY;
    if ((e->sampler = open_event(&a)) < 0) die("task-clock sampler");
    if (map_ring(e, e->sampler) != 0) die("sampler ring");
    if (cfg == TC50) {
      uint64_t p = 50000000;
      if (ioctl(e->sampler, PERF_EVENT_IOC_PERIOD, &p) != 0) die("PERF_EVENT_IOC_PERIOD");
    }
    if (cfg == OFFDUMMY && ioctl(e->sampler, PERF_EVENT_IOC_DISABLE, 0) != 0) die("PERF_EVENT_IOC_DISABLE");
  }
  if (cfg == OFFDUMMY || cfg == DUMMY) {
    attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
    a.mmap = a.mmap2 = 1;
    if ((e->dummy = open_event(&a)) < 0) die("dummy event");
    if (cfg == OFFDUMMY) {
      if (ioctl(e->dummy, PERF_EVENT_IOC_SET_OUTPUT, e->sampler) != 0) die("PERF_EVENT_IOC_SET_OUTPUT");
    } else if (map_ring(e, e->dummy) != 0) {
      die("dummy ring");
    }
  }
}

static void teardown(ev *e) {
  if (e->ring) munmap(e->ring, e->len);
  if (e->dummy >= 0) close(e->dummy);
  if (e->sampler >= 0) close(e->sampler);
}

/* Read the ring: the MMAP2 records of thread tid at address addr timed in [t0, t1], and the samples. */
static void drain(ev *e, int32_t tid, uint64_t addr, int64_t t0, int64_t t1, int *maps, int *samples) {
  struct perf_event_mmap_page *mp = (void *)e->ring;
  const unsigned char *data = e->ring + e->page;
  size_t size = e->len - e->page;
  uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
  unsigned char rec[8192];
  while (tail + sizeof(struct perf_event_header) <= head) {
    struct perf_event_header hd;
    for (size_t i = 0; i < sizeof hd; i++)
      ((unsigned char *)&hd)[i] = data[(tail + i) % size];
    if (hd.size < sizeof hd || tail + hd.size > head) break;
    for (size_t i = 0; i < hd.size && i < sizeof rec; i++)
      rec[i] = data[(tail + i) % size];
    if (hd.type == PERF_RECORD_SAMPLE) {
      ++*samples;
    } else if (hd.type == PERF_RECORD_MMAP2 && hd.size <= sizeof rec && hd.size >= sizeof hd + 64 + 16) {
      uint32_t pt[2];
      uint64_t a, tm;
      memcpy(pt, rec + sizeof hd, 8);
      memcpy(&a, rec + sizeof hd + 8, 8);
      memcpy(&tm, rec + hd.size - 8, 8); /* sample_id_all: pid, tid, time at the end */
      if ((int32_t)pt[1] == tid && a == addr && (int64_t)tm >= t0 && (int64_t)tm <= t1) ++*maps;
    }
    tail += hd.size;
  }
  __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/* Untimed checks on the calling thread's ring after a run: an executable mapping reported, and for off+dummy,
 * samples again once the sampler is enabled. */
static void check(int cfg, ev *e) {
  if (cfg == NONE) return;
  int32_t tid = (int32_t)syscall(SYS_gettid);
  int fd = open(g_self_path, O_RDONLY | O_CLOEXEC), maps = 0, samples = 0;
  drain(e, tid, 0, 0, 0, &maps, &samples); /* what the run left */
  int64_t t0 = ns(CLOCK_MONOTONIC_RAW);
  void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  int64_t t1 = ns(CLOCK_MONOTONIC_RAW);
  if (fd >= 0) close(fd);
  if (m == MAP_FAILED) {
    atomic_fetch_add(&g_bad, 1);
    fprintf(stderr, "%s: cannot map %s\n", names[cfg], g_self_path);
    return;
  }
  maps = samples = 0;
  drain(e, tid, (uint64_t)(uintptr_t)m, t0, t1, &maps, &samples);
  munmap(m, 4096);
  if (maps != 1) {
    atomic_fetch_add(&g_bad, 1);
    fprintf(stderr, "%s: thread %d: %d MMAP2 records of its executable mapping (want 1)\n", names[cfg],
            (int)tid, maps);
  }
  if (cfg != OFFDUMMY) return;
  ioctl(e->sampler, PERF_EVENT_IOC_ENABLE, 0);
  int64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID);
  volatile uint64_t x = 0;
  while (ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 5000000) /* in user space mostly: the samples are user-space */
    for (int i = 0; i < 100000; i++)
      x++;
  maps = samples = 0;
  drain(e, tid, 0, 0, 0, &maps, &samples);
  if (samples < 1) {
    atomic_fetch_add(&g_bad, 1);
    fprintf(stderr, "%s: thread %d: no sample in 5 ms of CPU once the sampler is enabled again\n", names[cfg],
            (int)tid);
  }
}

static void *partner(void *arg) {
  (void)arg;
  ev e;
  setup(g_cfg, &e);
  pthread_barrier_wait(&g_bar);
  for (long i = 0; i < g_n; i++) {
    while (atomic_load(&g_turn) != 1)
      fwait(0);
    atomic_store(&g_turn, 0);
    fwake();
  }
  pthread_barrier_wait(&g_bar); /* the timing is taken */
  check(g_cfg, &e);
  teardown(&e);
  return NULL;
}

/* One run of set-up cfg: CPU and wall ns per round trip. */
static void run(int cfg, double *cpu, double *wall) {
  g_cfg = cfg;
  atomic_store(&g_turn, 0);
  pthread_t t;
  if (pthread_create(&t, NULL, partner, NULL) != 0) die("pthread_create");
  ev e;
  setup(cfg, &e);
  pthread_barrier_wait(&g_bar);
  int64_t c0 = ns(CLOCK_PROCESS_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
  for (long i = 0; i < g_n; i++) {
    atomic_store(&g_turn, 1);
    fwake();
    while (atomic_load(&g_turn) != 0)
      fwait(1);
  }
  int64_t c1 = ns(CLOCK_PROCESS_CPUTIME_ID), w1 = ns(CLOCK_MONOTONIC);
  pthread_barrier_wait(&g_bar);
  check(cfg, &e);
  teardown(&e);
  pthread_join(t, NULL);
  *cpu = (double)(c1 - c0) / (double)g_n;
  *wall = (double)(w1 - w0) / (double)g_n;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void stats(double *v, int n, double *med, double *lo, double *hi) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  *lo = v[0];
  *hi = v[n - 1];
}

static void load(char *buf, size_t n) {
  FILE *f = fopen("/proc/loadavg", "r");
  buf[0] = 0;
  if (f && fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = 0;
  if (f) fclose(f);
}

int main(int argc, char **argv) {
  g_n = argc > 1 ? atol(argv[1]) : 20000;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  if (g_n < 1 || rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: bench_switch_events [ROUND_TRIPS [ROUNDS]]\n");
    return 2;
  }
  ssize_t k = readlink("/proc/self/exe", g_self_path, sizeof g_self_path - 1);
  g_self_path[k > 0 ? k : 0] = 0;
  pthread_barrier_init(&g_bar, NULL, 2);
  double *cpu = calloc((size_t)(NCFG * rounds), sizeof *cpu),
         *wall = calloc((size_t)(NCFG * rounds), sizeof *wall);
  if (!cpu || !wall) return 1;
  char l0[128], l1[128];
  load(l0, sizeof l0);
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < NCFG; i++) {
      int c = (i + r) % NCFG; /* interleaved, the order rotating */
      run(c, &cpu[c * rounds + r], &wall[c * rounds + r]);
    }
  load(l1, sizeof l1);
  printf("futex ping-pong, %ld round trips (4 switches each) per run, %d interleaved rounds\n", g_n, rounds);
  printf("%-12s %10s %19s %10s %19s %17s\n", "events", "CPU ns/rt", "min-max", "wall ns/rt", "min-max",
         "CPU / tc 50ms");
  double *ratio = calloc((size_t)rounds, sizeof *ratio);
  if (!ratio) return 1;
  for (int c = 0; c < NCFG; c++) {
    double m, lo, hi, wm, wlo, whi, rm, rlo, rhi;
    for (int r = 0; r < rounds; r++) /* paired: the same round's tc 50ms run */
      ratio[r] = cpu[c * rounds + r] / cpu[TC50 * rounds + r];
    stats(ratio, rounds, &rm, &rlo, &rhi);
    stats(cpu + c * rounds, rounds, &m, &lo, &hi);
    stats(wall + c * rounds, rounds, &wm, &wlo, &whi);
    char a[40], b[40];
    snprintf(a, sizeof a, "%.0f-%.0f", lo, hi);
    snprintf(b, sizeof b, "%.0f-%.0f", wlo, whi);
    char q[40];
    snprintf(q, sizeof q, "%.2f (%.2f-%.2f)", rm, rlo, rhi);
    printf("%-12s %10.0f %19s %10.0f %19s %17s\n", names[c], m, a, wm, b, q);
  }
  free(ratio);
  printf("checks: %s (executable mmaps reported in the ring; off+dummy: samples once enabled again)\n",
         atomic_load(&g_bad) ? "FAILED" : "passed");
  printf("load: %s at the start, %s at the end; %ld cores\n", l0, l1, sysconf(_SC_NPROCESSORS_ONLN));
  free(cpu);
  free(wall);
  return atomic_load(&g_bad) ? 1 : 0;
}
