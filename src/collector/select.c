/* Selective collection: decides per dispatch whether the collector records (and under profile replays) it
 * or forwards it untouched. The kernel-name filters are decided once per kernel name and cached; regions
 * are read from the calling thread's own region stack; ranges count in atomics. Nothing here allocates or
 * runs a regex after the first dispatch of each kernel name. */
/* SPDX-License-Identifier: MIT */
#include "select.h"

#include "../common/hu_pattern.h"
#include "../common/hu_range.h"
#include "env.h"
#include "hubprof/hub.h"
#include "regions.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic int hpc_select_on;

static regex_t g_inc[HPC_SELECT_MAX], g_exc[HPC_SELECT_MAX]; /* --kernel, --kernel-exclude */
static size_t g_ninc, g_nexc;
static hu_range g_glob[HPC_SELECT_MAX], g_perk[HPC_SELECT_MAX]; /* ranges across the process, per kernel */
static size_t g_nglob, g_nperk;
static const char *g_regions[HPC_SELECT_MAX]; /* names as the region table stores them (hpc_region_name) */
static size_t g_nregions;
static char *g_raw[4]; /* the variables as given, for the store's metadata */
static const char *const g_raw_keys[4] = {"select_kernel", "select_kernel_exclude", "select_dispatch_range",
                                          "select_region"};

static _Atomic uint64_t g_candidates;   /* dispatches that passed the name and region filters (numbering) */
static _Atomic uint64_t g_not_selected; /* forwarded untouched */
static _Atomic uint64_t g_selected;     /* collected */
static _Atomic int g_log_opened;        /* the first dispatch not selected opened the log (for its count) */

/* Per kernel name (kernel_symbol id): the name filters' answer and its dispatch count. Chunks of
 * KCHUNK entries, allocated on the first dispatch of a kernel name in them and never freed. */
enum { K_UNKNOWN = 0, K_IN = 1, K_OUT = 2 };
typedef struct kstate {
  _Atomic uint32_t decided; /* K_* */
  _Atomic uint64_t count;   /* dispatches of this kernel that passed the name and region filters */
} kstate;
#define KCHUNK_BITS 10
#define KCHUNKS 1024 /* names 1 .. 2^20; later ones are decided at each dispatch (never cached) */
static kstate *_Atomic g_chunks[KCHUNKS];
static kstate g_uncached; /* kernels without an id, or beyond the chunks: one shared count */

/* ---- init -------------------------------------------------------------------------------------------- */
/* Split s at newlines into at most HPC_SELECT_MAX items (each malloc'd, the vector in out). -1 when empty
 * items or too many. */
static long split(const char *s, char **out) {
  long n = 0;
  for (const char *p = s;;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (!len || n == HPC_SELECT_MAX || !(out[n] = strndup(p, len))) return -1;
    n++;
    if (!e) return n;
    p = e + 1;
  }
}

static void free_items(char **v, long n) {
  for (long i = 0; i < n; i++)
    free(v[i]);
}

/* Compile the patterns of one variable into re[]; the reason on failure. */
static int compile(const char *var, const char *s, regex_t *re, size_t *nre, char *why, size_t wlen) {
  char *items[HPC_SELECT_MAX];
  long n = split(s, items);
  if (n < 0) {
    snprintf(why, wlen, "%s: an empty pattern or more than %d", var, HPC_SELECT_MAX);
    return -1;
  }
  int rc = 0;
  for (long i = 0; i < n && !rc; i++) {
    const char *big;
    if (hu_regex_bounded(items[i], (size_t)-1, &big)) { /* the CLI refuses it; the variable set by hand */
      snprintf(why, wlen, "%s: '%.32s%s': %s", var, items[i], strlen(items[i]) > 32 ? "..." : "", big);
      for (long j = 0; j < i; j++)
        regfree(&re[j]);
      rc = -1;
      break;
    }
    int e = regcomp(&re[i], items[i], REG_EXTENDED | REG_NOSUB);
    if (e) {
      char msg[128];
      regerror(e, &re[i], msg, sizeof msg);
      snprintf(why, wlen, "%s: '%s': %s", var, items[i], msg);
      for (long j = 0; j < i; j++)
        regfree(&re[j]);
      rc = -1;
    } else {
      *nre = (size_t)i + 1;
    }
  }
  if (rc) *nre = 0;
  free_items(items, n);
  return rc;
}

static void undo(void) {
  for (size_t i = 0; i < g_ninc; i++)
    regfree(&g_inc[i]);
  for (size_t i = 0; i < g_nexc; i++)
    regfree(&g_exc[i]);
  for (size_t i = 0; i < g_nregions; i++)
    free((char *)g_regions[i]);
  for (int i = 0; i < 4; i++)
    free(g_raw[i]);
  memset(g_raw, 0, sizeof g_raw);
  g_ninc = g_nexc = g_nglob = g_nperk = g_nregions = 0;
}

static void fork_child(void) {
  atomic_store(&g_candidates, 0);
  atomic_store(&g_not_selected, 0);
  atomic_store(&g_selected, 0);
  atomic_store(&g_log_opened, 0);
  atomic_store(&g_uncached.count, 0);
  for (size_t c = 0; c < KCHUNKS; c++) {
    kstate *k = atomic_load(&g_chunks[c]);
    for (size_t i = 0; k && i < (1u << KCHUNK_BITS); i++)
      atomic_store(&k[i].count, 0);
  }
}

static int parse(const hpc_env *e, char *why, size_t wlen) {
  if (e->select_kernel && compile("HUBPROF_KERNEL", e->select_kernel, g_inc, &g_ninc, why, wlen)) return -1;
  if (e->select_exclude && compile("HUBPROF_KERNEL_EXCLUDE", e->select_exclude, g_exc, &g_nexc, why, wlen))
    return -1;
  if (e->select_range) {
    const char *p = e->select_range;
    for (;;) {
      const char *end = strchr(p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      hu_range r;
      const char *bad = NULL;
      if (hu_range_parse(p, len, &r, &bad) != HU_OK) {
        snprintf(why, wlen, "HUBPROF_DISPATCH_RANGE: '%.*s': %s", (int)(len > 64 ? 64 : len), p, bad);
        return -1;
      }
      if (g_nglob + g_nperk == HPC_SELECT_MAX) {
        snprintf(why, wlen, "HUBPROF_DISPATCH_RANGE: more than %d ranges", HPC_SELECT_MAX);
        return -1;
      }
      if (r.per_kernel)
        g_perk[g_nperk++] = r;
      else
        g_glob[g_nglob++] = r;
      if (!end) break;
      p = end + 1;
    }
  }
  if (e->select_region) {
    char *items[HPC_SELECT_MAX];
    long n = split(e->select_region, items);
    if (n < 0) {
      snprintf(why, wlen, "HUBPROF_REGION: an empty name or more than %d", HPC_SELECT_MAX);
      return -1;
    }
    for (long i = 0; i < n; i++) { /* the form region rows store, so that names compare as stored */
      char *s = malloc(HPC_REGION_NAME_MAX);
      if (s) hpc_region_name(s, HPC_REGION_NAME_MAX, items[i], (size_t)-1);
      if (s) g_regions[g_nregions++] = s;
    }
    free_items(items, n);
    if (g_nregions != (size_t)n) {
      snprintf(why, wlen, "HUBPROF_REGION: out of memory");
      return -1;
    }
  }
  const char *raw[4] = {e->select_kernel, e->select_exclude, e->select_range, e->select_region};
  for (int i = 0; i < 4; i++)
    if (raw[i] && !(g_raw[i] = strdup(raw[i]))) {
      snprintf(why, wlen, "out of memory");
      return -1;
    }
  return 0;
}

void hpc_select_init(const hpc_env *e) {
  if (!e->select_kernel && !e->select_exclude && !e->select_range && !e->select_region) return;
  char why[512];
  if (parse(e, why, sizeof why) != 0) {
    undo();
    hpc_say("%s; dispatch selection disabled (every dispatch is collected)", why);
    return;
  }
  pthread_atfork(NULL, NULL, fork_child);
  atomic_store(&hpc_select_on, 1);
}

/* ---- per dispatch ------------------------------------------------------------------------------------- */
static int in_ranges(const hu_range *r, size_t n, uint64_t i) {
  for (size_t j = 0; j < n; j++)
    if (i >= r[j].first && i <= r[j].last) return 1;
  return 0;
}

/* Does one of the n regexes match the name, or the name with its program ("name#<16 hex digits>")? */
static int matches(const regex_t *re, size_t n, const char *name, const char *named) {
  for (size_t i = 0; i < n; i++)
    if (regexec(&re[i], name, 0, NULL, 0) == 0 || (named && regexec(&re[i], named, 0, NULL, 0) == 0))
      return 1;
  return 0;
}

/* The name filters' answer for kernel k (its name and program asked from its provider; slow path). A
 * pattern matches the kernel's name, or its name followed by '#' and its program's identity: "^Xaxpy#3f2a"
 * picks the Xaxpy of one program. */
static uint32_t decide(const hpc_provider *pv, const void *rt, uintptr_t k) {
  char buf[256], *name = pv->kernel_name(pv->h, rt, k, buf, sizeof buf);
  if (!name) { /* nameless: as the empty name */
    buf[0] = 0;
    name = buf;
  }
  char prog[HPC_PROGRAM_ID] = "", *named = NULL;
  if (pv->kernel_program && pv->kernel_program(pv->h, rt, k, prog) && (named = malloc(strlen(name) + 18)))
    sprintf(named, "%s#%s", name, prog);
  int in = !g_ninc || matches(g_inc, g_ninc, name, named);
  if (in && g_nexc) in = !matches(g_exc, g_nexc, name, named);
  free(named);
  if (name != buf) free(name);
  return in ? K_IN : K_OUT;
}

/* The state of kernel id kid, its chunk allocated at need (slow path); NULL: not cacheable. */
static kstate *kstate_of(uint32_t kid) {
  if (!kid || (kid >> KCHUNK_BITS) >= KCHUNKS) return NULL;
  kstate *c = atomic_load_explicit(&g_chunks[kid >> KCHUNK_BITS], memory_order_acquire);
  if (HPC_UNLIKELY(!c)) {
    kstate *fresh = calloc(1u << KCHUNK_BITS, sizeof *fresh), *expect = NULL;
    if (!fresh) return NULL;
    if (atomic_compare_exchange_strong(&g_chunks[kid >> KCHUNK_BITS], &expect, fresh))
      c = fresh;
    else {
      free(fresh); /* another thread's chunk won */
      c = expect;
    }
  }
  return &c[kid & ((1u << KCHUNK_BITS) - 1)];
}

/* The first dispatch not selected opens the log (when nothing else did yet), so its count reaches the
 * store even when no dispatch at all is selected. */
static void open_log_once(void) {
  if (HPC_LIKELY(atomic_load_explicit(&g_log_opened, memory_order_relaxed)) ||
      atomic_exchange(&g_log_opened, 1))
    return;
  hpc_store_leave(hpc_store_enter_open());
}

int hpc_select_kernel(const hpc_provider *pv, const void *rt, uintptr_t k) {
  int saved = errno, busy = hpc_busy;
  hpc_busy = 1; /* the runtime calls made on the slow paths below are the collector's own */
  uint32_t kid = (uint32_t)hpc_tab_get(hpc_ktab, HPC_KTAB_BITS, k);
  if (HPC_UNLIKELY(!kid)) kid = hpc_kernel_slow(pv, rt, k);
  kstate *ks = kstate_of(kid);
  uint32_t d;
  if (HPC_LIKELY(ks)) {
    d = atomic_load_explicit(&ks->decided, memory_order_relaxed);
    if (HPC_UNLIKELY(d == K_UNKNOWN)) {
      d = decide(pv, rt, k);
      atomic_store_explicit(&ks->decided, d, memory_order_relaxed);
    }
  } else { /* not cacheable: decided each time, counted together */
    d = decide(pv, rt, k);
    ks = &g_uncached;
  }
  int sel = d == K_IN && (!g_nregions || hpc_region_open_named(g_regions, g_nregions));
  if (sel && (g_nglob | g_nperk)) { /* both numberings count every dispatch that got this far */
    uint64_t gi = g_nglob ? atomic_fetch_add_explicit(&g_candidates, 1, memory_order_relaxed) + 1 : 0;
    uint64_t ki = g_nperk ? atomic_fetch_add_explicit(&ks->count, 1, memory_order_relaxed) + 1 : 0;
    sel = (!g_nglob || in_ranges(g_glob, g_nglob, gi)) && (!g_nperk || in_ranges(g_perk, g_nperk, ki));
  }
  if (sel) {
    atomic_fetch_add_explicit(&g_selected, 1, memory_order_relaxed);
  } else {
    atomic_fetch_add_explicit(&g_not_selected, 1, memory_order_relaxed);
    open_log_once();
  }
  hpc_busy = busy;
  errno = saved;
  return sel;
}

/* ---- exit ---------------------------------------------------------------------------------------------- */
void hpc_select_exit(hp_store *s, int debug) {
  if (!atomic_load(&hpc_select_on)) return;
  char num[32];
  uint64_t no = atomic_load(&g_not_selected);
  snprintf(num, sizeof num, "%" PRIu64, no);
  hp_write_metadata(s, "dispatches_not_selected", num);
  for (int i = 0; i < 4; i++)
    if (g_raw[i]) hp_write_metadata(s, g_raw_keys[i], g_raw[i]);
  if (debug)
    hpc_say("pid %ld: dispatch selection: %" PRIu64 " dispatches selected, %" PRIu64 " not selected",
            (long)getpid(), atomic_load(&g_selected), no);
}
