/* The small tables of a store as the analysis reads them (agents, kernels, processes, counter names:
 * tables.c), and what every dispatch scan shares: id lookups, saturating times, a group's call statistics. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_HA_TABLES_H
#define HUBPROF_ANALYSIS_HA_TABLES_H

#include "ha_internal.h"

#include "../common/hu_map.h"

#include <stddef.h>
#include <stdint.h>

#define NCONST 5 /* compute_units, max_clock_mhz, global_mem_bytes, local_mem_bytes, wave_size */

typedef struct agent_rec {
  char *name; /* "product#index" as people see it */
  char *raw, *product;
  double c[NCONST]; /* NaN when unknown (0 in the store) */
  int keep;
} agent_rec;

typedef struct kernel_rec {
  char *name, *mangled; /* name: for people, "name#digits" where programs share it (hu_kname.h) */
  char *prog;           /* its program's identity, NULL unknown */
  int keep;
  int mux; /* an incomplete multiplexing key names it */
} kernel_rec;

typedef struct counter_rec { /* a distinct counter name of the store */
  char *name, *unit;
} counter_rec;

typedef struct tables {
  agent_rec *agents;
  size_t nagents, capagents;
  hu_idmap agent_ix;
  kernel_rec *kernels;
  size_t nkernels, capkernels;
  long none_agent, none_kernel; /* the entries standing for id 0, -1 until needed */
  hu_idmap kernel_ix;
  hu_idmap pid_of;        /* process row id -> index into pids */
  int64_t *pids, *starts; /* per process: pid, start_ns */
  size_t npids, cappids;
  counter_rec *counters;
  size_t ncounters, capcounters;
  hu_idmap counter_ix; /* counter_info id -> distinct name index */
  uint64_t lost;
} tables;

/* The index stored for k in m, or -1. */
static inline long ix_get(const hu_idmap *m, uint64_t k) {
  uint64_t v;
  return hu_idmap_get(m, k, &v) ? (long)v : -1;
}

typedef struct grec { /* one group of dispatches */
  uint32_t agent, kernel;
  uint32_t grid[3], wg[3];
  size_t first; /* its first dispatch (store order) */
  uint64_t calls, timed;
  int64_t total, min, max;
  uint64_t cold; /* its cold dispatches (hp_dispatch.cold: a multiplexed kernel's first) */
} grec;

/* Stored times may be anything (INT64_MIN, INT64_MAX): durations and sums saturate instead of wrapping. */
static inline int64_t dur_ns(int64_t start, int64_t end) {
  int64_t t;
  return __builtin_sub_overflow(end, start, &t) ? INT64_MAX : t;
}
static inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t t;
  return __builtin_add_overflow(a, b, &t) ? (b > 0 ? INT64_MAX : INT64_MIN) : t;
}

/* One dispatch of a group: its call, and its device time when it has one. */
static inline void grec_add(grec *gr, int64_t start, int64_t end) {
  gr->calls++;
  if (start && end >= start) {
    int64_t t = dur_ns(start, end);
    if (!gr->timed || t < gr->min) gr->min = t;
    if (!gr->timed || t > gr->max) gr->max = t;
    gr->total = sat_add(gr->total, t);
    gr->timed++;
  }
}

/* The sums of group g (dispatches of the same group read elsewhere, e.g. by another thread) into gr. */
static inline void grec_merge(grec *gr, const grec *g) {
  gr->calls += g->calls;
  gr->cold += g->cold;
  if (g->timed) {
    if (!gr->timed || g->min < gr->min) gr->min = g->min;
    if (!gr->timed || g->max > gr->max) gr->max = g->max;
    gr->total = sat_add(gr->total, g->total); /* sums of durations: saturation is associative */
    gr->timed += g->timed;
  }
}

/* scan_par.c. The dispatch table's sums per (process id, agent id, kernel id) (calls, timed, total, min, max,
 * cold in g; its agent, kernel and first unused) over the query's dispatch range, read on the query's threads
 * (hai_threads; one where the store is small or its format cannot split), only the columns the sums need;
 * each handed to add (on this thread). Returns 1 with *st the outcome (the first error of add) and *rows the
 * rows read, or 0 when it did not run (out of memory, or a part that failed): the caller then reads the store
 * itself, so that an error is the store's own. */
typedef hp_status (*hai_sum_fn)(void *ctx, uint64_t process_id, uint64_t agent_id, uint64_t kernel_id,
                                const grec *g);
int hai_scan_sums(hp_store *s, const ha_query *q, hai_sum_fn add, void *ctx, uint64_t *rows, hp_status *st);

/* The columns of a group's call statistics, in this order: calls, timed_calls, total_ns, avg_ns, min_ns,
 * max_ns, percent (of its device's time, or its rank's). */
extern const hai_coldef hai_grec_cols[7];

/* The agent, kernel symbol, process and counter_info tables of s into t (zeroed before); HP_OK or the first
 * error. hai_tables_free frees t's insides, loaded or not. */
hp_status hai_load_tables(hp_store *s, tables *t);
void hai_tables_free(tables *t);
/* The query's device and kernel filters (globs on a device's name, raw name and product, a kernel's name and
 * mangled name) into the tables' keep flags. */
void hai_keep_filtered(tables *t, const ha_query *q);
/* Does a, b (NULL: none) or c (NULL: none) match one of the n globs (NULL entries skipped)? */
int hai_glob_any(const char *const *pats, size_t n, const char *a, const char *b, const char *c);

#endif
