/* The "perf" counter provider: Linux perf_event_open (no libpfm) for CPU devices — software events
 * everywhere, hardware and cache events where a PMU exists — and sessions that count one pass over
 * every thread of the process. start/stop make system calls only: they never allocate or block. */
/* SPDX-License-Identifier: MIT */
#include "counters_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the catalogue ---- */

typedef struct perf_def {
  const char *name, *description, *unit, *block;
  uint32_t type;
  uint64_t config;
} perf_def;

#define SW(n, d, u, c)                                                                                       \
  { n, d, u, "sw", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c }
#define HW(n, d, u, c)                                                                                       \
  { n, d, u, "core", PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c }
#define HWC(n, d, cache, op, res)                                                                            \
  {                                                                                                          \
    n, d, "count", "core", PERF_TYPE_HW_CACHE,                                                               \
        PERF_COUNT_HW_CACHE_##cache | (PERF_COUNT_HW_CACHE_OP_##op << 8) |                                   \
            (PERF_COUNT_HW_CACHE_RESULT_##res << 16)                                                         \
  }

static const perf_def perf_defs[] = {
    SW("task-clock", "CPU time of the counted threads", "ns", TASK_CLOCK),
    SW("cpu-clock", "CPU clock timer while a counted thread runs", "ns", CPU_CLOCK),
    SW("context-switches", "context switches of the counted threads", "count", CONTEXT_SWITCHES),
    SW("cpu-migrations", "moves of a counted thread to another CPU", "count", CPU_MIGRATIONS),
    SW("page-faults", "page faults (minor and major)", "count", PAGE_FAULTS),
    SW("minor-faults", "page faults served without I/O", "count", PAGE_FAULTS_MIN),
    SW("major-faults", "page faults that needed I/O", "count", PAGE_FAULTS_MAJ),
    SW("alignment-faults", "unaligned accesses fixed up by the kernel", "count", ALIGNMENT_FAULTS),
    SW("emulation-faults", "instructions emulated by the kernel", "count", EMULATION_FAULTS),
    HW("cycles", "CPU cycles", "cycles", CPU_CYCLES),
    HW("instructions", "instructions retired", "count", INSTRUCTIONS),
    HW("cache-references", "cache accesses (usually last-level cache)", "count", CACHE_REFERENCES),
    HW("cache-misses", "cache misses (usually last-level cache)", "count", CACHE_MISSES),
    HW("branch-instructions", "branch instructions retired", "count", BRANCH_INSTRUCTIONS),
    HW("branch-misses", "mispredicted branches", "count", BRANCH_MISSES),
    HW("bus-cycles", "bus cycles", "cycles", BUS_CYCLES),
    HW("ref-cycles", "reference cycles, not scaled by frequency changes", "cycles", REF_CPU_CYCLES),
    HW("stalled-cycles-frontend", "cycles the frontend issued nothing", "cycles", STALLED_CYCLES_FRONTEND),
    HW("stalled-cycles-backend", "cycles the backend retired nothing", "cycles", STALLED_CYCLES_BACKEND),
    HWC("L1-dcache-loads", "L1 data cache loads", L1D, READ, ACCESS),
    HWC("L1-dcache-load-misses", "L1 data cache load misses", L1D, READ, MISS),
    HWC("L1-icache-load-misses", "L1 instruction cache misses", L1I, READ, MISS),
    HWC("LLC-loads", "last-level cache loads", LL, READ, ACCESS),
    HWC("LLC-load-misses", "last-level cache load misses", LL, READ, MISS),
    HWC("dTLB-load-misses", "data TLB load misses", DTLB, READ, MISS),
    HWC("iTLB-load-misses", "instruction TLB misses", ITLB, READ, MISS),
    HWC("branch-load-misses", "branch predictor misses", BPU, READ, MISS),
};
#define NDEFS (sizeof perf_defs / sizeof perf_defs[0])

/* ---- the system call, replaceable by tests (fault injection) ---- */

long hc_perf_open_sys(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags) {
  return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}
long (*hc_perf_open_fn)(struct perf_event_attr *, pid_t, int, int, unsigned long) = hc_perf_open_sys;
/* perf_event_paranoid, replaceable by tests; -100 when it cannot be read */
int hc_perf_paranoid_sys(void) {
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  int v = -100;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = -100;
    fclose(f);
  }
  return v;
}
int (*hc_perf_paranoid_fn)(void) = hc_perf_paranoid_sys;

/* Software events run free from the open to the close (a session reads them at start and stop):
 * enabling or disabling a counter of another thread costs an IPI to the CPU it last ran on, ~20 µs
 * in a VM, per counter and thread. Hardware events are gated by ENABLE/DISABLE so that only one
 * pass at a time holds the PMU's few counters. */
static int perf_gated(const hc_perf_event *e) { return e->type != PERF_TYPE_SOFTWARE; }

static void perf_attr(struct perf_event_attr *a, const hc_perf_event *e, int inherit, int disabled) {
  memset(a, 0, sizeof *a);
  a->size = sizeof *a;
  a->type = e->type;
  a->config = e->config;
  a->disabled = disabled ? 1 : 0;
  a->inherit = inherit ? 1 : 0;
  a->exclude_kernel = e->exclude_kernel ? 1 : 0;
  a->exclude_hv = 1;
  a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* A session's counter on thread `tid` (0: the calling thread); `group`: -1 alone, -2 the leader of a group
 * read with one read() (PERF_FORMAT_GROUP), else the leader's fd. `*sample`: open it as a period-1
 * sampling event whose ring can count it ("Counts without a system call" below); cleared when the kernel
 * refused that and the counter was opened to be read only. */
static int perf_open(const hc_perf_event *e, pid_t tid, int inherit, int group, int *sample) {
  struct perf_event_attr a;
  perf_attr(&a, e, inherit, perf_gated(e));
  if (group == -2) a.read_format |= PERF_FORMAT_GROUP;
  if (*sample) {
    a.sample_period = 1; /* no sample fields: each occurrence writes an 8-byte header alone */
    int fd = (int)hc_perf_open_fn(&a, tid, -1, group >= 0 ? group : -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0 || errno == ESRCH) return fd;
    *sample = 0;
    a.sample_period = 0;
  }
  return (int)hc_perf_open_fn(&a, tid, -1, group >= 0 ? group : -1, PERF_FLAG_FD_CLOEXEC);
}

static int is_nosupport(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

/* Why perf_event_open failed with `err` for an event (`pmu`: does this machine have a PMU at all). */
static void perf_reason(char *out, size_t len, int err, int hardware, int pmu) {
  int par = hc_perf_paranoid_fn();
  if (hardware && !pmu && (is_nosupport(err) || err == EINVAL))
    snprintf(out, len, "no PMU: hardware events are not supported on this machine (virtualised?)");
  else if (is_nosupport(err) || err == EINVAL)
    snprintf(out, len, "this CPU's PMU does not provide this event");
  else if ((err == EACCES || err == EPERM) && par >= 3)
    snprintf(out, len,
             "perf_event_paranoid=%d forbids perf events to unprivileged users (lower it to 2 or grant "
             "CAP_PERFMON)",
             par);
  else if (err == EACCES && par != -100)
    snprintf(out, len, "perf_event_paranoid=%d forbids this event to this user (grant CAP_PERFMON)", par);
  else if (err == EPERM)
    snprintf(out, len,
             "perf_event_open is not permitted (a seccomp filter, e.g. a container's, may block it)");
  else if (err == ENOSYS)
    snprintf(out, len, "this kernel has no perf_event support (perf_event_open: ENOSYS)");
  else if (err == EMFILE || err == ENFILE)
    snprintf(out, len, "too many open files to probe perf events");
  else
    snprintf(out, len, "perf_event_open failed: %s", strerror(err));
}

/* Try to open e on this thread (disabled, closed at once); on EACCES/EPERM retry excluding the kernel,
 * as perf does for unprivileged users. Returns 0 or the errno. */
static int perf_probe_once(const hc_perf_event *e) {
  struct perf_event_attr a;
  perf_attr(&a, e, 0, 1);
  return (int)hc_perf_open_fn(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int perf_probe(hc_perf_event *e) {
  e->exclude_kernel = 0;
  int fd = perf_probe_once(e);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    e->exclude_kernel = 1;
    fd = perf_probe_once(e);
  }
  if (fd < 0) return errno ? errno : EIO;
  close(fd);
  return 0;
}

hc_status hc_perf_provider_open(hc_provider **out) {
  hc_provider *p = hc_provider_alloc(HC_KIND_PERF, "perf");
  if (!p) return HC_ERR_NOMEM;
  p->counters = calloc(NDEFS, sizeof *p->counters);
  p->perf = calloc(NDEFS, sizeof *p->perf);
  if (!p->counters || !p->perf) {
    hc_provider_close(p);
    return HC_ERR_NOMEM;
  }
  p->n = NDEFS;
  const char *ring = getenv("HUBPROF_PERF_RING"); /* 0: never count from rings (tests, comparisons) */
  if (ring && strcmp(ring, "0") == 0) snprintf(p->ring_off, sizeof p->ring_off, "HUBPROF_PERF_RING=0");
  snprintf(p->description, sizeof p->description, "Linux perf_event on this machine's CPUs");
  /* does the machine have a PMU at all? "cycles" is the event every PMU has */
  hc_perf_event cyc = {.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES};
  int cyc_err = perf_probe(&cyc), pmu = !(cyc_err && (is_nosupport(cyc_err) || cyc_err == EINVAL));
  for (size_t i = 0; i < NDEFS; i++) {
    const perf_def *d = &perf_defs[i];
    hc_perf_event *e = &p->perf[i];
    e->type = d->type;
    e->config = d->config;
    hc_counter *c = &p->counters[i];
    c->name = d->name;
    c->description = d->description;
    c->unit = d->unit;
    c->block = d->block;
    int err = perf_probe(e);
    c->available = err == 0;
    if (err) perf_reason(e->reason, sizeof e->reason, err, d->type != PERF_TYPE_SOFTWARE, pmu);
    c->reason = err ? e->reason : "";
  }
  *out = p;
  return HC_OK;
}

/* By name: "perf" is the one provider opened so (a device description names it; hc_device_open opens the
 * others). */
hc_status hc_provider_open(const char *name, hc_provider **out) {
  if (!name || !out) return HC_ERR_INVALID;
  *out = NULL;
  if (strcmp(name, "perf") == 0) return hc_perf_provider_open(out);
  return HC_ERR_UNKNOWN;
}

/* ---- sessions ---- */

struct hc_session {
  hc_provider *p;
  hc_session_mode mode; /* INHERIT or PER_THREAD */
  size_t n;             /* counters */
  size_t *idx;          /* provider index of each counter */
  size_t cap, nthreads; /* thread slots: capacity and used */
  pid_t *tids;          /* cap */
  int *fds;             /* cap * n, slot-major */
  uint64_t *base;       /* cap * n * 3: value, time enabled, time running at start */
  unsigned char *seen;  /* cap: marks of one scan of /proc/self/task */
  int taskdir;          /* /proc/self/task, PER_THREAD; -1 otherwise */
  uint64_t scan_gen;    /* the provider's thr_gen at the last scan */
  int64_t scan_ns;      /* CLOCK_MONOTONIC_COARSE of the last scan */
  int started;          /* between start and stop */
  size_t missed;        /* threads that found no free slot */
  pid_t skip;           /* PER_THREAD: the thread left out of the count (0: none) */
  size_t skipslot;      /* its slot at the last start; SIZE_MAX when every thread is counted */
  size_t ngated;        /* counters enabled at start and disabled at stop (hardware) */
  int grouped;          /* PER_THREAD, >= 2 counters, none gated: one group per thread, one read() each */
  uint64_t *rbuf;       /* 3 + 4n: a group read (nr, enabled, running, values), then one slot's readings */
  pid_t caller;         /* PER_THREAD: count only this thread, the one calling start and stop (0: off) */
  size_t onlyslot;      /* its slot at the last start; SIZE_MAX when the other rules apply */
  int rusage;           /* every counter is one getrusage(RUSAGE_THREAD) gives exactly (context-switches) */
  int use_rusage;       /* the current pass reads getrusage instead of perf (caller alone, s->rusage) */
  int ringable;         /* PER_THREAD, every counter a ring counts or a clock (has_clock): no read() */
  int has_clock;        /* some counter is a clock (task-clock, cpu-clock): counted with a sentinel */
  int use_ring;         /* the current pass counts from the caller slot's rings */
  int ring_sys;         /* the current window made a system call after all (a clock's reference) */
  size_t ringslot;      /* that slot */
  uint64_t ring_starts; /* starts that tried the rings (every HC_RING_CHECK-th checks them) */
  struct ring_fd *rfd;  /* cap * n, beside fds */
  struct ring_fd *sent; /* cap: each slot's sentinel, its context switches (has_clock) */
};

/* ---- counts without a system call (docs/counters.md "Counts without a system call") ----
 * A perf read() costs ~0.8 µs in this VM, twice per pass. A software event that fires one occurrence at a
 * time (context switches, migrations, faults) is opened instead as a sampling event with period 1 and no
 * sample fields, so that each occurrence writes one 8-byte record into the event's ring buffer. Mapped
 * read-only, the ring runs in overwrite mode: the kernel never waits for a reader and data_head, a byte
 * count, only grows, so head / 8 is the event's count up to a constant: one load instead of a system call.
 * The kernel never throttles such an event (the first overflow of an occurrence is not throttled, and
 * each of these occurrences overflows once) and writes it no other record (no sample_id_all, mmap, comm
 * or switch records were asked for). Rings serve only the caller-alone sessions (one thread, the one
 * reading); each maps two pages on first use. Every HC_RING_CHECK-th start compares head / 8 with read():
 * one disagreement turns rings off for the provider, and read() counts from then on. */
/* The clocks (task-clock, cpu-clock: the time the thread spent on a CPU) need no ring of their own: while
 * the thread has not left its CPU, its clock advances as CLOCK_MONOTONIC_RAW does. A sentinel — the
 * thread's context switches, counted by a ring — tells: a clock's count is its last read() (the
 * reference) plus the raw clock's advance since, as long as the sentinel's head has not moved and the
 * reference is under HC_CLOCK_REF_NS old; otherwise one read() of the slot takes a new reference. In a VM
 * the two clocks' rates differ by up to a few 0.1 % (perf's is the scheduler's clock): the advance is scaled
 * by the rate measured between the last two references of one stay on the CPU (at least HC_CLOCK_RATE_NS
 * apart). The sentinel needs kernel-mode events (the switch happens in the kernel): not with
 * exclude_kernel. */
enum { RING_NO, RING_CAN, RING_MAPPED, RING_FAILED, RING_CLOCK };
typedef struct ring_fd {
  struct perf_event_mmap_page *pg; /* the mapped ring, or NULL */
  int64_t off;                     /* read()'s count minus head / 8 when it was last checked */
  uint64_t cref, href;             /* RING_CLOCK: the reference's count, the sentinel's head then */
  int64_t tref;                    /* its CLOCK_MONOTONIC_RAW ns */
  double rate;                     /* the clock's ns per raw ns, measured between references (0: 1) */
  int fd;                          /* a sentinel's descriptor (-1: none) */
  unsigned char mode;              /* RING_* */
  unsigned char refok;             /* RING_CLOCK: cref/href/tref hold a reference */
} ring_fd;
#define HC_RING_CHECK 64
#define HC_CLOCK_REF_NS 2000000LL  /* a reference's age at most: 2 ms */
#define HC_CLOCK_RATE_NS 1000000LL /* references this far apart on one CPU measure the clocks' rate */
#define HC_CLOCK_CHECK_NS 20000    /* the periodic check's bound for a clock: 20 µs, ~20 read() calls */
#define HC_RING_PAGES 2            /* the control page and one data page */

static size_t ring_bytes(void) { return HC_RING_PAGES * (size_t)sysconf(_SC_PAGESIZE); }
static inline uint64_t ring_head(const struct perf_event_mmap_page *pg) {
  return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}
/* The software events whose every occurrence adds one (perf_sw_event with nr 1): a ring counts them. */
static int ring_countable(const hc_perf_event *e) {
  if (e->type != PERF_TYPE_SOFTWARE) return 0;
  switch (e->config) {
  case PERF_COUNT_SW_CONTEXT_SWITCHES:
  case PERF_COUNT_SW_CPU_MIGRATIONS:
  case PERF_COUNT_SW_PAGE_FAULTS:
  case PERF_COUNT_SW_PAGE_FAULTS_MIN:
  case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
  case PERF_COUNT_SW_ALIGNMENT_FAULTS:
  case PERF_COUNT_SW_EMULATION_FAULTS: return 1;
  default: return 0;
  }
}
/* The clocks a sentinel serves (their count is the time the thread ran). */
static int clock_countable(const hc_perf_event *e) {
  return e->type == PERF_TYPE_SOFTWARE &&
         (e->config == PERF_COUNT_SW_TASK_CLOCK || e->config == PERF_COUNT_SW_CPU_CLOCK);
}
static void ring_drop(ring_fd *r) {
  if (r->pg) munmap(r->pg, ring_bytes());
  r->pg = NULL;
  r->mode = RING_NO;
  r->refok = 0;
}
static void sent_drop(ring_fd *r) {
  ring_drop(r);
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
}
static inline int64_t raw_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The layout getdents64 returns (glibc's struct dirent64 differs in name only; spelled out here). */
struct hc_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void close_slot(hc_session *s, size_t slot) {
  for (size_t k = 0; k < s->n; k++) {
    int *fd = &s->fds[slot * s->n + k];
    ring_drop(&s->rfd[slot * s->n + k]);
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  if (s->sent) sent_drop(&s->sent[slot]);
}

/* Open the counters of one thread into `slot`. Returns 1 opened, 0 the thread is gone, -errno. */
static int open_slot(hc_session *s, size_t slot, pid_t tid, int inherit) {
  for (size_t k = 0; k < s->n; k++) {
    int group = !s->grouped ? -1 : k == 0 ? -2 : s->fds[slot * s->n];
    const hc_perf_event *e = &s->p->perf[s->idx[k]];
    int sample = s->ringable && !s->p->ring_off[0] && ring_countable(e);
    int fd = perf_open(e, tid, inherit, group, &sample);
    if (fd < 0) {
      int err = errno;
      close_slot(s, slot);
      return err == ESRCH ? 0 : -(err ? err : EIO);
    }
    s->fds[slot * s->n + k] = fd;
    s->rfd[slot * s->n + k].mode = sample                              ? RING_CAN
                                   : s->ringable && clock_countable(e) ? RING_CLOCK
                                                                       : RING_NO;
  }
  s->tids[slot] = tid;
  return 1;
}

/* One pass over /proc/self/task with getdents64 into a stack buffer: open counters on threads not
 * seen before (while slots last), close those of threads that exited. No allocation. */
static int scan_threads(hc_session *s, int *err) {
  char buf[4096] __attribute__((aligned(8)));
  memset(s->seen, 0, s->cap);
  if (lseek(s->taskdir, 0, SEEK_SET) < 0) {
    *err = errno;
    return -1;
  }
  for (;;) {
    long got = syscall(SYS_getdents64, s->taskdir, buf, sizeof buf);
    if (got < 0) {
      *err = errno;
      return -1;
    }
    if (got == 0) break;
    for (long off = 0; off < got;) {
      struct hc_dirent64 *d = (struct hc_dirent64 *)(buf + off);
      off += d->d_reclen;
      pid_t tid = 0;
      const char *c = d->d_name;
      if (*c < '0' || *c > '9') continue;
      for (; *c >= '0' && *c <= '9'; c++)
        tid = tid * 10 + (*c - '0');
      size_t j = 0;
      while (j < s->nthreads && s->tids[j] != tid)
        j++;
      if (j < s->nthreads) {
        s->seen[j] = 1;
        continue;
      }
      if (s->nthreads == s->cap) {
        s->missed++;
        continue;
      }
      int r = open_slot(s, s->nthreads, tid, 0);
      if (r < 0) {
        *err = -r;
        return -1;
      }
      if (r > 0) s->seen[s->nthreads++] = 1;
    }
  }
  for (size_t j = 0; j < s->nthreads;) { /* threads that exited: close, move the last slot here */
    if (s->seen[j]) {
      j++;
      continue;
    }
    close_slot(s, j);
    size_t last = --s->nthreads;
    if (j != last) {
      s->tids[j] = s->tids[last];
      s->seen[j] = s->seen[last];
      memcpy(&s->fds[j * s->n], &s->fds[last * s->n], s->n * sizeof *s->fds);
      memcpy(&s->rfd[j * s->n], &s->rfd[last * s->n], s->n * sizeof *s->rfd);
      for (size_t k = 0; k < s->n; k++) {
        s->fds[last * s->n + k] = -1;
        s->rfd[last * s->n + k] = (ring_fd){.fd = -1};
      }
      s->sent[j] = s->sent[last];
      s->sent[last] = (ring_fd){.fd = -1};
    }
  }
  return 0;
}

/* PER_THREAD starts re-read the thread list only when it may have changed (docs/replay.md "Fixed cost"):
 * procfs gives /proc/self/task the link count 2 + the process's thread count, one fstat (~1 µs in a VM)
 * against ~3.4 µs for the getdents scan. The provider keeps the count of the last check and a generation
 * bumped when a check saw it change, so a session whose start skips the check (hc_session_start_cached)
 * still re-reads after another session's check saw a change. A thread that starts while another exits
 * leaves the count unchanged: the list is also re-read when the session's last scan is HC_RESCAN_NS old. */
#define HC_RESCAN_NS 10000000LL
static int64_t coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

enum { SCAN_CHECK, SCAN_FORCE, SCAN_CACHED };
/* scan_threads when the thread list may have changed since the session's last scan: `how` SCAN_CHECK
 * (fstat the directory), SCAN_FORCE, SCAN_CACHED (only what other sessions' checks saw, and the age).
 * 1 scanned, 0 not needed, -1 failed (*err). */
static int rescan_threads(hc_session *s, int how, int *err) {
  hc_provider *p = s->p;
  int64_t now = coarse_ns();
  if (how == SCAN_CHECK) {
    struct stat st;
    if (fstat(s->taskdir, &st) != 0) {
      how = SCAN_FORCE;
    } else if ((unsigned long)st.st_nlink != p->thr_nlink) { /* read before the scan: a thread born
                                                                 during it shows at the next check */
      p->thr_nlink = (unsigned long)st.st_nlink;
      p->thr_gen++;
    }
  }
  if (how != SCAN_FORCE && s->scan_gen == p->thr_gen && now - s->scan_ns < HC_RESCAN_NS) return 0;
  s->scan_gen = p->thr_gen;
  s->scan_ns = now;
  if (scan_threads(s, err) == 0) return 1;
  s->scan_ns = 0; /* scan again next time */
  return -1;
}

/* getrusage(RUSAGE_THREAD) stands for a perf counter of the calling thread only where the kernel counts the
 * same events at the same place: context switches (nvcsw + nivcsw are incremented in __schedule exactly
 * when perf's context-switches event fires, prev != next), and only when perf would count kernel-mode
 * events (with exclude_kernel the perf event, fired in the scheduler, counts nothing). Not the page-fault
 * counters (min_flt also counts faults taken for get_user_pages, e.g. MAP_POPULATE, which perf does not)
 * nor task-clock (the thread's CPU time is another clock than perf's). docs/counters.md "Sessions". */
static int rusage_exact(const hc_perf_event *e) {
  return e->type == PERF_TYPE_SOFTWARE && e->config == PERF_COUNT_SW_CONTEXT_SWITCHES && !e->exclude_kernel;
}
static int rusage_switches(uint64_t *out) {
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return -1;
  *out = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
  return 0;
}

size_t hc_perf_count_threads(void) {
  size_t n = 0;
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096] __attribute__((aligned(8)));
  long got;
  while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
    for (long off = 0; off < got;) {
      struct hc_dirent64 *d = (struct hc_dirent64 *)(buf + off);
      off += d->d_reclen;
      n += d->d_name[0] >= '0' && d->d_name[0] <= '9';
    }
  close(fd);
  return n;
}

/* The context-switch event a clock's sentinel counts, when this machine has it. */
static const hc_perf_event *sentinel_event(const hc_provider *p) {
  for (size_t i = 0; i < p->n; i++)
    if (p->perf[i].type == PERF_TYPE_SOFTWARE && p->perf[i].config == PERF_COUNT_SW_CONTEXT_SWITCHES)
      return p->counters[i].available ? &p->perf[i] : NULL;
  return NULL;
}

hc_status hc_session_open(hc_provider *p, const size_t *idx, size_t n, hc_session **out) {
  return hc_session_open_mode(p, idx, n, HC_SESSION_AUTO, out);
}

hc_status hc_session_open_mode(hc_provider *p, const size_t *idx, size_t n, hc_session_mode mode,
                               hc_session **out) {
  if (!p || !out || (n && !idx) || mode < HC_SESSION_AUTO || mode > HC_SESSION_PER_THREAD)
    return HC_ERR_INVALID;
  *out = NULL;
  p->error[0] = 0;
  if (p->kind != HC_KIND_PERF) {
    snprintf(p->error, sizeof p->error,
             "no provider measures %s on this machine (description for planning only)",
             p->has_limits ? p->limits.device : p->name);
    return HC_ERR_UNAVAILABLE;
  }
  for (size_t k = 0; k < n; k++) {
    if (idx[k] >= p->n) {
      snprintf(p->error, sizeof p->error, "counter index %zu out of range (%zu counters)", idx[k], p->n);
      return HC_ERR_INVALID;
    }
    if (!p->counters[idx[k]].available) {
      snprintf(p->error, sizeof p->error, "counter '%s' is not available: %s", p->counters[idx[k]].name,
               p->counters[idx[k]].reason);
      return HC_ERR_UNAVAILABLE;
    }
  }
  size_t threads = hc_perf_count_threads();
  if (mode == HC_SESSION_AUTO) mode = threads <= 1 ? HC_SESSION_INHERIT : HC_SESSION_PER_THREAD;
  hc_session *s = calloc(1, sizeof *s);
  if (!s) return HC_ERR_NOMEM;
  s->p = p;
  s->mode = mode;
  s->n = n;
  s->taskdir = -1;
  s->skipslot = SIZE_MAX;
  s->onlyslot = SIZE_MAX;
  s->cap = mode == HC_SESSION_INHERIT ? 1 : (4 * threads > 256 ? 4 * threads : 256);
  s->idx = malloc((n ? n : 1) * sizeof *s->idx);
  s->tids = calloc(s->cap, sizeof *s->tids);
  s->fds = malloc(s->cap * (n ? n : 1) * sizeof *s->fds);
  s->base = calloc(s->cap * (n ? n : 1) * 3, sizeof *s->base);
  s->seen = calloc(s->cap, 1);
  s->rbuf = malloc((3 + 4 * n) * sizeof *s->rbuf);
  s->rfd = calloc(s->cap * (n ? n : 1), sizeof *s->rfd);
  s->sent = calloc(s->cap, sizeof *s->sent);
  if (s->sent)
    for (size_t j = 0; j < s->cap; j++)
      s->sent[j].fd = -1;
  if (s->fds)
    for (size_t i = 0; i < s->cap * n; i++)
      s->fds[i] = -1;
  if (!s->idx || !s->tids || !s->fds || !s->base || !s->seen || !s->rbuf || !s->rfd || !s->sent) {
    hc_session_close(s);
    return HC_ERR_NOMEM;
  }
  if (n) memcpy(s->idx, idx, n * sizeof *idx);
  for (size_t k = 0; k < n; k++)
    s->ngated += perf_gated(&p->perf[idx[k]]);
  s->grouped = mode == HC_SESSION_PER_THREAD && n >= 2 && !s->ngated;
  s->rusage = n > 0;
  for (size_t k = 0; k < n; k++)
    s->rusage &= rusage_exact(&p->perf[idx[k]]);
  s->ringable = mode == HC_SESSION_PER_THREAD && n > 0 && !p->ring_off[0];
  for (size_t k = 0; k < n; k++) {
    s->ringable &= ring_countable(&p->perf[idx[k]]) || clock_countable(&p->perf[idx[k]]);
    s->has_clock |= clock_countable(&p->perf[idx[k]]);
  }
  const hc_perf_event *cs = sentinel_event(p);
  if (s->has_clock && (!cs || cs->exclude_kernel)) s->ringable = 0; /* no sentinel: read() */
  int err = 0;
  if (mode == HC_SESSION_INHERIT) {
    int r = open_slot(s, 0, 0, 1);
    if (r <= 0) err = r < 0 ? -r : ESRCH;
    s->nthreads = 1;
  } else {
    s->taskdir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->taskdir < 0 || rescan_threads(s, SCAN_FORCE, &err) < 0) err = err ? err : errno;
  }
  if (err) {
    snprintf(p->error, sizeof p->error, "cannot open perf counters: %s", strerror(err));
    hc_session_close(s);
    return HC_ERR_IO;
  }
  *out = s;
  return HC_OK;
}

hc_session_mode hc_session_get_mode(const hc_session *s) { return s->mode; }
hc_status hc_session_count_caller(hc_session *s, pid_t self) {
  if (!s || s->mode != HC_SESSION_PER_THREAD || self < 0 || s->started) return HC_ERR_INVALID;
  s->caller = self;
  return HC_OK;
}
hc_status hc_session_skip_thread(hc_session *s, pid_t tid) {
  if (!s || s->mode != HC_SESSION_PER_THREAD || tid < 0 || s->started) return HC_ERR_INVALID;
  s->skip = tid;
  return HC_OK;
}
int hc_session_skipped(const hc_session *s) { return s && s->skipslot != SIZE_MAX; }
size_t hc_session_threads(const hc_session *s) { return s->nthreads; }
size_t hc_session_missed_threads(const hc_session *s) { return s->missed; }

/* read() of one counter: value, time enabled, time running (summed over inherited children). */
static int read_counter(int fd, uint64_t v[3]) {
  return read(fd, v, 3 * sizeof *v) == (ssize_t)(3 * sizeof *v) ? 0 : -1;
}

/* The count since `base` ({value, time enabled, time running} of read()). When the kernel multiplexed
 * the counter (it ran part of the time it was enabled), scale up as perf stat does. */
double hc_perf_scaled(const uint64_t now[3], const uint64_t base[3]) {
  double val = (double)(now[0] - base[0]), en = (double)(now[1] - base[1]), run = (double)(now[2] - base[2]);
  if (run > 0 && run < en) val = val * en / run;
  return val;
}

static void find_skip(hc_session *s) {
  s->skipslot = SIZE_MAX;
  if (s->skip && s->nthreads > 1 && s->onlyslot == SIZE_MAX)
    for (size_t j = 0; j < s->nthreads; j++)
      if (s->tids[j] == s->skip) s->skipslot = j;
}

/* Whether thread slot j counts this pass: not the one left out; the caller's alone when only it counts. */
static inline int counted(const hc_session *s, size_t j) {
  return j != s->skipslot && (s->onlyslot == SIZE_MAX || j == s->onlyslot);
}

/* Read the free-running counters of `slot` into out[3k .. 3k+3) (k: the session's counter; gated ones
 * untouched): one read() of the group leader when the session is grouped. 0 or -1 (errno). */
static int read_free(hc_session *s, size_t slot, uint64_t *out) {
  const int *fd = &s->fds[slot * s->n];
  if (s->grouped) {
    uint64_t *g = s->rbuf;
    ssize_t want = (ssize_t)((3 + s->n) * sizeof *g), got = read(fd[0], g, (size_t)want);
    if (got != want || g[0] != s->n) {
      if (got >= 0) errno = EIO;
      return -1;
    }
    for (size_t k = 0; k < s->n; k++) {
      out[3 * k] = g[3 + k];
      out[3 * k + 1] = g[1];
      out[3 * k + 2] = g[2];
    }
    return 0;
  }
  for (size_t k = 0; k < s->n; k++)
    if (!perf_gated(&s->p->perf[s->idx[k]]) && read_counter(fd[k], &out[3 * k]) < 0) return -1;
  return 0;
}

/* The free-running counters' baselines of every counted thread. */
static int read_bases(hc_session *s) {
  for (size_t j = 0; j < s->nthreads; j++)
    if (counted(s, j) && read_free(s, j, &s->base[3 * j * s->n]) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read a perf counter: %s", strerror(errno));
      return -1;
    }
  return 0;
}

/* Add the free-running counters' counts since their baselines to values[]. */
static int read_free_values(hc_session *s, double *values) {
  uint64_t *now = s->rbuf + 3 + s->n;
  int rc = 0;
  for (size_t j = 0; j < s->nthreads; j++) {
    if (!counted(s, j)) continue;
    if (read_free(s, j, now) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read a perf counter: %s", strerror(errno));
      rc = -1;
      continue;
    }
    uint64_t *base = &s->base[3 * j * s->n];
    for (size_t k = 0; k < s->n; k++) {
      if (perf_gated(&s->p->perf[s->idx[k]])) continue;
      values[k] += hc_perf_scaled(&now[3 * k], &base[3 * k]);
    }
  }
  return rc;
}

/* The caller's slot (count_caller), scanning the thread list only when it has none yet. SIZE_MAX: none. */
static size_t caller_slot(hc_session *s, int *err) {
  for (int scanned = 0;; scanned = 1) {
    for (size_t j = 0; j < s->nthreads; j++)
      if (s->tids[j] == s->caller) return j;
    if (scanned || rescan_threads(s, SCAN_FORCE, err) < 0) return SIZE_MAX;
  }
}

/* The sentinel of `slot` (its thread's context switches, counted by a ring), opened and mapped at its first
 * use: 1 just made, 0 ready, -1 none (the clocks are read()). */
static int sentinel_ready(hc_session *s, size_t slot) {
  ring_fd *q = &s->sent[slot];
  if (q->mode == RING_MAPPED) return 0;
  if (q->mode == RING_FAILED) return -1;
  int sample = 1, fd = perf_open(sentinel_event(s->p), s->tids[slot], 0, -1, &sample);
  void *m = fd >= 0 && sample ? mmap(NULL, ring_bytes(), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (m == MAP_FAILED) {
    if (fd >= 0) close(fd);
    q->mode = RING_FAILED;
    return -1;
  }
  q->fd = fd;
  q->pg = m;
  q->mode = RING_MAPPED;
  return 1;
}

/* A new reference for clock r: count c at raw time t, sentinel head h (usable when `ok`); the rate from the
 * last reference when both lie in one stay on the CPU far enough apart. */
static void clock_ref(ring_fd *r, uint64_t c, int64_t t, uint64_t h, int ok) {
  if (ok && r->refok && r->href == h && t - r->tref >= HC_CLOCK_RATE_NS && c >= r->cref) {
    double rate = (double)(c - r->cref) / (double)(t - r->tref);
    if (rate > 0.9 && rate < 1.1) r->rate = rate;
  }
  r->cref = c;
  r->tref = t;
  r->href = h;
  r->refok = (unsigned char)ok;
}
static inline uint64_t clock_at(const ring_fd *r, int64_t t) {
  return r->cref + (uint64_t)((double)(t - r->tref) * (r->rate > 0 ? r->rate : 1.0));
}

/* One read() of `slot` into now[3k..] and, from it, new references of its clocks (the sentinel's head
 * loaded around it: a switch during the read leaves them unusable until the next). The reference's time is
 * the read's midpoint: the kernel samples the count inside the call, and the time after it would count the
 * call's way back as time not yet counted (seen: a reckoned window ~0.5 µs longer). 0 or -1. */
static int clock_refresh(hc_session *s, size_t slot, uint64_t *now) {
  const ring_fd *q = &s->sent[slot];
  ring_fd *r = &s->rfd[slot * s->n];
  uint64_t h0 = ring_head(q->pg);
  s->ring_sys = 1;
  int64_t t0 = raw_ns();
  if (read_free(s, slot, now) < 0) return -1;
  int64_t t = t0 + (raw_ns() - t0) / 2;
  uint64_t h1 = ring_head(q->pg);
  for (size_t k = 0; k < s->n; k++)
    if (r[k].mode == RING_CLOCK) clock_ref(&r[k], now[3 * k], t, h1, h0 == h1);
  return 0;
}

/* The clocks' counts now into out[k] (the RING_CLOCK counters of `slot`): their references plus the raw
 * clock's advance while the thread has not left its CPU since, else one read(). 0 or -1. */
static int clock_values(hc_session *s, size_t slot, uint64_t *out) {
  ring_fd *r = &s->rfd[slot * s->n];
  uint64_t h = ring_head(s->sent[slot].pg);
  int64_t t = raw_ns();
  int fresh = 1;
  for (size_t k = 0; fresh && k < s->n; k++)
    if (r[k].mode == RING_CLOCK)
      fresh = r[k].refok && r[k].href == h && t >= r[k].tref && t - r[k].tref < HC_CLOCK_REF_NS;
  if (!fresh && clock_refresh(s, slot, s->rbuf + 3 + s->n) < 0) return -1;
  for (size_t k = 0; k < s->n; k++)
    if (r[k].mode == RING_CLOCK) out[k] = fresh ? clock_at(&r[k], t) : r[k].cref;
  return 0;
}

/* Whether this start can count without read(): maps the rings (and the clocks' sentinel) at their first
 * use, then compares them with read() (one read of the slot, between two loads of every head that agree)
 * at the mapping and every HC_RING_CHECK-th start: a ring's head / 8 must stay the same distance from its
 * count, a clock's reckoning within HC_CLOCK_CHECK_NS of its count. 0: it can; -1: read() this time (and
 * rings may be off from now on). */
static int rings_ready(hc_session *s, size_t slot) {
  hc_provider *p = s->p;
  ring_fd *r = &s->rfd[slot * s->n];
  int fresh = 0;
  for (size_t k = 0; k < s->n; k++) {
    if (r[k].mode == RING_CAN) {
      void *m = mmap(NULL, ring_bytes(), PROT_READ, MAP_SHARED, s->fds[slot * s->n + k], 0); /* overwrite */
      if (m == MAP_FAILED) { /* e.g. past perf_event_mlock_kb: this slot is read() */
        r[k].mode = RING_FAILED;
        return -1;
      }
      r[k].pg = m;
      r[k].mode = RING_MAPPED;
      fresh = 1;
    } else if (r[k].mode != RING_MAPPED && r[k].mode != RING_CLOCK) {
      return -1;
    }
  }
  if (s->has_clock) {
    int q = sentinel_ready(s, slot);
    if (q < 0) return -1;
    fresh |= q;
  }
  if (fresh)
    s->ring_starts = 1;
  else if (s->ring_starts++ % HC_RING_CHECK != 0)
    return 0;
  s->ring_sys = 1;
  const ring_fd *q = s->has_clock ? &s->sent[slot] : NULL;
  uint64_t *now = s->rbuf + 3 + s->n, *head = &s->base[s->n]; /* base[0 .. n) holds the window's start */
  uint64_t h0 = 0;
  int64_t t = 0;
  for (int tries = 0;; tries++) {
    for (size_t k = 0; k < s->n; k++)
      head[k] = r[k].mode == RING_MAPPED ? ring_head(r[k].pg) : 0;
    h0 = q ? ring_head(q->pg) : 0;
    int64_t t0 = raw_ns();
    int same = read_free(s, slot, now) == 0;
    t = t0 + (raw_ns() - t0) / 2;
    for (size_t k = 0; same && k < s->n; k++)
      same = r[k].mode != RING_MAPPED || ring_head(r[k].pg) == head[k];
    same = same && (!q || ring_head(q->pg) == h0);
    if (same) break;
    if (tries < 2) continue;
    if (!fresh) return 0; /* records kept landing: checked next time */
    for (size_t k = 0; k < s->n; k++)
      if (r[k].mode == RING_MAPPED) {
        ring_drop(&r[k]);
        r[k].mode = RING_FAILED;
      }
    return -1;
  }
  for (size_t k = 0; k < s->n; k++) {
    long long away = 0;
    if (r[k].mode == RING_MAPPED) {
      int64_t off = (int64_t)(now[3 * k] - head[k] / 8);
      if (!fresh) away = (long long)(r[k].off - off);
      r[k].off = off;
    } else { /* a clock: its reckoning from the last reference against the count */
      if (!fresh && r[k].refok && r[k].href == h0 && t - r[k].tref < HC_CLOCK_REF_NS) {
        away = (long long)(clock_at(&r[k], t) - now[3 * k]);
        if (away >= -HC_CLOCK_CHECK_NS && away <= HC_CLOCK_CHECK_NS) away = 0;
      }
      clock_ref(&r[k], now[3 * k], t, h0, 1);
    }
    if (away) {
      snprintf(p->ring_off, sizeof p->ring_off,
               "the count of %s %s was %lld away from read(): counted with read() from then on",
               p->counters[s->idx[k]].name,
               r[k].mode == RING_MAPPED ? "from perf's ring buffer" : "reckoned from the clock", away);
      return -1;
    }
  }
  return 0;
}

static hc_status session_start(hc_session *s, int how) {
  if (!s || s->started) return HC_ERR_INVALID;
  int err = 0;
  s->onlyslot = SIZE_MAX;
  s->use_rusage = 0;
  s->use_ring = 0;
  if (s->caller && s->ringable && !s->p->ring_off[0]) { /* the caller alone: loads from its rings */
    size_t slot = caller_slot(s, &err);
    s->ring_sys = 0;
    if (slot != SIZE_MAX && rings_ready(s, slot) == 0 &&
        (!s->has_clock || clock_values(s, slot, s->base) == 0)) {
      const ring_fd *r = &s->rfd[slot * s->n];
      for (size_t k = 0; k < s->n; k++)
        if (r[k].mode == RING_MAPPED) s->base[k] = ring_head(r[k].pg);
      s->ringslot = slot;
      s->use_ring = 1;
      s->skipslot = SIZE_MAX;
      s->started = 1;
      return HC_OK;
    }
    err = 0; /* the ways below */
  }
  if (s->caller && s->rusage) { /* the caller alone, its context switches: one getrusage, no perf read */
    if (rusage_switches(&s->base[0]) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read the thread's resource usage: %s",
               strerror(errno));
      return HC_ERR_IO;
    }
    s->use_rusage = 1;
    s->skipslot = SIZE_MAX;
    s->started = 1;
    return HC_OK;
  }
  if (s->caller) { /* the caller alone: no thread-list check (a thread the caller is not has no say) */
    s->onlyslot = caller_slot(s, &err);
    if (s->onlyslot == SIZE_MAX && err) {
      snprintf(s->p->error, sizeof s->p->error, "cannot scan the process's threads: %s", strerror(err));
      return HC_ERR_IO;
    }
  }
  if (s->mode == HC_SESSION_PER_THREAD && s->onlyslot == SIZE_MAX && rescan_threads(s, how, &err) < 0) {
    snprintf(s->p->error, sizeof s->p->error, "cannot scan the process's threads: %s", strerror(err));
    return HC_ERR_IO;
  }
  find_skip(s);
  /* Values are differences from a baseline read here (no RESET: it would not clear what exited
   * inherited children handed to their parent). Gated counters: baseline while disabled, then
   * enable; free-running ones: baseline last, closest to the window. */
  size_t m = s->ngated ? s->nthreads * s->n : 0;
  for (size_t i = 0; i < m; i++) {
    if (!perf_gated(&s->p->perf[s->idx[i % s->n]]) || !counted(s, i / s->n)) continue;
    if (read_counter(s->fds[i], &s->base[3 * i]) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read a perf counter: %s", strerror(errno));
      return HC_ERR_IO;
    }
  }
  for (size_t i = 0; i < m; i++) {
    if (!perf_gated(&s->p->perf[s->idx[i % s->n]]) || !counted(s, i / s->n)) continue;
    if (ioctl(s->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
      int e = errno;
      for (size_t j = 0; j < i; j++)
        if (perf_gated(&s->p->perf[s->idx[j % s->n]]) && counted(s, j / s->n))
          ioctl(s->fds[j], PERF_EVENT_IOC_DISABLE, 0);
      snprintf(s->p->error, sizeof s->p->error, "cannot enable a perf counter: %s", strerror(e));
      return HC_ERR_IO;
    }
  }
  if (read_bases(s) < 0) {
    for (size_t i = 0; i < m; i++)
      if (perf_gated(&s->p->perf[s->idx[i % s->n]]) && counted(s, i / s->n))
        ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
    return HC_ERR_IO;
  }
  s->started = 1;
  return HC_OK;
}

uint64_t hc_provider_ring_windows(const hc_provider *p) { return p ? p->ring_windows : 0; }
const char *hc_provider_ring_off(const hc_provider *p) { return p && p->ring_off[0] ? p->ring_off : NULL; }

hc_status hc_session_start(hc_session *s) { return session_start(s, SCAN_CHECK); }
hc_status hc_session_start_cached(hc_session *s) { return session_start(s, SCAN_CACHED); }

hc_status hc_session_stop(hc_session *s, double *values) {
  if (!s || !s->started || (s->n && !values)) return HC_ERR_INVALID;
  size_t m = s->ngated ? s->nthreads * s->n : 0;
  uint64_t now[3];
  hc_status st = HC_OK;
  if (s->use_ring) {
    const ring_fd *r = &s->rfd[s->ringslot * s->n];
    uint64_t *c = &s->base[2 * s->n]; /* the clocks now */
    for (size_t k = 0; k < s->n; k++)
      if (r[k].mode == RING_MAPPED) values[k] = (double)((ring_head(r[k].pg) - s->base[k]) / 8);
    s->started = 0;
    if (s->has_clock && clock_values(s, s->ringslot, c) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read a perf counter: %s", strerror(errno));
      return HC_ERR_IO;
    }
    for (size_t k = 0; k < s->n; k++)
      if (r[k].mode == RING_CLOCK) values[k] = c[k] > s->base[k] ? (double)(c[k] - s->base[k]) : 0.0;
    s->p->ring_windows += !s->ring_sys;
    return HC_OK;
  }
  for (size_t k = 0; k < s->n; k++)
    values[k] = 0;
  if (s->use_rusage) {
    s->started = 0;
    if (rusage_switches(&now[0]) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read the thread's resource usage: %s",
               strerror(errno));
      return HC_ERR_IO;
    }
    for (size_t k = 0; k < s->n; k++)
      values[k] = (double)(now[0] - s->base[0]);
    return HC_OK;
  }
  /* free-running counters first, closest to the window; then disable and read the gated ones */
  if (read_free_values(s, values) < 0) st = HC_ERR_IO;
  for (size_t i = 0; i < m; i++)
    if (perf_gated(&s->p->perf[s->idx[i % s->n]]) && counted(s, i / s->n))
      ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
  for (size_t i = 0; i < m; i++) {
    if (!perf_gated(&s->p->perf[s->idx[i % s->n]]) || !counted(s, i / s->n)) continue;
    if (read_counter(s->fds[i], now) < 0) {
      snprintf(s->p->error, sizeof s->p->error, "cannot read a perf counter: %s", strerror(errno));
      st = HC_ERR_IO;
      continue;
    }
    values[i % s->n] += hc_perf_scaled(now, &s->base[3 * i]);
  }
  s->started = 0;
  return st;
}

void hc_session_close(hc_session *s) {
  if (!s) return;
  if (s->fds)
    for (size_t i = 0; i < s->cap * s->n; i++) {
      if (s->rfd) ring_drop(&s->rfd[i]);
      if (s->fds[i] >= 0) close(s->fds[i]);
    }
  if (s->sent)
    for (size_t j = 0; j < s->cap; j++)
      sent_drop(&s->sent[j]);
  if (s->taskdir >= 0) close(s->taskdir);
  free(s->idx);
  free(s->tids);
  free(s->fds);
  free(s->base);
  free(s->seen);
  free(s->rbuf);
  free(s->rfd);
  free(s->sent);
  free(s);
}

/* The perf event of a counter name (h-sample: `hubprof sample --counters` reads them on every sample). */
int hc_perf_event_of(const char *name, uint32_t *type, uint64_t *config) {
  for (size_t i = 0; name && i < NDEFS; i++)
    if (strcmp(perf_defs[i].name, name) == 0) {
      *type = perf_defs[i].type;
      *config = perf_defs[i].config;
      return 0;
    }
  return -1;
}
