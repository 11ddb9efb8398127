/* The result table's insides (struct ha_result, its cells) for the analysis files that fill rows cell by
 * cell (kernels, regions, API calls, ranks, diff); result.c owns it; attribution.c sees ha_internal.h. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_HA_RESULT_H
#define HUBPROF_ANALYSIS_HA_RESULT_H

#include "ha_internal.h"

#include "../common/hu_map.h"

#include <stddef.h>
#include <stdint.h>

typedef union cell {
  double num;
  int64_t i;
  const char *text; /* interned in the result */
} cell;

typedef struct rcol {
  char *name, *unit;
  ha_col_kind kind;
  ha_col_role role;
} rcol;

struct ha_result {
  size_t ncols, capcols, nrows, cap;
  rcol *cols;
  cell *cells;
  uint8_t *flags;
  uint64_t lost;
  char **notes;
  size_t nnotes;
  hu_strmap strs;   /* interned strings */
  char error[1024]; /* why the call that made it failed (one line), "" when it did not */
};

static inline int is_nan(double x) { return x != x; }

/* A new row of zeroes (text ""), its flags at *flags; NULL when out of memory. */
cell *hai_add_row(ha_result *r, uint8_t **flags);
/* hai_add_row in a loop that stops at the first error: NULL with *st set to HP_ERR_NOMEM. */
cell *hai_next_row(ha_result *r, uint8_t **flags, hp_status *st);
/* s (NULL: "") interned in r: the copy that lives as long as r, NULL when out of memory. */
const char *hai_intern(ha_result *r, const char *s);
/* A failed call's result: no columns or rows, only the reason (THE error convention: the message lives on
 * the handle; *out stays NULL only when even this cannot be allocated). Returns st. */
hp_status hai_error_out(ha_result **out, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Give the result to the caller, or, on failure, a result holding only why (its partial rows dropped):
 * the reason recorded first, else the store's error (s may be NULL), else the status. */
hp_status hai_hand_out(hp_store *s, hp_status st, ha_result *res, ha_result **out);

#endif
