/* Write tracking for kernel replay (docs/replay.md "Write tracking"): the pages of a dispatch's host-resident
 * buffers are made read-only; the first write to one faults into a SIGSEGV handler that saves the page (a
 * block of pages, growing with the faults of a range) and makes it writable again. Memory only OpenCL writes
 * stays read-only between dispatches ("armed"): a dispatch re-protects only the pages written since, so its
 * cost follows what was written, not the buffer's size. Faults that are not ours go to the handler the
 * application had, or end the process as they would have. */
/* SPDX-License-Identifier: MIT */
#include "wtrack.h"

#include "../common/hu_buf.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WT_MAX_GRAIN 512 /* pages saved and unprotected by one fault at most (2 MiB of 4 KiB pages) */

typedef struct wt_rng {
  uintptr_t base, end; /* the range */
  uintptr_t lo, hi;    /* its own pages (page-aligned; lo == hi: none), protected while tracking */
  char *shadow;
  uint64_t *bits; /* per own page: saved (and writable) */
  size_t npages;
  size_t grain; /* pages a fault saves (a power of two, doubled by every fault of the range) */
  long arm;     /* index of its armed region in wt_a (kept read-only after the dispatch), -1: none */
} wt_rng;

/* An armed region: whole pages of memory that only OpenCL commands write (a buffer the runtime allocated),
 * kept read-only between dispatches. A write outside a tracked dispatch (a command the collector does not
 * replay) faults once per block and leaves the block writable ("open"); the next dispatch protects only the
 * open pages again. Disarmed (all writable) when the application maps or releases the buffer. */
typedef struct wt_arm {
  uintptr_t lo, hi;
  uint64_t *open; /* per page: writable now */
  size_t npages, nopen;
  size_t grain; /* pages a fault outside a dispatch opens (doubles, at most WT_MAX_GRAIN) */
  int leave;    /* disarm asked for during a dispatch: done at its end */
} wt_arm;

static wt_rng *wt_r;
static size_t wt_n, wt_cap;
static uint64_t *wt_bits;
static size_t wt_bits_cap;
static size_t wt_ps;
static _Atomic int wt_active;
static atomic_flag wt_lock = ATOMIC_FLAG_INIT;
static _Atomic uint64_t wt_saved, wt_faults;
static struct sigaction wt_old; /* the application's SIGSEGV action while ours is installed */
static int wt_installed;
static wt_arm *wt_a; /* armed regions (changed under wt_lock; read by the handler under it) */
static size_t wt_na, wt_capa;
static _Atomic size_t wt_narmed;   /* wt_na, for the lock-free checks */
static _Atomic uint64_t wt_reprot; /* pages protected again by a begin (armed regions' open pages) */
static _Atomic uint64_t wt_arm_ns; /* time spent arming regions (their first whole protection) */

/* Taken in the signal handler: a holder copies up to WT_MAX_GRAIN pages, so a waiter yields its CPU
 * (sched_yield is a plain system call) rather than spin against a holder that may not be running. */
static void lock(void) {
  while (atomic_flag_test_and_set_explicit(&wt_lock, memory_order_acquire))
    sched_yield();
}
static void unlock(void) { atomic_flag_clear_explicit(&wt_lock, memory_order_release); }

/* Not our fault: what the application's action would have done. The default action is put back and the
 * faulting instruction runs again, so a real crash ends the process with SIGSEGV as it would have. */
static void chain(int sig, siginfo_t *si, void *uc) {
  if ((wt_old.sa_flags & SA_SIGINFO) && wt_old.sa_sigaction) {
    wt_old.sa_sigaction(sig, si, uc);
    return;
  }
  if (!(wt_old.sa_flags & SA_SIGINFO) && wt_old.sa_handler != SIG_DFL && wt_old.sa_handler != SIG_IGN) {
    wt_old.sa_handler(sig);
    return;
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
}

static inline int bit(const uint64_t *v, size_t i) { return (int)(v[i / 64] >> (i % 64) & 1); }
static inline void bit_set(uint64_t *v, size_t i) { v[i / 64] |= (uint64_t)1 << (i % 64); }

/* Pages [p0, p1) of armed region x are writable now (wt_lock held). */
static void arm_opened(wt_arm *x, size_t p0, size_t p1) {
  for (size_t p = p0; p < p1; p++)
    if (!bit(x->open, p)) {
      bit_set(x->open, p);
      x->nopen++;
    }
}

/* Pages [*b0, *b1) from lo made writable; when that fails (too many mappings for a block) page pg alone,
 * and [*b0, *b1) becomes that page. 0, or -1 when neither could be. */
static int open_block(uintptr_t lo, size_t pg, size_t *b0, size_t *b1) {
  if (mprotect((void *)(lo + *b0 * wt_ps), (*b1 - *b0) * wt_ps, PROT_READ | PROT_WRITE) == 0) return 0;
  *b0 = pg;
  *b1 = pg + 1;
  return mprotect((void *)(lo + pg * wt_ps), wt_ps, PROT_READ | PROT_WRITE) == 0 ? 0 : -1;
}

/* A write fault at a in a tracked range: its block saved and made writable. 1 done, 0 not in one, -1 failed
 * (wt_lock held). */
static int fault_range(uintptr_t a) {
  for (size_t i = 0; i < wt_n; i++) {
    wt_rng *r = &wt_r[i];
    if (a < r->lo || a >= r->hi) continue;
    size_t pg = (a - r->lo) / wt_ps, b0 = pg / r->grain * r->grain, b1 = b0 + r->grain;
    if (b1 > r->npages) b1 = r->npages;
    /* Saved already: a fault of another thread on the same block won the lock, or the block could not be
     * opened whole. This page alone is opened (nothing to save), and the grain is left as it is. */
    int again = bit(r->bits, pg);
    if (again) b0 = pg, b1 = pg + 1;
    for (size_t p = b0; p < b1; p++)
      if (!bit(r->bits, p)) {
        uintptr_t at = r->lo + p * wt_ps;
        memcpy(r->shadow + (at - r->base), (const void *)at, wt_ps);
        bit_set(r->bits, p);
        atomic_fetch_add_explicit(&wt_saved, wt_ps, memory_order_relaxed);
      }
    int ok = open_block(r->lo, pg, &b0, &b1) == 0; /* (the whole block saved above) */
    if (ok && r->arm >= 0) {                       /* the range's pages are its region's (same lo) */
      wt_arm *x = &wt_a[r->arm];
      arm_opened(x, (r->lo - x->lo) / wt_ps + b0, (r->lo - x->lo) / wt_ps + b1);
    }
    if (!again && r->grain < WT_MAX_GRAIN) r->grain *= 2;
    if (!again) atomic_fetch_add_explicit(&wt_faults, 1, memory_order_relaxed);
    return ok ? 1 : -1;
  }
  return 0;
}

/* A write fault at a in an armed region outside a tracked range (a command that is not replayed, a copy
 * into the buffer): the block is made writable, nothing saved. Same returns (wt_lock held). */
static int fault_arm(uintptr_t a) {
  for (size_t i = 0; i < wt_na; i++) {
    wt_arm *x = &wt_a[i];
    if (a < x->lo || a >= x->hi) continue;
    size_t pg = (a - x->lo) / wt_ps, b0 = pg / x->grain * x->grain, b1 = b0 + x->grain;
    if (b1 > x->npages) b1 = x->npages;
    int again = bit(x->open, pg); /* opened by a fault of another thread that won the lock: this page alone */
    if (again) b0 = pg, b1 = pg + 1;
    if (open_block(x->lo, pg, &b0, &b1) != 0) return -1;
    arm_opened(x, b0, b1);
    if (!again && x->grain < WT_MAX_GRAIN) x->grain *= 2;
    return 1;
  }
  return 0;
}

static void wt_handler(int sig, siginfo_t *si, void *uc) {
  int e = errno;
  uintptr_t a = (uintptr_t)si->si_addr;
  if (atomic_load_explicit(&wt_active, memory_order_acquire) ||
      atomic_load_explicit(&wt_narmed, memory_order_acquire)) {
    lock();
    int rc = atomic_load_explicit(&wt_active, memory_order_relaxed) ? fault_range(a) : 0;
    if (rc == 0) rc = fault_arm(a);
    unlock();
    errno = e;
    if (rc > 0) return;
  }
  errno = e;
  chain(sig, si, uc);
}

static int install(void) {
  if (wt_installed) return 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = wt_handler;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &wt_old) != 0) return -1;
  wt_installed = 1;
  return 0;
}

/* The application's action back, unless it installed another one meanwhile (that one stays). */
static void uninstall(void) {
  if (!wt_installed) return;
  struct sigaction cur;
  if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == wt_handler)
    sigaction(SIGSEGV, &wt_old, NULL);
  wt_installed = 0;
}

/* Whether our handler is still the SIGSEGV action (the application may have set its own since). */
static int ours(void) {
  struct sigaction cur;
  return sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == wt_handler;
}

/* Armed region i writable again and dropped (wt_lock held; the last one moves into its slot). */
static void arm_drop(size_t i) {
  wt_arm *x = &wt_a[i];
  mprotect((void *)x->lo, x->hi - x->lo, PROT_READ | PROT_WRITE);
  free(x->open);
  for (size_t j = 0; j < wt_n; j++) /* a range of the current dispatch loses its region, or follows it */
    if (wt_r[j].arm == (long)i)
      wt_r[j].arm = -1;
    else if (wt_r[j].arm == (long)wt_na - 1)
      wt_r[j].arm = (long)i;
  wt_a[i] = wt_a[--wt_na];
  atomic_store_explicit(&wt_narmed, wt_na, memory_order_release);
}

/* Every armed region dropped (wt_lock held). */
static void arm_drop_all(void) {
  while (wt_na)
    arm_drop(wt_na - 1);
}

/* The armed region of exactly [lo, hi), created (read-only, nothing open) when there is none; regions
 * overlapping it otherwise are dropped. Returns its index, -1 when it cannot be had (wt_lock held). */
static long arm_get(uintptr_t lo, uintptr_t hi) {
  for (size_t i = 0; i < wt_na;) {
    if (wt_a[i].lo == lo && wt_a[i].hi == hi && !wt_a[i].leave) return (long)i;
    if (wt_a[i].lo < hi && lo < wt_a[i].hi)
      arm_drop(i);
    else
      i++;
  }
  if (hu_grow((void **)&wt_a, &wt_capa, wt_na + 1, sizeof *wt_a) != 0) return -1;
  size_t np = (hi - lo) / wt_ps;
  uint64_t *open = calloc((np + 63) / 64, sizeof *open);
  if (!open) return -1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (mprotect((void *)lo, hi - lo, PROT_READ) != 0) {
    free(open);
    return -1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  atomic_fetch_add_explicit(&wt_arm_ns,
                            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)),
                            memory_order_relaxed);
  wt_a[wt_na] = (wt_arm){.lo = lo, .hi = hi, .open = open, .npages = np, .grain = 1};
  atomic_store_explicit(&wt_narmed, ++wt_na, memory_order_release);
  return (long)wt_na - 1;
}

/* The open pages of armed region x read-only again (runs of pages, one call each). 0, or -1 (wt_lock). */
static int arm_close(wt_arm *x) {
  x->grain = 1;
  for (size_t p = 0; p < x->npages && x->nopen;) {
    if (!bit(x->open, p)) {
      p = x->open[p / 64] >> (p % 64) ? p + 1 : (p / 64 + 1) * 64;
      continue;
    }
    size_t q = p;
    while (q < x->npages && bit(x->open, q))
      q++;
    if (mprotect((void *)(x->lo + p * wt_ps), (q - p) * wt_ps, PROT_READ) != 0) return -1;
    for (size_t i = p; i < q; i++)
      x->open[i / 64] &= ~((uint64_t)1 << (i % 64));
    x->nopen -= q - p;
    atomic_fetch_add_explicit(&wt_reprot, q - p, memory_order_relaxed);
    p = q;
  }
  return 0;
}

/* The ranges' pages writable again, except those of armed regions (wt_lock held). */
static void unprotect(size_t n) {
  for (size_t i = 0; i < n; i++)
    if (wt_r[i].hi > wt_r[i].lo && wt_r[i].arm < 0)
      mprotect((void *)wt_r[i].lo, wt_r[i].hi - wt_r[i].lo, PROT_READ | PROT_WRITE);
}

/* The bytes of range r outside its own pages (shared with other memory: never protected, always saved). */
static void edges(const wt_rng *r, int back) {
  uintptr_t span[2][2] = {{r->base, r->lo < r->hi ? r->lo : r->end},
                          {r->lo < r->hi ? r->hi : r->end, r->end}};
  for (int s = 0; s < 2; s++)
    if (span[s][1] > span[s][0]) {
      char *sh = r->shadow + (span[s][0] - r->base);
      if (back)
        memcpy((void *)span[s][0], sh, span[s][1] - span[s][0]);
      else
        memcpy(sh, (const void *)span[s][0], span[s][1] - span[s][0]);
    }
}

int hpc_wt_begin(const hpc_wt_range *in, size_t n) {
  if (!wt_ps) wt_ps = (size_t)sysconf(_SC_PAGESIZE);
  if (n > wt_cap) {
    wt_rng *v = realloc(wt_r, n * sizeof *v);
    if (!v) return -1;
    wt_r = v;
    wt_cap = n;
  }
  size_t words = 0;
  for (size_t i = 0; i < n; i++) {
    uintptr_t b = (uintptr_t)in[i].host, e = b + in[i].size;
    uintptr_t lo = (b + wt_ps - 1) & ~(uintptr_t)(wt_ps - 1), hi = e & ~(uintptr_t)(wt_ps - 1);
    if (lo >= hi) lo = hi = 0;
    wt_r[i] =
        (wt_rng){.base = b, .end = e, .lo = lo, .hi = hi, .shadow = in[i].shadow, .grain = 1, .arm = -1};
    wt_r[i].npages = (hi - lo) / wt_ps;
    words += (wt_r[i].npages + 63) / 64;
  }
  if (words > wt_bits_cap) {
    uint64_t *v = realloc(wt_bits, words * sizeof *v);
    if (!v) return -1;
    wt_bits = v;
    wt_bits_cap = words;
  }
  memset(wt_bits, 0, words * sizeof *wt_bits);
  words = 0;
  for (size_t i = 0; i < n; i++) {
    wt_r[i].bits = wt_bits + words;
    words += (wt_r[i].npages + 63) / 64;
    edges(&wt_r[i], 0);
    atomic_fetch_add_explicit(&wt_saved, (wt_r[i].end - wt_r[i].base) - wt_r[i].npages * wt_ps,
                              memory_order_relaxed);
  }
  size_t own = 0;
  for (size_t i = 0; i < n; i++)
    own += wt_r[i].npages;
  lock();
  wt_n = n;
  if (!own) { /* nothing to protect (every range shares its pages): the edges are all */
    unlock();
    return 0;
  }
  if (wt_installed && !ours()) { /* the application set its own action: it would get our faults */
    arm_drop_all();
    wt_installed = 0;
  }
  if (install() != 0) {
    wt_n = 0;
    unlock();
    return -1;
  }
  atomic_store_explicit(&wt_active, 1, memory_order_release);
  for (size_t i = 0; i < n; i++) {
    wt_rng *r = &wt_r[i];
    if (r->hi <= r->lo) continue;
    int ok;
    if (in[i].keep) { /* an armed region: only the pages written since it was last protected */
      r->arm = arm_get(r->lo, r->hi);
      ok = r->arm >= 0 && arm_close(&wt_a[r->arm]) == 0;
    } else {
      for (size_t j = 0; j < wt_na;) /* memory the application owns is never armed: drop a stale region */
        if (wt_a[j].lo < r->hi && r->lo < wt_a[j].hi)
          arm_drop(j);
        else
          j++;
      ok = mprotect((void *)r->lo, r->hi - r->lo, PROT_READ) == 0;
    }
    if (!ok) { /* everything this dispatch touched writable again */
      for (size_t j = 0; j <= i; j++)
        if (wt_r[j].arm >= 0) arm_drop((size_t)wt_r[j].arm);
      unprotect(i + 1);
      atomic_store(&wt_active, 0);
      wt_n = 0;
      if (!wt_na) uninstall();
      unlock();
      return -1;
    }
  }
  unlock();
  return 0;
}

/* The open pages of the armed region of exactly the whole pages of [host, host + size), or -1 when it has
 * none (np: its whole pages). */
static long arm_open_pages(const char *host, size_t size, size_t np) {
  if (!np || !atomic_load_explicit(&wt_narmed, memory_order_acquire)) return -1;
  uintptr_t lo = ((uintptr_t)host + wt_ps - 1) & ~(uintptr_t)(wt_ps - 1);
  long open = -1;
  lock();
  for (size_t i = 0; i < wt_na; i++)
    if (wt_a[i].lo == lo && wt_a[i].npages == np && !wt_a[i].leave) {
      open = (long)wt_a[i].nopen;
      break;
    }
  unlock();
  return open;
}

size_t hpc_wt_pages(const char *host, size_t size) {
  if (!wt_ps) wt_ps = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t b = (uintptr_t)host, e = b + size;
  uintptr_t lo = (b + wt_ps - 1) & ~(uintptr_t)(wt_ps - 1), hi = e & ~(uintptr_t)(wt_ps - 1);
  return lo < hi ? (hi - lo) / wt_ps : 0;
}

int hpc_wt_resident(const char *host, size_t size) {
  static unsigned char *vec;
  static size_t cap;
  size_t np = hpc_wt_pages(host, size);
  if (!np || arm_open_pages(host, size, np) >= 0) return 1; /* armed: resident then (mincore walks all) */
  if (np > cap) {
    unsigned char *v = realloc(vec, np);
    if (!v) return 0;
    vec = v;
    cap = np;
  }
  uintptr_t lo = ((uintptr_t)host + wt_ps - 1) & ~(uintptr_t)(wt_ps - 1);
  if (mincore((void *)lo, np * wt_ps, vec) != 0) return 0;
  for (size_t i = 0; i < np; i++)
    if (!(vec[i] & 1)) return 0;
  return 1;
}

uint64_t hpc_wt_restore(void) {
  uint64_t bytes = 0;
  lock();
  for (size_t i = 0; i < wt_n; i++) {
    const wt_rng *r = &wt_r[i];
    edges(r, 1);
    bytes += (r->end - r->base) - r->npages * wt_ps;
    for (size_t p = 0; p < r->npages;) { /* runs of saved pages, one copy each */
      if (!(r->bits[p / 64] >> (p % 64) & 1)) {
        p = r->bits[p / 64] >> (p % 64) ? p + 1 : (p / 64 + 1) * 64;
        continue;
      }
      size_t q = p;
      while (q < r->npages && (r->bits[q / 64] >> (q % 64) & 1))
        q++;
      uintptr_t at = r->lo + p * wt_ps;
      memcpy((void *)at, r->shadow + (at - r->base), (q - p) * wt_ps);
      bytes += (q - p) * wt_ps;
      p = q;
    }
  }
  unlock();
  return bytes;
}

void hpc_wt_end(void) {
  lock();
  unprotect(wt_n);
  atomic_store_explicit(&wt_active, 0, memory_order_release);
  wt_n = 0;
  for (size_t i = 0; i < wt_na;) /* disarms asked for during the dispatch */
    if (wt_a[i].leave)
      arm_drop(i);
    else
      i++;
  if (!wt_na) uninstall();
  unlock();
}

void hpc_wt_guard(void) {
  if (!atomic_load_explicit(&wt_narmed, memory_order_acquire)) return;
  lock();
  if (wt_na && wt_installed && !ours() && !atomic_load_explicit(&wt_active, memory_order_relaxed)) {
    arm_drop_all(); /* the application's own action now: it must never see the collector's faults */
    wt_installed = 0;
  }
  unlock();
}

void hpc_wt_disarm(const char *host, size_t size) {
  if (!atomic_load_explicit(&wt_narmed, memory_order_acquire) || !host) return;
  uintptr_t b = (uintptr_t)host, e = b + size;
  lock();
  for (size_t i = 0; i < wt_na;) {
    wt_arm *x = &wt_a[i];
    if (x->lo < e && b < x->hi && atomic_load_explicit(&wt_active, memory_order_relaxed)) {
      x->leave = 1; /* a dispatch is tracking it now: at its end */
      i++;
    } else if (x->lo < e && b < x->hi) {
      arm_drop(i);
    } else {
      i++;
    }
  }
  if (!wt_na && !atomic_load_explicit(&wt_active, memory_order_relaxed)) uninstall();
  unlock();
}

size_t hpc_wt_walk(const char *host, size_t size) {
  size_t np = hpc_wt_pages(host, size);
  long open = arm_open_pages(host, size, np);
  return open >= 0 ? (size_t)open : np;
}

uint64_t hpc_wt_reprotected(void) { return atomic_load(&wt_reprot); }

uint64_t hpc_wt_arm_ns(void) { return atomic_load(&wt_arm_ns); }

void hpc_wt_totals(uint64_t *saved, uint64_t *faults) {
  *saved = atomic_load(&wt_saved);
  *faults = atomic_load(&wt_faults);
}

void hpc_wt_fork_child(void) {
  atomic_flag_clear(&wt_lock);
  if (atomic_load(&wt_active)) hpc_wt_end(); /* forked during a replayed dispatch: the child's pages back */
  atomic_store(&wt_saved, 0);
  atomic_store(&wt_faults, 0);
}

/* The probe: one page protected, written, and seen saved by the handler. */
static int probe(const char **why) {
  const char *t = getenv("HUBPROF_TEST_WTRACK_REFUSE");
  if (t && *t && strcmp(t, "0")) {
    *why = "refused by the test hook HUBPROF_TEST_WTRACK_REFUSE";
    return 0;
  }
  wt_ps = (size_t)sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, 2 * wt_ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    *why = "the probe's page could not be mapped";
    return 0;
  }
  m[0] = 7;
  uint64_t f0 = atomic_load(&wt_faults), s0 = atomic_load(&wt_saved);
  hpc_wt_range r = {.host = m, .size = wt_ps, .shadow = m + wt_ps};
  int ok = 0;
  if (hpc_wt_begin(&r, 1) != 0) {
    *why = errno == EPERM || errno == EACCES ? "mprotect or sigaction is not permitted"
                                             : "mprotect or sigaction failed";
  } else {
    *(volatile char *)m = 9; /* faults once: saved, then written */
    ok = atomic_load(&wt_faults) == f0 + 1 && m[wt_ps] == 7 && m[0] == 9;
    hpc_wt_end();
    if (!ok) *why = "a write to a protected page was not seen";
  }
  atomic_store(&wt_faults, f0);
  atomic_store(&wt_saved, s0);
  munmap(m, 2 * wt_ps);
  return ok;
}

static int v_on = -1; /* HUBPROF_WTRACK=on: track wherever the device allows, whatever it costs */
int hpc_wt_forced(void) { return v_on > 0; }

int hpc_wt_usable(const char **why) {
  static int done, usable;
  static const char *reason;
  if (!done) {
    const char *v = getenv("HUBPROF_WTRACK");
    if (v && (!strcmp(v, "off") || !strcmp(v, "0"))) {
      reason = "turned off (HUBPROF_WTRACK=off)";
      usable = 0;
    } else if (v && *v && strcmp(v, "on") && strcmp(v, "1") && strcmp(v, "auto")) {
      reason = "HUBPROF_WTRACK must be 'auto', 'on' or 'off'";
      usable = 0;
    } else {
      usable = probe(&reason);
    }
    done = 1;
  }
  if (!usable && why) *why = reason;
  if (usable && v_on < 0) {
    const char *v = getenv("HUBPROF_WTRACK");
    v_on = v && (!strcmp(v, "on") || !strcmp(v, "1"));
  }
  return usable;
}
