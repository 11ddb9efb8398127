/* The context of a kernel, dispatch or region query (run): scan.c reads the store into it, select.c chooses
 * its counters and metrics, measures.c makes them a row's counter and metric cells and the notes. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_HA_RUN_H
#define HUBPROF_ANALYSIS_HA_RUN_H

#include "ha_result.h"
#include "ha_tables.h"
#include "metrics.h"

#include <stddef.h>
#include <stdint.h>

typedef struct drec { /* one kept dispatch */
  uint64_t id, dispatch_id;
  int64_t start, end;
  uint32_t agent, kernel, group, passes;
  uint32_t grid[3], wg[3];
  int64_t pid;
  uint8_t mux_incomplete; /* its multiplexing key missed passes (metadata multiplex_incomplete) */
} drec;

typedef struct cslot { /* one counter on one dispatch */
  double sum;
  uint32_t pass; /* the first pass seen */
  uint16_t n;    /* values added */
  uint8_t imputed;
  uint8_t multi; /* 1: values of several passes, 2: duplicates of one pass */
} cslot;

typedef struct rloc { /* where a kept dispatch ran, for the region groupings */
  uint64_t proc, thread, region;
  int64_t enq;
} rloc;

typedef struct hostv { /* a region's host part of one counter (counter_value with region_id, no dispatch) */
  uint64_t region;
  size_t counter;
  double value;
} hostv;

typedef struct run {
  const ha_query *q;
  int (*prog)(void *, uint64_t); /* q->progress when given */
  uint64_t rows_read;            /* dispatch and counter value rows read so far, for prog */
  int group, sort;
  int keep_records; /* keep a drec per dispatch (rows per dispatch, or counters to combine) */
  size_t nseen;     /* dispatches kept by the filters */
  int64_t *devtot;  /* per agent: device time of the kept dispatches */
  size_t ndevtot;
  int64_t limit;
  tables t;
  drec *d;
  size_t nd, capd;
  grec *g;
  size_t ng, capg;
  size_t *gslot; /* group hash: index + 1, 0 empty */
  size_t capgslot;
  /* counters: every distinct counter of the store (index as tables.counters) */
  int want_counters;      /* scan counter values */
  cslot *slots;           /* nd * ncounters */
  uint64_t *with_values;  /* per counter: dispatches with a value */
  uint64_t *multi, *dups; /* per counter: dispatches with several passes / duplicate rows */
  size_t *sel;            /* counters to report */
  size_t nsel;
  /* metrics */
  hc_metrics *m;
  size_t *msel; /* metrics to report (hc_metrics indices) */
  size_t nmsel;
  long *mc_to_c; /* metric-set counter -> store counter, -1 when the store lacks it */
  size_t nmc;
  size_t *aggs; /* aggregates the selected metrics use */
  size_t naggs;
  int *used;               /* per store counter: reported or used by a selected metric */
  char note_metrics[1100]; /* why default metrics were skipped, "" */
  struct muxkey *mux;      /* multiplexing keys that missed passes */
  size_t nmux;
  int mux_unreadable; /* metadata multiplex_incomplete could not be read */
  ha_result *res;     /* the result being built: hai_fail puts why the run failed on it */
  int regions;        /* HA_BY_REGION(_TREE): every dispatch kept, with its rloc; no kernel groups */
  rloc *rl;           /* per kept dispatch, beside d */
  size_t caprl;
  hostv *hv; /* regions: the host parts read with the counter values */
  size_t nhv, caphv;
  uint8_t *host_has; /* per counter: some region has a host part of it */
  /* kept dispatches running when their process died ("dispatch begun" rows: no device times, passes 0) */
  uint64_t nincomplete;
  int col_agent, col_kernel, col_dispatch; /* their index in the dispatch table's columns, -1 when absent */
} run;

typedef struct rowctx { /* per-metric tallies for the notes */
  uint64_t *mixed, *div0, *missing, *incomplete_rows, *over_peak;
  double *worst_pct; /* per metric: the highest % of peak among rows above it */
  unsigned *missing_vars;
  uint64_t incomplete_groups, imputed_groups;
} rowctx;

/* The outcome of one metric on one row. */
typedef struct mout {
  hc_metric_value v;
  unsigned extra;    /* HA_CELL_* to add: INCOMPLETE (left out), MIXED, IMPUTED */
  unsigned nan_vars; /* variables it needs that had no value (bits of hc_var) */
} mout;

/* Per group and selected metric: the sums over the group's dispatches that have every counter the metric
 * needs (a ratio is a ratio of the same dispatches), so a group's metric is computed from those alone. */
typedef struct macc {
  double dur, grid, wg;   /* sums of the variables */
  uint64_t n, ndur, nwg;  /* dispatches summed; with a time; with a work-group size */
  uint8_t imputed, mixed; /* an input was imputed; values of different passes on one dispatch */
} macc;

/* Per group (a kernel, a region): the sums its counters and metrics need, added dispatch by dispatch. Per
 * group: counter sums of per-dispatch values, dispatches with a value, imputed; per group and metric: sums
 * of its counters (offsets moff[k] into a block of msz doubles), a macc, the metrics' SUM()/AVG(). */
typedef struct gmeas {
  size_t nc, nm, na, msz;
  size_t *moff;
  double *gsum, *msum;
  uint64_t *gn;
  uint8_t *gimp;
  macc *ma;
  hc_metric_acc *gacc;
  double *vals; /* scratch of one dispatch or group: per metric-set counter */
  uint32_t *exec;
  uint8_t *imp;
} gmeas;

/* scan.c. The part of a query before its rows: small tables and filters (full: the query has them), the kept
 * dispatches, their counter values, the counters and metrics chosen, and rc's tallies. hai_run_free frees
 * r's insides. */
hp_status hai_run_scan(hp_store *s, run *r, int full, const char *counters, const char *metrics, rowctx *rc);
void hai_run_free(run *r);
/* The group of dispatch d (its agent and kernel; for HA_BY_KERNEL_GRID its sizes too), made when new with
 * first = di; -1 when out of memory. Entries for an agent or kernel id the store lacks ("?", "(none)" for id
 * 0), made on first use; -1 when out of memory. */
long hai_group_of(run *r, const drec *d, size_t di);
long hai_placeholder_agent(run *r, uint64_t id);
int hai_devtot_fit(run *r, size_t a); /* room in run.devtot for agent index a (groups.c): 0, or -1 */
long hai_placeholder_kernel(run *r, uint64_t id);

/* scan_par.c. The dispatch scan on several threads, for the groupings that need only sums per group (by
 * kernel, no counters, no multiplexing keys): returns 1 with *st its outcome, or 0 when it did not run (one
 * thread, a store too small or of a format that cannot split, or a part that failed: the one-thread scan then
 * reads the store, and its error is the store's own). */
int hai_scan_parallel(hp_store *s, run *r, hp_status *st);
/* Threads a scan may use: the query's `threads`, else HUBPROF_THREADS, else the online CPUs (*asked 0); at
 * most 64. */
unsigned hai_threads(const ha_query *q, int *asked);
/* Tell dispatch cursor c to pass over the row groups whose statistics show that none of their rows can be
 * kept by the query's filters (devices, kernels, dispatch ids), where the format has such groups. */
void hai_scan_filter(const run *r, hp_cursor *c);

/* select.c. The counters to report (a list, or every counter with a value among the kept dispatches); the
 * metric definitions loaded and the metrics to report. HP_ERR_INVALID with the reason on r->res. */
hp_status hai_select_counters(run *r, const char *list);
hp_status hai_select_metrics(run *r, const char *list);

/* measures.c. rc's per-metric tallies for nm selected metrics (0 or -1), and their release. */
int hai_rowctx_init(rowctx *rc, size_t nm);
void hai_rowctx_free(rowctx *rc);
/* Environment of dispatch di for the metrics (counter values, passes, variables); vals, exec, imp: per
 * metric-set counter. */
void hai_dispatch_env(const run *r, const drec *d, size_t di, double *vals, uint32_t *exec, uint8_t *imp,
                      hc_metric_env *env);
/* Evaluate metric k (of the selection) on env; extra flags given. */
void hai_eval_metric(const run *r, size_t k, const hc_metric_env *env, unsigned extra, mout *o);
/* The counter, metric and flag columns; 0 or -1. */
int hai_add_measure_cols(run *r, ha_result *res);
/* Fill the counter, metric and flag cells of a row (first counter column `c0`). cval/cimp: per store
 * counter, the row's value (NaN when none) and imputed flag; mo: per selected metric. 0 or -1. */
int hai_fill_measures(run *r, ha_result *res, cell *row, uint8_t *fl, size_t c0, const double *cval,
                      const uint8_t *cimp, const mout *mo, rowctx *rc);
/* Room for ng groups (0: the scratch only); -1 when out of memory (free it anyway). */
int hai_gmeas_init(const run *r, gmeas *m, size_t ng);
/* Add kept dispatch di to group g. */
void hai_gmeas_add(const run *r, gmeas *m, size_t di, size_t g);
void hai_gmeas_free(gmeas *m);
/* The notes of a query (metrics skipped, passes averaged, peaks, missing values, incomplete dispatches and
 * rows, imputed values); 0 or -1. */
int hai_write_notes(run *r, ha_result *res, const rowctx *rc);

#endif
