/* hubprof analysis: the groupings `hubprof analyze` prints, computed over any store through the hub,
 * returned as a result table that the CLI prints and Python turns into a DataFrame. Prefix ha_. */
#ifndef HUBPROF_ANALYSIS_H
#define HUBPROF_ANALYSIS_H

#include "hubprof/hub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ha_group {
  HA_BY_KERNEL = 0, /* one row per (device, kernel) */
} ha_group;

typedef struct ha_query {
  uint32_t size; /* sizeof(ha_query) */
  int32_t group; /* ha_group */
  int64_t limit; /* keep the N most expensive rows per device, 0 = all */
} ha_query;

typedef struct ha_result ha_result; /* opaque: columns and rows */

typedef enum ha_col_kind { HA_TEXT = 0, HA_INT = 1, HA_REAL = 2 } ha_col_kind;

/* Run a query. Columns of HA_BY_KERNEL: device (text), kernel (text), calls, timed_calls, total_ns,
 * min_ns, max_ns (int), avg_ns, percent (real; NaN when no timed calls). Rows: by device, then total
 * time, most expensive first. Also reports lost records and damage of the store (see below). */
hp_status ha_run(hp_store *s, const ha_query *q, ha_result **out);
void ha_result_free(ha_result *r);

size_t ha_result_ncols(const ha_result *r);
size_t ha_result_nrows(const ha_result *r);
const char *ha_result_col_name(const ha_result *r, size_t col);
ha_col_kind ha_result_col_kind(const ha_result *r, size_t col);
/* Cell values: text of a text column ("" otherwise), number of a numeric column (NaN for text). */
const char *ha_result_text(const ha_result *r, size_t row, size_t col);
double ha_result_num(const ha_result *r, size_t row, size_t col);
int64_t ha_result_int(const ha_result *r, size_t row, size_t col);
/* Records the collector lost in the processes of the store (figures are lower bounds when > 0). */
uint64_t ha_result_lost_records(const ha_result *r);

#ifdef __cplusplus
}
#endif
#endif
