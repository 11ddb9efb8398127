/* `hubprof sample` inside the application: the harvester thread starts a provider's sampler on every thread
 * of the process, reads the samples each period, keeps those whose program counter lies in a kernel's code
 * (on PoCL, a shared object of its kernel cache, found in /proc/self/maps), attributes each to the dispatch
 * of that kernel whose device window holds its time, and writes pc_sample rows (code object + offset) and,
 * with counters, counter_sample rows. Samples elsewhere are only counted. The bytes of each kernel's code
 * object go into the log once per hash. Nothing here runs on an application thread's OpenCL calls except
 * hpc_sample_window, which the harvest calls (a short lock, no allocation). */
/* SPDX-License-Identifier: MIT */
#include "sample.h"

#include "../common/hu_bytes.h"
#include "../common/hu_pattern.h"
#include "collector.h"
#include "counters.h"
#include "fmt_log.h"
#include "hubprof/hub.h"

#include <dirent.h>
#include <link.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define NWIN 65536             /* dispatch windows remembered (a ring) */
#define MAX_PENDING (1u << 18) /* samples waiting for their dispatch's window */
#define MAX_CODE 4096          /* kernel code objects of the process (mappings, reloads included) */
#define SLACK_NS 1000000       /* a sample this close outside a window of its kernel still belongs to it */
#define MAX_CODE_BYTES (64u << 20)
/* Threads that switch more than they run (issue 28: `sample` on synchronous dispatches). A thread's
 * task-clock sampler arms its timer when the thread is switched in and disarms it when it is switched out;
 * with a period shorter than the scheduler's tick that timer is the CPU's next event, so each switch
 * reprograms the clock device (on a virtual machine a VM exit each time: ~3 us per switch). A thread that
 * runs less than SLICE_SLOW_NS of CPU time between two switches (it blocks and wakes around every tiny
 * dispatch: a synchronous program's launching thread, PoCL's workers between tiny kernels) is sampled every
 * SLOW_NS instead, until it runs SLICE_FAST_NS or more per switch again; each sample keeps its period as
 * weight. HUBPROF_SAMPLE_ADAPT=0: every thread at the period. */
#define SLOW_NS 50000000ull
#define SLICE_SLOW_NS 100000ull
#define SLICE_FAST_NS 200000ull
#define ADAPT_SLICES 16 /* switches a decision needs (or ADAPT_CPU_NS of CPU time) */
#define ADAPT_CPU_NS 20000000ull

typedef struct sthread {
  int32_t tid;
  void *h;                                  /* provider handle, NULL when it could not be opened */
  uint64_t row_id;                          /* thread row */
  uint64_t polled[HPC_SAMPLE_MAX_COUNTERS]; /* whole-run polling: its counters at the last poll */
  size_t set;                               /* the counter set its handle reads */
  uint64_t period;                          /* its sampler's period now (g_period_ns, or SLOW_NS) */
  int sfd;                                  /* its /proc schedstat (CPU time, switches), -1 if none */
  uint64_t cpu, slices;                     /* their values at the last decision on its period */
  int slowed;                               /* ever sampled at SLOW_NS */
} sthread;

typedef struct window {
  uint64_t dispatch_id;
  uint32_t kernel_id;
  uint32_t agent_id;
  int64_t start, end;
} window;

/* A kernel code object as mapped: its identity is the file (device and inode) with the range, and its life
 * the scans of the maps that saw it: mapped after `after` (the scan before the one that found it) and, once a
 * scan no longer finds it (unloaded, or another file mapped there), unmapped before `gone`. A sample belongs
 * to the newest mapping of its address alive at its time, so a range PoCL reuses for the next kernel it
 * loads is never taken for the one it unloaded. */
typedef struct code {
  uint64_t lo, hi, base; /* executable range and load base (the address of file offset 0) */
  uint64_t id;           /* code_object row */
  uint64_t dev, ino;     /* the file mapped */
  int64_t after;         /* mapped after this time */
  _Atomic int64_t gone;  /* unmapped before this time; 0 while the maps show it */
  int seen;              /* found by the scan going on (g_mlock) */
  _Atomic int written;   /* its code_object row is in the log (written once its agent is known) */
  char *uri, *hash, *ir_hash;
  uint64_t size;
  char kernel[128]; /* kernel name, from the cache path (.../<kernel>/<variant>/<kernel>.so) */
} code;

typedef struct psample {
  hpc_raw_sample s;
  uint64_t thread_row;
  int32_t code_ix;
  uint32_t set;    /* the counter set its values belong to */
  uint64_t weight; /* its thread's sampling period when it was taken */
} psample;

/* per (dispatch, thread): last counter values, for the dispatch's running sum */
typedef struct cstate {
  uint64_t dispatch_id;
  int32_t tid;
  uint32_t set;
  uint64_t last[HPC_SAMPLE_MAX_COUNTERS];
} cstate;
#define NCSTATE 256

static const hpc_sample_provider *g_prov = &hpc_sample_perf;
static int g_on;
static uint64_t g_period_ns;
#define MAX_ALL (HPC_SAMPLE_MAX_COUNTERS * HPC_SAMPLE_MAX_SETS)
static const char *g_counters[MAX_ALL]; /* every set's, one set after the other */
static char g_counter_buf[4096];
static size_t g_ncounters;
/* Sampling beyond one pass: the sets of HUBPROF_SAMPLE_COUNTERS (';' between sets, each at most 8 counters)
 * rotate by time slice (HUBPROF_SAMPLE_SLICE_MS): every thread reads the current set; at the end of a slice
 * the harvester drains each thread and reopens it on the next set. */
static size_t g_set_first[HPC_SAMPLE_MAX_SETS], g_set_n[HPC_SAMPLE_MAX_SETS], g_nsets, g_cur;
static int64_t g_slice_ns, g_slice_start;
static regex_t g_kre;
static int g_has_kre;

static sthread g_thr[MAX_THREADS];
static size_t g_nthr;
static pid_t g_self; /* the harvester thread: never sampled */

static pthread_mutex_t g_wlock = PTHREAD_MUTEX_INITIALIZER;
static window g_win[NWIN];
static uint64_t g_nwin; /* windows ever added */
#define NOPEN 64
/* a running dispatch (end unknown): its window, and its "dispatch begun" row (written before its first
 * sample) */
typedef struct running {
  window w;
  hp_dispatch row;
  int begun; /* the row is in the log */
} running;
static running g_open[NOPEN]; /* under g_wlock */
static size_t g_nopen;
static uint64_t g_begun_last; /* the dispatch whose begun row was looked at last (harvester thread only) */

static code g_code[MAX_CODE];
static _Atomic size_t g_ncode; /* appended under g_mlock; read without it (entries are complete first) */
static pthread_mutex_t g_mlock = PTHREAD_MUTEX_INITIALIZER; /* scan_maps, g_hashes */
#define NKSEEN 4096
static _Atomic uint32_t g_kseen[NKSEEN / 32];   /* kernel ids whose dispatches were harvested */
static _Atomic uint32_t g_kagent[NKSEEN];       /* their agent + 1 (the device that ran the first) */
static _Atomic uint32_t g_last_agent;           /* agent + 1 of the last kernel seen first */
static int64_t g_scan_ns;                       /* when the last scan of the maps began (g_mlock) */
static unsigned long long g_dl_adds, g_dl_subs; /* the loader's load and unload counts then */
static _Atomic int g_code_new;                  /* a kernel ran for the first time: look for its code */
static char (*g_hashes)[65];                    /* hashes whose bytes are in the log */
static size_t g_nhash;

static psample *g_pend;
static size_t g_npend, g_cappend;

static cstate g_cs[NCSTATE];
static size_t g_ncs;
static double g_sum[MAX_ALL]; /* running sum of the dispatch g_sum_id */
static uint64_t g_sum_id;

static int g_whole;                 /* HUBPROF_SAMPLE_WHOLE_RUN: counters polled for the run */
static double g_run_total[MAX_ALL]; /* their process totals since sampling began */
static uint64_t g_ids;              /* pc_sample and counter_sample row ids */
static uint64_t g_taken;            /* samples delivered */
static uint64_t g_outside;          /* in no kernel's code */
static uint64_t g_unmatched;        /* in a kernel's code, but no window of that kernel held their time */
static uint64_t g_filtered;         /* of a kernel that --kernel leaves out */
static uint64_t g_lost;             /* lost by the provider, or the pending buffer was full */
static uint64_t g_stored;
static uint64_t g_slowed; /* threads sampled at SLOW_NS at some time */
static int g_adapt;       /* switch-bound threads slowed (HUBPROF_SAMPLE_ADAPT not 0) */
static int g_debug;

static int64_t now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

extern _Atomic uint64_t hpc_code_object_ids; /* prov_opencl_codeobj.c: code_object row ids of the process */

int hpc_sample_on(void) { return g_on; }

int hpc_sample_init(const char **why) {
  const char *p = getenv("HUBPROF_SAMPLE_PERIOD_US");
  if (!p || !*p) return 0;
  char *end;
  unsigned long us = strtoul(p, &end, 10);
  if (*end || !us || us > 1000000) {
    *why = "HUBPROF_SAMPLE_PERIOD_US must be a number of microseconds from 1 to 1000000";
    return -1;
  }
  g_period_ns = (uint64_t)us * 1000;
  const char *c = getenv("HUBPROF_SAMPLE_COUNTERS");
  if (c && *c) {
    if (strlen(c) >= sizeof g_counter_buf) {
      *why = "HUBPROF_SAMPLE_COUNTERS is too long";
      return -1;
    }
    snprintf(g_counter_buf, sizeof g_counter_buf, "%s", c);
    char *save_set = NULL;
    for (char *set = strtok_r(g_counter_buf, ";", &save_set); set; set = strtok_r(NULL, ";", &save_set)) {
      if (g_nsets == HPC_SAMPLE_MAX_SETS) {
        *why = "HUBPROF_SAMPLE_COUNTERS: more than 8 sets";
        return -1;
      }
      g_set_first[g_nsets] = g_ncounters;
      for (char *save = NULL, *t = strtok_r(set, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint32_t ty;
        uint64_t cf;
        if (g_set_n[g_nsets] == HPC_SAMPLE_MAX_COUNTERS || hc_perf_event_of(t, &ty, &cf) != 0) {
          *why = "HUBPROF_SAMPLE_COUNTERS: unknown counter, or more than 8 in a set";
          return -1;
        }
        g_counters[g_ncounters++] = t;
        g_set_n[g_nsets]++;
      }
      if (g_set_n[g_nsets]) g_nsets++;
    }
    const char *sl = getenv("HUBPROF_SAMPLE_SLICE_MS");
    unsigned long ms = sl && *sl ? strtoul(sl, NULL, 10) : 50;
    g_slice_ns = (int64_t)(ms ? ms : 50) * 1000000;
  }
  const char *w = getenv("HUBPROF_SAMPLE_WHOLE_RUN");
  g_whole = w && *w && strcmp(w, "0") && g_ncounters && g_prov->read_now;
  const char *k = getenv("HUBPROF_SAMPLE_KERNEL");
  if (k && *k) {
    const char *big;
    if (hu_regex_bounded(k, (size_t)-1, &big)) {
      *why = "HUBPROF_SAMPLE_KERNEL is longer or larger than the limit of a pattern (1024 bytes, 4096 atoms)";
      return -1;
    }
    if (regcomp(&g_kre, k, REG_EXTENDED | REG_NOSUB) != 0) {
      *why = "HUBPROF_SAMPLE_KERNEL is not a regular expression";
      return -1;
    }
    g_has_kre = 1;
  }
  const char *ad = getenv("HUBPROF_SAMPLE_ADAPT");
  g_adapt = !(ad && !strcmp(ad, "0")) && g_period_ns < SLOW_NS && g_prov->set_period;
  const char *dbg = getenv("HUBPROF_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0");
  g_on = 1;
  return 0;
}

void hpc_sample_window(uint64_t dispatch_id, uint32_t kernel_id, uint32_t agent_id, int64_t start,
                       int64_t end) {
  if (!g_on) return;
  pthread_mutex_lock(&g_wlock);
  if (end) {
    g_win[g_nwin % NWIN] = (window){dispatch_id, kernel_id, agent_id, start, end};
    g_nwin++;
  }
  for (size_t i = 0; i < g_nopen; i++) /* no longer running (also when written without device times) */
    if (g_open[i].w.dispatch_id == dispatch_id) g_open[i--] = g_open[--g_nopen];
  pthread_mutex_unlock(&g_wlock);
}

void hpc_sample_running(const hp_dispatch *begun, int64_t start) {
  if (!g_on) return;
  pthread_mutex_lock(&g_wlock);
  size_t i = 0;
  while (i < g_nopen && g_open[i].w.dispatch_id != begun->id)
    i++;
  if (i == g_nopen && g_nopen < NOPEN)
    g_open[g_nopen++] = (running){
        {begun->id, (uint32_t)begun->kernel_id, (uint32_t)begun->agent_id, start, INT64_MAX}, *begun, 0};
  pthread_mutex_unlock(&g_wlock);
}

/* Before the first sample of a running dispatch goes to the log: its "dispatch begun" row, once. A process
 * killed while the dispatch runs then has a row for its samples (without an end: it never ended). */
static void write_begun(hp_store *s, uint64_t dispatch_id) {
  if (dispatch_id == g_begun_last) return;
  g_begun_last = dispatch_id;
  hp_dispatch row;
  int write = 0;
  pthread_mutex_lock(&g_wlock);
  for (size_t i = 0; i < g_nopen; i++)
    if (g_open[i].w.dispatch_id == dispatch_id && !g_open[i].begun) {
      g_open[i].begun = write = 1;
      row = g_open[i].row;
    }
  pthread_mutex_unlock(&g_wlock);
  if (write) hp_write_dispatch(s, &row);
}

/* ---- threads: every thread of the process but the harvester, opened once ---- */
/* A thread's CPU time (ns) and the times it was switched in, from its /proc schedstat; 0, or -1. */
static int sched_read(int fd, uint64_t *cpu, uint64_t *slices) {
  char b[128];
  ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
  if (n <= 0) return -1;
  b[n] = 0;
  unsigned long long c, w, k;
  if (sscanf(b, "%llu %llu %llu", &c, &w, &k) != 3) return -1;
  *cpu = c;
  *slices = k;
  return 0;
}

static void close_thread(sthread *t) {
  if (t->h) g_prov->close_thread(t->h);
  t->h = NULL;
  if (t->sfd >= 0) close(t->sfd);
  t->sfd = -1;
}
static void scan_threads(hp_store *s) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    int32_t tid = (int32_t)atoi(e->d_name);
    if (tid <= 0 || tid == g_self) continue;
    size_t i = 0;
    while (i < g_nthr && g_thr[i].tid != tid)
      i++;
    if (i < g_nthr || g_nthr == MAX_THREADS) continue;
    const char *why = NULL;
    sthread *t = &g_thr[g_nthr++];
    t->tid = tid;
    t->set = g_cur;
    t->period = g_period_ns;
    t->sfd = -1;
    t->slowed = 0;
    memset(t->polled, 0, sizeof t->polled);
    t->h = g_prov->open_thread(tid, g_period_ns, g_counters + g_set_first[g_cur], g_set_n[g_cur], &why);
    if (!t->h) {
      if (g_debug) hpc_say("sample: thread %d: %s", (int)tid, why);
      continue;
    }
    t->row_id = hpc_thread_id_new();
    char path[64], name[64] = "";
    if (g_adapt) {
      snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
      t->sfd = open(path, O_RDONLY | O_CLOEXEC);
      if (sched_read(t->sfd, &t->cpu, &t->slices) != 0) t->cpu = t->slices = 0;
    }
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t n = read(fd, name, sizeof name - 1);
      close(fd);
      name[n > 0 ? n : 0] = 0;
      name[strcspn(name, "\n")] = 0;
    }
    hp_thread r = {
        .size = sizeof r, .id = t->row_id, .process_id = 1, .tid = tid, .start_ns = now(), .name = name};
    if (s) hp_write_thread(s, &r);
  }
  closedir(d);
}

/* ---- code: the kernels' shared objects in the process's mappings ---- */
static int is_kernel_code(const char *path) {
  const char *cache = getenv("POCL_CACHE_DIR");
  return strstr(path, "/kcache/") || (cache && *cache && !strncmp(path, cache, strlen(cache)));
}

/* Store the bytes of a file once per hash; returns the hash in hex (into hash) or "" when unreadable. */
static void store_bytes(hp_store *s, const char *path, char hash[65], uint64_t *size) {
  hash[0] = 0;
  *size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > MAX_CODE_BYTES) {
    close(fd);
    return;
  }
  unsigned char *b = malloc((size_t)st.st_size);
  ssize_t got = 0;
  while (b && got < st.st_size) {
    ssize_t r = read(fd, b + got, (size_t)(st.st_size - got));
    if (r <= 0) break;
    got += r;
  }
  close(fd);
  if (!b || got != st.st_size) {
    free(b);
    return;
  }
  hu_sha256_hex(b, (size_t)got, hash);
  *size = (uint64_t)got;
  size_t i = 0;
  while (i < g_nhash && strcmp(g_hashes[i], hash))
    i++;
  if (i == g_nhash) {
    char(*nh)[65] = realloc(g_hashes, (g_nhash + 1) * sizeof *nh);
    if (nh) {
      g_hashes = nh;
      memcpy(g_hashes[g_nhash++], hash, 65);
      if (s) hp_write_code_bytes(s, b, (size_t)got, NULL);
    }
  }
  free(b);
}

/* The agent of kernel code named `kernel`: that of the newest kernel of that name seen run (its first
 * dispatch), else of the last kernel seen; 0 when none ran yet. */
static uint32_t code_agent(const char *kernel) {
  char name[256];
  int looked = 0;
  for (size_t k = NKSEEN; k-- > 0 && looked < 256;) {
    if (!(atomic_load_explicit(&g_kseen[k / 32], memory_order_relaxed) & (1u << (k % 32)))) continue;
    looked++;
    hpc_kernel_name((uint32_t)k, name, sizeof name);
    uint32_t a = atomic_load_explicit(&g_kagent[k], memory_order_relaxed);
    if (a && !strcmp(name, kernel)) return a;
  }
  return atomic_load_explicit(&g_last_agent, memory_order_relaxed);
}

/* Its code_object row, once: with the agent (+ 1) given, or looked up by its kernel's name; left for later
 * while no kernel has run (unless `now`). */
static void write_code(hp_store *s, code *c, uint32_t agent1, int now_) {
  if (atomic_load_explicit(&c->written, memory_order_acquire)) return;
  if (!agent1) agent1 = code_agent(c->kernel);
  if ((!agent1 && !now_) || !s) return;
  if (atomic_exchange(&c->written, 1)) return;
  hp_code_object co = {.size = sizeof co,
                       .id = c->id,
                       .process_id = 1,
                       .agent_id = agent1 ? agent1 - 1 : 0,
                       .uri = c->uri ? c->uri : "",
                       .load_base = c->base,
                       .load_size = c->hi - c->base,
                       .hash = c->hash ? c->hash : "",
                       .code_size = c->size,
                       .build_options = "",
                       .source = "",
                       .ir_hash = c->ir_hash ? c->ir_hash : ""};
  hp_write_code_object(s, &co);
}

/* A new kernel code object: mapped [lo, hi) from file offset off of `path` (device dev, inode ino) after
 * time `after`; its bytes (and IR) stored once per hash, its row written once its agent is known (g_mlock
 * held). */
static void add_code(hp_store *s, uint64_t lo, uint64_t hi, uint64_t off, uint64_t dev, uint64_t ino,
                     const char *path, int64_t after) {
  if (g_ncode == MAX_CODE) return;
  code *c = &g_code[g_ncode];
  memset(c, 0, sizeof *c);
  c->lo = lo;
  c->hi = hi;
  c->base = lo - off; /* shared objects: segments lie at their file offsets from the load base */
  c->dev = dev;
  c->ino = ino;
  c->after = after;
  const char *b = strrchr(path, '/');
  snprintf(c->kernel, sizeof c->kernel, "%s", b ? b + 1 : path);
  size_t kl = strlen(c->kernel);
  if (kl > 3 && !strcmp(c->kernel + kl - 3, ".so")) c->kernel[kl - 3] = 0;
  char hash[65];
  store_bytes(s, path, hash, &c->size);
  /* PoCL's parallel.bc beside it (kept with POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES=1, which hubprof sample
   * sets): the IR analysis compiles again for the source lines of a program built with -g alone */
  char ir[4200], ir_hash[65];
  uint64_t ir_size;
  snprintf(ir, sizeof ir, "%.*sparallel.bc", (int)(b ? b + 1 - path : 0), path);
  store_bytes(s, ir, ir_hash, &ir_size);
  c->id = atomic_fetch_add(&hpc_code_object_ids, 1) + 1;
  char uri[4200];
  snprintf(uri, sizeof uri, "file://%s", path);
  c->uri = strdup(uri);
  c->hash = strdup(hash);
  c->ir_hash = strdup(ir_hash);
  atomic_store_explicit(&g_ncode, g_ncode + 1, memory_order_release); /* complete first */
  write_code(s, c, 0, !g_on); /* sampling: once a kernel ran, so that its agent is known */
}

/* Read /proc/self/maps and register every kernel code object mapped now that is not known yet (by range and
 * file); those no longer mapped are marked gone (g_mlock held). */
static void scan_maps_locked(hp_store *s) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return;
  int64_t begin = now();
  size_t ncode = g_ncode;
  for (size_t i = 0; i < ncode; i++)
    g_code[i].seen = 0;
  char line[4600];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off, ino;
    unsigned maj, min;
    char perms[8];
    int pos = 0;
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu%n", &lo, &hi, perms, &off, &maj, &min, &ino, &pos) < 7 ||
        perms[2] != 'x')
      continue;
    char *path = line + pos;
    path += strspn(path, " ");
    path[strcspn(path, "\n")] = 0;
    if (path[0] != '/' || !is_kernel_code(path)) continue;
    uint64_t dev = ((uint64_t)maj << 32) | min;
    size_t i = 0;
    while (i < ncode &&
           !(g_code[i].lo == lo && g_code[i].hi == hi && g_code[i].dev == dev && g_code[i].ino == ino &&
             !atomic_load_explicit(&g_code[i].gone, memory_order_relaxed)))
      i++;
    if (i < ncode) {
      g_code[i].seen = 1;
      continue;
    }
    add_code(s, lo, hi, off, dev, ino, path, g_scan_ns);
    if (g_ncode > ncode) g_code[g_ncode - 1].seen = 1;
  }
  fclose(f);
  int64_t end = now();
  for (size_t i = 0; i < ncode; i++) /* no longer mapped: gone before now */
    if (!g_code[i].seen && !atomic_load_explicit(&g_code[i].gone, memory_order_relaxed))
      atomic_store_explicit(&g_code[i].gone, end, memory_order_relaxed);
  for (size_t i = 0; i < g_ncode; i++) /* rows left for later: a kernel has run since */
    write_code(s, &g_code[i], 0, 0);
  g_scan_ns = begin;
}

static void scan_maps(hp_store *s) {
  pthread_mutex_lock(&g_mlock);
  scan_maps_locked(s);
  pthread_mutex_unlock(&g_mlock);
}

/* The loader's counts of loads and unloads (dl_iterate_phdr: the first object is enough). */
static int dl_counts(struct dl_phdr_info *info, size_t size, void *data) {
  unsigned long long *v = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    v[0] = info->dlpi_adds;
    v[1] = info->dlpi_subs;
  }
  return 1;
}

/* A harvest pass begins: when a shared object was loaded or unloaded since the last scan (PoCL loading or
 * releasing a kernel), scan again, before the pass's samples are placed. Cheap otherwise. */
static void scan_if_loaded(hp_store *s) {
  unsigned long long v[2] = {0, 0};
  dl_iterate_phdr(dl_counts, v);
  pthread_mutex_lock(&g_mlock);
  if (v[0] != g_dl_adds || v[1] != g_dl_subs) {
    g_dl_adds = v[0];
    g_dl_subs = v[1];
    scan_maps_locked(s);
  }
  pthread_mutex_unlock(&g_mlock);
}

int hpc_code_keep;

void hpc_code_note(uint32_t kernel_id, uint32_t agent_id) {
  if (!hpc_code_keep || kernel_id >= NKSEEN) return; /* not kept; or so many kernels: no more looks */
  uint32_t bit = 1u << (kernel_id % 32);
  if (atomic_load_explicit(&g_kseen[kernel_id / 32], memory_order_relaxed) & bit) return;
  atomic_store_explicit(&g_kagent[kernel_id], agent_id + 1, memory_order_relaxed);
  if (!(atomic_fetch_or(&g_kseen[kernel_id / 32], bit) & bit)) {
    atomic_store_explicit(&g_last_agent, agent_id + 1, memory_order_relaxed);
    atomic_store(&g_code_new, 1);
  }
}

void hpc_code_capture(hp_store *s) {
  if (!s || !atomic_load_explicit(&g_code_new, memory_order_relaxed)) return;
  if (pthread_mutex_trylock(&g_mlock) != 0) return; /* another thread is looking: it or the next one will */
  if (atomic_exchange(&g_code_new, 0)) {
    int64_t t0 = now();
    size_t before = g_ncode;
    scan_maps_locked(s);
    const char *dbg = getenv("HUBPROF_DEBUG"); /* once per new kernel: not a hot path */
    if (dbg && *dbg && strcmp(dbg, "0"))
      hpc_say("code: looked for kernel code in %lld us (%zu new code objects)",
              (long long)((now() - t0) / 1000), g_ncode - before);
  }
  pthread_mutex_unlock(&g_mlock);
}

/* The code object holding ip at time t: the newest mapping of that address alive then (mapped after its
 * `after`, not gone before t); -1 when none. */
static int find_code(uint64_t ip, int64_t t) {
  for (size_t i = atomic_load_explicit(&g_ncode, memory_order_acquire); i-- > 0;) {
    const code *c = &g_code[i];
    if (ip < c->lo || ip >= c->hi) continue;
    int64_t gone = atomic_load_explicit(&c->gone, memory_order_relaxed);
    if ((gone && t >= gone) || t < c->after) continue;
    return (int)i;
  }
  return -1;
}

/* ---- samples ---- */
typedef struct pass_ctx {
  hp_store *s;
  uint64_t row;
  int rescanned;
  uint32_t set;    /* the set of the thread being drained */
  uint64_t weight; /* its period */
} pass_ctx;

/* An executable file mapped at r->time_ns (the provider saw the mmap: exact time): a kernel's code object
 * registered with that start, and what it replaced in its range gone from then on (g_mlock taken). */
static void map_event(hp_store *s, const hpc_raw_sample *r) {
  if (r->map_path[0] != '/' || !is_kernel_code(r->map_path)) return;
  uint64_t lo = r->ip, hi = r->ip + r->map_len;
  int64_t t = r->time_ns;
  pthread_mutex_lock(&g_mlock);
  size_t n = g_ncode;
  int known = 0;
  int64_t until = 0; /* a later mapping of this range, met first (another thread's ring) */
  for (size_t i = 0; i < n; i++) {
    code *c = &g_code[i];
    if (c->hi <= lo || c->lo >= hi) continue;
    int64_t gone = atomic_load_explicit(&c->gone, memory_order_relaxed);
    if (c->lo == lo && c->hi == hi && c->dev == r->map_dev && c->ino == r->map_ino && (!gone || gone > t) &&
        c->after <= t) {
      c->after = t; /* found by a scan before: now its start is known */
      known = 1;
    } else if (c->after > t) {
      if (!until || c->after < until) until = c->after;
    } else if (!gone || gone > t) {
      atomic_store_explicit(&c->gone, t, memory_order_relaxed); /* replaced at t */
    }
  }
  if (!known) {
    size_t before = g_ncode;
    add_code(s, lo, hi, r->map_pgoff, r->map_dev, r->map_ino, r->map_path, t);
    if (g_ncode > before && until) atomic_store_explicit(&g_code[before].gone, until, memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_mlock);
}

static void take(void *ctx, const hpc_raw_sample *r) {
  pass_ctx *p = ctx;
  if (r->map_path) {
    map_event(p->s, r);
    return;
  }
  g_taken++;
  if (g_npend == g_cappend) {
    size_t cap = g_cappend ? 2 * g_cappend : 4096;
    psample *np = cap <= MAX_PENDING ? realloc(g_pend, cap * sizeof *np) : NULL;
    if (!np) {
      g_lost++;
      return;
    }
    g_pend = np;
    g_cappend = cap;
  }
  g_pend[g_npend++] = (psample){*r, p->row, -1, p->set, p->weight}; /* its code: once every ring is read */
}

/* The code object of each sample taken this pass (g_pend from `first` on), once every ring's mappings are
 * known; samples in no kernel's code are counted and dropped. */
static void place(hp_store *s, size_t first) {
  int rescanned = 0;
  size_t w = first;
  for (size_t i = first; i < g_npend; i++) {
    psample q = g_pend[i];
    int ci = find_code(q.s.ip, q.s.time_ns);
    if (ci < 0 && !rescanned) { /* a kernel loaded since the last look, on a thread not sampled then */
      rescanned = 1;
      scan_maps(s);
      ci = find_code(q.s.ip, q.s.time_ns);
    }
    if (ci < 0) {
      g_outside++;
      continue;
    }
    q.code_ix = ci;
    g_pend[w++] = q;
  }
  g_npend = w;
}

static int by_time(const void *a, const void *b) {
  const psample *x = a, *y = b;
  return x->s.time_ns < y->s.time_ns ? -1 : x->s.time_ns > y->s.time_ns;
}

/* The dispatch of kernel `name` whose window holds t (closest within SLACK_NS), 0 when none. Candidates are
 * copied under the window lock; kernel names are compared outside it (they take the collector's lock). */
static uint64_t match(int64_t t, const char *name, uint32_t *kid, uint32_t *agent) {
  window cand[64];
  uint64_t dist[64];
  size_t nc = 0;
  pthread_mutex_lock(&g_wlock);
  uint64_t n = g_nwin < NWIN ? g_nwin : NWIN;
  for (uint64_t k = 0; k < n && nc < 64; k++) {
    const window *w = &g_win[(g_nwin - 1 - k) % NWIN];
    uint64_t d = t < w->start ? (uint64_t)(w->start - t) : t > w->end ? (uint64_t)(t - w->end) : 0;
    if (d > SLACK_NS) continue;
    dist[nc] = d;
    cand[nc++] = *w;
  }
  size_t nclosed = nc;
  for (size_t k = 0; k < g_nopen && nc < 64; k++) /* running ones: from their start on */
    if (t >= g_open[k].w.start) dist[nc] = SLACK_NS + 1, cand[nc++] = g_open[k].w;
  pthread_mutex_unlock(&g_wlock);
  uint64_t best = 0, bestd = SLACK_NS + 1;
  char kname[256];
  for (size_t i = 0; i < nclosed; i++) {
    if (dist[i] >= bestd) continue;
    hpc_kernel_name(cand[i].kernel_id, kname, sizeof kname);
    if (strcmp(kname, name)) continue;
    best = cand[i].dispatch_id;
    bestd = dist[i];
    *kid = cand[i].kernel_id;
    *agent = cand[i].agent_id;
  }
  long bi = -1; /* else the running dispatch of the kernel that started last */
  for (size_t i = nclosed; i < nc && !best; i++) {
    if (bi >= 0 && cand[i].start <= cand[bi].start) continue;
    hpc_kernel_name(cand[i].kernel_id, kname, sizeof kname);
    if (!strcmp(kname, name)) bi = (long)i;
  }
  if (!best && bi >= 0) best = cand[bi].dispatch_id, *kid = cand[bi].kernel_id, *agent = cand[bi].agent_id;
  return best;
}

static void write_counters(hp_store *s, uint64_t dispatch, const psample *p) {
  if (!g_ncounters || !p->s.nvals) return;
  if (dispatch != g_sum_id) {
    memset(g_sum, 0, sizeof g_sum);
    g_sum_id = dispatch;
  }
  size_t i = 0;
  /* per (dispatch, thread, set): a set's counters start again at 0 each time its thread is reopened on it,
   * so a slice's first sample is a new baseline; a counter's sum counts its own set's slices only */
  while (i < g_ncs && !(g_cs[i].dispatch_id == dispatch && g_cs[i].tid == p->s.tid && g_cs[i].set == p->set))
    i++;
  if (i == g_ncs) { /* the first sample of this thread in this dispatch: the baseline, nothing counted */
    i = g_ncs < NCSTATE ? g_ncs++ : (size_t)(g_ids % NCSTATE);
    g_cs[i].dispatch_id = dispatch;
    g_cs[i].tid = p->s.tid;
    g_cs[i].set = p->set;
    memcpy(g_cs[i].last, p->s.vals, sizeof g_cs[i].last);
  }
  size_t first = g_nsets ? g_set_first[p->set] : 0, n = g_nsets ? g_set_n[p->set] : 0;
  for (uint32_t c = 0; c < p->s.nvals && c < n; c++) {
    if (p->s.vals[c] < g_cs[i].last[c]) g_cs[i].last[c] = 0; /* reopened on this set since: from 0 */
    g_sum[first + c] += (double)(p->s.vals[c] - g_cs[i].last[c]);
    g_cs[i].last[c] = p->s.vals[c];
    hp_counter_sample cs = {sizeof cs,    ++g_ids,          dispatch,   first + c + 1,
                            p->s.time_ns, g_sum[first + c], p->set + 1, 1};
    hp_write_counter_sample(s, &cs);
  }
}

/* Attribute the pending samples whose windows are known (all of them when final). */
static void attribute(hp_store *s, int final) {
  if (g_npend) qsort(g_pend, g_npend, sizeof *g_pend, by_time);
  size_t keep = 0;
  for (size_t i = 0; i < g_npend; i++) {
    psample *p = &g_pend[i];
    code *c = &g_code[p->code_ix];
    uint32_t kid = 0, agent = 0;
    uint64_t d = match(p->s.time_ns, c->kernel, &kid, &agent);
    if (!d) {
      if (final)
        g_unmatched++;
      else
        g_pend[keep++] = *p;
      continue;
    }
    if (g_has_kre && regexec(&g_kre, c->kernel, 0, NULL, 0) != 0) {
      g_filtered++;
      continue;
    }
    if (s) write_begun(s, d);
    if (s) write_code(s, c, agent + 1, 1); /* before its first sample: the agent that ran it */
    hp_pc_sample ps = {sizeof ps,    ++g_ids,       d,         c->id, p->s.ip - c->base,
                       p->s.time_ns, p->thread_row, p->weight, "",    0};
    if (s && hp_write_pc_sample(s, &ps) == HP_OK) g_stored++;
    if (s) write_counters(s, d, p);
  }
  g_npend = keep;
}

/* Whole-run polling: every sampled thread's counters read now, their growth since the last poll added to
 * the process totals, one counter_sample row per counter with no dispatch (dispatch_id 0) at this time. */
static void poll_run(hp_store *s) {
  if (!g_whole || !s) return;
  int64_t t = now();
  size_t first = g_set_first[g_cur], nset = g_set_n[g_cur];
  for (size_t i = 0; i < g_nthr; i++) {
    uint64_t v[HPC_SAMPLE_MAX_COUNTERS];
    size_t n = g_thr[i].h && g_thr[i].set == g_cur ? g_prov->read_now(g_thr[i].h, v, nset) : 0;
    for (size_t c = 0; c < n; c++) {
      g_run_total[first + c] += (double)(v[c] - g_thr[i].polled[c]);
      g_thr[i].polled[c] = v[c];
    }
  }
  for (size_t c = 0; c < nset; c++) { /* the current set's counters only: one set per point */
    hp_counter_sample cs = {sizeof cs, ++g_ids, 0, first + c + 1, t, g_run_total[first + c], g_cur + 1, 1};
    hp_write_counter_sample(s, &cs);
  }
}

/* The end of a slice: every thread drained of its set's samples and reopened on the next set. */
static void rotate(hp_store *s) {
  int64_t t = now();
  if (!g_slice_start) g_slice_start = t;
  if (t - g_slice_start < g_slice_ns) return;
  g_slice_start = t;
  g_cur = (g_cur + 1) % g_nsets;
  pass_ctx p = {s, 0, 0, 0, 0};
  for (size_t i = 0; i < g_nthr; i++) {
    sthread *th = &g_thr[i];
    if (!th->h) continue;
    p.row = th->row_id;
    p.set = (uint32_t)th->set;
    p.weight = th->period;
    g_lost += g_prov->drain(th->h, take, &p);
    g_prov->close_thread(th->h);
    const char *why = NULL;
    th->set = g_cur;
    memset(th->polled, 0, sizeof th->polled);
    th->h = g_prov->open_thread(th->tid, th->period, g_counters + g_set_first[g_cur], g_set_n[g_cur], &why);
    if (!th->h && g_debug) hpc_say("sample: thread %d: %s", (int)th->tid, why);
  }
}

/* Each sampled thread's period for what follows: SLOW_NS while it switches more than it runs, else the
 * period (see SLOW_NS). Its ring is drained first, so that every sample keeps the period it was taken at. */
static void adapt(pass_ctx *p) {
  for (size_t i = 0; g_adapt && i < g_nthr; i++) {
    sthread *th = &g_thr[i];
    uint64_t cpu, sl;
    if (!th->h || sched_read(th->sfd, &cpu, &sl) != 0) continue;
    uint64_t dc = cpu - th->cpu, ds = sl - th->slices;
    if (ds < ADAPT_SLICES && dc < ADAPT_CPU_NS) continue; /* too little seen since the last decision */
    th->cpu = cpu;
    th->slices = sl;
    uint64_t per = ds ? dc / ds : dc;
    uint64_t want = ds >= ADAPT_SLICES && per < SLICE_SLOW_NS ? SLOW_NS
                    : per >= SLICE_FAST_NS                    ? g_period_ns
                                                              : th->period;
    if (want == th->period) continue;
    p->row = th->row_id;
    p->set = (uint32_t)th->set;
    p->weight = th->period;
    g_lost += g_prov->drain(th->h, take, p);
    if (g_prov->set_period(th->h, want) != 0) continue;
    if (g_debug)
      hpc_say("sample: thread %d: %llu us of CPU per switch: sampled every %llu us", (int)th->tid,
              (unsigned long long)(per / 1000), (unsigned long long)(want / 1000));
    th->period = want;
    if (want == SLOW_NS && !th->slowed) th->slowed = 1, g_slowed++;
  }
}

void hpc_sample_pass(int final) {
  if (!g_on) return;
  hp_store *s = hpc_store_enter();
  if (!g_self) g_self = (pid_t)syscall(SYS_gettid);
  scan_threads(s);
  scan_if_loaded(s);
  poll_run(s);
  pass_ctx p = {s, 0, 0, 0, 0};
  size_t first = g_npend; /* this pass's samples are appended: their code is placed below */
  for (size_t i = 0; i < g_nthr; i++) {
    if (!g_thr[i].h) continue;
    p.row = g_thr[i].row_id;
    p.set = (uint32_t)g_thr[i].set;
    p.weight = g_thr[i].period;
    g_lost += g_prov->drain(g_thr[i].h, take, &p);
  }
  if (!final) adapt(&p);
  if (g_nsets > 1 && !final) rotate(s);
  place(s, first);
  uint64_t stored = g_stored;
  attribute(s, final);
  if (s && (g_stored != stored || g_whole))
    hp_log_flush(s); /* in the file as they are attributed: SIGKILL keeps them */
  hpc_store_leave(s);
}

void hpc_sample_log_opened(hp_store *s) {
  if (!g_on) return;
  static const char *const units[] = {"ns", "count"};
  for (size_t i = 0; i < g_ncounters; i++) {
    int ns = !strcmp(g_counters[i], "task-clock") || !strcmp(g_counters[i], "cpu-clock");
    hp_counter_info ci = {.size = sizeof ci,
                          .id = i + 1,
                          .name = g_counters[i],
                          .description = "",
                          .block = "sw",
                          .unit = units[!ns],
                          .expression = ""};
    hp_write_counter_info(s, &ci);
  }
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)g_period_ns);
  hp_write_metadata(s, "sample_period_ns", v);
  hp_write_metadata(s, "sample_provider", g_prov->name);
  if (g_whole) hp_write_metadata(s, "sample_whole_run", "1");
  if (g_nsets > 1) {
    snprintf(v, sizeof v, "%zu", g_nsets);
    hp_write_metadata(s, "sample_counter_sets", v);
    snprintf(v, sizeof v, "%lld", (long long)g_slice_ns);
    hp_write_metadata(s, "sample_slice_ns", v);
  }
}

/* Exit handler (every ring harvested, the harvester stopped): the last samples, the counts, close. */
void hpc_sample_exit(hp_store *s) {
  if (!g_on) return;
  hpc_sample_pass(1);
  static const struct {
    const char *key;
    uint64_t *v;
  } m[] = {{"sample_taken", &g_taken},
           {"sample_stored", &g_stored},
           {"sample_outside_kernels", &g_outside},
           {"sample_unattributed", &g_unmatched},
           {"sample_filtered", &g_filtered},
           {"sample_lost", &g_lost},
           {"sample_threads_slowed", &g_slowed}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)*m[i].v);
    hp_write_metadata(s, m[i].key, v);
  }
  pthread_mutex_lock(&g_mlock); /* code objects without samples whose agent was never known */
  for (size_t i = 0; i < g_ncode; i++)
    write_code(s, &g_code[i], 0, 1);
  pthread_mutex_unlock(&g_mlock);
  for (size_t i = 0; i < g_nthr; i++)
    close_thread(&g_thr[i]);
  g_nthr = 0;
  free(g_pend);
  g_pend = NULL;
  g_npend = g_cappend = 0;
  g_on = 0;
}

void hpc_sample_fork_child(void) {
  /* the code objects: the child's log has none of the parent's rows or bytes */
  pthread_mutex_init(&g_mlock, NULL);
  for (size_t i = 0; i < g_ncode; i++) {
    free(g_code[i].uri);
    free(g_code[i].hash);
    free(g_code[i].ir_hash);
  }
  g_ncode = 0;
  g_scan_ns = 0;
  g_dl_adds = g_dl_subs = 0;
  g_last_agent = 0;
  free(g_hashes);
  g_hashes = NULL;
  g_nhash = 0;
  for (size_t i = 0; i < NKSEEN / 32; i++)
    g_kseen[i] = 0;
  g_code_new = 0;
  if (!g_on) return;
  /* The child samples its own threads into its own log: the parent's samplers (the child's copies of their
   * descriptors and buffers), pending samples, dispatch windows, code objects and counts are dropped; the
   * settings stay. Its harvester finds its threads and code again on its first pass. */
  pthread_mutex_init(&g_wlock, NULL); /* another thread of the parent may have held it */
  for (size_t i = 0; i < g_nthr; i++)
    close_thread(&g_thr[i]);
  g_nthr = 0;
  g_self = 0; /* the child's harvester is a new thread */
  free(g_pend);
  g_pend = NULL;
  g_npend = g_cappend = 0;
  g_nwin = g_nopen = 0;
  g_begun_last = 0;
  g_ncs = 0;
  g_sum_id = 0;
  memset(g_run_total, 0, sizeof g_run_total);
  g_slice_start = 0;
  g_ids = g_taken = g_outside = g_unmatched = g_filtered = g_lost = g_stored = g_slowed = 0;
}
