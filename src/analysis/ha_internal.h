/* The analysis library's internal interface: the result builder (result.c) that makes a result table column
 * by column and row by row, with notes, or a failed one with its reason; the walk over a table's rows
 * (tables.c); and the groupings ha_run (analysis.c) hands a query to. Prefix hai_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_HA_INTERNAL_H
#define HUBPROF_ANALYSIS_HA_INTERNAL_H

#include "hubprof/analysis.h"

#include <stddef.h>
#include <stdint.h>

/* The ha_query fields up to `flags` (callers built before the progress hook pass this size). */
#define HA_QUERY_V1 (offsetof(ha_query, flags) + sizeof(uint32_t))

/* The most rows a query wants: its limit when the caller's struct has one and it is positive, else n. */
static inline size_t hai_limit(const ha_query *q, size_t n) {
  return q->size >= offsetof(ha_query, limit) + sizeof q->limit && q->limit > 0 ? (size_t)q->limit : n;
}

/* An empty result, NULL when out of memory. */
ha_result *hai_new(void);
/* Add a column (before any row); 0 or -1 (out of memory). */
int hai_col(ha_result *r, const char *name, ha_col_kind kind, ha_col_role role, const char *unit);
/* One column for hai_cols. */
typedef struct hai_coldef {
  const char *name;
  ha_col_kind kind;
  ha_col_role role;
  const char *unit;
} hai_coldef;
/* Add the n columns of defs in their order (before any row); 0 or -1 (out of memory). */
int hai_cols(ha_result *r, const hai_coldef *defs, size_t n);
/* Add a row of zeroes (text ""): its index, or -1 when out of memory. */
long hai_row(ha_result *r);
/* Set a cell of a row (text is copied into the result); 0 or -1 (out of memory). */
int hai_text(ha_result *r, size_t row, size_t col, const char *text);
void hai_int(ha_result *r, size_t row, size_t col, int64_t v);
void hai_num(ha_result *r, size_t row, size_t col, double v);
/* Add a note (one line); 0 or -1. */
int hai_note(ha_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record why the call failed on r (the first reason wins); returns st. */
hp_status hai_fail(ha_result *r, hp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Each row of table t of s in store order: read into *row (a row struct of t, its .size set), then
 * fn(row, ctx), which returns HP_OK to go on or a status that ends the walk. The cursor is opened and closed
 * here; HP_OK once every row was seen, else the first error (the cursor's or fn's). */
typedef hp_status (*hai_row_fn)(const void *row, void *ctx);
hp_status hai_each(hp_store *s, hp_table t, void *row, hai_row_fn fn, void *ctx);

/* The groupings of ha_run, each setting *out as ha_run sets it: by kernel, kernel launch or dispatch
 * (kernels.c); by region, flat or as a tree (regions.c); by rank, or the ranks' imbalance per kernel
 * (ranks.c); host API calls and memory copies (api.c); the attribution groupings (HA_BY_INSTRUCTION …
 * HA_BY_SOURCE) and the timeline (HA_TIMELINE) of the samples (attribution.c). */
hp_status hai_kernels(hp_store *s, const ha_query *q, ha_result **out);
hp_status hai_regions(hp_store *s, const ha_query *q, int tree, ha_result **out);
hp_status hai_ranks(hp_store *s, const ha_query *q, int imbalance, ha_result **out);
hp_status hai_api(hp_store *s, const ha_query *q, ha_result **out);
hp_status hai_copies(hp_store *s, const ha_query *q, ha_result **out);
hp_status hai_attribution(hp_store *s, const ha_query *q, ha_result **out);
hp_status hai_timeline(hp_store *s, const ha_query *q, ha_result **out);

#endif
