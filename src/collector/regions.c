/* Regions and markers from inside the application (include/hubprof/api.h; NVTX through nvtx.c): per-thread
 * stacks of open regions, each written as a row of the log's `region` table at its end; start/stop. */
/* SPDX-License-Identifier: MIT */
#include "../common/hu_varint.h"
#include "collector.h"
#include "counters.h"
#include "fmt_log.h"
#include "hubprof/hub.h"
#include "regions.h"
#include "stamp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(HPC_REGION_HOST_MAX == HC_SELF_MAX, "regions.h's copy of HC_SELF_MAX");

_Atomic int hpc_paused;
__thread uint64_t hpc_thread_row __attribute__((tls_model("initial-exec")));
__thread uint64_t hpc_region_cur __attribute__((tls_model("initial-exec")));

/* One open region: its begin time, category (a string that lives as long as the process) and name. */
typedef struct rframe {
  int64_t start; /* its begin: a stamp (stamp.h), converted when the region is written */
  uint64_t id;   /* its row id, taken at begin so that the dispatches inside can name it */
  size_t len;    /* of name */
  int host_ok;   /* host[] holds this thread's counters at begin (profile with counters) */
  const char *category;
  double host[HC_SELF_MAX]; /* the thread's host counters at begin, time inside hubprof's replay excluded */
  char name[HPC_REGION_NAME_MAX];
} rframe;

/* A thread's stack. `lock` is 1 while its owner is inside a region call (st_enter); without membarrier also
 * for good once the exit handler closed it. */
typedef struct rstate {
  _Atomic int lock;
  hp_store *store;          /* the log, kept by the owner once opened (with membarrier only: st_store) */
  _Atomic int in_use;       /* 0: its thread ended, free for the next new thread */
  int depth;                /* open regions, those deeper than HPC_REGION_DEPTH included (not recorded) */
  int warned_deep;          /* the "too deep" marker was written for this thread */
  uint64_t thread_id;       /* thread row id */
  int64_t tid;              /* kernel thread id */
  int64_t start_ns;         /* first region of the thread */
  int64_t flushed_ns;       /* last commit of the thread's log block by a region end */
  uint64_t id_next, id_end; /* region row ids, taken from g_region_ids in blocks */
  struct rstate *all;       /* every state of the process */
  hc_self *hs;  /* the thread's host counters (profile with counters), opened at its first region */
  int hs_tried; /* hs was tried (NULL after: not measurable on this thread) */
  int paused;   /* inside hubprof's replay of a dispatch (hpc_region_host_pause) */
  double excl[HC_SELF_MAX]; /* counts inside hubprof's replays so far: left out of every host part */
  double pause_v[HC_SELF_MAX];
  rframe f[HPC_REGION_DEPTH];
} rstate;

static __thread rstate *t_state __attribute__((tls_model("initial-exec")));
static pthread_mutex_t g_rlock = PTHREAD_MUTEX_INITIALIZER; /* the list of states (slow paths only) */
static rstate *g_states;
static pthread_key_t g_rkey;
static pthread_once_t g_ronce = PTHREAD_ONCE_INIT;
static int g_rkey_ok;
/* The process is registered for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): the owner marks its stack busy
 * with a plain store, the exit handler's membarrier (exit_barrier in collector.c) is the other half. */
static int g_rbar;
static _Atomic uint64_t g_region_ids; /* region row ids handed out (in blocks of RID_BLOCK) */
#define RID_BLOCK 64

/* The host part of regions' counters (profile with counters): set once at init, before the application's
 * threads, read-only after. g_hinfo: counter_info row ids; g_hextra: written by hpc_region_host_info. */
static int g_host_on;
static hc_provider *g_hprov;
static size_t g_hn, g_hidx[HC_SELF_MAX];
static uint64_t g_hinfo[HC_SELF_MAX];
static unsigned char g_hextra[HC_SELF_MAX];
static _Atomic size_t g_hfds; /* descriptors the threads' host counters hold */
static size_t g_hfds_max;

/* A thread's host counters, closed at its exit (its state may serve another thread next). */
static void host_close(struct rstate *st);

/* The time line of the dispatches' enqueue times: their stamps, converted the same way (stamp.c). */
static inline int64_t now_ns(void) { return hpc_stamp_now_ns(); }

/* ---- names ---------------------------------------------------------------------------------------------
 * Stored as valid UTF-8 of at most HPC_REGION_NAME_MAX - 1 bytes: each byte that is not part of a valid
 * UTF-8 sequence becomes the four characters \xNN; a name that does not fit is cut at a character boundary
 * and ends with "..." (so the cut is visible). NULL becomes "(null)". Reads at most what fits. */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, min = 0x10000;
  else
    return 0;
  unsigned cp = c & (0x7F >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the terminator */
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

size_t hpc_region_name(char *dst, size_t cap, const char *src, size_t len) {
  static const char hex[] = "0123456789abcdef";
  if (!src) src = "(null)", len = (size_t)-1;
  const unsigned char *s = (const unsigned char *)src;
  size_t o = 0, i = 0, keep = 0; /* keep: length after the last character that leaves room for "..." */
  /* fast path: the ASCII prefix that fits (most names are short ASCII), its length from libc's strnlen and
   * its bytes checked 8 at a time */
  size_t lim = strnlen(src, len < cap - 4 ? len : cap - 4);
  for (uint64_t w; i + 8 <= lim && (memcpy(&w, s + i, 8), !(w & 0x8080808080808080ull));)
    i += 8;
  while (i < lim && s[i] < 0x80)
    i++;
  hu_copy_short(dst, s, i);
  o = keep = i;
  while (i < len && s[i]) {
    size_t n = utf8_len(s + i);
    if (n && n > len - i) n = 0; /* a sequence cut by an explicit length */
    if (o + (n ? n : 4) > cap - 1) {
      memcpy(dst + keep, "...", 3);
      dst[keep + 3] = 0;
      return keep + 3;
    }
    if (n) {
      memcpy(dst + o, s + i, n);
      o += n;
      i += n;
    } else {
      dst[o++] = '\\';
      dst[o++] = 'x';
      dst[o++] = hex[s[i] >> 4];
      dst[o++] = hex[s[i] & 15];
      i++;
    }
    if (o + 3 <= cap - 1) keep = o;
  }
  dst[o] = 0;
  return o;
}

/* ---- the owner's side of a stack's busy word -------------------------------------------------------------
 * With membarrier (g_rbar), entering is a plain store of 1 and a compiler barrier, then a look at
 * hpc_enabled: the exit handler sets HPC_EXITING, runs membarrier (a full barrier on every thread of the
 * process) and only then reads the busy words (hpc_regions_exit). So either it sees this thread busy and
 * waits for it, or this thread sees HPC_EXITING and leaves without touching its stack or the log: no
 * read-modify-write on the path. Without membarrier, an atomic exchange, as a lock the exit handler can
 * keep for good. */
static inline int st_enter(rstate *st) {
  if (HPC_LIKELY(g_rbar)) {
    atomic_store_explicit(&st->lock, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (HPC_LIKELY(atomic_load_explicit(&hpc_enabled, memory_order_relaxed) != HPC_EXITING)) return 1;
    atomic_store_explicit(&st->lock, 0, memory_order_release);
    return 0;
  }
  return !atomic_exchange_explicit(&st->lock, 1, memory_order_acquire);
}
static inline void st_leave(rstate *st) { atomic_store_explicit(&st->lock, 0, memory_order_release); }

/* The log for the owner inside st_enter (NULL: none), opened at need; hand it back with st_unstore. With
 * membarrier it is kept in the state without the store's writer count: the exit handler closes the log
 * only after every stack is idle and closed (hpc_regions_exit), and a forked child forgets it. */
static inline hp_store *st_store(rstate *st) {
  if (HPC_LIKELY(st->store)) return st->store;
  hp_store *s = hpc_store_enter_open();
  if (g_rbar && s) {
    hpc_store_leave(s);
    st->store = s;
  }
  return s;
}
static inline void st_unstore(rstate *st, hp_store *s) {
  if (!st->store) hpc_store_leave(s);
}

/* ---- thread state ------------------------------------------------------------------------------------- */
static void write_thread_row(hp_store *s, const rstate *st, int64_t end) {
  hpc_write_thread_row(s, st->thread_id, st->tid, st->start_ns, end);
}

/* A region row id from the thread's block (a new block of RID_BLOCK from the process counter at need). */
static inline uint64_t new_id(rstate *st) {
  if (HPC_UNLIKELY(st->id_next == st->id_end)) {
    st->id_next = atomic_fetch_add_explicit(&g_region_ids, RID_BLOCK, memory_order_relaxed) + 1;
    st->id_end = st->id_next + RID_BLOCK;
  }
  return st->id_next++;
}

/* The innermost recorded open region of st, for the dispatches of its thread (hpc_region_cur). */
static inline uint64_t top_id(const rstate *st) {
  int n = st->depth < HPC_REGION_DEPTH ? st->depth : HPC_REGION_DEPTH;
  return n ? st->f[n - 1].id : 0;
}

#define CAT_HUBPROF "hubprof" /* hpc_region_cat_hubprof: its length known here */
static inline size_t cat_len(const char *cat) {
  return cat == hpc_region_cat_hubprof ? sizeof CAT_HUBPROF - 1 : strlen(cat);
}

/* Write one region row; name (len bytes) made by hpc_region_name and cat valid UTF-8 (the log's region
 * append, hp_log_write_region, skips the checks of hp_write). */
static void write_row_id(hp_store *s, rstate *st, uint64_t id, const char *cat, const char *name, size_t len,
                         int64_t start, int64_t end) {
  hp_region r = {.size = sizeof r,
                 .id = id,
                 .process_id = 1,
                 .thread_id = st->thread_id,
                 .name = name,
                 .category = cat,
                 .start_ns = start,
                 .end_ns = end};
  hp_log_write_region(s, &r, len, cat_len(cat));
}

static void write_row(hp_store *s, rstate *st, const char *cat, const char *name, int64_t start,
                      int64_t end) {
  write_row_id(s, st, new_id(st), cat, name, strlen(name), start, end);
}

static void host_end(hp_store *s, rstate *st, const rframe *f, const double *now);

/* Close every open region of st at `end` (recorded with a marker saying why); st->lock held. */
static void close_all(hp_store *s, rstate *st, int64_t end, const char *why) {
  int n = st->depth < HPC_REGION_DEPTH ? st->depth : HPC_REGION_DEPTH;
  if (!n) return;
  for (int d = n - 1; d >= 0; d--) {
    /* begun after `end` was read (the exit handler's, while this thread went on): ended where it began */
    int64_t start = hpc_stamp_ns(st->f[d].start);
    write_row_id(s, st, st->f[d].id, st->f[d].category, st->f[d].name, st->f[d].len, start,
                 start > end ? start : end);
    if (g_host_on) host_end(s, st, &st->f[d], NULL);
  }
  write_row(s, st, hpc_region_cat_hubprof, why, end, end);
  st->depth = 0;
}

static uint64_t thread_id_slow(hp_store *s, rstate *st);
static inline uint64_t thread_id(hp_store *s, rstate *st) {
  if (HPC_LIKELY(st->thread_id && st->thread_id == hpc_thread_row)) return st->thread_id;
  return thread_id_slow(s, st);
}

static void thread_end(void *arg) {
  rstate *st = arg;
  if (!st) return;
  int saved = errno;
  if (st_enter(st)) {
    /* NULL once the log is closed; opened here when the thread's only regions are still open */
    hp_store *s = st->depth ? hpc_store_enter_open() : hpc_store_enter();
    if (s) {
      int64_t end = now_ns();
      if (st->depth) thread_id(s, st);
      close_all(s, st, end, HPC_REGION_THREAD_EXIT);
      if (st->thread_id) write_thread_row(s, st, end);
      hp_log_flush(s);
    }
    hpc_store_leave(s);
    st->depth = 0;
    host_close(st);
    st->store = NULL;
    st_leave(st);
    atomic_store(&st->in_use, 0);
  }
  t_state = NULL;
  hpc_region_cur = 0;
  errno = saved;
}

static void fork_child(void) {
  pthread_mutex_init(&g_rlock, NULL);
  if (g_rbar) /* the child's own registration (its log is a new one too: st->store below) */
    g_rbar = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  atomic_store(&g_region_ids, 0);
  hpc_thread_row = 0; /* the child's log numbers its threads anew */
  for (rstate *st = g_states; st; st = st->all) {
    st->store = NULL;
    host_close(st); /* the parent's threads' counters: the child opens its own at its next region */
    for (int d = 0; d < HPC_REGION_DEPTH; d++)
      st->f[d].host_ok = 0; /* begun in the parent: no host part */
    if (st == t_state) {    /* the forking thread goes on in the child with its open regions */
      st->thread_id = 0;
      st->id_next = st->id_end = 0;
      st->flushed_ns = 0;
      st->tid = (int64_t)syscall(SYS_gettid);
      /* its open regions take ids of the child's numbering (the parent's may be handed out again) */
      for (int d = 0; d < st->depth && d < HPC_REGION_DEPTH; d++)
        st->f[d].id = new_id(st);
      hpc_region_cur = top_id(st);
      atomic_store(&st->lock, 0);
      continue;
    }
    st->depth = 0; /* threads that do not exist in the child */
    st->id_next = st->id_end = 0;
    atomic_store(&st->lock, 0);
    atomic_store(&st->in_use, 0);
  }
}

static void once(void) {
  g_rkey_ok = pthread_key_create(&g_rkey, thread_end) == 0;
  g_rbar = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
           !getenv("HUBPROF_TEST_REGIONS_NO_MEMBARRIER"); /* tests: the fallback */
  pthread_atfork(NULL, NULL, fork_child);
}

/* The calling thread's state, created at its first region (slow path); NULL when the collector is off. */
static rstate *state_slow(void) {
  int e = atomic_load_explicit(&hpc_enabled, memory_order_relaxed);
  if (e == 0) e = hpc_init_slow();
  if (e < 1) return NULL;
  pthread_once(&g_ronce, once);
  if (!g_rkey_ok) return NULL;
  rstate *st = NULL;
  pthread_mutex_lock(&g_rlock);
  for (rstate *x = g_states; x; x = x->all)
    if (!atomic_load(&x->in_use) && !atomic_load(&x->lock)) {
      st = x;
      break;
    }
  if (!st && (st = calloc(1, sizeof *st)) != NULL) {
    st->all = g_states;
    g_states = st;
  }
  if (st) {
    atomic_store(&st->in_use, 1);
    st->depth = 0;
    st->warned_deep = 0;
    st->thread_id = 0;
    st->flushed_ns = 0;
    st->store = NULL;
  }
  pthread_mutex_unlock(&g_rlock);
  if (!st) return NULL;
  st->tid = (int64_t)syscall(SYS_gettid);
  st->start_ns = now_ns();
  pthread_setspecific(g_rkey, st);
  t_state = st;
  return st;
}

/* The thread row id of st, taking one (and writing the thread's row) at need. */
static uint64_t thread_id_slow(hp_store *s, rstate *st) {
  if (!hpc_thread_row) hpc_thread_row = hpc_thread_id_new();
  st->thread_id = hpc_thread_row;
  write_thread_row(s, st, 0);
  return st->thread_id;
}

/* ---- the host part of a region's counters ---------------------------------------------------------------
 * Each thread with regions opens its own counters (hc_self: free-running, read with read()) at its first
 * region; a region keeps the reading at its begin and writes, at its end, one counter_value row per
 * counter (dispatch_id 0, region_id its id) with the difference. Counts while the thread is inside
 * hubprof's replay of a dispatch (its passes, waits, saves and restores) are left out: the dispatch's own
 * counter values are the kernel part. */
int hpc_region_host_add(size_t idx, uint64_t info_id, int extra) {
  for (size_t k = 0; k < g_hn; k++)
    if (g_hidx[k] == idx) return 0;
  if (g_hn == HC_SELF_MAX) return -1;
  g_hidx[g_hn] = idx;
  g_hinfo[g_hn] = info_id;
  g_hextra[g_hn++] = (unsigned char)extra;
  return 1;
}

void hpc_region_host_start(hc_provider *p) {
  struct rlimit rl;
  g_hfds_max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur / 4 : 1024;
  if (g_hfds_max > 1024) g_hfds_max = 1024;
  g_hprov = p;
  g_host_on = p && g_hn;
}

static void host_close(rstate *st) {
  if (st->hs) {
    hc_self_close(st->hs);
    atomic_fetch_sub(&g_hfds, g_hn);
  }
  st->hs = NULL;
  st->hs_tried = st->paused = 0;
  memset(st->excl, 0, sizeof st->excl);
}

void hpc_region_host_info(hp_store *s) {
  for (size_t k = 0; g_host_on && k < g_hn; k++) {
    if (g_hextra[k]) hpc_counter_info_row(s, g_hprov, g_hidx[k], g_hinfo[k]);
  }
}

void hpc_counter_info_row(hp_store *s, hc_provider *p, size_t idx, uint64_t id) {
  const hc_counter *c = hc_provider_counter(p, idx);
  hp_counter_info ci = {.size = sizeof ci,
                        .id = id,
                        .name = c->name,
                        .description = c->description,
                        .block = c->block,
                        .unit = c->unit,
                        .expression = ""};
  hp_write_counter_info(s, &ci);
}

/* v[k]: the thread's counts now, less those inside replays; 0 when it has no counters. */
static int host_now(rstate *st, double *v) {
  if (!st->hs) {
    if (st->hs_tried) return 0;
    st->hs_tried = 1;
    /* the application's descriptors come first: at most a quarter of its limit (and 1024) for these */
    if (atomic_fetch_add(&g_hfds, g_hn) + g_hn > g_hfds_max ||
        hc_self_open(g_hprov, g_hidx, g_hn, &st->hs) != HC_OK) {
      atomic_fetch_sub(&g_hfds, g_hn);
      return 0;
    }
  }
  if (hc_self_read(st->hs, v) != HC_OK) return 0;
  for (size_t k = 0; k < g_hn; k++)
    v[k] -= st->excl[k];
  return 1;
}

static void host_begin(rstate *st, rframe *f) { f->host_ok = host_now(st, f->host); }

/* The host rows of frame f ending at the reading `now` (host_now's; NULL: read here); st->lock held. */
static void host_end(hp_store *s, rstate *st, const rframe *f, const double *now) {
  double v[HC_SELF_MAX];
  if (!f->host_ok || (!now && !host_now(st, v))) return;
  if (now) memcpy(v, now, g_hn * sizeof *v);
  for (size_t k = 0; k < g_hn; k++) {
    hp_counter_value cv = {
        .size = sizeof cv, .counter_id = g_hinfo[k], .value = v[k] - f->host[k], .region_id = f->id};
    hp_write_counter_value(s, &cv);
  }
}

/* The host part of regions that are not frames of the thread's stack: NVTX start/end ranges and API calls
 * (--api). The calling thread's counts now into v (HC_SELF_MAX values); 1 when read (profile with
 * counters), else 0. errno kept. */
int hpc_region_host_begin(double *v) {
  if (HPC_LIKELY(!g_host_on)) return 0;
  rstate *st = t_state;
  if (!st && !(st = state_slow())) return 0;
  int saved = errno, ok = 0;
  if (st_enter(st)) {
    ok = host_now(st, v);
    st_leave(st);
  }
  errno = saved;
  return ok;
}

/* ...and at its end, on the thread that began it: the rows of region `region_id`, its counts since `begin`
 * (hpc_region_host_begin's). */
static void host_rows_now(hp_store *s, rstate *st, uint64_t region_id, const double *begin) {
  double v[HC_SELF_MAX];
  if (!host_now(st, v)) return;
  for (size_t k = 0; k < g_hn; k++) {
    hp_counter_value cv = {
        .size = sizeof cv, .counter_id = g_hinfo[k], .value = v[k] - begin[k], .region_id = region_id};
    hp_write_counter_value(s, &cv);
  }
}

void hpc_region_host_end(hp_store *s, uint64_t region_id, const double *begin) {
  rstate *st = t_state;
  if (!st || !g_host_on || !s) return;
  int saved = errno;
  if (st_enter(st)) {
    host_rows_now(s, st, region_id, begin);
    st_leave(st);
  }
  errno = saved;
}

void hpc_region_host_pause(void) {
  rstate *st = t_state;
  if (!g_host_on || !st || !st->hs || st->paused) return;
  int saved = errno;
  st->paused = hc_self_read(st->hs, st->pause_v) == HC_OK;
  errno = saved;
}

void hpc_region_host_resume(void) {
  rstate *st = t_state;
  if (!st || !st->paused) return;
  int saved = errno;
  double v[HC_SELF_MAX];
  if (hc_self_read(st->hs, v) == HC_OK)
    for (size_t k = 0; k < g_hn; k++)
      st->excl[k] += v[k] - st->pause_v[k];
  st->paused = 0;
  errno = saved;
}

/* ---- entry points ------------------------------------------------------------------------------------ */
int hpc_region_push(const char *category, const char *name, size_t len) {
  rstate *st = t_state;
  if (HPC_UNLIKELY(!st) && !(st = state_slow())) return -1;
  int saved = errno;
  if (!st_enter(st)) { /* closed by the exit handler */
    errno = saved;
    return -1;
  }
  int d = st->depth++;
  if (HPC_LIKELY(d < HPC_REGION_DEPTH)) {
    rframe *f = &st->f[d];
    f->category = category;
    f->id = new_id(st);
    f->len = hpc_region_name(f->name, sizeof f->name, name, len);
    hpc_region_cur = f->id;
    f->host_ok = 0;
    if (HPC_UNLIKELY(g_host_on)) host_begin(st, f);
    f->start = hpc_stamp(); /* last: the region's own bookkeeping is outside it */
  } else if (!st->warned_deep) {
    st->warned_deep = 1;
    hp_store *s = st_store(st);
    if (s) {
      thread_id(s, st);
      write_row(s, st, hpc_region_cat_hubprof, HPC_REGION_TOO_DEEP, now_ns(), now_ns());
    }
    st_unstore(st, s);
  }
  st_leave(st);
  errno = saved;
  return d;
}

int hpc_region_pop(const char *category) {
  int64_t end = hpc_stamp(); /* first: the region's own bookkeeping is outside it; converted below */
  rstate *st = t_state;
  if (HPC_UNLIKELY(!st) && !(st = state_slow())) return -1;
  int saved = errno;
  if (!st_enter(st)) {
    errno = saved;
    return -1;
  }
  /* the host counters first: what follows (opening the log in a forked child, say) is hubprof's work */
  double hnow[HC_SELF_MAX];
  int hok = HPC_UNLIKELY(g_host_on) && st->hs && host_now(st, hnow);
  /* the innermost open region of this category (regions of other categories need not nest with it) */
  int d = st->depth - 1;
  if (d >= HPC_REGION_DEPTH) {
    st->depth--; /* too deep to have been recorded */
  } else {
    while (d >= 0 && st->f[d].category != category)
      d--;
    hp_store *s = st_store(st);
    if (s) thread_id(s, st);
    if (d < 0) {
      end = hpc_stamp_ns(end);
      if (s) write_row(s, st, hpc_region_cat_hubprof, HPC_REGION_END_WITHOUT_BEGIN, end, end);
    } else {
      int64_t start = st->f[d].start;
      hpc_stamp_ns2(&start, &end); /* both on the dispatches' time line, one look-up */
      if (s) {
        write_row_id(s, st, st->f[d].id, st->f[d].category, st->f[d].name, st->f[d].len, start, end);
        if (hok) host_end(s, st, &st->f[d], hnow);
      }
      if (d != st->depth - 1) memmove(&st->f[d], &st->f[d + 1], (size_t)(st->depth - 1 - d) * sizeof(rframe));
      st->depth--;
      hpc_region_cur = top_id(st);
      /* the outermost region ended: commit the thread's block, at most once a millisecond, so that a
       * crash or _exit loses at most that much */
      if (s && !st->depth && end - st->flushed_ns >= 1000000) {
        hp_log_flush(s);
        st->flushed_ns = end;
      }
    }
    st_unstore(st, s);
  }
  st_leave(st);
  errno = saved;
  return d;
}

const char hpc_region_cat_hubprof[] = CAT_HUBPROF;

uint64_t hpc_region_thread(void) {
  rstate *st = t_state;
  if (HPC_UNLIKELY(!st) && !(st = state_slow())) return 0;
  if (HPC_LIKELY(st->thread_id && st->thread_id == hpc_thread_row)) return st->thread_id;
  uint64_t id = 0;
  if (!st_enter(st)) return 0;
  hp_store *s = st_store(st);
  if (s) id = thread_id(s, st);
  st_unstore(st, s);
  st_leave(st);
  return id;
}

uint64_t hpc_region_id_new(void) {
  return atomic_fetch_add_explicit(&g_region_ids, 1, memory_order_relaxed) + 1;
}

void hpc_region_write(const char *category, const char *name, size_t len, int64_t start_ns, int64_t end_ns) {
  hpc_region_write_host(category, name, len, start_ns, end_ns, NULL);
}

void hpc_region_write_host(const char *category, const char *name, size_t len, int64_t start_ns,
                           int64_t end_ns, const double *host_begin) {
  rstate *st = t_state;
  if (HPC_UNLIKELY(!st) && !(st = state_slow())) return;
  int saved = errno;
  if (!st_enter(st)) {
    errno = saved;
    return;
  }
  hp_store *s = st_store(st);
  if (s) {
    char buf[HPC_REGION_NAME_MAX];
    size_t n = hpc_region_name(buf, sizeof buf, name, len);
    thread_id(s, st);
    uint64_t id = new_id(st);
    write_row_id(s, st, id, category, buf, n, start_ns, end_ns);
    if (host_begin) host_rows_now(s, st, id, host_begin); /* the host part's counters, when begun */
  }
  st_unstore(st, s);
  st_leave(st);
  errno = saved;
}

int64_t hpc_region_now(void) { return now_ns(); }

/* Selection (select.c, --region): is one of the calling thread's recorded open regions named one of
 * names[0..n) (compared as stored)? Reads only the caller's own stack, under its one-word lock. */
int hpc_region_open_named(const char *const *names, size_t n) {
  rstate *st = t_state;
  if (!st || !st_enter(st)) return 0;
  int depth = st->depth < HPC_REGION_DEPTH ? st->depth : HPC_REGION_DEPTH, hit = 0;
  for (int d = depth - 1; d >= 0 && !hit; d--)
    for (size_t i = 0; i < n && !hit; i++)
      hit = strcmp(st->f[d].name, names[i]) == 0;
  st_leave(st);
  return hit;
}

void hpc_regions_init(int start_paused) { atomic_store(&hpc_paused, start_paused ? 1 : 0); }

/* Whether thread tid is on a CPU, waiting for one, or in an uninterruptible wait (/proc's state R or D): a
 * region call it is inside ends as soon as it runs. Sleeping (S: on a lock, in a signal handler), stopped
 * (T, t: a debugger) or gone: it may not. */
static int thread_will_run(int64_t tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%lld/stat", (long long)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strrchr(buf, ')'); /* the name in parentheses may hold anything */
  return p && p[1] == ' ' && (p[2] == 'R' || p[2] == 'D');
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wait for a busy stack's owner to leave its call: 10 ms in all over every stack (`waits`, 50 us each), then
 * on, 1 ms at a time, only while the owner is runnable (preempted inside the call on a loaded machine: it
 * finishes once it gets a CPU), up to EXIT_WAIT_RUNNABLE_NS from the first wait. 1 when it left. */
#define EXIT_WAIT_RUNNABLE_NS 2000000000LL
static int wait_idle(rstate *st, int *waits, int64_t *since) {
  for (;;) {
    if (!atomic_load_explicit(&st->lock, memory_order_acquire)) return 1;
    struct timespec ts = {0, 50000};
    if (*waits > 0) {
      (*waits)--;
    } else {
      if (!*since) *since = mono_ns();
      if (mono_ns() - *since > EXIT_WAIT_RUNNABLE_NS || !thread_will_run(st->tid)) return 0;
      ts.tv_nsec = 1000000;
    }
    nanosleep(&ts, NULL);
  }
}

void hpc_regions_exit(hp_store *s, int64_t end_ns) {
  pthread_mutex_lock(&g_rlock);
  rstate *list = g_states;
  pthread_mutex_unlock(&g_rlock);
  int pinned = 0, waits = 200; /* see wait_idle */
  int64_t since = 0;
  for (rstate *st = list; st; st = st->all) {
    if (!atomic_load(&st->in_use)) continue;
    if (g_rbar) { /* after exit_barrier: an owner not busy now sees HPC_EXITING from here on */
      if (!wait_idle(st, &waits,
                     &since)) { /* its owner is stuck inside a call: its regions stay open, the log with it */
        if (!pinned) pinned = hpc_store_enter() != NULL; /* never left: the log is not closed under it */
        continue;
      }
    } else {
      int expect = 0;
      if (!atomic_compare_exchange_strong(&st->lock, &expect, 1)) continue; /* its owner is inside a call */
    }
    if (st->depth && !st->thread_id) { /* a thread whose regions never ended yet: its row now */
      st->thread_id = hpc_thread_id_new();
      write_thread_row(s, st, 0);
    }
    close_all(s, st, end_ns, HPC_REGION_PROCESS_EXIT);
    /* the thread's later calls do nothing: they see HPC_EXITING, or (without membarrier) the lock kept */
  }
}

static void collection(int on) {
  int e = atomic_load_explicit(&hpc_enabled, memory_order_relaxed);
  if (e == 0) e = hpc_init_slow();
  if (e < 1) return;
  int was = !atomic_exchange(&hpc_paused, !on);
  if (was == on) return;
  int64_t t = now_ns();
  hpc_region_write(hpc_region_cat_hubprof, on ? "hubprof_start" : "hubprof_stop", (size_t)-1, t, t);
}

/* ---- the public API (include/hubprof/api.h finds these by name) -------------------------------------- */
HPC_EXPORT void hubprof_region_begin(const char *name) {
  (void)hpc_region_push(hpc_region_cat_hubprof, name, (size_t)-1);
}
HPC_EXPORT void hubprof_region_end(void) { hpc_region_pop(hpc_region_cat_hubprof); }
HPC_EXPORT void hubprof_mark(const char *name) {
  int64_t t = now_ns();
  hpc_region_write(hpc_region_cat_hubprof, name, (size_t)-1, t, t);
}
HPC_EXPORT void hubprof_start(void) { collection(1); }
HPC_EXPORT void hubprof_stop(void) { collection(0); }
