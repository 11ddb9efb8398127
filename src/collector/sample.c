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
#define MAX_CODE 1024          /* kernel code objects of the process */
#define SLACK_NS 1000000       /* a sample this close outside a window of its kernel still belongs to it */
#define MAX_CODE_BYTES (64u << 20)

typedef struct sthread {
  int32_t tid;
  void *h;         /* provider handle, NULL when it could not be opened */
  uint64_t row_id; /* thread row */
} sthread;

typedef struct window {
  uint64_t dispatch_id;
  uint32_t kernel_id;
  int64_t start, end;
} window;

typedef struct code {
  uint64_t lo, hi, base; /* executable range and load base (the address of file offset 0) */
  uint64_t id;           /* code_object row */
  char kernel[128];      /* kernel name, from the cache path (.../<kernel>/<variant>/<kernel>.so) */
} code;

typedef struct psample {
  hpc_raw_sample s;
  uint64_t thread_row;
  int32_t code_ix;
} psample;

/* per (dispatch, thread): last counter values, for the dispatch's running sum */
typedef struct cstate {
  uint64_t dispatch_id;
  int32_t tid;
  uint64_t last[HPC_SAMPLE_MAX_COUNTERS];
} cstate;
#define NCSTATE 256

static const hpc_sample_provider *g_prov = &hpc_sample_perf;
static int g_on;
static uint64_t g_period_ns;
static const char *g_counters[HPC_SAMPLE_MAX_COUNTERS];
static char g_counter_buf[512];
static size_t g_ncounters;
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
static _Atomic uint32_t g_kseen[NKSEEN / 32]; /* kernel ids whose dispatches were harvested */
static _Atomic int g_code_new;                /* a kernel ran for the first time: look for its code */
static char (*g_hashes)[65];                  /* hashes whose bytes are in the log */
static size_t g_nhash;

static psample *g_pend;
static size_t g_npend, g_cappend;

static cstate g_cs[NCSTATE];
static size_t g_ncs;
static double g_sum[HPC_SAMPLE_MAX_COUNTERS]; /* running sum of the dispatch g_sum_id */
static uint64_t g_sum_id;

static uint64_t g_ids;       /* pc_sample and counter_sample row ids */
static uint64_t g_taken;     /* samples delivered */
static uint64_t g_outside;   /* in no kernel's code */
static uint64_t g_unmatched; /* in a kernel's code, but no window of that kernel held their time */
static uint64_t g_filtered;  /* of a kernel that --kernel leaves out */
static uint64_t g_lost;      /* lost by the provider, or the pending buffer was full */
static uint64_t g_stored;
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
    snprintf(g_counter_buf, sizeof g_counter_buf, "%s", c);
    for (char *save = NULL, *t = strtok_r(g_counter_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      uint32_t ty;
      uint64_t cf;
      if (g_ncounters == HPC_SAMPLE_MAX_COUNTERS || hc_perf_event_of(t, &ty, &cf) != 0) {
        *why = "HUBPROF_SAMPLE_COUNTERS: unknown counter, or more than 8";
        return -1;
      }
      g_counters[g_ncounters++] = t;
    }
  }
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
  const char *dbg = getenv("HUBPROF_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0");
  g_on = 1;
  return 0;
}

void hpc_sample_window(uint64_t dispatch_id, uint32_t kernel_id, int64_t start, int64_t end) {
  if (!g_on) return;
  pthread_mutex_lock(&g_wlock);
  if (end) {
    g_win[g_nwin % NWIN] = (window){dispatch_id, kernel_id, start, end};
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
    g_open[g_nopen++] = (running){{begun->id, (uint32_t)begun->kernel_id, start, INT64_MAX}, *begun, 0};
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
    t->h = g_prov->open_thread(tid, g_period_ns, g_counters, g_ncounters, &why);
    if (!t->h) {
      if (g_debug) hpc_say("sample: thread %d: %s", (int)tid, why);
      continue;
    }
    t->row_id = hpc_thread_id_new();
    char path[64], name[64] = "";
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

/* Read /proc/self/maps and register every kernel code object not known yet (g_mlock held). */
static void scan_maps_locked(hp_store *s) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return;
  char line[4600];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off;
    char perms[8];
    int pos = 0;
    if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perms, &off, &pos) < 4 || perms[2] != 'x')
      continue;
    char *path = line + pos;
    path += strspn(path, " ");
    path[strcspn(path, "\n")] = 0;
    if (path[0] != '/' || !is_kernel_code(path)) continue;
    size_t i = 0;
    while (i < g_ncode && !(g_code[i].lo == lo && g_code[i].hi == hi))
      i++;
    if (i < g_ncode || g_ncode == MAX_CODE) continue;
    code *c = &g_code[g_ncode];
    c->lo = lo;
    c->hi = hi;
    c->base = lo - off; /* shared objects: segments lie at their file offsets from the load base */
    const char *b = strrchr(path, '/');
    snprintf(c->kernel, sizeof c->kernel, "%s", b ? b + 1 : path);
    size_t kl = strlen(c->kernel);
    if (kl > 3 && !strcmp(c->kernel + kl - 3, ".so")) c->kernel[kl - 3] = 0;
    char hash[65];
    uint64_t size;
    store_bytes(s, path, hash, &size);
    /* PoCL's parallel.bc beside it (kept with POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES=1, which hubprof sample
     * sets): the IR analysis compiles again for the source lines of a program built with -g alone */
    char ir[4200], ir_hash[65];
    uint64_t ir_size;
    snprintf(ir, sizeof ir, "%.*sparallel.bc", (int)(b ? b + 1 - path : 0), path);
    store_bytes(s, ir, ir_hash, &ir_size);
    c->id = atomic_fetch_add(&hpc_code_object_ids, 1) + 1;
    char uri[4200];
    snprintf(uri, sizeof uri, "file://%s", path);
    hp_code_object co = {.size = sizeof co,
                         .id = c->id,
                         .process_id = 1,
                         .uri = uri,
                         .load_base = c->base,
                         .load_size = hi - c->base,
                         .hash = hash,
                         .code_size = size,
                         .build_options = "",
                         .source = "",
                         .ir_hash = ir_hash};
    if (s) hp_write_code_object(s, &co);
    g_ncode++;
  }
  fclose(f);
}

static void scan_maps(hp_store *s) {
  pthread_mutex_lock(&g_mlock);
  scan_maps_locked(s);
  pthread_mutex_unlock(&g_mlock);
}

int hpc_code_keep;

void hpc_code_note(uint32_t kernel_id) {
  if (!hpc_code_keep || kernel_id >= NKSEEN) return; /* not kept; or so many kernels: no more looks */
  uint32_t bit = 1u << (kernel_id % 32);
  if (!(atomic_load_explicit(&g_kseen[kernel_id / 32], memory_order_relaxed) & bit) &&
      !(atomic_fetch_or(&g_kseen[kernel_id / 32], bit) & bit))
    atomic_store(&g_code_new, 1);
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

static int find_code(uint64_t ip) {
  for (size_t i = 0; i < g_ncode; i++)
    if (ip >= g_code[i].lo && ip < g_code[i].hi) return (int)i;
  return -1;
}

/* ---- samples ---- */
typedef struct pass_ctx {
  hp_store *s;
  uint64_t row;
  int rescanned;
} pass_ctx;

static void take(void *ctx, const hpc_raw_sample *r) {
  pass_ctx *p = ctx;
  g_taken++;
  int ci = find_code(r->ip);
  if (ci < 0 && !p->rescanned) { /* a kernel loaded since the last look */
    p->rescanned = 1;
    scan_maps(p->s);
    ci = find_code(r->ip);
  }
  if (ci < 0) {
    g_outside++;
    return;
  }
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
  g_pend[g_npend++] = (psample){*r, p->row, ci};
}

static int by_time(const void *a, const void *b) {
  const psample *x = a, *y = b;
  return x->s.time_ns < y->s.time_ns ? -1 : x->s.time_ns > y->s.time_ns;
}

/* The dispatch of kernel `name` whose window holds t (closest within SLACK_NS), 0 when none. Candidates are
 * copied under the window lock; kernel names are compared outside it (they take the collector's lock). */
static uint64_t match(int64_t t, const char *name, uint32_t *kid) {
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
  }
  long bi = -1; /* else the running dispatch of the kernel that started last */
  for (size_t i = nclosed; i < nc && !best; i++) {
    if (bi >= 0 && cand[i].start <= cand[bi].start) continue;
    hpc_kernel_name(cand[i].kernel_id, kname, sizeof kname);
    if (!strcmp(kname, name)) bi = (long)i;
  }
  if (!best && bi >= 0) best = cand[bi].dispatch_id, *kid = cand[bi].kernel_id;
  return best;
}

static void write_counters(hp_store *s, uint64_t dispatch, const psample *p) {
  if (!g_ncounters || !p->s.nvals) return;
  if (dispatch != g_sum_id) {
    memset(g_sum, 0, sizeof g_sum);
    g_sum_id = dispatch;
  }
  size_t i = 0;
  while (i < g_ncs && !(g_cs[i].dispatch_id == dispatch && g_cs[i].tid == p->s.tid))
    i++;
  if (i == g_ncs) { /* the first sample of this thread in this dispatch: the baseline, nothing counted */
    i = g_ncs < NCSTATE ? g_ncs++ : (size_t)(g_ids % NCSTATE);
    g_cs[i].dispatch_id = dispatch;
    g_cs[i].tid = p->s.tid;
    memcpy(g_cs[i].last, p->s.vals, sizeof g_cs[i].last);
  }
  for (uint32_t c = 0; c < p->s.nvals && c < g_ncounters; c++) {
    g_sum[c] += (double)(p->s.vals[c] - g_cs[i].last[c]);
    g_cs[i].last[c] = p->s.vals[c];
    hp_counter_sample cs = {sizeof cs, ++g_ids, dispatch, c + 1, p->s.time_ns, g_sum[c]};
    hp_write_counter_sample(s, &cs);
  }
}

/* Attribute the pending samples whose windows are known (all of them when final). */
static void attribute(hp_store *s, int final) {
  if (g_npend) qsort(g_pend, g_npend, sizeof *g_pend, by_time);
  size_t keep = 0;
  for (size_t i = 0; i < g_npend; i++) {
    psample *p = &g_pend[i];
    const code *c = &g_code[p->code_ix];
    uint32_t kid = 0;
    uint64_t d = match(p->s.time_ns, c->kernel, &kid);
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
    hp_pc_sample ps = {sizeof ps,    ++g_ids,       d,           c->id, p->s.ip - c->base,
                       p->s.time_ns, p->thread_row, g_period_ns, "",    0};
    if (s && hp_write_pc_sample(s, &ps) == HP_OK) g_stored++;
    if (s) write_counters(s, d, p);
  }
  g_npend = keep;
}

void hpc_sample_pass(int final) {
  if (!g_on) return;
  hp_store *s = hpc_store_enter();
  if (!g_self) g_self = (pid_t)syscall(SYS_gettid);
  scan_threads(s);
  pass_ctx p = {s, 0, 0};
  for (size_t i = 0; i < g_nthr; i++) {
    if (!g_thr[i].h) continue;
    p.row = g_thr[i].row_id;
    g_lost += g_prov->drain(g_thr[i].h, take, &p);
  }
  uint64_t stored = g_stored;
  attribute(s, final);
  if (s && g_stored != stored) hp_log_flush(s); /* in the file as they are attributed: SIGKILL keeps them */
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
           {"sample_lost", &g_lost}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)*m[i].v);
    hp_write_metadata(s, m[i].key, v);
  }
  for (size_t i = 0; i < g_nthr; i++)
    if (g_thr[i].h) g_prov->close_thread(g_thr[i].h);
  g_nthr = 0;
  free(g_pend);
  g_pend = NULL;
  g_npend = g_cappend = 0;
  g_on = 0;
}

void hpc_sample_fork_child(void) {
  /* the code objects: the child's log has none of the parent's rows or bytes */
  pthread_mutex_init(&g_mlock, NULL);
  g_ncode = 0;
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
    if (g_thr[i].h) g_prov->close_thread(g_thr[i].h);
  g_nthr = 0;
  g_self = 0; /* the child's harvester is a new thread */
  free(g_pend);
  g_pend = NULL;
  g_npend = g_cappend = 0;
  g_nwin = g_nopen = 0;
  g_begun_last = 0;
  g_ncs = 0;
  g_sum_id = 0;
  g_ids = g_taken = g_outside = g_unmatched = g_filtered = g_lost = g_stored = 0;
}
