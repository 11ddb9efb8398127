/* hubprof metrics: derived metrics, expressions over counters, device constants and other metrics, read
 * from definition files (share/hubprof/metrics/NAME.metrics; format in docs/metrics.md), evaluated per
 * dispatch and per group of dispatches, and turned into planner groups (a metric's counters in one pass).
 * Part of the counters (prefix hc_, status hc_status) but uses no provider, so the hub's analysis links it.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_METRICS_H
#define HUBPROF_METRICS_H

#include "counters.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hc_metrics hc_metrics; /* opaque: the metrics and constants of some definition files */

/* Bounds on definition text (docs/metrics.md "Limits"); past one, the add or resolve call fails with
 * "FILE:LINE: why" (HC_ERR_PARSE), never a crash or an unbounded cost. */
#define HC_METRICS_FILE_MAX (1u << 20) /* bytes of one definition file (read whole) */
#define HC_METRICS_LINE_MAX 4096       /* bytes of one line (an expression's length) */
#define HC_METRICS_DEPTH_MAX 256       /* levels of an expression tree, counting the definitions it uses */
#define HC_METRICS_COUNTERS_MAX 1024   /* counters one metric needs, with those of the definitions it uses */
#define HC_METRICS_REFS_MAX (1 << 20)  /* counters and aggregates of every definition's needs, summed */

/* Names a metric may use besides counters, metrics and constants. Per dispatch: the dispatch's own
 * values; per group: the mean over the group's dispatches (duration: over its timed dispatches). Device
 * constants come from the dispatch's agent row; 0 there (unknown) reads as "no value". */
typedef enum hc_var {
  HC_VAR_DURATION = 0,     /* "duration": device time end - start, ns (the dispatch's first execution) */
  HC_VAR_GRID_SIZE,        /* "grid_size": work-items, grid x * y * z */
  HC_VAR_WORKGROUP_SIZE,   /* "workgroup_size": work-items per work-group (no value when the runtime chose) */
  HC_VAR_COMPUTE_UNITS,    /* "compute_units" */
  HC_VAR_MAX_CLOCK_MHZ,    /* "max_clock_mhz" */
  HC_VAR_GLOBAL_MEM_BYTES, /* "global_mem_bytes" */
  HC_VAR_LOCAL_MEM_BYTES,  /* "local_mem_bytes" */
  HC_VAR_WAVE_SIZE,        /* "wave_size": SIMD width / warp / wavefront */
  HC_VAR_COUNT
} hc_var;

/* The name of a variable ("duration"), NULL when v is not one. */
const char *hc_var_name(int v);

/* ---- loading and checking definitions ---- */

hc_status hc_metrics_new(hc_metrics **out);
void hc_metrics_free(hc_metrics *m);
/* The last failure's message of a call on m, "" when none; "out of memory" for NULL. */
const char *hc_metrics_error(const hc_metrics *m);

/* Add the definitions of a file (or of text, `name` standing for the file in messages). Parsing only:
 * names are resolved by hc_metrics_resolve. `device` (NULL: any) is the device description the caller
 * works with: a file whose `device` line names another device is an error (HC_ERR_INVALID).
 * HC_ERR_PARSE (syntax; a name defined twice, also across files), HC_ERR_IO; hc_metrics_error(m):
 * "FILE:LINE: why". */
hc_status hc_metrics_add_file(hc_metrics *m, const char *path, const char *device);
hc_status hc_metrics_add_text(hc_metrics *m, const char *name, const char *text, const char *device);
/* Add every built-in set found on the search path (hc_metrics_files) whose device is `device` or none
 * (device NULL: every set). */
hc_status hc_metrics_add_builtin(hc_metrics *m, const char *device);

/* Resolve every name: a metric, a constant, a variable (hc_var), else a counter. With a counter
 * catalogue (counters != NULL) a name it lacks is HC_ERR_UNKNOWN: "FILE:LINE: metric 'x': unknown name
 * 'task-clok' (did you mean 'task-clock'?)"; without one every other name is a counter. A metric that
 * depends on itself is HC_ERR_PARSE ("metric 'a' depends on itself: a -> b -> a"); so is a constant
 * that uses a counter. Call once, after the last add; evaluation needs it. */
hc_status hc_metrics_resolve(hc_metrics *m, const char *const *counters, size_t ncounters);

/* Paths of the built-in sets (NAME.metrics) on the search path: $HUBPROF_METRICS (':'-separated),
 * share/hubprof/metrics one and two folders above the executable's and above the library holding this
 * code (and <its folder>/share/hubprof/metrics), /usr/local/share and /usr/share; the first of a name
 * wins; sorted by name. NULL-terminated, malloc'd: free with hc_metrics_files_free. */
hc_status hc_metrics_files(char ***paths, size_t *n);
void hc_metrics_files_free(char **paths);

/* ---- what is defined ---- */

typedef struct hc_metric_info {
  const char *name;
  const char *unit;        /* "" when none */
  const char *description; /* "" when none */
  const char *expression;  /* as written */
  const char *peak;        /* peak expression as written, "" when none */
  const char *exceeds;     /* `exceeds` line: why a value can be above the peak here, "" when none */
  const char *set;         /* the set's name (`set` line, else the file name less .metrics) */
  const char *device;      /* the set's device (`device` line), "" for any */
  const char *file;        /* where it is defined */
  unsigned line;
  /* after hc_metrics_resolve: */
  size_t ncounters;       /* counters it needs, itself and through the metrics it uses, in first use order */
  const size_t *counters; /* indices for hc_metrics_counter_name */
  unsigned vars;          /* variables it needs: bit (1u << hc_var) */
  int aggregates;         /* it uses SUM() or AVG() */
} hc_metric_info;

size_t hc_metrics_count(const hc_metrics *m); /* metrics (constants not included) */
const hc_metric_info *hc_metrics_get(const hc_metrics *m, size_t i);
long hc_metrics_find(const hc_metrics *m, const char *name); /* index of a metric, or -1 */
/* Up to n names of metrics closest to `name`, for "did you mean" messages. */
size_t hc_metrics_suggest(const hc_metrics *m, const char *name, const char **out, size_t n);
/* The counters the metrics use (after resolve), each once. */
size_t hc_metrics_ncounters(const hc_metrics *m);
const char *hc_metrics_counter_name(const hc_metrics *m, size_t i);
long hc_metrics_counter_find(const hc_metrics *m, const char *name);

/* ---- evaluation ---- */

/* Flags of an evaluated value. */
enum {
  HC_MV_MISSING = 1, /* an input has no value (counter not measured there, device constant unknown): NaN */
  HC_MV_DIV0 = 2,    /* a division by zero: NaN */
  HC_MV_MIXED = 4,   /* inputs from different executions (replay passes) of one dispatch */
  HC_MV_IMPUTED = 8, /* an input was imputed, or an aggregate covers only part of the group's dispatches */
};

/* Per-group accumulator of one SUM()/AVG() of the metrics (hc_metrics_naggs of them). */
typedef struct hc_metric_acc {
  double sum;
  uint64_t n; /* dispatches where the aggregate's argument had a value */
} hc_metric_acc;

/* What a metric is evaluated from: one dispatch (acc NULL) or one group (acc non-NULL). */
typedef struct hc_metric_env {
  const double *counters;    /* value of counter i (hc_metrics_counter_name), NaN when none */
  const uint32_t *exec;      /* per counter, the execution that measured it (a replayed dispatch:
                                its pass), 0 = not compared; NULL: none compared (groups) */
  const uint8_t *imputed;    /* per counter, 1 when imputed; NULL: none */
  double vars[HC_VAR_COUNT]; /* NaN when unknown */
  uint32_t duration_exec;    /* execution the duration comes from (1), 0 = not compared */
  const hc_metric_acc *acc;  /* groups: the accumulators filled by hc_metrics_agg_add */
  double ndispatches;        /* groups: dispatches in the group (SUM scales to it) */
} hc_metric_env;

typedef struct hc_metric_value {
  double value;    /* NaN when it has none (flags say why) */
  double peak;     /* the peak's value, NaN when the metric has none */
  double pct_peak; /* 100 * value / peak, NaN when no peak */
  unsigned flags;  /* HC_MV_* */
} hc_metric_value;

/* Evaluate metric i. Per dispatch SUM(x) and AVG(x) are x. Per group: AVG(x) is the mean of x over
 * the dispatches where it had a value, SUM(x) its sum (scaled up to the group when some lacked it,
 * flagged imputed); with no such dispatch, x over the group's values (imputed). Everything else is
 * computed from the group's values (mean counters per dispatch): a ratio is the ratio of sums. Never
 * fails: a value that cannot be computed is NaN with flags saying why. */
void hc_metric_eval(const hc_metrics *m, size_t i, const hc_metric_env *env, hc_metric_value *out);

/* The SUM()/AVG() of every metric have indices 0 .. hc_metrics_naggs-1; metric i uses those listed by
 * hc_metric_aggs (through the metrics it uses too). Per dispatch, hc_metrics_agg_add adds the value of
 * aggregate k's argument to acc (when it has one). */
size_t hc_metrics_naggs(const hc_metrics *m);
size_t hc_metric_aggs(const hc_metrics *m, size_t i, size_t *out, size_t max);
void hc_metrics_agg_add(const hc_metrics *m, size_t k, const hc_metric_env *dispatch, hc_metric_acc *acc);

/* ---- planning ---- */

/* Planner groups for the metrics of `list` ("a,b", blanks ignored): "NAME=C1,C2" for
 * hc_plan_args.groups, one per metric that needs counters (those it uses, transitively). HC_ERR_UNKNOWN
 * "unknown metric 'x' (did you mean 'y'?)", HC_ERR_INVALID for an empty name (hc_metrics_error).
 * NULL-terminated, malloc'd: free with hc_metrics_groups_free. */
hc_status hc_metrics_plan_groups(hc_metrics *m, const char *list, char ***groups, size_t *n);
void hc_metrics_groups_free(char **groups);
/* The same as planner requests (hc_plan_make), pointing into m: valid while m lives. */
hc_status hc_metrics_requests(hc_metrics *m, const char *const *names, size_t n, hc_request **out,
                              size_t *nout);
void hc_metrics_requests_free(hc_request *req, size_t n);

/* Folders holding hubprof's data files of one kind ("metrics", "devices"), in search order: the
 * ':'-separated $ENV_VAR, share/hubprof/KIND one and two levels above the executable's folder and the
 * library's folder (and beside a library bundled in a package), /usr/local/share, /usr/share. Existing
 * folders only, without duplicates; at most 16. Returns how many. */
size_t hc_data_dirs(const char *env_var, const char *kind, char dirs[][PATH_MAX]);
/* The files NAME`ext` in those folders (an earlier folder wins a name), sorted by name; NULL-terminated,
 * malloc'd (free with hc_metrics_files_free). HC_OK, HC_ERR_INVALID without paths, HC_ERR_NOMEM. */
hc_status hc_data_files(const char *env_var, const char *kind, const char *ext, char ***paths, size_t *n);

#endif
