/* The store calls of hub_layer.h that only the layer above the storage (src/assembly/) needs: the store's
 * mode, a failure it met, and the row-id span a format's split read offers (hp_format_ops.row_span). */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

/* 1 when the format's ops table (made with its build's sizeof) reaches member `op` and sets it */
#define HAS_OP(s, op)                                                                                        \
  ((s)->ops && (s)->ops->size >= offsetof(hp_format_ops, op) + sizeof(void *) && (s)->ops->op)

hp_mode hp_store_mode(const hp_store *s) { return s ? s->mode : HP_READ; }

int hp_store_fail(hp_store *s, hp_status st, const char *msg) {
  if (!s) return 0;
  if (s->mode != HP_READ) {
    hp_status expect = HP_OK;
    if (st == HP_OK || !atomic_compare_exchange_strong((_Atomic hp_status *)&s->first_error, &expect, st))
      return 0;
  }
  if (msg) snprintf(s->error, sizeof s->error, "%s", msg);
  return 1;
}

hp_status hp_store_row_span(hp_store *s, hp_table t, int64_t *lo, int64_t *hi) {
  if (!s || s->mode != HP_READ || !s->impl || !HAS_OP(s, row_span) || !HAS_OP(s, cursor_part))
    return HP_ERR_UNSUPPORTED;
  return s->ops->row_span(s, t, lo, hi);
}
