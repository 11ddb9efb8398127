/* hubprof export: a store's run as a timeline for viewers (Perfetto protobuf, Chrome trace-event JSON, OTF2).
 * Reads only through the hub's public API, streaming the large tables; linked into the CLI. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXPORT_EXPORTER_H
#define HUBPROF_EXPORT_EXPORTER_H

#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ex_status {
  EX_OK = 0,
  EX_ERR_INVALID = -1,     /* bad argument (unknown format) */
  EX_ERR_NOMEM = -2,       /* out of memory */
  EX_ERR_IO = -3,          /* the output could not be written (message names it) */
  EX_ERR_STORE = -4,       /* the store could not be read at all (message names it) */
  EX_ERR_UNSUPPORTED = -5, /* the format is not compiled in (OTF2 without libotf2) */
} ex_status;

typedef enum ex_format { EX_PERFETTO = 0, EX_CHROME, EX_OTF2, EX_FORMAT_COUNT } ex_format;

/* What an export wrote and what it skipped. */
typedef struct ex_stats {
  uint64_t processes, threads, queues;
  uint64_t dispatches;      /* dispatch slices written */
  uint64_t regions;         /* region slices written */
  uint64_t markers;         /* regions of zero length, written as instants */
  uint64_t counter_values;  /* per-dispatch counter values written */
  uint64_t flows;           /* enqueue -> device flows */
  uint64_t skipped_untimed; /* dispatches or regions without a start or end time */
  uint64_t skipped_order;   /* events a format could not take out of time order (OTF2), counter values whose
                               dispatch came earlier in the table */
  int damaged;              /* the store is damaged: a table was read up to its damage */
  char damage[256];         /* hp_store_error at the damage */
  uint64_t counter_samples; /* counter samples (timelines during a dispatch) written (OTF2) */
  uint64_t copies;          /* memory copy slices written (stores traced with --api) */
} ex_stats;

/* Format names ("perfetto", "chrome", "otf2"), NULL-terminated, in ex_format order. */
extern const char *const ex_format_names[];
/* Is the format compiled in? (OTF2 needs libotf2 at build time.) */
int ex_format_available(ex_format f);

/* Options of an export (NULL = none). */
typedef struct ex_opts {
  /* Called every 4096 rows read (regions, then dispatches) and once at the end, with the rows done and
   * their total (0 when the store cannot count them). NULL = none. */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
} ex_opts;

typedef struct ex_result ex_result; /* what an export wrote (ex_result_stats), or why it failed */

/* Export store `s` to `out_path` in format f. The output appears only when everything could be written:
 * a temporary name beside it, renamed at the end (for OTF2, `out_path` is a folder holding the archive).
 * A damaged store exports what is readable and sets the stats' damaged. *out gets the result, on failure
 * too: ex_result_error says why in one line (the error convention, docs/development.md); free it with
 * ex_result_free either way. *out stays NULL only when out is NULL or memory ran out. */
ex_status ex_export(hp_store *s, const char *out_path, ex_format f, const ex_opts *opts, ex_result **out);
/* What the export wrote and skipped (all zero after a failure before writing). */
const ex_stats *ex_result_stats(const ex_result *r);
/* Why the export failed (one line), "" when it did not; "out of memory" for r NULL. */
const char *ex_result_error(const ex_result *r);
void ex_result_free(ex_result *r);

/* The HTML report (`hubprof report`): one self-contained file (no network at view time) with the run's
 * summary, the top kernels as a bar chart, a timeline overview, the per-kernel counter and metric table,
 * the regions when there are any and, with a baseline, the per-kernel comparison as a chart. Names are the
 * stores' labels in the page (their paths; NULL = "store"). Written to a temporary name beside out_path and
 * renamed when complete. The stats say what was read (dispatches, regions) and whether the store is damaged
 * (what was readable is reported, the page says so). *out as for ex_export. */
ex_status ex_report(hp_store *s, const char *name, hp_store *baseline, const char *baseline_name,
                    const char *out_path, ex_result **out);

#endif
