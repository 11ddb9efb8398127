/* The perf_event sampling provider: a task-clock sampler per thread (user-space IPs, CLOCK_MONOTONIC_RAW
 * times) with the listed counters in its group, read from a ring buffer mapped per thread. */
/* SPDX-License-Identifier: MIT */
#include "sample.h"

#include "counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 16 /* data pages per thread (64 KiB): ~2700 samples between two reads */

typedef struct pthr {
  int fd[1 + HPC_SAMPLE_MAX_COUNTERS];
  size_t nfd;
  unsigned char *base;
  size_t len, page;
  int32_t tid;
} pthr;

static long open_event(struct perf_event_attr *a, pid_t tid, int group) {
  return syscall(SYS_perf_event_open, a, tid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static void p_close(void *h) {
  pthr *t = h;
  if (!t) return;
  if (t->base) munmap(t->base, t->len);
  for (size_t i = 0; i < t->nfd; i++)
    close(t->fd[i]);
  free(t);
}

static void *p_open(pid_t tid, uint64_t period_ns, const char *const *counters, size_t n, const char **why) {
  pthr *t = calloc(1, sizeof *t);
  if (!t) {
    *why = "out of memory";
    return NULL;
  }
  t->tid = (int32_t)tid;
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = period_ns;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (n ? PERF_SAMPLE_READ : 0);
  a.read_format = n ? PERF_FORMAT_GROUP : 0;
  a.exclude_kernel = 1; /* user-space IPs only: allowed at perf_event_paranoid 2 */
  a.exclude_hv = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC_RAW;
  a.disabled = 1;
  /* the thread's executable mmaps as records in the ring, timed like the samples (sample_id_all: its pid,
   * tid and time at the record's end): a kernel's code loaded where another was unloaded is told apart */
  a.mmap = 1;
  a.mmap2 = 1;
  a.sample_id_all = 1;
  long fd = open_event(&a, tid, -1);
  if (fd < 0) {
    *why = errno == EACCES || errno == EPERM ? "perf_event_open refused (perf_event_paranoid)"
           : errno == ESRCH                  ? "thread gone"
                                             : "perf_event_open failed";
    free(t);
    return NULL;
  }
  t->fd[t->nfd++] = (int)fd;
  for (size_t i = 0; i < n && i < HPC_SAMPLE_MAX_COUNTERS; i++) {
    struct perf_event_attr m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    uint64_t config;
    if (hc_perf_event_of(counters[i], &m.type, &config) != 0) {
      *why = "unknown counter";
      p_close(t);
      return NULL;
    }
    m.config = config;
    m.use_clockid = 1; /* a group shares its leader's clock */
    m.clockid = CLOCK_MONOTONIC_RAW;
    m.exclude_kernel = 1;
    m.exclude_hv = 1;
    long mf = open_event(&m, tid, t->fd[0]);
    if (mf < 0) {
      *why = "a counter cannot be opened on this machine (no PMU?)";
      p_close(t);
      return NULL;
    }
    t->fd[t->nfd++] = (int)mf;
  }
  t->page = (size_t)sysconf(_SC_PAGESIZE);
  t->len = t->page * (1 + RING_PAGES);
  void *m = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd[0], 0);
  if (m == MAP_FAILED) {
    *why = "cannot map the sample buffer";
    p_close(t);
    return NULL;
  }
  t->base = m;
  ioctl(t->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  return t;
}

/* Copy n bytes at ring position pos (wrapping) into out. */
static void ring_copy(const unsigned char *data, size_t size, uint64_t pos, void *out, size_t n) {
  size_t off = (size_t)(pos % size), first = size - off < n ? size - off : n;
  memcpy(out, data + off, first);
  memcpy((unsigned char *)out + first, data, n - first);
}

static uint64_t p_drain(void *h, void (*fn)(void *ctx, const hpc_raw_sample *s), void *ctx) {
  pthr *t = h;
  struct perf_event_mmap_page *mp = (void *)t->base;
  const unsigned char *data = t->base + t->page;
  size_t size = t->len - t->page;
  uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail, lost = 0;
  unsigned char rec[4608]; /* a sample, or an mmap record with its file's path */
  while (tail + sizeof(struct perf_event_header) <= head) {
    struct perf_event_header hd;
    ring_copy(data, size, tail, &hd, sizeof hd);
    if (hd.size < sizeof hd || tail + hd.size > head) break;
    if (hd.size <= sizeof rec) {
      ring_copy(data, size, tail, rec, hd.size);
      const unsigned char *p = rec + sizeof hd, *end = rec + hd.size;
      if (hd.type == PERF_RECORD_SAMPLE && end - p >= 24) {
        hpc_raw_sample s;
        uint32_t pid_tid[2];
        uint64_t tm;
        memcpy(&s.ip, p, 8);
        memcpy(pid_tid, p + 8, 8);
        memcpy(&tm, p + 16, 8);
        p += 24;
        s.tid = (int32_t)pid_tid[1];
        s.time_ns = (int64_t)tm;
        s.nvals = 0;
        s.map_path = NULL;
        if (t->nfd > 1 && end - p >= 8) {
          uint64_t nr;
          memcpy(&nr, p, 8);
          p += 8;
          /* the group's values: the sampler (task-clock) first, then the listed counters */
          for (uint64_t i = 0; i < nr && end - p >= 8; i++, p += 8)
            if (i >= 1 && s.nvals < HPC_SAMPLE_MAX_COUNTERS) memcpy(&s.vals[s.nvals++], p, 8);
        }
        fn(ctx, &s);
      } else if (hd.type == PERF_RECORD_MMAP2 && end - p >= 64 + 1 + 16) {
        /* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename (NUL-terminated,
         * padded to 8), then the sample id: pid, tid, time */
        hpc_raw_sample s;
        uint32_t mm[2];
        uint64_t tm;
        memset(&s, 0, sizeof s);
        memcpy(&s.ip, p + 8, 8);
        memcpy(&s.map_len, p + 16, 8);
        memcpy(&s.map_pgoff, p + 24, 8);
        memcpy(mm, p + 32, 8);
        memcpy(&s.map_ino, p + 40, 8);
        memcpy(&tm, end - 8, 8);
        s.map_dev = (uint64_t)mm[0] << 32 | mm[1];
        s.time_ns = (int64_t)tm;
        rec[hd.size - 17] = 0; /* the path ends before the sample id, whatever the record says */
        s.map_path = (const char *)rec + sizeof hd + 64;
        if (!(hd.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) fn(ctx, &s);
      } else if (hd.type == PERF_RECORD_LOST && end - p >= 16) {
        uint64_t n;
        memcpy(&n, p + 8, 8);
        lost += n;
      }
    }
    tail += hd.size;
  }
  __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
  return lost;
}

/* The group's values now: one read of the leader (the sampler first, then the listed counters). */
static size_t p_read(void *h, uint64_t *vals, size_t n) {
  pthr *t = h;
  uint64_t buf[2 + HPC_SAMPLE_MAX_COUNTERS];
  if (t->nfd < 2) return 0;
  ssize_t r = read(t->fd[0], buf, sizeof buf);
  if (r < (ssize_t)(2 * sizeof buf[0]) || buf[0] < 2) return 0;
  size_t k = 0;
  for (uint64_t i = 1; i < buf[0] && k < n && (ssize_t)((i + 2) * sizeof buf[0]) <= r; i++)
    vals[k++] = buf[1 + i];
  return k;
}

/* A new period for the sampler (perf applies it from the next sample on). */
static int p_set_period(void *h, uint64_t period_ns) {
  pthr *t = h;
  return ioctl(t->fd[0], PERF_EVENT_IOC_PERIOD, &period_ns) == 0 ? 0 : -1;
}

const hpc_sample_provider hpc_sample_perf = {"perf", p_open, p_drain, p_close, p_read, p_set_period};
