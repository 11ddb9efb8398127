/* The collector's shared core: the per-process log (opened lazily), the registries of devices, kernels and
 * queues, the per-thread rings of pending dispatches and their harvest, fork and exit, for every runtime
 * provider (provider.h; what it asks a runtime goes through the provider's table, never on the enqueue
 * path). It must never block the application, wait for the device, or let a failure of its own reach the
 * application.
 * Sections: globals · time and process facts · init · the log · registries · lookup tables · threads ·
 * harvest · the background harvester · fork · exit. */
/* SPDX-License-Identifier: MIT */
#include "collector.h"
#include "feature_hooks.h"
#include "sample.h"
#include "env.h"
#include "fmt_log.h"
#include "hubprof/hub.h"
#include "stamp.h"

#include "../common/hu_collector_status.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- globals ---------------------------------------------------------------------------------------- */
_Atomic int hpc_enabled;
_Atomic int hpc_replay_active;
_Atomic uint64_t hpc_next_dispatch;
__thread hpc_thread *hpc_tls __attribute__((tls_model("initial-exec")));
__thread int hpc_busy __attribute__((tls_model("initial-exec")));
hpc_slot hpc_ktab[1u << HPC_KTAB_BITS];
hpc_slot hpc_qtab[1u << HPC_QTAB_BITS];

enum { STORE_NONE = 0, STORE_OPEN = 1, STORE_FAILED = 2, STORE_CLOSED = 3 };

static hpc_env g_env;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* registries, the log's opening, ring list */
static _Atomic int g_store_state;                          /* STORE_* */
static hp_store *g_store;                                  /* the log, valid while STORE_OPEN */
static hp_store *g_orphan;         /* a forked child's copy of the parent's log, released at its first need */
static _Atomic int g_writers;      /* threads inside a harvest that writes to g_store */
static _Atomic int g_exiting;      /* the exit handler has started: it harvests every ring */
static _Atomic uint64_t g_dropped; /* dispatches the collector itself could not keep (not the log's losses) */
static _Atomic uint64_t g_untimed; /* dispatches written without device times */
static _Atomic uint64_t g_written; /* dispatch rows written */
static _Atomic int g_warned_space; /* the one "out of space" warning was printed */
static pthread_key_t g_key;        /* thread exit: harvest the thread's ring */
static int g_atexit_done;
static hpc_thread *_Atomic g_threads; /* every ring of this process: prepended under g_lock, never removed
                                         (but in a forked child), read without the lock */
static uint64_t g_thread_ids;         /* last thread row id */
/* The runtime providers compiled in (provider.h), initialised in this order. */
static hpc_provider *const g_provs[] = {&hpc_opencl, &hpc_cuda};
#define NPROVS (sizeof g_provs / sizeof g_provs[0])

/* ---- time and process facts ------------------------------------------------------------------------- */
static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t g_start_ns; /* process start as the collector saw it (load, or fork for a child) */
static char g_cmdline[4096];

__attribute__((constructor)) static void on_load(void) { g_start_ns = now_ns(); }

static void read_cmdline(void) {
  g_cmdline[0] = 0;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, g_cmdline, sizeof g_cmdline - 1);
  close(fd);
  if (n <= 0) return;
  while (n > 0 && g_cmdline[n - 1] == 0)
    n--;
  for (ssize_t i = 0; i < n; i++)
    if (!g_cmdline[i]) g_cmdline[i] = ' ';
  g_cmdline[n] = 0;
}

/* One line on stderr, "hubprof: ..."; a single write so lines of processes do not mix. */
/* The line "<pid>\t<text>" appended to the status file of the log folder, when hubprof made one
 * (hu_collector_status.h): how hubprof learns why this process kept no log. Made by hubprof with room
 * reserved, so it takes the line on a full disk or in a folder the application made unwritable; absent (the
 * collector loaded by hand), nothing is written. One write of at most ~1 KiB with O_APPEND: whole lines. */
static void tell_hubprof(const char *kind, const char *text, size_t len) {
  if (!g_env.output_dir) return;
  char path[4096], line[1100];
  if ((size_t)snprintf(path, sizeof path, "%s/" HU_COLLECTOR_STATUS, g_env.output_dir) >= sizeof path) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat sb;
  int n = snprintf(line, sizeof line, "%ld\t%s%.*s", (long)getpid(), kind, (int)len, text);
  if (n > 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
    if ((size_t)n >= sizeof line) line[(n = (int)sizeof line - 1) - 1] = '\n';
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
  }
  close(fd);
}

/* One line "hubprof: ..." on stderr; tell (non-NULL): also into the status file for hubprof, after that kind
 * ("": the process keeps no log; HU_COLLECTOR_STOPPED: its log stopped growing). */
static void vsay(const char *tell, const char *fmt, va_list ap) {
  char buf[1024];
  int saved = errno;
  int n = snprintf(buf, sizeof buf, "hubprof: ");
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  if (m < 0) m = 0;
  size_t len = (size_t)n + ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
  buf[len++] = '\n';
  ssize_t w = write(2, buf, len);
  (void)w;
  if (tell) tell_hubprof(tell, buf + n, len - (size_t)n);
  errno = saved;
}
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(NULL, fmt, ap);
  va_end(ap);
}
/* The collector turns itself off before it has a log: said on stderr and to hubprof (status file). */
__attribute__((format(printf, 1, 2))) static void say_off(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay("", fmt, ap);
  va_end(ap);
  atomic_store(&hpc_enabled, -1);
}
/* The log stops growing (the disk filled): said on stderr and to hubprof, which keeps it in the metadata. */
__attribute__((format(printf, 1, 2))) static void say_stopped(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(HU_COLLECTOR_STOPPED, fmt, ap);
  va_end(ap);
}
void hpc_say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(NULL, fmt, ap);
  va_end(ap);
}
#define DEBUG(...)                                                                                           \
  do {                                                                                                       \
    if (g_env.debug) say(__VA_ARGS__);                                                                       \
  } while (0)

/* ---- init -------------------------------------------------------------------------------------------- */
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);
static void thread_gone(void *arg);

static void init_once(void) {
  const char *why = NULL;
  int ok = hpc_env_load(&g_env, &why) == 0;
  if (!g_env.output_dir) { /* not asked to trace: silent */
    atomic_store(&hpc_enabled, -1);
    return;
  }
  if (!ok) {
    say_off("%s; tracing disabled", why);
    return;
  }
  const char *stamps = hpc_stamp_init(getenv("HUBPROF_TIMESTAMP")); /* enqueue times (stamp.c) */
  if (!stamps) {
    say_off("HUBPROF_TIMESTAMP must be 'auto', 'tsc' or 'clock'; tracing disabled");
    return;
  }
  DEBUG("pid %ld: enqueue times from %s", (long)getpid(), stamps);
  if (pthread_key_create(&g_key, thread_gone) != 0 ||
      pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
    say_off("cannot set up thread and fork handlers; tracing disabled");
    return;
  }
  if (g_env.output_dir[0] != '/') { /* fixed now: the app may change directory before its first dispatch */
    static char abs_dir[4096];
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) &&
        (size_t)snprintf(abs_dir, sizeof abs_dir, "%s/%s", cwd, g_env.output_dir) < sizeof abs_dir)
      g_env.output_dir = abs_dir;
  }
  read_cmdline();
  /* hubprof sample; the kernels' machine code (sample.c, through feature_hooks.c) */
  if (!g_env.profile && hpc_features.sample_init(&why) != 0) say("%s; sampling disabled", why);
  hpc_code_keep = hpc_features.sampling() || g_env.code == HPC_CODE_ALL;
  for (size_t i = 0; i < NPROVS; i++)
    if (g_provs[i]->init(g_provs[i]->h, &g_env, &why) != 0) { /* kernel replay's counters, --api */
      say_off("%s; %s disabled", why, g_env.profile ? "profiling" : "tracing");
      return;
    }
  DEBUG("pid %ld: %s into %s (%s)", (long)getpid(), g_env.profile ? "profiling" : "tracing", g_env.output_dir,
        g_provs[0]->attached(g_provs[0]->h));
  hpc_features.init(&g_env); /* HUBPROF_START_PAUSED; --kernel, --dispatch-range, --region */
  atomic_store(&hpc_enabled, g_env.profile ? HPC_PROFILING : HPC_TRACING);
}

int hpc_init_slow(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  int saved = errno;
  pthread_once(&once, init_once);
  errno = saved;
  return atomic_load(&hpc_enabled);
}

void hubprof_collector_replay_enter(void) { atomic_fetch_add(&hpc_replay_active, 1); }
void hubprof_collector_replay_leave(void) { atomic_fetch_sub(&hpc_replay_active, 1); }

/* ---- the log ------------------------------------------------------------------------------------------ */
static void write_registries(hp_store *s); /* registries section */
static void at_exit(void);
static void harvester_start(void);  /* the background harvester section */
static void harvester_decide(void); /* the log just opened (g_lock held): start it now, later or never */
static void harvester_device(int caller); /* a device came into use (g_lock held) */
static _Atomic int64_t g_due_span;        /* HUBPROF_HARVEST_MS in stamp units, 0 until first needed */
static int64_t due_span(void) {
  int64_t v = atomic_load_explicit(&g_due_span, memory_order_relaxed);
  if (!v)
    atomic_store_explicit(&g_due_span, v = hpc_stamp_span((int64_t)g_env.harvest_ms * 1000000),
                          memory_order_relaxed);
  return v;
}
static hp_store *store_locked(void);

/* Writers bracket every use of g_store outside g_lock, so the exit handler closes it only when unused. */
static hp_store *writer_enter(void) {
  atomic_fetch_add(&g_writers, 1);
  if (atomic_load(&g_store_state) != STORE_OPEN) {
    atomic_fetch_sub(&g_writers, 1);
    return NULL;
  }
  return g_store;
}
static void writer_leave(hp_store *s) {
  if (s) atomic_fetch_sub(&g_writers, 1);
}
hp_store *hpc_store_enter(void) { return writer_enter(); }
hp_store *hpc_store_enter_open(void) {
  if (HPC_UNLIKELY(atomic_load(&g_store_state) == STORE_NONE) && atomic_load(&hpc_enabled) >= 1) {
    pthread_mutex_lock(&g_lock);
    store_locked();
    pthread_mutex_unlock(&g_lock);
  }
  return writer_enter();
}
uint64_t hpc_thread_id_new(void) {
  pthread_mutex_lock(&g_lock);
  uint64_t id = ++g_thread_ids;
  pthread_mutex_unlock(&g_lock);
  return id;
}
void hpc_store_leave(hp_store *s) { writer_leave(s); }

static int64_t g_clock_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC_RAW when the log opened */

static void write_process(hp_store *s, int64_t end_ns) {
  hp_process p = {.size = sizeof p,
                  .id = 1,
                  .node_id = 1,
                  .pid = getpid(),
                  .ppid = getppid(),
                  .rank = g_env.rank,
                  .start_ns = g_start_ns,
                  .end_ns = end_ns,
                  .command = g_cmdline,
                  .world_size = g_env.launch.size,
                  .local_rank = g_env.launch.local_rank,
                  .job_id = g_env.launch.job_id,
                  .clock_offset_ns = g_clock_offset_ns,
                  .exit_code = end_ns ? atomic_load(&hpc_exit_code) : -1,
                  .exit_signal = end_ns && atomic_load(&hpc_exit_code) >= 0 ? 0 : -1};
  hp_write_process(s, &p);
}

/* Open this process's log (g_lock held). On failure: one line on stderr, tracing disabled. */
/* The run's wall-clock start and its monotonic anchor (metadata clock.*): CLOCK_REALTIME and
 * CLOCK_MONOTONIC_RAW (the clock of every *_ns time) read back to back, so a time t is the wall-clock time
 * t - clock.monotonic_raw_ns + clock.realtime_ns. Once, when the log opens. */
static void write_clock_anchor(hp_store *s) {
  struct timespec rt, mono;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC_RAW, &mono);
  g_clock_offset_ns =
      ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
  char b[64], utc[40];
  struct tm tm;
  snprintf(b, sizeof b, "%lld", (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec);
  hp_write_metadata(s, "clock.realtime_ns", b);
  snprintf(b, sizeof b, "%lld", (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec);
  hp_write_metadata(s, "clock.monotonic_raw_ns", b);
  if (gmtime_r(&rt.tv_sec, &tm) && strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%S", &tm)) {
    snprintf(b, sizeof b, "%s.%09ldZ", utc, (long)rt.tv_nsec);
    hp_write_metadata(s, "clock.start_utc", b);
  }
}

static void open_store_locked(void) {
  if (g_orphan) { /* a forked child: drop its copy of the parent's handle (leaves the parent's file alone) */
    hp_store_abort(g_orphan);
    g_orphan = NULL;
  }
  const char *host = g_env.launch.host; /* HUBPROF_HOSTNAME or gethostname, '/' made '_' */
  const char *dir = g_env.output_dir;
  struct stat st;
  if (stat(dir, &st) != 0 && errno == ENOENT) mkdir(dir, 0777); /* one level, as the CLI would */
  char path[4096];
  snprintf(path, sizeof path, "%s/hubprof-%s-%ld.log", dir, host, (long)getpid());
  hp_store *s = NULL;
  hp_status rc = hp_store_open(path, "log", HP_CREATE_LIVE, &s);
  /* the name taken (a process of another PID namespace or host with our pid, sharing the folder): the log
   * never replaces it (fmt_log.c publishes without replacing); the next free -N */
  for (int k = 2; rc != HP_OK && k < 1000 && access(path, F_OK) == 0; k++) {
    hp_store_abort(s);
    s = NULL;
    snprintf(path, sizeof path, "%s/hubprof-%s-%ld-%d.log", dir, host, (long)getpid(), k);
    rc = hp_store_open(path, "log", HP_CREATE_LIVE, &s);
  }
  if (rc != HP_OK) {
    say_off("%s; tracing disabled", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(rc));
    hp_store_abort(s); /* nothing was created */
    atomic_store(&g_store_state, STORE_FAILED);
    return;
  }
  struct utsname u;
  memset(&u, 0, sizeof u);
  uname(&u);
  char machine_id[64] = "";
  int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, machine_id, sizeof machine_id - 1);
    close(fd);
    if (n < 0) n = 0;
    machine_id[n] = 0;
    char *nl = strchr(machine_id, '\n');
    if (nl) *nl = 0;
  }
  hp_node node = {.size = sizeof node,
                  .id = 1,
                  .hostname = host,
                  .machine_id = machine_id,
                  .system_name = u.sysname,
                  .release = u.release,
                  .version = u.version,
                  .machine = u.machine};
  hp_write_node(s, &node);
  write_clock_anchor(s); /* first: the process row carries its offset */
  write_process(s, 0);
  hp_write_metadata(s, "mode", g_env.profile ? "profile" : "trace");
  hp_write_metadata(s, "tool_version", hp_version());
  write_registries(s);
  hpc_features.log_opened(s);
  for (size_t i = 0; i < NPROVS; i++)
    g_provs[i]->log_opened(g_provs[i]->h, s);
  hp_log_flush(s);
  g_store = s;
  atomic_store(&g_store_state, STORE_OPEN);
  if (!g_atexit_done) { /* inherited by forked children, so once per family */
    g_atexit_done = 1;
    atexit(at_exit);
  }
  /* The exit handler's barrier with threads inside an enqueue (see at_exit); refused: a slower fallback. */
  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
  if (!g_env.profile) harvester_decide(); /* profile mode writes each dispatch as it ends: no rings */
  DEBUG("pid %ld: writing %s", (long)getpid(), path);
}

/* The log, opened at the first need; NULL when tracing is off or the log could not be created. */
static hp_store *store_locked(void) {
  if (atomic_load(&g_store_state) == STORE_NONE && atomic_load(&hpc_enabled) >= 1) open_store_locked();
  return atomic_load(&g_store_state) == STORE_OPEN ? g_store : NULL;
}

/* Count a failed row write; the log itself records the loss. Warn once. */
static void write_failed(hp_store *s, hp_status rc) {
  if (atomic_exchange(&g_warned_space, 1)) return;
  say_stopped("%s: cannot write (%s, disk full?); records are counted as lost from here on", hp_store_path(s),
              hp_status_str(rc));
}

/* ---- registries: devices (agents), kernel names (symbols), queues; g_lock held ------------------------ */
typedef struct agent_rec {
  const hpc_provider *prov;
  uintptr_t dev; /* the runtime's device object */
  hp_agent row;  /* strings owned */
  int caller;    /* 1: a ready command runs inside the enqueue call, on the enqueuing thread */
} agent_rec;

#define MAX_AGENTS 256
static agent_rec g_agents[MAX_AGENTS];
static size_t g_nagents;
static char **g_knames;                 /* kernel_symbol id i+1 -> name */
static char (*g_kprog)[HPC_PROGRAM_ID]; /* kernel_symbol id i+1 -> its program's identity, "" unknown */
static uint64_t *g_kco; /* kernel_symbol id i+1 -> its program's code object (the provider), g_nkco entries */
static size_t g_nkco;
static size_t g_nknames, g_capknames;
static uint32_t *g_queue_agent; /* queue id i+1 -> agent id */
static size_t g_nqueues, g_capqueues;

static void write_agent(hp_store *s, const agent_rec *a) {
  if (s) hp_write_agent(s, &a->row);
}
static void write_kernel(hp_store *s, size_t id) {
  if (!s) return;
  hp_kernel_symbol k = {.size = sizeof k,
                        .id = id,
                        .code_object_id = id <= g_nkco ? g_kco[id - 1] : 0,
                        .name = g_knames[id - 1],
                        .display_name = g_knames[id - 1],
                        .program_hash = g_kprog[id - 1]};
  hp_write_kernel_symbol(s, &k);
}
static void write_queue(hp_store *s, size_t id) {
  if (!s) return;
  char name[32];
  snprintf(name, sizeof name, "queue %zu", id);
  hp_queue q = {.size = sizeof q, .id = id, .process_id = 1, .agent_id = g_queue_agent[id - 1], .name = name};
  hp_write_queue(s, &q);
}

static void write_registries(hp_store *s) {
  for (size_t i = 0; i < g_nagents; i++)
    write_agent(s, &g_agents[i]);
  for (size_t i = 1; i <= g_nknames; i++)
    write_kernel(s, i);
  for (size_t i = 1; i <= g_nqueues; i++)
    write_queue(s, i);
}

static uint32_t agent_locked(const hpc_provider *pv, const void *rt, uintptr_t d) {
  for (size_t i = 0; i < g_nagents; i++)
    if (g_agents[i].dev == d && g_agents[i].prov == pv) return (uint32_t)i + 1;
  if (g_nagents == MAX_AGENTS) return 0;
  agent_rec *a = &g_agents[g_nagents];
  hp_agent *r = &a->row;
  memset(a, 0, sizeof *a);
  a->prov = pv;
  a->dev = d;
  pv->agent_describe(pv->h, rt, d, r, &a->caller); /* type, vendor, names, runtime, index, sizes */
  r->size = sizeof *r;
  r->id = g_nagents + 1;
  r->node_id = 1;
  g_nagents++;
  hp_store *s = store_locked();
  if (s) harvester_device(a->caller);
  write_agent(s, a);
  if (s) hp_log_flush(s);
  return (uint32_t)r->id;
}

/* The kernel_symbol id of (name, program identity): a kernel is its name in its program, so two programs'
 * kernels of one name get two rows (a provider without identities: "" for all, one row per name). */
static uint32_t kname_locked(const char *name, const char *prog) {
  for (size_t i = 0; i < g_nknames; i++)
    if (strcmp(g_knames[i], name) == 0 && strcmp(g_kprog[i], prog) == 0) return (uint32_t)i + 1;
  if (g_nknames == g_capknames) {
    size_t cap = g_capknames ? 2 * g_capknames : 64;
    char **k = realloc(g_knames, cap * sizeof *k);
    if (!k) return 0;
    g_knames = k;
    char(*kp)[HPC_PROGRAM_ID] = realloc(g_kprog, cap * sizeof *kp);
    if (!kp) return 0;
    g_kprog = kp;
    g_capknames = cap;
  }
  char *dup = strdup(name);
  if (!dup) return 0;
  snprintf(g_kprog[g_nknames], sizeof g_kprog[g_nknames], "%s", prog);
  g_knames[g_nknames++] = dup;
  hp_store *s = store_locked();
  write_kernel(s, g_nknames);
  if (s) hp_log_flush(s);
  return (uint32_t)g_nknames;
}

static uint32_t queue_locked(uint32_t agent_id) {
  if (g_nqueues == g_capqueues) {
    size_t cap = g_capqueues ? 2 * g_capqueues : 64;
    uint32_t *q = realloc(g_queue_agent, cap * sizeof *q);
    if (!q) return 0;
    g_queue_agent = q;
    g_capqueues = cap;
  }
  g_queue_agent[g_nqueues++] = agent_id;
  hp_store *s = store_locked();
  write_queue(s, g_nqueues);
  if (s) hp_log_flush(s);
  return (uint32_t)g_nqueues;
}

/* ---- lookup tables ------------------------------------------------------------------------------------- */
int hpc_tab_put(hpc_slot *tab, unsigned bits, uintptr_t key, uint64_t val) {
  size_t mask = ((size_t)1 << bits) - 1, i = hpc_hash(key, bits);
  for (unsigned p = 0; p < HPC_PROBES; p++, i = (i + 1) & mask) {
    uintptr_t k = atomic_load_explicit(&tab[i].key, memory_order_acquire);
    if (!k) {
      uintptr_t expect = 0;
      if (atomic_compare_exchange_strong(&tab[i].key, &expect, key))
        k = key;
      else
        k = expect;
    }
    if (k == key) {
      atomic_store_explicit(&tab[i].val, val, memory_order_release);
      return 1;
    }
  }
  return 0;
}

/* Overflow of the lock-free tables (g_lock): keys whose probe window was full. Without it such a kernel or
 * queue would be registered again at every dispatch (a new queue row each time) and get id 0. */
typedef struct ovf_rec {
  struct ovf_rec *next;
  uintptr_t key;
  uint64_t val;
} ovf_rec;
#define OVF_BITS 10
static ovf_rec *g_ovf_k[1u << OVF_BITS], *g_ovf_q[1u << OVF_BITS];

static uint64_t ovf_get_locked(ovf_rec **tab, uintptr_t key) {
  for (ovf_rec *r = tab[hpc_hash(key, OVF_BITS)]; r; r = r->next)
    if (r->key == key) return r->val;
  return 0;
}

static void ovf_put_locked(ovf_rec **tab, uintptr_t key, uint64_t val) {
  ovf_rec **b = &tab[hpc_hash(key, OVF_BITS)];
  for (ovf_rec *r = *b; r; r = r->next)
    if (r->key == key) {
      r->val = val;
      return;
    }
  ovf_rec *r = malloc(sizeof *r);
  if (!r) return; /* out of memory: the key stays slow */
  *r = (ovf_rec){.next = *b, .key = key, .val = val};
  *b = r;
}

static void ovf_del_locked(ovf_rec **tab, uintptr_t key) {
  for (ovf_rec **pp = &tab[hpc_hash(key, OVF_BITS)]; *pp; pp = &(*pp)->next)
    if ((*pp)->key == key) {
      ovf_rec *r = *pp;
      *pp = r->next;
      free(r);
      return;
    }
}

/* Store key -> val in the table, else in its overflow (g_lock held). */
static void tab_store_locked(hpc_slot *tab, unsigned bits, ovf_rec **ovf, uintptr_t key, uint64_t val) {
  if (hpc_tab_put(tab, bits, key, val))
    ovf_del_locked(ovf, key); /* a stale overflow entry of an object released at this address */
  else
    ovf_put_locked(ovf, key, val);
}

/* Kernel ids with a dispatch already (its first one was marked cold); ids past the array are never marked. */
#define HPC_KSEEN 65536
static _Atomic unsigned char g_kseen[HPC_KSEEN];
static int kernel_seen(uint32_t id) {
  return id >= HPC_KSEEN || atomic_load_explicit(&g_kseen[id], memory_order_relaxed);
}

static uint32_t kernel_register(const hpc_provider *pv, const void *rt, uintptr_t k) {
  char buf[256], *name = pv->kernel_name(pv->h, rt, k, buf, sizeof buf);
  if (!name) return 0;
  uint64_t co = pv->kernel_code_object(pv->h, rt, k); /* the provider's code-object lock before g_lock */
  char prog[HPC_PROGRAM_ID] = "";
  if (pv->kernel_program && !pv->kernel_program(pv->h, rt, k, prog)) prog[0] = 0;
  pthread_mutex_lock(&g_lock);
  uint32_t id = kname_locked(name, prog);
  if (id && co && (id > g_nkco || g_kco[id - 1] != co)) { /* the kernel's row again, with its code object */
    uint64_t *nk = id > g_nkco ? realloc(g_kco, id * sizeof *nk) : g_kco;
    if (nk) {
      for (size_t i = g_nkco; i < id; i++)
        nk[i] = 0;
      g_kco = nk;
      if (id > g_nkco) g_nkco = id;
      g_kco[id - 1] = co;
      write_kernel(store_locked(), id);
    }
  }
  if (id) tab_store_locked(hpc_ktab, HPC_KTAB_BITS, g_ovf_k, k, id | (kernel_seen(id) ? 0 : HPC_KFIRST));
  pthread_mutex_unlock(&g_lock);
  if (name != buf) free(name);
  return id;
}

uint32_t hpc_kernel_first(uint32_t kid, uintptr_t k) {
  int first = kid < HPC_KSEEN && !atomic_exchange_explicit(&g_kseen[kid], 1, memory_order_relaxed);
  if (hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, k) >> 32) hpc_tab_put(hpc_ktab, HPC_KTAB_BITS, k, kid);
  return first ? HPC_COLD : 0;
}

uint32_t hpc_agent_of(const hpc_provider *pv, const void *rt, uintptr_t d) {
  pthread_mutex_lock(&g_lock);
  uint32_t id = agent_locked(pv, rt, d);
  pthread_mutex_unlock(&g_lock);
  return id;
}

int hpc_agent_names(uint32_t id, char *name, size_t nn, char *product, size_t pn, int32_t *index) {
  pthread_mutex_lock(&g_lock);
  int ok = id >= 1 && id <= g_nagents;
  if (ok) {
    const hp_agent *r = &g_agents[id - 1].row;
    snprintf(name, nn, "%s", r->name ? r->name : "");
    snprintf(product, pn, "%s", r->product_name ? r->product_name : "");
    *index = r->device_index;
  }
  pthread_mutex_unlock(&g_lock);
  return ok ? 0 : -1;
}

void hpc_kernel_name(uint32_t id, char *buf, size_t n) {
  pthread_mutex_lock(&g_lock);
  snprintf(buf, n, "%s", id && id <= g_nknames ? g_knames[id - 1] : "");
  pthread_mutex_unlock(&g_lock);
}

void hpc_kernel_created(const hpc_provider *pv, const void *rt, uintptr_t k) {
  if (k) kernel_register(pv, rt, k);
}

uint32_t hpc_kernel_slow(const hpc_provider *pv, const void *rt, uintptr_t k) {
  uint32_t id = (uint32_t)hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, k);
  if (id) return id;
  pthread_mutex_lock(&g_lock);
  id = (uint32_t)ovf_get_locked(g_ovf_k, k);
  pthread_mutex_unlock(&g_lock);
  return id ? id : kernel_register(pv, rt, k);
}

/* Register queue q of device d: its row, and its ids in the table or the overflow. With `known` set, a
 * queue registered meanwhile (another thread's slow path) keeps its ids. Returns queue_id<<32 | agent. */
static uint64_t queue_register(const hpc_provider *pv, const void *rt, uintptr_t q, uintptr_t d, int known) {
  pthread_mutex_lock(&g_lock);
  uint64_t v = 0;
  if (known && !(v = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, q))) v = ovf_get_locked(g_ovf_q, q);
  if (!v) {
    uint32_t agent = agent_locked(pv, rt, d);
    uint32_t qid = queue_locked(agent);
    if (qid) {
      v = (uint64_t)qid << 32 | agent;
      tab_store_locked(hpc_qtab, HPC_QTAB_BITS, g_ovf_q, q, v);
    }
  }
  pthread_mutex_unlock(&g_lock);
  return v;
}

void hpc_queue_created(const hpc_provider *pv, const void *rt, uintptr_t q, uintptr_t d) {
  if (q) queue_register(pv, rt, q, d, 0);
}

uint64_t hpc_queue_slow(const hpc_provider *pv, const void *rt, uintptr_t q) {
  uint64_t v = hpc_tab_get(hpc_qtab, HPC_QTAB_BITS, q);
  if (v) return v;
  pthread_mutex_lock(&g_lock);
  v = ovf_get_locked(g_ovf_q, q);
  pthread_mutex_unlock(&g_lock);
  if (v) return v;
  /* a queue created before the collector saw it (its dispatches may lack device times) */
  uintptr_t d = pv->queue_device(pv->h, rt, q);
  return d ? queue_register(pv, rt, q, d, 1) : 0;
}

enum { HARVEST_DONE, HARVEST_FULL, HARVEST_ALL };
static int harvest(hpc_thread *t, int mode);
#define RING_START 1024 /* entries of a new ring (72 KiB); it doubles up to HUBPROF_PENDING */

/* ---- threads ------------------------------------------------------------------------------------------- */
void hpc_write_thread_row(hp_store *s, uint64_t id, int64_t tid, int64_t start, int64_t end) {
  char name[32] = "";
  pthread_getname_np(pthread_self(), name, sizeof name);
  hp_thread r = {.size = sizeof r,
                 .id = id,
                 .process_id = 1,
                 .tid = tid,
                 .start_ns = start,
                 .end_ns = end,
                 .name = name};
  hp_write_thread(s, &r);
}
static void write_thread(hp_store *s, const hpc_thread *t, int64_t end) {
  hpc_write_thread_row(s, t->thread_id, t->tid, t->start_ns, end);
}

/* The ring's record of how its entries' enqueue stamps convert (read only after a crash: launch file). */
static void calibrate(hpc_thread *t) {
  int64_t st = hpc_stamp();
  hp_log_launch_calibrate(&t->lr, st, hpc_stamp_ns(st), (double)hpc_stamp_span(1000000000) / 1e9);
}

hpc_thread *hpc_thread_attach(const hpc_provider *pv, const void *rt) {
  int saved = errno;
  hpc_busy = 1;
  pthread_mutex_lock(&g_lock);
  hp_store *s = store_locked();
  hpc_thread *t = NULL;
  int mode = atomic_load(&hpc_enabled);
  if (s && (mode == HPC_TRACING || mode == HPC_PROFILING)) { /* not once the exit handler started */
    for (hpc_thread *x = atomic_load(&g_threads); x; x = x->all) {
      if (atomic_load(&x->in_use)) continue;
      if (atomic_load(&x->lr.head) != atomic_load(&x->lr.tail))
        harvest(x, HARVEST_DONE); /* left by a thread that exited before its dispatches completed */
      if (atomic_load(&x->lr.head) == atomic_load(&x->lr.tail) && !atomic_load(&x->lock)) {
        t = x;
        break;
      }
    }
    if (!t) { /* a new ring: in the launch file beside the log (in memory when there is none) */
      size_t cap = g_env.pending < RING_START ? g_env.pending : RING_START;
      hp_launch_ring *r = NULL;
      void *m = NULL;
      if (hp_log_launch_ring(s, (unsigned)__builtin_ctzll(cap), &r, &m) == HP_OK) {
        t = (hpc_thread *)r; /* its header page: zeros but for the format's fields */
        t->ring = m;
        t->mask = cap - 1;
        t->all = atomic_load(&g_threads);
        atomic_store(&g_threads, t);
      }
    }
    if (t) {
      atomic_store(&t->in_use, 1);
      t->thread_id = hpc_thread_row ? hpc_thread_row : ++g_thread_ids; /* a region may have taken it */
      hpc_thread_row = t->thread_id;
      atomic_store(&t->lr.thread_id, t->thread_id);
      calibrate(t);
      t->tid = (int64_t)syscall(SYS_gettid);
      t->start_ns = now_ns();
      t->prov = pv;
      t->rt = rt;
      t->err = &errno;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (t) {
    hp_store *w = writer_enter();
    if (w) {
      write_thread(w, t, 0);
      hp_log_flush(w);
    }
    writer_leave(w);
    pthread_setspecific(g_key, t);
    hpc_tls = t;
    hpc_harvester_check(); /* a second thread that dispatches: the process is no longer single-threaded */
  }
  hpc_busy = 0;
  errno = saved;
  return t;
}

/* ---- harvest ------------------------------------------------------------------------------------------- */

/* Rows of one harvest, written to the log a batch at a time (hp_log_write_dispatches) and counted once. */
#define HPC_BATCH 32
typedef struct batch {
  hp_store *s;
  int sampling; /* PC sampling on (the features' window hook wants each dispatch) */
  size_t n;
  uint64_t untimed, written, dropped;
  hp_dispatch row[HPC_BATCH];
} batch;

static void batch_write(batch *b) {
  if (!b->n) return;
  size_t ok = 0;
  hp_status rc = hp_log_write_dispatches(b->s, b->row, b->n, &ok);
  b->written += ok;
  if (rc != HP_OK) write_failed(b->s, rc);
  b->n = 0;
}

static void batch_end(batch *b) {
  batch_write(b);
  if (b->untimed) atomic_fetch_add_explicit(&g_untimed, b->untimed, memory_order_relaxed);
  if (b->dropped) atomic_fetch_add_explicit(&g_dropped, b->dropped, memory_order_relaxed);
  if (b->written) atomic_fetch_add_explicit(&g_written, b->written, memory_order_relaxed);
}

/* Fill r, the dispatch row of pending entry p (device times start/end, 0/0 when it has none; passes 0: the
 * "dispatch begun" row of one still running, sample.c), field by field in place: a compound literal would
 * zero the whole row, padding included, and copy it (a `rep stos` and 168 bytes per dispatch). Fields added
 * after region_id are zeroed (the memset's size is a constant: 0 while region_id is the last). */
static inline void dispatch_fill(hp_dispatch *r, const hpc_thread *t, const hpc_pending *p, int64_t start,
                                 int64_t end, uint32_t passes) {
  r->size = sizeof(hp_dispatch);
  r->id = r->dispatch_id = p->dispatch_id;
  r->process_id = 1;
  r->thread_id = t->thread_id;
  r->agent_id = p->agent_id;
  r->queue_id = p->queue_id;
  r->kernel_id = p->kernel_id;
  for (int d = 0; d < 3; d++) {
    r->grid[d] = p->grid[d];
    r->workgroup[d] = p->wg[d];
  }
  r->private_size = r->group_size = 0;
  r->start_ns = start;
  r->end_ns = end;
  r->enqueue_ns = hpc_stamp_ns(p->enqueue_ns);
  r->passes = passes;
  r->bytes_accessible = r->bytes_restored = 0;
  r->cold = p->keep & HPC_COLD ? 1 : 0; /* the enqueue saw the kernel's first dispatch (trace; multiplexing
                                         * decides again at the assembly) */
  r->region_id = p->region_id;
  enum { TAIL = offsetof(hp_dispatch, region_id) + sizeof r->region_id };
  memset((char *)r + TAIL, 0, sizeof(hp_dispatch) - TAIL);
}

/* Add one dispatch to the batch (device times start/end, 0/0 when it has none); its provider released its
 * completion handle. */
static void emit(batch *b, const hpc_thread *t, const hpc_pending *p, int64_t start, int64_t end) {
  b->untimed += !end;
  if (!b->s) {
    b->dropped++;
    return;
  }
  dispatch_fill(&b->row[b->n++], t, p, start, end, 1);
  if (b->sampling) hpc_features.window(p->dispatch_id, p->kernel_id, p->agent_id, start, end);
  if (hpc_code_keep) hpc_features.code_note(p->kernel_id, p->agent_id);
  if (b->n == HPC_BATCH) batch_write(b);
}

/* A dispatch still running while PC sampling is on: its samples go out now, from its start (the enqueue when
 * the runtime gives no start until the end, as PoCL does). */
static void running(const hpc_thread *t, const hpc_pending *p, int64_t start) {
  if (!start) start = hpc_stamp_ns(p->enqueue_ns); /* a stamp until emitted (stamp.c) */
  hp_dispatch begun;                               /* written if samples reach it (sample.c) */
  dispatch_fill(&begun, t, p, 0, 0, 0);
  hpc_features.running(&begun, start);
}

/* Harvest ring t: write what completed; HARVEST_FULL also frees an eighth of the ring by writing the oldest
 * without device times; HARVEST_ALL writes everything. Never waits. Returns -1 when another thread holds t.
 */
static int harvest(hpc_thread *t, int mode) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&t->lock, &expect, 1)) return -1;
  uint64_t head = atomic_load_explicit(&t->lr.head, memory_order_acquire);
  uint64_t tail = atomic_load_explicit(&t->lr.tail, memory_order_relaxed);
  if (head == tail) {
    atomic_store_explicit(&t->lock, 0, memory_order_release);
    return 0;
  }
  batch b;
  b.s = writer_enter();
  b.n = b.untimed = b.written = b.dropped = 0;
  hpc_stamp_tick(); /* a calibration point now and then (stamp.c) */
  const hpc_provider *pv = t->prov;
  int sampling = b.sampling = hpc_features.sampling();
  uint64_t done = 0, kept = 0;
  hpc_poll st[HPC_POLL_BATCH];
  for (uint64_t i = tail; i != head;) { /* the provider answers a batch at a time: one call per batch */
    size_t n = head - i < HPC_POLL_BATCH ? (size_t)(head - i) : HPC_POLL_BATCH;
    pv->poll(pv->h, t->rt, t->ring, t->mask, i, n, sampling, st);
    for (size_t j = 0; j < n; j++, i++) {
      hpc_pending *p = &t->ring[i & t->mask];
      if (st[j].state == HPC_POLL_DONE) {
        emit(&b, t, p, st[j].start_ns, st[j].end_ns);
        p->keep = 0;
        done++;
        continue;
      }
      p->keep |= 1;
      kept++;
      if (st[j].state == HPC_POLL_RUNNING && sampling) running(t, p, st[j].start_ns);
    }
  }
  uint64_t want = mode == HARVEST_ALL ? head - tail : mode == HARVEST_FULL ? (t->mask + 1) / 8 : 0;
  for (uint64_t i = tail; i != head && done < want && kept; i++) {
    hpc_pending *p = &t->ring[i & t->mask];
    if (!(p->keep & 1)) continue;
    pv->release(pv->h, t->rt, p->ev);
    emit(&b, t, p, 0, 0); /* not complete: written without device times, never waited for */
    p->keep = 0;
    done++;
    kept--;
  }
  /* The rows written are committed before the compaction below overwrites their entries: a process killed
   * at any point has each dispatch in the log or in the ring (the launch file), or both (the reader drops
   * the ring's copy) */
  batch_end(&b);
  if (b.s && done) hp_log_flush(b.s);
  /* keep the still-pending ones, in order, at the head end (none: no second walk of the ring) */
  uint64_t w = head;
  for (uint64_t i = head; kept && i-- != tail;) {
    hpc_pending *p = &t->ring[i & t->mask];
    if (!(p->keep & 1)) continue;
    w--;
    if (w != i) t->ring[w & t->mask] = *p;
  }
  atomic_store_explicit(&t->lr.tail, w, memory_order_release);
  atomic_store_explicit(&t->harvested_ns, now_ns(), memory_order_relaxed);
  atomic_store_explicit(&t->due, hpc_stamp() + due_span(), memory_order_relaxed);
  if (done) calibrate(t);
  if (b.s && done) hpc_features.code_capture(b.s); /* a kernel's first dispatch: its code's bytes */
  writer_leave(b.s);
  atomic_store_explicit(&t->lock, 0, memory_order_release);
  return 0;
}

/* harvest(), waiting for the ring when another thread holds it (that one holds it for one pass: never
 * long). Gives up after about 50 ms (returns -1). Never on the enqueue fast path. */
static int harvest_wait(hpc_thread *t, int mode) {
  int rc = harvest(t, mode);
  for (int i = 0; rc != 0 && i < 1000; i++) {
    if (i < 64) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
    rc = harvest(t, mode);
  }
  return rc;
}

/* Harvest every ring of the process (what completed). `recent` < 0: a sync point: also rings another
 * thread is harvesting right now (what completed before it must be in the log when it returns). Else the
 * background harvester: rings another thread holds, or harvested after `recent` (ns; their owner syncs
 * often enough), are left to their owner or the next pass. */
static void harvest_all(int64_t recent) {
  for (hpc_thread *t = atomic_load_explicit(&g_threads, memory_order_acquire); t; t = t->all) {
    if (atomic_load_explicit(&t->lr.head, memory_order_acquire) ==
        atomic_load_explicit(&t->lr.tail, memory_order_acquire))
      continue;
    if (recent < 0) {
      harvest_wait(t, HARVEST_DONE);
    } else if (atomic_load(&g_exiting)) {
      return; /* the exit handler takes over */
    } else if (atomic_load_explicit(&t->harvested_ns, memory_order_relaxed) < recent) {
      harvest(t, HARVEST_DONE);
    }
  }
}

/* Double ring t (its owner calls this): the device is far behind, keep the dispatches rather than write
 * them without times. Returns 0 when grown. */
static int grow(hpc_thread *t) {
  size_t cap = t->mask + 1;
  if (cap >= g_env.pending) return -1;
  int expect = 0;
  if (!atomic_compare_exchange_strong(&t->lock, &expect, 1)) return -1;
  hp_store *s = writer_enter(); /* the ring's launch file is the log's */
  void *m = t->ring;
  int rc = hp_log_launch_grow(s, &t->lr, &m);
  writer_leave(s);
  if (rc == 0) {
    t->ring = m;
    t->mask = 2 * cap - 1;
  }
  atomic_store_explicit(&t->lock, 0, memory_order_release);
  return rc;
}

int hpc_ring_full(hpc_thread *t) {
  int saved = errno;
  int rc = harvest_wait(t, HARVEST_DONE); /* the background harvester may be in this ring: wait for it */
  uint64_t used = atomic_load(&t->lr.head) - atomic_load(&t->lr.tail);
  if (rc == 0 && used > t->mask - t->mask / 8 && grow(t) != 0) /* too little completed and cannot grow */
    rc = harvest_wait(t, HARVEST_FULL);
  errno = saved;
  if (rc != 0) return -1;
  used = atomic_load(&t->lr.head) - atomic_load(&t->lr.tail);
  return used <= t->mask ? 0 : -1;
}

void hpc_harvest_sync(void) {
  if (hpc_busy || atomic_load_explicit(&g_store_state, memory_order_relaxed) != STORE_OPEN) return;
  hpc_harvester_check();
  int saved = errno;
  hpc_busy = 1;
  harvest_all(-1);
  hpc_busy = 0;
  errno = saved;
}

void hpc_count_lost(uint64_t n) { atomic_fetch_add(&g_dropped, n); }

void hpc_unrecorded(void) {
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1;
  hp_store *s = writer_enter();
  if (s) {
    hp_status rc = hp_log_write_lost(s, 1, 1);
    if (rc == HP_OK) rc = hp_log_flush(s);
    if (rc != HP_OK) write_failed(s, rc);
  } else {
    atomic_fetch_add(&g_dropped, 1);
  }
  writer_leave(s);
  hpc_busy = busy;
  errno = saved;
}

void hpc_exit_race(hpc_thread *t) {
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1;
  if (harvest_wait(t, HARVEST_ALL) != 0) /* never seen: the exit handler holds the ring for one pass */
    for (uint64_t n = atomic_load(&t->lr.head) - atomic_load(&t->lr.tail); n; n--)
      hpc_unrecorded();
  hpc_busy = busy;
  errno = saved;
}

/* Thread exit: harvest what completed, record the thread's end, hand the ring on when empty. */
static void thread_gone(void *arg) {
  hpc_thread *t = arg;
  if (!t) return;
  int saved = errno;
  hpc_busy = 1;
  if (atomic_load(&g_exiting)) { /* the exit handler harvests every ring (or did) */
    hpc_tls = NULL;
    hpc_busy = 0;
    errno = saved;
    return;
  }
  harvest_wait(t, HARVEST_DONE); /* what is still pending: the background harvester takes it later */
  hp_store *s = writer_enter();
  if (s) {
    write_thread(s, t, now_ns());
    hp_log_flush(s);
  }
  writer_leave(s);
  atomic_store(&t->in_use, 0); /* reused only once empty (hpc_thread_attach checks); the exit handler
                                  harvests what is left */
  hpc_tls = NULL;
  hpc_busy = 0;
  errno = saved;
}

/* ---- the background harvester -------------------------------------------------------------------------- */
/* One thread per traced process (started when the log opens) harvests every ring each HUBPROF_HARVEST_MS,
 * so a completed dispatch reaches the log within about that period whatever the application does next
 * (no sync, a blocking read, an event callback, a thread that exited). It never waits for the device and
 * never for a ring another thread is harvesting (that one writes it). All signals are blocked in it: the
 * application's handlers never run on it. It stops when the exit handler starts; fork_prepare holds it
 * out of the rings while the process forks, and a child starts its own when its log opens. */
static _Atomic int g_harv_running; /* started in this process */
static _Atomic int g_harv_busy;    /* 1 while it is inside a pass */
static _Atomic int g_harv_hold;    /* fork_prepare: start no pass */

static void *harvester(void *arg) {
  (void)arg;
  hpc_busy = 1; /* our own OpenCL calls are never taken for the application's */
  pthread_setname_np(pthread_self(), "hubprof-harvest");
  int64_t period_ns = (int64_t)g_env.harvest_ms * 1000000;
  struct timespec period = {(time_t)(period_ns / 1000000000), (long)(period_ns % 1000000000)};
  for (;;) {
    nanosleep(&period, NULL);
    atomic_store(&g_harv_busy, 1); /* seq_cst, as the flags it tests: at_exit and fork_prepare see one */
    if (atomic_load(&g_exiting)) break;
    hpc_stamp_tick(); /* the stamps' calibration follows the clock even without dispatches (stamp.c) */
    /* a ring harvested within the last period (its owner's sync points) is left alone: no contention
     * with a thread that harvests itself; every other one waits at most two periods and a pass */
    if (!atomic_load(&g_harv_hold)) harvest_all(now_ns() - period_ns);
    if (!atomic_load(&g_harv_hold)) hpc_features.pass(0);
    if (!atomic_load(&g_harv_hold)) { /* the log's next chunks, faulted in here rather than by a writer */
      hp_store *ps = writer_enter();
      if (ps) hp_log_prepare(ps);
      writer_leave(ps);
    }
    atomic_store(&g_harv_busy, 0);
  }
  atomic_store(&g_harv_busy, 0);
  return NULL;
}

/* Start the harvester (g_lock held, the log just opened). On failure: harvests at sync points only. */
static void harvester_start(void) {
  if (atomic_exchange(&g_harv_running, 1)) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by the new thread */
  pthread_attr_t a;
  pthread_t th;
  int ok = pthread_attr_init(&a) == 0;
  if (ok) {
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    ok = pthread_create(&th, &a, harvester, NULL) == 0;
    pthread_attr_destroy(&a);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!ok) {
    atomic_store(&g_harv_running, 0);
    say("cannot start the background harvester; dispatches are harvested at sync points only");
  }
}

/* HUBPROF_HARVESTER=auto: the harvester costs its wake-ups in a process that has threads already (every GPU
 * runtime, PoCL's pthread device, a multithreaded application), but in a process of one thread its very
 * existence ends glibc's single-thread fast paths (locks taken without atomics, malloc without the arena
 * lock) in the runtime's own calls: ~25 mutex pairs and a few allocations per dispatch on PoCL's basic
 * device, 130-250 ns. There a command runs inside clEnqueue*, on the one thread, so it waits for the next
 * sync point; the harvester starts as soon as the process gains a thread (the enqueue and sync paths look at
 * __libc_single_threaded) or a queue is made on a device that completes work on its own. */
_Atomic int hpc_harv_watch;

void hpc_harvest_due(hpc_thread *t) {
  int saved = errno;
  hpc_stamp_tick(); /* the calibration follows the clock as the harvester's passes keep it (stamp.c) */
  if (harvest(t, HARVEST_DONE) != 0 || atomic_load_explicit(&t->lr.head, memory_order_relaxed) ==
                                           atomic_load_explicit(&t->lr.tail, memory_order_relaxed))
    atomic_store_explicit(&t->due, hpc_stamp() + due_span(), memory_order_relaxed);
  errno = saved;
}

static int agents_all_caller_locked(void) {
  for (size_t i = 0; i < g_nagents; i++)
    if (!g_agents[i].caller) return 0;
  return 1;
}

static void harvester_decide(void) {
  atomic_store(&hpc_harv_watch, 0);
  if (g_env.harvester == HPC_HARVEST_SYNC && !hpc_features.sampling()) return; /* `sample` needs its pass */
  if (g_env.harvester == HPC_HARVEST_AUTO && !hpc_features.sampling() && HPC_SINGLE_THREADED() &&
      agents_all_caller_locked()) {
    atomic_store(&hpc_harv_watch, 1);
    DEBUG("pid %ld: one thread, commands run on it: harvest at sync points until a second thread",
          (long)getpid());
    return;
  }
  harvester_start();
}

static void harvester_device(int caller) {
  if (caller || !atomic_exchange(&hpc_harv_watch, 0)) return;
  DEBUG("pid %ld: a device that completes work on its own: background harvester started", (long)getpid());
  harvester_start();
}

void hpc_harvester_late(void) {
  int saved = errno;
  pthread_mutex_lock(&g_lock);
  if (atomic_exchange(&hpc_harv_watch, 0)) {
    DEBUG("pid %ld: a second thread: background harvester started", (long)getpid());
    harvester_start();
  }
  pthread_mutex_unlock(&g_lock);
  errno = saved;
}

/* Wait (bounded: one pass, at most ~1 s) until the harvester is outside a pass; it starts none while
 * g_exiting or g_harv_hold is set. */
static void harvester_quiesce(void) {
  for (int i = 0; i < 20000 && atomic_load(&g_harv_busy); i++) {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}

/* ---- fork ---------------------------------------------------------------------------------------------- */
static void fork_prepare(void) {
  atomic_store(&g_harv_hold, 1); /* the child must not inherit a ring or the log in mid-harvest */
  harvester_quiesce();
  pthread_mutex_lock(&g_lock);
}
static void fork_parent(void) {
  pthread_mutex_unlock(&g_lock);
  atomic_store(&g_harv_hold, 0);
}

/* The child is a new process: its own log (created at its first OpenCL call), ids and rings. What the
 * parent had pending is the parent's to write. Registries stay: the child's log gets them when it opens. */
static void fork_child(void) {
  pthread_mutex_unlock(&g_lock);
  atomic_store(&g_harv_hold, 0);
  atomic_store(&g_harv_busy, 0);
  atomic_store(&g_harv_running, 0); /* threads do not survive fork: the child's log starts its own */
  atomic_store(&hpc_harv_watch, 0); /* decided again when the child's log opens */
  g_start_ns = now_ns();
  if (atomic_load(&g_store_state) == STORE_OPEN) g_orphan = g_store;
  g_store = NULL;
  if (atomic_load(&g_store_state) != STORE_FAILED) atomic_store(&g_store_state, STORE_NONE);
  atomic_store(&g_writers, 0);
  atomic_store(&g_exiting, 0);
  atomic_store(&g_dropped, 0);
  atomic_store(&g_untimed, 0);
  atomic_store(&g_written, 0);
  atomic_store(&g_warned_space, 0);
  atomic_store(&hpc_next_dispatch, 0);
  g_thread_ids = 0;
  for (hpc_thread *t = atomic_load(&g_threads), *next; t; t = next) { /* the parent's rings: drop them */
    next = t->all;
    hp_log_launch_unmap(&t->lr, t->ring); /* the file stays the parent's */
  }
  atomic_store(&g_threads, NULL);
  hpc_tls = NULL;
  hpc_busy = 0;
  pthread_setspecific(g_key, NULL);
  for (size_t i = 0; i < NPROVS; i++)
    g_provs[i]->fork_child(g_provs[i]->h);
  hpc_features.fork_child();
}

/* ---- exit ---------------------------------------------------------------------------------------------- */

/* Make every thread's earlier stores visible here and its later loads see ours (membarrier: the other half
 * of the barrier in record(), which is only a compiler barrier). Without membarrier, a pause that lets a
 * thread inside an enqueue finish it (not a guarantee; said in docs/collector.md). */
static void exit_barrier(void) {
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
}

/* The log is closed (unused chunk space given back, writers freed) only when no other thread that ever
 * dispatched is still alive: then nobody is left to launch. Otherwise it stays open for the others. */
static void close_if_alone(hp_store *s) {
  if (!s) return;
  int alone = 1;
  pthread_mutex_lock(&g_lock);
  for (hpc_thread *t = atomic_load(&g_threads); t; t = t->all)
    if (atomic_load(&t->in_use) && t != hpc_tls) alone = 0;
  if (alone) atomic_store(&g_store_state, STORE_CLOSED); /* writer_enter refuses from now on */
  pthread_mutex_unlock(&g_lock);
  if (!alone) return;
  int drained = 0;
  for (int i = 0; i < 200 && !(drained = atomic_load(&g_writers) == 0); i++) {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
  /* never close a store with an error (closing would remove it), nor one still in use: every block is
   * committed already */
  if (!drained || hp_store_error(s)[0]) return;
  g_store = NULL;
  hp_status rc = hp_store_commit(s);
  if (rc != HP_OK) say("%s", hp_store_error(s));
  hp_store_close(s);
}

/* exit() from any thread: harvest every ring (incomplete dispatches are written without device times) and
 * write the process's end. Other threads may still run: the log stays open (every block is committed, so
 * it reads as complete), dispatches they had in flight are written by themselves (hpc_exit_race), and what
 * they launch from now on is written as LOST records (hpc_unrecorded). Short by design: a long exit
 * handler would let another thread's exit() overtake this one and change the process's exit status. */
static void at_exit(void) {
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1;
  if (atomic_load(&g_store_state) != STORE_OPEN || atomic_exchange(&g_exiting, 1)) {
    hpc_busy = busy;
    errno = saved;
    return;
  }
  atomic_store(&hpc_enabled, HPC_EXITING);
  exit_barrier();
  harvester_quiesce(); /* it starts no pass after g_exiting */
  for (hpc_thread *t = atomic_load(&g_threads); t; t = t->all) {
    if (harvest_wait(t, HARVEST_ALL) != 0) /* held by its owner for over 50 ms: count, not wait longer */
      hpc_count_lost(atomic_load(&t->lr.head) - atomic_load(&t->lr.tail));
  }
  hp_store *s = writer_enter();
  if (s) {
    /* Losses travel as LOST records only (readers add them to the process's lost_records): the log
     * writes its own (no space), we add the dispatches the collector itself had to drop. */
    uint64_t dropped = atomic_exchange(&g_dropped, 0), lost = 0;
    hp_log_lost(s, &lost);
    for (size_t i = 0; i < NPROVS; i++) /* what a provider still holds (OpenCL: copies without times yet) */
      g_provs[i]->flush(g_provs[i]->h, s);
    hpc_features.exit(s, now_ns(), g_env.debug); /* regions still open, the selection, code, samples */
    write_process(s, now_ns());
    if (dropped) hp_log_write_lost(s, 1, dropped);
    hp_log_flush(s);
    uint64_t own = 0; /* rows the providers wrote themselves (kernel replay) */
    for (size_t i = 0; i < NPROVS; i++)
      own += g_provs[i]->exit(g_provs[i]->h, g_env.debug);
    DEBUG("pid %ld: %llu dispatches written (%llu without device times), %llu lost, %llu dropped",
          (long)getpid(), (unsigned long long)(g_env.profile ? own : atomic_load(&g_written)),
          (unsigned long long)atomic_load(&g_untimed), (unsigned long long)lost, (unsigned long long)dropped);
  }
  writer_leave(s);
  close_if_alone(s);
  hpc_busy = busy;
  errno = saved;
}
