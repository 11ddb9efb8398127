/* hubprof analysis: the groupings `hubprof analyze` prints (per kernel, kernel + launch sizes, dispatch),
 * with counters and derived metrics, and the per-kernel comparison `hubprof diff` prints, computed over any
 * store through the hub and returned as a result table that the CLI prints and Python turns into a
 * DataFrame. Prefix ha_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_H
#define HUBPROF_ANALYSIS_H

#include "hubprof/export.h"
#include "hubprof/hub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ha_group {
  HA_BY_KERNEL = 0,      /* one row per (device, kernel) */
  HA_BY_DISPATCH = 1,    /* one row per dispatch */
  HA_BY_KERNEL_GRID = 2, /* one row per (device, kernel, grid x/y/z, work-group x/y/z) */
  HA_BY_REGION = 3,      /* one row per (region category, region name) of the region table */
  HA_BY_REGION_TREE = 4, /* one row per (region category, path of nested region names) */
  /* PC samples of the kernels of `kernels` (needed), on their code read back from the store: */
  HA_BY_INSTRUCTION = 5,     /* one row per sampled instruction, with its disassembly */
  HA_BY_LINE = 6,            /* one row per source line (code built with -g) */
  HA_BY_FUNCTION = 7,        /* one row per function of the code object */
  HA_BY_BLOCK = 8,           /* one row per basic block */
  HA_BY_SOURCE = 9,          /* the annotated source: one row per line of the kernel's program source */
  HA_TIMELINE = 10,          /* the counter samples of the dispatch dispatch_first (= dispatch_last) */
  HA_BY_RANK = 11,           /* one row per (MPI rank, device, kernel); a process without a rank is its own */
  HA_BY_RANK_IMBALANCE = 12, /* one row per kernel name: its device time per rank, min / median / max */
  HA_BY_API = 13,            /* one row per OpenCL function of the API calls (regions of category "api") */
  HA_BY_COPY = 14,           /* one row per direction of the memory copies */
} ha_group;

typedef enum ha_sort {
  HA_SORT_DEFAULT = 0, /* HA_SORT_TIME for kernel groupings, HA_SORT_START for dispatches */
  HA_SORT_TIME = 1,    /* most device time first (a dispatch: its duration) */
  HA_SORT_ORDER = 2,   /* store order of the first dispatch (collector order within a process) */
  HA_SORT_NAME = 3,    /* kernel name, then grid and work-group, then order */
  HA_SORT_START = 4, /* dispatches: device start, earliest first (untimed last), then order; groups: order */
} ha_sort;

enum {
  HA_NO_BUILTIN_METRICS = 1, /* ha_query.flags: only the metrics of metric_files */
};

typedef struct ha_query {
  uint32_t size; /* sizeof(ha_query); the fields after `limit` apply when size covers them */
  int32_t group; /* ha_group */
  int64_t limit; /* keep the first N rows per device (in the sort order), 0 = all */
  /* Counters to report, "a,b" (blanks ignored): NULL = every counter measured in the store, "" = none.
   * A group's value is the mean per dispatch over the dispatches that measured the counter. */
  const char *counters;
  /* Metrics to report, "a,b": NULL = every metric that needs counters and whose counters the store
   * has, "" = none. Unknown names and metrics the store cannot give are errors (ha_result_error). */
  const char *metrics;
  const char *const *metric_files; /* definition files to add to the built-in sets */
  size_t nmetric_files;
  const char *const *kernels; /* keep kernels whose name (or mangled name) matches one glob; none = all */
  size_t nkernels;
  const char *const *devices; /* keep devices whose name matches one glob ("pthread-*", "gfx942#1") */
  size_t ndevices;
  uint64_t dispatch_first; /* keep collector dispatch ids in [first, last] (every process); 0 = open */
  uint64_t dispatch_last;
  int32_t sort;   /* ha_sort */
  uint32_t flags; /* HA_NO_BUILTIN_METRICS */
  /* Optional, when size covers them: called now and then with the rows read so far (dispatches, then
   * counter values; the CLI's progress line); its return value is ignored. NULL = none. */
  int (*progress)(void *ctx, uint64_t rows_read);
  void *progress_ctx;
  /* Optional, when size covers it: threads reading the store at once (the groupings by kernel without
   * counters share the dispatch table out: Parquet row groups, rocpd id ranges); 0 = HUBPROF_THREADS when
   * set, else one per online CPU; 1 = the calling thread alone. Answers do not depend on it. */
  uint32_t threads;
} ha_query;

typedef struct ha_result ha_result; /* opaque: columns and rows */

typedef enum ha_col_kind { HA_TEXT = 0, HA_INT = 1, HA_REAL = 2 } ha_col_kind;

typedef enum ha_col_role {
  HA_ROLE_KEY = 0,     /* identifies the row: device, kernel, grid, dispatch … */
  HA_ROLE_STAT = 1,    /* calls and device time */
  HA_ROLE_COUNTER = 2, /* a counter's value (a group: mean per dispatch) */
  HA_ROLE_METRIC = 3,  /* a derived metric */
  HA_ROLE_PEAK = 4,    /* a metric's share of its peak, % (column "<metric>_pct_peak") */
  HA_ROLE_FLAGS = 5,   /* "imputed", "incomplete": names of the row's imputed / unmeasured values */
  HA_ROLE_DIFF = 6,    /* ha_diff: a delta or a direction */
} ha_col_role;

/* Flags of one cell (ha_result_flags). A cell with MISSING, DIV0 or INCOMPLETE has the value NaN. */
enum {
  HA_CELL_IMPUTED = 1,     /* estimated: from part of the group's dispatches, or stored as imputed */
  HA_CELL_MISSING = 2,     /* no value: the counter was not measured there, a device constant is unknown */
  HA_CELL_DIV0 = 4,        /* a division by zero while computing it */
  HA_CELL_MIXED = 8,       /* it combines values of different replay passes of a dispatch */
  HA_CELL_INCOMPLETE = 16, /* it needs a counter that no dispatch of the group measured */
  HA_CELL_OVER_PEAK = 32,  /* a metric (and its % of peak) above its physical peak: named in "over_peak" */
};

/* Run a query. Columns of HA_BY_KERNEL: device, kernel (text), calls, timed_calls, total_ns, avg_ns,
 * min_ns, max_ns, percent (avg_ns and percent real, NaN when no timed calls); HA_BY_KERNEL_GRID adds grid
 * and workgroup ("XxYxZ" text, e.g. "4096x1x1") after kernel; HA_BY_DISPATCH: device, pid, dispatch (the
 * collector's id), row (the store's id), kernel, grid, workgroup, start_ns, duration_ns (real, NaN untimed),
 * percent. Then one real column per counter and per metric (and "<metric>_pct_peak" for a metric with a
 * peak), and, when there are any, the text columns "imputed" and "incomplete". Percent is a share of the
 * device's time over the dispatches kept. Rows: by device, then in the sort order. Also reports lost
 * records and damage of the store. HA_BY_REGION: category, region (the name), calls, total_ns (inclusive),
 * avg_ns, exclusive_ns (minus the regions directly inside, per thread), dispatches (those inside: the
 * region each names, hp_dispatch.region_id, and the regions around it; by enqueue time on the region's
 * thread when it names none), kernel_ns (their device time), then counters and metrics as above but as
 * totals over the region's calls (the sum of its dispatches' values; metrics on those totals); most
 * total_ns first; the filters choose the dispatches, `sort` does not apply. HA_BY_REGION_TREE: the same per
 * path of nested names (per thread), region being the name indented two blanks per level, then depth and path
 * ("a > b"), in tree order (a row after its parent, siblings by name).
 * The sample views (stores made by `hubprof sample`; docs/sampling.md) need `kernels` (globs) and read the
 * PC samples of every dispatch of the kernels that match, grouped on the kernel's code as read back from the
 * store (by the code plugin libhubprof_code.so, loaded from beside the library: capstone, and libdw for
 * lines; without it, addresses and a warning): HA_BY_INSTRUCTION: samples, percent, offset ("0x1a2b", in the
 * code object), instruction (its disassembly), line ("file:line", "" without debug information), function;
 * HA_BY_LINE: samples, percent, line ("file:line", "?" for samples without a line), source (the line's text
 * from the program's source, or why there is no line); HA_BY_FUNCTION: samples, percent, function;
 * HA_BY_BLOCK: samples, percent, block ("0xA-0xB"), what ("N instructions, function"). Rows: most samples
 * first, at most `limit`. HA_BY_SOURCE: line (int), samples, percent, source: every line of the kernel's
 * program source in order, with the samples of that line. Percent is of the kernel's samples. Notes: the
 * kernel's sample and dispatch counts, why lines are missing, and a note starting "warning: " when a code
 * object's bytes are missing, damaged or unreadable (addresses are shown then). No samples: no rows and a
 * note. HA_TIMELINE: time_ns (from the dispatch's start), counter, value: the counter samples of the one
 * dispatch dispatch_first (the collector's id; dispatch_last equal or 0), in store order.
 * HA_BY_RANK (cluster runs, docs/cluster.md): rank (-1 for a process without one), host, pid (the rank's
 * first process: a rank's forked children count as the rank), device, kernel, calls, timed_calls, total_ns,
 * avg_ns, min_ns, max_ns, percent (of the rank's device time); by rank, then most total_ns first
 * (HA_SORT_NAME: by kernel name); limit = rows per rank. HA_BY_RANK_IMBALANCE: per kernel name, the device
 * time of each rank that ran it (over all its devices): kernel, ranks (how many ran it), calls, min_ns,
 * median_ns, mean_ns, max_ns, imbalance_pct ((max - median) / median), fastest_rank, slowest_rank,
 * slowest_host (ties: the lower rank); most max_ns first; limit = rows. Both take the kernel, device and
 * dispatch filters; no counters.
 * HA_BY_API (stores traced with --api): function, calls, total_ns, avg_ns, min_ns, max_ns, percent (of all
 * API time), most total_ns first. HA_BY_COPY: direction ("H2D", "D2H", "D2D", "FILL", "UNKNOWN"), copies,
 * bytes, timed_copies, total_ns and avg_ns (device time of the timed ones), bandwidth_gbs (their bytes per
 * device nanosecond), in that order of directions. Neither uses the filters, counters or metrics.
 * On failure *out is still set (unless out is NULL or memory ran out) to a result without rows whose
 * ha_result_error says why in one line; free it with ha_result_free either way. */
HP_API hp_status ha_run(hp_store *s, const ha_query *q, ha_result **out);

/* Compare two stores per kernel (group HA_BY_KERNEL or HA_BY_KERNEL_GRID; kernels matched by name, plus
 * grid and work-group; plus the device name unless each store has one device), or per region
 * (HA_BY_REGION / HA_BY_REGION_TREE: matched by category and name / path; key columns category, region /
 * category, path instead of device, kernel). Query fields as for
 * ha_run, except: counters NULL = none; metrics NULL = those both stores can give. Columns: device,
 * kernel, [grid, workgroup], status ("both", "new": only in b, "missing": only in a), calls_a, calls_b,
 * total_ns_a, total_ns_b, total_ns_delta, total_ns_delta_pct, avg_ns_a, avg_ns_b, avg_ns_delta,
 * avg_ns_delta_pct, time ("faster", "slower", "same": avg of b against a), then per counter and metric X:
 * X_a, X_b, X_delta, X_delta_pct, X_dir ("higher", "lower", "same"). A change under same_pct percent (in
 * magnitude) is "same". Rows: most device time (the larger of a and b) first. On failure, as ha_run: *out
 * holds why (naming the store that failed). */
HP_API hp_status ha_diff(hp_store *a, hp_store *b, const ha_query *q, double same_pct, ha_result **out);

/* Why the ha_run / ha_diff that made r failed (one line), "" when it did not; for r NULL (no result could
 * be allocated) "no result (out of memory)". */
HP_API const char *ha_result_error(const ha_result *r);

HP_API void ha_result_free(ha_result *r);

HP_API size_t ha_result_ncols(const ha_result *r);
HP_API size_t ha_result_nrows(const ha_result *r);
HP_API const char *ha_result_col_name(const ha_result *r, size_t col);
HP_API ha_col_kind ha_result_col_kind(const ha_result *r, size_t col);
HP_API ha_col_role ha_result_col_role(const ha_result *r, size_t col);
/* Unit of a column ("ns", "%", a counter's or metric's unit), "" when none. */
HP_API const char *ha_result_col_unit(const ha_result *r, size_t col);
/* Index of the column named `name`, or -1. */
HP_API long ha_result_col_find(const ha_result *r, const char *name);
/* Cell values: text of a text column ("" otherwise), number of a numeric column (NaN for text). */
HP_API const char *ha_result_text(const ha_result *r, size_t row, size_t col);
HP_API double ha_result_num(const ha_result *r, size_t row, size_t col);
HP_API int64_t ha_result_int(const ha_result *r, size_t row, size_t col);
HP_API unsigned ha_result_flags(const ha_result *r, size_t row, size_t col); /* HA_CELL_* */
/* Records the collector lost in the processes of the store (figures are lower bounds when > 0). */
HP_API uint64_t ha_result_lost_records(const ha_result *r);
/* Notes on how figures were obtained: averaged passes, mixed passes, divisions by zero, incomplete
 * coverage, imputed values, unknown device constants. One line each. */
HP_API size_t ha_result_nnotes(const ha_result *r);
HP_API const char *ha_result_note(const ha_result *r, size_t i);

#ifdef __cplusplus
}
#endif
#endif
